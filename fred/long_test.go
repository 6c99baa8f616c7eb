package fred

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fred-debugger/fred/fred/rewrite"
	P "github.com/fred-debugger/fred/personalities"
)

// Long stretches in an in-process debugger: a continue of over a million
// statements is divided by `step`s counted in the program (steps.go), not
// refused, and every reverse command lands exactly.

// longIters makes bench_watch.py run about 1,050,000 of pdb's steps (7 an
// iteration).
const longIters = 150000

func TestPDBLongContinue(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", script("bench_watch.py"), strconv.Itoa(longIters)}, backend)
		bad := strconv.Itoa(longIters * 9 / 10)
		ts.must("b 21", `Breakpoint 1`)
		ts.must("c", `\(21\)<module>\(\)`)
		final := ts.value("total")
		// Right after the continue: the last statement before the stop is
		// the loop's last test.
		ts.must("fred-reverse-step", `\(19\)<module>\(\)\r?\n-> for i in range\(n\):`)
		if v := ts.value("i, total"); v != "("+strconv.Itoa(longIters-1)+", "+final+")" {
			t.Fatalf("after reverse-step: i, total = %s, want the last iteration's", v)
		}
		ts.must("fred-reverse-next", `\(20\)<module>\(\)\r?\n-> update\(i\)`)
		if v := ts.value("i"); v != strconv.Itoa(longIters-1) {
			t.Fatalf("after reverse-next: i = %s", v)
		}
		ts.must("c", `\(21\)<module>\(\)`)
		out := ts.must("fred-reverse-watch total >= 0", `\(16\)update\(\)\r?\n-> total \+= v`)
		if !regexp.MustCompile(`'total >= 0' is True here; the next step makes it False`).MatchString(out) {
			t.Fatalf("reverse-watch:\n%s", out)
		}
		if v := ts.value("i, total >= 0"); v != "("+bad+", True)" {
			t.Fatalf("landed with i, total >= 0 = %s, want (%s, True)", v, bad)
		}
		ts.must("step", `--Return--`)
		if v := ts.value("total >= 0"); v != "False" {
			t.Fatalf("one step after the landing, total >= 0 is %s", v)
		}
		ts.must("c", `\(21\)<module>\(\)`)
		if v := ts.value("total"); v != final {
			t.Fatalf("forward again to the end: total %s, want %s", v, final)
		}
	})
}

// A breakpoint passed a hundred thousand times by its ignore count: going
// back to where it stopped brings its count back too.
func TestPDBLongIgnoreCount(t *testing.T) {
	ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", script("bench_watch.py"), strconv.Itoa(longIters)}, "fork")
	ts.must("b 21", `Breakpoint 1`)
	ts.must("b 16", `Breakpoint 2`)
	ts.must("ignore 2 135000", `Will ignore next 135000 crossings of breakpoint 2`)
	ts.must("c", `\(16\)update\(\)`)
	if v := ts.value("i"); v != "135000" {
		t.Fatalf("stopped with i = %s", v)
	}
	ts.must("disable 2", `Disabled breakpoint 2`)
	ts.must("c", `\(21\)<module>\(\)`)
	ts.must("fred-reverse-continue", `\(16\)update\(\)`)
	if v := ts.value("i"); v != "135000" {
		t.Fatalf("reverse-continue landed with i = %s", v)
	}
	ts.must("fred-reverse-step", `\(15\)update\(\)|\(14\)update\(\)`)
	if v := ts.value("i"); v != "135000" {
		t.Fatalf("reverse-step landed with i = %s", v)
	}
	ts.must("enable 2", `Enabled breakpoint 2`)
	ts.must("c", `\(16\)update\(\)`)
	ts.must("c", `\(16\)update\(\)`)
	if v := ts.value("i"); v != "135001" {
		t.Fatalf("the next stop has i = %s, want 135001", v)
	}
}

func TestPerlLongContinue(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", script("bench_watch.pl"), strconv.Itoa(longIters * 2)}, backend)
		n := longIters * 2 // 5 statements an iteration
		bad := strconv.Itoa(n * 9 / 10)
		ts.out.take() // perl5db's greeting
		ts.must("b 21", `^$`)
		ts.must("c", `bench_watch.pl:21\):`)
		final := ts.evalValue("$total")
		// The last statement before the stop: the last update's last one.
		ts.must("fred-reverse-step", `bench_watch.pl:15\):\r?\n15:\s+\$total \+= \$v;`)
		if v := ts.evalValue(`"$i $total"`); v != strconv.Itoa(n-1)+" "+final {
			t.Fatalf("after reverse-step: i total = %s, want the last iteration's (%d %s)", v, n-1, final)
		}
		ts.must("c", `bench_watch.pl:21\):`)
		out := ts.must("fred-reverse-watch $total >= 0", `bench_watch.pl:15\):\r?\n15:\s+\$total \+= \$v;`)
		if !regexp.MustCompile(`'\$total >= 0' is 1 here; the next step makes it ""`).MatchString(out) {
			t.Fatalf("reverse-watch:\n%s", out)
		}
		if v := ts.evalValue(`"$i " . ($total >= 0 ? "ok" : "broken")`); v != bad+" ok" {
			t.Fatalf("landed with %s, want %s ok", v, bad)
		}
		ts.must("s", `bench_watch.pl:19\)`)
		if v := ts.evalValue(`$total >= 0 ? "ok" : "broken"`); v != "broken" {
			t.Fatalf("one step after the landing: %s", v)
		}
		ts.must("c", `bench_watch.pl:21\):`)
		if v := ts.evalValue("$total"); v != final {
			t.Fatalf("forward again to the end: total %s, want %s", v, final)
		}
	})
}

// One `next` over a call of a million steps: reverse-step lands on the
// call's last stop, reverse-watch inside it.
func TestPDBLongNext(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		const n = 350000 // 3 steps an iteration
		ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", script("long_call.py"), strconv.Itoa(n)}, backend)
		ts.must("b main", `Breakpoint 1`)
		ts.must("c", `\(18\)main\(\)`)
		ts.must("n", `\(19\)main\(\)`)
		ts.must("fred-reverse-step", `--Return--\r?\n> .*long_call.py\(15\)work\(\)->\d+\r?\n-> return t`)
		if v := ts.value("i"); v != strconv.Itoa(n-1) {
			t.Fatalf("after reverse-step: i = %s", v)
		}
		ts.must("fred-reverse-finish", `\(18\)main\(\)`)
		ts.must("n", `\(19\)main\(\)`)
		ts.must("fred-reverse-watch broken == 1", `\(14\)work\(\)\r?\n-> broken = 1`)
		if v := ts.value("i, broken"); v != "("+strconv.Itoa(n*9/10)+", 0)" {
			t.Fatalf("reverse-watch landed with i, broken = %s", v)
		}
		ts.must("step", `\(11\)work\(\)`)
		if v := ts.value("broken"); v != "1" {
			t.Fatalf("one step after the landing: broken = %s", v)
		}
	})
}

func TestPerlLongNext(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		const n = 500000 // 2 statements an iteration
		ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", script("long_call.pl"), strconv.Itoa(n)}, backend)
		ts.out.take()
		ts.must("b main", `^$`)
		ts.must("c", `long_call.pl:20\):`)
		ts.must("n", `long_call.pl:21\):`)
		ts.must("fred-reverse-step", `long_call.pl:16\):\r?\n16:\s+return \$t;`)
		ts.must("fred-reverse-step", `long_call.pl:14\):`)
		if v := ts.evalValue("$i"); v != strconv.Itoa(n-1) {
			t.Fatalf("after reverse-step: i = %s", v)
		}
		ts.must("n", `long_call.pl:13\):|long_call.pl:16\):`)
		ts.must("r", `long_call.pl:21\):`)
		ts.must("fred-reverse-watch $broken == 1", `long_call.pl:14\):`)
		if v := ts.evalValue(`"$i $broken"`); v != strconv.Itoa(n*9/10)+" 0" {
			t.Fatalf("reverse-watch landed with i broken = %s", v)
		}
		ts.must("s", `long_call.pl:13\):`)
		if v := ts.evalValue("$broken"); v != "1" {
			t.Fatalf("one step after the landing: broken = %s", v)
		}
	})
}

// perl's watch expressions (`w`) and tracing (`t`) do not stop fred from
// counting a long stretch in steps: a `n` that a watch expression stops
// deep inside a call of more statements than fred would walk by `next`s
// (rewrite.MaxWalk) goes back exactly, and so does a traced `c` over all of them.
func TestPerlLongStretchWatchedAndTraced(t *testing.T) {
	const n = 60000 // 2 statements an iteration: more than rewrite.MaxWalk in all
	if 2*n <= rewrite.MaxWalk {
		t.Fatalf("the loop (%d statements) must be longer than fred walks by nexts (%d)", 2*n, rewrite.MaxWalk)
	}
	bad := n * 9 / 10
	forBackends(t, func(t *testing.T, backend string) {
		ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", script("long_call.pl"), strconv.Itoa(n)}, backend)
		ts.do("b 20")
		ts.must("c", `long_call.pl:20\):`)
		ts.do("w $broken")
		ts.must("n", `(?s)Watchpoint 0:\s+\$broken changed:\s+old value:\s+'0'\s+new value:\s+'1'.*long_call.pl:13\):`)
		if v := ts.evalValue("$i"); v != strconv.Itoa(bad+1) {
			t.Fatalf("the watch stopped at i = %s, want %d", v, bad+1)
		}
		ts.must("fred-reverse-step", `long_call.pl:14\):`)
		if v := ts.evalValue(`"$i $broken"`); v != strconv.Itoa(bad)+" 0" {
			t.Fatalf("reverse-step from the watch's stop: i broken = %s, want %d 0", v, bad)
		}
		// That c stopped at its first statement, where the watch fired.
		// Going back over it restores the snapshot fred kept near the
		// end of the long stretch, with the watch on there: fred's
		// reloading of the watch must not run into perl5db's watch
		// checks (it stopped the debugger inside strict.pm).
		ts.must("c", `(?s)Watchpoint 0:\s+\$broken changed:\s+old value:\s+'0'\s+new value:\s+'1'.*long_call.pl:13\):`)
		ts.must("fred-reverse-step", `long_call.pl:14\):`)
		if v := ts.evalValue(`"$i $broken"`); v != strconv.Itoa(bad)+" 0" {
			t.Fatalf("reverse-step over a c of one statement: i broken = %s, want %d 0", v, bad)
		}
		ts.do("W *")
		ts.do("B *")
		if backend != "fork" {
			return
		}
		// Traced from the start: every statement's line goes by.
		ts.must("fred-restart 1", `long_call.pl`)
		ts.do("b 16")
		ts.must("t", `Trace = on`)
		out := ts.must("c", `long_call.pl:16\):`)
		if k := strings.Count(out, "long_call.pl:13):"); k < n/2 {
			t.Fatalf("the traced c showed line 13 %d times, want about %d", k, n)
		}
		ts.must("t", `Trace = off`)
		ts.must("fred-reverse-step", `long_call.pl:14\):`)
		if v := ts.evalValue(`"$i $broken"`); v != strconv.Itoa(n-1)+" 1" {
			t.Fatalf("reverse-step after the traced c: i broken = %s, want %d 1", v, n-1)
		}
	})
}

// Reverse commands over one `n` that reads a file far past perl's read
// buffer: the snapshots fred takes inside it on the way (a fork each)
// leave the file's offset alone, so the reads replayed after them are the
// ones the program made (CORE::fork's flush once moved it: the count ran
// to the program's end).
func TestPerlLongNextReadsAFile(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		const lines = 12000
		data := filepath.Join(t.TempDir(), "data.txt")
		var b strings.Builder
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&b, "line %06d of the data\n", i)
		}
		if err := os.WriteFile(data, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d %d", lines, b.Len())
		ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", script("read_long.pl"), data}, backend)
		ts.out.take()
		ts.must("b 19", `^$`)
		ts.must("c", `read_long.pl:19\):`)
		ts.must("n", `read_long.pl:20\):`)
		if v := ts.evalValue("$r"); v != want {
			t.Fatalf("after n: r = %s, want %s", v, want)
		}
		ts.must("fred-reverse-next", `read_long.pl:19\):`)
		ts.must("n", `read_long.pl:20\):`)
		if v := ts.evalValue("$r"); v != want {
			t.Fatalf("after going back and n again: r = %s, want %s", v, want)
		}
		ts.must("fred-reverse-step", `read_long.pl:15\):`)
		if v := ts.evalValue(`"$lines $sum"`); v != want {
			t.Fatalf("after reverse-step into tally: %s, want %s", v, want)
		}
	})
}

// Ctrl-C while fred counts a long stretch's steps: the person is back
// where they were, and the program goes on as before.
func TestPDBInterruptLongWatch(t *testing.T) {
	const n = 1400000 // about 10,000,000 steps: seconds a count
	ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", script("bench_watch.py"), strconv.Itoa(n)}, "fork")
	ts.must("b 21", `Breakpoint 1`)
	ts.must("c", `\(21\)<module>\(\)`)
	final := ts.value("total")
	go func() {
		time.Sleep(500 * time.Millisecond)
		ts.Interrupt()
	}()
	ts.must("fred-reverse-watch total >= 0", `'fred-reverse-watch' interrupted; you are back where you were`)
	ts.must("where", `\(21\)<module>\(\)`)
	if v := ts.value("i, total"); v != "("+strconv.Itoa(n-1)+", "+final+")" {
		t.Fatalf("after the interrupt: i, total = %s", v)
	}
	ts.must("c", `total=`+final+` bad=\d+\r?\nThe program finished`)
}

func TestPerlInterruptLongStep(t *testing.T) {
	const n = 2000000 // 10,000,000 statements
	ts, _ := inprocSession(t, P.Perl, []string{"perl", "-d", script("bench_watch.pl"), strconv.Itoa(n)}, "fork")
	ts.out.take()
	ts.must("b 21", `^$`)
	ts.must("c", `bench_watch.pl:21\):`)
	final := ts.evalValue("$total")
	go func() {
		time.Sleep(500 * time.Millisecond)
		ts.Interrupt()
	}()
	ts.must("fred-reverse-step", `'fred-reverse-step' interrupted; you are back where you were`)
	ts.must("fred-list", `.`)
	if v := ts.evalValue("$total"); v != final {
		t.Fatalf("after the interrupt: total = %s, want %s", v, final)
	}
	ts.must("c", `total=`+final+` bad=\d+`)
}

// A change inside one gdb `next` over a call of millions of statements:
// the call's return is a continue to its return address, divided as any
// long continue, and fred's memory stays bounded.
func TestGDBLongNext(t *testing.T) {
	ts := gdbSession(t, "next_long", "auto")
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `Breakpoint 1, main`)
	ts.must("next", `30\t`)
	ts.must("fred-reverse-watch flag == 1", `add \(i=2718281\) at .*next_long.c:17`)
	if v := ts.value("flag"); v != "0" {
		t.Fatalf("landed with flag = %s", v)
	}
	ts.must("next", `18\t`)
	if v := ts.value("flag"); v != "1" {
		t.Fatalf("one step after the landing: flag = %s", v)
	}
	ts.must("fred-restart 1", `main \(\) at .*next_long.c:29`)
	ts.must("next", `30\t`)
	ts.must("fred-reverse-step", `next_long.c:25`)
	if v := ts.value("i"); v != "3000000" {
		t.Fatalf("reverse-step after the next: i = %s", v)
	}
	ts.must("fred-reverse-finish", `main \(\) at .*next_long.c:29`)
	// The same call left by a finish.
	ts.must("fred-restart 1", `main \(\) at .*next_long.c:29`)
	ts.must("step", `run \(\) at .*next_long.c:23`)
	ts.must("finish", `Run till exit`)
	ts.must("fred-reverse-watch flag == 1", `add \(i=2718281\) at .*next_long.c:17`)
	if hwm := peakRSS(t); hwm > 1<<30 {
		t.Errorf("fred's peak memory: %d MB", hwm>>20)
	}
}

// peakRSS is this process's peak resident memory, in bytes.
func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/self/status")
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// A program that reads input and then runs a long loop: the counted
// replays take the input from the replay log, not the terminal.
func TestPDBLongAfterInput(t *testing.T) {
	ts, in := pdbSession(t, "input.py", "fork")
	ts.must("b 20", `Breakpoint 1`)
	in.type_("fred\n")
	in.type_("600000\n") // 1,200,000 steps
	ts.must("c", `(?s)hello fred .*\(20\)main\(\)`)
	ts.must("fred-reverse-watch total > 10**11", `\(19\)main\(\)\r?\n-> total \+= i`)
	if v := ts.value("total <= 10**11 < total + i, name"); v != "(True, 'fred')" {
		t.Fatalf("landed where total, i = %s", v)
	}
	ts.must("c", `\(20\)main\(\)`)
	ts.must("c", `total=179999700000 pid=\d+`)
}
