/*
 * ward — the environment a command gets: variables whose names look like
 * secrets are dropped before it runs.
 *
 * A sandbox that keeps a command from reading ~/.aws/credentials does
 * little when AWS_SECRET_ACCESS_KEY is in the command's environment. So
 * every call (ward run, ward mcp, a harness through ward_call) runs with
 * a scrubbed copy of the environment: a variable is dropped when its name
 * matches a drop pattern and no keep pattern. Patterns are shell globs
 * (`*`, `?`, `[…]`) matched against the whole name, ignoring case. The
 * built-in drop patterns (ward_env_default_drop) catch the usual names of
 * tokens, keys, passwords and cloud credentials; ward.yml's `env` key adds
 * drop and keep patterns, and `--env-keep NAME` keeps one for a call (see
 * ward-config(5)).
 *
 * Values are judged too: a variable whose value looks like a credential
 * (a URL with a password, a JWT, a PEM private key, a token with a
 * well-known prefix: ghp_, github_pat_, glpat-, xox[abprs]-, sk-, AKIA,
 * ASIA, AIza, npm_, …) is dropped whatever its name. A keep pattern wins
 * over both. Only names and the rule that dropped them are reported, never
 * a value.
 */
#ifndef WARD_ENV_H
#define WARD_ENV_H

#include <stdbool.h>

#include "common.h"

WARD_BEGIN_DECL

/**
 * ward_env_default_drop - the built-in drop patterns, NULL-terminated.
 * Static storage.
 */
WARD_EXTERN char *const *ward_env_default_drop(void);

/**
 * ward_env_pattern_valid - whether @pattern can name variables: 1 to 256
 * characters of letters, digits, `_` and the glob characters `*?[]!-`.
 */
WARD_EXTERN bool ward_env_pattern_valid(const char *pattern);

/**
 * ward_env_matches - whether the variable name @name matches one of
 * @patterns (NULL-terminated; NULL: none), ignoring case.
 */
WARD_EXTERN bool ward_env_matches(const char *name, char *const *patterns);

/**
 * ward_env_judge - why the variable @entry ("NAME=VALUE") would be dropped
 * under @drop and @keep, as ward_env_scrub() judges it: NULL when it is
 * kept, else @buf (@len bytes) holding "name matches PATTERN" or "value
 * looks like a JWT" (the kind, never the value). The built-in patterns
 * spare SSH_AUTH_SOCK, XAUTHORITY and the authors' names git and packaging
 * tools use (GIT_AUTHOR_NAME, …: `*AUTHOR`, `*AUTHOR_NAME`, …); a pattern
 * of the caller's does not.
 */
WARD_EXTERN const char *ward_env_judge(char *buf, size_t len, const char *entry,
				       char *const *drop, char *const *keep);

/**
 * ward_env_scrub - a copy of @envp (NAME=VALUE strings, NULL-terminated;
 * NULL: the process environment) without every variable that
 * ward_env_judge() drops: its name matches a @drop pattern, or its value
 * looks like a credential, and no @keep pattern matches its name. *out
 * (strings copied) and *dropped (the names dropped, in order; may be
 * NULL) are freed by the caller with ward_strv_free(). Returns 0 or
 * -ENOMEM.
 */
WARD_EXTERN int ward_env_scrub(char ***out, char ***dropped, char *const *envp,
			       char *const *drop, char *const *keep);

WARD_END_DECL

#endif
