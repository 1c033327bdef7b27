/*
 * ward — building the policy and the provider from ward.yml and the flags
 * (see policy_opts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ward/call.h"
#include "ward/env.h"
#include "ward/notice.h"

#include "policy_opts.h"
#include "util/util.h"

bool cli_config_option(struct cli_policy_opts *o, int opt, const char *arg,
		       const char *usage)
{
	const char **v;

	switch (opt) {
	case 'm':
		/* Parsed by cli_policy_option(); ward.yml must not override
		 * a mode given on the command line. */
		o->mode_given = true;
		return false;
	case CLI_OPT_ACCESS:
		if (!*arg)
			die_usage(usage, "option '--access' needs a rule "
					 "(e.g. '-- ~/.ssh')");
		v = realloc(o->access, (o->naccess + 1) * sizeof(*v));
		if (!v)
			die(CLI_EXIT_WARD, "out of memory");
		v[o->naccess++] = arg;
		o->access = v;
		return true;
	case CLI_OPT_ALLOW_UNIX:
		if (arg[0] != '/')
			die_usage(usage,
				  "option '--allow-unix' needs an absolute "
				  "path to a socket (or a directory of "
				  "sockets), not '%s'",
				  arg);
		v = realloc(o->allow_unix, (o->nallow_unix + 1) * sizeof(*v));
		if (!v)
			die(CLI_EXIT_WARD, "out of memory");
		v[o->nallow_unix++] = arg;
		o->allow_unix = v;
		return true;
	case CLI_OPT_KEEP_NEW_REPOS:
		o->keep_new_repos = true;
		return true;
	case CLI_OPT_ALLOW_HOME:
		o->allow_home = true;
		return true;
	case CLI_OPT_CONFIG:
		if (!*arg)
			die_usage(usage, "option '--config' needs a file");
		o->config_file = arg;
		return true;
	case CLI_OPT_NETWORK:
		if (strcmp(arg, "off") != 0 && strcmp(arg, "on") != 0)
			die_usage(usage,
				  "option '--network' needs off or on, not "
				  "'%s' (an allowlist is given with "
				  "--allow-domain)",
				  arg);
		o->network = arg;
		return true;
	case CLI_OPT_ALLOW_DOMAIN:
		if (ward_network_pattern_check(arg) != 0)
			die_usage(usage, "option '--allow-domain' '%s': %s",
				  arg, ward_error_last());
		v = realloc(o->allow_domains,
			    (o->nallow_domains + 1) * sizeof(*v));
		if (!v)
			die(CLI_EXIT_WARD, "out of memory");
		v[o->nallow_domains++] = arg;
		o->allow_domains = v;
		return true;
	case CLI_OPT_ENV_KEEP:
		if (!ward_env_pattern_valid(arg))
			die_usage(usage,
				  "option '--env-keep' needs a variable name "
				  "(letters, digits, _; or a pattern with * ? "
				  "[ ]), not '%s'",
				  arg);
		v = realloc(o->env_keep, (o->nenv_keep + 1) * sizeof(*v));
		if (!v)
			die(CLI_EXIT_WARD, "out of memory");
		v[o->nenv_keep++] = arg;
		o->env_keep = v;
		return true;
	}
	return false;
}

void cli_config_options(struct ward_config_options *out,
			const struct cli_policy_opts *o)
{
	struct ward_config_options init = WARD_CONFIG_OPTIONS_INIT;

	*out = init;
	out->config_file = o->config_file;
	out->mode = o->mode_given ? ward_mode_name(o->mode) : NULL;
	out->workspace = o->workspace;
	out->access = o->access;
	out->access_len = o->naccess;
	out->env_keep = o->env_keep;
	out->env_keep_len = o->nenv_keep;
	out->network = o->network;
	out->allow_domains = o->allow_domains;
	out->allow_domains_len = o->nallow_domains;
	out->allow_unix = o->allow_unix;
	out->allow_unix_len = o->nallow_unix;
	out->keep_new_repos = o->keep_new_repos;
	out->allow_home_workspace = o->allow_home;
}

noreturn void cli_config_report_errors(const ward_config *cfg, bool json)
{
	size_t n = ward_config_error_count(cfg);
	struct ward_config_origin where;
	bool flags_only = n > 0;

	for (size_t i = 0; i < n; i++) {
		ward_config_error(cfg, i, &where);
		flags_only &= where.layer == WARD_CONFIG_LAYER_FLAGS;
	}
	if (json) {
		json_t *obj = json_object();
		json_t *arr = json_array();
		const char *first =
		    n ? ward_config_error(cfg, 0, NULL) : ward_error_last();

		for (size_t i = 0; arr && i < n; i++) {
			const char *e = ward_config_error(cfg, i, NULL);

			if (json_array_append_new(arr,
						  ward_json_str(e)))
				die(CLI_EXIT_WARD, "out of memory");
		}
		if (!obj || !arr ||
		    json_object_set_new(
			obj, "error", json_string(CLI_ERR("CONFIG_INVALID"))) ||
		    json_object_set_new(obj, "message",
					ward_json_str(first)) ||
		    json_object_set_new(obj, "errors", arr))
			die(CLI_EXIT_WARD, "out of memory");
		cli_json_print(obj);
	} else {
		fflush(stdout);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s: %s\n", cli_name,
				ward_config_error(cfg, i, NULL));
		if (n == 0)
			fprintf(stderr, "%s: %s\n", cli_name,
				ward_error_last());
		if (!flags_only)
			fprintf(stderr,
				"Hint: run 'ward config check' to see the "
				"effective configuration\n");
	}
	exit(flags_only ? CLI_EXIT_USAGE : CLI_EXIT_WARD);
}

/* Die: JSON error object or plain message, exit @status. */
static noreturn void fail(int status, bool json, const char *code,
			  const char *msg)
{
	if (json) {
		cli_json_error(code, msg);
		exit(status);
	}
	die(status, "%s", msg);
}

/*
 * What the project file asked for and did not get (a wider mode, ...):
 * said before anything runs (the rest of the warnings: ward config check);
 * with @quiet only when they differ from what was last said for this
 * workspace, like the runner's warnings (cli_print_warnings). Recorded in
 * either case; a store that cannot be read means they are said again.
 */
static void say_ignored(const ward_config *cfg, bool quiet)
{
	size_t n = ward_config_ignored_count(cfg);
	char **list = calloc(n + 1, sizeof(*list));
	bool seen = false;

	if (!list)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < n; i++)
		list[i] = (char *)ward_config_ignored(cfg, i);
	(void)ward_notice_seen(&seen, "ignored",
			       ward_config_workspace(cfg, NULL), list);
	if (!(quiet && seen))
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s: warning: %s\n", cli_name, list[i]);
	free(list);
}

void cli_setup_build(struct cli_setup *out, const struct cli_policy_opts *o,
		     const char *usage, unsigned flags)
{
	struct ward_config_options co;
	bool json = flags & CLI_SETUP_JSON;
	struct cli_setup s = {NULL, NULL, NULL};
	struct stat st;
	int err;

	/* Checked first so a typo is a usage error that names the path. */
	if (o->workspace) {
		if (stat(o->workspace, &st) != 0)
			die_usage(usage, "workspace '%s': %s", o->workspace,
				  strerror(errno));
		if (!S_ISDIR(st.st_mode))
			die_usage(usage, "workspace '%s' is not a directory",
				  o->workspace);
	}
	if (ward_config_new(&s.config) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	cli_config_options(&co, o);
	err = ward_config_load(s.config, &co);
	if (err == -ENOMEM)
		die(CLI_EXIT_WARD, "out of memory");
	if (err)
		cli_config_report_errors(s.config, json);
	say_ignored(s.config, flags & CLI_SETUP_QUIET);

	if ((flags & CLI_SETUP_POLICY) &&
	    ward_config_policy_new(&s.policy, s.config,
				   ward_config_mode(s.config, NULL)) != 0)
		fail(CLI_EXIT_WARD, json, CLI_ERR("WARD_FAILED"),
		     ward_error_last());

	if (flags & CLI_SETUP_PROVIDER) {
		/* Rules with a custom runner would silently do nothing. */
		if (ward_config_check_confine(s.config) != 0)
			fail(CLI_EXIT_WARD, json, CLI_ERR("CONFIG_INVALID"),
			     ward_error_last());
		err = ward_config_provider_new(&s.provider, s.config,
					       WARD_RUNNER_NONE);
		if (err)
			fail(CLI_EXIT_WARD, json, CLI_ERR("WARD_FAILED"),
			     ward_error_last());
		if (o->runner != WARD_RUNNER_NONE) {
			err = ward_provider_force(s.provider, o->runner);
			if (err)
				die_usage(usage, "runner '%s': %s",
					  ward_runner_name(o->runner),
					  ward_error_last());
		}
	}
	*out = s;
}

void cli_setup_free(struct cli_setup *s, struct cli_policy_opts *o)
{
	if (s) {
		ward_provider_free(s->provider);
		ward_policy_free(s->policy);
		ward_config_free(s->config);
		s->provider = NULL;
		s->policy = NULL;
		s->config = NULL;
	}
	if (o) {
		free(o->access);
		o->access = NULL;
		o->naccess = 0;
		free(o->env_keep);
		o->env_keep = NULL;
		o->nenv_keep = 0;
		free(o->allow_domains);
		o->allow_domains = NULL;
		o->nallow_domains = 0;
		free(o->allow_unix);
		o->allow_unix = NULL;
		o->nallow_unix = 0;
	}
}

void cli_check_workspace(const ward_policy *policy, enum ward_mode mode,
			 const char *usage)
{
	ward_policy *p = NULL;

	if (ward_policy_with_mode(&p, policy, mode) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (ward_policy_check_workspace(p) != 0) {
		char why[2048];

		snprintf(why, sizeof(why), "%s", ward_error_last());
		ward_policy_free(p);
		die_usage(usage, "%s", why);
	}
	ward_policy_free(p);
}
