package dap

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"
)

// debugger is what the adapter types to one debugger, and how it reads the
// answers: the protocol's requests as that debugger's own commands.
type debugger struct {
	argv func(program string, args []string) []string
	// run starts the program after the breakpoints are set; start does it
	// stopping at the program's first line; "" when the debugger has the
	// program stopped there already (pdb, perl).
	run, start             string
	cont, next, step, fini string
	brk                    func(file string, line int, cond string) string
	brkNum                 *regexp.Regexp // the breakpoint's number in brk's answer; nil: none
	del                    func(file string, line, num int) []string
	// ignore makes breakpoint num stop from its nth hit on; nil: the
	// debugger cannot (perl -d).
	ignore      func(num, nth int) string
	print       func(expr string) string
	value       func(out string) (string, error)
	frames      string
	parseFrames func(out string) []frame
	locals      func(a *adapter, frame int) ([]variable, error)
	// frame gives the commands that select frame n for the commands that
	// follow, and the current one again; nil: the debugger answers about
	// the current frame only.
	frame func(n int) (to, back string)
	// threads lists the threads, for parseThreads; "": the program is
	// one thread as far as the debugger tells.
	threads string
	// listBreaks lists the breakpoints, for readBreaks, where the
	// debugger numbers none (perl -d deletes one by its line).
	listBreaks string
	readBreaks func(out string) []placed
	// ended matches the answer of a command after which the program is
	// gone (and, under pdb, starts again).
	ended *regexp.Regexp
	// hit matches an answer that stopped at a breakpoint.
	hit *regexp.Regexp
}

type frame struct {
	name string
	file string
	line int
}

type variable struct{ name, value string }

var debuggers = map[string]*debugger{"gdb": gdbDAP, "pdb": pdbDAP, "perl": perlDAP}

var gdbDAP = &debugger{
	argv: func(program string, args []string) []string {
		return append([]string{"gdb", "-q", "--args", program}, args...)
	},
	run: "run", start: "start",
	cont: "continue", next: "next", step: "step", fini: "finish",
	brk: func(file string, line int, cond string) string {
		b := fmt.Sprintf("break %s:%d", file, line)
		if cond != "" {
			b += " if " + cond
		}
		return b
	},
	brkNum: regexp.MustCompile(`Breakpoint (\d+) at`),
	del:    func(_ string, _, num int) []string { return []string{fmt.Sprintf("delete %d", num)} },
	ignore: func(num, nth int) string { return fmt.Sprintf("ignore %d %d", num, nth-1) },
	print:  func(expr string) string { return "print " + expr },
	value: func(out string) (string, error) {
		out = strings.TrimSpace(out)
		if m := regexp.MustCompile(`(?s)^\$\d+ = (.*)$`).FindStringSubmatch(out); m != nil {
			return m[1], nil
		}
		return "", fmt.Errorf("%s", out)
	},
	frames: "bt",
	frame: func(n int) (string, string) {
		return fmt.Sprintf("frame %d", n), "frame 0"
	},
	threads: "info threads",
	parseFrames: func(out string) []frame {
		var fs []frame
		for _, l := range joinWrapped(out, gdbFrameStart) {
			if f, ok := gdbFrame(strings.TrimSpace(strings.TrimLeft(l, "#0123456789"))); ok {
				fs = append(fs, f)
			}
		}
		return fs
	},
	locals: func(a *adapter, fr int) ([]variable, error) {
		back, err := a.inFrame(fr)
		if err != nil {
			return nil, err
		}
		defer back()
		var vs []variable
		for _, c := range []string{"info args", "info locals"} {
			out, err := a.sess.Inspect(c)
			if err != nil {
				return nil, err
			}
			vs = append(vs, nameValues(out)...)
		}
		return vs, nil
	},
	ended: regexp.MustCompile(`\[Inferior \d+ \(process \d+\) exited|The program is not being run`),
	hit:   regexp.MustCompile(`(?m)^(Thread \d+ .* hit )?Breakpoint \d+(\.\d+)?, `),
}

var pdbDAP = &debugger{
	argv: func(program string, args []string) []string {
		return append([]string{"python3", "-m", "pdb", program}, args...)
	},
	run:  "continue",
	cont: "continue", next: "next", step: "step", fini: "return",
	brk: func(file string, line int, cond string) string {
		b := fmt.Sprintf("break %s:%d", file, line)
		if cond != "" {
			b += ", " + cond
		}
		return b
	},
	brkNum: regexp.MustCompile(`Breakpoint (\d+) at`),
	del:    func(_ string, _, num int) []string { return []string{fmt.Sprintf("clear %d", num)} },
	ignore: func(num, nth int) string { return fmt.Sprintf("ignore %d %d", num, nth-1) },
	print:  func(expr string) string { return "p " + expr },
	value: func(out string) (string, error) {
		out = strings.TrimSpace(out)
		if strings.HasPrefix(out, "*** ") {
			return "", fmt.Errorf("%s", strings.TrimPrefix(out, "*** "))
		}
		return out, nil
	},
	frames: "where",
	parseFrames: func(out string) []frame {
		// Oldest first, "> " on the current one; pdb's and bdb's own
		// frames and the module runner's are not the person's.
		re := regexp.MustCompile(`^[> ] (.+)\((\d+)\)(\S+)\(\)$`)
		var fs []frame
		for _, l := range lines(out) {
			m := re.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			base := filepath.Base(m[1])
			if base == "bdb.py" || base == "pdb.py" || base == "runpy.py" || m[1] == "<string>" {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			fs = append([]frame{{name: m[3], file: m[1], line: n}}, fs...)
		}
		return fs
	},
	frame: func(n int) (string, string) {
		return fmt.Sprintf("up %d", n), fmt.Sprintf("down %d", n)
	},
	locals: func(a *adapter, fr int) ([]variable, error) {
		back, err := a.inFrame(fr)
		if err != nil {
			return nil, err
		}
		defer back()
		out, err := a.sess.Inspect(`p sorted(k for k in locals() if not k.startswith("__"))`)
		if err != nil {
			return nil, err
		}
		var vs []variable
		for _, m := range regexp.MustCompile(`'([A-Za-z_][A-Za-z0-9_]*)'`).FindAllStringSubmatch(out, -1) {
			v, err := a.sess.Inspect("p " + m[1])
			if err != nil {
				return nil, err
			}
			vs = append(vs, variable{m[1], strings.TrimSpace(v)})
		}
		return vs, nil
	},
	ended: regexp.MustCompile(`The program finished and will be restarted|The program exited via sys.exit`),
}

var perlDAP = &debugger{
	argv: func(program string, args []string) []string {
		return append([]string{"perl", "-d", program}, args...)
	},
	run:  "c",
	cont: "c", next: "n", step: "s", fini: "r",
	brk: func(file string, line int, cond string) string {
		b := fmt.Sprintf("b %s:%d", file, line)
		if cond != "" {
			b += " " + cond
		}
		return b
	},
	// B takes a line of the file in view only.
	del: func(file string, line, _ int) []string {
		return []string{"f " + file, fmt.Sprintf("B %d", line)}
	},
	print: func(expr string) string { return "p " + expr },
	value: func(out string) (string, error) { return strings.TrimSpace(out), nil },
	// T lists the callers: the current frame is Where's.
	frames: "T",
	parseFrames: func(out string) []frame {
		re := regexp.MustCompile(`^[$@.] = (\S+?)(?:\(.*\))? called from file '(.+)' line (\d+)`)
		var fs []frame
		for _, l := range lines(out) {
			if m := re.FindStringSubmatch(l); m != nil && !strings.HasPrefix(m[1], "DB::") {
				n, _ := strconv.Atoi(m[3])
				fs = append(fs, frame{name: m[1], file: m[2], line: n})
			}
		}
		// Line k names the function of frame k and where frame k+1
		// stands: shift the names by one.
		out2 := make([]frame, len(fs))
		for i := range fs {
			out2[i] = frame{file: fs[i].file, line: fs[i].line, name: "main"}
			if i+1 < len(fs) {
				out2[i].name = fs[i+1].name
			}
		}
		return out2
	},
	// y lists a frame's lexicals, with PadWalker.
	locals: func(a *adapter, fr int) ([]variable, error) {
		y := "y"
		if fr > 0 {
			y = fmt.Sprintf("y %d", fr)
		}
		out, err := a.sess.Inspect(y)
		if err != nil {
			return nil, err
		}
		if strings.Contains(out, "PadWalker") {
			return nil, errors.New("perl -d lists variables with the PadWalker module: apt-get install libpadwalker-perl (make deps installs it)")
		}
		var vs []variable
		for _, l := range joinWrapped(out, perlVar) {
			if m := perlVar.FindStringSubmatch(l); m != nil {
				vs = append(vs, variable{m[1], m[2]})
			}
		}
		return vs, nil
	},
	listBreaks: "L b",
	readBreaks: func(out string) []placed {
		// "FILE:" then " LINE:\tsource" and "   break if (cond)" lines.
		var ps []placed
		file := ""
		for _, l := range lines(out) {
			if m := perlBreakFile.FindStringSubmatch(l); m != nil {
				file = m[1]
			} else if m := perlBreakLine.FindStringSubmatch(l); m != nil && file != "" {
				n, _ := strconv.Atoi(m[1])
				ps = append(ps, placed{file: file, line: n})
			}
		}
		return ps
	},
	ended: regexp.MustCompile(`Debugged program terminated`),
}

// perlVar is a name and its value as y and x print them.
var perlVar = regexp.MustCompile(`(?s)^([$@%][A-Za-z_][A-Za-z0-9_:]*) = (.*)$`)

// joinWrapped joins the lines that go on the one before (gdb wraps a long
// frame at the terminal's width; a value may take several lines) to it:
// first matches a line that starts an item.
func joinWrapped(out string, first *regexp.Regexp) []string {
	var joined []string
	for _, l := range lines(out) {
		if first.MatchString(l) || len(joined) == 0 {
			joined = append(joined, l)
		} else {
			joined[len(joined)-1] += " " + strings.TrimSpace(l)
		}
	}
	return joined
}

var (
	gdbFrameStart = regexp.MustCompile(`^#`)
	threadStart   = regexp.MustCompile(`^[* ] +\d+ |^\s+Id\s`)
	// perl -d's L b: "FILE:", then " LINE:\tsource" for each breakpoint.
	perlBreakFile = regexp.MustCompile(`^(\S.*):$`)
	perlBreakLine = regexp.MustCompile(`^ (\d+):`)
	gdbFrameRE    = regexp.MustCompile(`^(?:0x[0-9a-f]+ in )?(.+?) \(.*\)(?: at (\S+):(\d+)| from \S+)?$`)
	threadRE      = regexp.MustCompile(`^([* ])\s*(\d+)\s+(Thread 0x[0-9a-f]+ \(LWP (\d+)\)(?: "([^"]*)")?|process (\d+)|LWP (\d+))\s+(.*)$`)
)

// gdbFrame reads one frame of gdb's, its number gone: "f (args) at
// file:line", or "<signal handler called>" (a frame all the same: it
// keeps the frame numbers gdb's).
func gdbFrame(s string) (frame, bool) {
	if s == "" {
		return frame{}, false
	}
	if m := gdbFrameRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[3])
		return frame{name: m[1], file: m[2], line: n}, true
	}
	return frame{name: s}, true
}

// parseThreads reads gdb's info threads: the threads by gdb's numbers,
// each one's top frame, and the current one's number.
func parseThreads(out string) (ts []godap.Thread, tops map[int]frame, current int) {
	tops = map[int]frame{}
	for _, l := range joinWrapped(out, threadStart) {
		m := threadRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		id, _ := strconv.Atoi(m[2])
		name := fmt.Sprintf("Thread %d", id)
		switch {
		case m[5] != "":
			name += fmt.Sprintf(" %q (LWP %s)", m[5], m[4])
		case m[4] != "":
			name += fmt.Sprintf(" (LWP %s)", m[4])
		}
		ts = append(ts, godap.Thread{Id: id, Name: name})
		tops[id], _ = gdbFrame(strings.TrimSpace(m[8]))
		if m[1] == "*" {
			current = id
		}
	}
	return ts, tops, current
}

func lines(out string) []string {
	return strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' })
}

// nameValues reads gdb's "name = value" lines; a value on several lines
// (a struct) is joined.
func nameValues(out string) []variable {
	var vs []variable
	re := regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*) = (.*)$`)
	for _, l := range lines(out) {
		if m := re.FindStringSubmatch(l); m != nil {
			vs = append(vs, variable{m[1], m[2]})
		} else if len(vs) > 0 && !strings.HasPrefix(l, "No ") {
			vs[len(vs)-1].value += " " + strings.TrimSpace(l)
		}
	}
	return vs
}
