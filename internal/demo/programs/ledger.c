/* ledger: fred's guided demo (fred --demo gdb).
 * A bank balance must never go negative. It starts at 100 and takes 1,000
 * small deposits and withdrawals; one of them, late in the run, is a bug.
 * Which day broke the balance? fred-reverse-watch finds it. */
#include <stdio.h>

long balance = 100;
int days = 0;

int amount(int day)
{
	int a = day * 37 % 23 - 10; /* between -10 and 12 */
	if (day == 811)
		a = -5000; /* the bug: a withdrawal nobody checked */
	return a;
}

void apply(int day)
{
	int a = amount(day);
	balance += a;
	days++;
}

int main(void)
{
	int day;
	for (day = 1; day <= 1000; day++)
		apply(day);
	printf("balance after %d days: %ld\n", days, balance);
	return 0;
}
