package fred

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/testutil"
)

// The real server (issue 16): Debian's mariadbd under fred gdb, on a
// datadir of its own with a unix socket only, and the mariadb client
// outside fred sending statements. Debian's binary has no debug
// information: at dispatch_command the statement's text is the third
// argument (x/s $rdx). Going back from the third statement does not work
// yet (the replay leaves its recording: the data files moved on); what
// is checked is what a person gets meanwhile: one message, the server
// where it was, and a client that gets every answer once, as in one
// forward run (the copy that left the recording sent nothing), and no
// mariadbd left after quit. Issue 16 asks for the landing at the second
// statement.
func TestMariaDBReverseContinue(t *testing.T) {
	testutil.Require(t, "gdb", "mariadb", "mariadb-install-db")
	const server = "/usr/sbin/mariadbd"
	if _, err := os.Stat(server); err != nil {
		t.Fatalf("%s is not installed; run 'make deps' (as root) to install what fred's tests need", server)
	}
	dir := t.TempDir()
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	ts := gdbSessionOf(t, server, "auto", t.TempDir())
	ts.must("break dispatch_command", `Breakpoint 1`)

	// The client, once the server listens: its statements wait for the
	// server's answers, which wait for the person's commands.
	statements := []string{
		"create table test.t(x int, s varchar(20))",
		"insert into test.t values (1, 'one')",
		"insert into test.t values (2, 'two')",
		"select 'fourth'",
		"select x, s from test.t order by x",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var client bytes.Buffer
	clientDone := make(chan error, 1)
	go func() {
		for i := 0; i < 600; i++ {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				clientDone <- ctx.Err()
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		// As a person's client comes: after the server has run a while,
		// so that fred's automatic snapshot comes at the first stop (2 s
		// of running) and the reverse command replays from there.
		time.Sleep(2500 * time.Millisecond)
		c := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-S", sock, "-u", "root", "-N", "-B", "-e", strings.Join(statements, "; "))
		c.Stdout, c.Stderr = &client, &client
		clientDone <- c.Run()
	}()

	stop := ` in dispatch_command`
	text := func() string {
		t.Helper()
		out := ts.do("x/s $rdx")
		m := regexp.MustCompile(`:\s+"(.*)"`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("x/s $rdx: %q", out)
		}
		return m[1]
	}
	at := func(cmd string, i int) {
		t.Helper()
		ts.must(cmd, stop)
		if got := text(); got != statements[i] {
			t.Fatalf("after %q the server runs %q; recorded: %q", cmd, got, statements[i])
		}
	}
	at("run --no-defaults --datadir="+data+" --socket="+sock+" --skip-networking --skip-grant-tables --user=root --innodb-use-native-aio=0 --log-error="+filepath.Join(dir, "err.log")+" --pid-file="+filepath.Join(dir, "pid"), 0)
	at("continue", 1)
	at("continue", 2)
	ts.must("fred-reverse-continue", `left its recording .*; you are back where you were`)
	if got := text(); got != statements[2] {
		t.Fatalf("after the failed reverse command the server runs %q; it ran %q", got, statements[2])
	}
	ts.must("delete", ``)
	// The server runs on after the client is done: the continue ends at
	// a Ctrl-C.
	ran := make(chan error, 1)
	go func() { ran <- ts.Exec("continue") }()
	select {
	case err := <-clientDone:
		if err != nil {
			t.Errorf("the client: %v\n%s", err, client.String())
		}
	case <-time.After(60 * time.Second):
		t.Errorf("the client got no answer in 60 s:\n%s", client.String())
	}
	for i := 0; i < 50 && !ts.Interrupted(); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("continue: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("Ctrl-C did not stop the server in 60 s")
	}
	if want := "fourth\n1\tone\n2\ttwo\n"; client.String() != want {
		t.Fatalf("the client got %q; one forward run answers %q", client.String(), want)
	}
	// After quit no mariadbd is left: gdbSessionOf's cleanup checks it.
}
