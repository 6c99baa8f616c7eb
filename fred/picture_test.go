package fred

import (
	"bytes"
	"flag"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/fred/rewrite"
	P "github.com/fred-debugger/fred/personalities"
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
	ts.must("fred-history --svg "+svg, `timeline written to .*timeline.svg \(3 snapshots\)`)
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	// What package view draws of this session's picture (its tests check
	// that such a drawing is valid SVG and names what it shows).
	var drawn bytes.Buffer
	if err := ts.picture().WriteSVG(&drawn); err != nil {
		t.Fatal(err)
	}
	if string(b) != drawn.String() {
		t.Errorf("the SVG file is not the drawing of the session's timeline:\n%s", b)
	}
	for _, name := range []string{"snapshot 1", "snapshot 2, yours", "branch 'try'", "you are here: square at steps.c:8, depth 2"} {
		if !strings.Contains(string(b), html.EscapeString(name)) {
			t.Errorf("the SVG does not name %q:\n%s", name, b)
		}
	}
	ts.must("fred-history --svg", `usage: fred-history \[--svg FILE\]`)
	ts.must("fred-history --svg /nonexistent/dir/x.svg", `no such file or directory`)
}

// TestDescribe: fred's pieces of a command of the person's read as part
// of it, in words; nothing of fred's internal command names shows.
func TestDescribe(t *testing.T) {
	cont := history.Step{Cmd: P.GDB.Classify("continue")}
	loop := P.Location{Function: "main", File: "/src/loop.c", Line: 20, PC: 0x401136}
	probe := func(id int) history.Step {
		return history.Step{Cmd: P.Command{Line: fmt.Sprintf("%s %d", opProbe, id), Op: opProbe, Count: 1}, At: loop, Origin: history.Probe}.PartOf(cont)
	}
	steps := []history.Step{
		{Cmd: P.GDB.Classify("run"), At: P.Location{Function: "main", File: "/src/loop.c", Line: 10}},
		probe(1), probe(2),
		hitsStep(0x401136, 277, nil).PartOf(cont),
		rewrite.SynthStep(P.GDB.Classify, P.OpStep, 1, nil).PartOf(cont),
		rewrite.SynthStep(P.GDB.Classify, P.OpNext, 4, nil).PartOf(cont),
	}
	got := history.Describe(steps[1:], history.Places(steps))
	want := "inside 'continue': 2 stops by run time, 277 passes of main at loop.c:20, step, next 4"
	if got != want {
		t.Errorf("describe:\n got %q\nwant %q", got, want)
	}
	if got, want := history.Position(steps), "1 command, then "+want; got != want {
		t.Errorf("position:\n got %q\nwant %q", got, want)
	}
	if got, want := history.Position(steps[:1]), "1 command ('run')"; got != want {
		t.Errorf("position of the person's command: %q, want %q", got, want)
	}
	// A piece of a piece is part of the person's command still.
	if got := rewrite.SynthStep(P.GDB.Classify, P.OpNext, 2, nil).PartOf(steps[5]).Label(); got != "inside 'continue': next 2" {
		t.Errorf("a piece of a piece: %q", got)
	}
	// fred's own steps, part of nothing of the person's.
	turn := history.Step{Cmd: P.Command{Line: "t", Op: P.OpStep}, Origin: history.ThreadTurn}
	if got := history.Describe([]history.Step{turn, turn, turn}, nil); got != "fred's 3 statements of one thread at a time" {
		t.Errorf("thread turns: %q", got)
	}
}
