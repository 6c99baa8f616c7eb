package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/fred"
	P "github.com/fred-debugger/fred/personalities"
)

// outBuf is a session's output, read between commands.
type outBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *outBuf) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *outBuf) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

func (o *outBuf) take() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.b.String()
	o.b.Reset()
	return s
}

// session is one fred session on gdb, with its own snapshot directory and a
// timestamped trace of fred's traffic with gdb.
type session struct {
	s     *fred.Session
	out   *outBuf
	dir   string // snapshots
	prog  string
	trace *tracer
	pids  []int   // program pids seen, checked at close
	prof  profile // of the last command
	peak  uint64  // the process's peak resident memory during the last reverse-watch (0: unknown)
	gdb   int     // the debugger's pid (our child), for the watchdog
}

// startSession runs fred on gdb on prog, with snapshots in a fresh
// directory under root. A traced session timestamps fred's traffic with
// gdb, to say where the time goes; the tracing slows fred down a little,
// so the figures in the table come from sessions without it.
func startSession(root, prog string, traced bool) (*session, error) {
	return startSessionOn(root, P.GDB, []string{"gdb", "-q", prog}, traced)
}

// startSessionOn runs fred on the debugger command line argv, with the
// default snapshots: CRIU, and fork copies of single-threaded programs.
func startSessionOn(root string, pers *P.Personality, argv []string, traced bool) (*session, error) {
	return startSessionWith(root, pers, argv, traced, "auto")
}

// backendNames are what fred says of each --snapshots mode the bench uses.
var backendNames = map[string]string{
	"auto": "snapshots: CRIU, and fork copies while the program has one thread",
	"criu": "snapshots: CRIU",
}

// startSessionWith runs fred on argv with snapshots by backend.
func startSessionWith(root string, pers *P.Personality, argv []string, traced bool, backend string) (*session, error) {
	prog := argv[len(argv)-1]
	dir, err := os.MkdirTemp(root, "snaps-")
	if err != nil {
		return nil, err
	}
	var tr *tracer
	if traced {
		if tr, err = newTracer(root); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		os.Setenv("FRED_TRACE", tr.path)
	}
	out := &outBuf{}
	before := gdbChildren()
	s, err := fred.Start(fred.Options{Personality: pers, Argv: argv, Out: out,
		Timeout: 60 * time.Second, Batch: true, Snapshots: backend, Dir: dir})
	os.Unsetenv("FRED_TRACE")
	if err != nil {
		tr.close()
		os.RemoveAll(dir)
		return nil, err
	}
	x := &session{s: s, out: out, dir: dir, prog: prog, trace: tr}
	for _, pid := range gdbChildren() {
		if !containsInt(before, pid) {
			x.gdb = pid
		}
	}
	if b := s.SnapshotBackend(); b != backendNames[backend] {
		x.close()
		return nil, fmt.Errorf("fred has not the snapshots wanted (%s): %s", backendNames[backend], b)
	}
	out.take()
	return x, nil
}

// do runs one line as a person would type it, and returns what fred and
// gdb printed and the wall-clock time of the Exec call. A fred command
// that failed is an error.
func (x *session) do(line string) (string, time.Duration, error) {
	failed := x.s.Failed()
	x.trace.take()
	// fred's memory during a search (issue 17's bound), not elsewhere:
	// the reset costs a collection, outside the timed window.
	watching := strings.HasPrefix(line, "fred-reverse-watch")
	reset := watching && resetPeak()
	start := time.Now()
	err := x.s.Exec(line)
	took := time.Since(start)
	if watching {
		x.peak = 0
	}
	if reset {
		x.peak = peakRSS()
		notePeak(line+" on "+filepath.Base(x.prog), x.peak)
	}
	x.prof = profile{}
	if x.trace != nil {
		x.prof = profileOf(x.trace.take(), start, start.Add(took))
	}
	out := x.out.take()
	if err == nil && x.s.Failed() > failed {
		err = fmt.Errorf("%q failed: %s", line, strings.TrimSpace(lastFredLine(out)))
	}
	if err != nil {
		return out, took, fmt.Errorf("%s: %w\n%s", line, err, indent(tail(out, 8)))
	}
	if pid, perr := x.s.Pid(); perr == nil && pid > 0 && !containsInt(x.pids, pid) {
		x.pids = append(x.pids, pid)
	}
	return out, took, nil
}

// must runs lines, stopping at the first error.
func (x *session) must(lines ...string) error {
	for _, l := range lines {
		if _, _, err := x.do(l); err != nil {
			return err
		}
	}
	return nil
}

// close ends the session and checks nothing is left: no program, no
// snapshot directory.
func (x *session) close() error {
	x.s.Close()
	x.trace.close()
	err := os.RemoveAll(x.dir)
	for _, pid := range x.pids {
		deadline := time.Now().Add(5 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			err = fmt.Errorf("program pid %d was still running after the session closed", pid)
		}
	}
	return err
}

// gdbChildren lists our child processes that run gdb.
func gdbChildren() []int {
	var l []int
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if i < 0 || j < i || j+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[j+2:])
		if len(f) < 2 || s[i+1:j] != "gdb" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			l = append(l, pid)
		}
	}
	return l
}

// doWithin is do, but stops a command that runs longer than limit: first
// as Ctrl-C does (Session.Interrupt; fred goes back to where it was), and
// if that does not end it within a grace period, by killing the debugger
// (the session is then over).
func (x *session) doWithin(line string, limit time.Duration) (string, time.Duration, error) {
	var interrupted, killed atomic.Bool
	grace := 30 * time.Second
	t1 := time.AfterFunc(limit, func() {
		interrupted.Store(true)
		x.s.Interrupt()
	})
	t2 := time.AfterFunc(limit+grace, func() {
		if x.gdb > 0 {
			killed.Store(true)
			_ = syscall.Kill(x.gdb, syscall.SIGKILL)
		}
	})
	out, took, err := x.do(line)
	t1.Stop()
	t2.Stop()
	if interrupted.Load() || killed.Load() {
		return out, took, &stoppedError{cmd: line, after: took, limit: limit, killed: killed.Load()}
	}
	return out, took, err
}

// stoppedError is a command the bench stopped.
type stoppedError struct {
	cmd    string
	after  time.Duration
	limit  time.Duration
	killed bool
}

func (e *stoppedError) Error() string {
	if e.killed {
		return fmt.Sprintf("%s: did not finish in %s; Ctrl-C (Session.Interrupt) did not stop it either, so the bench killed gdb after %s", e.cmd, secs(e.limit.Seconds()), secs(e.after.Seconds()))
	}
	return fmt.Sprintf("%s: did not finish in %s; stopped with Ctrl-C (Session.Interrupt), back where it was after %s", e.cmd, secs(e.limit.Seconds()), secs(e.after.Seconds()))
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func containsInt(l []int, x int) bool {
	for _, y := range l {
		if y == x {
			return true
		}
	}
	return false
}

var (
	snapRe = regexp.MustCompile(`fred: snapshot (\d+) taken \(([\d.]+) s, (?:([\d.]+) (B|KB|MB|GB)|a paused copy)\)`)
	revRe  = regexp.MustCompile(`fred: '(fred-[a-z-]+)' took ([\d.]+) s \((\d+) restores, (\d+) replayed commands\)`)
)

// snapshotLine is what fred says after fred-checkpoint.
type snapshotLine struct {
	id   int
	took float64 // seconds
	size float64 // bytes
}

func parseSnapshot(out string) (snapshotLine, error) {
	m := snapRe.FindStringSubmatch(out)
	if m == nil {
		return snapshotLine{}, fmt.Errorf("no 'snapshot N taken' line in:\n%s", indent(tail(out, 5)))
	}
	id, _ := strconv.Atoi(m[1])
	took, _ := strconv.ParseFloat(m[2], 64)
	size, _ := strconv.ParseFloat(m[3], 64)
	size *= map[string]float64{"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[m[4]]
	return snapshotLine{id: id, took: took, size: size}, nil
}

// reverseLine is what fred says after a reverse command.
type reverseLine struct {
	took               float64
	restores, replayed int
}

func parseReverse(out string) (reverseLine, error) {
	m := revRe.FindStringSubmatch(out)
	if m == nil {
		return reverseLine{}, fmt.Errorf("no \"'fred-...' took\" line in:\n%s", indent(tail(out, 5)))
	}
	took, _ := strconv.ParseFloat(m[2], 64)
	r, _ := strconv.Atoi(m[3])
	p, _ := strconv.Atoi(m[4])
	return reverseLine{took: took, restores: r, replayed: p}, nil
}

// where is gdb's location line after a stop: "main () at f.c:23" or the
// source line "23\t...".
var lineRe = regexp.MustCompile(`(?m)^(\d+)\t`)

// lineOf returns the last source line number gdb showed in out, or 0.
func lineOf(out string) int {
	m := lineRe.FindAllStringSubmatch(out, -1)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

func lastFredLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "fred: ") {
			return lines[i]
		}
	}
	return tail(out, 1)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// compile builds testdata/NAME.c with gcc -g -O0 into dir.
func compile(root, dir, name string) (string, error) {
	out := filepath.Join(dir, name)
	src := filepath.Join(root, "testdata", name+".c")
	if b, err := exec.Command("gcc", "-g", "-O0", "-o", out, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v\n%s", src, err, b)
	}
	return out, nil
}

// tracer reads fred's FRED_TRACE through a fifo and timestamps each line:
// what fred sent gdb (">> ") and what gdb answered ("<< "). The reader is a
// blocking read on its own OS thread, so the stamps do not wait for Go's
// scheduler.
type tracer struct {
	path string
	fd   int
	mu   sync.Mutex
	ev   []event
	sync chan struct{}
	done chan struct{}
}

type event struct {
	t    time.Time
	sent bool   // fred -> gdb
	text string // the command sent (unquoted), or the quoted chunk read
}

var traceLine = regexp.MustCompile(`^(?:[0-9:.]+ )?(>>|<<) (.*)$`)

const (
	syncLine = "##bench-sync"
	endLine  = "##bench-end"
)

func newTracer(root string) (*tracer, error) {
	d, err := os.MkdirTemp(root, "trace-")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(d, "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		os.RemoveAll(d)
		return nil, err
	}
	// O_RDWR: opening does not wait for a writer, fred's open for writing
	// does not wait for us, and we can write the sync and end lines.
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		os.RemoveAll(d)
		return nil, err
	}
	t := &tracer{path: path, fd: fd, sync: make(chan struct{}, 1), done: make(chan struct{})}
	go t.read()
	return t, nil
}

func (t *tracer) read() {
	runtime.LockOSThread()
	defer close(t.done)
	buf := make([]byte, 256<<10)
	var pending []byte
	for {
		n, err := syscall.Read(t.fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		now := time.Now()
		pending = append(pending, buf[:n]...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			line := string(pending[:i])
			pending = pending[i+1:]
			switch {
			case line == syncLine:
				t.sync <- struct{}{}
				continue
			case line == endLine:
				return
			}
			// ">> "QUOTED"" (sent) or "<< "QUOTED"" (read), maybe after a
			// time stamp of fred's own.
			m := traceLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			e := event{t: now, sent: m[1] == ">>", text: m[2]}
			if e.sent {
				if u, err := strconv.Unquote(m[2]); err == nil {
					e.text = strings.TrimSpace(u)
				}
			}
			t.mu.Lock()
			t.ev = append(t.ev, e)
			t.mu.Unlock()
		}
	}
}

// take waits until the reader has seen everything fred wrote so far, and
// returns the events since the last take (or reset), forgetting them.
func (t *tracer) take() []event {
	if t == nil {
		return nil
	}
	if _, err := syscall.Write(t.fd, []byte(syncLine+"\n")); err == nil {
		select {
		case <-t.sync:
		case <-time.After(5 * time.Second):
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ev := t.ev
	t.ev = nil
	return ev
}

func (t *tracer) close() {
	if t == nil {
		return
	}
	_, _ = syscall.Write(t.fd, []byte(endLine+"\n"))
	select {
	case <-t.done:
	case <-time.After(5 * time.Second):
	}
	syscall.Close(t.fd)
	os.RemoveAll(filepath.Dir(t.path))
}

// binary is fixture name, compiled once per bench run.
func (b *bench) binary(name string) (string, error) {
	if p := b.bins[name]; p != "" {
		return p, nil
	}
	p, err := compile(b.root, b.tmp, name)
	if err == nil {
		b.bins[name] = p
	}
	return p, err
}
