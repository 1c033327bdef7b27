/*
 * ward confine — print what to spawn to run a command confined, without
 * running it: for harnesses in other languages that spawn it themselves.
 *
 * For the landlock runner the argv is the landlock-run launcher's (ward's
 * own executor confines in-process instead; the effect is the same).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/call.h"

#include "cli.h"
#include "policy_opts.h"

static const char confine_usage[] =
    "ward confine [OPTIONS] -- COMMAND [ARG...]\n"
    "       ward confine [OPTIONS] -c 'SHELL STRING' [NAME [ARG...]]";

static void print_help(void)
{
	printf("Usage: %s\n"
	       "\n"
	       "Print the argv that runs COMMAND confined, as one "
	       "shell-quoted line,\n"
	       "without running anything. Spawn it with WARD_SANDBOX=RUNNER "
	       "in the\n"
	       "environment, then look for the runner's denial signature in "
	       "stderr.\n"
	       "For danger-full-access the argv is COMMAND itself (runner "
	       "none).\n"
	       "\n"
	       "Options:\n"
	       "  -m, --mode MODE       read-only, workspace-write or "
	       "danger-full-access;\n"
	       "                        default: ward.yml's mode, else "
	       "read-only\n"
	       "  -w, --workspace DIR   workspace root (default: .)\n"
	       "  -r, --runner RUNNER   auto (default: the chain bwrap, "
	       "landlock), bwrap\n"
	       "                        or landlock\n"
	       "      --access RULE     an access rule: 'rw PATH', "
	       "'r- PATH|GLOB' or\n"
	       "                        '-- PATH|GLOB' (repeatable; added to "
	       "ward.yml's)\n"
	       "      --config FILE     read FILE after the user and project "
	       "files\n"
	       "      --keep-new-repos  keep a git repository a command makes\n"
	       "      --allow-home-workspace\n"
	       "                        accept /, $HOME or a directory holding "
	       "it as the\n"
	       "                        workspace under workspace-write\n"
	       "      --allow-unix PATH let the command connect to the unix "
	       "socket PATH\n"
	       "                        (or any beneath the directory PATH; "
	       "repeatable)\n"
	       "      --network off|on  the command's network (default: off, "
	       "on in\n"
	       "                        danger-full-access)\n"
	       "      --allow-domain PATTERN\n"
	       "                        allow a domain through ward's proxy "
	       "(repeatable)\n"
	       "  -c STRING             confine 'bash -c STRING'\n"
	       "      --json            print one JSON object: argv, cwd, "
	       "runner,\n"
	       "                        enforcement, partial, mode, "
	       "denial_signature,\n"
	       "                        warnings, env\n"
	       "  -q, --quiet           say the warnings (rules the runner "
	       "cannot express,\n"
	       "                        project values ignored) only when\n"
	       "                        they changed since ward "
	       "last said them\n"
	       "  -h, --help            show this help and exit\n"
	       "\n"
	       "Exit status:\n"
	       "  0    printed          2    usage error\n"
	       "  125  ward failed or the sandbox is unavailable\n"
	       "\n"
	       "Examples:\n"
	       "  ward confine -- make test\n"
	       "  ward confine --runner landlock --mode workspace-write "
	       "--json -- npm ci\n"
	       "  eval \"WARD_SANDBOX=landlock $(ward confine -r landlock -- "
	       "ls)\"\n",
	       confine_usage);
}

/* A JSON array of strings. */
static void print_json(const ward_call *call, char *const *argv)
{
	const ward_plan *plan = ward_call_plan(call);
	enum ward_runner r = ward_plan_runner(plan);
	const char *runner = ward_runner_name(r);
	json_t *obj = json_object();
	json_t *env = json_object();

	if (!obj || !env)
		die(CLI_EXIT_WARD, "out of memory");
	if (json_object_set_new(obj, "argv", ward_json_strv(argv)) ||
	    json_object_set_new(obj, "cwd",
				ward_json_str(ward_call_cwd(call))) ||
	    json_object_set_new(obj, "runner", json_string(runner)) ||
	    json_object_set_new(obj, "enforcement",
				json_string(ward_enforcement_name(
				    ward_plan_enforcement(plan)))) ||
	    json_object_set_new(obj, "partial",
				ward_json_strv(ward_plan_partial(plan))) ||
	    json_object_set_new(
		obj, "mode",
		json_string(ward_mode_name(ward_plan_mode(plan)))) ||
	    json_object_set_new(
		obj, "network",
		json_string(ward_network_name(ward_plan_network(plan)))) ||
	    json_object_set_new(
		obj, "denial_signature",
		json_string(ward_plan_denial_signature(plan))) ||
	    json_object_set_new(obj, "warnings",
				ward_json_strv(ward_plan_warnings(plan))) ||
	    /* Runner none confines nothing: the environment stays as is. */
	    (r != WARD_RUNNER_NONE &&
	     json_object_set_new(env, "WARD_SANDBOX", json_string(runner))) ||
	    json_object_set_new(obj, "env", env))
		die(CLI_EXIT_WARD, "out of memory");
	cli_json_print(obj);
}

const struct cli_option cli_confine_options[] = {
    CLI_POLICY_OPTIONS,	   CLI_CONFIG_OPTIONS, CLI_NETWORK_OPTIONS,
    CLI_OPTION_ALLOW_UNIX, CLI_OPTION_SHELL,   CLI_OPTION_JSON,
    CLI_OPTION_QUIET,	   CLI_OPTION_HELP,    CLI_OPTION_END,
};

int cmd_confine(int argc, char **argv)
{
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	struct cli_setup setup;
	ward_call *call = NULL;
	char **wrapped = NULL;
	char detail[1024];
	struct cli_getopt g;
	bool json = false, quiet = false;
	char **cmd;
	int opt, err, status;

	cli_getopt_init(&g, cli_confine_options, true, NULL, confine_usage,
			argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (cli_config_option(&po, opt, optarg, confine_usage) ||
		    cli_policy_option(&po, opt, optarg, confine_usage))
			continue;
		switch (opt) {
		case CLI_OPT_JSON:
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help();
			return CLI_EXIT_OK;
		default:
			die_getopt(confine_usage, opt, argc, argv);
		}
	}
	cmd =
	    cli_command_argv(&po, argc - optind, argv + optind, confine_usage);
	cli_setup_build(&setup, &po, confine_usage,
			CLI_SETUP_PROVIDER | (json ? CLI_SETUP_JSON : 0) |
			    (quiet ? CLI_SETUP_QUIET : 0));

	/* The same call `ward run` would make, planned the same way. */
	co.config = setup.config;
	co.provider = setup.provider;
	co.subject = WARD_SUBJECT_COMMAND;
	co.surface = WARD_SURFACE_CLI;
	co.tool = "confine";
	co.argv = cmd;
	err = ward_call_new(&call, &co);
	if (!err)
		err = ward_call_plan_error(call);
	if (!err)
		err = ward_plan_apply(ward_call_plan(call));
	if (!err)
		err = ward_plan_argv(&wrapped, ward_call_plan(call), cmd,
				     ward_call_cwd(call));
	if (err) {
		snprintf(detail, sizeof(detail), "%s",
			 call && ward_call_plan_error(call)
			     ? ward_call_plan_detail(call)
			     : ward_error_last());
		if (err == WARD_EUNAVAILABLE || err == WARD_ERUNNER)
			cli_sandbox_unavailable(err, detail, setup.provider,
						po.runner, json);
		/* --allow-domain asks for what confine cannot print. */
		status = err == WARD_EINVAL && po.nallow_domains
			     ? CLI_EXIT_USAGE
			     : CLI_EXIT_WARD;
		if (json) {
			cli_json_error(CLI_ERR("WARD_FAILED"), detail);
			exit(status);
		}
		die(status, "%s", *detail ? detail : ward_strerror(err));
	}

	if (json) {
		print_json(call, wrapped);
	} else {
		/* As `ward run` says them before it runs the same argv; the
		 * JSON form carries them as "warnings" instead. */
		cli_print_warnings(ward_call_warnings(call), "command",
				   ward_call_cwd(call), quiet);
		for (size_t i = 0; wrapped[i]; i++) {
			if (i)
				putchar(' ');
			cli_shell_quote(stdout, wrapped[i]);
		}
		putchar('\n');
	}

	ward_strv_free(wrapped);
	ward_call_free(call);
	cli_setup_free(&setup, &po);
	free(cmd);
	return CLI_EXIT_OK;
}
