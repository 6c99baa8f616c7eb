# input: reads lines while it runs, and prints what looks like perl -d.
use strict;
use warnings;

print "  DB<1> this line is the program's, not the debugger's\n";
print "main::(/nowhere/fake.pl:1):\n";
print "name? ";
my $name = <STDIN>;
chomp $name;
my $seed = rand();
my %words = (a => 1, b => 2, c => 3);
my $order = join ",", keys %words;
print "hello $name (", scalar(keys %words), " words)\n";
print "count? ";
my $n = <STDIN>;
our $total = 0;
for my $i (0 .. $n - 1) {
    $total += $i;
}
print "total=$total pid=$$\n";
