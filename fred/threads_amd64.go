package fred

import "golang.org/x/sys/unix"

// archWaitCalls are the waits (see waitCalls) that only some
// architectures have.
var archWaitCalls = []int{unix.SYS_POLL, unix.SYS_SELECT, unix.SYS_EPOLL_WAIT, unix.SYS_PAUSE, unix.SYS_ACCEPT}
