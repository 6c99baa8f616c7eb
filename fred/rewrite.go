package fred

import (
	"fmt"
	"strconv"

	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
)

// The history rewriting behind the reverse commands (the FReD paper's
// section 2.2 and Algorithm 1), written against a small interface so that
// it runs on a simulated program in unit tests as well as on a debugger.

// mover is what the rewriting needs from a program.
type mover interface {
	// goTo brings the program to the moment the steps reach.
	goTo(steps []history.Step) error
	// forward runs one command from where the program is and records it.
	forward(op string, bps []string) (history.Step, error)
	// now is the last step of where the program is.
	now() history.Step
	// first is the history length at the first snapshot: nothing earlier
	// can be reached.
	first() int
	classify(line string) P.Command
	// bare runs one command and says only why it stopped: cheaper than
	// forward when the walk only needs to count.
	bare(op string, bps []string) (P.Stop, error)
}

// stepCounter is a mover whose debugger counts the `step`s a continue,
// next or finish is made of (stepsOf); ok is false when it cannot for
// this command.
type stepCounter interface {
	countSteps(before []history.Step, last history.Step) (n int, ok bool, err error)
}

// callSiter is a mover that can find where the frame a history ends in
// was called from without walking back statement by statement (a long
// call fred divided, counted steps); ok is false when it cannot for this
// history.
type callSiter interface {
	knownCallSite(steps []history.Step) (t []history.Step, ok bool, err error)
}

// longCaller is a mover that can name the return of a long call as a
// continue to its return address (callToReturn), for the last-pass
// machinery of continues to divide.
type longCaller interface {
	callToReturn(base []history.Step, bps []string, onlyLong bool) (history.Step, bool, error)
}

// counter is a mover that can count the `next`s of a continue or a finish
// in the debugger; ok is false when it cannot for this command.
type counter interface {
	countNexts(before []history.Step, last history.Step) (n int, ok bool, err error)
}

type rewriter struct{ m mover }

// repeat is one made-up command "op k".
func (r *rewriter) repeat(op string, k int, bps []string) history.Step {
	return synthStep(r.m.classify, op, k, bps)
}

// synthStep is a command fred makes up, "op k", run with breakpoints bps.
func synthStep(classify func(string) P.Command, op string, k int, bps []string) history.Step {
	line := op
	if k > 1 {
		line += " " + strconv.Itoa(k)
	}
	return history.Step{Cmd: classify(line), Bps: bps, Origin: history.Refined}
}

// countNexts runs `next`s from before until one ends where the command
// last ended (continue: any stop that is not a finished step; finish:
// the frame returns; until, advance: the recorded place) and says how
// many came before that one.
func (r *rewriter) countNexts(before []history.Step, last history.Step) (int, error) {
	if c, ok := r.m.(counter); ok {
		// The debugger counts them itself: one round trip, not one each.
		if n, ok, err := c.countNexts(before, last); ok {
			return n, err
		}
	}
	if err := r.m.goTo(before); err != nil {
		return 0, err
	}
	d := r.m.now().Depth
	for n := 0; n < maxWalk; n++ {
		if last.Cmd.Op == P.OpContinue {
			// Only why each `next` stopped matters: one round trip.
			stop, err := r.m.bare(P.OpNext, last.Bps)
			if err != nil {
				return 0, err
			}
			if stop != P.StopDone {
				return n, nil
			}
			continue
		}
		st, err := r.m.forward(P.OpNext, last.Bps)
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
	return 0, fmt.Errorf("'%s' covers more than %d statements; going back over it is not supported yet", last.Label(), maxWalk)
}

// prevStatement is the moment before the last statement executed in the
// history: the target of reverse-step.
func (r *rewriter) prevStatement(steps []history.Step) ([]history.Step, error) {
	t, err := r.prevStatement0(steps)
	if err != nil {
		return nil, err
	}
	return r.resolve(t)
}

// resolve makes sure the last step of a moment says where it ends (depth,
// location), running it if fred made it up.
func (r *rewriter) resolve(t []history.Step) ([]history.Step, error) {
	if len(t) == 0 || t[len(t)-1].Known() {
		return t, nil
	}
	if err := r.m.goTo(t); err != nil {
		return nil, err
	}
	t = append([]history.Step(nil), t...)
	t[len(t)-1] = r.m.now()
	return t, nil
}

func (r *rewriter) prevStatement0(steps []history.Step) ([]history.Step, error) {
	if len(steps) <= r.m.first() {
		return nil, ErrAtStart
	}
	last := steps[len(steps)-1]
	before := steps[:len(steps)-1]
	if last.Cmd.Count > 1 && (last.Cmd.Op == P.OpNext || last.Cmd.Op == P.OpStep) {
		k := last.Cmd.Count
		if last.Stop != P.StopDone {
			// A breakpoint (or the end) cut the count short: count the
			// commands that really ran.
			if err := r.m.goTo(before); err != nil {
				return nil, err
			}
			for k = 1; k < last.Cmd.Count; k++ {
				st, err := r.m.forward(last.Cmd.Op, last.Bps)
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
			before = with(before, r.repeat(last.Cmd.Op, k-1, last.Bps).PartOf(last))
		}
		stop := last.Stop
		last = r.repeat(last.Cmd.Op, 1, last.Bps).PartOf(last)
		last.Stop = stop
	}
	if sc, ok := r.m.(stepCounter); ok && (last.Cmd.Op == P.OpContinue || last.Cmd.Op == P.OpNext || last.Cmd.Op == P.OpFinish) {
		// The statement before the stop is the last `step` but one.
		n, ok, err := sc.countSteps(before, last)
		if err != nil {
			return nil, err
		}
		if ok && n > 1 {
			return with(before, r.repeat(P.OpStep, n-1, last.Bps).PartOf(last)), nil
		}
		if ok {
			return before, nil
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
		if lp, ok := r.m.(lastPasser); ok && last.Cmd.Op == P.OpContinue {
			t, ok, err := lp.lastNext(before, last)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.lastInside(t, last.Bps)
			}
		}
		if lc, ok := r.m.(longCaller); ok && last.Cmd.Op == P.OpFinish {
			// The statement before a finish's stop is the last of the
			// call, as before a continue to its return address.
			end, ok, err := lc.callToReturn(before, last.Bps, true)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.prevStatement(with(before, end))
			}
		}
		n, err := r.countNexts(before, last)
		if err != nil {
			return nil, err
		}
		switch {
		case last.Cmd.Op == P.OpContinue && n > 0:
			// Long: one "next n" the debugger replays in one command.
			before = with(before, r.repeat(P.OpNext, n, last.Bps).PartOf(last))
		default:
			// Within a function: single steps, each one for fred-undo.
			for i := 0; i < n; i++ {
				before = with(before, r.repeat(P.OpNext, 1, last.Bps).PartOf(last))
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
func (r *rewriter) lastInside(a []history.Step, bps []string) ([]history.Step, error) {
	if err := r.m.goTo(a); err != nil {
		return nil, err
	}
	d := r.m.now().Depth
	q, err := r.m.forward(P.OpStep, bps)
	if err != nil {
		return nil, err
	}
	if q.Stop != P.StopDone || q.Depth <= d {
		return a, nil
	}
	// Inside a call: walk its lines until one returns to a's depth (or a
	// breakpoint stops the walk, as it stopped the `next`).
	cur := with(a, q)
	for i := 0; ; i++ {
		if lc, ok := r.m.(longCaller); ok && i == longWalk {
			// A long call: its last statement is the last before its
			// return, as for a continue that stops there.
			end, ok, err := lc.callToReturn(with(a, q), bps, false)
			if err != nil {
				return nil, err
			}
			if ok {
				return r.prevStatement(with(a, q, end))
			}
			if err := r.m.goTo(cur); err != nil {
				return nil, err
			}
		}
		if i >= maxWalk {
			return nil, fmt.Errorf("a call covers more than %d statements; reverse over it is not supported yet", maxWalk)
		}
		nx, err := r.m.forward(P.OpNext, bps)
		if err != nil {
			return nil, err
		}
		if nx.Stop != P.StopDone || nx.Depth <= d {
			return r.lastInside(cur, bps)
		}
		cur = with(cur, nx)
	}
}

// callSite is the moment of the call that entered the current function:
// the target of reverse-finish.
func (r *rewriter) callSite(steps []history.Step) ([]history.Step, error) {
	if cs, ok := r.m.(callSiter); ok {
		if t, ok, err := cs.knownCallSite(steps); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return r.resolve(t)
		}
	}
	d := depthOf(steps)
	t := steps
	for {
		var err error
		if t, err = r.prevStatement(t); err != nil {
			return nil, err
		}
		for depthOf(t) > d {
			if t, err = r.callSite(t); err != nil {
				return nil, err
			}
		}
		if depthOf(t) < d {
			return t, nil
		}
	}
}

// prevSameDepth is the target of reverse-next: the previous statement at
// this depth, or the caller's statement if the frame was just entered.
func (r *rewriter) prevSameDepth(steps []history.Step) ([]history.Step, error) {
	d := depthOf(steps)
	t, err := r.prevStatement(steps)
	if err != nil {
		return nil, err
	}
	for depthOf(t) > d {
		if t, err = r.callSite(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// lastBreakpoint is the target of reverse-continue: the latest earlier
// moment at which a breakpoint or watchpoint stopped the program.
func (r *rewriter) lastBreakpoint(steps []history.Step) ([]history.Step, bool) {
	for i := len(steps) - 2; i >= r.m.first(); i-- {
		if i >= 0 && steps[i].Stop == P.StopBreakpoint {
			return steps[:i+1], true
		}
	}
	return steps[:r.m.first()], false
}
