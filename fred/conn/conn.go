// Package conn talks to a debugger on a pty master: it sends lines and
// waits for the prompt, which fred makes unique (a marker), so that the
// debugger's answer to each command is known exactly where it ends.
package conn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
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

// Conn talks to a debugger on a pty master: one reader goroutine fills a
// buffer; waits look for the prompt marker in it.
type Conn struct {
	w      io.Writer
	marker []byte

	trace *os.File

	mu     sync.Mutex
	cond   *sync.Cond
	buf    bytes.Buffer
	closed bool
}

// New reads the debugger's output from master until done is closed (the
// debugger exited); marker is the prompt.
func New(master *os.File, marker string, done <-chan struct{}) *Conn {
	c := &Conn{w: master, marker: []byte(marker)}
	c.cond = sync.NewCond(&c.mu)
	// FRED_TRACE=FILE logs the raw traffic with the debugger, for debugging fred.
	if path := os.Getenv("FRED_TRACE"); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			c.trace = f
			c.w = io.MultiWriter(master, traceWriter{f, ">> "})
		}
	}
	// fred keeps the pty's slave open for programs it restores, so the
	// master never reads EOF: the debugger's exit is what closes the conn,
	// once its last output has had a moment to arrive.
	go func() {
		<-done
		time.Sleep(100 * time.Millisecond)
		c.mu.Lock()
		c.closed = true
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	go func() {
		b := make([]byte, 32*1024)
		for {
			n, err := master.Read(b)
			if c.trace != nil {
				fmt.Fprintf(c.trace, "%s << %q\n", time.Now().Format("15:04:05.000"), b[:n])
			}
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

// Send writes one line to the debugger.
func (c *Conn) Send(line string) error {
	_, err := io.WriteString(c.w, line+"\n")
	return err
}

// SendRaw writes bytes as typed (program input, Ctrl-C).
func (c *Conn) SendRaw(b []byte) error {
	_, err := c.w.Write(b)
	return err
}

// WaitPrompt collects output until the prompt marker (or, if re is set, until
// output ends with a match of re), copying it to sink as it arrives unless
// sink is nil. It returns the output without the marker. skipEcho drops the
// first line, the terminal's echo of the command. A zero deadline waits
// until the debugger answers or exits (a command of the person's, which
// Ctrl-C interrupts in the debugger).
func (c *Conn) WaitPrompt(cmd string, deadline time.Time, sink io.Writer, skipEcho bool, re Prompt) (string, error) {
	return c.wait(cmd, deadline, sink, skipEcho, re, nil)
}

// WaitPromptUnless is WaitPrompt for a command whose answer stops
// mattering when giveUp says so (looked at every giveUpEvery): it then
// ends as at its deadline, with a TimeoutError.
func (c *Conn) WaitPromptUnless(cmd string, deadline time.Time, giveUp func() bool) (string, error) {
	return c.wait(cmd, deadline, nil, true, nil, giveUp)
}

const giveUpEvery = 100 * time.Millisecond

// Prompt matches a debugger's prompt where fred cannot make it the marker
// (a personality's pattern).
type Prompt interface {
	FindStringIndex(s string) []int
}

func (c *Conn) wait(cmd string, deadline time.Time, sink io.Writer, skipEcho bool, re Prompt, giveUp func() bool) (string, error) {
	var out bytes.Buffer
	start := time.Now()
	var timer *time.Timer
	if !deadline.IsZero() {
		timer = time.AfterFunc(time.Until(deadline), func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
		defer timer.Stop()
	}
	if giveUp != nil {
		tick := time.NewTicker(giveUpEvery)
		done := make(chan struct{})
		defer func() { tick.Stop(); close(done) }()
		go func() {
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					c.mu.Lock()
					c.cond.Broadcast()
					c.mu.Unlock()
				}
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
				if n := len(data) - keep; n > 0 {
					c.emit(&out, sink, data[:n])
					c.buf.Next(n)
					// emit unlocks while writing: look again before waiting.
					continue
				}
			} else if loc := re.FindStringIndex(string(data)); loc != nil && loc[1] == len(data) {
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
		if (!deadline.IsZero() && !time.Now().Before(deadline)) || (giveUp != nil && giveUp()) {
			return out.String(), &TimeoutError{Cmd: cmd, Waited: time.Since(start), Partial: out.String()}
		}
		c.cond.Wait()
	}
}

func (c *Conn) emit(out *bytes.Buffer, sink io.Writer, b []byte) {
	if len(b) == 0 {
		return
	}
	out.Write(b)
	if sink != nil {
		// The reader may slide the buffer while unlocked: write a copy.
		b = append([]byte(nil), b...)
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

type traceWriter struct {
	f      *os.File
	prefix string
}

func (t traceWriter) Write(b []byte) (int, error) {
	fmt.Fprintf(t.f, "%s %s%q\n", time.Now().Format("15:04:05.000"), t.prefix, b)
	return len(b), nil
}
