// Package replaylog is fred's replay log: what the debugged program got
// from the outside world (clocks, randomness, reads, polls, pids, mmap
// addresses), recorded the first time it runs a stretch and given back
// when fred runs that stretch again after a restore (FReD paper, 4.3).
//
// The recording and replaying is done inside the program by a preload
// library (preload/fredlog.c, built by Preload); this package reads and
// writes its file format and shows it (Dump). The two must agree: the
// format is described here once, and fredlog.c follows it.
//
// # Format
//
// A log file has a fixed size (the library maps it whole, shared, so that
// every snapshot of the program sees the same log and CRIU's file size
// check passes): a 4096-byte header, then entries, then zeros up to the
// size. The header (little-endian):
//
//	magic "FREDLOG1", version u32 (1), header size u32 (4096),
//	size u64, end u64 (offset after the last entry), count u64 (entries),
//	cuts u64 (divergences and new runs so far), divergences u64,
//	cut positions [400]u64 (ring), notices u64 (messages so far),
//	notice [256]byte (the latest message, NUL-terminated), zeroed u64 (the
//	library writes zeros ahead of the end: holes are slow to fill through a
//	mapping), timeswitch u64 (1: the library said an interpreter's threads
//	take turns by time), strict u64 (a generation, odd while fred replays
//	a command of its own: a copy that leaves the log stops; SetStrict)
//
// An entry is a kind byte and fields; uv is an unsigned LEB128 varint, sv a
// zigzag-encoded signed one, so small values take one byte:
//
//	time, gettimeofday:      sv delta (seconds; microseconds) from the previous one
//	clock_gettime:           clock id byte, sv delta in ns from that clock's previous
//	                         value (math.MinInt64: the call failed)
//	getrandom, read, pread,
//	recv, stdio read:        uv fd+1, sv result (-errno on error), result bytes of data
//	                         (readv and preadv are logged as read and pread of
//	                         the bytes gathered; pselect as select)
//	poll, select, epoll_wait: uv key+1 (nfds, nfds, epfd), sv length, length bytes:
//	                         the ready sets, then the call's int32 result
//	accept, getpid, getppid: uv fd+1 (0), sv result
//	send (43), bind (44):    uv fd+1, sv result (bind: the socket's inode)
//	peer address (45):       uv fd+1 (accept's new fd), sv length, the
//	                         client's sockaddr (after every accept that
//	                         succeeded; length 0 when unknown)
//	mmap:                    uv 1, sv address>>12 (-errno)
//	thread:                  uv thread number: later entries are that thread's
//	branch:                  nothing: a new branch of history follows; deltas restart
//	signal:                  uv signal number: its handler ran here
//	pthread_mutex_lock ... pthread_join (the sync kinds, 19 to 39):
//	                         sv result: 0, an errno, or for pthread_create
//	                         the new thread's number
//	file read (40):          uv fd+1, sv result (> 0), uv flags (1: an offset
//	                         follows, 2: an identity follows, 4: pread), then
//	                         [uv offset], [uv dev, uv ino, uv size, sv mtime ns,
//	                         sv ctime ns]: a read of a regular file past its
//	                         first FREDLOG_STORE bytes (64 KiB), logged by
//	                         where it read and which version of the file it
//	                         was, not its data; replayed by reading the file
//	                         again when it is still that version. Without an
//	                         offset the read starts where the fd's last file
//	                         read ended; without an identity the file is that
//	                         read's (per fd; restarting at a branch)
//	debugger (41):           nothing: an in-process debugger (pdb) began
//	                         talking with the person here, the other threads
//	                         waiting (written only when there are others)
//
// A clock read is 3 to 6 bytes, a time() 2, a getpid 3, a read's header 3
// to 5 bytes before its data, which is stored once; a sequential read of a
// large file 5 bytes and no data. A sync event is 2
// bytes, and 2 more when another thread logged the entry before it.
//
// Threads are numbered in the order they are created (the main thread is
// 1), and the log holds the order of all threads' entries: on replay each
// thread waits until the log's next entry is its own, so threads take
// their locks in the recorded order (FReD paper, 4.3).
package replaylog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Kind is what call an entry records.
type Kind byte

// The entry kinds (fredlog.c's K_ constants).
const (
	Time Kind = iota + 1
	TimeOfDay
	Clock
	Random
	Read
	Pread
	Recv
	Accept
	Poll
	Select
	Epoll
	GetPid
	GetPPid
	Mmap
	Thread
	Branch
	Stdio
	Signal
	MutexLock
	MutexTrylock
	MutexTimedlock
	MutexUnlock
	RWRdlock
	RWWrlock
	RWTryrdlock
	RWTrywrlock
	RWTimedrdlock
	RWTimedwrlock
	RWUnlock
	CondWait
	CondTimedwait
	CondSignal
	CondBroadcast
	SemWait
	SemTrywait
	SemTimedwait
	SemPost
	Create
	Join
	FileRead
	Debugger
	// OpenW is an open for writing: Result 0 and File's device, inode and
	// size (a regular file; a replay sets it back to that size), or -errno.
	OpenW
	// Send is a send on a socket (write, send, sendto, sendmsg, writev):
	// its result; a replay does not send again.
	Send
	// Bind is a bind: its result, the bound socket's inode (-errno). A
	// replay gives the program that same socket again when a process of
	// the session still has it (its address is taken by it).
	Bind
	// Peer is the address of an accepted connection's client, right after
	// its accept: uv fd+1 (the new fd), sv length, the sockaddr's bytes.
	Peer
	// Stat is a stat, lstat, fstat or fstatat (FREDLOG_STAT=1): uv fd+1
	// (a path's: 1<<24 plus 24 bits of its FNV-1a hash), sv length, then
	// the struct stat; -errno when it failed.
	Stat
	// OpenR is a read-only open's result (FREDLOG_STAT=1): 0 and the
	// file's size, or -errno when it did not find its file. A replay fails
	// it again, or gives a stand-in of that size for a file not there now.
	OpenR
	// Uname is a uname or gethostname (FREDLOG_STAT=1): uv 1, sv length,
	// the struct utsname.
	Uname
	// Seek is an lseek to the end, data or a hole (FREDLOG_STAT=1, log
	// version 3): uv fd+1, sv the offset or -errno.
	Seek
	// OpenDir is an opendir or fdopendir (version 3): sv 0 or -errno.
	OpenDir
	// ReadDir is a readdir (version 3): uv fd+1 (the directory's), sv 1
	// then uv inode, sv offset, uv type, uv length and the name; 0 at the
	// end, or -errno.
	ReadDir
	maxKind = ReadDir
)

var kindNames = [...]string{"?", "time", "gettimeofday", "clock_gettime", "getrandom", "read", "pread",
	"recv", "accept", "poll", "select", "epoll_wait", "getpid", "getppid", "mmap", "thread", "branch", "stdio read", "signal",
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock", "pthread_mutex_unlock",
	"pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock",
	"pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock", "pthread_rwlock_unlock",
	"pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_signal", "pthread_cond_broadcast",
	"sem_wait", "sem_trywait", "sem_timedwait", "sem_post", "pthread_create", "pthread_join", "file read",
	"debugger", "open for writing", "send", "bind", "peer address", "stat", "open for reading", "uname",
	"lseek", "opendir", "readdir"}

func (k Kind) String() string {
	if k == 0 || k > maxKind {
		return fmt.Sprintf("kind(%d)", byte(k))
	}
	return kindNames[k]
}

// IsSync: the kind is a synchronisation call (a lock, a condition, a
// semaphore, thread create or join), whose order the log keeps.
func (k Kind) IsSync() bool { return k >= MutexLock && k <= Join }

// hasData: entries of these kinds carry fd, result and the result's bytes.
func (k Kind) hasData() bool {
	switch k {
	case Random, Read, Pread, Recv, Stdio, Poll, Select, Epoll, Peer, Stat, Uname:
		return true
	}
	return false
}

// Header layout.
const (
	HeaderSize = 4096
	Magic      = "FREDLOG1"
	MaxCuts    = 400
	noticeAt   = 8 + 4 + 4 + 5*8 + MaxCuts*8
	headerUsed = noticeAt + 8 + 256
	strictAt   = headerUsed + 8 + 8 // after zeroed and timeswitch
	threadedAt = strictAt + 8
)

// Header is the log file's control header.
type Header struct {
	Size        uint64 // the file's size
	End         uint64 // offset after the last entry
	Count       uint64 // entries
	Cuts        uint64 // cuts so far (divergences, new runs)
	Divergences uint64
	// Notices counts the library's messages to the person (divergences,
	// a full log); Notice is the latest.
	Notices uint64
	Notice  string
	// TimeTurns: an interpreter's threads took turns at its lock by
	// time (CPython's GIL asks the holder to let go after 5 ms): a replay
	// gives them the same turns, not the same amount done in each.
	TimeTurns bool
}

// Entry is one decoded entry.
type Entry struct {
	Seq    uint64 // position in the log, from 0
	Offset uint64 // byte offset in the file
	Len    int    // encoded size, data included
	Thread int    // 1 is the first thread that logged
	Kind   Kind
	Fd     int   // the descriptor (or key: nfds, epfd); -1 when none
	Result int64 // the call's result; negative: -errno
	// Value is a clock's, time's or gettimeofday's absolute value
	// (seconds; ns; µs), or mmap's address.
	Value   int64
	ClockID int
	Failed  bool   // a clock_gettime that failed
	Data    []byte // the data the call returned (reads, getrandom, ready sets)
	// A file read: where it read, whether by pread, and the file's
	// version; its Result bytes are in the file, not in the log.
	FileOffset uint64
	Pread      bool
	File       FileID
	// FilePath is where the file was (with a new File, in logs that say
	// it): fred-save stores it while it is still that version.
	FilePath string
}

// FileID is which version of a file a file read read: a write to the file
// changes its ctime.
type FileID struct {
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	Size  uint64 `json:"size"`
	Mtime int64  `json:"mtime_ns"` // since the epoch
	Ctime int64  `json:"ctime_ns"`
}

// File-read flags.
const (
	frOff   = 1
	frID    = 2
	frPread = 4
	frName  = 8
)

// fileBase is what a file read without an offset or identity refers to.
type fileBase struct {
	id  FileID
	end uint64
}

// ErrFormat is wrapped by every error about a malformed log.
var ErrFormat = errors.New("not a valid replay log")

// FormatError says where a log is malformed.
type FormatError struct {
	Offset uint64
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("replay log: at byte %d: %s", e.Offset, e.Msg)
}

func (e *FormatError) Unwrap() error { return ErrFormat }

// ParseHeader reads a header.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < headerUsed {
		return Header{}, &FormatError{0, fmt.Sprintf("the file has %d bytes, less than a header", len(b))}
	}
	if string(b[:8]) != Magic {
		return Header{}, &FormatError{0, "no FREDLOG1 magic"}
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != 1 {
		return Header{}, &FormatError{8, fmt.Sprintf("version %d; this fred reads version 1", v)}
	}
	if h := le.Uint32(b[12:]); h != HeaderSize {
		return Header{}, &FormatError{12, fmt.Sprintf("header size %d, want %d", h, HeaderSize)}
	}
	h := Header{Size: le.Uint64(b[16:]), End: le.Uint64(b[24:]), Count: le.Uint64(b[32:]),
		Cuts: le.Uint64(b[40:]), Divergences: le.Uint64(b[48:]), Notices: le.Uint64(b[noticeAt:])}
	n := b[noticeAt+8 : noticeAt+8+256]
	if i := bytes.IndexByte(n, 0); i >= 0 {
		n = n[:i]
	}
	h.Notice = string(n)
	if len(b) >= headerUsed+16 {
		h.TimeTurns = le.Uint64(b[headerUsed+8:]) != 0
	}
	if h.End < HeaderSize || h.End > h.Size {
		return h, &FormatError{24, fmt.Sprintf("end %d outside the log (%d to %d)", h.End, HeaderSize, h.Size)}
	}
	return h, nil
}

func putHeader(b []byte, h Header) {
	le := binary.LittleEndian
	copy(b, Magic)
	le.PutUint32(b[8:], 1)
	le.PutUint32(b[12:], HeaderSize)
	le.PutUint64(b[16:], h.Size)
	le.PutUint64(b[24:], h.End)
	le.PutUint64(b[32:], h.Count)
	le.PutUint64(b[40:], h.Cuts)
	le.PutUint64(b[48:], h.Divergences)
	le.PutUint64(b[noticeAt:], h.Notices)
	copy(b[noticeAt+8:noticeAt+8+255], h.Notice)
	if h.TimeTurns && len(b) >= headerUsed+16 {
		le.PutUint64(b[headerUsed+8:], 1)
	}
}

// decoder walks entries, keeping the delta bases and the current thread
// as the library does.
type decoder struct {
	b       []byte // the entries, from HeaderSize
	off     int
	seq     uint64
	thread  int
	time    int64
	tv      int64
	clock   [16]int64
	files   map[int]fileBase
	started bool
}

func newDecoder(entries []byte) *decoder { return &decoder{b: entries, thread: 1} }

func (d *decoder) uv() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, &FormatError{uint64(HeaderSize + d.off), "truncated or overlong varint"}
	}
	d.off += n
	return v, nil
}

func (d *decoder) sv() (int64, error) {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		return 0, &FormatError{uint64(HeaderSize + d.off), "truncated or overlong varint"}
	}
	d.off += n
	return v, nil
}

// bytes takes the next n bytes.
func (d *decoder) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.off) {
		return nil, &FormatError{uint64(HeaderSize + d.off), fmt.Sprintf("%d bytes, but the log ends %d bytes later", n, len(d.b)-d.off)}
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b, nil
}

// next decodes the next entry; io.EOF-like: ok false at the end.
func (d *decoder) next() (Entry, bool, error) {
	if d.off >= len(d.b) {
		return Entry{}, false, nil
	}
	start := d.off
	e := Entry{Seq: d.seq, Offset: uint64(HeaderSize + start), Kind: Kind(d.b[d.off]), Fd: -1}
	d.off++
	var err error
	switch k := e.Kind; {
	case k == Time || k == TimeOfDay:
		var dv int64
		if dv, err = d.sv(); err == nil {
			base := &d.time
			if k == TimeOfDay {
				base = &d.tv
			}
			*base += dv
			e.Value = *base
		}
	case k == Clock:
		if d.off >= len(d.b) {
			return e, false, &FormatError{e.Offset, "clock entry without a clock id"}
		}
		e.ClockID = int(int8(d.b[d.off]))
		slot := int(d.b[d.off])
		if slot >= 15 {
			slot = 15
		}
		d.off++
		var dv int64
		if dv, err = d.sv(); err == nil {
			if dv == math.MinInt64 {
				e.Failed = true
			} else {
				d.clock[slot] += dv
				e.Value = d.clock[slot]
			}
		}
	case k == OpenDir:
		e.Result, err = d.sv()
	case k == ReadDir:
		err = d.readDir(&e)
	case k.hasData() || k == Accept || k == Send || k == Bind || k == GetPid || k == GetPPid || k == Mmap || k == Seek:
		var fd uint64
		if fd, err = d.uv(); err != nil {
			break
		}
		e.Fd = int(fd) - 1
		if e.Result, err = d.sv(); err != nil {
			break
		}
		if k == Mmap && e.Result >= 0 {
			e.Value = e.Result << 12
		}
		if k.hasData() && e.Result > 0 {
			if e.Result > int64(len(d.b)-d.off) {
				return e, false, &FormatError{e.Offset, fmt.Sprintf("%s entry of %d bytes of data, but the log ends %d bytes later", k, e.Result, len(d.b)-d.off)}
			}
			e.Data = d.b[d.off : d.off+int(e.Result)]
			d.off += int(e.Result)
		}
	case k == Thread:
		var t uint64
		if t, err = d.uv(); err == nil {
			d.thread = int(t)
		}
	case k == Signal:
		var sig uint64
		if sig, err = d.uv(); err == nil {
			e.Result = int64(sig)
		}
	case k == Branch:
		d.time, d.tv, d.clock, d.files = 0, 0, [16]int64{}, nil
	case k == Debugger:
	case k == OpenR:
		e.Fd = -1
		if e.Result, err = d.sv(); err == nil && e.Result >= 0 {
			e.File.Size, err = d.uv()
		}
	case k == OpenW:
		e.Fd = -1
		if e.Result, err = d.sv(); err != nil || e.Result < 0 {
			break
		}
		var v [3]uint64
		for i := range v {
			if v[i], err = d.uv(); err != nil {
				break
			}
		}
		e.File.Dev, e.File.Ino, e.File.Size = v[0], v[1], v[2]
	case k.IsSync():
		e.Result, err = d.sv()
	case k == FileRead:
		err = d.fileRead(&e)
	default:
		return e, false, &FormatError{e.Offset, fmt.Sprintf("unknown entry kind %d", byte(k))}
	}
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Msg = fmt.Sprintf("%s entry at byte %d: %s", e.Kind, e.Offset, fe.Msg)
		}
		return e, false, err
	}
	e.Thread = d.thread
	e.Len = d.off - start
	d.seq++
	return e, true, nil
}

// readDir decodes a directory entry's fields after its kind byte: the
// name in Data, the inode in File.Ino, the offset in Value, the type in
// FileOffset.
func (d *decoder) readDir(e *Entry) error {
	fd, err := d.uv()
	if err != nil {
		return err
	}
	e.Fd = int(fd) - 1
	if e.Result, err = d.sv(); err != nil || e.Result != 1 {
		return err
	}
	if e.File.Ino, err = d.uv(); err != nil {
		return err
	}
	if e.Value, err = d.sv(); err != nil {
		return err
	}
	if e.FileOffset, err = d.uv(); err != nil {
		return err
	}
	n, err := d.uv()
	if err != nil {
		return err
	}
	e.Data, err = d.bytes(n)
	return err
}

// fileRead decodes a file read's fields after its kind byte.
func (d *decoder) fileRead(e *Entry) error {
	fd, err := d.uv()
	if err != nil {
		return err
	}
	e.Fd = int(fd) - 1
	if e.Result, err = d.sv(); err != nil {
		return err
	}
	flags, err := d.uv()
	if err != nil {
		return err
	}
	b := d.files[e.Fd]
	e.Pread = flags&frPread != 0
	e.FileOffset = b.end
	if flags&frOff != 0 {
		if e.FileOffset, err = d.uv(); err != nil {
			return err
		}
	}
	e.File = b.id
	if flags&frID != 0 {
		id := &e.File
		for _, p := range []*uint64{&id.Dev, &id.Ino, &id.Size} {
			if *p, err = d.uv(); err != nil {
				return err
			}
		}
		for _, p := range []*int64{&id.Mtime, &id.Ctime} {
			if *p, err = d.sv(); err != nil {
				return err
			}
		}
	}
	if flags&frName != 0 {
		n, err := d.uv()
		if err != nil {
			return err
		}
		b, err := d.bytes(n)
		if err != nil {
			return err
		}
		e.FilePath = string(b)
	}
	if d.files == nil {
		d.files = map[int]fileBase{}
	}
	d.files[e.Fd] = fileBase{e.File, e.FileOffset + uint64(e.Result)}
	return nil
}
