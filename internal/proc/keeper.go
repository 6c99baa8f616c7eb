package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Nothing of a session outlives fred, however fred ends: a kill -9, the
// out-of-memory killer, a crash. Each process the session creates dies
// with fred by its own means where the kernel offers one:
//
//   - the debugger when it is a process of its own (gdb): PR_SET_PDEATHSIG
//     (StartPTY: SIGHUP, on which gdb quits), and gdb kills the program it started when it dies
//     (gdb sets PTRACE_O_EXITKILL on the programs it runs);
//   - a paused fork copy of a program under gdb: it looks every second
//     whether fred is still its parent (ckpt/forkagent/agent.c);
//   - a paused copy of pdb's or perl's interpreter: it waits reading a FIFO
//     whose only writer is fred, and sees end-of-file when fred is gone
//     (ckpt/interpfork.go).
//
// What has no such means is a program the debugger did not start: one a
// restore made live (a fork copy, or a process CRIU restored), which the
// debugger attached to and which only lets go of it when the debugger
// dies; and pdb's and perl's interpreter, which PR_SET_PDEATHSIG would
// follow into a CRIU image (CRIU restores the signal, and the restored
// process gets it the moment criu exits). The pty's hang-up when fred's
// end closes sends them SIGHUP, which a program may ignore. So every
// session also has a keeper: a small process (this binary again, run by
// StartKeeper) that fred tells about each process of the session, and that
// kills them all when fred is gone. It learns that fred is gone when the
// pipe only fred writes to reaches its end, which the kernel does for
// any end of fred. It holds a pidfd for each process, so that it never
// kills another process that got a recycled pid. It runs in a session of
// its own (a kill of fred's process group or a hang-up of its terminal
// does not take it along), removes the session directory when fred
// could not, and exits.

// keeperEnv, set in the environment of this binary run again, makes it the
// keeper instead of what it is (fred, or a test binary).
const keeperEnv = "FRED_KEEPER_OF"

func init() {
	if v := os.Getenv(keeperEnv); v != "" {
		os.Exit(keeperMain(os.Stdin))
	}
}

// Keeper is the session's keeper process, as fred sees it.
type Keeper struct {
	mu  sync.Mutex
	w   *os.File // the pipe's write end: fred's alone (close-on-exec)
	cmd *exec.Cmd
}

// StartKeeper starts the keeper. A session without one (the binary cannot
// be run again) still ends its processes when it ends normally.
func StartKeeper() (*Keeper, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("keeper: %w", err)
	}
	defer r.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("keeper: %w", err)
	}
	defer null.Close()
	// /proc/self/exe: this very binary, even if its file was replaced
	// since.
	cmd := &exec.Cmd{
		Path:   "/proc/self/exe",
		Args:   []string{"fred-keeper"},
		Env:    []string{keeperEnv + "=" + strconv.Itoa(os.Getpid())},
		Stdin:  r,
		Stdout: null,
		Stderr: null,
		Dir:    "/",
		// Its own session: no terminal, and not in fred's process group.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("keeper: %w", err)
	}
	return &Keeper{w: w, cmd: cmd}, nil
}

// Pid is the keeper's pid.
func (k *Keeper) Pid() int {
	if k == nil {
		return 0
	}
	return k.cmd.Process.Pid
}

// Watch tells the keeper about processes of the session: it kills those
// still there when fred is gone. A pid already gone is left out.
func (k *Keeper) Watch(pids ...int) {
	if k == nil {
		return
	}
	var b strings.Builder
	for _, pid := range pids {
		if pid <= 0 || pid == os.Getpid() {
			continue
		}
		if st := StartTime(pid); st != 0 {
			fmt.Fprintf(&b, "pid %d %d\n", pid, st)
		}
	}
	k.send(b.String())
}

// RemoveDir tells the keeper to remove session directory dir (see
// LockSessionDir) when fred is gone and could not.
func (k *Keeper) RemoveDir(dir string) {
	if k == nil || strings.Contains(dir, "\n") {
		return
	}
	k.send("dir " + dir + "\n")
}

func (k *Keeper) send(s string) {
	if s == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.w != nil {
		_, _ = k.w.WriteString(s) // a keeper that died cannot be helped
	}
}

// Close ends the keeper once fred has ended the session itself: what is
// still there of it goes too. It waits for the keeper to exit.
func (k *Keeper) Close() {
	if k == nil {
		return
	}
	k.mu.Lock()
	if k.w != nil {
		k.w.Close()
		k.w = nil
	}
	k.mu.Unlock()
	done := make(chan struct{})
	go func() { _ = k.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = k.cmd.Process.Kill()
		<-done
	}
}

// StartTime is the time process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat); 0 if it is gone.
func StartTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, starttime field 22.
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(f[19], 10, 64)
	return n
}

// keeperMain is the keeper: it reads what fred tells it until fred is
// gone, then kills the session's processes and removes its directory.
func keeperMain(in *os.File) int {
	// Only the end of fred's pipe ends the keeper: fred ends it that way
	// on every path it controls.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	pidfds := map[int]int{}
	var dirs []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pid "):
			var pid int
			var start uint64
			if _, err := fmt.Sscan(line[4:], &pid, &start); err != nil || pid <= 0 {
				continue
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue
			}
			// The pidfd names the process that has pid now: the one fred
			// meant only if it started when fred read it did.
			if StartTime(pid) != start {
				unix.Close(fd)
				continue
			}
			if old, ok := pidfds[pid]; ok {
				unix.Close(old)
			}
			pidfds[pid] = fd
			if len(pidfds) >= 128 {
				prune(pidfds)
			}
		case strings.HasPrefix(line, "dir "):
			dirs = append(dirs, line[4:])
		}
	}
	for _, fd := range pidfds {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
	for _, d := range dirs {
		RemoveSessionDir(d)
	}
	return 0
}

// prune forgets the processes that have exited (their pidfd is readable).
func prune(pidfds map[int]int) {
	for pid, fd := range pidfds {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(p, 0); err == nil && n > 0 {
			unix.Close(fd)
			delete(pidfds, pid)
		}
	}
}
