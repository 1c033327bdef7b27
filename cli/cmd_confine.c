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
	       "  -c STRING             confine 'bash -c STRING'\n"
	       "      --json            print one JSON object: argv, runner, "
	       "enforcement,\n"
	       "                        mode, denial_signature, env\n"
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

static void print_json(const ward_confined *c)
{
	char *const *argv = ward_confined_argv(c);
	const char *runner = ward_runner_name(ward_confined_runner(c));
	json_t *obj = json_object();
	json_t *arr = json_array();
	json_t *env = json_object();

	if (!obj || !arr || !env)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; argv && argv[i]; i++)
		if (json_array_append_new(
			arr, cli_json_text(argv[i], strlen(argv[i]))))
			die(CLI_EXIT_WARD, "out of memory");
	if (json_object_set_new(obj, "argv", arr) ||
	    json_object_set_new(obj, "runner", json_string(runner)) ||
	    json_object_set_new(obj, "enforcement",
				json_string(ward_enforcement_name(
				    ward_confined_enforcement(c)))) ||
	    json_object_set_new(
		obj, "mode",
		json_string(ward_mode_name(ward_confined_mode(c)))) ||
	    json_object_set_new(
		obj, "denial_signature",
		json_string(ward_confined_denial_signature(c))) ||
	    /* Runner none confines nothing: the environment stays as is. */
	    (ward_confined_runner(c) != WARD_RUNNER_NONE &&
	     json_object_set_new(env, "WARD_SANDBOX", json_string(runner))) ||
	    json_object_set_new(obj, "env", env))
		die(CLI_EXIT_WARD, "out of memory");
	cli_json_print(obj);
}

int cmd_confine(int argc, char **argv)
{
	static const struct option longopts[] = {
	    CLI_POLICY_LONGOPTS,
	    CLI_CONFIG_LONGOPTS,
	    {"json", no_argument, NULL, CLI_OPT_JSON},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct cli_setup setup;
	ward_provider *provider = NULL;
	ward_confined *confined = NULL;
	ward_policy *policy = NULL;
	char *const *wrapped;
	char detail[1024];
	bool json = false;
	char **cmd;
	int opt, err;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:" CLI_POLICY_SHORTOPTS "h",
				  longopts, NULL)) != -1) {
		if (cli_config_option(&po, opt, optarg, confine_usage) ||
		    cli_policy_option(&po, opt, optarg, confine_usage))
			continue;
		switch (opt) {
		case CLI_OPT_JSON:
			json = true;
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
			CLI_SETUP_PROVIDER | (json ? CLI_SETUP_JSON : 0));
	policy = setup.policy;
	provider = setup.provider;

	err = ward_provider_confine(&confined, provider, policy, cmd);
	if (err) {
		snprintf(detail, sizeof(detail), "%s", ward_error_last());
		if (err == WARD_EUNAVAILABLE || err == WARD_ERUNNER)
			cli_sandbox_unavailable(err, detail, provider,
						po.runner, json);
		if (json) {
			cli_json_error("WARD_FAILED", detail);
			exit(CLI_EXIT_WARD);
		}
		die(CLI_EXIT_WARD, "%s", *detail ? detail : ward_strerror(err));
	}

	if (json) {
		print_json(confined);
	} else {
		wrapped = ward_confined_argv(confined);
		for (size_t i = 0; wrapped && wrapped[i]; i++) {
			if (i)
				putchar(' ');
			cli_shell_quote(stdout, wrapped[i]);
		}
		putchar('\n');
	}

	ward_confined_free(confined);
	cli_setup_free(&setup, &po);
	free(cmd);
	return CLI_EXIT_OK;
}
