package ckpt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fred-debugger/fred/internal/proc"
)

// The fork backend for in-process debuggers (pdb, perl -d): unprivileged
// snapshots of an interpreter whose debugger fred talks to. The debugger's
// own fork command (the personality's Fork, sent through the debugger)
// leaves a copy of the whole interpreter, debugger included, blocked
// reading a FIFO in the snapshot's directory; the copy is made by a double
// fork so that it is fred's child (fred is a child subreaper). Restoring
// kills the live process and writes to the FIFO: the copy leaves a fresh
// copy of itself waiting on the same FIFO (so the snapshot can be restored
// again), takes the terminal as its controlling tty, says "@fred fork PID"
// with the fresh copy's pid, and its debugger prompts. The live process's
// pid changes with every restore.
//
// fred holds the FIFO open for writing from before the copy exists until
// the snapshot is dropped, and nothing else writes to it: a copy opens it
// without waiting for a writer, and a read that finds no byte and no
// writer means fred is gone, however it ended (even kill -9): the copy
// exits. So no paused copy outlives fred, nor one whose Take failed.

// InterpForkOptions configure the in-process fork backend.
type InterpForkOptions struct {
	Debugger Debugger // the in-process debugger (required)
	// Fork is the debugger command that makes a copy, with %s for the
	// FIFO's path; its answer names the copy: "@fred fork PID".
	Fork string
	// Wait waits for the debugger's next prompt without sending anything
	// and returns what came before it: the woken copy's answer (required).
	Wait func() (string, error)
	Dir  string // snapshot directories (with the FIFOs) go to Dir/snap-N
	Max  int    // snapshots held at once (default 64): each is a process
	// Timeout bounds waiting for a killed process to be reaped (default 5 s).
	Timeout time.Duration
}

// InterpFork is the fork backend for in-process debuggers.
type InterpFork struct {
	opt   InterpForkOptions
	snaps map[int]*interpSnap
}

type interpSnap struct {
	pid     int // the waiting copy
	fifo    string
	w       *os.File      // fred's end of the FIFO, open for writing (read-write: opening it waits for no reader)
	offsets map[int]int64 // fd -> file offset: the copy shares open files with the live process
}

var forkAnswer = regexp.MustCompile(`@fred fork (-?\d+)`)

// NewInterpFork makes an in-process fork backend. The calling process must
// be a child subreaper: the copies become its children.
func NewInterpFork(opt InterpForkOptions) (*InterpFork, error) {
	if opt.Debugger == nil || opt.Wait == nil || opt.Fork == "" || opt.Dir == "" {
		return nil, errors.New("fork snapshots: the debugger, its fork command, a wait function and a directory are required")
	}
	if opt.Max == 0 {
		opt.Max = 64
	}
	if opt.Timeout == 0 {
		opt.Timeout = 5 * time.Second
	}
	var sub int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&sub)), 0, 0, 0); err != nil || sub == 0 {
		return nil, errors.New("fork snapshots: fred must be a child subreaper (PR_SET_CHILD_SUBREAPER) to keep the copies")
	}
	return &InterpFork{opt: opt, snaps: map[int]*interpSnap{}}, nil
}

// Name implements Snapshotter.
func (f *InterpFork) Name() string { return "fork" }

// ThroughDebugger implements ThroughDebugger: Take runs while the debugger
// waits at its prompt (no SIGSTOP); Restore kills the live process itself
// and returns the new one at its prompt.
func (f *InterpFork) ThroughDebugger() {}

// Take makes a waiting copy of process pid, whose debugger is at its prompt.
func (f *InterpFork) Take(pid, id int) (*Snapshot, error) {
	start := time.Now()
	if err := canFork(pid, len(f.snaps), f.opt.Max); err != nil {
		return nil, err
	}
	sl, err := f.NewSlot("snap-" + strconv.Itoa(id))
	if err != nil {
		return nil, err
	}
	offsets := fileOffsets(pid)
	out, err := f.opt.Debugger.Query(fmt.Sprintf(f.opt.Fork, sl.fifo))
	copyPid, perr := parseForkAnswer(out)
	if err == nil {
		err = perr
	}
	if err != nil {
		// A copy made all the same sees the end of the FIFO and exits.
		sl.Close()
		return nil, err
	}
	f.snaps[id] = &interpSnap{pid: copyPid, fifo: sl.fifo, w: sl.w, offsets: offsets}
	return &Snapshot{ID: id, Dir: sl.dir, Pid: copyPid, Parent: -1, Took: time.Since(start)}, nil
}

// Slot is a FIFO of fred's that a copy waits on: a Take's, or one the
// program leaves by itself (a probe, personalities.Probes). fred holds it
// open for writing from before any copy can open it.
type Slot struct {
	dir, fifo string
	w         *os.File
}

// Path is the FIFO's path, for the program.
func (sl *Slot) Path() string { return sl.fifo }

// Close lets go of a slot no snapshot took: a copy still waiting on it
// sees the end of the FIFO and exits.
func (sl *Slot) Close() {
	if sl.w != nil {
		sl.w.Close()
		sl.w = nil
		os.RemoveAll(sl.dir)
	}
}

// NewSlot makes a slot (name: its directory under the backend's).
func (f *InterpFork) NewSlot(name string) (*Slot, error) {
	dir := filepath.Join(f.opt.Dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("fork snapshots: %w", err)
	}
	fifo := filepath.Join(dir, "wake")
	_ = os.Remove(fifo)
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("fork snapshots: mkfifo %s: %w", fifo, err)
	}
	// Close-on-exec, as every file fred opens: fred alone holds it.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("fork snapshots: %w", err)
	}
	return &Slot{dir: dir, fifo: fifo, w: w}, nil
}

// Adopt makes snapshot id of the copy pid that waits on sl, which the
// snapshot then owns. The copy restores its own files' offsets when woken
// (it noted them when it was made, long before fred heard of it).
func (f *InterpFork) Adopt(sl *Slot, pid, id int) *Snapshot {
	f.snaps[id] = &interpSnap{pid: pid, fifo: sl.fifo, w: sl.w}
	sl.w = nil
	return &Snapshot{ID: id, Dir: sl.dir, Pid: pid, Parent: -1}
}

func parseForkAnswer(out string) (int, error) {
	m := forkAnswer.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("fork snapshots: the debugger did not make a copy: %s", lastLineOf(out))
	}
	pid, _ := strconv.Atoi(m[1])
	if pid <= 0 {
		return 0, errors.New("fork snapshots: fork failed in the program (process limit?)")
	}
	return pid, nil
}

// Restore wakes s's copy and returns its pid once its debugger prompts; a
// fresh copy stays behind as s. The caller has killed and reaped the live
// process: the copy takes the terminal only once that process's session
// has let go of it.
func (f *InterpFork) Restore(s *Snapshot) (int, error) {
	sn, ok := f.snaps[s.ID]
	if !ok {
		return 0, fmt.Errorf("%w: snapshot %d", ErrDropped, s.ID)
	}
	if err := setOffsets(sn.pid, sn.offsets); err != nil {
		return 0, err
	}
	// The byte waits in the FIFO for a copy that has not opened it yet;
	// one that is gone never will.
	if !proc.Alive(sn.pid) {
		return 0, fmt.Errorf("fork snapshots: the copy of snapshot %d (pid %d) is not waiting", s.ID, sn.pid)
	}
	if _, err := sn.w.Write([]byte{'g'}); err != nil {
		return 0, fmt.Errorf("fork snapshots: waking snapshot %d: %w", s.ID, err)
	}
	out, err := f.opt.Wait()
	if err != nil {
		return 0, err
	}
	next, err := parseForkAnswer(out)
	if err != nil {
		return 0, err
	}
	got := sn.pid
	sn.pid, s.Pid = next, next
	return got, nil
}

// Drop kills the copy of s and removes its directory.
func (f *InterpFork) Drop(s *Snapshot) error {
	sn, ok := f.snaps[s.ID]
	if !ok {
		return nil
	}
	delete(f.snaps, s.ID)
	sn.w.Close()
	reapChild(sn.pid, f.opt.Timeout)
	return os.RemoveAll(filepath.Dir(sn.fifo))
}

// Close drops every snapshot.
func (f *InterpFork) Close() error {
	for id, sn := range f.snaps {
		sn.w.Close()
		reapChild(sn.pid, f.opt.Timeout)
		os.RemoveAll(filepath.Dir(sn.fifo))
		delete(f.snaps, id)
	}
	return nil
}

// reapChild kills pid, a child of this process, and collects it.
func reapChild(pid int, timeout time.Duration) {
	_ = unix.Kill(pid, unix.SIGKILL)
	deadline := time.Now().Add(timeout)
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG|unix.WALL, nil)
		if got == pid || err == unix.ECHILD || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
