package personalities

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// PDB is the personality for Python's pdb (`python3 -m pdb prog.py`, or
// `pdb prog.py`): a file (files/pdb.fred) read by the protocol core of
// debuggers inside the program (inprocfile.go), its language "python"
// the code below. pdb lives inside the interpreter it debugs. fred starts
// it through a small bootstrap (scripts/pdb_boot.py) that sets the prompt
// to fred's marker, reads lines without GNU readline (the terminal's echo
// is then one plain line), and adds hidden fred_* commands whose answers
// are one machine-readable line each. Everything else is pdb's own
// pdb.main().
var PDB = mustBuiltin("pdb.fred")

// pdbSteps is the bootstrap's fred_steps command.
func pdbSteps(max int, m StepsMode) string {
	cmd := fmt.Sprintf("fred_steps %d", max)
	if m.AtBps {
		cmd += " bps"
	}
	if m.Until != "" {
		cmd += " " + m.Until
	}
	if m.Track {
		cmd += " track"
	}
	if m.Watch.Expr != "" {
		key := m.Watch.Key
		if key == "" {
			key = "-"
		}
		cmd += " watch " + key + " " + m.Watch.Expr
	}
	return cmd
}

// pdbLaunch turns `pdb ARGS`, `python3 -m pdb ARGS` or `python3 [OPTS] ARGS`
// into `python3 [OPTS] -c BOOTSTRAP ARGS`: pdb.main() then sees ARGS as it
// would under -m pdb. The bootstrap runs pdb.main() with fred's changes to
// the Pdb class; pdb clears __main__ and gives it to the program, so
// fred's functions get globals of their own: the program's names cannot
// shadow theirs.
func pdbLaunch(argv []string, boot, marker string) []string {
	python := argv[0]
	var opts, rest []string
	if b := filepath.Base(python); b == "pdb" || strings.HasPrefix(b, "pdb3") {
		python, rest = "python3", argv[1:]
	} else {
		args := argv[1:]
		for i := 0; i < len(args); i++ {
			a := args[i]
			if a == "-m" && i+1 < len(args) {
				if args[i+1] != "pdb" {
					rest = append([]string{"-m"}, args[i+1:]...) // pdb -m MODULE
				} else {
					rest = args[i+2:]
				}
				break
			}
			if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
				rest = args[i:]
				break
			}
			opts = append(opts, a)
			if (a == "-X" || a == "-W") && i+1 < len(args) {
				i++
				opts = append(opts, args[i])
			}
		}
	}
	out := append([]string{python}, opts...)
	out = append(out, "-c", strings.Replace(boot, "FRED_PROMPT", pyQuote(marker), 1))
	return append(out, rest...)
}

// pdbSplit cuts a line as pdb's parseline does: the command is the leading
// identifier ("n=5" is next), "?" is help. A line that is no command is
// Python, kept whole.
func pdbSplit(line string) (string, string) {
	if strings.HasPrefix(line, "?") {
		return "?", strings.TrimSpace(line[1:])
	}
	i := 0
	for i < len(line) && (line[i] == '_' || line[i] >= 'a' && line[i] <= 'z' || line[i] >= 'A' && line[i] <= 'Z' || line[i] >= '0' && line[i] <= '9') {
		i++
	}
	if !pdbWords[line[:i]] {
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

// pdbWords are pdb's commands (Python 3.11).
var pdbWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`EOF a alias args b break bt c cl clear commands condition cont continue d
		debug disable display down enable exit h help ignore interact j jump l list ll longlist n next p pp q quit
		r restart return retval run rv s source step tbreak u unalias undisplay unt until up w whatis where`) {
		pdbWords[w] = true
	}
}

// pyQuote writes s as a Python string literal, bytes outside printable
// ASCII as \x escapes.
func pyQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, c := range []byte(s) {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '\'' {
			fmt.Fprintf(&b, "\\x%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// pyPure are calls a statement typed at the pdb prompt may make without
// being replayed: they only look.
var pyPure = map[string]bool{
	"print": true, "len": true, "repr": true, "str": true, "type": true, "dir": true,
	"vars": true, "id": true, "isinstance": true, "hasattr": true, "getattr": true,
	"sorted": true, "list": true, "tuple": true, "dict": true, "set": true, "int": true,
	"float": true, "bool": true, "abs": true, "min": true, "max": true, "sum": true,
	"any": true, "all": true, "hex": true, "oct": true, "bin": true, "chr": true,
	"ord": true, "range": true, "enumerate": true, "zip": true, "format": true,
	"round": true, "keys": true, "values": true, "items": true, "get": true,
	"count": true, "index": true, "startswith": true, "endswith": true, "locals": true,
	"globals": true, "callable": true, "hash": true, "pprint": true, "copy": true,
}

var pyCall = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*\(`)

// pyMutates reports whether a Python statement typed at the pdb prompt may
// change the program: an assignment, del, import, a definition, a compound
// statement, or a call of anything but a few functions that only look.
func pyMutates(stmt string) bool {
	e := strings.TrimSpace(blankStrings(stmt, '#'))
	if e == "" {
		return false
	}
	first := strings.FieldsFunc(e, func(r rune) bool { return r == ' ' || r == '(' || r == ':' || r == '\t' })[0]
	switch first {
	case "del", "import", "from", "global", "nonlocal", "def", "class", "for", "while", "with", "if", "try", "raise", "exec", "async", "lambda":
		return true
	}
	depth := 0
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ':':
			if i+1 < len(e) && e[i+1] == '=' {
				return true // walrus
			}
		case '=':
			if i+1 < len(e) && e[i+1] == '=' {
				i++
				continue
			}
			if i > 0 && strings.IndexByte("=!<>", e[i-1]) >= 0 && !(i > 1 && e[i-2] == e[i-1]) {
				continue
			}
			if depth == 0 { // not a keyword argument
				return true
			}
		}
	}
	for _, m := range pyCall.FindAllStringSubmatch(e, -1) {
		if !pyPure[m[1]] {
			return true
		}
	}
	return false
}
