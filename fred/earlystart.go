package fred

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fred-debugger/fred/fred/conn"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/words"
	P "github.com/fred-debugger/fred/personalities"
)

// runFromStart is the person's `run` in a debugger that can start a
// program stopped (the personality's EarlyStart). The first snapshot of a
// run is then taken at main's first line, not at the person's first stop:
// a run that stops first at a crash, or at a breakpoint hit late, still has
// everything from main on behind it. The person sees what `run` shows;
// the history holds the run as a continue from main.
//
// A snapshot is taken at the program's entry point too, before its own
// constructors: snapshot 0, every run's. If the person's first stop comes
// before main (a breakpoint or a crash in a constructor, Ctrl-C), the run
// starts there, and the stop still has its run behind it. Otherwise the
// way from the entry to main is the run's first step, its start-up: the
// reverse commands stop at main's first line, where snapshot 1 is, and
// reverse-watch looks behind it when the expression has its present value
// from main on.
func (s *Session) runFromStart(cmd P.Command) (string, error) {
	es := s.p.EarlyStart
	if cmd.Op == P.OpStart {
		// The debugger's start is its temporary breakpoint at main,
		// then a run: the same here, the run from the entry point. A
		// main without debug information (another language's, or none)
		// is the debugger's own start's to find.
		q, err := s.query(es.HasMain)
		if err != nil {
			return "", err
		}
		if !strings.Contains(q, "@fred main") {
			return s.passThrough(cmd)
		}
		out, err := s.passThrough(s.p.Classify(es.MainBreak))
		if err != nil {
			return out, err
		}
		if s.p.ParseNewBreakpoint(out) == "" {
			return out, nil // it said why
		}
	}
	var all strings.Builder
	s.setPassing(true)
	passing := true
	stopPassing := func() {
		if passing {
			s.setPassing(false)
			passing = false
		}
	}
	defer stopPassing()
	// send runs a command that moves the program, for as long as it runs,
	// showing its output through f.
	send := func(line string, f *conn.HideLines) (string, error) {
		if err := s.conn.Send(line); err != nil {
			return "", ErrSessionOver
		}
		out, err := s.conn.WaitPrompt(line, time.Time{}, f, true, nil)
		f.Flush()
		if errors.Is(err, conn.ErrDebuggerExited) {
			return out, ErrSessionOver
		}
		return out, err
	}
	// plain ends the command as the person's run: the first stop is the
	// run's first.
	plain := func(out string, took time.Duration) (string, error) {
		stopPassing()
		if err := s.resync(); err != nil {
			return out, err
		}
		return out, s.after(cmd, out, took)
	}
	// toBreak continues to fred's breakpoint, its report hidden: rest is
	// what the program printed on the way (shown), hit whether it got
	// there.
	toBreak := func() (rest string, hit bool, err error) {
		out, err := send(es.Continue, &conn.HideLines{W: s.opt.Out, Skip: es.Continuing, From: []string{es.AtMain}})
		if err != nil {
			return out, false, err
		}
		rest, hit = conn.CutAtLine(out, es.AtMain)
		return strings.TrimPrefix(rest, es.Continuing), hit, nil
	}
	// ran ends the command as a continue of the run from its start,
	// and says note once the debugger is in step.
	ran := func(out string, took time.Duration, note string) (string, error) {
		all.WriteString(out)
		stopPassing()
		if err := s.resync(); err != nil {
			return all.String(), err
		}
		if note != "" {
			s.Printf("%s", note)
		}
		return all.String(), s.afterShown(s.p.Classify(es.Continue), cmd.Line, out, took)
	}

	start := time.Now()
	out, err := send(es.Starti(cmd.Args), &conn.HideLines{W: s.opt.Out, From: []string{es.Stopped}})
	if err != nil {
		return out, err
	}
	shown, stopped := conn.CutAtLine(out, es.Stopped)
	if !stopped || s.p.NewRun == nil || !s.p.NewRun(out) {
		return plain(out, time.Since(start)) // refused, or not started
	}
	all.WriteString(shown)
	begun := false   // the run's history began at the entry point
	atEntry := false // with snapshot 0 there
	if es.ToEntry != "" {
		q, err := s.query(es.ToEntry)
		if err != nil {
			return all.String(), err
		}
		there := strings.Contains(q, "@fred at the entry point") // a static program
		if strings.Contains(q, "@fred to the entry point") {
			rest, hit, err := toBreak()
			all.WriteString(rest)
			if err != nil {
				return all.String(), err
			}
			if !hit {
				// Stopped before it (a library's constructor, a
				// catchpoint): the first stop is the run's start.
				if _, err := s.query(es.Forget); err != nil {
					return all.String(), err
				}
				return plain(all.String(), time.Since(start))
			}
			there = true
		}
		if there {
			if err := s.beginRun(true); err != nil {
				return all.String(), err
			}
			begun = true
			if s.snaps[entrySnap] != nil {
				s.drop(entrySnap) // the previous run's
			}
			if s.snap != nil && !s.refusedNow() {
				if _, err := s.checkpointAs(true, entrySnap); err == nil {
					atEntry = true
				} else {
					debugf("snapshot at the entry point: %v", err)
				}
			}
		}
	}
	if _, err := s.query(es.ToMain); err != nil {
		return all.String(), err
	}
	fromEntry := time.Now()
	rest, atMain, err := toBreak()
	if err != nil {
		return all.String() + rest, err
	}
	// A breakpoint of the person's at main's first line is the one the
	// debugger reports: the person's first stop is the run's start.
	atTheirs := false
	if !atMain && es.Reached != "" {
		q, err := s.query(es.Reached)
		if err != nil {
			return all.String() + rest, err
		}
		atMain = strings.Contains(q, "@fred reached")
		atTheirs = atMain
	}
	if !atMain {
		if _, err := s.query(es.Forget); err != nil {
			return all.String() + rest, err
		}
		if !begun {
			all.WriteString(rest)
			return plain(all.String(), time.Since(start))
		}
		// The first stop came before main: the run starts at the entry.
		note := ""
		if atEntry {
			note = fmt.Sprintf("snapshot %d taken at the program's start, %s, before its constructors", entrySnap, words.Where(s.Timeline.Start().At))
		}
		return ran(rest, time.Since(fromEntry), note)
	}
	all.WriteString(rest)

	// At main's first line: the run starts here, or its start-up ends.
	if atEntry {
		if err := s.startedUp(cmd, time.Since(fromEntry)); err != nil {
			return all.String(), err
		}
	} else {
		if err := s.beginRun(!begun); err != nil {
			if errors.Is(err, P.ErrNotRunning) {
				s.running, s.pid = false, 0
			}
			return all.String(), err
		}
		s.maybeAutoSnapshot()
	}
	if atTheirs {
		stopPassing()
		return all.String(), s.resync()
	}

	start = time.Now()
	out, err = send(es.Continue, &conn.HideLines{W: s.opt.Out, Skip: es.Continuing})
	if err != nil {
		return all.String() + out, err
	}
	return ran(out, time.Since(start), "")
}

// startedUp records the way from the entry point, where snapshot 0 is, to
// main's first line as the run's first step, and takes snapshot 1 there:
// the moment the reverse commands stop at.
func (s *Session) startedUp(cmd P.Command, took time.Duration) error {
	loc, err := s.location()
	if err != nil {
		if errors.Is(err, P.ErrNotRunning) {
			s.running, s.pid = false, 0
		}
		return err
	}
	d, _ := s.depth()
	// Replayed as a continue to main's address, with the person's
	// breakpoints as they were at the run (a temporary one at main, as
	// start's, is gone now).
	s.refreshBreakpoints()
	bps := append([]string(nil), s.bps...)
	if t := s.p.Tracer; t != nil && loc.PC != 0 {
		bps = append(bps, t.AtAddress(loc.PC))
	}
	s.Timeline.Add(history.Step{Cmd: s.p.Classify(s.p.EarlyStart.Continue), At: loc, Depth: d, Stop: P.StopBreakpoint,
		Bps: bps, Took: took, Origin: history.StartUp, Of: cmd.Op})
	sn, err := s.Checkpoint(true)
	if err != nil {
		s.refusedSnapshot(err)
		return nil
	}
	s.Printf("snapshot %d taken at the program's start, %s (%.3f s); snapshot %d is before its constructors, at %s", sn.ID, words.Where(loc), sn.Took.Seconds(),
		entrySnap, words.Where(s.Timeline.Start().At))
	return nil
}

// newRun counts a new run of the program, with an empty history.
func (s *Session) newRun() {
	s.Timeline.Reset()
	s.pid = 0
	s.run++
	s.refreshBreakpoints()
}

// beginRun starts the history of a run at the program's current stop:
// a new run, or the same one started again at a later moment.
func (s *Session) beginRun(newRun bool) error {
	if newRun {
		s.newRun()
	} else {
		s.Timeline.Reset()
	}
	loc, err := s.location()
	if err != nil {
		return err
	}
	d, _ := s.depth()
	s.running = true
	s.pid, _ = s.Pid()
	s.Timeline.SetStart(history.Step{At: loc, Depth: d})
	return nil
}
