package fred

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/watch"
)

// Probes of an in-process debugger (pdb, perl -d): a reverse command
// right after a long continue counted that continue's steps again from
// before it, which takes as long as the continue ran (seconds for ten
// million statements). While the person's continue runs, the program
// leaves paused copies of itself now and then (personalities.Probes);
// once it has stopped at a breakpoint, they become snapshots of moments
// inside it, "probes" as gdb's native probes are (native.go), reached
// again only through their snapshot. A reverse-step then counts from the
// latest, a fraction of a second of the program's run before the stop,
// and a search divides the continue at them first (probeSplit).

// probeRun is the probes of one person's continue.
type probeRun struct {
	s      *Session
	f      *ckpt.InterpFork
	slots  []*ckpt.Slot
	before []history.Step
	cmd    P.Command
	stop   chan struct{} // ends the reaper
	reaped chan struct{}
	ended  bool
	live   []P.Probed
}

// probeSlots readies the program's probes for the person's command cmd
// (nil: none readied). end must be called once the command has run,
// before anything can snapshot the program (its probe settings would go
// into the snapshot), and finish after the command's step is recorded.
func (s *Session) probeSlots(cmd P.Command) *probeRun {
	pr := s.p.Probes
	f := s.interpFork()
	if pr == nil || f == nil || cmd.Op != P.OpContinue || !s.running || s.pid == 0 || proc.Threads(s.pid) != 1 {
		return nil
	}
	if proc.Resident(s.pid) > copiesMaxRSS {
		// Each copy keeps the pages the running program changes after
		// it: in a big program, ten copies could double its memory.
		return nil
	}
	s.nslots++
	r := &probeRun{s: s, f: f, slots: make([]*ckpt.Slot, pr.Slots), before: s.Timeline.Steps(), cmd: cmd}
	paths := make([]string, pr.Slots)
	for i := range r.slots {
		sl, err := f.NewSlot(fmt.Sprintf("probe-%d-%d", s.nslots, i))
		if err != nil {
			debugf("probes: %v", err)
			r.closeSlots()
			return nil
		}
		r.slots[i], paths[i] = sl, sl.Path()
	}
	if _, err := s.query(pr.Arm(pr.Every, paths)); err != nil {
		debugf("probes: %v", err)
		r.closeSlots()
		return nil
	}
	r.stop, r.reaped = make(chan struct{}), make(chan struct{})
	go r.reap(s.proc.Cmd.Process.Pid, s.pid, s.keeper.Pid())
	return r
}

// reap collects, while the continue runs, the copies the program kills
// as it thins them out (fred's children: a dozen a second otherwise stay
// zombies until the continue ends). Only dead children that are not the
// interpreter (the one started, or the live one restored: their waits
// are others') or the keeper: nothing else of fred's runs meanwhile.
func (r *probeRun) reap(interp, live, keeper int) {
	defer close(r.reaped)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		for _, pid := range proc.Children(os.Getpid()) {
			if pid == interp || pid == live || pid == keeper {
				continue
			}
			if st, err := ckpt.ProcState(pid); err == nil && st == 'Z' {
				proc.Reap(pid, 0)
			}
		}
	}
}

func (r *probeRun) closeSlots() {
	for _, sl := range r.slots {
		if sl != nil {
			sl.Close() // those no snapshot took
		}
	}
}

// end stops the program's probes and learns which copies it left.
func (r *probeRun) end() {
	if r.ended {
		return
	}
	r.ended = true
	close(r.stop)
	<-r.reaped
	s := r.s
	out, err := s.query(s.p.Probes.Collect)
	if err == nil {
		var dead []int
		r.live, dead, err = P.ParseProbed(out)
		for _, pid := range dead {
			r.kill(pid)
		}
	}
	if err != nil {
		debugf("probes: %v", err)
	}
}

func (r *probeRun) kill(pid int) {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	proc.Reap(pid, r.s.opt.Timeout)
}

// finish keeps the copies as snapshots if the command was a continue that
// stopped at a breakpoint, and ends them otherwise.
func (r *probeRun) finish() {
	r.end()
	defer r.closeSlots()
	s := r.s
	steps := s.Timeline.Steps()
	keep := s.snap != nil && len(steps) == len(r.before)+1 && history.IsPrefix(r.before, steps) && s.running
	var cont history.Step
	if keep {
		cont = steps[len(steps)-1]
		keep = cont.Cmd.Line == r.cmd.Line && cont.Stop == P.StopBreakpoint && cont.Known() && !cont.Ended
	}
	for _, l := range r.live {
		if !keep || l.Slot >= len(r.slots) || !s.keepProbe(r.f, r.slots[l.Slot], l.Pid, r.before, cont) {
			r.kill(l.Pid)
		}
	}
	if keep && len(r.live) > 0 {
		debugf("probes: %d kept in %q", len(r.live), r.cmd.Line)
		s.standAt(s.Timeline.Steps()) // the marks anew
		s.prune()
	}
}

// keepProbe makes the copy pid, waiting on slot sl, a snapshot of a moment
// inside the continue cont run from base. A copy of a program that writes
// files is not kept: the files changed since, and nothing says how they
// were at the probe.
func (s *Session) keepProbe(f *ckpt.InterpFork, sl *ckpt.Slot, pid int, base []history.Step, cont history.Step) bool {
	if st, err := ckpt.ProcState(pid); err != nil || st == 'Z' || st == 'X' {
		return false
	}
	if s.files != nil {
		m, err := s.files.Mark(pid)
		if err != nil {
			return false
		}
		s.files.Drop(m)
		if len(m.Files) > 0 {
			return false
		}
	}
	cs := f.Adopt(sl, pid, s.nextSnap+1)
	s.keeper.Watch(pid)
	p := &probe{base: base, cont: cont, person: true, gen: s.nslots}
	s.addProbe(p)
	var marks []history.Mark
	for _, m := range s.Timeline.Marks() {
		if m.Index <= len(base) {
			marks = append(marks, m)
		}
	}
	s.addSnap(&snap{Snapshot: cs, Auto: true, run: s.run, via: f, threads: 1,
		Steps: history.With(base, p.step), Marks: marks})
	return true
}

// passes says whether the continue c ran with a breakpoint that lets
// crossings pass (an ignore count). A count or a run started inside it
// (from a probe, a hit count, a jump near its stop) would start that
// count afresh and stop crossings too late: only its start serves.
func (s *Session) passes(c history.Step) bool {
	return s.p.Passes != nil && slices.ContainsFunc(c.Bps, s.p.Passes.MatchString)
}

// passesIn refuses a command the rewriting of a reverse command makes up
// with breakpoints bps, one of which lets crossings pass and was crossed
// in the history (its count went down), in a debugger that runs each
// such command with the breakpoints set afresh (gdb): its ignore count
// would start again at each. Where the count never moved, starting it
// afresh changes nothing. An in-process debugger counts a stretch in one
// command from the continue's start.
func (s *Session) passesIn(bps []string) error {
	if s.p.InProcess || s.p.Passes == nil || s.crossed != nil && len(s.crossed) == 0 {
		return nil // (every made-up command asks: the usual answer costs no match)
	}
	i := slices.IndexFunc(bps, func(b string) bool {
		return (s.crossed == nil || s.crossed[b]) && s.p.Passes.MatchString(b)
	})
	if i < 0 {
		return nil
	}
	loc := func(w string) string {
		w, _, _ = strings.Cut(w, " if ")
		w, _, _ = strings.Cut(w, " ignore ")
		return w
	}
	where := bps[i]
	for _, b := range s.bpList {
		// the person's breakpoint, by the number and place they know
		if loc(b.Where) == loc(bps[i]) {
			where = "breakpoint " + b.Num
			if b.Orig != "" {
				where += " at " + b.Orig
			}
		}
	}
	return &PassesError{Where: where}
}

// crossedCounts are the breakpoints with an ignore count (as Bps names
// them) that some step of steps ran with and left otherwise: the count
// went down, or ran out.
func (s *Session) crossedCounts(steps []history.Step) map[string]bool {
	crossed := map[string]bool{}
	if s.p.Passes == nil {
		return crossed
	}
	for i, st := range steps {
		after := s.bps
		if i+1 < len(steps) {
			after = steps[i+1].Bps
		}
		for _, b := range st.Bps {
			if s.p.Passes.MatchString(b) && !slices.Contains(after, b) {
				crossed[b] = true
			}
		}
	}
	return crossed
}

// probesIn are the probes kept inside the continue last run from before,
// the latest first.
func (s *Session) probesIn(before []history.Step, last history.Step) []*probe {
	if s.passes(last) {
		return nil
	}
	var ps []*probe
	gen := 0
	for i := len(s.order) - 1; i >= 0; i-- {
		sn := s.snaps[s.order[i]]
		p := s.probeOf(sn.Steps)
		if p != nil && sn.run == s.run && p.person && p.cont.Same(last) && history.Equal(p.base, before) {
			ps = append(ps, p)
			gen = max(gen, p.gen)
		}
	}
	// The same continue run again from the same moment left probes of
	// its own: their places differ from the first run's.
	return slices.DeleteFunc(ps, func(p *probe) bool { return p.gen != gen })
}

// stepsFromProbe counts the steps of the continue last from the latest of
// its probes that lies before its stop: the stop is "probe, step n". ok
// is false when no probe serves.
func (m sessionMover) stepsFromProbe(before []history.Step, last history.Step) ([]history.Step, int, bool, error) {
	s := m.s
	for _, p := range s.probesIn(before, last) {
		at := history.With(p.base, p.step)
		if err := m.GoTo(at); err != nil {
			if m.ctx.Err() != nil {
				return nil, 0, false, err
			}
			debugf("probes: probe %d: %v", p.id, err)
			continue // the one before, or the whole continue
		}
		if now := s.Timeline.Now(); now.At == last.At || now.Ended {
			// At the stop's line: the stop itself, for all fred can
			// tell (a breakpoint there would have ended the continue).
			continue
		}
		t0 := time.Now()
		n, ok, err := s.stepsOf(m.ctx, at, last, m.st)
		debugf("probes: %d steps from probe %d to the stop (%v), ok %v", n, p.id, time.Since(t0), ok)
		if ok && err == nil {
			p.toStop = n
			return at, n, ok, err
		}
		if m.ctx.Err() != nil {
			return nil, 0, false, m.ctx.Err()
		}
		debugf("probes: counting from probe %d: %v", p.id, err)
	}
	return nil, 0, false, nil
}

// probesOf are the probes kept inside the continue cont run from base,
// in the order the program left them.
func (s *Session) probesOf(base []history.Step, cont history.Step) []*probe {
	ps := s.probesIn(base, cont)
	slices.Reverse(ps)
	return ps
}

// toStop is how many steps the probe p lies before its continue's stop,
// counted once.
func (s *Session) toStop(ctx context.Context, p *probe, st *revStats) (int, error) {
	if p.toStop > 0 {
		return p.toStop, nil
	}
	n, ok, err := s.stepsOf(ctx, history.With(p.base, p.step), p.cont, st)
	if err != nil {
		return 0, err
	}
	if !ok || n <= 0 {
		return 0, fmt.Errorf("counting the steps from %s to the stop of '%s': the count did not end there", p.step.Label(), p.cont.Label())
	}
	p.toStop = n
	return n, nil
}

// probeOffset is how many steps into its continue the probe p lies: the
// continue's steps, counted from its start, less those from p to its stop.
// It costs a count of the whole continue, once.
func (s *Session) probeOffset(ctx context.Context, p *probe, st *revStats) (int, error) {
	if p.offset > 0 {
		return p.offset, nil
	}
	rest, err := s.toStop(ctx, p, st)
	if err != nil {
		return 0, err
	}
	n, ok, err := s.stepsOf(ctx, p.base, p.cont, st)
	if err != nil {
		return 0, err
	}
	if !ok || n <= rest {
		return 0, fmt.Errorf("counting the steps of '%s': the count did not end at its stop", p.cont.Label())
	}
	p.offset = n - rest
	debugf("probes: probe %d is step %d of %d", p.id, p.offset, n)
	return p.offset, nil
}

// stepsBefore is how many steps lie between the probe before p (or the
// continue's start: prev nil) and p.
func (s *Session) stepsBefore(ctx context.Context, p *probe, st *revStats) (prev *probe, n int, err error) {
	ps := s.probesOf(p.base, p.cont)
	i := slices.Index(ps, p)
	if i <= 0 {
		n, err = s.probeOffset(ctx, p, st)
		return nil, n, err
	}
	prev = ps[i-1]
	a, err := s.toStop(ctx, prev, st)
	if err != nil {
		return nil, 0, err
	}
	b, err := s.toStop(ctx, p, st)
	if err != nil {
		return nil, 0, err
	}
	if a <= b {
		return nil, 0, fmt.Errorf("probes %d and %d of '%s' are not in order (%d and %d steps before its stop)", prev.id, p.id, p.cont.Label(), a, b)
	}
	return prev, a - b, nil
}

// place is where a moment lies in a continue with probes: m steps after
// its start (p nil) or after probe p, or at its stop.
type place struct {
	base []history.Step
	cont *history.Step // nil: not named by the moment (its start)
	p    *probe
	m    int
	stop bool
}

// placeOf says where the moment steps lies in a continue with probes, if
// it does.
func (s *Session) placeOf(steps []history.Step) (place, bool) {
	n := len(steps)
	if n == 0 {
		return place{base: steps}, true
	}
	last := steps[n-1]
	if p := s.probeOf(steps); p != nil {
		return place{base: p.base, cont: &p.cont, p: p}, p.person
	}
	if last.Cmd.Op == P.OpStep && last.Synth() && last.Origin != history.Probe {
		if p := s.probeOf(steps[:n-1]); p != nil {
			return place{base: p.base, cont: &p.cont, p: p, m: last.Cmd.Count}, p.person
		}
		return place{base: steps[:n-1], m: last.Cmd.Count}, true
	}
	if len(s.probesIn(steps[:n-1], last)) > 0 {
		return place{base: steps[:n-1], cont: &last, stop: true}, true
	}
	return place{base: steps}, true
}

// probeSplit is Split for a stretch of a continue in which the program
// left probes: the probes between a and b first, each a moment reached by
// its snapshot; between two of them, or a probe and the stop, the steps
// counted from the earlier (the difference of their distances to the
// stop, each counted once from there); only before the first, the steps
// from the continue's start, which costs a count of the whole continue.
// ok is false for another stretch.
func (w *watchProgram) probeSplit(ctx context.Context, am, bm moment) (watch.Seq, bool, error) {
	s := w.s
	pb, ok2 := s.placeOf(bm.steps)
	pa, ok1 := s.placeOf(am.steps)
	if ok2 && history.Equal(am.steps, pb.base) {
		// The continue's start, whatever ended there (another
		// continue, a probe).
		pa, ok1 = place{base: pb.base}, true
	}
	if !ok1 || !ok2 || !pb.stop && pb.p == nil || !history.Equal(pa.base, pb.base) || pa.stop {
		return nil, false, nil
	}
	cont := *pb.cont
	if pa.cont != nil && !pa.cont.Same(cont) {
		return nil, false, nil
	}
	if pb.m != 0 {
		return nil, false, nil
	}
	ps := s.probesOf(pb.base, cont)
	if len(ps) == 0 {
		return nil, false, nil
	}
	after := func(p *probe) bool { return pa.p == nil || p.id > pa.p.id }
	before := func(p *probe) bool { return pb.stop || p.id < pb.p.id }
	var ms watch.Moments
	for _, p := range ps {
		if after(p) && before(p) {
			ms = append(ms, moment{steps: history.With(p.base, p.step)})
		}
	}
	if len(ms) > 0 && pa.m == 0 {
		return ms, true, nil
	}
	// Nothing between: count.
	var d int
	var err error
	switch {
	case pb.stop && pa.p == nil:
		return nil, false, nil // the whole continue: refine counts it
	case pb.stop:
		d, err = s.toStop(ctx, pa.p, w.st)
	default:
		var prev *probe
		prev, d, err = s.stepsBefore(ctx, pb.p, w.st)
		if err == nil && prev != pa.p {
			return nil, false, fmt.Errorf("the moment before %s is not after the probe before it", pb.p.step.Label())
		}
	}
	if err != nil {
		return nil, true, err
	}
	d -= pa.m
	if d <= 1 {
		w.stepLeaf = d == 1
		return nil, true, nil
	}
	anchor := pa.base
	if pa.p != nil {
		anchor = history.With(pa.base, pa.p.step)
	}
	then := s.synth(P.OpStep, 1, cont.Bps).PartOf(cont)
	return repeatSeq{s: s, a: anchor, op: P.OpStep, from: pa.m, n: d - 1, of: cont, then: &then}, true, nil
}
