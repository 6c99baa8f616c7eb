# spin: runs until interrupted.
our $count = 0;
while (1) {
    $count++;
}
