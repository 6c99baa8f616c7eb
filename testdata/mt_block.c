/* mt_block: the main thread joins a worker that waits on a semaphore no
 * one posts. Under scheduler locking either thread, run alone, blocks.
 * With the argument "sigint" both block SIGINT, as a server's threads do
 * (its signal thread takes it). */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

sem_t never;

void *waiter(void *arg)
{
	(void)arg;
	sem_wait(&never);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1 && strcmp(argv[1], "sigint") == 0) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	sem_init(&never, 0, 0);
	pthread_create(&t, NULL, waiter, NULL);
	pthread_join(t, NULL);
	return 0;
}
