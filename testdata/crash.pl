# crash: dies on a missing node, or exits with the status given.
use strict;
use warnings;

sub walk {
    my ($p) = @_;
    $p = $p->{next}{next}{next};
    $p->set(42);
    return $p;
}

exit $ARGV[0] if @ARGV;
my $c = { value => 3 };
my $b = { value => 2, next => $c };
my $a = { value => 1, next => $b };
walk($a);
print "unreachable\n";
