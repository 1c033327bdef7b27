/*
 * ward — classification of a finished confined run: runner failure first
 * (the command never ran), then denial (the kernel refused a file
 * operation), matched per runner, never as a union of dialects.
 */
#ifndef WARD_CLASSIFY_H
#define WARD_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "runner.h"

WARD_BEGIN_DECL

enum ward_outcome {
	WARD_OUTCOME_OK = 0,	     /* ran; no denial seen */
	WARD_OUTCOME_DENIED,	     /* ran; the sandbox refused a file op */
	WARD_OUTCOME_RUNNER_FAILURE, /* confinement failed; did not run */
};

/**
 * What is known about a finished run. @child_started comes from an exact
 * channel when one exists (bwrap's --json-status-fd, the executor's
 * close-on-exec status pipe): 1 the command was exec'd, 0 it was not,
 * -1 unknown (fall back to the runner's text dialect).
 */
struct ward_run_facts {
	enum ward_runner runner;
	int exit_code;		 /* -1 when killed by a signal */
	int term_signal;	 /* 0 when it exited */
	int child_started;	 /* 1, 0 or -1 */
	const char *stderr_text; /* may be NULL; need not be NUL-terminated */
	size_t stderr_len;
	/**
	 * Runner CUSTOM: the operator's failure signatures (line prefixes),
	 * NULL-terminated; NULL or empty: the bwrap dialect.
	 */
	const char *const *failure_signatures;
};

struct ward_classification {
	enum ward_outcome outcome;
	/** The matched fatal line for a runner failure (NUL-terminated). */
	char detail[512];
};

/**
 * ward_classify - classify a run. Never fails for valid input; returns
 * WARD_EINVAL when @facts or @out is NULL.
 *
 * Runner failure (checked first):
 *   landlock: exit 125 and a fatal `landlock-run:` line (the
 *             `landlock-run: partial enforcement` info line excluded);
 *   bwrap/custom: the status channel says the child never started, or
 *             (no channel) a `bwrap:` line and non-zero exit;
 *   seatbelt: a `sandbox-exec:` line and non-zero exit.
 *   Any runner: child_started == 0 with a non-zero exit.
 * Denial: non-zero exit (or a signal) and the runner's own signature in
 * stderr: landlock "Permission denied", bwrap/custom "Read-only file
 * system", seatbelt "Operation not permitted". Runner NONE never denies.
 */
WARD_EXTERN int ward_classify(struct ward_classification *out,
			      const struct ward_run_facts *facts);

/** The denial signature of a runner ("" for none); static storage. */
WARD_EXTERN const char *ward_denial_signature(enum ward_runner runner);

WARD_END_DECL

#endif
