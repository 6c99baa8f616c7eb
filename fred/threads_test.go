package fred

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/replaylog"
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
// statement of that thread, run alone, makes the change. In mt_atomic the
// thread that makes it stands in a semaphore wait, and the others run
// into lock and semaphore waits on the way: the search runs waiting
// threads and sees which block.
func TestThreadsReverseWatch(t *testing.T) {
	cases := []struct {
		name, fixture, expr string
		setup               []string
		thread              string // the named thread's number, if known
		stmt                string // the statement, as the message names it
		frame               string // the named thread's backtrace
		snapshots           string // the backend ("" criu)
	}{
		{"order (pbzip2)", "mt_order", "queue != 0",
			[]string{"break 50", "run", "fred-checkpoint", "continue"},
			"1", "teardown at mt_order.c:42",
			`(?s)#0  teardown \(\)\s+at .*mt_order.c:42\r?\n#1  .* in main \(\)\s+at .*mt_order.c:58`, ""},
		// Teller 2 writes back a balance computed from its stale read.
		{"atomicity (MySQL 12228)", "mt_atomic", "balance + withdrawn <= 1000",
			[]string{"break 73", "run", "fred-checkpoint", "break 81", "continue"},
			"", "write_balance at mt_atomic.c:33",
			`(?s)#0  write_balance \(b=800, amount=100\)\s+at .*mt_atomic.c:33\r?\n#1  .* in teller \(arg=0x2\)\s+at .*mt_atomic.c:59`, ""},
		// The same with the default backend: the live program is a fork
		// copy (made at the restart to snapshot 1, before the threads
		// exist), which CRIU then dumps and restores. A copy that asked
		// the kernel to die with fred (PR_SET_PDEATHSIG) got the signal
		// as criu exited after each restore.
		{"atomicity, fork copy then CRIU", "mt_atomic", "balance + withdrawn <= 1000",
			[]string{"break 73", "run", "fred-checkpoint", "break 81", "continue"},
			"", "write_balance at mt_atomic.c:33",
			`(?s)#0  write_balance \(b=800, amount=100\)\s+at .*mt_atomic.c:33\r?\n#1  .* in teller \(arg=0x2\)\s+at .*mt_atomic.c:59`, "auto"},
		// Four workers take items from a queue the main thread fills,
		// each in turn in a condition wait; the main thread's put, at
		// the landing, is about to wait for room, holding the queue's
		// mutex, which the condition wait lets go of.
		{"queue (condition waits)", "mt_queue", "total < 1000",
			[]string{"break 53", "run", "fred-checkpoint", "break 59", "continue"},
			"", "worker at mt_queue.c:44",
			`#0  worker \(arg=0x\d\)\s+at .*mt_queue.c:44\r?\n`, ""},
		// Teller 2's first withdrawal of the second round, once teller 1
		// has let it go and ended: the search runs a thread to its exit.
		{"after a thread ends", "mt_atomic", "withdrawn <= 350",
			[]string{"break 73", "run", "fred-checkpoint", "break 81", "continue"},
			"", "write_balance at mt_atomic.c:33",
			`(?s)#0  write_balance \(b=749, amount=1\)\s+at .*mt_atomic.c:33\r?\n#1  .* in withdraw \(amount=1\)\s+at .*mt_atomic.c:41\r?\n#2  .* in teller \(arg=0x2\)\s+at .*mt_atomic.c:64`, ""},
	}
	named := regexp.MustCompile(`is 1 here; the next statement of thread (\d+) \(LWP \d+, "\w+"\), in (\S+ at \S+), run alone, makes it 0: type 'set scheduler-locking step' then 'step'`)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mode := tc.snapshots
			if mode == "" {
				mode = "criu"
			}
			ts := gdbSession(t, tc.fixture, mode)
			for _, c := range tc.setup {
				ts.do(c)
			}
			if v := ts.value(tc.expr); v != "0" {
				t.Fatalf("%s is %s at the end; the fixture's bug did not happen", tc.expr, v)
			}
			out := ts.must("fred-reverse-watch --from 2 "+tc.expr, named.String())
			m := named.FindStringSubmatch(out)
			if tc.thread != "" && m[1] != tc.thread {
				t.Errorf("named thread %s, want %s:\n%s", m[1], tc.thread, out)
			}
			if m[2] != tc.stmt {
				t.Errorf("named the statement %q, want %q:\n%s", m[2], tc.stmt, out)
			}
			// fred watched the threads from the landing to the end: the
			// landing is the last change.
			if strings.Contains(out, "not ruled out") {
				t.Errorf("fred did not watch the run for a later change:\n%s", out)
			}
			// The named thread is the selected one, where the watch landed.
			ts.must("info threads", `(?m)^\* `+m[1]+` +Thread`)
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

// mtOutcome is what mt_interleave printed: the order the threads
// finished in, the mix of their appends, a slice of them.
// (gdb's thread messages may share their lines.)
var mtOutcomeRe = regexp.MustCompile(`(finished|mix|appends)=\S+( n=\d+)?`)

func mtOutcome(out string) string {
	return strings.Join(mtOutcomeRe.FindAllString(strings.ReplaceAll(out, "\r", ""), -1), "\n")
}

// TestThreadsReplayOrder: four threads append to a buffer under a mutex,
// nothing forcing their turns (mt_interleave). Recorded once under gdb;
// restoring a snapshot taken before the threads exist, or one taken
// while they wait in a condition, and running on prints the same thing
// each time: the replay log gives every thread its lock in the recorded
// order, on two cores. Without the log at least one of the re-runs
// prints something else, so the test can fail.
func TestThreadsReplayOrder(t *testing.T) {
	gdb := threadsScript{p: P.GDB, argv: []string{"gdb", "-q"}, brk: "break main", brk2: "break 78", stop2: `Breakpoint 2, main`,
		cont: "continue", del: "delete", exited: `exited normally`}
	lldb := threadsScript{p: P.LLDB, argv: []string{"lldb"}, brk: "b main", brk2: "b mt_interleave.c:78", stop2: `stop reason = breakpoint 2`,
		cont: "c", del: "breakpoint delete", exited: `exited with status = 0`}
	for _, c := range []struct {
		name  string
		sc    threadsScript
		noLog bool
	}{{"log=true", gdb, false}, {"log=false", gdb, true}, {"lldb", lldb, false}} {
		t.Run(c.name, func(t *testing.T) {
			sc, noLog := c.sc, c.noLog
			testutil.Require(t, sc.p.Debuggers[0])
			ts := logSession(t, sc.p, append(sc.argv, testutil.Fixture(t, "mt_interleave")), "criu", noLog)
			ts.must(sc.brk, `Breakpoint 1`)
			ts.must("run", `snapshot 1 taken at the program's start, main at`)
			ts.must(sc.brk2, `Breakpoint 2`)
			ts.must(sc.cont, sc.stop2)
			ts.must("fred-checkpoint", `snapshot 2 taken`)
			ts.must(sc.del, ``)
			first := mtOutcome(ts.must(sc.cont, sc.exited))
			if !strings.Contains(first, "n=1200") {
				t.Fatalf("first run:\n%s", first)
			}
			differ := 0
			for i := 0; i < 6; i++ {
				snap := 1 + i%2
				ts.must(fmt.Sprintf("fred-restart %d", snap), `main`)
				out := ts.must(sc.cont, sc.exited)
				again := mtOutcome(out)
				if strings.Contains(out, "diverged") || strings.Contains(out, "did not take its turn") {
					t.Errorf("restore %d (snapshot %d): %s", i, snap, out)
				}
				if again == first {
					continue
				}
				differ++
				if !noLog {
					t.Fatalf("restore %d (snapshot %d) printed:\n%s\nthe recorded run:\n%s", i, snap, again, first)
				}
			}
			if noLog {
				if differ == 0 {
					t.Errorf("six re-runs without the replay log printed what the first run did: the fixture does not depend on the schedule")
				}
				return
			}
			log, _ := ts.ReplayLog()
			l, err := replaylog.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if l.Divergences != 0 {
				t.Errorf("%d divergences: %s", l.Divergences, l.Notice)
			}
			if st := l.SyncStats(); st.Events < 4800 || st.PerEvent() > 8 {
				t.Errorf("%d sync events, %.2f bytes each", st.Events, st.PerEvent())
			}
			ts.must("fred-log 4", `(?s)pthread_join +0.*pthread_rwlock_unlock +0.*sync events`)
		})
	}
}

// threadsScript is one debugger's words for a threads test.
type threadsScript struct {
	p                                   *P.Personality
	argv                                []string
	brk, brk2, stop2, cont, del, exited string
}

// TestThreadsReplayDiverges: after a restore the person makes one thread
// take another path (it skips a lock once): fred says once that the
// program left the log, and the threads, which would otherwise wait for
// turns that never come, record on to the end.
func TestThreadsReplayDiverges(t *testing.T) {
	testutil.Require(t, "gdb")
	ts := logSession(t, P.GDB, []string{"gdb", "-q", testutil.Fixture(t, "mt_interleave")}, "criu", false)
	ts.must("break 78", `Breakpoint 1`)
	ts.must("run", `Breakpoint 1, main`)
	ts.must("fred-checkpoint", `snapshot \d+ taken`)
	ts.must("delete", ``)
	ts.must("continue", `exited normally`)
	ts.must("fred-restart 1", `main`)
	ts.do("set var other = 1")
	out := ts.must("continue", `exited normally`)
	if n := strings.Count(out, "diverged"); n != 1 || !strings.Contains(out, "it called pthread_mutex_lock where the log has pthread_rwlock_rdlock") {
		t.Fatalf("want one divergence naming the calls:\n%s", out)
	}
	if !strings.Contains(mtOutcome(out), "n=1200") {
		t.Fatalf("the run did not finish:\n%s", out)
	}
}

// TestThreadsReverseInWorker: stopped in one worker in the middle of the
// run (a snapshot with every thread somewhere in its loop), a few
// statements forward and one back: the reverse step lands where it should,
// with the buffer as it was then, and running on from there, or from the
// restored snapshot, ends as the recorded run did.
func TestThreadsReverseInWorker(t *testing.T) {
	testutil.Require(t, "gdb")
	ts := logSession(t, P.GDB, []string{"gdb", "-q", testutil.Fixture(t, "mt_interleave")}, "criu", false)
	ts.must("break 44 if id == 1 && i == 100", `Breakpoint 1`)
	ts.must("run", `(?s)snapshot 1 taken at the program's start.*44\s+order\[n\+\+\]`)
	ts.must("delete", ``)
	ts.must("next", `45\s+mix`)
	n := ts.must("print n", `= \d+`)
	ts.must("next", `46\s+pthread_mutex_unlock`)
	ts.must("next", `47\s+if`)
	ts.must("fred-reverse-step", `46\s+pthread_mutex_unlock`)
	ts.must("print i", `= 100`)
	value := regexp.MustCompile(`= (\d+)`)
	if again := ts.must("print n", `= \d+`); value.FindString(again) != value.FindString(n) {
		t.Errorf("n after the reverse step: %q, before: %q", again, n)
	}
	first := mtOutcome(ts.must("continue", `exited normally`))
	if !strings.Contains(first, "n=1200") {
		t.Fatalf("the run did not finish:\n%s", first)
	}
	for i := 0; i < 2; i++ {
		ts.must("fred-restart 1", `main \(\)\s+at .*mt_interleave.c`) // snapshot 1: main's first line
		out := ts.must("continue", `exited normally`)
		if again := mtOutcome(out); again != first || strings.Contains(out, "diverged") {
			t.Fatalf("restore %d:\n%s\nthe first run from there:\n%s", i, out, first)
		}
	}
}

// A thread that blocks under scheduler locking is stopped where it waits,
// and the round-robin's command ends: after a snapshot and after a
// restore, the main thread too, which ran CRIU's parasite during the dump
// (its debug status made gdb ignore its stops).
func TestThreadsBlockedThreadStops(t *testing.T) {
	// (threads that block SIGINT, as a server's do, are stopped with a
	// SIGTRAP)
	for _, arg := range []string{"", "sigint"} {
		t.Run("args="+arg, func(t *testing.T) { testThreadsBlockedThreadStops(t, arg) })
	}
}

func testThreadsBlockedThreadStops(t *testing.T, arg string) {
	ts := gdbSession(t, "mt_block", "criu")
	th := ts.p.Threads
	ts.must("break 16", `Breakpoint 1`)
	ts.must(strings.TrimSpace("run "+arg), `Breakpoint 1, waiter`)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	check := func(when string) {
		t.Helper()
		all, err := ts.threads()
		if err != nil || len(all) != 2 {
			t.Fatalf("%s: threads %v, %v", when, all, err)
		}
		for _, x := range all {
			if _, err := ts.query(fmt.Sprintf(th.Select, x.LWP)); err != nil {
				t.Fatal(err)
			}
			// (main may not be in its join yet: a few statements get it
			// there)
			out, stuck, killed, err := "", false, false, error(nil)
			for i := 0; i < 5 && err == nil && !stuck; i++ {
				out, stuck, killed, err = ts.lockedRun(fmt.Sprintf(th.Locked, th.Step, rrStep.Seconds()))
			}
			if err != nil || killed || !stuck {
				t.Fatalf("%s: thread %d (%s): stuck %v, killed %v, %v:\n%s", when, x.Num, x.Function, stuck, killed, err, out)
			}
			c, err := ts.query(th.Current)
			if now := P.ParseThreads(c); err != nil || len(now) != 1 || !now[0].Waiting {
				t.Errorf("%s: thread %d is not stopped in a wait: %q %v", when, x.Num, c, err)
			}
		}
	}
	check("after a snapshot")
	ts.must("fred-restart 2", `waiter`)
	check("after a restore")
}

// TestThreadsReverseWatchFromMain is the way people start one: `break
// main`, `run`, no --from. Four threads, nothing forcing their turns
// (mt_sum, whose main fills the pool: the sum is 0 at main's first line
// as at the end, so the search looks for an earlier moment where it was
// 1000): `continue` to a breakpoint after they are joined, back and
// forward again over the whole run (the replay gives the same sum), then
// reverse-watch from the program's start finds the lost write and names
// its thread: the lost write, or, when another thread's move was under
// way (its unit taken from the pool, not yet given: the sum is 999), the
// give that completes it and takes the sum to 1001. Which it is depends
// on the run; the landing is
// checked by values and by one step of that thread alone. Twenty runs in
// a row, each recorded afresh.
func TestThreadsReverseWatchFromMain(t *testing.T) {
	named := regexp.MustCompile(`'sum\(\) == 1000' is 1 here; the next statement of thread (\d+) \(LWP \d+, "mt_sum"\), in (?:put at mt_sum.c:40|give at mt_sum.c:47), run alone, makes it 0`)
	// (a call in an expression runs only the selected thread with this)
	held := func(ts *tsession, expr string) string {
		out := ts.do("with scheduler-locking on -- print " + expr)
		m := regexp.MustCompile(`\$\d+ = (.*)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("print %s: %q", expr, out)
		}
		return strings.TrimSpace(m[1])
	}
	// A recording in which the threads happened not to overlap has no
	// bug to find: it is recorded again, and does not count.
	clean := 0
	for i := 0; i < 20; i++ {
		ts := gdbSession(t, "mt_sum", "criu")
		ts.do("break main")
		ts.must("run", `Breakpoint 1, main \(\)\s+at .*mt_sum.c:86`)
		ts.do("break 92")
		ts.must("continue", `hit Breakpoint 2, main \(\)\s+at .*mt_sum.c:92`)
		sum := ts.value("sum()")
		if sum == "1000" {
			if clean++; clean > 10 {
				t.Fatalf("the sum stayed 1000 in %d recordings: the fixture's bug does not happen", clean)
			}
			t.Logf("run %d: the sum stayed 1000; recording again", i)
			ts.Close()
			i--
			continue
		}
		ts.must("fred-reverse-continue", `mt_sum.c:\d+`)
		ts.must("continue", `hit Breakpoint 2, main \(\)\s+at .*mt_sum.c:92`)
		if again := ts.value("sum()"); again != sum {
			t.Fatalf("run %d: the replay's sum is %s, the recorded run's %s", i, again, sum)
		}
		out := ts.must("fred-reverse-watch sum() == 1000", named.String())
		th := named.FindStringSubmatch(out)[1]
		ts.must("info threads", `(?m)^\* `+th+` +Thread`)
		ts.must("bt", `(?s)#0  (?:put \(i=0, v=\d+\)\s+at .*mt_sum.c:40|give \(i=\d\)\s+at .*mt_sum.c:47)\r?\n#1  .* in mover \(arg=0x\d\)\s+at .*mt_sum.c:6[67]`)
		if v := held(ts, "sum() == 1000"); v != "1" {
			t.Fatalf("run %d: at the landing, sum() == 1000 is %s, want 1", i, v)
		}
		ts.do("set scheduler-locking step")
		ts.do("step")
		if v := held(ts, "sum() == 1000"); v != "0" {
			t.Fatalf("run %d: one step of thread %s: sum() == 1000 is %s, want 0", i, th, v)
		}
		ts.Close()
	}
}

// TestThreadsReverseWatchAgain: a multi-threaded search that fails on the
// way (a stretch of the threads that runs otherwise when replayed; here
// an injected failure of its first move) is made once more, and lands as
// one that did not fail. A single-threaded one says the failure
// (TestFaultsLeaveThePersonWhereTheyWere).
func TestThreadsReverseWatchAgain(t *testing.T) {
	ts := gdbSession(t, "mt_atomic", "criu")
	for _, c := range []string{"break 73", "run", "fred-checkpoint", "break 81", "continue"} {
		ts.do(c)
	}
	var out string
	withFault(faultError, func() { out = ts.do("fred-reverse-watch --from 2 balance + withdrawn <= 1000") })
	if !strings.Contains(out, errInjected.Error()+"; searching once more") {
		t.Fatalf("the failed search was not made once more:\n%s", out)
	}
	if !regexp.MustCompile(`is 1 here; the next statement of thread \d+ \(LWP \d+, "\w+"\), in write_balance at mt_atomic.c:33, run alone, makes it 0`).MatchString(out) {
		t.Fatalf("the second search did not land at teller 2's write:\n%s", out)
	}
	ts.must("bt", `#0  write_balance \(b=800, amount=100\)`)
}

// TestThreadsReverseWatchLastChange: a threaded program's expression
// changes into its present value many times (mt_last: level < 2 is 0
// whenever both workers hold a slot, and for good after the last move).
// reverse-watch lands on the last change, the run's last move, as a
// watchpoint with reverse-continue would, and names its thread; checked
// by values and one step of that thread alone.
func TestThreadsReverseWatchLastChange(t *testing.T) {
	ts := gdbSession(t, "mt_last", "criu")
	ts.do("break 51")
	ts.must("run", `hit Breakpoint 1, main \(\)\s+at .*mt_last.c:51`)
	const total = "162" // 2 * (2 * K + 1)
	if v := ts.value("moves"); v != total {
		t.Fatalf("moves is %s at the end, want %s", v, total)
	}
	named := regexp.MustCompile(`'level < 2' is 1 here; the next statement of thread (\d+) \(LWP \d+, "mt_last"\), in take at mt_last.c:19, run alone, makes it 0`)
	out := ts.must("fred-reverse-watch level < 2", named.String())
	if strings.Contains(out, "not ruled out") {
		t.Errorf("fred did not watch the run for a later change:\n%s", out)
	}
	th := named.FindStringSubmatch(out)[1]
	ts.must("info threads", `(?m)^\* `+th+` +Thread`)
	for x, want := range map[string]string{"level": "1", "moves": "161"} {
		if v := ts.value(x); v != want {
			t.Errorf("at the landing, %s is %s, want %s:\n%s", x, v, want, out)
		}
	}
	ts.do("set scheduler-locking step")
	ts.do("step")
	if v := ts.value("level < 2"); v != "0" {
		t.Fatalf("one step of thread %s: level < 2 is %s, want 0", th, v)
	}
}
