package fred

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
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

func TestReverseStepNextFinish(t *testing.T) { forBackends(t, testReverseStepNextFinish) }

func testReverseStepNextFinish(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	// This machine's libc has line information: keep `step` out of it, as
	// a person who does not want to step through printf would.
	ts.do("skip -gfi ./*/*")
	ts.must("break main", `Breakpoint 1`)
	runRevCases(t, ts, []string{"total"}, []revCase{
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
	})
	ts.must("fred-rs 0", `takes one optional positive count`)
}

func TestReverseContinueRecursionAndExit(t *testing.T) {
	forBackends(t, testReverseContinueRecursionAndExit)
}

func testReverseContinueRecursionAndExit(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.do("skip -gfi ./*/*")
	ts.must("break fact", `Breakpoint 1`)
	runRevCases(t, ts, []string{"n"}, []revCase{
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
	})
	// After the program ended, going back works: the last statement of main.
	ts.must("delete", ``)
	ts.must("continue", `exited normally`)
	out := ts.do("fred-reverse-step")
	if !regexp.MustCompile(`main \(\) at .*steps.c:29`).MatchString(out) {
		t.Fatalf("reverse-step from the end:\n%s", out)
	}
	ts.must("fred-rn", `28\s+return 0;`)
	ts.must("print f", `= 120`)
}

func TestReverseFromCrash(t *testing.T) { forBackends(t, testReverseFromCrash) }

func testReverseFromCrash(t *testing.T, backend string) {
	ts := gdbSession(t, "crash", backend)
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `snapshot 1 taken`)
	ts.must("continue", `SIGSEGV`)
	ts.must("fred-reverse-step", `25\s+p->value = 42;`)
	ts.must("print p", `= \(struct node \*\) 0x0`)
	ts.must("fred-rs", `24\s+p = p->next->next->next;`)
	ts.must("print p == &a", `= 1`)
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
	ts.must("advance 26", `main \(\) at .*steps.c:26`)
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

// Every stop condition the person had is replayed: a watchpoint's stops
// are reverse-continue's stops, also once the watchpoint is deleted; a
// conditional tbreak (gone once hit) and a syscall catchpoint too.
func TestStopConditionsReplayed(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts := gdbSession(t, "watch", backend)
		ts.do("break main")
		ts.must("run", `Breakpoint 1, main`)
		ts.must("watch sum", `atchpoint 2: sum`)
		for _, want := range []string{"7", "8", "16"} {
			ts.must("continue", `(?s)Old value = \d+\r?\nNew value = `+want)
		}
		ts.must("fred-reverse-continue", `update \(i=2\)`)
		if v := ts.value("sum"); v != "8" {
			t.Fatalf("reverse-continue over a watchpoint stop: sum = %s, want 8", v)
		}
		ts.must("fred-reverse-continue", `update \(i=1\)`)
		if v := ts.value("sum"); v != "7" {
			t.Fatalf("second reverse-continue: sum = %s, want 7", v)
		}
		ts.must("continue", `(?s)Old value = 7\r?\nNew value = 8`)
		ts.do("delete 2")
		ts.must("tbreak update if i == 5", `Temporary breakpoint 3`)
		ts.must("continue", `Temporary breakpoint 3, update \(i=5\)`)
		ts.must("catch syscall write", `Catchpoint 4`)
		ts.must("continue", `Catchpoint 4 \(call to syscall write\)`)
		ts.must("fred-reverse-continue", `update \(i=5\)\s+at .*watch.c:9`)
		// Back over the tbreak's stop to the watchpoint's, which is
		// deleted: fred makes it again for the replay.
		ts.must("fred-reverse-continue", `update \(i=2\)`)
		if v := ts.value("sum"); v != "8" {
			t.Fatalf("reverse-continue to a deleted watchpoint's stop: sum = %s, want 8", v)
		}
		// Forward again: the tbreak is gone, the catchpoint stops.
		ts.must("continue", `Catchpoint 4 \(call to syscall write\)`)
		if v := ts.value("sum"); v != "-998208" {
			t.Fatalf("at the catchpoint again: sum = %s", v)
		}
	})
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
