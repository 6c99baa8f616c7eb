package fred

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fred-debugger/fred/fred/view"
)

// picture lays out the session's history (package view draws it).
func (s *Session) picture() view.Picture {
	in := view.Input{Run: s.run, Steps: s.Timeline.Steps(), Marks: s.Timeline.Marks(), Now: s.Timeline.Now(),
		Branches: s.branches}
	for _, id := range s.order {
		sn := s.snaps[id]
		in.Snaps = append(in.Snaps, view.Snapshot{ID: id, Run: sn.run, Steps: sn.Steps, Auto: sn.Auto, Stood: sn.stood})
	}
	return view.Lay(in)
}

// history is fred-history: the timeline as text, or as SVG into a file.
func (s *Session) history(svg string) error {
	pic := s.picture()
	if svg == "" {
		if s.Timeline.Len() == 0 && len(s.Timeline.Marks()) == 0 {
			fmt.Fprintf(s.opt.Out, "fred: no history yet: start the program with %s\n", s.startHint())
			return nil
		}
		pic.WriteText(s.opt.Out, s.opt.Colour)
		return nil
	}
	f, err := os.Create(svg)
	if err != nil {
		return err
	}
	if err := pic.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	abs, _ := filepath.Abs(svg)
	s.Printf("timeline written to %s (%d snapshots)", abs, pic.Snaps)
	return nil
}
