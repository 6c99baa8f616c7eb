package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"time"

	godap "github.com/google/go-dap"

	"github.com/fred-debugger/fred/internal/dap"
)

// Step back in an editor (issue 19): the stepBack request of fred dap, from
// the request to its stopped event, on the watch fixtures, as an editor
// sees it. Target: under 0.3 s, as fred-reverse-step at the prompt.

const dapSection = "Step back in an editor (fred dap: stepBack, from the request to its stopped event)"

func (b *bench) dapStepBack() {
	sec := dapSection
	cbin, err := b.binary("watch")
	if err != nil {
		b.fail(sec, "compile testdata/watch.c", "-", err)
		return
	}
	td := filepath.Join(b.root, "testdata")
	cases := []struct {
		name, program, source string
		line                  int
		cond                  string
	}{
		{"gdb", cbin, filepath.Join(td, "watch.c"), 9, "i >= 3"},
		{"pdb", filepath.Join(td, "watch.py"), filepath.Join(td, "watch.py"), 8, "i >= 3"},
		{"perl", filepath.Join(td, "watch.pl"), filepath.Join(td, "watch.pl"), 10, "$i >= 3"},
	}
	for _, tc := range cases {
		progress("fred dap: stepBack in %s", tc.name)
		times, err := dapStepBacks(tc.program, tc.source, tc.line, tc.cond)
		measure := fmt.Sprintf("stepBack in %s (%s), median of %d", tc.name, filepath.Base(tc.source), len(times))
		if err != nil {
			b.fail(sec, measure, "under 0.3 s", err)
			continue
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		med := times[len(times)/2]
		v := "MISSES"
		if med < 300*time.Millisecond {
			v = "meets"
		}
		b.add(row{section: sec, measure: measure, fred: "-", target: "under 0.3 s", got: fmt.Sprintf("%.3f s", med.Seconds()), verdict: v,
			comments: fmt.Sprintf("fastest %.3f s, slowest %.3f s; after a conditional breakpoint and 3 nexts", times[0].Seconds(), times[len(times)-1].Seconds())})
	}
}

// dapStepBacks runs a session of fred dap in this process: a breakpoint,
// three nexts, then three stepBacks, each timed to its stopped event.
func dapStepBacks(program, source string, line int, cond string) ([]time.Duration, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- dap.Serve(ctx, inR, outW, dap.Options{Timeout: 60 * time.Second, Snapshots: "auto"})
		outW.Close()
	}()
	msgs := make(chan godap.Message, 256)
	go func() {
		r := bufio.NewReader(outR)
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- m
		}
	}()
	defer func() {
		inW.Close()
		cancel()
		<-served
	}()
	seq := 0
	send := func(command string, args any) error {
		seq++
		body := map[string]any{"seq": seq, "type": "request", "command": command}
		if args != nil {
			body["arguments"] = args
		}
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		return godap.WriteBaseMessage(inW, b)
	}
	// wait reads until a response to seq (failing on an error) or, with
	// seq 0, the event named.
	wait := func(seqWanted int, event string) error {
		deadline := time.After(60 * time.Second)
		for {
			select {
			case m, ok := <-msgs:
				if !ok {
					return fmt.Errorf("fred dap ended while waiting for %s", event)
				}
				if r, ok := m.(godap.ResponseMessage); ok && seqWanted != 0 && r.GetResponse().RequestSeq == seqWanted {
					if !r.GetResponse().Success {
						return fmt.Errorf("%s: %s", r.GetResponse().Command, r.GetResponse().Message)
					}
					if event == "" {
						return nil
					}
					seqWanted = 0
					continue
				}
				if e, ok := m.(godap.EventMessage); ok && seqWanted == 0 && e.GetEvent().Event == event {
					return nil
				}
			case <-deadline:
				return fmt.Errorf("no %s in 60 s", event)
			}
		}
	}
	do := func(command string, args any, event string) error {
		if err := send(command, args); err != nil {
			return err
		}
		return wait(seq, event)
	}
	steps := []struct {
		command string
		args    any
		event   string
	}{
		{"initialize", map[string]any{"adapterID": "fred"}, ""},
		{"launch", map[string]any{"program": program}, "initialized"},
		{"setBreakpoints", map[string]any{"source": map[string]any{"path": source}, "breakpoints": []map[string]any{{"line": line, "condition": cond}}}, ""},
		{"configurationDone", nil, "stopped"},
		{"next", map[string]any{"threadId": 1}, "stopped"},
		{"next", map[string]any{"threadId": 1}, "stopped"},
		{"next", map[string]any{"threadId": 1}, "stopped"},
	}
	for _, st := range steps {
		if err := do(st.command, st.args, st.event); err != nil {
			return nil, err
		}
	}
	var times []time.Duration
	for i := 0; i < 3; i++ {
		start := time.Now()
		if err := do("stepBack", map[string]any{"threadId": 1}, "stopped"); err != nil {
			return nil, err
		}
		times = append(times, time.Since(start))
	}
	if err := do("disconnect", nil, ""); err != nil {
		return nil, err
	}
	return times, nil
}
