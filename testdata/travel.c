/* travel: a run to record, save and replay elsewhere (issue 24). It reads
 * the turn of its loop that goes wrong from a file (so a changed file
 * changes the run unless the recorded one is replayed), the clock, a
 * random number and its environment, then works through the loop long
 * enough for a reverse-watch to divide it by run time. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

long total;
int flag;

static void work(long i, long bad)
{
	volatile long x = 0;
	for (int j = 0; j < 300; j++)
		x += j ^ i;
	total += x & 7;
	if (i == bad)
		flag = 1; /* the bug */
}

int main(int argc, char **argv)
{
	long bad = -1;
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;
	if (!f || fscanf(f, "%ld", &bad) != 1)
		return 2;
	fclose(f);
	long now = (long)time(NULL);
	srand((unsigned)now);
	int r = rand();
	const char *who = getenv("TRAVEL_WHO");
	char host[256] = "-";
	gethostname(host, sizeof host);
	printf("bad=%ld time=%ld rand=%d who=%s host=%s\n", bad, now, r, who ? who : "-", host);
	for (long i = 0; i < 20000; i++)
		work(i, bad);
	printf("total=%ld flag=%d\n", total, flag);
	return 0;
}
