package fred

import (
	"strings"
	"testing"
)

// The atomicity violation of MySQL bug 12228 (mt_atomic.c), its turns
// forced by semaphores: a snapshot in the middle, restored, runs on to the
// same end.
func TestThreadsRestoreRunsTheSame(t *testing.T) {
	ts := gdbSession(t, "mt_atomic", "criu")
	ts.must("break withdraw", `Breakpoint 1`)
	ts.must("run", `Breakpoint 1, withdraw`)
	ts.must("delete", ``)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	ts.must("continue", `balance=700 withdrawn=400 sum=1100`)
	ts.must("fred-restart 2", `withdraw`)
	out := ts.must("continue", `balance=700 withdrawn=400 sum=1100`)
	if strings.Contains(out, "SIGSTOP") {
		t.Errorf("the snapshot shows in the program's run:\n%s", out)
	}
}

// Snapshots of a multi-threaded program (CRIU): restoring brings back every
// thread, and nothing of the snapshot shows (no stray SIGSTOP stops when
// threads start later). The fork backend refuses with a clear message.
func TestThreadsSnapshots(t *testing.T) {
	ts := gdbSession(t, "mt_queue", "criu")
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `Breakpoint 1, main`)
	ts.must("break 56", `Breakpoint 2`)
	ts.must("continue", `(?s)Breakpoint 2, main \(\).*mt_queue.c:56`)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	ts.must("info threads", `(?s)\* 1 .*main.* 5 +Thread`)
	ts.must("next", `55\s+for`)
	ts.must("next", `Breakpoint 2, main`)
	ts.must("fred-restart 2", `(?s)main \(\).*mt_queue.c:56`)
	ts.must("info threads", `(?s)\* 1 .*main.* 5 +Thread`)
	ts.must("print i", `= 0`)
	// A thread the person selects is selected again by replays.
	ts.must("thread 3", `Switching to thread 3`)
	ts.must("thread 1", `Switching to thread 1`)
	ts.must("next", `55\s+for`)
	ts.must("fred-reverse-next", `(?s)main \(\).*mt_queue.c:56`)
	ts.must("info threads", `(?s)\* 1 .*main`)
	ts.must("delete", ``)
	out := ts.must("continue", `total=319600`)
	if strings.Contains(out, "SIGSTOP") || strings.Contains(out, "SIGCONT") {
		t.Errorf("the snapshot shows in the program's run:\n%s", out)
	}
}

func TestThreadsForkRefuses(t *testing.T) {
	ts := gdbSession(t, "mt_queue", "fork")
	ts.must("break 56", `Breakpoint 1`)
	ts.must("run", `Breakpoint 1, main`)
	ts.must("fred-checkpoint", `single-threaded programs only: pid \d+ has 5 threads; use --snapshots=criu \(as root\)`)
	ts.must("print i", `= 0`)
}

// reverse-watch in a multi-threaded program (the FReD paper's section
// 3.3): the history search finds the statement of the current thread
// during which the expression changed, and a round-robin search with
// scheduler locking finds the thread whose statement changed it. One
// statement of that thread, run alone, makes the change.
func TestThreadsReverseWatch(t *testing.T) {
	cases := []struct {
		name, fixture, expr string
		setup               []string
		thread, frame       string // the named thread's number, and its backtrace
	}{
		{"order (pbzip2)", "mt_order", "queue != 0",
			[]string{"break 50", "run", "fred-checkpoint", "continue"},
			"1", `(?s)#0  teardown \(\) at .*mt_order.c:42\r?\n#1  .* in main \(\) at .*mt_order.c:58`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := gdbSession(t, tc.fixture, "criu")
			for _, c := range tc.setup {
				ts.do(c)
			}
			if v := ts.value(tc.expr); v != "0" {
				t.Fatalf("%s is %s at the end; the fixture's bug did not happen", tc.expr, v)
			}
			out := ts.must("fred-reverse-watch --from 2 "+tc.expr, `is 1 here; the next statement of thread (\d+) \(LWP \d+\), run alone, makes it 0: type 'set scheduler-locking step' then 'step'`)
			if tc.thread != "" && !strings.Contains(out, "of thread "+tc.thread+" ") {
				t.Errorf("named the wrong thread:\n%s", out)
			}
			ts.must("bt", tc.frame)
			if v := ts.value(tc.expr); v != "1" {
				t.Fatalf("after the watch, %s is %s, want 1", tc.expr, v)
			}
			ts.do("set scheduler-locking step")
			ts.do("step")
			if v := ts.value(tc.expr); v != "0" {
				t.Fatalf("one step of the named thread: %s is %s, want 0", tc.expr, v)
			}
		})
	}
}
