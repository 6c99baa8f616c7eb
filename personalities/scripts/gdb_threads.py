import os, re, json
_fred_wait = re.compile(r'futex|lll_lock_wait|lock_wait|pthread_cond_(timed|clock)?wait|pthread_join|clockwait|sem_(timed|clock)?wait|poll|select|epoll_wait|nanosleep|pause|sigsuspend|sigwait|^(__libc_)?read$|accept|recv|wait_turn|take_turn|^syscall$')
def fred_where_thread(t):
    t.switch()
    f, i, waiting, top = gdb.newest_frame(), 0, 0, None
    while f is not None and i < 64 and top is None:
        n = f.name() or '??'
        sal = f.find_sal()
        if sal.symtab and os.path.exists(sal.symtab.fullname()):
            top = (n, sal.symtab.fullname(), sal.line)
        elif _fred_wait.search(n):
            waiting = 1
        f, i = f.older(), i + 1
    top = top or ('??', '??', 0)
    name = json.dumps(t.name or '')
    return '@fred thread %d %d %d %s %s %s:%d' % (t.num, t.ptid[1], waiting, name, top[0], top[1], top[2])
def fred_threads():
    try:
        cur = gdb.selected_thread()
    except SystemError:
        cur = None  # it has exited
    out = [fred_where_thread(t) for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num)]
    if cur is not None and cur.is_valid():
        cur.switch()
    print('\n'.join(out))
def fred_thread_now():
    try:
        t = gdb.selected_thread()
    except SystemError:
        return  # it has exited
    if t is not None:
        print(fred_where_thread(t))
def fred_thread(lwp):
    for t in gdb.selected_inferior().threads():
        if t.ptid[1] == lwp:
            t.switch()
            return
    raise gdb.GdbError('no thread with LWP %d' % lwp)
