set libthread-db-search-path /nonexistent
set index-cache directory /tmp/wp/ic
set index-cache enabled on
python
import time
gdb.execute("attach 3775", to_string=True)
t=time.time()
for i in range(5):
  gdb.execute("detach", to_string=True)
  gdb.execute("attach 3775", to_string=True)
print("XX set libthread-db-search-path /nonexistent", (time.time()-t)/5)
end
detach
