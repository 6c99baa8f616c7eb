package personalities

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/internal/forkcall"
)

// The protocol core of a debugger that traces the program from its own
// process (gdb, lldb; inprocfile.go is the other kind's): the file's
// commands go to the debugger as they are, and its patterns' named groups
// (or a GDB/MI record's fields) read the answers.

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
	for _, part := range []func(*Personality) error{f.startUp, f.behaviour, f.queries, f.patterns, f.tracer, f.stepper, f.earlyStart, f.threads} {
		if err := part(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// threads reads [threads]: fred's view of a program's threads, and its
// thread turns.
func (f *pfile) threads(p *Personality) error {
	if !f.has("threads") {
		return nil
	}
	t := &Threads{}
	for _, k := range []struct {
		key string
		to  *string
	}{{"list", &t.List}, {"current", &t.Current}, {"select", &t.Select}, {"locked", &t.Locked}, {"step", &t.Step}, {"exited", &t.Exited}, {"hold", &t.Hold}} {
		e, err := f.required("threads", k.key)
		if err != nil {
			return err
		}
		*k.to = e.value
	}
	var err error
	if t.Blocked, err = f.pattern("threads", "blocked"); err != nil {
		return err
	}
	if t.Blocked == nil {
		return &FileError{Path: f.path, Field: "[threads] blocked", Msg: "missing: how fred knows a locked command could not finish"}
	}
	p.Threads = t
	return nil
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
		return expand(withArgs, map[string]string{"args": args})
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
			if ok {
				line, ok = expandCache(line)
			}
			if !ok {
				continue
			}
			line = expand(line, map[string]string{"marker": marker, "tty": tty})
			x, y, _ := strings.Cut(line, "\x00")
			out = append(out, x)
			if y != "" {
				out = append(out, y)
			}
		}
		return append(out, argv[1:]...)
	}
	if env := f.str("", "environment"); env != "" {
		p.Env = strings.Fields(env)
	}
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
	for _, l := range f.lines("", "plain arguments") {
		a, b, _ := strings.Cut(l, " ")
		p.Plain = append(p.Plain, a)
		if b = strings.TrimSpace(b); b != "" {
			p.Plain = append(p.Plain, b)
		}
	}
	p.SoftWatch = f.str("", "soft watch")
	p.Batch = f.lines("", "batch")
	setup := f.lines("", "setup")
	var boot []string
	if e := f.get("", "bootstrap script"); e != nil {
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
		// Several scripts: each is sent on its own, in order.
		for _, name := range strings.Fields(e.value) {
			src, err := f.script(name)
			if err != nil {
				return f.errAt(e, "%v", err)
			}
			boot = append(boot, chunkScript(strings.TrimLeft(src, "\n"), cmd.value, limit)...)
		}
	} else if e := f.get("", "bootstrap command"); e != nil {
		return f.errAt(e, "no bootstrap script for it")
	}
	p.Setup = func(string) []string { return append(append([]string{}, boot...), setup...) }
	return nil
}

// expandCache replaces {cache:PATH} with fred's cache directory's PATH,
// made if need be; false where it cannot be.
func expandCache(s string) (string, bool) {
	i := strings.Index(s, "{cache:")
	if i < 0 {
		return s, true
	}
	j := strings.IndexByte(s[i:], '}')
	if j < 0 {
		return s, true
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	dir = filepath.Join(dir, s[i+7:i+j])
	if os.MkdirAll(dir, 0o700) != nil {
		return "", false
	}
	return s[:i] + dir + s[i+j+1:], true
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
	line := func(s string) string { return expand(cmd, map[string]string{"source": s}, "source") }
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
	mutating, setting := set(f.str("behaviour", "mutate when assigning")), set(f.str("behaviour", "mutate when setting"))
	withEquals := set(f.str("behaviour", "settings with equals"))
	p.Mutates = func(c Command) bool {
		switch {
		case mutating[c.Op]:
			args := c.Args
			// options end at "--": "expr -f x -- v", "print -- x".
			if i := strings.Index(args, " -- "); strings.HasPrefix(args, "-") && i >= 0 {
				args = args[i+4:]
			} else if strings.HasPrefix(args, "-- ") {
				args = args[3:]
			}
			return hasAssignment(args)
		case setting[c.Op]:
			// "set x = 3" assigns; "set env A=1" is a setting.
			first, _, _ := strings.Cut(c.Args, " ")
			first, _, _ = strings.Cut(first, "=")
			return hasAssignment(c.Args) && !withEquals[first]
		}
		return false
	}
	var err error
	if p.Repeat, err = f.repeat(); err != nil {
		return err
	}
	p.ScopeSelect = f.str("behaviour", "select frame")
	if e := f.get("behaviour", "native"); e != nil {
		p.Native = map[string]string{}
		for _, kv := range strings.Fields(e.value) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(v, "fred-") {
				return f.errAt(e, "%q: NAME=fred-COMMAND", kv)
			}
			p.Native[k] = v
		}
	}
	return nil
}

// repeat reads what an empty line repeats: [behaviour] repeat (OPs whose
// line it repeats, "all" any; all if not given), repeat as ("OP=LINE":
// LINE after OP) and no repeat (nothing after OP, nor after a quit).
func (f *pfile) repeat() (func(Command) string, error) {
	repeat, once := set(f.str("behaviour", "repeat")), set(f.str("behaviour", "no repeat"))
	if len(repeat) == 0 {
		repeat["all"] = true
	}
	as := map[string]string{}
	if e := f.get("behaviour", "repeat as"); e != nil {
		for _, kv := range strings.Fields(e.value) {
			op, line, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, f.errAt(e, "%q: OP=LINE", kv)
			}
			as[op] = line
		}
	}
	return func(last Command) string {
		switch {
		case as[last.Op] != "":
			return as[last.Op]
		case once[last.Op] || last.Kind == Quit:
			return ""
		case repeat["all"] || repeat[last.Op]:
			return last.Line
		}
		return ""
	}, nil
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

// reader reads a query's answer into named values: a pattern's named
// groups, or (a value "mi NAME=FIELD[|FIELD] ...") the fields of a GDB/MI
// result record, the first of the alternatives that it has.
type reader func(out string) (map[string]string, error)

// reader is the reader of field [section] key, which must give groups;
// nil if the file has no such field.
func (f *pfile) reader(section, key, what string, notRunning *Pattern, groups ...string) (reader, error) {
	e := f.get(section, key)
	if e == nil {
		return nil, nil
	}
	if spec, ok := strings.CutPrefix(e.value, "mi "); ok {
		fields := map[string][]string{}
		for _, kv := range strings.Fields(spec) {
			name, alts, ok := strings.Cut(kv, "=")
			if !ok || alts == "" {
				return nil, f.errAt(e, "%q: NAME=FIELD of the MI record (FIELD|FIELD: the first it has)", kv)
			}
			fields[name] = strings.Split(alts, "|")
		}
		for _, g := range groups {
			if fields[g] == nil {
				return nil, f.errAt(e, "no %s=FIELD", g)
			}
		}
		return func(out string) (map[string]string, error) {
			r, err := parseMIResult(out)
			if err != nil {
				return nil, err
			}
			g := map[string]string{}
			for name, alts := range fields {
				for _, a := range alts {
					if v, ok := r[a]; ok && v != "" {
						g[name] = v
						break
					}
				}
			}
			return g, nil
		}, nil
	}
	a, err := f.pattern(section, key, groups...)
	if err != nil {
		return nil, err
	}
	return func(out string) (map[string]string, error) { return answer(a, notRunning, what, out) }, nil
}

// breakpointReaders are fred's readers of a breakpoint list that no
// pattern reads ("breakpoint answer: reader NAME").
var breakpointReaders = map[string]func(string) []Bp{"gdb-mi": parseGDBBreakpoints}

func (f *pfile) queries(p *Personality) error {
	notRunning, err := f.pattern("queries", "not running")
	if err != nil {
		return err
	}
	type query struct {
		cmd, answer string
		groups      []string
		set         func(cmd string, read reader)
	}
	qs := []query{
		{"location", "location answer", []string{"pc", "function", "file", "line"}, func(cmd string, read reader) {
			p.LocationCmd = cmd
			p.ParseLocation = func(out string) (Location, error) {
				g, err := read(out)
				if err != nil {
					return Location{}, err
				}
				l := Location{Function: g["function"], File: g["file"]}
				l.PC, _ = strconv.ParseUint(g["pc"], 0, 64)
				l.Line, _ = strconv.Atoi(g["line"])
				return l, nil
			}
		}},
		{"depth", "depth answer", []string{"depth"}, func(cmd string, read reader) {
			p.DepthCmd = cmd
			p.ParseDepth = func(out string) (int, error) {
				g, err := read(out)
				if err != nil {
					return 0, err
				}
				return strconv.Atoi(g["depth"])
			}
		}},
		{"pid", "pid answer", []string{"pid"}, func(cmd string, read reader) {
			p.PidCmd = cmd
			p.ParsePid = func(out string) (int, error) {
				g, err := read(out)
				if err != nil {
					if errors.Is(err, errNoAnswer) {
						return 0, ErrNotRunning // no process: no pid
					}
					return 0, err
				}
				return strconv.Atoi(g["pid"])
			}
		}},
		{"caller", "caller answer", []string{"pc"}, func(cmd string, read reader) {
			p.CallerCmd = cmd
			p.ParseCaller = func(out string) (uint64, error) {
				g, err := read(out)
				if err != nil {
					return 0, err
				}
				if g["pc"] == "" {
					return 0, fmt.Errorf("no caller frame in %q", strings.TrimSpace(StripANSI(out)))
				}
				return strconv.ParseUint(g["pc"], 0, 64)
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
		read, err := f.reader("queries", q.answer, q.cmd, notRunning, q.groups...)
		if err != nil {
			return err
		}
		q.set(c.value, read)
	}
	bc, err := f.required("queries", "breakpoints")
	if err != nil {
		return err
	}
	p.BreakpointsCmd = bc.value
	switch ba := f.get("queries", "breakpoint answer"); {
	case ba == nil:
		return &FileError{Path: f.path, Line: bc.line, Field: "[queries] breakpoint answer", Msg: "missing: how fred reads the answer to breakpoints"}
	case strings.HasPrefix(ba.value, "reader "):
		name := strings.TrimSpace(strings.TrimPrefix(ba.value, "reader "))
		if p.ParseBreakpoints = breakpointReaders[name]; p.ParseBreakpoints == nil {
			return f.errAt(ba, "no reader %q (fred has gdb-mi)", name)
		}
	default:
		a, err := f.pattern("queries", "breakpoint answer", "num", "enabled", "where")
		if err != nil {
			return err
		}
		p.ParseBreakpoints = func(out string) []Bp {
			var bps []Bp
			for _, g := range a.AllNamed(StripANSI(out)) {
				bps = append(bps, Bp{Num: g["num"], Where: g["where"], Enabled: g["enabled"] != "" && g["enabled"] != "0",
					Temp: g["temp"] != "" && g["temp"] != "0"})
			}
			return bps
		}
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
	value, err := f.reader("queries", "value", "the evaluation", notRunning, "value")
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
	p.EvalCmd = func(expr string) string { return expand(ev.value, map[string]string{"expr": expr}, "expr") }
	p.ParseEval = func(out string) (string, error) {
		if failed != nil {
			if g := failed.Named(StripANSI(out)); g != nil {
				return "", errors.New(g["error"])
			}
		}
		g, err := value(out)
		if err != nil {
			return "", err
		}
		return g["value"], nil
	}
	if p.NoName, err = f.pattern("queries", "no name"); err != nil {
		return err
	}
	if e := f.get("queries", "echo"); e != nil {
		p.EchoCmd = func(token string) string { return expand(e.value, map[string]string{"token": token}, "token") }
	}
	if p.ScopeCmd = f.str("queries", "scope"); p.ScopeCmd != "" {
		se, err := f.required("queries", "scoped evaluate")
		if err != nil {
			return err
		}
		sw, err := f.required("queries", "scope where")
		if err != nil {
			return err
		}
		p.ScopedEvalCmd = func(expr, key string) string {
			return expand(se.value, map[string]string{"expr": expr, "key": key}, "expr", "key")
		}
		p.ScopeWhere = func(key string) string { return expand(sw.value, map[string]string{"key": key}, "key") }
	}
	if q := f.str("queries", "quiet"); q != "" {
		p.Quiet = func(cmd string) string { return strings.Replace(q, "%s", cmd, 1) }
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
	if p.Quiet == nil {
		p.Quiet = func(cmd string) string { return cmd }
	}
	var err error
	if p.Passes, err = f.pattern("patterns", "passes"); err != nil {
		return err
	}
	if p.NativeRefused, err = f.pattern("patterns", "native refused"); err != nil {
		return err
	}
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
		{"set env", &t.SetEnv}, {"unset env", &t.UnsetEnv}, {"at address", &t.AtAddr}, {"watch", &t.Watch},
		{"debug dir", &t.DebugDir}, {"show", &t.Show}, {"set", &t.Set}} {
		*k.to = f.str("tracer", k.key)
	}
	for key, v := range map[string]string{"detach": t.Detach, "attach": t.Attach, "kill": t.Kill} {
		if v == "" {
			return &FileError{Path: f.path, Field: "[tracer] " + key, Msg: "missing: fred lets go of the program (detach), takes it back (attach) and ends it (kill)"}
		}
	}
	t.Settle = f.lines("tracer", "settle")
	t.Reload = f.lines("tracer", "reload")
	if t.Env != "" {
		e := f.get("tracer", "env answer")
		if e == nil {
			return &FileError{Path: f.path, Field: "[tracer] env answer", Msg: "missing: how fred reads env's answer"}
		}
		// {name}: the variable's name, as text.
		compile := func(name string) (*Pattern, error) {
			return CompilePattern(strings.ReplaceAll(e.value, "{name}", regexp.QuoteMeta(name)))
		}
		if ea, err := compile("NAME"); err != nil {
			return f.errAt(e, "the pattern does not compile: %v", err)
		} else if !slices.Contains(ea.GroupNames(), "value") {
			return f.errAt(e, "the pattern has no group (?<value>...)")
		}
		t.EnvValue = func(out, name string) string {
			ea, err := compile(name)
			if err != nil {
				return ""
			}
			return strings.TrimSpace(ea.Named(StripANSI(out))["value"])
		}
	}
	if e := f.get("tracer", "watch kind"); e != nil {
		t.WatchKind = func(key, expr string) string {
			return expand(e.value, map[string]string{"key": key, "expr": expr}, "key", "expr")
		}
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
			v := map[string]string{"max": strconv.Itoa(max), "fp": m.FP}
			switch {
			case m.FP != "":
				return expand(to, v, "fp")
			case m.Shallower:
				return expand(shallower, v)
			}
			return expand(nexts.value, v)
		},
		Settle:      strings.ReplaceAll(strings.ReplaceAll(settle, "%", "%%"), "{depth}", "%d"),
		Fingerprint: fingerprint,
		Where:       where,
	}
	if st.Settle == "" || st.Fingerprint == "" {
		return &FileError{Path: f.path, Line: nexts.line, Field: "[stepper] nexts", Msg: "needs settle and fingerprint too"}
	}
	hex := func(x uint64) string { return "0x" + strconv.FormatUint(x, 16) }
	if h := f.str("stepper", "hits"); h != "" {
		st.Hits = func(addr uint64, k int) string {
			return expand(h, map[string]string{"addr": hex(addr), "k": strconv.Itoa(k)})
		}
	}
	if si := f.str("stepper", "stepis"); si != "" {
		st.Stepis = func(max int, to, c Frame) string {
			fn := c.Fn
			if fn == "" {
				fn = "-"
			}
			return expand(si, map[string]string{"max": strconv.Itoa(max), "pc": hex(to.PC), "sp": hex(to.SP), "fp": to.FP, "caller sp": hex(c.SP), "function": fn})
		}
	}
	st.Frame = f.str("stepper", "frame")
	p.Stepper = st
	return nil
}

// forkDrivers are fred's own ways to call its agent through a debugger
// ("[fork] driver: NAME"), where commands and patterns would not do.
var forkDrivers = map[string]func(query func(string) (string, error), settle []string) forkcall.Tracer{
	"gdb-mi": func(query func(string) (string, error), settle []string) forkcall.Tracer {
		return &gdbFork{query: query, settle: settle}
	},
}

// fork reads [fork]: fred's agent called through the debugger's
// commands, as forkcall.Tracer.
func (f *pfile) fork(t *Tracer, refused func(string) bool) (func(query func(string) (string, error)) forkcall.Tracer, error) {
	if d := f.get("fork", "driver"); d != nil {
		drive := forkDrivers[d.value]
		if drive == nil {
			return nil, f.errAt(d, "%q: fred has the driver gdb-mi", d.value)
		}
		return func(query func(string) (string, error)) forkcall.Tracer { return drive(query, t.Settle) }, nil
	}
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
