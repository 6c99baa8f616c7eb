package main

import "fmt"

// underLLDB: the same small program's snapshots and reverse commands
// under lldb, whose personality is a file (personalities/files/lldb.fred).
func (b *bench) underLLDB() {
	const sec = "Under lldb (its personality a file): snapshots and reverse commands on steps.c"
	reps := 5
	if *quick {
		reps = 2
	}
	for _, backend := range []string{"auto", "criu"} {
		kind := "fork copy, the default"
		if backend == "criu" {
			kind = "CRIU"
		}
		c := snapCase{label: "small program (steps.c), lldb, " + kind, bin: "steps", backend: backend, lldb: true,
			setup: []string{"b square", "run"}, at: "steps`square\\(x=0\\)", reps: reps}
		progress("lldb: snapshots, %s", kind)
		r, err := b.snapMeasure(c, false)
		if err != nil {
			b.fail(sec, "snapshot, small process ("+kind+")", "under 0.1 s", err)
			continue
		}
		b.add(row{section: sec, measure: "snapshot, small process (" + kind + ")", fred: "-", target: "under 0.1 s",
			got: r.snap.String(), verdict: verdict(r.snap, 0.1), comments: fmt.Sprintf("fred's own figure %s", r.fredSnap)})
		b.add(row{section: sec, measure: "restore, small process (" + kind + ")", fred: "-", target: "under 0.1 s",
			got: r.restore.String(), verdict: verdict(r.restore, 0.1)})
	}
	progress("lldb: reverse commands on steps.c")
	sc := scenario{label: "steps.c under lldb", bin: "steps", lldb: true,
		prepare: func(x *session, _ bool) error {
			return x.must("settings set target.process.thread.step-avoid-libraries libc.so.6", "b main", "run",
				"next", "next", "fred-branch b1", "next", "next", "step", "next", "fred-branch b2")
		},
		cases: []revCase{
			{measure: "reverse-step after `next` over a call", fred: "-", target: "under 0.3 s", under: 0.3,
				base: "b1", cmd: "fred-reverse-step", want: "steps`square\\(x=0\\) at steps.c:10"},
			{measure: "reverse-next over a call", fred: "-", target: "-",
				base: "b1", cmd: "fred-reverse-next", want: `steps.c:23`},
			{measure: "reverse-finish from a callee's 2nd line", fred: "-", target: "-",
				base: "b2", cmd: "fred-reverse-finish", want: "steps`main at steps.c:23"},
		}}
	for i := range sc.cases {
		sc.cases[i].reps = reps
	}
	for i, r := range b.runScenario(sc) {
		b.revRow(sec, sc.cases[i], r)
	}
}
