# bench_watch: a loop of N iterations ($ARGV[0]) whose invariant
# ($total >= 0) the iteration at 90% breaks; make bench times
# fred-reverse-watch $total >= 0 from the print at the end.
use strict;
use warnings;

our $n = $ARGV[0] // 1000;
our $bad = int($n * 9 / 10);
our $total = 0;

sub update {
    my ($i) = @_;
    my $v = $i % 7;
    $v = -10 * $n if $i == $bad;    # the bug
    $total += $v;
}

for my $i (0 .. $n - 1) {
    update($i);
}
print "total=$total bad=$bad\n";
