/* inlined: a function inlined at two call sites, so that a breakpoint on
 * it has two locations and gdb names the one hit ("Breakpoint 1.2, "), as
 * in an optimised build (Debian's gzip: updcrc). */
#include <stdio.h>

static inline __attribute__((always_inline)) int bump(int *x, int by)
{
	*x += by;
	return *x;
}

int main(void)
{
	int a = 0, i;
	for (i = 0; i < 3; i++) {
		bump(&a, 1);
		bump(&a, 10);
	}
	printf("a=%d\n", a);
	return 0;
}
