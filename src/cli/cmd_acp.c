/*
 * ward acp — the command line of the ACP proxy: its options, the flag
 * layer every session's configuration is loaded with, the provider, the
 * agent's ceiling (--agent-mode: a configuration of its own), then the
 * proxy itself (src/acp, acp_serve()).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "acp/acp.h"
#include "ward/env.h"
#include "ward/network.h"

#include "cli.h"
#include "policy_opts.h"

static const char acp_usage[] = "ward acp [OPTIONS] -- AGENT [ARG...]";

static void print_help(void)
{
	printf(
	    "Usage: %s\n"
	    "\n"
	    "Sit between an editor and an ACP coding agent (the Agent Client "
	    "Protocol):\n"
	    "the editor speaks ACP to ward on stdin/stdout, ward starts AGENT "
	    "and speaks\n"
	    "to it on its own stdio. Everything passes through, except that "
	    "ward serves\n"
	    "the agent's terminals and file reads and writes itself, under "
	    "the session's\n"
	    "sandbox (the mode, rules and network `ward run` applies), adds "
	    "a Permissions\n"
	    "selector (ward's presets) to every session's config options, "
	    "and after a\n"
	    "denial asks the person through the editor whether to allow it "
	    "once under a\n"
	    "wider mode.\n"
	    "\n"
	    "Every ACP session is a ward session working in the session's "
	    "cwd; its mode\n"
	    "can also be changed from a terminal with 'ward session mode ID "
	    "MODE'.\n"
	    "\n"
	    "Options:\n"
	    "  -m, --mode MODE        the mode a new session starts in: "
	    "read-only,\n"
	    "                         workspace-write or danger-full-access "
	    "(default:\n"
	    "                         ward.yml's, else read-only)\n"
	    "  -w, --workspace DIR    where the agent itself runs (default: "
	    ".)\n"
	    "  -r, --runner RUNNER    auto (default), bwrap or "
	    "landlock\n" CLI_CONFIG_HELP CLI_NETWORK_HELP CLI_ENV_KEEP_HELP
		CLI_ALLOW_UNIX_HELP
	    "      --agent-mode MODE  run the agent itself confined under "
	    "MODE (a ceiling\n"
	    "                         for what it does without asking; "
	    "default: unconfined)\n"
	    "      --agent-allow-domain PATTERN\n"
	    "                         with --agent-mode: let the agent reach "
	    "this domain\n"
	    "                         (its model's API; repeatable)\n"
	    "      --agent-env-keep NAME\n"
	    "                         with --agent-mode: keep variable NAME "
	    "(an API key)\n"
	    "                         in the agent's environment "
	    "(repeatable)\n"
	    "      --agent-access RULE\n"
	    "                         with --agent-mode: an access rule for "
	    "the agent only\n"
	    "                         (e.g. 'rw ~/.claude', its own state; "
	    "repeatable)\n"
	    "  -h, --help             show this help and exit\n"
	    "\n"
	    "Advanced:\n"
	    "      --agent-grace SECONDS\n"
	    "                         after the editor's end of input, how "
	    "long the agent\n"
	    "                         may take to exit before it is stopped "
	    "(default 5)\n"
	    "\n"
	    "Only ACP goes to stdout; ward's logs and the agent's stderr go "
	    "to stderr.\n"
	    "When the agent exits, ward ends with its exit status; at the "
	    "editor's end\n"
	    "of input the agent's input ends too, every terminal is stopped "
	    "and\n"
	    "recorded, and ward exits 0.\n"
	    "\n"
	    "Editor configuration (Zed's settings.json):\n"
	    "  \"agent_servers\": {\"Sandboxed agent\": {\"command\": "
	    "\"ward\",\n"
	    "    \"args\": [\"acp\", \"--mode\", \"workspace-write\", \"--\", "
	    "\"AGENT\", \"--acp\"]}}\n"
	    "\n"
	    "See ward-acp(1) and docs/ACP.md.\n",
	    acp_usage);
}

/* --agent-grace SECONDS: a whole number from 0 to 600. */
static unsigned long parse_grace(const char *arg)
{
	unsigned long long v;

	if (!cli_parse_scaled(&v, arg, NULL) || v > ACP_GRACE_MAX_MS / 1000)
		die_usage(acp_usage,
			  "invalid --agent-grace '%s' (expected a whole "
			  "number of seconds from 0 to %lu)",
			  arg, ACP_GRACE_MAX_MS / 1000);
	return (unsigned long)v * 1000;
}

/* Append @s to the vector *@v of *@n (malloc'd, grown). */
static void push(const char ***v, size_t *n, const char *s)
{
	const char **grown = realloc(*v, (*n + 1) * sizeof(*grown));

	if (!grown)
		die(CLI_EXIT_WARD, "out of memory");
	grown[(*n)++] = s;
	*v = grown;
}

/* The agent's own options, until --agent-mode makes them a ceiling. */
struct agent_opts {
	bool given;
	enum ward_mode mode;
	const char **domains, **env_keep, **access;
	size_t ndomains, nenv_keep, naccess;
};

/* Handle an --agent-* option; false when @opt is none. */
static bool agent_option(struct agent_opts *a, int opt, const char *arg)
{
	switch (opt) {
	case CLI_OPT_AGENT_MODE:
		if (ward_mode_parse(&a->mode, arg) != 0)
			die_usage(acp_usage,
				  "invalid --agent-mode '%s' (valid: "
				  "read-only, workspace-write, "
				  "danger-full-access)",
				  arg);
		a->given = true;
		return true;
	case CLI_OPT_AGENT_DOMAIN:
		if (ward_network_pattern_check(arg) != 0)
			die_usage(acp_usage,
				  "option '--agent-allow-domain' '%s': %s", arg,
				  ward_error_last());
		push(&a->domains, &a->ndomains, arg);
		return true;
	case CLI_OPT_AGENT_ENV_KEEP:
		if (!ward_env_pattern_valid(arg))
			die_usage(acp_usage,
				  "option '--agent-env-keep' needs a variable "
				  "name (letters, digits, _; or a pattern "
				  "with * ? [ ]), not '%s'",
				  arg);
		push(&a->env_keep, &a->nenv_keep, arg);
		return true;
	case CLI_OPT_AGENT_ACCESS:
		if (!*arg)
			die_usage(acp_usage, "option '--agent-access' needs a "
					     "rule (e.g. 'rw ~/.claude')");
		push(&a->access, &a->naccess, arg);
		return true;
	}
	return false;
}

/*
 * The agent's ceiling: ward.yml and the command line's rules, with the
 * agent's mode, its allowlist and its kept variables. Dies as
 * cli_setup_build() does.
 */
static void agent_setup(struct cli_setup *out, struct cli_policy_opts *apo,
			const struct cli_policy_opts *po,
			const struct agent_opts *a)
{
	apo->mode = a->mode;
	apo->mode_given = true;
	apo->workspace = po->workspace;
	apo->config_file = po->config_file;
	for (size_t i = 0; i < po->naccess; i++)
		push(&apo->access, &apo->naccess, po->access[i]);
	for (size_t i = 0; i < a->naccess; i++)
		push(&apo->access, &apo->naccess, a->access[i]);
	for (size_t i = 0; i < po->nallow_unix; i++)
		push(&apo->allow_unix, &apo->nallow_unix, po->allow_unix[i]);
	for (size_t i = 0; i < po->nenv_keep; i++)
		push(&apo->env_keep, &apo->nenv_keep, po->env_keep[i]);
	for (size_t i = 0; i < a->nenv_keep; i++)
		push(&apo->env_keep, &apo->nenv_keep, a->env_keep[i]);
	for (size_t i = 0; i < a->ndomains; i++)
		push(&apo->allow_domains, &apo->nallow_domains, a->domains[i]);
	cli_setup_build(out, apo, acp_usage, CLI_SETUP_POLICY);
	/* The agent starts in the current directory unless told. */
	cli_check_workspace(out->policy, a->mode, acp_usage);
}

const struct cli_option cli_acp_options[] = {
    CLI_POLICY_OPTIONS,
    CLI_CONFIG_OPTIONS,
    CLI_NETWORK_OPTIONS,
    CLI_OPTION_ENV_KEEP,
    CLI_OPTION_ALLOW_UNIX,
    {"agent-mode", CLI_OPT_AGENT_MODE, "MODE", CLI_VALUE_MODE, NULL},
    {"agent-allow-domain", CLI_OPT_AGENT_DOMAIN, "PATTERN", CLI_VALUE_TEXT,
     NULL},
    {"agent-env-keep", CLI_OPT_AGENT_ENV_KEEP, "NAME", CLI_VALUE_TEXT, NULL},
    {"agent-access", CLI_OPT_AGENT_ACCESS, "RULE", CLI_VALUE_TEXT, NULL},
    {"agent-grace", CLI_OPT_AGENT_GRACE, "SECONDS", CLI_VALUE_TEXT, NULL},
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

int cmd_acp(int argc, char **argv)
{
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct cli_policy_opts apo = CLI_POLICY_OPTS_INIT;
	struct cli_setup setup, asetup = {NULL, NULL, NULL};
	struct ward_config_options flags;
	struct acp_options ao = {0};
	struct agent_opts a = {false, WARD_MODE_DEFAULT, NULL, NULL, NULL, 0, 0,
			       0};
	struct cli_getopt g;
	char cwd[4096];
	int opt, rc;

	ao.grace_ms = ACP_GRACE_DEFAULT_MS;
	cli_getopt_init(&g, cli_acp_options, true, NULL, acp_usage, argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (opt == CLI_OPT_AGENT_GRACE) {
			ao.grace_ms = parse_grace(optarg);
			continue;
		}
		if (agent_option(&a, opt, optarg) ||
		    cli_config_option(&po, opt, optarg, acp_usage) ||
		    cli_policy_option(&po, opt, optarg, acp_usage))
			continue;
		if (opt == 'h') {
			print_help();
			return CLI_EXIT_OK;
		}
		die_getopt(acp_usage, opt, argc, argv);
	}
	if (optind >= argc)
		die_usage(acp_usage, "no agent command given (ward acp "
				     "[OPTIONS] -- AGENT [ARG...])");
	if (!*argv[optind])
		die_usage(acp_usage, "empty agent command name");
	if (!a.given && (a.ndomains || a.nenv_keep || a.naccess))
		die_usage(acp_usage,
			  "option '--%s' needs --agent-mode: without it the "
			  "agent runs unconfined, with the network and the "
			  "environment it was started with",
			  a.ndomains	? "agent-allow-domain"
			  : a.nenv_keep ? "agent-env-keep"
					: "agent-access");

	/* --mode is recorded in every new session as a knob event; ward.yml's
	 * own mode stays the default each session folds against. */
	ao.mode_given = po.mode_given;
	ao.mode = po.mode;
	po.mode_given = false;
	cli_setup_build(&setup, &po, acp_usage, CLI_SETUP_PROVIDER);
	cli_config_options(&flags, &po);
	if (a.given)
		agent_setup(&asetup, &apo, &po, &a);

	ao.flags = &flags;
	ao.provider = setup.provider;
	ao.agent_argv = argv + optind;
	ao.agent_config = asetup.config;
	ao.agent_cwd = ward_config_workspace(setup.config, NULL);
	if (!ao.agent_cwd)
		ao.agent_cwd = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
	/* Like ward run: 127 or 126 for an agent that is not there or
	 * cannot be run, said before anything starts. */
	{
		char why[PATH_MAX + 64];

		rc = cli_find_command(ao.agent_argv[0], ao.agent_cwd, why,
				      sizeof(why));
		if (rc) {
			fprintf(stderr, "ward acp: %s\n", why);
			cli_setup_free(&asetup, &apo);
			cli_setup_free(&setup, &po);
			free(a.domains);
			free(a.env_keep);
			free(a.access);
			return rc;
		}
	}
	rc = acp_serve(&ao);
	cli_setup_free(&asetup, &apo);
	cli_setup_free(&setup, &po);
	free(a.domains);
	free(a.env_keep);
	free(a.access);
	return rc;
}
