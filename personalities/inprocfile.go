package personalities

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The protocol core of a debugger inside the program (pdb, perl -d): fred
// starts it with a bootstrap of its own whose fred_* commands answer one
// "@fred KIND ..." line each (inproc.go reads them), so a file names
// those commands and the debugger's own words; the parts that are code in
// the program's language (how the interpreter starts with the bootstrap,
// how a line splits into command and argument, which statements change
// the program, how a string is quoted) are a language's, named by the
// file's "language".

// language is what an in-process file's "language" names.
type language struct {
	// launch turns the person's command line into one that runs the
	// debugger with boot, fred's bootstrap, and marker as its prompt;
	// prepare, where set, readies the bootstrap's text once.
	launch  func(argv []string, boot, marker string) []string
	prepare func(src string) string
	split   func(line string) (cmd, args string)
	// assigns reports whether an expression given to an inspecting
	// command changes the program.
	assigns func(expr string) bool
	// statement reports whether a line that is no command (a statement
	// run in the program) changes it.
	statement func(line string) bool
	// quote writes s for inside a string literal of the language, in the
	// quotes the file writes around it (Python's '...', Perl's "...").
	quote func(string) string
	// list writes arguments of one of fred's commands.
	list func([]string) string
	// value reads an evaluation's answer: an error is a value too.
	value func(out string) (string, error)
	// nexts and steps are the commands of the bootstrap's stepper.
	nexts func(max int, m NextsMode) string
	steps func(max int, m StepsMode) string
}

var languages = map[string]*language{
	"python": {
		launch: pdbLaunch, split: pdbSplit, value: parseFredEval,
		quote:     func(s string) string { q := pyQuote(s); return q[1 : len(q)-1] },
		assigns:   func(e string) bool { return strings.Contains(blankStrings(e, '#'), ":=") },
		statement: func(l string) bool { return pyMutates(strings.TrimPrefix(l, "!")) },
		list:      func(a []string) string { return strings.Join(a, " ") },
		nexts: func(max int, m NextsMode) string {
			if m.Shallower {
				return fmt.Sprintf("fred_nexts %d shallower", max)
			}
			return fmt.Sprintf("fred_nexts %d", max)
		},
		steps: pdbSteps,
	},
	"perl": {
		launch: perlLaunch, prepare: perlBootLine, split: perlSplit, value: parsePerlEval,
		quote:     perlQuote,
		assigns:   func(e string) bool { return perlAssign.MatchString(blankStrings(e, '#')) },
		statement: perlMutates,
		list:      func(a []string) string { return "q{" + strings.Join(a, "}, q{") + "}" },
		nexts: func(max int, m NextsMode) string {
			if m.Shallower {
				return fmt.Sprintf(perlDB+`fred_nexts(%d, "shallower")`, max)
			}
			return fmt.Sprintf(perlDB+"fred_nexts(%d)", max)
		},
		steps: perlSteps,
	},
}

func languageNames() string {
	var n []string
	for k := range languages {
		n = append(n, k)
	}
	slices.Sort(n)
	return strings.Join(n, ", ")
}

// inProcess builds the rest of an in-process personality from the file.
func (f *pfile) inProcess(p *Personality) error {
	le, err := f.required("", "language")
	if err != nil {
		return err
	}
	lang, ok := languages[le.value]
	if !ok {
		return f.errAt(le, "%q: fred knows the languages %s", le.value, languageNames())
	}
	p.InProcess, p.NoCtty = true, false
	p.Split, p.Quiet = lang.split, func(cmd string) string { return cmd }
	p.Setup = func(string) []string { return nil }
	bs, err := f.required("", "bootstrap script")
	if err != nil {
		return err
	}
	boot, err := f.script(bs.value)
	if err != nil {
		return f.errAt(bs, "%v", err)
	}
	if lang.prepare != nil {
		boot = lang.prepare(boot)
	}
	p.Argv = func(argv []string, marker, _ string) []string { return lang.launch(argv, boot, marker) }
	var seeded []string
	if e := f.get("", "seeded environment"); e != nil {
		for _, kv := range strings.Fields(e.value) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return f.errAt(e, "%q: NAME=VALUE", kv)
			}
			seeded = append(seeded, k, v)
		}
	}
	p.Env = seedEnv(seeded...)
	p.PromptQuery = f.str("", "prompt number")
	for _, part := range []func(*Personality, *language) error{f.inBehaviour, f.inQueries, f.inPatterns, f.inStepper} {
		if err := part(p, lang); err != nil {
			return err
		}
	}
	return nil
}

// inBehaviour reads [behaviour]: which commands change the program, which
// an empty line repeats.
func (f *pfile) inBehaviour(p *Personality, lang *language) error {
	counted, err := f.boolean("behaviour", "count argument")
	if err != nil {
		return err
	}
	p.NoCountArg = !counted
	assigning := set(f.str("behaviour", "mutate when assigning"))
	never := set(f.str("behaviour", "never mutate"))
	p.Mutates = func(c Command) bool {
		switch {
		case assigning[c.Op]:
			return lang.assigns(c.Args)
		case c.Kind != Other || never[c.Op]:
			return false
		}
		return lang.statement(c.Line)
	}
	if p.Repeat, err = f.repeat(); err != nil {
		return err
	}
	p.ScopeSelect = f.str("behaviour", "select frame")
	return nil
}

// inQueries reads [queries]: the bootstrap's commands fred asks with.
// {expr}, {key}, {token}: as they are; {q:T}: T written for inside a
// string literal of the language, in the quotes the file puts around it.
func (f *pfile) inQueries(p *Personality, lang *language) error {
	q := map[string]func(string) string{"q": lang.quote}
	tmpl := func(key string) (func(kv ...string) string, error) {
		e, err := f.required("queries", key)
		if err != nil {
			return nil, err
		}
		return func(kv ...string) string {
			vars := map[string]string{}
			for i := 0; i+1 < len(kv); i += 2 {
				vars[kv[i]] = kv[i+1]
			}
			return expandWith(e.value, vars, q)
		}, nil
	}
	for _, k := range []struct {
		key string
		to  *string
	}{{"location", &p.LocationCmd}, {"pid", &p.PidCmd}, {"stop", &p.StopCmd}, {"breakpoints", &p.BreakpointsCmd},
		{"enable", &p.Enable}, {"disable", &p.Disable}, {"delete", &p.Delete}, {"break at", &p.BreakAt},
		{"frame", &p.FrameCmd}, {"save state", &p.SaveState}, {"load state", &p.LoadState}, {"fork", &p.Fork}} {
		e, err := f.required("queries", k.key)
		if err != nil {
			return err
		}
		*k.to = e.value
	}
	p.DepthCmd = p.LocationCmd
	p.ParseLocation, p.ParseDepth, p.ParsePid = parseFredWhere, parseFredDepth, parseFredPid
	p.ParseStop, p.ParseBreakpoints, p.ParseNewBreakpoint = parseFredStop, parseFredBps, parseFredNewBp
	p.ParseEval = lang.value
	p.KillLine = f.str("queries", "kill line")
	ev, err := tmpl("evaluate")
	if err != nil {
		return err
	}
	p.EvalCmd = func(expr string) string { return ev("expr", expr) }
	echo, err := tmpl("echo")
	if err != nil {
		return err
	}
	p.EchoCmd = func(token string) string { return echo("token", token) }
	if p.ScopeCmd = f.str("queries", "scope"); p.ScopeCmd != "" {
		se, err := tmpl("scoped evaluate")
		if err != nil {
			return err
		}
		sw, err := tmpl("scope where")
		if err != nil {
			return err
		}
		p.ScopedEvalCmd = func(expr, key string) string { return se("expr", expr, "key", key) }
		p.ScopeWhere = func(key string) string { return sw("key", key) }
	}
	if e := f.get("queries", "probes"); e != nil {
		pr := &Probes{Collect: f.str("queries", "probed")}
		for _, k := range []struct {
			key string
			to  *float64
		}{{"probe every", &pr.Every}} {
			v, err := f.required("queries", k.key)
			if err != nil {
				return err
			}
			if *k.to, err = strconv.ParseFloat(v.value, 64); err != nil || *k.to <= 0 {
				return f.errAt(v, "%q: seconds of the program's CPU time", v.value)
			}
		}
		slots, err := f.required("queries", "probe slots")
		if err != nil {
			return err
		}
		if pr.Slots, err = strconv.Atoi(slots.value); err != nil || pr.Slots < 3 {
			return f.errAt(slots, "%q: a number of copies, at least 3", slots.value)
		}
		if pr.Collect == "" {
			return f.errAt(e, "needs probed too: how fred collects them")
		}
		pr.Arm = func(every float64, fifos []string) string {
			return expand(e.value, map[string]string{"every": strconv.FormatFloat(every, 'g', -1, 64), "fifos": lang.list(fifos)})
		}
		p.Probes = pr
	}
	return nil
}

// inPatterns reads [patterns]: what the debugger's own output means.
func (f *pfile) inPatterns(p *Personality, _ *language) error {
	got := map[string]*Pattern{}
	for _, key := range []string{"ended", "signal", "watch hit", "new run", "refused", "refused unless", "block start", "block end", "passes", "evaluation failed"} {
		pt, err := f.pattern("patterns", key)
		if err != nil {
			return err
		}
		got[key] = pt
	}
	for _, key := range []string{"ended", "signal", "new run", "refused", "evaluation failed"} {
		if got[key] == nil {
			return &FileError{Path: f.path, Field: "[patterns] " + key, Msg: "missing: every in-process personality file has it"}
		}
	}
	ended, newRun, refused, unless := got["ended"], got["new run"], got["refused"], got["refused unless"]
	p.Ended = func(out string) bool { return ended.MatchString(out) }
	p.StopReason = stopReason(ended, got["watch hit"], got["signal"])
	p.NewRun = func(out string) bool { return newRun.MatchString(out) }
	p.Refused = func(out string) bool {
		return refused.MatchString(out) && (unless == nil || !unless.MatchString(out))
	}
	p.BlockStart, p.BlockEnd, p.Passes, p.EvalFailed = got["block start"], got["block end"], got["passes"], got["evaluation failed"]
	return nil
}

// inStepper reads [stepper]: the bootstrap counts statements itself.
func (f *pfile) inStepper(p *Personality, lang *language) error {
	if !f.has("stepper") {
		return nil
	}
	w, err := f.required("stepper", "watch limit")
	if err != nil {
		return err
	}
	st := &Stepper{Nexts: lang.nexts, Steps: lang.steps}
	if st.WatchMax, err = strconv.Atoi(w.value); err != nil || st.WatchMax < 1 {
		return f.errAt(w, "%q: a number of statements", w.value)
	}
	if st.StepsWatch, err = f.boolean("stepper", "steps watch"); err != nil {
		return err
	}
	p.Stepper = st
	return nil
}

// set is the words of s.
func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
