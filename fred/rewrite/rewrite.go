// Package rewrite is the history rewriting behind the reverse commands
// (the FReD paper's section 2.2 and Algorithm 1): the moment before the
// last statement (reverse-step), the call site (reverse-finish), the
// previous statement at this depth (reverse-next), the last breakpoint
// stop (reverse-continue). It is written against a small interface, a
// Mover, so that it runs on a simulated program in unit tests as well as
// on a debugger.
package rewrite

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
)

// ErrAtStart means a reverse command would go before the first snapshot.
var ErrAtStart = errors.New("already at the first snapshot: there is no earlier moment to go back to")

// MaxWalk bounds the statements a walk counts one command at a time (a
// variable so that tests can lower it).
var MaxWalk = 100000

// LongWalk is how many `next`s fred counts inside a call before it takes
// the call for a long one (a LongCaller's): the rest of the call is then a
// continue to its return address, which native probes and hit counts
// divide.
const LongWalk = 2000

// Mover is what the rewriting needs from a program.
type Mover interface {
	// GoTo brings the program to the moment the steps reach.
	GoTo(steps []history.Step) error
	// Forward runs one command from where the program is and records it.
	Forward(op string, bps []string) (history.Step, error)
	// Now is the last step of where the program is.
	Now() history.Step
	// First is the history length at the first snapshot: nothing earlier
	// can be reached.
	First() int
	// Classify reads a command line as the debugger would.
	Classify(line string) P.Command
	// Bare runs one command and says only why it stopped: cheaper than
	// forward when the walk only needs to count.
	Bare(op string, bps []string) (P.Stop, error)
}

// StepCounter is a Mover whose debugger counts the `step`s a continue,
// next or finish is made of (stepsOf), from start: before, or a moment
// inside last from which its stop is n steps away (a probe); ok is false
// when it cannot for this command.
type StepCounter interface {
	CountSteps(before []history.Step, last history.Step) (start []history.Step, n int, ok bool, err error)
}

// CallSiter is a Mover that can find where the frame a history ends in
// was called from without walking back statement by statement (a long
// call fred divided, counted steps); ok is false when it cannot for this
// history.
type CallSiter interface {
	KnownCallSite(steps []history.Step) (t []history.Step, ok bool, err error)
}

// LongCaller is a Mover that can name the return of a long call as a
// continue to its return address (callToReturn), for the last-pass
// machinery of continues to divide; the continue ends earlier, inside
// the call, where one of the breakpoints stops it first.
type LongCaller interface {
	CallToReturn(base []history.Step, bps []string, onlyLong bool) (history.Step, bool, error)
}

// LastPasser is a Mover that can find where the last `next` of a continue
// starts without counting the others.
type LastPasser interface {
	LastNext(before []history.Step, last history.Step) (t []history.Step, ok bool, err error)
}

// Counter is a Mover that can count the `next`s of a continue or a finish
// in the debugger; ok is false when it cannot for this command.
type Counter interface {
	CountNexts(before []history.Step, last history.Step) (n int, ok bool, err error)
}

// Rewriter finds the targets of the reverse commands on a Mover.
type Rewriter struct{ m Mover }

// New is a Rewriter on m.
func New(m Mover) *Rewriter { return &Rewriter{m: m} }

// Mover is the program r rewrites the history of.
func (r *Rewriter) Mover() Mover { return r.m }

// Repeat is one made-up command "op k".
func (r *Rewriter) Repeat(op string, k int, bps []string) history.Step {
	return SynthStep(r.m.Classify, op, k, bps)
}

// SynthStep is a command fred makes up, "op k", run with breakpoints bps.
func SynthStep(classify func(string) P.Command, op string, k int, bps []string) history.Step {
	line := op
	if k > 1 {
		line += " " + strconv.Itoa(k)
	}
	return history.Step{Cmd: classify(line), Bps: bps, Origin: history.Refined}
}

// CountNexts runs `next`s from before until one ends where the command
// last ended (continue: any stop that is not a finished step; finish:
// the frame returns; until, advance: the recorded place) and says how
// many came before that one.
func (r *Rewriter) CountNexts(before []history.Step, last history.Step) (int, error) {
	if c, ok := r.m.(Counter); ok {
		// The debugger counts them itself: one round trip, not one each.
		if n, ok, err := c.CountNexts(before, last); ok {
			return n, err
		}
	}
	if err := r.m.GoTo(before); err != nil {
		return 0, err
	}
	d := r.m.Now().Depth
	for n := 0; n < MaxWalk; n++ {
		if last.Cmd.Op == P.OpContinue {
			// Only why each `next` stopped matters: one round trip.
			stop, err := r.m.Bare(P.OpNext, last.Bps)
			if err != nil {
				return 0, err
			}
			if stop != P.StopDone {
				return n, nil
			}
			continue
		}
		st, err := r.m.Forward(P.OpNext, last.Bps)
		if err != nil {
			return 0, err
		}
		switch {
		case st.Stop != P.StopDone,
			last.Cmd.Op == P.OpFinish && st.Depth < d,
			(last.Cmd.Op == P.OpUntil || last.Cmd.Op == P.OpAdvance) && st.At.PC == last.At.PC && st.Depth == last.Depth:
			return n, nil
		}
	}
	return 0, fmt.Errorf("'%s' covers more than %d statements; going back over it is not supported yet", last.Label(), MaxWalk)
}

// PrevStatement is the moment before the last statement executed in the
// history: the target of reverse-step.
func (r *Rewriter) PrevStatement(steps []history.Step) ([]history.Step, error) {
	t, err := r.prevStatement0(steps)
	if err != nil {
		return nil, err
	}
	return r.Resolve(t)
}

// Resolve makes sure the last step of a moment says where it ends (depth,
// location), running it if fred made it up.
func (r *Rewriter) Resolve(t []history.Step) ([]history.Step, error) {
	if len(t) == 0 || t[len(t)-1].Known() {
		return t, nil
	}
	if err := r.m.GoTo(t); err != nil {
		return nil, err
	}
	t = append([]history.Step(nil), t...)
	t[len(t)-1] = r.m.Now()
	return t, nil
}

func (r *Rewriter) prevStatement0(steps []history.Step) ([]history.Step, error) {
	if len(steps) <= r.m.First() {
		return nil, ErrAtStart
	}
	last := steps[len(steps)-1]
	before := steps[:len(steps)-1]
	if last.Cmd.Count > 1 && (last.Cmd.Op == P.OpNext || last.Cmd.Op == P.OpStep) {
		k := last.Cmd.Count
		if last.Stop != P.StopDone {
			// A breakpoint (or the end) cut the count short: count the
			// commands that really ran.
			if err := r.m.GoTo(before); err != nil {
				return nil, err
			}
			for k = 1; k < last.Cmd.Count; k++ {
				st, err := r.m.Forward(last.Cmd.Op, last.Bps)
				if err != nil {
					return nil, err
				}
				if st.Stop != P.StopDone {
					break
				}
			}
		}
		// "next 5" is "next 4" then "next": the debugger replays the first
		// part in one command.
		if k > 1 {
			before = history.With(before, r.Repeat(last.Cmd.Op, k-1, last.Bps).PartOf(last))
		}
		stop := last.Stop
		last = r.Repeat(last.Cmd.Op, 1, last.Bps).PartOf(last)
		last.Stop = stop
	}
	if sc, ok := r.m.(StepCounter); ok && (last.Cmd.Op == P.OpContinue || last.Cmd.Op == P.OpNext || last.Cmd.Op == P.OpFinish || last.Origin == history.Probe) {
		// The statement before the stop is the last `step` but one.
		start, n, ok, err := sc.CountSteps(before, last)
		if err != nil {
			return nil, err
		}
		if ok && n > 1 {
			return history.With(start, r.Repeat(P.OpStep, n-1, last.Bps).PartOf(last)), nil
		}
		if ok {
			return start, nil
		}
	}
	switch last.Cmd.Op {
	case P.OpStep:
		return before, nil
	case P.OpNext:
		return r.lastInside(before, last.Bps)
	case P.OpContinue, P.OpFinish, P.OpUntil, P.OpAdvance:
		if (last.Cmd.Op == P.OpUntil || last.Cmd.Op == P.OpAdvance) && (!last.Known() || last.Ended) {
			return before, nil // no recorded stop to walk to
		}
		// The last statement is inside the last of the `next`s the
		// command is made of.
		if lp, ok := r.m.(LastPasser); ok && last.Cmd.Op == P.OpContinue {
			t, ok, err := lp.LastNext(before, last)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.lastInside(t, last.Bps)
			}
		}
		if lc, ok := r.m.(LongCaller); ok && last.Cmd.Op == P.OpFinish {
			// The statement before a finish's stop is the last of the
			// call, as before a continue to its return address.
			end, ok, err := lc.CallToReturn(before, last.Bps, true)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.PrevStatement(history.With(before, end))
			}
		}
		n, err := r.CountNexts(before, last)
		if err != nil {
			return nil, err
		}
		switch {
		case last.Cmd.Op == P.OpContinue && n > 0:
			// Long: one "next n" the debugger replays in one command.
			before = history.With(before, r.Repeat(P.OpNext, n, last.Bps).PartOf(last))
		default:
			// Within a function: single steps, each one for fred-undo.
			for i := 0; i < n; i++ {
				before = history.With(before, r.Repeat(P.OpNext, 1, last.Bps).PartOf(last))
			}
		}
		return r.lastInside(before, last.Bps)
	}
	// stepi, nexti, jump, run: fred goes back to before the command as a
	// whole.
	return before, nil
}

// lastInside is the last statement executed by a `next` from the moment
// a: a itself, or, if its line calls functions, the last statement inside
// the last call.
func (r *Rewriter) lastInside(a []history.Step, bps []string) ([]history.Step, error) {
	if err := r.m.GoTo(a); err != nil {
		return nil, err
	}
	d := r.m.Now().Depth
	q, err := r.m.Forward(P.OpStep, bps)
	if err != nil {
		return nil, err
	}
	if q.Stop != P.StopDone || q.Depth <= d {
		return a, nil
	}
	// Inside a call: walk its lines until one returns to a's depth (or a
	// breakpoint stops the walk, as it stopped the `next`).
	cur := history.With(a, q)
	for i := 0; ; i++ {
		if lc, ok := r.m.(LongCaller); ok && i == LongWalk {
			// A long call: its last statement is the last before its
			// return, as for a continue that stops there.
			end, ok, err := lc.CallToReturn(history.With(a, q), bps, false)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.PrevStatement(history.With(a, q, end))
			}
			if err := r.m.GoTo(cur); err != nil {
				return nil, err
			}
		}
		if i >= MaxWalk {
			return nil, fmt.Errorf("a call covers more than %d statements; reverse over it is not supported yet", MaxWalk)
		}
		nx, err := r.m.Forward(P.OpNext, bps)
		if err != nil {
			return nil, err
		}
		if nx.Stop != P.StopDone || nx.Depth <= d {
			return r.lastInside(cur, bps)
		}
		cur = history.With(cur, nx)
	}
}

// CallSite is the moment of the call that entered the current function:
// the target of reverse-finish.
func (r *Rewriter) CallSite(steps []history.Step) ([]history.Step, error) {
	if t, ok := r.enteredAt(steps); ok {
		return t, nil
	}
	if cs, ok := r.m.(CallSiter); ok {
		if t, ok, err := cs.KnownCallSite(steps); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return r.Resolve(t)
		}
	}
	d := history.DepthOf(steps)
	t := steps
	for {
		var err error
		if t, err = r.PrevStatement(t); err != nil {
			return nil, err
		}
		for history.DepthOf(t) > d {
			if t, err = r.CallSite(t); err != nil {
				return nil, err
			}
		}
		if history.DepthOf(t) < d {
			return t, nil
		}
	}
}

// enteredAt is the call site CallSite's walk would find, read off the
// history when it holds the step that entered the frame the history ends
// in: a `step` from a shallower frame, then only `next`s that end where
// they stopped by themselves, no shallower (such a `next` leaves its frame
// only by returning, and stops there; a `step` may return and enter
// another call at the same depth, as may a `next` that a breakpoint
// stops after it returned).
// The moment before that step is the call. Every moment between lies in
// the frame or deeper, so the walk back, one statement at a time, each
// moment replayed from a snapshot (gzip's ct_init: hundreds of statements,
// most calling bi_reverse, minutes), ends there too.
func (r *Rewriter) enteredAt(steps []history.Step) ([]history.Step, bool) {
	d := history.DepthOf(steps)
	for j := len(steps) - 1; j >= r.m.First() && j >= 1; j-- {
		q := steps[j]
		if !q.Known() || q.Ended || q.Depth < d {
			return nil, false
		}
		switch {
		case q.Cmd.Op == P.OpNext && q.Stop == P.StopDone:
			continue
		case q.Cmd.Op == P.OpStep && q.Cmd.Count <= 1 && q.Stop == P.StopDone &&
			steps[j-1].Known() && !steps[j-1].Ended && steps[j-1].Depth < d:
			return steps[:j], true
		}
		return nil, false
	}
	return nil, false
}

// PrevSameDepth is the target of reverse-next: the previous statement at
// this depth, or the caller's statement if the frame was just entered.
func (r *Rewriter) PrevSameDepth(steps []history.Step) ([]history.Step, error) {
	d := history.DepthOf(steps)
	if t, ok, err := r.beforeNext(steps); ok || err != nil {
		return t, err
	}
	t, err := r.PrevStatement(steps)
	if err != nil {
		return nil, err
	}
	for history.DepthOf(t) > d {
		if t, err = r.CallSite(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// beforeNext is reverse-next's target when the history ends in a `next`
// that finished at the depth it started from: the moment before it (calls
// counted as one). PrevStatement would go into the last call the `next`
// stepped over, and CallSite walk back out of it (gzip's ct_init: minutes
// for the same moment). ok is false otherwise: a `next` that returned, or
// that a breakpoint stopped inside a call.
func (r *Rewriter) beforeNext(steps []history.Step) ([]history.Step, bool, error) {
	if len(steps) <= r.m.First() {
		return nil, false, nil
	}
	last := steps[len(steps)-1]
	if last.Cmd.Op != P.OpNext || last.Stop != P.StopDone || !last.Known() || last.Ended {
		return nil, false, nil
	}
	before := steps[:len(steps)-1]
	if k := last.Cmd.Count; k > 1 {
		// "next 5" is "next 4" then "next".
		before = history.With(before, r.Repeat(P.OpNext, k-1, last.Bps).PartOf(last))
	}
	if len(before) == 0 {
		return nil, false, nil
	}
	before, err := r.Resolve(before)
	if err != nil {
		return nil, false, err
	}
	if b := before[len(before)-1]; b.Ended || b.Depth != last.Depth {
		return nil, false, nil
	}
	return before, true, nil
}

// LastBreakpoint is the target of reverse-continue: the latest earlier
// moment at which a breakpoint or watchpoint stopped the program.
func (r *Rewriter) LastBreakpoint(steps []history.Step) ([]history.Step, bool) {
	for i := len(steps) - 2; i >= r.m.First(); i-- {
		if i >= 0 && steps[i].Stop == P.StopBreakpoint {
			return steps[:i+1], true
		}
	}
	return steps[:r.m.First()], false
}
