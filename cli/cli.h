/*
 * ward — helpers shared by the `ward` program's subcommands: the command
 * table entry, dying with a documented exit status, the common policy
 * options (--mode, --workspace, --runner, -c) and JSON output (jansson).
 *
 * Only this program layer prints and exits; libward never does. Every
 * message starts with the program name of the running subcommand
 * ("ward: " or "ward run: ") and names the culprit.
 */
#ifndef WARD_CLI_H
#define WARD_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdnoreturn.h>

#include <jansson.h>

#include "ward/common.h"
#include "ward/exec.h"
#include "ward/mode.h"
#include "ward/policy.h"
#include "ward/provider.h"
#include "ward/runner.h"

/* Exit statuses of the ward program; see man/ward.1, EXIT STATUS. */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_USAGE = 2,	    /* bad command line */
	CLI_EXIT_TIMEOUT = 124,	    /* the command timed out (like timeout) */
	CLI_EXIT_WARD = 125,	    /* ward failed / sandbox unavailable */
	CLI_EXIT_CANNOT_EXEC = 126, /* found but not executable */
	CLI_EXIT_NOT_FOUND = 127,   /* command not found */
};

/* Long-only option values, above any short option character. */
enum cli_long_opt {
	CLI_OPT_JSON = 256,
	CLI_OPT_MAX_OUTPUT,
	CLI_OPT_LL_LAUNCHER,
	CLI_OPT_ACCESS,	  /* --access RULE (cli/policy_opts.h) */
	CLI_OPT_CONFIG,	  /* --config FILE (cli/policy_opts.h) */
	CLI_OPT_ENV_KEEP, /* --env-keep NAME (cli/policy_opts.h) */
	CLI_OPT_EXPLAIN,  /* ward run --explain */
	CLI_OPT_DRAIN,	  /* ward mcp --drain-timeout */
};

/* One subcommand: `ward NAME …` calls fn(argc, argv) with argv[0] = NAME. */
struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_confine(int argc, char **argv);

/*
 * The name messages start with: "ward" or "ward SUBCOMMAND". Set by the
 * dispatcher before a subcommand runs.
 */
extern const char *cli_name;

/* Print "<cli_name>: <message>\n" on stderr and exit with @status. */
noreturn void die(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* As die(), with ": <strerror(errno)>" appended. */
noreturn void die_errno(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * A bad command line: the message, then @usage and a pointer to --help,
 * then exit 2.
 */
noreturn void die_usage(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Report a getopt_long() failure (@ret is '?' or ':') naming the culprit
 * option, then exit 2. The option string must start with "+:".
 */
noreturn void die_getopt(const char *usage, int ret, int argc, char **argv);

/* The common policy options of `ward run` and `ward confine`. */
struct cli_policy_opts {
	enum ward_mode mode;	  /* default read-only */
	const char *workspace;	  /* NULL: the current directory */
	enum ward_runner runner;  /* WARD_RUNNER_NONE: auto (the chain) */
	const char *shell_string; /* -c STRING, or NULL */
	bool landlock_via_launcher;
	/* Set by cli_config_option() (cli/policy_opts.h): */
	bool mode_given;	 /* --mode was given (else ward.yml decides) */
	const char *config_file; /* --config FILE, or NULL */
	const char **access;	 /* --access RULE…, malloc'd vector */
	size_t naccess;
	const char **env_keep; /* --env-keep NAME…, malloc'd vector */
	size_t nenv_keep;
};

/* clang-format off */
#define CLI_POLICY_OPTS_INIT                                                  \
	{ WARD_MODE_DEFAULT, NULL, WARD_RUNNER_NONE, NULL, false, false,      \
	  NULL, NULL, 0, NULL, 0 }

#define CLI_POLICY_SHORTOPTS "m:w:r:c:"
#define CLI_POLICY_LONGOPTS                                                   \
	{"mode", required_argument, NULL, 'm'},                               \
	{"workspace", required_argument, NULL, 'w'},                          \
	{"runner", required_argument, NULL, 'r'},                             \
	{"landlock-via-launcher", no_argument, NULL, CLI_OPT_LL_LAUNCHER}
/* clang-format on */

/*
 * cli_policy_option - handle one option returned by getopt_long() if it is
 * a policy option. Returns true when handled; a bad value dies with exit 2
 * naming the value and listing the valid ones.
 */
bool cli_policy_option(struct cli_policy_opts *o, int opt, const char *arg,
		       const char *usage);

/*
 * cli_parse_runner - parse --runner: "auto" gives WARD_RUNNER_NONE;
 * otherwise a runner of this platform's chain. Dies with exit 2 otherwise.
 */
enum ward_runner cli_parse_runner(const char *arg, const char *usage);

/*
 * cli_command_argv - the command to confine: {"bash", "-c", STRING, rest…}
 * with -c, else the remaining arguments. Dies with exit 2 when there is no
 * command. The vector is malloc'd (the strings are borrowed from @argv);
 * the caller frees only the vector.
 */
char **cli_command_argv(const struct cli_policy_opts *o, int argc, char **argv,
			const char *usage);

/*
 * cli_sandbox_unavailable - report that no runner could confine (@err is
 * WARD_EUNAVAILABLE) or that the runner broke (WARD_ERUNNER): the detail,
 * that ward refused to run the command unconfined, and a Hint line; as a
 * JSON error object on stdout when @json. Exits 125. @detail is the
 * ward_error_last() text captured right after the failing call.
 */
noreturn void cli_sandbox_unavailable(int err, const char *detail,
				      ward_provider *provider,
				      enum ward_runner forced, bool json);

/*
 * cli_runner_hint - the text of a "Hint:" line for a runner that cannot
 * confine (what to install or which kernel setting to change), into @buf.
 */
const char *cli_runner_hint(char *buf, size_t len, enum ward_runner r,
			    ward_provider *provider);

/*
 * cli_json_text - a JSON string holding @len bytes of @buf, which may hold
 * NULs and invalid UTF-8 (each invalid byte becomes U+FFFD). Dies with
 * exit 125 when out of memory.
 */
json_t *cli_json_text(const char *buf, size_t len);

/* cli_json_print - print @value compactly on stdout with a newline, then
 * release it. Dies with exit 125 when it cannot be written. */
void cli_json_print(json_t *value);

/* cli_json_error - print {"error": CODE, "message": MESSAGE}. */
void cli_json_error(const char *code, const char *message);

/*
 * cli_shell_quote - append @s to @out (a FILE) quoted for a POSIX shell:
 * as is when it holds only safe characters, else in single quotes.
 */
void cli_shell_quote(FILE *out, const char *s);

/*
 * cli_put_display - write @s to @f for a person to read: control
 * characters, invalid UTF-8, C1 controls and bidirectional overrides are
 * escaped, so text from a model cannot repaint the question around it.
 */
void cli_put_display(FILE *f, const char *s);

#endif
