/* statx FILE: a file's size and modification time as statx(2) gives them
 * (coreutils asks with it), then as stat does. A replay with the file
 * metadata logged (FREDLOG_STAT=1) must print what the recorded run
 * printed, though the file changed since. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	struct statx sx;
	struct stat st;
	int r = statx(AT_FDCWD, argv[1], 0, STATX_SIZE | STATX_MTIME, &sx);
	int r2 = stat(argv[1], &st);
	printf("statx %d size %llu mtime %lld; stat %d size %lld\n", r, (unsigned long long)sx.stx_size, (long long)sx.stx_mtime.tv_sec, r2,
	       (long long)st.st_size);
	return 0;
}
