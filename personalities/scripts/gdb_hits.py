
import gdb
class FredHits(gdb.Command):
    def __init__(self):
        super().__init__('fred-hits', gdb.COMMAND_RUNNING)
    def invoke(self, arg, tty):
        a = arg.split()
        bp = gdb.Breakpoint('*' + a[0], internal=True)
        try:
            bp.silent = True
            t = gdb.selected_thread()
            if t is not None:
                bp.thread = t.num
            bp.ignore_count = int(a[1]) - 1
            gdb.execute('continue')
        finally:
            n = bp.hit_count
            bp.delete()
            print('FREDHITS %d' % n)
FredHits()
