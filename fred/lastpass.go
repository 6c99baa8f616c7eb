package fred

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
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

// passChunk is how many executions are counted between snapshots.
const passChunk = 8192

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
		if proc.Threads(s.pid) != 1 {
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
		pc, k, ok, err := s.countToStop(m.ctx, cur, last)
		s.dirty(cur) // the program ran on
		if err != nil || !ok {
			return nil, ok, err
		}
		if k > 0 {
			if cur, err = m.passTo(cur, pc, k, last.Bps); err != nil {
				return nil, true, err
			}
		}
	}
	return nil, false, nil
}

// passTo is the moment just before the n-th execution, after at, of the
// instruction at pc (where at's last step stopped), with its place
// learnt: from the nearest snapshot countToStop kept on the way.
func (m sessionMover) passTo(at []Step, pc uint64, n int, bps []string) ([]Step, error) {
	s := m.s
	t := with(at, hitsStep(pc, n, bps))
	if err := m.goTo(t); err != nil {
		return nil, err
	}
	step := &s.Timeline.Steps[len(s.Timeline.Steps)-1]
	if err := s.learn(step); err != nil {
		return nil, err
	}
	s.Timeline.Marks = s.marksFor(s.Timeline.Steps)
	// The walk comes back here at least once more: keep it if replaying
	// the rest from the last chunk's snapshot costs more than that.
	rest := n
	if s.worthSnapshot(passChunk) {
		rest = n % passChunk
	}
	if s.snap != nil && s.worthSnapshot(rest) {
		_, _ = s.Checkpoint(true)
	}
	return append([]Step(nil), s.Timeline.Steps...), nil
}

// countToStop runs the program, which stands at the start of a statement
// after the history cur, to the stop of the continue last, and says how
// many more times the statement's first instruction ran. It counts in
// chunks and keeps a snapshot at each chunk's end, so that going to the
// last of those executions replays less than a chunk. ok is false when
// the run did not end at that stop.
func (s *Session) countToStop(ctx context.Context, cur []Step, last Step) (uint64, int, bool, error) {
	pc, _, _, err := s.where()
	if err != nil {
		return 0, 0, true, err
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, true, err
		}
		if total >= maxPassCount {
			// Each execution costs a debug trap (about 10 µs): a
			// statement of a loop that runs for minutes would take hours.
			loc, _ := s.location()
			return 0, 0, true, fmt.Errorf("the continue runs %s more than %d times before it stops; going back over it is not supported yet", loc, maxPassCount)
		}
		r, err := s.runHits(pc, passChunk, last.Bps, s.opt.Timeout+3*last.Took+10*time.Second)
		if errors.Is(err, ErrNoHitCounts) {
			return 0, 0, false, nil // no debug register: count the nexts instead
		}
		if err != nil {
			return 0, 0, true, err
		}
		if !r.reached {
			if r.stop != P.StopBreakpoint {
				if r.stop == P.StopEnded {
					s.running = false
				}
				return 0, 0, false, nil
			}
			if loc, err := s.location(); err != nil || loc != last.At {
				return 0, 0, false, err
			}
			total += r.n
			break
		}
		total += passChunk
		s.Timeline.Steps = with(cur, hitsStep(pc, total, last.Bps))
		s.Timeline.Marks = s.marksFor(s.Timeline.Steps)
		if s.snap != nil && s.worthSnapshot(passChunk) {
			_, _ = s.Checkpoint(true)
		}
	}
	debugf("fred-last-pass: 0x%x ran %d more times before the stop", pc, total)
	return pc, total, true, nil
}
