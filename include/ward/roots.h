/*
 * ward — the ONE function that derives writable roots from a policy.
 *
 * Every runner profile and the in-process file fence take the writable set
 * from here; nothing else may define it.
 */
#ifndef WARD_ROOTS_H
#define WARD_ROOTS_H

#include "common.h"
#include "policy.h"

WARD_BEGIN_DECL

/**
 * ward_roots_writable - the writable roots of @policy, as a NULL-terminated
 * vector of absolute canonical paths, without duplicates, in this order:
 *
 *   read-only:           none at all (an empty vector; only /dev/null stays
 *                        writable, and that is each runner's business)
 *   workspace-write:     workspace root, /tmp, the captured $TMPDIR when set,
 *                        different, and a directory the caller owns under
 *                        /tmp, /var/tmp or $XDG_RUNTIME_DIR (any other is
 *                        left out, and the plan's warnings name it), then
 *                        each `rw` access rule of the policy, in load order
 *   danger-full-access:  "/" alone
 *
 * A root that does not exist (or cannot be resolved) is left out: a runner
 * cannot grant it and the fence has nothing under it. The caller frees *out
 * with ward_strv_free().
 */
WARD_EXTERN int ward_roots_writable(char ***out, const ward_policy *policy);

WARD_END_DECL

#endif
