"""oneline: two calls of a function written on one line, on one line; the
second call makes the change a reverse-watch looks for."""
adj = [[0] * 4 for _ in range(4)]
deg = [0] * 4


def add_edge(a, b): adj[a][deg[a]] = b; deg[a] += 1  # noqa: E702


u, v = 1, 2
add_edge(0, 3)
add_edge(v, u); add_edge(u, v)  # noqa: E702  LINE:both
add_edge(3, 0)
print("deg=%d" % deg[1])  # LINE:end
