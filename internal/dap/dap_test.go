package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

const wait = 60 * time.Second

// client is an editor, as far as the tests need one: it sends requests to
// `fred dap` and reads what comes back.
type client struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	msgs chan godap.Message
	seq  int
	seen []godap.Message // read but not yet wanted
}

func startDAP(t *testing.T) *client {
	t.Helper()
	cmd := exec.Command(testutil.Fred(t), "dap")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cmd: cmd, in: in, msgs: make(chan godap.Message, 256)}
	go func() {
		r := bufio.NewReader(out)
		for {
			m, err := godap.ReadProtocolMessage(r)
			if err != nil {
				close(c.msgs)
				return
			}
			c.msgs <- m
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("fred dap did not end when its input did")
		}
	})
	return c
}

func (c *client) send(command string, args any) int {
	c.t.Helper()
	c.seq++
	body := map[string]any{"seq": c.seq, "type": "request", "command": command}
	if args != nil {
		body["arguments"] = args
	}
	b, err := json.Marshal(body)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := godap.WriteBaseMessage(c.in, b); err != nil {
		c.t.Fatal(err)
	}
	return c.seq
}

// next returns the first message (seen before, or read now) that match
// accepts.
func (c *client) next(what string, match func(godap.Message) bool) godap.Message {
	c.t.Helper()
	for i, m := range c.seen {
		if match(m) {
			c.seen = append(c.seen[:i], c.seen[i+1:]...)
			return m
		}
	}
	deadline := time.After(wait)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.t.Fatalf("fred dap ended while waiting for %s", what)
			}
			if match(m) {
				return m
			}
			c.seen = append(c.seen, m)
		case <-deadline:
			c.t.Fatalf("no %s in %v; read meanwhile: %s", what, wait, c.describe())
		}
	}
}

func (c *client) describe() string {
	var parts []string
	for _, m := range c.seen {
		parts = append(parts, fmt.Sprintf("%T%+v", m, m))
	}
	return strings.Join(parts, "\n")
}

// do sends a request and returns its response, failing the test on an
// error response.
func (c *client) do(command string, args any) godap.ResponseMessage {
	c.t.Helper()
	r := c.request(command, args)
	if !r.GetResponse().Success {
		c.t.Fatalf("%s: %s", command, r.GetResponse().Message)
	}
	return r
}

func (c *client) request(command string, args any) godap.ResponseMessage {
	c.t.Helper()
	seq := c.send(command, args)
	return c.next("response to "+command, func(m godap.Message) bool {
		r, ok := m.(godap.ResponseMessage)
		return ok && r.GetResponse().RequestSeq == seq
	}).(godap.ResponseMessage)
}

// fails sends a request that must get an error response.
func (c *client) fails(command string, args any) {
	c.t.Helper()
	if r := c.request(command, args); r.GetResponse().Success {
		c.t.Errorf("%s %v succeeded: %+v\nread meanwhile: %s", command, args, r, c.describe())
	}
}

// raw sends bytes as one message's content.
func (c *client) raw(content []byte) {
	c.t.Helper()
	if err := godap.WriteBaseMessage(c.in, content); err != nil {
		c.t.Fatal(err)
	}
}

// top is the top frame.
func (c *client) top() godap.StackFrame {
	c.t.Helper()
	st := c.do("stackTrace", map[string]any{"threadId": 1}).(*godap.StackTraceResponse)
	if len(st.Body.StackFrames) == 0 {
		c.t.Fatal("no stack frames")
	}
	return st.Body.StackFrames[0]
}

func (c *client) event(name string) godap.EventMessage {
	c.t.Helper()
	return c.next(name+" event", func(m godap.Message) bool {
		e, ok := m.(godap.EventMessage)
		return ok && e.GetEvent().Event == name
	}).(godap.EventMessage)
}

// stoppedAt waits for the stopped event and returns the top frame.
func (c *client) stoppedAt(reason string) godap.StackFrame {
	c.t.Helper()
	ev := c.event("stopped").(*godap.StoppedEvent)
	if reason != "" && ev.Body.Reason != reason {
		c.t.Errorf("stopped for %q, want %q", ev.Body.Reason, reason)
	}
	return c.top()
}

func (c *client) eval(expr, context string) string {
	c.t.Helper()
	r := c.do("evaluate", map[string]any{"expression": expr, "context": context, "frameId": 0}).(*godap.EvaluateResponse)
	return r.Body.Result
}

// local is a variable of the top frame (frame 0: the reference is the
// frame's number plus one).
func (c *client) local(name string) string { c.t.Helper(); return c.localIn(0, name) }

func (c *client) localIn(frame int, name string) string {
	c.t.Helper()
	vs := c.do("variables", map[string]any{"variablesReference": frame + 1}).(*godap.VariablesResponse)
	for _, v := range vs.Body.Variables {
		if v.Name == name {
			return v.Value
		}
	}
	c.t.Fatalf("no local %s in %+v", name, vs.Body.Variables)
	return ""
}

// dapCase is one debugger on its watch fixture: update(i) is called for i
// = 0, 1, 2...; at its first line v is computed, two lines further (the
// bug's line skipped) data[i] is set, then the global sum (total) grows
// by v: 8 before update(3), 16 after.
type dapCase struct {
	name     string
	tools    []string
	program  func(t *testing.T) string
	source   string // under testdata
	line     int    // update's first line
	twoNexts int    // where two nexts from there go
	sumLine  int    // the line that adds v to the sum
	function string // update, as the stack names it
	local    string // i, as variables names it, in update and its caller
	i, sum   string // i and the sum as expressions
	cond     string // i >= 3
	console  string // a debugger command for the console, and what it shows
	shows    string
}

var dapCases = []dapCase{
	{"gdb", []string{"gdb", "gcc"}, func(t *testing.T) string { return testutil.Fixture(t, "watch") },
		"watch.c", 9, 12, 13, "update", "i", "i", "sum", "i >= 3", "-exec info breakpoints", "watch.c:9"},
	{"pdb", []string{"python3"}, func(*testing.T) string { return filepath.Join(testutil.Root(), "testdata", "watch.py") },
		"watch.py", 8, 11, 12, "update", "i", "i", "total", "i >= 3", "-exec where", "update()"},
	{"perl", []string{"perl"}, func(*testing.T) string { return filepath.Join(testutil.Root(), "testdata", "watch.pl") },
		"watch.pl", 10, 12, 13, "main::update", "$i", "$i", "$total", "$i >= 3", "-exec T", "called from file"},
}

// The editor's session in each debugger: a conditional breakpoint, steps
// forward, steps back and a reverse continue land where fred's reverse
// commands would, with the values of then; fred-reverse-watch runs in the
// console and lands on the last change; the debugger's own commands run
// there after -exec; bad requests get error responses and the adapter
// serves on; the program's end is told; nothing is left running after
// disconnect.
func TestDAP(t *testing.T) {
	for _, tc := range dapCases {
		t.Run(tc.name, func(t *testing.T) {
			testutil.Require(t, tc.tools...)
			prog := tc.program(t)
			src := filepath.Join(testutil.Root(), "testdata", tc.source)
			c := startDAP(t)
			init := c.do("initialize", map[string]any{"adapterID": "fred"}).(*godap.InitializeResponse)
			if !init.Body.SupportsStepBack || !init.Body.SupportsConfigurationDoneRequest {
				t.Fatalf("capabilities: %+v", init.Body)
			}
			c.do("launch", map[string]any{"program": prog})
			c.event("initialized")
			bp := c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src},
				"breakpoints": []map[string]any{{"line": tc.line, "condition": tc.cond}}}).(*godap.SetBreakpointsResponse)
			if len(bp.Body.Breakpoints) != 1 || !bp.Body.Breakpoints[0].Verified {
				t.Fatalf("breakpoint: %+v", bp.Body.Breakpoints)
			}
			c.do("configurationDone", nil)
			at := func(what string, line int, i string) {
				t.Helper()
				f := c.stoppedAt("")
				if f.Line != line || f.Source == nil || f.Source.Path != src {
					t.Fatalf("%s: at %+v (source %+v), want line %d", what, f, f.Source, line)
				}
				if v := c.eval(tc.i, "watch"); v != i {
					t.Fatalf("%s: %s = %s, want %s", what, tc.i, v, i)
				}
			}
			at("first stop", tc.line, "3")
			if f := c.top(); f.Name != tc.function {
				t.Errorf("first stop in %q, want %q", f.Name, tc.function)
			}
			c.do("continue", map[string]any{"threadId": 1})
			at("second stop", tc.line, "4")
			if v := c.local(tc.local); v != "4" {
				t.Errorf("variables: %s = %s, want 4", tc.local, v)
			}
			if v := c.localIn(1, tc.local); v != "4" {
				t.Errorf("the caller's variables: %s = %s, want 4", tc.local, v)
			}
			c.do("next", map[string]any{"threadId": 1})
			c.stoppedAt("step")
			c.do("next", map[string]any{"threadId": 1})
			at("two nexts", tc.twoNexts, "4")
			c.do("stepBack", map[string]any{"threadId": 1})
			c.stoppedAt("step")
			c.do("stepBack", map[string]any{"threadId": 1})
			at("two steps back", tc.line, "4")
			// fred-reverse-watch in the console: the sum last changed in
			// update(3), from 8 to 16.
			if out := c.eval("fred-reverse-watch "+tc.sum, "repl"); !strings.Contains(out, "the next step makes it 16") {
				t.Errorf("fred-reverse-watch in the console:\n%s", out)
			}
			at("after fred-reverse-watch", tc.sumLine, "3")
			if v := c.eval(tc.sum, "watch"); v != "8" {
				t.Errorf("after fred-reverse-watch %s = %s, want 8", tc.sum, v)
			}
			c.do("reverseContinue", map[string]any{"threadId": 1})
			at("reverseContinue", tc.line, "3")
			if out := c.eval("fred-history", "repl"); !strings.Contains(out, "you are here") {
				t.Errorf("fred-history in the console:\n%s", out)
			}
			c.stoppedAt("")
			if out := c.eval(tc.console, "repl"); !strings.Contains(out, tc.shows) {
				t.Errorf("%s:\n%s", tc.console, out)
			}
			// Bad requests: an error response each, and the adapter serves on.
			if tc.name != "perl" { // perl -d prints nothing for an unknown name
				c.fails("evaluate", map[string]any{"expression": "no_such_name", "context": "watch"})
				c.fails("evaluate", map[string]any{"expression": "1 +* (", "context": "watch"})
			}
			c.fails("noSuchRequest", nil)
			c.raw([]byte(`{"seq": 99, "type": "request", "command": `))
			c.next("an error response to a malformed message", func(m godap.Message) bool {
				r, ok := m.(*godap.ErrorResponse)
				return ok && !r.Success
			})
			if v := c.eval(tc.i, "watch"); v != "3" {
				t.Fatalf("after the bad requests: %s = %s, want 3", tc.i, v)
			}
			// To the end: the editor hears that the program exited.
			pids := sessionPids(t, c.cmd.Process.Pid)
			c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": []map[string]any{}})
			c.do("continue", map[string]any{"threadId": 1})
			c.event("exited")
			c.event("terminated")
			c.do("disconnect", map[string]any{"terminateDebuggee": true})
			gone(t, pids)
		})
	}
}

// stepBack where there is nothing behind: an error response, and the
// program stays where it is. A client that goes away mid-session, or an
// editor that ends the adapter with SIGTERM: the adapter ends the
// debugger and the program, and exits.
func TestDAPNothingBehindAndClientGone(t *testing.T) {
	for _, tc := range dapCases {
		for _, ending := range []string{"client gone", "SIGTERM"} {
			t.Run(tc.name+"/"+ending, func(t *testing.T) {
				testutil.Require(t, tc.tools...)
				c := launchDAP(t, map[string]any{"program": tc.program(t), "stopOnEntry": true})
				c.do("configurationDone", nil)
				before := c.stoppedAt("entry")
				c.fails("stepBack", map[string]any{"threadId": 1})
				if f := c.top(); f.Line != before.Line {
					t.Errorf("after a refused stepBack at line %d, not %d", f.Line, before.Line)
				}
				pids := sessionPids(t, c.cmd.Process.Pid)
				if ending == "SIGTERM" {
					_ = c.cmd.Process.Signal(syscall.SIGTERM)
				} else {
					c.in.Close() // the editor is gone
				}
				done := make(chan struct{})
				go func() { _ = c.cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(wait):
					t.Fatalf("fred dap did not exit (%s)", ending)
				}
				gone(t, pids)
			})
		}
	}
}

// gone waits for the session's processes to go.
func gone(t *testing.T, pids []int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		left := 0
		for _, p := range pids {
			if proc.Alive(p) && syscall.Kill(p, 0) == nil {
				left++
			}
		}
		if left == 0 {
			return
		}
	}
	t.Errorf("processes left: %v", pids)
}

// sessionPids are fred dap's descendants (the debugger, the program).
func sessionPids(t *testing.T, root int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == root {
			continue
		}
		for p, n := pid, 0; p > 1 && n < 10; n++ {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			if err != nil {
				break
			}
			s := string(b)
			fs := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
			if len(fs) < 2 {
				break
			}
			fmt.Sscan(fs[1], &p)
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("fred dap %d has no processes of its own", root)
	}
	return out
}

// VS Code's own test client (npm's @vscode/debugadapter-testsupport,
// installed by make deps in internal/dap/js) drives fred dap through the
// same session in each debugger: editor_test.js.
func TestDAPWithVSCodeClient(t *testing.T) {
	testutil.Require(t, "node")
	js := filepath.Join(testutil.Root(), "internal", "dap", "js")
	if _, err := os.Stat(filepath.Join(js, "node_modules", "@vscode", "debugadapter-testsupport")); err != nil {
		t.Fatalf("VS Code's DebugClient is not installed in %s: run make deps", js)
	}
	for _, tc := range dapCases {
		t.Run(tc.name, func(t *testing.T) {
			testutil.Require(t, tc.tools...)
			src := filepath.Join(testutil.Root(), "testdata", tc.source)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "editor_test.js", testutil.Fred(t), tc.program(t), src,
				fmt.Sprint(tc.line), fmt.Sprint(tc.twoNexts), fmt.Sprint(tc.sumLine), tc.cond, tc.i, tc.sum)
			cmd.Dir = js
			cmd.WaitDelay = 10 * time.Second // a stuck adapter holding node's pipes
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// A hit count: the breakpoint stops from its Nth hit on (gdb's and pdb's
// ignore counts); perl -d has none, and says so.
func TestDAPHitCount(t *testing.T) {
	for _, tc := range dapCases {
		t.Run(tc.name, func(t *testing.T) {
			testutil.Require(t, tc.tools...)
			src := filepath.Join(testutil.Root(), "testdata", tc.source)
			c := launchDAP(t, map[string]any{"program": tc.program(t)})
			bp := c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src},
				"breakpoints": []map[string]any{{"line": tc.line, "hitCondition": "3"}}}).(*godap.SetBreakpointsResponse)
			if tc.name == "perl" {
				if b := bp.Body.Breakpoints[0]; b.Verified || b.Message == "" {
					t.Fatalf("perl -d has no hit counts, but: %+v", b)
				}
				return
			}
			c.do("configurationDone", nil)
			c.stoppedAt("breakpoint")
			if v := c.eval(tc.i, "watch"); v != "2" {
				t.Fatalf("the third hit has %s = %s, want 2", tc.i, v)
			}
			c.do("disconnect", nil)
		})
	}
}

// attach: gdb takes a program that runs already, stops it, and reverse
// commands work from there.
func TestDAPAttach(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	prog := exec.Command(testutil.Fixture(t, "spin"))
	if err := prog.Start(); err != nil {
		t.Fatal(err)
	}
	// A cleanup, not a defer: it must run after fred's (cleanups run last
	// first), for a program gdb still traces is not the test's to reap.
	t.Cleanup(func() { _ = prog.Process.Kill(); _ = prog.Wait() })
	time.Sleep(200 * time.Millisecond)
	c := startDAP(t)
	c.do("initialize", map[string]any{"adapterID": "fred"})
	c.do("attach", map[string]any{"pid": fmt.Sprint(prog.Process.Pid), "stopOnEntry": true}) // as VS Code's process picker gives it
	c.event("initialized")
	c.do("configurationDone", nil)
	f := c.stoppedAt("pause")
	// Now and then gdb stops spin in its usleep, inside the C library
	// (whose lines libc6-dbg gives): out of it to main, as a person would.
	for i := 0; i < 5 && f.Name != "main"; i++ {
		c.do("stepOut", map[string]any{"threadId": 1})
		f = c.stoppedAt("step")
	}
	if f.Name != "main" || f.Source == nil || filepath.Base(f.Source.Path) != "spin.c" {
		t.Fatalf("attached at %+v", f)
	}
	c.do("next", map[string]any{"threadId": 1})
	c.stoppedAt("step")
	before := c.eval("counter", "watch")
	c.do("next", map[string]any{"threadId": 1})
	c.stoppedAt("step")
	c.do("stepBack", map[string]any{"threadId": 1})
	c.stoppedAt("step")
	if v := c.eval("counter", "watch"); v != before {
		t.Errorf("after stepBack counter = %s, want %s", v, before)
	}
	pids := sessionPids(t, c.cmd.Process.Pid)
	c.do("disconnect", map[string]any{"terminateDebuggee": true})
	gone(t, pids)

	// No such process: an error response, and the adapter serves on.
	c = startDAP(t)
	c.do("initialize", map[string]any{"adapterID": "fred"})
	c.fails("attach", map[string]any{"pid": 1 << 30})
	c.do("threads", nil)
}

// A struct in gdb: hover shows it, and the editor expands it into its
// fields (nested aggregates: TestMembers).
func TestDAPStructuredValues(t *testing.T) {
	c := gdbAtBreakpoint(t, "accounts", 67)
	r := c.do("evaluate", map[string]any{"expression": "*accounts", "context": "hover"}).(*godap.EvaluateResponse)
	if r.Body.VariablesReference == 0 {
		t.Fatalf("*accounts (%s) cannot be expanded", r.Body.Result)
	}
	fields := map[string]godap.Variable{}
	for _, v := range c.do("variables", map[string]any{"variablesReference": r.Body.VariablesReference}).(*godap.VariablesResponse).Body.Variables {
		fields[v.Name] = v
	}
	if fields["id"].Value != "99" || fields["balance"].Value == "" || fields["next"].Value == "" {
		t.Fatalf("the fields of *accounts: %+v", fields)
	}
	if v := c.eval("accounts->id", "watch"); v != "99" {
		t.Errorf("accounts->id = %s, want 99", v)
	}
	c.do("disconnect", nil)
}

// The caller's frame, selected in the editor's call stack: hover and the
// variables are that frame's (gdb).
func TestDAPCallerFrame(t *testing.T) {
	c := gdbAtBreakpoint(t, "steps", 8)
	c.do("continue", map[string]any{"threadId": 1})
	c.stoppedAt("breakpoint")
	r := c.do("evaluate", map[string]any{"expression": "i", "context": "hover", "frameId": 1}).(*godap.EvaluateResponse)
	if r.Body.Result != "1" {
		t.Errorf("main's i in frame 1 = %q, want 1", r.Body.Result)
	}
	c.fails("evaluate", map[string]any{"expression": "i", "context": "hover", "frameId": 0}) // square has no i
	vs := c.do("variables", map[string]any{"variablesReference": 2}).(*godap.VariablesResponse)
	found := false
	for _, v := range vs.Body.Variables {
		found = found || v.Name == "i" && v.Value == "1"
	}
	if !found {
		t.Errorf("frame 1's variables: %+v", vs.Body.Variables)
	}
	if v := c.eval("x", "watch"); v != "1" {
		t.Errorf("back in frame 0, x = %s, want 1", v)
	}
	c.do("disconnect", nil)
}

// launchDAP starts fred dap and launches a program with args, as an
// editor does up to its initialized event.
func launchDAP(t *testing.T, args map[string]any) *client {
	t.Helper()
	c := startDAP(t)
	c.do("initialize", map[string]any{"adapterID": "fred"})
	c.do("launch", args)
	c.event("initialized")
	return c
}

// gdbAtBreakpoint launches a gdb fixture under fred dap with a breakpoint
// at line of its source, and waits for the first hit.
func gdbAtBreakpoint(t *testing.T, fixture string, line int) *client {
	t.Helper()
	testutil.Require(t, "gdb", "gcc")
	src := filepath.Join(testutil.Root(), "testdata", fixture+".c")
	c := launchDAP(t, map[string]any{"program": testutil.Fixture(t, fixture)})
	c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": []map[string]any{{"line": line}}})
	c.do("configurationDone", nil)
	c.stoppedAt("breakpoint")
	return c
}

// Function breakpoints: a new set replaces the one before, so with none
// left the program runs to its end.
func TestDAPFunctionBreakpoints(t *testing.T) {
	for _, tc := range dapCases {
		t.Run(tc.name, func(t *testing.T) {
			testutil.Require(t, tc.tools...)
			c := launchDAP(t, map[string]any{"program": tc.program(t)})
			set := func(names ...string) []godap.Breakpoint {
				var bs []map[string]any
				for _, n := range names {
					bs = append(bs, map[string]any{"name": n})
				}
				return c.do("setFunctionBreakpoints", map[string]any{"breakpoints": bs}).(*godap.SetFunctionBreakpointsResponse).Body.Breakpoints
			}
			if bs := set("update", "no_such_function"); len(bs) != 2 || !bs[0].Verified || bs[1].Verified || bs[1].Message == "" {
				t.Fatalf("function breakpoints: %+v", bs)
			}
			c.do("configurationDone", nil)
			if f := c.stoppedAt("breakpoint"); f.Name != tc.function {
				t.Fatalf("stopped at %+v, want in %s", f, tc.function)
			}
			set()
			c.do("continue", map[string]any{"threadId": 1})
			c.event("exited")
			c.do("disconnect", nil)
		})
	}
}

// Breakpoints the editor sets while the program runs, by line and by
// function, are placed when it stops (a pause here), and breakpoint
// events say so; the next continue stops there.
func TestDAPBreakpointsWhileRunning(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	src := filepath.Join(testutil.Root(), "testdata", "spin.c")
	c := launchDAP(t, map[string]any{"program": testutil.Fixture(t, "spin")})
	c.do("configurationDone", nil)
	c.next("the program's output", func(m godap.Message) bool { // it runs
		o, ok := m.(*godap.OutputEvent)
		return ok && strings.Contains(o.Body.Output, "spinning")
	})
	bp := c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src},
		"breakpoints": []map[string]any{{"line": 13}}}).(*godap.SetBreakpointsResponse).Body.Breakpoints
	if len(bp) != 1 || bp[0].Verified || bp[0].Id == 0 {
		t.Fatalf("a breakpoint set while the program runs: %+v", bp)
	}
	fb := c.do("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "main"}}}).(*godap.SetFunctionBreakpointsResponse).Body.Breakpoints
	if len(fb) != 1 || fb[0].Verified || fb[0].Id == 0 || fb[0].Id == bp[0].Id {
		t.Fatalf("a function breakpoint set while the program runs: %+v", fb)
	}
	c.do("pause", map[string]any{"threadId": 1})
	ev := c.event("breakpoint").(*godap.BreakpointEvent)
	if b := ev.Body.Breakpoint; b.Id != bp[0].Id || !b.Verified || b.Line != 13 {
		t.Fatalf("breakpoint event: %+v", b)
	}
	ev = c.event("breakpoint").(*godap.BreakpointEvent)
	if b := ev.Body.Breakpoint; b.Id != fb[0].Id || !b.Verified {
		t.Fatalf("function breakpoint event: %+v", b)
	}
	c.stoppedAt("pause")
	c.do("continue", map[string]any{"threadId": 1})
	if f := c.stoppedAt("breakpoint"); f.Line != 13 {
		t.Fatalf("stopped at %+v, want spin.c:13", f)
	}
	c.do("disconnect", nil)
}

// A multi-threaded program under gdb: the editor sees every thread, the
// stopped event names the one that hit the breakpoint, and another
// thread's stack is its top frame.
func TestDAPThreads(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	src := filepath.Join(testutil.Root(), "testdata", "mt_sum.c")
	c := launchDAP(t, map[string]any{"program": testutil.Fixture(t, "mt_sum")})
	c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": []map[string]any{{"line": 39}}})
	c.do("configurationDone", nil)
	ev := c.event("stopped").(*godap.StoppedEvent)
	ts := c.do("threads", nil).(*godap.ThreadsResponse).Body.Threads
	if len(ts) < 2 {
		t.Fatalf("threads: %+v", ts)
	}
	stopped := false
	for _, th := range ts {
		st := c.do("stackTrace", map[string]any{"threadId": th.Id}).(*godap.StackTraceResponse).Body.StackFrames
		if len(st) == 0 {
			t.Fatalf("thread %+v: no frames", th)
		}
		if th.Id == ev.Body.ThreadId {
			stopped = true
			if st[0].Name != "put" || st[0].Line != 39 || len(st) < 2 || st[1].Name != "mover" {
				t.Errorf("the stopped thread %+v: %+v", th, st)
			}
		} else if len(st) != 1 {
			t.Errorf("thread %+v: %d frames, want its top one", th, len(st))
		} else if sc := c.do("scopes", map[string]any{"frameId": st[0].Id}).(*godap.ScopesResponse); st[0].Id == 0 || len(sc.Body.Scopes) != 0 {
			t.Errorf("thread %+v: frame id %d, scopes %+v (another thread's frame has none)", th, st[0].Id, sc.Body.Scopes)
		}
	}
	if !stopped {
		t.Errorf("the stopped event's thread %d is not among %+v", ev.Body.ThreadId, ts)
	}
	// A page of frames: the editor asks for the rest after the first.
	all := c.do("stackTrace", map[string]any{"threadId": ev.Body.ThreadId}).(*godap.StackTraceResponse)
	page := c.do("stackTrace", map[string]any{"threadId": ev.Body.ThreadId, "startFrame": 1, "levels": 1}).(*godap.StackTraceResponse)
	if p := page.Body.StackFrames; len(p) != 1 || p[0].Id != 1 || p[0].Name != all.Body.StackFrames[1].Name || page.Body.TotalFrames != all.Body.TotalFrames {
		t.Errorf("frames 1 to 1: %+v, of %+v", page.Body, all.Body)
	}
	c.do("disconnect", nil)
}

// fred dap --listen serves one client over TCP; a SIGTERM while it waits
// for one ends it.
func TestDAPListen(t *testing.T) {
	for _, client := range []bool{true, false} {
		cmd := exec.Command(testutil.Fred(t), "dap", "--listen", "127.0.0.1:0")
		errs, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(errs).ReadString('\n')
		addr := strings.TrimSpace(strings.TrimPrefix(line, "fred dap: listening on "))
		if err != nil || addr == strings.TrimSpace(line) {
			t.Fatalf("fred dap --listen said %q (%v)", line, err)
		}
		if client {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(map[string]any{"seq": 1, "type": "request", "command": "initialize", "arguments": map[string]any{"adapterID": "fred"}})
			if err := godap.WriteBaseMessage(conn, b); err != nil {
				t.Fatal(err)
			}
			m, err := godap.ReadProtocolMessage(bufio.NewReader(conn))
			if r, ok := m.(*godap.InitializeResponse); err != nil || !ok || !r.Body.SupportsStepBack {
				t.Fatalf("over TCP, initialize: %+v (%v)", m, err)
			}
			conn.Close() // the client goes: the adapter ends
		} else {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("client %v: fred dap --listen ended with %v", client, err)
			}
		case <-time.After(wait):
			_ = cmd.Process.Kill()
			t.Fatalf("client %v: fred dap --listen did not end", client)
		}
	}
}

// docs/editors.md as written: the VS Code extension's adapter is `fred
// dap`, each launch.json configuration, its ${...} filled in as VS Code
// does, starts its program and runs it to the end (the attach one takes a
// running program), and nvim-dap's adapter entry is the same command.
func TestEditorsDocConfigurations(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "python3", "perl")
	doc, err := os.ReadFile(filepath.Join(testutil.Root(), "docs", "editors.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```(json|lua)\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	var manifest struct {
		Contributes struct {
			Debuggers []struct {
				Type    string   `json:"type"`
				Program string   `json:"program"`
				Args    []string `json:"args"`
			} `json:"debuggers"`
		} `json:"contributes"`
	}
	var launch struct {
		Configurations []map[string]any `json:"configurations"`
	}
	var lua string
	for _, b := range blocks {
		switch {
		case b[1] == "lua":
			lua = b[2]
		case strings.Contains(b[2], `"contributes"`):
			if err := json.Unmarshal([]byte(b[2]), &manifest); err != nil {
				t.Fatalf("the extension manifest: %v", err)
			}
		case strings.Contains(b[2], `"configurations"`):
			if err := json.Unmarshal([]byte(b[2]), &launch); err != nil {
				t.Fatalf("launch.json: %v", err)
			}
		}
	}
	if ds := manifest.Contributes.Debuggers; len(ds) != 1 || ds[0].Type != "fred" || filepath.Base(ds[0].Program) != "fred" || fmt.Sprint(ds[0].Args) != "[dap]" {
		t.Fatalf("the extension's debugger: %+v", ds)
	}
	if m := regexp.MustCompile(`adapters\.fred = \{ type = 'executable', command = 'fred', args = \{ 'dap' \} \}`).FindString(lua); m == "" {
		t.Errorf("nvim-dap's adapter is not `fred dap`:\n%s", lua)
	}
	if len(launch.Configurations) != 4 {
		t.Fatalf("launch.json: %d configurations", len(launch.Configurations))
	}
	testutil.Fixture(t, "watch")
	for _, conf := range launch.Configurations {
		t.Run(fmt.Sprint(conf["name"]), func(t *testing.T) {
			if conf["type"] != "fred" {
				t.Fatalf("type %v", conf["type"])
			}
			args := map[string]any{}
			var spin *exec.Cmd
			for k, v := range conf {
				if s, ok := v.(string); ok {
					s = strings.ReplaceAll(s, "${workspaceFolder}", testutil.Root())
					if s == "${command:pickProcess}" {
						spin = exec.Command(testutil.Fixture(t, "spin"))
						if err := spin.Start(); err != nil {
							t.Fatal(err)
						}
						// After fred dap's own cleanup (registered later, run
						// first): a program gdb still traced would not be
						// reaped.
						t.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
						s = fmt.Sprint(spin.Process.Pid)
					}
					v = s
				}
				args[k] = v
			}
			if p, ok := args["program"].(string); ok {
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("%v (make builds testdata/bin)", err)
				}
			}
			c := startDAP(t)
			c.do("initialize", map[string]any{"adapterID": "fred"})
			c.do(fmt.Sprint(conf["request"]), args)
			c.event("initialized")
			c.do("configurationDone", nil)
			if spin != nil {
				c.do("pause", map[string]any{"threadId": 1})
				// spin sleeps a millisecond now and then: the pause may
				// stop it there.
				if f := c.stoppedAt("pause"); (f.Source == nil || filepath.Base(f.Source.Path) != "spin.c") && !strings.Contains(f.Name, "sleep") {
					t.Errorf("attached, paused at %+v", f)
				}
				c.do("disconnect", nil) // detaches: the program goes on
				return
			}
			c.event("exited")
			c.do("disconnect", nil)
		})
	}
}
