/* sleeper: prints "tick N" every 300 ms, forever; a sleep that fails
 * says so ("nanosleep failed"): one interrupted by Ctrl-C and resumed by
 * the debugger must be restarted, also after a snapshot taken there. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void)
{
	struct timespec t = { 0, 300 * 1000 * 1000 };
	for (int n = 0;; n++) {
		if (nanosleep(&t, NULL) != 0)
			printf("nanosleep failed: %s\n", strerror(errno));
		printf("tick %d\n", n);
		fflush(stdout);
	}
}
