package fred

import (
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
	// Origin says who made the step: the person, or fred refining the
	// history (a reverse command), and how.
	Origin Origin
	// Of is the person's command that a step of fred's is part of, as
	// they typed it ("" if fred ran the step on its own account).
	Of string
	// Shown is what the person typed when fred ran another command in its
	// place (a run replayed as a continue from main's first line).
	Shown string
}

// Origin is who made a step of the history, and how.
type Origin uint8

const (
	Typed       Origin = iota // the person's command
	Refined                   // a piece of a command: next k, step k, a continue to a call's return
	Probe                     // a stop by run time inside a command (a native probe)
	Hits                      // the Kth pass of an address inside a command
	ThreadTurn                // the thread search: select a thread, one statement of it alone
	Interrupted               // where an interrupted command stopped
)

// Synth reports whether fred made the step (refining the history).
func (a Step) Synth() bool { return a.Origin != Typed }

// partOf makes a step of fred's part of p's command (p: the step it
// refines, itself the person's or part of theirs).
func (a Step) partOf(p Step) Step {
	a.Of = p.Of
	if p.Origin == Typed {
		a.Of = p.Label()
	}
	return a
}

// Label is the step's command in the person's words: theirs as typed,
// fred's as a piece of it (Words, alone).
func (a Step) Label() string {
	if a.Origin != Typed {
		return describe([]Step{a}, nil)
	}
	if a.Shown != "" {
		return a.Shown
	}
	return a.Cmd.String()
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
