# long_call: main makes one call (work) that runs over a million
# statements; a late one sets the global $broken. For reverse commands
# over a single long `n`.
use strict;
use warnings;
our $n = $ARGV[0] // 1000;
our $broken = 0;

sub work {
    my ($n) = @_;
    my $t = 0;
    for my $i (0 .. $n - 1) {
        $t += $i % 3;
        $broken = 1 if $i == int($n * 9 / 10);
    }
    return $t;
}

sub main {
    my $r = work($n);
    print "r=$r broken=$broken\n";
}

main();
