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
 * What a run's exact channel says about the network (ward_run_facts.net).
 * Zero, the default, is "no such channel".
 */
enum ward_net_fact {
	WARD_NET_FACT_UNKNOWN = 0, /* no exact channel: signatures decide */
	WARD_NET_FACT_REFUSED,	   /* a lookup or connect was refused */
	WARD_NET_FACT_NONE,	   /* the command was refused no network */
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
	/**
	 * The network was off for the run: the only setting under which a
	 * failed name lookup or connect is the sandbox's doing (an
	 * allowlist's refusals are the proxy's, reported by host).
	 */
	bool network_off;
	/**
	 * The exact channel's fact about the network, when the runner has one.
	 * Where it plugs in: the launcher's status channel (landlock-run's
	 * keeper report, read by the executor with child_started) is to carry
	 * "the command attempted network access that was refused"; the
	 * executor sets it here, and then no error text is consulted.
	 * UNKNOWN (zero): the runner's network signatures in stderr decide
	 * (ward_network_signatures).
	 */
	enum ward_net_fact net;
};

struct ward_classification {
	enum ward_outcome outcome;
	/** The matched fatal line for a runner failure (NUL-terminated). */
	char detail[512];
	/**
	 * The network is the reason: the network was off, the run failed
	 * (non-zero exit or a signal), and the exact channel says a lookup or
	 * connect was refused — or, without one, stderr holds one of the
	 * runner's network signatures. Beside @outcome, not instead: a run
	 * can be refused a file and the network both. Never set for a runner
	 * failure.
	 */
	bool network_denied;
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
 * Under Landlock with the network off, a line that is a network
 * signature (wget's "Connecting to … failed: Permission denied.", node's
 * "connect EACCES") is not a file denial.
 * Network: see ward_classification.network_denied.
 */
WARD_EXTERN int ward_classify(struct ward_classification *out,
			      const struct ward_run_facts *facts);

/** The denial signature of a runner ("" for none); static storage. */
WARD_EXTERN const char *ward_denial_signature(enum ward_runner runner);

/**
 * ward_network_signatures - what the clients print, under @runner with the
 * network off, when a name lookup or a connect is refused (curl, wget,
 * git, pip, npm and node, glibc's getaddrinfo): bwrap's network namespace
 * has only its loopback ("Temporary failure in name resolution", "Network
 * is unreachable", "EAI_AGAIN", …), Landlock's network filter refuses the
 * socket ("connect EACCES", "failed: Permission denied.", …). Matched per
 * runner, in any ASCII case. NULL-terminated, static storage; empty for a
 * runner that confines no network.
 */
WARD_EXTERN const char *const *ward_network_signatures(enum ward_runner runner);

WARD_END_DECL

#endif
