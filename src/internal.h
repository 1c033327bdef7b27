/*
 * ward — definitions shared inside libward (not installed).
 */
#ifndef WARD_INTERNAL_H
#define WARD_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "ward/ward.h"

/*
 * Set the thread's last-error detail (printf-style) and return @err, so a
 * failing path reads `return ward_err(-ENOENT, "…: %s", path);`.
 */
int ward_err(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Clear the last-error detail. */
void ward_err_clear(void);

/*
 * The writable roots of @policy (roots.h), computed once per policy and
 * kept in it: *out is borrowed from the policy (valid while it lives and
 * no setter is called). ward_roots_compute() is the computation itself.
 */
int ward_policy_roots(char *const **out, const ward_policy *policy);
int ward_roots_compute(char ***out, const ward_policy *policy);

/* A growable NULL-terminated string vector (argv builder). */
struct ward_strv {
	char **v;
	size_t n;
	size_t cap;
	bool oom; /* a push failed; ward_strv_finish reports it */
};

/* Append a copy of @s. Failures are sticky (checked at finish). */
void ward_strv_push(struct ward_strv *sv, const char *s);
/* Append copies of every string of NULL-terminated @v. */
void ward_strv_push_all(struct ward_strv *sv, char *const *v);
/* Hand over the vector (never NULL on success) or -ENOMEM (freed). */
int ward_strv_finish(char ***out, struct ward_strv *sv);
/* Free a builder that will not be finished. */
void ward_strv_discard(struct ward_strv *sv);
/* Duplicate a NULL-terminated vector; NULL on ENOMEM. */
char **ward_strv_dup(char *const *v);

/*
 * What confine() produced. The executor reads the in-process Landlock plan
 * (ll_ro / ll_rw) to confine between fork and exec; everything else spawns
 * argv.
 */
struct ward_confined {
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	char **argv;  /* what to spawn (wrapped, or bare for NONE) */
	char **cmd;   /* the command itself, unwrapped */
	char **ll_ro; /* Landlock read-only grants (runner LANDLOCK) */
	char **ll_rw; /* Landlock writable grants (runner LANDLOCK) */
	/* bwrap/custom: the runner binary and the profile without a status
	 * fd, so the executor can rebuild argv with --json-status-fd. */
	char *runner_path;
	/* Runner CUSTOM: the operator's failure signatures (or NULL). */
	char **failure_signatures;
};

#endif
