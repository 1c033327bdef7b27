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
#include "proxy_internal.h"
#include "util/util.h"
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

/* --- display escaping ------------------------------------------------------ */

/* Inclusive ranges of code points that show nothing a person can read. */
static const struct {
	unsigned lo, hi;
} hidden_ranges[] = {
    {0x0080, 0x009f},	 /* C1 controls */
    {0x00a0, 0x00a0},	 /* no-break space */
    {0x00ad, 0x00ad},	 /* soft hyphen (Cf) */
    {0x034f, 0x034f},	 /* combining grapheme joiner */
    {0x0600, 0x0605},	 /* Arabic number signs (Cf) */
    {0x061c, 0x061c},	 /* Arabic letter mark (Cf) */
    {0x06dd, 0x06dd},	 /* Cf */
    {0x070f, 0x070f},	 /* Cf */
    {0x0890, 0x0891},	 /* Cf */
    {0x08e2, 0x08e2},	 /* Cf */
    {0x115f, 0x1160},	 /* Hangul fillers */
    {0x1680, 0x1680},	 /* Ogham space */
    {0x17b4, 0x17b5},	 /* Khmer inherent vowels (invisible) */
    {0x180b, 0x180f},	 /* Mongolian variation selectors, vowel sep. */
    {0x2000, 0x200f},	 /* spaces, zero-width space/joiners, LRM/RLM */
    {0x2028, 0x202f},	 /* line/paragraph separators, bidi embeddings
			   and overrides, narrow no-break space */
    {0x205f, 0x206f},	 /* math space, word joiner, invisible operators,
			   bidi isolates, deprecated format characters */
    {0x2800, 0x2800},	 /* braille blank */
    {0x3000, 0x3000},	 /* ideographic space */
    {0x3164, 0x3164},	 /* Hangul filler */
    {0xe000, 0xf8ff},	 /* private use */
    {0xfdd0, 0xfdef},	 /* noncharacters */
    {0xfe00, 0xfe0f},	 /* variation selectors */
    {0xfeff, 0xfeff},	 /* zero-width no-break space / BOM (Cf) */
    {0xffa0, 0xffa0},	 /* halfwidth Hangul filler */
    {0xfff0, 0xfffb},	 /* specials, interlinear annotation (Cf) */
    {0x110bd, 0x110bd},	 /* Cf */
    {0x110cd, 0x110cd},	 /* Cf */
    {0x13430, 0x1343f},	 /* Egyptian format controls (Cf) */
    {0x1bca0, 0x1bca3},	 /* shorthand format controls (Cf) */
    {0x1d173, 0x1d17a},	 /* musical format controls (Cf) */
    {0xe0000, 0xe007f},	 /* tag characters */
    {0xe0100, 0xe01ef},	 /* variation selectors supplement */
    {0xf0000, 0x10ffff}, /* supplementary private use */
};

static bool hidden_cp(unsigned cp)
{
	if ((cp & 0xfffe) == 0xfffe)
		return true; /* U+xFFFE, U+xFFFF: noncharacters */
	for (size_t i = 0; i < sizeof(hidden_ranges) / sizeof(hidden_ranges[0]);
	     i++) {
		if (cp >= hidden_ranges[i].lo && cp <= hidden_ranges[i].hi)
			return true;
	}
	return false;
}

int ward_escalation_escape(char **out, const char *text)
{
	const unsigned char *start = (const unsigned char *)(text ? text : "");
	const unsigned char *p = start;
	size_t len = strlen((const char *)start), o = 0;
	char *buf;

	if (!out)
		return ward_err(WARD_EINVAL, "escape: no output pointer");
	/* At most 10 bytes ("\U0010ffff") for every input byte. */
	buf = malloc(len * 10 + 1);
	if (!buf)
		return ward_err(-ENOMEM, "out of memory");
	while (*p) {
		unsigned cp = 0;
		size_t n;

		if (*p < 0x80) {
			if (*p < 0x20 || *p == 0x7f)
				o += (size_t)sprintf(buf + o, "\\x%02x", *p);
			else
				buf[o++] = (char)*p;
			p++;
			continue;
		}
		n = util_utf8_decode(&cp, p, len - (size_t)(p - start));
		if (n == 0) {
			o += (size_t)sprintf(buf + o, "\\x%02x", *p);
			p++;
			continue;
		}
		if (hidden_cp(cp)) {
			o += (size_t)sprintf(
			    buf + o, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		} else {
			memcpy(buf + o, p, n);
			o += n;
		}
		p += n;
	}
	buf[o] = '\0';
	*out = buf;
	return 0;
}

int ward_escalation_put(FILE *f, const char *text)
{
	char *e = NULL;
	int err;

	if (!text)
		return 0;
	err = ward_escalation_escape(&e, text);
	if (err)
		return err;
	fputs(e, f);
	free(e);
	return 0;
}

int ward_escalation_describe(char **out,
			     const struct ward_approval_request *req)
{
	const char *what;
	char *text = NULL;
	size_t len = 0;
	FILE *m;
	int err = 0;

	if (!out || !req)
		return ward_err(WARD_EINVAL, "describe: missing argument");
	what = ward_subject_name(req->subject);
	m = open_memstream(&text, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	fprintf(m, "ward: this %s asks to run once under a wider sandbox.\n",
		what);
	fprintf(m, "%s: ", what);
	err |= ward_escalation_put(m, req->summary);
	fprintf(m, "\ndirectory: ");
	err |= ward_escalation_put(m, req->cwd);
	if (req->network)
		fprintf(m, "\nnetwork: %s\nrequested: %s%s\njustification: ",
			ward_network_name(req->net_current),
			req->net_host ? "network access to " : "network on",
			req->net_host ? req->net_host : "");
	else
		fprintf(
		    m,
		    "\ncurrent mode: %s\nrequested mode: %s\njustification: ",
		    ward_mode_name(req->current),
		    ward_mode_name(req->requested));
	err |= ward_escalation_put(m, req->justification);
	if (req->session_id)
		fprintf(m, "\nsession: %s", req->session_id);
	if (fclose(m) != 0 || err || !text) {
		free(text);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = text;
	return 0;
}
