package fred

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/replaylog"
)

// world is what the nondet fixtures read that changes between runs: a file
// and a server that answers each connection with another line.
type world struct {
	file string
	port int
	mu   sync.Mutex
	n    int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &world{file: filepath.Join(t.TempDir(), "data"), port: l.Addr().(*net.TCPAddr).Port}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			w.mu.Lock()
			w.n++
			n := w.n
			w.mu.Unlock()
			fmt.Fprintf(c, "connection-%d\n", n)
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); wg.Wait() })
	w.set("first")
	return w
}

func (w *world) set(s string) { os.WriteFile(w.file, []byte(s+"\n"), 0o600) }

// values are the lines a nondet fixture printed.
var valuesRe = regexp.MustCompile(`(?m)^(time|file|usual path|other path)=?.*$`)

func values(out string) string {
	return strings.Join(valuesRe.FindAllString(strings.ReplaceAll(out, "\r", ""), -1), "\n")
}

// logSession starts a debugger with or without the replay log.
func logSession(t *testing.T, p *P.Personality, argv []string, snapshots string, noLog bool) *tsession {
	t.Helper()
	testutil.Require(t, argv[0])
	out := &syncBuf{}
	s, err := Start(Options{Personality: p, Argv: argv, Out: out, Timeout: 30 * time.Second, Batch: true,
		Snapshots: snapshots, Dir: t.TempDir(), NoReplayLog: noLog})
	if err != nil {
		t.Fatal(err)
	}
	ts := &tsession{Session: s, t: t, out: out}
	t.Cleanup(func() {
		pid := s.pid
		if s.p.InProcess {
			pid, _, _ = s.host.process()
		}
		s.Close()
		if pid != 0 && !proc.WaitGone(pid, 5*time.Second) {
			t.Errorf("pid %d still there after Close", pid)
		}
		if left := testutil.Running(argv[len(argv)-1]); len(left) > 0 {
			t.Errorf("left running: %v", left)
		}
	})
	if s.snap == nil || s.snap.Name() != snapshots {
		t.Fatalf("the %s snapshot backend is not usable: %s; run 'make deps' as root", snapshots, s.snapWhy)
	}
	if path, why := s.ReplayLog(); noLog != (path == "") {
		t.Fatalf("replay log: %q (%s)", path, why)
	}
	return ts
}

// TestReplayLog: a program prints the clock, random values (under gdb:
// getrandom, /dev/urandom, random() seeded from them and the pid), a file
// and a socket. After a restore of the first snapshot it prints the same
// values although the file and the server's answer changed; without the
// replay log the values differ, so the test can fail. In gdb, pdb and
// perl -d (snapshots of the interpreter there); {file} and {port} are the
// world's.
func TestReplayLog(t *testing.T) {
	cases := []struct {
		name      string
		p         *P.Personality
		fixture   string
		args      []string
		first     [2]step // with the log, without
		toStop    []step
		cont      string
		stop      string // what the continue to the stop answers
		restarted string // fred-restart 1
		again     string // the continue from there
		log       step   // what the log has: fred-log
		logged    []string
		logCmds   []step
	}{
		{name: "gdb", p: P.GDB, fixture: "nondet",
			first: [2]step{{cmd: "fred-log", out: `fred: the replay log is empty: the program has not run yet`},
				{cmd: "fred-log", out: `fred: the replay log is off \(--no-replay-log\)`}},
			toStop: []step{{cmd: "break main", out: `Breakpoint 1`},
				{cmd: "run {file} {port}", out: `snapshot 1 taken at the program's start, main at`},
				{cmd: "break 87", out: `Breakpoint 2`}},
			cont: "continue", stop: `Breakpoint 2, main`, restarted: `main`, again: `Breakpoint 2, main`,
			log: step{cmd: "fred-log all", out: `time\s+\d+`},
			logged: []string{"clock_gettime", "getrandom", "read" + strings.Repeat(" ", 23) + "fd 3: 8 bytes", "getpid",
				`stdio read                 fd 3: 6 bytes "first\n"`, `recv                       fd 3: 13 bytes "connection-1\n"`},
			logCmds: []step{{cmd: "fred-log 3", out: `earlier entries`}, {cmd: "fred-log x", out: `usage: fred-log`}}},
		{name: "pdb", p: P.PDB, fixture: "nondet.py", args: []string{"{file}", "{port}"},
			first:  [2]step{{cmd: "fred-list", out: `snapshot|id`}, {cmd: "fred-list", out: `snapshot|id`}},
			toStop: []step{{cmd: "break 24"}},
			cont:   "continue", stop: `file=first socket=connection-1`},
		{name: "perl", p: P.Perl, fixture: "nondet.pl", args: []string{"{file}", "{port}"},
			first:  [2]step{{cmd: "fred-list", out: `snapshot|id`}, {cmd: "fred-list", out: `snapshot|id`}},
			toStop: []step{{cmd: "b 29"}},
			cont:   "c", stop: `file=first socket=connection-1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				for _, noLog := range []bool{false, true} {
					t.Run(fmt.Sprintf("log=%v", !noLog), func(t *testing.T) {
						w := newWorld(t)
						world := []string{"{file}", w.file, "{port}", fmt.Sprint(w.port)}
						args := make([]string, len(tc.args))
						for i, a := range tc.args {
							args[i] = strings.NewReplacer(world...).Replace(a)
						}
						ts := logSession(t, tc.p, argvOf(t, tc.p, tc.fixture, args...), backend, noLog)
						firstStep := tc.first[0]
						if noLog {
							firstStep = tc.first[1]
						}
						ts.must(firstStep.cmd, firstStep.out)
						ts.play(tc.toStop, world...)
						first := values(ts.must(tc.cont, tc.stop))
						if !strings.Contains(first, "file=first socket=connection-1") {
							t.Fatalf("first run:\n%s", first)
						}
						w.set("second")
						ts.must("fred-restart 1", tc.restarted)
						again := values(ts.must(tc.cont, tc.again))
						if noLog {
							if again == first || !strings.Contains(again, "file=second socket=connection-2") {
								t.Fatalf("without the replay log the values should differ:\n%s\nfirst:\n%s", again, first)
							}
							return
						}
						if again != first {
							t.Fatalf("after the restore:\n%s\nfirst run:\n%s", again, first)
						}
						if tc.log.cmd == "" {
							return
						}
						out := ts.must(tc.log.cmd, tc.log.out)
						for _, want := range tc.logged {
							if !strings.Contains(out, want) {
								t.Errorf("%s lacks %q:\n%s", tc.log.cmd, want, out)
							}
						}
						ts.play(tc.logCmds)
					})
				}
			})
		})
	}
}

// TestReplayLogDivergence: after a restore the person changes a variable
// and the program takes another path; the library says so once, naming
// the call and the log position, and the session goes on.
func TestReplayLogDivergence(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		w := newWorld(t)
		ts := logSession(t, P.GDB, []string{"gdb", "-q", testutil.Fixture(t, "nondet")}, backend, false)
		ts.must("break main", `Breakpoint 1`)
		ts.must(fmt.Sprintf("run %s %d", w.file, w.port), `snapshot 1 taken`)
		ts.must("break 87", `Breakpoint 2`)
		first := values(ts.must("continue", `usual path: urandom=`))
		ts.must("fred-restart 1", `main`)
		ts.do("set var path_taken = 1")
		out := ts.must("continue", `Breakpoint 2, main`)
		if n := strings.Count(out, "diverged"); n != 1 || !regexp.MustCompile(`diverged from the log at entry \d+: it called time where the log has read`).MatchString(out) {
			t.Fatalf("want one divergence message naming time() and read():\n%s", out)
		}
		got := values(out)
		// Everything before the other path is still the recorded run's.
		if !strings.Contains(got, "other path: time=") || strings.Split(got, "\n")[0] != strings.Split(first, "\n")[0] {
			t.Fatalf("after the divergence:\n%s\nfirst:\n%s", got, first)
		}
		ts.must("print path_taken", `= 1`)
		log, _ := ts.ReplayLog()
		l, err := replaylog.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		if l.Divergences != 1 || l.Entries[len(l.Entries)-1].Kind != replaylog.Time {
			t.Fatalf("the log should end with the new branch's time(): %d divergences, last %+v", l.Divergences, l.Entries[len(l.Entries)-1])
		}
		// The new branch replays in its turn.
		ts.must("fred-restart 1", `main`)
		ts.do("set var path_taken = 1")
		if again := values(ts.must("continue", `Breakpoint 2, main`)); again != got {
			t.Fatalf("the new branch did not replay:\n%s\nwant:\n%s", again, got)
		}
	})
}

// TestReplayLogReverse: reverse commands replay from a snapshot, and with
// the log the program reads the same clock and random values again.
func TestReplayLogReverse(t *testing.T) {
	for _, noLog := range []bool{false, true} {
		t.Run(fmt.Sprintf("log=%v", !noLog), func(t *testing.T) {
			w := newWorld(t)
			ts := logSession(t, P.GDB, []string{"gdb", "-q", testutil.Fixture(t, "nondet")}, "criu", noLog)
			ts.must("break main", `Breakpoint 1`)
			ts.must(fmt.Sprintf("run %s 0", w.file), `snapshot 1 taken`)
			// Lines 65 to 67 read the clocks through the library (no line
			// information: steps go over it, not into libc).
			ts.must("break 68", `Breakpoint 2`)
			ts.must("continue", `Breakpoint 2, main`)
			read := func() string { return ts.value("mono.tv_nsec") + " " + ts.value("tv.tv_usec") }
			first := read()
			ts.must("fred-reverse-next 2", `66`)
			ts.must("next 2", `68`)
			again := read()
			if noLog && again == first {
				t.Fatalf("without the replay log the values should differ: %s", again)
			}
			if !noLog && again != first {
				t.Fatalf("after reverse-next and next: %s, first %s", again, first)
			}
		})
	}
}

// TestReplayLogTerminalInput: what the person typed to the program while
// it ran is in the log, and a replay feeds it again: the program does not
// wait for the person a second time.
func TestReplayLogTerminalInput(t *testing.T) {
	testutil.Require(t, "gdb")
	out := &syncBuf{}
	f := &feeder{}
	s, err := Start(Options{Personality: P.GDB, Argv: []string{"gdb", "-q", testutil.Fixture(t, "echo")}, Out: out,
		Forwarding: f.forwarding, Timeout: 30 * time.Second, Batch: true, Snapshots: "criu", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.s = s
	f.mu.Unlock()
	t.Cleanup(func() { s.Close() })
	ts := &tsession{Session: s, t: t, out: out}
	ts.must("break main", `Breakpoint 1`)
	ts.must("run", `snapshot 1 taken`)
	ts.must("break 20", `Breakpoint 2`)
	f.type_("hello\nstop\n")
	first := ts.must("continue", `got 'stop' \(2\)(?s).*Breakpoint 2, main`)
	ts.must("fred-restart 1", `main`)
	again := ts.must("continue", `Breakpoint 2, main`)
	got := regexp.MustCompile(`got '.*`).FindAllString(again, -1)
	if want := regexp.MustCompile(`got '.*`).FindAllString(first, -1); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("replayed input: %q, want %q", got, want)
	}
	ts.must("print lines", `= 2`)
}

// TestReplayLogDivergencePDB: the same in pdb, where the debugger shares
// the program's process.
func TestReplayLogDivergencePDB(t *testing.T) {
	w := newWorld(t)
	ts := logSession(t, P.PDB, []string{"python3", "-m", "pdb", script("nondet.py"), w.file, fmt.Sprint(w.port)}, "criu", false)
	ts.do("break 26")
	ts.must("continue", `file=first socket=connection-1`)
	ts.must("fred-checkpoint", `snapshot 2 taken`)
	ts.must("next", `\(27\)`)
	ts.must("fred-restart 2", `\(26\)`)
	ts.do(`!mode = "random"`)
	out := ts.must("next", `\(27\)`)
	if n := strings.Count(out, "diverged"); n != 1 || !regexp.MustCompile(`fred: replay log: the program diverged from the log at entry \d+: it called getrandom where the log has clock_gettime`).MatchString(out) {
		t.Fatalf("want one divergence message naming getrandom() and clock_gettime():\n%s", out)
	}
	if v := ts.value("mode"); v != "random" && v != "'random'" {
		t.Fatalf("mode is %s", v)
	}
	ts.must("continue", `extra='[0-9a-f]{8}'`)
}

// TestReplayLogProgramInput: under pdb and perl -d the program's own
// reads of the terminal (input(), <STDIN>) are logged, the debugger's are
// not: after a restore to before the read, the program gets the line the
// person typed the first time without asking again. Without the log it
// asks again, so the test can fail.
func TestReplayLogProgramInput(t *testing.T) {
	cases := []struct {
		name      string
		p         *P.Personality
		fixture   string
		brk, cont string
		at        string // the stop at the breakpoint
	}{
		{"pdb", P.PDB, "input.py", "b 16", "c", `input.py\(16\)main\(\)`},
		{"perl", P.Perl, "input.pl", "b 14", "c", `input.pl:14\)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forBackends(t, func(t *testing.T, backend string) {
				for _, noLog := range []bool{false, true} {
					t.Run(fmt.Sprintf("log=%v", !noLog), func(t *testing.T) {
						ts, in := inputSession(t, tc.p, argvOf(t, tc.p, tc.fixture), backend, noLog)
						ts.do(tc.brk)
						in.type_("fred\n")
						ts.must(tc.cont, `name\? fred\r?\nhello fred \(3 words\)(?s).*`+tc.at)
						ts.must("fred-restart 1", `\(1\)<module>|:5\)`)
						if noLog {
							// The program asks the person again, and gets another
							// answer.
							in.type_("other\n")
							ts.must(tc.cont, `hello other \(3 words\)(?s).*`+tc.at)
							return
						}
						// The line comes from the log. Should the program ask the
						// person again, it gets another line and the test fails
						// (rather than waiting for ever); when it does not ask, the
						// debugger or fred's resync takes that line, harmlessly.
						in.type_("other\n")
						out := ts.must(tc.cont, tc.at)
						if !strings.Contains(out, "hello fred (3 words)") || strings.Contains(out, "hello other") {
							t.Fatalf("the replayed run did not get the line typed the first time:\n%s", out)
						}
						// What the program read from the terminal is in the log;
						// what the debugger read there (its commands) is not.
						path, _ := ts.ReplayLog()
						l, err := replaylog.ReadFile(path)
						if err != nil {
							t.Fatal(err)
						}
						var typed []byte
						for _, e := range l.Entries {
							if (e.Kind == replaylog.Read || e.Kind == replaylog.Stdio) && e.Fd == 0 {
								typed = append(typed, e.Data...)
							}
						}
						if string(typed) != "fred\n" {
							t.Fatalf("the log's reads of the terminal: %q, want the program's line alone", typed)
						}
					})
				}
			})
		})
	}
}

// inputSession is inprocSession with or without the replay log.
func inputSession(t *testing.T, p *P.Personality, argv []string, backend string, noLog bool) (*tsession, *feeder) {
	t.Helper()
	ts, f := inprocSessionWith(t, p, argv, backend, noLog)
	if path, why := ts.ReplayLog(); noLog != (path == "") {
		t.Fatalf("replay log: %q (%s)", path, why)
	}
	return ts, f
}
