/* sized FILE: sizes a file by seeking to its end, then reads it whole, as
 * many programs load a file. A replay where FILE is gone prints what the
 * recorded run printed: the stand-in has the recorded size. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		printf("no file\n");
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *b = calloc(1, n + 1);
	size_t got = fread(b, 1, n, f);
	fclose(f);
	printf("size %ld, read %zu: %s", n, got, b);
	return 0;
}
