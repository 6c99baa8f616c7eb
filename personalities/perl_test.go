package personalities

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The perl transcripts are recorded with the pdb ones: see pdb_test.go.

func perlScenarios() []inprocScenario {
	perl := func(name, note string, script string, args []string, cmds ...recCmd) inprocScenario {
		return inprocScenario{name: name, note: note, p: Perl,
			argv: append([]string{"perl", "-d", "FIX/" + script}, args...), cmds: cmds}
	}
	return []inprocScenario{
		perl("perl-steps", "stepping, a breakpoint on a sub, r, the end and R", "steps.pl", nil,
			recCmd{"where1", perlDB + "fred_where()", false},
			recCmd{"pid", perlDB + "fred_pid()", false},
			recCmd{"stop1", perlDB + "fred_stop()", false},
			recCmd{"bps0", perlDB + "fred_bps()", false},
			recCmd{"n", "n", false},
			recCmd{"b", "b square", false},
			recCmd{"bps1", perlDB + "fred_bps()", false},
			recCmd{"c", "c", false},
			recCmd{"stop-bp", perlDB + "fred_stop()", false},
			recCmd{"where-square", perlDB + "fred_where()", false},
			recCmd{"eval", Perl.EvalCmd("$x * 2 + 1"), false},
			recCmd{"eval-list", Perl.EvalCmd(`(1, undef, "a\nb")`), false},
			recCmd{"eval-err", Perl.EvalCmd("1 +"), false},
			recCmd{"eval-die", Perl.EvalCmd(`die "no\n"`), false},
			recCmd{"p", "p $x", false},
			recCmd{"n-sq", "n", false},
			recCmd{"r", "r", false},
			recCmd{"stop-r", perlDB + "fred_stop()", false},
			recCmd{"where-r", perlDB + "fred_where()", false},
			recCmd{"frame", perlDB + "fred_frame()", false},
			recCmd{"next-alias", "next", false},
			recCmd{"step-alias", "step", false},
			recCmd{"stop-stepped-bp", perlDB + "fred_stop()", false},
			recCmd{"frame-long", perlDB + "fred_frame()", false},
			recCmd{"T", "T", false},
			recCmd{"brk", perlDB + `fred_break("FIX/steps.pl:16")`, false},
			recCmd{"bps2", perlDB + "fred_bps()", false},
			recCmd{"disable", perlDB + `fred_enable("FIX/steps.pl:8", 0)`, false},
			recCmd{"bps3", perlDB + "fred_bps()", false},
			recCmd{"delete", perlDB + `fred_delete("FIX/steps.pl:16")`, false},
			recCmd{"bps4", perlDB + "fred_bps()", false},
			recCmd{"assign", "$x = 3", false},
			recCmd{"assign-err", "$x = ;", false},
			recCmd{"b-err", "b 3", false},
			recCmd{"echo", Perl.EchoCmd("\x1aFREDSYNC1\x1a"), false},
			recCmd{"B", "B *", false},
			recCmd{"c-end", "c", false},
			recCmd{"where-ended", perlDB + "fred_where()", false},
			recCmd{"n-ended", "n", false},
			recCmd{"R", "R", false},
			recCmd{"where-R", perlDB + "fred_where()", false},
		),
		perl("perl-crash", "the program dies", "crash.pl", nil,
			recCmd{"c", "c", false},
			recCmd{"where-ended", perlDB + "fred_where()", false},
		),
		perl("perl-exit", "exit 3", "crash.pl", []string{"3"},
			recCmd{"c", "c", false},
			recCmd{"where-ended", perlDB + "fred_where()", false},
		),
		perl("perl-interrupt", "Ctrl-C while the program runs", "spin.pl", nil,
			recCmd{"c", "c", true},
			recCmd{"where", perlDB + "fred_where()", false},
			recCmd{"stop", perlDB + "fred_stop()", false},
		),
	}
}

const perlFix = pdbFix

func TestPerlParseLocationAndDepth(t *testing.T) {
	for _, c := range []struct {
		name, label string
		want        Location
		depth       int
	}{
		{"perl-steps", "where1", Location{File: perlFix + "steps.pl", Line: 5, Function: "main::"}, 1},
		{"perl-steps", "where-square", Location{File: perlFix + "steps.pl", Line: 8, Function: "main::square"}, 2},
		{"perl-steps", "where-r", Location{File: perlFix + "steps.pl", Line: 21, Function: "main::"}, 1},
		{"perl-steps", "where-R", Location{File: perlFix + "steps.pl", Line: 5, Function: "main::"}, 1},
		{"perl-interrupt", "where", Location{File: perlFix + "spin.pl", Line: 0, Function: "main::"}, 1},
	} {
		out := inprocQuery(t, c.name, c.label, Perl.LocationCmd)
		got, err := Perl.ParseLocation(out)
		if err != nil {
			t.Errorf("%s %s: %v", c.name, c.label, err)
			continue
		}
		if c.want.Line == 0 {
			c.want.Line = got.Line
		}
		if got != c.want {
			t.Errorf("%s %s: location %+v, want %+v", c.name, c.label, got, c.want)
		}
		if d, err := Perl.ParseDepth(inprocQuery(t, c.name, c.label, Perl.DepthCmd)); err != nil || d != c.depth {
			t.Errorf("%s %s: depth %d (%v), want %d", c.name, c.label, d, err, c.depth)
		}
	}
	for _, c := range [][2]string{{"perl-steps", "where-ended"}, {"perl-crash", "where-ended"}, {"perl-exit", "where-ended"}} {
		if _, err := Perl.ParseLocation(inprocQuery(t, c[0], c[1], Perl.LocationCmd)); err != ErrNotRunning {
			t.Errorf("%s %s: %v, want ErrNotRunning", c[0], c[1], err)
		}
	}
	if pid, err := Perl.ParsePid(inprocQuery(t, "perl-steps", "pid", Perl.PidCmd)); err != nil || pid <= 1 {
		t.Errorf("pid %d, %v", pid, err)
	}
}

func TestPerlStops(t *testing.T) {
	for _, c := range []struct {
		label string
		stop  Stop
		why   string
	}{
		{"n", StopDone, "stop1"},
		{"c", StopBreakpoint, "stop-bp"},
		{"r", StopDone, "stop-r"},
		{"step-alias", StopBreakpoint, "stop-stepped-bp"},
		{"c-end", StopEnded, ""},
	} {
		out := inprocOut(t, "perl-steps", c.label)
		got := Perl.StopReason(out)
		if got == StopDone && c.why != "" {
			got = Perl.ParseStop(inprocQuery(t, "perl-steps", c.why, Perl.StopCmd))
		}
		if got != c.stop {
			t.Errorf("%s: stop %v, want %v:\n%s", c.label, got, c.stop, out)
		}
	}
	for _, c := range [][2]string{{"perl-crash", "c"}, {"perl-exit", "c"}} {
		if got := Perl.StopReason(inprocOut(t, c[0], c[1])); got != StopEnded || !Perl.Ended(inprocOut(t, c[0], c[1])) {
			t.Errorf("%s: %v, want the end", c[0], got)
		}
	}
	if got := Perl.ParseStop(inprocQuery(t, "perl-interrupt", "stop", Perl.StopCmd)); got != StopSignal {
		t.Errorf("Ctrl-C: %v", got)
	}
	if !Perl.NewRun(inprocOut(t, "perl-steps", "R")) || Perl.NewRun(inprocOut(t, "perl-steps", "c-end")) {
		t.Error("NewRun is wrong about R")
	}
	for _, c := range []struct {
		label   string
		refused bool
	}{
		{"n", false}, {"c", false}, {"assign", false}, {"n-ended", true}, {"b-err", true}, {"assign-err", true},
	} {
		if got := Perl.Refused(inprocOut(t, "perl-steps", c.label)); got != c.refused {
			t.Errorf("%s: refused %v, want %v: %q", c.label, got, c.refused, inprocOut(t, "perl-steps", c.label))
		}
	}
}

func TestPerlBreakpointsAndEval(t *testing.T) {
	if bps := Perl.ParseBreakpoints(inprocQuery(t, "perl-steps", "bps0", Perl.BreakpointsCmd)); len(bps) != 0 {
		t.Errorf("bps0: %+v", bps)
	}
	w8, w16 := perlFix+"steps.pl:8", perlFix+"steps.pl:16"
	want := []Bp{{Num: w8, Where: w8, Enabled: true}}
	if got := Perl.ParseBreakpoints(inprocOut(t, "perl-steps", "bps1")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bps1: %+v, want %+v", got, want)
	}
	if n := Perl.ParseNewBreakpoint(inprocOut(t, "perl-steps", "brk")); n != w16 {
		t.Errorf("new breakpoint %q", n)
	}
	if got := strings.ReplaceAll(Perl.BreakAt, "%q", strconv.Quote(w16)); got != loadTranscript(t, "inproc/perl-steps").step(t, "brk").cmd {
		t.Errorf("BreakAt gives %s", got)
	}
	want = append(want, Bp{Num: w16, Where: w16, Enabled: true})
	if got := Perl.ParseBreakpoints(inprocOut(t, "perl-steps", "bps2")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bps2: %+v, want %+v", got, want)
	}
	if got := fmt.Sprintf(Perl.Disable, w8); got != loadTranscript(t, "inproc/perl-steps").step(t, "disable").cmd {
		t.Errorf("Disable gives %s", got)
	}
	want[0].Enabled = false
	if got := Perl.ParseBreakpoints(inprocOut(t, "perl-steps", "bps3")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bps3: %+v, want %+v", got, want)
	}
	if got := Perl.ParseBreakpoints(inprocOut(t, "perl-steps", "bps4")); fmt.Sprint(got) != fmt.Sprint(want[:1]) {
		t.Errorf("bps4: %+v, want %+v", got, want[:1])
	}
	for _, c := range []struct{ label, want string }{
		{"eval", "1"},
		{"eval-list", `1,undef,a\nb`},
		{"eval-err", `(dies: syntax error at (eval)[/usr/share/perl/5.36/perl5db.pl:742] line 2, near "+)")`},
		{"eval-die", "(dies: no)"},
	} {
		if got, err := Perl.ParseEval(inprocOut(t, "perl-steps", c.label)); err != nil || !strings.HasPrefix(got, strings.Split(c.want, "[")[0]) {
			t.Errorf("%s: %q %v, want %q", c.label, got, err, c.want)
		}
	}
	if got := Perl.EchoCmd("\x1aFREDSYNC1\x1a"); got != loadTranscript(t, "inproc/perl-steps").step(t, "echo").cmd {
		t.Errorf("EchoCmd: %q", got)
	}
	if out := inprocOut(t, "perl-steps", "echo"); !strings.Contains(out, "\x1aFREDSYNC1\x1a") {
		t.Errorf("echo: %q", out)
	}
	// fred's queries print no extra empty line.
	if out := inprocOut(t, "perl-steps", "where1"); strings.Count(out, "\n") != 1 {
		t.Errorf("where1: %q", out)
	}
	if out := inprocOut(t, "perl-steps", "frame-long"); !regexp.MustCompile(`^main::square\(.*steps.pl:8\):\r\n8:\t    my \(\$x\) = @_;\r\n$`).MatchString(out) {
		t.Errorf("frame-long: %q", out)
	}
	if out := inprocOut(t, "perl-steps", "frame"); !regexp.MustCompile(`^main::\(.*steps.pl:21\):\r\n21:\t    print "i=\$i total=\$total\\n";\r\n$`).MatchString(out) {
		t.Errorf("frame: %q", out)
	}
}

func TestPerlClassify(t *testing.T) {
	for _, c := range []struct {
		line string
		kind Kind
		op   string
	}{
		{"n", Forward, OpNext},
		{"next", Forward, OpNext},
		{"s", Forward, OpStep},
		{"c", Forward, OpContinue},
		{"c 20", Forward, OpContinue},
		{"r", Forward, OpFinish},
		{"R", Forward, OpRun},
		{"b 8", Breakpoint, "b"},
		{"b square $x > 1", Breakpoint, "b"},
		{"B *", Breakpoint, "B"},
		{"w $total", Breakpoint, "w"},
		{"a 9 print 1", Breakpoint, "a"},
		{"p $x", Inspect, "p"},
		{"p$x", Inspect, "p"},
		{"x \\%h", Inspect, "x"},
		{"T", Inspect, "T"},
		{"l 5", Inspect, "l"},
		{"v", Inspect, "v"},
		{".", Inspect, "."},
		{"q", Quit, "q"},
		{"$x = 3", Mutate, "$x = 3"},
		{"$h{a}++", Mutate, "$h{a}++"},
		{"push @a, 1", Mutate, "push @a, 1"},
		{"p $x = 3", Mutate, "p"},
		{"square(3)", Mutate, "square(3)"},
		{"$s =~ s/a/b/", Mutate, "$s =~ s/a/b/"},
		{"$x == 3", Other, "$x == 3"},
		{"print $x", Other, "print $x"},
		{"p square(2)", Inspect, "p"},
		{"square(2)", Mutate, "square(2)"},
		{"length($s) > 2", Other, "length($s) > 2"},
		{"$h{a} => 1", Other, "$h{a} => 1"},
	} {
		got := Perl.Classify(c.line)
		if got.Kind != c.kind || got.Op != c.op {
			t.Errorf("%q: %v %q, want %v %q", c.line, got.Kind, got.Op, c.kind, c.op)
		}
	}
	if r := Perl.Repeat(Perl.Classify("n")); r != "n" {
		t.Errorf("empty line after n repeats %q", r)
	}
	if r := Perl.Repeat(Perl.Classify("p $x")); r != "" {
		t.Errorf("empty line after p repeats %q", r)
	}
}

func TestPerlArgv(t *testing.T) {
	m := "\x1a\x1afred-x\x1a\x1a"
	src, err := builtinScript("perl_boot.pl")
	if err != nil {
		t.Fatal(err)
	}
	perlBoot := perlBootLine(src)
	for _, c := range []struct{ in, want []string }{
		{[]string{"perl", "-d", "p.pl", "a"}, []string{"env", "PERL5DB=" + perlBoot, "FRED_PERLDB_PROMPT=" + m, "perl", "-d", "p.pl", "a"}},
		{[]string{"/usr/bin/perl", "-w", "p.pl"}, []string{"env", "PERL5DB=" + perlBoot, "FRED_PERLDB_PROMPT=" + m, "/usr/bin/perl", "-d", "-w", "p.pl"}},
		{[]string{"perl", "-Ilib", "-d", "p.pl", "-d"}, []string{"env", "PERL5DB=" + perlBoot, "FRED_PERLDB_PROMPT=" + m, "perl", "-Ilib", "-d", "p.pl", "-d"}},
	} {
		if got := Perl.Argv(c.in, m, "/dev/pts/9"); fmt.Sprintf("%q", got) != fmt.Sprintf("%q", c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	if strings.Contains(perlBoot, "\n") {
		t.Error("PERL5DB must be one line: perl pastes it before the program")
	}
	if p, err := ForArgv([]string{"/usr/bin/perl"}); err != nil || p != Perl {
		t.Errorf("perl: %v %v", p, err)
	}
}
