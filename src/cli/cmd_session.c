/*
 * ward session — create sessions, read and set their knobs and presets,
 * print their logs. (The --session / --escalate options `ward run` and
 * `ward fs` share are in session_opts.c, the terminal prompt in prompt.c.)
 *
 *   ward session new [--cwd DIR] [--mode MODE] [--approval ask|never]
 *   ward session list [--json]
 *   ward session show ID [--json]
 *   ward session mode ID [MODE]
 *   ward session approval ID [ask|never]
 *   ward session network ID [off|on]
 *   ward session preset ID [NAME]
 *   ward session presets [--json]
 *   ward session log ID [--json]
 *   ward session rm ID...
 *   ward session prune --older-than DURATION [--json]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "ward/config.h"
#include "ward/escalation.h"
#include "ward/presets.h"
#include "ward/render.h"
#include "ward/session.h"

#include "cli.h"
#include "session_opts.h"
#include "policy_opts.h"
#include "util/util.h"

static const char session_usage[] =
    "ward session new|list|show|mode|approval|network|preset|presets|log|rm|"
    "prune [OPTIONS] [ARG...]";

static void print_help(void)
{
	printf(
	    "Usage: %s\n"
	    "\n"
	    "Sessions keep a sandbox mode and an approval policy per agent "
	    "session, in an\n"
	    "append-only log that also records every call made under it "
	    "(ward run --session,\n"
	    "ward fs --session). The log lives in "
	    "$XDG_STATE_HOME/ward/sessions\n"
	    "(default ~/.local/state/ward/sessions).\n"
	    "\n"
	    "Subcommands:\n"
	    "  new [--cwd DIR] [--mode MODE] [--approval ask|never]\n"
	    "                     create a session; print its id (cwd "
	    "default: .)\n"
	    "  list               every session, oldest first: id, created, "
	    "mode, approval,\n"
	    "                     preset, cwd\n"
	    "  show ID            the session's effective mode, approval "
	    "policy, preset, cwd\n"
	    "  mode ID [MODE]     print, or set, the session's sandbox mode\n"
	    "  approval ID [ask|never]\n"
	    "                     print, or set, the session's approval "
	    "policy\n"
	    "  network ID [off|on]\n"
	    "                     print, or set, the session's network\n"
	    "  preset ID [NAME]   print, or switch to, a permission preset "
	    "(both knobs)\n"
	    "  presets            the preset table\n"
	    "  log ID             the session's log, readably (--json: as "
	    "stored)\n"
	    "  rm ID...           delete sessions (their logs)\n"
	    "  prune --older-than DURATION\n"
	    "                     delete every session whose last event is "
	    "older than\n"
	    "                     DURATION (a number with s, m, h, d or w, "
	    "e.g. 30d)\n"
	    "\n"
	    "An ID may be shortened to any prefix that no other session's id "
	    "begins with\n"
	    "(here and in --session ID).\n"
	    "\n"
	    "Options:\n"
	    "      --json         machine-readable output (list, show, "
	    "presets, log, new,\n"
	    "                     prune)\n"
	    "  -h, --help         show this help and exit\n"
	    "\n"
	    "A new session records the mode and approval policy in force when "
	    "it is made\n"
	    "(--mode, else ward.yml's); later changes to ward.yml do not "
	    "change it.\n"
	    "Setting a value already in force records nothing. 'custom' "
	    "(a combination\n"
	    "matching no preset) can be switched away from, not to.\n"
	    "\n"
	    "Exit status: 0 success, 2 usage error or unknown session, 125 "
	    "ward failed.\n"
	    "\n"
	    "Examples:\n"
	    "  id=$(ward session new --mode read-only)\n"
	    "  ward run --session $id -- make test\n"
	    "  ward run --session $id --escalate workspace-write \\\n"
	    "      --justification 'make writes build/' -- make\n"
	    "  ward session preset $id workspace-write\n"
	    "  ward session log $id\n"
	    "  ward session rm $id\n"
	    "  ward session prune --older-than 30d\n",
	    session_usage);
}

/* --- configuration ---------------------------------------------------------- */

/*
 * ward.yml as a call in a session would see it: its layers (user file,
 * the project file of @workspace — NULL: the configured one —, --config
 * and --access of @po when given). Dies as every subcommand does on an
 * invalid configuration. The caller frees it.
 */
static ward_config *load_config(const char *workspace,
				const struct cli_policy_opts *po, bool json)
{
	struct cli_policy_opts none = CLI_POLICY_OPTS_INIT;
	struct ward_config_options co;
	ward_config *cfg = NULL;
	int err;

	if (!po)
		po = &none;
	if (ward_config_new(&cfg) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	cli_config_options(&co, po);
	co.mode = NULL; /* the configured default, not a flag */
	if (workspace)
		co.workspace = workspace;
	err = ward_config_load(cfg, &co);
	if (err == -ENOMEM)
		die(CLI_EXIT_WARD, "out of memory");
	if (err)
		cli_config_report_errors(cfg, json);
	return cfg;
}

/*
 * ward.yml for a session whose cwd may be gone: its layers for @workspace
 * when that still loads; when @workspace no longer exists, the user file
 * alone (no project file, the root as the workspace). NULL when that is
 * invalid too, or @workspace exists and its configuration is invalid
 * (ward_error_last() says why); *cwd_ok says whether the first one loaded.
 * The caller frees it.
 */
static ward_config *load_config_lenient(const char *workspace, bool *cwd_ok)
{
	struct ward_config_options co = WARD_CONFIG_OPTIONS_INIT;
	ward_config *cfg = NULL;

	*cwd_ok = true;
	co.workspace = workspace;
	if (ward_config_new(&cfg) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (ward_config_load(cfg, &co) == 0)
		return cfg;
	ward_config_free(cfg);
	/* Only a directory that is gone falls back: an invalid project
	 * file of an existing one is an error like everywhere else. */
	if (!workspace || access(workspace, F_OK) == 0)
		return NULL;
	*cwd_ok = false;
	co.workspace = "/";
	co.no_project_file = true;
	if (ward_config_new(&cfg) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (ward_config_load(cfg, &co) == 0)
		return cfg;
	ward_config_free(cfg);
	return NULL;
}

/*
 * ward.yml for session @s (load_config_lenient): dies only when even the
 * user file alone is invalid. The caller frees it.
 */
static ward_config *session_config(const ward_session *s)
{
	ward_config *cfg;
	bool cwd_ok;

	cfg = load_config_lenient(ward_session_cwd(s), &cwd_ok);
	if (!cfg)
		die(CLI_EXIT_WARD, "session %s: %s", ward_session_id(s),
		    ward_error_last());
	return cfg;
}

/* The configured defaults a session falls back to. */
static void config_defaults(struct ward_session_defaults *d,
			    const ward_config *cfg)
{
	d->mode = ward_config_mode(cfg, NULL);
	d->approval = ward_config_approval(cfg, NULL);
	d->root = ward_config_workspace(cfg, NULL);
}

/* --- helpers --------------------------------------------------------------- */

static void set_or_die(json_t *obj, const char *key, json_t *value)
{
	if (!value || json_object_set_new(obj, key, value) != 0)
		die(CLI_EXIT_WARD, "out of memory");
}

static json_t *new_object(void)
{
	json_t *obj = json_object();

	if (!obj)
		die(CLI_EXIT_WARD, "out of memory");
	return obj;
}

/* The state `show` and `list` print, as JSON. */
static json_t *state_json(const ward_session *s, const ward_presets *p,
			  const struct ward_session_defaults *d)
{
	enum ward_knob_source msrc, asrc;
	enum ward_mode mode = ward_session_mode(s, d->mode, &msrc);
	enum ward_approval_policy ap =
	    ward_session_approval(s, d->approval, &asrc);
	const char *cwd = ward_session_cwd(s);
	json_t *obj = new_object();

	set_or_die(obj, "id", json_string(ward_session_id(s)));
	set_or_die(obj, "cwd",
		   ward_json_str(cwd));
	set_or_die(obj, "created", json_string(ward_session_created(s)));
	set_or_die(obj, "ward_version", json_string(ward_session_version(s)));
	set_or_die(obj, "mode", json_string(ward_mode_name(mode)));
	set_or_die(obj, "mode_source",
		   json_string(ward_knob_source_name(msrc)));
	set_or_die(obj, "approval", json_string(ward_approval_policy_name(ap)));
	set_or_die(obj, "approval_source",
		   json_string(ward_knob_source_name(asrc)));
	set_or_die(obj, "preset", json_string(ward_presets_match(p, mode, ap)));
	set_or_die(obj, "events",
		   json_integer((json_int_t)ward_session_event_count(s)));
	set_or_die(obj, "torn_tail", json_boolean(ward_session_torn(s)));
	set_or_die(
	    obj, "path",
	    ward_json_str(ward_session_path(s)));
	return obj;
}

/*
 * Parse the options of `ward session SUB` (argv[0] is SUB) from
 * cli_session_options: --json where it applies (@json NULL: nowhere),
 * --help, and the subcommand's own long options, passed to @on_extra.
 * Returns the index of the first operand.
 */
static int parse_simple(int argc, char **argv, bool *json,
			int (*on_extra)(int, void *), void *ctx)
{
	struct cli_getopt g;
	int opt;

	cli_getopt_init(&g, cli_session_options, false, argv[0], session_usage,
			argc, argv);
	while ((opt = cli_getopt_next(&g, argc, argv)) != -1) {
		if (opt == CLI_OPT_JSON && json) {
			*json = true;
			continue;
		}
		if (opt == 'h') {
			print_help();
			exit(CLI_EXIT_OK);
		}
		if (on_extra && opt >= 500 && on_extra(opt, ctx) == 0)
			continue;
		die_getopt(session_usage, opt, argc, argv);
	}
	return optind;
}

static void need_args(int have, int min, int max, const char *what)
{
	if (have < min)
		die_usage(session_usage, "%s", what);
	if (have > max)
		die_usage(session_usage, "too many arguments");
}

/* --- subcommands ----------------------------------------------------------- */

enum {
	OPT_CWD = 500,
	OPT_MODE,
	OPT_APPROVAL,
	OPT_OLDER_THAN,
};

const struct cli_option cli_session_options[] = {
    {"json", CLI_OPT_JSON, NULL, CLI_VALUE_NONE,
     "new list show presets log prune"},
    {"cwd", OPT_CWD, "DIR", CLI_VALUE_DIR, "new"},
    {"mode", OPT_MODE, "MODE", CLI_VALUE_MODE, "new"},
    {"approval", OPT_APPROVAL, "POLICY", CLI_VALUE_APPROVAL, "new"},
    {"older-than", OPT_OLDER_THAN, "DURATION", CLI_VALUE_TEXT, "prune"},
    CLI_OPTION_HELP,
    CLI_OPTION_END,
};

const struct cli_command cli_session_commands[] = {
    {"new",
     NULL,
     "create a session and print its id",
     NULL,
     NULL,
     {CLI_VALUE_NONE}},
    {"list", NULL, "every session", NULL, NULL, {CLI_VALUE_NONE}},
    {"show",
     NULL,
     "a session's mode, approval policy, preset and cwd",
     NULL,
     NULL,
     {CLI_VALUE_SESSION}},
    {"mode",
     NULL,
     "print or set a session's sandbox mode",
     NULL,
     NULL,
     {CLI_VALUE_SESSION, CLI_VALUE_MODE}},
    {"approval",
     NULL,
     "print or set a session's approval policy",
     NULL,
     NULL,
     {CLI_VALUE_SESSION, CLI_VALUE_APPROVAL}},
    {"network",
     NULL,
     "print or set a session's network (off or on)",
     NULL,
     NULL,
     {CLI_VALUE_SESSION, CLI_VALUE_NONE}},
    {"preset",
     NULL,
     "print or switch a session's permission preset",
     NULL,
     NULL,
     {CLI_VALUE_SESSION, CLI_VALUE_PRESET}},
    {"presets", NULL, "the preset table", NULL, NULL, {CLI_VALUE_NONE}},
    {"log", NULL, "a session's log", NULL, NULL, {CLI_VALUE_SESSION}},
    {"rm", NULL, "remove sessions", NULL, NULL, {CLI_VALUE_SESSION}},
    {"prune",
     NULL,
     "remove the sessions untouched for longer than a duration",
     NULL,
     NULL,
     {CLI_VALUE_NONE}},
    {NULL, NULL, NULL, NULL, NULL, {CLI_VALUE_NONE}},
};

struct new_opts {
	const char *cwd;
	const char *mode;
	const char *approval;
};

static int new_extra(int opt, void *ctx)
{
	struct new_opts *o = ctx;

	switch (opt) {
	case OPT_CWD:
		o->cwd = optarg;
		return 0;
	case OPT_MODE:
		o->mode = optarg;
		return 0;
	case OPT_APPROVAL:
		o->approval = optarg;
		return 0;
	}
	return -1;
}

static int do_new(int argc, char **argv)
{
	struct ward_session_create_options co =
	    WARD_SESSION_CREATE_OPTIONS_INIT;
	struct ward_session_defaults d;
	struct new_opts o = {".", NULL, NULL};
	struct stat st;
	enum ward_approval_policy ap = WARD_APPROVAL_ASK;
	enum ward_mode mode = WARD_MODE_DEFAULT;
	ward_session *s = NULL;
	ward_config *cfg;
	bool json = false;
	json_t *obj;
	int first, err;

	first = parse_simple(argc, argv, &json, new_extra, &o);
	need_args(argc - first, 0, 0, "");
	if (o.mode && ward_mode_parse(&mode, o.mode) != 0)
		die_usage(session_usage,
			  "invalid mode '%s' (valid: read-only, "
			  "workspace-write, danger-full-access)",
			  o.mode);
	if (o.approval && ward_approval_policy_parse(&ap, o.approval) != 0)
		die_usage(session_usage,
			  "invalid approval policy '%s' (valid: ask, never)",
			  o.approval);
	if (!*o.cwd)
		die_usage(session_usage, "cwd '' is not a directory");
	if (stat(o.cwd, &st) != 0 || !S_ISDIR(st.st_mode))
		die_usage(session_usage, "cwd '%s' is not a directory", o.cwd);
	/* The configuration first: a start that fails leaves no session. */
	cfg = load_config(o.cwd, NULL, json);
	config_defaults(&d, cfg);
	/* The mode and approval policy in force now are recorded with the
	 * header: a later change of ward.yml's default does not move the
	 * session. */
	co.cwd = o.cwd;
	co.set_mode = true;
	co.mode = o.mode ? mode : d.mode;
	co.set_approval = true;
	co.approval = o.approval ? ap : d.approval;
	err = ward_session_create_with(&s, &co);
	if (err == -ENOENT || err == -ENOTDIR || err == WARD_EINVAL)
		die_usage(session_usage, "%s", ward_error_last());
	if (err)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	if (json) {
		obj = new_object();
		set_or_die(obj, "id", json_string(ward_session_id(s)));
		set_or_die(obj, "path",
			   ward_json_str(ward_session_path(s)));
		cli_json_print(obj);
	} else {
		printf("%s\n", ward_session_id(s));
	}
	ward_config_free(cfg);
	ward_session_free(s);
	return CLI_EXIT_OK;
}

/* Oldest first (creation times are RFC 3339 UTC: they sort as text),
 * then by id. */
static int by_created(const void *a, const void *b)
{
	const ward_session *x = *(ward_session *const *)a;
	const ward_session *y = *(ward_session *const *)b;
	int c = strcmp(ward_session_created(x), ward_session_created(y));

	return c ? c : strcmp(ward_session_id(x), ward_session_id(y));
}

/*
 * Every session of the store, opened, oldest first; *n gets how many.
 * One that cannot be read is named on stderr and *status set to 125.
 */
static ward_session **open_all(size_t *n, int *status)
{
	ward_session **v;
	char **ids = NULL;
	size_t k = 0;

	if (ward_session_list(&ids, NULL) != 0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	v = calloc(ward_strv_len(ids) + 1, sizeof(*v));
	if (!v)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; ids[i]; i++) {
		if (ward_session_open(&v[k], NULL, ids[i]) == 0) {
			k++;
			continue;
		}
		fflush(stdout);
		fprintf(stderr, "%s: session %s: %s\n", cli_name, ids[i],
			ward_error_last());
		*status = CLI_EXIT_WARD;
	}
	ward_strv_free(ids);
	qsort(v, k, sizeof(*v), by_created);
	*n = k;
	return v;
}

static int do_list(int argc, char **argv)
{
	struct ward_session_defaults d;
	bool json = false;
	ward_session **all;
	json_t *arr = NULL, *st;
	int first, status = CLI_EXIT_OK;
	size_t n;

	first = parse_simple(argc, argv, &json, NULL, NULL);
	need_args(argc - first, 0, 0, "");
	all = open_all(&n, &status);
	if (json) {
		arr = json_array();
		if (!arr)
			die(CLI_EXIT_WARD, "out of memory");
	} else if (n) {
		printf("%-16s  %-24s  %-18s  %-8s  %-18s  %s\n", "ID",
		       "CREATED", "MODE", "APPROVAL", "PRESET", "CWD");
	}
	for (size_t i = 0; i < n; i++) {
		ward_session *s = all[i];
		ward_config *cfg;
		const char *cwd;
		bool cwd_ok;

		/* A session whose directory was deleted is listed all the
		 * same (with the user file's defaults), so it can be seen
		 * and removed. */
		cwd = ward_session_cwd(s);
		cfg = load_config_lenient(cwd, &cwd_ok);
		if (!cfg) {
			fflush(stdout);
			fprintf(stderr, "%s: session %s: %s\n", cli_name,
				ward_session_id(s), ward_error_last());
			status = CLI_EXIT_WARD;
			ward_session_free(s);
			continue;
		}
		config_defaults(&d, cfg);
		st = state_json(s, ward_config_presets(cfg), &d);
		set_or_die(st, "cwd_exists",
			   json_boolean(!cwd || access(cwd, F_OK) == 0));
		if (json) {
			if (json_array_append_new(arr, st) != 0)
				die(CLI_EXIT_WARD, "out of memory");
		} else {
			printf(
			    "%-16s  %-24s  %-18s  %-8s  %-18s  %s%s\n",
			    ward_session_id(s), ward_session_created(s),
			    json_string_value(json_object_get(st, "mode")),
			    json_string_value(json_object_get(st, "approval")),
			    json_string_value(json_object_get(st, "preset")),
			    cwd ? cwd : "-",
			    json_is_true(json_object_get(st, "cwd_exists"))
				? ""
				: " (missing)");
			json_decref(st);
		}
		ward_config_free(cfg);
		ward_session_free(s);
	}
	if (json)
		cli_json_print(arr);
	free(all);
	return status;
}

static int do_show(int argc, char **argv)
{
	struct ward_session_defaults d;
	ward_session *s;
	ward_config *cfg;
	bool json = false;
	json_t *st;
	int first;

	first = parse_simple(argc, argv, &json, NULL, NULL);
	need_args(argc - first, 1, 1, "show needs a session id");
	s = cli_session_open(argv[first], session_usage);
	cfg = session_config(s);
	config_defaults(&d, cfg);
	st = state_json(s, ward_config_presets(cfg), &d);
	if (json) {
		cli_json_print(st);
	} else {
		printf(
		    "id:        %s\n"
		    "cwd:       %s\n"
		    "created:   %s\n"
		    "mode:      %s (%s)\n"
		    "approval:  %s (%s)\n"
		    "preset:    %s\n"
		    "events:    %zu\n"
		    "log:       %s\n",
		    ward_session_id(s),
		    ward_session_cwd(s) ? ward_session_cwd(s)
					: "- (the configured workspace)",
		    ward_session_created(s),
		    json_string_value(json_object_get(st, "mode")),
		    json_string_value(json_object_get(st, "mode_source")),
		    json_string_value(json_object_get(st, "approval")),
		    json_string_value(json_object_get(st, "approval_source")),
		    json_string_value(json_object_get(st, "preset")),
		    ward_session_event_count(s), ward_session_path(s));
		if (ward_session_torn(s))
			printf("note:      a torn last line (an interrupted "
			       "write) is ignored; the next write repairs "
			       "it\n");
		json_decref(st);
	}
	ward_config_free(cfg);
	ward_session_free(s);
	return CLI_EXIT_OK;
}

/* `mode ID [MODE]` and `approval ID [POLICY]`. */

/* Die with libward's last error, the session and configuration freed
 * first (nothing is left for the leak checker of the sanitizer lane). */
static noreturn void die_freeing(ward_session *s, ward_config *cfg)
{
	char msg[2048];

	snprintf(msg, sizeof(msg), "%s", ward_error_last());
	ward_config_free(cfg);
	ward_session_free(s);
	die(CLI_EXIT_WARD, "%s", msg);
}
static int do_knob(int argc, char **argv, bool mode_knob)
{
	struct ward_session_defaults d;
	enum ward_approval_policy ap = WARD_APPROVAL_ASK;
	enum ward_mode mode = WARD_MODE_DEFAULT;
	ward_session *s;
	ward_config *cfg;
	int first, err = 0;

	first = parse_simple(argc, argv, NULL, NULL, NULL);
	need_args(argc - first, 1, 2,
		  mode_knob ? "mode needs a session id"
			    : "approval needs a session id");
	if (argc - first == 2) {
		if (mode_knob && ward_mode_parse(&mode, argv[first + 1]) != 0)
			die_usage(session_usage,
				  "invalid mode '%s' (valid: read-only, "
				  "workspace-write, danger-full-access)",
				  argv[first + 1]);
		if (!mode_knob &&
		    ward_approval_policy_parse(&ap, argv[first + 1]) != 0)
			die_usage(session_usage,
				  "invalid approval policy '%s' (valid: ask, "
				  "never)",
				  argv[first + 1]);
	}
	s = cli_session_open(argv[first], session_usage);
	cfg = session_config(s);
	config_defaults(&d, cfg);
	if (argc - first == 2)
		err = mode_knob ? ward_session_set_mode(NULL, s, mode, &d)
				: ward_session_set_approval(NULL, s, ap, &d);
	if (err)
		die_freeing(s, cfg);
	if (mode_knob)
		printf("%s\n",
		       ward_mode_name(ward_session_mode(s, d.mode, NULL)));
	else
		printf("%s\n", ward_approval_policy_name(
				   ward_session_approval(s, d.approval, NULL)));
	ward_config_free(cfg);
	ward_session_free(s);
	return CLI_EXIT_OK;
}

/*
 * ward session network ID [off|on]: print or set the session's network
 * knob. The default it folds against is the configuration's network for
 * the session's mode (an allowlist included, which has no event).
 */
static int do_network(int argc, char **argv)
{
	struct ward_session_defaults d;
	enum ward_network net = WARD_NETWORK_OFF, dflt;
	ward_session *s;
	ward_config *cfg;
	int first, err = 0;

	first = parse_simple(argc, argv, NULL, NULL, NULL);
	need_args(argc - first, 1, 2, "network needs a session id");
	if (argc - first == 2 && ward_network_parse(&net, argv[first + 1]))
		die_usage(session_usage,
			  "invalid network '%s' (valid: off, on; an allowlist "
			  "comes from ward.yml's allow_domains)",
			  argv[first + 1]);
	s = cli_session_open(argv[first], session_usage);
	cfg = session_config(s);
	config_defaults(&d, cfg);
	dflt = ward_config_network(cfg, ward_session_mode(s, d.mode, NULL),
				   NULL, NULL);
	if (argc - first == 2)
		err = ward_session_set_network(NULL, s, net, dflt);
	if (err)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	printf("%s\n", ward_network_name(ward_session_network(s, dflt, NULL)));
	ward_config_free(cfg);
	ward_session_free(s);
	return CLI_EXIT_OK;
}

static int do_preset(int argc, char **argv)
{
	struct ward_session_defaults d;
	const ward_presets *p;
	ward_session *s;
	ward_config *cfg;
	int first;

	first = parse_simple(argc, argv, NULL, NULL, NULL);
	need_args(argc - first, 1, 2, "preset needs a session id");
	s = cli_session_open(argv[first], session_usage);
	cfg = session_config(s);
	config_defaults(&d, cfg);
	p = ward_config_presets(cfg);
	if (argc - first == 2) {
		/* The texts are libward's: `ward acp` says the same. */
		if (ward_presets_find(NULL, NULL, p, argv[first + 1]) != 0)
			die_usage(session_usage, "%s", ward_error_last());
		if (ward_presets_apply(NULL, s, p, argv[first + 1], &d) != 0)
			die_freeing(s, cfg);
	}
	printf("%s\n", ward_presets_current(p, s, &d));
	ward_config_free(cfg);
	ward_session_free(s);
	return CLI_EXIT_OK;
}

static int do_presets(int argc, char **argv)
{
	enum ward_approval_policy ap;
	const ward_presets *p;
	enum ward_mode mode;
	ward_config *cfg;
	const char *name;
	bool json = false;
	json_t *arr, *o;
	int first;

	first = parse_simple(argc, argv, &json, NULL, NULL);
	need_args(argc - first, 0, 0, "");
	cfg = load_config(NULL, NULL, json);
	p = ward_config_presets(cfg);
	arr = json_array();
	if (!arr)
		die(CLI_EXIT_WARD, "out of memory");
	for (size_t i = 0; ward_presets_get(&name, &mode, &ap, p, i) == 0;
	     i++) {
		if (!json) {
			printf("%-20s %-20s %s\n", name, ward_mode_name(mode),
			       ward_approval_policy_name(ap));
			continue;
		}
		o = new_object();
		set_or_die(o, "name", json_string(name));
		set_or_die(o, "mode", json_string(ward_mode_name(mode)));
		set_or_die(o, "approval",
			   json_string(ward_approval_policy_name(ap)));
		if (json_array_append_new(arr, o) != 0)
			die(CLI_EXIT_WARD, "out of memory");
	}
	if (json)
		cli_json_print(arr);
	else
		json_decref(arr);
	ward_config_free(cfg);
	return CLI_EXIT_OK;
}

/* --- rm, prune ----------------------------------------------------------- */

static int do_rm(int argc, char **argv)
{
	int first, status = CLI_EXIT_OK, err;

	first = parse_simple(argc, argv, NULL, NULL, NULL);
	need_args(argc - first, 1, INT32_MAX, "rm needs a session id");
	for (int i = first; i < argc; i++)
		if (!ward_session_id_valid(argv[i]))
			die_usage(session_usage,
				  "invalid session id '%s' (letters, digits "
				  "and '-')",
				  argv[i]);
	for (int i = first; i < argc; i++) {
		char *id = NULL;

		err = ward_session_find(&id, NULL, argv[i]);
		if (err == WARD_EINVAL)
			die_usage(session_usage, "%s", ward_error_last());
		if (!err)
			err = ward_session_remove(NULL, id);
		free(id);
		if (err == 0)
			continue;
		fflush(stdout);
		fprintf(stderr, "%s: %s\n", cli_name, ward_error_last());
		/* An unknown session is a usage error, as for the other
		 * subcommands; the rest are still removed. */
		if (status == CLI_EXIT_OK || err != -ENOENT)
			status =
			    err == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_WARD;
	}
	return status;
}

/*
 * A duration: a positive whole number followed by s, m, h, d or w
 * (seconds without a suffix). Dies with exit 2 otherwise.
 */
static unsigned long long parse_duration(const char *arg)
{
	static const struct cli_unit units[] = {
	    {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 7 * 86400},
	    {0, 0},
	};
	unsigned long long n;

	if (!cli_parse_scaled(&n, arg, units))
		die_usage(session_usage,
			  "invalid duration '%s' (expected a number with s, m, "
			  "h, d or w, e.g. 30d)",
			  arg);
	return n;
}

static int prune_extra(int opt, void *ctx)
{
	const char **older = ctx;

	if (opt != OPT_OLDER_THAN)
		return -1;
	*older = optarg;
	return 0;
}

static int do_prune(int argc, char **argv)
{
	const char *older = NULL;
	char **removed = NULL, **busy = NULL;
	bool json = false;
	json_t *obj, *arr;
	int first;

	first = parse_simple(argc, argv, &json, prune_extra, &older);
	need_args(argc - first, 0, 0, "");
	if (!older)
		die_usage(session_usage,
			  "prune needs --older-than DURATION (e.g. 30d)");
	if (ward_session_prune(&removed, &busy, NULL, parse_duration(older)) !=
	    0)
		die(CLI_EXIT_WARD, "%s", ward_error_last());
	for (size_t i = 0; busy[i]; i++)
		fprintf(stderr,
			"%s: session %s was left alone: another process holds "
			"its log's lock\n",
			cli_name, busy[i]);
	if (json) {
		obj = new_object();
		arr = json_array();
		for (size_t i = 0; arr && removed[i]; i++)
			json_array_append_new(arr, json_string(removed[i]));
		set_or_die(obj, "removed", arr);
		arr = json_array();
		for (size_t i = 0; arr && busy[i]; i++)
			json_array_append_new(arr, json_string(busy[i]));
		set_or_die(obj, "busy", arr);
		cli_json_print(obj);
	} else {
		for (size_t i = 0; removed[i]; i++)
			printf("removed %s\n", removed[i]);
	}
	ward_strv_free(removed);
	ward_strv_free(busy);
	return CLI_EXIT_OK;
}

/* --- log --------------------------------------------------------------- */

static const char *jstr(json_t *obj, const char *key, const char *dflt)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : dflt;
}

/* Print @s with control characters escaped (a log may hold anything). */
static void put_safe(FILE *f, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

static void put_argv(FILE *f, json_t *arr)
{
	size_t i;
	json_t *v;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		die(CLI_EXIT_WARD, "out of memory");
	json_array_foreach(arr, i, v)
	{
		if (i)
			fputc(' ', m);
		cli_shell_quote(m,
				json_is_string(v) ? json_string_value(v) : "?");
	}
	fclose(m);
	put_safe(f, buf);
	free(buf);
}

/* One event, readably. */
static void print_event(const char *line)
{
	json_t *ev = json_loads(line, 0, NULL);
	const char *type, *call;
	json_t *v;

	if (!ev) {
		put_safe(stdout, line);
		putchar('\n');
		return;
	}
	type = jstr(ev, "type", "?");
	call = jstr(ev, "call", "?");
	printf("%-24s  ", jstr(ev, "time", ""));
	if (!strcmp(type, "sandbox/mode")) {
		printf("sandbox mode set to %s", jstr(ev, "mode", "?"));
	} else if (!strcmp(type, "approval/policy")) {
		printf("approval policy set to %s", jstr(ev, "policy", "?"));
	} else if (!strcmp(type, "sandbox/network")) {
		printf("network set to %s", jstr(ev, "network", "?"));
	} else if (!strcmp(type, "network/connection")) {
		const char *reason = jstr(ev, "reason", NULL);

		printf("call %s: network %s ", jstr(ev, "call_id", "?"),
		       jstr(ev, "verdict", "?"));
		put_safe(stdout, jstr(ev, "host", "?"));
		printf(
		    ":%lld (%s, %lld bytes sent, %lld received)",
		    (long long)json_integer_value(json_object_get(ev, "port")),
		    jstr(ev, "protocol", "?"),
		    (long long)json_integer_value(
			json_object_get(ev, "bytes_sent")),
		    (long long)json_integer_value(
			json_object_get(ev, "bytes_received")));
		if (reason) {
			printf(": ");
			put_safe(stdout, reason);
		}
	} else if (!strcmp(type, "call/start")) {
		printf("call %s: %s", call, jstr(ev, "tool", "?"));
		if (json_is_string(json_object_get(ev, "operation")))
			printf(" %s", jstr(ev, "operation", ""));
		if ((v = json_object_get(ev, "argv")) && json_is_array(v)) {
			putchar(' ');
			put_argv(stdout, v);
		}
		if ((v = json_object_get(ev, "paths")) && json_is_array(v)) {
			putchar(' ');
			put_argv(stdout, v);
		}
		printf(" (in ");
		put_safe(stdout, jstr(ev, "cwd", "?"));
		printf(", %s from %s)", jstr(ev, "mode", "?"),
		       jstr(ev, "mode_source", "?"));
	} else if (!strcmp(type, "escalation/request")) {
		printf("call %s: asks to run under %s (from %s): \"", call,
		       jstr(ev, "mode", "?"), jstr(ev, "from", "?"));
		put_safe(stdout, jstr(ev, "justification", ""));
		putchar('"');
	} else if (!strcmp(type, "approval/asked")) {
		printf("call %s: approval of %s requested", call,
		       jstr(ev, "mode", "?"));
	} else if (!strcmp(type, "approval/decision")) {
		printf("call %s: approval answer: %s", call,
		       jstr(ev, "outcome", "?"));
	} else if (!strcmp(type, "escalation/verdict")) {
		if (!strcmp(jstr(ev, "verdict", ""), "granted"))
			printf("call %s: escalation to %s granted for this "
			       "call only",
			       call, jstr(ev, "mode", "?"));
		else
			printf("call %s: escalation refused (%s): %s", call,
			       jstr(ev, "verdict", "?"), jstr(ev, "text", ""));
	} else if (!strcmp(type, "call/result")) {
		if (json_is_true(json_object_get(ev, "ran"))) {
			v = json_object_get(ev, "exit_code");
			printf("call %s: ", call);
			if (json_is_integer(v))
				printf("exit %lld",
				       (long long)json_integer_value(v));
			else if (json_is_integer(json_object_get(ev, "signal")))
				printf("killed by signal %lld",
				       (long long)json_integer_value(
					   json_object_get(ev, "signal")));
			else
				printf("done");
			if (jstr(ev, "error", NULL))
				printf(" (%s)", jstr(ev, "error", ""));
			printf(" under %s (runner %s, enforcement %s)%s%s",
			       jstr(ev, "mode", "?"), jstr(ev, "runner", "?"),
			       jstr(ev, "enforcement", "?"),
			       json_is_true(json_object_get(ev, "timed_out"))
				   ? ", timed out"
				   : "",
			       json_is_true(json_object_get(ev, "denied"))
				   ? ", DENIED"
				   : "");
		} else {
			printf("call %s: not run (%s)", call,
			       jstr(ev, "error", "?"));
			if (jstr(ev, "text", NULL)) {
				printf(": ");
				put_safe(stdout, jstr(ev, "text", ""));
			}
		}
	} else if (!strcmp(type, "log/repaired")) {
		v = json_object_get(ev, "discarded_bytes");
		printf("repaired the log: dropped a torn last line of %lld "
		       "bytes",
		       (long long)json_integer_value(v));
	} else {
		char *rest;

		json_object_del(ev, "time");
		rest = json_dumps(ev, JSON_COMPACT);
		printf("%s ", type);
		put_safe(stdout, rest ? rest : "");
		free(rest);
	}
	putchar('\n');
	json_decref(ev);
}

static int do_log(int argc, char **argv)
{
	ward_session *s;
	bool json = false;
	json_t *hdr;
	const char *cwd;
	int first;

	first = parse_simple(argc, argv, &json, NULL, NULL);
	need_args(argc - first, 1, 1, "log needs a session id");
	s = cli_session_open(argv[first], session_usage);
	cwd = ward_session_cwd(s);
	if (json) {
		hdr = new_object();
		set_or_die(hdr, "type", json_string("session/header"));
		set_or_die(hdr, "id", json_string(ward_session_id(s)));
		set_or_die(hdr, "cwd",
			   ward_json_str(cwd));
		set_or_die(hdr, "created",
			   json_string(ward_session_created(s)));
		set_or_die(hdr, "ward_version",
			   json_string(ward_session_version(s)));
		cli_json_print(hdr);
		for (size_t i = 0; i < ward_session_event_count(s); i++)
			printf("%s\n", ward_session_event(s, i));
	} else {
		printf("%-24s  session %s created in ", ward_session_created(s),
		       ward_session_id(s));
		put_safe(stdout, cwd ? cwd : "(no cwd)");
		printf(" (ward %s)\n", ward_session_version(s));
		for (size_t i = 0; i < ward_session_event_count(s); i++)
			print_event(ward_session_event(s, i));
	}
	ward_session_free(s);
	return CLI_EXIT_OK;
}

static int do_mode(int argc, char **argv)
{
	return do_knob(argc, argv, true);
}

static int do_approval(int argc, char **argv)
{
	return do_knob(argc, argv, false);
}

/* What runs each subcommand, in the order of cli_session_commands[]. */
static int (*const handlers[])(int, char **) = {
    do_new,    do_list,	   do_show, do_mode, do_approval, do_network,
    do_preset, do_presets, do_log,  do_rm,   do_prune,
};

_Static_assert(sizeof(handlers) / sizeof(handlers[0]) ==
		   sizeof(cli_session_commands) /
			   sizeof(cli_session_commands[0]) -
		       1,
	       "one handler per subcommand of cli_session_commands");

int cmd_session(int argc, char **argv)
{
	const char *sub;

	if (argc < 2)
		die_usage(session_usage, "no subcommand given");
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		print_help();
		return CLI_EXIT_OK;
	}
	return handlers[cli_subcommand(cli_session_commands, "session",
				       session_usage, sub)](argc - 1, argv + 1);
}
