// Package recording writes and checks a recording: a program's run under
// the replay log, without a debugger, kept in a directory that
// `fred replay` debugs later, here or on another machine (issue 24).
//
// A recording directory holds:
//
//	manifest.json   what was run (argv, environment, directory), where
//	                (kernel, architecture, CPU flags), with which fred, how
//	                it ended, and one part per file with its SHA-256
//	replay.log.zst  the replay log from the first instruction, file reads
//	                stored in it (FREDLOG_STORE=-1), cut at its end
//	files/SHA256.zst the executable and the shared libraries it mapped,
//	                each stored once by content
//
// (compressed with zstd; checksums and sizes are of the content)
//
//	session.json    for a saved session (fred-save): its history, the
//	                moment it was at, its snapshots' moments, bookmarks
//
// Every part is checked against the manifest before a replay: a truncated
// or altered recording gets one error naming the part, never a replay
// that quietly differs.
package recording

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/replaylog"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"
)

// ManifestFile and LogFile are the recording's fixed names.
const (
	ManifestFile = "manifest.json"
	LogFile      = "replay.log"
	filesDir     = "files"
)

// CurrentLog is the LogVersion of the logs this fred writes.
const CurrentLog = 3

// Part roles.
const (
	RoleLog        = "replay log"
	RoleExecutable = "executable"
	RoleLibrary    = "shared library"
	// RoleRead: a file a saved session's log read by reference (its ID),
	// replayed from here where the file is not that version.
	RoleRead = "file read by reference"
)

// Part is one file of the recording.
type Part struct {
	Role   string `json:"role"`
	Path   string `json:"path,omitempty"` // where it was on the recording machine
	File   string `json:"file"`           // in the recording directory
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	Mode   uint32 `json:"mode,omitempty"`
	// Zstd: the file is kept compressed (zstd); SHA256 and Size are its
	// content's.
	Zstd bool `json:"zstd,omitempty"`
	// ID: a RoleRead part's version, as the log names it.
	ID *replaylog.FileID `json:"id,omitempty"`
}

// Exit is how the recorded run ended.
type Exit struct {
	Status int    `json:"status"`           // the exit status, or 128+signal
	Signal string `json:"signal,omitempty"` // the signal that ended it
}

// Manifest says what a recording holds.
type Manifest struct {
	Fred      string   `json:"fred"`
	Recorded  string   `json:"recorded"`        // RFC 3339
	Saved     string   `json:"saved,omitempty"` // RFC 3339: a saved session (fred-save)
	Host      string   `json:"host"`
	Kernel    string   `json:"kernel"`
	Arch      string   `json:"arch"` // uname -m
	CPUFlags  []string `json:"cpu_flags"`
	Debugger  string   `json:"debugger"` // the personality that fits it
	Argv      []string `json:"argv"`     // argv[0] as given
	Exe       string   `json:"exe"`      // the executable's absolute path
	Env       []string `json:"env"`
	Cwd       string   `json:"cwd"`
	Exit      Exit     `json:"exit"`
	LogBytes  uint64   `json:"log_bytes"`
	LogCounts uint64   `json:"log_entries"`
	// LogVersion is what the log holds: 2 since the scanf family, statx,
	// read-only opens and uname are logged, 3 since lseek's answers and
	// directories' entries are (0: a recording made before 2, replayed
	// without them: LogVersion < CurrentLog).
	LogVersion int `json:"log_version,omitempty"`
	// NoStat: the log holds no file metadata (a live session's, saved):
	// its replay does not ask for it.
	NoStat bool   `json:"log_without_stat,omitempty"`
	Parts  []Part `json:"parts"`

	// KernelFeatures: the system calls of kernelFeatures the recording's
	// kernel had (none listed: a recording made before, not checked).
	KernelFeatures []string `json:"kernel_features,omitempty"`
}

// DamagedError is a recording whose part is missing or differs from what
// the manifest says.
type DamagedError struct {
	Dir, Part, Why string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("the recording %s is damaged: %s %s; it cannot be replayed", e.Dir, e.Part, e.Why)
}

// ErrDamaged matches every DamagedError.
var ErrDamaged = errors.New("damaged recording")

func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// UnfitError is a recording that this machine cannot replay.
type UnfitError struct{ Why string }

func (e *UnfitError) Error() string { return "this recording cannot be replayed here: " + e.Why }

// Machine describes this machine as a manifest does.
func Machine() (host, kernel, arch string, flags []string) {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		host, kernel, arch = unix.ByteSliceToString(u.Nodename[:]), unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Machine[:])
	} else {
		arch = runtime.GOARCH
	}
	return host, kernel, arch, cpuFlags()
}

// cpuFlags are /proc/cpuinfo's first "flags" line, sorted.
func cpuFlags() []string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "flags" {
			fl := strings.Fields(v)
			sort.Strings(fl)
			return fl
		}
	}
	return nil
}

// store copies the file at path into dir/files/SHA256 (once per content)
// and returns its part.
func store(dir, role, path string) (Part, error) { return storeFrom(dir, role, path, path) }

// storeFrom stores the file at from as the one at path (a program's
// executable rebuilt since it started: /proc/PID/exe).
func storeFrom(dir, role, path, from string) (Part, error) {
	src, err := os.Open(from)
	if err != nil {
		return Part{}, err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return Part{}, err
	}
	// A shared library (same inode, size and times) compressed before:
	// fred's cache has it. The cache keeps copies of its own (a link
	// would let a damaged recording damage the others), each with what it
	// was when written (a cache file changed since is not used).
	part := func(sum string, n int64) Part {
		return Part{Role: role, Path: path, File: filepath.Join(filesDir, sum+".zst"), SHA256: sum, Size: n, Mode: uint32(st.Mode().Perm()), Zstd: true}
	}
	cached := ""
	if role == RoleLibrary {
		cached = cachePath(st)
	}
	if cached != "" {
		if sum, n, ok := fromCache(cached, st.Size()); ok && copyFile(filepath.Join(dir, filesDir, sum+".zst"), cached+".zst") == nil {
			return part(sum, n), nil
		}
	}
	tmp, err := os.CreateTemp(filepath.Join(dir, filesDir), ".part-*")
	if err != nil {
		return Part{}, err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	sum, n, err := compress(tmp, src, -1)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Part{}, err
	}
	rel := filepath.Join(filesDir, sum+".zst")
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		if err := os.Rename(tmp.Name(), filepath.Join(dir, rel)); err != nil {
			return Part{}, err
		}
		os.Chmod(filepath.Join(dir, rel), 0o444)
	}
	if cached != "" && os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		toCache(cached, filepath.Join(dir, rel), sum, n)
	}
	return part(sum, n), nil
}

// fromCache is a cache entry's content checksum and size, if the entry
// is whole: its compressed file as it was written.
func fromCache(cached string, size int64) (sum string, n int64, ok bool) {
	b, err := os.ReadFile(cached + ".sum")
	if err != nil {
		return "", 0, false
	}
	var zsize, zmtime int64
	if _, err := fmt.Sscanf(string(b), "%s %d %d %d", &sum, &n, &zsize, &zmtime); err != nil || n != size {
		return "", 0, false
	}
	if zs, err := os.Stat(cached + ".zst"); err != nil || zs.Size() != zsize || zs.ModTime().UnixNano() != zmtime {
		os.Remove(cached + ".sum")
		return "", 0, false
	}
	return sum, n, true
}

// toCache keeps a copy of the compressed file at from as the entry.
func toCache(cached, from, sum string, n int64) {
	tmp := cached + ".new"
	if copyFile(tmp, from) != nil {
		os.Remove(tmp)
		return
	}
	zs, err := os.Stat(tmp)
	if err != nil || os.Rename(tmp, cached+".zst") != nil {
		os.Remove(tmp)
		return
	}
	os.WriteFile(cached+".sum", []byte(fmt.Sprintf("%s %d %d %d\n", sum, n, zs.Size(), zs.ModTime().UnixNano())), 0o644)
}

// copyFile copies the file src to dst (which must not exist), read-only.
func copyFile(dst, src string) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil // stored once by content
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}

// cachePath names a file's compressed copy in fred's cache (without its
// suffix), by what says it is the same file: device, inode, size and
// times ("" without a cache directory).
func cachePath(st os.FileInfo) string {
	sys, ok := st.Sys().(*syscall.Stat_t)
	base, err := os.UserCacheDir()
	if !ok || err != nil {
		return ""
	}
	// A file changed in the last seconds may change again within its
	// times' grain without them moving (git's "racily clean" files).
	if time.Since(time.Unix(0, sys.Ctim.Nano())) < 3*time.Second {
		return ""
	}
	return filepath.Join(base, "fred", "parts", fmt.Sprintf("%x-%x-%d-%d-%d", sys.Dev, sys.Ino, st.Size(), sys.Mtim.Nano(), sys.Ctim.Nano()))
}

// compress writes src's first n bytes (n < 0: all of it) to dst,
// compressed with zstd, and returns their SHA-256 and count.
func compress(dst io.Writer, src io.Reader, n int64) (string, int64, error) {
	if n >= 0 {
		src = io.LimitReader(src, n)
	}
	enc, err := zstd.NewWriter(dst, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	got, err := io.Copy(io.MultiWriter(enc, h), src)
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	if err == nil && n >= 0 && got != n {
		err = io.ErrUnexpectedEOF
	}
	return hex.EncodeToString(h.Sum(nil)), got, err
}

// compressFile writes the first n bytes of the file src to a new file
// dst, compressed: a part of role, as File (its name in the recording).
func compressFile(dst, src string, n int64, role, file string) (Part, error) {
	in, err := os.Open(src)
	if err != nil {
		return Part{}, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Part{}, err
	}
	sum, got, err := compress(out, in, n)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return Part{Role: role, File: file, SHA256: sum, Size: got, Zstd: true}, err
}

// open reads part p's content (decompressed), at dir.
func (p Part) open(dir string) (io.ReadCloser, error) {
	f, err := os.OpenFile(filepath.Join(dir, p.File), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if !p.Zstd {
		return f, nil
	}
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Close()
		return nil, err
	}
	return readCloser{dec.IOReadCloser(), f}, nil
}

// undecodable is a compressed part whose data does not decode.
type undecodable struct{ err error }

func (e *undecodable) Error() string {
	return fmt.Sprintf("its compressed data does not decode (%v)", e.err)
}

type readCloser struct {
	io.ReadCloser
	f *os.File
}

func (r readCloser) Close() error { r.ReadCloser.Close(); return r.f.Close() }

// hashPart is a part's SHA-256 and size, of its content: a regular file
// of the recording's own (a link, a device or a pipe is an error).
func hashPart(dir string, p Part) (string, int64, error) {
	path := filepath.Join(dir, p.File)
	if st, err := os.Lstat(path); err != nil {
		return "", 0, err
	} else if !st.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file", path)
	}
	r, err := p.open(dir)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", n, &undecodable{err}
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// hashFile is a regular file's SHA-256 and size, through links (the
// program's own files: /usr/bin/python3 is one).
func hashFile(path string) (string, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", 0, fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Read reads a recording's manifest and checks every part: each must be
// there with the size and SHA-256 the manifest gives.
func Read(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, derr := os.Stat(dir); derr != nil {
				return nil, fmt.Errorf("no recording at %s: %w", dir, derr)
			}
			return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: "is missing"}
		}
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: fmt.Sprintf("is not a manifest (%v)", err)}
	}
	if len(m.Argv) == 0 || m.Exe == "" {
		return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: "names no program"}
	}
	logs, exes := 0, 0
	for _, p := range m.Parts {
		name := p.File
		if p.Path != "" {
			name = fmt.Sprintf("%s (the %s %s)", p.File, p.Role, p.Path)
		}
		if p.File == "" || filepath.IsAbs(p.File) || strings.Contains(p.File, "..") {
			return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: fmt.Sprintf("names a part outside the recording: %q", p.File)}
		}
		sum, n, err := hashPart(dir, p)
		switch {
		case err != nil && errors.Is(err, os.ErrNotExist):
			return nil, &DamagedError{Dir: dir, Part: name, Why: "is missing"}
		case errors.As(err, new(*undecodable)):
			return nil, &DamagedError{Dir: dir, Part: name, Why: "is cut short or altered: " + err.Error()}
		case err != nil:
			return nil, &DamagedError{Dir: dir, Part: name, Why: fmt.Sprintf("cannot be read: %v", err)}
		case n != p.Size:
			return nil, &DamagedError{Dir: dir, Part: name, Why: fmt.Sprintf("has %d bytes where the manifest says %d (cut short or grown)", n, p.Size)}
		case sum != p.SHA256:
			return nil, &DamagedError{Dir: dir, Part: name, Why: "differs from what was recorded (its SHA-256 is not the manifest's)"}
		}
		switch {
		case p.Role == RoleLog && (p.File == LogFile || p.File == LogFile+".zst"):
			logs++
		case p.Role == RoleLog:
			return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: fmt.Sprintf("names a replay log other than %s", LogFile)}
		case p.Role == RoleExecutable && p.Path == m.Exe:
			exes++
		case p.Role == RoleSession && p.File != SessionFile:
			return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: fmt.Sprintf("names a saved session other than %s", SessionFile)}
		}
	}
	if logs != 1 {
		return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: fmt.Sprintf("lists %d replay logs, not one", logs)}
	}
	if exes != 1 {
		return nil, &DamagedError{Dir: dir, Part: ManifestFile, Why: fmt.Sprintf("does not list the executable %s once", m.Exe)}
	}
	return &m, nil
}

// Fits says why this machine cannot replay m (nil: it can): another
// architecture, or a system call the recording's kernel had that nothing
// stands in for here; and what this machine lacks that the program may
// not have used (said, not refused): CPU flags, and system calls the C
// library falls back from or the log answers.
func (m *Manifest) Fits() (flags, calls []string, err error) {
	_, _, arch, have := Machine()
	if m.Arch != "" && arch != m.Arch {
		return nil, nil, &UnfitError{Why: fmt.Sprintf("it was recorded on %s, this machine is %s", m.Arch, arch)}
	}
	if calls, err = m.kernelFits(); err != nil {
		return nil, nil, err
	}
	here := map[string]bool{}
	for _, f := range have {
		here[f] = true
	}
	for _, f := range m.CPUFlags {
		if !here[f] {
			flags = append(flags, f)
		}
	}
	return flags, calls, nil
}

// Part returns the recording's part of a role and original path.
func (m *Manifest) Part(role, path string) (Part, bool) {
	for _, p := range m.Parts {
		if p.Role == role && (path == "" || p.Path == path) {
			return p, true
		}
	}
	return Part{}, false
}

// Same says whether the file at p's original path is the recorded one.
func Same(p Part) (bool, error) {
	sum, n, err := hashFile(p.Path)
	if err != nil {
		return false, err
	}
	return n == p.Size && sum == p.SHA256, nil
}

// Extract copies part p of the recording at dir to dst, with its mode.
func Extract(dir string, p Part, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := p.open(dir)
	if err != nil {
		return err
	}
	defer in.Close()
	mode := os.FileMode(p.Mode)
	if mode == 0 {
		mode = 0o644
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
