// Package testutil builds fred and the fixture programs for tests, and
// insists on the real tools being there.
package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	dir   string
	built = map[string]string{}
)

// Root is the repository's top directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Main runs a test package with a scratch directory for built programs,
// and removes it afterwards.
func Main(m *testing.M) {
	if nr := os.Getenv(enosysEnv); nr != "" {
		withoutSyscall(nr) // (WithoutSyscall's run: it execs)
	}
	var err error
	dir, err = os.MkdirTemp("", "fred-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// Keep fred's history file out of the tester's home.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	// Every process this package's tests start inherits the mark, which
	// tells them from those of packages tested at the same time.
	os.Setenv("FRED_TEST_RUN", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Require fails the test if a tool is missing, naming how to install it.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; run 'make deps' (as root) to install what fred's tests need", tool)
		}
	}
}

// Fred builds bin/fred once per test binary and returns its path.
func Fred(t testing.TB) string {
	t.Helper()
	return build(t, "fred", func(out string) *exec.Cmd {
		c := exec.Command("go", "build", "-o", out, "./cmd/fred")
		c.Dir = Root()
		return c
	})
}

// Fixture compiles testdata/NAME.c (or NAME.cpp, with g++) with -g -O0
// once and returns the binary.
func Fixture(t testing.TB, name string) string {
	t.Helper()
	cc, src := "gcc", filepath.Join(Root(), "testdata", name+".c")
	if _, err := os.Stat(src); err != nil {
		cc, src = "g++", filepath.Join(Root(), "testdata", name+".cpp")
	}
	Require(t, cc)
	return build(t, name, func(out string) *exec.Cmd {
		return exec.Command(cc, "-g", "-O0", "-o", out, src)
	})
}

// FixtureNoDebug builds testdata/NAME.c without debug information, as
// distributions ship their programs, and returns the binary's path.
func FixtureNoDebug(t testing.TB, name string) string {
	t.Helper()
	Require(t, "gcc")
	src := filepath.Join(Root(), "testdata", name+".c")
	return build(t, name+"-nodebug", func(out string) *exec.Cmd {
		return exec.Command("gcc", "-O0", "-o", out, src)
	})
}

func build(t testing.TB, name string, cmd func(out string) *exec.Cmd) string {
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	if dir == "" {
		t.Fatal("testutil.Main was not called from TestMain")
	}
	out := filepath.Join(dir, name)
	c := cmd(out)
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, b)
	}
	built[name] = out
	return out
}

// Running lists the pids of processes whose command line mentions s,
// among those this package's tests started (FRED_TEST_RUN in their
// environment).
func Running(s string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z") {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && dir != "" &&
			!strings.Contains(string(env), "FRED_TEST_RUN="+dir+"\x00") {
			continue // another package's test
		}
		var pid int
		fmt.Sscan(e.Name(), &pid)
		pids = append(pids, pid)
	}
	return pids
}
