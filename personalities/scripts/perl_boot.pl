BEGIN { require "perl5db.pl"; require POSIX; require Time::HiRes; require Data::Dumper; eval { require PadWalker }; }
BEGIN { package DB; no warnings qw(redefine once);
our ($fred_prompt, $fred_boot, $fred_hit, $fred_sig) = (delete $ENV{FRED_PERLDB_PROMPT}, delete $ENV{PERL5DB}, 0, 0);
push @$DB::pre, "package DB; syscall(0x46524544, 1)"; push @$DB::post, "package DB; syscall(0x46524544, 0)";
$DB::rl = 0; $DB::alias{next} = "s\anext\an\a"; $DB::alias{step} = "s\astep\as\a"; $DB::alias{quit} = "s\aquit\aq\a";
open(DB::IN, "<&", \*STDIN) or die "fred: stdin: $!"; open(DB::OUT, ">&", \*STDERR) or die "fred: stderr: $!"; DB::_autoflush(\*DB::OUT);
my $rl = \&DB::readline;
*DB::readline = sub { my @a = @_; fred_disarm(); if ($fred_go) { my $c = $fred_go; $fred_go = 0; if ($fred_count[5] || $fred_sc) { $DB::trace |= 4; $fred_traced = 1 } return $c } if ($fred_traced) { $DB::trace &= ~4; $fred_traced = 0 }
  for my $h (\@DB::hist, \@DB::truehist) { pop @$h while @$h && $h->[-1] =~ /^(package DB; )?(DB::)?fred_\w+\(|FREDSYNC/ }
  $DB::term->ornaments(0) if $DB::term && !$DB::fred_orn++;
  if (defined $fred_prompt && @a && defined $a[0] && $a[0] =~ /DB<+\d+>+ $/) { ($DB::fred_shown = $a[0]) =~ s/(DB<+)\d+/$1 . ($#DB::hist + 1)/e; $a[0] = $fred_prompt }
  my $l = $rl->(@a); fred_arm() if defined $l && $l =~ /^\s*c(\s|$)/; $l };
my $restart = \&DB::restart;
*DB::restart = sub { $ENV{FRED_PERLDB_PROMPT} = $fred_prompt; $ENV{PERL5DB} = $fred_boot; $restart->(@_) };
my $brk = \&DB::_DB__determine_if_we_should_break;
*DB::_DB__determine_if_we_should_break = sub { my $s = $DB::signal; &$brk; $fred_hit = ($DB::signal & 1) && !($s & 1) ? 1 : 0; $fred_sig = ($s & 1) ? 1 : 0; };
my $hw = \&DB::_DB__handle_watch_expressions; our $fred_wat = 0;
*DB::_DB__handle_watch_expressions = sub { my $s = $DB::signal; &$hw; $fred_wat = ($DB::signal & 1) && !($s & 1) ? 1 : 0; };
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
our ($fred_ot, $fred_sb, $fred_sc, $fred_sn, $fred_swhy, $fred_su, $fred_sd, $fred_st, %fred_last, %fred_bpl); my $db = \&DB::DB; my $fast;
sub fred_handover { *DB::DB = $db; $DB::signal = 0; $DB::single = 1; fred_retrace() }
sub fred_retrace { $DB::trace |= $fred_ot // 0; $fred_ot = 0 }
$fast = sub { my $l = (caller)[2]; if ($DB::signal & 1) { $fred_swhy = "signal"; $fred_sn++; return fred_handover() } $fred_sn++; $fred_last{$DB::stack_depth} = $fred_sn if $fred_st; fred_wstep() if defined $fred_wexpr;
  if ($fred_su && $DB::stack_depth <= $fred_sd || exists $fred_bpl{$l} && fred_bpline(caller) || $fred_ot & 2 && fred_wcheck(caller)) { $fred_swhy = "passed"; return fred_handover() }
  if ($fred_sn >= $fred_sc - 1) { $fred_swhy = "limit"; $fred_sn++; fred_handover() } return };
sub fred_at { my ($p, $f, $l, $check, $then) = @_; local @DB::saved = ($@, $!, $^E, $,, $/, $\, $^W); local ($@, $!, $^E, $,, $/, $\, $^W);
  local *DB::dbline = $main::{"_<$f"}; local ($DB::package, $DB::filename, $DB::line) = ($p, $f, $l); local $DB::usercontext = DB::_calc_usercontext($p); my $s = $DB::signal; $DB::signal = 0;
  $check->(); my $hit = $DB::signal & 1; $DB::signal = $s; $then->() if $then; $hit }
sub fred_bpline { my ($p, $f, $l) = @_; return 0 unless ${"main::_<$f"}{$l};
  fred_at($p, $f, $l, sub { &DB::_DB__determine_if_we_should_break }, sub { my (undef, $a) = split /\0/, $DB::dbline{$l}; if (defined $a && $a ne "") { $DB::evalarg = $a; &DB::eval } }) }
sub fred_wcheck { fred_at(@_, sub { local $DB::trace = 2; DB::_DB__handle_watch_expressions() }) }
sub fred_steps { ($fred_sc, $fred_sn, $fred_swhy, $fred_go, $fred_su, $fred_st, $fred_sb) = ($_[0], 0, undef, "s", $_[1], $_[2], $_[3]); %fred_last = ($DB::stack_depth => 0);
  ($fred_wkey, $fred_wexpr, %fred_wsubs) = ($_[4], $_[5]); ($fred_wref, $fred_away, $fred_awayv) = (fred_wval(), -1, "") if defined $fred_wexpr;
  %fred_bpl = (); for my $k (grep { /^_</ } keys %main::) { my $h = \%{ $main::{$k} }; $fred_bpl{$_} = 1 for grep { $h->{$_} } keys %$h }
  $fred_sd = $DB::stack_depth - ($fred_su eq "finish" ? 1 : 0); return }
sub fred_first { $fred_sn = 1; $fred_last{$DB::stack_depth} = 1 if $fred_st; fred_wstep() if defined $fred_wexpr; $fred_swhy = "done" if $fred_su && $DB::stack_depth <= $fred_sd; return 0 if $fred_sc <= 1 || $DB::signal || $fred_hit || $fred_swhy; $DB::single = 0; $fred_ot = $DB::trace & 3; $DB::trace = 0;
  if ($fred_sc == 2) { ($fred_sn, $fred_swhy, $DB::signal) = (2, "limit", 4); return 1 } *DB::DB = $fast; $DB::signal = 2; return 1 }
END { if ($fred_sc && defined $fred_sn) { *DB::DB = $db; $DB::signal = 0; fred_retrace() } syscall(0x46524544, 1) if $DB::fall_off_end || $DB::finished }
sub fred_counted { if (defined $fred_sn) { *DB::DB = $db; fred_retrace(); my $w = $fred_swhy // ($DB::finished ? "exited" : $fred_hit || $fred_wat ? "breakpoint" : $fred_sig ? "signal" : "exited"); $w = "breakpoint" if $w eq "limit" && $fred_sb && ($fred_hit || $fred_wat);
    my $sh = ""; if ($fred_st) { my $k = -1; for my $d (keys %fred_last) { $k = $fred_last{$d} if $d < $DB::stack_depth && $fred_last{$d} > $k && $fred_last{$d} < $fred_sn } $sh = " $k" }
    $sh .= " away $fred_away $fred_awayv" if defined $fred_wexpr; fred_out("FREDNEXTS $fred_sn $w$sh\n"); ($fred_sc, $fred_sn, $fred_swhy, $fred_wexpr) = (); return }
  return unless @fred_count; my ($n, $w) = ($fred_count[1], $fred_why);
  if (!defined $w) { if ($DB::finished) { $w = "exited" } elsif ($fred_hit) { $w = "breakpoint" } elsif ($fred_sig) { $w = "signal" } else { $n++; $w = "limit" } }
  @fred_count = (); $fred_why = undef; fred_out("FREDNEXTS $n $w\n") }
sub watchfunction { return fred_first() if $fred_sc && !$fred_sn; return 0 unless @fred_count && $fred_count[5] && !defined $fred_why && !$DB::signal && !$DB::finished; my $d = (fred_here())[3] // 0;
  if ($d <= $fred_count[4]) { if ($fred_count[2] && $d < $fred_count[3]) { $fred_why = "done"; $DB::single = 2; return 0 }
    if (++$fred_count[1] >= $fred_count[0]) { $fred_why = "limit"; $DB::single = 2; return 0 } $fred_count[4] = $d }
  $DB::single = 0; return $DB::action ? 0 : 1 }
sub fred_copy { for my $h (\*STDOUT, \*STDERR, $DB::OUT) { my $o = select($h); my $a = $|; $| = 1; $| = $a; select($o) }
  pipe(my $r, my $w) or return -1; my $p = fred_rawfork(); return -1 unless defined $p;
  if ($p) { close $w; my $g = <$r>; close $r; waitpid($p, 0); return defined $g && $g > 0 ? $g : -1 }
  close $r; $SIG{INT} = "IGNORE"; my $g = fred_rawfork(); POSIX::_exit(1) unless defined $g; if ($g) { print $w $g; close $w; POSIX::_exit(0) } close $w; 0 }
our $fred_x86_64 = do { syscall(0x46524544, 1); my $u = $^O eq "linux" && (POSIX::uname())[4] eq "x86_64"; syscall(0x46524544, 0); $u };
sub fred_rawfork { if ($fred_x86_64) { my $p = syscall(57); return $p < 0 ? undef : $p } CORE::fork() }
sub fred_fork { require POSIX; local @SIG{qw(INT HUP QUIT TSTP TTIN TTOU)} = ("IGNORE") x 6;
  my $g = fred_copy(); if ($g) { fred_out("\@fred fork $g\n"); return } $g = fred_paused($_[0]); $fred_pcfg = undef; fred_out("\@fred fork $g\n") }
sub fred_paused { my $g;
  while (1) { sysopen(my $f, $_[0], POSIX::O_RDONLY() | POSIX::O_NONBLOCK()) or POSIX::_exit(1); fcntl($f, POSIX::F_SETFL(), 0) or POSIX::_exit(1);
    my $n; do { $n = sysread($f, my $c, 1) } until defined $n || $! != POSIX::EINTR(); close $f; POSIX::_exit(0) unless $n; $g = fred_copy(); last if $g }
  POSIX::setsid() or POSIX::_exit(1); ioctl(STDIN, 0x540E, 0) or POSIX::_exit(1); $DB::term_pid = $$; $g }
our ($fred_pcfg, $fred_parmed, $fred_pbusy, $fred_pn, $fred_pstride, @fred_plive, @fred_pdead, @fred_pfree, $fred_pold);
sub fred_probes { my $ok = do { local ($DB::trace, $DB::single, $DB::signal) = (0, 0, 0); eval { require Time::HiRes; require POSIX; 1 } };
  ($fred_pcfg, $fred_pn, $fred_pstride, @fred_plive, @fred_pdead) = ($ok && @_ > 3 ? [@_] : undef, 0, 1); @fred_pfree = reverse 0 .. $#_ - 1; fred_out() }
sub fred_probed { fred_disarm(); fred_out("\@fred probed live ", (join(",", map { "$_->[1]:$_->[2]" } @fred_plive) || "-"), " dead ", (join(",", @fred_pdead) || "-"), "\n"); ($fred_pcfg, @fred_plive, @fred_pdead) = () }
sub fred_disarm { return unless $fred_parmed; $fred_parmed = 0; fred_ptime(0, 0); $SIG{PROF} = $fred_pold // "DEFAULT" }
sub fred_arm { return if !$fred_pcfg || $fred_parmed || (defined $SIG{PROF} && $SIG{PROF} ne "" && $SIG{PROF} ne "DEFAULT"); ($fred_pold, $fred_parmed) = ($SIG{PROF}, 1); $SIG{PROF} = \&DB::fred_prof;
  fred_ptime($fred_pcfg->[0], $fred_pcfg->[0]) }
our ($fred_ptimer, $fred_ptpid);
sub fred_ptime { my ($first, $every) = @_; my $ns = sub { my $t = shift; (int($t), int(($t - int($t)) * 1e9)) };
  if ($fred_x86_64) {
    if (!defined $fred_ptimer || $fred_ptpid != $$) { my $id = pack("i", 0); my $ev = pack("Qii", 0, POSIX::SIGPROF(), 0) . ("\0" x 48);
      if (syscall(222, 2, $ev, $id) == 0) { ($fred_ptimer, $fred_ptpid) = (unpack("i", $id), $$) } else { $fred_ptimer = undef } }
    if (defined $fred_ptimer) { my $s = pack("q4", $ns->($every), $ns->($first)); syscall(223, $fred_ptimer, 0, $s, 0); return } }
  Time::HiRes::setitimer(Time::HiRes::ITIMER_PROF(), $first, $every) }
sub fred_thin { $fred_pstride *= 2 while (grep { $_->[0] % $fred_pstride == 0 } @fred_plive[0 .. $#fred_plive - 2]) > 8; my @keep;
  for my $i (0 .. $#fred_plive) { my $e = $fred_plive[$i]; if ($i >= $#fred_plive - 1 || $e->[0] % $fred_pstride == 0) { push @keep, $e; next } kill 9, $e->[2]; push @fred_pdead, $e->[2]; push @fred_pfree, $e->[1] } @fred_plive = @keep }
sub fred_prof { return if !$fred_parmed || $fred_pbusy; my $p = (caller(0))[0] // "DB";
  if ($p eq "DB") { fred_ptime(0.001, $fred_pcfg->[0]); return } return unless @fred_pfree;
  opendir(my $t, "/proc/self/task") or return; my $n = grep { /^\d+$/ } readdir $t; closedir $t; return if $n > 1;
  my $old = POSIX::SigSet->new; POSIX::sigprocmask(POSIX::SIG_BLOCK(), POSIX::SigSet->new(POSIX::SIGINT(), POSIX::SIGCHLD()), $old);
  local $fred_pbusy = 1; syscall(0x46524544, 1); fred_probe(); syscall(0x46524544, 0); POSIX::sigprocmask(POSIX::SIG_SETMASK(), $old) }
sub fred_probe { my ($slot, $idx) = (pop @fred_pfree, $fred_pn++);
  my %off; opendir(my $d, "/proc/self/fd"); for my $fd (grep { /^\d+$/ } readdir $d) { my $o = POSIX::lseek($fd, 0, 1); $off{$fd} = $o if defined $o } closedir $d;
  my $g; { local @SIG{qw(HUP QUIT TSTP TTIN TTOU)} = ("IGNORE") x 5; local $SIG{INT} = $SIG{INT}; $g = fred_copy();
    if ($g) { if ($g > 0) { push @fred_plive, [$idx, $slot, $g]; fred_thin() } else { push @fred_pfree, $slot } return } $g = fred_paused($fred_pcfg->[1 + $slot]) }
  POSIX::lseek($_, $off{$_}, 0) for keys %off; ($fred_parmed, $fred_pcfg, @fred_plive, @fred_pdead) = (0); $SIG{PROF} = $fred_pold // "DEFAULT";
  fred_out("\@fred fork $g\n"); $DB::single = 1 }
sub fred_frame { my ($f, $l, $fn) = fred_here(); return fred_out() unless defined $f; my $src = ${ $main::{"_<$f"} }[$l]; $src = "\n" unless defined $src;
  my $p = "$fn($f:"; fred_out(length($p) > 30 ? "$p$l):\n$l:\t$src" : "$p$l):\t$src"); }
sub fred_eval { local $DB::trace = $DB::trace & ~2; my @r = eval "package $DB::package; $_[0]"; if ($@) { my $e = $@; fred_out($e); die "\n" } @r }
sub fred_uframes { my $top = $_[0] ? qr/^DB::(DB|__ANON__)$/ : qr/^DB::DB$/; my @c; for (my $i = 1; my @x = caller($i); $i++) { push @c, [$x[0], $x[3]] }
  my $d = 1; $d++ while $d <= @c && $c[$d - 1][1] !~ $top; my @f; my $ev = grep { $c[$_ - 1][1] eq "(eval)" } 2 .. ($d < @c ? $d : scalar @c);
  for (my $i = $d; $i <= @c; $i++) { my $n = $i < @c ? $c[$i][1] : undef; $ev++ if defined $n && $n eq "(eval)"; push @f, [$i - $ev, defined $n ? $n : "main", $c[$i - 1][0]] } @f }
sub fred_scope { my @f = fred_uframes(); fred_out("FREDSCOPEKEY " . (@f - 1) . ":$f[0][1]\n") }
sub fred_scoped { my ($key, @f) = @_; my ($depth, $name) = split /:/, $key, 2; return -1 unless defined $name;
  my $m = @f - 1 - $depth; return ($m >= 0 && $m < @f && $f[$m][1] eq $name) ? $m : -1 }
sub fred_scope_where { my @f = fred_uframes(); my $m = fred_scoped($_[0], @f); fred_out($m >= 0 ? "FREDSCOPE $m $f[$m][1]\n" : "FREDSCOPE -1\n") }
sub fred_eval_scoped { my ($key, $expr) = @_; my @f = fred_uframes(); my $m = fred_scoped($key, @f); return fred_eval($expr) if $m <= 0;
  my $pad = eval { require PadWalker; PadWalker::peek_my($f[$m][0]) }; return fred_eval($expr) unless $pad;
  my $decl = join "", map { my $s = substr($_, 0, 1); "my $_ = ${s}{\$_[1]->{'$_'}};" } grep { /^[\$\@%]\w+$/ } keys %$pad;
  local $DB::trace = $DB::trace & ~2; my @r = FredScope::ev("package $f[$m][2]; no strict; $decl $expr", $pad);
  if ($@) { my $e = $@; fred_out($e); die "\n" } @r }
{ package FredScope; sub ev { eval $_[0] } }
sub fred_fmt { my $v = join ",", map { !defined $_ ? "undef" : $_ eq "" ? q("") : $_ } @_; $v =~ s/\\/\\\\/g; $v =~ s/\n/\\n/g; $v }
sub fred_value { fred_out("\@fred value " . fred_fmt(@_) . "\n") }
our ($fred_wkey, $fred_wexpr, $fred_wref, $fred_away, $fred_awayv, %fred_wsubs);
sub fred_wval { my @f = fred_uframes(1); return "(no frame)" unless @f; my $m = fred_scoped($fred_wkey, @f); $m = 0 if $m < 0;
  my $pad = eval { require PadWalker; PadWalker::peek_my($f[$m][0]) } || {}; my $k = "$f[$m][2] " . join(" ", sort keys %$pad);
  my $s = $fred_wsubs{$k} //= do { my $decl = join "", map { my $c = substr($_, 0, 1); "my $_ = ${c}{\$_[0]->{'$_'}};" } grep { /^[\$\@%]\w+$/ } keys %$pad;
    eval("package $f[$m][2]; no strict; no warnings; sub { $decl $fred_wexpr }") || do { my $e = $@; sub { die $e } } };
  local $DB::trace = $DB::trace & ~2; my @r = eval { $s->($pad) }; return $@ ? "(dies: " . (split /\n/, $@)[0] . ")" : fred_fmt(@r) }
sub fred_wstep { my $v = fred_wval(); ($fred_away, $fred_awayv) = ($fred_sn, $v) if $v ne $fred_wref }
sub fred_bps { fred_out();
  for my $k (sort grep { /^_</ } keys %main::) { my $f = substr($k, 2); my $h = \%{ $main::{$k} };
    for my $l (sort { $a <=> $b } grep { /^\d+$/ } keys %$h) { my ($c) = split /\0/, $h->{$l}; next unless defined $c && $c ne "";
      fred_out("\@fred bp ", fred_w("$f:$l"), " ", (DB::_is_breakpoint_enabled($f, $l) ? 1 : 0), " ", fred_w($c eq "1" ? "$f:$l" : "$f:$l if $c"), "\n"); } }
  for my $e (@DB::to_watch) { my $w = fred_w("w $e"); fred_out("\@fred bp ", $w =~ s/ /\\x20/gr, " 1 $w\n") } }
sub fred_watch { my ($e, $on) = @_; my @k = grep { $DB::to_watch[$_] ne $e } 0 .. $#DB::to_watch;
  @DB::old_watch = @DB::old_watch[@k]; @DB::to_watch = @DB::to_watch[@k]; if ($on) { my $v; { local $DB::trace = $DB::trace & ~2; $DB::evalarg = $e; ($v) = join(" ", &DB::eval) }
    push @DB::to_watch, $e; push @DB::old_watch, defined $v ? "'$v'" : "undef" } $DB::trace = @DB::to_watch ? $DB::trace | 2 : $DB::trace & ~2;
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
  open my $fh, ">", $_[0] or die "$_[0]: $!"; print $fh Data::Dumper::Dumper([\@b, {%DB::alias}, [@DB::to_watch], [@DB::hist], [@DB::truehist], $DB::trace & 1]); close $fh; }
sub fred_load { fred_out(); my $s = do { local $DB::trace = $DB::trace & ~2; do $_[0] } or die "$_[0]: $@$!"; my ($b, $al) = @$s;
  for my $k (grep { /^_</ } keys %main::) { my $f = substr($k, 2); local *dbline = $main::{$k};
    for my $l (grep { /^\d+$/ } keys %dbline) { delete $dbline{$l}; DB::_delete_breakpoint_data_ref($f, $l) } }
  for my $e (@$b) { my ($f, $l, $v, $en) = @$e; next unless $main::{"_<$f"}; local *dbline = $main::{"_<$f"};
    $dbline{$l} = $v; DB::_set_breakpoint_enabled_status($f, $l, $en); $DB::had_breakpoints{$f} |= 1 }
  %DB::alias = %$al; @DB::to_watch = @DB::old_watch = (); fred_watch($_, 1) for @{ $s->[2] || [] }; @DB::hist = @{ $s->[3] } if $s->[3]; @DB::truehist = @{ $s->[4] } if $s->[4]; $DB::trace = ($DB::trace & ~1) | ($s->[5] // 0); $DB::otrace = $DB::trace; }
if (delete $ENV{FRED_RECORD}) { $^P &= ~1; eval "INIT { syscall(0x46524544, 1); DB::setterm(); syscall(0x46524544, 0) }" }
}
