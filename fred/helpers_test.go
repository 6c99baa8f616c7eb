package fred

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
)

func TestMain(m *testing.M) {
	// Restored programs come back as orphans of the test binary.
	if err := proc.BecomeSubreaper(); err != nil {
		panic(err)
	}
	os.Setenv("TERM", "dumb")
	testutil.Main(m)
}

// syncBuf is the session's output, read by the test between commands.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

type tsession struct {
	*Session
	t       *testing.T
	out     *syncBuf
	backend string  // of in-process sessions: "criu" or "fork"
	in      *feeder // of in-process sessions: types the person's input to the program
}

// gdbSession starts real gdb on a fixture, with the given snapshot backend.
func gdbSession(t *testing.T, fixture, snapshots string) *tsession {
	t.Helper()
	return gdbSessionIn(t, fixture, snapshots, t.TempDir())
}

// gdbSessionIn is gdbSession with the snapshots in dir.
func gdbSessionIn(t *testing.T, fixture, snapshots, dir string) *tsession {
	t.Helper()
	testutil.Require(t, "gdb")
	return gdbSessionOf(t, testutil.Fixture(t, fixture), snapshots, dir)
}

// gdbSessionOf is gdbSessionIn on the program at prog.
func gdbSessionOf(t *testing.T, prog, snapshots, dir string) *tsession {
	t.Helper()
	testutil.Require(t, "gdb")
	return tracedSession(t, P.GDB, []string{"gdb", "-q", prog}, prog, snapshots, dir)
}

// lldbSession starts real lldb on a fixture, with the given snapshot
// backend.
func lldbSession(t *testing.T, fixture, snapshots string) *tsession {
	t.Helper()
	testutil.Require(t, "lldb")
	prog := testutil.Fixture(t, fixture)
	return tracedSession(t, P.LLDB, []string{"lldb", prog}, prog, snapshots, t.TempDir())
}

// tracedSession starts a debugger that traces the program at prog (argv),
// with snapshots on the given backend in dir; at the end of the test,
// nothing of it may be left running.
func tracedSession(t *testing.T, p *P.Personality, argv []string, prog, snapshots, dir string) *tsession {
	t.Helper()
	out := &syncBuf{}
	s, err := Start(Options{Personality: p, Argv: argv, Out: out,
		Timeout: 30 * time.Second, Batch: true, Snapshots: snapshots, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// auto is CRIU with fork copies beside it.
	if want := strings.Replace(snapshots, "auto", "criu", 1); s.snap == nil || s.snap.Name() != want || snapshots == "auto" && s.copies == nil {
		t.Fatalf("the %s snapshot backend is not usable: %s; run 'make deps' as root", snapshots, s.snapWhy)
	}
	ts := &tsession{Session: s, t: t, out: out}
	t.Cleanup(func() {
		pid := s.pid
		s.Close()
		if pid != 0 && !proc.WaitGone(pid, 5*time.Second) {
			t.Errorf("program pid %d still there after Close", pid)
		}
		if left := testutil.Running(prog); len(left) > 0 {
			t.Errorf("left running: %v", left)
		}
	})
	out.take()
	return ts
}

// runTo starts the program with runCmd from a breakpoint on main (fred
// takes snapshot 1 there), sets a breakpoint with bp, and continues to
// it: the stop matches stop.
func (ts *tsession) runTo(runCmd, bp, stop string) {
	ts.t.Helper()
	ts.must("break main", `Breakpoint 1`)
	ts.must(runCmd, `snapshot 1 taken`)
	ts.must(bp, `Breakpoint 2`)
	ts.must("continue", stop)
}

// mustAll runs each command and checks what it printed (command, pattern).
func (ts *tsession) mustAll(cmds [][2]string) {
	ts.t.Helper()
	for _, c := range cmds {
		ts.must(c[0], c[1])
	}
}

// do runs a line and returns what it printed.
func (ts *tsession) do(line string) string {
	ts.t.Helper()
	if err := ts.Exec(line); err != nil {
		// (what the debugger printed last says why a session ended)
		ts.t.Fatalf("%s: %v\nits output:\n%s", line, err, ts.out.take())
	}
	return ts.out.take()
}

// must runs a line and checks its output matches re.
func (ts *tsession) must(line, re string) string {
	ts.t.Helper()
	out := ts.do(line)
	if !regexp.MustCompile(re).MatchString(out) {
		ts.t.Fatalf("%q: output does not match %q:\n%s", line, re, out)
	}
	return out
}

// value prints an expression and returns its value text.
func (ts *tsession) value(expr string) string {
	ts.t.Helper()
	if ts.p.InProcess {
		return ts.evalValue(expr) // inprocess_test.go
	}
	out := ts.do("print " + expr)
	m := regexp.MustCompile(`\$\d+ = (.*)`).FindStringSubmatch(out)
	if m == nil {
		ts.t.Fatalf("print %s: %q", expr, out)
	}
	return strings.TrimSpace(m[1])
}

// Tests of behaviour the debuggers share are tables: one body, and a case
// of data for each debugger (gdb, pdb, perl) run as a subtest of that
// name. A case starts its session with a starter and holds the commands
// where the debuggers differ as scripts of steps.

// starter starts a session of one debugger on a fixture (a program of
// testdata/bin for gdb, a script of testdata for pdb and perl) with the
// program's arguments, on a snapshot backend.
type starter func(t *testing.T, fixture, backend string, args ...string) *tsession

func gdbStart(t *testing.T, fixture, backend string, args ...string) *tsession {
	t.Helper()
	if len(args) > 0 {
		t.Fatal("test bug: gdb's program arguments go in its run command")
	}
	return gdbSession(t, fixture, backend)
}

func lldbStart(t *testing.T, fixture, backend string, args ...string) *tsession {
	t.Helper()
	if len(args) > 0 {
		t.Fatal("test bug: lldb's program arguments go in its run command")
	}
	return lldbSession(t, fixture, backend)
}

func pdbStart(t *testing.T, fixture, backend string, args ...string) *tsession {
	t.Helper()
	ts, _ := pdbSessionArgs(t, fixture, backend, args...)
	return ts
}

func perlStart(t *testing.T, fixture, backend string, args ...string) *tsession {
	t.Helper()
	ts, _ := perlSessionArgs(t, fixture, backend, args...)
	return ts
}

// argvOf is the command line that starts debugger p on a fixture (as the
// starters do), for tests that start sessions of their own.
func argvOf(t *testing.T, p *P.Personality, fixture string, args ...string) []string {
	t.Helper()
	switch p {
	case P.GDB:
		if len(args) > 0 {
			t.Fatal("test bug: gdb's program arguments go in its run command")
		}
		return []string{"gdb", "-q", testutil.Fixture(t, fixture)}
	case P.LLDB:
		if len(args) > 0 {
			t.Fatal("test bug: lldb's program arguments go in its run command")
		}
		return []string{"lldb", testutil.Fixture(t, fixture)}
	case P.PDB:
		return append([]string{"python3", "-m", "pdb", script(fixture)}, args...)
	case P.Perl:
		return append([]string{"perl", "-d", script(fixture)}, args...)
	}
	t.Fatalf("test bug: no command line for %s", p.Name)
	return nil
}

// step is one command of a case's script and what its output must match
// (a regexp; it must not contain not, if set). With expr, expr must have
// the value want after it; a step with expr and no command checks the
// value alone (an empty command without expr is sent: it repeats the
// last command).
type step struct {
	cmd, out   string
	expr, want string
	not        string
}

// play runs a script. With vals (pairs: a name, then its text), each name
// in a step's command, output and wanted value stands for its text: a
// value the test learns on the way.
func (ts *tsession) play(script []step, vals ...string) {
	ts.t.Helper()
	r := strings.NewReplacer(vals...)
	for _, s := range script {
		s.cmd, s.out, s.want = r.Replace(s.cmd), r.Replace(s.out), r.Replace(s.want)
		if s.cmd != "" || s.expr == "" {
			out := ts.must(s.cmd, s.out)
			if s.not != "" && strings.Contains(out, s.not) {
				ts.t.Fatalf("%q: output has %q:\n%s", s.cmd, s.not, out)
			}
		}
		if s.expr != "" {
			if v := ts.value(s.expr); v != s.want {
				ts.t.Fatalf("after %q, %s is %s, want %s", s.cmd, s.expr, v, s.want)
			}
		}
	}
}

// backends are the snapshot backends every snapshot and reverse test runs
// on: CRIU (as root) and the unprivileged fork backend.
var backends = []string{"criu", "fork"}

func forBackends(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}
