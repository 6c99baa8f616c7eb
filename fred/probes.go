package fred

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/watch"
)

// Probes of an in-process debugger (pdb): a reverse command right after a
// long continue counted that continue's steps again from before it, which
// takes as long as the continue ran (seconds for ten million statements).
// While the person's continue runs, the program leaves paused copies of
// itself now and then (personalities.Probes); once it has stopped at a
// breakpoint, the latest two become snapshots of moments inside it,
// "probes" as gdb's native probes are (native.go), reached again only
// through their snapshot. The count then starts at the latest probe, a
// fraction of a second of the program's run before the stop.

// probeSlots readies the program's probes for the person's command cmd,
// and returns what collects them once it has run (nil: none readied).
func (s *Session) probeSlots(cmd P.Command) func() {
	pr := s.p.Probes
	f := s.interpFork()
	if pr == nil || f == nil || cmd.Op != P.OpContinue || !s.running || s.pid == 0 || proc.Threads(s.pid) != 1 {
		return nil
	}
	s.nslots++
	var slots [2]*ckpt.Slot
	for i := range slots {
		sl, err := f.NewSlot(fmt.Sprintf("probe-%d-%d", s.nslots, i))
		if err != nil {
			debugf("probes: %v", err)
			for _, sl := range slots[:i] {
				sl.Close()
			}
			return nil
		}
		slots[i] = sl
	}
	if _, err := s.query(pr.Arm(pr.Every, slots[0].Path(), slots[1].Path())); err != nil {
		debugf("probes: %v", err)
		for _, sl := range slots {
			sl.Close()
		}
		return nil
	}
	before := s.Timeline.Steps()
	return func() { s.collectProbes(f, slots, before, cmd) }
}

// interpFork is the in-process debugger's fork backend, if the session
// has one.
func (s *Session) interpFork() *ckpt.InterpFork {
	for _, b := range []ckpt.Snapshotter{s.copies, s.snap} {
		if f, ok := b.(*ckpt.InterpFork); ok {
			return f
		}
	}
	return nil
}

// collectProbes ends the probes of the command cmd, run from the history
// before: the copies left are kept as snapshots if the command was a
// continue that stopped at a breakpoint, and ended otherwise.
func (s *Session) collectProbes(f *ckpt.InterpFork, slots [2]*ckpt.Slot, before []history.Step, cmd P.Command) {
	defer func() {
		for _, sl := range slots {
			sl.Close() // those no snapshot took
		}
	}()
	out, err := s.query(s.p.Probes.Collect)
	if err != nil {
		debugf("probes: %v", err)
		return
	}
	live, dead, err := P.ParseProbed(out)
	if err != nil {
		debugf("probes: %v", err)
		return
	}
	end := func(pid int) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		proc.Reap(pid, s.opt.Timeout)
	}
	for _, pid := range dead {
		end(pid)
	}
	steps := s.Timeline.Steps()
	keep := s.snap != nil && len(steps) == len(before)+1 && history.IsPrefix(before, steps) && s.running
	var cont history.Step
	if keep {
		cont = steps[len(steps)-1]
		keep = cont.Cmd.Line == cmd.Line && cont.Stop == P.StopBreakpoint && cont.Known() && !cont.Ended
	}
	for _, l := range live {
		if !keep || !s.keepProbe(f, slots[l.Slot], l.Pid, before, cont) {
			end(l.Pid)
		}
	}
	if keep && len(live) > 0 {
		debugf("probes: %d kept of %d made in %q", len(live), len(live)+len(dead), cmd.Line)
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
	id := s.nextSnap + 1
	s.nextSnap = id
	cs := f.Adopt(sl, pid, id)
	s.keeper.Watch(pid)
	s.nprobes++
	p := &probe{id: s.nprobes, base: base, cont: cont, person: true}
	p.step = history.Step{Cmd: P.Command{Line: fmt.Sprintf("%s %d", opProbe, p.id), Kind: P.Forward, Op: opProbe, Count: 1, Args: fmt.Sprint(p.id)},
		Stop: P.StopDone, Bps: cont.Bps, Origin: history.Probe}.PartOf(cont)
	s.probes[p.id] = p
	var marks []history.Mark
	for _, m := range s.Timeline.Marks() {
		if m.Index <= len(base) {
			marks = append(marks, m)
		}
	}
	s.snaps[id] = &snap{Snapshot: cs, Auto: true, run: s.run, via: f, threads: 1,
		Steps: history.With(base, p.step), Marks: marks}
	s.order = append(s.order, id)
	return true
}

// probesIn are the probes kept inside the continue last run from before,
// the latest first.
func (s *Session) probesIn(before []history.Step, last history.Step) []*probe {
	var ps []*probe
	for i := len(s.order) - 1; i >= 0; i-- {
		sn := s.snaps[s.order[i]]
		p := s.probeOf(sn.Steps)
		if p != nil && sn.run == s.run && p.person && p.cont.Same(last) && history.Equal(p.base, before) {
			ps = append(ps, p)
		}
	}
	return ps
}

// stepsFromProbe counts the steps of the continue last from the latest of
// its probes that lies before its stop: the stop is "probe, step n". ok
// is false when no probe serves.
func (m sessionMover) stepsFromProbe(before []history.Step, last history.Step) ([]history.Step, int, bool, error) {
	s := m.s
	for _, p := range s.probesIn(before, last) {
		at := history.With(p.base, p.step)
		if err := m.GoTo(at); err != nil {
			return nil, 0, false, err
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
		}
		if err != nil || ok {
			return at, n, ok, err
		}
	}
	return nil, 0, false, nil
}

// probeOffset is how many steps into its continue the probe p lies: the
// continue's steps, counted from its start, less those from p to its stop.
// It costs a count of the whole continue, once: a reverse-step from the
// probe's moment, or a search that divides the stretch before it.
func (s *Session) probeOffset(ctx context.Context, p *probe, st *revStats) (int, error) {
	if p.offset > 0 {
		return p.offset, nil
	}
	at := history.With(p.base, p.step)
	if p.toStop == 0 {
		n, ok, err := s.stepsOf(ctx, at, p.cont, st)
		if err != nil {
			return 0, err
		}
		if !ok || n <= 0 {
			return 0, fmt.Errorf("counting the steps from %s to the stop of '%s': the count did not end there", p.step.Label(), p.cont.Label())
		}
		p.toStop = n
	}
	n, ok, err := s.stepsOf(ctx, p.base, p.cont, st)
	if err != nil {
		return 0, err
	}
	if !ok || n <= p.toStop {
		return 0, fmt.Errorf("counting the steps of '%s': the count did not end at its stop", p.cont.Label())
	}
	p.offset = n - p.toStop
	debugf("probes: probe %d is step %d of %d", p.id, p.offset, n)
	return p.offset, nil
}

// stepsTo is Split for a stretch that ends at a probe the program left:
// the steps from a to it, a being the continue's start or a step of it
// counted from there.
func (w *watchProgram) stepsTo(ctx context.Context, a []history.Step, pb *probe) (watch.Seq, error) {
	s := w.s
	from := 0
	switch {
	case history.Equal(a, pb.base):
	case len(a) == len(pb.base)+1 && history.IsPrefix(pb.base, a) && a[len(a)-1].Cmd.Op == P.OpStep && a[len(a)-1].Synth():
		from = a[len(a)-1].Cmd.Count
	default:
		return nil, nil
	}
	k, err := s.probeOffset(ctx, pb, w.st)
	if err != nil {
		return nil, err
	}
	if k-from <= 1 {
		w.stepLeaf = k-from == 1
		return nil, nil
	}
	then := s.synth(P.OpStep, 1, pb.cont.Bps).PartOf(pb.cont)
	return offsetSeq{s: s, base: pb.base, from: from, n: k - from - 1, of: pb.cont, then: &then}, nil
}

// offsetSeq is the lazy list base+step from+1, ..., base+step from+n.
type offsetSeq struct {
	s       *Session
	base    []history.Step
	from, n int
	of      history.Step
	then    *history.Step
}

func (q offsetSeq) Len() int { return q.n }
func (q offsetSeq) At(i int) watch.Moment {
	return moment{steps: history.With(q.base, q.s.synth(P.OpStep, q.from+i+1, q.of.Bps).PartOf(q.of)), then: q.then}
}
