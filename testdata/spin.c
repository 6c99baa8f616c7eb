/* spin: loops until interrupted. */
#include <stdio.h>
#include <unistd.h>

volatile long counter = 0;

int main(void)
{
	printf("spinning\n");
	fflush(stdout);
	for (;;) {
		counter++;
		if (counter % 100000000 == 0)
			usleep(1000);
	}
	return 0;
}
