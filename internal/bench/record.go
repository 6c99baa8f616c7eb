package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/fred-debugger/fred/internal/recording"
	"github.com/fred-debugger/fred/replaylog"
)

// Recordings (issue 24): `fred record` against the program's own run, a
// replay of the recording to its end without a debugger (the replay
// library alone, as fred's debugger-less replay would run it), and the
// recording's size. Times are medians, wall clock; fred record's include
// its start and the storing of the executable and libraries.

const recordSection = "Recordings: fred record and a replay to the end (issue 24)"

func (b *bench) recordings() {
	fredBin := filepath.Join(b.root, "bin", "fred")
	if _, err := os.Stat(fredBin); err != nil {
		b.fail(recordSection, "fred record", "", fmt.Errorf("%s is not built: run 'make build' (make bench does)", fredBin))
		return
	}
	lib, err := replaylog.Preload(b.tmp)
	if err != nil {
		b.fail(recordSection, "building the replay log library", "", err)
		return
	}
	loop, err := b.binary("bench_loop")
	if err != nil {
		b.fail(recordSection, "bench_loop", "", err)
		return
	}
	// gzip's input: 34 MB of text that compresses (words, numbers).
	text := filepath.Join(b.tmp, "gzip.in")
	if f, err := os.Create(text); err == nil {
		w := bufio.NewWriter(f)
		for i := 0; i < 600000; i++ {
			fmt.Fprintf(w, "line %d of the input, %x, some words that repeat\n", i, i*2654435761)
		}
		w.Flush()
		f.Close()
	}
	defer os.Remove(text)
	// (seven: the short interpreter runs' ratios moved by a tenth
	// between medians of three on this machine)
	reps := 7
	if *quick {
		reps = 1
	}
	// The same gzip built with -g from Debian's source (issue 24); a
	// failure to fetch or build is that row's, and the rest go on.
	gz := struct {
		what string
		argv []string
		err  error
		note string
	}{what: "gzip built from its Debian source with -g"}
	if g, err := debianGzip(b.tmp); err != nil {
		gz.err = fmt.Errorf("gzip from its Debian source: %w", err)
	} else {
		gz.what = fmt.Sprintf("gzip %s built from its Debian source with -g (-O2), -c on the same text", g.version)
		gz.argv, gz.note = []string{g.bin, "-c", text}, "; the binary "+g.note
	}
	py := filepath.Join(b.root, "testdata", "bench_watch.py")
	pl := filepath.Join(b.root, "testdata", "bench_watch.pl")
cases:
	for _, c := range []struct {
		what, target string
		argv         []string
		limit        float64
		replay       bool
		err          error  // the measurement cannot be made
		note         string // for the comments
	}{
		{"CPU-bound C (bench_loop, 300M turns)", "recording at most 1.3x, replay to the end at most 1.5x", []string{loop, "300000000"}, 1.3, true, nil, ""},
		{"Debian's gzip -c on 34 MB of text (no -g: Debian's binary)", "recording at most 1.3x, replay to the end at most 1.5x", []string{"/usr/bin/gzip", "-c", text}, 1.3, true, nil, ""},
		{gz.what, "recording at most 1.3x, replay to the end at most 1.5x", gz.argv, 1.3, true, gz.err, gz.note},
		{"Python, 10M statements (bench_watch.py 2,000,000: 5 a turn)", "recording at most 1.3x", []string{"python3", py, "2000000"}, 1.3, false, nil, ""},
		{"Perl, 10M statements (bench_watch.pl 2,000,000: 5 a turn)", "recording at most 1.3x", []string{"perl", pl, "2000000"}, 1.3, false, nil, ""},
	} {
		if c.err != nil {
			b.fail(recordSection, c.what, c.target, c.err)
			continue
		}
		progress("fred record: %s", c.what)
		var native, rec, rep sample
		var m *recording.Manifest
		for i := 0; i < reps; i++ {
			_, t, err := runEnv(c.argv, nil)
			if err != nil {
				b.fail(recordSection, c.what, c.target, err)
				continue cases
			}
			native = append(native, t)
			dir := filepath.Join(b.tmp, "rec")
			os.RemoveAll(dir)
			cmd := exec.Command(fredBin, append([]string{"record", "-o", dir}, c.argv...)...)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.fail(recordSection, c.what, c.target, fmt.Errorf("fred record: %v: %s", err, lastLines(out)))
				continue cases
			}
			rec = append(rec, time.Since(start).Seconds())
			if m, err = recording.Read(dir); err != nil {
				b.fail(recordSection, c.what, c.target, err)
				continue cases
			}
			if c.replay {
				// The recorded log, from its first entry, with the
				// file metadata it logged: as fred replay's runs.
				logf := filepath.Join(b.tmp, "replay.log")
				lp, _ := m.Part(recording.RoleLog, "")
				if err := recording.Extract(dir, lp, logf); err != nil {
					b.fail(recordSection, c.what, c.target, err)
					continue cases
				}
				env := append(replaylog.Env(logf, false), "LD_PRELOAD="+lib, "FREDLOG_REPLAY=1", "FREDLOG_STAT=1", "FREDLOG_STORE=-1")
				_, t, err := runEnv(c.argv, env)
				h, herr := replaylog.ReadHeader(logf)
				os.Remove(logf)
				if err != nil {
					b.fail(recordSection, c.what, c.target, fmt.Errorf("replaying: %w", err))
					continue cases
				}
				if herr == nil && h.Divergences > 0 {
					b.fail(recordSection, c.what, c.target, fmt.Errorf("the replay left its recording: %s", h.Notice))
					continue cases
				}
				rep = append(rep, t)
			}
		}
		ratio := rec.median() / native.median()
		v := "meets"
		got := fmt.Sprintf("%s / %s (%.2fx)", secs(native.median()), secs(rec.median()), ratio)
		if c.replay {
			r := rep.median() / native.median()
			got += fmt.Sprintf(" / replay %s (%.2fx)", secs(rep.median()), r)
			if r > 1.5 {
				v = "MISSES"
			}
		}
		if ratio > c.limit {
			v = "MISSES"
		}
		var files, kept int64
		for _, p := range m.Parts {
			if p.Role != recording.RoleLog {
				files += p.Size
			}
			if st, err := os.Stat(filepath.Join(filepath.Join(b.tmp, "rec"), p.File)); err == nil {
				kept += st.Size()
			}
		}
		per := 0.0
		if m.LogCounts > 0 {
			per = float64(m.LogBytes) / float64(m.LogCounts)
		}
		b.add(row{section: recordSection, measure: c.what + ": native / fred record" + map[bool]string{true: " / replay", false: ""}[c.replay],
			target: c.target, got: got, verdict: v,
			comments: fmt.Sprintf("log %s for %d entries (%.1f bytes an entry, data included); %d files stored, %.1f MB; the recording takes %.1f MB compressed (zstd)", size(m.LogBytes), m.LogCounts, per, len(m.Parts)-1, float64(files)/1e6, float64(kept)/1e6) + c.note})
		os.RemoveAll(filepath.Join(b.tmp, "rec"))
	}
}

// size is a byte count in MB or KB.
func size(n uint64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// lastLines is the end of a command's output, for an error.
func lastLines(out []byte) string {
	if len(out) > 400 {
		out = out[len(out)-400:]
	}
	return string(out)
}
