# bigread: reads a file whole (its reads past 64 KiB are logged by
# reference in a debugging session) and prints a checksum of it.
#   bigread.pl FILE
use strict;
use warnings;

my $path = shift;
open(my $f, '<:raw', $path) or die "$path: $!";
my $data = do { local $/; <$f> };
close $f;
my $sum = unpack("%32C*", $data);
print "read ", length($data), " bytes, sum $sum\n";
