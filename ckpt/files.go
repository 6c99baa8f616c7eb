package ckpt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A snapshot holds the program's memory, not its files: a file it wrote
// after the snapshot keeps those writes when the snapshot is restored, and
// the replay writes them again. An append-mode log gets its lines twice; a
// file that grew stops CRIU's restore ("has bad size"); a counter in a
// shared mapping of a file is read back from the future.
//
// Files sets the program's written files back with its snapshots: Mark
// notes, at a snapshot, each regular file the program has open for
// writing or maps shared (its size, and the bytes of its shared mappings),
// and PutBack sets them to that before a restore. The replay then writes
// the same bytes again (the replay log gives the program the same inputs),
// so the files end as one forward run leaves them. What a truncation cuts
// off is kept (a later snapshot's restore puts it back when the replay in
// between did not get that far): one copy per file, of its latest cut, in
// dir/cut-DEV-INO. The replay library keeps its cuts there too: it sets
// back the files the program opens after a snapshot.
//
// Not covered: bytes rewritten in place
// below a file's size hold what the latest run wrote until the replay
// writes them again (the program's reads of them are replayed from the
// log, so it does not see the difference).
type Files struct {
	dir  string // where kept bytes go
	skip string // fred's own files (the replay log) live under here
	n    int
}

type fileKey struct{ dev, ino uint64 }

// FileMarks is what Mark noted at one snapshot.
type FileMarks struct {
	Files []WrittenFile
	data  string // the shared mappings' bytes, one after another
}

// WrittenFile is one file the program may write, as it was at a snapshot.
type WrittenFile struct {
	Path     string
	Dev, Ino uint64
	Size     int64
	Mapped   []Extent // its shared mappings' bytes, kept in FileMarks.data
}

// Extent is Len bytes at Off in the file, kept at At in FileMarks.data.
type Extent struct{ Off, Len, At int64 }

// maxMapped bounds the bytes of shared mappings kept per snapshot.
const maxMapped = 256 << 20

// NewFiles keeps bytes under dir; files under skip are not the program's.
func NewFiles(dir, skip string) *Files {
	// /proc's links name files by their real, absolute path.
	if abs, err := filepath.Abs(skip); err == nil {
		skip = abs
	}
	if real, err := filepath.EvalSymlinks(skip); err == nil {
		skip = real
	}
	return &Files{dir: dir, skip: skip}
}

// Mark notes the files process pid writes. The process must be stopped.
func (f *Files) Mark(pid int) (*FileMarks, error) {
	byKey := map[fileKey]*WrittenFile{}
	var order []fileKey
	add := func(path string, st *syscall.Stat_t) *WrittenFile {
		k := fileKey{uint64(st.Dev), st.Ino}
		w := byKey[k]
		if w == nil {
			w = &WrittenFile{Path: path, Dev: k.dev, Ino: k.ino, Size: st.Size}
			byKey[k] = w
			order = append(order, k)
		}
		return w
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, fmt.Errorf("files of pid %d: %w", pid, err)
	}
	for _, e := range fds {
		fd := e.Name()
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd))
		if err != nil || !writable(info) {
			continue
		}
		path, st, ok := f.regular(fmt.Sprintf("/proc/%d/fd/%s", pid, fd))
		if ok {
			add(path, st)
		}
	}
	m := &FileMarks{}
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, fmt.Errorf("files of pid %d: %w", pid, err)
	}
	defer maps.Close()
	var data *os.File
	var kept int64
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		// 7f..-7f.. rw-s 00000000 08:01 1234   /path
		fl := strings.Fields(sc.Text())
		// Shared and writable: a read-only one may be another program's
		// (sssd's cache), not the program's to set back.
		if len(fl) < 6 || fl[1][1] != 'w' || fl[1][3] != 's' || fl[4] == "0" || !strings.HasPrefix(fl[5], "/") {
			continue
		}
		span := strings.SplitN(fl[0], "-", 2)
		lo, err1 := strconv.ParseUint(span[0], 16, 64)
		hi, err2 := strconv.ParseUint(span[1], 16, 64)
		off, err3 := strconv.ParseInt(fl[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		path, st, ok := f.regular(fmt.Sprintf("/proc/%d/map_files/%s", pid, fl[0]))
		if !ok { // map_files needs root: the path maps gives, if it is that file
			path, st, ok = f.regular(strings.Join(fl[5:], " "))
			if !ok || uint64(st.Ino) != inodeOf(fl[4]) {
				continue
			}
		}
		w := add(path, st)
		n := int64(hi - lo)
		if off+n > st.Size {
			n = st.Size - off
		}
		if n <= 0 || kept+n > maxMapped {
			continue
		}
		if data == nil {
			f.n++
			m.data = filepath.Join(f.dir, fmt.Sprintf("mapped-%d", f.n))
			if data, err = os.OpenFile(m.data, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600); err != nil {
				return nil, fmt.Errorf("keeping mapped files: %w", err)
			}
			defer data.Close()
		}
		got, err := copyRange(data, w.Path, off, n)
		if got > 0 {
			w.Mapped = append(w.Mapped, Extent{Off: off, Len: got, At: kept})
			kept += got
		}
		if err != nil {
			continue // the rest is not kept: the file is set back to its size only
		}
	}
	for _, k := range order {
		m.Files = append(m.Files, *byKey[k])
	}
	return m, nil
}

// writable: an fdinfo whose flags open the file for writing.
func writable(info []byte) bool {
	for _, l := range strings.Split(string(info), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && fl&syscall.O_ACCMODE != syscall.O_RDONLY
		}
	}
	return false
}

func inodeOf(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

// regular resolves a /proc link (or a path) to a regular file of the
// program's.
func (f *Files) regular(link string) (string, *syscall.Stat_t, bool) {
	path := link
	if strings.HasPrefix(link, "/proc/") {
		var err error
		if path, err = os.Readlink(link); err != nil {
			return "", nil, false
		}
	}
	if !strings.HasPrefix(path, "/") || strings.HasSuffix(path, " (deleted)") {
		return "", nil, false
	}
	if f.skip != "" && strings.HasPrefix(path, f.skip+"/") {
		return "", nil, false
	}
	var st syscall.Stat_t
	if syscall.Stat(link, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", nil, false
	}
	return path, &st, true
}

func copyRange(to *os.File, path string, off, n int64) (int64, error) {
	from, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer from.Close()
	return io.Copy(to, io.NewSectionReader(from, off, n))
}

// PutBack sets the files of m as they were at its snapshot. A file that
// is gone or replaced (another inode at its path) is left alone.
func (f *Files) PutBack(m *FileMarks) error {
	if m == nil {
		return nil
	}
	var errs []error
	for i := range m.Files {
		if err := f.putBack(&m.Files[i], m.data); err != nil {
			errs = append(errs, fmt.Errorf("setting back %s: %w", m.Files[i].Path, err))
		}
	}
	return errors.Join(errs...)
}

func (f *Files) putBack(w *WrittenFile, data string) error {
	file, err := os.OpenFile(w.Path, os.O_RDWR, 0)
	if err != nil {
		return nil // gone, or not ours to write
	}
	defer file.Close()
	var st syscall.Stat_t
	if syscall.Fstat(int(file.Fd()), &st) != nil || uint64(st.Dev) != w.Dev || st.Ino != w.Ino {
		return nil
	}
	k := fileKey{w.Dev, w.Ino}
	switch {
	case st.Size > w.Size:
		// Keep what is cut off: a later snapshot may need it back.
		if err := f.keepTail(file, k, w.Size, st.Size); err != nil {
			return err
		}
		if err := file.Truncate(w.Size); err != nil {
			return err
		}
	case st.Size < w.Size:
		if err := f.regrow(file, k, st.Size, w.Size); err != nil {
			return err
		}
	}
	if len(w.Mapped) == 0 {
		return nil
	}
	kept, err := os.Open(data)
	if err != nil {
		return err
	}
	defer kept.Close()
	for _, x := range w.Mapped {
		then := make([]byte, x.Len)
		now := make([]byte, x.Len)
		if _, err := kept.ReadAt(then, x.At); err != nil {
			return err
		}
		if n, _ := file.ReadAt(now, x.Off); int64(n) == x.Len && bytes.Equal(now, then) {
			continue // unchanged: do not move the file's times
		}
		if _, err := file.WriteAt(then, x.Off); err != nil {
			return err
		}
	}
	return nil
}

// keepTail keeps the file's bytes [from, to) as its cut, headed by from,
// and after them what the cut before held past to: a restore of an
// earlier snapshot after a replay that did not get as far must not lose
// the bytes the replay has not written again yet.
func (f *Files) keepTail(file *os.File, k fileKey, from, to int64) error {
	path := f.cutPath(k)
	out, err := os.CreateTemp(f.dir, ".cut-*")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name()) // after the rename, nothing
	defer out.Close()
	if _, err := fmt.Fprintf(out, "%020d\n", from); err != nil {
		return err
	}
	if _, err := io.Copy(out, io.NewSectionReader(file, from, to-from)); err != nil {
		return err
	}
	if old, err := os.Open(path); err == nil {
		defer old.Close()
		var oldFrom int64
		if _, err := fmt.Fscanf(old, "%d\n", &oldFrom); err == nil && oldFrom <= to {
			if _, err := io.Copy(out, io.NewSectionReader(old, cutHeader+(to-oldFrom), 1<<62)); err != nil {
				return err
			}
		}
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(out.Name(), path)
}

// cutHeader is the length of a cut's first line: the offset it starts at.
const cutHeader = 21

// regrow brings a file from size have back to size want with the bytes
// its latest cut took, or zeros where the cut does not reach.
func (f *Files) regrow(file *os.File, k fileKey, have, want int64) error {
	if c, err := os.Open(f.cutPath(k)); err == nil {
		defer c.Close()
		var from int64
		if _, err := fmt.Fscanf(c, "%d\n", &from); err == nil && from <= have {
			body := io.NewSectionReader(c, cutHeader+(have-from), want-have)
			if _, err := io.Copy(io.NewOffsetWriter(file, have), body); err != nil {
				return err
			}
		}
	}
	return file.Truncate(want)
}

func (f *Files) cutPath(k fileKey) string {
	return filepath.Join(f.dir, fmt.Sprintf("cut-%d-%d", k.dev, k.ino))
}

// Drop forgets m's kept bytes.
func (f *Files) Drop(m *FileMarks) {
	if m != nil && m.data != "" {
		_ = os.Remove(m.data)
	}
}

// Close removes every kept byte.
func (f *Files) Close() {
	for _, pat := range []string{"mapped-*", "cut-*"} {
		m, _ := filepath.Glob(filepath.Join(f.dir, pat))
		for _, p := range m {
			_ = os.Remove(p)
		}
	}
}
