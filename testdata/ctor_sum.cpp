/* ctor_sum: a static object's constructor fills its table and sums it
 * before main; main only reads the sum. The sum's last change lies in the
 * program's start-up, behind main's first line: a reverse-watch from a
 * stop in main must look there. A second table, on the heap, is made by a
 * call before main too. */
#include <cstdio>

struct Table {
	int values[8];
	int sum = 0;
	Table()
	{
		for (int i = 0; i < 8; i++)
			values[i] = i * i;
		for (int i = 0; i < 8; i++)
			sum += values[i]; /* LINE:sum */
	}
};

Table table;

static Table *make_table()
{
	return new Table();
}

/* A pointer a constructor call sets: NULL at the entry point, where
 * heap->sum cannot be read. */
Table *heap = make_table(); /* LINE:heap */

int main()
{
	int uses = 0; /* LINE:first */
	for (int k = 0; k < 3; k++)
		uses += table.sum > 0;
	std::printf("sum=%d uses=%d\n", table.sum, uses); /* LINE:end */
	return 0;
}
