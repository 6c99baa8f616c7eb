"""bound_client: a client that binds its socket (to a port the kernel
chooses) before it connects, asks the server at 127.0.0.1:PORT once, and
prints the answer. A replay binds and connects again: its socket must be
a new one, not the recorded one (connected already). Usage: bound_client.py PORT"""
import socket
import sys

port = int(sys.argv[1])
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.connect(("127.0.0.1", port))
s.sendall(b"req 7\n")
got = s.recv(64)
n = 1  # LINE:got
s.close()
print("got", got)
