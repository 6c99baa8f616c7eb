package fred

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fred-debugger/fred/fred/conn"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/replaylog"
)

// A moment of the program is the list of steps that reach it from the start
// of the run: restore the latest snapshot whose history is a prefix of the
// list, then replay the rest (the FReD paper, section 2.2). Reverse
// commands compute an earlier moment, refining a `continue` into `next`s and
// a `next` into a `step` and `next`s where they need finer moments.

// ErrAtStart means a reverse command would go before the first snapshot.
var ErrAtStart = rewrite.ErrAtStart

// revStats counts the work of one reverse command.
type revStats struct {
	restores, replayed, evals, snapshots, probes int
}

// needReverse checks that reverse commands can work now.
func (s *Session) needReverse(cmd string) error {
	if s.snap == nil {
		return fmt.Errorf("'%s' needs snapshots: %s", cmd, s.snapWhy)
	}
	if len(s.Timeline.Marks()) == 0 {
		return fmt.Errorf("'%s' needs a snapshot of this run; start the program with %s first", cmd, s.startHint())
	}
	return nil
}

// startHint says how to start the program in this debugger.
func (s *Session) startHint() string {
	if s.p.StartHint == "" {
		return "'run'"
	}
	return s.p.StartHint
}

// firstIndex is the history length at the run's first snapshot: no moment
// before it can be reached by the reverse commands. A run's start-up (from
// the entry point to main) is behind them: its snapshot is reached by
// fred-restart and by reverse-watch's search (startIndex).
func (s *Session) firstIndex() int {
	if s.startUpBehind() {
		return 1
	}
	return s.startIndex()
}

// startIndex is the history length at the run's first snapshot.
func (s *Session) startIndex() int {
	first := -1
	for _, sn := range s.snaps {
		if sn.run == s.run && (first < 0 || len(sn.Steps) < first) {
			first = len(sn.Steps)
		}
	}
	return first
}

// startUpBehind reports whether the run's history begins with its
// start-up and this run's snapshot 0 is before it: main's first line is
// then where the reverse commands stop.
func (s *Session) startUpBehind() bool {
	return s.Timeline.Len() > 0 && s.Timeline.Step(0).Origin == history.StartUp && s.startIndex() == 0
}

// atStart says that a reverse command got to the first moment it can
// reach, ErrAtStart, and where the start-up is if it lies behind.
func (s *Session) atStart() error {
	if s.startUpBehind() {
		return atMainError{}
	}
	return ErrAtStart
}

// atMainError is ErrAtStart at main's first line, the run's start-up
// behind it.
type atMainError struct{}

func (atMainError) Error() string {
	return fmt.Sprintf("already at main's first line, where the reverse commands stop: before it lies the program's start-up (its constructors), snapshot %d; 'fred-restart %d' goes there", entrySnap, entrySnap)
}

func (atMainError) Is(target error) bool { return target == ErrAtStart }

// SaidAtStart is the ErrAtStart a reverse command said in out, nil if it
// said none (a front end that reads the command's output: DAP).
func SaidAtStart(out string) error {
	for _, err := range []error{ErrAtStart, atMainError{}} {
		if strings.Contains(out, err.Error()) {
			return err
		}
	}
	return nil
}

// goTo brings the program to the moment reached by steps.
//
// A replay of a multi-threaded stretch diverges now and then under load
// (the replay log does not order everything the threads share yet): once,
// fred restores and replays it again, which mostly gets there.
func (s *Session) goTo(steps []history.Step, st *revStats) error {
	err := s.goToOnce(steps, st)
	var de *DivergedError
	if errors.As(err, &de) && s.running && proc.Threads(s.pid) > 1 {
		debugf("goTo: %v; once more", err)
		s.dirty(s.Timeline.Steps())
		err = s.goToOnce(steps, st)
	}
	return err
}

func (s *Session) goToOnce(steps []history.Step, st *revStats) error {
	// The snapshot (or the live program) furthest along the way wins. A
	// point reached by "next 1804" also serves for "next 1827": the rest
	// is "next 23".
	var best *snap
	bestAt, bestDone := -1, 0
	for _, sn := range s.snaps {
		if sn.run != s.run {
			continue
		}
		if at, done, ok := along(sn.Steps, steps); ok && (done == 0 || !s.exactCounts) && (at > bestAt || at == bestAt && done > bestDone) {
			best, bestAt, bestDone = sn, at, done
		}
	}
	if best == nil {
		return ErrAtStart
	}
	if moveFault != nil {
		if err := moveFault(s, "move"); err != nil {
			return err
		}
	}
	if at, done, ok := along(s.Timeline.Steps(), steps); s.running && ok && (done == 0 || !s.exactCounts) && (at > bestAt || at == bestAt && done >= bestDone) {
		bestAt, bestDone = at, done
	} else {
		if err := s.restore(best); err != nil {
			return err
		}
		st.restores++
	}
	// What remains: the rest of a partly done counted step, then the
	// steps after it.
	var rest []history.Step
	if bestDone > 0 {
		part := steps[bestAt]
		if part.Cmd.Op == opHits {
			addr, _ := strconv.ParseUint(strings.TrimPrefix(part.Cmd.Args, "0x"), 16, 64)
			rest = append(rest, hitsStep(addr, part.Cmd.Count-bestDone, part.Bps).PartOf(part))
		} else {
			rest = append(rest, s.synth(part.Cmd.Op, part.Cmd.Count-bestDone, part.Bps).PartOf(part))
		}
		bestAt++
	}
	rest = append(rest, steps[bestAt:]...)
	for _, step := range rest {
		if step.Cmd.Op == opProbe {
			return &ProbeGoneError{Line: step.Label()}
		}
	}
	done := steps[:bestAt]
	for i, step := range rest {
		out, err := s.replayStep(step)
		if err == nil && i < len(rest)-1 && step.Known() && !step.Ended && s.p.Ended(out) {
			// The program ended where the run went on (pdb then starts
			// it again): the last step's check would come too late.
			err = &DivergedError{Want: step.At.String(), Got: "the end of the program"}
		}
		if err != nil {
			s.dirty(done) // the program is somewhere no history names
			return err
		}
		done = steps[:len(steps)-len(rest)+i+1]
		st.replayed++
	}
	s.standAt(steps)
	if n := s.Timeline.Len(); n > 0 {
		last := s.Timeline.Now()
		if !last.Known() {
			err := s.learn(&last)
			s.Timeline.SetNow(last)
			return err
		}
		if len(rest) > 0 {
			if err := s.checkArrived(last); err != nil {
				s.dirty(steps[:n-1])
				return err
			}
		}
	}
	return nil
}

// along says how far the history have goes along the way to want: it
// covers want[:at] and, when done > 0, the first done commands of the
// counted step want[at] ("next 1804" of a "next 1827").
func along(have, want []history.Step) (at, done int, ok bool) {
	if history.IsPrefix(have, want) {
		return len(have), 0, true
	}
	n := len(have)
	if n == 0 || n > len(want) || !history.IsPrefix(have[:n-1], want) {
		return 0, 0, false
	}
	h, w := have[n-1].Cmd, want[n-1].Cmd
	if h.Op != w.Op || (h.Op != P.OpNext && h.Op != P.OpStep && h.Op != opHits) || h.Args != w.Args && h.Op == opHits || h.Count >= w.Count ||
		have[n-1].Stop != P.StopDone || strings.Join(have[n-1].Bps, " ") != strings.Join(want[n-1].Bps, " ") {
		return 0, 0, false
	}
	return n - 1, h.Count, true
}

// synth is a command fred makes up, "op k".
func (s *Session) synth(op string, k int, bps []string) history.Step {
	return rewrite.SynthStep(s.classify, op, k, bps)
}

// rewriter is the history rewriting over the live session.
func (s *Session) rewriter(ctx context.Context, st *revStats) *rewrite.Rewriter {
	return rewrite.New(sessionMover{s: s, st: st, ctx: ctx})
}

// learn records where a made-up step ended, now that it has run.
func (s *Session) learn(st *history.Step) error {
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
func (s *Session) checkArrived(want history.Step) error {
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

// standAt says the live program stands at the end of steps: the history
// is steps, its marks the snapshots taken on the way.
func (s *Session) standAt(steps []history.Step) {
	var marks []history.Mark
	for _, id := range s.order {
		if sn := s.snaps[id]; sn.run == s.run && history.IsPrefix(sn.Steps, steps) {
			marks = append(marks, history.Mark{Snap: id, Index: len(sn.Steps)})
		}
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].Index < marks[j].Index })
	s.Timeline.Set(steps, marks)
}

// moveFault, set by tests, runs each time goTo moves the program (stage
// "move") and before each command it replays ("replay"): a fault it
// injects (an error, a killed program) must leave the person where they
// were.
var moveFault func(s *Session, stage string) error

// replayStep runs one recorded command again, with the breakpoints it had.
func (s *Session) replayStep(step history.Step) (string, error) {
	if moveFault != nil {
		if err := moveFault(s, "replay"); err != nil {
			return "", err
		}
	}

	if step.Cmd.Op == opHits {
		return s.replayHits(step)
	}
	restore, err := s.useBreakpoints(step.Bps)
	if err != nil {
		return "", err
	}
	// A count the search made up (next 30000) has no time of its own yet.
	deadline := s.opt.Timeout + 3*step.Took + time.Duration(step.Cmd.Count)*10*time.Millisecond
	out, err := s.sendWatched(step, deadline)
	if rerr := restore(); err == nil {
		err = rerr
	}
	return out, err
}

// LeftRecordingError is a replayed command whose program left its
// recording (the replay log's divergence), stopped or not (Stuck).
type LeftRecordingError struct {
	Cmd, Notice string
	Stuck       bool  // it did not get where it went the first time
	Err         error // the wait given up
}

func (e *LeftRecordingError) Error() string {
	// The library's notice goes on with what a copy does after it left
	// ("recording a new branch"): not what this one did.
	notice, _, _ := strings.Cut(e.Notice, "; recording a new branch")
	if e.Stuck {
		return fmt.Sprintf("replaying '%s', the program left its recording (replay log: %s) and did not reach the stop it reached the first time", e.Cmd, notice)
	}
	return fmt.Sprintf("replaying '%s', the program left its recording (replay log: %s): where it stopped is not the moment it stopped at the first time", e.Cmd, notice)
}

func (e *LeftRecordingError) Unwrap() error { return e.Err }

// sendWatched sends a replayed step while following the replay log: the
// step fails (LeftRecordingError) if its program left the recording,
// at once if it has not stopped yet (what it waits for, a client's
// request or another thread's turn, will not come again), and when it
// stops (the stop may look the same and be another moment: a server's
// next request at the same breakpoint).
func (s *Session) sendWatched(step history.Step, deadline time.Duration) (string, error) {
	left, giveUp := s.leftLog()
	s.giveUp = giveUp
	defer func() { s.giveUp = nil }()
	out, err := s.sendStep(step.Cmd, deadline)
	var te *conn.TimeoutError
	switch notice := left(); {
	case notice == "":
	case errors.As(err, &te):
		err = &LeftRecordingError{Cmd: step.Label(), Notice: notice, Stuck: true, Err: err}
	case err == nil:
		err = &LeftRecordingError{Cmd: step.Label(), Notice: notice}
	}
	return out, err
}

// leftLog follows the replay log's divergences from now on: left is the
// log's notice once the program left it ("" until then), and giveUp
// says so to a wait (looking at the log's header at most every
// giveUpLook).
func (s *Session) leftLog() (left func() string, giveUp func() bool) {
	base, ok := s.logMark()
	if !ok {
		return func() string { return "" }, nil
	}
	notice := ""
	left = func() string {
		if notice != "" {
			return notice
		}
		h, err := replaylog.ReadHeader(s.rlog.path)
		if err != nil || h.Divergences == base.Divergences {
			return ""
		}
		s.rlog.seen = h.Notices // said in the command's error
		notice = h.Notice
		if notice == "" {
			notice = "the program took another path"
		}
		return notice
	}
	var looked time.Time
	giveUp = func() bool {
		if notice == "" && time.Since(looked) >= giveUpLook {
			looked = time.Now()
			left()
		}
		return notice != ""
	}
	return left, giveUp
}

// giveUpLook: the log's header is read at most this often.
const giveUpLook = 100 * time.Millisecond

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
	// A change that fails leaves the breakpoints as they were: the
	// callers return at once, and later commands need the person's.
	fail := func(err error) (func() error, error) {
		_ = put()
		return func() error { return nil }, err
	}
	do := func(cmd, back string) error {
		// Undone even if the answer does not come: the debugger may
		// have done it all the same, and undoing what it did not do
		// (enabling an enabled breakpoint) does nothing.
		undo = append(undo, back)
		_, err := s.query(cmd)
		return err
	}
	found := map[string]bool{}
	for _, b := range s.bpList {
		switch {
		case contains(want, b.Where) && !found[b.Where]:
			found[b.Where] = true
			if !b.Enabled {
				if err := do(fmt.Sprintf(s.p.Enable, b.Num), fmt.Sprintf(s.p.Disable, b.Num)); err != nil {
					return fail(err)
				}
			}
		case b.Enabled:
			if err := do(fmt.Sprintf(s.p.Disable, b.Num), fmt.Sprintf(s.p.Enable, b.Num)); err != nil {
				return fail(err)
			}
		}
	}
	for _, w := range want {
		if found[w] {
			continue
		}
		out, err := s.query(strings.ReplaceAll(s.p.BreakAt, "%q", strconv.Quote(w)))
		if err != nil {
			return fail(err)
		}
		n := s.p.ParseNewBreakpoint(out)
		if n != "" {
			undo = append(undo, fmt.Sprintf(s.p.Delete, n))
		} else if s.p.Refused != nil && s.p.Refused(out) {
			// (a watchpoint lldb cannot make here): a replay without it
			// would not stop where it stopped
			return fail(fmt.Errorf("the debugger made no stop at %s: %s", w, lastLine(out)))
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

// hasTempBreakpoint reports whether a breakpoint goes once hit.
func (s *Session) hasTempBreakpoint() bool {
	for _, b := range s.bpList {
		if b.Temp {
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
func (s *Session) forward(line string, bps []string, st *revStats) (history.Step, error) {
	step, _, err := s.forwardFor(line, bps, s.opt.Timeout, st)
	return step, err
}

// forwardFor is forward with its own deadline, also returning the
// debugger's output.
func (s *Session) forwardFor(line string, bps []string, timeout time.Duration, st *revStats) (history.Step, string, error) {
	restore, err := s.useBreakpoints(bps)
	if err != nil {
		return history.Step{}, "", err
	}
	start := time.Now()
	out, err := s.queryFor(line, timeout)
	if rerr := restore(); err == nil {
		err = rerr
	}
	if err != nil {
		return history.Step{}, "", err
	}
	st.replayed++
	step := history.Step{Cmd: s.p.Classify(line), Stop: s.stopOf(out), Bps: bps, Took: time.Since(start), Origin: history.Refined}
	loc, err := s.location()
	if errors.Is(err, P.ErrNotRunning) {
		step.Ended, step.Stop = true, P.StopEnded
		s.running = false
	} else if err != nil {
		return history.Step{}, "", err
	} else {
		step.At = loc
		if step.Depth, err = s.depth(); err != nil {
			return history.Step{}, "", err
		}
	}
	s.Timeline.Add(step)
	return step, out, nil
}

// sessionMover is the live debugger as a mover.
type sessionMover struct {
	s   *Session
	st  *revStats
	ctx context.Context
}

func (m sessionMover) GoTo(steps []history.Step) error {
	if err := m.ctx.Err(); err != nil {
		return err
	}
	return m.s.goTo(steps, m.st)
}

func (m sessionMover) Forward(op string, bps []string) (history.Step, error) {
	if err := m.ctx.Err(); err != nil {
		return history.Step{}, err
	}
	if err := m.s.passesIn(bps); err != nil {
		return history.Step{}, err
	}
	return m.s.forward(op, bps, m.st)
}

func (m sessionMover) Bare(op string, bps []string) (P.Stop, error) {
	if err := m.ctx.Err(); err != nil {
		return 0, err
	}
	if err := m.s.passesIn(bps); err != nil {
		return 0, err
	}
	return m.s.bareNext(bps, m.st)
}

func (m sessionMover) Now() history.Step              { return m.s.Timeline.Now() }
func (m sessionMover) First() int                     { return m.s.firstIndex() }
func (m sessionMover) Classify(line string) P.Command { return m.s.classify(line) }

// reverse runs one reverse command: compute the target moment, go there,
// show it, and say what it cost.
func (s *Session) reverse(name string, n int, pick func(r *rewrite.Rewriter, t []history.Step) ([]history.Step, error)) error {
	return s.reverseTo(name, n, pick, false)
}

// reverseTo is reverse; anywhere: every moment is a place to land, with
// source or not (an instruction's grain).
func (s *Session) reverseTo(name string, n int, pick func(r *rewrite.Rewriter, t []history.Step) ([]history.Step, error), anywhere bool) error {
	if err := s.needReverse(name); err != nil {
		return err
	}
	start := time.Now()
	st := &revStats{}
	ctx, stop := s.interruptible()
	defer stop()
	present := s.keepPresent()
	lost := false // going back failed: the present's snapshot is all that is left of it
	defer func() {
		if !lost {
			s.dropUnseen(present)
		}
	}()
	rw := s.rewriter(ctx, st)
	target := func(t []history.Step, _ *revStats) ([]history.Step, error) { return pick(rw, t) }
	orig := s.Timeline.Steps()
	s.crossed = s.crossedCounts(orig)
	defer func() { s.crossed = nil }()
	leave := s.enterLeanFor(orig, s.firstIndex())
	defer func() { _ = leave() }() // symbols come back after any error too
	t := orig
	var err error
	atStart := false
	// From a post-mortem (an uncaught exception), the stops just behind
	// are the exception's way up the stack, and the handlers that let it
	// go on (an except that closes a file and raises again): going back
	// lands before the statement that raised, where the post-mortem
	// shows it, as after a crash.
	postMortem := len(orig) > 0 && s.p.InProcess && orig[len(orig)-1].Stop == P.StopSignal
	raised := P.Location{}
	if postMortem {
		raised = orig[len(orig)-1].At
		raised.Unwind = false
	}
	for i := 0; i < n; i++ {
		if err = ctx.Err(); err != nil {
			break // Ctrl-C, or fred's memory bound
		}
		var next []history.Step
		next, err = target(t, st)
		// Code without source to show (libc, the startup code) is no
		// place to land, unless a breakpoint stopped there (code without
		// debug info, where the person broke at a function): keep going
		// back.
		for k := 0; err == nil && len(next) > s.firstIndex(); k++ {
			last := next[len(next)-1]
			at := last.At
			if (anywhere || hasSource(last) || last.Stop == P.StopBreakpoint) && (!postMortem || at == raised || k >= maxUnwindSteps && !at.Unwind) {
				break
			}
			prev := next
			if next, err = target(next, st); err == nil && history.Equal(next, prev) {
				break // no further back to go
			}
		}
		postMortem = false
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
		return s.rollback(ctx, name, err, orig, st, &lost)
	}
	if atStart && len(t) == len(orig) {
		t = orig[:s.firstIndex()]
	}
	if err := s.goTo(t, st); err != nil {
		return s.rollback(ctx, name, err, orig, st, &lost)
	}
	if err := leave(); err != nil {
		return err
	}
	if err := s.show(); err != nil {
		return err
	}
	if atStart {
		s.Printf("%v", s.atStart())
	}
	s.Printf("'%s' took %.2f s (%d restores, %d replayed commands)", name, time.Since(start).Seconds(), st.restores, st.replayed)
	return nil
}

// rollback puts the person back at orig, where they were before a
// command (name) failed with err, and says what happened: the
// interrupt, err, or both err and the failure to go back (lost is set
// then: keepPresent's snapshot is all that is left of the present). A
// debugger that died needs no going back: the session is over.
func (s *Session) rollback(ctx context.Context, name string, err error, orig []history.Step, st *revStats, lost *bool) error {
	if gerr := s.goBack(err, orig, st, lost); gerr != nil {
		return gerr
	}
	return backError(ctx, name, err)
}

// goBack is rollback's first half, for callers that look at err once
// the person is back: nil when they are.
func (s *Session) goBack(err error, orig []history.Step, st *revStats, lost *bool) error {
	if errors.Is(err, ErrSessionOver) {
		return err
	}
	if gerr := s.goTo(orig, st); gerr != nil {
		*lost = true
		return &NotBackError{Err: err, Back: gerr}
	}
	return nil
}

// backError is rollback's message once the person is back.
func backError(ctx context.Context, name string, err error) error {
	if errors.Is(err, context.Canceled) {
		if c := stopCause(ctx); c != nil {
			return fmt.Errorf("%w; you are back where you were", c)
		}
		return &InterruptedError{Cmd: name}
	}
	return fmt.Errorf("%w; you are back where you were", err)
}

// maxUnwindSteps bounds the steps back from a post-mortem to the raising
// statement; past it, the first stop that is not on the exception's way
// up will do.
const maxUnwindSteps = 300

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
func hasSource(st history.Step) bool {
	if st.Ended || st.At.Line == 0 {
		return st.Ended
	}
	_, err := os.Stat(st.At.File)
	return err == nil
}
