/*
 * ward — the per-runner rule plan (internal to libward).
 *
 * ward_xlate_new() turns a policy (mode, writable roots, access rules,
 * protected paths) into what one runner does with it: the bwrap options
 * that follow the writable binds, the Landlock read and write grants, the
 * Seatbelt deny rules; plus the warnings and the description that
 * translate.h exports. Globs are expanded here, against the file system,
 * by a walk bounded in entries and time.
 */
#ifndef WARD_TRANSLATE_INTERNAL_H
#define WARD_TRANSLATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "libward/internal.h"

struct ward_xlate;

struct ward_runner_ops;

/*
 * ward_xlate_new - the plan of @runner (BWRAP, CUSTOM, LANDLOCK, SEATBELT or
 * NONE) for @policy: ward_xlate_new_ops() with the runner's row, without
 * the Landlock layer (runners/table.c, which holds the rows). The caller
 * frees *out with ward_xlate_free().
 */
int ward_xlate_new(struct ward_xlate **out, const ward_policy *policy,
		   enum ward_runner runner);
void ward_xlate_free(struct ward_xlate *plan);
/*
 * ward_xlate_new_ops - the plan of the runner @ops (runners.h) for
 * @policy with the call's @facts (facts.h; a reference is kept; NULL:
 * computed here), with the Landlock layer (landlock-run) inside when
 * @inner_launcher and the runner carries it (bwrap): the rules' matches
 * inside the writable roots are then mounted by the launcher (--pin,
 * --hide-ro, --hide: ward_xlate_landlock_hides()) instead of by bwrap,
 * when this process can make a mount namespace (ward_hide_possible()).
 * The translation reads the row it is given, never the table: the rows'
 * operations call into it.
 */
struct ward_facts;
int ward_xlate_new_ops(struct ward_xlate **out, const ward_policy *policy,
		       struct ward_facts *facts,
		       const struct ward_runner_ops *ops, bool inner_launcher);
/* The writable roots the translation was made for (borrowed). */
char *const *ward_xlate_roots(const struct ward_xlate *plan);

/*
 * The side effects the translation's operations rely on, done once before
 * the run: bwrap binds ward's configuration directory and session store
 * read-only when they lie inside a writable root, so when they are missing
 * they are created (mode 0700) here — never while planning. Idempotent.
 */
int ward_xlate_apply(const struct ward_xlate *plan);
/* The directories ward_xlate_apply() creates (owned; possibly empty). */
char *const *ward_xlate_create(const struct ward_xlate *plan);

/*
 * bwrap: append the rule part of the profile (it goes after the writable
 * binds): pins (`--bind A A` for each directory between a writable root and
 * a protected path, so none can be renamed away), `--ro-bind P P` per
 * read-only path, `--tmpfs P --remount-ro P` per hidden directory and
 * `--ro-bind /dev/null P` per hidden file.
 */
void ward_xlate_bwrap_push(struct ward_strv *sv, const struct ward_xlate *plan);

/*
 * bwrap: `--proc /proc`, then /proc/sys, /proc/sysrq-trigger, /proc/irq and
 * /proc/bus bound read-only over it (see translate_bwrap.c for why
 * bwrap's own covering is not enough).
 */
void ward_bwrap_push_proc(struct ward_strv *sv);

/*
 * landlock: the read-only grants (["/"] unless something is hidden) and the
 * writable grants (/dev/null and the writable roots, with ward's own
 * directories carved out). Both vectors are the caller's (ward_strv_free).
 */
int ward_xlate_landlock(char ***ro, char ***rw, const struct ward_xlate *plan);
/*
 * landlock, and bwrap with the Landlock layer inside (ward_xlate_new_inner):
 * the launcher's mount options, `--pin D`, `--hide-ro P` and `--hide P`
 * pairs in that order, for the rules' matches inside the writable roots
 * (and their parents' pins) — and on Landlock for `--` paths outside them
 * whose complement would exceed its budget (owned by the plan; empty when
 * nothing is mounted). A Landlock plan with any needs the launcher: the
 * in-process executor cannot make the namespace (see exec.c).
 */
char *const *ward_xlate_landlock_hides(const struct ward_xlate *plan);

/*
 * The profile builders (profile_*.c) from a translation made beforehand
 * (the plan makes one per call): the same output as ward_profile_bwrap()
 * and ward_profile_seatbelt() without translating again. @caller_bound:
 * the Landlock layer inside binds the sandbox to ward's executor, so bwrap
 * gets no --die-with-parent (profile_bwrap.c says why; plan.c adds it to
 * the argv others spawn).
 */
int ward_bwrap_profile_x(char ***out, const ward_policy *policy,
			 const struct ward_xlate *x, const char *bwrap_path,
			 int status_fd, char *const argv[], bool caller_bound);
int ward_seatbelt_profile_x(char **out, const ward_policy *policy,
			    const struct ward_xlate *x);
/*
 * The sandbox-exec argv for the Seatbelt @profile text: SANDBOX_EXEC -p
 * PROFILE, then -- ARGV… when @argv is not NULL. The caller frees *out
 * with ward_strv_free().
 */
int ward_seatbelt_argv(char ***out, const char *profile, char *const argv[]);

/* Absolute, never looked up in PATH: no environment picks the confiner. */
#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

/*
 * The landlock-run argv from the grants (profile_landlock.c): LAUNCHER
 * --ro R… --rw W… [--hide H…] [--net-off] [-- ARGV…] (--net-off for
 * @net_off). The provider builds the plan once and passes the same grants
 * to the launcher and to the in-process executor. @hides:
 * ward_xlate_landlock_hides() (NULL: none).
 */
int ward_landlock_argv(char ***out, char *const *ro, char *const *rw,
		       char *const *hides, const char *launcher_path,
		       bool net_off, char *const argv[]);

/*
 * seatbelt: write the deny rules (after the allows) to @f. Returns 0 or
 * WARD_EINVAL (a path that SBPL cannot hold).
 */
int ward_xlate_seatbelt(FILE *f, const struct ward_xlate *plan);

/*
 * Why enforcement is partial: the warnings about rules and protected paths
 * the runner does not enforce at all (owned by the plan; empty when none).
 */
char *const *ward_xlate_partial(const struct ward_xlate *plan);
/*
 * Why the runner must not run under this plan (a rule it would have to
 * drop), or NULL. Also one of the warnings.
 */
const char *ward_xlate_refusal(const struct ward_xlate *plan);

/* The plan's warnings and description (owned by the plan). */
char *const *ward_xlate_warnings(const struct ward_xlate *plan);
char *const *ward_xlate_describe(const struct ward_xlate *plan);

/* Bounds of the glob walk and of the generated operations. */
struct ward_xlate_limits {
	size_t max_entries; /* directory entries visited, all globs together */
	unsigned max_ms;    /* wall-clock time of the walk */
	size_t max_targets; /* paths one runner operates on (mounts, grants) */
	/* Plan as if no mount namespace could be made (Landlock: the
	 * complement or a refusal instead of the launcher's mounts). */
	bool no_mounts;
};

#define WARD_XLATE_MAX_ENTRIES 500000
#define WARD_XLATE_MAX_MS      500
#define WARD_XLATE_MAX_TARGETS 4096

/*
 * Replace the bounds (NULL: the defaults above). Process-wide and not
 * thread-safe: for tests and benchmarks only.
 */
void ward_xlate_set_limits(const struct ward_xlate_limits *limits);

#endif
