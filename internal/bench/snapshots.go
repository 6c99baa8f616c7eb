package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	P "github.com/fred-debugger/fred/personalities"
)

// snapCase is one program to snapshot and restore again and again.
type snapCase struct {
	label string   // "small program (steps.c)"
	bin   string   // fixture
	setup []string // commands that bring it to the moment to snapshot
	at    string   // regexp the frame shown after a restore must match
	check string   // expression that must print 1 after the last restore ("" none)
	reps  int
	// backend is fred's --snapshots mode: "auto" (fork copies of a
	// single-threaded program) or "criu".
	backend string
	lldb    bool // under lldb, not gdb
}

type snapResult struct {
	snap, restore     sample // wall clock around fred-checkpoint / fred-restart N
	fredSnap          sample // what fred prints for the snapshot
	criuDump, criuRst sample // what CRIU's own logs say
	size              float64
	prof              [2]profile // snapshot, restore (traced runs only)
	profReps          int
}

// snapBoth measures c without tracing, then (unless -notrace) again,
// fewer times, with tracing for the breakdown.
func (b *bench) snapBoth(c snapCase) (snapResult, error) {
	r, err := b.snapMeasure(c, false)
	if err != nil || *noTrace {
		return r, err
	}
	c.reps = min(c.reps, 2)
	if c.bin == "bench_heap" && strings.Contains(c.label, "GB") {
		c.reps = 1
	}
	t, err := b.snapMeasure(c, true)
	if err != nil {
		b.note("%s: the traced run for the breakdown failed: %v", c.label, err)
		return r, nil
	}
	r.prof, r.profReps = t.prof, c.reps
	return r, nil
}

func (b *bench) snapshots() {
	const sec = "Snapshots under gdb: fork copies (fred's default for a single-threaded program) and CRIU 4.1.1 (fred-checkpoint; fred-restart N)"
	reps := 7
	if *quick {
		reps = 3
	}
	for _, backend := range []string{"auto", "criu"} {
		small := snapCase{label: "small program (steps.c)", bin: "steps", backend: backend,
			setup: []string{"break square", "run"}, at: `square \(x=0\)`, check: "x == 0 && total == 0", reps: reps}
		kind, fred := "fork copy, the default", "about 0.9 s"
		if backend == "criu" {
			kind = "CRIU, as for a multi-threaded program"
		}
		progress("snapshots: %s, %s", small.label, kind)
		r, err := b.snapBoth(small)
		if err != nil {
			b.fail(sec, "snapshot, small process ("+kind+")", "under 0.1 s", err)
			continue
		}
		comment := fmt.Sprintf("fred's own figure %s", r.fredSnap)
		if backend == "criu" {
			comment += fmt.Sprintf("; of which CRIU dump (its log) %s; image %s", r.criuDump, human(r.size))
		}
		b.add(row{section: sec, measure: "snapshot, small process (" + kind + ")", fred: fred, target: "under 0.1 s",
			got: r.snap.String(), verdict: verdict(r.snap, 0.1), comments: comment})
		comment = "a copy of the paused process becomes the program; gdb attaches to it"
		if backend == "criu" {
			comment = fmt.Sprintf("of which CRIU restore (its log) %s", r.criuRst)
		}
		b.add(row{section: sec, measure: "restore, small process (" + kind + ")", fred: "0.33 to 0.41 s", target: "under 0.1 s",
			got: r.restore.String(), verdict: verdict(r.restore, 0.1), comments: comment})
		small.label += ", " + kind
		b.snapDetails(small, r)
		if p := r.prof[1]; backend == "criu" && p.total > 0 && p.parts["gdb: attach"] != nil {
			b.attachShare = float64(p.parts["gdb: attach"].d) / float64(p.total)
		}
	}

	heapReps := 5
	if *quick {
		heapReps = 2
	}
	for _, mb := range []int{100, 1024} {
		label := fmt.Sprintf("%d MB", mb)
		if mb == 1024 {
			label = "1 GB"
			heapReps = 3
			if *quick {
				heapReps = 1
			}
		}
		measure := "snapshot, " + label + " of heap touched"
		// Each image is kept until its restore is timed, then deleted:
		// one image at a time, plus the page cache's copy.
		need := uint64(mb)<<20 + 4<<30
		if free := freeBytes(b.tmp); free < need {
			b.add(row{section: sec, measure: measure, got: "skipped",
				comments: fmt.Sprintf("only %s free in %s; this case needs about %s (image plus 4 GiB to spare)",
					human(float64(free)), b.tmp, human(float64(need)))})
			continue
		}
		c := snapCase{label: label + " heap (bench_heap.c)", bin: "bench_heap", backend: "criu",
			setup: []string{"break main", "run " + strconv.Itoa(mb), "break ready", "continue"},
			at:    `ready \(`, check: "p[n-1] == 0x5a && p[0] == 0x5a", reps: heapReps}
		progress("snapshots: %s", c.label)
		r, err := b.snapBoth(c)
		if err != nil {
			b.fail(sec, measure, "", err)
			continue
		}
		per := func(s sample) string {
			return fmt.Sprintf("%.2f GB/s", r.size/(1<<30)/s.median())
		}
		b.add(row{section: sec, measure: measure, fred: "-", target: "-", got: r.snap.String(),
			comments: fmt.Sprintf("image %s, %s; fred's own figure %s; CRIU dump (its log) %s\nin order: %s (each image is deleted after its restore)",
				human(r.size), per(r.snap), r.fredSnap, r.criuDump, r.snap.list())})
		b.add(row{section: sec, measure: "restore, " + label + " of heap touched", fred: "-", target: "-", got: r.restore.String(),
			comments: fmt.Sprintf("%s; CRIU restore (its log) %s; the image is read back from the page cache\nin order: %s",
				per(r.restore), r.criuRst, r.restore.list())})
		b.snapDetails(c, r)
	}
}

func (b *bench) snapDetails(c snapCase, r snapResult) {
	if r.profReps == 0 {
		return
	}
	fmt.Fprintf(&b.details, "\nWhere the time of one snapshot / restore goes, %s (traced runs, average of %d):\n", c.label, r.profReps)
	fmt.Fprintf(&b.details, "  fred-checkpoint, %.3f s traced (untraced median %s):\n", r.prof[0].total.Seconds()/float64(r.profReps), secs(r.snap.median()))
	r.prof[0].write(&b.details, "    ", r.profReps)
	fmt.Fprintf(&b.details, "  fred-restart N, %.3f s traced (untraced median %s):\n", r.prof[1].total.Seconds()/float64(r.profReps), secs(r.restore.median()))
	r.prof[1].write(&b.details, "    ", r.profReps)
}

func (b *bench) snapMeasure(c snapCase, traced bool) (snapResult, error) {
	var r snapResult
	pers, argv := P.GDB, []string{"gdb", "-q", b.bins[c.bin]}
	if c.lldb {
		pers, argv = P.LLDB, []string{"lldb", b.bins[c.bin]}
	}
	x, err := startSessionWith(b.tmp, pers, argv, traced, c.backend)
	if err != nil {
		return r, err
	}
	defer func() {
		if cerr := x.close(); cerr != nil {
			b.note("%s: %v", c.label, cerr)
		}
	}()
	if err := x.must(c.setup...); err != nil {
		return r, err
	}
	at := regexp.MustCompile(c.at)
	for i := 0; i < c.reps; i++ {
		out, took, err := x.do("fred-checkpoint")
		if err != nil {
			return r, err
		}
		r.prof[0].merge(x.prof)
		sl, err := parseSnapshot(out)
		if err != nil {
			return r, err
		}
		dir := filepath.Join(x.dir, fmt.Sprintf("snap-%d", sl.id))
		r.snap = append(r.snap, took.Seconds())
		r.fredSnap = append(r.fredSnap, sl.took)
		if s, ok := criuLogSeconds(filepath.Join(dir, "dump.log")); ok {
			r.criuDump = append(r.criuDump, s)
		}
		if n := dirBytes(dir); n > 0 {
			r.size = float64(n)
		} else {
			r.size = sl.size
		}
		out, took, err = x.do(fmt.Sprintf("fred-restart %d", sl.id))
		if err != nil {
			return r, err
		}
		r.prof[1].merge(x.prof)
		if !at.MatchString(out) {
			return r, fmt.Errorf("after fred-restart %d the program is not where it was snapshotted (want %s):\n%s", sl.id, c.at, indent(tail(out, 4)))
		}
		r.restore = append(r.restore, took.Seconds())
		if s, ok := criuLogSeconds(filepath.Join(dir, "restore.log")); ok {
			r.criuRst = append(r.criuRst, s)
		}
		// Done with this image: keep the disk free for the big cases.
		os.RemoveAll(dir)
	}
	if c.check != "" {
		out, _, err := x.do("print " + c.check)
		if err != nil {
			return r, err
		}
		if !regexp.MustCompile(`= 1\b`).MatchString(out) {
			return r, fmt.Errorf("after the restores, print %s says %q: the memory did not come back", c.check, tail(out, 1))
		}
	}
	return r, nil
}
