package main

import (
	"fmt"
	P "github.com/fred-debugger/fred/personalities"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/fred"
)

// revCase is one reverse command, run again and again from the same
// moment of history (a branch kept with fred-branch; fred-switch returns
// there between runs, outside the timing).
type revCase struct {
	measure string
	fred    string // FReD's figure
	target  string
	under   float64 // seconds; 0 if DESIGN.md sets no target
	base    string  // branch to start from
	cmd     string
	want    string // regexp the output must match: where it lands
	reps    int
	noTrace bool // no traced run for the breakdown (too long)
}

type revResult struct {
	wall               sample
	fredSays           sample
	restores, replayed []int
	prof               profile // traced runs only
	profReps           int
	err                error
}

// scenario is a session brought to some moments (branches), and reverse
// commands measured from them.
type scenario struct {
	label   string
	bin     string
	prepare func(x *session, traced bool) error
	cases   []revCase
	lldb    bool // under lldb, not gdb (no traced pass)
}

// runScenario measures every case in an untraced session, then, unless
// -notrace, once more in a traced session for the breakdown.
func (b *bench) runScenario(sc scenario) []revResult {
	res := make([]revResult, len(sc.cases))
	b.scenarioPass(sc, false, res)
	if !*noTrace && !sc.lldb {
		b.scenarioPass(sc, true, res)
	}
	return res
}

func (b *bench) scenarioPass(sc scenario, traced bool, res []revResult) {
	var todo []int
	for i, c := range sc.cases {
		if res[i].err == nil && (!traced || !c.noTrace) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return
	}
	start := func() (*session, error) { return startSession(b.tmp, b.bins[sc.bin], traced) }
	if sc.lldb {
		start = func() (*session, error) {
			return startSessionOn(b.tmp, P.LLDB, []string{"lldb", b.bins[sc.bin]}, false)
		}
	}
	x, err := start()
	if err == nil {
		defer func() {
			if cerr := x.close(); cerr != nil {
				b.note("%s: %v", sc.label, cerr)
			}
		}()
		err = sc.prepare(x, traced)
	}
	if err != nil {
		if traced {
			b.note("%s: the traced run for the breakdown failed: %v", sc.label, err)
			return
		}
		for _, i := range todo {
			res[i].err = err
		}
		return
	}
	for _, i := range todo {
		c := sc.cases[i]
		if traced {
			c.reps = min(c.reps, 2)
		}
		r, err := b.runRev(x, c)
		switch {
		case traced && err != nil:
			b.note("%s: %s: the traced run for the breakdown failed: %v", sc.label, c.cmd, err)
		case traced:
			res[i].prof, res[i].profReps = r.prof, len(r.wall)
		default:
			res[i] = r
		}
		if se, ok := err.(*stoppedError); ok && se.killed {
			// The session is over.
			return
		}
	}
}

// runRev measures c in session x.
func (b *bench) runRev(x *session, c revCase) (revResult, error) {
	var r revResult
	want := regexp.MustCompile(c.want)
	for i := 0; i < c.reps; i++ {
		if _, _, err := x.doWithin("fred-switch "+c.base, 2*(*bound)); err != nil {
			r.err = err
			return r, err
		}
		out, took, err := x.doWithin(c.cmd, 2*(*bound))
		if *verbose {
			fmt.Printf("--- %s (%s)\n%s", c.cmd, c.measure, out)
		}
		if err == nil {
			var rl reverseLine
			if rl, err = parseReverse(out); err == nil && !want.MatchString(out) {
				err = fmt.Errorf("%s landed in the wrong place (want %s):\n%s", c.cmd, c.want, indent(tail(out, 5)))
			}
			if err == nil {
				r.wall = append(r.wall, took.Seconds())
				r.fredSays = append(r.fredSays, rl.took)
				r.restores = append(r.restores, rl.restores)
				r.replayed = append(r.replayed, rl.replayed)
				r.prof.merge(x.prof)
			}
		}
		if err != nil {
			r.err = err
			return r, err
		}
	}
	return r, nil
}

func counts(l []int) string {
	if len(l) == 0 {
		return "?"
	}
	lo, hi := l[0], l[0]
	for _, x := range l {
		lo, hi = min(lo, x), max(hi, x)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// revRow adds c's row to the table, and its breakdown to the details.
func (b *bench) revRow(sec string, c revCase, r revResult) {
	if se, ok := r.err.(*stoppedError); ok {
		b.add(row{section: sec, measure: c.measure, fred: c.fred, target: c.target,
			got: fmt.Sprintf("over %s (stopped)", secs(se.limit.Seconds())), verdict: "MISSES", comments: se.Error()})
		return
	}
	if r.err != nil {
		b.fail(sec, c.measure, c.target, r.err)
		return
	}
	v := ""
	if c.under > 0 {
		v = verdict(r.wall, c.under)
	}
	b.add(row{section: sec, measure: c.measure, fred: c.fred, target: c.target, got: r.wall.String(), verdict: v,
		comments: fmt.Sprintf("%s restores, %s replayed commands (fred's count); fred says %s",
			counts(r.restores), counts(r.replayed), secs(r.fredSays.median()))})
	if r.profReps > 0 {
		fmt.Fprintf(&b.details, "\nWhere the time of '%s' goes: %s (%s restores, %s replayed commands)\n",
			c.cmd, c.measure, counts(r.restores), counts(r.replayed))
		fmt.Fprintf(&b.details, "  traced, average of %d: %.3f s (untraced median %s):\n",
			r.profReps, r.prof.total.Seconds()/float64(r.profReps), secs(r.wall.median()))
		r.prof.write(&b.details, "    ", r.profReps)
	}
}

func (b *bench) reverseSmall() {
	const sec = "Reverse commands on a small program (steps.c: calls, a loop, recursion; skip -gfi ./*/*)"
	reps := 5
	if *quick {
		reps = 2
	}
	progress("reverse commands on steps.c")
	// b1: main:24 after `next` over `total += square(i)` (i=1);
	// b1p: main:22 after `next` over the printf line;
	// b2: square:9 (x=2), entered by `step`.
	sc := scenario{label: "steps.c", bin: "steps",
		prepare: func(x *session, _ bool) error {
			return x.must("skip -gfi ./*/*", "break main", "run",
				"next", "next", "next", "next", "next", "fred-branch b1",
				"next", "fred-branch b1p",
				"next", "step", "next", "fred-branch b2")
		},
		cases: []revCase{
			{measure: "reverse-step after `next` over a plain line", fred: "6.9 s (Firefox)", target: "under 0.3 s", under: 0.3,
				base: "b1p", cmd: "fred-reverse-step", want: `(?m)^24\t`},
			{measure: "reverse-step after `next` over a call", fred: "6.9 s (Firefox)", target: "under 0.3 s", under: 0.3,
				base: "b1", cmd: "fred-reverse-step", want: `square \(x=1\)[\s\S]*\n10\t`},
			{measure: "reverse-next over a call", fred: "-", target: "-",
				base: "b1", cmd: "fred-reverse-next", want: `(?m)^23\t`},
			{measure: "reverse-finish from a callee's 2nd line", fred: "-", target: "-",
				base: "b2", cmd: "fred-reverse-finish", want: `main \([\s\S]*\n23\t`},
		}}
	for i := range sc.cases {
		sc.cases[i].reps = reps
	}
	for i, r := range b.runScenario(sc) {
		b.revRow(sec, sc.cases[i], r)
	}
	// reverse-continue needs breakpoints that were hit: fact's recursion.
	rc := scenario{label: "steps.c, break fact", bin: "steps",
		prepare: func(x *session, _ bool) error {
			return x.must("skip -gfi ./*/*", "break fact", "run", "continue", "continue", "fred-branch c")
		},
		cases: []revCase{{measure: "reverse-continue to the previous breakpoint hit", fred: "-", target: "-",
			base: "c", cmd: "fred-reverse-continue", want: `fact \(n=4\)`, reps: reps}}}
	for i, r := range b.runScenario(rc) {
		b.revRow(sec, rc.cases[i], r)
	}
}

// loopPoint is one size of the long-history case.
type loopPoint struct {
	stmts   int // statements the `continue` covered (about 2 per iteration)
	cont    float64
	rs      revResult
	skipped string
}

// fredMaxWalk is how many statements fred's walk of `next`s over a
// `continue` covers at most (maxWalk, read from fred's source; 0 if not
// found).
func (b *bench) fredMaxWalk() int {
	re := regexp.MustCompile(`(?m)^\s*(?:const\s+|var\s+)?maxWalk\s*=\s*([0-9_]+)`)
	files, _ := filepath.Glob(filepath.Join(b.root, "fred", "*.go"))
	for _, f := range files {
		if m := re.FindStringSubmatch(readFile(f)); m != nil {
			n, _ := strconv.Atoi(strings.ReplaceAll(m[1], "_", ""))
			return n
		}
	}
	return 0
}

func (b *bench) reverseLong() {
	const sec = "Reverse commands after a long history (bench_loop.c: `continue` over a loop, then back)"
	// Up to 10^7: past a chunk of 8,192 turns fred jumps near the stop by
	// native runs (and past maxPassCount it could not count at all), so the
	// last sizes measure those jumps.
	sizes := []int{100, 1000, 10000, 100000, 1000000, 10000000}
	if *quick {
		sizes = []int{100, 1000}
	}
	var done []loopPoint
	// project is the time of a reverse-step over n statements, by a
	// least-squares line through the sizes measured (fixed cost plus a cost
	// per statement), or proportional from one.
	project := func(n int) (float64, string) {
		var ok []loopPoint
		for _, p := range done {
			if p.skipped == "" {
				ok = append(ok, p)
			}
		}
		if len(ok) == 0 {
			return 0, ""
		}
		last := ok[len(ok)-1]
		if fixed, slope, good := fitLine(ok); good {
			return fixed + slope*float64(n), fmt.Sprintf("by a line through the %d sizes measured", len(ok))
		}
		return last.rs.wall.median() * float64(n) / float64(last.stmts), "proportional to " + commas(last.stmts) + " statements"
	}
	measureAt := func(n int) {
		progress("reverse commands after continue over %d statements", n)
		p := b.loopCase(sec, n)
		done = append(done, p)
	}
	for _, n := range sizes {
		est, how := project(n)
		if est <= bound.Seconds() {
			measureAt(n)
			continue
		}
		// Too long: measure the largest round size that fits instead, for
		// one more point of the curve, and say what n would take.
		last := done[len(done)-1]
		if last.skipped == "" {
			for _, m := range []int{50000, 30000, 20000, 5000, 3000, 2000} {
				if m >= n || 2*m <= 3*last.stmts {
					continue
				}
				if e, _ := project(m); e <= 0.8*bound.Seconds() {
					measureAt(m)
					est, how = project(n)
					break
				}
			}
		}
		why := fmt.Sprintf("projected %.0f s (%s), over the %.0f s bound", est, how, bound.Seconds())
		if mw := b.fredMaxWalk(); mw > 0 && n+4 > mw {
			why += fmt.Sprintf("; fred would refuse anyway: its walk stops at %s statements (maxWalk)", commas(mw))
		}
		b.add(row{section: sec, measure: fmt.Sprintf("reverse-step after `continue` over %s statements", commas(n)),
			fred: "-", target: "under 0.3 s", got: "not run", comments: why})
		done = append(done, loopPoint{stmts: n, skipped: why})
	}
	// The growth curve.
	fmt.Fprintf(&b.details, "\nGrowth of one reverse-step with the length of the `continue` it goes back over (bench_loop.c):\n")
	fmt.Fprintf(&b.details, "  %10s  %9s  %9s  %9s  %12s  %s\n", "statements", "continue", "restores", "replayed", "reverse-step", "per statement covered")
	var ok []loopPoint
	for _, p := range done {
		if p.skipped != "" {
			fmt.Fprintf(&b.details, "  %10s  not run: %s\n", commas(p.stmts), p.skipped)
			continue
		}
		ok = append(ok, p)
		m := p.rs.wall.median()
		fmt.Fprintf(&b.details, "  %10s  %9s  %9s  %9s  %12s  %.2f ms\n", commas(p.stmts), secs(p.cont), counts(p.rs.restores), counts(p.rs.replayed),
			secs(m), 1000*m/float64(p.stmts))
	}
	if len(ok) >= 2 {
		var l []string
		for _, p := range ok {
			l = append(l, fmt.Sprintf("%s: %s", commas(p.stmts), secs(p.rs.wall.median())))
		}
		c := ok[len(ok)-1]
		b.note("reverse-step after a `continue`, by the statements the continue covered: %s (the last `continue` itself took %s; %s restores, %s replayed commands). Up to a chunk of 8,192 turns of the loop fred counts them, one debug trap each; beyond, it jumps close to the stop by native runs first.",
			strings.Join(l, ", "), secs(c.cont), counts(c.rs.restores), counts(c.rs.replayed))
	}
}

// fitLine fits time = fixed + slope*statements through the points by least
// squares; good is false with fewer than two points or a slope that is not
// positive.
func fitLine(ps []loopPoint) (fixed, slope float64, good bool) {
	if len(ps) < 2 {
		return 0, 0, false
	}
	var sx, sy, sxx, sxy float64
	for _, p := range ps {
		x, y := float64(p.stmts), p.rs.wall.median()
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	n := float64(len(ps))
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / d
	fixed = (sy - slope*sx) / n
	return fixed, slope, slope > 0
}

// loopCase measures one size of the long-history case.
func (b *bench) loopCase(sec string, n int) loopPoint {
	p := loopPoint{stmts: n}
	reps := 1
	if n <= 1000 {
		reps = 3
	}
	measure := fmt.Sprintf("reverse-step after `continue` over %s statements", commas(n))
	sc := scenario{label: fmt.Sprintf("bench_loop.c, %d statements", n), bin: "bench_loop",
		prepare: func(x *session, traced bool) error {
			// Two statements (lines 17 and 18) per iteration.
			if err := x.must("break main", "run "+strconv.Itoa(n/2), "break done"); err != nil {
				return err
			}
			_, took, err := x.do("continue")
			if err != nil {
				return err
			}
			if !traced {
				p.cont = took.Seconds()
			}
			return x.must("fred-branch top")
		},
		cases: []revCase{{measure: measure, fred: "-", target: "under 0.3 s", under: 0.3,
			base: "top", cmd: "fred-reverse-step", want: `(?m)^19\t`, reps: reps, noTrace: n > 1000}}}
	// The other reverse commands over the same stretch, at small sizes.
	if n <= 1000 {
		for _, o := range []revCase{
			{measure: "reverse-next", cmd: "fred-reverse-next", want: `(?m)^19\t`},
			{measure: "reverse-finish", cmd: "fred-reverse-finish", want: `(?m)^19\t`},
			{measure: "reverse-continue", cmd: "fred-reverse-continue", want: `(?m)^15\t`},
		} {
			o.measure = fmt.Sprintf("%s after `continue` over %s statements", o.measure, commas(n))
			o.fred, o.target, o.base, o.reps, o.noTrace = "-", "-", "top", 1, true
			sc.cases = append(sc.cases, o)
		}
	}
	res := b.runScenario(sc)
	for i, r := range res {
		b.revRow(sec, sc.cases[i], r)
	}
	p.rs = res[0]
	if p.rs.err != nil {
		p.skipped = "failed: " + firstLine(p.rs.err.Error())
	}
	return p
}

// reverseHistory: many small forward commands, as a person stepping
// through a loop, then reverse-step: the automatic snapshots should keep
// its cost flat.
func (b *bench) reverseHistory() {
	const sec = "Reverse commands after a long history (bench_loop.c: `continue` over a loop, then back)"
	steps := 300
	reps := 5
	if *quick {
		steps, reps = 100, 2
	}
	progress("%d nexts, then reverse-step", steps)
	var next sample
	auto := -1
	sc := scenario{label: "bench_loop.c, nexts by hand", bin: "bench_loop",
		prepare: func(x *session, traced bool) error {
			if err := x.must("break main", "run 100000"); err != nil {
				return err
			}
			for i := 0; i < steps; i++ {
				_, took, err := x.do("next")
				if err != nil {
					return err
				}
				if !traced {
					next = append(next, took.Seconds())
				}
			}
			if out, _, err := x.do("fred-list"); err == nil && !traced {
				auto = strings.Count(out, ", auto")
			}
			return x.must("fred-branch h")
		},
		// From main:15, `next`s go 16, 17, then 18 and 17 in turn: after an
		// even number the program is at 17, and the statement before is 18.
		cases: []revCase{{measure: fmt.Sprintf("reverse-step after %d `next`s by hand", steps), fred: "6.9 s (Firefox)",
			target: "under 0.3 s", under: 0.3, base: "h", cmd: "fred-reverse-step", want: `(?m)^18\t`, reps: reps}}}
	for i, r := range b.runScenario(sc) {
		b.revRow(sec, sc.cases[i], r)
	}
	if len(next) > 0 {
		fmt.Fprintf(&b.details, "\n%d `next`s by hand under fred: %s each; fred took %d automatic snapshots on the way (the slow ones).\n", len(next), next, auto)
	}
}

func (b *bench) notBuilt() {
	const sec = "Not measurable yet"
	have := map[string]bool{}
	for _, c := range fred.Commands() {
		have[c.Name] = true
	}
	watch, why := "not built yet", "fred-reverse-watch does not exist yet"
	if have["fred-reverse-watch"] {
		watch, why = "not measured", "fred-reverse-watch exists now; the DAG-cycle fixture and its bench are not written yet"
	}
	for _, r := range []row{
		{measure: "reverse-watch, DAG cycle N=34,546 / 421,576 edges", fred: "15.1 s", target: "under 3 s", got: watch, comments: why},
		{measure: "growth of that time from N to 8N", fred: "1.27x (19.1 s)", target: "at most 1.3x", got: watch},
		{measure: "expression evaluations per reverse-watch", fred: "about log2(N)", target: "about log2(N)", got: watch},
	} {
		r.section = sec
		b.add(r)
	}
}

// commas writes 100000 as 100,000.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
