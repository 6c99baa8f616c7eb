package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/internal/proc"
)

// sample is repeated measurements of one thing, in seconds.
type sample []float64

func (s sample) sorted() []float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	return c
}

func (s sample) median() float64 {
	c := s.sorted()
	if len(c) == 0 {
		return math.NaN()
	}
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func (s sample) min() float64 { return s.sorted()[0] }
func (s sample) max() float64 { c := s.sorted(); return c[len(c)-1] }

// String is "0.123 s [0.110-0.140] n=7".
func (s sample) String() string {
	switch len(s) {
	case 0:
		return "-"
	case 1:
		return secs(s[0]) + " (n=1)"
	}
	return fmt.Sprintf("%s [%s-%s] n=%d", secs(s.median()), trim(s.min()), trim(s.max()), len(s))
}

// list is the measurements in the order they were taken.
func (s sample) list() string {
	var l []string
	for _, x := range s {
		l = append(l, trim(x))
	}
	return strings.Join(l, ", ") + " s"
}

func secs(x float64) string { return trim(x) + " s" }

func trim(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case x >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

func human(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f B", n)
}

// verdict compares a median with an upper bound in seconds.
func verdict(s sample, under float64) string {
	if len(s) == 0 {
		return ""
	}
	if s.median() < under {
		return "meets"
	}
	return "MISSES"
}

// header says when and where the figures were taken.
func header(w io.Writer) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "fred bench, %s, host %s\n", time.Now().Format("2006-01-02 15:04:05 MST"), host)
	fmt.Fprintf(w, "  cpu:    %s x %d, %s RAM\n", cpuModel(), runtime.NumCPU(), memTotal())
	fmt.Fprintf(w, "  kernel: %s\n", firstLine(readFile("/proc/sys/kernel/osrelease")))
	criuPath, err := ckpt.FindCriu("")
	if err != nil {
		fmt.Fprintf(w, "  criu:   not found: %v\n", err)
	} else {
		v, _ := exec.Command(criuPath, "--version").Output()
		fmt.Fprintf(w, "  criu:   %s (%s)\n", strings.TrimPrefix(firstLine(string(v)), "Version: "), criuPath)
	}
	g, _ := exec.Command("gdb", "--version").Output()
	c, _ := exec.Command("gcc", "--version").Output()
	fmt.Fprintf(w, "  tools:  %s; %s; %s\n", firstLine(string(g)), firstLine(string(c)), runtime.Version())
	d, _ := exec.Command("git", "describe", "--always", "--dirty").Output()
	fmt.Fprintf(w, "  fred:   %s (working tree as it is now)\n", strings.TrimSpace(string(d)))
	fmt.Fprintf(w, "  load:   %s (other work on the machine skews the timings)\n", loadAvg())
	fmt.Fprintf(w, "  disk:   %s free for snapshots in %s\n", human(float64(freeBytes(os.TempDir()))), os.TempDir())
}

func cpuModel() string {
	for _, l := range strings.Split(readFile("/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	if b := proc.KBytes("meminfo", "MemTotal"); b > 0 {
		return human(float64(b))
	}
	return "?"
}

func loadAvg() string {
	f := strings.Fields(readFile("/proc/loadavg"))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// dirBytes is the total size of the regular files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// criuLogSeconds is the time CRIU's own log says an operation took: the
// timestamp "(SS.uuuuuu)" of its last line.
var criuStamp = regexp.MustCompile(`(?m)^\((\d+)\.(\d+)\)`)

func criuLogSeconds(path string) (float64, bool) {
	m := criuStamp.FindAllStringSubmatch(readFile(path), -1)
	if m == nil {
		return 0, false
	}
	last := m[len(m)-1]
	x, err := strconv.ParseFloat(last[1]+"."+last[2], 64)
	return x, err == nil
}

// print writes the summary table, the details and the notes.
func (b *bench) print(w io.Writer) {
	fmt.Fprintf(w, "\nPerformance targets (DESIGN.md) and what fred measures today\n")
	fmt.Fprintf(w, "(times are wall clock around one command as a person types it; median [min-max] over n runs)\n")
	cols := []string{"measure", "FReD 2017", "target", "measured", "verdict"}
	width := make([]int, len(cols))
	for i, c := range cols {
		width[i] = len(c)
	}
	cells := func(r row) []string { return []string{r.measure, r.fred, r.target, r.got, r.verdict} }
	for _, r := range b.rows {
		for i, c := range cells(r) {
			if n := len([]rune(c)); n > width[i] {
				width[i] = n
			}
		}
	}
	line := func(c []string) {
		var s strings.Builder
		for i, x := range c {
			s.WriteString(x)
			if i < len(c)-1 {
				s.WriteString(strings.Repeat(" ", width[i]-len([]rune(x))+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(s.String(), " "))
	}
	total := 0
	for _, x := range width {
		total += x + 2
	}
	rule := strings.Repeat("-", total)
	fmt.Fprintln(w, rule)
	line(cols)
	section := ""
	for _, r := range b.rows {
		if r.section != section {
			section = r.section
			fmt.Fprintln(w, rule)
			fmt.Fprintf(w, "%s\n", section)
		}
		line(cells(r))
		if r.comments != "" {
			for _, c := range strings.Split(r.comments, "\n") {
				fmt.Fprintf(w, "    %s\n", c)
			}
		}
	}
	fmt.Fprintln(w, rule)
	if b.details.Len() > 0 {
		fmt.Fprintf(w, "\nDetails\n%s", b.details.String())
	}
	if len(b.notes) > 0 {
		fmt.Fprintf(w, "\nThings noticed while measuring\n")
		for _, n := range b.notes {
			fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(n, "\n", "\n    "))
		}
	}
}

// leftovers lists what the bench left running or on disk.
func (b *bench) leftovers() string {
	var left []string
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == me {
			continue
		}
		st := readFile("/proc/" + e.Name() + "/stat")
		i := strings.LastIndexByte(st, ')')
		if i < 0 || i+2 >= len(st) {
			continue
		}
		f := strings.Fields(st[i+2:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		cmd := strings.ReplaceAll(readFile("/proc/"+e.Name()+"/cmdline"), "\x00", " ")
		if ppid == me || strings.Contains(cmd, b.tmp) {
			left = append(left, fmt.Sprintf("pid %d (%s)", pid, strings.TrimSpace(cmd)))
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(b.tmp, "snaps-*"))
	for _, d := range dirs {
		left = append(left, "snapshot directory "+d)
	}
	return strings.Join(left, "; ")
}
