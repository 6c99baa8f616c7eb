package proc

import (
	"os"
	"testing"
)

// KBytes reads the kernel's "KEY: N kB" figures: the machine's memory,
// and this process's peak resident memory, at least what it holds now.
func TestKBytes(t *testing.T) {
	if m := KBytes("meminfo", "MemTotal"); m < 64<<20 {
		t.Errorf("MemTotal %d bytes", m)
	}
	hwm := KBytes("self/status", "VmHWM")
	if hwm == 0 || int64(hwm) < Resident(os.Getpid())/2 {
		t.Errorf("VmHWM %d bytes, resident now %d", hwm, Resident(os.Getpid()))
	}
	if KBytes("meminfo", "NoSuchKey") != 0 || KBytes("no/such/file", "MemTotal") != 0 {
		t.Error("a figure that is not there is not 0")
	}
}
