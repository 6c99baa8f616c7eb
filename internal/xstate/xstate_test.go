package xstate

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// gdb with the library calls a function in the program and writes a
// vector register (on a CPU with AMX, gdb 13 does neither without it),
// and the program it starts has no LD_PRELOAD of it.
func TestGDBWritesRegisters(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	prog := testutil.Fixture(t, "watch")
	env, err := Preload(append(os.Environ(), "LD_PRELOAD="))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gdb", "-nx", "-q", "-batch",
		"-ex", "break update", "-ex", "run",
		"-ex", "print abs(-3)",
		"-ex", "set var $xmm1.v4_int32[0] = 4242",
		"-ex", "stepi",
		"-ex", "print $xmm1.v4_int32[0]",
		"-ex", `print (char *)getenv("LD_PRELOAD")`,
		prog)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"= 3\n", "= 4242\n", "= 0x0\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in gdb's answers (the program's LD_PRELOAD is the last):\n%s", want, text)
		}
	}
	if strings.Contains(text, "Couldn't write") {
		t.Errorf("gdb could not write registers:\n%s", text)
	}
}

// LD_PRELOAD the person set stays, after the library.
func TestPreloadKeepsTheirs(t *testing.T) {
	env, err := Preload([]string{"A=1", "LD_PRELOAD=/x/theirs.so"})
	if err != nil {
		t.Fatal(err)
	}
	if len(env) != 2 || env[0] != "A=1" || !strings.HasPrefix(env[1], "LD_PRELOAD=") ||
		!strings.HasSuffix(env[1], ":/x/theirs.so") || !strings.Contains(env[1], "fredxstate-") {
		t.Fatalf("env: %q", env)
	}
}
