package recording

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// RoleSource is a source file of the program (its C sources, its script
// and modules): what the debugger lists and, for a script, what it
// compiles, where the file here is not the recorded one.
const RoleSource = "source"

// SourcesEnv names the file where an interpreter's recording bootstrap
// writes the paths of its script and modules, one per line.
const SourcesEnv = "FRED_SOURCES_OUT"

// maxSource: a larger "source" is not one (a generated table, data).
const maxSource = 8 << 20

// compiledSources are the source files an executable's debug info names
// (its line tables' files) that are here: those under /usr are the
// system's (headers, the C library's), not the program's.
func compiledSources(exe string) []string {
	f, err := elf.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	r := d.Reader()
	for {
		cu, err := r.Next()
		if err != nil || cu == nil {
			break
		}
		r.SkipChildren()
		lr, err := d.LineReader(cu)
		if err != nil || lr == nil {
			continue
		}
		for _, lf := range lr.Files() {
			if lf != nil && filepath.IsAbs(lf.Name) {
				seen[filepath.Clean(lf.Name)] = true
			}
		}
	}
	var out []string
	for p := range seen {
		if !strings.HasPrefix(p, "/usr/") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// listedSources reads the paths an interpreter's bootstrap wrote.
func listedSources(list string) []string {
	b, err := os.ReadFile(list)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range strings.Split(string(b), "\n") {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// storeSources stores each regular file of paths (sources: not every
// one need be there) that was not changed after since (a file edited
// while the program ran is not what it compiled: left out, named).
func storeSources(dir string, paths []string, since int64) (parts []Part, changed []string) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() || st.Size() > maxSource {
			continue
		}
		if since != 0 && st.ModTime().UnixNano() > since {
			changed = append(changed, p)
			continue
		}
		part, err := store(dir, RoleSource, p)
		if err == nil {
			parts = append(parts, part)
		}
	}
	return parts, changed
}

// ExtractSources puts the recording's sources that differ here (or are
// not here) in dir and returns them: the recorded path, and the copy.
func ExtractSources(src string, m *Manifest, dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range m.Parts {
		if p.Role != RoleSource {
			continue
		}
		if same, _ := Same(p); same {
			continue
		}
		dst := filepath.Join(dir, p.SHA256[:16], filepath.Base(p.Path))
		if err := Extract(src, p, dst); err != nil {
			return nil, fmt.Errorf("the recorded source %s: %w", p.Path, err)
		}
		out[p.Path] = dst
	}
	return out, nil
}
