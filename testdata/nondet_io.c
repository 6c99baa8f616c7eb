/* nondet_io: readiness and socket calls for the replay log's library
 * test: poll, select, epoll_wait, pread, accept and recvmsg, on data that
 * differs from run to run (the clock, a file the test changes).
 * Usage: nondet_io FILE */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char msg[64];
	int n = snprintf(msg, sizeof msg, "ns=%ld", ts.tv_nsec);

	/* a pipe that is ready only on some runs: written when ns is even */
	int p[2];
	if (pipe(p) != 0)
		return 1;
	if (ts.tv_nsec % 2 == 0 && write(p[1], msg, n) != n)
		return 1;
	struct pollfd pf = {.fd = p[0], .events = POLLIN};
	int pr = poll(&pf, 1, 0);
	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	struct timeval tv = {0, 0};
	int sr = select(p[0] + 1, &rs, NULL, NULL, &tv);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = p[0]}, got[4];
	epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev);
	int er = epoll_wait(ep, got, 4, 0);
	printf("poll=%d revents=%d select=%d set=%d epoll=%d\n", pr, pf.revents, sr, FD_ISSET(p[0], &rs) ? 1 : 0, er);

	char buf[128] = "";
	int fd = open(argc > 1 ? argv[1] : "/etc/hostname", O_RDONLY);
	ssize_t r = pread(fd, buf, sizeof buf - 1, 2);
	buf[r > 0 ? r : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	printf("pread=%s\n", buf);

	/* accept a connection from ourselves and receive the clock */
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	bind(l, (struct sockaddr *)&a, sizeof a);
	listen(l, 1);
	getsockname(l, (struct sockaddr *)&a, &al);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&a, sizeof a);
	send(c, msg, n, 0);
	int s = accept(l, NULL, NULL);
	char rb[64] = "";
	struct iovec iov = {rb, sizeof rb - 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t m = recvmsg(s, &mh, 0);
	rb[m > 0 ? m : 0] = 0;
	printf("accept=%s recvmsg=%s\n", s >= 0 ? "ok" : "failed", rb);
	return 0;
}
