package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
	"github.com/fred-debugger/fred/replaylog"
)

// `fred replaylog dump FILE` shows a log; a bad file gets one message and
// status 1; a bad command line the usage and status 2.
func TestReplaylogDump(t *testing.T) {
	fred := testutil.Fred(t)
	dir := t.TempDir()
	w := replaylog.NewWriter()
	w.Add(replaylog.Entry{Kind: replaylog.Time, Value: 1700000000})
	w.Add(replaylog.Entry{Kind: replaylog.Read, Fd: 3, Data: []byte("abc\n")})
	good := filepath.Join(dir, "replay.log")
	if err := w.WriteFile(good); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.log")
	os.WriteFile(bad, []byte("not a log"), 0o600)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replaylog", "dump", good}, 0, "0       1      time                       1700000000\n  1       1      read                       fd 3: 4 bytes \"abc\\n\"\n2 entries"},
		{[]string{"replaylog", "dump", bad}, 1, "fred: " + bad + ": replay log: at byte 0: the file has 9 bytes, less than a header\n"},
		{[]string{"replaylog", "dump"}, 2, "usage: fred replaylog dump FILE"},
	} {
		out, err := exec.Command(fred, c.args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("fred %s: status %d, output:\n%s\nwant status %d and %q", strings.Join(c.args, " "), code, out, c.code, c.want)
		}
	}
}
