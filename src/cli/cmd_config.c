/*
 * ward config check — validate ward.yml and explain the effective setup:
 * which files were read, each setting and where it came from, the presets,
 * the access rules (with their origins), how each runner of the chain
 * applies them, and every warning. Exit 0 when valid, 1 when not (every
 * error listed), 2 for a bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ward/config.h"
#include "ward/env.h"
#include "ward/translate.h"

#include "cli.h"
#include "cmd_config.h"
#include "policy_opts.h"

static const char config_usage[] =
    "ward config check [--json] [--workspace DIR] [--config FILE] "
    "[--access RULE]... [--env-keep NAME]... [--mode MODE]";

static void print_help(void)
{
	printf("Usage: %s\n"
	       "\n"
	       "Validate ward's configuration (ward.yml) and print the "
	       "effective setup:\n"
	       "the files read, every setting and where it came from "
	       "(default, user\n"
	       "file, project file, --config, flag), the presets, the access "
	       "rules as\n"
	       "each runner of the chain applies them (and which it does not "
	       "enforce:\n"
	       "partial enforcement), the environment variables a command "
	       "would not get,\n"
	       "and every warning.\n"
	       "\n"
	       "Layers, lowest first: built-in defaults < user file\n"
	       "($XDG_CONFIG_HOME/ward/config.yml) < project file\n"
	       "(WORKSPACE/.ward/config.yml, may only narrow) < --config FILE "
	       "< flags.\n"
	       "\n"
	       "Options:\n"
	       "  -m, --mode MODE        as for ward run: the mode flag\n"
	       "  -w, --workspace DIR    the workspace whose project file is "
	       "read\n"
	       "                         (default: ward.yml's, else "
	       ".)\n" CLI_CONFIG_HELP CLI_NETWORK_HELP CLI_ENV_KEEP_HELP
		   CLI_ALLOW_UNIX_HELP
	       "      --json             print one JSON object\n"
	       "  -h, --help             show this help and exit\n"
	       "\n"
	       "Exit status:\n"
	       "  0    the configuration is valid\n"
	       "  1    it is not (every error is listed)\n"
	       "  2    usage error\n"
	       "  125  ward itself failed\n"
	       "\n"
	       "Examples:\n"
	       "  ward config check\n"
	       "  ward config check --workspace ~/src/app --json\n"
	       "  ward config check --config ci.yml --access '-- ~/.aws'\n"
	       "\n"
	       "See ward-config(5).\n",
	       config_usage);
}

/* --- sources ------------------------------------------------------------ */

/* "default", "flag --mode", "user file F:L", "--config F:L", … */
static const char *source_text(char *buf, size_t len,
			       const struct ward_config_origin *o,
			       const char *key)
{
	switch (o->layer) {
	case WARD_CONFIG_LAYER_DEFAULT:
		snprintf(buf, len, "default");
		break;
	case WARD_CONFIG_LAYER_FLAGS:
		snprintf(buf, len, "flag --%s", key);
		break;
	case WARD_CONFIG_LAYER_EXPLICIT:
		snprintf(buf, len, "--config %s:%u", o->file ? o->file : "?",
			 o->line);
		break;
	default:
		snprintf(buf, len, "%s file %s:%u",
			 ward_config_layer_name(o->layer),
			 o->file ? o->file : "?", o->line);
		break;
	}
	return buf;
}

static json_t *source_json(const struct ward_config_origin *o)
{
	json_t *obj = json_object();

	if (!obj ||
	    json_object_set_new(
		obj, "layer", json_string(ward_config_layer_name(o->layer))) ||
	    json_object_set_new(obj, "file",
				o->file
				    ? ward_json_str(o->file)
				    : json_null()) ||
	    json_object_set_new(obj, "line",
				o->line ? json_integer(o->line) : json_null()))
		die(CLI_EXIT_WARD, "out of memory");
	return obj;
}

static const char *access_name(enum ward_access a)
{
	switch (a) {
	case WARD_ACCESS_RW:
		return "rw";
	case WARD_ACCESS_RO:
		return "r-";
	case WARD_ACCESS_NONE:
		return "--";
	default:
		return "??";
	}
}

static void set_or_die(json_t *obj, const char *key, json_t *value)
{
	if (!value || json_object_set_new(obj, key, value))
		die(CLI_EXIT_WARD, "out of memory");
}

static void push_or_die(json_t *arr, json_t *value)
{
	if (!value || json_array_append_new(arr, value))
		die(CLI_EXIT_WARD, "out of memory");
}

/* --- the report --------------------------------------------------------- */

/* Everything check gathers, printed as text or JSON. */
struct report {
	ward_config *cfg;
	ward_policy *policy; /* NULL when the configuration is invalid */
	const char *user_path;
	char project_path[PATH_MAX + 32];
	/* Runners whose application is described. */
	enum ward_runner runners[8];
	size_t nrunners;
	char **describe[8];
	char **warnings[8];
	char **partial[8]; /* what each runner does not enforce at all */
	/* The variables of ward's own environment a command would not get,
	 * and why each (ward_env_judge: the rule, never the value). */
	char **env_dropped;
	char **env_why;
	/* Errors besides the configuration's own (e.g. rules + command). */
	const char *extra_error;
	char extra_buf[2048];
};

/* The runners the rules would meet: the configured chain, or the
 * platform's, or the custom runner; none at all under danger-full-access. */
static void pick_runners(struct report *r)
{
	const enum ward_runner *chain = NULL;
	size_t n;

	if (ward_config_mode(r->cfg, NULL) == WARD_MODE_DANGER_FULL_ACCESS) {
		r->runners[r->nrunners++] = WARD_RUNNER_NONE;
		return;
	}
	if (ward_config_runner_command(r->cfg, NULL)) {
		r->runners[r->nrunners++] = WARD_RUNNER_CUSTOM;
		return;
	}
	n = ward_config_runners(&chain, r->cfg, NULL);
	if (n == 0)
		n = ward_platform_chain(&chain, ward_platform_current());
	for (size_t i = 0; i < n && r->nrunners < 8; i++)
		r->runners[r->nrunners++] = chain[i];
}

static void describe_runners(struct report *r)
{
	for (size_t i = 0; i < r->nrunners; i++) {
		if (ward_policy_describe(&r->describe[i], r->policy,
					 r->runners[i]) != 0)
			die(CLI_EXIT_WARD, "describing the %s runner: %s",
			    ward_runner_name(r->runners[i]), ward_error_last());
		if (ward_policy_warnings(&r->warnings[i], r->policy,
					 r->runners[i]) != 0)
			die(CLI_EXIT_WARD, "the %s runner's warnings: %s",
			    ward_runner_name(r->runners[i]), ward_error_last());
		if (ward_policy_partial(&r->partial[i], r->policy,
					r->runners[i]) != 0)
			die(CLI_EXIT_WARD, "the %s runner's gaps: %s",
			    ward_runner_name(r->runners[i]), ward_error_last());
	}
}

static void row(const char *key, const char *value,
		const struct ward_config_origin *o)
{
	char src[PATH_MAX + 64];

	printf("  %-26s %-24s %s\n", key, value,
	       source_text(src, sizeof(src), o, key));
}

static void print_settings_text(const struct report *r)
{
	struct ward_config_origin o;
	const enum ward_runner *chain = NULL;
	const char *s;
	char val[1024];
	char *const *sigs, *const *un;
	size_t n;
	unsigned t;

	s = ward_mode_name(ward_config_mode(r->cfg, &o));
	row("mode", s, &o);
	s = ward_config_workspace(r->cfg, &o);
	row("workspace", s, &o);
	n = ward_config_runners(&chain, r->cfg, &o);
	if (n == 0)
		n = ward_platform_chain(&chain, ward_platform_current());
	val[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(val + strlen(val), sizeof(val) - strlen(val), "%s%s",
			 i ? ", " : "", ward_runner_name(chain[i]));
	row("runners", n ? val : "(none)", &o);
	s = ward_config_runner_command(r->cfg, &o);
	row("runner_command", s ? s : "(none)", &o);
	sigs = ward_config_runner_failure_signatures(r->cfg, &o);
	val[0] = '\0';
	for (size_t i = 0; sigs[i]; i++)
		snprintf(val + strlen(val), sizeof(val) - strlen(val),
			 "%s\"%s\"", i ? ", " : "", sigs[i]);
	row("runner_failure_signatures", sigs[0] ? val : "(none)", &o);
	t = ward_config_probe_timeout_ms(r->cfg, &o);
	snprintf(val, sizeof(val), "%u", t ? t : 2000u);
	row("probe_timeout_ms", val, &o);
	s = ward_approval_policy_name(ward_config_approval(r->cfg, &o));
	row("approval", s, &o);
	s = ward_config_protect_git(r->cfg, &o) ? "true" : "false";
	row("protect_git", s, &o);
	un = ward_config_unprotect(r->cfg, &o);
	val[0] = '\0';
	for (size_t i = 0; un[i]; i++)
		snprintf(val + strlen(val), sizeof(val) - strlen(val), "%s%s",
			 i ? ", " : "", un[i]);
	row("unprotect", un[0] ? val : "(none)", &o);
	s = ward_config_keep_new_repos(r->cfg, &o) ? "true" : "false";
	row("keep_new_repos", s, &o);
	s = ward_config_allow_home_workspace(r->cfg, &o) ? "true" : "false";
	row("allow_home_workspace", s, &o);
	snprintf(val, sizeof(val), "%u",
		 ward_config_quarantine_quota_mb(r->cfg, &o));
	row("quarantine_quota_mb", val, &o);
	snprintf(val, sizeof(val), "%u",
		 ward_config_quarantine_days(r->cfg, &o));
	row("quarantine_retention_days", val, &o);
	{
		bool set = false;
		enum ward_network net = ward_config_network(
		    r->cfg, ward_config_mode(r->cfg, NULL), &set, &o);
		char *const *d = ward_config_allow_domains(r->cfg);

		snprintf(val, sizeof(val), "%s%s", ward_network_name(net),
			 set ? "" : " (the mode's default)");
		row("network", val, &o);
		val[0] = '\0';
		for (size_t i = 0; d[i]; i++)
			snprintf(val + strlen(val), sizeof(val) - strlen(val),
				 "%s%s", i ? ", " : "", d[i]);
		row("allow_domains", d[0] ? val : "(none)", &o);
		d = ward_config_deny_domains(r->cfg);
		val[0] = '\0';
		for (size_t i = 0; d[i]; i++)
			snprintf(val + strlen(val), sizeof(val) - strlen(val),
				 "%s%s", i ? ", " : "", d[i]);
		row("deny_domains", d[0] ? val : "(none)", &o);
	}
}

/*
 * What ward's own environment would lose, and why: each variable judged
 * as every call judges it (ward_env_judge), its name and the rule or the
 * kind of value that drops it; never the value.
 */
static void env_report(struct report *r)
{
	extern char **environ;
	char *const *drop = ward_config_env_drop(r->cfg, NULL);
	char *const *keep = ward_config_env_keep(r->cfg);
	size_t total = 0, n = 0;
	char buf[300];

	while (environ && environ[total])
		total++;
	r->env_dropped = calloc(total + 1, sizeof(*r->env_dropped));
	r->env_why = calloc(total + 1, sizeof(*r->env_why));
	if (!r->env_dropped || !r->env_why)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < total; i++) {
		const char *why =
		    ward_env_judge(buf, sizeof(buf), environ[i], drop, keep);

		if (!why)
			continue;
		r->env_dropped[n] =
		    strndup(environ[i], strcspn(environ[i], "="));
		r->env_why[n] = strdup(why);
		if (!r->env_dropped[n] || !r->env_why[n])
			die(CLI_EXIT_WARD, "out of memory");
		n++;
	}
}

/* The env policy and what it would drop from ward's own environment. */
static void print_env_text(const struct report *r)
{
	struct ward_config_origin o;
	char *const *drop = ward_config_env_drop(r->cfg, &o);
	char *const *keep = ward_config_env_keep(r->cfg);
	char src[PATH_MAX + 64];

	printf("environment (what a command does not get):\n");
	printf("  drop     ");
	for (size_t i = 0; drop[i]; i++)
		printf("%s%s", i ? " " : "", drop[i]);
	printf("  (%s)\n",
	       source_text(src, sizeof(src), &o,
			   o.layer == WARD_CONFIG_LAYER_FLAGS ? "env-keep"
							      : "env"));
	printf("  keep     ");
	for (size_t i = 0; keep[i]; i++)
		printf("%s%s", i ? " " : "", keep[i]);
	printf("%s\n", keep[0] ? "" : "(none)");
	printf("  dropped  %s\n", r->env_dropped[0]
				      ? "(from this environment)"
				      : "(nothing in this environment)");
	for (size_t i = 0; r->env_dropped[i]; i++)
		printf("    %s: %s\n", r->env_dropped[i], r->env_why[i]);
}

static void print_text(const struct report *r, bool valid)
{
	const ward_rules *rules = ward_config_rules(r->cfg);
	const ward_presets *table = ward_config_presets(r->cfg);
	size_t nerr = ward_config_error_count(r->cfg);
	size_t nwarn = ward_config_warning_count(r->cfg), shown = 0;
	const char *xfile =
	    ward_config_file(r->cfg, WARD_CONFIG_LAYER_EXPLICIT);
	char src[PATH_MAX + 64];

	printf("configuration: %s\n", valid ? "valid" : "INVALID");
	printf("files:\n");
	printf("  user     %s%s\n", r->user_path ? r->user_path : "(none)",
	       r->user_path && !ward_config_file(r->cfg, WARD_CONFIG_LAYER_USER)
		   ? " (not present)"
		   : "");
	printf("  project  %s%s\n",
	       r->project_path[0] ? r->project_path : "(unknown workspace)",
	       r->project_path[0] &&
		       !ward_config_file(r->cfg, WARD_CONFIG_LAYER_PROJECT)
		   ? " (not present)"
		   : "");
	printf("  config   %s\n", xfile ? xfile : "(none)");
	if (!valid) {
		printf("errors:\n");
		for (size_t i = 0; i < nerr; i++)
			printf("  %s\n", ward_config_error(r->cfg, i, NULL));
		if (r->extra_error)
			printf("  %s\n", r->extra_error);
	}
	if (r->policy) {
		printf("settings:\n");
		print_settings_text(r);
		printf("presets:\n");
		for (size_t i = 0; table && i < ward_presets_count(table);
		     i++) {
			struct ward_config_origin o = {0};
			enum ward_approval_policy ap;
			enum ward_mode m;
			const char *name;

			ward_presets_get(&name, &m, &ap, table, i);
			for (size_t j = 0; j < ward_config_preset_count(r->cfg);
			     j++) {
				struct ward_config_preset p;

				ward_config_preset(&p, r->cfg, j);
				if (strcmp(p.name, name) == 0)
					o = p.origin;
			}
			printf("  %-20s %-19s %-6s %s\n", name,
			       ward_mode_name(m), ward_approval_policy_name(ap),
			       source_text(src, sizeof(src), &o, "presets"));
		}
		printf("access rules (%zu; -- beats r- beats rw):\n",
		       ward_rules_count(rules));
		for (size_t i = 0; i < ward_rules_count(rules); i++) {
			struct ward_rule_info in;
			struct ward_config_origin o = {0};

			ward_rules_get(&in, rules, i);
			o.layer = in.origin.file ? WARD_CONFIG_LAYER_USER
						 : WARD_CONFIG_LAYER_FLAGS;
			for (int l = WARD_CONFIG_LAYER_USER;
			     in.origin.file && l <= WARD_CONFIG_LAYER_EXPLICIT;
			     l++) {
				const char *f = ward_config_file(
				    r->cfg, (enum ward_config_layer)l);

				if (f && strcmp(f, in.origin.file) == 0)
					o.layer = (enum ward_config_layer)l;
			}
			o.file = in.origin.file;
			o.line = in.origin.line;
			printf("  %s %s%s  (\"%s\", %s)\n",
			       access_name(in.access), in.pattern,
			       in.is_glob ? " [glob]" : "", in.source,
			       source_text(src, sizeof(src), &o, "access"));
		}
		for (size_t i = 0; i < r->nrunners; i++) {
			bool partial = r->partial[i] && r->partial[i][0];

			printf("as the %s runner applies them%s%s:\n",
			       ward_runner_name(r->runners[i]),
			       r->runners[i] == WARD_RUNNER_NONE
				   ? " (danger-full-access: not confined)"
				   : "",
			       partial ? " (enforcement: partial)" : "");
			for (size_t j = 0; r->describe[i] && r->describe[i][j];
			     j++)
				printf("  %s\n", r->describe[i][j]);
			if (!r->describe[i] || !r->describe[i][0])
				printf("  (nothing to apply)\n");
			for (size_t j = 0; partial && r->partial[i][j]; j++)
				printf("  partial: %s\n", r->partial[i][j]);
		}
		print_env_text(r);
	}
	printf("warnings:\n");
	for (size_t i = 0; i < nwarn; i++, shown++)
		printf("  %s\n", ward_config_warning(r->cfg, i));
	for (size_t i = 0; i < r->nrunners; i++)
		for (size_t j = 0; r->warnings[i] && r->warnings[i][j];
		     j++, shown++)
			printf("  %s\n", r->warnings[i][j]);
	if (shown == 0)
		printf("  (none)\n");
}

static json_t *setting_json(json_t *value, const struct ward_config_origin *o)
{
	json_t *obj = json_object();

	if (!obj)
		die(CLI_EXIT_WARD, "out of memory");
	set_or_die(obj, "value", value);
	set_or_die(obj, "source", source_json(o));
	return obj;
}

static json_t *settings_json(const struct report *r)
{
	json_t *obj = json_object(), *arr;
	struct ward_config_origin o;
	const enum ward_runner *chain = NULL;
	char *const *sigs, *const *un;
	size_t n;
	unsigned t;

	if (!obj)
		die(CLI_EXIT_WARD, "out of memory");
	set_or_die(obj, "mode",
		   setting_json(
		       ward_json_str(ward_mode_name(ward_config_mode(r->cfg, &o))), &o));
	set_or_die(obj, "workspace",
		   setting_json(ward_json_str(ward_config_workspace(r->cfg, &o)), &o));
	n = ward_config_runners(&chain, r->cfg, &o);
	if (n == 0)
		n = ward_platform_chain(&chain, ward_platform_current());
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < n; i++)
		push_or_die(arr, json_string(ward_runner_name(chain[i])));
	set_or_die(obj, "runners", setting_json(arr, &o));
	set_or_die(
	    obj, "runner_command",
	    setting_json(ward_json_str(ward_config_runner_command(r->cfg, &o)), &o));
	sigs = ward_config_runner_failure_signatures(r->cfg, &o);
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; sigs[i]; i++)
		push_or_die(arr, ward_json_str(sigs[i]));
	set_or_die(obj, "runner_failure_signatures", setting_json(arr, &o));
	t = ward_config_probe_timeout_ms(r->cfg, &o);
	set_or_die(obj, "probe_timeout_ms",
		   setting_json(json_integer(t ? t : 2000), &o));
	set_or_die(obj, "approval",
		   setting_json(json_string(ward_approval_policy_name(
				    ward_config_approval(r->cfg, &o))),
				&o));
	set_or_die(obj, "protect_git",
		   setting_json(
		       json_boolean(ward_config_protect_git(r->cfg, &o)), &o));
	un = ward_config_unprotect(r->cfg, &o);
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; un[i]; i++)
		push_or_die(arr, ward_json_str(un[i]));
	set_or_die(obj, "unprotect", setting_json(arr, &o));
	set_or_die(
	    obj, "keep_new_repos",
	    setting_json(json_boolean(ward_config_keep_new_repos(r->cfg, &o)),
			 &o));
	set_or_die(obj, "allow_home_workspace",
		   setting_json(json_boolean(ward_config_allow_home_workspace(
				    r->cfg, &o)),
				&o));
	set_or_die(
	    obj, "quarantine_quota_mb",
	    setting_json(
		json_integer(ward_config_quarantine_quota_mb(r->cfg, &o)), &o));
	set_or_die(
	    obj, "quarantine_retention_days",
	    setting_json(json_integer(ward_config_quarantine_days(r->cfg, &o)),
			 &o));
	{
		char *const *d;

		set_or_die(
		    obj, "network",
		    setting_json(
			json_string(ward_network_name(ward_config_network(
			    r->cfg, ward_config_mode(r->cfg, NULL), NULL, &o))),
			&o));
		for (int k = 0; k < 2; k++) {
			d = k ? ward_config_deny_domains(r->cfg)
			      : ward_config_allow_domains(r->cfg);
			arr = json_array();
			if (!arr)
				die(CLI_EXIT_WARD, "out of memory");
			for (size_t i = 0; d[i]; i++)
				push_or_die(arr, ward_json_str(d[i]));
			set_or_die(obj, k ? "deny_domains" : "allow_domains",
				   setting_json(arr, &o));
		}
	}
	return obj;
}

static void print_json(const struct report *r, bool valid)
{
	const ward_rules *rules = ward_config_rules(r->cfg);
	const ward_presets *table = ward_config_presets(r->cfg);
	json_t *obj = json_object(), *arr, *files, *f;
	const char *paths[3];
	static const enum ward_config_layer layers[3] = {
	    WARD_CONFIG_LAYER_USER, WARD_CONFIG_LAYER_PROJECT,
	    WARD_CONFIG_LAYER_EXPLICIT};

	if (!obj)
		die(CLI_EXIT_WARD, "out of memory");
	set_or_die(obj, "valid", json_boolean(valid));
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < ward_config_error_count(r->cfg); i++)
		push_or_die(arr, ward_json_str(ward_config_error(r->cfg, i, NULL)));
	if (r->extra_error)
		push_or_die(arr, ward_json_str(r->extra_error));
	set_or_die(obj, "errors", arr);
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < ward_config_warning_count(r->cfg); i++)
		push_or_die(arr, ward_json_str(ward_config_warning(r->cfg, i)));
	for (size_t i = 0; i < r->nrunners; i++)
		for (size_t j = 0; r->warnings[i] && r->warnings[i][j]; j++)
			push_or_die(arr, ward_json_str(r->warnings[i][j]));
	set_or_die(obj, "warnings", arr);

	files = json_object();
	if (!files)
		die(CLI_EXIT_WARD, "out of memory");
	paths[0] = r->user_path;
	paths[1] = r->project_path[0] ? r->project_path : NULL;
	paths[2] = ward_config_file(r->cfg, WARD_CONFIG_LAYER_EXPLICIT);
	for (size_t i = 0; i < 3; i++) {
		f = json_object();
		if (!f)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(f, "path", ward_json_str(paths[i]));
		set_or_die(
		    f, "read",
		    json_boolean(ward_config_file(r->cfg, layers[i]) != NULL));
		set_or_die(files, ward_config_layer_name(layers[i]), f);
	}
	set_or_die(obj, "files", files);
	if (!r->policy) {
		cli_json_print(obj);
		return;
	}
	set_or_die(obj, "settings", settings_json(r));

	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; table && i < ward_presets_count(table); i++) {
		struct ward_config_origin o = {0};
		enum ward_approval_policy ap;
		enum ward_mode m;
		const char *name;

		ward_presets_get(&name, &m, &ap, table, i);
		for (size_t j = 0; j < ward_config_preset_count(r->cfg); j++) {
			struct ward_config_preset p;

			ward_config_preset(&p, r->cfg, j);
			if (strcmp(p.name, name) == 0)
				o = p.origin;
		}
		f = json_object();
		if (!f)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(f, "name", ward_json_str(name));
		set_or_die(f, "mode", json_string(ward_mode_name(m)));
		set_or_die(f, "approval",
			   json_string(ward_approval_policy_name(ap)));
		set_or_die(f, "source", source_json(&o));
		push_or_die(arr, f);
	}
	set_or_die(obj, "presets", arr);

	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < ward_rules_count(rules); i++) {
		struct ward_rule_info in;
		struct ward_config_origin o = {0};

		ward_rules_get(&in, rules, i);
		o.layer = in.origin.file ? WARD_CONFIG_LAYER_USER
					 : WARD_CONFIG_LAYER_FLAGS;
		for (size_t l = 0; in.origin.file && l < 3; l++) {
			const char *p = ward_config_file(r->cfg, layers[l]);

			if (p && strcmp(p, in.origin.file) == 0)
				o.layer = layers[l];
		}
		o.file = in.origin.file;
		o.line = in.origin.line;
		f = json_object();
		if (!f)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(f, "access", json_string(access_name(in.access)));
		set_or_die(f, "entry", ward_json_str(in.source));
		set_or_die(f, "pattern", ward_json_str(in.pattern));
		set_or_die(f, "glob", json_boolean(in.is_glob));
		set_or_die(f, "regex", ward_json_str(in.regex));
		set_or_die(f, "source", source_json(&o));
		push_or_die(arr, f);
	}
	set_or_die(obj, "access", arr);

	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; i < r->nrunners; i++) {
		json_t *lines = json_array(), *warns = json_array();

		f = json_object();
		if (!f || !lines || !warns)
			die(CLI_EXIT_WARD, "out of memory");
		for (size_t j = 0; r->describe[i] && r->describe[i][j]; j++)
			push_or_die(lines, ward_json_str(r->describe[i][j]));
		for (size_t j = 0; r->warnings[i] && r->warnings[i][j]; j++)
			push_or_die(warns, ward_json_str(r->warnings[i][j]));
		set_or_die(f, "runner",
			   json_string(ward_runner_name(r->runners[i])));
		set_or_die(f, "applies", lines);
		set_or_die(f, "warnings", warns);
		set_or_die(f, "partial", ward_json_strv(r->partial[i]));
		push_or_die(arr, f);
	}
	set_or_die(obj, "runners", arr);
	{
		struct ward_config_origin o;
		json_t *env = json_object();

		if (!env)
			die(CLI_EXIT_WARD, "out of memory");
		set_or_die(env, "drop",
			   ward_json_strv(ward_config_env_drop(r->cfg, &o)));
		set_or_die(env, "keep",
			   ward_json_strv(ward_config_env_keep(r->cfg)));
		set_or_die(env, "dropped", ward_json_strv(r->env_dropped));
		set_or_die(env, "why", ward_json_strv(r->env_why));
		set_or_die(env, "source", source_json(&o));
		set_or_die(obj, "env", env);
	}
	cli_json_print(obj);
}

/* --- check -------------------------------------------------------------- */

const struct cli_option cli_config_cmd_options[] = {
    CLI_OPTION_MODE,	 CLI_OPTION_WORKSPACE, CLI_CONFIG_OPTIONS,
    CLI_NETWORK_OPTIONS, CLI_OPTION_ENV_KEEP,  CLI_OPTION_ALLOW_UNIX,
    CLI_OPTION_JSON,	 CLI_OPTION_HELP,      CLI_OPTION_END,
};

const struct cli_command cli_config_commands[] = {
    {"check",
     NULL,
     "validate ward.yml and show the effective setup",
     NULL,
     NULL,
     {CLI_VALUE_NONE}},
    {NULL, NULL, NULL, NULL, NULL, {CLI_VALUE_NONE}},
};

static int config_check(int argc, char **argv)
{
	struct cli_policy_opts po = CLI_POLICY_OPTS_INIT;
	struct ward_config_options co;
	struct report r;
	struct cli_getopt g;
	char ubuf[PATH_MAX];
	const char *ws;
	struct stat st;
	bool json = false, valid;
	int opt, err;

	memset(&r, 0, sizeof(r));
	cli_getopt_init(&g, cli_config_cmd_options, true, "check", config_usage,
			argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (cli_config_option(&po, opt, optarg, config_usage) ||
		    cli_policy_option(&po, opt, optarg, config_usage))
			continue;
		switch (opt) {
		case CLI_OPT_JSON:
			json = true;
			break;
		case 'h':
			print_help();
			return CLI_EXIT_OK;
		default:
			die_getopt(config_usage, opt, argc, argv);
		}
	}
	if (optind < argc)
		die_usage(config_usage, "unexpected argument '%s'",
			  argv[optind]);
	if (po.workspace) {
		if (stat(po.workspace, &st) != 0)
			die_usage(config_usage, "workspace '%s': %s",
				  po.workspace, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			die_usage(config_usage,
				  "workspace '%s' is not a directory",
				  po.workspace);
	}

	if (ward_config_new(&r.cfg) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	cli_config_options(&co, &po);
	r.user_path = ward_config_default_user_file(ubuf, sizeof(ubuf));
	err = ward_config_load(r.cfg, &co);
	if (err == -ENOMEM)
		die(CLI_EXIT_WARD, "out of memory");
	ws = ward_config_workspace(r.cfg, NULL);
	if (ws)
		snprintf(r.project_path, sizeof(r.project_path),
			 "%s/.ward/config.yml", strcmp(ws, "/") ? ws : "");
	valid = err == 0;
	if (valid && ward_config_check_confine(r.cfg) != 0) {
		snprintf(r.extra_buf, sizeof(r.extra_buf), "%s",
			 ward_error_last());
		r.extra_error = r.extra_buf;
		valid = false;
	}
	if (err == 0) {
		err = ward_config_policy_new(&r.policy, r.cfg,
					     ward_config_mode(r.cfg, NULL));
		if (err)
			die(CLI_EXIT_WARD, "%s", ward_error_last());
		pick_runners(&r);
		describe_runners(&r);
		env_report(&r);
	}

	if (json)
		print_json(&r, valid);
	else
		print_text(&r, valid);

	for (size_t i = 0; i < r.nrunners; i++) {
		ward_strv_free(r.describe[i]);
		ward_strv_free(r.warnings[i]);
		ward_strv_free(r.partial[i]);
	}
	ward_strv_free(r.env_dropped);
	ward_strv_free(r.env_why);
	ward_policy_free(r.policy);
	ward_config_free(r.cfg);
	cli_setup_free(NULL, &po);
	return valid ? CMD_CONFIG_EXIT_VALID : CMD_CONFIG_EXIT_INVALID;
}

int cmd_config(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2)
			die_usage(config_usage, "no subcommand given");
		print_help();
		return CLI_EXIT_OK;
	}
	/* check is the only one. */
	cli_subcommand(cli_config_commands, "config", config_usage, argv[1]);
	return config_check(argc - 1, argv + 1);
}
