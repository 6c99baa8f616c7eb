/* mt_pipe: a producer thread sends 1 MB to a consumer thread through a
 * pipe, in 4 KB writes, while both count their turns at a shared mutex;
 * the consumer mixes the count it sees at each read into a sum, so the
 * sum depends on the schedule. On replay the reads give back the logged
 * data and the pipe must still be drained: else the producer's writes
 * fill it and block.
 *
 * mt_pipe SIZE: writes of SIZE bytes (a divisor of 1 MB, at most 4096).
 * Small writes give small reads: many more replayed reads that owe the
 * pipe while the producer waits for its turn and drains it. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOTAL (1 << 20)
#define MAXCHUNK 4096

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
int fds[2];
unsigned long turns, mix = 1, sum;
int chunk = MAXCHUNK;

void *producer(void *arg)
{
	(void)arg;
	char b[MAXCHUNK];
	for (int i = 0; i < TOTAL / chunk; i++) {
		pthread_mutex_lock(&mu);
		turns++;
		pthread_mutex_unlock(&mu);
		memset(b, 'a' + i % 26, (size_t)chunk);
		for (size_t off = 0; off < (size_t)chunk;) {
			ssize_t w = write(fds[1], b + off, (size_t)chunk - off);
			if (w <= 0)
				return NULL;
			off += (size_t)w;
		}
	}
	close(fds[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		chunk = atoi(argv[1]);
	if (chunk < 1 || chunk > MAXCHUNK || TOTAL % chunk) {
		fprintf(stderr, "usage: mt_pipe [write size (a divisor of 1 MB, at most 4096)]\n");
		return 2;
	}
	if (pipe(fds) != 0)
		return 1;
	pthread_t t;
	pthread_create(&t, NULL, producer, NULL);
	char b[1000];
	ssize_t n;
	long total = 0;
	while ((n = read(fds[0], b, sizeof b)) > 0) {
		total += n;
		for (ssize_t i = 0; i < n; i++)
			sum += (unsigned char)b[i];
		pthread_mutex_lock(&mu);
		turns++;
		mix = mix * 31 + turns;
		pthread_mutex_unlock(&mu);
	}
	pthread_join(t, NULL);
	printf("total=%ld sum=%lu mix=%lu\n", total, sum, mix);
	return 0;
}
