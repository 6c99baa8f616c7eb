/* recvmmsg: datagrams received with recvmmsg, for the replay log's tests.
 *   recvmmsg VALUE
 * Sends three datagrams made from VALUE to itself and prints what one
 * recvmmsg call returns. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: recvmmsg VALUE\n");
		return 2;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) {
		perror("socketpair");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		char m[64];
		int n = snprintf(m, sizeof m, "%s-%d", argv[1], i);
		if (send(sv[0], m, n, 0) != n) {
			perror("send");
			return 1;
		}
	}
	char buf[4][64];
	struct iovec iov[4];
	struct mmsghdr mm[4];
	memset(mm, 0, sizeof mm);
	for (int i = 0; i < 4; i++) {
		iov[i].iov_base = buf[i];
		iov[i].iov_len = sizeof buf[i];
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	int n = recvmmsg(sv[1], mm, 4, MSG_DONTWAIT, NULL);
	if (n < 0) {
		perror("recvmmsg");
		return 1;
	}
	printf("%d messages:", n);
	for (int i = 0; i < n; i++)
		printf(" %.*s", (int)mm[i].msg_len, buf[i]);
	printf("\n");
	return 0;
}
