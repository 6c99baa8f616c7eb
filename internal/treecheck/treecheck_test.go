package treecheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fred-debugger/fred/internal/testutil"
)

var (
	// a scheme, a colon and two slashes: any URL
	urlRe = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>()\[\]` + "`" + `]+`)
	// A host name, in lower case, with at least three labels (a mirror's
	// name), or two followed by a path; two alone are too often a struct
	// field (id.dev).
	hostRe = regexp.MustCompile(`\b(?:[a-z0-9-]+\.){2,}(?:org|com|net|io|dev|edu|gov|info|me|co)\b|\b[a-z0-9-]+\.(?:org|com|net|io|dev|edu|gov|info|me|co)/`)
	ipv4Re = regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b`)
)

// Names that look like addresses and are not: XML namespace names.
var namespaces = []string{"www.w3.org/2000/svg", "www.w3.org/1999/xlink", "www.w3.org/XML/1998/namespace"}

// moduleHosts are the first elements of the module paths in go.sum:
// github.com/creack/pty is an import path, a name, not an address to reach.
func moduleHosts(t *testing.T, root string) map[string]bool {
	b, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			host, _, _ := strings.Cut(f[0], "/")
			hosts[strings.ToLower(host)] = true
		}
	}
	return hosts
}

// problems returns what a line names that it should not.
func problems(line, checkout string, hosts map[string]bool) []string {
	var bad []string
	ok := func(s string) bool {
		for _, ns := range namespaces {
			if strings.Contains(s, ns) {
				return true
			}
		}
		return false
	}
	for _, u := range urlRe.FindAllString(line, -1) {
		if !ok(u) {
			bad = append(bad, "network address "+u)
		}
	}
	for _, loc := range hostRe.FindAllStringIndex(line, -1) {
		h := strings.TrimSuffix(line[loc[0]:loc[1]], "/")
		if ok(line[loc[0]:]) || hosts[strings.ToLower(h)] || strings.Contains(line[max(0, loc[0]-3):loc[0]], "://") {
			continue // a namespace, a module path, or inside a URL already named
		}
		bad = append(bad, "host name "+h)
	}
	for _, ip := range ipv4Re.FindAllString(line, -1) {
		if !strings.HasPrefix(ip, "127.") && ip != "0.0.0.0" {
			bad = append(bad, "IP address "+ip)
		}
	}
	if checkout != "" && strings.Contains(line, checkout) {
		bad = append(bad, "this checkout's own path "+checkout)
	}
	return bad
}

// TestTreeNamesNoAddressOrCheckoutPath searches every tracked file for a
// network address (a URL, a host name, an IP address other than loopback)
// and for an absolute path under the checkout's own directory.
func TestTreeNamesNoAddressOrCheckoutPath(t *testing.T) {
	testutil.Require(t, "git")
	root, err := filepath.Abs(testutil.Root())
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v (the test reads the tracked files of a git checkout)", root, err)
	}
	hosts := moduleHosts(t, root)
	n := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		n++
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 4<<20)
		for i := 1; sc.Scan(); i++ {
			for _, p := range problems(sc.Text(), root, hosts) {
				t.Errorf("%s:%d names a %s", name, i, p)
			}
		}
	}
	if n < 50 {
		t.Fatalf("read only %d tracked text files in %s: not the repository?", n, root)
	}
}

// TestProblems checks the search on lines it must and must not flag.
func TestProblems(t *testing.T) {
	const sep = ":" + "//"
	hosts := map[string]bool{"github.com": true, "golang.org": true}
	for _, c := range []struct {
		line string
		bad  int
	}{
		// Built from pieces, so that this file names no address itself.
		{`echo "deb [arch=amd64] http` + sep + `deb.example` + `.org/debian trixie main"`, 1},
		{`: "${FRED_GO_URL:=https` + sep + `proxy.example` + `.net/x.zip}"`, 1},
		{"   (`proxy.golang" + ".org/golang.org/toolchain/@v/v0.0.1-go1.26.8.linux-amd64.zip`)", 1},
		{"connect to 10.1." + "2.3 port 80", 1},
		{`Breakpoint 1 at /home/u/fred/personalities/testdata/gdbfix.c, line 23.`, 1},
		{`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">`, 0},
		{`import "github.com/creack/pty"`, 0},
		{`golang.org/x/sys v0.25.0 h1:abc=`, 0},
		{`listen on 127.0.0.1:0`, 0},
		{`if (a.st_dev == id.dev && x.com)`, 0},
		{`e.File.Dev != f.Sys.Dev`, 0},
		{`version 1.24.4-1`, 0},
	} {
		if got := problems(c.line, "/home/u/fred", hosts); len(got) != c.bad {
			t.Errorf("%q: got %q, want %d problems", c.line, got, c.bad)
		}
	}
}
