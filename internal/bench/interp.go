package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	P "github.com/fred-debugger/fred/personalities"
)

// The reverse-watch benchmark for Python and Perl, beside the DAG one for
// gdb so that the languages can be compared: testdata/bench_watch.{py,pl} run a loop of N iterations
// whose invariant the iteration at 90% breaks; from a breakpoint on the
// final print, fred-reverse-watch finds that iteration. pdb and perl -d
// have no native probes: the search counts their `next`s.

const interpSection = "Reverse-watch in Python and Perl (bench_watch.py/.pl: a loop whose invariant breaks at 90%)"

type interpLang struct {
	name, file string
	pers       *P.Personality
	argv       func(prog, n string) []string
	native     []string // the interpreter alone
	brk, watch string
	iter       string // prints the loop counter where fred lands
}

var interpLangs = []interpLang{
	{name: "Python (pdb)", file: "bench_watch.py", pers: P.PDB,
		argv:   func(prog, n string) []string { return []string{"python3", "-m", "pdb", prog, n} },
		native: []string{"python3"}, brk: "break 21", watch: "fred-reverse-watch total >= 0", iter: "p i"},
	{name: "Perl (perl -d)", file: "bench_watch.pl", pers: P.Perl,
		argv:   func(prog, n string) []string { return []string{"perl", "-d", prog, n} },
		native: []string{"perl"}, brk: "b 21", watch: "fred-reverse-watch $total >= 0", iter: "p $i"},
}

var interpBadRe = regexp.MustCompile(`bad=(\d+)`)

func (b *bench) interpWatch() {
	sizes := []int{1000, 4000, 16000}
	if *quick {
		sizes = sizes[:2]
	}
	for _, l := range interpLangs {
		prog := filepath.Join(b.root, "testdata", l.file)
		fmt.Fprintf(&b.details, "\n%s, reverse-watch by loop size:\n  %9s  %10s  %13s  %s\n", l.name, "iterations", "native", "reverse-watch", "fred's counts")
		for _, n := range sizes {
			measure := fmt.Sprintf("%s: reverse-watch over %s iterations", l.name, commas(n))
			progress("%s over %s iterations", l.watch, commas(n))
			nat, bad, err := b.interpNative(l, prog, n)
			if err != nil {
				b.fail(interpSection, measure, "-", err)
				continue
			}
			took, counts, err := b.interpCase(l, prog, n, bad)
			if err != nil {
				b.fail(interpSection, measure, "-", err)
				continue
			}
			b.add(row{section: interpSection, measure: measure, fred: "-", target: "-", got: secs(took) + " (n=1)",
				comments: fmt.Sprintf("%s; native run %s; landed in iteration %s, checked", counts, secs(nat), commas(bad))})
			fmt.Fprintf(&b.details, "  %9s  %10s  %13s  %s\n", commas(n), secs(nat), secs(took), counts)
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

// interpCase runs one reverse-watch and checks the landing.
func (b *bench) interpCase(l interpLang, prog string, n, bad int) (float64, string, error) {
	x, err := startSessionOn(b.tmp, l.pers, l.argv(prog, strconv.Itoa(n)), false)
	if err != nil {
		return 0, "", err
	}
	defer func() {
		if cerr := x.close(); cerr != nil {
			b.note("%s, %d iterations: %v", l.name, n, cerr)
		}
	}()
	if err := x.must(l.brk); err != nil {
		return 0, "", err
	}
	if _, _, err := x.doWithin(continueCmd(l.pers), 2*(*bound)); err != nil {
		return 0, "", err
	}
	out, took, err := x.doWithin(l.watch, 2*(*bound))
	if err != nil {
		return 0, "", err
	}
	m := watchRe.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "here; the next step makes it") {
		return 0, "", fmt.Errorf("%s did not land:\n%s", l.watch, indent(tail(out, 5)))
	}
	o, _, err := x.do(l.iter)
	if err != nil {
		return 0, "", err
	}
	if !regexp.MustCompile(`(?m)^` + strconv.Itoa(bad) + `\s*$`).MatchString(o) {
		return 0, "", fmt.Errorf("%s landed in another iteration: '%s' says\n%s (want %d)", l.watch, l.iter, indent(tail(o, 3)), bad)
	}
	return took.Seconds(), m[2], nil
}

// continueCmd is the debugger's own continue.
func continueCmd(p *P.Personality) string {
	if p == P.PDB {
		return "continue"
	}
	return "c"
}
