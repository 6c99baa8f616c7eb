package fred

import (
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The timeline of a known session (real gdb, fork snapshots): a snapshot of
// the person's, a branch, a future left by going back, and where they are.
func TestTimelineGolden(t *testing.T) {
	ts := gdbSession(t, "steps", "fork")
	for _, c := range []string{"break square", "run", "next", "next", "fred-checkpoint", "continue", "next",
		"fred-branch try", "fred-reverse-step", "fred-reverse-step", "fred-reverse-step", "next", "step"} {
		ts.do(c)
	}
	got := ts.do("fred-history")
	golden := filepath.Join("testdata", "timeline.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("fred-history:\n%s\nwant (%s; go test -run TestTimelineGolden ./fred/ -args -update rewrites it):\n%s", got, golden, want)
	}

	svg := filepath.Join(t.TempDir(), "timeline.svg")
	ts.must("fred-history --svg "+svg, `timeline written to .*timeline.svg \(2 snapshots\)`)
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(string(b)))
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not valid XML: %v\n%s", err, b)
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts = append(texts, string(cd))
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"snapshot 1", "snapshot 2, yours", "branch 'try'", "you are here: square at steps.c:8, depth 2"} {
		if !strings.Contains(all, want) {
			t.Errorf("the SVG does not name %q:\n%s", want, b)
		}
	}
	ts.must("fred-history --svg", `usage: fred-history \[--svg FILE\]`)
	ts.must("fred-history --svg /nonexistent/dir/x.svg", `no such file or directory`)
}
