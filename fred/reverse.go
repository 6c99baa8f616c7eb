package fred

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	P "github.com/fred-debugger/fred/personalities"
)

// A moment of the program is the list of steps that reach it from the start
// of the run: restore the latest snapshot whose history is a prefix of the
// list, then replay the rest (the FReD paper, section 2.2). Reverse
// commands compute an earlier moment, refining a `continue` into `next`s and
// a `next` into a `step` and `next`s where they need finer moments.

// ErrAtStart means a reverse command would go before the first snapshot.
var ErrAtStart = errors.New("already at the first snapshot: there is no earlier moment to go back to")

// maxWalk bounds how many commands a refinement may run forward.
const maxWalk = 100000

// revStats counts the work of one reverse command.
type revStats struct {
	restores, replayed, evals, snapshots int
}

// needReverse checks that reverse commands can work now.
func (s *Session) needReverse(cmd string) error {
	if s.snap == nil {
		return fmt.Errorf("'%s' needs snapshots: %s", cmd, s.snapWhy)
	}
	if len(s.Timeline.Marks) == 0 {
		return fmt.Errorf("'%s' needs a snapshot of this run; start the program with 'run' or 'start' first", cmd)
	}
	return nil
}

// firstIndex is the history length at the run's first snapshot: no moment
// before it can be reached.
func (s *Session) firstIndex() int {
	first := -1
	for _, sn := range s.snaps {
		if sn.run == s.run && (first < 0 || len(sn.Steps) < first) {
			first = len(sn.Steps)
		}
	}
	return first
}

// goTo brings the program to the moment reached by steps.
func (s *Session) goTo(steps []Step, st *revStats) error {
	var best *snap
	for _, sn := range s.snaps {
		if sn.run == s.run && isPrefix(sn.Steps, steps) && (best == nil || len(sn.Steps) > len(best.Steps)) {
			best = sn
		}
	}
	if best == nil {
		return ErrAtStart
	}
	// The live program may already be on the way: replaying from it is
	// cheaper than a restore.
	from := len(best.Steps)
	live := s.running && isPrefix(s.Timeline.Steps, steps) && len(s.Timeline.Steps) >= from
	if live {
		from = len(s.Timeline.Steps)
	} else {
		if err := s.restore(best); err != nil {
			return err
		}
		st.restores++
		s.Timeline.Steps = append([]Step(nil), best.Steps...)
	}
	for _, step := range steps[from:] {
		if _, err := s.replayStep(step); err != nil {
			return err
		}
		st.replayed++
		s.Timeline.Steps = append(s.Timeline.Steps, step)
	}
	s.Timeline.Marks = s.marksFor(s.Timeline.Steps)
	if n := len(s.Timeline.Steps); n > 0 {
		last := &s.Timeline.Steps[n-1]
		if !last.known() {
			return s.learn(last)
		}
		if len(steps) > from {
			return s.checkArrived(*last)
		}
	}
	return nil
}

// learn records where a made-up step ended, now that it has run.
func (s *Session) learn(st *Step) error {
	loc, err := s.location()
	if errors.Is(err, P.ErrNotRunning) {
		st.Ended, s.running = true, false
		return nil
	}
	if err != nil {
		return err
	}
	st.At = loc
	st.Depth, err = s.depth()
	return err
}

// DivergedError is a replay that did not reach the recorded state.
type DivergedError struct {
	Want, Got string
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("replay diverged: expected to be at %s, but the program is at %s (it depends on something fred does not replay yet)", e.Want, e.Got)
}

// checkArrived compares where the program is with where the history says
// it should be.
func (s *Session) checkArrived(want Step) error {
	loc, err := s.location()
	switch {
	case errors.Is(err, P.ErrNotRunning):
		s.running = false
		if want.Ended {
			return nil
		}
		return &DivergedError{Want: want.At.String(), Got: "the end of the program"}
	case err != nil:
		return err
	case want.Ended:
		return &DivergedError{Want: "the end of the program", Got: loc.String()}
	case loc != want.At:
		return &DivergedError{Want: want.At.String(), Got: loc.String()}
	}
	return nil
}

// marksFor lists the snapshots that lie on a history.
func (s *Session) marksFor(steps []Step) []Mark {
	var marks []Mark
	for _, id := range s.order {
		if sn := s.snaps[id]; sn.run == s.run && isPrefix(sn.Steps, steps) {
			marks = append(marks, Mark{Snap: id, Index: len(sn.Steps)})
		}
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].Index < marks[j].Index })
	return marks
}

// replayStep runs one recorded command again, with the breakpoints it had.
func (s *Session) replayStep(step Step) (string, error) {
	restore, err := s.useBreakpoints(step.Bps)
	if err != nil {
		return "", err
	}
	deadline := s.opt.Timeout + 3*step.Took
	out, err := s.queryFor(s.p.Quiet(step.Cmd.Line), deadline)
	if rerr := restore(); err == nil {
		err = rerr
	}
	return out, err
}

// useBreakpoints makes the program stop exactly at the places in want (nil:
// leave the breakpoints as they are), so that a replayed command sees the
// breakpoints it saw the first time, even ones deleted or added since. It
// returns how to put them back.
func (s *Session) useBreakpoints(want []string) (func() error, error) {
	var undo []string
	put := func() error {
		for i := len(undo) - 1; i >= 0; i-- {
			if _, err := s.query(undo[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if want == nil || s.p.BreakpointsCmd == "" {
		return put, nil
	}
	do := func(cmd, back string) error {
		out, err := s.query(cmd)
		if err == nil && back != "" {
			undo = append(undo, back)
		}
		_ = out
		return err
	}
	found := map[string]bool{}
	for _, b := range s.bpList {
		switch {
		case contains(want, b.Where) && !found[b.Where]:
			found[b.Where] = true
			if !b.Enabled {
				if err := do(fmt.Sprintf(s.p.Enable, b.Num), fmt.Sprintf(s.p.Disable, b.Num)); err != nil {
					return put, err
				}
			}
		case b.Enabled:
			if err := do(fmt.Sprintf(s.p.Disable, b.Num), fmt.Sprintf(s.p.Enable, b.Num)); err != nil {
				return put, err
			}
		}
	}
	for _, w := range want {
		if found[w] {
			continue
		}
		out, err := s.query(strings.ReplaceAll(s.p.BreakAt, "%q", strconv.Quote(w)))
		if err != nil {
			return put, err
		}
		if n := s.p.ParseNewBreakpoint(out); n != "" {
			undo = append(undo, fmt.Sprintf(s.p.Delete, n))
		}
	}
	return put, nil
}

func contains(l []string, x string) bool {
	for _, y := range l {
		if y == x {
			return true
		}
	}
	return false
}

// refreshBreakpoints reads the breakpoints and which are enabled now.
func (s *Session) refreshBreakpoints() {
	if s.p.BreakpointsCmd == "" {
		return
	}
	out, err := s.query(s.p.BreakpointsCmd)
	if err != nil {
		return
	}
	s.bpList = s.p.ParseBreakpoints(out)
	// Empty, not nil: nil means "unknown" to useBreakpoints.
	s.bps = []string{}
	for _, b := range s.bpList {
		if b.Enabled && !contains(s.bps, b.Where) {
			s.bps = append(s.bps, b.Where)
		}
	}
}

// forward runs a forward command fred chose (not the person) from the live
// program and returns the step it made.
func (s *Session) forward(line string, bps []string, st *revStats) (Step, error) {
	restore, err := s.useBreakpoints(bps)
	if err != nil {
		return Step{}, err
	}
	start := time.Now()
	out, err := s.queryFor(line, s.opt.Timeout)
	if rerr := restore(); err == nil {
		err = rerr
	}
	if err != nil {
		return Step{}, err
	}
	st.replayed++
	step := Step{Cmd: s.p.Classify(line), Stop: s.p.StopReason(out), Bps: bps, Took: time.Since(start), Synth: true}
	loc, err := s.location()
	if errors.Is(err, P.ErrNotRunning) {
		step.Ended, step.Stop = true, P.StopEnded
		s.running = false
	} else if err != nil {
		return Step{}, err
	} else {
		step.At = loc
		if step.Depth, err = s.depth(); err != nil {
			return Step{}, err
		}
	}
	s.Timeline.Steps = append(s.Timeline.Steps, step)
	return step, nil
}

// depthOf is the stack depth at the end of a history.
func depthOf(steps []Step) int {
	if len(steps) == 0 {
		return 0
	}
	return steps[len(steps)-1].Depth
}

func with(steps []Step, more ...Step) []Step {
	return append(append([]Step(nil), steps...), more...)
}

// prevStatement is the moment before the last statement executed in the
// history: the target of reverse-step.
func (s *Session) prevStatement(steps []Step, st *revStats) ([]Step, error) {
	t, err := s.prevStatement0(steps, st)
	if err != nil {
		return nil, err
	}
	return s.resolve(t, st)
}

// resolve makes sure the last step of a moment says where it ends (depth,
// location), running it if fred made it up.
func (s *Session) resolve(t []Step, st *revStats) ([]Step, error) {
	if len(t) == 0 || t[len(t)-1].known() {
		return t, nil
	}
	if err := s.goTo(t, st); err != nil {
		return nil, err
	}
	t = append([]Step(nil), t...)
	t[len(t)-1] = s.Timeline.Now()
	return t, nil
}

func (s *Session) prevStatement0(steps []Step, st *revStats) ([]Step, error) {
	if len(steps) <= s.firstIndex() {
		return nil, ErrAtStart
	}
	last := steps[len(steps)-1]
	before := steps[:len(steps)-1]
	if last.Cmd.Count > 1 && (last.Cmd.Op == P.OpNext || last.Cmd.Op == P.OpStep) {
		// "next 5" is "next 4" then "next": the debugger replays the first
		// part in one command.
		before = with(before, repeatStep(s, last.Cmd.Op, last.Cmd.Count-1, last.Bps))
		last = repeatStep(s, last.Cmd.Op, 1, last.Bps)
	}
	switch last.Cmd.Op {
	case P.OpStep:
		return before, nil
	case P.OpNext:
		return s.lastInside(before, last.Bps, st)
	case P.OpContinue, P.OpFinish:
		// Walk `next`s from before the command to where it stopped; the
		// last statement is inside the last of them.
		if err := s.goTo(before, st); err != nil {
			return nil, err
		}
		d := s.Timeline.Now().Depth
		cur := before
		for i := 0; ; i++ {
			if i >= maxWalk {
				return nil, fmt.Errorf("'%s' covers more than %d statements; reverse over it is not supported yet", last.Cmd, maxWalk)
			}
			step, err := s.forward(P.OpNext, last.Bps, st)
			if err != nil {
				return nil, err
			}
			done := step.Stop != P.StopDone
			if last.Cmd.Op == P.OpFinish && step.Depth < d {
				done = true
			}
			if done {
				return s.lastInside(cur, last.Bps, st)
			}
			cur = with(cur, step)
		}
	}
	// until, advance, stepi, jump, run: fred goes back to before the
	// command as a whole.
	return before, nil
}

// lastInside is the last statement executed by a `next` from the moment
// a: a itself, or, if its line calls functions, the last statement inside
// the last call.
func (s *Session) lastInside(a []Step, bps []string, st *revStats) ([]Step, error) {
	if err := s.goTo(a, st); err != nil {
		return nil, err
	}
	d := s.Timeline.Now().Depth
	q, err := s.forward(P.OpStep, bps, st)
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
		if i >= maxWalk {
			return nil, fmt.Errorf("a call covers more than %d statements; reverse over it is not supported yet", maxWalk)
		}
		r, err := s.forward(P.OpNext, bps, st)
		if err != nil {
			return nil, err
		}
		if r.Stop != P.StopDone || r.Depth <= d {
			return s.lastInside(cur, bps, st)
		}
		cur = with(cur, r)
	}
}

// callSite is the moment of the call that entered the current function:
// the target of reverse-finish.
func (s *Session) callSite(steps []Step, st *revStats) ([]Step, error) {
	d := depthOf(steps)
	t := steps
	for {
		var err error
		if t, err = s.prevStatement(t, st); err != nil {
			return nil, err
		}
		for depthOf(t) > d {
			if t, err = s.callSite(t, st); err != nil {
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
func (s *Session) prevSameDepth(steps []Step, st *revStats) ([]Step, error) {
	d := depthOf(steps)
	t, err := s.prevStatement(steps, st)
	if err != nil {
		return nil, err
	}
	for depthOf(t) > d {
		if t, err = s.callSite(t, st); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// lastBreakpoint is the target of reverse-continue: the latest earlier
// moment at which a breakpoint or watchpoint stopped the program.
func (s *Session) lastBreakpoint(steps []Step) ([]Step, bool) {
	for i := len(steps) - 2; i >= s.firstIndex(); i-- {
		if i >= 0 && steps[i].Stop == P.StopBreakpoint {
			return steps[:i+1], true
		}
	}
	return steps[:s.firstIndex()], false
}

// reverse runs one reverse command: compute the target moment, go there,
// show it, and say what it cost.
func (s *Session) reverse(name string, n int, target func([]Step, *revStats) ([]Step, error)) error {
	if err := s.needReverse(name); err != nil {
		return err
	}
	start := time.Now()
	st := &revStats{}
	orig := append([]Step(nil), s.Timeline.Steps...)
	t := orig
	var err error
	atStart := false
	for i := 0; i < n; i++ {
		var next []Step
		next, err = target(t, st)
		// Code without source to show (libc, the startup code) is no
		// place to land: keep going back.
		for err == nil && len(next) > s.firstIndex() && !hasSource(next[len(next)-1]) {
			next, err = target(next, st)
		}
		if errors.Is(err, ErrAtStart) {
			atStart = true
			err = nil
			break
		}
		if err != nil {
			break
		}
		t = next
	}
	if err != nil {
		// Put the person back where they were.
		if gerr := s.goTo(orig, st); gerr != nil {
			return fmt.Errorf("%v; and going back to where you were failed: %v", err, gerr)
		}
		return err
	}
	if atStart && len(t) == len(orig) {
		t = orig[:s.firstIndex()]
	}
	if err := s.goTo(t, st); err != nil {
		return err
	}
	if err := s.show(); err != nil {
		return err
	}
	if atStart {
		s.Printf("%v", ErrAtStart)
	}
	s.Printf("'%s' took %.2f s (%d restores, %d replayed commands)", name, time.Since(start).Seconds(), st.restores, st.replayed)
	return nil
}

// countArg reads an optional repeat count.
func countArg(cmd string, args []string) (int, error) {
	if len(args) == 0 {
		return 1, nil
	}
	n, err := strconv.Atoi(args[0])
	if len(args) > 1 || err != nil || n < 1 {
		return 0, &UsageError{Cmd: cmd, Msg: "takes one optional positive count", Usage: cmd + " [N]"}
	}
	return n, nil
}

// hasSource reports whether a stop is in code whose source the person can
// read.
func hasSource(st Step) bool {
	if st.Ended || st.At.Line == 0 {
		return st.Ended
	}
	_, err := os.Stat(st.At.File)
	return err == nil
}
