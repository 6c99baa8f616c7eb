package fred

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/fred/history"
	"github.com/fred-debugger/fred/internal/proc"
	"github.com/fred-debugger/fred/internal/words"
	"github.com/fred-debugger/fred/internal/xstate"
	P "github.com/fred-debugger/fred/personalities"
)

// snap is a snapshot and the history that led to it.
type snap struct {
	*ckpt.Snapshot
	Steps []history.Step // the timeline up to the snapshot
	Marks []history.Mark
	Auto  bool             // taken by fred, not the person
	run   int              // the run of the program it belongs to
	lwp   int              // the thread selected when it was taken (multi-threaded programs)
	via   ckpt.Snapshotter // the backend that took it, which restores it
	// threads is how many the program had (lean attaches are for
	// single-threaded moments only).
	threads int
	files   *ckpt.FileMarks // the files it wrote, as they were then
	said    bool            // its restore's closed sockets were named
	// stood: the person stood at its moment after a command (a search
	// keeps snapshots where they never were).
	stood bool
}

// ErrNoSnapshots means no snapshot backend is available in this session.
var ErrNoSnapshots = errors.New("snapshots are not available in this session")

// NoSnapshotError names a snapshot that does not exist.
type NoSnapshotError struct{ ID int }

func (e *NoSnapshotError) Error() string {
	return fmt.Sprintf("there is no snapshot %d; 'fred-list' shows the snapshots", e.ID)
}

// openSnapshots sets up the session directory and the snapshot backend
// chosen by opt.Snapshots, and says which is in use and why.
func (s *Session) openSnapshots() {
	mode := s.opt.Snapshots
	if mode == "" {
		mode = "auto"
	}
	if mode == "off" {
		s.snapWhy = "snapshots are off (--snapshots=off)"
		return
	}
	dir, err := s.sessionDir()
	if err != nil {
		s.snapWhy = "no snapshots: " + err.Error()
		return
	}
	s.files = ckpt.NewFiles(dir, dir)
	switch mode {
	case "criu", "auto", "fork":
		why := ""
		if mode != "fork" {
			sn, err := ckpt.NewCRIU(ckpt.Options{Dir: dir, TTY: s.proc.Slave, CriuPath: s.opt.CriuPath})
			if err == nil {
				s.snap, s.snapWhy = sn, "snapshots: CRIU"
				if mode == "auto" {
					s.openCopies(dir)
				}
				return
			}
			why = fmt.Sprintf("CRIU is not usable: %v", err)
			if mode == "criu" {
				s.snapWhy = "no snapshots: " + why
				return
			}
		}
		s.openFork(dir, why)
	default:
		s.snapWhy = fmt.Sprintf("no snapshots: unknown --snapshots=%s (auto, criu, fork or off)", mode)
	}
}

// openFork sets up the unprivileged fork backend (gdb only: it calls into
// the program), saying why CRIU was not used.
func (s *Session) openFork(dir, why string) {
	because := ""
	if why != "" {
		because = ", because " + why
	}
	if s.p.InProcess {
		s.openInterpFork(dir, because)
		return
	}
	if s.p.Tracer == nil || s.p.Tracer.Fork == nil {
		s.snapWhy = "no snapshots" + because + "; this debugger has no fork backend"
		return
	}
	f, err := ckpt.NewFork(ckpt.ForkOptions{Tracer: s.p.Tracer.Fork(s.query), Dir: dir})
	if err != nil {
		s.snapWhy = fmt.Sprintf("no snapshots%s; fork backend: %v", because, err)
		return
	}
	// (the program's LD_PRELOAD: gdb's own environment's, or a recording's)
	old := ""
	if t := s.p.Tracer; t != nil && t.Env != "" {
		if out, err := s.query(fmt.Sprintf(t.Env, "LD_PRELOAD")); err == nil {
			old = xstate.Strip(t.EnvValue(out, "LD_PRELOAD"))
		}
	}
	if _, err := s.query(f.SetupCommand(old)); err != nil {
		s.snapWhy = fmt.Sprintf("no snapshots%s; fork backend setup: %v", because, err)
		return
	}
	s.snap = f
	s.snapWhy = "snapshots: fork (single-threaded programs, no root needed)" + because
}

// openCopies adds fork copies beside CRIU: they snapshot the program while
// it has one thread, CRIU when it has more. Without them (no gcc for the
// agent, say) CRIU does everything, as with --snapshots=criu.
func (s *Session) openCopies(dir string) {
	saved, why := s.snap, s.snapWhy
	s.snap = nil
	s.openFork(dir, "")
	if s.snap != nil {
		s.copies = s.snap
		why = "snapshots: CRIU, and fork copies while the program has one thread"
	}
	s.snap, s.snapWhy = saved, why
}

// copiesMaxRSS is the most resident memory of a program whose timed runs
// use fork copies (copiesForTimedRuns).
const copiesMaxRSS = 256 << 20

// copiesForTimedRuns readies snapshots for runs that fred times (the
// search's native probes, the jump near a continue's stop) and returns
// what puts them back. Runs after a fork copy are slowed, unevenly, by
// copy-on-write faults (at 4N of the DAG benchmark the time stage needed
// about twice the probes): gdb's copies then give the live program its
// own pages. Each copy then holds a copy of the program's memory, so in a
// big program CRIU takes the snapshots instead (or copies that share,
// with --snapshots=fork). pdb's and perl's copies are not timed.
func (s *Session) copiesForTimedRuns() (undo func()) {
	f := s.forkBackend()
	if f == nil {
		return func() {}
	}
	if proc.Resident(s.pid) > copiesMaxRSS {
		avoid := s.avoidCopies
		s.avoidCopies = s.copies == ckpt.Snapshotter(f)
		return func() { s.avoidCopies = avoid }
	}
	was := f.Unsharing()
	f.SetUnshare(true)
	return func() { f.SetUnshare(was) }
}

// forkBackend is gdb's fork backend, if the session has one.
func (s *Session) forkBackend() *ckpt.Fork { return backendOf[*ckpt.Fork](s) }

// interpFork is the in-process debugger's fork backend, if the session
// has one.
func (s *Session) interpFork() *ckpt.InterpFork { return backendOf[*ckpt.InterpFork](s) }

// backendOf is the session's backend of type T (copies or snapshots), or
// T's zero value.
func backendOf[T ckpt.Snapshotter](s *Session) T {
	for _, b := range []ckpt.Snapshotter{s.copies, s.snap} {
		if f, ok := b.(T); ok {
			return f
		}
	}
	var none T
	return none
}

// backendFor is the backend that snapshots process pid now.
func (s *Session) backendFor(pid int) ckpt.Snapshotter {
	if s.copies != nil && !s.avoidCopies {
		if proc.Threads(pid) == 1 {
			return s.copies
		}
	}
	return s.snap
}

// sessionDir creates, once, the directory of the session's files
// (snapshots, the replay log). The default one, under the user's cache
// directory, is the session's own: locked while it lives, removed when it
// ends (unless --keep), by the keeper if fred dies, and else as stale by
// the next fred to start (proc.NewSessionDir).
func (s *Session) sessionDir() (string, error) {
	if s.dir != "" {
		return s.dir, nil
	}
	if dir := s.opt.Dir; dir != "" {
		// Absolute: the program (the replay library) and /proc's links
		// name it from elsewhere.
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("cannot create %s: %v", dir, err)
		}
		s.dir = dir
		return dir, nil
	}
	dir, lock, err := proc.OwnSessionDir(s.opt.Keep)
	if err != nil {
		return "", err
	}
	s.dir, s.ownDir, s.dirLock = dir, true, lock
	if !s.opt.Keep {
		s.keeper.RemoveDir(dir)
	}
	return dir, nil
}

// closeSessionDir removes the session's own directory (unless --keep) and
// lets go of its lock.
func (s *Session) closeSessionDir() {
	if s.ownDir && !s.opt.Keep {
		proc.RemoveOwnSessionDir(s.dir)
	}
	if s.dirLock != nil {
		s.dirLock.Close()
		s.dirLock = nil
	}
}

// openInterpFork sets up the fork backend of an in-process debugger
// (pdb, perl -d): the debugger forks the interpreter itself.
func (s *Session) openInterpFork(dir, because string) {
	if s.p.Fork == "" {
		s.snapWhy = "no snapshots" + because + "; this debugger has no fork backend"
		return
	}
	f, err := ckpt.NewInterpFork(ckpt.InterpForkOptions{
		Debugger: ckpt.DebuggerFunc(s.query),
		Fork:     s.p.Fork,
		Wait: func() (string, error) {
			return s.conn.WaitPrompt("", time.Now().Add(s.opt.Timeout), nil, false, nil)
		},
		Dir: dir,
	})
	if err != nil {
		s.snapWhy = fmt.Sprintf("no snapshots%s; fork backend: %v", because, err)
		return
	}
	s.snap = f
	s.snapWhy = "snapshots: fork (single-threaded programs, no root needed)" + because
}

// closeSnapshots drops every snapshot and, unless --keep, the directory.
func (s *Session) closeSnapshots() {
	if s.files != nil {
		s.files.Close()
	}
	if s.snap != nil && !s.opt.Keep {
		_ = s.snap.Close()
	}
	if s.copies != nil {
		_ = s.copies.Close() // copies are processes: --keep cannot keep them
	}
	if s.dir != "" && !s.opt.Keep && !s.ownDir {
		for _, sn := range s.snaps {
			_ = os.RemoveAll(sn.Dir)
		}
	}
	for pid := range s.adopted {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		proc.Reap(pid, time.Second)
	}
}

// Checkpoint takes a snapshot of the program now.
func (s *Session) Checkpoint(auto bool) (*snap, error) {
	return s.checkpointAs(auto, s.nextSnap+1)
}

// entrySnap is the number of the snapshot at the executable's entry point,
// the run's start-up behind it: the same for every run.
const entrySnap = 0

// checkpointAs takes snapshot id of the program now.
func (s *Session) checkpointAs(auto bool, id int) (*snap, error) {
	if s.snap == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoSnapshots, s.snapWhy)
	}
	if !s.running || s.pid == 0 {
		return nil, &NeedsProgramError{Cmd: "fred-checkpoint", Hint: s.startHint()}
	}
	pid := s.pid
	start := time.Now()
	lwp := 0
	if s.p.Threads != nil {
		// An attach selects the main thread: the snapshot remembers which
		// one the history goes on in.
		lwp = s.currentLWP(0)
	}
	threads := proc.Threads(pid)
	via := s.backendFor(pid)
	take := func() (*ckpt.Snapshot, error) {
		if err := s.roomFor(via, pid); err != nil {
			return nil, err
		}
		return s.host.take(via, pid, id, lwp)
	}
	cs, err := take()
	if err != nil && via == s.copies && s.copies != s.snap && (errors.Is(err, ckpt.ErrNoCopy) || errors.Is(err, ckpt.ErrThreaded)) {
		// No copy (no agent in the program, too many copies, fork
		// refused), gdb and the program as they were: CRIU takes it.
		debugf("fork copy failed: %v; CRIU instead", err)
		via = s.snap
		cs, err = take()
	}
	if err != nil {
		return nil, err
	}
	cs.Took = time.Since(start)
	s.keeper.Watch(cs.Pid) // a fork copy (CRIU's is the program's pid)
	s.snapTook[via.Name()] = cs.Took
	debugf("fred-snapshot %d: %v", id, cs.Took)
	s.Timeline.Mark(id)
	sn := &snap{Snapshot: cs, Auto: auto, run: s.run, lwp: lwp, via: via, threads: threads,
		Steps: s.Timeline.Steps(),
		Marks: s.Timeline.Marks()}
	if s.files != nil {
		if sn.files, err = s.files.Mark(pid); err != nil {
			debugf("files of snapshot %d: %v", id, err)
		}
	}
	s.addSnap(sn)
	if auto {
		s.prune()
	}
	return sn, nil
}

// addSnap records a snapshot taken (or adopted).
func (s *Session) addSnap(sn *snap) {
	if sn.ID > s.nextSnap {
		s.nextSnap = sn.ID
	}
	s.snaps[sn.ID] = sn
	s.order = append(s.order, sn.ID)
}

// Restart brings the program back to snapshot id and shows where it is.
func (s *Session) Restart(id int) error {
	sn, ok := s.snaps[id]
	if !ok {
		return &NoSnapshotError{ID: id}
	}
	if err := s.restore(sn); err != nil {
		return err
	}
	s.run = sn.run
	s.standAt(append([]history.Step(nil), sn.Steps...))
	if last := s.Timeline.Now(); s.Timeline.Len() > 0 && !last.Known() {
		// A moment only its snapshot names (a probe): where is it?
		err := s.learn(&last)
		s.Timeline.SetNow(last)
		if err != nil {
			return err
		}
	}
	return s.show()
}

// restore replaces the live program with snapshot sn (see host.restore).
func (s *Session) restore(sn *snap) error {
	if _, through := sn.via.(ckpt.ThroughDebugger); through && !proc.Alive(sn.Pid) {
		// Found before the live program is let go of: under pdb and
		// perl that would end the session.
		s.drop(sn.ID)
		return fmt.Errorf("snapshot %d is gone: its copy (pid %d) has exited; fred goes on without it", sn.ID, sn.Pid)
	}
	s.timeTurnsCaveat()
	return s.host.restore(sn)
}

// restoreImage has sn's backend restore it, every backend the same way:
// first the files the program writes are set as they were at sn
// (ckpt.Files), while no copy of the program runs; after, the sockets the
// restore closed are named, once a snapshot (their other end stayed with
// the program that ran on: ckpt.ExtSocket).
func (s *Session) restoreImage(sn *snap) (int, error) {
	if s.files != nil {
		if err := s.files.PutBack(sn.files); err != nil {
			s.Printf("%v; the replay writes that file again from where it is", err)
		}
	}
	got, err := sn.via.Restore(sn.Snapshot)
	if err != nil || sn.said {
		return got, err
	}
	sn.said = true
	for _, x := range sn.Sockets {
		if !x.Held {
			s.Printf("snapshot %d: the restored program's %s is closed; its replay reads what the socket gave from the log, then the end of file", sn.ID, x.Desc)
		}
	}
	return got, nil
}

// freePid kills whoever holds pid and waits until it is reaped and gone:
// CRIU restores the snapshot's process under that same pid.
func (s *Session) freePid(pid, snapID int) error {
	_ = syscall.Kill(pid, syscall.SIGKILL)
	s.host.reap(pid)
	if !proc.Reap(pid, s.opt.Timeout) || !proc.WaitGone(pid, s.opt.Timeout) {
		return fmt.Errorf("pid %d is still in use; cannot restore snapshot %d", pid, snapID)
	}
	delete(s.adopted, pid)
	return nil
}

// show prints the current location as the debugger does after a stop.
func (s *Session) show() error {
	out, err := s.query(s.p.FrameCmd)
	if err != nil {
		return err
	}
	fmt.Fprint(s.opt.Out, out)
	return nil
}

// The automatic snapshot policy: reverse commands replay from the latest
// snapshot, so keep that replay short.
const (
	autoEvery = 50              // commands since the last snapshot
	autoAfter = 2 * time.Second // of program run time since the last snapshot
)

// autoKeep is how many automatic snapshots are kept, besides each run's
// first (a variable so that tests can make pruning happen).
var autoKeep = 16

// prune drops automatic snapshots beyond autoKeep: first those off the
// current history and every branch (a future abandoned by going back),
// then the oldest. The first snapshot of a run and the person's own stay.
func (s *Session) prune() {
	if s.holdPrune {
		return
	}
	first := map[int]int{} // run -> id of its first snapshot
	for _, id := range s.order {
		sn := s.snaps[id]
		if f, ok := first[sn.run]; !ok || len(sn.Steps) < len(s.snaps[f].Steps) {
			first[sn.run] = id
		}
	}
	onLine := func(sn *snap) bool {
		if sn.run == s.run && s.Timeline.Extends(sn.Steps) {
			return true
		}
		if p := s.probeOf(sn.Steps); p != nil && p.person && sn.run == s.run && s.Timeline.Extends(history.With(p.base, p.cont)) {
			return true // inside a continue of the timeline
		}
		for _, b := range s.branches {
			if history.IsPrefix(sn.Steps, b) {
				return true
			}
		}
		return false
	}
	var off, on, anchors []int
	for _, id := range s.order {
		sn := s.snaps[id]
		if !sn.Auto || first[sn.run] == id || history.StartUpOnly(sn.Steps) {
			continue
		}
		switch {
		case onLine(sn) && s.probeOf(sn.Steps) != nil:
			// The only way back to a moment inside a continue: last.
			anchors = append(anchors, id)
		case onLine(sn):
			on = append(on, id)
		default:
			off = append(off, id)
		}
	}
	on = append(on, anchors...)
	for _, id := range append(off, on...) {
		if len(off)+len(on) <= autoKeep {
			return
		}
		s.drop(id)
		if len(off) > 0 && off[0] == id {
			off = off[1:]
		} else {
			on = on[1:]
		}
	}
}

// drop deletes one snapshot.
func (s *Session) drop(id int) {
	sn := s.snaps[id]
	_ = sn.via.Drop(sn.Snapshot)
	if s.files != nil {
		s.files.Drop(sn.files)
	}
	delete(s.snaps, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	s.standAt(s.Timeline.Steps()) // the marks anew
}

// markStood notes the snapshots of the moment the person is at.
func (s *Session) markStood() {
	for _, sn := range s.snaps {
		if !sn.stood && sn.run == s.run && s.Timeline.Is(sn.Steps) {
			sn.stood = true
		}
	}
}

// keepPresent takes a snapshot of the moment the person is at, unless one
// names it already: a reverse command that fails brings them back by
// restoring it, not by replaying their commands, which can diverge. Where
// a snapshot is a copy (fork copies, pdb's and perl's), which costs
// milliseconds; under CRIU, a dump, only for a program that has or had
// threads in this run (one may be left): its replays are the ones that
// diverge (a server's own futex locks are not in the replay log), and
// without it a failed command would lose the program (mariadbd). Not for a program stopped at a signal, which does
// not survive a dump. It returns the snapshot, to drop with dropUnseen
// once the command succeeded (0: none taken).
func (s *Session) keepPresent() int {
	if s.snap == nil || !s.running || s.pid == 0 {
		return 0
	}
	if _, copies := s.backendFor(s.pid).(ckpt.ThroughDebugger); !copies {
		// (nor while CRIU refuses the program's snapshots, until the
		// automatic ones try again: each try costs a dump that fails)
		if !s.hadThreads() || s.Timeline.Now().Stop == P.StopSignal || s.refusedNow() {
			return 0
		}
	}
	for _, sn := range s.snaps {
		if sn.run == s.run && s.Timeline.Is(sn.Steps) {
			return 0
		}
	}
	sn, err := s.Checkpoint(true)
	if err != nil {
		debugf("keeping the present: %v", err)
		return 0
	}
	return sn.ID
}

// dropUnseen drops a snapshot the person never had a use for
// (keepPresent's, once the command went well): the latest gives its
// number back, so the person's pictures and numbers stay as they were.
func (s *Session) dropUnseen(id int) {
	if id == 0 || s.snaps[id] == nil {
		return
	}
	s.drop(id)
	if id == s.nextSnap {
		s.nextSnap--
	}
}

// refusal is where automatic snapshots stand after one failed: fred
// tries again once the program has moved (a server's client may have
// gone, a file been closed), each time after twice as many commands, up
// to maxRetryGap, and says so once a run.
type refusal struct {
	run     int // run+1 of the run it is about (0: none)
	retryAt int // the history's length at the next try
	gap     int
}

const maxRetryGap = 64

// refusedNow says CRIU refused a snapshot of this run and the program has
// not moved enough since for another try.
func (s *Session) refusedNow() bool {
	r := s.refused
	return r.run == s.run+1 && s.Timeline.Len() < r.retryAt
}

// refusedSnapshot notes that an automatic snapshot failed with err: said
// once a run (fred-checkpoint still tries when asked), tried again after
// twice as many commands each time.
func (s *Session) refusedSnapshot(err error) {
	r := &s.refused
	if r.run != s.run+1 {
		kept := ""
		switch n := len(s.snaps); {
		case n == 1:
			kept = "keeps its snapshot and "
		case n > 1:
			kept = fmt.Sprintf("keeps its %d snapshots and ", n)
		}
		s.Printf("could not take a snapshot: %v; fred %stries again after the program moves, without saying so", err, kept)
		*r = refusal{run: s.run + 1, gap: 1}
	} else if r.gap < maxRetryGap {
		r.gap *= 2
	}
	r.retryAt = s.Timeline.Len() + r.gap
}

// maybeAutoSnapshot takes the first snapshot of a run when the program
// first stops, and later ones as the history grows.
func (s *Session) maybeAutoSnapshot() {
	if s.snap == nil || !s.running {
		return
	}
	if s.refusedNow() {
		return
	}
	r := &s.refused
	marks := s.Timeline.Marks()
	first := len(marks) == 0
	if !first {
		since := s.Timeline.Steps()[marks[len(marks)-1].Index:]
		var ran time.Duration
		for _, st := range since {
			ran += st.Took
		}
		if len(since) < autoEvery && ran < autoAfter {
			return
		}
	}
	sn, err := s.Checkpoint(true)
	if err != nil {
		s.refusedSnapshot(err)
		return
	}
	*r = refusal{}
	switch {
	case first && s.Timeline.Len() == 0:
		s.Printf("snapshot %d taken at the program's start, %s (%.3f s)", sn.ID, words.Where(s.Timeline.Start().At), sn.Took.Seconds())
	case first:
		s.Printf("snapshot %d taken at the first stop (%.3f s)", sn.ID, sn.Took.Seconds())
	}
}

func lastLine(s string) string {
	s = P.StripANSI(s)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}

// roomFor refuses a snapshot written to disk when the snapshot
// directory's disk has no room for it (ckpt.Room); a fork copy lives in
// memory.
func (s *Session) roomFor(via ckpt.Snapshotter, pid int) error {
	if _, through := via.(ckpt.ThroughDebugger); through || s.dir == "" {
		return nil
	}
	return ckpt.Room(s.dir, pid)
}

// sayClosed names the connections of before (the program's when a
// command began, at the end of orig) that are closed now: the program
// fred went back from had accepted or made them after the moment it went
// back to, and no process keeps them. Their other end reads the end of
// the file. A snapshot of a later moment of orig that kept one lets go of
// it (CRIU's), or is dropped (an automatic paused copy): its other end
// would wait for an answer nobody sends. A copy the person took keeps it,
// and fred says so; one whose other end hung up costs nothing.
func (s *Session) sayClosed(before map[int]ckpt.Conn, orig []history.Step) {
	if len(before) == 0 || !s.running || s.pid <= 0 {
		return
	}
	now := ckpt.Connections(s.pid)
	have := map[uint64]bool{}
	for _, c := range now {
		have[c.Ino] = true
	}
	// Decide for every connection before dropping anything: one copy may
	// hold several.
	type gone struct {
		c        ckpt.Conn
		released []int // CRIU snapshots that let go of it
		dropped  []int // paused copies dropped for it
	}
	var closed []*gone
	drop := map[int]bool{}
	var open map[uint64]bool
	for _, fd := range slices.Sorted(maps.Keys(before)) {
		c := before[fd]
		// A connection at that descriptor now: the same, or one a
		// restore made in its place (CRIU makes a socketpair anew, and
		// one it could not keep). Or the program has it at another
		// descriptor. (A replayed accept's stand-in, /dev/null, is no
		// connection: the real one is the moment's fred went back from.)
		if _, ok := now[fd]; ok || have[c.Ino] {
			continue
		}
		if open == nil {
			open = ckpt.OpenSockets(s.pid)
		}
		g := &gone{c: c}
		if open[c.Ino] {
			copies, theirs, others := s.holdersOf(c.Ino, orig)
			switch {
			case others:
				continue // a process but fred's copies has it: its to close
			case len(copies) > 0 && ckpt.PeerGone(s.snaps[copies[0].id].Pid, copies[0].fd):
				continue // nobody waits at the other end
			case len(theirs) > 0:
				// A copy the person took is never dropped: going there
				// answers the client.
				has := "has"
				if len(theirs) > 1 {
					has = "have"
				}
				s.Printf("%s, stays open: it was the program's at the moment you went back from, and %s, %s it; its other end stays connected to that copy (fred-restart %d goes there)",
					c.Desc, copiesPhrase(theirs, "a paused copy you took", "paused copies you took"), has, theirs[0])
				continue
			}
			if rel, ok := s.snap.(ckpt.SocketReleaser); ok {
				g.released = rel.ReleaseSocket(c.Ino, s.laterSnapshots(orig))
			}
			for _, h := range copies {
				if s.snaps[h.id].Auto {
					g.dropped = append(g.dropped, h.id)
					drop[h.id] = true
				}
			}
			if len(g.released) == 0 && len(g.dropped) == 0 {
				continue
			}
		}
		closed = append(closed, g)
	}
	for _, id := range slices.Sorted(maps.Keys(drop)) {
		s.drop(id)
	}
	open = ckpt.OpenSockets(s.pid)
	for _, g := range closed {
		if open[g.c.Ino] {
			continue // someone else has it too
		}
		var kept []string
		if len(g.released) > 0 {
			kept = append(kept, words.Numbered("snapshot", g.released)+" kept it: fred let go of it there")
		}
		if len(g.dropped) > 0 {
			them := "it"
			if len(g.dropped) > 1 {
				them = "them"
			}
			kept = append(kept, copiesPhrase(g.dropped, "a paused copy of the program", "paused copies of the program")+", had it: fred dropped "+them)
		}
		why := ""
		if len(kept) > 0 {
			why = " (" + strings.Join(kept, "; ") + ")"
		}
		s.Printf("%s, is closed: it was the program's at the moment you went back from, not at this one, and its other end reads the end of the file%s", g.c.Desc, why)
	}
}

// copiesPhrase names snapshots that are paused copies: "snapshot 2, a
// paused copy ...", "snapshots 2 and 3, paused copies ...".
func copiesPhrase(ids []int, one, many string) string {
	if len(ids) == 1 {
		return fmt.Sprintf("snapshot %d, %s", ids[0], one)
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = strconv.Itoa(id)
	}
	return fmt.Sprintf("snapshots %s and %s, %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1], many)
}

// heldBy is a paused copy that has a socket, and the descriptor it has it
// at.
type heldBy struct{ id, fd int }

// holdersOf says who has the socket ino besides the program (one look at
// every process): copies are the paused copies of later moments of orig
// that have it (by snapshot number), theirs those the person took, and
// others whether a process but fred and those copies has it (another
// branch's copy, which restored answers the client, counts as one).
func (s *Session) holdersOf(ino uint64, orig []history.Step) (copies []heldBy, theirs []int, others bool) {
	later := map[int]int{} // pid -> snapshot number
	for _, id := range s.laterCopies(orig) {
		later[s.snaps[id].Pid] = id
	}
	for pid, fd := range ckpt.SocketHolders(ino) {
		id, isCopy := later[pid]
		switch {
		case pid == os.Getpid():
			// fred's own: CRIU's snapshots keep sockets through it
		case !isCopy:
			others = true
		default:
			copies = append(copies, heldBy{id, fd})
			if !s.snaps[id].Auto {
				theirs = append(theirs, id)
			}
		}
	}
	slices.SortFunc(copies, func(a, b heldBy) int { return a.id - b.id })
	slices.Sort(theirs)
	return copies, theirs, others
}

// laterCopies are the paused copies among this run's snapshots of later
// moments of orig: laterSnapshots', and the copies a continue of orig
// left while it ran (probes: their history is the continue's base and
// the probe, not a prefix of orig).
func (s *Session) laterCopies(orig []history.Step) []int {
	var ids []int
	for _, id := range s.laterSnapshots(orig) {
		if s.snaps[id].via.Name() == "fork" {
			ids = append(ids, id)
		}
	}
	for id, sn := range s.snaps {
		p := s.probeOf(sn.Steps)
		if p == nil || sn.run != s.run || sn.via.Name() != "fork" || slices.Contains(ids, id) {
			continue
		}
		if in := history.With(p.base, p.cont); history.IsPrefix(in, orig) && !s.Timeline.Extends(in) {
			ids = append(ids, id)
		}
	}
	return ids
}

// laterSnapshots are this run's snapshots of moments of orig after the
// one the person is at now (not another branch's).
func (s *Session) laterSnapshots(orig []history.Step) []int {
	var ids []int
	for id, sn := range s.snaps {
		if sn.run == s.run && history.IsPrefix(sn.Steps, orig) && !s.Timeline.Extends(sn.Steps) {
			ids = append(ids, id)
		}
	}
	return ids
}
