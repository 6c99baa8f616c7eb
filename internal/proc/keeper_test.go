package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// startSleep starts a process that would outlive the test.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "600")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c
}

// killedBy waits for c and reports whether SIGKILL ended it.
func killedBy(t *testing.T, c *exec.Cmd) bool {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ws := ee.Sys().(syscall.WaitStatus)
			return ws.Signaled() && ws.Signal() == syscall.SIGKILL
		}
		return false
	case <-time.After(20 * time.Second):
		return false
	}
}

// The keeper kills what it was told to keep, and only that, once the pipe
// from its fred closes; and it removes the session directory it was
// given, unless a session holds it.
func TestKeeper(t *testing.T) {
	k, err := StartKeeper()
	if err != nil {
		t.Fatal(err)
	}
	kept, other := startSleep(t), startSleep(t)
	k.Watch(kept.Process.Pid)
	// A pid whose start time does not match is another process: left.
	k.send("pid " + strconv.Itoa(other.Process.Pid) + " 1\n")

	base := filepath.Join(t.TempDir(), "sessions")
	held, heldLock, err := NewSessionDir(base, false)
	if err != nil {
		t.Fatal(err)
	}
	defer heldLock.Close()
	dir, lock, err := NewSessionDir(base, false)
	if err != nil {
		t.Fatal(err)
	}
	lock.Close() // as when fred dies
	k.RemoveDir(dir)
	k.RemoveDir(held)

	if StartTime(k.Pid()) == 0 {
		t.Fatal("the keeper is not running")
	}
	k.Close()
	if !killedBy(t, kept) {
		t.Error("the keeper did not kill the process it kept")
	}
	if !Alive(other.Process.Pid) {
		t.Error("the keeper killed a process whose start time was not the one it was told")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the keeper left the session directory: %v", err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the keeper removed a session directory a session holds: %v", err)
	}
}
