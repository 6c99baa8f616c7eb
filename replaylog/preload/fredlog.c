/*
 * fredlog: the in-process half of fred's replay log (package replaylog,
 * format in replaylog/format.go, which must agree with this file).
 *
 * Loaded into the debugged program with LD_PRELOAD. The first time the
 * program runs a stretch, the wrappers below record what the outside world
 * answered (clocks, randomness, reads, polls, pids, mmap addresses); when
 * fred restores a snapshot and runs the stretch again, they return the
 * recorded answers instead of asking again.
 *
 * The log is one file, mapped MAP_SHARED at a fixed size: a 4096-byte
 * control header, then entries. Because the mapping is shared, every copy
 * of the program (the live one, CRIU images, the fork backend's paused
 * copies) sees the same log, and neither CRIU nor fork copies its
 * contents; because the file never changes size, CRIU's check that a
 * restored file has the size it had at dump time always passes. The
 * position in the log is a private global: it travels with each snapshot.
 * So after a restore the program finds its position below the log's end
 * and replays, until it reaches the end and records again.
 *
 * A call that does not match the next entry (another call, another fd:
 * the program took another path) is a divergence: one line on stderr,
 * the log is cut there and recording starts a new branch. A snapshot
 * whose past was cut away (restored after a divergence that happened
 * before its position) no longer replays; it records from where it is.
 *
 * Active only where FREDLOG_FILE is set and the process is not a wrapper
 * (env, a shell, setarch) on its way to exec the program; the variable is
 * removed at start so that programs the program runs are not logged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <dirent.h>
#include <sys/resource.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))

/* Entry kinds: the first byte of every entry (replaylog/format.go). */
enum {
	K_TIME = 1, K_TIMEOFDAY, K_CLOCK, K_RANDOM, K_READ, K_PREAD, K_RECV,
	K_ACCEPT, K_POLL, K_SELECT, K_EPOLL, K_GETPID, K_GETPPID, K_MMAP,
	K_THREAD, K_BRANCH, K_STDIO, K_SIGNAL,
	/* synchronisation: kind byte, sv result (0, an errno, or for
	 * pthread_create the new thread's number) */
	K_MUTEX_LOCK, K_MUTEX_TRYLOCK, K_MUTEX_TIMEDLOCK, K_MUTEX_UNLOCK,
	K_RW_RDLOCK, K_RW_WRLOCK, K_RW_TRYRDLOCK, K_RW_TRYWRLOCK,
	K_RW_TIMEDRDLOCK, K_RW_TIMEDWRLOCK, K_RW_UNLOCK,
	K_COND_WAIT, K_COND_TIMEDWAIT, K_COND_SIGNAL, K_COND_BROADCAST,
	K_SEM_WAIT, K_SEM_TRYWAIT, K_SEM_TIMEDWAIT, K_SEM_POST,
	K_CREATE, K_JOIN,
	K_FILE, /* a read of a regular file, by reference (file_ref) */
	K_DEBUGGER, /* an in-process debugger began talking with the person here */
	K_OPENW, /* a regular file opened for writing, and its size then */
	K_SEND, /* a send on a socket: not sent again on replay */
	K_BIND, /* a bind, and the bound socket's inode */
	K_PEER, /* an accepted connection's peer address (after its accept) */
	K_STAT, /* stat, lstat, fstat, fstatat, statx (FREDLOG_STAT=1): the struct; a path's by its key */
	K_OPENR, /* a read-only open's result (FREDLOG_STAT=1): whether it found its file, its size */
	K_UNAME, /* uname (FREDLOG_STAT=1): the struct utsname, the host's name in it */
	/* log version 3 */
	K_SEEK, /* lseek to the end, data or a hole (FREDLOG_STAT=1): the offset */
	K_OPENDIR, /* opendir, fdopendir (FREDLOG_STAT=1): whether it found its directory */
	K_READDIR, /* readdir (FREDLOG_STAT=1): the entry, or the end */
	K_LAST = K_READDIR,
};
static const char *kname[] = {"?", "time", "gettimeofday", "clock_gettime",
	"getrandom", "read", "pread", "recv", "accept", "poll", "select",
	"epoll_wait", "getpid", "getppid", "mmap", "thread", "branch", "stdio read", "signal",
	"pthread_mutex_lock", "pthread_mutex_trylock", "pthread_mutex_timedlock", "pthread_mutex_unlock",
	"pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock",
	"pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock", "pthread_rwlock_unlock",
	"pthread_cond_wait", "pthread_cond_timedwait", "pthread_cond_signal", "pthread_cond_broadcast",
	"sem_wait", "sem_trywait", "sem_timedwait", "sem_post", "pthread_create", "pthread_join", "file read",
	"debugger", "open for writing", "send", "bind", "peer address", "stat", "open for reading", "uname",
	"lseek", "opendir", "readdir"};
_Static_assert(sizeof kname / sizeof *kname == K_LAST + 1, "a name for every kind");

#define HDR 4096
#define MAXCUTS 400
#define WAIT_SLICE 200 /* ms */
#define SWITCH (-4242) /* the slice ended and the log is ahead: replay */
#define MAGIC "FREDLOG1"

/* The control header, shared by every copy of the program. */
struct ctl {
	char magic[8];
	uint32_t version, hdr; /* 1, HDR */
	uint64_t size;         /* the file's size: entries may not pass it */
	uint64_t end;          /* byte offset after the last entry */
	uint64_t count;        /* entries before end */
	uint64_t ncuts;        /* cuts ever made; cuts[i % MAXCUTS] is where */
	uint64_t divergences;
	uint64_t cuts[MAXCUTS];
	uint64_t notices;      /* messages so far; the latest is notice */
	char notice[256];
	uint64_t zeroed;       /* the file is written (not a hole) up to here */
	uint64_t timeswitch;   /* said that an interpreter's threads switch by time */
	uint64_t strict;       /* odd while fred replays a command of its own (a generation) */
	uint64_t threaded;     /* 1 once the program created a thread: it has or had threads */
};

/* Private state: in the program's memory, so each snapshot has its own. */
HIDDEN int fredlog_active;
HIDDEN int fredlog_tty;  /* log reads from terminals (gdb: the debugger is elsewhere) */
HIDDEN int fredlog_mmap; /* log mmap addresses */
HIDDEN int fredlog_pid;  /* log getpid and getppid */
/* In-process debuggers (pdb) say when the person is using them: what the
 * debugger asks for then is its own business, not the program's. */
HIDDEN int fredlog_debugger;
HIDDEN char *fredlog_base;
HIDDEN struct ctl *fredlog_ctl;
HIDDEN uint64_t fredlog_pos = HDR, fredlog_seq, fredlog_mycuts;
static int64_t last_time, last_tv, last_clock[16];
/* fredlog_mono_lenient (FREDLOG_MONO=lenient, interpreters): CPython reads
 * the monotonic clock at every lock acquisition (its deadline), and the
 * debugger's own work inside the program takes locks the recorded run did
 * not, or not at the same places: a monotonic reading the replay makes
 * and the log has not gets the last one again, one the log has and the
 * replay does not make is passed over, instead of a divergence. */
static int fredlog_mono_lenient;
static int lastthr, nthreads;
/* left: this copy left the log (a divergence) while fred replayed a
 * command of its own (ctl->strict odd; under gdb only). Whatever it does
 * from there is nobody's history: it does not cut the log (the person's history past this point stays replayable:
 * fred puts them back there), and its threads stop at their next logged
 * call (stay), so that nothing reaches the outside (a server's answers),
 * until fred ends the copy. If fred lets go of strict first (it keeps the
 * copy after all), the copy cuts the log where it is and records on. */
static int fredlog_left;
/* initial-exec: a preloaded library has static TLS, so no lookup per access */
static __thread __attribute__((tls_model("initial-exec"))) int mythr, inlib;
/* mydbg: this thread is the one talking with the person (fredlog_debugger) */
static __thread __attribute__((tls_model("initial-exec"))) int mydbg;
/* nheld: the mutexes and rwlocks this thread holds (taken through us).
 * A thread that holds one does not wait for an in-process debugger that
 * talks: the debugger's thread may need it first (CPython's take_gil reads
 * the clock holding the GIL's mutex, which pdb's thread takes to hand the
 * GIL over). It goes on to let it go, and waits at its next call. */
static __thread __attribute__((tls_model("initial-exec"))) int nheld;
/* intr_norestart: the latest handler the trampoline ran in this thread
 * would not have the kernel restart the call it interrupted (no
 * SA_RESTART): a call the library waits in slices then ends with EINTR. */
static __thread __attribute__((tls_model("initial-exec"))) int intr_norestart;
static int lk;

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static int (*real_recvmmsg)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
static int (*real_accept)(int, struct sockaddr *, socklen_t *);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
static int (*real_getsockname)(int, struct sockaddr *, socklen_t *);
static int (*real_getpeername)(int, struct sockaddr *, socklen_t *);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static int (*real_getsockopt)(int, int, int, void *, socklen_t *);
static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static ssize_t (*real_getrandom)(void *, size_t, unsigned);
static size_t (*real_fread)(void *, size_t, size_t, FILE *);
static char *(*real_fgets)(char *, int, FILE *);
static ssize_t (*real_getdelim)(char **, size_t *, int, FILE *);
static int (*real_vfscanf)(FILE *, const char *, va_list);
static int (*real___isoc99_vfscanf)(FILE *, const char *, va_list);
static ssize_t (*real_getline)(char **, size_t *, FILE *);
static int (*real_fgetc)(FILE *);
static int (*real_getc)(FILE *);
static size_t (*real_fread_unlocked)(void *, size_t, size_t, FILE *);
static char *(*real_fgets_unlocked)(char *, int, FILE *);
static int (*real_fgetc_unlocked)(FILE *);
static int (*real_getc_unlocked)(FILE *);
static int (*real_getchar)(void);
static int (*real_stat)(const char *, struct stat *);
static int (*real_lstat)(const char *, struct stat *);
static int (*real_fstat)(int, struct stat *);
static int (*real_fstatat)(int, const char *, struct stat *, int);
static int (*real_statx)(int, const char *, int, unsigned int, struct statx *);
static int (*real_uname)(struct utsname *);
static DIR *(*real_opendir)(const char *);
static DIR *(*real_fdopendir)(int);
static struct dirent64 *(*real_readdir64)(DIR *);
static int (*real_fseeko)(FILE *, off_t, int);
static void (*real_rewinddir)(DIR *);
static void (*real_seekdir)(DIR *, long);
static pid_t (*real_fork)(void);
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_pipe)(int *);
static int (*real_pipe2)(int *, int);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static int (*real_socketpair)(int, int, int, int *);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_dup)(int);
static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);

/* The real functions are looked up at the first call, not only in the
 * constructor: other libraries' constructors may run first and call them. */
static int resolved;
static void resolve_sync(void);
#define REAL(name) real_##name = (__typeof__(real_##name))dlsym(RTLD_NEXT, #name)
static void resolve(void)
{
	REAL(read); REAL(pread); REAL(recv); REAL(recvfrom); REAL(recvmsg); REAL(recvmmsg);
	REAL(accept); REAL(accept4); REAL(bind); REAL(getsockname); REAL(getpeername); REAL(getsockopt); REAL(setsockopt); REAL(poll); REAL(select); REAL(pselect); REAL(epoll_wait);
	REAL(mmap); REAL(getrandom); REAL(fread); REAL(fgets); REAL(getdelim);
	REAL(vfscanf); REAL(__isoc99_vfscanf);
	REAL(getline); REAL(fgetc); REAL(getc); REAL(getchar); REAL(fork);
	REAL(fread_unlocked); REAL(fgets_unlocked); REAL(fgetc_unlocked); REAL(getc_unlocked);
	REAL(stat); REAL(lstat); REAL(fstat); REAL(fstatat); REAL(statx); REAL(uname);
	REAL(opendir); REAL(fdopendir); REAL(readdir64); REAL(fseeko); REAL(rewinddir); REAL(seekdir);
	REAL(clock_gettime);
	REAL(pipe); REAL(pipe2); REAL(close); REAL(dup2); REAL(dup3); REAL(dup); REAL(fcntl); REAL(fcntl64);
	REAL(write); REAL(writev); REAL(send); REAL(sendto); REAL(sendmsg); REAL(socketpair);
	REAL(open); REAL(open64); REAL(openat); REAL(openat64); REAL(fopen); REAL(fopen64);
	resolve_sync();
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}
#define READY()                                                  \
	do {                                                     \
		if (__builtin_expect(!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE), 0)) \
			resolve();                               \
	} while (0)

/* say tells the person something: on the program's stderr, unless fred
 * shows it itself (FREDLOG_QUIET=1: fred reads the latest notice from the
 * header after each command, also after replays whose output it hides). */
HIDDEN int fredlog_quiet;
static void say(const char *fmt, ...)
{
	char b[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof b - 1)
		n = sizeof b - 1;
	if (n <= 0)
		return;
	if (fredlog_ctl) {
		memcpy(fredlog_ctl->notice, b, n);
		fredlog_ctl->notice[n < 255 ? n : 255] = 0;
		__atomic_add_fetch(&fredlog_ctl->notices, 1, __ATOMIC_RELEASE);
		if (fredlog_quiet)
			return;
	}
	(void)!syscall(SYS_write, 2, "fred: replay log: ", 18);
	(void)!syscall(SYS_write, 2, b, n);
	(void)!syscall(SYS_write, 2, "\n", 1);
}

/* trace: FREDLOG_TRACE=FILE has every thread append what it records,
 * replays and waits for there, with the time and its tid (to find why a
 * replay left its log; each line opens the file, so it is slow). */
static char *trace_path;
/* (a macro: the replay's hot path pays one test, not a call and its
 * arguments, when nobody traces) */
#define TRACE(...)                          \
	do {                                \
		if (trace_path)             \
			trace(__VA_ARGS__); \
	} while (0)
static void trace(const char *fmt, ...)
{
	char b[400];
	struct timespec now;
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
	int n = snprintf(b, sizeof b, "%ld.%06ld %d ", (long)now.tv_sec, now.tv_nsec / 1000, (int)syscall(SYS_gettid));
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(b + n, sizeof b - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof b - 2)
		n = sizeof b - 2;
	b[n++] = '\n';
	int fd = syscall(SYS_open, trace_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		(void)!syscall(SYS_write, fd, b, n);
		syscall(SYS_close, fd);
	}
}

/* raw_fstat: the library's own look at a descriptor (the exported fstat
 * is the program's, logged with FREDLOG_STAT) */
static int raw_fstat(int fd, struct stat *st) { return (int)syscall(SYS_fstat, fd, st); }

/* mine: this thread holds the lock (a signal handler must not wait for it) */
static __thread __attribute__((tls_model("initial-exec"))) int mine;
static void lock(void)
{
	while (__atomic_exchange_n(&lk, 1, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
	mine = 1;
}
static int turn_ticks, turn_waiters;
/* raw_futex: the system call itself, not through syscall(), which this
 * library wraps (it is in every handoff of a turn) */
static long raw_futex(int *w, int op, int v, const struct timespec *ts)
{
#if defined(__x86_64__)
	long r;
	register long r10 __asm__("r10") = (long)ts;
	__asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_futex), "D"(w), "S"((long)op), "d"((long)v), "r"(r10)
			 : "rcx", "r11", "memory");
	return r;
#else
	static long (*real)(long, ...);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(SYS_futex, w, op, v, ts, NULL, 0);
#endif
}
static int turn_may_change(void);
static void raw_unlock(void)
{
	/* threads waiting for their turn look again when it may be theirs:
	 * at a thread entry, or where the log ends (not after each entry of
	 * the thread that has the turn: that woke them all for nothing) */
	int wake = __atomic_load_n(&turn_waiters, __ATOMIC_ACQUIRE) && turn_may_change();
	mine = 0;
	__atomic_store_n(&lk, 0, __ATOMIC_RELEASE);
	if (wake) {
		__atomic_add_fetch(&turn_ticks, 1, __ATOMIC_RELEASE);
		raw_futex(&turn_ticks, 0x81 /* FUTEX_WAKE_PRIVATE */, 1 << 30, NULL);
	}
}
/* due: a replayed call was followed by a signal in the log; its handler
 * runs as the lock is let go, when the call's own work is done (as the
 * kernel delivers signals on the way back from a system call). */
static __thread __attribute__((tls_model("initial-exec"))) int due;
static void deliver_due(void);
static void unlock(void)
{
	raw_unlock();
	if (due)
		deliver_due();
}

/* --- the other threads wait while an in-process debugger talks ---
 *
 * pdb traces one thread. Python's others would go on running while the
 * person reads and types, and what they did then is in no log, so a
 * replay of the stretch could not do it again. So, as gdb stops every
 * thread at its prompt, a thread other than the debugger's waits at its
 * next call of this library while the debugger talks (in_window),
 * holding no lock it took through us: the debugger's own code takes the
 * interpreter's lock (the GIL), whose mutex must then be free. The
 * debugger's first word is an entry (K_DEBUGGER) when other threads
 * exist: on replay, what they did after it waits until the debugger has
 * spoken there too, or has passed the place without stopping. */
static int dbg_ticks; /* futex word: changes when the debugger lets go */
static void sync_cuts(void);
static int in_window(void)
{
	return __atomic_load_n(&fredlog_debugger, __ATOMIC_ACQUIRE) > 0 && !mydbg && fredlog_active;
}
static void pause_here(void)
{
	while (in_window()) {
		int t = __atomic_load_n(&dbg_ticks, __ATOMIC_ACQUIRE);
		if (!in_window())
			break;
		/* bounded: a restore (CRIU) restarts the wait, a lost wake costs 50 ms */
		struct timespec ts = {0, 50 * 1000000};
		raw_futex(&dbg_ticks, 0x80 /* FUTEX_WAIT_PRIVATE */, t, &ts);
	}
}
/* pause_locked: the same with the log's lock held, let go meanwhile */
static void pause_locked(void)
{
	raw_unlock();
	pause_here();
	lock();
	sync_cuts();
}
static void debugger_lets_go(void)
{
	__atomic_add_fetch(&dbg_ticks, 1, __ATOMIC_RELEASE);
	raw_futex(&dbg_ticks, 0x81 /* FUTEX_WAKE_PRIVATE */, 1 << 30, NULL);
}

/* --- encoding: unsigned LEB128 varints, signed ones zigzagged --- */

static int put_uv(unsigned char *p, uint64_t v)
{
	int n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}
static int put_sv(unsigned char *p, int64_t v) { return put_uv(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

static uint64_t get_uv(uint64_t *at)
{
	uint64_t v = 0;
	for (int sh = 0; sh < 64 && *at < fredlog_ctl->end; sh += 7) {
		unsigned char c = (unsigned char)fredlog_base[(*at)++];
		v |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80))
			break;
	}
	return v;
}
static int64_t get_sv(uint64_t *at)
{
	uint64_t u = get_uv(at);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* --- the log --- */

/* The file-read entries' bases (file_ref): per descriptor, the last
 * identity and where the last read ended. */
#define MAXFILEFD 4096
struct fid {
	uint64_t dev, ino, size;
	int64_t mtime, ctime; /* ns */
};
struct fbase {
	struct fid id;
	uint64_t end;
};
static struct fbase fbases[MAXFILEFD];

static void reset_bases(void)
{
	last_time = last_tv = 0;
	memset(last_clock, 0, sizeof last_clock);
	lastthr = 0;
	memset(fbases, 0, sizeof fbases);
}

static void cut(uint64_t at)
{
	struct ctl *c = fredlog_ctl;
	c->cuts[c->ncuts % MAXCUTS] = at;
	c->ncuts++;
	c->end = at;
	c->count = fredlog_seq;
	fredlog_mycuts = c->ncuts;
}

static void append(const unsigned char *h, int hn, const void *payload, size_t pn);

/* sync checks, with the lock held, that this copy's past is still the
 * log's: a cut below our position (a divergence, or a new run) means a
 * snapshot from a history that is gone. It then records at the log's end,
 * behind a branch entry: what follows is not the history of whoever
 * replays up to the entry. */
static void sync_cuts(void)
{
	struct ctl *c = fredlog_ctl;
	if (c->ncuts == fredlog_mycuts)
		return;
	int stale = c->ncuts - fredlog_mycuts > MAXCUTS;
	for (uint64_t i = fredlog_mycuts; !stale && i < c->ncuts; i++)
		stale = c->cuts[i % MAXCUTS] < fredlog_pos;
	fredlog_mycuts = c->ncuts;
	if (!stale)
		return;
	say("this snapshot's future was recorded over by another branch of history; recording anew from entry %llu",
	    (unsigned long long)c->count);
	fredlog_pos = c->end;
	fredlog_seq = c->count;
	reset_bases();
	unsigned char b[1] = {K_BRANCH};
	append(b, 1, NULL, 0);
}

static int room(size_t n)
{
	if (fredlog_pos + n <= fredlog_ctl->size)
		return 1;
	say("the log is full (%llu bytes, FREDLOG_SIZE); nothing more is recorded or replayed",
	    (unsigned long long)fredlog_ctl->size);
	fredlog_active = 0;
	return 0;
}

/* prezero: a page of the shared mapping that is still a hole in the file
 * costs the file system (ext4) a block allocation at the first write
 * through the mapping, several times what writing it with pwrite costs;
 * and on a full disk that write would kill the program with SIGBUS. So
 * the log is written with zeros ahead of its end (16 KB to 1 MB, growing
 * with the log) before entries go there through the mapping, and a full
 * disk stops the recording instead. */
#define PREZERO_MIN (16u << 10)
#define PREZERO_MAX (1u << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 1
#define FALLOC_FL_PUNCH_HOLE 2
#endif
static char logpath[4096];
static const char zeros[1 << 16];
static int zero_to(int fd, struct ctl *c, uint64_t to)
{
	uint64_t from = c->zeroed;
	if (to > c->size)
		to = c->size;
	while (c->zeroed < to) {
		uint64_t n = to - c->zeroed < sizeof zeros ? to - c->zeroed : sizeof zeros;
		if (pwrite(fd, zeros, n, (off_t)c->zeroed) != (ssize_t)n) {
			int e = errno;
			/* give the space back: the disk is full */
			fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(c->zeroed + n - from));
			c->zeroed = from;
			errno = e;
			return 0;
		}
		c->zeroed += n;
	}
	return 1;
}
static int prezero(uint64_t need)
{
	struct ctl *c = fredlog_ctl;
	if (need <= c->zeroed)
		return 1;
	uint64_t ahead = need - HDR;
	ahead = ahead < PREZERO_MIN ? PREZERO_MIN : ahead > PREZERO_MAX ? PREZERO_MAX : ahead;
	int fd = open(logpath, O_WRONLY | O_CLOEXEC);
	uint64_t from = c->zeroed & ~(uint64_t)4095;
	if (fd < 0 || !zero_to(fd, c, need + ahead)) {
		say("cannot extend the log (%s); nothing more is recorded or replayed", strerror(errno));
		if (fd >= 0)
			close(fd);
		fredlog_active = 0;
		return 0;
	}
	close(fd);
	/* and map those pages in one call rather than a fault each */
	if (c->zeroed > from)
		madvise(fredlog_base + from, c->zeroed - from, MADV_POPULATE_WRITE);
	return 1;
}

/* append writes one entry at the position and moves the end there; the
 * lock is held. A thread switch is an entry of its own, before. */
static const char *call_name(int k);
static void stay(void);
static int still_left(void);
static int strict_left(void);
static void append(const unsigned char *h, int hn, const void *payload, size_t pn)
{
	if (!fredlog_active) /* the debugger quit meanwhile: the rest is not logged */
		return;
	if (fredlog_left)
		stay(); /* nobody's history */
	if (!mythr)
		mythr = ++nthreads;
	if (fredlog_pos < fredlog_ctl->end) {
		/* A call that began recording and ended after a restore, with
		 * no way to take its logged answer (late_data): writing here
		 * would end the log in the middle and make every thread record,
		 * silently. It is a divergence, said. */
		fredlog_ctl->divergences++;
		say("the program diverged from the log at entry %llu: thread %d's %s began before the snapshot and "
		    "ended after it; recording a new branch of history from here",
		    (unsigned long long)fredlog_seq, mythr, call_name(h[0]));
		if (!strict_left())
			cut(fredlog_pos);
	}
	if (mythr != lastthr && h[0] != K_BRANCH) {
		unsigned char t[12];
		t[0] = K_THREAD;
		int tn = 1 + put_uv(t + 1, (uint64_t)mythr);
		if (!room(tn) || !prezero(fredlog_pos + tn))
			return;
		memcpy(fredlog_base + fredlog_pos, t, tn);
		fredlog_pos += tn;
		fredlog_seq++;
		lastthr = mythr;
	}
	if (!room(hn + pn) || !prezero(fredlog_pos + hn + pn))
		return;
	memcpy(fredlog_base + fredlog_pos, h, hn);
	if (pn)
		memcpy(fredlog_base + fredlog_pos + hn, payload, pn);
	fredlog_pos += hn + pn;
	fredlog_seq++;
	TRACE("T%d REC seq=%llu %s", mythr, (unsigned long long)fredlog_seq, call_name(h[0]));
	fredlog_ctl->end = fredlog_pos;
	fredlog_ctl->count = fredlog_seq;
}

/* An entry being replayed: where its fields are. */
struct ent {
	int kind;
	uint64_t at; /* next field */
};

static const char *call_name(int k) { return k > 0 && k <= K_LAST ? kname[k] : "?"; }

/* begin decides, lock held, whether this call replays: 1 replay (e holds
 * the entry, which is of kind k), 0 record. A mismatch (the log's next
 * entry is another call) cuts the log and records. */
static void deliver(int sig);

static int turn_may_change(void)
{
	if (!fredlog_ctl || fredlog_pos >= fredlog_ctl->end)
		return 1;
	int k = (unsigned char)fredlog_base[fredlog_pos];
	return k == K_THREAD || k == K_BRANCH;
}

/* --- turns: on replay every thread waits for its entries' turn ---
 *
 * The log is one sequence for all threads, so replaying it in order
 * gives each thread its own answers and makes threads take their locks in
 * the recorded order (FReD paper, 4.3): a program free of data races then
 * runs the same on any number of cores. A thread whose next entry is not
 * yet due sleeps on a futex that every move of the position wakes.
 *
 * Waiting must end: a program with a race, or one that took another path,
 * may never give the turn to the thread that has it. So a wait with no
 * progress of the log for FREDLOG_TURN_MS (default 3000 ms of the waiter's
 * own sleeping, which stops while gdb holds the program; and not while
 * gdb holds the thread whose turn it is), or for a turn
 * that belongs to a thread that has ended, is a divergence: reported once,
 * and the log is cut there so that every thread records. */
/* turn_ticks (futex word) changes when a thread lets the log go;
 * turn_waiters counts the sleepers (both declared by raw_unlock) */
static int turn_ms = 3000;
#define MAXTHR 4096
static unsigned char ended[MAXTHR + 1]; /* threads that returned from their start */
static pid_t tids[MAXTHR + 1];          /* kernel ids (CRIU restores the same) */

/* held: the thread is stopped by the debugger (gdb's scheduler locking
 * runs one thread and holds the others; the person sits at the prompt):
 * its turn is not late, only paused. */
static int held(int owner)
{
	if (owner <= 0 || owner > MAXTHR || !tids[owner])
		return 0;
	char path[64], b[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tids[owner]);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = syscall(SYS_read, fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	char *p = strrchr(b, ')'); /* the name may hold spaces */
	return p && p[1] == ' ' && (p[2] == 't' || p[2] == 'T');
}

static const char *call_name(int k);
static int maxowed;
static void drain_all(void);

/* wait_turn: lock held; sleeps until the position moves (1), or gives
 * up with a divergence (0: the caller records). */
static int wait_turn(int k, int owner)
{
	uint64_t pos = fredlog_pos, end = fredlog_ctl->end;
	int64_t slept = 0; /* ms */
	TRACE("T%d WAIT seq=%llu for %s, owner T%d nheld=%d win=%d", mythr, (unsigned long long)fredlog_seq, call_name(k), owner, nheld, in_window());
	while (fredlog_pos == pos && fredlog_ctl->end == end) {
		if (fredlog_left) {
			stay();
			return 0; /* released: the log was cut here, begin records */
		}
		if (!fredlog_active)
			return 0; /* the debugger quit: nobody takes turns any more */
		if (in_window() && !nheld) {
			pause_locked(); /* the program is stopped, not late */
			slept = 0;
			continue;
		}
		/* (one that holds a lock does not pause: the debugger's thread
		 * may need it. Its wait for a turn still counts: a turn that
		 * waits for a paused thread would otherwise never come.) */
		if (slept >= turn_ms && held(owner))
			slept = 0;
		if ((owner > 0 && owner <= MAXTHR && ended[owner]) || slept >= turn_ms) {
			fredlog_ctl->divergences++;
			TRACE("T%d TURNFAIL seq=%llu %s owner T%d", mythr, (unsigned long long)fredlog_seq, call_name(k), owner);
			say("the program diverged from the log at entry %llu: thread %d waits to call %s, but thread %d, "
			    "whose turn it is, %s; recording a new branch of history from here",
			    (unsigned long long)fredlog_seq, mythr, call_name(k), owner,
			    slept >= turn_ms ? "has not taken it" : "has ended");
			if (!strict_left())
				cut(fredlog_pos);
			return 0;
		}
		if (maxowed)
			drain_all(); /* a writer may wait for room, and have the turn */
		int t = __atomic_load_n(&turn_ticks, __ATOMIC_ACQUIRE);
		__atomic_add_fetch(&turn_waiters, 1, __ATOMIC_ACQ_REL);
		/* let the log go without waking: we are the waiter */
		mine = 0;
		__atomic_store_n(&lk, 0, __ATOMIC_RELEASE);
		struct timespec a, b, ts = {0, 10 * 1000000};
		real_clock_gettime(CLOCK_MONOTONIC, &a);
		raw_futex(&turn_ticks, 0x80 /* FUTEX_WAIT_PRIVATE */, t, &ts);
		real_clock_gettime(CLOCK_MONOTONIC, &b);
		__atomic_sub_fetch(&turn_waiters, 1, __ATOMIC_ACQ_REL);
		lock();
		/* at most one sleep's worth per round: a stop by gdb is not waiting */
		int64_t ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
		slept += ms < 0 ? 0 : ms > 10 ? 10 : ms;
		sync_cuts();
	}
	return 1;
}

/* still_left, lock held: whether this copy is still one that left the log
 * under strict (a later command's strict holds it too); once fred has let
 * go of strict, it cuts the log where it is and records on. */
static int still_left(void)
{
	if (!fredlog_left)
		return 0;
	uint64_t g = __atomic_load_n(&fredlog_ctl->strict, __ATOMIC_ACQUIRE);
	if (g & 1)
		return 1;
	fredlog_left = 0;
	cut(fredlog_pos);
	return 0;
}

/* stay, lock held (let go meanwhile): a copy that left the log under
 * strict waits there to be ended, or for strict to end. */
static void stay(void)
{
	while (still_left()) {
		raw_unlock();
		struct timespec ts = {0, 50 * 1000000};
		nanosleep(&ts, NULL);
		lock();
	}
}

/* strict_left, lock held, after a divergence was counted and said: under
 * strict the copy leaves the log (fredlog_left) instead of cutting it, and
 * stays (gdb). 1: the caller must not cut (still_left cuts later if fred
 * lets go). */
static int strict_left(void)
{
	uint64_t g = __atomic_load_n(&fredlog_ctl->strict, __ATOMIC_ACQUIRE);
	if (!(g & 1))
		return 0;
	fredlog_left = 1;
	stay();
	return 1;
}

static int begin(int k, struct ent *e)
{
	sync_cuts();
	for (;;) {
		if (fredlog_left)
			stay();
		if (in_window() && !nheld)
			pause_locked();
		if (fredlog_pos >= fredlog_ctl->end)
			return 0;
		uint64_t at = fredlog_pos;
		int got = (unsigned char)fredlog_base[at++];
		if (got == K_THREAD) {
			int t = (int)get_uv(&at);
			if (t != mythr) {
				/* another thread's turn: the order is the log's */
				if (!wait_turn(k, t))
					return 0;
				continue;
			}
			fredlog_pos = at;
			fredlog_seq++;
			lastthr = t;
			continue;
		}
		if (lastthr && lastthr != mythr && got != K_BRANCH) {
			if (!wait_turn(k, lastthr))
				return 0;
			continue;
		}
		if (got == K_DEBUGGER) {
			/* the debugger talked here when recording, not now */
			fredlog_pos = at;
			fredlog_seq++;
			continue;
		}
		if (got == K_BRANCH) {
			/* what follows is another history's: ours ends here */
			cut(fredlog_pos);
			return 0;
		}
		if (got == K_SIGNAL && k != K_SIGNAL) {
			/* A signal arrived here the first time: its handler runs
			 * now, before this call, as it did then. */
			int sig = (int)get_uv(&at);
			fredlog_pos = at;
			fredlog_seq++;
			raw_unlock();
			inlib = 0;
			deliver(sig);
			inlib = 1;
			lock();
			sync_cuts();
			continue;
		}
		if (got == K_CLOCK && k != K_CLOCK && fredlog_mono_lenient && (unsigned char)fredlog_base[at] == CLOCK_MONOTONIC) {
			at++;
			int64_t d = get_sv(&at);
			if (d != INT64_MIN)
				last_clock[CLOCK_MONOTONIC] += d;
			TRACE("T%d PASS seq=%llu monotonic clock (calling %s)", mythr, (unsigned long long)fredlog_seq, call_name(k));
			fredlog_pos = at;
			fredlog_seq++;
			continue;
		}
		if (got == k || (got == K_FILE && (k == K_READ || k == K_PREAD))) {
			TRACE("T%d REP seq=%llu %s", mythr, (unsigned long long)fredlog_seq, call_name(k));
			e->kind = got;
			e->at = at;
			return 1;
		}
		return -got;
	}
}

/* diverge reports a mismatch once and cuts the log here. */
static void diverge(int k, int logged, const char *detail)
{
	TRACE("T%d DIVERGE seq=%llu called %s log %s", mythr, (unsigned long long)fredlog_seq, call_name(k), call_name(logged));
	fredlog_ctl->divergences++;
	say("the program diverged from the log at entry %llu: it called %s%s where the log has %s (thread %d); "
	    "recording a new branch of history from here",
	    (unsigned long long)fredlog_seq, call_name(k), detail ? detail : "", call_name(logged), mythr);
	if (!strict_left())
		cut(fredlog_pos);
}

/* done ends a replayed entry at e->at (after its fields and payload). */
static void done(struct ent *e)
{
	fredlog_pos = e->at;
	fredlog_seq++;
	if (fredlog_pos < fredlog_ctl->end && fredlog_base[fredlog_pos] == K_SIGNAL)
		due = 1;
}

/* OFF: this call is not the program's to log (a thread other than the
 * debugger's waits first while the debugger talks). */
static inline int off_(void)
{
	if (!fredlog_active || inlib)
		return 1;
	if (__builtin_expect(__atomic_load_n(&fredlog_debugger, __ATOMIC_RELAXED) > 0, 0)) {
		if (mydbg)
			return 1;
		if (!nheld)
			pause_here();
		return !fredlog_active;
	}
	return 0;
}
#define OFF off_()

#define ENTER()                    \
	if (OFF)                       \
		goto passthrough;      \
	inlib = 1;                     \
	lock();
#define LEAVE()   \
	unlock(); \
	inlib = 0;

/* start: returns 1 with e set when replaying; else records. */
static int start(int k, struct ent *e)
{
	int r = begin(k, e);
	if (r < 0) {
		diverge(k, -r, NULL);
		return 0;
	}
	return r;
}

/* --- clocks --- */

EXPORT time_t time(time_t *t)
{
	READY();
	time_t v;
	struct ent e;
	ENTER();
	if (start(K_TIME, &e)) {
		last_time += get_sv(&e.at);
		v = (time_t)last_time;
		done(&e);
	} else {
		struct timespec ts;
		real_clock_gettime(CLOCK_REALTIME, &ts);
		v = ts.tv_sec;
		unsigned char h[12];
		h[0] = K_TIME;
		int n = 1 + put_sv(h + 1, (int64_t)v - last_time);
		last_time = v;
		append(h, n, NULL, 0);
	}
	LEAVE();
	if (t)
		*t = v;
	return v;
passthrough:;
	struct timespec ts;
	real_clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	READY();
	struct ent e;
	(void)tz;
	struct timeval *volatile tvp = tv; /* NULL is allowed: nothing to do */
	if (!tvp)
		return 0;
	ENTER();
	if (start(K_TIMEOFDAY, &e)) {
		last_tv += get_sv(&e.at);
		done(&e);
	} else {
		struct timespec ts;
		real_clock_gettime(CLOCK_REALTIME, &ts);
		int64_t v = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		unsigned char h[12];
		h[0] = K_TIMEOFDAY;
		int n = 1 + put_sv(h + 1, v - last_tv);
		last_tv = v;
		append(h, n, NULL, 0);
	}
	tv->tv_sec = last_tv / 1000000;
	tv->tv_usec = last_tv % 1000000;
	LEAVE();
	return 0;
passthrough:;
	struct timespec ts;
	real_clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

/* others_turn (lock held): while replaying, the log's next entry is
 * another thread's */
static int others_turn(void)
{
	if (fredlog_pos >= fredlog_ctl->end)
		return 0;
	uint64_t at = fredlog_pos;
	if ((unsigned char)fredlog_base[at++] == K_THREAD)
		return (int)get_uv(&at) != mythr;
	return lastthr && lastthr != mythr;
}
EXPORT int clock_gettime(clockid_t c, struct timespec *ts)
{
	READY();
	struct ent e;
	int slot = c >= 0 && c < 15 ? c : 15;
	ENTER();
again:
	if (c == CLOCK_MONOTONIC && fredlog_mono_lenient) {
		if (others_turn()) {
			/* (CPython reads it with the GIL's mutex held, which the
			 * thread whose turn it is may need: no waiting here) */
			TRACE("T%d GIVE monotonic clock again (another thread's turn)", mythr);
			goto give;
		}
		int r = begin(K_CLOCK, &e);
		if (r < 0 || (r > 0 && (unsigned char)fredlog_base[e.at] != CLOCK_MONOTONIC)) {
			TRACE("T%d GIVE monotonic clock again (the log has %s)", mythr, call_name(r < 0 ? -r : K_CLOCK));
			goto give;
		}
		if (r == 0)
			goto rec;
	} else if (!start(K_CLOCK, &e)) {
		goto rec;
	}
	{
		int id = (unsigned char)fredlog_base[e.at++];
		if (id != (unsigned char)c && id == CLOCK_MONOTONIC && fredlog_mono_lenient) {
			int64_t d = get_sv(&e.at); /* passed over (above) */
			if (d != INT64_MIN)
				last_clock[CLOCK_MONOTONIC] += d;
			done(&e);
			goto again;
		}
		if (id != (unsigned char)c) {
			e.at--;
			diverge(K_CLOCK, K_CLOCK, " (another clock)");
			goto rec;
		}
		int64_t d = get_sv(&e.at);
		done(&e);
		if (d == INT64_MIN) { /* logged failure */
			LEAVE();
			errno = EINVAL;
			return -1;
		}
		last_clock[slot] += d;
	}
	if (0) {
rec:;
		int r = real_clock_gettime(c, ts);
		unsigned char h[16];
		h[0] = K_CLOCK;
		h[1] = (unsigned char)c;
		int n;
		if (r != 0) {
			n = 2 + put_sv(h + 2, INT64_MIN);
			append(h, n, NULL, 0);
			LEAVE();
			return r;
		}
		int64_t v = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
		n = 2 + put_sv(h + 2, v - last_clock[slot]);
		last_clock[slot] = v;
		append(h, n, NULL, 0);
	}
give:
	if (!last_clock[slot]) { /* none replayed yet: this one is not logged */
		int r = real_clock_gettime(c, ts);
		LEAVE();
		return r;
	}
	ts->tv_sec = last_clock[slot] / 1000000000;
	ts->tv_nsec = last_clock[slot] % 1000000000;
	LEAVE();
	return 0;
passthrough:
	return real_clock_gettime(c, ts);
}

/* --- results with data: getrandom, read, pread, recv, stdio --- */

/* log_data records (kind, fd, result, data); for replays, rep_data checks
 * the fd and size and copies the data. */
static void log_data(int k, int fd, int64_t res, const void *buf)
{
	unsigned char h[32];
	h[0] = (unsigned char)k;
	int n = 1 + put_uv(h + 1, (uint64_t)(fd + 1));
	n += put_sv(h + n, res);
	append(h, n, buf, res > 0 ? (size_t)res : 0);
}

/* rep_data: 1 replayed (*res set), 0 diverged (record instead). */
/* moved: a replayed read gives its bytes from the log without reading, so
 * a regular file's offset (and a stream's position, f) is moved as the
 * read moved it when recorded: what the program then reads, seeks or
 * tells outside the log (a getc the macro serves from the stream's
 * buffer, an ftell) is what it was. (Python read a script's first
 * bytes with fread and the rest through its buffer: "iimport".) */
static void moved(int fd, FILE *f, int64_t n)
{
	struct stat st;
	int sv = errno;
	if (n <= 0)
		return;
	if (!f)
		lseek(fd, (off_t)n, SEEK_CUR); /* a pipe's or a socket's fails (ESPIPE): nothing moves */
	else if (raw_fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		fseeko(f, (off_t)n, SEEK_CUR); /* (a stream on a pipe would drop what it buffered) */
	errno = sv;
}

static int rep_data(struct ent *e, int k, int fd, size_t max, void *buf, int64_t *res)
{
	uint64_t at = e->at;
	int64_t lfd = (int64_t)get_uv(&at) - 1;
	int64_t r = get_sv(&at);
	if (lfd != fd || r > (int64_t)max) {
		char d[64];
		if (k == K_STAT && fd >= (1 << 24))
			snprintf(d, sizeof d, lfd != fd ? " (of another file)" : " (for fewer bytes)");
		else
			snprintf(d, sizeof d, lfd != fd ? " (fd %d, the log has fd %lld)" : " (for fewer bytes)", fd, (long long)lfd);
		diverge(k, k, d);
		return 0;
	}
	if (r > 0)
		memcpy(buf, fredlog_base + at, r);
	e->at = at + (r > 0 ? r : 0);
	done(e);
	*res = r;
	if (k == K_READ)
		moved(fd, NULL, r);
	return 1;
}

/* --- reads of regular files, by reference ---
 *
 * Copying every byte a program reads from its files into the log costs
 * as much as the reads themselves (a 32 MB read-heavy program ran 1.65x
 * slower recording). Beyond the first FREDLOG_STORE bytes of a file
 * (default 64 KiB: small files, which are the ones people change between
 * runs, are stored whole), a read of a regular file that has not changed
 * since the program started is logged as where it read (offset, length)
 * and which version of the file it was: device, inode, size, mtime and
 * ctime. On replay, if the file is still that version, the same bytes are
 * read from it again; any write to a file moves its ctime, which nobody
 * can set back, so a file changed since is a divergence (reported, then
 * recorded anew), never wrong data.
 *
 * Files changed while the program runs (by the program itself, say,
 * which writes them again on replay) are stored, as is a file changed
 * just before it started (FREDLOG_RACY_NS, default 50 ms): a ctime is
 * only as fine as a timer tick, so a write in the same tick might not
 * move it (git's "racily clean" files). The identity is taken before the
 * read, so a write racing with the read makes the logged ctime older than
 * the file's: a divergence on replay, not a silent mismatch.
 *
 * fstat costs a microsecond, more than the read of 4 KB it describes, so
 * a descriptor's file identity is looked up at its first read and kept
 * (fcache) until the program closes or replaces the descriptor, or a
 * read does not start where the last one ended (a seek, or a descriptor
 * closed and opened again out of our sight, as fclose does). A stale
 * one is safe all the same: a file that changed after the lookup has a
 * newer ctime than the logged one, and another file has another inode,
 * so the replay reports a divergence; it cannot read other bytes. The
 * offset is asked for at each read (lseek is cheap), never assumed; once
 * the program has threads or children (fd_shared), which may move a
 * shared offset between that question and the read, it is asked again
 * after the read, and a read that did not start there is stored.
 *
 * Entry: kind K_FILE, uv fd+1, sv result (> 0), uv flags, then [uv offset]
 * when FR_OFF, [uv dev, uv ino, uv size, sv mtime, sv ctime] when FR_ID,
 * [uv length, the path] when FR_NAME (with FR_ID: where the file was, so
 * that fred-save can store it while it is still that version).
 * Without FR_OFF the read starts where the fd's last file read ended,
 * without FR_ID the file is the one of the fd's last file read (fbases,
 * reset with the other bases), so a sequential read takes 5 bytes.
 *
 * A saved session replayed elsewhere (FREDLOG_REFS) has the files it
 * read by reference in a table: identity, then the stored copy's path,
 * one per line. A read whose file here is not that version reads the
 * stored copy instead. */
#define FR_OFF 1
#define FR_ID 2
#define FR_PREAD 4
#define FR_NAME 8
static struct fref {
	struct fid id;
	char *path;
	int fd;            /* opened at the start, high (the program's numbering is its own) */
	uint64_t dev, ino; /* the copy's own, checked before each use */
} *frefs;
static int nfrefs;

/* copy_fd opens a stored copy high, with what says it is that file. */
static int copy_fd(struct fref *r)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, r->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	/* (halfway to the limit: room for many copies, above the program's) */
	struct rlimit rl;
	long base = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur / 2 : 1000;
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, base > 100 ? base : 100);
	syscall(SYS_close, fd);
	if (hi < 0 || raw_fstat(hi, &st) != 0) {
		if (hi >= 0)
			syscall(SYS_close, hi);
		return -1;
	}
	r->dev = st.st_dev, r->ino = st.st_ino;
	return hi;
}

/* load_refs reads the table and opens each copy, at the start (one
 * thread: no descriptor number of the program's moves). */
static void load_refs(const char *table)
{
	/* raw calls: the program's own open and read are logged */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, table, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	char *t = raw_fstat(fd, &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
	ssize_t got = t ? syscall(SYS_pread64, fd, t, (size_t)st.st_size, 0) : -1;
	syscall(SYS_close, fd);
	if (got < 0) {
		free(t);
		return;
	}
	t[got] = 0;
	for (char *line = t, *nl; *line; line = nl) {
		nl = line + strcspn(line, "\n");
		if (*nl)
			*nl++ = 0;
		unsigned long long dev, ino, size;
		long long mt, ct;
		int n = 0;
		if (sscanf(line, "%llu %llu %llu %lld %lld %n", &dev, &ino, &size, &mt, &ct, &n) != 5 || !n)
			continue;
		struct fref *g = realloc(frefs, (size_t)(nfrefs + 1) * sizeof *frefs);
		if (!g)
			break;
		frefs = g;
		struct fref *r = &frefs[nfrefs++];
		*r = (struct fref){{dev, ino, size, mt, ct}, line + n, -1, 0, 0};
		r->fd = copy_fd(r);
	}
}

/* ref_fd is the stored copy of the file of identity id (-1: none; -2:
 * there is one, but it cannot be read). */
static int ref_fd(const struct fid *id)
{
	for (int i = 0; i < nfrefs; i++) {
		struct fref *r = &frefs[i];
		if (memcmp(&r->id, id, sizeof *id) != 0)
			continue;
		struct stat st;
		/* (the program may have closed it, or put another file there) */
		if (r->fd < 0 || raw_fstat(r->fd, &st) != 0 || st.st_dev != r->dev || st.st_ino != r->ino)
			r->fd = copy_fd(r);
		return r->fd >= 0 ? r->fd : -2;
	}
	return -1;
}

static int64_t store_below = 64 << 10; /* FREDLOG_STORE */
static int fredlog_logv = 3; /* FREDLOG_LOGV: the replayed log's version (below) */
static int fd_shared; /* the program has made threads or children */
/* fredlog_sync: the order of lock calls is logged (below): 1 always, 2
 * once the program has a second thread (interpreters: one thread's
 * GIL calls order nothing), 0 never */
HIDDEN int fredlog_sync;
static int synced(void) { return fredlog_sync == 1 || (fredlog_sync == 2 && nthreads > 1); }
static struct {
	unsigned char known, ok; /* ok: a regular file, unchanged since the start */
	unsigned char unseekable; /* a pipe, socket or terminal: no lseek at each read */
	struct fid id;
	int64_t next; /* where the last read by reference ended */
} fcache[MAXFILEFD];
static void forget_fd(int fd)
{
	if (fd >= 0 && fd < MAXFILEFD)
		fcache[fd].known = fcache[fd].unseekable = 0;
}
static int64_t unchanged_before;       /* ns: files changed later are stored */

static void fid_of(const struct stat *st, struct fid *id)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	id->ctime = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* file_pre: before a read of n bytes at off (-1: the fd's own offset),
 * whether it may be logged by reference; fills id and *at (the offset). */
static int file_pre(int fd, int64_t off, size_t n, struct fid *id, int64_t *at)
{
	if (store_below < 0 || fd < 0 || fd >= MAXFILEFD)
		return 0;
	int seq = off < 0;
	if (seq) {
		if (fcache[fd].unseekable)
			return 0;
		int sv = errno;
		off = lseek(fd, 0, SEEK_CUR); /* fails (ESPIPE) on pipes, sockets, terminals */
		if (off < 0) {
			fcache[fd].unseekable = errno == ESPIPE;
			errno = sv;
			return 0;
		}
	}
	if (off + (int64_t)n <= store_below)
		return 0;
	if (!fcache[fd].known || (seq && off != fcache[fd].next)) {
		struct stat st;
		if (raw_fstat(fd, &st) != 0)
			return 0;
		fid_of(&st, &fcache[fd].id);
		/* a file changed lately is stored */
		fcache[fd].ok = S_ISREG(st.st_mode) && fcache[fd].id.ctime < unchanged_before;
		fcache[fd].known = 1;
	}
	if (!fcache[fd].ok)
		return 0;
	*id = fcache[fd].id;
	*at = off;
	return 1;
}

/* log_file records a read of res bytes at off, lock held. */
static void log_file(int fd, int64_t res, int64_t off, const struct fid *id, int pr)
{
	struct fbase *b = &fbases[fd];
	unsigned char h[96];
	static char path[4096]; /* (the lock is held) */
	ssize_t pn = 0;
	int flags = pr ? FR_PREAD : 0;
	if ((uint64_t)off != b->end)
		flags |= FR_OFF;
	if (memcmp(&b->id, id, sizeof *id) != 0) {
		flags |= FR_ID;
		char link[32];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		pn = fredlog_logv >= 3 ? syscall(SYS_readlink, link, path, sizeof path) : 0;
		if (pn > 0 && pn < (ssize_t)sizeof path)
			flags |= FR_NAME; /* (a log of version 3 on: older readers do not skip it) */
		else
			pn = 0;
	}
	h[0] = K_FILE;
	int n = 1 + put_uv(h + 1, (uint64_t)(fd + 1));
	n += put_sv(h + n, res);
	n += put_uv(h + n, (uint64_t)flags);
	if (flags & FR_OFF)
		n += put_uv(h + n, (uint64_t)off);
	if (flags & FR_ID) {
		n += put_uv(h + n, id->dev);
		n += put_uv(h + n, id->ino);
		n += put_uv(h + n, id->size);
		n += put_sv(h + n, id->mtime);
		n += put_sv(h + n, id->ctime);
	}
	if (flags & FR_NAME)
		n += put_uv(h + n, (uint64_t)pn);
	b->id = *id;
	b->end = (uint64_t)(off + res);
	if (!pr)
		fcache[fd].next = off + res;
	append(h, n, pn ? path : NULL, (size_t)pn);
}

/* rep_file replays a K_FILE entry (lock held): 1 replayed, 0 diverged. */
static int rep_file(struct ent *e, int fd, size_t max, void *buf, int64_t *res, int pr)
{
	uint64_t at = e->at;
	int64_t lfd = (int64_t)get_uv(&at) - 1;
	int64_t r = get_sv(&at);
	int flags = (int)get_uv(&at);
	if (lfd != fd || lfd < 0 || lfd >= MAXFILEFD || r > (int64_t)max || r <= 0 || !(flags & FR_PREAD) != !pr) {
		char d[64];
		snprintf(d, sizeof d, lfd != fd ? " (fd %d, the log has fd %lld)" : " (another read of the file)", fd, (long long)lfd);
		diverge(pr ? K_PREAD : K_READ, K_FILE, d);
		return 0;
	}
	struct fbase *b = &fbases[fd];
	uint64_t off = flags & FR_OFF ? get_uv(&at) : b->end;
	struct fid id = b->id;
	if (flags & FR_ID) {
		id.dev = get_uv(&at);
		id.ino = get_uv(&at);
		id.size = get_uv(&at);
		id.mtime = get_sv(&at);
		id.ctime = get_sv(&at);
	}
	if (flags & FR_NAME)
		at += get_uv(&at); /* the path: for fred-save */
	struct stat st;
	struct fid now;
	int from = fd; /* the file, or its stored copy (a saved session elsewhere) */
	int ok = raw_fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (ok) {
		fid_of(&st, &now);
		ok = !memcmp(&now, &id, sizeof id);
	}
	int copy = -1;
	if (!ok && nfrefs && (copy = ref_fd(&id)) >= 0)
		ok = 1, from = copy;
	if (!ok) {
		char d[160];
		if (copy == -2)
			snprintf(d, sizeof d, " (fd %d: the saved copy of the file, inode %llu, cannot be opened)", fd,
				 (unsigned long long)id.ino);
		else
			snprintf(d, sizeof d, " (fd %d: the file, inode %llu, changed since; the log has where it read, not"
				 " the data)", fd, (unsigned long long)id.ino);
		diverge(pr ? K_PREAD : K_READ, K_FILE, d);
		return 0;
	}
	ssize_t got = 0;
	while (got < r) {
		ssize_t k = real_pread(from, (char *)buf + got, (size_t)(r - got), (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += k;
	}
	if (got != r) {
		diverge(pr ? K_PREAD : K_READ, K_FILE, " (the file reads short)");
		return 0;
	}
	/* a read moves the fd's offset: as it did then */
	if (!pr)
		lseek(fd, (off_t)(off + r), SEEK_SET);
	b->id = id;
	b->end = off + (uint64_t)r;
	e->at = at;
	done(e);
	*res = r;
	return 1;
}

static int is_tty(int fd)
{
	if (fredlog_tty)
		return 0;
	struct stat st;
	return raw_fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && isatty(fd);
}

/* Pipes the program made itself pass data between its threads: on
 * replay the writer writes again, so the reader, which gets the logged
 * data, owes the pipe as many bytes, and takes them out when they are
 * there: at its reads and while any thread waits for its turn (a writer
 * blocked on a full pipe may be the thread whose turn it is; how much a
 * pipe holds depends on how its writes and reads fell, so the bytes
 * cannot be taken at the same moments as when recorded; a read may have
 * emptied it before the log's turn of the writer that needed the room).
 * So a waiting thread also takes bytes ahead of the log, keeping them, and
 * later reads owe that much less; a read recorded again takes what is
 * still owed first, then gets what was taken ahead. Pipes from outside are
 * not written again after a restore: those owe nothing.
 *
 * While the log is replayed, two threads may take bytes out of one pipe:
 * the reader paying what its read owes (owe), and any thread waiting for
 * its turn (drain_all). Both do it with the log's lock held, and must: a
 * drain reads no more than FIONREAD said was there, which does not block
 * only if no one else takes those bytes in between; and owed[] and pre[]
 * are counts of the same bytes, each changed on the other's value (a take
 * ahead while owed is 0, an owe after the bytes ahead are used up).
 * A read recorded again drains without the lock, and may block: by then
 * the log has run out (start found no entry left, and the position only
 * moves on), so no thread waits for a turn or owes any more. */
#define MAXPIPEFD 4096
static unsigned char own_pipe[MAXPIPEFD];
static int64_t owed[MAXPIPEFD];
static int maxowed; /* fds below this may owe or hold bytes ahead */
struct ahead {
	char *b;
	size_t len, cap;
};
static struct ahead pre[MAXPIPEFD];
#define AHEAD_MAX (4u << 20)
/* own_pipe: 1 a read end, 2 a write end */
static int is_own_pipe(int fd) { return fd >= 0 && fd < MAXPIPEFD && own_pipe[fd] == 1; }
static void set_own(int fd, int v)
{
	if (fd < 0 || fd >= MAXPIPEFD)
		return;
	own_pipe[fd] = (unsigned char)v;
	owed[fd] = 0;
	pre[fd].len = 0;
	if (v == 1 && fd >= maxowed)
		maxowed = fd + 1;
}
/* drain takes what fd owes; block: wait for the bytes (recording);
 * else lock held, and only what the pipe holds */
static void drain(int fd, int block)
{
	char b[4096];
	int sv = errno;
	while (fd >= 0 && fd < MAXPIPEFD && owed[fd] > 0) {
		int avail = 0;
		if (!block && (ioctl(fd, FIONREAD, &avail) != 0 || avail <= 0))
			break;
		int64_t n = owed[fd] < (int64_t)sizeof b ? owed[fd] : (int64_t)sizeof b;
		if (!block && n > avail)
			n = avail;
		ssize_t got = real_read(fd, b, (size_t)n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			owed[fd] = 0;
			break;
		}
		owed[fd] -= got;
	}
	errno = sv;
}
/* take_ahead keeps what the pipe holds now, beyond what it owes; lock held */
static void take_ahead(int fd)
{
	struct ahead *a = &pre[fd];
	int sv = errno;
	for (;;) {
		int avail = 0;
		if (ioctl(fd, FIONREAD, &avail) != 0 || avail <= 0 || a->len + (size_t)avail > AHEAD_MAX)
			break;
		if (a->len + (size_t)avail > a->cap) {
			size_t c = a->cap ? a->cap : 65536;
			while (c < a->len + (size_t)avail)
				c *= 2;
			char *nb = realloc(a->b, c);
			if (!nb)
				break;
			a->b = nb;
			a->cap = c;
		}
		ssize_t got = real_read(fd, a->b + a->len, (size_t)avail);
		if (got <= 0)
			break;
		a->len += (size_t)got;
	}
	errno = sv;
}
/* drain_all: lock held; while waiting for a turn */
static void drain_all(void)
{
	for (int fd = 0; fd < maxowed; fd++) {
		if (!is_own_pipe(fd))
			continue;
		if (owed[fd] > 0)
			drain(fd, 0);
		if (owed[fd] == 0)
			take_ahead(fd);
	}
}
/* owe: a replayed read of n bytes, lock held */
static void owe(int fd, int64_t n)
{
	if (fd < 0 || fd >= MAXPIPEFD || n <= 0)
		return;
	struct ahead *a = &pre[fd];
	size_t k = a->len < (size_t)n ? a->len : (size_t)n;
	if (k) {
		memmove(a->b, a->b + k, a->len - k);
		a->len -= k;
		n -= (int64_t)k;
	}
	owed[fd] += n;
	drain(fd, 0);
}
/* from_ahead: recording again, a read first gets the bytes taken ahead */
static ssize_t from_ahead(int fd, void *buf, size_t n)
{
	struct ahead *a = &pre[fd];
	size_t k = a->len < n ? a->len : n;
	memcpy(buf, a->b, k);
	memmove(a->b, a->b + k, a->len - k);
	a->len -= k;
	return (ssize_t)k;
}
EXPORT int pipe(int fd[2])
{
	READY();
	int r = real_pipe(fd);
	if (r == 0)
		set_own(fd[0], 1), set_own(fd[1], 2);
	return r;
}
EXPORT int pipe2(int fd[2], int fl)
{
	READY();
	int r = real_pipe2(fd, fl);
	if (r == 0)
		set_own(fd[0], 1), set_own(fd[1], 2);
	return r;
}
static void set_own_sock(int fd, int v);
static void copy_sock(int a, int b);
static void drop_standin(int fd);
static struct standin *standin(int fd);
static int sock_kind(int fd);
EXPORT int close(int fd)
{
	READY();
	set_own(fd, 0);
	if (sock_kind(fd) == 2)
		drop_standin(fd);
	set_own_sock(fd, 0);
	forget_fd(fd);
	return real_close(fd);
}
EXPORT int dup2(int a, int b)
{
	READY();
	int r = real_dup2(a, b);
	forget_fd(b);
	if (r >= 0 && a != b)
		copy_sock(a, b);
	if (r >= 0)
		set_own(b, is_own_pipe(a));
	return r;
}
EXPORT int dup3(int a, int b, int fl)
{
	READY();
	int r = real_dup3(a, b, fl);
	forget_fd(b);
	if (r >= 0)
		copy_sock(a, b);
	if (r >= 0)
		set_own(b, is_own_pipe(a));
	return r;
}
/* dup and fcntl's F_DUPFD carry what the library knows of a descriptor
 * (a replayed connection's stand-in: Python's socket.dup()) to the new
 * one, as dup2 does. */
static int duped(int a, int r)
{
	if (r >= 0) {
		forget_fd(r);
		copy_sock(a, r);
		set_own(r, is_own_pipe(a));
	}
	return r;
}
EXPORT int dup(int a)
{
	READY();
	return duped(a, real_dup(a));
}
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	int r = real(fd, cmd, arg);
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
		int sv = errno;
		duped(fd, r);
		errno = sv;
	}
	return r;
}
/* (every fcntl argument is one machine word: an int or a pointer) */
EXPORT int fcntl(int fd, int cmd, ...)
{
	READY();
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(real_fcntl, fd, cmd, arg);
}
EXPORT int fcntl64(int fd, int cmd, ...)
{
	READY();
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(real_fcntl64 ? real_fcntl64 : real_fcntl, fd, cmd, arg);
}

/* --- files opened for writing ---
 *
 * A replay writes again what the program wrote: an append-mode log would
 * get its lines twice, a file written on from where it was opened would be
 * written past what it held then. So an open for writing of a regular
 * file (without O_TRUNC, which sets a file back by itself) logs which file
 * and its size then; its replay cuts the file back to that size, so the
 * replayed writes land where the first ones did and the file ends as one
 * forward run leaves it. What it cuts off is kept beside the log
 * (cut-DEV-INO: the offset it starts at, then the bytes), where fred finds
 * it when it restores a later snapshot (ckpt.Files). A replayed open with
 * O_TRUNC keeps what it is about to cut the same way. Files the program
 * has open at a snapshot are fred's to set back; this covers the ones it
 * opens after. Its result is an input too: an open that failed then (a
 * file the program made later did not exist yet) fails again.
 * Entry: K_OPENW, sv 0 or -errno, then if 0: uv dev, uv ino, uv size. */
static char cutdir[4096];
/* keep_cut keeps the bytes of the file at dir/name from size on */
/* copy_range copies in's bytes [at, to) (to < 0: to its end) to out */
static int copy_range(int in, int out, off_t at, off_t to, char *b, size_t bn)
{
	while (to < 0 || at < to) {
		size_t want = to < 0 || (off_t)bn < to - at ? bn : (size_t)(to - at);
		ssize_t k = syscall(SYS_pread64, in, b, want, at);
		if (k == 0 && to < 0)
			return 1;
		if (k <= 0 || syscall(SYS_write, out, b, k) != k)
			return 0;
		at += k;
	}
	return 1;
}
/* keep_cut keeps the bytes of the file at dir/name from size on, and after
 * them what the older cut held past the file's end (ckpt.Files does the
 * same); it returns 0 when it could not (the older cut stays) */
static int keep_cut(int dir, const char *name, const struct stat *st, off_t size)
{
	if (!cutdir[0])
		return 0;
	char path[4200], tmp[4210];
	snprintf(path, sizeof path, "%s/cut-%llu-%llu", cutdir, (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	snprintf(tmp, sizeof tmp, "%s.new", path);
	int in = (int)syscall(SYS_openat, dir, name, O_RDONLY | O_CLOEXEC);
	int out = (int)syscall(SYS_openat, AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int old = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	enum { BUF = 65536 }; /* not on the stack: threads' stacks may be small */
	/* syscall, not mmap: the program's mmaps are the log's */
	char *b = (char *)syscall(SYS_mmap, NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ok = b != MAP_FAILED && in >= 0 && out >= 0;
	if (ok) {
		int n = snprintf(b, BUF, "%020lld\n", (long long)size);
		ok = syscall(SYS_write, out, b, n) == n && copy_range(in, out, size, st->st_size, b, BUF);
	}
	if (ok && old >= 0 && syscall(SYS_pread64, old, b, 21, 0) == 21) {
		b[20] = 0;
		long long from = strtoll(b, NULL, 10);
		if (from <= (long long)st->st_size)
			ok = copy_range(old, out, 21 + (st->st_size - from), -1, b, BUF);
	}
	if (ok)
		ok = syscall(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD, path) == 0;
	else if (out >= 0)
		syscall(SYS_unlinkat, AT_FDCWD, tmp, 0);
	if (b != MAP_FAILED)
		syscall(SYS_munmap, b, BUF);
	for (int *fd = (int[]){in, out, old}, i = 0; i < 3; i++)
		if (fd[i] >= 0)
			syscall(SYS_close, fd[i]);
	return ok;
}
/* opened logs or replays an open for writing whose result is fd; it
 * returns the result to give (-1 with errno: the open failed then; the
 * caller closes fd) */
/* device_path: a device's name (/dev/tty): whether it opens depends on the
 * terminal the program runs on (a recording made without one, replayed on
 * fred's), not on the run: neither its open nor its stat is logged */
static int device_path(const char *p) { return p && !strncmp(p, "/dev/", 5); }
HIDDEN extern int fredlog_stat;
/* fredlog_legacy (FREDLOG_LOGV=1): a log recorded before the scanf
 * family, statx, read-only opens and uname were logged (fred record's
 * log version 1): they pass through, as they did; fredlog_logv < 3:
 * before lseek's answers and directories' entries were */
static int fredlog_legacy;
/* opened_read: under FREDLOG_STAT (a recording, replayed anywhere),
 * whether a read-only open found its file is an input too. One that failed
 * then fails again (a cache made since: Python's .pyc, written by the
 * recorded run itself, would change what it reads); one that found its
 * file, which is not here now, gets a stand-in (/dev/null: what the
 * program reads and asks of it comes from the log, which stored it).
 * Entry: K_OPENR, sv 0 or -errno, then if 0: uv the file's size (the
 * stand-in's: a memory file of that size, for a seek to its end). */
static int opened_read(int fd, int flags, const char *path)
{
	if (OFF || !fredlog_stat || fredlog_legacy || device_path(path))
		return fd;
	int sv = errno;
	struct ent e;
	TRACE("T%d open for reading %s: fd %d", mythr, path ? path : "(null)", fd);
	inlib = 1;
	lock();
	if (start(K_OPENR, &e)) {
		uint64_t at = e.at;
		int64_t r = get_sv(&at);
		uint64_t size = r < 0 ? 0 : get_uv(&at);
		e.at = at;
		done(&e);
		if (r < 0) {
			fd = -1; /* (the caller closes what opened now) */
			sv = (int)-r;
		} else if (fd < 0) {
			/* of the recorded size, for a seek to its end */
			fd = (int)syscall(SYS_memfd_create, "fred-stand-in", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
			if (fd >= 0 && ftruncate(fd, (off_t)size) != 0) {
				real_close(fd);
				fd = -1;
			}
			if (fd < 0)
				fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | (flags & O_CLOEXEC));
			TRACE("T%d open: %s is not here: a stand-in, fd %d", mythr, path ? path : "(null)", fd);
		}
	} else {
		unsigned char h[24];
		struct stat st;
		h[0] = K_OPENR;
		int n = 1 + put_sv(h + 1, fd >= 0 ? 0 : -(int64_t)sv);
		if (fd >= 0)
			n += put_uv(h + n, raw_fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0);
		append(h, n, NULL, 0);
	}
	unlock();
	inlib = 0;
	errno = sv;
	return fd;
}
static int opened(int fd, int flags, const char *path)
{
	if ((flags & O_ACCMODE) == O_RDONLY)
		return opened_read(fd, flags, path);
	if (fd < 0 && device_path(path))
		return fd;
	int sv = errno;
	struct stat st;
	if (OFF || (fd >= 0 && (raw_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))) {
		errno = sv;
		return fd;
	}
	struct ent e;
	inlib = 1;
	lock();
	if (start(K_OPENW, &e)) {
		uint64_t at = e.at;
		int64_t r = get_sv(&at);
		uint64_t dev = 0, ino = 0, size = 0;
		if (r >= 0)
			dev = get_uv(&at), ino = get_uv(&at), size = get_uv(&at);
		e.at = at;
		done(&e);
		if (r < 0) {
			/* it failed then (a file that did not exist yet): again */
			fd = -1;
			sv = (int)-r;
		} else if (fd < 0) {
			diverge(K_OPENW, K_OPENW, " (the file opened then cannot be opened now)");
		} else if (!(flags & O_TRUNC) && dev == (uint64_t)st.st_dev && ino == (uint64_t)st.st_ino && (uint64_t)st.st_size > size) {
			char link[64];
			snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
			/* never cut what could not be kept: it would be lost */
			if (!keep_cut(AT_FDCWD, link, &st, (off_t)size))
				say("could not keep what a file held past %llu bytes; the replay writes it again after it",
				    (unsigned long long)size);
			else if (ftruncate(fd, (off_t)size) != 0)
				say("could not set %d bytes of a file back for the replay: %s", (int)(st.st_size - size), strerror(errno));
		}
	} else {
		unsigned char h[48];
		h[0] = K_OPENW;
		int n = 1 + put_sv(h + 1, fd >= 0 ? 0 : -(int64_t)sv);
		if (fd >= 0) {
			n += put_uv(h + n, (uint64_t)st.st_dev);
			n += put_uv(h + n, (uint64_t)st.st_ino);
			n += put_uv(h + n, (uint64_t)st.st_size);
		}
		append(h, n, NULL, 0);
	}
	unlock();
	inlib = 0;
	errno = sv;
	return fd;
}
/* to_trunc: before an open that truncates a file, while the log is
 * replayed (entries are left: a thread's own may not be the next, so this
 * may keep a cut that was not needed, never miss one) */
static void to_trunc(int dir, const char *p, int flags)
{
	if (!(flags & O_TRUNC) || (flags & O_ACCMODE) == O_RDONLY || OFF)
		return;
	if (__atomic_load_n(&fredlog_pos, __ATOMIC_RELAXED) >= __atomic_load_n(&fredlog_ctl->end, __ATOMIC_RELAXED))
		return;
	int sv = errno;
	struct stat st;
	if (syscall(SYS_newfstatat, dir, p, &st, 0) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		keep_cut(dir, p, &st, 0);
	errno = sv;
}
static int open_result(int fd, int flags, const char *path)
{
	int r = opened(fd, flags, path);
	if (r < 0 && fd >= 0) {
		int sv = errno;
		real_close(fd);
		errno = sv;
	}
	return r;
}
/* the mode argument is there only with O_CREAT or O_TMPFILE */
#define OPEN_MODE(flags, last) \
	mode_t mode = 0;                                                  \
	if ((flags) & (O_CREAT | __O_TMPFILE)) {                         \
		va_list ap;                                               \
		va_start(ap, last);                                       \
		mode = va_arg(ap, mode_t);                                \
		va_end(ap);                                               \
	}
EXPORT int open(const char *p, int fl, ...)
{
	READY();
	OPEN_MODE(fl, fl);
	to_trunc(AT_FDCWD, p, fl);
	return open_result(real_open(p, fl, mode), fl, p);
}
EXPORT int open64(const char *p, int fl, ...)
{
	READY();
	OPEN_MODE(fl, fl);
	to_trunc(AT_FDCWD, p, fl);
	return open_result(real_open64(p, fl, mode), fl, p);
}
EXPORT int openat(int dir, const char *p, int fl, ...)
{
	READY();
	OPEN_MODE(fl, fl);
	to_trunc(dir, p, fl);
	return open_result(real_openat(dir, p, fl, mode), fl, p);
}
EXPORT int openat64(int dir, const char *p, int fl, ...)
{
	READY();
	OPEN_MODE(fl, fl);
	to_trunc(dir, p, fl);
	return open_result(real_openat64(dir, p, fl, mode), fl, p);
}
/* _FORTIFY_SOURCE's checked opens (no mode: they refuse O_CREAT without one) */
EXPORT int __open_2(const char *p, int fl) { return open(p, fl); }
EXPORT int __open64_2(const char *p, int fl) { return open64(p, fl); }
EXPORT int __openat_2(int dir, const char *p, int fl) { return openat(dir, p, fl); }
EXPORT int __openat64_2(int dir, const char *p, int fl) { return openat64(dir, p, fl); }
/* fopen opens through libc's internal open, out of our sight */
static int mode_flags(const char *m)
{
	int plus = strchr(m, '+') != NULL;
	switch (m[0]) {
	case 'a':
		return (plus ? O_RDWR : O_WRONLY) | O_APPEND;
	case 'w':
		return O_WRONLY | O_TRUNC;
	case 'r':
		return plus ? O_RDWR : O_RDONLY;
	}
	return O_RDONLY;
}
static FILE *fopened(FILE *f, const char *m, const char *p)
{
	int sv = errno;
	int fd = opened(f ? fileno(f) : -1, mode_flags(m), p);
	if (fd < 0 && f) {
		sv = errno;
		fclose(f);
		f = NULL;
	} else if (fd >= 0 && !f) {
		f = fdopen(fd, m); /* a stand-in for a file not here */
		sv = errno;
		if (!f)
			real_close(fd);
	}
	errno = sv;
	return f;
}
EXPORT FILE *fopen(const char *p, const char *m)
{
	READY();
	to_trunc(AT_FDCWD, p, mode_flags(m));
	return fopened(real_fopen(p, m), m, p);
}
EXPORT FILE *fopen64(const char *p, const char *m)
{
	READY();
	to_trunc(AT_FDCWD, p, mode_flags(m));
	return fopened(real_fopen64(p, m), m, p);
}

/* DATA_CALL wraps a call that returns data in buf: replay or record. */
/* late_data, lock held: a call that began recording and returned after a
 * restore (CRIU restarts a system call it interrupted in a thread that
 * was blocked in it: a timerfd's read, a poll, a recv) finds the log
 * ahead, with its own entry there already. It takes that entry's answer
 * in its turn, as a replay does (what the real call returned is dropped:
 * for a socket, data that came after the restore), instead of recording
 * in the middle of the log. 1: buf and *res are the log's; 0: record. */
static int late(void);
static int late_data(int k, int fd, size_t max, void *buf, int64_t *res)
{
	if (!late())
		return 0;
	struct ent e;
	if (!start(k, &e))
		return 0;
	return e.kind == K_FILE ? rep_file(&e, fd, max, buf, res, k == K_PREAD) : rep_data(&e, k, fd, max, buf, res);
}

#define DATA_CALL(K, FD, OFFARG, MAX, BUF, CALL)                           \
	do {                                                         \
		struct ent e;                                        \
		int64_t res;                                         \
		if (OFF || is_tty(FD))          \
			return CALL;                                 \
		inlib = 1;                                           \
		lock();                                              \
		int rep = start(K, &e) && (e.kind == K_FILE          \
			? rep_file(&e, FD, MAX, BUF, &res, K == K_PREAD) \
			: rep_data(&e, K, FD, MAX, BUF, &res));      \
		if (rep && K == K_READ && is_own_pipe(FD))           \
			owe(FD, res);                                \
		unlock();                                            \
		if (!rep) {                                          \
			struct fid id;                               \
			int64_t at = 0;                              \
			int ref = (K == K_READ || K == K_PREAD) && !is_own_pipe(FD) \
				  && file_pre(FD, OFFARG, MAX, &id, &at); \
			if (K == K_READ && is_own_pipe(FD))          \
				drain(FD, 1);                        \
			if (K == K_READ && is_own_pipe(FD) && pre[FD].len) \
				res = from_ahead(FD, BUF, MAX);      \
			else                                         \
				res = CALL;                          \
			int sv = errno;                              \
			if (ref && res > 0 && (OFFARG) < 0 && (fd_shared || !synced()) \
			    && lseek(FD, 0, SEEK_CUR) != at + res)    \
				ref = 0;                             \
			lock();                                      \
			/* (a late answer is the log's: given below) */ \
			rep = !is_own_pipe(FD) && late_data(K, FD, MAX, BUF, &res); \
			if (!rep && ref && res > 0 && at + res > store_below) \
				log_file(FD, res, at, &id, K == K_PREAD); \
			else if (!rep)                               \
				log_data(K, FD, res < 0 ? -sv : res, BUF); \
			unlock();                                    \
			errno = sv;                                  \
		}                                                    \
		if (rep && res < 0) {                                \
			errno = (int)-res;                           \
			res = -1;                                    \
		}                                                    \
		inlib = 0;                                           \
		return res;                                          \
	} while (0)

EXPORT ssize_t read(int fd, void *buf, size_t n) { READY(); DATA_CALL(K_READ, fd, -1, n, buf, real_read(fd, buf, n)); }
EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off) { READY(); DATA_CALL(K_PREAD, fd, off, n, buf, real_pread(fd, buf, n, off)); }
EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) { READY(); DATA_CALL(K_PREAD, fd, off, n, buf, real_pread(fd, buf, n, off)); }
EXPORT ssize_t recv(int fd, void *buf, size_t n, int fl) { READY(); DATA_CALL(K_RECV, fd, -1, n, buf, standin(fd) ? 0 : real_recv(fd, buf, n, fl)); }
EXPORT ssize_t getrandom(void *buf, size_t n, unsigned fl) { READY(); DATA_CALL(K_RANDOM, -1, -1, n, buf, real_getrandom(buf, n, fl)); }

/* readv, preadv: logged as read and pread of the bytes gathered (a
 * replay scatters them again), so a program may read a stream either way
 * on replay. */
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_preadv)(int, const struct iovec *, int, off_t);
static void scatter(const struct iovec *iov, int cnt, const char *from, size_t n)
{
	for (int i = 0; i < cnt && n > 0; i++) {
		size_t c = iov[i].iov_len < n ? iov[i].iov_len : n;
		memcpy(iov[i].iov_base, from, c);
		from += c;
		n -= c;
	}
}
static ssize_t readv_gather(int fd, const struct iovec *iov, int cnt, off_t off, int p, char *tmp)
{
	ssize_t r = p ? real_preadv(fd, iov, cnt, off) : real_readv(fd, iov, cnt);
	int sv = errno;
	for (int i = 0, got = 0; r > 0 && i < cnt && got < r; i++) {
		size_t c = iov[i].iov_len < (size_t)(r - got) ? iov[i].iov_len : (size_t)(r - got);
		memcpy(tmp + got, iov[i].iov_base, c);
		got += (int)c;
	}
	errno = sv;
	return r;
}
static ssize_t readv_log(int fd, const struct iovec *iov, int cnt, size_t max, char *tmp)
{
	DATA_CALL(K_READ, fd, -1, max, tmp, readv_gather(fd, iov, cnt, 0, 0, tmp));
}
static ssize_t preadv_log(int fd, const struct iovec *iov, int cnt, off_t off, size_t max, char *tmp)
{
	DATA_CALL(K_PREAD, fd, off, max, tmp, readv_gather(fd, iov, cnt, off, 1, tmp));
}
static ssize_t readv_common(int fd, const struct iovec *iov, int cnt, off_t off, int p)
{
	if (!real_readv) {
		real_readv = (__typeof__(real_readv))dlsym(RTLD_NEXT, "readv");
		real_preadv = (__typeof__(real_preadv))dlsym(RTLD_NEXT, "preadv");
	}
	size_t max = 0;
	int ok = cnt > 0 && cnt <= IOV_MAX;
	for (int i = 0; ok && i < cnt; i++) {
		ok = iov[i].iov_len <= (size_t)SSIZE_MAX - max;
		max += iov[i].iov_len;
	}
	char *tmp = NULL;
	if (OFF || !ok || is_tty(fd) || !(tmp = malloc(max ? max : 1)))
		return p ? real_preadv(fd, iov, cnt, off) : real_readv(fd, iov, cnt);
	ssize_t r = p ? preadv_log(fd, iov, cnt, off, max, tmp) : readv_log(fd, iov, cnt, max, tmp);
	int sv = errno;
	if (r > 0)
		scatter(iov, cnt, tmp, (size_t)r);
	free(tmp);
	errno = sv;
	return r;
}
EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt) { READY(); return readv_common(fd, iov, cnt, 0, 0); }
EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off) { READY(); return readv_common(fd, iov, cnt, off, 1); }
EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off_t off) { READY(); return readv_common(fd, iov, cnt, off, 1); }

/* recvfrom: the sender's address is not logged (replays leave it as it
 * is); the data is. */
EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int fl, struct sockaddr *a, socklen_t *al)
{
	READY();
	DATA_CALL(K_RECV, fd, -1, n, buf, standin(fd) ? 0 : real_recvfrom(fd, buf, n, fl, a, al));
}

/* recvmsg: the data of the iovecs, gathered; control messages are not
 * logged. */
EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int fl)
{
	READY();
	if (OFF || is_tty(fd))
		return real_recvmsg(fd, m, fl);
	size_t max = 0;
	for (size_t i = 0; i < m->msg_iovlen; i++)
		max += m->msg_iov[i].iov_len;
	char *tmp = malloc(max ? max : 1);
	if (!tmp)
		return real_recvmsg(fd, m, fl);
	struct ent e;
	int64_t res;
	inlib = 1;
	lock();
	int rep = start(K_RECV, &e) && rep_data(&e, K_RECV, fd, max, tmp, &res);
	unlock();
	if (!rep) {
		res = standin(fd) ? 0 : real_recvmsg(fd, m, fl);
		int sv = errno;
		size_t off = 0;
		for (size_t i = 0; res > 0 && i < m->msg_iovlen && off < (size_t)res; i++) {
			size_t c = m->msg_iov[i].iov_len < (size_t)res - off ? m->msg_iov[i].iov_len : (size_t)res - off;
			memcpy(tmp + off, m->msg_iov[i].iov_base, c);
			off += c;
		}
		lock();
		rep = late_data(K_RECV, fd, max, tmp, &res); /* the log's answer, given below */
		if (!rep)
			log_data(K_RECV, fd, res < 0 ? -sv : res, tmp);
		unlock();
		errno = sv;
	}
	if (rep && res < 0) {
		errno = (int)-res;
		res = -1;
	} else if (rep) {
		size_t off = 0;
		for (size_t i = 0; i < m->msg_iovlen && off < (size_t)res; i++) {
			size_t c = m->msg_iov[i].iov_len < (size_t)res - off ? m->msg_iov[i].iov_len : (size_t)res - off;
			memcpy(m->msg_iov[i].iov_base, tmp + off, c);
			off += c;
		}
		m->msg_controllen = 0;
	}
	inlib = 0;
	free(tmp);
	return res;
}

/* recvmmsg: one recvmsg (logged as above) a message; after the first,
 * only messages already waiting are taken (as with MSG_WAITFORONE), so
 * that the log says how many the call returned. The timeout is not
 * honoured past the first message. */
EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int fl, struct timespec *to)
{
	READY();
	if (OFF || is_tty(fd))
		return real_recvmmsg(fd, v, n, fl, to);
	fl &= ~MSG_WAITFORONE;
	unsigned int i;
	for (i = 0; i < n; i++) {
		ssize_t r = recvmsg(fd, &v[i].msg_hdr, i == 0 ? fl : fl | MSG_DONTWAIT);
		if (r < 0)
			return i > 0 ? (int)i : -1;
		v[i].msg_len = (unsigned int)r;
	}
	return (int)i;
}

/* --- what a file's metadata says (FREDLOG_STAT=1: fred record) ---
 *
 * A program sizes its reads by what fstat says (Python reads a file whole
 * in a buffer of st_size + 1 bytes), decides by an mtime whether a cache
 * is fresh (a .pyc), or whether a file is there: a recording replayed
 * after its files changed, or on another machine, must see what the
 * recorded run saw. Each call is logged with its struct stat (-errno when
 * it failed); a terminal's is not, as its reads are not. fred turns it
 * on in debugging sessions too, so that a saved one (fred-save) replays
 * on another machine. */
HIDDEN int fredlog_stat;

#define STAT_CALL(FD, ST, CALL) STAT_CALL_SIZE(FD, ST, sizeof(struct stat), CALL)
#define STAT_CALL_SIZE(FD, ST, SIZE, CALL) STRUCT_CALL(K_STAT, FD, ST, SIZE, CALL)
#define STRUCT_CALL(K, FD, ST, SIZE, CALL)                                           \
	do {                                                                         \
		if (OFF || !fredlog_stat)                                            \
			return CALL;                                                 \
		int fd_ = (FD);                                                      \
		if (fd_ < (1 << 24) && is_tty(fd_))                                  \
			return CALL;                                                 \
		struct ent e;                                                        \
		int64_t res;                                                         \
		inlib = 1;                                                           \
		lock();                                                              \
		int rep = start((K), &e) && rep_data(&e, (K), fd_, (SIZE), ST, &res); \
		unlock();                                                            \
		int sv = errno;                                                      \
		if (!rep) {                                                          \
			int r = CALL;                                                \
			if (r != 0)                                                  \
				sv = errno;                                          \
			res = r == 0 ? (int64_t)(SIZE) : -sv;                        \
			lock();                                                      \
			log_data((K), fd_, res, ST);                                 \
			unlock();                                                    \
		}                                                                    \
		inlib = 0;                                                           \
		if (res < 0) {                                                       \
			errno = (int)-res;                                           \
			return -1;                                                   \
		}                                                                    \
		errno = sv;                                                          \
		return 0;                                                            \
	} while (0)
/* A call on a path is logged under a number made from the path (past any
 * descriptor), so that a replay that asks about another file than the
 * recorded run did at that point is a divergence, not the other's answer. */
#define STAT_PATHS (1 << 24)
static int path_key(const char *p)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	TRACE("T%d path %s", mythr, p ? p : "(null)");
	for (; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return STAT_PATHS + (int)(h & 0xffffff);
}
EXPORT int stat(const char *p, struct stat *st)
{
	READY();
	if (device_path(p))
		return real_stat(p, st);
	STAT_CALL(path_key(p), st, real_stat(p, st));
}
/* (the 64 variants share struct stat's layout on 64-bit machines) */
EXPORT int stat64(const char *p, struct stat64 *st) { return stat(p, (struct stat *)st); }
EXPORT int lstat(const char *p, struct stat *st)
{
	READY();
	if (device_path(p))
		return real_lstat(p, st);
	STAT_CALL(path_key(p), st, real_lstat(p, st));
}
EXPORT int lstat64(const char *p, struct stat64 *st) { return lstat(p, (struct stat *)st); }
EXPORT int fstat(int fd, struct stat *st) { READY(); STAT_CALL(fd, st, real_fstat(fd, st)); }
EXPORT int fstat64(int fd, struct stat64 *st) { return fstat(fd, (struct stat *)st); }
/* (not inlined: fstatat's path is declared non-null, and the kernel takes
 * NULL with AT_EMPTY_PATH) */
__attribute__((noinline)) static int no_path(const char *p) { return !p || !*p; }
EXPORT int fstatat(int dfd, const char *p, struct stat *st, int fl)
{
	READY();
	if (!no_path(p) && device_path(p))
		return real_fstatat(dfd, p, st, fl);
	STAT_CALL(((fl & AT_EMPTY_PATH) && no_path(p)) ? dfd : path_key(p), st, real_fstatat(dfd, p, st, fl));
}
EXPORT int fstatat64(int dfd, const char *p, struct stat64 *st, int fl) { return fstatat(dfd, p, (struct stat *)st, fl); }
/* uname and gethostname: the machine a recording replays on has
 * another name (its kernel release, another version) */
EXPORT int uname(struct utsname *u)
{
	READY();
	if (fredlog_legacy)
		return real_uname(u);
	STRUCT_CALL(K_UNAME, STAT_PATHS, u, sizeof(struct utsname), real_uname(u)); /* (a key past any fd: not a terminal) */
}
EXPORT int gethostname(char *name, size_t len)
{
	struct utsname u;
	if (uname(&u) != 0)
		return -1;
	size_t n = strlen(u.nodename) + 1;
	memcpy(name, u.nodename, n <= len ? n : len);
	if (n > len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
/* statx: what coreutils (ls, cp) ask with */
EXPORT int statx(int dfd, const char *p, int fl, unsigned int mask, struct statx *st)
{
	READY();
	if (!real_statx) {
		errno = ENOSYS;
		return -1;
	}
	if ((!no_path(p) && device_path(p)) || fredlog_legacy)
		return real_statx(dfd, p, fl, mask, st);
	STAT_CALL_SIZE(((fl & AT_EMPTY_PATH) && no_path(p)) ? dfd : path_key(p), st, sizeof(struct statx), real_statx(dfd, p, fl, mask, st));
}
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "one layout");

/* --- what a file's size and a directory's entries say (log version 3) ---
 *
 * lseek to the end (or to data, or a hole) answers with the file's size,
 * which a changed file, or another machine's, does not share: the answer
 * is logged, and a replay puts the offset there. A seek from the start or
 * from the offset answers what the run's reads made it (moved), as then.
 * Entry: K_SEEK, uv fd+1, sv offset or -errno. */
static int64_t simple(int k, int64_t key, int64_t (*call)(void *), void *arg, int *replayed);
struct seek_args {
	int fd, whence;
	off_t off;
};
static int64_t call_lseek(void *a)
{
	struct seek_args *x = a;
	return syscall(SYS_lseek, x->fd, x->off, x->whence);
}
EXPORT off_t lseek(int fd, off_t off, int whence)
{
	if (whence != SEEK_END && whence != SEEK_DATA && whence != SEEK_HOLE)
		return syscall(SYS_lseek, fd, off, whence);
	READY();
	if (OFF || !fredlog_stat || fredlog_logv < 3 || is_tty(fd))
		return syscall(SYS_lseek, fd, off, whence);
	struct seek_args x = {fd, whence, off};
	int replayed = 0;
	int64_t r = simple(K_SEEK, fd, call_lseek, &x, &replayed);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (replayed)
		syscall(SYS_lseek, fd, (off_t)r, SEEK_SET); /* where it was then */
	return (off_t)r;
}
EXPORT off_t lseek64(int fd, off_t off, int whence) { return lseek(fd, off, whence); }
/* A stream's seek to its end (fseek(f, 0, SEEK_END), then ftell: how C
 * programs size a file) goes to libc's internal lseek: the same entry,
 * keyed by the stream's descriptor, holds the position it reached. */
struct fseek_args {
	FILE *f;
	off_t off;
};
static int64_t call_fseek(void *a)
{
	struct fseek_args *x = a;
	if (real_fseeko(x->f, x->off, SEEK_END) != 0)
		return -1;
	off_t at = ftello(x->f);
	return at < 0 ? -1 : at;
}
EXPORT int fseeko(FILE *f, off_t off, int whence)
{
	READY();
	if (whence != SEEK_END || OFF || !fredlog_stat || fredlog_logv < 3)
		return real_fseeko(f, off, whence);
	int sv = errno, fd = fileno(f); /* (a memory stream has none: EBADF) */
	errno = sv;
	if (fd < 0 || is_tty(fd))
		return real_fseeko(f, off, whence);
	struct fseek_args x = {f, off};
	int replayed = 0;
	int64_t r = simple(K_SEEK, fd, call_fseek, &x, &replayed);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	if (replayed)
		return real_fseeko(f, (off_t)r, SEEK_SET); /* where it was then */
	return 0;
}
EXPORT int fseeko64(FILE *f, off_t off, int whence) { return fseeko(f, off, whence); }
EXPORT int fseek(FILE *f, long off, int whence) { return fseeko(f, (off_t)off, whence); }

/* A directory's entries (Python's import system lists each directory on
 * its path, and takes a module from there only if it is listed) are the
 * recorded ones: whether opendir found the directory (one not here gets a
 * stand-in, an empty directory of fred's: its entries come from the log),
 * then each entry readdir gave, by the directory's descriptor. The real
 * directory is not read on replay (a telldir then is not the recorded
 * one); past the log's end its stream goes on from the last replayed
 * entry.
 * Entries: K_OPENDIR, sv 0 or -errno; K_READDIR, uv fd+1, sv 1 (then uv
 * ino, sv off, uv type, uv length, the name), 0 at the end, or -errno.
 * Off in an interpreter's session (FREDLOG_DIRS=0): its import caches
 * are filled while its debugger works too, unlogged, and checked while
 * the program runs, so when it lists a directory follows the debugger. */
static int fredlog_dirs = 1;
/* empty_dir: a descriptor of a new empty directory of fred's (beside the
 * log, removed with it), the stand-in for a directory not here now: its
 * entries come from the log, and past the log it lists nothing (-1:
 * none). One each: a file the program makes in one stays in it. */
static int empty_dir(int flags)
{
	static int n;
	char p[sizeof cutdir + 48];
	snprintf(p, sizeof p, "%s/.fred-empty-%d-%d", cutdir, (int)syscall(SYS_getpid), __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED));
	if (syscall(SYS_mkdirat, AT_FDCWD, p, 0700) != 0)
		return -1;
	return (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_DIRECTORY | (flags & O_CLOEXEC));
}
/* dir_at[fd]: where a replayed listing stands (its last entry's d_off),
 * for the real stream to go on from there past the log (0: nowhere;
 * DIR_END: the replayed listing ended) */
static int64_t dir_at[MAXFILEFD];
#define DIR_END INT64_MIN
static void dir_fresh(DIR *d)
{
	int fd = d ? dirfd(d) : -1;
	if (fd >= 0 && fd < MAXFILEFD)
		dir_at[fd] = 0;
}
/* opened_dir replays or logs an opendir or fdopendir (fd: its argument,
 * -1 for a path), the lock not held: open is the real call's result now
 * (NULL: it failed, errno sv) or, for fdopendir on replay, not yet made
 * (made here only if the recorded one succeeded). */
static DIR *opened_dir(DIR *d, int sv, int fd, int made)
{
	struct ent e;
	inlib = 1;
	lock();
	if (start(K_OPENDIR, &e)) {
		uint64_t at = e.at;
		int64_t r = get_sv(&at);
		e.at = at;
		done(&e);
		unlock();
		if (r < 0) {
			if (d && made)
				closedir(d);
			d = NULL;
			sv = (int)-r;
		} else {
			if (!made)
				d = real_fdopendir(fd), sv = errno;
			if (!d) {
				/* not here: an empty stand-in, at the program's fd
				 * (with its close-on-exec) */
				int cloexec = fd >= 0 ? (fcntl(fd, F_GETFD) & FD_CLOEXEC) : 1;
				int e0 = empty_dir(O_CLOEXEC);
				if (e0 >= 0 && fd >= 0 && e0 != fd) {
					int r2 = (int)syscall(SYS_dup3, e0, fd, cloexec ? O_CLOEXEC : 0);
					syscall(SYS_close, e0);
					e0 = r2 >= 0 ? fd : -1;
				}
				d = e0 >= 0 ? real_fdopendir(e0) : NULL;
				if (!d && e0 >= 0 && e0 != fd)
					syscall(SYS_close, e0);
				TRACE("T%d opendir: the directory is not here: a stand-in, fd %d", mythr, e0);
			}
		}
		dir_fresh(d);
		inlib = 0;
		errno = sv;
		return d;
	}
	unlock();
	if (!made)
		d = real_fdopendir(fd), sv = errno;
	unsigned char h[16];
	h[0] = K_OPENDIR;
	int n = 1 + put_sv(h + 1, d ? 0 : -(int64_t)sv);
	lock();
	append(h, n, NULL, 0);
	unlock();
	dir_fresh(d);
	inlib = 0;
	errno = sv;
	return d;
}
EXPORT DIR *opendir(const char *p)
{
	READY();
	DIR *d = real_opendir(p);
	if (OFF || !fredlog_stat || fredlog_logv < 3 || !fredlog_dirs || device_path(p)) {
		int sv = errno;
		dir_fresh(d);
		errno = sv;
		return d;
	}
	return opened_dir(d, errno, -1, 1);
}
EXPORT DIR *fdopendir(int fd)
{
	READY();
	if (OFF || !fredlog_stat || fredlog_logv < 3 || !fredlog_dirs) {
		DIR *d = real_fdopendir(fd);
		int sv = errno;
		dir_fresh(d);
		errno = sv;
		return d;
	}
	/* (made after the log is asked: a recorded failure must not take
	 * the program's descriptor, which fdopendir's success would own) */
	return opened_dir(NULL, 0, fd, 0);
}
/* replayed entries: one per descriptor, as readdir's own buffer is */
static struct dirent64 *dents[MAXFILEFD];
/* real_next is the real stream's next entry: from where a replayed
 * listing stood, if one did. *err: 0, or the error. */
static struct dirent64 *real_next(DIR *d, int fd, int *err)
{
	if (fd >= 0 && fd < MAXFILEFD && dir_at[fd] == DIR_END) {
		*err = 0; /* (the replayed listing ended: so does this one) */
		return NULL;
	}
	if (fd >= 0 && fd < MAXFILEFD && dir_at[fd]) {
		real_seekdir(d, (long)dir_at[fd]);
		dir_at[fd] = 0;
	}
	errno = 0;
	struct dirent64 *de = real_readdir64(d);
	*err = de ? 0 : errno;
	return de;
}
/* read_dir gives readdir's answer for d: its entry, or NULL at the end
 * (*err 0) or on an error (*err). */
static struct dirent64 *read_dir(DIR *d, int *err)
{
	int fd = dirfd(d);
	if (OFF || !fredlog_stat || fredlog_logv < 3 || !fredlog_dirs || fd < 0 || fd >= MAXFILEFD)
		return real_next(d, -1, err);
	*err = 0;
	struct ent e;
	inlib = 1;
	lock();
	if (start(K_READDIR, &e)) {
		uint64_t at = e.at;
		int64_t lfd = (int64_t)get_uv(&at) - 1;
		int64_t r = get_sv(&at);
		if (lfd == fd) {
			struct dirent64 *de = NULL;
			if (r == 1) {
				uint64_t ino = get_uv(&at);
				int64_t off = get_sv(&at);
				int type = (int)get_uv(&at);
				uint64_t n = get_uv(&at);
				if (!dents[fd])
					dents[fd] = malloc(sizeof(struct dirent64));
				de = dents[fd];
				if (de && n < sizeof de->d_name) {
					de->d_ino = ino;
					de->d_off = off;
					de->d_type = (unsigned char)type;
					memcpy(de->d_name, fredlog_base + at, n);
					de->d_name[n] = 0;
					de->d_reclen = (unsigned short)((offsetof(struct dirent64, d_name) + n + 8) & ~(size_t)7);
				}
				dir_at[fd] = off;
				at += n;
			} else if (r < 0)
				*err = (int)-r;
			else
				dir_at[fd] = DIR_END;
			e.at = at;
			done(&e);
			unlock();
			inlib = 0;
			return de;
		}
		char why[64];
		snprintf(why, sizeof why, " (fd %d; the log's is fd %lld)", fd, (long long)lfd);
		diverge(K_READDIR, K_READDIR, why);
	}
	unlock();
	struct dirent64 *de = real_next(d, fd, err);
	unsigned char h[48];
	h[0] = K_READDIR;
	int n = 1 + put_uv(h + 1, (uint64_t)(fd + 1));
	size_t len = de ? strlen(de->d_name) : 0;
	n += put_sv(h + n, de ? 1 : -(int64_t)*err);
	if (de) {
		n += put_uv(h + n, de->d_ino);
		n += put_sv(h + n, de->d_off);
		n += put_uv(h + n, de->d_type);
		n += put_uv(h + n, len);
	}
	lock();
	append(h, n, de ? de->d_name : NULL, len);
	unlock();
	inlib = 0;
	return de;
}
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "one layout");
/* the program's own moves of a stream: its position is its own again */
EXPORT void rewinddir(DIR *d)
{
	READY();
	dir_fresh(d);
	real_rewinddir(d);
}
EXPORT void seekdir(DIR *d, long at)
{
	READY();
	dir_fresh(d);
	real_seekdir(d, at);
}
EXPORT struct dirent64 *readdir64(DIR *d)
{
	READY();
	int sv = errno, err;
	struct dirent64 *de = read_dir(d, &err);
	errno = err ? err : sv; /* (the end leaves errno as it was) */
	return de;
}
EXPORT struct dirent *readdir(DIR *d) { return (struct dirent *)readdir64(d); }
static int dir_r(DIR *d, struct dirent64 *buf, struct dirent64 **res)
{
	READY();
	int sv = errno, err;
	struct dirent64 *de = read_dir(d, &err);
	if (de) {
		memcpy(buf, de, de->d_reclen < sizeof *buf ? de->d_reclen : sizeof *buf);
		*res = buf;
	} else
		*res = NULL;
	errno = sv;
	return err;
}
EXPORT int readdir64_r(DIR *d, struct dirent64 *buf, struct dirent64 **res) { return dir_r(d, buf, res); }
EXPORT int readdir_r(DIR *d, struct dirent *buf, struct dirent **res)
{
	return dir_r(d, (struct dirent64 *)buf, (struct dirent64 **)res);
}

/* stdio reads go to libc's internal read, which LD_PRELOAD cannot see:
 * the usual ones are wrapped here. The FILE's own buffer is not replayed,
 * so a replayed stretch must read a stream only through these. */
static int stdio_tty(FILE *f) { return is_tty(fileno(f)); }
/* eof_seen: a replayed read that came short ended at the end of the file
 * when recorded, which left the stream's end-of-file flag set (glibc's
 * _IO_EOF_SEEN): so does the replay, for the feof that comes next. */
static void eof_seen(FILE *f) { f->_flags |= 0x0010; }

/* (the _unlocked ones too: coreutils, through gnulib's unlocked-io.h,
 * reads with fread_unlocked; stdio.h may make them macros here) */
#undef fread_unlocked
#undef fgets_unlocked
#undef fgetc_unlocked
#undef getc_unlocked
static size_t fread_common(void *buf, size_t sz, size_t nm, FILE *f, size_t (*real)(void *, size_t, size_t, FILE *))
{
	if (OFF || stdio_tty(f) || sz == 0)
		return real(buf, sz, nm, f);
	int fd = fileno(f);
	struct ent e;
	int64_t res;
	inlib = 1;
	lock();
	int rep = start(K_STDIO, &e) && rep_data(&e, K_STDIO, fd, sz * nm, buf, &res);
	unlock();
	if (rep) {
		moved(fd, f, res);
		if (res < (int64_t)(sz * nm))
			eof_seen(f);
	}
	if (!rep) {
		size_t got = real(buf, sz, nm, f);
		res = (int64_t)(got * sz);
		lock();
		log_data(K_STDIO, fd, res, buf);
		unlock();
	}
	inlib = 0;
	return res < 0 ? 0 : (size_t)res / sz;
}
EXPORT size_t fread(void *buf, size_t sz, size_t nm, FILE *f) { READY(); return fread_common(buf, sz, nm, f, real_fread); }
EXPORT size_t fread_unlocked(void *buf, size_t sz, size_t nm, FILE *f)
{
	READY();
	return fread_common(buf, sz, nm, f, real_fread_unlocked);
}
/* _FORTIFY_SOURCE's (Debian builds with it): the bounds are checked here */
EXPORT size_t __fread_chk(void *buf, size_t len, size_t sz, size_t nm, FILE *f)
{
	READY();
	if (sz && nm > len / sz)
		abort();
	return fread_common(buf, sz, nm, f, real_fread);
}
EXPORT size_t __fread_unlocked_chk(void *buf, size_t len, size_t sz, size_t nm, FILE *f)
{
	READY();
	if (sz && nm > len / sz)
		abort();
	return fread_common(buf, sz, nm, f, real_fread_unlocked);
}

static char *fgets_common(char *s, int size, FILE *f, char *(*real)(char *, int, FILE *))
{
	if (OFF || stdio_tty(f) || size <= 0)
		return real(s, size, f);
	int fd = fileno(f);
	struct ent e;
	int64_t res;
	inlib = 1;
	lock();
	int rep = start(K_STDIO, &e) && rep_data(&e, K_STDIO, fd, size - 1, s, &res);
	unlock();
	if (rep) {
		moved(fd, f, res);
		if (res <= 0 || (res < size - 1 && s[res - 1] != '\n'))
			eof_seen(f);
	}
	if (!rep) {
		char *r = real(s, size, f);
		res = r ? (int64_t)strlen(s) : 0;
		lock();
		log_data(K_STDIO, fd, res, s);
		unlock();
	}
	inlib = 0;
	if (res <= 0)
		return NULL;
	s[res] = 0;
	return s;
}
EXPORT char *fgets(char *s, int size, FILE *f) { READY(); return fgets_common(s, size, f, real_fgets); }
EXPORT char *fgets_unlocked(char *s, int size, FILE *f) { READY(); return fgets_common(s, size, f, real_fgets_unlocked); }
EXPORT char *__fgets_chk(char *s, size_t len, int size, FILE *f)
{
	READY();
	if (size > 0 && (size_t)size > len)
		abort();
	return fgets_common(s, size, f, real_fgets);
}
EXPORT char *__fgets_unlocked_chk(char *s, size_t len, int size, FILE *f)
{
	READY();
	if (size > 0 && (size_t)size > len)
		abort();
	return fgets_common(s, size, f, real_fgets_unlocked);
}

EXPORT ssize_t getdelim(char **lp, size_t *np, int delim, FILE *f)
{
	READY();
	if (OFF || stdio_tty(f))
		return real_getdelim(lp, np, delim, f);
	int fd = fileno(f);
	struct ent e;
	int64_t res = -1;
	inlib = 1;
	lock();
	int rep = 0;
	if (start(K_STDIO, &e)) {
		uint64_t at = e.at;
		get_uv(&at);
		int64_t r = get_sv(&at);
		size_t need = (r > 0 ? r : 0) + 1;
		if (!*lp || *np < need) {
			char *nl = realloc(*lp, need);
			if (nl) {
				*lp = nl;
				*np = need;
			}
		}
		if (*lp && *np >= need)
			rep = rep_data(&e, K_STDIO, fd, need, *lp, &res);
	}
	unlock();
	if (!rep) {
		res = real_getdelim(lp, np, delim, f);
		lock();
		log_data(K_STDIO, fd, res < 0 ? 0 : res, *lp);
		unlock();
	} else if (res <= 0) {
		res = -1;
		eof_seen(f);
	} else {
		(*lp)[res] = 0;
		moved(fd, f, res);
		if ((*lp)[res - 1] != (char)delim)
			eof_seen(f);
	}
	inlib = 0;
	return res <= 0 ? -1 : res;
}

EXPORT ssize_t getline(char **lp, size_t *np, FILE *f) { return getdelim(lp, np, '\n', f); }

static int getc_common(FILE *f, int (*real)(FILE *))
{
	if (OFF || stdio_tty(f))
		return real(f);
	unsigned char c;
	int fd = fileno(f);
	struct ent e;
	int64_t res;
	inlib = 1;
	lock();
	int rep = start(K_STDIO, &e) && rep_data(&e, K_STDIO, fd, 1, &c, &res);
	unlock();
	if (rep) {
		moved(fd, f, res);
		if (res < 1)
			eof_seen(f);
	}
	if (!rep) {
		int v = real(f);
		c = (unsigned char)v;
		res = v == EOF ? 0 : 1;
		lock();
		log_data(K_STDIO, fd, res, &c);
		unlock();
	}
	inlib = 0;
	return res == 1 ? c : EOF;
}
EXPORT int fgetc(FILE *f) { READY(); return getc_common(f, real_fgetc); }
EXPORT int getc(FILE *f) { READY(); return getc_common(f, real_getc); }
EXPORT int fgetc_unlocked(FILE *f) { READY(); return getc_common(f, real_fgetc_unlocked); }
EXPORT int getc_unlocked(FILE *f) { READY(); return getc_common(f, real_getc_unlocked); }
static int real_getchar_f(FILE *f)
{
	(void)f;
	return real_getchar();
}
EXPORT int getchar(void) { READY(); return getc_common(stdin, real_getchar_f); }

/* The scanf family reads its stream inside libc too. Recorded, the bytes
 * one call consumed are read again from the file (between the stream's
 * positions before and after it, with the one byte after them that
 * stopped the conversion, if any) and logged; replayed, the same
 * conversion runs on those bytes (a memory stream), which gives the same
 * values and result, and the stream moves on as far. A stream that has
 * no position (a pipe) is not logged, then or on replay. */
/* (stdio.h renames the scanf family to glibc's __isoc99_ ones: each is
 * defined here under a name of its own, given its symbol by hand) */
EXPORT int fred_vfscanf(FILE *, const char *, va_list) __asm__("vfscanf");
EXPORT int fred_isoc99_vfscanf(FILE *, const char *, va_list) __asm__("__isoc99_vfscanf");
EXPORT int fred_fscanf(FILE *, const char *, ...) __asm__("fscanf");
EXPORT int fred_isoc99_fscanf(FILE *, const char *, ...) __asm__("__isoc99_fscanf");
EXPORT int fred_scanf(const char *, ...) __asm__("scanf");
EXPORT int fred_isoc99_scanf(const char *, ...) __asm__("__isoc99_scanf");
EXPORT int fred_vscanf(const char *, va_list) __asm__("vscanf");
EXPORT int fred_isoc99_vscanf(const char *, va_list) __asm__("__isoc99_vscanf");
static int vfscanf_common(FILE *f, const char *fmt, va_list ap, int (*real)(FILE *, const char *, va_list))
{
	off_t p0;
	struct stat st;
	int fd = f ? fileno(f) : -1;
	/* a memory or cookie stream (no descriptor) reads nothing of the
	 * outside world; nor is a pipe's stream logged (no position) */
	if (OFF || !real || fredlog_legacy || fd < 0 || is_tty(fd) || raw_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (p0 = ftello(f)) < 0)
		return real(f, fmt, ap);
	struct ent e;
	int64_t res = -1;
	int r = EOF, rep = 0;
	char *b = NULL;
	inlib = 1;
	lock();
	if (start(K_STDIO, &e)) {
		uint64_t at = e.at;
		get_uv(&at);
		int64_t n = get_sv(&at);
		b = malloc(n > 0 ? (size_t)n : 1);
		rep = b && rep_data(&e, K_STDIO, fd, n > 0 ? (size_t)n : 0, b, &res);
	}
	unlock();
	if (rep) {
		/* the conversion runs on the logged bytes, out of the log's lock */
		if (res <= 0)
			b[0] = 0;
		FILE *m = fmemopen(b, res > 0 ? (size_t)res : 1, "r");
		if (m) {
			if (res <= 0)
				real_fgetc(m); /* (fmemopen wants a size: an empty stream) */
			r = real(m, fmt, ap);
			long used = ftell(m) - (res <= 0);
			int end = feof(m);
			fclose(m);
			moved(fd, f, used > 0 ? used : 0);
			if (end)
				eof_seen(f);
		} else {
			errno = ENOMEM;
		}
	}
	free(b);
	if (!rep) {
		r = real(f, fmt, ap);
		off_t p1 = ftello(f);
		int64_t n = p1 > p0 ? (int64_t)(p1 - p0) : 0;
		b = malloc((size_t)n + 1);
		int64_t got = 0;
		if (b) {
			got = syscall(SYS_pread64, fd, b, (size_t)n + 1, p0);
			if (got < 0)
				got = 0;
		}
		lock();
		log_data(K_STDIO, fd, got, b);
		unlock();
		free(b);
	}
	inlib = 0;
	return r;
}
EXPORT int fred_vfscanf(FILE *f, const char *fmt, va_list ap) { READY(); return vfscanf_common(f, fmt, ap, real_vfscanf); }
EXPORT int fred_isoc99_vfscanf(FILE *f, const char *fmt, va_list ap) { READY(); return vfscanf_common(f, fmt, ap, real___isoc99_vfscanf); }
/* the variadic ones pass their arguments on as a va_list */
#define SCANF_FN(NAME, PARAMS, CALL)       \
	EXPORT int NAME PARAMS             \
	{                                  \
		va_list ap;                \
		va_start(ap, fmt);         \
		READY();                   \
		int r = CALL;              \
		va_end(ap);                \
		return r;                  \
	}
SCANF_FN(fred_fscanf, (FILE *f, const char *fmt, ...), vfscanf_common(f, fmt, ap, real_vfscanf))
SCANF_FN(fred_isoc99_fscanf, (FILE *f, const char *fmt, ...), vfscanf_common(f, fmt, ap, real___isoc99_vfscanf))
SCANF_FN(fred_scanf, (const char *fmt, ...), vfscanf_common(stdin, fmt, ap, real_vfscanf))
SCANF_FN(fred_isoc99_scanf, (const char *fmt, ...), vfscanf_common(stdin, fmt, ap, real___isoc99_vfscanf))
EXPORT int fred_vscanf(const char *fmt, va_list ap) { READY(); return vfscanf_common(stdin, fmt, ap, real_vfscanf); }
EXPORT int fred_isoc99_vscanf(const char *fmt, va_list ap) { READY(); return vfscanf_common(stdin, fmt, ap, real___isoc99_vfscanf); }
/* glibc 2.38's C23 names (strtol's 0b prefixes), where they exist */
static int (*real___isoc23_vfscanf)(FILE *, const char *, va_list);
static int isoc23_vfscanf(FILE *f, const char *fmt, va_list ap)
{
	if (!real___isoc23_vfscanf)
		real___isoc23_vfscanf = (__typeof__(real___isoc23_vfscanf))dlsym(RTLD_NEXT, "__isoc23_vfscanf");
	if (!real___isoc23_vfscanf) {
		errno = ENOSYS;
		return EOF;
	}
	return vfscanf_common(f, fmt, ap, real___isoc23_vfscanf);
}
EXPORT int fred_isoc23_vfscanf(FILE *, const char *, va_list) __asm__("__isoc23_vfscanf");
EXPORT int fred_isoc23_fscanf(FILE *, const char *, ...) __asm__("__isoc23_fscanf");
EXPORT int fred_isoc23_scanf(const char *, ...) __asm__("__isoc23_scanf");
EXPORT int fred_isoc23_vscanf(const char *, va_list) __asm__("__isoc23_vscanf");
EXPORT int fred_isoc23_vfscanf(FILE *f, const char *fmt, va_list ap) { READY(); return isoc23_vfscanf(f, fmt, ap); }
EXPORT int fred_isoc23_vscanf(const char *fmt, va_list ap) { READY(); return isoc23_vfscanf(stdin, fmt, ap); }
SCANF_FN(fred_isoc23_fscanf, (FILE *f, const char *fmt, ...), isoc23_vfscanf(f, fmt, ap))
SCANF_FN(fred_isoc23_scanf, (const char *fmt, ...), isoc23_vfscanf(stdin, fmt, ap))

/* fclose closes its descriptor inside libc, out of close()'s reach. */
static int (*real_fclose)(FILE *);
EXPORT int fclose(FILE *f)
{
	READY();
	if (!real_fclose)
		real_fclose = (__typeof__(real_fclose))dlsym(RTLD_NEXT, "fclose");
	if (f)
		forget_fd(fileno(f));
	return real_fclose(f);
}

/* --- results without data --- */

/* simple records or replays one signed result. */
static int simple_rep(int k, int64_t key, struct ent *e, int64_t *res)
{
	uint64_t at = e->at;
	int64_t lk2 = (int64_t)get_uv(&at) - 1;
	if (lk2 == key) {
		*res = get_sv(&at);
		e->at = at;
		done(e);
		return 1;
	}
	diverge(k, k, " (other arguments)");
	return 0;
}

/* simple: with late (accept), a call that began recording and returned
 * after a restore (or ended its wait in slices: SWITCH) takes the log's
 * answer in its turn; late gets back what the real call returned. */
static int64_t simple_late(int k, int64_t key, int64_t (*call)(void *), void *arg, int *replayed, void (*late_undo)(int64_t))
{
	struct ent e;
	int64_t res;
	inlib = 1;
	lock();
	if (start(k, &e) && simple_rep(k, key, &e, &res)) {
		unlock();
		inlib = 0;
		if (replayed)
			*replayed = 1;
		return res;
	}
	unlock();
	res = call(arg);
	int sv = errno;
	if (late_undo) {
		lock();
		int64_t logged;
		if (late() && start(k, &e) && simple_rep(k, key, &e, &logged)) {
			unlock();
			if (res >= 0)
				late_undo(res);
			inlib = 0;
			if (replayed)
				*replayed = 1;
			return logged;
		}
		unlock();
		if (res == SWITCH) {
			/* the log was ahead, and is not now: ours to record */
			res = call(arg);
			sv = errno;
		}
	}
	unsigned char h[24];
	h[0] = (unsigned char)k;
	int n = 1 + put_uv(h + 1, (uint64_t)(key + 1));
	n += put_sv(h + n, res < 0 ? -sv : res);
	lock();
	append(h, n, NULL, 0);
	unlock();
	inlib = 0;
	errno = sv;
	return res < 0 ? -sv : res;
}
static int64_t simple(int k, int64_t key, int64_t (*call)(void *), void *arg, int *replayed)
{
	return simple_late(k, key, call, arg, replayed, NULL);
}

static int64_t call_getpid(void *a)
{
	(void)a;
	return syscall(SYS_getpid);
}
static int64_t call_getppid(void *a)
{
	(void)a;
	return syscall(SYS_getppid);
}
EXPORT pid_t getpid(void)
{
	READY();
	if (OFF || !fredlog_pid)
		return syscall(SYS_getpid);
	return (pid_t)simple(K_GETPID, 0, call_getpid, NULL, NULL);
}
EXPORT pid_t getppid(void)
{
	READY();
	if (OFF || !fredlog_pid)
		return syscall(SYS_getppid);
	return (pid_t)simple(K_GETPPID, 0, call_getppid, NULL, NULL);
}

/* errno results come back negative from simple. */
static int neg(int64_t r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}

/* --- sends on sockets ---
 *
 * A replay must not send again what the peer already has (a client would
 * get its answers twice; one that has gone makes the replay fail with
 * EPIPE). A send on a socket is logged (its result) and, replayed, gives
 * that result without sending. Sockets the program made in pairs carry
 * data between its own threads, whose reads are replayed as reads of its
 * own pipes are: their writes are made again. stdio's writes go through
 * libc's internal write, out of our sight.
 * Entry: K_SEND, uv fd+1, sv result. */
/* own_sock: 1 an end of a socketpair the program made (written again);
 * 2 the stand-in for a connection a replayed accept made (/dev/null: its
 * sends are the log's) */
static unsigned char own_sock[MAXPIPEFD];
static void set_own_sock(int fd, int v)
{
	if (fd >= 0 && fd < MAXPIPEFD)
		own_sock[fd] = (unsigned char)v;
}
static int sock_kind(int fd) { return fd >= 0 && fd < MAXPIPEFD ? own_sock[fd] : 0; }
/* A stand-in is no socket: where the program asks about the socket it
 * stands for, the stand-in answers with the name and kind of the socket
 * it was accepted on, kept when it was made (the listener may be closed
 * later); an option set on it sets nothing. A Python server makes its
 * socket object by asking getsockname, and failed on /dev/null. */
struct standin {
	int fd1; /* the descriptor + 1; 0: a free slot */
	socklen_t len, plen;
	struct sockaddr_storage a, peer; /* its name, and its client's */
	int type, domain, proto;
};
#define MAXSTANDINS 64
static struct standin standins[MAXSTANDINS];
static struct standin *standin_slot(int fd)
{
	for (int i = 0; i < MAXSTANDINS; i++)
		if (standins[i].fd1 == fd + 1)
			return &standins[i];
	return NULL;
}
static void drop_standin(int fd)
{
	struct standin *x = standin_slot(fd);
	if (x)
		x->fd1 = 0;
}
/* keep_standin notes fd as the stand-in of a connection accepted on
 * listener from the client at peer (plen bytes), or as a duplicate of the
 * stand-in from (listener < 0). */
static void keep_standin(int fd, int listener, const struct standin *from, const void *peer, socklen_t plen)
{
	struct standin *x = standin_slot(fd);
	for (int i = 0; !x && i < MAXSTANDINS; i++)
		if (!standins[i].fd1)
			x = &standins[i];
	if (!x)
		return;
	if (from) {
		*x = *from;
	} else {
		int sv = errno;
		socklen_t l = sizeof(int);
		memset(x, 0, sizeof *x);
		x->len = sizeof x->a;
		if (real_getsockname(listener, (struct sockaddr *)&x->a, &x->len) != 0)
			x->len = 0;
		real_getsockopt(listener, SOL_SOCKET, SO_TYPE, &x->type, &l);
		l = sizeof(int);
		real_getsockopt(listener, SOL_SOCKET, SO_DOMAIN, &x->domain, &l);
		l = sizeof(int);
		real_getsockopt(listener, SOL_SOCKET, SO_PROTOCOL, &x->proto, &l);
		errno = sv;
		x->plen = plen;
		memcpy(&x->peer, peer, plen);
	}
	x->fd1 = fd + 1;
}
/* standin is fd's stand-in, if it is one still: a descriptor closed out
 * of our sight (close_range) may be a real socket now. */
static struct standin *standin(int fd)
{
	if (sock_kind(fd) != 2)
		return NULL;
	struct stat st;
	int sv = errno;
	int isnull = raw_fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
	errno = sv;
	if (!isnull) {
		set_own_sock(fd, 0);
		drop_standin(fd);
		return NULL;
	}
	return standin_slot(fd);
}
/* copy_sock: b is a duplicate of a */
static void copy_sock(int a, int b)
{
	set_own_sock(b, sock_kind(a));
	drop_standin(b);
	struct standin *x = sock_kind(a) == 2 ? standin_slot(a) : NULL;
	if (x) {
		struct standin c = *x;
		keep_standin(b, -1, &c, NULL, 0);
	}
}
static int is_sock(int fd)
{
	if (sock_kind(fd) == 2)
		return 1;
	if (fd < 0 || sock_kind(fd) == 1)
		return 0;
	int sv = errno;
	struct stat st;
	int r = raw_fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
	errno = sv;
	return r;
}
EXPORT int socketpair(int dom, int type, int proto, int sv[2])
{
	READY();
	int r = real_socketpair(dom, type, proto, sv);
	if (r == 0)
		set_own_sock(sv[0], 1), set_own_sock(sv[1], 1);
	return r;
}
struct snd {
	int how, fd, fl, cnt;
	const void *b;
	size_t n;
	const struct sockaddr *to;
	socklen_t tl;
	const struct msghdr *m;
	const struct iovec *iov;
};
enum { S_WRITE, S_WRITEV, S_SEND, S_SENDTO, S_SENDMSG };
/* iov_len is the bytes of n buffers. */
static int64_t iov_len(const struct iovec *v, size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; v && i < n; i++)
		t += (int64_t)v[i].iov_len;
	return t;
}
static int64_t call_send(void *p)
{
	struct snd *x = p;
	/* Past its recording, a program that sends on a replayed connection
	 * (a stand-in, whose client fred let go) sends to nobody, as its
	 * replayed sends did: it goes on as it did then, and reads the end of
	 * the file when it waits for the client (recv, recvfrom, recvmsg). */
	if (standin(x->fd)) {
		switch (x->how) {
		case S_WRITEV:
			if (x->cnt < 0) {
				errno = EINVAL;
				return -1;
			}
			return iov_len(x->iov, (size_t)x->cnt);
		case S_SENDMSG:
			return x->m ? iov_len(x->m->msg_iov, x->m->msg_iovlen) : 0;
		}
		return (int64_t)x->n;
	}
	switch (x->how) {
	case S_WRITE:
		return real_write(x->fd, x->b, x->n);
	case S_WRITEV:
		return real_writev(x->fd, x->iov, x->cnt);
	case S_SEND:
		return real_send(x->fd, x->b, x->n, x->fl);
	case S_SENDTO:
		return real_sendto(x->fd, x->b, x->n, x->fl, x->to, x->tl);
	}
	return real_sendmsg(x->fd, x->m, x->fl);
}
static ssize_t send_common(struct snd *x)
{
	if (OFF || !is_sock(x->fd))
		return (ssize_t)call_send(x);
	int64_t r = simple(K_SEND, x->fd, call_send, x, NULL);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (ssize_t)r;
}
EXPORT ssize_t write(int fd, const void *b, size_t n)
{
	READY();
	struct snd x = {.how = S_WRITE, .fd = fd, .b = b, .n = n};
	return send_common(&x);
}
EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	READY();
	struct snd x = {.how = S_WRITEV, .fd = fd, .iov = iov, .cnt = cnt};
	return send_common(&x);
}
EXPORT ssize_t send(int fd, const void *b, size_t n, int fl)
{
	READY();
	struct snd x = {.how = S_SEND, .fd = fd, .b = b, .n = n, .fl = fl};
	return send_common(&x);
}
EXPORT ssize_t sendto(int fd, const void *b, size_t n, int fl, const struct sockaddr *to, socklen_t tl)
{
	READY();
	struct snd x = {.how = S_SENDTO, .fd = fd, .b = b, .n = n, .fl = fl, .to = to, .tl = tl};
	return send_common(&x);
}
EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int fl)
{
	READY();
	struct snd x = {.how = S_SENDMSG, .fd = fd, .m = m, .fl = fl};
	return send_common(&x);
}

/* accept: on replay there is no peer; the program gets /dev/null under
 * the logged descriptor number, and its reads from it are replayed. */
struct acc {
	int fd, fl, four;
	struct sockaddr *a;
	socklen_t *al;
};
static int64_t real_accept_of(struct acc *x)
{
	return x->four ? real_accept4(x->fd, x->a, x->al, x->fl) : real_accept(x->fd, x->a, x->al);
}
/* A blocking accept (recording) waits for a client in slices: a restore
 * (CRIU) that finds a thread waiting here puts the log ahead of it, and
 * the accept it recorded then is the log's to give (SWITCH), not a new
 * client's, which may never come. A signal whose handler the kernel would
 * not restart it for ends it with EINTR, as the kernel would; a socket
 * with a receive timeout waits as it is. */
static int now_late(void);
static int64_t call_accept(void *p)
{
	struct acc *x = p;
	int fl = fcntl(x->fd, F_GETFL);
	struct timeval tv = {0, 0};
	socklen_t tl = sizeof tv;
	if (fl < 0 || (fl & O_NONBLOCK) || getsockopt(x->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tl) != 0 || tv.tv_sec || tv.tv_usec)
		return real_accept_of(x);
	for (;;) {
		struct pollfd pf = {.fd = x->fd, .events = POLLIN};
		intr_norestart = 0;
		int r = real_poll(&pf, 1, WAIT_SLICE);
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		if (r < 0 && intr_norestart) {
			errno = EINTR;
			return -1;
		}
		if (now_late())
			return SWITCH;
	}
	/* (another thread may take the client first: this one then waits in
	 * the kernel, as without fred) */
	return real_accept_of(x);
}
static void close_accepted(int64_t fd)
{
	if (fd >= 0)
		close((int)fd);
}
static int accept_common(struct acc *x)
{
	if (OFF)
		return (int)real_accept_of(x);
	int replayed = 0;
	int64_t r = simple_late(K_ACCEPT, x->fd, call_accept, x, &replayed, close_accepted);
	if (r < 0)
		return neg(r);
	/* The client's address follows (K_PEER), also where the program did
	 * not ask for it: it may ask getpeername later. */
	struct sockaddr_storage ss;
	int64_t pl = 0;
	struct ent e;
	int sv = errno;
	inlib = 1;
	lock();
	int rep = replayed && start(K_PEER, &e) && rep_data(&e, K_PEER, (int)r, sizeof ss, &ss, &pl);
	unlock();
	if (!rep) {
		socklen_t l = sizeof ss;
		pl = replayed || real_getpeername((int)r, (struct sockaddr *)&ss, &l) != 0 ? 0 : (int64_t)l;
		lock();
		log_data(K_PEER, (int)r, pl, &ss);
		unlock();
	}
	inlib = 0;
	errno = sv;
	if (replayed && x->a && x->al) {
		memcpy(x->a, &ss, *x->al < (socklen_t)pl ? *x->al : (socklen_t)pl);
		*x->al = (socklen_t)pl;
	}
	if (replayed && fcntl((int)r, F_GETFD) < 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul >= 0 && nul != r) {
			dup2(nul, (int)r);
			close(nul);
		}
		set_own_sock((int)r, 2);
		keep_standin((int)r, x->fd, NULL, &ss, (socklen_t)pl);
	}
	errno = sv;
	return (int)r;
}
EXPORT int accept(int fd, struct sockaddr *a, socklen_t *al)
{
	READY();
	struct acc x = {fd, 0, 0, a, al};
	return accept_common(&x);
}
EXPORT int accept4(int fd, struct sockaddr *a, socklen_t *al, int fl)
{
	READY();
	struct acc x = {fd, fl, 1, a, al};
	return accept_common(&x);
}

/* bind: a replay from before a server's bind finds its address taken by
 * the socket the recorded run bound, which fred's paused copies and the
 * program it went back from still have (they share it since their fork).
 * The log keeps the bound socket's inode, and a replay gives the program
 * that same socket again (pidfd_getfd from a process that has it): its
 * listen and its replayed accepts then stand where they stood, and once
 * past its recording it serves the clients that came meanwhile on the
 * address it had, even one the kernel chose (port 0). */
struct bnd {
	int fd;
	const struct sockaddr *a;
	socklen_t l;
};
static int64_t call_bind(void *p)
{
	struct bnd *x = p;
	if (real_bind(x->fd, x->a, x->l) != 0)
		return -1;
	struct stat st;
	return raw_fstat(x->fd, &st) == 0 ? (int64_t)st.st_ino : 0;
}
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
/* take_from puts a duplicate of process pid's descriptor tfd in *got; 0
 * if it did (pidfd_getfd: the same open file). */
static int take_from(pid_t pid, int tfd, int *got)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return -1;
	*got = (int)syscall(SYS_pidfd_getfd, pfd, tfd, 0);
	real_close(pfd);
	return *got < 0 ? -1 : 0;
}
/* holder_of finds a process that has socket inode ino open and gives it
 * (take_from) in *got: the holder's pid, 0 if none could (another user's
 * are not readable). */
static pid_t holder_of(uint64_t ino, int *got)
{
	char want[48], p[64], l[48];
	snprintf(want, sizeof want, "socket:[%llu]", (unsigned long long)ino);
	int pd = real_open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pd < 0)
		return 0;
	pid_t me = (pid_t)syscall(SYS_getpid), found = 0;
	char b[4096];
	long n;
	while (!found && (n = syscall(SYS_getdents64, pd, b, sizeof b)) > 0) {
		for (long off = 0; off < n && !found;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short len;
				unsigned char type;
				char name[];
			} *d = (void *)(b + off);
			off += d->len;
			pid_t pid = (pid_t)atoi(d->name);
			if (pid <= 0 || pid == me)
				continue;
			snprintf(p, sizeof p, "/proc/%d/fd", pid);
			int fdd = real_open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fdd < 0)
				continue;
			char fb[4096];
			long m;
			while (!found && (m = syscall(SYS_getdents64, fdd, fb, sizeof fb)) > 0) {
				for (long o = 0; o < m && !found;) {
					__typeof__(d) e = (void *)(fb + o);
					o += e->len;
					if (e->name[0] < '0' || e->name[0] > '9')
						continue;
					snprintf(p, sizeof p, "/proc/%d/fd/%s", pid, e->name);
					ssize_t k = readlink(p, l, sizeof l - 1);
					if (k > 0 && (l[k] = 0, !strcmp(l, want)) && take_from(pid, atoi(e->name), got) == 0)
						found = pid;
				}
			}
			real_close(fdd);
		}
	}
	real_close(pd);
	return found;
}
/* adopt puts the socket of inode ino, which another process has, under
 * fd (keeping fd's close-on-exec); 0 if it did. Only a listening socket or
 * a datagram one: a stream socket the program bound and then connected (a
 * client's) is one the replay connects again. */
static int adopt(int fd, uint64_t ino)
{
	int got = -1;
	if (!holder_of(ino, &got))
		return -1;
	int listening = 0, type = 0;
	socklen_t l1 = sizeof listening, l2 = sizeof type;
	if (!(real_getsockopt(got, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l1) == 0 && listening) &&
	    !(real_getsockopt(got, SOL_SOCKET, SO_TYPE, &type, &l2) == 0 && type == SOCK_DGRAM)) {
		real_close(got);
		return -1;
	}
	int cloexec = fcntl(fd, F_GETFD);
	int r = real_dup3(got, fd, cloexec > 0 && (cloexec & FD_CLOEXEC) ? O_CLOEXEC : 0);
	real_close(got);
	return r == fd ? 0 : -1;
}
EXPORT int bind(int fd, const struct sockaddr *a, socklen_t l)
{
	READY();
	if (OFF)
		return real_bind(fd, a, l);
	struct bnd x = {fd, a, l};
	int replayed = 0;
	int64_t r = simple(K_BIND, fd, call_bind, &x, &replayed);
	if (r < 0)
		return neg(r);
	if (!replayed)
		return 0; /* (r: the inode) */
	/* A unix socket's path is a file, which the program may have unlinked
	 * again in the replay: the recorded socket, no longer at that path,
	 * would get no new client. It binds a new one there if it can. */
	int path = a && a->sa_family == AF_UNIX && l > offsetof(struct sockaddr_un, sun_path) &&
		   ((const struct sockaddr_un *)a)->sun_path[0];
	int sv = errno;
	if (r > 0 && !path && adopt(fd, (uint64_t)r) == 0) {
		errno = sv;
		return 0;
	}
	/* nobody has it any more: a socket of its own, as recorded */
	if (real_bind(fd, a, l) == 0) {
		errno = sv;
		return 0;
	}
	int e = errno;
	if (r > 0 && path && e == EADDRINUSE && adopt(fd, (uint64_t)r) == 0) {
		errno = sv;
		return 0;
	}
	/* The recorded bind worked; this one did not: the program takes
	 * another path from here. */
	inlib = 1;
	lock();
	fredlog_ctl->divergences++;
	say("the program diverged from the log at entry %llu: its bind of fd %d failed (%s) where the recorded one worked "
	    "(no process has the recorded socket any more); recording a new branch of history from here",
	    (unsigned long long)fredlog_seq, fd, strerror(e));
	if (!strict_left())
		cut(fredlog_pos);
	unlock();
	inlib = 0;
	errno = e;
	return -1;
}

/* A stand-in's name (peer 0) or its client's address (peer 1), as the
 * socket it stands for had them; the real call's answer for any other fd. */
static int standin_name(int fd, struct sockaddr *a, socklen_t *al, int peer)
{
	READY();
	struct standin *x = standin(fd);
	socklen_t n = !x ? 0 : peer ? x->plen : x->len;
	if (!n || !a || !al)
		return (peer ? real_getpeername : real_getsockname)(fd, a, al);
	memcpy(a, peer ? &x->peer : &x->a, *al < n ? *al : n);
	*al = n;
	return 0;
}
EXPORT int getsockname(int fd, struct sockaddr *a, socklen_t *al) { return standin_name(fd, a, al, 0); }
EXPORT int getpeername(int fd, struct sockaddr *a, socklen_t *al) { return standin_name(fd, a, al, 1); }
EXPORT int getsockopt(int fd, int lvl, int name, void *v, socklen_t *vl)
{
	READY();
	struct standin *x = standin(fd);
	if (x && lvl == SOL_SOCKET && v && vl && *vl >= sizeof(int)) {
		int ans = -1;
		switch (name) {
		case SO_TYPE: ans = x->type; break;
		case SO_DOMAIN: ans = x->domain; break;
		case SO_PROTOCOL: ans = x->proto; break;
		case SO_ACCEPTCONN: case SO_ERROR: ans = 0; break;
		}
		if (ans >= 0) {
			*(int *)v = ans;
			*vl = sizeof(int);
			return 0;
		}
	}
	return real_getsockopt(fd, lvl, name, v, vl);
}
EXPORT int setsockopt(int fd, int lvl, int name, const void *v, socklen_t vl)
{
	READY();
	if (standin(fd))
		return 0;
	return real_setsockopt(fd, lvl, name, v, vl);
}

/* poll, select, epoll_wait: the count and which descriptors are ready. */
static int ready_call(int k, int key, void *set, size_t setlen, int64_t (*call)(void *), void *arg)
{
	struct ent e;
	int64_t res;
	inlib = 1;
	lock();
	if (start(k, &e)) {
		if (rep_data(&e, k, key, setlen, set, &res)) {
			/* the payload is the sets; the result follows them */
			unlock();
			inlib = 0;
			return neg(res);
		}
	}
	unlock();
	res = call(arg);
	int sv = errno;
	lock();
	if (late_data(k, key, setlen, set, &res)) {
		unlock();
		inlib = 0;
		return neg(res);
	}
	log_data(k, key, res < 0 ? -sv : res, set); /* res bytes of set: see below */
	unlock();
	inlib = 0;
	errno = sv;
	return (int)res;
}

/* For these the logged "result" is the length of the saved sets, and the
 * real result is stored at its end as 4 bytes. */
struct pollarg {
	struct pollfd *fds;
	nfds_t n;
	int t;
	char *buf;
};
static int64_t call_poll(void *p)
{
	struct pollarg *x = p;
	int r = real_poll(x->fds, x->n, x->t);
	int sv = errno;
	for (nfds_t i = 0; i < x->n; i++)
		memcpy(x->buf + 2 * i, &x->fds[i].revents, 2);
	memcpy(x->buf + 2 * x->n, &r, 4);
	errno = sv;
	return r < 0 ? r : (int64_t)(2 * x->n + 4);
}
EXPORT int poll(struct pollfd *fds, nfds_t n, int t)
{
	READY();
	if (OFF || n > 4096)
		return real_poll(fds, n, t);
	char buf[2 * 4096 + 4];
	struct pollarg x = {fds, n, t, buf};
	int r = ready_call(K_POLL, (int)n, buf, 2 * n + 4, call_poll, &x);
	if (r < 0)
		return r;
	for (nfds_t i = 0; i < n; i++)
		memcpy(&fds[i].revents, buf + 2 * i, 2);
	memcpy(&r, buf + 2 * n, 4);
	return r;
}

struct selarg {
	int n;
	fd_set *s[3];
	struct timeval *tv;
	char *buf;
	size_t len;
	int ps; /* pselect, with: */
	const struct timespec *pts;
	const sigset_t *mask;
};
static int64_t call_select(void *p)
{
	struct selarg *x = p;
	int r = x->ps ? real_pselect(x->n, x->s[0], x->s[1], x->s[2], x->pts, x->mask)
		      : real_select(x->n, x->s[0], x->s[1], x->s[2], x->tv);
	int sv = errno;
	size_t b = (x->n + 7) / 8;
	for (int i = 0; i < 3; i++)
		if (x->s[i])
			memcpy(x->buf + i * b, x->s[i], b);
	memcpy(x->buf + 3 * b, &r, 4);
	errno = sv;
	return r < 0 ? r : (int64_t)x->len;
}
/* logged_select runs (or replays) a select or pselect described by x,
 * whose buffer holds the three sets and the result: they are given back
 * to the caller's sets. */
static int logged_select(struct selarg *x)
{
	size_t b = (x->n + 7) / 8;
	int res = ready_call(K_SELECT, x->n, x->buf, x->len, call_select, x);
	if (res < 0)
		return res;
	for (int i = 0; i < 3; i++)
		if (x->s[i])
			memcpy(x->s[i], x->buf + i * b, b);
	memcpy(&res, x->buf + 3 * b, 4);
	return res;
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *ex, struct timeval *tv)
{
	READY();
	if (OFF || n < 0 || n > FD_SETSIZE)
		return real_select(n, r, w, ex, tv);
	char buf[3 * FD_SETSIZE / 8 + 4];
	struct selarg x = {n, {r, w, ex}, tv, buf, 3 * ((n + 7) / 8) + 4};
	return logged_select(&x);
}

/* pselect: GNU readline waits for each key with it (Python's input()
 * under pdb): logged as select, so a replayed key does not wait. */
EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *ex, const struct timespec *ts, const sigset_t *mask)
{
	READY();
	if (OFF || n < 0 || n > FD_SETSIZE)
		return real_pselect(n, r, w, ex, ts, mask);
	char buf[3 * FD_SETSIZE / 8 + 4];
	struct selarg x = {n, {r, w, ex}, NULL, buf, 3 * ((n + 7) / 8) + 4, 1, ts, mask};
	return logged_select(&x);
}

struct eparg {
	int ep, max, t;
	struct epoll_event *ev;
	char *buf;
};
static int64_t call_epoll(void *p)
{
	struct eparg *x = p;
	int r = real_epoll_wait(x->ep, x->ev, x->max, x->t);
	int sv = errno;
	if (r > 0)
		memcpy(x->buf, x->ev, r * sizeof *x->ev);
	memcpy(x->buf + (r > 0 ? r : 0) * sizeof *x->ev, &r, 4);
	errno = sv;
	return r < 0 ? r : (int64_t)(r * sizeof *x->ev + 4);
}
EXPORT int epoll_wait(int ep, struct epoll_event *ev, int max, int t)
{
	READY();
	if (OFF || max <= 0 || max > 1024)
		return real_epoll_wait(ep, ev, max, t);
	char buf[1024 * sizeof(struct epoll_event) + 4];
	struct eparg x = {ep, max, t, ev, buf};
	int r = ready_call(K_EPOLL, ep, buf, max * sizeof *ev + 4, call_epoll, &x);
	if (r < 0)
		return r;
	/* the count is the last 4 bytes of what was logged */
	/* r is the length logged: the events, then the count */
	int got;
	memcpy(&got, buf + r - 4, 4);
	if (got > 0)
		memcpy(ev, buf, got * sizeof *ev);
	return got;
}

/* mmap: the address the kernel chose, given back as a hint on replay so
 * that addresses (and address literals in watch expressions) stay the
 * same. */
struct mmarg {
	void *a;
	size_t l;
	int p, f, fd;
	off_t o;
};
static int64_t call_mmap(void *p)
{
	struct mmarg *x = p;
	void *r = real_mmap(x->a, x->l, x->p, x->f, x->fd, x->o);
	return r == MAP_FAILED ? -errno : (int64_t)((uintptr_t)r >> 12);
}
EXPORT void *mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
	READY();
	if (OFF || !fredlog_mmap || a || (f & MAP_FIXED))
		return real_mmap(a, l, p, f, fd, o);
	struct mmarg x = {a, l, p, f, fd, o};
	int replayed = 0;
	int64_t r = simple(K_MMAP, 0, call_mmap, &x, &replayed);
	if (replayed && r >= 0) {
		/* replayed: map for real, at the logged address if free */
		void *want = (void *)((uintptr_t)r << 12);
		void *got = real_mmap(want, l, p, f | MAP_FIXED_NOREPLACE, fd, o);
		if (got == MAP_FAILED)
			got = real_mmap(NULL, l, p, f, fd, o);
		return got;
	}
	if (r < 0) {
		errno = (int)-r;
		return MAP_FAILED;
	}
	return (void *)((uintptr_t)r << 12);
}
EXPORT void *mmap64(void *a, size_t l, int p, int f, int fd, off_t o) { return mmap(a, l, p, f, fd, o); }

/* --- signals ---
 *
 * Signals the program handles itself are logged where they arrive between
 * logged calls. On replay, a logged signal's handler runs when the program
 * reaches that place in the log (at its next logged call, or at once if the
 * same signal arrives live right there, as a signal the program sends
 * itself does); live signals that do not match the log are not given to
 * the program while it replays. Synchronous signals (faults, SIGPIPE,
 * abort) come back by themselves and are left alone, and SIGINT is the
 * person's (Ctrl-C). The handler gets a siginfo with only si_signo on
 * replay. */
HIDDEN int fredlog_sig; /* log signals */
#define NSIG_LOG 65
static struct sigaction user_act[NSIG_LOG]; /* what the program asked for */
static char hooked[NSIG_LOG];
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static int loggable(int sig)
{
	switch (sig) {
	case SIGINT: case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGTRAP:
	case SIGSYS: case SIGPIPE: case SIGABRT: case SIGKILL: case SIGSTOP:
		return 0;
	}
	return sig > 0 && sig < NSIG_LOG;
}

/* deliver runs the program's handler for sig, as the kernel would have. */
static void deliver(int sig)
{
	int sv = errno;
	struct sigaction *a = &user_act[sig];
	if (a->sa_flags & SA_SIGINFO) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		si.si_signo = sig;
		if (a->sa_sigaction)
			a->sa_sigaction(sig, &si, NULL);
	} else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN && a->sa_handler) {
		a->sa_handler(sig);
	}
	errno = sv;
}

/* deliver_due runs the handlers of the signals logged next (lock free). */
static void deliver_due(void)
{
	while (due) {
		due = 0;
		int was = inlib;
		inlib = 1;
		lock();
		int sig = 0;
		if (fredlog_pos < fredlog_ctl->end && fredlog_base[fredlog_pos] == K_SIGNAL) {
			uint64_t at = fredlog_pos + 1;
			sig = (int)get_uv(&at);
			fredlog_pos = at;
			fredlog_seq++;
			due = fredlog_pos < fredlog_ctl->end && fredlog_base[fredlog_pos] == K_SIGNAL;
		}
		raw_unlock();
		inlib = 0;
		if (sig)
			deliver(sig);
		inlib = was;
	}
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	int sv = errno;
	struct sigaction *a = &user_act[sig];
	int run = 1;
	intr_norestart = !(a->sa_flags & SA_RESTART);
	if (fredlog_active && !fredlog_debugger && !mine) {
		int was = inlib;
		inlib = 1;
		lock();
		if (fredlog_left)
			stay(); /* its handler's sends would reach the outside */
		sync_cuts();
		/* replaying: only the signal the log expects here */
		while (fredlog_pos < fredlog_ctl->end &&
		       (fredlog_base[fredlog_pos] == K_THREAD || fredlog_base[fredlog_pos] == K_DEBUGGER)) {
			uint64_t at = fredlog_pos + 1;
			if (fredlog_base[fredlog_pos] == K_THREAD)
				get_uv(&at);
			fredlog_pos = at;
			fredlog_seq++;
		}
		if (fredlog_pos < fredlog_ctl->end) {
			uint64_t at = fredlog_pos;
			if (fredlog_base[at++] == K_SIGNAL && (int)get_uv(&at) == sig) {
				fredlog_pos = at;
				fredlog_seq++;
			} else {
				run = 0;
			}
		} else {
			unsigned char h[12];
			h[0] = K_SIGNAL;
			append(h, 1 + put_uv(h + 1, (uint64_t)sig), NULL, 0);
		}
		raw_unlock();
		inlib = was;
	}
	errno = sv;
	if (!run)
		return;
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, si, uc);
	else if (a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN)
		a->sa_handler(sig);
}

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	READY();
	if (!real_sigaction)
		real_sigaction = (__typeof__(real_sigaction))dlsym(RTLD_NEXT, "sigaction");
	/* one-shot handlers stay the kernel's: it resets them itself */
	if (!fredlog_sig || !loggable(sig) || (act && (act->sa_flags & SA_RESETHAND) && !hooked[sig]))
		return real_sigaction(sig, act, old);
	struct sigaction prev = user_act[sig];
	int was = hooked[sig];
	if (act) {
		int handler = (act->sa_flags & SA_SIGINFO) ? act->sa_sigaction != NULL
			: act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
		if (handler && !(act->sa_flags & SA_RESETHAND)) {
			struct sigaction t = *act;
			t.sa_flags = act->sa_flags | SA_SIGINFO;
			t.sa_sigaction = trampoline;
			struct sigaction k;
			if (real_sigaction(sig, &t, &k) != 0)
				return -1;
			user_act[sig] = *act;
			hooked[sig] = 1;
			if (old)
				*old = was ? prev : k;
			return 0;
		}
		hooked[sig] = 0;
	}
	struct sigaction k;
	if (real_sigaction(sig, act, &k) != 0)
		return -1;
	if (old)
		*old = was ? prev : k;
	return 0;
}

/* signal() goes to libc's internal sigaction, out of LD_PRELOAD's reach. */
EXPORT sighandler_t signal(int sig, sighandler_t h)
{
	READY();
	struct sigaction a, o;
	memset(&a, 0, sizeof a);
	a.sa_handler = h;
	a.sa_flags = SA_RESTART;
	sigemptyset(&a.sa_mask);
	sigaddset(&a.sa_mask, sig);
	if (sigaction(sig, &a, &o) != 0)
		return SIG_ERR;
	return o.sa_handler;
}

/* debugger_opens: the calling thread starts talking with the person. With
 * other threads, that place is an entry: recorded, or passed on replay. */
static void debugger_opens(void)
{
	if (fredlog_active && !mydbg && !inlib && nthreads > 1 && synced()) {
		inlib = 1;
		lock();
		sync_cuts();
		/* The window opens before the log moves past its entry: a
		 * thread whose turn that move brings must see it and wait, as it
		 * did when recorded (it ran on in the window, out of order). */
		mydbg++;
		__atomic_add_fetch(&fredlog_debugger, 1, __ATOMIC_RELEASE);
		if (fredlog_pos >= fredlog_ctl->end) {
			unsigned char h = K_DEBUGGER;
			append(&h, 1, NULL, 0);
		} else {
			/* ours when it is next (threads due before it go on after) */
			uint64_t at = fredlog_pos;
			int got = (unsigned char)fredlog_base[at++], t = lastthr, n = 1;
			if (got == K_THREAD) {
				t = (int)get_uv(&at);
				got = at < fredlog_ctl->end ? (unsigned char)fredlog_base[at++] : 0;
				n = 2;
			}
			if ((t == mythr || !t) && got == K_DEBUGGER) {
				fredlog_pos = at;
				fredlog_seq += n;
				lastthr = mythr;
			}
		}
		unlock();
		inlib = 0;
		return;
	}
	mydbg++;
	__atomic_add_fetch(&fredlog_debugger, 1, __ATOMIC_RELEASE);
}

/* syscall: the number FREDLOG_SYSCALL is this library's own: argument 1
 * when an in-process debugger starts talking with the person, 0 when it
 * lets the program run again (they nest), 2 when the rest of the run is
 * the debugger's (after its quit: the way out is not the program's, and
 * the program's threads may finish). pdb calls it through ctypes'
 * PyDLL, which keeps the GIL: the other threads are then not holding it. */
#define FREDLOG_SYSCALL 0x46524544 /* "FRED" */
EXPORT long syscall(long n, ...)
{
	READY();
	static long (*real)(long, ...);
	va_list ap;
	va_start(ap, n);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	/* compared as ints: ctypes passes Python ints as C ints, whose upper
	 * register halves are not defined */
	if ((int)n == FREDLOG_SYSCALL) {
		TRACE("T%d DEBUGGER %d seq=%llu", mythr, (int)a[0], (unsigned long long)fredlog_seq);
		if ((int)a[0] == 1) {
			debugger_opens();
		} else if ((int)a[0] == 2) {
			fredlog_active = 0;
			debugger_lets_go();
		} else {
			if (mydbg > 0)
				mydbg--;
			if (fredlog_debugger > 0 && __atomic_sub_fetch(&fredlog_debugger, 1, __ATOMIC_ACQ_REL) == 0)
				debugger_lets_go();
		}
		return 0;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A child the program forks is another program: nothing of it is logged.
 * A child an in-process debugger forks (pdb's and perl's fork snapshots)
 * is a snapshot of this one: it goes on as it is. */
EXPORT pid_t fork(void)
{
	READY();
	fd_shared = 1;
	pid_t r = real_fork();
	if (r == 0 && !fredlog_debugger)
		fredlog_active = 0;
	/* a pipe shared with another process is not written again after a
	 * restore: no pipe made so far is the threads' own */
	if (r >= 0 && !fredlog_debugger) {
		for (int fd = 0; fd < maxowed; fd++)
			set_own(fd, 0);
		memset(own_sock, 0, sizeof own_sock); /* socketpairs too */
	}
	return r;
}

/* --- synchronisation: the order threads take locks (FReD paper, 4.3) ---
 *
 * Each call is one entry: its kind byte and its result (sv: 0, an errno,
 * or for pthread_create the new thread's number), 2 bytes, plus a thread
 * entry (2 bytes) when another thread logged last. Acquisitions are
 * logged after the real call returns (the lock held, so the log's order
 * is the lock's), releases before the real release. On replay a thread
 * waits for its entry's turn (begin), then acquires for real: the lock is
 * free by then, or about to be (its last holder has logged its release),
 * so the real call blocks at most briefly. A try or timed call that
 * failed when recorded fails again without trying; one that succeeded
 * takes the lock blocking. A condition wait on replay lets the mutex go,
 * waits for its turn and takes the mutex again: to the program it is a
 * wakeup, which POSIX allows at any time, and the program's own loop
 * around the wait does the rest as it did when recorded.
 *
 * FREDLOG_SYNC=2 (interpreters) from the second thread on: the GIL's
 * calls order nothing in a program of one thread. */
#define SOFF (OFF || !synced())

static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_mutex_trylock)(pthread_mutex_t *);
static int (*real_mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
static int (*real_mutex_unlock)(pthread_mutex_t *);
static int (*real_rw_rdlock)(pthread_rwlock_t *);
static int (*real_rw_wrlock)(pthread_rwlock_t *);
static int (*real_rw_tryrdlock)(pthread_rwlock_t *);
static int (*real_rw_trywrlock)(pthread_rwlock_t *);
static int (*real_rw_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
static int (*real_rw_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
static int (*real_rw_unlock)(pthread_rwlock_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
static int (*real_cond_signal)(pthread_cond_t *);
static int (*real_cond_broadcast)(pthread_cond_t *);
static int (*real_sem_wait)(sem_t *);
static int (*real_sem_trywait)(sem_t *);
static int (*real_sem_timedwait)(sem_t *, const struct timespec *);
static int (*real_sem_post)(sem_t *);
static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int (*real_join)(pthread_t, void **);
static int (*real_mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
static int (*real_rw_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
static int (*real_rw_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
static int (*real_cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
static int (*real_sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
static int (*real_timedjoin)(pthread_t, void **, const struct timespec *);

/* The condition variable calls have an old version (GLIBC_2.2.5) that
 * plain dlsym may find: ask for the current one. */
static void *vsym(const char *name, const char *ver)
{
	void *p = dlvsym(RTLD_NEXT, name, ver);
	return p ? p : dlsym(RTLD_NEXT, name);
}
static void resolve_sync(void)
{
	real_mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_mutex_trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	real_mutex_timedlock = dlsym(RTLD_NEXT, "pthread_mutex_timedlock");
	real_mutex_unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	real_rw_rdlock = dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
	real_rw_wrlock = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
	real_rw_tryrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
	real_rw_trywrlock = dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
	real_rw_timedrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
	real_rw_timedwrlock = dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
	real_rw_unlock = dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
	real_cond_wait = vsym("pthread_cond_wait", "GLIBC_2.3.2");
	real_cond_timedwait = vsym("pthread_cond_timedwait", "GLIBC_2.3.2");
	real_cond_signal = vsym("pthread_cond_signal", "GLIBC_2.3.2");
	real_cond_broadcast = vsym("pthread_cond_broadcast", "GLIBC_2.3.2");
	real_sem_wait = dlsym(RTLD_NEXT, "sem_wait");
	real_sem_trywait = dlsym(RTLD_NEXT, "sem_trywait");
	real_sem_timedwait = dlsym(RTLD_NEXT, "sem_timedwait");
	real_sem_post = dlsym(RTLD_NEXT, "sem_post");
	real_create = dlsym(RTLD_NEXT, "pthread_create");
	real_join = dlsym(RTLD_NEXT, "pthread_join");
	real_mutex_clocklock = dlsym(RTLD_NEXT, "pthread_mutex_clocklock");
	real_rw_clockrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_clockrdlock");
	real_rw_clockwrlock = dlsym(RTLD_NEXT, "pthread_rwlock_clockwrlock");
	real_cond_clockwait = vsym("pthread_cond_clockwait", "GLIBC_2.34");
	real_sem_clockwait = dlsym(RTLD_NEXT, "sem_clockwait");
	real_timedjoin = dlsym(RTLD_NEXT, "pthread_timedjoin_np");
}

static void sync_log(int k, int64_t res)
{
	unsigned char h[12];
	h[0] = (unsigned char)k;
	append(h, 1 + put_sv(h + 1, res), NULL, 0);
}

/* sync_turn, lock held: 1 when this call replays (it waited for its turn;
 * *res is the logged result), 0 when it records. */
static int sync_turn(int k, int64_t *res)
{
	struct ent e;
	if (!start(k, &e))
		return 0;
	*res = get_sv(&e.at);
	done(&e);
	return 1;
}

/* An acquisition keeps its turn until it holds the lock for real: were
 * the turn passed on first, the next thread's entry (on the same lock,
 * after a release that has no entry, inside a condition wait) could take
 * the lock before us. Blocking while holding the turn is safe: whoever
 * holds the lock has passed its release's turn already. */
struct held {
	struct ent e;
	uint64_t from; /* where the entry starts */
	int k;
};
static int take_turn(int k, int64_t *res, struct held *h)
{
	if (!start(k, &h->e))
		return 0;
	h->from = fredlog_pos;
	h->k = k;
	*res = get_sv(&h->e.at);
	return 1;
}
/* give_turn: lock held; the real call is done. If the log was cut
 * meanwhile (a thread gave up waiting), this call is recorded instead. */
static void give_turn(struct held *h, int64_t res)
{
	sync_cuts();
	if (fredlog_pos == h->from && h->e.at <= fredlog_ctl->end)
		done(&h->e);
	else if (fredlog_pos >= fredlog_ctl->end)
		sync_log(h->k, res);
}

/* Recording, a blocking call waits in slices (WAIT_SLICE): a snapshot
 * may be taken while it blocks and restored later, and then the log has
 * this call's entry ahead. The thread must then take the call in its
 * turn, not whenever the real lock comes free: it may not hold a lock
 * that threads due before it need. late says so, lock held. */
static int late(void)
{
	sync_cuts();
	return fredlog_pos < fredlog_ctl->end;
}
static int now_late(void)
{
	lock();
	int r = late();
	unlock();
	return r;
}
static struct timespec slice(void)
{
	struct timespec t;
	real_clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += WAIT_SLICE * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

/* ahead: a look without the lock at whether the log may be ahead of us
 * (replaying). Recording, the answer is no and the lock is taken once per
 * call, not twice; a wrong no is caught by late() after the call. */
static int ahead(void)
{
	return __atomic_load_n(&fredlog_pos, __ATOMIC_RELAXED) < __atomic_load_n(&fredlog_ctl->end, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&fredlog_ctl->ncuts, __ATOMIC_RELAXED) != fredlog_mycuts;
}

/* HOLD_PAUSE: a lock taken while an in-process debugger talks is given
 * back until it is done (in_window), then taken again: the debugger's
 * thread may need it meanwhile (CPython's GIL is a mutex and a condition).
 * Recording, the entry is written after; replaying, the turn is kept. A
 * join cannot be given back, and a join's thread has ended anyway. */
#define HOLD_PAUSE(K, X, BLOCK, UNDO)                           \
	do {                                                    \
		if ((K) != K_JOIN && (X) == 0)                  \
			while (in_window() && !nheld) {         \
				UNDO;                           \
				pause_here();                   \
				X = BLOCK;                      \
			}                                       \
	} while (0)

/* ACQUIRE: CALL is the program's call as recorded (SWITCH when a restore
 * put the log ahead of it), BLOCK takes the lock for good, UNDO gives back
 * what CALL took when the log turned out to be ahead. */
#define ACQUIRE(K, CALL, BLOCK, UNDO)                              \
	do {                                                       \
		READY();                                           \
		if (SOFF)                                          \
			return BLOCK;                              \
		int64_t r_;                                        \
		int x_;                                            \
		struct held h_;                                    \
		inlib = 1;                                         \
		int rep_ = 0;                                      \
		if (ahead()) {                                     \
			lock();                                    \
			rep_ = take_turn(K, &r_, &h_);             \
			unlock();                                  \
		}                                                  \
		if (!rep_) {                                       \
			x_ = CALL;                                 \
			HOLD_PAUSE(K, x_, BLOCK, UNDO);            \
			lock();                                    \
			if (!late()) {                             \
				sync_log(K, x_);                   \
				unlock();                          \
				inlib = 0;                         \
				return x_;                         \
			}                                          \
			unlock();                                  \
			if (x_ == 0)                               \
				UNDO;                              \
			lock();                                    \
			rep_ = take_turn(K, &r_, &h_);             \
			if (!rep_) {                               \
				unlock();                          \
				x_ = BLOCK;                        \
				HOLD_PAUSE(K, x_, BLOCK, UNDO);    \
				lock();                            \
				sync_log(K, x_);                   \
				unlock();                          \
				inlib = 0;                         \
				return x_;                         \
			}                                          \
			unlock();                                  \
		}                                                  \
		x_ = r_ ? (int)r_ : (BLOCK);                       \
		if (!r_)                                           \
			HOLD_PAUSE(K, x_, BLOCK, UNDO);            \
		lock();                                            \
		give_turn(&h_, r_);                                \
		unlock();                                          \
		inlib = 0;                                         \
		return x_;                                         \
	} while (0)

/* RELEASE: logged before the call, so that it comes before the next
 * acquisition that it allows. */
#define RELEASE(K, CALL)                       \
	do {                                   \
		READY();                       \
		if (SOFF)                      \
			return CALL;           \
		int64_t r_;                    \
		inlib = 1;                     \
		lock();                        \
		if (!sync_turn(K, &r_))        \
			sync_log(K, 0);        \
		unlock();                      \
		int x_ = CALL;                 \
		inlib = 0;                     \
		return x_;                     \
	} while (0)

/* The recorded blocking calls, in slices. */

/* (each tries first: a free lock needs no deadline) */
static int mutex_rec(pthread_mutex_t *m)
{
	int x = real_mutex_trylock(m);
	if (x != EBUSY || !real_mutex_clocklock)
		return x != EBUSY ? x : real_mutex_lock(m);
	for (;;) {
		struct timespec t = slice();
		int x = real_mutex_clocklock(m, CLOCK_MONOTONIC, &t);
		if (x != ETIMEDOUT)
			return x;
		if (now_late())
			return SWITCH;
	}
}
static int rw_rec(pthread_rwlock_t *l, int wr)
{
	int x = wr ? real_rw_trywrlock(l) : real_rw_tryrdlock(l);
	if (x != EBUSY)
		return x;
	if (!real_rw_clockrdlock || !real_rw_clockwrlock)
		return wr ? real_rw_wrlock(l) : real_rw_rdlock(l);
	for (;;) {
		struct timespec t = slice();
		int x = wr ? real_rw_clockwrlock(l, CLOCK_MONOTONIC, &t) : real_rw_clockrdlock(l, CLOCK_MONOTONIC, &t);
		if (x != ETIMEDOUT)
			return x;
		if (now_late())
			return SWITCH;
	}
}
static int join_rec(pthread_t th, void **ret)
{
	if (!real_timedjoin)
		return real_join(th, ret);
	for (;;) {
		struct timespec t;
		real_clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += WAIT_SLICE / 1000 + 1;
		int x = real_timedjoin(th, ret, &t);
		if (x != ETIMEDOUT)
			return x;
		if (now_late())
			return SWITCH;
	}
}

/* Semaphores say -1 and errno; the log has -errno. */
static int sem_block(sem_t *s)
{
	int r;
	while ((r = real_sem_wait(s)) != 0 && errno == EINTR)
		;
	return r;
}
static int sem_rec(sem_t *s)
{
	if (real_sem_trywait(s) == 0)
		return 0;
	if (!real_sem_clockwait)
		return sem_block(s) ? -errno : 0;
	for (;;) {
		struct timespec t = slice();
		if (real_sem_clockwait(s, CLOCK_MONOTONIC, &t) == 0)
			return 0;
		if (errno != ETIMEDOUT && errno != EINTR)
			return -errno;
		if (now_late())
			return SWITCH;
	}
}
static int sem_res(int r) { return r < 0 ? -errno : 0; }
/* SEM_ACQUIRE: CALL gives 0 or -errno (or SWITCH). */
#define SEM_ACQUIRE(K, CALL, BLOCK)                                \
	do {                                                       \
		READY();                                           \
		if (SOFF)                                          \
			return BLOCK;                              \
		int64_t r_;                                        \
		int x_;                                            \
		struct held h_;                                    \
		inlib = 1;                                         \
		int rep_ = 0;                                      \
		if (ahead()) {                                     \
			lock();                                    \
			rep_ = take_turn(K, &r_, &h_);             \
			unlock();                                  \
		}                                                  \
		if (!rep_) {                                       \
			x_ = CALL;                                 \
			lock();                                    \
			if (!late()) {                             \
				sync_log(K, x_);                   \
				unlock();                          \
				inlib = 0;                         \
				if (x_ < 0)                        \
					errno = -x_;               \
				return x_ < 0 ? -1 : 0;            \
			}                                          \
			unlock();                                  \
			if (x_ == 0)                               \
				real_sem_post(s);                  \
			lock();                                    \
			rep_ = take_turn(K, &r_, &h_);             \
			unlock();                                  \
			if (!rep_) {                               \
				x_ = sem_res(BLOCK);               \
				lock();                            \
				sync_log(K, x_);                   \
				unlock();                          \
				inlib = 0;                         \
				if (x_ < 0)                        \
					errno = -x_;               \
				return x_ < 0 ? -1 : 0;            \
			}                                          \
		}                                                  \
		x_ = r_ ? -1 : (BLOCK);                            \
		lock();                                            \
		give_turn(&h_, r_);                                \
		unlock();                                          \
		inlib = 0;                                         \
		if (r_)                                            \
			errno = (int)-r_;                          \
		return x_;                                         \
	} while (0)

/* SOFF calls BLOCK: for the try and timed calls, SOFF's own below.
 * lib_*: the library's lock calls; the program's, below, count them in
 * nheld. */
static int lib_mutex_lock(pthread_mutex_t *m) { ACQUIRE(K_MUTEX_LOCK, mutex_rec(m), real_mutex_lock(m), real_mutex_unlock(m)); }
static int lib_mutex_trylock(pthread_mutex_t *m)
{
	READY();
	if (SOFF)
		return real_mutex_trylock(m);
	ACQUIRE(K_MUTEX_TRYLOCK, real_mutex_trylock(m), real_mutex_lock(m), real_mutex_unlock(m));
}
static int lib_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	READY();
	if (SOFF)
		return real_mutex_timedlock(m, t);
	ACQUIRE(K_MUTEX_TIMEDLOCK, real_mutex_timedlock(m, t), real_mutex_lock(m), real_mutex_unlock(m));
}
static int lib_mutex_unlock(pthread_mutex_t *m) { RELEASE(K_MUTEX_UNLOCK, real_mutex_unlock(m)); }

static int lib_rwlock_rdlock(pthread_rwlock_t *l) { ACQUIRE(K_RW_RDLOCK, rw_rec(l, 0), real_rw_rdlock(l), real_rw_unlock(l)); }
static int lib_rwlock_wrlock(pthread_rwlock_t *l) { ACQUIRE(K_RW_WRLOCK, rw_rec(l, 1), real_rw_wrlock(l), real_rw_unlock(l)); }
static int lib_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	READY();
	if (SOFF)
		return real_rw_tryrdlock(l);
	ACQUIRE(K_RW_TRYRDLOCK, real_rw_tryrdlock(l), real_rw_rdlock(l), real_rw_unlock(l));
}
static int lib_rwlock_trywrlock(pthread_rwlock_t *l)
{
	READY();
	if (SOFF)
		return real_rw_trywrlock(l);
	ACQUIRE(K_RW_TRYWRLOCK, real_rw_trywrlock(l), real_rw_wrlock(l), real_rw_unlock(l));
}
static int lib_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t)
{
	READY();
	if (SOFF)
		return real_rw_timedrdlock(l, t);
	ACQUIRE(K_RW_TIMEDRDLOCK, real_rw_timedrdlock(l, t), real_rw_rdlock(l), real_rw_unlock(l));
}
static int lib_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t)
{
	READY();
	if (SOFF)
		return real_rw_timedwrlock(l, t);
	ACQUIRE(K_RW_TIMEDWRLOCK, real_rw_timedwrlock(l, t), real_rw_wrlock(l), real_rw_unlock(l));
}
static int lib_rwlock_unlock(pthread_rwlock_t *l) { RELEASE(K_RW_UNLOCK, real_rw_unlock(l)); }

/* The locks as the program calls them: counted in nheld. An unlock is
 * counted out after it is done (it must not wait holding the lock). */
static inline int count_in(int r)
{
	if (r == 0 || r == EOWNERDEAD)
		nheld++;
	return r;
}
static inline int count_out(int r)
{
	if (r == 0 && nheld > 0)
		nheld--;
	return r;
}
EXPORT int pthread_mutex_lock(pthread_mutex_t *m) { return count_in(lib_mutex_lock(m)); }
EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) { return count_in(lib_mutex_trylock(m)); }
EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t) { return count_in(lib_mutex_timedlock(m, t)); }
EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) { return count_out(lib_mutex_unlock(m)); }
EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l) { return count_in(lib_rwlock_rdlock(l)); }
EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l) { return count_in(lib_rwlock_wrlock(l)); }
EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) { return count_in(lib_rwlock_tryrdlock(l)); }
EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l) { return count_in(lib_rwlock_trywrlock(l)); }
EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t) { return count_in(lib_rwlock_timedrdlock(l, t)); }
EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t) { return count_in(lib_rwlock_timedwrlock(l, t)); }
EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l) { return count_out(lib_rwlock_unlock(l)); }

EXPORT int pthread_cond_signal(pthread_cond_t *c) { RELEASE(K_COND_SIGNAL, real_cond_signal(c)); }
EXPORT int pthread_cond_broadcast(pthread_cond_t *c) { RELEASE(K_COND_BROADCAST, real_cond_broadcast(c)); }

/* cond_pause: a condition's waiter holds its mutex; while the debugger
 * talks it waits without it (as inside the wait itself). */
static void cond_pause(pthread_mutex_t *m)
{
	while (in_window() && nheld <= 1) { /* (m is one of them) */
		real_mutex_unlock(m);
		pause_here();
		real_mutex_lock(m);
	}
}

/* COFF: a condition wait that is not the program's to log; its own
 * (not OFF, which would wait holding the mutex) */
#define COFF (!fredlog_active || inlib || mydbg || !synced())

static int cond_common(int k, pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	inlib = 1;
	lock();
	sync_cuts();
	int replaying = fredlog_pos < fredlog_ctl->end;
	unlock();
	int64_t r;
	if (replaying) {
		/* the mutex goes first: threads due before us may need it */
		nheld--;
		real_mutex_unlock(m);
		struct held h;
		lock();
		int rep = take_turn(k, &r, &h);
		unlock();
		real_mutex_lock(m);
		nheld++;
		cond_pause(m);
		lock();
		if (rep) {
			give_turn(&h, r);
		} else {
			r = 0; /* recording from here: a wakeup like any other */
			sync_log(k, 0);
		}
		unlock();
	} else {
		/* A wait ends after a slice, as a wakeup (the program looks at
		 * its condition again): so a restore that put the log ahead of
		 * this wait is noticed, and no wakeup is lost between slices. */
		if (k == K_COND_WAIT && real_cond_clockwait) {
			struct timespec ts = slice();
			r = real_cond_clockwait(c, m, CLOCK_MONOTONIC, &ts);
			if (r == ETIMEDOUT)
				r = 0;
		} else {
			r = k == K_COND_WAIT ? real_cond_wait(c, m) : real_cond_timedwait(c, m, t);
		}
		cond_pause(m);
		lock();
		if (!late()) {
			sync_log(k, r);
			if (r == ETIMEDOUT && fredlog_sync == 2 && !fredlog_ctl->timeswitch) {
				/* An interpreter's thread waited out its turn at the
				 * GIL: the holder then lets go at a time, not a place. */
				fredlog_ctl->timeswitch = 1;
				say("threads of this program computed side by side, taking turns at the interpreter's lock by time: "
				    "a replay gives them the same turns, but each may get further or less far in its turn than it did");
			}
			unlock();
		} else {
			/* replay it: the mutex goes, the turn comes, the mutex again */
			unlock();
			nheld--;
			real_mutex_unlock(m);
			struct held h;
			lock();
			int rep = take_turn(k, &r, &h);
			unlock();
			real_mutex_lock(m);
			nheld++;
			cond_pause(m);
			lock();
			if (rep)
				give_turn(&h, r);
			else
				sync_log(k, r = 0);
			unlock();
		}
	}
	inlib = 0;
	return (int)r;
}
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	READY();
	if (mydbg && fredlog_active && nthreads > 1 && !inlib) {
		/* The debugger's thread waits for another, which waits for the
		 * debugger: a spurious wakeup instead, after a moment. (CPython
		 * hands its GIL over when another thread asked for it, waiting
		 * until one takes it; a loop around the wait spins slowly.) */
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
		return 0;
	}
	if (COFF)
		return real_cond_wait(c, m);
	cond_pause(m);
	return cond_common(K_COND_WAIT, c, m, NULL);
}
EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	READY();
	if (COFF)
		return real_cond_timedwait(c, m, t);
	cond_pause(m);
	return cond_common(K_COND_TIMEDWAIT, c, m, t);
}

EXPORT int sem_wait(sem_t *s) { SEM_ACQUIRE(K_SEM_WAIT, sem_rec(s), real_sem_wait(s)); }
EXPORT int sem_trywait(sem_t *s)
{
	READY();
	if (SOFF)
		return real_sem_trywait(s);
	SEM_ACQUIRE(K_SEM_TRYWAIT, sem_res(real_sem_trywait(s)), sem_block(s));
}
EXPORT int sem_timedwait(sem_t *s, const struct timespec *t)
{
	READY();
	if (SOFF)
		return real_sem_timedwait(s, t);
	SEM_ACQUIRE(K_SEM_TIMEDWAIT, sem_res(real_sem_timedwait(s, t)), sem_block(s));
}
EXPORT int sem_post(sem_t *s) { RELEASE(K_SEM_POST, real_sem_post(s)); }

/* Threads are numbered in the order they are created, which the log
 * keeps: the same thread has the same number when recorded and replayed
 * (kernel thread ids differ between runs; CRIU keeps them only across a
 * restore). The main thread is 1. */
struct start {
	void *(*fn)(void *);
	void *arg;
	int id;
};
static void *thread_start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	mythr = s.id;
	if (s.id <= MAXTHR)
		tids[s.id] = (pid_t)syscall(SYS_gettid);
	void *r = s.fn(s.arg);
	if (s.id <= MAXTHR)
		__atomic_store_n(&ended[s.id], 1, __ATOMIC_RELEASE);
	return r;
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	READY();
	fd_shared = 1;
	/* (numbered also while lock calls are not logged yet: FREDLOG_SYNC=2) */
	if (OFF || !fredlog_sync)
		return real_create(t, a, fn, arg);
	struct start *s = malloc(sizeof *s);
	if (!s)
		return EAGAIN;
	inlib = 1;
	lock();
	fredlog_ctl->threaded = 1;
	if (!mythr)
		mythr = ++nthreads;
	int64_t r;
	int id = ++nthreads;
	if (!sync_turn(K_CREATE, &r))
		sync_log(K_CREATE, id);
	else if (r != id)
		say("thread %d created thread %d where the log has thread %lld", mythr, id, (long long)r);
	unlock();
	s->fn = fn;
	s->arg = arg;
	s->id = id;
	int x = real_create(t, a, thread_start, s);
	if (x)
		free(s);
	inlib = 0;
	return x;
}

/* a join cannot be undone: the thread has ended, and only its turn is left */
EXPORT int pthread_join(pthread_t t, void **ret) { ACQUIRE(K_JOIN, join_rec(t, ret), real_join(t, ret), (void)0); }

/* --- start --- */

static int wrapper(const char *exe)
{
	const char *b = strrchr(exe, '/');
	b = b ? b + 1 : exe;
	static const char *skip[] = {"env", "sh", "dash", "bash", "setarch", NULL};
	for (int i = 0; skip[i]; i++)
		if (!strcmp(b, skip[i]))
			return 1;
	return 0;
}

__attribute__((constructor)) static void fredlog_init(int argc, char **argv, char **envp)
{
	(void)argc;
	READY();
	const char *path = getenv("FREDLOG_FILE");
	if (!path || !*path)
		return;
	snprintf(cutdir, sizeof cutdir, "%s", path);
	if (strrchr(cutdir, '/'))
		*strrchr(cutdir, '/') = 0;
	else
		snprintf(cutdir, sizeof cutdir, ".");
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return;
	exe[n] = 0;
	if (wrapper(exe))
		return;
	/* Addresses must be the same on every run: without randomisation.
	 * gdb already starts programs so; interpreters get it here, once. */
	int pers = personality(0xffffffff);
	if (pers != -1 && !(pers & ADDR_NO_RANDOMIZE) && !getenv("FREDLOG_ASLR")) {
		if (personality(pers | ADDR_NO_RANDOMIZE) != -1) {
			setenv("FREDLOG_ASLR", "1", 1); /* do it once, even if refused */
			execve("/proc/self/exe", argv, environ);
		}
	}
	(void)envp;
	unsetenv("FREDLOG_ASLR");
	trace_path = getenv("FREDLOG_TRACE");
	fredlog_quiet = getenv("FREDLOG_QUIET") && !strcmp(getenv("FREDLOG_QUIET"), "1");
	if (getenv("FREDLOG_LOGV")) /* the replayed recording's log version, if older */
		fredlog_logv = atoi(getenv("FREDLOG_LOGV"));
	fredlog_legacy = fredlog_logv < 2;
	fredlog_mono_lenient = getenv("FREDLOG_MONO") && !strcmp(getenv("FREDLOG_MONO"), "lenient");
	fredlog_tty = getenv("FREDLOG_TTY") && !strcmp(getenv("FREDLOG_TTY"), "1");
	fredlog_mmap = !getenv("FREDLOG_MMAP") || strcmp(getenv("FREDLOG_MMAP"), "0");
	fredlog_pid = !getenv("FREDLOG_PID") || strcmp(getenv("FREDLOG_PID"), "0");
	fredlog_sig = !getenv("FREDLOG_SIG") || strcmp(getenv("FREDLOG_SIG"), "0");
	fredlog_sync = getenv("FREDLOG_SYNC") ? atoi(getenv("FREDLOG_SYNC")) : 1;
	if (getenv("FREDLOG_TURN_MS"))
		turn_ms = atoi(getenv("FREDLOG_TURN_MS"));
	fredlog_stat = getenv("FREDLOG_STAT") && !strcmp(getenv("FREDLOG_STAT"), "1");
	fredlog_dirs = !getenv("FREDLOG_DIRS") || strcmp(getenv("FREDLOG_DIRS"), "0");
	if (getenv("FREDLOG_REFS")) {
		load_refs(getenv("FREDLOG_REFS"));
		unsetenv("FREDLOG_REFS"); /* (not the program's) */
	}
	if (getenv("FREDLOG_STORE")) /* bytes of each file stored; -1: all */
		store_below = strtoll(getenv("FREDLOG_STORE"), NULL, 0);
	{
		struct timespec now;
		real_clock_gettime(CLOCK_REALTIME, &now);
		int64_t racy = getenv("FREDLOG_RACY_NS") ? strtoll(getenv("FREDLOG_RACY_NS"), NULL, 0) : 50000000;
		unchanged_before = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec - racy;
	}
	mythr = nthreads = 1; /* the main thread */
	tids[1] = (pid_t)syscall(SYS_gettid);
	uint64_t size = 256ull << 20;
	if (getenv("FREDLOG_SIZE"))
		size = strtoull(getenv("FREDLOG_SIZE"), NULL, 0);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		say("%s: %s; nothing is recorded", path, strerror(errno));
		return;
	}
	if (strlen(path) < sizeof logpath)
		strcpy(logpath, path);
	struct stat st;
	if (raw_fstat(fd, &st) == 0 && st.st_size >= HDR)
		size = st.st_size; /* another run of the program in this session */
	else if (ftruncate(fd, size) != 0) {
		say("%s: %s; nothing is recorded", path, strerror(errno));
		close(fd);
		return;
	} else {
		/* A new log: its header written, not touched through the
		 * mapping (see prezero). */
		struct ctl c0;
		memset(&c0, 0, sizeof c0);
		memcpy(c0.magic, MAGIC, 8);
		c0.version = 1;
		c0.hdr = HDR;
		c0.size = size;
		c0.end = HDR;
		c0.zeroed = HDR;
		if (pwrite(fd, &c0, sizeof c0, 0) != (ssize_t)sizeof c0) {
			say("%s: %s; nothing is recorded", path, strerror(errno));
			close(fd);
			return;
		}
	}
	void *m = real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		say("mapping %s: %s; nothing is recorded", path, strerror(errno));
		return;
	}
	fredlog_base = m;
	fredlog_ctl = m;
	struct ctl *c = fredlog_ctl;
	/* the room is what is mapped: a recording's copy has the room fred
	 * gave it, not the size its header was written with */
	c->size = size;
	if (memcmp(c->magic, MAGIC, 8) != 0) {
		memset(c, 0, sizeof *c);
		c->version = 1;
		c->hdr = HDR;
		c->size = size;
		c->end = HDR;
		memcpy(c->magic, MAGIC, 8);
	}
	/* A new run records from the start: older runs' snapshots see a cut.
	 * (FREDLOG_REPLAY=1 replays the file's log from its start instead:
	 * for tests and the benchmark, which have no snapshot to restore.) */
	fredlog_pos = HDR;
	fredlog_seq = 0;
	if (getenv("FREDLOG_REPLAY") && !strcmp(getenv("FREDLOG_REPLAY"), "1"))
		fredlog_mycuts = c->ncuts;
	else {
		cut(HDR);
		c->threaded = 0; /* (this run's threads are yet to come) */
	}
	unsetenv("FREDLOG_REPLAY");
	unsetenv("FREDLOG_FILE");
	fredlog_active = 1;
}
