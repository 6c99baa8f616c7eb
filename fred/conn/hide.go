package conn

import (
	"bytes"
	"io"
	"strings"

	P "github.com/fred-debugger/fred/personalities"
)

// CutAtLine returns out up to the line that starts with prefix (and a
// blank line before it), and whether there is one.
func CutAtLine(out, prefix string) (string, bool) {
	off := 0
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(P.StripANSI(l), prefix) {
			return strings.TrimRight(out[:off], "\r\n") + "\n", true
		}
		off += len(l)
	}
	return out, false
}

// HideLines passes a command's output on to w as it comes, except a first
// line that starts with skip, and everything from a line that starts with
// one of from (with the blank lines before it). A line is held back only
// while it could still turn out to be one of those, so that a question
// without a newline is shown at once.
type HideLines struct {
	W      io.Writer
	Skip   string
	From   []string
	line   []byte // the current line, not yet shown
	shown  bool   // the start of the current line was shown already
	blanks []byte // blank lines held back
	lines  int
	hidden bool
}

func (h *HideLines) Write(b []byte) (int, error) {
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
			case h.lines == 0 && h.Skip != "" && strings.HasPrefix(text, h.Skip):
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

func (h *HideLines) out(b []byte) {
	if len(b) > 0 && h.W != nil {
		h.W.Write(b)
	}
}

func (h *HideLines) starts(text string) bool {
	for _, p := range h.From {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// couldStart: a partial line that may yet become a hidden one.
func (h *HideLines) couldStart(text string) bool {
	if h.lines == 0 && h.Skip != "" && strings.HasPrefix(h.Skip, text) {
		return true
	}
	for _, p := range h.From {
		if strings.HasPrefix(p, text) {
			return true
		}
	}
	return false
}

// Flush shows what was held back once the command is over: a last line
// without a newline that was not one to hide, and blank lines.
func (h *HideLines) Flush() {
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
