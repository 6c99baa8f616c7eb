package ckpt

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A program's connections to other processes, so that fred can say which
// of them going back closed: one the program accepted or made after the
// moment fred went back to is gone with the program fred went back from,
// unless a snapshot keeps it.

// Conn is one connected socket of a program: a unix stream socket or an
// established TCP connection.
type Conn struct {
	Fd   int
	Ino  uint64 // the socket's, as ExtSocket.Ino
	Desc string // "fd 5, a unix stream socket on /run/x.sock"
}

// Connections lists pid's connections by descriptor.
func Connections(pid int) map[int]Conn {
	out := map[int]Conn{}
	var socks map[string]string // read once there is a socket
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
		if err != nil || !strings.HasPrefix(l, "socket:[") {
			continue
		}
		if socks == nil {
			socks = liveSockets(pid)
		}
		ino := strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")
		d, ok := socks[ino]
		if !ok {
			continue
		}
		fd, _ := strconv.Atoi(e.Name())
		n, _ := strconv.ParseUint(ino, 10, 64)
		out[fd] = Conn{Fd: fd, Ino: n, Desc: "fd " + e.Name() + ", " + d}
	}
	return out
}

// OpenSockets is every socket of pid's network namespace that a process
// (or fred, for a snapshot) still has, by inode: one not among them is
// closed, and its other end sees the end of the file.
func OpenSockets(pid int) map[uint64]bool {
	out := map[uint64]bool{}
	for _, f := range []string{"unix", "tcp", "tcp6"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		col := 9
		if f == "unix" {
			col = 6
		}
		for _, l := range strings.Split(string(b), "\n")[1:] {
			if fl := strings.Fields(l); len(fl) > col {
				if n, err := strconv.ParseUint(fl[col], 10, 64); err == nil {
					out[n] = true
				}
			}
		}
	}
	return out
}

// liveSockets describes the connected sockets of pid's network namespace
// by inode: unix stream sockets in state connected, TCP connections
// established.
func liveSockets(pid int) map[string]string {
	out := map[string]string{}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/unix", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n")[1:] {
			// Num RefCount Protocol Flags Type St Inode [Path]
			fl := strings.Fields(l)
			if len(fl) < 7 || fl[4] != "0001" || fl[5] != "03" {
				continue
			}
			d := "a unix stream socket"
			if len(fl) >= 8 {
				// the path, spaces and all (@: an abstract name)
				d += " on " + strings.Join(fl[7:], " ")
			}
			out[fl[6]] = d
		}
	}
	for _, c := range tcpEstablished(pid) {
		out[c.ino] = fmt.Sprintf("a TCP connection from %s to %s", hexAddr(c.local), hexAddr(c.remote))
	}
	return out
}

// SocketHolders is every process that has the socket ino open, with the
// descriptor it has it at.
func SocketHolders(ino uint64) map[int]int {
	out := map[int]int{}
	want := fmt.Sprintf("socket:[%d]", ino)
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, e := range fds {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && l == want {
				out[pid], _ = strconv.Atoi(e.Name())
				break
			}
		}
	}
	return out
}

// PeerGone reports whether the other end of the connection process pid
// has at fd has hung up: a unix stream socket stays "connected" in
// /proc/net/unix after its peer closed, and nobody waits on it then. (A
// peer that only shut down its sending side, POLLRDHUP, may still wait
// for an answer.)
func PeerGone(pid, fd int) bool {
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(pfd)
	nfd, err := unix.PidfdGetfd(pfd, fd, 0)
	if err != nil {
		return false
	}
	defer unix.Close(nfd)
	p := []unix.PollFd{{Fd: int32(nfd), Events: unix.POLLRDHUP}}
	if n, err := unix.Poll(p, 0); err != nil || n == 0 {
		return false
	}
	return p[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
}
