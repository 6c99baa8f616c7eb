/* readpos FILE FILE2: reads a file the ways that mix the replay log's reads with the
 * stream's own: two bytes by fread, the position (ftell), a rewind, one
 * byte by fgetc, the rest through the stream's buffer (getc_unlocked, a
 * macro the library does not see), then the descriptor's offset after a
 * read(2), and a second file (FILE2, changed between the run and its
 * replay) by fread_unlocked (as coreutils reads): its content and whether
 * the short read left the stream at its end (feof, as sort asks before it
 * reads again). A replay must print what the recorded run printed. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "r");
	if (!f)
		return 1;
	char two[3] = {0};
	size_t n = fread(two, 1, 2, f);
	long at = ftell(f);
	rewind(f);
	int first = fgetc(f);
	char rest[256];
	int i = 0, c;
	while (i < 255 && (c = getc_unlocked(f)) != EOF)
		rest[i++] = (char)c;
	rest[i] = 0;
	fclose(f);
	int fd = open(argv[1], O_RDONLY);
	char b[4];
	ssize_t r = read(fd, b, sizeof b);
	off_t off = lseek(fd, 0, SEEK_CUR);
	close(fd);
	f = fopen(argc > 2 ? argv[2] : argv[1], "r");
	char all[256] = {0};
	size_t got = fread_unlocked(all, 1, sizeof all - 1, f);
	int end = feof(f);
	fclose(f);
	all[strcspn(all, "\n")] = 0;
	printf("fread %zu \"%s\" at %ld; fgetc '%c' then \"%s\"; read %zd, offset %ld; fread_unlocked %zu \"%s\", feof %d\n", n, two, at,
	       first, rest, r, (long)off, got, all, end != 0);
	return 0;
}
