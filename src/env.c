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

bool ward_env_matches(const char *name, char *const *patterns)
{
	for (size_t i = 0; name && patterns && patterns[i]; i++)
		if (fnmatch(patterns[i], name, FNM_CASEFOLD) == 0)
			return true;
	return false;
}

int ward_env_scrub(char ***out, char ***dropped, char *const *envp,
		   char *const *drop, char *const *keep)
{
	struct ward_strv kept = {0}, gone = {0};
	char **o = NULL, **d = NULL;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL, "env: missing argument");
	if (!envp)
		envp = environ;
	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t n = eq ? (size_t)(eq - envp[i]) : strlen(envp[i]);
		char name[512];

		/* A name too long to judge is kept out: it is no ordinary
		 * variable. */
		if (n >= sizeof(name)) {
			ward_strv_push(&gone, "(a variable with a very long "
					      "name)");
			continue;
		}
		memcpy(name, envp[i], n);
		name[n] = '\0';
		if (ward_env_matches(name, drop) &&
		    !ward_env_matches(name, keep))
			ward_strv_push(&gone, name);
		else
			ward_strv_push(&kept, envp[i]);
	}
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
