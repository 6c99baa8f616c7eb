# read_long: one call (tally) reads a file line by line, far past perl's
# read buffer; reverse commands over that one `n` replay the reads.
use strict;
use warnings;

sub tally {
    my ($path) = @_;
    open my $fh, "<", $path or die "$path: $!";
    my ($lines, $sum) = (0, 0);
    while (my $l = <$fh>) {
        $lines++;
        $sum += length $l;
    }
    close $fh;
    return "$lines $sum";
}

my $path = $ARGV[0];
my $r = tally($path);
print "r=$r\n";
