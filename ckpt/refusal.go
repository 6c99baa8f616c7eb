package ckpt

import (
	"bufio"
	"fmt"
	"net"
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

var unixTypes = map[int]string{1: "stream", 2: "datagram", 5: "seqpacket"}

// ExtSocket is a unix socket of the program's whose other end is in
// another process. CRIU dumps it as external, and fred keeps the socket
// itself (pidfd_getfd: the same open file, still connected to the other
// process): a restore gives it back to the program (CRIU's inherit-fd),
// which goes on talking to that process once its replay is over, as a
// fork copy does. The other process sees nothing meanwhile. Where fred
// could not keep it (Held false), a restore gives the program one end of
// a fresh socketpair in its place and closes the other: the restored
// program reads the end of file there once its replay is over.
type ExtSocket struct {
	Fd   int
	Ino  uint64 // the program's own socket
	Type int    // SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET
	Desc string // "fd 3, a unix stream socket connected to ... (the other end: pid 812, python3)"
	Held bool   // fred keeps the socket for a restore
	held int    // fred's descriptor of it (close-on-exec), when Held
}

// describeSockets joins the sockets' descriptions.
func describeSockets(socks []ExtSocket) string {
	var out []string
	for _, s := range socks {
		out = append(out, s.Desc)
	}
	return strings.Join(out, "; ")
}

// externalSockets finds the unix sockets of pid, dumped in the log at
// path, whose peer is not pid's.
func externalSockets(path string, pid int) []ExtSocket {
	f, err := os.Open(path)
	if err != nil {
		return nil
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
	type sock struct {
		fd, ino, peer string
		typ           int
	}
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
				typ, _ := strconv.Atoi(m[3])
				socks = append(socks, sock{fd: fd, ino: m[1], peer: m[2], typ: typ})
			}
			fd = ""
		} else if m := unixPeer.FindStringSubmatch(l); m != nil && m[2] != "null" {
			names[m[1]] = m[2]
		}
	}
	var out []ExtSocket
	for _, s := range socks {
		d := fmt.Sprintf("fd %s, a unix %s socket", s.fd, unixTypes[s.typ])
		if n := names[s.peer]; n != "" {
			d += " connected to " + n
		}
		if p, comm := socketHolder(s.peer, pid); p > 0 {
			d += fmt.Sprintf(" (the other end: pid %d, %s)", p, comm)
		} else {
			d += " (its other end is outside the program)"
		}
		fd, _ := strconv.Atoi(s.fd)
		ino, _ := strconv.ParseUint(s.ino, 10, 64)
		out = append(out, ExtSocket{Fd: fd, Ino: ino, Type: s.typ, Desc: d})
	}
	return out
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

// tcpConnections describes the established TCP connections of pid:
// "fd 4, a TCP connection from 127.0.0.1:47176 to 127.0.0.1:47123 (the
// other end: pid 812, python3)". CRIU names none of them when it refuses.
func tcpConnections(pid int) string {
	all := tcpEstablished(pid)
	byIno := map[string]tcpConn{}
	for _, c := range all {
		byIno[c.ino] = c
	}
	var out []string
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil || !strings.HasPrefix(l, "socket:[") {
			continue
		}
		c, ok := byIno[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")]
		if !ok {
			continue
		}
		d := fmt.Sprintf("fd %s, a TCP connection from %s to %s", e.Name(), hexAddr(c.local), hexAddr(c.remote))
		for _, p := range all { // the other end, if it is on this machine
			if p.local == c.remote && p.remote == c.local {
				if holder, comm := socketHolder(p.ino, pid); holder > 0 {
					d += fmt.Sprintf(" (the other end: pid %d, %s)", holder, comm)
				}
			}
		}
		out = append(out, d)
	}
	return strings.Join(out, "; ")
}

// tcpConn is one established TCP connection of /proc/PID/net/tcp{,6}.
type tcpConn struct{ local, remote, ino string }

// tcpEstablished lists the established TCP connections of pid's network
// namespace.
func tcpEstablished(pid int) []tcpConn {
	var all []tcpConn
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			fl := strings.Fields(l)
			if len(fl) >= 10 && fl[3] == "01" { // ESTABLISHED
				all = append(all, tcpConn{fl[1], fl[2], fl[9]})
			}
		}
	}
	return all
}

// hexAddr reads /proc/net/tcp's "0100007F:B833" (IPv4) or its 32-digit
// IPv6 form as "127.0.0.1:47155".
func hexAddr(s string) string {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || len(h)%8 != 0 {
		return s
	}
	var ip net.IP
	for i := 0; i < len(h); i += 8 {
		w, err := strconv.ParseUint(h[i:i+8], 16, 32)
		if err != nil {
			return s
		}
		// each 32-bit word is in the machine's (little-endian) order
		ip = append(ip, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10))
}

// ioUring names the program's io_uring instances: CRIU cannot dump one
// (it fails on their mappings: "Can't open ...'s mapfile link").
func ioUring(pid int) string {
	var fds []string
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range ents {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && l == "anon_inode:[io_uring]" {
			fds = append(fds, e.Name())
		}
	}
	if len(fds) == 0 {
		return ""
	}
	return "the program uses io_uring (fd " + strings.Join(fds, ", ") + "), which CRIU cannot dump; " +
		"a program that can do without it can be snapshotted (mariadbd: --innodb-use-native-aio=0)"
}
