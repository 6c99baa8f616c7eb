package fred

import (
	"context"
	"errors"
	"fmt"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/watch"
)

// The last change inside one command (watch.Scanner). The bisection lands
// on a change into the value the expression has now, and the person's
// stops after it tell whether it went back and forth between them; inside
// one long `continue`, only a watch of every change tells. fred runs the
// rest of that continue with a hardware watchpoint of its own on the
// expression (its names looked up in the frame the watch began in): one
// stop per change of its value. The last change away from the present
// value and the next change back bracket the last change, which the
// search then bisects. Each stop is a step of the history (a `continue`
// with the watchpoint among its breakpoints), so the moments between
// replay as any other.

// maxWatchStops bounds the changes a scan follows: each costs a few
// debugger round trips, some milliseconds.
const maxWatchStops = 2000

// FromLanding implements watch.CoarseScanner: in a threaded program one
// statement of the selected thread may hold other threads' changes, back
// and forth.
func (w *watchProgram) FromLanding() bool { return w.threaded() }

// Scan implements watch.Scanner.
func (w *watchProgram) Scan(ctx context.Context, from watch.Moment, after string) (watch.Scanned, error) {
	s := w.s
	fm := from.(moment)
	k := history.Common(fm.steps, w.end)
	if k >= len(w.end) {
		return watch.Scanned{}, nil // the landing's next step is the present
	}
	cont := w.end[k]
	t := s.p.Tracer
	counted := s.canCountSteps() && s.p.Stepper.StepsWatch
	switch {
	case (cont.Cmd.Op == P.OpStep || cont.Cmd.Op == P.OpStepi) && cont.Cmd.Count <= 1 && !w.threaded():
		// One statement: no change inside it is later than its end (with
		// threads, the others' statements run meanwhile).
		return watch.Scanned{}, nil
	case (t == nil || t.Watch == "") && !counted:
		return watch.Scanned{Why: "this debugger has no watchpoint fred can run a command with"}, nil
	case counted && w.threaded():
		// The count is of the thread the debugger traces.
		return watch.Scanned{Why: "fred does not watch a program with threads for it yet"}, nil
	case cont.Cmd.Op != P.OpContinue || cont.Cmd.Count > 1 || cont.Ended || !cont.Known() || counted && cont.Stop != P.StopBreakpoint:
		in := "'" + cont.Label() + "'"
		if cont.Synth() {
			in = cont.Label() // "inside 'run': next 2"
		}
		return watch.Scanned{Why: "fred watches for it only within a 'continue', not " + in}, nil
	case counted:
		return w.scanSteps(ctx, fm, cont)
	}
	if err := ckpt.DebugRegisters(); err != nil {
		return watch.Scanned{Why: fmt.Sprintf("no hardware watchpoints here (%v)", err)}, nil
	}
	if w.watchKind != "hw" {
		return watch.Scanned{Why: "the debugger cannot watch it with a hardware watchpoint (it would single-step the program)"}, nil
	}
	if err := s.goTo(fm.steps, w.st); err != nil {
		return watch.Scanned{}, err
	}
	bps := append(append([]string{}, cont.Bps...), fmt.Sprintf(t.Watch, watchKey(w.scope), w.expr))
	steps := history.With(fm.steps)
	last, before := -1, ""
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return watch.Scanned{}, err
		}
		if n == maxWatchStops {
			return watch.Scanned{Why: fmt.Sprintf("it changes more than %d times after this moment", maxWatchStops)}, nil
		}
		q, out, err := s.forwardFor(P.OpContinue, bps, s.opt.Timeout+3*cont.Took, w.st)
		if err == nil {
			err = ctx.Err() // an interrupt stops the run wherever it is
		}
		if err != nil {
			s.dirty(steps)
			return watch.Scanned{}, err
		}
		q = q.PartOf(cont)
		if !t.Triggered.MatchString(out) {
			// The continue's own end, or the frame of the expression's
			// names returned first (gdb then deletes the watchpoint).
			if q.Ended != cont.Ended || q.At != cont.At || q.Stop != cont.Stop {
				s.dirty(steps)
				return watch.Scanned{Why: fmt.Sprintf("the run with a watchpoint stopped at %s, before the end of '%s'", q.At, cont.Label())}, nil
			}
			break
		}
		q.Origin = history.Watched
		s.Timeline.SetNow(q)
		steps = append(steps, q)
		v, err := w.evalHere()
		if nv := (*watch.NoValueError)(nil); errors.As(err, &nv) {
			v, err = fmt.Sprintf("without a value (%v)", nv.Err), nil
		}
		if err != nil {
			return watch.Scanned{}, err
		}
		if v != after {
			last, before = len(steps), v
		}
	}
	debugf("scan from %v: %d changes, the last with another value after %d steps", fm, len(steps)-len(fm.steps), last)
	switch {
	case last < 0:
		return watch.Scanned{}, nil
	case last == len(steps):
		// The change the stops saw at the end is gone: the run differs.
		return watch.Scanned{Why: fmt.Sprintf("with a watchpoint, '%s' ends with another value (%s)", cont.Label(), before)}, nil
	}
	return watch.Scanned{A: moment{steps: steps[:last:last]}, Before: before, B: moment{steps: steps[: last+1 : last+1]}}, nil
}

// scanSteps is Scan for a debugger inside the program (pdb): its counting
// trace function evaluates the expression at every step up to the
// continue's breakpoint and names the last step where it had another
// value. The bracket is that step and the one after it.
func (w *watchProgram) scanSteps(ctx context.Context, fm moment, cont history.Step) (watch.Scanned, error) {
	s := w.s
	if err := s.goTo(fm.steps, w.st); err != nil {
		return watch.Scanned{}, err
	}
	if now := s.Timeline.Now(); len(fm.steps) > history.Common(fm.steps, w.end) && cont.Stop == P.StopBreakpoint && !now.Ended && now.At == cont.At {
		// A moment inside the continue (not its start, which may be at
		// the same breakpoint in a loop) at its breakpoint: its stop (it
		// stops at the first one it meets), with nothing of it after.
		return watch.Scanned{}, nil
	}
	put, err := s.useBreakpoints(cont.Bps)
	if err != nil {
		return watch.Scanned{}, err
	}
	mode := P.StepsMode{AtBps: true}
	mode.Watch.Key, mode.Watch.Expr = w.scope, w.expr
	most := s.p.Stepper.WatchMax
	if most <= 0 {
		most = 1 << 40
	}
	r, err := s.countSteps(most, mode, cont.Took)
	if perr := put(); err == nil {
		err = perr
	}
	s.dirty(fm.steps) // the next goTo restores
	if err != nil {
		return watch.Scanned{}, err
	}
	w.st.replayed += r.N
	debugf("scan from %v: %d steps, the last with another value %d (%s)", fm, r.N, r.Away, r.AwayValue)
	if err := ctx.Err(); err != nil {
		return watch.Scanned{}, err
	}
	if r.Why == "limit" && r.N >= most {
		return watch.Scanned{Why: fmt.Sprintf("fred watches at most %d steps after this moment in '%s' (each costs an evaluation)", most, cont.Label())}, nil
	}
	if r.Why != "breakpoint" && r.Why != "passed" {
		if r.Why == "exited" {
			s.running = false
		}
		return watch.Scanned{Why: fmt.Sprintf("counting the steps of '%s' with it ended otherwise (%s)", cont.Label(), r.Why)}, nil
	}
	switch {
	case r.Away < 0:
		return watch.Scanned{}, nil
	case r.Away >= r.N:
		return watch.Scanned{Why: fmt.Sprintf("counted with it, '%s' ends with another value (%s)", cont.Label(), r.AwayValue)}, nil
	}
	a := history.With(fm.steps, s.synth(P.OpStep, r.Away, cont.Bps).PartOf(cont))
	b := history.With(a, s.synth(P.OpStep, 1, cont.Bps).PartOf(cont))
	return watch.Scanned{A: moment{steps: a}, Before: r.AwayValue, B: moment{steps: b}}, nil
}

// watchKey is a scope key as Tracer.Watch takes it.
func watchKey(scope string) string {
	if scope == "" {
		return "-"
	}
	return scope
}

// hardwareWatch asks the debugger, where the person is, whether it would
// watch expr with a hardware watchpoint ("hw"); "" where it has none.
func (s *Session) hardwareWatch(scope, expr string) string {
	t := s.p.Tracer
	if t == nil || t.WatchKind == nil {
		return ""
	}
	out, err := s.query(t.WatchKind(watchKey(scope), expr))
	if err != nil {
		return ""
	}
	kind, _ := P.ParseTagged(out, "FREDWATCH ")
	return kind
}

// Same implements watch.Samer: a moment is its history.
func (w *watchProgram) Same(a, b watch.Moment) bool {
	return history.Equal(a.(moment).steps, b.(moment).steps)
}

// threaded says, once a watch (it reads the replay log), whether the
// program has or had threads in this run.
func (w *watchProgram) threaded() bool {
	if w.hadThreads == nil {
		t := w.s.p.Threads != nil && w.s.hadThreads()
		w.hadThreads = &t
	}
	return *w.hadThreads
}
