package fred

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/conn"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
	"golang.org/x/sys/unix"
)

// In-process debuggers (pdb, perl -d) live inside the program's process:
// the process on the other end of the pty is the debugger and the program
// at once. A snapshot holds the debugger too, and restoring one replaces
// the process fred talks to: fred kills it, CRIU brings back the snapshot's
// process (same pid, on the same pty, reparented to fred as subreaper), and
// fred takes that as the debugger. The host for that is here (host.go
// has the other).

// inProcess is the host of a debugger inside the program; it tracks which
// process is the debugger now.
type inProcess struct {
	s   *Session
	mu  sync.Mutex
	gen int // the exit of the watch with this number ends the session
	pid int
	// typedIn: the person typed to the program during the command.
	typedIn bool
	exited  chan struct{} // closed when the debugger exits by itself
	once    sync.Once
	// status is how the debugger's current process ended (ok false: not
	// known).
	status func() (syscall.WaitStatus, bool)
}

// newInProcess tracks the debugger's first process; call before the conn
// is made.
func newInProcess(s *Session) *inProcess {
	ip := &inProcess{s: s, exited: make(chan struct{})}
	ip.watch(s.proc.Cmd.Process.Pid, s.proc.Done(), s.proc.Status)
	return ip
}

func (ip *inProcess) done() <-chan struct{} { return ip.exited }

func (ip *inProcess) process() (int, func() (syscall.WaitStatus, bool), string) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	return ip.pid, ip.status, ip.s.p.Name + " and the program"
}

// reap: the program is the debugger's own process, fred's child.
func (ip *inProcess) reap(int) {}

// watch makes pid, which has exited when exited is closed (as status
// tells), the debugger.
func (ip *inProcess) watch(pid int, exited <-chan struct{}, status func() (syscall.WaitStatus, bool)) {
	ip.mu.Lock()
	ip.gen++
	g := ip.gen
	ip.pid = pid
	ip.status = status
	ip.mu.Unlock()
	go func() {
		<-exited
		ip.mu.Lock()
		mine := ip.gen == g
		ip.mu.Unlock()
		if mine {
			ip.end()
		}
	}()
}

// letGo says the current process's exit is fred's doing.
func (ip *inProcess) letGo() int {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	ip.gen++
	ip.status = nil // its end is fred's doing, not news
	return ip.pid
}

func (ip *inProcess) end() { ip.once.Do(func() { close(ip.exited) }) }

// waitExit reaps pid, a process CRIU restored and fred adopted, when it
// exits (or sees it gone, if someone else reaped it); status says how it
// ended once the channel is closed.
func waitExit(pid int) (ended <-chan struct{}, status func() (syscall.WaitStatus, bool)) {
	ch := make(chan struct{})
	var ws unix.WaitStatus
	known := false
	status = func() (syscall.WaitStatus, bool) {
		select {
		case <-ch:
			return syscall.WaitStatus(ws), known
		default:
			return 0, false
		}
	}
	go func() {
		defer close(ch)
		for {
			_, err := unix.Wait4(pid, &ws, 0, nil)
			if err == unix.EINTR {
				continue
			}
			if err == nil {
				known = true
				return
			}
			break
		}
		// Not (or no longer) fred's child: watch /proc.
		for proc.Alive(pid) {
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return ch, status
}

// typed notes that the person typed to the running program (Ctrl-C
// aside).
func (ip *inProcess) typed(b []byte) {
	if len(b) == 0 {
		return
	}
	if c, ok := ip.s.interruptChar(); !(len(b) == 1 && ok && b[0] == c) {
		ip.mu.Lock()
		ip.typedIn = true
		ip.mu.Unlock()
	}
}

// afterInput takes a snapshot after a command during which the program
// read what the person typed, when there is no replay log to give it that
// input again: later replays start after it. With the log, the program's
// reads of the terminal are in it (the bootstrap tells the library when
// the person talks to the debugger instead) and replays need nobody.
func (ip *inProcess) afterInput() {
	s := ip.s
	ip.mu.Lock()
	typed := ip.typedIn
	ip.typedIn = false
	ip.mu.Unlock()
	if s.rlog != nil && s.rlog.path != "" {
		return
	}
	if !typed || s.snap == nil || !s.running {
		return
	}
	if m := s.Timeline.Marks(); len(m) > 0 && m[len(m)-1].Index == s.Timeline.Len() {
		return
	}
	sn, err := s.Checkpoint(true)
	if err != nil {
		s.Printf("could not take a snapshot: %v", err)
		return
	}
	s.Printf("snapshot %d taken after the program read input (%.3f s): going back into that command would need the same input again", sn.ID, sn.Took.Seconds())
}

// started sets up the program, which is loaded and stopped at its first
// line when the debugger first prompts: fred takes its first snapshot
// there.
func (ip *inProcess) started() {
	s := ip.s
	loc, err := s.location()
	if err != nil {
		return
	}
	d, _ := s.depth()
	s.Timeline.SetStart(history.Step{At: loc, Depth: d})
	s.run++ // the program's first run, as gdb's "run" starts one
	s.running = true
	s.pid, _ = s.Pid()
	s.keeper.Watch(s.pid)
	s.refreshBreakpoints()
	s.maybeAutoSnapshot()
}

// newRun: an in-process debugger restarts the program by itself once it
// has ended (pdb does), so the next command moves a new run.
func (ip *inProcess) newRun() bool {
	s := ip.s
	return !s.running && s.Timeline.Len() > 0 && s.Timeline.Now().Ended
}

// stopOf says why a forward command stopped: from its output, or by
// asking the debugger when its output does not say.
func (s *Session) stopOf(out string) P.Stop {
	st := s.p.StopReason(out)
	if st != P.StopDone || s.p.StopCmd == "" || s.p.ParseStop == nil {
		return st
	}
	if o, err := s.query(s.p.StopCmd); err == nil {
		return s.p.ParseStop(o)
	}
	return st
}

// classify is Classify for the commands fred makes up: "next 5" keeps its
// count even for a debugger whose own next takes none (sendStep then
// sends five).
func (s *Session) classify(line string) P.Command {
	c := s.p.Classify(line)
	if s.p.NoCountArg && (c.Op == P.OpNext || c.Op == P.OpStep) {
		if n, err := strconv.Atoi(c.Args); err == nil && n > 1 {
			c.Count, c.Args = n, ""
		}
	}
	return c
}

// sendStep runs a recorded command again: "next 5" as five "next"s for a
// debugger whose next takes no count.
func (s *Session) sendStep(c P.Command, timeout time.Duration) (string, error) {
	if !s.p.NoCountArg || c.Count <= 1 {
		return s.queryFor(s.p.Quiet(c.Line), timeout)
	}
	if s.canCountSteps() && c.Op == P.OpStep {
		// Counted in the program: one round trip for millions.
		out, err := s.queryFor(s.p.Stepper.Steps(c.Count, P.StepsMode{}), timeout)
		if err == nil {
			_, err = P.ParseNexts(out)
		}
		return out, err
	}
	if s.p.Stepper != nil && c.Op == P.OpNext {
		// The debugger counts them itself: one round trip, or a few when
		// it stops early at a line where it has work of its own (an
		// action, a breakpoint whose condition is false).
		var all strings.Builder
		for done := 0; done < c.Count; {
			out, err := s.queryFor(s.p.Stepper.Nexts(c.Count-done, P.NextsMode{}), timeout)
			all.WriteString(out)
			if err != nil {
				return all.String(), err
			}
			r, err := P.ParseNexts(out)
			if err != nil || r.Why != "limit" || r.N == 0 {
				return all.String(), err
			}
			done += r.N
		}
		return all.String(), nil
	}
	var all strings.Builder
	for i := 0; i < c.Count; i++ {
		out, err := s.queryFor(s.p.Quiet(c.Op), timeout)
		all.WriteString(out)
		if err != nil || s.p.StopReason(out) == P.StopEnded {
			return all.String(), err
		}
	}
	return all.String(), nil
}

// take dumps the program as snapshot id: its process is stopped for the
// dump and let go on after it; the debugger waits at its prompt
// throughout.
func (ip *inProcess) take(via ckpt.Snapshotter, pid, id, _ int) (*ckpt.Snapshot, error) {
	s := ip.s
	if _, through := via.(ckpt.ThroughDebugger); through {
		return via.Take(pid, id)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("stopping the program (pid %d): %w", pid, err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	if err := ckpt.WaitStopped(pid, s.opt.Timeout); err != nil {
		return nil, err
	}
	return via.Take(pid, id)
}

// restore keeps the debugger's settings, kills the process, restores the
// snapshot's, and talks to that one from now on.
func (ip *inProcess) restore(sn *snap) error {
	s := ip.s
	state := ""
	if s.p.SaveState != "" && s.dir != "" {
		state = filepath.Join(s.dir, "debugger-state")
		if _, err := s.query(fmt.Sprintf(s.p.SaveState, state)); err != nil {
			var te *conn.TimeoutError
			if errors.Is(err, ErrSessionOver) || errors.As(err, &te) {
				// Without the person's breakpoints the restored
				// program would replay to other stops.
				return err
			}
			state = ""
		}
	}
	old := ip.letGo()
	pids := []int{old, sn.Pid} // CRIU restores the snapshot's pid
	if _, through := sn.via.(ckpt.ThroughDebugger); through {
		pids = pids[:1] // sn.Pid is the fork backend's waiting copy
	}
	for _, pid := range pids {
		if err := s.freePid(pid, sn.ID); err != nil {
			ip.end()
			return err
		}
	}
	s.running, s.pid = false, 0
	got, err := s.restoreImage(sn)
	if err != nil {
		// The debugger went with its process: the session is over.
		ip.end()
		return fmt.Errorf("%w; the debugger's process is gone, so the session ends", err)
	}
	s.adopted[got] = true
	s.keeper.Watch(got, sn.Pid) // for the fork backend, sn.Pid is the fresh copy
	ended, status := waitExit(got)
	ip.watch(got, ended, status)
	// The restored process is stopped at the debugger's prompt, which it
	// printed before the dump: it reads the next command once it goes on.
	if err := syscall.Kill(got, syscall.SIGCONT); err != nil {
		return err
	}
	if state != "" {
		if _, err := s.query(fmt.Sprintf(s.p.LoadState, state)); err != nil {
			return err
		}
	}
	s.running, s.pid = true, got
	return nil
}
