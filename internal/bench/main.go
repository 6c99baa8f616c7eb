// Command bench measures fred against the performance targets of
// DESIGN.md ("Performance targets") and prints the figures next to them:
// `make bench`, or `go run ./internal/bench` from the repository root.
//
// It drives the fred package directly (no pty, no person): gdb on small C
// fixtures, CRIU snapshots, reverse commands. Every timing is the wall
// clock around Session.Exec, next to what fred itself prints. Nothing is
// left behind: each session's snapshots live in a temporary directory that
// is removed, and the programs are checked gone.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
)

var (
	quick   = flag.Bool("quick", false, "fewer repetitions and sizes (a smoke run)")
	bound   = flag.Duration("bound", 60*time.Second, "skip a measurement whose projected time is longer than this")
	verbose = flag.Bool("v", false, "print what fred printed for each measured command")
	noTrace = flag.Bool("notrace", false, "do not trace fred's traffic with gdb (no breakdown of where the time goes)")
	only    = flag.String("only", "", "run only these parts, comma-separated: snapshots,small,long,history,attach,watch,uninformed,interp,replaylog,record,threads,dap,server,lldb")
)

// want reports whether a part of the bench is to run.
func want(part string) bool {
	if *only == "" {
		return true
	}
	for _, p := range strings.Split(*only, ",") {
		if strings.TrimSpace(p) == part {
			return true
		}
	}
	return false
}

func main() {
	flag.Parse()
	os.Exit(run())
}

func run() int {
	start := time.Now()
	// Restored programs are reparented to the nearest subreaper: us.
	if err := proc.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	// Plain gdb output, without colours, easy to parse.
	os.Setenv("TERM", "dumb")
	root := repoRoot()
	tmp, err := os.MkdirTemp("", "fred-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	// Keep fred's history file out of the caller's home.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))

	b := &bench{root: root, tmp: tmp, bins: map[string]string{}}
	load0 := loadAvg()
	header(os.Stdout)
	for _, name := range []string{"steps", "bench_heap", "bench_loop"} {
		p, err := compile(root, tmp, name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		b.bins[name] = p
	}

	if want("snapshots") {
		b.snapshots()
	}
	if want("small") {
		b.reverseSmall()
	}
	if want("long") {
		b.reverseLong()
	}
	if want("history") {
		b.reverseHistory()
	}
	if want("attach") {
		b.gdbAttach()
	}
	if want("watch") {
		b.reverseWatch()
	}
	if want("uninformed") {
		b.uninformedStart()
	}
	if want("interp") {
		b.interpWatch()
	}
	if want("replaylog") {
		b.replayLog()
	}
	if want("record") {
		b.recordings()
	}
	if want("threads") {
		b.threadOrder()
	}
	if want("dap") {
		b.dapStepBack()
	}
	if want("server") {
		b.server()
	}
	if want("lldb") {
		b.underLLDB()
	}
	b.memoryRow()
	b.notBuilt()
	if want("watch") {
		b.dropWatchPlaceholders()
	}

	b.note("load average at the end: %s (at the start: %s); the machine has %d CPUs, and other work on it makes the timings vary", loadAvg(), load0, runtime.NumCPU())
	b.print(os.Stdout)
	left := b.leftovers()
	fmt.Printf("\nbench took %.0f s.", time.Since(start).Seconds())
	if left != "" {
		fmt.Printf(" LEFT BEHIND: %s\n", left)
		return 1
	}
	fmt.Printf(" Nothing left behind (no program, gdb, criu or snapshot directory).\n")
	if b.failures > 0 {
		return 1
	}
	return 0
}

func repoRoot() string {
	if wd, err := os.Getwd(); err == nil {
		if _, err := os.Stat(filepath.Join(wd, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(wd, "testdata", "steps.c")); err == nil {
				return wd
			}
		}
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// bench collects the rows of the summary and the details behind them.
type bench struct {
	root     string
	tmp      string
	bins     map[string]string
	rows     []row
	details  strings.Builder
	notes    []string
	failures int
	// attachShare is the part of a small program's restore spent in gdb's
	// attach (traced run), for the notes.
	attachShare float64
	// dagCheck is how long one has_cycle() takes just before the cycle,
	// by scale (bench_dag's probe mode).
	dagCheck map[int]float64
}

// row is one line of the summary table.
type row struct {
	section  string
	measure  string
	fred     string // FReD's figure from the paper
	target   string
	got      string
	verdict  string
	comments string
}

func (b *bench) add(r row) { b.rows = append(b.rows, r) }

// fail records a measurement that could not be made.
func (b *bench) fail(section, measure, target string, err error) {
	b.failures++
	msg := strings.TrimSpace(err.Error())
	first, _, _ := strings.Cut(msg, "\n")
	b.add(row{section: section, measure: measure, target: target, got: "FAILED", comments: first})
	fmt.Fprintf(&b.details, "\nFAILED: %s: %s\n", measure, indent(msg))
}

func (b *bench) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// progress shows the bench is alive while it runs (stderr, so the report
// on stdout stays a clean table).
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
