/* bench_dag: the DAG-cycle benchmark of the FReD paper's Table 3.
 *
 * A program inserts edges into a directed graph that is meant to stay
 * acyclic; one late edge closes a cycle. The question a person asks is
 * "which insertion made has_cycle() true?": fred-reverse-watch
 * has_cycle() == 1, from a breakpoint on done().
 *
 *   bench_dag S [MODE]             S = 1, 2, 4, 8: S x 34,546 nodes and
 *                                  S x 421,576 edges (the paper's N, 2N...)
 *   bench_dag NODES:EDGES [MODE]   explicit sizes
 *
 * MODE is empty (insert every edge, call done()), "assert" (call
 * has_cycle() after every insertion and stop, as a failed assert, at the
 * first one that finds a cycle: the check a person can add today), or
 * "probe" (insert every edge; time has_cycle() at 17 points before the
 * cycle and print what the checks of "assert" would add up to, for sizes
 * where running "assert" would take hours).
 *
 * The edges are pseudo-random and deterministic: every edge goes from a
 * lower to a higher topological rank, except edge K = 90% of the
 * insertions, which goes from the end of an existing path back to its
 * start. The program prints K and that edge first:
 *   "dag: NODES nodes, EDGES edges; edge K (U -> V) closes a cycle"
 *
 * main's loop calls add_edge(u, v) once per edge, two statements a turn,
 * so `next` steps over an insertion; the edge becomes part of the graph at
 * add_edge's "head[u] = e;" line (the comment "links the edge").
 * has_cycle() is an iterative depth-first search (no recursion), callable
 * from gdb: print has_cycle().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { WHITE, GREY, BLACK };

long nnodes;     /* nodes allocated so far (0 before the graph exists) */
long nedges;     /* edges inserted so far */
int *head;       /* head[u]: last edge out of u, or -1 */
int *nxt;        /* nxt[e]: the edge out of the same node before e, or -1 */
int *to;         /* to[e]: where edge e goes */
int *eu, *ev;    /* the edges to insert, in order */
char *colour;    /* has_cycle's work space */
int *stk, *iter;

long cycle_edge; /* index of the edge that closes a cycle */

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned long long rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static long gcd(long a, long b)
{
	while (b) {
		long t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* has_cycle is 1 if the graph has a cycle: an iterative depth-first
 * search that meets a node still on its stack (grey). */
int has_cycle(void)
{
	long s;
	if (nnodes == 0)
		return 0;
	memset(colour, WHITE, nnodes);
	for (s = 0; s < nnodes; s++) {
		long sp = 0;
		if (colour[s] != WHITE)
			continue;
		colour[s] = GREY;
		stk[sp] = s;
		iter[sp] = head[s];
		sp++;
		while (sp > 0) {
			int e = iter[sp - 1], w;
			if (e < 0) {
				colour[stk[sp - 1]] = BLACK;
				sp--;
				continue;
			}
			iter[sp - 1] = nxt[e];
			w = to[e];
			if (colour[w] == GREY)
				return 1;
			if (colour[w] == WHITE) {
				colour[w] = GREY;
				stk[sp] = w;
				iter[sp] = head[w];
				sp++;
			}
		}
	}
	return 0;
}

void add_edge(int u, int v)
{
	int e = nedges;
	to[e] = v;
	nxt[e] = head[u];
	head[u] = e; /* links the edge */
	nedges = e + 1;
}

/* make_edges fills eu/ev: forward edges in a hidden topological order,
 * and at cycle_edge one edge back along a path of earlier edges. */
static void make_edges(long n, long m)
{
	long a = 1000003, i, k, hop;
	long b = (long)(rnd() % n);
	while (gcd(a, n) != 1)
		a += 2;
	for (i = 0; i < m; i++) {
		long r1 = (long)(rnd() % n), r2 = (long)(rnd() % n);
		long t;
		if (r1 == r2)
			r2 = (r1 + 1) % n;
		if (r1 > r2) {
			t = r1;
			r1 = r2;
			r2 = t;
		}
		/* rank r is node (r*a + b) mod n */
		eu[i] = (int)((r1 * a + b) % n);
		ev[i] = (int)((r2 * a + b) % n);
	}
	/* The cycle: start at an earlier edge x -> y, follow edges inserted
	 * before cycle_edge for a few hops, then go back to x. */
	k = cycle_edge;
	i = (long)(rnd() % (k > 1 ? k / 2 : 1));
	{
		int x = eu[i], y = ev[i];
		for (hop = 0; hop < 6; hop++) {
			long j;
			for (j = 0; j < k; j++)
				if (eu[j] == y)
					break;
			if (j == k)
				break;
			y = ev[j];
		}
		eu[k] = y;
		ev[k] = x;
	}
}

void done(void)
{
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* probe times has_cycle() at 17 points up to the edge before the cycle,
 * with the graph as it is then, and integrates (trapezoids): what the
 * checks of "assert" would add up to. Each point is the fastest of three
 * timings (of at least 5 ms each), so a burst of other work on the
 * machine does not count. */
static double time_check(long upto, int want)
{
	double best = 0;
	int w;
	for (w = 0; w < 3; w++) {
		double t0 = now(), t;
		int reps = 0;
		do {
			if (has_cycle() != want) {
				fprintf(stderr, "probe: has_cycle() is not %d after edge %ld\n", want, upto);
				exit(2);
			}
			reps++;
		} while (now() - t0 < 0.005);
		t = (now() - t0) / reps;
		if (w == 0 || t < best)
			best = t;
	}
	return best;
}

static void probe(long m)
{
	const int points = 16;
	double prev_t = 0, total = 0, first = 0, t = 0, found;
	long prev_i = 0, i = 0;
	int p;
	for (p = 0; p <= points; p++) {
		/* the check after edge upto: edges 0..upto are in */
		long upto = (cycle_edge - 1) * p / points;
		for (; i <= upto; i++)
			add_edge(eu[i], ev[i]);
		t = time_check(upto, 0);
		if (p == 0)
			first = t;
		else
			total += (upto - prev_i) * (prev_t + t) / 2;
		prev_t = t;
		prev_i = upto;
	}
	total += first;
	add_edge(eu[i], ev[i]);
	i++;
	found = time_check(cycle_edge, 1);
	total += found;
	for (; i < m; i++)
		add_edge(eu[i], ev[i]);
	printf("probe: %ld checks until the assert fires; has_cycle() takes %.6f s after edge 0, %.6f s after edge %ld, %.6f s when it finds the cycle; they add up to %.3f s\n",
	       cycle_edge + 1, first, t, cycle_edge - 1, found, total);
}

int main(int argc, char **argv)
{
	long n = 34546, m = 421576, i;
	const char *mode = argc > 2 ? argv[2] : "";
	if (argc > 1) {
		char *colon = strchr(argv[1], ':');
		if (colon) {
			n = atol(argv[1]);
			m = atol(colon + 1);
		} else {
			n *= atol(argv[1]);
			m *= atol(argv[1]);
		}
	}
	if (n < 2 || m < 2 || m > 0x7fffffffL || (*mode && strcmp(mode, "assert") && strcmp(mode, "probe"))) {
		fprintf(stderr, "usage: bench_dag SCALE|NODES:EDGES [assert|probe]\n");
		return 2;
	}
	head = malloc(n * sizeof *head);
	colour = malloc(n);
	stk = malloc(n * sizeof *stk);
	iter = malloc(n * sizeof *iter);
	nxt = malloc(m * sizeof *nxt);
	to = malloc(m * sizeof *to);
	eu = malloc(m * sizeof *eu);
	ev = malloc(m * sizeof *ev);
	if (!head || !colour || !stk || !iter || !nxt || !to || !eu || !ev) {
		fprintf(stderr, "bench_dag: out of memory\n");
		return 2;
	}
	memset(head, -1, n * sizeof *head);
	cycle_edge = m * 9 / 10;
	make_edges(n, m);
	nnodes = n;
	printf("dag: %ld nodes, %ld edges; edge %ld (%d -> %d) closes a cycle\n", n, m, cycle_edge, eu[cycle_edge], ev[cycle_edge]);
	fflush(stdout);
	if (strcmp(mode, "probe") == 0) {
		probe(m);
		done();
		return 0;
	}
	if (strcmp(mode, "assert") == 0) {
		for (i = 0; i < m; i++) {
			add_edge(eu[i], ev[i]);
			if (has_cycle()) {
				printf("assert: has_cycle() == 0 fails after edge %ld (%d -> %d)\n", i, eu[i], ev[i]);
				return 3;
			}
		}
		fprintf(stderr, "bench_dag: no cycle found\n");
		return 2;
	}
	for (i = 0; i < m; i++)
		add_edge(eu[i], ev[i]);
	done();
	return 0;
}
