package conn

import (
	"bufio"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// A debugger stand-in on a real pty: what fred sends arrives on the
// slave; what the stand-in writes there, with the marker as its prompt,
// comes back as one answer per command.
func TestWaitPrompt(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	done := make(chan struct{})
	c := New(master, "<<M>>", done)
	lines := bufio.NewReader(slave)
	answer := func(parts ...string) {
		for _, p := range parts {
			if _, err := slave.WriteString(p); err != nil {
				t.Error(err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	if err := c.Send("print 1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := lines.ReadString('\n'); !strings.HasPrefix(l, "print 1") {
		t.Fatalf("the stand-in read %q", l)
	}
	// The terminal echoes the line (skipped); then the answer comes, with
	// the marker cut in two.
	go answer("$1 = 1\n<<", "M>>")
	var sink strings.Builder
	out, err := c.WaitPrompt("print 1", time.Now().Add(5*time.Second), &sink, true, nil)
	if err != nil || out != "$1 = 1\r\n" || sink.String() != out {
		t.Fatalf("answer %q, sink %q, %v", out, sink.String(), err)
	}
	// Nothing comes: the deadline passes, and says what came so far.
	go answer("partial")
	_, err = c.WaitPrompt("next", time.Now().Add(200*time.Millisecond), nil, false, nil)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Cmd != "next" || te.Partial != "partial" {
		t.Fatalf("no prompt: %v", err)
	}
	// The debugger goes: the wait ends with ErrDebuggerExited.
	close(done)
	if _, err := c.WaitPrompt("quit", time.Time{}, nil, false, nil); !errors.Is(err, ErrDebuggerExited) {
		t.Fatalf("after the debugger exited: %v", err)
	}
}

func TestPartialSuffix(t *testing.T) {
	m := []byte("<<M>>")
	for _, c := range []struct {
		data string
		want int
	}{{"abc<<", 2}, {"abc<<M>", 4}, {"abc", 0}, {"<", 1}, {"", 0}} {
		if got := partialSuffix([]byte(c.data), m); got != c.want {
			t.Errorf("partialSuffix(%q) = %d, want %d", c.data, got, c.want)
		}
	}
}
