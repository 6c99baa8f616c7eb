package fred

import (
	"errors"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	"github.com/fred-debugger/fred/fred/timed"
	"golang.org/x/sys/unix"

	P "github.com/fred-debugger/fred/personalities"
)

// A continue over millions of statements: the search divides it by run
// time, then by counting executions of the loop's line, and lands on the
// one call that breaks the invariant.

// passesRe finds a hit count in fred-history: "277 passes of main at
// watch.c:20".
var passesRe = regexp.MustCompile(`\d+ pass(es)? of `)

func TestReverseWatchLongContinue(t *testing.T) { forBackends(t, testReverseWatchLong) }

// The same with the interrupts timed from outside, as where the kernel
// keeps no CPU-time alarm for fred (not root, perf_event_paranoid 2).
func TestReverseWatchLongContinueTimedFromOutside(t *testing.T) {
	defer func(a bool) { timed.ClockAlarms = a }(timed.ClockAlarms)
	timed.ClockAlarms = false
	testReverseWatchLong(t, "fork")
}

func testReverseWatchLong(t *testing.T, backend string) {
	ts := gdbSession(t, "watch_long", backend)
	ts.do("skip -gfi ./*/*")
	ts.runTo("run", "break 26", `Breakpoint 2, main`)
	out := ts.must("fred-reverse-watch flag == 1", `add \(i=2718281\)\s+at .*watch_long.c:17`)
	m := regexp.MustCompile(`(\d+) native probes`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("the search did not divide the continue natively:\n%s", out)
	}
	if v := ts.value("flag == 1"); v != "0" {
		t.Fatalf("after the watch, flag == 1 is %s, want 0", v)
	}
	if v := ts.value("i"); v != "2718281" {
		t.Fatalf("landed in call %s, want 2718281", v)
	}
	if err := hitsCount(); err != nil {
		t.Logf("no debug registers here (%v): gdb's breakpoints counted the executions", err)
	}
	if !passesRe.MatchString(ts.do("fred-history")) {
		t.Fatalf("the history does not name the counted executions:\n%s", ts.do("fred-history"))
	}
	ts.must("step", `18\s+}`)
	if v := ts.value("flag"); v != "1" {
		t.Fatalf("one step after the landing, flag is %s, want 1", v)
	}
	// Back and forth over a history that holds a hit count: reverse-step
	// replays it (from a snapshot or the anchor) and lands in the same call.
	ts.must("fred-reverse-step", `17\s+flag = 1;`)
	if v := ts.value("i"); v != "2718281" {
		t.Fatalf("reverse-step left call 2718281 for %s", v)
	}
	ts.must("fred-reverse-step", `16\s+if \(i == BAD\)`)
	if v := ts.value("flag"); v != "0" {
		t.Fatalf("two reverse-steps back, flag is %s, want 0", v)
	}
	ts.must("continue", `Breakpoint 2, main`)
	if v := ts.value("total"); v != strconv.Itoa(3000000/8*28) {
		t.Fatalf("the run after going back ends with total %s, want %d", v, 3000000/8*28)
	}
}

// A scan of counted executions that stops short of the continue's stop
// (the stretch is too long to count) leaves the rest to the `next`s from
// its last count to the stop. (It once refined only the pass after the
// last count, and the search landed there, in the wrong place.)
func TestReverseWatchScanStopsShort(t *testing.T) {
	defer func(n time.Duration, m int) { minNative, maxScanStep = n, m }(minNative, maxScanStep)
	minNative, maxScanStep = time.Hour, 64 // no run-time probes; one scan of 64
	if hitsCount() != nil {
		maxScanStep = 4 * 64 // gdb's breakpoints count: a quarter of it (hitsLimit)
	}
	ts := gdbSession(t, "watch", "fork")
	ts.do("skip -gfi ./*/*")
	ts.runTo("run", "break 21", `Breakpoint 2, main`)
	ts.must("fred-reverse-watch sum >= 0", `update \(i=277\)\s+at .*watch.c:13`)
	if h := ts.do("fred-history"); !passesRe.MatchString(h) {
		t.Fatalf("the search made no scan, so this tests nothing:\n%s", h)
	}
	ts.must("step", `14\s+}`)
	if v := ts.value("sum >= 0"); v != "0" {
		t.Fatalf("one step after the landing, sum >= 0 is %s, want 0", v)
	}
}

// Without native probes and hit counts the same watch is refused: the
// continue is too long to count one `next` at a time. This is what the
// test above would fail on.
func TestReverseWatchLongNeedsNativeProbes(t *testing.T) {
	old, oldWalk := nativeProbes, rewrite.MaxWalk
	nativeProbes, rewrite.MaxWalk = false, 3000 // refused sooner, same path
	defer func() { nativeProbes, rewrite.MaxWalk = old, oldWalk }()
	ts := gdbSession(t, "watch_long", "criu")
	ts.do("skip -gfi ./*/*")
	ts.runTo("run", "break 26", `Breakpoint 2, main`)
	ts.must("fred-reverse-watch flag == 1", `more than 3000 statements`)
	ts.must("frame", `main \(\)\s+at .*watch_long.c:26`)
}

// A live hit count serves as the start of a longer one: going from "k
// executions" to "k+n" runs only n more.
func TestAlongHitCounts(t *testing.T) {
	base := []history.Step{{Cmd: P.Command{Line: "continue", Op: P.OpContinue, Count: 1}}}
	at := func(k int, addr uint64) []history.Step { return history.With(base, hitsStep(addr, k, nil)) }
	if at, done, ok := along(at(10, 0x40), at(25, 0x40)); !ok || at != 1 || done != 10 {
		t.Fatalf("along(hits 10, hits 25) = %d, %d, %v; want 1, 10, true", at, done, ok)
	}
	if _, _, ok := along(at(10, 0x40), at(25, 0x48)); ok {
		t.Fatal("hits of another instruction must not count")
	}
	if _, _, ok := along(at(30, 0x40), at(25, 0x40)); ok {
		t.Fatal("a later count is not on the way to an earlier one")
	}
}

// Distances between probes are trusted only when runs from one starting
// moment measured them; across starting moments they are estimates.
func TestSpanMeasuredFromOneStart(t *testing.T) {
	ms := time.Millisecond
	w := &watchProgram{endFrom: map[string]time.Duration{}}
	cont := history.Step{Cmd: P.Command{Line: "continue", Op: P.OpContinue, Count: 1}, Took: 10 * ms}
	st := stretch{cont: cont, offB: -1}
	w.endFrom[w.endKey(st)+"|start"] = 5 * ms
	p1 := &probe{id: 1, from: "start", rel: 2 * ms, off: 2 * ms}
	p2 := &probe{id: 2, from: "p1", rel: 1 * ms, off: 3 * ms}
	p3 := &probe{id: 3, from: "p1", rel: 400 * time.Microsecond, off: 2400 * time.Microsecond}
	p4 := &probe{id: 4, from: "p3", rel: 100 * time.Microsecond, off: 2500 * time.Microsecond}
	for _, c := range []struct {
		name     string
		pa, pb   *probe
		want     time.Duration
		measured bool
	}{
		{"start to end", nil, nil, 5 * ms, true},
		{"probe to end, both from the start", p1, nil, 3 * ms, true},
		{"probe to a probe run from it", p1, p2, 1 * ms, true},
		{"sibling probes", p3, p2, 600 * time.Microsecond, true},
		{"probes from different starts: the chain", p4, p2, 500 * time.Microsecond, false},
		{"end not measured from this probe's start", p4, nil, 10*ms - 2500*time.Microsecond, false},
	} {
		s := st
		s.pa, s.pb = c.pa, c.pb
		if c.pa != nil {
			s.offA = c.pa.off
		}
		if c.pb != nil {
			s.offB = c.pb.off
		}
		got, measured := w.span(s)
		if got != c.want || measured != c.measured {
			t.Errorf("%s: span %v (measured %v), want %v (%v)", c.name, got, measured, c.want, c.measured)
		}
	}
}

// TestHitsCountSelfCheck: where the check says the debug registers work,
// a count is exact; where it says they do not, openHits refuses with
// ErrNoHitCounts, so that fred counts nexts instead of trusting zeros.
func TestHitsCountSelfCheck(t *testing.T) {
	err := hitsCount()
	t.Logf("hardware execution breakpoints: %v", err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, oerr := openHits(unix.Gettid(), uint64(reflect.ValueOf(hitsProbe2).Pointer()), 0)
	if h != nil {
		defer h.Close()
	}
	if err != nil {
		if !errors.Is(err, ErrNoHitCounts) || !errors.Is(oerr, ErrNoHitCounts) {
			t.Fatalf("check %v, openHits %v: want both ErrNoHitCounts", err, oerr)
		}
		return
	}
	if oerr != nil {
		t.Fatalf("the check passed but openHits fails: %v", oerr)
	}
	// Go's asynchronous preemption (SIGURG) that lands on the counted
	// instruction makes it run twice (the signal's injected call returns
	// to it): held off on this thread while it runs.
	var urg, old unix.Sigset_t
	urg.Val[0] = 1 << (uint(unix.SIGURG) - 1)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &urg, &old); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 37; i++ {
		hitsTestSink += hitsProbe2(i)
	}
	_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	if n, err := h.Count(); err != nil || n != 37 {
		t.Fatalf("counted %d (%v) of 37 executions", n, err)
	}
}

//go:noinline
func hitsProbe2(i int) int { return i*5 + 2 }

var hitsTestSink int
