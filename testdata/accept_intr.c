/* accept_intr: a blocking accept that no client comes to, and an alarm
 * whose handler (no SA_RESTART) must end it with EINTR, as the kernel
 * does. Usage: accept_intr PATH. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void on_alarm(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
	unlink(argv[1]);
	if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 8))
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	int c = accept(s, NULL, NULL);
	printf("accept %d %s\n", c, c < 0 && errno == EINTR ? "EINTR" : strerror(errno));
	unlink(argv[1]);
	return 0;
}
