package personalities

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Patterns are Perl/Python-style: lookarounds and named groups work, and
// byte offsets come out right after multibyte text.
func TestPatternDialect(t *testing.T) {
	p := MustPattern(`(?m)^@fred where (?<pc>\d+)\t(?<file>[^\t\r]*)(?=\r?$)`)
	got := p.Named("noise\n@fred where 42\t/src/ü.c\r\n")
	if want := map[string]string{"pc": "42", "file": "/src/ü.c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("named groups: %v, want %v", got, want)
	}
	if n := p.GroupNames(); !reflect.DeepEqual(n, []string{"pc", "file"}) {
		t.Fatalf("group names %v", n)
	}
	prompt := MustPattern(`\(lldb\) $`)
	s := "é (lldb) "
	if loc := prompt.FindStringIndex(s); loc == nil || loc[0] != len("é ") || loc[1] != len(s) {
		t.Fatalf("FindStringIndex(%q) = %v", s, loc)
	}
	if MustPattern(`foo(?!bar)`).MatchString("foobar") {
		t.Fatalf("a negative lookahead matched")
	}
	all := MustPattern(`(?m)^@fred bp (\d+) (.*)$`).FindAllStringSubmatch("@fred bp 1 a.c:3\n@fred bp 2 main\n")
	if len(all) != 2 || all[1][1] != "2" || all[1][2] != "main" {
		t.Fatalf("FindAllStringSubmatch: %q", all)
	}
	if _, err := CompilePattern(`(?<open`); err == nil {
		t.Fatalf("a broken pattern compiled")
	}
	// Either engine, one meaning: $ is the end of the text, \d an ASCII
	// digit, (?P<name>) a named group.
	if MustPattern(`(?<=x)3$`).MatchString("x3\n") || !MustPattern(`(?<=x)3$`).MatchString("x3") {
		t.Fatalf("regexp2's $ is not Go's")
	}
	if MustPattern(`(?<=x)\d`).MatchString("x\u0663") {
		t.Fatalf("regexp2's \\d took an Arabic-Indic digit")
	}
	if g := MustPattern(`(?P<n>\d+)(?=;)`).Named("12;"); g["n"] != "12" {
		t.Fatalf("(?P<n>) in regexp2: %v", g)
	}
}

// A pattern that backtracks exponentially on some output gives up at its
// deadline: no match, and fred goes on.
func TestPatternTimesOut(t *testing.T) {
	p := MustPattern(`^(?=a)(a+)+$`) // a lookahead: regexp2's
	start := time.Now()
	if p.MatchString(strings.Repeat("a", 40) + "!") {
		t.Fatalf("matched")
	}
	if d := time.Since(start); d > 100*MatchTimeout {
		t.Fatalf("the match ran %v, past its deadline of %v", d, MatchTimeout)
	}
}
