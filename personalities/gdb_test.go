package personalities

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
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
	transcripts[name] = tr
	return tr
}

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

var _ = errors.New
