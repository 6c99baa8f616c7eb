package personalities

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/internal/forkcall"
)

// lldbFork is forkcall.Tracer in lldb: calls and registers through the
// helpers' SB API calls (scripts/lldb_helpers.py).
type lldbFork struct {
	query func(cmd string) (string, error)
}

func newLLDBFork(query func(cmd string) (string, error)) forkcall.Tracer {
	return &lldbFork{query: query}
}

// q runs a helper and returns its "@fred value" answer.
func (l *lldbFork) q(cmd string) (string, error) {
	out, err := l.query(cmd)
	if err != nil {
		return "", fmt.Errorf("%q: %w", cmd, err)
	}
	if m, err := lldbAnswer(out, "error"); err == nil {
		return "", fmt.Errorf("%q: %s", cmd, m)
	}
	return lldbAnswer(out, "value")
}

func (l *lldbFork) Preload(lib, old string) string {
	if old != "" {
		lib += ":" + old
	}
	return "settings append target.env-vars LD_PRELOAD=" + lib
}

func (l *lldbFork) Load(lib string) error {
	_, err := l.q("script fred_load(" + strconv.Quote(lib) + ")")
	return err
}

func (l *lldbFork) Call(fn string, args [4]int64, threadsHeld bool) (int64, error) {
	held := "False"
	if threadsHeld {
		held = "True"
	}
	v, err := l.q(fmt.Sprintf("script fred_call(%s, %d, %d, %d, %d, %s)", strconv.Quote(fn), args[0], args[1], args[2], args[3], held))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// lldbRegs: lldb's names for the registers the fork backend keeps. lldb
// 14 shows neither fs_base, gs_base nor orig_rax: the first two a fork
// copy has as its parent had them; orig_rax reads as "no system call to
// restart" (a copy of a program stopped inside a blocking call, by
// Ctrl-C, returns from that call with EINTR rather than restarting it).
var lldbRegs = map[string]string{"eflags": "rflags", "fs_base": "", "gs_base": "", "orig_rax": ""}

func lldbReg(name string) string {
	if n, ok := lldbRegs[name]; ok {
		return n
	}
	return name
}

func (l *lldbFork) Registers(names []string) (map[string]string, error) {
	var asked []string
	values := map[string]string{}
	for _, n := range names {
		switch r := lldbReg(n); {
		case r != "":
			asked = append(asked, r)
		case n == "orig_rax":
			values[n] = "0xffffffffffffffff"
		default:
			values[n] = "-" // not written back
		}
	}
	out, err := l.query("script fred_registers(" + strconv.Quote(strings.Join(asked, " ")) + ")")
	if err != nil {
		return nil, err
	}
	if m, err := lldbAnswer(out, "error"); err == nil {
		return nil, fmt.Errorf("reading registers: %s", m)
	}
	m, err := lldbAnswer(out, "registers")
	if err != nil {
		return nil, err
	}
	back := map[string]string{}
	for _, n := range names {
		back[lldbReg(n)] = n
	}
	for _, kv := range strings.Fields(m) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			values[back[k]] = v
		}
	}
	if len(values) != len(names) {
		return nil, fmt.Errorf("reading registers: %q", m)
	}
	return values, nil
}

func (l *lldbFork) SetRegisters(values map[string]string, names []string) error {
	var pairs []string
	for _, n := range names {
		if r := lldbReg(n); r != "" {
			pairs = append(pairs, r+"="+values[n])
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	_, err := l.q("script fred_set_registers(" + strconv.Quote(strings.Join(pairs, " ")) + ")")
	return err
}

func (l *lldbFork) Kill() error {
	_, err := l.query("process kill")
	return err
}

func (l *lldbFork) Attach(pid int) error {
	out, err := l.query(fmt.Sprintf("process attach --pid %d", pid))
	if err != nil {
		return err
	}
	if lldbRefused.MatchString(StripANSI(out)) {
		return fmt.Errorf("lldb could not attach to %d: %s", pid, strings.TrimSpace(StripANSI(out)))
	}
	return nil
}

func (l *lldbFork) Settle() error {
	for _, c := range LLDB.Tracer.Settle {
		if _, err := l.query(c); err != nil {
			return err
		}
	}
	return nil
}
