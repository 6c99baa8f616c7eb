/* toggle: a flag that rises, falls and rises again, and the person
 * stops at each level (high, low, the end). A bisection over those stops
 * finds the first rise; fred-reverse-watch flag == 1 from the end must
 * land on the last. */
#include <stdio.h>

int flag;
volatile long sink;

static void set(int v)
{
	flag = v;
}

/* A call in the watched expression: gdb cannot watch it in hardware. */
int flag_now(void)
{
	return flag;
}

static void work(long n)
{
	long i;
	for (i = 0; i < n; i++)
		sink += i;
}

int main(void)
{
	set(1); /* LINE:first */
	work(1000); /* LINE:high */
	set(0);
	work(1000); /* LINE:low */
	set(1); /* LINE:last */
	printf("flag=%d\n", flag); /* LINE:end */
	return 0;
}
