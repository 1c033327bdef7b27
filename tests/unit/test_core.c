/*
 * Unit tests for the small core modules: mode.c, runner.c, policy.c and
 * roots.c (the one writable-roots function).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ward/ward.h"
#include "util.h"

/* A scratch directory per test: /tmp/ward-core-XXXXXX (canonical). */
struct fixture {
	char base[256];
	char ws[PATH_MAX];    /* base/ws */
	char other[PATH_MAX]; /* base/other */
	char file[PATH_MAX];  /* base/file (a regular file) */
	char *saved_tmpdir;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/ward-core-XXXXXX";
	const char *tmpdir = getenv("TMPDIR");
	char *real;
	FILE *f;

	if (!fx || !mkdtemp(tmpl))
		return -1;
	real = realpath(tmpl, NULL);
	if (!real || strlen(real) >= sizeof(fx->base))
		return -1;
	strcpy(fx->base, real);
	free(real);
	snprintf(fx->ws, sizeof(fx->ws), "%s/ws", fx->base);
	snprintf(fx->other, sizeof(fx->other), "%s/other", fx->base);
	snprintf(fx->file, sizeof(fx->file), "%s/file", fx->base);
	if (mkdir(fx->ws, 0700) != 0 || mkdir(fx->other, 0700) != 0)
		return -1;
	f = fopen(fx->file, "we");
	if (!f)
		return -1;
	fclose(f);
	fx->saved_tmpdir = tmpdir ? strdup(tmpdir) : NULL;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[512];

	if (fx->saved_tmpdir)
		setenv("TMPDIR", fx->saved_tmpdir, 1);
	else
		unsetenv("TMPDIR");
	free(fx->saved_tmpdir);
	if (strncmp(fx->base, "/tmp/ward-core-", 15) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->base);
		if (system(cmd) != 0)
			print_message("warning: could not remove %s\n",
				      fx->base);
	}
	free(fx);
	return 0;
}

/* --- mode ----------------------------------------------------------------- */

static void test_mode_parse_round_trip(void **state)
{
	static const char *const names[] = {"read-only", "workspace-write",
					    "danger-full-access"};
	enum ward_mode m;

	(void)state;
	for (int i = 0; i < 3; i++) {
		m = (enum ward_mode)99;
		assert_int_equal(ward_mode_parse(&m, names[i]), 0);
		assert_int_equal(m, i);
		assert_string_equal(ward_mode_name(m), names[i]);
	}
	assert_int_equal(WARD_MODE_DEFAULT, WARD_MODE_READ_ONLY);
}

static void test_mode_parse_rejects(void **state)
{
	static const char *const bad[] = {
	    "",		  "Read-only",	"readonly",   "read_only",
	    " read-only", "read-only ", "read-onlyx", "workspace",
	    "danger",	  "full",	"none",	      "READ-ONLY",
	};
	enum ward_mode m = (enum ward_mode)77;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(ward_mode_parse(&m, bad[i]), WARD_EINVAL);
		/* The detail names the bad value. */
		assert_non_null(strstr(ward_error_last(), bad[i]));
	}
	assert_int_equal(ward_mode_parse(&m, NULL), WARD_EINVAL);
	/* *out is written only on success. */
	assert_int_equal(m, 77);
}

static void test_mode_name_out_of_range(void **state)
{
	(void)state;
	assert_string_equal(ward_mode_name((enum ward_mode)3), "unknown");
	assert_string_equal(ward_mode_name((enum ward_mode) - 1), "unknown");
}

static void test_mode_is_wider(void **state)
{
	(void)state;
	for (int a = 0; a < 3; a++) {
		for (int b = 0; b < 3; b++) {
			bool want = a > b;

			assert_int_equal(ward_mode_is_wider((enum ward_mode)a,
							    (enum ward_mode)b),
					 want);
		}
	}
}

/* --- runner --------------------------------------------------------------- */

static void test_runner_names(void **state)
{
	static const char *const names[] = {
	    "none", "bwrap", "landlock", "seatbelt", "windows-acl", "custom"};
	enum ward_runner r;

	(void)state;
	for (int i = 0; i < 6; i++) {
		assert_string_equal(ward_runner_name((enum ward_runner)i),
				    names[i]);
		r = (enum ward_runner)99;
		if (i == WARD_RUNNER_NONE) {
			/* "none" names no runner: it cannot be chosen. */
			assert_int_equal(ward_runner_parse(&r, names[i]),
					 WARD_EINVAL);
			assert_int_equal(r, 99);
		} else {
			assert_int_equal(ward_runner_parse(&r, names[i]), 0);
			assert_int_equal(r, i);
		}
	}
	assert_string_equal(ward_runner_name((enum ward_runner)6), "unknown");
	assert_int_equal(ward_runner_parse(&r, "Bwrap"), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "Bwrap"));
	assert_int_equal(ward_runner_parse(&r, ""), WARD_EINVAL);
	assert_int_equal(ward_runner_parse(&r, NULL), WARD_EINVAL);
}

static void test_enforcement_and_platform_names(void **state)
{
	(void)state;
	assert_string_equal(ward_enforcement_name(WARD_ENFORCEMENT_NONE),
			    "none");
	assert_string_equal(ward_enforcement_name(WARD_ENFORCEMENT_FULL),
			    "full");
	assert_string_equal(ward_enforcement_name(WARD_ENFORCEMENT_PARTIAL),
			    "partial");
	assert_string_equal(ward_enforcement_name((enum ward_enforcement)9),
			    "unknown");
	assert_string_equal(ward_platform_name(WARD_PLATFORM_LINUX), "linux");
	assert_string_equal(ward_platform_name(WARD_PLATFORM_DARWIN), "darwin");
	assert_string_equal(ward_platform_name(WARD_PLATFORM_WIN32), "win32");
	assert_string_equal(ward_platform_name(WARD_PLATFORM_OTHER), "other");
	assert_string_equal(ward_platform_name((enum ward_platform)9),
			    "unknown");
#if defined(__linux__)
	assert_int_equal(ward_platform_current(), WARD_PLATFORM_LINUX);
#endif
}

static void test_platform_chains(void **state)
{
	const enum ward_runner *chain = NULL;

	(void)state;
	assert_int_equal(ward_platform_chain(&chain, WARD_PLATFORM_LINUX), 2);
	assert_int_equal(chain[0], WARD_RUNNER_BWRAP);
	assert_int_equal(chain[1], WARD_RUNNER_LANDLOCK);
	assert_int_equal(ward_platform_chain(&chain, WARD_PLATFORM_DARWIN), 1);
	assert_int_equal(chain[0], WARD_RUNNER_SEATBELT);
	/* Windows and the rest: empty, so they fail closed. */
	assert_int_equal(ward_platform_chain(&chain, WARD_PLATFORM_WIN32), 0);
	assert_null(chain);
	chain = (const enum ward_runner *)0x1;
	assert_int_equal(ward_platform_chain(&chain, WARD_PLATFORM_OTHER), 0);
	assert_null(chain);
}

/* --- policy --------------------------------------------------------------- */

static void test_policy_canonical_workspace(void **state)
{
	struct fixture *fx = *state;
	char link[PATH_MAX + 8], dotted[PATH_MAX + 16];
	ward_policy *p = NULL;

	snprintf(link, sizeof(link), "%s/link", fx->base);
	assert_int_equal(symlink(fx->ws, link), 0);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, link),
			 0);
	assert_string_equal(ward_policy_workspace(p), fx->ws);
	assert_int_equal(ward_policy_mode(p), WARD_MODE_WORKSPACE_WRITE);
	assert_null(ward_policy_session(p));
	assert_null(ward_policy_rules(p));
	ward_policy_free(p);

	snprintf(dotted, sizeof(dotted), "%s/other/../ws/.", fx->base);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, dotted), 0);
	assert_string_equal(ward_policy_workspace(p), fx->ws);
	ward_policy_free(p);
	ward_policy_free(NULL);
}

static void test_policy_rejects(void **state)
{
	struct fixture *fx = *state;
	ward_policy *p = (ward_policy *)0x1;
	char missing[PATH_MAX + 16];

	snprintf(missing, sizeof(missing), "%s/missing", fx->base);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, missing),
			 -ENOENT);
	assert_non_null(strstr(ward_error_last(), missing));
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, fx->file),
			 -ENOTDIR);
	assert_non_null(strstr(ward_error_last(), fx->file));
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, NULL),
			 WARD_EINVAL);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, ""),
			 WARD_EINVAL);
	assert_int_equal(ward_policy_new(&p, (enum ward_mode)3, fx->ws),
			 WARD_EINVAL);
	assert_int_equal(ward_policy_new(&p, (enum ward_mode) - 1, fx->ws),
			 WARD_EINVAL);
	/* *out is written only on success. */
	assert_ptr_equal(p, (ward_policy *)0x1);
}

/* $TMPDIR is read once, when the policy is made. */
static void test_policy_captures_tmpdir(void **state)
{
	struct fixture *fx = *state;
	ward_policy *p = NULL, *q = NULL;

	assert_int_equal(setenv("TMPDIR", fx->other, 1), 0);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, fx->ws), 0);
	assert_int_equal(setenv("TMPDIR", "/elsewhere", 1), 0);
	assert_string_equal(ward_policy_tmpdir(p), fx->other);
	assert_int_equal(unsetenv("TMPDIR"), 0);
	assert_int_equal(ward_policy_new(&q, WARD_MODE_READ_ONLY, fx->ws), 0);
	assert_null(ward_policy_tmpdir(q));
	assert_string_equal(ward_policy_tmpdir(p), fx->other);

	assert_int_equal(ward_policy_set_tmpdir(q, "/x/y"), 0);
	assert_string_equal(ward_policy_tmpdir(q), "/x/y");
	assert_int_equal(ward_policy_set_tmpdir(q, ""), 0);
	assert_null(ward_policy_tmpdir(q));
	assert_int_equal(ward_policy_set_tmpdir(p, NULL), 0);
	assert_null(ward_policy_tmpdir(p));
	ward_policy_free(p);
	ward_policy_free(q);
}

static void test_policy_session_and_rules(void **state)
{
	struct fixture *fx = *state;
	ward_policy *p = NULL;
	char session[] = "s-123";
	int fake_rules;

	assert_int_equal(ward_policy_new(&p, WARD_MODE_READ_ONLY, fx->ws), 0);
	assert_int_equal(ward_policy_set_session(p, session), 0);
	/* A copy: the caller's buffer may change. */
	session[0] = 'X';
	assert_string_equal(ward_policy_session(p), "s-123");
	assert_int_equal(ward_policy_set_session(p, NULL), 0);
	assert_null(ward_policy_session(p));
	/* Rules are borrowed, not copied. */
	assert_int_equal(
	    ward_policy_set_rules(p, (const ward_rules *)&fake_rules), 0);
	assert_ptr_equal(ward_policy_rules(p), (const ward_rules *)&fake_rules);
	assert_int_equal(ward_policy_set_rules(p, NULL), 0);
	assert_null(ward_policy_rules(p));
	ward_policy_free(p);
}

/* --- roots ---------------------------------------------------------------- */

static char **roots_of(const struct fixture *fx, enum ward_mode mode,
		       const char *tmpdir)
{
	ward_policy *p = NULL;
	char **roots = NULL;

	assert_int_equal(ward_policy_new(&p, mode, fx->ws), 0);
	assert_int_equal(ward_policy_set_tmpdir(p, tmpdir), 0);
	assert_int_equal(ward_roots_writable(&roots, p), 0);
	assert_non_null(roots);
	ward_policy_free(p);
	return roots;
}

/* @roots must be exactly the NULL-terminated list that follows. */
static void expect_roots(char **roots, ...)
{
	const char *want;
	size_t i = 0;
	va_list ap;

	va_start(ap, roots);
	while ((want = va_arg(ap, const char *))) {
		if (!roots[i] || strcmp(roots[i], want) != 0) {
			va_end(ap);
			fail_msg("root %zu: got \"%s\", want \"%s\"", i,
				 roots[i] ? roots[i] : "(end)", want);
		}
		i++;
	}
	va_end(ap);
	if (roots[i])
		fail_msg("unexpected extra root %zu: \"%s\"", i, roots[i]);
	ward_strv_free(roots);
}

static void test_roots_read_only_is_empty(void **state)
{
	struct fixture *fx = *state;

	/* Whatever $TMPDIR says: nothing is writable in read-only. */
	expect_roots(roots_of(fx, WARD_MODE_READ_ONLY, fx->other), NULL);
	expect_roots(roots_of(fx, WARD_MODE_READ_ONLY, NULL), NULL);
}

static void test_roots_workspace_write(void **state)
{
	struct fixture *fx = *state;
	char *tmp = realpath("/tmp", NULL);

	assert_non_null(tmp);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, fx->other), fx->ws,
		     tmp, fx->other, NULL);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, NULL), fx->ws, tmp,
		     NULL);
	free(tmp);
}

static void test_roots_danger_is_slash(void **state)
{
	expect_roots(roots_of(*state, WARD_MODE_DANGER_FULL_ACCESS, "/x"), "/",
		     NULL);
}

/* The same directory twice (any spelling) is one root. */
static void test_roots_deduplicated(void **state)
{
	struct fixture *fx = *state;
	char link[PATH_MAX + 8], slash[PATH_MAX + 8];
	char *tmp = realpath("/tmp", NULL);

	assert_non_null(tmp);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, "/tmp/"), fx->ws,
		     tmp, NULL);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, fx->ws), fx->ws,
		     tmp, NULL);
	snprintf(link, sizeof(link), "%s/link", fx->base);
	assert_int_equal(symlink(fx->ws, link), 0);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, link), fx->ws, tmp,
		     NULL);
	/* A symlink to another directory is granted as its target. */
	snprintf(slash, sizeof(slash), "%s/other-link", fx->base);
	assert_int_equal(symlink(fx->other, slash), 0);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, slash), fx->ws,
		     tmp, fx->other, NULL);
	free(tmp);
}

/* A root that cannot be granted is left out, not an error. */
static void test_roots_skip_missing_and_files(void **state)
{
	struct fixture *fx = *state;
	char missing[PATH_MAX + 16];
	char *tmp = realpath("/tmp", NULL);

	assert_non_null(tmp);
	snprintf(missing, sizeof(missing), "%s/missing", fx->base);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, missing), fx->ws,
		     tmp, NULL);
	expect_roots(roots_of(fx, WARD_MODE_WORKSPACE_WRITE, fx->file), fx->ws,
		     tmp, NULL);
	free(tmp);
}

/* A workspace removed after the policy was made is no longer granted. */
static void test_roots_workspace_removed(void **state)
{
	struct fixture *fx = *state;
	ward_policy *p = NULL;
	char **roots = NULL;
	char *tmp = realpath("/tmp", NULL);

	assert_non_null(tmp);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, fx->ws),
			 0);
	assert_int_equal(ward_policy_set_tmpdir(p, NULL), 0);
	assert_int_equal(rmdir(fx->ws), 0);
	assert_int_equal(ward_roots_writable(&roots, p), 0);
	expect_roots(roots, tmp, NULL);
	ward_policy_free(p);
	free(tmp);
}

/*
 * A relative $TMPDIR names a different directory for every process cwd;
 * the writable set must not depend on the cwd of whoever asks for it, so a
 * relative $TMPDIR grants nothing.
 */
static void test_roots_relative_tmpdir_ignored(void **state)
{
	struct fixture *fx = *state;
	char cwd[PATH_MAX];
	char *tmp = realpath("/tmp", NULL);
	char **roots;

	assert_non_null(tmp);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(fx->base), 0);
	roots = roots_of(fx, WARD_MODE_WORKSPACE_WRITE, "other");
	assert_int_equal(chdir(cwd), 0);
	expect_roots(roots, fx->ws, tmp, NULL);
	free(tmp);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* One PATH search (util.h): the default, empty and relative entries. */
static void test_path_search(void **state)
{
	struct util_path_search ps;
	char buf[64], tiny[8];
	size_t dlen;

	(void)state;
	util_path_init(&ps, NULL, "x");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "/usr/local/bin/x");
	assert_int_equal(dlen, strlen("/usr/local/bin"));
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "/usr/bin/x");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "/bin/x");
	assert_false(util_path_next(&ps, buf, sizeof(buf), &dlen));

	/* Empty entries (start, middle, end) are the working directory;
	 * a relative one stays relative. */
	util_path_init(&ps, ":rel::/a:", "cmd");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "cmd");
	assert_int_equal(dlen, 0);
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "rel/cmd");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "cmd");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "/a/cmd");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "cmd");
	assert_false(util_path_next(&ps, buf, sizeof(buf), &dlen));

	/* An empty PATH is one empty entry, never the default. */
	util_path_init(&ps, "", "cmd");
	assert_true(util_path_next(&ps, buf, sizeof(buf), &dlen));
	assert_string_equal(buf, "cmd");
	assert_false(util_path_next(&ps, buf, sizeof(buf), &dlen));

	/* A candidate that does not fit is skipped, not cut. */
	util_path_init(&ps, "/long/directory:/b", "cmd");
	assert_true(util_path_next(&ps, tiny, sizeof(tiny), &dlen));
	assert_string_equal(tiny, "/b/cmd");
	assert_false(util_path_next(&ps, tiny, sizeof(tiny), &dlen));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path_search),
	    cmocka_unit_test(test_mode_parse_round_trip),
	    cmocka_unit_test(test_mode_parse_rejects),
	    cmocka_unit_test(test_mode_name_out_of_range),
	    cmocka_unit_test(test_mode_is_wider),
	    cmocka_unit_test(test_runner_names),
	    cmocka_unit_test(test_enforcement_and_platform_names),
	    cmocka_unit_test(test_platform_chains),
	    T(test_policy_canonical_workspace),
	    T(test_policy_rejects),
	    T(test_policy_captures_tmpdir),
	    T(test_policy_session_and_rules),
	    T(test_roots_read_only_is_empty),
	    T(test_roots_workspace_write),
	    T(test_roots_danger_is_slash),
	    T(test_roots_deduplicated),
	    T(test_roots_skip_missing_and_files),
	    T(test_roots_workspace_removed),
	    T(test_roots_relative_tmpdir_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
