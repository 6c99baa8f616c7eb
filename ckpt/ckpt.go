// Package ckpt takes, restores and drops snapshots of the debugged process.
//
// A Snapshotter works on one process at a time (the debugger's inferior, or
// the interpreter that hosts pdb / perl -d). The caller owns the process: it
// stops it before Take, and kills and reaps it before Restore. The CRIU
// backend (NewCRIU) drives CRIU through go-criu in swrk mode.
package ckpt

import (
	"errors"
	"fmt"
	"github.com/fred-debugger/fred/internal/proc"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Snapshot is one image on disk.
type Snapshot struct {
	ID   int
	Dir  string        // image directory
	Pid  int           // pid of the dumped process (restore brings back the same pid)
	Size int64         // bytes on disk (sum of the image files' sizes, this directory only)
	Took time.Duration // how long the dump took

	// Parent is the ID of the snapshot this one was dumped incrementally
	// against (its memory pages that did not change live there), or -1.
	Parent int

	// Sockets are the program's unix sockets whose other end was another
	// process's (CRIU). A restore closes them: see ExtSocket.
	Sockets []ExtSocket
}

// Options for a snapshotter.
type Options struct {
	Dir      string   // session directory; images go to Dir/snap-N
	TTY      *os.File // the pty slave the process uses as stdin/stdout/stderr (may be nil if none)
	CriuPath string   // "" => FindCriu("")

	// Incremental dumps only the memory pages that changed since the
	// previous snapshot of the same process (or the snapshot it was last
	// restored from), using CRIU's memory tracking. Images then depend on
	// their parent; Drop keeps a parent's directory until its children
	// are dropped. Ignored (full dumps) when the kernel cannot track memory.
	Incremental bool
}

// Snapshotter takes and restores snapshots of one process.
type Snapshotter interface {
	Name() string // "criu"
	// Take dumps process pid as snapshot id. The process must already be
	// stopped (SIGSTOP) and not ptraced; it is left stopped and alive.
	Take(pid, id int) (*Snapshot, error)
	// Restore brings s back. The caller has already killed and reaped the
	// current process with that pid. The restored process has the same pid,
	// is stopped (SIGSTOP state), detached from CRIU (it is reparented to
	// the nearest child subreaper, which the caller should be), and has the
	// pty reconnected.
	Restore(s *Snapshot) (pid int, err error)
	// Drop deletes s. Restoring it afterwards is an error.
	Drop(s *Snapshot) error
	// Close drops every snapshot still held.
	Close() error
}

// SocketReleaser is a Snapshotter that keeps other processes' connections
// with its snapshots (CRIU's external unix sockets). ReleaseSocket lets go
// of the socket with inode ino in those of snapshots ids that keep it, and
// returns them: once nothing else has it, its other end reads
// the end of the file, and a restore of one of them gives the program a
// closed stand-in there. fred uses it for a connection of a moment it went
// back from, which would otherwise stay open with nobody to answer it.
type SocketReleaser interface {
	ReleaseSocket(ino uint64, ids []int) []int
}

// ErrNoCriu is wrapped by every error saying CRIU was not found or is not
// usable on this machine.
var ErrNoCriu = errors.New("criu not found or not usable")

// ErrDropped is wrapped by the error of restoring a dropped snapshot.
var ErrDropped = errors.New("snapshot was dropped")

// CriuError is a failed CRIU operation.
type CriuError struct {
	Op     string // "dump", "restore", "check"
	Reason string // the error line(s) near the end of CRIU's log, or CRIU's own message
	Log    string // path of CRIU's log file ("" if none)
	Err    error  // the underlying error
}

func (e *CriuError) Error() string {
	var b strings.Builder
	b.WriteString("criu ")
	b.WriteString(e.Op)
	b.WriteString(" failed")
	reason := e.Reason
	if reason == "" && e.Err != nil {
		reason = e.Err.Error()
	}
	if reason != "" {
		b.WriteString(": ")
		b.WriteString(reason)
	}
	if e.Log != "" {
		b.WriteString(" (log: ")
		b.WriteString(e.Log)
		b.WriteString(")")
	}
	return b.String()
}

func (e *CriuError) Unwrap() error { return e.Err }

// DefaultCriuPath is where `make deps` installs CRIU.
const DefaultCriuPath = "/usr/local/libexec/fred/criu/criu"

// FindCriu returns the CRIU executable to use. The order is: flag (if not
// ""), $FRED_CRIU, DefaultCriuPath, then "criu" on PATH. An explicit flag or
// $FRED_CRIU that does not name an executable is an error (no fallback).
func FindCriu(flag string) (string, error) {
	if flag != "" {
		return checkExec(flag, "--criu flag")
	}
	if env := os.Getenv("FRED_CRIU"); env != "" {
		return checkExec(env, "$FRED_CRIU")
	}
	if p, err := checkExec(DefaultCriuPath, ""); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath("criu"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: not in %s nor on PATH; run `make deps` to install it", ErrNoCriu, DefaultCriuPath)
}

func checkExec(p, from string) (string, error) {
	fi, err := os.Stat(p)
	if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p, nil
	}
	if err == nil {
		err = errors.New("not an executable file")
	}
	if from != "" {
		return "", fmt.Errorf("%w: %s names %s: %v", ErrNoCriu, from, p, err)
	}
	return "", fmt.Errorf("%w: %s: %v", ErrNoCriu, p, err)
}

// ProcState returns the state letter of process pid from /proc/pid/stat
// ('R', 'S', 'T' stopped, 't' traced, 'Z' zombie, ...).
func ProcState(pid int) (byte, error) {
	if st := proc.State(pid); st != 0 {
		return st, nil
	}
	return 0, fmt.Errorf("no state for pid %d in /proc", pid)
}

// WaitStopped waits until process pid is in the stopped state ('T'), as it
// is after SIGSTOP is delivered.
func WaitStopped(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		st, err := ProcState(pid)
		if err != nil {
			return fmt.Errorf("waiting for %d to stop: %w", pid, err)
		}
		switch st {
		case 'T':
			return nil
		case 'Z', 'X':
			return fmt.Errorf("waiting for %d to stop: it exited", pid)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %d to stop: still in state %c after %v", pid, st, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}
