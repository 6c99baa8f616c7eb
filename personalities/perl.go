package personalities

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// Perl is the personality for perl's debugger (`perl -d prog.pl`): a file
// (files/perl.fred) read by the protocol core of debuggers inside the
// program (inprocfile.go), its language "perl" the code below. Like pdb
// it lives inside the interpreter it debugs. fred loads it through
// PERL5DB with a few changes (scripts/perl_boot.pl): the prompt becomes
// fred's marker (fred's own queries stay out of the debugger's command
// history), the debugger reads plain lines (Term::ReadLine's stub, no
// ornaments) from copies of stdin and stderr rather than /dev/tty (CRIU
// cannot dump a /dev/tty it did not see opened with the session), and
// fred_* subs in package DB answer fred's queries in one line each.
var Perl = mustBuiltin("perl.fred")

// perlSteps is the bootstrap's fred_steps: a breakpoint ends the count
// whether or not fred asks (a line with one, or an action, is perl5db's
// to judge); with AtBps, one at the last step counted is said too.
func perlSteps(max int, m StepsMode) string {
	b := map[bool]int{true: 1}
	watch := ""
	if m.Watch.Expr != "" {
		watch = `, "` + perlQuote(m.Watch.Key) + `", "` + perlQuote(m.Watch.Expr) + `"`
	}
	return fmt.Sprintf(perlDB+`fred_steps(%d, "%s", %d, %d%s)`, max, m.Until, b[m.Track], b[m.AtBps], watch)
}

// perlLaunch runs the person's perl with -d, the debugger (boot, made
// one line by perlBootLine) loaded through PERL5DB, and the marker in the environment (env(1) sets both; the
// bootstrap takes them out of the program's %ENV).
func perlLaunch(argv []string, boot, marker string) []string {
	args := argv[1:]
	hasD := false
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		if a == "-d" || strings.HasPrefix(a, "-d") && !strings.HasPrefix(a, "-d:") {
			hasD = true
		}
	}
	if !hasD {
		args = append([]string{"-d"}, args...)
	}
	out := []string{"env", "PERL5DB=" + boot, "FRED_PERLDB_PROMPT=" + marker, argv[0]}
	return append(out, args...)
}

// The bootstrap (scripts/perl_boot.pl) loads perl5db.pl and changes it
// for fred. It must stay one line:
// perl pastes PERL5DB before the program. The pre- and post-prompt actions
// tell fred's replay log (replaylog/) when the person is using the
// debugger, whose own reads are then not the program's to record.
// fred_watch adds (on) or removes a watch expression as w and W do; a
// command runs inside DB::eval, which sets $DB::trace back from
// $DB::otrace when it ends, so the watch bit goes into both.
// fred_copy forks with the fork system call (fred_rawfork), not
// CORE::fork, which first flushes every handle: that seeks an input file
// back to where the program has read it, so the reads the replay log
// gives back after a snapshot came from another place, and a long
// stretch counted again ended early (pod2text).
// The modules fred's subs use are loaded at the start: one fred loaded
// once the program runs would be one the program finds loaded in some
// runs of a stretch and loads itself (reading its file) in others, and a
// replay of that stretch would leave its recording.
// Under fred record (FRED_RECORD, with PERLDB_OPTS NonStop: no prompt)
// the boot sets up, once the program is compiled (INIT) and out of the log
// as a prompt is, the terminal the first prompt sets up under fred: the
// modules it loads (Term::Cap keeps a descriptor open) are then there as
// in the replay, and the program's own descriptors are the same numbers.
// A probe (fred_probe, in a timer handler, SIGINT blocked) ignores SIGINT
// in its copy only: ignoring it in the program would discard a Ctrl-C
// pending meanwhile, and the person's continue would never stop.
// The boot asks uname once, in the debugger's time ($fred_x86_64): a
// probe's timer handler runs in the program's, where a uname is logged.
// (The boot is joined into one line: it has no comments.)

// perlDB starts fred's own commands: compiled in package DB, their
// statements are none of the debugger's business (no watch expression is
// checked there, none stops there); fred_eval evaluates the person's
// expressions in the program's package and lexical scope all the same.
const perlDB = "package DB; "

// perlBootLine joins the bootstrap into the one line PERL5DB must be.
func perlBootLine(src string) string { return strings.Join(strings.Fields(src), " ") }

// perlQuote writes s for a Perl double-quoted string.
func perlQuote(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < 0x20 || c >= 0x7f || strings.IndexByte(`"\$@`, c) >= 0 {
			fmt.Fprintf(&b, "\\x%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

var perlEvalNoise = regexp.MustCompile(`\(eval \d+\)(\[[^\]]*\])?`)

// parsePerlEval reads an expression's value. An error (the expression did
// not compile or died) is a value too, without the eval counter Perl puts
// in its messages.
func parsePerlEval(out string) (string, error) {
	if v, err := fredAnswer(out, "value"); err == nil {
		return v, nil
	}
	msg := strings.TrimSpace(strings.ReplaceAll(out, "\r", ""))
	msg, _, _ = strings.Cut(msg, "\n")
	return "(dies: " + perlEvalNoise.ReplaceAllString(msg, "(eval)") + ")", nil
}

var perlAssign = regexp.MustCompile(`(^|[^=!<>~])=($|[^=~>])|\+\+|--|\b(push|pop|shift|unshift|splice|delete|undef|chomp|chop|local|my|our|bless|open|close|system|exec|eval|do|require|use|srand|rand|sleep|kill|exit)\b|(^|[^\w$@%])(s|tr|y)\W|[.+\-*/%x|&^]=|<<=|>>=|\|\|=|&&=|//=`)

// perlMutates reports whether Perl code typed at the debugger may change the
// program: an assignment, ++/--, a substitution, or a call of a builtin
// that changes state. Calls of the program's own subs count too.
func perlMutates(code string) bool {
	e := blankStrings(code, '#')
	if perlAssign.MatchString(e) {
		return true
	}
	// A call of a sub of the program's: name( or &name.
	return regexp.MustCompile(`(^|[^\w$@%:>-])(&\w|\w+(::\w+)*\s*\()`).MatchString(perlPure.ReplaceAllString(e, ""))
}

var perlPure = regexp.MustCompile(`\b(print|printf|say|scalar|length|defined|exists|ref|keys|values|each|join|split|sprintf|substr|index|rindex|lc|uc|lcfirst|ucfirst|abs|int|sqrt|sort|reverse|map|grep|wantarray|sin|cos|exp|log|hex|oct|ord|chr|pack|unpack|qw|DB::fred_value)\s*\(`)

// perlSplit cuts a line as perl5db.pl does: a one-character command may be
// followed by its argument without a space unless both are alphanumeric. A
// line that is no command is Perl, kept whole.
func perlSplit(line string) (string, string) {
	m := perlVerb.FindStringSubmatch(line)
	if m == nil || !perlWords[m[1]] {
		return line, ""
	}
	return m[1], m[2]
}

var perlVerb = regexp.MustCompile(`^([^.\-]\b|\S*)\s*(.*)$`)

// perlWords are perl5db.pl's commands (1.73), and fred's aliases.
var perlWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a A b B c D d e E f h H i l L m M n o p q r R s S t T v V w W x X y
		. - = < << > >> { {{ ! !! | || source save rerun man doc perldoc enable disable next step quit`) {
		perlWords[w] = true
	}
}
