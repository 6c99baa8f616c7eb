import gdb
fred_scope = None
def _fred_frame_key(f):
    o = f.older()
    return (f.name(), int((o or f).read_register('sp')))
def fred_scope_here():
    global fred_scope
    fred_scope = _fred_frame_key(gdb.selected_frame())
def _fred_scope_frame():
    try:
        f = gdb.newest_frame() if fred_scope else None
        while f is not None and _fred_frame_key(f) != fred_scope:
            f = f.older()
        return f
    except gdb.error:
        return None  # no frames (the program is gone): gdb's own answer says so
def fred_scope_where():
    f = _fred_scope_frame()
    print('FREDSCOPE %d %s' % (f.level(), f.name()) if f else 'FREDSCOPE -1')
def fred_eval_scoped(q):
    f = _fred_scope_frame()
    if f is None:
        return gdb.execute('with scheduler-locking on -- interpreter-exec mi ' + q)
    level = gdb.selected_frame().level()
    f.select()
    try:
        gdb.execute('with scheduler-locking on -- interpreter-exec mi ' + q)
    finally:
        g = gdb.newest_frame()
        for _ in range(level):
            g = g.older() or g
        g.select()
