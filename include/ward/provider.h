/*
 * ward — the provider: the runner chain, its functional probe (once per
 * provider), and confine(), which turns an argv + policy into what to spawn.
 *
 * confine() never returns a bare argv for a confined mode: either a wrapped
 * argv for a usable runner, or WARD_EUNAVAILABLE. Which binary confines is
 * never chosen by an environment variable: bwrap is resolved once from PATH
 * to an absolute path (and refused inside the workspace); landlock-run is
 * found beside the running executable or at the compiled-in libexec path;
 * tests inject paths through the options below.
 */
#ifndef WARD_PROVIDER_H
#define WARD_PROVIDER_H

#include <stdbool.h>

#include "common.h"
#include "policy.h"
#include "runner.h"

WARD_BEGIN_DECL

typedef struct ward_provider ward_provider;
typedef struct ward_confined ward_confined;

/** A probe verdict for one runner. */
enum ward_verdict {
	WARD_VERDICT_UNUSABLE = 0,
	WARD_VERDICT_FULL,
	WARD_VERDICT_PARTIAL,
};

/**
 * A probe function (tests inject one). Returns the verdict for @runner and
 * may write a short reason into @why (NUL-terminated, at most @why_len).
 */
typedef enum ward_verdict (*ward_probe_fn)(void *ctx, enum ward_runner runner,
					   char *why, size_t why_len);

#define WARD_PROVIDER_OPTIONS_VERSION 3

struct ward_provider_options {
	unsigned version;
	/** Platform whose chain applies (default: the compiled platform). */
	enum ward_platform platform;
	/** Chain override; NULL means the platform's chain. */
	const enum ward_runner *chain;
	size_t chain_len;
	/**
	 * Operator-asserted bwrap-compatible runner command (absolute path or a
	 * name looked up in PATH once). Skips the chain and the probe; a
	 * missing or non-executable command is a runner failure at confine.
	 */
	const char *runner_command;
	/** Probe timeout in milliseconds (0: 2000). */
	unsigned probe_timeout_ms;
	/** Injected probe (tests); NULL: the real functional probes. */
	ward_probe_fn probe;
	void *probe_ctx;
	/** landlock-run path (tests, packaging); NULL: beside exe / libexec. */
	const char *launcher_path;
	/** bwrap path; NULL: resolve "bwrap" in PATH once. */
	const char *bwrap_path;
	/**
	 * With runner_command: stderr line prefixes that mean the custom
	 * runner itself failed (the command never ran), NULL-terminated; at
	 * most 8 are used. NULL: the bwrap dialect ("bwrap: ").
	 */
	const char *const *runner_failure_signatures;
	/* --- version 3 --- */
	/**
	 * The real probes' verdicts are kept across processes, in ward's
	 * state directory (a protected path no confined run can write),
	 * keyed by everything that decides them (kernel, boot, uid,
	 * namespaces, seccomp state, the sysctls for user namespaces, the
	 * Landlock ABI, the runner binary's identity). true: probe afresh
	 * and do not read the kept verdicts (`ward probe` does; the fresh
	 * verdict is still kept). Injected probes are never kept.
	 */
	bool no_probe_cache;
};

#define WARD_PROVIDER_OPTIONS_INIT                                             \
	{                                                                      \
		WARD_PROVIDER_OPTIONS_VERSION, ward_platform_current(), NULL,  \
		    0, NULL, 0, NULL, NULL, NULL, NULL, NULL, false            \
	}

/**
 * ward_provider_options_init - set @opts to the defaults of @version (1 to
 * WARD_PROVIDER_OPTIONS_VERSION; only that version's fields are written).
 * Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_provider_options_init(struct ward_provider_options *opts,
					   unsigned version);

/**
 * ward_provider_new - make a provider. @opts may be NULL (defaults).
 * Nothing is probed yet. Strings in @opts are copied. The caller frees *out
 * with ward_provider_free().
 */
WARD_EXTERN int ward_provider_new(ward_provider **out,
				  const struct ward_provider_options *opts);
WARD_EXTERN void ward_provider_free(ward_provider *provider);

/**
 * ward_provider_select - arbitrate the chain (probing at most once per
 * provider; the verdict is cached). Sets the chosen runner and its
 * enforcement. An empty chain, or every candidate unusable, returns
 * WARD_EUNAVAILABLE. A sole candidate is chosen without a probe
 * (enforcement: full). With runner_command: WARD_RUNNER_CUSTOM, full.
 */
WARD_EXTERN int ward_provider_select(ward_provider *provider,
				     enum ward_runner *out_runner,
				     enum ward_enforcement *out_enforcement);

/**
 * ward_provider_select_for - ward_provider_select() for calls under
 * @policy: first marks unusable (without ever executing it) a bwrap that
 * lies inside the policy's workspace or writable roots, exactly as
 * ward_provider_confine() does. Prefer it whenever a policy is at hand.
 */
WARD_EXTERN int
ward_provider_select_for(ward_provider *provider, const ward_policy *policy,
			 enum ward_runner *out_runner,
			 enum ward_enforcement *out_enforcement);

/**
 * ward_provider_force - restrict the chain to one runner (the CLI's
 * --runner). The runner is then a sole candidate: chosen without a probe,
 * and its own failure at run time is a runner failure. WARD_EINVAL when the
 * runner is not in the platform's chain.
 */
WARD_EXTERN int ward_provider_force(ward_provider *provider,
				    enum ward_runner runner);

/** What the probe found for one candidate (for `ward probe`). */
struct ward_probe_entry {
	enum ward_runner runner;
	enum ward_verdict verdict;
	bool probed; /* false: chosen/skipped without a probe */
	char why[256];
};

/**
 * ward_provider_report - probe every candidate of the chain (cached) and
 * return them in chain order. *out is owned by the provider and valid until
 * it is freed. Sets *out_len.
 */
WARD_EXTERN int ward_provider_report(const struct ward_probe_entry **out,
				     size_t *out_len, ward_provider *provider);

/** Why a runner cannot confine here: a code a front end can act on. */
enum ward_runner_problem {
	WARD_PROBLEM_NONE = 0,	   /* it can (or it was not looked at) */
	WARD_PROBLEM_NOT_FOUND,	   /* its binary is missing */
	WARD_PROBLEM_PLANTED,	   /* its binary lies where a run may write */
	WARD_PROBLEM_NO_USERNS,	   /* bwrap: no user namespaces allowed */
	WARD_PROBLEM_KERNEL,	   /* landlock: not in this kernel */
	WARD_PROBLEM_RESERVED,	   /* windows-acl: no such runner exists */
	WARD_PROBLEM_PROBE_FAILED, /* its functional probe failed otherwise */
};

/** What the provider knows about one runner (ward_provider_problem). */
struct ward_runner_status {
	enum ward_runner runner;
	enum ward_runner_problem problem;
	/** The binary it resolved ("" when none). */
	char path[4096];
	/** The probe's or the resolution's own words ("" when none). */
	char why[256];
};

/**
 * ward_provider_problem - why @runner cannot confine under @provider, from
 * what it already learned (its resolution and probe verdict; it probes
 * @runner if it has not yet). Fills *out; returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_provider_problem(struct ward_runner_status *out,
				      ward_provider *provider,
				      enum ward_runner runner);

/** The resolved bwrap path, or NULL when bwrap was not found. */
WARD_EXTERN const char *ward_provider_bwrap_path(ward_provider *provider);
/** The resolved landlock-run path, or NULL when it was not found. */
WARD_EXTERN const char *ward_provider_launcher_path(ward_provider *provider);

/**
 * ward_provider_confine - confine @argv under @policy.
 *
 * For danger-full-access nothing is confined (runner NONE), but the
 * command is kept: `LAUNCHER --unconfined -- ARGV`, so that every process
 * it starts ends with it (WARD_ERUNNER when landlock-run cannot be found).
 * Otherwise: select a runner and build its profile.
 * Returns WARD_EUNAVAILABLE when no runner can confine, and WARD_ERUNNER
 * when the chosen runner cannot be started (missing binary, bwrap inside
 * the workspace). The caller frees *out with ward_confined_free().
 */
WARD_EXTERN int ward_provider_confine(ward_confined **out,
				      ward_provider *provider,
				      const ward_policy *policy,
				      char *const argv[]);

WARD_EXTERN void ward_confined_free(ward_confined *confined);
/** The argv to spawn (NULL-terminated); owned by @confined. */
WARD_EXTERN char *const *ward_confined_argv(const ward_confined *confined);
WARD_EXTERN enum ward_runner ward_confined_runner(const ward_confined *c);
WARD_EXTERN enum ward_enforcement
ward_confined_enforcement(const ward_confined *c);
WARD_EXTERN enum ward_mode ward_confined_mode(const ward_confined *c);
/** The denial signature of the runner ("" for none); static storage. */
WARD_EXTERN const char *ward_confined_denial_signature(const ward_confined *c);

WARD_END_DECL

#endif
