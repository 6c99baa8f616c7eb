/* left_log: a threaded client of a unix socket server outside fred whose
 * path depends on something the replay log cannot see: before each
 * request it reads FLAG with raw system calls. Recorded with "0", it asks
 * and reads each answer; replayed after FLAG became "1", it leaves the
 * recording (another call than the logged one) and waits to read before
 * asking, for an answer that never comes, as a server's replay that took
 * another path waits for a client. For the test that fred then gives up
 * soon and leaves the person where they were.
 * Usage: left_log PATH FLAG */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static long raw3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

/* flag: FLAG's first byte, read where no preload library sees it. */
static char flag(const char *path)
{
	char c = '0';
	long fd = raw3(SYS_open, (long)path, 0, 0);
	if (fd >= 0) {
		raw3(SYS_read, fd, (long)&c, 1);
		raw3(SYS_close, fd, 0, 0);
	}
	return c;
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		sleep(1);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: left_log PATH FLAG\n");
		return 2;
	}
	pthread_t t;
	pthread_create(&t, NULL, idle, NULL);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
		perror("connect");
		return 1;
	}
	long sum = 0;
	for (int i = 0; i < 5; i++) {
		char b[64];
		if (flag(argv[2]) == '1') {
			if (recv(s, b, sizeof b - 1, 0) <= 0) /* another path */
				return 1;
		}
		long stamp = (long)time(NULL);
		int n = snprintf(b, sizeof b, "req %d\n", i);
		if (send(s, b, n, 0) != n)
			return 1;
		ssize_t got = recv(s, b, sizeof b - 1, 0);
		if (got <= 0)
			return 1;
		b[got] = 0;
		long v = atol(b + 4); /* "ans N" */
		sum += v + 0 * stamp; /* LINE:answer */
	}
	printf("sum=%ld\n", sum);
	return 0;
}
