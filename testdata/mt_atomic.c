/* mt_atomic: an atomicity violation in the style of MySQL bug 12228.
 *
 * Two tellers withdraw from one account. Every read and every write of the
 * balance holds the lock, but "read, check, write" as a whole does not:
 * teller 2 reads the balance, teller 1 withdraws, and teller 2 writes back
 * a balance computed from its stale read. The invariant
 * balance + withdrawn <= 1000 breaks in teller 2's write_balance() call, at
 * "withdrawn += amount": its balance is 100 too high.
 * Semaphores force that interleaving, and take the tellers' other
 * withdrawals in turns, so that every run is the same (fred does not yet
 * record the order of lock operations). */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
long balance = 1000;
long withdrawn = 0;
sem_t stale_read, first_done, turn[3];

long read_balance(void)
{
	pthread_mutex_lock(&mu);
	long b = balance;
	pthread_mutex_unlock(&mu);
	return b;
}

void write_balance(long b, long amount)
{
	pthread_mutex_lock(&mu);
	balance = b;
	withdrawn += amount;
	pthread_mutex_unlock(&mu);
}

void withdraw(long amount)
{
	long b = read_balance();
	if (b >= amount)
		write_balance(b - amount, amount);
}

void *teller(void *arg)
{
	long id = (long)arg;
	sem_wait(&turn[id]); /* teller 1, then teller 2 */
	for (int i = 0; i < 50; i++)
		withdraw(1);
	if (id == 1) {
		sem_post(&turn[2]);
		sem_wait(&stale_read);
		withdraw(100);
		sem_post(&first_done);
	} else {
		long b = read_balance(); /* the stale read */
		sem_post(&stale_read);
		sem_wait(&first_done);
		write_balance(b - 100, 100); /* the bug: b is stale */
		sem_post(&turn[1]);
	}
	sem_wait(&turn[id]); /* teller 1, then teller 2 */
	for (int i = 0; i < 50; i++)
		withdraw(1);
	if (id == 1)
		sem_post(&turn[2]);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	sem_init(&stale_read, 0, 0);
	sem_init(&first_done, 0, 0);
	sem_init(&turn[1], 0, 1);
	sem_init(&turn[2], 0, 0);
	pthread_create(&t1, NULL, teller, (void *)1);
	pthread_create(&t2, NULL, teller, (void *)2);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("balance=%ld withdrawn=%ld sum=%ld\n", balance, withdrawn, balance + withdrawn);
	return 0;
}
