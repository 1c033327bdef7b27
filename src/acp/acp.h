/*
 * ward's ACP proxy — its entry, for the front end that starts it.
 *
 * `ward acp -- AGENT [ARGS…]` speaks the Agent Client Protocol to an
 * editor on stdin/stdout and to the agent it spawns on the agent's own
 * stdio, and sits in between: everything passes through, except that ward
 * serves the agent's terminals and file requests itself (under the
 * session's policy, through libward), publishes the Permissions selector
 * as a session config option and asks the person for approvals with
 * session/request_permission (see man/ward-acp.1 and docs/ACP.md). It is
 * built on libward's public API only; src/cli/cmd_acp.c parses the command
 * line, builds the flag layer, the provider and the agent's ceiling, and
 * hands them over here.
 */
#ifndef WARD_ACP_H
#define WARD_ACP_H

#include <stdbool.h>

#include "ward/config.h"
#include "ward/mode.h"
#include "ward/provider.h"

/* How long the agent may take to exit after the editor's end of input
 * (default of --agent-grace), in ms. */
#define ACP_GRACE_DEFAULT_MS 5000UL
/* The longest --agent-grace, in ms. */
#define ACP_GRACE_MAX_MS 600000UL

/* What the proxy serves. Everything is borrowed for the whole run. */
struct acp_options {
	/*
	 * The flag layer (--config, --access, --network, …) every session's
	 * configuration is loaded with; its workspace is replaced by the
	 * session's cwd (each session is a workspace of its own).
	 */
	const struct ward_config_options *flags;
	/* The runner chain. */
	ward_provider *provider;
	/* --mode: the mode recorded in every new session (else the
	 * configuration's mode is recorded). */
	bool mode_given;
	enum ward_mode mode;
	/* The agent's command line, NULL-terminated. */
	char *const *agent_argv;
	/*
	 * The agent's ceiling (--agent-mode, --agent-allow-domain,
	 * --agent-env-keep): the agent itself runs confined under this
	 * configuration's mode, workspace, rules and network. NULL: the
	 * agent runs unconfined (only what it asks ward for is confined).
	 */
	const ward_config *agent_config;
	/* The agent's working directory when it runs unconfined. */
	const char *agent_cwd;
	/* --agent-grace, in ms. */
	unsigned long grace_ms;
};

/*
 * acp_serve - proxy ACP between stdin/stdout (the editor) and the agent
 * until either side ends, or a stop signal (SIGTERM, SIGINT, SIGHUP).
 * Call it before the process starts any thread. Returns the exit status:
 * 0 after the editor's end of input, the agent's own status after it
 * exited (128+N for signal N), 125 when the agent could not be started;
 * on a stop signal everything is stopped and recorded and the process
 * dies of that signal.
 */
int acp_serve(const struct acp_options *o);

#endif
