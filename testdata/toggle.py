flag = 0  # a flag that rises, falls and rises again inside one continue:
sink = 0  # fred-reverse-watch flag == 1 from the end lands on the last rise


def set_flag(v):
    global flag
    flag = v


def work(n):
    global sink
    for i in range(n):
        sink += i


set_flag(1)  # LINE:first
work(300)  # LINE:high
set_flag(0)
work(300)  # LINE:low
set_flag(1)  # LINE:last
print("flag=%d" % flag)  # LINE:end
