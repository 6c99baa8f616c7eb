package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/replaylog"
)

// SessionFile is a saved session's history (fred-save), the session
// part of a recording.
const SessionFile = "session.json"

// RoleSession is the saved session's part.
const RoleSession = "session"

// Save writes a saved session at dst: the recording m (at src) with the
// session's replay log as it is now (log, cut at its end) in place of the
// recorded one, and the session's history (session). Files shared with
// the recording are copied (a damaged one damages no other). Nothing is
// left at dst when it fails.
func Save(src string, m *Manifest, dst, log string, session []byte, fred string, say func(string, ...any)) (err error) {
	if dst, err = filepath.Abs(dst); err != nil {
		return err
	}
	undo, err := makeDir(dst)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	h, err := replaylog.ReadHeader(log)
	if err != nil {
		return fmt.Errorf("the session's replay log: %w", err)
	}
	out := *m
	out.Parts = nil
	out.Fred, out.Saved = fred, time.Now().UTC().Format(time.RFC3339)
	out.LogBytes, out.LogCounts = h.End-replaylog.HeaderSize, h.Count
	for _, p := range m.Parts {
		if p.Role == RoleLog || p.Role == RoleSession {
			continue
		}
		if err := copyFile(filepath.Join(dst, p.File), filepath.Join(src, p.File)); err != nil {
			return err
		}
		out.Parts = append(out.Parts, p)
	}
	logPart, err := compressFile(filepath.Join(dst, LogFile+".zst"), log, int64(h.End), RoleLog, LogFile+".zst")
	if err != nil {
		return err
	}
	out.Parts = append(out.Parts, logPart)
	// (past the recording's end the session read as sessions do)
	refs, changed, err := storeReferenced(dst, log, m.Parts)
	if err != nil {
		return err
	}
	out.Parts = append(out.Parts, refs...)
	if len(changed) > 0 && say != nil {
		say("not saved, changed since the program read them (a replay stops at their reads): %s", strings.Join(changed, ", "))
	}
	if err := os.WriteFile(filepath.Join(dst, SessionFile), session, 0o644); err != nil {
		return err
	}
	sum, n, err := hashFile(filepath.Join(dst, SessionFile))
	if err != nil {
		return err
	}
	out.Parts = append(out.Parts, Part{Role: RoleSession, File: SessionFile, SHA256: sum, Size: n})
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dst, ManifestFile), append(b, '\n'), 0o644)
}

// Session is the saved session's history in the recording at dir (nil:
// it is a plain recording). Read has checked it.
func (m *Manifest) Session(dir string) ([]byte, error) {
	p, ok := m.Part(RoleSession, "")
	if !ok {
		return nil, nil
	}
	return os.ReadFile(filepath.Join(dir, p.File))
}

// Live is a live session's run to save (fred-save in a session that
// does not replay a recording): the program, stopped under its debugger,
// and the session's replay log.
type Live struct {
	Dir, Log string
	Session  []byte
	Pid      int
	Argv     []string // the program's command line, argv[0] as run
	Debugger string
	Fred     string
	Cwd      string // where the program started ("": where it is now)
	// Env is the environment the program started with, when the caller
	// knows it (an in-process debugger's: perl writes $0 over what /proc
	// shows); nil: /proc's.
	Env []string
	// Say tells the person what the save could not keep (files changed
	// since the program read them).
	Say func(format string, args ...any)
}

// SaveLive writes a saved session of a live run: the program's
// executable and the files it has mapped (from /proc), its environment
// and directory, the session's replay log, cut at its end, the files it
// read by reference (a debugging session's log keeps only where a large
// file's bytes are), and the session's history.
func SaveLive(o Live) (err error) {
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return err
	}
	proc := func(what string) string { return fmt.Sprintf("/proc/%d/%s", o.Pid, what) }
	exe, err := os.Readlink(proc("exe"))
	if err != nil {
		return fmt.Errorf("the program (pid %d): %w", o.Pid, err)
	}
	// (rebuilt since it started: the running one is kept, from /proc)
	exe, rebuilt := strings.CutSuffix(exe, " (deleted)")
	cwd := o.Cwd
	if cwd == "" {
		cwd, _ = os.Readlink(proc("cwd"))
	}
	environ, err := os.ReadFile(proc("environ"))
	if err != nil {
		return fmt.Errorf("the program's environment: %w", err)
	}
	if o.Env != nil {
		environ = []byte(strings.Join(o.Env, "\x00"))
	}
	h, err := replaylog.ReadHeader(o.Log)
	if err != nil {
		return fmt.Errorf("the session's replay log: %w", err)
	}
	undo, err := makeDir(o.Dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			undo()
		}
	}()
	host, kernel, arch, flags := Machine()
	now := time.Now().UTC().Format(time.RFC3339)
	m := &Manifest{Fred: o.Fred, Recorded: now, Saved: now, Host: host, Kernel: kernel, Arch: arch, CPUFlags: flags, KernelFeatures: KernelFeatures(),
		Debugger: o.Debugger, Argv: o.Argv, Exe: exe, Env: programEnv(environ), Cwd: cwd,
		Exit: Exit{Status: -1}, LogBytes: h.End - replaylog.HeaderSize, LogCounts: h.Count, LogVersion: CurrentLog}
	if len(m.Argv) == 0 {
		m.Argv = []string{exe}
	}
	logPart, err := compressFile(filepath.Join(o.Dir, LogFile+".zst"), o.Log, int64(h.End), RoleLog, LogFile+".zst")
	if err != nil {
		return err
	}
	m.Parts = append(m.Parts, logPart)
	mapped := map[string]bool{}
	mappedFiles(o.Pid, mapped)
	src := exe
	if rebuilt {
		src = proc("exe")
	}
	parts, err := storeProgram(o.Dir, exe, src, mapped, o.Log)
	if err != nil {
		return err
	}
	m.Parts = append(m.Parts, parts...)
	refs, changed, err := storeReferenced(o.Dir, o.Log, nil)
	if err != nil {
		return err
	}
	m.Parts = append(m.Parts, refs...)
	if len(changed) > 0 && o.Say != nil {
		o.Say("not saved, changed since the program read them (a replay stops at their reads): %s", strings.Join(changed, ", "))
	}
	// The sources, for the debugger to list (and pdb to compile the
	// script) as they were: C's from the debug info, a Python script.
	var sources []string
	switch {
	case o.Debugger == "gdb":
		sources = compiledSources(src)
	case o.Debugger == "pdb" && len(m.Argv) > 1 && m.Argv[1] != "-m":
		p := m.Argv[1]
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if p, err := filepath.Abs(p); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			sources = []string{p}
		}
	}
	srcParts, edited := storeSources(o.Dir, sources, processStart(o.Pid))
	m.Parts = append(m.Parts, srcParts...)
	if len(edited) > 0 && o.Say != nil {
		o.Say("not saved, edited since the program started (a replay shows them as they are then): %s", strings.Join(edited, ", "))
	}
	if err := os.WriteFile(filepath.Join(o.Dir, SessionFile), o.Session, 0o644); err != nil {
		return err
	}
	sum, n, err := hashFile(filepath.Join(o.Dir, SessionFile))
	if err != nil {
		return err
	}
	m.Parts = append(m.Parts, Part{Role: RoleSession, File: SessionFile, SHA256: sum, Size: n})
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.Dir, ManifestFile), append(b, '\n'), 0o644)
}

// programEnv is a program's environment (/proc/PID/environ) without what
// fred and its debugger put there: fred's libraries in LD_PRELOAD, the
// replay log's settings, the debuggers' bootstraps, gdb's LINES and
// COLUMNS.
func programEnv(environ []byte) []string {
	var env []string
	for _, kv := range strings.Split(string(environ), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok, strings.HasPrefix(k, "FREDLOG_"), strings.HasPrefix(k, "FRED_"), k == "PERL5DB", k == "LINES", k == "COLUMNS":
			continue
		case k == "LD_PRELOAD":
			var keep []string
			for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == ':' || r == ' ' }) {
				if !ownLibrary(l) {
					keep = append(keep, l)
				}
			}
			if len(keep) == 0 {
				continue
			}
			kv = k + "=" + strings.Join(keep, ":")
		}
		env = append(env, kv)
	}
	return env
}

// ownLibrary says whether path is one of fred's libraries (the replay
// log's, gdb's register helper), built as NAME-HASH.so.
func ownLibrary(path string) bool {
	b := filepath.Base(path)
	return (strings.HasPrefix(b, "fredlog-") || strings.HasPrefix(b, "fredxstate-")) && strings.HasSuffix(b, ".so")
}

// storeReferenced stores each file the log read by reference (where it
// read, which version), but those it has, that is still that version at
// its path; the others are named in changed.
func storeReferenced(dir, log string, have []Part) (parts []Part, changed []string, err error) {
	seen := map[replaylog.FileID]bool{}
	for _, p := range have {
		if p.ID != nil {
			seen[*p.ID] = true
		}
	}
	var serr error
	err = replaylog.Scan(log, func(e replaylog.Entry) bool {
		if e.Kind != replaylog.FileRead || seen[e.File] {
			return true
		}
		seen[e.File] = true
		if e.FilePath == "" {
			changed = append(changed, fmt.Sprintf("inode %d of device %d (its path could not be read when the program read it)", e.File.Ino, e.File.Dev))
			return true
		}
		p, ok, err := storeVersion(dir, e.FilePath, e.File)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			serr = fmt.Errorf("storing %s: %w", e.FilePath, err)
			return false
		case !ok:
			changed = append(changed, e.FilePath)
		default:
			parts = append(parts, p)
		}
		return true
	})
	if err != nil {
		return nil, nil, fmt.Errorf("the session's replay log: %w", err)
	}
	return parts, changed, serr
}

// storeVersion stores the file at path if it is still the version id
// (ok false: it is not, or it is gone).
func storeVersion(dir, path string, id replaylog.FileID) (Part, bool, error) {
	// (non-blocking: a FIFO there now does not hang the save)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Part{}, false, err
	}
	defer f.Close()
	if !sameVersion(f, id) {
		return Part{}, false, nil
	}
	p, err := storeFrom(dir, RoleRead, path, fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return Part{}, false, err
	}
	p.ID = &id
	// (a write while it was copied moves its ctime)
	return p, sameVersion(f, id), nil
}

// sameVersion says whether the open file f is the version id.
func sameVersion(f *os.File, id replaylog.FileID) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && uint64(sys.Dev) == id.Dev && sys.Ino == id.Ino && uint64(sys.Size) == id.Size &&
		sys.Mtim.Nano() == id.Mtime && sys.Ctim.Nano() == id.Ctime
}

// ExtractReferenced puts the files a saved session read by reference
// that are not that version here (another machine, or changed since) in
// dir, and returns the replay library's table of them (FREDLOG_REFS;
// "": none needed) and their paths.
func ExtractReferenced(src string, m *Manifest, dir string) (string, []string, error) {
	var table strings.Builder
	var paths []string
	for _, p := range m.Parts {
		if p.Role != RoleRead || p.ID == nil {
			continue
		}
		if f, err := os.OpenFile(p.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			same := sameVersion(f, *p.ID)
			f.Close()
			if same {
				continue
			}
		}
		dst := filepath.Join(dir, p.SHA256)
		if err := Extract(src, p, dst); err != nil {
			return "", nil, err
		}
		id := p.ID
		fmt.Fprintf(&table, "%d %d %d %d %d %s\n", id.Dev, id.Ino, id.Size, id.Mtime, id.Ctime, dst)
		paths = append(paths, p.Path)
	}
	if table.Len() == 0 {
		return "", nil, nil
	}
	path := filepath.Join(dir, "table")
	return path, paths, os.WriteFile(path, []byte(table.String()), 0o644)
}

// processStart is when process pid started, in ns since the epoch (0:
// unknown): its start in clock ticks since boot (100 a second on Linux)
// after /proc/stat's boot time.
func processStart(pid int) int64 {
	ticks := proc.StartTime(pid)
	st, err := os.ReadFile("/proc/stat")
	if ticks == 0 || err != nil {
		return 0
	}
	for _, l := range strings.Split(string(st), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			boot, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0
			}
			// (btime is whole seconds: a second's slack, so that a file
			// written just before the start counts as before)
			return (boot+1)*1e9 + int64(ticks)*1e7
		}
	}
	return 0
}
