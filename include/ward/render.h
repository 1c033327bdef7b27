/*
 * ward — every model-facing text, in one module: the denial marker, the
 * escalation hint, the escalation outcome texts, the sandbox-unavailable
 * text, the standing approval-policy text and the tool descriptions.
 *
 * Nothing else in ward spells these strings; consumers (the CLI, the fs
 * fence, harnesses) call these functions, so a wording change happens here
 * and only here. Texts have no trailing newline.
 *
 * Two rules from the design shape them: the standing prompt never states
 * the sandbox mode (a standing label made models refuse work pre-emptively;
 * the denial marker names the mode when it matters), and only the approval
 * policy `never` is declared, because an automatic "no" is
 * indistinguishable from a person's.
 */
#ifndef WARD_RENDER_H
#define WARD_RENDER_H

#include <stdbool.h>

#include "common.h"
#include "escalation.h"
#include "mode.h"
#include "session.h"

/**
 * ward_render_marker - "[sandbox: file access denied under <mode> mode]".
 * Static storage (an unknown mode reads "unknown").
 */
WARD_EXTERN const char *ward_render_marker(enum ward_mode mode);

/**
 * ward_render_hint - the escalation hint, given only when escalation is
 * offered (ward_escalation_offered):
 *
 *   retry this exact <command|operation> once with sandbox_permissions (the
 *   narrowest wider mode that suffices) + justification; the approval
 *   prompt asks the user
 *
 * (one line). Static storage.
 */
WARD_EXTERN const char *ward_render_hint(enum ward_subject subject);

/**
 * ward_render_denial - the marker, followed by a newline and the hint when
 * @escalation_offered. The caller frees *out. 0 or -ENOMEM.
 */
WARD_EXTERN int ward_render_denial(char **out, enum ward_mode mode,
				   enum ward_subject subject,
				   bool escalation_offered);

/**
 * ward_render_verdict - the text a refused escalation ends with; each
 * verdict has its own (<s> is "command" or "operation", <mode> the mode
 * asked for):
 *
 *   not-wider:    sandbox_permissions "<mode>" is not wider than the mode
 *                 this <s> already runs under; nothing was run and nobody
 *                 was asked; retry without sandbox_permissions
 *   no service:   escalation is not available: no approval service is
 *                 configured, so nobody can approve running this <s> under
 *                 "<mode>"; nothing was run
 *   never:        escalating this <s> to "<mode>" was refused automatically:
 *                 the approval policy is "never"; nothing was run
 *   rejected:     the user rejected escalating this <s> to "<mode>"
 *   cancelled:    the approval request for escalating this <s> to "<mode>"
 *                 was cancelled before the user decided; nothing was run
 *   unavailable:  approval for escalating this <s> to "<mode>" is
 *                 unavailable: nobody could be asked; nothing was run
 *
 * WARD_EINVAL for WARD_ESCALATION_GRANTED (there is nothing to say) or an
 * unknown verdict. The caller frees *out.
 */
WARD_EXTERN int ward_render_verdict(char **out,
				    enum ward_escalation_verdict verdict,
				    enum ward_subject subject,
				    enum ward_mode requested);

/**
 * ward_render_unavailable - the sandbox-unavailable error: the sandbox is
 * unavailable (@detail, may be NULL or empty, says why) and ward is refusing
 * to run the <subject> unconfined. The caller frees *out.
 */
WARD_EXTERN int ward_render_unavailable(char **out, enum ward_subject subject,
					const char *detail);

/**
 * ward_render_policy - the standing prompt text for an approval policy:
 * a declaration for `never`, "" for `ask` (nothing is declared). Never
 * mentions the sandbox mode. Static storage.
 */
WARD_EXTERN const char *ward_render_policy(enum ward_approval_policy policy);

/** The tools whose descriptions ward renders. */
enum ward_tool {
	WARD_TOOL_BASH = 0, /* runs shell commands through the runners */
	WARD_TOOL_FILES,    /* read/write/edit/… through the fs fence */
};

/**
 * ward_render_tool_description - the static description of a tool: what
 * the marker means, that a denial is not to be worked around, and — when
 * @escalation_offered (the tool has the sandbox_permissions and
 * justification fields) — the one sanctioned retry. Never states the
 * sandbox mode. Static storage.
 */
WARD_EXTERN const char *ward_render_tool_description(enum ward_tool tool,
						     bool escalation_offered);

/** Descriptions of the two escalation fields of a tool. Static. */
WARD_EXTERN const char *
ward_render_field_sandbox_permissions(enum ward_subject subject);
WARD_EXTERN const char *ward_render_field_justification(void);

#endif
