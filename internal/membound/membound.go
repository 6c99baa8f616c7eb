// Package membound guards fred's own memory: a reverse command whose
// bookkeeping grows past the bound stops with a message, and the person is
// back where they were, before the kernel's out-of-memory killer would end
// fred with no word.
package membound

import (
	"context"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
)

// Error is a command stopped at fred's memory bound.
type Error struct{ Used, Limit uint64 }

func (e *Error) Error() string {
	return fmt.Sprintf("fred's own memory reached %d MB, its bound of %d MB (fred --max-memory MB; by default half the machine's memory): the command stops here", e.Used>>20, e.Limit>>20)
}

// Default is half the machine's memory (0 if unknown).
func Default() uint64 { return proc.KBytes("meminfo", "MemTotal") / 2 }

// Used is what the Go runtime holds from the system (what it has mapped,
// less what it gave back).
func Used() uint64 {
	m := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 || m[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64() - m[1].Value.Uint64()
}

// Watch cancels a command with an *Error once fred's memory passes limit
// (0: no bound), checking now and then every quarter second until done is
// closed. The limit is also the Go runtime's soft limit: the collector
// works harder before fred reaches it.
func Watch(limit uint64, cancel context.CancelCauseFunc, done <-chan struct{}) {
	if limit == 0 {
		return
	}
	debug.SetMemoryLimit(int64(limit))
	check := func() bool {
		if used := Used(); used > limit {
			cancel(&Error{Used: used, Limit: limit})
			return true
		}
		return false
	}
	if check() {
		return
	}
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if check() {
					return
				}
			}
		}
	}()
}
