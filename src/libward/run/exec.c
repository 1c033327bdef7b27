/*
 * ward — the confined executor: spawn, capture (bounded), timeout, process
 * group; then classify.
 *
 * Plan, then apply: everything that allocates or may block on a lock (the
 * Landlock ruleset, the environment, the PATH candidates, the bwrap argv)
 * is built before the child exists. The child (child.c, which the probes
 * use too) is started posix_spawn-style
 * (clone with CLONE_VM | CLONE_VFORK: nothing of the caller is copied, so
 * a spawn costs the same from a 1 GiB harness as from a small one) and
 * until exec it only makes async-signal-safe system calls and writes only
 * its own stack. A close-on-exec status pipe tells the parent whether exec
 * happened: EOF without a record means it did.
 *
 * Decisions worth knowing (see also docs):
 *  - WARD_SANDBOX=<runner> is set (replacing any inherited value) only for
 *    a confined run. Danger-full-access (runner none) leaves the
 *    environment as given: an inherited WARD_SANDBOX there still tells the
 *    truth, since confinement is inherited.
 *  - When the command itself cannot be exec'd (not found, not executable)
 *    under Landlock or runner none, landlock-run --shell-status reports it
 *    like a shell: "landlock-run: NAME: command not found" on stderr, exit
 *    127 (126 when found but not executable).
 *    The confinement was in place, so this is the command's failure, not
 *    a runner failure. A wrapper that cannot be exec'd (bwrap,
 *    landlock-run, sandbox-exec) is a runner failure.
 *  - After the child exits, output is read until its pipes close, but at
 *    most DRAIN_MS longer: a background process that escaped the wait (and
 *    holds the pipes) keeps running, unread — unless containment is in
 *    force, which kills it as soon as the child has exited.
 *  - Every Landlock run goes through landlock-run, and so does every
 *    unconfined one (runner none, `landlock-run --unconfined`): its keeper
 *    stays the command's parent: when the command ends, everything it started ends
 *    (a pid namespace as root, else a subreaper sweep), and a caller that
 *    dies takes the tree along. Signals for the call go to the keeper,
 *    which forwards them; SIGKILL becomes its kill-everything signal
 *    (SIGRTMAX), since a SIGKILLed keeper could sweep nothing.
 *  - Containment of descendants (the call's cgroup or the subreaper), the
 *    keeper's signals and bwrap's pid 1: contain.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "contain.h"
#include "exec_internal.h"
#include "libward/guard/guard.h"
#include "libward/policy/protect.h"
#include "libward/runners/runners.h"
#include "util/landlock.h"
#include "util/supervise.h"
#include "util/util.h"

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

/* How long to keep reading after the child exited, for late writers. */
#define DRAIN_MS 1000
/* Default SIGTERM → SIGKILL grace. */
#define KILL_GRACE_MS 2000
/* Without a pidfd, how often to look whether the child exited. */
#define EXIT_TICK_MS 20
extern char **environ;

struct ward_result {
	int exit_code;
	int term_signal;
	bool timed_out;
	bool denied;
	char *sandbox_ended; /* why the sandbox ended the command, or NULL */
	bool net_denied;
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	enum ward_contain contain;
	pid_t pid; /* the confined process (for its audit records) */
	char *out; /* NULL in stream mode */
	size_t out_len, out_dropped;
	char *err;
	size_t err_len, err_dropped;
	/* The supervisor's record of refused network access (Landlock). */
	struct ward_sv_report net;
	bool has_net;
	/* The guard left something in the workspace (kept or stuck). */
	bool guard_failed;
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

/* Append to the ring: the last tail_cap bytes after the head's. */
static void ring_append(struct ward_capbuf *cb, const char *data, size_t n)
{
	size_t k;

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

/*
 * Until more than head_cap + tail_cap bytes have come, they all stay in the
 * head, in order: nothing is dropped, and the result takes the buffer as
 * it is (ward_capbuf_take: no copy). The first byte past that moves what
 * lies past head_cap to the ring, as if it had gone there, and the ring
 * keeps the last tail_cap bytes from then on.
 */
void ward_capbuf_append(struct ward_capbuf *cb, const char *data, size_t n)
{
	size_t limit = cb->head_cap + cb->tail_cap;

	if (!cb->split) {
		size_t k = limit - cb->head_len;

		if (k > n)
			k = n;
		if (k) {
			if (grow(&cb->head, &cb->head_alloc, cb->head_len + k,
				 limit)) {
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
		cb->split = true;
		if (cb->head_len > cb->head_cap) {
			size_t over = cb->head_len - cb->head_cap;

			cb->head_len = cb->head_cap;
			ring_append(cb, cb->head + cb->head_cap, over);
		}
		/* The head back to its cap (a large block shrinks in place). */
		if (!cb->head_cap) {
			free(cb->head);
			cb->head = NULL;
			cb->head_alloc = 0;
		} else if (cb->head_alloc > cb->head_cap) {
			char *p = realloc(cb->head, cb->head_cap);

			if (p) {
				cb->head = p;
				cb->head_alloc = cb->head_cap;
			}
		}
	}
	ring_append(cb, data, n);
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

int ward_capbuf_take(char **out, size_t *len, struct ward_capbuf *cb)
{
	size_t n = cb->head_len + cb->tail_len;
	char *p;

	/*
	 * The head's buffer is handed over rather than copied — a megabyte
	 * of fresh pages costs milliseconds here — grown (realloc: a large
	 * block is remapped, not copied) by what the tail holds when the
	 * ring has not wrapped (tail_pos 0: it is in order). A wrapped ring
	 * is copied.
	 */
	if (!cb->head || cb->tail_pos)
		return ward_capbuf_dup(out, len, cb);
	p = cb->head;
	if (cb->head_alloc < n + 1) {
		p = realloc(cb->head, n + 1);
		if (!p)
			return ward_err(-ENOMEM, "out of memory");
	}
	if (cb->tail_len)
		memcpy(p + cb->head_len, cb->tail, cb->tail_len);
	p[n] = '\0';
	*out = p;
	*len = n;
	free(cb->tail);
	cb->head = cb->tail = NULL;
	cb->head_len = cb->head_alloc = 0;
	cb->tail_len = cb->tail_alloc = 0;
	cb->split = false;
	return 0;
}

void ward_capbuf_free(struct ward_capbuf *cb)
{
	free(cb->head);
	free(cb->tail);
	cb->head = cb->tail = NULL;
	cb->head_len = cb->head_alloc = 0;
	cb->tail_len = cb->tail_alloc = cb->tail_pos = 0;
	cb->split = false;
}

void ward_capbuf_reset(struct ward_capbuf *cb)
{
	ward_capbuf_free(cb);
	cb->dropped = 0;
}

/* --- small helpers -------------------------------------------------------- */

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
	case 2:
		/* Version 2 ends before `streams`. */
		*dst = def;
		memcpy(dst, src, offsetof(struct ward_exec_options, streams));
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
	if ((unsigned)dst->streams > WARD_TASK_STREAMED)
		return ward_err(WARD_EINVAL, "exec options: unknown streams %d",
				(int)dst->streams);
	if (!dst->kill_grace_ms)
		dst->kill_grace_ms = KILL_GRACE_MS;
	return 0;
}

/* --- the plan: everything the child needs, built beforehand --------------- */

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

/* --- spawn ---------------------------------------------------------------- */

/*
 * A sealed memfd holding the NULL-terminated vector @args, each argument
 * NUL-terminated, read from the start (landlock-run --args);
 * -errno on failure.
 */
static int args_memfd(char *const *args)
{
	size_t len = 0, at = 0;
	char *buf;
	int fd, err = 0;

	for (size_t i = 0; args[i]; i++)
		len += strlen(args[i]) + 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		return ward_err(-ENOMEM, "out of memory");
	for (size_t i = 0; args[i]; i++) {
		size_t n = strlen(args[i]) + 1;

		memcpy(buf + at, args[i], n);
		at += n;
	}
	fd = memfd_create("ward-args", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		err = -errno;
	else if ((err = util_write_all(fd, buf, len)) == 0 &&
		 (fcntl(fd, F_ADD_SEALS,
			F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
			    F_SEAL_SEAL) != 0 ||
		  lseek(fd, 0, SEEK_SET) != 0))
		err = -errno;
	free(buf);
	if (err) {
		if (fd >= 0)
			close(fd);
		return ward_err(err,
				"cannot hand the command to the Landlock "
				"layer: %s",
				strerror(-err));
	}
	return fd;
}

/* Turn a child's status record into the error ward_spawn_start returns. */
static int status_error(const struct ward_child_status *st, ssize_t got,
			enum ward_runner runner)
{
	char msg[sizeof(st->msg)];

	if (got != (ssize_t)sizeof(*st))
		return ward_err(-EIO, "cannot start the command: the child "
				      "failed before exec");
	memcpy(msg, st->msg, sizeof(msg));
	msg[sizeof(msg) - 1] = '\0';
	switch (st->stage) {
	case WARD_CHILD_EXEC:
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
	const ward_plan *p = c->plan;

	memset(sp, 0, sizeof(*sp));
	sp->mode = ward_plan_mode(p);
	sp->runner = ward_plan_runner(p);
	sp->ops = ward_runner_ops(sp->runner);
	sp->enforcement = ward_plan_enforcement(p);
	sp->mounts = ward_plan_mounts(p);
	sp->net_off =
	    !sp->ops->unconfined && ward_plan_network(p) == WARD_NETWORK_OFF;
	sp->pid = -1;
	sp->pidfd = -1;
	sp->out_fd = -1;
	sp->err_fd = -1;
	sp->json_fd = -1;
	sp->report_fd = -1;
	sp->started = -1;
	sp->cg_fd = -1;
	sp->bwrap_pidfd = -1;
	copy_signatures(sp, ward_plan_failure_signatures(p));
}

/*
 * Whether we keep the runner's process (landlock-run --kept: it is the
 * supervisor only, one process fewer). Only where its own keeper would
 * add nothing: started by us as init of a pid namespace (@newpid) when
 * it could make one itself (@pidns: it would, and then the command must
 * not see the host's processes), else when our containment (the call's
 * cgroup or our subreaper) ends whatever the command leaves should the
 * supervisor die.
 */
static bool spawn_kept(const struct ward_spawn *sp, bool pidns, bool newpid)
{
	if (!sp->ops->kept_opt)
		return false;
	return pidns ? newpid : sp->contain != WARD_CONTAIN_NONE;
}

/*
 * The argv to spawn, assembled from the plan with the descriptors only
 * the executor holds (the runner's status at 3, the Landlock layer's from
 * WARD_CHILD_EXTRA_FD on), and the layer's command line in a memfd when bwrap's argv
 * cannot carry it (*args_fd, else -1). Every Landlock run goes through
 * landlock-run. With @kept (spawn_kept: ward contains the call, by its
 * subreaper or cgroup, or starts the launcher as init of a new pid
 * namespace) the launcher is the supervisor only and ward is its keeper;
 * otherwise the launcher forks its own keeper, which stays the command's
 * parent, ends everything the command started when it ends, and dies with
 * the caller taking the tree along (PR_SET_PDEATHSIG).
 */
static int spawn_argv(char ***out, int *args_fd, const ward_confined *c,
		      const char *cwd, bool report, bool kept)
{
	struct ward_plan_argv a;
	ward_confined at = *c;
	int err;

	*args_fd = -1;
	at.cwd = (char *)cwd;
	err = ward_confined_assemble(
	    &a, &at,
	    &(struct ward_plan_fds){.status = 3,
				    .report = report ? WARD_CHILD_EXTRA_FD : -1,
				    .kept = kept});
	if (err)
		return err;
	if (a.args) {
		*args_fd = args_memfd(a.args);
		ward_strv_free(a.args);
		if (*args_fd < 0) {
			ward_strv_free(a.argv);
			return *args_fd;
		}
	}
	*out = a.argv;
	return 0;
}

int ward_spawn_start(struct ward_spawn *sp, const ward_confined *c,
		     const ward_policy *policy,
		     const struct ward_exec_options *o, bool capture)
{
	int out_p[2] = {-1, -1}, err_p[2] = {-1, -1};
	int json_p[2] = {-1, -1}, st_p[2] = {-1, -1}, rep_p[2] = {-1, -1};
	int args_fd = -1;
	struct ward_child a;
	struct ward_child_status st;
	char **wrapped = NULL, **envp = NULL, **cands = NULL;
	enum ward_runner runner = ward_plan_runner(c->plan);
	const struct ward_runner_ops *ops = ward_runner_ops(runner);
	bool json = ops->status == WARD_STATUS_JSON;
	pid_t pid;
	ssize_t got;
	bool pidns;
	int err = 0;

	spawn_init(sp, c);
	ward_child_init(&a);
	a.cwd = o->cwd ? o->cwd : ward_policy_workspace(policy);
	a.in_fd = o->stdin_fd;

	if (ward_plan_layer(c->plan) && pipe2(rep_p, O_CLOEXEC) != 0)
		return ward_err(-errno, "cannot create a pipe: %s",
				strerror(errno));
	/* Decided before the argv: whether we keep the runner (below). */
	ward_contain_begin(sp, o->contain);
	pidns = ops->kept_opt && ward_contain_pidns();
	a.newpid = pidns;
	sp->kept = spawn_kept(sp, pidns, a.newpid);
	err = spawn_argv(&wrapped, &args_fd, c, a.cwd, rep_p[1] >= 0, sp->kept);
	if (err)
		goto out_uncontain;
	a.argv = wrapped;
	/* The launcher's keeper (Landlock, none) reports at 3 what bwrap's
	 * JSON status says for bwrap. */
	sp->keeper = ops->status == WARD_STATUS_KEEPER;
	a.extra[0] = args_fd >= 0 ? args_fd : rep_p[1];
	a.extra[1] = args_fd >= 0 ? rep_p[1] : -1;
	a.caller_bound = rep_p[1] >= 0;
	sp->bridge = ward_plan_bridge(c->plan);
	if (!a.argv || !a.argv[0]) {
		err = ward_err(WARD_EINVAL, "no command to run");
		goto out_free_plan;
	}
	envp = build_envp(o->envp ? o->envp : environ, ops->sandbox_env);
	cands = envp ? ward_child_candidates(a.argv[0], envp) : NULL;
	if (!cands) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_uncontain;
	}
	a.envp = envp;
	a.cands = cands;

	if (pipe2(st_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0 ||
	    (capture && pipe2(out_p, O_CLOEXEC) != 0) ||
	    ((json || sp->keeper) && pipe2(json_p, O_CLOEXEC) != 0)) {
		err = ward_err(-errno, "cannot create a pipe: %s",
			       strerror(errno));
		goto out_uncontain;
	}
	/*
	 * A pipe that holds a megabyte: the command writes its output
	 * without waiting for each 64 KiB to be read (`ward run --json` of
	 * 1 MB: 1.18 -> 1.13x the call without it). Best effort: past
	 * fs.pipe-max-size, or the user's pipe pages, it stays as it is.
	 */
	if (capture)
		(void)fcntl(out_p[1], F_SETPIPE_SZ, 1 << 20);
	a.status_fd = st_p[1];
	if (a.caller_bound)
		a.extra[args_fd >= 0 ? 2 : 1] = json_p[0];
	a.err_fd = err_p[1];
	a.out_fd = capture ? out_p[1] : (o->stdout_fd >= 0 ? o->stdout_fd : 1);
	a.fd3 = json_p[1];

	/*
	 * No pid namespace after all (given up first, whatever the error:
	 * the cgroup's fallback would take it for the cgroup's), or no
	 * cgroup: the runner may have to keep itself, and the argv then
	 * says so.
	 */
	for (;;) {
		int e;

		/* A kept launcher takes the keeper's signals from a
		 * descriptor; as init it would lose one sent before
		 * (util_keeper_sigset). */
		if (sp->kept)
			util_keeper_sigset(&a.mask);
		else
			sigemptyset(&a.mask);
		pid = ward_child_spawn(&a, sp->cg_fd);
		if (pid >= 0)
			break;
		e = errno;
		if (a.newpid)
			a.newpid = false;
		else if (sp->contain == WARD_CONTAIN_CGROUP)
			ward_contain_fallback(sp, o->contain, e);
		else
			break;
		if (sp->kept && !spawn_kept(sp, pidns, a.newpid)) {
			sp->kept = false;
			ward_strv_free(wrapped);
			wrapped = NULL;
			err = spawn_argv(&wrapped, &args_fd, c, a.cwd,
					 rep_p[1] >= 0, false);
			if (err)
				goto out_uncontain;
			a.argv = wrapped;
		}
	}
	if (pid < 0) {
		err = ward_err(-errno, "cannot start a process: %s",
			       strerror(errno));
		goto out_uncontain;
	}
	if (sp->contain == WARD_CONTAIN_CGROUP)
		ward_contain_proven();

	close_fd(&st_p[1]);
	close_fd(&err_p[1]);
	close_fd(&out_p[1]);
	close_fd(&json_p[1]);

	got = ward_child_read_status(st_p[0], &st);
	close_fd(&st_p[0]);
	if (got != 0) {
		reap(pid, &sp->status);
		err = status_error(&st, got, runner);
		goto out_uncontain;
	}

	sp->pid = pid;
	sp->pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (sp->pidfd < 0)
		sp->pidfd = -1; /* before Linux 5.3: waitid() ticks instead */
	sp->out_fd = out_p[0];
	sp->err_fd = err_p[0];
	sp->json_fd = json_p[0];
	sp->report_fd = rep_p[0];
	rep_p[0] = -1;
	/*
	 * Runner none confines nothing, so nothing of it can fail as a
	 * sandbox: its keeper reports a command that cannot be executed like
	 * a shell. bwrap's JSON status decides later. Another wrapper's start
	 * says nothing about the command (-1: classify by the runner's text).
	 */
	if (ops->unconfined)
		sp->started = 1;
	else if (json)
		sp->started = 0;
	out_p[0] = err_p[0] = json_p[0] = -1;
	err = 0;
	goto out_close_pipes;

out_uncontain:
	/* The child never ran the command (or never existed): its cgroup
	 * is empty. */
	if (sp->cg_fd >= 0)
		ward_contain_remove(sp);
	sp->contain = WARD_CONTAIN_NONE;
out_close_pipes:
	close_pipe(st_p);
	close_pipe(err_p);
	close_pipe(out_p);
	close_pipe(json_p);
out_free_plan:
	if (args_fd >= 0)
		close(args_fd);
	close_pipe(rep_p);
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
	if (fd == &sp->report_fd) {
		size_t k = sizeof(sp->report) - 1 - sp->report_len;

		if (k > (size_t)r)
			k = (size_t)r;
		memcpy(sp->report + sp->report_len, buf, k);
		sp->report_len += k;
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
	ward_bwrap_note_child(sp);
	if (lock)
		pthread_mutex_unlock(lock);
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
		struct pollfd pfd[6];
		int *fds[4] = {&sp->out_fd, &sp->err_fd, &sp->json_fd,
			       &sp->report_fd};
		struct ward_sink *sinks[4] = {&out, &err, NULL, NULL};
		int idx[4] = {-1, -1, -1, -1};
		int n = 0, npipes = 0, ipid = -1, iwake = -1, t = -1;

		for (int i = 0; i < 4; i++) {
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
		for (int i = 0; i < 4; i++) {
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
			ward_bwrap_ended(sp, lp->lock);
		if (exited && sp->contain && !sp->contained) {
			ward_contain_kill(sp, lp->lock);
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
	ward_bwrap_ended(sp, lp->lock);

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
	ward_contain_kill(sp, NULL);
	if (sp->cg_fd >= 0)
		ward_contain_remove(sp);
	close_fd(&sp->out_fd);
	close_fd(&sp->err_fd);
	close_fd(&sp->json_fd);
	close_fd(&sp->report_fd);
	close_fd(&sp->pidfd);
	close_fd(&sp->bwrap_pidfd);
}

/* --- classification and results ------------------------------------------- */

/* The supervisor ended with wait status @st while the command ran. */
static char *supervisor_died(int st)
{
	char how[48], *text;

	if (WIFSIGNALED(st))
		snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(st));
	else
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(st));
	if (asprintf(&text,
		     "the sandbox's supervisor ended (%s) while the command "
		     "ran, so the calls it judges failed from then on; the "
		     "command was ended",
		     how) < 0)
		return NULL;
	return text;
}

/*
 * Why the sandbox itself ended the command, from the Landlock layer's
 * report (@rep, @len bytes: "PID\n", the supervisor's records, then
 * "exit STATUS\n" when the run ended as the command did, or
 * "supervisor-died STATUS\n" or "caller-died\n" when the keeper ended
 * it): a sentence, or NULL (it did
 * not, or out of memory). A keeper that started and said nothing more
 * was killed itself — inside bwrap, when ward-bridge (@bridge) died its
 * pid namespace went with it — unless ward ended the run (@by_caller), or
 * the run ended well (@failed false).
 */
static char *sandbox_ended(const char *rep, size_t len, bool bridge,
			   bool by_caller, bool failed)
{
	char line[64], *text = NULL;
	size_t n;
	int st;

	if (!memchr(rep, '\n', len))
		return NULL;
	/* The supervisor's records share the channel: skipped. */
	n = ward_sv_report_event(rep, len, line, sizeof(line));
	if (sscanf(line, "supervisor-died %d", &st) == 1) {
		text = supervisor_died(st);
	} else if (strcmp(line, "caller-died\n") == 0 ||
		   (n == 0 && !by_caller && failed)) {
		text = strdup(bridge ? "the network bridge (ward-bridge) died "
				       "while the command ran; the command "
				       "was ended"
				     : "the sandbox's keeper (landlock-run) "
				       "died while the command ran; the "
				       "command was ended");
	}
	return text;
}

/*
 * A kept launcher's end, from its report (@rep, @len bytes): the
 * command's wait status from its "exit STATUS" line, which it writes
 * before exiting like the command (as init of a pid namespace it cannot
 * raise the command's signal on itself, and exits 128 + the signal
 * instead). A launcher (@status: its own) killed before it said how the
 * run ended, and not by us (@by_caller), was the command's supervisor:
 * the run ends as its keeper would have ended it, 125, and *died is set.
 * Else @status.
 */
static int kept_status(const char *rep, size_t len, int status, bool by_caller,
		       bool *died)
{
	char line[64];
	size_t n;
	int st;

	*died = false;
	n = ward_sv_report_event(rep, len, line, sizeof(line));
	if (sscanf(line, "exit %d", &st) == 1)
		return st;
	if (n == 0 && WIFSIGNALED(status) && !by_caller) {
		*died = true;
		return WARD_LAUNCHER_FAILED << 8;
	}
	return status;
}

int ward_spawn_result(ward_result **out, const struct ward_spawn *sp,
		      struct ward_capbuf *out_cap, struct ward_capbuf *err_cap,
		      bool take)
{
	struct ward_classification cls;
	struct ward_run_facts facts;
	ward_result *r;
	bool by_caller = sp->ended_by_caller || sp->timed_out;
	bool died = false;
	int status = sp->status;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return ward_err(-ENOMEM, "out of memory");
	r->mode = sp->mode;
	r->runner = sp->runner;
	r->enforcement = sp->enforcement;
	r->contain = (enum ward_contain)sp->contain;
	r->pid = sp->pid;
	/* The keeper's report on fd 3: the process that confined itself,
	 * and the supervisor's record of refused network access. */
	if (sp->keeper && sp->json_len > 0) {
		long v = 0;

		r->has_net =
		    ward_sv_report_find(sp->json, sp->json_len, &v, &r->net);
		if (v > 0 && v <= INT_MAX)
			r->pid = (pid_t)v;
	}
	r->timed_out = sp->timed_out;
	if (sp->kept)
		status = kept_status(sp->json, sp->json_len, status, by_caller,
				     &died);
	if (WIFSIGNALED(status)) {
		r->exit_code = -1;
		r->term_signal = WTERMSIG(status);
	} else {
		r->exit_code = WEXITSTATUS(status);
	}
	if (out_cap) {
		err = take ? ward_capbuf_take(&r->out, &r->out_len, out_cap)
			   : ward_capbuf_dup(&r->out, &r->out_len, out_cap);
		if (err)
			goto out_free_result;
		r->out_dropped = out_cap->dropped;
	}
	err = take ? ward_capbuf_take(&r->err, &r->err_len, err_cap)
		   : ward_capbuf_dup(&r->err, &r->err_len, err_cap);
	if (err)
		goto out_free_result;
	r->err_dropped = err_cap->dropped;
	/* The command ran and the sandbox ended it: no runner failure (the
	 * output so far is the result), no denial. A kept launcher killed
	 * was the supervisor (we contain what the command left). */
	if (died)
		r->sandbox_ended = supervisor_died(sp->status);
	else if (sp->keeper)
		r->sandbox_ended =
		    sandbox_ended(sp->json, sp->json_len, false, true, false);
	else if (sp->report_len)
		r->sandbox_ended = sandbox_ended(
		    sp->report, sp->report_len, sp->bridge, by_caller,
		    r->exit_code >= 128 || r->term_signal);
	if (r->sandbox_ended) {
		*out = r;
		return 0;
	}

	memset(&facts, 0, sizeof(facts));
	facts.runner = sp->runner;
	facts.exit_code = r->exit_code;
	facts.term_signal = r->term_signal;
	facts.child_started = sp->started;
	if (sp->ops->status == WARD_STATUS_JSON)
		facts.child_started =
		    ward_bwrap_child_pid(sp->json, sp->json_len) > 0;
	facts.stderr_text = r->err;
	facts.stderr_len = r->err_len;
	facts.failure_signatures = (const char *const *)sp->sigs;
	/* The supervisor's record is exact: a connect or send it refused.
	 * Without one, what it does not judge (a socket family refused by
	 * the filter itself, bwrap's own namespace) is left to the
	 * runner's signatures (classify.h). */
	facts.network_off = sp->net_off;
	if (r->has_net && r->net.count > 0)
		facts.net = WARD_NET_FACT_REFUSED;
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
	r->net_denied = cls.network_denied;
	/*
	 * The launcher's hides are read-only mounts: a write they refuse
	 * fails with EROFS, not Landlock's EACCES. Only for a run that has
	 * them (without mounts, EROFS cannot come from the sandbox).
	 */
	if (!r->denied && sp->mounts &&
	    (r->exit_code != 0 || r->term_signal != 0))
		r->denied = ward_text_has_signature(r->err, r->err_len,
						    sp->ops->hide_denial);
	*out = r;
	return 0;

out_free_result:
	ward_result_free(r);
	return err;
}

/* --- exported ------------------------------------------------------------- */

bool ward_exec_guard_report(struct ward_protect_guard *guard,
			    struct ward_capbuf *cap,
			    struct ward_capbuf *pending, int fd)
{
	char **notes = NULL;
	bool failed = false;

	if (!guard)
		return false;
	if (ward_protect_guard_check(&notes, &failed, guard) == 0) {
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
	} else {
		failed = true;
	}
	ward_protect_guard_free(guard);
	return failed;
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
	bool capture, guard_failed;
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
	/* The plan's side effects first: what it creates is ward's, not
	 * the command's (the guard's snapshot must see it). */
	err = ward_plan_prepare(c->plan);
	if (err)
		goto out_free_bufs;
	/* What no runner can keep read-only is checked after the run. */
	err = ward_protect_guard_new_facts(&guard, policy, c->plan->facts,
					   ward_plan_runner(c->plan));
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
	guard_failed =
	    ward_exec_guard_report(guard, &err_cap, NULL, loop.err.tee_fd);
	/* The buffers are freed right after: the result takes them. */
	err = ward_spawn_result(out, &sp, capture ? &out_cap : NULL, &err_cap,
				true);
	if (!err)
		(*out)->guard_failed = guard_failed;

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

bool ward_result_guard_failed(const ward_result *r)
{
	return r && r->guard_failed;
}

void ward_result_set_guard_failed(ward_result *r, bool failed)
{
	if (r)
		r->guard_failed = r->guard_failed || failed;
}

void ward_result_free(ward_result *result)
{
	if (!result)
		return;
	free(result->out);
	free(result->err);
	free(result->sandbox_ended);
	free(result);
}

const char *ward_result_sandbox_ended(const ward_result *r)
{
	return r ? r->sandbox_ended : NULL;
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

bool ward_result_network_denied(const ward_result *r)
{
	return r && r->net_denied;
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

unsigned ward_result_network_refused(const ward_result *r, char *addr,
				     size_t addr_len, unsigned *port)
{
	if (!r || !r->has_net)
		return 0;
	if (addr && addr_len &&
	    !inet_ntop(r->net.family == AF_INET6 ? AF_INET6 : AF_INET,
		       r->net.addr, addr, (socklen_t)addr_len))
		addr[0] = '\0';
	if (port)
		*port = r->net.port;
	return r->net.count;
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
	case 2:
		size = offsetof(struct ward_exec_options, streams);
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
