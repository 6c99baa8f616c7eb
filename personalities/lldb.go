package personalities

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// LLDB is the personality for LLVM's lldb. fred's queries go through its
// Python (scripts/lldb_helpers.py) and answer one "@fred" line each; the
// person's commands and lldb's own output are left as they are.
var LLDB = &Personality{
	Name:             "lldb",
	Debuggers:        []string{"lldb", "lldb-14", "lldb-15", "lldb-16", "lldb-17", "lldb-18", "lldb-19"},
	Prompt:           "(lldb) ",
	StartHint:        "'run' or 'process launch'",
	NoCtty:           true,
	LineEditorAtSize: true,
	Argv: func(argv []string, marker, tty string) []string {
		// -Q: the settings below are not echoed, so the first prompt
		// fred sees is the marker, once. The program's terminal is the
		// pty, as gdb's inferior-tty.
		out := []string{argv[0], "-Q",
			"-O", "settings set prompt " + marker,
			"-O", "settings set target.input-path " + tty,
			"-O", "settings set target.output-path " + tty,
			"-O", "settings set target.error-path " + tty,
		}
		// lldb runs with TERM=dumb (Env): its line editor would drop the
		// marker's control bytes. The program gets the person's terminal.
		if term := os.Getenv("TERM"); term != "" {
			out = append(out, "-O", "settings set target.env-vars TERM="+term)
		}
		if p := lldbPythonPath(); p != "" {
			// lldb's own Python path, not the program's.
			out = append(out, "-O", "settings append target.unset-env-vars PYTHONPATH")
		}
		return append(out, argv[1:]...)
	},
	Env: lldbEnv(),
	Setup: func(string) []string {
		// Synchronous: a command that resumes the program prompts once
		// the program stops again, as gdb does (lldb's own default, at a
		// terminal, prompts at once and reports the stop later).
		return append(lldbScript(lldbHelpersPy), "script lldb.debugger.SetAsync(False)", "target stop-hook add -P FredStopHook")
	},
	Plain: []string{"-X"},
	Batch: []string{"settings set auto-confirm true"},
	// lldb's next and step take no count.
	NoCountArg: true,
	Commands: []Spec{
		{Names: []string{"r", "run", "process launch"}, Kind: Forward, Op: OpRun},
		{Names: []string{"c", "continue", "process continue"}, Kind: Forward, Op: OpContinue},
		{Names: []string{"n", "next", "thread step-over"}, Kind: Forward, Op: OpNext},
		{Names: []string{"s", "step", "thread step-in"}, Kind: Forward, Op: OpStep},
		{Names: []string{"si", "stepi", "thread step-inst"}, Kind: Forward, Op: OpStepi},
		{Names: []string{"ni", "nexti", "thread step-inst-over"}, Kind: Forward, Op: OpNexti},
		{Names: []string{"finish", "thread step-out"}, Kind: Forward, Op: OpFinish},
		{Names: []string{"thread until"}, Kind: Forward, Op: OpUntil},
		{Names: []string{"j", "jump", "thread jump"}, Kind: Forward, Op: OpJump},
		{Names: []string{"process signal"}, Kind: Forward, Op: "signal"},
		{Names: []string{"thread select"}, Kind: Mutate, Op: "thread"},
		{Names: []string{"thread return"}, Kind: Mutate, Op: "return"},
		{Names: []string{"b", "br", "breakpoint", "tbreak", "rbreak"}, Kind: Breakpoint, Op: "break"},
		{Names: []string{"watchpoint", "wa"}, Kind: Breakpoint, Op: "watch"},
		// print, p, call and expression change the program when the
		// expression assigns (Mutates).
		{Names: []string{"p", "print", "call", "expr", "expression", "po"}, Kind: Inspect, Op: "print"},
		{Names: []string{"v", "var", "vo", "frame variable"}, Kind: Inspect, Op: "frame variable"},
		{Names: []string{"bt", "thread backtrace"}, Kind: Inspect, Op: "backtrace"},
		{Names: []string{"f", "frame", "up", "down"}, Kind: Inspect, Op: "frame"},
		{Names: []string{"l", "list", "source"}, Kind: Inspect, Op: "list"},
		{Names: []string{"x", "memory", "register", "re", "di", "dis", "disassemble", "image", "target", "settings", "help", "apropos", "version", "process status", "thread list", "thread info"}, Kind: Inspect},
		{Names: []string{"kill", "process kill"}, Kind: Kill, Op: "kill"},
		{Names: []string{"q", "quit", "exit"}, Kind: Quit, Op: "quit"},
	},
	Mutates: func(c Command) bool {
		switch c.Op {
		case "print", "p", "call", "expr", "expression":
			args := c.Args
			// expression's options end at "--": "expr -f x -- v".
			if i := strings.Index(args, " -- "); strings.HasPrefix(args, "-") && i >= 0 {
				args = args[i+4:]
			}
			return hasAssignment(args)
		}
		return false
	},
	Repeat: func(last Command) string {
		switch last.Op {
		case OpRun, "kill", "quit":
			return ""
		}
		return last.Line
	},
	LocationCmd: "script fred_where()",
	ParseLocation: func(out string) (Location, error) {
		m, err := lldbAnswer(out, "where")
		if err != nil {
			return Location{}, err
		}
		f := strings.Split(m, "\t")
		if len(f) != 4 {
			return Location{}, fmt.Errorf("lldb: unexpected answer %q", m)
		}
		var l Location
		l.PC, _ = strconv.ParseUint(f[0], 10, 64)
		l.Function, l.File = f[1], f[2]
		l.Line, _ = strconv.Atoi(f[3])
		return l, nil
	},
	DepthCmd:   "script fred_depth()",
	ParseDepth: func(out string) (int, error) { return lldbNumber(out, "depth") },
	PidCmd:     "script fred_pid()",
	ParsePid: func(out string) (int, error) {
		n, err := lldbNumber(out, "pid")
		if err == nil && n == 0 {
			err = ErrNotRunning
		}
		return n, err
	},
	CallerCmd: "script fred_caller()",
	ParseCaller: func(out string) (uint64, error) {
		m, err := lldbAnswer(out, "caller")
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(m, 10, 64)
	},
	Ended:            func(out string) bool { return lldbEnded.MatchString(StripANSI(out)) },
	StopReason:       stopReason(lldbEnded, lldbBreakpointHit, lldbSignal),
	BreakpointsCmd:   "script fred_bps()",
	ParseBreakpoints: parseLLDBBreakpoints,
	Enable:           "breakpoint enable %s",
	Disable:          "breakpoint disable %s",
	Delete:           `script fred_delete("%s")`,
	BreakAt:          "script fred_break(%q)",
	Rebreak:          "script fred_break(%q, False)",
	ParseNewBreakpoint: func(out string) string {
		if m, err := lldbAnswer(out, "breakpoint"); err == nil {
			return m
		}
		return ""
	},
	EvalCmd: func(expr string) string { return "script fred_eval(" + strconv.Quote(expr) + ")" },
	ParseEval: func(out string) (string, error) {
		if m, err := lldbAnswer(out, "error"); err == nil {
			return "", errors.New(strings.TrimPrefix(m, "error: "))
		}
		return lldbAnswer(out, "value")
	},
	NoName:   MustPattern(`use of undeclared identifier`),
	KillLine: "\x15",
	EchoCmd:  func(token string) string { return "script print(" + strconv.Quote(token) + ", end='')" },
	// script and breakpoint command add read a block without an argument.
	BlockStart: MustPattern(`^(script|breakpoint command add|br co a)\s*$`),
	BlockEnd:   MustPattern(`^(DONE|quit\(\)|exit\(\))\s*$`),
	Refused:    func(out string) bool { return lldbRefused.MatchString(StripANSI(out)) },
	NewRun: func(out string) bool {
		return regexp.MustCompile(`Process \d+ launched: `).MatchString(StripANSI(out))
	},
	Quiet: func(cmd string) string { return cmd },
	Tracer: &Tracer{Detach: "script fred_detach()", Attach: "process attach --pid %d", Kill: "process kill",
		Reap: "script fred_reap(%d)",
		// A snapshot stops the program (SIGSTOP) while lldb lets go of
		// it; attached again, lldb would report that stop at the next
		// resume. Its signal settings are the process's: set after each
		// attach.
		Settle:   []string{"script fred_signals(fred_process())"},
		Fork:     newLLDBFork,
		Env:      "script fred_env(%q)",
		SetEnv:   "settings append target.env-vars %s=%s",
		UnsetEnv: "settings append target.unset-env-vars %s",
		EnvValue: func(out, _ string) string { v, _ := lldbAnswer(out, "env"); return v },
		AtAddr:   "*0x%016x",
		// fred's watchpoints cover the variables the expression reads,
		// where each is a plain name (lldb watches addresses).
		Watch: "fredwatch %s %s",
		WatchKind: func(key, expr string) string {
			return fmt.Sprintf("script fred_watch_kind(%q, %q)", key, expr)
		},
		Triggered: MustPattern(`stop reason = watchpoint \d+`)},
	FrameCmd: "frame select",
	Stepper: &Stepper{
		Nexts: func(max int, m NextsMode) string {
			switch {
			case m.FP != "":
				return fmt.Sprintf("script fred_nexts(%d, 'fp', %q)", max, m.FP)
			case m.Shallower:
				return fmt.Sprintf("script fred_nexts(%d, 'shallower')", max)
			}
			return fmt.Sprintf("script fred_nexts(%d)", max)
		},
		Settle:      "script fred_settle(%d)",
		Fingerprint: "script fred_fp()",
		Where:       "script fred_where_regs()",
	},
}

// lldbScript runs Python source in lldb's interpreter as lines of
// "script exec(...)" short enough for a terminal's line (4095 bytes:
// lldb reads in canonical mode), cut between top-level definitions.
func lldbScript(src string) []string {
	const most = 3000
	var cmds []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			cmds = append(cmds, "script exec("+strconv.Quote(cur.String())+")")
			cur.Reset()
		}
	}
	for _, part := range strings.SplitAfter(src, "\n\n\n") {
		if cur.Len() > 0 && len(strconv.Quote(cur.String()+part)) > most {
			flush()
		}
		cur.WriteString(part)
	}
	flush()
	return cmds
}

//go:embed scripts/lldb_helpers.py
var lldbHelpersPy string

var (
	lldbEnded = MustPattern(`(?m)^Process \d+ exited with status = `)
	// "stop reason = breakpoint 1.1": a breakpoint names the location hit.
	lldbBreakpointHit = MustPattern(`(?m)stop reason = (breakpoint \d+\.\d+|watchpoint \d+)`)
	lldbSignal        = MustPattern(`(?m)stop reason = signal `)
	lldbRefused       = regexp.MustCompile(`(?m)^error: `)
	lldbAnswerLine    = regexp.MustCompile(`(?m)^@fred (\S+) ?(.*?)\r?$`)
	lldbBpLine        = regexp.MustCompile(`(?m)^@fred bp (\d+) ([01]) ([01]) (.*?)\r?$`)
)

// lldbAnswer is the rest of the helper's "@fred WHAT ..." line.
func lldbAnswer(out, what string) (string, error) {
	for _, m := range lldbAnswerLine.FindAllStringSubmatch(StripANSI(out), -1) {
		switch m[1] {
		case what:
			return m[2], nil
		case "not":
			return "", ErrNotRunning
		}
	}
	return "", fmt.Errorf("lldb: no %s in %q", what, strings.TrimSpace(StripANSI(out)))
}

func lldbNumber(out, what string) (int, error) {
	m, err := lldbAnswer(out, what)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(m)
}

func parseLLDBBreakpoints(out string) []Bp {
	var bps []Bp
	for _, m := range lldbBpLine.FindAllStringSubmatch(StripANSI(out), -1) {
		bps = append(bps, Bp{Num: m[1], Enabled: m[2] == "1", Temp: m[3] == "1", Where: m[4]})
	}
	return bps
}

// lldbPythonPath is where Debian's lldb keeps its Python module when lldb
// itself looks elsewhere (Debian 12's lldb 14 names a directory that does
// not exist, and its Python then fails to start): "" when lldb finds it.
func lldbPythonPath() string {
	dirs, _ := filepath.Glob("/usr/lib/llvm-*/lib/python3*/dist-packages/lldb/embedded_interpreter.py")
	if len(dirs) == 0 {
		return ""
	}
	return filepath.Dir(filepath.Dir(dirs[len(dirs)-1]))
}

func lldbEnv() []string {
	p := lldbPythonPath()
	env := []string{"TERM=dumb"}
	if p == "" {
		return env
	}
	if old := os.Getenv("PYTHONPATH"); old != "" {
		p += ":" + old
	}
	return append(env, "PYTHONPATH="+p)
}
