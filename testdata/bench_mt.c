/* bench_mt: four threads take a shared mutex ROUNDS times each (argv[1],
 * default 100000), doing WORK loop iterations (argv[2], default 200)
 * between, and a condition variable and a semaphore hand a token around
 * now and then: the replay log's thread-order benchmark. Prints a mix of
 * the order the threads got the lock in, which depends on the schedule. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
sem_t token;
unsigned long mix = 1, total;
long rounds = 100000, work = 200;

void *worker(void *arg)
{
	long id = (long)arg;
	for (long i = 0; i < rounds; i++) {
		volatile unsigned long x = 0;
		for (long k = 0; k < work; k++)
			x += (unsigned long)k;
		pthread_mutex_lock(&mu);
		mix = mix * 31 + (unsigned long)id;
		total += x;
		if (i % 1000 == 0)
			pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
		if (i % 1000 == 0) {
			sem_post(&token);
			sem_wait(&token);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		work = atol(argv[2]);
	sem_init(&token, 0, 0);
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("mix=%lu total=%lu\n", mix, total);
	return 0;
}
