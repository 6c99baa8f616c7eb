package recording

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// kernelFeature is a system call a program, its libc or interpreter, or
// fred's replay may use, and a call of it that cannot do harm (invalid
// sizes, flags or descriptors, no pointers): a kernel without it answers
// ENOSYS, one with it anything else.
type kernelFeature struct {
	name string
	nr   uintptr
	args [6]uintptr
	why  string
	// must: nothing stands in for it. The others are logged (their
	// answers replay without the kernel) or have a fallback that the C
	// library or its usual callers take on ENOSYS (a container's seccomp
	// profile answers ENOSYS to clone3 for that): said, not refused.
	must bool
}

const bad32 = 0xffffffff // an invalid unsigned int: flags, a descriptor

var kernelFeatures = []kernelFeature{
	{"statx", unix.SYS_STATX, [6]uintptr{bad32, 0, bad32}, "coreutils; logged", false},
	{"getrandom", unix.SYS_GETRANDOM, [6]uintptr{0, 0, unix.GRND_NONBLOCK}, "random numbers; logged", false},
	{"memfd_create", unix.SYS_MEMFD_CREATE, [6]uintptr{0, bad32}, "the replay's stand-in files, which take /dev/null instead; a program's own call has no fallback", false},
	{"clone3", unix.SYS_CLONE3, [6]uintptr{0, 0}, "glibc's pthread_create, posix_spawn; clone instead", false},
	{"rseq", unix.SYS_RSEQ, [6]uintptr{0, 0, 1 << 30}, "glibc's thread start-up; skipped", false},
	{"openat2", unix.SYS_OPENAT2, [6]uintptr{bad32, 0, 0, 0}, "path-resolution limits", true},
	{"close_range", unix.SYS_CLOSE_RANGE, [6]uintptr{bad32, 0, bad32}, "closefrom, Python's subprocess; a loop instead", false},
	{"pidfd_open", unix.SYS_PIDFD_OPEN, [6]uintptr{0, bad32}, "waiting for processes (Go, systemd)", true},
	{"faccessat2", unix.SYS_FACCESSAT2, [6]uintptr{bad32, 0, bad32, bad32}, "glibc's faccessat; faccessat instead", false},
	{"fchmodat2", unix.SYS_FCHMODAT2, [6]uintptr{bad32, 0, 0, bad32}, "glibc's fchmodat, lchmod; fchmodat instead", false},
	{"copy_file_range", unix.SYS_COPY_FILE_RANGE, [6]uintptr{bad32, 0, bad32, 0, 0, bad32}, "cp, Python's shutil; read and write instead", false},
	{"epoll_pwait2", unix.SYS_EPOLL_PWAIT2, [6]uintptr{bad32, 0, 0, 0, 0, 0}, "event loops with fine timeouts", true},
	{"futex_waitv", unix.SYS_FUTEX_WAITV, [6]uintptr{0, 0, bad32, 0, 0}, "waiting on several futexes", true},
	{"io_uring_setup", unix.SYS_IO_URING_SETUP, [6]uintptr{0, 0}, "asynchronous I/O (io_uring)", true},
	{"ptrace", unix.SYS_PTRACE, [6]uintptr{unix.PTRACE_PEEKDATA, 0, 0, 0}, "gdb, which replays under it", true}, // pid 0: ESRCH
}

// KernelFeatures are the system calls of kernelFeatures this kernel has.
func KernelFeatures() []string {
	var have []string
	for _, f := range kernelFeatures {
		if _, _, e := unix.Syscall6(f.nr, f.args[0], f.args[1], f.args[2], f.args[3], f.args[4], f.args[5]); e != unix.ENOSYS {
			have = append(have, f.name)
		}
	}
	return have
}

// kernelFits says which of the recording kernel's features this kernel
// answers ENOSYS to: an error for one nothing stands in for, and those
// that something does (said, not refused). An older recording lists none;
// names this fred does not probe (a newer fred's) are not checked.
func (m *Manifest) kernelFits() (soft []string, err error) {
	if len(m.KernelFeatures) == 0 {
		return nil, nil
	}
	here := map[string]bool{}
	for _, f := range KernelFeatures() {
		here[f] = true
	}
	known := map[string]kernelFeature{}
	for _, f := range kernelFeatures {
		known[f.name] = f
	}
	var lacks []string
	for _, name := range m.KernelFeatures {
		f, ok := known[name]
		switch {
		case !ok || here[name]:
		case f.must:
			lacks = append(lacks, fmt.Sprintf("%s (%s)", name, f.why))
		default:
			soft = append(soft, fmt.Sprintf("%s (%s)", name, f.why))
		}
	}
	if len(lacks) == 0 {
		return soft, nil
	}
	it := "it"
	if len(lacks) > 1 {
		it = "them"
	}
	_, kernel, _, _ := Machine()
	return nil, &UnfitError{Why: fmt.Sprintf("the recording's kernel (%s) had %s, which this one (%s) answers ENOSYS to (an older kernel, or a seccomp filter such as a container's): the recorded program may have used %s",
		m.Kernel, strings.Join(lacks, ", "), kernel, it)}
}
