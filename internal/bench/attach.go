package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// gdbAttach times plain gdb (no fred) attaching to and detaching from a
// process that uses libc, with and without libc's separate debug
// information: every snapshot and restore under fred pays one attach.
func (b *bench) gdbAttach() {
	progress("gdb attach alone")
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		b.note("gdb attach alone: %v", err)
		return
	}
	defer func() {
		_ = sleep.Process.Kill()
		_ = sleep.Wait()
	}()
	pid := sleep.Process.Pid
	script := filepath.Join(b.tmp, "attach.py")
	const reps = 5
	py := fmt.Sprintf(`import gdb, time
for i in range(%d):
    t = time.time()
    gdb.execute("attach %d", to_string=True)
    a = time.time() - t
    gdb.execute("detach", to_string=True)
    print("attach-ms %%.2f" %% (a * 1000))
`, reps, pid)
	if err := os.WriteFile(script, []byte(py), 0o600); err != nil {
		b.note("gdb attach alone: %v", err)
		return
	}
	defer os.Remove(script)
	re := regexp.MustCompile(`attach-ms ([\d.]+)`)
	run := func(extra ...string) (sample, error) {
		args := append([]string{"-nx", "-q", "-batch"}, extra...)
		args = append(args, "-x", script)
		cmd := exec.Command("gdb", args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		done := make(chan struct{})
		timer := time.AfterFunc(60*time.Second, func() {
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
			}
			close(done)
		})
		out, err := cmd.CombinedOutput()
		timer.Stop()
		var s sample
		for _, m := range re.FindAllStringSubmatch(string(out), -1) {
			x, _ := strconv.ParseFloat(m[1], 64)
			s = append(s, x/1000)
		}
		if len(s) == 0 {
			return nil, fmt.Errorf("gdb %v: %v\n%s", args, err, tail(string(out), 3))
		}
		return s, nil
	}
	with, err := run()
	if err != nil {
		b.note("gdb attach alone: %v", err)
		return
	}
	without, err := run("-iex", "set debug-file-directory /nonexistent")
	if err != nil {
		b.note("gdb attach alone: %v", err)
		return
	}
	fmt.Fprintf(&b.details, "\nPlain gdb attaching to a sleeping `sleep` (no fred, %d attaches in one gdb):\n", reps)
	fmt.Fprintf(&b.details, "  with libc's separate debug info (/usr/lib/debug): %s\n", with)
	fmt.Fprintf(&b.details, "  with set debug-file-directory /nonexistent:       %s\n", without)
	if with.median() > 3*without.median() {
		msg := fmt.Sprintf("Every snapshot and every restore re-attaches gdb, and each attach makes gdb read libc's separate debug info again (\"Reading symbols from /usr/lib/debug/.build-id/...\"): plain gdb takes %s per attach here, %s without that debug info.",
			secs(with.median()), secs(without.median()))
		if b.attachShare > 0 {
			msg += fmt.Sprintf(" In the traced restores of the small program, 'gdb: attach' was %.0f%% of fred-restart.", 100*b.attachShare)
		}
		b.note("%s", msg)
	}
}
