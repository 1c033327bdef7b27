/*
 * ward — the confined executor: spawn, capture (bounded), timeout, process
 * group, background tasks; then classify.
 *
 * Every confined child: a new session (setsid), only fds 0–2 inherited, no
 * capabilities, no_new_privs, dies with its parent (PR_SET_PDEATHSIG),
 * WARD_SANDBOX=<runner> in its environment. When the chosen runner is
 * Landlock the child confines itself between fork and exec with the same
 * code as landlock-run (the ruleset is built before the fork); a
 * close-on-exec status pipe tells the parent whether exec happened.
 */
#ifndef WARD_EXEC_H
#define WARD_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "classify.h"
#include "common.h"
#include "policy.h"
#include "provider.h"
#include "runner.h"

typedef struct ward_result ward_result;
typedef struct ward_task ward_task;

#define WARD_EXEC_OPTIONS_VERSION 1

struct ward_exec_options {
	unsigned version;
	/** stdin for the child; -1: /dev/null. Not closed by libward. */
	int stdin_fd;
	/**
	 * Capture mode when > 0: stdout and stderr are captured, each keeping
	 * at most this many bytes (the first half and the last half; bytes in
	 * between are dropped and counted). 0: stream — stdout_fd and
	 * stderr_fd receive the output live (stderr is still read through a
	 * pipe to classify it).
	 */
	size_t capture_limit;
	int stdout_fd; /* stream target; -1: 1 */
	int stderr_fd; /* stream target; -1: 2 */
	/** Timeout in milliseconds; 0: none. On expiry the whole process
	 * group gets SIGTERM, then SIGKILL after kill_grace_ms. */
	unsigned long timeout_ms;
	unsigned kill_grace_ms; /* 0: 2000 */
	/** Working directory of the child; NULL: the workspace root. */
	const char *cwd;
	/** Environment (NULL: environ). For a confined run WARD_SANDBOX is
	 * set (or replaced) to the runner's name; a danger-full-access run
	 * is not confined and gets the environment as given. */
	char *const *envp;
	/**
	 * Use the wrapped launcher argv (landlock-run) instead of confining
	 * in-process when the runner is Landlock.
	 */
	bool landlock_via_launcher;
};

#define WARD_EXEC_OPTIONS_INIT                                                 \
	{                                                                      \
		WARD_EXEC_OPTIONS_VERSION, -1, 0, -1, -1, 0, 0, NULL, NULL,    \
		    false                                                      \
	}

/**
 * ward_exec_run - confine and run @argv (argv[0] looked up in PATH),
 * wait for it, classify the run.
 *
 * Returns 0 when the command ran (whatever its exit status; see
 * ward_result_*), WARD_EUNAVAILABLE when no runner can confine, and
 * WARD_ERUNNER when the confinement failed (the command did not run; the
 * detail carries the runner's fatal line). In both failure cases nothing
 * ran unconfined. The caller frees *out with ward_result_free().
 */
WARD_EXTERN int ward_exec_run(ward_result **out, ward_provider *provider,
			      const ward_policy *policy, char *const argv[],
			      const struct ward_exec_options *opts);

/** ward_exec_shell - ward_exec_run of {"bash", "-c", @command}. */
WARD_EXTERN int ward_exec_shell(ward_result **out, ward_provider *provider,
				const ward_policy *policy, const char *command,
				const struct ward_exec_options *opts);

WARD_EXTERN void ward_result_free(ward_result *result);
/** Exit status, or -1 when killed by a signal. */
WARD_EXTERN int ward_result_exit_code(const ward_result *r);
/** The terminating signal, or 0. */
WARD_EXTERN int ward_result_signal(const ward_result *r);
WARD_EXTERN bool ward_result_timed_out(const ward_result *r);
WARD_EXTERN bool ward_result_denied(const ward_result *r);
WARD_EXTERN enum ward_mode ward_result_mode(const ward_result *r);
WARD_EXTERN enum ward_runner ward_result_runner(const ward_result *r);
WARD_EXTERN enum ward_enforcement ward_result_enforcement(const ward_result *r);
/** Captured stdout (capture mode; NULL otherwise); owned by @r. */
WARD_EXTERN const char *ward_result_stdout(const ward_result *r, size_t *len);
/** Captured stderr; owned by @r. In stream mode: the bounded tail kept
 * for classification. */
WARD_EXTERN const char *ward_result_stderr(const ward_result *r, size_t *len);
/** Bytes dropped from the middle of stdout / stderr. */
WARD_EXTERN size_t ward_result_stdout_dropped(const ward_result *r);
WARD_EXTERN size_t ward_result_stderr_dropped(const ward_result *r);

/**
 * Background tasks. A task keeps its own mode, runner and enforcement
 * facts; its output is captured (bounded, as capture_limit; 0 means 1 MiB)
 * by a reader thread, so a task never blocks on a full pipe.
 *
 * ward_task_start returns the same errors as ward_exec_run.
 */
WARD_EXTERN int ward_task_start(ward_task **out, ward_provider *provider,
				const ward_policy *policy, char *const argv[],
				const struct ward_exec_options *opts);
/**
 * ward_task_read - the output produced so far and not yet read (each call
 * returns only what is new). *out_stdout and *out_stderr are malloc'd, owned by
 * the caller (free()), NUL-terminated; lengths in *out_*_len.
 */
WARD_EXTERN int ward_task_read(char **out_stdout, size_t *out_stdout_len,
			       char **out_stderr, size_t *out_stderr_len,
			       ward_task *task);
/**
 * ward_task_wait - wait up to @timeout_ms (0: forever) for the task.
 * Returns 0 and a result (the caller frees it) when it ended, -ETIMEDOUT
 * when it is still running, and WARD_ERUNNER when it turns out the runner
 * itself failed (bwrap's failures are known only once it has exited: the
 * command never ran). The result holds the whole (bounded) output.
 */
WARD_EXTERN int ward_task_wait(ward_result **out, ward_task *task,
			       unsigned long timeout_ms);
/** ward_task_kill - signal the task's whole process group. */
WARD_EXTERN int ward_task_kill(ward_task *task, int sig);
WARD_EXTERN pid_t ward_task_pid(const ward_task *task);
WARD_EXTERN enum ward_mode ward_task_mode(const ward_task *task);
WARD_EXTERN enum ward_runner ward_task_runner(const ward_task *task);
WARD_EXTERN enum ward_enforcement ward_task_enforcement(const ward_task *task);
/** ward_task_free - kill (SIGKILL) if still running, reap, free. NULL ok. */
WARD_EXTERN void ward_task_free(ward_task *task);

#endif
