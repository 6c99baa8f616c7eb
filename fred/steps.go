package fred

import (
	"context"
	"os"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
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

// countedSteps: FRED_COUNTED_STEPS=0 turns counted steps off, leaving the
// counting of `next`s (to compare).
var countedSteps = os.Getenv("FRED_COUNTED_STEPS") != "0"

// canCountSteps says whether the debugger counts steps itself.
func (s *Session) canCountSteps() bool {
	return countedSteps && s.p.Stepper != nil && s.p.Stepper.Steps != nil
}

// countSteps runs at most max steps from where the program is, stopping
// early as mode says. took is how long the same stretch took before, if
// known.
func (s *Session) countSteps(max int, mode P.StepsMode, took time.Duration) (P.NextsResult, error) {
	limit := s.opt.Timeout + 3*took + time.Duration(max/stepsPerSecond)*time.Second
	cmd := s.p.Stepper.Steps(max, mode)
	out, err := s.queryFor(cmd, limit)
	debugf("count %q: %q %v", cmd, lastLine(out), err)
	if err != nil {
		return P.NextsResult{}, err
	}
	return P.ParseNexts(out)
}

// stepsOf counts the `step`s the continue, next or finish c from a is
// made of: its stop is "a, step N" (N counts the stop's own event). ok is false when the
// debugger cannot count them or the count did not end where c ended (the
// caller then counts `next`s). The program is left at the end of c, or
// the history says it is elsewhere.
func (s *Session) stepsOf(ctx context.Context, a []history.Step, c history.Step, st *revStats) (n int, ok bool, err error) {
	mode := P.StepsMode{AtBps: true, Until: map[string]string{P.OpNext: "next", P.OpFinish: "finish"}[c.Cmd.Op]}
	if !s.canCountSteps() || c.Cmd.Count > 1 || c.Ended || !c.Known() ||
		c.Cmd.Op == P.OpContinue && c.Stop != P.StopBreakpoint || c.Cmd.Op != P.OpContinue && mode.Until == "" {
		return 0, false, nil
	}
	if err := s.goTo(a, st); err != nil {
		return 0, false, err
	}
	put, err := s.useBreakpoints(c.Bps)
	if err != nil {
		return 0, false, err
	}
	r, err := s.countInChunks(ctx, a, c, mode, st)
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
	if r.Why != "breakpoint" && r.Why != "done" {
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
	s.standAt(history.With(a, c))
	return r.N, true, nil
}

// stepChunk is how many steps of a long continue fred counts at a time,
// with a snapshot after each (a fork copy): going to a moment near the
// continue's end then replays less than a chunk, where it replayed the
// whole continue a second time. The last two are kept, and of the others
// at most chunksSpaced, evenly spaced (a search that divides the continue
// next goes to its middle, then a quarter in: from the start, each
// replayed millions of steps again).
const (
	stepChunk    = 1 << 19
	chunksSpaced = 8
)

// countInChunks counts the steps of the continue c from a, where the
// program stands, as countSteps(everything) would, in chunks of stepChunk
// when fork copies can keep the moments between them. The result's N is
// the whole count. A `next` or `finish` is counted in one go: where its
// count ends depends on the frame it started in.
func (s *Session) countInChunks(ctx context.Context, a []history.Step, c history.Step, mode P.StepsMode, st *revStats) (P.NextsResult, error) {
	_, copies := s.backendFor(s.pid).(ckpt.ThroughDebugger)
	if c.Cmd.Op != P.OpContinue || !copies {
		return s.countSteps(1<<40, mode, c.Took)
	}
	total, chunk, stride := 0, 0, 1
	type kept struct{ id, chunk int }
	var ks []kept
	for {
		r, err := s.countSteps(stepChunk, mode, c.Took)
		if err != nil || r.Why != "limit" || r.N != stepChunk {
			r.N += total
			return r, err
		}
		total += r.N
		chunk++
		if ctx.Err() != nil {
			return P.NextsResult{N: total, Why: "signal"}, nil
		}
		s.standAt(history.With(a, s.synth(P.OpStep, total, c.Bps).PartOf(c)))
		sn, err := s.Checkpoint(true)
		if err != nil {
			debugf("snapshot after %d steps of a continue: %v", total, err)
			continue
		}
		st.snapshots++
		ks = append(ks, kept{sn.ID, chunk})
		for {
			spaced := 0
			for _, k := range ks[:max(len(ks)-2, 0)] {
				if k.chunk%stride == 0 {
					spaced++
				}
			}
			if spaced <= chunksSpaced {
				break
			}
			stride *= 2
		}
		var on []kept
		for i, k := range ks {
			if i >= len(ks)-2 || k.chunk%stride == 0 {
				on = append(on, k)
			} else if s.snaps[k.id] != nil { // not pruned already
				s.drop(k.id)
			}
		}
		ks = on
	}
}

// countSteps is stepsOf for the rewriting: reverse-step after a long
// continue lands on "step N-1" without counting `next`s. A snapshot a
// little before the end makes the walk back from there cheap.
// The count starts at the latest probe inside the continue, if the
// program left one (probes.go).
func (m sessionMover) CountSteps(before []history.Step, last history.Step) ([]history.Step, int, bool, error) {
	s := m.s
	if last.Cmd.Op == P.OpContinue {
		if at, n, ok, err := m.stepsFromProbe(before, last); err != nil || ok {
			return at, n, ok, err
		}
	}
	if p := s.probeOf(history.With(before, last)); p != nil {
		// A probe the program left (probes.go) is that many steps into
		// its continue; gdb's are not counted so.
		if !p.person {
			return nil, 0, false, nil
		}
		prev, n, err := s.stepsBefore(m.ctx, p, m.st)
		if err != nil || prev == nil {
			return before, n, err == nil, err
		}
		return history.With(prev.base, prev.step), n, true, nil
	}
	n, ok, err := s.stepsOf(m.ctx, before, last, m.st)
	if !ok || err != nil || n <= stepsNearEnd*2 {
		return before, n, ok, err
	}
	near := history.With(before, s.synth(P.OpStep, n-stepsNearEnd, last.Bps).PartOf(last))
	if err := s.goTo(near, m.st); err != nil {
		return nil, 0, false, err
	}
	if _, err := s.Checkpoint(true); err == nil {
		m.st.snapshots++
	} else {
		debugf("snapshot near the end of a continue: %v", err)
	}
	return before, n, true, nil
}

// callSiteByCount finds the call site of the frame a history ends in:
// the last step before the end in a shallower frame. From the latest
// moment of the history in a shallower frame, the commands after it are
// counted in steps, then those steps replayed in one count that names the
// last shallower one as it goes. ok is false when a command on the way
// cannot be counted (the caller then walks back statement by statement).
func (m sessionMover) callSiteByCount(steps []history.Step) ([]history.Step, bool, error) {
	s := m.s
	first := s.firstIndex()
	if !s.canCountSteps() || len(steps) <= first {
		return nil, false, nil
	}
	d := history.DepthOf(steps)
	j := len(steps) - 1
	for j > first && history.DepthOf(steps[:j]) >= d {
		j--
	}
	base := steps[:j]
	if history.DepthOf(base) >= d && j > first {
		return nil, false, nil
	}
	// The steps from base to the end.
	total := 0
	for i := j; i < len(steps); i++ {
		c := steps[i]
		switch {
		case c.Cmd.Op == P.OpStep && (c.Synth() || c.Cmd.Count <= 1) && c.Stop == P.StopDone:
			total += max(c.Cmd.Count, 1)
		default:
			n, ok, err := s.stepsOf(m.ctx, steps[:i], c, m.st)
			if err != nil || !ok {
				return nil, false, err
			}
			total += n
		}
	}
	if total < 2 {
		return nil, false, nil
	}
	bps := steps[len(steps)-1].Bps
	if err := s.goTo(base, m.st); err != nil {
		return nil, false, err
	}
	put, err := s.useBreakpoints(bps)
	if err != nil {
		return nil, false, err
	}
	r, err := s.countSteps(total, P.StepsMode{Track: true}, 0)
	if perr := put(); err == nil {
		err = perr
	}
	s.dirty(base) // the count is not a command of the history
	if err != nil || r.Why != "limit" || r.N != total {
		return nil, false, err
	}
	m.st.replayed += r.N
	switch {
	case r.Shallower < 0:
		return nil, false, nil
	case r.Shallower == 0:
		return base, true, nil
	}
	return history.With(base, s.synth(P.OpStep, r.Shallower, bps)), true, nil
}

// knownCallSite implements callSiter: a long call's (gdb), or by counted
// steps (pdb, perl).
func (m sessionMover) KnownCallSite(steps []history.Step) ([]history.Step, bool, error) {
	if t, ok := m.s.callSiteOfReturn(steps); ok {
		return t, true, nil
	}
	return m.callSiteByCount(steps)
}

// stepsNearEnd is how far before the end of a long continue fred keeps a
// snapshot for the walk back.
const stepsNearEnd = 2000

// repeatSeq is the lazy list a+op from+1, ..., a+op from+n.
type repeatSeq struct {
	s       *Session
	a       []history.Step
	op      string
	from, n int
	of      history.Step // the command whose pieces these are (its breakpoints)
	then    *history.Step
}

func (q repeatSeq) Len() int { return q.n }
func (q repeatSeq) At(i int) watch.Moment {
	return moment{steps: history.With(q.a, q.s.synth(q.op, q.from+i+1, q.of.Bps).PartOf(q.of)), then: q.then}
}

// CallToReturn is the run from a moment inside a call to the call's
// return: a continue with a breakpoint at the return address, beside the
// breakpoints bps. It ends where the call returns, in the middle of the
// caller's line (where gdb's finish ends too), or, when one of bps (or a
// crash) stops it inside the call first, there. ok is false where neither
// holds: a recursive call that returns there from deeper first, a
// debugger without return addresses.
func (m sessionMover) CallToReturn(base []history.Step, bps []string, onlyLong bool) (history.Step, bool, error) {
	return m.s.callToReturn(m.ctx, base, bps, onlyLong, true, m.st)
}

// callToReturn: base is a moment inside the call (for a `next` from a,
// a and the step into the call; for a `finish`, its start).
// With onlyLong, ok is false too when the call returns within rewrite.LongWalk
// `next`s. Without inside, a stop inside the call is not ok either: the
// search's moments of a call (watchcmd.go) take the end for its return.
func (s *Session) callToReturn(ctx context.Context, base []history.Step, bps []string, onlyLong, inside bool, st *revStats) (history.Step, bool, error) {
	if s.p.CallerCmd == "" || s.canCountSteps() || history.DepthOf(base) < 2 {
		return history.Step{}, false, nil
	}
	if err := s.goTo(base, st); err != nil {
		return history.Step{}, false, err
	}
	if onlyLong {
		_, why, err := s.nextsUpTo(ctx, base, bps, P.NextsMode{Shallower: true}, st, rewrite.LongWalk)
		if err != nil || why != "limit" {
			return history.Step{}, false, err
		}
		if err := s.goTo(base, st); err != nil {
			return history.Step{}, false, err
		}
	}
	ret, err := s.callerPC()
	if err != nil {
		return history.Step{}, false, nil
	}
	cont := s.synth(P.OpContinue, 1, append(append([]string{}, bps...), s.p.Tracer.AtAddress(ret)))
	if err := s.passesIn(cont.Bps); err != nil {
		return history.Step{}, false, err
	}
	if err := s.goTo(history.With(base, cont), st); err != nil {
		return history.Step{}, false, err
	}
	end := s.Timeline.Now()
	if inside && !end.Ended && end.At.PC != ret && end.Depth >= history.DepthOf(base) {
		// One of bps inside the call stopped the continue first, as it
		// stopped the command gone back over: the stretch up to it is a
		// continue like any other, which the last-pass machinery
		// divides, where a walk would go a statement at a time (a long
		// loop in the call before the call that hits it).
		end.Stop = P.StopBreakpoint
		s.Timeline.SetNow(end)
		return end, true, nil
	}
	if end.Ended || end.Depth != history.DepthOf(base)-1 || end.At.PC != ret {
		return history.Step{}, false, nil
	}
	end.Stop = P.StopBreakpoint
	s.Timeline.SetNow(end)
	return end, true, nil
}

// callSiteOfReturn is the call site of a long call fred divided with
// callToReturn (gdb): a history a, the step into the call, then only
// moments of the continue to its return, which all carry the breakpoint
// at the return address. The call site is a.
func (s *Session) callSiteOfReturn(steps []history.Step) ([]history.Step, bool) {
	d := history.DepthOf(steps)
	for j := len(steps) - 2; j >= s.firstIndex() && j >= 1; j-- {
		q := steps[j]
		if q.Known() && q.Depth < d {
			return nil, false
		}
		if q.Cmd.Op != P.OpStep || q.Depth != d || history.DepthOf(steps[:j]) != d-1 {
			continue
		}
		ret := ""
		for _, b := range steps[j+1].Bps {
			if _, ok := s.p.Tracer.Address(b); ok && !contains(q.Bps, b) {
				ret = b
			}
		}
		if ret == "" {
			return nil, false
		}
		for k := j + 1; k < len(steps); k++ {
			st, bps := steps[k], steps[k].Bps
			if p := s.probeOf(steps[:k+1]); p != nil {
				bps = p.cont.Bps // a probe: a moment inside that continue
			}
			if !st.Synth() || !contains(bps, ret) || st.Known() && st.Depth < d {
				return nil, false
			}
		}
		return steps[:j], true
	}
	return nil, false
}
