/*
 * Unit tests for the denial report: deriving entries from a command's error
 * output and the plan (src/libward/run/denial.c), and its texts (render.c): the
 * marker lines, the hint per surface, the advice, --explain, and the other
 * surface-dependent texts.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "libward/run/denial.h"
#include "ward/ward.h"

struct fx {
	char ws[PATH_MAX];
	ward_rules *rules;
	ward_policy *ro, *ww;
};

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	struct ward_rules_env env = {0};
	char dir[64] = "/var/tmp/ward-test-denial.XXXXXX";

	if (!fx || !mkdtemp(dir) || !realpath(dir, fx->ws))
		return -1;
	env.workspace = fx->ws;
	env.home = "/home/u";
	if (ward_rules_new(&fx->rules) ||
	    ward_rules_add_text(fx->rules, "-- secret\nr- docs\n", &env,
				&(struct ward_rule_origin){"/w.yml", 4}) ||
	    ward_policy_new(&fx->ro, WARD_MODE_READ_ONLY, fx->ws) ||
	    ward_policy_new(&fx->ww, WARD_MODE_WORKSPACE_WRITE, fx->ws) ||
	    ward_policy_set_rules(fx->ro, fx->rules) ||
	    ward_policy_set_rules(fx->ww, fx->rules))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char p[PATH_MAX + 16];

	/* What test_derive_busy makes, also when it failed half-way. */
	snprintf(p, sizeof(p), "%s/.git/config", fx->ws);
	unlink(p);
	snprintf(p, sizeof(p), "%s/.git", fx->ws);
	rmdir(p);
	rmdir(fx->ws);
	ward_policy_free(fx->ro);
	ward_policy_free(fx->ww);
	ward_rules_free(fx->rules);
	free(fx);
	return 0;
}

/* Derive from @text under @pol; the set is the caller's to clear. */
static void derive(struct ward_denial_set *set, const struct fx *fx,
		   const ward_policy *pol, const char *text)
{
	struct ward_denial_ctx ctx = {pol, fx->ws, "--mode", false,
				      WARD_RUNNER_NONE, NULL};

	memset(set, 0, sizeof(*set));
	ward_denials_from_output(set, &ctx, text, strlen(text));
}

/* The entry for @path (under the workspace when relative), or NULL. */
static const struct ward_denial *find(const struct ward_denial_set *set,
				      const struct fx *fx, const char *path)
{
	char abs[2 * PATH_MAX];

	if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else
		snprintf(abs, sizeof(abs), "%s/%s", fx->ws, path);
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].path && strcmp(set->v[i].path, abs) == 0)
			return &set->v[i];
	return NULL;
}

/* The error dialects of the usual tools, each judged against the plan. */
static void test_derive_lines(void **state)
{
	struct fx *fx = *state;
	struct ward_denial_set set;
	const struct ward_denial *d;

	derive(&set, fx, fx->ro,
	       "touch: cannot touch '/etc/x1': Read-only file system\n"
	       "bash: line 1: /etc/x2: Permission denied\n"
	       "sh: 1: cannot create out.txt: Permission denied\n"
	       "PermissionError: [Errno 13] Permission denied: '/etc/x3'\n"
	       "mkdir: cannot create directory \xe2\x80\x98"
	       "d\xe2\x80\x99: Read-only file system\n"
	       "cat: secret/k: No such file or directory\n"
	       "ls: cannot open directory '" /* a `--` rule, listed */
	       "secret': Permission denied\n"
	       "cat: missing.txt: No such file or directory\n"
	       "cat: /etc/shadow: Permission denied\n"
	       "ward: /x was moved aside: Permission denied\n"
	       "touch: cannot touch '/etc/x1': Read-only file system\n");
	d = find(&set, fx, "/etc/x1");
	assert_non_null(d);
	assert_string_equal(d->operation, "create");
	assert_int_equal(d->cause, WARD_DENIAL_MODE);
	assert_int_equal(d->mode, WARD_MODE_READ_ONLY);
	assert_string_equal(d->source, "--mode");
	assert_int_equal(d->how, WARD_DENIAL_DERIVED);
	d = find(&set, fx, "/etc/x2");
	assert_non_null(d);
	assert_string_equal(d->operation, "write");
	assert_non_null(find(&set, fx, "out.txt"));
	assert_string_equal(find(&set, fx, "out.txt")->operation, "create");
	assert_non_null(find(&set, fx, "/etc/x3"));
	assert_non_null(find(&set, fx, "d"));
	d = find(&set, fx, "secret/k");
	assert_non_null(d);
	assert_int_equal(d->cause, WARD_DENIAL_RULE);
	assert_string_equal(d->rule, "-- secret");
	assert_string_equal(d->source, "/w.yml:4");
	d = find(&set, fx, "secret");
	assert_non_null(d);
	assert_string_equal(d->operation, "list");
	/* A file that is missing, a read the mode does not refuse, and
	 * ward's own lines are no denials; a repeated line counts once. */
	assert_null(find(&set, fx, "missing.txt"));
	assert_null(find(&set, fx, "/etc/shadow"));
	assert_null(find(&set, fx, "/x"));
	assert_int_equal(set.n, 7);
	ward_denial_set_clear(&set);
}

/* Under workspace-write: the workspace is writable (a refusal there is
 * a plain permission error), `r-` refuses changes inside it. */
static void test_derive_writable(void **state)
{
	struct fx *fx = *state;
	struct ward_denial_set set;
	const struct ward_denial *d;

	derive(&set, fx, fx->ww,
	       "touch: cannot touch 'locked/x': Permission denied\n"
	       "touch: cannot touch 'docs/x': Read-only file system\n"
	       "cat: docs/x: No such file or directory\n"
	       "touch: cannot touch '/usr/x': Read-only file system\n");
	assert_null(find(&set, fx, "locked/x"));
	d = find(&set, fx, "docs/x");
	assert_non_null(d);
	assert_int_equal(d->cause, WARD_DENIAL_RULE);
	assert_string_equal(d->rule, "r- docs");
	assert_string_equal(d->operation, "create");
	d = find(&set, fx, "/usr/x");
	assert_non_null(d);
	assert_int_equal(d->cause, WARD_DENIAL_MODE);
	assert_int_equal(d->mode, WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(set.n, 2);
	ward_denial_set_clear(&set);
}

/* ward's state directory is hidden (protect.c): a read refused there is
 * a denial as a `--` rule's is, also when bwrap shows it as missing (its
 * empty tmpfs); a danger-full-access run hides nothing. */
static void test_derive_hidden(void **state)
{
	struct fx *fx = *state;
	char dir[64] = "/var/tmp/ward-test-denial-state.XXXXXX";
	char *old =
	    getenv("XDG_STATE_HOME") ? strdup(getenv("XDG_STATE_HOME")) : NULL;
	const ward_policy *pols[2];
	ward_policy *ww = NULL, *ro = NULL, *dfa = NULL;
	struct ward_denial_set set;
	const struct ward_denial *d;
	char log[PATH_MAX], cache[PATH_MAX], text[2 * PATH_MAX + 128];

	assert_non_null(mkdtemp(dir));
	assert_int_equal(setenv("XDG_STATE_HOME", dir, 1), 0);
	assert_int_equal(
	    ward_policy_new(&ww, WARD_MODE_WORKSPACE_WRITE, fx->ws), 0);
	assert_int_equal(ward_policy_new(&ro, WARD_MODE_READ_ONLY, fx->ws), 0);
	assert_int_equal(
	    ward_policy_new(&dfa, WARD_MODE_DANGER_FULL_ACCESS, fx->ws), 0);
	snprintf(log, sizeof(log), "%s/ward/sessions/s1/log.jsonl", dir);
	snprintf(cache, sizeof(cache), "%s/ward/probe.json", dir);
	snprintf(text, sizeof(text),
		 "cat: %s: Permission denied\n"
		 "cat: %s: No such file or directory\n",
		 log, cache);
	pols[0] = ww;
	pols[1] = ro;
	for (size_t i = 0; i < 2; i++) {
		derive(&set, fx, pols[i], text);
		d = find(&set, fx, log);
		assert_non_null(d);
		assert_int_equal(d->cause, WARD_DENIAL_PROTECTED);
		assert_string_equal(d->operation, "read");
		assert_non_null(strstr(d->rule, "state directory"));
		assert_string_equal(d->source, "built in");
		assert_non_null(find(&set, fx, cache));
		assert_int_equal(set.n, 2);
		ward_denial_set_clear(&set);
	}
	derive(&set, fx, dfa, text);
	assert_int_equal(set.n, 0);
	ward_denial_set_clear(&set);
	ward_policy_free(ww);
	ward_policy_free(ro);
	ward_policy_free(dfa);
	if (old)
		setenv("XDG_STATE_HOME", old, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(old);
	rmdir(dir);
}

/*
 * git config writes .git/config.lock and renames it over .git/config,
 * which the runner binds read-only: the rename fails with EBUSY, which is
 * a refused write of the protected path; EBUSY anywhere nothing protects
 * is the command's own error.
 */
static void test_derive_busy(void **state)
{
	struct fx *fx = *state;
	struct ward_denial_set set;
	const struct ward_denial *d;
	ward_policy *ww = NULL;
	char git[PATH_MAX + 8], config[PATH_MAX + 16];
	FILE *f;

	snprintf(git, sizeof(git), "%s/.git", fx->ws);
	snprintf(config, sizeof(config), "%s/config", git);
	assert_int_equal(mkdir(git, 0700), 0);
	assert_non_null(f = fopen(config, "w"));
	fclose(f);
	assert_int_equal(
	    ward_policy_new(&ww, WARD_MODE_WORKSPACE_WRITE, fx->ws), 0);
	derive(&set, fx, ww,
	       "error: could not write config file .git/config: Device or "
	       "resource busy\n"
	       "rm: cannot remove 'mnt': Device or resource busy\n");
	d = find(&set, fx, ".git/config");
	assert_non_null(d);
	assert_string_equal(d->operation, "write");
	assert_int_equal(d->cause, WARD_DENIAL_PROTECTED);
	assert_string_equal(d->rule, "git config");
	assert_null(find(&set, fx, "mnt"));
	assert_int_equal(set.n, 1);
	ward_denial_set_clear(&set);
	ward_policy_free(ww);
}

/* Under Landlock a refused socket says "Permission denied" too: a line
 * of the runner's network dialect names no file ("failed" is a word of
 * wget's, not a path); a file's refusal beside it still does. */
static void test_derive_network_line(void **state)
{
	struct fx *fx = *state;
	struct ward_denial_ctx ctx = {.policy = fx->ro,
				      .cwd = fx->ws,
				      .mode_source = "--mode",
				      .runner = WARD_RUNNER_LANDLOCK};
	struct ward_denial_set set;
	const char *text =
	    "Connecting to 1.1.1.1:80... failed: Permission denied.\n"
	    "sh: 1: cannot create /etc/x: Permission denied\n";

	memset(&set, 0, sizeof(set));
	ward_denials_from_output(&set, &ctx, text, strlen(text));
	assert_null(find(&set, fx, "failed"));
	assert_non_null(find(&set, fx, "/etc/x"));
	assert_int_equal(set.n, 1);
	ward_denial_set_clear(&set);
}

/* At most WARD_DENIALS_MAX entries; the rest are counted. */
static void test_bound(void **state)
{
	struct fx *fx = *state;
	struct ward_denial_set set;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	assert_non_null(m);
	for (int i = 0; i < WARD_DENIALS_MAX + 8; i++)
		fprintf(m,
			"touch: cannot touch '/etc/f%d': Permission denied\n",
			i);
	fclose(m);
	derive(&set, fx, fx->ro, text);
	assert_int_equal(set.n, WARD_DENIALS_MAX);
	assert_int_equal(set.more, 8);
	ward_denial_set_clear(&set);
	free(text);
}

/* --- texts ---------------------------------------------------------------- */

static const struct ward_denial mode_d = {
    "/ws/out.txt", "create",	  WARD_DENIAL_MODE,   WARD_MODE_READ_ONLY,
    NULL,	   "session abc", WARD_DENIAL_DERIVED};
static const struct ward_denial rule_d = {
    "/ws/.env",		 "read",    WARD_DENIAL_RULE,
    WARD_MODE_READ_ONLY, "-- .env", "/ws/.ward/config.yml:3",
    WARD_DENIAL_EXACT};

static char *denials(enum ward_surface surface, const struct ward_denial *d,
		     size_t n, bool offered, const char *session)
{
	struct ward_render_denials r = WARD_RENDER_DENIALS_INIT;
	char *text = NULL;

	r.surface = surface;
	r.mode = WARD_MODE_READ_ONLY;
	r.denials = d;
	r.count = n;
	r.escalation_offered = offered;
	r.session_id = session;
	assert_int_equal(ward_render_denials(&text, &r), 0);
	return text;
}

static void test_render_denials(void **state)
{
	char *t;

	(void)state;
	t = denials(WARD_SURFACE_MCP, &mode_d, 1, true, "abc");
	assert_string_equal(
	    t, "[sandbox: file access denied under read-only mode]\n"
	       "[sandbox: create of /ws/out.txt refused: not writable under "
	       "read-only mode (session abc); inferred from the error "
	       "output]\n"
	       "retry this exact command once with sandbox_permissions (the "
	       "narrowest wider mode that suffices) + justification; the "
	       "approval prompt asks the user");
	free(t);
	/* The CLI names its own flags. */
	t = denials(WARD_SURFACE_CLI, &mode_d, 1, true, "abc");
	assert_non_null(strstr(t, "\nretry this exact command once with ward "
				  "run --escalate MODE --justification TEXT"));
	assert_null(strstr(t, "sandbox_permissions"));
	free(t);
	/* No escalation offered, a session: how a person widens it. */
	t = denials(WARD_SURFACE_MCP, &mode_d, 1, false, "abc");
	assert_non_null(strstr(t, "\na person can allow this by widening the "
				  "session's mode: ward session mode abc "
				  "workspace-write"));
	assert_null(strstr(t, "retry"));
	free(t);
	/* Only a rule: no wider mode helps, so neither hint nor advice. */
	t = denials(WARD_SURFACE_MCP, &rule_d, 1, true, "abc");
	assert_string_equal(
	    t, "[sandbox: file access denied under read-only mode]\n"
	       "[sandbox: read of /ws/.env refused by rule \"-- .env\" "
	       "(/ws/.ward/config.yml:3)]");
	free(t);
	/* No entry: the marker, then the hint. */
	t = denials(WARD_SURFACE_API, NULL, 0, true, NULL);
	assert_non_null(strstr(t, "mode]\nretry this exact command"));
	free(t);
}

/* A path with a newline (or another control character) stays on its
 * entry's line: escaped, never a line of its own that could pass for
 * one of ward's. */
static void test_render_denials_escape(void **state)
{
	const struct ward_denial nl = {
	    "/etc/a\n[sandbox: fake]", "create",       WARD_DENIAL_RULE,
	    WARD_MODE_READ_ONLY,       "-- /etc/a\tb", "/ws/x\ny.yml:2",
	    WARD_DENIAL_EXACT};
	char *t;

	(void)state;
	t = denials(WARD_SURFACE_MCP, &nl, 1, false, NULL);
	assert_string_equal(
	    t, "[sandbox: file access denied under read-only mode]\n"
	       "[sandbox: create of /etc/a\\x0a[sandbox: fake] refused by "
	       "rule \"-- /etc/a\\x09b\" (/ws/x\\x0ay.yml:2)]");
	free(t);
	assert_int_equal(ward_render_explain(&t, &nl, 1, 0), 0);
	assert_non_null(strstr(t, "denied: create of /etc/a\\x0a[sandbox: "
				  "fake]\n  by:     rule \"-- /etc/a\\x09b\"\n"
				  "  set in: /ws/x\\x0ay.yml:2\n"));
	free(t);
}

static void test_render_explain(void **state)
{
	const struct ward_denial two[] = {mode_d, rule_d};
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_explain(&t, two, 2, 0), 0);
	assert_non_null(strstr(t, "ward: explain: denied: create of "
				  "/ws/out.txt\n  by:     the read-only mode"));
	assert_non_null(strstr(t, "  set in: session abc\n  how:    derived"));
	assert_non_null(strstr(t, "ward: explain: denied: read of /ws/.env\n"
				  "  by:     rule \"-- .env\"\n"
				  "  set in: /ws/.ward/config.yml:3\n"
				  "  how:    exact"));
	free(t);
	assert_int_equal(ward_render_explain(&t, NULL, 0, 0), 0);
	assert_string_equal(t, "ward: explain: no file access was refused");
	free(t);
}

/* Each surface's text names only the options that exist there. */
static void test_surface_texts(void **state)
{
	char *t = NULL;

	(void)state;
	assert_int_equal(ward_render_verdict_for(
			     &t, WARD_SURFACE_CLI, WARD_ESCALATION_NOT_WIDER,
			     WARD_SUBJECT_COMMAND, WARD_MODE_READ_ONLY),
			 0);
	assert_non_null(strstr(t, "--escalate \"read-only\" is not wider"));
	assert_null(strstr(t, "sandbox_permissions"));
	free(t);
	assert_int_equal(ward_render_verdict_for(
			     &t, WARD_SURFACE_MCP, WARD_ESCALATION_NOT_WIDER,
			     WARD_SUBJECT_COMMAND, WARD_MODE_READ_ONLY),
			 0);
	assert_non_null(strstr(t, "retry without sandbox_permissions"));
	free(t);
	assert_null(strstr(
	    ward_render_hint_for(WARD_SURFACE_CLI, WARD_SUBJECT_OPERATION),
	    "sandbox_permissions"));
	assert_non_null(strstr(
	    ward_render_hint_for(WARD_SURFACE_CLI, WARD_SUBJECT_OPERATION),
	    "ward fs"));
	assert_string_equal(
	    ward_render_hint_for(WARD_SURFACE_MCP, WARD_SUBJECT_COMMAND),
	    ward_render_hint(WARD_SUBJECT_COMMAND));
	assert_int_equal(ward_render_not_text(&t, WARD_SURFACE_MCP, "f"), 0);
	assert_null(strstr(t, "as bytes"));
	assert_null(strstr(t, "--bytes"));
	assert_non_null(strstr(t, "bash"));
	free(t);
	assert_int_equal(ward_render_not_text(&t, WARD_SURFACE_CLI, "f"), 0);
	assert_non_null(strstr(t, "ward fs read --bytes"));
	free(t);
	assert_int_equal(
	    ward_render_stopped(&t, WARD_SUBJECT_COMMAND, true, false), 0);
	assert_string_equal(t, "stopped: the server shut down before this "
			       "command started; nothing was run");
	free(t);
	assert_int_equal(ward_render_read_truncated(&t, 12, 3, 300), 0);
	assert_string_equal(t, "[truncated: 3 more lines (300 bytes) not "
			       "shown; read on with offset 12, or pick a part "
			       "with offset/limit]");
	free(t);
	assert_int_equal(ward_render_read_long_line(&t, 3, 65536, 10, 3), 0);
	assert_string_equal(t, "[truncated: line 3 is longer than 64 KiB: its "
			       "first 65536 bytes are shown, 10 more bytes of "
			       "it are not (look at them with bash, e.g. cut "
			       "-c or fold); read on from the next line with "
			       "offset 3]");
	free(t);
	assert_int_equal(ward_render_read_long_line(&t, 1, 65536, 10, 0), 0);
	assert_non_null(strstr(t, "; it is the file's last line]"));
	free(t);
	assert_int_equal(ward_render_read_line_too_large(&t, "a.js", 4), 0);
	assert_string_equal(t, "a.js: line 4 alone is larger than read_file "
			       "can hold (10 MiB); look at it with bash (e.g. "
			       "head -c or cut -c)");
	free(t);
	assert_int_equal(ward_render_read_past_end(&t, 9), 0);
	assert_string_equal(t, "[nothing at offset 9: the file ends before "
			       "line 10]");
	free(t);
	assert_int_equal(ward_render_list_truncated(&t, 1, true), 0);
	assert_string_equal(t, "[truncated: at least 1 more entry not shown; "
			       "list a subdirectory, or use depth/limit]");
	free(t);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_derive_lines),
	    T(test_derive_writable),
	    T(test_derive_hidden),
	    T(test_derive_busy),
	    T(test_derive_network_line),
	    T(test_bound),
	    cmocka_unit_test(test_render_denials),
	    cmocka_unit_test(test_render_denials_escape),
	    cmocka_unit_test(test_render_explain),
	    cmocka_unit_test(test_surface_texts),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
