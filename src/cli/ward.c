/*
 * ward — the command-line program: the subcommand table, global --help and
 * --version, and the dispatch (the helpers every subcommand shares are in
 * common.c).
 *
 * Start-up is kept lean on purpose: `ward run --runner landlock -- true`
 * must cost little more than `sh -c true`, so nothing here reads
 * configuration or probes anything before a subcommand asks for it.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <nss.h>
#endif

#include "cli.h"
#include "cmd_config.h"
#include "cmd_fs.h"
#include "session_opts.h"

static int cmd_help(int argc, char **argv);
static int completion_main(int argc, char **argv);

static const struct cli_option help_options[] = {
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

/*
 * The command table: `ward --help`, the dispatcher and the completion
 * scripts (`ward completion`) read it, with each command's option table.
 */
const struct cli_command cli_commands[] = {
    {"run",
     cmd_run,
     "run a command under the file sandbox",
     cli_run_options,
     NULL,
     {CLI_VALUE_COMMAND}},
    {"probe",
     cmd_probe,
     "show which runners can confine on this machine",
     cli_probe_options,
     NULL,
     {CLI_VALUE_NONE}},
    {"confine",
     cmd_confine,
     "print the confined argv for a command, without running it",
     cli_confine_options,
     NULL,
     {CLI_VALUE_COMMAND}},
    {"fs",
     cmd_fs,
     "file operations through the in-process file fence",
     cli_fs_options,
     cli_fs_commands,
     {CLI_VALUE_NONE}},
    {"session",
     cmd_session,
     "sessions: per-session mode, approval and log",
     cli_session_options,
     cli_session_commands,
     {CLI_VALUE_NONE}},
    {"quarantine",
     cmd_quarantine,
     "what the guard took out of workspaces: list, restore, prune",
     cli_quarantine_options,
     cli_quarantine_commands,
     {CLI_VALUE_NONE}},
    {"config",
     cmd_config,
     "check ward.yml and show the effective setup",
     cli_config_cmd_options,
     cli_config_commands,
     {CLI_VALUE_NONE}},
    {"mcp",
     cmd_mcp,
     "serve sandboxed bash and file tools over MCP (stdio)",
     cli_mcp_options,
     NULL,
     {CLI_VALUE_NONE}},
    {"acp",
     cmd_acp,
     "put an ACP agent's terminals and file edits under the sandbox",
     cli_acp_options,
     NULL,
     {CLI_VALUE_COMMAND}},
    {"completion",
     completion_main,
     "print the bash or zsh completion script",
     cli_completion_options,
     NULL,
     {CLI_VALUE_SHELL}},
    {"help",
     cmd_help,
     "show the help of a command",
     help_options,
     NULL,
     {CLI_VALUE_TOPIC}},
    {NULL, NULL, NULL, NULL, NULL, {CLI_VALUE_NONE}},
};

/* ward's own options, before a command (parsed by main()). */
const struct cli_option cli_ward_options[] = {
    CLI_OPTION_HELP,
    {"version", 'V', NULL, CLI_VALUE_NONE, NULL},
    CLI_OPTION_END,
};

static const char ward_usage[] = "ward COMMAND [OPTIONS] [ARG...]";

/* `ward completion`: the scripts are generated from the table above. */
static int completion_main(int argc, char **argv)
{
	return cmd_completion(argc, argv, cli_commands, cli_ward_options);
}

/* --- the program ----------------------------------------------------- */

static void print_help(FILE *out)
{
	fprintf(out,
		"Usage: %s\n"
		"       ward --help | --version\n"
		"\n"
		"Run commands under a kernel-enforced file sandbox "
		"(bubblewrap or Landlock).\n"
		"\n"
		"Commands:\n",
		ward_usage);
	for (size_t i = 0; cli_commands[i].name; i++)
		fprintf(out, "  %-10s %s\n", cli_commands[i].name,
			cli_commands[i].summary);
	fprintf(out,
		"\n"
		"Options:\n"
		"  -h, --help     show this help and exit\n"
		"  -V, --version  show the version and exit\n"
		"\n"
		"Run 'ward COMMAND --help' (or 'ward help COMMAND') for a "
		"command's options.\n"
		"\n"
		"Exit status:\n"
		"  0-123  the command's own status (128+N when killed by "
		"signal N)\n"
		"  2      usage error\n"
		"  124    the command timed out\n"
		"  125    ward itself failed, or the sandbox is unavailable\n"
		"  126    the command was found but cannot be executed\n"
		"  127    the command was not found\n"
		"\n"
		"See ward(1).\n");
}

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; cli_commands[i].name; i++)
		if (strcmp(cli_commands[i].name, name) == 0)
			return &cli_commands[i];
	return NULL;
}

/* Run @cmd with argv[0] = its name; messages say "ward NAME: ". */
static int dispatch(const struct cli_command *cmd, int argc, char **argv)
{
	static char name[64];

	snprintf(name, sizeof(name), "ward %s", cmd->name);
	cli_name = name;
	return cmd->fn(argc, argv);
}

/* `ward help [COMMAND]`: the command's own --help. */
static int cmd_help(int argc, char **argv)
{
	const struct cli_command *cmd;
	char *help_argv[] = {NULL, "--help", NULL};

	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		print_help(stdout);
		return CLI_EXIT_OK;
	}
	if (argc > 2)
		die_usage("ward help [COMMAND]", "too many arguments");
	cmd = find_command(argv[1]);
	if (!cmd || cmd->fn == cmd_help) {
		cli_name = "ward";
		die_usage(ward_usage, "unknown command '%s'", argv[1]);
	}
	help_argv[0] = (char *)cmd->name;
	return dispatch(cmd, 2, help_argv);
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;
	int status;

#ifdef __GLIBC__
	/*
	 * ward reads the password database only for a home directory when
	 * $HOME is unset, and nothing else of NSS (its proxy resolves names
	 * with libevent's evdns, which reads /etc/hosts and resolv.conf
	 * itself). Only the built-in "files" source, as with musl: for a uid
	 * /etc/passwd does not know, a static glibc ward would otherwise
	 * load nsswitch.conf's next module ("systemd", "sss") and a second
	 * libc with it, and crash (docs/BENCHMARKS.md, "Static glibc and
	 * NSS").
	 */
	__nss_configure_lookup("passwd", "files");
	__nss_configure_lookup("group", "files");
#endif
	if (argc < 2) {
		print_help(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_help(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("ward %s\n", WARD_VERSION);
		return CLI_EXIT_OK;
	}
	if (argv[1][0] == '-')
		die_usage(ward_usage, "unknown option '%s'", argv[1]);
	cmd = find_command(argv[1]);
	if (!cmd)
		die_usage(ward_usage, "unknown command '%s'", argv[1]);
	ward_fatal_handler_set(cli_fatal);
	/*
	 * Past RLIMIT_FSIZE a write fails with EFBIG and the kernel sends
	 * SIGXFSZ, whose default kills ward mid-operation (ward fs write
	 * left its temporary file and an unfinished call in the session).
	 * Ignored, the write's EFBIG is an error ward reports and cleans up
	 * after; the command gets the default back (exec.c resets it).
	 */
	signal(SIGXFSZ, SIG_IGN);
	status = dispatch(cmd, argc - 1, argv + 1);
	if (fflush(stdout) != 0 && status == CLI_EXIT_OK)
		die_errno(CLI_EXIT_WARD, "cannot write the output");
	return status;
}
