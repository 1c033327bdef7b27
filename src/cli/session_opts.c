/*
 * ward — the --session / --escalate options `ward run` and `ward fs`
 * share (see session_opts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/call.h"
#include "ward/escalation.h"
#include "ward/render.h"
#include "ward/session.h"

#include "cli.h"
#include "policy_opts.h"
#include "session_opts.h"

char *cli_session_find(const char *id, const char *usage)
{
	char *full = NULL;
	int err = ward_session_find(&full, NULL, id);

	if (err == WARD_EINVAL || err == -ENOENT)
		die_usage(usage, "%s", ward_error_last());
	if (err)
		die(CLI_EXIT_WARD, "session %s: %s", id, ward_error_last());
	return full;
}

ward_session *cli_session_open(const char *id, const char *usage)
{
	ward_session *s = NULL;
	char *full = cli_session_find(id, usage);
	int err = ward_session_open(&s, NULL, full);

	if (err == WARD_EINVAL || err == -ENOENT)
		die_usage(usage, "%s", ward_error_last());
	if (err)
		die(CLI_EXIT_WARD, "session %s: %s", full, ward_error_last());
	free(full);
	return s;
}

bool cli_session_option(struct cli_session *cs, int opt, const char *arg,
			const char *usage)
{
	switch (opt) {
	case 'm':
		cs->mode_given = true;
		return false;
	case 'w':
		cs->workspace_given = true;
		return false;
	case CLI_OPT_SESSION:
		if (!ward_session_id_valid(arg))
			die_usage(usage,
				  "invalid session id '%s' (letters, digits "
				  "and '-')",
				  arg);
		cs->id = arg;
		return true;
	case CLI_OPT_ESCALATE:
		if (ward_mode_parse(&cs->requested, arg) != 0)
			die_usage(usage,
				  "invalid mode '%s' for --escalate (valid: "
				  "workspace-write, danger-full-access)",
				  arg);
		cs->escalate = true;
		return true;
	case CLI_OPT_JUSTIFICATION:
		cs->justification = arg;
		return true;
	}
	return false;
}

void cli_session_begin(struct cli_session *cs, struct cli_policy_opts *po,
		       const char *usage, bool json)
{
	const char *blank = cs->justification;

	while (blank && (*blank == ' ' || *blank == '\t' || *blank == '\n'))
		blank++;
	if (cs->justification && !cs->escalate)
		die_usage(usage, "option '--justification' needs '--escalate'");
	if (cs->escalate && (!blank || !*blank))
		die_usage(usage,
			  "option '--escalate' needs '--justification TEXT' "
			  "(why the wider mode is needed)");
	if (!cs->id && !cs->escalate)
		return;
	if (cs->id && cs->mode_given)
		die_usage(usage,
			  "option '--mode' cannot be combined with "
			  "'--session': the session decides the mode (change "
			  "it with 'ward session mode', or ask for one call "
			  "with '--escalate')");
	if (cs->id && cs->workspace_given)
		die_usage(usage,
			  "option '--workspace' cannot be combined with "
			  "'--session': the session's cwd is the workspace");
	(void)json;
	if (cs->id) {
		cs->session = cli_session_open(cs->id, usage);
		/* The session's cwd is the workspace root (and decides which
		 * project file applies); without one, ward.yml's. The mode
		 * is the call's business (ward_call_new folds the session's
		 * knobs against ward.yml's default). */
		if (ward_session_cwd(cs->session))
			po->workspace = ward_session_cwd(cs->session);
	}
}

/* The code of a --json error for an escalation that was not granted. */
static const char *refusal_code(enum ward_escalation_verdict v)
{
	switch (v) {
	case WARD_ESCALATION_NOT_WIDER:
		return CLI_ERR("ESCALATION_NOT_WIDER");
	case WARD_ESCALATION_NO_SERVICE:
		return CLI_ERR("ESCALATION_NO_APPROVAL_SERVICE");
	case WARD_ESCALATION_POLICY_NEVER:
		return CLI_ERR("ESCALATION_POLICY_NEVER");
	case WARD_ESCALATION_REJECTED:
		return CLI_ERR("ESCALATION_REJECTED");
	case WARD_ESCALATION_CANCELLED:
		return CLI_ERR("ESCALATION_CANCELLED");
	case WARD_ESCALATION_UNAVAILABLE:
		return CLI_ERR("ESCALATION_UNAVAILABLE");
	case WARD_ESCALATION_GRANTED:
		break;
	}
	return CLI_ERR("WARD_FAILED");
}

/* An escalation that was not granted: its text (or JSON), exit 122. */
noreturn void cli_call_refused(const ward_call *call, bool json)
{
	char *text = NULL;

	if (ward_call_render_refusal(&text, call) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (json) {
		cli_json_error(refusal_code(ward_call_verdict(call)), text);
	} else {
		fflush(stdout);
		fprintf(stderr, "%s\n", text);
	}
	free(text);
	exit(CLI_EXIT_NOT_APPROVED);
}

void cli_session_end(struct cli_session *cs)
{
	ward_session_free(cs->session);
	cs->session = NULL;
}
