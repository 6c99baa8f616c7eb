package fred

import (
	"errors"
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
// constructors: if the person's first stop comes before main (a breakpoint
// or a crash in a constructor, Ctrl-C), the run starts there instead, and
// the stop still has its run behind it. Once main is reached it is dropped
// and gives its number back: the run starts at main as before.
func (s *Session) runFromStart(cmd P.Command) (string, error) {
	es := s.p.EarlyStart
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
	begun := false // the run's history began at the entry point
	atEntry := 0   // the snapshot there
	if es.ToEntry != "" {
		q, err := s.query(es.ToEntry)
		if err != nil {
			return all.String(), err
		}
		there := strings.Contains(q, "@fred at the entry point") // a static program
		if strings.Contains(q, "@fred to the entry point") {
			out, err = send(es.Continue, &conn.HideLines{W: s.opt.Out, Skip: es.Continuing, From: []string{es.AtMain}})
			if err != nil {
				return all.String() + out, err
			}
			rest, hit := conn.CutAtLine(out, es.AtMain)
			all.WriteString(strings.TrimPrefix(rest, es.Continuing))
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
			if s.snap != nil && !s.refusedNow() {
				if sn, err := s.Checkpoint(true); err == nil {
					atEntry = sn.ID
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
	out, err = send(es.Continue, &conn.HideLines{W: s.opt.Out, Skip: es.Continuing, From: []string{es.AtMain}})
	if err != nil {
		return all.String() + out, err
	}
	rest, atMain := conn.CutAtLine(out, es.AtMain)
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
	rest = strings.TrimPrefix(rest, es.Continuing)
	all.WriteString(rest)
	if !atMain {
		if _, err := s.query(es.Forget); err != nil {
			return all.String(), err
		}
		if !begun {
			return plain(all.String(), time.Since(start))
		}
		// The first stop came before main: the run starts at the entry.
		took := time.Since(fromEntry)
		stopPassing()
		if err := s.resync(); err != nil {
			return all.String(), err
		}
		if atEntry != 0 {
			s.Printf("snapshot %d taken at the program's start, %s, before its constructors", atEntry, words.Where(s.Timeline.Start().At))
		}
		return all.String(), s.afterShown(s.p.Classify(es.Continue), cmd.Line, rest, took)
	}

	// At main's first line: the run starts here.
	if atEntry != 0 {
		s.dropUnused(atEntry)
	}
	if err := s.beginRun(!begun); err != nil {
		if errors.Is(err, P.ErrNotRunning) {
			s.running, s.pid = false, 0
		}
		return all.String(), err
	}
	s.maybeAutoSnapshot()
	if atTheirs {
		stopPassing()
		return all.String(), s.resync()
	}

	start = time.Now()
	out, err = send(es.Continue, &conn.HideLines{W: s.opt.Out, Skip: es.Continuing})
	all.WriteString(out)
	if err != nil {
		return all.String(), err
	}
	took := time.Since(start)
	stopPassing()
	if err := s.resync(); err != nil {
		return all.String(), err
	}
	return all.String(), s.afterShown(s.p.Classify(es.Continue), cmd.Line, out, took)
}

// beginRun starts the history of a run at the program's current stop:
// a new run, or the same one started again at a later moment.
func (s *Session) beginRun(newRun bool) error {
	s.Timeline.Reset()
	if newRun {
		s.pid = 0
		s.run++
		s.refreshBreakpoints()
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
