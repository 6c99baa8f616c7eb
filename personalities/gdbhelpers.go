package personalities

import (
	"fmt"
	"strconv"
	"strings"
)

// Stepper is what a debugger can do in one round trip that fred would
// otherwise do with one round trip per statement: counting the `next`s of
// a long command, and bringing a program stopped anywhere (fred
// interrupted it) to a statement boundary. gdb gets it from Python
// helpers fred installs at startup.
type Stepper struct {
	// Nexts runs at most Max `next`s and says how many ran and why it
	// stopped; see NextsMode.
	Nexts func(max int, mode NextsMode) string
	// Settle brings the program to the first statement boundary, in code
	// with source, at or after where it is.
	Settle string
	// Fingerprint prints the registers, which tell one moment of a loop
	// from another at the same line.
	Fingerprint string
	// Where prints "FREDWHERE PC EFLAGS LWP" for the selected thread.
	Where string
	// Hits, where set, runs the program until the selected thread is
	// about to execute the instruction at addr for the k-th time from
	// now (the present one not counted), with a software breakpoint and
	// an ignore count, and prints "FREDHITS N": the executions counted.
	// fred uses it where the debug registers do not count.
	Hits func(addr uint64, k int) string
	// Steps, where set, runs at most max `step`s counted in the program
	// (an in-process debugger's trace function), stopping early as mode
	// says, and prints "FREDNEXTS N WHY" as Nexts does (N counts the step
	// it stopped at). WHY "passed": the N-th step is where the count
	// ended (a breakpoint, the end of the next), and the program stopped
	// one step later; "unsupported": it did not run.
	Steps func(max int, mode StepsMode) string
	// Stepis, where set, runs at most max `stepi`s (breakpoints off)
	// until the selected thread is at f (its registers: f.FP), at least
	// one, and prints "FREDSTEPIS N SAME RET": N stepis got there, SAME is
	// the last of them (0 the start) that began in function c.Fn with the
	// stack pointer at c.SP or above (-1: none), and RET is 1 when the
	// last one was a return; "FREDSTEPIS none N" when it did not get there.
	Stepis func(max int, f, c Frame) string
	// Frame prints "FREDFRAME PC SP REGS FUNCTION" for the selected
	// thread ("-": a function without a name).
	Frame string
}

// Frame is where a thread is, for counting instructions.
type Frame struct {
	PC, SP uint64
	FP     string // the general registers but the flags
	Fn     string
}

// ParseFrame reads the answer of Stepper.Frame.
func ParseFrame(out string) (Frame, error) {
	rest, err := ParseTagged(out, "FREDFRAME ")
	if err != nil {
		return Frame{}, err
	}
	var f Frame
	if _, err := fmt.Sscanf(rest, "%d %d %s", &f.PC, &f.SP, &f.FP); err != nil {
		return Frame{}, fmt.Errorf("bad answer from fred-frame: %q", rest)
	}
	// The name is the rest of the line: C++ names have spaces.
	if fl := strings.SplitN(rest, " ", 4); len(fl) == 4 {
		f.Fn = fl[3]
	}
	return f, nil
}

// StepisResult is the answer of Stepper.Stepis.
type StepisResult struct {
	N, Same int
	Ret     bool // the last stepi was a return
	Reached bool // false: the stepis did not get there (N ran)
}

// ParseStepis reads the answer of Stepper.Stepis.
func ParseStepis(out string) (StepisResult, error) {
	rest, err := ParseTagged(out, "FREDSTEPIS ")
	if err != nil {
		return StepisResult{}, err
	}
	var r StepisResult
	if _, err := fmt.Sscanf(rest, "none %d", &r.N); err == nil {
		return r, nil
	}
	var ret int
	if _, err := fmt.Sscanf(rest, "%d %d %d", &r.N, &r.Same, &ret); err != nil {
		return r, fmt.Errorf("bad answer from the counted stepi: %q", rest)
	}
	r.Ret, r.Reached = ret == 1, true
	return r, nil
}

// StepsMode says when a counted `step` loop ends besides its count, a
// signal or the end of the program.
type StepsMode struct {
	// AtBps: at the first breakpoint a `continue` would stop at.
	AtBps bool
	// Until "next" or "finish": where that command, run from the start,
	// would stop.
	Until string
	// Track: say which step was the last before the end in a shallower
	// frame (NextsResult.Shallower): where the frame of the end was
	// called from.
	Track bool
}

// NextsMode says when a counted `next` loop stops besides a breakpoint, a
// signal or the end of the program.
type NextsMode struct {
	// Shallower: when a `next` returns from the frame it started in
	// (finish). That `next` is not counted.
	Shallower bool
	// Fingerprint: when the program reaches the registers FP (a moment
	// fred recorded). That `next` is counted.
	FP string
}

// NextsResult is the answer of a counted `next` loop.
type NextsResult struct {
	N   int    // `next`s that ended normally (and the matching one, for FP)
	Why string // "limit", "done" (at FP or shallower), "breakpoint", "signal", "exited"
	// Shallower, for Steps with StepsMode.Track: the last step before
	// the one it stopped at whose frame was shallower (0: where the count
	// started), or -1 if none was.
	Shallower int
}

// ParseNexts reads the answer of Stepper.Nexts.
func ParseNexts(out string) (NextsResult, error) {
	i := strings.LastIndex(out, "FREDNEXTS ")
	if i < 0 {
		return NextsResult{}, fmt.Errorf("no answer from the counted next: %q", lastLines(out))
	}
	line, _, _ := strings.Cut(out[i+len("FREDNEXTS "):], "\n")
	f := strings.Fields(line)
	if len(f) < 2 {
		return NextsResult{}, fmt.Errorf("bad answer from the counted next: %q", out[i:])
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return NextsResult{}, fmt.Errorf("bad answer from the counted next: %q", out[i:])
	}
	r := NextsResult{N: n, Why: f[1], Shallower: -1}
	if len(f) > 2 {
		if k, err := strconv.Atoi(f[2]); err == nil {
			r.Shallower = k
		}
	}
	return r, nil
}

// ParseTagged reads the rest of the line after tag ("FREDSETTLE ").
func ParseTagged(out, tag string) (string, error) {
	i := strings.LastIndex(out, tag)
	if i < 0 {
		return "", fmt.Errorf("no %s answer: %q", strings.TrimSpace(tag), lastLines(out))
	}
	rest, _, _ := strings.Cut(out[i+len(tag):], "\n")
	return strings.TrimSpace(rest), nil
}

func lastLines(s string) string {
	s = StripANSI(s)
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	return s
}

// gdbHelpers is the Python fred installs in gdb: stop reasons from gdb's
// events, and the fred-nexts, fred-settle and fred-fp commands. Each runs
// many debugger steps for one prompt; "why" is how the last one stopped.
const gdbHelpers = `
import gdb, os
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
`

// gdbCommandsPy defines the fred-nexts, fred-settle, fred-where and fred-fp
// commands on gdbHelpers' functions (a second gdb command: a terminal line
// holds at most 4095 bytes).
const gdbCommandsPy = `
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
`

// gdbHitsPy defines fred-hits: a silent internal breakpoint of the
// selected thread, ignored k-1 times. Resuming at addr steps over it
// uncounted, as the hardware count leaves out the present execution.
const gdbHitsPy = `
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
`

// gdbStepisPy defines fred-stepis, for going back one instruction: the
// stepis from an earlier moment to a later one (pc, sp), and the last of
// them in the later one's frame (its function, at its stack pointer or
// above: a call's instructions run below it).
const gdbStepisPy = `
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
`

// gdbPython is one gdb command that runs a Python program.
func gdbPython(src string) string {
	return "python exec(" + strconv.Quote(strings.TrimLeft(src, "\n")) + ")"
}

var gdbStepper = &Stepper{
	Nexts: func(max int, m NextsMode) string {
		switch {
		case m.FP != "":
			return fmt.Sprintf("fred-nexts %d fp %s", max, m.FP)
		case m.Shallower:
			return fmt.Sprintf("fred-nexts %d shallower", max)
		}
		return fmt.Sprintf("fred-nexts %d", max)
	},
	Settle:      "fred-settle",
	Fingerprint: "fred-fp",
	Where:       "fred-where",
	Hits:        func(addr uint64, k int) string { return fmt.Sprintf("fred-hits 0x%x %d", addr, k) },
	Stepis: func(max int, f, c Frame) string {
		if c.Fn == "" {
			c.Fn = "-"
		}
		return fmt.Sprintf("fred-stepis %d 0x%x 0x%x %s 0x%x %s", max, f.PC, f.SP, f.FP, c.SP, c.Fn)
	},
	Frame: "fred-frame",
}
