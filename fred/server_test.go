package fred

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServerWithClients (issue 16): a multi-threaded server (epoll, a
// worker thread handed each request through a condition variable, a
// timerfd) with a client outside fred connected. At each stop the main
// thread waits in epoll_wait and another in a read of the timerfd: after
// a restore those calls return, and must take their logged answers. A snapshot with the
// client connected; going back across requests gives the values as
// recorded, sends nothing again, and the client gets every answer once,
// in order, as in one forward run; past the recording the server goes on
// answering on the same connection.
func TestServerWithClients(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	ts := gdbSession(t, "epoll_server", "auto")
	request := fmt.Sprintf("epoll_server.c:%d", fixtureLineOf(t, "epoll_server.c", "request"))
	ts.must("break "+request, `Breakpoint 1`)

	answers := make(chan string, 8)
	next := make(chan string, 8) // what the client sends after its last answer
	go func() {
		defer close(answers)
		var c net.Conn
		for i := 0; i < 300 && c == nil; i++ {
			if _, err := os.Stat(path); err == nil {
				c, _ = net.Dial("unix", path)
			}
			if c == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if c == nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for line := range next {
			fmt.Fprintln(c, line)
			if line == "quit" {
				return
			}
			a, err := r.ReadString('\n')
			if err != nil {
				answers <- "error: " + err.Error()
				return
			}
			answers <- strings.TrimSpace(a)
		}
	}()
	send := func(line string) { next <- line }
	answer := func(want string) {
		t.Helper()
		select {
		case a := <-answers:
			if a != want {
				t.Fatalf("the client got %q; one forward run answers %q", a, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the client got no answer; one forward run answers %q", want)
		}
	}
	at := ts.valueAt(request, "100*served+job_i")
	send("req 0")
	at("run "+path, "0")
	ts.must("fred-checkpoint", `snapshot \d+ taken`)
	send("req 1")
	at("continue", "101")
	answer("ans 0")
	send("req 2")
	at("continue", "202")
	answer("ans 101")
	at("fred-reverse-continue", "101")
	at("fred-reverse-continue", "0")
	at("continue", "101")
	at("continue", "202")
	// Past the recording: the same connection, its fourth request.
	send("req 3")
	at("continue", "303")
	answer("ans 202")
	ts.must("delete", ``)
	send("quit")
	ts.must("continue", `served 4(?s).*exited normally`)
	answer("ans 303")
	select {
	case a, ok := <-answers:
		if ok {
			t.Fatalf("the client got %q more", a)
		}
	case <-time.After(10 * time.Second):
	}
}

// TestServerAcceptAcrossSnapshot (issue 16): a thread per connection
// (accept_server), the main thread waiting in a blocking accept between
// clients, which is where a snapshot finds it. After a restore, that
// accept gives the client it accepted the first time (from the log)
// instead of waiting for a new one: going back across clients gives the
// values as recorded, and the clients answered before get their answers
// once. A client accepted after the snapshot whose answer was still to
// come is gone with the program fred went back from: it reads the end of
// the file. Past the recording the server accepts a new client.
func TestServerAcceptAcrossSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	ts := gdbSession(t, "accept_server", "auto")
	request := fmt.Sprintf("accept_server.c:%d", fixtureLineOf(t, "accept_server.c", "request"))
	ts.must("break "+request, `Breakpoint 1`)

	clients := newOneShotClients(t, path)
	ask, answer := clients.ask, clients.answer
	at := ts.valueAt(request, "served")
	ask(0, 0)
	at("run "+path+" 4", "0")
	// The main thread is in accept, waiting for the next client.
	ts.must("fred-checkpoint", `snapshot \d+ taken`)
	ask(1, 0)
	at("continue", "1")
	answer("ans 0 req 0")
	ask(2, 0)
	at("continue", "2")
	answer("ans 1 req 1")
	// A snapshot with client 2's connection, its answer still to come.
	snap := regexp.MustCompile(`snapshot (\d+) taken`).FindStringSubmatch(ts.must("fred-checkpoint", `snapshot \d+ taken`))[1]
	out := at("fred-reverse-continue", "1")
	// Client 2's connection went with the program; the snapshot that
	// kept it lets go of it, so that the client is not left waiting.
	answer("error: EOF")
	if !regexp.MustCompile(`fred: fd \d+, a unix stream socket on .*sock, is closed: it was the program's at the moment you went back from, not at this one, and its other end reads the end of the file \(snapshot ` + snap + ` kept it: fred let go of it there\)`).MatchString(out) {
		t.Errorf("fred did not say which connection going back closed:\n%s", out)
	}
	at("fred-reverse-continue", "0")
	at("continue", "1")
	at("continue", "2")
	ts.must("delete", ``)
	ask(3, 0)
	ts.must("continue", `served 4(?s).*exited normally`)
	answer("ans 3 req 3")
	clients.none()
}

// TestServerConnectionKeptByACopy (issue 16): one thread (serial_server),
// so fred's snapshots are paused fork copies, and a copy keeps the
// connections the program had. Going back to before a client was
// accepted, the automatic snapshot of the later moment that kept its
// connection is dropped: the client reads the end of the file instead of
// waiting for an answer nobody will send. A copy the person took keeps it
// (fred says so), and going there again answers the client.
func TestServerConnectionKeptByACopy(t *testing.T) {
	t.Run("auto", func(t *testing.T) { testServerConnectionKeptByACopy(t, false) })
	t.Run("yours", func(t *testing.T) { testServerConnectionKeptByACopy(t, true) })
}

func testServerConnectionKeptByACopy(t *testing.T, yours bool) {
	path := filepath.Join(t.TempDir(), "sock")
	ts := gdbSession(t, "serial_server", "auto")
	request := fmt.Sprintf("serial_server.c:%d", fixtureLineOf(t, "serial_server.c", "request"))
	ts.must("break "+request, `Breakpoint 1`)

	clients := newOneShotClients(t, path)
	ask, answer := clients.ask, clients.answer
	at := ts.valueAt(request, "served")
	ask(0, 0)
	at("run "+path+" 2", "0")
	// The second client comes after 2.5 s of running: fred takes an
	// automatic snapshot (a fork copy) at its stop, with its connection.
	ask(1, 2500*time.Millisecond)
	at("continue", "1")
	answer("ans 1")
	if list := ts.must("fred-list", `taken after`); !regexp.MustCompile(`(?m)^\s+2\s+.*auto\s+a paused copy`).MatchString(list) {
		t.Fatalf("no automatic fork copy at the second client's request:\n%s", list)
	}
	if yours {
		ts.must("fred-checkpoint", `snapshot 3 taken`)
		out := at("fred-reverse-continue", "0")
		// Client 0 hung up after its answer: only client 1 waits.
		if n := len(regexp.MustCompile(`fred: fd \d+, a unix stream socket on .*sock, stays open: it was the program's at the moment you went back from, and snapshot 3, a paused copy you took, has it; its other end stays connected to that copy \(fred-restart 3 goes there\)`).FindAllString(out, -1)); n != 1 || strings.Contains(out, "is closed") {
			t.Errorf("fred did not say once which connection a copy of the person's keeps:\n%s", out)
		}
		at("fred-restart 3", "1")
		ts.must("delete", ``)
		ts.must("continue", `served 2(?s).*exited normally`)
		answer("ans 2")
		return
	}
	out := at("fred-reverse-continue", "0")
	answer("error: EOF")
	// Client 0 hung up after its answer: only client 1's connection is
	// named.
	if n := len(regexp.MustCompile(`fred: fd \d+, a unix stream socket on .*sock, is closed: it was the program's at the moment you went back from, not at this one, and its other end reads the end of the file \(snapshot 2, a paused copy of the program, had it: fred dropped it\)`).FindAllString(out, -1)); n != 1 || strings.Count(out, "is closed") != 1 {
		t.Errorf("fred did not say once which connection going back closed:\n%s", out)
	}
	at("continue", "1")
	ts.must("delete", ``)
	ts.must("continue", `served 2(?s).*exited normally`)
	clients.none()
}

// TestServerConnectionKeptByAProbe (issue 16): the same under pdb, where a
// continue over the server's work leaves copies of the program as it runs
// (probes, whose history is not a prefix of the timeline's): those that
// have the connection of a client accepted after the moment fred goes
// back to are dropped too.
func TestServerConnectionKeptByAProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	ts, _ := pdbSessionArgs(t, "serial_server.py", "fork", path, "3")
	request := fixtureLineOf(t, "serial_server.py", "request")
	ts.must(fmt.Sprintf("break %d", request), `Breakpoint 1`)
	clients := newOneShotClients(t, path)
	ask, answer := clients.ask, clients.answer
	served := func(want string) {
		t.Helper()
		if v := ts.value("served"); v != want {
			t.Fatalf("served = %s, want %s", v, want)
		}
	}
	ask(0, 0)
	ts.must("continue", fmt.Sprintf(`serial_server.py\(%d\)`, request))
	served("0")
	ask(1, 500*time.Millisecond)
	ts.must("continue", fmt.Sprintf(`serial_server.py\(%d\)`, request))
	served("1")
	answer("ans 1")
	out := ts.must("fred-reverse-continue", fmt.Sprintf(`serial_server.py\(%d\)`, request))
	served("0")
	answer("error: EOF")
	if n := len(regexp.MustCompile(`fred: fd \d+, a unix stream socket on .*sock, is closed: it was the program's at the moment you went back from, not at this one, and its other end reads the end of the file \(snapshots? [\d, and]+, (a )?paused cop(y|ies) of the program, had it: fred dropped (it|them)\)`).FindAllString(out, -1)); n != 1 {
		t.Errorf("fred did not say once which connection going back closed:\n%s", out)
	}
	ts.must("continue", fmt.Sprintf(`serial_server.py\(%d\)`, request))
	served("1")
	// The replay unlinked the socket's path and bound it again: a client
	// that comes now gets there, and its answer past the recording.
	clients.askNow(2)
	ts.must("continue", fmt.Sprintf(`serial_server.py\(%d\)`, request))
	served("2")
	ts.must("continue", `served 3`)
	answer("ans 3")
}

// TestServerTCPBindReplayed (issue 16): a TCP server whose snapshot 1
// comes before its bind (pdb: the script's first line; gdb: the program's
// start) goes back across an accept: the replay's bind gets the socket
// the recorded run bound (the paused copies and the program fred went
// back from still have it, so the address is taken), the replayed accept
// gives the client's address, and once past its recording the server
// answers a client that came while the person was in the past.
func TestServerTCPBindReplayed(t *testing.T) {
	for _, c := range []struct {
		name  string
		start func(t *testing.T, arg string) (ts *tsession, at func(cmd, v string) string, peer string)
	}{
		{"gdb", func(t *testing.T, arg string) (*tsession, func(cmd, v string) string, string) {
			ts := gdbSession(t, "serial_server", "fork")
			request := fmt.Sprintf("serial_server.c:%d", fixtureLineOf(t, "serial_server.c", "request"))
			ts.must("break "+request, `Breakpoint 1`)
			ts.must("set args "+arg+" 3", ``)
			at := ts.valueAt(request, "served")
			return ts, func(cmd, v string) string {
				if cmd == "continue" && v == "0" {
					cmd = "run"
				}
				return at(cmd, v)
			}, ""
		}},
		{"pdb", func(t *testing.T, arg string) (*tsession, func(cmd, v string) string, string) {
			ts, _ := pdbSessionArgs(t, "serial_server.py", "fork", arg, "3")
			request := fixtureLineOf(t, "serial_server.py", "request")
			ts.must(fmt.Sprintf("break %d", request), `Breakpoint 1`)
			return ts, ts.valueAt(fmt.Sprintf(`serial_server.py\(%d\)`, request), "served"),
				"peer[0] == c.getpeername()[0] == peer2[0] == '127.0.0.1' and peer[1] > 0"
		}},
		{"perl", func(t *testing.T, arg string) (*tsession, func(cmd, v string) string, string) {
			ts, _ := perlSessionArgs(t, "serial_server.pl", "fork", arg, "3")
			request := fixtureLineOf(t, "serial_server.pl", "request")
			ts.must(fmt.Sprintf("b %d", request), ``)
			at := ts.valueAt(fmt.Sprintf(`serial_server.pl:%d\)`, request), "$served")
			return ts, func(cmd, v string) string {
				if cmd == "continue" {
					cmd = "c"
				}
				return at(cmd, v)
			}, `$peer eq $c->peerhost && $peer eq "127.0.0.1" ? "True" : "False"`
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr, port := l.Addr().String(), l.Addr().(*net.TCPAddr).Port
			l.Close()
			ts, at, peer := c.start(t, fmt.Sprintf("tcp:%d", port))
			clients := &oneShotClients{t: t, network: "tcp", addr: addr, answers: make(chan string, 8)}
			clients.ask(0, 0)
			at("continue", "0")
			clients.ask(1, 500*time.Millisecond)
			at("continue", "1")
			clients.answer("ans 1")
			at("fred-reverse-continue", "0")
			clients.answer("error: EOF") // client 1's connection went with the later copies
			at("continue", "1")
			// the replayed accept gives the client's address, as the first did
			if peer != "" {
				if v := ts.value(peer); v != "True" {
					t.Errorf("the replayed accept's client address: %s", v)
				}
			}
			clients.askNow(2) // while the program replays what it did
			at("continue", "2")
			ts.must(map[bool]string{true: "c", false: "continue"}[c.name == "perl"], `served 3`)
			clients.answer("ans 3")
		})
	}
}

// TestBoundClientReplayed (issue 16): a client that binds before it
// connects is not given the recorded socket by the replayed bind (it is
// connected already): the replay from the program's start binds and
// connects anew, and reads what the server answered from the log.
func TestBoundClientReplayed(t *testing.T) {
	addr, _ := tcpServer(t) // answers "req N" with "ans N"
	ts, _ := pdbSessionArgs(t, "bound_client.py", "fork", strings.TrimPrefix(addr, "tcp:"))
	at := fmt.Sprintf(`bound_client.py\(%d\)`, fixtureLineOf(t, "bound_client.py", "got"))
	ts.must(fmt.Sprintf("break %d", fixtureLineOf(t, "bound_client.py", "got")), `Breakpoint 1`)
	ts.must("continue", at)
	// a copy of the program that has the connected socket
	ts.must("fred-checkpoint", `snapshot \d+ taken`)
	ts.must("fred-restart 1", `bound_client.py\(1\)`)
	if out := ts.must("continue", at); strings.Contains(out, "Traceback") || strings.Contains(out, "left its recording") {
		t.Fatalf("the replay did not get there as recorded:\n%s", out)
	}
	if v := ts.value("got"); v != `b'ans 7'` {
		t.Errorf("got = %s in the replay, want b'ans 7'", v)
	}
}

// oneShotClients are clients of a server at addr (a unix socket's path,
// or a TCP address), each of which connects (once the server listens),
// sends one request, and reports the one line it gets back (or the error:
// "error: EOF" when the server's end is closed).
type oneShotClients struct {
	t             *testing.T
	network, addr string
	answers       chan string
}

func newOneShotClients(t *testing.T, path string) *oneShotClients {
	return &oneShotClients{t: t, network: "unix", addr: path, answers: make(chan string, 8)}
}

// ask starts client i after a while.
func (o *oneShotClients) ask(i int, after time.Duration) { o.dial(i, after, nil) }

// askNow starts client i now, and fails the test if it cannot connect
// (before the program is let run to wait for it in vain).
func (o *oneShotClients) askNow(i int) {
	o.t.Helper()
	ok := make(chan bool, 1)
	o.dial(i, 0, ok)
	if !<-ok {
		o.t.Fatalf("client %d could not connect to %s", i, o.addr)
	}
}

// dial starts client i after a while, telling ok whether it connected.
func (o *oneShotClients) dial(i int, after time.Duration, ok chan<- bool) {
	go func() {
		time.Sleep(after)
		var c net.Conn
		for j := 0; j < 300 && c == nil; j++ {
			c, _ = net.Dial(o.network, o.addr)
			if c == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if ok != nil {
			ok <- c != nil
		}
		if c == nil {
			o.answers <- "no connection"
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "req %d", i)
		// (one line: a snapshot that keeps the connection keeps it open
		// after the server closed it)
		b, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			o.answers <- "error: " + err.Error()
			return
		}
		o.answers <- strings.TrimSpace(b)
	}()
}

// answer waits for the next answer a client gets.
func (o *oneShotClients) answer(want string) {
	o.t.Helper()
	select {
	case a := <-o.answers:
		if a != want {
			o.t.Fatalf("a client got %q; want %q", a, want)
		}
	case <-time.After(30 * time.Second):
		o.t.Fatalf("no client got an answer; want %q", want)
	}
}

// none checks that no client gets anything more.
func (o *oneShotClients) none() {
	o.t.Helper()
	select {
	case a := <-o.answers:
		o.t.Fatalf("a client got %q more", a)
	case <-time.After(2 * time.Second):
	}
}
