package dap

import (
	"strconv"
	"strings"
)

// An aggregate value as gdb prints it, `{x = 1, p = {a = 2, b = 0x0},
// arr = {1, 2, 3}}`, is a tree the editor can expand: children named by
// their field, or [i] in an array.

// child is one member of an aggregate.
type child struct {
	name  string
	value string // as gdb printed it
}

// members splits an aggregate value into its members; ok is false for a
// value that is not one (a number, a pointer, a string).
func members(v string) ([]child, bool) {
	v = strings.TrimSpace(v)
	if len(v) < 2 || v[0] != '{' || v[len(v)-1] != '}' {
		return nil, false
	}
	parts := splitTop(v[1 : len(v)-1])
	var out []child
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || p == "..." {
			continue
		}
		if name, val, ok := cutTop(p, " = "); ok && isMemberName(name) {
			out = append(out, child{name, val})
		} else {
			out = append(out, child{"[" + strconv.Itoa(i) + "]", p})
		}
	}
	return out, len(out) > 0
}

// isMemberName: a field, a designated index ([3]) or a base class (<Base>).
func isMemberName(s string) bool {
	if s == "" || strings.ContainsAny(s, "{}\"'") {
		return false
	}
	return true
}

// topLevel calls f at each byte of s outside strings and characters,
// with the depth of braces, parentheses and angle brackets before it,
// until f returns false.
func topLevel(s string, f func(i, depth int) bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		if c == '"' || c == '\'' {
			quote = c
			continue
		}
		if !f(i, depth) {
			return
		}
		switch c {
		case '{', '(', '<':
			depth++
		case '}', ')', '>':
			depth--
		}
	}
}

// splitTop splits s at the commas outside braces, strings and characters.
func splitTop(s string) []string {
	var out []string
	start := 0
	topLevel(s, func(i, depth int) bool {
		if s[i] == ',' && depth == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
		return true
	})
	return append(out, s[start:])
}

// cutTop is strings.Cut at the first sep outside braces and strings.
func cutTop(s, sep string) (before, after string, found bool) {
	before = s
	topLevel(s, func(i, depth int) bool {
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			before, after, found = s[:i], s[i+len(sep):], true
			return false
		}
		return true
	})
	return before, after, found
}
