//go:build !amd64

package fred

// archWaitCalls are the waits (see waitCalls) that only some
// architectures have.
var archWaitCalls []int
