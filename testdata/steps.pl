# steps: calls, a loop and recursion, for stepping forward and back.
use strict;
use warnings;

our $total = 0;

sub square {
    my ($x) = @_;
    my $r = $x * $x;
    return $r;
}

sub fact {
    my ($n) = @_;
    return 1 if $n <= 1;
    return $n * fact($n - 1);
}

for my $i (0 .. 4) {
    $total += square($i);
    print "i=$i total=$total\n";
}
my $f = fact(5);
print "fact=$f\n";
