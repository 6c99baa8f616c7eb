package fred

import (
	"context"
	"time"

	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/watch"
)

// Counted steps: an in-process debugger (pdb) counts `step`s in the
// program itself with a trace function of fred's that does nothing else,
// about ten times faster than its own dispatch runs a `continue`. A long
// `continue` is then "step N" (N can be millions), every moment inside it
// is "step k", replayed in one command, and reverse commands and
// reverse-watch divide it as they divide a short one: no statement is
// counted by a debugger round trip, none is refused for being far.

// stepsPerSecond is a floor on how fast the program steps when counted,
// for deadlines only (about 5,000,000 here; a statement that calls into
// C code for long counts as one).
const stepsPerSecond = 200000

// canCountSteps says whether the debugger counts steps itself.
func (s *Session) canCountSteps() bool {
	return s.p.Stepper != nil && s.p.Stepper.Steps != nil
}

// countSteps runs at most max steps from where the program is, stopping
// early at the first breakpoint a `continue` would stop at when atBps.
// took is how long the same stretch took before, if known.
func (s *Session) countSteps(max int, atBps bool, took time.Duration) (P.NextsResult, error) {
	limit := s.opt.Timeout + 3*took + time.Duration(max/stepsPerSecond)*time.Second
	out, err := s.queryFor(s.p.Stepper.Steps(max, atBps), limit)
	if err != nil {
		return P.NextsResult{}, err
	}
	return P.ParseNexts(out)
}

// stepsOf counts the `step`s the continue c from a is made of: its stop
// is "a, step N" (N counts the stop's own event). ok is false when the
// debugger cannot count them or the count did not end where c ended (the
// caller then counts `next`s). The program is left at the end of c, or
// the history says it is elsewhere.
func (s *Session) stepsOf(ctx context.Context, a []Step, c Step, st *revStats) (n int, ok bool, err error) {
	if !s.canCountSteps() || c.Cmd.Op != P.OpContinue || c.Cmd.Count > 1 || c.Stop != P.StopBreakpoint || c.Ended || !c.known() {
		return 0, false, nil
	}
	if err := s.goTo(a, st); err != nil {
		return 0, false, err
	}
	put, err := s.useBreakpoints(c.Bps)
	if err != nil {
		return 0, false, err
	}
	r, err := s.countSteps(1<<40, true, c.Took)
	if perr := put(); err == nil {
		err = perr
	}
	if err != nil {
		s.dirty(a)
		return 0, false, err
	}
	st.replayed += r.N
	if r.Why == "signal" && ctx.Err() != nil {
		s.dirty(a)
		return 0, false, ctx.Err()
	}
	if r.Why == "passed" {
		// The count ended at the breakpoint, the program one statement
		// later (perl: only its own DB::DB can stop at a statement).
		s.dirty(a)
		return r.N, true, nil
	}
	if r.Why != "breakpoint" {
		s.dirty(a)
		if r.Why == "exited" {
			s.running = false
		}
		return 0, false, nil
	}
	loc, err := s.location()
	if err != nil || loc != c.At {
		s.dirty(a)
		return 0, false, err
	}
	s.Timeline.Steps = with(a, c)
	s.Timeline.Marks = s.marksFor(s.Timeline.Steps)
	return r.N, true, nil
}

// countSteps is stepsOf for the rewriting: reverse-step after a long
// continue lands on "step N-1" without counting `next`s. A snapshot a
// little before the end makes the walk back from there cheap.
func (m sessionMover) countSteps(before []Step, last Step) (int, bool, error) {
	s := m.s
	n, ok, err := s.stepsOf(m.ctx, before, last, m.st)
	if !ok || err != nil || n <= stepsNearEnd*2 {
		return n, ok, err
	}
	near := with(before, s.synth(P.OpStep, n-stepsNearEnd, last.Bps))
	if err := s.goTo(near, m.st); err != nil {
		return 0, false, err
	}
	if _, err := s.Checkpoint(true); err == nil {
		m.st.snapshots++
	} else {
		debugf("snapshot near the end of a continue: %v", err)
	}
	return n, true, nil
}

// stepsNearEnd is how far before the end of a long continue fred keeps a
// snapshot for the walk back.
const stepsNearEnd = 2000

// repeatSeq is the lazy list a, a+op, a+op 2, ..., a+op n.
type repeatSeq struct {
	s    *Session
	a    []Step
	op   string
	n    int
	bps  []string
	then *Step
}

func (q repeatSeq) Len() int { return q.n }
func (q repeatSeq) At(i int) watch.Moment {
	return moment{steps: with(q.a, q.s.synth(q.op, i+1, q.bps)), then: q.then}
}
