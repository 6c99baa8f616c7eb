"""mt_last: two workers each take a slot and give it back, K times, under
one lock (threading.Lock), and each ends by taking one more; the main
thread starts them and joins them. pdb traces the main thread: a search
that replays it by steps stops where the recorded `continue` went on."""
import threading
import time

K = 30
lock = threading.Lock()
level = 0
moves = 0


def take():
    global level, moves
    with lock:
        level += 1
        moves += 1


def give_back():
    global level, moves
    with lock:
        level -= 1
        moves += 1


def worker(pause):
    for _ in range(K):
        take()
        time.sleep(pause)
        give_back()
    take()


first = threading.Thread(target=worker, args=(0.001,))
second = threading.Thread(target=worker, args=(0.0007,))
first.start()
second.start()
first.join()
second.join()
print("level", level, "moves", moves)  # LINE:end
