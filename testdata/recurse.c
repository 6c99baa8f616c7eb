/* recurse: a recursive function whose fifth call, deep in the recursion,
 * makes the change a reverse-watch looks for; deeper calls and the
 * returns of all of them follow it. */
int hits;

static int count(int n)
{
	if (n == 0)
		return 0;
	hits++; /* LINE:change */
	return 1 + count(n - 1);
}

int main(void)
{
	int total = count(8);
	return total + hits - 16; /* LINE:end */
}
