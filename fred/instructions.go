package fred

import (
	"fmt"
	"time"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	P "github.com/fred-debugger/fred/personalities"
)

// maxStepis bounds the instructions counted to go back one: a count runs
// the program one stepi at a time in the debugger.
const maxStepis = 500000

// reverseInstruction is fred-reverse-stepi (nexti: fred-reverse-nexti).
// Every moment is a place to land: code without line information too.
func (s *Session) reverseInstruction(name string, n int, nexti bool) error {
	if st := s.p.Stepper; st == nil || st.Stepis == nil || st.Frame == "" {
		return ErrNoInstructions
	}
	return s.reverseTo(name, n, func(r *rewrite.Rewriter, t []history.Step) ([]history.Step, error) {
		return s.prevInstruction(r, t, nexti)
	}, true)
}

// prevInstruction is the moment one machine instruction before the end of
// steps. nexti: a call is one instruction, so when the instruction before
// was a return, the moment is the call's: the last one in this frame. It counts
// `stepi`s in the debugger, from the moment before a command to its end.
func (s *Session) prevInstruction(r *rewrite.Rewriter, steps []history.Step, nexti bool) ([]history.Step, error) {
	if len(steps) <= r.Mover().First() {
		return nil, ErrAtStart
	}
	last := steps[len(steps)-1]
	before := steps[:len(steps)-1]
	if !nexti && last.Stop == P.StopDone && last.Cmd.Op == P.OpStepi {
		// "stepi 5" is "stepi 4" then one more.
		return stepisFrom(r, before, last.Cmd.Count-1, last.Bps), nil
	}
	here, err := s.frameAt(r, steps)
	if err != nil {
		return nil, err
	}
	c, err := s.countStepis(r, steps, here, here)
	if err != nil {
		return nil, err
	}
	if !nexti || !c.Ret {
		return stepisFrom(r, before, c.N-1, last.Bps), nil
	}
	// It returned from a call: back to the call, the last moment in this
	// frame, which may be in an earlier command.
	for end := steps; ; {
		if c.Same >= 0 {
			return stepisFrom(r, end[:len(end)-1], c.Same, end[len(end)-1].Bps), nil
		}
		if end = end[:len(end)-1]; len(end) <= r.Mover().First() {
			return nil, ErrAtStart
		}
		there, err := s.frameAt(r, end)
		if err != nil {
			return nil, err
		}
		if c, err = s.countStepis(r, end, there, here); err != nil {
			return nil, err
		}
	}
}

// stepisFrom is the moment k stepis after t.
func stepisFrom(r *rewrite.Rewriter, t []history.Step, k int, bps []string) []history.Step {
	if k <= 0 {
		return t
	}
	return history.With(t, r.Repeat(P.OpStepi, k, bps))
}

// frameAt goes to moment t and says where the selected thread is.
func (s *Session) frameAt(r *rewrite.Rewriter, t []history.Step) (P.Frame, error) {
	if err := r.Mover().GoTo(t); err != nil {
		return P.Frame{}, err
	}
	out, err := s.query(s.p.Stepper.Frame)
	if err != nil {
		return P.Frame{}, err
	}
	return P.ParseFrame(out)
}

// countStepis counts the stepis of the last command of t, which ends at
// frame end; the last of them in frame's function at its stack pointer or
// above is Same.
func (s *Session) countStepis(r *rewrite.Rewriter, t []history.Step, end, frame P.Frame) (P.StepisResult, error) {
	before, last := t[:len(t)-1], t[len(t)-1]
	if err := r.Mover().GoTo(before); err != nil {
		return P.StepisResult{}, err
	}
	out, err := s.queryFor(s.p.Stepper.Stepis(maxStepis, end, frame), s.opt.Timeout+2*time.Minute)
	if err != nil {
		return P.StepisResult{}, err
	}
	c, err := P.ParseStepis(out)
	if err != nil {
		return c, err
	}
	// The program is where the stepis left it.
	if c.Reached {
		s.standAt(append([]history.Step(nil), t...))
	} else {
		s.standAt(stepisFrom(r, before, c.N, last.Bps))
	}
	switch {
	case c.Reached:
		return c, nil
	case c.N > maxStepis:
		return c, fmt.Errorf("'%s' ran more than %d instructions; going back one instruction over it is not supported", last.Label(), maxStepis)
	}
	return c, fmt.Errorf("stepping the instructions of '%s' again did not get back to where it ended (pc 0x%x)", last.Label(), end.PC)
}
