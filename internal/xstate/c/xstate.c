/* xstate: lets a gdb older than 14 write a thread's registers on a CPU
 * whose XSAVE area is larger than the gdb knows (AMX: about 11 KB, gdb 13
 * writes 2,696 bytes). The kernel takes PTRACE_SETREGSET NT_X86_XSTATE
 * whole or not at all (EFAULT), so every inferior call failed: "Couldn't
 * write extended state status: Bad address", and with it fred's fork
 * snapshots and any expression that calls a function.
 *
 * Loaded into gdb only (LD_PRELOAD, which it then takes out of the
 * environment, so the program does not inherit it). It acts only where
 * the write failed with EFAULT: it reads the whole area, lays gdb's part
 * over it, and writes the whole. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

long ptrace(enum __ptrace_request req, ...)
{
	static ptrace_fn real;
	va_list ap;
	va_start(ap, req);
	pid_t pid = va_arg(ap, pid_t);
	void *addr = va_arg(ap, void *);
	void *data = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
	long r = real(req, pid, addr, data);
	if (r != -1 || errno != EFAULT || req != PTRACE_SETREGSET || (long)addr != NT_X86_XSTATE || !data)
		return r;
	struct iovec *part = data;
	size_t size = 1 << 16;
	char *whole = calloc(1, size);
	if (!whole) {
		errno = EFAULT;
		return -1;
	}
	struct iovec all = {whole, size};
	if (real(PTRACE_GETREGSET, pid, addr, &all) == 0 && all.iov_len > part->iov_len) {
		memcpy(whole, part->iov_base, part->iov_len);
		r = real(PTRACE_SETREGSET, pid, addr, &all);
	} else {
		r = -1;
		errno = EFAULT;
	}
	int e = errno;
	free(whole);
	errno = e;
	return r;
}

/* The program gdb starts must not load this library: it goes from
 * LD_PRELOAD before gdb reads its environment. */
__attribute__((constructor)) static void leave_environment(void)
{
	const char *p = getenv("LD_PRELOAD");
	if (!p)
		return;
	char *rest = calloc(1, strlen(p) + 1), *copy = strdup(p);
	if (!rest || !copy)
		return;
	for (char *save, *tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
		if (strstr(tok, "fredxstate-"))
			continue;
		if (*rest)
			strcat(rest, ":");
		strcat(rest, tok);
	}
	if (*rest)
		setenv("LD_PRELOAD", rest, 1);
	else
		unsetenv("LD_PRELOAD");
	free(rest);
	free(copy);
}
