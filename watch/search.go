package watch

import (
	"context"
	"fmt"
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
	r, err := s.run(start, end)
	r.Stats = s.stats
	if err != nil {
		return Result{Stats: s.stats}, err
	}
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
	stats    Stats
}

func (s *search) run(start, end Moment) (Result, error) {
	// END first: the program is there now, so this needs no restore.
	after, err := s.eval(end)
	if err != nil {
		return Result{}, err
	}
	before, err := s.eval(start)
	if err != nil {
		return Result{}, err
	}
	if before == after {
		return Result{}, &NoTransitionError{Value: after}
	}
	// Invariant: EXPR(a) == before != after, EXPR(b) == after. Each value
	// is evaluated once; the ends of the bracket are never probed again.
	a, b := start, end
	for {
		// Halve the stretch by run time while the Program can.
		for s.bisector != nil {
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
			if s.keeper != nil {
				s.stats.Keeps++
				s.keeper.Keep(m)
			}
		}
		seq, err := s.split(a, b)
		if err != nil {
			return Result{}, err
		}
		n := 0
		if seq != nil {
			n = seq.Len()
		}
		if n == 0 {
			return Result{Landed: a, Next: b, Before: before, After: after}, nil
		}
		// Bisect the points a, seq[0..n-1], b, numbered 0..n+1, keeping
		// lo a point with EXPR != after and hi one with EXPR == after.
		lo, hi := 0, n+1
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
			if s.keeper != nil {
				s.stats.Keeps++
				s.keeper.Keep(m)
			}
		}
	}
}

func (s *search) eval(m Moment) (string, error) {
	if err := s.ctx.Err(); err != nil {
		return "", interrupted(err)
	}
	s.stats.Evals++
	v, err := s.p.Eval(s.ctx, m)
	if err != nil {
		// A Program that honours ctx fails because of it: that is the
		// person's Ctrl-C, not a bad expression.
		if cerr := s.ctx.Err(); cerr != nil {
			return "", interrupted(cerr)
		}
		return "", &EvalError{At: m, Err: err}
	}
	return v, nil
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
