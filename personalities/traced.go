package personalities

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/internal/forkcall"
)

// The protocol core of a debugger that traces the program from its own
// process (lldb; gdb's personality is still Go; inprocfile.go is the
// other kind's): the file's commands go
// to the debugger as they are, and its patterns' named groups read the
// answers.

func (f *pfile) build() (*Personality, error) {
	name, err := f.required("", "name")
	if err != nil {
		return nil, err
	}
	kind, err := f.required("", "kind")
	if err != nil {
		return nil, err
	}
	switch kind.value {
	case "traced", "in-process":
	default:
		return nil, f.errAt(kind, "%q: traced (a debugger in its own process, as gdb) or in-process", kind.value)
	}
	prompt, err := f.required("", "prompt")
	if err != nil {
		return nil, err
	}
	p := &Personality{Name: name.value, Prompt: prompt.value, NoCtty: true,
		Debuggers: strings.Fields(f.str("", "debuggers")),
		StartHint: f.str("", "start hint")}
	if len(p.Debuggers) == 0 {
		p.Debuggers = []string{p.Name}
	}
	if p.Commands, err = f.commands(); err != nil {
		return nil, err
	}
	if kind.value == "in-process" {
		if err := f.inProcess(p); err != nil {
			return nil, err
		}
		return p, nil
	}
	// In this order: patterns before the tracer (its fork copies read
	// refusals), commands before fred's run (its continue is one).
	for _, part := range []func(*Personality) error{f.startUp, f.behaviour, f.queries, f.patterns, f.tracer, f.stepper, f.earlyStart} {
		if err := part(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// earlyStart reads [early start]: fred's run, from the program's first
// instruction (EarlyStart).
func (f *pfile) earlyStart(p *Personality) error {
	starti := f.get("early start", "starti")
	if starti == nil {
		return nil
	}
	es := &EarlyStart{}
	for _, k := range []struct {
		key string
		to  *string
	}{{"stopped", &es.Stopped}, {"to entry", &es.ToEntry}, {"to main", &es.ToMain}, {"forget", &es.Forget},
		{"reached", &es.Reached}, {"continue", &es.Continue}, {"at main", &es.AtMain}, {"continuing", &es.Continuing},
		{"main break", &es.MainBreak}, {"has main", &es.HasMain}} {
		*k.to = f.str("early start", k.key)
	}
	for key, v := range map[string]string{"stopped": es.Stopped, "to main": es.ToMain, "forget": es.Forget, "continue": es.Continue, "at main": es.AtMain} {
		if v == "" {
			return &FileError{Path: f.path, Line: starti.line, Field: "[early start] " + key, Msg: "missing: fred's run needs it"}
		}
	}
	if c := p.Classify(es.Continue); c.Kind != Forward || c.Op != OpContinue {
		return &FileError{Path: f.path, Line: starti.line, Field: "[early start] continue", Msg: "not a forward continue in [commands]: the history holds fred's run as one"}
	}
	withArgs := f.str("early start", "starti with arguments")
	if withArgs == "" {
		withArgs = starti.value
	}
	es.Starti = func(args string) string {
		if args = strings.TrimSpace(args); args == "" {
			return starti.value
		}
		return fill(withArgs, "{args}", args)
	}
	p.EarlyStart = es
	return nil
}

// startUp: the command line, the environment, the bootstrap.
func (f *pfile) startUp(p *Personality) error {
	var args [][2]string // an argument, and the one after it ("" none)
	if e := f.get("", "arguments"); e != nil {
		for _, l := range strings.Split(e.value, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				a, b, _ := strings.Cut(l, " ")
				args = append(args, [2]string{a, strings.TrimSpace(b)})
			}
		}
	}
	p.Argv = func(argv []string, marker, tty string) []string {
		out := []string{argv[0]}
		for _, a := range args {
			line, ok := expandEnv(a[0] + "\x00" + a[1])
			if !ok {
				continue
			}
			line = fill(line, "{marker}", marker, "{tty}", tty)
			x, y, _ := strings.Cut(line, "\x00")
			out = append(out, x)
			if y != "" {
				out = append(out, y)
			}
		}
		return append(out, argv[1:]...)
	}
	p.Env = strings.Fields(f.str("", "environment"))
	if e := f.get("", "python path"); e != nil {
		if m, _ := filepath.Glob(e.value); len(m) > 0 {
			path := m[len(m)-1]
			if old := os.Getenv("PYTHONPATH"); old != "" {
				path += ":" + old
			}
			p.Env = append(p.Env, "PYTHONPATH="+path)
		}
	}
	var err error
	if p.LineEditorAtSize, err = f.boolean("", "line editor at size"); err != nil {
		return err
	}
	p.Plain = strings.Fields(f.str("", "plain arguments"))
	p.Batch = f.lines("", "batch")
	setup := f.lines("", "setup")
	var boot []string
	if e := f.get("", "bootstrap script"); e != nil {
		src, err := f.script(e.value)
		if err != nil {
			return f.errAt(e, "%v", err)
		}
		cmd, err := f.required("", "bootstrap command")
		if err != nil {
			return err
		}
		if !strings.Contains(cmd.value, "{source}") {
			return f.errAt(cmd, "no {source} in it")
		}
		limit := 1 << 20
		if l := f.get("", "line limit"); l != nil {
			if limit, err = strconv.Atoi(l.value); err != nil || limit < 100 {
				return f.errAt(l, "%q: a number of bytes, at least 100", l.value)
			}
		}
		boot = chunkScript(src, cmd.value, limit)
	} else if e := f.get("", "bootstrap command"); e != nil {
		return f.errAt(e, "no bootstrap script for it")
	}
	p.Setup = func(string) []string { return append(append([]string{}, boot...), setup...) }
	return nil
}

// expandEnv replaces {env:NAME}; false where a NAME is empty.
func expandEnv(s string) (string, bool) {
	for {
		i := strings.Index(s, "{env:")
		if i < 0 {
			return s, true
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return s, true
		}
		v := os.Getenv(s[i+5 : i+j])
		if v == "" {
			return "", false
		}
		s = s[:i] + v + s[i+j+1:]
	}
}

// chunkScript sends src as lines of cmd ({source}: a part of it, quoted)
// of at most limit bytes, cut between top-level definitions (after two
// blank lines).
func chunkScript(src, cmd string, limit int) []string {
	var cmds []string
	var cur strings.Builder
	line := func(s string) string { return fill(cmd, "{source}", quote(s)) }
	flush := func() {
		if cur.Len() > 0 {
			cmds = append(cmds, line(cur.String()))
			cur.Reset()
		}
	}
	for _, part := range strings.SplitAfter(src, "\n\n\n") {
		if cur.Len() > 0 && len(line(cur.String()+part)) > limit {
			flush()
		}
		cur.WriteString(part)
	}
	flush()
	return cmds
}

func (f *pfile) lines(section, key string) []string {
	var out []string
	for _, l := range strings.Split(f.str(section, key), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (f *pfile) behaviour(p *Personality) error {
	if e := f.get("behaviour", "count argument"); e != nil {
		counted, err := f.boolean("behaviour", "count argument")
		if err != nil {
			return err
		}
		p.NoCountArg = !counted
	}
	mutating := map[string]bool{}
	for _, op := range strings.Fields(f.str("behaviour", "mutate when assigning")) {
		mutating[op] = true
	}
	p.Mutates = func(c Command) bool {
		if !mutating[c.Op] {
			return false
		}
		args := c.Args
		// options end at "--": "expr -f x -- v".
		if i := strings.Index(args, " -- "); strings.HasPrefix(args, "-") && i >= 0 {
			args = args[i+4:]
		}
		return hasAssignment(args)
	}
	once := map[string]bool{}
	for _, op := range strings.Fields(f.str("behaviour", "no repeat")) {
		once[op] = true
	}
	p.Repeat = func(last Command) string {
		if once[last.Op] {
			return ""
		}
		return last.Line
	}
	return nil
}

// answer reads a query's answer with pattern a: its named groups, or
// ErrNotRunning where notRunning matches, or an error naming the query.
func answer(a, notRunning *Pattern, what, out string) (map[string]string, error) {
	out = StripANSI(out)
	if g := a.Named(out); g != nil {
		return g, nil
	}
	if notRunning != nil && notRunning.MatchString(out) {
		return nil, ErrNotRunning
	}
	return nil, fmt.Errorf("%w to %s in %q", errNoAnswer, what, strings.TrimSpace(out))
}

func (f *pfile) queries(p *Personality) error {
	notRunning, err := f.pattern("queries", "not running")
	if err != nil {
		return err
	}
	type query struct {
		cmd, answer string
		groups      []string
		set         func(cmd string, a *Pattern)
	}
	qs := []query{
		{"location", "location answer", []string{"pc", "function", "file", "line"}, func(cmd string, a *Pattern) {
			p.LocationCmd = cmd
			p.ParseLocation = func(out string) (Location, error) {
				g, err := answer(a, notRunning, "location", out)
				if err != nil {
					return Location{}, err
				}
				l := Location{Function: g["function"], File: g["file"]}
				l.PC, _ = strconv.ParseUint(g["pc"], 0, 64)
				l.Line, _ = strconv.Atoi(g["line"])
				return l, nil
			}
		}},
		{"depth", "depth answer", []string{"depth"}, func(cmd string, a *Pattern) {
			p.DepthCmd = cmd
			p.ParseDepth = func(out string) (int, error) {
				g, err := answer(a, notRunning, "depth", out)
				if err != nil {
					return 0, err
				}
				return strconv.Atoi(g["depth"])
			}
		}},
		{"pid", "pid answer", []string{"pid"}, func(cmd string, a *Pattern) {
			p.PidCmd = cmd
			p.ParsePid = func(out string) (int, error) {
				g, err := answer(a, notRunning, "pid", out)
				if err != nil {
					if errors.Is(err, errNoAnswer) {
						return 0, ErrNotRunning // no process: no pid
					}
					return 0, err
				}
				return strconv.Atoi(g["pid"])
			}
		}},
		{"caller", "caller answer", []string{"pc"}, func(cmd string, a *Pattern) {
			p.CallerCmd = cmd
			p.ParseCaller = func(out string) (uint64, error) {
				g, err := answer(a, notRunning, "caller", out)
				if err != nil {
					return 0, err
				}
				return strconv.ParseUint(g["pc"], 0, 64)
			}
		}},
		{"breakpoints", "breakpoint answer", []string{"num", "enabled", "where"}, func(cmd string, a *Pattern) {
			p.BreakpointsCmd = cmd
			p.ParseBreakpoints = func(out string) []Bp {
				var bps []Bp
				for _, g := range a.AllNamed(StripANSI(out)) {
					bps = append(bps, Bp{Num: g["num"], Where: g["where"], Enabled: g["enabled"] != "" && g["enabled"] != "0",
						Temp: g["temp"] != "" && g["temp"] != "0"})
				}
				return bps
			}
		}},
	}
	for _, q := range qs {
		c, err := f.required("queries", q.cmd)
		if err != nil {
			return err
		}
		if f.get("queries", q.answer) == nil {
			return &FileError{Path: f.path, Line: c.line, Field: "[queries] " + q.answer, Msg: "missing: how fred reads the answer to " + q.cmd}
		}
		a, err := f.pattern("queries", q.answer, q.groups...)
		if err != nil {
			return err
		}
		q.set(c.value, a)
	}
	for _, k := range []struct {
		key string
		to  *string
	}{{"enable", &p.Enable}, {"disable", &p.Disable}, {"delete", &p.Delete}, {"break at", &p.BreakAt}, {"rebreak", &p.Rebreak}, {"frame", &p.FrameCmd}, {"kill line", &p.KillLine}} {
		*k.to = f.str("queries", k.key)
	}
	if p.BreakAt != "" {
		nb, err := f.pattern("queries", "new breakpoint", "num")
		if err != nil {
			return err
		}
		if nb == nil {
			return &FileError{Path: f.path, Field: "[queries] new breakpoint", Msg: "missing: how fred reads the number of a breakpoint it made"}
		}
		p.ParseNewBreakpoint = func(out string) string { return nb.Named(StripANSI(out))["num"] }
	}
	ev, err := f.required("queries", "evaluate")
	if err != nil {
		return err
	}
	value, err := f.pattern("queries", "value", "value")
	if err != nil {
		return err
	}
	if value == nil {
		return &FileError{Path: f.path, Line: ev.line, Field: "[queries] value", Msg: "missing: how fred reads a value"}
	}
	failed, err := f.pattern("queries", "error", "error")
	if err != nil {
		return err
	}
	p.EvalCmd = func(expr string) string { return fill(ev.value, "{expr}", quote(expr)) }
	p.ParseEval = func(out string) (string, error) {
		out = StripANSI(out)
		if failed != nil {
			if g := failed.Named(out); g != nil {
				return "", errors.New(g["error"])
			}
		}
		if g := value.Named(out); g != nil {
			return g["value"], nil
		}
		if notRunning != nil && notRunning.MatchString(out) {
			return "", ErrNotRunning
		}
		return "", fmt.Errorf("%w to the evaluation in %q", errNoAnswer, strings.TrimSpace(out))
	}
	if p.NoName, err = f.pattern("queries", "no name"); err != nil {
		return err
	}
	if e := f.get("queries", "echo"); e != nil {
		p.EchoCmd = func(token string) string { return fill(e.value, "{token}", quote(token)) }
	}
	return nil
}

func (f *pfile) patterns(p *Personality) error {
	got := map[string]*Pattern{}
	for _, key := range []string{"ended", "signal", "breakpoint hit", "refused", "new run", "block start", "block end"} {
		pt, err := f.pattern("patterns", key)
		if err != nil {
			return err
		}
		got[key] = pt
	}
	p.BlockStart, p.BlockEnd = got["block start"], got["block end"]
	for _, key := range []string{"ended", "signal"} {
		if got[key] == nil {
			return &FileError{Path: f.path, Field: "[patterns] " + key, Msg: "missing: fred must know when the program " + map[string]string{"ended": "ended", "signal": "got a signal"}[key]}
		}
	}
	ended := got["ended"]
	p.Ended = func(out string) bool { return ended.MatchString(StripANSI(out)) }
	p.StopReason = stopReason(ended, got["breakpoint hit"], got["signal"])
	if r := got["refused"]; r != nil {
		p.Refused = func(out string) bool { return r.MatchString(StripANSI(out)) }
	}
	if r := got["new run"]; r != nil {
		p.NewRun = func(out string) bool { return r.MatchString(StripANSI(out)) }
	}
	p.Quiet = func(cmd string) string { return cmd }
	return nil
}

func (f *pfile) tracer(p *Personality) error {
	if !f.has("tracer") {
		if f.has("fork") {
			return &FileError{Path: f.path, Field: "[tracer]", Msg: "missing: fork copies need attach and kill"}
		}
		return nil // no snapshots
	}
	t := &Tracer{}
	for _, k := range []struct {
		key string
		to  *string
	}{{"detach", &t.Detach}, {"attach", &t.Attach}, {"kill", &t.Kill}, {"reap", &t.Reap}, {"env", &t.Env},
		{"set env", &t.SetEnv}, {"unset env", &t.UnsetEnv}, {"at address", &t.AtAddr}, {"watch", &t.Watch}} {
		*k.to = f.str("tracer", k.key)
	}
	for key, v := range map[string]string{"detach": t.Detach, "attach": t.Attach, "kill": t.Kill} {
		if v == "" {
			return &FileError{Path: f.path, Field: "[tracer] " + key, Msg: "missing: fred lets go of the program (detach), takes it back (attach) and ends it (kill)"}
		}
	}
	t.Settle = f.lines("tracer", "settle")
	if t.Env != "" {
		ea, err := f.pattern("tracer", "env answer", "value")
		if err != nil {
			return err
		}
		if ea == nil {
			return &FileError{Path: f.path, Field: "[tracer] env answer", Msg: "missing: how fred reads env's answer"}
		}
		t.EnvValue = func(out, _ string) string { return ea.Named(StripANSI(out))["value"] }
	}
	if e := f.get("tracer", "watch kind"); e != nil {
		t.WatchKind = func(key, expr string) string { return fill(e.value, "{key}", quote(key), "{expr}", quote(expr)) }
	}
	var err error
	if t.Triggered, err = f.pattern("tracer", "triggered"); err != nil {
		return err
	}
	if t.Watch != "" && (t.WatchKind == nil || t.Triggered == nil) {
		return &FileError{Path: f.path, Field: "[tracer] watch", Msg: "needs watch kind and triggered too"}
	}
	if t.Fork, err = f.fork(t, p.Refused); err != nil {
		return err
	}
	p.Tracer = t
	return nil
}

func (f *pfile) stepper(p *Personality) error {
	if !f.has("stepper") {
		return nil
	}
	nexts, err := f.required("stepper", "nexts")
	if err != nil {
		return err
	}
	shallower, to := f.str("stepper", "nexts shallower"), f.str("stepper", "nexts to")
	settle, fingerprint, where := f.str("stepper", "settle"), f.str("stepper", "fingerprint"), f.str("stepper", "where")
	if shallower == "" || to == "" {
		return &FileError{Path: f.path, Line: nexts.line, Field: "[stepper] nexts", Msg: "needs nexts shallower and nexts to too"}
	}
	st := &Stepper{
		Nexts: func(max int, m NextsMode) string {
			n := strconv.Itoa(max)
			switch {
			case m.FP != "":
				return fill(to, "{max}", n, "{fp}", quote(m.FP))
			case m.Shallower:
				return fill(shallower, "{max}", n)
			}
			return fill(nexts.value, "{max}", n)
		},
		Settle:      strings.ReplaceAll(strings.ReplaceAll(settle, "%", "%%"), "{depth}", "%d"),
		Fingerprint: fingerprint,
		Where:       where,
	}
	if st.Settle == "" || st.Fingerprint == "" {
		return &FileError{Path: f.path, Line: nexts.line, Field: "[stepper] nexts", Msg: "needs settle and fingerprint too"}
	}
	p.Stepper = st
	return nil
}

// fork reads [fork]: fred's agent called through the debugger's
// commands, as forkcall.Tracer.
func (f *pfile) fork(t *Tracer, refused func(string) bool) (func(query func(string) (string, error)) forkcall.Tracer, error) {
	call := f.get("fork", "call")
	if call == nil {
		return nil, nil
	}
	var ft fileFork
	for _, k := range []struct {
		key string
		to  *string
	}{{"preload", &ft.preload}, {"load", &ft.load}, {"registers", &ft.registers}, {"set registers", &ft.setRegisters}} {
		e, err := f.required("fork", k.key)
		if err != nil {
			return nil, err
		}
		*k.to = e.value
	}
	ft.call = call.value
	var err error
	if ft.regAnswer, err = f.pattern("fork", "registers answer", "registers"); err != nil {
		return nil, err
	}
	if ft.regAnswer == nil {
		return nil, &FileError{Path: f.path, Line: call.line, Field: "[fork] registers answer", Msg: "missing: how fred reads the registers"}
	}
	q := f.get("queries", "value")
	ft.value, _ = CompilePattern(q.value) // compiled once already
	if ft.failed, err = f.pattern("queries", "error", "error"); err != nil {
		return nil, err
	}
	ft.names = map[string]string{}
	if e := f.get("fork", "register names"); e != nil {
		for _, kv := range strings.Fields(e.value) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, f.errAt(e, "%q: NAME=LLDBNAME, or NAME=- for one the debugger does not show", kv)
			}
			ft.names[k] = v
		}
	}
	ft.attach, ft.kill, ft.settle, ft.refused = t.Attach, t.Kill, t.Settle, refused
	return func(query func(string) (string, error)) forkcall.Tracer {
		c := ft
		c.query = query
		return &c
	}, nil
}
