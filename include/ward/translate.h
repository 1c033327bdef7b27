/*
 * ward — how each runner applies a policy's access rules and protected
 * paths, and what it cannot express.
 *
 * The profiles (profile.h) apply the rules; this module says what they
 * did, for `ward config check` and for `ward run` to print before it runs:
 * every rule a runner cannot express exactly is named in a warning, never
 * left as a silent gap (the fs fence applies every rule exactly, in every
 * mode, whatever the runner).
 *
 * Per runner (see docs/RUNNERS.md, "Access rules"):
 *   seatbelt  everything: deny rules after the allows.
 *   bwrap     `rw` a bind; `r-` a read-only bind after the writable ones;
 *             `--` an empty read-only tmpfs over a directory, /dev/null over
 *             a file. Globs expand to what exists at confine time (a
 *             bounded walk below the glob's literal prefix).
 *   landlock  `rw` a writable grant; `r-`/`--` outside every writable root
 *             are expressible (`--` by granting read on the siblings along
 *             the path instead of on its parent); inside one they are not.
 * Protected paths (ward's configuration and session store, the project's
 * .ward/, and under workspace-write the repository's hooks and config)
 * behave as `r-` rules that no `rw` can override.
 */
#ifndef WARD_TRANSLATE_H
#define WARD_TRANSLATE_H

#include "common.h"
#include "policy.h"
#include "runner.h"

WARD_BEGIN_DECL

/**
 * ward_policy_warnings - every way @runner falls short of @policy's access
 * rules and protected paths, one sentence each, naming the rule as written
 * (with its file and line when known) or the protected path, and the
 * runner. An empty vector when the runner applies everything exactly.
 *
 * For WARD_RUNNER_NONE (danger-full-access: not confined) the warning says
 * that `r-`/`--` rules reach only the fs fence. WARD_RUNNER_CUSTOM is
 * treated as bwrap.
 *
 * Globs are expanded against the file system exactly as at confine time
 * (bounded in entries and time); nothing on disk is changed. The caller
 * frees *out with ward_strv_free(). Returns 0 or -errno / WARD_EINVAL.
 */
WARD_EXTERN int ward_policy_warnings(char ***out, const ward_policy *policy,
				     enum ward_runner runner);

/**
 * ward_policy_describe - how @runner applies @policy's rules and protected
 * paths: one line per runner operation with what it is for, e.g.
 *   --ro-bind /ws/.git/hooks /ws/.git/hooks  (protected: git hooks)
 *   (deny file-read* file-write* (subpath "/ws/secrets"))  (rule "-- secrets")
 * and a line for every rule that needs no operation (and why). For
 * `ward config check`. The caller frees *out with ward_strv_free().
 */
WARD_EXTERN int ward_policy_describe(char ***out, const ward_policy *policy,
				     enum ward_runner runner);

/**
 * ward_policy_partial - the rules and protected paths of @policy that
 * @runner does not enforce at all, one sentence each (a subset of
 * ward_policy_warnings): when it is not empty, a call under @policy on
 * @runner has enforcement `partial` (ward_plan_partial says the same for
 * one call's plan). The caller frees *out with ward_strv_free().
 */
WARD_EXTERN int ward_policy_partial(char ***out, const ward_policy *policy,
				    enum ward_runner runner);

WARD_END_DECL

#endif
