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

func TestGDBFrames(t *testing.T) {
	out := "#0  square (x=0) at /src/steps.c:8\n" +
		"#1  0x0000555555555189 in std::vector<int, std::allocator<int> >::push_back (this=0x7ffe, v=1)\n" +
		"    at /usr/include/c++/12/bits/stl_vector.h:1287\n" +
		"#2  <signal handler called>\n" +
		"#3  0x00007ffff7df0d90 in __libc_start_call_main () from /lib/x86_64-linux-gnu/libc.so.6\n" +
		"#4  main () at /src/error_handling/steps.c:23\n"
	want := []frame{{"square", "/src/steps.c", 8},
		{"std::vector<int, std::allocator<int> >::push_back", "/usr/include/c++/12/bits/stl_vector.h", 1287},
		{"<signal handler called>", "", 0},
		{"__libc_start_call_main", "", 0},
		{"main", "/src/error_handling/steps.c", 23}}
	if got := gdbDAP.parseFrames(out); !reflect.DeepEqual(got, want) {
		t.Errorf("frames:\n%q\nwant\n%q", got, want)
	}
}
