/* ctor_crash: a static object's constructor builds a list, a bug corrupts
 * one node's next pointer (a rename copies a name longer than the node's
 * name field, over the pointer after it), and the constructor's own walk
 * of the list crashes on it, before main. The first stop of a plain `run`
 * is that crash; everything from the program's entry on must still be
 * reachable. */
#include <cstdio>
#include <cstring>

struct Node {
	char name[8];
	Node *next;
	int value;
};

static void rename_node(Node *n, const char *name)
{
	int i;
	for (i = 0; name[i] != '\0'; i++)
		n->name[i] = name[i]; /* LINE:store (no bound check: the bug) */
	n->name[i] = '\0';
}

struct Registry {
	Node nodes[10];
	Node *head = nullptr;
	int total = 0;
	Registry()
	{
		for (int i = 0; i < 10; i++) {
			std::strcpy(nodes[i].name, "node");
			nodes[i].value = i;
			nodes[i].next = head;
			head = &nodes[i];
		}
		rename_node(&nodes[6], "a longer name");
		for (Node *p = head; p != nullptr; p = p->next)
			total += p->value; /* LINE:crash */
	}
};

Registry registry;

int main()
{
	std::printf("total=%d\n", registry.total);
	return 0;
}
