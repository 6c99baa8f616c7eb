/* bench_loop: a loop of argv[1] iterations (two statements each), then a
 * call to done(); make bench continues over the loop to done() and times
 * the reverse commands that go back over it. */
#include <stdlib.h>

volatile long result;

void done(long s)
{
	result = s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long i, s = 0;
	for (i = 0; i < n; i++)
		s += i;
	done(s);
	return 0;
}
