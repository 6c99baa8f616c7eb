/* echo: reads lines from its terminal while it runs, and answers each. */
#include <stdio.h>
#include <string.h>

int lines = 0;

int main(void)
{
	char buf[256];
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof buf, stdin)) {
		buf[strcspn(buf, "\n")] = 0;
		lines++;
		printf("got '%s' (%d)\n", buf, lines);
		fflush(stdout);
		if (strcmp(buf, "stop") == 0)
			break;
	}
	printf("(gdb) this line only looks like a prompt\n");
	return lines;
}
