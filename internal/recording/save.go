package recording

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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
// the recording are linked where they can be, else copied. Nothing is
// left at dst when it fails.
func Save(src string, m *Manifest, dst, log string, session []byte, fred string) (err error) {
	if dst, err = filepath.Abs(dst); err != nil {
		return err
	}
	if err := makeDir(dst); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dst)
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
		if err := linkOrCopy(filepath.Join(dst, p.File), filepath.Join(src, p.File)); err != nil {
			return err
		}
		out.Parts = append(out.Parts, p)
	}
	if err := copyPrefix(filepath.Join(dst, LogFile), log, int64(h.End)); err != nil {
		return err
	}
	sum, n, err := hashFile(filepath.Join(dst, LogFile))
	if err != nil {
		return err
	}
	out.Parts = append(out.Parts, Part{Role: RoleLog, File: LogFile, SHA256: sum, Size: n})
	if err := os.WriteFile(filepath.Join(dst, SessionFile), session, 0o644); err != nil {
		return err
	}
	if sum, n, err = hashFile(filepath.Join(dst, SessionFile)); err != nil {
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

// linkOrCopy puts the file src at dst: a hard link (parts are read-only),
// or a copy across file systems.
func linkOrCopy(dst, src string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil // stored once by content
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}
