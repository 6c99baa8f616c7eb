package ckpt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/fred-debugger/fred/internal/proc"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	criu "github.com/checkpoint-restore/go-criu/v7"
	"github.com/checkpoint-restore/go-criu/v7/rpc"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
)

const (
	dumpLog    = "dump.log"
	restoreLog = "restore.log"
	logLevel   = 4
	// minCriuVersion: Debian 12's 3.17 fails `criu check` on current
	// kernels ([vvar_vclock]); 4.x is what the project installs.
	minCriuVersion = 40000
)

// snapEntry is the backend's record of one snapshot.
type snapEntry struct {
	s        *Snapshot
	dropped  bool // Drop was called; the directory may live on for children
	children int  // snapshots whose images still refer to this one as parent
}

type criuSnapshotter struct {
	mu       sync.Mutex
	o        Options
	path     string
	version  int
	memTrack bool   // incremental dumps possible
	ttyKey   string // "tty[rdev:dev]" of o.TTY, "" if none
	snaps    map[int]*snapEntry
	// base maps a pid to the snapshot its memory was last dumped to or
	// restored from: the parent of its next incremental dump.
	base   map[int]int
	closed bool
}

// checked caches successful `criu check` runs by executable path.
var checked sync.Map

// NewCRIU returns the CRIU backend. It finds CRIU (FindCriu(o.CriuPath)),
// makes sure it is usable here (root, `criu check`, swrk version RPC, and
// memory tracking when o.Incremental), and creates o.Dir. Every error
// wraps ErrNoCriu; those from running CRIU are *CriuError.
func NewCRIU(o Options) (Snapshotter, error) {
	if o.Dir == "" {
		return nil, errors.New("ckpt: Options.Dir is empty")
	}
	path, err := FindCriu(o.CriuPath)
	if err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: CRIU snapshots need root (euid is %d)", ErrNoCriu, os.Geteuid())
	}
	if DebugRegisters() != nil && os.Getenv("CRIU_FAULT") == "" {
		// Without working debug registers CRIU waits forever for its
		// parasite to stop at a hardware breakpoint. Its fault injection
		// 130 (FI_NO_BREAKPOINTS) has it trace the parasite's syscalls
		// instead. go-criu starts criu with fred's environment, so this
		// is the way to pass it.
		os.Setenv("CRIU_FAULT", "130")
	}
	c := &criuSnapshotter{
		o:     o,
		path:  path,
		snaps: map[int]*snapEntry{},
		base:  map[int]int{},
	}
	if o.TTY != nil {
		key, err := TTYKey(o.TTY)
		if err != nil {
			return nil, err
		}
		c.ttyKey = key
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("ckpt: %w", err)
	}
	if err := criuCheck(path); err != nil {
		return nil, err
	}
	cr := criu.MakeCriu()
	cr.SetCriuPath(path)
	c.version, err = cr.GetCriuVersion()
	if err != nil {
		return nil, &CriuError{Op: "check", Reason: "swrk version request: " + err.Error(),
			Err: fmt.Errorf("%w: %s", ErrNoCriu, path)}
	}
	if c.version < minCriuVersion {
		return nil, &CriuError{Op: "check",
			Reason: fmt.Sprintf("CRIU %s is too old (need 4.0 or later); run `make deps`", versionString(c.version)),
			Err:    fmt.Errorf("%w: %s", ErrNoCriu, path)}
	}
	if o.Incremental {
		// Not go-criu's FeatureCheck: v7.2.0 returns the request, not
		// CRIU's answer, so it always says yes.
		c.memTrack = exec.Command(path, "check", "--feature", "mem_dirty_track").Run() == nil
	}
	return c, nil
}

// criuCheck runs `criu check` once per executable path.
func criuCheck(path string) error {
	if _, ok := checked.Load(path); ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "check").CombinedOutput()
	if err != nil {
		reason := errorLines(out)
		if reason == "" {
			reason = strings.TrimSpace(lastLines(out, 3))
		}
		return &CriuError{Op: "check", Reason: path + " check: " + reason,
			Err: fmt.Errorf("%w: %s check: %v", ErrNoCriu, path, err)}
	}
	checked.Store(path, true)
	return nil
}

func versionString(v int) string {
	return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100)
}

// TTYKey returns CRIU's name for terminal f, as used by --external and
// --inherit-fd: "tty[rdev:dev]" with st_rdev and st_dev in hex (CRIU's
// tty_d_name prints the 32-bit values of the image with "tty[%x:%x]").
func TTYKey(f *os.File) (string, error) {
	var st syscall.Stat_t
	var err error
	rc, cerr := f.SyscallConn()
	if cerr != nil {
		return "", fmt.Errorf("ckpt: tty: %w", cerr)
	}
	if cerr := rc.Control(func(fd uintptr) { err = syscall.Fstat(int(fd), &st) }); cerr != nil {
		return "", fmt.Errorf("ckpt: tty: %w", cerr)
	}
	if err != nil {
		return "", fmt.Errorf("ckpt: tty %s: %w", f.Name(), err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR {
		return "", fmt.Errorf("ckpt: tty %s is not a character device", f.Name())
	}
	return fmt.Sprintf("tty[%x:%x]", uint32(st.Rdev), uint32(st.Dev)), nil
}

func (c *criuSnapshotter) Name() string { return "criu" }

// Version is CRIU's version as major*10000 + minor*100 + sublevel.
func (c *criuSnapshotter) Version() int { return c.version }

func (c *criuSnapshotter) snapDir(id int) string {
	return filepath.Join(c.o.Dir, fmt.Sprintf("snap-%d", id))
}

func (c *criuSnapshotter) Take(pid, id int) (*Snapshot, error) {
	// An unset pid makes CRIU dump the requesting process: fred itself.
	if pid <= 0 || pid == os.Getpid() {
		return nil, fmt.Errorf("ckpt: take: refusing to dump pid %d", pid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("ckpt: take: snapshotter is closed")
	}
	if _, ok := c.snaps[id]; ok {
		return nil, fmt.Errorf("ckpt: take: snapshot %d already exists", id)
	}
	if tracer := proc.TracerPid(pid); tracer > 0 {
		return nil, fmt.Errorf("ckpt: take: process %d is ptraced by %d: detach it first (CRIU cannot dump a traced process)", pid, tracer)
	}
	dir := c.snapDir(id)
	if err := os.RemoveAll(dir); err != nil { // stale, from an earlier session
		return nil, fmt.Errorf("ckpt: take: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ckpt: take: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("ckpt: take: %w", err)
	}
	defer d.Close()

	opts := &rpc.CriuOpts{
		Pid:               proto.Int32(int32(pid)),
		ImagesDirFd:       proto.Int32(int32(d.Fd())),
		WorkDirFd:         proto.Int32(int32(d.Fd())),
		LogFile:           proto.String(dumpLog),
		LogLevel:          proto.Int32(logLevel),
		LeaveStopped:      proto.Bool(true),
		ShellJob:          proto.Bool(true),
		FileLocks:         proto.Bool(true),
		TcpEstablished:    proto.Bool(false),
		ManageCgroupsMode: rpc.CriuCgMode_IGNORE.Enum(),
	}
	if c.ttyKey != "" {
		opts.External = []string{c.ttyKey}
	}
	parent := -1
	if c.o.Incremental && c.memTrack {
		opts.TrackMem = proto.Bool(true)
		if p, ok := c.base[pid]; ok {
			if e := c.snaps[p]; e != nil && !e.dropped && e.s.Pid == pid {
				parent = p
				// Relative to the images directory.
				opts.ParentImg = proto.String(filepath.Join("..", filepath.Base(e.s.Dir)))
			}
		}
	}

	cr := criu.MakeCriu()
	cr.SetCriuPath(c.path)
	start := time.Now()
	err = cr.Dump(opts, nil)
	logPath := filepath.Join(dir, dumpLog)
	var ext []ExtSocket
	if err != nil && strings.Contains(logReason(logPath), "External socket") {
		// A unix socket whose other end is another process's: dumped
		// again as external (a restore gives it a fresh end), in full:
		// the failed dump may have reset the memory tracking.
		if ext = externalSockets(logPath, pid); len(ext) > 0 {
			removeAllBut(dir, "")
			for _, x := range ext {
				opts.External = append(opts.External, fmt.Sprintf("unix[%d]", x.Ino))
			}
			opts.ParentImg, parent = nil, -1
			cr = criu.MakeCriu()
			cr.SetCriuPath(c.path)
			err = cr.Dump(opts, nil)
		}
	}
	took := time.Since(start)
	if err != nil {
		// The memory tracking state of pid is unknown now: next dump is full.
		delete(c.base, pid)
		reason := logReason(logPath)
		// CRIU's words name an option, not the socket.
		switch {
		case strings.Contains(reason, "External socket") && len(ext) > 0:
			reason = "a socket whose other end is outside the program: " + describeSockets(ext)
		case strings.Contains(reason, "TCP"):
			if conns := tcpConnections(pid); conns != "" {
				reason = "a TCP connection, which CRIU does not dump here: " + conns
			}
		case strings.Contains(reason, "mapfile"):
			if u := ioUring(pid); u != "" {
				reason = u
			}
		}
		cerr := &CriuError{Op: "dump", Reason: reason, Log: logPath, Err: err}
		removeAllBut(dir, dumpLog)
		return nil, cerr
	}
	holdSockets(pid, ext)
	s := &Snapshot{ID: id, Dir: dir, Pid: pid, Took: took, Parent: parent, Size: dirSize(dir), Sockets: ext}
	c.snaps[id] = &snapEntry{s: s}
	if parent >= 0 {
		c.snaps[parent].children++
	}
	c.base[pid] = id
	return s, nil
}

// restoreNotify receives the restored pid.
type restoreNotify struct {
	criu.NoNotify
	pid int32
}

func (n *restoreNotify) PostRestore(pid int32) error {
	n.pid = pid
	return nil
}

func (c *criuSnapshotter) Restore(s *Snapshot) (int, error) {
	if s == nil {
		return 0, errors.New("ckpt: restore: nil snapshot")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, errors.New("ckpt: restore: snapshotter is closed")
	}
	e := c.snaps[s.ID]
	if e == nil || e.dropped || e.s.Dir != s.Dir {
		return 0, fmt.Errorf("ckpt: restore snapshot %d: %w", s.ID, ErrDropped)
	}
	if st, err := ProcState(s.Pid); err == nil {
		return 0, fmt.Errorf("ckpt: restore snapshot %d: pid %d is in use (state %c): kill and reap that process first", s.ID, s.Pid, st)
	}
	d, err := os.Open(s.Dir)
	if err != nil {
		return 0, fmt.Errorf("ckpt: restore: %w", err)
	}
	defer d.Close()

	opts := &rpc.CriuOpts{
		ImagesDirFd:       proto.Int32(int32(d.Fd())),
		WorkDirFd:         proto.Int32(int32(d.Fd())),
		LogFile:           proto.String(restoreLog),
		LogLevel:          proto.Int32(logLevel),
		ShellJob:          proto.Bool(true),
		FileLocks:         proto.Bool(true),
		TcpEstablished:    proto.Bool(false),
		ManageCgroupsMode: rpc.CriuCgMode_IGNORE.Enum(),
		// swrk restores are always detached (CRIU forces restore_detach
		// in its service): the restored task outlives criu and is
		// reparented to the nearest child subreaper.
	}
	if c.ttyKey != "" {
		// CRIU's swrk child must inherit the fd: dup() clears
		// FD_CLOEXEC, like go-criu does for its socket. Any process
		// forked elsewhere in fred during the restore inherits it too.
		fd, err := dupNoCloexec(c.o.TTY)
		if err != nil {
			return 0, fmt.Errorf("ckpt: restore: dup tty: %w", err)
		}
		defer syscall.Close(fd)
		opts.InheritFd = []*rpc.InheritFd{{Key: proto.String(c.ttyKey), Fd: proto.Int32(int32(fd))}}
	}
	for _, x := range s.Sockets {
		if x.Held {
			// The socket itself, still connected to the other process.
			fd, err := syscall.Dup(x.held) // without FD_CLOEXEC, for CRIU's swrk child
			if err != nil {
				return 0, fmt.Errorf("ckpt: restore: %s: %w", x.Desc, err)
			}
			defer syscall.Close(fd)
			opts.InheritFd = append(opts.InheritFd, &rpc.InheritFd{Key: proto.String(fmt.Sprintf("socket:[%d]", x.Ino)), Fd: proto.Int32(int32(fd))})
			continue
		}
		// One end of a fresh socketpair in the place of the socket whose
		// other end was another process's; fred keeps no end: the
		// program reads the end of file there once its replay is over.
		pair, err := syscall.Socketpair(syscall.AF_UNIX, x.Type|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return 0, fmt.Errorf("ckpt: restore: a socket for %s: %w", x.Desc, err)
		}
		syscall.Close(pair[1])
		fd, err := syscall.Dup(pair[0]) // without FD_CLOEXEC, for CRIU's swrk child
		syscall.Close(pair[0])
		if err != nil {
			return 0, fmt.Errorf("ckpt: restore: %w", err)
		}
		defer syscall.Close(fd)
		opts.InheritFd = append(opts.InheritFd, &rpc.InheritFd{Key: proto.String(fmt.Sprintf("socket:[%d]", x.Ino)), Fd: proto.Int32(int32(fd))})
	}

	n := &restoreNotify{}
	cr := criu.MakeCriu()
	cr.SetCriuPath(c.path)
	// Whatever happens, pid's memory no longer matches a known snapshot
	// until the restore succeeds.
	delete(c.base, s.Pid)
	err = cr.Restore(opts, n)
	logPath := filepath.Join(s.Dir, restoreLog)
	if err != nil {
		return 0, &CriuError{Op: "restore", Reason: logReason(logPath), Log: logPath, Err: err}
	}
	pid := int(n.pid)
	if pid <= 0 {
		return 0, &CriuError{Op: "restore", Reason: "CRIU reported no restored pid", Log: logPath,
			Err: errors.New("no post-restore notification")}
	}
	if pid != s.Pid {
		return pid, &CriuError{Op: "restore", Log: logPath,
			Reason: fmt.Sprintf("restored pid %d, snapshot was of pid %d", pid, s.Pid),
			Err:    errors.New("pid mismatch")}
	}
	c.base[pid] = s.ID
	if err := clearDebugStatus(pid); err != nil {
		return pid, fmt.Errorf("ckpt: restore: %w", err)
	}
	return pid, nil
}

func dupNoCloexec(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = syscall.Dup(int(fd)) }); err != nil {
		return -1, err
	}
	return nfd, derr
}

func (c *criuSnapshotter) Drop(s *Snapshot) error {
	if s == nil {
		return errors.New("ckpt: drop: nil snapshot")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.snaps[s.ID]
	if e == nil || e.s.Dir != s.Dir {
		return fmt.Errorf("ckpt: drop: unknown snapshot %d", s.ID)
	}
	if e.dropped {
		return nil
	}
	e.dropped = true
	releaseSockets(e.s.Sockets)
	if b, ok := c.base[e.s.Pid]; ok && b == s.ID {
		delete(c.base, e.s.Pid)
	}
	return c.reap(s.ID)
}

// reap deletes the directory of dropped snapshot id once no other image
// refers to it, then does the same for its parent.
func (c *criuSnapshotter) reap(id int) error {
	var errs []error
	for id >= 0 {
		e := c.snaps[id]
		if e == nil || !e.dropped || e.children > 0 {
			break
		}
		if err := os.RemoveAll(e.s.Dir); err != nil {
			errs = append(errs, fmt.Errorf("ckpt: drop: %w", err))
		}
		delete(c.snaps, id)
		id = e.s.Parent
		if p := c.snaps[id]; p != nil {
			p.children--
		}
	}
	return errors.Join(errs...)
}

func (c *criuSnapshotter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var errs []error
	for id, e := range c.snaps {
		releaseSockets(e.s.Sockets)
		if err := os.RemoveAll(e.s.Dir); err != nil {
			errs = append(errs, fmt.Errorf("ckpt: close: %w", err))
		}
		delete(c.snaps, id)
	}
	clear(c.base)
	return errors.Join(errs...)
}

// dirSize is the sum of the sizes of the regular files in dir.
func dirSize(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// removeAllBut empties dir except for the file named keep.
func removeAllBut(dir, keep string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != keep {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// logReason returns the error lines near the end of a CRIU log.
func logReason(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 32 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return errorLines(b)
}

// errPrefix matches CRIU's pr_err prefix after an optional timestamp and
// pid: "(00.012345) 42: Error (criu/files.c:123): ".
var errPrefix = regexp.MustCompile(`^(?:\(\s*[0-9.]+\)\s*)?(?:[0-9]+:\s*)?Error\s*(?:\([^)]*\))?:?\s*`)

// noise are error lines that say nothing about why an operation failed:
// the final summary, and the rlimit complaint CRIU logs on every run when
// it lacks CAP_SYS_RESOURCE (in containers) and carries on.
var noise = []string{"Dumping FAILED", "Restoring FAILED", "Can't setup RLIMIT_NOFILE"}

// errorLines returns the last error lines of a CRIU log (or `criu check`
// output), without timestamps and source locations, joined by "; ". Lines
// in noise are used only when there is nothing else.
func errorLines(b []byte) string {
	const max = 2
	var errs, noisy []string
	lines := bytes.Split(b, []byte("\n"))
	for i := len(lines) - 1; i >= 0 && len(errs) < max; i-- {
		l := strings.TrimSpace(string(lines[i]))
		loc := errPrefix.FindStringIndex(l)
		if loc == nil {
			continue
		}
		l = strings.TrimSpace(l[loc[1]:])
		if l == "" {
			continue
		}
		isNoise := false
		for _, n := range noise {
			if strings.Contains(l, n) {
				isNoise = true
			}
		}
		if isNoise {
			if len(noisy) < max {
				noisy = append(noisy, l)
			}
			continue
		}
		if !slices.Contains(errs, l) {
			errs = append(errs, l)
		}
	}
	if len(errs) == 0 {
		errs = noisy
	}
	slices.Reverse(errs)
	return strings.Join(errs, "; ")
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// holdSockets keeps the program's external sockets in fred
// (pidfd_getfd), for restores (ExtSocket). One that cannot be kept is
// replaced by a fresh socketpair at a restore, as before.
func holdSockets(pid int, socks []ExtSocket) {
	if len(socks) == 0 {
		return
	}
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(pfd)
	for i := range socks {
		if fd, err := unix.PidfdGetfd(pfd, socks[i].Fd, 0); err == nil {
			socks[i].held, socks[i].Held = fd, true
		}
	}
}

// ReleaseSocket implements SocketReleaser.
func (c *criuSnapshotter) ReleaseSocket(ino uint64, of []int) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []int
	for id, e := range c.snaps {
		if !slices.Contains(of, id) {
			continue
		}
		for i := range e.s.Sockets {
			if so := &e.s.Sockets[i]; so.Held && so.Ino == ino {
				unix.Close(so.held)
				so.Held = false
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// releaseSockets closes what holdSockets kept: the other process sees the
// end of file once the program and every snapshot have let go.
func releaseSockets(socks []ExtSocket) {
	for i := range socks {
		if socks[i].Held {
			unix.Close(socks[i].held)
			socks[i].Held = false
		}
	}
}
