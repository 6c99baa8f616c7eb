package fred

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/testutil"
	P "github.com/fred-debugger/fred/personalities"
)

// lldbFileCopy writes lldb's personality file, changed by the pairs in
// edits (old, new), outside fred: a person's own file.
func lldbFileCopy(t *testing.T, edits ...string) string {
	t.Helper()
	return fileCopy(t, "lldb", edits...)
}

// fileCopy writes built-in personality name's file, changed by edits.
func fileCopy(t *testing.T, name string, edits ...string) string {
	t.Helper()
	b, err := os.ReadFile("../personalities/files/" + name + ".fred")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("test bug: %s.fred has no %q", name, edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	path := filepath.Join(t.TempDir(), "my-"+name+".fred")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A personality read from a file outside fred (gdb's and lldb's, each
// with a prompt of its own) works end to end on both snapshot backends:
// the person sees its prompt, and fred's reverse commands land as with
// the built-in one (gdb's MI answers, its fork driver and the detach and
// attach around a CRIU dump all come from the file).
func TestPersonalityFromFile(t *testing.T) {
	for _, c := range []struct {
		name, prompt string
		argv         func(prog string) []string
		toFirst      []step // to the first stop at square, x=0
		goOn         step   // to the second, x=1
		landed       [2]string
	}{
		{"gdb", "(gdb) ", func(prog string) []string { return []string{"gdb", "-q", prog} },
			[]step{noLibc, {cmd: "break square", out: `Breakpoint 1`}, {cmd: "run", out: `Breakpoint 1, square \(x=0\)`}},
			step{cmd: "continue", out: `Breakpoint 1, square \(x=1\)`}, [2]string{`square \(x=1\)`, `square \(x=0\)`}},
		{"lldb", "(lldb) ", func(prog string) []string { return []string{"lldb", prog} },
			[]step{lldbNoLibc, {cmd: "b square", out: `Breakpoint 1`}, {cmd: "run", out: `snapshot 1 taken`}},
			step{cmd: "c", out: `stop reason = breakpoint 1`}, [2]string{`square\(x=1\)`, `square\(x=0\)`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			testutil.Require(t, c.name)
			mine := "(my " + c.name + ") "
			p, err := P.Named(fileCopy(t, c.name, `prompt: "`+c.prompt+`"`, `prompt: "`+mine+`"`))
			if err != nil {
				t.Fatal(err)
			}
			forBackends(t, func(t *testing.T, backend string) {
				prog := testutil.Fixture(t, "steps")
				ts := tracedSession(t, p, c.argv(prog), prog, backend, t.TempDir())
				if got := ts.Prompt(); got != mine {
					t.Fatalf("the prompt is %q", got)
				}
				ts.play(c.toFirst)
				at := ts.seen("x")
				ts.play([]step{c.goOn, {cmd: "next"}})
				ts.must("fred-reverse-continue", c.landed[0])
				ts.must("fred-reverse-continue", c.landed[1])
				if got := ts.seen("x"); got != at {
					t.Fatalf("reverse-continue landed at %+v, want %+v", got, at)
				}
			})
		})
	}
}

// The other kind, a debugger inside the program: pdb's file, copied
// with a prompt of its own, works end to end (reverse-watch lands where
// the built-in one does).
func TestInProcessPersonalityFromFile(t *testing.T) {
	testutil.Require(t, "python3")
	p, err := P.Named(fileCopy(t, "pdb", "name: pdb", "name: mypdb", `prompt: "(Pdb) "`, `prompt: "(my pdb) "`))
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := inprocSession(t, p, []string{"python3", "-m", "pdb", script("watch.py")}, "fork")
	if got := ts.Prompt(); got != "(my pdb) " {
		t.Fatalf("the prompt is %q", got)
	}
	ts.play([]step{{cmd: "b 18", out: `Breakpoint 1`}, {cmd: "c", out: `\(18\)main\(\)`}})
	ts.must("fred-reverse-watch total >= 0", `'total >= 0' is True here; the next step makes it False`)
	if v := ts.value("i"); v != "277" {
		t.Fatalf("landed with i=%s, want 277", v)
	}
}

// A file whose debugger never shows fred's prompt (no {marker} in its
// arguments) gets one error naming the file; nothing is left running.
func TestPersonalityFileWithoutFredsPrompt(t *testing.T) {
	testutil.Require(t, "lldb")
	path := lldbFileCopy(t, "-O settings set prompt {marker}\n", "")
	p, err := P.Named(path)
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "steps")
	_, err = Start(Options{Personality: p, Argv: []string{"lldb", prog}, Out: &syncBuf{}, Timeout: 3 * time.Second, Batch: true, Snapshots: "fork", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "no prompt from the debugger") || !strings.Contains(err.Error(), path) {
		t.Fatalf("Start: %v", err)
	}
	for end := time.Now().Add(5 * time.Second); len(testutil.Running(prog)) > 0 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if left := testutil.Running(prog); len(left) > 0 {
		t.Fatalf("left running: %v", left)
	}
}
