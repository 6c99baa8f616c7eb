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

// The helpers that compare histories, and where an empty one ends.
func TestCompare(t *testing.T) {
	cont := step("continue", Typed)
	next := step("next", Refined).PartOf(cont)
	probe := step("fred-probe 1", Probe).PartOf(cont)
	if !IsPrefix([]Step{cont}, []Step{cont, next}) || IsPrefix([]Step{next}, []Step{cont}) {
		t.Error("IsPrefix")
	}
	if Common([]Step{cont, next, probe}, []Step{cont, next, next}) != 2 {
		t.Error("Common")
	}
	if !Within([]Step{cont}, [][]Step{{next}, {cont, next}}) || Within([]Step{probe}, [][]Step{{cont}}) {
		t.Error("Within")
	}
	var tl Timeline
	tl.Set([]Step{cont, next}, nil)
	if !tl.Extends([]Step{cont}) || tl.Extends([]Step{next}) || !tl.Is([]Step{cont, next}) || tl.Is([]Step{cont}) {
		t.Error("Timeline.Extends, Is")
	}
	if !Equal([]Step{cont}, []Step{cont}) || Equal([]Step{cont}, []Step{cont, next}) {
		t.Error("Equal")
	}
	if !FredsOwn([]Step{next, probe}) || FredsOwn([]Step{cont, next}) || FredsOwn(nil) {
		t.Error("FredsOwn")
	}
	if got := Position(nil); got != "the start" {
		t.Errorf("Position of nothing: %q", got)
	}
}
