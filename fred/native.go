package fred

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	"github.com/fred-debugger/fred/fred/timed"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/watch"
)

// Native probes: a long `continue` is divided by run time, not by counting
// its statements one debugger round trip each. fred lets the program run
// natively from a known moment for part of the stretch, interrupts it
// (SIGINT, which gdb reports as a stop and does not pass on), brings it to
// the next statement boundary and names that moment "probe N". Where the
// timer hit is not reproducible, so a probe can only be reached again
// through a snapshot taken there (reverse-watch keeps one at every probe
// where the expression still has its earlier value); to tell a probe from
// other passes through the same line, fred records its registers.

// opProbe is the Op of the made-up step that names a probe in a history.
const opProbe = "fred-probe"

// probe is a moment inside a `continue` found by a native probe.
type probe struct {
	id   int
	base []history.Step // the history before the continue
	cont history.Step   // the continue it lies in
	// off is the program's CPU time from the start of the continue to the
	// interrupt: where the probe lies, for choosing the next one.
	off time.Duration
	// from names the moment the run that found it started at ("start",
	// or a probe: anchorKey), and rel is the CPU time from there. Two
	// runs from one moment time alike; runs from different snapshots
	// differ (caches, page faults after a dump), so distances are taken
	// within one starting moment whenever they can be.
	from string
	rel  time.Duration
	fp   string       // registers there
	step history.Step // the step that names it
	// person: a copy the program left while the person's continue ran
	// (an in-process debugger's, probes.go), not found by a timed run;
	// toStop and offset are the steps from it to the continue's stop and
	// from the continue's start to it, once counted (0: not yet).
	person         bool
	toStop, offset int
	gen            int // the continue's run that left it (probes.go)
}

// anchorKey names a probe, or the continue's start (nil), as a moment
// runs start from.
func anchorKey(p *probe) string {
	if p == nil {
		return "start"
	}
	return "p" + strconv.Itoa(p.id)
}

// span is the run time from a to b, and whether runs from one starting
// moment measured it (else it is an estimate along the chain of probes).
func (w *watchProgram) span(st stretch) (time.Duration, bool) {
	ek, aK := w.endKey(st)+"|", anchorKey(st.pa)
	if st.pb == nil {
		if e, ok := w.endFrom[ek+aK]; ok {
			return e, true
		}
		if st.pa != nil {
			if e, ok := w.endFrom[ek+st.pa.from]; ok && e > st.pa.rel {
				return e - st.pa.rel, true
			}
		}
	} else {
		if st.pb.from == aK {
			return st.pb.rel, true
		}
		if st.pa != nil && st.pb.from == st.pa.from {
			return st.pb.rel - st.pa.rel, true
		}
	}
	if st.offB < 0 {
		// Not run natively to its end yet: the person's continue took
		// this long, debugger included, so the program's part is less.
		return st.cont.Took - st.offA, false
	}
	return st.offB - st.offA, false
}

// nativeProbes: native probes and hit counts divide long continues
// (FRED_NATIVE_PROBES=0 turns them off, leaving the counting walk).
var nativeProbes = os.Getenv("FRED_NATIVE_PROBES") != "0"

// debugProbes prints each timed run on stderr (FRED_DEBUG_PROBES=1).
var debugProbes = os.Getenv("FRED_DEBUG_PROBES") == "1"

// minNative is the shortest stretch (in program CPU time) fred divides by
// native probes; below it, interrupting lands too unevenly, and counting
// executions (hits.go) is cheaper.
var minNative = 60 * time.Microsecond

// sameMoment: two places with the same registers less than this much run
// time apart are taken for one moment (in a loop, registers alone can
// repeat from one turn to the next).
const sameMoment = 20 * time.Microsecond

// ProbeGoneError is a moment inside a `continue` whose snapshot is gone:
// it cannot be replayed.
type ProbeGoneError struct{ Line string }

func (e *ProbeGoneError) Error() string {
	return fmt.Sprintf("the snapshot of a moment found by run time (%s) is gone; that moment cannot be reached again", e.Line)
}

// probeOf is the probe a history ends at, or nil.
func (s *Session) probeOf(steps []history.Step) *probe {
	if len(steps) == 0 {
		return nil
	}
	last := steps[len(steps)-1]
	if last.Cmd.Op != opProbe {
		return nil
	}
	id, _ := strconv.Atoi(last.Cmd.Args)
	return s.probes[id]
}

// timedTarget is the live program as timed runs see it.
type timedTarget struct{ s *Session }

func (t timedTarget) Pid() int { return t.s.pid }
func (t timedTarget) Resume(timeout time.Duration) (string, error) {
	return t.s.queryFor(t.s.p.Classify(P.OpContinue).Line, timeout)
}
func (t timedTarget) UseBreakpoints(bps []string) (func() error, error) {
	return t.s.useBreakpoints(bps)
}
func (t timedTarget) StopOf(out string) P.Stop { return t.s.stopOf(out) }

func init() { timed.Debugf = debugf }

// settle brings an interrupted program to a statement boundary and says
// why the last step stopped ("done" when it got there).
// settle brings the program to the start of a statement with source, at
// most depth frames deep (0: any depth).
func (s *Session) settle(depth int) (string, error) {
	out, err := s.query(fmt.Sprintf(s.p.Stepper.Settle, depth))
	if err != nil {
		return "", err
	}
	return P.ParseTagged(out, "FREDSETTLE ")
}

// fingerprint is the program's registers now.
func (s *Session) fingerprint() (string, error) {
	out, err := s.query(s.p.Stepper.Fingerprint)
	if err != nil {
		return "", err
	}
	return P.ParseTagged(out, "FREDFP ")
}

// dirty says the live program no longer matches any history (an interrupt
// may be pending): the next goTo restores a snapshot.
func (s *Session) dirty(base []history.Step) {
	s.standAt(history.With(base, history.Step{Cmd: P.Command{Line: "(interrupted)", Op: "fred-interrupted"}, Stop: P.StopSignal, Origin: history.Interrupted}))
}

// nexts counts `next`s in the debugger itself, in chunks so that Ctrl-C
// and the deadlines still apply. It returns the total and why the last
// chunk stopped. The live history is left naming where the program is
// only as "bps: after N nexts"; the next goTo restores.
func (s *Session) nexts(ctx context.Context, from []history.Step, bps []string, mode P.NextsMode, st *revStats) (int, string, error) {
	return s.nextsUpTo(ctx, from, bps, mode, st, 0)
}

// nextsUpTo is nexts that stops after at most max `next`s (0: no limit
// but rewrite.MaxWalk), with why "limit" if it got there.
func (s *Session) nextsUpTo(ctx context.Context, from []history.Step, bps []string, mode P.NextsMode, st *revStats, max int) (int, string, error) {
	chunk := 2000
	if max > 0 {
		chunk = min(chunk, max)
	}
	put, err := s.useBreakpoints(bps)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = put() }()
	total := 0
	why := "limit"
	for why == "limit" && (max == 0 || total < max) {
		if err := ctx.Err(); err != nil {
			return 0, "", err
		}
		if total >= rewrite.MaxWalk {
			return 0, "", fmt.Errorf("more than %d statements to count; going back over them is not supported yet", rewrite.MaxWalk)
		}
		out, err := s.queryFor(s.p.Stepper.Nexts(chunk, mode), s.opt.Timeout+time.Duration(chunk)*10*time.Millisecond)
		if err != nil {
			return 0, "", err
		}
		r, err := P.ParseNexts(out)
		if err != nil {
			return 0, "", err
		}
		total += r.N
		why = r.Why
		st.replayed += r.N
	}
	last := s.synth(P.OpNext, total+1, bps)
	last.Stop = P.StopBreakpoint // not a finished count: along() must not extend it
	s.standAt(history.With(from, last))
	if why == "exited" {
		s.running = false
	}
	return total, why, nil
}

// countNexts is the counter of sessionMover: the `next`s a continue or a
// finish is made of, counted in the debugger.
func (m sessionMover) CountNexts(before []history.Step, last history.Step) (int, bool, error) {
	s := m.s
	if s.p.Stepper == nil || (last.Cmd.Op != P.OpContinue && last.Cmd.Op != P.OpFinish) {
		return 0, false, nil
	}
	if err := m.GoTo(before); err != nil {
		return 0, true, err
	}
	n, _, err := s.nexts(m.ctx, before, last.Bps, P.NextsMode{Shallower: last.Cmd.Op == P.OpFinish}, m.st)
	return n, true, err
}

// stretch is a part of one `continue` that native probes can divide: from
// its start or a probe in it, to its end or a later probe.
type stretch struct {
	base       []history.Step
	cont       history.Step
	pa, pb     *probe // nil: the continue's start, its end
	offA, offB time.Duration
}

// stretchOf says whether a and b bound a stretch of one `continue`.
func (w *watchProgram) stretchOf(a, b moment) (stretch, bool) {
	s := w.s
	var st stretch
	st.pa, st.pb = s.probeOf(a.steps), s.probeOf(b.steps)
	switch {
	case st.pa != nil:
		st.base, st.cont = st.pa.base, st.pa.cont
	case st.pb != nil:
		st.base, st.cont = st.pb.base, st.pb.cont
	case len(b.steps) == len(a.steps)+1 && history.IsPrefix(a.steps, b.steps):
		st.base, st.cont = a.steps, b.steps[len(a.steps)]
	default:
		return st, false
	}
	c := st.cont
	if c.Cmd.Op != P.OpContinue || c.Cmd.Count > 1 || c.Ended || !c.Known() || s.passes(c) {
		return st, false
	}
	if st.pa == nil && !history.Equal(a.steps, st.base) || st.pa != nil && !history.Equal(st.pa.base, st.base) {
		return st, false
	}
	if st.pb == nil && !history.Equal(b.steps, history.With(st.base, c)) || st.pb != nil && !history.Equal(st.pb.base, st.base) {
		return st, false
	}
	if st.pa != nil {
		st.offA = st.pa.off
	}
	st.offB = -1
	if st.pb != nil {
		st.offB = st.pb.off
	} else if d, ok := w.ends[w.endKey(st)]; ok {
		st.offB = d
	}
	return st, true
}

func (w *watchProgram) endKey(st stretch) string {
	return strconv.Itoa(len(st.base)) + " " + st.cont.Cmd.Line
}

// Between is watch.Bisector: a moment about halfway through a stretch of
// one `continue`, found by run time (a probe) while the stretch is long,
// then by counting executions (hits.go); the program is left there.
func (w *watchProgram) Between(ctx context.Context, a, b watch.Moment) (watch.Moment, error) {
	s := w.s
	if !nativeProbes || s.p.Stepper == nil || s.p.Tracer == nil || w.noNative {
		return nil, nil
	}
	am, bm := a.(moment), b.(moment)
	if hitOf(am) == nil && hitOf(bm) == nil {
		m, err := w.timeBetween(ctx, am, bm)
		if m != nil || err != nil {
			return m, err
		}
	}
	return w.hitsScan(ctx, am, bm)
}

// timeBetween is a probe about halfway, in run time, through a stretch of
// one `continue`, or nil when the stretch is too short for that.
func (w *watchProgram) timeBetween(ctx context.Context, am, bm moment) (watch.Moment, error) {
	s := w.s
	minSpan := minNative
	if s.hitCounts() != nil {
		// No hit counts to divide a short stretch: divide it further by
		// run time, however unevenly the interrupts land, before the
		// `next`s count what is left.
		minSpan = minNative / 4
	}
	st, ok := w.stretchOf(am, bm)
	if !ok {
		return nil, nil
	}
	// Runs start at a: the continue's start, or a probe kept by the
	// search (a snapshot) or live.
	from := st.base
	if st.pa != nil {
		from = history.With(st.pa.base, st.pa.step)
		if !s.hasSnapshotAt(from) && !(s.running && s.Timeline.Is(from)) {
			return nil, nil
		}
	}
	aK := anchorKey(st.pa)
	triedEnd := false
	shrink := 1.0
	failed := 0 // tries that ended in an error
	for try := 0; try < 8; try++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		span, measured := w.span(st)
		debugf("time stage: %v from %s (measured %v)", span, aK, measured)
		target := time.Duration(float64(span) / 2 * shrink)
		if w.late {
			target = time.Duration(float64(span) * 3 / 4 * shrink)
		}
		if w.early > 1 {
			// Probes have landed short of the change again and again:
			// run times do not carry over from run to run (here, on the
			// DAG benchmark, runs of 0.1-2 ms covered 3 to 6 times less
			// of the program per ms than runs of 5-15 ms from the same
			// snapshot), so the stretch is longer than it seems. Reach
			// further each time, as a gallop does.
			target *= time.Duration(1) << min(w.early-1, 4)
			if measured {
				target = min(target, time.Duration(float64(span)*0.75*shrink))
			}
		}
		switch {
		case measured:
			w.gallop, w.lastSpan, w.longest = 0, span, max(w.longest, span)
			if span < minSpan {
				return nil, nil
			}
		case span >= minSpan:
		case st.pb == nil && !triedEnd:
			// Only an estimate says the stretch is short, and counting
			// executions over a long one is slow: run to the end
			// first, which measures it.
			target, triedEnd = time.Hour, true
		case st.pb != nil:
			// b was found from another starting moment, too far back to
			// compare with a: probe ever further from a until a probe
			// lies past the change (then it is measured from a).
			// The first probe goes about halfway, if a is halfway through
			// the last stretch measured (run times vary too much between
			// runs for estimates chained across them).
			if w.gallop == 0 {
				w.gallop = max(2*minSpan, w.lastSpan/4)
			} else if try == 0 {
				w.gallop *= 2
			}
			target = time.Duration(float64(w.gallop) * shrink)
		default:
			return nil, nil
		}
		if err := s.goTo(from, w.st); err != nil {
			return nil, err
		}
		r, err := timed.ForCtx(ctx, timedTarget{s}, target, st.cont.Bps, s.opt.Timeout+3*st.cont.Took)
		if err != nil {
			s.dirty(st.base) // it may have run on
			return nil, err
		}
		w.st.probes++
		if r.Stop != P.StopSignal || !r.Fired {
			// The continue ended before the interrupt. An interrupt
			// sent too late may still be pending.
			if r.Fired || r.Stop != P.StopBreakpoint {
				s.dirty(st.base)
			} else {
				s.standAt(history.With(st.base, st.cont))
			}
			if r.Stop == P.StopEnded {
				s.running = false
			}
			if st.pb == nil && r.Stop == P.StopBreakpoint {
				// Its distance from a is exact now.
				w.endFrom[w.endKey(st)+"|"+aK] = r.Ran
				w.ends[w.endKey(st)] = st.offA + r.Ran
				if r.Ran <= minSpan {
					return nil, nil // short, or a too near the end to tell apart
				}
			} else {
				shrink /= 2
			}
			continue
		}
		d0 := s.Timeline.Start().Depth
		if len(st.base) > 0 {
			d0 = st.base[len(st.base)-1].Depth
		}
		why, err := s.settle(d0)
		var fp string
		if err == nil && why == "done" {
			fp, err = s.fingerprint()
		}
		if err != nil {
			if errors.Is(err, ErrSessionOver) || ctx.Err() != nil || failed > 0 {
				return nil, err
			}
			// Seen under load in a threaded program after a CRIU
			// restore: gdb lost a thread ("No such process"). The next
			// try restores the program again.
			debugf("probe: %v; once more", err)
			failed++
			s.dirty(st.base)
			continue
		}
		if why != "done" {
			// Settling ran into the continue's own stop (or the end).
			s.dirty(st.base)
			if why == "exited" {
				s.running = false
			}
			shrink /= 2
			continue
		}
		if st.pa != nil && fp == st.pa.fp && r.Ran < sameMoment {
			// The interrupt came before the program moved past a's
			// statement: ask for more.
			shrink *= 1.5
			s.dirty(st.base)
			continue
		}
		if st.pb != nil && measured && (fp == st.pb.fp && r.Ran > span-sameMoment || r.Ran >= span) {
			// At or too near b: run times differ a little between runs,
			// so a probe this late might lie after b.
			s.dirty(st.base)
			shrink /= 2
			continue
		}
		steps, err := s.newProbe(&probe{base: st.base, cont: st.cont, off: st.offA + r.Ran, from: aK, rel: r.Ran, fp: fp})
		if err != nil {
			return nil, err
		}
		cont := st.cont
		w.timed++
		return moment{steps: steps, then: &cont}, nil
	}
	return nil, nil
}

// secondLookSpan is the longest stretch whose probes SecondLook aims
// again: in a longer one a run's fixed costs are too small a part to
// mislead, and each probe costs a run of up to the stretch.
const secondLookSpan = 20 * time.Millisecond

// SecondLook is watch.SecondLooker. A short program's run time is mostly
// fixed costs (after a restore; on a loaded machine more so): in
// accounts.c, under load, the first 0.9 ms of a 1.6 ms run went by before
// the program had opened its accounts, and again from each probe, so
// every probe of the search for another value landed before the
// invariant held. The second look aims three quarters of the way in.
func (w *watchProgram) SecondLook() bool {
	if w.late || w.timed == 0 || w.longest == 0 || w.longest > secondLookSpan {
		return false
	}
	debugf("time stage: no other value in %d probes of at most %v; aiming later", w.timed, w.longest)
	w.late = true
	return true
}

// newProbe names the place where the program stands, settled after an
// interrupt, as probe p (its id and step filled in here), and makes it the
// live history: p.base, then p's step.
func (s *Session) newProbe(p *probe) ([]history.Step, error) {
	loc, err := s.location()
	if err != nil {
		return nil, err
	}
	depth, err := s.depth()
	if err != nil {
		return nil, err
	}
	s.addProbe(p)
	p.step.At, p.step.Depth = loc, depth
	steps := history.With(p.base, p.step)
	s.standAt(steps)
	return steps, nil
}

// addProbe numbers p and names it with a step of its own, at a place yet
// unknown.
func (s *Session) addProbe(p *probe) {
	s.nprobes++
	p.id = s.nprobes
	p.step = history.Step{Cmd: P.Command{Line: fmt.Sprintf("%s %d", opProbe, p.id), Kind: P.Forward, Op: opProbe, Count: 1, Args: strconv.Itoa(p.id)},
		Stop: P.StopDone, Bps: p.cont.Bps, Origin: history.Probe}.PartOf(p.cont)
	s.probes[p.id] = p
}

// countTo is Split for a stretch that ends at a probe: count the `next`s
// from a until the program has the probe's registers.
func (w *watchProgram) countTo(ctx context.Context, a []history.Step, pb *probe) (watch.Seq, error) {
	s := w.s
	if err := s.goTo(a, w.st); err != nil {
		return nil, err
	}
	n, why, err := s.nexts(ctx, a, pb.cont.Bps, P.NextsMode{FP: pb.fp}, w.st)
	if err == nil && why == "signal" {
		// Seen once under load in a threaded program: an interrupt that
		// came late. From a's snapshot again, once.
		debugf("counting to %s: a signal after %d; once more", pb.step.Cmd.Line, n)
		s.dirty(a)
		if err := s.goTo(a, w.st); err != nil {
			return nil, err
		}
		n, why, err = s.nexts(ctx, a, pb.cont.Bps, P.NextsMode{FP: pb.fp}, w.st)
	}
	if err != nil {
		return nil, err
	}
	if why == "breakpoint" {
		// The probe lies before a after all (run times vary between
		// runs): the continue's own stop, where the expression has its
		// later value, ends the stretch instead. It is the last moment
		// of the sequence, so the search never passes it.
		then := s.synth(P.OpNext, 1, pb.cont.Bps).PartOf(pb.cont)
		return repeatSeq{s: s, op: P.OpNext, a: a, n: n + 1, of: pb.cont, then: &then}, nil
	}
	if why != "done" {
		return nil, fmt.Errorf("counting the statements up to %s: the program stopped (%s) after %d without reaching it again", pb.step.Label(), why, n)
	}
	if n == 1 {
		// b is one `next` after a: refine that `next` as any other.
		return w.refine(ctx, a, s.synth(P.OpNext, 1, pb.cont.Bps).PartOf(pb.cont))
	}
	// The program is at the probe: say so, so the next goTo need not
	// restore if it wants the probe itself.
	at := history.With(a, s.synth(P.OpNext, n, pb.cont.Bps).PartOf(pb.cont))
	at[len(at)-1].At, at[len(at)-1].Depth = pb.step.At, pb.step.Depth
	s.standAt(at)
	then := s.synth(P.OpNext, 1, pb.cont.Bps).PartOf(pb.cont)
	return repeatSeq{s: s, op: P.OpNext, a: a, n: n - 1, of: pb.cont, then: &then}, nil
}

// hasSnapshotAt reports whether a snapshot of this run was taken at steps.
func (s *Session) hasSnapshotAt(steps []history.Step) bool {
	for _, sn := range s.snaps {
		if sn.run == s.run && history.Equal(sn.Steps, steps) {
			return true
		}
	}
	return false
}

var debugStart = time.Now()

// debugf prints a line of the search's trace (FRED_DEBUG_PROBES=1).
func debugf(format string, args ...any) {
	if debugProbes {
		fmt.Fprintf(os.Stderr, "%8.3f "+format+"\n", append([]any{time.Since(debugStart).Seconds()}, args...)...)
	}
}
