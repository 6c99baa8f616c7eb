"""input: reads lines while it runs, and prints what looks like pdb."""
import os
import random
import time


def main():
    print("(Pdb) this line is the program's, not pdb's")
    print("> /nowhere/fake.py(1)<module>()")
    name = input("name? ")
    seed = random.random()
    now = time.time()
    words = {"a": 1, "b": 2, "c": 3}
    order = list(set(words))
    print("hello %s (%d words)" % (name, len(order)))
    n = int(input("count? "))
    total = 0
    for i in range(n):
        total += i
    print("total=%d pid=%d" % (total, os.getpid()))
    return seed, now


main()
