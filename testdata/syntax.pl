# syntax: a program perl cannot compile.
my $x = 1;
print "a";
my $y = 2 +;
