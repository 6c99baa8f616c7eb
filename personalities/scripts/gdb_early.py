import gdb
# fred's own breakpoints on the way to main (fred's run): at the
# executable's entry point, then at main, with the addresses they stop at.
fred_early = {}
def fred_pc():
    return int(gdb.parse_and_eval('$pc')) & 0xffffffffffffffff
def fred_early_forget():
    for b, _ in fred_early.values():
        if b.is_valid():
            b.delete()
    fred_early.clear()
def fred_to_entry():
    # The entry point (relocated once the program runs): there the dynamic
    # loader and the replay library are done and the program's own
    # constructors have not run yet. A static program starts there.
    import re
    fred_early_forget()
    m = re.search(r'Entry point: (0x[0-9a-f]+)', gdb.execute('info files', to_string=True))
    if m is None:
        return
    addr = int(m.group(1), 16)
    if addr == fred_pc():
        print('@fred at the entry point')
        return
    fred_early['entry'] = (gdb.Breakpoint('*%d' % addr, internal=True, temporary=True), [addr])
    print('@fred to the entry point')
def fred_to_main():
    fred_early_forget()
    b = gdb.Breakpoint('main', internal=True, temporary=True)
    fred_early['main'] = (b, [l.address for l in b.locations])
def fred_early_reached(which):
    # The breakpoint was hit (a temporary one is gone) and the program
    # stands at it now: a breakpoint of the person's at the same place
    # may be the one gdb reported.
    b, at = fred_early.get(which, (None, None))
    if b is None or b.is_valid() or gdb.selected_inferior().pid == 0:
        return
    if fred_pc() in at:
        print('@fred reached')
