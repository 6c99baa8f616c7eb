"""bench_watch: a loop of N iterations (argv[1]) whose invariant
(total >= 0) the iteration at 90% breaks; make bench times
fred-reverse-watch total >= 0 from the print at the end."""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
bad = n * 9 // 10
total = 0


def update(i):
    global total
    v = i % 7
    if i == bad:
        v = -10 * n  # the bug
    total += v


for i in range(n):
    update(i)
print("total=%d bad=%d" % (total, bad))
