/* watch_long: a long loop (three million calls) whose invariant
 * (flag == 0) one late call breaks: far too many statements to count one
 * by one, so fred-reverse-watch has to divide the continue by run time
 * and by counting executions. */
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

int main(void)
{
	long i;
	for (i = 0; i < CALLS; i++)
		add(i);
	printf("total=%ld flag=%d\n", total, flag);
	return 0;
}
