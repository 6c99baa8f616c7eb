package fred

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fred-debugger/fred/fred/rewrite"
)

// TestReverseStepAfterLongContinue: reverse-step over a `continue` of
// 120,000 statements, more than the counting walk goes (rewrite.MaxWalk), lands on
// the loop's last statement, with the loop's last values; a second one
// goes back one more; forward again, the program finishes as before.
func TestReverseStepAfterLongContinue(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		const n = 60000 // two statements a turn
		if 2*n <= rewrite.MaxWalk {
			t.Fatalf("the loop (%d statements) must be longer than the counting walk goes (%d)", 2*n, rewrite.MaxWalk)
		}
		backOverLoop(t, loopAtDone(t, n, backend), n, nil)
	})
}

// TestReverseStepAfterVeryLongContinue: over 20,000,000 turns, far more
// than fred counts (maxPassCount), reverse-step jumps close to the stop by
// native runs and lands on the loop's last statement all the same. (The
// loop runs some tens of ms: the first jump has milliseconds to spare, for
// an interrupt late on a busy machine.)
func TestReverseStepAfterVeryLongContinue(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		const n = 20000000
		if n <= maxPassCount {
			t.Fatalf("the loop (%d turns) must run its statement more often than fred counts (%d)", n, maxPassCount)
		}
		ts := loopAtDone(t, n, backend)
		backOverLoop(t, ts, n, func() {
			if h := ts.do("fred-history"); !strings.Contains(h, " by run time") {
				t.Fatalf("the history names no native probe:\n%s", h)
			}
		})
	})
}

// backOverLoop reverse-steps from done() back over bench_loop's n turns:
// to the call of done (then it calls also), to the loop's last check; and
// forward again, the program finishes as before.
func backOverLoop(t *testing.T, ts *tsession, n int, also func()) {
	t.Helper()
	sum := strconv.Itoa(n * (n - 1) / 2)
	ts.must("fred-reverse-step", `bench_loop.c:19\r?\n19\t\s*done\(s\);(?s).*'fred-reverse-step' took`)
	if i, s := ts.value("i"), ts.value("s"); i != strconv.Itoa(n) || s != sum {
		t.Fatalf("before done(s): i = %s, s = %s; want %d, %s", i, s, n, sum)
	}
	if also != nil {
		also()
	}
	ts.must("fred-reverse-step", `bench_loop.c:17\r?\n17\t`)
	if i := ts.value("i"); i != strconv.Itoa(n-1) {
		t.Fatalf("at the loop's last check: i = %s, want %d", i, n-1)
	}
	ts.must("next", `19\t\s*done\(s\);`)
	ts.must("next", `Breakpoint 2, done`)
	ts.must("next", `11\t`)
	if r := ts.value("result"); r != sum {
		t.Fatalf("result = %s, want %s", r, sum)
	}
}

// TestReverseStepOverTooLongALoop: a loop whose statement runs more often
// than fred counts gets one clear message, and the person stays where they
// were, in a usable session.
func TestReverseStepOverTooLongALoop(t *testing.T) {
	old, oldNear := maxPassCount, nearMin
	maxPassCount, nearMin = 1000, time.Hour // no jump close to the stop
	defer func() { maxPassCount, nearMin = old, oldNear }()
	ts := loopAtDone(t, 60000, "fork")
	failed := ts.Failed()
	// (Where gdb's breakpoints count, it counts a quarter as many.)
	msg := `fred: the continue runs .*bench_loop.c:1[78].* more than (1000|250) times before it stops; going back over it is not supported yet`
	ts.must("fred-reverse-step", msg)
	if ts.Failed() != failed+1 {
		t.Fatalf("fred-reverse-step did not count as failed")
	}
	ts.must("frame", `done \(s=1799970000\)\s+at .*bench_loop.c:10`)
	ts.must("next", `11\t`)
	if r := ts.value("result"); r != "1799970000" {
		t.Fatalf("result = %s", r)
	}
}

// TestReverseStepPastConditionalBreakpoint: the walk passes a breakpoint
// whose condition is false at every turn but one, as the continue did: it
// is no stop (gdb reports such a landing as a breakpoint event).
func TestReverseStepPastConditionalBreakpoint(t *testing.T) {
	ts := gdbSession(t, "bench_loop", "fork")
	ts.runTo("run 5000", "break 18 if i % 1000 == 500", `Breakpoint 2, main`)
	if i := ts.value("i"); i != "500" {
		t.Fatalf("the breakpoint stopped at i = %s, want 500", i)
	}
	ts.must("fred-reverse-step", `bench_loop.c:17\r?\n17\t`)
	if i := ts.value("i"); i != "499" {
		t.Fatalf("one statement back, i = %s, want 499", i)
	}
}

// TestInterruptReverseStepOverLoop: Ctrl-C while fred counts a loop's
// turns stops the reverse-step; the person is where they were, and the
// program goes on as before.
func TestInterruptReverseStepOverLoop(t *testing.T) {
	defer func(n time.Duration) { nearMin = n }(nearMin)
	nearMin = time.Hour // count every turn, as without native runs
	ts := loopAtDone(t, 200000, "fork")
	go func() {
		time.Sleep(300 * time.Millisecond) // counting 200,000 turns takes seconds
		ts.Interrupt()
	}()
	ts.must("fred-reverse-step", `'fred-reverse-step' interrupted; you are back where you were`)
	ts.must("frame", `done \(s=19999900000\)\s+at .*bench_loop.c:10`)
	ts.must("next", `11\t`)
	ts.must("continue", `exited normally`)
}

// TestInterruptReverseStepNearStop: Ctrl-C while fred jumps close to the
// stop of a long continue (a loop of about a second, run natively to
// measure it) stops the reverse-step; the person is where they were.
func TestInterruptReverseStepNearStop(t *testing.T) {
	ts := loopAtDone(t, 400000000, "fork")
	go func() {
		time.Sleep(300 * time.Millisecond)
		ts.Interrupt()
	}()
	start := time.Now()
	ts.must("fred-reverse-step", `'fred-reverse-step' interrupted; you are back where you were`)
	t.Logf("interrupted after %v", time.Since(start))
	ts.must("frame", `done \(s=79999999800000000\)\s+at .*bench_loop.c:10`)
	ts.must("next", `11\t`)
	ts.must("continue", `exited normally`)
}

// loopAtDone runs bench_loop over n turns under gdb, to its call of done().
func loopAtDone(t *testing.T, n int, backend string) *tsession {
	t.Helper()
	ts := gdbSession(t, "bench_loop", backend)
	ts.runTo("run "+strconv.Itoa(n), "break done", `Breakpoint 2, done`)
	return ts
}
