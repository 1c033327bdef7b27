/*
 * ward — the executor's child (child.h): the PATH candidates built before
 * the clone, the child itself, the clone, and the status it reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "libward/internal.h"
#include "util/util.h"

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The child's stack (it needs well under 2 KiB; see -fstack-usage). */
#define CHILD_STACK (32 * 1024)

void ward_child_init(struct ward_child *a)
{
	memset(a, 0, sizeof(*a));
	a->in_fd = -1;
	a->out_fd = a->err_fd = a->status_fd = -1;
	a->fd3 = -1;
	for (int i = 0; i < WARD_CHILD_EXTRA_MAX; i++)
		a->extra[i] = -1;
	a->parent = getpid();
	sigemptyset(&a->mask);
}

/* --- the PATH candidates, before the clone -------------------------------- */

/*
 * The paths execve() should try for @name, execvp-style: @name itself when
 * it contains a slash, else each candidate of the PATH of @envp
 * (util_path_next: an empty entry is the current directory). One
 * allocation; free() it.
 */
char **ward_child_candidates(const char *name, char *const *envp)
{
	struct util_path_search ps;
	const char *path = NULL;
	size_t nlen = strlen(name), ndirs = 0, size, dlen;
	char buf[PATH_MAX];
	char **cands;
	char *s;

	if (strchr(name, '/')) {
		cands = malloc(2 * sizeof(*cands) + nlen + 1);
		if (!cands)
			return NULL;
		s = (char *)(cands + 2);
		memcpy(s, name, nlen + 1);
		cands[0] = s;
		cands[1] = NULL;
		return cands;
	}
	for (size_t i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], "PATH=", 5) == 0) {
			path = envp[i] + 5;
			break;
		}
	}
	size = sizeof(*cands);
	util_path_init(&ps, path, name);
	while (util_path_next(&ps, buf, sizeof(buf), &dlen)) {
		size += sizeof(*cands) + strlen(buf) + 1;
		ndirs++;
	}
	cands = malloc(size);
	if (!cands)
		return NULL;
	s = (char *)(cands + ndirs + 1);
	util_path_init(&ps, path, name);
	for (size_t i = 0; i < ndirs; i++) {
		size_t n;

		util_path_next(&ps, buf, sizeof(buf), &dlen);
		n = strlen(buf) + 1;
		memcpy(s, buf, n);
		cands[i] = s;
		s += n;
	}
	cands[ndirs] = NULL;
	/*
	 * A failed execve() costs tens of microseconds (more than the whole
	 * Landlock setup), and a long PATH can make the child fail many before
	 * it finds the program. So the first candidate that is a regular file
	 * now is tried first; the others keep their order behind it, so
	 * execvp's semantics (EACCES, a file that appears meanwhile) hold.
	 * A relative entry is left where it is: the child chdirs first.
	 */
	for (size_t i = 1; i < ndirs; i++) {
		struct stat st;
		char *hit = cands[i];

		if (hit[0] != '/' || stat(hit, &st) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		memmove(cands + 1, cands, i * sizeof(*cands));
		cands[0] = hit;
		break;
	}
	return cands;
}

/* --- the child ------------------------------------------------------------ */

/* Async-signal-safe string append (truncating, NUL-terminated). */
static void child_cat(char *buf, size_t len, size_t *pos, const char *s)
{
	while (s && *s && *pos + 1 < len)
		buf[(*pos)++] = *s++;
	buf[*pos] = '\0';
}

static void child_report(int fd, int stage, int e, const char *a, const char *b)
{
	struct ward_child_status st;
	size_t pos = 0;
	ssize_t w;

	memset(&st, 0, sizeof(st));
	st.stage = stage;
	st.err = e;
	child_cat(st.msg, sizeof(st.msg), &pos, a);
	child_cat(st.msg, sizeof(st.msg), &pos, b);
	do {
		w = write(fd, &st, sizeof(st));
	} while (w < 0 && errno == EINTR);
	_exit(WARD_CHILD_FAILED);
}

/*
 * The child shares the caller's memory (see spawn_child), so a handler of
 * the caller must never run in it: every caught signal goes back to its
 * default before signals are unblocked. Like Python's restore_signals,
 * SIGPIPE and SIGXFSZ are reset even when ignored, so a caller ignoring
 * SIGPIPE does not make `yes | head` spin in the child.
 */
static void child_reset_signals(const sigset_t *mask)
{
	struct sigaction sa;

	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* Fails (EINVAL) for the C library's reserved signals. */
		if (sigaction(sig, NULL, &sa) != 0)
			continue;
		if (sa.sa_handler == SIG_DFL ||
		    (sa.sa_handler == SIG_IGN && sig != SIGPIPE &&
		     sig != SIGXFSZ))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(sig, &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
}

/*
 * @fd itself when no placement can clobber it: it is no placement's
 * target (0 to @high - 1), or it is its own (@target; -1: it has none);
 * else a copy at @high or above (close-on-exec); -1 and errno on failure.
 * Only those are copied: the child holds the caller's descriptors until
 * exec, and every copy is one more descriptor under the caller's
 * RLIMIT_NOFILE (docs/THREADING.md counts them).
 */
static int child_lift(int fd, int target, int high)
{
	if (fd < 0 || fd >= high || fd == target)
		return fd;
	return fcntl(fd, F_DUPFD_CLOEXEC, high);
}

/* @fd at @target without close-on-exec (dup2() leaves a descriptor onto
 * itself as it is). */
static int child_place(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, target);
}

/*
 * Between clone and exec: async-signal-safe calls only, no writes to
 * memory shared with the caller. Never returns. Every source descriptor
 * that another placement targets is first lifted above all of them
 * (child_lift), so no dup2() can clobber another source, then placed.
 */
static void child_main(const struct ward_child *a)
{
	int in, out, errfd, fd3 = -1, st, extra[WARD_CHILD_EXTRA_MAX], nextra = 0;
	int saw_eacces = 0, e = ENOENT;
	int high;

	while (nextra < WARD_CHILD_EXTRA_MAX && a->extra[nextra] >= 0)
		nextra++;
	/* The placements' targets: 0 to 2, 3, then the extras. */
	high = nextra ? WARD_CHILD_EXTRA_FD + nextra : a->fd3 >= 0 ? 4 : 3;
	st = child_lift(a->status_fd, -1, high);
	if (st < 0)
		_exit(WARD_CHILD_FAILED);

	child_reset_signals(&a->mask);

	/* A new session: no controlling terminal (TIOCSTI cannot reach the
	 * caller's), and a process group to kill as a whole. */
	if (setsid() < 0)
		child_report(st, WARD_CHILD_SETUP, errno, "setsid", NULL);
	if (!a->caller_bound && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		child_report(st, WARD_CHILD_SETUP, errno, "PR_SET_PDEATHSIG", NULL);
	/* The parent may have died before the prctl took effect (in a pid
	 * namespace of our own it is outside: 0; the runner then watches
	 * its report pipe for our end). */
	if (getppid() != (a->newpid ? 0 : a->parent))
		_exit(WARD_CHILD_FAILED);

	if (a->in_fd >= 0)
		in = child_lift(a->in_fd, 0, high);
	else
		in = child_lift(open("/dev/null", O_RDONLY | O_CLOEXEC), 0,
				high);
	if (in < 0)
		child_report(st, WARD_CHILD_SETUP, errno, "stdin", NULL);
	out = child_lift(a->out_fd, 1, high);
	if (out < 0)
		child_report(st, WARD_CHILD_SETUP, errno, "stdout", NULL);
	errfd = child_lift(a->err_fd, 2, high);
	if (errfd < 0)
		child_report(st, WARD_CHILD_SETUP, errno, "stderr", NULL);
	if (a->fd3 >= 0) {
		fd3 = child_lift(a->fd3, 3, high);
		if (fd3 < 0)
			child_report(st, WARD_CHILD_SETUP, errno, "status fd", NULL);
	}
	for (int i = 0; i < nextra; i++) {
		extra[i] = child_lift(a->extra[i], WARD_CHILD_EXTRA_FD + i, high);
		if (extra[i] < 0)
			child_report(st, WARD_CHILD_SETUP, errno, "launcher fd",
				     NULL);
	}
	/* Placed without close-on-exec: these survive. */
	if (child_place(in, 0) < 0 || child_place(out, 1) < 0 ||
	    child_place(errfd, 2) < 0 || (fd3 >= 0 && child_place(fd3, 3) < 0))
		child_report(st, WARD_CHILD_SETUP, errno, "dup2", NULL);
	for (int i = 0; i < nextra; i++)
		if (child_place(extra[i], WARD_CHILD_EXTRA_FD + i) < 0)
			child_report(st, WARD_CHILD_SETUP, errno, "dup2", NULL);
	/* Everything else (the status pipe included, still needed until
	 * exec) goes at exec. */
	util_close_from(nextra ? WARD_CHILD_EXTRA_FD + nextra : (fd3 >= 0) + 3, -1, true);

	if (a->cwd && chdir(a->cwd) != 0)
		child_report(st, WARD_CHILD_SETUP, errno, "chdir ", a->cwd);

	/* execvp's search, over candidates built beforehand. */
	for (size_t i = 0; a->cands[i]; i++) {
		execve(a->cands[i], a->argv, a->envp);
		e = errno;
		if (e == EACCES) {
			saw_eacces = 1;
			continue;
		}
		if (e != ENOENT && e != ENOTDIR && e != ESTALE && e != ENODEV &&
		    e != ETIMEDOUT)
			break;
	}
	if (saw_eacces && (e == ENOENT || e == ENOTDIR))
		e = EACCES;
	child_report(st, WARD_CHILD_EXEC, e, a->argv[0], NULL);
}

static int child_entry(void *arg)
{
	child_main(arg);
	return WARD_CHILD_FAILED; /* not reached */
}

/* struct clone_args up to Linux 5.7's cgroup field (musl has no
 * linux/ headers). */
struct clone3_args {
	uint64_t flags;
	uint64_t pidfd;
	uint64_t child_tid;
	uint64_t parent_tid;
	uint64_t exit_signal;
	uint64_t stack;
	uint64_t stack_size;
	uint64_t tls;
	uint64_t set_tid;
	uint64_t set_tid_size;
	uint64_t cgroup;
};

#if defined(__x86_64__)
/*
 * clone3(@ca) with CLONE_VM and a stack of its own: the child starts on
 * that stack at the instruction after the system call, with no frame to
 * return to, so it must not come back into C here. It calls @fn(@arg),
 * which never returns (child_main execs or exits), and exits with its
 * value should it ever. The parent gets the pid or -errno. syscall
 * clobbers rcx and r11; @arg travels in r8, which it keeps (as glibc's
 * own clone3 does).
 */
static long clone3_vm(struct clone3_args *ca, int (*fn)(void *), void *arg)
{
	register long rax __asm__("rax") = __NR_clone3;
	register void *rdi __asm__("rdi") = ca;
	register long rsi __asm__("rsi") = (long)sizeof(*ca);
	register int (*rdx)(void *) __asm__("rdx") = fn;
	register void *r8 __asm__("r8") = arg;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r8, %%rdi\n\t"
			 "call *%%rdx\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov $60, %%eax\n\t" /* exit */
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "+r"(rax)
			 : "r"(rdi), "r"(rsi), "r"(rdx), "r"(r8)
			 : "rcx", "r11", "memory", "cc");
	return rax;
}
#define WARD_CLONE3_VM 1
#endif

/*
 * Start the child like posix_spawn does: clone(CLONE_VM | CLONE_VFORK)
 * on a stack carved from this frame, so the caller's memory is not
 * copied (fork() of a 1 GiB caller costs ~13 ms here, this ~0.6 ms) and
 * this thread sleeps until the child has exec'd or exited. Every signal
 * is blocked around the clone, so no handler of the caller runs in the
 * child before child_reset_signals(). Returns the pid, or -1 and errno.
 *
 * With @cg_fd (a cgroup directory) the child is born in that cgroup:
 * clone3(CLONE_INTO_CGROUP | CLONE_VFORK), on x86-64 with CLONE_VM on the
 * same borrowed stack (clone3_vm); elsewhere fork-like, the child getting
 * a copy of the caller's memory instead of sharing it (child_main behaves
 * the same on either).
 */
pid_t ward_child_spawn(struct ward_child *a, int cg_fd)
{
	char stack[CHILD_STACK] __attribute__((aligned(16)));
	sigset_t all, old;
	pid_t pid;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (cg_fd >= 0) {
		struct clone3_args ca;

		memset(&ca, 0, sizeof(ca));
		ca.flags = CLONE_VFORK | CLONE_INTO_CGROUP |
			   (a->newpid ? CLONE_NEWPID : 0);
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)cg_fd;
#ifdef WARD_CLONE3_VM
		long r;

		ca.flags |= CLONE_VM;
		ca.stack = (uint64_t)(uintptr_t)stack;
		ca.stack_size = sizeof(stack);
		r = clone3_vm(&ca, child_entry, a);
		pid = r < 0 ? -1 : (pid_t)r;
		e = r < 0 ? (int)-r : 0;
		util_unpoison_stack(stack, sizeof(stack));
#else
		pid = (pid_t)syscall(__NR_clone3, &ca, sizeof(ca));
		if (pid == 0)
			child_main(a); /* never returns */
		e = errno;
#endif
	} else {
		/* The stack grows down on every architecture Linux/ward
		 * supports. */
		pid = clone(child_entry, stack + sizeof(stack),
			    CLONE_VM | CLONE_VFORK | SIGCHLD |
				(a->newpid ? CLONE_NEWPID : 0),
			    a);
		e = errno;
		util_unpoison_stack(stack, sizeof(stack));
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return pid;
}

/* Read the status pipe to EOF: 0 (exec happened) or a record. */
ssize_t ward_child_read_status(int fd, struct ward_child_status *st)
{
	size_t got = 0;

	while (got < sizeof(*st)) {
		ssize_t r = read(fd, (char *)st + got, sizeof(*st) - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

