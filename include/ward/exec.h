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
 *
 * Descendants. PR_SET_PDEATHSIG covers the child itself, and the timeout
 * signals its process group; a descendant that leaves the group
 * (setsid) escapes both. Under bwrap the pid namespace ends with the
 * command, so nothing outlives the call. Landlock runs and unconfined
 * (danger-full-access) runs go through landlock-run, whose keeper ends
 * every descendant when the command ends. `contain` (below) adds
 * containment in the calling process on top (a custom runner has no
 * other).
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

WARD_BEGIN_DECL

typedef struct ward_result ward_result;
typedef struct ward_task ward_task;

#define WARD_EXEC_OPTIONS_VERSION 3

/**
 * How a call's descendants are contained (ward_exec_options.contain, a set
 * of flags), on top of the runner's own (bwrap's pid namespace,
 * landlock-run's keeper, which also keeps an unconfined danger-full-access
 * run). It applies to every runner but seatbelt.
 */
enum ward_contain {
	/** Version 1 behaviour: the process group and PR_SET_PDEATHSIG. */
	WARD_CONTAIN_NONE = 0,
	/**
	 * A cgroup v2 per call, created under the caller's own cgroup when
	 * the caller may (root, or a delegated cgroup) and the kernel has
	 * clone3(CLONE_INTO_CGROUP) and cgroup.kill (Linux 5.14). The child
	 * is born in it, nothing confined can leave it, and when the call
	 * ends it is killed as a whole (cgroup.kill) and removed. Per call:
	 * safe in a process that runs several calls at once. Cost: the
	 * child is started fork-like (the caller's page tables are copied,
	 * instead of the shared-memory vfork-style start), plus a mkdir and
	 * an rmdir: nothing measurable for `ward run`, ~0.25 ms for a small
	 * library caller, but it grows with the caller's memory (~13 ms per
	 * spawn for a caller with 1 GiB resident). When it cannot be had,
	 * it is not tried again in this process. A cgroup left by a process
	 * killed during a call (it cannot clean up) is killed and removed
	 * by the next process of the same pid namespace that creates one.
	 */
	WARD_CONTAIN_CGROUP = 1 << 0,
	/**
	 * Process-wide fallback: the calling process becomes a child
	 * subreaper (PR_SET_CHILD_SUBREAPER, for the rest of its life), so
	 * orphans of a call become its children; when the call ends, every
	 * child of the process started since the call began is killed and
	 * reaped (repeatedly, as their own children are reparented in turn;
	 * bounded to 2 s). ONLY for a process that runs one call at a time
	 * and starts no other processes while a call runs (`ward run`): it
	 * would kill another call's processes, and orphans of the caller's
	 * other children become the caller's to reap. Costs nothing when the
	 * command leaves nothing behind (one waitid()).
	 */
	WARD_CONTAIN_SUBREAPER = 1 << 1,
};

/**
 * What a background task keeps of its output (ward_exec_options.
 * streams; ward_exec_run ignores it).
 */
enum ward_task_streams {
	/** stdout and stderr captured apart (version 2 behaviour). */
	WARD_TASK_SEPARATE = 0,
	/**
	 * As a terminal shows them: what ward_task_read_output() returns
	 * holds both streams in one (in @out; @err stays empty), in the
	 * order they were read. The result (ward_task_wait) still has them
	 * apart, and stderr is still what the run is classified by.
	 */
	WARD_TASK_MERGED,
	/**
	 * As ward_exec_run's stream mode: stdout is stdout_fd itself and
	 * stderr is copied to stderr_fd as it comes (a bounded tail is kept
	 * to classify the run). For a long-lived peer that speaks a
	 * protocol on its stdio (`ward acp`'s agent); ward_task_read_output
	 * returns nothing.
	 */
	WARD_TASK_STREAMED,
};

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
	 * group gets SIGTERM, then SIGKILL after kill_grace_ms (and, with
	 * `contain`, every other descendant once the command is gone). */
	unsigned long timeout_ms;
	unsigned kill_grace_ms; /* 0: 2000 */
	/** Working directory of the child; NULL: the workspace root. */
	const char *cwd;
	/** Environment (NULL: environ). For a confined run WARD_SANDBOX is
	 * set (or replaced) to the runner's name; a danger-full-access run
	 * is not confined and gets the environment as given. */
	char *const *envp;
	/**
	 * Ignored: every Landlock run goes through the launcher
	 * (landlock-run), which stays as the command's keeper. Kept so that
	 * callers setting it still compile.
	 */
	bool landlock_via_launcher;
	/* --- version 2 --- */
	/**
	 * WARD_CONTAIN_* flags: kill the call's descendants when the call
	 * ends (the command exited, or was killed by the timeout). With
	 * both flags, the cgroup when it can be had, else the subreaper.
	 * 0 (the default): none. ward_result_contain() says what was used.
	 */
	unsigned contain;
	/* --- version 3 --- */
	/** What a task keeps of its output (enum ward_task_streams). */
	enum ward_task_streams streams;
};

#define WARD_EXEC_OPTIONS_INIT                                                 \
	{                                                                      \
		WARD_EXEC_OPTIONS_VERSION, -1, 0, -1, -1, 0, 0, NULL, NULL,    \
		    false, WARD_CONTAIN_NONE, WARD_TASK_SEPARATE               \
	}

/**
 * ward_exec_options_init - set @opts to the defaults of @version (1 to
 * WARD_EXEC_OPTIONS_VERSION; only the fields that version has are
 * written). Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_exec_options_init(struct ward_exec_options *opts,
				       unsigned version);

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
/** The pid of the process that confined itself (gone by now; for matching
 * audit records): under Landlock, the one landlock-run reports (the
 * command's, or its pid namespace's init), else the child's. */
WARD_EXTERN pid_t ward_result_pid(const ward_result *r);
/** Exit status, or -1 when killed by a signal. */
WARD_EXTERN int ward_result_exit_code(const ward_result *r);
/** The terminating signal, or 0. */
WARD_EXTERN int ward_result_signal(const ward_result *r);
WARD_EXTERN bool ward_result_timed_out(const ward_result *r);
WARD_EXTERN bool ward_result_denied(const ward_result *r);
/**
 * ward_result_sandbox_ended - why the sandbox itself ended the command
 * while it ran (its supervisor died, so the calls it judges were failing;
 * the network bridge died), as a sentence; NULL when it did not. The
 * command's output so far is in the result. Front ends report it as
 * ward's own failure (ward run: exit 125), never as the command's status.
 */
WARD_EXTERN const char *ward_result_sandbox_ended(const ward_result *r);
/**
 * Whether the guard could not take out of the workspace everything the
 * command left in a protected place (it was renamed beside itself, or
 * could not be moved at all; the stderr notes say which): the call failed,
 * whatever the command's own status. `ward run` exits 125 then.
 */
WARD_EXTERN bool ward_result_guard_failed(const ward_result *r);
/**
 * The network is the reason the command failed: its network was off and a
 * name lookup or connect was refused (ward_classify's network_denied).
 */
WARD_EXTERN bool ward_result_network_denied(const ward_result *r);
WARD_EXTERN enum ward_mode ward_result_mode(const ward_result *r);
WARD_EXTERN enum ward_runner ward_result_runner(const ward_result *r);
WARD_EXTERN enum ward_enforcement ward_result_enforcement(const ward_result *r);
/** Captured stdout (capture mode; NULL otherwise); owned by @r. */
WARD_EXTERN const char *ward_result_stdout(const ward_result *r, size_t *len);
/** Captured stderr; owned by @r. In stream mode: the bounded tail kept
 * for classification. */
WARD_EXTERN const char *ward_result_stderr(const ward_result *r, size_t *len);
/**
 * The containment that was in force for the run: WARD_CONTAIN_CGROUP,
 * WARD_CONTAIN_SUBREAPER or WARD_CONTAIN_NONE (not asked for, not
 * needed by the runner, or not available here).
 */
WARD_EXTERN enum ward_contain ward_result_contain(const ward_result *r);
/**
 * How many network accesses the command attempted that the sandbox
 * refused — a direct connect or send to an inet address with the network
 * off, or anywhere but the proxy under an allowlist — as the supervisor
 * counted them (the Landlock runner; 0 on other runners, whose refusals
 * the kernel answers unseen). The first one's address, as text, into
 * @addr (capacity @addr_len; may be NULL) and its port into *@port.
 */
WARD_EXTERN unsigned ward_result_network_refused(const ward_result *r,
						 char *addr, size_t addr_len,
						 unsigned *port);
/** Bytes dropped from the middle of stdout / stderr. */
WARD_EXTERN size_t ward_result_stdout_dropped(const ward_result *r);
WARD_EXTERN size_t ward_result_stderr_dropped(const ward_result *r);

/**
 * Background tasks. A task keeps its own mode, runner and enforcement
 * facts; its output is captured (bounded, as capture_limit; 0 means 1 MiB)
 * by a reader thread, so a task never blocks on a full pipe — apart, or
 * merged, or streamed as ward_exec_options.streams says.
 *
 * ward_task_start returns the same errors as ward_exec_run.
 */
WARD_EXTERN int ward_task_start(ward_task **out, ward_provider *provider,
				const ward_policy *policy, char *const argv[],
				const struct ward_exec_options *opts);
/**
 * ward_task_read - the output produced so far and not yet read (each call
 * returns only what is new). *out_stdout and *out_stderr are malloc'd, owned by
 * the caller (ward_free()), NUL-terminated; lengths in *out_*_len.
 */
WARD_EXTERN int ward_task_read(char **out_stdout, size_t *out_stdout_len,
			       char **out_stderr, size_t *out_stderr_len,
			       ward_task *task);
/**
 * What a task wrote since the last read (ward_task_read_output): each
 * stream as ward_task_read() returns it, and where its middle was dropped
 * when more came in between two reads than its bound keeps (the first
 * @out_head bytes of @out were written before the @out_dropped bytes that
 * are missing; likewise for stderr).
 */
struct ward_task_output {
	char *out; /* NUL-terminated; owned, freed by ward_task_output_clear */
	size_t out_len, out_head, out_dropped;
	char *err;
	size_t err_len, err_head, err_dropped;
};

/**
 * ward_task_read_output - ward_task_read() that also says what it dropped
 * from the middle of each stream since the last read. Release *out with
 * ward_task_output_clear(). Returns 0, WARD_EINVAL or -ENOMEM.
 */
WARD_EXTERN int ward_task_read_output(struct ward_task_output *out,
				      ward_task *task);
/** ward_task_output_clear - free the buffers of @o and zero it. NULL ok. */
WARD_EXTERN void ward_task_output_clear(struct ward_task_output *o);
/**
 * ward_task_bytes - the bytes the task has written to stdout and stderr
 * so far (all of them, whether kept, read or dropped). Either pointer may
 * be NULL. For progress reports.
 */
WARD_EXTERN void ward_task_bytes(ward_task *task, unsigned long long *out,
				 unsigned long long *err);
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

WARD_END_DECL

#endif
