package ckpt

import (
	"fmt"

	"github.com/fred-debugger/fred/internal/proc"
	"golang.org/x/sys/unix"
)

// DiskFullError is a snapshot refused before it filled the disk.
type DiskFullError struct {
	Dir        string
	Free, Need uint64
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("no room for a snapshot under %s: %d MB free, and the program's memory (%d MB and a margin) goes there", e.Dir, e.Free>>20, e.Need>>20)
}

// Room refuses a snapshot of process pid written to disk under dir
// (CRIU's images hold the program's memory) when dir's disk has not that
// much free and a margin: a full disk would fail the dump half way.
func Room(dir string, pid int) error {
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) != nil {
		return nil
	}
	free := fs.Bavail * uint64(fs.Bsize)
	resident := proc.Resident(pid)
	if resident <= 0 {
		return nil
	}
	need := uint64(resident) + 64<<20
	if free < need {
		return &DiskFullError{Dir: dir, Free: free, Need: need}
	}
	return nil
}
