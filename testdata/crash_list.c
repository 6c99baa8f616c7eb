/* crash_list: a bug corrupts one node's next pointer (a rename copies a
 * name longer than the node's name field, over the pointer after it), and
 * a later walk of the list crashes on it. The first stop of a plain `run`
 * is the crash; everything before it must still be reachable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	char name[8];
	struct node *next;
	int value;
};

static struct node *push(struct node *head, int value)
{
	struct node *n = calloc(1, sizeof *n);
	strcpy(n->name, "node");
	n->value = value;
	n->next = head;
	return n;
}

static void rename_node(struct node *n, const char *name)
{
	int i;
	for (i = 0; name[i] != '\0'; i++)
		n->name[i] = name[i]; /* LINE:store (no bound check: the bug) */
	n->name[i] = '\0';
}

static int total(struct node *head)
{
	int s = 0;
	struct node *p;
	for (p = head; p != NULL; p = p->next)
		s += p->value; /* LINE:crash */
	return s;
}

int main(void)
{
	struct node *head = NULL, *n;
	int i, work = 0;
	for (i = 0; i < 20; i++)
		head = push(head, i);
	printf("total=%d\n", total(head));
	n = head;
	for (i = 0; i < 7; i++)
		n = n->next;
	rename_node(n, "a longer name");
	for (i = 0; i < 1000; i++)
		work += i % 7;
	printf("work=%d\n", work);
	printf("total=%d\n", total(head));
	return 0;
}
