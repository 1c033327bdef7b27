/*
 * Unit tests for the per-runner translation of access rules and protected
 * paths (translate.c, protect.c, roots.c's `rw` rules): golden argv/text
 * per runner, precedence, read-only, globs (expansion, depth, symlinks,
 * bounds), Landlock's complement expansion, protected paths (git, worktree
 * .git files, ward's own directories), the warnings, and the fs fence's
 * protected-path checks.
 *
 * Every test works in a fixture under /var/tmp (not /tmp: /tmp is itself a
 * writable root under workspace-write) with $HOME pointing into it, so
 * nothing depends on the machine. Goldens live in tests/unit/golden/
 * (rules-*); @BASE@ stands for the fixture. Regenerate after an intended
 * change with WARD_UPDATE_GOLDEN=1 build/tests/test_translate.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ward/ward.h"
#include "libward/guard/guard.h"
#include "libward/policy/facts.h"
#include "libward/policy/protect.h"
#include "hide.h"
#include "landlock.h"
#include "util.h"
#include "libward/plan/translate_impl.h"
#include "libward/plan/translate_internal.h"
#include "libward/runners/runners.h"

#define BWRAP	 "/usr/bin/bwrap"
#define LAUNCHER "/usr/libexec/ward/landlock-run"

struct fx {
	char base[256]; /* canonical /var/tmp/ward-translate-XXXXXX */
	ward_rules *rules;
	ward_policy *policy;
};

static char *const command[] = {"true", NULL};

/* --- fixture ------------------------------------------------------------- */

static void xmkdir(const char *base, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

static void xwrite(const char *base, const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	f = fopen(p, "we");
	if (!f)
		fail_msg("create %s: %s", p, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static void xsymlink(const char *base, const char *rel, const char *target)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (symlink(target, p) != 0)
		fail_msg("symlink %s: %s", p, strerror(errno));
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/var/tmp/ward-translate-XXXXXX", home[PATH_MAX];
	char *real;

	if (!fx || !mkdtemp(tmpl))
		return -1;
	real = realpath(tmpl, NULL);
	if (!real || strlen(real) >= sizeof(fx->base))
		return -1;
	strcpy(fx->base, real);
	free(real);
	/*
	 * ws/            the workspace, a git repository
	 * home/          $HOME: .ssh, .config (no ward yet), other
	 * out/           outside every root
	 */
	xmkdir(fx->base, "ws");
	xmkdir(fx->base, "ws/.git");
	xmkdir(fx->base, "ws/.git/hooks");
	xmkdir(fx->base, "ws/.git/objects");
	xwrite(fx->base, "ws/.git/config", "[core]\n");
	xwrite(fx->base, "ws/.git/HEAD", "ref: refs/heads/main\n");
	xmkdir(fx->base, "ws/sec");
	xwrite(fx->base, "ws/sec/key", "s\n");
	xmkdir(fx->base, "ws/a");
	xmkdir(fx->base, "ws/a/b");
	xwrite(fx->base, "ws/a/x.pem", "x\n");
	xwrite(fx->base, "ws/a/b/y.pem", "y\n");
	xwrite(fx->base, "ws/top.pem", "t\n");
	xwrite(fx->base, "ws/keep.txt", "k\n");
	xsymlink(fx->base, "ws/link.pem", "a/x.pem");
	xsymlink(fx->base, "ws/etc", "/etc");
	xmkdir(fx->base, "home");
	xmkdir(fx->base, "home/.ssh");
	xwrite(fx->base, "home/.ssh/id_rsa", "id\n");
	xmkdir(fx->base, "home/.config");
	xwrite(fx->base, "home/other", "o\n");
	xmkdir(fx->base, "out");
	xmkdir(fx->base, "out/ro");
	snprintf(home, sizeof(home), "%s/home", fx->base);
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_STATE_HOME");
	unsetenv("TMPDIR");
	ward_xlate_set_limits(NULL);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[PATH_MAX + 32];

	ward_policy_free(fx->policy);
	ward_rules_free(fx->rules);
	if (strncmp(fx->base, "/var/tmp/ward-translate-", 24) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->base);
		if (system(cmd) != 0)
			print_message("warning: could not remove %s\n",
				      fx->base);
	}
	ward_xlate_set_limits(NULL);
	free(fx);
	return 0;
}

/* "@BASE@/rel" → the fixture path, in a static rotating buffer. */
static const char *P(const struct fx *fx, const char *rel)
{
	static char bufs[8][PATH_MAX];
	static int k;
	char *b = bufs[k++ % 8];

	if (snprintf(b, PATH_MAX, "%s/%s", fx->base, rel) >= PATH_MAX)
		fail_msg("path too long: %s", rel);
	return b;
}

/*
 * A policy of @mode on workspace @ws_rel with the rules in @text
 * (newline-separated; "@BASE@" replaced by the fixture path).
 */
static ward_policy *policy_with(struct fx *fx, enum ward_mode mode,
				const char *ws_rel, const char *text)
{
	struct ward_rules_env env = {0};
	char buf[8192], *o = buf;
	const char *s;

	ward_policy_free(fx->policy);
	ward_rules_free(fx->rules);
	fx->policy = NULL;
	fx->rules = NULL;
	for (s = text; *s && o < buf + sizeof(buf) - PATH_MAX;) {
		if (strncmp(s, "@BASE@", 6) == 0) {
			o += sprintf(o, "%s", fx->base);
			s += 6;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	env.workspace = P(fx, ws_rel);
	assert_int_equal(ward_rules_new(&fx->rules), 0);
	if (ward_rules_add_text(fx->rules, buf, &env, NULL) != 0)
		fail_msg("rules: %s", ward_error_last());
	assert_int_equal(ward_policy_new(&fx->policy, mode, P(fx, ws_rel)), 0);
	assert_int_equal(ward_policy_set_tmpdir(fx->policy, NULL), 0);
	assert_int_equal(ward_policy_set_rules(fx->policy, fx->rules), 0);
	return fx->policy;
}

/* Replace every occurrence of @from in the malloc'd @s by @to. */
static char *replace_all(char *s, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to), count = 0;
	const char *r;
	char *out, *w;

	for (r = s; (r = strstr(r, from)); r += fl)
		count++;
	out = malloc(strlen(s) + count * tl + 1);
	assert_non_null(out);
	w = out;
	for (r = s;;) {
		const char *hit = strstr(r, from);
		size_t n = hit ? (size_t)(hit - r) : strlen(r);

		memcpy(w, r, n);
		w += n;
		if (!hit)
			break;
		memcpy(w, to, tl);
		w += tl;
		r = hit + fl;
	}
	*w = '\0';
	free(s);
	return out;
}

/* One string per line; frees @v. */
static char *join_lines(char **v)
{
	size_t len = 1;
	char *out;

	for (size_t i = 0; v[i]; i++)
		len += strlen(v[i]) + 1;
	out = calloc(1, len);
	assert_non_null(out);
	for (size_t i = 0; v[i]; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	ward_strv_free(v);
	return out;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* Compare @got (consumed; fixture path → @BASE@) with golden @name. */
static void check_golden(const struct fx *fx, const char *name, char *got)
{
	const char *dir = getenv("WARD_GOLDEN_DIR");
	const char *slash = strrchr(__FILE__, '/');
	char path[PATH_MAX];
	char *want;

	got = replace_all(got, fx->base, "@BASE@");
	if (dir)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%.*s/golden/%s",
			 slash ? (int)(slash - __FILE__) : 1,
			 slash ? __FILE__ : ".", name);
	if (getenv("WARD_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "we");

		assert_non_null(f);
		fputs(got, f);
		assert_int_equal(fclose(f), 0);
		print_message("updated %s\n", path);
	}
	want = read_file(path);
	if (!want) {
		free(got);
		fail_msg("cannot read golden file %s: %s", path,
			 strerror(errno));
	}
	if (strcmp(want, got) != 0) {
		print_message("golden %s differs.\n--- want\n%s--- got\n%s",
			      path, want, got);
		free(want);
		free(got);
		fail_msg("%s differs (WARD_UPDATE_GOLDEN=1 to accept)", name);
	}
	free(want);
	free(got);
}

static ssize_t find_opt(char **argv, const char *opt, const char *a,
			const char *b)
{
	for (size_t i = 0; argv[i]; i++) {
		if (strcmp(argv[i], opt) != 0 || !argv[i + 1] ||
		    strcmp(argv[i + 1], a) != 0)
			continue;
		if (!b || (argv[i + 2] && strcmp(argv[i + 2], b) == 0))
			return (ssize_t)i;
	}
	return -1;
}

/* @s is in @v, as a grant or as an optional grant ("?PATH", landlock.h). */
static bool strv_has(char **v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++) {
		const char *e = v[i][0] == WARD_LL_OPTIONAL ? v[i] + 1 : v[i];

		if (strcmp(e, s) == 0)
			return true;
	}
	return false;
}

/* The number of lines of @v holding every one of the NULL-ended words. */
static size_t count_lines(char **v, ...)
{
	size_t n = 0;

	for (size_t i = 0; v && v[i]; i++) {
		va_list ap;
		const char *w;
		bool all = true;

		va_start(ap, v);
		while ((w = va_arg(ap, const char *)))
			all = all && strstr(v[i], w);
		va_end(ap);
		n += all;
	}
	return n;
}

static void dump(const char *what, char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		print_message("%s: %s\n", what, v[i]);
}

static char **bwrap_argv(ward_policy *p)
{
	char **argv = NULL;

	if (ward_profile_bwrap(&argv, p, BWRAP, -1, command) != 0)
		fail_msg("bwrap profile: %s", ward_error_last());
	return argv;
}

static char **warnings(ward_policy *p, enum ward_runner r)
{
	char **w = NULL;

	if (ward_policy_warnings(&w, p, r) != 0)
		fail_msg("warnings: %s", ward_error_last());
	return w;
}

static const char RULES[] = "-- sec\n"
			    "r- **/*.pem\n"
			    "rw @BASE@/out\n"
			    "r- @BASE@/out/ro\n"
			    "-- @BASE@/home/.ssh\n"
			    "r- keep.txt\n"
			    "-- missing.env\n";

/* --- goldens --------------------------------------------------------------- */

static void t_golden_bwrap(void **state)
{
	struct fx *fx = *state;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", RULES);
	check_golden(fx, "rules-bwrap-workspace-write.argv",
		     join_lines(bwrap_argv(fx->policy)));
	policy_with(fx, WARD_MODE_READ_ONLY, "ws", RULES);
	check_golden(fx, "rules-bwrap-read-only.argv",
		     join_lines(bwrap_argv(fx->policy)));
}

static void t_golden_seatbelt(void **state)
{
	struct fx *fx = *state;
	char *text = NULL;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", RULES);
	assert_int_equal(ward_profile_seatbelt(&text, fx->policy), 0);
	check_golden(fx, "rules-seatbelt-workspace-write.sb", text);
	policy_with(fx, WARD_MODE_READ_ONLY, "ws", RULES);
	assert_int_equal(ward_profile_seatbelt(&text, fx->policy), 0);
	check_golden(fx, "rules-seatbelt-read-only.sb", text);
}

/*
 * Landlock's read grants depend on the machine's "/" (the complement lists
 * its entries), so the rules golden has no `--` outside the roots; the
 * complement has its own property test below.
 */
static void t_golden_landlock(void **state)
{
	struct fx *fx = *state;
	char **argv = NULL;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- sec\nr- **/*.pem\nrw @BASE@/out\nr- @BASE@/out/ro\n");
	assert_int_equal(
	    ward_profile_landlock(&argv, fx->policy, LAUNCHER, command), 0);
	check_golden(fx, "rules-landlock-workspace-write.argv",
		     join_lines(argv));
}

static void t_golden_warnings(void **state)
{
	struct fx *fx = *state;
	static const enum ward_runner runners[] = {
	    WARD_RUNNER_BWRAP, WARD_RUNNER_LANDLOCK, WARD_RUNNER_SEATBELT};
	char name[64];

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", RULES);
	for (size_t i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "rules-warnings-%s.txt",
			 ward_runner_name(runners[i]));
		check_golden(fx, name,
			     join_lines(warnings(fx->policy, runners[i])));
	}
}

/* --- bwrap ----------------------------------------------------------------- */

/*
 * Order is precedence: writable binds, then pins, then read-only binds,
 * then hidden mounts. `rw` widens; `r-` inside it wins; `--` wins over all.
 */
static void t_bwrap_order(void **state)
{
	struct fx *fx = *state;
	char **argv;
	ssize_t bind_out, ro_out, ro_pem, hide_sec, hide_ssh, pin_a, ws;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", RULES);
	argv = bwrap_argv(fx->policy);
	ws = find_opt(argv, "--bind", P(fx, "ws"), P(fx, "ws"));
	bind_out = find_opt(argv, "--bind", P(fx, "out"), P(fx, "out"));
	ro_out = find_opt(argv, "--ro-bind", P(fx, "out/ro"), P(fx, "out/ro"));
	ro_pem = find_opt(argv, "--ro-bind", P(fx, "ws/a/b/y.pem"),
			  P(fx, "ws/a/b/y.pem"));
	pin_a = find_opt(argv, "--bind", P(fx, "ws/a"), P(fx, "ws/a"));
	hide_sec = find_opt(argv, "--tmpfs", P(fx, "ws/sec"), "--remount-ro");
	hide_ssh = find_opt(argv, "--tmpfs", P(fx, "home/.ssh"), NULL);
	assert_true(ws > 0 && bind_out > 0);
	assert_true(pin_a > bind_out && pin_a > ws);
	assert_true(ro_out > bind_out && ro_pem > pin_a);
	assert_true(hide_sec > ro_pem && hide_ssh > ro_out);
	/* The symlink link.pem is not a match: mounts would follow it. */
	assert_int_equal(
	    find_opt(argv, "--ro-bind", P(fx, "ws/link.pem"), NULL), -1);
	/* keep.txt is read-only, the git traps too, with a pin on .git. */
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/keep.txt"), NULL) >
		    0);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/.git/hooks"), NULL) >
		    0);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/.git/config"), NULL) >
		    0);
	assert_true(find_opt(argv, "--bind", P(fx, "ws/.git"), NULL) > 0);
	/* The pem files inside a read-only ... all three matches. */
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/a/x.pem"), NULL) > 0);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/top.pem"), NULL) > 0);
	ward_strv_free(argv);
}

/* read-only: no `rw` root, no `r-` (nothing is writable), `--` kept. */
static void t_bwrap_read_only(void **state)
{
	struct fx *fx = *state;
	char **argv;

	policy_with(fx, WARD_MODE_READ_ONLY, "ws", RULES);
	argv = bwrap_argv(fx->policy);
	assert_int_equal(find_opt(argv, "--bind", P(fx, "out"), NULL), -1);
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "out/ro"), NULL),
			 -1);
	assert_int_equal(
	    find_opt(argv, "--ro-bind", P(fx, "ws/.git/hooks"), NULL), -1);
	assert_true(find_opt(argv, "--tmpfs", P(fx, "ws/sec"), NULL) > 0);
	assert_true(find_opt(argv, "--tmpfs", P(fx, "home/.ssh"), NULL) > 0);
	ward_strv_free(argv);
}

/* `--` over `r-`: nested read-only paths inside a hidden one vanish. */
static void t_precedence_nested(void **state)
{
	struct fx *fx = *state;
	char **argv;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- a\nr- a/x.pem\nr- sec\n-- sec/key\n");
	argv = bwrap_argv(fx->policy);
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "ws/a/x.pem"), NULL),
			 -1);
	assert_true(find_opt(argv, "--tmpfs", P(fx, "ws/a"), NULL) > 0);
	assert_true(
	    find_opt(argv, "--ro-bind", P(fx, "ws/sec"), NULL) <
	    find_opt(argv, "--ro-bind", "/dev/null", P(fx, "ws/sec/key")));
	ward_strv_free(argv);
	/* Same path twice: the stronger wins. */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- sec\n-- sec\n");
	argv = bwrap_argv(fx->policy);
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "ws/sec"), NULL),
			 -1);
	assert_true(find_opt(argv, "--tmpfs", P(fx, "ws/sec"), NULL) > 0);
	ward_strv_free(argv);
}

/* A glob without `**` is not walked deeper than it can match. */
static void t_glob_depth(void **state)
{
	struct fx *fx = *state;
	char **argv;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- *.pem\n");
	argv = bwrap_argv(fx->policy);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/top.pem"), NULL) > 0);
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "ws/a/x.pem"), NULL),
			 -1);
	ward_strv_free(argv);
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- */*/*.pem\n");
	argv = bwrap_argv(fx->policy);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/a/b/y.pem"), NULL) >
		    0);
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "ws/top.pem"), NULL),
			 -1);
	ward_strv_free(argv);
}

/*
 * The walk's own matcher (last component first, regexec only when needed)
 * against ward_rules_match() on every path of a tree: each top-most
 * hidden or read-only path, and nothing else, becomes a mount.
 */
static void check_tree(struct fx *fx, char **argv, const char *rel, int depth)
{
	char path[PATH_MAX], parent[PATH_MAX], *slash;
	enum ward_access a, pa;
	struct dirent *e;
	struct stat st;
	DIR *d;
	bool hidden, ro;

	snprintf(path, sizeof(path), "%s", P(fx, rel));
	if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode))
		return;
	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	*slash = '\0';
	a = ward_rules_match(fx->rules, path);
	pa = ward_rules_match(fx->rules, parent);
	hidden = find_opt(argv, "--tmpfs", path, "--remount-ro") > 0 ||
		 find_opt(argv, "--ro-bind", "/dev/null", path) > 0;
	ro = find_opt(argv, "--ro-bind", path, path) > 0;
	if (depth > 0) {
		bool want_hidden = a == WARD_ACCESS_NONE && pa != a;
		bool want_ro = a == WARD_ACCESS_RO && pa != WARD_ACCESS_RO &&
			       pa != WARD_ACCESS_NONE;

		if (hidden != want_hidden || ro != want_ro)
			fail_msg("%s: hidden %d ro %d, want %d %d", path,
				 hidden, ro, want_hidden, want_ro);
	}
	if (!S_ISDIR(st.st_mode))
		return;
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name);
		check_tree(fx, argv, sub, depth + 1);
	}
	closedir(d);
}

static void t_glob_matcher(void **state)
{
	static const char *const names[] = {
	    "k.pem",  "x.pem.bak", ".pem",     "id_rsa", "id_",	    "aid_x",
	    "secret", "secrets",   "Makefile", "a.lock", "b.locks", "q1",
	    "q22",    "ab",	   "cb",       "pem",
	};
	static const char *const dirs[] = {
	    "d", "d/e", "d/e/f", "secrets", "vendor", "vendor/x", "q1"};
	struct fx *fx = *state;
	char rel[PATH_MAX], **argv;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		snprintf(rel, sizeof(rel), "out/%s", dirs[i]);
		xmkdir(fx->base, rel);
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		for (size_t j = 0; j < sizeof(names) / sizeof(*names); j++) {
			struct stat st;

			snprintf(rel, sizeof(rel), "out/%s/%s", dirs[i],
				 names[j]);
			if (lstat(P(fx, rel), &st) != 0)
				xwrite(fx->base, rel, "x");
		}
	}
	xsymlink(fx->base, "out/d/link.pem", "k.pem");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "out",
		    "-- **/*.pem\n"
		    "r- **/id_*\n"
		    "-- d/*/secret\n"
		    "r- **/q?\n"
		    "r- **/[ac]b\n"
		    "-- vendor/**\n"
		    "r- */e/**/Makefile\n"
		    "r- secrets\n"
		    "-- secrets/*.lock\n"
		    "r- **/d/e\n");
	argv = bwrap_argv(fx->policy);
	check_tree(fx, argv, "out", 0);
	ward_strv_free(argv);
}

/* The walk stops at its bound, with a warning naming the rule. */
static void t_glob_bound(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate_limits lim = {3, 10000, 4096, false};
	char **w;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "-- **/*.pem\n");
	ward_xlate_set_limits(&lim);
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	ward_xlate_set_limits(NULL);
	dump("warning", w);
	assert_int_equal(count_lines(w, "bwrap", "\"-- **/*.pem\"",
				     "stopped at its bound", NULL),
			 1);
	ward_strv_free(w);
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	assert_int_equal(count_lines(w, "stopped", NULL), 0);
	assert_int_equal(count_lines(w, "bwrap", "\"-- **/*.pem\"",
				     "covers only what it matches",
				     "(3 paths below", "created later", NULL),
			 1);
	ward_strv_free(w);
}

/*
 * Too many mounts: never silently dropped — the plan is refused (a rule
 * ward cannot enforce never quietly becomes no rule), and a warning says
 * why.
 */
static void t_target_bound(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate_limits lim = {100000, 10000, 2, false};
	struct ward_xlate *x = NULL;
	char **w, **argv;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- **/*.pem\n");
	ward_xlate_set_limits(&lim);
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	argv = bwrap_argv(fx->policy);
	assert_int_equal(ward_xlate_new(&x, fx->policy, WARD_RUNNER_BWRAP), 0);
	ward_xlate_set_limits(NULL);
	assert_non_null(ward_xlate_refusal(x));
	assert_non_null(strstr(ward_xlate_refusal(x), "refuses to run"));
	ward_xlate_free(x);
	assert_int_equal(
	    count_lines(w, "more than 2 paths", "1 more", "refuses", NULL), 1);
	/* The protected paths are never the ones dropped. */
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/.git/hooks"), NULL) >
		    0);
	ward_strv_free(w);
	ward_strv_free(argv);
}

/* Everything a translation says and does, one line each. */
static char *plan_text(const struct ward_xlate *x)
{
	struct ward_strv sv = {0};
	char **ro = NULL, **rw = NULL, **v = NULL, *sb = NULL;
	size_t sblen = 0;
	FILE *f;

	ward_strv_push_all(&sv, ward_xlate_warnings(x));
	ward_strv_push(&sv, "-- describe");
	ward_strv_push_all(&sv, ward_xlate_describe(x));
	ward_strv_push(&sv, "-- partial");
	ward_strv_push_all(&sv, ward_xlate_partial(x));
	ward_strv_push(&sv, ward_xlate_refusal(x) ? ward_xlate_refusal(x)
						  : "-- no refusal");
	ward_strv_push(&sv, "-- hides");
	ward_strv_push_all(&sv, ward_xlate_landlock_hides(x));
	ward_strv_push(&sv, "-- bwrap");
	ward_xlate_bwrap_push(&sv, x);
	if (ward_xlate_landlock(&ro, &rw, x) == 0) {
		ward_strv_push(&sv, "-- landlock");
		ward_strv_push_all(&sv, ro);
		ward_strv_push(&sv, "-- rw");
		ward_strv_push_all(&sv, rw);
	}
	ward_strv_free(ro);
	ward_strv_free(rw);
	f = open_memstream(&sb, &sblen);
	assert_non_null(f);
	if (ward_xlate_seatbelt(f, x) != 0)
		fputs("-- no seatbelt", f);
	fclose(f);
	ward_strv_push(&sv, sb);
	free(sb);
	assert_int_equal(ward_strv_finish(&v, &sv), 0);
	return join_lines(v);
}

/*
 * The glob walk reads what the call's walk for repositories kept
 * (listings.h) instead of the directories: the same plan, warnings and
 * description as a walk that reads every directory itself, on every
 * runner, with the bound of the walk reached or not, for a tree where
 * the first walk left parts alone (a `.git`, a released directory, a
 * link to a directory, a glob outside every root).
 */
static void t_glob_listings(void **state)
{
	static const enum ward_runner runners[] = {
	    WARD_RUNNER_BWRAP, WARD_RUNNER_LANDLOCK, WARD_RUNNER_SEATBELT};
	static const size_t bounds[] = {WARD_XLATE_MAX_ENTRIES, 7, 40};
	struct fx *fx = *state;
	char *const released[] = {(char *)P(fx, "ws/released"), NULL};

	xwrite(fx->base, "ws/.git/objects/o.pem", "o\n");
	xmkdir(fx->base, "ws/deep");
	xmkdir(fx->base, "ws/deep/d1");
	xmkdir(fx->base, "ws/deep/d1/d2");
	xwrite(fx->base, "ws/deep/d1/d2/k.pem", "k\n");
	xwrite(fx->base, "ws/deep/d1/secret", "s\n");
	xwrite(fx->base, "ws/deep/d1/a.key", "a\n");
	xmkdir(fx->base, "ws/released");
	xwrite(fx->base, "ws/released/r.pem", "r\n");
	xsymlink(fx->base, "ws/ln", "deep");
	xmkdir(fx->base, "out/sub");
	xwrite(fx->base, "out/sub/o.pem", "o\n");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- **/*.pem\n"
		    "r- **/*.key\n"
		    "-- deep/*/secret\n"
		    "r- **/d2\n"
		    "rw @BASE@/out\n"
		    "-- @BASE@/out/**/*.pem\n"
		    "-- @BASE@/home/**/id_*\n");
	assert_int_equal(ward_policy_set_unprotected(fx->policy, released), 0);
	for (size_t b = 0; b < sizeof(bounds) / sizeof(*bounds); b++) {
		struct ward_xlate_limits lim = {bounds[b], 100000, 4096, false};

		ward_xlate_set_limits(&lim);
		for (size_t r = 0; r < sizeof(runners) / sizeof(*runners);
		     r++) {
			for (int inner = 0; inner < 2; inner++) {
				const struct ward_runner_ops *ops =
				    ward_runner_ops(runners[r]);
				struct ward_facts *f0 = NULL, *f1 = NULL;
				struct ward_xlate *x0 = NULL, *x1 = NULL;
				char *t0, *t1;

				assert_int_equal(
				    ward_facts_new(&f0, fx->policy, 0), 0);
				assert_int_equal(
				    ward_facts_new(&f1, fx->policy,
						   WARD_FACTS_LISTINGS),
				    0);
				assert_null(atomic_load(&f0->listings));
				assert_non_null(atomic_load(&f1->listings));
				assert_int_equal(
				    ward_xlate_new_ops(&x0, fx->policy, f0, ops,
						       inner),
				    0);
				assert_int_equal(
				    ward_xlate_new_ops(&x1, fx->policy, f1, ops,
						       inner),
				    0);
				/* Taken, and not kept with the plan. */
				assert_null(atomic_load(&f1->listings));
				t0 = plan_text(x0);
				t1 = plan_text(x1);
				if (strcmp(t0, t1) != 0)
					fail_msg("%s (inner %d, bound %zu): "
						 "without listings\n%s\nwith "
						 "them\n%s",
						 ward_runner_name(runners[r]),
						 inner, bounds[b], t0, t1);
				/* Seatbelt matches globs itself: no walk. */
				if (b == 0 &&
				    runners[r] != WARD_RUNNER_SEATBELT)
					assert_non_null(
					    strstr(t0, P(fx, "ws/.git/objects/"
							     "o.pem")));
				free(t0);
				free(t1);
				ward_xlate_free(x0);
				ward_xlate_free(x1);
				ward_facts_unref(f0);
				ward_facts_unref(f1);
			}
		}
	}
	ward_xlate_set_limits(NULL);
}

/* --- protected paths ------------------------------------------------------- */

static void t_protect_git_toggle(void **state)
{
	struct fx *fx = *state;
	char **argv;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_true(ward_policy_protect_git(fx->policy));
	argv = bwrap_argv(fx->policy);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws/.git/hooks"), NULL) >
		    0);
	/* The index, objects, refs and logs stay writable. */
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "ws/.git"), NULL),
			 -1);
	assert_int_equal(
	    find_opt(argv, "--ro-bind", P(fx, "ws/.git/objects"), NULL), -1);
	ward_strv_free(argv);
	assert_int_equal(ward_policy_set_protect_git(fx->policy, false), 0);
	argv = bwrap_argv(fx->policy);
	assert_int_equal(
	    find_opt(argv, "--ro-bind", P(fx, "ws/.git/hooks"), NULL), -1);
	assert_int_equal(find_opt(argv, "--bind", P(fx, "ws/.git"), NULL), -1);
	ward_strv_free(argv);
}

/* A `.git` file (worktree) is followed to the common git directory. */
static void t_protect_worktree(void **state)
{
	struct fx *fx = *state;
	struct ward_protected *v = NULL;
	size_t n = 0;
	char line[PATH_MAX + 16];
	char **argv;

	xmkdir(fx->base, "main");
	xmkdir(fx->base, "main/.git");
	xmkdir(fx->base, "main/.git/hooks");
	xwrite(fx->base, "main/.git/config", "[core]\n");
	xmkdir(fx->base, "main/.git/worktrees");
	xmkdir(fx->base, "main/.git/worktrees/wt");
	xwrite(fx->base, "main/.git/worktrees/wt/commondir", "../..\n");
	xmkdir(fx->base, "wt");
	snprintf(line, sizeof(line), "gitdir: %s/main/.git/worktrees/wt\n",
		 fx->base);
	xwrite(fx->base, "wt/.git", line);
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "wt", "rw @BASE@/main\n");
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	for (size_t i = 0; i < n; i++)
		print_message("protected: %s (%s)\n", v[i].path, v[i].what);
	free(v);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "wt/.git")),
			 WARD_ACCESS_RO);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "main/.git/hooks/pre-commit")),
	    WARD_ACCESS_RO);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "main/.git/config")),
	    WARD_ACCESS_RO);
	assert_int_equal(
	    ward_protect_match(fx->policy,
			       P(fx, "main/.git/worktrees/wt/config.worktree")),
	    WARD_ACCESS_RO);
	assert_int_equal(ward_protect_match(
			     fx->policy, P(fx, "main/.git/worktrees/wt/HEAD")),
			 WARD_ACCESS_DEFAULT);
	argv = bwrap_argv(fx->policy);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "wt/.git"), NULL) > 0);
	assert_true(
	    find_opt(argv, "--ro-bind", P(fx, "main/.git/hooks"), NULL) > 0);
	assert_true(find_opt(argv, "--bind", P(fx, "main/.git"), NULL) > 0);
	ward_strv_free(argv);
}

/*
 * ward's own configuration directory is never writable: not through an
 * explicit `rw`, not with the home directory as workspace. bwrap binds it
 * read-only and pins its parents; when it is missing, the plan binds it
 * anyway and the apply step — never the planning — creates it (0700).
 */
static void t_protect_home_bwrap(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate *x = NULL;
	struct stat st;
	char **argv;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "rw @BASE@/home/.config\n");
	assert_int_equal(stat(P(fx, "home/.config/ward"), &st), -1);
	argv = bwrap_argv(fx->policy);
	assert_int_equal(stat(P(fx, "home/.config/ward"), &st), -1);
	assert_int_equal(ward_xlate_new(&x, fx->policy, WARD_RUNNER_BWRAP), 0);
	assert_int_equal(stat(P(fx, "home/.config/ward"), &st), -1);
	assert_int_equal(ward_xlate_apply(x), 0);
	ward_xlate_free(x);
	assert_int_equal(stat(P(fx, "home/.config/ward"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_true(
	    find_opt(argv, "--bind", P(fx, "home/.config"), NULL) <
	    find_opt(argv, "--ro-bind", P(fx, "home/.config/ward"), NULL));
	ward_strv_free(argv);
	/* The state directory (session store): $HOME/.local/state/ward,
	 * workspace = $HOME. Hidden: an empty read-only tmpfs. */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "home", "");
	argv = bwrap_argv(fx->policy);
	assert_true(find_opt(argv, "--tmpfs", P(fx, "home/.local/state/ward"),
			     NULL) > 0);
	assert_true(find_opt(argv, "--remount-ro",
			     P(fx, "home/.local/state/ward"), NULL) > 0);
	assert_true(find_opt(argv, "--bind", P(fx, "home/.local"), NULL) > 0);
	assert_true(find_opt(argv, "--bind", P(fx, "home/.local/state"), NULL) >
		    0);
	ward_strv_free(argv);
	/* $XDG_CONFIG_HOME moves it. */
	setenv("XDG_CONFIG_HOME", P(fx, "out/cfg"), 1);
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "rw @BASE@/out\n");
	argv = bwrap_argv(fx->policy);
	unsetenv("XDG_CONFIG_HOME");
	assert_true(find_opt(argv, "--ro-bind", P(fx, "out/cfg/ward"), NULL) >
		    0);
	ward_strv_free(argv);
}

/* Landlock carves ward's directories out of a root that holds them. */
/* The index of "OPT PATH" in the launcher's hide pairs, or -1. */
static long hide_at(char *const *h, const char *opt, const char *path)
{
	for (size_t i = 0; h[i] && h[i + 1]; i += 2) {
		if (strcmp(h[i], opt) == 0 && strcmp(h[i + 1], path) == 0)
			return (long)i;
	}
	return -1;
}

static void t_protect_home_landlock(void **state)
{
	struct ward_xlate_limits no_mounts = {WARD_XLATE_MAX_ENTRIES,
					      WARD_XLATE_MAX_MS,
					      WARD_XLATE_MAX_TARGETS, true};
	struct fx *fx = *state;
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL, **w;

	xmkdir(fx->base, "home/.config/ward");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "home", "");
	/* Where the launcher can mount: the root whole, ward's directory
	 * mounted over (read-only), its parent pinned. */
	if (ward_hide_possible()) {
		char *const *h;

		assert_int_equal(
		    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
		assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
		h = ward_xlate_landlock_hides(plan);
		assert_true(strv_has(rw, P(fx, "home")));
		assert_true(
		    hide_at(h, "--hide-ro", P(fx, "home/.config/ward")) >= 0);
		assert_true(hide_at(h, "--pin", P(fx, "home/.config")) >= 0);
		ward_xlate_free(plan);
		ward_strv_free(ro);
		ward_strv_free(rw);
		w = warnings(fx->policy, WARD_RUNNER_LANDLOCK);
		assert_int_equal(
		    count_lines(w, "nothing new can be created", NULL), 0);
		ward_strv_free(w);
	}
	/* Without mounts (a workspace of $HOME is not a temporary
	 * directory: carved out, the cost warned). */
	ward_xlate_set_limits(&no_mounts);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	dump("rw", rw);
	assert_false(strv_has(rw, P(fx, "home")));
	assert_false(strv_has(rw, P(fx, "home/.config")));
	assert_false(strv_has(rw, P(fx, "home/.config/ward")));
	assert_true(strv_has(rw, P(fx, "home/other")));
	assert_true(strv_has(rw, P(fx, "home/.ssh")));
	assert_true(strv_has(rw, "/dev/null"));
	/* .local does not exist: nothing may create it. */
	assert_false(strv_has(rw, P(fx, "home/.local")));
	assert_true(strv_has(ro, "/"));
	ward_strv_free(ro);
	ward_strv_free(rw);
	w = warnings(fx->policy, WARD_RUNNER_LANDLOCK);
	ward_xlate_set_limits(NULL);
	assert_int_equal(count_lines(w, "landlock", "keeps",
				     P(fx, "home/.config/ward"),
				     "nothing new can be created", NULL),
			 1);
	ward_strv_free(w);
	/* A root inside ward's directory is not writable at all. */
	xmkdir(fx->base, "home/.config/ward/proj");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "home/.config/ward/proj",
		    "");
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_false(strv_has(rw, P(fx, "home/.config/ward/proj")));
	ward_strv_free(ro);
	ward_strv_free(rw);
}

/*
 * HOME under /tmp (CI images, arbitrary-uid containers): ward's
 * directories lie in the writable root /tmp. With mounts the launcher
 * hides them and /tmp is granted whole; without, the plan is refused with
 * the fix — never /tmp's top level taken away (its entries granted one by
 * one).
 */
static void t_protect_home_in_tmp(void **state)
{
	struct ward_xlate_limits no_mounts = {WARD_XLATE_MAX_ENTRIES,
					      WARD_XLATE_MAX_MS,
					      WARD_XLATE_MAX_TARGETS, true};
	struct fx *fx = *state;
	char home[] = "/tmp/ward-translate-home.XXXXXX", state_dir[PATH_MAX];
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL;
	const char *why;

	assert_non_null(mkdtemp(home));
	setenv("HOME", home, 1);
	snprintf(state_dir, sizeof(state_dir), "%s/.local/state/ward", home);
	xmkdir(home, ".local");
	xmkdir(home, ".local/state");
	xmkdir(home, ".local/state/ward");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	if (ward_hide_possible()) {
		char *const *h;

		assert_int_equal(
		    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
		assert_null(ward_xlate_refusal(plan));
		assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
		assert_true(strv_has(rw, "/tmp"));
		h = ward_xlate_landlock_hides(plan);
		assert_true(hide_at(h, "--hide", state_dir) >= 0);
		ward_xlate_free(plan);
		ward_strv_free(ro);
		ward_strv_free(rw);
	}
	ward_xlate_set_limits(&no_mounts);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	why = ward_xlate_refusal(plan);
	assert_non_null(why);
	print_message("refusal: %s\n", why);
	assert_non_null(strstr(why, "lies inside the writable root /tmp"));
	assert_non_null(strstr(why, "set XDG_STATE_HOME and XDG_CONFIG_HOME"));
	ward_xlate_free(plan);
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", home);
		assert_int_equal(system(cmd), 0);
	}
	snprintf(state_dir, sizeof(state_dir), "%s/home", fx->base);
	setenv("HOME", state_dir, 1);
}

/* --- landlock --------------------------------------------------------------- */

/*
 * A literal `--` outside the roots: read is granted on every entry along
 * the way but the hidden one; never on a directory holding it, never
 * through a symlink, never on anything inside it.
 */
static void t_landlock_complement(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL;
	const char *hidden = P(fx, "home/.ssh");

	xsymlink(fx->base, "home/ssh-link", ".ssh");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- @BASE@/home/.ssh\n");
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_false(strv_has(ro, "/"));
	assert_false(strv_has(ro, "/var"));
	assert_false(strv_has(ro, P(fx, "home")));
	assert_true(strv_has(ro, "/usr"));
	assert_true(strv_has(ro, P(fx, "home/other")));
	assert_true(strv_has(ro, P(fx, "home/.config")));
	assert_true(strv_has(ro, P(fx, "ws")));
	assert_true(strv_has(ro, P(fx, "out")));
	assert_false(strv_has(ro, P(fx, "home/ssh-link")));
	for (size_t i = 0; ro[i]; i++) {
		const char *g =
		    ro[i][0] == WARD_LL_OPTIONAL ? ro[i] + 1 : ro[i];
		struct stat st;

		if (strncmp(g, hidden, strlen(hidden)) == 0)
			fail_msg("%s is granted", g);
		assert_int_equal(lstat(g, &st), 0);
		assert_false(S_ISLNK(st.st_mode));
	}
	/* The writable roots are kept. */
	assert_true(strv_has(rw, P(fx, "ws")));
	ward_strv_free(ro);
	ward_strv_free(rw);
}

/* Whether a grant (plain or optional) lies within @path. */
static bool grant_within(char **v, const char *path)
{
	for (size_t i = 0; v && v[i]; i++) {
		const char *g = v[i][0] == WARD_LL_OPTIONAL ? v[i] + 1 : v[i];

		if (util_path_within(g, path))
			return true;
	}
	return false;
}

/*
 * Inside a writable root the rules are hidden by the launcher's mounts:
 * `--` as --hide, `r-` (glob matches too) as --hide-ro, read-only binds
 * first; no rule is partial, and the grants stay "/" and the root.
 */
static void t_landlock_hides(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL;
	char *const *h;

	if (!ward_hide_possible())
		skip(); /* no mount namespace here: see the next tests */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- sec\nr- **/*.pem\nr- keep.txt\n-- missing.env\n");
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_null(ward_xlate_refusal(plan));
	h = ward_xlate_landlock_hides(plan);
	assert_true(hide_at(h, "--hide", P(fx, "ws/sec")) >= 0);
	assert_true(hide_at(h, "--hide-ro", P(fx, "ws/keep.txt")) >= 0);
	assert_true(hide_at(h, "--hide-ro", P(fx, "ws/top.pem")) >= 0);
	assert_true(hide_at(h, "--hide-ro", P(fx, "ws/a/x.pem")) >= 0);
	assert_true(hide_at(h, "--hide-ro", P(fx, "ws/a/x.pem")) <
		    hide_at(h, "--hide", P(fx, "ws/sec")));
	/* A missing literal cannot be mounted over: a warning says so. */
	assert_true(hide_at(h, "--hide", P(fx, "ws/missing.env")) < 0);
	for (char *const *l = ward_xlate_partial(plan); *l; l++) {
		assert_null(strstr(*l, "rule \"-- sec\""));
		assert_null(strstr(*l, "**/*.pem"));
		assert_null(strstr(*l, "keep.txt"));
	}
	assert_int_equal(count_lines((char **)ward_xlate_describe(plan),
				     "--hide ", P(fx, "ws/sec"), "-- sec",
				     NULL),
			 1);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_true(strv_has(rw, P(fx, "ws")));
	ward_strv_free(ro);
	ward_strv_free(rw);
}

/*
 * Literal rules are made canonical with their parent looked up once per
 * run of siblings: a linked parent and a link as the last component end
 * on the real path, as util_path_canon() would have it.
 */
static void t_landlock_literal_canon(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate *plan = NULL;
	char *const *h;

	if (!ward_hide_possible())
		skip();
	xmkdir(fx->base, "ws/real");
	xwrite(fx->base, "ws/real/f", "f");
	xwrite(fx->base, "ws/real/g", "g");
	xsymlink(fx->base, "ws/lnk", "real");
	xsymlink(fx->base, "ws/real/l", "g");
	policy_with(
	    fx, WARD_MODE_WORKSPACE_WRITE, "ws",
	    "-- lnk/f\n-- real/l\n-- real/missing\n-- lnk/../top.pem\n");
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	h = ward_xlate_landlock_hides(plan);
	assert_true(hide_at(h, "--hide", P(fx, "ws/real/f")) >= 0);
	assert_true(hide_at(h, "--hide", P(fx, "ws/real/g")) >= 0);
	assert_true(hide_at(h, "--hide", P(fx, "ws/lnk/f")) < 0);
	assert_true(hide_at(h, "--hide", P(fx, "ws/real/l")) < 0);
	assert_true(hide_at(h, "--hide", P(fx, "ws/real/missing")) < 0);
	for (size_t i = 0; h[i]; i++)
		print_message("%s\n", h[i]);
	ward_xlate_free(plan);
}

/*
 * No mount namespace (user namespaces denied, not root): the matches inside
 * the root are carved out of the grants — no grant reaches a `--` path, no
 * write grant an `r-` one — and nothing is mounted.
 */
static void t_landlock_no_mounts_complement(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate_limits lim = {100000, 10000, 4096, true};
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- sec\nr- keep.txt\n");
	ward_xlate_set_limits(&lim);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	assert_null(ward_xlate_refusal(plan));
	assert_null(ward_xlate_landlock_hides(plan)[0]);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_false(grant_within(ro, P(fx, "ws/sec")));
	assert_false(grant_within(rw, P(fx, "ws/sec")));
	assert_false(grant_within(rw, P(fx, "ws/keep.txt")));
	assert_false(strv_has(rw, P(fx, "ws")));
	assert_false(strv_has(ro, "/"));
	assert_true(grant_within(rw, P(fx, "ws/a")));
	ward_strv_free(ro);
	ward_strv_free(rw);
}

/*
 * No mount namespace and a complement over its budget: refused, naming the
 * rule — never run with the rule dropped.
 */
static void t_landlock_no_mounts_refused(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate_limits lim = {100000, 10000, 2, true};
	struct ward_xlate *plan = NULL;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "-- sec\n");
	ward_xlate_set_limits(&lim);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	assert_non_null(ward_xlate_refusal(plan));
	print_message("refusal: %s\n", ward_xlate_refusal(plan));
	assert_non_null(strstr(ward_xlate_refusal(plan), "rule \"-- sec\""));
	assert_non_null(strstr(ward_xlate_refusal(plan), "refuses to run"));
	ward_xlate_free(plan);
}

/*
 * A `--` outside the roots whose complement exceeds its budget: mounted
 * over instead (when the launcher can), "/" readable.
 */
static void t_landlock_outside_over_budget(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate_limits lim = {100000, 10000, 2, false};
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL;

	if (!ward_hide_possible())
		skip();
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- @BASE@/home/.ssh\n");
	ward_xlate_set_limits(&lim);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	assert_null(ward_xlate_refusal(plan));
	assert_true(hide_at(ward_xlate_landlock_hides(plan), "--hide",
			    P(fx, "home/.ssh")) >= 0);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_int_equal(ward_strv_len(ro), 1);
	assert_string_equal(ro[0], "/");
	ward_strv_free(ro);
	ward_strv_free(rw);
	/* ward's state directory inside a root ($HOME as the workspace) is
	 * mounted over too: "/" alone would leave it readable. */
	xmkdir(fx->base, "home/.local");
	xmkdir(fx->base, "home/.local/state");
	xmkdir(fx->base, "home/.local/state/ward");
	xmkdir(fx->base, "out/gone");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "home",
		    "-- @BASE@/out/gone\n");
	ward_xlate_set_limits(&lim);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	assert_null(ward_xlate_refusal(plan));
	assert_true(hide_at(ward_xlate_landlock_hides(plan), "--hide",
			    P(fx, "out/gone")) >= 0);
	assert_true(hide_at(ward_xlate_landlock_hides(plan), "--hide",
			    P(fx, "home/.local/state/ward")) >= 0);
	ward_xlate_free(plan);
}

/* The order every plan sorts by, byte by byte: '/' below every other
 * byte, a prefix first. */
static int path_cmp_ref(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;

		if (x != y) {
			x = x == '/' ? 1 : x;
			y = y == '/' ? 1 : y;
			return x < y ? -1 : 1;
		}
		if (!x)
			return 0;
	}
}

/* ward_xl_path_cmp (eight bytes at a time) orders as the reference, on
 * strings that differ at every offset, by every kind of byte; and
 * ward_xl_sort sorts what is out of order and leaves what is not. */
static void t_path_cmp(void **state)
{
	static const char alpha[] = {'/', '-', '.', 'a', 'z', '\x01', '\xff'};
	char a[40], b[40];
	unsigned seed = 12345;
	char *v[64];

	(void)state;
	for (int round = 0; round < 20000; round++) {
		size_t la, lb;

		seed = seed * 1103515245u + 12345u;
		la = (seed >> 8) % 39;
		seed = seed * 1103515245u + 12345u;
		lb = (seed >> 8) % 39;
		for (size_t i = 0; i < la; i++) {
			seed = seed * 1103515245u + 12345u;
			a[i] = alpha[(seed >> 8) % sizeof(alpha)];
		}
		a[la] = '\0';
		/* b: a prefix of a, changed at one place or not at all. */
		memcpy(b, a, la + 1);
		if (lb < la)
			b[lb] = '\0';
		else
			lb = la;
		seed = seed * 1103515245u + 12345u;
		if (lb && (seed >> 8) % 3) {
			seed = seed * 1103515245u + 12345u;
			b[(seed >> 8) % lb] = alpha[(seed >> 4) % sizeof(alpha)];
		}
		int want = path_cmp_ref(a, b), got = ward_xl_path_cmp(a, b);

		if ((want > 0) != (got > 0) || (want < 0) != (got < 0))
			fail_msg("path_cmp(\"%s\", \"%s\"): %d, not %d", a, b,
				 got, want);
	}
	for (int i = 0; i < 64; i++) {
		char buf[32];

		snprintf(buf, sizeof(buf), "/a/%c/%02d", i % 2 ? 'b' : 'a',
			 (i * 37) % 64);
		v[i] = strdup(buf);
	}
	ward_xl_sort(v, 64, sizeof(*v), ward_xl_str_cmp);
	for (int i = 1; i < 64; i++)
		assert_true(ward_xl_path_cmp(v[i - 1], v[i]) <= 0);
	ward_xl_sort(v, 64, sizeof(*v), ward_xl_str_cmp);
	for (int i = 1; i < 64; i++)
		assert_true(ward_xl_path_cmp(v[i - 1], v[i]) <= 0);
	for (int i = 0; i < 64; i++)
		free(v[i]);
}

/*
 * The grants and hides of @mode's Landlock plan on workspace @ws for
 * @text, joined into one string (for comparing two plans).
 */
static char *plan_dump(struct fx *fx, enum ward_mode mode, const char *ws,
		       const char *text)
{
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL, *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	char *const *h;

	assert_non_null(f);
	policy_with(fx, mode, ws, text);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_null(ward_xlate_refusal(plan));
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	for (size_t i = 0; ro[i]; i++)
		fprintf(f, "ro %s\n", ro[i]);
	for (size_t i = 0; rw[i]; i++)
		fprintf(f, "rw %s\n", rw[i]);
	h = ward_xlate_landlock_hides(plan);
	for (size_t i = 0; h && h[i]; i++)
		fprintf(f, "hide %s\n", h[i]);
	fclose(f);
	ward_strv_free(ro);
	ward_strv_free(rw);
	ward_xlate_free(plan);
	return out;
}

/*
 * A run of literal rules with one parent is looked up in one listing of
 * that parent (and the walk for repositories keeps it): the plan is the
 * one the rules give when each is asked for on its own — files, a
 * directory, a missing path, a link (its target is what is hidden) —
 * outside the roots (the complement) and inside one (mounts).
 */
static void t_literal_run_listed(void **state)
{
	struct fx *fx = *state;
	char run[4096], apart[8192], *a, *b;
	size_t o = 0, q = 0;

	xmkdir(fx->base, "out/many");
	xmkdir(fx->base, "out/many/d");
	xmkdir(fx->base, "ws/many");
	xmkdir(fx->base, "ws/many/d");
	for (int i = 0; i < 12; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "out/many/f%d", i);
		xwrite(fx->base, rel, "x");
		snprintf(rel, sizeof(rel), "ws/many/f%d", i);
		xwrite(fx->base, rel, "x");
	}
	xsymlink(fx->base, "out/many/l", "f11");
	xsymlink(fx->base, "ws/many/l", "f11");
	for (int w = 0; w < 2; w++) {
		const char *dir = w ? "ws" : "out";

		o = q = 0;
		for (int i = 0; i < 12; i += 2) {
			o += (size_t)snprintf(run + o, sizeof(run) - o,
					      "-- @BASE@/%s/many/f%d\n", dir, i);
			/* Apart: a rule of another parent after each. */
			q += (size_t)snprintf(apart + q, sizeof(apart) - q,
					      "-- @BASE@/%s/many/f%d\n"
					      "-- @BASE@/out/none/z%d\n",
					      dir, i, i);
		}
		static const char *const odd[] = {"d", "missing", "l"};
		for (size_t i = 0; i < 3; i++) {
			o += (size_t)snprintf(run + o, sizeof(run) - o,
					      "-- @BASE@/%s/many/%s\n", dir,
					      odd[i]);
			q += (size_t)snprintf(apart + q, sizeof(apart) - q,
					      "-- @BASE@/%s/many/%s\n"
					      "-- @BASE@/out/none/y%zu\n",
					      dir, odd[i], i);
		}
		for (int m = 0; m < 2; m++) {
			enum ward_mode mode = m ? WARD_MODE_WORKSPACE_WRITE
						: WARD_MODE_READ_ONLY;

			a = plan_dump(fx, mode, "ws", run);
			b = plan_dump(fx, mode, "ws", apart);
			assert_string_equal(a, b);
			/* Not vacuous: outside the roots a sibling is granted
			 * and the hidden file is not; inside, it is hidden. */
			if (!w || !m) {
				assert_non_null(strstr(a, "/many/f1\n"));
				assert_null(strstr(a, "/many/f0\n"));
			} else {
				assert_non_null(strstr(a, "hide --hide\n"));
			}
			free(a);
			free(b);
		}
	}
}

/*
 * The complement's early stop (a directory whose entries alone need more
 * grants than are left) never stops a walk that fits: with a budget of
 * exactly the grants the complement takes, the plan is the same; one
 * grant fewer, and it is over (refused here, without mounts).
 */
static void t_complement_budget_edge(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate_limits lim = {100000, 10000, 0, true};
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL, **ro2 = NULL;
	char rules[4096];
	size_t n, o = 0;

	xmkdir(fx->base, "out/edge");
	xmkdir(fx->base, "out/edge/sub");
	for (int i = 0; i < 40; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "out/edge/f%02d", i);
		xwrite(fx->base, rel, "x");
		if (i % 4 == 0)
			o += (size_t)snprintf(rules + o, sizeof(rules) - o,
					      "-- @BASE@/out/edge/f%02d\n", i);
	}
	xwrite(fx->base, "out/edge/sub/g", "x");
	o += (size_t)snprintf(rules + o, sizeof(rules) - o,
			      "-- @BASE@/out/edge/sub/g\n");
	policy_with(fx, WARD_MODE_READ_ONLY, "ws", rules);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_null(ward_xlate_refusal(plan));
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	n = ward_strv_len(ro);
	assert_true(n > 40);
	assert_false(strv_has(ro, "/"));

	lim.max_targets = n;
	ward_xlate_set_limits(&lim);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	assert_null(ward_xlate_refusal(plan));
	ward_strv_free(rw);
	assert_int_equal(ward_xlate_landlock(&ro2, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_int_equal(ward_strv_len(ro2), n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(ro[i], ro2[i]);

	lim.max_targets = n - 1;
	ward_xlate_set_limits(&lim);
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	ward_xlate_set_limits(NULL);
	assert_non_null(ward_xlate_refusal(plan));
	ward_xlate_free(plan);
	ward_strv_free(ro);
	ward_strv_free(ro2);
	ward_strv_free(rw);
}

/* The launcher argv and the in-process plan carry the same grants. */
static void t_landlock_argv_matches_plan(void **state)
{
	struct fx *fx = *state;
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL, **argv = NULL;
	size_t nro = 0, nrw = 0, nopt = 0;

	policy_with(fx, WARD_MODE_READ_ONLY, "ws",
		    "-- @BASE@/home/.ssh\n-- @BASE@/out/ro\n");
	assert_int_equal(
	    ward_xlate_new(&plan, fx->policy, WARD_RUNNER_LANDLOCK), 0);
	assert_int_equal(ward_xlate_landlock(&ro, &rw, plan), 0);
	ward_xlate_free(plan);
	assert_int_equal(
	    ward_profile_landlock(&argv, fx->policy, LAUNCHER, command), 0);
	for (size_t i = 1; argv[i] && strcmp(argv[i], "--"); i += 2) {
		/* The network knob's flag (off by default) takes no value. */
		if (strcmp(argv[i], "--net-off") == 0) {
			i--;
			continue;
		}
		/* An optional grant ("?PATH") is --ro-if-exists PATH. */
		if (strcmp(argv[i], "--ro") == 0) {
			assert_string_equal(argv[i + 1], ro[nro]);
			nro++;
		} else if (strcmp(argv[i], "--ro-if-exists") == 0) {
			assert_int_equal(ro[nro][0], WARD_LL_OPTIONAL);
			assert_string_equal(argv[i + 1], ro[nro] + 1);
			nro++;
			nopt++;
		} else {
			assert_string_equal(argv[i], "--rw");
			assert_string_equal(argv[i + 1], rw[nrw]);
			nrw++;
		}
	}
	assert_int_equal(nro, ward_strv_len(ro));
	assert_int_equal(nrw, ward_strv_len(rw));
	/* The entries found beside the hidden paths are all optional: one
	 * removed before the call starts must not fail it. */
	assert_int_equal(nopt, nro);
	/* read-only: only /dev/null is writable. */
	assert_int_equal(nrw, 1);
	assert_false(strv_has(ro, P(fx, "out")));
	assert_false(strv_has(ro, P(fx, "out/ro")));
	ward_strv_free(ro);
	ward_strv_free(rw);
	ward_strv_free(argv);
}

/*
 * Live: the complement really hides the path (and keeps its siblings
 * readable) when this kernel has Landlock. Forked: the test process must
 * stay unrestricted.
 */
static void t_landlock_live(void **state)
{
	struct fx *fx = *state;
	char **argv = NULL, launcher[PATH_MAX], *slash;
	int status;
	pid_t pid;
	ssize_t n;

	n = readlink("/proc/self/exe", launcher, sizeof(launcher) - 32);
	if (n <= 0)
		fail_msg("readlink /proc/self/exe");
	launcher[n] = '\0';
	slash = strrchr(launcher, '/');
	snprintf(slash, 32, "/../bin/landlock-run");
	if (access(launcher, X_OK) != 0) {
		print_message("SKIP: %s is not built\n", launcher);
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char probe[PATH_MAX + 32];

		snprintf(probe, sizeof(probe), "%s --probe >/dev/null 2>&1",
			 launcher);
		_exit(system(probe) == 0 ? 0 : 77);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		print_message("SKIP: Landlock is not usable here\n");
		skip();
	}
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "-- @BASE@/home/.ssh\n");
	{
		char *const cmd[] = {"/bin/sh", "-c",
				     "cat \"$0/.ssh/id_rsa\" 2>/dev/null && "
				     "exit 1; cat \"$0/other\" >/dev/null || "
				     "exit 2; ls \"$0/.ssh\" >/dev/null "
				     "2>&1 && exit 3; exit 0",
				     (char *)P(fx, "home"), NULL};

		assert_int_equal(
		    ward_profile_landlock(&argv, fx->policy, launcher, cmd), 0);
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	ward_strv_free(argv);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* --- warnings --------------------------------------------------------------- */

static void t_warnings_per_runner(void **state)
{
	struct fx *fx = *state;
	char **w;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", RULES);
	/* Seatbelt expresses every rule. */
	w = warnings(fx->policy, WARD_RUNNER_SEATBELT);
	assert_int_equal(ward_strv_len(w), 0);
	ward_strv_free(w);
	/* bwrap: the glob's later matches, the missing literal. */
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	dump("bwrap", w);
	assert_int_equal(count_lines(w, "bwrap", "rule \"r- **/*.pem\"",
				     "created later", NULL),
			 1);
	assert_int_equal(count_lines(w, "bwrap", "rule \"-- missing.env\"",
				     "does not exist", NULL),
			 1);
	assert_int_equal(count_lines(w, "rule \"-- sec\"", NULL), 0);
	ward_strv_free(w);
	/* landlock: the rules inside a root are hidden by the launcher's
	 * mounts (or, without a mount namespace, carved out of the grants):
	 * no rule is left unenforced; the glob's later matches and the
	 * missing literal are said as for bwrap. */
	w = warnings(fx->policy, WARD_RUNNER_LANDLOCK);
	dump("landlock", w);
	assert_int_equal(count_lines(w, "cannot be expressed", NULL), 0);
	assert_int_equal(count_lines(w, "landlock", "rule \"r- **/*.pem\"",
				     "created later", NULL),
			 1);
	assert_int_equal(count_lines(w, "landlock", "rule \"-- missing.env\"",
				     "does not exist", NULL),
			 1);
	assert_int_equal(count_lines(w, "landlock", "hides", P(fx, "home/.ssh"),
				     "not readable", NULL),
			 1);
	assert_int_equal(count_lines(w, "landlock", "protected paths",
				     P(fx, "ws/.git/hooks"), NULL),
			 1);
	ward_strv_free(w);
}

static void t_warnings_rw_and_none(void **state)
{
	struct fx *fx = *state;
	char **w;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "rw @BASE@/nope\nrw keep.txt\n");
	w = warnings(fx->policy, WARD_RUNNER_SEATBELT);
	assert_int_equal(count_lines(w, "not an existing directory", NULL), 2);
	ward_strv_free(w);
	/* danger-full-access confines nothing: r-/-- reach the fence only. */
	policy_with(fx, WARD_MODE_DANGER_FULL_ACCESS, "ws", "-- sec\nr- a\n");
	w = warnings(fx->policy, WARD_RUNNER_NONE);
	assert_int_equal(count_lines(w, "danger-full-access", "fs fence", NULL),
			 2);
	ward_strv_free(w);
	/* No rules, no repository: nothing to say. */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "out", "");
	w = warnings(fx->policy, WARD_RUNNER_LANDLOCK);
	dump("landlock", w);
	assert_int_equal(ward_strv_len(w), 0);
	ward_strv_free(w);
}

static void t_describe(void **state)
{
	struct fx *fx = *state;
	char **d = NULL;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", RULES);
	assert_int_equal(
	    ward_policy_describe(&d, fx->policy, WARD_RUNNER_BWRAP), 0);
	dump("bwrap", d);
	assert_int_equal(
	    count_lines(d, "--tmpfs", "ws/sec", "rule \"-- sec\"", NULL), 1);
	assert_int_equal(
	    count_lines(d, "--ro-bind", ".git/hooks", "protected", NULL), 1);
	ward_strv_free(d);
	assert_int_equal(
	    ward_policy_describe(&d, fx->policy, WARD_RUNNER_SEATBELT), 0);
	assert_int_equal(count_lines(d, "(deny file-read* file-write*",
				     "rule \"-- sec\"", NULL),
			 1);
	ward_strv_free(d);
}

/* The warnings and the description change nothing on disk. */
static void t_no_side_effects(void **state)
{
	struct fx *fx = *state;
	struct stat st;
	char **w;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "home", "");
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	ward_strv_free(w);
	assert_int_equal(
	    ward_policy_describe(&w, fx->policy, WARD_RUNNER_BWRAP), 0);
	ward_strv_free(w);
	assert_int_equal(stat(P(fx, "home/.config/ward"), &st), -1);
	assert_int_equal(stat(P(fx, "home/.local"), &st), -1);
}

/* --- roots, canon ------------------------------------------------------------ */

static void t_roots_rw(void **state)
{
	struct fx *fx = *state;
	char **roots = NULL;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "rw @BASE@/out\nrw @BASE@/nope\nrw keep.txt\n");
	assert_int_equal(ward_roots_writable(&roots, fx->policy), 0);
	assert_true(strv_has(roots, P(fx, "out")));
	assert_false(strv_has(roots, P(fx, "nope")));
	assert_false(strv_has(roots, P(fx, "ws/keep.txt")));
	ward_strv_free(roots);
	policy_with(fx, WARD_MODE_READ_ONLY, "ws", "rw @BASE@/out\n");
	assert_int_equal(ward_roots_writable(&roots, fx->policy), 0);
	assert_int_equal(ward_strv_len(roots), 0);
	ward_strv_free(roots);
}

static void t_path_canon(void **state)
{
	struct fx *fx = *state;
	char *c;
	char want[PATH_MAX];

	xsymlink(fx->base, "alias", "ws");
	c = util_path_canon(P(fx, "alias/a/nothing/here"));
	snprintf(want, sizeof(want), "%s/ws/a/nothing/here", fx->base);
	assert_string_equal(c, want);
	free(c);
	c = util_path_canon("/");
	assert_string_equal(c, "/");
	free(c);
	c = util_path_canon("/no-such-top-dir-ward/x");
	assert_string_equal(c, "/no-such-top-dir-ward/x");
	free(c);
}

/* --- the fs fence -------------------------------------------------------------- */

static int fence_write(ward_policy *p, const char *path)
{
	struct ward_fs_denial d;
	struct ward_fs_write_options o = WARD_FS_WRITE_OPTIONS_INIT;

	o.create_parents = true;
	return ward_fs_write(&d, p, path, "x\n", 2, &o);
}

static void t_fence_protected(void **state)
{
	struct fx *fx = *state;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(
	    fence_write(fx->policy, P(fx, "ws/.git/hooks/pre-commit")),
	    WARD_EDENIED);
	assert_int_equal(fence_write(fx->policy, P(fx, "ws/.git/config")),
			 WARD_EDENIED);
	assert_int_equal(fence_write(fx->policy, P(fx, "ws/.ward/config.yml")),
			 WARD_EDENIED);
	assert_int_equal(fence_write(fx->policy, P(fx, "ws/.git/index")), 0);
	assert_int_equal(fence_write(fx->policy, P(fx, "ws/file")), 0);
	/* Moving .git aside would take the hooks along. */
	{
		struct ward_fs_denial d;

		assert_int_equal(ward_fs_move(&d, fx->policy, P(fx, "ws/.git"),
					      P(fx, "ws/git2"), NULL),
				 WARD_EDENIED);
	}
	assert_int_equal(ward_policy_set_protect_git(fx->policy, false), 0);
	assert_int_equal(
	    fence_write(fx->policy, P(fx, "ws/.git/hooks/pre-commit")), 0);
	assert_int_equal(fence_write(fx->policy, P(fx, "ws/.ward/config.yml")),
			 WARD_EDENIED);
	/* ward's configuration: not even with `rw` or in danger-full-access. */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws",
		    "rw @BASE@/home/.config\n");
	assert_int_equal(fence_write(fx->policy, P(fx, "home/.config/x")), 0);
	assert_int_equal(
	    fence_write(fx->policy, P(fx, "home/.config/ward/config.yml")),
	    WARD_EDENIED);
	policy_with(fx, WARD_MODE_DANGER_FULL_ACCESS, "ws", "");
	assert_int_equal(
	    fence_write(fx->policy, P(fx, "home/.local/state/ward/s.jsonl")),
	    WARD_EDENIED);
	assert_int_equal(fence_write(fx->policy, P(fx, "out/free")), 0);
}

/* --- git: what redirects git, links, submodules, worktrees ----------------- */

static bool listed(struct ward_protected *v, size_t n, const char *path,
		   unsigned flags)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].path, path) == 0 &&
		    (v[i].flags & flags) == flags)
			return true;
	}
	return false;
}

static char **notes_of(ward_policy *p, bool links)
{
	char **v = NULL;

	if (ward_protect_notes(&v, p, links) != 0)
		fail_msg("notes: %s", ward_error_last());
	return v;
}

/*
 * git reads $GIT_DIR/commondir in any git directory: a missing one is
 * protected (the fence refuses to create it), and one that exists in a
 * `.git` directory is never followed (it would move the protection to a
 * place the command chose) but named in a warning.
 */
static void t_git_commondir(void **state)
{
	struct fx *fx = *state;
	struct ward_protected *v = NULL;
	size_t n = 0;
	char **w;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	assert_true(listed(v, n, P(fx, "ws/.git/commondir"), 0));
	assert_true(listed(v, n, P(fx, "ws/.git/config.worktree"), 0));
	free(v);
	assert_int_equal(fence_write(fx->policy, P(fx, "ws/.git/commondir")),
			 WARD_EDENIED);
	assert_int_equal(
	    fence_write(fx->policy, P(fx, "ws/.git/config.worktree")),
	    WARD_EDENIED);
	assert_int_equal(access(P(fx, "ws/.git/commondir"), F_OK), -1);
	w = notes_of(fx->policy, true);
	assert_null(w[0]);
	ward_strv_free(w);

	/* Planted by an earlier run: not followed, named. */
	xmkdir(fx->base, "ws/evil");
	xmkdir(fx->base, "ws/evil/hooks");
	xwrite(fx->base, "ws/evil/config", "[core]\n");
	xwrite(fx->base, "ws/.git/commondir", "../evil\n");
	/* A policy is one call's: the next call's sees the plant. */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	for (size_t i = 0; i < n; i++)
		print_message("protected: %s (%s)\n", v[i].path, v[i].what);
	assert_true(listed(v, n, P(fx, "ws/.git/hooks"), 0));
	assert_true(listed(v, n, P(fx, "ws/.git/config"), 0));
	assert_false(listed(v, n, P(fx, "ws/evil/hooks"), 0));
	assert_false(listed(v, n, P(fx, "ws/evil/config"), 0));
	free(v);
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	dump("warning", w);
	assert_int_equal(count_lines(w, "bwrap", P(fx, "ws/.git/commondir"),
				     P(fx, "ws/evil"), "not a linked worktree",
				     NULL),
			 1);
	ward_strv_free(w);
	/* Bound read-only now that it exists. */
	{
		char **argv = bwrap_argv(fx->policy);

		assert_true(find_opt(argv, "--ro-bind",
				     P(fx, "ws/.git/commondir"), NULL) > 0);
		assert_int_equal(
		    find_opt(argv, "--ro-bind", P(fx, "ws/evil/config"), NULL),
		    -1);
		ward_strv_free(argv);
	}
}

/*
 * A `.git` file whose gitdir is not <common>/worktrees/<name> (or whose
 * commondir names another place) is not a linked worktree: its commondir
 * is not followed.
 */
static void t_git_worktree_untrusted(void **state)
{
	struct fx *fx = *state;
	struct ward_protected *v = NULL;
	size_t n = 0;
	char line[PATH_MAX + 16];

	xmkdir(fx->base, "out/gd");
	xmkdir(fx->base, "out/gd/hooks");
	xwrite(fx->base, "out/gd/HEAD", "ref: refs/heads/main\n");
	xwrite(fx->base, "out/gd/commondir", "../evil\n");
	xmkdir(fx->base, "out/evil");
	xmkdir(fx->base, "wt");
	snprintf(line, sizeof(line), "gitdir: %s/out/gd\n", fx->base);
	xwrite(fx->base, "wt/.git", line);
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "wt", "rw @BASE@/out\n");
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	assert_true(listed(v, n, P(fx, "wt/.git"), 0));
	assert_true(listed(v, n, P(fx, "out/gd/hooks"), 0));
	assert_true(listed(v, n, P(fx, "out/gd/config"), 0));
	assert_true(listed(v, n, P(fx, "out/gd/commondir"), 0));
	assert_false(listed(v, n, P(fx, "out/evil/hooks"), 0));
	free(v);
	/* A real worktree layout whose commondir names another place. */
	xmkdir(fx->base, "out/main");
	xmkdir(fx->base, "out/main/worktrees");
	xmkdir(fx->base, "out/main/worktrees/wt");
	xwrite(fx->base, "out/main/worktrees/wt/commondir", "../../../evil\n");
	snprintf(line, sizeof(line), "gitdir: %s/out/main/worktrees/wt\n",
		 fx->base);
	xwrite(fx->base, "wt/.git", line);
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	assert_true(listed(v, n, P(fx, "out/main/worktrees/wt/hooks"), 0));
	assert_false(listed(v, n, P(fx, "out/evil/hooks"), 0));
	assert_false(listed(v, n, P(fx, "out/main/hooks"), 0));
	free(v);
}

/* A symlinked .git: the target's traps, the link itself, and a warning. */
static void t_git_symlink(void **state)
{
	struct fx *fx = *state;
	struct ward_protected *v = NULL;
	struct ward_fs_denial d;
	size_t n = 0;
	char **argv, **w, *text = NULL;

	xmkdir(fx->base, "lk");
	xmkdir(fx->base, "lk/.gitreal");
	xmkdir(fx->base, "lk/.gitreal/hooks");
	xwrite(fx->base, "lk/.gitreal/config", "[core]\n");
	xwrite(fx->base, "lk/.gitreal/HEAD", "ref: refs/heads/main\n");
	xsymlink(fx->base, "lk/.git", ".gitreal");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "lk", "");
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	assert_true(listed(v, n, P(fx, "lk/.git"), WARD_PROTECT_LINK));
	assert_true(listed(v, n, P(fx, "lk/.gitreal/hooks"), 0));
	assert_true(listed(v, n, P(fx, "lk/.gitreal/config"), 0));
	assert_true(listed(v, n, P(fx, "lk/.gitreal/commondir"), 0));
	free(v);
	argv = bwrap_argv(fx->policy);
	assert_true(
	    find_opt(argv, "--ro-bind", P(fx, "lk/.gitreal/hooks"), NULL) > 0);
	assert_true(
	    find_opt(argv, "--ro-bind", P(fx, "lk/.gitreal/config"), NULL) > 0);
	assert_true(find_opt(argv, "--bind", P(fx, "lk/.gitreal"), NULL) > 0);
	/* A mount on the link would land on (all of) its target. */
	assert_int_equal(find_opt(argv, "--ro-bind", P(fx, "lk/.git"), NULL),
			 -1);
	ward_strv_free(argv);
	w = warnings(fx->policy, WARD_RUNNER_BWRAP);
	assert_int_equal(count_lines(w, "bwrap", "symbolic link",
				     P(fx, "lk/.gitreal"), "pointed", NULL),
			 1);
	ward_strv_free(w);
	w = warnings(fx->policy, WARD_RUNNER_SEATBELT);
	assert_int_equal(count_lines(w, "symbolic link", NULL), 0);
	ward_strv_free(w);
	assert_int_equal(ward_profile_seatbelt(&text, fx->policy), 0);
	assert_non_null(strstr(text, P(fx, "lk/.git\"")));
	free(text);
	/* The fence keeps both. */
	assert_int_equal(
	    fence_write(fx->policy, P(fx, "lk/.git/hooks/pre-commit")),
	    WARD_EDENIED);
	assert_int_equal(fence_write(fx->policy, P(fx, "lk/.git/index")), 0);
	assert_int_equal(ward_fs_remove(&d, fx->policy, P(fx, "lk/.git"), NULL),
			 WARD_EDENIED);
}

/* Submodules' git directories and linked worktrees' files. */
static void t_git_modules_worktrees(void **state)
{
	struct fx *fx = *state;
	struct ward_protected *v = NULL;
	size_t n = 0;
	char **argv;

	xmkdir(fx->base, "ws/.git/modules");
	xmkdir(fx->base, "ws/.git/modules/libs");
	xmkdir(fx->base, "ws/.git/modules/libs/foo");
	xwrite(fx->base, "ws/.git/modules/libs/foo/HEAD", "ref: x\n");
	xwrite(fx->base, "ws/.git/modules/libs/foo/config", "[core]\n");
	xmkdir(fx->base, "ws/.git/modules/libs/foo/hooks");
	xmkdir(fx->base, "ws/.git/modules/libs/foo/modules");
	xmkdir(fx->base, "ws/.git/modules/libs/foo/modules/bar");
	xwrite(fx->base, "ws/.git/modules/libs/foo/modules/bar/HEAD", "x\n");
	xwrite(fx->base, "ws/.git/modules/libs/foo/modules/bar/config", "\n");
	xmkdir(fx->base, "ws/.git/worktrees");
	xmkdir(fx->base, "ws/.git/worktrees/w1");
	xwrite(fx->base, "ws/.git/worktrees/w1/commondir", "../..\n");
	xwrite(fx->base, "ws/.git/worktrees/w1/gitdir", "/x/.git\n");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_list(&v, &n, fx->policy), 0);
	assert_true(listed(v, n, P(fx, "ws/.git/modules/libs/foo/hooks"), 0));
	assert_true(listed(v, n, P(fx, "ws/.git/modules/libs/foo/config"), 0));
	assert_true(
	    listed(v, n, P(fx, "ws/.git/modules/libs/foo/commondir"), 0));
	assert_true(listed(
	    v, n, P(fx, "ws/.git/modules/libs/foo/modules/bar/config"), 0));
	assert_false(listed(v, n, P(fx, "ws/.git/modules/libs/hooks"), 0));
	assert_true(listed(v, n, P(fx, "ws/.git/worktrees/w1/commondir"), 0));
	assert_true(listed(v, n, P(fx, "ws/.git/worktrees/w1/gitdir"), 0));
	assert_true(
	    listed(v, n, P(fx, "ws/.git/worktrees/w1/config.worktree"), 0));
	free(v);
	argv = bwrap_argv(fx->policy);
	assert_true(find_opt(argv, "--ro-bind",
			     P(fx, "ws/.git/modules/libs/foo/config"),
			     NULL) > 0);
	assert_true(find_opt(argv, "--ro-bind",
			     P(fx, "ws/.git/worktrees/w1/gitdir"), NULL) > 0);
	/* Missing: nothing mounted (and nothing created on the host). */
	assert_int_equal(find_opt(argv, "--ro-bind",
				  P(fx, "ws/.git/worktrees/w1/config.worktree"),
				  NULL),
			 -1);
	assert_int_equal(
	    access(P(fx, "ws/.git/worktrees/w1/config.worktree"), F_OK), -1);
	ward_strv_free(argv);
}

/*
 * `r- /` in workspace-write: the roots become read-only (precedence), but
 * the host's tree is never laid over the private /dev and /proc.
 */
static void t_bwrap_ro_over_roots(void **state)
{
	struct fx *fx = *state;
	char **argv, *text = NULL;
	ssize_t last_root = -1, dev = -1, proc = -1;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- /\n");
	argv = bwrap_argv(fx->policy);
	dump("argv", argv);
	/* Only the first --ro-bind / / (the base of the profile). */
	assert_int_equal(find_opt(argv, "--ro-bind", "/", "/"), 1);
	for (size_t i = 2; argv[i]; i++)
		assert_false(strcmp(argv[i], "--ro-bind") == 0 &&
			     strcmp(argv[i + 1], "/") == 0);
	assert_true(find_opt(argv, "--ro-bind", P(fx, "ws"), P(fx, "ws")) >
		    find_opt(argv, "--bind", P(fx, "ws"), P(fx, "ws")));
	assert_true(find_opt(argv, "--ro-bind", "/tmp", "/tmp") >
		    find_opt(argv, "--bind", "/tmp", "/tmp"));
	ward_strv_free(argv);

	/* A writable root of "/": then `--ro-bind / /` it is, and the
	 * private /dev and /proc are mounted again on top. (Without git's
	 * protection: the walk for repositories in all of / would refuse
	 * the call, see t_repos_walk_bound.) */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "rw /\nr- /\n");
	assert_int_equal(ward_policy_set_protect_git(fx->policy, false), 0);
	argv = bwrap_argv(fx->policy);
	for (size_t i = 0; argv[i]; i++) {
		if (!strcmp(argv[i], "--ro-bind") && argv[i + 1] &&
		    !strcmp(argv[i + 1], "/"))
			last_root = (ssize_t)i;
		if (!strcmp(argv[i], "--dev"))
			dev = (ssize_t)i;
		if (!strcmp(argv[i], "--proc"))
			proc = (ssize_t)i;
	}
	assert_true(last_root > 1);
	assert_true(dev > last_root && proc > last_root);
	ward_strv_free(argv);

	/* Seatbelt: /dev/null stays usable after a rule over it. */
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- /\n");
	assert_int_equal(ward_profile_seatbelt(&text, fx->policy), 0);
	assert_true(strstr(text, "(deny file-write* (subpath \"/\"))") <
		    strstr(text, "(allow file-read* file-write* (literal "
				 "\"/dev/null\"))"));
	free(text);
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "r- keep.txt\n");
	assert_int_equal(ward_profile_seatbelt(&text, fx->policy), 0);
	assert_null(strstr(text, "(allow file-read* file-write*"));
	free(text);
}

/* --- the guard ----------------------------------------------------------------- */

static char **guard_run(struct ward_protect_guard *g)
{
	char **notes = NULL;

	bool failed = true;

	assert_int_equal(ward_protect_guard_check(&notes, &failed, g), 0);
	dump("note", notes);
	/* Nothing stays in the workspace in these cases: every finding was
	 * moved to the quarantine. */
	assert_false(failed);
	return notes;
}

static char *slurp(const struct fx *fx, const char *rel)
{
	char *t = read_file(P(fx, rel));

	if (!t)
		fail_msg("cannot read %s", rel);
	return t;
}

/*
 * Where the guard put @rel (a fixture path) in the quarantine, read: the
 * quarantine is $HOME/.local/state/ward/quarantine/<id>/files/<absolute
 * path>, the newest <id> wins. NULL when it is not there.
 */
static char *quarantined(const struct fx *fx, const char *rel)
{
	char dir[PATH_MAX], best[NAME_MAX + 1] = "", p[2 * PATH_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/home/.local/state/ward/quarantine",
		 fx->base);
	d = opendir(dir);
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (e->d_name[0] != '.' && strcmp(e->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
	}
	closedir(d);
	snprintf(p, sizeof(p), "%s/%s/files%s", dir, best, P(fx, rel));
	return read_file(p);
}

/* Whether anything named *ward-quarantine* lies below @rel. */
static bool quarantine_inside(const struct fx *fx, const char *rel)
{
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd),
		 "find '%s' -name '*ward-quarantine*' | grep -q .", P(fx, rel));
	return system(cmd) == 0;
}

static void t_guard(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	char **notes, *t;
	struct stat st;

	/* Nothing to guard outside workspace-write. */
	policy_with(fx, WARD_MODE_READ_ONLY, "ws", "");
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	assert_null(g);

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	xwrite(fx->base, "ws/.git/hooks/pre-push.sample", "#\n");
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	assert_non_null(g);
	/* Nothing changed: nothing to say, nothing touched. */
	notes = guard_run(g);
	assert_null(notes[0]);
	ward_strv_free(notes);

	/* The run: a commondir, a new hook, a rewritten config, a
	 * config.worktree; an index write is none of the guard's business. */
	xwrite(fx->base, "ws/.git/commondir", "../evil\n");
	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\n");
	xwrite(fx->base, "ws/.git/config", "[core]\n\tfsmonitor = x\n");
	xwrite(fx->base, "ws/.git/config.worktree", "[core]\n");
	xwrite(fx->base, "ws/.git/index", "i\n");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, "ward: ", "commondir", "appeared",
				     "moved to", NULL),
			 1);
	assert_int_equal(
	    count_lines(notes, "hooks/pre-commit", "appeared", NULL), 1);
	assert_int_equal(count_lines(notes, ".git/config ", "changed",
				     "original put back", NULL),
			 1);
	assert_int_equal(
	    count_lines(notes, "config.worktree", "appeared", NULL), 1);
	assert_int_equal(count_lines(notes, "index", NULL), 0);
	ward_strv_free(notes);
	assert_int_equal(lstat(P(fx, "ws/.git/commondir"), &st), -1);
	assert_int_equal(lstat(P(fx, "ws/.git/hooks/pre-commit"), &st), -1);
	assert_int_equal(lstat(P(fx, "ws/.git/hooks/pre-push.sample"), &st), 0);
	assert_int_equal(lstat(P(fx, "ws/.git/config.worktree"), &st), -1);
	t = slurp(fx, "ws/.git/config");
	assert_string_equal(t, "[core]\n");
	free(t);
	/* Everything moved lies in the quarantine, outside the repository
	 * (git never reads it; no confined run can reach it). */
	t = quarantined(fx, "ws/.git/config");
	assert_non_null(t);
	assert_non_null(strstr(t, "fsmonitor"));
	free(t);
	t = quarantined(fx, "ws/.git/commondir");
	assert_non_null(t);
	free(t);
	t = quarantined(fx, "ws/.git/hooks/pre-commit");
	assert_non_null(t);
	free(t);
	assert_false(quarantine_inside(fx, "ws"));
	/* The same guard again: everything is as it was. */
	notes = guard_run(g);
	assert_null(notes[0]);
	ward_strv_free(notes);
	ward_protect_guard_free(g);

	/* .git replaced wholesale: the new one is moved away. */
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	assert_int_equal(rename(P(fx, "ws/.git"), P(fx, "ws/old")), 0);
	xmkdir(fx->base, "ws/.git");
	xmkdir(fx->base, "ws/.git/hooks");
	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\n");
	notes = guard_run(g);
	assert_true(count_lines(notes, "ws/.git ", "replaced", NULL) >= 1);
	assert_int_equal(lstat(P(fx, "ws/.git"), &st), -1);
	ward_strv_free(notes);
	ward_protect_guard_free(g);
	assert_int_equal(rename(P(fx, "ws/old"), P(fx, "ws/.git")), 0);
}

/*
 * Content, not size and time: a hook overwritten in place with as many
 * bytes, its time stamps put back, is found and put back; so are a
 * removed hook and changed permission bits.
 */
static void t_guard_content(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	struct timespec ts[2];
	struct stat before, st;
	char **notes, *t;

	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\necho ok\n");
	assert_int_equal(chmod(P(fx, "ws/.git/hooks/pre-commit"), 0755), 0);
	xwrite(fx->base, "ws/.git/hooks/post-merge", "#!/bin/sh\n");
	assert_int_equal(stat(P(fx, "ws/.git/hooks/pre-commit"), &before), 0);
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);

	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\necho PW\n");
	ts[0] = before.st_atim;
	ts[1] = before.st_mtim;
	assert_int_equal(
	    utimensat(AT_FDCWD, P(fx, "ws/.git/hooks/pre-commit"), ts, 0), 0);
	assert_int_equal(stat(P(fx, "ws/.git/hooks/pre-commit"), &st), 0);
	assert_int_equal(st.st_size, before.st_size);
	assert_int_equal(st.st_mtim.tv_sec, before.st_mtim.tv_sec);
	assert_int_equal(st.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	assert_int_equal(unlink(P(fx, "ws/.git/hooks/post-merge")), 0);
	assert_int_equal(chmod(P(fx, "ws/.git/hooks"), 0777), 0);

	notes = guard_run(g);
	assert_int_equal(count_lines(notes, "hooks/pre-commit", "changed",
				     "original put back", NULL),
			 1);
	assert_int_equal(
	    count_lines(notes, "hooks/post-merge", "removed", NULL), 1);
	assert_int_equal(count_lines(notes, "permissions", NULL), 1);
	ward_strv_free(notes);
	t = slurp(fx, "ws/.git/hooks/pre-commit");
	assert_string_equal(t, "#!/bin/sh\necho ok\n");
	free(t);
	assert_int_equal(stat(P(fx, "ws/.git/hooks/pre-commit"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	t = slurp(fx, "ws/.git/hooks/post-merge");
	free(t);
	assert_int_equal(stat(P(fx, "ws/.git/hooks"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	t = quarantined(fx, "ws/.git/hooks/pre-commit");
	assert_non_null(t);
	assert_string_equal(t, "#!/bin/sh\necho PW\n");
	free(t);
	ward_protect_guard_free(g);
}

/*
 * No entry cap: entries added in any number are all moved away, and the
 * next call's guard works; a tree too large to snapshot fails the call
 * (before anything runs) with a detail that says what to do.
 */
static void t_guard_flood(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	char name[64], **notes;
	size_t left = 0;
	struct dirent *e;
	DIR *d;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "ws/.git/hooks/f%d", i);
		xwrite(fx->base, name, "x\n");
	}
	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\n");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, "appeared", "4996 more", NULL), 1);
	ward_strv_free(notes);
	d = opendir(P(fx, "ws/.git/hooks"));
	assert_non_null(d);
	while ((e = readdir(d)))
		left += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(left, 0);
	ward_protect_guard_free(g);
	/* The next call is guarded as before. */
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\n");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, "pre-commit", "appeared", NULL), 1);
	ward_strv_free(notes);
	ward_protect_guard_free(g);

	/* More entries than a snapshot holds: the call must not run. */
	for (int i = 0; i < 20001; i++) {
		snprintf(name, sizeof(name), "ws/.git/hooks/f%d", i);
		xwrite(fx->base, name, "");
	}
	g = NULL;
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), WARD_EINVAL);
	assert_null(g);
	assert_non_null(strstr(ward_error_last(), "cannot check"));
	assert_non_null(strstr(ward_error_last(), ".git/hooks"));
	assert_non_null(strstr(ward_error_last(), "was not run"));
	assert_non_null(strstr(ward_error_last(), "unprotect"));
}

/* The traps beside git, missing or not; released ones are not guarded. */
static void t_guard_traps(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	char *const released[] = {(char *)P(fx, "ws/.idea"), NULL};
	char **notes, *t;
	struct stat st;

	xmkdir(fx->base, "ws/.vscode");
	xwrite(fx->base, "ws/.vscode/settings.json", "{}\n");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_policy_set_unprotected(fx->policy, released), 0);
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	xwrite(fx->base, "ws/.vscode/settings.json",
	       "{\"terminal.integrated.shell.linux\": \"/tmp/x\"}\n");
	xmkdir(fx->base, "ws/.vscode/sub");
	xwrite(fx->base, "ws/.vscode/tasks.json", "{}\n");
	xwrite(fx->base, "ws/.envrc", "curl x | sh\n");
	xwrite(fx->base, "ws/.mcp.json", "{}\n");
	xmkdir(fx->base, "ws/.claude");
	xmkdir(fx->base, "ws/.ward");
	xmkdir(fx->base, "ws/.idea");
	xwrite(fx->base, "ws/.idea/workspace.xml", "<x/>\n");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, "settings.json", "changed", NULL),
			 1);
	assert_int_equal(count_lines(notes, "appeared", ".vscode/sub",
				     ".vscode/tasks.json", NULL),
			 1);
	assert_int_equal(count_lines(notes, "ws/.envrc", "appeared", NULL), 1);
	assert_int_equal(count_lines(notes, "ws/.mcp.json", "appeared", NULL),
			 1);
	assert_int_equal(count_lines(notes, "ws/.claude", "appeared", NULL), 1);
	assert_int_equal(count_lines(notes, "ws/.ward", "appeared", NULL), 1);
	assert_int_equal(count_lines(notes, ".idea", NULL), 0);
	ward_strv_free(notes);
	t = slurp(fx, "ws/.vscode/settings.json");
	assert_string_equal(t, "{}\n");
	free(t);
	assert_int_equal(lstat(P(fx, "ws/.envrc"), &st), -1);
	assert_int_equal(lstat(P(fx, "ws/.ward"), &st), -1);
	assert_int_equal(lstat(P(fx, "ws/.vscode/tasks.json"), &st), -1);
	assert_int_equal(lstat(P(fx, "ws/.idea/workspace.xml"), &st), 0);
	t = quarantined(fx, "ws/.envrc");
	assert_non_null(t);
	assert_string_equal(t, "curl x | sh\n");
	free(t);
	ward_protect_guard_free(g);
}

/*
 * Under bwrap an existing protected path is bound read-only inside the
 * sandbox: a change to it during the run came from outside (an editor
 * rewriting .idea) and stays; missing ones and links are still guarded.
 */
static void t_guard_bwrap(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	char **notes, *t;
	struct stat st;

	xmkdir(fx->base, "ws/.idea");
	xwrite(fx->base, "ws/.idea/workspace.xml", "<a/>\n");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(
	    ward_protect_guard_new_for(&g, fx->policy, WARD_RUNNER_BWRAP), 0);
	xwrite(fx->base, "ws/.idea/workspace.xml", "<b/>\n");
	xwrite(fx->base, "ws/.git/config", "[user]\n\tname = me\n");
	xwrite(fx->base, "ws/.envrc", "x\n");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, ".idea", NULL), 0);
	assert_int_equal(count_lines(notes, ".git/config", NULL), 0);
	assert_int_equal(count_lines(notes, ".envrc", "appeared", NULL), 1);
	ward_strv_free(notes);
	t = slurp(fx, "ws/.idea/workspace.xml");
	assert_string_equal(t, "<b/>\n");
	free(t);
	assert_int_equal(lstat(P(fx, "ws/.envrc"), &st), -1);
	ward_protect_guard_free(g);
	xwrite(fx->base, "ws/.git/config", "[core]\n");
}

/*
 * Two calls at once: the second starts after the first planted a hook.
 * It must not take the plant for the original — else, when the first
 * call's check has moved the hook away, the second's would put it back.
 */
static void t_guard_concurrent(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g1 = NULL, *g2 = NULL;
	char **notes;
	struct stat st;

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_guard_new(&g1, fx->policy), 0);
	xwrite(fx->base, "ws/.git/hooks/pre-commit", "#!/bin/sh\nevil\n");
	assert_int_equal(ward_protect_guard_new(&g2, fx->policy), 0);
	notes = guard_run(g1);
	assert_int_equal(count_lines(notes, "pre-commit", "appeared", NULL), 1);
	ward_strv_free(notes);
	ward_protect_guard_free(g1);
	notes = guard_run(g2);
	assert_null(notes[0]);
	ward_strv_free(notes);
	ward_protect_guard_free(g2);
	assert_int_equal(lstat(P(fx, "ws/.git/hooks/pre-commit"), &st), -1);
	/* Once both are done the next call snapshots afresh. */
	xwrite(fx->base, "ws/.git/hooks/post-merge", "#!/bin/sh\n");
	assert_int_equal(ward_protect_guard_new(&g1, fx->policy), 0);
	notes = guard_run(g1);
	assert_null(notes[0]);
	ward_strv_free(notes);
	ward_protect_guard_free(g1);
	assert_int_equal(lstat(P(fx, "ws/.git/hooks/post-merge"), &st), 0);
}

/*
 * Without a repository, one the command creates is taken away (git would
 * run what its configuration names at the user's next git status); with
 * keep_new_repos it stays.
 */
static void t_guard_no_repo(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	char **notes;
	struct stat st;

	xmkdir(fx->base, "plain");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "plain", "");
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	assert_non_null(g); /* the traps, missing */
	xmkdir(fx->base, "plain/.git");
	xmkdir(fx->base, "plain/.git/hooks");
	xwrite(fx->base, "plain/.git/HEAD", "ref: refs/heads/main\n");
	xmkdir(fx->base, "plain/sub");
	xmkdir(fx->base, "plain/sub/.git");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, "plain/.git", "appeared", NULL), 1);
	assert_int_equal(count_lines(notes, "plain/sub/.git", "appeared", NULL),
			 1);
	assert_int_equal(count_lines(notes, "--keep-new-repos", NULL), 1);
	ward_strv_free(notes);
	assert_int_equal(lstat(P(fx, "plain/.git"), &st), -1);
	assert_int_equal(lstat(P(fx, "plain/sub/.git"), &st), -1);
	ward_protect_guard_free(g);

	assert_int_equal(ward_policy_set_keep_new_repos(fx->policy, true), 0);
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	xmkdir(fx->base, "plain/.git");
	xwrite(fx->base, "plain/.git/HEAD", "ref: refs/heads/main\n");
	notes = guard_run(g);
	assert_int_equal(count_lines(notes, ".git", NULL), 0);
	ward_strv_free(notes);
	assert_int_equal(lstat(P(fx, "plain/.git/HEAD"), &st), 0);
	ward_protect_guard_free(g);
}

/* A swapped .git symlink is put back; the guard never follows a link. */
static void t_guard_symlink(void **state)
{
	struct fx *fx = *state;
	struct ward_protect_guard *g = NULL;
	char buf[PATH_MAX], **notes;
	ssize_t n;

	xmkdir(fx->base, "lk");
	xmkdir(fx->base, "lk/.gitreal");
	xmkdir(fx->base, "lk/.gitreal/hooks");
	xwrite(fx->base, "lk/.gitreal/config", "[core]\n");
	xwrite(fx->base, "lk/.gitreal/HEAD", "ref: refs/heads/main\n");
	xsymlink(fx->base, "lk/.git", ".gitreal");
	xmkdir(fx->base, "lk/evil");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "lk", "");
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	assert_non_null(g);
	assert_int_equal(unlink(P(fx, "lk/.git")), 0);
	xsymlink(fx->base, "lk/.git", "evil");
	notes = guard_run(g);
	assert_int_equal(
	    count_lines(notes, "lk/.git ", "original put back", NULL), 1);
	ward_strv_free(notes);
	n = readlink(P(fx, "lk/.git"), buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, ".gitreal");
	ward_protect_guard_free(g);

	/* The target directory replaced by a link elsewhere: the guard does
	 * not write through it. */
	assert_int_equal(ward_protect_guard_new(&g, fx->policy), 0);
	assert_int_equal(rename(P(fx, "lk/.gitreal"), P(fx, "lk/moved")), 0);
	xsymlink(fx->base, "lk/.gitreal", "evil");
	xwrite(fx->base, "lk/evil/commondir", "x\n");
	notes = guard_run(g);
	assert_true(count_lines(notes, "removed or replaced", NULL) >= 1);
	ward_strv_free(notes);
	assert_int_equal(access(P(fx, "lk/evil/commondir"), F_OK), 0);
	assert_int_equal(access(P(fx, "lk/evil/config"), F_OK), -1);
	ward_protect_guard_free(g);
}

/*
 * What the repository's configuration names: core.hooksPath, include.path
 * and includeIf.*.path (relative to the including file), followed inside
 * the workspace and protected there (missing ones too); an include
 * outside the workspace is not read; a hooks path that holds the
 * workspace cannot be protected and a note says so.
 */
static void t_protect_gitconfig(void **state)
{
	struct fx *fx = *state;
	char **notes = NULL;
	char cfg[2 * PATH_MAX];

	snprintf(cfg, sizeof(cfg),
		 "[core]\n"
		 "\trepositoryformatversion = 0\n"
		 "\thooksPath = \".husky/_\" ; husky\n"
		 "[include]\n"
		 "\tpath = ../shared.gitconfig\n"
		 "[includeIf \"gitdir:~/work/\"]\n"
		 "\tpath = ../conf/missing.inc\n"
		 "[include]\n"
		 "\tpath = %s\n",
		 P(fx, "out/outside.inc"));
	xwrite(fx->base, "ws/.git/config", cfg);
	/* Outside the workspace: protected where it lies (read-only
	 * already) but never read, so what it names is not protected. */
	snprintf(cfg, sizeof(cfg), "[core]\n\thooksPath = %s\n",
		 P(fx, "ws/not-followed"));
	xwrite(fx->base, "out/outside.inc", cfg);
	xwrite(fx->base, "ws/shared.gitconfig",
	       "[CORE] HOOKSPATH = tools/hooks\n"
	       "[include] path = nested.inc\n");
	xwrite(fx->base, "ws/nested.inc", "[core]\n\thookspath = deep/hooks\n");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/.husky/_/x")),
			 WARD_ACCESS_RO);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/shared.gitconfig")),
	    WARD_ACCESS_RO);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/tools/hooks")),
	    WARD_ACCESS_RO);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/nested.inc")),
			 WARD_ACCESS_RO);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/deep/hooks")),
			 WARD_ACCESS_RO);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/conf/missing.inc")),
	    WARD_ACCESS_RO);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/keep.txt")),
			 WARD_ACCESS_DEFAULT);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/not-followed")),
	    WARD_ACCESS_DEFAULT);
	/* protect_git off releases them with the rest of git's traps. */
	assert_int_equal(ward_policy_set_protect_git(fx->policy, false), 0);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/tools/hooks")),
	    WARD_ACCESS_DEFAULT);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/.vscode")),
			 WARD_ACCESS_RO);

	/* A hooks path of "." would make the workspace read-only. */
	xwrite(fx->base, "ws/.git/config", "[core]\n\thooksPath = .\n");
	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/keep.txt")),
			 WARD_ACCESS_DEFAULT);
	assert_int_equal(ward_protect_notes(&notes, fx->policy, true), 0);
	dump("note", notes);
	assert_int_equal(count_lines(notes, "core.hooksPath",
				     "holds the "
				     "writable root",
				     NULL),
			 1);
	ward_strv_free(notes);
	xwrite(fx->base, "ws/.git/config", "[core]\n");
}

/* unprotect releases git and trap paths, never ward's own. */
static void t_unprotect(void **state)
{
	struct fx *fx = *state;
	char *const released[] = {(char *)P(fx, "ws/.git/hooks"),
				  (char *)P(fx, "ws/.vscode"),
				  (char *)P(fx, "ws/.ward"), NULL};
	char *const relative[] = {".vscode", NULL};

	policy_with(fx, WARD_MODE_WORKSPACE_WRITE, "ws", "");
	assert_int_equal(ward_policy_set_unprotected(fx->policy, relative),
			 WARD_EINVAL);
	assert_int_equal(ward_policy_set_unprotected(fx->policy, released), 0);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/.git/hooks/pre-commit")),
	    WARD_ACCESS_DEFAULT);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/.vscode/tasks.json")),
	    WARD_ACCESS_DEFAULT);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "ws/.git/config")),
	    WARD_ACCESS_RO);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/.ward/x")),
			 WARD_ACCESS_RO);
	assert_int_equal(ward_protect_match(fx->policy, P(fx, "ws/.envrc")),
			 WARD_ACCESS_RO);
}

/* ward's state directory is hidden, in every mode, from the fence too. */
static void t_protect_state_hidden(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_content c = {0};
	struct ward_fs_denial d;

	xmkdir(fx->base, "home/.local");
	xmkdir(fx->base, "home/.local/state");
	xmkdir(fx->base, "home/.local/state/ward");
	xwrite(fx->base, "home/.local/state/ward/probe-cache", "x\n");
	policy_with(fx, WARD_MODE_DANGER_FULL_ACCESS, "ws", "");
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "home/.local/state/ward/x")),
	    WARD_ACCESS_NONE);
	assert_int_equal(
	    ward_protect_match(fx->policy, P(fx, "home/.config/ward/x")),
	    WARD_ACCESS_RO);
	assert_int_equal(
	    ward_fs_read(&c, &d, fx->policy,
			 P(fx, "home/.local/state/ward/probe-cache"), NULL),
	    WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_RULE_NO_ACCESS);
	ward_fs_content_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(t_golden_bwrap, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_golden_seatbelt, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_golden_landlock, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_golden_warnings, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_bwrap_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_bwrap_read_only, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_precedence_nested, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_glob_depth, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_glob_matcher, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_glob_bound, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_target_bound, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_glob_listings, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_protect_git_toggle, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_protect_worktree, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_protect_home_bwrap, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_protect_home_landlock, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_complement, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_hides, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_literal_canon, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_protect_home_in_tmp, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_no_mounts_complement,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_no_mounts_refused, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_outside_over_budget,
					    setup, teardown),
	    cmocka_unit_test(t_path_cmp),
	    cmocka_unit_test_setup_teardown(t_complement_budget_edge, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_literal_run_listed, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_argv_matches_plan, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_landlock_live, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_warnings_per_runner, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_warnings_rw_and_none, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_describe, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_no_side_effects, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_roots_rw, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_path_canon, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_fence_protected, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_git_commondir, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_git_worktree_untrusted, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_git_symlink, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_git_modules_worktrees, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_bwrap_ro_over_roots, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_guard, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_guard_symlink, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_guard_content, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_guard_no_repo, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_guard_bwrap, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_guard_concurrent, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_guard_flood, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_guard_traps, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_protect_gitconfig, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(t_unprotect, setup, teardown),
	    cmocka_unit_test_setup_teardown(t_protect_state_hidden, setup,
					    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
