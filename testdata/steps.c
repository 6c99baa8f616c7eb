/* steps: calls, a loop and recursion, for stepping forward and back. */
#include <stdio.h>

int total = 0;

int square(int x)
{
	int r = x * x;
	return r;
}

int fact(int n)
{
	if (n <= 1)
		return 1;
	return n * fact(n - 1);
}

int main(void)
{
	int i;
	for (i = 0; i < 5; i++) {
		total += square(i);
		printf("i=%d total=%d\n", i, total);
	}
	int f = fact(5);
	printf("fact=%d\n", f);
	return 0;
}
