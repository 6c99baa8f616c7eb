/* mt_interleave: four threads append their number to a shared buffer,
 * each append under a mutex, with nothing forcing whose turn it is: the
 * buffer (and the sums computed from it) depend on how the threads were
 * scheduled. The program is free of data races, so a replay that keeps
 * the recorded lock order prints the same thing; a plain re-run almost
 * never does. Also uses a read-write lock, a condition variable, a
 * semaphore and a pipe between threads, for the log's sync entries. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 300

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
pthread_cond_t finished = PTHREAD_COND_INITIALIZER, go_cond = PTHREAD_COND_INITIALIZER;
int go;
sem_t started;
char order[THREADS * ROUNDS + 1];
int n, done;
unsigned long mix = 1;
int pipefd[2];
/* MT_OTHER=1: thread 2 takes another path once; 2: it stalls once. A
 * debugger can set it too. */
int other;

void *worker(void *arg)
{
	int id = (int)(long)arg;
	sem_post(&started);
	pthread_mutex_lock(&mu);
	while (!go)
		pthread_cond_wait(&go_cond, &mu);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < ROUNDS; i++) {
		volatile unsigned spin = 0;
		for (unsigned k = 0; k < 200u * (unsigned)(id + 1); k++)
			spin += k;
		pthread_mutex_lock(&mu);
		order[n++] = (char)('0' + id);
		mix = mix * 31 + (unsigned long)id;
		pthread_mutex_unlock(&mu);
		if (other == 1 && id == 2 && i == ROUNDS / 3)
			continue; /* another path: the replay diverges here */
		if (other == 2 && id == 2 && i == ROUNDS / 3)
			usleep(500000); /* stalls: the others' turns wait for it */
		pthread_rwlock_rdlock(&rw);
		pthread_rwlock_unlock(&rw);
	}
	char c = (char)('0' + id);
	if (write(pipefd[1], &c, 1) != 1)
		return NULL;
	pthread_mutex_lock(&mu);
	done++;
	pthread_cond_broadcast(&finished);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	if (getenv("MT_OTHER"))
		other = atoi(getenv("MT_OTHER"));
	sem_init(&started, 0, 0);
	if (pipe(pipefd) != 0)
		return 1;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		sem_wait(&started);
	/* the workers are held until main waits: main's wait is sure to wait */
	pthread_mutex_lock(&mu);
	go = 1;
	pthread_cond_broadcast(&go_cond);
	while (done < THREADS)
		pthread_cond_wait(&finished, &mu);
	pthread_mutex_unlock(&mu);
	char last[THREADS + 1] = {0};
	for (int i = 0; i < THREADS; i++)
		if (read(pipefd[0], &last[i], 1) != 1)
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
	printf("finished=%s\n", last);
	printf("mix=%lu n=%d\n", mix, n);
	printf("appends=%.60s\n", order);
	return 0;
}
