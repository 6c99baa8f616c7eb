/* mt_block: the main thread joins a worker that waits on a semaphore no
 * one posts. Under scheduler locking either thread, run alone, blocks. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

sem_t never;

void *waiter(void *arg)
{
	(void)arg;
	sem_wait(&never);
	return NULL;
}

int main(void)
{
	pthread_t t;
	sem_init(&never, 0, 0);
	pthread_create(&t, NULL, waiter, NULL);
	pthread_join(t, NULL);
	return 0;
}
