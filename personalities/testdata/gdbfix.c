/* gdbfix: the program behind the recorded gdb transcripts in this
 * directory (see README.md). argv[1] picks what it does. Lines the tests
 * look for carry a "LINE:name" comment; the tests find their numbers here,
 * so the file may be edited as long as the transcripts are regenerated. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int nodebug_work(int x); /* nodebug.c, compiled without -g */

int counter = 0;
int *cp = &counter;
struct box {
	int *p;
} bx = { &counter }, *bp = &bx;

int depth_reached(int n)
{
	return n; /* LINE:base */
}

int recurse(int n)
{
	if (n == 0)
		return depth_reached(n);
	return 1 + recurse(n - 1); /* LINE:recurse */
}

static pthread_barrier_t ready;

static void *worker(void *arg)
{
	pthread_barrier_wait(&ready);
	for (;;)
		pause();
	return arg;
}

void threads_ready(void)
{
	counter++; /* LINE:threads */
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit0"; /* LINE:start */
	counter = 1; /* LINE:main */
	if (strcmp(mode, "exit0") == 0)
		return 0;
	if (strcmp(mode, "exit3") == 0)
		exit(3);
	if (strcmp(mode, "abort") == 0)
		abort();
	if (strcmp(mode, "segv") == 0)
		*(volatile int *)0 = 1; /* LINE:segv */
	if (strcmp(mode, "sigkill") == 0)
		raise(SIGKILL);
	if (strcmp(mode, "recurse") == 0)
		return recurse(4) == 4 ? 0 : 1;
	if (strcmp(mode, "nodebug") == 0)
		return nodebug_work(2) == 4 ? 0 : 1;
	if (strcmp(mode, "nonl") == 0) {
		printf("no newline at the end");
		fflush(stdout);
		return 0;
	}
	if (strcmp(mode, "puts") == 0) {
		puts("hello from puts");
		return 0;
	}
	if (strcmp(mode, "sleep") == 0) {
		printf("sleeping\n");
		fflush(stdout);
		for (;;)
			sleep(100);
	}
	if (strcmp(mode, "threads") == 0) {
		pthread_t t[3];
		pthread_barrier_init(&ready, NULL, 4);
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		pthread_barrier_wait(&ready);
		threads_ready();
		return 0;
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t p = fork();
		counter = p == 0 ? 2 : 3; /* LINE:fork */
		return 0;
	}
	fprintf(stderr, "gdbfix: unknown mode %s\n", mode);
	return 2;
}
