import gdb
from urllib.parse import quote, unquote
fred_scope = None
def _fred_frame_key(f):
    o = f.older()
    return (f.name(), int((o or f).read_register('sp')))
def fred_scope_here():
    global fred_scope
    fred_scope = _fred_frame_key(gdb.selected_frame())
    print('FREDSCOPEKEY %x:%s' % (fred_scope[1], quote(fred_scope[0] or '')))
def _fred_scope_frame(key=None):
    key = key or fred_scope
    try:
        f = gdb.newest_frame() if key else None
        while f is not None and _fred_frame_key(f) != key:
            f = f.older()
        return f
    except gdb.error:
        return None  # no frames (the program is gone): gdb's own answer says so
def fred_scope_where():
    f = _fred_scope_frame()
    print('FREDSCOPE %d %s' % (f.level(), f.name()) if f else 'FREDSCOPE -1')
def fred_in_scope(fn, key=None):
    f = _fred_scope_frame(key)
    if f is None:
        return fn()
    level = gdb.selected_frame().level()
    f.select()
    try:
        return fn()
    finally:
        g = gdb.newest_frame()
        for _ in range(level):
            g = g.older() or g
        g.select()
def fred_eval_scoped(q):
    fred_in_scope(lambda: gdb.execute('with scheduler-locking on -- interpreter-exec mi ' + q))
def _fred_scope_key(s):
    sp, name = s.split(':', 1)
    return (unquote(name) or None, int(sp, 16))
def _fred_scoped_watch(key, expr):
    return fred_in_scope(lambda: gdb.Breakpoint(expr, gdb.BP_WATCHPOINT, gdb.WP_WRITE, internal=True), _fred_scope_key(key) if key else None)
def fred_watch_kind(key, expr):
    b = _fred_scoped_watch(key, expr)
    kind = 'hw' if b.type == gdb.BP_HARDWARE_WATCHPOINT else 'sw'
    b.delete()
    print('FREDWATCH ' + kind)
