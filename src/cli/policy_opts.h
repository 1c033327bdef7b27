/*
 * ward — from the command line and ward.yml to a policy and a provider:
 * the one place every subcommand builds them, so the layers (built-in
 * defaults < user file < project file < --config < flags) are applied the
 * same way by `ward run`, `ward confine`, `ward fs` and `ward config check`.
 *
 * Use: add CLI_CONFIG_OPTIONS to the command's options; in the getopt
 * loop call cli_config_option() BEFORE cli_policy_option(); then
 * cli_setup_build(), and cli_setup_free() at the end.
 */
#ifndef WARD_CLI_POLICY_OPTS_H
#define WARD_CLI_POLICY_OPTS_H

#include <stdbool.h>

#include "ward/config.h"

#include "cli.h"

/* clang-format off */
#define CLI_CONFIG_OPTIONS                                                    \
	{"access", CLI_OPT_ACCESS, "RULE", CLI_VALUE_TEXT, NULL},             \
	{"config", CLI_OPT_CONFIG, "FILE", CLI_VALUE_FILE, NULL},             \
	{"keep-new-repos", CLI_OPT_KEEP_NEW_REPOS, NULL, CLI_VALUE_NONE,      \
	 NULL},                                                               \
	{"allow-home-workspace", CLI_OPT_ALLOW_HOME, NULL, CLI_VALUE_NONE,    \
	 NULL}
/* --env-keep, for the commands that start a command (run, mcp, config). */
#define CLI_OPTION_ENV_KEEP                                                   \
	{"env-keep", CLI_OPT_ENV_KEEP, "NAME", CLI_VALUE_TEXT, NULL}
/* --allow-unix, for the commands that confine a command. */
#define CLI_OPTION_ALLOW_UNIX                                                 \
	{"allow-unix", CLI_OPT_ALLOW_UNIX, "PATH", CLI_VALUE_FILE, NULL}
/* --network and --allow-domain, for the commands that plan a command
 * (run, confine, probe, config, mcp). */
#define CLI_NETWORK_OPTIONS                                                   \
	{"network", CLI_OPT_NETWORK, "off|on", CLI_VALUE_TEXT, NULL},         \
	{"allow-domain", CLI_OPT_ALLOW_DOMAIN, "PATTERN", CLI_VALUE_TEXT, NULL}
/* clang-format on */

#define CLI_NETWORK_HELP                                                       \
	"      --network off|on   the command's network (default: off, on "    \
	"in\n"                                                                 \
	"                         danger-full-access; see ward-config(5))\n"   \
	"      --allow-domain PATTERN\n"                                       \
	"                         allow this domain through ward's proxy "     \
	"(repeatable;\n"                                                       \
	"                         'example.com', '*.npmjs.org'): the "         \
	"network becomes\n"                                                    \
	"                         an allowlist\n"

/* Help text lines for the two options, aligned like the others. */
#define CLI_CONFIG_HELP                                                        \
	"      --access RULE      an access rule: 'rw PATH', 'r- PATH|GLOB' "  \
	"or\n"                                                                 \
	"                         '-- PATH|GLOB' (repeatable; added to "       \
	"ward.yml's)\n"                                                        \
	"      --config FILE      read FILE after the user and project "       \
	"files\n"                                                              \
	"                         (see ward-config(5))\n"                      \
	"      --keep-new-repos   keep a git repository a command makes "      \
	"(by\n"                                                                \
	"                         default it goes to ward's quarantine)\n"     \
	"      --allow-home-workspace\n"                                       \
	"                         accept /, $HOME or a directory holding it "  \
	"as the\n"                                                             \
	"                         workspace under workspace-write\n"
#define CLI_ALLOW_UNIX_HELP                                                    \
	"      --allow-unix PATH  let the command connect to the unix socket " \
	"PATH\n"                                                               \
	"                         (or any beneath the directory PATH; "        \
	"repeatable)\n"
#define CLI_ENV_KEEP_HELP                                                      \
	"      --env-keep NAME    keep variable NAME in the command's "        \
	"environment\n"                                                        \
	"                         although its name or value looks like "      \
	"a secret\n"                                                           \
	"                         (repeatable)\n"

/*
 * cli_config_option - handle --access, --config and --env-keep (true), and
 * note that
 * --mode was given (o->mode_given) while returning false for it, so that
 * cli_policy_option() still parses the value. Call it first.
 */
bool cli_config_option(struct cli_policy_opts *o, int opt, const char *arg,
		       const char *usage);

/* What cli_setup_build() made. The config owns the rules the policy uses. */
struct cli_setup {
	ward_config *config;
	ward_policy *policy;	 /* NULL unless asked for */
	ward_provider *provider; /* NULL unless asked for */
};

/* What cli_setup_build() should make and how it reports failure. */
enum cli_setup_flags {
	CLI_SETUP_PROVIDER = 1 << 0, /* a provider too (run, confine) */
	CLI_SETUP_JSON = 1 << 1,     /* failures as a JSON error object */
	CLI_SETUP_QUIET = 1 << 2,    /* --quiet: ignored values said once */
	CLI_SETUP_POLICY = 1 << 3,   /* the policy too (a call makes its own) */
};

/*
 * cli_setup_build - load ward.yml's layers with the flags of @o on top,
 * then, with CLI_SETUP_POLICY, build the policy (mode, workspace, access
 * rules, git protection) and, with CLI_SETUP_PROVIDER, the provider
 * (chain, runner_command, probe timeout, --runner). Dies on failure: a workspace flag that is not
 * a directory, or only bad flags, with exit 2; an invalid configuration
 * (every error listed) or access rules with runner_command with exit 125.
 */
void cli_setup_build(struct cli_setup *out, const struct cli_policy_opts *o,
		     const char *usage, unsigned flags);

/*
 * cli_config_options - the ward_config_options for @o (the flag layer).
 * Pointers borrow from @o.
 */
void cli_config_options(struct ward_config_options *out,
			const struct cli_policy_opts *o);

/*
 * cli_config_report_errors - print every error of @cfg on stderr, one
 * "<cli_name>: <error>" line each (or one JSON error object with all of
 * them when @json), and exit: 2 when every error came from a flag, else
 * 125.
 */
noreturn void cli_config_report_errors(const ward_config *cfg, bool json);

/*
 * cli_check_workspace - some clients start servers and agents in / or in
 * the home directory. Under workspace-write (@mode, over @policy) that
 * would make the whole tree writable, so a workspace that is /, $HOME or
 * an ancestor of $HOME is refused unless the user confirmed it (libward's
 * check, the one text every front end shows): said at start-up rather
 * than at the first call. Dies with exit 2 (`ward mcp`, `ward acp`).
 */
void cli_check_workspace(const ward_policy *policy, enum ward_mode mode,
			 const char *usage);

/* cli_setup_free - free what cli_setup_build() made and @o's vector. */
void cli_setup_free(struct cli_setup *s, struct cli_policy_opts *o);

#endif
