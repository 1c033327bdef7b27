/*
 * ward — the session and escalation options `ward run` and `ward fs` share
 * (session_opts.c; `ward session` itself is cmd_session.c, the terminal
 * prompt prompt.c):
 *
 *   --session ID                the call's policy comes from the session
 *                               and the call is recorded in its log
 *   --escalate MODE --justification TEXT
 *                               ask the person on the controlling terminal
 *                               to let this one call run under MODE
 */
#ifndef WARD_CLI_SESSION_OPTS_H
#define WARD_CLI_SESSION_OPTS_H

#include <stdbool.h>

#include "ward/call.h"
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
#define CLI_OPTION_SESSION                                                    \
	{"session", CLI_OPT_SESSION, "ID", CLI_VALUE_SESSION, NULL}
#define CLI_SESSION_OPTIONS                                                   \
	CLI_OPTION_SESSION,                                                   \
	{"escalate", CLI_OPT_ESCALATE, "MODE", CLI_VALUE_MODE, NULL},         \
	{"justification", CLI_OPT_JUSTIFICATION, "TEXT", CLI_VALUE_TEXT, NULL}
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

	/* Set by cli_session_begin(). */
	ward_session *session;
};

/*
 * cli_session_find - the full id of the session @id names (the id, or a
 * unique prefix of one: ward_session_find); dies with 2 (a bad id, no
 * such session, an ambiguous prefix; @usage is shown) or 125. The caller
 * frees the result.
 */
char *cli_session_find(const char *id, const char *usage);

/*
 * cli_session_open - open session @id (or a unique prefix of one); dies
 * with 2 (a bad id, no such session, an ambiguous prefix; @usage is
 * shown) or 125 (it cannot be read).
 */
ward_session *cli_session_open(const char *id, const char *usage);

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
 * session and set @po's workspace to the session's cwd (the call folds the
 * session's mode itself: ward_call_new). Without --session and --escalate
 * it does nothing. Dies with 2 for a bad command line or an unknown
 * session, 125 when the session cannot be read.
 */
void cli_session_begin(struct cli_session *cs, struct cli_policy_opts *po,
		       const char *usage, bool json);

/*
 * cli_call_refused - an escalation the call asked for was not granted:
 * print its text as the last line on stderr (or a JSON error with @json)
 * and exit CLI_EXIT_NOT_APPROVED. The call has recorded it already.
 */
noreturn void cli_call_refused(const ward_call *call, bool json);

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
