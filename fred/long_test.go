package fred

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	P "github.com/fred-debugger/fred/personalities"
)

// Long stretches in an in-process debugger: a continue of over a million
// statements is divided by `step`s counted in the program (steps.go), not
// refused, and every reverse command lands exactly.

// longIters makes bench_watch.py run about 1,050,000 of pdb's steps (7 an
// iteration).
const longIters = 150000

// A continue over a whole long loop: right after it, the last statement
// before the stop is the loop's last one; reverse-watch of the loop's
// invariant lands before the iteration at 90% that breaks it. In the
// scripts after the stop, {final} is the total there.
func TestLongContinue(t *testing.T) {
	cases := []struct {
		name    string
		start   starter
		fixture string
		n       int // iterations
		toEnd   []step
		total   string
		back    []step
	}{
		{"pdb", pdbStart, "bench_watch.py", longIters,
			[]step{{cmd: "b 21", out: `Breakpoint 1`}, {cmd: "c", out: `\(21\)<module>\(\)`}},
			"total",
			[]step{
				// The loop's last test.
				{cmd: "fred-reverse-step", out: `\(19\)<module>\(\)\r?\n-> for i in range\(n\):`,
					expr: "i, total", want: fmt.Sprintf("(%d, {final})", longIters-1)},
				{cmd: "fred-reverse-next", out: `\(20\)<module>\(\)\r?\n-> update\(i\)`, expr: "i", want: strconv.Itoa(longIters - 1)},
				{cmd: "c", out: `\(21\)<module>\(\)`},
				{cmd: "fred-reverse-watch total >= 0", out: `(?s)\(16\)update\(\)\r?\n-> total \+= v.*'total >= 0' is True here; the next step makes it False`,
					expr: "i, total >= 0", want: fmt.Sprintf("(%d, True)", longIters*9/10)},
				{cmd: "step", out: `--Return--`, expr: "total >= 0", want: "False"},
				{cmd: "c", out: `\(21\)<module>\(\)`, expr: "total", want: "{final}"},
			}},
		{"perl", perlStart, "bench_watch.pl", longIters * 2, // 5 statements an iteration
			[]step{{cmd: "b 21", out: `^$`}, {cmd: "c", out: `bench_watch.pl:21\):`}},
			"$total",
			[]step{
				// The last update's last statement.
				{cmd: "fred-reverse-step", out: `bench_watch.pl:15\):\r?\n15:\s+\$total \+= \$v;`,
					expr: `"$i $total"`, want: fmt.Sprintf("%d {final}", longIters*2-1)},
				{cmd: "c", out: `bench_watch.pl:21\):`},
				{cmd: "fred-reverse-watch $total >= 0", out: `(?s)bench_watch.pl:15\):\r?\n15:\s+\$total \+= \$v;.*'\$total >= 0' is 1 here; the next step makes it ""`,
					expr: `"$i " . ($total >= 0 ? "ok" : "broken")`, want: fmt.Sprintf("%d ok", longIters*2*9/10)},
				{cmd: "s", out: `bench_watch.pl:19\)`, expr: `$total >= 0 ? "ok" : "broken"`, want: "broken"},
				{cmd: "c", out: `bench_watch.pl:21\):`, expr: "$total", want: "{final}"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				ts := tc.start(t, tc.fixture, backend, strconv.Itoa(tc.n))
				ts.play(tc.toEnd)
				ts.play(tc.back, "{final}", ts.value(tc.total))
			})
		})
	}
}

// A breakpoint passed 75,000 times by its ignore count: going back to
// where it stopped brings its count back too. The stop lies mid-run, so
// the continue leaves probes before it from which the ignore count, set
// afresh, would stop a count 75,000 crossings too late.
func TestPDBLongIgnoreCount(t *testing.T) {
	ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", script("bench_watch.py"), strconv.Itoa(longIters)}, "fork")
	ts.must("b 21", `Breakpoint 1`)
	ts.must("b 16", `Breakpoint 2`)
	ts.must("ignore 2 75000", `Will ignore next 75000 crossings of breakpoint 2`)
	ts.must("c", `\(16\)update\(\)`)
	if v := ts.value("i"); v != "75000" {
		t.Fatalf("stopped with i = %s", v)
	}
	ts.must("disable 2", `Disabled breakpoint 2`)
	ts.must("c", `\(21\)<module>\(\)`)
	ts.must("fred-reverse-continue", `\(16\)update\(\)`)
	if v := ts.value("i"); v != "75000" {
		t.Fatalf("reverse-continue landed with i = %s", v)
	}
	ts.must("fred-reverse-step", `\(15\)update\(\)|\(14\)update\(\)`)
	if v := ts.value("i"); v != "75000" {
		t.Fatalf("reverse-step landed with i = %s", v)
	}
	ts.must("enable 2", `Enabled breakpoint 2`)
	ts.must("c", `\(16\)update\(\)`)
	ts.must("c", `\(16\)update\(\)`)
	if v := ts.value("i"); v != "75001" {
		t.Fatalf("the next stop has i = %s, want 75001", v)
	}
}

// One `next` over a call of a million steps: reverse-step lands on the
// call's last stop, reverse-watch inside it. Under gdb, a change inside
// one `next` over a call of millions of statements: the call's return is
// a continue to its return address, divided as any long continue (the
// same call left by a finish too), and fred's memory stays bounded.
func TestLongNext(t *testing.T) {
	const pdbN, perlN = 350000, 500000 // 3 steps an iteration; 2 statements
	cases := []struct {
		name     string
		start    starter
		fixture  string
		args     []string
		backends []string // all if none
		script   []step
		bounded  bool // check fred's peak memory
	}{
		{"gdb", gdbStart, "next_long", nil, []string{"auto"}, []step{
			{cmd: "break main", out: `Breakpoint 1`},
			{cmd: "run", out: `Breakpoint 1, main`},
			{cmd: "next", out: `30\t`},
			{cmd: "fred-reverse-watch flag == 1", out: `add \(i=2718281\)\s+at .*next_long.c:17`, expr: "flag", want: "0"},
			{cmd: "next", out: `18\t`, expr: "flag", want: "1"}, // one step after the landing
			{cmd: "fred-restart 1", out: `main \(\)\s+at .*next_long.c:29`},
			{cmd: "next", out: `30\t`},
			{cmd: "fred-reverse-step", out: `next_long.c:25`, expr: "i", want: "3000000"},
			{cmd: "fred-reverse-finish", out: `main \(\)\s+at .*next_long.c:29`},
			// The same call left by a finish.
			{cmd: "fred-restart 1", out: `main \(\)\s+at .*next_long.c:29`},
			{cmd: "step", out: `run \(\)\s+at .*next_long.c:23`},
			{cmd: "finish", out: `Run till exit`},
			{cmd: "fred-reverse-watch flag == 1", out: `add \(i=2718281\)\s+at .*next_long.c:17`},
		}, true},
		{"lldb", lldbStart, "next_long", nil, []string{"auto"}, []step{
			{cmd: "b main", out: `Breakpoint 1`},
			{cmd: "run", out: `stop reason = breakpoint 1`},
			{cmd: "next", out: `next_long.c:30`},
			{cmd: "fred-reverse-watch flag == 1", out: "add\\(i=2718281\\) at next_long.c:17", expr: "flag", want: "0"},
			{cmd: "next", out: `next_long.c:18`, expr: "flag", want: "1"},
			{cmd: "fred-restart 1", out: "main at next_long.c:29"},
			{cmd: "next", out: `next_long.c:30`},
			{cmd: "fred-reverse-step", out: `next_long.c:25`, expr: "i", want: "3000000"},
			{cmd: "fred-reverse-finish", out: "main at next_long.c:29"},
		}, false},
		{"pdb", pdbStart, "long_call.py", []string{strconv.Itoa(pdbN)}, nil, []step{
			{cmd: "b main", out: `Breakpoint 1`},
			{cmd: "c", out: `\(18\)main\(\)`},
			{cmd: "n", out: `\(19\)main\(\)`},
			{cmd: "fred-reverse-step", out: `--Return--\r?\n> .*long_call.py\(15\)work\(\)->\d+\r?\n-> return t`, expr: "i", want: strconv.Itoa(pdbN - 1)},
			{cmd: "fred-reverse-finish", out: `\(18\)main\(\)`},
			{cmd: "n", out: `\(19\)main\(\)`},
			{cmd: "fred-reverse-watch broken == 1", out: `\(14\)work\(\)\r?\n-> broken = 1`, expr: "i, broken", want: fmt.Sprintf("(%d, 0)", pdbN*9/10)},
			{cmd: "step", out: `\(11\)work\(\)`, expr: "broken", want: "1"}, // one step after the landing
		}, false},
		{"perl", perlStart, "long_call.pl", []string{strconv.Itoa(perlN)}, nil, []step{
			{cmd: "b main", out: `^$`},
			{cmd: "c", out: `long_call.pl:20\):`},
			{cmd: "n", out: `long_call.pl:21\):`},
			{cmd: "fred-reverse-step", out: `long_call.pl:16\):\r?\n16:\s+return \$t;`},
			{cmd: "fred-reverse-step", out: `long_call.pl:14\):`, expr: "$i", want: strconv.Itoa(perlN - 1)},
			{cmd: "n", out: `long_call.pl:13\):|long_call.pl:16\):`},
			{cmd: "r", out: `long_call.pl:21\):`},
			{cmd: "fred-reverse-watch $broken == 1", out: `long_call.pl:14\):`, expr: `"$i $broken"`, want: fmt.Sprintf("%d 0", perlN*9/10)},
			{cmd: "s", out: `long_call.pl:13\):`, expr: "$broken", want: "1"}, // one step after the landing
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bs := tc.backends
			if bs == nil {
				bs = backends
			}
			for _, backend := range bs {
				t.Run(backend, func(t *testing.T) {
					tc.start(t, tc.fixture, backend, tc.args...).play(tc.script)
					if hwm := peakRSS(t); tc.bounded && hwm > 1<<30 {
						t.Errorf("fred's peak memory: %d MB", hwm>>20)
					}
				})
			}
		})
	}
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

// gdb's ignore count is part of where a continue stopped: a replay of the
// run after the count ran out stopped at the first crossing (i = 0), and
// reverse-step landed there. Going back to the stop replays the count;
// going inside such a continue is refused (each command fred runs there
// would start the count afresh), and the program stays where it was.
func TestGDBIgnoreCountReplayed(t *testing.T) {
	ts := gdbStart(t, "watch_long", "auto")
	ts.play([]step{
		{cmd: "break 15", out: `Breakpoint 1 at`},
		{cmd: "ignore 1 500", out: `Will ignore next 500 crossings of breakpoint 1`},
		{cmd: "run", out: `Breakpoint 1, add \(i=500\)`},
		{cmd: "disable 1"},
		{cmd: "break 25", out: `Breakpoint 2 at`},
		{cmd: "continue", out: `Breakpoint 2, main`},
		{cmd: "fred-reverse-continue", out: `add \(i=500\)`, expr: "i", want: "500"},
		{cmd: "fred-reverse-step", out: `ignore count \(breakpoint 1 at .*watch_long.c:15\) is not supported.*you are back where you were`, expr: "i", want: "500"},
		{cmd: "frame", out: `watch_long.c:15`},
		{cmd: "enable 1"},
		{cmd: "continue", out: `Breakpoint 1, add \(i=501\)`},
	})
}

// An ignore count used up by the command that ran with it: the commands
// after run without it. fred's list of breakpoints kept "ignore 5" until a
// breakpoint command re-read it, so the replay of the run used the
// person's breakpoint, whose count gdb had spent, and stopped at i = 0.
func TestGDBIgnoreCountUsedUp(t *testing.T) {
	ts := gdbStart(t, "watch_long", "auto")
	ts.play([]step{
		{cmd: "break 15", out: `Breakpoint 1 at`},
		{cmd: "ignore 1 5", out: `Will ignore next 5 crossings of breakpoint 1`},
		{cmd: "run", out: `Breakpoint 1, add \(i=5\)`},
		{cmd: "next", out: `16\t`},
		{cmd: "fred-reverse-continue", out: `add \(i=5\)`, expr: "i", want: "5"},
		{cmd: "continue", out: `Breakpoint 1, add \(i=6\)`},
	})
}

// crossedCounts: only a count that went down (or ran out) in the history
// was crossed; one that stayed as it was is not refused.
func TestCrossedCounts(t *testing.T) {
	s := &Session{p: P.GDB, bps: []string{"*0x1 ignore 3", "*0x2 ignore 7"}}
	steps := []history.Step{
		{Bps: []string{"*0x1 ignore 5", "*0x2 ignore 7"}},
		{Bps: []string{"*0x1 ignore 3", "*0x2 ignore 7"}},
		{Bps: []string{"*0x1 ignore 3", "*0x2 ignore 7", "*0x3"}},
	}
	got := s.crossedCounts(steps)
	if want := map[string]bool{"*0x1 ignore 5": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("crossed %v, want %v", got, want)
	}
	s.crossed = got
	if err := s.passesIn([]string{"*0x2 ignore 7"}); err != nil {
		t.Errorf("a count that never moved refused: %v", err)
	}
	var pe *PassesError
	if err := s.passesIn([]string{"*0x1 ignore 5", "*0x3"}); !errors.As(err, &pe) {
		t.Errorf("a crossed count: %v, want a PassesError", err)
	}
}
