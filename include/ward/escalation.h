/*
 * ward — escalation: after a real denial, one retry of the same command (or
 * file operation) under a strictly wider mode, approved by a person before
 * anything runs.
 *
 * The ladder: read-only → workspace-write | danger-full-access;
 * workspace-write → danger-full-access; nothing above. A request that is
 * not strictly wider than the call's effective mode is refused with its
 * own text and asks nobody. Then, in this order: no approval service
 * (no callback) → refused; approval policy `never` → refused; else the
 * approval callback is asked and answers allowed-once, rejected, cancelled
 * or unavailable. Only allowed-once yields a policy with the wider mode,
 * for that one call; nothing is persisted, so the next call is back to the
 * session's own mode. Every refusal has its own model-facing text (see
 * render.h) and runs nothing.
 *
 * When a session is given, the request, the ask and the decision are
 * appended to its log before anything runs; a failure to record is an
 * error and nothing is granted (fail closed).
 */
#ifndef WARD_ESCALATION_H
#define WARD_ESCALATION_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>

#include "common.h"
#include "exec.h"
#include "mode.h"
#include "network.h"
#include "policy.h"
#include "provider.h"
#include "session.h"

WARD_BEGIN_DECL

/** What a call is, in model-facing text: a command or a file operation. */
enum ward_subject {
	WARD_SUBJECT_COMMAND = 0, /* bash tool, `ward run` */
	WARD_SUBJECT_OPERATION,	  /* file tools, `ward fs` */
};

/** "command", "operation". Static storage. */
WARD_EXTERN const char *ward_subject_name(enum ward_subject subject);

/**
 * Where a text is shown. A model-facing text names only options that
 * exist there: the MCP tools' sandbox_permissions and justification
 * fields, or `ward run`/`ward fs`'s --escalate and --justification flags.
 * A harness embedding libward (API) gets the design's texts, which name
 * the sandbox_permissions field its tools are expected to offer.
 */
enum ward_surface {
	WARD_SURFACE_API = 0, /* a harness embedding libward */
	WARD_SURFACE_CLI,     /* `ward run`, `ward fs` */
	WARD_SURFACE_MCP,     /* `ward mcp` */
	WARD_SURFACE_ACP,     /* `ward acp`: ward itself asks the editor */
};

/** What an approval service answered. */
enum ward_approval_outcome {
	/** Approved for this one call. */
	WARD_APPROVAL_ALLOWED_ONCE = 0,
	/** The person said no. */
	WARD_APPROVAL_REJECTED,
	/** The request was dismissed before a decision (e.g. Ctrl-C, EOF). */
	WARD_APPROVAL_CANCELLED,
	/** Nobody could be asked (no terminal, the channel failed). */
	WARD_APPROVAL_UNAVAILABLE,
};

/** "allowed-once", "rejected", "cancelled", "unavailable". Static. */
WARD_EXTERN const char *
ward_approval_outcome_name(enum ward_approval_outcome outcome);

/** The verdict on one escalation request. */
enum ward_escalation_verdict {
	/** allowed-once: the call runs under the requested mode. */
	WARD_ESCALATION_GRANTED = 0,
	/** Not strictly wider than the call's mode; nobody was asked. */
	WARD_ESCALATION_NOT_WIDER,
	/** No approval service; nobody was asked. */
	WARD_ESCALATION_NO_SERVICE,
	/** The approval policy is `never`; nobody was asked. */
	WARD_ESCALATION_POLICY_NEVER,
	WARD_ESCALATION_REJECTED,
	WARD_ESCALATION_CANCELLED,
	WARD_ESCALATION_UNAVAILABLE,
};

/**
 * "granted", "not-wider", "no-approval-service", "policy-never",
 * "rejected", "cancelled", "unavailable". Static storage.
 */
WARD_EXTERN const char *
ward_escalation_verdict_name(enum ward_escalation_verdict verdict);

/** What the person is shown. Strings are borrowed for the call. */
struct ward_approval_request {
	enum ward_subject subject;
	/**
	 * The command line (shell-quoted), or the operation and its paths,
	 * each followed by what it resolves to ("write notes.txt (-> /etc/x)",
	 * see ward_call_options.summary). Raw: show it through
	 * ward_escalation_escape().
	 */
	const char *summary;
	/** The directory it runs in (the workspace root for file tools). */
	const char *cwd;
	/** The call's effective mode, and the mode asked for. */
	enum ward_mode current;
	enum ward_mode requested;
	const char *justification;
	/** The session and call ids, or NULL. */
	const char *session_id;
	const char *call_id;
	/** A network escalation (then @current/@requested are the mode, the
	 * same): the call's network and what is asked — a host added to
	 * its allowlist (@net_host) or the whole network (on). */
	bool network;
	enum ward_network net_current;
	enum ward_network net_requested;
	const char *net_host; /* NULL when on is asked */
};

/**
 * ward_escalation_escape - @text made safe to show a person (an approval
 * prompt, a terminal, an MCP client's form): everything that is not a
 * visible character becomes a visible escape, so text from a model or a
 * file name cannot hide or repaint what the person is asked. Escaped:
 * invalid UTF-8 and ASCII controls as \xNN; C1 controls, line and
 * paragraph separators (U+2028, U+2029), every format character (Cf:
 * zero-width spaces and joiners, bidirectional marks, embeddings,
 * overrides and isolates, U+FEFF, U+00AD, the tag characters U+E0000 to
 * U+E007F, …), spaces other than U+0020, invisible fillers, variation
 * selectors, noncharacters and private-use characters as \uXXXX (or
 * \UXXXXXXXX beyond the BMP); a backslash as \\, so that a typed "\x0a"
 * cannot pass for an escaped newline. Everything else is kept as is. NULL
 * is "". The caller frees *out with ward_free(). Returns 0 or -ENOMEM.
 */
WARD_EXTERN int ward_escalation_escape(char **out, const char *text);

/**
 * ward_escalation_put - write @text to @f escaped as by
 * ward_escalation_escape() (NULL writes nothing). Returns 0 or -ENOMEM.
 */
WARD_EXTERN int ward_escalation_put(FILE *f, const char *text);

/** The bytes of a justification an approval text shows (then a note). */
#define WARD_APPROVAL_JUSTIFICATION_SHOWN 800

/**
 * ward_escalation_question - the question put to a person for @req, the same
 * text on every front end, laid out for @surface: aligned fields and a
 * `[y/N]` question for the terminal (WARD_SURFACE_CLI), `field: value`
 * lines and the form's instruction for an MCP elicitation
 * (WARD_SURFACE_MCP), the plain question for a harness (API) and for
 * ward acp's permission request, whose options answer it (ACP). In order:
 * a header; the justification, at most WARD_APPROVAL_JUSTIFICATION_SHOWN
 * bytes of it (cut at a character, followed by "[… N more bytes not
 * shown]"); the directory; the current and requested mode (or network);
 * the session; what the grant covers ("this call only; every process it
 * starts ends with it", or for a file operation the targets shown and
 * nothing else); then, right before the question, the command (whole) or
 * the operation with what each path resolves to. Every text from the
 * request is shown through ward_escalation_escape(). The caller frees
 * *out with ward_free(). Returns 0, WARD_EINVAL or -ENOMEM.
 */
WARD_EXTERN int
ward_escalation_question(char **out, const struct ward_approval_request *req,
			 enum ward_surface surface);

/**
 * An approval service: put @req to a person and return their answer. It
 * must not return WARD_APPROVAL_ALLOWED_ONCE unless a person allowed it.
 */
typedef enum ward_approval_outcome (*ward_approval_fn)(
    void *ctx, const struct ward_approval_request *req);

/**
 * ward_escalation_targets - the modes @from may escalate to, narrowest
 * first, into @out (room for 2). Returns how many (0 for
 * danger-full-access).
 */
WARD_EXTERN size_t ward_escalation_targets(enum ward_mode out[2],
					   enum ward_mode from);

/**
 * ward_escalation_is_wider - true when @to is on @from's ladder, i.e.
 * strictly wider.
 */
WARD_EXTERN bool ward_escalation_is_wider(enum ward_mode from,
					  enum ward_mode to);

/**
 * ward_escalation_offered - whether a denial under @mode should carry the
 * escalation hint: there is a wider mode, an approval service, the policy
 * is not `never`, and the call was not itself an escalated retry (the one
 * sanctioned retry has been used).
 */
WARD_EXTERN bool ward_escalation_offered(enum ward_mode mode,
					 enum ward_approval_policy policy,
					 bool has_service, bool was_escalated);

#define WARD_ESCALATION_VERSION 2

/** One escalation request. */
struct ward_escalation {
	unsigned version;
	enum ward_subject subject;
	/** What the person is shown (see struct ward_approval_request). */
	const char *summary;
	/** NULL: the base policy's workspace root. */
	const char *cwd;
	/** The mode asked for (sandbox_permissions). */
	enum ward_mode requested;
	/** Why (required, non-empty). */
	const char *justification;
	/** The approval policy in force for the call. */
	enum ward_approval_policy policy;
	/** The approval service; NULL: there is none. */
	ward_approval_fn approve;
	void *approve_ctx;
	/** Where to record the request, ask and decision; NULL: nowhere. */
	ward_session *session;
	/** The call's id in the session log (required with @session). */
	const char *call_id;
	/* --- version 2 --- */
	/**
	 * Ask for a wider network instead of a wider mode: @net_host added
	 * to the call's allowlist (a host name, not a pattern; off becomes
	 * an allowlist of that host), or, with @net_host NULL, network on.
	 * Strictly wider only: a host already allowed, or denied (the
	 * denylist wins), or any request when the network is on, is
	 * not-wider. @requested is ignored.
	 */
	bool network;
	const char *net_host;
};

#define WARD_ESCALATION_INIT                                                   \
	{                                                                      \
		WARD_ESCALATION_VERSION, WARD_SUBJECT_COMMAND, NULL, NULL,     \
		    WARD_MODE_DEFAULT, NULL, WARD_APPROVAL_ASK, NULL, NULL,    \
		    NULL, NULL, false, NULL                                    \
	}

/**
 * ward_escalation_network_is_wider - whether giving @base's call @host
 * (NULL: network on) strictly widens its network.
 */
WARD_EXTERN bool ward_escalation_network_is_wider(const ward_policy *base,
						  const char *host);

/**
 * ward_escalation_init - set @e to the defaults of @version (which must be
 * WARD_ESCALATION_VERSION). Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_escalation_init(struct ward_escalation *e,
				     unsigned version);

/**
 * ward_escalation_authorize - decide one escalation request against the
 * call's @base policy (whose mode is the call's effective mode).
 *
 * Returns 0 when a verdict was reached, and sets *verdict. Only for
 * WARD_ESCALATION_GRANTED is *granted set: a new policy equal to @base
 * but for the requested mode, for this one call; the caller frees it with
 * ward_policy_free(). For every other verdict *granted is untouched and
 * the caller must run nothing. Returns WARD_EINVAL for a bad request (no
 * justification, an unknown mode, a session without call id) and -errno
 * when recording fails; then no verdict is set and nothing is granted.
 *
 * With @e->session: appends `escalation/request` (mode, from,
 * justification); when the person is asked, `approval/asked` before the
 * callback and `approval/decision` after it; and `escalation/verdict`
 * (verdict and its model-facing text) last.
 */
WARD_EXTERN int ward_escalation_authorize(ward_policy **granted,
					  enum ward_escalation_verdict *verdict,
					  const ward_policy *base,
					  const struct ward_escalation *e);

WARD_END_DECL

#endif
