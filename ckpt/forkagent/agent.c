/*
 * forkagent: the in-process half of fred's fork snapshot backend
 * (ckpt/fork.go, design in ckpt/FORK.md).
 *
 * gdb calls fredfork_take(fredpid, tracerpid, cttyfd, flags) in the stopped
 * program. It makes a copy of the whole process, its "snapshot", that:
 *   - is a child of fred (double fork: the program keeps no extra child,
 *     so its wait() calls behave as before, and fred reaps every copy);
 *   - sits in its own session, so no terminal signal (Ctrl-C, SIGHUP when
 *     the program dies) reaches it, and it is never in the stopped state
 *     that makes the kernel SIGHUP orphaned process groups;
 *   - lets gdb attach to it (PR_SET_PTRACER, for Yama ptrace_scope 1);
 *   - holds the program's exact FPU/SSE/AVX/AVX-512/x87/PKRU state (saved
 *     by XSAVE before any compiled code runs) and its signal mask;
 *   - sleeps in ppoll() (which keeps the kernel's syscall restart block
 *     untouched) and exits as soon as fred is gone.
 * fred later attaches gdb to the copy and writes back the general
 * registers it read before the call; that copy becomes the live program.
 * A call made in a copy (cttyfd >= 0) first makes a fresh copy (so the
 * snapshot can be restored again) and then takes the pty as its
 * controlling terminal.
 * With flags & FREDFORK_UNSHARE the caller then gives itself its own copy
 * of the pages it shares with the new copy (see unshare_pages).
 *
 * Everything after the XSAVE runs on the agent's own stack, so the
 * program's stack below gdb's dummy frame is the same in the program and
 * in every copy. The file is built with -mgeneral-regs-only: its own code
 * never touches vector registers; after _Fork() only raw system calls run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

pid_t _Fork(void); /* glibc >= 2.34: fork without atfork handlers or lock resets */

#define STACK_SIZE (64 * 1024)

/* Read by the entry code below. */
#define HIDDEN __attribute__((used, visibility("hidden")))
HIDDEN __attribute__((aligned(64))) char fredfork_fpu[16384];
HIDDEN __attribute__((aligned(16))) char fredfork_stack[STACK_SIZE];
HIDDEN int fredfork_xsave; /* 1: XSAVE, 0: FXSAVE (x87 and SSE only) */

static long sys(long n, long a, long b, long c, long d, long e)
{
	long r;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	return r;
}
#define SYS(n, ...) sys_args(n, __VA_ARGS__, 0, 0, 0, 0, 0)
#define sys_args(n, a, b, c, d, e, ...) sys(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e))

__attribute__((constructor)) static void fredfork_init(void)
{
	unsigned a, b, c, d;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c & (1u << 27))) /* OSXSAVE */
		return;
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0xd), "c"(0));
	fredfork_xsave = b <= sizeof fredfork_fpu; /* size for the enabled features */
}

/*
 * The entry point gdb calls: save the extended state exactly as the
 * program has it, move to the agent's stack (unless already on it: a call
 * made in a copy that sleeps in the agent), call fredfork_take_c.
 */
__asm__(
	".text\n"
	".globl fredfork_take\n"
	".type fredfork_take,@function\n"
	"fredfork_take:\n"
	"	mov %rdx, %r8\n"
	"	mov $-1, %eax\n"
	"	mov $-1, %edx\n"
	"	cmpl $0, fredfork_xsave(%rip)\n"
	"	je 1f\n"
	"	xsave64 fredfork_fpu(%rip)\n"
	"	jmp 2f\n"
	"1:	fxsave64 fredfork_fpu(%rip)\n"
	"2:	mov %r8, %rdx\n"
	"	mov %rsp, %rax\n"
	"	lea fredfork_stack(%rip), %r10\n"
	"	lea fredfork_stack+" "65536" "(%rip), %r11\n"
	"	cmp %r10, %rax\n"
	"	jb 3f\n"
	"	cmp %r11, %rax\n"
	"	jae 3f\n"
	"	mov %rax, %r11\n"
	"	sub $128, %r11\n"
	"3:	and $-16, %r11\n"
	"	mov %rax, -8(%r11)\n"
	"	lea -16(%r11), %rsp\n"
	"	call fredfork_take_c\n"
	"	mov 8(%rsp), %rsp\n"
	"	ret\n"
	".size fredfork_take, .-fredfork_take\n");

/*
 * Where a debugger that calls fredfork_take by hand (lldb) has it return:
 * the trap stops the program there without a breakpoint of the
 * debugger's, whose number the person would see taken.
 */
__asm__(
	".text\n"
	".globl fredfork_trap\n"
	".type fredfork_trap,@function\n"
	"fredfork_trap:\n"
	"	int3\n"
	"	ud2\n"
	".size fredfork_trap, .-fredfork_trap\n");

_Static_assert(STACK_SIZE == 65536, "keep the entry code in step");

static void restore_fpu(void)
{
	if (fredfork_xsave)
		__asm__ volatile("xrstor64 %0" : : "m"(fredfork_fpu), "a"(-1), "d"(-1) : "memory");
	else
		__asm__ volatile("fxrstor64 %0" : : "m"(fredfork_fpu) : "memory");
}

#define BIT(sig) (1UL << ((sig) - 1))

/*
 * The copy: leave the program's session (or process group), let gdb
 * attach, tell the program its pid (only then does the program go on, so
 * nothing that happens to the program's session can reach the copy
 * before it is out of it), and wait with the program's state until gdb
 * attaches.
 */
__attribute__((noreturn)) static void snapshot_wait(long fredpid, long tracer, int leader, unsigned long mask, int fd[2])
{
	if (leader)
		SYS(SYS_setsid, 0);
	else
		SYS(SYS_setpgid, 0, 0);
	SYS(SYS_prctl, PR_SET_PTRACER, tracer);
	long first = SYS(SYS_getppid, 0), self = SYS(SYS_getpid, 0);
	/*
	 * The program's signal mask and extended state come back before the
	 * copy says it exists: fred may attach to it as soon as it knows its
	 * pid, and glibc's _Fork above used vector registers in this child.
	 */
	SYS(SYS_rt_sigprocmask, SIG_SETMASK, &mask, 0, 8);
	restore_fpu();
	SYS(SYS_write, fd[1], &self, sizeof self);
	SYS(SYS_close, fd[0]);
	SYS(SYS_close, fd[1]);
	for (;;) {
		struct timespec ts = { 1, 0 };
		SYS(SYS_ppoll, 0, 0, &ts, 0, 8);
		long pp = SYS(SYS_getppid, 0);
		if (pp != first && pp != fredpid)
			SYS(SYS_exit_group, 0); /* fred is gone */
	}
}


#define FREDFORK_UNSHARE 1
#define FREDFORK_NO_SCAN 2 /* unshare as on a kernel without PAGEMAP_SCAN (tests) */
#define FREDFORK_OUTLIVE 4 /* only stop asking to die with fred (see fredfork_take_c) */

/*
 * unshare_pages gives the caller its own copy of the pages it shares with
 * the copy just made, in its writable private mappings. Without it each
 * first write to a page after the fork takes a copy-on-write fault, which
 * makes the program's run times after a snapshot uneven (fred times runs
 * to divide a stretch of history).
 *
 * Only pages the program has of its own are given: present, anonymous,
 * not the shared zero page that a page only ever read maps (it would get
 * memory of its own). The kernel says which with the PAGEMAP_SCAN ioctl
 * (Linux 6.7), walking page tables, so even a huge reservation (a
 * sanitizer's shadow) costs little. Older kernels have mincore only, which
 * counts zero-page and page-cache pages as well: then anonymous mappings
 * of at most 4 GB only, and at most as many pages as the program has
 * resident (statm).
 */
static char maps_buf[65536];
static unsigned char resident[16384];
static unsigned long budget; /* mincore: pages still to give */
static long pagemap = -1;    /* /proc/self/pagemap, while PAGEMAP_SCAN works */

struct page_region {
	unsigned long long start, end, categories;
};
struct pm_scan_arg {
	unsigned long long size, flags, start, end, walk_end, vec, vec_len, max_pages;
	unsigned long long category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN 0xc0606610UL /* _IOWR('f', 16, struct pm_scan_arg) */
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)
static struct page_region regions[256];

static unsigned long number(const char **s, int base)
{
	unsigned long v = 0;
	for (;; (*s)++) {
		char c = **s;
		if (c >= '0' && c <= '9')
			v = v * base + (c - '0');
		else if (base == 16 && c >= 'a' && c <= 'f')
			v = v * 16 + (c - 'a' + 10);
		else
			return v;
	}
}

#define MADV_POPULATE_WRITE 23

/* Returns 0 when PAGEMAP_SCAN did the range, -1 when it is not there. */
static int unshare_scan(unsigned long lo, unsigned long hi)
{
	while (lo < hi) {
		struct pm_scan_arg a = {
			.size = sizeof a, .start = lo, .end = hi,
			.vec = (unsigned long)regions, .vec_len = sizeof regions / sizeof regions[0],
			/* present, and neither the zero page nor a file's */
			.category_inverted = PAGE_IS_PFNZERO | PAGE_IS_FILE,
			.category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO | PAGE_IS_FILE,
			.return_mask = PAGE_IS_PRESENT,
		};
		long n = SYS(SYS_ioctl, pagemap, PAGEMAP_SCAN, &a);
		if (n < 0)
			return -1;
		for (long i = 0; i < n; i++)
			SYS(SYS_madvise, regions[i].start, regions[i].end - regions[i].start, MADV_POPULATE_WRITE);
		if (a.walk_end <= lo)
			break;
		lo = a.walk_end;
	}
	return 0;
}

static void unshare_mincore(unsigned long lo, unsigned long hi)
{
	const unsigned long page = 4096;
	while (lo < hi && budget > 0) {
		unsigned long n = (hi - lo) / page, i, run;
		if (n > sizeof resident)
			n = sizeof resident;
		if (SYS(SYS_mincore, lo, n * page, resident) < 0)
			return;
		for (i = 0; i < n && budget > 0; i = run) {
			for (; i < n && !(resident[i] & 1); i++)
				;
			for (run = i; run < n && (resident[run] & 1) && run - i < budget; run++)
				;
			if (run > i) {
				SYS(SYS_madvise, lo + i * page, (run - i) * page, MADV_POPULATE_WRITE);
				budget -= run - i;
			}
		}
		lo += n * page;
	}
}

static void unshare_range(unsigned long lo, unsigned long hi, int anon)
{
	if (pagemap >= 0 && unshare_scan(lo, hi) == 0)
		return;
	if (pagemap >= 0) {
		SYS(SYS_close, pagemap);
		pagemap = -1;
	}
	if (anon && hi - lo <= (4UL << 30))
		unshare_mincore(lo, hi);
}

static void unshare_pages(int scan)
{
	long fd = SYS(SYS_open, "/proc/self/statm", O_RDONLY | O_CLOEXEC, 0);
	long have = 0, n;
	if (fd < 0)
		return;
	n = SYS(SYS_read, fd, maps_buf, sizeof maps_buf - 1);
	SYS(SYS_close, fd);
	if (n <= 0)
		return;
	maps_buf[n] = 0;
	{
		const char *q = maps_buf;
		number(&q, 10); /* size */
		q++;
		budget = number(&q, 10); /* resident */
	}
	pagemap = scan ? SYS(SYS_open, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0) : -1;
	fd = SYS(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		goto out;
	while ((n = SYS(SYS_read, fd, maps_buf + have, sizeof maps_buf - 1 - have)) > 0 || have > 0) {
		char *line = maps_buf, *end;
		if (n > 0)
			have += n;
		maps_buf[have] = 0;
		for (;;) {
			for (end = line; *end && *end != '\n'; end++)
				;
			if (!*end && n > 0)
				break; /* a partial line: read more */
			const char *q = line, *path;
			unsigned long lo = number(&q, 16), hi;
			q++;
			hi = number(&q, 16);
			q++;
			for (path = q; path < end && *path != '/' && *path != '['; path++)
				;
			if (end > line && q[0] == 'r' && q[1] == 'w' && q[3] == 'p') /* [heap], [stack], anonymous */
				unshare_range(lo, hi, path == end || *path == '[');
			if (!*end) {
				line = end;
				break;
			}
			line = end + 1;
		}
		have = maps_buf + have - line;
		for (long i = 0; i < have; i++)
			maps_buf[i] = line[i];
		if (n <= 0)
			break;
	}
	SYS(SYS_close, fd);
out:
	if (pagemap >= 0)
		SYS(SYS_close, pagemap);
	pagemap = -1;
}

/*
 * Returns the pid of the new copy, or -errno. With cttyfd >= 0 the caller
 * is itself a copy about to become the live program: it then takes the
 * terminal on cttyfd as its controlling terminal.
 */
HIDDEN long fredfork_take_c(long fredpid, long tracer, long cttyfd, long flags)
{
	int saved_errno = errno;
	unsigned long chld = BIT(SIGCHLD), old = 0, pend = 0, zero[2] = { 0, 0 };
	int p[2];
	long r, copy = 0;

	if (flags & FREDFORK_OUTLIVE)
		return SYS(SYS_prctl, PR_SET_PDEATHSIG, 0);
	/* The intermediate child's exit must not show in the program. */
	SYS(SYS_rt_sigprocmask, SIG_BLOCK, &chld, &old, 8);
	SYS(SYS_rt_sigpending, &pend, 8);
	int leader = SYS(SYS_getsid, 0) == SYS(SYS_getpid, 0);
	if ((r = SYS(SYS_pipe2, p, O_CLOEXEC)) < 0)
		goto out;
	pid_t mid = _Fork();
	if (mid == 0) {
		pid_t g = _Fork();
		if (g == 0)
			snapshot_wait(fredpid, tracer, leader, old, p);
		if (g < 0) {
			long v = -errno;
			SYS(SYS_write, p[1], &v, sizeof v);
		}
		SYS(SYS_exit_group, 0);
	}
	if (mid < 0) {
		r = -errno;
		SYS(SYS_close, p[0]);
		SYS(SYS_close, p[1]);
		goto out;
	}
	SYS(SYS_close, p[1]);
	do
		r = SYS(SYS_read, p[0], &copy, sizeof copy);
	while (r == -EINTR);
	SYS(SYS_close, p[0]);
	while (SYS(SYS_wait4, mid, 0, __WALL, 0) == -EINTR)
		;
	if (!(pend & chld))
		SYS(SYS_rt_sigtimedwait, &chld, 0, zero, 8);
	r = r == sizeof copy ? copy : -EIO;
	if (r > 0 && cttyfd >= 0) {
		SYS(SYS_ioctl, cttyfd, TIOCSCTTY, 0);
		/*
		 * The live program dies with fred. gdb lets go of a process it
		 * attached to when it dies, and the pty's hang-up reaches the
		 * program only if gdb, the session leader, did not first take
		 * the terminal back: without this a kill -9 of fred and its
		 * keeper could leave the program running. Its parent is fred's
		 * first thread (a subreaper's orphans go to the first thread
		 * alive), which Go never ends. Never inherited by copies. Taken
		 * back (FREDFORK_OUTLIVE) before CRIU dumps the program: CRIU
		 * restores the signal, and the restored process would get it
		 * as soon as criu, its parent then, exits.
		 */
		SYS(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
		if (SYS(SYS_getppid, 0) != fredpid)
			SYS(SYS_kill, SYS(SYS_getpid, 0), SIGKILL); /* fred went already */
	}
	if (r > 0 && (flags & FREDFORK_UNSHARE))
		unshare_pages(!(flags & FREDFORK_NO_SCAN));
out:
	SYS(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8);
	errno = saved_errno;
	return r;
}
