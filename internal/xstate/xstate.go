// Package xstate builds the library that lets gdb 13 write registers on
// CPUs with a large XSAVE area (AMX), and puts it in a debugger's
// environment: see c/xstate.c.
package xstate

import (
	_ "embed"
	"path/filepath"
	"strings"

	"github.com/fred-debugger/fred/internal/cbuild"
)

//go:embed c/xstate.c
var source []byte

// Preload returns env with the library first in LD_PRELOAD; env as it
// was, and why, when it cannot be built.
func Preload(env []string) ([]string, error) {
	so, err := cbuild.Shared(source, "fredxstate", "", "gdb's register writes on this CPU", "-O2", "-Wall", "-ldl")
	if err != nil {
		return env, err
	}
	out := make([]string, 0, len(env)+1)
	pre := so
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok {
			if v != "" {
				pre += ":" + v
			}
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LD_PRELOAD="+pre), nil
}

// Strip takes the library out of an LD_PRELOAD value: it is gdb's, and
// gdb passes its environment on to the program.
func Strip(preload string) string {
	var keep []string
	for _, l := range strings.FieldsFunc(preload, func(r rune) bool { return r == ':' || r == ' ' }) {
		if b := filepath.Base(l); !(strings.HasPrefix(b, "fredxstate-") && strings.HasSuffix(b, ".so")) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, ":")
}
