package personalities

import (
	"fmt"
	"regexp"
	"strings"
)

// Perl is the personality for perl's debugger (`perl -d prog.pl`). Like
// pdb it lives inside the interpreter it debugs. fred loads it through
// PERL5DB with a few changes (perlBoot): the prompt becomes fred's marker
// (fred's own queries stay out of the debugger's command history),
// the debugger reads plain lines (Term::ReadLine's stub, no ornaments) from
// copies of stdin and stderr rather than /dev/tty (CRIU cannot dump a
// /dev/tty it did not see opened with the session), and fred_* subs in
// package DB answer fred's queries in one line each.
var Perl = &Personality{
	Name:      "perl",
	Debuggers: []string{"perl", "perl5"},
	Prompt:    "  DB<> ",
	// The number perl5db would show, fred's own commands not counted.
	PromptQuery: perlDB + "fred_prompt_shown()",
	StartHint:   "'R' (perl -d starts it again from the top)",
	Argv:        perlArgv,
	Env:         seedEnv("PERL_HASH_SEED", "0", "PERL_PERTURB_KEYS", "0"),
	Setup:       func(string) []string { return nil },
	InProcess:   true,
	Commands: []Spec{
		// next, step and quit are fred's aliases (perlBoot): fred sends
		// those words to every debugger.
		{Names: []string{"n", "next"}, Kind: Forward, Op: OpNext},
		{Names: []string{"s", "step"}, Kind: Forward, Op: OpStep},
		{Names: []string{"c"}, Kind: Forward, Op: OpContinue},
		// perl's r runs to the return and stops in the caller: gdb's finish.
		{Names: []string{"r"}, Kind: Forward, Op: OpFinish},
		{Names: []string{"R"}, Kind: Forward, Op: OpRun},
		{Names: []string{"b"}, Kind: Breakpoint, Op: "b"},
		{Names: []string{"B"}, Kind: Breakpoint, Op: "B"},
		{Names: []string{"D"}, Kind: Breakpoint, Op: "D"},
		{Names: []string{"enable"}, Kind: Breakpoint},
		{Names: []string{"disable"}, Kind: Breakpoint},
		{Names: []string{"w"}, Kind: Breakpoint, Op: "w"},
		{Names: []string{"W"}, Kind: Breakpoint, Op: "W"},
		{Names: []string{"a"}, Kind: Breakpoint, Op: "a"},
		{Names: []string{"A"}, Kind: Breakpoint, Op: "A"},
		{Names: []string{"p"}, Kind: Inspect, Op: "p"},
		{Names: []string{"x"}, Kind: Inspect, Op: "x"},
		{Names: []string{"T"}, Kind: Inspect, Op: "T"},
		{Names: []string{"l"}, Kind: Inspect, Op: "l"},
		{Names: []string{"v"}, Kind: Inspect, Op: "v"},
		{Names: []string{"."}, Kind: Inspect, Op: "."},
		{Names: []string{"-"}, Kind: Inspect, Op: "-"},
		{Names: []string{"L"}, Kind: Inspect, Op: "L"},
		{Names: []string{"S"}, Kind: Inspect, Op: "S"},
		{Names: []string{"V"}, Kind: Inspect, Op: "V"},
		{Names: []string{"X"}, Kind: Inspect, Op: "X"},
		{Names: []string{"y"}, Kind: Inspect, Op: "y"},
		{Names: []string{"i"}, Kind: Inspect, Op: "i"},
		{Names: []string{"m"}, Kind: Inspect, Op: "m"},
		{Names: []string{"M"}, Kind: Inspect, Op: "M"},
		{Names: []string{"f"}, Kind: Inspect, Op: "f"},
		{Names: []string{"h"}, Kind: Inspect, Op: "h"},
		{Names: []string{"o"}, Kind: Other, Op: "o"},
		{Names: []string{"t"}, Kind: Other, Op: "t"},
		{Names: []string{"="}, Kind: Other, Op: "="},
		{Names: []string{"q", "quit"}, Kind: Quit, Op: "q"},
	},
	Split: perlSplit,
	// Anything else is Perl, run in the program.
	Mutates: func(c Command) bool {
		switch c.Op {
		case "p", "x":
			return perlAssign.MatchString(blankStrings(c.Args, '#'))
		}
		if c.Kind != Other || perlOther[c.Op] {
			return false
		}
		return perlMutates(c.Line)
	},
	Repeat: func(last Command) string {
		// An empty line repeats the last n or s (perl's own rule); l goes on.
		switch last.Op {
		case OpNext, OpStep:
			return last.Line
		case "l":
			return "l"
		}
		return ""
	},
	LocationCmd:   perlDB + "fred_where()",
	ParseLocation: parseFredWhere,
	DepthCmd:      perlDB + "fred_where()",
	ParseDepth:    parseFredDepth,
	PidCmd:        perlDB + "fred_pid()",
	ParsePid:      parseFredPid,
	StopReason:    stopReason(perlEnded, perlWatch, perlSignal),
	StopCmd:       perlDB + "fred_stop()",
	ParseStop:     parseFredStop,
	Ended:         func(out string) bool { return perlEnded.MatchString(out) },
	NewRun: func(out string) bool {
		return regexp.MustCompile(`(?m)^Loading DB routines from perl5db\.pl`).MatchString(out)
	},
	BreakpointsCmd:     perlDB + "fred_bps()",
	ParseBreakpoints:   parseFredBps,
	Enable:             perlDB + `fred_enable("%s", 1)`,
	Disable:            perlDB + `fred_enable("%s", 0)`,
	Delete:             perlDB + `fred_delete("%s")`,
	BreakAt:            perlDB + `fred_break(%q)`,
	ParseNewBreakpoint: parseFredNewBp,
	EvalCmd:            func(expr string) string { return perlDB + `fred_value(fred_eval("` + perlQuote(expr) + `"))` },
	ParseEval:          parsePerlEval,
	EvalFailed:         regexp.MustCompile(`^\(dies: `),
	KillLine:           "\x15",
	EchoCmd:            func(token string) string { return perlDB + `print $DB::OUT "` + perlQuote(token) + `\n"` },
	Refused: func(out string) bool {
		return perlRefused.MatchString(out)
	},
	Quiet:      func(cmd string) string { return cmd },
	FrameCmd:   perlDB + "fred_frame()",
	SaveState:  perlDB + "fred_save(q{%s})",
	LoadState:  perlDB + "fred_load(q{%s})",
	Fork:       perlDB + "fred_fork(q{%s})",
	NoCountArg: true,
	Stepper: &Stepper{Nexts: func(max int, m NextsMode) string {
		if m.Shallower {
			return fmt.Sprintf(perlDB+`fred_nexts(%d, "shallower")`, max)
		}
		return fmt.Sprintf(perlDB+"fred_nexts(%d)", max)
	}, Steps: func(max int, m StepsMode) string {
		// A breakpoint ends the count whether or not fred asks: a
		// line with one (or an action) is perl5db's to judge.
		return fmt.Sprintf(perlDB+`fred_steps(%d, "%s", %d)`, max, m.Until, map[bool]int{true: 1}[m.Track])
	}},
}

var (
	perlEnded  = regexp.MustCompile(`(?m)^Debugged program terminated\.  Use q to quit or R to restart`)
	perlWatch  = regexp.MustCompile(`(?m)^Watchpoint \d+:\t`)
	perlSignal = regexp.MustCompile(`(?m)^(Signal \w+ at |.*received signal)`)
	// Perl code the debugger could not compile or that died says where
	// in the debugger's eval.
	perlRefused = regexp.MustCompile(`(?m)^(Use 'q' to quit or 'R' to restart\.|Line \d+( of '.*')? not breakable\.|Subroutine .* not found\.|.* at \(eval \d+\)\[[^\]]*perl5db\.pl:\d+\] line \d+)`)
	perlOther   = map[string]bool{"o": true, "t": true, "=": true}
)

// perlArgv runs the person's perl with -d, the debugger loaded through
// PERL5DB, and the marker in the environment (env(1) sets both; the
// bootstrap takes them out of the program's %ENV).
func perlArgv(argv []string, marker, tty string) []string {
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
	out := []string{"env", "PERL5DB=" + perlBoot, "FRED_PERLDB_PROMPT=" + marker, argv[0]}
	return append(out, args...)
}

// perlBoot loads perl5db.pl and changes it for fred. It must stay one line:
// perl pastes PERL5DB before the program. The pre- and post-prompt actions
// tell fred's replay log (replaylog/) when the person is using the
// debugger, whose own reads are then not the program's to record.
// fred_watch adds (on) or removes a watch expression as w and W do; a
// command runs inside DB::eval, which sets $DB::trace back from
// $DB::otrace when it ends, so the watch bit goes into both.
// perlDB starts fred's own commands: compiled in package DB, their
// statements are none of the debugger's business (no watch expression is
// checked there, none stops there); fred_eval evaluates the person's
// expressions in the program's package and lexical scope all the same.
const perlDB = "package DB; "

var perlBoot = strings.Join(strings.Fields(`BEGIN { require "perl5db.pl"; }
BEGIN { package DB; no warnings qw(redefine once);
our ($fred_prompt, $fred_boot, $fred_hit, $fred_sig) = (delete $ENV{FRED_PERLDB_PROMPT}, delete $ENV{PERL5DB}, 0, 0);
push @$DB::pre, "package DB; syscall(0x46524544, 1)"; push @$DB::post, "package DB; syscall(0x46524544, 0)";
$DB::rl = 0; $DB::alias{next} = "s\anext\an\a"; $DB::alias{step} = "s\astep\as\a"; $DB::alias{quit} = "s\aquit\aq\a";
open(DB::IN, "<&", \*STDIN) or die "fred: stdin: $!"; open(DB::OUT, ">&", \*STDERR) or die "fred: stderr: $!"; DB::_autoflush(\*DB::OUT);
my $rl = \&DB::readline;
*DB::readline = sub { my @a = @_; if ($fred_go) { my $c = $fred_go; $fred_go = 0; if ($fred_count[5] || $fred_sc) { $DB::trace |= 4; $fred_traced = 1 } return $c } if ($fred_traced) { $DB::trace &= ~4; $fred_traced = 0 }
  for my $h (\@DB::hist, \@DB::truehist) { pop @$h while @$h && $h->[-1] =~ /^(package DB; )?(DB::)?fred_\w+\(|FREDSYNC/ }
  $DB::term->ornaments(0) if $DB::term && !$DB::fred_orn++;
  if (defined $fred_prompt && @a && defined $a[0] && $a[0] =~ /DB<+\d+>+ $/) { ($DB::fred_shown = $a[0]) =~ s/(DB<+)\d+/$1 . ($#DB::hist + 1)/e; $a[0] = $fred_prompt }
  $rl->(@a) };
my $restart = \&DB::restart;
*DB::restart = sub { $ENV{FRED_PERLDB_PROMPT} = $fred_prompt; $ENV{PERL5DB} = $fred_boot; $restart->(@_) };
my $brk = \&DB::_DB__determine_if_we_should_break;
*DB::_DB__determine_if_we_should_break = sub { my $s = $DB::signal; &$brk; $fred_hit = ($DB::signal & 1) && !($s & 1) ? 1 : 0; $fred_sig = ($s & 1) ? 1 : 0; };
sub fred_here { my $i = 0; my @c; while (@c = caller($i++)) { last if $c[3] eq "DB::DB" } return unless @c;
  my ($pkg, $file, $line) = @c; my @f = caller($i); my $fn = @f ? $f[3] : "$pkg\::"; my $d = 1;
  while (@f = caller($i++)) { $d++ if $f[3] !~ /^DB::/ && $f[3] ne "(eval)" } return ($file, $line, $fn, $d) }
sub fred_out { $DB::onetimeDump = "fred"; local $\ = ""; print $DB::OUT @_ }
sub fred_w { my ($f) = @_; $f =~ s/([\x00-\x1f"\$\@\\\x7f])/sprintf("\\x%02x", ord $1)/ge; $f }
sub fred_unw { my ($f) = @_; $f =~ s/\\x([0-9a-f]{2})/chr hex $1/ge; $f }
sub fred_where { my ($f, $l, $fn, $d) = fred_here(); if ($DB::finished || !defined $f) { fred_out("\@fred ended\n"); return }
  fred_out("\@fred at $l $d $fn\t$f\n"); }
sub fred_stop { fred_out("\@fred stop ", ($fred_hit ? 1 : $fred_sig ? "signal" : 0), "\n") }
sub fred_pid { fred_out("\@fred pid $$\n") }
our $fred_shown = "  DB<1> "; sub fred_prompt_shown { fred_out("\@fred prompt [$fred_shown]\n") }
our (@fred_count, $fred_why, $fred_go, $fred_traced); push @$DB::pre, "package DB; fred_counted()";
sub fred_nexts { my $d = (fred_here())[3] // 0; my $own = !$DB::trace;
  @fred_count = ($_[0], 0, ($_[1] // "") eq "shallower", $d, $d, $own); $fred_why = undef; $fred_go = "n"; return }
our ($fred_sc, $fred_sn, $fred_swhy, $fred_su, $fred_sd, $fred_st, %fred_last, %fred_bpl); my $db = \&DB::DB; my $fast;
sub fred_handover { *DB::DB = $db; $DB::signal = 0; $DB::single = 1 }
$fast = sub { my $l = (caller)[2]; if ($DB::signal & 1) { $fred_swhy = "signal"; $fred_sn++; return fred_handover() } $fred_sn++; $fred_last{$DB::stack_depth} = $fred_sn if $fred_st;
  if ($fred_su && $DB::stack_depth <= $fred_sd || exists $fred_bpl{$l} && fred_bpline(caller)) { $fred_swhy = "passed"; return fred_handover() }
  if ($fred_sn >= $fred_sc - 1) { $fred_swhy = "limit"; $fred_sn++; fred_handover() } return };
sub fred_bpline { my ($p, $f, $l) = @_; return 0 unless ${"main::_<$f"}{$l}; local @DB::saved = ($@, $!, $^E, $,, $/, $\, $^W); local ($@, $!, $^E, $,, $/, $\, $^W);
  local *DB::dbline = $main::{"_<$f"}; local ($DB::package, $DB::filename, $DB::line) = ($p, $f, $l); local $DB::usercontext = DB::_calc_usercontext($p); my $s = $DB::signal; $DB::signal = 0; &DB::_DB__determine_if_we_should_break; my $hit = $DB::signal & 1; $DB::signal = $s;
  my (undef, $a) = split /\0/, $DB::dbline{$l}; if (defined $a && $a ne "") { $DB::evalarg = $a; &DB::eval } $hit }
sub fred_steps { return fred_out("FREDNEXTS 0 unsupported\n") if @DB::to_watch || $DB::trace & 1; ($fred_sc, $fred_sn, $fred_swhy, $fred_go, $fred_su, $fred_st) = ($_[0], 0, undef, "s", $_[1], $_[2]); %fred_last = ($DB::stack_depth => 0);
  %fred_bpl = (); for my $k (grep { /^_</ } keys %main::) { my $h = \%{ $main::{$k} }; $fred_bpl{$_} = 1 for grep { $h->{$_} } keys %$h }
  $fred_sd = $DB::stack_depth - ($fred_su eq "finish" ? 1 : 0); return }
sub fred_first { $fred_sn = 1; $fred_last{$DB::stack_depth} = 1 if $fred_st; $fred_swhy = "done" if $fred_su && $DB::stack_depth <= $fred_sd; return 0 if $fred_sc <= 1 || $DB::signal || $fred_hit || $fred_swhy; $DB::single = 0; $DB::trace &= ~4;
  if ($fred_sc == 2) { ($fred_sn, $fred_swhy, $DB::signal) = (2, "limit", 4); return 1 } *DB::DB = $fast; $DB::signal = 2; return 1 }
END { if ($fred_sc && defined $fred_sn) { *DB::DB = $db; $DB::signal = 0 } syscall(0x46524544, 1) if $DB::fall_off_end || $DB::finished }
sub fred_counted { if (defined $fred_sn) { *DB::DB = $db; my $w = $fred_swhy // ($DB::finished ? "exited" : $fred_hit ? "breakpoint" : $fred_sig ? "signal" : "exited");
    my $sh = ""; if ($fred_st) { my $k = -1; for my $d (keys %fred_last) { $k = $fred_last{$d} if $d < $DB::stack_depth && $fred_last{$d} > $k && $fred_last{$d} < $fred_sn } $sh = " $k" }
    fred_out("FREDNEXTS $fred_sn $w$sh\n"); ($fred_sc, $fred_sn, $fred_swhy) = (); return }
  return unless @fred_count; my ($n, $w) = ($fred_count[1], $fred_why);
  if (!defined $w) { if ($DB::finished) { $w = "exited" } elsif ($fred_hit) { $w = "breakpoint" } elsif ($fred_sig) { $w = "signal" } else { $n++; $w = "limit" } }
  @fred_count = (); $fred_why = undef; fred_out("FREDNEXTS $n $w\n") }
sub watchfunction { return fred_first() if $fred_sc && !$fred_sn; return 0 unless @fred_count && $fred_count[5] && !defined $fred_why && !$DB::signal && !$DB::finished; my $d = (fred_here())[3] // 0;
  if ($d <= $fred_count[4]) { if ($fred_count[2] && $d < $fred_count[3]) { $fred_why = "done"; $DB::single = 2; return 0 }
    if (++$fred_count[1] >= $fred_count[0]) { $fred_why = "limit"; $DB::single = 2; return 0 } $fred_count[4] = $d }
  $DB::single = 0; return $DB::action ? 0 : 1 }
sub fred_copy { for my $h (\*STDOUT, \*STDERR, $DB::OUT) { my $o = select($h); my $a = $|; $| = 1; $| = $a; select($o) }
  pipe(my $r, my $w) or return -1; my $p = CORE::fork(); return -1 unless defined $p;
  if ($p) { close $w; my $g = <$r>; close $r; waitpid($p, 0); return defined $g && $g > 0 ? $g : -1 }
  close $r; my $g = CORE::fork(); POSIX::_exit(1) unless defined $g; if ($g) { print $w $g; close $w; POSIX::_exit(0) } close $w; 0 }
sub fred_fork { require POSIX; local @SIG{qw(INT HUP QUIT TSTP TTIN TTOU)} = ("IGNORE") x 6;
  my $g = fred_copy(); if ($g) { fred_out("\@fred fork $g\n"); return }
  while (1) { sysopen(my $f, $_[0], POSIX::O_RDONLY() | POSIX::O_NONBLOCK()) or POSIX::_exit(1); fcntl($f, POSIX::F_SETFL(), 0) or POSIX::_exit(1);
    my $n; do { $n = sysread($f, my $c, 1) } until defined $n || $! != POSIX::EINTR(); close $f; POSIX::_exit(0) unless $n; $g = fred_copy(); last if $g }
  POSIX::setsid() or POSIX::_exit(1); ioctl(STDIN, 0x540E, 0) or POSIX::_exit(1); fred_out("\@fred fork $g\n") }
sub fred_frame { my ($f, $l, $fn) = fred_here(); return fred_out() unless defined $f; my $src = ${ $main::{"_<$f"} }[$l]; $src = "\n" unless defined $src;
  my $p = "$fn($f:"; fred_out(length($p) > 30 ? "$p$l):\n$l:\t$src" : "$p$l):\t$src"); }
sub fred_eval { my @r = eval "package $DB::package; $_[0]"; if ($@) { my $e = $@; fred_out($e); die "\n" } @r }
sub fred_value { my $v = join ",", map { !defined $_ ? "undef" : $_ eq "" ? q("") : $_ } @_; $v =~ s/\\/\\\\/g; $v =~ s/\n/\\n/g; fred_out("\@fred value $v\n") }
sub fred_bps { fred_out();
  for my $k (sort grep { /^_</ } keys %main::) { my $f = substr($k, 2); my $h = \%{ $main::{$k} };
    for my $l (sort { $a <=> $b } grep { /^\d+$/ } keys %$h) { my ($c) = split /\0/, $h->{$l}; next unless defined $c && $c ne "";
      fred_out("\@fred bp ", fred_w("$f:$l"), " ", (DB::_is_breakpoint_enabled($f, $l) ? 1 : 0), " ", fred_w($c eq "1" ? "$f:$l" : "$f:$l if $c"), "\n"); } }
  for my $e (@DB::to_watch) { my $w = fred_w("w $e"); fred_out("\@fred bp ", $w =~ s/ /\\x20/gr, " 1 $w\n") } }
sub fred_watch { my ($e, $on) = @_; my @k = grep { $DB::to_watch[$_] ne $e } 0 .. $#DB::to_watch;
  @DB::old_watch = @DB::old_watch[@k]; @DB::to_watch = @DB::to_watch[@k]; if ($on) { push @DB::to_watch, $e; $DB::evalarg = $e;
    my ($v) = join(" ", &DB::eval); push @DB::old_watch, defined $v ? "'$v'" : "undef" } $DB::trace = @DB::to_watch ? $DB::trace | 2 : $DB::trace & ~2;
  $DB::otrace = $DB::trace }
sub fred_break { if (fred_unw($_[0]) =~ /^w (.*)$/s) { fred_out(); fred_watch($1, 1); fred_out("\@fred bp ", $_[0], "\n"); return }
  my ($w, $c) = split / if /, fred_unw($_[0]), 2; my ($f, $l) = $w =~ /^(.*):(\d+)$/;
  if (eval { DB::break_on_filename_line($f, $l, defined $c ? $c : 1); 1 }) { fred_out("\@fred bp ", fred_w("$f:$l"), "\n") } else { fred_out("\@fred error $@") } }
sub fred_delete { fred_out(); return fred_watch($1, 0) if fred_unw($_[0]) =~ /^w (.*)$/s; my ($f, $l) = fred_unw($_[0]) =~ /^(.*):(\d+)$/; local *dbline = $main::{"_<$f"};
  my ($c, $a) = split /\0/, $dbline{$l}; if (defined $a && $a ne "") { $dbline{$l} = "\0$a" } else { delete $dbline{$l} }
  DB::_delete_breakpoint_data_ref($f, $l); }
sub fred_enable { fred_out(); return fred_watch($1, $_[1]) if fred_unw($_[0]) =~ /^w (.*)$/s; my ($f, $l) = fred_unw($_[0]) =~ /^(.*):(\d+)$/; DB::_set_breakpoint_enabled_status($f, $l, $_[1]); }
sub fred_save { fred_out(); local $DB::trace = $DB::trace & ~2; my @b; for my $k (grep { /^_</ } keys %main::) { my $f = substr($k, 2); my $h = \%{ $main::{$k} };
    for my $l (grep { /^\d+$/ } keys %$h) { push @b, [$f, $l, $h->{$l}, DB::_is_breakpoint_enabled($f, $l) ? 1 : 0] } }
  require Data::Dumper; local $Data::Dumper::Useqq = 1; local $Data::Dumper::Terse = 1;
  open my $fh, ">", $_[0] or die "$_[0]: $!"; print $fh Data::Dumper::Dumper([\@b, {%DB::alias}, [@DB::to_watch]]); close $fh; }
sub fred_load { fred_out(); my $s = do { local $DB::trace = $DB::trace & ~2; do $_[0] } or die "$_[0]: $@$!"; my ($b, $al) = @$s;
  for my $k (grep { /^_</ } keys %main::) { my $f = substr($k, 2); local *dbline = $main::{$k};
    for my $l (grep { /^\d+$/ } keys %dbline) { delete $dbline{$l}; DB::_delete_breakpoint_data_ref($f, $l) } }
  for my $e (@$b) { my ($f, $l, $v, $en) = @$e; next unless $main::{"_<$f"}; local *dbline = $main::{"_<$f"};
    $dbline{$l} = $v; DB::_set_breakpoint_enabled_status($f, $l, $en); $DB::had_breakpoints{$f} |= 1 }
  %DB::alias = %$al; @DB::to_watch = @DB::old_watch = (); fred_watch($_, 1) for @{ $s->[2] || [] }; }
}`), " ")

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
