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

// Under a seccomp filter that makes clone3 answer ENOSYS, as a kernel
// before 5.3 does, the probe finds clone3 missing and the rest there; a
// recording whose kernel had clone3 is refused, naming it and both
// kernels, and a recording that lists no features (older) is not.
func TestKernelFeatures(t *testing.T) {
	if os.Getenv("FRED_TEST_PROBE") != "" { // the test binary again, under the filter
		m := Manifest{Kernel: "6.1.0", KernelFeatures: []string{"clone3", "statx", "a-newer-freds"}}
		_, err := m.Fits()
		_, older := (&Manifest{Kernel: "4.19.0"}).Fits()
		fmt.Printf("features: %s\nfits: %v\nolder: %v\n", strings.Join(KernelFeatures(), " "), err, older)
		return
	}
	have := KernelFeatures()
	for _, f := range []string{"clone3", "ptrace", "memfd_create"} {
		if !slices.Contains(have, f) {
			t.Fatalf("this kernel has no %s (the probe found %v): the test needs a kernel with it", f, have)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := testutil.WithoutSyscall(t, unix.SYS_CLONE3, self, "-test.run=^TestKernelFeatures$")
	c.Env = append(c.Env, "FRED_TEST_PROBE=1")
	b, err := c.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("the probe under the filter: %v\n%s", err, out)
	}
	want := slices.DeleteFunc(slices.Clone(have), func(f string) bool { return f == "clone3" })
	_, kernel, _, _ := Machine()
	if !strings.Contains(out, "features: "+strings.Join(want, " ")+"\n") ||
		!regexp.MustCompile(`\nfits: this recording cannot be replayed here: the recording's kernel \(6\.1\.0\) had clone3 \([^)]+\), which this kernel \(`+
			regexp.QuoteMeta(kernel)+`\) lacks: the recorded program may have used it\nolder: <nil>\n`).MatchString(out) {
		t.Fatalf("under a filter taking clone3 away:\n%s\nwant the features %v, the recording refused naming clone3 and both kernels, an older one not", out, want)
	}
	t.Logf("under the filter:\n%s", out)
}
