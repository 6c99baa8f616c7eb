package personalities

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// PDB is the personality for Python's pdb (`python3 -m pdb prog.py`, or
// `pdb prog.py`). pdb lives inside the interpreter it debugs. fred starts it
// through a small bootstrap (pdbBoot) that sets the prompt to fred's
// marker, reads lines without GNU readline (the terminal's echo is then one
// plain line), and adds hidden fred_* commands whose answers are one
// machine-readable line each. Everything else is pdb's own pdb.main().
var PDB = &Personality{
	Name:      "pdb",
	Debuggers: append([]string{"pdb", "pdb3", "python", "python3"}, pythonVersions()...),
	Prompt:    "(Pdb) ",
	StartHint: "'run' (pdb starts it again from the top)",
	Argv:      pdbArgv,
	Env:       seedEnv("PYTHONHASHSEED", "0"),
	Setup:     func(string) []string { return nil },
	InProcess: true,
	Commands: []Spec{
		{Names: []string{"n", "next"}, Kind: Forward, Op: OpNext},
		{Names: []string{"s", "step"}, Kind: Forward, Op: OpStep},
		{Names: []string{"c", "cont", "continue"}, Kind: Forward, Op: OpContinue},
		// pdb's return stops at the "--Return--" of the current frame, still
		// inside it: not gdb's finish, so fred goes back over it as a whole.
		{Names: []string{"r", "return"}, Kind: Forward, Op: "return"},
		{Names: []string{"unt", "until"}, Kind: Forward, Op: OpUntil},
		// pdb's jump moves the next line without running anything.
		{Names: []string{"j", "jump"}, Kind: Forward, Op: OpJump},
		{Names: []string{"run", "restart"}, Kind: Forward, Op: OpRun},
		{Names: []string{"b", "break"}, Kind: Breakpoint, Op: "break"},
		{Names: []string{"tbreak"}, Kind: Breakpoint},
		{Names: []string{"cl", "clear"}, Kind: Breakpoint, Op: "clear"},
		{Names: []string{"disable"}, Kind: Breakpoint},
		{Names: []string{"enable"}, Kind: Breakpoint},
		{Names: []string{"condition"}, Kind: Breakpoint},
		{Names: []string{"ignore"}, Kind: Breakpoint},
		{Names: []string{"commands"}, Kind: Breakpoint},
		{Names: []string{"p"}, Kind: Inspect, Op: "p"},
		{Names: []string{"pp"}, Kind: Inspect},
		{Names: []string{"w", "where", "bt"}, Kind: Inspect, Op: "where"},
		{Names: []string{"l", "list"}, Kind: Inspect, Op: "list"},
		{Names: []string{"ll", "longlist"}, Kind: Inspect, Op: "longlist"},
		{Names: []string{"a", "args"}, Kind: Inspect, Op: "args"},
		{Names: []string{"u", "up"}, Kind: Inspect, Op: "up"},
		{Names: []string{"d", "down"}, Kind: Inspect, Op: "down"},
		{Names: []string{"display"}, Kind: Inspect},
		{Names: []string{"undisplay"}, Kind: Inspect},
		{Names: []string{"whatis"}, Kind: Inspect},
		{Names: []string{"source"}, Kind: Inspect},
		{Names: []string{"rv", "retval"}, Kind: Inspect, Op: "retval"},
		{Names: []string{"h", "help", "?"}, Kind: Inspect, Op: "help"},
		{Names: []string{"q", "quit", "exit"}, Kind: Quit, Op: "quit"},
		{Names: []string{"alias"}, Kind: Other},
		{Names: []string{"unalias"}, Kind: Other},
		{Names: []string{"interact"}, Kind: Other},
		{Names: []string{"debug"}, Kind: Other},
	},
	Split: pdbSplit,
	// pdb runs any other line as a Python statement in the program.
	Mutates: func(c Command) bool {
		switch c.Op {
		case "p", "pp", "display", "whatis":
			return strings.Contains(blankStrings(c.Args, '#'), ":=")
		case "alias", "unalias", "interact", "debug":
			return false
		}
		if c.Kind != Other {
			return false
		}
		return pyMutates(strings.TrimPrefix(c.Line, "!"))
	},
	Repeat: func(last Command) string {
		// pdb repeats the last line; list goes on where it stopped.
		if last.Op == "list" {
			return "list"
		}
		if last.Kind == Quit {
			return ""
		}
		return last.Line
	},
	LocationCmd:   "fred_where",
	ParseLocation: parseFredWhere,
	DepthCmd:      "fred_where",
	ParseDepth:    parseFredDepth,
	PidCmd:        "fred_pid",
	ParsePid:      parseFredPid,
	StopReason:    stopReason(pdbEnded, nil, pdbSignal), // breakpoints: StopCmd
	StopCmd:       "fred_stop",
	ParseStop:     parseFredStop,
	Ended:         func(out string) bool { return pdbEnded.MatchString(out) },
	NewRun: func(out string) bool {
		return regexp.MustCompile(`(?m)^Restarting .* with arguments:`).MatchString(out)
	},
	BreakpointsCmd:     "fred_bps",
	ParseBreakpoints:   parseFredBps,
	Enable:             "enable %s",
	Disable:            "disable %s",
	Delete:             "fred_delete %s",
	BreakAt:            "fred_break %q",
	ParseNewBreakpoint: parseFredNewBp,
	EvalCmd:            func(expr string) string { return "fred_eval " + expr },
	ScopeCmd:           "fred_scope",
	ScopedEvalCmd:      func(expr, key string) string { return "fred_eval_scoped " + key + " " + expr },
	ScopeWhere:         func(key string) string { return "fred_scope_where " + key },
	ScopeSelect:        "'up %d' selects it",
	KillLine:           "\x15",
	EchoCmd:            func(token string) string { return "fred_echo " + pyQuote(token) },
	ParseEval:          parseFredEval,
	EvalFailed:         MustPattern(`^\(raises `),
	Passes:             MustPattern(` ignore \d+`),
	BlockStart:         MustPattern(`^commands(\s|$)`),
	BlockEnd:           MustPattern(`^(c|cont|continue|s|step|n|next|r|return|j|jump|q|quit|exit)(\s|$)`),
	Refused: func(out string) bool {
		return pdbError.MatchString(out) && !pdbStopLine.MatchString(out)
	},
	Quiet:     func(cmd string) string { return cmd },
	FrameCmd:  "fred_frame",
	SaveState: "fred_save %s",
	LoadState: "fred_load %s",
	Fork:      "fred_fork %s",
	Probes: &Probes{Arm: func(every float64, fifos []string) string {
		return fmt.Sprintf("fred_probes %g %s", every, strings.Join(fifos, " "))
	}, Collect: "fred_probed", Every: 0.1, Slots: 11},
	NoCountArg: true,
	Stepper: &Stepper{Nexts: func(max int, m NextsMode) string {
		if m.Shallower {
			return fmt.Sprintf("fred_nexts %d shallower", max)
		}
		return fmt.Sprintf("fred_nexts %d", max)
	}, Steps: func(max int, m StepsMode) string {
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
	}, StepsWatch: true, WatchMax: 1 << 21},
}

var (
	pdbEnded    = MustPattern(`(?m)^(The program finished and will be restarted|The program exited via sys\.exit\(\)\.|Post mortem debugger finished\. )`)
	pdbSignal   = MustPattern(`(?m)^(Uncaught exception\. Entering post mortem debugging|Program interrupted\. \(Use 'cont' to resume\)\.|--KeyboardInterrupt--)`)
	pdbError    = regexp.MustCompile(`(?m)^\*\*\* `)
	pdbStopLine = regexp.MustCompile(`(?m)^> \S.*\(\d+\)\S*\(\)`)
)

// pdbArgv turns `pdb ARGS`, `python3 -m pdb ARGS` or `python3 [OPTS] ARGS`
// into `python3 [OPTS] -c BOOTSTRAP ARGS`: pdb.main() then sees ARGS as it
// would under -m pdb.
func pdbArgv(argv []string, marker, tty string) []string {
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
	out = append(out, "-c", strings.Replace(pdbBoot, "FRED_PROMPT", pyQuote(marker), 1))
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

// pdbBoot runs pdb.main() with fred's changes to the Pdb class. pdb clears
// __main__ and gives it to the program, so fred's functions get globals of
// their own: the program's names cannot shadow theirs.
//
//go:embed scripts/pdb_boot.py
var pdbBoot string

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

func pythonVersions() []string {
	var v []string
	for i := 6; i <= 15; i++ {
		v = append(v, "python3."+strconv.Itoa(i))
	}
	return v
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
