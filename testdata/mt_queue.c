/* mt_queue: four workers take items from a mutex-protected queue that the
 * main thread fills; each adds what it takes to a shared total. */
#include <pthread.h>
#include <stdio.h>

#define N 4
#define ITEMS 200
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
int queue[16], head, tail, count;
long total;

void put(int v)
{
	pthread_mutex_lock(&mu);
	while (count == 16)
		pthread_cond_wait(&cv, &mu);
	queue[tail] = v;
	tail = (tail + 1) % 16;
	count++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

int get(void)
{
	pthread_mutex_lock(&mu);
	while (count == 0)
		pthread_cond_wait(&cv, &mu);
	int v = queue[head];
	head = (head + 1) % 16;
	count--;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return v;
}

void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < ITEMS; i++) {
		int v = get();
		pthread_mutex_lock(&mu);
		total += v;
		pthread_mutex_unlock(&mu);
	}
	return (void *)id;
}

int main(void)
{
	pthread_t t[N];
	for (long i = 0; i < N; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < N * ITEMS; i++)
		put(i);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	printf("total=%ld\n", total);
	return 0;
}
