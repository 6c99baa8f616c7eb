# recurse: a recursive sub whose fifth call, deep in the recursion, makes
# the change a reverse-watch looks for; deeper calls and the returns of
# all of them follow it.
use strict;
use warnings;

our $hits = 0;

sub count {
    my ($n) = @_;
    return 0 if $n == 0;
    $hits++;    # LINE:change
    return 1 + count($n - 1);
}

my $total = count(8);
print "total=$total hits=$hits\n";    # LINE:end
