/* serial_server: one thread serves its clients one after the other: it
 * accepts one, reads its request, answers it, and keeps its descriptor
 * open until the end, so that a later moment of the run still has it.
 * With one thread fred's snapshots are paused fork copies, which keep the
 * connections the program had. Usage: serial_server PATH N, or
 * tcp:PORT for a TCP server on 127.0.0.1 (bound after main begins: a
 * replay from main binds it again). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int served = 0;

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 2, c[16];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct sockaddr_in in = {.sin_family = AF_INET};
	if (argc < 2 || n > 16)
		return 2;
	int tcp = !strncmp(argv[1], "tcp:", 4), s;
	if (tcp) {
		in.sin_port = htons(atoi(argv[1] + 4));
		in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s >= 0 && bind(s, (struct sockaddr *)&in, sizeof in) < 0)
			s = -1;
	} else {
		strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		unlink(argv[1]);
		if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) < 0)
			s = -1;
	}
	if (s < 0 || listen(s, 8) < 0) {
		perror("listen");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		char buf[64];
		c[i] = accept(s, NULL, NULL);
		ssize_t k = read(c[i], buf, sizeof buf - 1);
		if (k <= 0)
			continue;
		served++; /* LINE:request */
		dprintf(c[i], "ans %d\n", served);
	}
	for (int i = 0; i < n; i++)
		close(c[i]);
	if (!tcp)
		unlink(argv[1]);
	printf("served %d\n", served);
	return 0;
}
