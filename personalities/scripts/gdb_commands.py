
import gdb, os
class FredNexts(gdb.Command):
    def __init__(self):
        super().__init__('fred-nexts', gdb.COMMAND_RUNNING)
    def invoke(self, arg, tty):
        fred_quiet(lambda: self.run(arg))
    def run(self, arg):
        a = arg.split()
        mx, shallower, fp = int(a[0]), len(a) > 1 and a[1] == 'shallower', a[2] if len(a) > 2 and a[1] == 'fp' else None
        d0 = fred_depth()
        n, why = 0, 'limit'
        while n < mx:
            why = fred_run('next')
            if why != 'done':
                break
            if shallower and fred_depth() < d0:
                break
            n += 1
            if fp is not None and fred_fp() == fp:
                break
            why = 'limit'
        print('FREDNEXTS %d %s' % (n, why))
FredNexts()
class FredSettle(gdb.Command):
    def __init__(self):
        super().__init__('fred-settle', gdb.COMMAND_RUNNING)
    def invoke(self, arg, tty):
        self.depth = int(arg) if arg.strip() else 0
        fred_quiet(self.run)
    def run(self):
        # Out of code without source, out of frames deeper than the
        # depth asked for (the counting walks from probe to probe are
        # nexts at that depth), then to the start of a statement.
        why = 'done'
        for _ in range(200):
            f = gdb.newest_frame()
            sal = f.find_sal()
            d, g = 0, f
            while g is not None:
                d, g = d + 1, g.older()
            nosrc = sal.symtab is None or sal.line == 0 or not os.path.exists(sal.symtab.fullname())
            if nosrc and len(gdb.selected_inferior().threads()) > 1:
                # With other threads, the selected one may stand in a
                # wait (pthread_join) that ends only when they do: a
                # finish there would run past what it settles.
                break
            if nosrc or (self.depth and d > self.depth):
                why = fred_finish()
            elif sal.pc != f.pc():
                why = fred_run('next' if self.depth else 'step')
            else:
                break
            if why != 'done':
                break
        print('FREDSETTLE %s' % why)
FredSettle()
class FredWhere(gdb.Command):
    # Where the selected thread is, for counting executions of one
    # instruction: pc, eflags (its resume flag says whether the instruction
    # there runs without a debug trap) and the thread's LWP.
    def __init__(self):
        super().__init__('fred-where', gdb.COMMAND_DATA)
    def invoke(self, arg, tty):
        f, t = gdb.newest_frame(), gdb.selected_thread()
        print('FREDWHERE %d %d %d' % (int(f.pc()), int(gdb.parse_and_eval('$eflags')) & 0xffffffff, t.ptid[1] if t else 0))
FredWhere()
class FredFP(gdb.Command):
    def __init__(self):
        super().__init__('fred-fp', gdb.COMMAND_DATA)
    def invoke(self, arg, tty):
        print('FREDFP %s' % fred_fp())
FredFP()
