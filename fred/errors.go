package fred

import (
	"errors"
	"fmt"
)

var (
	// ErrInterrupted means the person pressed Ctrl-C during a fred command.
	ErrInterrupted = errors.New("interrupted")
	// ErrNoProgram means a command needs a live program and there is none.
	ErrNoProgram = errors.New("the program is not running")
	// ErrSessionOver means the debugger has gone and the session ended.
	ErrSessionOver = errors.New("the debugging session ended")
	// ErrOutermost means reverse-finish in the outermost frame (as gdb's
	// finish there).
	ErrOutermost = errors.New("'fred-reverse-finish' is not meaningful in the outermost frame: nothing called it; use fred-reverse-next, or fred-restart N to a snapshot")
	// ErrNoInstructions means a debugger without machine instructions
	// (pdb, perl) was asked to go back one.
	ErrNoInstructions = errors.New("this debugger does not step machine instructions; use fred-reverse-step")
)

// UnknownCommandError is a fred- command that is not in the table.
type UnknownCommandError struct{ Name string }

func (e *UnknownCommandError) Error() string {
	return fmt.Sprintf("unknown command '%s'; 'fred-help' lists fred's commands", e.Name)
}

// UsageError is a fred command given bad arguments.
type UsageError struct {
	Cmd, Msg, Usage string
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("%s: %s (usage: %s)", e.Cmd, e.Msg, e.Usage)
}

// NeedsProgramError says which command needed a running program.
type NeedsProgramError struct{ Cmd, Hint string }

func (e *NeedsProgramError) Error() string {
	return fmt.Sprintf("'%s' needs a running program; start it with %s first", e.Cmd, e.Hint)
}

func (e *NeedsProgramError) Unwrap() error { return ErrNoProgram }

// NotBackError is a command that failed (Err) and could not put the
// person back where they were (Back): both stay visible to errors.Is and
// errors.As, so a debugger that died on the way back ends the session
// with its own message.
type NotBackError struct{ Err, Back error }

func (e *NotBackError) Error() string {
	return fmt.Sprintf("%v; and going back to where you were failed: %v", e.Err, e.Back)
}

func (e *NotBackError) Unwrap() []error { return []error{e.Err, e.Back} }

// InterruptedError is a command the person interrupted (Ctrl-C); they
// are back where they were.
type InterruptedError struct{ Cmd string }

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("'%s' interrupted; you are back where you were", e.Cmd)
}

func (e *InterruptedError) Unwrap() error { return ErrInterrupted }

// PassesError is a reverse command that would have to run part of a
// command that used up some of a breakpoint's ignore count (Where): each
// command run again would start the count afresh.
type PassesError struct{ Where string }

func (e *PassesError) Error() string {
	return fmt.Sprintf("going back inside a command that used up part of an ignore count (%s) is not supported under this debugger yet; fred-reverse-continue and fred-restart N reach its stop", e.Where)
}
