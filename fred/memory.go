package fred

import (
	"context"

	"github.com/fred-debugger/fred/internal/membound"
)

// memoryBound is the session's bound on fred's own memory: Options.MaxMemory
// (fred --max-memory MB), by default half the machine's memory.
func (s *Session) memoryBound() uint64 {
	if s.opt.MaxMemory != 0 {
		return s.opt.MaxMemory
	}
	return membound.Default()
}

// stopCause is why ctx was cancelled, when that was not Ctrl-C (nil).
func stopCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil && c != context.Canceled {
		return c
	}
	return nil
}
