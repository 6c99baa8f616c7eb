package fred

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	P "github.com/fred-debugger/fred/personalities"
)

// Faults inside reverse commands (issue 22): the first time a reverse
// command moves the program (a restore and replay) fails, or the program
// is killed before the first command a replay runs, or the answer to the
// replay's first command comes after fred stopped waiting for it, or
// never comes. Each reverse command,
// in gdb, pdb and perl, then says so in one message and leaves the person
// where they were: the same place, a known variable with the same value,
// and the session usable for the next command. Under pdb and perl the
// program is the debugger: killing it ends the session, with one message.

type faultCase struct {
	name  string
	stage string // moveFault's stage it strikes at
	fault func(s *Session) error
}

var errInjected = errors.New("injected fault")

var (
	faultError = faultCase{"an error", "move", func(*Session) error { return errInjected }}
	faultKill  = faultCase{"the program killed", "replay", func(s *Session) error {
		if s.pid != 0 {
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
		}
		return nil
	}}
)

// answerOnce makes the next query's answer come too late, or never.
func answerOnce(kind string) {
	used := false
	answerFault = func(string) string {
		if used {
			return ""
		}
		used = true
		return kind
	}
}

var (
	faultLate     = faultCase{"a late answer", "replay", func(*Session) error { answerOnce("late"); return nil }}
	faultDrop     = faultCase{"no answer", "replay", func(*Session) error { answerOnce("drop"); return nil }}
	faultLateMove = faultCase{"a late answer in the restore", "move", func(*Session) error { answerOnce("late"); return nil }}
	faultDropMove = faultCase{"no answer in the restore", "move", func(*Session) error { answerOnce("drop"); return nil }}
	answerFaults  = []faultCase{faultLate, faultDrop, faultLateMove, faultDropMove}
)

// withFault makes the first moveFault call of f's stage meet f, for the
// time of one fred command.
func withFault(f faultCase, run func()) {
	defer func() { answerFault = nil }()
	done := false
	moveFault = func(s *Session, stage string) error {
		if stage != f.stage || done {
			return nil
		}
		done = true
		return f.fault(s)
	}
	defer func() { moveFault = nil }()
	run()
}

type faultSession struct {
	name     string
	start    func(t *testing.T) *tsession
	setup    []string // brings the program to a moment with history behind it
	where    string   // the command that shows where the program is
	variable string   // a variable known there
	reverse  []string
	faults   []faultCase
}

func TestFaultsLeaveThePersonWhereTheyWere(t *testing.T) {
	sessions := []faultSession{
		{"gdb", func(t *testing.T) *tsession { return gdbSession(t, "watch", "fork") },
			[]string{"break update if i == 40", "run", "next"}, "frame", "v",
			[]string{"fred-reverse-step", "fred-reverse-next", "fred-reverse-finish", "fred-reverse-continue", "fred-reverse-watch sum", "fred-undo"},
			append([]faultCase{faultError, faultKill}, answerFaults...)},
		{"pdb", func(t *testing.T) *tsession { ts, _ := pdbSession(t, "watch.py", "fork"); return ts },
			[]string{"break 11, i == 40", "c", "n"}, "fred_frame", "v",
			[]string{"fred-reverse-step", "fred-reverse-next", "fred-reverse-finish", "fred-reverse-continue", "fred-reverse-watch total", "fred-undo"},
			append([]faultCase{faultError}, answerFaults...)},
		{"perl", func(t *testing.T) *tsession { ts, _ := perlSession(t, "watch.pl", "fork"); return ts },
			[]string{"b 12 $i == 40", "c", "n"}, "DB::fred_frame()", "$v",
			[]string{"fred-reverse-step", "fred-reverse-next", "fred-reverse-finish", "fred-reverse-continue", "fred-reverse-watch $total", "fred-undo"},
			append([]faultCase{faultError}, answerFaults...)},
	}
	for _, fs := range sessions {
		t.Run(fs.name, func(t *testing.T) {
			ts := fs.start(t)
			for _, c := range fs.setup {
				ts.do(c)
			}
			where := strings.TrimSpace(ts.do(fs.where))
			val := ts.value(fs.variable)
			for _, f := range fs.faults {
				for _, rc := range fs.reverse {
					var out string
					withFault(f, func() { out = ts.do(rc) })
					if strings.Contains(f.name, "answer") && strings.HasPrefix(rc, "fred-reverse-watch") && strings.Contains(out, "took") {
						// The search gave the probe or replay the answer
						// did not come for one more try, and found the
						// change: the program starts again, to the same
						// moment.
						expr := regexp.QuoteMeta(strings.TrimPrefix(rc, "fred-reverse-watch "))
						if !regexp.MustCompile(`'` + expr + `' is \d+ here; the next step makes it \d+`).MatchString(out) {
							t.Fatalf("%s with %s recovered, but landed wrong:\n%s", rc, f.name, out)
						}
						for _, c := range fs.setup[1:] {
							ts.do(c)
						}
						out = "no prompt from the debugger (recovered)"
					}
					if f.name == faultError.name && !strings.Contains(out, errInjected.Error()) ||
						strings.Contains(f.name, "answer") && !strings.Contains(out, "no prompt from the debugger") {
						t.Errorf("%s with %s: the fault is not said:\n%s", rc, f.name, out)
					}
					if got := strings.TrimSpace(ts.do(fs.where)); got != where {
						t.Fatalf("%s with %s (it said %q): the program is at\n%s\nnot where it was:\n%s", rc, f.name, out, got, where)
					}
					if got := ts.value(fs.variable); got != val {
						t.Fatalf("%s with %s: %s is %s, was %s", rc, f.name, fs.variable, got, val)
					}
				}
			}
			// And the session goes on: a reverse command without a fault.
			if out := ts.do(fs.reverse[0]); !strings.Contains(out, "took") {
				t.Fatalf("after the faults, %s: %s", fs.reverse[0], out)
			}
			if fs.name == "perl" || fs.name == "pdb" {
				// The program is the debugger: killed in the middle of
				// a replay, the session ends (the cleanup checks nothing
				// is left).
				if fs.name == "perl" {
					ts.do("fred-reverse-continue") // history to replay
					ts.do("n")
				} else {
					ts.do("n") // two steps past the last snapshot:
					ts.do("n") // going back one replays
				}
				var err error
				withFault(faultKill, func() { err = ts.Exec("fred-reverse-step") })
				if !errors.Is(err, ErrSessionOver) {
					t.Errorf("the program killed under %s: %v, want the session's end", fs.name, err)
				}
			}
		})
	}
}

// TestMemoryBound: a reverse command that passes fred's memory bound stops
// with a message that names the bound, and the person is where they were.
// (A bound of one byte: fred is past it from the start.)
func TestMemoryBound(t *testing.T) {
	ts := gdbSession(t, "watch", "fork")
	ts.opt.MaxMemory = 1
	defer debug.SetMemoryLimit(math.MaxInt64)
	ts.do("break update if i == 40")
	ts.must("run", `update \(i=40\)`)
	ts.do("next")
	where := ts.do("frame")
	for _, rc := range []string{"fred-reverse-step", "fred-reverse-watch sum"} {
		ts.must(rc, `^fred: fred's own memory reached \d+ MB, its bound of 0 MB \(fred --max-memory MB; .*\): the command stops here; you are back where you were`)
		if got := ts.do("frame"); got != where {
			t.Fatalf("%s past the memory bound: the program is at\n%s\nnot\n%s", rc, got, where)
		}
	}
	ts.opt.MaxMemory = 0
	ts.must("fred-reverse-step", `took`)
}

// TestSnapshotCopyKilled: the copy that holds the first snapshot is
// killed; a reverse command that needs it says so, the person is where
// they were, and the session goes on without that snapshot.
func TestSnapshotCopyKilled(t *testing.T) {
	for _, tc := range []struct {
		name, where, variable string
		start                 func(t *testing.T) *tsession
		setup                 []string
	}{
		{"gdb", "frame", "v", func(t *testing.T) *tsession { return gdbSession(t, "watch", "fork") },
			[]string{"break update if i == 40", "run", "next"}},
		{"pdb", "fred_frame", "v", func(t *testing.T) *tsession { ts, _ := pdbSession(t, "watch.py", "fork"); return ts },
			[]string{"break 11, i == 40", "c", "n"}},
		{"perl", "DB::fred_frame()", "$v", func(t *testing.T) *tsession { ts, _ := perlSession(t, "watch.pl", "fork"); return ts },
			[]string{"b 12 $i == 40", "c", "n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.start(t)
			for _, c := range tc.setup {
				ts.do(c)
			}
			where, val := ts.do(tc.where), ts.value(tc.variable)
			first := ts.snaps[1]
			if first == nil || first.Pid == 0 {
				t.Fatalf("no first snapshot with a copy: %+v", first)
			}
			if err := syscall.Kill(first.Pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			out := ts.do("fred-reverse-continue")
			if strings.Contains(out, "took") || !strings.Contains(out, "back where you were") {
				t.Fatalf("reverse-continue to the killed snapshot: %s", out)
			}
			if got := ts.do(tc.where); got != where {
				t.Fatalf("the program is at\n%s\nnot where it was:\n%s", got, where)
			}
			if got := ts.value(tc.variable); got != val {
				t.Fatalf("%s is %s, was %s", tc.variable, got, val)
			}
			// fred forgot it, and goes on: with no snapshot left it says
			// so; a new one serves.
			ts.must("fred-reverse-step", `took|needs a snapshot of this run`)
			ts.must("fred-checkpoint", `snapshot \d+`)
			ts.do(tc.setup[len(tc.setup)-1])
			ts.must("fred-reverse-step", `took`)
		})
	}
}

// TestDebuggerDeathIsSaid: when the debugger's process dies (pdb and perl
// with their program, by its signal or its exit; gdb killed from outside),
// the session ends with one line saying how, never silently.
func TestDebuggerDeathIsSaid(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		p    *P.Personality
		argv []string
		cmd  string
		want string
	}{
		{"pdb/signal", P.PDB, []string{"python3", "-m", "pdb", write("segv.py", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")},
			"continue", `fred: the process of pdb and the program \(pid \d+\) was killed by SIGSEGV, so the session ends`},
		{"pdb/exit", P.PDB, []string{"python3", "-m", "pdb", write("exit3.py", "import os\nos._exit(3)\n")},
			"continue", `fred: the process of pdb and the program \(pid \d+\) exited with status 3, so the session ends`},
		{"perl/exit", P.Perl, []string{"perl", "-d", write("exit3.pl", "use POSIX;\nPOSIX::_exit(3);\n")},
			"c", `fred: the process of perl and the program \(pid \d+\) exited with status 3, so the session ends`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts, _ := inprocSession(t, c.p, c.argv, "fork")
			ts.out.take()
			err := ts.Exec(c.cmd)
			if !errors.Is(err, ErrSessionOver) {
				t.Fatalf("%s: %v, want the session's end", c.cmd, err)
			}
			if out := ts.out.take(); len(regexp.MustCompile(c.want).FindAllString(out, -1)) != 1 {
				t.Errorf("the session's end was not said once:\n%s", out)
			}
		})
	}
	// perl exits with the program's status when the person quits after
	// its end: that is no news.
	t.Run("perl/quit", func(t *testing.T) {
		ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", write("end3.pl", "my $x = 1;\nexit 3;\n")}, "fork")
		ts.must("c", `Debugged program terminated`)
		if err := ts.Exec("q"); !errors.Is(err, ErrSessionOver) {
			t.Fatalf("q: %v, want the session's end", err)
		}
		if out := ts.out.take(); strings.Contains(out, "the session ends") {
			t.Errorf("a quit was reported as the debugger's death:\n%s", out)
		}
	})
	t.Run("gdb", func(t *testing.T) {
		ts := gdbSession(t, "watch", "fork")
		ts.must("break main", `Breakpoint 1`)
		ts.must("run", `Breakpoint 1, main`)
		gdb := ts.proc.Cmd.Process.Pid
		_ = syscall.Kill(gdb, syscall.SIGKILL)
		<-ts.proc.Done()
		if err := ts.Exec("next"); !errors.Is(err, ErrSessionOver) {
			t.Fatalf("next: %v, want the session's end", err)
		}
		want := fmt.Sprintf(`fred: the process of gdb \(pid %d\) was killed by SIGKILL, so the session ends`, gdb)
		if out := ts.out.take(); !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the session's end was not said:\n%s", out)
		}
	})
}

// fred told to end (SIGTERM, SIGHUP: the terminal's handler calls Close)
// while a reverse command replays: Close kills the program first. The
// command said "replay diverged: expected to be at ct_init at trees.c:404
// ..., but the program is at the end of the program (it depends on
// something fred does not replay yet); and going back to where you were
// failed" (gzip, a session stopped from outside after minutes): the
// program had not diverged, it had been killed. The session is ending,
// and the command says no more than that.
func TestEndedDuringReverseCommand(t *testing.T) {
	ts := gdbSession(t, "next_over_init", "fork")
	ts.play([]step{
		{cmd: "break next_over_init.c:42", out: `Breakpoint 1 at`},
		{cmd: "run", out: `Breakpoint 1, main \(\)`},
		{cmd: "step", out: `init \(\)`},
		{cmd: "next", out: `34`},
		{cmd: "next", out: `35`},
	})
	killed := false
	moveFault = func(s *Session, stage string) error {
		if stage == "replay" && !killed {
			killed = true
			// Close's first steps, as from the terminal's handler.
			s.closing.Store(true)
			_ = syscall.Kill(s.pid, syscall.SIGKILL)
		}
		return nil
	}
	defer func() { moveFault = nil }()
	err := ts.Exec("fred-reverse-step")
	out := ts.out.take()
	if !killed {
		t.Fatalf("fred-reverse-step replayed nothing:\n%s", out)
	}
	if !errors.Is(err, ErrSessionOver) {
		t.Errorf("fred-reverse-step under Close: %v, want the session over", err)
	}
	if strings.Contains(out, "diverged") || strings.Contains(out, "going back") {
		t.Errorf("fred-reverse-step under Close blames the program:\n%s", out)
	}
}
