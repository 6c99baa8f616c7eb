import gdb
import re
def fred_break(spec, internal=True):
    s = spec.split(" if ", 1)
    # "WHERE ignore N": the count a continue ran with, to replay it.
    ign = re.search(r" ignore (\d+)$", s[0])
    if ign:
        s[0] = s[0][:ign.start()]
    w = s[0].split(" ", 1)
    if w[0] == "fredwatch":
        key, expr = spec.split(" ", 2)[1:]
        b = _fred_scoped_watch(key if key != "-" else None, expr)
        s = s[:1]
    elif w[0] == "catch":
        gdb.execute(s[0], to_string=True)
        b = gdb.breakpoints()[-1]
    elif w[0] in ("watch", "rwatch", "awatch") and len(w) > 1:
        b = gdb.Breakpoint(w[1], gdb.BP_WATCHPOINT, {"watch": gdb.WP_WRITE, "rwatch": gdb.WP_READ, "awatch": gdb.WP_ACCESS}[w[0]], internal=internal)
    else:
        b = gdb.Breakpoint(s[0], internal=internal)
    b.condition = s[1] if len(s) > 1 else None
    if ign:
        b.ignore_count = int(ign.group(1))
    if internal:
        fred_bp[b.number] = b
    print("Breakpoint %d at" % b.number)
