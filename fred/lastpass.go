package fred

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	P "github.com/fred-debugger/fred/personalities"
	"golang.org/x/sys/unix"
)

// Reverse-step after a long `continue`: the last statement before the
// continue's stop lies in the last of the `next`s it is made of. Counting
// those `next`s costs a debugger round trip each (about a millisecond a
// statement). Instead fred jumps to the last pass of one statement after
// another: from a moment, one `next` reaches a statement; a run to the
// stop counts how often its instruction runs again (a hardware execution
// breakpoint counted by the kernel, hits.go); the moment just before the
// last of those executions is where the walk goes on. In a loop that
// skips every turn but the last, whatever the number of turns.

// lastPasser is a mover that can find where the last `next` of a continue
// starts without counting the others.
type lastPasser interface {
	lastNext(before []Step, last Step) (t []Step, ok bool, err error)
}

// maxPasses bounds the jumps; past it fred counts the `next`s instead.
const maxPasses = 100

// maxPassCount bounds the executions a jump counts (about 3 s here).
var maxPassCount = 1 << 18

// shortWalk is how many `next`s fred counts between jumps (a jump costs a
// run to the stop and two restores, as much as some tens of `next`s).
const shortWalk = 30

// lastNext implements lastPasser for gdb, in a single-threaded program
// whose continue stopped at a breakpoint. ok is false when it cannot
// help: the caller counts the `next`s then.
func (m sessionMover) lastNext(before []Step, last Step) ([]Step, bool, error) {
	s := m.s
	if !nativeProbes || s.p.Stepper == nil || s.p.Stepper.Where == "" ||
		last.Cmd.Op != P.OpContinue || last.Cmd.Count > 1 || last.Stop != P.StopBreakpoint || !last.known() {
		return nil, false, nil
	}
	// Count up to shortWalk `next`s; if the stop is not reached by then,
	// jump to the last pass of the statement reached, and count again
	// from there.
	cur := before
	for i := 0; i < maxPasses; i++ {
		if err := m.goTo(cur); err != nil {
			return nil, true, err
		}
		if tasks, err := os.ReadDir("/proc/" + strconv.Itoa(s.pid) + "/task"); err != nil || len(tasks) != 1 {
			return nil, false, nil // threads: a count would mix them
		}
		n, why, err := s.nextsUpTo(m.ctx, cur, last.Bps, P.NextsMode{}, m.st, shortWalk)
		if err != nil {
			return nil, true, err
		}
		if n > 0 {
			cur = with(cur, s.synth(P.OpNext, n, last.Bps))
		}
		if why != "limit" {
			// One `next` from cur reaches the stop: the continue's
			// breakpoints allow no other.
			return cur, true, nil
		}
		// The program stands after exactly those n.
		s.Timeline.Steps = append([]Step(nil), cur...)
		s.Timeline.Marks = s.marksFor(s.Timeline.Steps)
		k, took, ok, err := s.countToStop(m.ctx, last)
		s.dirty(cur) // the program ran on
		if err != nil || !ok {
			return nil, ok, err
		}
		if k > 0 {
			if cur, err = m.passTo(cur, k, took, last.Bps); err != nil {
				return nil, true, err
			}
		}
	}
	return nil, false, nil
}

// passTo is the moment just before the n-th execution, after at, of the
// instruction at's last step stopped at, with its place learnt; took is
// how long counting them took (the replay takes about as long).
func (m sessionMover) passTo(at []Step, n int, took time.Duration, bps []string) ([]Step, error) {
	s := m.s
	if err := m.goTo(at); err != nil {
		return nil, err
	}
	pc, _, _, err := s.where()
	if err != nil {
		return nil, err
	}
	s.Timeline.Steps = append(s.Timeline.Steps[:len(at):len(at)], hitsStep(pc, n, bps))
	step := &s.Timeline.Steps[len(s.Timeline.Steps)-1]
	step.Took = took
	t0 := time.Now()
	if _, err := s.replayHits(*step); err != nil {
		return nil, err
	}
	step.Took = time.Since(t0) // its replays' deadline
	m.st.replayed++
	if err := s.learn(step); err != nil {
		return nil, err
	}
	s.Timeline.Marks = s.marksFor(s.Timeline.Steps)
	if s.snap != nil && s.worthSnapshot(n) {
		// The walk comes back here at least once more.
		_, _ = s.Checkpoint(true)
	}
	return append([]Step(nil), s.Timeline.Steps...), nil
}

// countToStop runs the program, which stands at the start of a statement,
// to the stop of the continue last, and says how many more times the
// statement's first instruction ran. ok is false when the run did not end
// at that stop.
func (s *Session) countToStop(ctx context.Context, last Step) (int, time.Duration, bool, error) {
	pc, flags, lwp, err := s.where()
	if err != nil {
		return 0, 0, true, err
	}
	// Resuming at pc runs it once without a trap when the resume flag is
	// set; else that first execution is the present statement, counted.
	self := 0
	if flags&(1<<16) == 0 {
		self = 1
	}
	if lwp == 0 {
		lwp = s.pid
	}
	// The kernel stops the program after maxPassCount: each execution
	// costs a debug trap (about 10 µs), and a statement of a loop that
	// runs for minutes would run for hours.
	h, err := openHits(lwp, pc, uint64(maxPassCount+self))
	if err != nil {
		return 0, 0, false, nil // no debug register: count the nexts instead
	}
	defer h.close()
	put, err := s.useBreakpoints(last.Bps)
	if err != nil {
		return 0, 0, true, err
	}
	t0 := time.Now()
	out, err := s.continueCancellable(ctx, s.opt.Timeout+3*last.Took+10*time.Second)
	took := time.Since(t0)
	if perr := put(); err == nil {
		err = perr
	}
	if err != nil {
		return 0, 0, true, err
	}
	n, err := h.count()
	if err != nil {
		return 0, 0, true, err
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, true, err
	}
	if n >= uint64(maxPassCount+self) {
		loc, _ := s.location()
		return 0, 0, true, fmt.Errorf("the continue runs %s more than %d times before it stops; going back over it is not supported yet", loc, maxPassCount)
	}
	if s.stopOf(out) != P.StopBreakpoint {
		if s.stopOf(out) == P.StopEnded {
			s.running = false
		}
		return 0, 0, false, nil
	}
	if loc, err := s.location(); err != nil || loc != last.At {
		return 0, 0, false, err
	}
	debugf("fred-last-pass: 0x%x ran %d more times before the stop", pc, int(n)-self)
	return max(0, int(n)-self), took, true, nil
}

// continueCancellable resumes the program until it stops; Ctrl-C (ctx)
// interrupts it. The caller leaves the history dirty afterwards: an
// interrupt that came as the program stopped by itself waits in it.
func (s *Session) continueCancellable(ctx context.Context, timeout time.Duration) (string, error) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	pid := s.pid
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			_ = unix.Tgkill(pid, pid, unix.SIGINT)
		case <-done:
		}
	}()
	out, err := s.queryFor("continue", timeout)
	close(done)
	wg.Wait() // no interrupt after this returns: the pid may be another's
	return out, err
}
