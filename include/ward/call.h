/*
 * ward — one call: the whole per-call pipeline, in the library.
 *
 * Every front end (`ward run`, `ward fs`, `ward mcp`, a harness embedding
 * libward) runs a command, a background task or a file operation through a
 * call object, so every one gets the same guarantees:
 *
 *   1. resolve    the call's policy: the mode is the session's (its last
 *                 `sandbox/mode` event, read incrementally) or the
 *                 configuration's; the workspace is the session's cwd or
 *                 the configured one; the access rules and git protection
 *                 come from the configuration; a policy under which the
 *                 command could write the session store is refused;
 *   2. plan       once (plan.h): runner, roots, rules, warnings, argv;
 *   3. record     `call/start` in the session's log before anything runs —
 *                 a call that cannot be recorded does not run;
 *   4. authorize  an escalation (a strictly wider mode for this call only,
 *                 approved by a person through the approval callback),
 *                 then check and plan the granted policy again;
 *   5. run        the command (foreground or as a task) or the file
 *                 operation under the plan, with an environment scrubbed
 *                 of secrets (the configuration's `env` policy, env.h);
 *   6. record     `call/result` (a task's when it is seen to end);
 *   7. render     the model-facing text (render.h), by the call's facts.
 *
 * Without a session steps 3 and 6 record nothing; without an escalation
 * request step 4 asks nobody.
 *
 * Thread safety: a call is used by one thread at a time. Many calls may
 * share one configuration, provider and session at the same time (each of
 * those is thread-safe; see docs/THREADING.md).
 */
#ifndef WARD_CALL_H
#define WARD_CALL_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "config.h"
#include "denial.h"
#include "escalation.h"
#include "exec.h"
#include "fsfence.h"
#include "network.h"
#include "plan.h"
#include "policy.h"
#include "provider.h"
#include "render.h"
#include "session.h"

WARD_BEGIN_DECL

typedef struct ward_call ward_call;

/** Why a call was stopped before it could end on its own. */
enum ward_call_stop {
	WARD_STOP_NONE = 0,
	WARD_STOP_CANCELLED, /* whoever asked for the call withdrew it */
	WARD_STOP_SHUTDOWN,  /* the front end is shutting down */
};

#define WARD_CALL_OPTIONS_VERSION 2

/** What one call is. Strings are copied by ward_call_new(). */
struct ward_call_options {
	unsigned version;
	/** The loaded configuration (required; borrowed, must outlive the
	 * call). With a session whose header has a cwd, it must have been
	 * loaded for that workspace. */
	const ward_config *config;
	/** The runner chain (required; borrowed; may be shared). */
	ward_provider *provider;
	/** The session to resolve the mode from and record in; NULL: none
	 * (borrowed; may be shared). */
	ward_session *session;
	/** A command or a file operation. */
	enum ward_subject subject;
	enum ward_surface surface;
	/** The tool name recorded in the log ("run", "bash", "fs",
	 * "write_file", …); NULL: "run" or "fs" by the subject. */
	const char *tool;
	/** The command (WARD_SUBJECT_COMMAND), NULL-terminated. */
	char *const *argv;
	/** The file operation's name ("read", "write", …) and the paths it
	 * names as given (WARD_SUBJECT_OPERATION). */
	const char *operation;
	char *const *paths;
	/** Working directory: NULL is the workspace root; a relative path is
	 * taken from the workspace root; it must lie inside the workspace. */
	const char *cwd;
	/** What an approval prompt shows; NULL: derived from the command,
	 * or from the operation and its paths, each with what it resolves
	 * to as the operation will resolve it ("write notes.txt (->
	 * /etc/x)"). A file operation's own summary gets the resolved paths
	 * appended. After a grant, a path that resolves elsewhere than it
	 * did refuses the call. */
	const char *summary;
	/** Ask to run this one call under a wider mode (with a reason). */
	bool escalate;
	enum ward_mode escalate_to;
	const char *justification;
	/** The approval service; NULL: there is none (no escalation can be
	 * granted, and no denial offers one). */
	ward_approval_fn approve;
	void *approve_ctx;
	/* --- version 2 --- */
	/** ward's network proxy for calls whose network is an allowlist
	 * (borrowed; may be shared by many calls: `ward mcp` keeps one).
	 * NULL: such a call starts its own for its duration. */
	ward_netproxy *netproxy;
	/** Ask to run this one call with a wider network instead of a
	 * wider mode (one or the other): @network_host added to its
	 * allowlist, or, with @network_host NULL, network on; with
	 * @justification, approved like a mode (escalation.h). */
	bool escalate_network;
	const char *network_host;
};

#define WARD_CALL_OPTIONS_INIT                                                 \
	{                                                                      \
		WARD_CALL_OPTIONS_VERSION, NULL, NULL, NULL,                   \
		    WARD_SUBJECT_COMMAND, WARD_SURFACE_API, NULL, NULL, NULL,  \
		    NULL, NULL, NULL, false, WARD_MODE_READ_ONLY, NULL, NULL,  \
		    NULL, NULL, false, NULL                                    \
	}

/**
 * ward_call_options_init - set @opts to the defaults of @version (which
 * must be WARD_CALL_OPTIONS_VERSION). Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_call_options_init(struct ward_call_options *opts,
				       unsigned version);

/**
 * ward_call_new - resolve and plan one call (steps 1 and 2). Nothing is
 * recorded and nothing runs yet.
 *
 * A call whose command cannot be confined (no usable runner, a broken
 * runner, a rule the runner would have to drop) is still made: running it
 * records that it did not run and returns the reason
 * (ward_call_plan_error()). Returns 0, WARD_EINVAL (bad options: the
 * detail names the field; a working directory outside the workspace; a
 * policy under which the command could write the session store), or the
 * error of reading the session. The caller frees *out with
 * ward_call_free().
 */
WARD_EXTERN int ward_call_new(ward_call **out,
			      const struct ward_call_options *opts);

/**
 * ward_call_free - free a call. A task it still runs is killed (SIGKILL),
 * its end recorded, and reaped. Accepts NULL.
 */
WARD_EXTERN void ward_call_free(ward_call *call);

/**
 * ward_call_begin - steps 3 and 4: record `call/start`, then, when an
 * escalation was asked for, put it to the approval service. Returns 0 when
 * the call may run (under the granted mode after an escalation),
 * WARD_EREFUSED when the escalation was not granted (recorded; nothing
 * runs; ward_call_verdict() and ward_call_render_refusal() say why), or an
 * error (the call could not be recorded: nothing runs). Idempotent: a
 * second call returns the first's outcome. ward_call_exec(),
 * ward_call_start() and ward_call_fs_begin() call it when needed.
 */
WARD_EXTERN int ward_call_begin(ward_call *call);

/**
 * ward_call_exec - run the command in the foreground and wait for it
 * (steps 3–6). @opts as for ward_exec_run (NULL: defaults; its cwd, when
 * NULL, is the call's). Returns 0 with *out (the caller frees it with
 * ward_result_free()) when the command ran, whatever its status;
 * WARD_EREFUSED (escalation not granted); WARD_EUNAVAILABLE / WARD_ERUNNER
 * / WARD_EINVAL when it could not be confined (recorded as not run;
 * nothing ran unconfined); another error when it could not be started.
 */
WARD_EXTERN int ward_call_exec(ward_call *call, ward_result **out,
			       const struct ward_exec_options *opts);

/**
 * ward_call_start - start the command as a background task owned by the
 * call (steps 3–5). Errors as ward_call_exec(). Then ward_call_task() gives
 * the task to read and signal, and ward_call_wait() its end (step 6).
 */
WARD_EXTERN int ward_call_start(ward_call *call,
				const struct ward_exec_options *opts);

/** The call's task after ward_call_start(), or NULL. Owned by the call. */
WARD_EXTERN ward_task *ward_call_task(const ward_call *call);

/**
 * ward_call_wait - wait up to @timeout_ms (0: forever) for the call's task
 * to end. Returns 0 with *out (the caller frees it) when it ended, and
 * records its end the first time (after ward_call_stop, with the reason);
 * -ETIMEDOUT when it still runs; WARD_ERUNNER when the runner itself
 * failed (recorded as not run); WARD_ESTOPPED when it was stopped before
 * the command started.
 */
WARD_EXTERN int ward_call_wait(ward_call *call, ward_result **out,
			       unsigned long timeout_ms);

/**
 * ward_call_stop - stop the call for @why: a task it runs is killed
 * (SIGKILL to its process group; ward_call_wait() then returns its end
 * with ward_call_stopped() set, or WARD_ESTOPPED when it ended before the
 * command even started — never a runner failure), and a call not yet
 * started never starts (WARD_ESTOPPED, recorded as not run). The first
 * reason given is kept. A foreground ward_call_exec() already running is
 * not interrupted: use a task for a call that may be stopped.
 *
 * Unlike the rest of the API this may be called from another thread while
 * a thread uses the call (that is its purpose). Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_call_stop(ward_call *call, enum ward_call_stop why);

/** ward_call_stopped - why the call was stopped, or WARD_STOP_NONE. */
WARD_EXTERN enum ward_call_stop ward_call_stopped(const ward_call *call);

/**
 * ward_call_fs_begin - for a file operation: begin the call
 * (ward_call_begin), then return the policy the fence must apply (the
 * granted one after an escalation) in *out (owned by the call). The caller
 * runs the fs fence operation under it and reports how it ended with
 * ward_call_fs_end().
 */
WARD_EXTERN int ward_call_fs_begin(ward_call *call, const ward_policy **out);

/**
 * ward_call_fs_end - record how the file operation ended (@err: 0, or what
 * the fence returned; @denial when @err is WARD_EDENIED). Returns 0 or the
 * error of recording (the operation already happened).
 */
WARD_EXTERN int ward_call_fs_end(ward_call *call, int err,
				 const struct ward_fs_denial *denial);

/* --- facts ------------------------------------------------------------- */

/** The call's id in the session log (12 hex digits). Owned. */
WARD_EXTERN const char *ward_call_id(const ward_call *call);
/** The policy the call runs under (the granted one after an escalation). */
WARD_EXTERN const ward_policy *ward_call_policy(const ward_call *call);
/** The call's plan, or NULL when it could not be made. */
WARD_EXTERN const ward_plan *ward_call_plan(const ward_call *call);
/** Why the plan could not be made (0: it was); see ward_error_last. */
WARD_EXTERN int ward_call_plan_error(const ward_call *call);
/** ... and its detail ("" when there is none). Owned. */
WARD_EXTERN const char *ward_call_plan_detail(const ward_call *call);
/** The mode the call runs under, and where it came from. */
WARD_EXTERN enum ward_mode ward_call_mode(const ward_call *call);
WARD_EXTERN enum ward_knob_source ward_call_mode_source(const ward_call *call);
/** The approval policy in force for the call. */
WARD_EXTERN enum ward_approval_policy ward_call_approval(const ward_call *call);
/** The canonical working directory. Owned. */
WARD_EXTERN const char *ward_call_cwd(const ward_call *call);
/** Whether an escalation was granted (the call runs under a wider mode). */
WARD_EXTERN bool ward_call_escalated(const ward_call *call);
/** The escalation's verdict (after ward_call_begin with escalate). */
WARD_EXTERN enum ward_escalation_verdict
ward_call_verdict(const ward_call *call);
/**
 * ward_call_warnings - what to tell a person before the call runs: every
 * way the runner falls short of the call's rules (ward_plan_warnings).
 * Owned by the call, NULL-terminated, possibly empty.
 */
WARD_EXTERN char *const *ward_call_warnings(const ward_call *call);
/**
 * ward_call_env_dropped - the names of the variables dropped from the
 * command's environment (ward_config_env_scrub: the configuration's `env`
 * policy applies to every command a call runs, whatever environment the
 * caller passed). Empty before the command was prepared. Owned by the
 * call, NULL-terminated.
 */
WARD_EXTERN char *const *ward_call_env_dropped(const ward_call *call);
/**
 * ward_call_hint_offered - whether a denial under @mode in this call
 * carries the escalation hint: an approval service exists, the approval
 * policy is `ask`, a wider mode exists, and this call was not itself the
 * escalated retry.
 */
WARD_EXTERN bool ward_call_hint_offered(const ward_call *call,
					enum ward_mode mode);

/* --- the network ----------------------------------------------------------- */

/** The network the call runs under (the granted one after an escalation),
 * and where it came from (the session's knob, or the configuration). */
WARD_EXTERN enum ward_network ward_call_network(const ward_call *call);
WARD_EXTERN enum ward_knob_source
ward_call_network_source(const ward_call *call);
/**
 * The call's connections through ward's proxy (an allowlist only), known
 * once the command ended: each also recorded in the session's log as a
 * `network/connection` event. Strings are owned by the call.
 */
WARD_EXTERN size_t ward_call_net_event_count(const ward_call *call);
WARD_EXTERN int ward_call_net_event(const ward_call *call, size_t i,
				    struct ward_net_event *out);
/**
 * ward_call_render_network - what the call's network refused, the lines
 * joined by newlines (render.c), "" when nothing: one line per host the
 * proxy refused, "[sandbox: network access to <host> denied]", or could
 * not resolve (ward_render_network_unresolved), then the escalation hint
 * when offered; and, when the network was off and a lookup or connect was
 * refused (ward_call_network_off_denied), "[sandbox: network access
 * denied: the network is off under <mode> mode]" with what can be done on
 * the call's surface (ward_render_network_off). Front ends append it to
 * the command's stderr (or the tool's text). The caller frees *out.
 */
WARD_EXTERN int ward_call_render_network(char **out, const ward_call *call);
/**
 * ward_call_network_hint_offered - whether the call's network markers
 * carry the network escalation hint (ward_render_network_hint): the proxy
 * refused a host or the network was off and refused the command, an
 * approval service exists, the policy is `ask`, and this call was not
 * itself an escalated retry.
 */
WARD_EXTERN bool ward_call_network_hint_offered(const ward_call *call);
/**
 * ward_call_network_off_denied - whether the command failed because its
 * network was off (ward_result_network_denied). Known once the call ended.
 */
WARD_EXTERN bool ward_call_network_off_denied(const ward_call *call);

/* --- the denial report ----------------------------------------------------- */

/**
 * ward_call_denied - whether the sandbox refused a file access of the call:
 * the runner's denial signature matched, the fence refused the operation,
 * or the denial report (below) found an entry (a `--` rule under bwrap
 * surfaces as "No such file or directory": no signature, but a denial).
 * Known once the call ended (ward_call_exec, ward_call_wait,
 * ward_call_fs_end).
 */
WARD_EXTERN bool ward_call_denied(const ward_call *call);
/**
 * The denial report (denial.h): every refused access the call could tell,
 * exact (the fence, the kernel's audit records) or derived (the command's
 * error output judged against the plan). ward_call_denial() returns entry
 * @i (owned by the call) or NULL; at most WARD's bound are kept, the rest
 * counted by ward_call_denials_omitted().
 */
WARD_EXTERN size_t ward_call_denial_count(const ward_call *call);
WARD_EXTERN const struct ward_denial *ward_call_denial(const ward_call *call,
						       size_t i);
WARD_EXTERN size_t ward_call_denials_omitted(const ward_call *call);
/**
 * ward_call_render_denial - the model-facing denial text for the call's
 * surface (ward_render_denials): the marker, what was refused by which rule
 * or mode, then the hint when escalation is offered, or how a person can
 * widen the session's mode. The caller frees *out with ward_free().
 */
WARD_EXTERN int ward_call_render_denial(char **out, const ward_call *call);
/**
 * ward_call_render_explain - the denial report for a person
 * (ward_render_explain). The caller frees *out with ward_free().
 */
WARD_EXTERN int ward_call_render_explain(char **out, const ward_call *call);

/* --- texts ------------------------------------------------------------- */

/**
 * ward_call_render_refusal - the text of an escalation that was not
 * granted (render.h's verdict texts). The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_call_render_refusal(char **out, const ward_call *call);
/**
 * ward_call_render_not_run - the text of a call that could not be
 * confined: the sandbox-unavailable text with the reason. The caller
 * frees *out.
 */
WARD_EXTERN int ward_call_render_not_run(char **out, const ward_call *call);

WARD_END_DECL

#endif
