# scope: a reverse-watch's names are the frame's it began in.
use strict;

sub helper {
    my @items = (0 .. 9);    # another @items, of the same length
    return scalar(@items) + $_[0];
}

sub add {
    my ($xs, $v) = @_;
    push @$xs, $v;
}

sub main {
    my @items;
    for my $i (0 .. 9) {
        add(\@items, $i);
        helper($i);
    }
    print scalar(@items), "\n";
}

main();
