package personalities

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/fred-debugger/fred/internal/proc"
)

// The pdb and perl parsers are tested on transcripts of real sessions in
// testdata/inproc/*.transcript (same format as the gdb ones, see
// testdata/README.md), recorded by TestRecordInprocTranscripts:
//
//	FRED_RECORD_INPROC=1 go test -count=1 -run TestRecordInprocTranscripts ./personalities/
//
// It needs python3 and perl. The fixtures (testdata/*.py, *.pl at the top
// of the repository) are copied to $TMPDIR/fred-inprocfix/ first, so paths
// in the transcripts stay the same, and the interpreter is started as fred
// starts it: the personality's Argv and Env, its own session on an 80x24
// pty that is its controlling terminal, TERM=dumb, the marker below.

const recMarker = "\x1a\x1afred-000000000000\x1a\x1a"

// recCmd is one line a recording sends; interrupt sends Ctrl-C after a
// moment (the program runs until then).
type recCmd struct {
	label, cmd string
	interrupt  bool
}

type inprocScenario struct {
	name, note string
	p          *Personality
	argv       []string // with FIX for the fixture directory
	cmds       []recCmd
}

func inprocScenarios() []inprocScenario {
	pdb := func(name, note string, script string, args []string, cmds ...recCmd) inprocScenario {
		return inprocScenario{name: name, note: note, p: PDB,
			argv: append([]string{"python3", "-m", "pdb", "FIX/" + script}, args...), cmds: cmds}
	}
	return append([]inprocScenario{
		pdb("pdb-steps", "stepping, a breakpoint on a function, return, the end and pdb's own restart", "steps.py", nil,
			recCmd{"where1", "fred_where", false},
			recCmd{"pid", "fred_pid", false},
			recCmd{"stop1", "fred_stop", false},
			recCmd{"bps0", "fred_bps", false},
			recCmd{"n", "n", false},
			recCmd{"b", "b square", false},
			recCmd{"bps1", "fred_bps", false},
			recCmd{"c", "c", false},
			recCmd{"stop-bp", "fred_stop", false},
			recCmd{"where-square", "fred_where", false},
			recCmd{"eval", "fred_eval x * 2 + 1", false},
			recCmd{"eval-err", "fred_eval nosuch", false},
			recCmd{"eval-str", `fred_eval "a\nb" * 2`, false},
			recCmd{"r", "r", false},
			recCmd{"stop-return", "fred_stop", false},
			recCmd{"frame-return", "fred_frame", false},
			recCmd{"n-main", "n", false},
			recCmd{"n2", "n", false},
			recCmd{"n3", "n", false},
			recCmd{"s", "s", false},
			recCmd{"frame-call", "fred_frame", false},
			recCmd{"n-bp", "n", false},
			recCmd{"stop-stepped-bp", "fred_stop", false},
			recCmd{"where-bt", "where", false},
			recCmd{"brk", `fred_break "FIX/steps.py:12"`, false},
			recCmd{"bps2", "fred_bps", false},
			recCmd{"disable", "disable 1", false},
			recCmd{"bps3", "fred_bps", false},
			recCmd{"delete", "fred_delete 2", false},
			recCmd{"bps4", "fred_bps", false},
			recCmd{"b-after", "b 12", false},
			recCmd{"cl-after", "cl 2", false},
			recCmd{"assign", "x = 3", false},
			recCmd{"assign-err", "y = nosuch", false},
			recCmd{"unt-err", "until 1", false},
			recCmd{"jump-err", "jump 1000", false},
			recCmd{"echo", "fred_echo '\\x1aFREDSYNC1\\x1a'", false},
			recCmd{"cl", "cl 1", false},
			recCmd{"c-end", "c", false},
			recCmd{"where-ended", "fred_where", false},
			recCmd{"stop-ended", "fred_stop", false},
			recCmd{"n-new", "n", false},
			recCmd{"where-new", "fred_where", false},
			recCmd{"run", "run", false},
			recCmd{"where-run", "fred_where", false},
			recCmd{"help", "help", false},
		),
		pdb("pdb-crash", "an uncaught exception: post mortem, then pdb restarts the program", "crash.py", nil,
			recCmd{"c", "c", false},
			recCmd{"where-pm", "fred_where", false},
			recCmd{"stop-pm", "fred_stop", false},
			recCmd{"frame-pm", "fred_frame", false},
			recCmd{"c-end", "c", false},
			recCmd{"where-ended", "fred_where", false},
		),
		pdb("pdb-exit", "sys.exit(3)", "crash.py", []string{"3"},
			recCmd{"c", "c", false},
			recCmd{"where-ended", "fred_where", false},
		),
		pdb("pdb-interrupt", "Ctrl-C while the program runs", "spin.py", nil,
			recCmd{"c", "c", true},
			recCmd{"where", "fred_where", false},
			recCmd{"stop", "fred_stop", false},
		),
	}, perlScenarios()...)
}

func TestRecordInprocTranscripts(t *testing.T) {
	if os.Getenv("FRED_RECORD_INPROC") == "" {
		t.Skip("set FRED_RECORD_INPROC=1 to record the pdb and perl transcripts again")
	}
	fix := filepath.Join(os.TempDir(), "fred-inprocfix")
	if err := os.MkdirAll(fix, 0o755); err != nil {
		t.Fatal(err)
	}
	src, _ := filepath.Abs(filepath.Join("..", "testdata"))
	for _, pat := range []string{"*.py", "*.pl"} {
		files, _ := filepath.Glob(filepath.Join(src, pat))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fix, filepath.Base(f)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	inputrc := filepath.Join(fix, "inputrc")
	if err := os.WriteFile(inputrc, []byte("set enable-bracketed-paste off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join("testdata", "inproc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sc := range inprocScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			var argv []string
			for _, a := range sc.argv {
				argv = append(argv, strings.ReplaceAll(a, "FIX", fix))
			}
			version, err := exec.Command(argv[0], "--version").CombinedOutput()
			if err != nil {
				t.Fatal(err)
			}
			vline := strings.TrimSpace(string(version))
			if m := regexp.MustCompile(`This is perl.*`).FindString(vline); m != "" {
				vline = m
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "# Recorded from real %s by TestRecordInprocTranscripts in pdb_test.go; do not edit.\n", argv[0])
			fmt.Fprintf(&b, "# Regenerate: FRED_RECORD_INPROC=1 go test -count=1 -run TestRecordInprocTranscripts ./personalities/\n")
			fmt.Fprintf(&b, "# %s\n", sc.note)
			fmt.Fprintf(&b, "@interpreter: %s\n", vline)
			fmt.Fprintf(&b, "@personality: %s\n", sc.p.Name)
			fmt.Fprintf(&b, "@program: %s\n", strings.Join(sc.argv[indexFix(sc.argv):], " "))
			cmds := make([]recCmd, len(sc.cmds))
			for i, c := range sc.cmds {
				c.cmd = strings.ReplaceAll(c.cmd, "FIX", fix)
				cmds[i] = c
			}
			steps, err := recordInproc(t, sc.p, argv, inputrc, cmds)
			for _, s := range steps {
				fmt.Fprintf(&b, "\n=== %s\n$ %s\n", s.label, s.cmd)
				for _, piece := range strings.SplitAfter(s.raw, "\n") {
					if piece != "" {
						fmt.Fprintf(&b, "%s\n", strconv.Quote(piece))
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "inproc", sc.name+".transcript"), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func indexFix(argv []string) int {
	for i, a := range argv {
		if strings.HasPrefix(a, "FIX/") {
			return i
		}
	}
	return 0
}

// recordInproc runs argv as fred would and records each command's output
// up to the next prompt. The first step, "start", is what the debugger
// printed before its first prompt (its command is "(start)").
func recordInproc(t *testing.T, p *Personality, argv []string, inputrc string, cmds []recCmd) ([]tstep, error) {
	master, slave, err := proc.OpenPTY()
	if err != nil {
		return nil, err
	}
	env := append(os.Environ(), "TERM=dumb", "INPUTRC="+inputrc)
	env = append(env, p.Env...)
	pp, err := proc.StartPTY(p.Argv(argv, recMarker, slave.Name()), env, master, slave, &pty.Winsize{Rows: 24, Cols: 80}, !p.NoCtty, false)
	if err != nil {
		return nil, err
	}
	defer func() {
		pp.Stop(time.Second)
		proc.KillSession(pp.Cmd.Process.Pid)
	}()
	var mu sync.Mutex
	var buf bytes.Buffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			mu.Lock()
			buf.Write(b[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	wait := func() (string, error) {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			mu.Lock()
			data := buf.String()
			if i := strings.Index(data, recMarker); i >= 0 {
				buf.Next(i + len(recMarker))
				mu.Unlock()
				return data[:i], nil
			}
			if p.InitialPrompt != nil {
				if loc := p.InitialPrompt.FindStringIndex(data); loc != nil && loc[1] == len(data) {
					buf.Reset()
					mu.Unlock()
					return data[:loc[0]], nil
				}
			}
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		return buf.String(), fmt.Errorf("no prompt; got %q", buf.String())
	}
	out, err := wait()
	steps := []tstep{{label: "start", cmd: "(start)", raw: "(start)\n" + out}}
	if err != nil {
		return steps, err
	}
	var setup []string
	if p.Setup != nil {
		setup = p.Setup(recMarker)
	}
	for _, c := range setup {
		master.WriteString(c + "\n")
		if _, err := wait(); err != nil {
			return steps, err
		}
	}
	for _, c := range cmds {
		if _, err := master.WriteString(c.cmd + "\n"); err != nil {
			return steps, err
		}
		if c.interrupt {
			time.Sleep(500 * time.Millisecond)
			master.Write([]byte{3})
		}
		out, err := wait()
		steps = append(steps, tstep{label: c.label, cmd: c.cmd, raw: out})
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

// ---------------------------------------------------------------------------
// Unit tests on the pdb transcripts

func inprocOut(t *testing.T, name, label string) string {
	t.Helper()
	return loadTranscript(t, filepath.Join("inproc", name)).step(t, label).reply()
}

// pdbQuery is the reply to one of fred's queries, checked to be the query
// the personality sends now.
func inprocQuery(t *testing.T, name, label, cmd string) string {
	t.Helper()
	s := loadTranscript(t, filepath.Join("inproc", name)).step(t, label)
	if s.cmd != cmd {
		t.Fatalf("transcript %s step %q recorded %q, but fred now sends %q: regenerate the transcripts", name, label, s.cmd, cmd)
	}
	return s.reply()
}

func TestInprocTranscriptsParse(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "inproc", "*.transcript"))
	if len(paths) < 8 {
		t.Fatalf("%d transcripts in testdata/inproc; regenerate them (FRED_RECORD_INPROC=1)", len(paths))
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".transcript")
		tr := loadTranscript(t, filepath.Join("inproc", name))
		if tr.header["interpreter"] == "" || tr.header["personality"] == "" {
			t.Errorf("%s: no @interpreter or @personality header", p)
		}
		for _, s := range tr.steps[1:] {
			// The terminal's echo is one plain line: the command as sent.
			if echo, _, _ := strings.Cut(s.raw, "\n"); strings.TrimSuffix(echo, "\r") != s.cmd {
				t.Errorf("%s step %q: the echo is %q, not the command %q", p, s.label, echo, s.cmd)
			}
		}
	}
}

const pdbFix = "/tmp/fred-inprocfix/"

func TestPDBParseLocationAndDepth(t *testing.T) {
	for _, c := range []struct {
		name, label string
		want        Location
		depth       int
	}{
		{"pdb-steps", "where1", Location{File: pdbFix + "steps.py", Line: 1, Function: "<module>"}, 1},
		{"pdb-steps", "where-square", Location{File: pdbFix + "steps.py", Line: 6, Function: "square"}, 3},
		{"pdb-steps", "where-new", Location{File: pdbFix + "steps.py", Line: 2, Function: "<module>"}, 1},
		{"pdb-steps", "where-run", Location{File: pdbFix + "steps.py", Line: 1, Function: "<module>"}, 1},
		{"pdb-crash", "where-pm", Location{File: pdbFix + "crash.py", Line: 13, Function: "walk"}, 3},
		{"pdb-interrupt", "where", Location{File: pdbFix + "spin.py", Line: 0, Function: "<module>"}, 1},
	} {
		out := inprocQuery(t, c.name, c.label, PDB.LocationCmd)
		got, err := PDB.ParseLocation(out)
		if err != nil {
			t.Errorf("%s %s: %v", c.name, c.label, err)
			continue
		}
		if c.want.Line == 0 { // wherever Ctrl-C caught it
			c.want.Line = got.Line
		}
		if got != c.want {
			t.Errorf("%s %s: location %+v, want %+v", c.name, c.label, got, c.want)
		}
		if d, err := PDB.ParseDepth(inprocQuery(t, c.name, c.label, PDB.DepthCmd)); err != nil || d != c.depth {
			t.Errorf("%s %s: depth %d (%v), want %d", c.name, c.label, d, err, c.depth)
		}
	}
	// After the end (pdb restarted the program), the program is not running
	// until the next command moves the new run.
	for _, c := range [][2]string{{"pdb-steps", "where-ended"}, {"pdb-crash", "where-ended"}, {"pdb-exit", "where-ended"}} {
		if _, err := PDB.ParseLocation(inprocQuery(t, c[0], c[1], PDB.LocationCmd)); err != ErrNotRunning {
			t.Errorf("%s %s: %v, want ErrNotRunning", c[0], c[1], err)
		}
		if _, err := PDB.ParseDepth(inprocQuery(t, c[0], c[1], PDB.DepthCmd)); err != ErrNotRunning {
			t.Errorf("%s %s: depth: %v, want ErrNotRunning", c[0], c[1], err)
		}
	}
	if _, err := PDB.ParseLocation("*** SyntaxError: invalid syntax\r\n"); err == nil || err == ErrNotRunning {
		t.Errorf("no answer parsed as a location: %v", err)
	}
}

func TestPDBParsePid(t *testing.T) {
	out := inprocQuery(t, "pdb-steps", "pid", PDB.PidCmd)
	pid, err := PDB.ParsePid(out)
	if err != nil || pid <= 1 {
		t.Fatalf("pid %d, %v from %q", pid, err, out)
	}
}

func TestPDBStops(t *testing.T) {
	for _, c := range []struct {
		label string
		stop  Stop
		why   string // the StopCmd's answer decides
	}{
		{"n", StopDone, "stop1"},
		{"c", StopBreakpoint, "stop-bp"},
		{"r", StopDone, "stop-return"},
		// A next that lands on a breakpoint's line stops at it, as in gdb,
		// though pdb got there by stepping and did not look.
		{"n-bp", StopBreakpoint, "stop-stepped-bp"},
		{"c-end", StopEnded, ""},
	} {
		out := inprocOut(t, "pdb-steps", c.label)
		got := PDB.StopReason(out)
		if got == StopDone && c.why != "" {
			got = PDB.ParseStop(inprocQuery(t, "pdb-steps", c.why, PDB.StopCmd))
		}
		if got != c.stop {
			t.Errorf("%s: stop %v, want %v:\n%s", c.label, got, c.stop, out)
		}
	}
	if !PDB.Ended(inprocOut(t, "pdb-steps", "c-end")) || PDB.Ended(inprocOut(t, "pdb-steps", "c")) {
		t.Error("Ended is wrong about the end of steps.py")
	}
	for _, c := range []struct {
		name, label string
		stop        Stop
	}{
		{"pdb-crash", "c", StopSignal},
		{"pdb-crash", "c-end", StopEnded},
		{"pdb-exit", "c", StopEnded},
		{"pdb-interrupt", "c", StopSignal},
	} {
		if got := PDB.StopReason(inprocOut(t, c.name, c.label)); got != c.stop {
			t.Errorf("%s %s: %v, want %v", c.name, c.label, got, c.stop)
		}
	}
	if got := PDB.ParseStop(inprocQuery(t, "pdb-crash", "stop-pm", PDB.StopCmd)); got != StopDone {
		t.Errorf("post mortem StopCmd says %v", got)
	}
}

func TestPDBNewRunAndRefused(t *testing.T) {
	if !PDB.NewRun(inprocOut(t, "pdb-steps", "run")) || PDB.NewRun(inprocOut(t, "pdb-steps", "c-end")) {
		t.Error("NewRun is wrong about pdb's run")
	}
	for _, c := range []struct {
		label   string
		refused bool
	}{
		{"n", false}, {"c", false}, {"assign", false}, {"b", false},
		{"assign-err", true}, {"unt-err", true}, {"jump-err", true},
	} {
		if got := PDB.Refused(inprocOut(t, "pdb-steps", c.label)); got != c.refused {
			t.Errorf("%s: refused %v, want %v: %q", c.label, got, c.refused, inprocOut(t, "pdb-steps", c.label))
		}
	}
}

func TestPDBBreakpoints(t *testing.T) {
	if bps := PDB.ParseBreakpoints(inprocQuery(t, "pdb-steps", "bps0", PDB.BreakpointsCmd)); len(bps) != 0 {
		t.Errorf("no breakpoints yet, got %+v", bps)
	}
	// A breakpoint on a function is where it stops: its first line.
	want := []Bp{{Num: "1", Where: pdbFix + "steps.py:6", Enabled: true}}
	if got := PDB.ParseBreakpoints(inprocQuery(t, "pdb-steps", "bps1", PDB.BreakpointsCmd)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bps1: %+v, want %+v", got, want)
	}
	brk := inprocOut(t, "pdb-steps", "brk")
	if n := PDB.ParseNewBreakpoint(brk); n != "2" {
		t.Errorf("new breakpoint %q from %q", n, brk)
	}
	if got := strings.ReplaceAll(PDB.BreakAt, "%q", strconv.Quote(pdbFix+"steps.py:12")); got != `fred_break "`+pdbFix+`steps.py:12"` {
		t.Errorf("BreakAt: %s", got)
	}
	want = append(want, Bp{Num: "2", Where: pdbFix + "steps.py:12", Enabled: true})
	if got := PDB.ParseBreakpoints(inprocOut(t, "pdb-steps", "bps2")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bps2: %+v, want %+v", got, want)
	}
	want[0].Enabled = false
	if got := PDB.ParseBreakpoints(inprocOut(t, "pdb-steps", "bps3")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bps3: %+v, want %+v", got, want)
	}
	if got := PDB.ParseBreakpoints(inprocOut(t, "pdb-steps", "bps4")); fmt.Sprint(got) != fmt.Sprint(want[:1]) {
		t.Errorf("bps4: %+v, want %+v", got, want[:1])
	}
	// fred's breakpoint left no trace in pdb's numbering: the person's next
	// one is number 2 again.
	if out := inprocOut(t, "pdb-steps", "delete"); out != "" {
		t.Errorf("fred_delete printed %q", out)
	}
	if out := inprocOut(t, "pdb-steps", "b-after"); !strings.HasPrefix(out, "Breakpoint 2 at ") {
		t.Errorf("the person's next breakpoint: %q", out)
	}
}

func TestPDBEvalAndEcho(t *testing.T) {
	for _, c := range []struct{ label, want string }{
		{"eval", "1"},
		{"eval-err", "(raises NameError: name 'nosuch' is not defined)"},
		{"eval-str", `'a\nba\nb'`},
	} {
		out := inprocOut(t, "pdb-steps", c.label)
		if got, err := PDB.ParseEval(out); err != nil || got != c.want {
			t.Errorf("%s: %q, %v, want %q", c.label, got, err, c.want)
		}
	}
	if got := PDB.EchoCmd("\x1aFREDSYNC1\x1a"); got != loadTranscript(t, "inproc/pdb-steps").step(t, "echo").cmd {
		t.Errorf("EchoCmd: %q", got)
	}
	if out := inprocOut(t, "pdb-steps", "echo"); !strings.Contains(out, "\x1aFREDSYNC1\x1a") {
		t.Errorf("the echo does not hold the token: %q", out)
	}
}

func TestPDBShowsStops(t *testing.T) {
	// fred_frame shows a stop as pdb does, "--Return--" and "--Call--" too.
	if out := inprocOut(t, "pdb-steps", "frame-return"); !regexp.MustCompile(`^--Return--\r\n> .*steps.py\(7\)square\(\)->0\r\n-> return r\r\n$`).MatchString(out) {
		t.Errorf("frame-return: %q", out)
	}
	if out := inprocOut(t, "pdb-steps", "frame-call"); !regexp.MustCompile(`^--Call--\r\n> .*steps.py\(5\)square\(\)\r\n-> def square\(x\):\r\n$`).MatchString(out) {
		t.Errorf("frame-call: %q", out)
	}
	if out := inprocOut(t, "pdb-crash", "frame-pm"); !regexp.MustCompile(`^> .*crash.py\(13\)walk\(\)\r\n-> p.value = 42\r\n$`).MatchString(out) {
		t.Errorf("frame-pm: %q", out)
	}
	if out := inprocOut(t, "pdb-steps", "help"); strings.Contains(out, "fred") || !strings.Contains(out, "Documented commands") {
		t.Errorf("help shows fred's commands or is not pdb's:\n%s", out)
	}
}

// ---------------------------------------------------------------------------
// Unit tests without transcripts

func TestPDBClassify(t *testing.T) {
	for _, c := range []struct {
		line string
		kind Kind
		op   string
	}{
		{"n", Forward, OpNext},
		{"next", Forward, OpNext},
		{"s", Forward, OpStep},
		{"c", Forward, OpContinue},
		{"cont", Forward, OpContinue},
		{"continue", Forward, OpContinue},
		{"r", Forward, "return"},
		{"unt 30", Forward, OpUntil},
		{"j 12", Forward, OpJump},
		{"restart", Forward, OpRun},
		{"run a b", Forward, OpRun},
		{"b square", Breakpoint, "break"},
		{"tbreak 3", Breakpoint, "tbreak"},
		{"cl 1", Breakpoint, "clear"},
		{"condition 1 x > 2", Breakpoint, "condition"},
		{"commands 1", Breakpoint, "commands"},
		{"p x", Inspect, "p"},
		{"p(x)", Inspect, "p"},
		{"pp x", Inspect, "pp"},
		{"w", Inspect, "where"},
		{"bt", Inspect, "where"},
		{"l", Inspect, "list"},
		{"ll", Inspect, "longlist"},
		{"a", Inspect, "args"},
		{"u", Inspect, "up"},
		{"d", Inspect, "down"},
		{"?", Inspect, "help"},
		{"q", Quit, "quit"},
		{"exit", Quit, "quit"},
		// pdb's command is the leading identifier: these are commands.
		{"n=5", Forward, OpNext},
		{"c.x = 1", Forward, OpContinue},
		{"s[0] = 2", Forward, OpStep},
		// Anything else is Python, run in the program.
		{"x = 3", Mutate, "x = 3"},
		{"!n = 5", Mutate, "!n = 5"},
		{"total += 1", Mutate, "total += 1"},
		{"del d['k']", Mutate, "del d['k']"},
		{"items.append(3)", Mutate, "items.append(3)"},
		{"import os", Mutate, "import os"},
		{"(a, b) = 1, 2", Mutate, "(a, b) = 1, 2"},
		{"p (y := 3)", Mutate, "p"},
		{"print(x, end='')", Other, "print(x, end='')"},
		{"len(items) == 3", Other, "len(items) == 3"},
		{"x", Other, "x"},
		{"!x", Other, "!x"},
		{"x == 3", Other, "x == 3"},
		{"dd.get('a') != 1", Other, "dd.get('a') != 1"},
		{"d.get('a') != 1", Inspect, "down"}, // as pdb reads it
		{"alias nn next", Other, "alias"},
		{"interact", Other, "interact"},
		{"debug f(1)", Other, "debug"},
	} {
		got := PDB.Classify(c.line)
		if got.Kind != c.kind || got.Op != c.op {
			t.Errorf("%q: %v %q, want %v %q", c.line, got.Kind, got.Op, c.kind, c.op)
		}
	}
	if c := PDB.Classify("next 5"); c.Count != 1 {
		t.Errorf("pdb's next takes no count, yet %q has count %d", c.Line, c.Count)
	}
	if r := PDB.Repeat(PDB.Classify("l 5")); r != "list" {
		t.Errorf("an empty line after 'l 5' repeats %q", r)
	}
	if r := PDB.Repeat(PDB.Classify("n")); r != "n" {
		t.Errorf("an empty line after 'n' repeats %q", r)
	}
}

func TestPDBArgv(t *testing.T) {
	const m = "\x1a\x1afred-x\x1a\x1a"
	pdbBoot, err := builtinScript("pdb_boot.py")
	if err != nil {
		t.Fatal(err)
	}
	boot := strings.Replace(pdbBoot, "FRED_PROMPT", `'\x1a\x1afred-x\x1a\x1a'`, 1)
	for _, c := range []struct {
		in, want []string
	}{
		{[]string{"python3", "-m", "pdb", "p.py", "a"}, []string{"python3", "-c", boot, "p.py", "a"}},
		{[]string{"/usr/bin/python3.11", "-u", "-X", "dev", "-m", "pdb", "-c", "c", "p.py"}, []string{"/usr/bin/python3.11", "-u", "-X", "dev", "-c", boot, "-c", "c", "p.py"}},
		{[]string{"pdb", "p.py", "-m", "x"}, []string{"python3", "-c", boot, "p.py", "-m", "x"}},
		{[]string{"pdb3", "p.py"}, []string{"python3", "-c", boot, "p.py"}},
		{[]string{"python", "p.py"}, []string{"python", "-c", boot, "p.py"}},
		{[]string{"python3", "-m", "mymod", "x"}, []string{"python3", "-c", boot, "-m", "mymod", "x"}},
	} {
		if got := PDB.Argv(c.in, m, "/dev/pts/9"); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	for _, name := range []string{"pdb", "python3", "python3.11", "python"} {
		if p, err := ForArgv([]string{"/usr/bin/" + name}); err != nil || p != PDB {
			t.Errorf("%s: %v %v", name, p, err)
		}
	}
	if pyQuote("a'\\\x1az") != `'a\x27\x5c\x1az'` {
		t.Errorf("pyQuote: %s", pyQuote("a'\\\x1az"))
	}
}

// The probes' answer, as pdb's and perl's bootstraps print it (after the
// debugger's own output, with a terminal's \r).
func TestParseProbed(t *testing.T) {
	live, dead, err := ParseProbed("junk\r\n@fred probed live 1:4242,0:4250 dead 4100,4101\r\n")
	if err != nil || len(live) != 2 || live[0] != (Probed{1, 4242}) || live[1] != (Probed{0, 4250}) || len(dead) != 2 || dead[1] != 4101 {
		t.Fatalf("got %v %v %v", live, dead, err)
	}
	live, dead, err = ParseProbed("@fred probed live - dead -\n")
	if err != nil || live != nil || dead != nil {
		t.Fatalf("none: got %v %v %v", live, dead, err)
	}
	for _, bad := range []string{"@fred probed live -2:1 dead -", "@fred probed live x dead -", "@fred probed live - dead 0", "@fred probed", "nothing"} {
		if _, _, err := ParseProbed(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, _, err := ParseProbed("@fred ended\n"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("ended: %v", err)
	}
}
