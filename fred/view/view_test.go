package view

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
)

func typed(line string, at P.Location) history.Step {
	return history.Step{Cmd: P.GDB.Classify(line), At: at, Depth: 1}
}

// A line of history with the person's snapshot on it, a branch, a future
// left by going back and a snapshot a search kept inside a continue, drawn
// as text and as SVG.
func TestLay(t *testing.T) {
	l10 := P.Location{Function: "main", File: "/src/a.c", Line: 10, PC: 0x401000}
	l12 := P.Location{Function: "main", File: "/src/a.c", Line: 12, PC: 0x401010}
	run, next, cont := typed("run", l10), typed("next", l12), typed("continue", l12)
	probe := history.Step{Cmd: P.Command{Line: "fred-probe 1", Op: "fred-probe", Count: 1}, At: l10, Origin: history.Probe}.PartOf(next)
	in := Input{Run: 1, Steps: []history.Step{run, next, next}, Marks: []history.Mark{{Snap: 1, Index: 1}}, Now: next,
		Branches: map[string][]history.Step{"try": {run, cont}},
		Snaps: []Snapshot{
			{ID: 1, Run: 1, Steps: []history.Step{run}, Auto: true},
			{ID: 2, Run: 1, Steps: []history.Step{run, next, next, cont}, Stood: true},
			{ID: 3, Run: 1, Steps: []history.Step{run, next, probe}, Auto: true},
			{ID: 4, Run: 0, Steps: []history.Step{run}, Auto: true}, // an earlier run's
		}}
	pic := Lay(in)
	var b bytes.Buffer
	pic.WriteText(&b, false)
	want := `fred: timeline of run 1: 3 commands, 3 snapshots, 3 side lines (oldest first)
   |  run
  (1) snapshot 1
   |\_ branch 'try': continue
   |\_ kept by a search, inside 'next': snapshot 3
   |  next x2
  >>> you are here: main at a.c:12, depth 1
   :   left by going back: continue, [snapshot 2, yours]
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := pic.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(&b)
	var texts []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not valid XML: %v", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts = append(texts, string(cd))
		}
	}
	all := strings.Join(texts, "\n")
	for _, w := range []string{"snapshot 1", "branch 'try': continue", "you are here: main at a.c:12, depth 1"} {
		if !strings.Contains(all, w) {
			t.Errorf("the SVG does not name %q:\n%s", w, all)
		}
	}
}
