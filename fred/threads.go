package fred

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fred-debugger/fred/fred/conn"
	"github.com/fred-debugger/fred/fred/history"
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

// Bounds of the round-robin. A thread runs with the others held; one
// that sleeps in a wait meanwhile waits for one of them, and one still
// running after rrStep waits some other way (a spin): either is stopped
// (by the debugger's Threads.Locked, which sees the first within a tenth
// of a second) and gets another turn once the others have moved. rrTotal
// bounds the whole search, rrIdle the rounds in which no thread moves.
const (
	rrStep  = 2 * time.Second
	rrGrace = 3 * time.Second // for a stopped thread's command to end
	rrTotal = 3 * time.Minute
	rrIdle  = 3
	// rrSnapEvery statements a snapshot: going back to a moment of the
	// search replays at most that many.
	rrSnapEvery = 100
)

// ErrNoThread means the round-robin search did not find the thread.
var ErrNoThread = errors.New("no thread's statement changes the expression")

// ErrReplayDiffers means a stretch of the threads' search ran otherwise
// when replayed.
var ErrReplayDiffers = errors.New("the threads ran otherwise when replayed")

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
func (s *Session) threadStep(line, op string) history.Step {
	return history.Step{Cmd: P.Command{Line: line, Kind: P.Mutate, Op: op, Count: 1}, Origin: history.ThreadTurn}
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
	steps := s.Timeline.Steps()
	snapAt := 0
	// snapHere takes a snapshot of the search's moment now: replays of
	// the search start there.
	snapHere := func() error {
		if _, err := s.Checkpoint(true); err != nil {
			return err
		}
		w.st.snapshots++
		snapAt = len(steps)
		return nil
	}
	if err := snapHere(); err != nil {
		return P.ThreadInfo{}, err
	}
	giveUp := time.Now().Add(rrTotal)
	selected := start.LWP
	gone, blocked := map[int]bool{}, map[int]bool{}
	waits, spins := 0, 0 // threads found blocked, for the message when none is found
	idle := 0            // rounds in a row in which no thread moved
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
			if err := snapHere(); err != nil {
				return P.ThreadInfo{}, err
			}
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
				steps, selected = history.With(steps, sel), lwp
				s.Timeline.SetSteps(steps)
			}
			if len(steps)-snapAt >= rrSnapEvery {
				if err := snapHere(); err != nil {
					return P.ThreadInfo{}, err
				}
			}
			// Threads in a wait or in library code run too: the thread
			// that makes the change may stand in one (a semaphore wait
			// that another thread's statement has just ended).
			st := s.threadStep(fmt.Sprintf(th.Locked, th.Step, rrStep.Seconds()), P.OpStep)
			out, stuck, killed, err := s.lockedRun(st.Cmd.Line)
			if err != nil {
				return P.ThreadInfo{}, err
			}
			// Where a thread stopped running on stands depends on the
			// machine's load: a snapshot right after its statement holds
			// it, and replays go from there. Any other statement is
			// replayed without the time limit, which a replay under load
			// could reach where the search did not (a long line, single-
			// stepped, takes seconds): the thread would stop elsewhere.
			runningOn := stuck && !killed && stoppedRunningOn(th, out)
			if !runningOn {
				st = s.threadStep(fmt.Sprintf(th.Locked, th.Step, -1.0), P.OpStep)
			}
			if killed {
				// gdb did not stop it: the snapshot holds what it did.
				blocked[lwp] = true
				spins++
				s.Timeline.SetSteps(history.With(steps, s.threadStep("(interrupted)", "interrupted")))
				if err := s.goTo(steps, w.st); err != nil {
					return P.ThreadInfo{}, err
				}
				selected = s.currentLWP(selected)
				continue
			}
			if th.Exited != "" && strings.Contains(out, th.Exited) {
				// Another thread is selected now.
				gone[lwp] = true
				selected = s.currentLWP(0)
			}
			if stuck {
				// It waits for a thread that is held, and stays in the
				// wait: it may have done part of its statement first
				// (a condition wait lets go of its mutex), which others
				// need. Replaying the command stops it in the same wait.
				// It counts as moving only if it stands somewhere else
				// now; either way it waits until the others have moved.
				steps = history.With(steps, st)
				s.Timeline.SetSteps(steps)
				blocked[lwp] = true
				c, err := s.query(th.Current)
				if err != nil {
					return P.ThreadInfo{}, err
				}
				now := P.ParseThreads(c)
				switch {
				case len(now) != 1:
					spins++
				case now[0].Waiting:
					waits++ // where it stopped: in a wait
				default:
					spins++ // still running at the deadline
				}
				// (one that ran on for the whole limit may have done some
				// of its statement, a long line single-stepped under load,
				// or wait in a spin for a held thread: it moved only if it
				// stands elsewhere, and gets its next turn after the others)
				if len(now) == 1 && now[0] != here[0] {
					moved = true
				}
				if runningOn {
					if err := snapHere(); err != nil {
						return P.ThreadInfo{}, err
					}
				}
				// (what it did before it blocked may be the change)
				if v, err := w.evalHere(); err != nil {
					return P.ThreadInfo{}, err
				} else if v != before {
					return s.landBefore(steps, w, before)
				}
				continue
			}
			n++
			moved = true
			steps = history.With(steps, st)
			s.Timeline.SetSteps(steps)
			if s.p.Ended(out) {
				return P.ThreadInfo{}, errors.New("the program ended during the search for the thread")
			}
			v, err := w.evalHere()
			if err != nil {
				return P.ThreadInfo{}, err
			}
			if v != before {
				return s.landBefore(steps, w, before)
			}
		}
		switch {
		case moved:
			idle = 0
		case len(blocked) == 0 || idle >= rrIdle:
			return P.ThreadInfo{}, fmt.Errorf("%w: every thread waits for another (stopped %d times in a wait, %d times running on)", ErrNoThread, waits, spins)
		default:
			// Every thread that could move has; the blocked ones may
			// move now.
			blocked = map[int]bool{}
			idle++
		}
	}
	return P.ThreadInfo{}, fmt.Errorf("%w in %d statements", ErrNoThread, roundRobinMax)
}

// landBefore goes back to just before the last of steps, the statement
// of the selected thread that made the change, and returns that thread.
func (s *Session) landBefore(steps []history.Step, w *watchProgram, before string) (P.ThreadInfo, error) {
	// Once more from a fresh replay: the value before the statement, and
	// after it. Threads that ran in a stretch of this search may run
	// otherwise when it is replayed (a thread held too long, under load,
	// stops elsewhere), and a statement that changed the value once but
	// not again is not the one to name.
	check := func(n int, when string) error {
		if err := s.goTo(steps[:n], w.st); err != nil {
			return err
		}
		v, err := w.evalHere()
		if err == nil && (v != before) != (n == len(steps)) {
			err = fmt.Errorf("%w: '%s' is %s %s the statement of the thread that changed it, replayed", ErrReplayDiffers, w.expr, v, when)
		}
		return err
	}
	if err := check(len(steps)-1, "before"); err != nil {
		return P.ThreadInfo{}, err
	}
	if err := check(len(steps), "after"); err != nil {
		return P.ThreadInfo{}, err
	}
	if err := s.goTo(steps[:len(steps)-1], w.st); err != nil {
		return P.ThreadInfo{}, err
	}
	now, err := s.query(s.p.Threads.Current)
	if err != nil {
		return P.ThreadInfo{}, err
	}
	if c := P.ParseThreads(now); len(c) == 1 {
		return c[0], nil
	}
	return P.ThreadInfo{}, fmt.Errorf("cannot tell which thread is selected: %s", lastLine(now))
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

// stoppedRunningOn says whether a Threads.Locked command's output says its
// thread was stopped still running at the time limit (not in a wait).
func stoppedRunningOn(th *P.Threads, out string) bool {
	m := th.Blocked.FindStringSubmatch(out)
	return len(m) > 1 && m[1] != ""
}

// lockedRun runs line, a Threads.Locked command: it reports whether the
// thread was stopped where it waited for a held one (or ran past the
// deadline). If gdb does not come back even then, the program is killed
// (killed), and the caller goes back to a snapshot, which holds
// everything.
func (s *Session) lockedRun(line string) (out string, stuck, killed bool, err error) {
	out, err = s.queryFor(line, rrStep+rrGrace)
	var te *conn.TimeoutError
	if errors.As(err, &te) {
		_ = unix.Kill(s.pid, unix.SIGKILL)
		more, err := s.conn.WaitPrompt("", time.Now().Add(s.opt.Timeout), nil, false, nil)
		s.running = false
		return out + more, true, true, err
	}
	return out, err == nil && s.p.Threads.Blocked.MatchString(out), false, err
}
