package personalities

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
)

// TestScriptsCompile: fred's Python and Perl, kept as files of their own
// (scripts/), are what the debuggers get, and each compiles: a syntax
// error shows here, not as a debugger that will not start.
func TestScriptsCompile(t *testing.T) {
	testutil.Require(t, "python3")
	testutil.Require(t, "perl")
	pys, _ := filepath.Glob("scripts/*.py")
	pls, _ := filepath.Glob("scripts/*.pl")
	if len(pys) < 10 || len(pls) < 1 {
		t.Fatalf("scripts/ holds %d Python and %d Perl files", len(pys), len(pls))
	}
	fromFiles := map[string]string{}
	for _, f := range append(pys, pls...) {
		n := filepath.Base(f)
		src, err := builtinScript(n)
		if err != nil {
			t.Fatal(err)
		}
		fromFiles[n] = src
	}
	for _, f := range append(pys, pls...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if fromFiles[filepath.Base(f)] != string(b) {
			t.Errorf("%s is not what fred sends (not embedded?)", f)
		}
		var cmd *exec.Cmd
		if strings.HasSuffix(f, ".py") {
			cmd = exec.Command("python3", "-c", "import sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')", f)
		} else {
			// (its BEGIN blocks load perl5db.pl, which greets a terminal)
			cmd = exec.Command("perl", "-c", f)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not compile: %v\n%s", f, err, out)
		}
	}
	// gdb runs its scripts in one namespace: a name defined twice is
	// the later file's everywhere.
	defined := map[string]string{}
	top := regexp.MustCompile(`(?m)^(?:def|class) (\w+)|^(\w+) =`)
	for _, f := range pys {
		if !strings.HasPrefix(filepath.Base(f), "gdb_") {
			continue
		}
		b, _ := os.ReadFile(f)
		for _, m := range top.FindAllStringSubmatch(string(b), -1) {
			name := m[1] + m[2]
			if other, ok := defined[name]; ok && other != f {
				t.Errorf("%s is defined in %s and in %s", name, other, f)
			}
			defined[name] = f
		}
	}
	// lldb reads its lines in canonical mode: each of the setup's lines
	// fits a terminal's line, and together they are the whole file.
	var sent strings.Builder
	for _, c := range LLDB.Setup("") {
		if len(c) >= 4095 {
			t.Errorf("an lldb setup line of %d bytes", len(c))
		}
		if q, ok := strings.CutPrefix(c, "script exec("); ok {
			src, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
			if err != nil {
				t.Fatalf("%.60s: %v", c, err)
			}
			sent.WriteString(src)
		}
	}
	if sent.String() != fromFiles["lldb_helpers.py"] {
		t.Errorf("lldb's setup lines do not carry lldb_helpers.py whole")
	}
	// perl pastes PERL5DB before the program: one line.
	if strings.Contains(perlBootLine(fromFiles["perl_boot.pl"]), "\n") {
		t.Errorf("perl's bootstrap is not one line")
	}
}
