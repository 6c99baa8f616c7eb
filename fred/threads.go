package fred

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
// changes; that thread made the change. A thread that cannot move while
// the others are held (it waits for a lock one of them holds) is seen by
// where it is stopped: in a blocking call.

// roundRobinMax bounds the statements the round-robin search runs.
var roundRobinMax = 5000

// Per-statement deadlines for the round-robin: a statement that takes
// longer waits for another thread, which scheduler locking holds.
const (
	rrStep  = 2 * time.Second
	rrGrace = 3 * time.Second // for an interrupted thread to stop
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
	selected := start.LWP
	gone, blocked := map[int]bool{}, map[int]bool{}
	retried := false
	for n := 0; n < roundRobinMax; {
		moved := false
		for _, lwp := range order {
			if gone[lwp] || blocked[lwp] {
				continue
			}
			if err := ctx.Err(); err != nil {
				return P.ThreadInfo{}, err
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
			// A thread in a wait, or in library code it stepped into, is
			// not run: returning from there may wait for a held thread,
			// and gdb does not always report the interrupt that would
			// stop it (seen after restores).
			if here[0].Waiting || !s.sourceOnDisk(here[0].File) {
				continue
			}
			cmd, limit := "step", rrStep
			st := s.threadStep(fmt.Sprintf(th.Locked, cmd, limit.Seconds()), cmd)
			out, stuck, err := s.lockedRun(cmd, lwp, limit)
			if err != nil {
				return P.ThreadInfo{}, err
			}
			if stuck {
				// It waits for a thread that is held. Where it stands now
				// (inside the wait) is no moment a replay reaches: go back
				// to the last one, and leave this thread until the others
				// have moved.
				blocked[lwp] = true
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
			return P.ThreadInfo{}, fmt.Errorf("%w: every thread waits for another", ErrNoThread)
		default:
			// Every thread that could move has; the blocked ones may
			// move now.
			blocked, retried = map[int]bool{}, true
		}
	}
	return P.ThreadInfo{}, fmt.Errorf("%w in %d statements", ErrNoThread, roundRobinMax)
}

// currentLWP is the selected thread's kernel id (or def if unknown).
func (s *Session) currentLWP(def int) int {
	out, err := s.query(s.p.Threads.Current)
	if c := P.ParseThreads(out); err == nil && len(c) == 1 {
		return c[0].LWP
	}
	return def
}

// lockedRun runs cmd in thread lwp with the other threads held. A command
// still running after limit waits for one of them: it is reported
// blocked. A SIGINT to the thread (which gdb keeps from the program)
// usually stops it there; if gdb still does not come back, the program is
// killed, and the caller goes back to a snapshot, which holds everything.
func (s *Session) lockedRun(cmd string, lwp int, limit time.Duration) (string, bool, error) {
	pid := s.pid
	kick := time.AfterFunc(limit, func() { _ = unix.Tgkill(pid, lwp, unix.SIGINT) })
	out, err := s.queryFor(fmt.Sprintf(s.p.Threads.Locked, cmd, 0.0), limit+rrGrace)
	kick.Stop()
	var te *TimeoutError
	if errors.As(err, &te) {
		_ = unix.Kill(pid, unix.SIGKILL)
		more, err := s.conn.waitPrompt("", time.Now().Add(s.opt.Timeout), nil, false, nil, nil)
		s.running = false
		return out + more, true, err
	}
	return out, err == nil && s.p.Threads.Blocked.MatchString(out), err
}

// sourceOnDisk reports whether file is a source file the person has
// (library code's debug info names files that are not there).
func (s *Session) sourceOnDisk(file string) bool {
	if file == "" || file == "??" {
		return false
	}
	return hasSource(Step{At: P.Location{File: filepath.Clean(file), Line: 1}})
}
