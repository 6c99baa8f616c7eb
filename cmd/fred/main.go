// Command fred runs a debugger you know (gdb, pdb, perl -d) with commands
// that go back in time.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chzyer/readline"
	"github.com/creack/pty"
	"github.com/fred-debugger/fred/fred"
	"github.com/fred-debugger/fred/internal/dap"
	"github.com/fred-debugger/fred/internal/demo"
	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/recording"
	P "github.com/fred-debugger/fred/personalities"
	"github.com/fred-debugger/fred/replaylog"
)

// version is set by the Makefile from git describe.
var version = "dev"

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() { os.Exit(run(os.Args[1:])) }

func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `usage: fred [fred flags] DEBUGGER [debugger args] PROGRAM [args]
  fred gdb ./prog            gdb, with fred's commands
  fred python3 -m pdb x.py   pdb, with fred's commands
  fred perl -d x.pl          perl's debugger, with fred's commands
  fred record [-o DIR] PROG [ARGS]
                             run a C, C++, Python or Perl program without a
                             debugger and keep its run in DIR
  fred [fred flags] replay DIR [debugger options]
                             its debugger on a recorded run: every run is that run
  fred replaylog dump FILE   show a replay log (the session directory's replay.log)
  fred dap [--listen ADDR]   a debug adapter for editors (docs/editors.md)
  fred personality NAME      print a built-in personality file (gdb, lldb, pdb,
                             perl), to start one of your own from
                             (docs/personalities.md)

fred flags:
`)
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		arg := dash + f.Name
		if name != "" {
			arg += " " + name
		}
		fmt.Fprintf(w, "  %-22s %s\n", arg, help)
	})
	fmt.Fprintf(w, "\nfred's commands, typed at the debugger's prompt:\n")
	fred.WriteHelp(w)
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "replaylog" {
		return replaylogCmd(args[1:])
	}
	if len(args) > 0 && args[0] == "dap" {
		return dapCmd(args[1:])
	}
	if len(args) > 0 && args[0] == "record" {
		return recordCmd(args[1:])
	}
	if len(args) > 0 && args[0] == "personality" {
		return personalityCmd(args[1:])
	}
	fs := flag.NewFlagSet("fred", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		scripts     multiFlag
		personality = fs.String("personality", "", "debugger `NAME` (gdb, lldb, pdb, perl), or a personality FILE (docs/personalities.md); default: from the debugger's name")
		batch       = fs.Bool("batch", false, "exit after the -x files; non-zero status if a fred command failed")
		showVersion = fs.Bool("version", false, "print fred's version")
		help        = fs.Bool("help", false, "print this help")
		demoTour    = fs.Bool("demo", false, "run the guided demo: fred --demo [gdb|lldb|pdb|perl] (waits for Enter between steps on a terminal)")
		timeout     = fs.Duration("timeout", 30*time.Second, "`DURATION` fred waits for each answer it asks the debugger for")
	)
	snapshots := fs.String("snapshots", "auto", "snapshot backend: `auto` (fork copies while the program has one thread, CRIU when it has more), criu, fork or off")
	dir := fs.String("dir", "", "keep snapshots in `DIR` (default: under the user's cache dir)")
	keep := fs.Bool("keep", false, "leave the snapshots on disk when the session ends")
	criuPath := fs.String("criu", "", "the criu `PATH` (default: $FRED_CRIU, then where 'make deps' puts it, then PATH)")
	noLog := fs.Bool("no-replay-log", false, "run the program without the replay log (its clock, randomness and input are not recorded nor given back)")
	maxMem := fs.Uint64("max-memory", 0, "fred's own memory bound in `MB`: a reverse command that would pass it stops, and you are back where you were (default: half the machine's memory)")
	fs.Var(&scripts, "x", "run commands from `FILE` (fred's and the debugger's) first; may repeat")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(os.Stderr, "fred: %v\n", err)
		usage(os.Stderr, fs)
		return 2
	}
	if *help {
		usage(os.Stdout, fs)
		return 0
	}
	if *showVersion {
		fmt.Printf("fred %s\n", version)
		return 0
	}
	argv := fs.Args()
	if *demoTour {
		return runDemo(argv, *snapshots, *timeout)
	}
	if len(argv) == 0 {
		usage(os.Stderr, fs)
		return 2
	}
	var p *P.Personality
	var err error
	var recorded string
	var programEnv []string
	startDir, _ := os.Getwd()
	var saved []byte
	var save func(dir, log string, session []byte, say func(string, ...any)) error
	noStat := false
	var debuggerEnv []string
	logVersion := 0
	if argv[0] == "replay" {
		if *noLog {
			fmt.Fprintln(os.Stderr, "fred replay: a recording is replayed by its replay log: --no-replay-log cannot go with it")
			return 2
		}
		r, err := prepareReplay(argv[1:], func(f string, a ...any) { fmt.Fprintf(os.Stderr, "fred: "+f+"\n", a...) })
		if err != nil {
			fmt.Fprintf(os.Stderr, "fred replay: %v\n", err)
			return 2
		}
		defer r.cleanup()
		argv, recorded, programEnv, saved, save, noStat, debuggerEnv, logVersion = r.argv, r.log, r.programEnv, r.session, r.save, r.noStat, r.env, r.logVersion
		*personality = r.personality
	}
	if *personality != "" {
		p, err = P.Named(*personality)
	} else {
		p, err = P.ForArgv(argv)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fred: %v\n", err)
		return 2
	}

	interactive := readline.IsTerminal(int(os.Stdin.Fd())) && !*batch
	term := newTerminal(interactive)
	opt := fred.Options{Personality: p, Argv: argv, Out: os.Stdout, Timeout: *timeout, Batch: !interactive,
		Snapshots: *snapshots, Dir: *dir, Keep: *keep, CriuPath: *criuPath, Forwarding: term.forwarding,
		Colour: colour(interactive), NoReplayLog: *noLog, MaxMemory: *maxMem << 20, Recording: recorded, ProgramEnv: programEnv, RecordingNoStat: noStat, RecordingLogVersion: logVersion, Env: debuggerEnv}
	opt.Save = func(q fred.SaveRequest) error {
		if !filepath.IsAbs(q.Dir) {
			q.Dir = filepath.Join(startDir, q.Dir) // (a replay runs in the recorded directory)
		}
		switch {
		case q.Check:
			return recording.CheckDir(q.Dir)
		case save != nil:
			return save(q.Dir, q.Log, q.Session, q.Say)
		}
		return saveLive(q, startDir)
	}
	if interactive {
		if ws, err := pty.GetsizeFull(os.Stdin); err == nil {
			opt.Size = ws
		}
	}
	// Programs CRIU restores come back as orphans; fred must be the one to
	// reap them.
	if err := proc.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "fred: cannot become a subreaper: %v\n", err)
	}
	s, err := fred.Start(opt)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fred: %v\n", err)
		return 1
	}
	defer s.Close()
	if path, why := s.ReplayLog(); path == "" {
		fmt.Printf("fred: %s\n", why)
	}
	term.sess = s
	term.start()
	defer term.stop()
	if saved != nil {
		if err := s.Resume(saved); err != nil {
			if errors.Is(err, fred.ErrSessionOver) {
				return exitStatus(s)
			}
			fmt.Printf("fred: the saved session could not be opened at its moment: %v\n", err)
		}
	}

	for _, f := range scripts {
		if err := s.Source(f); err != nil {
			if errors.Is(err, fred.ErrSessionOver) {
				return exitStatus(s)
			}
			fmt.Fprintf(os.Stderr, "fred: %v\n", err)
			return 1
		}
	}
	if *batch {
		return exitStatus(s)
	}
	if interactive {
		return term.loop()
	}
	return plainLoop(s)
}

// dapCmd is `fred dap [--listen ADDR]`: the Debug Adapter Protocol on
// standard input and output, or for one client on a TCP address.
func dapCmd(args []string) int {
	fs := flag.NewFlagSet("fred dap", flag.ContinueOnError)
	listen := fs.String("listen", "", "serve one client on `ADDR` (host:port) instead of standard input and output")
	timeout := fs.Duration("timeout", 30*time.Second, "`DURATION` fred waits for each answer it asks the debugger for")
	snapshots := fs.String("snapshots", "auto", "snapshot backend: auto, criu, fork or off")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := proc.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "fred: cannot become a subreaper: %v\n", err)
	}
	opt := dap.Options{Timeout: *timeout, Snapshots: *snapshots}
	// An editor ends its adapter with SIGTERM: the debugger and the
	// program go with it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	var err error
	if *listen == "" {
		err = dap.Serve(ctx, os.Stdin, os.Stdout, opt)
	} else {
		var l net.Listener
		if l, err = net.Listen("tcp", *listen); err == nil {
			fmt.Fprintf(os.Stderr, "fred dap: listening on %s\n", l.Addr())
			// A SIGTERM while no client came ends the wait too.
			go func() { <-ctx.Done(); l.Close() }()
			var c net.Conn
			c, err = l.Accept()
			l.Close()
			if ctx.Err() != nil {
				return 0
			}
			if err == nil {
				err = dap.Serve(ctx, c, c, opt)
				c.Close()
			}
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fred dap: %v\n", err)
		return 1
	}
	return 0
}

// personalityCmd is `fred personality NAME`: a built-in personality's
// file on standard output.
func personalityCmd(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: fred personality NAME   (gdb, lldb, pdb, perl)")
		return 2
	}
	text, err := P.BuiltinFile(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "fred: %v\n", err)
		return 2
	}
	fmt.Print(text)
	return 0
}

// replaylogCmd is `fred replaylog dump FILE`: a replay log, readable.
func replaylogCmd(args []string) int {
	if len(args) != 2 || args[0] != "dump" {
		fmt.Fprintln(os.Stderr, "usage: fred replaylog dump FILE")
		return 2
	}
	if err := replaylog.Dump(os.Stdout, args[1], 0); err != nil {
		fmt.Fprintf(os.Stderr, "fred: %v\n", err)
		return 1
	}
	return 0
}

func exitStatus(s *fred.Session) int {
	if s.Failed() > 0 {
		return 1
	}
	return 0
}

// plainLoop reads commands from a stdin that is not a terminal.
func plainLoop(s *fred.Session) int {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if err := s.Exec(sc.Text()); errors.Is(err, fred.ErrSessionOver) {
			return exitStatus(s)
		} else if err != nil {
			fmt.Printf("fred: %v\n", err)
		}
	}
	return exitStatus(s)
}

// terminal owns the person's terminal: readline at the prompt, and raw
// pass-through to the debugger's pty while a command runs.
type terminal struct {
	interactive bool
	sess        *fred.Session
	rl          *readline.Instance
	// lines, on a dumb terminal (Emacs' shell, M-x gdb), reads plain lines
	// in place of readline, which would draw each key with escape codes
	// there; the terminal edits the line itself. atPrompt: fred waits there.
	lines    *bufio.Reader
	atPrompt bool

	mu      sync.Mutex
	toPTY   bool
	raw     *readline.State
	pw      *io.PipeWriter
	sigs    chan os.Signal
	stopped chan struct{}
}

func newTerminal(interactive bool) *terminal {
	return &terminal{interactive: interactive, stopped: make(chan struct{})}
}

func (t *terminal) forwarding(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.toPTY = on
	if !t.interactive {
		return
	}
	fd := int(os.Stdin.Fd())
	if on && t.raw == nil {
		// Raw, so Ctrl-C and every key reach the pty, whose own line
		// discipline echoes and signals as under plain gdb.
		if st, err := readline.MakeRaw(fd); err == nil {
			t.raw = st
		}
	} else if !on && t.raw != nil {
		_ = readline.Restore(fd, t.raw)
		t.raw = nil
	}
}

func (t *terminal) start() {
	t.sigs = make(chan os.Signal, 4)
	signal.Notify(t.sigs, syscall.SIGINT, syscall.SIGWINCH, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for {
			select {
			case sig := <-t.sigs:
				switch sig {
				case syscall.SIGINT:
					// Outside raw mode (stdin not a terminal, or during a
					// fred command) Ctrl-C stops the fred command or
					// interrupts the program; at a dumb terminal's
					// prompt it drops the line, as gdb's Quit.
					t.mu.Lock()
					atPrompt := t.atPrompt
					t.mu.Unlock()
					if atPrompt {
						fmt.Print("Quit\n" + t.sess.Prompt())
						continue
					}
					t.sess.Interrupt()
				case syscall.SIGWINCH:
					if ws, err := pty.GetsizeFull(os.Stdin); err == nil {
						t.sess.Resize(ws)
					}
				default:
					// Leave the person's terminal as it was found.
					t.forwarding(false)
					if t.rl != nil {
						t.rl.Close()
					}
					t.sess.Close()
					os.Exit(128 + int(sig.(syscall.Signal)))
				}
			case <-t.stopped:
				return
			}
		}
	}()
	if !t.interactive {
		return
	}
	pr, pw := io.Pipe()
	t.pw = pw
	if os.Getenv("TERM") == "dumb" {
		t.lines = bufio.NewReader(pr)
		go t.readStdin(pw)
		return
	}
	cfg := &readline.Config{
		Prompt:          t.sess.Prompt(),
		HistoryFile:     historyFile(),
		AutoComplete:    completer{},
		Stdin:           pr,
		InterruptPrompt: "^C",
		EOFPrompt:       "quit",
		FuncGetWidth: func() int {
			if w := readline.GetScreenWidth(); w > 0 {
				return w
			}
			return 80 // a pty nobody sized
		},
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fred: readline: %v\n", err)
		return
	}
	t.rl = rl
	go t.readStdin(pw)
}

// readStdin hands what the person types to the debugger's pty while a
// command runs, and to the prompt's reader (pw) otherwise.
func (t *terminal) readStdin(pw *io.PipeWriter) {
	b := make([]byte, 4096)
	for {
		n, err := os.Stdin.Read(b)
		if n > 0 {
			t.mu.Lock()
			toPTY := t.toPTY
			t.mu.Unlock()
			if !toPTY || !t.sess.Input(b[:n]) {
				// At the prompt, or typed as the command ended.
				_, _ = pw.Write(append([]byte(nil), b[:n]...))
			}
		}
		if err != nil {
			pw.CloseWithError(err)
			return
		}
	}
}

func (t *terminal) stop() {
	close(t.stopped)
	signal.Stop(t.sigs)
	if t.rl != nil {
		t.rl.Close()
	}
}

func (t *terminal) loop() int {
	var read func() (string, error)
	switch {
	case t.lines != nil:
		read = t.readPlain
	case t.rl != nil:
		read = t.readEdited
	default:
		return plainLoop(t.sess)
	}
	for {
		line, err := read()
		if errors.Is(err, errQuit) {
			fmt.Println("Quit")
			continue
		}
		if err != nil && line == "" {
			// Ctrl-D: quit as gdb does, without asking.
			_ = t.sess.Close()
			return exitStatus(t.sess)
		}
		if err := t.sess.Exec(line); errors.Is(err, fred.ErrSessionOver) {
			return exitStatus(t.sess)
		} else if err != nil {
			fmt.Printf("fred: %v\n", err)
		}
	}
}

// readEdited reads a line with readline: editing, history, completion.
func (t *terminal) readEdited() (string, error) {
	t.rl.SetPrompt(t.sess.Prompt())
	line, err := t.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errQuit
	}
	return line, err
}

// readPlain reads a line on a dumb terminal: the prompt, and the line as
// the terminal sends it.
func (t *terminal) readPlain() (string, error) {
	t.mu.Lock()
	t.atPrompt = true
	t.mu.Unlock()
	fmt.Print(t.sess.Prompt())
	line, err := readLine(t.lines)
	t.mu.Lock()
	t.atPrompt = false
	t.mu.Unlock()
	if err != nil && !errors.Is(err, errQuit) && line == "" {
		fmt.Println("quit") // as readline shows Ctrl-D
	}
	return line, err
}

// errQuit is Ctrl-C typed at the prompt.
var errQuit = errors.New("Quit")

// readLine reads a line ended by a newline, a carriage return or both:
// a dumb terminal in cooked mode sends the first, one in raw mode (no
// line discipline) the second. A backspace there erases a character.
func readLine(r *bufio.Reader) (string, error) {
	var line []rune
	for {
		c, _, err := r.ReadRune()
		if err != nil {
			return string(line), err
		}
		switch c {
		case '\r':
			if r.Buffered() > 0 {
				if n, _ := r.Peek(1); n[0] == '\n' {
					_, _ = r.ReadByte()
				}
			}
			return string(line), nil
		case '\n':
			return string(line), nil
		case 3:
			// Ctrl-C in raw mode, where it is no signal.
			return "", errQuit
		case 4:
			// Ctrl-D in raw mode, on an empty line: the end.
			if len(line) == 0 {
				return "", io.EOF
			}
		case 0x7f, '\b':
			if len(line) > 0 {
				line = line[:len(line)-1]
			}
		default:
			line = append(line, c)
		}
	}
}

func historyFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir = filepath.Join(dir, "fred")
	if os.MkdirAll(dir, 0o700) != nil {
		return ""
	}
	return filepath.Join(dir, "history")
}

// completer completes fred's commands at the start of a line.
type completer struct{}

func (completer) Do(line []rune, pos int) ([][]rune, int) {
	word := string(line[:pos])
	if strings.ContainsAny(word, " \t") || !strings.HasPrefix("fred-", word) && !strings.HasPrefix(word, "fred-") {
		return nil, 0
	}
	var out [][]rune
	for _, n := range fred.Completions() {
		if strings.HasPrefix(n, word) {
			out = append(out, []rune(n[len(word):]+" "))
		}
	}
	return out, len(word)
}

// runDemo is fred --demo [LANG].
func runDemo(args []string, snapshots string, timeout time.Duration) int {
	if len(args) > 1 {
		fmt.Fprintln(os.Stderr, "fred: --demo takes one debugger: gdb, lldb, pdb or perl")
		return 2
	}
	lang := "gdb"
	if len(args) == 1 {
		lang = args[0]
	}
	if err := proc.BecomeSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "fred: cannot become a subreaper: %v\n", err)
	}
	interactive := readline.IsTerminal(int(os.Stdin.Fd()))
	err := demo.Run(demo.Options{Lang: lang, In: os.Stdin, Out: os.Stdout, Interactive: interactive,
		Snapshots: snapshots, Timeout: timeout, Colour: colour(interactive)})
	switch {
	case errors.Is(err, demo.ErrStopped):
		fmt.Println("\nfred: demo stopped")
		return 0
	case err != nil:
		fmt.Fprintf(os.Stderr, "fred: %v\n", err)
		return 1
	}
	return 0
}

// colour says whether the person sees colours: fred's and the debugger's
// own go only to a terminal that shows them.
func colour(interactive bool) bool {
	return interactive && readline.IsTerminal(int(os.Stdout.Fd())) && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}
