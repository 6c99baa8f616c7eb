package ckpt

import (
	"errors"
	"os"
	"testing"
)

// Room lets a small process's snapshot through on a disk with room, and
// refuses it, with the figures, where there is none (/proc has no free
// blocks).
func TestRoom(t *testing.T) {
	if err := Room(t.TempDir(), os.Getpid()); err != nil {
		t.Fatalf("a test binary's snapshot in the temporary directory: %v", err)
	}
	var full *DiskFullError
	if err := Room("/proc", os.Getpid()); !errors.As(err, &full) || full.Free != 0 || full.Need < 64<<20 {
		t.Fatalf("on a disk without room: %v", err)
	}
}
