# fred's helpers inside lldb: queries whose answers fred reads as one
# "@fred ..." line, through the SB API rather than lldb's display formats
# (which the person may have changed: frame-format, thread-format).
import os
import lldb


def fred_target():
    return lldb.debugger.GetSelectedTarget()


def fred_process():
    p = fred_target().GetProcess()
    if not p.IsValid() or p.GetState() in (lldb.eStateInvalid, lldb.eStateExited, lldb.eStateDetached, lldb.eStateUnloaded, lldb.eStateConnected):
        return None
    return p


def fred_frame():
    p = fred_process()
    if p is None:
        return None
    f = p.GetSelectedThread().GetSelectedFrame()
    return f if f.IsValid() else None


def fred_where():
    f = fred_frame()
    if f is None:
        print("@fred not running")
        return
    le = f.GetLineEntry()
    path = le.GetFileSpec().fullpath if le.IsValid() and le.GetFileSpec().IsValid() else ""
    print("@fred where %d\t%s\t%s\t%d" % (f.GetPC(), f.GetFunctionName() or "", path or "", le.GetLine() if path else 0))


def fred_depth():
    p = fred_process()
    if p is None:
        print("@fred not running")
        return
    print("@fred depth %d" % p.GetSelectedThread().GetNumFrames())


def fred_pid():
    p = fred_process()
    print("@fred pid %d" % (p.GetProcessID() if p is not None else 0))


def fred_caller():
    p = fred_process()
    if p is None:
        print("@fred not running")
        return
    t = p.GetSelectedThread()
    f = t.GetSelectedFrame()
    up = t.GetFrameAtIndex(f.GetFrameID() + 1)
    print("@fred caller %d" % (up.GetPC() if up.IsValid() else 0))


def fred_where_of(bp):
    # Where a breakpoint stops, in a form fred_break takes again: a line
    # where it has one, else its function, else its address.
    if bp.GetNumLocations() == 0:
        return None
    addr = bp.GetLocationAtIndex(0).GetAddress()
    le = addr.GetLineEntry()
    if le.IsValid() and le.GetFileSpec().IsValid():
        return "%s:%d" % (le.GetFileSpec().fullpath, le.GetLine())
    fn = addr.GetFunction()
    if fn.IsValid():
        return fn.GetName()
    return "*0x%016x" % addr.GetLoadAddress(fred_target())


def fred_bps():
    t = fred_target()
    for i in range(t.GetNumBreakpoints()):
        bp = t.GetBreakpointAtIndex(i)
        where = fred_where_of(bp)
        if where is None or bp.MatchesName("fred"):
            continue
        print("@fred bp %d %d %d %s" % (bp.GetID(), 1 if bp.IsEnabled() else 0, 1 if bp.IsOneShot() else 0, where))


def fred_break(where, internal=True):
    t = fred_target()
    if where.startswith("fredwatch "):
        fred_watch(where.split(" ", 2)[2])
        return
    if where.startswith("*0x"):
        bp = t.BreakpointCreateByAddress(int(where[1:], 16))
    elif ":" in where and where.rpartition(":")[2].isdigit():
        f, _, line = where.rpartition(":")
        bp = t.BreakpointCreateByLocation(f, int(line))
    else:
        bp = t.BreakpointCreateByName(where)
    if not bp.IsValid():
        print("@fred no breakpoint at %s" % where)
        return
    if internal:
        # fred's own: fred_bps leaves it out.
        bp.AddName("fred")
    print("@fred breakpoint %d" % bp.GetID())


def fred_value(v):
    s = v.GetValue()
    if s is None:
        s = v.GetSummary()
    if s is None:
        s = str(v).split(" = ", 1)[-1]
    return s


def fred_options():
    # fred's evaluations: the person's $0, $1 ... stay theirs; a call in
    # the expression passes their breakpoints and is undone if it stops
    # (gdb's unwindonsignal), however long it takes (fred's own deadline
    # stands), with the other threads where they are.
    o = lldb.SBExpressionOptions()
    o.SetSuppressPersistentResult(True)
    o.SetTryAllThreads(False)
    o.SetIgnoreBreakpoints(True)
    o.SetUnwindOnError(True)
    o.SetTimeoutInMicroSeconds(0)
    return o


def fred_eval(expr):
    f = fred_frame()
    o = fred_options()
    v = f.EvaluateExpression(expr, o) if f is not None else fred_target().EvaluateExpression(expr, o)
    err = v.GetError()
    if err.Fail():
        print("@fred error %s" % " ".join((err.GetCString() or "cannot evaluate").split()))
        return
    print("@fred value %s" % fred_value(v))


def fred_env(name):
    e = fred_target().GetEnvironment()
    v = e.Get(name)
    print("@fred env %s" % (v or ""))


def fred_call(fn, a, b, c, d, threads_held):
    # A call into the program for the fork backend, made by hand rather
    # than as an expression: lldb 14 interrupts an expression whose
    # program forks ("reason: fork"), while a plain continue lets lldb
    # detach the fork child (follow-fork-mode parent), taking its
    # breakpoints out of it, and go on.
    p = fred_process()
    if p is None:
        print("@fred error the program is not running")
        return
    t = p.GetSelectedThread()
    f = t.GetFrameAtIndex(0)
    # Every general register comes back: the agent's code changes any
    # the ABI lets a callee change.
    regs = {}
    for n in FRED_GPRS:
        regs[n] = f.FindRegister(n).GetValueAsUnsigned()
    nr = fred_syscall_nr(p.GetProcessID(), t.GetThreadID())
    target = fred_target()
    if fn.startswith("0x"):
        addr = int(fn, 16)
    else:
        syms = target.FindSymbols(fn)
        if syms.GetSize() == 0:
            print("@fred error no function %s" % fn)
            return
        addr = syms.GetContextAtIndex(0).GetSymbol().GetStartAddress().GetLoadAddress(target)
    # The call returns to the agent's trap (an int3 of its own): a
    # breakpoint of fred's would take one of the person's numbers.
    traps = target.FindSymbols("fredfork_trap")
    if traps.GetSize() == 0:
        print("@fred error no fredfork_trap in the program")
        return
    ret = traps.GetContextAtIndex(0).GetSymbol().GetStartAddress().GetLoadAddress(target)
    # Below the red zone, 16-byte aligned, then the return address.
    sp = ((regs["rsp"] - 256) & ~0xf) - 8
    err = lldb.SBError()
    p.WriteMemory(sp, ret.to_bytes(8, "little"), err)
    if err.Fail():
        print("@fred error writing the stack: %s" % err.GetCString())
        return

    def put(n, v):
        e = lldb.SBError()
        t.GetFrameAtIndex(0).FindRegister(n).SetValueFromCString("0x%x" % (v & 0xffffffffffffffff), e)
        return e.Success()
    for n, v in (("rdi", a), ("rsi", b), ("rdx", c), ("rcx", d), ("rsp", sp), ("rax", 0), ("rip", addr)):
        if not put(n, v):
            for m in FRED_GPRS:
                put(m, regs[m])
            fred_flush()
            print("@fred error writing %s" % n)
            return
    fred_flush()
    others = []
    if threads_held:
        for o in p:
            if o.GetThreadID() != t.GetThreadID() and not o.IsSuspended():
                o.Suspend()
                others.append(o)
    why = ""
    for _ in range(1000):
        err = p.Continue()
        if err.Fail():
            why = err.GetCString()
            break
        if p.GetState() != lldb.eStateStopped:
            why = "the program ended in the call"
            break
        if t.GetFrameAtIndex(0).GetPC() in (ret, ret + 1):
            break
        st = t.GetStopReason()
        # A fork (lldb lets the child go), a breakpoint the person has
        # in the agent's way, a snapshot's stop: on.
        if st in (lldb.eStopReasonFork, lldb.eStopReasonVFork, lldb.eStopReasonVForkDone, lldb.eStopReasonBreakpoint, lldb.eStopReasonNone) or \
                (st == lldb.eStopReasonSignal and t.GetStopReasonDataAtIndex(0) == 19):
            continue
        why = "the call stopped (%s)" % t.GetStopDescription(200)
        break
    else:
        why = "the call did not return"
    for o in others:
        o.Resume()
    rv = t.GetFrameAtIndex(0).FindRegister("rax").GetValueAsSigned() if not why else 0
    fred_restart_syscall(regs, nr)
    for n in FRED_GPRS:
        put(n, regs[n])
    fred_flush()
    if why:
        print("@fred error %s" % why)
        return
    print("@fred value %d" % rv)


FRED_GPRS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
             "r12", "r13", "r14", "r15", "rip", "rflags")

# The kernel's "restart this system call" answers, and x86-64's
# restart_syscall.
FRED_RESTARTS = (-512, -513, -514)
FRED_RESTART_BLOCK, FRED_NR_RESTART_SYSCALL = -516, 219


def fred_syscall_nr(pid, tid):
    # The system call thread tid stopped in (lldb 14 shows no orig_rax):
    # /proc's first field, -1 where it is in none.
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return -1


def fred_restart_syscall(regs, nr):
    # A thread stopped inside a system call that the kernel would restart
    # when it resumes: after fred's own use of the thread (a call, a
    # write of its registers) the kernel has forgotten it, so fred
    # restarts it as the kernel would: back to the syscall instruction
    # with its number.
    rax = regs["rax"] - (1 << 64) if regs["rax"] >= 1 << 63 else regs["rax"]
    if nr < 0:
        return
    if rax in FRED_RESTARTS:
        regs["rip"], regs["rax"] = regs["rip"] - 2, nr
    elif rax == FRED_RESTART_BLOCK:
        regs["rip"], regs["rax"] = regs["rip"] - 2, FRED_NR_RESTART_SYSCALL


def fred_load(lib):
    f = fred_frame()
    o = fred_options()
    c = '"' + "".join("\\%03o" % b for b in lib.encode()) + '"'
    v = f.EvaluateExpression("((void*(*)(const char*,int))dlopen)(%s, 2)" % c, o)
    if v.GetError().Fail() or v.GetValueAsUnsigned() == 0:
        print("@fred error dlopen(%s) failed: %s" % (lib, " ".join((v.GetError().GetCString() or "NULL").split())))
        return
    print("@fred value %d" % v.GetValueAsUnsigned())


def fred_registers(names):
    f = fred_frame()
    if f is None:
        print("@fred error the program is not running")
        return
    out = []
    for n in names.split():
        if n == "orig_rax":
            t = fred_thread()
            nr = fred_syscall_nr(t.GetProcess().GetProcessID(), t.GetThreadID())
            out.append("orig_rax=0x%x" % (nr & 0xffffffffffffffff))
            continue
        r = f.FindRegister(n)
        if not r.IsValid():
            print("@fred error lldb has no register %s" % n)
            return
        out.append("%s=0x%x" % (n, r.GetValueAsUnsigned()))
    print("@fred registers %s" % " ".join(out))


def fred_set_registers(pairs):
    f = fred_frame()
    values = dict(p.partition("=")[::2] for p in pairs.split())
    if "orig_rax" in values:
        # lldb cannot write orig_rax: the system call it names is
        # restarted by hand, from rax's restart answer.
        nr = int(values.pop("orig_rax"), 16)
        nr = nr - (1 << 64) if nr >= 1 << 63 else nr
        regs = {"rax": int(values.get("rax", "0"), 16), "rip": f.FindRegister("rip").GetValueAsUnsigned()}
        fred_restart_syscall(regs, nr)
        values["rax"], values["rip"] = "0x%x" % (regs["rax"] & 0xffffffffffffffff), "0x%x" % regs["rip"]
    for n, v in values.items():
        r = f.FindRegister(n)
        e = lldb.SBError()
        if not r.IsValid() or not r.SetValueFromCString(v, e) or e.Fail():
            print("@fred error writing %s: %s" % (n, e.GetCString()))
            return
    fred_flush()
    print("@fred value 0")


def fred_flush():
    # Registers written through the SB API leave lldb's frames of the
    # thread as they were; register write drops them (Thread::Flush).
    t = fred_thread()
    pc = t.GetFrameAtIndex(0).FindRegister("rip").GetValueAsUnsigned()
    r = lldb.SBCommandReturnObject()
    lldb.debugger.GetCommandInterpreter().HandleCommand("register write rip 0x%x" % pc, r)


def fred_thread():
    p = fred_process()
    return p.GetSelectedThread() if p is not None else None


def fred_stepped(t):
    # Why the last step or continue of thread t ended, as fred_run does
    # under gdb: done, breakpoint, signal, exited.
    p = fred_process()
    if p is None:
        return "exited"
    reasons = [t.GetStopReason()] + [o.GetStopReason() for o in p if o.GetThreadID() != t.GetThreadID()]
    # Another thread's breakpoint or signal stops the step as gdb's would.
    if any(r in (lldb.eStopReasonBreakpoint, lldb.eStopReasonWatchpoint) for r in reasons):
        return "breakpoint"
    if any(r in (lldb.eStopReasonSignal, lldb.eStopReasonException) and
           not (r == lldb.eStopReasonSignal and o.GetStopReasonDataAtIndex(0) == 19)
           for r, o in zip(reasons, [t] + [o for o in p if o.GetThreadID() != t.GetThreadID()])):
        return "signal"
    return "done"


def fred_depth_of(t):
    return t.GetNumFrames()


def fred_fp_of(t):
    f = t.GetFrameAtIndex(0)
    regs = f.GetRegisters().GetFirstValueByName("General Purpose Registers")
    return ":".join("%x" % regs.GetChildAtIndex(i).GetValueAsUnsigned() for i in range(regs.GetNumChildren())
                    if regs.GetChildAtIndex(i).GetByteSize() == 8)


def fred_nexts(mx, mode="", fp=""):
    t = fred_thread()
    if t is None:
        print("FREDNEXTS 0 exited")
        return
    d0 = fred_depth_of(t)
    n, why = 0, "limit"
    while n < mx:
        t.StepOver()
        why = fred_stepped(t)
        if why != "done":
            break
        if mode == "shallower" and fred_depth_of(t) < d0:
            break
        n += 1
        if mode == "fp" and fred_fp_of(t) == fp:
            break
        why = "limit"
    print("FREDNEXTS %d %s" % (n, why))


def fred_settle(depth=0):
    # Out of code without source, out of frames deeper than depth, then
    # to the start of a statement (see gdb's fred-settle).
    why = "done"
    for _ in range(200):
        t = fred_thread()
        if t is None:
            why = "exited"
            break
        f = t.GetFrameAtIndex(0)
        le = f.GetLineEntry()
        nosrc = not le.IsValid() or le.GetLine() == 0 or not os.path.exists(le.GetFileSpec().fullpath or "")
        if nosrc and t.GetProcess().GetNumThreads() > 1:
            break
        if nosrc or (depth and t.GetNumFrames() > depth):
            t.StepOut()
            why = fred_stepped(t)
        elif le.GetStartAddress().GetLoadAddress(fred_target()) != f.GetPC():
            if depth:
                t.StepOver()
            else:
                t.StepInto()
            why = fred_stepped(t)
        else:
            break
        if why != "done":
            break
    print("FREDSETTLE %s" % why)


def fred_fp():
    t = fred_thread()
    print("FREDFP %s" % (fred_fp_of(t) if t is not None else ""))


def fred_where_regs():
    t = fred_thread()
    if t is None:
        print("@fred not running")
        return
    f = t.GetFrameAtIndex(0)
    print("FREDWHERE %d %d %d" % (f.GetPC(), f.FindRegister("rflags").GetValueAsUnsigned() & 0xffffffff, t.GetThreadID()))


def fred_signals(p):
    # As gdb under fred: SIGINT (Ctrl-C, fred's timed interrupts) stops
    # the program and is not passed on; SIGSTOP (a snapshot's) is silent.
    s = p.GetUnixSignals()
    s.SetShouldSuppress(2, True)
    s.SetShouldStop(2, True)
    s.SetShouldSuppress(19, True)
    s.SetShouldStop(19, False)
    s.SetShouldNotify(19, False)


class FredStopHook:
    # Signal settings are the process's: set at each stop of each one.
    def __init__(self, target, extra_args, internal_dict):
        pass

    def handle_stop(self, exe_ctx, stream):
        fred_signals(exe_ctx.GetProcess())
        return True


def fred_ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def fred_detach():
    # lldb-server, the parent of a program lldb launched, exits on
    # detach. A program then stopped (the snapshot's SIGSTOP) in a
    # process group so orphaned gets SIGHUP from the kernel and dies. lldb
    # takes it as a subreaper for that moment: its parent is then lldb,
    # in the same session, and its group is not orphaned.
    import ctypes
    p = fred_process()
    pid = p.GetProcessID() if p is not None else 0
    server = fred_ppid(pid) if pid else 0
    try:
        with open("/proc/%d/comm" % server) as f:
            if not f.read().startswith("lldb-server"):
                server = 0  # a program lldb attached to: its parent stays
    except OSError:
        server = 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    try:
        r = lldb.SBCommandReturnObject()
        lldb.debugger.GetCommandInterpreter().HandleCommand("process detach", r)
        print((r.GetOutput() or "") + (r.GetError() or ""), end="")
        if server and server != os.getpid():
            import time
            end = time.time() + 2
            while fred_ppid(pid) == server and time.time() < end:
                time.sleep(0.001)
    finally:
        libc.prctl(36, 0, 0, 0, 0)


def fred_reap(pid):
    # A program of lldb's (see fred_detach), killed: only lldb can
    # collect it.
    try:
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass


def fred_watch_items(expr):
    # The variables expr reads, each as (address, size), where each is a
    # plain name of a variable a hardware watchpoint can cover; None where
    # one is not (a member, an element, a call).
    import re
    # (also * and &: *p reads what p points to, which a watchpoint on p
    # does not cover; a product is left unwatched with them)
    if re.search(r"[\[.(*&]|->", expr):
        return None
    f = fred_frame()
    items = []
    for name in sorted(set(re.findall(r"\b[A-Za-z_]\w*\b", expr))):
        v = f.FindVariable(name) if f is not None else lldb.SBValue()
        if not v.IsValid():
            v = fred_target().FindFirstGlobalVariable(name)
        if not v.IsValid():
            return None
        addr, size = v.GetLoadAddress(), v.GetByteSize()
        if addr == lldb.LLDB_INVALID_ADDRESS or size not in (1, 2, 4, 8):
            return None
        items.append((addr, size))
    return items if 0 < len(items) <= 4 else None


def fred_watch_kind(key, expr):
    print("FREDWATCH " + ("hw" if fred_watch_items(expr) else "sw"))


def fred_watch(expr):
    # fred's watchpoints on what expr reads ("@fred breakpoint wN,wM").
    t = fred_target()
    ids = []
    items = fred_watch_items(expr)
    if not items:
        print("error: fred cannot watch %s here" % expr)
        return
    for addr, size in items:
        e = lldb.SBError()
        w = t.WatchAddress(addr, size, False, True, e)
        if not w.IsValid() or e.Fail():
            for i in ids:
                t.DeleteWatchpoint(i)
            print("error: no watchpoint on %s: %s" % (expr, e.GetCString()))
            return
        ids.append(w.GetID())
    print("@fred breakpoint %s" % ",".join("w%d" % i for i in ids))


def fred_delete(ids):
    t = fred_target()
    for i in ids.split(","):
        if i.startswith("w"):
            t.DeleteWatchpoint(int(i[1:]))
        else:
            t.BreakpointDelete(int(i))


# fred's run (the file's [early start]): the program started stopped,
# run to the executable's entry point, then to main's first line, each
# with lldb's run-to-address plan, whose breakpoint is lldb's own: none
# of the person's numbers is taken.
fred_early = {"to": None, "main": None, "launched": None}


def fred_early_launched():
    # lldb's "Process N launched" line, which it prints after the first
    # stop of a launch: fred shows it after the run's first stop it shows.
    t, p = fred_target(), fred_process()
    if p is not None:
        fred_early["launched"] = "Process %d launched: '%s' (%s)" % (
            p.GetProcessID(), t.GetExecutable().fullpath, t.GetTriple().split("-")[0])


def fred_to_entry():
    fred_early_launched()
    t = fred_target()
    addr = t.GetModuleAtIndex(0).GetObjectFileEntryPointAddress().GetLoadAddress(t)
    f = fred_frame()
    if addr == lldb.LLDB_INVALID_ADDRESS or f is None:
        return
    if f.GetPC() == addr:
        print("@fred at the entry point")  # a static program starts there
        return
    fred_early["to"] = addr
    print("@fred to the entry point")


def fred_to_main():
    t = fred_target()
    fred_early["to"] = fred_early["main"] = None
    for i in range(t.FindFunctions("main").GetSize()):
        fn = t.FindFunctions("main").GetContextAtIndex(i).GetFunction()
        if fn.IsValid():
            # main's first line: after its prologue, as a breakpoint on
            # main stops.
            addr = fn.GetStartAddress().GetLoadAddress(t) + fn.GetPrologueByteSize()
            fred_early["to"] = fred_early["main"] = addr
            return


def fred_early_forget():
    fred_early["to"] = None


def fred_early_reached():
    f = fred_frame()
    if f is not None and fred_early["main"] is not None and f.GetPC() == fred_early["main"]:
        print("@fred reached")


def fred_show_stop():
    r = lldb.SBCommandReturnObject()
    lldb.debugger.GetCommandInterpreter().HandleCommand("process status", r)
    print((r.GetOutput() or "") + (r.GetError() or ""), end="")


def fred_early_continue():
    # To the pending address of fred's run, or a plain continue (the rest
    # of the run, and its replays): a stop anywhere else is shown as lldb
    # shows one.
    p = fred_process()
    if p is None:
        print("error: the program is not running")
        return
    t = p.GetSelectedThread()
    to, fred_early["to"] = fred_early["to"], None
    if to is not None:
        t.RunToAddress(to)
        f = t.GetFrameAtIndex(0)
        if p.GetState() == lldb.eStateStopped and f.GetPC() == to and t.GetStopReason() == lldb.eStopReasonPlanComplete:
            print("@fred reached the stop")
            return
    else:
        p.Continue()
    fred_show_stop()
    if fred_early["launched"]:
        print(fred_early["launched"])
        fred_early["launched"] = None
