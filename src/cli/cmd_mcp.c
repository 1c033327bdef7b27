/*
 * ward mcp — the command line of the MCP server: its options, the
 * configuration, the session it serves (an existing one, or a new one in
 * the workspace), then the server itself (src/mcp, mcp_serve()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/mcp.h"

#include "cli.h"
#include "session_opts.h"
#include "policy_opts.h"

static const char mcp_usage[] =
    "ward mcp [--workspace DIR | --session ID] [--mode MODE] "
    "[--config FILE] [OPTIONS]";

static void print_help(void)
{
	printf(
	    "Usage: %s\n"
	    "\n"
	    "Serve the Model Context Protocol on stdin/stdout: any MCP client "
	    "(an agent)\n"
	    "gets a `bash` tool whose commands run under ward's "
	    "kernel-enforced "
	    "file\n"
	    "sandbox, background tasks (task_output, task_kill) and file "
	    "tools through the\n"
	    "file fence (read_file, write_file, edit_file, list_directory). "
	    "After a denial\n"
	    "the model may ask to retry once under a wider mode; the client "
	    "asks its user\n"
	    "(MCP elicitation) before anything runs.\n"
	    "\n"
	    "Every connection is a session: a new one in DIR, or the existing "
	    "session ID.\n"
	    "Its mode can be changed from another terminal with 'ward session "
	    "mode ID MODE';\n"
	    "the next call uses it.\n"
	    "\n"
	    "Options:\n"
	    "  -w, --workspace DIR    the workspace of a new session (default: "
	    ".)\n"
	    "      --session ID       serve an existing session, ID or a "
	    "unique "
	    "prefix of it\n"
	    "                         (its cwd is the workspace)\n"
	    "  -m, --mode MODE        set the session's mode: read-only, "
	    "workspace-write or\n"
	    "                         danger-full-access (default: ward.yml's, "
	    "else read-only)\n"
	    "  -r, --runner RUNNER    auto (default), bwrap or "
	    "landlock\n" CLI_CONFIG_HELP CLI_NETWORK_HELP CLI_ENV_KEEP_HELP
		CLI_ALLOW_UNIX_HELP
	    "  -h, --help             show this help and exit\n"
	    "\n"
	    "Advanced:\n"
	    "      --drain-timeout SECONDS\n"
	    "                         at end of input, let calls in progress "
	    "finish for\n"
	    "                         up to SECONDS (default 120; 0: stop "
	    "them at once)\n"
	    "\n"
	    "Only MCP goes to stdout; logs go to stderr. At end of input the "
	    "calls in\n"
	    "progress are answered when they finish (within --drain-timeout, "
	    "while the\n"
	    "client still reads), then every command and background task still "
	    "running\n"
	    "is stopped and ward exits 0. On SIGTERM, SIGINT or SIGHUP "
	    "everything is\n"
	    "stopped at once, and then ward dies of that signal.\n"
	    "\n"
	    "Client configuration (e.g. .mcp.json):\n"
	    "  {\"mcpServers\": {\"ward\": {\"command\": \"ward\",\n"
	    "    \"args\": [\"mcp\", \"--workspace\", \"/path/to/project\", "
	    "\"--mode\", \"workspace-write\"]}}}\n"
	    "\n"
	    "See ward-mcp(1).\n",
	    mcp_usage);
}

/* --drain-timeout SECONDS: a whole number from 0 to 3600. */
static unsigned long parse_drain(const char *arg)
{
	unsigned long long v;

	if (!cli_parse_scaled(&v, arg, NULL) ||
	    v > MCP_TIMEOUT_MAX_MS / 1000)
		die_usage(mcp_usage,
			  "invalid --drain-timeout '%s' (expected a whole "
			  "number of seconds from 0 to %lu)",
			  arg, MCP_TIMEOUT_MAX_MS / 1000);
	return (unsigned long)v * 1000;
}

/* --- set-up ------------------------------------------------------------ */

/*
 * Create the new session in @workspace, recording the mode and approval
 * policy in force (@mode, ward.yml's approval). Called only once the
 * configuration is known to be valid: a failed start leaves no session.
 */
static void create_session(ward_session **out, const char *workspace,
			   enum ward_mode mode,
			   enum ward_approval_policy approval)
{
	struct ward_session_create_options co =
	    WARD_SESSION_CREATE_OPTIONS_INIT;
	int err;

	co.cwd = workspace ? workspace : ".";
	co.set_mode = true;
	co.mode = mode;
	co.set_approval = true;
	co.approval = approval;
	err = ward_session_create_with(out, &co);
	if (err == -ENOENT || err == -ENOTDIR || err == WARD_EINVAL)
		die_usage(mcp_usage, "%s", ward_error_last());
	if (err)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
}

const struct cli_option cli_mcp_options[] = {
    CLI_POLICY_OPTIONS,
    CLI_CONFIG_OPTIONS,
    CLI_NETWORK_OPTIONS,
    CLI_OPTION_ENV_KEEP,
    CLI_OPTION_ALLOW_UNIX,
    CLI_OPTION_SESSION,
    {"drain-timeout", CLI_OPT_DRAIN, "SECONDS", CLI_VALUE_TEXT, NULL},
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

int cmd_mcp(int argc, char **argv)
{
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct mcp_options mo = {0};
	struct cli_setup setup;
	struct cli_getopt g;
	ward_session *session = NULL;
	const char *session_id = NULL;
	enum ward_mode flag_mode;
	bool mode_given;
	int opt, rc;

	mo.drain_ms = MCP_DRAIN_DEFAULT_MS;
	cli_getopt_init(&g, cli_mcp_options, true, NULL, mcp_usage, argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (opt == CLI_OPT_DRAIN) {
			mo.drain_ms = parse_drain(optarg);
			continue;
		}
		if (opt == CLI_OPT_SESSION) {
			if (!ward_session_id_valid(optarg))
				die_usage(mcp_usage,
					  "invalid session id '%s' (letters, "
					  "digits and '-')",
					  optarg);
			session_id = optarg;
			continue;
		}
		if (cli_config_option(&po, opt, optarg, mcp_usage) ||
		    cli_policy_option(&po, opt, optarg, mcp_usage))
			continue;
		if (opt == 'h') {
			print_help();
			return CLI_EXIT_OK;
		}
		die_getopt(mcp_usage, opt, argc, argv);
	}
	if (optind < argc)
		die_usage(mcp_usage, "unexpected argument '%s'", argv[optind]);
	if (session_id && po.workspace)
		die_usage(mcp_usage,
			  "option '--workspace' cannot be combined with "
			  "'--session': the session's cwd is the workspace");

	if (session_id) {
		/* Dies on failure, before any MCP. */
		session = cli_session_open(session_id, mcp_usage);
		if (ward_session_cwd(session))
			po.workspace = ward_session_cwd(session);
	}
	/* ward.yml's own mode is the session's default; --mode is recorded
	 * in the session as a knob event (like `ward session mode`). */
	flag_mode = po.mode;
	mode_given = po.mode_given;
	po.mode_given = false;
	cli_setup_build(&setup, &po, mcp_usage,
			CLI_SETUP_PROVIDER | CLI_SETUP_POLICY);
	mo.defaults.mode = ward_config_mode(setup.config, NULL);
	mo.defaults.approval = ward_config_approval(setup.config, NULL);
	mo.defaults.root = ward_config_workspace(setup.config, NULL);
	if (!session_id) {
		/* A new session: only now that the configuration is valid,
		 * and with the mode in force recorded in it. */
		cli_check_workspace(setup.policy,
				    mode_given ? flag_mode : mo.defaults.mode,
				    mcp_usage);
		create_session(&session, po.workspace,
			       mode_given ? flag_mode : mo.defaults.mode,
			       mo.defaults.approval);
	} else if (mode_given &&
		   ward_session_set_mode(NULL, session, flag_mode,
					 &mo.defaults) != 0) {
		die(CLI_EXIT_WARD, "session %s: %s", ward_session_id(session),
		    ward_error_last());
	}

	mo.config = setup.config;
	mo.policy = setup.policy;
	mo.provider = setup.provider;
	mo.session = session;
	rc = mcp_serve(&mo);
	ward_session_free(session);
	cli_setup_free(&setup, &po);
	return rc;
}
