"""syntax: a program pdb cannot compile."""
x = 1
print("a"
y = 2
