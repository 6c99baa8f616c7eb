package fred

import (
	"strings"
	"testing"
	"time"

	P "github.com/fred-debugger/fred/personalities"
)

// Ctrl-C reaches a program after a restore, as before one: in each
// debugger, on each backend (a restored process takes the terminal back),
// the program spins, is interrupted, goes back to a snapshot where its
// counter is 0, and is interrupted again, twice.
func TestInterruptAfterRestore(t *testing.T) {
	cases := []struct {
		name    string
		start   func(t *testing.T, backend string) *tsession
		setup   [][2]string // command, what it answers
		goOn    string      // the debugger's continue
		stopped string      // what it says at Ctrl-C
		counter string      // the spin's counter, as the debugger writes it
		at      string      // where the snapshot is
	}{
		{"gdb", func(t *testing.T, b string) *tsession { return gdbSession(t, "spin", b) },
			[][2]string{{"break main", `Breakpoint 1`}, {"run", `Breakpoint 1, main`}},
			"continue", `received signal SIGINT`, "counter", `main`},
		{"pdb", func(t *testing.T, b string) *tsession { ts, _ := pdbSession(t, "spin.py", b); return ts },
			[][2]string{{"n", `\(2\)<module>\(\)`}, {"n", `\(3\)<module>\(\)`}},
			"c", `Program interrupted`, "count", `\(3\)<module>\(\)`},
		{"perl", func(t *testing.T, b string) *tsession { ts, _ := perlSession(t, "spin.pl", b); return ts },
			[][2]string{{"n", `spin.pl:3\)`}, {"n", `spin.pl:4\)`}},
			"c", `spin.pl:4\)`, "$count", `spin.pl:4\)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, backend)
				ts.mustAll(tc.setup)
				ts.must("fred-checkpoint", `snapshot 2 taken`)
				spin := func() {
					t.Helper()
					go func() {
						time.Sleep(400 * time.Millisecond)
						ts.Interrupt()
					}()
					ts.must(tc.goOn, tc.stopped)
					if st := ts.Timeline.Now().Stop; st != P.StopSignal {
						t.Errorf("Ctrl-C's stop is %v", st)
					}
					if c := ts.value(tc.counter); c == "0" {
						t.Fatalf("%s is %s after running", tc.counter, c)
					}
				}
				spin()
				for i := 0; i < 2; i++ {
					ts.must("fred-restart 2", tc.at)
					if c := ts.value(tc.counter); c != "0" {
						t.Fatalf("%s is %s after the restart, want 0", tc.counter, c)
					}
					spin()
				}
			})
		})
	}
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
