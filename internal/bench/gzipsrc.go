package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// gzip built with -g from Debian's source package (issue 24), for the
// recordings section. The source comes through apt with a private state
// whose deb-src lists are derived from the machine's own apt sources: the
// project names no network address, and /etc/apt is not changed. The
// binary is kept in the caller's cache, keyed by the source's version.

// userCache is read at start-up, before run points XDG_CACHE_HOME at the
// bench's temporary directory: the build must outlive the run.
var userCache, userCacheErr = os.UserCacheDir()

// srcGzip is a gzip built from Debian's source.
type srcGzip struct {
	bin     string // the binary, in the cache
	version string // the Debian source version: 1.12-1
	note    string // how it was had: built now, or reused
}

// debianGzip fetches, unpacks and builds gzip's Debian source once per
// source version; the error says which step (command) failed.
func debianGzip(tmp string) (*srcGzip, error) {
	if userCacheErr != nil {
		return nil, fmt.Errorf("no cache directory for the build: %w", userCacheErr)
	}
	root := filepath.Join(userCache, "fred", "bench")
	apt, err := privateApt(filepath.Join(root, "apt-src"))
	if err != nil {
		return nil, err
	}
	progress("gzip from its Debian source: apt-get update of a private deb-src list derived from /etc/apt")
	if _, err := runIn(tmp, apt("update")...); err != nil {
		// Offline: an earlier run's build still serves, said so.
		if g := cachedGzip(root); g != nil {
			g.note = fmt.Sprintf("reused from an earlier run: the update failed (%s)", firstLine(err.Error()))
			return g, nil
		}
		return nil, err
	}
	out, err := runIn(tmp, apt("--print-uris", "source", "gzip")...)
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^'[^']*' gzip_(\S+)\.dsc `).FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("apt-get --print-uris source gzip names no gzip_*.dsc:\n%s", lastLines(out))
	}
	ver := string(m[1])
	dir := filepath.Join(root, "gzip-"+ver)
	bin := filepath.Join(dir, "gzip")
	if hasDebugInfo(bin) == nil {
		return &srcGzip{bin: bin, version: ver, note: "reused from an earlier run (" + dir + ")"}, nil
	}

	start := time.Now()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(root, "gzip-"+ver+".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	dl, src := filepath.Join(work, "dl"), filepath.Join(work, "src")
	if err := os.Mkdir(dl, 0o755); err != nil {
		return nil, err
	}
	progress("gzip from its Debian source: apt-get source gzip (%s)", ver)
	if _, err := runIn(dl, apt("--download-only", "source", "gzip")...); err != nil {
		return nil, err
	}
	patched, err := unpack(dl, src, ver)
	if err != nil {
		return nil, err
	}
	// Debian's rules run autoreconf; without autotools here, the patched
	// sources (configure.ac, gzip.texi) must not look newer than what is
	// generated from them, or make runs the missing aclocal and fails.
	if err := ageLikeTarball(src, patched); err != nil {
		return nil, err
	}
	progress("gzip from its Debian source: ./configure CFLAGS='-g -O2' && make -j2")
	if _, err := runIn(src, "./configure", "CFLAGS=-g -O2"); err != nil {
		return nil, err
	}
	if _, err := runIn(src, "make", "-j2"); err != nil {
		return nil, err
	}
	built := filepath.Join(src, "gzip")
	if err := hasDebugInfo(built); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Renamed into place whole: a run cut short leaves no half binary.
	if err := os.Rename(built, bin); err != nil {
		return nil, err
	}
	return &srcGzip{bin: bin, version: ver, note: fmt.Sprintf("built in %.0f s, kept in %s", time.Since(start).Seconds(), dir)}, nil
}

// privateApt writes deb-src sources derived from /etc/apt into dir and
// returns a function giving apt-get's command line with that private
// state (lists and caches too, so the system's are not touched).
func privateApt(dir string) (func(args ...string) []string, error) {
	parts := filepath.Join(dir, "parts")
	os.RemoveAll(parts) // derived again each run, as /etc/apt is now
	for _, d := range []string{parts, filepath.Join(dir, "lists", "partial"), filepath.Join(dir, "cache", "archives", "partial")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	n := 0
	list := func(from, to string) error {
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		var b strings.Builder
		for _, l := range strings.Split(string(data), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "deb" {
				l = "deb-src" + strings.TrimPrefix(strings.TrimSpace(l), "deb")
				n++
			}
			b.WriteString(l + "\n")
		}
		return os.WriteFile(to, []byte(b.String()), 0o644)
	}
	// One-line style: /etc/apt/sources.list and sources.list.d/*.list.
	srcList := filepath.Join(dir, "sources.list")
	if _, err := os.Stat("/etc/apt/sources.list"); err == nil {
		if err := list("/etc/apt/sources.list", srcList); err != nil {
			return nil, err
		}
	} else if err := os.WriteFile(srcList, nil, 0o644); err != nil {
		return nil, err
	}
	lists, _ := filepath.Glob("/etc/apt/sources.list.d/*.list")
	for _, f := range lists {
		if err := list(f, filepath.Join(parts, filepath.Base(f))); err != nil {
			return nil, err
		}
	}
	// deb822 style: every stanza's Types becomes deb-src alone.
	stanzas, _ := filepath.Glob("/etc/apt/sources.list.d/*.sources")
	for _, f := range stanzas {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		for _, l := range strings.Split(string(data), "\n") {
			if k, _, ok := strings.Cut(l, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Types") && !strings.HasPrefix(l, " ") {
				l = "Types: deb-src"
				n++
			}
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(filepath.Join(parts, filepath.Base(f)), []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("no deb line in /etc/apt/sources.list nor Types in /etc/apt/sources.list.d/*.sources: no source to derive deb-src from")
	}
	opts := []string{"-q",
		"-o", "Dir::Etc::SourceList=" + srcList,
		"-o", "Dir::Etc::SourceParts=" + parts,
		"-o", "Dir::State::Lists=" + filepath.Join(dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
	}
	if os.Geteuid() == 0 {
		// _apt cannot reach root's cache directory.
		opts = append(opts, "-o", "APT::Sandbox::User=root")
	}
	return func(args ...string) []string {
		return append(append([]string{"apt-get"}, opts...), args...)
	}, nil
}

// unpack extracts the source package in dl into src, with Debian's
// patches applied, and returns the files the patches change.
func unpack(dl, src, ver string) ([]string, error) {
	if _, err := exec.LookPath("dpkg-source"); err == nil {
		if _, err := runIn(dl, "dpkg-source", "-x", "gzip_"+ver+".dsc", src); err != nil {
			return nil, err
		}
		return patchedFiles(src, false)
	}
	// No dpkg-dev: what dpkg-source does for a 3.0 (quilt) package.
	orig, _ := filepath.Glob(filepath.Join(dl, "gzip_*.orig.tar.*"))
	deb, _ := filepath.Glob(filepath.Join(dl, "gzip_"+ver+".debian.tar.*"))
	orig = slicesWithout(orig, ".asc")
	if len(orig) != 1 || len(deb) != 1 {
		return nil, fmt.Errorf("dpkg-source is not installed (make deps installs dpkg-dev), and %s holds no single orig and debian tarball: %v %v", dl, orig, deb)
	}
	if err := os.Mkdir(src, 0o755); err != nil {
		return nil, err
	}
	if _, err := runIn(src, "tar", "-xf", orig[0], "--strip-components=1"); err != nil {
		return nil, err
	}
	if _, err := runIn(src, "tar", "-xf", deb[0]); err != nil {
		return nil, err
	}
	return patchedFiles(src, true)
}

func slicesWithout(paths []string, suffix string) []string {
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, suffix) {
			out = append(out, p)
		}
	}
	return out
}

// patchedFiles reads debian/patches/series and returns the files the
// patches change; with apply, it applies them first, in order.
func patchedFiles(src string, apply bool) ([]string, error) {
	series, err := os.ReadFile(filepath.Join(src, "debian", "patches", "series"))
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var files []string
	for _, l := range strings.Split(string(series), "\n") {
		l, _, _ = strings.Cut(l, "#")
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		strip := 1
		if len(f) > 1 && strings.HasPrefix(f[1], "-p") {
			if n, err := strconv.Atoi(f[1][2:]); err == nil {
				strip = n
			}
		}
		p := filepath.Join(src, "debian", "patches", f[0])
		if apply {
			if _, err := runIn(src, "patch", "-p"+strconv.Itoa(strip), "--no-backup-if-mismatch", "-i", p); err != nil {
				return nil, err
			}
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			name, ok := strings.CutPrefix(sc.Text(), "+++ ")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, "\t")
			parts := strings.Split(strings.TrimSpace(name), "/")
			if len(parts) > strip {
				files = append(files, filepath.Join(parts[strip:]...))
			}
		}
	}
	return files, nil
}

// ageLikeTarball gives the patched files the oldest time in the tree.
func ageLikeTarball(src string, patched []string) error {
	if len(patched) == 0 {
		return nil
	}
	var oldest time.Time
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() && (fi.Name() == "debian" || fi.Name() == ".pc") {
			return filepath.SkipDir
		}
		if fi.Mode().IsRegular() && (oldest.IsZero() || fi.ModTime().Before(oldest)) {
			oldest = fi.ModTime()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, f := range patched {
		if err := os.Chtimes(filepath.Join(src, f), oldest, oldest); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// cachedGzip is the newest build an earlier run kept, if any.
func cachedGzip(root string) *srcGzip {
	dirs, _ := filepath.Glob(filepath.Join(root, "gzip-*", "gzip"))
	var best *srcGzip
	var when time.Time
	for _, bin := range dirs {
		fi, err := os.Stat(bin)
		if err != nil || hasDebugInfo(bin) != nil {
			continue
		}
		if best == nil || fi.ModTime().After(when) {
			best = &srcGzip{bin: bin, version: strings.TrimPrefix(filepath.Base(filepath.Dir(bin)), "gzip-")}
			when = fi.ModTime()
		}
	}
	return best
}

// hasDebugInfo checks that bin is an ELF file with DWARF (.debug_info).
func hasDebugInfo(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Section(".debug_info") == nil {
		return fmt.Errorf("%s has no .debug_info section: not built with -g", bin)
	}
	return nil
}

// runIn runs argv in dir; an error names the command on its first line
// (apt-get's -o options aside) and ends with the end of its output.
func runIn(dir string, argv ...string) ([]byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		var short []string
		for i := 0; i < len(argv); i++ {
			switch argv[i] {
			case "-o":
				i++
			case "-q":
			default:
				short = append(short, argv[i])
			}
		}
		return out, fmt.Errorf("'%s' failed: %v\n(in %s: %s)\n%s", strings.Join(short, " "), err, dir, strings.Join(argv, " "), tail(string(out), 20))
	}
	return out, nil
}
