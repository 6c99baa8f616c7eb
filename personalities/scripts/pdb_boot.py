# pdb's own start (its imports, the person's .pdbrc) is not the program's:
# fred's replay log skips it (the call does nothing without the log's
# library), so that a run recorded without pdb (fred record) replays under
# it. The skip ends where the program's code starts (reset, in bdb's run).
try:
    import ctypes
    _fred_log = ctypes.PyDLL(None).syscall
except Exception:
    _fred_log = lambda *a: 0
_fred_log(0x46524544, 1)
import pdb, types
def _fred(prompt):
    import os, sys, bdb, ast, dis, inspect, traceback
    P = pdb.Pdb
    P.use_rawinput = False
    P._fred_pending = P._fred_ended = P._fred_restarting = False
    P._fred_hit = P._fred_runs = 0
    def wrap(name, w):
        o = getattr(P, name)
        f = lambda self, *a, **k: w(o, self, *a, **k)
        # pdb's help shows the doc; a commands block ends at a command
        # whose __name__ says it resumes the program.
        f.__doc__, f.__name__ = o.__doc__, o.__name__
        setattr(P, name, f)
    # The first stop of a run that pdb started because the last one ended
    # (not because the person said "run") is "ended" for fred, until the
    # next command moves it. Nothing of fred's sits between pdb and the
    # program: tracebacks stay pdb's.
    def reset(o, self):
        f = sys._getframe(2)
        if f.f_code.co_name == 'run' and f.f_code.co_filename == bdb.__file__:
            self._fred_pending = self._fred_runs > 0 and not self._fred_restarting
            self._fred_runs += 1
            self._fred_restarting = False
            # A count the program's end ended: the new run is pdb's, which
            # stops at its first line.
            self.__dict__.pop('trace_dispatch', None)
            r = o(self)
            # The program's code starts: pdb's own start (the bootstrap's
            # window, and reset's linecache.checkcache) is over.
            if P._fred_boot_window:
                P._fred_boot_window = False
                logsys(0x46524544, 0)
            return r
        return o(self)
    def restart(o, self, arg):
        self._fred_restarting = True
        return o(self, arg)
    # Where the program stopped, whatever frame up and down select since.
    def setup(o, self, f, tb):
        r = o(self, f, tb)
        self._fred_at = self.curindex
        return r
    # fred's replay log (replaylog/) must not record what pdb itself asks
    # the system for while the person uses it, and the program's other
    # threads wait meanwhile: tell its library so (the call does nothing
    # without it). PyDLL keeps the GIL across the call, so that no other
    # thread holds it when they are told to wait.
    try:
        import ctypes
        logsys = ctypes.PyDLL(None).syscall
    except Exception:
        logsys = lambda *a: 0
    def interaction(o, self, frame, tb):
        disarm()
        self._fred_ended = frame is not None and self._fred_pending
        if frame is not None:
            self._fred_pending = False
        said = None
        c, lc = self._fred_count, self._fred_lc
        if lc is not None:
            said = 'FREDNEXTS %d %s%s%s' % (lc[0], lc[1] or ('exited' if frame is None or self._fred_ended or self._fred_runs != lc[2] else 'signal'), lc[3], lc[4])
            steps_off(self, frame)
        elif c is not None:
            why = counted(self, frame, c)
            if why is None:
                return
            self._fred_count, said = None, 'FREDNEXTS %d %s' % (c[1], why)
        logsys(0x46524544, 1)
        try:
            if said:
                self.message(said)
            return o(self, frame, tb)
        finally:
            # after quit the rest of the run is pdb's (2): not logged,
            # and the program's threads may end
            logsys(0x46524544, 2 if self._fred_quit else 0)
    # After quit, the way out (BdbQuit, the interpreter's exit) is not the
    # program's: in a replayed stretch it would differ from the log.
    P._fred_quit = False
    def quit(o, self, arg):
        self._fred_quit = True
        return o(self, arg)
    for name in ('do_quit', 'do_q', 'do_exit', 'do_EOF'):
        wrap(name, quit)
    # fred_nexts MAX [shallower]: up to MAX nexts without a prompt between
    # them (a round trip each costs more than the statement), then one
    # line "FREDNEXTS N WHY", as gdb's fred-nexts.
    P._fred_count, P._fred_sigint = None, False
    def sigint(o, self, *a):
        self._fred_sigint = True
        return o(self, *a)
    wrap('sigint_handler', sigint)
    def depth(f):
        n = 0
        while f is not None:
            n, f = n + 1, f.f_back
        return n
    def counted(self, frame, c):
        mx, n, shallower, d0, runs = c
        if frame is None:
            return 'signal'
        if self._fred_ended or self._fred_runs != runs:
            return 'exited'
        ev = getattr(self, '_fred_event', '')
        if hit_at(self, frame):
            return 'breakpoint'
        if self._fred_sigint or ev == 'exception' and frame.f_locals.get('__exception__', (None,))[0] is KeyboardInterrupt:
            return 'signal'  # Ctrl-C
        if shallower and depth(frame) < d0:
            return 'done'
        c[1] = n = n + 1
        if n >= mx:
            return 'limit'
        self.set_next(frame)
        return None
    def nexts(self, arg):
        a = arg.split()
        f = self.stack[getattr(self, '_fred_at', len(self.stack) - 1)][0] if self.stack else self.curframe
        self._fred_count, self._fred_sigint = [int(a[0]), 0, len(a) > 1 and a[1] == 'shallower', depth(f), self._fred_runs], False
        self.set_next(f)
        return 1
    # fred_steps MAX [bps] [next|finish]: MAX steps (or up to the first
    # breakpoint a continue would stop at, with bps; or to where a next or
    # a return from here would stop), counted by a trace
    # function of fred's that does nothing else: about 0.1 us an event,
    # where pdb's own dispatch costs ten times that. A step stops at every
    # call, line, return and exception event (bdb's stop_here with no
    # stopframe), so that is what it counts; the last event goes to pdb's
    # dispatch in step mode, which stops there as step does.
    P._fred_lc = None
    GEN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
    # With "watch KEY EXPR" (last: EXPR is the rest), EXPR is evaluated at
    # every step, in the frame KEY names (fred_scope; "-": each step's),
    # and the answer ends "away K VALUE": the last step where it had
    # another value than at the start (-1: none).
    def steps(self, arg):
        arg, watch, w = arg.partition(' watch ')
        a = arg.split()
        mx, lines = int(a[0]), set()
        if 'bps' in a:
            lines = {ln for _, ln in bdb.Breakpoint.bplist}
        until = 'next' if 'next' in a else 'finish' if 'finish' in a else ''
        f0 = self.stack[getattr(self, '_fred_at', len(self.stack) - 1)][0] if self.stack else self.curframe
        if until and getattr(self, '_fred_event', '') == 'return' and getattr(self, '_fred_evframe', None) is f0:
            # From a --Return-- stop, pdb's next is a step, its return
            # stops in the caller.
            if until == 'next':
                until, mx = '', 1
            else:
                until, f0 = 'next', f0.f_back
        done = 'return' if until == 'finish' else 'next' if until else ''
        # With track: the last step at each depth (0: f0's, the start
        # counted as step 0), to name where the end's frame was called.
        track, depth, last = 'track' in a, [0], {0: 0}
        st = self._fred_lc = [0, None, self._fred_runs, '', '']
        if watch:
            # The frame KEY names where it is on the stack, as for
            # fred_eval_scoped; the frame stepped in where it is not (a
            # generator's between two of its yields, say).
            key, _, expr = w.partition(' ')
            code, near = compile(expr, '<fred>', 'eval'), [None, None]
            def scope_of(f):
                if near[0] is f:
                    return near[1]
                chain, g = [], f
                while g is not None:
                    chain.append(g)
                    if g is self.botframe:
                        break
                    g = g.f_back
                near[:] = f, keyed(key, chain[::-1])[1] or f
                return near[1]
            def val(f):
                g = scope_of(f)
                try:
                    return repr(eval(code, g.f_globals, g.f_locals))
                except BaseException as e:
                    return '(raises ' + traceback.format_exception_only(type(e), e)[-1].strip() + ')'
            ref, st[4] = val(f0), ' away -1'
        self._fred_sigint = False
        skip, brk = self.skip, self.break_here
        def tr(f, ev, arg):
            if self._fred_lc is not st:
                return P.trace_dispatch(self, f, ev, arg)
            if ev == 'exception' and f.f_code.co_flags & GEN and arg[0] is StopIteration and arg[2] is None:
                return tr
            if skip and self.is_skipped_module(f.f_globals.get('__name__')):
                return tr
            st[0] += 1
            if watch:
                v = val(f)
                if v != ref:
                    st[4] = ' away %d %s' % (st[0], v.replace('\n', '\\n'))
            if track:
                if ev == 'call':
                    depth[0] += 1
                last[depth[0]] = st[0]
                d = depth[0]
                if ev == 'return':
                    depth[0] -= 1
            if self._fred_sigint:
                st[1] = 'signal'
            elif done and f is f0 and (ev == 'return' if done == 'return' else ev != 'call'):
                st[1] = 'done'  # before the breakpoints: pdb does not look there
            elif lines and ev == 'line' and (f.f_lineno in lines or f.f_code.co_firstlineno in lines) and brk(f):
                st[1] = 'breakpoint'
            elif st[0] >= mx:
                st[1] = 'limit'
            else:
                return tr
            if track:
                st[3] = ' %d' % max((i for k, i in last.items() if k < d), default=-1)
            cb = self.currentbp
            steps_off(self, f)
            self._fred_lc = st
            self.set_step()
            self.currentbp = cb
            return self.trace_dispatch(f, ev, arg)
        self.trace_dispatch = tr
        f = f0
        while f is not None and f is not self.botframe:
            f.f_trace = tr
            f = f.f_back
        sys.settrace(tr)
        return 1
    def steps_off(self, frame):
        # pdb's dispatch again, for new frames and the live ones.
        self._fred_lc = None
        self.__dict__.pop('trace_dispatch', None)
        sys.settrace(self.trace_dispatch)
        while frame is not None and frame is not self.botframe:
            frame.f_trace = self.trace_dispatch
            frame = frame.f_back
    def bp_commands(o, self, frame):
        self._fred_hit = getattr(self, 'currentbp', 0)
        return o(self, frame)
    def set_stopinfo(o, self, *a):
        self._fred_hit = self.currentbp = 0
        return o(self, *a)
    def event(name):
        def w(o, self, *a):
            self._fred_event, self._fred_evframe = name, a[0] if a else None
            if name == 'line' or (name == 'call' and not self.stop_here(a[0])):
                return o(self, *a)
            # What pdb says before its prompt (--Call--, --Return--, the
            # exception) is the debugger's, not the program's: with
            # threads, a write lets the GIL go, which a replay that stops
            # where the recorded run went on would do at a new place.
            logsys(0x46524544, 1)
            try:
                return o(self, *a)
            finally:
                logsys(0x46524544, 2 if self._fred_quit else 0)
        wrap('user_' + name, w)
    for name in ('line', 'call', 'return', 'exception'):
        event(name)
    # A stop on a line with a breakpoint is at the breakpoint, as in gdb,
    # also when pdb got there by stepping and did not look.
    def bp_at(self, f):
        fn, ln, code = self.canonic(f.f_code.co_filename), f.f_lineno, f.f_code
        for b in bdb.Breakpoint.bpbynumber:
            if not b or not b.enabled or b.ignore or b.file != fn:
                continue
            if b.funcname:
                try:
                    first = first_line(b)
                except Exception:
                    first = 0
                if code.co_name != b.funcname or ln != first:
                    continue
            elif b.line != ln:
                continue
            if b.cond:
                try:
                    if not eval(b.cond, f.f_globals, f.f_locals):
                        continue
                except Exception:
                    pass
            return b.number
        return 0
    def hit_at(self, f):
        # The breakpoint pdb stopped at, or one on the line stepped to.
        if self._fred_hit:
            return self._fred_hit
        if f is not None and getattr(self, '_fred_event', '') == 'line':
            return bp_at(self, f)
        return 0
    def stop(self, arg):
        self.message('@fred stop %d' % hit_at(self, self.stack[self._fred_at][0] if self.stack else None))
    def init(o, self, *a, **k):
        o(self, *a, **k)
        self.prompt = prompt
    wrap('__init__', init)
    wrap('setup', setup)
    wrap('interaction', interaction)
    wrap('reset', reset)
    wrap('do_run', restart)
    wrap('do_restart', restart)
    # The program's run ends where pdb's _run returns (or raises): what
    # pdb does then (its messages, a restart that reads the script again)
    # is pdb's, as is its start, up to the next run's reset; a recording
    # (fred record) ends there the same way.
    def ran(o, self, *a):
        try:
            return o(self, *a)
        finally:
            if not P._fred_boot_window:
                P._fred_boot_window = True
                logsys(0x46524544, 1)
    for name in ('_run', '_runscript', '_runmodule'):
        if hasattr(P, name):
            wrap(name, ran)
    wrap('bp_commands', bp_commands)
    wrap('_set_stopinfo', set_stopinfo)
    def where(self, arg):
        st = self.stack
        if self._fred_ended or not st:
            return self.message('@fred ended')
        c = self.canonic
        at = min(getattr(self, '_fred_at', len(st) - 1), len(st) - 1)
        i0 = next((i for i, (f, _) in enumerate(st[:at + 1]) if c(f.f_code.co_filename) == self.mainpyfile), at + 1)
        f, n = st[at]
        fn = c(f.f_code.co_filename)
        if i0 > at:
            fn = '<%s>' % fn  # pdb's own frames, below the program: no place to land
        ev = getattr(self, '_fred_event', '') if f is getattr(self, '_fred_evframe', None) else ''
        self.message('@fred at %d %d %s\t%s\t%s' % (n, at + 1 - i0, f.f_code.co_name, fn, ev))
    def value(self, expr, g, l):
        try:
            v = repr(eval(expr, g, l))
        except BaseException as e:
            return self.message('@fred error ' + traceback.format_exception_only(type(e), e)[-1].strip())
        self.message('@fred value ' + v.replace('\n', '\\n'))
    def ev(self, arg):
        value(self, arg, self.curframe.f_globals, self.curframe_locals)
    # A reverse-watch's names are those of the frame it began in, wherever
    # the search goes, as gdb's are: KEY names that frame by its place
    # from the bottom of the stack, its function and its first line, the
    # same in every replay (a restore forgets what pdb was told).
    def scope(self, arg):
        c = self.curframe.f_code
        self.message('FREDSCOPEKEY %d:%s:%d' % (self.curindex, c.co_name, c.co_firstlineno))
    def keyed(key, frames):
        # The frame KEY names among frames, the stack from its bottom.
        try:
            i, name, first = key.split(':')
            i = int(i)
            f = frames[i]
            if f.f_code.co_name == name and f.f_code.co_firstlineno == int(first):
                return i, f
        except (ValueError, IndexError):
            pass
        return -1, None
    def scoped(self, key):
        return keyed(key, [f for f, _ in self.stack])
    def ev_scoped(self, arg):
        key, _, expr = arg.partition(' ')
        i, f = scoped(self, key)
        if f is None or i == self.curindex:
            return ev(self, expr)
        value(self, expr, f.f_globals, f.f_locals)
    def scope_where(self, arg):
        i, f = scoped(self, arg)
        self.message('FREDSCOPE %d %s' % (self.curindex - i, f.f_code.co_name) if f and i <= self.curindex else 'FREDSCOPE -1')
    # A breakpoint on a function stops at its first line: fred's own
    # breakpoints are on that line, found in the compiled source.
    def first_line(b):
        if b.func_first_executable_line:
            return b.func_first_executable_line
        import linecache
        todo = [compile(''.join(linecache.getlines(b.file)), b.file, 'exec')]
        while todo:
            c = todo.pop()
            if c.co_name == b.funcname and c.co_firstlineno == b.line:
                return min((l for _, l in dis.findlinestarts(c) if l and l > c.co_firstlineno), default=b.line)
            todo.extend(k for k in c.co_consts if hasattr(k, 'co_firstlineno'))
        return b.line
    def bps(self, arg):
        for b in bdb.Breakpoint.bpbynumber:
            if b:
                ln = b.line
                if b.funcname:
                    try:
                        ln = first_line(b)
                    except Exception:
                        pass
                # An ignore count is part of what a continue ran with:
                # its replay needs the count it started from.
                self.message('@fred bp %d %d%s %s:%d%s%s' % (b.number, b.enabled, 't' if b.temporary else '', b.file, ln, ' ignore %d' % b.ignore if b.ignore else '', ' if ' + b.cond if b.cond else ''))
    def brk(self, arg):
        spec, _, cond = ast.literal_eval(arg).partition(' if ')
        spec, _, ign = spec.partition(' ignore ')
        f, _, ln = spec.rpartition(':')
        err = self.set_break(f, int(ln), cond=cond or None)
        if not err and ign:
            bdb.Breakpoint.bpbynumber[bdb.Breakpoint.next - 1].ignore = int(ign)
        self.message('@fred error %s' % err if err else '@fred bp %d' % (bdb.Breakpoint.next - 1))
    def delete(self, arg):
        n, B = int(arg), bdb.Breakpoint
        self.clear_bpbynumber(n)
        if n == B.next - 1 and len(B.bpbynumber) == n + 1:
            B.next = n
            B.bpbynumber.pop()
    def save(self, arg):
        B = bdb.Breakpoint
        bps = [b and (b.file, b.line, b.temporary, b.cond, b.funcname, b.enabled, b.ignore, b.hits, b.func_first_executable_line) for b in B.bpbynumber]
        with open(arg, 'w') as f:
            f.write(repr((bps, B.next, self.commands, self.commands_doprompt, self.commands_silent, self.aliases)))
    def load(self, arg):
        with open(arg) as f:
            bps, nxt, self.commands, self.commands_doprompt, self.commands_silent, self.aliases = ast.literal_eval(f.read())
        B = bdb.Breakpoint
        B.bplist, B.bpbynumber, self.breaks = {}, [None], {}
        for i, t in enumerate(bps[1:], 1):
            if t is None:
                B.bpbynumber.append(None)
                continue
            B.next = i
            b = B(*t[:5])
            b.enabled, b.ignore, b.hits, b.func_first_executable_line = t[5:]
            ls = self.breaks.setdefault(t[0], [])
            if t[1] not in ls:
                ls.append(t[1])
        B.next = nxt
    # Fork snapshots (see personalities.Personality.Fork): copy() forks
    # twice so that the copy is fred's child, and returns 0 in the copy.
    # The copy ignores the terminal's signals from its first instant: the
    # live process's end hangs the terminal up. What a copy needs is
    # imported now, not in the copy: a module fred imports once the program
    # runs would be one the program finds already imported in some runs of
    # a stretch and imports itself in others (xmlrpc.server imports fcntl),
    # and a replay of that stretch would leave its recording.
    import signal, fcntl, termios
    sigs = [signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU]
    def copy():
        for f in (sys.stdout, sys.stderr):
            f.flush()
        # The random module reseeds itself in a forked child (at-fork
        # hook): a copy keeps the state the program had.
        rnd = sys.modules.get('random')
        st = rnd.getstate() if rnd is not None and hasattr(rnd, 'getstate') else None
        saved = [signal.signal(n, signal.SIG_IGN) for n in sigs]
        r, w = os.pipe()
        pid = os.fork()
        if pid:
            for n, h in zip(sigs, saved):
                signal.signal(n, h)
            os.close(w)
            got = os.read(r, 32)
            os.close(r)
            os.waitpid(pid, 0)
            return int(got or b'-1')
        try:
            os.close(r)
            g = os.fork()
            if g:
                os.write(w, str(g).encode())
                os._exit(0)
            os.close(w)
            if st is not None:
                rnd.setstate(st)
            return 0
        except BaseException:
            os._exit(1)
    def paused(fifo):
        # In a copy: wait for fred's byte on the FIFO. Each byte leaves a
        # fresh copy waiting there, and the woken one goes on, with the
        # terminal, as the live program; it returns the fresh copy's pid.
        try:
            while True:
                # Only fred writes to the FIFO, and holds it open: a read
                # with no byte and no writer means fred is gone.
                fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
                try:
                    os.set_blocking(fd, True)
                    b = os.read(fd, 1)
                finally:
                    os.close(fd)
                if not b:
                    os._exit(0)
                g = copy()
                if g:
                    break
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
            return g
        except BaseException:
            os._exit(1)
    def fork(self, fifo):
        saved = [signal.getsignal(n) for n in sigs]
        g = copy()
        if g:
            self.message('@fred fork %d' % g)
            return
        g = paused(fifo)
        for n, h in zip(sigs, saved):
            if h is not None:
                signal.signal(n, h)
        probe['cfg'] = None
        self.message('@fred fork %d' % g)
    P.do_fred_fork = fork
    # Probes (fred_probes SECONDS FIFO..., before the person's continue):
    # while it runs, a timer of the program's CPU time leaves a paused
    # copy of it every SECONDS, each waiting on a FIFO of fred's as a fork
    # snapshot's does. The latest two are kept and, of the others, at most
    # eight evenly spaced (the spacing doubles as the continue goes on;
    # the copies in between are killed), so a FIFO for each is enough.
    # fred_probed, after it, names them ("@fred probed live SLOT:PID,...
    # dead PID,...", oldest first). A reverse command after a long
    # continue counts from the latest instead of from before the
    # continue, and a search divides the continue at them first. A woken
    # copy stops at the program's next event, as after a Ctrl-C. Only the
    # program's own code is interrupted so: a tick in pdb's dispatch
    # (where a breakpoint's stop is decided) leaves none.
    probe = {'cfg': None, 'armed': False, 'busy': False, 'n': 0, 'live': [], 'dead': [], 'free': [], 'stride': 1, 'pdb': None, 'old': None}
    ours = {bdb.__file__, pdb.__file__, sys._getframe().f_code.co_filename}
    def probes(self, arg):
        a = arg.split()
        probe['cfg'] = (float(a[0]), a[1:]) if len(a) > 3 and hasattr(signal, 'setitimer') else None
        probe['n'], probe['live'], probe['dead'], probe['stride'] = 0, [], [], 1
        probe['free'] = list(range(len(a) - 1))[::-1]
    def probed(self, arg):
        disarm()
        self.message('@fred probed live %s dead %s' % (','.join('%d:%d' % x[1:] for x in probe['live']) or '-', ','.join(str(x) for x in probe['dead']) or '-'))
        probe['cfg'], probe['live'], probe['dead'] = None, [], []
    def thin():
        live = probe['live']
        while len([e for e in live[:-2] if e[0] % probe['stride'] == 0]) > 8:
            probe['stride'] *= 2
        keep = []
        for i, e in enumerate(live):
            if i >= len(live) - 2 or e[0] % probe['stride'] == 0:
                keep.append(e)
                continue
            try:
                os.kill(e[2], signal.SIGKILL)
            except OSError:
                pass
            probe['dead'].append(e[2])
            probe['free'].append(e[1])
        probe['live'] = keep
    def disarm():
        if probe['armed']:
            probe['armed'] = False
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, probe['old'])
    def arm(o, self, arg):
        cfg = probe['cfg']
        if cfg and not probe['armed']:
            old = signal.getsignal(signal.SIGPROF)
            if old == signal.SIG_DFL:
                probe['pdb'], probe['old'], probe['armed'] = self, old, True
                signal.signal(signal.SIGPROF, on_prof)
                signal.setitimer(signal.ITIMER_PROF, cfg[0], cfg[0])
        return o(self, arg)
    for name in ('do_continue', 'do_c', 'do_cont'):
        wrap(name, arm)
    # An interval timer outlives exec, and the new program dies of it.
    def unarmed(e):
        def x(*a, **k):
            disarm()
            return e(*a, **k)
        return x
    os.execv, os.execve = unarmed(os.execv), unarmed(os.execve)
    # _signal's, not signal's: a call of Python code after the woken
    # copy's set_step would be where pdb stops.
    import _signal
    INT = {signal.SIGINT, signal.SIGCHLD}
    def on_prof(sig, frame):
        if not probe['armed'] or probe['busy']:
            return
        if frame is None or frame.f_code.co_filename in ours:
            # Most ticks land in pdb's dispatch: try again soon.
            signal.setitimer(signal.ITIMER_PROF, 0.001, probe['cfg'][0])
            return
        try:
            if len(os.listdir('/proc/self/task')) > 1:
                return  # threads: a fork copies one
        except OSError:
            return
        # A Ctrl-C meanwhile waits (else pdb's handler would stop the
        # person inside this one), so does the program's own SIGCHLD
        # handler (the fork's child exits: it is ours to reap), and
        # nothing here is the program's to log.
        mask = _signal.pthread_sigmask(signal.SIG_BLOCK, INT)
        probe['busy'] = True
        logsys(0x46524544, 1)
        try:
            if not probe['free']:
                return
            slot, idx = probe['free'].pop(), probe['n']
            probe['n'] += 1
            try:
                offs = {}
                for fd in os.listdir('/proc/self/fd'):
                    try:
                        offs[int(fd)] = os.lseek(int(fd), 0, os.SEEK_CUR)
                    except OSError:
                        pass
                saved = [signal.getsignal(n) for n in sigs]
                g = copy()
            except Exception:
                g = -1
            if g > 0:
                probe['live'].append((idx, slot, g))
                thin()
            elif g < 0:
                probe['free'].append(slot)
            if g:
                return
            g = paused(probe['cfg'][1][slot])
            for n, h in zip(sigs, saved):
                if h is not None:
                    signal.signal(n, h)
            for fd, off in offs.items():
                try:
                    os.lseek(fd, off, os.SEEK_SET)
                except OSError:
                    pass
            self = probe['pdb']
            probe['armed'], probe['cfg'], probe['live'], probe['dead'] = False, None, [], []
            signal.signal(signal.SIGPROF, probe['old'])
            self.message('@fred fork %d' % g)
            f = frame
            while f is not None and f is not self.botframe:
                f.f_trace = self.trace_dispatch
                f = f.f_back
            self.set_step()
            sys.settrace(self.trace_dispatch)
        finally:
            probe['busy'] = False
            logsys(0x46524544, 0)
            _signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    P.do_fred_probes = probes
    P.do_fred_probed = probed
    P.do_fred_nexts = nexts
    P.do_fred_steps = steps
    P.do_fred_where = where
    P.do_fred_stop = stop
    P.do_fred_pid = lambda self, arg: self.message('@fred pid %d' % os.getpid())
    # A stop shown as pdb shows it when it stops there.
    def frame(self, arg):
        ev = getattr(self, '_fred_event', '')
        if self.curindex == getattr(self, '_fred_at', -1):
            exc = self.curframe_locals.get('__exception__')
            if ev in ('call', 'return'):
                self.message('--%s--' % ev.capitalize())
            elif ev == 'exception' and exc:
                self.message(traceback.format_exception_only(*exc)[-1].strip())
        self.print_stack_entry(self.stack[self.curindex])
    P.do_fred_frame = frame
    P.do_fred_eval = ev
    P.do_fred_scope = scope
    P.do_fred_eval_scoped = ev_scoped
    P.do_fred_scope_where = scope_where
    P.do_fred_echo = lambda self, arg: self.message(ast.literal_eval(arg))
    P.do_fred_bps = bps
    P.do_fred_break = brk
    P.do_fred_delete = delete
    P.do_fred_save = save
    P.do_fred_load = load
    names = P.get_names
    P.get_names = lambda self: [n for n in names(self) if 'fred_' not in n]
types.FunctionType(_fred.__code__, {'__builtins__': __builtins__, 'pdb': pdb})(FRED_PROMPT)
pdb.Pdb._fred_boot_window = True  # closed by reset, in bdb's run
# fred record: the program runs as pdb would run it, without stopping and
# without tracing, after the same start (the same modules imported), so
# that its log replays under pdb.
def _fred_record(log):
    import io, os, sys, traceback, __main__, getopt
    # pdb.main's and Pdb._run's steps, in their order (which modules get
    # imported and which directories looked at when), without the trace
    if sys.argv[1] == '-m':
        target = pdb._ModuleTarget(sys.argv[2])
        del sys.argv[1]
    else:
        target = pdb._ScriptTarget(sys.argv[1])
    if hasattr(target, 'check'):  # (3.13 checks as it makes it)
        target.check()
    sys.argv[:] = sys.argv[1:]
    p = pdb.Pdb()
    p.mainpyfile = p.canonic(target.filename)
    __main__.__dict__.clear()
    __main__.__dict__.update(target.namespace)
    code = target.code
    if isinstance(code, str):
        code = compile(code, '<string>', 'exec')
    p.reset()
    out = os.environ.pop('FRED_SOURCES_OUT', None)

    def sources():
        # the script and the modules it ran, for the replay to compile
        # and list as they were (written after the run: not logged)
        if not out:
            return
        import sysconfig
        # the program's own: not the standard library's, nor the
        # debugger's (the replaying machine's Python has its own)
        paths = sysconfig.get_paths()
        std = tuple(os.path.realpath(paths[k]) + os.sep for k in ('stdlib', 'platstdlib'))
        # (site-packages may lie inside the standard library's directory)
        site = tuple(os.path.realpath(paths[k]) + os.sep for k in ('purelib', 'platlib'))
        files = {p.mainpyfile}
        for m in list(sys.modules.values()):
            f = getattr(m, '__file__', None)
            if not isinstance(f, str) or not f.endswith('.py'):
                continue
            real = os.path.realpath(f)
            if real.startswith(site) or not real.startswith(std):
                files.add(os.path.abspath(f))
        with open(out, 'w') as f:
            f.write('\n'.join(sorted(files)) + '\n')
    log(0x46524544, 0)
    # The program's run ends where exec does, as under pdb (ran): what
    # follows is not logged.
    try:
        exec(code, __main__.__dict__)
    except SystemExit:
        log(0x46524544, 1)
        sources()
        raise
    except BaseException:
        log(0x46524544, 1)
        sources()
        t, v, tb = sys.exc_info()
        traceback.print_exception(t, v, tb.tb_next.tb_next)
        sys.exit(1)
    log(0x46524544, 1)
    sources()


def _fred_sources(table):
    # A replay where the recorded script or modules differ (edited since,
    # or another machine): the script compiles as recorded (it is read
    # before the run's log begins), and pdb lists every one as recorded
    # (linecache entries without a time are never checked again).
    import linecache, os, sys, tokenize
    recorded = {}
    with open(table) as f:
        for line in f:
            path, _, copy = line.rstrip('\n').partition('\t')
            with open(copy, 'rb') as c:
                raw = c.read()
            with tokenize.open(copy) as c:  # (its coding line, as pdb reads it)
                lines = c.read().splitlines(True)
            recorded[path] = raw
            linecache.cache[path] = (len(raw), None, lines, path)
    T = pdb._ScriptTarget
    where = lambda t: getattr(t, '_target', None) or str(t)  # (3.13: not a str)
    code = T.code

    def rcode(self):
        if where(self) in recorded:
            return f"exec(compile({recorded[where(self)]!r}, {where(self)!r}, 'exec'))"
        return code.fget(self)
    T.code = property(rcode)
    if hasattr(T, 'check'):  # 3.11, 3.12: checked apart
        check = T.check

        def rcheck(self):
            if self in recorded and not os.path.exists(self):
                sys.path[0] = os.path.dirname(self)
                return
            return check(self)
        T.check = rcheck
    else:  # 3.13: checked as it is made
        init = T.__init__

        def rinit(self, target):
            real = os.path.realpath(target)
            if real in recorded and not os.path.exists(real):
                self._target = real
                if not sys.flags.safe_path:
                    sys.path[0] = os.path.dirname(real)
                return
            init(self, target)
        T.__init__ = rinit


import os as _fred_os
if _fred_os.environ.pop('FRED_RECORD', None) == '1':
    types.FunctionType(_fred_record.__code__, {'__builtins__': __builtins__, 'pdb': pdb})(_fred_log)
else:
    _fred_table = _fred_os.environ.pop('FRED_SOURCES', None)
    if _fred_table:
        _fred_sources(_fred_table)
    pdb.main()
