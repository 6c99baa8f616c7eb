package fred

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"
)

// ErrDebuggerExited means the debugger's pty closed: the debugger is gone.
var ErrDebuggerExited = errors.New("the debugger exited")

// TimeoutError is a wait for the debugger's prompt that passed its deadline.
type TimeoutError struct {
	Cmd     string
	Waited  time.Duration
	Partial string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no prompt from the debugger %.1f s after %q", e.Waited.Seconds(), e.Cmd)
}

// conn talks to a debugger on a pty master: one reader goroutine fills a
// buffer; waits look for the prompt marker in it.
type conn struct {
	w      io.Writer
	marker []byte

	mu     sync.Mutex
	cond   *sync.Cond
	buf    bytes.Buffer
	closed bool
}

func newConn(master *os.File, marker string) *conn {
	c := &conn{w: master, marker: []byte(marker)}
	c.cond = sync.NewCond(&c.mu)
	go func() {
		b := make([]byte, 32*1024)
		for {
			n, err := master.Read(b)
			c.mu.Lock()
			c.buf.Write(b[:n])
			if err != nil {
				c.closed = true
			}
			c.cond.Broadcast()
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return c
}

// send writes one line to the debugger.
func (c *conn) send(line string) error {
	_, err := io.WriteString(c.w, line+"\n")
	return err
}

// sendRaw writes bytes as typed (program input, Ctrl-C).
func (c *conn) sendRaw(b []byte) error {
	_, err := c.w.Write(b)
	return err
}

// waitPrompt collects output until the prompt marker (or, if re is set, until
// output ends with a match of re), copying it to sink as it arrives unless
// sink is nil. It returns the output without the marker. skipEcho drops the
// first line, the terminal's echo of the command. A zero deadline waits
// until cancel is closed or the debugger exits.
func (c *conn) waitPrompt(cmd string, deadline time.Time, sink io.Writer, skipEcho bool, re *regexp.Regexp, cancel <-chan struct{}) (string, error) {
	var out bytes.Buffer
	start := time.Now()
	var timer *time.Timer
	if !deadline.IsZero() {
		timer = time.AfterFunc(time.Until(deadline), func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
		defer timer.Stop()
	}
	if cancel != nil {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			select {
			case <-cancel:
				c.mu.Lock()
				c.cond.Broadcast()
				c.mu.Unlock()
			case <-stop:
			}
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	echoDone := !skipEcho
	for {
		data := c.buf.Bytes()
		if !echoDone {
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				c.buf.Next(i + 1)
				echoDone = true
				continue
			}
		} else if len(data) > 0 {
			if re == nil {
				if i := bytes.Index(data, c.marker); i >= 0 {
					c.emit(&out, sink, data[:i])
					c.buf.Next(i + len(c.marker))
					return out.String(), nil
				}
				// Hold back what could be the start of a marker.
				keep := partialSuffix(data, c.marker)
				c.emit(&out, sink, data[:len(data)-keep])
				c.buf.Next(len(data) - keep)
			} else if loc := re.FindIndex(data); loc != nil && loc[1] == len(data) {
				c.emit(&out, sink, data[:loc[0]])
				c.buf.Reset()
				return out.String(), nil
			}
		}
		if c.closed {
			if re != nil {
				c.emit(&out, sink, c.buf.Bytes())
				c.buf.Reset()
			}
			return out.String(), ErrDebuggerExited
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return out.String(), &TimeoutError{Cmd: cmd, Waited: time.Since(start), Partial: out.String()}
		}
		if cancel != nil {
			select {
			case <-cancel:
				return out.String(), ErrInterrupted
			default:
			}
		}
		c.cond.Wait()
	}
}

func (c *conn) emit(out *bytes.Buffer, sink io.Writer, b []byte) {
	if len(b) == 0 {
		return
	}
	out.Write(b)
	if sink != nil {
		c.mu.Unlock()
		sink.Write(b)
		c.mu.Lock()
	}
}

// partialSuffix is the length of the longest suffix of data that is a proper
// prefix of marker.
func partialSuffix(data, marker []byte) int {
	n := len(marker) - 1
	if n > len(data) {
		n = len(data)
	}
	for ; n > 0; n-- {
		if bytes.HasSuffix(data, marker[:n]) {
			return n
		}
	}
	return 0
}
