"""spaces: a string that reads "a  b" (two blanks) once it is built."""
s = ""
for w in ["a", " ", " ", "b"]:
    s += w
print(repr(s))
