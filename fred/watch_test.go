package fred

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestReverseWatchGDB(t *testing.T) { forBackends(t, testReverseWatchGDB) }

func testReverseWatchGDB(t *testing.T, backend string) {
	ts := gdbSession(t, "watch", backend)
	ts.do("skip -gfi ./*/*")
	ts.must("fred-reverse-watch sum >= 0", `needs a snapshot of this run`)
	ts.runTo("run", "break 21", `Breakpoint 2, main`)
	if v := ts.value("sum >= 0"); v != "0" {
		t.Fatalf("the fixture's invariant holds at the end: %s", v)
	}
	ts.must("fred-reverse-watch", `needs an expression`)
	out := ts.must("fred-reverse-watch sum >= 0", `update \(i=277\) at .*watch.c:13`)
	if !strings.Contains(out, "'sum >= 0' is 1 here; the next step makes it 0") ||
		!strings.Contains(out, "evaluations)") {
		t.Fatalf("reverse-watch does not say what it found and what it cost:\n%s", out)
	}
	// Landed exactly: the expression still has its earlier value, and one
	// step gives it the later one.
	if v := ts.value("sum >= 0"); v != "1" {
		t.Fatalf("after the watch, sum >= 0 is %s, want 1", v)
	}
	ts.must("step", `14\s+}`)
	if v := ts.value("sum >= 0"); v != "0" {
		t.Fatalf("one step after the landing, sum >= 0 is %s, want 0", v)
	}
	// The history says what the person did, what fred did inside it in
	// the person's words, and the search's snapshots on one line; none of
	// fred's internal command names.
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
	// The same value at both ends.
	ts.must("fred-reverse-watch data[0] == 0", `is 1 both at the start of the search .* and now, and at the [1-6] moments fred looked at in between: no change to find`)
	// An expression that cannot be evaluated: a message, and the person is
	// where they were.
	ts.must("fred-reverse-watch nosuchvar + 1", `No symbol "nosuchvar"`)
	ts.must("frame", `update \(i=277\) at .*watch.c:14`)
	// Forward again from there works.
	ts.must("continue", `Breakpoint 2, main`)
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

// Ctrl-C during a long reverse command stops it and puts the person back
// where they were, saying so.
func TestInterruptReverseWatch(t *testing.T) {
	ts := gdbSession(t, "watch", "fork")
	ts.do("skip -gfi ./*/*")
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `snapshot 1 taken`)
	ts.must("break 21", `Breakpoint`)
	ts.must("continue", `watch.c:21`)
	before := ts.seen("sum")
	go func() {
		time.Sleep(300 * time.Millisecond)
		ts.Interrupt()
	}()
	// Each evaluation sleeps 50 ms: the search outlasts the interrupt on
	// any machine.
	ts.must("fred-reverse-watch sum >= 0 && (int)usleep(50000) == 0", `'fred-reverse-watch' interrupted; you are back where you were`)
	if got := ts.seen("sum"); got != before {
		t.Fatalf("after the interrupt:\n got %+v\nwant %+v", got, before)
	}
	ts.must("next", `fred|sum=|22\s`)
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
