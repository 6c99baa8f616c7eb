// Package cbuild compiles the small C libraries fred loads into debugged
// programs (the fork snapshot agent, the replay log), once per source
// version, into a cache directory.
package cbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Shared compiles src into dir/NAME-HASH.so ("" = the user's cache
// directory, fred/) with gcc -shared -fPIC and flags, unless a build of
// the same source is there, and returns its path. what names the library
// in errors.
func Shared(src []byte, name, dir, what string, flags ...string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "fred")
	}
	sum := sha256.Sum256(append(append([]byte(nil), src...), fmt.Sprint(flags)...))
	so := filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:6])+".so")
	if _, err := os.Stat(so); err == nil {
		return so, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// Unique names: two freds may build at once; the rename is atomic.
	tag := strconv.Itoa(os.Getpid())
	c := so[:len(so)-3] + ".c.tmp" + tag + ".c"
	if err := os.WriteFile(c, src, 0o600); err != nil {
		return "", err
	}
	defer os.Remove(c)
	tmp := so + ".tmp" + tag
	args := append([]string{"-shared", "-fPIC"}, flags...)
	out, err := exec.Command("gcc", append(args, "-o", tmp, c)...).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		if _, lerr := exec.LookPath("gcc"); lerr != nil {
			return "", fmt.Errorf("%s: gcc is needed to build it; install gcc ('make deps')", what)
		}
		return "", fmt.Errorf("%s: building it: %v\n%s", what, err, out)
	}
	if err := os.Rename(tmp, so); err != nil {
		os.Remove(tmp)
		return "", errors.Join(fmt.Errorf("%s: installing the build", what), err)
	}
	return so, nil
}
