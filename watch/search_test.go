package watch

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

func global(name string) func(*vm) (string, error) {
	return func(v *vm) (string, error) { return strconv.Itoa(v.g[name]), nil }
}

func mustSearch(t *testing.T, s *sim, p Program) Result {
	t.Helper()
	r, err := s.search(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	checkLanding(t, s, r)
	t.Logf("landed at %v: %s (levels %v)", r.Landed, r.Stats, s.lens)
	return r
}

// A counter crosses a threshold: one transition.
func TestMonotone(t *testing.T) {
	prog := func(v *vm) {
		v.stmt(1, func() { v.g["count"] = 0 })
		for i := 0; i < 1000; i++ {
			v.stmt(2, nil)
			v.stmt(3, func() { v.g["count"] += i % 3 })
		}
		v.stmt(4, nil)
	}
	s := newSim(t, prog, func(v *vm) (string, error) { return strconv.FormatBool(v.g["count"] > 500), nil })
	s.snap()
	s.nextN(1)
	s.cont(4)
	r := mustSearch(t, s, s)
	// count, the sum of i%3, is 499 after i = 499 and 501 after i = 500.
	if want := s.nth(3, 501); r.Landed.(mom).pos != want {
		t.Fatalf("landed at %v, want %v", r.Landed, s.m(want))
	}
	for i := 1; i < len(s.kept); i++ {
		if s.kept[i] <= s.kept[i-1] {
			t.Fatalf("kept %v: a later Keep should be later in time", s.kept)
		}
	}
	for _, k := range s.kept {
		if v, _ := s.valueAt(k); v == r.After {
			t.Fatalf("kept %v, where the expression already has the END value", s.m(k))
		}
	}
}

// A -> B -> A -> C, with snapshots at B and at the second A: the only
// transition into C is the one to find.
func TestNonMonotone(t *testing.T) {
	prog := func(v *vm) {
		v.stmt(1, func() { v.g["x"] = 'A' })
		for i := 0; i < 400; i++ {
			v.stmt(2, func() {
				switch i {
				case 99:
					v.g["x"] = 'B'
				case 199:
					v.g["x"] = 'A'
				case 299:
					v.g["x"] = 'C'
				}
			})
		}
		v.stmt(3, nil)
	}
	s := newSim(t, prog, func(v *vm) (string, error) { return string(rune(v.g["x"])), nil })
	s.snap()
	s.nextN(150)
	s.snap()
	s.nextN(100)
	s.snap()
	s.nextN(10)
	s.cont(3)
	r := mustSearch(t, s, s)
	if r.Before != "A" || r.After != "C" || r.Landed.(mom).pos != s.nth(2, 300) {
		t.Fatalf("landed at %v (%s -> %s), want %v (A -> C)", r.Landed, r.Before, r.After, s.m(s.nth(2, 300)))
	}
}

// A -> C -> A -> C: either transition into C will do.
func TestTwoTransitions(t *testing.T) {
	prog := func(v *vm) {
		for i := 0; i < 400; i++ {
			v.stmt(2, func() {
				switch i {
				case 50, 300:
					v.g["x"] = 2
				case 120:
					v.g["x"] = 0
				}
			})
		}
		v.stmt(3, nil)
	}
	s := newSim(t, prog, global("x"))
	s.snap()
	s.cont(3)
	r := mustSearch(t, s, s)
	if p := r.Landed.(mom).pos; p != s.nth(2, 51) && p != s.nth(2, 301) {
		t.Fatalf("landed at %v", r.Landed)
	}
}

func straight(n, changeAt int) func(*vm) {
	return func(v *vm) {
		for i := 0; i < n; i++ {
			v.stmt(10+i, func() {
				if i == changeAt {
					v.g["x"] = 1
				}
			})
		}
	}
}

// The statement at START makes the change: land on START itself.
func TestChangeFirstStatement(t *testing.T) {
	s := newSim(t, straight(40, 10), global("x"))
	s.snap()
	s.nextN(10)
	s.snap()
	s.start = s.now // START is the second snapshot, at the statement that changes x
	s.nextN(5)
	s.step()
	s.cont(35)
	r := mustSearch(t, s, s)
	if r.Landed.(mom).pos != s.start {
		t.Fatalf("landed at %v, want START %v", r.Landed, s.m(s.start))
	}
}

// The statement just before END makes the change.
func TestChangeLastStatement(t *testing.T) {
	s := newSim(t, straight(40, 30), global("x"))
	s.snap()
	s.nextN(3)
	s.cont(41) // the line after line 40, which sets x
	r := mustSearch(t, s, s)
	if r.Next.(mom).pos != s.now {
		t.Fatalf("landed at %v, want one step before END %v", r.Landed, s.m(s.now))
	}
}

// The change is three calls down, inside a `next` over the call, inside a
// `continue`: the search goes continue -> nexts -> step+nexts in a -> in b
// -> in c -> one statement.
func TestDeepCall(t *testing.T) {
	prog := func(v *vm) {
		v.stmt(1, nil)
		for i := 0; i < 50; i++ {
			v.stmt(2, nil)
			v.call(3, "a", func() {
				v.stmt(10, nil)
				v.call(11, "b", func() {
					v.stmt(20, nil)
					v.call(21, "c", func() {
						v.stmt(30, nil)
						v.stmt(31, func() {
							if i == 37 {
								v.g["x"] = 1
							}
						})
						v.stmt(32, nil)
					})
					v.stmt(22, nil)
				})
				v.stmt(12, nil)
			})
		}
		v.stmt(4, nil)
		v.stmt(5, nil)
	}
	s := newSim(t, prog, global("x"))
	s.snap()
	s.nextN(1)
	s.step()
	s.cont(4)
	r := mustSearch(t, s, s)
	l := r.Landed.(mom)
	if l.pos != s.nth(31, 38) || l.fn != "c" || l.depth != 3 {
		t.Fatalf("landed at %v, want %v", l, s.m(s.nth(31, 38)))
	}
	// Commands, then the continue's nexts, then step+nexts in a, b, c,
	// then the one statement.
	if len(s.lens) != 6 {
		t.Fatalf("levels %v, want 6", s.lens)
	}
}

// The change happens in the 23rd of 41 nested recursive calls, and END is
// in the deepest one, so the bracket's end is deeper than its start.
func TestRecursion(t *testing.T) {
	prog := func(v *vm) {
		var rec func(n int)
		rec = func(n int) {
			v.stmt(10, func() { v.g["calls"]++ })
			if n > 0 {
				v.call(11, "rec", func() { rec(n - 1) })
			}
			v.stmt(12, nil)
		}
		v.stmt(1, nil)
		v.call(2, "rec", func() { rec(40) })
		v.stmt(3, nil)
	}
	s := newSim(t, prog, func(v *vm) (string, error) { return strconv.FormatBool(v.g["calls"] >= 23), nil })
	s.snap()
	s.cont(12) // the first line 12 to run is in the deepest call
	r := mustSearch(t, s, s)
	l := r.Landed.(mom)
	if l.pos != s.nth(10, 23) || l.depth != 23 {
		t.Fatalf("landed at %v, want %v", l, s.m(s.nth(10, 23)))
	}
}

// loopOf is a loop of 100 turns at line 2 setting x to f(turn), then line 3.
func loopOf(f func(int) int) func(*vm) {
	return func(v *vm) {
		for i := 0; i < 100; i++ {
			v.stmt(2, func() { v.g["x"] = f(i) })
		}
		v.stmt(3, nil)
	}
}

// START has END's value and so do the moments between, as far as the
// search looks: no transition, after at most 7 more evaluations.
func TestNoTransition(t *testing.T) {
	s := newSim(t, loopOf(func(i int) int { return 1 }), global("x"))
	s.snap()
	s.cont(3)
	s.snaps = append(s.snaps, 2)
	s.start = 2
	r, err := s.search(context.Background(), s)
	var nt *NoTransitionError
	if !errors.As(err, &nt) || nt.Value != "1" || nt.Looked == 0 || nt.Looked > 7 {
		t.Fatalf("got %v, want a NoTransitionError for value 1 after 1-7 looks", err)
	}
	if r.Evals != 2+nt.Looked || r.Landed != nil {
		t.Fatalf("result %+v, looked at %d", r, nt.Looked)
	}
	t.Log(err)
}

// A non-monotone expression whose START equals its END: x cycles 0..6 and
// both ends have 1. The search looks for a moment with another value and
// lands on the last change into 1.
func TestStartHasEndValue(t *testing.T) {
	s := newSim(t, loopOf(func(i int) int { return i % 7 }), global("x"))
	s.snap()
	s.cont(3)
	// Stop k comes after i = k-1, so x is (k-1) % 7 there: END (stop 100)
	// has 1, and so does stop 93, where START is.
	s.snaps = append(s.snaps, 93)
	s.start = 93
	r := mustSearch(t, s, s)
	if l := r.Landed.(mom).pos; l != 99 {
		t.Fatalf("landed at %v, want stop 99, the last change into 1", r.Landed)
	}
}

// An invariant that holds only once the program has built its data: the
// watched condition is false at START (nothing built yet), true for most
// of the run, and false again from one late statement on, as it is now.
// The search lands on that statement, not on the start.
func TestInvariantBuiltAfterStart(t *testing.T) {
	s := newSim(t, builtLater, totalHolds)
	s.snap()
	s.cont(4)
	r := mustSearch(t, s, s)
	if l := r.Landed.(mom); l.line != 3 || l.pos != 50+270 {
		t.Fatalf("landed at %v, want the 271st line 3 (stop %d)", l, 50+270)
	}
}

// builtLater builds its data first (the total reaches 10000 after 50
// statements), keeps it through 300 more, and breaks the invariant at the
// 271st of those (the bug).
func builtLater(v *vm) {
	for i := 0; i < 50; i++ {
		v.stmt(2, func() { v.g["total"] += 200 })
	}
	for i := 0; i < 300; i++ {
		v.stmt(3, func() {
			if i == 270 {
				v.g["total"] -= 1 // the bug
			}
		})
	}
	v.stmt(4, nil)
}

// totalHolds is the invariant total == 10000.
func totalHolds(v *vm) (string, error) { return strconv.FormatBool(v.g["total"] == 10000), nil }

// An expression that cannot be evaluated at START (a name not defined
// yet, memory not yet allocated): such moments count as "before".
func TestNoValueAtStart(t *testing.T) {
	s := newSim(t, straight(200, 150), func(v *vm) (string, error) {
		if v.n < 40 {
			return "", &NoValueError{Err: errors.New(`name 'x' is not defined`)}
		}
		return strconv.Itoa(v.g["x"]), nil
	})
	s.snap()
	s.cont(205)
	r := mustSearch(t, s, s)
	if l := r.Landed.(mom).pos; l != 150 {
		t.Fatalf("landed at %v, want stop 150", r.Landed)
	}
	// And when the change is the first value: from no value to 0.
	s2 := newSim(t, straight(200, 500), func(v *vm) (string, error) {
		if v.n < 40 {
			return "", &NoValueError{Err: errors.New(`No symbol "x" in current context.`)}
		}
		return strconv.Itoa(v.g["x"]), nil
	})
	s2.snap()
	s2.cont(205)
	r = mustSearch(t, s2, s2)
	if l := r.Landed.(mom).pos; l != 39 || !strings.HasPrefix(r.Before, "without a value (No symbol") {
		t.Fatalf("landed at %v before %q, want stop 39 without a value", r.Landed, r.Before)
	}
}

// END without a value is an error: there is nothing to watch.
func TestNoValueAtEnd(t *testing.T) {
	s := newSim(t, straight(200, 150), func(v *vm) (string, error) {
		return "", &NoValueError{Err: errors.New(`No symbol "y" in current context.`)}
	})
	s.snap()
	s.cont(205)
	_, err := s.search(context.Background(), s)
	var ee *EvalError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), `No symbol "y"`) {
		t.Fatalf("got %v, want an EvalError naming the missing symbol", err)
	}
}

// The expression reads a local of c; START and END are in c, the probes
// outside it cannot evaluate it.
func TestEvalOutOfScope(t *testing.T) {
	prog := func(v *vm) {
		for i := 0; i < 20; i++ {
			v.stmt(2, nil)
			v.call(3, "c", func() {
				v.stmt(30, func() { v.top().locals["y"] = i })
				v.stmt(31, nil)
			})
		}
		v.stmt(4, nil)
	}
	s := newSim(t, prog, func(v *vm) (string, error) {
		if f := v.top(); f.fn == "c" {
			return strconv.Itoa(f.locals["y"]), nil
		}
		return "", errors.New(`No symbol "y" in current context.`)
	})
	s.cont(31)
	s.snap()
	for i := 0; i < 15; i++ {
		s.cont(31)
	}
	r, err := s.search(context.Background(), s)
	var ee *EvalError
	if !errors.As(err, &ee) {
		t.Fatalf("got %v, want an EvalError", err)
	}
	at := ee.At.(mom)
	if at.fn == "c" || at.pos != s.last || !strings.Contains(err.Error(), at.String()) || !strings.Contains(err.Error(), "No symbol") {
		t.Fatalf("EvalError %v at %v; last Eval at %d", err, at, s.last)
	}
	if r.Evals != len(s.evaluated) || r.Landed != nil {
		t.Fatalf("result %+v, the program saw %d evaluations", r, len(s.evaluated))
	}
	t.Log(err)
}

// The program exits during a probe's replay (say the replay diverged): the
// search stops there and says where.
func TestEvalProgramExits(t *testing.T) {
	s := newSim(t, straight(1000, 900), global("x"))
	s.snap()
	s.cont(1005)
	s.fail = func(p int) error {
		if p > 400 && p < 990 {
			return fmt.Errorf("replay of stop %d: %w", p, errExited)
		}
		return nil
	}
	_, err := s.search(context.Background(), s)
	var ee *EvalError
	if !errors.As(err, &ee) || !errors.Is(err, errExited) {
		t.Fatalf("got %v, want an EvalError wrapping the exit", err)
	}
	if p := ee.At.(mom).pos; p <= 400 || p >= 990 || p != s.last {
		t.Fatalf("EvalError at %v; last Eval at %d", ee.At, s.last)
	}
	t.Log(err)
}

type failingSplit struct {
	*sim
	left int
}

func (f *failingSplit) Split(ctx context.Context, a, b Moment) (Seq, error) {
	if f.left--; f.left < 0 {
		return nil, errExited
	}
	return f.sim.Split(ctx, a, b)
}

func TestSplitError(t *testing.T) {
	s := newSim(t, straight(100, 50), global("x"))
	s.snap()
	s.nextN(10)
	s.cont(105)
	r, err := s.search(context.Background(), &failingSplit{sim: s, left: 1})
	var se *SplitError
	if !errors.As(err, &se) || !errors.Is(err, errExited) || r.Splits != 2 {
		t.Fatalf("got %v (%s), want a SplitError on the second split", err, r.Stats)
	}
	t.Log(err)
}

// cancelling cancels the context during its n-th Eval. If honour, that Eval
// fails with ctx.Err(), as a Program that aborts its replay would.
type cancelling struct {
	*sim
	n      int
	honour bool
	cancel func()
}

func (c *cancelling) Eval(ctx context.Context, m Moment) (string, error) {
	v, err := c.sim.Eval(ctx, m)
	if c.n--; c.n == 0 {
		c.cancel()
		if c.honour {
			return "", ctx.Err()
		}
	}
	return v, err
}

func TestCancel(t *testing.T) {
	for _, honour := range []bool{false, true} {
		t.Run(fmt.Sprintf("honour=%v", honour), func(t *testing.T) {
			s := newSim(t, straight(10000, 7777), global("x"))
			s.snap()
			s.cont(10009)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := s.search(ctx, &cancelling{sim: s, n: 6, honour: honour, cancel: cancel})
			var ee *EvalError
			if !errors.Is(err, context.Canceled) || errors.As(err, &ee) {
				t.Fatalf("got %v, want the cancellation", err)
			}
			if r.Evals != 6 || len(s.evaluated) != 6 || r.Landed != nil {
				t.Fatalf("result %+v after cancelling in the 6th Eval; the program saw %d", r, len(s.evaluated))
			}
			t.Log(err)
		})
	}
	s := newSim(t, straight(10, 5), global("x"))
	s.snap()
	s.cont(19)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r, err := s.search(ctx, s); !errors.Is(err, context.Canceled) || r.Evals != 0 {
		t.Fatalf("cancelled before the start: %v, %s", err, r.Stats)
	}
}

// A loop of a million statements inside one `continue`: the search
// evaluates about log2(1e6) times and never lists the million `next`s.
func TestMillion(t *testing.T) {
	const n = 1000000
	prog := func(v *vm) {
		v.stmt(1, nil)
		for i := 0; i < n; i++ {
			v.stmt(2, func() { v.g["i"]++ })
		}
		v.stmt(3, nil)
	}
	expr := func(v *vm) (string, error) { return strconv.FormatBool(v.g["i"] >= 765432), nil }
	for _, keep := range []bool{true, false} {
		s := newSim(t, prog, expr)
		s.snap()
		s.cont(3)
		var p Program = s
		if !keep {
			p = plain{s}
		}
		r := mustSearch(t, s, p)
		stmts := s.now - s.start
		if want := s.nth(2, 765432); r.Landed.(mom).pos != want {
			t.Fatalf("landed at %v, want %v", r.Landed, s.m(want))
		}
		if limit := ceilLog2(stmts) + 3; r.Evals > limit {
			t.Fatalf("%d evaluations for %d statements, limit %d", r.Evals, stmts, limit)
		}
		if s.atCalls != r.Evals-2 || s.listed > 0 {
			t.Fatalf("At called %d times for %d probes; %d moments listed", s.atCalls, r.Evals-2, s.listed)
		}
		t.Logf("keep=%v: %d statements: %s; %d statements replayed (%.1f x the stretch)",
			keep, stmts, r.Stats, s.replayed, float64(s.replayed)/float64(stmts))
		if keep && s.replayed > 2*stmts+100 {
			t.Fatalf("with snapshots kept, %d statements replayed for a stretch of %d", s.replayed, stmts)
		}
		if !keep && s.replayed < 5*stmts {
			t.Fatalf("without snapshots, only %d statements replayed?", s.replayed)
		}
	}
}

// threads is a Program with a Localizer, standing in for a multi-threaded
// one: it must be handed the single-threaded landing and have the last word.
type threads struct {
	*sim
	got *Result
}

func (th threads) Localize(ctx context.Context, r Result) (Result, error) {
	*th.got = r
	r.Landed = "thread 2, " + fmt.Sprint(r.Landed)
	r.Evals++
	return r, nil
}

func TestLocalizer(t *testing.T) {
	s := newSim(t, straight(100, 60), global("x"))
	s.snap()
	s.cont(105)
	var got Result
	r, err := s.search(context.Background(), threads{s, &got})
	if err != nil {
		t.Fatal(err)
	}
	checkLanding(t, s, got)
	if r.Landed != "thread 2, "+fmt.Sprint(got.Landed) || r.Evals != got.Evals+1 {
		t.Fatalf("Search returned %+v, Localize made %+v", r, got)
	}
}

// Random programs (calls, loops, recursion), random expressions over their
// globals, random histories: the search lands on a transition into the END
// value, within the bound, keeping the Program's contract (checked by sim).
func TestRandomPrograms(t *testing.T) {
	searched, worst := 0, 0
	for seed := int64(0); seed < 1000; seed++ {
		if evals, stmts := checkRandom(t, seed); evals > 0 {
			searched++
			worst = max(worst, evals-ceilLog2(stmts))
		}
	}
	t.Logf("%d searches (the rest had no transition); at worst log2(statements) + %d evaluations", searched, worst)
}

func FuzzSearch(f *testing.F) {
	for seed := int64(0); seed < 20; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) { checkRandom(t, seed) })
}

const (
	kAssign = iota
	kAdd
	kCall
	kLoop
	kRecurse
)

type rnode struct {
	kind, line, val, callee, n int
	v                          string
	body                       []rnode
}

type rprog struct{ fns [][]rnode }

func genProg(r *rand.Rand) *rprog {
	p := &rprog{fns: make([][]rnode, 1+r.Intn(4))}
	line := 0
	var gen func(fi, nest int) []rnode
	gen = func(fi, nest int) []rnode {
		var out []rnode
		for i := 1 + r.Intn(4); i > 0; i-- {
			line++
			nd := rnode{line: line, v: string(rune('a' + r.Intn(3))), val: r.Intn(4)}
			switch x := r.Intn(10); {
			case x < 4:
				nd.kind = kAssign
			case x < 6:
				nd.kind = kAdd
			case x < 8 && fi+1 < len(p.fns):
				nd.kind, nd.callee = kCall, fi+1+r.Intn(len(p.fns)-fi-1)
			case x < 9 && nest < 2:
				nd.kind, nd.n, nd.body = kLoop, 1+r.Intn(6), gen(fi, nest+1)
			default:
				nd.kind, nd.n = kRecurse, 1+r.Intn(4)
			}
			out = append(out, nd)
		}
		return out
	}
	for fi := range p.fns {
		p.fns[fi] = gen(fi, 0)
	}
	return p
}

func (p *rprog) exec(v *vm, fi int, body []rnode) {
	for _, nd := range body {
		switch nd.kind {
		case kAssign:
			v.stmt(nd.line, func() { v.g[nd.v] = nd.val })
		case kAdd:
			v.stmt(nd.line, func() { v.g[nd.v] = (v.g[nd.v] + nd.val) % 5 })
		case kCall:
			v.call(nd.line, fmt.Sprint("f", nd.callee), func() { p.exec(v, nd.callee, p.fns[nd.callee]) })
		case kLoop:
			for i := 0; i < nd.n; i++ {
				v.stmt(nd.line, nil)
				p.exec(v, fi, nd.body)
			}
		case kRecurse:
			if len(v.frames)-1 < nd.n {
				v.call(nd.line, fmt.Sprint("f", fi), func() { p.exec(v, fi, p.fns[fi]) })
			} else {
				v.stmt(nd.line, nil)
			}
		}
	}
}

var randomExprs = []func(x, y string) func(*vm) (string, error){
	func(x, y string) func(*vm) (string, error) { return global(x) },
	func(x, y string) func(*vm) (string, error) {
		return func(v *vm) (string, error) { return strconv.FormatBool(v.g[x] > 1), nil }
	},
	func(x, y string) func(*vm) (string, error) {
		return func(v *vm) (string, error) { return strconv.Itoa((v.g[x] + v.g[y]) % 3), nil }
	},
	func(x, y string) func(*vm) (string, error) {
		return func(v *vm) (string, error) { return strconv.FormatBool(v.g[x] == v.g[y]), nil }
	},
}

// checkRandom returns the evaluations and statements of its search, or
// zeros when there was none.
func checkRandom(t *testing.T, seed int64) (evals, stmts int) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	}()
	r := rand.New(rand.NewSource(seed))
	var prog *rprog
	var s *sim
	for {
		prog = genProg(r)
		n := 0
		tooLong := false
		func() {
			defer func() {
				if recover() != nil {
					tooLong = true
				}
			}()
			runVM(func(v *vm) { prog.exec(v, 0, prog.fns[0]) }, -1, nil, func(int, int, string) {
				if n++; n > 5000 {
					panic("too long")
				}
			})
		}()
		if !tooLong && n >= 3 {
			break
		}
	}
	vars := "abc"
	x, y := string(vars[r.Intn(3)]), string(vars[r.Intn(3)])
	expr := randomExprs[r.Intn(len(randomExprs))](x, y)
	s = newSim(t, func(v *vm) { prog.exec(v, 0, prog.fns[0]) }, expr)

	// A random history that stays inside the run.
	s.snap()
	for i := 1 + r.Intn(8); i > 0; i-- {
		if r.Intn(3) == 0 {
			s.snap()
		}
		to := -1
		switch r.Intn(5) {
		case 0:
			to = s.now + 1
		case 1:
			to = int(s.next[s.now])
		case 2:
			to = s.now
			for k := 2 + r.Intn(5); k > 0 && to < len(s.stops); k-- {
				to = int(s.next[to])
			}
		case 3:
			to = s.finishFrom(s.now)
		case 4:
			j := s.now + 1 + r.Intn(len(s.stops)-s.now)
			if j < len(s.stops) {
				to = s.contFrom(s.now, int(s.stops[j].line))
			}
		}
		if to > s.now && to < len(s.stops) {
			s.cmd(to)
		}
	}
	if s.now == 0 {
		return 0, 0
	}
	var starts []int
	for _, p := range s.snaps {
		if p < s.now {
			starts = append(starts, p)
		}
	}
	s.start = starts[r.Intn(len(starts))]

	var p Program = s
	if r.Intn(2) == 0 {
		p = plain{s}
	}
	vals := s.values()
	res, err := s.search(context.Background(), p)
	if vals[s.start] == vals[s.now] {
		// Either no other value where the search looked, or a landing
		// on a change into END's value after one it found.
		var nt *NoTransitionError
		if errors.As(err, &nt) {
			return 0, 0
		}
		if err != nil {
			t.Fatalf("seed %d: same value at both ends, got %v", seed, err)
		}
	}
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	checkLanding(t, s, res)
	return res.Evals, s.now - s.start
}

// bisecting is the simulated program with a Bisector: Between picks a
// moment near the middle of a stretch longer than min stops, off by up to
// a quarter of it either way (a timer's interrupt is not exact), and the
// program runs there from a, as fred's native probe does.
type bisecting struct {
	*sim
	rnd *rand.Rand
	min int
}

func (b *bisecting) Between(ctx context.Context, a, c Moment) (Moment, error) {
	x, y := a.(mom).pos, c.(mom).pos
	if x >= y {
		b.t.Errorf("Between(%v, %v): not in order", a, c)
	}
	if y-x < b.min {
		return nil, nil
	}
	mid := x + (y-x)/2 + b.rnd.Intn((y-x)/2+1) - (y-x)/4
	mid = max(x+1, min(y-1, mid))
	b.run(x, mid)
	b.last = -1
	b.probes++
	return b.m(mid), nil
}

// A million-statement `continue` with a Bisector: the probes do most of
// the work, Split refines only a short stretch, and the evaluations stay
// about log2 of the statements.
func TestBisectorMillion(t *testing.T) {
	const n = 1000000
	prog := func(v *vm) {
		v.stmt(1, nil)
		for i := 0; i < n; i++ {
			v.stmt(2, func() { v.g["i"]++ })
		}
		v.stmt(3, nil)
	}
	expr := func(v *vm) (string, error) { return strconv.FormatBool(v.g["i"] >= 765432), nil }
	for seed := int64(1); seed <= 5; seed++ {
		s := newSim(t, prog, expr)
		s.snap()
		s.cont(3)
		b := &bisecting{sim: s, rnd: rand.New(rand.NewSource(seed)), min: 500}
		r := mustSearch(t, s, b)
		stmts := s.now - s.start
		if want := s.nth(2, 765432); r.Landed.(mom).pos != want {
			t.Fatalf("landed at %v, want %v", r.Landed, s.m(want))
		}
		if r.Probes == 0 || r.Probes != s.probes {
			t.Fatalf("Stats say %d probes, the program made %d", r.Probes, s.probes)
		}
		if limit := ceilLog2(stmts) + 8; r.Evals > limit {
			t.Fatalf("%d evaluations for %d statements, limit %d", r.Evals, stmts, limit)
		}
		for _, l := range s.lens {
			if l >= b.min {
				t.Fatalf("Split refined a stretch of %d moments; the Bisector should have divided it (levels %v)", l, s.lens)
			}
		}
		if s.replayed > 3*stmts {
			t.Fatalf("%d statements replayed for a stretch of %d", s.replayed, stmts)
		}
	}
}

// Probes land anywhere, inside calls too, and the expression goes back
// and forth: every landing is still one step before a transition into the
// value at END.
func TestBisectorNonMonotone(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rnd := rand.New(rand.NewSource(seed))
		flips := map[int]bool{}
		for i := 0; i < 1+rnd.Intn(6); i++ {
			flips[rnd.Intn(3000)] = true
		}
		prog := func(v *vm) {
			v.stmt(1, nil)
			for i := 0; i < 1000; i++ {
				v.stmt(2, nil)
				v.call(3, "f", func() {
					v.stmt(10, nil)
					v.stmt(11, func() {
						if flips[3*i] {
							v.g["x"] = 1 - v.g["x"]
						}
					})
				})
			}
			v.stmt(4, nil)
		}
		s := newSim(t, prog, global("x"))
		s.snap()
		s.cont(4)
		if v, _ := s.valueAt(s.now); v == "0" {
			continue // no transition into the END value to find
		}
		b := &bisecting{sim: s, rnd: rnd, min: 1 + rnd.Intn(50)}
		mustSearch(t, s, b)
	}
}

// early is a Bisector whose probes all land just after a, as run-time
// probes of a short program under load do (its fixed costs eat the time),
// until SecondLook makes it aim better.
type early struct {
	*sim
	recounter bool
	aimed     bool
}

func (e *early) Between(ctx context.Context, a, c Moment) (Moment, error) {
	x, y := a.(mom).pos, c.(mom).pos
	if y-x < 2 {
		return nil, nil
	}
	at := x + 1
	if e.aimed {
		at = x + (y-x)/2
	}
	e.run(x, at)
	e.last = -1
	e.probes++
	return e.m(at), nil
}

type earlyLooking struct{ *early }

func (e earlyLooking) SecondLook() bool {
	if e.aimed {
		return false
	}
	e.aimed = true
	return true
}

// The invariant built after START, with run-time probes that all land
// early: without SecondLook the search finds no other value; with it, it
// looks again and lands on the change.
func TestBisectorSecondLook(t *testing.T) {
	for _, second := range []bool{false, true} {
		s := newSim(t, builtLater, totalHolds)
		s.snap()
		s.cont(4)
		e := &early{sim: s}
		var p Program = e
		if second {
			p = earlyLooking{e}
		}
		r, err := s.search(context.Background(), p)
		var nt *NoTransitionError
		if !second {
			if !errors.As(err, &nt) {
				t.Fatalf("probes that all land early found %v, %v; want no transition", r.Landed, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checkLanding(t, s, r)
		if l := r.Landed.(mom); l.line != 3 || l.pos != 50+270 {
			t.Fatalf("landed at %v, want the 271st line 3 (stop %d)", l, 50+270)
		}
	}
}

// The bisection promises a change, not the last one: here the person's
// first stop leads it to the first rise of x. The person's stops after
// that landing (a Stopper's) show x back at 0 at the second stop, and the
// search goes on from there to the last rise.
func TestStopsFindTheLastChange(t *testing.T) {
	history := func() *sim { return riseFallRise(t) }
	s := history()
	r := mustSearch(t, s, s)
	if l := r.Landed.(mom).pos; l != 10 {
		t.Fatalf("without the stops, landed at %v; the test wants the first rise, stop 10, there", r.Landed)
	}
	plain := r.Evals
	s = history()
	r = mustSearch(t, s, stopping{s})
	if l := r.Landed.(mom).pos; l != 90 {
		t.Fatalf("landed at %v, want stop 90, the last change into 1", r.Landed)
	}
	t.Logf("%d evaluations, %d without the stops", r.Evals, plain)
}

// riseFallRise is a history where x rises at 10, falls at 70 and rises
// again at 90, with the person's stops at 30 (x is 1), 80 (0) and the end
// (1).
func riseFallRise(t *testing.T) *sim {
	return riseFallRiseWith(t, func(s *sim) {
		s.nextN(30)
		s.nextN(50)
		s.cont(3)
	})
}

// riseFallRiseWith is the same program, the person's commands given.
func riseFallRiseWith(t *testing.T, person func(s *sim)) *sim {
	s := newSim(t, loopOf(func(i int) int {
		if i >= 10 && i < 70 || i >= 90 {
			return 1
		}
		return 0
	}), global("x"))
	s.snap()
	person(s)
	return s
}

// stopping is a sim that tells its command ends as the person's stops.
type stopping struct{ *sim }

func (s stopping) Stops(after, end Moment) []Moment {
	a, e := after.(mom).pos, end.(mom).pos
	var out []Moment
	for _, p := range s.cmds {
		if p > a && p < e {
			out = append(out, s.m(p))
		}
	}
	return out
}

// START has END's value: the person's stops are looked at first, the
// latest first, before probes in between; a stop with another value
// starts the bracket.
func TestStopsWhenStartHasEndValue(t *testing.T) {
	s := newSim(t, loopOf(func(i int) int {
		if i >= 40 && i < 60 {
			return 0
		}
		return 1
	}), global("x"))
	s.snap()
	s.nextN(20) // 1
	s.nextN(30) // 0
	s.cont(3)   // 1
	s.snaps = append(s.snaps, 20)
	s.start = 20
	r := mustSearch(t, s, stopping{s})
	if l := r.Landed.(mom).pos; l != 60 {
		t.Fatalf("landed at %v, want stop 60, the last change into 1", r.Landed)
	}
}

// A stop of the person's after the landing that cannot be evaluated (its
// replay diverged), or a search after it that fails, leaves the landing
// found, and the result says so; an interrupt there still stops the
// search.
func TestStopThatFailsKeepsTheLanding(t *testing.T) {
	history := func() *sim { return riseFallRise(t) }
	s := history()
	plain := mustSearch(t, s, s).Landed.(mom).pos
	s = history()
	bad := s.cmds[len(s.cmds)-2] // the last stop before END
	s.fail = func(pos int) error {
		if pos == bad {
			return errors.New("diverged")
		}
		return nil
	}
	r := mustSearch(t, s, stopping{s})
	if l := r.Landed.(mom).pos; l != plain {
		t.Fatalf("landed at %v, want %d, the landing before the stops", r.Landed, plain)
	}
	if r.StopsLost != 1 || !strings.Contains(r.Stats.String(), "could not be reached again") {
		t.Fatalf("the result does not say a stop was lost: %+v, %q", r.Stats, r.Stats.String())
	}
	// The stop has another value, but the search after it fails.
	s = history()
	armed := false
	s.fail = func(pos int) error {
		if armed {
			return errors.New("diverged")
		}
		armed = pos == bad
		return nil
	}
	r = mustSearch(t, s, stopping{s})
	if l := r.Landed.(mom).pos; l != plain || r.StopsLost != 1 {
		t.Fatalf("a failed search after the stop: landed at %v (want %d), %+v", r.Landed, plain, r.Stats)
	}
	s = history()
	ctx, cancel := context.WithCancel(context.Background())
	s.fail = func(pos int) error {
		if pos == bad {
			cancel()
			return context.Canceled
		}
		return nil
	}
	if _, err := Search(ctx, stopping{s}, s.m(s.start), s.m(s.now)); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupt at a stop: %v", err)
	}
}

// scanning is a sim that watches EXPR as it runs (a watchpoint): Scan
// looks at every stop from the moment given to the end of the command it
// lies in. why, when set, is its refusal.
type scanning struct {
	*sim
	why   string
	calls int
}

func (s *scanning) Scan(ctx context.Context, from Moment, after string) (Scanned, error) {
	s.calls++
	if s.why != "" {
		return Scanned{Why: s.why}, nil
	}
	f := from.(mom).pos
	end := s.now
	for _, c := range s.cmds {
		if c > f {
			end = c
			break
		}
	}
	s.run(f, end)
	s.last = -1
	last := -1
	for p := f + 1; p <= end; p++ {
		if v, _ := s.valueAt(p); v != after {
			last = p
		}
	}
	if last < 0 {
		return Scanned{}, nil
	}
	before, _ := s.valueAt(last)
	s.watched[last], s.watched[last+1] = true, true
	return Scanned{A: s.m(last), B: s.m(last + 1), Before: before}, nil
}

// EXPR rises, falls and rises again inside one `continue`, with no stop
// of the person's in between: the bisection lands on a rise; a Scanner
// makes it the last one. A Scanner that cannot watch leaves the landing
// and says why.
func TestScanFindsTheLastChangeInACommand(t *testing.T) {
	history := func() *sim { return riseFallRiseWith(t, func(s *sim) { s.cont(3) }) }
	s := history()
	plain := mustSearch(t, s, s)
	if l := plain.Landed.(mom).pos; l == 90 {
		t.Fatalf("without a scan the search landed on the last rise already (%v): the test shows nothing", plain.Landed)
	}
	s = history()
	sc := &scanning{sim: s}
	r := mustSearch(t, s, sc)
	if l := r.Landed.(mom).pos; l != 90 || !r.Scanned || r.NotScanned != "" || sc.calls != 1 {
		t.Fatalf("landed at %v (want stop 90, the last rise), %+v, %d scans", r.Landed, r.Stats, sc.calls)
	}
	t.Logf("%d evaluations with the scan, %d without", r.Evals, plain.Evals)

	s = history()
	sc = &scanning{sim: s, why: "a software watchpoint"}
	r = mustSearch(t, s, sc)
	if r.Landed.(mom).pos != plain.Landed.(mom).pos || r.Scanned || r.NotScanned != "a software watchpoint" {
		t.Fatalf("a scan that cannot watch: landed at %v (want %v), %+v", r.Landed, plain.Landed, r.Stats)
	}
}

// An interrupt during the scan stops the search, whatever the Scanner
// answered.
func TestScanInterrupted(t *testing.T) {
	s := riseFallRiseWith(t, func(s *sim) { s.cont(3) })
	ctx, cancel := context.WithCancel(context.Background())
	sc := &scanCancelled{sim: s, cancel: cancel}
	if _, err := Search(ctx, sc, s.m(s.start), s.m(s.now)); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the interrupt", err)
	}
}

// scanCancelled is a Scanner that the person interrupts: it answers that it
// could not watch.
type scanCancelled struct {
	*sim
	cancel func()
}

func (s *scanCancelled) Scan(ctx context.Context, from Moment, after string) (Scanned, error) {
	s.cancel()
	return Scanned{Why: "stopped at a signal"}, nil
}

// scanStopping is a scanning sim that also tells the person's stops.
type scanStopping struct{ *scanning }

func (s scanStopping) Stops(after, end Moment) []Moment { return stopping{s.sim}.Stops(after, end) }

// The change back and forth lies in a later command than the landing's,
// between two of the person's stops that both have END's value: the scan
// of the commands after the landing, the latest first, finds it.
func TestScanFindsTheLastChangeInALaterCommand(t *testing.T) {
	s := riseFallRiseWith(t, func(s *sim) {
		s.nextN(30) // 1
		s.cont(3)   // 1, with a fall and a rise between
	})
	sc := &scanning{sim: s}
	r := mustSearch(t, s, scanStopping{sc})
	if l := r.Landed.(mom).pos; l != 90 || !r.Scanned {
		t.Fatalf("landed at %v (want stop 90, the last rise), %+v, %d scans", r.Landed, r.Stats, sc.calls)
	}
	if sc.calls != 1 {
		t.Fatalf("%d scans: the latest command has the change, no earlier one needs a look", sc.calls)
	}
}

// coarseScanning is a scanning sim whose finest step may hold several
// changes (threads): it asks to be scanned from the landing, and keeps
// where each scan began.
type coarseScanning struct {
	*scanning
	froms []int
}

func (s *coarseScanning) FromLanding() bool { return true }

func (s *coarseScanning) Scan(ctx context.Context, from Moment, after string) (Scanned, error) {
	s.froms = append(s.froms, from.(mom).pos)
	return s.scanning.Scan(ctx, from, after)
}

// A CoarseScanner is scanned from the landing itself, where EXPR still
// has its value before: a change back and forth inside the landing's
// step would be seen. The landing is the last rise all the same.
func TestScanFromTheLanding(t *testing.T) {
	history := func() *sim { return riseFallRiseWith(t, func(s *sim) { s.cont(3) }) }
	s := history()
	plain := mustSearch(t, s, s)
	s = history()
	sc := &coarseScanning{scanning: &scanning{sim: s}}
	r := mustSearch(t, s, sc)
	if len(sc.froms) == 0 || sc.froms[0] != plain.Landed.(mom).pos {
		t.Fatalf("scanned from %v, want from the landing %v", sc.froms, plain.Landed)
	}
	if l := r.Landed.(mom).pos; l != 90 || !r.Scanned {
		t.Fatalf("landed at %v (want stop 90, the last rise), %+v", r.Landed, r.Stats)
	}
}
