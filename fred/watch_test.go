package fred

import (
	"fmt"
	"regexp"
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
		start   func(t *testing.T, backend string) *tsession
		toEnd   [][2]string // commands to the stop after the loop, and what they answer
		expr    string      // the invariant
		no, yes string      // its values
		landed  string      // where the search lands
		at      [2]string   // a variable there, and its value
		step    [2]string   // one step, and what it answers
		same    string      // the same value at both ends, and what fred says of it
		sameSaid,
		bad, badSaid string // cannot be evaluated, and what the debugger says
		where [2]string // where the person is after the bad one
		goOn  [2]string // on to the end
		extra func(t *testing.T, ts *tsession)
	}{
		{name: "gdb",
			start: func(t *testing.T, b string) *tsession {
				ts := gdbSession(t, "watch", b)
				ts.do("skip -gfi ./*/*")
				ts.must("fred-reverse-watch sum >= 0", `needs a snapshot of this run`)
				return ts
			},
			toEnd: [][2]string{{"break main", `Breakpoint 1`}, {"run", `snapshot 1 taken`}, {"break 21", `Breakpoint 2`}, {"continue", `Breakpoint 2, main`}},
			expr:  "sum >= 0", no: "0", yes: "1",
			landed: `update \(i=277\) at .*watch.c:13`, at: [2]string{"i", "277"},
			step: [2]string{"step", `14\s+}`},
			same: "data[0] == 0", sameSaid: `is 1 both at the start of the search .* and now`,
			bad: "nosuchvar + 1", badSaid: `No symbol "nosuchvar"`,
			where: [2]string{"frame", `update \(i=277\) at .*watch.c:14`},
			goOn:  [2]string{"continue", `Breakpoint 2, main`},
			// The history says what the person did, what fred did inside
			// it in the person's words, and the search's snapshots on one
			// line; none of fred's internal command names.
			extra: func(t *testing.T, ts *tsession) {
				hist := ts.must("fred-history", `(?m)^   \|  inside 'continue': .*\d+ pass(es)? of main at watch.c:\d+.*$`)
				list := ts.must("fred-list", `inside 'continue': `)
				for _, out := range []string{hist, list} {
					if strings.Contains(out, "fred-") || strings.Contains(out, "(interrupted)") {
						t.Errorf("fred's internal steps show:\n%s", out)
					}
				}
				if n := strings.Count(hist, "left by going back"); n > 1 {
					t.Errorf("the search's snapshots show as %d lines left by going back:\n%s", n, hist)
				}
			}},
		{name: "pdb",
			start: func(t *testing.T, b string) *tsession { ts, _ := pdbSession(t, "watch.py", b); return ts },
			toEnd: [][2]string{{"b 18", `Breakpoint 1`}, {"c", `\(18\)main\(\)`}},
			expr:  "total >= 0", no: "False", yes: "True",
			landed: `> .*watch.py\(12\)update\(\)\r?\n-> total \+= v`, at: [2]string{"i", "277"},
			step: [2]string{"step", `--Return--`},
			same: "__name__", sameSaid: `'__name__' is '__main__' both at the start of the search \(the start\) and now`,
			bad: "nosuchvar + 1", badSaid: `cannot evaluate the expression at .*: \(raises NameError: name 'nosuchvar' is not defined\)`,
			where: [2]string{"where", `> .*\(12\)update\(\)->None`},
			goOn:  [2]string{"c", `\(18\)main\(\)`},
			// At the program's first line the list does not exist yet:
			// that counts as another value.
			extra: func(t *testing.T, ts *tsession) {
				ts.must("fred-reverse-watch data[0] == 0", `(?s)watch.py\(2\)<module>\(\)\r?\n-> data = \[0\] \* 300\r?\nfred: 'data\[0\] == 0' is \(raises NameError: name 'data' is not defined\) here; the next step makes it True`)
				ts.must("c", `\(18\)main\(\)`)
				ts.must("p total", `^-99\d{4}\r?\n$`)
				ts.must("c", `total=-\d+\r?\nThe program finished`)
			}},
		{name: "perl",
			start: func(t *testing.T, b string) *tsession { ts, _ := perlSession(t, "watch.pl", b); return ts },
			toEnd: [][2]string{{"b 19", ``}, {"c", `watch.pl:19\)`}},
			expr:  "$total >= 0", no: `""`, yes: "1",
			landed: `main::update\(.*watch.pl:13\):\r?\n13:\t    \$total \+= \$v;`, at: [2]string{"$i", "277"},
			step: [2]string{"s", `watch.pl:17\)|watch.pl:1[4-9]`},
			same: "1 + 1", sameSaid: `'1 \+ 1' is 2 both at the start of the search \(the start\) and now`,
			bad: "1 +", badSaid: `cannot evaluate the expression at .*: \(dies: syntax error at \(eval\)`,
			where: [2]string{".", `main::\(.*watch.pl:1[4-9]\)`},
			goOn:  [2]string{"c", `watch.pl:19\)`},
			extra: func(t *testing.T, ts *tsession) {
				ts.must("c", `total=-\d+\r?\nDebugged program terminated`)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, backend)
				ts.mustAll(tc.toEnd)
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
				ts.must(tc.step[0], tc.step[1])
				if v := ts.value(tc.expr); v != tc.no {
					t.Fatalf("one step after the landing, %s is %s, want %s", tc.expr, v, tc.no)
				}
				ts.must("fred-reverse-watch "+tc.same, tc.sameSaid+`, and at the [1-6] moments fred looked at in between: no change to find`)
				ts.must("fred-reverse-watch "+tc.bad, tc.badSaid)
				ts.must(tc.where[0], tc.where[1])
				ts.must(tc.goOn[0], tc.goOn[1])
				tc.extra(t, ts)
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
	ts.must("continue", `main \(\) at .*watch.c:21`)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	ts.must("fred-reverse-watch sum >= 0", `update \(i=277\)`)
	auto := 0
	for _, sn := range ts.snaps {
		if sn.Auto && sn.ID != 1 {
			auto++
		}
	}
	if auto > 2 {
		t.Errorf("%d automatic snapshots kept, want at most 2", auto)
	}
	if _, ok := ts.snaps[1]; !ok {
		t.Error("the first snapshot was dropped")
	}
	if _, ok := ts.snaps[2]; !ok {
		t.Error("the person's snapshot was dropped")
	}
	// Still exact after pruning: back and forth.
	ts.must("fred-reverse-finish", `main \(\) at .*watch.c:20`)
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

// Two calls of a one-line function on one line; the second makes the
// change. fred lands at the start of the second call, not in the first.
func TestReverseWatchSecondCallOnOneLine(t *testing.T) {
	ts := gdbSession(t, "oneline", "fork")
	ts.runTo("run", fmt.Sprintf("break oneline.c:%d", fixtureLineOf(t, "oneline.c", "end")), `Breakpoint 2, main`)
	ts.must("fred-reverse-watch deg[1] == 1", `(?s)add_edge \(a=1, b=2\).*'deg\[1\] == 1' is 0 here; the next step makes it 1`)
	ts.must("up", fmt.Sprintf(`(?m)^%d\s`, fixtureLineOf(t, "oneline.c", "both")))
}

// A flag rises, falls and rises again inside the one command from the
// program's start to the person's stop: the bisection alone may land on
// the first rise; fred watches the rest of that command (a hardware
// watchpoint under gdb, an evaluation at every step under pdb and perl)
// and lands on the last, where the work between the two rises is done.
func TestReverseWatchLastChangeInsideOneCommand(t *testing.T) {
	for _, c := range []struct {
		name, file         string
		start              func(t *testing.T) *tsession
		brk, run, stopped  string
		expr, before, then string
		sink, sinkIs       string
	}{
		{"gdb", "toggle.c", func(t *testing.T) *tsession { return gdbSession(t, "toggle", "fork") },
			"break toggle.c:%d", "run", `Breakpoint 1, main`, "flag == 1", "0", "1", "print sink", `= 999000\r?\n`},
		{"pdb", "toggle.py", func(t *testing.T) *tsession { ts, _ := pdbSession(t, "toggle.py", "fork"); return ts },
			"b %d", "c", `toggle.py\(\d+\)<module>\(\)`, "flag == 1", "False", "True", "p sink", `^89700\r?\n`},
		{"perl", "toggle.pl", func(t *testing.T) *tsession { ts, _ := perlSession(t, "toggle.pl", "fork"); return ts },
			"b %d", "c", `toggle.pl:\d+\)`, "$flag == 1", `""`, "1", "p $sink", `^89700\r?\n`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := c.start(t)
			ts.do(fmt.Sprintf(c.brk, fixtureLineOf(t, c.file, "end")))
			ts.must(c.run, c.stopped)
			if c.name == "gdb" {
				// A call: no hardware watchpoint follows it, and fred says
				// the landing may not be the last change.
				ts.must("fred-reverse-watch flag_now() == 1", `(?s)'flag_now\(\) == 1' is 0 here; the next step makes it 1\r?\n.*a later change into 1 is not ruled out: the debugger cannot watch it with a hardware watchpoint`)
				ts.must("continue", c.stopped)
			}
			out := ts.must("fred-reverse-watch "+c.expr, fmt.Sprintf(`'%s' is %s here; the next step makes it %s`, regexp.QuoteMeta(c.expr), regexp.QuoteMeta(c.before), c.then))
			if strings.Contains(out, "not ruled out") {
				t.Errorf("fred did not watch the command:\n%s", out)
			}
			ts.must(c.sink, c.sinkIs)
		})
		// A stop where the flag is high already, then the end: the
		// fall and the last rise lie in the later command.
		t.Run(c.name+" after a stop", func(t *testing.T) {
			ts := c.start(t)
			ts.do(fmt.Sprintf(c.brk, fixtureLineOf(t, c.file, "high")))
			ts.must(c.run, c.stopped)
			ts.do(fmt.Sprintf(c.brk, fixtureLineOf(t, c.file, "end")))
			cont := map[string]string{"gdb": "continue"}[c.name]
			if cont == "" {
				cont = "c"
			}
			ts.must(cont, strings.Replace(c.stopped, "Breakpoint 1", "Breakpoint 2", 1))
			out := ts.must("fred-reverse-watch "+c.expr, fmt.Sprintf(`'%s' is %s here; the next step makes it %s`, regexp.QuoteMeta(c.expr), regexp.QuoteMeta(c.before), c.then))
			if strings.Contains(out, "not ruled out") {
				t.Errorf("fred did not watch the commands:\n%s", out)
			}
			ts.must(c.sink, c.sinkIs)
		})
	}
}
