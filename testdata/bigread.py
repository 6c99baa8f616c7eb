"""bigread: reads a file whole (one read past 64 KiB: logged by reference
in a debugging session) and prints a checksum of it.
    bigread.py FILE"""
import sys


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    total = 0
    for b in data[::97]:
        total = (total * 31 + b) % 1000003
    print("read %d bytes, sum %d" % (len(data), total))
    return total


main(sys.argv[1])
