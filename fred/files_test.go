package fred

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFilesAfterReplay: going back and running again leaves the files the
// program writes as one forward run leaves them: an append-mode log (open
// at a snapshot, and opened after one), a file that grew since a snapshot
// (CRIU checks a file's size on restore), a counter rewritten in place,
// and a counter in a shared mapping of a file, which the program reads.
func TestFilesAfterReplay(t *testing.T) { forBackends(t, testFilesAfterReplay) }

func testFilesAfterReplay(t *testing.T, backend string) {
	ts := gdbSession(t, "files", backend)
	dir := t.TempDir()
	turn := fmt.Sprintf(`files.c:%d`, fixtureLineOf(t, "files.c", "turn"))
	ts.must("break "+turn, `Breakpoint 1`)
	// At the stop of turn i, mapped[0] is i+1: read back from the file.
	at := func(cmd string, mapped int) {
		t.Helper()
		ts.must(cmd, turn)
		if v := ts.value("mapped[0]"); v != fmt.Sprint(mapped) {
			t.Fatalf("after %q, mapped[0] is %s; one forward run has %d", cmd, v, mapped)
		}
	}
	logHas := func(when string, n int) {
		t.Helper()
		var want strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&want, "line %d\n", i)
		}
		if got := readFile(t, dir, "log"); got != want.String() {
			t.Fatalf("%s, the log holds:\n%s\none forward run leaves:\n%s", when, got, want.String())
		}
	}
	at("run "+dir, 1)
	at("continue", 2)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	at("continue", 3)
	at("continue", 4)
	logHas("at the fourth turn", 4)
	// Snapshot 2 has the files open: fred sets them back.
	at("fred-reverse-continue", 3)
	at("fred-reverse-continue", 2)
	// Snapshot 1 is from before the files were opened: the replayed
	// opens set them back.
	ts.must("fred-restart 1", `main`)
	at("continue", 1)
	logHas("replayed to the first turn", 1)
	// Snapshot 2 again: the log's second line comes back from what the
	// replayed open cut off.
	ts.must("fred-restart 2", turn)
	if v := ts.value("mapped[0]"); v != "2" {
		t.Fatalf("at snapshot 2 again, mapped[0] is %s; want 2", v)
	}
	logHas("at snapshot 2 again", 2)
	ts.must("delete", ``)
	ts.must("continue", `total=15 mapped=5`)
	logHas("at the end", 5)
	if got := readFile(t, dir, "rows"); got != "row 0\nrow 1\nrow 2\nrow 3\nrow 4\n" {
		t.Fatalf("rows holds:\n%s", got)
	}
	if got := readFile(t, dir, "count"); got != "5\n" {
		t.Fatalf("count holds %q; want 5", got)
	}
	if got := binary.LittleEndian.Uint32([]byte(readFile(t, dir, "mapped"))); got != 5 {
		t.Fatalf("mapped holds %d; want 5", got)
	}
	if left, _ := filepath.Glob(filepath.Join(ts.dir, "cut-*")); len(left) == 0 {
		t.Fatalf("no cut kept in %s: the test did not cut a file", ts.dir)
	}
	ts.Close()
	if left, _ := filepath.Glob(filepath.Join(ts.dir, "*-*")); len(left) > 0 {
		t.Fatalf("left after the session: %v", left)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
