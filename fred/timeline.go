package fred

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	P "github.com/fred-debugger/fred/personalities"
)

// Step is one recorded command and where the program stood after it.
type Step struct {
	Cmd   P.Command
	At    P.Location
	Depth int
	Ended bool   // the program exited or was killed during the command
	Stop  P.Stop // why the command stopped
	// Bps are the breakpoints enabled when the command ran: replaying it
	// must see those and no others.
	Bps  []string
	Took time.Duration
	// Synth steps were made by fred refining the history (a reverse
	// command), not typed by the person.
	Synth bool
}

// same reports whether two steps are the same command ending in the same
// place, so that histories can share a snapshot.
func (a Step) same(b Step) bool {
	if !a.known() || !b.known() {
		return a.Cmd.Line == b.Cmd.Line
	}
	return a.Cmd.Line == b.Cmd.Line && a.At == b.At && a.Depth == b.Depth && a.Ended == b.Ended
}

// known reports whether the step's end state was recorded (steps fred
// makes up while searching, such as "next 300", are not until replayed).
func (a Step) known() bool { return a.Ended || a.At != (P.Location{}) }

// isPrefix reports whether p is a prefix of steps.
func isPrefix(p, steps []Step) bool {
	if len(p) > len(steps) {
		return false
	}
	for i := range p {
		if !p[i].same(steps[i]) {
			return false
		}
	}
	return true
}

// Mark places a snapshot in the timeline: it was taken after Index steps.
type Mark struct {
	Snap  int
	Index int
}

// Timeline is the history of the current run: forward and state-changing
// commands in order, and the snapshots between them.
type Timeline struct {
	Steps []Step
	Marks []Mark
	// Start is where the run stood before its first step, when a snapshot
	// was taken there (an in-process debugger's program is stopped at its
	// first line from the start); the zero Step if not.
	Start Step
}

// Reset starts a new run.
func (t *Timeline) Reset() { t.Steps, t.Marks, t.Start = nil, nil, Step{} }

// Add appends a step.
func (t *Timeline) Add(s Step) { t.Steps = append(t.Steps, s) }

// Mark records a snapshot taken now.
func (t *Timeline) Mark(snap int) { t.Marks = append(t.Marks, Mark{Snap: snap, Index: len(t.Steps)}) }

// Now is the latest step, or Start if there is none.
func (t *Timeline) Now() Step {
	if len(t.Steps) == 0 {
		return t.Start
	}
	return t.Steps[len(t.Steps)-1]
}

// Write prints the history: the commands grouped by the snapshot they
// follow, then where the person is now.
func (t *Timeline) Write(w io.Writer) {
	if len(t.Steps) == 0 && len(t.Marks) == 0 {
		fmt.Fprintln(w, "fred: no history yet: start the program with 'run' or 'start'")
		return
	}
	type group struct {
		label string
		cmds  []string
	}
	groups := []group{{label: "[start]"}}
	mi := 0
	for i := 0; i <= len(t.Steps); i++ {
		for mi < len(t.Marks) && t.Marks[mi].Index == i {
			g := group{label: fmt.Sprintf("[ckpt %d]", t.Marks[mi].Snap)}
			if len(groups) == 1 && len(groups[0].cmds) == 0 && i == 0 {
				groups[0] = g
			} else {
				groups = append(groups, g)
			}
			mi++
		}
		if i < len(t.Steps) {
			g := &groups[len(groups)-1]
			c := t.Steps[i].Cmd.String()
			// A run of the same command reads as one: "next ×40".
			if n := len(g.cmds); n > 0 && (g.cmds[n-1] == c || strings.HasPrefix(g.cmds[n-1], c+" ×")) {
				k := 1
				if _, cnt, ok := strings.Cut(g.cmds[n-1], " ×"); ok {
					k, _ = strconv.Atoi(cnt)
				}
				g.cmds[n-1] = fmt.Sprintf("%s ×%d", c, k+1)
				continue
			}
			g.cmds = append(g.cmds, c)
		}
	}
	fmt.Fprintf(w, "fred: history (%d commands):\n", len(t.Steps))
	for _, g := range groups {
		fmt.Fprintf(w, "  %-9s %s\n", g.label, strings.Join(g.cmds, ", "))
	}
	now := t.Now()
	switch {
	case len(t.Steps) == 0:
		fmt.Fprintln(w, "  now: at the snapshot")
	case now.Ended:
		fmt.Fprintf(w, "  now: the program has ended (after '%s')\n", now.Cmd)
	default:
		fmt.Fprintf(w, "  now: %s, depth %d, after '%s'\n", now.At, now.Depth, now.Cmd)
	}
}
