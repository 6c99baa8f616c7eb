package ckpt

// The fork backend: unprivileged snapshots of a single-threaded program
// under a debugger that traces it (gdb), whose commands its Tracer holds.
// A snapshot is a paused copy of the program made by fork(2);
// restoring makes a copy the live program. Design, command sequences,
// limits and measurements: FORK.md beside this file.

import (
	"debug/elf"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/fred-debugger/fred/internal/cbuild"
	"github.com/fred-debugger/fred/internal/forkcall"
	"github.com/fred-debugger/fred/internal/proc"
	"golang.org/x/sys/unix"
)

//go:embed forkagent/agent.c
var forkAgentSource []byte

// Debugger runs one debugger command and returns its output. The
// in-process fork backend drives the debugger through it; the session's
// own query function fits
// (DebuggerFunc(s.query)).
type Debugger interface {
	Query(cmd string) (string, error)
}

// DebuggerFunc adapts a function to Debugger.
type DebuggerFunc func(cmd string) (string, error)

// Query calls f.
func (f DebuggerFunc) Query(cmd string) (string, error) { return f(cmd) }

// Tracer is what the fork backend asks of the debugger that traces the
// program, in that debugger's commands (gdb's: in its personality).
type Tracer = forkcall.Tracer

// ThroughDebugger is implemented by backends that take and restore
// snapshots through the debugger while it holds the program (the fork
// backends). For them Take and Restore have other preconditions than the
// Snapshotter interface states:
//   - Take: the program is stopped in the debugger (no SIGSTOP, no
//     detach); it stays so.
//   - Restore (gdb's Fork): the backend kills the live program through
//     gdb, and returns the new live program attached to gdb, stopped where
//     the snapshot was taken, settled (gdb knows it sits on a breakpoint
//     there). The caller must not kill s.Pid, nor attach or settle again.
//   - Restore (InterpFork): the caller has killed and reaped the live
//     process (not s.Pid); the backend returns the new one at its prompt.
type ThroughDebugger interface {
	ThroughDebugger()
}

// ErrThreaded is wrapped by the error of a fork snapshot of a
// multi-threaded program.
var ErrThreaded = errors.New("the fork backend handles single-threaded programs only")

// ErrNoCopy is wrapped by the errors of a fork snapshot that could not be
// made although the program and gdb are as they were (too many held, no
// agent in the program, fork refused): another backend may take it.
var ErrNoCopy = errors.New("no fork copy")

// ForkOptions configure the fork backend.
type ForkOptions struct {
	Tracer Tracer // the debugger on the program (required)
	// Agent is the built agent library; "" builds it (BuildForkAgent) in
	// the user's cache directory, or in Dir if that fails.
	Agent string
	Dir   string
	// Max is how many snapshots may be held at once (default 64). Each is
	// a process: it costs a process slot (RLIMIT_NPROC) and the memory
	// pages the live program has written since, copy-on-write.
	Max int
	// Timeout bounds waiting for a killed copy to be reaped (default 5 s).
	Timeout time.Duration
}

// Fork is the fork snapshot backend.
type Fork struct {
	opt   ForkOptions
	agent string
	snaps map[int]*forkSnap
	live  int // the copy made live by the last Restore, for reaping
	// deathSig: live asks to die with fred (see BeforeCRIU).
	deathSig bool
	entry    uint64 // fredfork_take's offset in the agent library
	// entryIno is the inode entry was read from.
	entryIno uint64
	unshare  bool // see SetUnshare
	noScan   bool // unshare as without PAGEMAP_SCAN (tests)
}

type forkSnap struct {
	pid     int               // the paused copy
	values  map[string]string // register name -> value (hex), at take
	offsets map[int]int64     // fd -> file offset, for regular files and directories
	cttyFd  int               // fd on the controlling terminal if the program was a session leader, else -1
}

// savedRegs are the registers the copy gets back from gdb. Everything else
// it keeps itself: the agent saves the FPU/vector state with XSAVE before
// any of its code runs and restores it in the copy; segment registers do
// not change across fork. orig_rax goes last (see Restore).
var savedRegs = []string{"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
	"fs_base", "gs_base", "orig_rax"}

// NewFork makes a fork backend. The calling process must be a child
// subreaper (PR_SET_CHILD_SUBREAPER): the copies are its children.
func NewFork(opt ForkOptions) (*Fork, error) {
	if opt.Tracer == nil {
		return nil, errors.New("fork snapshots: no debugger")
	}
	if opt.Max == 0 {
		opt.Max = 64
	}
	if opt.Timeout == 0 {
		opt.Timeout = 5 * time.Second
	}
	var sub int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&sub)), 0, 0, 0); err != nil || sub == 0 {
		return nil, errors.New("fork snapshots: fred must be a child subreaper (PR_SET_CHILD_SUBREAPER) to keep the copies")
	}
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); n >= 2 {
			return nil, fmt.Errorf("fork snapshots: /proc/sys/kernel/yama/ptrace_scope is %d: only root may attach to processes (0 or 1 works)", n)
		}
	}
	f := &Fork{opt: opt, agent: opt.Agent, snaps: map[int]*forkSnap{}}
	if f.agent == "" {
		var err error
		if f.agent, err = BuildForkAgent(""); err != nil && opt.Dir != "" {
			f.agent, err = BuildForkAgent(opt.Dir)
		}
		if err != nil {
			return nil, err
		}
	}
	// The path the kernel shows in /proc/PID/maps: no symlinks, absolute.
	if p, err := filepath.EvalSymlinks(f.agent); err == nil {
		if p, err = filepath.Abs(p); err == nil {
			f.agent = p
		}
	}
	return f, nil
}

// BuildForkAgent compiles the agent library into dir ("" = the user's
// cache directory, fred/) unless a build of the same source is there, and
// returns its path. It needs gcc.
func BuildForkAgent(dir string) (string, error) {
	return cbuild.Shared(forkAgentSource, "fredfork", dir, "fork snapshots: the agent library",
		"-O2", "-mgeneral-regs-only", "-fno-stack-protector")
}

// Name implements Snapshotter.
func (f *Fork) Name() string { return "fork" }

// ThroughDebugger implements ThroughDebugger.
func (f *Fork) ThroughDebugger() {}

// Agent is the path of the agent library.
func (f *Fork) Agent() string { return f.agent }

// SetupCommand is the debugger's command to run once, before the program
// is started, to preload the agent, before old: the program's LD_PRELOAD
// as the debugger has it now. (Take loads it with dlopen otherwise.)
func (f *Fork) SetupCommand(old string) string { return f.opt.Tracer.Preload(f.agent, old) }

// failed names the fork backend in a Tracer's error.
func failed(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("fork snapshots: %w", err)
}

// Take makes a paused copy of program pid, which is stopped in its debugger.
func (f *Fork) Take(pid, id int) (*Snapshot, error) {
	start := time.Now()
	if err := canFork(pid, len(f.snaps), f.opt.Max); err != nil {
		return nil, err
	}
	if err := f.loadAgent(pid); err != nil {
		return nil, err
	}
	values, err := f.opt.Tracer.Registers(savedRegs)
	if err != nil {
		return nil, failed(err)
	}
	tracer := proc.TracerPid(pid)
	if tracer == 0 {
		return nil, fmt.Errorf("fork snapshots: pid %d is not traced by its debugger", pid)
	}
	sn := &forkSnap{values: values, offsets: fileOffsets(pid), cttyFd: cttyFd(pid)}
	if sn.pid, err = f.call(pid, tracer, -1); err != nil {
		return nil, err
	}
	f.snaps[id] = sn
	return &Snapshot{ID: id, Pid: sn.pid, Parent: -1, Took: time.Since(start)}, nil
}

// SetUnshare says whether the live program, after each copy made of it
// (Take) or from it (Restore), gets its own copy of the pages it shares
// with that copy. Sharing makes a copy cheap, but then every first write
// to a page takes a copy-on-write fault, and runs after a snapshot are
// slowed unevenly, more so the more memory the program writes: bad for
// dividing a stretch of history by run time. Unsharing costs a copy of the
// program's resident writable memory per snapshot, in time and in memory.
func (f *Fork) SetUnshare(on bool) { f.unshare = on }

// Unsharing says whether SetUnshare is on (to put it back as it was).
func (f *Fork) Unsharing() bool { return f.unshare }

// call runs the agent in process pid, which the debugger holds, and returns the new
// copy.
func (f *Fork) call(pid, tracer, cttyFd int) (int, error) {
	flags := 0
	if f.unshare {
		flags |= 1 // FREDFORK_UNSHARE
	}
	if f.noScan {
		flags |= 2 // FREDFORK_NO_SCAN
	}
	n, err := f.agentCall(pid, false, tracer, cttyFd, flags)
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		err := fmt.Errorf("fork snapshots: %w: fork in the program failed: %v", ErrNoCopy, syscall.Errno(-n))
		if syscall.Errno(-n) == syscall.EAGAIN {
			err = fmt.Errorf("%w (too many processes for this user? see ulimit -u; drop some snapshots)", err)
		}
		return 0, err
	}
	return n, nil
}

// agentCall calls the agent in process pid (threadsHeld: the other
// threads stay where they are) and returns its answer.
func (f *Fork) agentCall(pid int, threadsHeld bool, tracer, cttyFd, flags int) (int, error) {
	// By address when fred can tell it: gdb's lookup of the name expands
	// symbol tables after every attach (30 ms with libc6-dbg installed).
	fn := "fredfork_take"
	if a, err := f.agentEntry(pid); err == nil {
		fn = "0x" + strconv.FormatUint(a, 16)
	}
	n, err := f.opt.Tracer.Call(fn, [4]int64{int64(os.Getpid()), int64(tracer), int64(cttyFd), int64(flags)}, threadsHeld)
	return int(n), failed(err)
}

// BeforeCRIU readies process pid, which the debugger holds, for a CRIU dump: if it
// is the copy Restore made live, it stops asking the kernel to kill it
// when fred dies (PR_SET_PDEATHSIG, see the agent), which CRIU would
// restore and the kernel carry out as soon as criu, the restored
// process's parent, exits. The keeper still ends it with fred.
func (f *Fork) BeforeCRIU(pid int) error {
	if pid != f.live || !f.deathSig {
		return nil
	}
	// Threads other than the selected one stay where they are.
	n, err := f.agentCall(pid, true, 0, -1, 4) // FREDFORK_OUTLIVE
	if err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("fork snapshots: pid %d: PR_SET_PDEATHSIG: %v", pid, syscall.Errno(-n))
	}
	f.deathSig = false
	return nil
}

// agentEntry is the address of fredfork_take in process pid: where the
// agent library is mapped plus the symbol's offset in the file.
func (f *Fork) agentEntry(pid int) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(f.agent, &st); err != nil {
		return 0, err
	}
	if st.Ino != f.entryIno {
		f.entry, f.entryIno = 0, st.Ino // rebuilt since: read it again
	}
	if f.entry == 0 {
		ef, err := elf.Open(f.agent)
		if err != nil {
			return 0, err
		}
		syms, err := ef.DynamicSymbols()
		ef.Close()
		if err != nil {
			return 0, err
		}
		for _, sym := range syms {
			if sym.Name == "fredfork_take" {
				f.entry = sym.Value
			}
		}
		if f.entry == 0 {
			return 0, errors.New("fork snapshots: no fredfork_take in the agent")
		}
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(maps), "\n") {
		// start-end perms offset dev inode path
		fs := strings.Fields(line)
		if len(fs) == 6 && fs[4] == strconv.FormatUint(st.Ino, 10) && fs[5] == f.agent && fs[2] == "00000000" {
			start, err := strconv.ParseUint(strings.SplitN(fs[0], "-", 2)[0], 16, 64)
			if err != nil {
				return 0, err
			}
			return start + f.entry, nil
		}
	}
	return 0, fmt.Errorf("fork snapshots: %s is not mapped in %d", f.agent, pid)
}

// loadAgent dlopens the agent in the program unless it was preloaded.
func (f *Fork) loadAgent(pid int) error {
	maps := func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
		return strings.Contains(string(b), f.agent)
	}
	if maps() {
		return nil
	}
	if err := f.opt.Tracer.Load(f.agent); err != nil {
		return failed(err)
	}
	if !maps() {
		return fmt.Errorf("fork snapshots: %w: could not load %s into the program (dlopen failed; is it dynamically linked?)", ErrNoCopy, f.agent)
	}
	return nil
}

// Restore kills the live program through the debugger, makes snapshot s's copy the
// live program and leaves a fresh copy as s (so s can be restored again).
func (f *Fork) Restore(s *Snapshot) (int, error) {
	sn, ok := f.snaps[s.ID]
	if !ok {
		return 0, fmt.Errorf("%w: snapshot %d", ErrDropped, s.ID)
	}
	if err := f.opt.Tracer.Kill(); err != nil {
		return 0, failed(err)
	}
	if f.live != 0 {
		f.reap(f.live)
		f.live = 0
	}
	if err := setOffsets(sn.pid, sn.offsets); err != nil {
		return 0, err
	}
	if err := f.opt.Tracer.Attach(sn.pid); err != nil {
		return 0, fmt.Errorf("fork snapshots: the copy: %w", err)
	}
	// A fresh copy stays behind as the snapshot; this one takes the pty.
	next, err := f.call(sn.pid, proc.TracerPid(sn.pid), sn.cttyFd)
	if err != nil {
		return 0, err
	}
	names := savedRegs[:len(savedRegs)-1]
	if err := f.opt.Tracer.SetRegisters(sn.values, names); err != nil {
		return 0, failed(err)
	}
	if err := f.opt.Tracer.Settle(); err != nil {
		return 0, failed(err)
	}
	// jump set orig_rax to -1 (no syscall restart). A program stopped
	// inside a system call gets it back, with rax, so that continuing
	// restarts the call as it would have in the original.
	if sn.values["orig_rax"] != "0xffffffffffffffff" {
		if err := f.opt.Tracer.SetRegisters(sn.values, []string{"rax", "orig_rax"}); err != nil {
			return 0, failed(err)
		}
	}
	f.live, sn.pid, s.Pid = sn.pid, next, next
	f.deathSig = sn.cttyFd >= 0
	return f.live, nil
}

// Drop kills the copy of s.
func (f *Fork) Drop(s *Snapshot) error {
	sn, ok := f.snaps[s.ID]
	if !ok {
		return nil
	}
	delete(f.snaps, s.ID)
	f.reap(sn.pid)
	return nil
}

// Close drops every snapshot, and kills and reaps the live program if it
// is a copy that Restore made (it is this process's child). Call it after
// the debugger is gone: a traced process cannot be reaped before its
// tracer has seen it die.
func (f *Fork) Close() error {
	for id, sn := range f.snaps {
		f.reap(sn.pid)
		delete(f.snaps, id)
	}
	if f.live != 0 {
		f.reap(f.live)
		f.live = 0
	}
	return nil
}

// reap kills pid, a child of this process, and collects it.
func (f *Fork) reap(pid int) { reapChild(pid, f.opt.Timeout) }

// canFork checks that a fork snapshot of pid can be taken with held of max
// already taken: a copy by fork(2) holds only the thread that forked.
func canFork(pid, held, max int) error {
	if held >= max {
		return fmt.Errorf("fork snapshots: %w: %d held already (the most this session keeps); drop some first", ErrNoCopy, held)
	}
	switch n := proc.Threads(pid); {
	case n == 0:
		return fmt.Errorf("fork snapshots: process %d is gone", pid)
	case n > 1:
		return fmt.Errorf("%w: pid %d has %d threads; use --snapshots=criu (as root)", ErrThreaded, pid, n)
	}
	return nil
}

// fileOffsets reads the offsets of pid's regular files and directories.
// The copies share these open file descriptions with the program, so
// Restore sets them back.
func fileOffsets(pid int) map[int]int64 {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	offs := map[int]int64{}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
		if err != nil {
			continue
		}
		if m := regexp.MustCompile(`(?m)^pos:\s*(\d+)`).FindSubmatch(b); m != nil {
			offs[fd], _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
	}
	return offs
}

// setOffsets sets the offsets through copies of the copy's own fds.
func setOffsets(pid int, offs map[int]int64) error {
	if len(offs) == 0 {
		return nil
	}
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("fork snapshots: pidfd_open %d: %w", pid, err)
	}
	defer unix.Close(pfd)
	for fd, off := range offs {
		nfd, err := unix.PidfdGetfd(pfd, fd, 0)
		if err != nil {
			return fmt.Errorf("fork snapshots: pidfd_getfd %d of %d: %w", fd, pid, err)
		}
		_, err = unix.Seek(nfd, off, 0)
		unix.Close(nfd)
		if err != nil {
			return fmt.Errorf("fork snapshots: seeking fd %d of %d: %w", fd, pid, err)
		}
	}
	return nil
}

// cttyFd is the fd of pid's controlling terminal when pid leads its
// session (as a program gdb starts with "set inferior-tty" does), else -1.
func cttyFd(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// state ppid pgrp session tty_nr ...
	if len(f) < 5 || f[3] != strconv.Itoa(pid) || f[4] == "0" {
		return -1
	}
	tty, _ := strconv.ParseUint(f[4], 10, 32)
	major, minor := uint32(tty>>8&0xfff), uint32(tty&0xff|tty>>12&0xfff00)
	for fd := 0; fd < 3; fd++ {
		var st unix.Stat_t
		if unix.Stat(fmt.Sprintf("/proc/%d/fd/%d", pid, fd), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR &&
			unix.Major(st.Rdev) == major && unix.Minor(st.Rdev) == minor {
			return fd
		}
	}
	return -1
}

func lastLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
