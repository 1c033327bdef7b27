/*
 * ward — building a call's denial report (internal to libward; the public
 * types are in include/ward/denial.h).
 *
 * A set of entries is judged against the policy of the call: a path is
 * reported only when the plan forbids what was tried there (a `--` or
 * `r-` rule, a protected path, a place outside the writable roots), so a
 * plain permission error inside a writable root is never called a denial.
 */
#ifndef WARD_DENIAL_INTERNAL_H
#define WARD_DENIAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/ward.h"

/* At most this many entries per call; the rest are counted. */
#define WARD_DENIALS_MAX 32

/* A growable set of entries; every string is owned by the set. */
struct ward_facts;

struct ward_denial_set {
	struct ward_denial *v;
	size_t n, cap;
	size_t more; /* entries past WARD_DENIALS_MAX */
	bool oom;
};

/* What the judging needs: the call's policy, cwd and mode source. */
struct ward_denial_ctx {
	const ward_policy *policy;
	const char *cwd;	 /* for relative paths */
	const char *mode_source; /* where the mode was set (text) */
	bool fence;		 /* the fence's (in the harness), not a run */
	/* The runner the command ran under: a line of its network dialect
	 * (ward_network_signatures) names no file. NONE: no such lines. */
	enum ward_runner runner;
	/* The call's facts (facts.h: its roots and protected paths), or
	 * NULL: then each judgement computes them. */
	const struct ward_facts *facts;
};

/* Why a path was refused, as the command's error output says. */
enum ward_denial_errno {
	WARD_DENIAL_EACCES = 0,
	WARD_DENIAL_EROFS,
	WARD_DENIAL_EPERM,
	WARD_DENIAL_ENOENT,
	/* A replace or remove of a mount point: a protected path that bwrap
	 * (or the launcher) binds read-only cannot be renamed over, so
	 * `git config` (which writes config.lock, then renames it) fails
	 * with EBUSY, not EROFS. */
	WARD_DENIAL_EBUSY,
	WARD_DENIAL_EKNOWN, /* a source that knows it was refused (fence) */
};

void ward_denial_set_clear(struct ward_denial_set *set);

/*
 * ward_denial_judge - judge @path (absolute, or relative to the cwd) for
 * @op (NULL: unknown) refused with @why, and add an entry when the plan
 * explains the refusal. Returns whether one was added (or merged).
 */
bool ward_denial_judge(struct ward_denial_set *set,
		       const struct ward_denial_ctx *ctx, const char *path,
		       const char *op, enum ward_denial_errno why,
		       enum ward_denial_how how);

/*
 * ward_denials_from_output - derive entries from a command's error output
 * (@len bytes, not NUL-terminated): every line that reports a refusal,
 * every path it names.
 */
void ward_denials_from_output(struct ward_denial_set *set,
			      const struct ward_denial_ctx *ctx,
			      const char *text, size_t len);

/*
 * ward_denial_add_unknown - an entry without a path (the runner's
 * signature said "denied" but no path could be told): cause mode.
 */
void ward_denial_add_unknown(struct ward_denial_set *set,
			     const struct ward_denial_ctx *ctx);

#endif
