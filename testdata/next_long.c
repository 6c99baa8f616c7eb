/* next_long: one call of main's (run) executes three million calls, and
 * a late one breaks the invariant (flag == 0): the change lies inside a
 * single `next` over run(), which fred-reverse-watch must divide as it
 * divides a long continue, with its own memory bounded. */
#include <stdio.h>

#define CALLS 3000000
#define BAD 2718281

long total;
int flag;

void add(long i)
{
	total += i & 7;
	if (i == BAD)
		flag = 1; /* the bug */
}

void run(void)
{
	long i;
	for (i = 0; i < CALLS; i++)
		add(i);
}

int main(void)
{
	run();
	printf("total=%ld flag=%d\n", total, flag);
	return 0;
}
