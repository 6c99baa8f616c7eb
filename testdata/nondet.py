"""nondet: prints values from the outside world, for the replay log tests.
Usage: nondet.py FILE PORT (PORT 0: no socket)."""
import os
import random
import socket
import sys
import time

path, port = sys.argv[1], int(sys.argv[2])
now = time.time()
mono = time.monotonic()
ur = os.urandom(8).hex()
r = random.random()
with open("/dev/urandom", "rb") as f:
    dev = f.read(8).hex()
with open(path) as f:
    line = f.read().strip()
sock = "-"
if port:
    with socket.create_connection(("127.0.0.1", port)) as s:
        sock = s.recv(100).decode().strip()
print("time=%r mono=%r urandom=%s random=%r dev=%s" % (now, mono, ur, r, dev))
print("file=%s socket=%s" % (line, sock))
print("done")
mode = "clock"  # the divergence test sets it to "random" after a restore
extra = time.time() if mode == "clock" else os.urandom(4).hex()
print("extra=%r" % (extra,))
