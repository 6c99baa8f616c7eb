package fred

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Typing while a command runs is never joined to fred's own lines (issue
// 22: a typed `print` reached gdb as "pecho"). Keys typed while the
// program runs go to its terminal; the debugger may read them as the start
// of its next line; fred's first line after the command empties that line
// first, and keys that come once the command is over are not written at
// all (they are for the next prompt). A typist presses 'p' every 100 µs
// through 40 commands; each command's output is the debugger's own, and
// the session stays in step.
func TestTypingNotMixedWithFred(t *testing.T) {
	for _, tc := range []struct {
		name, variable string
		start          func(t *testing.T) *tsession
		setup          []string
		step           string
	}{
		{"gdb", "i", func(t *testing.T) *tsession { return gdbSession(t, "watch", "fork") },
			[]string{"break update", "run"}, "next"},
		{"pdb", "i", func(t *testing.T) *tsession { ts, _ := pdbSession(t, "watch.py", "fork"); return ts },
			[]string{"break 11", "c"}, "n"},
		{"perl", "$i", func(t *testing.T) *tsession { ts, _ := perlSession(t, "watch.pl", "fork"); return ts },
			[]string{"b 12", "c"}, "n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.start(t)
			for _, c := range tc.setup {
				ts.do(c)
			}
			var passed, held atomic.Int64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if ts.Input([]byte("p")) {
						passed.Add(1)
					} else {
						held.Add(1)
					}
					time.Sleep(100 * time.Microsecond)
				}
			}()
			for i := 0; i < 40; i++ {
				out := ts.do(tc.step)
				for _, bad := range []string{"echo", "Undefined command", "NameError", "SyntaxError", "FREDSYNC", "syntax error"} {
					if strings.Contains(out, bad) {
						close(stop)
						<-done
						t.Fatalf("command %d, %q: typing mixed with fred's lines (%q):\n%s", i, tc.step, bad, out)
					}
				}
			}
			close(stop)
			<-done
			if passed.Load() == 0 || held.Load() == 0 {
				t.Fatalf("the typist's keys: %d passed to the program, %d held for the prompt; the test needs both", passed.Load(), held.Load())
			}
			// In step: a command and its own answer.
			if v := ts.value(tc.variable); v == "" {
				t.Fatalf("%s has no value", tc.variable)
			}
			ts.must("fred-reverse-step", `took`)
		})
	}
}
