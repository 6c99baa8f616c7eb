package dap

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
	st := c.do("stackTrace", map[string]any{"threadId": 1}).(*godap.StackTraceResponse)
	if len(st.Body.StackFrames) == 0 {
		c.t.Fatal("no stack frames at a stop")
	}
	return st.Body.StackFrames[0]
}

func (c *client) eval(expr, context string) string {
	c.t.Helper()
	r := c.do("evaluate", map[string]any{"expression": expr, "context": context, "frameId": 0}).(*godap.EvaluateResponse)
	return r.Body.Result
}

func (c *client) local(name string) string {
	c.t.Helper()
	vs := c.do("variables", map[string]any{"variablesReference": 1}).(*godap.VariablesResponse)
	for _, v := range vs.Body.Variables {
		if v.Name == name {
			return v.Value
		}
	}
	c.t.Fatalf("no local %s in %+v", name, vs.Body.Variables)
	return ""
}

type dapCase struct {
	name      string
	tools     []string
	program   func(t *testing.T) string
	source    string // under testdata
	line      int    // the breakpoint's, in a function called in a loop
	next      int    // the line after it
	function  string // the breakpoint's function, as the stack names it
	variable  string // a local that is 0 at the first hit, 1 at the second
	evaluated string // the same, as an expression
	console   string // a debugger command for the console, and what it shows
	shows     string
}

var dapCases = []dapCase{
	{"gdb", []string{"gdb", "gcc"}, func(t *testing.T) string { return testutil.Fixture(t, "steps") },
		"steps.c", 8, 9, "square", "x", "x", "-exec info breakpoints", "steps.c:8"},
	{"pdb", []string{"python3"}, func(*testing.T) string { return filepath.Join(testutil.Root(), "testdata", "watch.py") },
		"watch.py", 8, 9, "update", "i", "i", "-exec where", "update()"},
	{"perl", []string{"perl"}, func(*testing.T) string { return filepath.Join(testutil.Root(), "testdata", "watch.pl") },
		"watch.pl", 10, 11, "main::update", "", "$i", "-exec T", "called from file"},
}

// The editor's session in each debugger: a breakpoint, steps forward, a
// step back and a reverse continue land where fred's reverse commands
// would, with the values of then; fred's commands and the debugger's run
// in the console; nothing is left running after disconnect.
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
				"breakpoints": []map[string]any{{"line": tc.line}}}).(*godap.SetBreakpointsResponse)
			if len(bp.Body.Breakpoints) != 1 || !bp.Body.Breakpoints[0].Verified {
				t.Fatalf("breakpoint: %+v", bp.Body.Breakpoints)
			}
			c.do("configurationDone", nil)
			if f := c.stoppedAt(""); f.Name != tc.function || f.Line != tc.line || f.Source == nil || f.Source.Path != src {
				t.Fatalf("first stop: %+v (source %+v)", f, f.Source)
			}
			if tc.variable != "" {
				if v := c.local(tc.variable); v != "0" {
					t.Errorf("%s = %s at the first hit, want 0", tc.variable, v)
				}
			}
			c.do("continue", map[string]any{"threadId": 1})
			if f := c.stoppedAt(""); f.Line != tc.line {
				t.Fatalf("second stop: %+v", f)
			}
			if v := c.eval(tc.evaluated, "hover"); v != "1" {
				t.Errorf("%s = %s at the second hit, want 1", tc.evaluated, v)
			}
			c.do("next", map[string]any{"threadId": 1})
			if f := c.stoppedAt("step"); f.Line != tc.next {
				t.Fatalf("after next: %+v", f)
			}
			c.do("stepBack", map[string]any{"threadId": 1})
			if f := c.stoppedAt("step"); f.Line != tc.line || c.eval(tc.evaluated, "watch") != "1" {
				t.Fatalf("after stepBack: %+v, %s = %s", f, tc.evaluated, c.eval(tc.evaluated, "watch"))
			}
			c.do("reverseContinue", map[string]any{"threadId": 1})
			if f := c.stoppedAt(""); f.Line != tc.line || c.eval(tc.evaluated, "watch") != "0" {
				t.Fatalf("after reverseContinue: %+v, %s = %s", f, tc.evaluated, c.eval(tc.evaluated, "watch"))
			}
			// The console: fred's own commands, and the debugger's after -exec.
			if out := c.eval("fred-history", "repl"); !strings.Contains(out, "you are here") {
				t.Errorf("fred-history in the console:\n%s", out)
			}
			c.stoppedAt("")
			if out := c.eval(tc.console, "repl"); !strings.Contains(out, tc.shows) {
				t.Errorf("%s:\n%s", tc.console, out)
			}
			if tc.name != "perl" { // perl -d prints nothing for an unknown name
				if r := c.request("evaluate", map[string]any{"expression": "no_such_name", "context": "watch"}); r.GetResponse().Success {
					t.Errorf("an unknown name evaluated: %+v", r)
				}
			}
			// To the end: the editor hears that the program exited.
			pids := sessionPids(t, c.cmd.Process.Pid)
			c.do("setBreakpoints", map[string]any{"source": map[string]any{"path": src}, "breakpoints": []map[string]any{}})
			c.do("continue", map[string]any{"threadId": 1})
			c.event("exited")
			c.event("terminated")
			c.do("disconnect", map[string]any{"terminateDebuggee": true})
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
			t.Errorf("processes left after disconnect: %v", pids)
		})
	}
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
