package watch

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"testing"
)

// A simulated program for the tests. A program is Go code that calls
// vm.stmt and vm.call, so loops, calls and recursion are plain Go. Every
// statement is a stop (where a debugger would halt before running it), and
// a moment is the number of the stop the program is at, counted from the
// start of the run. Evaluating at moment k runs the program again from the
// start and halts at stop k, which is what restore-and-replay does.

type vm struct {
	g      map[string]int // globals
	frames []frame        // frames[0] is main
	n      int            // stops passed
	halt   int            // the stop at which to evaluate and halt; -1: none
	expr   func(*vm) (string, error)
	val    string
	err    error
	rec    func(line, depth int, fn string) // set when recording the trace
}

type frame struct {
	fn     string
	locals map[string]int
}

type halted struct{}

// stmt is a statement at line: the program stops before it, then runs it.
func (v *vm) stmt(line int, effect func()) {
	v.stop(line)
	if effect != nil {
		effect()
	}
}

// call is a statement at line that calls fn: `step` there enters body.
func (v *vm) call(line int, fn string, body func()) {
	v.stop(line)
	v.frames = append(v.frames, frame{fn: fn, locals: map[string]int{}})
	body()
	v.frames = v.frames[:len(v.frames)-1]
}

func (v *vm) top() *frame { return &v.frames[len(v.frames)-1] }

func (v *vm) stop(line int) {
	if v.rec != nil {
		v.rec(line, len(v.frames)-1, v.top().fn)
	}
	if v.n == v.halt {
		v.val, v.err = v.expr(v)
		panic(halted{})
	}
	v.n++
}

func newVM(halt int, expr func(*vm) (string, error), rec func(int, int, string)) *vm {
	return &vm{g: map[string]int{}, frames: []frame{{fn: "main", locals: map[string]int{}}}, halt: halt, expr: expr, rec: rec}
}

func runVM(prog func(*vm), halt int, expr func(*vm) (string, error), rec func(int, int, string)) (v *vm, reached bool) {
	v = newVM(halt, expr, rec)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(halted); !ok {
				panic(r)
			}
			reached = true
		}
	}()
	prog(v)
	return v, false
}

var errExited = errors.New("The program is not being run.")

type stopInfo struct {
	line, depth int32
	fn          uint16
}

// mom is the simulated Moment: a stop number, plus where it is for messages.
type mom struct {
	pos, line, depth int
	fn               string
}

func (m mom) String() string {
	if m.fn == "" {
		return fmt.Sprintf("stop %d (the program has exited)", m.pos)
	}
	return fmt.Sprintf("stop %d (line %d in %s, depth %d)", m.pos, m.line, m.fn, m.depth)
}

// sim is the Program. Its Split does what fred's would: snapshots between a
// and b, else command boundaries between them, else the `next`s one command
// refines into (a `step` first when a `next` would pass b), else nothing.
// It also checks the search keeps the Program's contract, and counts.
type sim struct {
	t     testing.TB
	prog  func(*vm)
	expr  func(*vm) (string, error)
	stops []stopInfo
	fns   []string
	next  []int32 // where `next` from each stop goes; len(stops) means the program exits

	// The person's history: snapshot and command-end stops, in order.
	snaps, cmds []int
	now         int
	start       int // START for search; the first snapshot unless set

	kept      []int
	evaluated map[int]bool
	watched   map[int]bool // the ends of a Scanner's bracket: seen by its watch
	splitDone map[[2]int]bool
	last      int   // where the last Eval left the program; -1 if it moved since
	cur       int   // where the program is: END at first, then where the last call left it
	atCalls   int   // Seq.At calls
	lens      []int // Len of each Split result
	listed    int   // moments Split returned in Moments slices
	replayed  int   // stops executed by Eval and Split (see run)
	probes    int   // moments a Bisector returned
	fail      func(pos int) error
}

func newSim(t testing.TB, prog func(*vm), expr func(*vm) (string, error)) *sim {
	s := &sim{t: t, prog: prog, expr: expr, evaluated: map[int]bool{}, watched: map[int]bool{}, splitDone: map[[2]int]bool{}, last: -1}
	ids := map[string]uint16{}
	runVM(prog, -1, nil, func(line, depth int, fn string) {
		id, ok := ids[fn]
		if !ok {
			id = uint16(len(s.fns))
			ids[fn] = id
			s.fns = append(s.fns, fn)
		}
		s.stops = append(s.stops, stopInfo{int32(line), int32(depth), id})
	})
	// next[i] is the first later stop no deeper than stop i. The stack
	// holds stops still waiting for theirs, shallowest at the bottom.
	s.next = make([]int32, len(s.stops))
	var stack []int32
	for j := range s.stops {
		d := s.stops[j].depth
		for len(stack) > 0 && s.stops[stack[len(stack)-1]].depth >= d {
			s.next[stack[len(stack)-1]] = int32(j)
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, int32(j))
	}
	for _, i := range stack {
		s.next[i] = int32(len(s.stops))
	}
	return s
}

func (s *sim) m(pos int) mom {
	if pos >= len(s.stops) {
		return mom{pos: pos}
	}
	st := s.stops[pos]
	return mom{pos: pos, line: int(st.line), depth: int(st.depth), fn: s.fns[st.fn]}
}

// History: what the person did before typing fred-reverse-watch.

func (s *sim) snap() {
	if len(s.snaps) == 0 || s.snaps[len(s.snaps)-1] != s.now {
		s.snaps = append(s.snaps, s.now)
	}
	if len(s.snaps) == 1 {
		s.start = s.now
	}
}

func (s *sim) cmd(to int) {
	if to <= s.now || to > len(s.stops) {
		s.t.Fatalf("command from stop %d to %d", s.now, to)
	}
	s.now, s.cur = to, to
	s.cmds = append(s.cmds, to)
}

func (s *sim) step() { s.cmd(s.now + 1) }

// nextN is `next N`, one command.
func (s *sim) nextN(n int) {
	p := s.now
	for ; n > 0; n-- {
		p = int(s.next[p])
	}
	s.cmd(p)
}

func (s *sim) finish() { s.cmd(s.finishFrom(s.now)) }

func (s *sim) finishFrom(p int) int {
	d := s.stops[p].depth
	for p++; p < len(s.stops) && s.stops[p].depth >= d; p++ {
	}
	return p
}

// cont is `continue` to a breakpoint at line.
func (s *sim) cont(line int) { s.cmd(s.contFrom(s.now, line)) }

func (s *sim) contFrom(p, line int) int {
	for p++; p < len(s.stops) && int(s.stops[p].line) != line; p++ {
	}
	return p
}

// nth returns the stop of the n-th (from 1) execution of line.
func (s *sim) nth(line, n int) int {
	for i, st := range s.stops {
		if int(st.line) == line {
			if n--; n == 0 {
				return i
			}
		}
	}
	s.t.Fatalf("line %d runs fewer times", line)
	return -1
}

// The Program.

func (s *sim) Eval(ctx context.Context, m Moment) (string, error) {
	p := m.(mom).pos
	if s.evaluated[p] {
		s.t.Errorf("Eval(%v) twice", m)
	}
	if p < s.start || p > s.now {
		s.t.Errorf("Eval(%v) outside START..END (%d..%d)", m, s.start, s.now)
	}
	s.evaluated[p] = true
	s.run(p, p)
	s.last = p
	if s.fail != nil {
		if err := s.fail(p); err != nil {
			return "", err
		}
	}
	return s.valueAt(p)
}

func (s *sim) Split(ctx context.Context, a, b Moment) (Seq, error) {
	x, y := a.(mom).pos, b.(mom).pos
	if x >= y {
		s.t.Errorf("Split(%v, %v): not in order", a, b)
	}
	if s.splitDone[[2]int{x, y}] {
		s.t.Errorf("Split(%v, %v) twice", a, b)
	}
	s.splitDone[[2]int{x, y}] = true
	if !s.evaluated[x] && !s.watched[x] || !s.evaluated[y] && !s.watched[y] {
		s.t.Errorf("Split(%v, %v) of a pair the search has not evaluated", a, b)
	}
	s.run(x, y) // one run from a to b to learn the moments
	s.last = -1
	for _, level := range [][]int{s.snaps, s.cmds} {
		var ms Moments
		for _, p := range level {
			if x < p && p < y {
				ms = append(ms, s.m(p))
			}
		}
		if len(ms) > 0 {
			s.listed += len(ms)
			s.lens = append(s.lens, len(ms))
			return ms, nil
		}
	}
	if x+1 == y {
		s.lens = append(s.lens, 0)
		return nil, nil
	}
	if s.probes == 0 && !s.boundary(x) && int(s.next[x]) < y {
		// fred's Split refines the one `next` from a: b further on is
		// a search that lost track of its level.
		s.t.Errorf("Split(%v, %v): not neighbours (a `next` from a ends at %d)", a, b, s.next[x])
	}
	first := int(s.next[x])
	if first >= y { // a `next` would pass b: b is inside the call at a
		first = x + 1
	}
	n := 0
	for p := first; p < y; p = int(s.next[p]) {
		n++
	}
	s.lens = append(s.lens, n)
	return &chain{s: s, first: first, n: n}, nil
}

// boundary says whether p is a snapshot, a command's end or the start:
// a moment that Split may refine a whole command from.
func (s *sim) boundary(p int) bool {
	return p == s.start || slices.Contains(s.snaps, p) || slices.Contains(s.cmds, p)
}

func (s *sim) Keep(m Moment) {
	p := m.(mom).pos
	if p != s.last {
		s.t.Errorf("Keep(%v) not right after Eval there (the program is at %d)", m, s.last)
	}
	s.kept = append(s.kept, p)
}

// chain is a lazy Seq: the n moments reached by a `next` chain from first.
// It never builds the list; At walks the chain, as fred replays `next i`.
type chain struct {
	s        *sim
	first, n int
}

func (c *chain) Len() int { return c.n }

func (c *chain) At(i int) Moment {
	if i < 0 || i >= c.n {
		c.s.t.Fatalf("At(%d) of %d", i, c.n)
	}
	c.s.atCalls++
	p := c.first
	for ; i > 0; i-- {
		p = int(c.s.next[p])
	}
	return c.s.m(p)
}

// run counts the cost of bringing the program to p and running on to q:
// it runs forward from where it is if that is not after p, else from the
// latest snapshot or kept moment at or before p (a restore).
func (s *sim) run(p, q int) {
	from := 0
	if s.cur <= p {
		from = s.cur
	}
	for _, list := range [][]int{s.snaps, s.kept} {
		for _, k := range list {
			if k <= p && k > from {
				from = k
			}
		}
	}
	s.replayed += q - from
	s.cur = q
}

// valueAt is the expression at stop p, for the tests' own checks; it is
// not counted.
func (s *sim) valueAt(p int) (string, error) {
	if p >= len(s.stops) {
		return "", errExited
	}
	v, reached := runVM(s.prog, p, s.expr, nil)
	if !reached {
		return "", errExited
	}
	return v.val, v.err
}

// values is the expression at every stop, in one run; errors show as "!".
func (s *sim) values() []string {
	var out []string
	var v *vm
	v = newVM(-1, nil, func(int, int, string) {
		val, err := s.expr(v)
		if err != nil {
			val = "!"
		}
		out = append(out, val)
	})
	s.prog(v)
	return out
}

func (s *sim) search(ctx context.Context, p Program) (Result, error) {
	return Search(ctx, p, s.m(s.start), s.m(s.now))
}

// plain hides Keep: a Program that takes no snapshots during the search.
type plain struct{ s *sim }

func (p plain) Eval(ctx context.Context, m Moment) (string, error) { return p.s.Eval(ctx, m) }
func (p plain) Split(ctx context.Context, a, b Moment) (Seq, error) {
	return p.s.Split(ctx, a, b)
}

func ceilLog2(k int) int { return bits.Len(uint(k - 1)) }

// evalBound is the most Evals the search may make for the levels it saw.
func (s *sim) evalBound() int {
	b := 2 + s.probes
	if vs := s.values(); vs[s.start] == vs[s.now] {
		b += 7 // looking for a moment without END's value (search.another)
	}
	for _, n := range s.lens {
		b += ceilLog2(n + 1)
	}
	return b
}

// checkLanding checks the promise: EXPR at Landed is not the value at END,
// one step later it is, and the counts are within the bound.
func checkLanding(t testing.TB, s *sim, r Result) {
	t.Helper()
	l, n := r.Landed.(mom).pos, r.Next.(mom).pos
	after, err := s.valueAt(s.now)
	if err != nil {
		t.Fatal(err)
	}
	if n != l+1 || l < s.start || n > s.now {
		t.Fatalf("landed %v, next %v: not one step apart within %d..%d", r.Landed, r.Next, s.start, s.now)
	}
	vl, lerr := s.valueAt(l)
	vn, _ := s.valueAt(n)
	if vl == after && lerr == nil || vn != after {
		t.Fatalf("landed %v with %q, next %v with %q; END has %q", r.Landed, vl, r.Next, vn, after)
	}
	var nv *NoValueError
	if errors.As(lerr, &nv) {
		vl = "without a value (" + nv.Err.Error() + ")"
	}
	if r.Before != vl || r.After != after {
		t.Fatalf("result says %q -> %q, program has %q -> %q", r.Before, r.After, vl, after)
	}
	if r.Evals > s.evalBound() {
		t.Fatalf("%d evaluations, bound %d for levels %v", r.Evals, s.evalBound(), s.lens)
	}
	if r.Splits != len(s.lens) {
		t.Fatalf("Stats say %d splits, the program saw %d", r.Splits, len(s.lens))
	}
	if r.Evals != len(s.evaluated) {
		t.Fatalf("Stats say %d evaluations, the program saw %d", r.Evals, len(s.evaluated))
	}
}

// Same: the simulated moments are comparable.
func (s *sim) Same(a, b Moment) bool { return a.(mom).pos == b.(mom).pos }
