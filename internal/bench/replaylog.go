package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/fred-debugger/fred/replaylog"
)

// The replay log's cost (DESIGN.md: run time under recording at most 1.1x
// for single-threaded programs; compact entries). Each program runs
// natively, with the preload library recording (what it costs under fred:
// gdb lets the program run free between stops, so the library is the
// difference), and replaying the recorded log (FREDLOG_REPLAY=1, as after
// a restore). Times are medians of several runs, wall clock. Each run
// includes the library's start (creating and mapping the log file, about
// 2 to 4 ms here), which a short program feels most.

const rlogSection = "Replay log: record and replay overhead (preload library; DAG benchmark and a read-heavy program)"

func (b *bench) replayLog() {
	lib, err := replaylog.Preload(b.tmp)
	if err != nil {
		b.fail(rlogSection, "building the replay log library", "", err)
		return
	}
	for _, name := range []string{"bench_dag", "bench_read"} {
		if _, err := b.binary(name); err != nil {
			b.fail(rlogSection, name, "", err)
			return
		}
	}
	data := filepath.Join(b.tmp, "read.data")
	chunk := make([]byte, 1<<20)
	rand.Read(chunk)
	f, err := os.Create(data)
	if err != nil {
		b.fail(rlogSection, "read-heavy data", "", err)
		return
	}
	for i := 0; i < 32; i++ {
		f.Write(chunk)
	}
	f.Close()
	defer os.Remove(data)

	reps := 7
	if *quick {
		reps = 3
	}
	for _, c := range []struct {
		what string
		argv []string
	}{
		{"DAG benchmark, N = 34,546 nodes / 421,576 edges", []string{b.bins["bench_dag"], "1"}},
		{"DAG benchmark, 4N", []string{b.bins["bench_dag"], "4"}},
		{"read-heavy: 32 MB in 4 KB read()s, a clock_gettime per read", []string{b.bins["bench_read"], data}},
	} {
		progress("replay log: %s", c.what)
		native, rec, rep, out0, l, err := recordReplay(c.argv, lib, filepath.Join(b.tmp, "bench.replaylog"), []string{"FREDLOG_TTY=1"}, reps)
		if err != nil {
			b.fail(rlogSection, c.what, "", err)
			return
		}
		ratio := rec.median() / native.median()
		v := "meets"
		if ratio > 1.1 {
			v = "MISSES"
		}
		b.add(row{section: rlogSection, measure: c.what + ": native / recording / replaying",
			fred: "1.2x", target: "recording at most 1.1x",
			got:     fmt.Sprintf("%s / %s (%.2fx) / %s (%.2fx)", secs(native.median()), secs(rec.median()), ratio, secs(rep.median()), rep.median()/native.median()),
			verdict: v, comments: replaylog.Summary(l)})
		var data uint64
		for _, e := range l.Entries {
			data += uint64(len(e.Data))
		}
		if n := len(l.Entries); n > 0 {
			per := float64(l.Bytes()-data) / float64(n)
			v := "meets"
			if per > 8 {
				v = "MISSES"
			}
			b.add(row{section: rlogSection, measure: c.what + ": log bytes per event (besides read data, stored once)",
				fred: "79 bytes (lock events)", target: "at most 8 bytes", got: fmt.Sprintf("%.1f bytes", per), verdict: v,
				comments: fmt.Sprintf("%d events", n)})
		}
		fmt.Fprintf(&b.details, "\n%s:\n  native %s\n  recording %s\n  replaying %s\n  output %q\n", c.what, native.list(), rec.list(), rep.list(), bytes.TrimSpace(out0))
	}
}

// recordReplay runs argv reps times natively, recording a log with the
// library lib (and the environment extra), and replaying it; a replay must
// print what its recording printed. It returns the three samples, what the
// native run printed and the last log.
func recordReplay(argv []string, lib, logf string, extra []string, reps int) (native, rec, rep sample, out0 []byte, l *replaylog.Log, err error) {
	defer os.Remove(logf)
	for i := 0; i < reps; i++ {
		out, t, err := runEnv(argv, nil)
		if err != nil {
			return nil, nil, nil, nil, nil, err
		}
		out0 = out
		native = append(native, t)
		os.Remove(logf)
		env := append([]string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf}, extra...)
		outR, t, err := runEnv(argv, env)
		if err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("recording: %w", err)
		}
		rec = append(rec, t)
		outP, t, err := runEnv(argv, append(env, "FREDLOG_REPLAY=1"))
		if err != nil {
			return nil, nil, nil, nil, nil, fmt.Errorf("replaying: %w", err)
		}
		rep = append(rep, t)
		if !bytes.Equal(outR, outP) {
			return nil, nil, nil, nil, nil, fmt.Errorf("replaying: the replay printed %q, the recording %q", outP, outR)
		}
	}
	if l, err = replaylog.ReadFile(logf); err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("the log: %w", err)
	}
	return native, rec, rep, out0, l, nil
}

// runEnv runs argv with extra environment and returns its output and wall
// time. Address randomisation is off, as under fred (gdb turns it off; the
// library would otherwise start the program again without it).
func runEnv(argv, env []string) ([]byte, float64, error) {
	cmd := exec.Command("setarch", append([]string{"-R"}, argv...)...)
	cmd.Env = append(os.Environ(), env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t := time.Since(start).Seconds()
	if err != nil {
		return out, t, fmt.Errorf("%v: %v\n%s", argv, err, out)
	}
	return out, t, nil
}
