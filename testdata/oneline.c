/* oneline: two calls of a function written on one line, on one line; the
 * second call makes the change a reverse-watch looks for. */
int adj[4][4], deg[4];

static void add_edge(int a, int b) { adj[a][deg[a]++] = b; }

int main(void)
{
	int u = 1, v = 2;
	add_edge(0, 3);
	add_edge(v, u); add_edge(u, v); /* LINE:both */
	add_edge(3, 0);
	return deg[1] - 1; /* LINE:end */
}
