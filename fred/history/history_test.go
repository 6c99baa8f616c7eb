package history

import (
	"testing"

	P "github.com/fred-debugger/fred/personalities"
)

func step(line string, o Origin) Step {
	return Step{Cmd: P.Command{Line: line, Op: line, Count: 1}, Origin: o}
}

// The timeline hands out copies, and keeps its marks on its steps.
func TestTimelineKeepsItself(t *testing.T) {
	var tl Timeline
	tl.Mark(1)
	tl.Add(step("next", Typed))
	tl.Add(step("next", Typed))
	tl.Mark(2)
	tl.Add(step("continue", Typed))
	steps := tl.Steps()
	steps[0].Cmd.Line = "changed"
	if tl.Steps()[0].Cmd.Line != "next" {
		t.Fatal("a change to Steps' result reached the timeline")
	}
	if got := tl.Marks(); len(got) != 2 || got[1] != (Mark{Snap: 2, Index: 2}) {
		t.Fatalf("marks %v", got)
	}
	// Back to one step: the mark after it is no longer on the history.
	tl.SetSteps(steps[:1])
	if got := tl.Marks(); len(got) != 1 || got[0].Snap != 1 {
		t.Fatalf("marks after going back: %v", got)
	}
	if tl.Len() != 1 || tl.Now().Cmd.Line != "changed" {
		t.Fatalf("now %+v, len %d", tl.Now(), tl.Len())
	}
	end := tl.Now()
	end.At = P.Location{File: "a.c", Line: 3}
	tl.SetNow(end)
	if tl.Now().At.Line != 3 {
		t.Fatal("SetNow did not replace the latest step")
	}
	tl.Reset()
	tl.SetStart(Step{Depth: 1})
	if tl.Len() != 0 || len(tl.Marks()) != 0 || tl.Now().Depth != 1 {
		t.Fatalf("after Reset and SetStart: %d steps, %v, now %+v", tl.Len(), tl.Marks(), tl.Now())
	}
	tl.SetNow(Step{Depth: 5}) // nothing to replace
	if tl.Start().Depth != 1 {
		t.Fatal("SetNow on an empty history changed its start")
	}
}

// Fred's steps are said in the person's words, never by their made-up
// commands.
func TestDescribe(t *testing.T) {
	cont := step("continue", Typed)
	probe := step("fred-probe 1", Probe).PartOf(cont)
	turn := step("t", ThreadTurn).PartOf(cont)
	turn.Cmd.Op = P.OpStep
	next := step("next", Refined).PartOf(cont)
	for _, c := range []struct {
		steps []Step
		want  string
	}{
		{[]Step{probe, probe}, "inside 'continue': 2 stops by run time"},
		{[]Step{probe, next, next, next}, "inside 'continue': 1 stop by run time, next x3"},
		{[]Step{turn, turn}, "inside 'continue': 2 statements of one thread at a time"},
		{[]Step{step("next", Refined)}, "fred's next"},
	} {
		if got := Describe(c.steps, nil); got != c.want {
			t.Errorf("Describe: %q, want %q", got, c.want)
		}
	}
	if got := Position([]Step{cont, probe, probe}); got != "1 command, then inside 'continue': 2 stops by run time" {
		t.Errorf("Position: %q", got)
	}
	if got := Position(nil); got != "the start" {
		t.Errorf("Position of nothing: %q", got)
	}
	if !IsPrefix([]Step{cont}, []Step{cont, next}) || IsPrefix([]Step{next}, []Step{cont}) {
		t.Error("IsPrefix")
	}
	if Common([]Step{cont, next, probe}, []Step{cont, next, next}) != 2 {
		t.Error("Common")
	}
}
