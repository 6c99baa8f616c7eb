/* sock_client: a client of a server outside fred, for the test that a
 * replay does not send again what the server already has. It connects
 * to the unix socket PATH (or to 127.0.0.1:PORT for tcp:PORT), sends
 * "req I" five times and reads each answer.
 * With "slow", it sleeps 2.1 s at the second answer (fred's automatic
 * snapshots come after 2 s of running), and goes on a little after it
 * closed the socket.
 * Usage: sock_client PATH|tcp:PORT [slow] */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sock_client PATH\n");
		return 2;
	}
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int tcp = strncmp(argv[1], "tcp:", 4) == 0;
	int s = socket(tcp ? AF_INET : AF_UNIX, SOCK_STREAM, 0);
	int c;
	if (tcp) {
		in.sin_port = htons(atoi(argv[1] + 4));
		c = connect(s, (struct sockaddr *)&in, sizeof in);
	} else {
		snprintf(a.sun_path, sizeof a.sun_path, "%s", argv[1]);
		c = connect(s, (struct sockaddr *)&a, sizeof a);
	}
	if (s < 0 || c != 0) {
		perror("connect");
		return 1;
	}
	long sum = 0;
	for (int i = 0; i < 5; i++) {
		char b[64];
		int n = snprintf(b, sizeof b, "req %d\n", i);
		if (send(s, b, n, 0) != n)
			return 1;
		ssize_t got = recv(s, b, sizeof b - 1, 0);
		if (got <= 0)
			return 1;
		b[got] = 0;
		long v = atol(b + 4); /* "ans N" */
		if (argc > 2 && i == 1)
			usleep(2100000);
		sum += v; /* LINE:answer */
	}
	close(s);
	for (int j = 0; j < 3; j++)
		sum += j; /* LINE:closed */
	printf("sum=%ld\n", sum);
	return 0;
}
