/*
 * ward — the plan: everything one call needs to confine a command,
 * computed once, as a value.
 *
 * A plan is made from a provider (which chooses the runner, probing at most
 * once per provider) and a policy: the runner and its enforcement, the
 * canonical writable roots, the protected paths, the access rules
 * translated for that runner (globs expanded once), every warning, and the
 * runner's argv or Landlock grants. Everything that consumes a call's
 * confinement — the executor, `ward confine`, the warnings printed before a
 * run, `ward config check` — reads the same plan, so what `ward confine`
 * prints is what `ward run` executes, and nothing is planned twice.
 *
 * Plan, then apply: making a plan changes nothing on disk. What the plan's
 * argv relies on (ward's own missing directories inside a writable root,
 * which bwrap binds read-only) is done by ward_plan_apply(), which the
 * executor calls before it spawns and `ward confine` before it prints.
 *
 * A plan borrows its policy: the policy must outlive it. A plan is
 * immutable once made (ward_plan_apply only creates directories), so it may
 * be read from several threads.
 */
#ifndef WARD_PLAN_H
#define WARD_PLAN_H

#include <stddef.h>

#include "common.h"
#include "policy.h"
#include "provider.h"
#include "runner.h"

WARD_BEGIN_DECL

typedef struct ward_plan ward_plan;

/**
 * ward_plan_new - plan the confinement of calls under @policy.
 *
 * danger-full-access is not confined: runner none, nothing else. Otherwise
 * @provider chooses the runner (a bwrap planted where a confined run could
 * write is refused before anything executes it) and the rules are
 * translated for it. Returns 0, WARD_EUNAVAILABLE (no runner can confine;
 * the detail names every candidate's reason), WARD_ERUNNER (the chosen
 * runner cannot be used: its binary is missing or lies inside a writable
 * root), WARD_EINVAL (a rule the runner would have to drop: ward refuses
 * rather than run without it), or -ENOMEM. The caller frees *out with
 * ward_plan_free().
 */
WARD_EXTERN int ward_plan_new(ward_plan **out, ward_provider *provider,
			      const ward_policy *policy);

/** ward_plan_free - free a plan. Accepts NULL. */
WARD_EXTERN void ward_plan_free(ward_plan *plan);

/** The policy the plan was made for (borrowed). */
WARD_EXTERN const ward_policy *ward_plan_policy(const ward_plan *plan);
WARD_EXTERN enum ward_mode ward_plan_mode(const ward_plan *plan);
WARD_EXTERN enum ward_runner ward_plan_runner(const ward_plan *plan);
/**
 * ward_plan_enforcement - full, partial or none (not confined). Partial
 * when the kernel cannot enforce every right (an old Landlock ABI) or when
 * some rule or protected path of the call is not enforced by the runner
 * (ward_plan_partial() says which, and why).
 */
WARD_EXTERN enum ward_enforcement ward_plan_enforcement(const ward_plan *plan);
/** Why enforcement is partial: one sentence each; empty when full. */
WARD_EXTERN char *const *ward_plan_partial(const ward_plan *plan);
/** The runner binary (absolute), or NULL for runner none. Owned. */
WARD_EXTERN const char *ward_plan_runner_path(const ward_plan *plan);
/**
 * ward_plan_network - the network the plan confines the command to
 * (network.h): off, an allowlist (the call's proxy endpoint is attached
 * when the command runs) or on.
 */
WARD_EXTERN enum ward_network ward_plan_network(const ward_plan *plan);
/** The canonical writable roots (roots.h), NULL-terminated. Owned. */
WARD_EXTERN char *const *ward_plan_roots(const ward_plan *plan);
/**
 * ward_plan_warnings - every way the runner falls short of the policy's
 * rules and protected paths, one sentence each (see translate.h), then
 * of its network (an allowlist under Landlock: docs/NETWORK.md). Owned by
 * the plan, NULL-terminated, possibly empty.
 */
WARD_EXTERN char *const *ward_plan_warnings(const ward_plan *plan);
/** How the runner applies the rules, one line per operation. Owned. */
WARD_EXTERN char *const *ward_plan_describe(const ward_plan *plan);
/** The runner's denial signature ("" for none). Static storage. */
WARD_EXTERN const char *ward_plan_denial_signature(const ward_plan *plan);

/**
 * ward_plan_argv - the argv that runs @argv confined by the plan, with
 * @cwd (NULL: the workspace root) as its working directory:
 *   bwrap      BWRAP <profile> --chdir CWD -- ARGV…
 *   landlock   LAUNCHER --ro … --rw … -- ARGV…   (the spawner chdirs)
 *   seatbelt   /usr/bin/sandbox-exec -p PROFILE -- ARGV…
 *   none       ARGV…
 * The executor runs exactly this vector, assembled by the same function
 * with the descriptors it alone holds (bwrap's `--json-status-fd 3` and
 * the Landlock layer's `--pid-fd 4` in place of `--die-with-parent`; the
 * launcher's `--shell-status --pid-fd 3`), each right after the binary
 * that reads it (docs/RUNNERS.md). The
 * caller frees *out with ward_strv_free(). WARD_EINVAL for a plan whose
 * network is an allowlist: the proxy that serves it lives only as long as
 * the call that runs the command (ward_call), so no argv printed for
 * another program could reach it.
 */
WARD_EXTERN int ward_plan_argv(char ***out, const ward_plan *plan,
			       char *const argv[], const char *cwd);

/**
 * ward_plan_apply - the side effects the plan's argv relies on (creating
 * ward's own missing directories inside a writable root, mode 0700, so
 * bwrap or the launcher can mount over them). Idempotent and thread-safe.
 * Returns 0 or WARD_ERUNNER (the confinement could not be set up: the
 * command must not run) with a detail naming the path and the errno.
 */
WARD_EXTERN int ward_plan_apply(const ward_plan *plan);

WARD_END_DECL

#endif
