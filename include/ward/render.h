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
#include "denial.h"
#include "escalation.h"
#include "fsfence.h"
#include "mode.h"
#include "provider.h"
#include "session.h"

WARD_BEGIN_DECL

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
 * ward_render_hint_for - the escalation hint as @surface offers it: the
 * design's text (above) for MCP and the API; for the CLI
 *
 *   retry this exact command once with ward run --escalate MODE
 *   --justification TEXT (the narrowest wider MODE that suffices); the
 *   approval prompt asks the user
 *
 * (ward fs … for an operation); for ACP, where no field or flag exists
 * because ward itself asks the person through the editor right after the
 * denial,
 *
 *   ward asks the user whether this exact command may run once under the
 *   narrowest wider mode that suffices; the answer follows
 *
 * One line. Static storage.
 */
WARD_EXTERN const char *ward_render_hint_for(enum ward_surface surface,
					     enum ward_subject subject);

#define WARD_RENDER_DENIALS_VERSION 1

/** What a denial report is rendered from (ward_render_denials). */
struct ward_render_denials {
	unsigned version;
	enum ward_surface surface;
	enum ward_subject subject;
	/** The mode the call ran under (the marker names it). */
	enum ward_mode mode;
	/** The entries (may be empty) and how many more were left out. */
	const struct ward_denial *denials;
	size_t count, more;
	/** Whether the escalation hint follows (ward_call_hint_offered). */
	bool escalation_offered;
	/** Without the hint: the session whose mode a person could widen
	 *  (`ward session mode ID MODE`); NULL: no such advice. */
	const char *session_id;
};

#define WARD_RENDER_DENIALS_INIT                                               \
	{                                                                      \
		WARD_RENDER_DENIALS_VERSION, WARD_SURFACE_API,                 \
		    WARD_SUBJECT_COMMAND, WARD_MODE_READ_ONLY, NULL, 0, 0,     \
		    false, NULL                                                \
	}

/**
 * ward_render_denials - the model-facing text of a denial: the marker,
 * one line per entry (at most 5, then how many more) saying what was
 * refused where and by which rule or mode,
 *
 *   [sandbox: read of /ws/.env refused by rule "-- .env" (/ws/.ward/config.yml:3); inferred from the error output]
 *   [sandbox: write of /etc/x refused: not writable under read-only mode (session 3b5a7dbac490a8c3)]
 *
 * then, unless every entry is a rule's (a rule holds in every mode), the
 * escalation hint for the surface when offered, or else, with a session,
 * how a person can widen its mode:
 *
 *   a person can allow this by widening the session's mode: ward session mode ID MODE
 *
 * The caller frees *out with ward_free().
 */
WARD_EXTERN int ward_render_denials(char **out,
				    const struct ward_render_denials *r);

/**
 * ward_render_explain - the denial report for a person (`ward run
 * --explain`): one paragraph per entry with the path, the operation,
 * the rule or mode, where it was set, and whether the kernel or the fence
 * reported it (exact) or it was inferred from the error output (derived);
 * "no file access was refused" when @count is 0. The caller frees *out.
 */
WARD_EXTERN int ward_render_explain(char **out, const struct ward_denial *d,
				    size_t count, size_t more);

/**
 * ward_render_verdict_for - ward_render_verdict() as @surface says it
 * (the not-wider text names --escalate on the CLI, sandbox_permissions
 * elsewhere).
 */
WARD_EXTERN int ward_render_verdict_for(char **out, enum ward_surface surface,
					enum ward_escalation_verdict verdict,
					enum ward_subject subject,
					enum ward_mode requested);

/**
 * ward_render_sandbox_ended - the line after the output of a command the
 * sandbox itself ended (@why: ward_result_sandbox_ended()):
 * `[sandbox failed: WHY; the output above is what it wrote until then]`.
 * The caller frees *out.
 */
WARD_EXTERN int ward_render_sandbox_ended(char **out, const char *why);

/**
 * ward_render_stopped - why a call ended early: the server (or its
 * client) went away, or the call was cancelled; @started: the command
 * had started (its output so far comes before this line). Never the
 * sandbox-unavailable text: nothing failed to confine. The caller frees
 * *out.
 */
WARD_EXTERN int ward_render_stopped(char **out, enum ward_subject subject,
				    bool shutdown, bool started);

/**
 * ward_render_not_text - a file that is not text (NUL bytes or invalid
 * UTF-8) asked for as text, with what to do on @surface (MCP: look at it
 * with bash; CLI: ward fs read --bytes). The caller frees *out.
 */
WARD_EXTERN int ward_render_not_text(char **out, enum ward_surface surface,
				     const char *path);

/**
 * ward_render_read_truncated - the line after a read_file result cut to
 * its bound: how much more there is and how to read on
 *
 *   [truncated: 81234 more lines (4912345 bytes) not shown; read on with
 *   offset 1234, or pick a part with offset/limit]
 *
 * (@more_lines 0: the count is unknown; @next_offset: the first line not
 * shown). The caller frees *out.
 */
WARD_EXTERN int ward_render_read_truncated(char **out,
					   unsigned long long next_offset,
					   unsigned long long more_lines,
					   unsigned long long more_bytes);

/**
 * ward_render_read_long_line - the line after a read_file result whose
 * first line alone is longer than the bound, so that only its start is
 * shown (a minified file, a log without newlines): where the line is,
 * how much of it is not shown, that bash can show it, and how to read on
 *
 *   [truncated: line 1 is longer than 64 KiB: its first 65536 bytes are
 *   shown, 4934464 more bytes of it are not (look at them with bash, e.g.
 *   cut -c or fold); it is the file's last line]
 *
 * (@line: the line's number, from 1; @next_offset: the offset of the next
 * line, or 0 when @line is the last). The caller frees *out.
 */
WARD_EXTERN int ward_render_read_long_line(char **out, unsigned long long line,
					   unsigned long long shown_bytes,
					   unsigned long long more_bytes,
					   unsigned long long next_offset);

/**
 * ward_render_read_past_end - the text of a read_file whose @offset is at
 * or past the end of a non-empty file, instead of an empty result:
 *
 *   [nothing at offset 60000: the file ends before line 60001]
 *
 * The caller frees *out.
 */
WARD_EXTERN int ward_render_read_past_end(char **out,
					  unsigned long long offset);

/**
 * ward_render_read_line_too_large - the error of a read_file whose line
 * @line (from 1) alone is too large for the fence to hold (10 MiB): no
 * offset/limit can help, bash can.
 *
 *   huge.js: line 1 alone is larger than read_file can hold (10 MiB);
 *   look at it with bash (e.g. head -c or cut -c)
 *
 * The caller frees *out.
 */
WARD_EXTERN int ward_render_read_line_too_large(char **out, const char *path,
						unsigned long long line);

/**
 * ward_render_denial - the marker, followed by a newline and the hint when
 * @escalation_offered. The caller frees *out with ward_free(). 0 or -ENOMEM.
 */
WARD_EXTERN int ward_render_denial(char **out, enum ward_mode mode,
				   enum ward_subject subject,
				   bool escalation_offered);

/**
 * ward_render_network_denied - the network-denial marker,
 * "[sandbox: network access to <host> denied]", appended on stderr when
 * ward's network proxy refused a connection of the command. @host is the
 * host as the proxy reports it (a normalized name or IP address): a host
 * with any byte but ASCII letters, digits, '.', '-', '_' and ':' (or an
 * empty one) is WARD_EINVAL, so nothing else reaches model-facing text.
 * The caller frees *out. 0, WARD_EINVAL or -ENOMEM.
 */
WARD_EXTERN int ward_render_network_denied(char **out, const char *host);

#define WARD_RENDER_NETWORK_OFF_VERSION 1

/** What the network-off marker is rendered from (ward_render_network_off). */
struct ward_render_network_off {
	unsigned version;
	enum ward_surface surface;
	/** The mode the call ran under (the marker names it). */
	enum ward_mode mode;
	/** A network escalation is offered (an approval service, policy ask,
	 *  not an escalated retry). */
	bool escalation_offered;
	/** Without the hint: the session a person could open up (MCP);
	 *  NULL: none. */
	const char *session_id;
};

#define WARD_RENDER_NETWORK_OFF_INIT                                           \
	{                                                                      \
		WARD_RENDER_NETWORK_OFF_VERSION, WARD_SURFACE_API,             \
		    WARD_MODE_READ_ONLY, false, NULL                           \
	}

/**
 * ward_render_network_off - what follows a command that failed because
 * its network was off (a refused name lookup or connect:
 * ward_result_network_denied):
 *
 *   [sandbox: network access denied: the network is off under <mode> mode]
 *
 * then, for a person (CLI), "allow a host with --allow-domain HOST
 * (repeatable; or the whole network with --network on)" and, when offered,
 * the escalation hint (ward_render_network_hint); for a model (MCP, API),
 * the hint naming network_permissions when offered, else (MCP, in a
 * session) how a person can allow it: "network_permissions cannot be
 * asked for here; a person can allow it: ward session network ID on, or
 * ward mcp --allow-domain HOST". The caller frees *out.
 */
WARD_EXTERN int
ward_render_network_off(char **out, const struct ward_render_network_off *r);

/**
 * ward_render_network_unresolved - the line for an allowed host that ward's
 * proxy could not resolve (its own lookup failed, outside the sandbox):
 *
 *   [sandbox: network: HOST is allowed, but ward's proxy could not resolve
 *   it (the lookup outside the sandbox failed: a DNS problem, not a
 *   refusal)]
 *
 * (one line). @host as for ward_render_network_denied. The caller frees
 * *out. 0, WARD_EINVAL or -ENOMEM.
 */
WARD_EXTERN int ward_render_network_unresolved(char **out, const char *host);

/**
 * ward_render_network_hint - the line after the network markers when a
 * network escalation is offered (once per call, never to the escalated
 * retry):
 *   MCP, API: retry this exact command once with network_permissions
 *         (the host, or "on") + justification; the approval prompt asks the
 *         user
 *   CLI:  retry once with --escalate-network HOST (or on)
 *         --justification TEXT; the approval prompt asks you
 *   ACP:  ward asks the user whether this exact command may run once
 *         with network access to the host; the answer follows
 */
WARD_EXTERN int ward_render_network_hint(char **out, enum ward_surface surface);

/**
 * ward_render_network_verdict - the text of a network escalation's
 * verdict (@what: "network access to HOST" or "the whole network (on)"),
 * each verdict its own:
 *   granted:   WHAT was granted for this command only
 *   rejected:  the user rejected WHAT for this command
 *   not-wider: WHAT would not widen this command's network (already
 *              allowed, denied by deny_domains, or the network is on);
 *              nothing was run and nobody was asked
 *   no service, policy never, cancelled, unavailable: as for a mode, with
 *              WHAT in place of the mode
 * The caller frees *out. 0, WARD_EINVAL or -ENOMEM.
 */
WARD_EXTERN int ward_render_network_verdict(char **out,
					    enum ward_surface surface,
					    enum ward_escalation_verdict v,
					    enum ward_subject subject,
					    const char *what);

/**
 * ward_render_retried - what follows a denial when a person allowed the
 * call once under the wider mode @mode (or, with @network, with network
 * access to @host, or to the whole network when @host is NULL) and ward
 * ran it again itself (`ward acp`, whose agents have no field to retry
 * with):
 *
 *   [sandbox: the user allowed this command once under workspace-write;
 *   it ran again, and its output follows]
 *   [sandbox: the user allowed this command once with network access to
 *   example.com; it ran again, and its output follows]
 *
 * The caller frees *out. 0, WARD_EINVAL (a host that
 * ward_render_network_denied would refuse) or -ENOMEM.
 */
WARD_EXTERN int ward_render_retried(char **out, enum ward_subject subject,
				    enum ward_mode mode, bool network,
				    const char *host);

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
 * unknown verdict. The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_verdict(char **out,
				    enum ward_escalation_verdict verdict,
				    enum ward_subject subject,
				    enum ward_mode requested);

/**
 * ward_render_unavailable - the sandbox-unavailable error: the sandbox is
 * unavailable (@detail, may be NULL or empty, says why) and ward is refusing
 * to run the <subject> unconfined. The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_unavailable(char **out, enum ward_subject subject,
					const char *detail);

/**
 * ward_render_policy - the standing prompt text for an approval policy:
 * a declaration for `never`, "" for `ask` (nothing is declared). Never
 * mentions the sandbox mode. Static storage.
 */
WARD_EXTERN const char *ward_render_policy(enum ward_approval_policy policy);

/**
 * ward_render_instructions - what an MCP server says about itself once, at
 * initialize ("instructions"): what ward is, the file and network denial
 * markers, the sanctioned retry (@escalation_offered: sandbox_permissions,
 * network_permissions) or that nothing can be widened, that long commands
 * belong in the background, and the approval-policy declaration
 * (ward_render_policy) when the policy is `never`. Like the standing
 * prompt, it never states the sandbox mode. The caller frees *out.
 */
WARD_EXTERN int ward_render_instructions(char **out, bool escalation_offered,
					 enum ward_approval_policy policy);

/** The tools whose descriptions ward renders. */
enum ward_tool {
	WARD_TOOL_BASH = 0, /* runs shell commands through the runners */
	WARD_TOOL_FILES,    /* read/write/edit/… through the fs fence */
	/* One tool each, as `ward mcp` exposes them: */
	WARD_TOOL_TASK_OUTPUT,	  /* output of a background command */
	WARD_TOOL_TASK_KILL,	  /* stop a background command */
	WARD_TOOL_READ_FILE,	  /* fs fence: read (denied only by rules) */
	WARD_TOOL_WRITE_FILE,	  /* fs fence: create or replace */
	WARD_TOOL_EDIT_FILE,	  /* fs fence: exact text replacement */
	WARD_TOOL_LIST_DIRECTORY, /* fs fence: list (denied only by rules) */
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

/**
 * ward_render_field_description - the description of input field @field
 * of @tool ("command", "workdir", "timeout_ms", "run_in_background",
 * "task_id", "wait_ms", "path", "offset", "limit", "content",
 * "create_parents", "old_text", "new_text", "old_string", "new_string",
 * "replace_all", "line_numbers", "recursive",
 * and the two escalation fields), or NULL for a field the tool does not
 * have. Static storage.
 */
WARD_EXTERN const char *ward_render_field_description(enum ward_tool tool,
						      const char *field);

/**
 * What one command (or background task) produced, for
 * ward_render_run(). Output may hold any bytes; @out_head is where the
 * @out_dropped bytes were cut from the middle (the kept head's length),
 * likewise for stderr.
 */
struct ward_render_run {
	const char *out;
	size_t out_len, out_head, out_dropped;
	const char *err;
	size_t err_len, err_head, err_dropped;
	/** A background task that has not ended yet: no exit status. */
	bool running;
	/** The background task's id, or NULL for a foreground command. */
	const char *task_id;
	int exit_code; /* -1: none */
	int signal;    /* 0: none */
	bool timed_out;
	unsigned long timeout_ms;
	bool denied;
	enum ward_mode mode; /* the mode it ran under (for the marker) */
	bool escalation_offered;
};

/**
 * ward_render_run - the text a command's result is shown as: stdout, then
 * stderr (headed "[stderr]" when both have output), each with
 * "[… N bytes omitted …]" where the middle was dropped; then one status
 * line ("exit code: N", "killed by signal N", "timed out after N ms; its
 * process group was killed", or "task ID is still running"); then, after
 * a denial, the marker and, when @r->escalation_offered, the hint. The
 * output bytes are copied as they are, except NUL bytes, which become
 * U+FFFD. The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_run(char **out, const struct ward_render_run *r);

/**
 * ward_render_foreground_clamped - the line after a foreground command
 * that ran into the default timeout of a client that follows no progress
 * (@timeout_ms), so that it would have outlived the client's own wait:
 *
 *   [stopped at ward's 55 s default for a client without progress reports
 *   (clients commonly stop waiting after 60 s): run a command that takes
 *   longer with run_in_background, then read it with task_output]
 *
 * The caller frees *out.
 */
WARD_EXTERN int ward_render_foreground_clamped(char **out,
					       unsigned long timeout_ms);

/**
 * ward_render_task_started - "started background task ID (pid N); …"
 * telling how to read and stop it. The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_task_started(char **out, const char *task_id,
					 long pid);

/**
 * ward_render_widen_advice - the approval-unavailable text when the
 * client cannot ask its user (an MCP client without elicitation): the
 * unavailable verdict, then that the model must not retry with
 * sandbox_permissions, and how the person can widen the session's mode
 * themselves (`ward session mode ID MODE`; @session_id NULL: without a
 * session). The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_widen_advice(char **out, enum ward_subject subject,
					 enum ward_mode requested,
					 const char *session_id);

/**
 * ward_render_fs_done - what a successful file change says: for
 * WARD_FS_OP_WRITE "wrote N bytes to PATH", for WARD_FS_OP_EDIT
 * "replaced N occurrence(s) in PATH" (@count: bytes or replacements).
 * WARD_EINVAL for another operation. The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_fs_done(char **out, enum ward_fs_op op,
				    const char *path, unsigned long long count);

/**
 * ward_render_list_truncated - the line after a listing cut to its bound:
 *
 *   [truncated: 1234 more entries not shown; list a subdirectory, or use
 *   depth/limit]
 *
 * ("at least" when @at_least: the listing itself stopped at its bound).
 * The caller frees *out.
 */
WARD_EXTERN int ward_render_list_truncated(char **out, size_t more,
					   bool at_least);

/**
 * ward_render_read_more - the line that follows a read stopped by its
 * limit: "[… the file continues: read on with offset N]". The caller
 * frees *out.
 */
WARD_EXTERN int ward_render_read_more(char **out,
				      unsigned long long next_offset);

/**
 * ward_render_listing - a directory listing, one entry per line:
 * "NAME/" for a directory, "NAME (N bytes)" for a file, "NAME@" for a
 * symlink, "NAME [access denied by a rule]" for an entry a `--` rule
 * covers; then "[… listing truncated]" when a bound stopped it, or
 * "(empty directory)" when there is nothing. The caller frees *out with
 * ward_free().
 */
WARD_EXTERN int ward_render_listing(char **out,
				    const struct ward_fs_listing *listing);

/**
 * ward_render_runner_hint - what a person can do about a runner that
 * cannot confine (ward_provider_problem): what to install, which kernel
 * setting to change, which binary to remove. One line. The caller frees
 * *out with ward_free().
 */
WARD_EXTERN int ward_render_runner_hint(char **out,
					const struct ward_runner_status *st);

/**
 * ward_render_wide_workspace - why a workspace of `/` (@root) or one that
 * is or holds the home directory is refused under workspace-write, and
 * what to pass instead (ward_policy_check_workspace()). One line, the one
 * text every front end shows. The caller frees *out with ward_free().
 */
WARD_EXTERN int ward_render_wide_workspace(char **out, const char *ws,
					   bool root);

WARD_END_DECL

#endif
