package conn

import (
	"strings"
	"testing"
)

// HideLines on gdb's output for the run fred makes of a person's `run`,
// fed in every split a pty may deliver it in.
func TestHideLines(t *testing.T) {
	cases := []struct {
		skip string
		from []string
		in   string
		want string
	}{
		{"", []string{"Program stopped."},
			"Starting program: /tmp/p \r\n\r\nProgram stopped.\r\n0x00007ffff7fe4b70 in _start () from /lib64/ld-linux-x86-64.so.2\r\n",
			"Starting program: /tmp/p \r\n"},
		{"Continuing.", []string{"Temporary breakpoint -"},
			"Continuing.\r\n[Thread debugging using libthread_db enabled]\r\n\r\nTemporary breakpoint -2, \x1b[33mmain\x1b[m () at p.c:28\r\n28\t\tfor (;;)\r\n",
			"[Thread debugging using libthread_db enabled]\r\n"},
		{"Continuing.", nil,
			"Continuing.\r\nhello\r\n\r\nBreakpoint 1, main () at p.c:30\r\n30\t\tprintf();\r\n",
			"hello\r\n\r\nBreakpoint 1, main () at p.c:30\r\n30\t\tprintf();\r\n"},
		// A question without a newline is shown at once.
		{"", []string{"Program stopped."},
			"The program being debugged has been started already.\r\nStart it from the beginning? (y or n) ",
			"The program being debugged has been started already.\r\nStart it from the beginning? (y or n) "},
		// A line that only begins like a hidden one is shown.
		{"Continuing.", []string{"Temporary breakpoint -"},
			"Continuing.\r\nTemporary files: 3\r\nContinuing.\r\n",
			"Temporary files: 3\r\nContinuing.\r\n"},
	}
	for i, c := range cases {
		for _, size := range []int{1, 2, 3, 7, 25, len(c.in)} {
			var out strings.Builder
			h := &HideLines{W: &out, Skip: c.skip, From: c.from}
			shownEarly := ""
			for j := 0; j < len(c.in); j += size {
				h.Write([]byte(c.in[j:min(len(c.in), j+size)]))
			}
			shownEarly = out.String()
			h.Flush()
			if got := out.String(); got != c.want {
				t.Errorf("case %d in pieces of %d: shown %q, want %q", i, size, got, c.want)
			}
			if strings.HasSuffix(c.want, "(y or n) ") && shownEarly != c.want {
				t.Errorf("case %d in pieces of %d: the question was held back: %q", i, size, shownEarly)
			}
		}
	}
}
