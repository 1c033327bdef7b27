/*
 * Unit tests for config.c, config_parse.c and config_schema.c: valid
 * configurations, every error kind with its "FILE:LINE: KEY: message",
 * layer precedence and origins, the project file's narrowing-only rule
 * (every widening key refused), block text vs list access, file reading
 * (missing, FIFO, directory, too big) and hostile input (huge files, deep
 * nesting, alias bombs, NUL bytes, 10,000 entries).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "ward/config.h"
#include "ward/ward.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- fixtures ----------------------------------------------------------- */

/* mkdtemp names under /var/tmp: short, so composed paths fit. */
#define DIR_MAX 256
static char ws_dir[DIR_MAX];	/* a real workspace directory */
static char ws_real[PATH_MAX];	/* its realpath */
static char other_dir[DIR_MAX]; /* another directory */
static char other_real[PATH_MAX];

static const char *const test_vars[][2] = {
    {"CACHE", "/home/u/.cache"},
    {"EMPTY", ""},
};

static const char *test_getenv(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < N(test_vars); i++)
		if (strcmp(test_vars[i][0], name) == 0)
			return test_vars[i][1];
	return NULL;
}

static const struct ward_rules_env ENV = {
    .workspace = NULL,
    .home = "/home/u",
    .getenv = test_getenv,
};

static int setup_dirs(void **state)
{
	(void)state;
	snprintf(ws_dir, sizeof(ws_dir), "/var/tmp/ward-test-config.XXXXXX");
	snprintf(other_dir, sizeof(other_dir),
		 "/var/tmp/ward-test-config-o.XXXXXX");
	if (!mkdtemp(ws_dir) || !mkdtemp(other_dir))
		return -1;
	if (!realpath(ws_dir, ws_real) || !realpath(other_dir, other_real) ||
	    strlen(ws_real) >= DIR_MAX || strlen(other_real) >= DIR_MAX)
		return -1;
	return 0;
}

static void rm_rf(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		print_message("cannot remove %s\n", dir);
}

static int teardown_dirs(void **state)
{
	(void)state;
	rm_rf(ws_dir);
	rm_rf(other_dir);
	return 0;
}

/* Flags for load3(): the flag layer plus the fixed environment. */
static struct ward_config_options flags(void)
{
	struct ward_config_options o = WARD_CONFIG_OPTIONS_INIT;

	o.workspace = ws_dir;
	o.env = &ENV;
	return o;
}

/*
 * Parse up to three layers from memory ("user.yml", "project.yml",
 * "explicit.yml"; NULL: absent) and resolve with @opts (NULL: flags()).
 * *err gets the first failing return (0 when all succeeded).
 */
static ward_config *load3(int *err, const char *user, const char *project,
			  const char *expl,
			  const struct ward_config_options *opts)
{
	struct ward_config_options dflt = flags();
	ward_config *cfg = NULL;
	int e = 0, r;

	assert_int_equal(ward_config_new(&cfg), 0);
	if (user) {
		r = ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER,
					   "user.yml", user, strlen(user));
		e = e ? e : r;
	}
	if (project) {
		r = ward_config_add_string(cfg, WARD_CONFIG_LAYER_PROJECT,
					   "project.yml", project,
					   strlen(project));
		e = e ? e : r;
	}
	if (expl) {
		r = ward_config_add_string(cfg, WARD_CONFIG_LAYER_EXPLICIT,
					   "explicit.yml", expl, strlen(expl));
		e = e ? e : r;
	}
	r = ward_config_resolve(cfg, opts ? opts : &dflt);
	*err = e ? e : r;
	return cfg;
}

/* Fail with every error listed. */
static void expect_valid(ward_config *cfg, int err)
{
	if (err == 0 && ward_config_error_count(cfg) == 0)
		return;
	for (size_t i = 0; i < ward_config_error_count(cfg); i++)
		print_message("error: %s\n", ward_config_error(cfg, i, NULL));
	fail_msg("expected a valid configuration, got %d (%s)", err,
		 ward_error_last());
}

/* True when some error starts with @prefix and contains @needle. */
static bool has_error(const ward_config *cfg, const char *prefix,
		      const char *needle)
{
	for (size_t i = 0; i < ward_config_error_count(cfg); i++) {
		const char *e = ward_config_error(cfg, i, NULL);

		if (strncmp(e, prefix, strlen(prefix)) == 0 &&
		    (!needle || strstr(e, needle)))
			return true;
	}
	return false;
}

/* An ignored project value's warning starting with @prefix, with @needle. */
static bool has_ignored(const ward_config *cfg, const char *prefix,
			const char *needle)
{
	for (size_t i = 0; i < ward_config_ignored_count(cfg); i++) {
		const char *e = ward_config_ignored(cfg, i);

		if (strncmp(e, prefix, strlen(prefix)) == 0 &&
		    strstr(e, ": ignored: ") && (!needle || strstr(e, needle)))
			return true;
	}
	return false;
}

static void expect_error(ward_config *cfg, int err, const char *prefix,
			 const char *needle)
{
	if (err == WARD_EINVAL && has_error(cfg, prefix, needle))
		return;
	for (size_t i = 0; i < ward_config_error_count(cfg); i++)
		print_message("error: %s\n", ward_config_error(cfg, i, NULL));
	fail_msg("expected an error \"%s…%s\", got %d", prefix,
		 needle ? needle : "", err);
}

/* --- valid configurations ----------------------------------------------- */

static void test_empty_and_defaults(void **state)
{
	static const char *const empties[] = {
	    "", "# only a comment\n", "---\n", "---\n...\n", "~\n", "\n\n",
	};
	(void)state;

	for (size_t i = 0; i < N(empties); i++) {
		struct ward_config_origin o;
		const enum ward_runner *chain;
		ward_config *cfg;
		int err;

		cfg = load3(&err, empties[i], empties[i], empties[i], NULL);
		expect_valid(cfg, err);
		assert_int_equal(ward_config_mode(cfg, &o),
				 WARD_MODE_READ_ONLY);
		assert_int_equal(o.layer, WARD_CONFIG_LAYER_DEFAULT);
		assert_null(o.file);
		assert_string_equal(ward_config_workspace(cfg, &o), ws_real);
		assert_int_equal(o.layer, WARD_CONFIG_LAYER_FLAGS);
		assert_int_equal(ward_config_runners(&chain, cfg, &o), 0);
		assert_null(chain);
		assert_null(ward_config_runner_command(cfg, NULL));
		assert_null(
		    ward_config_runner_failure_signatures(cfg, NULL)[0]);
		assert_int_equal(ward_config_probe_timeout_ms(cfg, NULL), 0);
		assert_int_equal(ward_config_approval(cfg, NULL),
				 WARD_APPROVAL_ASK);
		assert_true(ward_config_protect_git(cfg, NULL));
		assert_int_equal(ward_config_preset_count(cfg), 0);
		assert_int_equal(ward_presets_count(ward_config_presets(cfg)),
				 3);
		assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 0);
		assert_int_equal(ward_config_warning_count(cfg), 0);
		assert_int_equal(ward_config_check_confine(cfg), 0);
		ward_config_free(cfg);
	}
}

static void test_full_user_file(void **state)
{
	char text[2048];
	struct ward_config_origin o;
	struct ward_config_preset p;
	struct ward_rule_info in;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	const enum ward_runner *chain;
	ward_config *cfg;
	char *const *sigs;
	int err;
	(void)state;

	snprintf(text, sizeof(text),
		 "# ward.yml\n"					  /* 1 */
		 "mode: workspace-write\n"			  /* 2 */
		 "workspace: %s\n"				  /* 3 */
		 "runners: [landlock, bwrap]\n"			  /* 4 */
		 "runner_command: my-runner\n"			  /* 5 */
		 "runner_failure_signatures:\n"			  /* 6 */
		 "  - \"my-runner: fatal\"\n"			  /* 7 */
		 "  - 'cannot confine'\n"			  /* 8 */
		 "probe_timeout_ms: 750\n"			  /* 9 */
		 "access:\n"					  /* 10 */
		 "  - rw {{ env.CACHE }}\n"			  /* 11 */
		 "  - \"-- ~/.ssh\"\n"				  /* 12 */
		 "approval: never\n"				  /* 13 */
		 "presets:\n"					  /* 14 */
		 "  locked: {mode: read-only, approval: never}\n" /* 15 */
		 "  builder:\n"					  /* 16 */
		 "    mode: workspace-write\n"			  /* 17 */
		 "    approval: never\n"			  /* 18 */
		 "protect_git: false\n",			  /* 19 */
		 other_dir);
	{
		struct ward_config_options opts = flags();

		opts.workspace = NULL;
		cfg = load3(&err, text, NULL, NULL, &opts);
	}
	expect_valid(cfg, err);

	assert_int_equal(ward_config_mode(cfg, &o), WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(o.layer, WARD_CONFIG_LAYER_USER);
	assert_string_equal(o.file, "user.yml");
	assert_int_equal(o.line, 2);
	assert_string_equal(ward_config_workspace(cfg, &o), other_real);
	assert_int_equal(o.line, 3);
	assert_int_equal(ward_config_runners(&chain, cfg, &o), 2);
	assert_int_equal(chain[0], WARD_RUNNER_LANDLOCK);
	assert_int_equal(chain[1], WARD_RUNNER_BWRAP);
	assert_int_equal(o.line, 4);
	assert_string_equal(ward_config_runner_command(cfg, &o), "my-runner");
	assert_int_equal(o.line, 5);
	sigs = ward_config_runner_failure_signatures(cfg, &o);
	assert_string_equal(sigs[0], "my-runner: fatal");
	assert_string_equal(sigs[1], "cannot confine");
	assert_null(sigs[2]);
	assert_int_equal(o.line, 6);
	assert_int_equal(ward_config_probe_timeout_ms(cfg, &o), 750);
	assert_int_equal(o.line, 9);
	assert_int_equal(ward_config_approval(cfg, &o), WARD_APPROVAL_NEVER);
	assert_int_equal(o.line, 13);
	assert_false(ward_config_protect_git(cfg, &o));
	assert_int_equal(o.line, 19);

	assert_int_equal(ward_config_preset_count(cfg), 2);
	assert_int_equal(ward_config_preset(&p, cfg, 0), 0);
	assert_string_equal(p.name, "locked");
	assert_int_equal(p.mode, WARD_MODE_READ_ONLY);
	assert_int_equal(p.approval, WARD_APPROVAL_NEVER);
	assert_int_equal(p.origin.line, 15);
	assert_int_equal(ward_config_preset(&p, cfg, 1), 0);
	assert_string_equal(p.name, "builder");
	assert_int_equal(p.origin.line, 16);
	assert_int_equal(ward_config_preset(&p, cfg, 2), -ERANGE);
	assert_int_equal(ward_presets_count(ward_config_presets(cfg)), 5);
	{
		enum ward_mode m;
		enum ward_approval_policy a;

		assert_int_equal(ward_presets_find(&m, &a,
						   ward_config_presets(cfg),
						   "builder"),
				 0);
		assert_int_equal(m, WARD_MODE_WORKSPACE_WRITE);
		assert_int_equal(a, WARD_APPROVAL_NEVER);
	}

	assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 2);
	assert_int_equal(ward_rules_get(&in, ward_config_rules(cfg), 0), 0);
	assert_int_equal(in.access, WARD_ACCESS_RW);
	assert_string_equal(in.pattern, "/home/u/.cache");
	assert_string_equal(in.origin.file, "user.yml");
	assert_int_equal(in.origin.line, 11);
	assert_int_equal(ward_rules_get(&in, ward_config_rules(cfg), 1), 0);
	assert_int_equal(in.access, WARD_ACCESS_NONE);
	assert_string_equal(in.pattern, "/home/u/.ssh");
	assert_int_equal(in.origin.line, 12);

	ward_config_provider_options(&po, cfg);
	assert_int_equal(po.chain_len, 2);
	assert_ptr_equal(po.chain, chain);
	assert_string_equal(po.runner_command, "my-runner");
	assert_int_equal(po.probe_timeout_ms, 750);

	/* Rules + runner_command: refused at confine, naming both. */
	assert_int_equal(ward_config_check_confine(cfg), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "user.yml:11"));
	assert_non_null(strstr(ward_error_last(), "user.yml:5"));
	assert_non_null(strstr(ward_error_last(), "runner_command"));
	/* Warnings: runners ignored with runner_command; protect_git off. */
	assert_int_equal(ward_config_warning_count(cfg), 2);
	assert_non_null(strstr(ward_config_warning(cfg, 0), "runners"));
	assert_non_null(strstr(ward_config_warning(cfg, 1), "protect_git"));
	assert_null(ward_config_warning(cfg, 2));
	ward_config_free(cfg);
}

/* --- errors ------------------------------------------------------------- */

struct err_case {
	const char *yaml;
	const char *prefix; /* "user.yml:LINE: KEY: " */
	const char *needle; /* a word of the message */
};

static const struct err_case err_cases[] = {
    /* Keys. */
    {"mode: read-only\nmodee: x\n", "user.yml:2: modee: ", "unknown key"},
    {"mode: read-only\nmode: read-only\n",
     "user.yml:2: mode: ", "duplicate key (first set on line 1)"},
    {"mode:\n", "user.yml:1: mode: ", "no value"},
    {"access: ~\n", "user.yml:1: access: ", "no value"},
    {"? [a, b]\n: c\n", "user.yml:1: ", "keys must be plain names"},
    {"- mode\n", "user.yml:1: ", "top level must be a mapping"},
    {"just text\n", "user.yml:1: ", "top level must be a mapping"},
    /* Types and values. */
    {"mode: [read-only]\n", "user.yml:1: mode: ", "got a list"},
    {"mode: readonly\n", "user.yml:1: mode: ", "invalid mode \"readonly\""},
    {"mode: \"\"\n", "user.yml:1: mode: ", "empty string"},
    {"workspace: {a: b}\n", "user.yml:1: workspace: ", "got a mapping"},
    {"workspace: src\n", "user.yml:1: workspace: ", "is relative"},
    {"workspace: ~bob/src\n", "user.yml:1: workspace: ", "~user"},
    {"runners: bwrap\n", "user.yml:1: runners: ", "expected a list"},
    {"runners: []\n", "user.yml:1: runners: ", "empty runner chain"},
    {"runners:\n  - bwrap\n  - firejail\n",
     "user.yml:3: runners: ", "\"firejail\" is not a runner"},
    {"runners: [bwrap, bwrap]\n", "user.yml:1: runners: ", "listed twice"},
    {"runners: [seatbelt]\n", "user.yml:1: runners: ", "not a runner of"},
    {"runner_command: [a]\n", "user.yml:1: runner_command: ", "got a list"},
    {"runner_command: bin/run\n",
     "user.yml:1: runner_command: ", "absolute path or a bare name"},
    {"runner_failure_signatures: oops\n",
     "user.yml:1: runner_failure_signatures: ", "expected a list"},
    {"runner_failure_signatures:\n  - ok\n  - [x]\n",
     "user.yml:3: runner_failure_signatures: ", "got a list"},
    {"probe_timeout_ms: \"500\"\n",
     "user.yml:1: probe_timeout_ms: ", "quoted string"},
    {"probe_timeout_ms: 0\n",
     "user.yml:1: probe_timeout_ms: ", "from 1 to 600000"},
    {"probe_timeout_ms: 600001\n",
     "user.yml:1: probe_timeout_ms: ", "from 1 to 600000"},
    {"probe_timeout_ms: 5s\n",
     "user.yml:1: probe_timeout_ms: ", "from 1 to 600000"},
    {"probe_timeout_ms: -1\n",
     "user.yml:1: probe_timeout_ms: ", "from 1 to 600000"},
    {"probe_timeout_ms: 99999999999999999999999\n",
     "user.yml:1: probe_timeout_ms: ", "from 1 to 600000"},
    {"access: {rw: /x}\n", "user.yml:1: access: ", "got a mapping"},
    {"access: >\n  r- /a\n  r- /b\n", "user.yml:2: access: ", "literal block"},
    {"access: r- /a\n  r- /b\n", "user.yml:1: access: ", "literal block"},
    {"access:\n  - r- /a\n  - |\n    r- /b\n    r- /c\n",
     "user.yml:4: access: ", "on one line"},
    {"access:\n  - r- /a\n  - [r- /b]\n", "user.yml:3: access: ", "got a list"},
    {"approval: sometimes\n",
     "user.yml:1: approval: ", "invalid approval policy \"sometimes\""},
    {"presets: [a]\n", "user.yml:1: presets: ", "expected a mapping"},
    {"presets:\n  custom: {mode: read-only, approval: never}\n",
     "user.yml:2: presets: ", "invalid preset name \"custom\""},
    {"presets:\n  \"a b\": {mode: read-only, approval: never}\n",
     "user.yml:2: presets: ", "invalid preset name"},
    {"presets:\n  x: read-only\n",
     "user.yml:2: presets: ", "expected a mapping {mode, approval}"},
    {"presets:\n  x: {mode: read-only}\n",
     "user.yml:2: presets: ", "missing approval"},
    {"presets:\n  x:\n    mode: read-only\n    approval: never\n"
     "    colour: red\n",
     "user.yml:5: presets: ", "unknown key \"colour\""},
    {"presets:\n  x: {mode: rw, approval: never}\n",
     "user.yml:2: presets: ", "invalid mode \"rw\""},
    {"presets:\n  x: {mode: read-only, approval: never}\n"
     "  x: {mode: read-only, approval: never}\n",
     "user.yml:3: presets: ", "defined twice"},
    /* Same pair as a built-in preset (presets.c refuses it). */
    {"presets:\n  strict: {mode: read-only, approval: ask}\n",
     "user.yml:2: presets: ", "same mode and approval"},
    {"protect_git: yes\n",
     "user.yml:1: protect_git: ", "expected true or false"},
    {"protect_git: \"false\"\n",
     "user.yml:1: protect_git: ", "expected true or false"},
    /* Access entries, checked by the rules module, with their line. */
    {"access:\n  - r- /a\n  - xx /b\n",
     "user.yml:3: access: ", "entry \"xx /b\""},
    {"access: |\n  r- /a\n\n  rw\n", "user.yml:4: access: ", "entry \"rw\""},
    {"access: [\"rw /a/*\"]\n", "user.yml:1: access: ", "glob"},
    {"access:\n  - rw {{ env.UNSET }}\n", "user.yml:2: access: ", "UNSET"},
    {"access:\n  - rw {{ env.EMPTY }}\n", "user.yml:2: access: ", "EMPTY"},
    /* YAML itself. */
    {"mode: [read-only\n", "user.yml:", "invalid YAML"},
    {"a: &x [1, 2]\nb: *x\n", "user.yml:2: ", "aliases (*x) are not allowed"},
    {"mode: !!str read-only\n", "user.yml:1: ", "tags are not supported"},
    {"mode: read-only\n---\nmode: read-only\n",
     "user.yml:2: ", "more than one YAML document"},
    {"mode: \"read\\0only\"\n", "user.yml:1: mode: ", "NUL byte"},
};

static void test_error_table(void **state)
{
	(void)state;

	for (size_t i = 0; i < N(err_cases); i++) {
		const struct err_case *c = &err_cases[i];
		struct ward_config_origin o;
		ward_config *cfg;
		int err;

		cfg = load3(&err, c->yaml, NULL, NULL, NULL);
		if (err != WARD_EINVAL ||
		    !has_error(cfg, c->prefix, c->needle)) {
			for (size_t j = 0; j < ward_config_error_count(cfg);
			     j++)
				print_message("error: %s\n",
					      ward_config_error(cfg, j, NULL));
			fail_msg("case %zu (%s): expected \"%s…%s\", got %d", i,
				 c->yaml, c->prefix, c->needle, err);
		}
		/* Every error knows where it came from. */
		assert_non_null(ward_config_error(cfg, 0, &o));
		assert_int_equal(o.layer, WARD_CONFIG_LAYER_USER);
		assert_string_equal(o.file, "user.yml");
		/* The return's detail is the first error. */
		assert_string_equal(ward_error_last(),
				    ward_config_error(cfg, 0, NULL));
		ward_config_free(cfg);
	}
}

/* Several errors in one file are all reported. */
static void test_errors_collected(void **state)
{
	ward_config *cfg;
	int err;
	(void)state;

	cfg = load3(&err,
		    "mode: bogus\n"
		    "colour: blue\n"
		    "probe_timeout_ms: fast\n"
		    "access:\n"
		    "  - r- /ok\n"
		    "  - zz /bad\n",
		    NULL, NULL, NULL);
	assert_int_equal(err, WARD_EINVAL);
	assert_true(ward_config_error_count(cfg) >= 4);
	assert_true(has_error(cfg, "user.yml:1: mode: ", NULL));
	assert_true(has_error(cfg, "user.yml:2: colour: ", "unknown key"));
	assert_true(has_error(cfg, "user.yml:3: probe_timeout_ms: ", NULL));
	assert_true(has_error(cfg, "user.yml:6: access: ", "zz /bad"));
	ward_config_free(cfg);
}

/* Flag-layer errors name the flag, not a file. */
static void test_flag_errors(void **state)
{
	struct ward_config_options o = flags();
	const char *acc[] = {"r- /fine", "rw"};
	struct ward_config_origin where;
	ward_config *cfg;
	int err;
	(void)state;

	o.access = acc;
	o.access_len = 2;
	o.mode = "wide-open";
	cfg = load3(&err, NULL, NULL, NULL, &o);
	assert_int_equal(err, WARD_EINVAL);
	assert_true(has_error(cfg, "--mode: ", "invalid mode \"wide-open\""));
	assert_true(has_error(cfg, "--access: ", "entry \"rw\""));
	for (size_t i = 0; i < ward_config_error_count(cfg); i++) {
		ward_config_error(cfg, i, &where);
		assert_int_equal(where.layer, WARD_CONFIG_LAYER_FLAGS);
		assert_null(where.file);
	}
	ward_config_free(cfg);
}

/* --- the project file may only narrow: a ceiling, never a lockout ------- */

struct refuse_case {
	const char *user; /* NULL: none */
	const char *project;
	const char *prefix;
	const char *where; /* what the warning says to do instead */
};

static const struct refuse_case refuse_cases[] = {
    {NULL, "mode: workspace-write\n",
     "project.yml:1: mode: ", "pass --mode workspace-write"},
    {NULL, "mode: danger-full-access\n",
     "project.yml:1: mode: ", "pass --mode danger-full-access"},
    {"mode: workspace-write\n", "mode: danger-full-access\n",
     "project.yml:1: mode: ", "user file"},
    {NULL, "workspace: /\n", "project.yml:1: workspace: ", "user file"},
    {NULL, "runners: [landlock]\n", "project.yml:1: runners: ", "user file"},
    {NULL, "runner_command: /bin/true\n",
     "project.yml:1: runner_command: ", "user file"},
    {NULL, "runner_failure_signatures: [x]\n",
     "project.yml:1: runner_failure_signatures: ", "user file"},
    {NULL, "probe_timeout_ms: 1\n",
     "project.yml:1: probe_timeout_ms: ", "user file"},
    {NULL, "approval: never\n", "project.yml:1: approval: ", "user file"},
    {NULL, "presets:\n  x: {mode: danger-full-access, approval: ask}\n",
     "project.yml:1: presets: ", "user file"},
    {NULL, "protect_git: false\n", "project.yml:1: protect_git: ", "user file"},
    {NULL, "unprotect: [.vscode]\n", "project.yml:1: unprotect: ", "user file"},
    {NULL, "access:\n  - r- /a\n  - rw /\n",
     "project.yml:3: access: ", "user file"},
    {NULL, "access: [\"rw\t/home\"]\n", "project.yml:1: access: ", "--access"},
    {NULL, "access: |\n  -- /a\n  rw /\n",
     "project.yml:3: access: ", "user file"},
    {NULL, "access: \"  rw /srv\"\n", "project.yml:1: access: ", "user file"},
};

/*
 * A project value that would widen is ignored with one warning naming the
 * file, line and key and where to put it instead; the configuration stays
 * valid (a cloned repository never locks its user out) and nothing the
 * project said widened anything.
 */
static void test_project_refusals(void **state)
{
	(void)state;

	for (size_t i = 0; i < N(refuse_cases); i++) {
		const struct refuse_case *c = &refuse_cases[i];
		struct ward_rule_info in;
		ward_config *cfg;
		int err;

		cfg = load3(&err, c->user, c->project, NULL, NULL);
		if (err != 0 || ward_config_ignored_count(cfg) != 1 ||
		    !has_ignored(cfg, c->prefix, c->where)) {
			for (size_t j = 0; j < ward_config_error_count(cfg);
			     j++)
				print_message("error: %s\n",
					      ward_config_error(cfg, j, NULL));
			for (size_t j = 0; j < ward_config_warning_count(cfg);
			     j++)
				print_message("warning: %s\n",
					      ward_config_warning(cfg, j));
			fail_msg("case %zu (%s): expected one ignored value "
				 "\"%s\" … \"%s\"",
				 i, c->project, c->prefix, c->where);
		}
		/* Nothing the project said widened anything. */
		assert_false(ward_mode_is_wider(
		    ward_config_mode(cfg, NULL),
		    c->user ? WARD_MODE_WORKSPACE_WRITE : WARD_MODE_READ_ONLY));
		assert_null(ward_config_runner_command(cfg, NULL));
		assert_true(ward_config_protect_git(cfg, NULL));
		assert_null(ward_config_unprotect(cfg, NULL)[0]);
		assert_int_equal(ward_config_approval(cfg, NULL),
				 WARD_APPROVAL_ASK);
		for (size_t j = 0; j < ward_rules_count(ward_config_rules(cfg));
		     j++) {
			ward_rules_get(&in, ward_config_rules(cfg), j);
			assert_int_not_equal(in.access, WARD_ACCESS_RW);
		}
		ward_config_free(cfg);
	}
}

/*
 * A project value about a knob that a flag (or the --config file) decides
 * would not apply whatever it said: no warning about it on every run. The
 * same value with nothing above it is still warned about (test above).
 */
static void test_project_decided_by_flag(void **state)
{
	struct ward_config_options o = flags();
	const char *proj = "mode: danger-full-access\nnetwork: on\n"
			   "approval: never\n";
	ward_config *cfg;
	int err;

	(void)state;
	cfg = load3(&err, NULL, proj, NULL, NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_ignored_count(cfg), 3);
	ward_config_free(cfg);

	o.mode = "read-only";
	o.network = "off";
	cfg = load3(&err, NULL, proj, NULL, &o);
	expect_valid(cfg, err);
	/* approval is not decided by any flag: still said. */
	assert_int_equal(ward_config_ignored_count(cfg), 1);
	assert_true(has_ignored(cfg, "project.yml:3: approval: ", NULL));
	for (size_t i = 0; i < ward_config_warning_count(cfg); i++) {
		assert_null(strstr(ward_config_warning(cfg, i), ": mode: "));
		assert_null(strstr(ward_config_warning(cfg, i), ": network: "));
	}
	ward_config_free(cfg);

	/* --allow-domain decides the network too; the --config file
	 * decides the mode. */
	o = flags();
	o.allow_domains = (const char *[]){"example.com"};
	o.allow_domains_len = 1;
	cfg = load3(&err, NULL, proj, "mode: workspace-write\n", &o);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_ignored_count(cfg), 1);
	assert_true(has_ignored(cfg, "project.yml:3: approval: ", NULL));
	ward_config_free(cfg);
}

/* --mode danger-full-access with --network off (or --allow-domain) is a
 * usage error of the flags, not a run that fails later. */
static void test_danger_network_flags(void **state)
{
	struct ward_config_origin where;
	struct ward_config_options o = flags();
	ward_config *cfg;
	int err;

	(void)state;
	o.mode = "danger-full-access";
	o.network = "off";
	cfg = load3(&err, NULL, NULL, NULL, &o);
	expect_error(cfg, err, "--network: ",
		     "network off cannot be enforced under "
		     "danger-full-access");
	ward_config_error(cfg, 0, &where);
	assert_int_equal(where.layer, WARD_CONFIG_LAYER_FLAGS);
	ward_config_free(cfg);
	o.network = NULL;
	o.allow_domains = (const char *[]){"example.com"};
	o.allow_domains_len = 1;
	cfg = load3(&err, NULL, NULL, NULL, &o);
	expect_error(cfg, err, "--allow-domain: ",
		     "network allowlist cannot be enforced");
	ward_config_free(cfg);
	o.allow_domains = NULL;
	o.allow_domains_len = 0;
	o.network = "on";
	cfg = load3(&err, NULL, NULL, NULL, &o);
	expect_valid(cfg, err);
	ward_config_free(cfg);
}

/* What the project file may say: narrowing entries and values. */
static void test_project_narrowing_ok(void **state)
{
	struct ward_config_origin o;
	struct ward_rule_info in;
	ward_config *cfg;
	int err;
	(void)state;

	cfg = load3(&err, "mode: workspace-write\napproval: never\n",
		    "mode: read-only\n"
		    "approval: ask\n"
		    "protect_git: true\n"
		    "access:\n"
		    "  - r- src\n"
		    "  - \"-- **/*.pem\"\n"
		    "  - '-- rwdata'\n",
		    NULL, NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_mode(cfg, &o), WARD_MODE_READ_ONLY);
	assert_int_equal(o.layer, WARD_CONFIG_LAYER_PROJECT);
	assert_int_equal(ward_config_approval(cfg, &o), WARD_APPROVAL_ASK);
	assert_int_equal(o.layer, WARD_CONFIG_LAYER_PROJECT);
	assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 3);
	ward_rules_get(&in, ward_config_rules(cfg), 0);
	assert_int_equal(in.access, WARD_ACCESS_RO);
	assert_string_equal(in.origin.file, "project.yml");
	assert_int_equal(in.origin.line, 5);
	ward_config_free(cfg);

	/* The same mode as the layer below is fine; so is a true that
	 * overrides the user's false. */
	cfg = load3(&err, "mode: workspace-write\nprotect_git: false\n",
		    "mode: workspace-write\nprotect_git: true\n", NULL, NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_mode(cfg, &o), WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(o.layer, WARD_CONFIG_LAYER_PROJECT);
	assert_true(ward_config_protect_git(cfg, &o));
	assert_int_equal(o.layer, WARD_CONFIG_LAYER_PROJECT);
	ward_config_free(cfg);
}

/* protect_git: false belongs to the user file alone. */
static void test_protect_git_user_only(void **state)
{
	ward_config *cfg;
	int err;
	(void)state;

	cfg = load3(&err, NULL, NULL, "protect_git: false\n", NULL);
	expect_error(cfg, err, "explicit.yml:1: protect_git: ", "user file");
	ward_config_free(cfg);
	cfg = load3(&err, "protect_git: false\n", NULL, "protect_git: true\n",
		    NULL);
	expect_valid(cfg, err);
	assert_true(ward_config_protect_git(cfg, NULL));
	ward_config_free(cfg);
}

/* --- precedence ---------------------------------------------------------- */

static void test_precedence(void **state)
{
	struct ward_config_options o = flags();
	struct ward_config_origin from;
	struct ward_config_preset p;
	struct ward_rule_info in;
	const char *acc[] = {"-- /from/flag"};
	const ward_rules *rules;
	ward_config *cfg;
	int err;
	(void)state;

	/* user < project < --config < flags, key by key. */
	cfg = load3(&err,
		    "mode: workspace-write\n"
		    "probe_timeout_ms: 100\n"
		    "approval: never\n"
		    "access: [\"rw /from/user\"]\n"
		    "presets:\n"
		    "  mine: {mode: read-only, approval: never}\n"
		    "  keep: {mode: danger-full-access, approval: ask}\n",
		    "mode: read-only\n"
		    "access: [\"r- /from/project\"]\n",
		    "mode: danger-full-access\n"
		    "probe_timeout_ms: 300\n"
		    "access: [\"-- /from/explicit\"]\n"
		    "presets:\n"
		    "  mine: {mode: workspace-write, approval: never}\n",
		    NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_mode(cfg, &from),
			 WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_EXPLICIT);
	assert_string_equal(from.file, "explicit.yml");
	assert_int_equal(ward_config_probe_timeout_ms(cfg, &from), 300);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_EXPLICIT);
	assert_int_equal(ward_config_approval(cfg, &from), WARD_APPROVAL_NEVER);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_USER);
	/* Presets merge by name; a redefinition keeps its place. */
	assert_int_equal(ward_config_preset_count(cfg), 2);
	ward_config_preset(&p, cfg, 0);
	assert_string_equal(p.name, "mine");
	assert_int_equal(p.mode, WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(p.origin.layer, WARD_CONFIG_LAYER_EXPLICIT);
	ward_config_preset(&p, cfg, 1);
	assert_string_equal(p.name, "keep");
	assert_int_equal(p.origin.layer, WARD_CONFIG_LAYER_USER);
	/* Access entries accumulate, in layer order. */
	rules = ward_config_rules(cfg);
	assert_int_equal(ward_rules_count(rules), 3);
	ward_rules_get(&in, rules, 0);
	assert_string_equal(in.pattern, "/from/user");
	ward_rules_get(&in, rules, 1);
	assert_string_equal(in.pattern, "/from/project");
	ward_rules_get(&in, rules, 2);
	assert_string_equal(in.pattern, "/from/explicit");
	/* A danger-full-access default is worth a warning. */
	assert_true(ward_config_warning_count(cfg) >= 1);
	ward_config_free(cfg);

	/* Flags beat every file. */
	o.mode = "read-only";
	o.access = acc;
	o.access_len = 1;
	cfg = load3(&err, "mode: workspace-write\n", NULL,
		    "mode: danger-full-access\n", &o);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_mode(cfg, &from), WARD_MODE_READ_ONLY);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_FLAGS);
	rules = ward_config_rules(cfg);
	assert_int_equal(ward_rules_count(rules), 1);
	ward_rules_get(&in, rules, 0);
	assert_null(in.origin.file);
	assert_string_equal(in.pattern, "/from/flag");
	ward_config_free(cfg);

	/* --config may widen what the project narrowed (it is the caller's). */
	cfg = load3(&err, NULL, "mode: read-only\n", "mode: workspace-write\n",
		    NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_config_mode(cfg, NULL),
			 WARD_MODE_WORKSPACE_WRITE);
	ward_config_free(cfg);
}

/* The workspace: flag > --config > user > the current directory, and
 * relative access entries resolve against the chosen one. */
static void test_workspace_choice(void **state)
{
	struct ward_config_options o = flags();
	struct ward_config_origin from;
	struct ward_rule_info in;
	char text[PATH_MAX + 64], cwd[PATH_MAX];
	ward_config *cfg;
	int err;
	(void)state;

	snprintf(text, sizeof(text), "workspace: %s\naccess: [\"r- sub\"]\n",
		 other_dir);
	o.workspace = NULL;
	cfg = load3(&err, text, NULL, NULL, &o);
	expect_valid(cfg, err);
	assert_string_equal(ward_config_workspace(cfg, &from), other_real);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_USER);
	ward_rules_get(&in, ward_config_rules(cfg), 0);
	assert_true(strncmp(in.pattern, other_real, strlen(other_real)) == 0);
	assert_string_equal(in.pattern + strlen(other_real), "/sub");
	ward_config_free(cfg);

	o.workspace = ws_dir;
	cfg = load3(&err, text, NULL, NULL, &o);
	expect_valid(cfg, err);
	assert_string_equal(ward_config_workspace(cfg, &from), ws_real);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_FLAGS);
	ward_config_free(cfg);

	/* ~ expands against the environment's home. */
	{
		struct ward_rules_env env = ENV;

		env.home = other_dir;
		o.workspace = NULL;
		o.env = &env;
		cfg = load3(&err, "workspace: ~/\n", NULL, NULL, &o);
		expect_valid(cfg, err);
		assert_string_equal(ward_config_workspace(cfg, NULL),
				    other_real);
		ward_config_free(cfg);
		/* A workspace that does not exist names file, line, key. */
		o = flags();
		o.workspace = NULL;
		{
			char ytext[PATH_MAX + 64];

			snprintf(ytext, sizeof(ytext),
				 "mode: read-only\nworkspace: %s\n",
				 fx_absent("w"));
			cfg = load3(&err, ytext, NULL, NULL, &o);
		}
		expect_error(cfg, err,
			     "user.yml:2: workspace: ", "No such file");
		ward_config_free(cfg);
	}

	o = flags();
	o.workspace = NULL;
	cfg = load3(&err, NULL, NULL, NULL, &o);
	expect_valid(cfg, err);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_string_equal(ward_config_workspace(cfg, &from), cwd);
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_DEFAULT);
	ward_config_free(cfg);
}

/* --- access: block text vs list ------------------------------------------ */

static void test_block_vs_list(void **state)
{
	static const char *const forms[] = {
	    "access:\n"
	    "  - \"rw {{ env.CACHE }}\"\n"
	    "  - r- /etc\n"
	    "  - \"-- ~/.ssh\"\n"
	    "  - \"-- **/*.pem\"\n",
	    "access: |-\n"
	    "  rw {{ env.CACHE }}\n"
	    "  r- /etc\n"
	    "  -- ~/.ssh\n"
	    "  -- **/*.pem\n",
	    "access: |\n"
	    "  rw {{ env.CACHE }}\n"
	    "  r- /etc\n"
	    "  -- ~/.ssh\n"
	    "  -- **/*.pem\n",
	};
	char want[4][DIR_MAX + 16];
	(void)state;

	snprintf(want[0], sizeof(want[0]), "/home/u/.cache");
	snprintf(want[1], sizeof(want[1]), "/etc");
	snprintf(want[2], sizeof(want[2]), "/home/u/.ssh");
	snprintf(want[3], sizeof(want[3]), "%.*s/**/*.pem", DIR_MAX, ws_real);
	for (size_t f = 0; f < N(forms); f++) {
		const ward_rules *rules;
		ward_config *cfg;
		int err;

		cfg = load3(&err, forms[f], NULL, NULL, NULL);
		expect_valid(cfg, err);
		rules = ward_config_rules(cfg);
		assert_int_equal(ward_rules_count(rules), 4);
		for (size_t i = 0; i < 4; i++) {
			struct ward_rule_info in;

			ward_rules_get(&in, rules, i);
			assert_string_equal(in.pattern, want[i]);
			/* Each entry on its own line: 2, 3, 4, 5. */
			assert_int_equal(in.origin.line, i + 2);
			assert_string_equal(in.origin.file, "user.yml");
		}
		assert_int_equal(ward_rules_match(rules, "/home/u/.ssh/id"),
				 WARD_ACCESS_NONE);
		ward_config_free(cfg);
	}
}

/* Blank lines and a comment after the indicator keep the line numbers. */
static void test_block_lines(void **state)
{
	struct ward_rule_info in;
	ward_config *cfg;
	int err;
	(void)state;

	cfg = load3(&err,
		    "mode: read-only\n"	   /* 1 */
		    "access: |  # rules\n" /* 2 */
		    "\n"		   /* 3 */
		    "  r- /a\n"		   /* 4 */
		    "\n"		   /* 5 */
		    "  -- /b\n"		   /* 6 */
		    "approval: ask\n",	   /* 7 */
		    NULL, NULL, NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 2);
	ward_rules_get(&in, ward_config_rules(cfg), 0);
	assert_int_equal(in.origin.line, 4);
	ward_rules_get(&in, ward_config_rules(cfg), 1);
	assert_int_equal(in.origin.line, 6);
	ward_config_free(cfg);

	/* A single-line scalar is one entry. */
	cfg = load3(&err, "access: \"-- /only\"\n", NULL, NULL, NULL);
	expect_valid(cfg, err);
	assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 1);
	ward_config_free(cfg);
}

/* --- files --------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_load_files(void **state)
{
	struct ward_config_options o = flags();
	struct ward_config_origin from;
	char user[PATH_MAX], proj_dir[PATH_MAX], proj[PATH_MAX + 32];
	char expl[PATH_MAX];
	ward_config *cfg;
	int err;
	(void)state;

	snprintf(user, sizeof(user), "%s/user.yml", other_dir);
	snprintf(proj_dir, sizeof(proj_dir), "%s/.ward", ws_dir);
	snprintf(proj, sizeof(proj), "%s/.ward/config.yml", ws_real);
	snprintf(expl, sizeof(expl), "%s/explicit.yml", other_dir);
	assert_int_equal(mkdir(proj_dir, 0755) == 0 || errno == EEXIST, 1);
	write_file(user, "mode: workspace-write\n");
	write_file(proj, "access: [\"-- secrets\"]\nmode: read-only\n");

	/* Missing user file: fine. */
	o.user_file = fx_absent("ward/config.yml");
	assert_int_equal(ward_config_new(&cfg), 0);
	expect_valid(cfg, ward_config_load(cfg, &o));
	assert_null(ward_config_file(cfg, WARD_CONFIG_LAYER_USER));
	assert_string_equal(ward_config_file(cfg, WARD_CONFIG_LAYER_PROJECT),
			    proj);
	ward_config_free(cfg);

	/* All three; the project file is found through the workspace. */
	o.user_file = user;
	o.config_file = NULL;
	assert_int_equal(ward_config_new(&cfg), 0);
	expect_valid(cfg, ward_config_load(cfg, &o));
	assert_int_equal(ward_config_mode(cfg, &from), WARD_MODE_READ_ONLY);
	assert_string_equal(from.file, proj);
	assert_int_equal(from.line, 2);
	assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 1);
	ward_config_free(cfg);

	/* no_project_file skips it. */
	o.no_project_file = true;
	assert_int_equal(ward_config_new(&cfg), 0);
	expect_valid(cfg, ward_config_load(cfg, &o));
	assert_int_equal(ward_config_mode(cfg, NULL),
			 WARD_MODE_WORKSPACE_WRITE);
	ward_config_free(cfg);
	o.no_project_file = false;

	/* A missing --config file is an error naming it. */
	o.config_file = expl;
	assert_int_equal(ward_config_new(&cfg), 0);
	err = ward_config_load(cfg, &o);
	expect_error(cfg, err, expl, "No such file");
	ward_config_free(cfg);

	/* The project file's rw entry is ignored, and the warning names
	 * where to put it: the user file actually in use. */
	write_file(proj, "access: [\"rw /\", \"-- secret\"]\n");
	o.config_file = NULL;
	assert_int_equal(ward_config_new(&cfg), 0);
	expect_valid(cfg, ward_config_load(cfg, &o));
	assert_true(has_ignored(cfg, proj, user));
	assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 1);
	ward_config_free(cfg);
	unlink(proj);
	rmdir(proj_dir);
	unlink(user);
}

static void test_add_file_kinds(void **state)
{
	char fifo[PATH_MAX], big[PATH_MAX];
	ward_config *cfg;
	FILE *f;
	int err;
	(void)state;

	/* A directory. */
	assert_int_equal(ward_config_new(&cfg), 0);
	err =
	    ward_config_add_file(cfg, WARD_CONFIG_LAYER_USER, other_dir, true);
	expect_error(cfg, err, other_dir, "cannot read");
	ward_config_free(cfg);

	/* A FIFO: refused without blocking (nobody writes to it). */
	snprintf(fifo, sizeof(fifo), "%s/fifo.yml", other_dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(ward_config_new(&cfg), 0);
	err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_PROJECT, fifo, true);
	expect_error(cfg, err, fifo, "not a regular file");
	ward_config_free(cfg);
	unlink(fifo);

	/* Larger than the limit. */
	snprintf(big, sizeof(big), "%s/big.yml", other_dir);
	f = fopen(big, "w");
	assert_non_null(f);
	fputs("access:\n", f);
	while (ftell(f) <= WARD_CONFIG_MAX_BYTES)
		fputs("  - \"-- /a/very/long/path/that/repeats/itself\"\n", f);
	fclose(f);
	assert_int_equal(ward_config_new(&cfg), 0);
	err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_USER, big, false);
	expect_error(cfg, err, big, "larger than 1 MiB");
	ward_config_free(cfg);
	unlink(big);

	/* Wrong layers and a second load of a layer are API errors. */
	assert_int_equal(ward_config_new(&cfg), 0);
	assert_int_equal(
	    ward_config_add_string(cfg, WARD_CONFIG_LAYER_FLAGS, "x", "", 0),
	    WARD_EINVAL);
	assert_int_equal(
	    ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER, "x", "", 0), 0);
	assert_int_equal(
	    ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER, "x", "", 0),
	    WARD_EINVAL);
	ward_config_free(cfg);
	ward_config_free(NULL);
}

/*
 * Running as another user with HOME still pointing at a home we may not
 * search: the optional user file is skipped with a warning; a file that is
 * there but unreadable is an error. Needs root to switch users (forks).
 */
static void test_unsearchable_dir(void **state)
{
	char dir[DIR_MAX + 16], file[DIR_MAX + 32], open_file[DIR_MAX + 32];
	int status;
	pid_t pid;
	(void)state;

	if (geteuid() != 0) {
		print_message("SKIP: needs root to run as another user\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/home", other_dir);
	snprintf(file, sizeof(file), "%s/config.yml", dir);
	snprintf(open_file, sizeof(open_file), "%s/mine.yml", other_dir);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_file(file, "mode: read-only\n");
	write_file(open_file, "mode: read-only\n");
	assert_int_equal(chmod(open_file, 0600), 0);
	assert_int_equal(chmod(other_dir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ward_config *cfg;
		int err;

		if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		if (ward_config_new(&cfg) != 0)
			_exit(11);
		err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_USER, file,
					   true);
		if (err != 0 || ward_config_warning_count(cfg) != 1 ||
		    !strstr(ward_config_warning(cfg, 0), "not searchable") ||
		    ward_config_file(cfg, WARD_CONFIG_LAYER_USER))
			_exit(12);
		ward_config_free(cfg);
		/* Not optional: an error. */
		if (ward_config_new(&cfg) != 0)
			_exit(13);
		err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_EXPLICIT,
					   file, false);
		if (err != WARD_EINVAL)
			_exit(14);
		ward_config_free(cfg);
		/* There but unreadable: an error even when optional. */
		if (ward_config_new(&cfg) != 0)
			_exit(15);
		err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_USER,
					   open_file, true);
		if (err != WARD_EINVAL ||
		    !strstr(ward_config_error(cfg, 0, NULL), "Permission"))
			_exit(16);
		ward_config_free(cfg);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(file);
	unlink(open_file);
	rmdir(dir);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* --- hostile input ------------------------------------------------------- */

/*
 * One parse of @text as the user layer. Hostile input must end in an
 * error, never in a hang: no test times it (a loaded machine is slow, not
 * wrong); a parse that never ends is stopped by the unit binary's own
 * timeout (tests/run.sh) and counts as a failure.
 */
static void parse_user(ward_config **out, int *err, const char *text,
		       size_t len)
{
	assert_int_equal(ward_config_new(out), 0);
	*err = ward_config_add_string(*out, WARD_CONFIG_LAYER_USER, "h.yml",
				      text, len);
}

static void test_alias_bomb(void **state)
{
	/* "Billion laughs": 10 levels of 10 aliases each. */
	static const char bomb[] =
	    "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\","
	    "\"lol\",\"lol\"]\n"
	    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
	    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
	    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
	    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
	    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
	    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
	    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
	    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
	    "access: *i\n";
	ward_config *cfg;
	int err;
	(void)state;

	parse_user(&cfg, &err, bomb, strlen(bomb));
	expect_error(cfg, err, "h.yml:2: ", "aliases (*a) are not allowed");
	ward_config_free(cfg);

	/* A merge key is an alias too. */
	cfg = load3(&err, "base: &b {mode: read-only}\n<<: *b\n", NULL, NULL,
		    NULL);
	assert_int_equal(err, WARD_EINVAL);
	assert_true(has_error(cfg, "user.yml:2: ", "aliases"));
	ward_config_free(cfg);
}

static void test_deep_nesting(void **state)
{
	static const size_t depths[] = {17, 64, 100000};
	(void)state;

	for (size_t d = 0; d < N(depths); d++) {
		size_t n = depths[d];
		char *text = malloc(2 * n + 16);
		ward_config *cfg;
		int err;

		assert_non_null(text);
		memcpy(text, "access: ", 8);
		memset(text + 8, '[', n);
		memset(text + 8 + n, ']', n);
		text[8 + 2 * n] = '\n';
		parse_user(&cfg, &err, text, 2 * n + 9);
		assert_int_equal(err, WARD_EINVAL);
		/* Refused where it goes too deep — or, on a machine loaded
		 * enough that the parser's child outlives its bound, refused
		 * for that: a refusal either way, never a hang. */
		assert_true(has_error(cfg, "h.yml:1: ", NULL) ||
			    has_error(cfg,
				      "h.yml: the YAML parser did not "
				      "finish within",
				      NULL));
		ward_config_free(cfg);
		/* Block-style nesting, one level per line. */
		{
			size_t cap = n * (n < 1000 ? n : 1) + 64, o = 0;

			free(text);
			if (n > 1000)
				continue;
			text = malloc(cap * 3 + 64);
			assert_non_null(text);
			for (size_t i = 0; i < n; i++)
				o += (size_t)sprintf(text + o, "%*sk%zu:\n",
						     (int)i, "", i);
			o += (size_t)sprintf(text + o, "%*sv\n", (int)n, "");
			parse_user(&cfg, &err, text, o);
			assert_int_equal(err, WARD_EINVAL);
			ward_config_free(cfg);
		}
		free(text);
	}
}

static void test_hostile_misc(void **state)
{
	static const char nul_key[] = "mo\0de: read-only\n";
	static const char nul_doc[] = "mode: read-only\n\0\naccess:\n"
				      "  - '-- /etc/hostname'\n";
	ward_config *cfg;
	char *text;
	size_t n, o;
	int err;
	(void)state;

	/* NUL bytes in a key and in the middle of the document. */
	parse_user(&cfg, &err, nul_key, sizeof(nul_key) - 1);
	assert_int_equal(err, WARD_EINVAL);
	ward_config_free(cfg);

	/* A NUL between two valid lines used to end the document there:
	 * the rule after it was dropped and the file said valid. */
	parse_user(&cfg, &err, nul_doc, sizeof(nul_doc) - 1);
	expect_error(cfg, err, "h.yml:2: ", "a NUL byte at offset 16");
	ward_config_free(cfg);

	/* Invalid UTF-8, refused up front with its offset (libfyaml 0.7,
	 * the parser before libyaml, looped forever on some invalid bytes
	 * in a directive). */
	parse_user(&cfg, &err, "mode: \xff\xfe\n", 9);
	expect_error(cfg, err, "h.yml:1: ", "not valid UTF-8");
	ward_config_free(cfg);
	parse_user(&cfg, &err, "%mode: x\xf3y\n", 11);
	expect_error(cfg, err, "h.yml:1: ", "not valid UTF-8");
	ward_config_free(cfg);
	parse_user(&cfg, &err, "mode: read-only\n# \xed\xa0\x80\n", 22);
	expect_error(cfg, err, "h.yml:2: ", "not valid UTF-8");
	ward_config_free(cfg);

	/* A very long key and a very long value. */
	n = 200000;
	text = malloc(n + 64);
	assert_non_null(text);
	memset(text, 'k', n);
	memcpy(text + n, ": x\n", 5);
	parse_user(&cfg, &err, text, strlen(text));
	assert_int_equal(err, WARD_EINVAL);
	assert_true(has_error(cfg, "h.yml:1: kkkk", "unknown key"));
	/* The key is quoted, bounded. */
	assert_true(strlen(ward_config_error(cfg, 0, NULL)) < 600);
	ward_config_free(cfg);
	memcpy(text, "mode: ", 6);
	text[n] = '\n';
	text[n + 1] = '\0';
	parse_user(&cfg, &err, text, n + 1);
	assert_int_equal(err, WARD_EINVAL);
	assert_true(strlen(ward_config_error(cfg, 0, NULL)) < 600);
	ward_config_free(cfg);
	free(text);

	/* Huge in memory: refused before parsing. */
	n = (size_t)WARD_CONFIG_MAX_BYTES + 1;
	text = calloc(1, n + 1);
	assert_non_null(text);
	memset(text, '#', n);
	parse_user(&cfg, &err, text, n);
	expect_error(cfg, err, "h.yml: ", "larger than");
	ward_config_free(cfg);
	free(text);

	/* 10,000 access entries load (how fast is bench/'s question). */
	text = malloc(10000 * 32 + 64);
	assert_non_null(text);
	o = (size_t)sprintf(text, "access:\n");
	for (int i = 0; i < 10000; i++)
		o += (size_t)sprintf(text + o, "  - \"-- /d%d/*.key\"\n", i);
	{
		cfg = load3(&err, text, NULL, NULL, NULL);
		expect_valid(cfg, err);
		assert_int_equal(ward_rules_count(ward_config_rules(cfg)),
				 10000);
		ward_config_free(cfg);
	}
	free(text);

	/* 100 errors at most are kept. */
	text = malloc(300 * 16);
	assert_non_null(text);
	o = 0;
	for (int i = 0; i < 300; i++)
		o += (size_t)sprintf(text + o, "bad%d: 1\n", i);
	cfg = load3(&err, text, NULL, NULL, NULL);
	assert_int_equal(err, WARD_EINVAL);
	assert_int_equal(ward_config_error_count(cfg), 100);
	ward_config_free(cfg);
	free(text);
}

/*
 * Past the cap of kept errors, a handler must still see that its value was
 * wrong: a list item that is not a string once reached strdup(NULL) after
 * 100 earlier errors (every key that takes a list of strings).
 */
static void test_errors_past_the_cap(void **state)
{
	static const char *const tails[] = {
	    "access:\n  - {}\n",
	    "access:\n  - [1]\n  - \"-- /x\"\n",
	    "runners:\n  - {}\n",
	    "runner_failure_signatures:\n  - {}\n",
	    "presets:\n  p: {mode: {}, approval: ask}\n",
	};
	(void)state;

	for (size_t t = 0; t < N(tails); t++) {
		char *text = malloc(120 * 24 + 128);
		ward_config *cfg;
		size_t o = 0;
		int err;

		assert_non_null(text);
		for (int i = 0; i < 120; i++)
			o += (size_t)sprintf(text + o, "unknown%d: 1\n", i);
		strcpy(text + o, tails[t]);
		cfg = load3(&err, text, NULL, NULL, NULL);
		assert_int_equal(err, WARD_EINVAL);
		assert_int_equal(ward_config_error_count(cfg), 100);
		/* Nothing of the bad key was taken. */
		assert_int_equal(ward_rules_count(ward_config_rules(cfg)), 0);
		ward_config_free(cfg);
		free(text);
	}
}

/*
 * Six bytes once crashed every ward command run in the repository holding
 * them (libfyaml 0.7.12, the parser before libyaml: a simple key recycled
 * twice after a tab used for indentation, a crash in fy_parser_destroy).
 * They are invalid YAML: an error naming the file, as every layer, and the
 * next file still parses.
 */
static void test_libfyaml_crash_input(void **state)
{
	static const char bad[] = "? ?:\t?";
	static const enum ward_config_layer layers[] = {
	    WARD_CONFIG_LAYER_USER, WARD_CONFIG_LAYER_PROJECT,
	    WARD_CONFIG_LAYER_EXPLICIT};
	ward_config *cfg;
	int err;
	(void)state;

	for (size_t i = 0; i < N(layers); i++) {
		assert_int_equal(ward_config_new(&cfg), 0);
		err = ward_config_add_string(cfg, layers[i], "bad.yml", bad,
					     sizeof(bad) - 1);
		assert_int_equal(err, WARD_EINVAL);
		assert_true(has_error(cfg, "bad.yml", NULL));
		print_message("%s\n", ward_config_error(cfg, 0, NULL));
		ward_config_free(cfg);
	}
	cfg = load3(&err, "mode: workspace-write\n", bad, NULL, NULL);
	assert_int_equal(err, WARD_EINVAL);
	assert_true(has_error(cfg, "project.yml", NULL));
	assert_false(has_error(cfg, "user.yml", NULL));
	ward_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_and_defaults),
	    cmocka_unit_test(test_full_user_file),
	    cmocka_unit_test(test_error_table),
	    cmocka_unit_test(test_errors_collected),
	    cmocka_unit_test(test_flag_errors),
	    cmocka_unit_test(test_project_refusals),
	    cmocka_unit_test(test_project_decided_by_flag),
	    cmocka_unit_test(test_danger_network_flags),
	    cmocka_unit_test(test_project_narrowing_ok),
	    cmocka_unit_test(test_protect_git_user_only),
	    cmocka_unit_test(test_precedence),
	    cmocka_unit_test(test_workspace_choice),
	    cmocka_unit_test(test_block_vs_list),
	    cmocka_unit_test(test_block_lines),
	    cmocka_unit_test(test_load_files),
	    cmocka_unit_test(test_add_file_kinds),
	    cmocka_unit_test(test_unsearchable_dir),
	    cmocka_unit_test(test_alias_bomb),
	    cmocka_unit_test(test_deep_nesting),
	    cmocka_unit_test(test_hostile_misc),
	    cmocka_unit_test(test_errors_past_the_cap),
	    cmocka_unit_test(test_libfyaml_crash_input),
	};

	return cmocka_run_group_tests(tests, setup_dirs, teardown_dirs);
}
