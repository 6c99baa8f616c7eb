package personalities

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/internal/forkcall"
)

// gdbFork is forkcall.Tracer in gdb's commands, through MI where there is an
// answer to read: gdb.fred's "[fork] driver: gdb-mi" (forkDrivers).
type gdbFork struct {
	query  func(cmd string) (string, error)
	settle []string
	regnum map[string]int // gdb's register numbers
}

var _ forkcall.Tracer = (*gdbFork)(nil)

var (
	miError    = regexp.MustCompile(`\^error,msg="((?:[^"\\]|\\.)*)"`)
	miValue    = regexp.MustCompile(`\^done,value="(-?\d+)"`)
	miRegValue = regexp.MustCompile(`\{number="(\d+)",value="([^"]*)"\}`)
	miRegNames = regexp.MustCompile(`"([^"]*)"`)
)

func (g *gdbFork) q(cmd string) (string, error) {
	out, err := g.query(cmd)
	if err != nil {
		return out, fmt.Errorf("%q: %w", cmd, err)
	}
	if m := miError.FindStringSubmatch(out); m != nil {
		return out, fmt.Errorf("%q: %s", cmd, m[1])
	}
	return out, nil
}

func (g *gdbFork) mi(cmd string) (string, error) { return g.q(`interpreter-exec mi "` + cmd + `"`) }

func (g *gdbFork) Preload(lib, old string) string {
	if old != "" {
		lib += ":" + old
	}
	return "set environment LD_PRELOAD " + lib
}

func (g *gdbFork) Load(lib string) error {
	_, err := g.q(fmt.Sprintf(`call (void)dlopen("%s", 2)`, lib))
	return err
}

func (g *gdbFork) Call(fn string, args [4]int64, threadsHeld bool) (int64, error) {
	// gdb must let the fork child go (it removes its breakpoints from the
	// child first); -data-evaluate-expression leaves gdb's value history
	// alone. The expression must not contain spaces.
	with := ""
	if threadsHeld {
		with = "with scheduler-locking on -- "
	}
	out, err := g.q(fmt.Sprintf(`%swith detach-on-fork on -- with follow-fork-mode parent -- with unwindonsignal on -- `+
		`interpreter-exec mi "-data-evaluate-expression ((long(*)(long,long,long,long))%s)(%d,%d,%d,%d)"`,
		with, fn, args[0], args[1], args[2], args[3]))
	if err != nil {
		return 0, err
	}
	m := miValue.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("unexpected answer from the call of %s: %q", fn, strings.TrimSpace(out))
	}
	return strconv.ParseInt(m[1], 10, 64)
}

func (g *gdbFork) Registers(names []string) (map[string]string, error) {
	if g.regnum == nil {
		out, err := g.mi("-data-list-register-names")
		if err != nil {
			return nil, err
		}
		i := strings.Index(out, "register-names=[")
		if i < 0 {
			return nil, fmt.Errorf("reading register names: %q", strings.TrimSpace(out))
		}
		g.regnum = map[string]int{}
		for i, m := range miRegNames.FindAllStringSubmatch(out[i:], -1) {
			g.regnum[m[1]] = i
		}
	}
	cmd := "-data-list-register-values x"
	name := map[string]string{}
	for _, r := range names {
		n, ok := g.regnum[r]
		if !ok {
			return nil, fmt.Errorf("gdb has no register %s (x86-64 Linux only)", r)
		}
		cmd += " " + strconv.Itoa(n)
		name[strconv.Itoa(n)] = r
	}
	out, err := g.mi(cmd)
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	for _, m := range miRegValue.FindAllStringSubmatch(out, -1) {
		values[name[m[1]]] = m[2]
	}
	if len(values) != len(names) {
		return nil, fmt.Errorf("reading registers: %q", strings.TrimSpace(out))
	}
	return values, nil
}

func (g *gdbFork) SetRegisters(values map[string]string, names []string) error {
	if g.regnum == nil {
		return errors.New("registers written before any was read")
	}
	cmd := "-data-write-register-values x"
	for _, r := range names {
		cmd += fmt.Sprintf(" %d %s", g.regnum[r], values[r])
	}
	_, err := g.mi(cmd)
	return err
}

func (g *gdbFork) Kill() error {
	_, err := g.q("with confirm off -- kill")
	return err
}

func (g *gdbFork) Attach(pid int) error {
	out, err := g.q(fmt.Sprintf("attach %d", pid))
	if err != nil {
		return err
	}
	if strings.Contains(out, "ptrace:") || strings.Contains(out, "Could not attach") {
		s := strings.TrimSpace(out)
		return fmt.Errorf("gdb could not attach to %d: %s", pid, s[strings.LastIndexByte(s, '\n')+1:])
	}
	return nil
}

func (g *gdbFork) Settle() error {
	for _, c := range g.settle {
		if _, err := g.q(c); err != nil {
			return err
		}
	}
	return nil
}
