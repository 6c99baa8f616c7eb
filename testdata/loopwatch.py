"""loopwatch: x changes inside a loop turn that continues to a breakpoint in the loop pass over (fred-reverse-watch x from the fourth stop)."""
x = 1
x = 0
for i in range(4):
    if i == 2:
        x = 7
        x = 0
    y = i
print(x)
