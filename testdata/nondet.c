/* nondet: prints values from the outside world, for the replay log tests.
 * Usage: nondet FILE PORT [EXIT] (PORT 0: no socket). Each value differs
 * from run to run unless fred's replay log gives the recorded one back. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int path_taken = 0;

static unsigned long from_urandom(void)
{
	unsigned long v = 0;
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &v, sizeof v) != sizeof v)
			v = 0;
		close(fd);
	}
	return v;
}

static void from_file(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "r");
	out[0] = 0;
	if (f) {
		if (!fgets(out, (int)n, f))
			out[0] = 0;
		out[strcspn(out, "\n")] = 0;
		fclose(f);
	}
}

static void from_socket(int port, char *out, size_t n)
{
	out[0] = 0;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
		ssize_t got = recv(s, out, n - 1, 0);
		out[got > 0 ? got : 0] = 0;
		out[strcspn(out, "\n")] = 0;
	}
	close(s);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/etc/hostname";
	int port = argc > 2 ? atoi(argv[2]) : 0;
	char line[256], sock[256];
	struct timespec mono;
	struct timeval tv;
	unsigned long rnd = 0;

	time_t now = time(NULL);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	gettimeofday(&tv, NULL);
	if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
		rnd = 0;
	unsigned long ur = from_urandom();
	srandom((unsigned)ur ^ (unsigned)getpid());
	long r = random();
	from_file(path, line, sizeof line);
	if (port)
		from_socket(port, sock, sizeof sock);
	else
		strcpy(sock, "-");
	printf("time=%ld mono=%ld.%09ld tv=%ld.%06ld getrandom=%lx urandom=%lx random=%ld\n", (long)now,
	       (long)mono.tv_sec, mono.tv_nsec, (long)tv.tv_sec, (long)tv.tv_usec, rnd, ur, r);
	printf("file=%s socket=%s\n", line, sock); /* all values are read */
	if (getenv("NONDET_OTHER"))
		path_taken = 1;
	if (path_taken) /* the divergence test sets it after a restore */
		printf("other path: time=%ld\n", (long)time(NULL));
	else
		printf("usual path: urandom=%lx\n", from_urandom());
	fflush(stdout);
	return argc > 3 ? atoi(argv[3]) : 0;
}
