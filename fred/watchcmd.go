package fred

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/words"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/replaylog"
	"github.com/fred-debugger/fred/watch"
)

// moment is a point in the history for the reverse-watch search: the steps
// that reach it, and the command that takes it on to the next moment of
// its level (known when the moment came from refining a command).
type moment struct {
	steps []history.Step
	then  *history.Step
	hit   *hit // where it lies in a hit count (hits.go), if it is one
}

func (m moment) String() string {
	if len(m.steps) == 0 {
		return "the start"
	}
	last := m.steps[len(m.steps)-1]
	if history.StartUpOnly(m.steps) {
		return "main's first line" + atString(last)
	}
	return fmt.Sprintf("after %s%s", history.Position(m.steps), atString(last))
}

func atString(st history.Step) string {
	if st.At.File == "" {
		return ""
	}
	return ", at " + st.At.String()
}

// watchProgram drives the search over the live session.
type watchProgram struct {
	s    *Session
	expr string
	end  []history.Step // END: where the person is
	// scope names the frame the names in expr are looked up in, for a
	// debugger that forgets it at a restore (Personality.ScopeCmd).
	scope string
	// watchKind is "hw" where the debugger watches expr with a hardware
	// watchpoint (asked where the person is: scan.go).
	watchKind string
	// hadThreads caches threaded (scan.go).
	hadThreads *bool
	st         *revStats
	// ends are the program CPU times of the continues probed natively,
	// once a probe ran to the end of one (native.go).
	ends     map[string]time.Duration
	endFrom  map[string]time.Duration // the same, from a given probe (native.go)
	gallop   time.Duration            // the next probe's distance when b is too far back to compare
	lastSpan time.Duration            // the last stretch whose run time was measured
	noNative bool
	// timed counts the probes found by run time, longest is the longest
	// stretch measured; late: SecondLook aims them later (native.go).
	timed   int
	longest time.Duration
	late    bool
	// hitEnds are the counts from a hit count's anchor to the end of its
	// continue, once a scan ran there; scanStep the next scan's step
	// (hits.go).
	hitEnds  map[string]int
	scanStep map[string]int
	noHits   bool
	leave    func() error // ends lean attaches (lean.go)
	// endVal is the expression's value at END, which the search evaluates
	// first; early counts the probes of one continue (earlyIn) in a row
	// that found another value: the start of the bracket moving on alone
	// (native.go).
	endVal  *string
	early   int
	earlyIn string
	// stepLeaf says the last Split ended the search at a single `step` (or
	// a `next` that is one): the landing can be checked by one step.
	// leafCmd is the command it ended at when that is one of the person's
	// that fred does not divide (set var, until...).
	stepLeaf bool
	leafCmd  string
}

// goEval goes to the moment and evaluates the expression there. In an
// interpreter, steps counted from a snapshot inside a stretch can differ
// from the same steps counted through it (the debugger's stop at the
// snapshot allocated: the collector runs elsewhere, and finalizers' code
// steps): when the count from there runs past the stretch, it is counted
// again from the stretch's start, as it was first counted.
func (w *watchProgram) goEval(mm moment) (v string, err, moveErr error) {
	s := w.s
	if moveErr = s.goTo(mm.steps, w.st); moveErr == nil {
		v, err = w.evalHere()
	}
	failed := moveErr
	if failed == nil {
		failed = err
	}
	if failed == nil || !s.p.InProcess || s.exactCounts || !(errors.Is(failed, P.ErrNotRunning) || errors.Is(failed, ErrNoProgram) || errors.As(failed, new(*DivergedError))) {
		return v, err, moveErr
	}
	debugf("eval at %v: %v; counted again from the stretch's start", mm, failed)
	s.exactCounts = true
	defer func() { s.exactCounts = false }()
	s.dirty(mm.steps)
	if moveErr = s.goTo(mm.steps, w.st); moveErr != nil {
		return "", nil, moveErr
	}
	v, err = w.evalHere()
	return v, err, nil
}

func (w *watchProgram) Eval(ctx context.Context, m watch.Moment) (string, error) {
	mm := m.(moment)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	v, err, moveErr := w.goEval(mm)
	if moveErr != nil {
		return "", moveErr
	}
	if errors.Is(err, P.ErrCallStopped) {
		// A signal stopped a call the expression made: one a probe left
		// pending, or the call's own crash. The program stands inside
		// the call: from the moment again, once; the same stop again is
		// the call's own, and the expression has no value here.
		debugf("eval at %v: %v; once more", mm, err)
		w.s.dirty(mm.steps)
		if err := w.s.goTo(mm.steps, w.st); err != nil {
			return "", err
		}
		if v, err = w.evalHere(); errors.Is(err, P.ErrCallStopped) {
			w.s.dirty(mm.steps)
			err = &watch.NoValueError{Err: err}
		}
	}
	debugf("eval at %v: %q %v", mm, v, err)
	if err != nil && w.s.lean && w.s.leanAttached && w.leave != nil {
		// It may need symbols a lean attach left out.
		if lerr := w.leave(); lerr != nil {
			return "", lerr
		}
		v, err = w.evalHere()
	}
	if err == nil && w.endVal == nil && w.s.p.EvalFailed != nil && w.s.p.EvalFailed.MatchString(v) {
		// The expression raises now: nothing to watch for.
		return "", &watch.NoValueError{Err: errors.New(v)}
	}
	if err == nil && w.endVal == nil {
		w.endVal = &v
	} else if p := w.s.probeOf(mm.steps); err == nil && p != nil {
		if key := w.endKey(stretch{base: p.base, cont: p.cont}); key != w.earlyIn {
			w.early, w.earlyIn = 0, key
		}
		if v == *w.endVal {
			w.early = 0
		} else {
			w.early++
		}
	}
	return v, err
}

// evalHere evaluates the expression in the live program.
func (w *watchProgram) evalHere() (string, error) {
	if !w.s.running {
		return "", ErrNoProgram
	}
	// A call in the expression must not stop at the person's breakpoints.
	put, err := w.s.useBreakpoints([]string{})
	if err != nil {
		return "", err
	}
	cmd := w.s.p.EvalCmd(w.expr)
	if w.s.p.ScopedEvalCmd != nil {
		cmd = w.s.p.ScopedEvalCmd(w.expr, w.scope)
	}
	out, err := w.s.query(cmd)
	if perr := put(); err == nil {
		err = perr
	}
	if err != nil {
		return "", err
	}
	w.st.evals++
	v, err := w.s.p.ParseEval(out)
	if err != nil && !errors.Is(err, P.ErrNotRunning) && !errors.Is(err, P.ErrCallStopped) {
		// The debugger answered, without a value: out of scope, memory
		// not mapped yet. The search counts it as another value.
		return "", &watch.NoValueError{Err: err}
	}
	return v, err
}

func (w *watchProgram) Keep(m watch.Moment) {
	// The search now only looks after m: a snapshot there means no stretch
	// runs more than about twice, and later reverse commands reuse it.
	// A short hit count replays from its anchor faster than a snapshot
	// is taken.
	mm := m.(moment)
	switch {
	case len(mm.steps) == 0:
	case hitOf(mm) != nil && !w.worthKeeping(mm):
		debugf("keep %v: a short count, not worth a snapshot", mm)
	case !w.s.running || !w.s.Timeline.Is(mm.steps):
		debugf("keep %v: not here (running %v, now %v)", mm, w.s.running, moment{steps: w.s.Timeline.Steps()})
	default:
		if _, err := w.s.Checkpoint(true); err == nil {
			w.st.snapshots++
		} else {
			debugf("keep %v: %v", mm, err)
		}
	}
}

// Stops implements watch.Stopper: the ends of the person's own commands
// in end's history after the moment after, which the search evaluates
// once it has landed, to find a later change than the one it landed on.
func (w *watchProgram) Stops(after, end watch.Moment) []watch.Moment {
	am, em := after.(moment), end.(moment)
	// The ends after the steps after shares with end: if after is one of
	// end's boundaries, the next; if it lies inside a command of end's,
	// that command's end.
	k := 0
	for k < len(am.steps) && k < len(em.steps) && am.steps[k].Same(em.steps[k]) {
		k++
	}
	var stops []watch.Moment
	for i := k + 1; i < len(em.steps); i++ {
		if em.steps[i-1].Origin == history.Typed {
			stops = append(stops, moment{steps: em.steps[:i]})
		}
	}
	return stops
}

func (w *watchProgram) Split(ctx context.Context, a, b watch.Moment) (watch.Seq, error) {
	am, bm := a.(moment), b.(moment)
	w.stepLeaf, w.leafCmd = false, ""
	if seq, ok, err := w.hitsSplit(ctx, am, bm); ok || err != nil {
		return seq, err
	}
	if seq, ok, err := w.probeSplit(ctx, am, bm); ok || err != nil {
		return seq, err
	}
	pa, pb := w.s.probeOf(am.steps), w.s.probeOf(bm.steps)
	if (pa != nil && !hasSource(pa.step) || pb != nil && !hasSource(pb.step)) && proc.Threads(w.s.pid) > 1 {
		// A probe in code without source, with other threads: a in a
		// wait (pthread_join) that only the other threads end, or b in
		// a call (its dynamic linking, a wait) inside a statement
		// `next` runs whole. Counting `next`s from a cannot divide the
		// stretch; the round-robin from a steps into the calls and
		// finds the thread (whichThread).
		return nil, nil
	}
	if pb != nil && pa != pb && (am.then == nil || am.then.Cmd.Op == P.OpContinue) {
		// b is a moment inside a continue that only a snapshot names:
		// count the statements up to it.
		return w.countTo(ctx, am.steps, pb)
	}
	var cmds []history.Step
	if history.IsPrefix(am.steps, bm.steps) {
		cmds = bm.steps[len(am.steps):]
	} else if am.then != nil {
		cmds = []history.Step{*am.then}
	} else {
		return nil, fmt.Errorf("cannot tell how %v leads to %v", am, bm)
	}
	if len(cmds) > 1 {
		// The person's own command boundaries.
		var ms watch.Moments
		for i := 1; i < len(cmds); i++ {
			ms = append(ms, moment{steps: history.With(am.steps, cmds[:i]...)})
		}
		return ms, nil
	}
	if len(cmds) == 0 {
		return nil, nil
	}
	return w.refine(ctx, am.steps, cmds[0])
}

// callerPC is where the selected frame returns to.
func (s *Session) callerPC() (uint64, error) {
	if s.p.CallerCmd == "" {
		return 0, errors.New("no caller address in this debugger")
	}
	out, err := s.query(s.p.CallerCmd)
	if err != nil {
		return 0, err
	}
	return s.p.ParseCaller(out)
}

// refine splits one command into the finer moments inside it.
func (w *watchProgram) refine(ctx context.Context, a []history.Step, c history.Step) (watch.Seq, error) {
	s := w.s
	single := func(op string) *history.Step {
		st := s.synth(op, 1, c.Bps).PartOf(c)
		return &st
	}
	if c.Cmd.Count <= 1 && (c.Cmd.Op == P.OpContinue || c.Cmd.Op == P.OpNext || c.Cmd.Op == P.OpFinish) {
		// Counted in the program (pdb, perl): the moments are "step k",
		// each replayed in one command.
		if n, ok, err := s.stepsOf(ctx, a, c, w.st); err != nil || ok {
			if err != nil || n <= 1 {
				w.stepLeaf = err == nil
				return nil, err
			}
			return repeatSeq{s: s, a: a, op: P.OpStep, n: n - 1, of: c, then: single(P.OpStep)}, nil
		}
	}
	switch {
	case c.Cmd.Kind != P.Forward:
		if !c.Synth() {
			w.leafCmd = c.Cmd.Line
		}
		return nil, nil // set var and friends: one statement's worth
	case (c.Cmd.Op == P.OpNext || c.Cmd.Op == P.OpStep) && c.Cmd.Count > 1:
		// Lazy: a count can be millions.
		return repeatSeq{s: s, a: a, op: c.Cmd.Op, n: c.Cmd.Count - 1, of: c, then: single(c.Cmd.Op)}, nil
	case c.Cmd.Op == P.OpStep:
		w.stepLeaf = true
		return nil, nil
	case c.Cmd.Op == opHits:
		// A count of executions in the history (a reverse-step's last
		// pass): the counts before it, each then a run to the next.
		addr, err := strconv.ParseUint(strings.TrimPrefix(c.Cmd.Args, "0x"), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("bad step %q", c.Cmd.Line)
		}
		h := &hit{base: a, anchor: a, cont: history.Step{Cmd: s.p.Classify(P.OpContinue), Bps: c.Bps, Origin: history.Refined, Of: c.Of}, addr: addr}
		if c.Cmd.Count <= 1 {
			// One execution: a run to it.
			return w.refine(ctx, a, *w.hitMoment(h, 1).then)
		}
		return hitSeq{w: w, h: h, n: c.Cmd.Count - 1}, nil
	case c.Cmd.Op == P.OpNext:
		if err := s.goTo(a, w.st); err != nil {
			return nil, err
		}
		at := s.Timeline.Now()
		d := at.Depth
		caller, cerr := s.callerPC()
		q, err := s.forward(P.OpStep, c.Bps, w.st)
		if err != nil {
			return nil, err
		}
		if q.Stop == P.StopDone && at.At.PC != 0 && q.At == at.At {
			// The step did not move: the thread waits for one that
			// scheduler locking holds (a new thread's start in
			// pthread_create, with glibc's sources). Steps cannot divide
			// this `next`: it is a leaf, and the search for the thread
			// that made the change goes on from it.
			w.stepLeaf = true
			return nil, nil
		}
		inside := q.Depth > d
		if !inside && q.Stop == P.StopDone && q.Depth == d && cerr == nil {
			// The step left this frame and entered another call at the
			// same depth, one the rest of the caller's line makes (the
			// second of two calls on one line): q is inside the `next`,
			// not its end. Its frame returns elsewhere.
			if qc, err := s.callerPC(); err == nil && qc != caller {
				inside = true
			}
		}
		if q.Stop != P.StopDone || !inside {
			w.stepLeaf = true
			return nil, nil // the line made no call fred can step into
		}
		// The moments of the call: q, then the `next`s at its depth, counted
		// in the debugger (one round trip for thousands) and named "q, next
		// k", not listed: a call of a million statements costs a count,
		// not a million histories.
		base := history.With(a, q)
		n, why, err := s.nextsUpTo(ctx, base, c.Bps, P.NextsMode{Shallower: true}, w.st, rewrite.LongWalk)
		if err == nil && why == "limit" {
			// A long call: q, then its return (a continue that native
			// probes and hit counts divide), then the rest of a's line.
			end, ok, err := s.callToReturn(ctx, base, c.Bps, false, false, w.st)
			if err != nil {
				return nil, err
			}
			if ok {
				return watch.Moments{moment{steps: base, then: &end}, moment{steps: history.With(base, end), then: single(P.OpNext)}}, nil
			}
			n, why, err = s.nextsUpTo(ctx, base, c.Bps, P.NextsMode{Shallower: true}, w.st, 0)
		}
		if err != nil {
			return nil, err
		}
		seq := callSeq{head: moment{steps: base, then: single(P.OpNext)},
			nexts: repeatSeq{s: s, op: P.OpNext, a: base, n: n, of: c, then: single(P.OpNext)}}
		if why == "done" {
			// The next that left the call's frame: back in a's frame at
			// another statement of a's line (two calls on one line), the
			// `next` from a goes on from there.
			loc, lerr := s.location()
			dr, derr := s.depth()
			if lerr == nil && derr == nil && dr == d && loc.Line == at.At.Line && loc.File == at.At.File && loc.Function == at.At.Function {
				seq.tail = moment{steps: history.With(base, s.synth(P.OpNext, n+1, c.Bps).PartOf(c)), then: single(P.OpNext)}
			}
		}
		return seq, nil
	case c.Cmd.Op == P.OpContinue || c.Cmd.Op == P.OpFinish:
		if c.Cmd.Op == P.OpFinish && s.p.CallerCmd != "" {
			// gdb: a long finish is a continue to the return address,
			// which native probes and hit counts divide (the two ends
			// are one moment); a short one, its `next`s.
			if err := s.goTo(a, w.st); err != nil {
				return nil, err
			}
			n, why, err := s.nextsUpTo(ctx, a, c.Bps, P.NextsMode{Shallower: true}, w.st, rewrite.LongWalk)
			if err != nil {
				return nil, err
			}
			if why != "limit" {
				return repeatSeq{s: s, op: P.OpNext, a: a, n: n, of: c, then: single(P.OpNext)}, nil
			}
			end, ok, err := s.callToReturn(ctx, a, c.Bps, false, false, w.st)
			if err != nil {
				return nil, err
			}
			if ok {
				return watch.Moments{moment{steps: history.With(a, end)}}, nil
			}
		}
		// Count the `next`s the command is made of; the moments are then
		// "next k", replayed by the debugger in one command.
		n, err := s.rewriter(ctx, w.st).CountNexts(a, c)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			// One `next` is the whole command: it may make a call to
			// step into, as any `next` of a longer one.
			return w.refine(ctx, a, *single(P.OpNext))
		}
		return repeatSeq{s: s, op: P.OpNext, a: a, n: n, of: c, then: single(P.OpNext)}, nil
	}
	if !c.Synth() {
		w.leafCmd = c.Cmd.Line
	}
	return nil, nil // until, advance, stepi...: not refined
}

// callSeq is the moments of a call a `next` made: the step into it, the
// `next`s in it, and the statement of the caller's line it came back to,
// if that is not yet the end of the `next`.
type callSeq struct {
	head  moment
	nexts repeatSeq
	tail  watch.Moment // nil if the call's return ends the `next`
}

func (q callSeq) Len() int {
	n := 1 + q.nexts.Len()
	if q.tail != nil {
		n++
	}
	return n
}

func (q callSeq) At(i int) watch.Moment {
	switch {
	case i == 0:
		return q.head
	case i <= q.nexts.Len():
		return q.nexts.At(i - 1)
	}
	return q.tail
}

// reverseWatch runs fred-reverse-watch.
// reverseWatch: a search in a multi-threaded program that failed on the
// way (a stretch of the threads that ran otherwise when replayed, a
// thread that did not stop) is made once more from where the person is,
// as goTo replays such a stretch once more: the replay log does not order
// everything the threads share.
func (s *Session) reverseWatch(text string) error {
	err := s.reverseWatchTry(text, false)
	var again *againError
	if errors.As(err, &again) {
		s.Printf("%v; searching once more", again.err)
		return s.reverseWatchTry(text, true)
	}
	return err
}

// againError: the search failed in a way that another may not.
type againError struct{ err error }

func (e *againError) Error() string { return e.err.Error() }
func (e *againError) Unwrap() error { return e.err }

// mayAgain: the search that failed with err may be made once more (not
// the last try, several threads, not the person's interrupt, not an
// answer).
func (s *Session) mayAgain(err error, last bool) bool {
	var nt *watch.NoTransitionError
	return !last && s.p.Threads != nil && s.running && s.hadThreads() &&
		!errors.Is(err, context.Canceled) && !errors.As(err, &nt) && !errors.Is(err, ErrSessionOver)
}

// hadThreads: the program has more than one thread, or had in this run
// (its replay log's header says it created one: the search crosses
// stretches of several threads, though only one is left at the end).
func (s *Session) hadThreads() bool {
	if proc.Threads(s.pid) > 1 {
		return true
	}
	path, _ := s.ReplayLog()
	if path == "" {
		return false
	}
	had, _ := replaylog.Threaded(path)
	return had
}

func (s *Session) reverseWatchTry(text string, last bool) error {
	const usage = "fred-reverse-watch [--from N] EXPR"
	from, expr := -1, strings.TrimSpace(text)
	if w, rest := cutField(expr); w == "--from" {
		num, rest := cutField(rest)
		n, err := strconv.Atoi(num)
		if err != nil {
			return &UsageError{Cmd: "fred-reverse-watch", Msg: fmt.Sprintf("%q is not a snapshot number", num), Usage: usage}
		}
		from, expr = n, rest
	}
	if expr == "" {
		return &UsageError{Cmd: "fred-reverse-watch", Msg: "needs an expression", Usage: usage}
	}
	if err := s.needReverse("fred-reverse-watch"); err != nil {
		return err
	}
	if !s.running {
		return errors.New("the program has ended, so the expression has no value now; go back first (fred-reverse-step) and watch from there")
	}
	start := s.firstIndex()
	if from >= 0 {
		sn, ok := s.snaps[from]
		if !ok || sn.run != s.run || !s.Timeline.Extends(sn.Steps) {
			return &NoSnapshotError{ID: from}
		}
		start = len(sn.Steps)
	}
	scope := ""
	if s.p.ScopeCmd != "" {
		// The names are the selected frame's, wherever the search goes.
		out, err := s.query(s.p.ScopeCmd)
		if err != nil {
			return err
		}
		scope, _ = P.ParseTagged(out, "FREDSCOPEKEY ")
	}
	began := time.Now()
	st := &revStats{}
	present := s.keepPresent()
	lost := false // going back failed: the present's snapshot is all that is left of it
	defer func() {
		if !lost {
			s.dropUnseen(present)
		}
	}()
	orig := s.Timeline.Steps()
	s.crossed = s.crossedCounts(orig)
	defer func() { s.crossed = nil }()
	w := &watchProgram{s: s, expr: expr, end: orig, scope: scope, watchKind: s.hardwareWatch(scope, expr), st: st, ends: map[string]time.Duration{}, endFrom: map[string]time.Duration{}, hitEnds: map[string]int{}, scanStep: map[string]int{}}
	ctx, stop := s.interruptible()
	defer stop()
	leave := s.enterLeanFor(orig, start)
	w.leave = leave
	defer s.copiesForTimedRuns()()
	res, err := watch.Search(ctx, w, moment{steps: orig[:start]}, moment{steps: orig})
	if lerr := leave(); lerr != nil && err == nil {
		err = lerr
	}
	var nt *watch.NoTransitionError
	if errors.As(err, &nt) && from < 0 && start == 1 && s.startUpBehind() {
		// The present value from main on, as far as fred looked: the
		// change may be in the start-up (a constructor). Its snapshot
		// is at the entry point, without source: no lean attaches.
		// Another value there counts, and memory it cannot read yet (a
		// pointer a constructor sets); names that do not exist before
		// main (main's locals) are no change.
		looked, value := nt.Looked, nt.Value
		var nv *watch.NoValueError
		switch v, eerr := w.Eval(ctx, moment{}); {
		case eerr == nil && v != value, errors.As(eerr, &nv) && s.p.NoName != nil && !s.p.NoName.MatchString(nv.Error()):
			start = 0
			if res, err = watch.Search(ctx, w, moment{}, moment{steps: orig}); errors.As(err, &nt) {
				nt.Looked += looked
			}
		case eerr == nil || errors.As(eerr, &nv):
		case errors.Is(eerr, context.Canceled) || errors.Is(eerr, ErrSessionOver):
			err = eerr
		default:
			// The answer from main on stands.
			debugf("reverse-watch: at snapshot %d: %v", entrySnap, eerr)
		}
	}
	const name = "fred-reverse-watch"
	if err != nil {
		if gerr := s.goBack(err, orig, st, &lost); gerr != nil {
			return gerr
		}
		if s.mayAgain(err, last) {
			return &againError{err}
		}
		if errors.As(err, &nt) {
			return fmt.Errorf("'%s' is %s both at the start of the search (%s) and now, and at the %s fred looked at in between: no change to find; try 'fred-reverse-watch --from N' from a snapshot where it differs", expr, nt.Value, moment{steps: orig[:start]}, words.Plural(nt.Looked, "moment"))
		}
		return backError(ctx, name, err)
	}
	landed := res.Landed.(moment)
	if err := s.goTo(landed.steps, st); err != nil {
		return s.rollback(ctx, name, err, orig, st, &lost)
	}
	if s.p.Threads != nil {
		// Another thread may have made the change while this one ran
		// the statement: find which, one statement at a time.
		t, err := s.whichThread(ctx, w, res.Before)
		switch {
		case err == nil && t.LWP != 0:
			if err := s.show(); err != nil {
				return err
			}
			s.Printf("'%s' is %s here; the next statement of %s, in %s at %s:%d, run alone, makes it %s: type '%s' then 'step'",
				expr, res.Before, t, t.Function, filepath.Base(t.File), t.Line, res.After, s.p.Threads.Hold)
			s.laterNotes(res)
			s.Printf("'fred-reverse-watch' took %.2f s (%d snapshots, %d restores, %d replayed commands, %d evaluations)",
				time.Since(began).Seconds(), st.snapshots, st.restores, st.replayed, res.Evals)
			return nil
		case errors.Is(err, ErrNoThread):
			if err := s.goTo(landed.steps, st); err != nil {
				return err
			}
			s.Printf("searching the threads: %v; this is where the history of %s changes it", err, s.threadHere())
		case err != nil:
			if !errors.Is(err, context.Canceled) {
				err = fmt.Errorf("searching the threads: %w", err)
			}
			if gerr := s.goBack(err, orig, st, &lost); gerr != nil {
				return gerr
			}
			if s.mayAgain(err, last) {
				return &againError{err}
			}
			return backError(ctx, name, err)
		}
	}
	if err := w.confirm(landed, res.After); err != nil {
		return s.rollback(ctx, name, err, orig, st, &lost)
	}
	if err := s.show(); err != nil {
		return err
	}
	if t := s.threadHere(); t != "" {
		// A single-threaded stretch of a multi-threaded program.
		s.Printf("'%s' is %s here, in %s; its next step makes it %s", expr, res.Before, t, res.After)
	} else if w.leafCmd != "" {
		s.Printf("'%s' is %s here; your next command, '%s', makes it %s", expr, res.Before, w.leafCmd, res.After)
	} else {
		s.Printf("'%s' is %s here; the next step makes it %s", expr, res.Before, res.After)
	}
	s.scopeNote(expr, scope)
	s.laterNotes(res)
	s.Printf("'fred-reverse-watch' took %.2f s (%d snapshots, %d restores, %d replayed commands, %d native probes, %d evaluations)",
		time.Since(began).Seconds(), st.snapshots, st.restores, st.replayed, st.probes, res.Evals)
	return nil
}

// laterNotes says where the landing may not be the last change: a command
// after it that fred could not watch, or a stop of the person's it could
// not reach again. Every landing says it, the thread search's too: its
// landing is the same change's.
func (s *Session) laterNotes(res watch.Result) {
	if res.NotScanned != "" {
		s.Printf("a later change into %s is not ruled out: %s", res.After, res.NotScanned)
	}
	if res.StopsLost > 0 {
		s.Printf("one of your stops after this moment could not be reached again: a later change into %s may lie past it", res.After)
	}
}

// confirm checks a landing of a single-threaded program that the search
// ended at a statement: one `step` from it must give the expression its
// later value. The search trusts the
// refinements of the history it bisects; one that went wrong (a bug) would
// otherwise land, and say so, in the wrong place. It costs a step, an
// evaluation, and going back to the landing.
func (w *watchProgram) confirm(landed moment, after string) error {
	s := w.s
	if !w.stepLeaf || proc.Threads(s.pid) > 1 {
		// The change is a command of the person's (set var, until...),
		// or another thread may make it (whichThread).
		return nil
	}
	var bps []string
	if n := len(landed.steps); n > 0 {
		bps = landed.steps[n-1].Bps
	}
	q, err := s.forward(P.OpStep, bps, w.st)
	if err != nil {
		return err
	}
	v := "(the program ended)"
	if !q.Ended {
		if v, err = w.evalHere(); err != nil {
			return err
		}
	}
	if v != after {
		return fmt.Errorf("fred-reverse-watch went wrong: it landed at %s, but one step from there '%s' is %s, not %s (please report this)", landed, w.expr, v, after)
	}
	return s.goTo(landed.steps, w.st)
}

// bareNext runs one `next` and says only why it stopped. The live history
// no longer describes the program afterwards, so it is cut back to what is
// known: the next goTo restores.
func (s *Session) bareNext(bps []string, st *revStats) (P.Stop, error) {
	put, err := s.useBreakpoints(bps)
	if err != nil {
		return 0, err
	}
	out, err := s.queryFor(P.OpNext, s.opt.Timeout)
	if perr := put(); err == nil {
		err = perr
	}
	if err != nil {
		return 0, err
	}
	st.replayed++
	s.Timeline.Add(history.Step{Cmd: s.p.Classify(P.OpNext), Bps: bps, Origin: history.Refined})
	stop := s.stopOf(out)
	if stop == P.StopEnded {
		s.running = false
	}
	return stop, nil
}

// scopeNote says which frame the expression was evaluated in when that is
// not the selected one: its names are the frame's the watch began in, as
// a watchpoint's are.
func (s *Session) scopeNote(expr, key string) {
	if s.p.ScopeWhere == nil {
		return
	}
	out, err := s.query(s.p.ScopeWhere(key))
	if err != nil {
		return
	}
	a, err := P.ParseTagged(out, "FREDSCOPE ")
	level, fn, _ := strings.Cut(a, " ")
	if n, cerr := strconv.Atoi(level); err == nil && cerr == nil && n > 0 {
		s.Printf("the names in '%s' are %s's, frame %d here: %s", expr, fn, n, fmt.Sprintf(s.p.ScopeSelect, n))
	}
}
