/*
 * ward — every model-facing text, in one place. See include/ward/render.h.
 *
 * Exact strings from the design (shared/design.md, from the seeds): the
 * denial marker, the escalation hint and the rejected text. The other
 * outcome texts, the policy declaration and the tool descriptions are
 * ward's own wording; each outcome text is distinct and says that nothing
 * ran.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ward/render.h"

/* clang-format off */
#define MARKER(m) "[sandbox: file access denied under " m " mode]"
#define HINT(s)                                                               \
	"retry this exact " s " once with sandbox_permissions (the narrowest "\
	"wider mode that suffices) + justification; the approval prompt asks "\
	"the user"
/* clang-format on */

const char *ward_render_marker(enum ward_mode mode)
{
	switch (mode) {
	case WARD_MODE_READ_ONLY:
		return MARKER("read-only");
	case WARD_MODE_WORKSPACE_WRITE:
		return MARKER("workspace-write");
	case WARD_MODE_DANGER_FULL_ACCESS:
		return MARKER("danger-full-access");
	}
	return MARKER("unknown");
}

const char *ward_render_hint(enum ward_subject subject)
{
	return subject == WARD_SUBJECT_OPERATION ? HINT("operation")
						 : HINT("command");
}

int ward_render_denial(char **out, enum ward_mode mode,
		       enum ward_subject subject, bool escalation_offered)
{
	char *text = NULL;

	if (asprintf(&text, "%s%s%s", ward_render_marker(mode),
		     escalation_offered ? "\n" : "",
		     escalation_offered ? ward_render_hint(subject) : "") < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_verdict(char **out, enum ward_escalation_verdict verdict,
			enum ward_subject subject, enum ward_mode requested)
{
	const char *s = ward_subject_name(subject);
	const char *m = ward_mode_name(requested);
	char *text = NULL;
	int n;

	switch (verdict) {
	case WARD_ESCALATION_NOT_WIDER:
		n = asprintf(&text,
			     "sandbox_permissions \"%s\" is not wider than "
			     "the mode this %s already runs under; nothing "
			     "was run and nobody was asked; retry without "
			     "sandbox_permissions",
			     m, s);
		break;
	case WARD_ESCALATION_NO_SERVICE:
		n = asprintf(&text,
			     "escalation is not available: no approval "
			     "service is configured, so nobody can approve "
			     "running this %s under \"%s\"; nothing was run",
			     s, m);
		break;
	case WARD_ESCALATION_POLICY_NEVER:
		n = asprintf(&text,
			     "escalating this %s to \"%s\" was refused "
			     "automatically: the approval policy is "
			     "\"never\"; nothing was run",
			     s, m);
		break;
	case WARD_ESCALATION_REJECTED:
		/* Exact text from the design (seed 000). */
		n = asprintf(&text,
			     "the user rejected escalating this %s to \"%s\"",
			     s, m);
		break;
	case WARD_ESCALATION_CANCELLED:
		n = asprintf(&text,
			     "the approval request for escalating this %s to "
			     "\"%s\" was cancelled before the user decided; "
			     "nothing was run",
			     s, m);
		break;
	case WARD_ESCALATION_UNAVAILABLE:
		n = asprintf(&text,
			     "approval for escalating this %s to \"%s\" is "
			     "unavailable: nobody could be asked; nothing was "
			     "run",
			     s, m);
		break;
	default:
		return ward_err(WARD_EINVAL,
				"no text for escalation verdict %d",
				(int)verdict);
	}
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_unavailable(char **out, enum ward_subject subject,
			    const char *detail)
{
	char *text = NULL;
	bool has = detail && *detail;

	if (asprintf(&text,
		     "the sandbox is unavailable%s%s; ward is refusing to run "
		     "this %s unconfined",
		     has ? ": " : "", has ? detail : "",
		     ward_subject_name(subject)) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

const char *ward_render_policy(enum ward_approval_policy policy)
{
	if (policy != WARD_APPROVAL_NEVER)
		return "";
	return "Approval policy: never. Requests to run a command or file "
	       "operation with wider sandbox_permissions are refused "
	       "automatically, without asking the user; do not request "
	       "sandbox_permissions. When the sandbox denies something you "
	       "need, say what was denied and why you need it.";
}

/* clang-format off */
#define TRY_FIRST                                                             \
	"Just try what you need: do not avoid or refuse an action because "   \
	"it might be denied; the sandbox decides, not you.\n"
#define MARKER_MEANING(what, after)                                           \
	"When the sandbox refuses a file access, " after " the line\n"        \
	"[sandbox: file access denied under <mode> mode]\n"                   \
	"naming the mode in force. " what                                     \
	" Do not work around a denial (other paths, other tools, copying "    \
	"elsewhere, changing permissions).\n"
#define SANCTIONED(s)                                                         \
	"When a wider mode can be asked for, a retry hint follows the "       \
	"marker. The one sanctioned next step after a denial is to retry this exact " \
	s " once, right away, with sandbox_permissions set to the narrowest " \
	"wider mode that suffices (workspace-write before "                   \
	"danger-full-access) and a justification that says what was denied " \
	"and why the task needs it. The user sees the " s ", its directory, " \
	"the mode and the justification, and decides before anything runs; "  \
	"an approval covers that one retry only. If the escalation is "       \
	"rejected, cancelled or refused, nothing ran: do not ask again for "  \
	"this " s "; report what was denied and continue another way or "     \
	"ask the user."
#define NO_ESCALATION                                                         \
	"There is no way to widen the sandbox from here: report what was "    \
	"denied and why it is needed."
/* clang-format on */

static const char bash_escalation[] =
    "Run a shell command with bash -c under a file sandbox enforced by the "
    "kernel. Commands may read files anywhere; writes are allowed only "
    "where the sandbox permits.\n" TRY_FIRST MARKER_MEANING(
	"The command did run and the kernel refused that one operation; the "
	"exit code is the command's own.",
	"the output ends with") SANCTIONED("command");

static const char bash_plain[] =
    "Run a shell command with bash -c under a file sandbox enforced by the "
    "kernel. Commands may read files anywhere; writes are allowed only "
    "where the sandbox permits.\n" TRY_FIRST MARKER_MEANING(
	"The command did run and the kernel refused that one operation; the "
	"exit code is the command's own.",
	"the output ends with") NO_ESCALATION;

static const char files_escalation[] =
    "Read, write, edit, move, remove and list files through the same file "
    "sandbox as shell commands. Reads are allowed anywhere except where a "
    "rule forbids them; changes only where the sandbox permits.\n" TRY_FIRST
	MARKER_MEANING("Nothing was changed.", "the operation fails with")
	    SANCTIONED("operation");

static const char files_plain[] =
    "Read, write, edit, move, remove and list files through the same file "
    "sandbox as shell commands. Reads are allowed anywhere except where a "
    "rule forbids them; changes only where the sandbox permits.\n" TRY_FIRST
	MARKER_MEANING("Nothing was changed.", "the operation fails with")
	    NO_ESCALATION;

const char *ward_render_tool_description(enum ward_tool tool,
					 bool escalation_offered)
{
	if (tool == WARD_TOOL_FILES)
		return escalation_offered ? files_escalation : files_plain;
	return escalation_offered ? bash_escalation : bash_plain;
}

const char *ward_render_field_sandbox_permissions(enum ward_subject subject)
{
	if (subject == WARD_SUBJECT_OPERATION)
		return "Only when retrying an operation the sandbox just "
		       "denied: the narrowest wider mode that suffices "
		       "(workspace-write or danger-full-access). Requires a "
		       "justification; the user approves or rejects before "
		       "anything runs.";
	return "Only when retrying a command the sandbox just denied: the "
	       "narrowest wider mode that suffices (workspace-write or "
	       "danger-full-access). Requires a justification; the user "
	       "approves or rejects before anything runs.";
}

const char *ward_render_field_justification(void)
{
	return "Why the retry needs the wider mode: what was denied and what "
	       "the task needs it for, in one or two sentences the user can "
	       "judge.";
}
