package personalities

import _ "embed"

// LLDB is the personality for LLVM's lldb: a file (files/lldb.fred), the
// worked example of docs/personalities.md, read by the protocol core of
// debuggers that trace the program (traced.go).
var LLDB = mustBuiltin("lldb.fred")

//go:embed scripts/lldb_helpers.py
var lldbHelpersPy string
