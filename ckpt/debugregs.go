package ckpt

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

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
			return fmt.Errorf("clearing the debug status of thread %d: %w", tid, err)
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
