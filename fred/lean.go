package fred

import (
	"fmt"
	"os"
	"regexp"

	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/proc"
)

// Lean attaches: a search snapshots and restores the program many times,
// and gdb reads every library's separate debug information again at each
// attach (libc's alone is about 50 ms of a 110 ms restore here). While a
// search runs, and the program is single-threaded (gdb's thread support
// wants libc's symbols), fred points gdb's debug-file-directory nowhere,
// and reads the libraries' symbols again once at the end. An expression
// that needs those symbols (a call of a libc function) fails once; fred
// then leaves lean mode and evaluates it again.

var quotedRe = regexp.MustCompile(`"(.*)"`)

// enterLeanFor is enterLean for a reverse command over the history steps
// from step from on: only when every stop in it is in code with source. A
// stop in a library (a breakpoint on malloc) has another location without
// the library's debug information, and its replay would look diverged.
func (s *Session) enterLeanFor(steps []history.Step, from int) (leave func() error) {
	noop := func() error { return nil }
	// The run's start too, if the command may go there: a run that starts
	// at the program's entry point (no source) steps from there.
	if st := s.Timeline.Start(); from == 0 && st.Known() && !hasSource(st) {
		return noop
	}
	for _, st := range steps {
		if st.Known() && !hasSource(st) {
			return noop
		}
	}
	for _, sn := range s.snaps {
		if sn.run == s.run && sn.threads > 1 {
			return noop // a restore might bring threads back
		}
	}
	return s.enterLean()
}

// enterLean starts lean attaches if the debugger can; leave ends them.
func (s *Session) enterLean() (leave func() error) {
	t := s.p.Tracer
	noop := func() error { return nil }
	if t == nil || t.DebugDir == "" || !s.running || s.pid == 0 || os.Getenv("FRED_FULL_ATTACH") == "1" {
		return noop
	}
	if proc.Threads(s.pid) != 1 {
		return noop
	}
	out, err := s.query(fmt.Sprintf(t.Show, t.DebugDir))
	if err != nil {
		return noop
	}
	m := quotedRe.FindStringSubmatch(out)
	if m == nil {
		return noop
	}
	if _, err := s.query(s.p.Quiet(fmt.Sprintf(t.Set, t.DebugDir, s.dir+"/no-debug-info"))); err != nil {
		return noop
	}
	s.lean, s.leanAttached, s.leanDir = true, false, m[1]
	return func() error { return s.leaveLean(m[1]) }
}

// fullAttachFor ends lean attaches before an attach to pid if it has
// threads now (a search that replays through a thread's creation): gdb's
// thread support wants the libraries' symbols, and the attach reads them.
func (s *Session) fullAttachFor(pid int) error {
	if !s.lean {
		return nil
	}
	if proc.Threads(pid) < 2 {
		return nil
	}
	s.lean, s.leanAttached = false, false
	_, err := s.query(s.p.Quiet(fmt.Sprintf(s.p.Tracer.Set, s.p.Tracer.DebugDir, s.leanDir)))
	return err
}

// leaveLean puts the debug-file-directory back and, if gdb attached
// meanwhile, has it read the libraries' symbols again.
func (s *Session) leaveLean(dir string) error {
	if !s.lean {
		return nil
	}
	s.lean = false
	if _, err := s.query(s.p.Quiet(fmt.Sprintf(s.p.Tracer.Set, s.p.Tracer.DebugDir, dir))); err != nil {
		return err
	}
	if !s.leanAttached || !s.running {
		return nil
	}
	s.leanAttached = false
	for _, c := range s.p.Tracer.Reload {
		if _, err := s.query(s.p.Quiet(c)); err != nil {
			return err
		}
	}
	return nil
}
