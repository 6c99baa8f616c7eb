package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// NewSessionDir removes the directories of sessions that are gone, and
// only those.
func TestSessionDirs(t *testing.T) {
	base := filepath.Join(t.TempDir(), "sessions")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, files ...string) string {
		d := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Join(d, "snap-1"), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			os.WriteFile(filepath.Join(d, f), nil, 0o600)
		}
		return d
	}
	gone := strconv.Itoa(dead.Process.Pid)
	stale := mk(gone)
	stale2 := mk(gone + "-3")
	kept := mk(gone+"-1", KeepMark)
	// Unlocked, but its pid is there: a fred from before the locks.
	older := mk(strconv.Itoa(os.Getppid()))
	notOurs := mk("photos")

	// A session of this process that is still open.
	first, firstLock, err := NewSessionDir(base, false)
	if err != nil {
		t.Fatal(err)
	}
	defer firstLock.Close()
	for _, d := range []string{stale, stale2} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("stale %s is still there: %v", d, err)
		}
	}
	for _, d := range []string{kept, older, notOurs} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if filepath.Base(first) != strconv.Itoa(os.Getpid()) {
		t.Errorf("the session directory is %s, want one named after the pid", first)
	}
	second, secondLock, err := NewSessionDir(base, true)
	if err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatalf("two open sessions share %s", first)
	}
	if _, err := os.Stat(first); err != nil {
		t.Errorf("a new session removed an open one's directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(second, KeepMark)); err != nil {
		t.Errorf("a --keep session's directory has no %s: %v", KeepMark, err)
	}
	secondLock.Close()
	// Kept: closed, but not removed by the next session.
	third, thirdLock, err := NewSessionDir(base, false)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(third, "replay.log"), []byte("x"), 0o600)
	thirdLock.Close()
	if _, err := os.Stat(second); err != nil {
		t.Errorf("a kept session directory was removed: %v", err)
	}
	// The third is closed and not kept: stale for the next, which may
	// take its name again, empty.
	fourth, fourthLock, err := NewSessionDir(base, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fourthLock.Close()
	if _, err := os.Stat(filepath.Join(third, "replay.log")); !os.IsNotExist(err) {
		t.Errorf("a closed session's directory %s was not removed (the new one is %s): %v", third, fourth, err)
	}
}

// A session's own directory is under the user's cache directory, or under
// the temporary directory when that cannot be used; removing it removes
// the directories above it that it made.
func TestOwnSessionDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir, lock, err := OwnSessionDir(false)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dir) != filepath.Join(cache, "fred", "sessions") {
		t.Errorf("session directory %s, not under %s", dir, cache)
	}
	lock.Close()
	RemoveOwnSessionDir(dir)
	if _, err := os.Stat(filepath.Join(cache, "fred", "sessions")); !os.IsNotExist(err) {
		t.Errorf("sessions directory left: %v", err)
	}
	// A cache "directory" that is a file: the temporary directory.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", file)
	t.Setenv("TMPDIR", t.TempDir())
	dir, lock, err = OwnSessionDir(false)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(os.TempDir(), fmt.Sprintf("fred-%d", os.Getuid()), "sessions")
	if filepath.Dir(dir) != want {
		t.Errorf("fallback session directory %s, not under %s", dir, want)
	}
	lock.Close()
	RemoveOwnSessionDir(dir)
	if _, err := os.Stat(filepath.Dir(want)); !os.IsNotExist(err) {
		t.Errorf("fred-UID directory left: %v", err)
	}
}
