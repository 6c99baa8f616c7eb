package personalities

import (
	"fmt"
	"strconv"
	"strings"
)

// fileFork is forkcall.Tracer for a personality file's [fork]: each
// operation one of its commands, answered by the [queries] value and
// error patterns.
type fileFork struct {
	query                                        func(cmd string) (string, error)
	preload, load, call, registers, setRegisters string
	attach, kill                                 string
	settle                                       []string
	regAnswer, value, failed                     *Pattern
	refused                                      func(out string) bool // the file's [patterns] refused
	// names: the debugger's name for a register ("" where it shows none:
	// read as unknown, not written back)
	names map[string]string
}

// q runs a command and returns its value answer.
func (k *fileFork) q(cmd string) (string, error) {
	out, err := k.query(cmd)
	if err != nil {
		return "", fmt.Errorf("%q: %w", cmd, err)
	}
	out = StripANSI(out)
	if k.failed != nil {
		if g := k.failed.Named(out); g != nil {
			return "", fmt.Errorf("%q: %s", cmd, g["error"])
		}
	}
	if g := k.value.Named(out); g != nil {
		return g["value"], nil
	}
	return "", fmt.Errorf("%q: %w in %q", cmd, errNoAnswer, strings.TrimSpace(out))
}

func (k *fileFork) Preload(lib, old string) string {
	if old != "" {
		lib += ":" + old
	}
	return fmt.Sprintf(k.preload, lib)
}

func (k *fileFork) Load(lib string) error {
	_, err := k.q(expand(k.load, map[string]string{"lib": lib}, "lib"))
	return err
}

func (k *fileFork) Call(fn string, args [4]int64, threadsHeld bool) (int64, error) {
	held := "0"
	if threadsHeld {
		held = "1"
	}
	a := fmt.Sprintf("%d, %d, %d, %d", args[0], args[1], args[2], args[3])
	v, err := k.q(expand(k.call, map[string]string{"fn": fn, "args": a, "held": held}, "fn"))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// reg is the debugger's name for register n ("" if it shows none).
func (k *fileFork) reg(n string) string {
	if r, ok := k.names[n]; ok {
		if r == "-" {
			return ""
		}
		return r
	}
	return n
}

func (k *fileFork) Registers(names []string) (map[string]string, error) {
	var asked []string
	values := map[string]string{}
	back := map[string]string{}
	for _, n := range names {
		switch r := k.reg(n); {
		case r != "":
			asked, back[r] = append(asked, r), n
		case n == "orig_rax":
			values[n] = "0xffffffffffffffff" // no system call to restart
		default:
			values[n] = "-" // not written back
		}
	}
	cmd := expand(k.registers, map[string]string{"names": strings.Join(asked, " ")}, "names")
	out, err := k.query(cmd)
	if err != nil {
		return nil, err
	}
	out = StripANSI(out)
	if k.failed != nil {
		if g := k.failed.Named(out); g != nil {
			return nil, fmt.Errorf("reading registers: %s", g["error"])
		}
	}
	g := k.regAnswer.Named(out)
	if g == nil {
		return nil, fmt.Errorf("reading registers: %w in %q", errNoAnswer, strings.TrimSpace(out))
	}
	for _, kv := range strings.Fields(g["registers"]) {
		if r, v, ok := strings.Cut(kv, "="); ok && back[r] != "" {
			values[back[r]] = v
		}
	}
	if len(values) != len(names) {
		return nil, fmt.Errorf("reading registers: %q", g["registers"])
	}
	return values, nil
}

func (k *fileFork) SetRegisters(values map[string]string, names []string) error {
	var pairs []string
	for _, n := range names {
		if r := k.reg(n); r != "" {
			pairs = append(pairs, r+"="+values[n])
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	_, err := k.q(expand(k.setRegisters, map[string]string{"pairs": strings.Join(pairs, " ")}, "pairs"))
	return err
}

func (k *fileFork) Kill() error {
	_, err := k.query(k.kill)
	return err
}

func (k *fileFork) Attach(pid int) error {
	out, err := k.query(fmt.Sprintf(k.attach, pid))
	if err != nil {
		return err
	}
	if k.refused != nil && k.refused(out) {
		return fmt.Errorf("attaching to %d: %s", pid, strings.TrimSpace(StripANSI(out)))
	}
	return nil
}

func (k *fileFork) Settle() error {
	for _, c := range k.settle {
		if _, err := k.query(c); err != nil {
			return err
		}
	}
	return nil
}
