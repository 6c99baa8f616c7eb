package fred

import (
	"testing"
	"time"
)

// Ctrl-C reaches a program gdb runs after a restore, as before one.
func TestGDBInterruptAfterRestore(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ts := gdbSession(t, "spin", backend)
		ts.must("break main", `Breakpoint 1`)
		ts.must("run", `Breakpoint 1, main`)
		ts.must("fred-checkpoint", `snapshot 2 taken`)
		spin := func() {
			t.Helper()
			go func() {
				time.Sleep(500 * time.Millisecond)
				ts.Interrupt()
			}()
			ts.must("continue", `received signal SIGINT`)
		}
		spin()
		ts.must("fred-restart 2", `main`)
		spin()
		ts.must("fred-restart 2", `main`)
		spin()
	})
}
