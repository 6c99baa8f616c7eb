package perf

import (
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The CPU alarm counts this thread's run time; CPUTime sees the process's.
func TestCPUAlarmCounts(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 512)
	t0, err := CPUTime(os.Getpid(), buf)
	if err != nil {
		t.Fatal(err)
	}
	// Far longer than the loop below: it must not go off.
	c, period, err := CPUAlarm(unix.Gettid(), 10*time.Second)
	if err != nil {
		t.Fatalf("perf events are not allowed here (kernel.perf_event_paranoid?): %v", err)
	}
	defer c.Close()
	if period != uint64(10*time.Second) {
		t.Errorf("period %d", period)
	}
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
	}
	n, err := c.Count()
	if err != nil {
		t.Fatal(err)
	}
	if n < uint64(5*time.Millisecond) || n >= period {
		t.Errorf("the alarm counted %v of a 30 ms busy loop", time.Duration(n))
	}
	t1, err := CPUTime(os.Getpid(), buf)
	if err != nil {
		t.Fatal(err)
	}
	if t1-t0 < 5*time.Millisecond {
		t.Errorf("CPUTime grew %v over a 30 ms busy loop", t1-t0)
	}
	if _, err := CPUTime(-1, buf); err == nil {
		t.Error("CPUTime of no process: no error")
	}
}
