# watch: an invariant ($total >= 0) that one late iteration breaks.
use strict;
use warnings;

our @data = (0) x 300;
our $total = 0;

sub update {
    my ($i) = @_;
    my $v = $i * 7 % 13;
    $v = -1000000 if $i == 277;    # the bug
    $data[$i] = $v;
    $total += $v;
}

for my $i (0 .. 299) {
    update($i);
}
print "total=$total\n";
