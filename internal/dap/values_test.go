package dap

import (
	"reflect"
	"testing"
)

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []child
	}{
		{`{id = 3, balance = 100, next = 0x5555555592a0}`, []child{{"id", "3"}, {"balance", "100"}, {"next", "0x5555555592a0"}}},
		{`{x = {a = 1, b = "x, y = {z}"}, arr = {1, 2, 3}}`, []child{{"x", `{a = 1, b = "x, y = {z}"}`}, {"arr", "{1, 2, 3}"}}},
		{`{1, 2, 3}`, []child{{"[0]", "1"}, {"[1]", "2"}, {"[2]", "3"}}},
		{`{0 <repeats 16 times>, 7}`, []child{{"[0]", "0 <repeats 16 times>"}, {"[1]", "7"}}},
		{`{c = 44 ',', p = 0x4005d0 <buf>}`, []child{{"c", "44 ','"}, {"p", "0x4005d0 <buf>"}}},
	} {
		got, ok := members(tc.in)
		if !ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("members(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	for _, v := range []string{"42", "0x5555 <main>", `"a {string}"`, "{}", ""} {
		if got, ok := members(v); ok {
			t.Errorf("members(%q) = %q: not an aggregate", v, got)
		}
	}
}
