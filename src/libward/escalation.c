/*
 * ward — escalation: the ladder, the strictly-wider check, and the
 * orchestration that asks for approval before anything runs and grants a
 * wider policy for one call only. See include/ward/escalation.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "libward/net/proxy_internal.h"
#include "ward/escalation.h"
#include "ward/render.h"

const char *ward_approval_outcome_name(enum ward_approval_outcome outcome)
{
	switch (outcome) {
	case WARD_APPROVAL_ALLOWED_ONCE:
		return "allowed-once";
	case WARD_APPROVAL_REJECTED:
		return "rejected";
	case WARD_APPROVAL_CANCELLED:
		return "cancelled";
	case WARD_APPROVAL_UNAVAILABLE:
		return "unavailable";
	}
	return "unknown";
}

const char *ward_escalation_verdict_name(enum ward_escalation_verdict verdict)
{
	switch (verdict) {
	case WARD_ESCALATION_GRANTED:
		return "granted";
	case WARD_ESCALATION_NOT_WIDER:
		return "not-wider";
	case WARD_ESCALATION_NO_SERVICE:
		return "no-approval-service";
	case WARD_ESCALATION_POLICY_NEVER:
		return "policy-never";
	case WARD_ESCALATION_REJECTED:
		return "rejected";
	case WARD_ESCALATION_CANCELLED:
		return "cancelled";
	case WARD_ESCALATION_UNAVAILABLE:
		return "unavailable";
	}
	return "unknown";
}

size_t ward_escalation_targets(enum ward_mode out[2], enum ward_mode from)
{
	switch (from) {
	case WARD_MODE_READ_ONLY:
		out[0] = WARD_MODE_WORKSPACE_WRITE;
		out[1] = WARD_MODE_DANGER_FULL_ACCESS;
		return 2;
	case WARD_MODE_WORKSPACE_WRITE:
		out[0] = WARD_MODE_DANGER_FULL_ACCESS;
		return 1;
	case WARD_MODE_DANGER_FULL_ACCESS:
		break;
	}
	return 0;
}

bool ward_escalation_is_wider(enum ward_mode from, enum ward_mode to)
{
	enum ward_mode targets[2];
	size_t n = ward_escalation_targets(targets, from);

	for (size_t i = 0; i < n; i++) {
		if (targets[i] == to)
			return true;
	}
	return false;
}

bool ward_escalation_offered(enum ward_mode mode,
			     enum ward_approval_policy policy, bool has_service,
			     bool was_escalated)
{
	enum ward_mode targets[2];

	return has_service && policy == WARD_APPROVAL_ASK && !was_escalated &&
	       ward_escalation_targets(targets, mode) > 0;
}

/*
 * Append {"type": @type, "call": …, "mode": @requested, …@extra} to the
 * session (nothing without one). @extra is stolen (may be NULL).
 */
static int record(const struct ward_escalation *e, const char *type,
		  json_t *extra)
{
	json_t *ev;
	char *text;
	int err;

	if (!e->session) {
		json_decref(extra);
		return 0;
	}
	ev = json_object();
	if (!ev || json_object_set_new(ev, "type", json_string(type)) ||
	    json_object_set_new(ev, "call", json_string(e->call_id)) ||
	    json_object_set_new(ev, "mode",
				json_string(ward_mode_name(e->requested))) ||
	    (extra && json_object_update(ev, extra))) {
		json_decref(ev);
		json_decref(extra);
		return ward_err(-ENOMEM, "out of memory");
	}
	json_decref(extra);
	text = json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	if (!text)
		return ward_err(-ENOMEM, "out of memory");
	err = ward_session_append_json(e->session, text);
	free(text);
	return err;
}

/*
 * A copy of @base with @mode, for one call. Every field of a policy must be
 * carried over here: a grant widens the mode and nothing else.
 */
static int widen(ward_policy **out, const ward_policy *base,
		 enum ward_mode mode)
{
	return ward_policy_with_mode(out, base, mode);
}

static bool blank(const char *s)
{
	for (; s && *s; s++) {
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	}
	return true;
}

bool ward_escalation_network_is_wider(const ward_policy *base, const char *host)
{
	enum ward_network cur = ward_policy_network(base);
	struct ward_proxy_rules *rules = NULL;
	char norm[WARD_HOST_MAX];
	enum ward_host_kind kind;
	enum ward_rule_result r;
	const char *pat = NULL, *why = NULL;

	if (cur == WARD_NETWORK_ON)
		return false;
	if (!host)
		return true;
	kind = ward_host_parse(norm, host, strlen(host), &why);
	if (kind == 0)
		return false;
	if (ward_proxy_rules_new(&rules,
				 cur == WARD_NETWORK_ALLOWLIST
				     ? ward_policy_allow_domains(base)
				     : NULL,
				 ward_policy_deny_domains(base)) != 0)
		return false;
	r = ward_proxy_rules_check(rules, norm, kind, &pat);
	ward_proxy_rules_free(rules);
	/* Denied wins over any allow: adding it would change nothing; an
	 * allowed host has nothing to add. */
	return r != WARD_RULE_DENY_LISTED && !ward_rule_allows(r);
}

/* What a network escalation asks, as the texts name it. */
static void net_what(char *buf, size_t len, const struct ward_escalation *e)
{
	if (e->net_host)
		snprintf(buf, len, "network access to %s", e->net_host);
	else
		snprintf(buf, len, "the whole network (on)");
}

/* Put the request to the approval service; an unknown answer is "no one
 * could be asked" (fail closed). */
static enum ward_escalation_verdict ask(const struct ward_escalation *e,
					const ward_policy *base,
					enum ward_approval_outcome *outcome)
{
	struct ward_approval_request req = {
	    .subject = e->subject,
	    .summary = e->summary ? e->summary : "",
	    .cwd = e->cwd ? e->cwd : ward_policy_workspace(base),
	    .current = ward_policy_mode(base),
	    .requested = e->requested,
	    .justification = e->justification,
	    .session_id = e->session ? ward_session_id(e->session) : NULL,
	    .call_id = e->call_id,
	    .network = e->version >= 2 && e->network,
	    .net_current = ward_policy_network(base),
	    .net_requested =
		e->net_host ? WARD_NETWORK_ALLOWLIST : WARD_NETWORK_ON,
	    .net_host = e->net_host,
	};

	if (!req.network)
		req.net_host = NULL;
	else
		req.requested = req.current;

	*outcome = e->approve(e->approve_ctx, &req);
	switch (*outcome) {
	case WARD_APPROVAL_ALLOWED_ONCE:
		return WARD_ESCALATION_GRANTED;
	case WARD_APPROVAL_REJECTED:
		return WARD_ESCALATION_REJECTED;
	case WARD_APPROVAL_CANCELLED:
		return WARD_ESCALATION_CANCELLED;
	case WARD_APPROVAL_UNAVAILABLE:
		break;
	}
	*outcome = WARD_APPROVAL_UNAVAILABLE;
	return WARD_ESCALATION_UNAVAILABLE;
}

/*
 * The verdict of a recorded request, the same for a mode and a network:
 * not wider, no approval service, a policy that never asks — or the
 * person's answer, recorded before asking (the ask is audited even when the
 * process dies while the person makes up their mind) and after.
 */
static int decide(const struct ward_escalation *e, const ward_policy *base,
		  bool wider, enum ward_escalation_verdict *v)
{
	enum ward_approval_outcome outcome;
	int err;

	if (!wider) {
		*v = WARD_ESCALATION_NOT_WIDER;
		return 0;
	}
	if (!e->approve) {
		*v = WARD_ESCALATION_NO_SERVICE;
		return 0;
	}
	if (e->policy != WARD_APPROVAL_ASK) {
		*v = WARD_ESCALATION_POLICY_NEVER;
		return 0;
	}
	err = record(e, "approval/asked", NULL);
	if (err)
		return err;
	*v = ask(e, base, &outcome);
	return record(e, "approval/decision",
		      json_pack("{s:s}", "outcome",
				ward_approval_outcome_name(outcome)));
}

/*
 * What every escalation needs, whatever it asks for: a justification
 * (valid UTF-8, into *@justification as a new JSON string) and, in a
 * session, the call it belongs to.
 */
static int check_request(json_t **justification,
			 const struct ward_escalation *e)
{
	if (blank(e->justification))
		return ward_err(WARD_EINVAL,
				"an escalation needs a justification");
	if (e->session && (!e->call_id || !*e->call_id))
		return ward_err(WARD_EINVAL,
				"an escalation in a session needs a call id");
	*justification = json_string(e->justification);
	if (!*justification)
		return ward_err(WARD_EINVAL,
				"the justification is not valid UTF-8");
	return 0;
}

/*
 * The last step of every escalation: record the verdict @v with its @text
 * (freed here), then hand out @v and @wide (the granted policy, consumed;
 * NULL when nothing was granted). On error nothing is handed out.
 */
static int conclude(ward_policy **granted,
		    enum ward_escalation_verdict *verdict,
		    const struct ward_escalation *e,
		    enum ward_escalation_verdict v, ward_policy *wide,
		    char *text)
{
	int err;

	err = record(e, "escalation/verdict",
		     json_pack("{s:s, s:s*}", "verdict",
			       ward_escalation_verdict_name(v), "text", text));
	free(text);
	if (err) {
		ward_policy_free(wide);
		return err;
	}
	if (wide)
		*granted = wide;
	*verdict = v;
	return 0;
}

/*
 * A network escalation: the same steps and records as a mode's, with the
 * network asked for (a host or on) in place of the mode, and its own texts.
 */
static int authorize_network(ward_policy **granted,
			     enum ward_escalation_verdict *verdict,
			     const ward_policy *base,
			     const struct ward_escalation *e)
{
	enum ward_escalation_verdict v;
	ward_policy *wide = NULL;
	json_t *justification;
	char what[320], *text = NULL;
	int err;

	if (e->net_host && ward_network_pattern_check(e->net_host) != 0)
		return ward_err(WARD_EINVAL, "network escalation: %s",
				ward_error_last());
	if (e->net_host && e->net_host[0] == '*')
		return ward_err(WARD_EINVAL,
				"network escalation: ask for one host, not a "
				"pattern (\"%s\")",
				e->net_host);
	err = check_request(&justification, e);
	if (err)
		return err;
	err = record(e, "escalation/request",
		     json_pack("{s:s, s:s, s:s?, s:o, s:s}", "network_from",
			       ward_network_name(ward_policy_network(base)),
			       "network", e->net_host ? "allowlist" : "on",
			       "host", e->net_host, "justification",
			       justification, "subject",
			       ward_subject_name(e->subject)));
	if (err)
		return err;
	err = decide(e, base, ward_escalation_network_is_wider(base, e->net_host),
		     &v);
	if (err)
		return err;
	net_what(what, sizeof(what), e);
	if (v == WARD_ESCALATION_GRANTED) {
		err = ward_policy_with_network(
		    &wide, base,
		    e->net_host ? WARD_NETWORK_ALLOWLIST : WARD_NETWORK_ON,
		    e->net_host ? (char *const[]){(char *)e->net_host, NULL}
				: NULL);
		if (err)
			return err;
	}
	err = ward_render_network_verdict(&text, WARD_SURFACE_API, v,
					  e->subject, what);
	if (err) {
		ward_policy_free(wide);
		return err;
	}
	return conclude(granted, verdict, e, v, wide, text);
}

int ward_escalation_authorize(ward_policy **granted,
			      enum ward_escalation_verdict *verdict,
			      const ward_policy *base,
			      const struct ward_escalation *e)
{
	enum ward_escalation_verdict v;
	enum ward_mode from;
	ward_policy *wide = NULL;
	json_t *justification;
	char *text = NULL;
	int err;

	if (!granted || !verdict || !base || !e)
		return ward_err(WARD_EINVAL, "escalation: missing argument");
	if (e->version >= 2 && e->network)
		return authorize_network(granted, verdict, base, e);
	if (e->version < 1 || e->version > WARD_ESCALATION_VERSION)
		return ward_bad_version("escalation", e->version,
					WARD_ESCALATION_VERSION);
	if ((unsigned)e->requested > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL, "escalation to unknown mode %d",
				(int)e->requested);
	err = check_request(&justification, e);
	if (err)
		return err;
	from = ward_policy_mode(base);
	err = record(e, "escalation/request",
		     json_pack("{s:s, s:o, s:s}", "from", ward_mode_name(from),
			       "justification", justification, "subject",
			       ward_subject_name(e->subject)));
	if (err)
		return err;

	err = decide(e, base, ward_escalation_is_wider(from, e->requested), &v);
	if (err)
		return err;

	if (v == WARD_ESCALATION_GRANTED) {
		err = widen(&wide, base, e->requested);
		if (err)
			return err;
	} else {
		err = ward_render_verdict(&text, v, e->subject, e->requested);
		if (err)
			return err;
	}
	return conclude(granted, verdict, e, v, wide, text);
}

int ward_escalation_init(struct ward_escalation *e, unsigned version)
{
	const struct ward_escalation init = WARD_ESCALATION_INIT;

	if (!e)
		return ward_err(WARD_EINVAL, "escalation: NULL");
	if (version != WARD_ESCALATION_VERSION)
		return ward_bad_version("escalation", version,
					WARD_ESCALATION_VERSION);
	*e = init;
	return 0;
}

/* --- the approval question (person-facing) ------------------------------ */

/* The label of one field of an approval text: "  LABEL           " on the
 * terminal, "LABEL: " elsewhere. */
static void approval_label(FILE *m, bool tty, const char *label)
{
	if (tty)
		fprintf(m, "\n  %-15s ", label);
	else
		fprintf(m, "\n%s: ", label);
}

/*
 * The justification, at most WARD_APPROVAL_JUSTIFICATION_SHOWN bytes of
 * it, cut where a character starts, escaped; then what was cut.
 */
static int approval_justification(FILE *m, bool tty, const char *text)
{
	size_t len = text ? strlen(text) : 0, n = len;
	char *head;
	int err;

	if (n > WARD_APPROVAL_JUSTIFICATION_SHOWN) {
		n = WARD_APPROVAL_JUSTIFICATION_SHOWN;
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	head = strndup(text ? text : "", n);
	if (!head)
		return -ENOMEM;
	approval_label(m, tty, "justification");
	err = ward_escalation_put(m, head);
	free(head);
	if (!err && n < len)
		fprintf(m, " [… %zu more bytes not shown]", len - n);
	return err;
}

int ward_escalation_question(char **out,
			     const struct ward_approval_request *req,
			     enum ward_surface surface)
{
	bool tty = surface == WARD_SURFACE_CLI, op;
	const char *what;
	char *text = NULL;
	size_t len = 0;
	int err;
	FILE *m;

	if (!out || !req)
		return ward_err(WARD_EINVAL, "approval text: no request");
	what = ward_subject_name(req->subject);
	op = req->subject == WARD_SUBJECT_OPERATION;
	m = open_memstream(&text, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	fprintf(m, "%sward: this %s asks for a wider sandbox, once%s",
		tty ? "\n" : "", what, tty ? "" : ".");
	err = approval_justification(m, tty, req->justification);
	approval_label(m, tty, "directory");
	err = err ? err : ward_escalation_put(m, req->cwd);
	if (req->network) {
		approval_label(m, tty, "network");
		fputs(ward_network_name(req->net_current), m);
		approval_label(m, tty, "requested");
		fputs(req->net_host ? "network access to " : "on", m);
		err = err ? err : ward_escalation_put(m, req->net_host);
	} else {
		approval_label(m, tty, "current mode");
		fputs(ward_mode_name(req->current), m);
		approval_label(m, tty, "requested mode");
		fputs(ward_mode_name(req->requested), m);
	}
	if (req->session_id) {
		approval_label(m, tty, "session");
		err = err ? err : ward_escalation_put(m, req->session_id);
	}
	/* What a yes grants: one call, and nothing it starts outlives it;
	 * for a file operation, the targets below and nothing else. */
	approval_label(m, tty, "grant");
	fputs(op ? "this call only, on the targets shown below and nothing "
		   "else"
		 : "this call only; every process it starts ends with it",
	      m);
	/* The command (or the operation and where each path leads) right
	 * before the question: whatever came before, the person reads it
	 * last. Never cut: it is what runs. */
	approval_label(m, tty, op ? "operation" : "command");
	err = err ? err : ward_escalation_put(m, req->summary);
	if (req->network) {
		fprintf(m, "\nAllow this %s, once, %s", what,
			req->net_host ? "network access to "
				      : "the whole network");
		err = err ? err : ward_escalation_put(m, req->net_host);
	} else {
		fprintf(m, "\nAllow this %s to run once under %s", what,
			ward_mode_name(req->requested));
	}
	fputs(surface == WARD_SURFACE_CLI   ? "? [y/N] "
	      : surface == WARD_SURFACE_MCP ? "? Accept with \"allow\" checked "
					      "to allow it; decline to refuse."
					    : "?",
	      m);
	if (fclose(m) != 0 || err || !text) {
		free(text);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = text;
	return 0;
}
