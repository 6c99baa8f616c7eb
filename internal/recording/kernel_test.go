package recording

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fred-debugger/fred/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// Under a seccomp filter that makes one system call answer ENOSYS (as an
// older kernel does, or a container's seccomp profile), the probe finds
// it missing and the rest there. A recording whose kernel had openat2,
// which nothing stands in for, is refused, naming it and both kernels;
// one whose kernel had clone3, which glibc falls back from, is said, not
// refused; a recording that lists no features (older) is not checked.
func TestKernelFeatures(t *testing.T) {
	if os.Getenv("FRED_TEST_PROBE") != "" { // the test binary again, under the filter
		m := Manifest{Kernel: "6.1.0", KernelFeatures: []string{"clone3", "openat2", "statx", "a-newer-freds"}}
		_, calls, err := m.Fits()
		_, _, older := (&Manifest{Kernel: "4.19.0"}).Fits()
		fmt.Printf("features: %s\nfits: %v\nsaid: %s\nolder: %v\n", strings.Join(KernelFeatures(), " "), err, strings.Join(calls, "; "), older)
		return
	}
	have := KernelFeatures()
	for _, f := range []string{"clone3", "openat2", "ptrace", "memfd_create"} {
		if !slices.Contains(have, f) {
			t.Fatalf("this kernel has no %s (the probe found %v): the test needs a kernel with it", f, have)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, kernel, _, _ := Machine()
	for _, c := range []struct {
		name string
		nr   uintptr
		fits string // what Fits says, under the filter
	}{
		{"openat2", unix.SYS_OPENAT2, `fits: this recording cannot be replayed here: the recording's kernel \(6\.1\.0\) had openat2 \([^)]+\), which this one \(` +
			regexp.QuoteMeta(kernel) + `\) answers ENOSYS to \(an older kernel, or a seccomp filter such as a container's\): the recorded program may have used it\nsaid: \n`},
		{"clone3", unix.SYS_CLONE3, `fits: <nil>\nsaid: clone3 \(glibc's pthread_create, posix_spawn; clone instead\)\n`},
	} {
		cmd := testutil.WithoutSyscall(t, c.nr, self, "-test.run=^TestKernelFeatures$")
		cmd.Env = append(cmd.Env, "FRED_TEST_PROBE=1")
		b, err := cmd.CombinedOutput()
		out := string(b)
		if err != nil {
			t.Fatalf("the probe without %s: %v\n%s", c.name, err, out)
		}
		want := slices.DeleteFunc(slices.Clone(have), func(f string) bool { return f == c.name })
		if !strings.Contains(out, "features: "+strings.Join(want, " ")+"\n") || !regexp.MustCompile(c.fits+`older: <nil>\n`).MatchString(out) {
			t.Fatalf("under a filter taking %s away:\n%s\nwant the features %v, and Fits matching %q", c.name, out, want, c.fits)
		}
	}
}
