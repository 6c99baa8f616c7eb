import os
# gdb's "with scheduler-locking on -- CMD" puts the setting back as soon
# as the program is resumed, before CMD's stepping is over; from Python the
# command runs to its end first. With the others held, a thread that
# sleeps in a wait (a futex, a read) for 0.1 s waits for one of them, and
# one still running after limit seconds for one some other way: a SIGINT
# to it (which gdb keeps from the program; a SIGTRAP where it blocks
# SIGINT) stops it there, the same way
# when the command is replayed. (The kernel says where it sleeps.) Where a
# thread running on is stopped depends on the machine's load, so a
# negative limit watches for waits only: the replay of a command that was
# not stopped running on (a long line single-stepped takes seconds).
# '@fred blocked running' says which stop it was.
import threading, ctypes, time
_fred_tgkill, _fred_waits = {
    'x86_64': (234, {0, 7, 19, 23, 34, 43, 45, 47, 61, 128, 130, 202, 232, 247, 270, 271, 281, 288, 441, 449}),
    'aarch64': (131, {22, 63, 65, 72, 73, 95, 98, 133, 137, 202, 207, 212, 242, 260, 441, 449}),
}.get(os.uname().machine, (None, set()))
def _fred_state(pid, lwp):
    d = '/proc/%d/task/%d/' % (pid, lwp)
    try:
        st = open(d + 'stat').read()
        sc = open(d + 'syscall').read().split()
        return st[st.rindex(')') + 2], int(sc[0]) if sc[0].isdigit() else -1
    except (OSError, ValueError, IndexError):
        return '', -1
def _fred_watch(pid, lwp, limit, done, kicked):
    end, since = time.monotonic() + limit if limit > 0 else None, None
    while not done.wait(0.005):
        state, call = _fred_state(pid, lwp)
        now = time.monotonic()
        since = (since or now) if state == 'S' and call in _fred_waits else None
        running = end is not None and now >= end and state not in ('t', '')
        if (since and now - since >= 0.1) or running:
            kicked.append(' running' if running and not since else '')
            sig = 5 if _fred_blocks_sigint(pid, lwp) else 2
            if sig == 5:
                # (gdb may take a SIGTRAP for its own step's: the round
                # robin's statement ends at gdb's next stop all the same)
                globals().get('_fred_signalled', [False])[0] = True
            ctypes.CDLL(None).syscall(_fred_tgkill, pid, lwp, sig)
            return
# A server's threads may block SIGINT (a signal thread of its own takes
# it): they get a SIGTRAP, which gdb keeps from the program too.
def _fred_blocks_sigint(pid, lwp):
    try:
        for l in open('/proc/%d/task/%d/status' % (pid, lwp)):
            if l.startswith('SigBlk:'):
                return int(l.split()[1], 16) & 2 != 0
    except (OSError, ValueError, IndexError):
        pass
    return False
def fred_locked(cmd, limit=0):
    old = gdb.parameter('scheduler-locking')
    gdb.execute('set scheduler-locking on')
    done, kicked, w = threading.Event(), [], None
    if limit and _fred_tgkill:
        pid, lwp = gdb.selected_inferior().pid, gdb.selected_thread().ptid[1]
        w = threading.Thread(target=_fred_watch, args=(pid, lwp, limit, done, kicked), daemon=True)
        w.start()
    try:
        gdb.execute(cmd)
    finally:
        done.set()
        if w:
            w.join()
        gdb.execute('set scheduler-locking ' + old)
        if kicked:
            print('@fred blocked' + kicked[0])
