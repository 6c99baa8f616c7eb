package fred

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	P "github.com/fred-debugger/fred/personalities"
	"golang.org/x/sys/unix"
)

// Multi-threaded programs. The history is the current thread's commands;
// when reverse-watch finds the statement of that history during which the
// expression changed, another thread may have made the change while it
// ran. The FReD paper's answer (section 3.3) is a round-robin search with
// scheduler locking: from the moment before that statement, run one
// statement of one thread at a time, in turn, until the expression
// changes; that thread made the change. Every thread takes turns, those
// standing in a wait or in library code too (a statement of theirs runs
// out to the program's own code). A thread that cannot move while the
// others are held (it waits for a lock one of them holds) is seen by where
// it is stopped: the kernel has it asleep in a wait (a futex), and gdb,
// once it is interrupted, in a blocking call.

// roundRobinMax bounds the statements the round-robin search runs.
var roundRobinMax = 5000

// Deadlines for the round-robin. A thread is run with the others held; one
// that sleeps in a wait (a futex, a read) for rrBlockedAfter can only be
// waiting for a held thread, and one still running after rrStep waits for
// one some other way (a spin): either is interrupted, and the search
// gives it a turn later. rrTotal bounds the whole search.
const (
	rrStep         = 2 * time.Second
	rrBlockedAfter = 100 * time.Millisecond
	rrPoll         = 5 * time.Millisecond
	rrGrace        = 3 * time.Second // for an interrupted thread to stop
	rrTotal        = 3 * time.Minute
	// rrSnapEvery statements a snapshot: going back after a thread
	// blocked replays at most that many.
	rrSnapEvery = 100
)

// ErrNoThread means the round-robin search did not find the thread.
var ErrNoThread = errors.New("no thread's statement changes the expression")

// threads lists the program's threads.
func (s *Session) threads() ([]P.ThreadInfo, error) {
	out, err := s.query(s.p.Threads.List)
	if err != nil {
		return nil, err
	}
	ts := P.ParseThreads(out)
	if len(ts) == 0 {
		return nil, fmt.Errorf("cannot list the threads: %s", lastLine(out))
	}
	return ts, nil
}

// threadStep is a step the round-robin search made: select a thread (by
// its kernel id), or run a statement of the selected one alone.
func (s *Session) threadStep(line, op string) Step {
	return Step{Cmd: P.Command{Line: line, Kind: P.Mutate, Op: op, Count: 1}, Synth: true}
}

// whichThread runs the round-robin search from the live moment (the
// expression has the value before there) and leaves the program just
// before the statement that changes it, in the thread that runs it. It
// returns that thread and the history that reaches that moment.
func (s *Session) whichThread(ctx context.Context, w *watchProgram, before string) (P.ThreadInfo, error) {
	th := s.p.Threads
	ts, err := s.threads()
	if err != nil || len(ts) < 2 {
		return P.ThreadInfo{}, err
	}
	cur, err := s.query(th.Current)
	if err != nil {
		return P.ThreadInfo{}, err
	}
	var start P.ThreadInfo
	if c := P.ParseThreads(cur); len(c) == 1 {
		start = c[0]
	}
	// The current thread goes first: in a single-threaded stretch it is
	// the one.
	order := []int{start.LWP}
	for _, t := range ts {
		if t.LWP != start.LWP {
			order = append(order, t.LWP)
		}
	}
	// Where the other threads stand here depends on how they ran while
	// this one was replayed: a snapshot fixes it, so that going back to a
	// moment of the search replays only statements run one thread at a
	// time, which come out the same every time.
	if _, err := s.Checkpoint(true); err != nil {
		return P.ThreadInfo{}, err
	}
	w.st.snapshots++
	steps := append([]Step(nil), s.Timeline.Steps...)
	snapAt := len(steps)
	giveUp := time.Now().Add(rrTotal)
	selected := start.LWP
	gone, blocked := map[int]bool{}, map[int]bool{}
	waits, spins := 0, 0 // threads found blocked, for the message when none is found
	retried := false
	for n := 0; n < roundRobinMax; {
		// Threads the last round created take their turns too.
		ts, err := s.threads()
		if err != nil {
			return P.ThreadInfo{}, err
		}
		born := false
		for _, t := range ts {
			if !slices.Contains(order, t.LWP) {
				order = append(order, t.LWP)
				born = true
			}
		}
		if born && len(steps) > snapAt {
			// A thread created after a snapshot has another kernel id
			// each time the statement that creates it is replayed, and
			// the search selects threads by their ids: one taken now
			// keeps this one's.
			if _, err := s.Checkpoint(true); err != nil {
				return P.ThreadInfo{}, err
			}
			w.st.snapshots++
			snapAt = len(steps)
		}
		moved := false
		for _, lwp := range order {
			if gone[lwp] || blocked[lwp] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return P.ThreadInfo{}, err
			}
			if time.Now().After(giveUp) {
				return P.ThreadInfo{}, fmt.Errorf("%w within %v (%d statements run; threads stopped %d times in a wait, %d times running on)", ErrNoThread, rrTotal, n, waits, spins)
			}
			sel := s.threadStep(fmt.Sprintf(th.Select, lwp), "thread")
			if lwp != selected {
				if _, err := s.query(sel.Cmd.Line); err != nil {
					return P.ThreadInfo{}, err
				}
			}
			now, err := s.query(th.Current)
			if err != nil {
				return P.ThreadInfo{}, err
			}
			here := P.ParseThreads(now)
			if len(here) != 1 || here[0].LWP != lwp {
				gone[lwp] = true // it has exited
				continue
			}
			if lwp != selected {
				// Recorded even if the thread does not run: gdb has it
				// selected from now on.
				steps, selected = with(steps, sel), lwp
				s.Timeline.Steps = steps
			}
			if len(steps)-snapAt >= rrSnapEvery {
				if _, err := s.Checkpoint(true); err != nil {
					return P.ThreadInfo{}, err
				}
				w.st.snapshots++
				snapAt = len(steps)
			}
			// Threads in a wait or in library code run too: the thread
			// that makes the change may stand in one (a semaphore wait
			// that another thread's statement has just ended).
			st := s.threadStep(fmt.Sprintf(th.Locked, th.Step, rrStep.Seconds()), P.OpStep)
			out, stuck, err := s.lockedRun(th.Step, lwp, rrStep)
			if err != nil {
				return P.ThreadInfo{}, err
			}
			if stuck {
				// It waits for a thread that is held. Where it stands now
				// (inside the wait) is no moment a replay reaches: go back
				// to the last one, and leave this thread until the others
				// have moved.
				blocked[lwp] = true
				if s.running {
					// Where it stopped says why: in a wait (the kernel
					// saw it sleep there), or anywhere after the
					// deadline (a spin).
					if c, err := s.query(th.Current); err == nil {
						if here := P.ParseThreads(c); len(here) == 1 && here[0].Waiting {
							waits++
						} else {
							spins++
						}
					}
				}
				s.Timeline.Steps = with(steps, s.threadStep("(interrupted)", "interrupted"))
				if err := s.goTo(steps, w.st); err != nil {
					return P.ThreadInfo{}, err
				}
				selected = s.currentLWP(selected)
				continue
			}
			n++
			moved = true
			steps = with(steps, st)
			s.Timeline.Steps = steps
			if th.Exited != "" && strings.Contains(out, th.Exited) {
				gone[lwp] = true
				selected = s.currentLWP(0)
			}
			if s.p.Ended(out) {
				return P.ThreadInfo{}, errors.New("the program ended during the search for the thread")
			}
			v, err := w.evalHere()
			if err != nil {
				return P.ThreadInfo{}, err
			}
			if v != before {
				// This statement of this thread made the change: go back
				// to just before it.
				if err := s.goTo(steps[:len(steps)-1], w.st); err != nil {
					return P.ThreadInfo{}, err
				}
				now, err := s.query(th.Current)
				if err != nil {
					return P.ThreadInfo{}, err
				}
				if c := P.ParseThreads(now); len(c) == 1 {
					return c[0], nil
				}
				return P.ThreadInfo{}, fmt.Errorf("cannot tell which thread is selected: %s", lastLine(now))
			}
		}
		switch {
		case moved:
			retried = false
		case len(blocked) == 0 || retried:
			return P.ThreadInfo{}, fmt.Errorf("%w: every thread waits for another (stopped %d times in a wait, %d times running on)", ErrNoThread, waits, spins)
		default:
			// Every thread that could move has; the blocked ones may
			// move now.
			blocked, retried = map[int]bool{}, true
		}
	}
	return P.ThreadInfo{}, fmt.Errorf("%w in %d statements", ErrNoThread, roundRobinMax)
}

// threadHere names the selected thread of a program that has several
// ("" otherwise, or if the debugger cannot say).
func (s *Session) threadHere() string {
	if s.p.Threads == nil || !s.running {
		return ""
	}
	if ts, err := s.threads(); err != nil || len(ts) < 2 {
		return ""
	}
	out, err := s.query(s.p.Threads.Current)
	if c := P.ParseThreads(out); err == nil && len(c) == 1 {
		return c[0].String()
	}
	return ""
}

// currentLWP is the selected thread's kernel id (or def if unknown).
func (s *Session) currentLWP(def int) int {
	out, err := s.query(s.p.Threads.Current)
	if c := P.ParseThreads(out); err == nil && len(c) == 1 {
		return c[0].LWP
	}
	return def
}

// lockedRun runs cmd in thread lwp with the other threads held. A thread
// that sleeps in a wait meanwhile waits for one of them (nothing else
// runs that could wake it), and one still running after limit waits for
// one some other way: either is stopped by a SIGINT (which gdb keeps from
// the program) and reported blocked. If gdb still does not come back, the
// program is killed, and the caller goes back to a snapshot, which holds
// everything.
func (s *Session) lockedRun(cmd string, lwp int, limit time.Duration) (string, bool, error) {
	pid := s.pid
	done, kicked := make(chan struct{}), make(chan bool, 1)
	go func() { kicked <- interruptWhenBlocked(pid, lwp, limit, done) }()
	out, err := s.queryFor(fmt.Sprintf(s.p.Threads.Locked, cmd, 0.0), limit+rrGrace)
	close(done)
	// An interrupt that came as the command ended is pending in the
	// thread: the moment is spoilt either way.
	stuck := <-kicked
	var te *TimeoutError
	if errors.As(err, &te) {
		_ = unix.Kill(pid, unix.SIGKILL)
		more, err := s.conn.waitPrompt("", time.Now().Add(s.opt.Timeout), nil, false, nil, nil)
		s.running = false
		return out + more, true, err
	}
	return out, err == nil && (stuck || s.p.Threads.Blocked.MatchString(out)), err
}

// interruptWhenBlocked watches thread lwp of pid (as the kernel sees it)
// until done closes, and interrupts it once it has slept in a wait for
// rrBlockedAfter, or runs on after limit. It reports whether it did.
func interruptWhenBlocked(pid, lwp int, limit time.Duration, done <-chan struct{}) bool {
	tick := time.NewTicker(rrPoll)
	defer tick.Stop()
	end := time.Now().Add(limit)
	var since time.Time // when the current sleep in a wait was first seen
	for {
		select {
		case <-done:
			return false
		case now := <-tick.C:
			state, call := threadState(pid, lwp)
			if state == 'S' && waitCalls[call] {
				if since.IsZero() {
					since = now
				}
			} else {
				since = time.Time{}
			}
			// A thread gdb has stopped ('t') is between two of its
			// steps, or done: not one to interrupt.
			if !since.IsZero() && now.Sub(since) >= rrBlockedAfter || now.After(end) && state != 't' && state != 0 {
				_ = unix.Tgkill(pid, lwp, unix.SIGINT)
				return true
			}
		}
	}
}

// threadState is a thread's state letter (0 if it is gone) and the system
// call it is in (-1 if none).
func threadState(pid, lwp int) (byte, int) {
	dir := fmt.Sprintf("/proc/%d/task/%d/", pid, lwp)
	stat, err := os.ReadFile(dir + "stat")
	if err != nil {
		return 0, -1
	}
	i := bytes.LastIndexByte(stat, ')') // the name may hold anything
	if i < 0 || i+2 >= len(stat) {
		return 0, -1
	}
	sc, err := os.ReadFile(dir + "syscall")
	if err != nil {
		return stat[i+2], -1
	}
	f := strings.Fields(string(sc))
	if len(f) == 0 {
		return stat[i+2], -1
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return stat[i+2], -1 // "running"
	}
	return stat[i+2], n
}

// waitCalls are the system calls a thread sleeps in while it waits for
// another: a lock, condition, semaphore or join (futex), or data (a pipe
// read, poll). Sleeps (nanosleep) end by themselves and are not here.
var waitCalls = func() map[int]bool {
	m := map[int]bool{}
	for _, c := range append([]int{unix.SYS_FUTEX, unix.SYS_FUTEX_WAITV, unix.SYS_READ, unix.SYS_READV,
		unix.SYS_PPOLL, unix.SYS_PSELECT6, unix.SYS_EPOLL_PWAIT, unix.SYS_WAIT4, unix.SYS_WAITID,
		unix.SYS_ACCEPT4, unix.SYS_RECVFROM, unix.SYS_RECVMSG, unix.SYS_RT_SIGSUSPEND,
		unix.SYS_RT_SIGTIMEDWAIT}, archWaitCalls...) {
		m[c] = true
	}
	return m
}()
