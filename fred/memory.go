package fred

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// fred guards its own memory: a reverse command whose bookkeeping grows
// past the bound stops with a message, and the person is back where they
// were, before the kernel's out-of-memory killer would end fred with no
// word. The bound is Options.MaxMemory (fred --max-memory MB), by default
// half the machine's memory.

// MemoryBoundError is a command stopped at fred's memory bound.
type MemoryBoundError struct{ Used, Limit uint64 }

func (e *MemoryBoundError) Error() string {
	return fmt.Sprintf("fred's own memory reached %d MB, its bound of %d MB (fred --max-memory MB; by default half the machine's memory): the command stops here", e.Used>>20, e.Limit>>20)
}

// DefaultMaxMemory is half the machine's memory (0 if unknown).
func DefaultMaxMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10 / 2
			}
		}
	}
	return 0
}

// memoryBound is the session's bound, and also the Go runtime's soft
// limit: the collector works harder before fred reaches it.
func (s *Session) memoryBound() uint64 {
	if s.opt.MaxMemory != 0 {
		return s.opt.MaxMemory
	}
	return DefaultMaxMemory()
}

// memoryUsed is what the Go runtime holds from the system (what it has
// mapped, less what it gave back).
func memoryUsed() uint64 {
	m := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 || m[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return m[0].Value.Uint64() - m[1].Value.Uint64()
}

// watchMemory cancels ctx with a MemoryBoundError once fred's memory
// passes the bound, checking now and then every quarter second until
// done is closed.
func (s *Session) watchMemory(cancel context.CancelCauseFunc, done <-chan struct{}) {
	limit := s.memoryBound()
	if limit == 0 {
		return
	}
	debug.SetMemoryLimit(int64(limit))
	check := func() bool {
		if used := memoryUsed(); used > limit {
			cancel(&MemoryBoundError{Used: used, Limit: limit})
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

// stopCause is why ctx was cancelled, when that was not Ctrl-C (nil).
func stopCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && c != context.Canceled {
		return c
	}
	return nil
}
