package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Session directories (the snapshots, the replay log) live under a base
// directory, one per session, named after fred's pid ("PID", or "PID-N"
// for a further session in the same process). A session holds an flock on
// its directory for as long as it lives; the kernel lets go of it however
// fred ends. A directory nobody holds is stale: fred was killed before it
// could remove it, and its keeper too (keeper.go). The next session to
// start removes it, unless
//   - a process with the pid in its name is still there (a fred from
//     before these locks, or the pid taken since: it is left for later), or
//   - it holds a file named KeepMark (--keep: kept on purpose).
// Creating a directory, removing stale ones and the keeper's removal each
// hold an flock on the base directory, so that none removes a directory
// that another session has made and not yet locked.

// KeepMark, in a session directory, keeps it from being removed as stale.
const KeepMark = "keep"

// NewSessionDir creates a session directory under base, removing stale
// ones first. The returned file holds the directory's lock: keep it open
// for the session's life.
func NewSessionDir(base string, keep bool) (string, *os.File, error) {
	for attempt := 0; ; attempt++ {
		dir, lock, err := newSessionDir(base, keep)
		// ENOENT: another session removed base (it was empty) meanwhile.
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return dir, lock, err
		}
	}
}

func newSessionDir(base string, keep bool) (string, *os.File, error) {
	bl, err := lockBase(base, true)
	if err != nil {
		return "", nil, err
	}
	defer bl.Close()
	removeStale(base)
	for n := 0; n < 1000; n++ {
		name := strconv.Itoa(os.Getpid())
		if n > 0 {
			name += "-" + strconv.Itoa(n)
		}
		dir := filepath.Join(base, name)
		err := os.Mkdir(dir, 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue // another session of this process, or kept
		}
		if err != nil {
			return "", nil, err
		}
		lock, err := os.Open(dir)
		if err == nil {
			err = flock(lock, unix.LOCK_EX|unix.LOCK_NB)
		}
		if err != nil {
			if lock != nil {
				lock.Close()
			}
			os.Remove(dir)
			return "", nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		if keep {
			_ = os.WriteFile(filepath.Join(dir, KeepMark), []byte("fred --keep: this directory is not removed by the next fred\n"), 0o600)
		}
		return dir, lock, nil
	}
	return "", nil, fmt.Errorf("no free session directory in %s", base)
}

// RemoveSessionDir removes session directory dir if no session holds it
// (the keeper's removal, once fred is gone).
func RemoveSessionDir(dir string) {
	base := filepath.Dir(dir)
	bl, err := lockBase(base, false)
	if err != nil {
		return
	}
	defer bl.Close()
	removeIfStale(dir)
}

// removeStale removes the stale session directories in base (locked).
func removeStale(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p, _, _ := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 {
			continue // not a session's
		}
		if pid != os.Getpid() && Alive(pid) {
			continue
		}
		removeIfStale(filepath.Join(base, e.Name()))
	}
}

// removeIfStale removes dir unless a session holds its lock or it is kept.
func removeIfStale(dir string) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	if flock(f, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // held, or locks do not work here: leave it
	}
	if _, err := os.Lstat(filepath.Join(dir, KeepMark)); err == nil {
		return
	}
	_ = os.RemoveAll(dir)
}

// lockBase locks directory base (creating it if create), making sure the
// directory locked is the one at that path: another session may remove
// base when it leaves it empty.
func lockBase(base string, create bool) (*os.File, error) {
	for attempt := 0; attempt < 10; attempt++ {
		if create {
			if err := os.MkdirAll(base, 0o700); err != nil {
				return nil, err
			}
		}
		f, err := os.Open(base)
		if errors.Is(err, fs.ErrNotExist) && create {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := flock(f, unix.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", base, err)
		}
		var a, b syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &a) == nil && syscall.Stat(base, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
			return f, nil
		}
		f.Close()
		if !create {
			return nil, fs.ErrNotExist
		}
	}
	return nil, fmt.Errorf("locking %s: it keeps changing", base)
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// OwnSessionDir creates a session's own directory under the user's cache
// directory (fred/sessions), or, where that cannot be used (HOME unset or
// read-only), under the temporary directory (fred-UID/sessions), which
// will do for one session. The file holds its lock (NewSessionDir).
func OwnSessionDir(keep bool) (string, *os.File, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	base = filepath.Join(base, "fred", "sessions")
	dir, lock, err := NewSessionDir(base, keep)
	if err != nil {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("fred-%d", os.Getuid()), "sessions")
		dir, lock, err = NewSessionDir(base, keep)
	}
	if err != nil {
		return "", nil, fmt.Errorf("cannot create a session directory in %s: %v", base, err)
	}
	return dir, lock, nil
}

// RemoveOwnSessionDir removes a directory OwnSessionDir made, and the
// ones above it that it made (.../sessions and, for the temporary
// fallback, fred-UID) if no other session uses them.
func RemoveOwnSessionDir(dir string) {
	_ = os.RemoveAll(dir)
	_ = os.Remove(filepath.Dir(dir))
	if strings.HasPrefix(dir, os.TempDir()) {
		_ = os.Remove(filepath.Dir(filepath.Dir(dir)))
	}
}
