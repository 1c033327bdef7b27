/*
 * ward — scrubbing the environment a command gets (see include/ward/env.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ward/env.h"

extern char **environ;

/*
 * The names under which tokens, keys, passwords and cloud credentials
 * usually travel, matched ignoring case. Mostly by suffix or prefix with an
 * underscore, so ordinary variables (PATH, HOME, TERM, KEYTIMEOUT) are left
 * alone; the words that mean a credential wherever they stand (AUTH, CRED,
 * JWT, DSN, WEBHOOK, COOKIE, PASSPHRASE, PRIVATE_KEY) anywhere.
 */
static char *const default_drop[] = {
    "*_TOKEN",
    "*_TOKEN_*",
    "TOKEN",
    "*_SECRET",
    "*_SECRET_*",
    "SECRET_*",
    "SECRET",
    "*_KEY",
    "*_KEYS",
    "*_API_KEY_*",
    "*_ACCESS_KEY_*",
    "*PRIVATE_KEY*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_PAT",
    "*CRED*",
    "AWS_*",
    "AZURE_CLIENT_SECRET",
    "*AUTH*",
    "*JWT*",
    "*DSN*",
    "*WEBHOOK*",
    "*COOKIE*",
    "*PASSPHRASE*",
    NULL,
};

/*
 * Names the built-in patterns catch although they hold no secret, which
 * tools need: the ssh agent's socket (a path: connecting to it is the
 * supervisor's to judge, never a string to leak), X's authority file (a
 * path too), and the authors git and packaging tools record. Only the
 * built-in patterns spare them: a pattern of the user's (env.drop) drops
 * them all the same, and their values are judged like every other's.
 */
static const char *const benign[] = {
    "SSH_AUTH_SOCK", "XAUTHORITY",    "*AUTHOR",      "*AUTHORS",
    "*AUTHOR_NAME",  "*AUTHOR_EMAIL", "*AUTHOR_DATE", NULL,
};

char *const *ward_env_default_drop(void)
{
	return default_drop;
}

bool ward_env_pattern_valid(const char *pattern)
{
	size_t n;

	if (!pattern)
		return false;
	n = strlen(pattern);
	return n > 0 && n <= 256 &&
	       strspn(pattern,
		      "abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_*?[]!-") == n;
}

/* @s in upper case into @buf (ASCII: names and patterns are ASCII).
 * False when it does not fit. */
static bool upper(char *buf, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++) {
		if (i + 1 >= len)
			return false;
		buf[i] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 32) : s[i];
	}
	buf[i] = '\0';
	return true;
}

/* Leads a folded pattern that needs fnmatch (a byte no pattern has). */
#define GLOB_MARK '\x01'

/*
 * Whether @name matches @pat. A pattern of literals and '*' (every
 * default one) is matched here: its first literal run must start @name,
 * its last must end it, and the ones between must occur in order —
 * leftmost occurrence is always the right choice for '*'. Others ('?',
 * brackets) go to fnmatch.
 */
static bool star_match(const char *pat, const char *name)
{
	const char *star, *p = pat, *n = name;
	size_t k, len;

	if (*pat == GLOB_MARK)
		return fnmatch(pat + 1, name, 0) == 0;
	star = strchr(p, '*');
	if (!star)
		return strcmp(p, n) == 0;
	k = (size_t)(star - p);
	if (strncmp(p, n, k) != 0)
		return false;
	n += k;
	p = star + 1;
	/* The literal runs between stars, leftmost first. */
	while ((star = strchr(p, '*')) != NULL) {
		char run[257];
		const char *at;

		k = (size_t)(star - p);
		if (k) {
			memcpy(run, p, k);
			run[k] = '\0';
			at = strstr(n, run);
			if (!at)
				return false;
			n = at + k;
		}
		p = star + 1;
	}
	/* The last run must end the name (and not overlap what matched). */
	k = strlen(p);
	len = strlen(n);
	return len >= k && strcmp(n + len - k, p) == 0;
}

/*
 * Whether upper-case @name matches one of @patterns, already in upper
 * case. Folding both sides once and matching exactly is the same as
 * FNM_CASEFOLD for ASCII, and several times cheaper (musl folds every
 * character of every attempt through the wide-character tables: ~0.4 ms
 * per command for an ordinary environment).
 */
static bool matches_upper(const char *name, char *const *patterns)
{
	for (size_t i = 0; patterns && patterns[i]; i++)
		if (star_match(patterns[i], name))
			return true;
	return false;
}

/* @patterns in upper case (one allocation, freed with free()), those
 * that need fnmatch marked with GLOB_MARK; NULL when out of memory.
 * Patterns are at most 256 bytes (ward_env_pattern_valid). */
static char **upper_all(char *const *patterns)
{
	size_t n = 0, i;
	char **v, *p;

	while (patterns && patterns[n])
		n++;
	v = malloc((n + 1) * sizeof(*v) + n * 258);
	if (!v)
		return NULL;
	p = (char *)(v + n + 1);
	for (i = 0; i < n; i++, p += 258) {
		v[i] = p;
		p[0] = GLOB_MARK;
		if (!upper(p + 1, 257, patterns[i]))
			p[1] = '\0'; /* an invalid pattern matches nothing */
		else if (!strpbrk(p + 1, "?[]!-"))
			v[i] = p + 1;
	}
	v[n] = NULL;
	return v;
}

/* --- values that look like credentials ------------------------------- */

/* A character of a token: what the prefixes below are followed by. */
static bool token_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/*
 * The well-known prefixes of issued tokens, each with the number of token
 * characters that must follow (so a path like /opt/sk-tools or a locale
 * like sk_SK is no token) and, for the AWS key ids, the exact length and
 * alphabet (upper case and digits).
 */
static const struct token_kind {
	const char *prefix;
	unsigned min; /* token characters after the prefix, at least */
	bool exact;   /* exactly @min upper-case letters or digits */
	const char *what;
} token_kinds[] = {
    {"ghp_", 30, false, "a GitHub token (ghp_…)"},
    {"gho_", 30, false, "a GitHub token (gho_…)"},
    {"ghu_", 30, false, "a GitHub token (ghu_…)"},
    {"ghs_", 30, false, "a GitHub token (ghs_…)"},
    {"ghr_", 30, false, "a GitHub token (ghr_…)"},
    {"github_pat_", 20, false, "a GitHub token (github_pat_…)"},
    {"glpat-", 20, false, "a GitLab token (glpat-…)"},
    {"xoxa-", 10, false, "a Slack token (xoxa-…)"},
    {"xoxb-", 10, false, "a Slack token (xoxb-…)"},
    {"xoxp-", 10, false, "a Slack token (xoxp-…)"},
    {"xoxr-", 10, false, "a Slack token (xoxr-…)"},
    {"xoxs-", 10, false, "a Slack token (xoxs-…)"},
    {"sk-", 20, false, "a secret API key (sk-…)"},
    {"sk_live_", 16, false, "a Stripe key (sk_live_…)"},
    {"rk_live_", 16, false, "a Stripe key (rk_live_…)"},
    {"AKIA", 16, true, "an AWS access key id (AKIA…)"},
    {"ASIA", 16, true, "an AWS access key id (ASIA…)"},
    {"AIza", 30, false, "a Google API key (AIza…)"},
    {"npm_", 30, false, "an npm token (npm_…)"},
    {"hf_", 30, false, "a Hugging Face token (hf_…)"},
    {"pypi-", 50, false, "a PyPI token (pypi-…)"},
};

/* Whether a token of @k starts at @p (a word start). */
static bool token_at(const char *p, const struct token_kind *k)
{
	size_t n = strlen(k->prefix), i = 0;

	if (strncmp(p, k->prefix, n) != 0)
		return false;
	p += n;
	if (k->exact) {
		for (; i < k->min; i++)
			if (!((p[i] >= 'A' && p[i] <= 'Z') ||
			      (p[i] >= '0' && p[i] <= '9')))
				return false;
		return !token_char(p[i]);
	}
	while (token_char(p[i]))
		i++;
	return i >= k->min;
}

/* base64url characters from @p: how many. */
static size_t b64url_run(const char *p)
{
	size_t n = 0;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
	       (p[n] >= '0' && p[n] <= '9') || p[n] == '_' || p[n] == '-')
		n++;
	return n;
}

/* A JWT at @p: "eyJ…" (a JSON header), '.', a payload, '.' (the
 * signature may be empty: alg none). */
static bool jwt_at(const char *p)
{
	size_t h, b;

	if (strncmp(p, "eyJ", 3) != 0)
		return false;
	h = b64url_run(p);
	if (h < 10 || p[h] != '.')
		return false;
	b = b64url_run(p + h + 1);
	return b >= 10 && p[h + 1 + b] == '.';
}

/* A URL whose user information holds a password: scheme://user:pw@… */
static bool url_password_at(const char *p)
{
	const char *u = p + 3, *colon;
	size_t n = strcspn(u, "/?#@ \t");

	if (strncmp(p, "://", 3) != 0 || u[n] != '@')
		return false;
	colon = memchr(u, ':', n);
	return colon && colon + 1 < u + n;
}

/*
 * What @value looks like when it looks like a credential: a URL with a
 * password, a JWT, a PEM private key, or a token with a well-known prefix
 * anywhere in it at a word start ("Bearer ghp_…"). NULL otherwise.
 */
static const char *value_shape(const char *value)
{
	const char *begin = strstr(value, "-----BEGIN ");

	if (begin && strstr(begin, "PRIVATE KEY"))
		return "a PEM private key";
	for (const char *p = value; *p; p++) {
		if (p[0] == ':' && url_password_at(p))
			return "a URL with a password";
		if (p > value && token_char(p[-1]))
			continue;
		if (jwt_at(p))
			return "a JWT";
		for (size_t i = 0;
		     i < sizeof(token_kinds) / sizeof(token_kinds[0]); i++)
			if (token_at(p, &token_kinds[i]))
				return token_kinds[i].what;
	}
	return NULL;
}

/* Whether @pattern (upper case) is one of the built-in ones. */
static bool is_default(const char *pattern)
{
	for (size_t i = 0; default_drop[i]; i++)
		if (strcmp(default_drop[i], pattern) == 0)
			return true;
	return false;
}

static bool is_benign(const char *name)
{
	for (size_t i = 0; benign[i]; i++)
		if (star_match(benign[i], name))
			return true;
	return false;
}

/*
 * Why the variable @name (upper case @up) with @value is dropped under
 * the upper-case @udrop (whose originals are @drop) and @ukeep: NULL when
 * it is kept, else a phrase in @buf that never holds the value. A keep
 * pattern wins over both a name and a value.
 */
static const char *judge(char *buf, size_t len, const char *up,
			 const char *value, char *const *udrop,
			 char *const *drop, char *const *ukeep)
{
	const char *shape;

	if (matches_upper(up, ukeep))
		return NULL;
	for (size_t i = 0; udrop && udrop[i]; i++) {
		if (!star_match(udrop[i], up) ||
		    (is_default(udrop[i]) && is_benign(up)))
			continue;
		snprintf(buf, len, "name matches %s", drop[i]);
		return buf;
	}
	shape = value ? value_shape(value) : NULL;
	if (!shape)
		return NULL;
	snprintf(buf, len, "value looks like %s", shape);
	return buf;
}

bool ward_env_matches(const char *name, char *const *patterns)
{
	char up[512], **pv;
	bool hit;

	if (!name || !patterns || !upper(up, sizeof(up), name))
		return false;
	pv = upper_all(patterns);
	if (!pv) { /* out of memory: the slow way */
		for (size_t i = 0; patterns[i]; i++)
			if (fnmatch(patterns[i], name, FNM_CASEFOLD) == 0)
				return true;
		return false;
	}
	hit = matches_upper(up, pv);
	free(pv);
	return hit;
}

/*
 * Split @entry ("NAME=VALUE") into @up (the name in upper case, @len bytes)
 * and its value (NULL without '='). False for a name too long to judge.
 */
static bool split_entry(char *up, size_t len, const char *entry,
			const char **value)
{
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
	char name[512];

	if (n >= sizeof(name) || n >= len)
		return false;
	memcpy(name, entry, n);
	name[n] = '\0';
	upper(up, len, name);
	*value = eq ? eq + 1 : NULL;
	return true;
}

const char *ward_env_judge(char *buf, size_t len, const char *entry,
			   char *const *drop, char *const *keep)
{
	char up[512], **udrop, **ukeep;
	const char *value, *why;

	if (!buf || !len || !entry)
		return NULL;
	if (!split_entry(up, sizeof(up), entry, &value)) {
		snprintf(buf, len, "a very long name");
		return buf;
	}
	udrop = upper_all(drop);
	ukeep = upper_all(keep);
	if (!udrop || !ukeep) {
		/* Out of memory: dropped, as nothing could be judged. */
		snprintf(buf, len, "not judged (out of memory)");
		why = buf;
	} else {
		why = judge(buf, len, up, value, udrop, drop, ukeep);
	}
	free(udrop);
	free(ukeep);
	return why;
}

int ward_env_scrub(char ***out, char ***dropped, char *const *envp,
		   char *const *drop, char *const *keep)
{
	struct ward_strv kept = {0}, gone = {0};
	char **o = NULL, **d = NULL, **udrop, **ukeep;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL, "env: missing argument");
	if (!envp)
		envp = environ;
	udrop = upper_all(drop);
	ukeep = upper_all(keep);
	if (!udrop || !ukeep) {
		free(udrop);
		free(ukeep);
		return ward_err(-ENOMEM, "out of memory");
	}
	for (size_t i = 0; envp && envp[i]; i++) {
		char up[512], why[300];
		const char *value;

		/* A name too long to judge is kept out: it is no ordinary
		 * variable. */
		if (!split_entry(up, sizeof(up), envp[i], &value)) {
			ward_strv_push(&gone, "(a variable with a very long "
					      "name)");
			continue;
		}
		if (judge(why, sizeof(why), up, value, udrop, drop, ukeep)) {
			size_t n = strcspn(envp[i], "=");
			char *name = strndup(envp[i], n);

			ward_strv_push(&gone, name ? name : "(out of memory)");
			free(name);
		} else {
			ward_strv_push(&kept, envp[i]);
		}
	}
	free(udrop);
	free(ukeep);
	err = ward_strv_finish(&o, &kept);
	if (err) {
		ward_strv_discard(&gone);
		return ward_err(-ENOMEM, "out of memory");
	}
	if (!dropped) {
		ward_strv_discard(&gone);
	} else if (ward_strv_finish(&d, &gone) != 0) {
		ward_strv_free(o);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = o;
	if (dropped)
		*dropped = d;
	return 0;
}
