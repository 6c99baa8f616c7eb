
import gdb, os
# fred's own breakpoints, by number (fred_break, and delete in gdb.fred).
fred_bp = {}
fred_why = [None]
fred_hits = {}
def fred_on_stop(ev):
    if isinstance(ev, gdb.BreakpointEvent):
        # A step that ends on a breakpoint whose condition is false, or
        # that an ignore count lets pass, is a breakpoint event too; only
        # a real hit counts.
        hit = any(b.hit_count > fred_hits.get(b.number, (0, 0))[0] and b.ignore_count >= fred_hits.get(b.number, (0, 0))[1] for b in ev.breakpoints)
        fred_why[0] = 'breakpoint' if hit else 'done'
    elif isinstance(ev, gdb.SignalEvent):
        fred_why[0] = 'signal'
    else:
        fred_why[0] = 'done'
def fred_on_exit(ev):
    fred_why[0] = 'exited'
gdb.events.stop.connect(fred_on_stop)
gdb.events.exited.connect(fred_on_exit)
def fred_on_exiting(ev):
    # gdb goes (fred was killed and the terminal hung up): a program it
    # attached to (a restored snapshot) would run on untraced, and its
    # own SIGHUP may have been lost in a stop gdb never answered.
    for inf in gdb.inferiors():
        if inf.pid > 0 and getattr(inf, 'was_attached', True):
            try:
                os.kill(inf.pid, 9)
            except OSError:
                pass
if hasattr(gdb.events, 'gdb_exiting'):
    gdb.events.gdb_exiting.connect(fred_on_exiting)
def fred_run(cmd):
    fred_why[0] = None
    fred_hits.clear()
    fred_hits.update((b.number, (b.hit_count, b.ignore_count)) for b in (gdb.breakpoints() or ()))
    try:
        gdb.execute(cmd, to_string=True)
    except gdb.error:
        if fred_why[0] is None:
            fred_why[0] = 'exited' if gdb.selected_inferior().pid == 0 else 'error'
    return fred_why[0] or 'done'
def fred_quiet(f):
    # The source line gdb prints at every stop is not captured by
    # to_string: a thousand of them would flood the terminal.
    old = gdb.parameter('suppress-cli-notifications')
    gdb.execute('set suppress-cli-notifications on')
    try:
        return f()
    finally:
        gdb.execute('set suppress-cli-notifications ' + ('on' if old else 'off'))
class FredFinish(gdb.FinishBreakpoint):
    def stop(self):
        self.reached = True
        return True
    def out_of_scope(self):
        pass
def fred_finish():
    # finish, without the "Value returned is $N" that would take the
    # person's next value-history number.
    try:
        bp = FredFinish(gdb.newest_frame(), internal=True)
    except (ValueError, gdb.error):
        return fred_run('finish')
    bp.reached = False
    why = fred_run('continue')
    if bp.reached and why == 'breakpoint':
        why = 'done'
    if bp.is_valid():
        bp.delete()
    return why
def fred_depth():
    n, f = 0, gdb.newest_frame()
    while f is not None:
        n, f = n + 1, f.older()
    return n
def fred_fp():
    f = gdb.newest_frame()
    return ':'.join('%x' % (int(f.read_register(r)) & 0xffffffffffffffff) for r in f.architecture().registers('general'))
def fred_reap(pid):
    # A zombie child of gdb's that its kill left uncollected (fred's
    # Tracer.Reap): only gdb, its parent, can collect it.
    try:
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass
