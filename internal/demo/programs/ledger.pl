# ledger: fred's guided demo (fred --demo perl).
# A bank balance must never go negative. It starts at 100 and takes 1,000
# small deposits and withdrawals; one of them, late in the run, is a bug.
# Which day broke the balance? fred-reverse-watch finds it.
use strict;
use warnings;

our $balance = 100;
our $days    = 0;

sub amount {
    my ($day) = @_;
    my $amt = $day * 37 % 23 - 10;    # between -10 and 12
    $amt = -5000 if $day == 811;      # the bug: a withdrawal nobody checked
    return $amt;
}

sub apply {
    my ($day) = @_;
    my $amt = amount($day);
    $balance += $amt;
    $days++;
}

for my $day (1 .. 1000) {
    apply($day);
}
print "balance after $days days: $balance\n";
