package replaylog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fred-debugger/fred/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// sample has one entry of every kind, with awkward values.
func sample() []Entry {
	return []Entry{
		{Kind: Time, Value: 1795312259},
		{Kind: Time, Value: 1795312258}, // backwards
		{Kind: TimeOfDay, Value: 1795312259149501},
		{Kind: Clock, ClockID: 1, Value: 8364656858772},
		{Kind: Clock, ClockID: 1, Value: 8364656859000},
		{Kind: Clock, ClockID: 0, Value: 1795312259149501000},
		{Kind: Clock, ClockID: -2, Value: 12345},
		{Kind: Clock, ClockID: 7, Failed: true},
		{Kind: Random, Fd: -1, Result: 8, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{Kind: Read, Fd: 3, Result: 6, Data: []byte("hello\n")},
		{Kind: Read, Fd: 0, Result: 0},
		{Kind: Read, Fd: 9, Result: -11},
		{Kind: Pread, Fd: 4, Result: 2, Data: []byte("ab")},
		{Kind: Recv, Fd: 5, Result: 3, Data: []byte("xyz")},
		{Kind: Stdio, Fd: 6, Result: 4, Data: []byte("line")},
		{Kind: Accept, Fd: 3, Result: 7},
		{Kind: Poll, Fd: 2, Result: 8, Data: []byte{1, 0, 0, 0, 1, 0, 0, 0}},
		{Kind: Select, Fd: 4, Result: -4},
		{Kind: Epoll, Fd: 8, Result: 4, Data: []byte{0, 0, 0, 0}},
		{Kind: GetPid, Fd: -1, Result: 4242},
		{Kind: GetPPid, Fd: -1, Result: 1},
		{Kind: Mmap, Fd: 0, Value: 0x7ffff7fc0000, Result: 0x7ffff7fc0000 >> 12},
		{Kind: Read, Fd: 3, Result: 1, Data: []byte{0}, Thread: 2},
		{Kind: Time, Value: 5, Thread: 2},
		{Kind: Signal, Fd: -1, Result: 10, Thread: 2},
		{Kind: Branch, Thread: 2},
		{Kind: Time, Value: 1795312300, Thread: 2},
		{Kind: Create, Fd: -1, Result: 3, Thread: 2},
		{Kind: MutexLock, Fd: -1, Thread: 3},
		{Kind: MutexTrylock, Fd: -1, Result: 16, Thread: 3},
		{Kind: MutexTimedlock, Fd: -1, Result: 110, Thread: 2},
		{Kind: MutexUnlock, Fd: -1, Thread: 3},
		{Kind: RWRdlock, Fd: -1}, {Kind: RWWrlock, Fd: -1}, {Kind: RWTryrdlock, Fd: -1, Result: 16},
		{Kind: RWTrywrlock, Fd: -1}, {Kind: RWTimedrdlock, Fd: -1}, {Kind: RWTimedwrlock, Fd: -1}, {Kind: RWUnlock, Fd: -1},
		{Kind: CondWait, Fd: -1, Thread: 4}, {Kind: CondTimedwait, Fd: -1, Result: 110, Thread: 4},
		{Kind: CondSignal, Fd: -1}, {Kind: CondBroadcast, Fd: -1},
		{Kind: SemWait, Fd: -1}, {Kind: SemTrywait, Fd: -1, Result: -11}, {Kind: SemTimedwait, Fd: -1, Result: -110},
		{Kind: SemPost, Fd: -1, Thread: 2}, {Kind: Join, Fd: -1, Thread: 2},
		// file reads: the first of a file, one that goes on from it, a
		// pread, and one of another file on the same fd
		{Kind: FileRead, Fd: 3, Result: 4096, FileOffset: 65536, File: FileID{2049, 131, 1 << 25, 1795312259149501000, 1795312259149501001}, Thread: 2},
		{Kind: FileRead, Fd: 3, Result: 100, FileOffset: 65536 + 4096, File: FileID{2049, 131, 1 << 25, 1795312259149501000, 1795312259149501001}, Thread: 2},
		{Kind: FileRead, Fd: 3, Result: 7, FileOffset: 1 << 20, Pread: true, File: FileID{2049, 131, 1 << 25, 1795312259149501000, 1795312259149501001}, Thread: 2},
		{Kind: FileRead, Fd: 3, Result: 9, FileOffset: 1<<20 + 7, File: FileID{2049, 132, 5, -1, 0}, Thread: 2},
		{Kind: Debugger, Fd: -1}, {Kind: Debugger, Fd: -1, Thread: 2},
		{Kind: OpenW, Fd: -1, File: FileID{Dev: 2049, Ino: 131, Size: 344}}, {Kind: OpenW, Fd: -1, Result: -2},
		{Kind: Send, Fd: 5, Result: 120}, {Kind: Send, Fd: 5, Result: -32},
	}
}

// same compares what the writer was given with what the reader returns.
func same(t *testing.T, want []Entry, got []Entry) {
	t.Helper()
	var g []Entry
	for _, e := range got {
		if e.Kind == Thread {
			continue
		}
		g = append(g, e)
	}
	if len(g) != len(want) {
		t.Fatalf("%d entries back, want %d", len(g), len(want))
	}
	for i, w := range want {
		e := g[i]
		if w.Thread == 0 {
			w.Thread = 1
		}
		if e.Kind != w.Kind || (e.Thread != w.Thread && w.Kind != Branch) || e.Value != w.Value || e.Failed != w.Failed ||
			!bytes.Equal(e.Data, w.Data) || (w.Kind == Clock && e.ClockID != w.ClockID) {
			t.Fatalf("entry %d: got %+v, want %+v", i, e, w)
		}
		if w.Kind != Clock && w.Kind != Time && w.Kind != TimeOfDay && w.Kind != Branch && (e.Fd != w.Fd || e.Result != w.Result) {
			t.Fatalf("entry %d: got fd %d result %d, want %d %d", i, e.Fd, e.Result, w.Fd, w.Result)
		}
		if e.FileOffset != w.FileOffset || e.File != w.File || e.Pread != w.Pread {
			t.Fatalf("entry %d: got file read %+v, want %+v", i, e, w)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	w := NewWriter()
	w.Size = 1 << 16
	for _, e := range sample() {
		w.Add(e)
	}
	path := filepath.Join(t.TempDir(), "log")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	l, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	same(t, sample(), l.Entries)
	if l.Count != uint64(len(l.Entries)) {
		t.Errorf("header count %d, %d entries", l.Count, len(l.Entries))
	}
	for i, e := range l.Entries {
		if e.Seq != uint64(i) {
			t.Errorf("entry %d has seq %d", i, e.Seq)
		}
	}
	var out bytes.Buffer
	if err := Dump(&out, path, 0); err != nil {
		t.Fatal(err)
	}
	row := func(seq, thread int, call, result string) string {
		return fmt.Sprintf("%-7d %-6d %-26s %s\n", seq, thread, call, result)
	}
	for _, want := range []string{`clock_gettime              clock 1: 8364.656858772`, `read                       fd 3: 6 bytes "hello\n"`,
		`fd 9: -1 (errno 11)`, `getrandom                  8 bytes 0102030405060708`, `mmap                       0x7ffff7fc0000`,
		`thread 2 runs`, `a new branch of history starts here`, `signal                     SIGUSR1 (10) handled`, `epfd 8: 0 ready`,
		row(29, 2, "pthread_create", "thread 3"), row(31, 3, "pthread_mutex_lock", "0"), row(32, 3, "pthread_mutex_trylock", "EBUSY"),
		row(34, 2, "pthread_mutex_timedlock", "ETIMEDOUT"), row(47, 4, "pthread_cond_timedwait", "ETIMEDOUT"),
		row(52, 1, "sem_trywait", "-1 (EAGAIN)"), row(56, 2, "pthread_join", "0"),
		row(57, 2, "file read", "fd 3: 4096 bytes at offset 65536 of inode 131 (read; in the file, not the log)"),
		row(59, 2, "file read", "fd 3: 7 bytes at offset 1048576 of inode 131 (pread; in the file, not the log)"),
		"21 sync events, 2.8 bytes per sync event", "; 4212 bytes of file reads logged by reference"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dump lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCompact: the common entries take at most 8 bytes.
func TestCompact(t *testing.T) {
	w := NewWriter()
	base := int64(8364656858772)
	for i := 0; i < 1000; i++ {
		w.Add(Entry{Kind: Clock, ClockID: 1, Value: base + int64(i)*1500000}) // 1.5 ms apart
		w.Add(Entry{Kind: Time, Value: 1795312259 + int64(i/100)})
		w.Add(Entry{Kind: GetPid, Fd: -1, Result: 123456})
		w.Add(Entry{Kind: Read, Fd: 3, Data: make([]byte, 100)})
		w.Add(Entry{Kind: FileRead, Fd: 4, Result: 4096, FileOffset: 1<<16 + uint64(i)*4096, File: FileID{2049, 131, 1 << 25, 1795312259149501000, 1795312259149501001}})
	}
	l, err := Parse(Header{Size: 1 << 30, End: uint64(HeaderSize + len(w.buf))}, w.buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries[5:] { // the first are absolute
		if n := e.Len - len(e.Data); n > 8 {
			t.Errorf("%s entry takes %d bytes besides its data", e.Kind, n)
		}
	}
}

// TestSyncCompact: a lock event takes 2 bytes, and at most 4 with the
// thread switch before it (under 128 threads); every sync kind has a name and decodes.
func TestSyncCompact(t *testing.T) {
	w := NewWriter()
	r := rand.New(rand.NewSource(1))
	n := 0
	for i := 0; i < 10000; i++ {
		k := MutexLock + Kind(r.Intn(int(Join-MutexLock)+1))
		res := int64(0)
		if r.Intn(10) == 0 {
			res = 16 // EBUSY
		}
		w.Add(Entry{Kind: k, Thread: 1 + r.Intn(100), Result: res})
		n++
	}
	l, err := Parse(Header{Size: 1 << 30, End: uint64(HeaderSize + len(w.buf))}, w.buf)
	if err != nil {
		t.Fatal(err)
	}
	st := l.SyncStats()
	if st.Events != n {
		t.Fatalf("%d sync events, want %d", st.Events, n)
	}
	// every event here switches thread (nearly): the worst case
	if per := st.PerEvent(); per > 4 || per < 2 {
		t.Errorf("%.2f bytes per sync event, want 2 to 4", per)
	}
	for k := MutexLock; k <= Join; k++ {
		if !k.IsSync() || strings.HasPrefix(k.String(), "kind(") {
			t.Errorf("kind %d: %q, sync %v", k, k, k.IsSync())
		}
	}
	if Thread.IsSync() || (Join + 1).IsSync() {
		t.Error("IsSync is true outside the sync kinds")
	}
}

// TestRandomLogs: random entries round-trip; every truncation of the
// encoding gives the whole entries before it and a FormatError, never a
// panic or a wrong entry.
func TestRandomLogs(t *testing.T) {
	kinds := []Kind{Time, TimeOfDay, Clock, Random, Read, Pread, Recv, Accept, Poll, Select, Epoll, GetPid, GetPPid, Mmap, Branch, Stdio, Signal, FileRead, Debugger, OpenW, Send, Bind, Peer}
	for k := MutexLock; k <= Join; k++ {
		kinds = append(kinds, k)
	}
	for seed := int64(0); seed < 200; seed++ {
		r := rand.New(rand.NewSource(seed))
		var es []Entry
		w := NewWriter()
		lastFile := map[int]Entry{}
		for i := 0; i < 1+r.Intn(40); i++ {
			k := kinds[r.Intn(len(kinds))]
			e := Entry{Kind: k, Thread: 1 + r.Intn(3), Fd: r.Intn(1000) - 1}
			v := r.Int63n(1<<62) - 1<<61
			switch k {
			case Time, TimeOfDay, Clock:
				e.Value, e.ClockID = v, r.Intn(20)-3
				e.Failed = k == Clock && r.Intn(10) == 0
				if e.Failed {
					e.Value = 0
				}
			case Mmap:
				e.Value = r.Int63n(1<<47) &^ 0xfff
				e.Result = e.Value >> 12
			case Signal:
				e.Result = int64(1 + r.Intn(64))
			case Branch:
			case Debugger:
				e.Fd = -1
			case OpenW:
				e.Fd, e.File = -1, FileID{Dev: uint64(r.Int63()), Ino: uint64(r.Int63()), Size: uint64(r.Int63())}
				if r.Intn(3) == 0 {
					e.Result, e.File = -int64(1+r.Intn(100)), FileID{}
				}
			case FileRead:
				// few fds, so that reads go on from earlier ones
				e.Fd, e.Result, e.Pread = r.Intn(3), 1+r.Int63n(1<<20), r.Intn(4) == 0
				e.FileOffset = uint64(r.Int63n(1 << 40))
				e.File = FileID{uint64(r.Intn(3)), uint64(r.Intn(3)), uint64(r.Int63()), r.Int63() - r.Int63(), r.Int63() - r.Int63()}
				if prev, ok := lastFile[e.Fd]; ok && r.Intn(2) == 0 {
					e.FileOffset, e.File = prev.FileOffset+uint64(prev.Result), prev.File
				}
				lastFile[e.Fd] = e
			default:
				if k.hasData() && r.Intn(5) > 0 {
					e.Data = make([]byte, r.Intn(300))
					r.Read(e.Data)
					e.Result = int64(len(e.Data))
				} else {
					e.Result = -int64(r.Intn(130))
					if !k.hasData() {
						e.Result = v
					}
				}
			}
			if k == Time || k == TimeOfDay || k == Clock || k == Branch || k == Signal || k.IsSync() {
				e.Fd = -1
			}
			if k.hasData() && len(e.Data) == 0 && e.Result > 0 {
				e.Result = 0
			}
			es = append(es, e)
			w.Add(e)
		}
		b := w.Bytes()
		h, err := ParseHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Parse(h, b[HeaderSize:h.End])
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for i := range es {
			if es[i].Kind.hasData() && es[i].Result == 0 {
				es[i].Data = nil
			}
		}
		same(t, es, l.Entries)
		for cut := HeaderSize; cut < int(h.End); cut += 1 + r.Intn(7) {
			part, err := Parse(h, b[HeaderSize:cut])
			whole := 0
			for _, e := range l.Entries {
				if e.Offset+uint64(e.Len) <= uint64(cut) {
					whole++
				}
			}
			if len(part.Entries) != whole {
				t.Fatalf("seed %d, cut at %d: %d entries, want the %d whole ones", seed, cut, len(part.Entries), whole)
			}
			if !reflect.DeepEqual(part.Entries, l.Entries[:whole]) && whole > 0 {
				t.Fatalf("seed %d, cut at %d: entries differ", seed, cut)
			}
			atBoundary := whole == len(l.Entries) || l.Entries[whole].Offset == uint64(cut)
			if (err == nil) != atBoundary {
				t.Fatalf("seed %d, cut at %d: error %v, at an entry boundary: %v", seed, cut, err, atBoundary)
			}
			if err != nil && !errors.Is(err, ErrFormat) {
				t.Fatalf("seed %d: error %v is not a FormatError", seed, err)
			}
		}
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter()
	w.Add(Entry{Kind: Read, Fd: 3, Data: []byte("0123456789")})
	b := w.Bytes()
	cases := map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("NOTALOG!"), b[8:]...),
		"truncated": b[:len(b)-4],
		"kind":      append(append([]byte(nil), b[:HeaderSize]...), append([]byte{99}, b[HeaderSize+1:]...)...),
	}
	want := map[string]string{"empty": "less than a header", "magic": "no FREDLOG1 magic",
		"truncated": "(10 bytes of data|ends before)", "kind": "unknown entry kind 99"}
	for name, data := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o600)
		_, err := ReadFile(p)
		if err == nil || !regexp.MustCompile(want[name]).MatchString(err.Error()) || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want a FormatError matching %q", name, err, want[name])
		}
		var out bytes.Buffer
		if err := Dump(&out, p, 0); err == nil {
			t.Errorf("%s: Dump gave no error", name)
		}
	}
}

// A replayed read gives its bytes from the log: the file's offset and the
// stream's position still move as the recorded read moved them, so that
// what the program reads through the stream's buffer (a macro the library
// does not see), ftell and lseek give what they gave when recorded, and a
// short read leaves the stream at its end (feof). (A script read by fread
// and then through its buffer came back to Python as "iimport time": a
// SyntaxError on replay; sort read again where feof said the end.)
func TestLibraryReplayMovesTheOffset(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "readpos")
	dir := t.TempDir()
	data, data2, logf := filepath.Join(dir, "data"), filepath.Join(dir, "data2"), filepath.Join(dir, "log")
	os.WriteFile(data, []byte("import time\n"), 0o600)
	os.WriteFile(data2, []byte("second file\n"), 0o600)
	// stored in the log (FREDLOG_STORE=-1), as fred record keeps a run
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_STORE=-1"}
	first := runProg(t, with, prog, data, data2)
	want := `fread 2 "im" at 2; fgetc 'i' then "mport time` + "\n" + `"; read 4, offset 4; fread_unlocked 12 "second file", feof 1` + "\n"
	if first != want {
		t.Fatalf("recorded run printed %q, want %q", first, want)
	}
	os.WriteFile(data2, []byte("changed since\n"), 0o600)
	for i := 0; i < 2; i++ {
		if again := runProg(t, append(with, "FREDLOG_REPLAY=1"), prog, data, data2); again != first {
			t.Fatalf("replay %d printed %q; recorded %q", i, again, first)
		}
	}
}

// The scanf family reads its stream inside libc, where the library does
// not see the reads: a replay runs the same conversions on the bytes the
// recorded ones consumed, with the same results (a match, a matching
// failure that leaves the word unread, the end of the file), although the
// file changed since.
func TestLibraryReplaysScanf(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "scanfile")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	os.WriteFile(data, []byte("41 word 1 2\n3\n"), 0o600)
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf}
	first := runProg(t, with, prog, data)
	want := "a=41 (1) b=0 (0) word=word (1) 3 more, sum 6, last -1, feof 1, at 14\nmemory: 42 77 (2)\n"
	if first != want {
		t.Fatalf("recorded run printed %q, want %q", first, want)
	}
	os.WriteFile(data, []byte("7 8 9\n"), 0o600)
	if plain := runProg(t, nil, prog, data); plain == first {
		t.Fatalf("the changed file reads as the recorded one without the library: %q", plain)
	}
	for i := 0; i < 2; i++ {
		if again := runProg(t, append(with, "FREDLOG_REPLAY=1"), prog, data); again != first {
			t.Fatalf("replay %d printed %q; recorded %q", i, again, first)
		}
	}
}

// With the file metadata logged (FREDLOG_STAT=1, as fred record keeps a
// run), statx's answer replays too, as stat's does, after the file changed.
func TestLibraryReplaysStatx(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "statx")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	os.WriteFile(data, []byte("four"), 0o600)
	os.Chtimes(data, time.Unix(1e9, 0), time.Unix(1e9, 0))
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_STAT=1"}
	first := runProg(t, with, prog, data)
	if want := "statx 0 size 4 mtime 1000000000; stat 0 size 4\n"; first != want {
		t.Fatalf("recorded run printed %q, want %q", first, want)
	}
	os.WriteFile(data, []byte("longer now"), 0o600)
	if again := runProg(t, append(with, "FREDLOG_REPLAY=1"), prog, data); again != first {
		t.Fatalf("replay printed %q; recorded %q", again, first)
	}
}

// A directory's entries and a seek to a file's end are logged with the
// file metadata: a replay after the directory gained a file and the file
// grew prints the recorded names, size and last bytes; and a directory
// gone since gets a stand-in whose entries are the recorded ones.
func TestLibraryReplaysDirectoryAndSeek(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "listdir")
	dir := t.TempDir()
	list, data, logf := filepath.Join(dir, "list"), filepath.Join(dir, "data"), filepath.Join(dir, "log")
	os.Mkdir(list, 0o755)
	for _, f := range []string{"b", "a"} {
		os.WriteFile(filepath.Join(list, f), nil, 0o600)
	}
	os.WriteFile(data, []byte("recorded\n"), 0o600)
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_STAT=1"}
	first := runProg(t, with, prog, list, data)
	if want := "a b | size 9, then at 7: d\n| stream: size 9, e\n"; first != want {
		t.Fatalf("recorded run printed %q, want %q", first, want)
	}
	os.WriteFile(filepath.Join(list, "c"), nil, 0o600)
	os.WriteFile(data, []byte("a longer file now\n"), 0o600)
	if again := runProg(t, append(with, "FREDLOG_REPLAY=1"), prog, list, data); again != first {
		t.Fatalf("replay printed %q; recorded %q", again, first)
	}
	os.RemoveAll(list)
	if again := runProg(t, append(with, "FREDLOG_REPLAY=1"), prog, list, data); again != first {
		t.Fatalf("replay without the directory printed %q; recorded %q", again, first)
	}
	// A log of version 2 has neither: they pass through.
	os.Mkdir(list, 0o755)
	os.WriteFile(filepath.Join(list, "x"), nil, 0o600)
	v2 := append(with, "FREDLOG_LOGV=2")
	runProg(t, v2, prog, list, data)
	os.WriteFile(filepath.Join(list, "y"), nil, 0o600)
	if again := runProg(t, append(v2, "FREDLOG_REPLAY=1"), prog, list, data); !strings.HasPrefix(again, "x y |") {
		t.Fatalf("a version 2 replay printed %q, want the directory as it is", again)
	}
}

// Under FREDLOG_MONO=lenient (an interpreter's session: CPython reads the
// monotonic clock at every lock it takes, and its debugger's work takes
// locks the recorded run did not), a replay that reads the monotonic
// clock more or fewer times than the recorded run stays on its log; a
// strict one leaves it.
func TestLibraryMonotonicLenient(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "monotonic")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	os.WriteFile(data, []byte("recorded\n"), 0o600)
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_MONO=lenient", "MONO_READS=3"}
	first := runProg(t, with, prog, data)
	os.WriteFile(data, []byte("changed\n"), 0o600)
	for _, reads := range []string{"1", "6", "0"} {
		again := runProg(t, append(with, "FREDLOG_REPLAY=1", "MONO_READS="+reads), prog, data)
		if again != first {
			t.Fatalf("lenient replay with %s monotonic reads printed %q; recorded %q", reads, again, first)
		}
	}
	strict := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "MONO_READS=3"}
	runProg(t, strict, prog, data)
	os.WriteFile(data, []byte("changed again\n"), 0o600)
	if again := runProg(t, append(strict, "FREDLOG_REPLAY=1", "MONO_READS=5"), prog, data); !strings.Contains(again, "changed again") {
		t.Fatalf("a strict replay with more monotonic reads stayed on its log: %q", again)
	}
}

// With the file metadata logged (a recording), a file that is gone when
// the run is replayed gets a stand-in of its recorded size: a program that
// sizes it by seeking to its end, then reads it, prints what it printed.
func TestLibraryStandIn(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "sized")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	os.WriteFile(data, []byte("twelve bytes\n"), 0o600)
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_STAT=1", "FREDLOG_STORE=-1"}
	first := runProg(t, with, prog, data)
	if first != "size 13, read 13: twelve bytes\n" {
		t.Fatalf("recorded run printed %q", first)
	}
	os.Remove(data)
	if again := runProg(t, append(with, "FREDLOG_REPLAY=1"), prog, data); again != first {
		t.Fatalf("replay without the file printed %q; recorded %q", again, first)
	}
}

// The library, in a real program without a debugger: a recorded run
// replays (FREDLOG_REPLAY=1 replays from the start of the file) with the
// same values although the world changed; without the library they differ.
func TestLibraryRecordReplay(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "nondet")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	run := func(value string, env ...string) string {
		t.Helper()
		os.WriteFile(data, []byte(value+"\n"), 0o600)
		return runProg(t, env, prog, data)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_TTY=1"}
	first := run("one", with...)
	if !strings.Contains(first, "file=one") {
		t.Fatalf("first run:\n%s", first)
	}
	again := run("two", append(with, "FREDLOG_REPLAY=1")...)
	if again != first {
		t.Fatalf("replay differs:\n%s\nfirst:\n%s", again, first)
	}
	if had, err := Threaded(logf); had || err != nil {
		t.Errorf("a program of one thread: the header says it made threads (%v, %v)", had, err)
	}
	plain := run("two")
	if plain == first || !strings.Contains(plain, "file=two") {
		t.Fatalf("without the library the values should differ:\n%s", plain)
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]bool{}
	for _, e := range l.Entries {
		kinds[e.Kind] = true
	}
	for _, k := range []Kind{Time, Clock, TimeOfDay, Random, Read, Stdio, GetPid} {
		if !kinds[k] {
			t.Errorf("no %s entry in the log:\n%+v", k, l.Entries)
		}
	}

	// Another path than the log's: said once, and recorded from there.
	other := run("three", append(with, "FREDLOG_REPLAY=1", "NONDET_OTHER=1")...)
	if strings.Count(other, "diverged from the log") != 1 || !strings.Contains(other, "it called time where the log has read") ||
		!strings.Contains(other, "other path:") || !strings.Contains(other, "file=one") {
		t.Fatalf("divergence:\n%s", other)
	}
	l2, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	if l2.Notices != 1 || !strings.Contains(l2.Notice, "it called time where the log has read") {
		t.Errorf("the header's notice: %d, %q", l2.Notices, l2.Notice)
	}
	if l2.Divergences != 1 || l2.Entries[len(l2.Entries)-1].Kind != Time {
		t.Fatalf("after the divergence the log should end with the new time entry: %d divergences, %+v", l2.Divergences, l2.Entries[len(l2.Entries)-1])
	}
	// A new run records afresh.
	if fresh := run("four", with...); !strings.Contains(fresh, "file=four") {
		t.Fatalf("a new run replayed the old log:\n%s", fresh)
	}
}

// The order of threads (mt_interleave: four threads append to a buffer
// under a mutex, nothing forcing their turns): replays print what the
// recorded run printed, on two cores, each time; plain runs differ at
// least once in a few. Every kind of sync call the fixture makes is in the
// log, at no more than 8 bytes an event. A run that takes another path
// is reported once and finishes (no thread waits for ever).
func TestLibraryThreadOrder(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "mt_interleave")
	logf := filepath.Join(t.TempDir(), "log")
	run := func(env ...string) string {
		t.Helper()
		return runProg(t, env, prog)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf}
	first := run(with...)
	if !strings.Contains(first, "n=1200") {
		t.Fatalf("first run:\n%s", first)
	}
	for i := 0; i < 5; i++ {
		if again := run(append(with, "FREDLOG_REPLAY=1")...); again != first {
			t.Fatalf("replay %d differs:\n%s\nrecorded:\n%s", i, again, first)
		}
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	if l.Divergences != 0 || l.Notices != 0 {
		t.Errorf("replays: %d divergences, notice %q", l.Divergences, l.Notice)
	}
	kinds := map[Kind]bool{}
	for _, e := range l.Entries {
		kinds[e.Kind] = true
	}
	for _, k := range []Kind{MutexLock, MutexUnlock, RWRdlock, RWWrlock, RWUnlock, CondWait, CondBroadcast, SemWait, SemPost, Create, Join, Read} {
		if !kinds[k] {
			t.Errorf("no %s entry in the log", k)
		}
	}
	threads := map[int]bool{}
	for _, e := range l.Entries {
		threads[e.Thread] = true
	}
	if len(threads) != 5 {
		t.Errorf("threads %v in the log, want 1 to 5", threads)
	}
	if st := l.SyncStats(); st.Events < 4800 || st.PerEvent() > 8 {
		t.Errorf("%d sync events, %.2f bytes each", st.Events, st.PerEvent())
	}
	differ := false
	for i := 0; i < 8 && !differ; i++ {
		differ = run() != first
	}
	if !differ {
		t.Errorf("eight runs without the library printed what the recorded one did: the fixture does not depend on the schedule")
	}

	other := run(append(with, "FREDLOG_REPLAY=1", "MT_OTHER=1", "FREDLOG_QUIET=0")...)
	if strings.Count(other, "diverged from the log") != 1 || !strings.Contains(other, "it called pthread_mutex_lock where the log has pthread_rwlock_rdlock") ||
		!strings.Contains(other, "n=1200") {
		t.Fatalf("another path:\n%s", other)
	}
	// A thread that stalls outside the log (a sleep, a spin) while the
	// others wait for its turn: the wait is bounded, said once, and the
	// run records on from there.
	run(with...)
	stall := run(append(with, "FREDLOG_REPLAY=1", "MT_OTHER=2", "FREDLOG_QUIET=0", "FREDLOG_TURN_MS=100")...)
	if strings.Count(stall, "diverged from the log") != 1 || !regexp.MustCompile(`thread \d waits to call pthread_\w+, but thread 4, whose turn it is, has not taken it`).MatchString(stall) ||
		!strings.Contains(stall, "n=1200") {
		t.Fatalf("a stalled thread:\n%s", stall)
	}
}

// A pipe between two threads (mt_pipe: 1 MB in 4 KB writes, read in
// 1000-byte reads): replays give the logged data and still empty the pipe
// as the writer fills it again, so the writer never blocks for good; they
// print what the recorded run printed.
func TestLibraryThreadPipe(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "mt_pipe")
	logf := filepath.Join(t.TempDir(), "log")
	run := func(env ...string) string {
		t.Helper()
		return runProg(t, env, prog)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_QUIET=0"}
	first := run(with...)
	if !strings.Contains(first, "total=1048576") {
		t.Fatalf("first run:\n%s", first)
	}
	for i := 0; i < 3; i++ {
		if again := run(append(with, "FREDLOG_REPLAY=1")...); again != first {
			t.Fatalf("replay %d:\n%s\nrecorded:\n%s", i, again, first)
		}
	}
	differ := false
	for i := 0; i < 8 && !differ; i++ {
		differ = run() != first
	}
	if !differ {
		t.Errorf("eight runs without the library printed what the recorded one did")
	}
}

// The pipe of mt_pipe in 128-byte writes: 8,000-odd replayed reads, each
// owing the pipe while the producer, waiting for its turn, drains it too.
// Replays run side by side, so that a thread is often taken off its CPU
// between looking at the pipe and reading it (in the recorded run's
// schedule, as under a loaded machine); some replay only a prefix of the
// log and record on from there, when what the pipe still owes or holds
// ahead must be exactly right. Every replay ends (none waits for a turn
// until it gives up, nor for ever), says nothing, and prints what the
// recording did (a prefix: the native total and sum).
func TestLibraryThreadPipeSmallWrites(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "mt_pipe")
	dir := t.TempDir()
	logf := filepath.Join(dir, "log")
	native := runProg(t, nil, prog, "128")
	data, _, ok := strings.Cut(native, " mix=")
	if !ok || !strings.HasPrefix(data, "total=1048576 ") {
		t.Fatalf("native run: %q", native)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_QUIET=0", "FREDLOG_SIZE=" + fmt.Sprint(32<<20)}
	first := runProg(t, append(with, "FREDLOG_FILE="+logf), prog, "128")
	if !strings.HasPrefix(first, data+" mix=") {
		t.Fatalf("first run: %q, natively %q", first, native)
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	const side = 4 // replays side by side
	for round := 0; round < 3; round++ {
		outs := make([]string, side)
		cutAt := make([]uint64, side)
		var wg sync.WaitGroup
		for i := range outs {
			b := append([]byte(nil), orig...)
			if round > 0 && i%2 == 1 {
				// a prefix: the log ends at an entry from 10% to 90% of the way
				e := l.Entries[len(l.Entries)*(1+rand.Intn(9))/10]
				h := l.Header
				h.End, h.Count = e.Offset, e.Seq
				putHeader(b, h)
				cutAt[i] = e.Seq
			}
			copyf := filepath.Join(dir, fmt.Sprintf("log%d", i))
			if err := os.WriteFile(copyf, b, 0o600); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				c := exec.CommandContext(ctx, prog, "128")
				c.Env = append(append(os.Environ(), with...), "FREDLOG_FILE="+copyf, "FREDLOG_REPLAY=1")
				out, err := c.CombinedOutput()
				outs[i] = string(out)
				if ctx.Err() != nil {
					outs[i] += "(did not end: killed)"
				} else if err != nil {
					outs[i] += err.Error()
				}
			}()
		}
		wg.Wait()
		for i, out := range outs {
			if cutAt[i] == 0 && out != first {
				t.Errorf("round %d, replay %d:\n%s\nrecorded:\n%s", round, i, out, first)
			}
			if cutAt[i] > 0 && !strings.HasPrefix(out, data+" mix=") {
				t.Errorf("round %d, replay %d of the first %d entries, then recorded:\n%s\nnatively:\n%s", round, i, cutAt[i], out, native)
			}
		}
		if t.Failed() {
			return
		}
	}
}

// The readiness and socket calls: poll, select, epoll_wait, pread, accept,
// recvmsg replay the recorded results.
func TestLibraryReadiness(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "nondet_io")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	run := func(value string, env ...string) string {
		t.Helper()
		os.WriteFile(data, []byte(value+"\n"), 0o600)
		return runProg(t, env, prog, data)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf}
	first := run("..first", with...)
	if !strings.Contains(first, "pread=first") || !strings.Contains(first, "accept=ok recvmsg=ns=") {
		t.Fatalf("first run:\n%s", first)
	}
	// Replays, against a world where the file changed and the pipe is
	// ready on about every other run.
	for i := 0; i < 4; i++ {
		if again := run("..second", append(with, "FREDLOG_REPLAY=1")...); again != first {
			t.Fatalf("replay %d:\n%s\nfirst:\n%s", i, again, first)
		}
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[Kind]bool{}
	for _, e := range l.Entries {
		kinds[e.Kind] = true
	}
	for _, k := range []Kind{Poll, Select, Epoll, Pread, Accept, Recv} {
		if !kinds[k] {
			t.Errorf("no %s entry in the log", k)
		}
	}
	if plain := run("..third"); plain == first {
		t.Fatalf("without the library the output should differ:\n%s", plain)
	}
}

// Signals: the handler of a signal the program sent itself, and of one
// from outside, run at the same place on replay, without the outside
// signal being sent again.
func TestLibrarySignals(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "nondet_sig")
	logf := filepath.Join(t.TempDir(), "log")
	run := func(kill bool, env ...string) string {
		t.Helper()
		c := exec.Command(prog)
		c.Env = append(os.Environ(), env...)
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 4096)
		for !strings.Contains(string(got), "ready") {
			n, err := out.Read(buf)
			if err != nil {
				c.Wait()
				t.Fatalf("%v: no 'ready': %q", env, got)
			}
			got = append(got, buf[:n]...)
		}
		if kill {
			c.Process.Signal(syscall.SIGUSR2)
		}
		rest, _ := io.ReadAll(out)
		if err := c.Wait(); err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		return string(append(got, rest...))
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf}
	first := run(true, with...)
	if !strings.Contains(first, "usr2 after") || strings.Contains(first, "usr1 ns=-1") {
		t.Fatalf("first run:\n%s", first)
	}
	if again := run(false, append(with, "FREDLOG_REPLAY=1")...); again != first {
		t.Fatalf("replay:\n%s\nfirst:\n%s", again, first)
	}
	if plain := run(false); !strings.Contains(plain, "no usr2") {
		t.Fatalf("without the library and the signal:\n%s", plain)
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	var sigs []int64
	for _, e := range l.Entries {
		if e.Kind == Signal {
			sigs = append(sigs, e.Result)
		}
	}
	if len(sigs) != 2 || sigs[0] != int64(syscall.SIGUSR1) || sigs[1] != int64(syscall.SIGUSR2) {
		t.Fatalf("signal entries %v, want SIGUSR1 then SIGUSR2", sigs)
	}
}

// A disk that fills while recording: one message, and the program runs on
// unlogged (writing into a hole of a full disk through the mapping would
// kill it with SIGBUS).
func TestLibraryDiskFull(t *testing.T) {
	testutil.Require(t, "gcc", "mount")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a small tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	data := filepath.Join(t.TempDir(), "data")
	os.WriteFile(data, bytes.Repeat([]byte("x"), 256<<10), 0o600)
	c := exec.Command(testutil.Fixture(t, "bench_read"), data)
	c.Env = append(os.Environ(), "LD_PRELOAD="+lib, "FREDLOG_FILE="+filepath.Join(dir, "log"))
	out, err := c.CombinedOutput()
	if err != nil || strings.Count(string(out), "cannot extend the log") != 1 || !strings.Contains(string(out), "read: 64 chunks") {
		t.Fatalf("%v:\n%s", err, out)
	}
}

// TestLibraryFileReads: reads of a large regular file past its first
// 64 KiB are logged by reference (where, and which version of the file),
// not copied; a replay reads the file again and gets the same bytes. A
// file changed since is a divergence, never other data; with
// FREDLOG_STORE=-1 everything is stored and a changed file replays too.
func TestLibraryFileReads(t *testing.T) {
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "bench_read")
	dir := t.TempDir()
	data, logf := filepath.Join(dir, "data"), filepath.Join(dir, "log")
	content := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(content)
	if err := os.WriteFile(data, content, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(env ...string) string {
		t.Helper()
		c := exec.Command(prog, data, "2") // two passes: the fd is closed and opened again
		// The file was written just now: by default it would count as
		// changed since the program started, and be stored.
		c.Env = append(os.Environ(), append([]string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_RACY_NS=0"}, env...)...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", env, err, out)
		}
		return string(out)
	}
	first := run()
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	var stored, byRef int64
	for _, e := range l.Entries {
		switch {
		case e.Kind == Read && e.Fd == 3:
			stored += int64(len(e.Data))
		case e.Kind == FileRead:
			byRef += e.Result
			if e.Fd != 3 || e.Pread || e.FileOffset < 60<<10 {
				t.Fatalf("file read entry %+v", e)
			}
		}
	}
	if stored != 2*64<<10 || byRef != 2*(1<<20-64<<10) {
		t.Fatalf("%d bytes stored, %d by reference; want the first 64 KiB of each pass stored", stored, byRef)
	}
	if per := float64(l.Bytes()-uint64(stored)) / float64(len(l.Entries)); per > 8 {
		t.Errorf("%.1f bytes per entry besides the data", per)
	}
	if again := run("FREDLOG_REPLAY=1"); again != first {
		t.Fatalf("replay differs:\n%s\nfirst:\n%s", again, first)
	}

	// Another version of the file (another size, so that its ctime
	// could not hide the change, even within one tick): the replay
	// stops at the first read by reference and says why.
	changed := append([]byte{}, content...)
	changed[100<<10] ^= 0xff
	if err := os.WriteFile(data, append(changed, 'x'), 0o600); err != nil {
		t.Fatal(err)
	}
	out := run("FREDLOG_REPLAY=1")
	if strings.Count(out, "diverged") != 1 || !strings.Contains(out, "it called read (fd 3: the file, inode") || !strings.Contains(out, "where the log has file read") {
		t.Fatalf("a replay over a changed file:\n%s", out)
	}
	if out == first {
		t.Fatalf("a replay over a changed file gave the first run's output")
	}

	// Everything stored: the changed file does not matter.
	if err := os.WriteFile(data, content, 0o600); err != nil {
		t.Fatal(err)
	}
	first = run("FREDLOG_STORE=-1")
	if err := os.WriteFile(data, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if again := run("FREDLOG_STORE=-1", "FREDLOG_REPLAY=1"); again != first {
		t.Fatalf("replay with everything stored differs:\n%s\nfirst:\n%s", again, first)
	}
	if plain := run("FREDLOG_STORE=-1"); plain == first {
		t.Fatalf("the changed file gives the same output: the test cannot fail")
	}
}

// TestLibraryReadv: readv and preadv are logged (a small file's data, a
// large file's by reference) and replayed, scattered into the program's
// pieces again.
func TestLibraryReadv(t *testing.T) {
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "readv")
	dir := t.TempDir()
	small, large, logf := filepath.Join(dir, "small"), filepath.Join(dir, "large"), filepath.Join(dir, "log")
	content := make([]byte, 1<<18)
	rand.New(rand.NewSource(2)).Read(content)
	if err := os.WriteFile(large, content, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(value string, env ...string) string {
		t.Helper()
		if err := os.WriteFile(small, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return runProg(t, env, prog, small, large)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf, "FREDLOG_RACY_NS=0"}
	first := run("first value", with...)
	if !strings.Contains(first, "small=first value\n") || !strings.Contains(first, "large=8192 bytes") {
		t.Fatalf("first run:\n%s", first)
	}
	if again := run("second value", append(with, "FREDLOG_REPLAY=1")...); again != first {
		t.Fatalf("replay differs:\n%s\nfirst:\n%s", again, first)
	}
	if plain := run("second value"); plain == first || !strings.Contains(plain, "small=second value") {
		t.Fatalf("without the library the output should differ:\n%s", plain)
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	var reads, files int
	for _, e := range l.Entries {
		switch {
		case e.Kind == Read && e.Result > 0:
			reads++
		case e.Kind == FileRead && e.Pread && e.FileOffset == 100000 && e.Result == 8192:
			files++
		}
	}
	if reads < 2 || files != 1 {
		t.Fatalf("want the readv()s as reads and the preadv() as a file read:\n%+v", l.Entries)
	}
}

// recvmmsg is logged as one recvmsg a message: a replay returns the
// recorded datagrams and their number, whatever the program sends now.
func TestLibraryRecvmmsg(t *testing.T) {
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "recvmmsg")
	logf := filepath.Join(t.TempDir(), "log")
	run := func(value string, env ...string) string {
		t.Helper()
		return runProg(t, env, prog, value)
	}
	with := []string{"LD_PRELOAD=" + lib, "FREDLOG_FILE=" + logf}
	first := run("first", with...)
	if first != "3 messages: first-0 first-1 first-2\n" {
		t.Fatalf("first run: %q", first)
	}
	if again := run("second", append(with, "FREDLOG_REPLAY=1")...); again != first {
		t.Fatalf("replay differs: %q, first %q", again, first)
	}
	if plain := run("second"); plain != "3 messages: second-0 second-1 second-2\n" {
		t.Fatalf("without the library: %q", plain)
	}
}

// runProg runs prog with args and the environment plus env, and returns
// what it printed; a failure ends the test.
func runProg(t *testing.T, env []string, prog string, args ...string) string {
	t.Helper()
	c := exec.Command(prog, args...)
	c.Env = append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", env, err, out)
	}
	return string(out)
}

// A thread that holds a mutex and reads the clock while an in-process
// debugger starts talking, whose thread then needs that mutex (mt_window:
// CPython's GIL under pdb, where take_gil reads the clock holding the
// GIL's mutex and pdb's thread takes it to hand the GIL over). The
// library must not hold the worker back while it holds the mutex: the
// run, recorded and replayed, ends. (It hung for good: TestPDBThreads,
// now and then.)
func TestLibraryDebuggerWaitsForAHeldLock(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "mt_window")
	logf := filepath.Join(t.TempDir(), "log")
	run := func(env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, prog)
		c.Env = append(append(os.Environ(), "LD_PRELOAD="+lib, "FREDLOG_FILE="+logf, "FREDLOG_QUIET=0"), env...)
		out, err := c.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%v: the run did not end in a minute (the worker waits for the debugger holding the mutex it needs):\n%s", env, out)
		}
		if err != nil {
			t.Fatalf("%v: %v\n%s", env, err, out)
		}
		return string(out)
	}
	if out := run(); out != "done\n" {
		t.Fatalf("recorded run: %q", out)
	}
	// (its header says it made a thread: fred keeps the present of such
	// a program before a reverse command, though one thread is left)
	if had, err := Threaded(logf); !had || err != nil {
		t.Errorf("the header does not say the program made a thread (%v, %v)", had, err)
	}
	for i := 0; i < 3; i++ {
		if out := run("FREDLOG_REPLAY=1"); out != "done\n" {
			t.Fatalf("replay %d: %q", i, out)
		}
	}
	l, err := ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	if l.Divergences != 0 || l.Notices != 0 {
		t.Errorf("%d divergences, notice %q", l.Divergences, l.Notice)
	}
}

// A blocking accept that the library waits in slices (so that a restore
// can give it the logged client) still ends with EINTR when a signal
// whose handler does not ask for a restart comes, as the kernel's does
// (accept_intr: no client, an alarm after a second); recorded and
// replayed alike.
func TestLibraryAcceptInterrupted(t *testing.T) {
	testutil.Require(t, "gcc")
	lib, err := Preload(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	prog := testutil.Fixture(t, "accept_intr")
	dir := t.TempDir()
	logf, sock := filepath.Join(dir, "log"), filepath.Join(dir, "sock")
	run := func(env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c := exec.CommandContext(ctx, prog, sock)
		c.Env = append(append(os.Environ(), "LD_PRELOAD="+lib, "FREDLOG_FILE="+logf, "FREDLOG_QUIET=0"), env...)
		out, err := c.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("%v: the accept was not interrupted in a minute:\n%s", env, out)
		}
		if err != nil {
			t.Fatalf("%v: %v\n%s", env, err, out)
		}
		return string(out)
	}
	for _, env := range [][]string{nil, {"FREDLOG_REPLAY=1"}} {
		if out := run(env...); out != "accept -1 EINTR\n" {
			t.Fatalf("%v: %q", env, out)
		}
	}
}
