/* bench_heap: mallocs argv[1] MB, writes every byte, then calls ready(),
 * where make bench stops it to time snapshots of a big process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ready(char *p, size_t n)
{
	printf("touched %zu MB at %p\n", n >> 20, (void *)p);
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
	size_t n = mb << 20;
	char *p = malloc(n ? n : 1);
	if (p == NULL) {
		perror("malloc");
		return 1;
	}
	memset(p, 0x5a, n);
	ready(p, n);
	free(p);
	return 0;
}
