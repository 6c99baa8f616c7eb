package recording

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"github.com/fred-debugger/fred/replaylog"
)

// Options is what Record needs.
type Options struct {
	Dir  string   // the recording's directory: made, must not hold anything
	Argv []string // the program and its arguments, argv[0] as given
	Fred string   // fred's version, for the manifest
	// Run is the command line run, when it is not Argv: an interpreter
	// with the bootstrap of the debugger that replays it (whose start the
	// log then skips as it does under the debugger). Its Run[0] is the
	// executable stored.
	Run []string
	// Debugger is the personality that replays it (default gdb);
	// InProcess says it runs inside the program (the log's settings).
	Debugger  string
	InProcess bool
	Script    string   // a Python script's path as given (pdb's target): kept if its run lists none
	Env       []string // added to the program's environment, not kept
	// Stdin, Stdout and Stderr are the program's (nil: fred's own).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Result is a recorded run.
type Result struct {
	Manifest *Manifest
	Notice   string // the replay log's latest message, if any
	// Changed are sources edited while the program ran: not kept.
	Changed []string
}

// logRoom is the log file's room while the program runs (a sparse file:
// only what is written takes space); the recording keeps what was used.
const logRoom = 1 << 30

// Record runs the program without a debugger under the replay log, file
// reads stored in the log, and writes the recording. The program's exit
// status is in the manifest; an error is a recording that could not be
// made (the program may have run).
func Record(o Options) (*Result, error) {
	if len(o.Argv) == 0 {
		return nil, errors.New("no program to record")
	}
	run := o.Run
	if run == nil {
		run = o.Argv
	}
	if o.Debugger == "" {
		o.Debugger = "gdb"
	}
	exe, err := exec.LookPath(run[0])
	if err != nil {
		return nil, err
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return nil, err
	}
	if err := dynamic(exe); err != nil {
		return nil, err
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return nil, err
	}
	undo, err := makeDir(o.Dir)
	if err != nil {
		return nil, err
	}
	// A recording that could not be made leaves nothing behind.
	made := false
	defer func() {
		if !made {
			undo()
		}
	}()
	lib, err := replaylog.Preload("")
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	env := os.Environ()
	tmp := filepath.Join(o.Dir, LogFile+".recording")
	defer os.Remove(tmp)
	// The program's files are stored while it runs, on the other CPU,
	// as it maps them: the recording's cost is mostly the program's own.
	st := newStorer(o.Dir, exe, lib, tmp)
	defer st.close()
	// (its debug info's sources, looked for on the other CPU meanwhile:
	// a large program's line tables take a while)
	compiled := make(chan []string, 1)
	go func() {
		if o.Debugger == "pdb" {
			compiled <- nil
			return
		}
		compiled <- compiledSources(exe)
	}()
	loader := make(chan struct{})
	go func() {
		defer close(loader)
		for _, l := range neededLibraries(exe, env) {
			st.add(l)
		}
	}()
	runEnv := append(append(append([]string{}, env...), o.Env...), replaylog.Env(tmp, o.InProcess)...)
	// (pdb's bootstrap lists the script and modules it ran, for the
	// replay to compile and list them as they were)
	sourceList := filepath.Join(o.Dir, ".sources")
	defer os.Remove(sourceList)
	if o.Debugger == "pdb" {
		runEnv = append(runEnv, SourcesEnv+"="+sourceList)
	}
	// Reads and metadata kept whole: the replay does not need the files.
	runEnv = append(runEnv, "FREDLOG_STORE=-1", "FREDLOG_STAT=1", fmt.Sprintf("FREDLOG_SIZE=%d", logRoom), "LD_PRELOAD="+replaylog.JoinPreload(lib, os.Getenv("LD_PRELOAD")))
	cmd := exec.Command(exe, run[1:]...)
	cmd.Args[0] = run[0]
	cmd.Env = runEnv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	if cmd.Stdin == nil {
		cmd.Stdin = os.Stdin
	}
	if cmd.Stdout == nil {
		cmd.Stdout = os.Stdout
	}
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	// Ctrl-C and its kin are the program's: fred waits for it to end. (A
	// handler, not SIG_IGN, which the program would inherit.)
	// (Ctrl-Z is left alone: it stops fred and the program, as a shell's job)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	started := time.Now()
	if err := startNoASLR(cmd); err != nil {
		return nil, err
	}
	// The libraries it maps, dlopen'ed ones too: looked at while it runs.
	mapped := map[string]bool{}
	done := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			for l := range mappedFiles(cmd.Process.Pid, mapped) {
				st.add(l)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	// The log's entries are compressed as the program writes them, on the
	// other CPU (its header, which changes to the end, goes first after).
	lz := followLog(tmp, filepath.Join(o.Dir, ".entries.zst"))
	defer lz.abort() // (after finish: nothing)
	werr := cmd.Wait()
	close(done)
	<-polled
	var exit Exit
	if cmd.ProcessState == nil {
		return nil, werr
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		exit = Exit{Status: 128 + int(ws.Signal()), Signal: signalName(ws.Signal())}
	} else {
		exit.Status = cmd.ProcessState.ExitCode()
	}

	h, err := replaylog.ReadHeader(tmp)
	if err != nil {
		return nil, fmt.Errorf("the replay log of the run: %w", err)
	}
	if h.Count == 0 && h.End <= replaylog.HeaderSize && h.Cuts == 0 {
		return nil, errors.New("the program ran without the replay log's library (nothing was recorded)")
	}
	if strings.Contains(h.Notice, "the log is full") {
		return nil, fmt.Errorf("the run did not fit in the log (%d bytes): nothing is kept", logRoom)
	}
	logPart, err := lz.finish(filepath.Join(o.Dir, LogFile+".zst"), int64(h.End))
	if err != nil {
		return nil, err
	}
	host, kernel, arch, flags := Machine()
	m := &Manifest{Fred: o.Fred, Recorded: started.UTC().Format(time.RFC3339), Host: host, Kernel: kernel,
		Arch: arch, CPUFlags: flags, KernelFeatures: KernelFeatures(), Debugger: o.Debugger, Argv: o.Argv, Exe: exe, Env: env, Cwd: cwd,
		Exit: exit, LogBytes: h.End - replaylog.HeaderSize, LogCounts: h.Count, LogVersion: CurrentLog}
	m.Parts = append(m.Parts, logPart)
	<-loader
	parts, err := st.close()
	if err != nil {
		return nil, err
	}
	m.Parts = append(m.Parts, parts...)
	sources := <-compiled
	if o.Debugger == "pdb" {
		sources = listedSources(sourceList)
		if len(sources) == 0 && o.Script != "" {
			// (no list: the run ended by os._exit or a signal) the script
			if p, err := filepath.Abs(o.Script); err == nil {
				if r, err := filepath.EvalSymlinks(p); err == nil {
					p = r
				}
				sources = []string{p}
			}
		}
	}
	srcParts, changed := storeSources(o.Dir, sources, started.UnixNano())
	m.Parts = append(m.Parts, srcParts...)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(o.Dir, ManifestFile), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	made = true
	if len(changed) > 0 {
		// (the replay compiles and lists the file as it is then)
		return &Result{Manifest: m, Notice: h.Notice, Changed: changed}, nil
	}
	return &Result{Manifest: m, Notice: h.Notice}, nil
}

// logFollower compresses a log's entries (past its header) while the
// program writes them.
type logFollower struct {
	log, out string
	stop     chan int64 // the log's end, once the program is over
	done     chan error
	over     bool // finish or abort took its result
}

func followLog(log, out string) *logFollower {
	f := &logFollower{log: log, out: out, stop: make(chan int64, 1), done: make(chan error, 1)}
	go func() { f.done <- f.run() }()
	return f
}

func (f *logFollower) run() error {
	o, err := os.Create(f.out)
	if err != nil {
		return err
	}
	defer o.Close()
	enc, err := zstd.NewWriter(o, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	var in *os.File
	at, end := int64(replaylog.HeaderSize), int64(-1)
	buf := make([]byte, 1<<20)
	for {
		if in == nil {
			in, _ = os.Open(f.log) // (made by the library as the program starts)
		}
		upto := end
		if upto < 0 {
			if h, err := replaylog.ReadHeader(f.log); err == nil {
				upto = int64(h.End)
			}
		}
		for in != nil && at < upto {
			n, err := in.ReadAt(buf[:min(int64(len(buf)), upto-at)], at)
			if n > 0 {
				if _, err := enc.Write(buf[:n]); err != nil {
					return err
				}
				at += int64(n)
			}
			if err != nil {
				break
			}
		}
		if end >= 0 {
			break
		}
		select {
		case end = <-f.stop:
			if end == -2 {
				enc.Close()
				return errors.New("stopped")
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	if in != nil {
		in.Close()
	}
	if end >= 0 && at != end {
		enc.Close()
		return fmt.Errorf("the log's entries: %d bytes read of %d", at, end)
	}
	return enc.Close()
}

// abort stops the follower, if finish did not, and takes its file away.
func (f *logFollower) abort() {
	if !f.over {
		f.over = true
		f.stop <- -2
		<-f.done
	}
	os.Remove(f.out)
}

// finish compresses the rest of the log, up to end, and writes it at dst:
// its header's frame, then the entries' (zstd frames follow each other).
func (f *logFollower) finish(dst string, end int64) (Part, error) {
	f.over = true
	f.stop <- end
	if err := <-f.done; err != nil {
		return Part{}, err
	}
	// the header's frame, then the entries' frames after it
	part, err := compressFile(dst, f.log, replaylog.HeaderSize, RoleLog, filepath.Base(dst))
	if err != nil {
		return Part{}, err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return Part{}, err
	}
	e, err := os.Open(f.out)
	if err == nil {
		_, err = io.Copy(out, e)
		e.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Part{}, err
	}
	// the content's checksum and size: header and entries
	in, err := os.Open(f.log)
	if err != nil {
		return Part{}, err
	}
	defer in.Close()
	h := sha256.New()
	if part.Size, err = io.Copy(h, io.LimitReader(in, end)); err == nil && part.Size != end {
		err = io.ErrUnexpectedEOF
	}
	part.SHA256 = hex.EncodeToString(h.Sum(nil))
	return part, err
}

// storeProgram stores the executable and the files the program mapped
// (its shared libraries), but for the log itself (by any of its names)
// and fred's own libraries.
func storeProgram(dir, exe, src string, mapped map[string]bool, log string) ([]Part, error) {
	p, err := storeFrom(dir, RoleExecutable, exe, src)
	if err != nil {
		return nil, fmt.Errorf("storing the executable: %w", err)
	}
	parts := []Part{p}
	delete(mapped, exe)
	logInfo, _ := os.Stat(log)
	libs := make([]string, 0, len(mapped))
	for l := range mapped {
		if st, err := os.Stat(l); err == nil && logInfo != nil && os.SameFile(st, logInfo) || ownLibrary(l) {
			continue
		}
		libs = append(libs, l)
	}
	sort.Strings(libs)
	for _, l := range libs {
		p, err := store(dir, RoleLibrary, l)
		if err != nil {
			continue // gone since (a temporary file it mapped): not needed to replay
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// dynamic: the replay log is a preloaded library, which only a
// dynamically linked program (one with an interpreter, PT_INTERP) loads.
func dynamic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not a compiled program (an ELF file): fred record runs C and C++ programs, and Python and Perl scripts through their interpreter", path)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return nil
		}
	}
	return fmt.Errorf("%s is linked statically: the replay log is a library the dynamic loader preloads, which a static program does not load", path)
}

// makeDir makes the recording's directory; one that exists must be empty.
// It returns how to take it away again (a directory that was there,
// empty, stays: what was written in it goes).
func makeDir(dir string) (undo func(), err error) {
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	_, err = os.Stat(dir)
	existed := err == nil
	if err := os.MkdirAll(filepath.Join(dir, filesDir), 0o755); err != nil {
		return nil, err
	}
	return func() {
		if !existed {
			os.RemoveAll(dir)
			return
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}, nil
}

// CheckDir says whether dir can take a recording: new, or empty.
func CheckDir(dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s already holds files: give a new directory", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// neededLibraries are the libraries the dynamic loader loads for exe at
// start (LD_TRACE_LOADED_OBJECTS, what ldd asks for), the loader too: a
// program that ends before fred looks at its mappings still has them.
func neededLibraries(exe string, env []string) []string {
	c := exec.Command(exe)
	c.Env = append(append([]string{}, env...), "LD_TRACE_LOADED_OBJECTS=1")
	out, err := c.Output()
	if err != nil {
		return nil
	}
	re := regexp.MustCompile(`(?m)^\s*(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$`)
	var libs []string
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		if p, err := filepath.EvalSymlinks(m[1]); err == nil {
			libs = append(libs, p)
		}
	}
	return libs
}

// mappedFiles adds the regular files pid maps to seen.
func mappedFiles(pid int, seen map[string]bool) (added map[string]bool) {
	added = map[string]bool{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return added
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") || len(f) > 6 {
			continue // anonymous, [heap], or "(deleted)"
		}
		p := f[5]
		if strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/memfd:") {
			continue
		}
		if seen[p] {
			continue
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			seen[p] = true
			added[p] = true
		}
	}
	return added
}

// storer stores a recorded program's files as they are found: the
// executable first, then each library once.
type storer struct {
	dir, exe, lib string
	logInfo       os.FileInfo
	todo          chan string
	done          chan struct{}
	mu            sync.Mutex // seen, closed
	seen          map[string]bool
	pmu           sync.Mutex // parts
	parts         []Part
	err           error
	closed        bool
}

func newStorer(dir, exe, lib, log string) *storer {
	st := &storer{dir: dir, exe: exe, lib: lib, todo: make(chan string, 256), done: make(chan struct{}), seen: map[string]bool{exe: true, lib: true}}
	go func() {
		defer close(st.done)
		p, err := store(dir, RoleExecutable, exe)
		st.parts = append(st.parts, p)
		if err != nil {
			st.err = fmt.Errorf("storing the executable: %w", err)
		}
		for l := range st.todo {
			if st.logInfo == nil {
				st.logInfo, _ = os.Stat(log)
			}
			if fi, err := os.Stat(l); err == nil && st.logInfo != nil && os.SameFile(fi, st.logInfo) || ownLibrary(l) {
				continue // the log itself, which the library maps (by any of its names)
			}
			p, err := store(dir, RoleLibrary, l)
			if err != nil {
				continue // gone since (a temporary file it mapped): not needed to replay
			}
			st.pmu.Lock()
			st.parts = append(st.parts, p)
			st.pmu.Unlock()
		}
	}()
	return st
}

// add stores the file at path, once.
func (st *storer) add(path string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.seen[path] || st.closed {
		return
	}
	st.seen[path] = true
	st.todo <- path // (the worker never takes mu: a full queue only waits)
}

// close waits for the files added so far and returns their parts: the
// executable, then the libraries by path.
func (st *storer) close() ([]Part, error) {
	st.mu.Lock()
	if !st.closed {
		st.closed = true
		close(st.todo)
	}
	st.mu.Unlock()
	<-st.done
	if st.err != nil {
		return nil, st.err
	}
	libs := st.parts[1:]
	sort.Slice(libs, func(i, j int) bool { return libs[i].Path < libs[j].Path })
	return st.parts, nil
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return s.String()
}

// startNoASLR starts cmd with address-space randomisation off, as the
// replay log wants it (else its library runs the program again so).
// Personality is a thread's, inherited by what it forks: set on this
// thread, locked, for the fork, then put back.
func startNoASLR(cmd *exec.Cmd) error {
	const addrNoRandomize = 0x0040000
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, _, e := unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	if e == 0 {
		if _, _, e := unix.RawSyscall(unix.SYS_PERSONALITY, old|addrNoRandomize, 0, 0); e == 0 {
			defer unix.RawSyscall(unix.SYS_PERSONALITY, old, 0, 0)
		}
	}
	return cmd.Start()
}
