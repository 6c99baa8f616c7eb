// Package fred is the session engine: it runs the person's debugger on a
// pty, passes their commands through, keeps the timeline of forward
// commands and snapshots, and implements fred's own commands.
package fred

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/conn"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/membound"
	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/xstate"
	P "github.com/fred-debugger/fred/personalities"
	"golang.org/x/sys/unix"
)

// Options configure a Session.
type Options struct {
	Personality *P.Personality
	Argv        []string // the debugger's command line as the person gave it
	Out         io.Writer
	// Timeout bounds every wait for a prompt that fred itself asked for.
	Timeout time.Duration
	// Size is the terminal size to give the pty; nil for a default.
	Size *pty.Winsize
	// Snapshots is the backend: auto, criu, fork or off.
	Snapshots string
	// Dir holds the snapshots; default under the user's cache dir.
	Dir string
	// Keep leaves the snapshots on disk when the session ends.
	Keep     bool
	CriuPath string
	// Batch: no person answers the debugger's questions.
	Batch bool
	// Colour: the person's terminal shows ANSI colours (the timeline uses
	// them).
	Colour bool
	// Forwarding is called with true while a person's command runs (what the
	// person types should then go to Input), and false after.
	Forwarding func(on bool)
	// NoReplayLog: the program runs without the replay log (replaylog.go).
	NoReplayLog bool
	// MaxMemory bounds fred's own memory in a reverse command (bytes;
	// 0: half the machine's memory).
	MaxMemory uint64
	// Recording is a recorded replay log (fred replay): every run of the
	// program replays it from its first entry instead of recording anew.
	Recording string
	// Env is the debugger's environment (nil: fred's own). The program
	// of an in-process debugger runs in it.
	Env []string
	// ProgramEnv is set in the program's environment alone (under gdb:
	// set environment), not the debugger's; a NAME without "=" is taken
	// out of it.
	ProgramEnv []string
	// Save writes a saved session (fred-save DIR): a recording with the
	// session's replay log and its history. Nil: fred-save is refused.
	Save func(SaveRequest) error
	// RecordingNoStat: the recording's log holds no file metadata (a live
	// session's, saved), so its replay asks for none.
	RecordingNoStat bool
	// RecordingLogVersion: the recording's log is from before the
	// last kinds of entries were added (its version; 0: it is not).
	RecordingLogVersion int
}

// SaveRequest is what Options.Save writes.
type SaveRequest struct {
	Check    bool // only whether Dir can take it (before the work of saving)
	Dir      string
	Log      string // the session's replay log, as it is now
	Session  []byte // the history (Saved, JSON)
	Pid      int    // the program's process
	Argv     []string
	Debugger string
	// Say tells the person what the save could not keep.
	Say func(format string, args ...any)
}

// Session is one debugger and the history of the program it runs.
type Session struct {
	opt    Options
	p      *P.Personality
	proc   *proc.PTYProcess
	conn   *conn.Conn
	marker string

	Timeline history.Timeline
	running  bool
	pid      int       // the program's pid while it runs
	last     P.Command // last person command sent to the debugger, for empty-line repeat
	failed   int       // fred commands that failed (for --batch)
	overSaid bool      // why the session ended has been said

	snap ckpt.Snapshotter // nil when snapshots are unavailable
	// copies, when not nil, takes the snapshots of a single-threaded
	// program beside CRIU (s.snap): a paused fork copy costs milliseconds
	// where a dump and a restore cost 60 to 130 ms (ckpt/FORK.md).
	copies ckpt.Snapshotter
	// files sets the files the program writes back with its snapshots
	files *ckpt.Files
	// avoidCopies: a search wants CRIU's snapshots (watchcmd.go Keep).
	avoidCopies bool
	leanDir     string // gdb's debug-file-directory before lean attaches (lean.go)
	// What keeping a moment costs against replaying to it: the latest
	// snapshot's time by backend name, and the time of long hit counts.
	snapTook map[string]time.Duration
	hitTime  time.Duration
	hitsRun  int
	snapWhy  string // which backend, or why none
	// lean: attaches skip separate debug information (lean.go);
	// leanAttached: gdb attached since.
	lean, leanAttached bool
	dir                string
	ownDir             bool
	dirLock            *os.File     // held while the session lives (proc.NewSessionDir)
	keeper             *proc.Keeper // ends the session's processes if fred dies (keeper.go)
	snaps              map[int]*snap
	order              []int
	nextSnap           int
	adopted            map[int]bool // restored programs fred must reap
	host               host         // how the program is held (host.go)
	// crossed: the ignore counts the history a reverse command started
	// from used (crossedCounts); nil outside one.
	crossed map[string]bool
	rlog    *replayLog // replaylog.go

	run      int      // counts the program's runs; snapshots belong to one
	bps      []string // where enabled breakpoints stop now
	bpList   []P.Bp
	branches map[string][]history.Step
	probes   map[int]*probe // moments inside a continue, by number (native.go)
	nprobes  int
	nslots   int // the program's probes readied (probes.go)

	mu        sync.Mutex
	cancel    context.CancelFunc // stops the fred command in progress
	passing   bool               // a person's command is running
	passGen   int                // counts the person's commands: a nudge is for one
	passPid   int                // the program's pid as the command began
	nudged    bool               // Ctrl-C did not stop it: fred's SIGTRAP did
	closeMu   sync.Mutex
	closing   atomic.Bool // Close has begun (SIGTERM, SIGHUP): a command failing now fails of that
	lastFred  string      // the last line, when it was a fred command: Enter repeats it
	sourcing  int         // fred-source nesting
	seq       int         // resync tokens
	outOfStep bool        // an answer did not come in time: catch up before the next query
	giveUp    func() bool // while a replayed command runs: its answer no longer matters (replayStep)
	refused   refusal     // automatic snapshots that failed in this run
	holdPrune bool        // a fred command runs: prune when it ends
	// exactCounts: a counted step is counted from its stretch's start,
	// not from a snapshot part of the way (watchProgram.goEval).
	exactCounts bool
}

// interruptible gives a fred command a context that Ctrl-C cancels.
func (s *Session) interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	s.mu.Lock()
	s.cancel = func() { cancel(context.Canceled) }
	s.mu.Unlock()
	membound.Watch(s.memoryBound(), cancel, done)
	return ctx, func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		close(done)
		cancel(context.Canceled)
	}
}

// Interrupt is Ctrl-C outside the program's own input: it stops the fred
// command in progress, or else interrupts the program.
func (s *Session) Interrupt() { s.Interrupted() }

// Resumed says whether the program a command passes through to runs now:
// under gdb, once gdb has let it go (a Ctrl-C before that reaches gdb's
// reading of the command, not the program). Under pdb and perl, as soon
// as the command passes.
func (s *Session) Resumed() bool {
	s.mu.Lock()
	passing, pid := s.passing, s.passPid
	s.mu.Unlock()
	if !passing {
		return false
	}
	if s.p.InProcess {
		return true
	}
	if pid <= 0 {
		pid = s.tracedProgram()
	}
	return pid > 0 && !proc.Stopped(pid)
}

// Interrupted is Interrupt, and says whether a command was running to
// take it (false: none yet, or none any more).
func (s *Session) Interrupted() bool {
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		return true
	}
	// Only a running command's program should get it; a stopped program
	// would find a SIGINT waiting at its next resume.
	s.mu.Lock()
	passing := s.passing
	s.mu.Unlock()
	if !passing || !s.Input([]byte{3}) {
		return false
	}
	if c, ok := s.interruptChar(); !ok || c != 3 {
		// The terminal made no SIGINT of it (gdb may hold it in raw
		// mode while a program it attached to runs elsewhere): fred
		// stops the program itself.
		s.nudgeLater()
	}
	return true
}

// nudgeWait is how long a Ctrl-C has to stop the program before fred
// stops it itself.
var nudgeWait = 3 * time.Second

// nudgeLater stops the program with a SIGTRAP if the Ctrl-C just passed
// has not stopped it in nudgeWait. gdb's Ctrl-C is a SIGINT to the
// program, and a program that takes SIGINT itself (a server's signal
// thread in sigwait, a signalfd: mariadbd without --gdb) never shows it
// to gdb, which then waits for ever. gdb keeps a SIGTRAP from the
// program (handle SIGTRAP nopass).
func (s *Session) nudgeLater() {
	if s.p.InProcess {
		return // pdb and perl take Ctrl-C in the program's own thread
	}
	s.mu.Lock()
	gen, pid := s.passGen, s.passPid
	s.mu.Unlock()
	if pid <= 0 {
		pid = s.tracedProgram()
	}
	if pid > 0 && !s.onTerminal(pid) && proc.TracerPid(pid) != 0 {
		// A program gdb attached to is not on fred's terminal: the Ctrl-C
		// reached nobody. gdb's own Ctrl-C is this SIGINT, which gdb
		// keeps from the program.
		_ = unix.Kill(pid, unix.SIGINT)
	}
	time.AfterFunc(nudgeWait, func() {
		if pid <= 0 {
			pid = s.tracedProgram()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.passing && s.passGen == gen && !s.nudged && s.trapProgram(pid) {
			s.nudged = true // one SIGTRAP a command
		}
	})
}

// tracedProgram is the program the debugger holds when fred does not
// know its pid yet: on the first run its child, after gdb's attach the
// process it traces.
func (s *Session) tracedProgram() int {
	if s.proc == nil || s.proc.Cmd == nil || s.proc.Cmd.Process == nil {
		return 0
	}
	dbg := s.proc.Cmd.Process.Pid
	if pid := proc.OnlyChild(dbg); pid > 0 {
		return pid
	}
	return proc.TracedBy(dbg)
}

// onTerminal says whether process pid is in the foreground of the
// debugger's terminal, where a Ctrl-C typed there reaches it.
func (s *Session) onTerminal(pid int) bool {
	if s.proc == nil || s.proc.Master == nil {
		return false
	}
	fg, err := unix.IoctlGetInt(int(s.proc.Master.Fd()), unix.TIOCGPGRP)
	if err != nil {
		return false
	}
	pg, err := unix.Getpgid(pid)
	return err == nil && pg == fg
}

// interruptChar is the key that the debugger's terminal turns into
// SIGINT (its VINTR, Ctrl-C unless stty changed it); ok is false when it
// makes no signals (a program that put it in raw mode reads keys).
func (s *Session) interruptChar() (byte, bool) {
	if s.proc == nil || s.proc.Slave == nil {
		return 0, false
	}
	t, err := unix.IoctlGetTermios(int(s.proc.Slave.Fd()), unix.TCGETS)
	if err != nil || t.Lflag&unix.ISIG == 0 || t.Cc[unix.VINTR] == 0 {
		return 0, false // _POSIX_VDISABLE: no key interrupts
	}
	return t.Cc[unix.VINTR], true
}

// trapProgram stops a running program for gdb with a SIGTRAP, which gdb
// keeps from it, when a Ctrl-C (a SIGINT) did not stop it. Not under pdb
// and perl, which take Ctrl-C in the program's own thread.
func (s *Session) trapProgram(pid int) bool {
	if s.p.InProcess || pid <= 0 || proc.TracerPid(pid) == 0 || proc.Stopped(pid) {
		return false // (a SIGTRAP would kill a program no debugger holds)
	}
	return unix.Tgkill(pid, pid, unix.SIGTRAP) == nil
}

// Start starts the debugger and waits for its first prompt.
func Start(opt Options) (*Session, error) {
	if opt.Timeout == 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.Out == nil {
		opt.Out = os.Stdout
	}
	if opt.Forwarding == nil {
		opt.Forwarding = func(bool) {}
	}
	s := &Session{opt: opt, p: opt.Personality, snaps: map[int]*snap{}, adopted: map[int]bool{}, snapTook: map[string]time.Duration{}, branches: map[string][]history.Step{}, probes: map[int]*probe{}}
	// Before any process of the session exists: the keeper kills them
	// all if fred dies without ending them (internal/proc/keeper.go).
	if k, err := proc.StartKeeper(); err == nil {
		s.keeper = k
	} else {
		debugf("%v", err)
	}
	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	// \032 (SUB) never appears in source text or normal program output.
	s.marker = "\x1a\x1afred-" + hex.EncodeToString(nonce) + "\x1a\x1a"
	logEnv := s.openReplayLog()
	if opt.Recording != "" && s.rlog.path == "" {
		// a recording's run without its log would be another run
		s.keeper.Close()
		s.closeSessionDir()
		return nil, fmt.Errorf("the recording cannot be replayed: %s", s.rlog.why)
	}
	master, slave, err := proc.OpenPTY()
	if err != nil {
		s.keeper.Close()
		s.closeSessionDir()
		return nil, err
	}
	argv := s.p.Argv(opt.Argv, s.marker, slave.Name())
	if !opt.Colour && len(s.p.Plain) > 0 {
		argv = slices.Concat(argv[:1], s.p.Plain, argv[1:])
	}
	base := opt.Env
	if base == nil {
		base = os.Environ()
	}
	env := append(slices.Clone(base), s.p.Env...)
	if !s.p.InProcess {
		// gdb 13 on a CPU with AMX cannot write registers, so it cannot
		// call a function in the program (fork snapshots, probes).
		if env, err = xstate.Preload(env); err != nil {
			debugf("%v", err)
		}
	}
	env = append(env, logEnv...)
	// Bracketed paste would wrap the person's pastes in escapes that fred's
	// line editor and the debugger's echo do not expect. The debugger reads
	// INPUTRC once at start, so the file goes as soon as the prompt shows.
	if rc, err := os.CreateTemp("", "fred-inputrc-*"); err == nil {
		_, _ = rc.WriteString("set enable-bracketed-paste off\n")
		rc.Close()
		defer os.Remove(rc.Name())
		env = append(env, "INPUTRC="+rc.Name())
	}
	size := opt.Size
	if size == nil {
		size = &pty.Winsize{Rows: 24, Cols: 80}
	}
	// A debugger of its own (gdb) dies with fred; an in-process one is the
	// program, which CRIU may dump: the keeper ends it.
	startSize := size
	if s.p.LineEditorAtSize {
		startSize = &pty.Winsize{}
	}
	pp, err := proc.StartPTY(argv, env, master, slave, startSize, !s.p.NoCtty, !s.p.InProcess)
	if err != nil {
		s.keeper.Close()
		s.closeSessionDir()
		return nil, err
	}
	s.proc = pp
	s.keeper.Watch(pp.Cmd.Process.Pid)
	s.host = newHost(s)
	s.conn = conn.New(pp.Master, s.marker, s.host.done())
	var initial conn.Prompt // (not a nil *Pattern in an interface)
	if s.p.InitialPrompt != nil {
		initial = s.p.InitialPrompt
	}
	if _, err := s.conn.WaitPrompt(strings.Join(argv, " "), time.Now().Add(opt.Timeout), opt.Out, false, initial); err != nil {
		s.Close()
		if s.p.File != "" && errors.As(err, new(*conn.TimeoutError)) {
			// The file's arguments or setup make the marker the prompt.
			return nil, fmt.Errorf("starting %s: %w: the personality file %s does not have the debugger show fred's prompt ({marker} in its arguments)", opt.Argv[0], err, s.p.File)
		}
		return nil, fmt.Errorf("starting %s: %w", opt.Argv[0], err)
	}
	if startSize != size {
		s.Resize(size)
	}
	setup := s.p.Setup(s.marker)
	if opt.Batch {
		setup = append(setup, s.p.Batch...)
	}
	for _, c := range setup {
		if _, err := s.query(c); err != nil {
			s.Close()
			return nil, fmt.Errorf("setting up %s: %w", s.p.Name, err)
		}
	}
	if err := ckpt.DebugRegisters(); err != nil && s.p.SoftWatch != "" {
		if _, err := s.query(s.p.SoftWatch); err != nil {
			s.Close()
			return nil, fmt.Errorf("setting up %s: %w", s.p.Name, err)
		}
		debugf("software watchpoints: %v", err)
	}
	s.openSnapshots()
	// fred's first line: which snapshots, and why (before an in-process
	// debugger's program takes its first one).
	s.Printf("%s", s.snapWhy)
	s.gdbReplayLog()
	s.host.started()
	return s, nil
}

// SnapshotBackend says which snapshot backend is in use, or why none.
func (s *Session) SnapshotBackend() string { return s.snapWhy }

// Personality is the debugger's personality.
func (s *Session) Personality() *P.Personality { return s.p }

// Prompt is what to show the person.
func (s *Session) Prompt() string {
	if s.p.PromptQuery != "" && s.p.InProcess && s.proc != nil {
		if out, err := s.query(s.p.PromptQuery); err == nil {
			if _, p, ok := strings.Cut(out, "@fred prompt ["); ok {
				p, _, _ = strings.Cut(p, "\n")
				if p = strings.TrimRight(p, "\r"); strings.HasSuffix(p, "]") {
					return strings.TrimSuffix(p, "]")
				}
			}
		}
	}
	return s.p.Prompt
}

// Failed counts fred commands that failed.
func (s *Session) Failed() int { return s.failed }

// Running reports whether the program is live, as of the last stop.
func (s *Session) Running() bool { return s.running }

// Input passes what the person typed while a command runs to the debugger's
// terminal (program input, answers to questions, Ctrl-C). Once the command
// is over it writes nothing and says false: fred talks to the debugger
// then, and typing mixed into that would reach the debugger as one line
// with fred's own ("pecho"); it is for the next prompt.
func (s *Session) Input(b []byte) bool {
	s.mu.Lock()
	if !s.passing {
		s.mu.Unlock()
		return false
	}
	s.host.typed(b)
	_ = s.conn.SendRaw(b)
	s.mu.Unlock()
	if c, ok := s.interruptChar(); ok && bytes.IndexByte(b, c) >= 0 {
		s.nudgeLater() // Ctrl-C typed at a terminal in raw mode
	}
	return true
}

// Resize passes a new terminal size to the debugger's pty.
func (s *Session) Resize(ws *pty.Winsize) {
	if p := s.proc; p != nil {
		_ = pty.Setsize(p.Master, ws)
	}
}

// Done is closed when the debugger process has exited.
func (s *Session) Done() <-chan struct{} { return s.host.done() }

// sayOver tells the person, once, why the session ended when they did not
// end it themselves: what went wrong (err, when it says more than that the
// session ended) and how the debugger's process ended (a signal, an exit
// status other than 0). A debugger that died takes the session with it,
// but never silently.
func (s *Session) sayOver(err error) {
	if s.overSaid {
		return
	}
	s.overSaid = true
	var says []string
	if err != nil && err.Error() != ErrSessionOver.Error() {
		says = append(says, err.Error())
	}
	if how := s.debuggerEnd(); how != "" {
		says = append(says, how)
	}
	if len(says) == 0 {
		return
	}
	s.failed++
	fmt.Fprintf(s.opt.Out, "fred: %s\n", strings.Join(says, "; "))
}

// debuggerEnd says how the debugger's process ended, if not by exiting
// with status 0, or by the person's quit ("" then, or while it runs).
func (s *Session) debuggerEnd() string {
	if s.proc == nil {
		return ""
	}
	pid, status, what := s.host.process()
	if status == nil {
		return ""
	}
	ws, ok := status()
	switch {
	case !ok:
		return ""
	case ws.Signaled():
		return fmt.Sprintf("the process of %s (pid %d) was killed by %s, so the session ends", what, pid, unix.SignalName(ws.Signal()))
	case ws.Exited() && ws.ExitStatus() != 0 && s.last.Kind != P.Quit:
		// (after a quit, pdb and perl exit with the program's status)
		return fmt.Sprintf("the process of %s (pid %d) exited with status %d, so the session ends", what, pid, ws.ExitStatus())
	}
	return ""
}

// Close ends the debugger and everything it started.
func (s *Session) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.proc == nil {
		return nil
	}
	s.closing.Store(true)
	// The program may sit in another process group (gdb gives it its own)
	// or be traced; kill it outright, then the debugger and anything else
	// left in its session.
	if s.pid > 0 {
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
	}
	select {
	case <-s.proc.Done():
	default:
		_ = s.conn.Send(s.p.Quiet("quit"))
		select {
		case <-s.proc.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	sid := s.proc.Cmd.Process.Pid
	tty := s.proc.Slave
	err := s.proc.Stop(time.Second)
	if s.pid > 0 {
		// A program whose debugger died before it is fred's orphan.
		proc.Reap(s.pid, 500*time.Millisecond)
	}
	proc.KillSession(sid)
	// The program runs in a session of its own on the pty.
	proc.KillTTY(tty)
	s.closeSnapshots()
	s.closeReplayLog()
	s.closeSessionDir()
	// Last: whatever is still there of the session goes with it.
	s.keeper.Close()
	s.proc = nil
	return err
}

// query sends an internal command and returns its output, unseen by the
// person, within the session's timeout.
func (s *Session) query(cmd string) (string, error) {
	return s.queryFor(cmd, s.opt.Timeout)
}

// queryFor is query with its own deadline, for replayed commands that may
// run as long as they did the first time.
func (s *Session) queryFor(cmd string, timeout time.Duration) (string, error) {
	if err := s.inStep(); err != nil {
		return "", err
	}
	fault := ""
	if answerFault != nil {
		fault = answerFault(cmd)
	}
	if fault != "drop" {
		if err := s.conn.Send(cmd); err != nil {
			return "", ErrSessionOver
		}
	}
	if fault != "" {
		// Given up on at once, without a look: an answer that came
		// quickly must not count as in time.
		s.outOfStep = true
		return "", &conn.TimeoutError{Cmd: cmd}
	}
	out, err := s.conn.WaitPromptUnless(cmd, time.Now().Add(timeout), s.giveUp)
	if errors.Is(err, conn.ErrDebuggerExited) {
		return out, ErrSessionOver
	}
	var te *conn.TimeoutError
	if errors.As(err, &te) {
		// Its answer may still come, and be taken for the next one's.
		s.outOfStep = true
	}
	return out, err
}

// answerFault, set by tests, makes fred give up on the answer to one
// query at once ("late": it comes after fred stopped waiting) or not send
// it at all ("drop": no answer ever comes).
var answerFault func(cmd string) string

// catchUp puts fred and the debugger back in step after an answer that
// did not come in time. The command may have ended since, or still run
// (a replay that does not get where it went before): fred's echo answers
// in the first case; in the second, Ctrl-C stops it first. What the
// debugger said meanwhile is nobody's answer and is dropped. (A command
// that moves the program marks the history dirty itself when it fails.)
func (s *Session) catchUp() error {
	s.outOfStep = false
	if s.p.EchoCmd == nil || s.proc == nil {
		return nil
	}
	err := s.echoSync("(catching up)", time.Second, nil)
	var te *conn.TimeoutError
	if !errors.As(err, &te) {
		return err
	}
	// Busy: interrupt it. The terminal drops its pending input with the
	// signal, the echo too: send it again.
	if err := s.conn.SendRaw([]byte{3}); err != nil {
		return ErrSessionOver
	}
	time.Sleep(100 * time.Millisecond)
	err = s.echoSync("(catching up)", nudgeWait, nil)
	if errors.As(err, &te) {
		// A program that takes SIGINT itself gets a SIGTRAP (see
		// nudgeLater); either way gdb gets its full time.
		s.trapProgram(s.pid)
		err = s.echoSync("(catching up)", s.opt.Timeout, nil)
	}
	if err != nil {
		return fmt.Errorf("the debugger does not answer, even after Ctrl-C (%v): %w", err, ErrSessionOver)
	}
	return nil
}

// inStep catches up first when an earlier answer did not come in time.
func (s *Session) inStep() error {
	if !s.outOfStep {
		return nil
	}
	return s.catchUp()
}

// Exec runs one line the person typed: a fred command or a debugger
// command passed through untouched.
func (s *Session) Exec(line string) (err error) {
	defer func() {
		if errors.Is(err, ErrSessionOver) {
			s.sayOver(err)
		}
	}()
	defer s.replayLogNotice()
	defer s.markStood()
	trimmed := strings.TrimSpace(line)
	if trimmed == "" && s.lastFred != "" {
		trimmed = s.lastFred
	}
	s.lastFred = ""
	if strings.HasPrefix(trimmed, "fred-") {
		if c := lookup(strings.Fields(trimmed)[0]); c != nil && c.Repeat {
			s.lastFred = trimmed // Enter repeats it, as gdb repeats reverse-next
		}
		err := s.execFred(trimmed)
		if err != nil && s.closing.Load() {
			// Close killed the program under the command: a replay
			// then ends with the program ("replay diverged: ... but
			// the program is at the end of the program"), and going
			// back fails with the debugger gone. Neither is so.
			return ErrSessionOver
		}
		if err != nil && !errors.Is(err, ErrSessionOver) {
			s.failed++
			fmt.Fprintf(s.opt.Out, "fred: %v\n", err)
			return nil
		}
		return err
	}
	if trimmed == "" {
		if s.last.Line == "" || s.p.Repeat == nil {
			return nil
		}
		if trimmed = s.p.Repeat(s.last); trimmed == "" {
			return nil
		}
	}
	cmd := s.p.Classify(trimmed)
	s.last = cmd
	if !s.running && (cmd.Op == P.OpRun || cmd.Op == P.OpStart || cmd.Op == P.OpStarti) {
		s.recordingAgain()
	}
	if es := s.p.EarlyStart; es != nil && s.snap != nil && !s.running && (cmd.Op == P.OpRun || cmd.Op == P.OpStart && es.MainBreak != "") {
		_, err = s.runFromStart(cmd)
		return err
	}
	_, err = s.passThrough(cmd)
	return err
}

// passThrough sends a person's command and shows its output as it comes,
// with the person's typing going to the program while it runs.
func (s *Session) passThrough(cmd P.Command) (string, error) {
	if err := s.inStep(); err != nil {
		return "", err
	}
	probes := s.probeSlots(cmd)
	if probes != nil {
		defer probes.finish()
	}
	if err := s.conn.Send(cmd.Line); err != nil {
		return "", ErrSessionOver
	}
	s.setPassing(true)
	start := time.Now()
	out, err := s.conn.WaitPrompt(cmd.Line, time.Time{}, s.opt.Out, true, nil)
	s.setPassing(false)
	if errors.Is(err, conn.ErrDebuggerExited) {
		return out, ErrSessionOver
	}
	if err != nil {
		return out, err
	}
	took := time.Since(start)
	if err := s.resync(); err != nil {
		return out, err
	}
	if probes != nil {
		probes.end() // before after(): it may snapshot the program
	}
	if f, ok := s.p.Native[strings.Fields(cmd.Line)[0]]; ok && s.p.NativeRefused != nil && s.p.NativeRefused.MatchString(out) {
		s.Printf("%s's own '%s' needs its 'record' mode; fred's '%s' works without it", s.p.Name, cmd.Op, f)
	}
	return out, s.after(cmd, out, took)
}

// resync makes sure fred and the debugger agree on whose turn it is. What
// the person typed while the command ran and nobody read is dropped; if
// the debugger already took it as commands of its own, their output is
// shown, and fred waits until an echo of its own comes back.
func (s *Session) resync() error {
	if s.p.EchoCmd == nil || s.proc == nil {
		return nil
	}
	return s.echoSync("(sync)", s.opt.Timeout, s.opt.Out)
}

// echoSync drops what the person typed that the debugger has not read,
// sends fred's echo and waits up to wait for its answer. What comes before
// it is the answer to something else: shown on show, if not nil. Ctrl-U
// first: the start of a line the person typed while a command ran, which
// the debugger already read, goes (its line editor's, or the terminal's,
// line kill).
func (s *Session) echoSync(what string, wait time.Duration, show io.Writer) error {
	_ = unix.IoctlSetInt(int(s.proc.Slave.Fd()), unix.TCFLSH, unix.TCIFLUSH)
	s.seq++
	token := fmt.Sprintf("\x1aFREDSYNC%d\x1a", s.seq)
	if err := s.conn.Send(s.p.KillLine + s.p.EchoCmd(token)); err != nil {
		return ErrSessionOver
	}
	deadline := time.Now().Add(wait)
	for {
		out, err := s.conn.WaitPrompt(what, deadline, nil, false, nil)
		if errors.Is(err, conn.ErrDebuggerExited) {
			return ErrSessionOver
		}
		if err != nil {
			return err
		}
		if strings.Contains(out, token) {
			return nil
		}
		if show == nil {
			continue
		}
		for _, l := range strings.SplitAfter(out, "\n") {
			if !strings.Contains(l, "FREDSYNC") {
				fmt.Fprint(show, l)
			}
		}
	}
}

// after updates the timeline once a person's command has finished.
func (s *Session) after(cmd P.Command, out string, took time.Duration) error {
	return s.afterShown(cmd, "", out, took)
}

// afterShown is after for a command fred ran in place of the one the
// person typed, shown.
func (s *Session) afterShown(cmd P.Command, shown, out string, took time.Duration) error {
	switch cmd.Kind {
	case P.Forward:
		if s.p.Refused != nil && s.p.Refused(out) {
			return nil // the debugger did not do it: nothing to record
		}
		if (cmd.Op == P.OpRun || cmd.Op == P.OpStart || cmd.Op == P.OpStarti) && s.p.NewRun != nil && s.p.NewRun(out) || s.host.newRun() {
			s.newRun()
		}
		step := history.Step{Cmd: cmd, Shown: shown, Stop: s.stopOf(out), Bps: s.bps, Took: took}
		loc, err := s.location()
		if errors.Is(err, P.ErrNotRunning) {
			s.running, s.pid = false, 0
			step.Ended, step.Stop = true, P.StopEnded
			s.Timeline.Add(step)
			return nil
		}
		if err != nil {
			return err
		}
		s.running = true
		if s.pid == 0 {
			s.pid, _ = s.Pid()
			s.keeper.Watch(s.pid)
		}
		step.At = loc
		step.Depth, _ = s.depth()
		s.Timeline.Add(step)
		if s.hasTempBreakpoint() || s.passes(step) {
			// A temporary breakpoint may be gone now, an ignore count
			// used up: later commands did not run with them.
			s.refreshBreakpoints()
		}
		s.maybeAutoSnapshot()
		s.host.afterInput()
	case P.Breakpoint:
		s.refreshBreakpoints()
	case P.Mutate:
		if s.p.Refused != nil && s.p.Refused(out) {
			return nil
		}
		if s.running {
			now := s.Timeline.Now()
			s.Timeline.Add(history.Step{Cmd: cmd, At: now.At, Depth: now.Depth, Bps: s.bps, Took: took})
		}
	case P.Kill:
		s.running, s.pid = false, 0
		s.Timeline.Reset()
	}
	return nil
}

// Where is where the program stands: file, line, function.
func (s *Session) Where() (P.Location, error) { return s.location() }

// Inspect runs a debugger command that only looks (a backtrace, a
// variable) and returns its output without showing it. The history does
// not record it: a command that moves the program or changes its state
// goes through Exec.
func (s *Session) Inspect(cmd string) (string, error) {
	if c := s.p.Classify(cmd); c.Kind != P.Inspect {
		return "", fmt.Errorf("%q is not a command that only looks: run it as the person's", cmd)
	}
	return s.query(cmd)
}

func (s *Session) location() (P.Location, error) {
	out, err := s.query(s.p.LocationCmd)
	if err != nil {
		return P.Location{}, err
	}
	return s.p.ParseLocation(out)
}

func (s *Session) depth() (int, error) {
	out, err := s.query(s.p.DepthCmd)
	if err != nil {
		return 0, err
	}
	return s.p.ParseDepth(out)
}

// Pid is the debugged program's process id.
func (s *Session) Pid() (int, error) {
	out, err := s.query(s.p.PidCmd)
	if err != nil {
		return 0, err
	}
	return s.p.ParsePid(out)
}

// Printf prints a fred message on its own line.
func (s *Session) Printf(format string, args ...any) {
	fmt.Fprintf(s.opt.Out, "fred: "+format+"\n", args...)
}

func (s *Session) setPassing(on bool) {
	s.mu.Lock()
	s.passing = on
	nudged := s.nudged
	s.nudged = false
	if on {
		s.passGen++
		s.passPid = s.pid
	}
	s.mu.Unlock()
	s.opt.Forwarding(on)
	if nudged {
		s.Printf("the program did not stop at Ctrl-C (it takes SIGINT itself: a signal thread, a signalfd); fred stopped it with a SIGTRAP, which gdb keeps from it")
	}
}

// execBlock sends a multi-line command whole and waits for the prompt that
// follows its last line.
func (s *Session) execBlock(lines []string) error {
	cmd := s.p.Classify(lines[0])
	for _, l := range lines {
		if err := s.conn.Send(l); err != nil {
			return ErrSessionOver
		}
	}
	out, err := s.conn.WaitPrompt(lines[0], time.Now().Add(s.opt.Timeout), s.opt.Out, true, nil)
	if errors.Is(err, conn.ErrDebuggerExited) {
		return ErrSessionOver
	}
	if err != nil {
		return err
	}
	return s.after(cmd, out, 0)
}
