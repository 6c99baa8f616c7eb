package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Search finds a transition of the watched expression into the value it
// has at end, between start and end; see the package comment. start must
// be earlier than end.
//
// The Result's Stats are filled in on every return, errors included. The
// errors are *NoTransitionError, *EvalError, *SplitError, an error wrapping
// ctx.Err() when ctx is done (checked before every Program call), or an
// error from a Localizer.
func Search(ctx context.Context, p Program, start, end Moment) (Result, error) {
	s := &search{ctx: ctx, p: p}
	s.keeper, _ = p.(Keeper)
	s.bisector, _ = p.(Bisector)
	s.stopper, _ = p.(Stopper)
	s.scanner, _ = p.(Scanner)
	r, err := s.run(start, end)
	if err == nil {
		r, err = s.later(r, end)
	}
	r.Stats = s.stats
	if err != nil {
		return Result{Stats: s.stats}, err
	}
	r.Before = shown(r.Before)
	if l, ok := p.(Localizer); ok {
		if err := ctx.Err(); err != nil {
			return Result{Stats: s.stats}, interrupted(err)
		}
		return l.Localize(ctx, r)
	}
	return r, nil
}

type search struct {
	ctx      context.Context
	p        Program
	keeper   Keeper   // nil if the Program does not keep snapshots
	bisector Bisector // nil if the Program cannot probe by run time
	stopper  Stopper  // nil if the Program knows no stops of the person's
	scanner  Scanner  // nil if the Program cannot watch EXPR as it runs
	// stopsSeen: the stops were evaluated (START had END's value).
	stopsSeen bool
	stats     Stats
	endErr    error // why END has no value
	// seen are the moments evaluated and their values, for a Program
	// that can tell two moments are one (Samer): the person's stops are
	// often among them, and each is evaluated once.
	seen  []seenAt
	fresh bool // the last eval ran the Program's Eval: the program is there
}

// keep asks the Keeper to keep m, which the last eval evaluated, if the
// program is there.
func (s *search) keep(m Moment) {
	if s.keeper != nil && s.fresh {
		s.stats.Keeps++
		s.keeper.Keep(m)
	}
}

type seenAt struct {
	m Moment
	v string
}

// Samer is an optional interface of a Program that can tell whether two
// moments are the same one: Search then evaluates each at most once.
type Samer interface {
	Same(a, b Moment) bool
}

// known is the value already evaluated at m, if any.
func (s *search) known(m Moment) (string, bool) {
	sm, ok := s.p.(Samer)
	if !ok {
		return "", false
	}
	for _, x := range s.seen {
		if sm.Same(x.m, m) {
			return x.v, true
		}
	}
	return "", false
}

func (s *search) run(start, end Moment) (Result, error) {
	// END first: the program is there now, so this needs no restore.
	after, err := s.eval(end)
	if err != nil {
		return Result{}, err
	}
	if strings.HasPrefix(after, noValue) {
		return Result{}, &EvalError{At: end, Err: s.endErr}
	}
	before, err := s.eval(start)
	if err != nil {
		return Result{}, err
	}
	a, b := start, end
	var found *bracket // a bracket inside a Seq, when another found it there
	if before == after {
		// The start has the value too: look for a later moment without
		// it, first at the person's stops, the latest first.
		e0 := s.stats.Evals
		s.stopsSeen = true
		from, v, to, err := s.lastStop(start, end, after)
		if err != nil {
			return Result{}, err
		}
		if from != nil {
			return s.bisect(from, v, to, after, nil)
		}
		stops := s.stats.Evals - e0
		br, looked, err := s.another(start, end, after)
		looked += stops
		if sl, ok := s.bisector.(SecondLooker); ok && err == nil && br == nil && sl.SecondLook() {
			var more int
			br, more, err = s.another(start, end, after)
			looked += more
		}
		if err != nil {
			return Result{}, err
		}
		if br == nil {
			return Result{}, &NoTransitionError{Value: after, Looked: looked}
		}
		a, before, b = br.a, br.before, br.b
		if br.seq != nil {
			found = br
		}
		s.keep(a)
	}
	return s.bisect(a, before, b, after, found)
}

// bisect narrows the bracket (a, b) down to one step. Invariant: EXPR(a)
// == before != after, EXPR(b) == after. Each value is evaluated once; the
// ends of the bracket are never probed again. found, if not nil, is a
// bracket inside a Seq that another found, a and b its ends.
func (s *search) bisect(a Moment, before string, b Moment, after string, found *bracket) (Result, error) {
	for {
		// Halve the stretch by run time while the Program can.
		for s.bisector != nil && found == nil {
			m, err := s.between(a, b)
			if err != nil {
				return Result{}, err
			}
			if m == nil {
				break
			}
			s.stats.Probes++
			v, err := s.eval(m)
			if err != nil {
				return Result{}, err
			}
			if v == after {
				b = m
				continue
			}
			a, before = m, v
			s.keep(m)
		}
		// The points a, seq[0..n-1], b, numbered 0..n+1: lo a point with
		// EXPR != after, hi one with EXPR == after.
		var seq Seq
		lo, hi := 0, 0
		if found != nil {
			// a and b are moments of one Seq, not neighbours: bisect
			// between them there (Split takes neighbours only).
			seq, lo, hi, found = found.seq, found.lo, found.hi, nil
		} else {
			var err error
			if seq, err = s.split(a, b); err != nil {
				return Result{}, err
			}
			n := 0
			if seq != nil {
				n = seq.Len()
			}
			if n == 0 {
				return Result{Landed: a, Next: b, Before: before, After: after}, nil
			}
			lo, hi = 0, n+1
		}
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			m := seq.At(mid - 1)
			v, err := s.eval(m)
			if err != nil {
				return Result{}, err
			}
			if v == after {
				hi, b = mid, m
				continue
			}
			lo, a, before = mid, m, v
			s.keep(m)
		}
	}
}

func (s *search) eval(m Moment) (string, error) {
	if err := s.ctx.Err(); err != nil {
		return "", interrupted(err)
	}
	s.fresh = false
	if v, ok := s.known(m); ok {
		return v, nil
	}
	s.fresh = true
	s.stats.Evals++
	v, err := s.p.Eval(s.ctx, m)
	if err != nil {
		// A Program that honours ctx fails because of it: that is the
		// person's Ctrl-C, not a bad expression.
		if cerr := s.ctx.Err(); cerr != nil {
			return "", interrupted(cerr)
		}
		var nv *NoValueError
		if errors.As(err, &nv) {
			if s.stats.Evals == 1 {
				s.endErr = nv.Err // END has no value: nothing to watch
			}
			return noValue + nv.Err.Error(), nil
		}
		return "", &EvalError{At: m, Err: err}
	}
	if _, ok := s.p.(Samer); ok {
		s.seen = append(s.seen, seenAt{m, v})
	}
	return v, nil
}

// shown is a value as the person reads it.
func shown(v string) string {
	if strings.HasPrefix(v, noValue) {
		return "without a value (" + v[len(noValue):] + ")"
	}
	return v
}

// maxStops bounds the person's stops after a landing that later looks
// at, the latest first.
const maxStops = 8

// later makes the landing r the last change into END's value as far as
// the person's own stops after it tell: the bisection promises a change,
// not the last, and where EXPR went back to another value and changed
// again after r, one of the stops in between may show it. later looks at
// the stops after r.Next, the latest first (at most maxStops), and at the
// first with another value searches again from there to end. So the
// change found is the last one between any two of the person's stops
// that it looked at, at the cost of an evaluation a stop.
//
// One pass is enough: the new landing lies between the stop found and
// the next, and every stop after that has END's value. When the start of
// the search had END's value, run looked at the stops already. Then a
// Scanner watches the rest of the command the landing lies in (scan), so
// that a change back and forth inside one long `continue` is found too.
func (s *search) later(r Result, end Moment) (Result, error) {
	r, err := s.lastOfStops(r, end)
	if err != nil || s.scanner == nil {
		return r, err
	}
	return s.scan(r, end)
}

// scan makes the landing r the last change before end: the Scanner
// watches EXPR through the command r lies in and each of the person's
// commands after it (those begin at the Stopper's stops), the latest
// first, at most maxStops; the first with a change away from END's value
// and back holds the last change, which is bisected instead. A command it
// cannot watch is skipped and said (NotScanned): a change in it stays
// possible. A scan that fails leaves r, saying why.
func (s *search) scan(r Result, end Moment) (Result, error) {
	froms := []Moment{r.Next}
	if c, ok := s.scanner.(CoarseScanner); ok && c.FromLanding() {
		froms[0] = r.Landed
	}
	if s.stopper != nil {
		froms = append(froms, s.stopper.Stops(r.Next, end)...)
	}
	s.stats.Scanned = true
	for i := len(froms) - 1; i >= 0 && i >= len(froms)-maxStops; i-- {
		if err := s.ctx.Err(); err != nil {
			return r, interrupted(err)
		}
		sc, err := s.scanner.Scan(s.ctx, froms[i], r.After)
		if cerr := s.ctx.Err(); cerr != nil {
			// The person's Ctrl-C stopped the watch, whatever it said.
			return r, interrupted(cerr)
		}
		if err == nil && sc.A == nil {
			if sc.Why != "" && s.stats.NotScanned == "" {
				s.stats.Scanned, s.stats.NotScanned = false, sc.Why
			}
			continue
		}
		if err == nil {
			var again Result
			if again, err = s.bisect(sc.A, sc.Before, sc.B, r.After, nil); err == nil {
				return again, nil
			}
		}
		if cerr := s.ctx.Err(); cerr != nil {
			return r, interrupted(cerr)
		}
		s.stats.Scanned, s.stats.NotScanned = false, err.Error()
		return r, nil
	}
	if len(froms) > maxStops && s.stats.NotScanned == "" {
		s.stats.Scanned = false
		s.stats.NotScanned = fmt.Sprintf("fred watched your last %d commands only", maxStops)
	}
	return r, nil
}

// lastOfStops is later's look at the person's stops.
func (s *search) lastOfStops(r Result, end Moment) (Result, error) {
	if s.stopsSeen {
		return r, nil
	}
	from, before, to, err := s.lastStop(r.Next, end, r.After)
	if err == nil && from != nil {
		var again Result
		if again, err = s.bisect(from, before, to, r.After, nil); err == nil {
			return again, nil
		}
	}
	if err == nil {
		return r, nil
	}
	if cerr := s.ctx.Err(); cerr != nil {
		return r, interrupted(cerr)
	}
	// A stop that cannot be reached again (its replay diverged, or the
	// program ended on the way), or a search after it that fails, does
	// not undo the landing found: it is a change into END's value, as the
	// stops before that one tell.
	s.stats.StopsLost++
	return r, nil
}

// lastStop evaluates the person's stops between a and end, the latest
// first (at most maxStops), and returns the first with another value than
// after, its value, and the stop after it (or end): a bracket. from is
// nil when none of them has another value.
func (s *search) lastStop(a, end Moment, after string) (from Moment, before string, to Moment, err error) {
	if s.stopper == nil {
		return nil, "", nil, nil
	}
	stops := s.stopper.Stops(a, end)
	to = end
	for i := len(stops) - 1; i >= 0 && i >= len(stops)-maxStops; i-- {
		v, err := s.eval(stops[i])
		if err != nil {
			return nil, "", nil, err
		}
		if v == after {
			to = stops[i]
			continue
		}
		s.keep(stops[i])
		return stops[i], v, to, nil
	}
	return nil, "", nil, nil
}

// bracket is what another found: a with a value other than END's
// (before), and b, the nearest moment after it looked at that has END's
// value. When both are moments of seq (found by counting), lo and hi
// number them as the search's bisection does: seq.At(k-1) is point k.
type bracket struct {
	a, b   Moment
	before string
	seq    Seq
	lo, hi int
}

// another looks for a moment between start and end where EXPR does not
// have its END value, when start has it: the last change into that value
// may lie after a stretch where the value was another (an invariant that
// holds only once the program has built its data). It probes the middle,
// then three and seven eighths of the way (the later, the likelier the
// change found is the last one), then a quarter, an eighth and three
// eighths: at most 6 evaluations, each between moments the search can
// come back to. It returns the first moment with another value as a
// bracket; nil if none, with how many it looked at.
func (s *search) another(start, end Moment, after string) (*bracket, int, error) {
	// Positions, in the order probed, as (from, to) of the stretch each
	// halves: 0 is start, 1 end, k+2 the k-th probe.
	plan := [][2]int{{0, 1}, {2, 1}, {3, 1}, {0, 2}, {0, 5}, {5, 2}}
	at := []Moment{start, end}
	idx := []int{-1, 0} // in the finer level's moments, when probes come from there
	var seq Seq
	looked := 0
	for _, p := range plan {
		x, y := p[0], p[1]
		if x >= len(at) || y >= len(at) || at[x] == nil || at[y] == nil {
			at, idx = append(at, nil), append(idx, 0)
			continue
		}
		var m Moment
		i := 0
		if seq == nil && s.bisector != nil {
			var err error
			if m, err = s.between(at[x], at[y]); err != nil {
				return nil, looked, err
			}
		}
		if m == nil && (seq != nil || x == 0 && y == 1) {
			if seq == nil {
				q, err := s.split(start, end)
				if err != nil {
					return nil, looked, err
				}
				if q == nil || q.Len() == 0 {
					break
				}
				seq, idx[1] = q, q.Len()
			}
			if lo, hi := idx[x], idx[y]; hi-lo >= 2 {
				i = (lo + hi) / 2
				m = seq.At(i)
			}
		}
		at, idx = append(at, m), append(idx, i)
		if m == nil {
			continue
		}
		looked++
		v, err := s.eval(m)
		if err != nil {
			return nil, looked, err
		}
		if v != after {
			br := &bracket{a: m, b: at[y], before: v}
			if seq != nil {
				br.seq, br.lo, br.hi = seq, i+1, idx[y]+1
			}
			return br, looked, nil
		}
		// A later probe may start from here: the Program must be able to
		// come back to it.
		s.keep(m)
	}
	return nil, looked, nil
}

func (s *search) split(a, b Moment) (Seq, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, interrupted(err)
	}
	s.stats.Splits++
	seq, err := s.p.Split(s.ctx, a, b)
	if err != nil {
		if cerr := s.ctx.Err(); cerr != nil {
			return nil, interrupted(cerr)
		}
		return nil, &SplitError{A: a, B: b, Err: err}
	}
	return seq, nil
}

func (s *search) between(a, b Moment) (Moment, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, interrupted(err)
	}
	m, err := s.bisector.Between(s.ctx, a, b)
	if err != nil {
		if cerr := s.ctx.Err(); cerr != nil {
			return nil, interrupted(cerr)
		}
		return nil, &SplitError{A: a, B: b, Err: err}
	}
	return m, nil
}

func interrupted(err error) error {
	return fmt.Errorf("reverse-watch interrupted: %w", err)
}
