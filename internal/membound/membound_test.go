package membound

import (
	"context"
	"errors"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// A bound below what fred holds already stops the command at once, with
// the figures; a bound far above it lets the command run until it ends.
func TestWatch(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	used := Used()
	if used == 0 || Default() == 0 {
		t.Fatalf("no figures: used %d, default %d", used, Default())
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	Watch(used/2, cancel, done)
	var be *Error
	if !errors.As(context.Cause(ctx), &be) || be.Limit != used/2 || !strings.Contains(be.Error(), "--max-memory") {
		t.Fatalf("a bound below the memory in use: %v", context.Cause(ctx))
	}
	close(done)

	ctx, cancel = context.WithCancelCause(context.Background())
	done = make(chan struct{})
	Watch(Default()*2, cancel, done)
	time.Sleep(300 * time.Millisecond)
	close(done)
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("a bound far above: %v", err)
	}
}
