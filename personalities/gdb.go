package personalities

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// gdbSettle: see Tracer.Settle. Scheduler locking: the other threads
// stay where the snapshot has them while the current one settles.
var gdbSettle = []string{`python gdb.Breakpoint("*%d" % int(gdb.parse_and_eval("$pc")), internal=True, temporary=True)`,
	"python fred_locked('jump *$pc', 0)"}

// GDB is the personality for GNU gdb. Queries go through gdb's MI
// interpreter ("interpreter-exec mi"), whose answers are stable to parse.
var GDB = &Personality{
	Name:      "gdb",
	Debuggers: []string{"gdb", "gdb-multiarch"},
	Prompt:    "(gdb) ",
	StartHint: "'run' or 'start'",
	NoCtty:    true,
	Argv: func(argv []string, marker, tty string) []string {
		// -iex runs before anything else, so even the first prompt is the
		// marker. Editing off: fred's readline edits, and gdb's echo of a
		// line is then just the line.
		out := []string{argv[0],
			"-iex", "set prompt " + gdbEscape(marker),
			"-iex", "set editing off",
			"-iex", "set pagination off",
			"-iex", "set height 0",
			"-iex", "set inferior-tty " + tty,
		}
		// Every snapshot and restore re-attaches gdb, which then reads
		// libc's debug info again; an index cache of fred's own cuts an
		// attach from about 0.25 s to 0.07 s here.
		if dir, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(dir, "fred", "gdb-index")
			if os.MkdirAll(dir, 0o700) == nil {
				out = append(out, "-iex", "set index-cache directory "+dir, "-iex", "set index-cache enabled on")
			}
		}
		return append(out, argv[1:]...)
	},
	// fred's own breakpoints are gdb-internal ones (negative numbers): the
	// person never sees them and their numbering is untouched.
	Setup: func(string) []string {
		// A snapshot stops the program (SIGSTOP) while gdb lets go of it;
		// once gdb attaches again, each thread would report that stop
		// when it next runs, threads made later too. gdb swallows them.
		return []string{"python fred_bp = {}", gdbPython(gdbHelpers), gdbPython(gdbEarlyPy), gdbPython(gdbCommandsPy), gdbPython(gdbHitsPy), gdbPython(gdbStepisPy), gdbPython(gdbThreadsPy), gdbPython(gdbLockedPy), gdbPython(gdbRoundRobinPy), gdbPython(gdbScopePy), gdbPython(gdbBreakPy),
			"handle SIGSTOP nostop noprint nopass"}
	},
	Stepper:   gdbStepper,
	SoftWatch: "set can-use-hw-watchpoints 0",
	Plain:     []string{"-iex", "set style enabled off"},
	EarlyStart: &EarlyStart{
		Starti:     func(args string) string { return strings.TrimSpace("starti " + args) },
		Stopped:    "Program stopped.",
		ToEntry:    "python fred_to_entry()",
		ToMain:     "python fred_to_main()",
		Forget:     "python fred_early_forget()",
		Reached:    "python fred_early_reached('main')",
		AtMain:     "Temporary breakpoint -",
		Continue:   "continue",
		Continuing: "Continuing.",
		MainBreak:  "tbreak -qualified main",
		HasMain:    `python print("@fred main" if gdb.lookup_global_symbol("main") is not None else "@fred no main")`,
	},
	Threads: &Threads{List: "python fred_threads()", Current: "python fred_thread_now()", Select: "python fred_thread(%d)",
		Locked: "python fred_locked('%s', %g)", Blocked: MustPattern(`(?m)^@fred blocked( running)?\r?$`),
		Step: "python fred_own_step()", Exited: "@fred the thread exited", Hold: "set scheduler-locking step"},
	Batch: []string{"set confirm off"},
	Commands: []Spec{
		{Names: []string{"r", "run"}, Kind: Forward, Op: OpRun},
		{Names: []string{"start"}, Kind: Forward, Op: OpStart},
		{Names: []string{"starti"}, Kind: Forward, Op: "starti"},
		{Names: []string{"c", "fg", "cont[inue]"}, Kind: Forward, Op: OpContinue, Count: true},
		{Names: []string{"n", "next"}, Kind: Forward, Op: OpNext, Count: true},
		{Names: []string{"s", "step"}, Kind: Forward, Op: OpStep, Count: true},
		{Names: []string{"si", "stepi"}, Kind: Forward, Op: OpStepi, Count: true},
		{Names: []string{"ni", "nexti"}, Kind: Forward, Op: OpNexti, Count: true},
		{Names: []string{"fin[ish]"}, Kind: Forward, Op: OpFinish},
		{Names: []string{"u", "unt[il]"}, Kind: Forward, Op: OpUntil},
		{Names: []string{"adv[ance]"}, Kind: Forward, Op: OpAdvance},
		{Names: []string{"j", "jump"}, Kind: Forward, Op: OpJump},
		{Names: []string{"sig[nal]"}, Kind: Forward, Op: "signal"},
		{Names: []string{"set var[iable]"}, Kind: Mutate, Op: "set var"},
		{Names: []string{"cal[l]"}, Kind: Mutate, Op: "call"},
		{Names: []string{"ret[urn]"}, Kind: Mutate, Op: "return"},
		// The thread the person selects is the one later commands move:
		// replays select it again.
		{Names: []string{"t", "thr[ead]"}, Kind: Mutate, Op: "thread"},
		{Names: []string{"b", "br", "bre[ak]"}, Kind: Breakpoint, Op: "break"},
		{Names: []string{"tb[reak]"}, Kind: Breakpoint},
		{Names: []string{"hb[reak]"}, Kind: Breakpoint},
		{Names: []string{"thb[reak]"}, Kind: Breakpoint},
		{Names: []string{"rb[reak]"}, Kind: Breakpoint},
		{Names: []string{"d", "del[ete]"}, Kind: Breakpoint, Op: "delete"},
		{Names: []string{"cl[ear]"}, Kind: Breakpoint},
		{Names: []string{"dis[able]"}, Kind: Breakpoint},
		{Names: []string{"en[able]"}, Kind: Breakpoint},
		{Names: []string{"cond[ition]"}, Kind: Breakpoint},
		{Names: []string{"ig[nore]"}, Kind: Breakpoint},
		{Names: []string{"wa[tch]"}, Kind: Breakpoint},
		{Names: []string{"rw[atch]"}, Kind: Breakpoint},
		{Names: []string{"aw[atch]"}, Kind: Breakpoint},
		{Names: []string{"comm[ands]"}, Kind: Breakpoint},
		{Names: []string{"dp[rintf]"}, Kind: Breakpoint},
		{Names: []string{"p", "print", "inspect", "output"}, Kind: Inspect, Op: "print"},
		{Names: []string{"bt", "where", "ba[cktrace]"}, Kind: Inspect, Op: "backtrace"},
		{Names: []string{"i", "inf[o]"}, Kind: Inspect, Op: "info"},
		{Names: []string{"x"}, Kind: Inspect},
		{Names: []string{"l", "li[st]"}, Kind: Inspect, Op: "list"},
		{Names: []string{"disp[lay]"}, Kind: Inspect},
		{Names: []string{"f", "fr[ame]"}, Kind: Inspect, Op: "frame"},
		{Names: []string{"up"}, Kind: Inspect},
		{Names: []string{"do[wn]"}, Kind: Inspect, Op: "down"},
		{Names: []string{"pt[ype]"}, Kind: Inspect},
		{Names: []string{"wha[tis]"}, Kind: Inspect},
		{Names: []string{"sho[w]"}, Kind: Inspect},
		{Names: []string{"h", "he[lp]"}, Kind: Inspect, Op: "help"},
		{Names: []string{"disas[semble]"}, Kind: Inspect},
		{Names: []string{"apr[opos]"}, Kind: Inspect},
		{Names: []string{"ec[ho]"}, Kind: Inspect},
		{Names: []string{"printf"}, Kind: Inspect},
		{Names: []string{"k", "kill"}, Kind: Kill, Op: "kill"},
		{Names: []string{"q", "quit", "exit"}, Kind: Quit, Op: "quit"},
	},
	Mutates: func(c Command) bool {
		switch c.Op {
		case "print", "p", "call":
			args := c.Args
			// print's options end at "--": "print -pretty -- x".
			if strings.HasPrefix(args, "-") {
				if i := strings.Index(args, " -- "); i >= 0 {
					args = args[i+4:]
				} else if strings.HasPrefix(args, "-- ") {
					args = args[3:]
				}
			}
			return hasAssignment(args)
		case "set":
			first, _, _ := strings.Cut(c.Args, " ")
			first, _, _ = strings.Cut(first, "=")
			return hasAssignment(c.Args) && !gdbSettingsWithEquals[first]
		}
		return false
	},
	Repeat: func(last Command) string {
		// gdb drops the arguments of list and x when it repeats them, so
		// they continue where they stopped.
		switch last.Op {
		case "x", "list":
			return last.Op
		case "r", "run", "start", "starti", "kill", "quit":
			return ""
		}
		return last.Line
	},
	LocationCmd:   `interpreter-exec mi "-stack-info-frame"`,
	ParseLocation: parseGDBFrame,
	DepthCmd:      `interpreter-exec mi "-stack-info-depth"`,
	CallerCmd:     `interpreter-exec mi "-stack-list-frames 1 1"`,
	ParseCaller: func(out string) (uint64, error) {
		r, err := parseMIResult(out)
		if err != nil {
			return 0, err
		}
		a, ok := r["stack.frame.addr"]
		if !ok {
			return 0, fmt.Errorf("no caller frame in %q", strings.TrimSpace(StripANSI(out)))
		}
		return strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
	},
	ParseDepth: func(out string) (int, error) {
		r, err := parseMIResult(out)
		if err != nil {
			return 0, err
		}
		return strconv.Atoi(r["depth"])
	},
	// The current inferior is the one marked '*' (after a fork gdb may hold
	// several).
	PidCmd: "info inferiors",
	ParsePid: func(out string) (int, error) {
		m := gdbCurrentInferior.FindStringSubmatch(StripANSI(out))
		if m == nil {
			return 0, ErrNotRunning
		}
		return strconv.Atoi(m[1])
	},
	Ended: func(out string) bool {
		return gdbEnded.MatchString(StripANSI(out))
	},
	StopReason:       stopReason(gdbEnded, gdbBreakpointHit, gdbSignal),
	BreakpointsCmd:   `interpreter-exec mi "-break-list"`,
	ParseBreakpoints: parseGDBBreakpoints,
	Enable:           "enable %s",
	Disable:          "disable %s",
	Delete:           "python fred_bp.pop(%s).delete()",
	BreakAt:          `python fred_break(%q)`,
	Rebreak:          `python fred_break(%q, False)`,
	ParseNewBreakpoint: func(out string) string {
		if m := regexp.MustCompile(`[Bb]reakpoint (-?\d+) at`).FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return ""
	},
	// With the other threads held: a call in the expression (sum())
	// would otherwise let every thread run while it runs, and change what
	// it measures.
	EvalCmd: func(expr string) string {
		return "with scheduler-locking on -- interpreter-exec mi " + miQuote("-data-evaluate-expression "+miQuote(expr))
	},
	ScopeCmd:    "python fred_scope_here()",
	NoName:      MustPattern(`No symbol .* in current context`),
	Passes:      MustPattern(` ignore \d+( if |$)`),
	ScopeWhere:  func(string) string { return "python fred_scope_where()" },
	ScopeSelect: "'frame %d' selects it",
	ScopedEvalCmd: func(expr, _ string) string {
		return "python fred_eval_scoped(" + strconv.Quote(miQuote("-data-evaluate-expression "+miQuote(expr))) + ")"
	},
	ParseEval: func(out string) (string, error) {
		r, err := parseMIResult(out)
		if err != nil {
			return "", err
		}
		return r["value"], nil
	},
	Native: map[string]string{
		"reverse-step": "fred-reverse-step", "rs": "fred-reverse-step",
		"reverse-next": "fred-reverse-next", "rn": "fred-reverse-next",
		"reverse-finish":   "fred-reverse-finish",
		"reverse-continue": "fred-reverse-continue", "rc": "fred-reverse-continue",
		"reverse-stepi": "fred-reverse-stepi", "rsi": "fred-reverse-stepi",
		"reverse-nexti": "fred-reverse-nexti", "rni": "fred-reverse-nexti",
	},
	NativeRefused: MustPattern(`does not support this command|not meaningful in the outermost frame|Target .* does not support`),
	KillLine:      "\x15",
	EchoCmd:       func(token string) string { return "echo " + gdbEscape(token) },
	// python and py read a block only without an argument ("python
	// print(1)" is one line); pi never does.
	BlockStart: MustPattern(`^((comm(a(n(ds?)?)?)?|define|document|while|if)(\s|$)|(python|py)\s*$)`),
	Refused: func(out string) bool {
		return gdbRefused.MatchString(StripANSI(out))
	},
	NewRun: func(out string) bool {
		return regexp.MustCompile(`Starting program: \S`).MatchString(StripANSI(out))
	},
	Quiet: func(cmd string) string { return "with confirm off -- " + cmd },
	Tracer: &Tracer{Detach: "detach", Attach: "attach %d", Kill: "kill",
		Settle:   gdbSettle,
		Fork:     newGDBFork,
		Reap:     "python fred_reap(%d)",
		DebugDir: "debug-file-directory", Reload: []string{"nosharedlibrary", "sharedlibrary"},
		Show: "show %s", Set: "set %s %s",
		Env: "show environment %s", SetEnv: "set environment %s %s", UnsetEnv: "unset environment %s", EnvValue: gdbEnvValue,
		AtAddr: "*0x%016x",
		Watch:  "fredwatch %s %s",
		WatchKind: func(key, expr string) string {
			return fmt.Sprintf("python fred_watch_kind(%s, %s)", strconv.Quote(key), strconv.Quote(expr))
		},
		// fred's own watchpoints are internal: negative numbers.
		Triggered: MustPattern(`(?m)^(Thread \d+ (".*" )?hit )?Hardware watchpoint -\d+: `)},
	FrameCmd: "frame",
}

// gdbEnvValue reads "show environment NAME": "NAME = VALUE", or a line
// that it is not defined.
func gdbEnvValue(out, name string) string {
	if m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` = (.*)$`).FindStringSubmatch(out); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

var gdbRefused = regexp.MustCompile(`(?m)^(The program is not being run\.|Program not restarted\.|Not confirmed\.|Ambiguous command |Undefined command: |No symbol .* in current context\.|Cannot access memory|A syntax error in expression|"finish" not meaningful in the outermost frame\.|No executable file specified\.)`)

var gdbCurrentInferior = regexp.MustCompile(`(?m)^\*\s+\d+\s+process (\d+)`)

var gdbEnded = MustPattern(`\[Inferior \d+ \(process \d+\) (exited|killed)|(?m:^|\r)Program terminated with signal`)

var (
	// In a program with threads: `Thread 13 "mariadbd" hit Breakpoint 1, `.
	// "Breakpoint 1.2, ": a breakpoint with several locations (an inlined
	// function) names the one hit.
	gdbBreakpointHit = MustPattern(`(?m)^(Thread \d+ (".*" )?hit )?((Temporary breakpoint|Breakpoint) -?\d+(\.\d+)?, |(Hardware |Hardware read |Hardware access \(read/write\) )?[Ww]atchpoint -?\d+: )`)
	gdbSignal        = MustPattern(`(?m)^(Program|Thread \d+ .*) received signal `)
	// Watchpoints have no addr; fred leaves them to gdb.
)

var gdbSettingsWithEquals = map[string]bool{
	"env": true, "environment": true, "args": true, "prompt": true, "logging": true,
	"substitute-path": true, "sysroot": true, "solib-search-path": true,
	"directories": true, "cwd": true, "inferior-tty": true, "exec-wrapper": true,
}

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

func parseGDBFrame(out string) (Location, error) {
	r, err := parseMIResult(out)
	if err != nil {
		return Location{}, err
	}
	var l Location
	l.Function = r["frame.func"]
	l.File = r["frame.fullname"]
	if l.File == "" {
		l.File = r["frame.file"]
	}
	l.Line, _ = strconv.Atoi(r["frame.line"])
	if a := r["frame.addr"]; a != "" {
		l.PC, _ = strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
	}
	return l, nil
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

// gdbThreadsPy lists threads for fred (personalities.Threads): where each
// stands (its innermost frame with source on disk) and whether it is in a
// blocking call (a lock, condition or semaphore wait, join, sleep, I/O,
// or the replay log's wait for a thread's turn), judged by the functions
// below that frame; and its name.
//
//go:embed scripts/gdb_threads.py
var gdbThreadsPy string

// gdbRoundRobinPy is fred's round-robin statement (Threads.Step). It is a
// command of its own: a terminal line holds at most 4095 characters.
//
//go:embed scripts/gdb_round_robin.py
var gdbRoundRobinPy string

// gdbBreakPy makes a stop condition again for a replay (BreakAt), from a
// Bp.Where: a breakpoint or watchpoint of fred's own (internal: the
// person's numbering is untouched), or a catchpoint, which Python cannot
// make internal: it takes the next number.
//
//go:embed scripts/gdb_break.py
var gdbBreakPy string

// gdbScopePy evaluates a watched expression in the frame it was watched
// from (ScopeCmd), as gdb's watchpoints do: a local of main's is main's
// also while a callee runs. A frame is known by its function and the
// stack address its caller resumes at; when it is not on the selected
// thread's stack, the selected frame is used (a global needs none).
//
//go:embed scripts/gdb_scope.py
var gdbScopePy string

// gdbLockedPy runs a command with scheduler locking (Threads.Locked).
//
//go:embed scripts/gdb_locked.py
var gdbLockedPy string

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
