package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fred-debugger/fred/fred"
	"github.com/fred-debugger/fred/internal/recording"
	P "github.com/fred-debugger/fred/personalities"
)

// recordCmd is `fred record [-o DIR] PROG [ARGS]`: the program runs
// without a debugger, as fast as the replay log lets it, and leaves a
// recording that `fred replay DIR` debugs. fred's status is the program's.
func recordCmd(args []string) int {
	fs := flag.NewFlagSet("fred record", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "the recording's `DIR` (default: PROG.fred, PROG.fred-2, ... here)")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 {
		if err != nil {
			fmt.Fprintf(os.Stderr, "fred record: %v\n", err)
		}
		fmt.Fprintln(os.Stderr, "usage: fred record [-o DIR] PROGRAM [ARGS]")
		return 2
	}
	argv := fs.Args()
	o := recording.Options{Argv: argv, Fred: version}
	name := filepath.Base(argv[0])
	switch {
	case strings.HasPrefix(name, "python"):
		// Recorded after pdb's own start, which replays it: the command
		// line fred's pdb runs, whose arguments after its bootstrap are
		// the script's.
		run := P.PDB.Argv(argv, "(Pdb) ", "")
		rest := run[slices.Index(run, "-c")+2:]
		module := len(rest) > 1 && rest[0] == "-m"
		if module {
			rest = rest[1:]
		}
		if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
			fmt.Fprintf(os.Stderr, "fred record: give the script or the module: fred record %s SCRIPT [ARGS], or %s -m MODULE [ARGS]\n", name, name)
			return 2
		}
		script := rest[0]
		// The interpreter itself, not a wrapper script (pyenv's shims),
		// is the one the replay runs; and fred follows its pdb's own
		// steps (Python 3.11's, with _ScriptTarget).
		// (pdb's source is read, not imported: an import of pdb costs a
		// recording of a short run a tenth of its time)
		out, err := exec.Command(argv[0], "-S", "-c", "import sys, importlib.util as u; print(sys.executable); print(u.find_spec('pdb').origin)").Output()
		real, origin, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		src, rerr := os.ReadFile(origin)
		if err == nil {
			err = rerr
		}
		if err != nil || real == "" || !bytes.Contains(src, []byte("class _ScriptTarget(str):")) || !bytes.Contains(src, []byte("    def check(self):")) {
			why := ""
			if err != nil {
				why = ": " + err.Error()
			}
			fmt.Fprintf(os.Stderr, "fred record: %s is not an interpreter fred records with (it needs pdb._ScriptTarget, as in Python 3.11 and 3.12)%s\n", argv[0], why)
			return 2
		}
		argv = append([]string{real}, argv[1:]...)
		run[0] = argv[0]
		o.Argv = argv
		o.Run, o.Debugger, o.InProcess, o.Env = run, "pdb", true, append(P.PDB.Env, "FRED_RECORD=1")
		if !module {
			o.Script = script
		}
		name = filepath.Base(script)
	case strings.HasPrefix(name, "perl"):
		// Recorded under perl -d with fred's start, not stopping
		// (NonStop): perl -d's debugger is part of the run it replays;
		// only what it does at its prompt is not logged.
		run := P.Perl.Argv(argv, "(perl) ", "")
		for len(run) > 0 && (run[0] == "env" || strings.Contains(run[0], "=")) {
			if run[0] != "env" {
				o.Env = append(o.Env, run[0])
			}
			run = run[1:]
		}
		o.Run, o.Debugger, o.InProcess = run, "perl", true
		o.Env = append(append(o.Env, P.Perl.Env...), "PERLDB_OPTS=NonStop=1", "FRED_RECORD=1")
	}
	dir := *out
	if dir == "" {
		dir = freeName(name + ".fred")
	}
	o.Dir = dir
	res, err := recording.Record(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fred record: %v\n", err)
		return 1
	}
	m := res.Manifest
	ended := fmt.Sprintf("exit status %d", m.Exit.Status)
	if m.Exit.Signal != "" {
		ended = "killed by " + m.Exit.Signal
	}
	if len(res.Changed) > 0 {
		fmt.Fprintf(os.Stderr, "fred: sources not kept, edited while the program ran (a replay shows them as they are then): %s\n", strings.Join(res.Changed, ", "))
	}
	if res.Notice != "" {
		fmt.Fprintf(os.Stderr, "fred: replay log: %s\n", res.Notice)
	}
	fmt.Fprintf(os.Stderr, "fred: recorded %s (%s) in %s: %d entries, %d files; 'fred replay %s' debugs this run\n",
		strings.Join(argv, " "), ended, dir, m.LogCounts, len(m.Parts), dir)
	return m.Exit.Status
}

// freeName is name, or name-2, name-3, ... whichever does not exist yet.
func freeName(name string) string {
	for i := 1; ; i++ {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s-%d", name, i)
		}
		if _, err := os.Lstat(n); errors.Is(err, os.ErrNotExist) {
			return n
		}
	}
}

// replaying is a recording made ready for a gdb session.
type replaying struct {
	argv        []string // the debugger's command line
	personality string
	programEnv  []string // set for the program alone (gdb's set environment)
	log         string   // the recorded log
	cleanup     func()
	// session is a saved session's history (fred-save), opened at its
	// moment; save writes one (fred-save in this session).
	session []byte
	save    func(dir, log string, session []byte, say func(string, ...any)) error
	noStat  bool // the log holds no file metadata (a live session saved)
	// env is the debugger's environment, which the program inherits
	env        []string
	logVersion int // the log's version when older than this fred's (0: it is not)
}

// prepareReplay checks the recording at args[0], puts the recorded
// environment and directory in place for the session, and returns gdb's
// command line (the rest of args are gdb's options). A recorded file
// that differs here (the executable, a library) is run from the
// recording's copy instead, said.
func prepareReplay(args []string, say func(string, ...any)) (*replaying, error) {
	if len(args) == 0 {
		return nil, errors.New("usage: fred replay DIR [debugger options]")
	}
	dir, err := filepath.Abs(args[0]) // the directory changes below
	if err != nil {
		return nil, err
	}
	m, err := recording.Read(dir)
	if err != nil {
		return nil, err
	}
	if m.LogVersion > recording.CurrentLog {
		return nil, &recording.UnfitError{Why: fmt.Sprintf("it was made by a newer fred (%s, log version %d; this fred replays up to %d)", m.Fred, m.LogVersion, recording.CurrentLog)}
	}
	missing, calls, err := m.Fits()
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		say("the recording's CPU had flags this one lacks (%s): a program that used those instructions fails here", strings.Join(missing, " "))
	}
	if len(calls) > 0 {
		say("the recording's kernel (%s) had system calls that answer ENOSYS here: %s", m.Kernel, strings.Join(calls, ", "))
	}

	var gdb string
	if m.Debugger == "gdb" {
		if gdb, err = exec.LookPath("gdb"); err != nil {
			return nil, fmt.Errorf("gdb is not installed: run 'make deps' (as root): %w", err)
		}
	} else if m.Debugger != "pdb" && m.Debugger != "perl" {
		return nil, &recording.UnfitError{Why: fmt.Sprintf("it is for %s, which this fred does not replay", m.Debugger)}
	}
	tmp, err := os.MkdirTemp("", "fred-replay-")
	if err != nil {
		return nil, err
	}
	r := &replaying{log: filepath.Join(dir, recording.LogFile), cleanup: func() { os.RemoveAll(tmp) }, noStat: m.NoStat}
	if m.LogVersion < recording.CurrentLog {
		r.logVersion = max(m.LogVersion, 1)
	}
	fail := func(err error) (*replaying, error) { r.cleanup(); return nil, err }
	if r.session, err = m.Session(dir); err != nil {
		return fail(err)
	}
	// (a compressed log is unpacked: the replay library maps it)
	if p, ok := m.Part(recording.RoleLog, ""); ok && p.Zstd {
		r.log = filepath.Join(tmp, recording.LogFile)
		if err := recording.Extract(dir, p, r.log); err != nil {
			return fail(err)
		}
	}
	// fred-save's DIR is the person's, relative to where fred started.
	wd, _ := os.Getwd()
	r.save = func(to, log string, session []byte, say func(string, ...any)) error {
		if !filepath.IsAbs(to) {
			to = filepath.Join(wd, to)
		}
		return recording.Save(dir, m, to, log, session, version, say)
	}
	refs, read, err := recording.ExtractReferenced(dir, m, filepath.Join(tmp, "read"))
	if err != nil {
		return fail(err)
	}
	if len(read) > 0 {
		say("not the versions the saved session read here (changed since, or another machine): %s; the program reads the saved copies", strings.Join(read, ", "))
	}
	// Sources edited since (or not here): the debugger lists, and pdb
	// compiles the script, as recorded.
	sources, err := recording.ExtractSources(dir, m, filepath.Join(tmp, "src"))
	if err != nil {
		return fail(err)
	}
	var srcTable strings.Builder
	var srcRules []string
	changed := slices.Sorted(maps.Keys(sources))
	for _, from := range changed {
		fmt.Fprintf(&srcTable, "%s\t%s\n", from, sources[from])
		srcRules = append(srcRules, "-iex", fmt.Sprintf("set substitute-path %s %s", gdbArg(from), gdbArg(sources[from])))
	}
	if len(changed) > 0 {
		say("the source here is not the recorded one (edited since, or not here): %s; the recorded source is what the debugger shows", strings.Join(changed, ", "))
	}

	// The executable and libraries: the ones here when they are the
	// recorded ones, else the recording's copies.
	exe, prog := m.Exe, m.Argv[0]
	var libDir string
	for _, p := range m.Parts {
		if p.Role != recording.RoleExecutable && p.Role != recording.RoleLibrary {
			continue
		}
		if same, _ := recording.Same(p); same {
			continue
		}
		base := filepath.Base(p.Path)
		if p.Role == recording.RoleLibrary && strings.HasPrefix(base, "ld-linux") {
			return fail(&recording.UnfitError{Why: fmt.Sprintf("the dynamic loader %s is not the one recorded, and a program cannot be given another", p.Path)})
		}
		dst := filepath.Join(tmp, base)
		if p.Role == recording.RoleLibrary {
			libDir = filepath.Join(tmp, "lib")
			dst = filepath.Join(libDir, base)
		}
		if err := recording.Extract(dir, p, dst); err != nil {
			return fail(err)
		}
		say("%s is not the %s recorded: the recording's copy runs instead", p.Path, p.Role)
		if p.Role == recording.RoleExecutable {
			exe, prog = dst, dst
		}
	}

	// The recorded environment (what the program reads of it is not in
	// the log), with this terminal's own settings. The debugger runs in
	// it (Options.Env: fred's own process keeps this machine's), so that
	// the program inherits it as it was, every value byte for byte. Under
	// gdb, what would change gdb itself (its Python, the libraries it
	// loads, its home) stays this machine's for gdb, and is the recorded
	// one for the program alone (set and unset environment).
	keep := map[string]bool{"TERM": true, "COLUMNS": true, "LINES": true, "FRED_CRIU": true, "FRED_TRACE": true, "FREDLOG_TRACE": true}
	env := map[string]string{}
	for _, kv := range m.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && !keep[k] {
			env[k] = v
		}
	}
	for k := range keep {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if refs != "" {
		env["FREDLOG_REFS"] = refs // (not kept by a save: FREDLOG_*)
	}
	if m.Debugger == "pdb" && srcTable.Len() > 0 {
		table := filepath.Join(tmp, "sources")
		if err := os.WriteFile(table, []byte(srcTable.String()), 0o644); err != nil {
			return fail(err)
		}
		env["FRED_SOURCES"] = table // (pdb's bootstrap takes it out)
	}
	if libDir != "" {
		env["LD_LIBRARY_PATH"] = strings.TrimSuffix(libDir+":"+env["LD_LIBRARY_PATH"], ":")
	}
	if sh := env["SHELL"]; sh != "" {
		if _, err := os.Stat(sh); err != nil {
			env["SHELL"] = "/bin/sh" // gdb starts the program through it
		}
	}
	gdbOwn := func(k string) bool {
		return m.Debugger == "gdb" && (strings.HasPrefix(k, "PYTHON") || strings.HasPrefix(k, "MALLOC_") ||
			k == "LD_LIBRARY_PATH" || k == "LD_AUDIT" || k == "GLIBC_TUNABLES" || k == "GCONV_PATH" || k == "HOME")
	}
	for k, v := range env {
		if gdbOwn(k) {
			r.programEnv = append(r.programEnv, k+"="+v)
		} else {
			r.env = append(r.env, k+"="+v)
		}
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); gdbOwn(k) {
			r.env = append(r.env, kv)
			if _, ok := env[k]; !ok {
				r.programEnv = append(r.programEnv, k) // not the program's
			}
		}
	}
	slices.Sort(r.env)
	slices.Sort(r.programEnv)
	if err := os.Chdir(m.Cwd); err != nil {
		wd, _ := os.Getwd()
		say("the recorded directory %s is not here (%v): the program runs in %s", m.Cwd, err, wd)
		if prog == m.Argv[0] {
			prog = exe
		}
	}
	ended := fmt.Sprintf("exit status %d", m.Exit.Status)
	switch {
	case m.Exit.Signal != "":
		ended = "killed by " + m.Exit.Signal
	case m.Exit.Status < 0:
		ended = "saved while it ran"
	}
	say("replaying %s: '%s', recorded on %s at %s (%s); 'run' runs that run again, exactly, and the reverse commands work in it",
		dir, strings.Join(m.Argv, " "), m.Host, m.Recorded, ended)
	if r.session != nil {
		say("a session saved at %s: it opens at the moment it was saved at", m.Saved)
	}
	r.personality = m.Debugger
	if m.Debugger == "perl" {
		r.argv = append([]string{exe, "-d"}, args[1:]...)
		r.argv = append(r.argv, m.Argv[1:]...)
		return r, nil
	}
	if m.Debugger == "pdb" {
		// the interpreter, under pdb, with the recorded script and
		// arguments (pdb's options, the rest of args, first)
		r.argv = append([]string{exe, "-m", "pdb"}, args[1:]...)
		rest := m.Argv[1:]
		if len(rest) > 1 && rest[0] == "-m" && rest[1] == "pdb" {
			rest = rest[2:]
		}
		r.argv = append(r.argv, rest...)
		return r, nil
	}
	r.argv = append(append(append([]string{gdb}, srcRules...), args[1:]...), "--args", prog)
	r.argv = append(r.argv, m.Argv[1:]...)
	return r, nil
}

// saveLive is fred-save in a session that does not replay a recording:
// the program's command line in the form a recording keeps (the
// interpreter and the script for pdb and perl, without the debugger's
// own start), from the person's command line or the running program.
func saveLive(q fred.SaveRequest, cwd string) error {
	var argv []string
	switch q.Debugger {
	case "pdb":
		run := P.PDB.Argv(q.Argv, "", "")
		argv = append([]string{run[0]}, run[slices.Index(run, "-c")+2:]...)
	case "perl":
		run := P.Perl.Argv(q.Argv, "", "")
		for len(run) > 0 && (run[0] == "env" || strings.Contains(run[0], "=")) {
			run = run[1:]
		}
		argv = slices.DeleteFunc(run, func(a string) bool { return a == "-d" })
	default:
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", q.Pid))
		if err != nil {
			return fmt.Errorf("the program's command line: %w", err)
		}
		argv = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	}
	if len(argv) > 0 {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", q.Pid)); err == nil && q.Debugger != "gdb" {
			argv[0] = exe // the interpreter itself, not a wrapper
		}
	}
	// An in-process debugger's program started with fred's environment
	// and the personality's (its hash seed), which /proc need not show:
	// perl -d writes $0 over that memory.
	var env []string
	if p, err := P.ByName(q.Debugger); err == nil && p.InProcess {
		env = append(os.Environ(), p.Env...)
	}
	return recording.SaveLive(recording.Live{Dir: q.Dir, Log: q.Log, Session: q.Session, Pid: q.Pid, Argv: argv, Debugger: q.Debugger, Fred: version, Cwd: cwd, Env: env, Say: q.Say})
}

// gdbArg escapes a path as one argument of a gdb command (spaces,
// quotes and backslashes; gdb's splitter honours backslashes).
func gdbArg(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ { // (bytes: a path need not be UTF-8)
		if strings.IndexByte(" \t\n\r\v\f'\"\\", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
