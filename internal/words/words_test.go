package words

import "testing"

type loc string

func (l loc) String() string { return string(l) }

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		one  string
		many []string
		want string
	}{
		{1, "pass", []string{"passes"}, "1 pass"},
		{277, "pass", []string{"passes"}, "277 passes"},
		{0, "command", nil, "0 commands"},
		{2, "command", nil, "2 commands"},
	} {
		if got := Plural(c.n, c.one, c.many...); got != c.want {
			t.Errorf("Plural(%d, %q, %q) = %q, want %q", c.n, c.one, c.many, got, c.want)
		}
	}
}

func TestWhere(t *testing.T) {
	if got := Where(loc("update at watch.c:12 (pc 0x401136)")); got != "update at watch.c:12" {
		t.Errorf("Where: %q", got)
	}
	if got := Where(loc("main at a.c:3")); got != "main at a.c:3" {
		t.Errorf("Where without pc: %q", got)
	}
}
