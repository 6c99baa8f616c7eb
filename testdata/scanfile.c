/* scanfile FILE: reads numbers and words with fscanf, the way the scanf
 * family reads its stream inside libc: a match, a matching failure (a
 * word where a number is wanted, which stays unread), the word, then
 * numbers up to the end of the file, then the end itself (EOF, feof);
 * and two numbers from a memory stream, which has no descriptor. A replay
 * must print what the recorded run printed. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "r");
	if (!f)
		return 1;
	long a = 0, b = 0;
	char word[32] = "";
	int r1 = fscanf(f, "%ld", &a);
	int r2 = fscanf(f, "%ld", &b); /* a word: matching failure, 0 */
	int r3 = fscanf(f, "%31s", word);
	long sum = 0, v;
	int n = 0, r;
	while ((r = fscanf(f, "%ld", &v)) == 1)
		sum += v, n++;
	printf("a=%ld (%d) b=%ld (%d) word=%s (%d) %d more, sum %ld, last %d, feof %d, at %ld\n", a, r1, b, r2, word, r3, n, sum, r, feof(f) != 0,
	       ftell(f));
	fclose(f);
	char text[] = "42 77";
	FILE *m = fmemopen(text, strlen(text), "r");
	int x = -1, y = -1, rm = m ? fscanf(m, "%d %d", &x, &y) : -2;
	printf("memory: %d %d (%d)\n", x, y, rm);
	return 0;
}
