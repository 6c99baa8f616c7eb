/* mt_window: the shape of CPython's GIL under pdb. A worker holds a mutex
 * (take_gil holds the GIL's) and reads the clock for a timed wait while
 * the main thread, the debugger's, starts talking to the person (fred's
 * replay library: syscall FRED 1). The debugger's thread then needs that
 * mutex (to hand the GIL over before it writes). The worker must not
 * wait for the debugger to finish while it holds the mutex: that would
 * never end. Prints "done" and the number of clock reads; the steps are
 * ordered by atomic flags, which the library does not see. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define FRED 0x46524544

pthread_mutex_t gil = PTHREAD_MUTEX_INITIALIZER;
int held, talking;

void *worker(void *arg)
{
	struct timespec ts;
	pthread_mutex_lock(&gil);
	__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&talking, __ATOMIC_ACQUIRE))
		;
	usleep(50000); /* the debugger's thread is at the mutex by now */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_unlock(&gil);
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
		;
	syscall(FRED, 1); /* the debugger talks */
	__atomic_store_n(&talking, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&gil); /* to write, it hands the GIL over */
	pthread_mutex_unlock(&gil);
	syscall(FRED, 0); /* it lets the program go on */
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
