/* files: a program that writes files four ways, for the test that going
 * back and replaying leaves them as one forward run would:
 *   log     appended to, opened once with "a" (stdio, so the writes go
 *           through libc's internal write, which a preload cannot see)
 *   rows    opened with O_TRUNC and written one row per turn (it grows
 *           after every snapshot: CRIU checks a file's size on restore)
 *   count   a counter rewritten in place (pwrite at 0) after reading it
 *   mapped  a counter in a shared memory mapping of a file
 *   later   made in the third turn; opened (without O_CREAT) before the
 *           first, which fails: a replay from before must fail it again
 * Usage: files DIR */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int open_in(const char *dir, const char *name, int flags)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, flags, 0644);
	if (fd < 0 && !(flags & O_CREAT))
		return -1;
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: files DIR\n");
		return 2;
	}
	const char *dir = argv[1];
	FILE *log = fdopen(open_in(dir, "log", O_WRONLY | O_CREAT | O_APPEND), "a");
	int rows = open_in(dir, "rows", O_WRONLY | O_CREAT | O_TRUNC);
	int count = open_in(dir, "count", O_RDWR | O_CREAT | O_TRUNC);
	int mfd = open_in(dir, "mapped", O_RDWR | O_CREAT | O_TRUNC);
	int early = open_in(dir, "later", O_WRONLY);
	if (!log || ftruncate(mfd, 4096) != 0)
		return 1;
	int *mapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (mapped == MAP_FAILED)
		return 1;
	int total = 0;
	for (int i = 0; i < 5; i++) {
		fprintf(log, "line %d\n", i);
		fflush(log);
		char b[32];
		int n = snprintf(b, sizeof b, "row %d\n", i);
		if (write(rows, b, n) != n)
			return 1;
		char c[32] = "";
		ssize_t got = pread(count, c, sizeof c - 1, 0);
		int k = got > 0 ? atoi(c) : 0;
		n = snprintf(c, sizeof c, "%d\n", k + 1);
		if (pwrite(count, c, n, 0) != n)
			return 1;
		if (i == 2)
			close(open_in(dir, "later", O_WRONLY | O_CREAT));
		mapped[0] += 1;
		total += mapped[0]; /* LINE:turn */
	}
	printf("total=%d mapped=%d early=%d\n", total, mapped[0], early);
	return 0;
}
