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
 * usually travel. Deliberately by suffix or prefix with an underscore, so
 * ordinary variables (PATH, HOME, TERM, SSH_AUTH_SOCK, KEYTIMEOUT) are
 * left alone; matched ignoring case.
 */
static char *const default_drop[] = {
    "*_TOKEN",	    "*_TOKEN_*",     "TOKEN",	       "*_SECRET",
    "*_SECRET_*",   "SECRET_*",	     "SECRET",	       "*_KEY",
    "*_KEYS",	    "*_API_KEY_*",   "*_ACCESS_KEY_*", "*_PRIVATE_KEY_*",
    "*PASSWORD*",   "*PASSWD*",	     "*_PASS",	       "*_PAT",
    "*_CREDENTIAL", "*_CREDENTIALS", "AWS_*",	       "AZURE_CLIENT_SECRET",
    NULL,
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
		const char *eq = strchr(envp[i], '=');
		size_t n = eq ? (size_t)(eq - envp[i]) : strlen(envp[i]);
		char name[512], up[512];

		/* A name too long to judge is kept out: it is no ordinary
		 * variable. */
		if (n >= sizeof(name)) {
			ward_strv_push(&gone, "(a variable with a very long "
					      "name)");
			continue;
		}
		memcpy(name, envp[i], n);
		name[n] = '\0';
		upper(up, sizeof(up), name);
		if (matches_upper(up, udrop) && !matches_upper(up, ukeep))
			ward_strv_push(&gone, name);
		else
			ward_strv_push(&kept, envp[i]);
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
