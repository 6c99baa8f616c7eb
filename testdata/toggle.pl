# toggle: a flag that rises, falls and rises again inside one continue.
# fred-reverse-watch $flag == 1 from the end must land on the last rise.
use strict;
use warnings;

our $flag = 0;
our $sink = 0;

sub set_flag { my ($v) = @_; $flag = $v; }

sub work {
    my ($n) = @_;
    for my $i (0 .. $n - 1) {
        $sink += $i;
    }
}

set_flag(1);    # LINE:first
work(300);      # LINE:high
set_flag(0);
work(300);      # LINE:low
set_flag(1);    # LINE:last
print "flag=$flag\n";    # LINE:end
