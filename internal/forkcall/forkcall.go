// Package forkcall names what the fork backend (ckpt.Fork) asks of a
// debugger that traces the program. ckpt drives it; each such debugger's
// personality implements it in that debugger's commands. Its own package
// so that both can name it: ckpt's tests run gdb through its personality.
package forkcall

// Tracer is the debugger on the program, for fork copies: load the agent,
// call it, and put a copy's registers back.
type Tracer interface {
	// Preload is the command that puts lib first in the LD_PRELOAD the
	// program starts with (old: what it has now, "" none).
	Preload(lib, old string) string
	// Load has the program dlopen lib.
	Load(lib string) error
	// Call calls fn (an address, 0x..., or a name) in the program with
	// four long arguments and returns its result; a fork child it makes
	// goes free of the debugger. threadsHeld: the other threads stay
	// where they are meanwhile.
	Call(fn string, args [4]int64, threadsHeld bool) (int64, error)
	// Registers reads the selected thread's registers by name (values in
	// hex); SetRegisters writes those named.
	Registers(names []string) (map[string]string, error)
	SetRegisters(values map[string]string, names []string) error
	// Kill kills the program; Attach traces process pid; Settle tells the
	// debugger that the program it attached to sits on a breakpoint where
	// it stands.
	Kill() error
	Attach(pid int) error
	Settle() error
}
