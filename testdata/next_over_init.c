/* next_over_init: main calls init(), whose fill() runs a loop of small
 * calls, as gzip's ct_init fills its tables (bi_reverse for each code).
 * reverse-next over the call of init, and reverse-finish from init after
 * a next over fill(), land at once on the call: fred went into the call
 * and walked back out of it statement by statement, each statement's
 * moment replayed from the start of the run (minutes on gzip). */
#include <stdio.h>

#define CODES 300

int table[CODES];
int ready, done;

int rev(int code, int len)
{
	int res = 0;
	do {
		res |= code & 1;
		code >>= 1, res <<= 1;
	} while (--len > 0);
	return res >> 1;
}

void fill(void)
{
	int n;
	for (n = 0; n < CODES; n++)
		table[n] = rev(n, 5);
}

void init(void)
{
	ready = 1;
	fill();
	done = 1;
}

int main(void)
{
	long sum = 0;
	int n;
	init();
	for (n = 0; n < CODES; n++)
		sum += table[n];
	printf("sum=%ld\n", sum);
	return 0;
}
