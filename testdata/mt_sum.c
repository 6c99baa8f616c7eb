/* mt_sum: four threads move units from a shared pool to accounts of their
 * own, nothing forcing their turns. Every read and every write of the pool
 * holds the mutex, but taking a unit out ("read, then write back one
 * less") does not as a whole: when two threads take at once, one of the
 * writes is lost, and the sum of pool and accounts, which must stay 1000,
 * grows by one. main fills the pool: at the program's start the sum is
 * 0, then 1000 until a write is lost. Run alone it almost always goes
 * wrong; which move breaks it depends on the scheduling, which fred's
 * replay log records. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define MOVES 250

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t all_here = PTHREAD_COND_INITIALIZER;
int ready;
long account[THREADS + 1]; /* [0] is the pool */

long sum(void)
{
	long s = 0;
	for (int i = 0; i <= THREADS; i++)
		s += account[i];
	return s;
}

long get(int i)
{
	pthread_mutex_lock(&mu);
	long v = account[i];
	pthread_mutex_unlock(&mu);
	return v;
}

void put(int i, long v)
{
	pthread_mutex_lock(&mu);
	account[i] = v;
	pthread_mutex_unlock(&mu);
}

void give(int i)
{
	pthread_mutex_lock(&mu);
	account[i]++;
	pthread_mutex_unlock(&mu);
}

void *mover(void *arg)
{
	int id = (int)(long)arg;
	/* Start together: under a debugger, creating a thread takes longer
	 * than a thread's moves. */
	pthread_mutex_lock(&mu);
	if (++ready == THREADS)
		pthread_cond_broadcast(&all_here);
	while (ready < THREADS)
		pthread_cond_wait(&all_here, &mu);
	pthread_mutex_unlock(&mu);
	for (int k = 0; k < MOVES; k++) {
		long a = get(0);
		for (volatile int spin = 0; spin < 2000; spin++)
			;
		put(0, a - 1); /* the bug: a may be stale */
		give(id + 1);
	}
	return NULL;
}

/* audit checks the sum many times before the threads start, as a server
 * warms up: a good part of the run has the sum right. */
long audit(void)
{
	long bad = 0;
	for (int k = 0; k < 1000000; k++)
		if (sum() != 1000)
			bad++;
	return bad;
}

int main(void)
{
	pthread_t t[THREADS];
	account[0] = 1000;
	printf("audit: %ld bad\n", audit());
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, mover, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("sum=%ld\n", sum());
	return 0;
}
