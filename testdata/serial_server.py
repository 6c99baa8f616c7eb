"""serial_server: one thread serves its clients one after the other: it
accepts one, reads its request, works on it for a while (a continue over
it leaves copies of the program under fred), answers, and keeps the
connection until the end; the last connection outlives the listening
socket. Usage: serial_server.py PATH [N], or tcp:PORT for a TCP server on
127.0.0.1 (bound after the program's start: a replay binds it again)."""
import os
import socket
import sys
import time

path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2
tcp = path.startswith("tcp:")
if tcp:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", int(path[4:])))
else:
    try:
        os.unlink(path)
    except OSError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
listener.listen(8)
conns = []
served = 0
for i in range(n):
    c, peer = listener.accept()
    conns.append(c)
    if i == n - 1:
        listener.close()  # the last: the connection outlives its listener
    c.getsockname()
    d = c.dup()  # a duplicate of a replayed connection is one too
    peer2 = d.getpeername()
    d.close()
    c.recv(64)
    t, work = time.monotonic(), 0
    while time.monotonic() - t < 1.0:
        work += 1
    served += 1  # LINE:request
    c.sendall(b"ans %d\n" % served)
for c in conns:
    c.close()
if not tcp:
    os.unlink(path)
print("served", served)
