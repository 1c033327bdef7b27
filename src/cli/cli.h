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
#include "ward/json.h"
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
	CLI_OPT_ACCESS,	      /* --access RULE (src/cli/policy_opts.h) */
	CLI_OPT_CONFIG,	      /* --config FILE (src/cli/policy_opts.h) */
	CLI_OPT_ENV_KEEP,     /* --env-keep NAME (src/cli/policy_opts.h) */
	CLI_OPT_ALLOW_UNIX,   /* --allow-unix PATH (src/cli/policy_opts.h) */
	CLI_OPT_NETWORK,      /* --network off|on (src/cli/policy_opts.h) */
	CLI_OPT_ALLOW_DOMAIN, /* --allow-domain PATTERN (src/cli/policy_opts.h) */
	CLI_OPT_EXPLAIN,      /* ward run --explain */
	CLI_OPT_ESCALATE_NETWORK, /* ward run --escalate-network HOST|on */
	CLI_OPT_DRAIN,		  /* ward mcp --drain-timeout */
	CLI_OPT_KEEP_NEW_REPOS,	  /* --keep-new-repos (policy_opts.h) */
	CLI_OPT_ALLOW_HOME,	  /* --allow-home-workspace (policy_opts.h) */
	CLI_OPT_AGENT_MODE,	  /* ward acp --agent-mode */
	CLI_OPT_AGENT_DOMAIN,	  /* ward acp --agent-allow-domain */
	CLI_OPT_AGENT_ENV_KEEP,	  /* ward acp --agent-env-keep */
	CLI_OPT_AGENT_GRACE,	  /* ward acp --agent-grace */
	CLI_OPT_AGENT_ACCESS,	  /* ward acp --agent-access */
};

/*
 * What an option's value, or an operand, is. getopt needs only whether
 * there is a value; the completion scripts (`ward completion`) offer the
 * candidates of its kind.
 */
enum cli_value {
	CLI_VALUE_NONE = 0, /* no value: a flag (or no operand) */
	CLI_VALUE_TEXT,	    /* free text or a number: nothing to offer */
	CLI_VALUE_FILE,	    /* a path */
	CLI_VALUE_DIR,	    /* a directory */
	CLI_VALUE_MODE,	    /* read-only, workspace-write, ... */
	CLI_VALUE_RUNNER,   /* auto, bwrap, landlock */
	CLI_VALUE_SESSION,  /* a session id (from the session store) */
	CLI_VALUE_APPROVAL, /* ask, never */
	CLI_VALUE_PRESET,   /* a permission preset (ward session presets) */
	CLI_VALUE_COMMAND,  /* a command line to run, then its arguments */
	CLI_VALUE_TOPIC,    /* a ward command (ward help) */
	CLI_VALUE_SHELL,    /* bash, zsh (ward completion) */
};

/*
 * One option of a command, declared once: getopt_long()'s option string
 * and table (cli_getopt_init) and the completion scripts are made from
 * these rows. @val is what getopt_long() returns: the short option
 * character when there is one (< 256), else a long-only value (>= 256).
 * A row with a NULL @name is a short option only (-c, -R).
 */
struct cli_option {
	const char *name;     /* long name without "--", or NULL */
	int val;	      /* getopt's value (see above) */
	const char *arg;      /* the value's name in help ("MODE"), or NULL */
	enum cli_value value; /* what the value is (NONE for a flag) */
	const char *only;     /* the subcommands it applies to, separated by
				 spaces ("write mkdir"); NULL: all */
};

/*
 * One command (or subcommand) of the command table: `ward NAME …` calls
 * fn(argc, argv) with argv[0] = NAME. Subcommands are dispatched by their
 * command and have no fn here. @options ends with a row whose name and val
 * are 0; @operands says what the first operands are (the last kind given
 * repeats for CLI_VALUE_COMMAND and CLI_VALUE_FILE).
 */
struct cli_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const struct cli_option *options; /* NULL: only --help */
	const struct cli_command *subs;	  /* ends with a NULL name */
	enum cli_value operands[3];	  /* what the operands are */
};

/*
 * cli_subcommand - the index of subcommand @arg of `ward @cmd` in @subs
 * (ending with a NULL name); messages say "ward CMD SUB: " from then on.
 * Dies with a usage error listing the valid ones when @arg is none.
 */
size_t cli_subcommand(const struct cli_command *subs, const char *cmd,
		      const char *usage, const char *arg);

/* A suffix of a number and what it multiplies by; a table ends with 0. */
struct cli_unit {
	char suffix;
	unsigned long long mult;
};
/* k, K, m, M, g, G: binary multiples of a byte. */
extern const struct cli_unit cli_units_bytes[];

/*
 * cli_parse_scaled - a whole number at the start of @arg (a digit first),
 * optionally followed by one suffix of @units (NULL: none allowed), into
 * *@out. False when @arg is anything else or the value overflows.
 */
bool cli_parse_scaled(unsigned long long *out, const char *arg,
		      const struct cli_unit *units);

/* The command table (src/cli/ward.c), ending with a NULL name. */
extern const struct cli_command cli_commands[];

/* The option rows every command shares; a table ends with CLI_OPTION_END. */
/* clang-format off */
#define CLI_OPTION_HELP      {"help", 'h', NULL, CLI_VALUE_NONE, NULL}
#define CLI_OPTION_JSON      {"json", CLI_OPT_JSON, NULL, CLI_VALUE_NONE, NULL}
#define CLI_OPTION_QUIET     {"quiet", 'q', NULL, CLI_VALUE_NONE, NULL}
#define CLI_OPTION_MODE      {"mode", 'm', "MODE", CLI_VALUE_MODE, NULL}
#define CLI_OPTION_WORKSPACE {"workspace", 'w', "DIR", CLI_VALUE_DIR, NULL}
#define CLI_OPTION_RUNNER    {"runner", 'r', "RUNNER", CLI_VALUE_RUNNER, NULL}
#define CLI_OPTION_SHELL     {NULL, 'c', "STRING", CLI_VALUE_TEXT, NULL}
#define CLI_OPTION_END       {NULL, 0, NULL, CLI_VALUE_NONE, NULL}
/* clang-format on */

/* The most rows one option table may have. */
#define CLI_MAX_OPTIONS 40

/* getopt_long() over a table of cli_option rows (src/cli/options.c). */
struct cli_getopt {
	const struct cli_option *opts;
	const char *sub;   /* the subcommand being parsed, or NULL */
	const char *usage; /* for the usage errors */
	char shortopts[2 * CLI_MAX_OPTIONS + 3];
	struct option longopts[CLI_MAX_OPTIONS + 1];
};

/*
 * cli_getopt_init - make getopt_long()'s option string and table from
 * @opts and reset getopt (optind = 1, opterr = 0). @in_order: options end
 * at the first operand ("+"), else GNU permutation. @sub names the
 * subcommand, so that an option whose `only` leaves it out is a usage
 * error. When @opts has --json and @argv carries it (as getopt will see
 * it), cli_json_mode is set before any option is parsed, so that even a
 * usage error is reported as a JSON object.
 */
void cli_getopt_init(struct cli_getopt *g, const struct cli_option *opts,
		     bool in_order, const char *sub, const char *usage,
		     int argc, char **argv);

/*
 * cli_getopt_next - the next option, as getopt_long() returns it (-1 at
 * the end; the value in optarg). An unknown option, a missing value and an
 * option that does not apply to the subcommand die with exit 2.
 */
int cli_getopt_next(struct cli_getopt *g, int argc, char **argv);

/*
 * cli_option_applies - whether @o applies to subcommand @sub (NULL: the
 * command itself, to which every option applies).
 */
bool cli_option_applies(const struct cli_option *o, const char *sub);

/*
 * With --json, every failure is one JSON object on stdout,
 * {"error": CODE, "message": TEXT, ...}: die() and die_errno() print it
 * (CODE from the exit status) besides the message on stderr, die_usage()
 * prints {"error": "USAGE", ...}. Set by cli_getopt_init() and by the
 * commands once --json is parsed.
 */
extern bool cli_json_mode;

/*
 * CLI_ERR - every code of a JSON error object is written as CLI_ERR(code)
 * with the code a string literal:
 * tests/e2e/docs.bats finds them all this way and checks that man/ward.1
 * documents each.
 */
#define CLI_ERR(code) (code)

int cmd_run(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_confine(int argc, char **argv);
/* `ward completion bash|zsh` (src/cli/cmd_completion.c), from the command
 * table @cmds and ward's own options. */
int cmd_completion(int argc, char **argv, const struct cli_command *cmds,
		   const struct cli_option *ward_options);
/* `ward session SUBCOMMAND …`; argv[0] is "session". */
int cmd_session(int argc, char **argv);
/* `ward quarantine SUBCOMMAND …`; argv[0] is "quarantine". */
int cmd_quarantine(int argc, char **argv);
/* `ward mcp [OPTIONS]`; argv[0] is "mcp". */
int cmd_mcp(int argc, char **argv);
/* `ward acp [OPTIONS] -- AGENT [ARGS...]`; argv[0] is "acp". */
int cmd_acp(int argc, char **argv);

/* The option tables of ward itself and of the commands (their .c files). */
extern const struct cli_option cli_ward_options[];
extern const struct cli_option cli_run_options[];
extern const struct cli_option cli_probe_options[];
extern const struct cli_option cli_confine_options[];
extern const struct cli_option cli_fs_options[];
extern const struct cli_command cli_fs_commands[];
extern const struct cli_option cli_session_options[];
extern const struct cli_command cli_session_commands[];
extern const struct cli_option cli_quarantine_options[];
extern const struct cli_command cli_quarantine_commands[];
extern const struct cli_option cli_config_cmd_options[];
extern const struct cli_command cli_config_commands[];
extern const struct cli_option cli_mcp_options[];
extern const struct cli_option cli_acp_options[];
extern const struct cli_option cli_completion_options[];

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
/*
 * libward's fatal handler (ward_fatal_handler_set): a library error ward
 * cannot return from ends ward like any of its failures, exit 125 (with
 * --json, a WARD_FAILED object).
 */
noreturn void cli_fatal(const char *message);

/* The common policy options of `ward run` and `ward confine`. */
struct cli_policy_opts {
	enum ward_mode mode;	  /* default read-only */
	const char *workspace;	  /* NULL: the current directory */
	enum ward_runner runner;  /* WARD_RUNNER_NONE: auto (the chain) */
	const char *shell_string; /* -c STRING, or NULL */
	/* Set by cli_config_option() (src/cli/policy_opts.h): */
	bool mode_given;	 /* --mode was given (else ward.yml decides) */
	const char *config_file; /* --config FILE, or NULL */
	const char **access;	 /* --access RULE…, malloc'd vector */
	size_t naccess;
	const char **env_keep; /* --env-keep NAME…, malloc'd vector */
	size_t nenv_keep;
	const char **allow_unix; /* --allow-unix PATH…, malloc'd vector */
	size_t nallow_unix;
	const char *network;	    /* --network off|on, or NULL */
	const char **allow_domains; /* --allow-domain…, malloc'd vector */
	size_t nallow_domains;
	bool keep_new_repos; /* --keep-new-repos */
	bool allow_home;     /* --allow-home-workspace */
};

/* clang-format off */
#define CLI_POLICY_OPTS_INIT                                                  \
	{ WARD_MODE_DEFAULT, NULL, WARD_RUNNER_NONE, NULL, false,             \
	  NULL, NULL, 0, NULL, 0, NULL, 0, NULL, NULL, 0, false, false }

#define CLI_POLICY_OPTIONS                                                    \
	CLI_OPTION_MODE, CLI_OPTION_WORKSPACE, CLI_OPTION_RUNNER
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


/* cli_json_print - print @value compactly on stdout with a newline, then
 * release it. Dies with exit 125 when it cannot be written. */
void cli_json_print(json_t *value);

/* cli_json_print_bytes - cli_json_print, with each @bytes[i].at in @value
 * written as the JSON string of its bytes (ward_json_dump_bytes). */
void cli_json_print_bytes(json_t *value, const struct ward_json_bytes *bytes,
			  size_t nbytes);

/* cli_json_error - print {"error": CODE, "message": MESSAGE}. */
void cli_json_error(const char *code, const char *message);

/*
 * cli_print_warnings - say @warnings (NULL-terminated) before a call, one
 * "ward: warning: " line each on stderr, and remember them as shown for
 * @scope ("command" or "operation") in @workspace (ward/notice.h). With
 * @quiet, warnings identical to the last ones shown there are left out:
 * they are said once per change of the configuration.
 */
void cli_print_warnings(char *const *warnings, const char *scope,
			const char *workspace, bool quiet);

/*
 * cli_shell_quote - append @s to @out (a FILE) quoted for a POSIX shell:
 * as is when it holds only safe characters, else in single quotes.
 */
void cli_shell_quote(FILE *out, const char *s);

/*
 * cli_find_command - find @name the way execvp() will inside the sandbox
 * (the same file system, read-only), so a missing command gives 127 and a
 * non-executable one 126 like a shell, whichever runner is used. Relative
 * paths, and empty PATH entries, are relative to the command's working
 * directory @ws (the workspace). Returns 0 or the exit status, with a
 * message in @why.
 */
int cli_find_command(const char *name, const char *ws, char *why,
		     size_t why_len);

#endif
