"""long_call: main makes one call (work) that runs over a million of
pdb's steps; a late one sets the global broken. For reverse commands over
a single long `next`."""
import sys
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
broken = 0

def work(n):
    global broken
    t = 0
    for i in range(n):
        t += i % 3
        if i == n * 9 // 10:
            broken = 1
    return t

def main():
    r = work(n)
    print("r=%d broken=%d" % (r, broken))

main()
