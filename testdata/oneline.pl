# oneline: two calls of a sub written on one line, on one line; the
# second call makes the change a reverse-watch looks for.
use strict;
use warnings;

our @deg = (0) x 4;
our @adj = map { [] } 0 .. 3;

sub add_edge { my ($x, $y) = @_; $adj[$x][ $deg[$x]++ ] = $y; }

my ($u, $v) = (1, 2);
add_edge(0, 3);
add_edge($v, $u); add_edge($u, $v);    # LINE:both
add_edge(3, 0);
print "deg=$deg[1]\n";    # LINE:end
