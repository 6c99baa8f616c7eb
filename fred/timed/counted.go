package timed

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fred-debugger/fred/internal/perf"
	P "github.com/fred-debugger/fred/personalities"
)

// Counter runs the program to the k-th execution of an instruction (hit
// counts): the kernel counts them with a hardware breakpoint (a perf
// event) and stops the program there, or the debugger does with a
// software breakpoint where the debug registers do not count.
type Counter struct {
	T Target
	// Ask asks the debugger what does not run the program; Query runs a
	// command that does, with a deadline.
	Ask     func(cmd string) (string, error)
	Query   func(cmd string, timeout time.Duration) (string, error)
	Stepper *P.Stepper // Where, and Hits for software counts
	Soft    bool       // count with the debugger's software breakpoint
	// Open counts executions of addr by thread tid, stopping it before
	// the k-th (perf.Hits, where the debug registers count).
	Open func(tid int, addr, k uint64) (*perf.Event, error)
	// Took is told how long each counted run of k executions took.
	Took func(d time.Duration, k int)
}

// Where is the selected thread's pc, eflags and LWP.
func (c Counter) Where() (pc, flags uint64, lwp int, err error) {
	out, err := c.Ask(c.Stepper.Where)
	if err != nil {
		return 0, 0, 0, err
	}
	v, err := P.ParseTagged(out, "FREDWHERE ")
	if err != nil {
		return 0, 0, 0, err
	}
	f := strings.Fields(v)
	if len(f) != 3 {
		return 0, 0, 0, fmt.Errorf("cannot read %q", v)
	}
	pc, err = strconv.ParseUint(f[0], 10, 64)
	if err == nil {
		flags, err = strconv.ParseUint(f[1], 10, 64)
	}
	if err == nil {
		lwp, err = strconv.Atoi(f[2])
	}
	return pc, flags, lwp, err
}

// Hits is how a counted run ended.
type Hits struct {
	Reached bool   // stopped just before the k-th execution
	N       int    // executions counted (k when reached)
	Stop    P.Stop // why the program stopped
}

// Run resumes the program with the breakpoints bps until the
// instruction at addr is about to run for the k-th time from now (k >= 1),
// unless the program stops by itself first.
func (c Counter) Run(addr uint64, k int, bps []string, timeout time.Duration) (Hits, error) {
	if c.Soft {
		return c.runSoft(addr, k, bps, timeout)
	}
	pc, flags, lwp, err := c.Where()
	if err != nil {
		return Hits{}, err
	}
	// Resuming at addr itself traps once more first, unless the resume
	// flag is set (the program stopped at a previous count's trap): that
	// execution is the present moment, not one of the k.
	self := 0
	if pc == addr && flags&(1<<16) == 0 {
		self = 1
	}
	if lwp == 0 {
		lwp = c.T.Pid()
	}
	h, err := c.Open(lwp, addr, uint64(k+self))
	if err != nil {
		return Hits{}, err
	}
	defer h.Close()
	out, err := c.counted("", k, bps, timeout)
	if err != nil {
		return Hits{}, err
	}
	n, err := h.Count()
	if err != nil {
		return Hits{}, err
	}
	r := Hits{N: max(0, int(n)-self), Stop: c.T.StopOf(out)}
	if r.Stop == P.StopSignal && r.N >= k && strings.Contains(out, "SIGTRAP") {
		if pc, _, _, err := c.Where(); err == nil && pc == addr {
			r.Reached, r.N = true, k
		}
	}
	Debugf("fred-hits: 0x%x k %d self %d: counted %d, reached %v, stop %v", addr, k, self, n, r.Reached, r.Stop)
	return r, nil
}

// counted runs cmd (the debugger's continue if ""), a run that counts k
// executions, with the breakpoints bps, and says how long it took.
func (c Counter) counted(cmd string, k int, bps []string, timeout time.Duration) (string, error) {
	put, err := c.T.UseBreakpoints(bps)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	var out string
	if cmd == "" {
		out, err = c.T.Resume(timeout)
	} else {
		out, err = c.Query(cmd, timeout)
	}
	if c.Took != nil {
		c.Took(time.Since(t0), k)
	}
	if perr := put(); err == nil {
		err = perr
	}
	return out, err
}

// runSoft is Run with the debugger's software breakpoint.
func (c Counter) runSoft(addr uint64, k int, bps []string, timeout time.Duration) (Hits, error) {
	out, err := c.counted(c.Stepper.Hits(addr, k), k, bps, timeout)
	if err != nil {
		return Hits{}, err
	}
	v, err := P.ParseTagged(out, "FREDHITS ")
	if err != nil {
		return Hits{}, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return Hits{}, fmt.Errorf("bad answer from the counted run: %q", v)
	}
	r := Hits{N: n}
	if n >= k {
		if pc, _, _, err := c.Where(); err == nil && pc == addr {
			r.Reached, r.N, r.Stop = true, k, P.StopSignal
		}
	}
	if !r.Reached {
		r.Stop = c.T.StopOf(out)
	}
	Debugf("fred-hits (software): 0x%x k %d: counted %d, reached %v, stop %v", addr, k, n, r.Reached, r.Stop)
	return r, nil
}
