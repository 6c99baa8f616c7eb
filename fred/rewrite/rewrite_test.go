package rewrite

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
)

// A simulated program for the history rewriting: its execution is a list
// of statements (function, line, stack depth); a moment is a position in
// that list. Commands behave as gdb's do: step goes to the next statement,
// next to the next one at this depth or shallower, finish to the first one
// shallower, continue to the next breakpoint; all stop at breakpoints.
// Each statement calls at most one function.
type simStmt struct {
	fn    string
	line  int
	depth int
}

type simProg struct {
	trace []simStmt
	bps   map[int]bool // lines with a breakpoint
	pos   int
	steps []history.Step // the history that reached pos
	moves int            // commands run, replays included
}

// simProgram builds a random program: main loops over calls to functions
// that may call others, some recursively.
func simProgram(r *rand.Rand) *simProg {
	line := 0
	var trace []simStmt
	var emit func(fn string, depth, budget int)
	emit = func(fn string, depth, budget int) {
		base := line
		n := 1 + r.Intn(4)
		line += n
		for i := 0; i < n; i++ {
			trace = append(trace, simStmt{fn, base + i + 1, depth})
			if budget > 0 && r.Intn(3) == 0 {
				emit(fmt.Sprintf("f%d", r.Intn(3)), depth+1, budget-1)
			}
		}
	}
	loopLine := 1
	line = 1
	for it := 0; it < 2+r.Intn(4); it++ {
		trace = append(trace, simStmt{"main", loopLine, 1})
		saved := line
		emit("work", 2, 3)
		if it > 0 {
			line = saved // the same code runs again: the same lines
		}
	}
	trace = append(trace, simStmt{"main", 1000, 1})
	p := &simProg{trace: trace, bps: map[int]bool{}}
	for i := 0; i < 2; i++ {
		p.bps[trace[r.Intn(len(trace))].line] = true
	}
	return p
}

func (p *simProg) state(pos int) history.Step {
	if pos >= len(p.trace) {
		return history.Step{Ended: true, Stop: P.StopEnded}
	}
	t := p.trace[pos]
	return history.Step{At: P.Location{File: "sim.c", Line: t.line, Function: t.fn, PC: uint64(t.line)}, Depth: t.depth}
}

// run executes one command from pos and returns the new position and why
// it stopped.
func (p *simProg) run(op string, from int) (int, P.Stop) {
	if from >= len(p.trace) {
		return from, P.StopEnded
	}
	d := p.trace[from].depth
	for q := from + 1; q < len(p.trace); q++ {
		t := p.trace[q]
		if p.bps[t.line] {
			return q, P.StopBreakpoint
		}
		switch {
		case op == P.OpStep,
			op == P.OpNext && t.depth <= d,
			op == P.OpFinish && t.depth < d:
			return q, P.StopDone
		}
	}
	return len(p.trace), P.StopEnded
}

func (p *simProg) exec(c P.Command) history.Step {
	n := c.Count
	if n < 1 {
		n = 1
	}
	stop := P.StopDone
	for i := 0; i < n && stop == P.StopDone; i++ {
		p.pos, stop = p.run(c.Op, p.pos)
		p.moves++
	}
	st := p.state(p.pos)
	st.Cmd, st.Stop = c, stop
	if st.Ended {
		st.Stop = P.StopEnded
	}
	return st
}

// mover, as the rewriting sees the program.
func (p *simProg) GoTo(steps []history.Step) error {
	p.pos = 0
	p.steps = append([]history.Step(nil), steps[:1]...)
	for _, st := range steps[1:] {
		got := p.exec(st.Cmd)
		p.steps = append(p.steps, got)
	}
	return nil
}

func (p *simProg) Forward(op string, bps []string) (history.Step, error) {
	st := p.exec(P.GDB.Classify(op))
	st.Origin = history.Refined
	p.steps = append(p.steps, st)
	return st, nil
}

func (p *simProg) Bare(op string, bps []string) (P.Stop, error) {
	st, err := p.Forward(op, bps)
	return st.Stop, err
}

func (p *simProg) Now() history.Step              { return p.steps[len(p.steps)-1] }
func (p *simProg) First() int                     { return 1 }
func (p *simProg) Classify(line string) P.Command { return P.GDB.Classify(line) }

// expected targets, straight from the definitions on the trace.
func (p *simProg) depthAt(pos int) int { return p.state(pos).Depth }

func (p *simProg) wantPrevStatement(pos int) int { return pos - 1 }

func (p *simProg) wantCallSite(pos int) int {
	d := p.depthAt(pos)
	for q := pos - 1; q >= 0; q-- {
		if p.depthAt(q) < d {
			return q
		}
	}
	return -1
}

func (p *simProg) wantPrevSameDepth(pos int) int {
	d := p.depthAt(pos)
	for q := pos - 1; q >= 0; q-- {
		if p.depthAt(q) <= d {
			return q
		}
	}
	return -1
}

func TestRewriteOnSimulatedPrograms(t *testing.T) {
	ops := []string{"step", "next", "next", "next 3", "finish", "continue", "step 2"}
	for seed := int64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewSource(seed))
		p := simProgram(r)
		rw := New(p)
		run := history.Step{Cmd: P.GDB.Classify("run"), At: p.state(0).At, Depth: p.state(0).Depth}
		hist := []history.Step{run}
		p.GoTo(hist)
		for i := 0; i < 12 && p.pos < len(p.trace); i++ {
			hist = append(hist, p.exec(P.GDB.Classify(ops[r.Intn(len(ops))])))
			p.steps = hist
			pos := p.pos
			type rev struct {
				name string
				f    func([]history.Step) ([]history.Step, error)
				want int
			}
			revs := []rev{{"reverse-step", rw.PrevStatement, p.wantPrevStatement(pos)}}
			if pos < len(p.trace) {
				revs = append(revs,
					rev{"reverse-next", rw.PrevSameDepth, p.wantPrevSameDepth(pos)},
					rev{"reverse-finish", rw.CallSite, p.wantCallSite(pos)})
			}
			c := revs[r.Intn(len(revs))]
			got, err := c.f(hist)
			if c.want < 0 {
				if !errors.Is(err, ErrAtStart) {
					t.Fatalf("seed %d: %s from %d should be at the start, got %v", seed, c.name, pos, err)
				}
				p.GoTo(hist)
				continue
			}
			if err != nil {
				t.Fatalf("seed %d: %s from %d: %v", seed, c.name, pos, err)
			}
			p.GoTo(got)
			if p.pos != c.want {
				t.Fatalf("seed %d: %s from position %d (%v) landed on %d (%v), want %d (%v)\nhistory %v\ntrace %v",
					seed, c.name, pos, p.state(pos).At, p.pos, p.state(p.pos).At, c.want, p.state(c.want).At, cmds(hist), p.trace)
			}
			// Going on from the landing point agrees with the past: the
			// person may alternate forward and reverse freely.
			hist = p.steps
		}
	}
}

func cmds(h []history.Step) []string {
	var s []string
	for _, st := range h {
		s = append(s, st.Cmd.String())
	}
	return s
}

func TestRewriteRecursionAndBreakpoints(t *testing.T) {
	// main calls f, which recurses three times; a breakpoint sits in the
	// deepest call.
	p := &simProg{bps: map[int]bool{21: true}}
	p.trace = []simStmt{{"main", 1, 1}, {"main", 2, 1},
		{"f", 10, 2}, {"f", 11, 2},
		{"f", 10, 3}, {"f", 11, 3},
		{"f", 10, 4}, {"f", 21, 4}, {"f", 12, 4},
		{"f", 12, 3}, {"f", 12, 2},
		{"main", 3, 1}, {"main", 4, 1}}
	rw := New(p)
	run := history.Step{Cmd: P.GDB.Classify("run"), At: p.state(0).At, Depth: 1}
	hist := []history.Step{run}
	p.GoTo(hist)
	hist = append(hist, p.exec(P.GDB.Classify("next")))     // main:2
	hist = append(hist, p.exec(P.GDB.Classify("continue"))) // f:21 at depth 4
	p.steps = hist
	if p.pos != 7 {
		t.Fatalf("continue stopped at %d", p.pos)
	}
	for _, c := range []struct {
		name string
		f    func([]history.Step) ([]history.Step, error)
		want int
	}{
		{"reverse-step", rw.PrevStatement, 6},
		{"reverse-next", rw.PrevSameDepth, 6},
		{"reverse-finish", rw.CallSite, 5},
	} {
		got, err := c.f(hist)
		if err != nil {
			t.Fatal(c.name, err)
		}
		p.GoTo(got)
		if p.pos != c.want {
			t.Errorf("%s from the breakpoint in the deepest call: %d, want %d", c.name, p.pos, c.want)
		}
		p.GoTo(hist)
	}
	// From main after the recursion returned: reverse-step lands in the
	// outermost call's last statement, reverse-next on the call.
	hist = append(hist, p.exec(P.GDB.Classify("finish")), p.exec(P.GDB.Classify("finish")), p.exec(P.GDB.Classify("finish")))
	p.steps = hist
	if p.pos != 11 {
		t.Fatalf("three finishes reached %d", p.pos)
	}
	got, _ := rw.PrevStatement(hist)
	p.GoTo(got)
	if p.pos != 10 {
		t.Errorf("reverse-step out of the recursion: %d, want 10", p.pos)
	}
	got, _ = rw.PrevSameDepth(hist)
	p.GoTo(got)
	if p.pos != 1 {
		t.Errorf("reverse-next over the recursion: %d, want 1", p.pos)
	}
}

// A long call (gzip's ct_init: hundreds of statements, most calling
// bi_reverse): reverse-next over it, and reverse-finish from its caller's
// frame after a `next` over it, land at once on the moment the history
// already names. Walking into the call and back out of it statement by
// statement replayed each statement's moment from the start: quadratic,
// minutes on gzip.
func TestRewriteOverLongCall(t *testing.T) {
	const turns = 300
	p := &simProg{bps: map[int]bool{}}
	p.trace = []simStmt{{"main", 1, 1}, {"main", 2, 1}, {"init", 10, 2}}
	for i := 0; i < turns; i++ {
		p.trace = append(p.trace, simStmt{"fill", 20, 3}, simStmt{"rev", 30, 4}, simStmt{"rev", 31, 4})
	}
	p.trace = append(p.trace, simStmt{"init", 11, 2}, simStmt{"main", 3, 1}, simStmt{"main", 4, 1})
	rw := New(p)
	run := history.Step{Cmd: P.GDB.Classify("run"), At: p.state(0).At, Depth: 1}
	hist := []history.Step{run, p.exec(P.GDB.Classify("next"))} // main:2, the call of init
	p.steps = hist
	for _, c := range []struct {
		name  string
		cmds  []string
		f     func([]history.Step) ([]history.Step, error)
		want  int
		moves int
	}{
		{"reverse-next over the call", []string{"next"}, rw.PrevSameDepth, 1, 2},
		{"reverse-next over 'next 2'", []string{"next 2"}, rw.PrevSameDepth, 3 + 3*turns + 1, 4},
		{"reverse-finish after a next over a long call", []string{"step", "next"}, rw.CallSite, 1, 2},
		{"reverse-finish after 'next 2'", []string{"step", "step", "next 2"}, rw.CallSite, 2, 4},
	} {
		h := hist
		p.GoTo(h)
		for _, cmd := range c.cmds {
			h = append(h, p.exec(P.GDB.Classify(cmd)))
		}
		p.steps = h
		p.moves = 0
		got, err := c.f(h)
		if err != nil {
			t.Fatal(c.name, err)
		}
		moves := p.moves
		p.GoTo(got)
		if p.pos != c.want {
			t.Errorf("%s: landed on %d, want %d", c.name, p.pos, c.want)
		}
		if moves > c.moves {
			t.Errorf("%s: %d commands run, want at most %d (a walk through the call)", c.name, moves, c.moves)
		}
	}
}
