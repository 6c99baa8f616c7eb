package fred

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fred-debugger/fred/replaylog"
)

// The replay log (package replaylog): a preload library in the program
// records what the outside world answers and, after a restore, gives the
// same answers back. fred only has to load it into the program, name the
// log file (in the session directory) and show the log; the library keeps
// its place in the log in the program's memory, so each snapshot carries
// its own, and it replays by itself while its place is before the log's
// end, then records again.

// replayLog is the session's log, when there is one.
type replayLog struct {
	path string // the log file
	lib  string // the preload library
	why  string // why there is no log, when path is ""
	seen uint64 // the library's notices already shown
	// timeTurns: the library said the program's threads took turns by
	// time (seen with its notices, after each command); saidTurns: the
	// person was told what that means for a replay (once a session)
	timeTurns, saidTurns bool
}

// logFile is the log's name in the session directory.
const logFile = "replay.log"

// openReplayLog builds the library and names the log file. For an
// in-process debugger it returns what the debugger's environment needs
// (the program is the debugger's own process); gdb gets its program's
// environment through gdbReplayLog once it is up.
func (s *Session) openReplayLog() []string {
	s.rlog = &replayLog{}
	if s.opt.NoReplayLog {
		s.rlog.why = "the replay log is off (--no-replay-log)"
		return nil
	}
	dir, err := s.sessionDir()
	if err != nil {
		s.rlog.why = fmt.Sprintf("no replay log: %v", err)
		return nil
	}
	lib, err := replaylog.Preload("")
	if err != nil {
		if lib, err = replaylog.Preload(dir); err != nil {
			s.rlog.why = fmt.Sprintf("no replay log: %v", err)
			return nil
		}
	}
	s.rlog.lib, s.rlog.path = lib, filepath.Join(dir, logFile)
	if s.opt.Recording != "" {
		if err := copyLog(s.rlog.path, s.opt.Recording); err != nil {
			s.rlog.why, s.rlog.path = fmt.Sprintf("no replay log: the recording's: %v", err), ""
			return nil
		}
	}
	if !s.p.InProcess {
		return nil
	}
	env := replaylog.Env(s.rlog.path, true)
	env = append(env, s.recordingEnv()...) // the recorded run, from its start
	pre := os.Getenv("LD_PRELOAD")
	if s.opt.Env != nil {
		pre = ""
		for _, kv := range s.opt.Env {
			if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok {
				pre = v
			}
		}
	}
	return append(env, "LD_PRELOAD="+replaylog.JoinPreload(lib, pre))
}

// gdbReplayLog puts the library into the environment gdb gives the
// program (after the fork backend has put its agent there). The shell gdb
// starts the program through loads it too, but it stays idle there.
func (s *Session) gdbReplayLog() {
	t := s.p.Tracer
	if t == nil || s.rlog == nil || s.rlog.path == "" {
		return
	}
	out, err := s.query(fmt.Sprintf(t.Env, "LD_PRELOAD"))
	if err != nil {
		s.rlog.why, s.rlog.path = fmt.Sprintf("no replay log: %v", err), ""
		return
	}
	cmds := []string{fmt.Sprintf(t.SetEnv, "LD_PRELOAD", replaylog.JoinPreload(s.rlog.lib, t.EnvValue(out, "LD_PRELOAD")))}
	env := replaylog.Env(s.rlog.path, false)
	env = append(env, s.recordingEnv()...) // every run is the recorded one
	env = append(env, s.opt.ProgramEnv...)
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok && t.UnsetEnv != "" {
			cmds = append(cmds, fmt.Sprintf(t.UnsetEnv, k)) // ProgramEnv: not in the program's
			continue
		}
		cmds = append(cmds, fmt.Sprintf(t.SetEnv, k, v))
	}
	for _, c := range cmds {
		if _, err := s.query(c); err != nil {
			s.rlog.why, s.rlog.path = fmt.Sprintf("no replay log: %v", err), ""
			return
		}
	}
}

// recordingAgain puts the recording's log back before a new run of its
// program: a run that left it (the person changed a value) cut it and
// recorded on, and every run of a recording is the recorded one. (A run
// while the program runs is the debugger's to confirm: not then.)
func (s *Session) recordingAgain() {
	if s.opt.Recording == "" || s.rlog == nil || s.rlog.path == "" {
		return
	}
	if err := copyLog(s.rlog.path, s.opt.Recording); err != nil {
		s.Printf("the recording's replay log could not be put back: %v; this run may not be the recorded one", err)
	}
}

// recordingEnv: a recorded run (fred replay) replays from its first
// entry, with the file metadata it logged, if it did. A live session logs
// file metadata too: a saved one (fred-save) replays elsewhere.
func (s *Session) recordingEnv() []string {
	if s.opt.Recording == "" {
		return []string{"FREDLOG_STAT=1"}
	}
	env := []string{"FREDLOG_REPLAY=1"}
	if !s.opt.RecordingNoStat {
		env = append(env, "FREDLOG_STAT=1")
	}
	if v := s.opt.RecordingLogVersion; v != 0 {
		env = append(env, fmt.Sprintf("FREDLOG_LOGV=%d", v))
	}
	return env
}

// copyLog puts a recorded log where the session's goes, with room after
// its end for what the program does past the recording (a sparse file).
func copyLog(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// (written over, not truncated first: copies of an earlier run may
	// have it mapped)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, in)
	if err == nil {
		err = out.Truncate(n + replaylogRoom)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// replaylogRoom: room after a recorded log's end, the library's own
// default size of a new log.
const replaylogRoom = 256 << 20

// replayLogNotice shows, once, what the library had to say since the last
// command (the program diverged from the log, the log is full): it cannot
// say so itself while fred replays, since fred hides the program's output
// then.
func (s *Session) replayLogNotice() {
	if s.rlog == nil || s.rlog.path == "" {
		return
	}
	h, err := replaylog.ReadHeader(s.rlog.path)
	if err != nil {
		return
	}
	s.rlog.timeTurns = h.TimeTurns
	if h.Notices == s.rlog.seen {
		return
	}
	if h.Notices > s.rlog.seen+1 {
		s.Printf("replay log: %s (and %d earlier messages)", h.Notice, h.Notices-s.rlog.seen-1)
	} else {
		s.Printf("replay log: %s", h.Notice)
	}
	s.rlog.seen = h.Notices
}

// timeTurnsCaveat says, once a session, when the person goes back in a
// program whose interpreter switched threads by time, that what is run
// again is only as exact as the log can make it: the untraced threads'
// work may differ, or the replay may leave the log.
func (s *Session) timeTurnsCaveat() {
	if s.rlog == nil || !s.rlog.timeTurns || s.rlog.saidTurns {
		return
	}
	s.rlog.saidTurns = true
	s.Printf("replay log: this program's threads took turns at the interpreter's lock by time, which a replay cannot repeat exactly: from here, what the threads the debugger does not trace compute may differ from the first run, or a replay may leave its recording")
}

// closeReplayLog removes the log unless the session keeps its files.
func (s *Session) closeReplayLog() {
	if s.rlog != nil && s.rlog.path != "" && !s.opt.Keep {
		_ = os.Remove(s.rlog.path)
	}
}

// ReplayLog is the log file's path, or "" and why there is none.
func (s *Session) ReplayLog() (string, string) {
	if s.rlog == nil {
		return "", "no replay log"
	}
	return s.rlog.path, s.rlog.why
}

// cmdLog shows the log's last entries (all with "all").
func cmdLog(s *Session, args []string) error {
	usage := func(msg string) error { return &UsageError{Cmd: "fred-log", Msg: msg, Usage: "fred-log [N|all]"} }
	last := 20
	switch {
	case len(args) > 1:
		return usage("takes at most one argument")
	case len(args) == 1 && args[0] == "all":
		last = 0
	case len(args) == 1:
		n, err := strconv.Atoi(args[0])
		if err != nil || n <= 0 {
			return usage(fmt.Sprintf("%q is not a number of entries", args[0]))
		}
		last = n
	}
	path, why := s.ReplayLog()
	if path == "" {
		return errors.New(why)
	}
	if _, err := os.Stat(path); err != nil {
		return errors.New("the replay log is empty: the program has not run yet")
	}
	s.Printf("replay log %s", path)
	return replaylog.Dump(s.opt.Out, path, last)
}

// logMark reads where the replay log ends now (false: no log).
func (s *Session) logMark() (replaylog.Header, bool) {
	if s.rlog == nil || s.rlog.path == "" {
		return replaylog.Header{}, false
	}
	h, err := replaylog.ReadHeader(s.rlog.path)
	return h, err == nil
}

// logCutBack makes the log end at mark again (replaylog.CutBack).
func (s *Session) logCutBack(mark replaylog.Header) {
	if err := replaylog.CutBack(s.rlog.path, mark); err != nil {
		debugf("cutting the log back: %v", err)
	}
}

// strictReplays keeps the replay log whole while a fred command replays
// (replaylog.SetStrict): a copy of the program that leaves it does not
// cut it, so that the person's history stays replayable after fred puts
// them back, and stops there, so that nothing it does reaches the
// outside. It returns how to end that. Under gdb only: under pdb and perl
// the program is the debugger, which must go on answering (a copy that
// leaves the log there cuts it, as in the person's own commands).
func (s *Session) strictReplays() (end func()) {
	if s.rlog == nil || s.rlog.path == "" || s.p.InProcess {
		return func() {}
	}
	if err := replaylog.SetStrict(s.rlog.path, true); err != nil {
		debugf("strict replays: %v", err)
		return func() {}
	}
	return func() {
		if err := replaylog.SetStrict(s.rlog.path, false); err != nil {
			debugf("strict replays: %v", err)
		}
	}
}
