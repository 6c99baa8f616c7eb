package replaylog

import (
	_ "embed"

	"github.com/fred-debugger/fred/internal/cbuild"
)

//go:embed preload/fredlog.c
var preloadSource []byte

// Preload builds the preload library into dir ("" = the user's cache
// directory) unless a build of the same source is there, and returns its
// path. It needs gcc.
func Preload(dir string) (string, error) {
	return cbuild.Shared(preloadSource, "fredlog", dir, "the replay log library", "-O2", "-Wall", "-ldl")
}

// Env is what the debugged program's environment needs for the library
// to record into the log file at path (LD_PRELOAD aside). The library
// leaves its messages in the log's header for fred to show (Header.Notice)
// rather than on the program's stderr, which fred hides during replays.
// Reads from a
// terminal are logged only when tty is true: under gdb the program alone
// reads it; pdb and perl -d read their commands from it in the same
// process, and those must pass through.
func Env(path string, tty bool) []string {
	env := []string{"FREDLOG_FILE=" + path, "FREDLOG_QUIET=1"}
	if tty {
		env = append(env, "FREDLOG_TTY=1")
	} else {
		// The interpreter's allocations follow what the person asks the
		// debugger, which differs between runs: their addresses are not
		// logged. Nor is the pid: the debugger asks for it as it likes
		// (perl5db at every prompt), and CRIU restores the same one.
		// Signals neither: the interpreter's handlers only take note,
		// and SIGINT is how the person stops the program.
		// Nor the order of lock calls: the interpreter's own (Python's
		// GIL) follow the person at the prompt, not the program.
		env = append(env, "FREDLOG_MMAP=0", "FREDLOG_PID=0", "FREDLOG_SIG=0", "FREDLOG_SYNC=0")
	}
	return env
}
