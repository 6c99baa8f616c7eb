"""watch: an invariant (total >= 0) that one late iteration breaks."""
data = [0] * 300
total = 0


def update(i):
    global total
    v = i * 7 % 13
    if i == 277:
        v = -1000000  # the bug
    data[i] = v
    total += v


def main():
    for i in range(300):
        update(i)
    print("total=%d" % total)


main()
