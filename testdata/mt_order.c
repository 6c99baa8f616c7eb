/* mt_order: an order violation in the style of the FReD paper's pbzip2
 * case. The main thread hands blocks to a consumer through a queue and,
 * once it has produced the last one, tears the queue down without waiting
 * for the consumer to finish: it sets queue to NULL while the consumer
 * still uses it, and the consumer crashes. A semaphore makes the teardown
 * come before the consumer's last access on every run. The question: who
 * set queue to NULL? fred-reverse-watch queue != 0 from the crash. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

struct fifo {
	pthread_mutex_t mu;
	int items[64];
	int n;
};

struct fifo *queue;
sem_t produced, torn_down;
long consumed;

void *consumer(void *arg)
{
	(void)arg;
	sem_wait(&produced);
	for (int i = 0; i < 32; i++) {
		pthread_mutex_lock(&queue->mu);
		consumed += queue->items[i];
		pthread_mutex_unlock(&queue->mu);
	}
	sem_wait(&torn_down);
	pthread_mutex_lock(&queue->mu); /* crashes: queue is NULL */
	consumed += queue->items[32];
	pthread_mutex_unlock(&queue->mu);
	return NULL;
}

void teardown(void)
{
	struct fifo *q = queue;
	queue = NULL; /* the bug: the consumer is not done */
	free(q);
}

int main(void)
{
	pthread_t t;
	queue = calloc(1, sizeof *queue);
	pthread_mutex_init(&queue->mu, NULL);
	pthread_create(&t, NULL, consumer, NULL);
	for (int i = 0; i < 64; i++) {
		pthread_mutex_lock(&queue->mu);
		queue->items[queue->n++] = i;
		pthread_mutex_unlock(&queue->mu);
	}
	sem_post(&produced);
	teardown();
	sem_post(&torn_down);
	pthread_join(t, NULL);
	printf("consumed=%ld\n", consumed);
	return 0;
}
