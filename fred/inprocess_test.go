package fred

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
)

// Tests of the in-process debuggers (pdb, perl -d) with the real
// interpreters and real CRIU. The interpreter is the process fred talks to:
// snapshots hold the debugger too.

// script is a fixture program for an interpreter: testdata/NAME.
func script(name string) string {
	return filepath.Join(testutil.Root(), "testdata", name)
}

// feeder types a person's input to the program while a command runs.
type feeder struct {
	mu    sync.Mutex
	lines []string
	s     *Session
}

func (f *feeder) forwarding(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !on || f.s == nil || len(f.lines) == 0 {
		return
	}
	in := strings.Join(f.lines, "")
	f.lines = nil
	s := f.s
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Input([]byte(in))
	}()
}

// type_ queues input for the next command's program to read.
func (f *feeder) type_(s string) {
	f.mu.Lock()
	f.lines = append(f.lines, s)
	f.mu.Unlock()
}

// inprocSession starts a real interpreter's debugger (pdb, perl -d) on a
// fixture script, with CRIU snapshots.
func inprocSession(t *testing.T, p *P.Personality, argv []string, backend string) (*tsession, *feeder) {
	t.Helper()
	return inprocSessionWith(t, p, argv, backend, false)
}

// inprocSessionWith is inprocSession, with the replay log off if noLog.
func inprocSessionWith(t *testing.T, p *P.Personality, argv []string, backend string, noLog bool) (*tsession, *feeder) {
	t.Helper()
	testutil.Require(t, argv[0])
	prog := argv[len(argv)-1]
	for _, a := range argv { // the script, before the program's arguments
		if strings.HasSuffix(a, ".py") || strings.HasSuffix(a, ".pl") {
			prog = a
			break
		}
	}
	out := &syncBuf{}
	f := &feeder{}
	s, err := Start(Options{Personality: p, Argv: argv, Out: out, Forwarding: f.forwarding,
		Timeout: 30 * time.Second, Batch: true, Snapshots: backend, Dir: t.TempDir(), NoReplayLog: noLog})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
	ts := &tsession{Session: s, t: t, out: out, backend: backend, in: f}
	t.Cleanup(func() {
		pid, _, _ := s.host.process()
		s.Close()
		if pid != 0 && !proc.WaitGone(pid, 5*time.Second) {
			t.Errorf("interpreter pid %d still there after Close", pid)
		}
		if left := testutil.Running(prog); len(left) > 0 {
			t.Errorf("left running: %v", left)
		}
	})
	if s.snap == nil {
		t.Fatalf("no %s snapshots: %s; run 'make deps' as root", backend, s.snapWhy)
	}
	return ts, f
}

func pdbSession(t *testing.T, fixture, backend string) (*tsession, *feeder) {
	t.Helper()
	return pdbSessionArgs(t, fixture, backend)
}

// pdbSessionArgs is pdbSession with the program's arguments.
func pdbSessionArgs(t *testing.T, fixture, backend string, args ...string) (*tsession, *feeder) {
	t.Helper()
	ts, f := inprocSession(t, P.PDB, append([]string{"python3", "-m", "pdb", script(fixture)}, args...), backend)
	if out := ts.out.take(); !regexp.MustCompile(`(?s)^> .*` + fixture + `\(1\)<module>\(\).*fred: snapshot 1 taken at the program's start`).MatchString(out) {
		t.Fatalf("pdb's first stop:\n%s", out)
	}
	return ts, f
}

// evalValue is tsession.value for in-process debuggers: the value of an
// expression through the personality's own query.
func (ts *tsession) evalValue(expr string) string {
	ts.t.Helper()
	out, err := ts.query(ts.p.EvalCmd(expr))
	if err != nil {
		ts.t.Fatal(err)
	}
	v, err := ts.p.ParseEval(out)
	if err != nil {
		ts.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// The program is the interpreter itself; the debugger's commands, its
// output and the program's come through as they are; fred's history
// counts the person's commands; at the program's end fred knows it has
// ended, and the debugger's restart (pdb's own, perl's R) begins a new
// run with a first snapshot of its own; the debugger's quit ends the
// session.
func TestForwardAndHistory(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		toEnd   []step // to the program's end
		ended   []step // after it
	}{
		{"pdb", pdbStart, "steps.py",
			[]step{
				{cmd: "n", out: `^> .*steps.py\(2\)<module>\(\)\r?\n-> total = 0\r?\n$`},
				{cmd: "next", out: `\(5\)<module>\(\)`},
				{cmd: "", out: `\(10\)<module>\(\)`}, // an empty line repeats
				{cmd: "b square", out: `^Breakpoint 1 at .*steps.py:5`},
				{cmd: "continue", out: `\(6\)square\(\)\r?\n-> r = x \* x`},
				{cmd: "p x", out: `^0\r?\n$`},
				{cmd: "where", out: `(?s)<module>\(\).*main\(\).*> .*square\(\)`},
				{cmd: "x = 7", out: `^$`},
				{cmd: "p x", out: `^7\r?\n$`},
				{cmd: "print(x + 1)", out: `^8\r?\n$`},
				{cmd: "nosuch + 1", out: `NameError`},
				{cmd: "s", out: `\(7\)square\(\)`},
				{cmd: "p r", out: `^49\r?\n$`},
				{cmd: "r", out: `--Return--\r?\n> .*\(7\)square\(\)->49`},
				{cmd: "fred-history", out: `(?s)timeline of run 1: 7 commands.*\(1\) snapshot 1, the start\n   \|  next x3\n   \|  continue\n   \|  x = 7\n   \|  step\n   \|  return\n  >>> you are here: square at steps.py:7, depth 3\n`},
				// The program's output and pdb's stop come through as they are.
				{cmd: "c", out: `^i=0 total=49\r?\n> .*\(6\)square\(\)`},
				{cmd: "help", out: `Documented commands`, not: "fred_"}, // fred's own pdb commands do not show
				{cmd: "cl 1", out: `Deleted breakpoint 1`},
				{cmd: "c", out: `(?s)fact=120\r?\nThe program finished and will be restarted\r?\n> .*steps.py\(1\)<module>\(\)`},
			},
			[]step{
				{cmd: "fred-history", out: `you are here: the program has ended \(after 'continue'\)`},
				{cmd: "fred-checkpoint", out: `needs a running program`},
				// pdb restarted the program: the next command moves a new run, with a
				// first snapshot of its own.
				{cmd: "n", out: `(?s)\(2\)<module>\(\).*fred: snapshot 2 taken at the first stop`},
				{cmd: "fred-history", out: `(?s)timeline of run 2: 1 command, 1 snapshot, 0 side lines.*\n   \|  next\n  \(2\) snapshot 2\n  >>> you are here`},
			}},
		{"perl", perlStart, "steps.pl",
			[]step{
				{cmd: "n", out: `^main::\(.*steps.pl:19\):\r?\n19:\tfor my \$i \(0 \.\. 4\) \{\r?\n$`},
				{cmd: "n", out: `steps.pl:20\):`},
				{cmd: "s", out: `^main::square\(.*steps.pl:8\):`},
				{cmd: "", out: `steps.pl:9\):`}, // an empty line repeats s
				{cmd: "p $x", out: `^0\r?\n$`},
				{cmd: "$x = 7"},
				{cmd: "p $x", out: `^7\r?\n$`},
				{cmd: "$x = ;", out: `syntax error`},
				{cmd: "n", out: `steps.pl:10\):`},
				{cmd: "p $r", out: `^49\r?\n$`},
				{cmd: "T", out: `main::square\(0\) called from file`},
				{cmd: "r", out: `^scalar context return from main::square: 49\r?\nmain::\(.*steps.pl:21\):`},
				{cmd: "fred-history", out: `(?s)timeline of run 1: 7 commands.*\(1\) snapshot 1, the start\n   \|  next x2\n   \|  step x2\n   \|  \$x = 7\n   \|  next\n   \|  finish\n  >>> you are here: main:: at steps.pl:21, depth 1\n`},
				{cmd: "b fact"},
				{cmd: "c", out: `^i=0 total=49\r?\ni=1 total=50\r?\n(?s).*main::fact\(.*steps.pl:14\):`},
				{cmd: "L b", out: `steps.pl:\r?\n 14:`},
				{cmd: "B *", out: `Deleting all breakpoints`},
				{cmd: "c", out: `(?s)fact=120\r?\nDebugged program terminated\.`},
			},
			[]step{
				{cmd: "fred-history", out: `you are here: the program has ended \(after 'continue'\)`},
				{cmd: "n", out: `Use 'q' to quit or 'R' to restart`},
				{cmd: "fred-history", out: `you are here: the program has ended \(after 'continue'\)`},
				// R runs the program again in the same process (exec): a new run.
				{cmd: "R", out: `(?s)Loading DB routines.*steps.pl:5\):.*fred: snapshot 2 taken at the first stop`},
				{cmd: "fred-history", out: `(?s)timeline of run 2: 1 command, 1 snapshot, 0 side lines.*\n   \|  run\n  \(2\) snapshot 2\n  >>> you are here`},
				{cmd: "n", out: `steps.pl:19\):`},
				{cmd: "fred-rs", out: `steps.pl:5\):`},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				if ts.pid != ts.proc.Cmd.Process.Pid || !ts.running {
					t.Fatalf("the program is the interpreter itself: pid %d, interpreter %d, running %v", ts.pid, ts.proc.Cmd.Process.Pid, ts.running)
				}
				ts.play(tc.toEnd)
				if ts.running {
					t.Fatal("the program ended, but fred thinks it runs")
				}
				ts.play(tc.ended)
				if err := ts.Exec("q"); err != ErrSessionOver {
					t.Fatalf("q: %v, want the session to end", err)
				}
				select {
				case <-ts.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("the debugger's quit did not end the session")
				}
			})
		})
	}
}

// ipState is what a person sees of a Python or Perl program at a stop:
// where it is, its pid, its total and a local variable.
type ipState struct {
	loc          string
	pid          int
	total, local string
}

func (ts *tsession) ipState(total, local string) ipState {
	ts.t.Helper()
	loc, err := ts.location()
	if err != nil {
		ts.t.Fatal(err)
	}
	pid, err := ts.Pid()
	if err != nil {
		ts.t.Fatal(err)
	}
	if ts.backend == "fork" {
		pid = 0 // each restore wakes another copy
	}
	return ipState{loc: loc.String(), pid: pid, total: ts.value(total), local: ts.value(local)}
}

// The first snapshot is at the program's first line, before any command:
// going back reaches it.
func TestPDBReverseToTheStart(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts, _ := pdbSession(t, "steps.py", backend)
		runRevCases(t, ts, []string{"total"}, []revCase{
			{cmd: "fred-list", mark: "L1"},
			{cmd: "n", mark: "L2"},
			{cmd: "n", mark: "L5"},
			{cmd: "fred-rs", land: "L2"},
			{cmd: "fred-rn", land: "L1"},
			{cmd: "n", land: "L2"},
			{cmd: "fred-rs 5", land: "L1"},
		})
		ts.must("fred-rs", `already at the first snapshot`)
		ts.must("fred-rf", `not meaningful in the outermost frame`)
	})
}

// The shape: a record without "=" in a loop; post-mortem in
// parse(), and one step back is the raising statement of that turn, with
// the locals as they were.
func TestPDBReverseFromPostMortemInLoop(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts, _ := pdbSession(t, "parse_error.py", backend)
		ts.must("c", `(?s)ValueError: .*Uncaught exception. Entering post mortem debugging.*> .*parse_error.py\(8\)parse\(\)\r?\n-> k, v = r.split\("="\)`)
		ts.must("fred-reverse-step", `^> .*parse_error.py\(8\)parse\(\)\r?\n-> k, v = r.split\("="\)\r?\nfred: 'fred-reverse-step' took`)
		if v := ts.evalValue("r"); v != "'broken'" {
			t.Fatalf("r is %s at the landing, want 'broken'", v)
		}
		if v := ts.evalValue("out"); v != "{'a': '1', 'b': '2'}" {
			t.Fatalf("out is %s at the landing", v)
		}
		ts.must("fred-rs", `\(7\)parse\(\)\r?\n-> for r in records:`)
		ts.must("p r", `^'b=2'`)
		ts.must("n", `\(8\)parse\(\)`)
		ts.must("n", `^ValueError: .*\r?\n> .*\(8\)parse\(\)`)
	})
}

// perl -d

func perlSession(t *testing.T, fixture, backend string) (*tsession, *feeder) {
	t.Helper()
	return perlSessionArgs(t, fixture, backend)
}

// perlSessionArgs is perlSession with the program's arguments.
func perlSessionArgs(t *testing.T, fixture, backend string, args ...string) (*tsession, *feeder) {
	t.Helper()
	ts, f := inprocSession(t, P.Perl, append([]string{"perl", "-d", script(fixture)}, args...), backend)
	if out := ts.out.take(); !regexp.MustCompile(`(?s)Loading DB routines from perl5db.pl.*main::\(.*` + fixture + `:\d+\):.*fred: snapshot 1 taken at the program's start`).MatchString(out) {
		t.Fatalf("perl -d's first stop:\n%s", out)
	}
	return ts, f
}

// TestCheckpointRestartInProcess: snapshots in pdb and perl. Back to a
// snapshot: the same place and variables (the same process with CRIU);
// the breakpoints are the person's as of now, as with gdb; the latest
// snapshot by default; the first at the program's first line; a missing
// one refused; fred-list says where each lies; forward from a restored
// process works. gdb's is TestCheckpointRestart.
func TestCheckpointRestartInProcess(t *testing.T) {
	cases := []struct {
		name         string
		start        starter
		fixture      string
		total, x, r  string    // the variables
		brk          [2]string // a breakpoint in square, and the stop there
		again        string    // the next stop there, after the loop's first turn
		set          string    // x = 5
		next         string    // where next goes
		brk2, off1   string    // a breakpoint in fact; breakpoint 1 off
		toFact       string    // the continue to it
		restart2     string    // what fred-restart 2 shows
		bps          [2]string // the breakpoint list, and what it says
		fromTwo      string    // the continue from snapshot 2
		first        string    // where snapshot 1 is
		atFirst, end [][2]string
	}{
		{"pdb", pdbStart, "steps.py", "total", "x", "r", [2]string{"b square", `\(6\)square\(\)`},
			`^i=0 total=0\r?\n> .*\(6\)square\(\)`, "x = 5", `\(7\)square\(\)`,
			"b fact", "disable 1", `i=1 total=25(?s).*i=4 total=54.*\(11\)fact\(\)`,
			`^> .*steps.py\(6\)square\(\)\r?\n-> r = x \* x\r?\n$`,
			[2]string{"b", `(?s)1\s+breakpoint\s+keep no\s+at .*steps.py:5.*2\s+breakpoint\s+keep yes\s+at .*steps.py:10`},
			`^i=0 total=0\r?\ni=1 total=1\r?\n(?s).*\(11\)fact\(\)`, `\(1\)<module>\(\)`,
			[][2]string{{"p total", `NameError`}},
			[][2]string{{"enable 1", `Enabled breakpoint 1`}, {"c", `\(6\)square\(\)`}}},
		{"perl", perlStart, "steps.pl", "$total", "$x", "$r", [2]string{"b 9", `steps.pl:9\):`},
			`^i=0 total=0\r?\nmain::square\(.*steps.pl:9\)`, "$x = 5", `steps.pl:10\)`,
			"b 15", `DB::fred_enable("` + script("steps.pl") + `:9", 0)`, `i=1 total=25(?s).*i=4 total=54.*steps.pl:15\)`,
			`^main::square\(.*steps.pl:9\):\r?\n9:\t    my \$r = \$x \* \$x;\r?\n$`,
			[2]string{"L b", `(?s) 9:.*break if \(1\).* 15:.*break if \(1\)`},
			`^i=0 total=0\r?\ni=1 total=1\r?\n(?s).*steps.pl:15\)`, `steps.pl:5\)`,
			nil, [][2]string{{"c", `steps.pl:15\)`}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				pid := ts.pid
				ts.do(tc.brk[0])
				ts.must("c", tc.brk[1])
				ts.must("fred-checkpoint", `^fred: snapshot 2 taken \(\d+\.\d+ s, (\d+\.\d MB|a paused copy)\)`)
				at2 := ts.ipState(tc.total, tc.x)
				ts.must("c", tc.again)
				ts.do(tc.set)
				ts.must("n", tc.next)
				ts.must("fred-checkpoint", `snapshot 3 taken`)
				at3 := ts.ipState(tc.total, tc.r)
				if at3.local != "25" || backend == "criu" && at3.pid != pid {
					t.Fatalf("state at snapshot 3: %+v", at3)
				}
				ts.do(tc.brk2)
				ts.do(tc.off1)
				ts.must("c", tc.toFact)

				ts.must("fred-restart 2", tc.restart2)
				if got := ts.ipState(tc.total, tc.x); got != at2 {
					t.Fatalf("after fred-restart 2:\n got %+v\nwant %+v", got, at2)
				}
				ts.must(tc.bps[0], tc.bps[1])
				ts.must("c", tc.fromTwo)
				ts.must("fred-restart", tc.next)
				if got := ts.ipState(tc.total, tc.r); got != at3 {
					t.Fatalf("after fred-restart:\n got %+v\nwant %+v", got, at3)
				}
				ts.must("fred-restart 1", tc.first)
				ts.mustAll(tc.atFirst)
				ts.must("fred-restart 5", `there is no snapshot 5`)
				out := ts.do("fred-list")
				for _, want := range []string{map[string]string{"criu": "snapshots: CRIU", "fork": "snapshots: fork"}[backend], "the start, auto", "1 command ('continue')", "4 commands ('next')"} {
					if !strings.Contains(out, want) {
						t.Errorf("fred-list lacks %q:\n%s", want, out)
					}
				}
				// Forward from a restored process.
				ts.mustAll(tc.end)
				if backend == "criu" && ts.pid != pid {
					t.Fatalf("pid %d after restores, want %d", ts.pid, pid)
				}
			})
		})
	}
}

// TestProgramInput: what the person types for the program reaches it
// (and what it prints that looks like the debugger's is the program's);
// going back replays both inputs from the log, with the same random seed
// and order; back before both, the program gets them from the log again,
// not from what the person types then. In pdb and perl; gdb's is
// TestProgramInputAndPromptLookalike (cmd/fred).
func TestProgramInput(t *testing.T) {
	type typing struct{ typed, cmd, answer string } // typed: input before cmd
	cases := []struct {
		name      string
		start     starter
		fixture   string
		brk       [2]string
		first     string // the continue to the breakpoint, after the name was typed
		vars      []string
		count     []typing // to after the count was read
		rev       []revCase
		restart   string
		noBreaks  string
		end, ends string // the end, and what the program printed on the way
	}{
		{"pdb", pdbStart, "input.py", [2]string{"b 16", `Breakpoint 1`},
			`(?s)^\(Pdb\) this line is the program's, not pdb's\r?\n> /nowhere/fake.py\(1\)<module>\(\)\r?\nname\? fred\r?\nhello fred \(3 words\)\r?\n> .*input.py\(16\)main\(\)\r?\n-> n = int`,
			[]string{"total", "seed", "order"},
			[]typing{{"4\n", "n", `^count\? 4\r?\n> .*\(17\)main\(\)`}},
			[]revCase{
				{cmd: "n", mark: "A18"}, // total = 0 ran
				{cmd: "n", mark: "A19"},
				{cmd: "n", mark: "B18"},
				{cmd: "n", mark: "B19"},
				{cmd: "fred-rs", land: "B18"},
				{cmd: "fred-rn", land: "A19"},
				{cmd: "fred-rs", land: "A18"},
			},
			`\(1\)<module>\(\)`, "disable 1", `The program finished`, `hello fred \(3 words\)\r?\ncount\? 4\r?\ntotal=6 pid=\d+`},
		{"perl", perlStart, "input.pl", [2]string{"b 14", ``},
			`(?s)^  DB<1> this line is the program's, not the debugger's\r?\nmain::\(/nowhere/fake.pl:1\):\r?\nname\? fred\r?\nhello fred \(3 words\)\r?\nmain::\(.*input.pl:14\):`,
			[]string{"$total", "$seed", "$order"},
			[]typing{
				{"", "n", `^main::\(.*input.pl:15\)`}, // "count? " waits in perl's buffer
				{"4\n", "n", `^4\r?\nmain::\(.*input.pl:16\)`},
				{"", "n", `input.pl:17\)`},
			},
			[]revCase{
				{cmd: "n", mark: "A18"},
				{cmd: "n", mark: "B18"},
				{cmd: "n", mark: "C18"},
				{cmd: "fred-rs", land: "B18"},
				{cmd: "fred-rn", land: "A18"},
			},
			`input.pl:5\)`, "B *", `Debugged program terminated`, `hello fred \(3 words\)\r?\ncount\? total=6 pid=\d+`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				in := ts.in
				ts.must(tc.brk[0], tc.brk[1])
				in.type_("fred\n")
				out := ts.must("c", tc.first)
				// The replay log has the line: no snapshot is needed after it.
				if strings.Contains(out, "snapshot 2") {
					t.Fatalf("a snapshot after the input, with the replay log on:\n%s", out)
				}
				seed, order := ts.value(tc.vars[1]), ts.value(tc.vars[2])
				for _, st := range tc.count {
					if st.typed != "" {
						in.type_(st.typed)
					}
					ts.must(st.cmd, st.answer)
				}
				// Going back replays both inputs from the log (from snapshot 1).
				runRevCases(t, ts, tc.vars, tc.rev)
				if s, o := ts.value(tc.vars[1]), ts.value(tc.vars[2]); s != seed || o != order {
					t.Errorf("after going back: seed %s order %s, want %s %s", s, o, seed, order)
				}
				// Back to before both inputs: the program gets them from the
				// log. Should it ask the person instead, it gets other lines
				// and the output says so (no waiting for ever).
				ts.must("fred-restart 1", tc.restart)
				ts.do(tc.noBreaks)
				in.type_("other\n5\n")
				out = ts.must("c", tc.end)
				if !regexp.MustCompile(tc.ends).MatchString(out) {
					t.Fatalf("the inputs were not replayed:\n%s", out)
				}
			})
		})
	}
}

// Bad input: the debugger's own message, and fred's history and snapshots
// stay as they were.
func TestInProcessBadInput(t *testing.T) {
	type badCase struct {
		name             string
		start            starter
		fixture          string
		noCode, noCodeRe string // a breakpoint on a line without code
		raises, raisesRe string // an expression that raises
		watch, watchRe   string // reverse-watch of an expression that does not parse
	}
	cases := []badCase{
		{"pdb", pdbStart, "steps.py", "b 3", `\*\*\* Blank or comment`, "p 1/0", `\*\*\* ZeroDivisionError`,
			"fred-reverse-watch total >=", `cannot evaluate the expression at .*: \(raises SyntaxError`},
		{"perl", perlStart, "steps.pl", "b 4", `Line 4 not breakable`, `p 1/$total`, `Illegal division by zero`,
			"fred-reverse-watch $total >=", `syntax error`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				ts.must("n", ``)
				ts.must("n", ``)
				before := ts.pyOrPl()
				hist := ts.do("fred-history")
				ts.must(tc.noCode, tc.noCodeRe)
				ts.must(tc.raises, tc.raisesRe)
				ts.must(tc.watch, tc.watchRe)
				ts.must("fred-reverse-stepi", `does not step machine instructions; use fred-reverse-step`)
				if got := ts.do("fred-history"); got != hist {
					t.Errorf("history changed by refused commands:\nbefore:\n%s\nafter:\n%s", hist, got)
				}
				if got := ts.pyOrPl(); got != before {
					t.Errorf("the program moved: %s, was %s", got, before)
				}
				ts.must("fred-reverse-step", `took`)
				ts.must("fred-reverse-step", `took`)
				ts.must("fred-reverse-step", `already at the first snapshot`)
				ts.must("n", ``)
				ts.must("n", ``)
				if got := ts.pyOrPl(); got != before {
					t.Errorf("forward again: %s, want %s", got, before)
				}
			})
		})
	}
}

// pyOrPl is where the program is, by the personality's own query.
func (ts *tsession) pyOrPl() string {
	ts.t.Helper()
	loc, err := ts.location()
	if err != nil {
		ts.t.Fatal(err)
	}
	return loc.String()
}

// A program the interpreter cannot compile: the interpreter's own message;
// perl -d stays usable (the program has ended), pdb exits as it does
// without fred.
func TestInProcessSyntaxError(t *testing.T) {
	testutil.Require(t, "python3", "perl")
	out := &syncBuf{}
	_, err := Start(Options{Personality: P.PDB, Argv: []string{"python3", "-m", "pdb", script("syntax.py")}, Out: out,
		Timeout: 30 * time.Second, Batch: true, Snapshots: "off"})
	if err == nil || !strings.Contains(out.take(), "SyntaxError: '(' was never closed") {
		t.Fatalf("pdb on a syntax error: err %v", err)
	}
	ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", script("syntax.pl")}, "fork")
	if o := ts.out.take(); !strings.Contains(o, "syntax error at") || !strings.Contains(o, "Debugged program terminated") {
		t.Fatalf("perl -d on a syntax error:\n%s", o)
	}
	ts.must("fred-checkpoint", `needs a running program; start it with 'R'`)
	ts.must("fred-reverse-step", `needs a snapshot of this run; start the program with 'R'`)
	ts.must("p 1+1", `^2`)
}

// TestCountedNexts: the bootstrap's counted `next`s (pdb's fred_nexts,
// perl's DB::fred_nexts) go without a prompt between them and stop where
// the debugger's own `next`s would: at a breakpoint, after the count, out
// of the frame (shallower), or at the end.
func TestCountedNexts(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		script  []step
	}{
		{"pdb", pdbStart, "watch.py", []step{
			{cmd: "b 17", out: `Breakpoint 1 at`},
			{cmd: "c", out: `\(17\)main\(\)`},
			{cmd: "fred_nexts 4", out: `(?s)FREDNEXTS 1 breakpoint.*\(17\)main\(\)`, expr: "i", want: "1"}, // after one loop turn
			{cmd: "cl 1", out: `Deleted breakpoint 1`},
			{cmd: "fred_nexts 10", out: `(?s)FREDNEXTS 10 limit.*\(17\)main\(\)`, expr: "i", want: "6"}, // two nexts a turn
			{cmd: "s", out: `--Call--`},
			{cmd: "fred_nexts 100 shallower", out: `(?s)FREDNEXTS 5 done.*\(16\)main\(\)`},
			{cmd: "fred_nexts 100000", out: `(?s)The program finished and will be restarted.*FREDNEXTS \d+ exited`},
		}},
		{"perl", perlStart, "watch.pl", []step{
			{cmd: "b 17"},
			{cmd: "c", out: `watch.pl:17\)`},
			{cmd: "DB::fred_nexts(4)", out: `(?s)watch.pl:17\).*FREDNEXTS 0 breakpoint`, expr: "$i", want: "1"}, // after one loop turn
			{cmd: "B 17"},
			{cmd: "DB::fred_nexts(10)", out: `(?s)watch.pl:17\).*FREDNEXTS 10 limit`, expr: "$i", want: "11"},
			{cmd: "s", out: `main::update\(.*watch.pl:9\)`},
			{cmd: `DB::fred_nexts(100, "shallower")`, out: `(?s)watch.pl:17\).*FREDNEXTS 4 done`, expr: "$i", want: "12"}, // back in the loop
			{cmd: "DB::fred_nexts(100000)", out: `(?s)Debugged program terminated.*FREDNEXTS \d+ exited`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.start(t, tc.fixture, "fork").play(tc.script)
		})
	}
}

// TestPerlCountedNextsRunActions: the lines' actions (perl -d's `a`) run
// during a counted walk as during the person's own `n`s.
func TestPerlCountedNextsRunActions(t *testing.T) {
	ts, _ := perlSession(t, "watch.pl", "fork")
	ts.must("b 17", ``)
	ts.must("c", `watch.pl:17\)`)
	ts.must("a 13 $main::acts++", ``)
	ts.must("B 17", ``)
	ts.must("DB::fred_nexts(10)", `FREDNEXTS 10 limit`)
	if v := ts.value("$main::acts"); v != "10" {
		t.Fatalf("the action at line 13 ran %s times in 10 turns, want 10", v)
	}
}

// perl's watch expressions (`w`) are stop conditions too: one set after
// the snapshot is there when fred replays from it, so a replayed `c`
// stops where the watch stopped it, and reverse-continue goes back to
// the watch's previous stop.
func TestPerlWatchExpressionsReplayed(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts, _ := perlSession(t, "watch.pl", backend)
		ts.do("b 17 $i == 3")
		ts.must("c", `watch.pl:17\)`)
		ts.do("B 17")
		ts.must("w $total", `^\s*$|`)
		ts.must("c", `(?s)Watchpoint 0:\s+\$total changed:.*old value:\s+'8'.*new value:\s+'16'`)
		ts.must("p $i", `^4`)
		ts.must("c", `(?s)Watchpoint 0:\s+\$total changed:.*old value:\s+'16'.*new value:\s+'18'`)
		ts.must("p $i", `^5`)
		ts.must("fred-reverse-continue", `watch.pl:17\)`)
		ts.must("p $i", `^4`)
		ts.must("p $total", `^16`)
		ts.must("c", `(?s)Watchpoint 0:\s+\$total changed:.*old value:\s+'16'.*new value:\s+'18'`)
		ts.must("p $i", `^5`)
		ts.do("W $total")
		ts.must("c", `total=-998208`)
	})
}

// TestPDBThreads: a worker thread that pdb does not trace counts beats
// in a loop of short sleeps beside the main one (worker.py), both taking
// and giving back Python's GIL. At each stop the worker waits, as gdb's
// threads do at its prompt; going back and forward again shows each stop
// as it was recorded, the worker's count too (the replay gave the threads
// the GIL in the recorded order), without a divergence from the log.
func TestPDBThreads(t *testing.T) {
	line := fixtureLineOf(t, "worker.py", "stop")
	stop := fmt.Sprintf(`\(%d\)<module>\(\)`, line)
	for run := 0; run < 3; run++ {
		ts, _ := pdbSession(t, "worker.py", "criu")
		ts.must(fmt.Sprintf("b %d", line), `Breakpoint 1`)
		var seen []string
		for i := 0; i < 3; i++ {
			ts.must("c", stop)
			seen = append(seen, ts.value("(i, total, beats)"))
		}
		if seen[2] == seen[1] {
			t.Fatalf("run %d: the worker did not run between stops: %v", run, seen)
		}
		time.Sleep(200 * time.Millisecond)
		if v := ts.value("(i, total, beats)"); v != seen[2] {
			t.Fatalf("run %d: the worker ran while pdb was at its prompt: %s, then %s", run, seen[2], v)
		}
		check := func(cmd string, want string) {
			t.Helper()
			out := ts.must(cmd, stop)
			if strings.Contains(out, "diverged") {
				t.Fatalf("run %d: %s: the replay diverged from the log:\n%s", run, cmd, out)
			}
			if v := ts.value("(i, total, beats)"); v != want {
				t.Fatalf("run %d: after %s, (i, total, beats) is %s; recorded: %s (all stops: %v)", run, cmd, v, want, seen)
			}
		}
		check("fred-reverse-continue", seen[1])
		check("c", seen[2])
		check("fred-reverse-continue", seen[1])
		check("fred-reverse-continue", seen[0])
		check("c", seen[1])
		// Each replay ends where pdb talks with the person while the
		// worker may be between its calls (it once went on there, out of
		// its recorded order, about one replay in twelve): many of them.
		for k := 0; k < 2; k++ {
			check("fred-reverse-continue", seen[0])
			check("c", seen[1])
			check("c", seen[2])
			check("fred-reverse-continue", seen[1])
		}
		ts.Close()
	}
}

// TestPerlPromptNumber: perl's prompt shows the number of the person's
// next command, as perl -d does (DB<1>, DB<2>, ...; perl counts commands
// longer than one character): fred's own commands are not counted.
func TestPerlPromptNumber(t *testing.T) {
	ts, _ := perlSession(t, "steps.pl", "fork")
	if p := ts.Prompt(); p != "  DB<1> " {
		t.Fatalf("first prompt %q; perl -d shows \"  DB<1> \"", p)
	}
	ts.must("p 1", `1`)
	ts.must("fred-history", ``)
	ts.must("n", ``)
	ts.must("p 2", `2`)
	if p := ts.Prompt(); p != "  DB<3> " {
		t.Fatalf("prompt after p 1, n, p 2 (and fred's own) %q; perl -d shows \"  DB<3> \"", p)
	}
	if p := ts.Prompt(); p != "  DB<3> " {
		t.Fatalf("asking again changed it: %q", p)
	}
	// A fork copy runs the debugger now, in another process: perl5db
	// must not take it for a fork of the program's ("[pid=A->B]"), and
	// the person's history goes on there (the number, and !N).
	ts.must("fred-reverse-step", ``)
	if p := ts.Prompt(); p != "  DB<3> " {
		t.Fatalf("prompt after going back %q; perl -d shows \"  DB<3> \" after the same commands", p)
	}
	ts.must("!1", `(?m)^1\s*$`)
}

// TestPDBReverseWatchKeepsSpaces: the expression is the text the person
// typed, its blanks too (split into words and joined again, "a  b"
// became "a b", which s never is).
func TestPDBReverseWatchKeepsSpaces(t *testing.T) {
	ts, _ := pdbSession(t, "spaces.py", "fork")
	ts.must("b 5", `Breakpoint 1`)
	ts.must("c", `\(5\)<module>\(\)`)
	out := ts.must(`fred-reverse-watch  --from  1   s == "a  b"`, `'s == "a  b"' is False here; the next step makes it True`)
	if !strings.Contains(out, `-> s += w`) {
		t.Fatalf("reverse-watch did not land at the loop's body:\n%s", out)
	}
	if v := ts.value("s"); v != `'a  '` {
		t.Fatalf("landed with s = %s, want 'a  '", v)
	}
	ts.must("fred-reverse-watch --from x s", `"x" is not a snapshot number`)
}

// TestReverseWatchScope: the names of a reverse-watch are those of the
// frame it began in, wherever the search goes, as under gdb. In scope.py
// and scope.pl a helper has an 'items' of its own, always of length 10:
// evaluated in each moment's own frame, the search landed in it. Main's
// list is filled by a callee, where the search lands; fred says which
// frame the names are in, and how to select it (under perl, how to list
// its variables: the frame's lexicals are read with PadWalker).
func TestReverseWatchScope(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		script  []step
	}{
		{"pdb", pdbStart, "scope.py", []step{
			{cmd: "b 18", out: `Breakpoint 1`},
			{cmd: "c", out: `\(18\)main\(\)`},
			{cmd: "fred-reverse-watch len(items) == 10", out: `(?s)scope.py\(10\)add\(\)\r?\n-> xs.append\(v\)\r?\n` +
				`fred: 'len\(items\) == 10' is False here; the next step makes it True\r?\n` +
				`fred: the names in 'len\(items\) == 10' are main's, frame 1 here: 'up 1' selects it`,
				expr: "len(xs)", want: "9"},
			{cmd: "up 1", out: `\(16\)main\(\)`, expr: "i", want: "9"}, // main's i at the landing
		}},
		{"perl", perlStart, "scope.pl", []step{
			{cmd: "b 20"},
			{cmd: "c", out: `scope.pl:20\)`},
			{cmd: "fred-reverse-watch scalar(@items) == 10", out: `(?s)main::add\(.*scope.pl:11\):\s+(11:)?\s*push @\$xs, \$v;\r?\n` +
				`fred: 'scalar\(@items\) == 10' is "" here; the next step makes it 1\r?\n` +
				`fred: the names in 'scalar\(@items\) == 10' are main::main's, frame 1 here: 'y 1' lists its variables`,
				expr: "scalar(@$xs)", want: "9"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				tc.start(t, tc.fixture, backend).play(tc.script)
			})
		})
	}
}

// TestPDBTimeTurnsSaid: two threads that both compute pass CPython's lock
// by time, which the replay log gives back as the same turns but not the
// same work in each: going back, fred says so once (the values the worker
// computed may differ, or the replay may leave the log).
func TestPDBTimeTurnsSaid(t *testing.T) {
	const caveat = `took turns at the interpreter's lock by time, which a replay cannot repeat exactly`
	line := fixtureLineOf(t, "busy_worker.py", "stop")
	ts, _ := pdbSession(t, "busy_worker.py", "fork")
	ts.must(fmt.Sprintf("b %d", line), `Breakpoint 1`)
	ts.must("c", `busy_worker.py\(\d+\)<module>\(\)`)
	ts.must("c", `busy_worker.py\(\d+\)<module>\(\)`)
	// (the replay itself may leave the log here: the caveat comes first)
	out := ts.do("fred-reverse-continue")
	if strings.Count(out, caveat) != 1 {
		t.Fatalf("going back over threads that took turns by time, fred said:\n%s", out)
	}
	if out := ts.do("fred-reverse-continue"); strings.Contains(out, caveat) {
		t.Fatalf("said twice:\n%s", out)
	}
}

// TestPDBThreadsReverseWatch: workers that take a lock in turns while
// the main thread starts and joins them (mt_last.py). The search replays
// the main thread by steps and stops where the recorded `continue` went
// on: what pdb says there before its prompt (--Call--, --Return--) is the
// debugger's, not the program's (a write lets the GIL go at a new place:
// the replay left its recording at the first step). The watch lands, and
// a `continue` from there ends as the run did.
func TestPDBThreadsReverseWatch(t *testing.T) {
	ts, _ := pdbSession(t, "mt_last.py", "criu")
	ts.must(fmt.Sprintf("b %d", fixtureLineOf(t, "mt_last.py", "end")), `Breakpoint 1`)
	ts.must("c", `mt_last.py\(\d+\)<module>\(\)`)
	if v := ts.value("(level, moves)"); v != "(2, 122)" {
		t.Fatalf("at the end, (level, moves) is %s", v)
	}
	ts.must("fred-reverse-watch level < 2", `'level < 2' is True here; the next step makes it False`)
	ts.must("c", `mt_last.py\(\d+\)<module>\(\)`)
	if v := ts.value("(level, moves)"); v != "(2, 122)" {
		t.Fatalf("back at the end, (level, moves) is %s", v)
	}
}
