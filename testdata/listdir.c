/* listdir DIR FILE: the names in DIR (readdir, sorted), then FILE's size
 * as a seek to its end gives it, by lseek and by fseek. A replay with file metadata logged
 * (FREDLOG_STAT=1) prints what the recorded run printed, though the
 * directory and the file changed since. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	DIR *d = opendir(argv[1]);
	if (!d) {
		printf("no directory\n");
		return 1;
	}
	char *names[64];
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 64)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	for (int i = 0; i < n; i++)
		printf("%s ", names[i]);
	int fd = open(argv[2], O_RDONLY);
	off_t end = lseek(fd, 0, SEEK_END);
	off_t back = lseek(fd, -2, SEEK_CUR);
	char c[3] = {0};
	read(fd, c, 2);
	FILE *f = fopen(argv[2], "r");
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, -3, SEEK_END);
	int last = fgetc(f);
	printf("| size %lld, then at %lld: %s| stream: size %ld, %c\n", (long long)end, (long long)back, c, size, last);
	return 0;
}
