"""crash: an uncaught exception (post-mortem), or sys.exit(N) with an argument."""
import sys


class Node:
    def __init__(self, value, next=None):
        self.value = value
        self.next = next


def walk(p):
    p = p.next.next.next
    p.value = 42
    return p


def main():
    if len(sys.argv) > 1:
        sys.exit(int(sys.argv[1]))
    a = Node(1, Node(2, Node(3)))
    walk(a)


main()
