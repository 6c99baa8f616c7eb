"""busy_worker: a thread that computes beside the main one, which
computes too, so that CPython's lock passes between them by time (every
5 ms), not at a call of either; pdb traces only the main thread."""
import threading

beats = 0


def worker():
    global beats
    while beats < 10**8:
        beats += 1


threading.Thread(target=worker, daemon=True).start()
total = 0
for i in range(5):
    for j in range(20000):
        total += j
    total += i  # LINE:stop
print("total", total)
