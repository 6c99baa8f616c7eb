package replaylog

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"syscall"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Log is a replay log read whole: its header and entries.
type Log struct {
	Header
	Entries []Entry
}

// Bytes is the size of the entries, data included.
func (l *Log) Bytes() uint64 { return l.End - HeaderSize }

// ReadHeader reads only a log file's header: cheap enough to look for new
// notices after every command.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	b := make([]byte, HeaderSize)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Header{}, err
	}
	return ParseHeader(b[:n])
}

// ReadFile reads a log file. A log whose end lies past what the file holds
// (it was cut short) gives the entries that are whole, and an error.
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	hb := make([]byte, HeaderSize)
	n, err := io.ReadFull(f, hb)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("replay log %s: %w", path, err)
	}
	h, err := ParseHeader(hb[:n])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	body := make([]byte, h.End-HeaderSize)
	got, rerr := io.ReadFull(f, body)
	l, derr := Parse(h, body[:got])
	if derr == nil && rerr != nil {
		derr = &FormatError{HeaderSize + uint64(got), fmt.Sprintf("the file ends before the log's end (byte %d)", h.End)}
	}
	if derr != nil {
		return l, fmt.Errorf("%s: %w", path, derr)
	}
	return l, nil
}

// Scan calls fn with each entry of the log at path, in order, until fn
// returns false. The file is mapped, not read: a session's log may be
// large, and fred's memory stays bounded.
func Scan(path string, fn func(Entry) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < HeaderSize {
		return fmt.Errorf("%s: %w", path, &FormatError{0, "shorter than its header"})
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	defer syscall.Munmap(b)
	h, err := ParseHeader(b[:HeaderSize])
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if h.End > uint64(len(b)) {
		return fmt.Errorf("%s: %w", path, &FormatError{uint64(len(b)), fmt.Sprintf("the file ends before the log's end (byte %d)", h.End)})
	}
	d := newDecoder(b[HeaderSize:h.End])
	for {
		e, ok, err := d.next()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if !ok || !fn(e) {
			return nil
		}
	}
}

// Parse decodes the entries of a log with header h; on a malformed entry
// it returns those before it, and the error.
func Parse(h Header, entries []byte) (*Log, error) {
	l := &Log{Header: h}
	d := newDecoder(entries)
	for {
		e, ok, err := d.next()
		if err != nil {
			return l, err
		}
		if !ok {
			return l, nil
		}
		l.Entries = append(l.Entries, e)
	}
}

// Writer writes a log in the library's format, for tests and tools:
// entries are given with absolute values, as the reader returns them.
type Writer struct {
	buf    []byte
	count  uint64
	thread int
	time   int64
	tv     int64
	clock  [16]int64
	files  map[int]fileBase
	Size   uint64 // the file size to declare (default: just large enough)
}

// NewWriter starts an empty log.
func NewWriter() *Writer { return &Writer{thread: 1} }

// Add appends an entry (Seq, Offset and Len are ignored). A Thread other
// than the current one is written as a thread entry first.
func (w *Writer) Add(e Entry) {
	if e.Thread == 0 {
		e.Thread = 1
	}
	if e.Thread != w.thread && e.Kind != Branch && e.Kind != Thread {
		w.buf = append(w.buf, byte(Thread))
		w.buf = binary.AppendUvarint(w.buf, uint64(e.Thread))
		w.thread = e.Thread
		w.count++
	}
	w.buf = append(w.buf, byte(e.Kind))
	switch k := e.Kind; {
	case k == Time:
		w.buf = binary.AppendVarint(w.buf, e.Value-w.time)
		w.time = e.Value
	case k == TimeOfDay:
		w.buf = binary.AppendVarint(w.buf, e.Value-w.tv)
		w.tv = e.Value
	case k == Clock:
		w.buf = append(w.buf, byte(e.ClockID))
		slot := int(byte(e.ClockID))
		if slot >= 15 {
			slot = 15
		}
		if e.Failed {
			w.buf = binary.AppendVarint(w.buf, math.MinInt64)
		} else {
			w.buf = binary.AppendVarint(w.buf, e.Value-w.clock[slot])
			w.clock[slot] = e.Value
		}
	case k == Thread:
		w.buf = binary.AppendUvarint(w.buf, uint64(e.Thread))
		w.thread = e.Thread
	case k == Signal:
		w.buf = binary.AppendUvarint(w.buf, uint64(e.Result))
	case k == Branch:
		// As the library: bases restart, and a thread entry follows.
		w.time, w.tv, w.clock, w.files = 0, 0, [16]int64{}, nil
		w.thread = 0
	case k.IsSync():
		w.buf = binary.AppendVarint(w.buf, e.Result)
	case k == FileRead:
		w.fileRead(e)
	case k == Debugger:
	case k == OpenW:
		w.buf = binary.AppendVarint(w.buf, e.Result)
		if e.Result < 0 {
			break
		}
		w.buf = binary.AppendUvarint(w.buf, e.File.Dev)
		w.buf = binary.AppendUvarint(w.buf, e.File.Ino)
		w.buf = binary.AppendUvarint(w.buf, e.File.Size)
	case k == OpenR:
		w.buf = binary.AppendVarint(w.buf, e.Result)
		if e.Result >= 0 {
			w.buf = binary.AppendUvarint(w.buf, e.File.Size)
		}
	case k == OpenDir:
		w.buf = binary.AppendVarint(w.buf, e.Result)
	case k == ReadDir:
		w.buf = binary.AppendUvarint(w.buf, uint64(e.Fd+1))
		w.buf = binary.AppendVarint(w.buf, e.Result)
		if e.Result == 1 {
			w.buf = binary.AppendUvarint(w.buf, e.File.Ino)
			w.buf = binary.AppendVarint(w.buf, e.Value)
			w.buf = binary.AppendUvarint(w.buf, e.FileOffset)
			w.buf = binary.AppendUvarint(w.buf, uint64(len(e.Data)))
			w.buf = append(w.buf, e.Data...)
		}
	default:
		w.buf = binary.AppendUvarint(w.buf, uint64(e.Fd+1))
		res := e.Result
		if k.hasData() && res >= 0 {
			res = int64(len(e.Data))
		}
		if k == Mmap && res >= 0 {
			res = e.Value >> 12
		}
		w.buf = binary.AppendVarint(w.buf, res)
		if k.hasData() && res > 0 {
			w.buf = append(w.buf, e.Data...)
		}
	}
	w.count++
}

// fileRead writes a file read's fields, against the fd's last one as the
// library does.
func (w *Writer) fileRead(e Entry) {
	b := w.files[e.Fd]
	flags := uint64(0)
	if e.Pread {
		flags |= frPread
	}
	if e.FileOffset != b.end {
		flags |= frOff
	}
	if e.File != b.id {
		flags |= frID
		if e.FilePath != "" {
			flags |= frName
		}
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(e.Fd+1))
	w.buf = binary.AppendVarint(w.buf, e.Result)
	w.buf = binary.AppendUvarint(w.buf, flags)
	if flags&frOff != 0 {
		w.buf = binary.AppendUvarint(w.buf, e.FileOffset)
	}
	if flags&frID != 0 {
		for _, v := range []uint64{e.File.Dev, e.File.Ino, e.File.Size} {
			w.buf = binary.AppendUvarint(w.buf, v)
		}
		w.buf = binary.AppendVarint(w.buf, e.File.Mtime)
		w.buf = binary.AppendVarint(w.buf, e.File.Ctime)
	}
	if flags&frName != 0 {
		w.buf = binary.AppendUvarint(w.buf, uint64(len(e.FilePath)))
		w.buf = append(w.buf, e.FilePath...)
	}
	if w.files == nil {
		w.files = map[int]fileBase{}
	}
	w.files[e.Fd] = fileBase{e.File, e.FileOffset + uint64(e.Result)}
}

// Bytes is the whole file: header, entries and zero padding to Size.
func (w *Writer) Bytes() []byte {
	size := w.Size
	if min := uint64(HeaderSize + len(w.buf)); size < min {
		size = min
	}
	b := make([]byte, size)
	putHeader(b, Header{Size: size, End: uint64(HeaderSize + len(w.buf)), Count: w.count})
	copy(b[HeaderSize:], w.buf)
	return b
}

// WriteFile writes the log to path.
func (w *Writer) WriteFile(path string) error { return os.WriteFile(path, w.Bytes(), 0o600) }

// Dump writes a log's entries readably, one a line: sequence number,
// thread, call, result; then a summary. last > 0 shows only the last
// entries.
func Dump(out io.Writer, path string, last int) error {
	l, err := ReadFile(path)
	if l == nil {
		return err
	}
	es := l.Entries
	if last > 0 && len(es) > last {
		fmt.Fprintf(out, "  ... %d earlier entries\n", len(es)-last)
		es = es[len(es)-last:]
	}
	fmt.Fprintf(out, "  %-7s %-6s %-26s %s\n", "seq", "thread", "call", "result")
	for _, e := range es {
		fmt.Fprintf(out, "  %-7d %-6d %-26s %s\n", e.Seq, e.Thread, e.Kind, e.Describe())
	}
	fmt.Fprintln(out, Summary(l))
	return err
}

// Summary is one line about a log: entries, bytes, bytes per entry.
func Summary(l *Log) string {
	n := len(l.Entries)
	per := 0.0
	var data uint64
	for _, e := range l.Entries {
		data += uint64(len(e.Data))
	}
	if n > 0 {
		per = float64(l.Bytes()-data) / float64(n)
	}
	s := fmt.Sprintf("%d entries, %d bytes (%.1f bytes per entry besides %d bytes of data)", n, l.Bytes(), per, data)
	var byRef int64
	for _, e := range l.Entries {
		if e.Kind == FileRead {
			byRef += e.Result
		}
	}
	if byRef > 0 {
		s += fmt.Sprintf("; %d bytes of file reads logged by reference", byRef)
	}
	if st := l.SyncStats(); st.Events > 0 {
		s += fmt.Sprintf("; %d sync events, %.1f bytes per sync event (thread switches included)", st.Events, st.PerEvent())
	}
	if l.Divergences > 0 {
		s += fmt.Sprintf(", %d divergences", l.Divergences)
	}
	return s
}

// SyncStats is what a log's synchronisation events cost.
type SyncStats struct {
	Events int    // sync entries
	Bytes  uint64 // their bytes, with the thread entries just before them
}

// PerEvent is the average size of a sync event, thread switches included.
func (s SyncStats) PerEvent() float64 {
	if s.Events == 0 {
		return 0
	}
	return float64(s.Bytes) / float64(s.Events)
}

// SyncStats counts the sync events and their bytes. A thread entry
// counts with the sync entry that follows it: it is there because of it.
func (l *Log) SyncStats() SyncStats {
	var st SyncStats
	for i, e := range l.Entries {
		if !e.Kind.IsSync() {
			continue
		}
		st.Events++
		st.Bytes += uint64(e.Len)
		if i > 0 && l.Entries[i-1].Kind == Thread {
			st.Bytes += uint64(l.Entries[i-1].Len)
		}
	}
	return st
}

// sockaddrString is a struct sockaddr's bytes, readable.
func sockaddrString(b []byte) string {
	if len(b) < 2 {
		return "unknown"
	}
	port := func() int { return int(binary.BigEndian.Uint16(b[2:4])) }
	switch binary.LittleEndian.Uint16(b) {
	case unix.AF_INET:
		if len(b) >= 8 {
			return fmt.Sprintf("%d.%d.%d.%d:%d", b[4], b[5], b[6], b[7], port())
		}
	case unix.AF_INET6:
		if len(b) >= 24 {
			return fmt.Sprintf("[%s]:%d", net.IP(b[8:24]), port())
		}
	case unix.AF_UNIX:
		if len(b) > 2 && b[2] == 0 && len(b) > 3 {
			return "@" + strings.TrimRight(string(b[3:]), "\x00") // abstract
		}
		if p := strings.TrimRight(string(b[2:]), "\x00"); p != "" {
			return p
		}
		return "unnamed unix socket"
	}
	return fmt.Sprintf("family %d", binary.LittleEndian.Uint16(b))
}

// Describe is an entry's result, readable.
func (e Entry) Describe() string {
	errno := func(r int64) string { return fmt.Sprintf("-1 (errno %d)", -r) }
	switch e.Kind {
	case Time:
		return fmt.Sprintf("%d", e.Value)
	case TimeOfDay:
		return fmt.Sprintf("%d.%06d", e.Value/1e6, e.Value%1e6)
	case Clock:
		if e.Failed {
			return fmt.Sprintf("clock %d: failed", e.ClockID)
		}
		return fmt.Sprintf("clock %d: %d.%09d", e.ClockID, e.Value/1e9, e.Value%1e9)
	case Thread:
		return fmt.Sprintf("thread %d runs", e.Thread)
	case Create:
		return fmt.Sprintf("thread %d", e.Result)
	case SemWait, SemTrywait, SemTimedwait, SemPost:
		if e.Result < 0 {
			return fmt.Sprintf("-1 (%s)", errName(-e.Result))
		}
		return "0"
	case MutexLock, MutexTrylock, MutexTimedlock, MutexUnlock, RWRdlock, RWWrlock, RWTryrdlock, RWTrywrlock,
		RWTimedrdlock, RWTimedwrlock, RWUnlock, CondWait, CondTimedwait, CondSignal, CondBroadcast, Join:
		if e.Result != 0 {
			return errName(e.Result)
		}
		return "0"
	case Branch:
		return "a new branch of history starts here"
	case Debugger:
		return "the debugger talks with the person; the other threads wait"
	case Uname:
		if e.Result < 0 {
			return errno(e.Result)
		}
		var u unix.Utsname
		if len(e.Data) != int(unsafe.Sizeof(u)) {
			return fmt.Sprintf("%d bytes", len(e.Data))
		}
		u = *(*unix.Utsname)(unsafe.Pointer(&e.Data[0]))
		return fmt.Sprintf("host %s, %s %s", unix.ByteSliceToString(u.Nodename[:]), unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Release[:]))
	case Seek:
		if e.Result < 0 {
			return fmt.Sprintf("fd %d: %s", e.Fd, errno(e.Result))
		}
		return fmt.Sprintf("fd %d: offset %d", e.Fd, e.Result)
	case OpenDir:
		if e.Result < 0 {
			return "the directory was not there: " + errno(e.Result)
		}
		return "the directory was there"
	case ReadDir:
		switch {
		case e.Result < 0:
			return fmt.Sprintf("fd %d: %s", e.Fd, errno(e.Result))
		case e.Result == 0:
			return fmt.Sprintf("fd %d: the end", e.Fd)
		}
		return fmt.Sprintf("fd %d: %s (inode %d)", e.Fd, quote(e.Data), e.File.Ino)
	case OpenR:
		if e.Result < 0 {
			return "the file was not there: " + errno(e.Result)
		}
		return fmt.Sprintf("the file was there, %d bytes", e.File.Size)
	case OpenW:
		if e.Result < 0 {
			return errno(e.Result)
		}
		return fmt.Sprintf("inode %d (device %d), %d bytes", e.File.Ino, e.File.Dev, e.File.Size)
	case Signal:
		return fmt.Sprintf("%s (%d) handled", unix.SignalName(syscall.Signal(e.Result)), e.Result)
	case Mmap:
		if e.Result < 0 {
			return errno(e.Result)
		}
		return fmt.Sprintf("0x%x", e.Value)
	case GetPid, GetPPid:
		return fmt.Sprintf("%d", e.Result)
	case Accept:
		if e.Result < 0 {
			return fmt.Sprintf("fd %d: %s", e.Fd, errno(e.Result))
		}
		return fmt.Sprintf("fd %d: new fd %d", e.Fd, e.Result)
	case Send:
		if e.Result < 0 {
			return fmt.Sprintf("fd %d: %s", e.Fd, errno(e.Result))
		}
		return fmt.Sprintf("fd %d: %d bytes", e.Fd, e.Result)
	case Peer:
		return fmt.Sprintf("fd %d: %s", e.Fd, sockaddrString(e.Data))
	case Stat:
		on := fmt.Sprintf("fd %d", e.Fd)
		if e.Fd >= 1<<24 {
			on = fmt.Sprintf("a path (key %06x)", e.Fd-1<<24)
		}
		if e.Result < 0 {
			return fmt.Sprintf("%s: %s", on, errno(e.Result))
		}
		var st unix.Stat_t
		if len(e.Data) == int(unsafe.Sizeof(unix.Statx_t{})) {
			sx := *(*unix.Statx_t)(unsafe.Pointer(&e.Data[0]))
			return fmt.Sprintf("%s: statx: mode %#o, %d bytes, inode %d", on, sx.Mode, sx.Size, sx.Ino)
		}
		if len(e.Data) != int(unsafe.Sizeof(st)) {
			return fmt.Sprintf("%s: %d bytes", on, len(e.Data))
		}
		st = *(*unix.Stat_t)(unsafe.Pointer(&e.Data[0]))
		return fmt.Sprintf("%s: mode %#o, %d bytes, inode %d", on, st.Mode, st.Size, st.Ino)
	case Bind:
		if e.Result < 0 {
			return fmt.Sprintf("fd %d: %s", e.Fd, errno(e.Result))
		}
		return fmt.Sprintf("fd %d: socket inode %d", e.Fd, e.Result)
	case Poll, Select, Epoll:
		if e.Result < 0 {
			return errno(e.Result)
		}
		r := int32(0)
		if len(e.Data) >= 4 {
			r = int32(binary.LittleEndian.Uint32(e.Data[len(e.Data)-4:]))
		}
		key := "nfds"
		if e.Kind == Epoll {
			key = "epfd"
		}
		return fmt.Sprintf("%s %d: %d ready", key, e.Fd, r)
	case FileRead:
		how := "read"
		if e.Pread {
			how = "pread"
		}
		return fmt.Sprintf("fd %d: %d bytes at offset %d of inode %d (%s; in the file, not the log)", e.Fd, e.Result, e.FileOffset, e.File.Ino, how)
	case Random:
		if e.Result < 0 {
			return errno(e.Result)
		}
		return fmt.Sprintf("%d bytes %s", e.Result, quote(e.Data))
	}
	if e.Result < 0 {
		return fmt.Sprintf("fd %d: %s", e.Fd, errno(e.Result))
	}
	return fmt.Sprintf("fd %d: %d bytes %s", e.Fd, e.Result, quote(e.Data))
}

// errName is an errno's name (EBUSY), or its number.
func errName(n int64) string {
	if n > 0 && n < 4096 {
		if name := unix.ErrnoName(syscall.Errno(n)); name != "" {
			return name
		}
	}
	return fmt.Sprintf("errno %d", n)
}

// quote shows data as text when it is text, else as hex; long data is cut.
func quote(b []byte) string {
	const max = 32
	cut := ""
	if len(b) > max {
		b, cut = b[:max], "..."
	}
	text := utf8.Valid(b)
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' {
			text = false
		}
	}
	if text {
		return fmt.Sprintf("%q%s", string(b), cut)
	}
	var sb strings.Builder
	for _, c := range b {
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String() + cut
}

// SetStrict says whether fred is replaying a command of its own (a reverse
// command's moves). Then a copy of the program that leaves the log does
// not cut it, so the person's history past that point stays replayable,
// and its threads stop at their next logged call, so that nothing of a
// path nobody recorded reaches the outside (a server's answers to its
// clients), until fred ends the copy or ends strict (then the copy cuts
// the log where it is and records on). strict is a generation, odd while
// on.
func SetStrict(path string, on bool) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 8)
	if _, err := f.ReadAt(b, strictAt); err != nil {
		return err
	}
	gen := binary.LittleEndian.Uint64(b)
	if (gen%2 == 1) == on {
		return nil
	}
	return putU64(f, strictAt, gen+1)
}

// Threaded says whether the program whose log is at path created a
// thread in this run (it has or had threads): the library notes it in
// the header, so nothing but the header is read.
func Threaded(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b := make([]byte, 8)
	if _, err := f.ReadAt(b, threadedAt); err != nil {
		return false, err
	}
	return binary.LittleEndian.Uint64(b) != 0, nil
}

// putU64 writes one of the header's little-endian words in place.
func putU64(f *os.File, off int64, v uint64) error {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, v)
	_, err := f.WriteAt(b, off)
	return err
}

// CutBack undoes what was recorded after h was read: the log ends at h's
// end again, and a cut there tells every copy of the program standing
// past it (one that recorded those entries) that its future is gone, as a
// divergence does (fredlog.c, cut). fred uses it when a command failed
// and brought the person back to a moment recorded before it began: what
// its replays recorded after that is no history of theirs. The program
// must not be running (it is stopped at the debugger's prompt).
func CutBack(path string, h Header) error {
	now, err := ReadHeader(path)
	if err != nil {
		return err
	}
	if now.End <= h.End {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	// cuts[ncuts % 400] = end, then ncuts, end and count: the order
	// fredlog.c's cut writes them in.
	for _, w := range []struct {
		off int64
		v   uint64
	}{{56 + 8*int64(now.Cuts%MaxCuts), h.End}, {40, now.Cuts + 1}, {24, h.End}, {32, h.Count}} {
		if err := putU64(f, w.off, w.v); err != nil {
			return err
		}
	}
	return nil
}
