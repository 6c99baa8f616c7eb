n = 200000  # chatty: a loop of about 1,000,000 steps that says how far it got
total = 0
for i in range(n):
    total += i
    if i % 50000 == 0:
        print("at %d" % i)
print("total=%d" % total)  # LINE:end
