package fred

import (
	"fmt"
	"syscall"
	"time"

	"github.com/fred-debugger/fred/ckpt"
	"github.com/fred-debugger/fred/internal/proc"
)

// host is how the program is held: by a debugger that traces it from its
// own process (traced: gdb), or by one that lives inside it (inProcess,
// inprocess.go: pdb, perl -d). The engine asks the host wherever the two
// differ, rather than asking which one it has.
type host interface {
	// done is closed when the debugger has exited by itself (not when
	// fred killed its process to restore a snapshot).
	done() <-chan struct{}
	// process is the debugger's process now, how it ended (ok false: not
	// known, or it runs), and what it is, for messages.
	process() (pid int, status func() (syscall.WaitStatus, bool), what string)
	// started runs once the debugger first prompts.
	started()
	// typed notes what the person typed while their command ran;
	// afterInput runs once it is over.
	typed(b []byte)
	afterInput()
	// newRun says whether a forward command starts a new run without a
	// run command (the debugger restarted the program by itself).
	newRun() bool
	// take dumps process pid as snapshot id with via, with thread lwp
	// the one the history goes on in (0: the main one).
	take(via ckpt.Snapshotter, pid, id, lwp int) (*ckpt.Snapshot, error)
	// restore makes snapshot sn the live program.
	restore(sn *snap) error
	// reap collects pid, killed, if the debugger is its parent and left
	// it a zombie.
	reap(pid int)
}

func newHost(s *Session) host {
	if s.p.InProcess {
		return newInProcess(s)
	}
	return traced{s}
}

// traced is the host of a debugger in its own process (gdb): a CRIU
// snapshot detaches it from the program first and attaches it after.
type traced struct{ s *Session }

func (h traced) done() <-chan struct{} { return h.s.proc.Done() }

func (h traced) process() (int, func() (syscall.WaitStatus, bool), string) {
	return h.s.proc.Cmd.Process.Pid, h.s.proc.Status, h.s.p.Name
}

func (traced) started()     {}
func (traced) typed([]byte) {}
func (traced) afterInput()  {}
func (traced) newRun() bool { return false }

// take takes the snapshot through the debugger (fork copies), or lets go
// of the program for the time of the dump.
func (h traced) take(via ckpt.Snapshotter, pid, id, lwp int) (*ckpt.Snapshot, error) {
	s := h.s
	_, through := via.(ckpt.ThroughDebugger)
	if through {
		return via.Take(pid, id)
	}
	if f, ok := s.copies.(*ckpt.Fork); ok {
		// The live program may be a fork copy, about to go through CRIU.
		if err := f.BeforeCRIU(pid); err != nil {
			return nil, err
		}
	}
	t := s.p.Tracer
	if t == nil {
		return via.Take(pid, id)
	}
	// CRIU cannot dump a traced process: queue a stop, let go of it,
	// dump it, take it back.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("stopping the program (pid %d): %w", pid, err)
	}
	if _, err := s.query(s.p.Quiet(t.Detach)); err != nil {
		return nil, err
	}
	if err := ckpt.WaitStopped(pid, s.opt.Timeout); err != nil {
		h.reattach(pid, lwp)
		return nil, err
	}
	cs, err := via.Take(pid, id)
	if err == nil && via.Name() == "criu" {
		// Else the debugger, attached again, ignores the main thread's
		// stops (see ckpt.ClearDebugStatus).
		err = ckpt.ClearDebugStatus(pid)
	}
	if aerr := h.reattach(pid, lwp); aerr != nil && err == nil {
		err = aerr
	}
	return cs, err
}

// reattach gives a program fred let go of back to the debugger, with
// thread lwp selected (if not 0).
func (h traced) reattach(pid, lwp int) error {
	s := h.s
	if err := s.fullAttachFor(pid); err != nil {
		return err
	}
	out, err := s.query(s.p.Quiet(fmt.Sprintf(s.p.Tracer.Attach, pid)))
	if err != nil {
		return err
	}
	if s.lean {
		s.leanAttached = true
	}
	// gdb selects the main thread on attach: only another needs selecting.
	if lwp != 0 && lwp != pid && s.p.Threads != nil {
		if _, err := s.query(fmt.Sprintf(s.p.Threads.Select, lwp)); err != nil {
			return err
		}
	}
	if _, err := s.location(); err != nil {
		return fmt.Errorf("attaching to pid %d again: %v: %s", pid, err, lastLine(out))
	}
	for _, c := range s.p.Tracer.Settle {
		if _, err := s.query(s.p.Quiet(c)); err != nil {
			return err
		}
	}
	return nil
}

// restore kills the live program, restores the image (same pid) and
// takes it back into the debugger; a fork copy's backend does all that
// itself.
func (h traced) restore(sn *snap) error {
	s := h.s
	if _, ok := sn.via.(ckpt.ThroughDebugger); ok {
		got, err := s.restoreImage(sn)
		if err != nil {
			s.running, s.pid = false, 0
			return err
		}
		if s.lean {
			s.leanAttached = true
		}
		s.adopted[got] = true
		s.running, s.pid = true, got
		s.keeper.Watch(got, sn.Pid) // the live program, the snapshot's fresh copy
		return nil
	}
	if debugProbes {
		t0 := time.Now()
		defer func() { debugf("fred-restore %d: %v", sn.ID, time.Since(t0)) }()
	}
	t := s.p.Tracer
	if s.running && s.pid != 0 {
		if t != nil {
			if _, err := s.query(s.p.Quiet(t.Kill)); err != nil {
				return err
			}
		}
		_ = syscall.Kill(s.pid, syscall.SIGKILL)
	}
	if err := s.freePid(sn.Pid, sn.ID); err != nil {
		return err
	}
	s.running, s.pid = false, 0
	got, err := s.restoreImage(sn)
	if err != nil {
		return err
	}
	s.adopted[got] = true
	s.keeper.Watch(got)
	if t != nil {
		if err := h.reattach(got, sn.lwp); err != nil {
			return err
		}
	}
	s.running, s.pid = true, got
	return nil
}

// reap: a program gdb started, detached from and attached to again for
// CRIU's dumps, with threads, is now and then not collected by gdb's
// kill, and only its parent can collect it (fred waited for its pid to be
// free until its deadline, and the restore failed).
func (h traced) reap(pid int) {
	s := h.s
	if s.p.Tracer == nil || s.p.Tracer.Reap == "" || s.proc == nil || s.proc.Cmd == nil || s.proc.Cmd.Process == nil {
		return
	}
	dbg := s.proc.Cmd.Process.Pid
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		switch st := proc.State(pid); {
		case st == 0 || proc.Parent(pid) != dbg:
			return // gone, or not the debugger's to collect
		case st == 'Z':
			// (not collectable until its last thread is gone: again)
			_, _ = s.query(fmt.Sprintf(s.p.Tracer.Reap, pid))
		}
	}
}
