package fred

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/words"
	P "github.com/fred-debugger/fred/personalities"
)

// A saved session (fred-save, issue 24) is the typed history of the
// current run, written beside a recording so that `fred replay DIR` on
// any machine opens at the same moment with the same fred-history: its
// steps up to the moment, the snapshots on and off its line (as the
// moments they stood at: a snapshot is a process, it does not travel),
// the person's breakpoints and bookmarks. A replay reaches each moment
// again by replaying its steps under the recorded log, so every step must
// replay exactly: a native probe (a stop by run time) is first turned
// into a count (portable).

// SavedFormat is the version of the saved session's format.
const SavedFormat = 1

// Saved is a saved session (session.json in a recording).
type Saved struct {
	Format    int                       `json:"format"`
	Debugger  string                    `json:"debugger"`
	Steps     []history.Step            `json:"steps"` // the moment: the history of the run up to it
	Snapshots []SavedSnapshot           `json:"snapshots"`
	Bps       []P.Bp                    `json:"breakpoints"`
	Bookmarks map[string][]history.Step `json:"bookmarks"`
	NextSnap  int                       `json:"next_snapshot"`
}

// SavedSnapshot is where a snapshot stood.
type SavedSnapshot struct {
	ID    int            `json:"id"`
	Auto  bool           `json:"auto"`
	Steps []history.Step `json:"steps"`
}

// ErrNoSave says this session cannot be saved (fred's Options.Save).
var ErrNoSave = errors.New("this session cannot be saved")

// save is fred-save DIR.
func (s *Session) save(dir string) error {
	if s.opt.Save == nil {
		return ErrNoSave
	}
	if s.rlog == nil || s.rlog.path == "" {
		return errors.New("this session has no replay log to save")
	}
	if !s.running || s.pid == 0 {
		return &NeedsProgramError{Cmd: "fred-save", Hint: s.startHint()}
	}
	if err := s.opt.Save(SaveRequest{Check: true, Dir: dir}); err != nil {
		return err
	}
	if err := s.portable(); err != nil {
		return err
	}
	sv := Saved{Format: SavedFormat, Debugger: s.p.Name, Steps: s.Timeline.Steps(), Bookmarks: s.branches, NextSnap: s.nextSnap}
	for _, b := range s.bpList {
		if !b.Temp {
			sv.Bps = append(sv.Bps, b)
		}
	}
	for _, id := range s.order {
		if sn := s.snaps[id]; sn.run == s.run && !slices.ContainsFunc(sn.Steps, func(st history.Step) bool { return st.Cmd.Op == opProbe }) {
			sv.Snapshots = append(sv.Snapshots, SavedSnapshot{ID: id, Auto: sn.Auto, Steps: sn.Steps})
		}
	}
	b, err := json.MarshalIndent(sv, "", " ")
	if err != nil {
		return err
	}
	if err := s.opt.Save(SaveRequest{Dir: dir, Log: s.rlog.path, Session: b, Pid: s.pid, Argv: s.opt.Argv, Debugger: s.p.Name, Say: s.Printf}); err != nil {
		return err
	}
	s.Printf("saved in %s: the recording, its replay log and history up to here, %s and %s; 'fred replay %s' opens it at this moment, here or on another machine",
		dir, words.Plural(len(sv.Snapshots), "snapshot's moment", "snapshots' moments"), words.Plural(len(sv.Bookmarks), "bookmark"), dir)
	return nil
}

// portable turns the native probes in the run's histories (the timeline,
// the snapshots' moments, the bookmarks) into steps that replay without
// their snapshots, and brings the program back to where it was.
func (s *Session) portable() error {
	// ids: the probes to turn; needed: those of the moment and the
	// bookmarks (a snapshot kept by a search whose probe will not turn
	// is left out of the save instead).
	ids, needed := map[int]bool{}, map[int]bool{}
	note := func(steps []history.Step, need bool) {
		for _, st := range steps {
			if st.Cmd.Op == opProbe {
				n, _ := strconv.Atoi(st.Cmd.Args)
				ids[n] = true
				needed[n] = needed[n] || need
			}
		}
	}
	note(s.Timeline.Steps(), true)
	for _, sn := range s.snaps {
		if sn.run == s.run {
			note(sn.Steps, false)
		}
	}
	for _, b := range s.branches {
		note(b, true)
	}
	if len(ids) == 0 {
		return nil
	}
	order := make([]int, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Ints(order)
	here := s.Timeline.Steps()
	ctx, done := s.interruptible()
	defer done()
	st := &revStats{}
	with := map[string]history.Step{}
	for _, id := range order {
		p := s.probes[id]
		if p == nil {
			return fmt.Errorf("fred-save: the history holds probe %d, whose moment is gone; go to a moment without it first", id)
		}
		var step history.Step
		var err error
		if s.p.Tracer != nil {
			step, err = s.probeAsHits(ctx, p, st)
		} else {
			var n int
			if n, err = s.probeOffset(ctx, p, st); err == nil {
				step = s.synth(P.OpStep, n, p.cont.Bps).PartOf(p.cont)
				step.At, step.Depth = p.step.At, p.step.Depth
			}
		}
		if err != nil && !needed[id] && ctx.Err() == nil {
			debugf("fred-save: probe %d: %v; its snapshots are not saved", id, err)
			continue
		}
		if err != nil {
			if gerr := s.goTo(here, st); gerr != nil {
				return errors.Join(fmt.Errorf("fred-save: %s could not be made a step that replays elsewhere: %w", p.step.Label(), err), gerr)
			}
			return fmt.Errorf("fred-save: %s could not be made a step that replays elsewhere: %w", p.step.Label(), err)
		}
		with[p.step.Cmd.Line] = step
	}
	swap := func(steps []history.Step) []history.Step {
		out := append([]history.Step(nil), steps...)
		for i, st := range out {
			if r, ok := with[st.Cmd.Line]; ok && st.Cmd.Op == opProbe {
				out[i] = r
			}
		}
		return out
	}
	here = swap(here)
	for _, sn := range s.snaps {
		if sn.run == s.run {
			sn.Steps = swap(sn.Steps)
		}
	}
	for k, b := range s.branches {
		s.branches[k] = swap(b)
	}
	// The probes' snapshots stand where their counts do now.
	return s.goTo(here, st)
}

// probeAsHits is the count that reaches the probe p again: the k-th
// execution of its statement's first instruction in its continue, k
// being the executions from the continue's start to its stop, less those
// from the probe to the stop. The probe's registers tell the right one.
func (s *Session) probeAsHits(ctx context.Context, p *probe, st *revStats) (history.Step, error) {
	pc := p.step.At.PC
	if pc == 0 {
		return history.Step{}, errors.New("it has no address")
	}
	count := func(from []history.Step) (int, error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := s.goTo(from, st); err != nil {
			return 0, err
		}
		// Without debug registers each execution is a debugger stop.
		limit := maxPassCount * 16
		if s.softHits() {
			limit = s.hitsLimit(maxPassCount)
		}
		r, err := s.runHits(pc, limit, p.cont.Bps, s.opt.Timeout+3*p.cont.Took+s.hitsDeadline(limit))
		s.dirty(from)
		if err != nil {
			return 0, err
		}
		if r.Reached {
			how := ""
			if s.softHits() {
				how = " (without debug registers here, each is a debugger stop)"
			}
			return 0, fmt.Errorf("it lies more than %d executions of %s before the stop of '%s', too many to count%s; save at a moment reached by counted steps", limit, words.Where(p.step.At), p.cont.Label(), how)
		}
		if r.Stop == P.StopEnded {
			s.running = false
		}
		if r.Stop != p.cont.Stop {
			return 0, fmt.Errorf("the count from %s did not end where '%s' stopped", history.Position(from), p.cont.Label())
		}
		return r.N, nil
	}
	after, err := count(history.With(p.base, p.step))
	if err != nil {
		return history.Step{}, err
	}
	all, err := count(p.base)
	if err != nil {
		return history.Step{}, err
	}
	// Standing at pc, the probe's own execution may or may not count
	// from there: its registers decide.
	for _, k := range []int{all - after, all - after + 1, all - after - 1} {
		if k < 1 {
			continue
		}
		step := hitsStep(pc, k, p.cont.Bps).PartOf(p.cont)
		step.At, step.Depth = p.step.At, p.step.Depth
		at := history.With(p.base, step)
		if err := s.goTo(at, st); err != nil {
			return history.Step{}, err
		}
		fp, err := s.fingerprint()
		if err != nil {
			return history.Step{}, err
		}
		if sameRegisters(fp, p.fp) {
			return step, nil
		}
		debugf("fred-save: probe %d as execution %d: registers %s, the probe's %s", p.id, k, fp, p.fp)
	}
	return history.Step{}, fmt.Errorf("no count of %s's executions (%d from the continue's start, %d from the probe) has the probe's registers", words.Where(p.step.At), all, after)
}

// Resume brings a session on a replayed recording to the saved moment:
// the person's breakpoints set again, the run started, each saved
// snapshot taken again at its moment, then the moment itself, with the
// bookmarks. A failure leaves the session usable where it stands.
func (s *Session) Resume(data []byte) error {
	var sv Saved
	if err := json.Unmarshal(data, &sv); err != nil {
		return fmt.Errorf("the saved session cannot be read: %w", err)
	}
	if sv.Format != SavedFormat {
		return fmt.Errorf("the saved session is in format %d; this fred reads format %d", sv.Format, SavedFormat)
	}
	if sv.Debugger != s.p.Name {
		return fmt.Errorf("the saved session is %s's, not %s's", sv.Debugger, s.p.Name)
	}
	if len(sv.Steps) == 0 {
		return nil
	}
	mk := s.p.Rebreak
	if mk == "" {
		mk = s.p.BreakAt
	}
	// The person's breakpoints, where they put them (an address is this
	// run's: a library's moves), before the run; one that cannot be set
	// yet (a watchpoint on a local) is tried again at the moment.
	var later []P.Bp
	setBps := func(bps []P.Bp) (failed []P.Bp, err error) {
		for _, b := range bps {
			where := b.Where
			if b.Orig != "" {
				where = b.Orig
			}
			out, err := s.query(strings.ReplaceAll(mk, "%q", strconv.Quote(where)))
			if err != nil {
				return nil, err
			}
			n := s.p.ParseNewBreakpoint(out)
			if n == "" {
				failed = append(failed, b)
				continue
			}
			if !b.Enabled {
				if _, err := s.query(fmt.Sprintf(s.p.Disable, n)); err != nil {
					return nil, err
				}
			}
		}
		return failed, nil
	}
	later, err := setBps(sv.Bps)
	if err != nil {
		return err
	}
	s.refreshBreakpoints()
	if !s.running {
		start := "run"
		if sv.Steps[0].Origin == history.StartUp && sv.Steps[0].Of != "" {
			start = sv.Steps[0].Of
		}
		if err := s.Exec(start); err != nil {
			return err
		}
		if !s.running {
			return errors.New("the saved run did not start")
		}
	}
	if s.snap == nil {
		return fmt.Errorf("%w: %s", ErrNoSnapshots, s.snapWhy)
	}
	for k, b := range sv.Bookmarks {
		s.branches[k] = b
	}
	ctx, done := s.interruptible()
	defer done()
	st := &revStats{}
	// A moment that cannot be reached leaves the person at the run's
	// start, not nowhere.
	back := s.Timeline.Steps()
	fail := func(err error) error {
		if gerr := s.goTo(back, st); gerr != nil {
			return errors.Join(err, gerr)
		}
		return err
	}
	for _, ss := range sv.Snapshots {
		if sn, ok := s.snaps[ss.ID]; ok && sn.run == s.run && history.Equal(sn.Steps, ss.Steps) {
			continue
		}
		if _, ok := s.snaps[ss.ID]; ok {
			continue // taken here by the run itself, elsewhere: keep it
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := s.goTo(ss.Steps, st); err != nil {
			return fail(fmt.Errorf("going to the moment of snapshot %d: %w", ss.ID, err))
		}
		sn, err := s.checkpointAs(ss.Auto, ss.ID)
		if err != nil {
			return fail(fmt.Errorf("snapshot %d: %w", ss.ID, err))
		}
		sn.Steps = ss.Steps
	}
	if err := s.goTo(sv.Steps, st); err != nil {
		return fail(fmt.Errorf("going to the saved moment: %w", err))
	}
	if sv.NextSnap > s.nextSnap {
		s.nextSnap = sv.NextSnap
	}
	if len(later) > 0 {
		failed, err := setBps(later)
		if err != nil {
			return err
		}
		for _, b := range failed {
			s.Printf("breakpoint '%s' could not be set again", b.Where)
		}
		s.refreshBreakpoints()
	}
	s.Printf("opened the saved session at %s, with %s and %s; fred-history shows how it got there",
		words.Where(s.Timeline.Now().At), words.Plural(len(s.order), "snapshot"), words.Plural(len(sv.Bookmarks), "bookmark"))
	return nil
}

// sameRegisters compares two fingerprints (registers, in hex, ':'-joined),
// but for the x86 resume flag (RF, 0x10000 in eflags): a hardware
// breakpoint's stop sets it, a stop by an interrupt does not.
func sameRegisters(a, b string) bool {
	x, y := strings.Split(a, ":"), strings.Split(b, ":")
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] == y[i] {
			continue
		}
		u, err1 := strconv.ParseUint(x[i], 16, 64)
		v, err2 := strconv.ParseUint(y[i], 16, 64)
		if err1 != nil || err2 != nil || u^v != 0x10000 {
			return false
		}
	}
	return true
}
