/*
 * ward — pieces shared by the executor (exec.c) and background tasks
 * (task.c); not installed.
 *
 * One spawn path serves both: ward_spawn_start() spawns a confined child and
 * reports whether the confinement (and exec) happened; ward_spawn_loop()
 * drains its pipes, enforces the timeout and reaps it; ward_spawn_result()
 * classifies the run into a ward_result.
 */
#ifndef WARD_EXEC_INTERNAL_H
#define WARD_EXEC_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "libward/internal.h"

/* Stream mode: the stderr tail kept for classification. */
#define STREAM_ERR_TAIL (64 * 1024)

/*
 * A bounded capture buffer: keeps the first @head_cap bytes and the last
 * @tail_cap bytes (a ring) of everything appended, and counts the bytes
 * dropped in between. Memory grows with the data, never beyond the caps
 * (but for the moment the first byte past both moves the head's excess to
 * the ring). Up to head_cap + tail_cap bytes stay in the head alone.
 */
struct ward_capbuf {
	size_t head_cap, tail_cap;
	char *head;
	size_t head_len, head_alloc;
	char *tail;
	size_t tail_len, tail_alloc;
	size_t tail_pos; /* when full: index of the oldest byte */
	size_t dropped;
	bool split; /* more than head_cap + tail_cap came: the ring is used */
};

void ward_capbuf_init(struct ward_capbuf *cb, size_t head_cap, size_t tail_cap);
/* Append @n bytes. On ENOMEM the bytes are counted as dropped. */
void ward_capbuf_append(struct ward_capbuf *cb, const char *data, size_t n);
/*
 * A malloc'd, NUL-terminated copy of what is kept (head, then tail in
 * order); its length in *len. Returns -ENOMEM (nothing written) on failure.
 */
int ward_capbuf_dup(char **out, size_t *len, const struct ward_capbuf *cb);
/*
 * The same, moving the head's buffer out (the tail appended to it) when
 * the tail's ring has not wrapped: @cb is then empty, its content belongs
 * to *out. A copy otherwise.
 */
int ward_capbuf_take(char **out, size_t *len, struct ward_capbuf *cb);
/* Forget the content (keeps the caps); frees the memory. */
void ward_capbuf_reset(struct ward_capbuf *cb);
void ward_capbuf_free(struct ward_capbuf *cb);

/* Where one output stream of the child goes in the parent. */
struct ward_sink {
	struct ward_capbuf *cap;     /* whole (bounded) output, or NULL */
	struct ward_capbuf *pending; /* tasks: new since the last read */
	int tee_fd;		     /* stream mode: copied here live, or -1 */
};

/* A spawned child and what the parent holds of it. */
struct ward_spawn {
	enum ward_mode mode;
	enum ward_runner runner;
	const struct ward_runner_ops *ops; /* the runner's (runners.h) */
	enum ward_enforcement enforcement;
	pid_t pid;   /* also the process group and session id */
	int pidfd;   /* -1 when pidfd_open() is unavailable */
	int out_fd;  /* read end of the stdout pipe; -1 in stream mode */
	int err_fd;  /* read end of the stderr pipe */
	int json_fd; /* read end of bwrap's --json-status-fd (or of
		      * landlock-run's --pid-fd), or -1 */
	int started; /* child_started for ward_run_facts: 1, 0, -1 */
	/* Landlock with the launcher's read-only mounts (hide.h): a write
	 * they refuse fails with EROFS, bwrap's signature. */
	bool mounts;
	/* The network is off: a refused lookup or connect is the
	 * sandbox's (classify.h). */
	bool net_off;
	bool reaped; /* waitpid() done: @pid may be reused */
	int status;  /* wait status once reaped */
	bool timed_out;
	/* The command runs under landlock-run's keeper: signals go to the
	 * keeper (which forwards them), the kill to KEEPER_KILL_SIGNAL. */
	bool keeper;
	/* ... and we are its keeper (landlock-run --kept): its process is
	 * the supervisor, its report says how the run ended ("exit
	 * STATUS", which as init of a pid namespace it cannot raise). */
	bool kept;
	/* bwrap: the sandbox's pid 1 (bwrap's child), from --json-status-fd
	 * (0: not known yet, -1: bwrap ended without one). */
	pid_t bwrap_child;
	int bwrap_pidfd; /* a pidfd on it, or -1 */
	char json[2048]; /* bwrap's JSON status lines (bounded) */
	size_t json_len;
	/*
	 * bwrap: the Landlock layer's report inside (landlock-run --pid-fd:
	 * its pid there, then how the run ended when the sandbox ended it),
	 * or -1; @bridge: ward-bridge runs between bwrap and it.
	 */
	int report_fd;
	char report[128];
	size_t report_len;
	bool bridge;
	/* ward itself ended the run (a timeout, a stop, a kill): a keeper
	 * that said nothing was not lost, it was killed on purpose. */
	bool ended_by_caller;
	/* Runner CUSTOM: the operator's failure signatures, copied here so
	 * the spawn outlives the confined description (NULL-terminated). */
	char *sigs[9];
	char sigbuf[1024];
	/*
	 * Descendant containment in force (WARD_CONTAIN_CGROUP, _SUBREAPER
	 * or 0). Cgroup: @cg_fd is the call's cgroup directory and
	 * @cg_name its name under the process's cgroup. Subreaper: @since is
	 * when the call began, in clock ticks since boot (the unit of
	 * /proc/PID/stat's starttime). @contained: the descendants were
	 * killed (the cgroup is still to be removed).
	 */
	unsigned contain;
	int cg_fd;
	char cg_name[64];
	unsigned long long since;
	bool contained;
};

/* How the loop drains and waits. */
struct ward_loop {
	struct ward_sink out, err;
	pthread_mutex_t *lock; /* held while touching sinks / reaping */
	int wake_fd; /* readable: stop waiting for stragglers; or -1 */
	unsigned long timeout_ms;
	unsigned kill_grace_ms;
};

/*
 * ward_spawn_start - spawn @c (confined by ward_provider_confine) under
 * @policy with @opts (already defaulted; never NULL). @capture: stdout and
 * stderr both go to pipes; otherwise stdout goes to the stream fd directly.
 * The caller has made the plan's side effects (ward_plan_prepare) first,
 * before the guard's snapshot.
 *
 * Returns 0 once the child has exec'd (or, for a wrapper runner, once the
 * wrapper has). A failure before exec is reported through a close-on-exec
 * status pipe and returned: WARD_ERUNNER ("landlock: …" for in-process
 * Landlock; "<runner>: cannot execute …" for a wrapper) or -errno for the
 * executor's own setup (e.g. chdir). Nothing is left behind on failure.
 * The caller must run ward_spawn_loop() (which reaps) after success, then
 * ward_spawn_close().
 */
int ward_spawn_start(struct ward_spawn *sp, const ward_confined *c,
		     const ward_policy *policy,
		     const struct ward_exec_options *opts, bool capture);

/*
 * ward_spawn_loop - drain the pipes into @loop's sinks, enforce the
 * timeout (SIGTERM to the group, SIGKILL after the grace), reap the child.
 * Returns when the child has exited and its pipes are closed (or, after it
 * exited, a short drain window passed: a background process that escaped
 * the wait keeps running but is no longer read). With containment in
 * force, the child's exit also kills every descendant it left.
 */
void ward_spawn_loop(struct ward_spawn *sp, const struct ward_loop *loop);

/*
 * Close every descriptor of @sp; reap (SIGKILL first) if not yet reaped;
 * kill what is left of the call's descendants when containment is in
 * force, and remove its cgroup.
 */
void ward_spawn_close(struct ward_spawn *sp);

/*
 * Send @sig to the whole call: the process group, or landlock-run's keeper
 * (SIGKILL becomes its kill-everything signal), and for bwrap also the
 * sandbox's own pid 1, so that a call killed before bwrap's child has
 * armed its parent-death signal still ends. The caller holds the lock
 * that guards @sp->reaped. Returns 0 or -errno.
 */
int ward_spawn_signal(struct ward_spawn *sp, int sig);

/*
 * ward_spawn_result - classify a finished run. Returns 0 and *out, or
 * WARD_ERUNNER (the confinement failed; the detail carries the runner's
 * fatal line) or -ENOMEM. @out_cap may be NULL (stream mode). With @take
 * the result takes the buffers' content (ward_capbuf_take) instead of a
 * copy: for a caller that frees them next.
 */
int ward_spawn_result(ward_result **out, const struct ward_spawn *sp,
		      struct ward_capbuf *out_cap, struct ward_capbuf *err_cap,
		      bool take);

/* Defaults for a NULL or partial options struct; WARD_EINVAL on a bad
 * version. */
int ward_exec_opts_check(struct ward_exec_options *dst,
			 const struct ward_exec_options *src);

/*
 * ward_exec_confined - ward_exec_run for an already confined command.
 * Tests use it to run a hand-made ward_confined (e.g. a Landlock plan with
 * a grant that cannot be opened).
 */
int ward_exec_confined(ward_result **out, const ward_confined *c,
		       const ward_policy *policy,
		       const struct ward_exec_options *opts);

/*
 * ward_task_start_confined - ward_task_start for an already confined
 * command (a plan's, see ward_confined_from_plan): nothing is planned again.
 * @c may be freed once this returns.
 */
int ward_task_start_confined(ward_task **out, const ward_confined *c,
			     const ward_policy *policy,
			     const struct ward_exec_options *opts);

struct ward_protect_guard;

/*
 * ward_exec_guard_report - after ward_spawn_close() (nothing of the run is
 * left): check the protected paths @guard snapshotted before the spawn,
 * put back what changed (protect.h), and append one "ward: …" line per
 * finding to @cap and @pending (when not NULL) and to @fd (when >= 0).
 * Frees @guard (NULL: nothing to do). Returns true when the guard could
 * not take everything the run left out of the workspace (the call fails).
 */
bool ward_exec_guard_report(struct ward_protect_guard *guard,
			    struct ward_capbuf *cap,
			    struct ward_capbuf *pending, int fd);
/* Mark a task's result as one whose guard failed (task.c). */
void ward_result_set_guard_failed(ward_result *r, bool failed);

#endif
