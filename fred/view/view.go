// Package view draws the history fred-history shows: the forward
// commands of the current line of history, the snapshots between them,
// the branches and the futures left by going back, and where the person
// is. One layout (Lay), drawn as text (any terminal, colour if it has it)
// or as SVG (slides).
package view

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/words"
	P "github.com/fred-debugger/fred/personalities"
)

// Picture is the session's history laid out for drawing.
type Picture struct {
	Run   int
	items []item // the current line, oldest first; "now" is after the last
	sides []side // lines that leave the current line
	now   string // where the person is
	Snaps int    // snapshots drawn
}

// item is one entry on a line: a command (run count times in a row) or a
// snapshot.
type item struct {
	cmd    string
	count  int // shown as "x3"
	steps  int // of the history it stands for
	snap   int // isSnap: a snapshot, with its label
	isSnap bool
	label  string
	via    []int // snapshots taken part way through a counted command
}

// side is a line that leaves the current one after `at` of its commands:
// a named branch, or a future left by going back (kept by its snapshots).
type side struct {
	name  string
	at    int // commands in common with the current line
	items []item
}

// Snapshot is what the picture needs of a snapshot.
type Snapshot struct {
	ID    int
	Run   int
	Steps []history.Step // the history it was taken after
	Auto  bool           // taken by fred, not the person
	// Stood: the person stood there (a future of theirs, not only a
	// moment a search kept).
	Stood bool
}

// Input is the session as the picture sees it.
type Input struct {
	Run      int
	Steps    []history.Step // the current line of history
	Marks    []history.Mark
	Now      history.Step
	Branches map[string][]history.Step
	Snaps    []Snapshot // in the order taken
}

// lay is a layout in progress.
type lay struct {
	in    Input
	snaps map[int]Snapshot
}

// Lay lays out the session's history.
func Lay(in Input) Picture {
	l := &lay{in: in, snaps: map[int]Snapshot{}}
	for _, sn := range in.Snaps {
		l.snaps[sn.ID] = sn
	}
	steps, marks, now := in.Steps, in.Marks, in.Now
	pic := Picture{Run: in.Run}
	pic.items = l.lineItems(steps, 0, true)
	switch {
	case len(steps) == 0 && len(marks) == 0:
		pic.now = "no history yet"
	case now.Ended:
		pic.now = fmt.Sprintf("the program has ended (after '%s')", now.Label())
	default:
		pic.now = fmt.Sprintf("%s, depth %d", words.Where(now.At), now.Depth)
	}
	// Branches, then snapshots off every line, each future drawn once.
	onLine := map[int]bool{}
	for _, m := range marks {
		onLine[m.Snap] = true
	}
	for _, it := range pic.items {
		for _, id := range it.via {
			onLine[id] = true
		}
	}
	names := make([]string, 0, len(in.Branches))
	for n := range in.Branches {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines [][]history.Step
	for _, n := range names {
		b := in.Branches[n]
		k := history.Common(b, steps)
		pic.sides = append(pic.sides, side{name: "branch '" + n + "'", at: k, items: l.lineItems(b, k, false)})
		lines = append(lines, b)
	}
	var left []Snapshot
	for _, sn := range in.Snaps {
		if onLine[sn.ID] || sn.Run != in.Run || history.Within(sn.Steps, lines) {
			continue
		}
		if history.StartUpOnly(sn.Steps) {
			// main's first line, off this line (it went back into the
			// start-up): no future of the person's, no search's.
			pic.sides = append(pic.sides, side{name: "main's first line", at: 0, items: l.lineItems(sn.Steps, 0, false)})
			continue
		}
		left = append(left, sn)
	}
	// The longest futures first, so that shorter ones on them are drawn
	// with them.
	sort.SliceStable(left, func(i, j int) bool { return len(left[i].Steps) > len(left[j].Steps) })
	// Snapshots a search kept inside a command of the person's are no
	// future of theirs: one line says where they are.
	kept := map[int][]int{} // commands in common -> snapshots
	for _, sn := range left {
		if history.Within(sn.Steps, lines) {
			continue
		}
		k := history.Common(sn.Steps, steps)
		if !sn.Stood && history.FredsOwn(sn.Steps[k:]) {
			kept[k] = append(kept[k], sn.ID)
			continue
		}
		pic.sides = append(pic.sides, side{name: "left by going back", at: k, items: l.lineItems(sn.Steps, k, false)})
		lines = append(lines, sn.Steps)
	}
	for k, ids := range kept {
		sort.Ints(ids)
		name := "kept by a search"
		for _, a := range l.snaps[ids[0]].Steps[k:] {
			if a.Of != "" {
				name += ", inside '" + a.Of + "'"
				break
			}
		}
		pic.sides = append(pic.sides, side{name: name, at: k,
			items: []item{{cmd: words.Numbered("snapshot", ids), count: 1}}})
	}
	sort.SliceStable(pic.sides, func(i, j int) bool { return pic.sides[i].at < pic.sides[j].at })
	for _, sn := range in.Snaps {
		if sn.Run == in.Run {
			pic.Snaps++
		}
	}
	return pic
}

// lineItems is the commands of steps from index from on, with the
// snapshots of this run that lie on them.
func (l *lay) lineItems(steps []history.Step, from int, current bool) []item {
	at := map[int][]int{} // index -> snapshots taken after that many steps
	for _, sn := range l.in.Snaps {
		if sn.Run != l.in.Run {
			continue
		}
		n := len(sn.Steps)
		if n >= from && n <= len(steps) && history.IsPrefix(sn.Steps, steps) {
			if current || n > from {
				at[n] = append(at[n], sn.ID)
			}
		}
	}
	var out []item
	var named map[uint64]P.Location // where hit counts' addresses are
	for i := from; i <= len(steps); i++ {
		for _, id := range at[i] {
			label := "snapshot " + strconv.Itoa(id)
			if i == 0 {
				label += ", the start"
			}
			if !l.snaps[id].Auto {
				label += ", yours"
			}
			out = append(out, item{snap: id, isSnap: true, label: label})
		}
		if i == len(steps) {
			break
		}
		if steps[i].Synth() {
			// fred's pieces of one command of the person's, up to the
			// next snapshot: one entry in the person's words.
			// (a piece made without its command's name is taken for
			// a piece of its neighbour's)
			of := steps[i].Of
			j := i + 1
			for j < len(steps) && steps[i].Origin != history.StartUp && steps[j].Synth() && (steps[j].Of == "" || of == "" || steps[j].Of == of) && len(at[j]) == 0 {
				if of == "" {
					of = steps[j].Of
				}
				j++
			}
			var via []int
			for k := i; k < j; k++ {
				via = append(via, l.onTheWay(steps, k)...)
			}
			if named == nil {
				named = history.Places(steps) // once a line
			}
			n := 1
			if steps[i].Origin == history.StartUp {
				n = 0 // no command of the person's
			}
			out = append(out, item{cmd: history.Describe(steps[i:j], named), count: n, steps: j - i, via: via})
			i = j - 1
			continue
		}
		c := steps[i].Label()
		via := l.onTheWay(steps, i)
		if n := len(out); n > 0 && !out[n-1].isSnap && out[n-1].cmd == c && len(via) == 0 && len(out[n-1].via) == 0 {
			out[n-1].count++
			out[n-1].steps++
			continue
		}
		out = append(out, item{cmd: c, count: 1, steps: 1, via: via})
	}
	return out
}

// onTheWay is the snapshots taken part way through steps[i], a counted
// command ("next 1000" on the way to "next 1620", during a search).
func (l *lay) onTheWay(steps []history.Step, i int) []int {
	c := steps[i].Cmd
	if c.Op != P.OpNext && c.Op != P.OpStep {
		return nil
	}
	var ids []int
	for _, sn := range l.in.Snaps {
		if sn.Run != l.in.Run || len(sn.Steps) != i+1 || !history.IsPrefix(sn.Steps[:i], steps) {
			continue
		}
		if d := sn.Steps[i].Cmd; d.Op == c.Op && max(d.Count, 1) < max(c.Count, 1) {
			ids = append(ids, sn.ID)
		}
	}
	return ids
}

func (it item) text() string {
	if it.isSnap {
		return "[" + it.label + "]"
	}
	s := it.cmd
	if it.count > 1 {
		s = fmt.Sprintf("%s x%d", it.cmd, it.count)
	}
	if len(it.via) > 0 {
		s += " (" + words.Numbered("snapshot", it.via) + " on the way)"
	}
	return s
}

func (sd side) text() string {
	if len(sd.items) == 0 {
		return sd.name + " is this moment"
	}
	parts := make([]string, len(sd.items))
	for i, it := range sd.items {
		parts[i] = it.text()
	}
	return sd.name + ": " + strings.Join(parts, ", ")
}

// ANSI colours for the text timeline.
const (
	cSnap = "\x1b[1;32m"
	cNow  = "\x1b[1;33m"
	cSide = "\x1b[36m"
	cOff  = "\x1b[0m"
)

// WriteText draws the timeline in plain text, one entry a line, oldest
// first.
func (pic Picture) WriteText(w io.Writer, colour bool) {
	paint := func(c, s string) string {
		if !colour {
			return s
		}
		return c + s + cOff
	}
	cmds := 0
	for _, it := range pic.items {
		cmds += it.count
	}
	fmt.Fprintf(w, "fred: timeline of run %d: %s, %s, %s (oldest first)\n", pic.Run,
		words.Plural(cmds, "command"), words.Plural(pic.Snaps, "snapshot"), words.Plural(len(pic.sides), "side line"))
	drawSides := func(lo, hi int, mark string) {
		for _, sd := range pic.sides {
			if sd.at < lo || sd.at >= hi {
				continue
			}
			fmt.Fprintf(w, "   %s %s\n", mark, paint(cSide, sd.text()))
		}
	}
	n := 0
	for _, it := range pic.items {
		if it.isSnap {
			fmt.Fprintf(w, "  %s\n", paint(cSnap, fmt.Sprintf("(%d) %s", it.snap, it.label)))
			continue
		}
		drawSides(n, n+it.steps, "|\\_")
		fmt.Fprintf(w, "   |  %s\n", it.text())
		n += it.steps
	}
	fmt.Fprintf(w, "  %s\n", paint(cNow, ">>> you are here: "+pic.now))
	drawSides(n, n+1, ":  ")
}

// WriteSVG draws the same timeline as an SVG picture: the current line
// down the left, snapshots as circles, side lines to the right.
func (pic Picture) WriteSVG(w io.Writer) error {
	const (
		rowH  = 22
		x0    = 30
		textX = 50
	)
	type row struct {
		y    int
		kind string // cmd, snap, now, side
		text string
	}
	var rows []row
	y := 40
	addSides := func(lo, hi int) {
		for _, sd := range pic.sides {
			if sd.at < lo || sd.at >= hi {
				continue
			}
			rows = append(rows, row{y, "side", sd.text()})
			y += rowH
		}
	}
	n := 0
	for _, it := range pic.items {
		if it.isSnap {
			rows = append(rows, row{y, "snap", it.label})
		} else {
			addSides(n, n+it.steps)
			rows = append(rows, row{y, "cmd", it.text()})
			n += it.steps
		}
		y += rowH
	}
	rows = append(rows, row{y, "now", "you are here: " + pic.now})
	y += rowH
	addSides(n, n+1)
	width, height := 900, y+10

	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="monospace" font-size="14">
<title>fred timeline, run %d</title>
<rect width="100%%" height="100%%" fill="white"/>
<text x="10" y="20" font-weight="bold">fred timeline of run %d (oldest at the top)</text>
`, width, height, width, height, pic.Run, pic.Run)
	if len(rows) > 0 {
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444" stroke-width="3"/>`+"\n", x0, rows[0].y-6, x0, rows[len(rows)-1].y-6)
	}
	for _, r := range rows {
		switch r.kind {
		case "snap":
			fmt.Fprintf(w, `<circle cx="%d" cy="%d" r="8" fill="#2a2" stroke="#060"/><text x="%d" y="%d" fill="#060" font-weight="bold">%s</text>`+"\n", x0, r.y-6, textX, r.y, esc(r.text))
		case "now":
			fmt.Fprintf(w, `<polygon points="%d,%d %d,%d %d,%d" fill="#d80"/><text x="%d" y="%d" fill="#a50" font-weight="bold">%s</text>`+"\n", x0-10, r.y-14, x0+10, r.y-6, x0-10, r.y+2, textX, r.y, esc(r.text))
		case "side":
			fmt.Fprintf(w, `<path d="M %d %d Q %d %d %d %d" fill="none" stroke="#09c" stroke-width="2" stroke-dasharray="4 3"/><text x="%d" y="%d" fill="#079">%s</text>`+"\n", x0, r.y-6-rowH, x0, r.y-6, x0+40, r.y-6, x0+45, r.y, esc(r.text))
		default:
			fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", textX, r.y, esc(r.text))
		}
	}
	_, err := fmt.Fprintln(w, "</svg>")
	return err
}
