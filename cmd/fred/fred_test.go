package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	expect "github.com/google/goexpect"

	"github.com/fred-debugger/fred/internal/demo"
	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
)

func TestMain(m *testing.M) { testutil.Main(m) }

const wait = 30 * time.Second

// session is fred under goexpect, typed at like a person would.
type session struct {
	t *testing.T
	e *expect.GExpect
}

func startFred(t *testing.T, args ...string) *session {
	t.Helper()
	testutil.Require(t, "gdb")
	fred := testutil.Fred(t)
	// TERM=dumb: gdb then prints no colours, which keeps the patterns
	// readable; TestColoursPassThrough covers the other case.
	env := append(os.Environ(), "TERM=dumb")
	if strings.HasPrefix(t.Name(), "TestColours") {
		env = append(os.Environ(), "TERM=xterm-256color")
	}
	if dir := os.Getenv("FRED_TEST_TRACE"); dir != "" {
		env = append(env, "FRED_TRACE="+filepath.Join(dir, t.Name()+".trace"))
	}
	e, exited, err := expect.SpawnWithArgs(append([]string{fred}, args...), wait, expect.CheckDuration(50*time.Millisecond), expect.SetEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	s := &session{t: t, e: e}
	t.Cleanup(func() {
		// SIGTERM lets fred end its debugger and program; Close would
		// SIGKILL fred and orphan them.
		e.SendSignal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("fred did not exit on SIGTERM")
		}
		e.Close()
	})
	s.expect(`\(gdb\) `)
	return s
}

func (s *session) expect(re string) string {
	s.t.Helper()
	out, _, err := s.e.Expect(regexp.MustCompile(re), wait)
	if err != nil {
		s.t.Fatalf("waiting for %q: %v\noutput so far:\n%s", re, err, out)
	}
	return out
}

// do types a line and waits for the next prompt, checking the output
// between matches want.
func (s *session) do(line, want string) string {
	s.t.Helper()
	defer func(start time.Time) { s.t.Logf("%q took %v", line, time.Since(start)) }(time.Now())
	s.send(line + "\r")
	out := s.expect(`(?s)` + want + `.*\(gdb\) `)
	return out
}

func (s *session) send(b string) {
	s.t.Helper()
	if err := s.e.Send(b); err != nil {
		s.t.Fatal(err)
	}
}

func TestBreakRunNextStepPrint(t *testing.T) {
	prog := testutil.Fixture(t, "steps")
	s := startFred(t, "gdb", "-q", prog)
	s.do("break square", `Breakpoint 1 at 0x[0-9a-f]+: file .*steps.c, line 8`)
	s.do("run", `Breakpoint 1, square \(x=0\)\s+at .*steps.c:8`)
	s.do("next", `9\s+return r;`)
	s.do("print r", `\$1 = 0`)
	s.do("finish", `Run till exit from`)
	s.do("next", `24\s+printf`)
	s.do("next", `i=0 total=0`)
	s.do("step", `23\s+total \+= square`)
	s.do("step", `square \(x=1\)\s+at .*steps.c:8`)
	s.do("info locals", `r = `)
	out := s.do("fred-history", `timeline of run 1: 7 commands`)
	if !regexp.MustCompile(`\(0\) snapshot 0, the start\s+\|  inside 'run': the start-up to main\s+\(1\) snapshot 1\s+\|  run\s+\|  next\s+\|  finish\s+\|  next x2\s+\|  step x2\s`).MatchString(out) {
		t.Errorf("history lacks the forward commands in order:\n%s", out)
	}
	if strings.Contains(out, "print") || strings.Contains(out, "info") {
		t.Errorf("history lists inspection commands:\n%s", out)
	}
	if !regexp.MustCompile(`you are here: square at steps.c:8, depth 2`).MatchString(out) {
		t.Errorf("history does not say where we are:\n%s", out)
	}
	// An empty line repeats the last command, as in gdb.
	s.do("next", `9\s+return r;`)
	s.do("", `10\s+}`)
	s.do("fred-history", `step x2\s+\|  next x2\s+>>> you are here`)
}

// On a dumb terminal (Emacs' shell, M-x gdb) fred reads plain lines: no
// escape codes as the person types, the terminal's own line editing, and
// Ctrl-C at the prompt drops the line as gdb's Quit does.
func TestDumbTerminalPlainLines(t *testing.T) {
	s := startFred(t, "gdb", "-q", testutil.Fixture(t, "steps"))
	s.send("print 6*")
	s.send("8\x7f7\r") // a mistake, erased by the terminal's own backspace
	if out := s.expect(`\$1 = 42(?s).*\(gdb\) `); strings.Contains(out, "\x1b") {
		t.Errorf("escape codes at a dumb terminal: %q", out)
	}
	s.send("print 1")
	s.send("\x03")
	s.expect(`Quit\s+\(gdb\) `)
	if out := s.do("print 2", `\$2 = 2`); strings.Contains(out, "\x1b") || strings.Contains(out, "$2 = 12") {
		t.Errorf("after Ctrl-C at the prompt: %q", out)
	}
}

func TestCtrlCInterruptsProgram(t *testing.T) {
	prog := testutil.Fixture(t, "spin")
	s := startFred(t, "gdb", "-q", prog)
	s.send("run\r")
	s.expect(`spinning`)
	time.Sleep(300 * time.Millisecond)
	s.send("\x03")
	s.expect(`Program received signal SIGINT(?s).*\(gdb\) `)
	out := s.do("print counter > 0", `\$1 = 1`)
	_ = out
	s.do("fred-history", `\|  run`)
}

func TestProgramInputAndPromptLookalike(t *testing.T) {
	prog := testutil.Fixture(t, "echo")
	s := startFred(t, "gdb", "-q", prog)
	s.send("run\r")
	s.expect(`ready`)
	s.send("hello\r")
	s.expect(`got 'hello' \(1\)`)
	s.send("stop\r")
	// The program prints a line that looks like gdb's prompt; fred must
	// still wait for the real one.
	s.expect(`\(gdb\) this line only looks like a prompt(?s).*exited with code 02.*\(gdb\) `)
	s.do("print 2+3", `\$1 = 5`)
	s.do("fred-history", `you are here: the program has ended`)
}

func TestBadFredCommands(t *testing.T) {
	prog := testutil.Fixture(t, "steps")
	s := startFred(t, "gdb", "-q", prog)
	s.do("fred-bogus", `fred: unknown command 'fred-bogus'; 'fred-help' lists`)
	s.do("fred-history now", `fred: fred-history: takes no arguments but --svg FILE`)
	s.do("fred-source", `fred: fred-source: needs one file`)
	s.do("fred-source /nonexistent/file", `fred: open /nonexistent/file: no such file`)
	s.do("fred-history", `no history yet`)
	s.do("print 6*7", `\$1 = 42`)
	out := s.do("fred-help", `fred's commands`)
	for _, c := range []string{"fred-help", "fred-history", "fred-source"} {
		if !strings.Contains(out, c) {
			t.Errorf("fred-help does not list %s:\n%s", c, out)
		}
	}
}

func TestQuitLeavesNothingRunning(t *testing.T) {
	prog := testutil.Fixture(t, "spin")
	s := startFred(t, "gdb", "-q", prog)
	s.send("run\r")
	s.expect(`spinning`)
	s.send("\x03")
	s.expect(`SIGINT(?s).*\(gdb\) `)
	if len(testutil.Running(prog)) == 0 {
		t.Fatal("the program is not running under fred")
	}
	s.send("quit\r")
	s.expect(`Quit anyway\? \(y or n\) `)
	s.send("y\r")
	waitGone(t, prog)
}

func TestCtrlDEndsSession(t *testing.T) {
	prog := testutil.Fixture(t, "spin")
	s := startFred(t, "gdb", "-q", prog)
	s.do("break main", `Breakpoint 1 at`)
	s.do("run", `Breakpoint 1, main`)
	s.send("\x04")
	waitGone(t, prog)
}

func waitGone(t *testing.T, prog string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if len(testutil.Running(prog)) == 0 && len(testutil.Running(testutil.Fred(t))) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("still running after quit: %v %v", testutil.Running(prog), testutil.Running(testutil.Fred(t)))
}

func TestBatchScript(t *testing.T) {
	testutil.Require(t, "gdb")
	prog := testutil.Fixture(t, "steps")
	fred := testutil.Fred(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.cmds")
	os.WriteFile(good, []byte("break square\nrun\nnext\nfred-history\ncontinue\nprint x\n"), 0o644)
	batch := func(script string) ([]byte, error) {
		c := exec.Command(fred, "--batch", "-x", script, "gdb", "-q", prog)
		c.Env = append(os.Environ(), "TERM=dumb")
		return c.CombinedOutput()
	}
	out, err := batch(good)
	if err != nil {
		t.Fatalf("batch run failed: %v\n%s", err, out)
	}
	for _, want := range []string{"Breakpoint 1, square (x=0)", "(0) snapshot 0, the start\n   |  inside 'run': the start-up to main\n  (1) snapshot 1\n   |  run\n   |  next\n", "snapshot 1 taken at the program's start", "$1 = 1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("batch output lacks %q:\n%s", want, out)
		}
	}
	bad := filepath.Join(dir, "bad.cmds")
	os.WriteFile(bad, []byte("fred-nonsense\nprint 1\n"), 0o644)
	out, err = batch(bad)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("a failing fred command in --batch should exit 1, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "$1 = 1") {
		t.Errorf("batch stopped at the first failure:\n%s", out)
	}
	if p := testutil.Running(prog); len(p) > 0 {
		t.Errorf("left running: %v", p)
	}
}

// `fred personality NAME` prints a built-in personality's file, which
// read back from a copy elsewhere makes a personality (its scripts come
// from fred); an unknown name says which there are.
func TestPrintPersonalityFile(t *testing.T) {
	fred := testutil.Fred(t)
	for _, name := range []string{"gdb", "lldb", "pdb", "perl"} {
		out, err := exec.Command(fred, "personality", name).Output()
		if err != nil {
			t.Fatalf("fred personality %s: %v", name, err)
		}
		want, err := os.ReadFile("../../personalities/files/" + name + ".fred")
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(want) {
			t.Fatalf("fred personality %s does not print files/%s.fred", name, name)
		}
		path := filepath.Join(t.TempDir(), "mine.fred")
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		if p, err := P.LoadFile(path); err != nil || p.Name != name {
			t.Fatalf("a copy of %s's file: %v", name, err)
		}
	}
	out, err := exec.Command(fred, "personality", "cobol").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `no built-in personality "cobol" (fred has gdb, lldb, pdb, perl)`) {
		t.Fatalf("an unknown one: %v %s", err, out)
	}
}

func TestHelpAndVersion(t *testing.T) {
	fred := testutil.Fred(t)
	out, err := exec.Command(fred, "--help").CombinedOutput()
	if err != nil {
		t.Fatal(err, string(out))
	}
	for _, c := range []string{"fred-help", "fred-history", "fred-source", "--batch", "-x FILE"} {
		if !strings.Contains(string(out), c) {
			t.Errorf("--help lacks %s:\n%s", c, out)
		}
	}
	out, err = exec.Command(fred, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "fred ") {
		t.Errorf("--version: %v %s", err, out)
	}
	out, err = exec.Command(fred, "nosuchdebugger", "x").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no personality for \"nosuchdebugger\"") {
		t.Errorf("unknown debugger: %v %s", err, out)
	}
}

func TestColoursPassThrough(t *testing.T) {
	prog := testutil.Fixture(t, "steps")
	s := startFred(t, "gdb", "-q", prog)
	// gdb colours file names when the terminal can; fred passes them on.
	s.do("break square", "Breakpoint 1 at \x1b\\[34m0x[0-9a-f]+\x1b\\[m: file \x1b\\[32m")
	s.do("run", `Breakpoint 1, .*square`)
	s.do("fred-history", `\|  run`)
}

func TestTypeaheadStaysInStep(t *testing.T) {
	prog := testutil.Fixture(t, "spin")
	s := startFred(t, "gdb", "-q", prog)
	s.send("run\r")
	s.expect(`spinning`)
	// Typed while the program runs, which does not read it: whoever ends
	// up with these lines, fred and gdb must stay in step.
	s.send("print 1000+1\r")
	s.send("info frame\r")
	time.Sleep(200 * time.Millisecond)
	s.send("\x03")
	s.expect(`SIGINT(?s).*\(gdb\) `)
	s.do("print 6*7", `= 42\s`)
	s.do("next", `\d+\s+`)
	// The Ctrl-C may stop the program in usleep as well as in main.
	out := s.do("fred-history", `you are here: \w+ at [\w.]+:\d+`)
	if strings.Contains(out, "unknown location") {
		t.Fatalf("fred lost track of gdb:\n%s", out)
	}
	s.do("print counter > 0", `= 1`)
}

// As a student on a lab machine: no root, so no CRIU; every language gets
// the fork backend, and checkpoint, reverse-watch and the reverse commands
// work.
func TestWithoutRoot(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "setpriv", "python3", "perl")
	if os.Geteuid() != 0 {
		t.Fatal("this test switches to the user nobody and so must start as root (CI runs as root)")
	}
	dir, err := os.MkdirTemp("", "fred-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	fred := filepath.Join(dir, "fred")
	if b, err := os.ReadFile(testutil.Fred(t)); err != nil || os.WriteFile(fred, b, 0o755) != nil {
		t.Fatal("copying fred:", err)
	}
	prog := filepath.Join(dir, "watch")
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", prog, filepath.Join(testutil.Root(), "testdata", "watch.c")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, ext := range []string{"py", "pl"} {
		b, err := os.ReadFile(filepath.Join(testutil.Root(), "testdata", "watch."+ext))
		if err != nil || os.WriteFile(prog+"."+ext, b, 0o644) != nil {
			t.Fatal("copying the fixture:", err)
		}
	}
	cases := []struct {
		name, cmds string
		argv       []string
		want       []string
	}{
		{"gdb", `skip -gfi ./*/*
break main
run
break 21
continue
fred-checkpoint
fred-reverse-watch sum >= 0
fred-reverse-step
fred-reverse-finish
fred-reverse-next
next
fred-list
`, []string{"gdb", "-q", prog}, []string{
			"update (i=277) at",
			"'sum >= 0' is 1 here; the next step makes it 0",
		}},
		{"pdb", `b 18
c
fred-checkpoint
fred-reverse-watch total >= 0
p i
fred-reverse-step
fred-reverse-finish
fred-reverse-next
next
fred-list
`, []string{"python3", "-m", "pdb", prog + ".py"}, []string{
			"watch.py(12)update()",
			"'total >= 0' is True here; the next step makes it False",
			"\n277\r\n",
		}},
		{"perl", `b 19
c
fred-checkpoint
fred-reverse-watch $total >= 0
p $i
fred-reverse-step
fred-reverse-finish
fred-reverse-next
n
fred-list
`, []string{"perl", "-d", prog + ".pl"}, []string{
			"is 1 here; the next step makes it",
			"\n277\r\n",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script := filepath.Join(dir, "cmds-"+tc.name)
			os.WriteFile(script, []byte(tc.cmds), 0o644)
			cache := filepath.Join(dir, "cache-"+tc.name)
			os.Mkdir(cache, 0o777)
			os.Chmod(cache, 0o777)
			c := exec.Command("setpriv", append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups",
				fred, "--batch", "-x", script}, tc.argv...)...)
			c.Dir = dir
			c.Env = append(os.Environ(), "TERM=dumb", "HOME="+dir, "XDG_CACHE_HOME="+cache, "SHELL=/bin/sh")
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("fred as nobody: %v\n%s", err, out)
			}
			for _, want := range append([]string{
				"fred: snapshots: fork (single-threaded programs, no root needed), because CRIU is not usable",
				"snapshot 1 taken at the ",
				"snapshot 2 taken",
				"'fred-reverse-step' took",
				"'fred-reverse-finish' took",
				"'fred-reverse-next' took",
			}, tc.want...) {
				if !strings.Contains(string(out), want) {
					t.Errorf("as nobody, the output lacks %q:\n%s", want, out)
				}
			}
			if left := testutil.Running(prog); len(left) > 0 {
				t.Errorf("left running: %v", left)
			}
		})
	}
}

// The guided demo runs to the end unattended (stdin not a terminal) in
// each language, names every command it runs, and finds the bad day.
func TestDemo(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "python3", "perl", "lldb")
	for _, lang := range []string{"gdb", "lldb", "pdb", "perl"} {
		t.Run(lang, func(t *testing.T) {
			c := exec.Command(testutil.Fred(t), "--demo", lang)
			c.Env = append(os.Environ(), "TERM=dumb")
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("fred --demo %s: %v\n%s", lang, err, out)
			}
			steps := demo.Tours[lang].Steps
			for i, st := range steps {
				if want := fmt.Sprintf("--- step %d of %d: %s\n", i+1, len(steps), st.Cmd); !strings.Contains(string(out), want) {
					t.Errorf("the demo does not name step %d (%s):\n%s", i+1, st.Cmd, out)
				}
			}
			if !regexp.MustCompile(`(?s)fred-reverse-watch \$?balance >= 0\n.*the next step makes it.*\n--- step \d+ of \d+: (p|print) \$?day\n.*\n(\(Pdb\) |\(gdb\) |\(lldb\) |  DB<> )?(p|print) \$?day\r?\n(\(int\) )?(\$\d+ = )?811\r?\n`).Match(out) {
				t.Errorf("the demo's reverse-watch did not find day 811:\n%s", out)
			}
			if !strings.Contains(string(out), "The demo is over") {
				t.Errorf("the demo did not finish:\n%s", out)
			}
			if left := testutil.Running("fred-demo-"); len(left) > 0 {
				t.Errorf("left running: %v", left)
			}
		})
	}
	if out, err := exec.Command(testutil.Fred(t), "--demo", "cobol").CombinedOutput(); err == nil || !strings.Contains(string(out), `no demo for "cobol": choose gdb, lldb, pdb or perl`) {
		t.Errorf("fred --demo cobol: %v\n%s", err, out)
	}
}
