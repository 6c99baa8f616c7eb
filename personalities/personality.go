// Package personalities holds what fred knows about each debugger: how to
// start it, its prompt, which commands move the program, and small parsers
// for its answers. Everything generic lives in package fred.
package personalities

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/internal/forkcall"
)

// Kind says what a debugger command does to the program.
type Kind int

const (
	Other      Kind = iota // passed through, not recorded
	Inspect                // print, where, info: never replayed
	Forward                // moves the program: enters the history
	Mutate                 // changes program state (set var, call): replayed in order
	Breakpoint             // changes breakpoints or watchpoints
	Kill                   // ends the program
	Quit                   // ends the debugger
)

func (k Kind) String() string {
	return [...]string{"other", "inspect", "forward", "mutate", "breakpoint", "kill", "quit"}[k]
}

// Canonical names of forward commands, shared by all personalities.
const (
	OpRun      = "run"
	OpStart    = "start"
	OpStarti   = "starti" // a run that stops at the first instruction
	OpContinue = "continue"
	OpNext     = "next"
	OpStep     = "step"
	OpFinish   = "finish"
	OpUntil    = "until"
	OpAdvance  = "advance"
	OpStepi    = "stepi"
	OpNexti    = "nexti"
	OpJump     = "jump"
)

// Command is one classified line typed to the debugger.
type Command struct {
	Line  string // as typed
	Kind  Kind
	Op    string // canonical name ("next"), or the first word if unknown
	Count int    // repeat count ("next 3"), 1 if none
	Args  string // the rest of the line after the command word
}

// String gives the command as fred shows it in the history.
func (c Command) String() string {
	s := c.Op
	if c.Count > 1 {
		s += " " + strconv.Itoa(c.Count)
	} else if c.Args != "" {
		s += " " + c.Args
	}
	return s
}

// Spec describes one debugger command. Name uses the notation "fin[ish]":
// the part before '[' is the shortest accepted prefix.
type Spec struct {
	Names []string
	Kind  Kind
	Op    string // canonical name; defaults to the full first name
	Count bool   // a numeric argument is a repeat count
}

// Location is where the program is stopped.
type Location struct {
	File     string
	Line     int
	Function string
	PC       uint64 // 0 when the debugger has no program counter (pdb, perl)
	// Unwind is set at a stop on the way out of a frame rather than
	// before a statement (pdb's "--Return--" and exception stops): an
	// exception's way up the stack is a run of them.
	Unwind bool
}

func (l Location) String() string {
	if l.File == "" && l.Function == "" && l.PC == 0 {
		return "unknown location"
	}
	if l.File == "" && l.PC != 0 {
		// Code without line information: the address is all there is.
		return strings.TrimSpace(fmt.Sprintf("%s at 0x%x", l.Function, l.PC))
	}
	s := l.Function
	if s != "" {
		s += " "
	}
	if l.File != "" {
		s += fmt.Sprintf("at %s:%d", filepath.Base(l.File), l.Line)
	}
	if l.PC != 0 {
		s += fmt.Sprintf(" (pc 0x%x)", l.PC)
	}
	return strings.TrimSpace(s)
}

// Bp is one breakpoint (or watchpoint).
type Bp struct {
	Num     string
	Where   string // where it stops, in a form BreakAt accepts
	Orig    string // where the person put it, as they said it (gdb's original location), if known
	Enabled bool
	Temp    bool // deleted once hit (tbreak)
}

// Stop says why a forward command stopped.
type Stop int

const (
	StopDone       Stop = iota // the command ran its course (a step ended)
	StopBreakpoint             // a breakpoint or watchpoint was hit
	StopSignal                 // the program got a signal (Ctrl-C, SIGSEGV)
	StopEnded                  // the program exited or was killed
)

// ErrNotRunning means the debugger has no live program to answer about.
var ErrNotRunning = errors.New("the program is not running")

// ErrCallStopped means a function the expression called was stopped, by
// a signal or a breakpoint, and the debugger left the program inside it.
var ErrCallStopped = errors.New("a function the expression called was stopped")

// Personality is the data and parsers for one debugger.
type Personality struct {
	Name string
	// File is the personality file it was read from ("" for one built
	// into fred), for messages.
	File string
	// Debuggers are the argv[0] base names that select this personality.
	Debuggers []string
	// Prompt is what the person sees as the prompt.
	Prompt string
	// PromptQuery, where set, asks the debugger for the prompt it would
	// show now ("@fred prompt [  DB<3> ]"): perl's counts the person's
	// commands.
	PromptQuery string
	// StartHint says how to (re)start the program in this debugger, for
	// messages: "start it with %s".
	StartHint string
	// Argv turns the person's command line into the one fred starts; marker is
	// the unique prompt fred waits for, tty the pty's slave path.
	Argv func(argv []string, marker, tty string) []string
	// NoCtty starts the debugger without a controlling terminal, so that the
	// program it starts on tty can own the pty (gdb's inferior-tty): CRIU
	// can only restore a terminal together with its session leader, and
	// Ctrl-C then signals the program directly.
	NoCtty bool
	// Env is added to the debugger's environment.
	Env []string
	// LineEditorAtSize: the debugger turns its own line editor on when
	// its terminal has a width, and that editor drops the marker's control
	// bytes from the prompt (lldb's editline). It starts on a terminal of
	// no width, which it then takes for a plain one for good, and gets
	// the real size once it prompts (fred edits the lines itself).
	LineEditorAtSize bool
	// InitialPrompt matches the debugger's first prompt when it cannot be
	// given the marker on its command line; nil means the marker is used
	// from the start.
	InitialPrompt *Pattern
	// Setup are sent, silently, once the debugger is up.
	Setup func(marker string) []string
	// Batch are sent, silently, when no person answers questions (stdin is
	// not a terminal): the debugger then answers its own questions.
	Batch []string
	// Commands classifies what a person types.
	Commands []Spec
	// Mutates reports whether an otherwise inspecting command changes
	// program state (gdb's "print x = 3").
	Mutates func(c Command) bool
	// Repeat gives the line an empty line repeats, or "" if none.
	Repeat func(last Command) string

	// Queries fred sends, and their parsers.
	LocationCmd   string
	ParseLocation func(out string) (Location, error)
	DepthCmd      string
	ParseDepth    func(out string) (int, error)
	PidCmd        string
	ParsePid      func(out string) (int, error)
	// CallerCmd asks where the selected frame returns to; ParseCaller
	// reads the address. A `step` that ends at the same depth in a frame
	// that returns elsewhere entered another call (the second of two calls
	// on one line): fred tells the two apart by it. Empty where there is
	// no such address.
	CallerCmd   string
	ParseCaller func(out string) (uint64, error)
	// StopReason reads why a forward command stopped from its output.
	StopReason func(out string) Stop
	// BreakpointsCmd lists the breakpoints, ParseBreakpoints reads them.
	BreakpointsCmd   string
	ParseBreakpoints func(out string) []Bp
	// Enable, Disable and Delete take breakpoint numbers (%s); BreakAt
	// takes a Bp.Where and ParseNewBreakpoint reads the new number.
	Enable, Disable, Delete, BreakAt string
	ParseNewBreakpoint               func(out string) string
	// Rebreak makes the person's breakpoint again from its Bp.Where, as
	// one of theirs (a saved session opened, fred-save); "" when BreakAt's
	// are theirs already.
	Rebreak string
	// EvalCmd asks for an expression's value; ParseEval reads it, with
	// the debugger's error as an error.
	EvalCmd   func(expr string) string
	ParseEval func(out string) (string, error)
	// ScopeCmd, when set, makes the selected frame the one a watched
	// expression's names are looked up in (gdb keeps a watchpoint on a
	// local to its frame): ScopedEvalCmd, read by ParseEval, evaluates in
	// that frame while it is on the stack, in the selected one otherwise.
	// A debugger inside the program, whose snapshots forget what it was
	// told, answers "FREDSCOPEKEY KEY" to ScopeCmd, and fred passes KEY
	// to ScopedEvalCmd and ScopeWhere ("" for one that keeps the frame).
	ScopeCmd      string
	ScopedEvalCmd func(expr, key string) string
	// ScopeWhere answers "FREDSCOPE LEVEL FUNCTION": where that frame is
	// on the stack now (LEVEL -1: not on it), and ScopeSelect (with %d
	// for LEVEL) says what the person types to get at it.
	ScopeWhere  func(key string) string
	ScopeSelect string
	// EvalFailed matches a value ParseEval gives for an expression that
	// raised (pdb, perl): a value, so that a search counts it as another
	// one, but not one to watch for.
	EvalFailed *Pattern
	// Passes matches a Bp.Where whose breakpoint lets crossings pass (an
	// ignore count): a count started inside a continue that ran with it
	// would start the ignore count afresh, so only the continue's start
	// serves.
	Passes *Pattern
	// NoName matches the debugger's answer to an expression with a name
	// not defined where it is evaluated (gdb: a local of main's at the
	// program's entry point), as opposed to one it could not read.
	NoName *Pattern
	// Native maps the debugger's own reverse commands to fred's, for a
	// hint when the debugger refuses them; NativeRefused matches that.
	Native        map[string]string
	NativeRefused *Pattern
	// EchoCmd makes the debugger print token (which holds control bytes):
	// fred uses it to be sure it is in step with the debugger.
	EchoCmd func(token string) string
	// KillLine is the key that empties the line being typed (Ctrl-U, in
	// readline and in the terminal's own line editing): fred's first
	// line after a person's command starts with it, so that what the
	// person typed meanwhile is not joined to it.
	KillLine string
	// BlockStart matches a command that reads lines up to "end", or up
	// to a line BlockEnd matches, which belongs to the block (pdb's
	// commands end at a command that resumes the program too).
	BlockStart, BlockEnd *Pattern
	// Refused reports whether the debugger declined or failed a command,
	// so that it did not happen.
	Refused func(out string) bool
	// NewRun reports whether a run/start command's output says a new
	// process started.
	NewRun func(out string) bool
	// Ended reports whether a forward command's output says the program
	// exited or was killed.
	Ended func(out string) bool
	// Quiet wraps an internal command so it asks no questions.
	Quiet func(cmd string) string

	// SoftWatch makes the debugger's watchpoints software ones, sent at
	// startup where the machine's debug registers do not work (a
	// hardware watchpoint would never trigger there).
	SoftWatch string
	// Plain are the debugger's arguments (put after its name) that turn
	// its own colours off, for output that is not a colour terminal
	// (piped, TERM=dumb, NO_COLOR): from its banner on.
	Plain []string
	// EarlyStart, when set, lets a run's first snapshot come at main's
	// first line rather than at the person's first stop.
	EarlyStart *EarlyStart

	// Threads is set for debuggers that show the program's threads.
	Threads *Threads
	// Tracer is set for debuggers that trace the program from their own
	// process (gdb): a snapshot detaches them first and attaches after.
	Tracer *Tracer
	// FrameCmd shows the current location as after a stop.
	FrameCmd string
	// Stepper is set for debuggers that can run many steps in one round
	// trip (gdb, through fred's Python helpers).
	Stepper *Stepper

	// InProcess debuggers live inside the program's process (pdb, perl
	// -d): the process fred talks to is the program, a snapshot holds the
	// debugger too, and restoring one replaces the debugger's process.
	InProcess bool
	// SaveState and LoadState write the debugger's own settings that live
	// in the program's process (breakpoints, aliases) to a file and read
	// them back (%s is the file), so that restoring an older snapshot keeps
	// the settings the person has now, as with gdb.
	SaveState, LoadState string
	// Fork makes the debugger fork its interpreter for a snapshot (%s is
	// a FIFO): the parent answers "@fred fork PID" naming a copy that
	// waits, immune to the terminal's signals, until a byte arrives on
	// the FIFO (it opens it without waiting for a writer, and exits when
	// a read finds no writer left: fred, which holds it, is gone); then
	// it leaves a fresh copy waiting on the same FIFO,
	// takes the terminal (setsid, TIOCSCTTY), answers "@fred fork PID"
	// naming that fresh copy, and prompts. See ckpt.InterpFork.
	Fork string
	// Probes, where set, has the program leave paused copies of itself
	// (as Fork's) while the person's continue runs; see Probes.
	Probes *Probes
	// StopCmd asks why the program last stopped, for debuggers whose
	// output does not say that a breakpoint stopped it; ParseStop reads
	// the answer. Asked only when StopReason says StopDone.
	StopCmd   string
	ParseStop func(out string) Stop
	// NoCountArg says next and step take no repeat count: fred sends
	// "next" N times where it would send "next N".
	NoCountArg bool
	// Split cuts a line into the command word and the rest as the debugger
	// does ("c.x = 1" is pdb's continue); nil: at the first space.
	Split func(line string) (word, args string)
}

// Tracer holds the commands that let go of a traced program and take it
// back.
type Tracer struct {
	Detach string
	Attach string // with %d for the pid
	Kill   string
	// Settle runs right after an attach. gdb does not know an attached
	// program sits on a breakpoint, so its next resume would hit that
	// breakpoint again without moving; a stop gdb sees for itself at the
	// same pc fixes that.
	Settle []string
	// Fork, where set, drives fork copies of the program (the fork
	// backend, ckpt.Fork) through the session's query.
	Fork func(query func(cmd string) (string, error)) forkcall.Tracer
	// Reap has the debugger collect its child pid (%d), a zombie, without
	// waiting: a program it started, killed, that it left uncollected.
	Reap string
	// DebugDir is the setting that says where separate debug information
	// is, and Reload reads the libraries' symbols again after it changed
	// (fred/lean.go).
	DebugDir string
	Reload   []string
	// Show and Set read and write a setting of the debugger's (Show: %s
	// the setting; Set: %s the setting, %s the value).
	Show, Set string
	// Env and SetEnv read and write a variable of the environment the
	// debugger runs the program with (%s the name; SetEnv: %s the value);
	// EnvValue reads Env's answer for name ("" if unset); UnsetEnv takes
	// a variable out of it.
	Env, SetEnv, UnsetEnv string
	EnvValue              func(out, name string) string
	// AtAddr is a breakpoint location at an address (%x).
	AtAddr string
	// Watch is the Bp.Where of a hardware watchpoint of fred's on an
	// expression (%s the scope key ScopeCmd answered, "-" for the selected
	// frame; %s the expression): fred runs the rest of a `continue` with
	// it to find the last change there. WatchKind asks whether the
	// debugger would make it a hardware one, which a `continue` runs with
	// at full speed ("FREDWATCH hw", else "FREDWATCH sw"); Triggered
	// matches the stop it makes.
	Watch     string
	WatchKind func(key, expr string) string
	Triggered *Pattern
}

// AtAddress is the breakpoint location at pc.
func (t *Tracer) AtAddress(pc uint64) string { return fmt.Sprintf(t.AtAddr, pc) }

// Address reads a location AtAddress made; ok is false for any other,
// and for a debugger that is no Tracer (nil).
func (t *Tracer) Address(loc string) (pc uint64, ok bool) {
	if t == nil || t.AtAddr == "" {
		return 0, false
	}
	_, err := fmt.Sscanf(loc, t.AtAddr, &pc)
	return pc, err == nil && t.AtAddress(pc) == loc
}

// Threads is what fred needs of a debugger that shows a program's
// threads (gdb): list them with where each stands, select one by its
// kernel thread id (stable across snapshots, unlike the debugger's
// numbers), and run a command with only the selected thread running.
type Threads struct {
	List    string // answers one "@fred thread NUM LWP WAITING "NAME" FUNCTION FILE:LINE" line per thread
	Current string // answers "@fred thread NUM LWP ..." for the selected thread
	Select  string // with %d for the LWP
	// Locked runs a command (%s) with the other threads held and the
	// person's setting back after. A thread asleep in a wait meanwhile
	// waits for a held one, and one still running after the limit (%g,
	// seconds; none if negative) some other way: either is stopped, which
	// Blocked matches in the output; its first group is not empty for the
	// second kind (where such a thread stops depends on the machine's
	// speed, so a replay of the command stops it elsewhere).
	Locked  string
	Blocked *Pattern
	// Step is one statement of the selected thread's own code, for
	// Locked: out of a wait or library code first, and not into library
	// code.
	Step   string
	Exited string // what Step says when its thread exited and another is selected
	Hold   string // what the person types so that step runs the selected thread alone
}

// ThreadInfo is one thread as Threads.List gives it.
type ThreadInfo struct {
	Num, LWP int
	Waiting  bool   // stopped in a lock wait or another blocking call
	Name     string // the thread's name ("" if it has none)
	Function string // innermost frame with source, or the innermost
	File     string
	Line     int
}

var threadLine = regexp.MustCompile(`(?m)^@fred thread (\d+) (\d+) ([01]) (?:("(?:[^"\\]|\\.)*") )?(\S+) (.*):(\d+)\r?$`)

// ParseThreads reads Threads.List's (or Current's) answer.
func ParseThreads(out string) []ThreadInfo {
	var ts []ThreadInfo
	for _, m := range threadLine.FindAllStringSubmatch(out, -1) {
		num, _ := strconv.Atoi(m[1])
		lwp, _ := strconv.Atoi(m[2])
		line, _ := strconv.Atoi(m[7])
		name, _ := strconv.Unquote(m[4]) // JSON's escapes are Go's
		ts = append(ts, ThreadInfo{Num: num, LWP: lwp, Waiting: m[3] == "1", Name: name, Function: m[5], File: m[6], Line: line})
	}
	return ts
}

// String names the thread as a person finds it in the debugger: its
// number, kernel id and name.
func (t ThreadInfo) String() string {
	if t.Name == "" {
		return fmt.Sprintf("thread %d (LWP %d)", t.Num, t.LWP)
	}
	return fmt.Sprintf("thread %d (LWP %d, %q)", t.Num, t.LWP, t.Name)
}

var all = []*Personality{GDB, PDB, Perl, LLDB}

// All returns every personality.
func All() []*Personality { return all }

// ByName finds a personality by name.
func ByName(name string) (*Personality, error) {
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown personality %q (known: %s)", name, strings.Join(names(), ", "))
}

// Named is ByName, or the personality file at nameOrPath when it names
// a file (a path with a slash, or ending in .fred).
func Named(nameOrPath string) (*Personality, error) {
	if strings.ContainsRune(nameOrPath, '/') || strings.HasSuffix(nameOrPath, ".fred") {
		return LoadFile(nameOrPath)
	}
	return ByName(nameOrPath)
}

// ForArgv picks the personality from the debugger's command line.
func ForArgv(argv []string) (*Personality, error) {
	if len(argv) == 0 {
		return nil, errors.New("no debugger command given")
	}
	base := filepath.Base(argv[0])
	for _, p := range all {
		for _, d := range p.Debuggers {
			if base == d {
				return p, nil
			}
		}
	}
	return nil, fmt.Errorf("no personality for %q (known: %s); use --personality NAME", argv[0], strings.Join(names(), ", "))
}

func names() []string {
	var n []string
	for _, p := range all {
		n = append(n, p.Name)
	}
	return n
}

// Classify turns a typed line into a Command.
func (p *Personality) Classify(line string) Command {
	line = strings.TrimSpace(line)
	word, args, _ := strings.Cut(line, " ")
	args = strings.TrimSpace(args)
	match := line
	if p.Split != nil {
		word, args = p.Split(line)
		match = word + " " + args
	}
	c := Command{Line: line, Op: word, Args: args, Count: 1}
	// "p/x v", "x/4xw $sp": the format is not part of the command word.
	if w, _, ok := strings.Cut(word, "/"); ok && w != "" {
		match = w + " " + line[len(word):]
	}
	for _, s := range p.Commands {
		// Multi-word specs ("set var[iable]") match on the whole line.
		for _, n := range s.Names {
			if rest, ok := matchSpec(n, match); ok {
				c.Kind, c.Args = s.Kind, rest
				c.Op = s.Op
				if c.Op == "" {
					c.Op = strings.NewReplacer("[", "", "]", "").Replace(s.Names[0])
				}
				if s.Count && rest != "" {
					if n, err := strconv.Atoi(rest); err == nil && n > 0 {
						c.Count, c.Args = n, ""
					}
				}
				if p.Mutates != nil && c.Kind != Mutate && p.Mutates(c) {
					c.Kind = Mutate
				}
				return c
			}
		}
	}
	if p.Mutates != nil && p.Mutates(c) {
		c.Kind = Mutate
	}
	return c
}

// matchSpec matches a spec name like "set var[iable]" against a line and
// returns the rest of the line.
func matchSpec(spec, line string) (string, bool) {
	sw := strings.Fields(spec)
	lw := strings.Fields(line)
	if len(lw) < len(sw) {
		return "", false
	}
	for i, s := range sw {
		if !matchWord(s, lw[i]) {
			return "", false
		}
	}
	// Rest of the line after len(sw) words, spacing preserved.
	rest := line
	for range sw {
		rest = strings.TrimLeft(rest, " \t")
		if i := strings.IndexAny(rest, " \t"); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
	}
	return strings.TrimSpace(rest), true
}

func matchWord(spec, w string) bool {
	min, opt, ok := strings.Cut(spec, "[")
	if !ok {
		return w == spec
	}
	full := min + strings.TrimSuffix(opt, "]")
	return strings.HasPrefix(full, w) && len(w) >= len(min)
}

var ansiRE = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-B]|[=>])`)

// StripANSI removes terminal escape sequences (colours, bracketed paste).
func StripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// blankStrings blanks out the insides of quoted literals ('...' and "...")
// and cuts the line at a comment character (0: none), so that operators
// inside strings do not count when a line is classified.
func blankStrings(e string, comment byte) string {
	b := []byte(e)
	for i := 0; i < len(b); i++ {
		if comment != 0 && b[i] == comment {
			return string(b[:i])
		}
		if q := b[i]; q == '"' || q == '\'' {
			for i++; i < len(b) && b[i] != q; i++ {
				if b[i] == '\\' && i+1 < len(b) {
					b[i] = ' '
					i++
				}
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// stopReason reads why a command stopped from what the debugger printed:
// the program ended, hit a breakpoint (nil: the debugger does not say),
// or got a signal.
func stopReason(ended, hit, signal *Pattern) func(string) Stop {
	return func(out string) Stop {
		out = StripANSI(out)
		switch {
		case ended.MatchString(out):
			return StopEnded
		case hit != nil && hit.MatchString(out):
			return StopBreakpoint
		case signal.MatchString(out):
			return StopSignal
		}
		return StopDone
	}
}

// EarlyStart is how fred runs a program so that everything from main's
// first line on can be revisited, whatever the person's first stop is (a
// crash, a breakpoint hit late): the person's `run` becomes a start
// stopped at the first instruction, a run to main with a breakpoint of
// fred's own, the first snapshot there, and a continue from there.
type EarlyStart struct {
	// Starti starts the program with the arguments of the person's run
	// (empty: the previous ones) and stops at its first instruction.
	Starti func(args string) string
	// Stopped starts the line that reports that stop; it, a blank line
	// before it and all that follows are not shown.
	Stopped string
	// ToEntry makes the program stop once at the executable's entry
	// point, where its own constructors have not run yet, with a
	// breakpoint that uses none of the person's numbers: it prints
	// "@fred to the entry point", or "@fred at the entry point" if the
	// program already stands there (a static program). Empty: no stop
	// there. ToMain does the same at main's first line; Forget deletes
	// those breakpoints if they were not hit.
	ToEntry, ToMain, Forget string
	// Reached prints "@fred reached" if the program stands at the
	// breakpoint ToMain set, having hit it, even if a breakpoint of the
	// person's at the same place was the one reported.
	Reached string
	// AtMain starts the line that reports that stop, hidden as Stopped.
	AtMain string
	// Continue runs on; the line it prints first, Continuing, is not
	// shown (the person typed run).
	Continue, Continuing string
	// MainBreak is the person's `start` before it runs as a `run`: a
	// temporary breakpoint of theirs at main, as the debugger's own
	// `start` makes (empty: `start` is not run from the entry point).
	// HasMain prints "@fred main" if the program's main has debug
	// information: otherwise `start` is the debugger's own.
	MainBreak, HasMain string
}
