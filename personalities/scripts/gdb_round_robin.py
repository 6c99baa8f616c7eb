import os
# One statement of the selected thread for fred's round-robin: it runs
# until it stands in the program's own code again. A thread in a wait or
# in library code returns from there ('finish' out of the library function
# the program called); one in the program's code runs a line ('step') and
# returns from any library function the line stepped into, whose own lines
# are no statements of the program. A thread not yet in the program's code
# (a new one) goes by instructions until it is, returning from the library
# functions it calls on the way: 'step' would run a start function without
# line information, and the program's code it calls, to the end. A stop by
# a signal (fred's SIGINT to a thread that blocks) ends it where it is:
# resuming would block again.
_fred_signalled = [False]
def _fred_on_stop(ev):
    if isinstance(ev, gdb.SignalEvent):
        _fred_signalled[0] = True
gdb.events.stop.connect(_fred_on_stop)
def fred_own_frame():
    f, i = gdb.newest_frame(), 0
    while f is not None and i < 64:
        sal = f.find_sal()
        if sal.symtab and os.path.exists(sal.symtab.fullname()):
            return f, i
        f, i = f.older(), i + 1
    return None, -1
def fred_own_step(most=20000):
    _fred_signalled[0] = False
    f, i = fred_own_frame()
    if i == 0:
        gdb.execute('step')
    try:
        for _ in range(most):
            t = gdb.selected_thread()
            if _fred_signalled[0] or t is None or not t.is_valid():
                return
            f, i = fred_own_frame()
            if i == 0:
                return
            if i > 0:
                f.newer().select()
                gdb.execute('finish')
                continue
            # (quiet: each would print where it stopped)
            f = gdb.newest_frame()
            if f.find_sal().symtab and f.older() is not None and f.older().older() is not None:
                gdb.execute('with suppress-cli-notifications on -- finish', to_string=True)
            else:
                gdb.execute('with suppress-cli-notifications on -- stepi', to_string=True)
    except (gdb.error, SystemError):
        pass  # the thread has exited, or the program
    finally:
        fred_after_exit()
# A thread that exits leaves none selected: the lowest-numbered one is,
# the same on every replay.
def fred_after_exit():
    try:
        gdb.selected_thread().num
        return
    except (SystemError, AttributeError):
        pass
    ts = sorted(gdb.selected_inferior().threads(), key=lambda t: t.num)
    if ts:
        ts[0].switch()
        print('@fred the thread exited')
