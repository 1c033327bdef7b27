/*
 * ward run — run a command under the file sandbox and exit with its status.
 *
 * Output streams through live (the executor still reads stderr through a
 * pipe to classify it); with --json it is captured, bounded, and printed as
 * one object. The caller's stdin is passed on so pipes work
 * (`echo x | ward run -- cat`); --no-stdin gives /dev/null instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ward/call.h"
#include "ward/render.h"
#include "ward/tty.h"

#include "cli.h"
#include "session_opts.h"
#include "policy_opts.h"
#include "util/util.h"

#define DEFAULT_MAX_OUTPUT (1024 * 1024)

static const char run_usage[] =
    "ward run [OPTIONS] -- COMMAND [ARG...]\n"
    "       ward run [OPTIONS] -c 'SHELL STRING' [NAME [ARG...]]";

static void print_help(void)
{
	printf(
	    "Usage: %s\n"
	    "\n"
	    "Run COMMAND under a kernel-enforced file sandbox and exit "
	    "with its status.\n"
	    "Its output passes through live; after a denied file access "
	    "the line\n"
	    "  [sandbox: file access denied under MODE mode]\n"
	    "follows it on stderr. ward never runs the command unconfined: "
	    "when no\n"
	    "runner can confine it, ward exits 125.\n"
	    "\n"
	    "Options:\n"
	    "  -m, --mode MODE        read-only, workspace-write or "
	    "danger-full-access\n"
	    "                         (not confined); default: ward.yml's "
	    "mode, else\n"
	    "                         read-only\n"
	    "  -w, --workspace DIR    workspace root, writable under "
	    "workspace-write and\n"
	    "                         the command's working directory "
	    "(default: .)\n"
	    "  -r, --runner RUNNER    auto (default: the chain bwrap, "
	    "landlock), bwrap\n"
	    "                         or landlock (that runner only, no "
	    "probe)\n" CLI_CONFIG_HELP CLI_NETWORK_HELP CLI_ENV_KEEP_HELP
		CLI_ALLOW_UNIX_HELP
	    "  -t, --timeout SECONDS  kill the command's process group "
	    "after SECONDS\n"
	    "                         (suffix s, m, h or d; fractions "
	    "allowed)\n"
	    "  -c STRING              run 'bash -c STRING'; further "
	    "arguments become\n"
	    "                         $0, $1, ...\n"
	    "  -n, --no-stdin         give the command /dev/null as stdin "
	    "(default:\n"
	    "                         ward's own stdin)\n"
	    "      --json             capture the output and print one JSON "
	    "object:\n"
	    "                         exit_code, signal, timed_out, stdout, "
	    "stderr,\n"
	    "                         stdout_truncated_bytes, "
	    "stderr_truncated_bytes,\n"
	    "                         sandbox {mode, runner, enforcement, "
	    "denied, partial},\n"
	    "                         denials, env_dropped\n"
	    "      --explain          after the command, say on stderr which "
	    "file accesses\n"
	    "                         the sandbox refused: the path, the "
	    "rule or mode,\n"
	    "                         where it was set, exact or derived\n"
	    "      --max-output BYTES with --json: keep at most BYTES of "
	    "each stream\n"
	    "                         (suffix K, M or G; default 1M); the "
	    "middle is dropped\n"
	    "      --session ID       take the mode and workspace from "
	    "session ID (or a\n"
	    "                         unique prefix of it) and record the "
	    "call in its log\n"
	    "                         (see ward-session(1))\n"
	    "      --escalate MODE --justification TEXT\n"
	    "                         ask the person at the terminal to "
	    "let this one\n"
	    "                         command run under the wider MODE\n"
	    "      --escalate-network HOST|on --justification TEXT\n"
	    "                         ask the person at the terminal to "
	    "let this one\n"
	    "                         command reach HOST through the proxy "
	    "(or the\n"
	    "                         whole network)\n"
	    "  -q, --quiet            say the warnings (rules the runner "
	    "cannot express,\n"
	    "                         project values ignored) only when\n"
	    "                         they changed since ward "
	    "last said them\n"
	    "                         in this workspace (ward config check "
	    "shows them all)\n"
	    "  -h, --help             show this help and exit\n"
	    "\n"
	    "Exit status:\n"
	    "  the command's own status (128+N when killed by signal N)\n"
	    "  2    usage error        124  the command timed out\n"
	    "  122  --escalate was not granted: the command did not run\n"
	    "  125  ward failed or the sandbox is unavailable\n"
	    "  126  command not executable   127  command not found\n"
	    "\n"
	    "Examples:\n"
	    "  ward run -- ls -la\n"
	    "  ward run --mode workspace-write -- make\n"
	    "  ward run -w ~/src/app --mode workspace-write -c 'npm test "
	    "> log.txt'\n"
	    "  ward run --timeout 30 --json -- pytest -q\n"
	    "  echo hello | ward run -- cat\n",
	    run_usage);
}

/*
 * Parse a timeout like timeout(1): a positive decimal number of seconds,
 * optionally followed by s, m, h or d. Returns milliseconds (>= 1).
 */
static unsigned long parse_timeout(const char *arg)
{
	double secs, ms;
	unsigned long n;
	char *end = NULL;

	errno = 0;
	secs = strtod(arg, &end);
	if (end == arg || errno == ERANGE || !isfinite(secs) || secs <= 0)
		goto bad;
	switch (*end) {
	case '\0':
	case 's':
		break;
	case 'm':
		secs *= 60;
		break;
	case 'h':
		secs *= 3600;
		break;
	case 'd':
		secs *= 86400;
		break;
	default:
		goto bad;
	}
	if (*end && end[1])
		goto bad;
	ms = secs * 1000.0;
	if (ms >= (double)ULONG_MAX)
		return ULONG_MAX;
	/* Round up: a timeout is never shorter than asked (and never 0). */
	n = (unsigned long)ms;
	return (double)n < ms ? n + 1 : n;
bad:
	die_usage(run_usage,
		  "invalid timeout '%s' (expected a positive number of "
		  "seconds, e.g. 30, 2.5 or 5m)",
		  arg);
}

/* A positive byte count with an optional K, M or G suffix (binary). */
static size_t parse_bytes(const char *arg)
{
	unsigned long long n;

	if (!cli_parse_scaled(&n, arg, cli_units_bytes) || n == 0 ||
	    n > SIZE_MAX)
		die_usage(run_usage,
			  "invalid --max-output '%s' (expected a positive "
			  "number of bytes, e.g. 65536 or 1M)",
			  arg);
	return (size_t)n;
}

/* Exit @status after telling why the command cannot run. */
static noreturn void fail_command(int status, const char *why, bool json)
{
	if (json) {
		cli_json_error(status == CLI_EXIT_NOT_FOUND
				   ? CLI_ERR("COMMAND_NOT_FOUND")
			       : status == CLI_EXIT_CANNOT_EXEC
				   ? CLI_ERR("COMMAND_NOT_EXECUTABLE")
				   : CLI_ERR("WARD_FAILED"),
			       why);
		exit(status);
	}
	die(status, "%s", why);
}

/* The command's status as a shell reports it. */
static int result_status(const ward_result *r)
{
	if (ward_result_sandbox_ended(r))
		return CLI_EXIT_WARD;
	if (ward_result_timed_out(r))
		return CLI_EXIT_TIMEOUT;
	if (ward_result_signal(r) > 0)
		return 128 + ward_result_signal(r);
	if (ward_result_exit_code(r) < 0)
		return CLI_EXIT_WARD;
	return ward_result_exit_code(r);
}

static void print_json(const ward_result *r, const ward_call *call)
{
	const ward_plan *plan = ward_call_plan(call);
	const char *out, *err;
	size_t out_len = 0, err_len = 0;
	json_t *obj = json_object();
	json_t *sb = json_object();
	/* The output is written from the result's buffers, not copied into
	 * JSON strings (a megabyte each): these stand in for it (owned by
	 * obj, which lives until it is printed). */
	json_t *out_at = json_object(), *err_at = json_object();
	int code = ward_result_exit_code(r);
	int sig = ward_result_signal(r);
	struct ward_json_bytes bytes[2];

	out = ward_result_stdout(r, &out_len);
	err = ward_result_stderr(r, &err_len);
	bytes[0] = (struct ward_json_bytes){out_at, out, out_len};
	bytes[1] = (struct ward_json_bytes){err_at, err, err_len};
	if (!obj || !sb || !out_at || !err_at ||
	    json_object_set_new(obj, "exit_code",
				sig > 0 || code < 0 ? json_null()
						    : json_integer(code)) ||
	    json_object_set_new(obj, "signal",
				sig > 0 ? json_integer(sig) : json_null()) ||
	    json_object_set_new(obj, "timed_out",
				json_boolean(ward_result_timed_out(r))) ||
	    json_object_set_new(obj, "guard_failed",
				json_boolean(ward_result_guard_failed(r))) ||
	    json_object_set_new(obj, "stdout", out_at) ||
	    json_object_set_new(obj, "stderr", err_at) ||
	    json_object_set_new(
		obj, "stdout_truncated_bytes",
		json_integer((json_int_t)ward_result_stdout_dropped(r))) ||
	    json_object_set_new(
		obj, "stderr_truncated_bytes",
		json_integer((json_int_t)ward_result_stderr_dropped(r))) ||
	    json_object_set_new(
		sb, "mode", json_string(ward_mode_name(ward_result_mode(r)))) ||
	    json_object_set_new(
		sb, "runner",
		json_string(ward_runner_name(ward_result_runner(r)))) ||
	    json_object_set_new(sb, "enforcement",
				json_string(ward_enforcement_name(
				    ward_result_enforcement(r)))) ||
	    json_object_set_new(sb, "denied",
				json_boolean(ward_call_denied(call))) ||
	    json_object_set_new(sb, "ended",
				ward_json_str(ward_result_sandbox_ended(r))) ||
	    json_object_set_new(
		sb, "network",
		json_string(ward_network_name(ward_call_network(call)))) ||
	    json_object_set_new(
		sb, "partial",
		ward_json_strv(plan ? ward_plan_partial(plan) : NULL)) ||
	    json_object_set_new(obj, "sandbox", sb) ||
	    json_object_set_new(obj, "denials", ward_json_call_denials(call)) ||
	    json_object_set_new(obj, "network", ward_json_call_network(call)) ||
	    json_object_set_new(obj, "env_dropped",
				ward_json_strv(ward_call_env_dropped(call))))
		die(CLI_EXIT_WARD, "out of memory");
	cli_json_print_bytes(obj, bytes, 2);
}

/*
 * Stream mode: what follows the command's own output on stderr: after a
 * denial the call's denial text (the marker, what was refused by which rule
 * or mode, and the hint when escalation is offered); with --explain the
 * report for a person.
 */
static void print_epilogue(const ward_result *r, const ward_call *call,
			   const char *timeout_arg, bool explain)
{
	char *text = NULL;
	size_t len = 0;
	const char *tail = ward_result_stderr(r, &len);
	size_t alen = timeout_arg ? strlen(timeout_arg) : 0;
	bool bare = alen && timeout_arg[alen - 1] >= '0' &&
		    timeout_arg[alen - 1] <= '9';

	/* Start on a line of our own even if the command did not end one. */
	if (tail && len > 0 && tail[len - 1] != '\n')
		fputc('\n', stderr);
	if (ward_result_timed_out(r))
		fprintf(stderr,
			"ward run: timed out after %s%s; the command's "
			"process group was killed\n",
			timeout_arg ? timeout_arg : "?", bare ? "s" : "");
	if (ward_result_sandbox_ended(r))
		fprintf(stderr, "ward run: %s\n", ward_result_sandbox_ended(r));
	if (ward_call_denied(call)) {
		if (ward_call_render_denial(&text, call) != 0)
			die(CLI_EXIT_WARD, "%s", ward_error_last());
		fprintf(stderr, "%s\n", text);
		free(text);
		text = NULL;
	}
	/* What the proxy refused: one marker per host (render.c). */
	if (ward_call_render_network(&text, call) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (*text)
		fprintf(stderr, "%s\n", text);
	free(text);
	text = NULL;
	if (explain) {
		if (ward_call_render_explain(&text, call) != 0)
			die(CLI_EXIT_WARD, "%s", ward_error_last());
		fprintf(stderr, "%s\n", text);
		free(text);
	}
}

/*
 * The terminal settings to put back if ward is stopped by a signal while
 * the command runs (ward_call_exec puts them back when it returns).
 */
static ward_tty_state *run_tty;

static void on_fatal_signal(int sig)
{
	ward_tty_restore(run_tty);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Ctrl-C, a hang-up or a termination request ends ward (and so, through
 * PR_SET_PDEATHSIG, the command) as before, but first puts back what the
 * command did to the terminal (`stty -echo`, the window size).
 */
static void keep_terminal(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;

	if (ward_tty_save(&run_tty) != 0 || !run_tty)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* A signal ignored by whoever started ward stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

const struct cli_option cli_run_options[] = {
    CLI_POLICY_OPTIONS,
    CLI_CONFIG_OPTIONS,
    CLI_NETWORK_OPTIONS,
    CLI_OPTION_ENV_KEEP,
    CLI_OPTION_ALLOW_UNIX,
    CLI_SESSION_OPTIONS,
    CLI_OPTION_SHELL,
    {"timeout", 't', "SECONDS", CLI_VALUE_TEXT, NULL},
    {"no-stdin", 'n', NULL, CLI_VALUE_NONE, NULL},
    {"escalate-network", CLI_OPT_ESCALATE_NETWORK, "HOST|on", CLI_VALUE_TEXT,
     NULL},
    CLI_OPTION_JSON,
    {"max-output", CLI_OPT_MAX_OUTPUT, "BYTES", CLI_VALUE_TEXT, NULL},
    {"explain", CLI_OPT_EXPLAIN, NULL, CLI_VALUE_NONE, NULL},
    CLI_OPTION_QUIET,
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

int cmd_run(int argc, char **argv)
{
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct ward_exec_options xo = WARD_EXEC_OPTIONS_INIT;
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	const char *timeout_arg = NULL;
	size_t max_output = 0;
	bool json = false, no_stdin = false, explain = false;
	struct cli_setup setup;
	struct cli_session cs = {.subject = WARD_SUBJECT_COMMAND};
	struct cli_getopt g;
	bool quiet = false;
	ward_call *call = NULL;
	ward_result *result = NULL;
	char detail[1024], why[PATH_MAX + 64];
	char **cmd;
	const char *net_esc = NULL;
	bool mode_esc = false;
	int opt, err, status;

	cli_getopt_init(&g, cli_run_options, true, NULL, run_usage, argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (cli_session_option(&cs, opt, optarg, run_usage) ||
		    cli_config_option(&po, opt, optarg, run_usage) ||
		    cli_policy_option(&po, opt, optarg, run_usage))
			continue;
		switch (opt) {
		case 't':
			xo.timeout_ms = parse_timeout(optarg);
			timeout_arg = optarg;
			break;
		case 'n':
			no_stdin = true;
			break;
		case CLI_OPT_ESCALATE_NETWORK:
			if (strcmp(optarg, "on") != 0 &&
			    (ward_network_pattern_check(optarg) != 0 ||
			     optarg[0] == '*'))
				die_usage(run_usage,
					  "option '--escalate-network' needs a "
					  "host name or address, or on, not "
					  "'%s'",
					  optarg);
			net_esc = optarg;
			break;
		case CLI_OPT_JSON:
			json = true;
			break;
		case CLI_OPT_MAX_OUTPUT:
			max_output = parse_bytes(optarg);
			break;
		case CLI_OPT_EXPLAIN:
			explain = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			print_help();
			return CLI_EXIT_OK;
		default:
			die_getopt(run_usage, opt, argc, argv);
		}
	}
	if (max_output && !json)
		die_usage(run_usage, "option '--max-output' needs '--json'");
	if (explain && json)
		die_usage(run_usage,
			  "option '--explain' is for people; with '--json' the "
			  "object's \"denials\" say the same");
	cmd = cli_command_argv(&po, argc - optind, argv + optind, run_usage);
	mode_esc = cs.escalate;
	if (net_esc && mode_esc)
		die_usage(run_usage,
			  "options '--escalate' and '--escalate-network' ask "
			  "for different things: give one");
	/* --justification goes with either; the session checks are the
	 * same. */
	cs.escalate = mode_esc || net_esc;
	cli_session_begin(&cs, &po, run_usage, json);
	cli_setup_build(&setup, &po, run_usage,
			CLI_SETUP_PROVIDER | (json ? CLI_SETUP_JSON : 0) |
			    (quiet ? CLI_SETUP_QUIET : 0));

	/* One call: resolved (session, ward.yml, flags) and planned once. */
	co.config = setup.config;
	co.provider = setup.provider;
	co.session = cs.session;
	co.subject = WARD_SUBJECT_COMMAND;
	co.surface = WARD_SURFACE_CLI;
	co.tool = "run";
	co.argv = cmd;
	co.escalate = mode_esc;
	co.escalate_to = cs.requested;
	co.escalate_network = net_esc != NULL;
	co.network_host = net_esc && strcmp(net_esc, "on") ? net_esc : NULL;
	co.justification = cs.justification;
	/* The person at the terminal approves; outside a session only an
	 * explicit --escalate asks, and no denial offers the hint. */
	if (cs.session || cs.escalate)
		co.approve = cli_tty_approve;
	err = ward_call_new(&call, &co);
	if (err == -ENOMEM)
		die(CLI_EXIT_WARD, "out of memory");
	if (err) {
		snprintf(detail, sizeof(detail), "%s", ward_error_last());
		if (json) {
			cli_json_error(CLI_ERR("WARD_FAILED"), detail);
			exit(CLI_EXIT_WARD);
		}
		die(CLI_EXIT_WARD, "%s", detail);
	}

	err = cli_find_command(cmd[0], ward_call_cwd(call), why, sizeof(why));
	if (err)
		fail_command(err, why, json);

	/* call/start, then --escalate's approval (exits 122 when not
	 * granted); a grant replaces the policy for this call only. */
	err = ward_call_begin(call);
	if (err == WARD_EREFUSED)
		cli_call_refused(call, json);
	if (err) {
		snprintf(detail, sizeof(detail), "%s", ward_error_last());
		if (json) {
			cli_json_error(CLI_ERR("WARD_FAILED"), detail);
			exit(CLI_EXIT_WARD);
		}
		die(CLI_EXIT_WARD, "%s", detail);
	}

	/* Pass our stdin on, unless it is closed or not wanted. */
	xo.stdin_fd = !no_stdin && fcntl(0, F_GETFD) != -1 ? 0 : -1;
	xo.stdout_fd = 1;
	xo.stderr_fd = 2;
	xo.capture_limit =
	    json ? (max_output ? max_output : DEFAULT_MAX_OUTPUT) : 0;
	/*
	 * One call per process, so the subreaper is exact here: whatever the
	 * command leaves behind becomes our child and is killed when the call
	 * ends. It costs one waitid() when nothing is left, where a per-call
	 * cgroup costs a cgroup mkdir/rmdir on every run (the MCP server, which
	 * runs calls concurrently, needs the cgroup).
	 */
	xo.contain = WARD_CONTAIN_SUBREAPER;

	/* Before the command runs, every access rule or protected path the
	 * chosen runner cannot express exactly (invariant: never a silent
	 * gap; with --quiet, once per change). The call's plan says it. */
	cli_print_warnings(ward_call_warnings(call), "command",
			   ward_call_cwd(call), quiet);
	if (!json)
		fflush(stdout);
	keep_terminal();
	err = ward_call_exec(call, &result, &xo);
	if (err) {
		snprintf(detail, sizeof(detail), "%s", ward_error_last());
		if (err == WARD_EUNAVAILABLE || err == WARD_ERUNNER)
			cli_sandbox_unavailable(err, detail, setup.provider,
						po.runner, json);
		if (!*detail)
			snprintf(detail, sizeof(detail), "%s",
				 ward_strerror(err));
		if (err == WARD_EINVAL) {
			/* A rule the runner would have to drop. */
			if (json) {
				cli_json_error(CLI_ERR("SANDBOX_REFUSED"),
					       detail);
				exit(CLI_EXIT_WARD);
			}
			die(CLI_EXIT_WARD, "%s", detail);
		}
		snprintf(why, sizeof(why), "%s: %s", cmd[0], detail);
		switch (err) {
		case -ENOENT:
			fail_command(CLI_EXIT_NOT_FOUND, why, json);
		case -EACCES:
		case -ENOEXEC:
		case -EISDIR:
		case -EPERM:
			fail_command(CLI_EXIT_CANNOT_EXEC, why, json);
		default:
			fail_command(CLI_EXIT_WARD, why, json);
		}
	}

	status = result_status(result);
	/* The guard could not take out of the workspace everything the
	 * command left in a protected place (its notes say what and where):
	 * the call failed, whatever the command's status. */
	if (ward_result_guard_failed(result))
		status = CLI_EXIT_WARD;
	if (json)
		print_json(result, call);
	else
		print_epilogue(result, call, timeout_arg, explain);

	ward_result_free(result);
	ward_call_free(call);
	cli_session_end(&cs);
	cli_setup_free(&setup, &po);
	free(cmd);
	return status;
}
