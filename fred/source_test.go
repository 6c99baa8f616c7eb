package fred

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	P "github.com/fred-debugger/fred/personalities"
)

// A pdb `commands` block in a sourced file ends where pdb ends it: at
// `end`, or at a command that resumes the program (which is part of the
// block). fred waited for an `end` that never came, and sent the rest of
// the file as the block's lines.
func TestSourcedCommandsBlockEndsAtResume(t *testing.T) {
	ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", script("steps.py")}, "fork")
	file := filepath.Join(t.TempDir(), "cmds")
	if err := os.WriteFile(file, []byte("b 20\ncommands 1\np 'seen', i\ncontinue\nb 22\ncontinue\np total\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ts.Source(file); err != nil {
		t.Fatal(err)
	}
	out := ts.out.take()
	if strings.Count(out, "('seen', ") != 5 || !strings.Contains(out, "\n30\r\n") && !strings.Contains(out, "\n30\n") {
		t.Fatalf("the block ran %d times (want 5), and 'p total' after it:\n%s", strings.Count(out, "('seen', "), out)
	}
}
