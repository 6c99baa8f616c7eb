package personalities

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A personality file: what fred knows of a debugger, as data read by the
// protocol core of its kind (traced.go). docs/personalities.md has the
// format. Lines are "key: value" (a value in double quotes keeps its
// spaces and Go's escapes), "key: <<TAG" then lines up to one that is
// TAG alone, "[section]", comments (#) and blank lines.

//go:embed files/*.fred scripts/*
var builtinFiles embed.FS

// FileError is a mistake in a personality file: where, and in which
// field.
type FileError struct {
	Path  string
	Line  int // 0: the file as a whole
	Field string
	Msg   string
}

func (e *FileError) Error() string {
	where := e.Path
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", where, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", where, e.Msg)
}

// entry is one "key: value" of a file.
type entry struct {
	section, key, value string
	line                int
	used                bool
}

func (e *entry) field() string {
	if e.section == "" {
		return e.key
	}
	return "[" + e.section + "] " + e.key
}

// pfile is a parsed personality file.
type pfile struct {
	path    string
	entries []*entry
	// script reads a file the personality names (its bootstrap script):
	// "fred:NAME" is one of fred's own, else a path from the file's
	// directory.
	script func(name string) (string, error)
}

// LoadFile reads a personality file; any mistake in it is a *FileError.
func LoadFile(path string) (*Personality, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	p, err := parseFile(path, string(b), func(name string) (string, error) {
		if n, ok := strings.CutPrefix(name, "fred:"); ok {
			return builtinScript(n)
		}
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		b, err := os.ReadFile(name)
		return string(b), err
	})
	if err != nil {
		return nil, err
	}
	p.File = path
	return p, nil
}

// BuiltinFile is the text of built-in personality name's file, to copy
// and change into one's own: its scripts ("fred:NAME") are read from fred
// wherever the copy is.
func BuiltinFile(name string) (string, error) {
	b, err := fs.ReadFile(builtinFiles, "files/"+name+".fred")
	if err != nil {
		var known []string
		entries, _ := fs.ReadDir(builtinFiles, "files")
		for _, e := range entries {
			known = append(known, strings.TrimSuffix(e.Name(), ".fred"))
		}
		return "", fmt.Errorf("no built-in personality %q (fred has %s)", name, strings.Join(known, ", "))
	}
	return string(b), nil
}

func builtinScript(name string) (string, error) {
	b, err := fs.ReadFile(builtinFiles, "scripts/"+name)
	return string(b), err
}

// mustBuiltin is a personality embedded in fred.
func mustBuiltin(name string) *Personality {
	path := "files/" + name
	b, err := fs.ReadFile(builtinFiles, path)
	if err != nil {
		panic(err)
	}
	p, err := parseFile(path, string(b), func(name string) (string, error) {
		return builtinScript(strings.TrimPrefix(name, "fred:"))
	})
	if err != nil {
		panic(err)
	}
	return p
}

func parseFile(path, text string, script func(string) (string, error)) (*Personality, error) {
	f := &pfile{path: path, script: script}
	if err := f.parse(text); err != nil {
		return nil, err
	}
	p, err := f.build()
	if err != nil {
		return nil, err
	}
	for _, e := range f.entries {
		if !e.used {
			return nil, &FileError{Path: path, Line: e.line, Field: e.field(), Msg: "not a field fred knows here (docs/personalities.md lists them)"}
		}
	}
	return p, nil
}

func (f *pfile) parse(text string) error {
	lines := strings.Split(text, "\n")
	section := ""
	seen := map[string]int{}
	for i := 0; i < len(lines); i++ {
		n, line := i+1, strings.TrimRight(lines[i], " \t\r")
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case strings.HasPrefix(trimmed, "["):
			if !strings.HasSuffix(trimmed, "]") {
				return &FileError{Path: f.path, Line: n, Msg: fmt.Sprintf("%q: a section is [name]", trimmed)}
			}
			section = strings.TrimSpace(trimmed[1 : len(trimmed)-1])
			if _, ok := sections[section]; !ok {
				return &FileError{Path: f.path, Line: n, Msg: fmt.Sprintf("no section [%s] (sections: %s)", section, strings.Join(sectionNames(), ", "))}
			}
			continue
		}
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok {
			return &FileError{Path: f.path, Line: n, Msg: fmt.Sprintf("%q: not \"key: value\"", trimmed)}
		}
		key, value = strings.Join(strings.Fields(key), " "), strings.TrimSpace(value)
		if tag, ok := strings.CutPrefix(value, "<<"); ok && tag != "" && !strings.ContainsAny(tag, " \t") {
			var body []string
			j := i + 1
			for ; j < len(lines) && strings.TrimSpace(lines[j]) != tag; j++ {
				body = append(body, strings.TrimRight(lines[j], "\r"))
			}
			if j == len(lines) {
				return &FileError{Path: f.path, Line: n, Field: (&entry{section: section, key: key}).field(), Msg: fmt.Sprintf("no line %q ends the value", tag)}
			}
			value, i = strings.Join(body, "\n"), j
		} else if strings.HasPrefix(value, `"`) {
			u, err := strconv.Unquote(value)
			if err != nil {
				return &FileError{Path: f.path, Line: n, Field: (&entry{section: section, key: key}).field(), Msg: fmt.Sprintf("a quoted value: %v (a value that starts with a double quote is quoted whole)", err)}
			}
			value = u
		}
		e := &entry{section: section, key: key, value: value, line: n}
		if section != "commands" {
			if first, ok := seen[e.field()]; ok {
				return &FileError{Path: f.path, Line: n, Field: e.field(), Msg: fmt.Sprintf("given twice (line %d too)", first)}
			}
			seen[e.field()] = n
		}
		f.entries = append(f.entries, e)
	}
	return nil
}

// sections a file may have, and what each holds.
var sections = map[string]string{
	"":            "what the debugger is and how it starts",
	"commands":    "the person's commands, by class",
	"behaviour":   "how the commands behave",
	"queries":     "what fred asks, and how it reads the answers",
	"patterns":    "what the debugger's output means",
	"tracer":      "letting go of the program and taking it back",
	"fork":        "fork copies through fred's agent",
	"stepper":     "many steps in one round trip",
	"early start": "fred's run: snapshots at the entry point and main",
	"threads":     "the threads of a program, and fred's thread turns",
}

func sectionNames() []string {
	var n []string
	for s := range sections {
		if s != "" {
			n = append(n, "["+s+"]")
		}
	}
	slices.Sort(n)
	return n
}

// get is a field's entry, marked as read; nil if the file has none.
func (f *pfile) get(section, key string) *entry {
	for _, e := range f.entries {
		if e.section == section && e.key == key {
			e.used = true
			return e
		}
	}
	return nil
}

func (f *pfile) str(section, key string) string {
	if e := f.get(section, key); e != nil {
		return e.value
	}
	return ""
}

func (f *pfile) errAt(e *entry, format string, args ...any) error {
	return &FileError{Path: f.path, Line: e.line, Field: e.field(), Msg: fmt.Sprintf(format, args...)}
}

// required is a field the file must have.
func (f *pfile) required(section, key string) (*entry, error) {
	e := f.get(section, key)
	if e != nil && e.value != "" {
		return e, nil
	}
	if e != nil {
		return nil, f.errAt(e, "empty: every personality file gives it")
	}
	field := key
	if section != "" {
		field = "[" + section + "] " + key
	}
	return nil, &FileError{Path: f.path, Field: field, Msg: "missing: every personality file has it"}
}

// pattern compiles a field's pattern (nil if the file has none).
func (f *pfile) pattern(section, key string, groups ...string) (*Pattern, error) {
	e := f.get(section, key)
	if e == nil {
		return nil, nil
	}
	p, err := CompilePattern(e.value)
	if err != nil {
		return nil, f.errAt(e, "the pattern does not compile: %v", err)
	}
	have := map[string]bool{}
	for _, g := range p.GroupNames() {
		have[g] = true
	}
	for _, g := range groups {
		if !have[g] {
			return nil, f.errAt(e, "the pattern has no group (?<%s>...)", g)
		}
	}
	return p, nil
}

func (f *pfile) boolean(section, key string) (bool, error) {
	e := f.get(section, key)
	if e == nil {
		return false, nil
	}
	switch e.value {
	case "yes", "true":
		return true, nil
	case "no", "false":
		return false, nil
	}
	return false, f.errAt(e, "%q: yes or no", e.value)
}

// has says whether the file has any field in section.
func (f *pfile) has(section string) bool {
	for _, e := range f.entries {
		if e.section == section {
			return true
		}
	}
	return false
}

// kinds of the [commands] lines.
var kindNames = map[string]Kind{
	"forward": Forward, "inspect": Inspect, "mutate": Mutate,
	"breakpoint": Breakpoint, "kill": Kill, "quit": Quit, "other": Other,
}

// commands reads [commands]: "CLASS [NAME] [counted]: names, ...".
func (f *pfile) commands() ([]Spec, error) {
	var specs []Spec
	for _, e := range f.entries {
		if e.section != "commands" {
			continue
		}
		e.used = true
		words := strings.Fields(e.key)
		if len(words) == 0 {
			return nil, f.errAt(e, "no class before the colon (forward, inspect, mutate, breakpoint, kill, quit, other)")
		}
		kind, ok := kindNames[words[0]]
		if !ok {
			return nil, f.errAt(e, "%q is no class of command (forward, inspect, mutate, breakpoint, kill, quit, other)", words[0])
		}
		sp := Spec{Kind: kind}
		if n := len(words); n > 1 && words[n-1] == "counted" {
			sp.Count, words = true, words[:n-1]
		}
		sp.Op = strings.Join(words[1:], " ")
		for _, n := range strings.Split(e.value, ",") {
			if n = strings.Join(strings.Fields(n), " "); n != "" {
				sp.Names = append(sp.Names, n)
			}
		}
		if len(sp.Names) == 0 {
			return nil, f.errAt(e, "no names after the colon")
		}
		specs = append(specs, sp)
	}
	if len(specs) == 0 {
		return nil, &FileError{Path: f.path, Field: "[commands]", Msg: "missing: fred must know which commands move the program"}
	}
	for _, op := range []string{OpRun, OpContinue, OpNext, OpStep} {
		found := false
		for _, sp := range specs {
			found = found || sp.Kind == Forward && sp.Op == op
		}
		if !found {
			return nil, &FileError{Path: f.path, Field: "[commands]", Msg: fmt.Sprintf("no forward command named %q: fred replays the person's commands with it", op)}
		}
	}
	return specs, nil
}

// quote writes s as a double-quoted string that Python, Perl and Go read
// back as s.
func quote(s string) string { return strconv.Quote(s) }

var errNoAnswer = errors.New("no answer")

// expand fills a template's {NAME}s from vars: those named in quoted
// written with quote, the others as they are; {=NAME} is always as it is. A wrapper
// {mi:T}, {py:T} or {octal:T} writes the expansion of T as a C string
// (GDB/MI's arguments), a Python string, or with gdb's octal escapes (a
// string setting). Anything else in braces is text. The values are not
// read again: braces in them are theirs.
func expand(tmpl string, vars map[string]string, quoted ...string) string {
	return expandWith(tmpl, vars, nil, quoted...)
}

// expandWith is expand with wrappers of more kinds (an in-process
// language's {q:T}).
func expandWith(tmpl string, vars map[string]string, more map[string]func(string) string, quoted ...string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' {
			b.WriteByte(tmpl[i])
			continue
		}
		end := matchingBrace(tmpl, i)
		if end < 0 {
			b.WriteString(tmpl[i:])
			break
		}
		inner := tmpl[i+1 : end]
		if v, ok := vars[strings.TrimPrefix(inner, "=")]; ok {
			if !strings.HasPrefix(inner, "=") && slices.Contains(quoted, inner) {
				v = quote(v)
			}
			b.WriteString(v)
			i = end
			continue
		}
		if kind, body, ok := strings.Cut(inner, ":"); ok {
			w := more[kind]
			if w == nil {
				w = wrappers[kind]
			}
			if w != nil {
				b.WriteString(w(expandWith(body, vars, more, quoted...)))
				i = end
				continue
			}
		}
		b.WriteByte('{')
	}
	return b.String()
}

var wrappers = map[string]func(string) string{"mi": miQuote, "py": quote, "octal": gdbEscape}

// matchingBrace is the index of the } that closes the { at i, or -1.
func matchingBrace(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}
