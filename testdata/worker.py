"""worker: a thread that sleeps in a loop beside the main one, which
counts; pdb traces only the main thread. With "alone" there is no
worker: the same program in one thread (make bench compares them)."""
import sys
import threading
import time

beats = 0


def worker():
    global beats
    while beats < 1000:
        time.sleep(0.001)
        beats += 1


if sys.argv[1:] != ["alone"]:
    threading.Thread(target=worker, daemon=True).start()
total = 0
for i in range(6):
    total += i  # LINE:stop
    time.sleep(0.01)
print("total", total, "beats", beats)
