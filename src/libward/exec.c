/*
 * ward — the confined executor: spawn, capture (bounded), timeout, process
 * group; then classify.
 *
 * Plan, then apply: everything that allocates or may block on a lock (the
 * Landlock ruleset, the environment, the PATH candidates, the bwrap argv)
 * is built before the child exists. The child is started posix_spawn-style
 * (clone with CLONE_VM | CLONE_VFORK: nothing of the caller is copied, so
 * a spawn costs the same from a 1 GiB harness as from a small one) and
 * until exec it only makes async-signal-safe system calls and writes only
 * its own stack. A close-on-exec status pipe tells the parent whether exec
 * happened: EOF without a record means it did.
 *
 * Bwrap caveat (bubblewrap 0.8, as root): its inner sandbox process sets
 * its own PR_SET_PDEATHSIG a few milliseconds after bwrap starts, without
 * re-checking its parent; a bwrap killed inside that window would leave
 * the sandbox running. So the sandbox's pid 1 (from --json-status-fd) is
 * killed through a pidfd whenever the call is signalled or bwrap ends,
 * and the call's cgroup or the subreaper (when in force) end it too.
 *
 * Decisions worth knowing (see also docs):
 *  - WARD_SANDBOX=<runner> is set (replacing any inherited value) only for
 *    a confined run. Danger-full-access (runner none) leaves the
 *    environment as given: an inherited WARD_SANDBOX there still tells the
 *    truth, since confinement is inherited.
 *  - When the command itself cannot be exec'd (not found, not executable)
 *    under runner none, the child reports it like a shell: "ward: NAME:
 *    command not found" on stderr, exit 127 (126 when found but not
 *    executable); landlock-run --shell-status does the same for Landlock.
 *    The confinement was in place, so this is the command's failure, not
 *    a runner failure. A wrapper that cannot be exec'd (bwrap,
 *    landlock-run, sandbox-exec) is a runner failure.
 *  - After the child exits, output is read until its pipes close, but at
 *    most DRAIN_MS longer: a background process that escaped the wait (and
 *    holds the pipes) keeps running, unread — unless containment is in
 *    force, which kills it as soon as the child has exited.
 *  - Every Landlock run goes through landlock-run, whose keeper stays the
 *    command's parent: when the command ends, everything it started ends
 *    (a pid namespace as root, else a subreaper sweep), and a caller that
 *    dies takes the tree along. Signals for the call go to the keeper,
 *    which forwards them; SIGKILL becomes its kill-everything signal
 *    (SIGRTMAX), since a SIGKILLed keeper could sweep nothing.
 *  - Containment in this process (see enum ward_contain), on top: a
 *    cgroup per call when one can be had, since it is per call and
 *    nothing confined can leave it (Landlock forbids writing cgroup.procs,
 *    seccomp refuses clone3); the child must be born in it (clone3
 *    CLONE_INTO_CGROUP), because moving a running process (a write to
 *    cgroup.procs) waits for an RCU grace period: 5–15 ms here, against
 *    ~0.2 ms for the fork-like clone3. The subreaper fallback keeps the
 *    vfork-style start and its common case (nothing left behind) costs
 *    one waitid(); /proc is read only when a child is actually left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_internal.h"
#include "protect.h"
#include "util/util.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif
#ifndef PR_SET_CHILD_SUBREAPER
#define PR_SET_CHILD_SUBREAPER 36
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* How long to keep reading after the child exited, for late writers. */
#define DRAIN_MS 1000
/* Default SIGTERM → SIGKILL grace. */
#define KILL_GRACE_MS 2000
/* Stream mode: the stderr tail kept for classification. */
#define STREAM_ERR_TAIL (64 * 1024)
/* Without a pidfd, how often to look whether the child exited. */
#define EXIT_TICK_MS 20
/* The child places descriptors 0 to 3; a source below this is moved. */
#define CHILD_FD_HIGH 4
/* Exit status of a child that failed before exec (like env/timeout). */
#define CHILD_FAILED 125
/* The child's stack (it needs well under 2 KiB; see -fstack-usage). */
#define CHILD_STACK (32 * 1024)
/* How long a killed call's cgroup may take to empty before its removal;
 * shorter for one a dead ward left behind (a start-up cost of the process
 * that finds it; what is not empty yet is left for the next one). */
#define CGROUP_EMPTY_MS 2000
#define STALE_EMPTY_MS	200
/* Subreaper: how long kill-and-reap rounds go on without reaping one. */
#define SWEEP_MS 2000

/*
 * AddressSanitizer builds: the child's instrumented frames poison shadow
 * memory for the stack it borrows from the parent; clear it once the child
 * is gone, or the parent's later frames there look out of scope.
 */
#if defined(__SANITIZE_ADDRESS__)
#define WARD_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WARD_ASAN 1
#endif
#endif
#ifdef WARD_ASAN
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define unpoison_stack(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define unpoison_stack(p, n) ((void)0)
#endif

extern char **environ;

struct ward_result {
	int exit_code;
	int term_signal;
	bool timed_out;
	bool denied;
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	enum ward_contain contain;
	pid_t pid; /* the confined process (for its audit records) */
	char *out; /* NULL in stream mode */
	size_t out_len, out_dropped;
	char *err;
	size_t err_len, err_dropped;
};

/* --- bounded capture buffer ----------------------------------------------- */

void ward_capbuf_init(struct ward_capbuf *cb, size_t head_cap, size_t tail_cap)
{
	memset(cb, 0, sizeof(*cb));
	cb->head_cap = head_cap;
	cb->tail_cap = tail_cap;
}

/* Grow *@buf (allocated *@alloc) to hold @need bytes, at most @cap. */
static bool grow(char **buf, size_t *alloc, size_t need, size_t cap)
{
	size_t n = *alloc ? *alloc : 4096;
	char *p;

	if (need <= *alloc)
		return true;
	while (n < need)
		n *= 2;
	if (n > cap)
		n = cap;
	p = realloc(*buf, n);
	if (!p)
		return false;
	*buf = p;
	*alloc = n;
	return true;
}

void ward_capbuf_append(struct ward_capbuf *cb, const char *data, size_t n)
{
	size_t k = cb->head_cap - cb->head_len;

	/* The head: the first head_cap bytes ever seen. */
	if (k > n)
		k = n;
	if (k) {
		if (grow(&cb->head, &cb->head_alloc, cb->head_len + k,
			 cb->head_cap)) {
			memcpy(cb->head + cb->head_len, data, k);
			cb->head_len += k;
		} else {
			cb->dropped += k;
		}
		data += k;
		n -= k;
	}
	if (n == 0)
		return;
	if (cb->tail_cap == 0) {
		cb->dropped += n;
		return;
	}
	/* More than the ring holds: only the last tail_cap bytes matter. */
	if (n >= cb->tail_cap) {
		if (!grow(&cb->tail, &cb->tail_alloc, cb->tail_cap,
			  cb->tail_cap)) {
			cb->dropped += cb->tail_len + n;
			cb->tail_len = 0;
			cb->tail_pos = 0;
			return;
		}
		cb->dropped += cb->tail_len + (n - cb->tail_cap);
		memcpy(cb->tail, data + (n - cb->tail_cap), cb->tail_cap);
		cb->tail_len = cb->tail_cap;
		cb->tail_pos = 0;
		return;
	}
	/* Not yet full: the ring is still linear from index 0. */
	if (cb->tail_len < cb->tail_cap) {
		k = cb->tail_cap - cb->tail_len;
		if (k > n)
			k = n;
		if (!grow(&cb->tail, &cb->tail_alloc, cb->tail_len + k,
			  cb->tail_cap)) {
			cb->dropped += n;
			return;
		}
		memcpy(cb->tail + cb->tail_len, data, k);
		cb->tail_len += k;
		data += k;
		n -= k;
	}
	/* Full: overwrite the oldest bytes. */
	while (n) {
		k = cb->tail_cap - cb->tail_pos;
		if (k > n)
			k = n;
		memcpy(cb->tail + cb->tail_pos, data, k);
		cb->dropped += k;
		cb->tail_pos = (cb->tail_pos + k) % cb->tail_cap;
		data += k;
		n -= k;
	}
}

int ward_capbuf_dup(char **out, size_t *len, const struct ward_capbuf *cb)
{
	size_t n = cb->head_len + cb->tail_len;
	size_t first = cb->tail_len - cb->tail_pos;
	char *p = malloc(n + 1);

	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	if (cb->head_len)
		memcpy(p, cb->head, cb->head_len);
	/* tail_pos is 0 unless the ring is full, so this is in order. */
	if (first)
		memcpy(p + cb->head_len, cb->tail + cb->tail_pos, first);
	if (cb->tail_pos)
		memcpy(p + cb->head_len + first, cb->tail, cb->tail_pos);
	p[n] = '\0';
	*out = p;
	*len = n;
	return 0;
}

void ward_capbuf_free(struct ward_capbuf *cb)
{
	free(cb->head);
	free(cb->tail);
	cb->head = cb->tail = NULL;
	cb->head_len = cb->head_alloc = 0;
	cb->tail_len = cb->tail_alloc = cb->tail_pos = 0;
}

void ward_capbuf_reset(struct ward_capbuf *cb)
{
	ward_capbuf_free(cb);
	cb->dropped = 0;
}

/* --- small helpers -------------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

static void close_pipe(int p[2])
{
	close_fd(&p[0]);
	close_fd(&p[1]);
}

int ward_exec_opts_check(struct ward_exec_options *dst,
			 const struct ward_exec_options *src)
{
	const struct ward_exec_options def = WARD_EXEC_OPTIONS_INIT;

	if (!src) {
		*dst = def;
		return 0;
	}
	switch (src->version) {
	case 1:
		/* A version 1 struct ends before `contain`: copy only what it
		 * has, the rest keeps its default. */
		*dst = def;
		memcpy(dst, src, offsetof(struct ward_exec_options, contain));
		break;
	case WARD_EXEC_OPTIONS_VERSION:
		*dst = *src;
		break;
	default:
		return ward_err(WARD_EINVAL,
				"exec options: unknown version %u (expected "
				"%u; use WARD_EXEC_OPTIONS_INIT)",
				src->version, WARD_EXEC_OPTIONS_VERSION);
	}
	dst->version = WARD_EXEC_OPTIONS_VERSION;
	if (!dst->kill_grace_ms)
		dst->kill_grace_ms = KILL_GRACE_MS;
	return 0;
}

/* --- the plan: everything the child needs, built beforehand --------------- */

/* "WARD_SANDBOX=<runner>" as static storage; NULL for runner none. */
static const char *sandbox_var(enum ward_runner runner)
{
	switch (runner) {
	case WARD_RUNNER_NONE:
		return NULL;
	case WARD_RUNNER_BWRAP:
		return "WARD_SANDBOX=bwrap";
	case WARD_RUNNER_LANDLOCK:
		return "WARD_SANDBOX=landlock";
	case WARD_RUNNER_SEATBELT:
		return "WARD_SANDBOX=seatbelt";
	case WARD_RUNNER_WINDOWS_ACL:
		return "WARD_SANDBOX=windows-acl";
	case WARD_RUNNER_CUSTOM:
		return "WARD_SANDBOX=custom";
	}
	return NULL;
}

/*
 * The child's environment: @base without WARD_SANDBOX, then @var (if any).
 * The vector is malloc'd; its strings are borrowed (the caller's, environ's
 * or static).
 */
static char **build_envp(char *const *base, const char *var)
{
	static const char key[] = "WARD_SANDBOX=";
	size_t n = 0, j = 0;
	char **envp;

	while (base && base[n])
		n++;
	envp = malloc((n + 2) * sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (var && strncmp(base[i], key, sizeof(key) - 1) == 0)
			continue;
		envp[j++] = base[i];
	}
	if (var)
		envp[j++] = (char *)var;
	envp[j] = NULL;
	return envp;
}

/*
 * The paths execve() should try for @name, execvp-style: @name itself when
 * it contains a slash, else each PATH entry of @envp (an empty entry is the
 * current directory). One allocation; free() it.
 */
static char **build_candidates(const char *name, char *const *envp)
{
	const char *path = NULL;
	size_t nlen = strlen(name), ndirs = 1, size;
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
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p; p++)
		ndirs += *p == ':';
	/* Each entry: dir (or "."), '/', name, NUL. */
	size = (ndirs + 1) * sizeof(*cands) + strlen(path) + ndirs * (nlen + 3);
	cands = malloc(size);
	if (!cands)
		return NULL;
	s = (char *)(cands + ndirs + 1);
	for (size_t i = 0; i < ndirs; i++) {
		const char *end = strchr(path, ':');
		size_t dlen = end ? (size_t)(end - path) : strlen(path);

		cands[i] = s;
		if (dlen) {
			memcpy(s, path, dlen);
			s += dlen;
		} else {
			*s++ = '.';
		}
		*s++ = '/';
		memcpy(s, name, nlen + 1);
		s += nlen + 1;
		path += dlen + (end ? 1 : 0);
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

enum child_stage {
	STAGE_SETUP = 1, /* the executor's own setup (fds, chdir, session) */
	STAGE_EXEC,	 /* exec of a wrapper runner */
};

/* What a child that failed before exec writes to the status pipe. It is
 * smaller than PIPE_BUF, so the write is atomic. */
struct child_status {
	int stage;
	int err;
	char msg[248];
};

struct child_args {
	int in_fd; /* -1: /dev/null */
	int out_fd;
	int err_fd;
	int fd3; /* bwrap's JSON status pipe, becomes fd 3; or -1 */
	int status_fd;
	const char *cwd;
	char *const *argv;
	char *const *envp;
	char *const *cands;
	bool shell_like; /* exec failure → 127 on stderr, not a record */
	pid_t parent;
	sigset_t empty;
};

/* Async-signal-safe string append (truncating, NUL-terminated). */
static void child_cat(char *buf, size_t len, size_t *pos, const char *s)
{
	while (s && *s && *pos + 1 < len)
		buf[(*pos)++] = *s++;
	buf[*pos] = '\0';
}

/* strerror() is not async-signal-safe: the few texts execve() needs. */
static const char *child_errtext(int e)
{
	switch (e) {
	case ENOENT:
		return "No such file or directory";
	case EACCES:
		return "Permission denied";
	case ENOEXEC:
		return "Exec format error";
	case ENOTDIR:
		return "Not a directory";
	case E2BIG:
		return "Argument list too long";
	case ENOMEM:
		return "Cannot allocate memory";
	case ETXTBSY:
		return "Text file busy";
	case ELOOP:
		return "Too many levels of symbolic links";
	case ENAMETOOLONG:
		return "File name too long";
	default:
		return "cannot execute";
	}
}

static void child_report(int fd, int stage, int e, const char *a, const char *b)
{
	struct child_status st;
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
	_exit(CHILD_FAILED);
}

/*
 * The child shares the caller's memory (see spawn_child), so a handler of
 * the caller must never run in it: every caught signal goes back to its
 * default before signals are unblocked. Like Python's restore_signals,
 * SIGPIPE and SIGXFSZ are reset even when ignored, so a caller ignoring
 * SIGPIPE does not make `yes | head` spin in the child.
 */
static void child_reset_signals(const sigset_t *empty)
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
	sigprocmask(SIG_SETMASK, empty, NULL);
}

/*
 * @fd itself when no dup2() onto 0 to 3 can clobber it, else a copy at
 * CHILD_FD_HIGH or above (close-on-exec); -1 and errno on failure. Only
 * those are copied: the child holds the caller's descriptors until exec,
 * and a copy of every source could exceed a low RLIMIT_NOFILE.
 */
static int child_lift(int fd)
{
	if (fd < 0 || fd >= CHILD_FD_HIGH)
		return fd;
	return fcntl(fd, F_DUPFD_CLOEXEC, CHILD_FD_HIGH);
}

/*
 * Between clone and exec: async-signal-safe calls only, no writes to
 * memory shared with the caller. Never returns. Every source descriptor
 * among 0 to 3 is first lifted above them (child_lift), so no dup2() can
 * clobber another source, then placed.
 */
static void child_main(const struct child_args *a)
{
	char err[200];
	int in, out, errfd, fd3 = -1, st;
	int saw_eacces = 0, e = ENOENT;
	size_t pos = 0;

	st = child_lift(a->status_fd);
	if (st < 0)
		_exit(CHILD_FAILED);

	child_reset_signals(&a->empty);

	/* A new session: no controlling terminal (TIOCSTI cannot reach the
	 * caller's), and a process group to kill as a whole. */
	if (setsid() < 0)
		child_report(st, STAGE_SETUP, errno, "setsid", NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		child_report(st, STAGE_SETUP, errno, "PR_SET_PDEATHSIG", NULL);
	/* The parent may have died before the prctl took effect. */
	if (getppid() != a->parent)
		_exit(CHILD_FAILED);

	if (a->in_fd >= 0)
		in = child_lift(a->in_fd);
	else
		in = child_lift(open("/dev/null", O_RDONLY | O_CLOEXEC));
	if (in < 0)
		child_report(st, STAGE_SETUP, errno, "stdin", NULL);
	out = child_lift(a->out_fd);
	if (out < 0)
		child_report(st, STAGE_SETUP, errno, "stdout", NULL);
	errfd = child_lift(a->err_fd);
	if (errfd < 0)
		child_report(st, STAGE_SETUP, errno, "stderr", NULL);
	if (a->fd3 >= 0) {
		fd3 = child_lift(a->fd3);
		if (fd3 < 0)
			child_report(st, STAGE_SETUP, errno, "status fd", NULL);
	}
	/* dup2() clears close-on-exec on the target: these four survive. */
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0 ||
	    (fd3 >= 0 && dup2(fd3, 3) < 0))
		child_report(st, STAGE_SETUP, errno, "dup2", NULL);
	/* Everything else (the status pipe included, still needed until
	 * exec) goes at exec. */
	util_close_from(fd3 >= 0 ? 4 : 3, -1, true);

	if (chdir(a->cwd) != 0)
		child_report(st, STAGE_SETUP, errno, "chdir ", a->cwd);

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
	if (!a->shell_like)
		child_report(st, STAGE_EXEC, e, a->argv[0], NULL);

	child_cat(err, sizeof(err), &pos, "ward: ");
	child_cat(err, sizeof(err), &pos, a->argv[0]);
	if (e == ENOENT && !strchr(a->argv[0], '/'))
		child_cat(err, sizeof(err), &pos, ": command not found\n");
	else {
		child_cat(err, sizeof(err), &pos, ": ");
		child_cat(err, sizeof(err), &pos, child_errtext(e));
		child_cat(err, sizeof(err), &pos, "\n");
	}
	if (write(2, err, pos) < 0) {
		/* nothing left to tell */
	}
	_exit(e == ENOENT ? 127 : 126);
}

static int child_entry(void *arg)
{
	child_main(arg);
	return CHILD_FAILED; /* not reached */
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

/*
 * Start the child like posix_spawn does: clone(CLONE_VM | CLONE_VFORK)
 * on a stack carved from this frame, so the caller's memory is not
 * copied (fork() of a 1 GiB caller costs ~13 ms here, this ~0.6 ms) and
 * this thread sleeps until the child has exec'd or exited. Every signal
 * is blocked around the clone, so no handler of the caller runs in the
 * child before child_reset_signals(). Returns the pid, or -1 and errno.
 *
 * With @cg_fd (a cgroup directory) the child is born in that cgroup:
 * clone3(CLONE_INTO_CGROUP | CLONE_VFORK), fork-like — clone3 cannot run
 * a function on a new stack, so the child gets a copy of the caller's
 * memory instead of sharing it (child_main behaves the same on either).
 */
static pid_t spawn_child(struct child_args *a, int cg_fd)
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
		ca.flags = CLONE_VFORK | CLONE_INTO_CGROUP;
		ca.exit_signal = SIGCHLD;
		ca.cgroup = (uint64_t)cg_fd;
		pid = (pid_t)syscall(__NR_clone3, &ca, sizeof(ca));
		if (pid == 0)
			child_main(a); /* never returns */
		e = errno;
	} else {
		/* The stack grows down on every architecture Linux/ward
		 * supports. */
		pid = clone(child_entry, stack + sizeof(stack),
			    CLONE_VM | CLONE_VFORK | SIGCHLD, a);
		e = errno;
		unpoison_stack(stack, sizeof(stack));
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return pid;
}

/* --- containment of descendants ------------------------------------------- */

/*
 * Process-wide state. cg_base: this process's cgroup v2 directory, found
 * once ("" when there is none). cg_prefix: "ward-<pid namespace>-", the
 * start of the name of every call cgroup of this pid namespace (then
 * "<pid>-<seq>").
 * cg_state: 0 not yet proven, 1 a call's cgroup worked (cgroup.kill
 * exists, clone3 into it works), -1 cgroups cannot be used here (not
 * writable, kernel too old, clone3 filtered): never tried again.
 * subreaper_on: PR_SET_CHILD_SUBREAPER is set.
 */
static pthread_once_t cg_once = PTHREAD_ONCE_INIT;
static char cg_base[PATH_MAX];
static char cg_prefix[32];
static atomic_int cg_state;
static atomic_uint cg_seq;
static atomic_int subreaper_on;

/* Undo mountinfo's octal escapes (\040 for a space, …) in place. */
static void unescape_octal(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/*
 * Find cg_base: the "0::PATH" line of /proc/self/cgroup, under the first
 * cgroup2 mount of /proc/self/mountinfo whose root contains PATH. Left
 * empty on a cgroup v1-only system, without a cgroup2 mount, or when the
 * process's cgroup lies outside every mount's view. Cached for the life of
 * the process (a process moved to another cgroup later still creates its
 * calls' cgroups under the first one).
 */
static void cg_find_base(void)
{
	char path[PATH_MAX] = "";
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f;

	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (strncmp(line, "0::/", 4) != 0)
			continue;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if ((size_t)n - 3 < sizeof(path))
			memcpy(path, line + 3, (size_t)n - 2);
		break;
	}
	fclose(f);
	/* A removed cgroup reads "/path (deleted)": unusable. */
	if (!path[0] || strstr(path, " (deleted)"))
		goto out_free_line;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		goto out_free_line;
	while (getline(&line, &cap, f) > 0) {
		/* id parent maj:min root mountpoint opts [tags] - fstype … */
		char *sep = strstr(line, " - "), *save = NULL, *tok;
		char *root = NULL, *mnt = NULL;
		const char *rest;
		size_t rlen;
		int i = 0;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok && i < 5;
		     tok = strtok_r(NULL, " ", &save), i++) {
			if (i == 3)
				root = tok;
			else if (i == 4)
				mnt = tok;
		}
		if (!root || !mnt)
			continue;
		unescape_octal(root);
		unescape_octal(mnt);
		rlen = strlen(root);
		if (strcmp(root, "/") == 0)
			rest = path;
		else if (strncmp(path, root, rlen) == 0 &&
			 (path[rlen] == '/' || path[rlen] == '\0'))
			rest = path + rlen;
		else
			continue;
		if (strcmp(rest, "/") == 0)
			rest = "";
		if ((size_t)snprintf(cg_base, sizeof(cg_base), "%s%s", mnt,
				     rest) >= sizeof(cg_base))
			cg_base[0] = '\0';
		break;
	}
	fclose(f);
out_free_line:
	free(line);
}

/* Kill every process of the cgroup @dir_fd (asynchronously: they die on
 * their way back to user space). */
static void cg_kill(int dir_fd)
{
	int fd = openat(dir_fd, "cgroup.kill", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while (write(fd, "1", 1) < 0 && errno == EINTR)
		;
	close(fd);
}

/* True when cgroup.events (@fd) says the cgroup is empty; re-read from
 * the start each time. */
static bool cg_empty(int fd)
{
	char buf[256];
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	return strstr(buf, "populated 0") != NULL;
}

/* Wait at most @ms for the cgroup @dir_fd to have no process left. */
static void cg_wait_empty(int dir_fd, unsigned ms)
{
	uint64_t until = now_ms() + ms;
	int fd = openat(dir_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);

	while (fd >= 0 && !cg_empty(fd)) {
		/* cgroup.events signals a change with POLLPRI. */
		struct pollfd p = {.fd = fd, .events = POLLPRI};
		uint64_t now = now_ms();

		if (now >= until)
			break;
		poll(&p, 1, (int)(until - now > 50 ? 50 : until - now));
	}
	close_fd(&fd);
}

/* "<cg_base>/<name>" into @buf; false when it does not fit. */
static bool cg_path(char *buf, size_t len, const char *name)
{
	return (size_t)snprintf(buf, len, "%s/%s", cg_base, name) < len;
}

/*
 * Clean up after earlier ward processes of this pid namespace that died
 * during a call (SIGKILL, a crash, Ctrl-C): their call cgroups are still
 * there, and whatever the call left in them still runs, confined but with
 * the call's write access. A cgroup named for a pid that no longer exists
 * is killed and removed (or, should it not be empty yet, removed by the
 * next process that looks). Names from another pid namespace are not
 * judged: their pids mean nothing here.
 */
static void cg_reap_stale(const char *want)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	d = opendir(cg_base);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;
		int fd;

		if (strncmp(e->d_name, want, strlen(want)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(want), &end, 10);
		if (pid <= 0 || *end != '-' ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH) ||
		    !cg_path(path, sizeof(path), e->d_name))
			continue;
		if (rmdir(path) == 0 || errno != EBUSY)
			continue;
		fd = openat(dirfd(d), e->d_name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		cg_kill(fd);
		cg_wait_empty(fd, STALE_EMPTY_MS);
		close(fd);
		rmdir(path);
	}
	closedir(d);
}

/* Once per process: cg_base and cg_prefix. */
static void cg_setup(void)
{
	struct stat st;

	cg_find_base();
	if (!cg_base[0])
		return;
	/* Pids are per pid namespace: the namespace goes into the name. */
	if (stat("/proc/self/ns/pid", &st) != 0)
		st.st_ino = 0;
	snprintf(cg_prefix, sizeof(cg_prefix), "ward-%llu-",
		 (unsigned long long)st.st_ino);
}

/* The process that last swept stale cgroups: a forked caller sweeps too. */
static _Atomic pid_t cg_swept_by;

/*
 * Create the call's cgroup, ward-<pid ns>-<pid>-<seq>, under the process's own and
 * open it into sp->cg_fd. Returns false (nothing left behind) when cgroups
 * cannot be used for this call; a failure that will not go away (no
 * permission, read-only cgroupfs, no cgroup.kill) turns them off for the
 * process.
 */
static bool cg_create(struct ward_spawn *sp)
{
	char path[PATH_MAX];
	int fd;

	pthread_once(&cg_once, cg_setup);
	if (!cg_base[0] || atomic_load(&cg_state) < 0)
		return false;
	/* Once per process (a fork is another process): what dead wards
	 * left behind is killed and removed before this call adds its own. */
	if (atomic_exchange(&cg_swept_by, getpid()) != getpid())
		cg_reap_stale(cg_prefix);
	for (int tries = 0;; tries++) {
		/* getpid() each time: a forked caller is another owner. */
		snprintf(sp->cg_name, sizeof(sp->cg_name), "%s%d-%u", cg_prefix,
			 (int)getpid(), atomic_fetch_add(&cg_seq, 1));
		if (!cg_path(path, sizeof(path), sp->cg_name)) {
			atomic_store(&cg_state, -1);
			return false;
		}
		if (mkdir(path, 0755) == 0)
			break;
		/* EEXIST: left by an earlier process of the same pid. */
		if (errno == EEXIST && tries < 8)
			continue;
		/* EAGAIN (cgroup.max.descendants), ENOMEM: this call only. */
		if (errno != EAGAIN && errno != ENOMEM && errno != EEXIST)
			atomic_store(&cg_state, -1);
		return false;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* cgroup.kill: Linux 5.14. */
	if (fd >= 0 && atomic_load(&cg_state) == 0 &&
	    faccessat(fd, "cgroup.kill", W_OK, AT_EACCESS) != 0) {
		atomic_store(&cg_state, -1);
		close_fd(&fd);
	}
	if (fd < 0) {
		rmdir(path);
		return false;
	}
	sp->cg_fd = fd;
	return true;
}

/*
 * Remove the call's cgroup: wait (at most CGROUP_EMPTY_MS) for its killed
 * processes to be gone, then rmdir. A process that cannot die (stuck in
 * the kernel) keeps the directory; it is left behind, for the stale-cgroup
 * sweep of a later process (cg_reap_stale).
 */
static void cg_remove(struct ward_spawn *sp)
{
	char path[PATH_MAX];

	cg_wait_empty(sp->cg_fd, CGROUP_EMPTY_MS);
	close_fd(&sp->cg_fd);
	if (cg_path(path, sizeof(path), sp->cg_name))
		rmdir(path);
}

/* Make this process a child subreaper (once; it cannot be undone). */
static bool subreaper_enable(void)
{
	if (atomic_load(&subreaper_on))
		return true;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
		return false;
	atomic_store(&subreaper_on, 1);
	return true;
}

/* Now, in the unit of /proc/PID/stat's starttime (clock ticks since
 * boot, CLOCK_BOOTTIME), rounded down like the kernel rounds. */
static unsigned long long boot_ticks(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	if (hz <= 0 || hz > 1000000000L)
		hz = 100;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec /
		   (unsigned long long)(1000000000L / hz);
}

/* The parent pid and start time of @pid from /proc/PID/stat; false when
 * it is gone. */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* The command name may hold anything; the fields follow its last
	 * ')'. Field 3 (state) comes first, then 4 (ppid) … 22 (starttime). */
	p = strrchr(buf, ')');
	if (!p)
		return false;
	for (field = 2; *p && field < 22; p++) {
		if (*p != ' ')
			continue;
		field++;
		if (field == 4)
			*ppid = (pid_t)strtol(p + 1, NULL, 10);
	}
	if (field != 22)
		return false;
	*start = strtoull(p, NULL, 10);
	return true;
}

/* A growable list of pids. */
struct pidlist {
	pid_t *v;
	size_t n, cap;
};

static void pidlist_add(struct pidlist *l, pid_t pid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		pid_t *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return; /* the next round finds it again */
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = pid;
}

/* Add the pids of one /proc/self/task/TID/children file ("1 2 3 "). */
static void add_children_of(struct pidlist *l, const char *tid)
{
	char path[64], buf[4096];
	long cur = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%s/children", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* the thread is gone */
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				cur = (cur < 0 ? 0 : cur * 10) + (buf[i] - '0');
			} else if (cur >= 0) {
				pidlist_add(l, (pid_t)cur);
				cur = -1;
			}
		}
	}
	if (cur >= 0)
		pidlist_add(l, (pid_t)cur);
	close(fd);
}

/*
 * The children of this process, every thread's (an orphan is reparented
 * to any thread of the subreaper). From the threads' children files;
 * without them (a kernel built without CONFIG_PROC_CHILDREN), by the
 * ppid of every process in /proc.
 */
static void list_children(struct pidlist *l)
{
	bool files = access("/proc/thread-self/children", F_OK) == 0;
	pid_t self = getpid();
	struct dirent *e;
	DIR *d;

	d = opendir(files ? "/proc/self/task" : "/proc");
	if (!d)
		return;
	while ((e = readdir(d))) {
		unsigned long long start;
		pid_t pid, ppid = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (files) {
			add_children_of(l, e->d_name);
			continue;
		}
		pid = (pid_t)strtol(e->d_name, NULL, 10);
		if (proc_stat(pid, &ppid, &start) && ppid == self)
			pidlist_add(l, pid);
	}
	closedir(d);
}

/*
 * Kill @pid, a child of this process, unless it started before @since (it
 * predates the call: not ours to kill), and reap it if it can be. A pidfd
 * pins the process, so a pid reaped and reused meanwhile is never
 * signalled. Never waits: a zombie held by a live tracer (the tracer
 * reaps it first) is left for a later round, once its tracer — one of the
 * call's processes too — has been killed. Returns 1 when @pid was one of
 * the call's, 2 when it was also reaped, 0 otherwise.
 */
static int sweep_one(pid_t pid, unsigned long long since)
{
	int fd = (int)syscall(__NR_pidfd_open, pid, 0);
	unsigned long long start;
	pid_t ppid = 0;
	siginfo_t si;
	int ours = 0;

	if (!proc_stat(pid, &ppid, &start) || start < since)
		goto out_close;
	if (fd < 0) {
		/* Before Linux 5.3: the pid it is. */
		if (errno != ENOSYS || kill(pid, SIGKILL) != 0)
			goto out_close;
		ours = waitpid(pid, NULL, WNOHANG) == pid ? 2 : 1;
		goto out_close;
	}
	/* Still our child (else ECHILD): then signal it, reap if dead. */
	memset(&si, 0, sizeof(si));
	if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si,
		   WEXITED | WNOHANG | WNOWAIT) != 0)
		goto out_close;
	ours = 1;
	syscall(__NR_pidfd_send_signal, fd, SIGKILL, NULL, 0);
	memset(&si, 0, sizeof(si));
	if (waitid((idtype_t)P_PIDFD, (id_t)fd, &si, WEXITED | WNOHANG) == 0 &&
	    si.si_pid != 0)
		ours = 2;
out_close:
	if (fd >= 0)
		close(fd);
	return ours;
}

/*
 * Subreaper: kill and reap every child of this process started since
 * @since. Killing one reparents its own children to us, so repeat until
 * no round finds one. No budget shared by the children: each round kills
 * every live one before waiting for any, so a zombie held by a tracer
 * cannot hold up the rest (its tracer is killed too, which frees it).
 * Only when SWEEP_MS pass without a single child reaped does it give up
 * (a process stuck in the kernel). The common case, nothing left behind,
 * is one waitid() that finds no child at all: /proc is not read.
 */
/*
 * Wait up to a millisecond for one of @l's processes to exit: a poll on
 * their pidfds returns as soon as one does (a fixed sleep made every call
 * whose sandbox init was still dying wait a millisecond). Without pidfds
 * (before Linux 5.3), the millisecond.
 */
static void wait_one_exit(const struct pidlist *l)
{
	struct timespec ms = {0, 1000000};
	struct pollfd p[16];
	nfds_t n = 0;

	for (size_t i = 0; i < l->n && n < sizeof(p) / sizeof(p[0]); i++) {
		int fd = (int)syscall(__NR_pidfd_open, l->v[i], 0);

		if (fd >= 0)
			p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	}
	if (n == 0) {
		nanosleep(&ms, NULL);
		return;
	}
	poll(p, n, 1);
	for (nfds_t i = 0; i < n; i++)
		close(p[i].fd);
}

static void sweep_children(unsigned long long since)
{
	uint64_t until = now_ms() + SWEEP_MS;
	struct pidlist l = {0};
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 &&
	    errno == ECHILD)
		return;
	bool polled = false;

	while (now_ms() < until) {
		struct timespec ms = {0, 1000000};
		bool found = false, reaped = false;

		l.n = 0;
		list_children(&l);
		for (size_t i = 0; i < l.n; i++) {
			int r = sweep_one(l.v[i], since);

			found |= r > 0;
			reaped |= r == 2;
		}
		if (!found)
			break;
		if (reaped) {
			until = now_ms() + SWEEP_MS;
			polled = false;
		} else if (!polled) {
			wait_one_exit(&l); /* killed: let them die */
			polled = true;
		} else {
			/* A zombie a tracer still holds makes the poll
			 * return at once: no spinning, every other round
			 * sleeps. */
			nanosleep(&ms, NULL);
			polled = false;
		}
	}
	free(l.v);
}

/*
 * Decide the containment of a call about to start under @runner, from
 * @want (WARD_CONTAIN_* flags): the cgroup when asked for and it can be
 * had, else the subreaper when asked for. Runner none (unconfined) gets
 * none. bwrap gets it too: its pid namespace ends with the sandbox's
 * pid 1, but a bwrap killed in its first milliseconds leaves that pid 1
 * running (see "Bwrap caveat" above) — the cgroup or the subreaper ends
 * it with the call.
 */
static void contain_begin(struct ward_spawn *sp, enum ward_runner runner,
			  unsigned want)
{
	if (runner == WARD_RUNNER_NONE || runner == WARD_RUNNER_SEATBELT)
		return;
	if ((want & WARD_CONTAIN_CGROUP) && cg_create(sp)) {
		sp->contain = WARD_CONTAIN_CGROUP;
		return;
	}
	if ((want & WARD_CONTAIN_SUBREAPER) && subreaper_enable()) {
		sp->contain = WARD_CONTAIN_SUBREAPER;
		sp->since = boot_ticks();
	}
}

/*
 * clone3 into the call's cgroup failed with @e: drop the cgroup and fall
 * back to what @want allows. Errors other than a transient shortage mean
 * it will never work in this process (clone3 filtered by seccomp, no
 * CLONE_INTO_CGROUP, no permission on the cgroup): cgroups are off.
 */
static void contain_fallback(struct ward_spawn *sp, unsigned want, int e)
{
	if (e != EAGAIN && e != ENOMEM && e != EINTR)
		atomic_store(&cg_state, -1);
	sp->contain = WARD_CONTAIN_NONE;
	cg_remove(sp);
	if ((want & WARD_CONTAIN_SUBREAPER) && subreaper_enable()) {
		sp->contain = WARD_CONTAIN_SUBREAPER;
		sp->since = boot_ticks();
	}
}

/*
 * The call's leader has exited (reaped or not): kill whatever it left.
 * Idempotent. Subreaper: the leader must be reaped first (under @lock),
 * so that one waitid() can tell whether any child at all is left.
 */
static void contain_kill(struct ward_spawn *sp, pthread_mutex_t *lock)
{
	if (sp->contained || !sp->contain)
		return;
	sp->contained = true;
	if (sp->contain == WARD_CONTAIN_CGROUP) {
		cg_kill(sp->cg_fd);
		return;
	}
	if (!sp->reaped) {
		if (lock)
			pthread_mutex_lock(lock);
		reap(sp->pid, &sp->status);
		sp->reaped = true;
		if (lock)
			pthread_mutex_unlock(lock);
	}
	sweep_children(sp->since);
}

/* --- spawn ---------------------------------------------------------------- */

/*
 * The bwrap (or custom bwrap-compatible) argv: exactly the plan's (its
 * prefix, with --chdir, then the command), with `--json-status-fd 3`
 * added after the binary — the one descriptor only the executor holds.
 * Nothing is planned again. A @cwd other than the one planned replaces
 * the planned --chdir operand.
 */
static int bwrap_argv(char ***out, const ward_confined *c, const char *cwd)
{
	struct ward_strv sv = {0};
	size_t n = ward_strv_len(c->prefix);

	/* The prefix ends "--chdir DIR --". */
	if (!c->prefix || n < 4 || strcmp(c->prefix[n - 1], "--") != 0 ||
	    strcmp(c->prefix[n - 3], "--chdir") != 0)
		return ward_err(WARD_ERUNNER, "%s: no runner argv planned",
				ward_runner_name(c->runner));
	ward_strv_push(&sv, c->prefix[0]);
	ward_strv_push(&sv, "--json-status-fd");
	ward_strv_push(&sv, "3");
	for (size_t i = 1; i < n - 2; i++)
		ward_strv_push(&sv, c->prefix[i]);
	ward_strv_push(&sv, cwd);
	ward_strv_push(&sv, "--");
	ward_strv_push_all(&sv, c->inner); /* the Landlock layer, or none */
	ward_strv_push_all(&sv, c->cmd);
	return ward_strv_finish(out, &sv);
}

/* Read the status pipe to EOF: 0 (exec happened) or a record. */
static ssize_t read_status(int fd, struct child_status *st)
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

/* Turn a child's status record into the error ward_spawn_start returns. */
static int status_error(const struct child_status *st, ssize_t got,
			enum ward_runner runner)
{
	char msg[sizeof(st->msg)];

	if (got != (ssize_t)sizeof(*st))
		return ward_err(-EIO, "cannot start the command: the child "
				      "failed before exec");
	memcpy(msg, st->msg, sizeof(msg));
	msg[sizeof(msg) - 1] = '\0';
	switch (st->stage) {
	case STAGE_EXEC:
		return ward_err(WARD_ERUNNER, "%s: cannot execute %s: %s",
				ward_runner_name(runner), msg,
				strerror(st->err));
	default:
		return ward_err(st->err > 0 ? -st->err : -EIO,
				"cannot start the command: %s: %s", msg,
				strerror(st->err));
	}
}

/* Copy at most 8 signatures into @sp's own storage (bounded, truncated). */
static void copy_signatures(struct ward_spawn *sp, char *const *sigs)
{
	size_t used = 0, n = 0;

	for (size_t i = 0; sigs && sigs[i] && n < 8; i++) {
		size_t len = strlen(sigs[i]);

		if (used + len + 1 > sizeof(sp->sigbuf))
			break;
		memcpy(sp->sigbuf + used, sigs[i], len + 1);
		sp->sigs[n++] = sp->sigbuf + used;
		used += len + 1;
	}
	sp->sigs[n] = NULL;
}

static void spawn_init(struct ward_spawn *sp, const ward_confined *c)
{
	memset(sp, 0, sizeof(*sp));
	sp->mode = c->mode;
	sp->runner = c->runner;
	sp->enforcement = c->enforcement;
	sp->mounts = c->ll_mounts;
	sp->pid = -1;
	sp->pidfd = -1;
	sp->out_fd = -1;
	sp->err_fd = -1;
	sp->json_fd = -1;
	sp->started = -1;
	sp->cg_fd = -1;
	sp->bwrap_pidfd = -1;
	copy_signatures(sp, c->failure_signatures);
}

/*
 * Landlock: the launcher argv, the plan's with --shell-status (a command
 * that cannot be executed is its own failure, 127 or 126, like a shell's)
 * and --pid-fd 3 (the pid of the process that confines itself, which the
 * kernel's audit records name) after the binary. Nothing is planned
 * again. Every Landlock run goes
 * through landlock-run: its keeper stays the command's parent, ends
 * everything the command started when it ends, and dies with the caller
 * taking the tree along (PR_SET_PDEATHSIG) — which a process confining
 * itself in-process and exec'ing the command could not do.
 */
static int launcher_argv(char ***out, const ward_confined *c)
{
	struct ward_strv sv = {0};

	if (!c->argv || !c->argv[0])
		return ward_err(WARD_ERUNNER, "landlock: no launcher argv "
					      "planned");
	ward_strv_push(&sv, c->argv[0]);
	ward_strv_push(&sv, "--shell-status");
	ward_strv_push(&sv, "--pid-fd");
	ward_strv_push(&sv, "3");
	ward_strv_push_all(&sv, c->argv + 1);
	return ward_strv_finish(out, &sv);
}

int ward_spawn_start(struct ward_spawn *sp, const ward_confined *c,
		     const ward_policy *policy,
		     const struct ward_exec_options *o, bool capture)
{
	int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
	int json_p[2] = {-1, -1}, st_p[2] = {-1, -1};
	struct child_args a;
	struct child_status st;
	char **wrapped = NULL, **envp = NULL, **cands = NULL;
	bool bwrap =
	    c->runner == WARD_RUNNER_BWRAP || c->runner == WARD_RUNNER_CUSTOM;
	pid_t pid;
	ssize_t got;
	int err = 0;

	spawn_init(sp, c);
	/* The plan's side effects, before anything of the run exists. */
	err = ward_confined_apply(c);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.cwd = o->cwd ? o->cwd : ward_policy_workspace(policy);
	a.in_fd = o->stdin_fd;
	a.fd3 = -1;
	a.parent = getpid();
	sigemptyset(&a.empty);

	switch (c->runner) {
	case WARD_RUNNER_NONE:
		a.argv = c->argv;
		a.shell_like = true;
		break;
	case WARD_RUNNER_LANDLOCK:
		err = launcher_argv(&wrapped, c);
		if (err)
			return err;
		a.argv = wrapped;
		sp->keeper = true;
		break;
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		err = bwrap_argv(&wrapped, c, a.cwd);
		if (err)
			return err;
		a.argv = wrapped;
		break;
	default:
		a.argv = c->argv;
		break;
	}
	if (!a.argv || !a.argv[0]) {
		err = ward_err(WARD_EINVAL, "no command to run");
		goto out_free_plan;
	}
	envp = build_envp(o->envp ? o->envp : environ, sandbox_var(c->runner));
	cands = envp ? build_candidates(a.argv[0], envp) : NULL;
	if (!cands) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_free_plan;
	}
	a.envp = envp;
	a.cands = cands;

	if (pipe2(st_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 ||
	    (capture && pipe2(out_p, O_CLOEXEC) != 0) ||
	    ((bwrap || sp->keeper) && pipe2(json_p, O_CLOEXEC) != 0)) {
		err = ward_err(-errno, "cannot create a pipe: %s",
			       strerror(errno));
		goto out_close_pipes;
	}
	a.status_fd = st_p[1];
	a.err_fd = err_p[1];
	a.out_fd = capture ? out_p[1] : (o->stdout_fd >= 0 ? o->stdout_fd : 1);
	a.fd3 = json_p[1];

	contain_begin(sp, c->runner, o->contain);
	pid = spawn_child(&a, sp->cg_fd);
	if (pid < 0 && sp->contain == WARD_CONTAIN_CGROUP) {
		contain_fallback(sp, o->contain, errno);
		pid = spawn_child(&a, -1);
	}
	if (pid < 0) {
		err = ward_err(-errno, "cannot start a process: %s",
			       strerror(errno));
		goto out_uncontain;
	}
	if (sp->contain == WARD_CONTAIN_CGROUP)
		atomic_store(&cg_state, 1);

	close_fd(&st_p[1]);
	close_fd(&err_p[1]);
	close_fd(&out_p[1]);
	close_fd(&json_p[1]);

	got = read_status(st_p[0], &st);
	close_fd(&st_p[0]);
	if (got != 0) {
		reap(pid, &sp->status);
		err = status_error(&st, got, c->runner);
		goto out_uncontain;
	}

	sp->pid = pid;
	sp->pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (sp->pidfd < 0)
		sp->pidfd = -1; /* before Linux 5.3: waitid() ticks instead */
	sp->out_fd = out_p[0];
	sp->err_fd = err_p[0];
	sp->json_fd = json_p[0];
	/*
	 * Runner none execs the command itself: it started. bwrap's JSON
	 * status decides later. Another wrapper's start says nothing about
	 * the command (-1: classify by the runner's text).
	 */
	if (c->runner == WARD_RUNNER_NONE)
		sp->started = 1;
	else if (bwrap)
		sp->started = 0;
	out_p[0] = err_p[0] = json_p[0] = -1;
	err = 0;
	goto out_close_pipes;

out_uncontain:
	/* The child never ran the command (or never existed): its cgroup
	 * is empty. */
	if (sp->cg_fd >= 0)
		cg_remove(sp);
	sp->contain = WARD_CONTAIN_NONE;
out_close_pipes:
	close_pipe(st_p);
	close_pipe(err_p);
	close_pipe(out_p);
	close_pipe(json_p);
out_free_plan:
	free(cands);
	free(envp);
	ward_strv_free(wrapped);
	return err;
}

/* --- the parent's loop ---------------------------------------------------- */

/* Block SIGPIPE in this thread while writing to a caller's descriptor, and
 * consume one raised by us, so a closed stream target cannot kill the
 * caller (the library never exits). */
struct pipe_guard {
	sigset_t old;
	bool was_pending;
};

static void pipe_guard_on(struct pipe_guard *g)
{
	sigset_t set, pending;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigpending(&pending);
	g->was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

static void pipe_guard_off(struct pipe_guard *g)
{
	struct timespec zero = {0, 0};
	sigset_t set, pending;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigpending(&pending);
	if (!g->was_pending && sigismember(&pending, SIGPIPE))
		while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* Hand @n bytes to a sink; a tee that fails is abandoned. */
static void sink_put(struct ward_sink *s, pthread_mutex_t *lock,
		     const char *buf, size_t n)
{
	if (s->tee_fd >= 0 && util_write_all(s->tee_fd, buf, n) != 0)
		s->tee_fd = -1; /* keep draining; stop copying */
	if (!s->cap && !s->pending)
		return;
	if (lock)
		pthread_mutex_lock(lock);
	if (s->cap)
		ward_capbuf_append(s->cap, buf, n);
	if (s->pending)
		ward_capbuf_append(s->pending, buf, n);
	if (lock)
		pthread_mutex_unlock(lock);
}

static pid_t json_child_pid(const char *buf, size_t len);
static void bwrap_note_child(struct ward_spawn *sp);

/* One read from a ready pipe; closes it at EOF or on error. */
static void drain_one(int *fd, struct ward_sink *s, struct ward_spawn *sp,
		      pthread_mutex_t *lock, char *buf, size_t size)
{
	ssize_t r = read(*fd, buf, size);

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		close_fd(fd);
		return;
	}
	if (s) {
		sink_put(s, lock, buf, (size_t)r);
		return;
	}
	/* bwrap's JSON status: small; keep what fits. */
	if (sp->json_len < sizeof(sp->json) - 1) {
		size_t k = sizeof(sp->json) - 1 - sp->json_len;

		if (k > (size_t)r)
			k = (size_t)r;
		memcpy(sp->json + sp->json_len, buf, k);
		sp->json_len += k;
	}
	if (lock)
		pthread_mutex_lock(lock);
	bwrap_note_child(sp);
	if (lock)
		pthread_mutex_unlock(lock);
}

/*
 * bwrap: once its JSON status names the sandbox's pid 1 (bwrap's child),
 * hold a pidfd on it. bwrap is not reaped yet when this runs (the loop
 * reaps it last), so the pid is still its child's or its zombie's.
 */
static void bwrap_note_child(struct ward_spawn *sp)
{
	pid_t pid;

	if (sp->bwrap_child)
		return;
	pid = json_child_pid(sp->json, sp->json_len);
	if (pid <= 0)
		return;
	sp->bwrap_child = pid;
	sp->bwrap_pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
}

/* Signals whose default action does not end a process: bwrap survives
 * them, and so does its sandbox. */
static bool sig_ends(int sig)
{
	switch (sig) {
	case 0:
	case SIGCHLD:
	case SIGCONT:
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
	case SIGURG:
	case SIGWINCH:
		return false;
	default:
		return true;
	}
}

/* bwrap: end the sandbox's pid 1, and so its whole pid namespace, when
 * its pid is known (bwrap_note_child, under the loop's lock). */
static void bwrap_kill_child(struct ward_spawn *sp)
{
	if (sp->bwrap_pidfd >= 0)
		syscall(__NR_pidfd_send_signal, sp->bwrap_pidfd, SIGKILL, NULL,
			0);
}

/* bwrap has exited: so must its sandbox (it has, unless bwrap was killed
 * before its child armed its parent-death signal). The pidfd names that
 * very process, so a reused pid is never signalled. */
static void bwrap_ended(struct ward_spawn *sp, pthread_mutex_t *lock)
{
	if (sp->runner != WARD_RUNNER_BWRAP && sp->runner != WARD_RUNNER_CUSTOM)
		return;
	if (lock)
		pthread_mutex_lock(lock);
	bwrap_note_child(sp);
	bwrap_kill_child(sp);
	if (lock)
		pthread_mutex_unlock(lock);
}

int ward_spawn_signal(struct ward_spawn *sp, int sig)
{
	int ret;

	if (sp->pid <= 0 || sp->reaped)
		return -ESRCH;
	/*
	 * bwrap's child arms its parent-death signal a few milliseconds
	 * after it starts: killed earlier, bwrap would leave it running.
	 * Its pid 1 goes first (it ignores every other signal from here;
	 * bwrap would pass on SIGKILL anyway once armed).
	 */
	if ((sp->runner == WARD_RUNNER_BWRAP ||
	     sp->runner == WARD_RUNNER_CUSTOM) &&
	    sig_ends(sig))
		bwrap_kill_child(sp);
	if (sp->keeper) {
		/* The keeper passes catchable signals on to the command's
		 * group and turns its own kill signal into the end of every
		 * process of the call (SIGKILL would end only the keeper). */
		ret = kill(sp->pid, sig == SIGKILL ? SIGRTMAX : sig);
		return ret == 0 ? 0 : -errno;
	}
	/* The session: setsid made pgid == pid. Should the group be gone
	 * while the unreaped leader is not, the leader still gets it. */
	ret = kill(-sp->pid, sig);
	if (ret != 0 && errno == ESRCH)
		ret = kill(sp->pid, sig);
	return ret == 0 ? 0 : -errno;
}

/* @now + @ms without wrapping; 0 (none) when @ms is 0. */
static uint64_t deadline_after(uint64_t now, unsigned long ms)
{
	if (!ms)
		return 0;
	return ms > UINT64_MAX - now ? UINT64_MAX : now + ms;
}

static int min_timeout(int cur, uint64_t at, uint64_t now)
{
	int t;

	if (!at)
		return cur;
	t = at <= now ? 0 : at - now > INT_MAX ? INT_MAX : (int)(at - now);
	return cur < 0 || t < cur ? t : cur;
}

void ward_spawn_loop(struct ward_spawn *sp, const struct ward_loop *lp)
{
	struct ward_sink out = lp->out, err = lp->err;
	struct pipe_guard guard;
	uint64_t now = now_ms();
	uint64_t deadline = deadline_after(now, lp->timeout_ms);
	uint64_t kill_at = 0, drain_until = 0;
	unsigned grace = lp->kill_grace_ms ? lp->kill_grace_ms : KILL_GRACE_MS;
	bool exited = false, woken = false;
	bool guarded = out.tee_fd >= 0 || err.tee_fd >= 0;
	char buf[65536];

	if (guarded)
		pipe_guard_on(&guard);
	for (;;) {
		struct pollfd pfd[5];
		int *fds[3] = {&sp->out_fd, &sp->err_fd, &sp->json_fd};
		struct ward_sink *sinks[3] = {&out, &err, NULL};
		int idx[3] = {-1, -1, -1};
		int n = 0, npipes = 0, ipid = -1, iwake = -1, t = -1;

		for (int i = 0; i < 3; i++) {
			if (*fds[i] < 0)
				continue;
			idx[i] = n;
			pfd[n++] =
			    (struct pollfd){.fd = *fds[i], .events = POLLIN};
			npipes++;
		}
		if (npipes == 0 && exited)
			break;
		if (!exited && sp->pidfd >= 0) {
			ipid = n;
			pfd[n++] =
			    (struct pollfd){.fd = sp->pidfd, .events = POLLIN};
		}
		if (lp->wake_fd >= 0 && !woken) {
			iwake = n;
			pfd[n++] = (struct pollfd){.fd = lp->wake_fd,
						   .events = POLLIN};
		}
		if (!sp->timed_out && !exited)
			t = min_timeout(t, deadline, now);
		t = min_timeout(t, kill_at, now);
		t = min_timeout(t, drain_until, now);
		if (!exited && sp->pidfd < 0 && (t < 0 || t > EXIT_TICK_MS))
			t = EXIT_TICK_MS;

		if (poll(pfd, (nfds_t)n, t) < 0 && errno != EINTR) {
			/* Cannot happen with valid fds; do not spin. */
			struct timespec ts = {0, 10 * 1000000};

			nanosleep(&ts, NULL);
		}
		for (int i = 0; i < 3; i++) {
			if (idx[i] >= 0 && pfd[idx[i]].revents)
				drain_one(fds[i], sinks[i], sp, lp->lock, buf,
					  sizeof(buf));
		}
		if (ipid >= 0 && pfd[ipid].revents)
			exited = true;
		if (iwake >= 0 && pfd[iwake].revents)
			woken = true;
		if (!exited && sp->pidfd < 0) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			if (waitid(P_PID, (id_t)sp->pid, &si,
				   WEXITED | WNOHANG | WNOWAIT) == 0 &&
			    si.si_pid == sp->pid)
				exited = true;
		}
		/* Containment: the call ends with its leader; what it left
		 * goes now (its pipes then close, and the drain ends). */
		if (exited && !drain_until)
			bwrap_ended(sp, lp->lock);
		if (exited && sp->contain && !sp->contained) {
			contain_kill(sp, lp->lock);
			if (sp->reaped)
				kill_at = 0; /* the group id may be reused */
		}
		now = now_ms();
		if (exited && !drain_until)
			drain_until = now + DRAIN_MS;
		if (exited && woken)
			drain_until = now;
		/*
		 * The leader is not reaped before the loop ends, so its pid
		 * (= the group id) cannot be reused: kill(-pid) is safe.
		 */
		if (deadline && !exited && !sp->timed_out && now >= deadline) {
			sp->timed_out = true;
			ward_spawn_signal(sp, SIGTERM);
			kill_at = deadline_after(now, grace);
		}
		if (kill_at && now >= kill_at) {
			ward_spawn_signal(sp, SIGKILL);
			kill_at = 0;
		}
		if (drain_until && now >= drain_until)
			break;
	}
	/* Timed out: whatever of the group outlived the grace goes now. */
	if (sp->timed_out && kill_at && !sp->reaped)
		ward_spawn_signal(sp, SIGKILL);
	bwrap_ended(sp, lp->lock);

	if (lp->lock)
		pthread_mutex_lock(lp->lock);
	if (!sp->reaped)
		reap(sp->pid, &sp->status);
	sp->reaped = true;
	if (lp->lock)
		pthread_mutex_unlock(lp->lock);
	if (guarded)
		pipe_guard_off(&guard);
}

void ward_spawn_close(struct ward_spawn *sp)
{
	if (sp->pid > 0 && !sp->reaped) {
		ward_spawn_signal(sp, SIGKILL);
		reap(sp->pid, &sp->status);
		sp->reaped = true;
	}
	contain_kill(sp, NULL);
	if (sp->cg_fd >= 0)
		cg_remove(sp);
	close_fd(&sp->out_fd);
	close_fd(&sp->err_fd);
	close_fd(&sp->json_fd);
	close_fd(&sp->pidfd);
	close_fd(&sp->bwrap_pidfd);
}

/* --- classification and results ------------------------------------------- */

/*
 * bwrap's --json-status-fd: one JSON object per line; {"child-pid": N}
 * means the sandboxed child was created. N when seen, else 0.
 */
static pid_t json_child_pid(const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		json_error_t jerr;
		json_t *v;
		int found;

		while (off < len && (buf[off] == '\n' || buf[off] == ' ' ||
				     buf[off] == '\t' || buf[off] == '\r'))
			off++;
		if (off >= len)
			break;
		v = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK,
			       &jerr);
		if (!v)
			break;
		found = json_is_object(v) ? (int)json_integer_value(
						json_object_get(v, "child-pid"))
					  : 0;
		json_decref(v);
		if (found > 0)
			return (pid_t)found;
		if (jerr.position <= 0)
			break;
		off += (size_t)jerr.position;
	}
	return 0;
}

int ward_spawn_result(ward_result **out, const struct ward_spawn *sp,
		      const struct ward_capbuf *out_cap,
		      const struct ward_capbuf *err_cap)
{
	struct ward_classification cls;
	struct ward_run_facts facts;
	ward_result *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return ward_err(-ENOMEM, "out of memory");
	r->mode = sp->mode;
	r->runner = sp->runner;
	r->enforcement = sp->enforcement;
	r->contain = (enum ward_contain)sp->contain;
	r->pid = sp->pid;
	/* The keeper's report on fd 3: the process that confined itself. */
	if (sp->keeper && sp->json_len > 0) {
		char num[24];
		size_t n = sp->json_len < sizeof(num) - 1 ? sp->json_len
							 : sizeof(num) - 1;
		long v;

		memcpy(num, sp->json, n);
		num[n] = '\0';
		v = strtol(num, NULL, 10);
		if (v > 0 && v <= INT_MAX)
			r->pid = (pid_t)v;
	}
	r->timed_out = sp->timed_out;
	if (WIFSIGNALED(sp->status)) {
		r->exit_code = -1;
		r->term_signal = WTERMSIG(sp->status);
	} else {
		r->exit_code = WEXITSTATUS(sp->status);
	}
	if (out_cap) {
		err = ward_capbuf_dup(&r->out, &r->out_len, out_cap);
		if (err)
			goto out_free_result;
		r->out_dropped = out_cap->dropped;
	}
	err = ward_capbuf_dup(&r->err, &r->err_len, err_cap);
	if (err)
		goto out_free_result;
	r->err_dropped = err_cap->dropped;

	memset(&facts, 0, sizeof(facts));
	facts.runner = sp->runner;
	facts.exit_code = r->exit_code;
	facts.term_signal = r->term_signal;
	facts.child_started = sp->started;
	if (sp->runner == WARD_RUNNER_BWRAP || sp->runner == WARD_RUNNER_CUSTOM)
		facts.child_started =
		    json_child_pid(sp->json, sp->json_len) > 0;
	facts.stderr_text = r->err;
	facts.stderr_len = r->err_len;
	facts.failure_signatures = (const char *const *)sp->sigs;
	err = ward_classify(&cls, &facts);
	if (err)
		goto out_free_result;
	if (cls.outcome == WARD_OUTCOME_RUNNER_FAILURE) {
		err = ward_err(WARD_ERUNNER, "%s",
			       cls.detail[0] ? cls.detail
					     : "the sandbox runner failed "
					       "before the command ran");
		goto out_free_result;
	}
	r->denied = cls.outcome == WARD_OUTCOME_DENIED;
	/*
	 * The launcher's hides are read-only mounts: a write they refuse
	 * fails with EROFS, not Landlock's EACCES. Only for a run that has
	 * them (without mounts, EROFS cannot come from the sandbox).
	 */
	if (!r->denied && sp->mounts &&
	    (r->exit_code != 0 || r->term_signal != 0))
		r->denied = ward_text_has_signature(
		    r->err, r->err_len,
		    ward_denial_signature(WARD_RUNNER_BWRAP));
	*out = r;
	return 0;

out_free_result:
	ward_result_free(r);
	return err;
}

/* --- exported ------------------------------------------------------------- */

void ward_exec_guard_report(struct ward_protect_guard *guard,
			    struct ward_capbuf *cap,
			    struct ward_capbuf *pending, int fd)
{
	char **notes = NULL;

	if (!guard)
		return;
	if (ward_protect_guard_check(&notes, guard) == 0) {
		for (size_t i = 0; notes[i]; i++) {
			size_t n = strlen(notes[i]);

			notes[i][n] = '\n'; /* over the NUL; n + 1 bytes */
			if (cap)
				ward_capbuf_append(cap, notes[i], n + 1);
			if (pending)
				ward_capbuf_append(pending, notes[i], n + 1);
			if (fd >= 0)
				(void)util_write_all(fd, notes[i], n + 1);
			notes[i][n] = '\0';
		}
		ward_strv_free(notes);
	}
	ward_protect_guard_free(guard);
}

int ward_exec_confined(ward_result **out, const ward_confined *c,
		       const ward_policy *policy,
		       const struct ward_exec_options *opts)
{
	struct ward_protect_guard *guard = NULL;
	struct ward_capbuf out_cap, err_cap;
	struct ward_exec_options o;
	struct ward_spawn sp;
	struct ward_loop loop;
	bool capture;
	int err;

	if (!out || !c || !policy)
		return ward_err(WARD_EINVAL, "exec: invalid argument");
	err = ward_exec_opts_check(&o, opts);
	if (err)
		return err;
	capture = o.capture_limit > 0;
	if (capture) {
		ward_capbuf_init(&out_cap,
				 o.capture_limit - o.capture_limit / 2,
				 o.capture_limit / 2);
		ward_capbuf_init(&err_cap,
				 o.capture_limit - o.capture_limit / 2,
				 o.capture_limit / 2);
	} else {
		ward_capbuf_init(&out_cap, 0, 0);
		ward_capbuf_init(&err_cap, 0, STREAM_ERR_TAIL);
	}
	/* What no runner can keep read-only is checked after the run. */
	err = ward_protect_guard_new_for(&guard, policy, c->runner);
	if (err)
		goto out_free_bufs;
	err = ward_spawn_start(&sp, c, policy, &o, capture);
	if (err) {
		ward_protect_guard_free(guard);
		goto out_free_bufs;
	}

	memset(&loop, 0, sizeof(loop));
	loop.out = (struct ward_sink){capture ? &out_cap : NULL, NULL, -1};
	loop.err = (struct ward_sink){
	    &err_cap, NULL,
	    capture ? -1 : (o.stderr_fd >= 0 ? o.stderr_fd : 2)};
	loop.wake_fd = -1;
	loop.timeout_ms = o.timeout_ms;
	loop.kill_grace_ms = o.kill_grace_ms;
	ward_spawn_loop(&sp, &loop);
	ward_spawn_close(&sp);
	ward_exec_guard_report(guard, &err_cap, NULL, loop.err.tee_fd);
	err = ward_spawn_result(out, &sp, capture ? &out_cap : NULL, &err_cap);

out_free_bufs:
	ward_capbuf_free(&out_cap);
	ward_capbuf_free(&err_cap);
	return err;
}

int ward_exec_run(ward_result **out, ward_provider *provider,
		  const ward_policy *policy, char *const argv[],
		  const struct ward_exec_options *opts)
{
	ward_confined *c = NULL;
	int err;

	if (!out || !provider || !policy || !argv || !argv[0])
		return ward_err(WARD_EINVAL, "exec: invalid argument");
	err = ward_provider_confine(&c, provider, policy, argv);
	if (err)
		return err;
	err = ward_exec_confined(out, c, policy, opts);
	ward_confined_free(c);
	return err;
}

int ward_exec_shell(ward_result **out, ward_provider *provider,
		    const ward_policy *policy, const char *command,
		    const struct ward_exec_options *opts)
{
	char *argv[] = {"bash", "-c", (char *)command, NULL};

	if (!command)
		return ward_err(WARD_EINVAL, "exec: no command");
	return ward_exec_run(out, provider, policy, argv, opts);
}

void ward_result_free(ward_result *result)
{
	if (!result)
		return;
	free(result->out);
	free(result->err);
	free(result);
}

pid_t ward_result_pid(const ward_result *r)
{
	return r ? r->pid : 0;
}

int ward_result_exit_code(const ward_result *r)
{
	return r ? r->exit_code : -1;
}

int ward_result_signal(const ward_result *r)
{
	return r ? r->term_signal : 0;
}

bool ward_result_timed_out(const ward_result *r)
{
	return r && r->timed_out;
}

bool ward_result_denied(const ward_result *r)
{
	return r && r->denied;
}

enum ward_mode ward_result_mode(const ward_result *r)
{
	return r ? r->mode : WARD_MODE_READ_ONLY;
}

enum ward_runner ward_result_runner(const ward_result *r)
{
	return r ? r->runner : WARD_RUNNER_NONE;
}

enum ward_enforcement ward_result_enforcement(const ward_result *r)
{
	return r ? r->enforcement : WARD_ENFORCEMENT_NONE;
}

const char *ward_result_stdout(const ward_result *r, size_t *len)
{
	if (len)
		*len = r && r->out ? r->out_len : 0;
	return r ? r->out : NULL;
}

const char *ward_result_stderr(const ward_result *r, size_t *len)
{
	if (len)
		*len = r ? r->err_len : 0;
	return r ? r->err : NULL;
}

enum ward_contain ward_result_contain(const ward_result *r)
{
	return r ? r->contain : WARD_CONTAIN_NONE;
}

size_t ward_result_stdout_dropped(const ward_result *r)
{
	return r ? r->out_dropped : 0;
}

size_t ward_result_stderr_dropped(const ward_result *r)
{
	return r ? r->err_dropped : 0;
}

int ward_exec_options_init(struct ward_exec_options *opts, unsigned version)
{
	const struct ward_exec_options init = WARD_EXEC_OPTIONS_INIT;
	size_t size;

	if (!opts)
		return ward_err(WARD_EINVAL, "exec options: NULL");
	/* A caller built against older headers has a shorter struct: write
	 * only what that version has. */
	switch (version) {
	case 1:
		size = offsetof(struct ward_exec_options, contain);
		break;
	case WARD_EXEC_OPTIONS_VERSION:
		size = sizeof(*opts);
		break;
	default:
		return ward_bad_version("exec options", version,
					WARD_EXEC_OPTIONS_VERSION);
	}
	memcpy(opts, &init, size);
	opts->version = version;
	return 0;
}
