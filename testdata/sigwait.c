/* sigwait: a server's way with signals (mariadbd without --gdb): every
 * thread blocks SIGINT, and a signal thread takes it with sigwait, so a
 * debugger never sees the SIGINT its Ctrl-C sends. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

volatile long counter = 0;
volatile int sigints = 0;

static void *signals(void *arg)
{
	sigset_t *set = arg;
	for (;;) {
		int sig;
		if (sigwait(set, &sig) == 0 && sig == SIGINT)
			sigints++;
	}
	return NULL;
}

int main(void)
{
	static sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_t t;
	pthread_create(&t, NULL, signals, &set);
	printf("serving\n");
	fflush(stdout);
	for (;;) {
		counter++;
		if (counter % 1000000 == 0)
			usleep(1000);
	}
	return 0;
}
