// Package timed runs a program under its debugger for a measured stretch
// of its CPU time, and stops it there: what native probes divide a long
// continue with (fred/native.go). The kernel stops the program by a
// CPU-time alarm where it may, else fred interrupts it from outside.
package timed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/internal/perf"
	"github.com/fred-debugger/fred/internal/proc"
	P "github.com/fred-debugger/fred/personalities"
	"golang.org/x/sys/unix"
)

// Target is the program as a timed run needs it.
type Target interface {
	Pid() int
	// Resume lets the debugger run the program to its next stop (the
	// debugger's continue) and returns what it said.
	Resume(timeout time.Duration) (string, error)
	// UseBreakpoints enables bps and no other breakpoint; put puts the
	// person's back.
	UseBreakpoints(bps []string) (put func() error, err error)
	// StopOf reads why the program stopped from Resume's answer.
	StopOf(out string) P.Stop
}

// Debugf prints a line of the search's trace (fred sets it).
var Debugf = func(format string, args ...any) {}

// Result is how a timed run ended.
type Result struct {
	Stop  P.Stop
	Ran   time.Duration // run time from the resume to the interrupt or the stop
	Fired bool          // fred sent the interrupt
}

// ClockAlarms: For stops the program by a CPU-time alarm the kernel
// keeps for it (a perf task-clock event that sends SIGTRAP after d of the
// thread's run time), exact to some µs, when it may (one thread; the event
// opens); else by a timed interrupt from outside, exact to some tens of µs.
var ClockAlarms = os.Getenv("FRED_CPU_ALARM") != "0"

// alarmed is For by a CPU-time alarm. A wall-clock interrupt backs
// it up (the task clock stands still while the program waits for input or
// a lock): after four times d and 50 ms more, as continueFor sends it.
// fired says the alarm's time passed or fred sent the interrupt: the
// program may have a signal still to come, so the caller marks it run on.
func alarmed(t Target, c *perf.Event, period uint64, d, cpu0 time.Duration, buf []byte, timeout time.Duration) (Result, error) {
	pid := t.Pid()
	interrupted, out, err := continueFor(t, pid, 4*d+50*time.Millisecond, timeout, true)
	n, cerr := c.Count()
	var r Result
	r.Stop = t.StopOf(out)
	r.Fired = interrupted || cerr == nil && n >= period
	if r.Fired && r.Stop != P.StopSignal {
		// The alarm went off as the program stopped by itself: its trap
		// may be queued in the stopped thread, and on some kernels closing
		// the event waits for it to run. The caller restores the program
		// (the trap dies with it); the close finishes then.
		go c.Close()
	} else {
		c.Close()
	}
	if err != nil {
		return Result{}, err
	}
	if cpu1, err := perf.CPUTime(pid, buf); err == nil {
		r.Ran = cpu1 - cpu0
	}
	Debugf("fred-probe: target %v cpu %v fired %v stop %v (CPU alarm; interrupted %v)", d, r.Ran, r.Fired, r.Stop, interrupted)
	return r, nil
}

// Slice is the longest run fred makes without looking for a Ctrl-C.
const Slice = 250 * time.Millisecond

// ForCtx is For in slices of at most Slice, so that a long run (to
// the stop of a continue that ran for minutes) stops soon after ctx is done.
// The interrupts between slices do not show: gdb keeps SIGINT from the
// program. timeout bounds the whole run (a program blocked for good uses
// no CPU time, and each slice would end by fred's interrupt).
func ForCtx(ctx context.Context, t Target, d time.Duration, bps []string, timeout time.Duration) (Result, error) {
	var ran time.Duration
	deadline := time.Now().Add(timeout)
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		if time.Now().After(deadline) {
			return Result{}, fmt.Errorf("the program ran %v in %v without getting where it went before (is it waiting for something?)", ran.Round(time.Millisecond), timeout)
		}
		if d-ran <= 2*Slice {
			r, err := For(t, d-ran, bps, timeout)
			r.Ran += ran
			return r, err
		}
		r, err := For(t, Slice, bps, timeout)
		if err != nil || !r.Fired || r.Stop != P.StopSignal {
			r.Ran += ran
			return r, err
		}
		ran += r.Ran
	}
}

// For resumes the program with the breakpoints bps and interrupts it
// once it has used d of CPU time, unless it stops by itself first.
//
// Where it may, fred has the kernel stop it there (ClockAlarms). Else:
// nothing outside the program can read its CPU time while it runs (the
// kernel brings the figure up to date only at scheduler ticks), but once
// it is stopped the figure is exact. So fred lets it run for a wall-clock
// window no longer than the CPU time still wanted (a program waiting for
// a CPU gets less, never more), interrupts it, reads the exact figure and
// resumes it for the rest, a few rounds at most.
func For(t Target, d time.Duration, bps []string, timeout time.Duration) (Result, error) {
	put, err := t.UseBreakpoints(bps)
	if err != nil {
		return Result{}, err
	}
	pid := t.Pid()
	buf := make([]byte, 512)
	cpu0, err := perf.CPUTime(pid, buf)
	if err != nil {
		_ = put()
		return Result{}, err
	}
	var r Result
	if ClockAlarms && proc.Threads(pid) == 1 {
		c, period, err := perf.CPUAlarm(pid, d)
		if err == nil {
			r, err := alarmed(t, c, period, d, cpu0, buf, timeout)
			if perr := put(); err == nil {
				err = perr
			}
			return r, err
		}
		Debugf("no CPU alarm: %v", err)
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) ||
			errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
			ClockAlarms = false // not here: do not ask again
		}
	}
	for round := 0; ; round++ {
		fired, out, err := continueFor(t, pid, d-r.Ran, timeout, false)
		if err != nil {
			_ = put()
			return Result{}, err
		}
		r.Stop, r.Fired = t.StopOf(out), fired
		if cpu1, err := perf.CPUTime(pid, buf); err == nil {
			r.Ran = cpu1 - cpu0
		}
		Debugf("  round %d: fired %v stop %v, %v of %v", round, fired, r.Stop, r.Ran, d)
		// Close enough, or stopped by itself (or by a signal of its own).
		if !fired || r.Stop != P.StopSignal || r.Ran >= d-d/16 || round == 5 {
			break
		}
	}
	Debugf("fred-probe: target %v cpu %v fired %v stop %v", d, r.Ran, r.Fired, r.Stop)
	return r, put()
}

// continueFor resumes the program and interrupts it after the wall-clock
// window w, unless it stops first; it says whether it sent the interrupt.
// A backup interrupt (a CPU alarm stops the program) is not sent to a
// program that stands stopped: that is the alarm's stop, which gdb has
// not reported yet.
func continueFor(t Target, pid int, w time.Duration, timeout time.Duration, backup bool) (bool, string, error) {
	var fired atomic.Bool
	sig := interruptSignal(pid) // (not on the timed path)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// On a busy machine an ordinary thread can wait milliseconds for
		// a CPU, far longer than the windows it times: ask for real-time
		// priority (root only). The OS thread ends with the goroutine,
		// priority and all.
		runtime.LockOSThread()
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0)
		// The window opens when the program leaves its stop: gdb takes a
		// millisecond or two to resume it. The thread naps between looks
		// rather than spin: at real-time priority a spinning thread
		// would starve everything else on its CPU (the program's other
		// threads included), and a nap at that priority wakes on time.
		nap := func(d time.Duration) { _ = unix.Nanosleep(&unix.Timespec{Nsec: int64(d)}, nil) }
		for {
			select {
			case <-done:
				return
			default:
			}
			if st, err := ckpt.ProcState(pid); err != nil || st != 't' && st != 'T' {
				break
			}
			nap(20 * time.Microsecond)
		}
		deadline := time.Now().Add(w)
		for {
			rem := time.Until(deadline)
			if rem <= 0 {
				break
			}
			select {
			case <-done:
				return
			default:
			}
			nap(min(rem, 50*time.Microsecond))
		}
		select {
		case <-done:
			return
		default:
		}
		if st, err := ckpt.ProcState(pid); backup && err == nil && (st == 't' || st == 'T') {
			return
		}
		// One signal only: a second could still be pending when gdb
		// reports the first, and stop a later command.
		fired.Store(true)
		_ = syscall.Tgkill(pid, pid, sig)
	}()
	out, err := t.Resume(timeout)
	close(done)
	wg.Wait()
	return fired.Load(), out, err
}

// interruptSignal is how fred stops the program for gdb: SIGINT, which
// gdb reports as a stop and does not pass on; SIGTRAP, which it does not
// pass on either, where the program blocks SIGINT (a server that takes
// it in a signal thread of its own would never show it to gdb).
func interruptSignal(pid int) syscall.Signal {
	if proc.Blocks(pid, pid, syscall.SIGINT) {
		return syscall.SIGTRAP
	}
	return syscall.SIGINT
}
