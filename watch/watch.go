// Package watch is the search behind fred-reverse-watch EXPR (FReD paper,
// section 3): given START, an earlier moment, and END, the moment the person
// is at now, it finds two adjacent moments a and b, one `step` apart, where
// EXPR(a) differs from EXPR(END) and EXPR(b) equals it, and lands on a.
//
// EXPR may change many times between START and END. The bisection
// promises one transition into the value seen now, not a particular one:
// it is a binary search on "EXPR == EXPR(END)", which holds at END and
// fails at START, so every bisection keeps a bracket with that property.
// A Program that knows where the person stopped (Stopper) gets the last
// transition as far as those stops tell: after landing, the search looks
// at the stops after the landing, the latest first, and goes on from the
// first that has another value. A Program that can watch EXPR as the
// program runs (Scanner) gets the last change in the command the landing
// lies in as well, whatever EXPR did between the stops.
//
// History is hierarchical (paper 3.2): snapshots, then the person's
// commands between two snapshots, then the `next`s a `continue` or a
// `finish` refines into, then a `step` and the `next`s that a `next` over a
// call refines into, and so on down to single statements. The search
// bisects one level, then asks the Program to split the bracketing pair one
// level finer, and repeats. It calls Eval at most
//
//	2 + sum over levels of ceil(log2(n+1))
//
// times, where n is the number of moments Split returned at that level:
// about log2(N) for N statements when the levels divide the work evenly, as
// when a `continue` refines into a million `next`s (22 evaluations for 10^6
// statements in the tests). The search cannot know how many statements
// each moment of a level stands for, so uneven levels cost more: among 30
// commands of which one is a long `continue`, finding the `continue` costs
// up to 5 evaluations; and a bracket whose end is k calls deeper than its
// start is refined one frame at a time, about 2 evaluations per frame (41
// nested recursive calls: 49 evaluations in the tests). A Program that can
// do better may split differently, e.g. into the moments each frame of b's
// backtrace was entered.
//
// The package knows nothing of processes: a Program does the work. fred's
// Program restores a CRIU snapshot and replays debugger commands; the tests
// use a simulated program.
package watch

import (
	"context"
	"fmt"

	"github.com/fred-debugger/fred/internal/words"
)

// Moment is a point in the program's history, owned by the Program that
// made it. Search only hands moments back to that Program and prints them
// with %v in errors, so a Program's moment type should have a String method
// that names it the way a person could replay it, e.g.
// "[ckpt 2] continue, next 1023, step".
type Moment any

// Program is the debugged program as the search sees it.
//
// Search calls Eval(end) first, before anything else, so a Program can
// answer it without restoring: the program is still at END. Then it calls
// Eval(start) and Split(start, end), so that first Split can run forward
// from where Eval(start) left the program. After Search returns, the
// program is wherever the last call left it; the caller moves it to
// Result.Landed, or, on an error, back to where the person was.
type Program interface {
	// Eval brings the program to m (restore a snapshot, replay commands)
	// and evaluates the watched expression there.
	//
	// The search compares values as strings, so equal values must give
	// equal strings: strip gdb's "$12 = " history prefix and anything else
	// that varies between evaluations of the same value. Eval at the same
	// moment must give the same value every time (this is what the replay
	// log is for).
	//
	// When the expression has no value at m (the debugger cannot
	// evaluate it there: out of scope, unreadable memory, a name not yet
	// defined), Eval returns a *NoValueError: such a moment counts as one
	// where EXPR differs from its value at END, as a watchpoint sees it
	// (END itself must have a value). Any other error (the program
	// exited or diverged during the replay) stops the search; Search
	// returns it as an *EvalError naming m. The debugger's error text
	// ("No symbol "y" in current context.") must come back as an error,
	// never as a value.
	Eval(ctx context.Context, m Moment) (string, error)

	// Split returns the moments strictly between a and b, in order, at the
	// next finer level of the history that has any: the snapshots between
	// them, else the boundaries of the commands between them, else the
	// `next`s one command refines into (Algorithm 1 of the paper: when a
	// `next` would pass b, because b is inside a call made at a, the first
	// one is a `step` into it). Split returns an empty Seq (or nil) only
	// when the stretch cannot be divided, which ends the search: b is one
	// `step` after a (a `step` from a that leaves the stack no deeper than
	// at a is the whole `next`), or the stretch is one state-changing
	// command of the person's, such as `set var x = 3`.
	//
	// Search calls Split only on a bracket: a and b are adjacent at the
	// level above, EXPR(a) != EXPR(END) and EXPR(b) == EXPR(END). It calls
	// it once per level, so Split may run the program from a to b to learn
	// the finer moments. Returned moments must stay valid for the rest of
	// the search: name them from a snapshot ("[ckpt 2] continue, next 17"),
	// not as "where the program is now".
	Split(ctx context.Context, a, b Moment) (Seq, error)
}

// Seq is the result of Split: a sequence that can be indexed without being
// built. A `continue` over a long loop may refine into a million `next`s;
// the search only looks at about log2 of them, so a Program should return
// a Seq whose At names the i-th `next` on demand (it needs only the count,
// which one run from a to b gives) rather than a million Moments.
type Seq interface {
	Len() int
	// At returns the i-th moment, 0 <= i < Len(). Search calls it only for
	// the moments it evaluates, once each.
	At(i int) Moment
}

// Moments is a Seq for the short levels (snapshots, commands).
type Moments []Moment

func (s Moments) Len() int        { return len(s) }
func (s Moments) At(i int) Moment { return s[i] }

// Keeper is an optional interface of a Program: Search calls Keep(m) on a
// moment it evaluated so that the Program may take a snapshot there.
//
// The policy: Keep(m) is called exactly when a probe at m finds EXPR !=
// EXPR(END), that is, when m becomes the start of the bracket, and, when
// START already has END's value, on each moment probed in looking for one
// that has not (a span of the next round may start there). Every later
// Eval and Split is at or after m, so a snapshot at m is where all of them
// can restore from; a probe that finds EXPR == EXPR(END) becomes the end of
// the bracket, and every later call is before it, so a snapshot there
// would never be used. With a snapshot at each
// new bracket start, no stretch of the program is executed more than about
// twice (paper 3.1).
//
// Keep is called right after Eval(m) returned, with no other call in
// between, so the program is still at m and a snapshot costs no replay.
// But the expression has just been evaluated there: if it may have side
// effects (it calls a function in the program), the Program must snapshot
// before evaluating, e.g. in Eval, and keep that one. Keep is a hint: the
// Program may ignore it (say, when it replayed only a few commands since
// its latest snapshot) and should drop what it kept once Search returns.
type Keeper interface {
	Keep(m Moment)
}

// Bisector is an optional interface of a Program that can find a moment
// inside a stretch without counting the statements in it: by running the
// program natively for about half the stretch's run time and stopping it
// there (fred interrupts it and takes a snapshot, which fixes the moment a
// timer picked). A `continue` over a million statements then costs about
// log2 of its run time in probes, not a million `next`s.
//
// Search asks Between(a, b) on every bracket before it calls Split(a, b),
// and evaluates what it returns as any probe: the moment becomes the new a
// or the new b. Between returns nil when it cannot divide the stretch (it
// is not one native run, or too short for a timer); Search then goes on
// with Split. A moment from Between must be strictly after a and strictly
// before b in the program's history; Split must accept it at either end
// of a pair.
type Bisector interface {
	Between(ctx context.Context, a, b Moment) (Moment, error)
}

// SecondLooker is an optional interface of a Bisector whose moments come
// from run time. A short program's fixed costs (the page faults after a
// restore, a loaded machine) can make such probes land well short of
// where they aimed, all of them before the data the expression reads is
// built, say. When START has END's value and no probe found another,
// Search calls SecondLook before it gives up: if it returns true, the
// Bisector aims differently from then on (later in each stretch) and
// Search looks once more.
type SecondLooker interface {
	SecondLook() bool
}

// Stopper is an optional interface of a Program that knows where the
// person stopped: Stops(after, end) returns the moments strictly between
// after and end where one of the person's own commands ended, in order.
// Once the bisection has landed, Search evaluates the stops after the
// landing, the latest first (at most 8), and searches again from the
// first that shows another value than END's: the change found is then
// the last one as far as those stops tell (see later in search.go). When
// START already has END's value, the stops between them are where Search
// looks for another value first, before it probes in between.
type Stopper interface {
	Stops(after, end Moment) []Moment
}

// Scanner is an optional interface of a Program that can watch EXPR while
// the program runs: a hardware watchpoint, or an evaluation at every
// statement. Once the bisection and the person's stops have landed,
// Search calls Scan(from, after), from being the moment one step after the
// landing, where EXPR has END's value (after). The Program runs from there
// to the end of the person's command that from lies in (or begins). When
// EXPR took another value on the way, it returns a bracket around the
// last change back into after: A, the last moment with another value
// (Before, that value), and B, the first moment after A with after again;
// EXPR has another value everywhere between them and after from B to the
// command's end. Search bisects that bracket, so the change it lands on is
// the last one in that command, not merely one the bisection met. A is nil
// when EXPR kept after all the way; Why says why the Program could not
// watch (an expression a watchpoint cannot follow, a command it cannot
// run again with one), and the landing stays as the stops tell.
type Scanner interface {
	Scan(ctx context.Context, from Moment, after string) (Scanned, error)
}

// CoarseScanner is an optional interface of a Scanner whose finest step
// may hold several changes: another thread's statements run while one of
// the selected thread's does. When FromLanding says so, Search scans from
// the landing itself instead of one step after it, so that a change back
// and forth inside that step is seen too.
type CoarseScanner interface {
	FromLanding() bool
}

// Scanned is what a Scanner found.
type Scanned struct {
	A, B   Moment
	Before string
	Why    string
}

// Localizer is the extension point for multi-threaded programs (paper 3.3),
// not implemented yet by any Program. In a multi-threaded program, one
// `step` of the foreground thread may contain steps of other threads, so
// the search continues in two stages:
//
//   - C, a binary search over the replay log's events within that step:
//     this is just one more level, so the Program's Split goes below a
//     `step` to the log events in it, and Search bisects them as any level;
//   - D, a round-robin search with scheduler locking that finds which
//     thread's statement made the change. That is not a bisection, so
//     Search hands its final pair to Localize, if the Program has it.
//
// Localize gets the single-threaded result (Landed and Next one finest
// level apart, Before and After the values there, the counts so far) and
// returns the landing it finds, adding its own evaluations to the counts.
type Localizer interface {
	Localize(ctx context.Context, r Result) (Result, error)
}

// Stats counts the Program calls a search made, for fred to print
// ("22 evaluations, 2 splits").
type Stats struct {
	Evals  int // Eval calls
	Splits int // Split calls
	Keeps  int // Keep calls
	Probes int // moments found by a Bisector (each also one of Evals)
	// StopsLost: the person's stops after the landing could not all be
	// evaluated (one could not be reached again), so the change found is
	// the last as far as the stops before that one tell.
	StopsLost int
	// Scanned: a Scanner watched the command after the landing (so the
	// change found is its last one); NotScanned says why it could not.
	Scanned    bool
	NotScanned string
}

func (s Stats) String() string {
	// Keeps are left out: fred knows how many snapshots it really took.
	out := words.Plural(s.Evals, "evaluation") + ", " + words.Plural(s.Splits, "split")
	if s.Probes > 0 {
		out += ", " + words.Plural(s.Probes, "native probe")
	}
	if s.StopsLost > 0 {
		out += "; a stop of yours after the landing could not be reached again"
	}
	return out
}

// Result is where the search landed.
type Result struct {
	// Landed is the moment to go to: EXPR there is Before, not After.
	Landed Moment
	// Next is one `step` after Landed: EXPR there is After, the value at
	// END. The statement executed between them made the change.
	Next          Moment
	Before, After string
	Stats
}

// NoValueError is what a Program's Eval returns where the expression has
// no value: the debugger could not evaluate it there.
type NoValueError struct{ Err error }

func (e *NoValueError) Error() string { return "no value: " + e.Err.Error() }
func (e *NoValueError) Unwrap() error { return e.Err }

// noValue is how a moment without a value takes part in the comparisons:
// no value a debugger prints starts with a NUL.
const noValue = "\x00"

// NoTransitionError says EXPR has its END value at START and at every
// moment the search looked at in between (Looked of them), so there is
// no bracket to search (it may still have changed between those).
type NoTransitionError struct {
	Value  string
	Looked int
}

func (e *NoTransitionError) Error() string {
	return fmt.Sprintf("the expression has the same value (%s) at the start, now, and at the %d moments looked at in between: nothing to search; start from an earlier snapshot, or watch a condition that differs there", e.Value, e.Looked)
}

// EvalError is an Eval that failed at a probe. At names where.
type EvalError struct {
	At  Moment
	Err error
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("cannot evaluate the expression at %v: %v", e.At, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }

// SplitError is a Split that failed; A and B are the pair it was refining.
type SplitError struct {
	A, B Moment
	Err  error
}

func (e *SplitError) Error() string {
	return fmt.Sprintf("cannot refine the history between %v and %v: %v", e.A, e.B, e.Err)
}

func (e *SplitError) Unwrap() error { return e.Err }
