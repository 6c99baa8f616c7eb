/* crash: writes through a pointer that a bug left NULL. */
#include <stdio.h>

struct node {
	int value;
	struct node *next;
};

int sum(struct node *n)
{
	int s = 0;
	while (n) {
		s += n->value;
		n = n->next;
	}
	return s;
}

int main(void)
{
	struct node c = {3, NULL}, b = {2, &c}, a = {1, &b};
	struct node *p = &a;
	printf("sum=%d\n", sum(p));
	p = p->next->next->next;
	p->value = 42;
	printf("unreachable\n");
	return 0;
}
