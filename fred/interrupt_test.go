package fred

import (
	"strings"
	"testing"
	"time"
)

// Ctrl-C reaches a program gdb runs after a restore, as before one.
func TestGDBInterruptAfterRestore(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts := gdbSession(t, "spin", backend)
		ts.must("break main", `Breakpoint 1`)
		ts.must("run", `Breakpoint 1, main`)
		ts.must("fred-checkpoint", `snapshot 2 taken`)
		spin := func() {
			t.Helper()
			go func() {
				time.Sleep(500 * time.Millisecond)
				ts.Interrupt()
			}()
			ts.must("continue", `received signal SIGINT`)
		}
		spin()
		ts.must("fred-restart 2", `main`)
		spin()
		ts.must("fred-restart 2", `main`)
		spin()
	})
}

// Ctrl-C stops a program that takes SIGINT itself (a signal thread in
// sigwait, as mariadbd's without --gdb), which gdb's own Ctrl-C never
// stops: fred stops it with a SIGTRAP, says so, and gdb keeps the SIGTRAP
// from the program, which runs on at the next continue.
func TestGDBInterruptProgramTakingSIGINT(t *testing.T) {
	defer func(d time.Duration) { nudgeWait = d }(nudgeWait)
	nudgeWait = time.Second
	ts := gdbSession(t, "sigwait", "criu")
	interrupt := func(cmd string) string {
		t.Helper()
		go func() {
			time.Sleep(500 * time.Millisecond)
			ts.Interrupt()
		}()
		return ts.must(cmd, `(?s)received signal SIGTRAP.*fred: the program did not stop at Ctrl-C \(it takes SIGINT itself`)
	}
	ts.do("break 35")
	ts.must("run", `Breakpoint 1, main`)
	ts.do("delete")
	interrupt("continue")
	if v := ts.value("sigints"); v != "1" {
		t.Fatalf("the program's signal thread took %s SIGINTs, want 1", v)
	}
	before := ts.value("counter")
	interrupt("continue")
	if v := ts.value("sigints"); v != "2" {
		t.Fatalf("the program's signal thread took %s SIGINTs, want 2", v)
	}
	if after := ts.value("counter"); after == before {
		t.Fatalf("the program did not run on after the SIGTRAP: counter %s both times", after)
	}
	// Going back into a continue that Ctrl-C ended, in a program with
	// threads, replays it (which may fail: the interrupt's moment is not
	// in the replay log); either way the program is where it was, with
	// its values, and Ctrl-C still stops it.
	out := ts.do("fred-reverse-step")
	if !strings.Contains(out, "took") && !strings.Contains(out, "you are back where you were") {
		t.Fatalf("fred-reverse-step neither landed nor brought the person back:\n%s", out)
	}
	if strings.Contains(out, "you are back where you were") {
		if v := ts.value("sigints"); v != "2" {
			t.Fatalf("back where they were, the program's signal thread took %s SIGINTs, want 2", v)
		}
	}
	interrupt("continue")
}
