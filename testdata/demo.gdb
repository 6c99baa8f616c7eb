# A short fred session on testdata/watch.c (make demo): the program keeps a
# running sum that must never go negative; one late iteration breaks it.
skip -gfi ./*/*
break main
run
break 21
continue
print sum
# Where did sum go negative? Binary search over the history:
fred-reverse-watch sum >= 0
print i
print v
step
print sum
# Walk back and forth in time:
fred-reverse-step
fred-reverse-finish
fred-reverse-next
next
fred-history
fred-list
