/* watch: an invariant (sum >= 0) that one late iteration breaks. */
#include <stdio.h>

int data[300];
long sum = 0;

void update(int i)
{
	int v = i * 7 % 13;
	if (i == 277)
		v = -1000000; /* the bug */
	data[i] = v;
	sum += v;
}

int main(void)
{
	int i;
	for (i = 0; i < 300; i++)
		update(i);
	printf("sum=%ld\n", sum);
	return 0;
}
