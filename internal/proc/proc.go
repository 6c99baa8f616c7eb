// Package proc is the one place where fred starts processes and owns ptys.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ExitError says which command failed, how, and what it wrote on stderr.
type ExitError struct {
	Cmd    string
	Code   int
	Stderr string
	Err    error
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("%s: exit %d: %s", e.Cmd, e.Code, msg)
}

func (e *ExitError) Unwrap() error { return e.Err }

// Run runs a command to completion and returns its standard output.
func Run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		code := -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		return out.String(), &ExitError{Cmd: strings.Join(append([]string{name}, args...), " "), Code: code, Stderr: errb.String(), Err: err}
	}
	return out.String(), nil
}

// PTYProcess is a process whose controlling terminal is a pty fred holds.
type PTYProcess struct {
	Cmd    *exec.Cmd
	Master *os.File
	// Slave stays open in fred so the pty survives the process's children
	// (snapshots hand it back to restored programs).
	Slave *os.File

	waitOnce sync.Once
	done     chan struct{}
	waitErr  error
}

// Status is how the process ended, once Done is closed (ok false before).
func (p *PTYProcess) Status() (ws syscall.WaitStatus, ok bool) {
	select {
	case <-p.done:
	default:
		return 0, false
	}
	if st := p.Cmd.ProcessState; st != nil {
		ws, ok = st.Sys().(syscall.WaitStatus)
	}
	return ws, ok
}

// OpenPTY opens a fresh pty.
func OpenPTY() (master, slave *os.File, err error) {
	master, slave, err = pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	return master, slave, nil
}

// StartPTY starts argv in a new session on the pty, of the given size. With
// ctty the pty becomes the session's controlling terminal. With
// dieWithFred the kernel hangs the process up when fred is gone
// (PR_SET_PDEATHSIG): only for a process that CRIU never dumps, since
// CRIU would restore that signal too, and its restored process would get
// it when criu exits (see keeper.go). SIGHUP, not SIGKILL: gdb quits on
// it the way it does on its terminal's hang-up, killing the programs it
// traces first; a SIGKILL racing the hang-up left a program it had
// attached to running, untraced.
func StartPTY(argv, env []string, master, slave *os.File, size *pty.Winsize, ctty, dieWithFred bool) (*PTYProcess, error) {
	if size != nil {
		_ = pty.Setsize(master, size)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: ctty, Ctty: 0}
	var err error
	if dieWithFred {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGHUP
		onLastingThread(func() { err = cmd.Start() })
	} else {
		err = cmd.Start()
	}
	if err != nil {
		master.Close()
		slave.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &PTYProcess{Cmd: cmd, Master: master, Slave: slave, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// The kernel sends a child its PR_SET_PDEATHSIG signal when the *thread*
// that forked it exits, not the process. Go ends an OS thread when a
// goroutine that locked it returns without unlocking (fred does that to
// time runs at real-time priority, native.go), and any thread may have
// run a fork before. So processes with that signal are started from one
// thread that is locked for good and never runs anything else.
var lasting struct {
	once sync.Once
	jobs chan func()
}

// onLastingThread runs f on an OS thread that lives as long as fred.
func onLastingThread(f func()) {
	lasting.once.Do(func() {
		lasting.jobs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread never exits
			for job := range lasting.jobs {
				job()
			}
		}()
	})
	done := make(chan struct{})
	lasting.jobs <- func() { defer close(done); f() }
	<-done
}

// Done is closed when the process has exited and been reaped.
func (p *PTYProcess) Done() <-chan struct{} { return p.done }

// Stop ends the process: SIGTERM to its session's process group, then
// SIGKILL after grace, and always reaps it.
func (p *PTYProcess) Stop(grace time.Duration) error {
	pid := p.Cmd.Process.Pid
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-pid, syscall.SIGHUP)
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
		}
	}
	p.Master.Close()
	p.Slave.Close()
	return p.waitErr
}

// statFields is /proc/PATH/stat after the command name: state ppid pgrp
// session tty_nr ... (nil if it cannot be read). The name may hold spaces
// and parentheses, hence the last ')'.
func statFields(path string) []string {
	b, err := os.ReadFile("/proc/" + path + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

// statusField is the value of KEY in /proc/PATH/status ("" if none).
func statusField(path, key string) string { return field(path+"/status", key) }

// KBytes is a "KEY: N kB" figure of /proc/FILE in bytes ("meminfo",
// "MemTotal"; "self/status", "VmHWM"); 0 if there is none.
func KBytes(file, key string) uint64 {
	kb, err := strconv.ParseUint(strings.TrimSuffix(field(file, key), " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// field is the value of KEY in /proc/FILE, a file of "KEY: VALUE" lines
// ("" if none).
func field(file, key string) string {
	b, err := os.ReadFile("/proc/" + file)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// eachProcess calls f with every process's pid and stat fields.
func eachProcess(f func(pid int, fields []string)) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if fl := statFields(e.Name()); fl != nil {
				f(pid, fl)
			}
		}
	}
}

// State is process pid's state letter (R, S, t, T, Z...), 0 if it is gone.
func State(pid int) byte {
	if f := statFields(strconv.Itoa(pid)); len(f) > 0 && f[0] != "" {
		return f[0][0]
	}
	return 0
}

// Parent is pid's parent process (0 if unknown).
func Parent(pid int) int {
	if f := statFields(strconv.Itoa(pid)); len(f) > 1 {
		n, _ := strconv.Atoi(f[1])
		return n
	}
	return 0
}

// Alive reports whether pid exists, is not a zombie and is not about to
// be one (a SIGKILL pending: on a loaded machine the killed process may
// wait a while for the CPU that ends it).
func Alive(pid int) bool {
	st := State(pid)
	return st != 0 && st != 'Z' && st != 'X' && !Killed(pid)
}

// Killed reports whether a SIGKILL is pending for pid.
func Killed(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	const sigkill = 1 << (9 - 1)
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k != "SigPnd" && k != "ShdPnd" {
			continue
		}
		if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&sigkill != 0 {
			return true
		}
	}
	return false
}

// Stopped reports whether every thread of pid is stopped (by a tracer
// or a signal): a debugger has it.
func Stopped(pid int) bool {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, t := range tasks {
		f := statFields(strconv.Itoa(pid) + "/task/" + t.Name())
		if f == nil {
			continue // it ended meanwhile
		}
		switch f[0] {
		case "t", "T", "Z", "X": // (a thread that ended does not run)
		default:
			return false
		}
	}
	return true
}

// TracerPid is the debugger (tracer) that holds process pid, 0 if none.
func TracerPid(pid int) int {
	n, _ := strconv.Atoi(statusField(strconv.Itoa(pid), "TracerPid"))
	return n
}

// TracedBy is the one process (a thread group) that tracer traces, 0 if
// none or several.
func TracedBy(tracer int) int {
	found := 0
	eachProcess(func(pid int, _ []string) {
		if found >= 0 && TracerPid(pid) == tracer {
			if found > 0 {
				found = -1
				return
			}
			found = pid
		}
	})
	return max(found, 0)
}

// OnlyChild is the one child process of ppid (0 if it has none or
// several).
func OnlyChild(ppid int) int {
	found, n := 0, 0
	eachProcess(func(pid int, f []string) {
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			found, n = pid, n+1
		}
	})
	if n != 1 {
		return 0
	}
	return found
}

// Blocks reports whether thread tid of pid blocks signal sig (a server's
// threads block SIGINT and take it in a signal thread of their own).
func Blocks(pid, tid int, sig syscall.Signal) bool {
	mask, err := strconv.ParseUint(statusField(fmt.Sprintf("%d/task/%d", pid, tid), "SigBlk"), 16, 64)
	return err == nil && mask&(1<<(uint(sig)-1)) != 0
}

// KillSession sends SIGKILL to every process left in session sid (a
// debugger's session holds its program even when the debugger is gone).
func KillSession(sid int) {
	killWhere(func(f []string) bool { return len(f) > 3 && f[3] == strconv.Itoa(sid) })
}

// KillTTY sends SIGKILL to every process whose controlling terminal is tty.
func KillTTY(tty *os.File) {
	var st syscall.Stat_t
	if tty == nil || syscall.Fstat(int(tty.Fd()), &st) != nil {
		return
	}
	rdev := strconv.FormatUint(uint64(st.Rdev), 10)
	killWhere(func(f []string) bool { return len(f) > 4 && f[4] == rdev })
}

// killWhere sends SIGKILL to every other process whose /proc/PID/stat
// fields after the command name (state ppid pgrp session tty_nr ...)
// match.
func killWhere(match func(fields []string) bool) {
	eachProcess(func(pid int, f []string) {
		if pid != os.Getpid() && match(f) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// BecomeSubreaper makes fred the parent of orphaned descendants, so that a
// program CRIU restores (or one whose debugger died) is fred's to reap.
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Reap waits up to timeout for pid, a child or adopted orphan, to exit and
// collects it. It returns true when pid is gone.
func Reap(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if got == pid || err == unix.ECHILD {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// WaitGone waits up to timeout until pid no longer exists at all (not
// even as a zombie) and reports whether it is gone.
func WaitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Resident is process pid's resident memory in bytes (0 if unknown).
func Resident(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * int64(os.Getpagesize())
}

// Threads is how many threads process pid has (0 if it is gone).
func Threads(pid int) int {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return 0
	}
	return len(tasks)
}

// Children are the live and dead children of process pid (any thread's).
func Children(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids
}
