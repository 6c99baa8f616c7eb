package personalities

// LLDB is the personality for LLVM's lldb: a file (files/lldb.fred), the
// worked example of docs/personalities.md, read by the protocol core of
// debuggers that trace the program (traced.go). Its helpers
// (scripts/lldb_helpers.py) are in builtinFiles with it.
var LLDB = mustBuiltin("lldb.fred")
