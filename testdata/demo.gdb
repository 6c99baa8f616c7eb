# A short fred session on testdata/steps.c (make demo).
break square
run
next
next
fred-history
continue
print total
fred-help
