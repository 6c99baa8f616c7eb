# serial_server.pl: serial_server.py in Perl. One thread serves its clients
# one after the other: it accepts one, reads its request, works on it for a
# while, answers, and keeps the connection until the end.
# Usage: serial_server.pl tcp:PORT [N]: a TCP server on 127.0.0.1, bound
# after the program's start (a replay binds it again).
use strict;
use warnings;
use IO::Socket::INET;
use Time::HiRes qw(time);

my ($port) = ($ARGV[0] // '') =~ /^tcp:(\d+)$/ or die "usage: serial_server.pl tcp:PORT [N]\n";
my $n = $ARGV[1] // 2;
my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Listen => 8, Proto => 'tcp')
  or die "listen: $!\n";
my @conns;
our $served = 0;
for my $i (0 .. $n - 1) {
    my $c = $listener->accept or die "accept: $!\n";
    push @conns, $c;
    close $listener if $i == $n - 1;
    my $peer = $c->peerhost;
    sysread($c, my $buf, 64);
    my ($t, $work) = (time, 0);
    $work++ while time - $t < 0.3;
    $served++;    # LINE:request
    syswrite($c, "ans $served\n");
}
close $_ for @conns;
print "served $served\n";
