package personalities

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// Stepper is what a debugger can do in one round trip that fred would
// otherwise do with one round trip per statement: counting the `next`s of
// a long command, and bringing a program stopped anywhere (fred
// interrupted it) to a statement boundary. gdb gets it from Python
// helpers fred installs at startup.
type Stepper struct {
	// Nexts runs at most Max `next`s and says how many ran and why it
	// stopped; see NextsMode.
	Nexts func(max int, mode NextsMode) string
	// Settle (%d: the depth it may go down to, 0 any) brings the program
	// to the first statement boundary, in code with source, at or after
	// where it is.
	Settle string
	// Fingerprint prints the registers, which tell one moment of a loop
	// from another at the same line.
	Fingerprint string
	// Where prints "FREDWHERE PC EFLAGS LWP" for the selected thread.
	Where string
	// Hits, where set, runs the program until the selected thread is
	// about to execute the instruction at addr for the k-th time from
	// now (the present one not counted), with a software breakpoint and
	// an ignore count, and prints "FREDHITS N": the executions counted.
	// fred uses it where the debug registers do not count.
	Hits func(addr uint64, k int) string
	// Steps, where set, runs at most max `step`s counted in the program
	// (an in-process debugger's trace function), stopping early as mode
	// says, and prints "FREDNEXTS N WHY" as Nexts does (N counts the step
	// it stopped at). WHY "passed": the N-th step is where the count
	// ended (a breakpoint, the end of the next), and the program stopped
	// one step later; "unsupported": it did not run.
	Steps func(max int, mode StepsMode) string
	// StepsWatch: Steps takes StepsMode.Watch. WatchMax, where set, is
	// the most steps one such count watches (each step's evaluation costs
	// what it costs: perl's walks the call stack, about 6 us).
	StepsWatch bool
	WatchMax   int
	// Stepis, where set, runs at most max `stepi`s (breakpoints off)
	// until the selected thread is at f (its registers: f.FP), at least
	// one, and prints "FREDSTEPIS N SAME RET": N stepis got there, SAME is
	// the last of them (0 the start) that began in function c.Fn with the
	// stack pointer at c.SP or above (-1: none), and RET is 1 when the
	// last one was a return; "FREDSTEPIS none N" when it did not get there.
	Stepis func(max int, f, c Frame) string
	// Frame prints "FREDFRAME PC SP REGS FUNCTION" for the selected
	// thread ("-": a function without a name).
	Frame string
}

// Frame is where a thread is, for counting instructions.
type Frame struct {
	PC, SP uint64
	FP     string // the general registers but the flags
	Fn     string
}

// ParseFrame reads the answer of Stepper.Frame.
func ParseFrame(out string) (Frame, error) {
	rest, err := ParseTagged(out, "FREDFRAME ")
	if err != nil {
		return Frame{}, err
	}
	var f Frame
	if _, err := fmt.Sscanf(rest, "%d %d %s", &f.PC, &f.SP, &f.FP); err != nil {
		return Frame{}, fmt.Errorf("bad answer from fred-frame: %q", rest)
	}
	// The name is the rest of the line: C++ names have spaces.
	if fl := strings.SplitN(rest, " ", 4); len(fl) == 4 {
		f.Fn = fl[3]
	}
	return f, nil
}

// StepisResult is the answer of Stepper.Stepis.
type StepisResult struct {
	N, Same int
	Ret     bool // the last stepi was a return
	Reached bool // false: the stepis did not get there (N ran)
}

// ParseStepis reads the answer of Stepper.Stepis.
func ParseStepis(out string) (StepisResult, error) {
	rest, err := ParseTagged(out, "FREDSTEPIS ")
	if err != nil {
		return StepisResult{}, err
	}
	var r StepisResult
	if _, err := fmt.Sscanf(rest, "none %d", &r.N); err == nil {
		return r, nil
	}
	var ret int
	if _, err := fmt.Sscanf(rest, "%d %d %d", &r.N, &r.Same, &ret); err != nil {
		return r, fmt.Errorf("bad answer from the counted stepi: %q", rest)
	}
	r.Ret, r.Reached = ret == 1, true
	return r, nil
}

// StepsMode says when a counted `step` loop ends besides its count, a
// signal or the end of the program.
type StepsMode struct {
	// AtBps: at the first breakpoint a `continue` would stop at.
	AtBps bool
	// Until "next" or "finish": where that command, run from the start,
	// would stop.
	Until string
	// Track: say which step was the last before the end in a shallower
	// frame (NextsResult.Shallower): where the frame of the end was
	// called from.
	Track bool
	// Watch, when Expr is set: evaluate Expr at every step counted, its
	// names looked up in the frame of the scope key Key (ScopeCmd's; ""
	// for the frame of each step), and say which step was the last where
	// its value differed from the value at the start
	// (NextsResult.Away): the last change of a reverse-watch's
	// expression inside one command.
	Watch struct{ Key, Expr string }
}

// NextsMode says when a counted `next` loop stops besides a breakpoint, a
// signal or the end of the program.
type NextsMode struct {
	// Shallower: when a `next` returns from the frame it started in
	// (finish). That `next` is not counted.
	Shallower bool
	// Fingerprint: when the program reaches the registers FP (a moment
	// fred recorded). That `next` is counted.
	FP string
}

// NextsResult is the answer of a counted `next` loop.
type NextsResult struct {
	N   int    // `next`s that ended normally (and the matching one, for FP)
	Why string // "limit", "done" (at FP or shallower), "breakpoint", "signal", "exited"
	// Shallower, for Steps with StepsMode.Track: the last step before
	// the one it stopped at whose frame was shallower (0: where the count
	// started), or -1 if none was.
	Shallower int
	// Away, for Steps with StepsMode.Watch: the last step counted where
	// the expression had another value than at the start (-1: none), and
	// that value (AwayValue, as EvalCmd's answer gives it).
	Away      int
	AwayValue string
}

// ParseNexts reads the answer of Stepper.Nexts.
func ParseNexts(out string) (NextsResult, error) {
	i := strings.LastIndex(out, "FREDNEXTS ")
	if i < 0 {
		return NextsResult{}, fmt.Errorf("no answer from the counted next: %q", lastLines(out))
	}
	line, _, _ := strings.Cut(out[i+len("FREDNEXTS "):], "\n")
	line = strings.TrimRight(line, "\r")
	f := strings.Fields(line)
	if len(f) < 2 {
		return NextsResult{}, fmt.Errorf("bad answer from the counted next: %q", out[i:])
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return NextsResult{}, fmt.Errorf("bad answer from the counted next: %q", out[i:])
	}
	r := NextsResult{N: n, Why: f[1], Shallower: -1, Away: -1}
	if len(f) > 2 {
		if k, err := strconv.Atoi(f[2]); err == nil {
			r.Shallower = k
		}
	}
	// "... away K VALUE": the value is the rest of the line.
	if _, away, ok := strings.Cut(line, " away "); ok {
		k, v, _ := strings.Cut(away, " ")
		if r.Away, err = strconv.Atoi(k); err != nil {
			return NextsResult{}, fmt.Errorf("bad answer from the counted step: %q", line)
		}
		r.AwayValue = v
	}
	return r, nil
}

// ParseTagged reads the rest of the line after tag ("FREDSETTLE ").
func ParseTagged(out, tag string) (string, error) {
	i := strings.LastIndex(out, tag)
	if i < 0 {
		return "", fmt.Errorf("no %s answer: %q", strings.TrimSpace(tag), lastLines(out))
	}
	rest, _, _ := strings.Cut(out[i+len(tag):], "\n")
	return strings.TrimSpace(rest), nil
}

func lastLines(s string) string {
	s = StripANSI(s)
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	return s
}
