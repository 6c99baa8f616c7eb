package ckpt

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// CRIU's dump log names the unix sockets it dumps, by descriptor:
//
//	unix: Dumping unix socket at 3
//	unix: 	Dumping: ino 22646857 peer_ino 22646605 family    1 type    1 state  1 name null
//
// and refuses one whose peer is outside the dump with "External socket is
// used", without saying which. externalSockets says which, and who holds
// the other end.
var (
	unixAt   = regexp.MustCompile(`unix: Dumping unix socket at (\d+)`)
	unixDump = regexp.MustCompile(`unix: \s*Dumping: ino (\d+) peer_ino (\d+) family\s+\d+ type\s+(\d+) state\s+\d+ name (\S+)`)
	unixPeer = regexp.MustCompile(`unix: \s*Add a peer: ino (\d+) .* name (\S+)`)
)

var unixTypes = map[string]string{"1": "stream", "2": "datagram", "5": "seqpacket"}

// externalSockets describes the unix sockets of pid, dumped in the log at
// path, whose peer is not pid's: "fd 3, a unix stream socket connected to
// /run/x.sock (the other end: pid 812, python3)". "" if none is found.
func externalSockets(path string, pid int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	own := map[string]bool{}
	if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		for _, e := range fds {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil {
				own[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	type sock struct{ fd, peer, kind string }
	var socks []sock
	names := map[string]string{} // a peer's bound name
	fd := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if m := unixAt.FindStringSubmatch(l); m != nil {
			fd = m[1]
		} else if m := unixDump.FindStringSubmatch(l); m != nil && fd != "" {
			if m[2] != "0" && !own[m[2]] {
				socks = append(socks, sock{fd: fd, peer: m[2], kind: unixTypes[m[3]]})
			}
			fd = ""
		} else if m := unixPeer.FindStringSubmatch(l); m != nil && m[2] != "null" {
			names[m[1]] = m[2]
		}
	}
	var out []string
	for _, s := range socks {
		d := fmt.Sprintf("fd %s, a unix %s socket", s.fd, s.kind)
		if n := names[s.peer]; n != "" {
			d += " connected to " + n
		}
		if p, comm := socketHolder(s.peer, pid); p > 0 {
			d += fmt.Sprintf(" (the other end: pid %d, %s)", p, comm)
		} else {
			d += " (its other end is outside the program)"
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// socketHolder finds a process other than not that has socket inode ino
// open.
func socketHolder(ino string, not int) (int, string) {
	want := "socket:[" + ino + "]"
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == not {
			continue
		}
		fds, err := os.ReadDir(p + "/fd")
		if err != nil {
			continue
		}
		for _, e := range fds {
			if l, err := os.Readlink(p + "/fd/" + e.Name()); err == nil && l == want {
				comm, _ := os.ReadFile(p + "/comm")
				return pid, strings.TrimSpace(string(comm))
			}
		}
	}
	return 0, ""
}
