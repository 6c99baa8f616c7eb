package fred

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
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
	if v := ts.value("early"); v != "-1" {
		t.Fatalf("the replayed open of a file made later gave %s; it failed then", v)
	}
	// Snapshot 2 again: the log's second line comes back from what the
	// replayed open cut off.
	ts.must("fred-restart 2", turn)
	if v := ts.value("mapped[0]"); v != "2" {
		t.Fatalf("at snapshot 2 again, mapped[0] is %s; want 2", v)
	}
	logHas("at snapshot 2 again", 2)
	ts.must("delete", ``)
	ts.must("continue", `total=15 mapped=5 early=-1`)
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

// TestSocketSendsNotRepeated: a replay does not send again what a server
// outside fred already has, and going forward past the end of the
// recording talks to it on the same connection.
func TestSocketSendsNotRepeated(t *testing.T) {
	for _, backend := range []string{"auto", "criu"} {
		t.Run(backend, func(t *testing.T) { socketSendsNotRepeated(t, backend) })
	}
}

func socketSendsNotRepeated(t *testing.T, backend string) {
	path, got := unixServer(t)
	ts := gdbSession(t, "sock_client", backend)
	answer := fmt.Sprintf(`sock_client.c:%d`, fixtureLineOf(t, "sock_client.c", "answer"))
	ts.must("break "+answer, `Breakpoint 1`)
	at := ts.valueAt(answer, "v")
	at("run "+path, "0")
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	at("continue", "101")
	at("continue", "202")
	at("fred-reverse-continue", "101")
	at("fred-reverse-continue", "0")
	at("continue", "101")
	ts.must("delete", ``)
	ts.must("continue", `sum=1013`)
	sentOnce(t, got, "req 0,req 1,req 2,req 3,req 4")
}

// unixServer answers "req I" lines on a unix socket in a temporary
// directory with "ans 100*SEQ+I", SEQ counting the connection's requests,
// and returns the socket's path and what it got.
func unixServer(t *testing.T) (string, func() []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return path, serve(t, ln)
}

// tcpServer is unixServer on a port of 127.0.0.1: "tcp:PORT".
func tcpServer(t *testing.T) (string, func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("tcp:%d", ln.Addr().(*net.TCPAddr).Port), serve(t, ln)
}

func serve(t *testing.T, ln net.Listener) func() []string {
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var got []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for seq := 0; sc.Scan(); seq++ {
					mu.Lock()
					got = append(got, sc.Text())
					mu.Unlock()
					var i int
					fmt.Sscanf(sc.Text(), "req %d", &i)
					fmt.Fprintf(c, "ans %d", 100*seq+i)
				}
			}()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestRefusedSnapshotRetried: an automatic snapshot CRIU refuses (a TCP
// connection) is said once, with what was refused; the older snapshots
// stay, and fred tries again once the program moved: after the socket is
// closed, a snapshot is taken.
func TestRefusedSnapshotRetried(t *testing.T) {
	addr, _ := tcpServer(t)
	ts := gdbSession(t, "sock_client", "criu")
	answer := fmt.Sprintf(`sock_client.c:%d`, fixtureLineOf(t, "sock_client.c", "answer"))
	ts.must("break "+answer, `Breakpoint 1`)
	ts.must("run "+addr+" slow", `snapshot 1 taken`)
	// The program runs 2 s: fred's automatic snapshot comes, and is refused.
	out := ts.must("continue", answer)
	refused := fmt.Sprintf(`could not take a snapshot: .*a TCP connection, which CRIU does not dump here: fd 3, a TCP connection from 127.0.0.1:\d+ to 127.0.0.1:%s \(the other end: pid %d, .*; fred keeps its 2 snapshots and tries again after the program moves`,
		strings.TrimPrefix(addr, "tcp:"), os.Getpid())
	if !regexp.MustCompile(refused).MatchString(out) {
		t.Fatalf("the refused snapshot is not said as it should be:\n%s", out)
	}
	for i := 0; i < 2; i++ {
		if out := ts.must("continue", answer); strings.Contains(out, "snapshot") {
			t.Fatalf("the refusal was said again:\n%s", out)
		}
	}
	closed := fmt.Sprintf(`sock_client.c:%d`, fixtureLineOf(t, "sock_client.c", "closed"))
	ts.must("delete", ``)
	ts.must("break "+closed, `Breakpoint 2`)
	ts.must("continue", closed)
	ts.must("next", `for`)
	ts.must("next", closed)
	if len(ts.snaps) < 2 {
		t.Fatalf("no snapshot taken after the socket was closed:\n%s", ts.do("fred-list"))
	}
	ts.must("fred-reverse-continue", closed)
	ts.must("print j", `= 0`)
}

// TestSnapshotWithUnixPeer: a snapshot (CRIU) of a program connected to a
// unix socket of another process: the socket is dumped as external and
// fred keeps it; a restore gives the program the same connection, the
// replay gets what the socket gave from the log and sends nothing again,
// and past the recording the program goes on talking to the server on
// that connection, which saw nothing of the restores.
func TestSnapshotWithUnixPeer(t *testing.T) {
	path, got := unixServer(t)
	ts := gdbSession(t, "sock_client", "criu")
	answer := fmt.Sprintf(`sock_client.c:%d`, fixtureLineOf(t, "sock_client.c", "answer"))
	ts.must("break "+answer, `Breakpoint 1`)
	valueAt := ts.valueAt(answer, "v")
	at := func(cmd, v string) {
		t.Helper()
		if out := valueAt(cmd, v); strings.Contains(out, "is closed") {
			t.Fatalf("the restore closed the socket:\n%s", out)
		}
	}
	at("run "+path, "0")
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	at("continue", "101")
	at("continue", "202")
	at("fred-reverse-continue", "101")
	at("fred-reverse-continue", "0")
	at("continue", "101")
	at("continue", "202")
	sentOnce(t, got, "req 0,req 1,req 2")
	// Past the recording, the same connection: its fourth request.
	at("continue", "303")
	sentOnce(t, got, "req 0,req 1,req 2,req 3")
}

// TestReplayThatLeavesItsRecording: a threaded program (CRIU) whose
// replay takes another path than the recorded one (left_log: a file read
// where the replay log does not see it) and then waits for a server's
// answer that will not come. fred gives up soon after the log's
// divergence, not after its whole deadline, and the person is where they
// were: the present, kept before the command, with its connection, which
// goes on as one forward run would.
func TestReplayThatLeavesItsRecording(t *testing.T) {
	path, got := unixServer(t)
	flag := filepath.Join(t.TempDir(), "flag")
	if err := os.WriteFile(flag, []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts := gdbSession(t, "left_log", "criu")
	answer := fmt.Sprintf(`left_log.c:%d`, fixtureLineOf(t, "left_log.c", "answer"))
	ts.must("break "+answer, `Breakpoint 1`)
	at := ts.valueAt(answer, "v")
	at("run "+path+" "+flag, "0")
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	at("continue", "101")
	at("continue", "202")
	if err := os.WriteFile(flag, []byte("1"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The message is the giving up's: a wait to the deadline says "no
	// prompt from the debugger".
	ts.must("fred-reverse-continue", `replaying 'continue', the program left its recording \(replay log: the program diverged from the log at entry \d+: .*\) and did not reach the stop it reached the first time; you are back where you were`)
	if got := ts.value("v"); got != "202" {
		t.Fatalf("after the failed command, the answer is %s; it was 202", got)
	}
	if err := os.WriteFile(flag, []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	at("continue", "303")
	// The failed command left the log whole: going back again replays
	// (a log cut where the replay left it would make this run live, and
	// send again).
	at("fred-reverse-continue", "202")
	at("fred-reverse-continue", "101")
	at("continue", "202")
	sentOnce(t, got, "req 0,req 1,req 2,req 3")
}

// sentOnce checks that a server outside fred got what one forward run
// sends, each request once.
func sentOnce(t *testing.T, got func() []string, want string) {
	t.Helper()
	if g := strings.Join(got(), ","); g != want {
		t.Fatalf("the server got %q; one forward run sends %q", g, want)
	}
}

// valueAt returns a check that a command stops at stop (a pattern) with
// expr's value v there, as recorded; it gives what the command printed.
func (ts *tsession) valueAt(stop, expr string) func(cmd, v string) string {
	return func(cmd, v string) string {
		ts.t.Helper()
		out := ts.must(cmd, stop)
		if got := ts.value(expr); got != v {
			ts.t.Fatalf("after %q, %s is %s; recorded: %s", cmd, expr, got, v)
		}
		return out
	}
}
