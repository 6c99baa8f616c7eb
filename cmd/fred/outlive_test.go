package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/testutil"
)

// Nothing of a session outlives fred, however it ends (internal/proc/
// keeper.go): these tests kill fred with SIGKILL, as kill -9 or the
// out-of-memory killer would, in a session with snapshots and a restored
// program, and look for what is left.

// gone is how long the session's processes may take to go after fred is
// killed: a bound on the wait, not a measure (they go in milliseconds;
// a paused copy of a gdb program looks for fred once a second).
const gone = 20 * time.Second

// ptySession is fred on a pty, driven by the test.
type ptySession struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	prompt string
	mu     sync.Mutex
	out    bytes.Buffer
	seen   int // output before this offset has been matched
	done   chan struct{}
}

func startOnPTY(t *testing.T, env []string, prompt string, args ...string) *ptySession {
	t.Helper()
	cmd := exec.Command(testutil.Fred(t), args...)
	cmd.Env = env
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, cmd: cmd, master: master, prompt: prompt, done: make(chan struct{})}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			s.mu.Lock()
			s.out.Write(b[:n])
			s.mu.Unlock()
			if err != nil {
				close(s.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		master.Close()
	})
	return s
}

// expect waits for re in what fred printed since the last match.
func (s *ptySession) expect(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		text := s.out.String()[s.seen:]
		if loc := rx.FindStringIndex(text); loc != nil {
			s.seen += loc[1]
			s.mu.Unlock()
			return text[:loc[1]]
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			s.t.Fatalf("waiting for %q; fred printed:\n%s", re, text)
		}
		select {
		case <-s.done:
			s.t.Fatalf("fred ended while the test waited for %q; it printed:\n%s", re, text)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// do types line and waits for want, then the prompt.
func (s *ptySession) do(line, want string) {
	s.t.Helper()
	if _, err := s.master.Write([]byte(line + "\r")); err != nil {
		s.t.Fatal(err)
	}
	// The prompt on a line after the one typed: fred's line editor
	// shows the prompt again with each key typed.
	s.expect(`(?s)` + want + `.*\n[^\n]*` + s.prompt)
}

// marked lists the processes, zombies aside, whose environment holds kv
// (every process of a session inherits fred's environment) or whose
// environment names fred's pid as the one its keeper keeps.
func marked(kv string, fred int) []string {
	var out []string
	keeper := fmt.Sprintf("FRED_KEEPER_OF=%d\x00", fred)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(kv+"\x00")) && !bytes.Contains(env, []byte(keeper)) {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(st)
		if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X' {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		c := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if len(c) > 60 {
			c = c[:60] + "..."
		}
		out = append(out, e.Name()+" "+c)
	}
	return out
}

// keeperOf is the pid of fred's keeper, 0 if none.
func keeperOf(fred int) int {
	want := []byte(fmt.Sprintf("FRED_KEEPER_OF=%d\x00", fred))
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, want) {
			return pid
		}
	}
	return 0
}

type outliveCase struct {
	name   string
	args   []string // fred's command line
	prompt string
	first  string      // what the first prompt follows
	steps  [][2]string // lines and what they print; hup stands for hup
	hup    string      // makes the program ignore SIGHUP
	// hupToo: the program ignores SIGHUP even when the keeper is killed
	// as well: it dies with fred by other means (a live fork copy's
	// PR_SET_PDEATHSIG), not by the pty's hang-up.
	hupToo bool
	goOn   string // the last line: the program runs on, and on
	least  int    // processes of the session before the kill, at least
}

const hup = "HUP"

// outliveCases: a snapshot, forward, a restore of it, and the program
// runs on (it spins) when fred is killed. The program ignores SIGHUP from
// before that snapshot, so the pty's hang-up when fred dies does not end
// it: a live program that the debugger did not start (a restore made it)
// and that does not wait at a prompt must go by fred's own doing.
func outliveCases(t *testing.T) []outliveCase {
	prog := testutil.Fixture(t, "spin")
	py := filepath.Join(testutil.Root(), "testdata", "spin.py")
	pl := filepath.Join(testutil.Root(), "testdata", "spin.pl")
	gdbSteps := [][2]string{
		{"break main", `Breakpoint 1 at`},
		{"run", `snapshot 1 taken`},
		{hup, ``},
		{"next", `fflush`},
		{"fred-checkpoint", `snapshot 2 taken`},
		{"next", `counter\+\+`},
		{"fred-restart 2", `fflush`},
	}
	gdbHup := "print (long)signal(1, (void *)1)"
	inProcess := func(want string) [][2]string {
		return [][2]string{
			{hup, ``},
			{"n", want},
			{"fred-checkpoint", `snapshot 2 taken`},
			{"n", want},
			{"fred-restart 2", want},
		}
	}
	return []outliveCase{
		// fred, its keeper, gdb, the program, two paused copies.
		{"gdb", []string{"gdb", "-q", prog}, `\(gdb\) `, ``, gdbSteps, gdbHup, true, "continue", 6},
		// CRIU's snapshots: a restored program is fred's child, not gdb's.
		{"gdb-criu", []string{"--snapshots=criu", "gdb", "-q", prog}, `\(gdb\) `, `snapshots: CRIU`, gdbSteps, gdbHup, false, "continue", 4},
		// fred, its keeper, the interpreter, two paused copies.
		{"pdb", []string{"python3", "-m", "pdb", py}, `\(Pdb\) `, `snapshot 1 taken`, inProcess(`\n-> `),
			"import signal; signal.signal(signal.SIGHUP, signal.SIG_IGN)", false, "c", 5},
		{"perl", []string{"perl", "-d", pl}, `DB<\d*> `, `snapshot 1 taken`, inProcess(`main::\(`),
			"$SIG{HUP} = 'IGNORE'", false, "c", 5},
	}
}

// spinning waits until a process of the session running the fixture is
// running.
func spinning(t *testing.T, mark string) {
	t.Helper()
	for end := time.Now().Add(wait); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(env, []byte(mark+"\x00")) {
				continue
			}
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'R' && bytes.Contains(cmdline, []byte("spin")) {
				return
			}
		}
	}
	t.Fatalf("the program does not run on")
}

// TestKill9LeavesNothing: after kill -9 of fred, in each debugger, with
// snapshots taken and one restored, no process of the session is left,
// and the keeper has removed the session directory. With the keeper
// killed as well (as a kill of every process of the user would), the
// debugger, the program and the paused copies still go by themselves
// (the program does not ignore SIGHUP then, except a live fork copy under
// gdb, which dies by PR_SET_PDEATHSIG), and the next fred removes
// the directory left behind.
func TestKill9LeavesNothing(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "python3", "perl")
	for _, tc := range outliveCases(t) {
		for _, keeperToo := range []bool{false, true} {
			name := tc.name
			if keeperToo {
				name += "-and-keeper"
			}
			t.Run(name, func(t *testing.T) {
				cache := t.TempDir()
				mark := fmt.Sprintf("FRED_OUTLIVE_TEST=%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
				env := append(os.Environ(), "TERM=dumb", "XDG_CACHE_HOME="+cache, mark)
				s := startOnPTY(t, env, tc.prompt, tc.args...)
				s.expect(`(?s)` + tc.first + `.*` + tc.prompt)
				for _, st := range tc.steps {
					switch {
					case st[0] != hup:
						s.do(st[0], st[1])
					case !keeperToo || tc.hupToo:
						s.do(tc.hup, st[1])
					}
				}
				if _, err := s.master.Write([]byte(tc.goOn + "\r")); err != nil {
					t.Fatal(err)
				}
				spinning(t, mark)
				fred := s.cmd.Process.Pid
				before := marked(mark, fred)
				if len(before) < tc.least {
					t.Fatalf("the session has %d processes, expected at least %d: %v", len(before), tc.least, before)
				}
				keeper := keeperOf(fred)
				if keeper <= 0 {
					t.Fatalf("fred %d has no keeper; the session's processes: %v", fred, before)
				}
				dirs, _ := filepath.Glob(filepath.Join(cache, "fred", "sessions", "*"))
				if len(dirs) != 1 {
					t.Fatalf("session directories: %v, want one", dirs)
				}
				t.Logf("before the kill: %v", before)

				if keeperToo {
					// First: a keeper that saw fred go would clean up
					// before its own kill.
					_ = syscall.Kill(keeper, syscall.SIGKILL)
					for end := time.Now().Add(gone); proc.Alive(keeper) && time.Now().Before(end); {
						time.Sleep(10 * time.Millisecond)
					}
				}
				_ = syscall.Kill(fred, syscall.SIGKILL)
				_, _ = s.cmd.Process.Wait()
				var left []string
				for end := time.Now().Add(gone); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
					if left = marked(mark, fred); len(left) == 0 {
						break
					}
				}
				if len(left) > 0 {
					for _, l := range left {
						if pid, err := strconv.Atoi(strings.Fields(l)[0]); err == nil && pid > 0 {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
					t.Fatalf("left after kill -9 of fred: %v", left)
				}
				if !keeperToo {
					for end := time.Now().Add(gone); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
						if _, err := os.Stat(dirs[0]); os.IsNotExist(err) {
							break
						}
					}
					if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
						t.Fatalf("the keeper left the session directory %s: %v", dirs[0], err)
					}
					return
				}
				// The directory outlived fred and its keeper; the next
				// fred to start removes it.
				if _, err := os.Stat(dirs[0]); err != nil {
					t.Fatalf("the session directory went without the keeper: %v", err)
				}
				runBatch(t, env)
				if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
					t.Fatalf("the next fred left the stale session directory %s: %v", dirs[0], err)
				}
			})
		}
	}
}

// runBatch runs a short fred session with env, to completion.
func runBatch(t *testing.T, env []string) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(script, []byte("print 1+1\n"), 0o644)
	c := exec.Command(testutil.Fred(t), "--batch", "-x", script, "gdb", "-q", testutil.Fixture(t, "steps"))
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "$1 = 2") {
		t.Fatalf("fred --batch: %v\n%s", err, out)
	}
}

// A session directory is removed at the next start only when its fred is
// gone: one whose fred runs stays, as does one kept with --keep.
func TestStaleSessionDirs(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	cache := t.TempDir()
	env := append(os.Environ(), "TERM=dumb", "XDG_CACHE_HOME="+cache)
	sessions := filepath.Join(cache, "fred", "sessions")

	// A directory as a fred killed before it could clean up leaves it:
	// named after a pid that is gone now.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(sessions, strconv.Itoa(dead.Process.Pid))
	kept := filepath.Join(sessions, strconv.Itoa(dead.Process.Pid)+"-1")
	for _, d := range []string{filepath.Join(stale, "snap-1"), kept} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(stale, "replay.log"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(kept, "keep"), nil, 0o600)

	// A running fred with a session directory of its own.
	live := startOnPTY(t, env, `\(gdb\) `, "gdb", "-q", testutil.Fixture(t, "steps"))
	live.expect(`\(gdb\) `)
	liveDir := filepath.Join(sessions, strconv.Itoa(live.cmd.Process.Pid))
	if _, err := os.Stat(liveDir); err != nil {
		t.Fatalf("the running fred has no session directory: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale session directory is still there after a fred started: %v", err)
	}

	runBatch(t, env)
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("another fred removed the session directory of a running fred: %v", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a directory kept with --keep was removed: %v", err)
	}
	live.do("print 6*7", `\$1 = 42`)
	live.master.Write([]byte("quit\r"))
	select {
	case <-live.done:
	case <-time.After(wait):
		t.Fatal("fred did not end on quit")
	}
	_ = live.cmd.Wait()
	if _, err := os.Stat(liveDir); !os.IsNotExist(err) {
		t.Errorf("fred left its session directory: %v", err)
	}
}
