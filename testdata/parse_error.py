"""parse_error: a record without "=" raises ValueError in parse(), uncaught
(pdb's post-mortem)."""


def parse(records):
    out = {}
    for r in records:
        k, v = r.split("=")
        out[k] = v
    return out


records = ["a=1", "b=2", "broken", "c=3"]
config = parse(records)
print(config)
