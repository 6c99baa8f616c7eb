"""worker: a thread that sleeps in a loop beside the main one, which
counts; pdb traces only the main thread."""
import threading
import time

beats = 0


def worker():
    global beats
    while beats < 1000:
        time.sleep(0.001)
        beats += 1


t = threading.Thread(target=worker, daemon=True)
t.start()
total = 0
for i in range(6):
    total += i
    time.sleep(0.01)
print("total", total)
