/* monotonic FILE: reads the monotonic clock a number of times that its
 * environment decides (MONO_READS, as an interpreter's lock deadlines
 * depend on what its debugger does), then the realtime clock and a line of
 * FILE. Under FREDLOG_MONO=lenient a replay that reads the monotonic clock
 * more or fewer times than the recorded run prints what it printed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	int n = getenv("MONO_READS") ? atoi(getenv("MONO_READS")) : 3;
	struct timespec m = {0}, r;
	for (int i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	char line[64] = "";
	FILE *f = fopen(argv[1], "r");
	if (f && fgets(line, sizeof line, f))
		fclose(f);
	printf("realtime %ld.%09ld line %s", (long)r.tv_sec, r.tv_nsec, line);
	return 0;
}
