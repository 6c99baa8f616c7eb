package fred

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/internal/proc"

	"github.com/fred-debugger/fred/fred/history"
	P "github.com/fred-debugger/fred/personalities"
)

// throughProbe says whether a history goes through a moment the program
// left during the person's continue (probes.go).
func (ts *tsession) throughProbe(steps []history.Step) bool {
	for i := range steps {
		if p := ts.probeOf(steps[:i+1]); p != nil && p.person {
			return true
		}
	}
	return false
}

// A reverse-step right after a long continue under pdb and perl -d counts
// from the latest copy the program left while it ran, not from before the
// continue, and lands where a count of the whole continue lands; so do a
// reverse-step from that copy's own moment (it needs the copy's place in
// the continue) and a reverse-watch over a history that goes through it.
// With fork copies alone, and beside CRIU ("auto"); with CRIU alone the
// program leaves none (TestPDBLongContinue covers that).
func TestReverseStepFromAProbe(t *testing.T) {
	langs := []probeCase{
		{name: "pdb", p: P.PDB, n: longIters, argv: []string{"python3", "-m", "pdb", script("bench_watch.py")},
			brk: `Breakpoint 1`, stop: `\(21\)<module>\(\)`, step: "step",
			last:  `\(19\)<module>\(\)\r?\n-> for i in range\(n\):`,
			watch: "total >= 0", landing: `\(16\)update\(\)\r?\n-> total \+= v`,
			iTotal: `"%d %d" % (i, total)`, landed: `"%d %s" % (i, total >= 0)`, good: "True", total: "total"},
		// 5 statements an iteration; the last iteration adds 0, so the
		// statement before the stop (its add) sees the final total.
		{name: "perl", p: P.Perl, n: longIters * 2, argv: []string{"perl", "-d", script("bench_watch.pl")},
			brk: `^$`, stop: `bench_watch.pl:21\):`, step: "s",
			last:  `bench_watch.pl:15\):\r?\n15:\s+\$total \+= \$v;`,
			watch: "$total >= 0", landing: `bench_watch.pl:15\):\r?\n15:\s+\$total \+= \$v;`,
			iTotal: `"$i $total"`, landed: `"$i " . ($total >= 0 ? "ok" : "broken")`, good: "ok", total: "$total"},
	}
	for _, l := range langs {
		t.Run(l.name, func(t *testing.T) {
			for _, backend := range []string{"fork", "auto"} {
				t.Run(backend, func(t *testing.T) {
					ts, _ := inprocSession(t, l.p, append(l.argv, strconv.Itoa(l.n)), backend)
					ts.out.take() // the debugger's greeting
					l.run(t, ts)
				})
			}
		})
	}
}

// probeCase is one debugger's fixture, commands and answers.
type probeCase struct {
	name                string
	p                   *P.Personality
	n                   int
	argv                []string
	brk, stop, step     string
	last, watch         string
	landing, iTotal     string
	landed, good, total string
}

// value is ts.value without pdb's quotes around a string.
func (l probeCase) value(ts *tsession, expr string) string {
	return strings.Trim(ts.value(expr), "'")
}

func (l probeCase) run(t *testing.T, ts *tsession) {
	ts.must("b 21", l.brk)
	ts.must("c", l.stop)
	final := strconv.Itoa(l.n-1) + " " + l.value(ts, l.total)
	ts.must("fred-reverse-step", l.last)
	if !ts.throughProbe(ts.Timeline.Steps()) {
		t.Fatalf("the reverse-step did not count from a probe:\n%s", ts.do("fred-history"))
	}
	// The last statement before the stop is in the last iteration: i and
	// total as at the stop.
	if v := l.value(ts, l.iTotal); v != final {
		t.Fatalf("after reverse-step: i total = %s, want %s", v, final)
	}
	// From a probe's own moment: one step back, then one forward again.
	probe := 0
	for _, id := range ts.order {
		if p := ts.probeOf(ts.snaps[id].Steps); p != nil && p.person {
			probe = id
		}
	}
	ts.must("fred-restart "+strconv.Itoa(probe), ``)
	at, here := ts.Timeline.Now().At, l.value(ts, l.iTotal)
	ts.must("fred-reverse-step", ``)
	if history.IsPrefix(ts.snaps[probe].Steps, ts.Timeline.Steps()) {
		t.Fatalf("reverse-step from probe %d's moment stands past it:\n%s", probe, ts.do("fred-history"))
	}
	ts.must(l.step, ``)
	if now, v := ts.Timeline.Now().At, l.value(ts, l.iTotal); now != at || v != here {
		t.Fatalf("reverse-step from probe %d then a step: at %v with %s, want %v with %s", probe, now, v, at, here)
	}
	// A reverse-watch from the stop, over a history through the probe.
	ts.must("c", l.stop)
	out := ts.must("fred-reverse-watch "+l.watch, l.landing)
	if !regexp.MustCompile(`the next step makes it`).MatchString(out) {
		t.Fatalf("reverse-watch:\n%s", out)
	}
	if v, want := l.value(ts, l.landed), strconv.Itoa(l.n*9/10)+" "+l.good; v != want {
		t.Fatalf("reverse-watch landed with %s, want %s", v, want)
	}
}

// The program's probes end before anything snapshots it: a continue long
// enough for an automatic snapshot after it, two more, then a reverse-step
// that replays the second from that snapshot. A snapshot that kept the
// probe settings armed them again in the replay, which killed the copies
// fred kept. Every probe fred keeps has its copy waiting, and fred leaves
// no child a zombie.
func TestProbesOutliveReplays(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "three.py")
	src := "import sys\nn = int(sys.argv[1])\nt = 0\nfor i in range(n):\n    t += i % 7\na = 1\nfor i in range(n // 4):\n    t += i % 5\nb = 2\nc = 3\nprint(t)\n"
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ts, _ := inprocSession(t, P.PDB, []string{"python3", "-m", "pdb", prog, "1500000"}, "fork")
	for _, b := range []string{"b 6", "b 9", "b 10"} {
		ts.must(b, `Breakpoint`)
	}
	ts.must("c", `\(6\)<module>\(\)`)
	ts.must("c", `\(9\)<module>\(\)`)
	ts.must("c", `\(10\)<module>\(\)`)
	ts.must("fred-reverse-step", `\(9\)<module>\(\)`)
	kept := 0
	for _, id := range ts.order {
		sn := ts.snaps[id]
		if p := ts.probeOf(sn.Steps); p != nil && p.person {
			kept++
			if st, err := ckpt.ProcState(sn.Pid); err != nil || st == 'Z' {
				t.Errorf("probe snapshot %d: its copy %d is gone (%c, %v)", id, sn.Pid, st, err)
			}
		}
	}
	if kept == 0 {
		t.Fatalf("no probe kept:\n%s", ts.do("fred-list"))
	}
	for _, pid := range proc.Children(os.Getpid()) {
		if st, err := ckpt.ProcState(pid); err == nil && st == 'Z' {
			t.Errorf("child %d is a zombie", pid)
		}
	}
}

// An interval timer outlives exec: a program that execs while the
// person's continue runs must not die of the probes' timer.
func TestProbesAndExec(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, file, src string
		p               *P.Personality
		argv            []string
	}{
		{"pdb", "ex.py", "import os\nt = 0\nfor i in range(3000000):\n    t += i % 7\nos.execv('/bin/sh', ['sh', '-c', 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo exec-done'])\n",
			P.PDB, []string{"python3", "-m", "pdb"}},
		{"perl", "ex.pl", "my $t = 0;\nfor my $i (0 .. 1500000) { $t += $i % 7 }\nexec('/bin/sh', '-c', 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo exec-done');\n",
			P.Perl, []string{"perl", "-d"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog := filepath.Join(dir, c.file)
			if err := os.WriteFile(prog, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			ts, _ := inprocSession(t, c.p, append(c.argv, prog), "fork")
			ts.out.take()
			// The program the debugger becomes ends the session.
			if err := ts.Exec("c"); err != nil && !errors.Is(err, ErrSessionOver) {
				t.Fatal(err)
			}
			out := ts.out.take()
			for i := 0; i < 20 && !strings.Contains(out, "exec-done") && !strings.Contains(out, "Profiling"); i++ {
				time.Sleep(100 * time.Millisecond)
				out += ts.out.take()
			}
			if !strings.Contains(out, "exec-done") {
				t.Fatalf("the program exec'd during the continue did not finish:\n%s", out)
			}
		})
	}
}
