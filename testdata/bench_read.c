/* bench_read: a read-heavy program for the replay log's benchmark.
 * Reads FILE in 4 KB chunks with read(2), asks the clock once per chunk,
 * and sums the bytes: every chunk is a logged read and a logged clock.
 *   bench_read FILE [PASSES] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_read FILE [PASSES]\n");
		return 2;
	}
	int passes = argc > 2 ? atoi(argv[2]) : 1;
	unsigned long sum = 0, chunks = 0;
	long long ns = 0;
	char buf[4096];
	for (int p = 0; p < passes; p++) {
		int fd = open(argv[1], O_RDONLY);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ns += ts.tv_nsec & 1;
			for (ssize_t i = 0; i < n; i++)
				sum = sum * 31 + (unsigned char)buf[i];
			chunks++;
		}
		close(fd);
	}
	printf("read: %lu chunks, sum %lx, %lld\n", chunks, sum, ns);
	return 0;
}
