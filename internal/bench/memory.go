package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/fred-debugger/fred/internal/proc"
)

// fred runs inside the bench process, so the process's peak resident
// memory during a command is fred's, plus the bench's own little. The
// kernel keeps the peak (VmHWM) and resets it to the present on demand
// (writing 5 to clear_refs), so each command gets its own figure.

// resetPeak starts a new peak; it says whether the kernel took it. The
// Go runtime first gives back what the bench's earlier work left behind
// (a thread-order benchmark's log held hundreds of MB), so that the peak
// is what this command adds to what is live.
func resetPeak() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is the peak resident memory since the last resetPeak (0 if
// unknown).
func peakRSS() uint64 { return proc.KBytes("self/status", "VmHWM") }

// watchPeaks are the peaks of every reverse-watch the bench ran, by what
// it measured.
var watchPeaks struct {
	mu   sync.Mutex
	max  uint64
	rows map[string]uint64 // the command and program -> its largest peak
}

func notePeak(what string, peak uint64) {
	watchPeaks.mu.Lock()
	defer watchPeaks.mu.Unlock()
	if watchPeaks.rows == nil {
		watchPeaks.rows = map[string]uint64{}
	}
	watchPeaks.rows[what] = max(watchPeaks.rows[what], peak)
	watchPeaks.max = max(watchPeaks.max, peak)
}

func mb(b uint64) string { return fmt.Sprintf("%d MB", b>>20) }

// memoryRow is issue 17's bound: fred's own memory under 300 MB resident
// for any search, beside each reverse-watch's figure.
func (b *bench) memoryRow() {
	watchPeaks.mu.Lock()
	defer watchPeaks.mu.Unlock()
	if len(watchPeaks.rows) == 0 {
		return
	}
	var l []string
	for what, p := range watchPeaks.rows {
		l = append(l, what+" "+mb(p))
	}
	sort.Strings(l)
	v := "meets"
	if watchPeaks.max >= 300<<20 {
		v = "MISSES"
	}
	b.add(row{section: "fred's own memory (the bench process's peak resident memory during each reverse-watch; fred runs in it)",
		measure: "peak resident memory during a reverse-watch, the largest", fred: "-", target: "under 300 MB",
		got: mb(watchPeaks.max), verdict: v, comments: strings.Join(l, "; ")})
}
