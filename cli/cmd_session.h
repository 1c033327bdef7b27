/*
 * ward session — sessions from the command line (see man/ward-session.1),
 * and the session/escalation options `ward run` and `ward fs` share:
 *
 *   --session ID                the call's policy comes from the session
 *                               and the call is recorded in its log
 *   --escalate MODE --justification TEXT
 *                               ask the person on the controlling terminal
 *                               to let this one call run under MODE
 */
#ifndef WARD_CLI_CMD_SESSION_H
#define WARD_CLI_CMD_SESSION_H

#include <stdbool.h>

#include "ward/escalation.h"
#include "ward/presets.h"
#include "ward/session.h"

#include "cli.h"

/*
 * An escalation was not granted (not wider, policy never, rejected,
 * cancelled, approval unavailable): nothing ran. `ward run` and `ward fs`
 * exit with it; the model-facing text is the last line on stderr.
 */
#define CLI_EXIT_NOT_APPROVED 122

/* Long-only option values of the shared options. */
enum cli_session_long_opt {
	CLI_OPT_SESSION = 400,
	CLI_OPT_ESCALATE,
	CLI_OPT_JUSTIFICATION,
};

/* clang-format off */
#define CLI_SESSION_LONGOPTS                                                  \
	{"session", required_argument, NULL, CLI_OPT_SESSION},                \
	{"escalate", required_argument, NULL, CLI_OPT_ESCALATE},              \
	{"justification", required_argument, NULL, CLI_OPT_JUSTIFICATION}
/* clang-format on */

/* The state of one `ward run` / `ward fs` call with these options. */
struct cli_session {
	/* From the command line. */
	const char *id;		   /* --session, or NULL */
	bool escalate;		   /* --escalate given */
	enum ward_mode requested;  /* --escalate MODE */
	const char *justification; /* --justification */
	bool mode_given;	   /* -m/--mode seen */
	bool workspace_given;	   /* -w/--workspace seen */
	enum ward_subject subject; /* command (run) or operation (fs) */

	/* Set by cli_session_begin() (defaults.root is not kept). */
	ward_session *session;
	struct ward_session_defaults defaults;
	enum ward_approval_policy approval;
	enum ward_mode base_mode;
	enum ward_knob_source mode_source;
	char call_id[16];
	bool escalated; /* the call runs under a granted mode */
};

/* `ward session SUBCOMMAND …`; argv[0] is "session". */
int cmd_session(int argc, char **argv);

/*
 * cli_session_option - handle --session, --escalate and --justification,
 * and note -m/-w (returning false for them, so the policy options still
 * see them). Returns true when @opt was one of the three.
 */
bool cli_session_option(struct cli_session *cs, int opt, const char *arg,
			const char *usage);

/*
 * cli_session_begin - after option parsing, before cli_setup_build():
 * check the combination (--mode/--workspace cannot be combined with
 * --session; --escalate and --justification go together), open the
 * session, read ward.yml's defaults (mode, approval policy) as the call
 * will see them, and set @po's workspace to the session's cwd and its mode
 * (as the flag layer) to the session's: its last `sandbox/mode` event,
 * else the configured default. Without --session and --escalate it does
 * nothing. Dies with 2 for a bad command line or an unknown session, 125
 * when the session or ward.yml cannot be read (as JSON with @json).
 */
void cli_session_begin(struct cli_session *cs, struct cli_policy_opts *po,
		       const char *usage, bool json);

/*
 * cli_session_call - just before the call runs: attach the session to
 * *policy, refuse (125) a policy under which the command could write the
 * session store, record `call/start` (@call's call_id, mode and source are
 * filled in here), and, with --escalate, ask for approval on /dev/tty.
 * When the escalation is not granted the verdict's text is printed as the
 * last line on stderr (or a JSON error with @json), `call/result` records
 * that nothing ran, and the program exits CLI_EXIT_NOT_APPROVED. When it
 * is granted, *policy is replaced by the granted policy (this call only).
 * @summary is what the person is shown.
 */
void cli_session_call(struct cli_session *cs, ward_policy **policy,
		      struct ward_session_call *call, const char *summary,
		      bool json);

/*
 * cli_session_hint - whether a denial under @mode in this call gets the
 * escalation hint: only in a session whose approval policy is `ask`, when
 * a wider mode exists and this call was not itself an escalated retry.
 */
bool cli_session_hint(const struct cli_session *cs, enum ward_mode mode);

/*
 * cli_session_result - record `call/result` (@r's call_id is filled in).
 * A failure to record is a warning on stderr: the call already ran.
 */
void cli_session_result(struct cli_session *cs, struct ward_session_result *r);

/* cli_session_run_result - record how a `ward run` command ended. */
void cli_session_run_result(struct cli_session *cs, const ward_result *r);

/*
 * cli_session_fs_result - record how a `ward fs` operation ended: its exit
 * @status (0 done, 3 @denied by the fence, 1 failed).
 */
void cli_session_fs_result(struct cli_session *cs, enum ward_mode mode,
			   int status, bool denied);

/*
 * cli_session_not_run - record that the call did not run (@code: e.g.
 * "sandbox-unavailable", "exec-failed"; @detail may be NULL). For
 * "sandbox-unavailable" the recorded text is render's unavailable text.
 */
void cli_session_not_run(struct cli_session *cs, const char *code,
			 const char *detail);

/*
 * cli_session_summary - "@prefix ARG…" with each argument shell-quoted
 * (@prefix may be NULL), for the approval prompt. The caller frees it.
 */
char *cli_session_summary(const char *prefix, char *const *argv);

/* cli_session_end - release what begin acquired. */
void cli_session_end(struct cli_session *cs);

/*
 * cli_tty_approve - the approval service of the CLI: like sudo, it asks
 * the person on the controlling terminal (/dev/tty), whatever stdin and
 * stdout are, showing the command (or operation), directory, current and
 * requested mode and the justification with control characters escaped,
 * and reads y/N. No terminal: unavailable; Ctrl-C or end of input:
 * cancelled; anything but y/yes: rejected.
 */
enum ward_approval_outcome
cli_tty_approve(void *ctx, const struct ward_approval_request *req);

#endif
