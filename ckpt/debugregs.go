package ckpt

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"github.com/fred-debugger/fred/internal/proc"
	"golang.org/x/sys/unix"
)

var (
	drOnce sync.Once
	drErr  error
)

// DebugRegisters checks, once, that the CPU's debug registers work for
// this machine's processes: a hardware execution breakpoint (a perf event
// on this thread) must count the calls of a function. In some virtual
// machines they do nothing for the guest: the breakpoint is accepted and
// never fires. Then fred's hit counts are off, gdb's hardware watchpoints
// never trigger, and CRIU, which stops its parasite with a hardware
// breakpoint, waits for it forever (CRIU_FAULT=130 makes it trace
// syscalls instead; NewCRIU sets it).
func DebugRegisters() error {
	drOnce.Do(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		attr := unix.PerfEventAttr{
			Type:    unix.PERF_TYPE_BREAKPOINT,
			Size:    uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
			Bp_type: 4, // HW_BREAKPOINT_X
			Ext1:    uint64(reflect.ValueOf(drProbe).Pointer()),
			Ext2:    8, // bp_len: sizeof(long), as the kernel wants for execution breakpoints
			Bits:    unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv,
		}
		fd, err := unix.PerfEventOpen(&attr, unix.Gettid(), -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if err != nil {
			drErr = fmt.Errorf("no hardware breakpoint: perf_event_open: %w", err)
			return
		}
		defer unix.Close(fd)
		const calls = 16
		for i := 0; i < calls; i++ {
			drSink += drProbe(i)
		}
		var b [8]byte
		if _, err := unix.Read(fd, b[:]); err != nil {
			drErr = fmt.Errorf("reading a hardware breakpoint's count: %w", err)
			return
		}
		if n := *(*uint64)(unsafe.Pointer(&b[0])); n < calls {
			drErr = fmt.Errorf("a hardware breakpoint counted %d of %d executions: the machine's debug registers do not work, as in some virtual machines", n, calls)
		}
	})
	return drErr
}

var drSink int

//go:noinline
func drProbe(i int) int { return i*3 + 1 }

// A process CRIU restores comes back with its threads' debug status
// register (x86 DR6) reading 0xffff0ff1: breakpoint 0 "hit". A debugger
// that attaches takes that for a hardware breakpoint and ignores the
// thread's next stops as late breakpoint traps (gdb: "delayed hardware
// breakpoint/watchpoint trap, ignoring"), so an interrupt never stops it.
// clearDebugStatus resets DR6 in every thread of pid, which is stopped and
// not traced; it stays stopped.

// ClearDebugStatus is clearDebugStatus for a process a dump left stopped
// that a debugger attaches to again: the dump leaves the thread that ran
// CRIU's parasite (the main thread) with the same debug status.
func ClearDebugStatus(pid int) error { return clearDebugStatus(pid) }

// dr6Offset is offsetof(struct user, u_debugreg[6]) on x86-64.
const dr6Offset = 848 + 6*8

func clearDebugStatus(pid int) error {
	if runtime.GOARCH != "amd64" {
		return nil
	}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return err
	}
	// ptrace requests must come from the thread that attached.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := clearThreadDR6(tid); err != nil {
			if st := proc.State(tid); st == 0 || st == 'Z' || st == 'X' {
				continue // the thread has ended since: no stop of it to miss
			}
			return fmt.Errorf("clearing the debug status of thread %d (state %c): %w", tid, proc.State(tid), err)
		}
	}
	return nil
}

func clearThreadDR6(tid int) error {
	if err := unix.PtraceSeize(tid); err != nil {
		return err
	}
	// Detached again whatever happens: it goes back to its stop.
	defer unix.PtraceDetach(tid)
	if err := unix.PtraceInterrupt(tid); err != nil {
		return err
	}
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(tid, &ws, unix.WALL, nil)
		if err != unix.EINTR {
			if err != nil {
				return err
			}
			break
		}
	}
	buf := make([]byte, 8)
	if _, err := unix.PtracePeekUser(tid, dr6Offset, buf); err != nil {
		return err
	}
	if buf[0]&0xf == 0 {
		return nil
	}
	v := make([]byte, 8)
	for i, b := range []byte{0xf0, 0x0f, 0xff, 0xff} {
		v[i] = b
	}
	_, err := unix.PtracePokeUser(tid, dr6Offset, v)
	return err
}
