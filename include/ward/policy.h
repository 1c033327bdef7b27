/*
 * ward — the execution policy: what one call runs under.
 *
 * A policy is mode + workspace root (+ the temporary directory captured when
 * the policy was made, + a session id when there is one). It travels with
 * every call, never with the provider: two calls may run under different
 * policies at the same moment. A policy is immutable once built, except for
 * the explicit setters below, which are meant to be used while building it.
 */
#ifndef WARD_POLICY_H
#define WARD_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "mode.h"
#include "network.h"
#include "rules.h"

WARD_BEGIN_DECL

typedef struct ward_policy ward_policy;

/**
 * ward_policy_new - build a policy.
 *
 * @workspace_root must name an existing directory; it is stored as an
 * absolute, canonical path (realpath). $TMPDIR is read once, here, and kept
 * (see ward_policy_set_tmpdir to override it). The caller owns *out and
 * frees it with ward_policy_free().
 *
 * Returns 0, WARD_EINVAL (bad mode), or -errno (the root cannot be resolved
 * or is not a directory); the detail names the path.
 */
WARD_EXTERN int ward_policy_new(ward_policy **out, enum ward_mode mode,
				const char *workspace_root);

/**
 * ward_policy_with_mode - a copy of @base (workspace, tmpdir, session,
 * rules, protections: everything) under another @mode. Used for an approved
 * escalation: a grant changes the mode and nothing else. The caller frees
 * *out with ward_policy_free(); the copy holds its own reference to the
 * same rules.
 */
WARD_EXTERN int ward_policy_with_mode(ward_policy **out,
				      const ward_policy *base,
				      enum ward_mode mode);

/** ward_policy_free - free a policy. Accepts NULL. */
WARD_EXTERN void ward_policy_free(ward_policy *policy);

/**
 * ward_policy_set_tmpdir - replace the captured $TMPDIR (NULL: none). The
 * path need not exist; writable roots that do not exist are left out.
 */
WARD_EXTERN int ward_policy_set_tmpdir(ward_policy *policy, const char *tmpdir);

/** ward_policy_set_session - attach a session id (NULL: none). */
WARD_EXTERN int ward_policy_set_session(ward_policy *policy,
					const char *session_id);

/**
 * ward_policy_set_rules - attach access rules (NULL: none). The policy
 * takes its own reference (ward_rules_ref), so the caller may free its
 * reference, or the configuration that owns the rules, at any time; the
 * rules must not be modified once attached. Copies made with
 * ward_policy_with_mode() share them.
 */
WARD_EXTERN int ward_policy_set_rules(ward_policy *policy,
				      const ward_rules *rules);
/** The attached rules or NULL. */
WARD_EXTERN const ward_rules *ward_policy_rules(const ward_policy *policy);

/**
 * ward_policy_set_protect_git - keep the workspace repository's persistence
 * traps (its hooks directory, its config file, a `.git` file, followed to
 * the real git directory) read-only under workspace-write, on every runner
 * that can express it and in the fs fence. On by default; only the user's
 * own configuration may turn it off (the config key `protect_git`), never
 * a project file. ward's own configuration directory, its session store
 * and the project's `.ward/` stay read-only regardless.
 */
WARD_EXTERN int ward_policy_set_protect_git(ward_policy *policy, bool protect);
/** Whether git protection is on (the default). */
WARD_EXTERN bool ward_policy_protect_git(const ward_policy *policy);

/**
 * ward_policy_set_unprotected - release protected paths: a git or trap
 * path (`.git/hooks`, `.vscode`, `.envrc`, … — see ward-config(5),
 * `unprotect`) that is one of @paths or lies beneath one is no longer
 * kept read-only under workspace-write. ward's own directories and the
 * project's `.ward/` are never released. Only the user's own
 * configuration may release a path (the config key `unprotect`), never a
 * project file. @paths: absolute paths, NULL-terminated (NULL or empty:
 * none); copied. Returns 0, WARD_EINVAL (a relative path) or -ENOMEM.
 */
WARD_EXTERN int ward_policy_set_unprotected(ward_policy *policy,
					    char *const *paths);
/** The released paths: NULL-terminated, possibly empty; owned. */
WARD_EXTERN char *const *ward_policy_unprotected(const ward_policy *policy);

/**
 * ward_policy_set_keep_new_repos - under workspace-write, a git repository
 * that appears during a call (a `.git` directory or file anywhere in the
 * workspace or an `rw` root, at the top of /tmp or $TMPDIR, a new
 * submodule or worktree link in a protected repository) is taken to the
 * quarantine by default: git would run what its configuration names at
 * the user's next `git status`. With @keep it stays (and the fs fence lets
 * one be made). Only the user's own configuration may say so (the config
 * key `keep_new_repos`, `--keep-new-repos`), never a project file.
 */
WARD_EXTERN int ward_policy_set_keep_new_repos(ward_policy *policy, bool keep);
WARD_EXTERN bool ward_policy_keep_new_repos(const ward_policy *policy);

/**
 * ward_policy_set_allow_home_workspace - accept a workspace that is `/`,
 * the home directory or one that holds it under workspace-write
 * (ward_policy_check_workspace() refuses it otherwise). The home
 * directory's startup files stay protected. Only the user may confirm it
 * (the config key `allow_home_workspace` in the user file,
 * `--allow-home-workspace`), never a project file.
 */
WARD_EXTERN int ward_policy_set_allow_home_workspace(ward_policy *policy,
						     bool allow);
WARD_EXTERN bool ward_policy_allow_home_workspace(const ward_policy *policy);

/**
 * ward_policy_check_workspace - whether @policy may run: under
 * workspace-write a workspace that is `/`, $HOME or a directory that holds
 * $HOME makes every file of the user writable, so it is refused unless
 * confirmed (ward_policy_set_allow_home_workspace). Returns 0 or
 * WARD_EINVAL with a detail that says why and what to pass (the one text
 * every front end shows).
 */
WARD_EXTERN int ward_policy_check_workspace(const ward_policy *policy);

/**
 * ward_policy_set_quarantine - the guard's quarantine (ward/quarantine.h):
 * at most @quota_bytes allocated in all (0: the default, 1024 MiB), boxes
 * kept @retention_s seconds (0: the default, 30 days). Returns 0 or
 * WARD_EINVAL.
 */
WARD_EXTERN int ward_policy_set_quarantine(ward_policy *policy,
					   uint64_t quota_bytes,
					   int64_t retention_s);
WARD_EXTERN uint64_t ward_policy_quarantine_quota(const ward_policy *policy);
WARD_EXTERN int64_t ward_policy_quarantine_retention(const ward_policy *policy);

/**
 * ward_policy_set_network - the call's network (network.h): off, on, or an
 * allowlist of @allow patterns (NULL-terminated, at least one) less the
 * @deny patterns (which win). @allow and @deny are copied; every pattern
 * is checked (ward_network_pattern_check). For off and on the lists are
 * kept but not used. A new policy's network is the default for its mode
 * (ward_network_default) and follows the mode (ward_policy_with_mode) until
 * this is called. Returns 0, WARD_EINVAL (an allowlist without a domain, a
 * bad pattern: the detail names it) or -ENOMEM.
 */
WARD_EXTERN int ward_policy_set_network(ward_policy *policy,
					enum ward_network network,
					char *const *allow, char *const *deny);
/** The network in force. */
WARD_EXTERN enum ward_network ward_policy_network(const ward_policy *policy);
/** Whether the network is the mode's default (never set explicitly). */
WARD_EXTERN bool ward_policy_network_default(const ward_policy *policy);
/** The allowed / denied patterns: NULL-terminated, possibly empty. Owned. */
WARD_EXTERN char *const *ward_policy_allow_domains(const ward_policy *policy);
WARD_EXTERN char *const *ward_policy_deny_domains(const ward_policy *policy);

/**
 * ward_policy_with_network - a copy of @base with another network: @network
 * and, for an allowlist, @base's allowed domains plus @add (NULL-terminated,
 * may be NULL). Used for an approved network escalation: a grant changes
 * the network and nothing else. The caller frees *out.
 */
WARD_EXTERN int ward_policy_with_network(ward_policy **out,
					 const ward_policy *base,
					 enum ward_network network,
					 char *const *add);

/**
 * ward_policy_set_allow_unix - unix sockets a confined command may connect
 * to (or send to) although they lie outside the writable roots or were
 * bound before the call: each of @paths names a socket, or a directory
 * whose sockets are all allowed (config key `allow_unix`, user file only;
 * `ward run --allow-unix PATH`). Without it a confined command reaches
 * only the sockets it bound itself in a writable root (see
 * docs/RUNNERS.md, "the supervisor"). Enforced on every Linux runner (the
 * Landlock layer runs inside bwrap too). @paths: absolute,
 * NULL-terminated (NULL or empty: none); copied. Returns 0, WARD_EINVAL
 * (a relative path) or -ENOMEM.
 */
WARD_EXTERN int ward_policy_set_allow_unix(ward_policy *policy,
					   char *const *paths);
/** The allowed sockets: NULL-terminated, possibly empty; owned. */
WARD_EXTERN char *const *ward_policy_allow_unix(const ward_policy *policy);

WARD_EXTERN enum ward_mode ward_policy_mode(const ward_policy *policy);
/** The canonical workspace root; owned by the policy. */
WARD_EXTERN const char *ward_policy_workspace(const ward_policy *policy);
/** The captured temporary directory or NULL; owned by the policy. */
WARD_EXTERN const char *ward_policy_tmpdir(const ward_policy *policy);
/** The session id or NULL; owned by the policy. */
WARD_EXTERN const char *ward_policy_session(const ward_policy *policy);

WARD_END_DECL

#endif
