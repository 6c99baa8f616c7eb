package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	P "github.com/fred-debugger/fred/personalities"
)

// A real server (issue 16, DESIGN.md's mariadbd row): Debian's mariadbd
// under fred gdb on a datadir of its own (unix socket only), stopped at
// dispatch_command with the mariadb client connected and its statement
// in hand. fred-checkpoint dumps it with CRIU (it has its threads), with
// the client's socket kept by fred; fred-restart N gives it back, socket
// and all. Each restore is checked: the server stands at the same
// statement. Then the client's next statement gets its answer from the
// restored server.

const serverSection = "A real server: Debian's mariadbd under fred gdb, a client connected (CRIU)"

const mariadbd = "/usr/sbin/mariadbd"

func (b *bench) server() {
	const measure = "snapshot and restore of mariadbd at rest, client connected"
	for _, tool := range []string{mariadbd, "mariadb", "mariadb-install-db", "gdb"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.fail(serverSection, measure, "under 0.5 s each", fmt.Errorf("%s is not installed; run 'make deps' (as root)", tool))
			return
		}
	}
	reps := 5
	if *quick {
		reps = 2
	}
	progress("server: mariadbd, %d snapshots and restores", reps)
	snap, restore, size, err := b.serverMeasure(reps)
	if err != nil {
		b.fail(serverSection, measure, "under 0.5 s each", err)
		return
	}
	v := "meets"
	if snap.median() > 0.5 || restore.median() > 0.5 {
		v = "MISSES"
	}
	b.add(row{section: serverSection, measure: measure + ": snapshot / restore", fred: "none (DMTCP: MySQL case)", target: "under 0.5 s each",
		got: snap.String() + " / " + restore.String(), verdict: v,
		comments: fmt.Sprintf("fred-checkpoint / fred-restart N at dispatch_command; image %s; after the restores the client's next statement is answered", human(size))})
}

// serverMeasure runs the session and returns the snapshot and restore
// times and the image size.
func (b *bench) serverMeasure(reps int) (snap, restore sample, size float64, err error) {
	dir, err := os.MkdirTemp(b.tmp, "mariadb-")
	if err != nil {
		return nil, nil, 0, err
	}
	defer os.RemoveAll(dir)
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal").CombinedOutput(); err != nil {
		return nil, nil, 0, fmt.Errorf("mariadb-install-db: %v\n%s", err, indent(tail(string(out), 5)))
	}
	x, err := startSessionWith(b.tmp, P.GDB, []string{"gdb", "-q", mariadbd}, false, "auto")
	if err != nil {
		return nil, nil, 0, err
	}
	defer func() {
		if cerr := x.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := x.must("break dispatch_command"); err != nil {
		return nil, nil, 0, err
	}

	// The client, once the server listens; its statements come through a
	// pipe, one at a time.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-S", sock, "-u", "root", "-N", "-B", "--unbuffered")
	stdin, err := client.StdinPipe()
	if err != nil {
		return nil, nil, 0, err
	}
	answers := &outBuf{}
	client.Stdout, client.Stderr = answers, answers
	clientDone := make(chan error, 1)
	go func() {
		for i := 0; i < 600 && ctx.Err() == nil; i++ {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := client.Start(); err != nil {
			clientDone <- err
			return
		}
		_, _ = io.WriteString(stdin, "select 'first';\n")
		clientDone <- client.Wait()
	}()
	defer func() {
		stdin.Close()
		cancel()
		<-clientDone
	}()

	if _, _, err := x.do("run --no-defaults --datadir=" + data + " --socket=" + sock + " --skip-networking --skip-grant-tables --user=root --innodb-use-native-aio=0 --log-error=" + filepath.Join(dir, "err.log") + " --pid-file=" + filepath.Join(dir, "pid")); err != nil {
		return nil, nil, 0, err
	}
	statement := func() (string, error) {
		out, _, err := x.do("x/s $rdx")
		if err != nil {
			return "", err
		}
		m := regexp.MustCompile(`:\s+"(.*)"`).FindStringSubmatch(out)
		if m == nil {
			return "", fmt.Errorf("x/s $rdx: %q", out)
		}
		return m[1], nil
	}
	if st, err := statement(); err != nil || st != "select 'first'" {
		return nil, nil, 0, fmt.Errorf("at dispatch_command the statement is %q (%v), want the client's", st, err)
	}
	for i := 0; i < reps; i++ {
		out, took, err := x.do("fred-checkpoint")
		if err != nil {
			return nil, nil, 0, err
		}
		sl, err := parseSnapshot(out)
		if err != nil {
			return nil, nil, 0, err
		}
		snap = append(snap, took.Seconds())
		img := filepath.Join(x.dir, fmt.Sprintf("snap-%d", sl.id))
		if n := dirBytes(img); n > 0 {
			size = float64(n)
		}
		if _, took, err = x.do(fmt.Sprintf("fred-restart %d", sl.id)); err != nil {
			return nil, nil, 0, err
		}
		restore = append(restore, took.Seconds())
		if st, err := statement(); err != nil || st != "select 'first'" {
			return nil, nil, 0, fmt.Errorf("after fred-restart %d the statement is %q (%v): the server is not where it was", sl.id, st, err)
		}
		os.RemoveAll(img)
	}
	// The restored server goes on with the same client: its next
	// statement gets an answer.
	if err := x.must("delete"); err != nil {
		return nil, nil, 0, err
	}
	ran := make(chan error, 1)
	go func() { ran <- x.s.Exec("continue") }()
	_, _ = io.WriteString(stdin, "select 'second';\n")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(answers.String(), "second") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := answers.String()
	// Ctrl-C, once the continue runs the program.
	for i := 0; i < 100 && !x.s.Interrupted(); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-ran:
		if err != nil {
			return nil, nil, 0, fmt.Errorf("continue: %w", err)
		}
	case <-time.After(60 * time.Second):
		// The session is closed only once its command has ended: kill
		// the server, whose end ends the continue.
		if pid, err := x.s.Pid(); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		<-ran
		return nil, nil, 0, errors.New("Ctrl-C did not stop the server in 60 s")
	}
	if got != "first\nsecond\n" {
		return nil, nil, 0, fmt.Errorf("the client got %q; one forward run answers %q", got, "first\nsecond\n")
	}
	return snap, restore, size, nil
}
