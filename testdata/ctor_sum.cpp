/* ctor_sum: a static object's constructor fills its table and sums it
 * before main; main only reads the sum. The sum's last change lies in the
 * program's start-up, behind main's first line: a reverse-watch from a
 * stop in main must look there. */
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

int main()
{
	int uses = 0; /* LINE:first */
	for (int k = 0; k < 3; k++)
		uses += table.sum > 0;
	std::printf("sum=%d uses=%d\n", table.sum, uses); /* LINE:end */
	return 0;
}
