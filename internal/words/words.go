// Package words holds the small helpers fred's messages are written with.
package words

import (
	"strconv"
	"strings"
)

// Plural is "1 pass", "277 passes": the second form only if it differs
// from the first with an "s".
func Plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return strconv.Itoa(n) + " " + many[0]
	}
	return strconv.Itoa(n) + " " + one + "s"
}

// Numbered names numbered things after their noun: "snapshot 3",
// "snapshots 3, 4, 5".
func Numbered(one string, ids []int) string {
	if len(ids) != 1 {
		one += "s"
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.Itoa(id)
	}
	return one + " " + strings.Join(names, ", ")
}

// Where is a location without its pc: the same from run to run.
func Where(l interface{ String() string }) string {
	s := l.String()
	if i := strings.Index(s, " (pc "); i >= 0 {
		s = s[:i]
	}
	return s
}
