package fred

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	"github.com/fred-debugger/fred/fred/timed"
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
//
// Counting costs a debug trap an execution (about 12 µs here), so a loop
// that turns millions of times before the stop would take minutes: when
// more than a chunk of executions remains, fred first jumps close to the
// stop by run time (nearStop) and walks on from there.

// maxPasses bounds the jumps; past it fred counts the `next`s instead.
const maxPasses = 100

// maxPassCount bounds the executions a jump counts (about 3 s here); past
// it, when no native run got close to the stop, fred gives up with a
// message.
var maxPassCount = 1 << 18

// passChunk is how many executions are counted between snapshots.
const passChunk = 8192

// shortWalk is how many `next`s fred counts between jumps (a jump costs a
// run to the stop and two restores, as much as some tens of `next`s).
const shortWalk = 30

// LastNext implements rewrite.LastPasser for gdb, in a single-threaded program
// whose continue stopped at a breakpoint or a crash. ok is false when it
// cannot help: the caller counts the `next`s then.
func (m sessionMover) LastNext(before []history.Step, last history.Step) ([]history.Step, bool, error) {
	s := m.s
	if !nativeProbes || s.p.Stepper == nil || s.p.Stepper.Where == "" ||
		last.Cmd.Op != P.OpContinue || last.Cmd.Count > 1 || !endsLike(last.Stop, last) || !last.Known() || s.passes(last) {
		return nil, false, nil
	}
	// Count up to shortWalk `next`s; if the stop is not reached by then,
	// jump to the last pass of the statement reached, and count again
	// from there.
	cur := before
	var far time.Duration // how far the last jump near the stop stopped short of it
	for i := 0; i < maxPasses; i++ {
		if err := m.GoTo(cur); err != nil {
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
			cur = history.With(cur, s.synth(P.OpNext, n, last.Bps).PartOf(last))
		}
		if why != "limit" {
			// One `next` from cur reaches the stop: the continue's
			// breakpoints allow no other.
			return cur, true, nil
		}
		// The program stands after exactly those n.
		s.standAt(append([]history.Step(nil), cur...))
		if far >= 2*nearMin {
			// Still far in run time: jump again before counting.
			near, rest, err := s.nearStop(m.ctx, cur, last, m.st)
			if err != nil {
				return nil, true, err
			}
			if far = rest; near != nil {
				cur = near
				continue
			}
		}
		if s.hitCounts() != nil {
			// No hit counts on this machine: jump near the stop by run
			// time while that gets closer, then count the rest.
			near, rest, err := s.nearStop(m.ctx, cur, last, m.st)
			if err != nil {
				return nil, true, err
			}
			if near != nil {
				cur, far = near, rest
				continue
			}
			n, why, err := s.nextsUpTo(m.ctx, cur, last.Bps, P.NextsMode{}, m.st, rewrite.MaxWalk)
			if err != nil {
				return nil, true, err
			}
			if why == "limit" {
				return nil, true, fmt.Errorf("more than %d statements to count after the last native probe, and no hit counts on this machine (%v); going back over them is not supported yet", rewrite.MaxWalk, s.hitCounts())
			}
			if n > 0 {
				cur = history.With(cur, s.synth(P.OpNext, n, last.Bps).PartOf(last))
			}
			return cur, true, nil
		}
		pc, k, near, rest, ok, err := s.countToStop(m.ctx, cur, last, m.st)
		if err == nil && near != nil {
			cur, far = near, rest // the program stands closer to the stop: walk on from there
			continue
		}
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

// endsLike reports whether a run that stopped so may have reached the
// continue's own stop: a breakpoint, or a signal (a crash: a replay
// faults where the first run did). The caller compares the place.
func endsLike(stop P.Stop, last history.Step) bool {
	return stop == last.Stop && (stop == P.StopBreakpoint || stop == P.StopSignal)
}

// passTo is the moment just before the n-th execution, after at, of the
// instruction at pc (where at's last step stopped), with its place
// learnt: from the nearest snapshot countToStop kept on the way.
func (m sessionMover) passTo(at []history.Step, pc uint64, n int, bps []string) ([]history.Step, error) {
	s := m.s
	t := history.With(at, hitsStep(pc, n, bps))
	if err := m.GoTo(t); err != nil {
		return nil, err
	}
	step := s.Timeline.Now()
	err := s.learn(&step)
	s.Timeline.SetNow(step)
	if err != nil {
		return nil, err
	}
	s.standAt(s.Timeline.Steps()) // the marks anew
	// The walk comes back here at least once more: keep it if replaying
	// the rest from the last chunk's snapshot costs more than that.
	rest := n
	if s.worthSnapshot(passChunk) {
		rest = n % passChunk
	}
	if s.snap != nil && s.worthSnapshot(rest) {
		_, _ = s.Checkpoint(true)
	}
	return s.Timeline.Steps(), nil
}

// countToStop runs the program, which stands at the start of a statement
// after the history cur, to the stop of the continue last, and says how
// many more times the statement's first instruction ran. It counts in
// chunks and keeps a snapshot at each chunk's end, so that going to the
// last of those executions replays less than a chunk. ok is false when
// the run did not end at that stop.
//
// When the stop is more than a chunk away and far in run time, it returns
// near instead: a moment close before the stop (nearStop), from which the
// walk goes on.
func (s *Session) countToStop(ctx context.Context, cur []history.Step, last history.Step, st *revStats) (pc uint64, k int, near []history.Step, rest time.Duration, ok bool, err error) {
	pc, _, _, err = s.where()
	if err != nil {
		return 0, 0, nil, 0, true, err
	}
	total := 0
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, nil, 0, true, err
		}
		if total >= s.hitsLimit(maxPassCount) {
			// Each execution costs a debug trap (about 10 µs): a
			// statement of a loop that runs for minutes would take hours.
			loc, _ := s.location()
			return 0, 0, nil, 0, true, fmt.Errorf("the continue runs %s more than %d times before it stops; going back over it is not supported yet", loc, s.hitsLimit(maxPassCount))
		}
		r, err := s.runHits(pc, passChunk, last.Bps, s.opt.Timeout+3*last.Took+10*time.Second+s.hitsDeadline(passChunk))
		if errors.Is(err, ErrNoHitCounts) {
			return 0, 0, nil, 0, false, nil // no debug register: count the nexts instead
		}
		if err != nil {
			return 0, 0, nil, 0, true, err
		}
		if !r.Reached {
			if !endsLike(r.Stop, last) {
				if r.Stop == P.StopEnded {
					s.running = false
				}
				return 0, 0, nil, 0, false, nil
			}
			if loc, err := s.location(); err != nil || loc != last.At {
				return 0, 0, nil, 0, false, err
			}
			total += r.N
			break
		}
		total += passChunk
		at := history.With(cur, hitsStep(pc, total, last.Bps).PartOf(last))
		s.standAt(at)
		if s.snap != nil && s.worthSnapshot(passChunk) {
			_, _ = s.Checkpoint(true)
		}
		if total == passChunk {
			near, rest, err := s.nearStop(ctx, at, last, st)
			if err != nil || near != nil {
				return 0, 0, near, rest, true, err
			}
		}
	}
	debugf("fred-last-pass: 0x%x ran %d more times before the stop", pc, total)
	return pc, total, nil, 0, true, nil
}

// nearMin is the run time to the stop below which counting executions
// costs less than jumping close to the stop (about 50,000 executions of a
// tight loop's statement). A var for the tests.
var nearMin = 40 * time.Microsecond

// nearStop finds a moment close before the continue's stop, for a walk
// that would otherwise count a long loop's executions one debug trap each
// (about 12 µs here, when the loop runs at a few ns a turn): it runs the
// program natively from at to the stop, which says how far that is in run
// time, T; then from at again for T - T/8 (at least nearMin/2 short of it),
// interrupts it and settles at a statement of at's frame, a native probe
// (native.go). A snapshot is the way back to it. Nested calls (the walk
// goes on from the probe) shrink the distance by 8 each time, until the
// rest is short enough to count. It returns the probe's history and how
// far, in run time, it lay from the stop; nil when the stretch is short
// already or no probe fell before the stop.
func (s *Session) nearStop(ctx context.Context, at []history.Step, last history.Step, st *revStats) ([]history.Step, time.Duration, error) {
	if s.snap == nil || s.p.Tracer == nil {
		return nil, 0, nil
	}
	d0, err := s.depth()
	if err != nil {
		return nil, 0, err
	}
	defer s.copiesForTimedRuns()()
	timeout := s.opt.Timeout + 3*last.Took
	r, err := timed.ForCtx(ctx, timedTarget{s}, time.Hour, last.Bps, timeout)
	s.dirty(at) // the program ran on
	if err != nil {
		return nil, 0, err
	}
	if r.Stop == P.StopEnded {
		s.running = false
	}
	if r.Fired || !endsLike(r.Stop, last) {
		return nil, 0, s.goTo(at, st)
	}
	if loc, err := s.location(); err != nil || loc != last.At {
		if err == nil {
			err = s.goTo(at, st)
		}
		return nil, 0, err
	}
	T := r.Ran
	debugf("near stop: %v to the stop", T)
	for slack := max(T/8, nearMin/2); T >= nearMin && slack < T; slack *= 2 {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		if err := s.goTo(at, st); err != nil {
			return nil, 0, err
		}
		r, err := timed.ForCtx(ctx, timedTarget{s}, T-slack, last.Bps, timeout)
		if err != nil {
			s.dirty(at)
			return nil, 0, err
		}
		debugf("near stop: %v short: ran %v, fired %v, stop %v", slack, r.Ran, r.Fired, r.Stop)
		if !r.Fired || r.Stop != P.StopSignal {
			s.dirty(at) // at the stop already
			s.running = s.running && r.Stop != P.StopEnded
			continue
		}
		why, err := s.settle(d0)
		if err != nil {
			return nil, 0, err
		}
		if why != "done" {
			s.dirty(at) // settling ran into the stop
			s.running = s.running && why != "exited"
			continue
		}
		fp, err := s.fingerprint()
		if err != nil {
			return nil, 0, err
		}
		// Timed from at, the start of its stretch (anchorKey(nil)).
		steps, err := s.newProbe(&probe{base: at, cont: last, off: r.Ran, from: anchorKey(nil), rel: r.Ran, fp: fp})
		if err != nil {
			return nil, 0, err
		}
		if _, err := s.Checkpoint(true); err != nil {
			// No way back to the probe: count from at instead.
			debugf("near stop: no snapshot at the probe: %v", err)
			s.dirty(at)
			return nil, 0, s.goTo(at, st)
		}
		return steps, T - r.Ran, nil
	}
	return nil, 0, s.goTo(at, st)
}
