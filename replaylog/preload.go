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
//
// Reads from a terminal are logged in both cases: what the person typed
// to the program while it ran is fed again on replay. Under gdb the
// program alone reads the terminal. An in-process debugger (inProcess:
// pdb, perl -d) reads its commands from the same terminal in the same
// process, so its bootstrap tells the library when the person is at the
// debugger's prompt (FREDLOG_SYSCALL in fredlog.c), and nothing is logged
// or replayed then: the debugger's own traffic passes through.
func Env(path string, inProcess bool) []string {
	env := []string{"FREDLOG_FILE=" + path, "FREDLOG_QUIET=1", "FREDLOG_TTY=1"}
	if inProcess {
		// The interpreter's allocations follow what the person asks the
		// debugger, which differs between runs: their addresses are not
		// logged. Nor is the pid: the debugger asks for it as it likes
		// (perl5db at every prompt), and CRIU restores the same one.
		// Signals neither: the interpreter's handlers only take note,
		// and SIGINT is how the person stops the program.
		// The order of lock calls only once the program has a second
		// thread (in one thread the GIL's calls order nothing); while
		// the person is at the prompt the other threads wait, so the
		// GIL's calls then follow the program, not the person.
		// Directories' entries neither: the interpreter's import caches
		// are filled while the debugger works too, and checked while
		// the program runs.
		env = append(env, "FREDLOG_MMAP=0", "FREDLOG_PID=0", "FREDLOG_SIG=0", "FREDLOG_SYNC=2", "FREDLOG_MONO=lenient", "FREDLOG_DIRS=0")
	}
	return env
}

// JoinPreload is LD_PRELOAD's value with lib first and old (what was
// there) after it.
func JoinPreload(lib, old string) string {
	if old == "" {
		return lib
	}
	return lib + ":" + old
}
