
import gdb
def fred_regs():
    # The general registers but the flags and r11, where a system call
    # saves them (a single step sets the trap flag a breakpoint stop has
    # not), and the segment bases.
    f = gdb.newest_frame()
    return ':'.join('%x' % (int(f.read_register(r)) & 0xffffffffffffffff) for r in f.architecture().registers('general') if r.name not in ('eflags', 'r11', 'fs_base', 'gs_base'))
class FredStepis(gdb.Command):
    def __init__(self):
        super().__init__('fred-stepis', gdb.COMMAND_RUNNING)
    def invoke(self, arg, tty):
        a = arg.split(' ', 5)
        mx, pc, sp, fp, csp, fn = int(a[0]), int(a[1], 16), int(a[2], 16), a[3], int(a[4], 16), a[5]
        n, same, last = 0, -1, None
        # A stepi onto a breakpoint would count as its hit, and run its
        # commands.
        off = [b for b in (gdb.breakpoints() or ()) if b.enabled]
        for b in off:
            b.enabled = False
        try:
            while n <= mx:
                f = gdb.newest_frame()
                at, fsp = int(f.pc()), int(f.read_register('sp')) & 0xffffffffffffffff
                if n > 0 and at == pc and fsp == sp and fred_regs() == fp:
                    ret = last is not None and f.architecture().disassemble(last)[0]['asm'].split()[0].startswith('ret')
                    print('FREDSTEPIS %d %d %d' % (n, same, 1 if ret else 0))
                    return
                last = at
                if fsp >= csp and (f.name() or '-') == fn:
                    same = n
                gdb.execute('with suppress-cli-notifications on -- stepi', to_string=True)
                n += 1
        except gdb.error:
            pass
        finally:
            for b in off:
                if b.is_valid():
                    b.enabled = True
        print('FREDSTEPIS none %d' % n)
FredStepis()
class FredFrame(gdb.Command):
    def __init__(self):
        super().__init__('fred-frame', gdb.COMMAND_DATA)
    def invoke(self, arg, tty):
        f = gdb.newest_frame()
        print('FREDFRAME %d %d %s %s' % (int(f.pc()), int(f.read_register('sp')) & 0xffffffffffffffff, fred_regs(), f.name() or '-'))
FredFrame()
