package fred

import (
	"errors"
	"strings"
	"time"

	"github.com/fred-debugger/fred/fred/conn"
	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
)

// runFromStart is the person's `run` in a debugger that can start a
// program stopped (the personality's EarlyStart). The first snapshot of a
// run is then taken at main's first line, not at the person's first stop:
// a run that stops first at a crash, or at a breakpoint hit late, still has
// everything from main on behind it. The person sees what `run` shows;
// the history holds the run as a continue from main.
//
// If the person's first stop comes before main (a breakpoint or a crash
// in a constructor, Ctrl-C, the end of the program), it is a plain run:
// the first snapshot is taken at that stop, as before.
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
	if _, err := s.query(es.ToMain); err != nil {
		return all.String(), err
	}
	out, err = send(es.Continue, &conn.HideLines{W: s.opt.Out, Skip: es.Continuing, From: []string{es.AtMain}})
	if err != nil {
		return all.String() + out, err
	}
	rest, atMain := conn.CutAtLine(out, es.AtMain)
	all.WriteString(strings.TrimPrefix(rest, es.Continuing))
	if !atMain {
		if _, err := s.query(es.Forget); err != nil {
			return all.String(), err
		}
		return plain(all.String(), time.Since(start))
	}

	// At main's first line: the run starts here.
	s.Timeline.Reset()
	s.pid = 0
	s.run++
	s.refreshBreakpoints()
	loc, err := s.location()
	if err != nil {
		return all.String(), err
	}
	d, _ := s.depth()
	s.running = true
	s.pid, _ = s.Pid()
	s.Timeline.SetStart(history.Step{At: loc, Depth: d})
	s.maybeAutoSnapshot()

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
