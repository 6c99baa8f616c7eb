/* accounts: a bank whose total must stay 10000. The accounts are opened
 * after main starts (the total is 0 at main's first line), the total then
 * holds through thousands of transfers, and a late merge of two accounts
 * loses money: the invariant is false at the start, true for most of the
 * run, and false from that one statement on. */
#include <stdio.h>
#include <stdlib.h>

struct account {
	int id;
	int balance;
	struct account *next;
};

static struct account *accounts;

int total(void)
{
	int t = 0;
	struct account *a;
	for (a = accounts; a != NULL; a = a->next)
		t += a->balance;
	return t;
}

static struct account *find(int id)
{
	struct account *a = accounts;
	while (a->id != id)
		a = a->next;
	return a;
}

static void open_account(int id, int balance)
{
	struct account *a = calloc(1, sizeof *a);
	a->id = id;
	a->balance = balance;
	a->next = accounts;
	accounts = a;
}

static void transfer(struct account *from, struct account *to, int amount)
{
	if (from->balance < amount)
		return;
	from->balance -= amount;
	to->balance += amount;
}

static void merge(struct account *from, struct account *into)
{
	into->balance = from->balance; /* LINE:lost (the bug: = for +=) */
	from->balance = 0;
}

int main(void)
{
	int i;
	for (i = 0; i < 100; i++)
		open_account(i, 100);
	for (i = 0; i < 5000; i++)
		transfer(find(i * 7 % 100), find((i * 13 + 5) % 100), (i * 37) % 50 + 1);
	merge(find(17), find(42));
	for (i = 0; i < 500; i++)
		transfer(find(i * 11 % 100), find((i * 3 + 1) % 100), (i * 29) % 40 + 1);
	printf("total=%d\n", total()); /* LINE:end */
	return 0;
}
