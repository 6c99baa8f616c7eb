package personalities

// The answers of the in-process debuggers' bootstraps (pdb's pdbBoot,
// perl's perlBoot): their fred_* commands print one "@fred KIND ..." line
// each, read the same way for both.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// fredAnswer finds the "@fred KIND ..." line the bootstrap's commands print
// and returns what follows KIND. "@fred ended" means no live program.
func fredAnswer(out, kind string) (string, error) {
	var last string
	found := false
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		if rest, ok := strings.CutPrefix(l, "@fred "); ok {
			if rest == "ended" {
				return "", ErrNotRunning
			}
			if r, ok := strings.CutPrefix(rest, kind+" "); ok {
				last, found = r, true
			}
		}
	}
	if !found {
		return "", fmt.Errorf("no answer in %q", strings.TrimSpace(out))
	}
	return last, nil
}

// parseFredStop reads "@fred stop N": a breakpoint's number (0: none), or
// "signal" (Ctrl-C).
// The answers of the bootstraps' fred_* commands (pdb and perl alike).

// parseFredWhere reads "@fred at LINE DEPTH FUNC\tFILE[\tEVENT]".
func parseFredWhere(out string) (Location, error) {
	f, err := fredAnswer(out, "at")
	if err != nil {
		return Location{}, err
	}
	fs := strings.SplitN(f, " ", 3)
	if len(fs) < 3 {
		return Location{}, fmt.Errorf("bad location %q", f)
	}
	line, _ := strconv.Atoi(fs[0])
	fn, file, _ := strings.Cut(fs[2], "\t")
	file, ev, _ := strings.Cut(file, "\t")
	return Location{File: file, Line: line, Function: fn, Unwind: ev == "return" || ev == "exception"}, nil
}

func parseFredDepth(out string) (int, error) {
	f, err := fredAnswer(out, "at")
	if err != nil {
		return 0, err
	}
	fs := strings.Fields(f)
	if len(fs) < 2 {
		return 0, fmt.Errorf("bad location %q", f)
	}
	return strconv.Atoi(fs[1])
}

func parseFredPid(out string) (int, error) {
	f, err := fredAnswer(out, "pid")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f)
}

func parseFredStop(out string) Stop {
	f, err := fredAnswer(out, "stop")
	switch {
	case err != nil || f == "0" || f == "":
		return StopDone
	case f == "signal":
		return StopSignal
	}
	return StopBreakpoint
}

// parseFredEval reads an expression's value. An exception is a value too:
// a name the program has not defined yet is a state reverse-watch can
// search from.
func parseFredEval(out string) (string, error) {
	if f, err := fredAnswer(out, "error"); err == nil {
		return "(raises " + f + ")", nil
	}
	return fredAnswer(out, "value")
}

func parseFredNewBp(out string) string {
	f, _ := fredAnswer(out, "bp")
	return f
}

// parseFredBps reads "@fred bp NUM ENABLED WHERE" lines.
func parseFredBps(out string) []Bp {
	var bps []Bp
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		rest, ok := strings.CutPrefix(l, "@fred bp ")
		if !ok {
			continue
		}
		// "N ENABLED[t] WHERE": t for a temporary one.
		f := strings.SplitN(rest, " ", 3)
		if len(f) == 3 {
			bps = append(bps, Bp{Num: f[0], Enabled: strings.HasPrefix(f[1], "1"), Temp: strings.HasSuffix(f[1], "t"), Where: f[2]})
		}
	}
	return bps
}

// seedEnv sets a variable for the interpreter unless the person did.
func seedEnv(kv ...string) []string {
	var env []string
	for i := 0; i+1 < len(kv); i += 2 {
		if _, ok := os.LookupEnv(kv[i]); !ok {
			env = append(env, kv[i]+"="+kv[i+1])
		}
	}
	return env
}

// Probes are copies an in-process debugger's program leaves of itself,
// paused, while the person's continue runs: one every Every of the
// program's CPU time; the latest two are kept and, of the others, at most
// eight evenly spaced (the others killed), so Slots FIFOs are enough.
// Each waits on one of them as Fork's copies do; woken, it stops at the
// program's next event.
type Probes struct {
	// Arm readies them for the next continue: Every in seconds, and
	// Slots FIFOs.
	Arm func(every float64, fifos []string) string
	// Collect ends them and names them: see ParseProbed.
	Collect string
	Every   float64
	Slots   int
}

// Probed is a copy left by Probes: which FIFO it waits on, its pid.
type Probed struct{ Slot, Pid int }

// ParseProbed reads "@fred probed live SLOT:PID,... dead PID,..." ("-":
// none): the copies that wait, oldest first (SLOT: which FIFO), and those
// killed since.
func ParseProbed(out string) (live []Probed, dead []int, err error) {
	a, err := fredAnswer(out, "probed")
	if err != nil {
		return nil, nil, err
	}
	f := strings.Fields(a)
	if len(f) != 4 || f[0] != "live" || f[2] != "dead" {
		return nil, nil, fmt.Errorf("unexpected probes answer %q", a)
	}
	if f[1] != "-" {
		for _, x := range strings.Split(f[1], ",") {
			sl, pid, ok := strings.Cut(x, ":")
			s, err1 := strconv.Atoi(sl)
			p, err2 := strconv.Atoi(pid)
			if !ok || err1 != nil || err2 != nil || s < 0 || p <= 0 {
				return nil, nil, fmt.Errorf("unexpected probe %q in %q", x, a)
			}
			live = append(live, Probed{Slot: s, Pid: p})
		}
	}
	if f[3] != "-" {
		for _, x := range strings.Split(f[3], ",") {
			p, err := strconv.Atoi(x)
			if err != nil || p <= 0 {
				return nil, nil, fmt.Errorf("unexpected pid %q in %q", x, a)
			}
			dead = append(dead, p)
		}
	}
	return live, dead, nil
}
