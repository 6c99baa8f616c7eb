package fred

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/timed"
	"github.com/fred-debugger/fred/internal/perf"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/watch"
)

// Hit counts: the last stretch of a `continue`, too short to divide by run
// time, is divided by counting how often the program executes one
// instruction (the statement a probe settled at, usually a loop's). The
// kernel counts the executions with a hardware breakpoint (a perf event:
// debug registers, not the performance counters rr needs) and stops the
// program with SIGTRAP at the k-th one, so "the k-th execution of PC after
// this moment" is a moment that replays exactly: it needs no snapshot,
// costs about 10 µs an execution here (a `next` costs 0.1-1 ms), and
// bisecting over k needs no counting walk.

// opHits is the Op of the made-up step "fred-hits ADDR K": run until the
// instruction at ADDR is about to execute for the K-th time.
const opHits = "fred-hits"

// ErrNoHitCounts says the kernel would not count executions: fred counts
// `next`s instead.
var ErrNoHitCounts = perf.ErrNoHitCounts

// openHits is perf.Hits where the debug registers count (hitsCount).
func openHits(tid int, addr uint64, k uint64) (*perf.Event, error) {
	if err := hitsCount(); err != nil {
		return nil, err
	}
	return perf.Hits(tid, addr, k)
}

// hitsCount says whether hardware execution breakpoints count here: in
// some virtual machines the debug registers do nothing for the guest
// (ckpt.DebugRegisters). fred then counts `next`s instead.
func hitsCount() error {
	if err := ckpt.DebugRegisters(); err != nil {
		return fmt.Errorf("%w: %v", ErrNoHitCounts, err)
	}
	return nil
}

// hitCounts says whether this session can count executions: with the
// debug registers (hitsCount), or else with a software breakpoint of the
// debugger's (Stepper.Hits). That costs a trap and a debugger round trip
// an execution, about 240 µs here against 12 µs, but it is as exact, and
// a loop's turn of several statements costs less than one counted `next`.
func (s *Session) hitCounts() error {
	err := hitsCount()
	if err != nil && s.softHits() {
		return nil
	}
	return err
}

// softHits says whether executions are counted by software breakpoints:
// only in a single-threaded program, where a trap stops nothing else (in
// a threaded one the other threads trap at the same instruction too, each
// trap a stop of the whole program).
func (s *Session) softHits() bool {
	return hitsCount() != nil && s.p.Stepper != nil && s.p.Stepper.Hits != nil && s.running && proc.Threads(s.pid) == 1
}

// hitsDeadline is how long counting k executions may take, on top of the
// usual wait for an answer.
func (s *Session) hitsDeadline(k int) time.Duration {
	per := 50 * time.Microsecond
	if s.softHits() {
		per = 2 * time.Millisecond
	}
	return time.Duration(k) * per
}

// hitsLimit is a bound on executions counted in one go, sized for the
// debug registers, for this session: software counting is some twenty
// times slower, so it gets a quarter (the bounds keep a count to seconds).
func (s *Session) hitsLimit(n int) int {
	if s.softHits() {
		return n / 4
	}
	return n
}

// counter counts executions for the live program (hit counts).
func (s *Session) counter() timed.Counter {
	return timed.Counter{T: timedTarget{s}, Ask: s.query, Query: s.queryFor, Stepper: s.p.Stepper, Soft: s.softHits(), Open: openHits,
		Took: func(took time.Duration, k int) {
			if k >= 512 {
				s.hitTime, s.hitsRun = s.hitTime+took, s.hitsRun+k
			}
		}}
}

// where is the selected thread's pc, eflags and LWP.
func (s *Session) where() (pc, flags uint64, lwp int, err error) { return s.counter().Where() }

// runHits resumes the program with the breakpoints bps until the
// instruction at addr is about to run for the k-th time from now (k >= 1),
// unless the program stops by itself first.
func (s *Session) runHits(addr uint64, k int, bps []string, timeout time.Duration) (timed.Hits, error) {
	return s.counter().Run(addr, k, bps, timeout)
}

// hitsStep is the made-up step "fred-hits ADDR K".
func hitsStep(addr uint64, k int, bps []string) history.Step {
	a := "0x" + strconv.FormatUint(addr, 16)
	return history.Step{Cmd: P.Command{Line: fmt.Sprintf("%s %s %d", opHits, a, k), Kind: P.Forward, Op: opHits, Count: k, Args: a},
		Bps: bps, Stop: P.StopDone, Origin: history.Hits}
}

// replayHits runs a fred-hits step again.
func (s *Session) replayHits(step history.Step) (string, error) {
	addr, err := strconv.ParseUint(strings.TrimPrefix(step.Cmd.Args, "0x"), 16, 64)
	if err != nil {
		return "", fmt.Errorf("bad step %q", step.Cmd.Line)
	}
	r, err := s.runHits(addr, step.Cmd.Count, step.Bps, s.opt.Timeout+3*step.Took+s.hitsDeadline(step.Cmd.Count))
	if err != nil {
		return "", err
	}
	if !r.Reached {
		if r.Stop == P.StopEnded {
			s.running = false
		}
		return "", &DivergedError{Want: fmt.Sprintf("execution %d of the instruction at %s", step.Cmd.Count, step.Cmd.Args),
			Got: fmt.Sprintf("a stop after %d", r.N)}
	}
	return "", nil
}

// hit is where a moment lies in a hit count: k executions of addr after
// the anchor, a moment inside the `continue` cont.
type hit struct {
	base   []history.Step // the history before the continue
	anchor []history.Step
	cont   history.Step
	addr   uint64
	k      int
}

// maxScanStep bounds the scan's step (about 2.5 s of counting here).
var maxScanStep = 1 << 18 // a var for the tests

// worthKeeping says whether a snapshot at hit count m pays (see
// Session.worthSnapshot).
func (w *watchProgram) worthKeeping(m moment) bool {
	return w.s.worthSnapshot(w.replayHits(m))
}

// worthSnapshot says whether replaying a count of hits executions takes
// longer than taking a snapshot (counting costs about 10 µs an execution
// here; a fork copy about 8 ms, a CRIU dump 40 to 70 ms).
func (s *Session) worthSnapshot(hits int) bool {
	perHit := 10 * time.Microsecond
	if s.hitsRun > 0 {
		perHit = s.hitTime / time.Duration(s.hitsRun)
	}
	take, ok := s.snapTook[s.backendFor(s.pid).Name()]
	if !ok {
		take = 50 * time.Millisecond
	}
	return time.Duration(hits)*perHit > take
}

// replayHits is how many executions reaching m replays from the snapshot
// nearest before it.
func (w *watchProgram) replayHits(m moment) int {
	h := hitOf(m)
	best := 0
	for _, sn := range w.s.snaps {
		if sn.run != w.s.run {
			continue
		}
		if at, done, ok := along(sn.Steps, m.steps); ok && at == len(m.steps)-1 && done > best {
			best = done
		}
	}
	return h.k - best
}

// hitOf is the hit count a moment ends in, or nil.
func hitOf(m moment) *hit {
	n := len(m.steps)
	if n == 0 || m.steps[n-1].Cmd.Op != opHits || m.hit == nil {
		return nil
	}
	return m.hit
}

func (h *hit) key() string { return fmt.Sprintf("%d %x", len(h.anchor), h.addr) }

// hitMoment is the moment k executions of h.addr after h.anchor.
func (w *watchProgram) hitMoment(h *hit, k int) moment {
	nh := *h
	nh.k = k
	then := w.s.synth(P.OpContinue, 1, append(append([]string{}, h.cont.Bps...), w.s.p.Tracer.AtAddress(h.addr))).PartOf(h.cont)
	return moment{steps: history.With(h.anchor, hitsStep(h.addr, k, h.cont.Bps).PartOf(h.cont)), then: &then, hit: &nh}
}

// hitsScan is Between once run times cannot divide a stretch further:
// from a (an anchor, or a hit count), run on to the scan's next count of
// executions of the instruction at a's anchor, quadrupling the step each
// time, until a count lies past the change. Then the search bisects
// between two counts (Split). nil when hit counts cannot help.
func (w *watchProgram) hitsScan(ctx context.Context, am, bm moment) (watch.Moment, error) {
	s := w.s
	if w.noHits || s.p.Stepper == nil || s.p.Stepper.Where == "" {
		return nil, nil
	}
	if hb := hitOf(bm); hb != nil {
		return nil, nil // both ends are counts: Split bisects them
	}
	h, from := hitOf(am), am.steps
	if h == nil {
		st, ok := w.stretchOf(am, bm)
		if !ok || s.probeOf(bm.steps) == nil && !history.Equal(bm.steps, history.With(st.base, st.cont)) {
			return nil, nil
		}
		if err := s.goTo(am.steps, w.st); err != nil {
			return nil, err
		}
		// Count executions of the statement after a: the continue's
		// start is seldom inside the loop it runs, and a probe that came
		// too early may be at the start still; the next statement is
		// in the loop either way.
		q, err := s.forward("next", st.cont.Bps, w.st)
		if err != nil {
			return nil, err
		}
		if q.Stop != P.StopDone {
			s.dirty(st.base)
			return nil, nil
		}
		anchor := history.With(am.steps, q)
		pc, _, _, err := s.where()
		if err != nil {
			return nil, err
		}
		h, from = &hit{base: st.base, anchor: anchor, cont: st.cont, addr: pc}, anchor
	}
	if _, ok := w.hitEnds[h.key()]; ok {
		return nil, nil // counted to the continue's end already
	}
	if s.probeOf(bm.steps) == nil && !history.Equal(bm.steps, history.With(h.base, h.cont)) {
		return nil, nil // b is a finer moment (a `next` from a): nothing to scan
	}
	step := w.scanStep[h.key()]
	if step == 0 {
		step = 64
	}
	if step > s.hitsLimit(maxScanStep) {
		// Run times said the stretch was short, and it is not: leave it
		// to the counting walk, which refuses what it cannot count.
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Counts run from the anchor or a count: from a itself, when the
	// anchor is a's next statement, the first would be one short.
	if err := s.goTo(from, w.st); err != nil {
		return nil, err
	}
	r, err := s.runHits(h.addr, step, h.cont.Bps, s.opt.Timeout+3*h.cont.Took+s.hitsDeadline(step))
	if errors.Is(err, ErrNoHitCounts) {
		w.noHits = true
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	w.st.probes++
	if !r.Reached {
		// The continue ended first: now the count to its end is known.
		w.hitEnds[h.key()] = h.k + r.N
		if r.Stop == P.StopBreakpoint {
			s.standAt(history.With(h.base, h.cont))
		} else {
			s.dirty(h.anchor)
		}
		if r.Stop == P.StopEnded {
			s.running = false
		}
		return nil, nil
	}
	// Four times the step: each count lies about 4x as far from the anchor
	// as the one before, fewer probes short of the change for a bracket
	// 4x as long to bisect (on the DAG benchmark a little faster, and
	// steadier, than doubling).
	w.scanStep[h.key()] = 4 * step
	m := w.hitMoment(h, h.k+step)
	last := m.steps[len(m.steps)-1]
	lerr := s.learn(&last)
	m.steps = history.With(m.steps[:len(m.steps)-1], last)
	s.standAt(m.steps)
	if lerr != nil {
		return nil, lerr
	}
	return m, nil
}

// hitsSplit is Split between two moments of one hit count (or its anchor
// and a count, or a count and the end of the continue when the count to
// the end is known): the counts in between; and between two consecutive
// counts, the `next`s of one pass.
func (w *watchProgram) hitsSplit(ctx context.Context, am, bm moment) (watch.Seq, bool, error) {
	ha, hb := hitOf(am), hitOf(bm)
	var h *hit
	lo, hi := 0, 0
	switch {
	case hb != nil && (ha != nil && ha.key() == hb.key() || ha == nil && history.Equal(am.steps, hb.anchor)):
		h, hi = hb, hb.k
		if ha != nil {
			lo = ha.k
		}
	case ha != nil:
		if w.s.probeOf(bm.steps) != nil || !history.Equal(bm.steps, history.With(ha.base, ha.cont)) {
			return nil, false, nil
		}
		end, ok := w.hitEnds[ha.key()]
		if !ok {
			// The scan stopped short of the continue's stop (a stretch
			// too long to count): the `next`s from the last count to the
			// stop. (a's own then is only the next count.)
			seq, err := w.refine(ctx, am.steps, ha.cont)
			return seq, true, err
		}
		h, lo, hi = ha, ha.k, end+1
		if hi-lo <= 1 {
			// From the last count to the continue's stop.
			seq, err := w.refine(ctx, am.steps, ha.cont)
			return seq, true, err
		}
	default:
		return nil, false, nil
	}
	if hi-lo <= 1 {
		then := w.hitMoment(h, lo+1).then
		seq, err := w.refine(ctx, am.steps, *then)
		return seq, true, err
	}
	return hitSeq{w: w, h: h, lo: lo, n: hi - lo - 1}, true, nil
}

// hitSeq is the lazy list of counts lo+1 ... lo+n of one hit count.
type hitSeq struct {
	w     *watchProgram
	h     *hit
	lo, n int
}

func (q hitSeq) Len() int              { return q.n }
func (q hitSeq) At(i int) watch.Moment { return q.w.hitMoment(q.h, q.lo+i+1) }
