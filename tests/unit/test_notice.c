/*
 * Unit tests for src/libward/session/notice.c: the warnings already shown, per
 * scope and workspace, in ward's state directory (XDG_STATE_HOME points at a
 * fresh directory for each test).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <errno.h>

#include <cmocka.h>

#include "ward/ward.h"

static char *const NONE[] = {NULL};
static char *const ONE[] = {"rule A cannot be expressed", NULL};
static char *const TWO[] = {"rule A cannot be expressed",
			    "rule B cannot be expressed", NULL};
static char *const SPLIT[] = {"rule A cannot be", " expressed", NULL};

struct state {
	char dir[64];
	char memo[128];
};

static int setup(void **ctx)
{
	struct state *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	snprintf(s->dir, sizeof(s->dir), "/tmp/ward-notice.XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->memo, sizeof(s->memo), "%s/ward/warnings-shown", s->dir);
	setenv("XDG_STATE_HOME", s->dir, 1);
	*ctx = s;
	return 0;
}

static int teardown(void **ctx)
{
	struct state *s = *ctx;
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
	assert_int_equal(system(cmd), 0);
	free(s);
	return 0;
}

static bool seen(const char *scope, const char *ws, char *const *w)
{
	bool out = true;

	assert_int_equal(ward_notice_seen(&out, scope, ws, w), 0);
	return out;
}

static void test_once_per_change(void **ctx)
{
	(void)ctx;
	assert_false(seen("command", "/ws", ONE));
	assert_true(seen("command", "/ws", ONE));
	assert_true(seen("command", "/ws", ONE));
	assert_false(seen("command", "/ws", TWO));
	assert_true(seen("command", "/ws", TWO));
	/* Back to the first set is a change too. */
	assert_false(seen("command", "/ws", ONE));
	/* The same texts cut elsewhere are another set. */
	assert_false(seen("command", "/ws", SPLIT));
}

static void test_keyed_by_scope_and_workspace(void **ctx)
{
	(void)ctx;
	assert_false(seen("command", "/ws", ONE));
	assert_false(seen("command", "/other", ONE));
	assert_false(seen("operation", "/ws", ONE));
	assert_true(seen("command", "/ws", ONE));
	assert_true(seen("command", "/other", ONE));
	assert_true(seen("operation", "/ws", ONE));
}

static void test_no_warnings(void **ctx)
{
	struct state *s = *ctx;
	struct stat st;

	/* Nothing to say and nothing recorded: nothing new, and no file. */
	assert_true(seen("command", "/ws", NONE));
	assert_int_equal(stat(s->memo, &st), -1);
	/* Warnings, then none (recorded), then the same warnings again:
	 * said again. */
	assert_false(seen("command", "/ws", ONE));
	assert_false(seen("command", "/ws", NONE));
	assert_true(seen("command", "/ws", NONE));
	assert_false(seen("command", "/ws", ONE));
}

static void test_untrusted_file(void **ctx)
{
	struct state *s = *ctx;
	struct stat st;

	assert_false(seen("command", "/ws", ONE));
	assert_int_equal(stat(s->memo, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Writable by others: not believed (then replaced by ward's own). */
	assert_int_equal(chmod(s->memo, 0666), 0);
	assert_false(seen("command", "/ws", ONE));
	assert_true(seen("command", "/ws", ONE));
	/* A directory others may write: nothing is believed or written. */
	snprintf(s->memo, sizeof(s->memo), "%s/ward", s->dir);
	assert_int_equal(chmod(s->memo, 0777), 0);
	assert_false(seen("command", "/ws", ONE));
	assert_false(seen("command", "/ws", ONE));
}

static void test_bounded(void **ctx)
{
	struct state *s = *ctx;
	char ws[32];
	struct stat st;

	/* 300 workspaces: the file keeps the 256 most recent. */
	for (int i = 0; i < 300; i++) {
		snprintf(ws, sizeof(ws), "/ws/%d", i);
		assert_false(seen("command", ws, ONE));
	}
	assert_int_equal(stat(s->memo, &st), 0);
	assert_true(st.st_size <= 22 + 256 * 34);
	assert_true(seen("command", "/ws/299", ONE));
	assert_true(seen("command", "/ws/60", ONE));
	/* The oldest were dropped: said again. */
	assert_false(seen("command", "/ws/0", ONE));
}

static void test_arguments(void **ctx)
{
	bool out;

	(void)ctx;
	assert_int_equal(ward_notice_seen(NULL, "c", "/", ONE), -EINVAL);
	assert_int_equal(ward_notice_seen(&out, NULL, "/", ONE), -EINVAL);
	assert_int_equal(ward_notice_seen(&out, "c", NULL, ONE), -EINVAL);
	assert_int_equal(ward_notice_seen(&out, "c", "/", NULL), -EINVAL);
	/* No state directory at all: never "seen". */
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "relative", 1);
	assert_int_equal(ward_notice_seen(&out, "c", "/", ONE), 0);
	assert_false(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_once_per_change, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_keyed_by_scope_and_workspace,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_warnings, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_untrusted_file, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_arguments, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
