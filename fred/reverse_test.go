package fred

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
)

// seen is what a person saw at one stop: enough to tell moments apart.
type seen struct {
	loc   string
	depth int
	vars  string
}

func (ts *tsession) seen(vars ...string) seen {
	ts.t.Helper()
	loc, err := ts.location()
	if err != nil {
		ts.t.Fatal(err)
	}
	d, err := ts.depth()
	if err != nil {
		ts.t.Fatal(err)
	}
	var v []string
	for _, x := range vars {
		v = append(v, x+"="+ts.value(x))
	}
	return seen{loc: loc.String(), depth: d, vars: strings.Join(v, " ")}
}

// A forward walk records what each command showed; reverse commands must
// land exactly on those states. The table is generic over debuggers: the
// pdb and perl personalities reuse the same shape.
type revCase struct {
	cmd  string // forward command, or a fred- reverse command
	land string // for reverse commands: the label of the state to land on
	mark string // for forward commands: label the state after it
}

func runRevCases(t *testing.T, ts *tsession, vars []string, cases []revCase) {
	t.Helper()
	states := map[string]seen{}
	for _, c := range cases {
		out := ts.do(c.cmd)
		got := ts.seen(vars...)
		if c.mark != "" {
			states[c.mark] = got
		}
		if c.land == "" {
			continue
		}
		want, ok := states[c.land]
		if !ok {
			t.Fatalf("test bug: no state %q", c.land)
		}
		if got != want {
			t.Fatalf("%s should land on %s:\n got %+v\nwant %+v\noutput:\n%s", c.cmd, c.land, got, want, out)
		}
		if strings.HasPrefix(c.cmd, "fred-") && !regexp.MustCompile(`fred: 'fred-[a-z-]+' took \d+\.\d\d s \(\d+ restores, \d+ replayed commands\)`).MatchString(out) {
			t.Errorf("%s does not say what it took:\n%s", c.cmd, out)
		}
	}
}

// revTable is a family of reverse tests, one case a debugger: after
// setup, a forward walk marks stops and reverse commands land on them
// (runRevCases); then checks that follow it.
type revTable []struct {
	name    string
	start   starter
	fixture string
	setup   []step
	vars    []string // what tells the stops apart
	walk    []revCase
	then    []step
}

func (cases revTable) run(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				ts.play(tc.setup)
				runRevCases(t, ts, tc.vars, tc.walk)
				ts.play(tc.then)
			})
		})
	}
}

// noLibc keeps gdb's `step` out of libc: this machine's libc has line
// information, and a person who does not want to step through printf
// would do the same.
var noLibc = step{cmd: "skip -gfi ./*/*"}

// lldbNoLibc is the same for lldb.
var lldbNoLibc = step{cmd: "settings set target.process.thread.step-avoid-libraries libc.so.6"}

func TestReverseStepNextFinish(t *testing.T) {
	revTable{
		{name: "gdb", start: gdbStart, fixture: "steps",
			setup: []step{noLibc, {cmd: "break main", out: `Breakpoint 1`}},
			vars:  []string{"total"},
			walk: []revCase{
				{cmd: "run", mark: "S0"},  // main:22
				{cmd: "next", mark: "S1"}, // main:23
				{cmd: "step", mark: "S2"}, // square:8
				{cmd: "next", mark: "S3"}, // square:9
				{cmd: "next", mark: "S4"}, // square:10
				{cmd: "next", mark: "S5"}, // main:24
				{cmd: "next", mark: "S6"}, // main:22
				{cmd: "next", mark: "S7"}, // main:23
				{cmd: "fred-reverse-step", land: "S6"},
				{cmd: "next", land: "S7"}, // forward again agrees
				{cmd: "fred-rs", land: "S6"},
				{cmd: "fred-rs", land: "S5"},
				{cmd: "fred-rs", land: "S4"}, // back into the callee over its return
				{cmd: "fred-reverse-next", land: "S3"},
				{cmd: "fred-reverse-finish", land: "S1"},
				{cmd: "fred-rs", land: "S0"},
				{cmd: "fred-rs", land: "S0"}, // before the first snapshot: stays there
				{cmd: "next", land: "S1"},
				{cmd: "next", mark: "T1"},    // main:24, over the call
				{cmd: "fred-rs", land: "S4"}, // the callee's last statement
				{cmd: "next", land: "T1"},
				{cmd: "fred-rn", land: "S1"}, // over the call as one statement
				{cmd: "step", land: "S2"},
				{cmd: "fred-rn", land: "S1"}, // out of a just-entered frame to the call
				{cmd: "next 3", mark: "U3"},
				{cmd: "fred-rs 2", land: "S5"},
				{cmd: "fred-undo", land: "S1"},
			},
			then: []step{{cmd: "fred-rs 0", out: `takes one optional positive count`}}},
		{name: "lldb", start: lldbStart, fixture: "steps",
			setup: []step{lldbNoLibc, {cmd: "b main", out: `Breakpoint 1`}},
			vars:  []string{"total"},
			walk: []revCase{
				{cmd: "run", mark: "S0"},  // main:22
				{cmd: "next", mark: "S1"}, // main:23
				{cmd: "step", mark: "S2"}, // square:8
				{cmd: "next", mark: "S3"}, // square:9
				{cmd: "next", mark: "S4"}, // square:10
				{cmd: "next", mark: "S5"}, // main:24
				{cmd: "next", mark: "S6"}, // main:22
				{cmd: "next", mark: "S7"}, // main:23
				{cmd: "fred-reverse-step", land: "S6"},
				{cmd: "next", land: "S7"},
				{cmd: "fred-rs", land: "S6"},
				{cmd: "fred-rs", land: "S5"},
				{cmd: "fred-rs", land: "S4"},
				{cmd: "fred-reverse-next", land: "S3"},
				{cmd: "fred-reverse-finish", land: "S1"},
				{cmd: "fred-rs", land: "S0"},
				{cmd: "fred-rs", land: "S0"},
				{cmd: "next", land: "S1"},
				{cmd: "next", mark: "T1"},    // main:24, over the call
				{cmd: "fred-rs", land: "S4"}, // the callee's last statement
				// lldb's next out of a callee stops where the call
				// returns, inside line 23 (S5), as it did the first time.
				{cmd: "next", land: "S5"},
				{cmd: "next", land: "T1"},
				{cmd: "fred-rn", land: "S5"}, // the next that got here started there
				{cmd: "fred-rn", land: "S1"}, // over the call as one statement
				{cmd: "step", land: "S2"},
				{cmd: "fred-rn", land: "S1"}, // out of a just-entered frame to the call
				{cmd: "step", land: "S2"},
				{cmd: "finish", land: "S5"},
				{cmd: "fred-undo", land: "S2"},
				{cmd: "fred-reverse-finish", land: "S1"},
			},
			then: []step{{cmd: "fred-rs 0", out: `takes one optional positive count`}}},
		{name: "pdb", start: pdbStart, fixture: "steps.py",
			setup: []step{{cmd: "b main", out: `Breakpoint 1`}},
			vars:  []string{"total"},
			walk: []revCase{
				{cmd: "c", mark: "S0"},    // main:18
				{cmd: "next", mark: "S1"}, // main:19, total += square(i)
				{cmd: "step", mark: "S2"}, // --Call-- square:5
				{cmd: "next", mark: "S3"}, // square:6
				{cmd: "next", mark: "S4"}, // square:7
				{cmd: "next", mark: "S5"}, // --Return-- square:7
				{cmd: "next", mark: "S6"}, // main:20
				{cmd: "next", mark: "S7"}, // main:18
				{cmd: "next", mark: "S8"}, // main:19
				{cmd: "fred-reverse-step", land: "S7"},
				{cmd: "next", land: "S8"}, // forward again agrees
				{cmd: "fred-rs", land: "S7"},
				{cmd: "fred-rs", land: "S6"},
				{cmd: "fred-rs", land: "S5"}, // back into the callee over its return
				{cmd: "fred-rs", land: "S4"},
				{cmd: "fred-reverse-next", land: "S3"},
				{cmd: "fred-reverse-finish", land: "S1"},
				{cmd: "fred-rs", land: "S0"},
				{cmd: "next", land: "S1"},
				{cmd: "next", mark: "T1"},    // main:20, over the call
				{cmd: "fred-rs", land: "S5"}, // the callee's last stop
				{cmd: "next", land: "T1"},
				{cmd: "fred-rn", land: "S1"}, // over the call as one statement
				{cmd: "step", land: "S2"},
				{cmd: "fred-rn", land: "S1"},   // out of a just-entered frame to the call
				{cmd: "fred-rs 2", mark: "C0"}, // --Call-- main:16, inside the continue
				{cmd: "step", land: "S0"},
				{cmd: "fred-undo", land: "C0"},
				{cmd: "fred-undo", mark: "M25"}, // <module>:25, main()
				{cmd: "next", land: "S0"},       // the breakpoint stops the next
			},
			then: []step{
				{cmd: "fred-rs 0", out: `takes one optional positive count`},
				{cmd: "fred-history", out: regexp.QuoteMeta("you are here: main at steps.py:18, depth 2")},
			}},
		{name: "perl", start: perlStart, fixture: "steps.pl",
			vars: []string{"$total"},
			walk: []revCase{
				{cmd: "fred-list", mark: "START"}, // main:5
				{cmd: "n", mark: "S0"},            // main:19
				{cmd: "n", mark: "S1"},            // main:20, $total += square($i)
				{cmd: "s", mark: "S2"},            // square:8
				{cmd: "n", mark: "S3"},            // square:9
				{cmd: "n", mark: "S4"},            // square:10
				{cmd: "n", mark: "S5"},            // main:21
				{cmd: "n", mark: "S6"},            // main:20
				{cmd: "fred-reverse-step", land: "S5"},
				{cmd: "n", land: "S6"},
				{cmd: "fred-rs", land: "S5"},
				{cmd: "fred-rs", land: "S4"}, // back into the callee over its return
				{cmd: "fred-reverse-next", land: "S3"},
				{cmd: "fred-reverse-finish", land: "S1"},
				{cmd: "fred-rs", land: "S0"},
				{cmd: "n", land: "S1"},
				{cmd: "n", mark: "T1"},       // main:21, over the call
				{cmd: "fred-rs", land: "S4"}, // the callee's last statement
				{cmd: "n", land: "T1"},
				{cmd: "fred-rn", land: "S1"}, // over the call as one statement
				{cmd: "s", land: "S2"},
				{cmd: "fred-rn", land: "S1"}, // out of a just-entered sub to the call
				{cmd: "s", land: "S2"},
				{cmd: "r", land: "T1"}, // perl's r is gdb's finish
				{cmd: "fred-rs", land: "S4"},
				{cmd: "fred-undo", land: "S3"},
				{cmd: "fred-rf", land: "S1"},
				{cmd: "fred-rs 2", land: "START"},
			}},
	}.run(t)
}

// Breakpoint stops in a recursion, back and forth; then, after the
// program ended, going back works: to the last statement of main (under
// pdb, which restarted the program, the last stop with source: main's
// return).
func TestReverseContinueRecursionAndEnd(t *testing.T) {
	revTable{
		{name: "gdb", start: gdbStart, fixture: "steps",
			setup: []step{noLibc, {cmd: "break fact", out: `Breakpoint 1`}},
			vars:  []string{"n"},
			walk: []revCase{
				{cmd: "run", mark: "F5"},
				{cmd: "continue", mark: "F4"},
				{cmd: "continue", mark: "F3"},
				{cmd: "fred-reverse-continue", land: "F4"},
				{cmd: "fred-rc", land: "F5"},
				{cmd: "continue", land: "F4"},
				{cmd: "next", mark: "F4a"}, // fact:16, n=4
				{cmd: "step", mark: "F3"},
				{cmd: "fred-reverse-finish", land: "F4a"},
				{cmd: "fred-undo", land: "F4"},
			},
			then: []step{
				{cmd: "delete"},
				{cmd: "continue", out: `exited normally`},
				{cmd: "fred-reverse-step", out: `main \(\)\s+at .*steps.c:29`},
				{cmd: "fred-rn", out: `28\s+return 0;`},
				{cmd: "print f", out: `= 120`},
			}},
		{name: "lldb", start: lldbStart, fixture: "steps",
			setup: []step{lldbNoLibc, {cmd: "b fact", out: `Breakpoint 1`}},
			vars:  []string{"n"},
			walk: []revCase{
				{cmd: "run", mark: "F5"},
				{cmd: "c", mark: "F4"},
				{cmd: "c", mark: "F3"},
				{cmd: "fred-reverse-continue", land: "F4"},
				{cmd: "fred-rc", land: "F5"},
				{cmd: "c", land: "F4"},
				{cmd: "next", mark: "F4a"}, // fact:16, n=4
				{cmd: "step", mark: "F3"},
				{cmd: "fred-reverse-finish", land: "F4a"},
				{cmd: "fred-undo", land: "F4"},
			},
			then: []step{
				{cmd: "breakpoint delete 1"},
				{cmd: "c", out: `exited with status = 0`},
				{cmd: "fred-reverse-step", out: "steps`main at steps.c:29"},
				{cmd: "fred-rn", out: `-> 28\s+return 0;`},
				{cmd: "print f", out: `= 120`},
			}},
		{name: "pdb", start: pdbStart, fixture: "steps.py",
			setup: []step{{cmd: "b fact", out: `Breakpoint 1`}},
			vars:  []string{"n"},
			walk: []revCase{
				{cmd: "c", mark: "F5"},
				{cmd: "c", mark: "F4"},
				{cmd: "c", mark: "F3"},
				{cmd: "fred-reverse-continue", land: "F4"},
				{cmd: "fred-rc", land: "F5"},
				{cmd: "c", land: "F4"},
				{cmd: "next", mark: "F4a"}, // fact:13, n=4
				{cmd: "step", mark: "F3c"}, // --Call-- fact, n=3
				{cmd: "step", land: "F3"},
				{cmd: "fred-reverse-finish", land: "F4a"},
				{cmd: "fred-undo", land: "F4"},
			},
			then: []step{
				{cmd: "cl 1", out: `Deleted breakpoint 1`},
				{cmd: "c", out: `^fact=120\r?\nThe program finished and will be restarted`},
				{cmd: "fred-reverse-step", out: `^--Return--\r?\n> .*steps.py\(25\)<module>\(\)->None\r?\n-> main\(\)\r?\nfred: 'fred-reverse-step' took`},
				{cmd: "fred-rs", out: `^--Return--\r?\n> .*steps.py\(22\)main\(\)->None\r?\n`},
				{cmd: "fred-rn", out: `^> .*steps.py\(22\)main\(\)\r?\n-> print\("fact=%d" % f\)`},
				{cmd: "p f", out: `^120\r?\n$`},
				{cmd: "n", out: `^fact=120\r?\n--Return--\r?\n> .*\(22\)main\(\)->None`},
			}},
		{name: "perl", start: perlStart, fixture: "steps.pl",
			setup: []step{{cmd: "b 15"}},
			vars:  []string{"$n"},
			walk: []revCase{
				{cmd: "c", mark: "F5"},
				{cmd: "c", mark: "F4"},
				{cmd: "c", mark: "F3"},
				{cmd: "fred-reverse-continue", land: "F4"},
				{cmd: "fred-rc", land: "F5"},
				{cmd: "c", land: "F4"},
				{cmd: "n", mark: "F4a"}, // fact:16, n=4
				{cmd: "s", mark: "F3s"}, // fact:14, a new $n
				{cmd: "n", land: "F3"},
				{cmd: "fred-reverse-finish", land: "F4a"},
				{cmd: "fred-undo", land: "F4"},
			},
			then: []step{
				{cmd: "B *", out: `Deleting all breakpoints`},
				{cmd: "c", out: `(?s)fact=120\r?\nDebugged program terminated`},
				{cmd: "fred-reverse-step", out: `^main::\(.*steps.pl:24\):\r?\n24:\tprint "fact=\$f\\n";\r?\nfred: 'fred-reverse-step' took`},
				{cmd: "p $f", out: `^120\r?\n$`},
				{cmd: "fred-rn", out: `steps.pl:23\):`},
				{cmd: "n", out: `steps.pl:24\):`},
				{cmd: "c", out: `Debugged program terminated`},
			}},
	}.run(t)
}

// A crash: gdb's SIGSEGV, pdb's post-mortem (the program stopped at an
// uncaught exception), perl -d's report of a program that died (it has
// ended). Going back reaches the statement that failed, not run yet, with
// the values it failed on; and the one before it.
func TestReverseFromCrash(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		toCrash []step
		crash   string // what fred makes of the crash: "signal" (a stop), "end", or unchecked
		back    []step
	}{
		{"gdb", gdbStart, "crash",
			[]step{{cmd: "break main", out: `Breakpoint 1`}, {cmd: "run", out: `snapshot 1 taken`}, {cmd: "continue", out: `SIGSEGV`}},
			"",
			[]step{
				{cmd: "fred-reverse-step", out: `25\s+p->value = 42;`},
				{cmd: "print p", out: `= \(struct node \*\) 0x0`},
				{cmd: "fred-rs", out: `24\s+p = p->next->next->next;`},
				{cmd: "print p == &a", out: `= 1`},
			}},
		{"lldb", lldbStart, "crash",
			[]step{{cmd: "b main", out: `Breakpoint 1`}, {cmd: "run", out: `snapshot 1 taken`}, {cmd: "c", out: `stop reason = signal SIGSEGV`}},
			"signal",
			[]step{
				{cmd: "fred-reverse-step", out: `-> 25\s+p->value = 42;`},
				{cmd: "print p", out: `= NULL|= 0x0+\b`},
				{cmd: "fred-rs", out: `-> 24\s+p = p->next->next->next;`},
				{cmd: "print p == &a", out: `= true`},
			}},
		{"pdb", pdbStart, "crash.py",
			[]step{{cmd: "c", out: `(?s)AttributeError: 'NoneType' object has no attribute 'value'\r?\nUncaught exception. Entering post mortem debugging.*> .*crash.py\(13\)walk\(\)\r?\n-> p.value = 42`}},
			"signal",
			[]step{
				{cmd: "p p", out: `^None`},
				// Back from the post-mortem: before the statement that raised,
				// not on the exception's way up the stack.
				{cmd: "fred-reverse-step", out: `^> .*crash.py\(13\)walk\(\)\r?\n-> p.value = 42\r?\nfred: 'fred-reverse-step' took`},
				{cmd: "p p", out: `^None`},
				{cmd: "fred-rs", out: `\(12\)walk\(\)\r?\n-> p = p.next.next.next`},
				{cmd: "p p.value", out: `^1`},
				{cmd: "n", out: `\(13\)walk\(\)`},
				{cmd: "n", out: `^AttributeError: 'NoneType' object has no attribute 'value'\r?\n> .*\(13\)walk\(\)`},
				// Once in the program again, pdb's stops on that way are places
				// to step back to, as pdb stepped through them.
				{cmd: "n", out: `^--Return--\r?\n> .*\(13\)walk\(\)->None`},
				{cmd: "fred-rs", out: `^AttributeError: .*\r?\n> .*crash.py\(13\)walk\(\)\r?\n-> p.value = 42`},
			}},
		{"perl", perlStart, "crash.pl",
			[]step{{cmd: "c", out: `(?s)Can't call method "set" on an undefined value.*Debugged program terminated`}},
			"end",
			[]step{
				{cmd: "fred-reverse-step", out: `main::walk\(.*crash.pl:8\):\s+8:\s+\$p->set\(42\);`},
				{cmd: "p defined $p ? 1 : 0", out: `^0`},
				{cmd: "fred-rs", out: `crash.pl:7\):\s+7:\s+\$p = \$p->\{next\}`},
				{cmd: "p $p->{value}", out: `^1`},
				{cmd: "n", out: `crash.pl:8\)`},
				{cmd: "n", out: `Can't call method "set" on an undefined value`},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				ts.play(tc.toCrash)
				switch now := ts.Timeline.Now(); tc.crash {
				case "signal":
					if !ts.running || now.Stop != P.StopSignal {
						t.Fatalf("at the crash: running %v, stop %v", ts.running, now.Stop)
					}
				case "end":
					if !now.Ended {
						t.Fatalf("the program's death is not an end: %+v", now)
					}
				}
				ts.play(tc.back)
			})
		})
	}
}

func TestBranches(t *testing.T) { forBackends(t, testBranches) }

func testBranches(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.must("break square", `Breakpoint 1`)
	ts.must("run", `x=0`)
	ts.must("continue", `x=1`)
	ts.must("fred-branch one", `branch 'one' keeps 2 commands`)
	ts.must("fred-undo", `x=0`)
	ts.must("set var total = 77", ``)
	ts.must("continue", `i=0 total=77`)
	ts.must("fred-branch two", `keeps 3 commands`)
	ts.must("fred-switch one", `square \(x=1\)`)
	if v := ts.value("total"); v != "0" {
		t.Errorf("branch one has total=%s, want 0", v)
	}
	ts.must("fred-switch two", `square \(x=1\)`)
	if v := ts.value("total"); v != "77" {
		t.Errorf("branch two has total=%s, want 77 (the set var is replayed)", v)
	}
	ts.must("fred-switch three", `there is no branch 'three'`)
	out := ts.do("fred-list")
	if !strings.Contains(out, "branch one") || !strings.Contains(out, "branch two") {
		t.Errorf("fred-list does not show branches:\n%s", out)
	}
}

func TestReverseOverAdvanceAndUntil(t *testing.T) { forBackends(t, testReverseOverAdvanceAndUntil) }

func testReverseOverAdvanceAndUntil(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.do("skip -gfi ./*/*")
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `snapshot 1 taken`)
	ts.must("next", `23\s+total \+= square`)
	ts.must("advance 26", `main \(\)\s+at .*steps.c:26`)
	// The last statement before line 26 is the loop's last increment and
	// test, about to run with i == 4.
	ts.must("fred-reverse-step", `22\s+for \(i = 0; i < 5; i\+\+\)`)
	if v := ts.value("i"); v != "4" {
		t.Fatalf("reverse-step over advance landed with i=%s, want 4", v)
	}
	ts.must("next", `26\s+int f = fact\(5\);`)
	ts.must("fred-reverse-step", `22\s+for`)
	ts.must("until", `26\s+int f`)
	ts.must("fred-reverse-next", `22\s+for`)
	if v := ts.value("i"); v != "4" {
		t.Fatalf("reverse-next over until landed with i=%s, want 4", v)
	}
}

// The rr session: a plain `run` whose first stop is a crash. Snapshot 1 is
// taken at main's first line, so everything before the crash can be
// revisited: reverse-step to the start of the faulting statement, back to
// the node whose next pointer is bad, and reverse-watch that pointer by its
// address to the store that wrote it last (the end of a rename that copied
// past the node's name field).
func TestReverseFromCrashWithoutBreakpoint(t *testing.T) {
	forBackends(t, testReverseFromCrashWithoutBreakpoint)
}

func testReverseFromCrashWithoutBreakpoint(t *testing.T, backend string) {
	ts := gdbSession(t, "crash_list", backend)
	ts.must("run", `(?s)snapshot 1 taken at the program's start, main at crash_list.c:\d+.*SIGSEGV.*total`)
	crash := fixtureLineOf(t, "crash_list.c", "crash")
	ts.must("fred-reverse-step", fmt.Sprintf(`(?m)^%d\s+s \+= p->value;`, crash))
	bad := ts.value("p")
	if ts.value("p == 0") != "0" {
		t.Fatalf("p is %s at the faulting statement", bad)
	}
	ts.must("fred-reverse-step", `for \(p = head; p != NULL; p = p->next\)`)
	if got := ts.value("p->next"); got != bad {
		t.Fatalf("the node before has next = %s, want the bad pointer %s", got, bad)
	}
	addr := strings.Fields(ts.value("&p->next"))
	field := addr[len(addr)-1]
	ts.must("fred-reverse-watch *(struct node **)"+field, `(?s)rename_node.*n->name\[i\] = '\\0';.*is 0x[0-9a-f]+ here; the next step makes it `)
	if i := ts.value("i"); i != "13" {
		t.Fatalf("landed with i = %s, want 13: the NUL after \"a longer name\"", i)
	}
	ts.must("next", ``)
	if got := ts.value("*(struct node **)" + field); got != bad {
		t.Fatalf("one step after the landing the field is %s, want %s", got, bad)
	}
}

// A crash before main, in a static object's constructor: the run starts at
// the program's entry point, so the crash has its run behind it as one
// after main has.
func TestReverseFromCrashInConstructor(t *testing.T) {
	forBackends(t, testReverseFromCrashInConstructor)
}

func testReverseFromCrashInConstructor(t *testing.T, backend string) {
	ts := gdbSession(t, "ctor_crash", backend)
	crash := fixtureLineOf(t, "ctor_crash.cpp", "crash")
	ts.must("run", `(?s)SIGSEGV.*Registry::Registry.*fred: snapshot 0 taken at the program's start, _start at 0x[0-9a-f]+, before its constructors`)
	ts.must("fred-reverse-step", fmt.Sprintf(`(?m)^%d\s+total \+= p->value;`, crash))
	// The steps from the entry point (no source) replay as they ran: the
	// last change of the sum is the previous node's.
	ts.must("fred-reverse-watch total", fmt.Sprintf(`(?s)%d\s+total \+= p->value;.*'total' is 24 here; the next step makes it 30`, crash))
	if v := ts.value("p->value"); v != "6" {
		t.Fatalf("the sum's last change adds p->value = %s, want 6", v)
	}
	ts.must("next", `for \(Node`)
	ts.must("next", fmt.Sprintf(`(?m)^%d\s+total \+= p->value;`, crash))
	ts.must("next", fmt.Sprintf(`(?s)SIGSEGV.*%d\s+total \+= p->value;`, crash))
	ts.must("fred-reverse-step", fmt.Sprintf(`(?m)^%d\s+total \+= p->value;`, crash))
	bad := ts.value("p")
	if ts.value("p == 0") != "false" {
		t.Fatalf("p is %s at the faulting statement", bad)
	}
	ts.must("fred-reverse-step", `for \(Node \*p = head; p != nullptr; p = p->next\)`)
	if got := ts.value("p->next"); got != bad {
		t.Fatalf("the node before has next = %s, want the bad pointer %s", got, bad)
	}
	field := regexp.MustCompile(`0x[0-9a-f]+`).FindString(ts.value("&p->next")) // then <registry+N>
	ts.must("fred-reverse-watch *(Node **)"+field, `(?s)rename_node.*n->name\[i\] = '\\0';.*is 0x[0-9a-f]+ here; the next step makes it `)
	if i := ts.value("i"); i != "13" {
		t.Fatalf("landed with i = %s, want 13: the NUL after \"a longer name\"", i)
	}
	ts.must("next", ``)
	if got := ts.value("*(Node **)" + field); got != bad {
		t.Fatalf("one step after the landing the field is %s, want %s", got, bad)
	}
	// The start is before the constructors: main has not run yet there.
	ts.must("fred-restart 0", `_start`)
	if v := ts.value("registry.total"); v != "0" {
		t.Fatalf("at the program's entry registry.total is %s, want 0", v)
	}
}

// A run whose first stop is in main has its start-up behind main's first
// line: the reverse commands stop there and say where it is, and a
// reverse-watch of a value a constructor gave finds its last change there.
func TestReverseWatchIntoStartUp(t *testing.T) {
	forBackends(t, testReverseWatchIntoStartUp)
}

func testReverseWatchIntoStartUp(t *testing.T, backend string) {
	ts := gdbSession(t, "ctor_sum", backend)
	first := fixtureLineOf(t, "ctor_sum.cpp", "first")
	sum := fixtureLineOf(t, "ctor_sum.cpp", "sum")
	ts.do(fmt.Sprintf("break %d", fixtureLineOf(t, "ctor_sum.cpp", "end")))
	ts.must("run", `(?s)fred: snapshot 1 taken at the program's start, main at ctor_sum.cpp:\d+ \(.*\); snapshot 0 is before its constructors, at _start.*Breakpoint 1, main`)
	ts.must("fred-history", `(?s)\(0\) snapshot 0, the start
?
\s+\|  inside 'run': the start-up to main
?
\s+\(1\) snapshot 1
?
\s+\|  run
?
`)
	ts.must("fred-reverse-watch uses", `'uses' is 2 here; the next step makes it 3`)
	// The sum is the same from main's first line on: its last change
	// lies in the constructor.
	ts.must("fred-reverse-watch table.sum", fmt.Sprintf(`(?s)Table::Table.*%d\s+sum \+= values\[i\];.*'table.sum' is 91 here; the next step makes it 140`, sum))
	if v := ts.value("i"); v != "7" {
		t.Fatalf("the sum's last change is at i = %s, want 7", v)
	}
	// Snapshot 1 is off this line now, and said for what it is.
	ts.must("fred-history", `\|\\_ main's first line: inside 'run': the start-up to main, \[snapshot 1\]`)
	ts.must("next", ``)
	if v := ts.value("table.sum"); v != "140" {
		t.Fatalf("one step after the landing the sum is %s, want 140", v)
	}
	// The reverse commands stop at main's first line.
	ts.must("fred-restart 1", fmt.Sprintf(`(?m)^%d\s+int uses = 0;`, first))
	ts.must("fred-reverse-step", `already at main's first line, where the reverse commands stop: before it lies the program's start-up \(its constructors\), snapshot 0; 'fred-restart 0' goes there`)
	ts.must("fred-restart 0", `_start`)
	if v := ts.value("table.sum"); v != "0" {
		t.Fatalf("at the program's entry the sum is %s, want 0", v)
	}
	// A value main's first line already had, that the start-up did not
	// give either: nothing to find, and the start-up was looked at.
	ts.must("fred-restart 1", `int uses = 0;`)
	ts.must("next", ``)
	ts.must("fred-reverse-watch sizeof(table)", `'sizeof\(table\)' is 36 both at the start of the search \(main's first line, at .*\) and now, and at the \d+ moments? fred looked at in between: no change to find`)
	// Memory fred cannot read at the entry point (a pointer a call
	// before main sets) is another value: the last change is the store.
	out := ts.must("fred-reverse-watch heap->sum", `'heap->sum' is .* here; the next step makes it 140`)
	if v := ts.value("heap == 0"); v != "true" {
		t.Fatalf("at the landing heap == 0 is %s, want true (before the store):\n%s", v, out)
	}
	ts.must("step", ``)
	if v := ts.value("heap->sum"); v != "140" {
		t.Fatalf("one step after the landing heap->sum is %s, want 140", v)
	}
}

// gdb's `start` is its temporary breakpoint at main and a run: under fred
// the run goes by the entry point too, so the start-up has its snapshot.
func TestStartHasItsStartUp(t *testing.T) {
	ts := gdbSession(t, "ctor_sum", "fork")
	ts.must("start", `(?s)Temporary breakpoint 1 at 0x[0-9a-f]+: file .*ctor_sum.cpp, line \d+\..*Temporary breakpoint 1, main \(\).*snapshot 1 taken at the program's start, main at ctor_sum.cpp:\d+ .*snapshot 0 is before its constructors`)
	ts.must("info breakpoints", `No breakpoints or watchpoints`)
	ts.must("fred-reverse-step", `already at main's first line`)
	ts.must("fred-restart 0", `_start`)
	if v := ts.value("table.sum"); v != "0" {
		t.Fatalf("at the program's entry the sum is %s, want 0", v)
	}
}

// fixtureLineOf finds the line of testdata/FILE marked "LINE:name".
func fixtureLineOf(t *testing.T, file, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.Root(), "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`LINE:` + regexp.QuoteMeta(name) + `\b`)
	for i, l := range strings.Split(string(b), "\n") {
		if re.MatchString(l) {
			return i + 1
		}
	}
	t.Fatalf("%s has no LINE:%s", file, name)
	return 0
}

// A C++ program whose only breakpoint is in a catch block, hit once the
// book holds 15,000 orders: behind that first stop lies the whole run.
// Back to the throw, out to the call, and reverse-watch of a local of
// main's, evaluated in main's frame as a watchpoint is, down to the store
// inside the library's map that made the book 15,000 orders long.
func TestReverseFromCatchBlock(t *testing.T) {
	ts := gdbSession(t, "catch", "criu")
	catch := fixtureLineOf(t, "catch.cpp", "catch")
	ts.do(fmt.Sprintf("break %d", catch))
	ts.must("run", fmt.Sprintf(`Breakpoint 1, main \(\)\s+at .*catch.cpp:%d`, catch))
	if v := ts.value("book.size()"); v != "15000" {
		t.Fatalf("book.size() is %s in the catch block, want 15000", v)
	}
	ts.must("fred-reverse-step", `(?s)add \(book=.*id=15001, qty=0\).*throw std::invalid_argument`)
	ts.must("fred-reverse-finish", `(?s)main \(\)\s+at .*catch.cpp:\d+\r?\n\d+\s+add\(book, i,`)
	if v := ts.value("i"); v != "15001" {
		t.Fatalf("reverse-finish: i is %s, want 15001", v)
	}
	ts.must("continue", fmt.Sprintf(`Breakpoint 1, main \(\)\s+at .*catch.cpp:%d`, catch))
	out := ts.must("fred-reverse-watch book.size() == 15000",
		`(?s)_M_node_count.*'book.size\(\) == 15000' is false here; the next step makes it true\r?\nfred: the names in 'book.size\(\) == 15000' are main's, frame (\d+) here: 'frame (\d+)' selects it`)
	level := regexp.MustCompile(`'frame (\d+)' selects it`).FindStringSubmatch(out)[1]
	ts.must("frame "+level, `main \(\)\s+at .*catch.cpp`)
	if v := ts.value("book.size()"); v != "14999" {
		t.Fatalf("at the landing, book.size() is %s, want 14999", v)
	}
	if v := ts.value("i"); v != "15000" {
		t.Fatalf("at the landing, i is %s, want 15000", v)
	}
	ts.do("frame 0")
	ts.do("step")
	ts.must("frame "+level, `main \(\)\s+at .*catch.cpp`)
	if v := ts.value("book.size()"); v != "15000" {
		t.Fatalf("one step after the landing, book.size() is %s, want 15000", v)
	}
}

// Every stop condition the person had is replayed as it was: a
// watchpoint's stops are reverse-continue's stops, also once the
// watchpoint is deleted; a conditional tbreak (gone once hit), a
// conditional breakpoint deleted since, and a syscall catchpoint too.
func TestStopConditionsReplayed(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		script  []step
	}{
		{"gdb", gdbStart, "watch", []step{
			{cmd: "break main"},
			{cmd: "run", out: `Breakpoint 1, main`},
			{cmd: "watch sum", out: `atchpoint 2: sum`},
			{cmd: "continue", out: `(?s)Old value = \d+\r?\nNew value = 7`},
			{cmd: "continue", out: `(?s)Old value = \d+\r?\nNew value = 8`},
			{cmd: "continue", out: `(?s)Old value = \d+\r?\nNew value = 16`},
			{cmd: "fred-reverse-continue", out: `update \(i=2\)`, expr: "sum", want: "8"}, // over a watchpoint stop
			{cmd: "fred-reverse-continue", out: `update \(i=1\)`, expr: "sum", want: "7"},
			{cmd: "continue", out: `(?s)Old value = 7\r?\nNew value = 8`},
			{cmd: "delete 2"},
			{cmd: "tbreak update if i == 5", out: `Temporary breakpoint 3`},
			{cmd: "continue", out: `Temporary breakpoint 3, update \(i=5\)`},
			{cmd: "catch syscall write", out: `Catchpoint 4`},
			{cmd: "continue", out: `Catchpoint 4 \(call to syscall write\)`},
			{cmd: "fred-reverse-continue", out: `update \(i=5\)\s+at .*watch.c:9`},
			// Back over the tbreak's stop to the watchpoint's, which is
			// deleted: fred makes it again for the replay.
			{cmd: "fred-reverse-continue", out: `update \(i=2\)`, expr: "sum", want: "8"},
			// Forward again: the tbreak is gone, the catchpoint stops.
			{cmd: "continue", out: `Catchpoint 4 \(call to syscall write\)`, expr: "sum", want: "-998208"},
		}},
		{"pdb", pdbStart, "watch.py", []step{
			{cmd: "break 12, i == 3", out: `Breakpoint 1 at`},
			{cmd: "tbreak 12, i == 5", out: `Breakpoint 2 at`},
			{cmd: "c", out: `\(12\)update\(\)`},
			{cmd: "c", out: `(?s)Deleted breakpoint 2.*\(12\)update\(\)`},
			{cmd: "clear 1", out: `Deleted breakpoint 1`},
			{cmd: "break 18", out: `Breakpoint 3 at`},
			{cmd: "c", out: `\(18\)main\(\)`},
			{cmd: "fred-reverse-continue", out: `\(12\)update\(\)`},
			{cmd: "p i", out: `^5`},
			{cmd: "fred-reverse-continue", out: `\(12\)update\(\)`},
			{cmd: "p i", out: `^3`},
			{cmd: "c", out: `\(18\)main\(\)`},
			{cmd: "p i", out: `^299`},
		}},
		{"perl", perlStart, "watch.pl", []step{
			{cmd: "b 13 $i == 5"},
			{cmd: "c", out: `watch.pl:13\)`},
			{cmd: "B 13"},
			{cmd: "b 17 $i == 8"},
			{cmd: "c", out: `watch.pl:17\)`},
			{cmd: "p $i", out: `^8`},
			{cmd: "fred-reverse-continue", out: `watch.pl:13\)`},
			{cmd: "p $i", out: `^5`},
			{cmd: "c", out: `watch.pl:17\)`},
			{cmd: "p $i", out: `^8`},
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

// TestReverseContinueWithoutDebugInfo: in a program built without debug
// information (as distributions ship them), a stop at a breakpoint on a
// function is a breakpoint stop: fred-reverse-continue lands at the
// previous one, not at the first snapshot.
func TestReverseContinueWithoutDebugInfo(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts := gdbSessionOf(t, testutil.FixtureNoDebug(t, "steps"), backend, t.TempDir())
		ts.must("break fact", `Breakpoint 1`)
		at := func(cmd string, n int) {
			t.Helper()
			out := ts.must(cmd, `in fact \(\)`)
			if strings.Contains(out, "no breakpoint was hit") {
				t.Fatalf("%s: the breakpoint stops were not seen:\n%s", cmd, out)
			}
			// fact(n): the argument is in rdi at the function's first instruction.
			if v := ts.value("$rdi"); v != fmt.Sprint(n) {
				t.Fatalf("after %s, fact's argument is %s; want %d", cmd, v, n)
			}
		}
		at("run", 5)
		at("continue", 4)
		at("continue", 3)
		at("fred-reverse-continue", 4)
		at("fred-reverse-continue", 5)
		at("continue", 4)
	})
}

// TestReverseStepiNexti: fred-reverse-stepi goes back one instruction,
// exactly (pc and stack as the forward stepis saw them, into a call that
// returned: its ret), and fred-reverse-nexti takes a call as one
// instruction; in a program without debug information, where that is the
// only grain.
func TestReverseStepiNexti(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts := gdbSessionOf(t, testutil.FixtureNoDebug(t, "steps"), backend, t.TempDir())
		ts.must("break fact", `Breakpoint 1`)
		ts.must("run", `in fact \(\)`)
		ts.must("delete", ``)
		where := func() string {
			t.Helper()
			return ts.value("$pc") + " sp " + ts.value("$sp")
		}
		// Forward to the recursive call and a few instructions into it.
		var seen []string
		call := ""
		for i := 0; i < 40 && len(seen) < 14; i++ {
			if call != "" || len(seen) > 0 {
				seen = append(seen, where())
			}
			if strings.Contains(ts.do("x/i $pc"), "call") && call == "" {
				call = ts.value("$pc")
				seen = append(seen, where())
			}
			ts.do("stepi")
		}
		if call == "" {
			t.Fatal("no call instruction in fact")
		}
		now := where()
		for i := len(seen) - 1; i >= 0; i-- {
			ts.must("fred-reverse-stepi", ``)
			if got := where(); got != seen[i] {
				t.Fatalf("reverse-stepi %d from %s: at %s; the stepis went through %s", len(seen)-i, now, got, seen[i])
			}
		}
		// At the call: over it, and back.
		ts.must("nexti", ``)
		after := where()
		ts.must("fred-reverse-stepi", ``)
		if !strings.Contains(ts.do("x/i $pc"), "ret") {
			t.Fatalf("reverse-stepi after a nexti over a call is not at the callee's ret:\n%s", ts.do("x/i $pc"))
		}
		ts.must("stepi", ``)
		if got := where(); got != after {
			t.Fatalf("stepi from the ret: %s; after the call: %s", got, after)
		}
		ts.must("fred-reverse-nexti", ``)
		if got := ts.value("$pc"); got != call {
			t.Fatalf("reverse-nexti after the call: pc %s; the call is at %s", got, call)
		}
		ts.must("fred-reverse-stepi", ``)
		if got := where(); got == seen[0] {
			t.Fatalf("reverse-stepi from the call did not move: %s", got)
		}
		// A function called from a loop stops at the same pc and stack
		// pointer each time: one instruction back from the second stop is
		// the one before it, not the first stop.
		ts.must("fred-restart 1", `main`)
		ts.must("break square", `Breakpoint`)
		ts.must("continue", `in square \(\)`)
		ts.must("continue", `in square \(\)`)
		second, x := where(), ts.value("$edi")
		ts.must("fred-reverse-stepi", ``)
		if got := where(); got == second || ts.value("$edi") != x {
			t.Fatalf("reverse-stepi from square's second stop (%s, edi %s) is at %s, edi %s: not one instruction back", second, x, got, ts.value("$edi"))
		}
		ts.must("stepi", ``)
		if got := where(); got != second {
			t.Fatalf("stepi forward again: %s; the second stop was %s", got, second)
		}
	})
}

// A breakpoint with two locations (a function inlined twice, as in an
// optimised build): gdb names the one hit ("Breakpoint 1.2, "), and those
// are breakpoint stops. fred took them for none, and reverse-continue went
// to the first snapshot, saying no breakpoint was hit (Debian's gzip,
// `break updcrc`).
func TestReverseContinueSeveralLocations(t *testing.T) {
	ts := gdbStart(t, "inlined", "auto")
	ts.play([]step{
		{cmd: "break bump", out: `2 locations`},
		{cmd: "run", out: `Breakpoint 1\.1, `, expr: "*x", want: "0"},
		{cmd: "continue", out: `Breakpoint 1\.2, `, expr: "*x", want: "1"},
		{cmd: "continue", out: `Breakpoint 1\.1, `, expr: "*x", want: "11"},
		{cmd: "fred-reverse-continue", out: `bump`, not: "no breakpoint", expr: "*x", want: "1"},
		{cmd: "fred-reverse-continue", out: `bump`, not: "no breakpoint", expr: "*x", want: "0"},
		{cmd: "continue", out: `Breakpoint 1\.2, `, expr: "*x", want: "1"},
	})
}

// A breakpoint inside a call that a long loop in its caller precedes (as
// gzip's fill_window rehashes before read_buf reaches updcrc): the
// statement before the stop is the caller's call of it, after the loop.
// fred walked the loop statement by statement (600,000 of them: minutes,
// then "a call covers more than 100000 statements"); now the continue to
// the call's return, stopped by that breakpoint, is divided like any
// continue.
func TestReverseStepAfterLongLoopInCall(t *testing.T) {
	ts := gdbStart(t, "call_after_loop", "auto")
	ts.play([]step{
		{cmd: "break leaf", out: `Breakpoint 1 at`},
		{cmd: "run", out: `Breakpoint 1, leaf \(v=150000\)`},
		{cmd: "continue", out: `Breakpoint 1, leaf \(v=450000\)`},
		{cmd: "fred-reverse-step", out: `fill \(round=2\) at .*call_after_loop.c:22`, expr: "i", want: "300000"},
		{expr: "acc", want: "450000"},
		{cmd: "next", out: `Breakpoint 1, leaf \(v=450000\)`},
	})
}

// Going back over a long call (gzip's ct_init fills its tables, calling
// bi_reverse for each code): reverse-next over the call, and
// reverse-finish after a next over one, land on the call at once. fred
// went into the call and walked back out of it statement by statement,
// each statement's moment replayed from the run's snapshot: minutes on
// gzip (`break zip.c:76`, `run`, `next`, `fred-reverse-next`), more than
// five with no source to stop at (the reverse commands go on back over
// code whose source is not there), until the session was stopped from
// outside, which read as "replay diverged: expected to be at ct_init at
// trees.c:404 ..., but the program is at the end of the program".
func TestReverseOverLongCall(t *testing.T) {
	ts := gdbStart(t, "next_over_init", "auto")
	cheap := func(cmd, out string) {
		t.Helper()
		got := ts.must(cmd, out)
		m := regexp.MustCompile(`\((\d+) restores, (\d+) replayed commands\)`).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("%s does not say what it took:\n%s", cmd, got)
		}
		if n, _ := strconv.Atoi(m[2]); n > 20 {
			t.Errorf("%s replayed %s commands: a walk through the call\n%s", cmd, m[2], got)
		}
	}
	ts.play([]step{
		{cmd: "break next_over_init.c:42", out: `Breakpoint 1 at`},
		{cmd: "run", out: `Breakpoint 1, main \(\)`},
		{cmd: "next", out: `43`, expr: "done", want: "1"},
	})
	cheap("fred-reverse-next", `main \(\) at .*next_over_init.c:42`)
	ts.play([]step{
		{expr: "ready", want: "0"},
		{cmd: "step", out: `init \(\) at .*next_over_init.c:33`},
		{cmd: "next", out: `34`},
		{cmd: "next", out: `35`, expr: "table[299]", want: "26"},
	})
	cheap("fred-reverse-finish", `main \(\) at .*next_over_init.c:42`)
	ts.play([]step{
		{expr: "ready", want: "0"},
		{cmd: "next", out: `43`, expr: "done", want: "1"},
	})
}
