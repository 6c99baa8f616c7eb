/* epoll_server: a small multi-threaded server, for the tests of fred on
 * servers. The main thread accepts on a unix socket PATH and watches the
 * connections with epoll; a worker thread answers each "req I" line with
 * "ans N", N = 100 * (requests served so far) + I, handed over through a
 * mutex and a condition variable (the main thread goes back to epoll_wait
 * at once: when the worker stops at a breakpoint, the main thread waits
 * in epoll_wait for the client's next request); an idle thread ticks a
 * timerfd, as a server's housekeeping does. It serves until a client
 * sends "quit".
 * Usage: epoll_server PATH */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int job_fd = -1, job_i;
static long served, ticks;

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (job_fd < 0)
			pthread_cond_wait(&ready, &mu);
		long n = 100 * served + job_i; /* LINE:request */
		served++;
		char b[64];
		int len = snprintf(b, sizeof b, "ans %ld\n", n);
		if (send(job_fd, b, len, 0) != len)
			perror("send");
		job_fd = -1;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *housekeeping(void *arg)
{
	(void)arg;
	int tf = timerfd_create(CLOCK_MONOTONIC, 0);
	struct itimerspec its = {{0, 50000000}, {0, 50000000}};
	timerfd_settime(tf, 0, &its, NULL);
	for (;;) {
		uint64_t n;
		if (read(tf, &n, sizeof n) == sizeof n) {
			pthread_mutex_lock(&mu);
			ticks += n;
			pthread_mutex_unlock(&mu);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: epoll_server PATH\n");
		return 2;
	}
	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
	unlink(argv[1]);
	if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 8) != 0) {
		perror("listen");
		return 1;
	}
	pthread_t w, h;
	pthread_create(&w, NULL, worker, NULL);
	pthread_create(&h, NULL, housekeeping, NULL);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls};
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		struct epoll_event got[8];
		int n = epoll_wait(ep, got, 8, -1);
		for (int k = 0; k < n; k++) {
			int fd = got[k].data.fd;
			if (fd == ls) {
				int c = accept(ls, NULL, NULL);
				struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
				epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
				continue;
			}
			char b[64];
			ssize_t r = recv(fd, b, sizeof b - 1, 0);
			if (r <= 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
				continue;
			}
			b[r] = 0;
			if (strncmp(b, "quit", 4) == 0) {
				printf("served %ld\n", served);
				return 0;
			}
			pthread_mutex_lock(&mu);
			job_i = atoi(b + 4); /* "req I" */
			job_fd = fd;
			pthread_cond_signal(&ready);
			pthread_mutex_unlock(&mu);
		}
	}
}
