/*
 * ward's MCP server — its entry, for the front end that starts it.
 *
 * The server speaks the Model Context Protocol on stdin/stdout (see
 * man/ward-mcp.1 and docs/MCP.md). It is built on libward's public API
 * only; `ward mcp` (src/cli/cmd_mcp.c) parses the command line, loads the
 * configuration, opens or creates the session and hands them over here.
 */
#ifndef WARD_MCP_H
#define WARD_MCP_H

#include <stdbool.h>

#include "ward/config.h"
#include "ward/policy.h"
#include "ward/provider.h"
#include "ward/session.h"

/* A foreground command's default and largest timeout (the tools'
 * descriptions in render.c say the same numbers). */
#define MCP_TIMEOUT_DEFAULT_MS 120000UL
#define MCP_TIMEOUT_MAX_MS     3600000UL
/* The foreground default for a request without a progress token: the
 * client hears nothing until the result, and most stop waiting at 60 s
 * (the TypeScript SDK's default request timeout), so the command ends just
 * before that and the result says to use run_in_background. */
#define MCP_TIMEOUT_NO_PROGRESS_MS 55000UL
/* How long end of input waits for calls in progress to finish (default of
 * --drain-timeout): the default timeout of a foreground command, so a call
 * made with the defaults is never cut short. */
#define MCP_DRAIN_DEFAULT_MS MCP_TIMEOUT_DEFAULT_MS

/* What the server serves. Everything is borrowed for the whole run. */
struct mcp_options {
	ward_config *config;	 /* the loaded configuration */
	ward_policy *policy;	 /* its base policy (for the workspace) */
	ward_provider *provider; /* the runner chain */
	ward_session *session;	 /* the session every call belongs to */
	/* The session's defaults (ward.yml's mode, approval, workspace). */
	struct ward_session_defaults defaults;
	unsigned long drain_ms; /* --drain-timeout, in ms */
};

/*
 * mcp_serve - serve MCP on stdin/stdout until end of input or a stop
 * signal (SIGTERM, SIGINT, SIGHUP; SIGINT and SIGHUP stay ignored when
 * they were). Call it before the process starts any thread. Returns 0 at
 * end of input; on a stop signal everything is stopped and recorded and
 * the process dies of that signal.
 */
int mcp_serve(const struct mcp_options *o);

#endif
