package main

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Reverse-watch from an uninformative start (issue 18): in accounts.c the
// invariant total() == 10000 is false at main's first line (no account
// is open yet), true for most of the run, and false from one late
// statement on. Asked from the program's start, fred finds a moment with
// the other value by probing the history; given a good --from (a snapshot
// once the accounts are open) it needs none. The difference in
// evaluations is what the uninformative start costs.

const uninformedSection = "Reverse-watch from an uninformative start (accounts.c; fred-reverse-watch total() == 10000)"

func (b *bench) uninformedStart() {
	sec := uninformedSection
	bin, err := b.binary("accounts")
	if err != nil {
		b.fail(sec, "compile testdata/accounts.c", "-", err)
		return
	}
	src := filepath.Join(b.root, "testdata", "accounts.c")
	end := sourceLine(src, "/* LINE:end */")
	opened := sourceLine(src, "for (i = 0; i < 5000; i++)")
	progress("reverse-watch from the program's start and from a good --from (accounts.c)")
	from, fromOut, err := b.watchEvals(bin, []string{fmt.Sprintf("break %d", opened), "run", "fred-checkpoint", fmt.Sprintf("break %d", end), "continue"}, "fred-reverse-watch --from 2 total() == 10000")
	if err != nil {
		b.fail(sec, "evaluations with --from at the accounts' opening", "-", err)
		return
	}
	bare, bareOut, err := b.watchEvals(bin, []string{fmt.Sprintf("break %d", end), "run"}, "fred-reverse-watch total() == 10000")
	if err != nil {
		b.fail(sec, "evaluations from the program's start", "-", err)
		return
	}
	if lineOf(bareOut) != lineOf(fromOut) {
		b.fail(sec, "evaluations from the program's start", "-", fmt.Errorf("the two searches landed on different lines (%d, %d):\n%s", lineOf(bareOut), lineOf(fromOut), indent(tail(bareOut, 4))))
		return
	}
	b.add(row{section: sec, measure: "evaluations, --from a snapshot once the accounts are open", fred: "-", target: "-", got: strconv.Itoa(from),
		comments: fmt.Sprintf("landed at line %d, as the other", lineOf(fromOut))})
	extra := bare - from
	v := "MISSES"
	if extra <= 8 {
		v = "meets"
	}
	b.add(row{section: sec, measure: "more evaluations from the program's start (no --from)", fred: "-", target: "at most 8", got: strconv.Itoa(extra), verdict: v,
		comments: fmt.Sprintf("%d evaluations in all; the expression is false at the start and now, true in between", bare)})
}

// watchEvals runs setup then watch in a fresh session and returns the
// evaluations fred reports, and the watch's output.
func (b *bench) watchEvals(bin string, setup []string, watch string) (int, string, error) {
	x, err := startSession(b.tmp, bin, false)
	if err != nil {
		return 0, "", err
	}
	defer func() {
		if cerr := x.close(); cerr != nil {
			b.note("uninformative start: %v", cerr)
		}
	}()
	if err := x.must(setup...); err != nil {
		return 0, "", err
	}
	out, _, err := x.doWithin(watch, 2*(*bound))
	if err != nil {
		return 0, out, err
	}
	m := watchRe.FindStringSubmatch(out)
	if m == nil {
		return 0, out, fmt.Errorf("no \"'fred-reverse-watch' took\" line in:\n%s", indent(tail(out, 5)))
	}
	if n, ok := parseCounts(m[2])["evaluations"]; ok {
		return n, out, nil
	}
	return 0, out, fmt.Errorf("no evaluation count in %q", m[0])
}
