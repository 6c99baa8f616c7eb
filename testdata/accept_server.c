/* accept_server: a thread per connection. The main thread waits in a
 * blocking accept on a unix socket; each client gets a thread that reads
 * one request line and answers it. Between clients the main
 * thread sits in accept, which is where a snapshot finds it: after a
 * restore that call must take its logged answer (the client it accepted
 * the first time), not wait for a new one. Usage: accept_server PATH N
 * (N clients, then it ends). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
int served;

void *handle(void *arg)
{
	int c = (int)(long)arg;
	char buf[64];
	ssize_t n = read(c, buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = 0;
		pthread_mutex_lock(&mu);
		int mine = served++; /* LINE:request */
		pthread_mutex_unlock(&mu);
		char out[96];
		int len = snprintf(out, sizeof out, "ans %d %s\n", mine, buf);
		write(c, out, len);
	}
	return NULL; /* (main closes c: each client has a descriptor of its own) */
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
	unlink(argv[1]);
	if (bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 8))
		return 1;
	int n = atoi(argv[2]);
	pthread_t t[16];
	int c[16];
	for (int i = 0; i < n && i < 16; i++) {
		c[i] = accept(s, NULL, NULL);
		if (c[i] < 0)
			return 1;
		pthread_create(&t[i], NULL, handle, (void *)(long)c[i]);
	}
	for (int i = 0; i < n && i < 16; i++) {
		pthread_join(t[i], NULL);
		close(c[i]);
	}
	printf("served %d\n", served);
	return 0;
}
