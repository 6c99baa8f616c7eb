// Package history is the model of a debugging session's history: the
// steps of the current run (the person's commands, and the pieces fred
// refines them into), where the program stood after each, and the
// snapshots taken between them. A Timeline changes only through its
// methods; one function (Describe) says what fred's own steps did, in the
// person's words, for fred-history, fred-list, the SVG and messages.
package history

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fred-debugger/fred/internal/words"
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
	Watched                   // a stop of fred's watchpoint on a watched expression inside a command
	// StartUp is a run's way from the executable's entry point to main's
	// first line (its constructors): the first step of a run that has a
	// snapshot at the entry. The reverse commands stop at its end.
	StartUp
)

// StartUpOnly reports whether steps is a run's start-up and nothing more:
// main's first line, where the reverse commands stop.
func StartUpOnly(steps []Step) bool { return len(steps) == 1 && steps[0].Origin == StartUp }

// Synth reports whether fred made the step (refining the history).
func (a Step) Synth() bool { return a.Origin != Typed }

// PartOf makes a step of fred's part of p's command (p: the step it
// refines, itself the person's or part of theirs).
func (a Step) PartOf(p Step) Step {
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
		return Describe([]Step{a}, nil)
	}
	if a.Shown != "" {
		return a.Shown
	}
	return a.Cmd.String()
}

// Same reports whether two steps are the same command ending in the same
// place, so that histories can share a snapshot.
func (a Step) Same(b Step) bool {
	if !a.Known() || !b.Known() {
		return a.Cmd.Line == b.Cmd.Line
	}
	return a.Cmd.Line == b.Cmd.Line && a.At == b.At && a.Depth == b.Depth && a.Ended == b.Ended
}

// Known reports whether the step's end state was recorded (steps fred
// makes up while searching, such as "next 300", are not until replayed).
func (a Step) Known() bool { return a.Ended || a.At != (P.Location{}) }

// IsPrefix reports whether p is a prefix of steps.
func IsPrefix(p, steps []Step) bool {
	if len(p) > len(steps) {
		return false
	}
	for i := range p {
		if !p[i].Same(steps[i]) {
			return false
		}
	}
	return true
}

// With is steps followed by more, in a slice of its own.
func With(steps []Step, more ...Step) []Step {
	return append(append([]Step(nil), steps...), more...)
}

// DepthOf is the stack depth at the end of a history.
func DepthOf(steps []Step) int {
	if len(steps) == 0 {
		return 0
	}
	return steps[len(steps)-1].Depth
}

// Equal reports whether a and b are the same history.
func Equal(a, b []Step) bool { return len(a) == len(b) && IsPrefix(a, b) }

// Mark places a snapshot in the timeline: it was taken after Index steps.
type Mark struct {
	Snap  int
	Index int
}

// Timeline is the history of the current run: forward and state-changing
// commands in order, and the snapshots between them. Its zero value is an
// empty history.
type Timeline struct {
	steps []Step
	marks []Mark
	// start is where the run stood before its first step, when a snapshot
	// was taken there (an in-process debugger's program is stopped at its
	// first line from the start); the zero Step if not.
	start Step
}

// Reset starts a new run.
func (t *Timeline) Reset() { t.steps, t.marks, t.start = nil, nil, Step{} }

// Add appends a step.
func (t *Timeline) Add(s Step) { t.steps = append(t.steps, s) }

// Mark records a snapshot taken now.
func (t *Timeline) Mark(snap int) { t.marks = append(t.marks, Mark{Snap: snap, Index: len(t.steps)}) }

// Now is the latest step, or Start if there is none.
func (t *Timeline) Now() Step {
	if len(t.steps) == 0 {
		return t.start
	}
	return t.steps[len(t.steps)-1]
}

// Extends reports whether p is a prefix of the history (a snapshot taken
// after p lies on it), without a copy of the steps.
func (t *Timeline) Extends(p []Step) bool { return IsPrefix(p, t.steps) }

// Is reports whether the history is p: the program stands where p ends.
func (t *Timeline) Is(p []Step) bool { return Equal(p, t.steps) }

// Len is the number of steps.
func (t *Timeline) Len() int { return len(t.steps) }

// Step is step i (0 is the first).
func (t *Timeline) Step(i int) Step { return t.steps[i] }

// Steps is a copy of the steps, in order.
func (t *Timeline) Steps() []Step { return append([]Step(nil), t.steps...) }

// Marks is a copy of the marks, in order.
func (t *Timeline) Marks() []Mark { return append([]Mark(nil), t.marks...) }

// Start is where the run stood before its first step (see SetStart).
func (t *Timeline) Start() Step { return t.start }

// SetStart says where the run stood before its first step, when a
// snapshot was taken there.
func (t *Timeline) SetStart(s Step) { t.start = s }

// Set makes the history steps, with the snapshots marks on the way (the
// program stands at the end of steps now).
func (t *Timeline) Set(steps []Step, marks []Mark) {
	t.steps = append([]Step(nil), steps...)
	t.marks = nil
	for _, m := range marks {
		if m.Index <= len(steps) {
			t.marks = append(t.marks, m)
		}
	}
}

// SetSteps makes the history steps, keeping the marks that still lie on
// it (by their place: the caller knows the steps before them are kept).
func (t *Timeline) SetSteps(steps []Step) { t.Set(steps, t.marks) }

// SetNow replaces the latest step (what fred learnt of where it ended).
// It does nothing to an empty history.
func (t *Timeline) SetNow(s Step) {
	if n := len(t.steps); n > 0 {
		t.steps[n-1] = s
	}
}

// Position says where a history ends, in the person's words: "3
// commands ('next')", "1 command, then inside 'run': 2 stops by run
// time".
func Position(steps []Step) string {
	n := len(steps)
	if n == 0 {
		return "the start"
	}
	typed := 0
	for _, a := range steps {
		if !a.Synth() {
			typed++
		}
	}
	if !steps[n-1].Synth() {
		return fmt.Sprintf("%s ('%s')", words.Plural(typed, "command"), steps[n-1].Label())
	}
	i := n - 1
	for i > 0 && steps[i-1].Synth() && steps[i-1].Origin != StartUp {
		i--
	}
	if typed == 0 {
		return Describe(steps[i:], Places(steps))
	}
	return fmt.Sprintf("%s, then %s", words.Plural(typed, "command"), Describe(steps[i:], Places(steps)))
}

// FredsOwn: steps are all fred's (a search's moments), and some.
func FredsOwn(steps []Step) bool {
	for _, a := range steps {
		if !a.Synth() {
			return false
		}
	}
	return len(steps) > 0
}

// Places is where the known steps of a history stopped, by pc: a hit
// count's address is named by its line.
func Places(steps []Step) map[uint64]P.Location {
	m := map[uint64]P.Location{}
	for _, a := range steps {
		if a.Known() && a.At.PC != 0 {
			m[a.At.PC] = a.At
		}
	}
	return m
}

// Describe says in the person's words what steps of fred's did (steps
// made the same way, part of one command of theirs): "inside 'continue':
// 2 stops by run time, 277 passes of update at watch.c:12, step, next 4".
// at names addresses (nil: by their numbers).
func Describe(steps []Step, at map[uint64]P.Location) string {
	var parts []string
	for i := 0; i < len(steps); {
		a := steps[i]
		j := i + 1
		for j < len(steps) && steps[j].Origin == a.Origin && (a.Origin == Probe || a.Origin == ThreadTurn || a.Origin == Watched) {
			j++
		}
		n := j - i
		switch a.Origin {
		case Probe:
			parts = append(parts, words.Plural(n, "stop by run time", "stops by run time"))
		case Hits:
			of := a.Cmd.Args
			if pc, err := strconv.ParseUint(strings.TrimPrefix(of, "0x"), 16, 64); err == nil && at[pc] != (P.Location{}) {
				of = words.Where(at[pc])
			} else if a.Known() && !a.Ended {
				of = words.Where(a.At)
			}
			parts = append(parts, fmt.Sprintf("%s of %s", words.Plural(a.Cmd.Count, "pass", "passes"), of))
		case ThreadTurn:
			k := 0
			for _, t := range steps[i:j] {
				if t.Cmd.Op == P.OpStep {
					k++
				}
			}
			parts = append(parts, words.Plural(k, "statement")+" of one thread at a time")
		case Interrupted:
			parts = append(parts, "interrupted")
		case Watched:
			parts = append(parts, words.Plural(n, "change seen by a watchpoint", "changes seen by a watchpoint"))
		case StartUp:
			parts = append(parts, "the start-up to main")
		default:
			parts = append(parts, a.Cmd.String())
		}
		i = j
	}
	// The same piece again and again reads once, counted (a walk of
	// single nexts: "next x30").
	var runs []string
	for i := 0; i < len(parts); {
		j := i + 1
		for j < len(parts) && parts[j] == parts[i] {
			j++
		}
		if j-i > 1 {
			runs = append(runs, fmt.Sprintf("%s x%d", parts[i], j-i))
		} else {
			runs = append(runs, parts[i])
		}
		i = j
	}
	what := strings.Join(runs, ", ")
	for _, a := range steps {
		if a.Of != "" {
			return fmt.Sprintf("inside '%s': %s", a.Of, what)
		}
	}
	return "fred's " + what
}

// Common is how many steps a and b share from the start.
func Common(a, b []Step) int {
	n := 0
	for n < len(a) && n < len(b) && a[n].Same(b[n]) {
		n++
	}
	return n
}

// Within reports whether steps lies on one of lines.
func Within(steps []Step, lines [][]Step) bool {
	for _, l := range lines {
		if IsPrefix(steps, l) {
			return true
		}
	}
	return false
}
