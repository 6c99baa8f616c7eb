package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fred-debugger/fred/internal/recording"
	"github.com/fred-debugger/fred/internal/testutil"
)

// fredRun runs the fred binary in dir and returns its output (both
// streams) and exit status.
func fredRun(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	c := exec.Command(testutil.Fred(t), args...)
	if len(args) > 0 && args[0] == "--elsewhere" {
		q := []string{}
		for _, a := range append([]string{testutil.Fred(t)}, args[1:]...) {
			q = append(q, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
		}
		c = exec.Command("unshare", "-m", "--uts", "--propagation", "private", "sh", "-c", "hostname elsewhere && exec "+strings.Join(q, " "))
	}
	c.Dir = dir
	c.Env = append(os.Environ(), "TERM=dumb")
	out, err := c.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fred %s: %v", strings.Join(args, " "), err)
	}
	return strings.ReplaceAll(string(out), "\r\n", "\n"), code
}

// fredElsewhere runs fred as fredRun does, on "another machine": in a
// mount namespace of its own and under another host name (unshare).
func fredElsewhere(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	testutil.Require(t, "unshare", "hostname")
	return fredRun(t, dir, append([]string{"--elsewhere"}, args...)...)
}

// recordRun writes an input file ("first content") and records argv, the
// input's path in place of INPUT, into DIR/rec with fred record.
func recordRun(t *testing.T, argv ...string) (dir, input, out string, code int) {
	t.Helper()
	work := t.TempDir()
	input = filepath.Join(work, "input.txt")
	os.WriteFile(input, []byte("first content\n"), 0o644)
	dir = filepath.Join(work, "rec")
	args := []string{"record", "-o", dir}
	for _, a := range argv {
		if a == "INPUT" {
			a = input
		}
		args = append(args, a)
	}
	out, code = fredRun(t, work, args...)
	return dir, input, out, code
}

// record makes a recording of nondet reading input (content first) and
// exiting with status 3, and returns its directory and what it printed.
func record(t *testing.T) (dir, input, printed string) {
	t.Helper()
	testutil.Require(t, "gdb", "gcc")
	dir, input, out, code := recordRun(t, testutil.Fixture(t, "nondet"), "INPUT", "0", "3")
	if code != 3 {
		t.Fatalf("fred record: status %d, want the program's 3:\n%s", code, out)
	}
	if !regexp.MustCompile(`fred: recorded .*nondet .* \(exit status 3\) in .*rec: \d+ entries, \d+ files; 'fred replay .*rec' debugs this run`).MatchString(out) {
		t.Fatalf("fred record said:\n%s", out)
	}
	m := regexp.MustCompile(`time=\d+ .*random=-?\d+\nfile=first content socket=-`).FindString(out)
	if m == "" {
		t.Fatalf("the program's own output is not there:\n%s", out)
	}
	return dir, input, m
}

// `fred record` runs a program without a debugger and keeps its run: the
// replay log, the executable and the libraries it mapped, each with its
// checksum in the manifest. `fred replay` runs gdb on that run: its
// values (time, random numbers, a file that changed since) are the
// recorded ones, every time, and the reverse commands work in it.
func TestRecordAndReplay(t *testing.T) {
	dir, input, printed := record(t)
	b, err := os.ReadFile(filepath.Join(dir, recording.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m recording.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	roles := map[string]int{}
	for _, p := range m.Parts {
		roles[p.Role]++
		if strings.Contains(p.Path, "libc.so") {
			roles["libc"]++
		}
	}
	if roles[recording.RoleLog] != 1 || roles[recording.RoleExecutable] != 1 || roles["libc"] != 1 || m.Exit.Status != 3 || m.Arch == "" || len(m.CPUFlags) == 0 {
		t.Fatalf("the manifest: %s", b)
	}
	if _, err := recording.Read(dir); err != nil {
		t.Fatalf("the recording does not check: %v", err)
	}

	// The input changes, the clock moves on; the replay runs elsewhere.
	os.WriteFile(input, []byte("second, longer content\n"), 0o644)
	script := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"break 79", "run", "print r", "print line",
		"fred-reverse-step", "print r", "delete", "continue",
		"break 79", "run", "print r",
	}, "\n")+"\n"), 0o644)
	for i := 0; i < 2; i++ {
		out, code := fredRun(t, t.TempDir(), "--batch", "-x", script, "replay", dir)
		if code != 0 {
			t.Fatalf("fred replay: status %d:\n%s", code, out)
		}
		r := regexp.MustCompile(` random=(-?\d+)`).FindStringSubmatch(printed)[1]
		vals := regexp.MustCompile(`(?m)^\$\d+ = (.*)$`).FindAllStringSubmatch(out, -1)
		if len(vals) != 4 || vals[0][1] != r || !strings.HasPrefix(vals[1][1], `"first content"`) || vals[2][1] != r || vals[3][1] != r {
			t.Fatalf("replay %d: the values are not the recorded ones (random=%s, file first content):\n%s", i, r, out)
		}
		if !strings.Contains(out, printed) || !strings.Contains(out, "exited with code 03") {
			t.Fatalf("replay %d: the program's output is not the recorded one:\n%s\nrecorded:\n%s", i, out, printed)
		}
		if !regexp.MustCompile(`fred: replaying .*rec: '.*nondet .*', recorded on .* \(exit status 3\)`).MatchString(out) {
			t.Fatalf("replay %d: no word on what is replayed:\n%s", i, out)
		}
		if strings.Contains(out, "diverged") {
			t.Fatalf("replay %d left its recording:\n%s", i, out)
		}
	}
}

// Every run of a recording is the recorded one: a run the person made
// leave it (a variable changed) records on from there, and the next run
// replays the recording again, not that run.
func TestReplayEveryRun(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	dir, _, rout, code := recordRun(t, testutil.Fixture(t, "nondet"), "INPUT")
	usual := regexp.MustCompile(`usual path: urandom=\w+`)
	printed, recorded := regexp.MustCompile(`time=.*\nfile=first content socket=-`).FindString(rout), usual.FindString(rout)
	if code != 0 || printed == "" || recorded == "" {
		t.Fatalf("fred record: status %d:\n%s", code, rout)
	}
	script := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"break 79", "run", "set var path_taken = 1", "delete", "continue",
		"run",
	}, "\n")+"\n"), 0o644)
	out, code := fredRun(t, t.TempDir(), "--batch", "-x", script, "replay", dir)
	first, second, ok := strings.Cut(out, "other path: time=")
	if code != 0 || !ok || !strings.Contains(first, printed) {
		t.Fatalf("fred replay: status %d:\n%s", code, out)
	}
	_, again, _ := strings.Cut(second, "Starting program")
	if !strings.Contains(again, printed) || usual.FindString(again) != recorded || strings.Contains(again, "diverged") {
		t.Fatalf("the run after one that left the recording is not the recorded one:\n%s", out)
	}
}

// A recording that is damaged or cannot be replayed gets one message
// naming what is wrong, status 2, and no debugger.
func TestReplayDamaged(t *testing.T) {
	dir, _, _ := record(t)
	b, _ := os.ReadFile(filepath.Join(dir, recording.ManifestFile))
	var m recording.Manifest
	json.Unmarshal(b, &m)
	libc, _ := m.Part(recording.RoleLibrary, "")
	for _, p := range m.Parts {
		if strings.Contains(p.Path, "libc.so") {
			libc = p
		}
	}
	copyRec := func() string {
		t.Helper()
		c := filepath.Join(t.TempDir(), "rec")
		if out, err := exec.Command("cp", "-a", dir, c).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		return c
	}
	cases := []struct {
		name  string
		harm  func(c string)
		wants string
	}{
		{"a byte of the log", func(c string) {
			p := filepath.Join(c, recording.LogFile+".zst")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x5a // (compressed: some entry's bytes, or the frame's)
			os.WriteFile(p, b, 0o644)
		}, `replay\.log\.zst (differs from what was recorded|is cut short or altered: its compressed data does not decode)`},
		{"the log cut short", func(c string) {
			p := filepath.Join(c, recording.LogFile+".zst")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-8)
		}, `replay\.log\.zst is cut short or altered: its compressed data does not decode`},
		{"a library cut short", func(c string) {
			p := filepath.Join(c, libc.File)
			os.Chmod(p, 0o644)
			os.Truncate(p, 1000)
		}, `files/[0-9a-f]+\.zst \(the shared library .*libc\.so\.6\) is cut short or altered: its compressed data does not decode`},
		{"no manifest", func(c string) { os.Remove(filepath.Join(c, recording.ManifestFile)) }, `manifest\.json is missing`},
		{"a part that is a link", func(c string) {
			p := filepath.Join(c, libc.File)
			os.Remove(p)
			os.Symlink("/dev/zero", p)
		}, `files/[0-9a-f]+\.zst \(the shared library .*libc\.so\.6\) cannot be read: .* is not a regular file`},
		{"the log named elsewhere", func(c string) {
			var mm recording.Manifest
			json.Unmarshal(b, &mm)
			for i := range mm.Parts {
				if mm.Parts[i].Role == recording.RoleLog {
					mm.Parts[i].File = libc.File
					mm.Parts[i].SHA256, mm.Parts[i].Size = libc.SHA256, libc.Size
				}
			}
			nb, _ := json.Marshal(mm)
			os.WriteFile(filepath.Join(c, recording.ManifestFile), nb, 0o644)
		}, `manifest\.json names a replay log other than replay\.log`},
		{"another machine", func(c string) {
			var mm recording.Manifest
			json.Unmarshal(b, &mm)
			mm.Arch = "riscv64"
			nb, _ := json.Marshal(mm)
			os.WriteFile(filepath.Join(c, recording.ManifestFile), nb, 0o644)
		}, `this recording cannot be replayed here: it was recorded on riscv64, this machine is`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := copyRec()
			c.harm(rec)
			out, code := fredRun(t, t.TempDir(), "replay", rec)
			if code != 2 || !regexp.MustCompile(`^fred replay: .*`+c.wants).MatchString(out) || strings.Count(out, "\n") != 1 {
				t.Fatalf("fred replay: status %d:\n%s\nwant status 2 and one line matching %q", code, out, c.wants)
			}
		})
	}
	// A kernel without a system call the recording's had, which nothing
	// stands in for: openat2 made to answer ENOSYS (a seccomp filter), as
	// before Linux 5.6.
	t.Run("a kernel without openat2", func(t *testing.T) {
		if !slices.Contains(m.KernelFeatures, "openat2") {
			t.Fatalf("the recording's kernel features lack openat2: %v", m.KernelFeatures)
		}
		rec := copyRec()
		c := testutil.WithoutSyscall(t, unix.SYS_OPENAT2, testutil.Fred(t), "replay", rec)
		c.Dir, c.Env = t.TempDir(), append(c.Env, "TERM=dumb")
		b, err := c.CombinedOutput()
		out, code := string(b), 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		k := regexp.QuoteMeta(m.Kernel)
		want := `^fred replay: this recording cannot be replayed here: the recording's kernel \(` + k + `\) had openat2 \([^)]+\), which this one \(` + k + `\) answers ENOSYS to \(an older kernel, or a seccomp filter such as a container's\): the recorded program may have used it\n$`
		if code != 2 || !regexp.MustCompile(want).MatchString(out) {
			t.Fatalf("fred replay without openat2: status %d:\n%s\nwant status 2 and one line matching %q", code, out, want)
		}
		if left := append(testutil.Running(rec), testutil.Running(m.Exe)...); len(left) > 0 {
			t.Fatalf("left running: %v", left)
		}
		t.Logf("%s", out)
	})
	if out, code := fredRun(t, t.TempDir(), "replay", filepath.Join(t.TempDir(), "none")); code != 2 || !strings.Contains(out, "no recording at") {
		t.Fatalf("no recording: status %d:\n%s", code, out)
	}
}

// A recording named by a relative path replays (the program runs in the
// recorded directory, elsewhere); a static program is refused before it
// runs, since the replay log is a library it would not load, and leaves no
// directory behind.
func TestRecordPaths(t *testing.T) {
	dir, _, printed := record(t)
	script := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(script, []byte("run\n"), 0o644)
	out, code := fredRun(t, filepath.Dir(dir), "--batch", "-x", script, "replay", filepath.Base(dir))
	if code != 0 || !strings.Contains(out, printed) || strings.Contains(out, "diverged") {
		t.Fatalf("fred replay %s (relative): status %d:\n%s\nwant:\n%s", filepath.Base(dir), code, out, printed)
	}

	work := t.TempDir()
	src, static := filepath.Join(work, "s.c"), filepath.Join(work, "static")
	os.WriteFile(src, []byte("#include <stdio.h>\nint main(void) { puts(\"ran\"); return 0; }\n"), 0o644)
	if out, err := exec.Command("gcc", "-static", "-o", static, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc -static (libc6-dev has libc.a; make deps installs it): %v\n%s", err, out)
	}
	out, code = fredRun(t, work, "record", "-o", "rec", static)
	if code != 1 || !strings.Contains(out, "is linked statically: the replay log is a library the dynamic loader preloads") || strings.Contains(out, "ran") {
		t.Fatalf("fred record of a static program: status %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(work, "rec")); err == nil {
		t.Fatalf("a recording refused left its directory")
	}
}

// A recorded executable that has changed since runs from the recording's
// copy, said; the run is the recorded one.
func TestReplayRecordedExecutable(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	work := t.TempDir()
	prog := filepath.Join(work, "nondet")
	if out, err := exec.Command("cp", testutil.Fixture(t, "nondet"), prog).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	input := filepath.Join(work, "input.txt")
	os.WriteFile(input, []byte("kept\n"), 0o644)
	rec := filepath.Join(work, "rec")
	out, code := fredRun(t, work, "record", "-o", rec, "./nondet", input)
	if code != 0 {
		t.Fatalf("fred record: %d\n%s", code, out)
	}
	printed := regexp.MustCompile(`time=.*\nfile=kept socket=-`).FindString(out)
	// Another program where it was.
	if out, err := exec.Command("cp", "/bin/true", prog).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	script := filepath.Join(work, "cmds")
	os.WriteFile(script, []byte("run\n"), 0o644)
	out, code = fredRun(t, work, "--batch", "-x", script, "replay", rec)
	if code != 0 || printed == "" || !strings.Contains(out, printed) ||
		!regexp.MustCompile(`fred: .*/nondet is not the executable recorded: the recording's copy runs instead`).MatchString(out) {
		t.Fatalf("fred replay: status %d:\n%s\nwant a word on the copy and:\n%s", code, out, printed)
	}
}

// A Perl program is recorded under perl -d with fred's start, not
// stopping (NonStop), and `fred replay` runs it under perl -d: the
// recorded values again, the input as it was, a reverse command in it.
func TestRecordAndReplayPerl(t *testing.T) {
	testutil.Require(t, "perl")
	script := filepath.Join(testutil.Root(), "testdata", "nondet.pl")
	rec, input, out, code := recordRun(t, "perl", script, "INPUT", "0")
	work := t.TempDir()
	printed := regexp.MustCompile(`time=\d+ hires=\S+ random=(\S+) dev=\w+\nfile=first content socket=-`).FindStringSubmatch(out)
	if code != 0 || printed == nil {
		t.Fatalf("fred record: status %d:\n%s", code, out)
	}
	os.WriteFile(input, []byte("other, longer content\n"), 0o644)
	cmds := filepath.Join(work, "cmds")
	line := fixtureLine(t, script, `print "time=`)
	os.WriteFile(cmds, []byte(fmt.Sprintf("b %d\nc\np $r\np $line\nfred-reverse-watch $line\np $line\nc\nfred-reverse-step\np $r\nc\nc\n", line)), 0o644)
	out, code = fredElsewhere(t, t.TempDir(), "--batch", "-x", cmds, "replay", rec)
	if code != 0 || strings.Contains(out, "diverged") || !strings.Contains(out, printed[0]) ||
		strings.Count(out, "\n"+printed[1]) < 2 || !strings.Contains(out, "\nfirst content") ||
		!strings.Contains(out, "here; the next step makes it first content\n") {
		t.Fatalf("fred replay: status %d:\n%s\nwant the recorded values (random %s, the first content) and output:\n%s", code, out, printed[1], printed[0])
	}
}

// fixtureLine is the number of the first line of file that holds text.
func fixtureLine(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line with %q", file, text)
	return 0
}

// Python modules are not recorded yet: said, status 2; a bad command
// line gets the usage.
func TestRecordRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "python3", "-m"}, "fred record: give the script or the module: fred record python3 SCRIPT [ARGS], or python3 -m MODULE [ARGS]"},
		{[]string{"record"}, "usage: fred record [-o DIR] PROGRAM [ARGS]"},
		{[]string{"record", "-o", "/dev/null/x", "/bin/true"}, "fred record: "},
	} {
		out, code := fredRun(t, t.TempDir(), c.args...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("fred %s: status %d:\n%s\nwant %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}

// A Python program is recorded after the start pdb makes (the same
// modules imported, the same hash seed), without pdb stopping or tracing,
// and `fred replay` runs it under pdb: the recorded values again, a
// reverse command in it, though the input grew since (Python sizes its
// read by what fstat says: the recorded size).
func TestRecordAndReplayPython(t *testing.T) {
	testutil.Require(t, "python3")
	script := filepath.Join(testutil.Root(), "testdata", "nondet.py")
	rec, input, out, code := recordRun(t, "python3", script, "INPUT", "0")
	work := t.TempDir()
	if code != 0 {
		t.Fatalf("fred record: status %d\n%s", code, out)
	}
	printed := regexp.MustCompile(`time=.* random=(\S+) .*\nfile=first content socket=-`).FindStringSubmatch(out)
	if printed == nil || !regexp.MustCompile(`fred: recorded .*python3.* .*nondet\.py .* \(exit status 0\) in .*rec`).MatchString(out) {
		t.Fatalf("fred record:\n%s", out)
	}
	os.WriteFile(input, []byte("other, longer content\n"), 0o644)
	cmds := filepath.Join(work, "cmds")
	os.WriteFile(cmds, []byte("b 22\nc\np r\np line\nfred-reverse-step\np r\nc\nc\n"), 0o644)
	out, code = fredElsewhere(t, t.TempDir(), "--batch", "-x", cmds, "replay", rec)
	// (pdb then runs the program again in the same process, past the
	// recording's end, which was the interpreter's exit: not checked)
	out, _, _ = strings.Cut(out, "The program finished and will be restarted")
	if code != 0 || strings.Contains(out, "diverged") || !strings.Contains(out, printed[0]) ||
		strings.Count(out, "\n"+printed[1]+"\n") != 2 || !strings.Contains(out, "\n'first content'\n") {
		t.Fatalf("fred replay: status %d:\n%s\nwant the recorded values (random %s, the first content) and output:\n%s", code, out, printed[1], printed[0])
	}
}

// fred-save keeps a session on a recording: its moment, its history
// (a reverse-watch's stop by run time made a count first), its snapshots'
// moments, bookmarks and the side line going back left. `fred replay` of
// the saved directory, in a fresh process on a "machine" whose input
// file, executable and hostname differ (a mount namespace with another
// build bound over the program, another UTS name), opens at that moment
// with the same fred-history, and every bookmark and reverse command
// lands by the recorded values.
func TestSaveAndOpen(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "unshare")
	exe := testutil.Fixture(t, "travel")
	work := t.TempDir()
	input := filepath.Join(work, "n.txt")
	os.WriteFile(input, []byte("12345\n"), 0o644)
	rec := filepath.Join(work, "rec")
	out, code := fredRun(t, work, "record", "-o", rec, exe, input)
	if code != 0 || !strings.Contains(out, "bad=12345 ") || !strings.Contains(out, "flag=1") {
		t.Fatalf("fred record: status %d:\n%s", code, out)
	}
	recorded := regexp.MustCompile(`bad=12345 time=\d+ rand=-?\d+ who=\S+ host=\S+`).FindString(out)
	total := regexp.MustCompile(`total=(\d+)`).FindStringSubmatch(out)[1]

	saved := filepath.Join(work, "saved")
	script := filepath.Join(work, "cmds")
	os.WriteFile(script, []byte(strings.Join([]string{
		"break 40", "run", "fred-bookmark end",
		"fred-reverse-watch flag", "fred-bookmark bug", "print i",
		"fred-reverse-next", "finish", // a side line: the next going back left
		"fred-save " + saved, "fred-history", "print i", "print bad",
	}, "\n")+"\n"), 0o644)
	out, code = fredRun(t, work, "--batch", "-x", script, "replay", rec)
	if code != 0 || !strings.Contains(out, "fred: saved in "+saved) {
		t.Fatalf("fred-save: status %d:\n%s", code, out)
	}
	history := regexp.MustCompile(`(?s)fred: timeline of run 1.*?>>> you are here[^\n]*\n(   :[^\n]*\n)*`)
	before := history.FindAllString(out, -1)
	vals := regexp.MustCompile(`(?m)^\$\d+ = (.*)$`).FindAllStringSubmatch(out, -1)
	if len(before) != 1 || !strings.Contains(before[0], "branch 'end'") || !strings.Contains(before[0], "branch 'bug'") ||
		strings.Contains(before[0], "stop by run time") || len(vals) != 3 || vals[0][1] != "12345" {
		t.Fatalf("before saving:\n%s", out)
	}
	if _, err := recording.Read(saved); err != nil {
		t.Fatalf("the saved session does not check: %v", err)
	}

	// Elsewhere: another input, another build at the program's path,
	// another host name.
	os.WriteFile(input, []byte("7\n"), 0o644)
	other := filepath.Join(work, "other")
	if b, err := exec.Command("cp", testutil.Fixture(t, "steps"), other).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, b)
	}
	script2 := filepath.Join(work, "cmds2")
	os.WriteFile(script2, []byte(strings.Join([]string{
		"fred-history", "print i", "print bad", "print flag",
		"fred-restart end", "print total", "print flag",
		"fred-restart bug", "print i", "print flag",
		"fred-reverse-step", "print flag",
		"fred-reverse-continue", "advance 38", "print r", "print now",
	}, "\n")+"\n"), 0o644)
	inside := fmt.Sprintf("mount --bind %s %s && hostname elsewhere && exec %s --batch -x %s replay %s", other, exe, testutil.Fred(t), script2, saved)
	c := exec.Command("unshare", "-m", "--uts", "--propagation", "private", "sh", "-c", inside)
	c.Dir = t.TempDir()
	c.Env = append(os.Environ(), "TERM=dumb")
	b, err := c.CombinedOutput()
	out = strings.ReplaceAll(string(b), "\r\n", "\n")
	if err != nil {
		t.Fatalf("fred replay of the saved session elsewhere: %v:\n%s", err, out)
	}
	if !strings.Contains(out, "is not the executable recorded: the recording's copy runs instead") ||
		!regexp.MustCompile(`fred: opened the saved session at main at travel.c:38, with \d+ snapshots and 2 bookmarks`).MatchString(out) {
		t.Fatalf("the saved session did not open at its moment, from the recording's build:\n%s", out)
	}
	after := history.FindAllString(out, -1)
	if len(after) != 1 || after[0] != before[0] {
		t.Fatalf("fred-history differs after opening the saved session:\n%s\nwas:\n%s", strings.Join(after, "\n"), before[0])
	}
	vals = regexp.MustCompile(`(?m)^\$\d+ = (.*)$`).FindAllStringSubmatch(out, -1)
	m := regexp.MustCompile(`time=(\d+) rand=(-?\d+)`).FindStringSubmatch(recorded)
	want := []string{"12345", "12345", "1", total, "1", "12345", "0", "0", m[2], m[1]}
	got := []string{}
	for _, v := range vals {
		got = append(got, v[1])
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("values after opening the saved session: %v, want %v (the recorded ones):\n%s", got, want, out)
	}
	if strings.Contains(out, "diverged") || strings.Contains(out, "left its recording") {
		t.Fatalf("the replay left its recording:\n%s", out)
	}
	if !strings.Contains(out, recorded+"\n") || strings.Contains(out, "host=elsewhere") {
		t.Fatalf("the replayed run does not print what it printed when recorded (%s), on a host of another name:\n%s", recorded, out)
	}
}

// fred-save in a live session (no recording first) keeps the run as a
// recording: the program, its libraries, environment and directory from
// the live process, and the session's log. `fred replay` of it, in a
// fresh process, opens at the saved moment with the values of the run
// (its time and random numbers), and its bookmark and reverse commands
// land, under gdb, pdb and perl alike.
func TestSaveLive(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "python3", "perl")
	root := filepath.Join(testutil.Root(), "testdata")
	cases := []struct {
		name        string
		argv        []string
		run, after  []string
		val, atMark string // printed at the saved moment, at the bookmark
	}{
		{"gdb", []string{"gdb", "--args", testutil.Fixture(t, "nondet"), "INPUT", "0"},
			[]string{"break 80", "run", "fred-bookmark read", "next"}, []string{"print r", "fred-restart read", "print line"}, `\$\d+ = (-?\d+)`, `\$\d+ = "(first content)"`},
		{"pdb", []string{"python3", "-m", "pdb", filepath.Join(root, "nondet.py"), "INPUT", "0"},
			[]string{"b 22", "c", "fred-bookmark read", "n"}, []string{"p r", "fred-restart read", "p line"}, `\n(\d(?:\.\d+)?(?:e-\d+)?)\n`, `\n'(first content)'\n`},
		{"perl", []string{"perl", "-d", filepath.Join(root, "nondet.pl"), "INPUT", "0"},
			[]string{"b 27", "c", "fred-bookmark read", "n"}, []string{"p $r", "fred-restart read", "p $line"}, `\n(\d(?:\.\d+)?(?:e-\d+)?)\n`, `\n(first content)\n`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			input := filepath.Join(work, "input.txt")
			os.WriteFile(input, []byte("first content\n"), 0o644)
			argv := []string{"--batch", "-x", filepath.Join(work, "cmds")}
			for _, a := range c.argv {
				argv = append(argv, strings.ReplaceAll(a, "INPUT", input))
			}
			saved := filepath.Join(work, "saved")
			os.WriteFile(filepath.Join(work, "cmds"), []byte(strings.Join(append(c.run, c.after[0], "fred-save "+saved), "\n")+"\n"), 0o644)
			out, code := fredRun(t, work, argv...)
			first := regexp.MustCompile(c.val).FindStringSubmatch(out)
			if code != 0 || first == nil || !strings.Contains(out, "fred: saved in "+saved) {
				t.Fatalf("the live session: status %d:\n%s", code, out)
			}
			os.WriteFile(filepath.Join(work, "cmds2"), []byte(strings.Join(c.after, "\n")+"\n"), 0o644)
			out, code = fredRun(t, t.TempDir(), "--batch", "-x", filepath.Join(work, "cmds2"), "replay", saved)
			again := regexp.MustCompile(c.val).FindStringSubmatch(out)
			mark := regexp.MustCompile(c.atMark).FindStringSubmatch(out)
			if code != 0 || !strings.Contains(out, "fred: opened the saved session at ") || again == nil || again[1] != first[1] || mark == nil ||
				strings.Contains(out, "left its recording") {
				t.Fatalf("fred replay of the saved session: status %d, want the value %s, then the bookmark's line:\n%s", code, first[1], out)
			}
		})
	}
}

// A live session's save travels: the program read a file of 300 KB,
// whose bytes past 64 KiB a debugging session's log keeps by reference
// (where, and which version); fred-save stores that version, and the
// saved session, opened on "another machine" (unshare) after the file
// changed, reads the stored one: the recorded sum.
func TestSaveLiveTravels(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "python3", "perl")
	root := filepath.Join(testutil.Root(), "testdata")
	cases := []struct {
		name      string
		argv      []string
		run, show string
		val       string
	}{
		{"gdb", []string{"gdb", "--args", testutil.Fixture(t, "bench_read"), "INPUT"}, "break 38\nrun", "print sum", `\$\d+ = (\d+)`},
		{"pdb", []string{"python3", "-m", "pdb", filepath.Join(root, "bigread.py"), "INPUT"}, "b 13\nc", "p total", `\n(\d+)\n`},
		{"perl", []string{"perl", "-d", filepath.Join(root, "bigread.pl"), "INPUT"}, "b 12\nc", "p $sum", `\n(\d+)\n`},
	}
	big := func(seed byte) []byte {
		b := make([]byte, 300<<10)
		for i := range b {
			b[i] = byte(i*7+i/4096) ^ seed
		}
		return b
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			input := filepath.Join(work, "input.bin")
			os.WriteFile(input, big(0), 0o644)
			// (a file changed in the last 50 ms before the program
			// started is stored whole, never by reference: racy)
			time.Sleep(100 * time.Millisecond)
			argv := []string{"--batch", "-x", filepath.Join(work, "cmds")}
			for _, a := range c.argv {
				argv = append(argv, strings.ReplaceAll(a, "INPUT", input))
			}
			saved := filepath.Join(work, "saved")
			os.WriteFile(filepath.Join(work, "cmds"), []byte(c.run+"\n"+c.show+"\nfred-save "+saved+"\n"), 0o644)
			out, code := fredRun(t, work, argv...)
			first := regexp.MustCompile(c.val).FindStringSubmatch(out)
			if code != 0 || first == nil || !strings.Contains(out, "fred: saved in "+saved) || strings.Contains(out, "not saved") {
				t.Fatalf("the live session: status %d:\n%s", code, out)
			}
			m, err := recording.Read(saved)
			if err != nil {
				t.Fatal(err)
			}
			if p, ok := m.Part(recording.RoleRead, input); !ok || p.ID == nil || p.Size != 300<<10 {
				t.Fatalf("the saved session does not hold the file read by reference: %+v", m.Parts)
			}
			// (perl -d writes $0 over what /proc shows of its environment)
			if home := os.Getenv("HOME"); home != "" && !slices.Contains(m.Env, "HOME="+home) {
				t.Fatalf("the saved session's environment lacks HOME: %q", m.Env)
			}
			if _, ok := m.Part(recording.RoleSource, filepath.Join(root, "bigread.py")); c.name == "pdb" && !ok {
				t.Fatalf("the saved pdb session does not hold its script: %+v", m.Parts)
			}
			os.WriteFile(input, big(0x5a), 0o644) // same size, other bytes, a new version
			os.WriteFile(filepath.Join(work, "cmds2"), []byte(c.show+"\n"), 0o644)
			out, code = fredElsewhere(t, t.TempDir(), "--batch", "-x", filepath.Join(work, "cmds2"), "replay", saved)
			again := regexp.MustCompile(c.val).FindStringSubmatch(out)
			if code != 0 || !strings.Contains(out, "fred: opened the saved session at ") || again == nil || again[1] != first[1] ||
				strings.Contains(out, "diverged") || strings.Contains(out, "left its recording") ||
				!strings.Contains(out, "fred: not the versions the saved session read here (changed since, or another machine): "+input+"; the program reads the saved copies") {
				t.Fatalf("the saved session elsewhere, its file changed: status %d, want the sum %s:\n%s", code, first[1], out)
			}
		})
	}
}

// A file changed between the program's read and fred-save cannot be
// kept: the save names it, and its replay says where it leaves the log.
func TestSaveLiveFileChanged(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	work := t.TempDir()
	input := filepath.Join(work, "input.bin")
	os.WriteFile(input, make([]byte, 300<<10), 0o644)
	time.Sleep(100 * time.Millisecond) // (not racy: read by reference)
	saved := filepath.Join(work, "saved")
	os.WriteFile(filepath.Join(work, "cmds"), []byte("break 38\nrun\nshell echo changed >> "+input+"\nfred-save "+saved+"\n"), 0o644)
	out, code := fredRun(t, work, "--batch", "-x", filepath.Join(work, "cmds"), "gdb", "--args", testutil.Fixture(t, "bench_read"), input)
	if code != 0 || !strings.Contains(out, "fred: not saved, changed since the program read them (a replay stops at their reads): "+input) ||
		!strings.Contains(out, "fred: saved in "+saved) {
		t.Fatalf("fred-save after the file changed: status %d:\n%s", code, out)
	}
	os.WriteFile(filepath.Join(work, "cmds2"), []byte("print sum\n"), 0o644)
	out, code = fredRun(t, t.TempDir(), "--batch", "-x", filepath.Join(work, "cmds2"), "replay", saved)
	if code != 0 || !strings.Contains(out, "changed since; the log has where it read, not the data") {
		t.Fatalf("the replay does not say where it left the log: status %d:\n%s", code, out)
	}
}

// A recorded run that crashes keeps its end: fred's status is the
// program's (128 + SIGSEGV), and its replay goes to the crash and back
// from it, to the statement that made the pointer NULL.
func TestRecordCrash(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	dir, _, out, code := recordRun(t, testutil.Fixture(t, "crash"))
	if code != 128+11 || !strings.Contains(out, "(killed by SIGSEGV)") {
		t.Fatalf("fred record: status %d, want 139:\n%s", code, out)
	}
	cmds := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(cmds, []byte("run\nprint p\nfred-reverse-watch p\nprint p->value\nfred-reverse-step\nprint p\ncontinue\n"), 0o644)
	out, code = fredRun(t, t.TempDir(), "--batch", "-x", cmds, "replay", dir)
	vals := regexp.MustCompile(`(?m)^\$\d+ = (.*)$`).FindAllStringSubmatch(out, -1)
	if code != 0 || !strings.Contains(out, "(killed by SIGSEGV)") || strings.Count(out, "Program received signal SIGSEGV") != 2 ||
		!regexp.MustCompile(`fred: 'p' is 0x[0-9a-f]+ here; the next step makes it 0x0`).MatchString(out) ||
		len(vals) != 3 || !strings.Contains(vals[0][1], "0x0") || vals[1][1] != "1" {
		t.Fatalf("fred replay of a crash: status %d:\n%s", code, out)
	}
}

// A recorded run with threads replays with the recorded thread order:
// four threads that lose writes to one another end with the recorded
// sum, in every replay, and going back over their joins lands there.
func TestRecordThreads(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	// A run whose threads lost a write (the sum is not 1000), which a
	// replay in another order would not repeat; mt_sum almost always
	// loses one.
	var dir string
	var m []string
	// (a loaded machine runs the threads one after another more often)
	for try := 0; try < 20 && (m == nil || m[1] == "1000"); try++ {
		var out string
		var code int
		dir, _, out, code = recordRun(t, testutil.Fixture(t, "mt_sum"))
		m = regexp.MustCompile(`sum=(\d+)`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("fred record: status %d:\n%s", code, out)
		}
	}
	if m[1] == "1000" {
		t.Fatalf("twenty recorded runs of mt_sum lost no write: nothing to replay in order")
	}
	cmds := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(cmds, []byte("break 92\nrun\nprint sum()\nfred-reverse-next\nprint i\nnext\nprint sum()\ncontinue\nrun\ncontinue\n"), 0o644)
	out, code := fredRun(t, t.TempDir(), "--batch", "-x", cmds, "replay", dir)
	vals := regexp.MustCompile(`(?m)^\$\d+ = (.*)$`).FindAllStringSubmatch(out, -1)
	if code != 0 || len(vals) != 3 || vals[0][1] != m[1] || vals[1][1] != "3" || vals[2][1] != m[1] || strings.Count(out, "sum="+m[1]+"\n") != 2 ||
		strings.Contains(out, "left its recording") {
		t.Fatalf("fred replay of a threaded run: status %d, want the recorded sum %s each time:\n%s", code, m[1], out)
	}
}

// A recording keeps its sources: the C program's (from its debug info)
// and the Python script with its modules. Edited after the recording,
// the replay runs the recorded script, and the debugger lists the
// recorded lines, saying which files differ.
func TestReplaySourcesAsRecorded(t *testing.T) {
	testutil.Require(t, "gdb", "gcc", "python3")
	t.Run("gdb", func(t *testing.T) {
		work := t.TempDir()
		src := filepath.Join(work, "app.c")
		os.WriteFile(src, []byte("#include <stdio.h>\nint main(void)\n{\n\tint x = 1;\n\tprintf(\"x=%d\\n\", x);\n\treturn 0;\n}\n"), 0o644)
		if b, err := exec.Command("gcc", "-g", "-O0", "-o", filepath.Join(work, "app"), src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		out, code := fredRun(t, work, "record", "-o", filepath.Join(work, "rec"), "./app")
		if code != 0 || !strings.Contains(out, "x=1") {
			t.Fatalf("fred record: status %d:\n%s", code, out)
		}
		os.WriteFile(src, []byte("#include <stdio.h>\nint main(void)\n{\n\tint x = 2; /* edited */\n\tprintf(\"x=%d\\n\", x);\n\treturn 0;\n}\n"), 0o644)
		cmds := filepath.Join(work, "cmds")
		os.WriteFile(cmds, []byte("break main\nrun\nlist 4,4\ncontinue\n"), 0o644)
		out, code = fredElsewhere(t, t.TempDir(), "--batch", "-x", cmds, "replay", filepath.Join(work, "rec"))
		if code != 0 || !strings.Contains(out, "the source here is not the recorded one (edited since, or not here): "+src) ||
			!regexp.MustCompile(`(?m)^4\s+int x = 1;$`).MatchString(out) || strings.Contains(out, "edited */") || !strings.Contains(out, "x=1") {
			t.Fatalf("the replay lists the edited source, not the recorded one: status %d:\n%s", code, out)
		}
	})
	// (perl reads its script and modules inside the log: perl5db lists
	// the lines perl compiled, the recorded ones)
	for _, c := range []struct {
		name, module, script string
		argv                 []string
		cmds                 string
		shown                []string // the recorded lines, listed
	}{
		{"perl", "Helper.pm", "app.pl", []string{"perl", "app.pl"}, "l 3\nb Helper::value\nc\nl 2\nc\n", []string{"my $x = 'old script'", "return 'old helper'"}},
		{"pdb", "helper.py", "app.py", []string{"python3", "app.py"}, "l\nb helper.value\nc\nl\nc\n", []string{"x = 'old script'", "return 'old helper'"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			files := func(script, helper string) {
				if c.name == "perl" {
					os.WriteFile(filepath.Join(work, c.module), []byte("package Helper;\nsub value { return '"+helper+"' }\n1;\n"), 0o644)
					os.WriteFile(filepath.Join(work, c.script), []byte("use lib '.';\nuse Helper;\nmy $x = '"+script+"';\nprint 'x=' . $x . ' h=' . Helper::value() . \"\\n\";\n"), 0o644)
					return
				}
				os.WriteFile(filepath.Join(work, c.module), []byte("def value():\n    return '"+helper+"'\n"), 0o644)
				os.WriteFile(filepath.Join(work, c.script), []byte("import helper\nx = '"+script+"'\nprint('x=%s h=%s' % (x, helper.value()))\n"), 0o644)
			}
			files("old script", "old helper")
			out, code := fredRun(t, work, append([]string{"record", "-o", filepath.Join(work, "rec")}, c.argv...)...)
			if code != 0 || !strings.Contains(out, "x=old script h=old helper") {
				t.Fatalf("fred record: status %d:\n%s", code, out)
			}
			files("new script, edited", "new helper, edited")
			cmds := filepath.Join(work, "cmds")
			os.WriteFile(cmds, []byte(c.cmds), 0o644)
			out, code = fredElsewhere(t, t.TempDir(), "--batch", "-x", cmds, "replay", filepath.Join(work, "rec"))
			if code != 0 || !strings.Contains(out, "x=old script h=old helper") || strings.Contains(out, "diverged") ||
				strings.Contains(strings.ReplaceAll(out, "(edited since, or not here)", ""), "edited") {
				t.Fatalf("the replay runs or shows the edited files, not the recorded ones: status %d:\n%s", code, out)
			}
			for _, l := range c.shown {
				if !strings.Contains(out, l) {
					t.Fatalf("the replay does not list the recorded line %q:\n%s", l, out)
				}
			}
		})
	}
}

// A recorded Python run keeps the modules it imported as it read them:
// the module edited since (and its cached bytecode gone stale) replays as
// recorded, under pdb, and going back lands by the recorded values.
func TestRecordPythonModule(t *testing.T) {
	testutil.Require(t, "python3")
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "helper.py"), []byte("def value():\n    return 'old'\n"), 0o644)
	// (socket: an import of many classes inside the watched stretch, and
	// the host's name)
	os.WriteFile(filepath.Join(work, "app.py"), []byte("import random, socket\nimport helper\nv = helper.value()\nr = random.random()\nprint('v=%s r=%r host=%s' % (v, r, socket.gethostname()))\n"), 0o644)
	host, _ := os.Hostname()
	rec := filepath.Join(work, "rec")
	out, code := fredRun(t, work, "record", "-o", rec, "python3", "app.py")
	m := regexp.MustCompile(`v=old r=(0\.\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("fred record: status %d:\n%s", code, out)
	}
	// and as a module (python3 -m app), replayed under pdb -m
	recm := filepath.Join(work, "recm")
	out, code = fredRun(t, work, "record", "-o", recm, "python3", "-m", "app")
	mm := regexp.MustCompile(`v=old r=(0\.\d+)`).FindStringSubmatch(out)
	if code != 0 || mm == nil {
		t.Fatalf("fred record -m: status %d:\n%s", code, out)
	}
	os.WriteFile(filepath.Join(work, "helper.py"), []byte("def value():\n    return 'new, edited'\n"), 0o644)
	if b, err := exec.Command("python3", filepath.Join(work, "app.py")).Output(); err != nil || !strings.Contains(string(b), "v=new") {
		t.Fatalf("the edited module does not run as edited: %v %s", err, b)
	}
	cmds := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(cmds, []byte("b 5\nc\np v\np r\nfred-reverse-watch r\nc\nfred-reverse-next\np v\nfred-reverse-step\nc\nc\n"), 0o644)
	for _, r := range []struct{ dir, random string }{{rec, m[1]}, {recm, mm[1]}} {
		out, code = fredElsewhere(t, t.TempDir(), "--batch", "-x", cmds, "replay", r.dir)
		out, _, _ = strings.Cut(out, "The program finished and will be restarted")
		if code != 0 || strings.Count(out, "\n'old'\n") != 2 || !strings.Contains(out, "\n"+r.random+"\n") || !strings.Contains(out, "v=old r="+r.random) ||
			strings.Contains(out, "left its recording") || strings.Contains(out, "diverged") || !strings.Contains(out, "the next step makes it "+r.random) ||
			!strings.Contains(out, "host="+host+"\n") {
			t.Fatalf("fred replay of %s after the module changed: status %d, want v=old r=%s:\n%s", r.dir, code, r.random, out)
		}
	}
}

// A replay gives the program the recorded environment, every variable
// as recorded, byte for byte, and none it did not have (this machine's
// LD_PRELOAD neither); gdb runs in it too, but for what would change gdb
// itself (its Python, its libraries, HOME), which stay this machine's.
func TestReplayEnvironment(t *testing.T) {
	testutil.Require(t, "gdb", "gcc")
	work := t.TempDir()
	input := filepath.Join(work, "n.txt")
	os.WriteFile(input, []byte("5\n"), 0o644)
	rec := filepath.Join(work, "rec")
	env := func(kv ...string) []string {
		var out []string
		for _, e := range os.Environ() {
			if !strings.HasPrefix(e, "TRAVEL_WHO=") && !strings.HasPrefix(e, "FRED_ONLY_HERE=") {
				out = append(out, e)
			}
		}
		return append(append(out, "TERM=dumb"), kv...)
	}
	c := exec.Command(testutil.Fred(t), "record", "-o", rec, testutil.Fixture(t, "travel"), input)
	c.Env = env("TRAVEL_WHO=alice", "FRED_SPACED=  two words ", "FRED_LINES=line1\nshow version")
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "who=alice") {
		t.Fatalf("fred record: %v:\n%s", err, out)
	}
	cmds := filepath.Join(work, "cmds")
	os.WriteFile(cmds, []byte("python print('gdb has', __import__('os').environ.get('TRAVEL_WHO'))\nbreak 38\nrun\nprint (char *) getenv(\"TRAVEL_WHO\")\nprint (char *) getenv(\"FRED_ONLY_HERE\")\n"+
		"print (char *) getenv(\"FRED_SPACED\")\nprint (char *) getenv(\"FRED_LINES\")\nprint (char *) strstr(getenv(\"LD_PRELOAD\"), \"libm.so\")\n"), 0o644)
	c = exec.Command(testutil.Fred(t), "--batch", "-x", cmds, "replay", rec)
	// (this machine's LD_PRELOAD is not the program's)
	c.Env = env("TRAVEL_WHO=bob", "FRED_ONLY_HERE=1", "LD_PRELOAD=libm.so.6")
	b, err := c.CombinedOutput()
	out := string(b)
	if err != nil || !strings.Contains(out, "gdb has alice") || !strings.Contains(out, "who=alice") ||
		!regexp.MustCompile(`\$1 = 0x[0-9a-f]+ "alice"`).MatchString(out) || !strings.Contains(out, "$2 = 0x0") ||
		!regexp.MustCompile(`\$3 = 0x[0-9a-f]+ "  two words "`).MatchString(out) || !regexp.MustCompile(`\$4 = 0x[0-9a-f]+ "line1\\nshow version"`).MatchString(out) ||
		!strings.Contains(out, "$5 = 0x0") {
		t.Fatalf("fred replay: %v; want the program with the recorded environment, gdb with this one:\n%s", err, out)
	}
}

// A file the recorded run read that is not on the replaying machine (or
// not readable there) gets a stand-in: the program's open succeeds as it
// did, and what it read and asked of the file comes from the recording.
func TestReplayFileGone(t *testing.T) {
	dir, input, printed := record(t)
	os.Remove(input)
	cmds := filepath.Join(t.TempDir(), "cmds")
	os.WriteFile(cmds, []byte("run\n"), 0o644)
	out, code := fredRun(t, t.TempDir(), "--batch", "-x", cmds, "replay", dir)
	if code != 0 || !strings.Contains(out, printed) || strings.Contains(out, "diverged") {
		t.Fatalf("fred replay without the input file: status %d:\n%s\nwant the recorded output:\n%s", code, out, printed)
	}
}

// A bookmark in code without debug information (Debian's sort, stopped in
// libc's write) is a moment like any other: fred-switch and fred-restart
// go exactly there (they once looked for a line with source before it,
// forever).
func TestBookmarkWithoutSource(t *testing.T) {
	testutil.Require(t, "gdb", "sort")
	work := t.TempDir()
	words := filepath.Join(work, "words.txt")
	os.WriteFile(words, []byte("pear\napple\nfig\n"), 0o644)
	rec := filepath.Join(work, "rec")
	if out, code := fredRun(t, work, "record", "-o", rec, "sort", words); code != 0 || !strings.Contains(out, "apple\nfig\npear\n") {
		t.Fatalf("fred record sort: status %d:\n%s", code, out)
	}
	cmds := filepath.Join(work, "cmds")
	os.WriteFile(cmds, []byte("break write\nrun\nfred-bookmark w\nfinish\nfred-restart w\nprint nbytes\nfred-switch w\nprint (char) *(char *) buf\n"), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, testutil.Fred(t), "--batch", "-x", cmds, "replay", rec)
	c.Env = append(os.Environ(), "TERM=dumb")
	b, err := c.CombinedOutput()
	out := strings.ReplaceAll(string(b), "\r\n", "\n")
	if err != nil || !regexp.MustCompile(`\$2 = 6\n`).MatchString(out) || !strings.Contains(out, `$3 = 97 'a'`) {
		t.Fatalf("fred-restart to a bookmark in libc's write: %v:\n%s", err, out)
	}
}
