// Package dap is `fred dap`: fred behind the Debug Adapter Protocol, so
// that an editor that speaks it (VS Code, Neovim's nvim-dap, Emacs' dape)
// steps back at line level in gdb, pdb and perl: `stepBack` is
// fred-reverse-next, `reverseContinue` fred-reverse-continue, and in the
// debug console fred's own commands run as typed (fred-reverse-watch,
// fred-history...). The adapter drives a fred.Session as a person at the
// terminal would: each request becomes the debugger's own command.
package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	godap "github.com/google/go-dap"

	"github.com/fred-debugger/fred/fred"
	P "github.com/fred-debugger/fred/personalities"
)

// Options are fred's own flags that apply to every launch.
type Options struct {
	Timeout   time.Duration
	Snapshots string
}

// Serve speaks the protocol on in and out until the client disconnects,
// in ends or ctx is done (fred got a SIGTERM); the debugger and the
// program are gone when it returns.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opt Options) error {
	a := &adapter{opt: opt, r: bufio.NewReader(in), w: out, bps: map[string][]placed{},
		work: make(chan func(), 16)}
	go a.worker()
	defer a.close()
	type read struct {
		content []byte
		err     error
	}
	reads := make(chan read)
	go func() {
		for {
			c, err := godap.ReadBaseMessage(a.r)
			select {
			case reads <- read{c, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var r read
		select {
		case r = <-reads:
		case <-ctx.Done():
			return nil
		}
		content, err := r.content, r.err
		if err != nil {
			// The client is gone, or its framing is: nothing more can be
			// read. The deferred close ends the debugger and the program.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
		msg, err := godap.DecodeProtocolMessage(content)
		if err != nil {
			// A message fred cannot read: say so and go on serving.
			var fe *godap.DecodeProtocolMessageFieldError
			if errors.As(err, &fe) {
				a.fail(fe.Seq, fe.SubType, fmt.Errorf("%s: not a request fred dap knows (%v)", fe.SubType, err))
			} else {
				a.fail(0, "", fmt.Errorf("a message fred dap cannot read: %v", err))
			}
			continue
		}
		if a.handle(msg) {
			return nil
		}
	}
}

type adapter struct {
	opt Options
	r   *bufio.Reader
	w   io.Writer
	wmu sync.Mutex
	seq int

	sess *fred.Session
	dbg  *debugger
	args launchArgs

	mu         sync.Mutex
	busy       bool             // a command that moves the program runs
	capture    *strings.Builder // collects the debugger's output meanwhile
	quiet      bool             // and shows none of it (the console's commands)
	ended      bool             // the program is gone: exited and terminated said
	configured bool             // configurationDone came
	bps        map[string][]placed
	funcs      []placed // the function breakpoints
	lastID     int      // the editor's breakpoint ids are the adapter's own
	// pending are the breakpoints the editor set while the program ran:
	// the debugger takes them when it stops next (breakpoint events then
	// tell the editor).
	pending map[string]pendingSet
	// pendingFuncs are the function breakpoints set meanwhile (nil: none).
	pendingFuncs *pendingFuncs
	// threads are the debugger's threads at the last stop (gdb), each
	// with its top frame; current is the one it stands in.
	threads []godap.Thread
	tops    map[int]frame
	current int
	// refs are the members of the aggregate values shown since the last
	// stop, by variablesReference (from firstRef on; below it, a frame's
	// locals: frame+1).
	refs map[int][]child

	work      chan func() // commands that move the program, one at a time
	closeOnce sync.Once
}

// placed is a breakpoint the debugger holds: where, and its number
// there (0: the debugger numbers none).
type placed struct {
	file      string
	line, num int
}

type pendingSet struct {
	args godap.SetBreakpointsArguments
	ids  []int
}

type pendingFuncs struct {
	fbs []godap.FunctionBreakpoint
	ids []int
}

// launchArgs are the launch request's arguments (the protocol leaves them
// to each adapter).
type launchArgs struct {
	Program     string            `json:"program"`
	Args        []string          `json:"args"`
	Cwd         string            `json:"cwd"`
	Env         map[string]string `json:"env"`
	Debugger    string            `json:"debugger"`
	StopOnEntry bool              `json:"stopOnEntry"`
	Snapshots   string            `json:"snapshots"`
	Pid         pidArg            `json:"pid"` // attach: the running program (gdb)
}

// pidArg is a pid given as a number or, as VS Code's process picker
// gives it, a string.
type pidArg int

func (p *pidArg) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*p = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("pid %s: not a number", b)
	}
	*p = pidArg(n)
	return nil
}

// handle answers one message; true when the session is over.
func (a *adapter) handle(msg godap.Message) bool {
	switch r := msg.(type) {
	case *godap.InitializeRequest:
		resp := &godap.InitializeResponse{Response: a.response(&r.Request)}
		resp.Body = godap.Capabilities{
			SupportsConfigurationDoneRequest:  true,
			SupportsConditionalBreakpoints:    true,
			SupportsFunctionBreakpoints:       true,
			SupportsEvaluateForHovers:         true,
			SupportsStepBack:                  true,
			SupportsTerminateRequest:          true,
			SupportsHitConditionalBreakpoints: true,
		}
		a.send(resp)
	case *godap.LaunchRequest:
		if err := a.launch(r.Arguments, false); err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		a.send(&godap.LaunchResponse{Response: a.response(&r.Request)})
		a.event(&godap.InitializedEvent{Event: a.newEvent("initialized")})
	case *godap.AttachRequest:
		if err := a.launch(r.Arguments, true); err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		a.send(&godap.AttachResponse{Response: a.response(&r.Request)})
		a.event(&godap.InitializedEvent{Event: a.newEvent("initialized")})
	case *godap.SetBreakpointsRequest:
		if a.sess != nil && a.running() {
			a.send(a.later(r))
			return false
		}
		bps, err := a.setBreakpoints(r.Arguments, nil, a.quietExec)
		if err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		resp := &godap.SetBreakpointsResponse{Response: a.response(&r.Request)}
		resp.Body.Breakpoints = bps
		a.send(resp)
	case *godap.SetFunctionBreakpointsRequest:
		if a.sess != nil && a.running() {
			a.send(a.funcsLater(r))
			return false
		}
		if err := a.ready(); err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		bps, err := a.setFunctionBreakpoints(r.Arguments.Breakpoints, nil, a.quietExec)
		if err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		resp := &godap.SetFunctionBreakpointsResponse{Response: a.response(&r.Request)}
		resp.Body.Breakpoints = bps
		a.send(resp)
	case *godap.SetExceptionBreakpointsRequest:
		a.send(&godap.SetExceptionBreakpointsResponse{Response: a.response(&r.Request)})
	case *godap.ConfigurationDoneRequest:
		if err := a.ready(); err != nil || a.configured {
			if err == nil {
				err = errors.New("configured already")
			}
			a.fail(r.Seq, r.Command, err)
			return false
		}
		a.configured = true
		a.send(&godap.ConfigurationDoneResponse{Response: a.response(&r.Request)})
		switch {
		case a.args.Pid != 0 && a.args.StopOnEntry:
			a.stopped("pause") // attached: gdb stopped it where it was
		case a.args.Pid != 0:
			a.move(a.dbg.cont, "breakpoint")
		case a.dbg.start == "" && a.args.StopOnEntry:
			a.stopped("entry")
		case a.args.StopOnEntry:
			a.move(a.dbg.start, "entry")
		default:
			a.move(a.dbg.run, "breakpoint")
		}
	case *godap.ContinueRequest:
		resp := &godap.ContinueResponse{Response: a.response(&r.Request)}
		resp.Body.AllThreadsContinued = true
		a.moveAfter(resp, a.dbg.cont, "breakpoint")
	case *godap.NextRequest:
		a.moveAfter(&godap.NextResponse{Response: a.response(&r.Request)}, a.dbg.next, "step")
	case *godap.StepInRequest:
		a.moveAfter(&godap.StepInResponse{Response: a.response(&r.Request)}, a.dbg.step, "step")
	case *godap.StepOutRequest:
		a.moveAfter(&godap.StepOutResponse{Response: a.response(&r.Request)}, a.dbg.fini, "step")
	case *godap.StepBackRequest:
		cmd := "fred-reverse-next"
		if r.Arguments.Granularity == "instruction" {
			cmd = "fred-reverse-stepi"
		}
		a.reverse(&godap.StepBackResponse{Response: a.response(&r.Request)}, cmd, "step")
	case *godap.ReverseContinueRequest:
		a.reverse(&godap.ReverseContinueResponse{Response: a.response(&r.Request)}, "fred-reverse-continue", "breakpoint")
	case *godap.PauseRequest:
		// The response first: the stopped event that the interrupt brings
		// must come after it.
		a.send(&godap.PauseResponse{Response: a.response(&r.Request)})
		if a.sess != nil {
			go a.pause()
		}
	case *godap.ThreadsRequest:
		resp := &godap.ThreadsResponse{Response: a.response(&r.Request)}
		a.mu.Lock()
		resp.Body.Threads = append([]godap.Thread(nil), a.threads...)
		a.mu.Unlock()
		if len(resp.Body.Threads) == 0 {
			resp.Body.Threads = []godap.Thread{{Id: 1, Name: "main"}}
		}
		a.send(resp)
	case *godap.StackTraceRequest:
		frames, err := a.stack(r.Arguments.ThreadId)
		if err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		resp := &godap.StackTraceResponse{Response: a.response(&r.Request)}
		resp.Body.TotalFrames = len(frames)
		// The editor asks for the frames a page at a time.
		if from := r.Arguments.StartFrame; from > 0 {
			frames = frames[min(from, len(frames)):]
		}
		if n := r.Arguments.Levels; n > 0 && n < len(frames) {
			frames = frames[:n]
		}
		resp.Body.StackFrames = frames
		a.send(resp)
	case *godap.ScopesRequest:
		resp := &godap.ScopesResponse{Response: a.response(&r.Request)}
		resp.Body.Scopes = []godap.Scope{}
		if r.Arguments.FrameId < otherThreads {
			resp.Body.Scopes = append(resp.Body.Scopes, godap.Scope{Name: "Locals", PresentationHint: "locals", VariablesReference: r.Arguments.FrameId + 1})
		}
		a.send(resp)
	case *godap.VariablesRequest:
		vars, err := a.variables(r.Arguments.VariablesReference)
		if err != nil {
			a.fail(r.Seq, r.Command, err)
			return false
		}
		resp := &godap.VariablesResponse{Response: a.response(&r.Request)}
		resp.Body.Variables = vars
		a.send(resp)
	case *godap.EvaluateRequest:
		a.evaluate(r)
	case *godap.DisconnectRequest:
		if a.args.Pid != 0 && (r.Arguments == nil || !r.Arguments.TerminateDebuggee) && a.ready() == nil {
			// Attached: the program goes on without the debugger, as
			// gdb's detach leaves it.
			_, _ = a.quietExec("detach")
		}
		a.close()
		a.send(&godap.DisconnectResponse{Response: a.response(&r.Request)})
		return true
	case *godap.TerminateRequest:
		// The program ends; the adapter serves on until the client
		// disconnects.
		a.close()
		a.send(&godap.TerminateResponse{Response: a.response(&r.Request)})
		a.mu.Lock()
		gone := a.ended
		a.ended = true
		a.mu.Unlock()
		if !gone {
			a.terminated()
		}
	case godap.RequestMessage:
		req := r.GetRequest()
		a.fail(req.Seq, req.Command, fmt.Errorf("%s is not supported by fred dap", req.Command))
	}
	return false
}

// launch starts the debugger on the program, stopped before it runs; or,
// to attach, on the running program of args.Pid, which gdb then stops.
func (a *adapter) launch(raw json.RawMessage, attach bool) error {
	if a.sess != nil {
		return errors.New("launched already: one program a session")
	}
	if err := json.Unmarshal(raw, &a.args); err != nil {
		return fmt.Errorf("launch arguments: %w", err)
	}
	switch {
	case attach && a.args.Pid <= 0:
		return errors.New("attach: no pid")
	case attach && a.args.Debugger != "" && a.args.Debugger != "gdb":
		return fmt.Errorf("attach: gdb attaches to a running program; %s does not", a.args.Debugger)
	case attach:
		a.args.Debugger = "gdb"
	case a.args.Program == "":
		return errors.New("launch: no program")
	}
	if a.args.Cwd != "" {
		if err := os.Chdir(a.args.Cwd); err != nil {
			return fmt.Errorf("launch: cwd: %w", err)
		}
	}
	for k, v := range a.args.Env {
		os.Setenv(k, v)
	}
	name := a.args.Debugger
	if name == "" {
		name = debuggerFor(a.args.Program)
	}
	d, ok := debuggers[name]
	if !ok {
		return fmt.Errorf("launch: debugger %q: fred dap drives gdb, pdb and perl", name)
	}
	a.dbg = d
	argv := d.argv(a.args.Program, a.args.Args)
	if attach {
		argv = []string{"gdb", "-q"}
		if a.args.Program != "" {
			argv = append(argv, a.args.Program)
		}
	}
	p, err := P.ForArgv(argv)
	if err != nil {
		return err
	}
	snaps := a.args.Snapshots
	if snaps == "" {
		snaps = a.opt.Snapshots
	}
	s, err := fred.Start(fred.Options{Personality: p, Argv: argv, Out: outWriter{a}, Timeout: a.opt.Timeout,
		Batch: true, Snapshots: snaps})
	if err != nil {
		return err
	}
	a.sess = s
	if attach {
		out, err := a.quietExec(fmt.Sprintf("attach %d", a.args.Pid))
		if err == nil && !regexp.MustCompile(`(?m)^Attaching to`).MatchString(out) || strings.Contains(out, "ptrace:") {
			err = fmt.Errorf("attach %d: %s", a.args.Pid, lastLine(out))
		}
		if err != nil {
			_ = s.Close()
			a.sess = nil
			return err
		}
	}
	return nil
}

// debuggerFor picks the debugger by the program's name, or by its #! line
// (a script installed without its extension: /usr/bin/pod2text).
func debuggerFor(program string) string {
	switch filepath.Ext(program) {
	case ".py":
		return "pdb"
	case ".pl", ".pm":
		return "perl"
	}
	if f, err := os.Open(program); err == nil {
		defer f.Close()
		first, _ := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
		if strings.HasPrefix(first, "#!") {
			switch {
			case strings.Contains(first, "python"):
				return "pdb"
			case strings.Contains(first, "perl"):
				return "perl"
			}
		}
	}
	return "gdb"
}

// setBreakpoints makes the breakpoints of one source file the editor's:
// those placed before go, the new ones are placed with exec. ids are the
// editor's ids for them (nil: new ones).
func (a *adapter) setBreakpoints(args godap.SetBreakpointsArguments, ids []int, exec func(string) (string, error)) ([]godap.Breakpoint, error) {
	if a.sess == nil {
		return nil, errors.New("no program launched")
	}
	path := args.Source.Path
	if err := a.remove(a.bps[path], exec); err != nil {
		return nil, err
	}
	a.bps[path] = nil
	var out []godap.Breakpoint
	for i, sb := range args.Breakpoints {
		id := a.newID()
		if i < len(ids) {
			id = ids[i]
		}
		nth := 0
		if h := strings.TrimSpace(sb.HitCondition); h != "" {
			// A hit count: "N" (or ">= N"), stop from the Nth hit on.
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(h, ">=")))
			if err != nil || n < 1 || a.dbg.ignore == nil {
				why := fmt.Sprintf("hit count %q: a number N (stop from the Nth hit on)", h)
				if a.dbg.ignore == nil {
					why = "this debugger has no hit counts"
				}
				out = append(out, godap.Breakpoint{Id: id, Verified: false, Line: sb.Line, Message: why})
				continue
			}
			nth = n
		}
		text, err := exec(a.dbg.brk(path, sb.Line, sb.Condition))
		if err != nil {
			return nil, err
		}
		bp := godap.Breakpoint{Id: id, Line: sb.Line, Source: &godap.Source{Path: path, Name: filepath.Base(path)}}
		num, ok := a.placedAs(text)
		if bp.Verified = ok; !ok {
			bp.Message = firstLine(text)
			out = append(out, bp)
			continue
		}
		a.bps[path] = append(a.bps[path], placed{path, sb.Line, num})
		if nth > 1 && num > 0 {
			if _, err := exec(a.dbg.ignore(num, nth)); err != nil {
				return nil, err
			}
		}
		out = append(out, bp)
	}
	return out, nil
}

// placedAs reads the debugger's answer to a breakpoint command: its
// number (a yes: the path in gdb's answer may hold any word), or else no
// refusal.
func (a *adapter) placedAs(text string) (num int, ok bool) {
	if a.dbg.brkNum == nil {
		return 0, !refused(text)
	}
	m := a.dbg.brkNum.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	num, _ = strconv.Atoi(m[1])
	return num, true
}

// remove deletes breakpoints the debugger holds.
func (a *adapter) remove(ps []placed, exec func(string) (string, error)) error {
	for _, p := range ps {
		for _, c := range a.dbg.del(p.file, p.line, p.num) {
			if _, err := exec(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *adapter) newID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastID++
	return a.lastID
}

// later answers breakpoints set while the program runs: the debugger
// cannot take them until it stops, then they are placed and breakpoint
// events say so.
func (a *adapter) later(r *godap.SetBreakpointsRequest) *godap.SetBreakpointsResponse {
	resp := &godap.SetBreakpointsResponse{Response: a.response(&r.Request)}
	set := pendingSet{args: r.Arguments}
	for _, sb := range r.Arguments.Breakpoints {
		id := a.newID()
		set.ids = append(set.ids, id)
		resp.Body.Breakpoints = append(resp.Body.Breakpoints, godap.Breakpoint{Id: id, Line: sb.Line,
			Message: "placed when the program stops next"})
	}
	a.mu.Lock()
	if a.pending == nil {
		a.pending = map[string]pendingSet{}
	}
	a.pending[r.Arguments.Source.Path] = set
	a.mu.Unlock()
	return resp
}

// funcsLater is later for function breakpoints.
func (a *adapter) funcsLater(r *godap.SetFunctionBreakpointsRequest) *godap.SetFunctionBreakpointsResponse {
	resp := &godap.SetFunctionBreakpointsResponse{Response: a.response(&r.Request)}
	set := &pendingFuncs{fbs: r.Arguments.Breakpoints}
	for range r.Arguments.Breakpoints {
		id := a.newID()
		set.ids = append(set.ids, id)
		resp.Body.Breakpoints = append(resp.Body.Breakpoints, godap.Breakpoint{Id: id, Message: "placed when the program stops next"})
	}
	a.mu.Lock()
	a.pendingFuncs = set
	a.mu.Unlock()
	return resp
}

// setFunctionBreakpoints replaces the function breakpoints, placing the
// new ones with exec; ids as setBreakpoints'.
func (a *adapter) setFunctionBreakpoints(fbs []godap.FunctionBreakpoint, ids []int, exec func(string) (string, error)) ([]godap.Breakpoint, error) {
	if err := a.remove(a.funcs, exec); err != nil {
		return nil, err
	}
	a.funcs = nil
	var out []godap.Breakpoint
	for i, fb := range fbs {
		var before string
		if a.dbg.listBreaks != "" {
			before, _ = a.sess.Inspect(a.dbg.listBreaks)
		}
		text, err := exec(breakFunc(a.dbg, fb.Name, fb.Condition))
		if err != nil {
			return nil, err
		}
		num, ok := a.placedAs(text)
		id := a.newID()
		if i < len(ids) {
			id = ids[i]
		}
		bp := godap.Breakpoint{Id: id, Verified: ok}
		if !ok {
			bp.Message = firstLine(text)
		} else if a.dbg.listBreaks != "" {
			// perl -d deletes a breakpoint by its line: the one that is
			// new in its list.
			after, _ := a.sess.Inspect(a.dbg.listBreaks)
			a.funcs = append(a.funcs, newBreaks(a.dbg.readBreaks(before), a.dbg.readBreaks(after))...)
		} else {
			a.funcs = append(a.funcs, placed{num: num})
		}
		out = append(out, bp)
	}
	return out, nil
}

func newBreaks(before, after []placed) []placed {
	old := map[placed]bool{}
	for _, p := range before {
		old[p] = true
	}
	var out []placed
	for _, p := range after {
		if !old[p] {
			out = append(out, p)
		}
	}
	return out
}

func breakFunc(d *debugger, name, cond string) string {
	b := d.brk("", 0, cond)
	// "break :0 if c" -> "break NAME if c": the same command, a function
	// where the file and line were.
	return strings.Replace(b, ":0", name, 1)
}

var refusedRE = regexp.MustCompile(`(?i)no (source|symbol|line|such file)|not found|cannot|can't|error|\*\*\* |not defined|is not a|syntax`)

func refused(out string) bool { return refusedRE.MatchString(out) }

func lastLine(s string) string {
	if l := lines(s); len(l) > 0 {
		return l[len(l)-1]
	}
	return ""
}

func firstLine(s string) string {
	if l := lines(s); len(l) > 0 {
		return l[0]
	}
	return ""
}

// stack is the backtrace of thread tid, newest first: of another thread
// than the one the debugger stands in, its top frame.
func (a *adapter) stack(tid int) ([]godap.StackFrame, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	top, other := a.tops[tid], len(a.threads) > 0 && tid != a.current
	a.mu.Unlock()
	if other {
		return []godap.StackFrame{stackFrame(otherThreads+tid, top)}, nil
	}
	where, err := a.sess.Where()
	if err != nil {
		return nil, err
	}
	out, err := a.sess.Inspect(a.dbg.frames)
	if err != nil {
		return nil, err
	}
	fs := a.dbg.parseFrames(out)
	if len(fs) == 0 || a.dbg == perlDAP {
		// perl's T lists the callers only; a debugger that printed no
		// frame still has where it is.
		fs = append([]frame{{name: where.Function, file: where.File, line: where.Line}}, fs...)
	}
	if fs[0].file == "" || filepath.Base(fs[0].file) == filepath.Base(where.File) {
		fs[0].file, fs[0].line = where.File, where.Line
	}
	var sf []godap.StackFrame
	for i, f := range fs {
		sf = append(sf, stackFrame(i, f))
	}
	return sf, nil
}

func stackFrame(id int, f frame) godap.StackFrame {
	st := godap.StackFrame{Id: id, Name: f.name, Line: f.line, Column: 1}
	if f.file != "" {
		st.Source = &godap.Source{Name: filepath.Base(f.file), Path: f.file}
	}
	return st
}

// firstRef is the first variablesReference of an aggregate's members.
const firstRef = 1000

// otherThreads is the first frame id of the threads the debugger does
// not stand in: their top frames (otherThreads+thread), shown without
// variables, since reading them would select the thread.
const otherThreads = 1 << 20

func (a *adapter) variables(ref int) ([]godap.Variable, error) {
	if err := a.ready(); err != nil {
		return nil, err
	}
	out := []godap.Variable{}
	if ref >= firstRef {
		a.mu.Lock()
		cs := a.refs[ref]
		a.mu.Unlock()
		for _, c := range cs {
			out = append(out, a.variable(c.name, c.value))
		}
		return out, nil
	}
	vs, err := a.dbg.locals(a, ref-1)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		out = append(out, a.variable(v.name, v.value))
	}
	return out, nil
}

// variable is a value as the editor shows it: an aggregate (gdb's
// {...}) can be expanded into its members.
func (a *adapter) variable(name, value string) godap.Variable {
	return godap.Variable{Name: name, Value: value, VariablesReference: a.expandable(value)}
}

// expandable gives an aggregate value a variablesReference (0: none).
func (a *adapter) expandable(value string) int {
	cs, ok := members(value)
	if !ok || a.dbg != gdbDAP {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs == nil {
		a.refs = map[int][]child{}
	}
	ref := firstRef + len(a.refs)
	a.refs[ref] = cs
	return ref
}

// evaluate: an expression, or in the debug console a command: fred's own
// (fred-reverse-watch EXPR, fred-history...) or the debugger's after
// "-exec ".
func (a *adapter) evaluate(r *godap.EvaluateRequest) {
	text := strings.TrimSpace(r.Arguments.Expression)
	resp := &godap.EvaluateResponse{Response: a.response(&r.Request)}
	cmd, isCmd := "", false
	if r.Arguments.Context == "repl" {
		switch {
		case strings.HasPrefix(text, "fred-"):
			cmd, isCmd = text, true
		case strings.HasPrefix(text, "-exec "):
			cmd, isCmd = strings.TrimSpace(strings.TrimPrefix(text, "-exec ")), true
		}
	}
	if isCmd {
		if err := a.ready(); err != nil {
			a.fail(r.Seq, r.Command, err)
			return
		}
		if a.sess != nil && a.sess.Personality().Classify(cmd).Kind == P.Inspect && !strings.HasPrefix(cmd, "fred-") {
			if err := a.ready(); err != nil {
				a.fail(r.Seq, r.Command, err)
				return
			}
			out, err := a.sess.Inspect(cmd)
			if err != nil {
				a.fail(r.Seq, r.Command, err)
				return
			}
			resp.Body.Result = strings.TrimRight(out, "\r\n")
			a.send(resp)
			return
		}
		// It may move the program: the console shows what it printed,
		// and the editor where the program stands after.
		a.do(cmd, true, func(out string, err error) {
			if err != nil {
				out += "fred: " + err.Error() + "\n"
			}
			resp.Body.Result = strings.TrimRight(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
			a.send(resp)
			a.after(out, "step")
		})
		return
	}
	if err := a.ready(); err != nil {
		a.fail(r.Seq, r.Command, err)
		return
	}
	if r.Arguments.FrameId >= otherThreads {
		a.fail(r.Seq, r.Command, errors.New("another thread's frame: evaluate in the thread the program stopped in"))
		return
	}
	back, err := a.inFrame(r.Arguments.FrameId)
	if err != nil {
		a.fail(r.Seq, r.Command, err)
		return
	}
	out, err := a.sess.Inspect(a.dbg.print(text))
	back()
	if err == nil {
		var v string
		if v, err = a.dbg.value(out); err == nil {
			resp.Body.Result, resp.Body.VariablesReference = v, a.expandable(v)
			a.send(resp)
			return
		}
	}
	a.fail(r.Seq, r.Command, err)
}

// inFrame selects frame n (the editor's frame id is its number) for what
// follows; back selects the current one again. A debugger that answers
// about the current frame only stays there.
func (a *adapter) inFrame(n int) (back func(), err error) {
	if n <= 0 || a.dbg.frame == nil {
		return func() {}, nil
	}
	to, from := a.dbg.frame(n)
	if _, err := a.sess.Inspect(to); err != nil {
		return nil, err
	}
	return func() { _, _ = a.sess.Inspect(from) }, nil
}

// ready says whether the debugger can answer now.
func (a *adapter) ready() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.sess == nil:
		return errors.New("no program launched")
	case a.busy:
		return errors.New("the program is running")
	case a.ended:
		return errors.New("the program has ended")
	}
	return nil
}

// moveAfter answers a request, then runs cmd, a command that moves the
// program.
func (a *adapter) moveAfter(resp godap.ResponseMessage, cmd, reason string) {
	if err := a.ready(); err != nil {
		r := resp.GetResponse()
		a.fail(r.RequestSeq, r.Command, err)
		return
	}
	a.send(resp)
	a.move(cmd, reason)
}

// reverse runs a reverse command and answers after it: with its error
// when fred could not go back (no snapshot yet, the first moment), the
// program then where it was; else the stopped event follows.
func (a *adapter) reverse(resp godap.ResponseMessage, cmd, reason string) {
	r := resp.GetResponse()
	if err := a.ready(); err != nil {
		a.fail(r.RequestSeq, r.Command, err)
		return
	}
	before := a.sess.Timeline.Len()
	a.do(cmd, false, func(out string, err error) {
		if err == nil && a.sess.Timeline.Len() == before {
			err = fred.SaidAtStart(out) // nothing behind: the program did not move
		}
		if err != nil {
			a.fail(r.RequestSeq, r.Command, err)
			return
		}
		a.send(resp)
		a.after(out, reason)
	})
}

// pause interrupts the command that moves the program, once it runs: a
// pause that came with it may find it queued, not yet started.
func (a *adapter) pause() {
	for end := time.Now().Add(pauseWait); a.running() && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if a.sess.Resumed() && a.sess.Interrupted() {
			return
		}
	}
}

const pauseWait = 5 * time.Second

func (a *adapter) move(cmd, reason string) {
	a.do(cmd, false, func(out string, err error) {
		if err != nil {
			a.output("fred: " + err.Error() + "\n")
		}
		a.after(out, reason)
	})
}

// do runs cmd in the worker, with the debugger's output collected (and,
// unless quiet, shown in the console), then done.
func (a *adapter) do(cmd string, quiet bool, done func(out string, err error)) {
	a.mu.Lock()
	a.busy = true
	a.mu.Unlock()
	a.work <- func() {
		out, err := a.run(cmd, quiet)
		if a.moves(cmd) && a.sess.Running() && !a.dbg.ended.MatchString(out) {
			a.settle()
		}
		a.mu.Lock()
		a.busy = false
		a.mu.Unlock()
		done(out, err)
	}
}

// moves says whether cmd may move the program (a breakpoint set does not:
// no stop to settle after it).
func (a *adapter) moves(cmd string) bool {
	return strings.HasPrefix(cmd, "fred-") || a.sess.Personality().Classify(cmd).Kind == P.Forward
}

// run runs cmd now (in the worker), with the debugger's output collected
// and, unless quiet, shown in the console.
func (a *adapter) run(cmd string, quiet bool) (string, error) {
	var b strings.Builder
	a.mu.Lock()
	a.capture, a.quiet = &b, quiet
	a.mu.Unlock()
	failed := a.sess.Failed()
	err := a.sess.Exec(cmd)
	if err == nil && a.sess.Failed() > failed {
		// fred said why in the output: the command's error is that.
		err = errors.New(strings.TrimPrefix(lastLine(b.String()), "fred: "))
	}
	a.mu.Lock()
	a.capture, a.quiet = nil, false
	a.mu.Unlock()
	return b.String(), err
}

// settle is what the adapter does at each stop before the editor hears of
// it: the breakpoints set meanwhile are placed, and the threads read.
func (a *adapter) settle() {
	a.mu.Lock()
	pending, funcs := a.pending, a.pendingFuncs
	a.pending, a.pendingFuncs = nil, nil
	a.mu.Unlock()
	now := func(c string) (string, error) { return a.run(c, true) }
	changed := func(bps []godap.Breakpoint) {
		for _, bp := range bps {
			ev := &godap.BreakpointEvent{Event: a.newEvent("breakpoint")}
			ev.Body.Reason, ev.Body.Breakpoint = "changed", bp
			a.event(ev)
		}
	}
	for _, set := range pending {
		bps, err := a.setBreakpoints(set.args, set.ids, now)
		if err != nil {
			a.output("fred: breakpoints in " + set.args.Source.Path + ": " + err.Error() + "\n")
			continue
		}
		changed(bps)
	}
	if funcs != nil {
		bps, err := a.setFunctionBreakpoints(funcs.fbs, funcs.ids, now)
		if err != nil {
			a.output("fred: function breakpoints: " + err.Error() + "\n")
		}
		changed(bps)
	}
	if a.dbg.threads == "" {
		return
	}
	out, err := a.sess.Inspect(a.dbg.threads)
	if err != nil {
		return
	}
	ts, tops, current := parseThreads(out)
	a.mu.Lock()
	a.threads, a.tops, a.current = ts, tops, current
	a.mu.Unlock()
}

// running says whether a command that moves the program runs.
func (a *adapter) running() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.busy
}

// quietExec runs a command that sets something (a breakpoint) and
// returns its output, shown nowhere.
func (a *adapter) quietExec(cmd string) (string, error) {
	if err := a.ready(); err != nil {
		return "", err
	}
	ch := make(chan string, 1)
	var e error
	a.do(cmd, true, func(out string, err error) { e = err; ch <- out })
	return <-ch, e
}

// exitCode: gdb prints the status in octal.
var exitCode = regexp.MustCompile(`exited with code (\d+)`)

// after tells the editor where a command left the program.
func (a *adapter) after(out, reason string) {
	if a.sess == nil {
		return
	}
	if !a.sess.Running() || a.dbg.ended.MatchString(out) {
		code := 0
		if m := exitCode.FindStringSubmatch(out); m != nil {
			c, _ := strconv.ParseInt(m[1], 8, 32)
			code = int(c)
		}
		a.mu.Lock()
		gone := a.ended
		a.ended = true
		a.mu.Unlock()
		if !gone {
			ev := &godap.ExitedEvent{Event: a.newEvent("exited")}
			ev.Body.ExitCode = code
			a.event(ev)
			a.terminated()
		}
		return
	}
	if reason == "breakpoint" && a.dbg.hit != nil && !a.dbg.hit.MatchString(out) {
		reason = "pause"
	}
	a.stopped(reason)
}

func (a *adapter) stopped(reason string) {
	a.mu.Lock()
	a.refs = nil // the values shown before are gone
	tid := a.current
	a.mu.Unlock()
	if tid == 0 {
		tid = 1
	}
	ev := &godap.StoppedEvent{Event: a.newEvent("stopped")}
	ev.Body.Reason, ev.Body.ThreadId, ev.Body.AllThreadsStopped = reason, tid, true
	a.event(ev)
}

func (a *adapter) terminated() {
	a.event(&godap.TerminatedEvent{Event: a.newEvent("terminated")})
}

func (a *adapter) worker() {
	for f := range a.work {
		f()
	}
}

// closeWait bounds the end of a session: the adapter exits after it.
const closeWait = 15 * time.Second

// close ends the debugger and the program; nothing is left running.
func (a *adapter) close() {
	a.closeOnce.Do(func() {
		if a.sess == nil {
			return
		}
		a.sess.Interrupt() // a command that runs ends
		done := make(chan struct{})
		go func() {
			// The session is one person's: it ends once the worker's
			// command has.
			for end := time.Now().Add(closeWait); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				a.mu.Lock()
				busy := a.busy
				a.mu.Unlock()
				if !busy {
					break
				}
			}
			_ = a.sess.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(closeWait):
			// The rest is the keeper's: it ends the session's processes
			// once this one has exited.
			fmt.Fprintf(os.Stderr, "fred dap: the session did not end in %v; leaving it to its keeper\n", closeWait)
		}
	})
}

// outWriter shows what the debugger and the program print as output
// events, and collects it for the command that runs.
type outWriter struct{ a *adapter }

func (w outWriter) Write(b []byte) (int, error) {
	w.a.mu.Lock()
	c, quiet := w.a.capture, w.a.quiet
	if c != nil {
		c.Write(b)
	}
	w.a.mu.Unlock()
	if !quiet {
		w.a.output(strings.ReplaceAll(string(b), "\r\n", "\n"))
	}
	return len(b), nil
}

func (a *adapter) output(text string) {
	ev := &godap.OutputEvent{Event: a.newEvent("output")}
	ev.Body.Category, ev.Body.Output = "console", text
	a.event(ev)
}

func (a *adapter) newEvent(name string) godap.Event {
	return godap.Event{ProtocolMessage: godap.ProtocolMessage{Type: "event"}, Event: name}
}

func (a *adapter) response(r *godap.Request) godap.Response {
	return godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"}, RequestSeq: r.Seq, Success: true, Command: r.Command}
}

func (a *adapter) fail(seq int, command string, err error) {
	resp := &godap.ErrorResponse{Response: godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"},
		RequestSeq: seq, Command: command, Message: err.Error()}}
	resp.Body.Error = &godap.ErrorMessage{Format: err.Error()}
	a.send(resp)
}

func (a *adapter) event(m godap.Message) { a.send(m) }

// send writes one message; seq numbers are the adapter's own.
func (a *adapter) send(m godap.Message) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	a.seq++
	switch v := m.(type) {
	case godap.ResponseMessage:
		v.GetResponse().Seq = a.seq
	case godap.EventMessage:
		v.GetEvent().Seq = a.seq
	}
	_ = godap.WriteProtocolMessage(a.w, m)
}
