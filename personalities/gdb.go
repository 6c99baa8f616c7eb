package personalities

import (
	_ "embed"
	"fmt"
	"strings"
)

// GDB is the personality for GNU gdb: a file (files/gdb.fred) read by
// the protocol core of debuggers that trace the program (traced.go).
// Queries go through gdb's MI interpreter ("interpreter-exec mi"), whose
// answers are stable to parse (parseMIResult, and parseGDBBreakpoints
// for -break-list), and through the Python helpers in scripts/gdb_*.py.
var GDB = mustBuiltin("gdb.fred")

// hasAssignment reports whether a C-like expression assigns: '=' that is not
// part of ==, !=, <=, >=, or ++/--.
func hasAssignment(e string) bool {
	e = blankStrings(e, 0)
	if strings.Contains(e, "++") || strings.Contains(e, "--") {
		return true
	}
	for i := 0; i < len(e); i++ {
		if e[i] != '=' {
			continue
		}
		if i+1 < len(e) && e[i+1] == '=' {
			i++
			continue
		}
		if i > 0 && strings.IndexByte("=!<>", e[i-1]) >= 0 {
			if i > 1 && (e[i-1] == '<' || e[i-1] == '>') && e[i-2] == e[i-1] {
				return true
			}
			continue
		}
		return true
	}
	return false
}

// gdbEscape writes s as a gdb string setting, whose escapes gdb decodes.
func gdbEscape(s string) string {
	var b strings.Builder
	for _, r := range []byte(s) {
		if r < 0x20 || r == '\\' || r >= 0x7f {
			fmt.Fprintf(&b, "\\%03o", r)
		} else {
			b.WriteByte(r)
		}
	}
	return b.String()
}

// parseMIResult reads the first MI result record (^done or ^error) in out
// into a flat map: nested tuples become dotted keys ("frame.line"); lists
// keep their first element only, which is all fred asks for.
func parseMIResult(out string) (map[string]string, error) {
	var rec string
	for _, line := range strings.FieldsFunc(StripANSI(out), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.HasPrefix(line, "^") {
			rec = line
			break
		}
	}
	if rec == "" {
		return nil, fmt.Errorf("no MI result in %q", strings.TrimSpace(out))
	}
	class, body, _ := strings.Cut(rec[1:], ",")
	m := map[string]string{}
	p := miParser{s: body}
	p.results("", m)
	switch class {
	case "done", "running", "connected":
		return m, nil
	case "error":
		msg := m["msg"]
		if msg == "No registers." || strings.Contains(msg, "not being run") || strings.Contains(msg, "No stack") || strings.Contains(msg, "No thread selected") {
			return nil, ErrNotRunning
		}
		if strings.Contains(msg, "while in a function called from GDB") {
			return nil, fmt.Errorf("%w: gdb: %s", ErrCallStopped, msg)
		}
		return nil, fmt.Errorf("gdb: %s", msg)
	}
	return nil, fmt.Errorf("unexpected MI record %q", rec)
}

type miParser struct {
	s string
	i int
}

func (p *miParser) results(prefix string, m map[string]string) {
	for p.i < len(p.s) {
		if c := p.s[p.i]; c == '{' || c == '[' || c == '"' {
			// A bare value inside a list.
			p.value(strings.TrimSuffix(prefix, "."), m)
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			return
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] != '=' && p.s[p.i] != ',' && p.s[p.i] != '}' && p.s[p.i] != ']' {
			p.i++
		}
		key := p.s[start:p.i]
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.value(prefix+key, m)
		}
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return
	}
}

func (p *miParser) value(key string, m map[string]string) {
	if p.i >= len(p.s) {
		return
	}
	switch p.s[p.i] {
	case '"':
		p.i++
		var b strings.Builder
		for p.i < len(p.s) && p.s[p.i] != '"' {
			if p.s[p.i] == '\\' && p.i+1 < len(p.s) {
				p.i++
				switch p.s[p.i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(p.s[p.i])
				}
			} else {
				b.WriteByte(p.s[p.i])
			}
			p.i++
		}
		p.i++
		if _, seen := m[key]; !seen {
			m[key] = b.String()
		}
	case '{', '[':
		closer := byte('}')
		if p.s[p.i] == '[' {
			closer = ']'
		}
		p.i++
		p.results(key+".", m)
		for p.i < len(p.s) && p.s[p.i] != closer {
			p.i++ // unparsed tail; lists keep their first element
		}
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
		}
	}
}

// miQuote quotes s as a C string, as MI's and interpreter-exec's
// arguments want.
func miQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// parseGDBBreakpoints reads -break-list: breakpoints (temporary ones too),
// watchpoints and catchpoints, each with a Where that fred_break makes
// again after the person deleted it.
func parseGDBBreakpoints(out string) []Bp {
	var bps []Bp
	rest := StripANSI(out)
	for {
		i := strings.Index(rest, "bkpt={")
		if i < 0 {
			return bps
		}
		p := miParser{s: rest[i+len("bkpt={"):]}
		m := map[string]string{}
		p.results("", m)
		rest = p.s[p.i:]
		b := Bp{Num: m["number"], Enabled: m["enabled"] == "y", Temp: m["disp"] == "del"}
		switch t := m["type"]; t {
		case "breakpoint", "hw breakpoint":
			b.Where, b.Orig = "*"+m["addr"], m["original-location"]
			if a := m["addr"]; a == "" || a == "<MULTIPLE>" || a == "<PENDING>" {
				b.Where = m["original-location"]
			}
		case "watchpoint", "hw watchpoint", "read watchpoint", "acc watchpoint":
			b.Where = map[string]string{"read watchpoint": "rwatch ", "acc watchpoint": "awatch "}[t]
			if b.Where == "" {
				b.Where = "watch "
			}
			b.Where += m["what"]
		case "catchpoint":
			b.Where = "catch " + m["catch-type"]
			switch m["catch-type"] {
			case "syscall", "signal":
				b.Where += " " + strings.ReplaceAll(m["what"], ",", "")
			}
		default:
			continue // dprintf, tracepoints: they do not stop the program
		}
		if b.Num == "" || strings.TrimSpace(b.Where) == "" || b.Where == "*" {
			continue
		}
		// An ignore count and the condition are part of where it stops:
		// a replay after the count ran out, or after the person deleted
		// or changed the condition, sees the ones the run saw.
		if n := m["ignore"]; n != "" && n != "0" {
			b.Where += " ignore " + n
		}
		if c := m["cond"]; c != "" {
			b.Where += " if " + c
			if b.Orig != "" {
				b.Orig += " if " + c
			}
		}
		bps = append(bps, b)
	}
}
