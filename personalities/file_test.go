package personalities

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lldbFile(t *testing.T) string {
	t.Helper()
	return builtinFile(t, "lldb")
}

func builtinFile(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(builtinFiles, "files/"+name+".fred")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineOf is the line of the first line of text that starts with prefix.
func lineOf(t *testing.T, text, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// A personality file with a mistake gets one error naming the field and
// the line; nothing is built from it.
func TestPersonalityFileMistakes(t *testing.T) {
	cases := []struct {
		name, old, new string
		field, msg     string
		at             string // the line the error names starts with this ("" the file as a whole)
		file           string // the built-in file changed ("": lldb's)
	}{
		{"a pattern that does not compile", "ended: (?m)^Process", "ended: (?m)^(?<x Process", "[patterns] ended", "does not compile", "ended: ", ""},
		{"a pattern without the group fred reads", `depth answer: (?m)^@fred depth (?<depth>\d+)`, `depth answer: (?m)^@fred depth (\d+)`, "[queries] depth answer", "no group (?<depth>...)", "depth answer: ", ""},
		{"a command without its class", "forward next: n, next, thread step-over", "next: n, next, thread step-over", "[commands] next", `"next" is no class of command`, "next: ", ""},
		{"no forward command fred replays with", "forward step: s, step, thread step-in", "inspect step: s, step, thread step-in", "[commands]", `no forward command named "step"`, "", ""},
		{"no prompt", `prompt: "(lldb) "`, `# no prompt`, "prompt", "missing", "", ""},
		{"an empty prompt", `prompt: "(lldb) "`, `prompt:`, "prompt", "empty", "prompt:", ""},
		{"a command line without its class", "forward run: r, run, process launch", ": r, run, process launch", "[commands] ", "no class before the colon", ": r, run", ""},
		{"a stepper without nexts", "nexts: script fred_nexts({max})\n", "", "[stepper] nexts", "missing", "", ""},
		{"an unknown kind", "kind: traced", "kind: remote", "kind", `"remote": traced`, "kind: ", ""},
		{"a field fred does not know", "start hint:", "strat hint:", "strat hint", "not a field fred knows", "strat hint:", ""},
		{"an unknown section", "[stepper]", "[steppers]", "", "no section [steppers]", "[steppers]", ""},
		{"a heredoc without its end", "END\n\n# How the debugger", "ENDS\n\n# How the debugger", "setup", `no line "END" ends the value`, "setup: ", ""},
		{"a field given twice", "kind: traced", "kind: traced\nkind: traced", "kind", "given twice", "kind: traced\nkind", ""},
		{"a bootstrap script that is not there", "bootstrap script: fred:lldb_helpers.py", "bootstrap script: nowhere.py", "bootstrap script", "nowhere.py", "bootstrap script: ", ""},
		// The other kind's.
		{"an unknown language", "language: python", "language: cobol", "language", `"cobol": fred knows the languages perl, python`, "language: ", "pdb"},
		{"no location query", "location: fred_where\n", "", "[queries] location", "missing", "", "pdb"},
		{"probes without their number", "probe slots: 11\n", "", "[queries] probe slots", "missing", "", "perl"},
		{"a repeat without its line", "repeat as: list=list", "repeat as: list", "[behaviour] repeat as", `"list": OP=LINE`, "repeat as: ", "pdb"},
		{"no pattern for the end", "ended: (?m)^Debugged", "# ended: (?m)^Debugged", "[patterns] ended", "missing", "", "perl"},
		{"an in-process file without its bootstrap", "bootstrap script: fred:perl_boot.pl\n", "", "bootstrap script", "missing", "", "perl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.file == "" {
				c.file = "lldb"
			}
			good := builtinFile(t, c.file)
			if !strings.Contains(good, c.old) {
				t.Fatalf("test bug: %s.fred has no %q", c.file, c.old)
			}
			text := strings.Replace(good, c.old, c.new, 1)
			path := filepath.Join(t.TempDir(), "mine.fred")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := LoadFile(path)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("LoadFile: %v (%v), want a *FileError", err, p)
			}
			if fe.Field != c.field || !strings.Contains(fe.Msg, c.msg) || fe.Path != path {
				t.Fatalf("got %q (field %q), want field %q and %q", err, fe.Field, c.field, c.msg)
			}
			want := 0
			if c.at != "" {
				first, _, _ := strings.Cut(c.at, "\n")
				want = lineOf(t, text, first)
				if strings.Contains(c.at, "\n") {
					want++ // the second of two such lines
				}
			}
			if fe.Line != want {
				t.Fatalf("%v: line %d, want %d", err, fe.Line, want)
			}
			if !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("the error does not start with the file: %v", err)
			}
		})
	}
}

// The embedded lldb file and a copy of it read from disk make the same
// personality; its queries read their answers through the file's
// patterns.
func TestPersonalityFileReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lldb.fred")
	if err := os.WriteFile(path, []byte(strings.Replace(lldbFile(t), `prompt: "(lldb) "`, `prompt: "(mine) "`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Named(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Prompt != "(mine) " || p.Name != "lldb" || p.Tracer == nil || p.Tracer.Fork == nil || p.Stepper == nil || !p.NoCountArg {
		t.Fatalf("read: %+v", p)
	}
	l, err := p.ParseLocation("script fred_where()\r\n@fred where 4198837\tmain\t/src/a b.c\t12\r\n")
	if err != nil || l.PC != 4198837 || l.Function != "main" || l.File != "/src/a b.c" || l.Line != 12 {
		t.Fatalf("location: %+v, %v", l, err)
	}
	if _, err := p.ParseDepth("@fred not running\r\n"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("depth with no program: %v", err)
	}
	bps := p.ParseBreakpoints("@fred bp 1 1 0 /src/a.c:3\r\n@fred bp 2 0 1 main\r\n")
	if len(bps) != 2 || bps[0] != (Bp{Num: "1", Where: "/src/a.c:3", Enabled: true}) || bps[1] != (Bp{Num: "2", Where: "main", Temp: true}) {
		t.Fatalf("breakpoints: %+v", bps)
	}
	if v, err := p.ParseEval("@fred error error: use of undeclared identifier 'x'\r\n"); err == nil || err.Error() != "use of undeclared identifier 'x'" || v != "" {
		t.Fatalf("an evaluation that failed: %q, %v", v, err)
	}
	if v, err := p.ParseEval("@fred value -998208\r\n"); err != nil || v != "-998208" {
		t.Fatalf("a value: %q, %v", v, err)
	}
	if c := p.Classify("thread step-over"); c.Kind != Forward || c.Op != OpNext {
		t.Fatalf("thread step-over: %+v", c)
	}
	if c := p.Classify("p x = 3"); c.Kind != Mutate {
		t.Fatalf("p x = 3: %+v", c)
	}
	argv := p.Argv([]string{"lldb", "./prog"}, "MARK", "/dev/pts/9")
	if argv[0] != "lldb" || argv[len(argv)-1] != "./prog" || !strings.Contains(strings.Join(argv, "|"), "|-O|settings set prompt MARK|") {
		t.Fatalf("argv %q", argv)
	}
	if p.StopReason("* thread #1, name = 'a', stop reason = breakpoint 2.1\r\n") != StopBreakpoint ||
		p.StopReason("Process 9 exited with status = 0 (0x00000000)\r\n") != StopEnded {
		t.Fatalf("stop reasons")
	}
}

// Templates: {NAME} quoted where asked, {=NAME} as it is, wrappers
// nested, and braces in a value are the value's.
func TestTemplateExpand(t *testing.T) {
	vars := map[string]string{"expr": `s == "a{b}"`, "max": "5"}
	for _, c := range []struct{ tmpl, want string }{
		{"fred_eval({expr})", `fred_eval("s == \"a{b}\"")`},
		{"fred-nexts {max} fp {=expr}", `fred-nexts 5 fp s == "a{b}"`},
		{"interpreter-exec mi {mi:-data-evaluate-expression {mi:{=expr}}}", `interpreter-exec mi "-data-evaluate-expression \"s == \\\"a{b}\\\"\""`},
		{"python f({py:{mi:{=expr}}})", `python f("\"s == \\\"a{b}\\\"\"")`},
		{"echo {octal:{=expr}}\n", "echo s == \"a{b}\"\n"},
		{"fred_bp = {}; {nosuch} {", "fred_bp = {}; {nosuch} {"},
	} {
		if got := expand(c.tmpl, vars, "expr"); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.tmpl, got, c.want)
		}
	}
	if got := expand("-iex set prompt {octal:{marker}}", map[string]string{"marker": "\x1a\x1afred\x1a"}); got != `-iex set prompt \032\032fred\032` {
		t.Errorf("marker: %s", got)
	}
}
