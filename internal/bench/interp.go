package main

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	P "github.com/fred-debugger/fred/personalities"
)

// The long-stretch benchmark for Python and Perl, beside the gdb ones so
// that the languages can be compared: testdata/bench_watch.{py,pl} run a
// loop whose invariant the iteration at 90% breaks. From a breakpoint on
// the final print (reached by the debugger's own continue, the baseline),
// fred-reverse-step right after it, then fred-reverse-watch finds that
// iteration. Both divide the continue into steps counted in the program
// (fred/steps.go).

const interpSection = "Long stretches in Python and Perl (bench_watch.py/.pl: a loop whose invariant breaks at 90%)"

type interpLang struct {
	name, file string
	pers       *P.Personality
	argv       func(prog, n string) []string
	native     []string // the interpreter alone
	brk, watch string
	iter       string // prints the loop counter where fred lands
	perIter    int    // the debugger's steps an iteration
	back       string // where reverse-step after the continue lands
}

var interpLangs = []interpLang{
	{name: "Python (pdb)", file: "bench_watch.py", pers: P.PDB,
		argv:   func(prog, n string) []string { return []string{"python3", "-m", "pdb", prog, n} },
		native: []string{"python3"}, brk: "break 21", watch: "fred-reverse-watch total >= 0", iter: "p i",
		perIter: 7, back: `\(19\)<module>\(\)`},
	{name: "Perl (perl -d)", file: "bench_watch.pl", pers: P.Perl,
		argv:   func(prog, n string) []string { return []string{"perl", "-d", prog, n} },
		native: []string{"perl"}, brk: "b 21", watch: "fred-reverse-watch $total >= 0", iter: "p $i",
		perIter: 5, back: `bench_watch.pl:15\)`},
}

var interpBadRe = regexp.MustCompile(`bad=(\d+)`)

func (b *bench) interpWatch() {
	sizes := []int{100000, 1000000, 10000000} // statements
	if *quick {
		sizes = sizes[:2]
	}
	for _, l := range interpLangs {
		prog := filepath.Join(b.root, "testdata", l.file)
		fmt.Fprintf(&b.details, "\n%s, by statements run:\n  %10s  %8s  %9s  %13s  %13s  %s\n", l.name, "statements", "native", "continue", "reverse-step", "reverse-watch", "fred's counts")
		for _, stmts := range sizes {
			n := stmts / l.perIter
			measure := fmt.Sprintf("%s: %s statements", l.name, commas(stmts))
			progress("%s over %s statements", l.watch, commas(stmts))
			nat, bad, err := b.interpNative(l, prog, n)
			if err != nil {
				b.fail(interpSection, measure, "-", err)
				continue
			}
			c, err := b.interpCase(l, prog, n, bad)
			if err != nil {
				b.fail(interpSection, measure, "-", err)
				continue
			}
			evals := parseCounts(c.counts)["evaluations"]
			maxEvals := int(math.Log2(float64(stmts))) + 10
			b.add(row{section: interpSection, measure: measure + ", reverse-watch", fred: "-",
				target: fmt.Sprintf("within 3x the continue (%s)", secs(3*c.cont)), got: secs(c.watch) + " (n=1)",
				verdict:  verdict(sample{c.watch}, 3*c.cont),
				comments: fmt.Sprintf("%s; program alone %s; landed in iteration %s, checked", c.counts, secs(nat), commas(bad))})
			v := "meets"
			if evals > maxEvals || evals == 0 {
				v = "MISSES"
			}
			b.add(row{section: interpSection, measure: measure + ", evaluations", fred: "-",
				target: fmt.Sprintf("at most log2(statements)+10 = %d", maxEvals), got: strconv.Itoa(evals), verdict: v})
			b.add(row{section: interpSection, measure: measure + ", reverse-step after the continue", fred: "-",
				target: "under 1 s", got: secs(c.step) + " (n=1)", verdict: verdict(sample{c.step}, 1),
				comments: "the last statement before the stop, checked by location"})
			fmt.Fprintf(&b.details, "  %10s  %8s  %9s  %13s  %13s  %s\n", commas(stmts), secs(nat), secs(c.cont), secs(c.step), secs(c.watch), c.counts)
		}
	}
}

// interpNative runs the program without a debugger: its time, and the
// iteration that breaks the invariant.
func (b *bench) interpNative(l interpLang, prog string, n int) (float64, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), *bound)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, l.native[0], prog, strconv.Itoa(n)).CombinedOutput()
	took := time.Since(start).Seconds()
	if err != nil {
		return 0, 0, fmt.Errorf("%s %s %d: %v\n%s", l.native[0], prog, n, err, indent(tail(string(out), 5)))
	}
	m := interpBadRe.FindStringSubmatch(string(out))
	if m == nil {
		return 0, 0, fmt.Errorf("no 'bad=' in the output of %s:\n%s", prog, indent(tail(string(out), 5)))
	}
	bad, _ := strconv.Atoi(m[1])
	return took, bad, nil
}

// interpTimes are one case's figures, in seconds.
type interpTimes struct {
	cont, step, watch float64
	counts            string
}

// interpCase runs the continue, reverse-step and reverse-watch, and
// checks the landings.
func (b *bench) interpCase(l interpLang, prog string, n, bad int) (interpTimes, error) {
	var t interpTimes
	x, err := startSessionOn(b.tmp, l.pers, l.argv(prog, strconv.Itoa(n)), false)
	if err != nil {
		return t, err
	}
	defer func() {
		if cerr := x.close(); cerr != nil {
			b.note("%s, %d iterations: %v", l.name, n, cerr)
		}
	}()
	if err := x.must(l.brk); err != nil {
		return t, err
	}
	_, took, err := x.doWithin(continueCmd(l.pers), 2*(*bound))
	if err != nil {
		return t, err
	}
	t.cont = took.Seconds()
	out, took, err := x.doWithin("fred-reverse-step", 2*(*bound))
	if err != nil {
		return t, err
	}
	if !regexp.MustCompile(l.back).MatchString(out) {
		return t, fmt.Errorf("fred-reverse-step after the continue landed elsewhere:\n%s", indent(tail(out, 5)))
	}
	t.step = took.Seconds()
	if _, _, err := x.doWithin(continueCmd(l.pers), 2*(*bound)); err != nil {
		return t, err
	}
	out, took, err = x.doWithin(l.watch, 2*(*bound))
	if err != nil {
		return t, err
	}
	m := watchRe.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "here; the next step makes it") {
		return t, fmt.Errorf("%s did not land:\n%s", l.watch, indent(tail(out, 5)))
	}
	o, _, err := x.do(l.iter)
	if err != nil {
		return t, err
	}
	if !regexp.MustCompile(`(?m)^` + strconv.Itoa(bad) + `\s*$`).MatchString(o) {
		return t, fmt.Errorf("%s landed in another iteration: '%s' says\n%s (want %d)", l.watch, l.iter, indent(tail(o, 3)), bad)
	}
	t.watch, t.counts = took.Seconds(), m[2]+"; peak resident memory "+mb(x.peak)
	return t, nil
}

// continueCmd is the debugger's own continue.
func continueCmd(p *P.Personality) string {
	if p == P.PDB {
		return "continue"
	}
	return "c"
}
