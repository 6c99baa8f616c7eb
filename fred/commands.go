package fred

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	"github.com/fred-debugger/fred/internal/words"
	P "github.com/fred-debugger/fred/personalities"
)

// Command is one of fred's own commands. The table below is the only list
// of them: help, completion and --help are made from it.
type Command struct {
	Name    string
	Aliases []string
	Args    string // usage of the arguments, "" if none
	Help    string
	// NeedsProgram commands refuse to run without a live program.
	NeedsProgram bool
	// NeedsHistory commands need a run with a snapshot (the program may
	// have ended since).
	NeedsHistory bool
	// Repeat: an empty line runs the command again, as gdb repeats its
	// own reverse-next.
	Repeat bool
	Run    func(s *Session, args []string) error
	// RunText, instead of Run, gets the text after the command's name as
	// typed (an expression keeps its spaces: s == "a  b").
	RunText func(s *Session, text string) error
}

var commands []*Command

func init() {
	commands = []*Command{
		{Name: "fred-help", Aliases: []string{"fred-h"}, Args: "[COMMAND]",
			Help: "List fred's commands, or explain one.", Run: cmdHelp},
		{Name: "fred-history", Args: "[--svg FILE]",
			Help: "Draw the timeline: the forward commands in order, the snapshots and branches between them, and where you are now; --svg FILE writes it as a picture for slides.",
			Run: func(s *Session, args []string) error {
				switch {
				case len(args) == 0:
					return s.history("")
				case len(args) == 2 && args[0] == "--svg":
					return s.history(args[1])
				}
				return &UsageError{Cmd: "fred-history", Msg: "takes no arguments but --svg FILE", Usage: "fred-history [--svg FILE]"}
			}},
		{Name: "fred-checkpoint", Aliases: []string{"fred-ckpt"}, NeedsProgram: true,
			Help: "Take a snapshot of the program now; it gets a number (see fred-list).",
			Run: func(s *Session, args []string) error {
				if len(args) > 0 {
					return &UsageError{Cmd: "fred-checkpoint", Msg: "takes no arguments", Usage: "fred-checkpoint"}
				}
				leave := func() error { return nil }
				if _, copy := s.backendFor(s.pid).(ckpt.ThroughDebugger); s.snap != nil && !copy {
					leave = s.enterLeanFor(s.Timeline.Steps(), s.firstIndex()) // for the attach after the dump
				}
				sn, err := s.Checkpoint(false)
				if lerr := leave(); err == nil {
					err = lerr
				}
				if err != nil {
					return err
				}
				s.Printf("snapshot %d taken (%.3f s, %s)", sn.ID, sn.Took.Seconds(), s.snapSize(sn))
				return nil
			}},
		{Name: "fred-restart", Args: "[N|NAME]",
			Help: "Go back to snapshot N (default: the latest), or to the moment bookmark NAME keeps (as fred-switch NAME).",
			Run: func(s *Session, args []string) error {
				if len(args) > 1 {
					return &UsageError{Cmd: "fred-restart", Msg: "takes at most one snapshot number or bookmark", Usage: "fred-restart [N|NAME]"}
				}
				if len(args) == 1 {
					if _, ok := s.branches[args[0]]; ok {
						return s.execFred("fred-switch " + args[0])
					}
				}
				if s.snap == nil {
					return fmt.Errorf("%w: %s", ErrNoSnapshots, s.snapWhy)
				}
				if len(s.order) == 0 {
					return errors.New("there is no snapshot yet; 'fred-checkpoint' takes one")
				}
				id := s.order[len(s.order)-1]
				if len(args) == 1 {
					n, err := strconv.Atoi(args[0])
					if err != nil {
						return &UsageError{Cmd: "fred-restart", Msg: fmt.Sprintf("%q is neither a snapshot number nor a bookmark", args[0]), Usage: "fred-restart [N|NAME]"}
					}
					id = n
				}
				return s.Restart(id)
			}},
		{Name: "fred-list", Aliases: []string{"fred-ls"},
			Help: "List the snapshots: where each sits in the history, its size on disk and how long it took.",
			Run: func(s *Session, args []string) error {
				s.writeList()
				return nil
			}},
		{Name: "fred-reverse-step", Repeat: true, Aliases: []string{"fred-rs"}, Args: "[N]", NeedsHistory: true,
			Help: "Go back to the moment before the last statement executed (into a call that just returned, out to the call from a function's first line).",
			Run: func(s *Session, args []string) error {
				n, err := countArg("fred-reverse-step", args)
				if err != nil {
					return err
				}
				return s.reverse("fred-reverse-step", n, (*rewrite.Rewriter).PrevStatement)
			}},
		{Name: "fred-reverse-next", Repeat: true, Aliases: []string{"fred-rn"}, Args: "[N]", NeedsHistory: true,
			Help: "Go back one statement at this stack depth, treating calls as one statement (to the caller's statement if this frame was just entered).",
			Run: func(s *Session, args []string) error {
				n, err := countArg("fred-reverse-next", args)
				if err != nil {
					return err
				}
				return s.reverse("fred-reverse-next", n, (*rewrite.Rewriter).PrevSameDepth)
			}},
		{Name: "fred-reverse-stepi", Repeat: true, Aliases: []string{"fred-rsi"}, Args: "[N]", NeedsHistory: true,
			Help: "Go back one machine instruction, exactly (into a call that just returned). In code without line information, the grain there is.",
			Run: func(s *Session, args []string) error {
				n, err := countArg("fred-reverse-stepi", args)
				if err != nil {
					return err
				}
				return s.reverseInstruction("fred-reverse-stepi", n, false)
			}},
		{Name: "fred-reverse-nexti", Repeat: true, Aliases: []string{"fred-rni"}, Args: "[N]", NeedsHistory: true,
			Help: "Go back one machine instruction in this frame, a call taken as one instruction.",
			Run: func(s *Session, args []string) error {
				n, err := countArg("fred-reverse-nexti", args)
				if err != nil {
					return err
				}
				return s.reverseInstruction("fred-reverse-nexti", n, true)
			}},
		{Name: "fred-reverse-finish", Repeat: true, Aliases: []string{"fred-rf"}, NeedsHistory: true,
			Help: "Go back to the call of the current function, in the caller.",
			Run: func(s *Session, args []string) error {
				if len(args) > 0 {
					return &UsageError{Cmd: "fred-reverse-finish", Msg: "takes no arguments", Usage: "fred-reverse-finish"}
				}
				if d := s.Timeline.Now().Depth; d == 1 {
					// Nothing called the outermost frame: walking back to
					// look for its caller would replay the whole history.
					return ErrOutermost
				}
				return s.reverse("fred-reverse-finish", 1, (*rewrite.Rewriter).CallSite)
			}},
		{Name: "fred-reverse-continue", Repeat: true, Aliases: []string{"fred-rc"}, NeedsHistory: true,
			Help: "Go back to the latest moment a breakpoint or watchpoint stopped the program (the first snapshot if none).",
			Run: func(s *Session, args []string) error {
				if len(args) > 0 {
					return &UsageError{Cmd: "fred-reverse-continue", Msg: "takes no arguments", Usage: "fred-reverse-continue"}
				}
				return s.reverse("fred-reverse-continue", 1, func(r *rewrite.Rewriter, t []history.Step) ([]history.Step, error) {
					if len(t) <= s.firstIndex() {
						return nil, ErrAtStart
					}
					b, ok := r.LastBreakpoint(t)
					if since := "the first snapshot"; !ok {
						if s.startUpBehind() {
							since = "main's first line"
						}
						s.Printf("no breakpoint was hit since %s; going there", since)
					}
					return b, nil
				})
			}},
		{Name: "fred-reverse-watch", Aliases: []string{"fred-rw"}, Args: "[--from N] EXPR", NeedsHistory: true,
			Help:    "Go back to the last change of EXPR into its present value, the target: the last moment before now where one `step` gives EXPR that value (a moment where EXPR has another value, or cannot be evaluated, counts as before). Binary search from the first snapshot (--from N: from snapshot N); if EXPR has the value there already, fred looks for a moment without it (your stops, then evenly spaced probes) and says how many it looked at if none has one. It checks your later stops and watches your `continue`s up to now (gdb: a hardware watchpoint; pdb, perl: EXPR at every step); where it cannot watch, it says so.",
			RunText: func(s *Session, text string) error { return s.reverseWatch(text) }},
		{Name: "fred-undo", Repeat: true, Args: "[N]", NeedsHistory: true,
			Help: "Undo the last N forward commands of the history (default 1).",
			Run: func(s *Session, args []string) error {
				n, err := countArg("fred-undo", args)
				if err != nil {
					return err
				}
				return s.reverse("fred-undo", n, func(r *rewrite.Rewriter, t []history.Step) ([]history.Step, error) {
					if len(t) <= s.firstIndex() {
						return nil, ErrAtStart
					}
					if last := t[len(t)-1]; last.Synth() && last.Cmd.Op == P.OpStep && last.Cmd.Count > 1 && s.canCountSteps() {
						// Steps counted in the program (a long continue
						// divided) are each a command of the history.
						return r.Resolve(history.With(t[:len(t)-1], s.synth(P.OpStep, last.Cmd.Count-1, last.Bps).PartOf(last)))
					}
					return r.Resolve(t[:len(t)-1])
				})
			}},
		{Name: "fred-branch", Args: "NAME", Aliases: []string{"fred-bookmark"},
			Help: "Keep the current line of history under NAME, a bookmark of this moment, to come back to with fred-switch NAME (or fred-restart NAME); fred-save keeps them.",
			Run: func(s *Session, args []string) error {
				if len(args) != 1 {
					return &UsageError{Cmd: "fred-branch", Msg: "needs one name", Usage: "fred-branch NAME"}
				}
				if s.Timeline.Len() == 0 {
					return errors.New("there is no history to keep yet")
				}
				s.branches[args[0]] = s.Timeline.Steps()
				n := s.Timeline.Len()
				if s.startUpBehind() {
					n-- // not a command of the person's
				}
				s.Printf("branch '%s' keeps %s", args[0], words.Plural(n, "command"))
				return nil
			}},
		{Name: "fred-switch", Args: "NAME", NeedsHistory: true,
			Help: "Go to the moment a branch kept (see fred-branch, fred-list).",
			Run: func(s *Session, args []string) error {
				if len(args) != 1 {
					return &UsageError{Cmd: "fred-switch", Msg: "needs one branch name", Usage: "fred-switch NAME"}
				}
				b, ok := s.branches[args[0]]
				if !ok {
					return fmt.Errorf("there is no branch '%s'; 'fred-list' shows the branches", args[0])
				}
				// (exactly there: a bookmark in code without source too)
				return s.reverseTo("fred-switch", 1, func(*rewrite.Rewriter, []history.Step) ([]history.Step, error) { return b, nil }, true)
			}},
		{Name: "fred-save", Args: "DIR",
			Help: "Save this session on a recording (fred replay) in DIR: the recording, the run's replay log as it is now, its history, snapshots' moments, bookmarks and where you are. 'fred replay DIR', here or on another machine, opens at this moment with the same fred-history.",
			Run: func(s *Session, args []string) error {
				if len(args) != 1 {
					return &UsageError{Cmd: "fred-save", Msg: "needs one directory", Usage: "fred-save DIR"}
				}
				return s.save(args[0])
			}},
		{Name: "fred-log", Args: "[N|all]",
			Help: "Show the replay log's last N entries (default 20): what the program got from the outside world (clocks, randomness, reads, polls), recorded the first time and given back when fred replays. Each line: sequence number, thread, call, result.",
			Run:  cmdLog},
		{Name: "fred-source", Args: "FILE",
			Help: "Run the commands in FILE (fred's and the debugger's), one per line.", Run: cmdSource},
	}
}

// Commands returns fred's commands, sorted by name.
func Commands() []*Command {
	c := append([]*Command(nil), commands...)
	sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
	return c
}

// lookup finds a command by name or alias.
func lookup(name string) *Command {
	for _, c := range commands {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// Usage is the one-line synopsis of a command.
func (c *Command) Usage() string {
	u := c.Name
	if c.Args != "" {
		u += " " + c.Args
	}
	return u
}

// WriteHelp lists every fred command.
func WriteHelp(w io.Writer) {
	for _, c := range Commands() {
		names := c.Usage()
		if len(c.Aliases) > 0 {
			names += " (" + strings.Join(c.Aliases, ", ") + ")"
		}
		fmt.Fprintf(w, "  %-34s %s\n", names, c.Help)
	}
}

// Completions are the names a person can complete after "fred-".
func Completions() []string {
	var n []string
	for _, c := range Commands() {
		n = append(n, c.Name)
		n = append(n, c.Aliases...)
	}
	return n
}

func (s *Session) execFred(line string) (err error) {
	f := strings.Fields(line)
	_, text := cutField(line)
	c := lookup(f[0])
	if c == nil {
		return &UnknownCommandError{Name: f[0]}
	}
	if c.NeedsProgram && !s.running {
		return &NeedsProgramError{Cmd: c.Name, Hint: s.startHint()}
	}
	if c.NeedsHistory {
		if err := s.needReverse(c.Name); err != nil {
			return err
		}
	}
	if c.NeedsHistory && s.running && s.pid > 0 {
		// (after the prune below: a snapshot it drops lets go of the
		// connections it kept; not when the command failed: the person
		// is back where they were, and a snapshot may be all that is
		// left of it)
		conns, orig := ckpt.Connections(s.pid), s.Timeline.Steps()
		defer func() {
			if err == nil {
				s.sayClosed(conns, orig)
			}
		}()
	}
	// No automatic snapshot is dropped while a command runs: a search
	// still needs the ones it kept, and a failure needs the one that
	// brings the person back. The command's end prunes.
	s.holdPrune = true
	defer func() {
		s.holdPrune = false
		s.prune()
	}()
	run := func() error {
		if c.RunText != nil {
			return c.RunText(s, text)
		}
		return c.Run(s, f[1:])
	}
	if !c.NeedsHistory || !s.running {
		return run()
	}
	mark, marked := s.logMark()
	defer s.strictReplays()()
	err = run()
	if err != nil && marked {
		// The person is back where they were: what the command's
		// replays recorded past that moment is no history of theirs.
		s.logCutBack(mark)
	}
	return err
}

// cutField splits off text's first word: the word, and the rest as
// typed, without the blanks around it.
func cutField(text string) (word, rest string) {
	text = strings.TrimLeft(text, " \t")
	i := strings.IndexAny(text, " \t")
	if i < 0 {
		return text, ""
	}
	return text[:i], strings.TrimSpace(text[i:])
}

func cmdHelp(s *Session, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(s.opt.Out, "fred's commands (everything else goes to the debugger unchanged):")
		WriteHelp(s.opt.Out)
		return nil
	}
	name := args[0]
	if !strings.HasPrefix(name, "fred-") {
		name = "fred-" + name
	}
	c := lookup(name)
	if c == nil {
		return &UnknownCommandError{Name: name}
	}
	fmt.Fprintf(s.opt.Out, "usage: %s\n%s\n", c.Usage(), c.Help)
	if len(c.Aliases) > 0 {
		fmt.Fprintf(s.opt.Out, "aliases: %s\n", strings.Join(c.Aliases, ", "))
	}
	return nil
}

func cmdSource(s *Session, args []string) error {
	if len(args) != 1 {
		return &UsageError{Cmd: "fred-source", Msg: "needs one file", Usage: "fred-source FILE"}
	}
	return s.Source(args[0])
}

// Source runs every line of a file as if typed. Blocks that the debugger
// reads up to an "end" line (gdb's commands, define, python, while, if)
// go to it whole.
func (s *Session) Source(path string) error {
	if s.sourcing >= 10 {
		return fmt.Errorf("fred-source: %s: sourced files nest more than 10 deep", path)
	}
	s.sourcing++
	defer func() { s.sourcing-- }()
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if s.p.BlockStart != nil && s.p.BlockStart.MatchString(line) {
			block := []string{line}
			for depth := 1; depth > 0 && sc.Scan(); {
				l := strings.TrimSpace(sc.Text())
				if s.p.BlockStart.MatchString(l) {
					depth++
				} else if l == "end" || s.p.BlockEnd != nil && s.p.BlockEnd.MatchString(l) {
					depth--
				}
				block = append(block, l)
			}
			if err := s.execBlock(block); err != nil {
				return err
			}
			continue
		}
		if err := s.Exec(line); err != nil {
			return err
		}
	}
	return sc.Err()
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (s *Session) writeList() {
	w := s.opt.Out
	fmt.Fprintf(w, "fred: %s\n", s.snapWhy)
	if len(s.order) == 0 {
		fmt.Fprintln(w, "fred: no snapshots yet")
		return
	}
	fmt.Fprintf(w, "  %-4s %-40s %14s %9s\n", "id", "taken after", "size", "took")
	for _, id := range s.order {
		sn := s.snaps[id]
		after := history.Position(sn.Steps)
		if sn.Auto {
			after += ", auto"
		}
		fmt.Fprintf(w, "  %-4d %-40s %14s %8.3fs\n", id, after, s.snapSize(sn), sn.Took.Seconds())
	}
	first := "one at the program's first stop"
	if s.p.EarlyStart != nil {
		first = "snapshot 0 at the program's entry point, before its constructors, and one at main's first line if the first stop comes after it (at the first stop if it comes before the entry point)"
	}
	fmt.Fprintf(w, "fred: policy: %s, then one after every %d commands or %s of running since the last, and during reverse-watch; at most %d automatic ones are kept (the first and yours always are)\n", first, autoEvery, autoAfter, autoKeep)
	for name, b := range s.branches {
		fmt.Fprintf(w, "  branch %-10s ends after %s\n", name, history.Position(b))
	}
}

// snapSize is a snapshot's size on disk, or what it is when it has none.
func (s *Session) snapSize(sn *snap) string {
	if sn.via != nil && sn.via.Name() == "fork" {
		return "a paused copy"
	}
	return humanBytes(sn.Size)
}
