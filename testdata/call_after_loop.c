/* call_after_loop: each call of fill() runs a long loop before it calls
 * leaf(), where the breakpoint is, as gzip's fill_window rehashes its
 * table before read_buf reaches updcrc. Going back one statement from the
 * second stop in leaf lands on fill()'s call of leaf, after the loop: a
 * walk of the loop statement by statement would take minutes. */
#include <stdio.h>

#define TURNS 300000

long acc, seen;

void leaf(long v)
{
	seen += v;
}

void fill(int round)
{
	long i;
	for (i = 0; i < TURNS; i++)
		acc += i & round;
	leaf(acc);
}

int main(void)
{
	int round;
	for (round = 1; round <= 3; round++)
		fill(round);
	printf("acc=%ld seen=%ld\n", acc, seen);
	return 0;
}
