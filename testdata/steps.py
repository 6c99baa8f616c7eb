"""steps: calls, a loop and recursion, for stepping forward and back."""
total = 0


def square(x):
    r = x * x
    return r


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def main():
    global total
    for i in range(5):
        total += square(i)
        print("i=%d total=%d" % (i, total))
    f = fact(5)
    print("fact=%d" % f)


main()
