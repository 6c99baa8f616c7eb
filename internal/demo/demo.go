// Package demo is fred's guided tour (fred --demo [gdb|lldb|pdb|perl]): a real
// session on a small program shipped inside fred, each command printed
// with one sentence on what it shows before it runs.
package demo

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fred-debugger/fred/fred"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
)

var (
	//go:embed programs/ledger.c
	ledgerC []byte
	//go:embed programs/ledger.py
	ledgerPy []byte
	//go:embed programs/ledger.pl
	ledgerPl []byte
)

// Step is one command of the tour and what it shows.
type Step struct{ Cmd, Why string }

// Tour is the demo in one language.
type Tour struct {
	Lang, File string
	Source     []byte
	// Argv is the debugger's command line for the program at path.
	Argv  func(path string) []string
	Steps []Step
}

// watchSteps are the steps after the run has reached the end, in the
// language's own words for printing.
func watchSteps(p, bal, day, amt, step, next string) []Step {
	return []Step{
		{p + " " + bal, "The balance is negative now: one of the 1,000 days broke it. Which one?"},
		{"fred-checkpoint", "Take a snapshot by hand: 'fred-restart' can come back to this moment at any time."},
		{"fred-reverse-watch " + bal + " >= 0", "Binary search over the program's history for the statement that made '" + bal + " >= 0' false: fred restores snapshots and replays, it does not step through 1,000 days."},
		{p + " " + day, "The day the balance broke: fred stopped just before the bad statement."},
		{p + " " + amt, "The amount of that day: the bug."},
		{step, "One step forward makes the change..."},
		{p + " " + bal, "... and the balance is negative."},
		{"fred-reverse-step", "Back one statement: before the change again (the step is undone)."},
		{"fred-reverse-finish", "Back out of apply(), to the line of the loop that called it."},
		{"fred-reverse-next", "Back one more line of the loop, over whole calls, like 'next' backwards."},
		{next, "Forward again, as usual: the debugger you know is all there."},
		{"fred-history", "The timeline: the commands that moved the program, the snapshots between them, and where you are."},
		{"fred-restart 2", "Back to the snapshot taken by hand, at the end of the run."},
		{"fred-list", "The snapshots fred holds, with their sizes and how long each took."},
	}
}

// Tours are the demos, by language.
var Tours = map[string]*Tour{
	"gdb": {Lang: "gdb", File: "ledger.c", Source: ledgerC,
		Argv: func(path string) []string { return []string{"gdb", "-q", path} },
		Steps: append([]Step{
			{"skip -gfi ./*/*", "A gdb command (fred passes every gdb command on): do not step into the C library."},
			{"break 30", "A breakpoint at the printf, after all 1,000 days."},
			{"run", "Run the 1,000 days. fred takes its first snapshot at main's first line by itself, so everything from there on can be revisited: no 'break main' needed."},
		}, watchSteps("print", "balance", "day", "a", "step", "next")...)},
	"lldb": {Lang: "lldb", File: "ledger.c", Source: ledgerC,
		Argv: func(path string) []string { return []string{"lldb", path} },
		Steps: append([]Step{
			{"settings set target.process.thread.step-avoid-libraries libc.so.6", "An lldb command (fred passes every lldb command on): do not step into the C library."},
			{"b ledger.c:30", "A breakpoint at the printf, after all 1,000 days."},
			{"run", "Run the 1,000 days. fred takes its first snapshot at main's first line by itself, so everything from there on can be revisited: no 'b main' needed."},
		}, watchSteps("p", "balance", "day", "a", "step", "next")...)},
	"pdb": {Lang: "pdb", File: "ledger.py", Source: ledgerPy,
		Argv: func(path string) []string { return []string{"python3", "-m", "pdb", path} },
		Steps: append([]Step{
			{"b 28", "pdb stopped at the program's first line and fred took a snapshot there. A breakpoint at the print, after all 1,000 days."},
			{"c", "Run the 1,000 days."},
		}, watchSteps("p", "balance", "day", "a", "step", "next")...)},
	"perl": {Lang: "perl", File: "ledger.pl", Source: ledgerPl,
		Argv: func(path string) []string { return []string{"perl", "-d", path} },
		Steps: append([]Step{
			{"b 28", "perl -d stopped at the program's first line and fred took a snapshot there. A breakpoint at the print, after all 1,000 days."},
			{"c", "Run the 1,000 days."},
		}, watchSteps("p", "$balance", "$day", "$amt", "s", "n")...)},
}

// Options for Run.
type Options struct {
	Lang        string
	In          io.Reader // the person's answers between steps (interactive)
	Out         io.Writer
	Interactive bool // wait for Enter between steps
	Snapshots   string
	Timeout     time.Duration
	Colour      bool
}

// ErrStopped is returned when the person stops the tour early.
var ErrStopped = errors.New("demo stopped")

// Run runs the tour in opt.Lang ("" = gdb). The program goes into a
// temporary directory that is removed at the end.
func Run(opt Options) error {
	if opt.Lang == "" {
		opt.Lang = "gdb"
	}
	tour, ok := Tours[opt.Lang]
	if !ok {
		return fmt.Errorf("no demo for %q: choose gdb, lldb, pdb or perl", opt.Lang)
	}
	dir, err := os.MkdirTemp("", "fred-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, tour.File)
	if err := os.WriteFile(path, tour.Source, 0o644); err != nil {
		return err
	}
	if strings.HasSuffix(path, ".c") {
		bin := strings.TrimSuffix(path, ".c")
		if _, err := proc.Run("gcc", "-g", "-O0", "-o", bin, path); err != nil {
			return fmt.Errorf("compiling the demo program: %w (is gcc installed? 'make deps' installs it)", err)
		}
		path = bin
	}
	argv := tour.Argv(path)
	p, err := P.ForArgv(argv)
	if err != nil {
		return err
	}
	out := opt.Out
	fmt.Fprintf(out, "fred demo (%s): %s, a bank balance that must never go negative; one of 1,000 days breaks it.\n", tour.Lang, tour.File)
	fmt.Fprintf(out, "The program: %s\n", path)
	fmt.Fprintf(out, "Starting: fred %s\n\n", strings.Join(argv, " "))
	s, err := fred.Start(fred.Options{Personality: p, Argv: argv, Out: out, Timeout: opt.Timeout,
		Batch: true, Snapshots: opt.Snapshots, Dir: filepath.Join(dir, "snapshots"), Colour: opt.Colour})
	if err != nil {
		return err
	}
	defer s.Close()
	in := bufio.NewReader(opt.In)
	for i, st := range tour.Steps {
		fmt.Fprintf(out, "\n--- step %d of %d: %s\n    %s\n", i+1, len(tour.Steps), st.Cmd, st.Why)
		if opt.Interactive {
			fmt.Fprint(out, "    [Enter: run it, q: stop] ")
			line, err := in.ReadString('\n')
			if err != nil || strings.TrimSpace(line) == "q" {
				return ErrStopped
			}
		}
		fmt.Fprintf(out, "%s%s\n", p.Prompt, st.Cmd)
		if err := s.Exec(st.Cmd); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, st.Cmd, err)
		}
	}
	failed := s.Failed()
	fmt.Fprintf(out, "\nThe demo is over (%d steps). Try it on your own program: fred %s\n", len(tour.Steps),
		strings.Join(tour.Argv("PROGRAM"), " "))
	if failed > 0 {
		return fmt.Errorf("%d fred commands failed during the demo", failed)
	}
	return nil
}
