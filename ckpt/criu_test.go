package ckpt

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// The tests run the real CRIU on a real fixture (testdata/counter.c) that
// sits on a pty as its controlling terminal, the way a debugger's inferior
// or an interpreter running pdb does under fred.

func TestMain(m *testing.M) {
	// Restored processes are reparented to the nearest child subreaper,
	// as they are to fred.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "PR_SET_CHILD_SUBREAPER:", err)
		os.Exit(1)
	}
	code := m.Run()
	if counterBin != "" {
		os.RemoveAll(filepath.Dir(counterBin))
	}
	os.Exit(code)
}

// requireCriu fails the test (never skips) when CRIU cannot be used.
func requireCriu(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatalf("the CRIU tests need root (euid %d): run them as root; the fork backend covers non-root use", os.Geteuid())
	}
	p, err := FindCriu("")
	if err != nil {
		t.Fatalf("%v\nCRIU is required by these tests: run `make deps` (installs it in %s)", err, DefaultCriuPath)
	}
	return p
}

var (
	counterOnce sync.Once
	counterBin  string
	counterErr  error
)

// buildCounter compiles testdata/counter.c once per test binary.
func buildCounter(t *testing.T) string {
	t.Helper()
	requireCriu(t)
	counterOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ckpt-counter-")
		if err != nil {
			counterErr = err
			return
		}
		counterBin = filepath.Join(dir, "counter")
		out, err := exec.Command("gcc", "-O0", "-g", "-o", counterBin, "testdata/counter.c").CombinedOutput()
		if err != nil {
			counterErr = fmt.Errorf("gcc: %v\n%s", err, out)
		}
	})
	if counterErr != nil {
		hint := ""
		if _, err := exec.LookPath("gcc"); err != nil {
			hint = " (gcc is installed by `make deps`)"
		}
		t.Fatalf("building the fixture: %v%s", counterErr, hint)
	}
	return counterBin
}

// inferior is the fixture running on a pty.
type inferior struct {
	pid    int
	master *os.File
	slave  *os.File // kept open by the test, as fred keeps it
	mu     sync.Mutex
	cond   *sync.Cond
	out    []byte
	done   chan struct{}
	fds    map[int]string // the original's open fds and what they point to
}

func startCounter(t *testing.T) *inferior {
	t.Helper()
	bin := buildCounter(t)
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &inferior{pid: cmd.Process.Pid, master: master, slave: slave, done: make(chan struct{})}
	// The test reaps by pid with wait4, restored incarnations included.
	cmd.Process.Release()
	in.cond = sync.NewCond(&in.mu)
	go func() {
		defer close(in.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			in.mu.Lock()
			in.out = append(in.out, buf[:n]...)
			in.cond.Broadcast()
			in.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		killReap(in.pid)
		master.Close()
		slave.Close()
		<-in.done
	})
	// Besides 0, 1, 2 the fixture may hold fds the test binary inherited
	// without close-on-exec from whatever started it. Read once it runs:
	// while it starts, the dynamic loader has libraries open.
	in.waitTicks(t, 0, 1)
	in.fds = procFds(t, in.pid)
	return in
}

var tickRE = regexp.MustCompile(`tick (\d+)\r?\n`)

func ticks(b []byte) []int64 {
	var r []int64
	for _, m := range tickRE.FindAllSubmatch(b, -1) {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		r = append(r, n)
	}
	return r
}

// mark returns the current end of the output.
func (in *inferior) mark() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.out)
}

// ticksSince returns the ticks printed after mark.
func (in *inferior) ticksSince(mark int) []int64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return ticks(in.out[mark:])
}

// waitTicks waits until at least n ticks were printed after mark.
func (in *inferior) waitTicks(t *testing.T, mark, n int) []int64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tk := in.ticksSince(mark)
		if len(tk) >= n {
			return tk
		}
		if time.Now().After(deadline) {
			in.mu.Lock()
			tail := string(in.out[mark:])
			in.mu.Unlock()
			t.Fatalf("waited 10s for %d ticks, got %d; output since mark: %q", n, len(tk), tail)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// last returns the last tick printed so far.
func (in *inferior) last(t *testing.T) int64 {
	t.Helper()
	tk := in.ticksSince(0)
	if len(tk) == 0 {
		t.Fatal("no tick printed yet")
	}
	return tk[len(tk)-1]
}

// stop sends SIGSTOP, waits for the stop and for the pty to drain, and
// returns the last tick printed.
func (in *inferior) stop(t *testing.T) int64 {
	t.Helper()
	if err := unix.Kill(in.pid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := WaitStopped(in.pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	in.drain()
	return in.last(t)
}

// drain lets the reader take what a stopped or dead process wrote.
func (in *inferior) drain() {
	m := in.mark()
	for i := 0; i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
		n := in.mark()
		if n == m {
			return
		}
		m = n
	}
}

func cont(t *testing.T, pid int) {
	t.Helper()
	if err := unix.Kill(pid, unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// killReap kills pid and reaps it (it must be our child, directly or by
// subreaping).
func killReap(pid int) {
	if unix.Kill(pid, unix.SIGKILL) != nil {
		return
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			return
		}
	}
}

func newCRIU(t *testing.T, in *inferior, incremental bool) *criuSnapshotter {
	t.Helper()
	requireCriu(t)
	o := Options{Dir: t.TempDir(), Incremental: incremental}
	if in != nil {
		o.TTY = in.slave
	}
	s, err := NewCRIU(o)
	if err != nil {
		t.Fatalf("NewCRIU: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*criuSnapshotter)
}

func take(t *testing.T, s Snapshotter, in *inferior, id int) (*Snapshot, int64) {
	t.Helper()
	k := in.stop(t)
	snap, err := s.Take(in.pid, id)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	// CRIU stops the task with a signal it takes on its way back to user
	// mode: it may show as running for a moment, never running user code.
	if err := WaitStopped(in.pid, 5*time.Second); err != nil {
		st, _ := ProcState(in.pid)
		t.Fatalf("after Take, process state %c, %v; want stopped (T)", st, err)
	}
	t.Logf("snapshot %d at tick %d: dump took %v, %d bytes on disk (parent %d)", id, k, snap.Took, snap.Size, snap.Parent)
	return snap, k
}

// restoreAndCheck kills the current process, restores snap and checks that
// the same pid is back, stopped, our child, on the pty, and that it prints
// want next once continued.
func restoreAndCheck(t *testing.T, s Snapshotter, in *inferior, snap *Snapshot, want int64) time.Duration {
	t.Helper()
	killReap(in.pid)
	in.drain()
	m := in.mark()
	start := time.Now()
	pid, err := s.Restore(snap)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if pid != in.pid {
		t.Fatalf("restored pid %d, want %d", pid, in.pid)
	}
	if err := WaitStopped(pid, 5*time.Second); err != nil {
		st, _ := ProcState(pid)
		t.Fatalf("restored process state %c, %v; want stopped (T)", st, err)
	}
	ppid, ttyNr := statFields(t, pid)
	if ppid != os.Getpid() {
		t.Errorf("restored process has parent %d, want the test (subreaper) %d", ppid, os.Getpid())
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(in.slave.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if uint64(ttyNr) != st.Rdev {
		t.Errorf("restored process controlling tty %#x, want the pty slave %#x", ttyNr, st.Rdev)
	}
	// Its fds are the ones it had, with 0, 1 and 2 on the pty slave.
	slaveName, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", in.slave.Fd()))
	fds := procFds(t, pid)
	if !slices.Equal(slices.Sorted(maps.Keys(fds)), slices.Sorted(maps.Keys(in.fds))) {
		t.Errorf("restored process has fds %v, the original had %v", fds, in.fds)
	}
	for fd := 0; fd <= 2; fd++ {
		if fds[fd] != slaveName {
			t.Errorf("restored process fd %d is %q, want the pty slave %q", fd, fds[fd], slaveName)
		}
	}
	cont(t, pid)
	tk := in.waitTicks(t, m, 3)
	if tk[0] != want || tk[1] != want+1 || tk[2] != want+2 {
		t.Fatalf("after restore the process printed ticks %v, want %d, %d, %d...", tk[:3], want, want+1, want+2)
	}
	return took
}

// procFds returns the open fds of pid and what they point to.
func procFds(t *testing.T, pid int) map[int]string {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, e := range ents {
		n, _ := strconv.Atoi(e.Name())
		m[n], _ = os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, n))
	}
	return m
}

// statFields returns ppid and tty_nr of pid.
func statFields(t *testing.T, pid int) (int, int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	// state ppid pgrp session tty_nr
	ppid, _ := strconv.Atoi(f[1])
	tty, _ := strconv.Atoi(f[4])
	return ppid, tty
}

func TestTakeRestore(t *testing.T) {
	in := startCounter(t)
	s := newCRIU(t, in, false)
	in.waitTicks(t, 0, 5)
	snap, k := take(t, s, in, 1)
	if snap.Pid != in.pid || snap.ID != 1 || snap.Size <= 0 || snap.Took <= 0 {
		t.Fatalf("bad snapshot %+v", snap)
	}
	logInfo, err := os.Stat(filepath.Join(snap.Dir, "dump.log"))
	if err != nil {
		t.Fatalf("no dump log: %v", err)
	}
	t.Logf("images %d bytes + dump.log %d bytes", snap.Size-logInfo.Size(), logInfo.Size())
	// Let it run on past the snapshot.
	cont(t, in.pid)
	m := in.mark()
	in.waitTicks(t, m, 20)
	took := restoreAndCheck(t, s, in, snap, k+1)
	t.Logf("restore took %v", took)
}

func TestSeveralSnapshots(t *testing.T) {
	in := startCounter(t)
	s := newCRIU(t, in, false)
	var snaps []*Snapshot
	var at []int64
	for id := 1; id <= 3; id++ {
		in.waitTicks(t, in.mark(), 10)
		snap, k := take(t, s, in, id)
		snaps, at = append(snaps, snap), append(at, k)
		cont(t, in.pid)
	}
	in.waitTicks(t, in.mark(), 10)
	// Oldest first, then the newest, then the middle one.
	for _, i := range []int{0, 2, 1} {
		took := restoreAndCheck(t, s, in, snaps[i], at[i]+1)
		t.Logf("restore of snapshot %d took %v", snaps[i].ID, took)
		in.waitTicks(t, in.mark(), 5)
	}
}

func TestRepeatedRestoresLeakNothing(t *testing.T) {
	in := startCounter(t)
	s := newCRIU(t, in, false)
	in.waitTicks(t, 0, 5)
	snap, k := take(t, s, in, 1)
	cont(t, in.pid)

	children0 := children(t)
	fds0 := countFds(t)
	disk0 := diskUsage(t, s.o.Dir)
	var total time.Duration
	const n = 20
	for i := 0; i < n; i++ {
		total += restoreAndCheck(t, s, in, snap, k+1)
		if c := children(t); len(c) != len(children0) {
			t.Fatalf("restore %d: children %v, before the restores %v", i, c, children0)
		}
	}
	disk1 := diskUsage(t, s.o.Dir)
	t.Logf("%d restores: %v on average; snapshot %d bytes; session dir %d -> %d bytes",
		n, total/n, snap.Size, disk0, disk1)
	if fds := countFds(t); fds != fds0 {
		t.Errorf("open fds %d after %d restores, %d before", fds, n, fds0)
	}
	if c := children(t); len(c) != len(children0) {
		t.Errorf("children %v after the restores, %v before", c, children0)
	}
	// restore.log is rewritten by every restore, never added to.
	if disk1 > disk0+1<<20 {
		t.Errorf("session dir grew from %d to %d bytes", disk0, disk1)
	}
	if err := s.Drop(snap); err != nil {
		t.Fatal(err)
	}
	if d := diskUsage(t, s.o.Dir); d != 0 {
		t.Errorf("after Drop the session dir holds %d bytes", d)
	}
}

func TestRestoreDropped(t *testing.T) {
	in := startCounter(t)
	s := newCRIU(t, in, false)
	in.waitTicks(t, 0, 3)
	snap, _ := take(t, s, in, 1)
	if err := s.Drop(snap); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap.Dir); !os.IsNotExist(err) {
		t.Errorf("dropped snapshot dir still there: %v", err)
	}
	killReap(in.pid)
	pid, err := s.Restore(snap)
	if err == nil {
		killReap(pid)
		t.Fatal("restore of a dropped snapshot succeeded")
	}
	if !errors.Is(err, ErrDropped) {
		t.Errorf("error %v does not wrap ErrDropped", err)
	}
}

func TestRefusals(t *testing.T) {
	in := startCounter(t)
	s := newCRIU(t, in, false)
	for _, pid := range []int{0, -1, os.Getpid()} {
		if _, err := s.Take(pid, 1); err == nil {
			t.Errorf("Take(%d) succeeded", pid)
		}
	}
	in.waitTicks(t, 0, 3)
	snap, _ := take(t, s, in, 1)
	if _, err := s.Take(in.pid, 1); err == nil {
		t.Errorf("second Take with id 1 succeeded")
	}
	// The process still lives: restoring over it is refused.
	if _, err := s.Restore(snap); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("restore over a live pid: %v", err)
	}
	// A ptraced process is refused with a clear message.
	var err error
	if serr := whileTraced(in.pid, func() { _, err = s.Take(in.pid, 2) }); serr != nil {
		t.Fatal(serr)
	}
	if err == nil || !strings.Contains(err.Error(), "ptraced") {
		t.Errorf("Take of a traced process: %v", err)
	}
}

// whileTraced runs f while pid is ptraced by a thread of the test. That
// thread is left locked so that it exits afterwards, which detaches the
// tracee whatever state it is in.
func whileTraced(pid int, f func()) error {
	errc := make(chan error)
	go func() {
		runtime.LockOSThread()
		if err := unix.PtraceSeize(pid); err != nil {
			errc <- err
			return
		}
		f()
		unix.PtraceDetach(pid)
		errc <- nil
	}()
	return <-errc
}

func TestDumpMissingPid(t *testing.T) {
	s := newCRIU(t, nil, false)
	// A pid that just became free.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	_, err := s.Take(pid, 7)
	if err == nil {
		t.Fatalf("dump of missing pid %d succeeded", pid)
	}
	var ce *CriuError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CriuError", err, err)
	}
	t.Logf("error: %v", err)
	if ce.Op != "dump" || ce.Log == "" || !strings.Contains(err.Error(), ce.Log) {
		t.Errorf("error %q: want op dump and the log path %q in it", err, ce.Log)
	}
	if ce.Reason == "" {
		t.Errorf("no reason taken from the log")
	}
	if _, err := os.Stat(ce.Log); err != nil {
		t.Errorf("log %s: %v", ce.Log, err)
	}
	if ce.Unwrap() == nil {
		t.Errorf("no underlying error")
	}
	// The failed id can be taken again later.
	if _, ok := s.snaps[7]; ok {
		t.Errorf("failed snapshot is recorded")
	}
}

func TestIncremental(t *testing.T) {
	in := startCounter(t)
	s := newCRIU(t, in, true)
	if !s.memTrack {
		// `criu check --feature mem_dirty_track` fails: the kernel has no
		// CONFIG_MEM_SOFT_DIRTY. Incremental must fall back to full dumps.
		t.Log("no memory tracking in this kernel: checking the fallback to full dumps")
	}
	in.waitTicks(t, 0, 5)
	s1, _ := take(t, s, in, 1)
	cont(t, in.pid)
	in.waitTicks(t, in.mark(), 10)
	s2, k2 := take(t, s, in, 2)
	want2 := 1
	if !s.memTrack {
		want2 = -1
	}
	if s1.Parent != -1 || s2.Parent != want2 {
		t.Fatalf("parents %d, %d; want -1, %d", s1.Parent, s2.Parent, want2)
	}
	if s.memTrack && s2.Size >= s1.Size {
		t.Errorf("incremental image %d bytes, full one %d", s2.Size, s1.Size)
	}
	cont(t, in.pid)
	in.waitTicks(t, in.mark(), 10)

	// The child needs the parent's pages: dropping the parent keeps them.
	if err := s.Drop(s1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s1.Dir); s.memTrack && err != nil {
		t.Fatalf("parent dir of a live snapshot removed: %v", err)
	}
	restoreAndCheck(t, s, in, s2, k2+1)
	if pid, err := s.Restore(s1); !errors.Is(err, ErrDropped) {
		if err == nil {
			killReap(pid)
		}
		t.Fatalf("restore of dropped parent: %v, want ErrDropped", err)
	}

	// A dump after a restore is incremental against the restored image,
	// and restores right.
	in.waitTicks(t, in.mark(), 10)
	s3, k3 := take(t, s, in, 3)
	if s.memTrack && s3.Parent != 2 {
		t.Errorf("snapshot 3 parent %d, want 2", s3.Parent)
	}
	cont(t, in.pid)
	in.waitTicks(t, in.mark(), 10)
	restoreAndCheck(t, s, in, s3, k3+1)
	restoreAndCheck(t, s, in, s2, k2+1)

	if err := s.Drop(s2); err != nil {
		t.Fatal(err)
	}
	if err := s.Drop(s3); err != nil {
		t.Fatal(err)
	}
	if d := diskUsage(t, s.o.Dir); d != 0 {
		t.Errorf("after dropping all, the session dir holds %d bytes", d)
	}
}

// TestDropKeepsParents checks the bookkeeping of incremental images
// without CRIU (this machine's kernel may not track memory): a dropped
// snapshot's directory lives while a snapshot dumped against it does.
func TestDropKeepsParents(t *testing.T) {
	c := &criuSnapshotter{o: Options{Dir: t.TempDir()}, snaps: map[int]*snapEntry{}, base: map[int]int{}}
	mk := func(id, parent int) *Snapshot {
		s := &Snapshot{ID: id, Dir: c.snapDir(id), Pid: 100, Parent: parent}
		if err := os.Mkdir(s.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		c.snaps[id] = &snapEntry{s: s}
		if parent >= 0 {
			c.snaps[parent].children++
		}
		c.base[100] = id
		return s
	}
	exists := func(s *Snapshot) bool { _, err := os.Stat(s.Dir); return err == nil }
	// 1 <- 2 <- 3, and 1 <- 4
	s1, s2 := mk(1, -1), mk(2, 1)
	s3, s4 := mk(3, 2), mk(4, 1)
	for _, s := range []*Snapshot{s1, s2} {
		if err := c.Drop(s); err != nil {
			t.Fatal(err)
		}
	}
	if !exists(s1) || !exists(s2) {
		t.Fatal("parents of live snapshots removed")
	}
	if _, err := c.Restore(s2); !errors.Is(err, ErrDropped) {
		t.Fatalf("restore of dropped, kept parent: %v", err)
	}
	if err := c.Drop(s3); err != nil {
		t.Fatal(err)
	}
	if exists(s3) || exists(s2) || !exists(s1) {
		t.Fatalf("after dropping 3: dirs 1 %v, 2 %v, 3 %v; want 1 only", exists(s1), exists(s2), exists(s3))
	}
	if err := c.Drop(s4); err != nil {
		t.Fatal(err)
	}
	if exists(s1) || exists(s4) || len(c.snaps) != 0 {
		t.Fatalf("after dropping all: dirs 1 %v, 4 %v, %d records", exists(s1), exists(s4), len(c.snaps))
	}
	if len(c.base) != 0 {
		t.Errorf("base still names dropped snapshots: %v", c.base)
	}
}

func TestNoCriu(t *testing.T) {
	_, err := FindCriu("/nonexistent/criu")
	if !errors.Is(err, ErrNoCriu) {
		t.Errorf("FindCriu of a missing flag path: %v, want ErrNoCriu", err)
	}
	_, err = NewCRIU(Options{Dir: t.TempDir(), CriuPath: "/nonexistent/criu"})
	if !errors.Is(err, ErrNoCriu) {
		t.Errorf("NewCRIU with a missing criu: %v, want ErrNoCriu", err)
	}
	t.Setenv("FRED_CRIU", "/nonexistent/criu-env")
	if _, err := FindCriu(""); !errors.Is(err, ErrNoCriu) || !strings.Contains(err.Error(), "FRED_CRIU") {
		t.Errorf("FindCriu with a bad $FRED_CRIU: %v", err)
	}
	// A program that is not CRIU fails the usability check.
	_, err = NewCRIU(Options{Dir: t.TempDir(), CriuPath: "/bin/false"})
	var ce *CriuError
	if !errors.Is(err, ErrNoCriu) || (os.Geteuid() == 0 && !errors.As(err, &ce)) {
		t.Errorf("NewCRIU with /bin/false: %v, want a *CriuError wrapping ErrNoCriu", err)
	}
}

func TestErrorLines(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{`(00.000123) Dumping
(00.030320) Error (criu/util.c:1533): rlimit: Can't setup RLIMIT_NOFILE for self: Operation not permitted
(00.030939) Warn  (compel/src/lib/infect.c:133): Unable to interrupt task: 42 (No such process)
(00.030963) Error (compel/src/lib/infect.c:418): Unable to detach from 42: No such process
(00.030970) Error (criu/cr-dump.c:2111): Dumping FAILED.
`, "Unable to detach from 42: No such process"},
		{`(00.001000) 42: Error (criu/files.c:1): first
(00.001000) 42: Error (criu/files.c:2): second
(00.001000) 42: Error (criu/files.c:3): third
(00.001100) Error (criu/cr-restore.c:2000): Restoring FAILED.
(00.001200) Unlock network
`, "second; third"},
		{`(00.030320) Error (criu/util.c:1533): rlimit: Can't setup RLIMIT_NOFILE for self: Operation not permitted
(00.030970) Error (criu/cr-dump.c:2111): Dumping FAILED.
`, "rlimit: Can't setup RLIMIT_NOFILE for self: Operation not permitted; Dumping FAILED."},
		{"Error (criu/cr-check.c:1): vdso: Unexpected rt vDSO area bounds\n", "vdso: Unexpected rt vDSO area bounds"},
		{"nothing wrong\n", ""},
	} {
		if got := errorLines([]byte(c.log)); got != c.want {
			t.Errorf("errorLines(%q):\n got %q\nwant %q", c.log, got, c.want)
		}
	}
	e := &CriuError{Op: "dump", Reason: "r", Log: "/x/dump.log", Err: errors.New("e")}
	if e.Error() != "criu dump failed: r (log: /x/dump.log)" {
		t.Errorf("Error() = %q", e.Error())
	}
}

// children lists the pids whose parent is this process.
func children(t *testing.T) []string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil {
		t.Fatal(err)
	}
	var r []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		r = append(r, strings.Fields(string(b))...)
	}
	return r
}

func countFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func diskUsage(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
