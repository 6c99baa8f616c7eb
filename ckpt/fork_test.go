package ckpt

import (
	"bytes"
	_ "embed"
	"errors"
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
	"unsafe"

	"github.com/creack/pty"
	"github.com/fred-debugger/fred/internal/xstate"
	P "github.com/fred-debugger/fred/personalities"
)

// The fork backend's tests run the real gdb, on a pty the way fred runs it
// (prompt marker, editing off, the program on the pty through
// "set inferior-tty", gdb without a controlling terminal), on
// testdata/forkprog.c. They need no root; TestForkUnprivileged re-runs
// them as nobody when started as root.

//go:embed testdata/forkprog.c
var forkProgSource []byte

// gdbOnPTY is gdb on a pty, driven like fred's session drives it.
type gdbOnPTY struct {
	t      *testing.T
	cmd    *exec.Cmd
	master *os.File
	slave  *os.File
	marker string
	mu     sync.Mutex
	cond   *sync.Cond
	buf    bytes.Buffer
	closed bool
	once   sync.Once
}

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; run 'make deps' (as root) or 'apt-get install %s'", tool, tool)
		}
	}
}

func startGDB(t *testing.T, prog string) *gdbOnPTY {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	g := &gdbOnPTY{t: t, master: master, slave: slave, marker: "<fork-test-prompt>"}
	g.cond = sync.NewCond(&g.mu)
	g.cmd = exec.Command("gdb", "-nx", "-q",
		"-iex", "set prompt "+g.marker,
		"-iex", "set editing off",
		"-iex", "set pagination off",
		"-iex", "set height 0",
		"-iex", "set style enabled off",
		"-iex", "set inferior-tty "+slave.Name(),
		prog)
	g.cmd.Stdin, g.cmd.Stdout, g.cmd.Stderr = slave, slave, slave
	// As fred does: no bracketed-paste escapes around gdb's answers.
	inputrc := filepath.Join(t.TempDir(), "inputrc")
	if err := os.WriteFile(inputrc, []byte("set enable-bracketed-paste off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g.cmd.Env = append(os.Environ(), "INPUTRC="+inputrc)
	// As fred starts gdb: able to write registers on a CPU with AMX.
	if g.cmd.Env, err = xstate.Preload(g.cmd.Env); err != nil {
		t.Fatal(err)
	}
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		b := make([]byte, 32*1024)
		for {
			n, err := master.Read(b)
			g.mu.Lock()
			g.buf.Write(b[:n])
			if err != nil {
				g.closed = true
			}
			g.cond.Broadcast()
			g.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(g.close)
	g.wait(g.marker, 30*time.Second) // the first prompt
	// fred's helpers, as its sessions load them: gdb's fork calls
	// (personalities) settle a restored copy with them.
	for _, c := range P.GDB.Setup(g.marker) {
		g.q(c)
	}
	return g
}

func (g *gdbOnPTY) close() { g.once.Do(g.quit) }

func (g *gdbOnPTY) quit() {
	{
		fmt.Fprintf(g.master, "with confirm off -- kill\nquit\n")
		done := make(chan struct{})
		go func() { g.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			g.cmd.Process.Kill()
			<-done
		}
	}
	g.master.Close()
	g.slave.Close()
}

// wait returns what gdb printed up to the first s, and drops it.
func (g *gdbOnPTY) wait(s string, timeout time.Duration) string {
	g.t.Helper()
	timer := time.AfterFunc(timeout, func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(timeout)
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if i := bytes.Index(g.buf.Bytes(), []byte(s)); i >= 0 {
			out := string(g.buf.Next(i))
			g.buf.Next(len(s))
			return strings.ReplaceAll(out, "\r\n", "\n")
		}
		if g.closed || time.Now().After(deadline) {
			g.t.Fatalf("waited %v for %q; gdb printed:\n%s", timeout, s, g.buf.String())
		}
		g.cond.Wait()
	}
}

// send writes one line to gdb and drops its echo.
func (g *gdbOnPTY) send(cmd string) {
	g.t.Helper()
	if _, err := fmt.Fprintf(g.master, "%s\n", cmd); err != nil {
		g.t.Fatal(err)
	}
	g.wait("\n", 10*time.Second)
}

// Query runs a command and returns its output (the Debugger interface).
func (g *gdbOnPTY) Query(cmd string) (string, error) {
	g.send(cmd)
	return g.wait(g.marker, 30*time.Second), nil
}

func (g *gdbOnPTY) q(cmd string) string {
	g.t.Helper()
	out, _ := g.Query(cmd)
	return out
}

// interrupt types Ctrl-C on the program's terminal and waits for the stop.
func (g *gdbOnPTY) interrupt() string {
	g.t.Helper()
	if _, err := g.master.Write([]byte{3}); err != nil {
		g.t.Fatal(err)
	}
	return g.wait(g.marker, 10*time.Second)
}

func (g *gdbOnPTY) pid() int {
	g.t.Helper()
	out := g.q(`interpreter-exec mi "-list-thread-groups"`)
	m := regexp.MustCompile(`pid="(\d+)"`).FindStringSubmatch(out)
	if m == nil {
		g.t.Fatalf("no program running: %s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// forkSetup builds the agent and the fixture into a fresh directory.
func forkSetup(t *testing.T) (agent, prog, data string) {
	t.Helper()
	requireTools(t, "gdb", "gcc")
	dir := t.TempDir()
	agent, err := BuildForkAgent(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "forkprog.c")
	prog = filepath.Join(dir, "forkprog")
	if err := os.WriteFile(src, forkProgSource, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-g", "-O0", "-pthread", "-o", prog, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	var recs strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&recs, "rec%04d\n", i)
	}
	data = filepath.Join(dir, "data")
	if err := os.WriteFile(data, []byte(recs.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return agent, prog, data
}

func bpLine(t *testing.T) int {
	for i, l := range strings.Split(string(forkProgSource), "\n") {
		if strings.Contains(l, "/* BP */") {
			return i + 1
		}
	}
	t.Fatal("no BP line in forkprog.c")
	return 0
}

func newForkFor(t *testing.T, g *gdbOnPTY, agent string) *Fork {
	t.Helper()
	f, err := NewFork(ForkOptions{Tracer: P.GDB.Tracer.Fork(g.Query), Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	// As in fred's session: the debugger goes first, then the snapshots.
	t.Cleanup(func() { g.close(); f.Close() })
	g.q(f.SetupCommand(os.Getenv("LD_PRELOAD")))
	return f
}

// allRegs is gdb's view of every register, the vector, x87 and AVX-512
// ones included.
func allRegs(g *gdbOnPTY) string { return g.q("info all-registers") }

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var d []string
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			d = append(d, "- "+x, "+ "+y)
		}
	}
	return strings.Join(d, "\n")
}

var stepRE = regexp.MustCompile(`(?m)^step \d+ counter \d+ rec \S+$`)

// processesOf lists the processes running prog, and the zombies this
// process (the subreaper, as fred) has not reaped.
func processesOf(prog string) (live, zombies []int) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if f[0] == "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			zombies = append(zombies, pid)
		} else if exe, _ := os.Readlink("/proc/" + e.Name() + "/exe"); exe == prog {
			live = append(live, pid)
		}
	}
	return live, zombies
}

func TestForkSnapshot(t *testing.T) {
	agent, prog, data := forkSetup(t)
	g := startGDB(t, prog)
	f := newForkFor(t, g, agent)

	g.q(fmt.Sprintf("break forkprog.c:%d", bpLine(t)))
	if out := g.q("run " + data); !strings.Contains(out, "regs (i=1)") {
		t.Fatalf("run did not stop at the breakpoint:\n%s", out)
	}
	if out := g.q("continue"); !strings.Contains(out, "step 1 counter 1 rec rec0001") || !strings.Contains(out, "regs (i=2)") {
		t.Fatalf("continue:\n%s", out)
	}
	pid := g.pid()
	where := g.q("frame")
	regs := allRegs(g)
	named := map[string]string{}
	for _, r := range []string{"$pc", "$sp", "$rbx", "$eflags", "$fs_base", "$xmm15.v2_int64", "$st0", "$st1"} {
		named[r] = g.q("output " + r)
	}
	t.Logf("at the snapshot: %v", named)
	for _, want := range []string{"rbx            0x20000000000", "[ CF ", "zmm15 ", "k7 "} {
		if !strings.Contains(regs, want) {
			t.Fatalf("the fixture's registers are not as expected: no %q in 'info all-registers'", want)
		}
	}

	start := time.Now()
	sn, err := f.Take(pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("take: %v (copy pid %d of %d)", time.Since(start), sn.Pid, pid)
	if pp := ppid(t, sn.Pid); pp != os.Getpid() {
		t.Fatalf("the copy's parent is %d, not this process (%d), the subreaper", pp, os.Getpid())
	}
	if d := diffLines(regs, allRegs(g)); d != "" {
		t.Fatalf("taking the snapshot changed the program's registers:\n%s", d)
	}
	if got := g.q("output counter"); got != "3" {
		t.Fatalf("counter = %q after take, want 3", got)
	}
	first := g.q("continue")
	wantOut := stepRE.FindString(first)
	if wantOut != "step 2 counter 3 rec rec0002" {
		t.Fatalf("continue after take:\n%s", first)
	}
	g.q("set var counter = 999")

	var took []time.Duration
	for k := 0; k < 10; k++ {
		start := time.Now()
		live, err := f.Restore(sn)
		if err != nil {
			t.Fatalf("restore %d: %v", k+1, err)
		}
		took = append(took, time.Since(start))
		if live == pid || live == sn.Pid {
			t.Fatalf("restore %d: live pid %d (program %d, snapshot %d)", k+1, live, pid, sn.Pid)
		}
		if got := g.pid(); got != live {
			t.Fatalf("restore %d: gdb holds pid %d, Restore said %d", k+1, got, live)
		}
		if got := g.q("frame"); got != where {
			t.Fatalf("restore %d: location\n%s\nwant\n%s", k+1, got, where)
		}
		if d := diffLines(regs, allRegs(g)); d != "" {
			t.Fatalf("restore %d: registers differ from the snapshot's:\n%s", k+1, d)
		}
		for expr, want := range named {
			if got := g.q("output " + expr); got != want {
				t.Fatalf("restore %d: %s = %q, want %q", k+1, expr, got, want)
			}
		}
		for expr, want := range map[string]string{"counter": "3", "i": "2", "$rbx": "2199023255552", "$st0": "2",
			"$xmm15.v2_int64": "{2, 2}"} {
			if got := g.q("output " + expr); got != want {
				t.Fatalf("restore %d: %s = %q, want %s", k+1, expr, got, want)
			}
		}
		out := g.q("continue")
		if got := stepRE.FindString(out); got != wantOut {
			t.Fatalf("restore %d: the program printed %q, want %q; gdb:\n%s", k+1, got, wantOut, out)
		}
		if !strings.Contains(out, "regs (i=3)") {
			t.Fatalf("restore %d: continue did not reach the next stop:\n%s", k+1, out)
		}
		g.q(fmt.Sprintf("set var counter = %d", 1000+k))
	}
	t.Logf("restore: %v", took)
	if pp := ppid(t, sn.Pid); pp != os.Getpid() {
		t.Fatalf("the copy's parent is %d, not this process (%d)", pp, os.Getpid())
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", sn.Pid)); err == nil {
		t.Logf("the snapshot's memory:\n%s", regexp.MustCompile(`(?m)^(Rss|Pss|Private_Dirty):.*$`).FindAll(b, -1))
	}

	// The live program and the snapshot, nothing else, no zombies.
	live, zombies := processesOf(prog)
	if len(live) != 2 || len(zombies) != 0 {
		t.Fatalf("after 10 restores: processes %v (want 2: live and snapshot), zombies %v", live, zombies)
	}
	if err := f.Drop(sn); err != nil {
		t.Fatal(err)
	}
	if _, err := ProcState(sn.Pid); err == nil {
		t.Fatalf("the dropped snapshot %d is still there", sn.Pid)
	}
	if _, err := f.Restore(sn); !errors.Is(err, ErrDropped) {
		t.Fatalf("restoring a dropped snapshot: %v", err)
	}
}

func ppid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	n, _ := strconv.Atoi(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[1])
	return n
}

// Without the preload (a program started before fred chose the backend),
// Take loads the agent with dlopen; restoring after the program was
// killed works too. Also with the agent found through a symlinked
// directory (a cache dir under a symlinked home): the program maps the
// resolved path.
func TestForkSnapshotDlopen(t *testing.T) {
	for _, symlinked := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "symlinked"}[symlinked], func(t *testing.T) {
			testForkSnapshotDlopen(t, symlinked)
		})
	}
}

func testForkSnapshotDlopen(t *testing.T, symlinked bool) {
	agent, prog, data := forkSetup(t)
	if symlinked {
		link := filepath.Join(t.TempDir(), "cache")
		if err := os.Symlink(filepath.Dir(agent), link); err != nil {
			t.Fatal(err)
		}
		agent = filepath.Join(link, filepath.Base(agent))
	}
	g := startGDB(t, prog)
	f, err := NewFork(ForkOptions{Tracer: P.GDB.Tracer.Fork(g.Query), Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.close(); f.Close() })
	g.q(fmt.Sprintf("break forkprog.c:%d", bpLine(t)))
	g.q("run " + data)
	sn, err := f.Take(g.pid(), 1)
	if err != nil {
		t.Fatal(err)
	}
	g.q("continue")
	g.q("with confirm off -- kill")
	if _, err := f.Restore(sn); err != nil {
		t.Fatal(err)
	}
	if got := g.q("output counter"); got != "1" {
		t.Fatalf("counter = %q after restore, want 1", got)
	}
	// fred calls the agent by address, found without gdb: the one gdb
	// knows by name.
	a, err := f.agentEntry(g.pid())
	if err != nil {
		t.Fatal(err)
	}
	if got := g.q("output/x (long)&fredfork_take"); got != fmt.Sprintf("0x%x", a) {
		t.Fatalf("fredfork_take is at %s, fred says 0x%x", got, a)
	}
	if out := g.q("continue"); stepRE.FindString(out) != "step 1 counter 1 rec rec0001" {
		t.Fatalf("continue after restore:\n%s", out)
	}
}

// sharedDirty sums Shared_Dirty over process pid's writable private
// mappings, and says how much of the process is resident (kB).
func sharedDirty(t *testing.T, pid int) (shared, rss int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	writable := false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && strings.Contains(f[0], "-") && len(f[1]) == 4:
			writable = f[1][1] == 'w' && f[1][3] == 'p'
		case len(f) == 3 && f[0] == "Shared_Dirty:" && writable:
			n, _ := strconv.Atoi(f[1])
			shared += n
		case len(f) == 3 && f[0] == "Rss:":
			n, _ := strconv.Atoi(f[1])
			rss += n
		}
	}
	return shared, rss
}

// TestForkUnshare: with SetUnshare, the live program owns its written
// pages after a take and after a restore (no copy-on-write fault to come),
// and neither a range it never touched nor one it only read (the zero
// page) gets memory.
func TestForkUnshare(t *testing.T) {
	// The agent's own choice: PAGEMAP_SCAN where the kernel has it (Linux
	// 6.7), else mincore; and mincore forced, as on an older kernel.
	t.Run("default", func(t *testing.T) {
		scan := pagemapScan()
		t.Logf("PAGEMAP_SCAN available: %v", scan)
		testForkUnshare(t, false, scan)
	})
	t.Run("mincore", func(t *testing.T) { testForkUnshare(t, true, false) })
}

// pagemapScan says whether the kernel has the PAGEMAP_SCAN ioctl.
func pagemapScan() bool {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return false
	}
	defer f.Close()
	var arg [12]uint64 // struct pm_scan_arg
	arg[0] = uint64(len(arg) * 8)
	arg[3] = uint64(os.Getpagesize()) // end: an empty walk of [0, one page)
	arg[9] = 1 << 3                   // category_mask: PAGE_IS_PRESENT
	arg[11] = 1 << 3                  // return_mask
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), 0xc0606610, uintptr(unsafe.Pointer(&arg[0])))
	return errno == 0
}

// testForkUnshare: noScan forces the mincore fallback; exact says every
// written page must come out unshared and nothing else get memory (what
// PAGEMAP_SCAN gives).
func testForkUnshare(t *testing.T, noScan, exact bool) {
	agent, prog, data := forkSetup(t)
	g := startGDB(t, prog)
	f := newForkFor(t, g, agent)
	f.noScan = noScan
	g.q(fmt.Sprintf("break forkprog.c:%d", bpLine(t)))
	if out := g.q("run " + data); !strings.Contains(out, "regs (i=1)") {
		t.Fatalf("run did not stop at the breakpoint:\n%s", out)
	}
	pid := g.pid()
	sn, err := f.Take(pid, 1)
	if err != nil {
		t.Fatal(err)
	}
	shared, rss0 := sharedDirty(t, pid)
	if shared == 0 {
		t.Fatalf("after a take without unsharing, the program shares no written page with its copy: the test cannot tell")
	}
	f.SetUnshare(true)
	sn2, err := f.Take(pid, 2)
	if err != nil {
		t.Fatal(err)
	}
	shared, rss := sharedDirty(t, pid)
	t.Logf("resident %d kB before, %d kB after; %d kB still shared", rss0, rss, shared)
	if exact {
		// Every written page is the program's own now, and nothing else
		// got memory (the 64 MB never touched, the 32 MB only read).
		if shared != 0 {
			t.Fatalf("after a take with unsharing, %d kB of written pages are still shared", shared)
		}
		if rss > rss0+4096 {
			t.Fatalf("unsharing made the program resident %d kB, from %d kB: it populated pages it never wrote", rss, rss0)
		}
	} else {
		// mincore cannot tell the zero page from a written page: at most
		// as many pages as were resident, and some.
		if rss > 2*rss0+4096 {
			t.Fatalf("unsharing made the program resident %d kB, from %d kB: more than it had", rss, rss0)
		}
		if rss <= rss0 {
			t.Fatalf("unsharing (mincore) gave the program no page: resident %d kB before and after", rss0)
		}
	}
	live, err := f.Restore(sn)
	if err != nil {
		t.Fatal(err)
	}
	if shared, _ := sharedDirty(t, live); exact && shared != 0 {
		t.Fatalf("after a restore with unsharing, %d kB of written pages are still shared", shared)
	}
	if out := g.q("continue"); !strings.Contains(out, "step 1 counter 1 rec rec0001") || !strings.Contains(out, "regs (i=2)") {
		t.Fatalf("continue after the restore:\n%s", out)
	}
	for _, s := range []*Snapshot{sn, sn2} {
		if err := f.Drop(s); err != nil {
			t.Fatal(err)
		}
	}
}

// A program stopped by Ctrl-C inside nanosleep: after a restore the
// sleep is restarted (not failed with EINTR), and Ctrl-C still reaches the
// program (the copy took the pty as its controlling terminal).
func TestForkSnapshotInSyscall(t *testing.T) {
	agent, prog, _ := forkSetup(t)
	g := startGDB(t, prog)
	f := newForkFor(t, g, agent)

	g.send("run sleep")
	g.wait("tick 2", 10*time.Second)
	// The line is printed just before the 300 ms sleep: a moment later
	// the program is inside it, not between its write and the sleep.
	time.Sleep(100 * time.Millisecond)
	if out := g.interrupt(); !strings.Contains(out, "SIGINT") {
		t.Fatalf("Ctrl-C:\n%s", out)
	}
	regs := allRegs(g)
	if orig := g.q("output $orig_rax"); orig == "-1" || strings.Contains(orig, "void") {
		t.Fatalf("not stopped inside a system call: orig_rax = %s", orig)
	}
	sn, err := f.Take(g.pid(), 1)
	if err != nil {
		t.Fatal(err)
	}
	g.send("continue")
	out := g.wait("tick 3", 10*time.Second)
	out += g.interrupt()
	if strings.Contains(out, "failed") {
		t.Fatalf("continue after take:\n%s", out)
	}
	for k := 0; k < 3; k++ {
		if _, err := f.Restore(sn); err != nil {
			t.Fatalf("restore %d: %v", k+1, err)
		}
		if d := diffLines(regs, allRegs(g)); d != "" {
			t.Fatalf("restore %d: registers differ:\n%s", k+1, d)
		}
		g.send("continue")
		out := g.wait("tick 3", 10*time.Second)
		if strings.Contains(out, "failed") || strings.Contains(out, "tick 2") {
			t.Fatalf("restore %d: the program printed:\n%s", k+1, out)
		}
		if out := g.interrupt(); !strings.Contains(out, "SIGINT") {
			t.Fatalf("restore %d: Ctrl-C did not stop the restored program:\n%s", k+1, out)
		}
	}
}

func TestForkRefusesThreads(t *testing.T) {
	agent, prog, _ := forkSetup(t)
	g := startGDB(t, prog)
	f := newForkFor(t, g, agent)
	g.q(fmt.Sprintf("break forkprog.c:%d", bpLine(t)))
	g.q("run threads")
	_, err := f.Take(g.pid(), 1)
	if !errors.Is(err, ErrThreaded) {
		t.Fatalf("Take of a 2-thread program: %v, want ErrThreaded", err)
	}
	t.Log(err)
}

// TestForkUnprivileged runs the tests above as nobody, the way a student
// on a shared machine runs fred.
func TestForkUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: the other TestFork tests already run unprivileged")
	}
	requireTools(t, "setpriv")
	if b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); err == nil {
		t.Logf("yama ptrace_scope = %s", strings.TrimSpace(string(b)))
	} else {
		t.Log("no Yama LSM on this kernel: ptrace follows the classic same-uid rule")
	}
	dir, err := os.MkdirTemp("", "fork-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ckpt.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		bin, "-test.run", "^TestFork(Snapshot|SnapshotDlopen|SnapshotInSyscall|RefusesThreads)$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir, "HOME=" + dir, "SHELL=/bin/sh", "USER=nobody"}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil {
		t.Fatalf("the fork tests failed as nobody: %v", err)
	}
	if !bytes.Contains(out, []byte("--- PASS: TestForkSnapshot ")) {
		t.Fatal("TestForkSnapshot did not run as nobody")
	}
}
