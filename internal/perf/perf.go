// Package perf opens the perf events fred keeps on a thread of the
// program: a hardware execution breakpoint that counts how often an
// instruction runs (debug registers, not the performance counters rr
// needs), and an alarm after some of the thread's CPU time. Either can
// stop the thread with SIGTRAP, which the debugger reports as a stop.
package perf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNoHitCounts says the kernel would not count executions (no debug
// register free, perf events not allowed).
var ErrNoHitCounts = errors.New("counting executions with a hardware breakpoint is not available")

// perf_event_attr bits x/sys does not name: remove_on_exec and sigtrap.
const (
	bitRemoveOnExec = 1 << 36
	bitSigtrap      = 1 << 37
	hwBreakpointX   = 4 // HW_BREAKPOINT_X
)

// Event is a perf event the kernel keeps on one thread of the program.
type Event struct{ fd int }

// open opens attr on thread tid, with what every such event of fred's
// needs: its size, no hypervisor counts, gone at an exec.
func open(attr unix.PerfEventAttr, tid int) (*Event, error) {
	attr.Size = uint32(unsafe.Sizeof(unix.PerfEventAttr{}))
	attr.Bits |= unix.PerfBitExcludeHv | bitRemoveOnExec
	fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open: %w", err)
	}
	return &Event{fd: fd}, nil
}

// Hits counts executions of addr by thread tid. With period k > 0 the
// thread gets a SIGTRAP (which gdb reports as a stop) just before the k-th.
func Hits(tid int, addr uint64, k uint64) (*Event, error) {
	attr := unix.PerfEventAttr{
		Type:    unix.PERF_TYPE_BREAKPOINT,
		Bp_type: hwBreakpointX,
		Ext1:    addr,
		Ext2:    8, // bp_len: sizeof(long), as the kernel wants for execution breakpoints
		Sample:  k,
		Bits:    unix.PerfBitExcludeKernel,
	}
	if k > 0 {
		attr.Bits |= bitSigtrap
	}
	h, err := open(attr, tid)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoHitCounts, err)
	}
	return h, nil
}

// CPUAlarm arms a SIGTRAP for thread tid once it has run d more, and
// returns the period in ns (Count reaches it when the alarm's time has
// passed). The alarm may go off in the kernel too (in a page fault, say):
// skipping those (exclude_kernel) would put it off by a whole period, and
// made the DAG benchmark's search slower than interrupts from outside.
func CPUAlarm(tid int, d time.Duration) (*Event, uint64, error) {
	period := uint64(max(d, 10*time.Microsecond).Nanoseconds())
	c, err := open(unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_TASK_CLOCK,
		Sample: period,
		Bits:   unix.PerfBitDisabled | bitSigtrap,
	}, tid)
	if err != nil {
		return nil, 0, err
	}
	// One alarm only: the event disables itself at its first overflow. A
	// second one (the timer re-arms every period) could fire as the thread
	// stops, and its trap would hit the next call into the program.
	if err := unix.IoctlSetInt(c.fd, unix.PERF_EVENT_IOC_REFRESH, 1); err != nil {
		c.Close()
		return nil, 0, fmt.Errorf("perf task-clock refresh: %w", err)
	}
	return c, period, nil
}

// Count is the event's count: executions, or ns of CPU time.
func (h *Event) Count() (uint64, error) {
	var b [8]byte
	if _, err := unix.Read(h.fd, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// Close closes the event.
func (h *Event) Close() { _ = unix.Close(h.fd) }

// CPUTime is the CPU time all of pid's threads have used, from
// /proc/PID/task/*/schedstat (buf: room to read one). For a running thread
// the kernel brings the figure up to date only at scheduler ticks, but for
// a stopped one it is exact to the nanosecond: read before a resume and
// after the stop, it says how far the program ran.
func CPUTime(pid int, buf []byte) (time.Duration, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, t := range tasks {
		f, err := os.Open(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread has exited
		}
		n, err := f.Read(buf)
		f.Close()
		if err != nil {
			continue
		}
		b := buf[:n]
		if i := bytes.IndexByte(b, ' '); i > 0 {
			b = b[:i]
		}
		ns, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cannot read %s/%s/schedstat", dir, t.Name())
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}
