"""recurse: a recursive function whose fifth call, deep in the recursion,
makes the change a reverse-watch looks for; deeper calls and the returns
of all of them follow it."""
hits = 0


def count(n):
    global hits
    if n == 0:
        return 0
    hits += 1  # LINE:change
    return 1 + count(n - 1)


total = count(8)
print("total=%d hits=%d" % (total, hits))  # LINE:end
