"""scope: a reverse-watch's names are the frame's it began in."""


def helper(n):
    items = list(range(10))  # another 'items', of the same length
    return len(items) + n


def add(xs, v):
    xs.append(v)


def main():
    items = []
    for i in range(10):
        add(items, i)
        helper(i)
    print(len(items))


main()
