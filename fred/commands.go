package fred

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
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
	Run          func(s *Session, args []string) error
}

var commands []*Command

func init() {
	commands = []*Command{
		{Name: "fred-help", Aliases: []string{"fred-h"}, Args: "[COMMAND]",
			Help: "List fred's commands, or explain one.", Run: cmdHelp},
		{Name: "fred-history", Args: "",
			Help: "Show the forward commands that moved the program, grouped by the snapshot they follow, and where you are now.",
			Run: func(s *Session, args []string) error {
				if len(args) > 0 {
					return &UsageError{Cmd: "fred-history", Msg: "takes no arguments", Usage: "fred-history"}
				}
				s.Timeline.Write(s.opt.Out)
				return nil
			}},
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

func (s *Session) execFred(line string) error {
	f := strings.Fields(line)
	c := lookup(f[0])
	if c == nil {
		return &UnknownCommandError{Name: f[0]}
	}
	if c.NeedsProgram && !s.running {
		return &NeedsProgramError{Cmd: c.Name}
	}
	return c.Run(s, f[1:])
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

// Source runs every line of a file as if typed. It stops at the first
// error that ends the session.
func (s *Session) Source(path string) error {
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
		if err := s.Exec(line); err != nil {
			return err
		}
		if errors.Is(err, ErrSessionOver) {
			return err
		}
	}
	return sc.Err()
}
