package fred

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
)

// state is what a person can see of the program at a stop.
type state struct {
	loc                string
	pc, sp, rbx, total string
	pid                int
}

func (ts *tsession) state() state {
	ts.t.Helper()
	loc, err := ts.location()
	if err != nil {
		ts.t.Fatal(err)
	}
	st := state{loc: loc.String(), pc: ts.value("$pc"), sp: ts.value("$sp"), rbx: ts.value("$rbx"),
		total: ts.value("total"), pid: ts.pid}
	if ts.snap.Name() == "fork" {
		st.pid = 0 // the fork backend brings back a copy: another pid
	}
	return st
}

func TestCheckpointRestart(t *testing.T) { forBackends(t, testCheckpointRestart) }

func testCheckpointRestart(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.must("break square", `Breakpoint 1 at`)
	ts.must("run", `snapshot 1 taken at the program's start`)
	ts.must("next", `9\s+return r;`)
	ts.must("finish", `Run till exit`)
	ts.must("fred-checkpoint", `snapshot 2 taken \(\d+\.\d+ s, (\d+ KB|a paused copy)\)`)
	at2 := ts.state()
	ts.must("continue", `i=0 total=0(?s).*square \(x=1\)`)
	ts.must("next", `9\s+return r;`)
	ts.must("fred-checkpoint", `snapshot 3 taken`)
	at3 := ts.state()
	ts.must("continue", `i=1 total=1(?s).*square \(x=2\)`)
	ts.must("set var total = 1000", ``)

	// Back to snapshot 2: location, registers, variables, pid, and what the
	// program prints from there are as they were.
	ts.must("fred-restart 2", `#0 .*main \(\)\s+at .*steps.c:23`)
	if got := ts.state(); got != at2 {
		t.Fatalf("after fred-restart 2:\n got %+v\nwant %+v", got, at2)
	}
	ts.must("continue", `i=0 total=0(?s).*square \(x=1\)`)

	// The latest snapshot by default.
	ts.must("fred-restart", `#0 .*square \(x=1\)\s+at .*steps.c:9`)
	if got := ts.state(); got != at3 {
		t.Fatalf("after fred-restart:\n got %+v\nwant %+v", got, at3)
	}
	// Snapshot 1 is at main's first line; from there the breakpoint
	// stops the program as the run did.
	ts.must("fred-restart 1", `main \(\)\s+at .*steps.c:22`)
	ts.must("continue", `Breakpoint 1, square \(x=0\)\s+at .*steps.c:8`)
	ts.must("next", `^9\s+return r;`)

	out := ts.do("fred-list")
	for _, want := range []string{"snapshots: " + map[string]string{"criu": "CRIU", "fork": "fork"}[backend], "the start, auto", "3 commands ('finish')", "5 commands ('next')"} {
		if !strings.Contains(out, want) {
			t.Errorf("fred-list lacks %q:\n%s", want, out)
		}
	}
	out = ts.do("fred-history")
	if !strings.Contains(out, "(0) snapshot 0, the start\n   |  inside 'run': the start-up to main\n  (1) snapshot 1\n   |  continue\n   |  next\n  >>> you are here") {
		t.Errorf("history after restart 1 should have only the commands since snapshot 1:\n%s", out)
	}
}

func TestRestartAfterExitAndBadInput(t *testing.T) { forBackends(t, testRestartAfterExitAndBadInput) }

func testRestartAfterExitAndBadInput(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.must("fred-restart", `there is no snapshot yet`)
	ts.must("fred-checkpoint", `'fred-checkpoint' needs a running program`)
	ts.must("break main", `Breakpoint 1 at`)
	ts.must("run", `snapshot 1 taken at the program's start, main at`)
	first := ts.state()
	ts.must("fred-restart 99", `there is no snapshot 99`)
	ts.must("fred-restart one", `"one" is neither a snapshot number nor a bookmark`)
	ts.must("fred-checkpoint now", `takes no arguments`)
	ts.must("delete", ``)
	ts.must("continue", `fact=120(?s).*exited normally`)
	ts.must("fred-checkpoint", `needs a running program`)
	// Going back from a program that has ended is the common case.
	ts.must("fred-restart 1", `main \(\)\s+at .*steps.c:22`)
	if got := ts.state(); got != first {
		t.Fatalf("after restart from the end:\n got %+v\nwant %+v", got, first)
	}
	if ts.Failed() != 6 {
		t.Errorf("failed commands counted %d, want 6", ts.Failed())
	}
}

func TestManyRestartsLeakNothing(t *testing.T) { forBackends(t, testManyRestartsLeakNothing) }

func testManyRestartsLeakNothing(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.must("break square", `Breakpoint 1 at`)
	ts.must("run", `snapshot 1 taken`)
	fds := countFDs(t)
	for i := 0; i < 20; i++ {
		ts.must("fred-restart 1", `main \(\)\s+at .*steps.c:22`)
		ts.must("continue", `square \(x=0\)`)
	}
	if got := countFDs(t); got > fds {
		t.Errorf("fds grew from %d to %d over 20 restarts", fds, got)
	}
	// gdb and the program, and for the fork backend the copies of
	// snapshots 0 (the entry point) and 1.
	want := 2
	if backend == "fork" {
		want = 4
	}
	if kids := children(t); len(kids) > want {
		t.Errorf("fred has %d children after 20 restarts (want at most %d): %v", len(kids), want, kids)
	}
	dir := ts.dir
	ts.Close()
	if _, err := os.Stat(filepath.Join(dir, "snap-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("snapshot left on disk after the session: %v", err)
	}
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// children lists this process's children (and adopted orphans), over all
// its threads: Go starts processes from any of them. Sessions' keepers
// (internal/proc/keeper.go) are left out: one a session, for its life.
func children(t *testing.T) []string {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, task := range tasks {
		b, _ := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "children"))
		for _, pid := range strings.Fields(string(b)) {
			if c, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline")); !strings.HasPrefix(string(c), "fred-keeper\x00") {
				kids = append(kids, pid)
			}
		}
	}
	return kids
}

func TestNativeReverseCommandGetsAHint(t *testing.T) {
	forBackends(t, testNativeReverseCommandGetsAHint)
}

func testNativeReverseCommandGetsAHint(t *testing.T, backend string) {
	ts := gdbSession(t, "steps", backend)
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `snapshot 1 taken`)
	ts.must("reverse-step", `fred's 'fred-reverse-step' works without it`)
	ts.must("rn", `fred's 'fred-reverse-next' works without it`)
}

// A disk with no room for a dump (a 64 KB tmpfs): fred refuses the
// snapshot before the dump starts, with one clear message, and the
// session and the program go on as they were.
func TestDiskFullDuringDump(t *testing.T) {
	testutil.Require(t, "mount")
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	testutil.Require(t, "gdb")
	out := &syncBuf{}
	s, err := Start(Options{Personality: P.GDB, Argv: []string{"gdb", "-q", testutil.Fixture(t, "steps")}, Out: out,
		Timeout: 30 * time.Second, Batch: true, Snapshots: "criu", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := &tsession{Session: s, t: t, out: out}
	ts.must("break square", `Breakpoint 1`)
	got := ts.do("run")
	// fred sees there is no room before the dump starts.
	if strings.Count(got, "no room for a snapshot under") != 1 || !strings.Contains(got, "tries again after the program moves") {
		t.Fatalf("the failed first snapshot should be said once:\n%s", got)
	}
	if strings.Contains(ts.do("next"), "snapshot") {
		t.Error("fred said again that an automatic snapshot failed")
	}
	ts.must("fred-checkpoint", `no room for a snapshot under .*: 0 MB free, and the program's memory \(\d+ MB and a margin\)`)
	ts.must("next", `10\s+}`)
	ts.must("print r", `= 0`)
}

// TestCopiesBesideCRIU: by default a single-threaded program is snapshotted
// by fork copies and a multi-threaded one by CRIU, and fred goes back and
// forth between the two kinds.
func TestCopiesBesideCRIU(t *testing.T) {
	ts := gdbSession(t, "mt_atomic", "auto")
	ts.must("break 77", `Breakpoint 1 at`)
	ts.must("break 59", `Breakpoint 2 at`)
	ts.must("run", `snapshot 1 taken at the program's start`)
	ts.must("fred-checkpoint", `snapshot 2 taken \(\d+\.\d+ s, a paused copy\)`)
	seen := map[string]string{"2": ts.value("balance") + " " + ts.value("withdrawn")}
	ts.must("continue", `hit Breakpoint 2, teller(?s).*mt_atomic.c:59`)
	ts.must("fred-checkpoint", `snapshot 3 taken \(\d+\.\d+ s, \d+ KB\)`) // three threads: CRIU
	seen["3"] = ts.value("balance") + " " + ts.value("withdrawn")
	if seen["2"] == seen["3"] {
		t.Fatalf("balance and withdrawn are %s at both snapshots; the fixture should have moved", seen["2"])
	}
	ts.must("fred-list", `snapshots: CRIU, and fork copies while the program has one thread`)
	for _, id := range []string{"2", "3", "2", "3"} {
		ts.must("fred-restart "+id, map[string]string{"2": `mt_atomic.c:77`, "3": `mt_atomic.c:59`}[id])
		if got := ts.value("balance") + " " + ts.value("withdrawn"); got != seen[id] {
			t.Fatalf("after fred-restart %s: balance and withdrawn are %s, want %s", id, got, seen[id])
		}
	}
	ts.must("delete 2", ``)
	ts.must("continue", `balance=\d+ withdrawn=\d+ sum=1100(?s).*exited normally`)
	ts.must("fred-restart 2", `mt_atomic.c:77`)
	ts.must("continue", `balance=\d+ withdrawn=\d+ sum=1100(?s).*exited normally`)
}
