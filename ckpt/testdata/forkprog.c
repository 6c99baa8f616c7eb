/*
 * forkprog: the fixture of the fork snapshot tests (fork_test.go).
 *
 *   forkprog FILE      each step: counter += i, regs(i) puts recognisable
 *                      values in registers (the test stops at the line
 *                      marked BP), then one 8-byte record is read from FILE
 *                      with read(2) (its offset must come back on restore)
 *                      and "step I counter C rec R" is printed.
 *   forkprog sleep     prints "tick N" every 300 ms; a nanosleep that fails
 *                      prints "nanosleep failed" (an interrupted sleep must
 *                      be restarted exactly after a restore).
 *   forkprog threads   starts a second thread, then stops at BP.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long counter;
/* Never touched, and only read: a copy that unshares its pages must not
 * give either memory. */
char untouched[64 << 20];
char onlyread[32 << 20];

static void *idle(void *arg)
{
	for (;;)
		pause();
	return arg;
}

__attribute__((noinline)) void regs(long i)
{
	/* x87 stack, xmm15, rbx and the carry flag: only an exact copy of the
	 * register state shows the same values at BP. */
	__asm__ volatile("fldpi\n\t"
			 "fildq %0\n\t"
			 "movq %0, %%xmm15\n\t"
			 "pshufd $0x44, %%xmm15, %%xmm15\n\t"
			 "mov %0, %%rbx\n\t"
			 "shl $40, %%rbx\n\t"
			 "stc"
			 :
			 : "m"(i)
			 : "rbx", "xmm15", "cc");
	__asm__ volatile("nop"); /* BP */
	__asm__ volatile("fstp %%st(0)\n\tfstp %%st(0)" ::: "st", "st(1)");
}

static int sleeper(void)
{
	struct timespec t = { 0, 300 * 1000 * 1000 };
	for (int n = 1;; n++) {
		if (nanosleep(&t, NULL) != 0)
			printf("nanosleep failed: %s\n", strerror(errno));
		printf("tick %d\n", n);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: forkprog FILE | sleep | threads\n");
		return 2;
	}
	if (strcmp(argv[1], "sleep") == 0)
		return sleeper();
	if (strcmp(argv[1], "threads") == 0) {
		pthread_t t;
		pthread_create(&t, NULL, idle, NULL);
		regs(1);
		return 0;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	for (long k = 0; k < (long)sizeof onlyread; k += 4096)
		counter += *(volatile char *)&onlyread[k];
	for (long i = 1;; i++) {
		char rec[9] = "";
		counter += i;
		regs(i);
		if (read(fd, rec, 8) != 8)
			strcpy(rec, "EOF\n");
		rec[strcspn(rec, "\n")] = 0;
		printf("step %ld counter %ld rec %s\n", i, counter, rec);
	}
}
