package personalities

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/fred-debugger/fred/internal/xstate"
)

// The parsers are tested on transcripts of real gdb sessions, recorded by
// TestRecordGDBTranscripts into testdata/*.transcript (see
// testdata/README.md). The unit tests themselves need no gdb.
//
// Regenerate the transcripts (needs gdb and gcc):
//
//	FRED_RECORD_GDB=1 go test -count=1 -run TestRecordGDBTranscripts ./personalities/

// ---------------------------------------------------------------------------
// Transcripts

// transcript is one recorded gdb session: its header and its steps.
type transcript struct {
	name   string
	header map[string]string // "gdb", "program", "args", ...
	steps  []tstep
}

// tstep is one command sent to gdb and everything gdb wrote until its next
// prompt, raw: the terminal's echo of the command first, escapes and \r\n
// as they came.
type tstep struct {
	label string
	cmd   string
	raw   string
}

// reply is what fred's conn.waitPrompt returns for a command it sent with
// skipEcho: the raw output without its first line.
func (s tstep) reply() string {
	if i := strings.IndexByte(s.raw, '\n'); i >= 0 {
		return s.raw[i+1:]
	}
	return ""
}

var (
	transcriptsMu sync.Mutex
	transcripts   = map[string]*transcript{}
)

// loadTranscript reads testdata/NAME.transcript.
func loadTranscript(t testing.TB, name string) *transcript {
	t.Helper()
	transcriptsMu.Lock()
	defer transcriptsMu.Unlock()
	if tr, ok := transcripts[name]; ok {
		return tr
	}
	path := filepath.Join("testdata", name+".transcript")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate: FRED_RECORD_GDB=1 go test -count=1 -run TestRecordGDBTranscripts ./personalities/)", err)
	}
	tr, err := parseTranscript(name, b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	abs, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for i := range tr.steps {
		tr.steps[i].cmd = strings.ReplaceAll(tr.steps[i].cmd, testdataPlaceholder, abs)
		tr.steps[i].raw = strings.ReplaceAll(tr.steps[i].raw, testdataPlaceholder, abs)
	}
	transcripts[name] = tr
	return tr
}

// testdataPlaceholder stands in a transcript for the absolute path of this
// directory's testdata as gdb printed it when it was recorded, so that the
// transcripts do not depend on where the repository is cloned.
const testdataPlaceholder = "@TESTDATA@"

// The format, line by line:
//
//	# comment                  ignored
//	@key: value                header
//	=== LABEL                  a step starts; LABEL may be "-"
//	$ COMMAND                  the line sent
//	"..."                      Go-quoted pieces of the output, concatenated
func parseTranscript(name string, b []byte) (*transcript, error) {
	tr := &transcript{name: name, header: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "@"):
			k, v, _ := strings.Cut(line[1:], ": ")
			tr.header[k] = v
		case strings.HasPrefix(line, "=== "):
			tr.steps = append(tr.steps, tstep{label: strings.TrimPrefix(line, "=== ")})
		case strings.HasPrefix(line, "$ "):
			if len(tr.steps) == 0 {
				return nil, fmt.Errorf("line %d: command before any step", n)
			}
			tr.steps[len(tr.steps)-1].cmd = strings.TrimPrefix(line, "$ ")
		case strings.HasPrefix(line, `"`):
			if len(tr.steps) == 0 {
				return nil, fmt.Errorf("line %d: output before any step", n)
			}
			s, err := strconv.Unquote(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n, err)
			}
			tr.steps[len(tr.steps)-1].raw += s
		default:
			return nil, fmt.Errorf("line %d: cannot parse %q", n, line)
		}
	}
	return tr, sc.Err()
}

// step returns the step with the label.
func (tr *transcript) step(t testing.TB, label string) tstep {
	t.Helper()
	for _, s := range tr.steps {
		if s.label == label {
			return s
		}
	}
	t.Fatalf("transcript %s has no step %q; regenerate the transcripts", tr.name, label)
	return tstep{}
}

// stepOut is the reply (echo dropped) of a labelled step in a transcript.
func stepOut(t testing.TB, name, label string) string {
	t.Helper()
	return loadTranscript(t, name).step(t, label).reply()
}

// fixtureLine finds the line of testdata/gdbfix.c marked "LINE:name".
func fixtureLine(t testing.TB, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "gdbfix.c"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "LINE:"+name+" ") || strings.HasSuffix(l, "LINE:"+name) {
			return i + 1
		}
	}
	t.Fatalf("gdbfix.c has no LINE:%s", name)
	return 0
}

// ---------------------------------------------------------------------------
// Unit tests on the transcripts

// query is the reply to one of fred's queries in a transcript, checked to be
// the query the personality sends now.
func query(t *testing.T, name, label, cmd string) string {
	t.Helper()
	s := loadTranscript(t, name).step(t, label)
	if s.cmd != cmd {
		t.Fatalf("transcript %s step %q recorded %q, but fred now sends %q: regenerate the transcripts", name, label, s.cmd, cmd)
	}
	return s.reply()
}

var stopAtRE = regexp.MustCompile(`(?m)\bat (.+):(\d+)\s*$`)

// stopLocation reads the file and line of a stop from gdb's own words
// ("    at /x/gdbfix.c:23"), to check the MI answer against.
func stopLocation(t *testing.T, out string) (string, int) {
	t.Helper()
	plain := strings.ReplaceAll(StripANSI(out), "\r", "")
	m := stopAtRE.FindAllStringSubmatch(plain, -1)
	if m == nil {
		t.Fatalf("no \"at FILE:LINE\" in %q", plain)
	}
	last := m[len(m)-1]
	n, _ := strconv.Atoi(last[2])
	return last[1], n
}

func TestTranscriptsParse(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.transcript"))
	if len(paths) == 0 {
		t.Fatal("no transcripts in testdata; regenerate them (see testdata/README.md)")
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".transcript")
		tr := loadTranscript(t, name)
		if !strings.HasPrefix(tr.header["gdb"], "GNU gdb") {
			t.Errorf("%s: no @gdb header", p)
		}
		for _, s := range tr.steps {
			if !strings.HasPrefix(s.raw, s.cmd) {
				t.Errorf("%s step %q: output does not start with the echo of %q: %q", p, s.label, s.cmd, s.raw)
			}
		}
	}
}

func TestGDBParseLocation(t *testing.T) {
	type want struct {
		file string // base name; "" for none
		line int
		fn   string
	}
	fix := func(fn, line string) want { return want{"gdbfix.c", fixtureLine(t, line), fn} }
	for _, tc := range []struct {
		name, label string
		want        want
		// atFrom: the step whose human-readable output names the same
		// file and line ("at FILE:LINE"), as a cross-check.
		atFrom string
		// pcFrom: a step whose output shows the same pc.
		pcFrom string
	}{
		{"gdb-recurse", "frame", fix("depth_reached", "base"), "run", ""},
		{"gdb-recurse", "frame up 2", fix("recurse", "recurse"), "up 2", "up 2"},
		{"gdb-recurse", "frame after finish", fix("recurse", "recurse"), "finish", ""},
		{"gdb-start", "frame", fix("main", "start"), "start", ""},
		{"gdb-segv", "frame", fix("main", "segv"), "run", ""},
		{"gdb-threads", "frame", fix("threads_ready", "threads"), "run", ""},
		{"gdb-escapes", "frame", fix("depth_reached", "base"), "run", ""},
		{"gdb-oddpath", "frame", fix("depth_reached", "base"), "run", ""},
		// No debug info: a function and a pc, no file or line.
		{"gdb-nodebug", "frame", want{"", 0, "nodebug_work"}, "", "run"},
		{"gdb-nodebug", "frame after stepi", want{"", 0, "nodebug_work"}, "", "stepi"},
		{"gdb-libc-nosyms", "frame", want{"", 0, "puts"}, "", "run"},
		// libc with libc6-dbg's symbols: a file gdb cannot find, and a line.
		{"gdb-libc", "frame", want{"ioputs.c", 0, "__GI__IO_puts"}, "run", ""},
		{"gdb-interrupt", "frame", want{"clock_nanosleep.c", 0, "__GI___clock_nanosleep"}, "run", ""},
		{"gdb-abort", "frame", want{"pthread_kill.c", 0, "__pthread_kill_implementation"}, "run", ""},
		{"gdb-threads", "frame thread 2", want{"pause.c", 0, "__libc_pause"}, "thread 2", "thread 2"},
	} {
		t.Run(tc.name+"/"+tc.label, func(t *testing.T) {
			out := query(t, tc.name, tc.label, GDB.LocationCmd)
			l, err := GDB.ParseLocation(out)
			if err != nil {
				t.Fatalf("ParseLocation(%q): %v", out, err)
			}
			if filepath.Base(l.File) != tc.want.file && !(tc.want.file == "" && l.File == "") {
				t.Errorf("File = %q, want base %q", l.File, tc.want.file)
			}
			if l.Function != tc.want.fn {
				t.Errorf("Function = %q, want %q", l.Function, tc.want.fn)
			}
			if tc.want.line != 0 && l.Line != tc.want.line {
				t.Errorf("Line = %d, want %d", l.Line, tc.want.line)
			}
			if tc.want.file == "" && l.Line != 0 {
				t.Errorf("Line = %d without a file", l.Line)
			}
			if l.PC == 0 {
				t.Errorf("PC = 0")
			}
			if tc.atFrom != "" {
				file, line := stopLocation(t, stepOut(t, tc.name, tc.atFrom))
				if filepath.Base(file) != filepath.Base(l.File) || line != l.Line {
					t.Errorf("gdb said the stop was at %s:%d; parsed %s:%d", file, line, l.File, l.Line)
				}
			}
			if tc.pcFrom != "" {
				pc := fmt.Sprintf("0x%016x", l.PC)
				if !strings.Contains(StripANSI(stepOut(t, tc.name, tc.pcFrom)), pc) {
					t.Errorf("pc %s is not the one gdb showed: %q", pc, stepOut(t, tc.name, tc.pcFrom))
				}
			}
			if s := l.String(); !strings.Contains(s, tc.want.fn) {
				t.Errorf("String() = %q", s)
			}
		})
	}
}

// TestGDBParseLocationOddPath: MI escapes in a path (\") are undone, and
// commas, braces and spaces inside a string do not end it.
func TestGDBParseLocationOddPath(t *testing.T) {
	l, err := GDB.ParseLocation(query(t, "gdb-oddpath", "frame", GDB.LocationCmd))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(os.TempDir(), "fred-gdbfix", oddDir, "gdbfix.c"); l.File != want {
		t.Errorf("File = %q, want %q", l.File, want)
	}
	if l.Line != fixtureLine(t, "base") {
		t.Errorf("Line = %d", l.Line)
	}
}

// TestGDBParseLocationEscapes: what a person's gdb writes around the answer
// (bracketed paste on, colours) and the echo fred may not have dropped.
func TestGDBParseLocationEscapes(t *testing.T) {
	s := loadTranscript(t, "gdb-escapes").step(t, "frame")
	if s.cmd != GDB.LocationCmd {
		t.Fatalf("stale transcript: regenerate")
	}
	if !strings.Contains(s.raw, "\x1b[?2004") {
		t.Fatalf("the recording has no bracketed-paste escapes: %q", s.raw)
	}
	mi := s.reply()
	// The same answer wrapped in colour escapes, as styled output around it
	// would leave, and with the echo still in front.
	for name, out := range map[string]string{
		"reply":       mi,
		"raw":         s.raw,
		"coloured":    "\x1b[0m\x1b[32m" + strings.ReplaceAll(mi, "\r\n", "\x1b[m\r\n"),
		"lone CR":     strings.ReplaceAll(mi, "\r\n", "\r"),
		"no newline":  strings.TrimRight(StripANSI(mi), "\r\n"),
		"after stray": "\x1b[?2004l\r\n\r\n" + mi,
	} {
		l, err := GDB.ParseLocation(out)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if l.Function != "depth_reached" || l.Line != fixtureLine(t, "base") || filepath.Base(l.File) != "gdbfix.c" {
			t.Errorf("%s: got %+v", name, l)
		}
	}
}

func TestGDBParseLocationNotRunning(t *testing.T) {
	for _, tc := range []struct{ name, label string }{
		{"gdb-notrunning", "frame"},
		{"gdb-noprogram", "frame"},
		{"gdb-recurse", "frame after exit"},
		{"gdb-exit0", "frame"},
		{"gdb-exit3", "frame"},
		{"gdb-nonl", "frame"},
		{"gdb-abort", "frame after"},
		{"gdb-sigkill", "frame"},
		{"gdb-interrupt", "frame after kill"},
		{"gdb-libc-nosyms", "frame after kill"},
		{"gdb-escapes", "frame after kill"},
	} {
		out := query(t, tc.name, tc.label, GDB.LocationCmd)
		if _, err := GDB.ParseLocation(out); !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s/%s: ParseLocation(%q) = %v, want ErrNotRunning", tc.name, tc.label, out, err)
		}
	}
	// Not an MI answer at all: an error, but not "not running".
	if _, err := GDB.ParseLocation("Undefined command: \"interpreter-exec\".\r\n"); err == nil || errors.Is(err, ErrNotRunning) {
		t.Errorf("garbage: err = %v", err)
	}
	if _, err := GDB.ParseLocation(`^error,msg="Something else broke."`); err == nil || errors.Is(err, ErrNotRunning) {
		t.Errorf("other MI error: err = %v", err)
	}
}

var btFrameRE = regexp.MustCompile(`(?m)^#\d+ `)

func TestGDBParseDepth(t *testing.T) {
	btDepth := func(name string) int {
		return len(btFrameRE.FindAllString(strings.ReplaceAll(StripANSI(stepOut(t, name, "bt")), "\r", "\n"), -1))
	}
	for _, tc := range []struct {
		name, label string
		want        int
	}{
		// depth_reached, recurse(0..4), main
		{"gdb-recurse", "depth", btDepth("gdb-recurse")},
		{"gdb-recurse", "depth up 2", btDepth("gdb-recurse")},
		{"gdb-escapes", "depth", btDepth("gdb-escapes")},
		{"gdb-nodebug", "depth", 2},
		{"gdb-libc", "depth", 2},
		{"gdb-libc-nosyms", "depth", 2},
		{"gdb-interrupt", "depth", 4},
		{"gdb-threads", "depth thread 2", 4},
	} {
		out := query(t, tc.name, tc.label, GDB.DepthCmd)
		got, err := GDB.ParseDepth(out)
		if err != nil || got != tc.want {
			t.Errorf("%s/%s: ParseDepth(%q) = %d, %v; want %d", tc.name, tc.label, out, got, err, tc.want)
		}
	}
	if n := btDepth("gdb-recurse"); n != 7 {
		t.Errorf("the recursion is %d frames deep, want 7", n)
	}
	// -stack-info-depth with a maximum answers in the same form.
	if got, err := GDB.ParseDepth(stepOut(t, "gdb-recurse", "depth max 3")); got != 3 || err != nil {
		t.Errorf("depth max 3: %d, %v", got, err)
	}
	if _, err := GDB.ParseDepth(query(t, "gdb-notrunning", "depth", GDB.DepthCmd)); !errors.Is(err, ErrNotRunning) {
		t.Errorf("not running: err = %v, want ErrNotRunning", err)
	}
}

var currentInferiorRE = regexp.MustCompile(`(?m)^\* +\d+ +process (\d+)`)

// currentPid is the pid gdb's "info inferiors" marks as current.
func currentPid(t *testing.T, name string) int {
	t.Helper()
	m := currentInferiorRE.FindStringSubmatch(strings.ReplaceAll(StripANSI(stepOut(t, name, "info inferiors")), "\r", "\n"))
	if m == nil {
		t.Fatalf("%s: no current process in info inferiors", name)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestGDBParsePid(t *testing.T) {
	for _, name := range []string{"gdb-recurse", "gdb-interrupt", "gdb-threads", "gdb-escapes", "gdb-oddpath"} {
		out := query(t, name, "groups", GDB.PidCmd)
		got, err := GDB.ParsePid(out)
		if want := currentPid(t, name); err != nil || got != want {
			t.Errorf("%s: ParsePid(%q) = %d, %v; want %d", name, out, got, err, want)
		}
	}
	for _, tc := range []struct{ name, label string }{
		{"gdb-notrunning", "groups"},
		{"gdb-noprogram", "groups"},
		{"gdb-recurse", "groups after exit"}, // has exit-code, no pid
		{"gdb-interrupt", "groups after kill"},
		{"gdb-threads", "groups after kill"},
	} {
		out := query(t, tc.name, tc.label, GDB.PidCmd)
		if got, err := GDB.ParsePid(out); !errors.Is(err, ErrNotRunning) {
			t.Errorf("%s/%s: ParsePid(%q) = %d, %v; want ErrNotRunning", tc.name, tc.label, out, got, err)
		}
	}
}

// TestGDBParsePidFollowFork: with detach-on-fork off gdb holds two live
// inferiors; the program fred debugs is the current one (here the child,
// inferior 2), not the first one listed.
func TestGDBParsePidFollowFork(t *testing.T) {
	out := query(t, "gdb-fork", "groups", GDB.PidCmd)
	got, err := GDB.ParsePid(out)
	if want := currentPid(t, "gdb-fork"); err != nil || got != want {
		t.Errorf("ParsePid = %d, %v; want %d, the current inferior's (info inferiors marks it with *)\noutput: %q", got, err, want, out)
	}
}

func TestGDBEnded(t *testing.T) {
	for _, tc := range []struct {
		name, label string
		want        bool
	}{
		{"gdb-exit0", "run", true},              // [Inferior 1 (process N) exited normally]
		{"gdb-exit3", "continue", true},         // ... exited with code 03]
		{"gdb-recurse", "continue", true},       // exited normally after a stop
		{"gdb-start", "run again yes", true},    // restarted, then exited
		{"gdb-sigkill", "run", true},            // Program terminated with signal SIGKILL
		{"gdb-abort", "continue", true},         // Program terminated with signal SIGABRT
		{"gdb-segv", "next", true},              // Program terminated with signal SIGSEGV
		{"gdb-threads", "kill", true},           // [Inferior 1 (process N) killed]
		{"gdb-interrupt", "kill", true},         // after "(y or n) y"
		{"gdb-libc-nosyms", "quiet kill", true}, // with confirm off -- kill
		// Stops, not ends.
		{"gdb-abort", "run", false}, // Program received signal SIGABRT
		{"gdb-segv", "run", false},  // Program received signal SIGSEGV
		{"gdb-interrupt", "run", false},
		{"gdb-interrupt", "continue", false},
		{"gdb-recurse", "run", false},
		{"gdb-recurse", "finish", false},
		{"gdb-recurse", "next 3", false},
		{"gdb-nodebug", "finish", false},
		{"gdb-start", "start", false},
		{"gdb-start", "run again no", false}, // Program not restarted.
		{"gdb-threads", "run", false},
		{"gdb-fork", "run", false}, // [New inferior 2 (process N)]
	} {
		out := stepOut(t, tc.name, tc.label)
		if got := GDB.Ended(out); got != tc.want {
			t.Errorf("%s/%s: Ended = %v, want %v\noutput: %q", tc.name, tc.label, got, tc.want, out)
		}
	}
}

// TestGDBEndedAfterPartialLine: a program whose last output has no newline
// leaves gdb's exit notice in the middle of a line.
func TestGDBEndedAfterPartialLine(t *testing.T) {
	out := stepOut(t, "gdb-nonl", "run")
	if !GDB.Ended(out) {
		t.Errorf("Ended = false for %q", out)
	}
}

// TestGDBEndedWithEscapes: with editing on, gdb writes "\x1b[?2004l\r"
// before a command's output, so the notice does not start a line.
func TestGDBEndedWithEscapes(t *testing.T) {
	out := stepOut(t, "gdb-escapes", "kill")
	if !GDB.Ended(out) {
		t.Errorf("Ended = false for %q", out)
	}
}

// TestGDBEndedNotRunning: "The program is not being run." means the
// command did nothing; nothing ended during it (Ended's contract: "the
// program exited or was killed"), and fred should not record an ending.
func TestGDBEndedNotRunning(t *testing.T) {
	for _, tc := range []struct{ name, label string }{
		{"gdb-notrunning", "next"},
		{"gdb-notrunning", "continue"},
		{"gdb-notrunning", "kill"},
		{"gdb-segv", "continue"},
		{"gdb-recurse", "next after exit"},
	} {
		if out := stepOut(t, tc.name, tc.label); GDB.Ended(out) {
			t.Errorf("%s/%s: Ended = true for %q", tc.name, tc.label, out)
		}
	}
}

func TestGDBNewRun(t *testing.T) {
	for _, tc := range []struct {
		name, label string
		want        bool
	}{
		{"gdb-recurse", "run", true},
		{"gdb-interrupt", "run", true},
		{"gdb-escapes", "run", true},
		{"gdb-start", "start", true},
		{"gdb-start", "start again", true},
		{"gdb-start", "run again yes", true},
		{"gdb-start", "start quiet", true},
		{"gdb-start", "run again quiet", true},
		{"gdb-start", "run again no", false},
		{"gdb-interrupt", "run again no", false},
		{"gdb-recurse", "continue", false},
		{"gdb-recurse", "finish", false},
	} {
		out := stepOut(t, tc.name, tc.label)
		if got := GDB.NewRun(out); got != tc.want {
			t.Errorf("%s/%s: NewRun = %v, want %v\noutput: %q", tc.name, tc.label, got, tc.want, out)
		}
	}
}

// TestGDBNewRunNoExecutable: gdb prints "Starting program: " even when it
// has nothing to start.
func TestGDBNewRunNoExecutable(t *testing.T) {
	if out := stepOut(t, "gdb-noprogram", "run"); GDB.NewRun(out) {
		t.Errorf("NewRun = true for %q", out)
	}
}

func TestStripANSI(t *testing.T) {
	out := StripANSI(stepOut(t, "gdb-escapes", "run"))
	for _, want := range []string{"Starting program: /", "Breakpoint 1, depth_reached (n=0)", "return n;"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in %q", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escapes left: %q", out)
	}
	for in, want := range map[string]string{
		"\x1b[?2004h":             "",
		"\x1b[?2004l\rX":          "\rX",
		"\x1b[01;34mreturn\x1b[m": "return",
		"\x1b]0;title\x07text":    "text",
		"plain [brackets] stay":   "plain [brackets] stay",
	} {
		if got := StripANSI(in); got != want {
			t.Errorf("StripANSI(%q) = %q, want %q", in, got, want)
		}
	}
}

// ---------------------------------------------------------------------------
// Classify

func TestGDBClassify(t *testing.T) {
	for _, tc := range []struct {
		line  string
		kind  Kind
		op    string
		count int
		args  string
	}{
		// Moving the program, with gdb's abbreviations.
		{"n", Forward, OpNext, 1, ""},
		{"next", Forward, OpNext, 1, ""},
		{"next 3", Forward, OpNext, 3, ""},
		{"n 3", Forward, OpNext, 3, ""},
		{"  next   3  ", Forward, OpNext, 3, ""},
		{"next\t3", Forward, OpNext, 3, ""},
		{"s", Forward, OpStep, 1, ""},
		{"step 2", Forward, OpStep, 2, ""},
		{"c", Forward, OpContinue, 1, ""},
		{"cont 2", Forward, OpContinue, 2, ""},
		{"continue", Forward, OpContinue, 1, ""},
		{"fg", Forward, OpContinue, 1, ""},
		{"fin", Forward, OpFinish, 1, ""},
		{"finish", Forward, OpFinish, 1, ""},
		{"u", Forward, OpUntil, 1, ""},
		{"until 30", Forward, OpUntil, 1, "30"},
		{"adv 30", Forward, OpAdvance, 1, "30"},
		{"advance gdbfix.c:30", Forward, OpAdvance, 1, "gdbfix.c:30"},
		{"r", Forward, OpRun, 1, ""},
		{"r a b", Forward, OpRun, 1, "a b"},
		{"run > out.txt", Forward, OpRun, 1, "> out.txt"},
		{"start", Forward, OpStart, 1, ""},
		{"starti", Forward, "starti", 1, ""}, // not "start": it stops elsewhere
		{"stepi", Forward, OpStepi, 1, ""},
		{"si 5", Forward, OpStepi, 5, ""},
		{"nexti", Forward, OpNexti, 1, ""},
		{"ni 2", Forward, OpNexti, 2, ""},
		{"j 30", Forward, OpJump, 1, "30"},
		{"next -1", Forward, OpNext, 1, "-1"}, // not a count
		{"signal SIGINT", Forward, "signal", 1, "SIGINT"},
		{"sig 0", Forward, "signal", 1, "0"},
		// Changing the program.
		{"set var x=1", Mutate, "set var", 1, "x=1"},
		{"set variable x = 1", Mutate, "set var", 1, "x = 1"},
		{"set x = 3", Mutate, "set", 1, "x = 3"},
		{"set x=3", Mutate, "set", 1, "x=3"},
		{"print x = 3", Mutate, "print", 1, "x = 3"},
		{"p x += 1", Mutate, "print", 1, "x += 1"},
		{"p i++", Mutate, "print", 1, "i++"},
		{"p --i", Mutate, "print", 1, "--i"},
		{"inspect x = 3", Mutate, "print", 1, "x = 3"},
		{"print $conv = 3", Mutate, "print", 1, "$conv = 3"}, // a convenience variable: replaying it is right
		{"call f()", Mutate, "call", 1, "f()"},
		{"call f(a=1)", Mutate, "call", 1, "f(a=1)"}, // call is a mutation whatever its argument
		{"call abs(-1)", Mutate, "call", 1, "abs(-1)"},
		{"return", Mutate, "return", 1, ""},
		// gdb settings, not the program.
		{"set confirm off", Other, "set", 1, "confirm off"},
		{"set args a=b", Other, "set", 1, "args a=b"},
		{"set env FOO=bar", Other, "set", 1, "env FOO=bar"},
		{"set environment FOO=bar", Other, "set", 1, "environment FOO=bar"},
		{"set listsize 20", Other, "set", 1, "listsize 20"},
		// Looking.
		{"print x == 3", Inspect, "print", 1, "x == 3"},
		{"print x", Inspect, "print", 1, "x"},
		{"p x", Inspect, "print", 1, "x"},
		{`print "a=b"`, Inspect, "print", 1, `"a=b"`},
		{"bt", Inspect, "backtrace", 1, ""},
		{"where", Inspect, "backtrace", 1, ""},
		{"bt 3", Inspect, "backtrace", 1, "3"},
		{"info locals", Inspect, "info", 1, "locals"},
		{"i r", Inspect, "info", 1, "r"},
		{"up 2", Inspect, "up", 1, "2"},
		{"down", Inspect, "down", 1, ""},
		{"frame 1", Inspect, "frame", 1, "1"},
		{"list 10,20", Inspect, "list", 1, "10,20"},
		{"l", Inspect, "list", 1, ""},
		{"x $sp", Inspect, "x", 1, "$sp"},
		// Breakpoints.
		{"break foo.c:10", Breakpoint, "break", 1, "foo.c:10"},
		{"b main", Breakpoint, "break", 1, "main"},
		{"tbreak main", Breakpoint, "tbreak", 1, "main"},
		{"watch x", Breakpoint, "watch", 1, "x"},
		{"delete 1", Breakpoint, "delete", 1, "1"},
		{"dis 1", Breakpoint, "disable", 1, "1"}, // gdb: "dis" is disable
		{"dprintf main,\"hi\\n\"", Breakpoint, "dprintf", 1, "main,\"hi\\n\""},
		// The program's end, the debugger's end.
		{"kill", Kill, "kill", 1, ""},
		{"k", Kill, "kill", 1, ""},
		{"quit", Quit, "quit", 1, ""},
		{"q", Quit, "quit", 1, ""},
		{"exit", Quit, "quit", 1, ""},
		// Unknown to fred: passed through.
		{"python print(1)", Other, "python", 1, "print(1)"},
		{"frobnicate now", Other, "frobnicate", 1, "now"},
		{"", Other, "", 1, ""},
		// Words gdb itself refuses as ambiguous do nothing.
		{"nex", Other, "nex", 1, ""}, // next, nexti
		{"ru", Other, "ru", 1, ""},   // run, running
	} {
		got := GDB.Classify(tc.line)
		if got.Kind != tc.kind || got.Op != tc.op || got.Count != tc.count || got.Args != tc.args {
			t.Errorf("Classify(%q) = {%v %q count %d args %q}, want {%v %q count %d args %q}",
				tc.line, got.Kind, got.Op, got.Count, got.Args, tc.kind, tc.op, tc.count, tc.args)
		}
		if got.Line != strings.TrimSpace(tc.line) {
			t.Errorf("Classify(%q).Line = %q", tc.line, got.Line)
		}
	}
}

// TestGDBClassifyFormats: print, output, call and x take a format after a
// slash ("p/x"); the command is the same.
func TestGDBClassifyFormats(t *testing.T) {
	for _, tc := range []struct {
		line string
		kind Kind
	}{
		{"p/x counter", Inspect},
		{"p/x counter = 23", Mutate},
		{"print/d counter = 24", Mutate},
		{"output/x counter", Inspect},
		{"call/x f()", Mutate},
		{"x/4xw $sp", Inspect},
		{"display/i $pc", Inspect},
	} {
		if got := GDB.Classify(tc.line); got.Kind != tc.kind {
			t.Errorf("Classify(%q).Kind = %v, want %v", tc.line, got.Kind, tc.kind)
		}
	}
}

// TestGDBClassifyStrings: commands whose text fred shows in its history.
func TestGDBClassifyStrings(t *testing.T) {
	for line, want := range map[string]string{
		"n":           "next",
		"next 3":      "next 3",
		"cont 2":      "continue 2",
		"until 30":    "until 30",
		"set var x=1": "set var x=1",
		"p x = 3":     "print x = 3",
		"call f()":    "call f()",
	} {
		if got := GDB.Classify(line).String(); got != want {
			t.Errorf("Classify(%q).String() = %q, want %q", line, got, want)
		}
	}
}

// TestGDBRepeat: an empty line repeats the last command as gdb does; list
// and x continue where they stopped.
func TestGDBRepeat(t *testing.T) {
	for line, want := range map[string]string{
		"next":       "next",
		"n 3":        "n 3",
		"step":       "step",
		"list 10,20": "list",
		"l foo":      "list",
		"x/4xw $sp":  "x",
		"x $sp":      "x",
		"run":        "",
		"r":          "",
		"start":      "",
		"kill":       "",
		"quit":       "",
	} {
		if got := GDB.Repeat(GDB.Classify(line)); got != want {
			t.Errorf("Repeat after %q = %q, want %q", line, got, want)
		}
	}
}

// helpAnswers reads gdb's "help WORD" answers: the first line that says
// which command a word is (ANSI and \r dropped).
func helpAnswers(t *testing.T) map[string]string {
	tr := loadTranscript(t, "gdb-help")
	m := map[string]string{}
	for _, s := range tr.steps {
		if w, ok := strings.CutPrefix(s.label, "help "); ok {
			m[w] = strings.TrimSpace(strings.ReplaceAll(StripANSI(s.reply()), "\r", ""))
		}
	}
	return m
}

func gdbRejects(answer string) bool {
	return strings.HasPrefix(answer, "Ambiguous ") || strings.HasPrefix(answer, "Undefined ")
}

// TestGDBClassifyMatchesGDB checks the command table against what gdb 13
// does with each word: every abbreviation the table accepts must be one gdb
// takes for the same command, one gdb refuses must not move anything, and
// an abbreviation one letter shorter that gdb also accepts must be
// classified like the full name.
func TestGDBClassifyMatchesGDB(t *testing.T) {
	help := helpAnswers(t)
	answer := func(w string) string {
		a, ok := help[w]
		if !ok {
			t.Fatalf("no help %q in the transcript: regenerate the transcripts", w)
		}
		return a
	}
	for _, spec := range GDB.Commands {
		for _, n := range spec.Names {
			full := specFull(n)
			fullC := GDB.Classify(full)
			for _, w := range specVariants(n) {
				c := GDB.Classify(w)
				switch a := answer(w); {
				case gdbRejects(a):
					if c.Kind != Other {
						t.Errorf("%q: gdb says %q, but fred classifies it %v %q", w, firstLine(a), c.Kind, c.Op)
					}
				case a == answer(full):
					if c.Kind != fullC.Kind || c.Op != fullC.Op {
						t.Errorf("%q is %q to gdb, but fred classifies it %v %q and %q as %v %q",
							w, full, c.Kind, c.Op, full, fullC.Kind, fullC.Op)
					}
				}
			}
			// The canonical name fred records must be the same command.
			switch spec.Kind {
			case Forward, Mutate, Kill, Quit:
				if answer(full) != answer(fullC.Op) {
					t.Errorf("%q is recorded as %q, a different gdb command (%q vs %q)",
						full, fullC.Op, firstLine(answer(full)), firstLine(answer(fullC.Op)))
				}
			}
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestGDBClassifyMutateMatchesGDB: in the gdb-mutate transcript each line
// is followed by "print counter"; the line changed the program exactly when
// counter changed.
func TestGDBClassifyMutateMatchesGDB(t *testing.T) {
	tr := loadTranscript(t, "gdb-mutate")
	valueRE := regexp.MustCompile(`\$\d+ = (-?\d+)`)
	value := func(label string) string {
		m := valueRE.FindStringSubmatch(tr.step(t, label).reply())
		if m == nil {
			t.Fatalf("no value after %q: %q", label, tr.step(t, label).reply())
		}
		return m[1]
	}
	prev := value("before")
	for _, line := range mutateLines {
		now := value("after " + line)
		changed := now != prev
		prev = now
		c := GDB.Classify(line)
		if changed && c.Kind != Mutate {
			t.Errorf("%q changed counter in gdb, but fred classifies it %v", line, c.Kind)
		}
		if !changed && c.Kind == Mutate {
			t.Errorf("%q left counter alone in gdb, but fred classifies it as Mutate", line)
		}
	}
}

// ---------------------------------------------------------------------------
// Helpers of the classifier

func TestHasAssignment(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"x = 1", true},
		{"x=1", true},
		{"x += 1", true},
		{"x -= 1", true},
		{"x *= 2", true},
		{"x /= 2", true},
		{"x %= 2", true},
		{"x &= 1", true},
		{"x |= 1", true},
		{"x ^= 1", true},
		{"x <<= 1", true},
		{"x >>= 1", true},
		{"x<<=1", true},
		{"i++", true},
		{"++i", true},
		{"i--", true},
		{"--i", true},
		{"a[i] = 2", true},
		{"p->x = 2", true},
		{"*p = 2", true},
		{"(x = 2)", true},
		{"f(a = 1)", true},
		{"x == 1", false},
		{"x != 1", false},
		{"x <= 1", false},
		{"x >= 1", false},
		{"x<=1", false},
		{"x>=1", false},
		{"x < 1", false},
		{"x << 1", false},
		{"x >> 1", false},
		{"p->x", false},
		{"p->x == 2", false},
		{"x - -1", false},
		{"-x", false},
		{"!x", false},
		{"", false},
		{"x == 1 && y >= 2", false},
		// Inside string and character literals nothing assigns.
		{`"a=b"`, false},
		{`"--"`, false},
		{`"x++"`, false},
		{`'='`, false},
		{`x == '='`, false},
		{`strcmp(s, "k=v") == 0`, false},
		{`"a\"=b"`, false},
		{`s = "a=b"`, true},
		{`"a" == s || (x = 1)`, true},
	} {
		if got := hasAssignment(tc.expr); got != tc.want {
			t.Errorf("hasAssignment(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// TestGDBMutatesPrintOptions: gdb's print takes options ended by "--"
// ("print -pretty -- x"); that "--" decrements nothing.
func TestGDBMutatesPrintOptions(t *testing.T) {
	for line, want := range map[string]Kind{
		"print -pretty -- s":         Inspect,
		"print -elements 4 -- buf":   Inspect,
		"print -elements 4 -- x = 1": Mutate,
		"print -- -x":                Inspect,
		"print -- --x":               Mutate,
	} {
		if got := GDB.Classify(line).Kind; got != want {
			t.Errorf("Classify(%q).Kind = %v, want %v", line, got, want)
		}
	}
}

func TestMatchWord(t *testing.T) {
	for _, tc := range []struct {
		spec, w string
		want    bool
	}{
		{"fin[ish]", "fin", true},
		{"fin[ish]", "fini", true},
		{"fin[ish]", "finish", true},
		{"fin[ish]", "fi", false},
		{"fin[ish]", "finishx", false},
		{"fin[ish]", "fins", false},
		{"fin[ish]", "", false},
		{"fin[ish]", "FIN", false},
		{"next", "next", true},
		{"next", "nex", false},
		{"next", "nexti", false},
		{"n", "n", true},
		{"n", "", false},
		{"var[iable]", "var", true},
		{"var[iable]", "variable", true},
		{"var[iable]", "va", false},
	} {
		if got := matchWord(tc.spec, tc.w); got != tc.want {
			t.Errorf("matchWord(%q, %q) = %v, want %v", tc.spec, tc.w, got, tc.want)
		}
	}
}

func TestMatchSpec(t *testing.T) {
	for _, tc := range []struct {
		spec, line string
		rest       string
		ok         bool
	}{
		{"fin[ish]", "finish", "", true},
		{"fin[ish]", "fin", "", true},
		{"cont[inue]", "cont 2", "2", true},
		{"cont[inue]", "cont\t2", "2", true},
		{"cont[inue]", "  continue   2  ", "2", true},
		{"n", "next", "", false},
		{"set var[iable]", "set var x = 1", "x = 1", true},
		{"set var[iable]", "set variable x=1", "x=1", true},
		{"set var[iable]", "set  var  x = 1", "x = 1", true},
		{"set var[iable]", "set\tvar\tx = 1", "x = 1", true},
		{"set var[iable]", "set x = 1", "", false},
		{"set var[iable]", "set", "", false},
		{"set var[iable]", "set va x", "", false},
		{"p", `p "a  b"`, `"a  b"`, true}, // spacing inside the rest is kept
		{"p", "p x  ==  3", "x  ==  3", true},
		{"b", "", "", false},
	} {
		rest, ok := matchSpec(tc.spec, tc.line)
		if ok != tc.ok || rest != tc.rest {
			t.Errorf("matchSpec(%q, %q) = %q, %v; want %q, %v", tc.spec, tc.line, rest, ok, tc.rest, tc.ok)
		}
	}
}

// ---------------------------------------------------------------------------
// Recording

// recStep is one thing the recorder does in a gdb session.
type recStep struct {
	label string // how the tests find the step; "" for "-"
	cmd   string // the line sent, with "{LINE:name}" replaced by the line number
	// interruptAfter: once the output shows this, send Ctrl-C (0x03), as a
	// person would to stop a running program.
	interruptAfter string
	// question and answer: when the output shows the question, type the
	// answer and a newline (confirmations left on).
	question, answer string
}

// recScenario is one gdb session.
type recScenario struct {
	name    string
	note    string
	program bool     // start gdb on the fixture; false: gdb alone
	args    []string // the fixture's arguments (its mode)
	// editing leaves gdb's readline on and bracketed paste enabled, so the
	// output carries the escapes a person's gdb writes.
	editing bool
	// oddPath runs a copy of the fixture built in a directory whose name
	// has a space, a comma, quotes, a brace and a non-ASCII letter.
	oddPath bool
	// helpLines > 0 keeps only that many lines of each answer.
	helpLines int
	steps     []recStep
}

// confirmOff is what fred sends in --batch mode; most scenarios start with it.
var confirmOff = recStep{cmd: "set confirm off"}

// The queries fred sends come from the personality, so that a change to
// them shows up as stale transcripts (see query) rather than as tests of
// commands fred no longer sends.
var (
	frameCmd   = GDB.LocationCmd
	depthCmd   = GDB.DepthCmd
	threadsCmd = GDB.PidCmd
)

// mutateLines are typed in the gdb-mutate scenario, each followed by
// "print counter": whether counter changed is what gdb says about whether
// the line changes the program. Each line that assigns gives counter a value
// it has not had before.
var mutateLines = []string{
	"print counter == 3",
	"print counter = 3",
	"p counter += 1",
	"p counter++",
	"p --counter",
	"print counter <= 3",
	"print counter >= 3",
	"print counter != 3",
	"print counter<=3",
	"print counter <<= 2",
	"print counter >>= 1",
	"print counter-1",
	"print -counter",
	"print !counter",
	`print "a=b"`,
	`print "--"`,
	`print "x++"`,
	"print '='",
	"print counter == '='",
	"print *bp->p",
	"print bp->p != 0",
	"print *bp->p = 20",
	"print *cp = 21",
	"print -pretty -- counter",
	"print -elements 4 -- counter = 22",
	"p/x counter",
	"p/x counter = 23",
	"print/d counter = 24",
	"output counter = 25",
	"output counter",
	"set counter = 26",
	"set var counter = 27",
	"set variable counter=28",
	"set confirm off",
	"set args a=b",
	"set environment FOO=bar",
	"inspect counter = 29",
	"print sizeof(counter) == 4",
	"print (counter=30)",
}

// Words whose resolution in gdb the classifier tests check: `help WORD`
// tells which command gdb runs for it.
func helpWords() []string {
	seen := map[string]bool{}
	var words []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, s := range GDB.Commands {
		for _, n := range s.Names {
			for _, w := range specVariants(n) {
				add(w)
			}
			add(specFull(n))
		}
	}
	for _, w := range extraHelpWords {
		add(w)
	}
	return words
}

// extraHelpWords are commands the classifier table does not list, checked
// against gdb too.
var extraHelpWords = []string{
	"signal", "sig", "queue-signal", "attach", "detach", "reverse-next", "rn",
	"reverse-step", "rs", "reverse-continue", "rc", "reverse-finish", "record",
	"checkpoint", "restart", "python", "py", "set", "set variable", "set confirm",
	"set args", "tbreak", "watch", "continue", "next", "step", "stepi", "nexti",
	"finish", "until", "advance", "jump", "run", "start", "starti", "call",
	"return", "print", "kill", "quit", "up", "down", "frame", "where", "backtrace",
	"info", "list", "display", "undisplay", "delete", "nex", "ste", "fini", "con",
	"co", "cont", "ru", "star", "ki", "inf", "sta", "tbr",
}

// specVariants lists every word a spec name such as "fin[ish]" accepts, plus
// the word one letter shorter than its shortest form (gdb might accept that
// too, and the classifier would then miss it).
func specVariants(spec string) []string {
	words := strings.Fields(spec)
	last := words[len(words)-1]
	head := strings.Join(words[:len(words)-1], " ")
	if head != "" {
		head += " "
	}
	min, opt, ok := strings.Cut(last, "[")
	if !ok {
		return []string{head + last}
	}
	full := min + strings.TrimSuffix(opt, "]")
	var out []string
	if len(min) > 1 {
		out = append(out, head+min[:len(min)-1])
	}
	for i := len(min); i <= len(full); i++ {
		out = append(out, head+full[:i])
	}
	return out
}

// specFull is a spec name without its brackets: "fin[ish]" -> "finish".
func specFull(spec string) string {
	return strings.NewReplacer("[", "", "]", "").Replace(spec)
}

func recScenarios() []recScenario {
	help := recScenario{name: "gdb-help", helpLines: 3,
		note: "help WORD for every word the classifier knows, and more; each answer cut to its first 3 lines"}
	help.steps = append(help.steps, confirmOff)
	for _, w := range helpWords() {
		help.steps = append(help.steps, recStep{label: "help " + w, cmd: "help " + w})
	}
	mutate := recScenario{name: "gdb-mutate", program: true, args: []string{"recurse"},
		note: "does a line change the program? each line is followed by print counter"}
	mutate.steps = append(mutate.steps, confirmOff,
		recStep{cmd: "break depth_reached"}, recStep{cmd: "run"},
		recStep{label: "before", cmd: "print counter"})
	for _, l := range mutateLines {
		mutate.steps = append(mutate.steps, recStep{label: l, cmd: l}, recStep{label: "after " + l, cmd: "print counter"})
	}
	return []recScenario{
		{
			name: "gdb-notrunning", note: "queries and commands before the program runs", program: true,
			steps: []recStep{confirmOff,
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "groups", cmd: threadsCmd},
				{label: "next", cmd: "next"},
				{label: "continue", cmd: "continue"},
				{label: "finish", cmd: "finish"},
				{label: "kill", cmd: "kill"},
				{label: "info frame", cmd: "info frame"},
				{label: "nex", cmd: "nex"},
			},
		},
		{
			name: "gdb-noprogram", note: "gdb started without a program",
			steps: []recStep{confirmOff,
				{label: "groups", cmd: threadsCmd},
				{label: "frame", cmd: frameCmd},
				{label: "run", cmd: "run"},
			},
		},
		{
			name: "gdb-recurse", note: "stopped with debug info, four calls deep in recursion", program: true, args: []string{"recurse"},
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break depth_reached"},
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "depth max 3", cmd: `interpreter-exec mi "-stack-info-depth 3"`},
				{label: "bt", cmd: "bt"},
				{label: "groups", cmd: threadsCmd},
				{label: "info inferiors", cmd: "info inferiors"},
				{label: "up 2", cmd: "up 2"},
				{label: "frame up 2", cmd: frameCmd},
				{label: "depth up 2", cmd: depthCmd},
				{label: "down", cmd: "down"},
				{label: "finish", cmd: "finish"},
				{label: "frame after finish", cmd: frameCmd},
				{label: "next 3", cmd: "next 3"},
				{label: "print assign", cmd: "print counter = 5"},
				{label: "continue", cmd: "continue"},
				{label: "frame after exit", cmd: frameCmd},
				{label: "groups after exit", cmd: threadsCmd},
				{label: "next after exit", cmd: "next"},
			},
		},
		{
			name: "gdb-nodebug", note: "stopped in a function compiled without -g", program: true, args: []string{"nodebug"},
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break nodebug_work"},
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "stepi", cmd: "stepi"},
				{label: "frame after stepi", cmd: frameCmd},
				{label: "finish", cmd: "finish"},
				{label: "continue", cmd: "continue"},
			},
		},
		{
			name: "gdb-libc", note: "stopped at a breakpoint on puts, inside libc (libc6-dbg installed or not)", program: true, args: []string{"puts"},
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break puts"},
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "continue", cmd: "continue"},
			},
		},
		{
			name: "gdb-libc-nosyms", note: "as gdb-libc, with libc's separate debug info hidden from gdb", program: true, args: []string{"puts"},
			steps: []recStep{confirmOff,
				{label: "nosyms", cmd: "set debug-file-directory /nonexistent"},
				{label: "break", cmd: "break puts"},
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "quiet kill", cmd: GDB.Quiet("kill")},
				{label: "frame after kill", cmd: frameCmd},
			},
		},
		{
			name: "gdb-interrupt", note: "Ctrl-C while the program sleeps; confirmations left on", program: true, args: []string{"sleep"},
			steps: []recStep{
				{label: "run", cmd: "run", interruptAfter: "sleeping"},
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "groups", cmd: threadsCmd},
				{label: "info inferiors", cmd: "info inferiors"},
				{label: "run again no", cmd: "run", question: "(y or n) ", answer: "n"},
				{label: "continue", cmd: "continue", interruptAfter: "Continuing."},
				{label: "kill", cmd: "kill", question: "(y or n) ", answer: "y"},
				{label: "frame after kill", cmd: frameCmd},
				{label: "groups after kill", cmd: threadsCmd},
			},
		},
		{
			name: "gdb-start", note: "start, then run again with and without confirmations", program: true, args: []string{"exit0"},
			steps: []recStep{
				{label: "start", cmd: "start"},
				{label: "frame", cmd: frameCmd},
				{label: "start again", cmd: "start", question: "(y or n) ", answer: "y"},
				{label: "run again no", cmd: "run", question: "(y or n) ", answer: "n"},
				{label: "run again yes", cmd: "run", question: "(y or n) ", answer: "y"},
				confirmOff,
				{label: "start quiet", cmd: "start"},
				{label: "run again quiet", cmd: "run"},
			},
		},
		{
			name: "gdb-exit0", note: "the program returns 0", program: true, args: []string{"exit0"},
			steps: []recStep{confirmOff, {label: "run", cmd: "run"}, {label: "frame", cmd: frameCmd}},
		},
		{
			name: "gdb-oddpath", note: "the fixture built in a directory with an awkward name", program: true, args: []string{"recurse"}, oddPath: true,
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break depth_reached"},
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "groups", cmd: threadsCmd},
				{label: "info inferiors", cmd: "info inferiors"},
			},
		},
		{
			name: "gdb-nonl", note: "the program's last output has no newline", program: true, args: []string{"nonl"},
			steps: []recStep{confirmOff, {label: "run", cmd: "run"}, {label: "frame", cmd: frameCmd}},
		},
		{
			name: "gdb-exit3", note: "the program calls exit(3)", program: true, args: []string{"exit3"},
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break gdbfix.c:{LINE:main}"},
				{label: "run", cmd: "run"},
				{label: "next", cmd: "next"},
				{label: "continue", cmd: "continue"},
				{label: "frame", cmd: frameCmd},
			},
		},
		{
			name: "gdb-abort", note: "the program calls abort(): a stop first, then the end", program: true, args: []string{"abort"},
			steps: []recStep{confirmOff,
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "continue", cmd: "continue"},
				{label: "frame after", cmd: frameCmd},
			},
		},
		{
			name: "gdb-segv", note: "the program writes through a null pointer", program: true, args: []string{"segv"},
			steps: []recStep{confirmOff,
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "next", cmd: "next"},
				{label: "continue", cmd: "continue"},
			},
		},
		{
			name: "gdb-sigkill", note: "the program raises SIGKILL", program: true, args: []string{"sigkill"},
			steps: []recStep{confirmOff, {label: "run", cmd: "run"}, {label: "frame", cmd: frameCmd}},
		},
		{
			name: "gdb-threads", note: "four threads", program: true, args: []string{"threads"},
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break threads_ready"},
				{label: "run", cmd: "run"},
				{label: "groups", cmd: threadsCmd},
				{label: "groups i1", cmd: `interpreter-exec mi "-list-thread-groups i1"`},
				{label: "info threads", cmd: "info threads"},
				{label: "info inferiors", cmd: "info inferiors"},
				{label: "frame", cmd: frameCmd},
				{label: "thread 2", cmd: "thread 2"},
				{label: "frame thread 2", cmd: frameCmd},
				{label: "depth thread 2", cmd: depthCmd},
				{label: "kill", cmd: "kill"},
				{label: "groups after kill", cmd: threadsCmd},
			},
		},
		{
			name: "gdb-fork", note: "two inferiors: gdb keeps the parent and follows the child", program: true, args: []string{"fork"},
			steps: []recStep{confirmOff,
				{cmd: "set detach-on-fork off"},
				{cmd: "set follow-fork-mode child"},
				{label: "break", cmd: "break gdbfix.c:{LINE:fork}"},
				{label: "run", cmd: "run"},
				{label: "groups", cmd: threadsCmd},
				{label: "info inferiors", cmd: "info inferiors"},
				{label: "kill", cmd: "kill inferiors 1 2"},
			},
		},
		{
			name: "gdb-escapes", note: "editing on, bracketed paste on, colours: what gdb writes for a person", program: true, args: []string{"recurse"}, editing: true,
			steps: []recStep{confirmOff,
				{label: "break", cmd: "break depth_reached"},
				{label: "run", cmd: "run"},
				{label: "frame", cmd: frameCmd},
				{label: "depth", cmd: depthCmd},
				{label: "groups", cmd: threadsCmd},
				{label: "bt", cmd: "bt"},
				{label: "info inferiors", cmd: "info inferiors"},
				{label: "kill", cmd: "kill"},
				{label: "frame after kill", cmd: frameCmd},
			},
		},
		mutate,
		help,
	}
}

// TestRecordGDBTranscripts runs real gdb on testdata/gdbfix.c and writes the
// transcripts the other tests read. It runs only when asked:
//
//	FRED_RECORD_GDB=1 go test -count=1 -run TestRecordGDBTranscripts ./personalities/
//
// gdb is started the way fred starts it (fred/session.go, GDB.Argv): on a
// pty of 80x24 that is not its controlling terminal, the marker as its
// prompt, editing and pagination off, the program on the pty through
// inferior-tty, TERM=xterm-256color so gdb styles its output, INPUTRC with
// bracketed paste off.
func TestRecordGDBTranscripts(t *testing.T) {
	if os.Getenv("FRED_RECORD_GDB") == "" {
		t.Skip("set FRED_RECORD_GDB=1 to record the gdb transcripts again")
	}
	for _, tool := range []string{"gdb", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed; run 'make deps' (as root)", tool)
		}
	}
	version, err := exec.Command("gdb", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	gdbVersion, _, _ := strings.Cut(string(version), "\n")

	// A fixed place, so that paths in the transcripts stay the same from
	// one recording to the next.
	bin := filepath.Join(os.TempDir(), "fred-gdbfix")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(bin, "gdbfix")
	odd := filepath.Join(bin, oddDir)
	if err := os.MkdirAll(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	fix, err := os.ReadFile(filepath.Join(src, "gdbfix.c"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(odd, "gdbfix.c"), fix, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"gcc", "-O0", "-c", "-o", filepath.Join(bin, "nodebug.o"), filepath.Join(src, "nodebug.c")},
		{"gcc", "-g", "-O0", "-pthread", "-o", prog, filepath.Join(src, "gdbfix.c"), filepath.Join(bin, "nodebug.o")},
		{"gcc", "-g", "-O0", "-pthread", "-o", filepath.Join(odd, "gdbfix"), filepath.Join(odd, "gdbfix.c"), filepath.Join(bin, "nodebug.o")},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	inputrc := filepath.Join(bin, "inputrc")
	if err := os.WriteFile(inputrc, []byte("set enable-bracketed-paste off\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, sc := range recScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			var b bytes.Buffer
			fmt.Fprintf(&b, "# Recorded from real gdb by TestRecordGDBTranscripts in gdb_test.go; do not edit.\n")
			fmt.Fprintf(&b, "# Regenerate: FRED_RECORD_GDB=1 go test -count=1 -run TestRecordGDBTranscripts ./personalities/\n")
			fmt.Fprintf(&b, "# %s\n", sc.note)
			fmt.Fprintf(&b, "@gdb: %s\n", gdbVersion)
			if sc.program {
				fmt.Fprintf(&b, "@program: gdbfix %s\n", strings.Join(sc.args, " "))
			}
			fmt.Fprintf(&b, "@editing: %v\n", sc.editing)
			steps, err := recordScenario(t, sc, prog, inputrc)
			for _, s := range steps {
				s.cmd = strings.ReplaceAll(s.cmd, src, testdataPlaceholder)
				s.raw = strings.ReplaceAll(s.raw, src, testdataPlaceholder)
				label := s.label
				if label == "" {
					label = "-"
				}
				fmt.Fprintf(&b, "\n=== %s\n$ %s\n", label, s.cmd)
				for _, piece := range strings.SplitAfter(s.raw, "\n") {
					if piece != "" {
						fmt.Fprintf(&b, "%s\n", strconv.Quote(piece))
					}
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", sc.name+".transcript")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// oddDir is where the gdb-oddpath scenario's copy of the fixture is built.
const oddDir = `odd dir, "q" é}`

// recordMarker is the prompt the recorder gives gdb, shaped like fred's.
const recordMarker = "\x1a\x1afred-record\x1a\x1a"

// ptyReader collects what gdb writes on the pty master.
type ptyReader struct {
	mu  sync.Mutex
	buf bytes.Buffer
	err error
}

func (r *ptyReader) run(f *os.File) {
	b := make([]byte, 32*1024)
	for {
		n, err := f.Read(b)
		r.mu.Lock()
		r.buf.Write(b[:n])
		if err != nil {
			r.err = err
		}
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitFor waits until the collected output contains s, then takes the
// output up to and including s out of the buffer and returns it.
func (r *ptyReader) waitFor(s string, d time.Duration) (string, error) {
	deadline := time.Now().Add(d)
	for {
		r.mu.Lock()
		data := r.buf.String()
		if i := strings.Index(data, s); i >= 0 {
			r.buf.Next(i + len(s))
			r.mu.Unlock()
			return data[:i+len(s)], nil
		}
		err := r.err
		r.mu.Unlock()
		if err != nil {
			return data, fmt.Errorf("pty closed waiting for %q: %v", s, err)
		}
		if time.Now().After(deadline) {
			return data, fmt.Errorf("no %q within %v; got %q", s, d, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type recorded struct {
	label, cmd, raw string
}

func recordScenario(t *testing.T, sc recScenario, prog, inputrc string) ([]recorded, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer master.Close()
	defer slave.Close()
	_ = pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80})

	argv := []string{"gdb", "-nx", "-q",
		"-iex", "set prompt " + gdbEscape(recordMarker),
		"-iex", "set editing off",
		"-iex", "set pagination off",
		"-iex", "set height 0",
		"-iex", "set inferior-tty " + slave.Name(),
	}
	if sc.editing {
		argv = append(argv, "-iex", "set editing on")
	}
	if sc.oddPath {
		prog = filepath.Join(filepath.Dir(prog), oddDir, "gdbfix")
	}
	if sc.program {
		argv = append(argv, "--args", prog)
		argv = append(argv, sc.args...)
	}
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		switch k {
		case "TERM", "INPUTRC", "DEBUGINFOD_URLS", "COLUMNS", "LINES", "LANG", "LC_ALL":
		default:
			env = append(env, e)
		}
	}
	env = append(env, "TERM=xterm-256color", "DEBUGINFOD_URLS=", "LANG=C.UTF-8")
	if !sc.editing {
		env = append(env, "INPUTRC="+inputrc)
	}
	// As fred starts gdb: able to write registers on a CPU with AMX.
	if env, err = xstate.Preload(env); err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// As fred starts gdb (Personality.NoCtty): its own session, and the pty
	// left free to be the program's controlling terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() {
		select {
		case <-done:
		default:
			_, _ = master.WriteString("with confirm off -- quit\n")
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}
	}()
	r := &ptyReader{}
	go r.run(master)

	const wait = 30 * time.Second
	if _, err := r.waitFor(recordMarker, wait); err != nil {
		return nil, fmt.Errorf("gdb's first prompt: %v", err)
	}
	var out []recorded
	for _, st := range sc.steps {
		line := regexp.MustCompile(`\{LINE:(\w+)\}`).ReplaceAllStringFunc(st.cmd, func(m string) string {
			return strconv.Itoa(fixtureLine(t, m[6:len(m)-1]))
		})
		if _, err := master.WriteString(line + "\n"); err != nil {
			return out, err
		}
		var raw string
		if st.interruptAfter != "" {
			got, err := r.waitFor(st.interruptAfter, wait)
			raw += got
			if err != nil {
				return out, err
			}
			// Let the program get back to sleep, then type Ctrl-C.
			time.Sleep(300 * time.Millisecond)
			if _, err := master.Write([]byte{3}); err != nil {
				return out, err
			}
		}
		if st.question != "" {
			got, err := r.waitFor(st.question, wait)
			raw += got
			if err != nil {
				return out, err
			}
			if _, err := master.WriteString(st.answer + "\n"); err != nil {
				return out, err
			}
		}
		got, err := r.waitFor(recordMarker, wait)
		got = strings.TrimSuffix(got, recordMarker)
		if sc.helpLines > 0 {
			// The echo, then the first lines of the answer.
			lines := strings.SplitAfter(got, "\n")
			if len(lines) > sc.helpLines+1 {
				got = strings.Join(lines[:sc.helpLines+1], "")
			}
		}
		raw += got
		out = append(out, recorded{label: st.label, cmd: line, raw: raw})
		if err != nil {
			return out, fmt.Errorf("%s: %v", line, err)
		}
	}
	if sc.editing {
		// Keep the last prompt's trailing escapes out of the next test.
		time.Sleep(100 * time.Millisecond)
	}
	return out, nil
}

// gdb reads fred's commands from a terminal, which cuts a line at 4095
// characters: each setup command (the Python helpers) must fit.
func TestGDBSetupLinesFitATerminal(t *testing.T) {
	for _, c := range GDB.Setup("prog") {
		if len(c) >= 4096 {
			t.Errorf("a setup command of %d characters: %.60s...", len(c), c)
		}
	}
}

// The thread listing (gdbThreadsPy's lines): a name may hold spaces and
// quotes (JSON-quoted), and a line without one (older helpers) still reads.
func TestParseThreads(t *testing.T) {
	out := "@fred thread 1 4242 0 \"mt_atomic\" main /src/mt atomic.c:78\r\n" +
		"@fred thread 3 4250 1 \"worker \\\"2\\\"\" teller /src/mt_atomic.c:52\r\n" +
		"@fred thread 4 4251 0 ?? ??:0\r\n"
	got := ParseThreads(out)
	want := []ThreadInfo{
		{Num: 1, LWP: 4242, Name: "mt_atomic", Function: "main", File: "/src/mt atomic.c", Line: 78},
		{Num: 3, LWP: 4250, Waiting: true, Name: `worker "2"`, Function: "teller", File: "/src/mt_atomic.c", Line: 52},
		{Num: 4, LWP: 4251, Function: "??", File: "??", Line: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d threads: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("thread %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if s := want[1].String(); s != `thread 3 (LWP 4250, "worker \"2\"")` {
		t.Errorf("String: %s", s)
	}
	if s := want[2].String(); s != "thread 4 (LWP 4251)" {
		t.Errorf("String: %s", s)
	}
}

// TestGDBBlockStart: the commands whose following lines gdb reads up to
// "end", as a sourced file gives them.
func TestGDBBlockStart(t *testing.T) {
	for line, want := range map[string]bool{
		"commands": true, "commands 2": true, "comm": true, "define foo": true, "document foo": true,
		"while i < 3": true, "if x": true, "python": true, "py": true, "python ": true,
		"python print(1)": false, "py print(1)": false, "pi print(1)": false, "pi": false,
		"continue": false, "print python": false, "iff": false,
	} {
		if got := GDB.BlockStart.MatchString(line); got != want {
			t.Errorf("BlockStart(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestGDBSetupLinesFit: fred types its setup commands into gdb's terminal,
// whose line discipline holds at most 4095 bytes a line (a longer one is
// cut, and its Python does not load).
func TestGDBSetupLinesFit(t *testing.T) {
	for _, c := range GDB.Setup("") {
		if len(c)+1 > 4095 {
			t.Errorf("a setup command of %d bytes does not fit in a terminal line: %.60s...", len(c), c)
		}
	}
}

// TestGDBParseBreakpointsAllKinds: every stop condition in a recorded
// -break-list, each with a Where fred_break can make again.
func TestGDBParseBreakpointsAllKinds(t *testing.T) {
	b, err := os.ReadFile("testdata/gdb-break-list.txt")
	if err != nil {
		t.Fatal(err)
	}
	got := GDB.ParseBreakpoints(string(b))
	want := []Bp{
		{Num: "1", Where: "*0x00005555555551c8", Orig: "main", Enabled: true},
		{Num: "2", Where: "watch sum", Enabled: true},
		{Num: "3", Where: "rwatch data[3]", Enabled: true},
		{Num: "4", Where: "catch syscall write", Enabled: true},
		{Num: "5", Where: "catch throw", Enabled: true},
		{Num: "6", Where: "*0x0000555555555140 if i == 5", Orig: "update if i == 5", Enabled: true, Temp: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestGDBStopReason: gdb's stop lines, with and without threads (gdb
// names the thread that hit: `Thread 13 "mariadbd" hit Breakpoint 1`).
func TestGDBStopReason(t *testing.T) {
	cases := []struct {
		out  string
		want Stop
	}{
		{"Continuing.\n\nBreakpoint 1, 0x0000555555555152 in fact ()\n", StopBreakpoint},
		{"\nBreakpoint 2, main () at steps.c:20\n20\t  x++;\n", StopBreakpoint},
		{"\nBreakpoint 1.1, updcrc (s=s@entry=0x0, n=n@entry=0) at util.c:136\n", StopBreakpoint}, // several locations (gzip -O2)
		{"\nThread 2 \"w\" hit Breakpoint 3.2, f () at f.c:4\n", StopBreakpoint},
		{"[Switching to Thread 0x7fffe40616c0 (LWP 8302)]\n\nThread 13 \"mariadbd\" hit Breakpoint 1, 0x0000555555da6b24 in dispatch_command(enum_server_command, THD*, char*, unsigned int, bool) ()\n", StopBreakpoint},
		{"\nThread 2 hit Temporary breakpoint 3, worker (arg=0x0) at mt.c:12\n", StopBreakpoint},
		{"\nThread 3 \"mt_sum\" hit Hardware watchpoint 2: total\n\nOld value = 1\nNew value = 2\n", StopBreakpoint},
		{"\nHardware watchpoint 2: total\n\nOld value = 1\nNew value = 2\n", StopBreakpoint},
		{"\nThread 2 \"w\" received signal SIGSEGV, Segmentation fault.\n", StopSignal},
		{"[Inferior 1 (process 42) exited normally]\n", StopEnded},
		{"21\t  y = x;\n", StopDone},
		{"$1 = \"Thread 2 hit Breakpoint 1, \"\n", StopDone},
	}
	for _, c := range cases {
		if got := GDB.StopReason(c.out); got != c.want {
			t.Errorf("StopReason(%q) = %v; want %v", c.out, got, c.want)
		}
	}
}

// A call in the watched expression that a signal stopped is its own
// error: the program stands inside the call, and fred must restore it.
func TestGDBParseEvalCallStopped(t *testing.T) {
	out := "^error,msg=\"The program being debugged was signaled while in a function called from GDB.\\nGDB remains in the frame where the signal was received.\"\r\n"
	if _, err := GDB.ParseEval(out); !errors.Is(err, ErrCallStopped) {
		t.Fatalf("ParseEval(%q) = %v, want ErrCallStopped", out, err)
	}
	if _, err := GDB.ParseEval("^error,msg=\"No symbol \\\"y\\\" in current context.\"\r\n"); err == nil || errors.Is(err, ErrCallStopped) {
		t.Fatalf("a name not in scope: %v", err)
	}
}

// The engine names gdb's address breakpoints and reads its environment
// through the personality.
func TestGDBTracerData(t *testing.T) {
	tr := GDB.Tracer
	loc := tr.AtAddress(0x555555555169)
	if loc != "*0x0000555555555169" {
		t.Errorf("AtAddress: %q", loc)
	}
	if pc, ok := tr.Address(loc); !ok || pc != 0x555555555169 {
		t.Errorf("Address(%q) = %x, %v", loc, pc, ok)
	}
	for _, other := range []string{"main", "watch.c:12", "*0x1234", "*0x0000555555555169 if x"} {
		if _, ok := tr.Address(other); ok {
			t.Errorf("Address(%q) took it for fred's", other)
		}
	}
	if _, ok := PDB.Tracer.Address(loc); ok {
		t.Error("a debugger without a Tracer reads an address breakpoint")
	}
	out := "LD_PRELOAD = /a/lib.so:/b/x.so\n"
	if v := tr.EnvValue(out, "LD_PRELOAD"); v != "/a/lib.so:/b/x.so" {
		t.Errorf("EnvValue: %q", v)
	}
	if v := tr.EnvValue("Environment variable \"LD_PRELOAD\" not defined.\n", "LD_PRELOAD"); v != "" {
		t.Errorf("EnvValue of an unset variable: %q", v)
	}
	if got := fmt.Sprintf(tr.SetEnv, "A", "b c"); got != "set environment A b c" {
		t.Errorf("SetEnv: %q", got)
	}
}

// ParseNexts reads the counted loops' answers as the debuggers print them
// (a terminal's \r included), with a watch's last step of another value.
func TestParseNexts(t *testing.T) {
	for _, c := range []struct {
		out  string
		want NextsResult
	}{
		{"FREDNEXTS 12 limit\r\n", NextsResult{N: 12, Why: "limit", Shallower: -1, Away: -1}},
		{"junk\r\nFREDNEXTS 7 breakpoint 3\r\n(Pdb) ", NextsResult{N: 7, Why: "breakpoint", Shallower: 3, Away: -1}},
		{"FREDNEXTS 2271 breakpoint away -1\r\n", NextsResult{N: 2271, Why: "breakpoint", Shallower: -1, Away: -1}},
		{"FREDNEXTS 40 passed away 39 \r\n", NextsResult{N: 40, Why: "passed", Shallower: -1, Away: 39}},
		{"FREDNEXTS 40 breakpoint 5 away 38 'a b'\r\n", NextsResult{N: 40, Why: "breakpoint", Shallower: 5, Away: 38, AwayValue: "'a b'"}},
		{"FREDNEXTS 9 breakpoint away 8 (raises NameError: name 'x' is not defined)\r\n", NextsResult{N: 9, Why: "breakpoint", Shallower: -1, Away: 8, AwayValue: "(raises NameError: name 'x' is not defined)"}},
	} {
		got, err := ParseNexts(c.out)
		if err != nil || got != c.want {
			t.Errorf("ParseNexts(%q) = %+v, %v; want %+v", c.out, got, err, c.want)
		}
	}
	if _, err := ParseNexts("FREDNEXTS 3 limit away x\r\n"); err == nil {
		t.Errorf("a bad away count is not an error")
	}
}

// TestGDBParseBreakpointIgnoreCount: an ignore count (recorded from gdb
// 13: `ignore 1 5`, `condition 1 i > 2`) is part of where a continue
// stopped, before the condition, as fred_break reads it back.
func TestGDBParseBreakpointIgnoreCount(t *testing.T) {
	const out = `^done,BreakpointTable={nr_rows="1",nr_cols="6",hdr=[{width="7",alignment="-1",col_name="number",colhdr="Num"}],body=[bkpt={number="1",type="breakpoint",disp="keep",enabled="y",addr="0x0000000000001141",func="add",file="testdata/watch_long.c",fullname="/src/testdata/watch_long.c",line="15",thread-groups=["i1"],cond="i > 2",times="0",ignore="5",original-location="/src/testdata/watch_long.c:15"}]}`
	got := GDB.ParseBreakpoints(out)
	want := []Bp{{Num: "1", Where: "*0x0000000000001141 ignore 5 if i > 2", Orig: "/src/testdata/watch_long.c:15 if i > 2", Enabled: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if !GDB.Passes.MatchString(got[0].Where) || GDB.Passes.MatchString("*0x0000000000001141 if i > 2") {
		t.Errorf("Passes tells the count wrong in %q", got[0].Where)
	}
}
