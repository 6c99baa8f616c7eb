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

func TestNumbered(t *testing.T) {
	for _, c := range []struct {
		ids  []int
		want string
	}{
		{[]int{3}, "snapshot 3"},
		{[]int{3, 4, 5}, "snapshots 3, 4, 5"},
	} {
		if got := Numbered("snapshot", c.ids); got != c.want {
			t.Errorf("Numbered(%v) = %q, want %q", c.ids, got, c.want)
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
