package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A profile splits the wall time of one fred command into what fred asked
// gdb to do and what fred did itself between gdb's answers (CRIU, waiting
// for processes), from the timestamped trace.
type profile struct {
	total time.Duration
	parts map[string]*part
}

type part struct {
	n int
	d time.Duration
}

func (p *profile) add(name string, d time.Duration) {
	if p.parts == nil {
		p.parts = map[string]*part{}
	}
	q := p.parts[name]
	if q == nil {
		q = &part{}
		p.parts[name] = q
	}
	q.n++
	q.d += d
}

// addGap adds time fred spent on its own, not a command to gdb.
func (p *profile) addGap(name string, d time.Duration) {
	p.add(name, d)
	p.parts[name].n--
}

// merge adds q's times into p.
func (p *profile) merge(q profile) {
	p.total += q.total
	if p.parts == nil {
		p.parts = map[string]*part{}
	}
	for k, v := range q.parts {
		if p.parts[k] == nil {
			p.parts[k] = &part{}
		}
		p.parts[k].n += v.n
		p.parts[k].d += v.d
	}
}

// evalKind is the part of a reverse-watch spent evaluating the expression.
const evalKind = "gdb: evaluating the watched expression"

// kind names what a command fred sent to gdb is for.
func kind(cmd string) string {
	c := strings.TrimPrefix(cmd, "with confirm off -- ")
	switch {
	case strings.HasPrefix(c, "with detach-on-fork on"):
		return "gdb: the fork agent's call (a copy made; pages unshared during a search)"
	case strings.Contains(c, "-data-evaluate-expression"):
		return evalKind
	case strings.Contains(c, "-stack-info-frame"):
		return "gdb: where-am-I query (-stack-info-frame)"
	case strings.Contains(c, "-stack-info-depth"):
		return "gdb: stack depth query (-stack-info-depth)"
	case strings.Contains(c, "-break-list"):
		return "gdb: breakpoint list query"
	case strings.Contains(c, "-list-thread-groups"):
		return "gdb: pid query"
	case strings.HasPrefix(c, "attach "):
		return "gdb: attach"
	case c == "detach":
		return "gdb: detach"
	case c == "kill":
		return "gdb: kill"
	case c == "tbreak *$pc" || c == "jump *$pc" || strings.HasPrefix(c, "python gdb.Breakpoint("):
		return "gdb: settle after attach (tbreak/jump *$pc)"
	case strings.HasPrefix(c, "enable ") || strings.HasPrefix(c, "disable ") ||
		strings.HasPrefix(c, "break ") || strings.HasPrefix(c, "delete "):
		return "gdb: breakpoint switching for replay"
	case c == "frame":
		return "gdb: show frame"
	}
	op, arg, _ := strings.Cut(c, " ")
	switch op {
	case "next", "n", "step", "s", "stepi", "si", "nexti", "ni":
		if _, err := strconv.Atoi(strings.TrimSpace(arg)); err == nil {
			return "gdb: counted `" + op + " N` (many statements, one command)"
		}
		return "gdb: forward commands (replay and walks)"
	case "continue", "c", "finish", "fin", "until", "u", "advance":
		return "gdb: forward commands (replay and walks)"
	}
	return "gdb: other (" + op + ")"
}

// gapKind names fred's own time after gdb answered cmd.
func gapKind(cmd string) string {
	c := strings.TrimPrefix(cmd, "with confirm off -- ")
	switch c {
	case "kill":
		return "fred: CRIU restore (after gdb's kill, before attach)"
	case "detach":
		return "fred: CRIU dump (after detach, before attach)"
	}
	return "fred: own work between gdb answers"
}

// profileOf builds the profile of the window [from, to].
func profileOf(ev []event, from, to time.Time) profile {
	p := profile{total: to.Sub(from)}
	var sends []int
	for i, e := range ev {
		if e.sent {
			sends = append(sends, i)
		}
	}
	if len(sends) == 0 {
		p.addGap("fred: own work between gdb answers", p.total)
		return p
	}
	p.addGap("fred: own work between gdb answers", clamp(ev[sends[0]].t, from, to).Sub(from))
	for k, i := range sends {
		end := len(ev)
		if k+1 < len(sends) {
			end = sends[k+1]
		}
		// gdb is done with the command when its last output before the
		// next command arrives.
		sent := clamp(ev[i].t, from, to)
		answered := sent
		for j := i + 1; j < end; j++ {
			answered = clamp(ev[j].t, from, to)
		}
		next := to
		if k+1 < len(sends) {
			next = clamp(ev[sends[k+1]].t, from, to)
		}
		if answered.After(next) {
			answered = next
		}
		p.add(kind(ev[i].text), answered.Sub(sent))
		p.addGap(gapKind(ev[i].text), next.Sub(answered))
	}
	return p
}

// write prints the parts, largest first, averaged over reps commands.
func (p profile) write(b *strings.Builder, prefix string, reps int) {
	if reps < 1 {
		reps = 1
	}
	if len(p.parts) <= 1 {
		fmt.Fprintf(b, "%s(no traffic with gdb in the trace: has the format of FRED_TRACE changed?)\n", prefix)
		return
	}
	type kv struct {
		k string
		v *part
	}
	var l []kv
	for k, v := range p.parts {
		if v.d > 0 || v.n > 0 {
			l = append(l, kv{k, v})
		}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v.d > l[j].v.d })
	for _, x := range l {
		share := 0.0
		if p.total > 0 {
			share = 100 * float64(x.v.d) / float64(p.total)
		}
		count := ""
		if x.v.n > 0 {
			count = fmt.Sprintf("%g x %.1f ms", float64(x.v.n)/float64(reps), ms(x.v.d)/float64(x.v.n))
		}
		fmt.Fprintf(b, "%s%-56s %8.3f s %5.1f%%  %s\n", prefix, x.k, x.v.d.Seconds()/float64(reps), share, count)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func clamp(t, from, to time.Time) time.Time {
	if t.Before(from) {
		return from
	}
	if t.After(to) {
		return to
	}
	return t
}
