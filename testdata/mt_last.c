/* mt_last: two workers each take a slot and give it back, K times, under
 * one mutex; each ends by taking one more and keeping it. `level` is how
 * many slots are taken: at most one worker should hold a slot at a time
 * (level < 2), which fails whenever both hold one at once, many times in
 * a run, and for good at the end. The last change of level < 2 into 0 is
 * the last move of the run (moves == 2 * (2 * K + 1) after it): only a
 * watch of every change finds it; a bisection may land on any of them. */
#include <pthread.h>
#include <stdio.h>

#define K 40

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
int level, moves;

void take(void)
{
	pthread_mutex_lock(&mu);
	level++;
	moves++;
	pthread_mutex_unlock(&mu);
}

void give_back(void)
{
	pthread_mutex_lock(&mu);
	level--;
	moves++;
	pthread_mutex_unlock(&mu);
}

void *worker(void *arg)
{
	for (int k = 0; k < K; k++) {
		take();
		for (volatile int spin = 0; spin < 20000; spin++)
			;
		give_back();
	}
	take();
	return arg;
}

int main(void)
{
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("level=%d moves=%d\n", level, moves);
	return 0;
}
