package personalities

import (
	"fmt"
	"regexp"
	"time"

	"github.com/dlclark/regexp2"
)

// Pattern is a personality's regular expression, in the dialect people
// write in their debuggers' own tooling (Perl's and Python's: lookarounds,
// named groups (?<name>...) and (?P<name>...), lazy quantifiers). One that
// Go's regexp takes is matched by it, in linear time; one that needs more
// (a lookaround, a backreference) by regexp2, in its RE2 mode, so that
// $, \d, \s and \w mean what they mean in the other. A backtracking engine
// can take exponential time on a bad pattern and an unlucky output, so
// each of regexp2's matches has a deadline: one that runs out is no match,
// and fred goes on. Named and numbered groups mixed are numbered as .NET
// numbers them under regexp2 (named last).
type Pattern struct {
	std *regexp.Regexp  // nil: re
	re  *regexp2.Regexp // nil: std
	src string
}

// MatchTimeout bounds one match of a Pattern that needs regexp2.
const MatchTimeout = time.Second

// CompilePattern compiles src.
func CompilePattern(src string) (*Pattern, error) {
	if std, err := regexp.Compile(src); err == nil {
		return &Pattern{std: std, src: src}, nil
	}
	re, err := regexp2.Compile(src, regexp2.RE2)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = MatchTimeout
	return &Pattern{re: re, src: src}, nil
}

// MustPattern is CompilePattern for the built-in personalities' patterns.
func MustPattern(src string) *Pattern {
	p, err := CompilePattern(src)
	if err != nil {
		panic(fmt.Sprintf("personalities: pattern %q: %v", src, err))
	}
	return p
}

func (p *Pattern) String() string { return p.src }

func (p *Pattern) match(s string) *regexp2.Match {
	m, err := p.re.FindStringMatch(s)
	if err != nil {
		return nil // its time ran out: no match
	}
	return m
}

// MatchString reports whether s holds a match.
func (p *Pattern) MatchString(s string) bool {
	if p.std != nil {
		return p.std.MatchString(s)
	}
	return p.match(s) != nil
}

// FindStringSubmatch is the first match and its groups ("" for a group
// that took no part), or nil.
func (p *Pattern) FindStringSubmatch(s string) []string {
	if p.std != nil {
		return p.std.FindStringSubmatch(s)
	}
	m := p.match(s)
	if m == nil {
		return nil
	}
	return groupsOf(m)
}

// FindAllStringSubmatch is every match, as FindStringSubmatch gives one.
func (p *Pattern) FindAllStringSubmatch(s string) [][]string {
	if p.std != nil {
		return p.std.FindAllStringSubmatch(s, -1)
	}
	var all [][]string
	p.each(s, func(m *regexp2.Match) { all = append(all, groupsOf(m)) })
	return all
}

// each calls f with every match in s, in order.
func (p *Pattern) each(s string, f func(*regexp2.Match)) {
	for m := p.match(s); m != nil; {
		f(m)
		next, err := p.re.FindNextMatch(m)
		if err != nil {
			return
		}
		m = next
	}
}

// Named is the first match's named groups, or nil.
func (p *Pattern) Named(s string) map[string]string {
	if p.std != nil {
		m := p.std.FindStringSubmatch(s)
		if m == nil {
			return nil
		}
		return p.stdNamed(m)
	}
	m := p.match(s)
	if m == nil {
		return nil
	}
	return namedOf(m)
}

func namedOf(m *regexp2.Match) map[string]string {
	named := map[string]string{}
	for _, g := range m.Groups() {
		if g.Name != "" && (g.Name[0] < '0' || g.Name[0] > '9') {
			named[g.Name] = g.String()
		}
	}
	return named
}

// AllNamed is every match's named groups.
func (p *Pattern) AllNamed(s string) []map[string]string {
	var all []map[string]string
	if p.std != nil {
		for _, m := range p.std.FindAllStringSubmatch(s, -1) {
			all = append(all, p.stdNamed(m))
		}
		return all
	}
	p.each(s, func(m *regexp2.Match) { all = append(all, namedOf(m)) })
	return all
}

// GroupNames are the pattern's named groups.
func (p *Pattern) GroupNames() []string {
	var names []string
	if p.std != nil {
		for _, n := range p.std.SubexpNames() {
			if n != "" {
				names = append(names, n)
			}
		}
		return names
	}
	for _, n := range p.re.GetGroupNames() {
		if n != "" && (n[0] < '0' || n[0] > '9') {
			names = append(names, n)
		}
	}
	return names
}

// FindStringIndex is where the first match lies in s, in bytes, or nil.
func (p *Pattern) FindStringIndex(s string) []int {
	if p.std != nil {
		return p.std.FindStringIndex(s)
	}
	m := p.match(s)
	if m == nil {
		return nil
	}
	// regexp2 counts runes; s's invalid bytes are a rune each, as in
	// []rune(s).
	start, end, r := -1, len(s), 0
	for i := range s {
		if r == m.Index {
			start = i
		}
		if r == m.Index+m.Length {
			end = i
			break
		}
		r++
	}
	if start < 0 {
		start = len(s)
	}
	return []int{start, end}
}

func (p *Pattern) stdNamed(m []string) map[string]string {
	named := map[string]string{}
	for i, n := range p.std.SubexpNames() {
		if n != "" && i < len(m) {
			named[n] = m[i]
		}
	}
	return named
}

func groupsOf(m *regexp2.Match) []string {
	gs := m.Groups()
	out := make([]string, len(gs))
	for i, g := range gs {
		if len(g.Captures) > 0 {
			out[i] = g.String()
		}
	}
	return out
}
