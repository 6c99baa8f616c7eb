/* nondet_sig: signals for the replay log's library test. It sends itself
 * SIGUSR1 (its handler reads the clock), says "ready", then waits, asking
 * the clock each millisecond, for a SIGUSR2 from outside, and prints when
 * it came. Without the log, a run with no SIGUSR2 waits one second. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile long usr1_ns = -1;
static volatile sig_atomic_t usr2;

static void on_usr1(int sig)
{
	struct timespec ts;
	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	usr1_ns = ts.tv_nsec;
}

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	usr2 = sig;
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	struct sigaction a;
	memset(&a, 0, sizeof a);
	a.sa_sigaction = on_usr2;
	a.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &a, NULL);
	raise(SIGUSR1);
	printf("usr1 ns=%ld\n", usr1_ns);
	printf("ready\n");
	fflush(stdout);
	int i;
	struct timespec ts = {0, 0};
	for (i = 0; i < 1000 && !usr2; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		usleep(1000);
	}
	if (usr2)
		printf("usr2 after %d clock reads, at ns=%ld\n", i, ts.tv_nsec);
	else
		printf("no usr2\n");
	return 0;
}
