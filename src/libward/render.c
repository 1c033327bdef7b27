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

/* clang-format off */
#define CLI_HINT(s, how)                                                      \
	"retry this exact " s " once with " how " --escalate MODE "            \
	"--justification TEXT (the narrowest wider MODE that suffices); the "  \
	"approval prompt asks the user"
/* clang-format on */

/* clang-format off */
#define ACP_HINT(s)                                                           \
	"ward asks the user whether this exact " s " may run once under the " \
	"narrowest wider mode that suffices; the answer follows"
/* clang-format on */

const char *ward_render_hint_for(enum ward_surface surface,
				 enum ward_subject subject)
{
	if (surface == WARD_SURFACE_ACP)
		return subject == WARD_SUBJECT_OPERATION ? ACP_HINT("operation")
							 : ACP_HINT("command");
	if (surface != WARD_SURFACE_CLI)
		return ward_render_hint(subject);
	return subject == WARD_SUBJECT_OPERATION
		   ? CLI_HINT("operation", "ward fs OPERATION …")
		   : CLI_HINT("command", "ward run");
}

/* The narrowest mode wider than @m (itself when there is none). */
static enum ward_mode next_wider(enum ward_mode m)
{
	return m == WARD_MODE_READ_ONLY ? WARD_MODE_WORKSPACE_WRITE
					: WARD_MODE_DANGER_FULL_ACCESS;
}

#define DENIAL_LINES 5

/*
 * @s as one line: a path, a rule or a file name may hold a newline (or
 * another control character, or a character that hides text), which would
 * break the report's one-line entries apart and let a file name forge a
 * line of ward's; written escaped as an approval prompt writes it
 * (ward_escalation_put: "\x0a").
 */
static void put_line(FILE *m, const char *s)
{
	if (ward_escalation_put(m, s) != 0)
		fputs("?", m);
}

/* One entry as a marker-like line. */
static void put_denial(FILE *m, const struct ward_denial *d)
{
	const char *op = d->operation ? d->operation : "access";

	fprintf(m, "\n[sandbox: %s of ", op);
	put_line(m, d->path);
	fputc(' ', m);
	switch (d->cause) {
	case WARD_DENIAL_RULE:
		fputs("refused by rule \"", m);
		put_line(m, d->rule ? d->rule : "?");
		fputc('"', m);
		break;
	case WARD_DENIAL_PROTECTED:
		fputs("refused: a protected path (", m);
		put_line(m, d->rule ? d->rule : "?");
		fputc(')', m);
		break;
	case WARD_DENIAL_MODE:
		fprintf(m, "refused: not writable under %s mode",
			ward_mode_name(d->mode));
		break;
	}
	if (d->source && d->cause != WARD_DENIAL_PROTECTED) {
		fputs(" (", m);
		put_line(m, d->source);
		fputc(')', m);
	}
	if (d->how == WARD_DENIAL_DERIVED)
		fputs("; inferred from the error output", m);
	fputc(']', m);
}

int ward_render_denials(char **out, const struct ward_render_denials *r)
{
	size_t shown = 0, len = 0, with_path = 0;
	bool only_rules = r && r->count > 0;
	char *text = NULL;
	FILE *m;

	if (!out || !r)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (r->version != WARD_RENDER_DENIALS_VERSION)
		return ward_err(WARD_EINVAL,
				"render: unknown version %u (expected %u)",
				r->version, WARD_RENDER_DENIALS_VERSION);
	m = open_memstream(&text, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	fputs(ward_render_marker(r->mode), m);
	for (size_t i = 0; r->denials && i < r->count; i++) {
		const struct ward_denial *d = &r->denials[i];

		only_rules &= d->cause == WARD_DENIAL_RULE;
		if (!d->path)
			continue;
		with_path++;
		if (shown < DENIAL_LINES) {
			put_denial(m, d);
			shown++;
		}
	}
	if (with_path - shown + r->more)
		fprintf(m, "\n[sandbox: … and %zu more refused]",
			with_path - shown + r->more);
	/* A rule holds in every mode: no wider mode would help. */
	if (!only_rules && r->mode != WARD_MODE_DANGER_FULL_ACCESS) {
		if (r->escalation_offered)
			fprintf(m, "\n%s",
				ward_render_hint_for(r->surface, r->subject));
		else if (r->session_id && r->surface != WARD_SURFACE_API)
			fprintf(m,
				"\na person can allow this by widening the "
				"session's mode: ward session mode %s %s",
				r->session_id,
				ward_mode_name(next_wider(r->mode)));
	}
	if (fclose(m) != 0 || !text) {
		free(text);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = text;
	return 0;
}

int ward_render_explain(char **out, const struct ward_denial *d, size_t count,
			size_t more)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	m = open_memstream(&text, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	if (count == 0)
		fputs("ward: explain: no file access was refused", m);
	for (size_t i = 0; d && i < count; i++) {
		fprintf(m, "%sward: explain: denied: %s of ", i ? "\n" : "",
			d[i].operation ? d[i].operation : "access");
		if (d[i].path)
			put_line(m, d[i].path);
		else
			fputs("(a path the error output does not name)", m);
		fputc('\n', m);
		switch (d[i].cause) {
		case WARD_DENIAL_RULE:
			fputs("  by:     rule \"", m);
			put_line(m, d[i].rule ? d[i].rule : "?");
			fputs("\"\n", m);
			break;
		case WARD_DENIAL_PROTECTED:
			fputs("  by:     a protected path (", m);
			put_line(m, d[i].rule ? d[i].rule : "?");
			fputs(")\n", m);
			break;
		case WARD_DENIAL_MODE:
			fprintf(m,
				"  by:     the %s mode (not inside any "
				"writable root)\n",
				ward_mode_name(d[i].mode));
			break;
		}
		fputs("  set in: ", m);
		put_line(m, d[i].source ? d[i].source : "(unknown)");
		fputc('\n', m);
		fprintf(m, "  how:    %s",
			d[i].how == WARD_DENIAL_EXACT
			    ? "exact (reported by the kernel or the fs fence)"
			    : "derived (inferred from the command's error "
			      "output and the plan; a good guess, not a fact)");
	}
	if (more)
		fprintf(m, "\nward: explain: and %zu more", more);
	if (fclose(m) != 0 || !text) {
		free(text);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = text;
	return 0;
}

int ward_render_sandbox_ended(char **out, const char *why)
{
	char *text = NULL;

	if (!out || !why)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text,
		     "[sandbox failed: %s; the output above is what it wrote "
		     "until then]",
		     why) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_stopped(char **out, enum ward_subject subject, bool shutdown,
			bool started)
{
	const char *s = ward_subject_name(subject);
	char *text = NULL;
	int n;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (started)
		n = asprintf(&text,
			     "[stopped: %s before this %s finished; it was "
			     "killed, and the output above is what it wrote "
			     "until then]",
			     shutdown ? "the server shut down" : "cancelled",
			     s);
	else
		n = asprintf(&text,
			     "stopped: %s before this %s started; nothing was "
			     "run",
			     shutdown ? "the server shut down" : "cancelled",
			     s);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_not_text(char **out, enum ward_surface surface,
			 const char *path)
{
	char *text = NULL;
	int n;

	if (!out || !path)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (surface == WARD_SURFACE_MCP)
		n = asprintf(&text,
			     "%s is not text (it holds NUL bytes or invalid "
			     "UTF-8), and read_file returns text only; look at "
			     "it with bash (e.g. file, or xxd | head)",
			     path);
	else if (surface == WARD_SURFACE_CLI)
		n = asprintf(&text,
			     "%s is not text (it holds NUL bytes or invalid "
			     "UTF-8); read it with ward fs read --bytes",
			     path);
	else
		n = asprintf(&text,
			     "%s is not text (it holds NUL bytes or invalid "
			     "UTF-8)",
			     path);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_read_truncated(char **out, unsigned long long next_offset,
			       unsigned long long more_lines,
			       unsigned long long more_bytes)
{
	char *text = NULL;
	int n;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (more_lines)
		n = asprintf(&text,
			     "[truncated: %llu more line%s (%llu bytes) not "
			     "shown; read on with offset %llu, or pick a part "
			     "with offset/limit]",
			     more_lines, more_lines == 1 ? "" : "s", more_bytes,
			     next_offset);
	else
		n = asprintf(&text,
			     "[truncated: the file continues after line %llu; "
			     "read on with offset %llu, or pick a part with "
			     "offset/limit]",
			     next_offset, next_offset);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_read_long_line(char **out, unsigned long long line,
			       unsigned long long shown_bytes,
			       unsigned long long more_bytes,
			       unsigned long long next_offset)
{
	char *text = NULL, *then = NULL;
	int n;

	if (!out || !line)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (next_offset)
		n = asprintf(&then,
			     "read on from the next line with offset %llu",
			     next_offset);
	else
		n = asprintf(&then, "it is the file's last line");
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	n = asprintf(&text,
		     "[truncated: line %llu is longer than 64 KiB: its first "
		     "%llu bytes are shown, %llu more bytes of it are not "
		     "(look at them with bash, e.g. cut -c or fold); %s]",
		     line, shown_bytes, more_bytes, then);
	free(then);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_read_past_end(char **out, unsigned long long offset)
{
	char *text = NULL;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text,
		     "[nothing at offset %llu: the file ends before line %llu]",
		     offset, offset + 1) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_read_line_too_large(char **out, const char *path,
				    unsigned long long line)
{
	char *text = NULL;

	if (!out || !path || !line)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text,
		     "%s: line %llu alone is larger than read_file can hold "
		     "(10 MiB); look at it with bash (e.g. head -c or cut -c)",
		     path, line) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
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

/* A normalized host as the proxy reports it: nothing else reaches a
 * model-facing line. */
static bool host_ok(const char *host)
{
	return host && *host &&
	       strspn(host,
		      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789.-_:") == strlen(host);
}

int ward_render_network_denied(char **out, const char *host)
{
	char *text = NULL;

	if (!host_ok(host))
		return ward_err(WARD_EINVAL, "not a host name or address");
	/* Exact text from the design (round two). */
	if (asprintf(&text, "[sandbox: network access to %s denied]", host) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_network_hint(char **out, enum ward_surface surface)
{
	const char *t =
	    surface == WARD_SURFACE_CLI
		? "retry once with --escalate-network HOST (or on) "
		  "--justification TEXT; the approval prompt asks you"
	    : surface == WARD_SURFACE_ACP
		? "ward asks the user whether this exact command may run once "
		  "with network access to the host; the answer follows"
		: "retry this exact command once with network_permissions "
		  "(the host, or \"on\") + justification; the approval prompt "
		  "asks the user";
	char *text = strdup(t);

	if (!text)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_network_off(char **out, const struct ward_render_network_off *r)
{
	const char *mode;
	char *text = NULL, *hint = NULL;
	int n;

	if (!out || !r)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (r->version != WARD_RENDER_NETWORK_OFF_VERSION)
		return ward_err(WARD_EINVAL,
				"render: unknown version %u (expected %u)",
				r->version, WARD_RENDER_NETWORK_OFF_VERSION);
	mode = ward_mode_name(r->mode);
	if (r->escalation_offered) {
		if (ward_render_network_hint(&hint, r->surface) != 0)
			return ward_err(-ENOMEM, "out of memory");
	}
	if (r->surface == WARD_SURFACE_CLI)
		/* For a person: the flags that decide, then (offered) the
		 * one-call escalation. */
		n = asprintf(
		    &text,
		    "[sandbox: network access denied: the network is "
		    "off under %s mode]\n"
		    "allow a host with --allow-domain HOST (repeatable; "
		    "or the whole network with --network on)%s%s",
		    mode, hint ? "\n" : "", hint ? hint : "");
	else if (hint)
		/* For a model: the one sanctioned retry. */
		n = asprintf(&text,
			     "[sandbox: network access denied: the network is "
			     "off under %s mode]\n%s",
			     mode, hint);
	else if (r->session_id && r->surface == WARD_SURFACE_MCP)
		n = asprintf(&text,
			     "[sandbox: network access denied: the network is "
			     "off under %s mode]\n"
			     "network_permissions cannot be asked for here; a "
			     "person can allow it: ward session network %s on, "
			     "or ward mcp --allow-domain HOST",
			     mode, r->session_id);
	else
		n = asprintf(&text,
			     "[sandbox: network access denied: the network is "
			     "off under %s mode]",
			     mode);
	free(hint);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_foreground_clamped(char **out, unsigned long timeout_ms)
{
	char *text = NULL;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text,
		     "[stopped at ward's %lu s default for a client without "
		     "progress reports (clients commonly stop waiting after "
		     "60 s): run a command that takes longer with "
		     "run_in_background, then read it with task_output]",
		     timeout_ms / 1000) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_network_unresolved(char **out, const char *host)
{
	char *text = NULL;

	if (!host_ok(host))
		return ward_err(WARD_EINVAL, "not a host name or address");
	if (asprintf(&text,
		     "[sandbox: network: %s is allowed, but ward's proxy "
		     "could not resolve it (the lookup outside the sandbox "
		     "failed: a DNS problem, not a refusal)]",
		     host) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_network_verdict(char **out, enum ward_surface surface,
				enum ward_escalation_verdict v,
				enum ward_subject subject, const char *what)
{
	const char *s = ward_subject_name(subject);
	char *text = NULL;
	int n;

	(void)surface;
	if (!what)
		return ward_err(WARD_EINVAL, "no network request to name");
	switch (v) {
	case WARD_ESCALATION_GRANTED:
		n = asprintf(&text, "%s was granted for this %s only", what, s);
		break;
	case WARD_ESCALATION_NOT_WIDER:
		n = asprintf(&text,
			     "%s would not widen this %s's network (the host "
			     "is already allowed, or denied by deny_domains, "
			     "or the network is on); nothing was run and "
			     "nobody was asked",
			     what, s);
		break;
	case WARD_ESCALATION_NO_SERVICE:
		n = asprintf(&text,
			     "escalation is not available: no approval "
			     "service is configured, so nobody can approve "
			     "%s for this %s; nothing was run",
			     what, s);
		break;
	case WARD_ESCALATION_POLICY_NEVER:
		n = asprintf(&text,
			     "%s for this %s was refused automatically: the "
			     "approval policy is \"never\"; nothing was run",
			     what, s);
		break;
	case WARD_ESCALATION_REJECTED:
		n = asprintf(&text, "the user rejected %s for this %s", what,
			     s);
		break;
	case WARD_ESCALATION_CANCELLED:
		n = asprintf(&text,
			     "the approval request for %s was cancelled "
			     "before the user decided; nothing was run",
			     what);
		break;
	case WARD_ESCALATION_UNAVAILABLE:
		n = asprintf(&text,
			     "approval for %s is unavailable: nobody could "
			     "be asked; nothing was run",
			     what);
		break;
	default:
		return ward_err(WARD_EINVAL,
				"no text for escalation verdict %d", (int)v);
	}
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_retried(char **out, enum ward_subject subject,
			enum ward_mode mode, bool network, const char *host)
{
	const char *s = ward_subject_name(subject);
	char *text = NULL;
	int n;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (network && host && !host_ok(host))
		return ward_err(WARD_EINVAL, "not a host name or address");
	if (network)
		n = asprintf(
		    &text,
		    "[sandbox: the user allowed this %s once with %s%s; "
		    "it ran again, and its output follows]",
		    s, host ? "network access to " : "the whole network",
		    host ? host : " (on)");
	else
		n = asprintf(
		    &text,
		    "[sandbox: the user allowed this %s once under %s; "
		    "it ran again, and its output follows]",
		    s, ward_mode_name(mode));
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_verdict(char **out, enum ward_escalation_verdict verdict,
			enum ward_subject subject, enum ward_mode requested)
{
	return ward_render_verdict_for(out, WARD_SURFACE_API, verdict, subject,
				       requested);
}

int ward_render_verdict_for(char **out, enum ward_surface surface,
			    enum ward_escalation_verdict verdict,
			    enum ward_subject subject, enum ward_mode requested)
{
	const char *s = ward_subject_name(subject);
	const char *m = ward_mode_name(requested);
	char *text = NULL;
	int n;

	switch (verdict) {
	case WARD_ESCALATION_NOT_WIDER:
		if (surface == WARD_SURFACE_CLI)
			n = asprintf(&text,
				     "--escalate \"%s\" is not wider than the "
				     "mode this %s already runs under; nothing "
				     "was run and nobody was asked; run it "
				     "without --escalate",
				     m, s);
		else
			n = asprintf(
			    &text,
			    "sandbox_permissions \"%s\" is not wider "
			    "than the mode this %s already runs under; "
			    "nothing was run and nobody was asked; "
			    "retry without sandbox_permissions",
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

int ward_render_instructions(char **out, bool escalation_offered,
			     enum ward_approval_policy policy)
{
	const char *never = ward_render_policy(policy);
	char *text = NULL;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(
		&text,
		"ward runs your shell commands (bash) and file operations "
		"(read_file, write_file, edit_file, list_directory) in a "
		"sandbox "
		"the kernel enforces. Just try what you need: the sandbox "
		"decides, not you.\n"
		"A file access it refused ends the result with [sandbox: file "
		"access denied under <mode> mode]; the network (a knob of its "
		"own, off unless the user allows hosts) with [sandbox: network "
		"access denied: the network is off under <mode> mode] or "
		"[sandbox: network access to <host> denied]. Never work around "
		"a denial.\n"
		"%s\n"
		"A command that may take longer than a minute goes in the "
		"background: bash with run_in_background, then task_output and "
		"task_kill.%s%s",
		escalation_offered
		    ? "After such a line you may retry that exact call once "
		      "with sandbox_permissions (a wider mode) or, for bash, "
		      "network_permissions (a host, or \"on\"), with a "
		      "justification; the user decides before anything runs."
		    : "The sandbox cannot be widened from here: report what "
		      "was denied and why the task needs it.",
		*never ? "\n" : "", never) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
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

/* clang-format off */
#define NETWORK_MEANING                                                       \
	"\nThe network is a knob of its own, off unless the user allows "     \
	"hosts. When a name lookup or connection fails because of it, the "    \
	"output ends with\n"                                                  \
	"[sandbox: network access denied: the network is off under <mode> "   \
	"mode]\n"                                                             \
	"and a host the allowed list does not name ends it with\n"            \
	"[sandbox: network access to <host> denied]\n"
#define NETWORK_SANCTIONED                                                    \
	"Then the sanctioned step is to retry this exact command once with "  \
	"network_permissions (the host to allow, or \"on\") and a "           \
	"justification, never together with sandbox_permissions; the user "   \
	"decides before anything runs."
#define NETWORK_PLAIN                                                         \
	"The network cannot be widened from here: report which host the "     \
	"task needs."
#define BACKGROUND_ADVICE                                                     \
	"\nA command that may take longer than a minute (a server, a "        \
	"watcher, a long build or test run) belongs in the background "       \
	"(run_in_background, then task_output): many clients stop waiting "   \
	"for a result after 60 s."
/* clang-format on */

static const char bash_escalation[] =
    "Run a shell command with bash -c under a file sandbox enforced by the "
    "kernel. Commands may read files anywhere; writes are allowed only "
    "where the sandbox permits.\n" TRY_FIRST MARKER_MEANING(
	"The command did run and the kernel refused that one operation; the "
	"exit code is the command's own.",
	"the output ends with") SANCTIONED("command")
	NETWORK_MEANING NETWORK_SANCTIONED BACKGROUND_ADVICE;

static const char bash_plain[] =
    "Run a shell command with bash -c under a file sandbox enforced by the "
    "kernel. Commands may read files anywhere; writes are allowed only "
    "where the sandbox permits.\n" TRY_FIRST MARKER_MEANING(
	"The command did run and the kernel refused that one operation; the "
	"exit code is the command's own.",
	"the output ends with")
	NO_ESCALATION NETWORK_MEANING NETWORK_PLAIN BACKGROUND_ADVICE;

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

/* clang-format off */
#define BACKGROUND_RULES                                                      \
	"A background command runs under the same sandbox as any other; if "  \
	"the sandbox refused one of its file accesses, the output ends with " \
	"the line\n"                                                          \
	"[sandbox: file access denied under <mode> mode]\n"                   \
	"once it has ended. Do not work around a denial (other paths, other " \
	"tools, copying elsewhere, changing permissions)."
#define READ_RULES(what, noun)                                                \
	what " is allowed anywhere except where an access rule forbids it. "  \
	"A refused " noun " fails with the line\n"                            \
	"[sandbox: file access denied under <mode> mode]\n"                   \
	"Rules apply in every mode, so no wider mode would help. Do not work " \
	"around a denial (other paths, other tools, copying elsewhere, "      \
	"changing permissions): report it."
#define WRITE_HEAD(first)                                                     \
	first " Relative paths are taken from the workspace root. Changes "   \
	"are allowed only where the sandbox permits.\n" TRY_FIRST             \
	MARKER_MEANING("Nothing was changed.", "the operation fails with")
/* clang-format on */

static const char task_output_text[] =
    "Read what a background command (started by bash with "
    "run_in_background) has written since the last read, and whether it "
    "is still running; once it has ended, its exit code. " BACKGROUND_RULES;

static const char task_kill_text[] =
    "Stop a background command started by bash with run_in_background: "
    "its whole process group is killed. Returns what it wrote since the "
    "last read and how it ended.";

static const char read_file_text[] =
    "Read a text file (UTF-8), each line headed by its number as cat -n "
    "does (line_numbers false: the bare text). Relative paths are taken "
    "from the workspace root; offset and limit select lines. " READ_RULES(
	"Reading", "read");

static const char list_directory_text[] =
    "List a directory: one entry per line with its type and size. "
    "Relative paths are taken from the workspace root. " READ_RULES("Listing",
								    "listing");

static const char write_file_escalation[] = WRITE_HEAD(
    "Create or replace a file with the given content, atomically (a crash "
    "leaves the old or the new content).") SANCTIONED("operation");
static const char write_file_plain[] = WRITE_HEAD(
    "Create or replace a file with the given content, atomically (a crash "
    "leaves the old or the new content).") NO_ESCALATION;

static const char edit_file_escalation[] = WRITE_HEAD(
    "Replace an exact piece of text in a file: old_text must occur exactly "
    "once (unless replace_all), and is replaced by new_text.")
    SANCTIONED("operation");
static const char edit_file_plain[] = WRITE_HEAD(
    "Replace an exact piece of text in a file: old_text must occur exactly "
    "once (unless replace_all), and is replaced by new_text.") NO_ESCALATION;

const char *ward_render_tool_description(enum ward_tool tool,
					 bool escalation_offered)
{
	switch (tool) {
	case WARD_TOOL_BASH:
		break;
	case WARD_TOOL_FILES:
		return escalation_offered ? files_escalation : files_plain;
	case WARD_TOOL_TASK_OUTPUT:
		return task_output_text;
	case WARD_TOOL_TASK_KILL:
		return task_kill_text;
	case WARD_TOOL_READ_FILE:
		return read_file_text;
	case WARD_TOOL_WRITE_FILE:
		return escalation_offered ? write_file_escalation
					  : write_file_plain;
	case WARD_TOOL_EDIT_FILE:
		return escalation_offered ? edit_file_escalation
					  : edit_file_plain;
	case WARD_TOOL_LIST_DIRECTORY:
		return list_directory_text;
	}
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

/* --- MCP tool fields and results ---------------------------------------- */

struct field_text {
	unsigned tools; /* bit per enum ward_tool */
	const char *field;
	const char *text;
};

#define T(t) (1u << (t))
#define T_PATHS                                                                \
	(T(WARD_TOOL_READ_FILE) | T(WARD_TOOL_WRITE_FILE) |                    \
	 T(WARD_TOOL_EDIT_FILE))

static const struct field_text field_texts[] = {
    {T(WARD_TOOL_BASH), "command",
     "The command line, run with bash -c in the working directory."},
    {T(WARD_TOOL_BASH), "workdir",
     "The directory to run in: inside the workspace, relative to its root "
     "or absolute. Default: the workspace root."},
    {T(WARD_TOOL_BASH), "timeout_ms",
     "Kill the command's whole process group after this many "
     "milliseconds. Default in the foreground: 120000 (2 minutes) when "
     "the client follows progress reports, else 55000 (just under the 60 s "
     "most clients wait for a result; past it the result says so); none in "
     "the background; at most 3600000. For anything longer than a minute, "
     "prefer run_in_background."},
    {T(WARD_TOOL_BASH), "run_in_background",
     "Start the command and return at once with a task id, for servers, "
     "watchers and long builds; read its output with task_output and stop "
     "it with task_kill."},
    {T(WARD_TOOL_TASK_OUTPUT) | T(WARD_TOOL_TASK_KILL), "task_id",
     "The task id that bash returned for a command run in the background."},
    {T(WARD_TOOL_TASK_OUTPUT), "wait_ms",
     "Wait up to this many milliseconds for the task to end before "
     "answering (default 0: answer at once; at most 600000)."},
    {T_PATHS, "path",
     "The file's path: relative to the workspace root, or absolute."},
    {T(WARD_TOOL_LIST_DIRECTORY), "path",
     "The directory to list: relative to the workspace root, or absolute. "
     "Default: the workspace root."},
    {T(WARD_TOOL_READ_FILE), "offset",
     "Lines to skip from the start of the file (default 0)."},
    {T(WARD_TOOL_READ_FILE), "limit",
     "At most this many lines (default: to the end). At most 64 KiB are "
     "returned either way; a longer part ends with a \"truncated\" line "
     "saying how much more there is and the offset to read on from."},
    {T(WARD_TOOL_WRITE_FILE), "content", "The complete new content."},
    {T(WARD_TOOL_WRITE_FILE), "create_parents",
     "Create missing parent directories (default true)."},
    {T(WARD_TOOL_EDIT_FILE), "old_text",
     "The exact text to replace, whitespace included, without read_file's "
     "line-number prefixes; it must occur exactly once unless replace_all "
     "is set. (old_string is the same argument: give one of them.)"},
    {T(WARD_TOOL_EDIT_FILE), "new_text",
     "The text to put in its place. (new_string is the same argument.)"},
    {T(WARD_TOOL_EDIT_FILE), "old_string",
     "The same as old_text (give one of them)."},
    {T(WARD_TOOL_EDIT_FILE), "new_string",
     "The same as new_text (give one of them)."},
    {T(WARD_TOOL_READ_FILE), "line_numbers",
     "Head each line with its number, as cat -n does (\"   12\\t\"), the "
     "numbers offset counts from (default true); false for the bare text. "
     "The numbers are not part of the file: leave them out of edit_file's "
     "old_text."},
    {T(WARD_TOOL_EDIT_FILE), "replace_all",
     "Replace every occurrence of old_text (default false)."},
    {T(WARD_TOOL_LIST_DIRECTORY), "recursive",
     "List subdirectories too, never following symlinks (default false)."},
    {T(WARD_TOOL_LIST_DIRECTORY), "depth",
     "With recursive: how many levels to list (1 to 16; default 16)."},
    {T(WARD_TOOL_LIST_DIRECTORY), "limit",
     "At most this many entries (1 to 10000; default 1000). At most 64 KiB "
     "are returned either way; a longer listing ends with a \"truncated\" "
     "line saying how many more entries there are."},
};

const char *ward_render_field_description(enum ward_tool tool,
					  const char *field)
{
	bool escalates = tool == WARD_TOOL_BASH ||
			 tool == WARD_TOOL_WRITE_FILE ||
			 tool == WARD_TOOL_EDIT_FILE || tool == WARD_TOOL_FILES;

	if (!field || (unsigned)tool > WARD_TOOL_LIST_DIRECTORY)
		return NULL;
	if (escalates && strcmp(field, "sandbox_permissions") == 0)
		return ward_render_field_sandbox_permissions(
		    tool == WARD_TOOL_BASH ? WARD_SUBJECT_COMMAND
					   : WARD_SUBJECT_OPERATION);
	if (escalates && strcmp(field, "justification") == 0)
		return ward_render_field_justification();
	if (tool == WARD_TOOL_BASH && strcmp(field, "network_permissions") == 0)
		return "Only to retry a command the network refused "
		       "([sandbox: network access denied: the network is off "
		       "under <mode> mode], or [sandbox: network access to "
		       "HOST denied]): the host to allow for this one retry, "
		       "or \"on\" for the whole network. The user is asked "
		       "first; give a justification. Not together with "
		       "sandbox_permissions.";
	for (size_t i = 0; i < sizeof(field_texts) / sizeof(field_texts[0]);
	     i++)
		if ((field_texts[i].tools & T(tool)) &&
		    strcmp(field_texts[i].field, field) == 0)
			return field_texts[i].text;
	return NULL;
}

/* Write @len bytes of output; a NUL byte becomes U+FFFD (the text is a
 * C string). */
static void put_bytes(FILE *m, const char *buf, size_t len)
{
	const char *nul;

	while (len > 0 && (nul = memchr(buf, '\0', len)) != NULL) {
		fwrite(buf, 1, (size_t)(nul - buf), m);
		fputs("\xef\xbf\xbd", m);
		len -= (size_t)(nul - buf) + 1;
		buf = nul + 1;
	}
	fwrite(buf, 1, len, m);
}

/* Append one captured stream, with the omission note where it was cut. */
static void put_stream(FILE *m, const char *buf, size_t len, size_t head,
		       size_t dropped)
{
	if (!buf || len == 0) {
		if (dropped)
			fprintf(m, "[… %zu bytes omitted …]\n", dropped);
		return;
	}
	if (!dropped || head > len)
		head = len;
	put_bytes(m, buf, head);
	if (dropped) {
		if (head && buf[head - 1] != '\n')
			fputc('\n', m);
		fprintf(m, "[… %zu bytes omitted …]\n", dropped);
		put_bytes(m, buf + head, len - head);
	}
	if (buf[len - 1] != '\n')
		fputc('\n', m);
}

int ward_render_run(char **out, const struct ward_render_run *r)
{
	bool has_out, has_err;
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!out || !r)
		return ward_err(WARD_EINVAL, "render: missing argument");
	m = open_memstream(&text, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	has_out = r->out_len || r->out_dropped;
	has_err = r->err_len || r->err_dropped;
	put_stream(m, r->out, r->out_len, r->out_head, r->out_dropped);
	if (has_out && has_err)
		fputs("[stderr]\n", m);
	put_stream(m, r->err, r->err_len, r->err_head, r->err_dropped);
	if (r->running)
		fprintf(m, "task %s is still running",
			r->task_id ? r->task_id : "?");
	else if (r->timed_out)
		fprintf(m,
			"timed out after %lu ms; its process group was "
			"killed",
			r->timeout_ms);
	else if (r->signal > 0)
		fprintf(m, "killed by signal %d", r->signal);
	else
		fprintf(m, "exit code: %d", r->exit_code);
	if (r->denied && !r->running)
		fprintf(m, "\n%s", ward_render_marker(r->mode));
	if (r->denied && !r->running && r->escalation_offered)
		fprintf(m, "\n%s", ward_render_hint(WARD_SUBJECT_COMMAND));
	if (fclose(m) != 0 || !text) {
		free(text);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = text;
	return 0;
}

int ward_render_task_started(char **out, const char *task_id, long pid)
{
	char *text = NULL;

	if (!out || !task_id)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text,
		     "started background task %s (pid %ld); read its output "
		     "with task_output and stop it with task_kill",
		     task_id, pid) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_widen_advice(char **out, enum ward_subject subject,
			     enum ward_mode requested, const char *session_id)
{
	const char *s = ward_subject_name(subject);
	const char *m = ward_mode_name(requested);
	char *verdict = NULL, *text = NULL;
	int err, n;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	err = ward_render_verdict(&verdict, WARD_ESCALATION_UNAVAILABLE,
				  subject, requested);
	if (err)
		return err;
	if (session_id)
		n = asprintf(&text,
			     "%s\nThis client cannot ask the user for "
			     "approval: do not retry this %s with "
			     "sandbox_permissions. If the user wants it to "
			     "run under \"%s\", they can widen the session's "
			     "mode themselves with: ward session mode %s %s "
			     "(then retry without sandbox_permissions).",
			     verdict, s, m, session_id, m);
	else
		n = asprintf(&text,
			     "%s\nThis client cannot ask the user for "
			     "approval: do not retry this %s with "
			     "sandbox_permissions. If the user wants it to "
			     "run under \"%s\", they can widen the mode "
			     "themselves in ward's configuration (then retry "
			     "without sandbox_permissions).",
			     verdict, s, m);
	free(verdict);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_fs_done(char **out, enum ward_fs_op op, const char *path,
			unsigned long long count)
{
	char *text = NULL;
	int n;

	if (!out || !path)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (op == WARD_FS_OP_WRITE)
		n = asprintf(&text, "wrote %llu byte%s to %s", count,
			     count == 1 ? "" : "s", path);
	else if (op == WARD_FS_OP_EDIT)
		n = asprintf(&text, "replaced %llu occurrence%s in %s", count,
			     count == 1 ? "" : "s", path);
	else
		return ward_err(WARD_EINVAL, "no text for operation %s",
				ward_fs_op_name(op));
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_list_truncated(char **out, size_t more, bool at_least)
{
	char *text = NULL;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text,
		     "[truncated: %s%zu more entr%s not shown; list a "
		     "subdirectory, or use depth/limit]",
		     at_least ? "at least " : "", more,
		     more == 1 ? "y" : "ies") < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_read_more(char **out, unsigned long long next_offset)
{
	char *text = NULL;

	if (!out)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(&text, "[… the file continues: read on with offset %llu]",
		     next_offset) < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	return 0;
}

int ward_render_listing(char **out, const struct ward_fs_listing *listing)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!out || !listing)
		return ward_err(WARD_EINVAL, "render: missing argument");
	m = open_memstream(&text, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	for (size_t i = 0; i < listing->count; i++) {
		const struct ward_fs_entry *e = &listing->entries[i];

		if (i)
			fputc('\n', m);
		fputs(e->path, m);
		if (e->denied)
			fputs(" [access denied by a rule]", m);
		else if (e->type == WARD_FS_TYPE_DIR)
			fputc('/', m);
		else if (e->type == WARD_FS_TYPE_SYMLINK)
			fputc('@', m);
		else if (e->type == WARD_FS_TYPE_FILE)
			fprintf(m, " (%llu bytes)",
				(unsigned long long)e->size);
	}
	if (listing->truncated)
		fputs(listing->count ? "\n[… listing truncated]"
				     : "[… listing truncated]",
		      m);
	else if (listing->count == 0)
		fputs("(empty directory)", m);
	if (fclose(m) != 0 || !text) {
		free(text);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = text;
	return 0;
}

#ifndef WARD_LIBEXECDIR
#define WARD_LIBEXECDIR "/usr/local/libexec/ward"
#endif

int ward_render_runner_hint(char **out, const struct ward_runner_status *st)
{
	const char *name;
	int n = -1;

	if (!out || !st)
		return ward_err(WARD_EINVAL, "render: missing argument");
	name = ward_runner_name(st->runner);
	switch (st->problem) {
	case WARD_PROBLEM_NOT_FOUND:
		if (st->runner == WARD_RUNNER_BWRAP)
			n = asprintf(out,
				     "bwrap was not found in PATH; install "
				     "bubblewrap (Debian: apt-get install "
				     "bubblewrap)");
		else if (st->runner == WARD_RUNNER_LANDLOCK)
			n = asprintf(out,
				     "the landlock-run launcher is missing "
				     "(looked beside ward and in %s); "
				     "reinstall ward",
				     WARD_LIBEXECDIR);
		else
			n = asprintf(out,
				     "the %s runner's binary is missing: %s",
				     name, st->why);
		break;
	case WARD_PROBLEM_PLANTED:
		n = asprintf(out,
			     "a %s binary was found inside the workspace or a "
			     "writable root (%s); remove it, or put the "
			     "system's directory (e.g. /usr/bin) first in PATH",
			     name, st->path);
		break;
	case WARD_PROBLEM_NO_USERNS:
		n = asprintf(out,
			     "bwrap needs unprivileged user namespaces, which "
			     "this system denies (%s); as root: sysctl -w "
			     "kernel.unprivileged_userns_clone=1 (Debian) or "
			     "sysctl -w "
			     "kernel.apparmor_restrict_unprivileged_userns=0 "
			     "(Ubuntu 23.10+); in a container, where they are "
			     "denied on purpose, ward uses Landlock",
			     st->why);
		break;
	case WARD_PROBLEM_KERNEL:
		n = asprintf(out, "Landlock needs a kernel built with "
				  "CONFIG_SECURITY_LANDLOCK=y and landlock in "
				  "the active LSM list (boot with "
				  "lsm=...,landlock)");
		break;
	case WARD_PROBLEM_RESERVED:
		n = asprintf(
		    out, "the %s runner is reserved and cannot confine", name);
		break;
	case WARD_PROBLEM_PROBE_FAILED:
		n = asprintf(out,
			     "the %s runner's probe failed (%s); run 'ward "
			     "probe' for the details",
			     name, st->why);
		break;
	case WARD_PROBLEM_NONE:
		n = asprintf(out, "run 'ward probe' to see which runners can "
				  "confine");
		break;
	}
	if (n < 0) {
		*out = NULL;
		return ward_err(-ENOMEM, "out of memory");
	}
	return 0;
}

int ward_render_wide_workspace(char **out, const char *ws, bool root)
{
	if (!out || !ws)
		return ward_err(WARD_EINVAL, "render: missing argument");
	if (asprintf(out,
		     "refusing to make %s the workspace under workspace-write: "
		     "it is %s, so every file under it would be writable (some "
		     "clients start servers in / or $HOME); pass --workspace "
		     "DIR with the project's directory, or confirm it with "
		     "--allow-home-workspace (allow_home_workspace: true in "
		     "your user configuration) if you mean it — your startup "
		     "files (.bashrc, .profile, .ssh, .config/autostart, …) "
		     "stay read-only even then",
		     ws,
		     root
			 ? "the root directory"
			 : "your home directory or one that contains it") < 0) {
		*out = NULL;
		return ward_err(-ENOMEM, "out of memory");
	}
	return 0;
}
