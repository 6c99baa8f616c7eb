/* readv: reads with readv and preadv, for the replay log's tests.
 *   readv SMALL LARGE
 * Prints a small file's first line (readv into two pieces), 8 bytes of
 * /dev/urandom (readv) and a sum of 8 KB of a large file at 100000
 * (preadv: past the part the log stores). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: readv SMALL LARGE\n");
		return 2;
	}
	char a[3], b[61] = {0};
	struct iovec v[2] = {{a, sizeof a}, {b, sizeof b - 1}};
	int fd = open(argv[1], O_RDONLY);
	ssize_t n = fd < 0 ? -1 : readv(fd, v, 2);
	if (n < 0) {
		perror(argv[1]);
		return 1;
	}
	printf("small=%.*s%s", (int)(n < 3 ? n : 3), a, n > 3 ? b : "\n");
	close(fd);

	unsigned char r[8];
	struct iovec rv[2] = {{r, 5}, {r + 5, 3}};
	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || readv(fd, rv, 2) != 8) {
		perror("/dev/urandom");
		return 1;
	}
	close(fd);
	printf("urandom=");
	for (int i = 0; i < 8; i++)
		printf("%02x", r[i]);
	printf("\n");

	static char big[8192];
	struct iovec bv[2] = {{big, 4096}, {big + 4096, 4096}};
	fd = open(argv[2], O_RDONLY);
	n = fd < 0 ? -1 : preadv(fd, bv, 2, 100000);
	if (n < 0) {
		perror(argv[2]);
		return 1;
	}
	unsigned long sum = 0;
	for (ssize_t i = 0; i < n; i++)
		sum = sum * 31 + (unsigned char)big[i];
	printf("large=%zd bytes, sum %lx\n", n, sum);
	close(fd);
	return 0;
}
