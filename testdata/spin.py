"""spin: runs until interrupted."""
count = 0
while True:
    count += 1
