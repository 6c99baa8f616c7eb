package fred

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReverseWatch: the same search in each debugger, on each backend. A
// loop adds 300 values to a total; the 277th makes it negative. From a
// stop after the loop, fred-reverse-watch of the invariant lands before
// that addition, says what it found and what it cost; one step from there
// breaks the invariant. An expression with the same value at both ends
// has no change to find; one that cannot be evaluated gets the debugger's
// message, and the person stays where they were and can go on.
func TestReverseWatch(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		toEnd   []step // commands to the stop after the loop
		expr    string // the invariant
		no, yes string // its values
		landed  string // where the search lands
		at      [2]string
		step    step   // one step from there
		same    string // the same value at both ends, and what fred says of it
		sameSaid,
		bad, badSaid string // cannot be evaluated, and what the debugger says
		where step // where the person is after the bad one
		goOn  step // on to the end
		// The history and the list say what the person did and what fred
		// did inside it in the person's words (these lines), and the
		// search's snapshots on one line; none of fred's internal command
		// names.
		inside, listed string
		more           []step
	}{
		{name: "gdb", start: gdbStart, fixture: "watch",
			toEnd: []step{noLibc,
				{cmd: "fred-reverse-watch sum >= 0", out: `needs a snapshot of this run`},
				{cmd: "break main", out: `Breakpoint 1`}, {cmd: "run", out: `snapshot 1 taken`}, {cmd: "break 21", out: `Breakpoint 2`}, {cmd: "continue", out: `Breakpoint 2, main`}},
			expr: "sum >= 0", no: "0", yes: "1",
			landed: `update \(i=277\)\s+at .*watch.c:13`, at: [2]string{"i", "277"},
			step: step{cmd: "step", out: `14\s+}`},
			same: "data[0] == 0", sameSaid: `is 1 both at the start of the search .* and now`,
			bad: "nosuchvar + 1", badSaid: `No symbol "nosuchvar"`,
			where: step{cmd: "frame", out: `update \(i=277\)\s+at .*watch.c:14`},
			goOn:  step{cmd: "continue", out: `Breakpoint 2, main`},
			// Which division fred takes depends on how long the loop ran
			// (under load it may stop by run time first): either is said
			// in the person's words.
			inside: `(?m)^   \|  inside 'continue': .*(\d+ pass(es)? of main at watch.c:\d+|\d+ stops? by run time).*$`, listed: `inside 'continue': `},
		{name: "lldb", start: lldbStart, fixture: "watch",
			toEnd: []step{lldbNoLibc,
				{cmd: "fred-reverse-watch sum >= 0", out: `needs a snapshot of this run`},
				{cmd: "b main", out: `Breakpoint 1`}, {cmd: "run", out: `snapshot 1 taken`}, {cmd: "b watch.c:21", out: `Breakpoint 2`}, {cmd: "c", out: `stop reason = breakpoint 2`}},
			expr: "sum >= 0", no: "false", yes: "true",
			landed: "watch`update\\(i=277\\) at watch.c:13", at: [2]string{"i", "277"},
			step: step{cmd: "step", out: `watch.c:14`},
			same: "data[0] == 0", sameSaid: `is true both at the start of the search .* and now`,
			bad: "nosuchvar + 1", badSaid: `use of undeclared identifier 'nosuchvar'`,
			where: step{cmd: "frame select", out: "watch`update\\(i=277\\) at watch.c:14"},
			goOn:  step{cmd: "c", out: `stop reason = breakpoint 2`},
			// Which division fred takes depends on how long the loop ran.
			inside: `(?m)^   \|  inside 'continue': .*(\d+ pass(es)? of main at watch.c:\d+|\d+ stops? by run time|next \d+).*$`, listed: `inside 'continue': `},
		{name: "pdb", start: pdbStart, fixture: "watch.py",
			toEnd: []step{{cmd: "b 18", out: `Breakpoint 1`}, {cmd: "c", out: `\(18\)main\(\)`}},
			expr:  "total >= 0", no: "False", yes: "True",
			landed: `> .*watch.py\(12\)update\(\)\r?\n-> total \+= v`, at: [2]string{"i", "277"},
			step: step{cmd: "step", out: `--Return--`},
			same: "__name__", sameSaid: `'__name__' is '__main__' both at the start of the search \(the start\) and now`,
			bad: "nosuchvar + 1", badSaid: `cannot evaluate the expression at .*: \(raises NameError: name 'nosuchvar' is not defined\)`,
			where: step{cmd: "where", out: `> .*\(12\)update\(\)->None`},
			goOn:  step{cmd: "c", out: `\(18\)main\(\)`},
			more: []step{
				// At the program's first line the list does not exist yet:
				// that counts as another value.
				{cmd: "fred-reverse-watch data[0] == 0", out: `(?s)watch.py\(2\)<module>\(\)\r?\n-> data = \[0\] \* 300\r?\nfred: 'data\[0\] == 0' is \(raises NameError: name 'data' is not defined\) here; the next step makes it True`},
				{cmd: "c", out: `\(18\)main\(\)`},
				{cmd: "p total", out: `^-99\d{4}\r?\n$`},
				{cmd: "c", out: `total=-\d+\r?\nThe program finished`},
			}},
		{name: "perl", start: perlStart, fixture: "watch.pl",
			toEnd: []step{{cmd: "b 19"}, {cmd: "c", out: `watch.pl:19\)`}},
			expr:  "$total >= 0", no: `""`, yes: "1",
			landed: `main::update\(.*watch.pl:13\):\r?\n13:\t    \$total \+= \$v;`, at: [2]string{"$i", "277"},
			step: step{cmd: "s", out: `watch.pl:17\)|watch.pl:1[4-9]`},
			same: "1 + 1", sameSaid: `'1 \+ 1' is 2 both at the start of the search \(the start\) and now`,
			bad: "1 +", badSaid: `cannot evaluate the expression at .*: \(dies: syntax error at \(eval\)`,
			where: step{cmd: ".", out: `main::\(.*watch.pl:1[4-9]\)`},
			goOn:  step{cmd: "c", out: `watch.pl:19\)`},
			more:  []step{{cmd: "c", out: `total=-\d+\r?\nDebugged program terminated`}}},
	}
	tookSnaps := regexp.MustCompile(`took [\d.]+ s \((\d+) snapshots,`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend)
				ts.play(tc.toEnd)
				if v := ts.value(tc.expr); v != tc.no {
					t.Fatalf("the fixture's invariant holds at the end: %s", v)
				}
				ts.must("fred-reverse-watch", `needs an expression`)
				out := ts.must("fred-reverse-watch "+tc.expr, tc.landed)
				if said := fmt.Sprintf("'%s' is %s here; the next step makes it %s", tc.expr, tc.yes, tc.no); !strings.Contains(out, said) || !strings.Contains(out, "evaluations)") {
					t.Fatalf("reverse-watch does not say what it found (%q) and what it cost:\n%s", said, out)
				}
				// The landing lies in a continue, which fred watched to its end.
				if strings.Contains(out, "not ruled out") {
					t.Fatalf("fred did not watch the rest of the continue:\n%s", out)
				}
				if v := ts.value(tc.at[0]); v != tc.at[1] {
					t.Fatalf("landed with %s=%s, want %s", tc.at[0], v, tc.at[1])
				}
				if v := ts.value(tc.expr); v != tc.yes {
					t.Fatalf("after the watch, %s is %s, want %s", tc.expr, v, tc.yes)
				}
				ts.play([]step{tc.step, {expr: tc.expr, want: tc.no}}) // one step after the landing
				ts.must("fred-reverse-watch "+tc.same, tc.sameSaid+`, and at the [1-7] moments? fred looked at in between: no change to find`)
				ts.must("fred-reverse-watch "+tc.bad, tc.badSaid)
				ts.play([]step{tc.where, tc.goOn})
				if tc.inside != "" {
					hist := ts.must("fred-history", tc.inside)
					// The search's snapshots show in the list in the
					// person's words, if it took any (a short hit count
					// replays faster than a snapshot is taken).
					listed := tc.listed
					if m := tookSnaps.FindStringSubmatch(out); m == nil || m[1] == "0" {
						listed = `snapshots`
					}
					list := ts.must("fred-list", listed)
					for _, out := range []string{hist, list} {
						if strings.Contains(out, "fred-") || strings.Contains(out, "(interrupted)") {
							t.Errorf("fred's internal steps show:\n%s", out)
						}
					}
					if n := strings.Count(hist, "left by going back"); n > 1 {
						t.Errorf("the search's snapshots show as %d lines left by going back:\n%s", n, hist)
					}
				}
				ts.play(tc.more)
			})
		})
	}
}

func TestAutomaticSnapshotsArePruned(t *testing.T) {
	defer func(k int) { autoKeep = k }(autoKeep)
	autoKeep = 2
	ts := gdbSession(t, "watch", "fork")
	ts.do("skip -gfi ./*/*")
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `snapshot 1 taken`)
	ts.must("break 21", `Breakpoint`)
	ts.must("continue", `main \(\)\s+at .*watch.c:21`)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	ts.must("fred-reverse-watch sum >= 0", `update \(i=277\)`)
	auto := 0
	for _, sn := range ts.snaps {
		if sn.Auto && sn.ID > 1 { // 0 and 1: the run's start-up and main
			auto++
		}
	}
	if auto > 2 {
		t.Errorf("%d automatic snapshots kept, want at most 2", auto)
	}
	if _, ok := ts.snaps[1]; !ok {
		t.Error("the snapshot at main was dropped")
	}
	if _, ok := ts.snaps[0]; !ok {
		t.Error("the first snapshot was dropped")
	}
	if _, ok := ts.snaps[2]; !ok {
		t.Error("the person's snapshot was dropped")
	}
	// Still exact after pruning: back and forth.
	ts.must("fred-reverse-finish", `main \(\)\s+at .*watch.c:20`)
	ts.must("step", `update \(i=277\)`)
	ts.must("fred-restart 2", `watch.c:21`)
}

// A change made by a command of the person's (set var) lands just before
// that command; the check of a landing, one step, is for statements only.
func TestReverseWatchPersonsCommand(t *testing.T) {
	ts := gdbSession(t, "watch", "fork")
	ts.do("skip -gfi ./*/*")
	ts.runTo("run", "break 21", `Breakpoint 2, main`)
	ts.must("set var data[0] = 99", ``)
	ts.must("next", `22\s`)
	out := ts.do("fred-reverse-watch data[0] == 99")
	if strings.Contains(out, "went wrong") || !strings.Contains(out, "'data[0] == 99' is 0 here; your next command, 'set var data[0] = 99', makes it 1") {
		t.Fatalf("reverse-watch over the person's set var:\n%s", out)
	}
	if v := ts.value("data[0]"); v != "0" {
		t.Fatalf("after the watch, data[0] is %s, want 0 (before the set var)", v)
	}
}

// An invariant that holds only once the program has built its data, started
// the way people start: break main, run, a breakpoint at the end. At
// snapshot 1 the total is 0, as it is now; in between it was 10000, and one
// late statement broke it. fred finds that statement.
func TestReverseWatchInvariantBuiltAfterMain(t *testing.T) {
	ts := gdbSession(t, "accounts", "fork")
	ts.runTo("run", fmt.Sprintf("break accounts.c:%d", fixtureLineOf(t, "accounts.c", "end")), `Breakpoint 2, main`)
	lost := fixtureLineOf(t, "accounts.c", "lost")
	ts.must("fred-reverse-watch total() == 10000", fmt.Sprintf(`(?s)merge \(.*accounts.c:%d.*'total\(\) == 10000' is 1 here; the next step makes it 0`, lost))
	ts.must("step", ``)
	if v := ts.value("total() == 10000"); v != "0" {
		t.Fatalf("one step after the landing, the invariant is %s, want 0", v)
	}
}

// toggle.c's flag rises, falls and rises again. Each case stops at the
// LINE labels in turn (run, then continue), reverse-watches flag == 1 and
// checks the call of set that it lands in by its caller's line.
//   - The last change, not the first: stopped at each level, bisecting
//     those stops finds the first rise; the person's stop after it where
//     the flag is 0 again sends the search on to the last rise.
//   - A `run` whose stretch after snapshot 1 (main's first line) is a
//     single `next`, over the call that makes the change: the search steps
//     into that call, as into any `next` of a longer stretch, instead of
//     landing before it and calling the `next` a step.
func TestReverseWatchToggle(t *testing.T) {
	for _, c := range []struct {
		name   string
		stops  []string
		landed string
	}{
		{"last change", []string{"high", "low", "end"}, "last"},
		{"the one next of a run", []string{"high"}, "first"},
		// No stop between: fred's watchpoint sees every change.
		{"inside one continue", []string{"first", "end"}, "last"},
		{"inside the run", []string{"end"}, "last"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := gdbSession(t, "toggle", "fork")
			for i, l := range c.stops {
				ts.must(fmt.Sprintf("break toggle.c:%d", fixtureLineOf(t, "toggle.c", l)), fmt.Sprintf(`Breakpoint %d`, i+1))
				cmd := "continue"
				if i == 0 {
					cmd = "run"
				}
				ts.must(cmd, fmt.Sprintf(`Breakpoint %d, main`, i+1))
			}
			ts.must("fred-reverse-watch flag == 1", `(?s)set \(v=1\).*'flag == 1' is 0 here; the next step makes it 1`)
			ts.must("up", fmt.Sprintf(`(?m)^%d\s`, fixtureLineOf(t, "toggle.c", c.landed)))
		})
	}
}

// exactCase is a reverse-watch whose landing is checked by values: a
// session run to the fixture's LINE:end, the watch, the values at the
// landing, where it stands, and one step.
type exactCase struct {
	name, file, fixture string
	start               starter
	toEnd               []string // the commands to LINE:end (%d: its line)
	stopped             string   // the stop there
	expr, before, after string   // the expression, its values at the landing and now
	at                  [2]string
	step                string // one step
	where               []step // where the landing stands (%d: the line marked LINE:mark)
}

// play runs c's session to the end and watches c.expr. At the landing
// expr has its before-value and at[0] is at[1]; c.where finds the line
// marked LINE:mark; one step from the landing gives expr its value now.
func (c exactCase) play(t *testing.T, mark string) {
	ts := c.start(t, c.fixture, "fork")
	end := fixtureLineOf(t, c.file, "end")
	for i, cmd := range c.toEnd {
		if strings.Contains(cmd, "%d") {
			cmd = fmt.Sprintf(cmd, end)
		}
		if i == len(c.toEnd)-1 {
			ts.must(cmd, c.stopped)
		} else {
			ts.do(cmd)
		}
	}
	if v := ts.value(c.expr); v != c.after {
		t.Fatalf("at the end, %s is %s, want %s", c.expr, v, c.after)
	}
	said := fmt.Sprintf(`'%s' is %s here; the next step makes it %s`, regexp.QuoteMeta(c.expr), regexp.QuoteMeta(c.before), regexp.QuoteMeta(c.after))
	out := ts.must("fred-reverse-watch "+c.expr, said)
	// The landing lies in the one run to the end, which fred watched.
	if strings.Contains(out, "not ruled out") {
		t.Errorf("fred did not watch the run to the end:\n%s", out)
	}
	for _, x := range [][2]string{{c.expr, c.before}, c.at} {
		if v := ts.value(x[0]); v != x[1] {
			t.Fatalf("at the landing, %s is %s, want %s:\n%s", x[0], v, x[1], out)
		}
	}
	ts.play(c.where, "%d", strconv.Itoa(fixtureLineOf(t, c.file, mark)))
	ts.must(c.step, ``)
	if v := ts.value(c.expr); v != c.after {
		t.Fatalf("one step after the landing, %s is %s, want %s", c.expr, v, c.after)
	}
}

// Two calls of a one-line function on one line; the second makes the
// change. fred lands in the second call, before the statement that makes
// it, not in the first: the call's arguments say which, one step makes
// the change, and its caller stands at the line with both calls.
func TestReverseWatchSecondCallOnOneLine(t *testing.T) {
	for _, c := range []exactCase{
		{name: "gdb", file: "oneline.c", fixture: "oneline", start: gdbStart,
			toEnd: []string{"break oneline.c:%d", "run"}, stopped: `Breakpoint 1, main`,
			expr: "deg[1] == 1", before: "0", after: "1", at: [2]string{"a", "1"}, step: "step",
			where: []step{{cmd: "up", out: `(?m)^%d\s`}, {cmd: "down", out: `add_edge \(a=1, b=2\)`}}},
		// From a stop at main's first line: the run to the end is a
		// `continue`.
		{name: "gdb from main", file: "oneline.c", fixture: "oneline", start: gdbStart,
			toEnd: []string{"break main", "run", "break oneline.c:%d", "continue"}, stopped: `Breakpoint 2, main`,
			expr: "deg[1] == 1", before: "0", after: "1", at: [2]string{"a", "1"}, step: "step",
			where: []step{{cmd: "up", out: `(?m)^%d\s`}, {cmd: "down", out: `add_edge \(a=1, b=2\)`}}},
		{name: "pdb", file: "oneline.py", fixture: "oneline.py", start: pdbStart,
			toEnd: []string{"b %d", "c"}, stopped: `oneline.py\(\d+\)<module>\(\)`,
			expr: "deg[1] == 1", before: "False", after: "True", at: [2]string{"a", "1"}, step: "step",
			where: []step{{cmd: "up", out: `oneline.py\(%d\)<module>\(\)`}, {cmd: "down", out: `oneline.py\(\d+\)add_edge\(\)`}}},
		{name: "perl", file: "oneline.pl", fixture: "oneline.pl", start: perlStart,
			toEnd: []string{"b %d", "c"}, stopped: `oneline.pl:\d+\)`,
			expr: "$deg[1] == 1", before: `""`, after: "1", at: [2]string{"$x", "1"}, step: "s",
			where: []step{{cmd: "T", out: `add_edge\(1, 2\) called from file .*oneline.pl' line %d\b`}}},
	} {
		t.Run(c.name, func(t *testing.T) { c.play(t, "both") })
	}
}

// A change deep in a recursion: count's fifth call (n is 4) makes
// hits 5; deeper calls and every return follow it. fred lands in that
// call, before the statement, and one step makes the change.
func TestReverseWatchInRecursiveCall(t *testing.T) {
	for _, c := range []exactCase{
		{name: "gdb", file: "recurse.c", fixture: "recurse", start: gdbStart,
			toEnd: []string{"break recurse.c:%d", "run"}, stopped: `Breakpoint 1, main`,
			expr: "hits >= 5", before: "0", after: "1", at: [2]string{"n", "4"}, step: "step",
			// gdb folds a frame over two lines when the path is long.
			where: []step{{cmd: "bt", out: `(?s)#0  count \(n=4\)\s+at .*recurse.c:%d\r?\n(#\d  .*? count \(n=[5-8]\)\s.*?){4}#5  .* main \(\)`}}},
		{name: "pdb", file: "recurse.py", fixture: "recurse.py", start: pdbStart,
			toEnd: []string{"b %d", "c"}, stopped: `recurse.py\(\d+\)<module>\(\)`,
			expr: "hits >= 5", before: "False", after: "True", at: [2]string{"n", "4"}, step: "step",
			where: []step{{cmd: "where", out: `(?s)(recurse.py\(\d+\)count\(\).*){4}> .*recurse.py\(%d\)count\(\)`}}},
		{name: "perl", file: "recurse.pl", fixture: "recurse.pl", start: perlStart,
			toEnd: []string{"b %d", "c"}, stopped: `recurse.pl:\d+\)`,
			expr: "$hits >= 5", before: `""`, after: "1", at: [2]string{"$n", "4"}, step: "s",
			where: []step{{cmd: ".", out: `recurse.pl:%d\)`}, {cmd: "T", out: `(?s)(count\(\d\) called from .*){5}`}}},
	} {
		t.Run(c.name, func(t *testing.T) { c.play(t, "change") })
	}
}

// A flag rises, falls and rises again inside the one command from the
// program's start to the person's stop: the bisection alone may land on
// the first rise; fred watches the rest of that command (a hardware
// watchpoint under gdb, an evaluation at every step under pdb and perl)
// and lands on the last, where the work between the two rises is done.
func TestReverseWatchLastChangeInsideOneCommand(t *testing.T) {
	for _, c := range []struct {
		name, file, fixture string
		start               starter
		// setup runs first: under lldb, whose first snapshot is at the
		// first stop, a stop at main.
		setup              []step
		brk, run, cont     string
		stopped            [2]string // the first breakpoint's stop, the second's
		expr, before, then string
		// Before the search: a search that fred cannot watch to its end
		// under gdb (a call: no hardware watchpoint follows it), where fred
		// says the landing may not be the last change.
		unwatched []step
		sink      step
	}{
		{name: "gdb", file: "toggle.c", fixture: "toggle", start: gdbStart,
			brk: "break toggle.c:%d", run: "run", cont: "continue", stopped: [2]string{`Breakpoint 1, main`, `Breakpoint 2, main`},
			expr: "flag == 1", before: "0", then: "1",
			unwatched: []step{
				{cmd: "fred-reverse-watch flag_now() == 1", out: `(?s)'flag_now\(\) == 1' is 0 here; the next step makes it 1\r?\n.*a later change into 1 is not ruled out: the debugger cannot watch it with a hardware watchpoint`},
				{cmd: "continue", out: `Breakpoint 1, main`},
			},
			sink: step{cmd: "print sink", out: `= 999000\r?\n`}},
		{name: "lldb", file: "toggle.c", fixture: "toggle", start: lldbStart,
			brk: "b toggle.c:%d", run: "run", cont: "c", stopped: [2]string{`stop reason = breakpoint 1`, `stop reason = breakpoint 2`},
			expr: "flag == 1", before: "false", then: "true",
			unwatched: []step{
				{cmd: "fred-reverse-watch flag_now() == 1", out: `(?s)'flag_now\(\) == 1' is false here; the next step makes it true\r?\n.*a later change into true is not ruled out: the debugger cannot watch it with a hardware watchpoint`},
				{cmd: "c", out: `stop reason = breakpoint 1`},
			},
			sink: step{cmd: "print sink", out: `= 999000\r?\n`}},
		{name: "pdb", file: "toggle.py", fixture: "toggle.py", start: pdbStart,
			brk: "b %d", run: "c", cont: "c", stopped: [2]string{`toggle.py\(\d+\)<module>\(\)`, `toggle.py\(\d+\)<module>\(\)`},
			expr: "flag == 1", before: "False", then: "True",
			sink: step{cmd: "p sink", out: `^89700\r?\n`}},
		{name: "perl", file: "toggle.pl", fixture: "toggle.pl", start: perlStart,
			brk: "b %d", run: "c", cont: "c", stopped: [2]string{`toggle.pl:\d+\)`, `toggle.pl:\d+\)`},
			expr: "$flag == 1", before: `""`, then: "1",
			sink: step{cmd: "p $sink", out: `^89700\r?\n`}},
	} {
		said := fmt.Sprintf(`'%s' is %s here; the next step makes it %s`, regexp.QuoteMeta(c.expr), regexp.QuoteMeta(c.before), c.then)
		t.Run(c.name, func(t *testing.T) {
			ts := c.start(t, c.fixture, "fork")
			ts.do(fmt.Sprintf(c.brk, fixtureLineOf(t, c.file, "end")))
			ts.must(c.run, c.stopped[0])
			ts.play(c.unwatched)
			out := ts.must("fred-reverse-watch "+c.expr, said)
			if strings.Contains(out, "not ruled out") {
				t.Errorf("fred did not watch the command:\n%s", out)
			}
			ts.play([]step{c.sink})
		})
		// A stop where the flag is high already, then the end: the
		// fall and the last rise lie in the later command.
		t.Run(c.name+" after a stop", func(t *testing.T) {
			ts := c.start(t, c.fixture, "fork")
			ts.do(fmt.Sprintf(c.brk, fixtureLineOf(t, c.file, "high")))
			ts.must(c.run, c.stopped[0])
			ts.do(fmt.Sprintf(c.brk, fixtureLineOf(t, c.file, "end")))
			ts.must(c.cont, c.stopped[1])
			out := ts.must("fred-reverse-watch "+c.expr, said)
			if strings.Contains(out, "not ruled out") {
				t.Errorf("fred did not watch the commands:\n%s", out)
			}
			ts.play([]step{c.sink})
		})
	}
}

// pdb: a reverse-watch over continues that start and stop at one
// breakpoint inside a loop watches each of them (the check that a moment
// is its continue's own stop must not take a continue's start for it).
func TestPDBReverseWatchOverLoopContinues(t *testing.T) {
	ts, _ := pdbSession(t, "loopwatch.py", "fork")
	ts.must("b 8", `Breakpoint 1`)
	for i := 0; i < 4; i++ {
		ts.must("c", `\(8\)<module>\(\)`)
	}
	ts.must("fred-reverse-watch x", `'x' is 7 here; the next step makes it 0`)
	if i := ts.value("i"); i != "2" {
		t.Fatalf("landed with i = %s, want 2 (the x = 0 of the third turn)", i)
	}
}
