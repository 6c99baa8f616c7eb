package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// enosysEnv carries the system call WithoutSyscall takes away to the test
// binary run again (Main).
const enosysEnv = "FRED_TEST_ENOSYS"

// WithoutSyscall is a command running argv as on a kernel without the
// system call nr: a seccomp filter makes it answer ENOSYS. The test
// binary runs again, installs the filter (Main) and execs argv under it.
func WithoutSyscall(t testing.TB, nr uintptr, argv ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self, argv...)
	c.Env = append(os.Environ(), enosysEnv+"="+strconv.FormatUint(uint64(nr), 10))
	return c
}

// withoutSyscall is the test binary run by WithoutSyscall: it never
// returns.
func withoutSyscall(nr string) {
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "testutil.WithoutSyscall: %v\n", err)
		os.Exit(127)
	}
	os.Unsetenv(enosysEnv)
	n, err := strconv.ParseUint(nr, 10, 32)
	if err != nil || len(os.Args) < 2 {
		fail(fmt.Errorf("no system call or command (%q, %q)", nr, os.Args))
	}
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fail(err)
	}
	// The filter is the thread's, and execve keeps it: the exec must run
	// on this thread.
	runtime.LockOSThread()
	if err := denySyscall(uint32(n)); err != nil {
		fail(err)
	}
	fail(syscall.Exec(path, os.Args[1:], os.Environ()))
}

// denySyscall installs a seccomp filter on this thread under which the
// system call nr answers ENOSYS, and every other call runs.
func denySyscall(nr uint32) error {
	arch, ok := map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no seccomp architecture for %s", runtime.GOARCH)
	}
	// seccomp_data: nr at offset 0, arch at 4. A call of another
	// architecture's table (nr means another call there) runs.
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: arch, Jf: 3},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: nr, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// (no new privileges: what lets a process without CAP_SYS_ADMIN filter)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", e)
	}
	runtime.KeepAlive(prog)
	return nil
}
