package timed

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	P "github.com/fred-debugger/fred/personalities"
)

// spinner stands in for a debugger and its program: a real process that
// spins and stops itself at SIGINT, resumed by SIGCONT.
type spinner struct{ cmd *exec.Cmd }

func (s *spinner) Pid() int { return s.cmd.Process.Pid }
func (s *spinner) Resume(timeout time.Duration) (string, error) {
	if err := syscall.Kill(s.Pid(), syscall.SIGCONT); err != nil {
		return "", err
	}
	// Running first, then stopped again by the interrupt.
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(100 * time.Microsecond) {
		if st, err := ckpt.ProcState(s.Pid()); err == nil && st != 'T' && st != 't' {
			break
		}
	}
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if st, err := ckpt.ProcState(s.Pid()); err == nil && (st == 'T' || st == 't') {
			return "Program received signal SIGINT", nil
		}
	}
	return "", errors.New("the spinner did not stop")
}
func (s *spinner) UseBreakpoints([]string) (func() error, error) {
	return func() error { return nil }, nil
}
func (s *spinner) StopOf(out string) P.Stop {
	if strings.Contains(out, "SIGINT") {
		return P.StopSignal
	}
	return P.StopDone
}

// For stops the program after about the CPU time asked, by an interrupt
// from outside (the CPU alarm's SIGTRAP would end a program no debugger
// holds).
func TestForByInterrupt(t *testing.T) {
	defer func(a bool) { ClockAlarms = a }(ClockAlarms)
	ClockAlarms = false
	cmd := exec.Command("sh", "-c", `trap 'kill -STOP $$' INT; kill -STOP $$; while :; do :; done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	s := &spinner{cmd: cmd}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if st, _ := ckpt.ProcState(s.Pid()); st == 'T' {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the spinner did not stop itself")
		}
	}
	r, err := For(s, 30*time.Millisecond, nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fired || r.Stop != P.StopSignal || r.Ran <= 0 {
		t.Fatalf("a run of 30 ms: %+v", r)
	}
}
