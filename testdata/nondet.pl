# nondet: prints values from the outside world, for the replay log tests.
# Usage: nondet.pl FILE PORT (PORT 0: no socket).
use strict;
use warnings;
use Time::HiRes ();
use IO::Socket::INET;

my ($path, $port) = @ARGV;
my $now = time;
my $hires = Time::HiRes::time();
my $r = rand();
open(my $u, "<", "/dev/urandom") or die "urandom: $!";
sysread($u, my $bytes, 8);
close($u);
my $dev = unpack("H*", $bytes);
open(my $f, "<", $path) or die "$path: $!";
my $line = <$f>;
chomp $line;
close($f);
my $sock = "-";
if ($port) {
    my $s = IO::Socket::INET->new(PeerAddr => "127.0.0.1", PeerPort => $port, Proto => "tcp") or die "connect: $!";
    sysread($s, $sock, 100);
    chomp $sock;
    close($s);
}
print "time=$now hires=$hires random=$r dev=$dev\n";
print "file=$line socket=$sock\n";
print "done\n";
