package fred

import (
	"bytes"
	"errors"
	"io"
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
	send := func(line string, f *hideLines) (string, error) {
		if err := s.conn.Send(line); err != nil {
			return "", ErrSessionOver
		}
		out, err := s.conn.WaitPrompt(line, time.Time{}, f, true, nil)
		f.flush()
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
	out, err := send(es.Starti(cmd.Args), &hideLines{w: s.opt.Out, from: []string{es.Stopped}})
	if err != nil {
		return out, err
	}
	shown, stopped := cutAtLine(out, es.Stopped)
	if !stopped || s.p.NewRun == nil || !s.p.NewRun(out) {
		return plain(out, time.Since(start)) // refused, or not started
	}
	all.WriteString(shown)
	if _, err := s.query(es.ToMain); err != nil {
		return all.String(), err
	}
	out, err = send(es.Continue, &hideLines{w: s.opt.Out, skip: es.Continuing, from: []string{es.AtMain}})
	if err != nil {
		return all.String() + out, err
	}
	rest, atMain := cutAtLine(out, es.AtMain)
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
	out, err = send(es.Continue, &hideLines{w: s.opt.Out, skip: es.Continuing})
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

// cutAtLine returns out up to the line that starts with prefix (and a
// blank line before it), and whether there is one.
func cutAtLine(out, prefix string) (string, bool) {
	off := 0
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(P.StripANSI(l), prefix) {
			return strings.TrimRight(out[:off], "\r\n") + "\n", true
		}
		off += len(l)
	}
	return out, false
}

// hideLines passes a command's output on to w as it comes, except a first
// line that starts with skip, and everything from a line that starts with
// one of from (with the blank lines before it). A line is held back only
// while it could still turn out to be one of those, so that a question
// without a newline is shown at once.
type hideLines struct {
	w      io.Writer
	skip   string
	from   []string
	line   []byte // the current line, not yet shown
	shown  bool   // the start of the current line was shown already
	blanks []byte // blank lines held back
	lines  int
	hidden bool
}

func (h *hideLines) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 && !h.hidden {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			h.line = append(h.line, b...)
			b = nil
		} else {
			h.line = append(h.line, b[:i+1]...)
			b = b[i+1:]
		}
		whole := i >= 0
		if h.shown {
			h.out(h.line)
		} else if text := strings.TrimRight(P.StripANSI(string(h.line)), "\r\n"); whole {
			switch {
			case h.lines == 0 && h.skip != "" && strings.HasPrefix(text, h.skip):
			case h.starts(text):
				h.hidden = true
			case text == "":
				h.blanks = append(h.blanks, h.line...)
			default:
				h.out(h.blanks)
				h.blanks = nil
				h.out(h.line)
			}
		} else if h.starts(text) {
			h.hidden = true // the line to hide, not whole yet
		} else if !h.couldStart(text) {
			h.out(h.blanks)
			h.blanks = nil
			h.out(h.line)
			h.shown = true
		} else {
			continue // hold the partial line
		}
		if whole {
			h.lines++
			h.shown = false
		}
		h.line = h.line[:0]
	}
	return n, nil
}

func (h *hideLines) out(b []byte) {
	if len(b) > 0 && h.w != nil {
		h.w.Write(b)
	}
}

func (h *hideLines) starts(text string) bool {
	for _, p := range h.from {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// couldStart: a partial line that may yet become a hidden one.
func (h *hideLines) couldStart(text string) bool {
	if h.lines == 0 && h.skip != "" && strings.HasPrefix(h.skip, text) {
		return true
	}
	for _, p := range h.from {
		if strings.HasPrefix(p, text) {
			return true
		}
	}
	return false
}

// flush shows what was held back once the command is over: a last line
// without a newline that was not one to hide, and blank lines.
func (h *hideLines) flush() {
	if h.hidden {
		return
	}
	text := strings.TrimRight(P.StripANSI(string(h.line)), "\r\n")
	if !h.starts(text) {
		h.out(h.blanks)
		h.out(h.line)
	}
	h.blanks, h.line = nil, nil
}
