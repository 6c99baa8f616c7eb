/*
 * counter: the fixture of the ckpt tests. It increments a counter and
 * prints it on stdout on every tick ("tick N"), forever. It never reads
 * stdin, so it can sit on a pty that nobody types into. write(2) is used
 * instead of stdio so that nothing is held in a buffer at a snapshot.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile long counter;

int main(void)
{
	char buf[64];
	struct timespec tick = { 0, 5 * 1000 * 1000 }; /* 5 ms */

	for (;;) {
		counter++;
		int n = snprintf(buf, sizeof buf, "tick %ld\n", counter);
		if (write(1, buf, (size_t)n) != n)
			return 1;
		nanosleep(&tick, NULL);
	}
}
