/*
 * Unit tests for the runner profiles (profile_bwrap.c, profile_landlock.c,
 * profile_seatbelt.c): golden files per runner × mode, the properties the
 * goldens cannot show on their own, and, where bwrap works on this machine,
 * a live run of the bwrap profile.
 *
 * Goldens live in tests/unit/golden/ (found beside this source file, or in
 * $WARD_GOLDEN_DIR). The real workspace and temporary directory are
 * replaced by @WS@ and @TMPDIR@ before comparing. To regenerate after an
 * intended change: WARD_UPDATE_GOLDEN=1 build/tests/test_profile, then
 * review `git diff tests/unit/golden`.
 */
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

#include "fixture.h"
#include "ward/ward.h"

#define BWRAP	 "/usr/bin/bwrap"
#define LAUNCHER "/usr/libexec/ward/landlock-run"

struct fixture {
	char base[256];	    /* canonical /tmp/ward-profile-XXXXXX */
	char ws[PATH_MAX];  /* base/ws: the workspace */
	char tmp[PATH_MAX]; /* base/tmp: the captured $TMPDIR */
};

static char *const command[] = {"bash", "-c", "echo hi", NULL};

/* --- helpers -------------------------------------------------------------- */

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/ward-profile-XXXXXX";
	char *real;

	if (!fx || !mkdtemp(tmpl))
		return -1;
	real = realpath(tmpl, NULL);
	if (!real || strlen(real) >= sizeof(fx->base))
		return -1;
	strcpy(fx->base, real);
	free(real);
	snprintf(fx->ws, sizeof(fx->ws), "%s/ws", fx->base);
	snprintf(fx->tmp, sizeof(fx->tmp), "%s/tmp", fx->base);
	if (mkdir(fx->ws, 0700) != 0 || mkdir(fx->tmp, 0700) != 0)
		return -1;
	/* The base profiles, without ward's own directories: their
	 * protection is test_translate's (the machine's state directory
	 * would otherwise be hidden in every profile). */
	setenv("XDG_STATE_HOME", fx_unreachable("state"), 1);
	setenv("XDG_CONFIG_HOME", fx_unreachable("config"), 1);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[PATH_MAX + 16];

	/* Only ever our own mkdtemp directory under /tmp. */
	if (strncmp(fx->base, "/tmp/ward-profile-", 18) == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->base);
		if (system(cmd) != 0)
			print_message("warning: could not remove %s\n",
				      fx->base);
	}
	free(fx);
	return 0;
}

static ward_policy *make_policy(const struct fixture *fx, enum ward_mode mode)
{
	ward_policy *p = NULL;

	assert_int_equal(ward_policy_new(&p, mode, fx->ws), 0);
	assert_int_equal(ward_policy_set_tmpdir(p, fx->tmp), 0);
	return p;
}

/* Replace every occurrence of @from in the malloc'd string @s by @to. */
static char *replace_all(char *s, const char *from, const char *to)
{
	size_t from_len = strlen(from), to_len = strlen(to), count = 0;
	char *out, *w;
	const char *r;

	for (r = s; (r = strstr(r, from)); r += from_len)
		count++;
	out = malloc(strlen(s) + count * to_len + 1);
	assert_non_null(out);
	w = out;
	for (r = s;;) {
		const char *hit = strstr(r, from);
		size_t n = hit ? (size_t)(hit - r) : strlen(r);

		memcpy(w, r, n);
		w += n;
		if (!hit)
			break;
		memcpy(w, to, to_len);
		w += to_len;
		r = hit + from_len;
	}
	*w = '\0';
	free(s);
	return out;
}

/* @text with the fixture's paths replaced by placeholders (consumes it). */
static char *normalize(char *text, const struct fixture *fx)
{
	text = replace_all(text, fx->ws, "@WS@");
	/* ward's state directory: the test's own (fx_unreachable). */
	text = replace_all(text, getenv("XDG_STATE_HOME"), "@STATE@");
	return replace_all(text, fx->tmp, "@TMPDIR@");
}

/* One argument per line, "\n"-terminated; frees @argv. */
static char *join_argv(char **argv)
{
	size_t len = 1;
	char *out;

	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	out = calloc(1, len);
	assert_non_null(out);
	for (size_t i = 0; argv[i]; i++) {
		strcat(out, argv[i]);
		strcat(out, "\n");
	}
	ward_strv_free(argv);
	return out;
}

static void golden_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("WARD_GOLDEN_DIR");
	const char *file = __FILE__;
	const char *slash = strrchr(file, '/');

	if (dir)
		snprintf(buf, len, "%s/%s", dir, name);
	else if (slash)
		snprintf(buf, len, "%.*s/golden/%s", (int)(slash - file), file,
			 name);
	else
		snprintf(buf, len, "golden/%s", name);
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

/* Length of the line starting at @s, without its newline. */
static size_t line_len(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? (size_t)(nl - s) : strlen(s);
}

/*
 * Print a line-by-line comparison: "  " equal, "- " expected (golden),
 * "+ " actual. Position-wise, which is enough for argv-shaped text and
 * keeps the output copy-pasteable.
 */
static void print_diff(const char *name, const char *want, const char *got)
{
	size_t lineno = 1;

	print_message("golden mismatch: %s (- golden, + actual)\n", name);
	while (*want || *got) {
		size_t wl = line_len(want), gl = line_len(got);

		if (wl == gl && strncmp(want, got, wl) == 0 && *want && *got) {
			print_message("  %3zu   %.*s\n", lineno, (int)wl, want);
		} else {
			if (*want)
				print_message("  %3zu - %.*s\n", lineno,
					      (int)wl, want);
			if (*got)
				print_message("  %3zu + %.*s\n", lineno,
					      (int)gl, got);
		}
		want += wl + (want[wl] == '\n');
		got += gl + (got[gl] == '\n');
		lineno++;
	}
	print_message("to accept the new output: WARD_UPDATE_GOLDEN=1 "
		      "build/tests/test_profile\n");
}

/* Compare @got (consumed) with the golden file @name. */
static void check_golden(const char *name, char *got)
{
	char path[PATH_MAX];
	char *want;

	golden_path(path, sizeof(path), name);
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
		print_diff(path, want, got);
		free(want);
		free(got);
		fail_msg("%s differs from the profile produced", name);
	}
	free(want);
	free(got);
}

static ssize_t argv_index(char **argv, const char *s, size_t from)
{
	for (size_t i = from; argv[i]; i++) {
		if (strcmp(argv[i], s) == 0)
			return (ssize_t)i;
	}
	return -1;
}

/* The index of the option pair/triple "opt a [b]" or -1. */
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

/* --- goldens -------------------------------------------------------------- */

static void golden_bwrap(void **state, enum ward_mode mode, const char *name)
{
	ward_policy *p = make_policy(*state, mode);
	char **argv = NULL;

	assert_int_equal(ward_profile_bwrap(&argv, p, BWRAP, -1, command), 0);
	check_golden(name, normalize(join_argv(argv), *state));
	ward_policy_free(p);
}

static void golden_landlock(void **state, enum ward_mode mode, const char *name)
{
	ward_policy *p = make_policy(*state, mode);
	char **argv = NULL;

	assert_int_equal(ward_profile_landlock(&argv, p, LAUNCHER, command), 0);
	check_golden(name, normalize(join_argv(argv), *state));
	ward_policy_free(p);
}

static void golden_seatbelt(void **state, enum ward_mode mode, const char *name)
{
	ward_policy *p = make_policy(*state, mode);
	char *text = NULL;

	assert_int_equal(ward_profile_seatbelt(&text, p), 0);
	check_golden(name, normalize(text, *state));
	ward_policy_free(p);
}

static void test_golden_bwrap_read_only(void **state)
{
	golden_bwrap(state, WARD_MODE_READ_ONLY, "bwrap-read-only.argv");
}

static void test_golden_bwrap_workspace_write(void **state)
{
	golden_bwrap(state, WARD_MODE_WORKSPACE_WRITE,
		     "bwrap-workspace-write.argv");
}

static void test_golden_landlock_read_only(void **state)
{
	golden_landlock(state, WARD_MODE_READ_ONLY, "landlock-read-only.argv");
}

static void test_golden_landlock_workspace_write(void **state)
{
	golden_landlock(state, WARD_MODE_WORKSPACE_WRITE,
			"landlock-workspace-write.argv");
}

static void test_golden_seatbelt_read_only(void **state)
{
	golden_seatbelt(state, WARD_MODE_READ_ONLY, "seatbelt-read-only.sb");
}

static void test_golden_seatbelt_workspace_write(void **state)
{
	golden_seatbelt(state, WARD_MODE_WORKSPACE_WRITE,
			"seatbelt-workspace-write.sb");
}

/* --- properties ----------------------------------------------------------- */

static void test_danger_full_access_has_no_profile(void **state)
{
	ward_policy *p = make_policy(*state, WARD_MODE_DANGER_FULL_ACCESS);
	char **argv = (char **)0x1;
	char *text = (char *)0x1;

	assert_int_equal(ward_profile_bwrap(&argv, p, BWRAP, 3, command),
			 WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "danger-full-access"));
	assert_int_equal(ward_profile_landlock(&argv, p, LAUNCHER, command),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_seatbelt(&text, p), WARD_EINVAL);
	assert_int_equal(ward_profile_seatbelt_argv(&argv, p, command),
			 WARD_EINVAL);
	/* *out is written only on success. */
	assert_ptr_equal(argv, (char **)0x1);
	assert_ptr_equal(text, (char *)0x1);
	ward_policy_free(p);
}

static void test_missing_arguments(void **state)
{
	ward_policy *p = make_policy(*state, WARD_MODE_READ_ONLY);
	char **argv = NULL;
	char *text = NULL;

	assert_int_equal(ward_profile_bwrap(NULL, p, BWRAP, -1, command),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_bwrap(&argv, NULL, BWRAP, -1, command),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_bwrap(&argv, p, NULL, -1, command),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_bwrap(&argv, p, "", -1, command),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_landlock(&argv, p, NULL, command),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_landlock(&argv, NULL, LAUNCHER, NULL),
			 WARD_EINVAL);
	assert_int_equal(ward_profile_seatbelt(&text, NULL), WARD_EINVAL);
	assert_int_equal(ward_profile_seatbelt(NULL, p), WARD_EINVAL);
	assert_int_equal(ward_profile_seatbelt_argv(NULL, p, NULL),
			 WARD_EINVAL);
	assert_null(argv);
	assert_null(text);
	ward_policy_free(p);
}

static void test_null_argv_has_no_separator(void **state)
{
	for (int m = WARD_MODE_READ_ONLY; m <= WARD_MODE_WORKSPACE_WRITE; m++) {
		ward_policy *p = make_policy(*state, (enum ward_mode)m);
		char **a = NULL;
		size_t n;

		assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, 4, NULL), 0);
		n = ward_strv_len(a);
		assert_int_equal(argv_index(a, "--", 0), -1);
		/* The profile options end the vector. */
		assert_string_equal(a[n - 2], "--json-status-fd");
		assert_string_equal(a[n - 1], "4");
		ward_strv_free(a);

		assert_int_equal(ward_profile_landlock(&a, p, LAUNCHER, NULL),
				 0);
		assert_int_equal(argv_index(a, "--", 0), -1);
		ward_strv_free(a);

		assert_int_equal(ward_profile_seatbelt_argv(&a, p, NULL), 0);
		assert_int_equal(ward_strv_len(a), 3);
		assert_int_equal(argv_index(a, "--", 0), -1);
		ward_strv_free(a);
		ward_policy_free(p);
	}
}

static void test_bwrap_status_fd(void **state)
{
	ward_policy *p = make_policy(*state, WARD_MODE_WORKSPACE_WRITE);
	char **a = NULL;
	ssize_t sep, fd;

	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, 7, command), 0);
	sep = argv_index(a, "--", 0);
	fd = argv_index(a, "--json-status-fd", 0);
	assert_true(sep > 0);
	/* Right before the separator, so nothing can follow it by mistake. */
	assert_int_equal(fd, sep - 2);
	assert_string_equal(a[fd + 1], "7");
	assert_string_equal(a[sep + 1], "bash");
	assert_null(a[sep + 4]);
	ward_strv_free(a);

	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_int_equal(argv_index(a, "--json-status-fd", 0), -1);
	ward_strv_free(a);
	ward_policy_free(p);
}

/*
 * The fixed hardening is present in every confined mode, before the
 * separator: a new session, death with the parent, no capabilities, new
 * user/pid/ipc/uts namespaces, WARD_SANDBOX=bwrap.
 */
static void test_bwrap_hardening(void **state)
{
	static const char *const flags[] = {
	    "--new-session", "--die-with-parent", "--unshare-user",
	    "--unshare-pid", "--unshare-ipc",	  "--unshare-uts",
	};

	for (int m = WARD_MODE_READ_ONLY; m <= WARD_MODE_WORKSPACE_WRITE; m++) {
		ward_policy *p = make_policy(*state, (enum ward_mode)m);
		char **a = NULL;
		ssize_t sep;

		assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command),
				 0);
		sep = argv_index(a, "--", 0);
		assert_string_equal(a[0], BWRAP);
		for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			ssize_t at = argv_index(a, flags[i], 0);

			assert_true(at > 0 && at < sep);
		}
		assert_true(find_opt(a, "--cap-drop", "ALL", NULL) > 0);
		assert_true(find_opt(a, "--setenv", "WARD_SANDBOX", "bwrap") >
			    0);
		assert_int_equal(find_opt(a, "--ro-bind", "/", "/"), 1);
		/* The network is its own knob: off by default in a
		 * confined mode (loopback only), shared when on. */
		assert_true(argv_index(a, "--unshare-net", 0) > 0 &&
			    argv_index(a, "--unshare-net", 0) < sep);
		ward_strv_free(a);
		assert_int_equal(
		    ward_policy_set_network(p, WARD_NETWORK_ON, NULL, NULL), 0);
		assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command),
				 0);
		assert_int_equal(argv_index(a, "--unshare-net", 0), -1);
		ward_strv_free(a);
		ward_policy_free(p);
	}
}

/*
 * Read-only binds nothing writable; the private tmpfs would hide a
 * workspace under /tmp, so it is bound back read-only after the tmpfs, and
 * a $TMPDIR under /tmp gets a private directory.
 */
static void test_bwrap_read_only_tmp(void **state)
{
	struct fixture *fx = *state;
	ward_policy *p = make_policy(fx, WARD_MODE_READ_ONLY);
	char **a = NULL;
	ssize_t tmpfs, ro, dir;

	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_int_equal(argv_index(a, "--bind", 0), -1);
	tmpfs = find_opt(a, "--tmpfs", "/tmp", NULL);
	ro = find_opt(a, "--ro-bind", fx->ws, fx->ws);
	dir = find_opt(a, "--dir", fx->tmp, NULL);
	assert_true(tmpfs > 0);
	assert_true(ro > tmpfs);
	assert_true(dir > tmpfs);
	ward_strv_free(a);

	/* A $TMPDIR inside the read-only workspace cannot be created. */
	assert_int_equal(ward_policy_set_tmpdir(p, fx->ws), 0);
	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_int_equal(argv_index(a, "--dir", 0), -1);
	ward_strv_free(a);

	/* Not lexically clean, or not under /tmp: no private directory. */
	assert_int_equal(ward_policy_set_tmpdir(p, "/tmp/../etc"), 0);
	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_int_equal(argv_index(a, "--dir", 0), -1);
	ward_strv_free(a);
	assert_int_equal(ward_policy_set_tmpdir(p, "/var/tmp/x"), 0);
	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_int_equal(argv_index(a, "--dir", 0), -1);
	ward_strv_free(a);
	/* A trailing slash is dropped. */
	assert_int_equal(ward_policy_set_tmpdir(p, "/tmp/ward-x/"), 0);
	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_true(find_opt(a, "--dir", "/tmp/ward-x", NULL) > 0);
	ward_strv_free(a);
	ward_policy_free(p);
}

/*
 * Every writable root of ward_roots_writable() is bound, after the tmpfs,
 * parents before children (else /tmp would shadow a workspace under it).
 */
static void test_bwrap_binds_parents_first(void **state)
{
	struct fixture *fx = *state;
	ward_policy *p = make_policy(fx, WARD_MODE_WORKSPACE_WRITE);
	char **a = NULL, **roots = NULL;
	ssize_t tmpfs, at_tmp, at_ws;
	size_t binds = 0;

	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, command), 0);
	assert_int_equal(ward_roots_writable(&roots, p), 0);
	tmpfs = find_opt(a, "--tmpfs", "/tmp", NULL);
	for (size_t i = 0; roots[i]; i++) {
		ssize_t at = find_opt(a, "--bind", roots[i], roots[i]);

		assert_true(at > tmpfs);
	}
	for (ssize_t i = 0; (i = argv_index(a, "--bind", (size_t)i)) >= 0; i++)
		binds++;
	assert_int_equal(binds, ward_strv_len(roots));
	/* The workspace is under /tmp: its bind must come after /tmp's. */
	at_tmp = find_opt(a, "--bind", "/tmp", "/tmp");
	at_ws = find_opt(a, "--bind", fx->ws, fx->ws);
	assert_true(at_tmp > 0 && at_ws > at_tmp);
	/* ward_roots_writable lists the workspace before /tmp. */
	assert_string_equal(roots[0], fx->ws);
	ward_strv_free(roots);
	ward_strv_free(a);
	ward_policy_free(p);
}

static void test_landlock_profile(void **state)
{
	ward_policy *p = make_policy(*state, WARD_MODE_WORKSPACE_WRITE);
	char **a = NULL, **roots = NULL;
	size_t i;

	assert_int_equal(ward_profile_landlock(&a, p, LAUNCHER, command), 0);
	assert_int_equal(ward_roots_writable(&roots, p), 0);
	assert_string_equal(a[0], LAUNCHER);
	assert_string_equal(a[1], "--ro");
	assert_string_equal(a[2], "/");
	assert_string_equal(a[3], "--rw");
	assert_string_equal(a[4], "/dev/null");
	for (i = 0; roots[i]; i++) {
		assert_string_equal(a[5 + 2 * i], "--rw");
		assert_string_equal(a[6 + 2 * i], roots[i]);
	}
	/* The network is off by default: the launcher's --net-off. */
	assert_string_equal(a[5 + 2 * i], "--net-off");
	assert_string_equal(a[6 + 2 * i], "--");
	assert_string_equal(a[7 + 2 * i], "bash");
	assert_null(a[10 + 2 * i]);
	ward_strv_free(roots);
	ward_strv_free(a);
	ward_policy_free(p);
}

static void test_seatbelt_argv(void **state)
{
	ward_policy *p = make_policy(*state, WARD_MODE_WORKSPACE_WRITE);
	char **a = NULL;
	char *text = NULL;

	assert_int_equal(ward_profile_seatbelt_argv(&a, p, command), 0);
	assert_int_equal(ward_profile_seatbelt(&text, p), 0);
	assert_string_equal(a[0], "/usr/bin/sandbox-exec");
	assert_string_equal(a[1], "-p");
	assert_string_equal(a[2], text);
	assert_string_equal(a[3], "--");
	assert_string_equal(a[4], "bash");
	assert_string_equal(a[6], "echo hi");
	assert_null(a[7]);
	free(text);
	ward_strv_free(a);
	ward_policy_free(p);
}

/* Read-only: the only write rule is /dev/null. */
static void test_seatbelt_read_only_writes(void **state)
{
	ward_policy *p = make_policy(*state, WARD_MODE_READ_ONLY);
	char *text = NULL, want[PATH_MAX + 64];
	const char *first, *w;

	assert_int_equal(ward_profile_seatbelt(&text, p), 0);
	assert_int_equal(strncmp(text, "(version 1)\n(deny default)\n", 27), 0);
	first = strstr(text, "(allow file-write*");
	assert_non_null(first);
	assert_int_equal(
	    strncmp(first, "(allow file-write* (literal \"/dev/null\"))", 41),
	    0);
	w = strstr(first + 1, "(allow file-write*");
	assert_null(w);
	/* No writable subpath; only ward's state directory is named, as
	 * hidden. */
	assert_null(strstr(text, "(allow file-write* (subpath"));
	w = strstr(text, "subpath");
	assert_non_null(w);
	assert_null(strstr(w + 1, "subpath"));
	snprintf(want, sizeof(want),
		 "(deny file-read* file-write* (subpath \"%s/ward\"))",
		 getenv("XDG_STATE_HOME"));
	assert_non_null(strstr(text, want));
	assert_non_null(strstr(text, "(allow file-read*)"));
	free(text);
	ward_policy_free(p);
}

static void test_seatbelt_escapes_paths(void **state)
{
	struct fixture *fx = *state;
	char odd[PATH_MAX], want[PATH_MAX * 2];
	ward_policy *p = NULL;
	char *text = NULL;

	snprintf(odd, sizeof(odd), "%s/a\"b\\c", fx->base);
	assert_int_equal(mkdir(odd, 0700), 0);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, odd),
			 0);
	assert_int_equal(ward_policy_set_tmpdir(p, NULL), 0);
	assert_int_equal(ward_profile_seatbelt(&text, p), 0);
	snprintf(want, sizeof(want),
		 "(allow file-write* (subpath \"%s/a\\\"b\\\\c\"))\n",
		 fx->base);
	if (!strstr(text, want))
		fail_msg("escaped rule not found:\n  want: %s  text:\n%s", want,
			 text);
	free(text);
	ward_policy_free(p);
}

static void test_seatbelt_refuses_control_characters(void **state)
{
	struct fixture *fx = *state;
	char odd[PATH_MAX];
	ward_policy *p = NULL;
	char *text = NULL;

	snprintf(odd, sizeof(odd), "%s/new\nline", fx->base);
	assert_int_equal(mkdir(odd, 0700), 0);
	assert_int_equal(ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, odd),
			 0);
	assert_int_equal(ward_profile_seatbelt(&text, p), WARD_EINVAL);
	assert_null(text);
	ward_policy_free(p);
}

/* --- live: the bwrap profile on this machine ------------------------------ */

/*
 * Run @argv with stdout+stderr captured into @buf (NUL-terminated).
 * Returns the exit status, or -1 when it did not exit normally.
 */
static int run_capture(char *const argv[], const char *cwd, char *buf,
		       size_t len)
{
	int pipefd[2], status;
	size_t used = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		if (cwd && chdir(cwd) != 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], buf + used, len - used - 1)) > 0 ||
	       (n < 0 && errno == EINTR))
		used += n > 0 ? (size_t)n : 0;
	buf[used] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Fail with the whole output when @needle is missing from it. */
static void expect_in(const char *out, const char *needle)
{
	if (!strstr(out, needle))
		fail_msg("\"%s\" not in the sandboxed output:\n%s", needle,
			 out);
}

static bool bwrap_usable(void)
{
	char *const argv[] = {
	    BWRAP, "--ro-bind", "/", "/", "--unshare-user", "/bin/true", NULL};
	char out[4096];

	if (access(BWRAP, X_OK) != 0) {
		print_message("SKIP: %s is not installed\n", BWRAP);
		return false;
	}
	if (run_capture(argv, NULL, out, sizeof(out)) != 0) {
		print_message("SKIP: bwrap cannot create a user namespace "
			      "here: %s\n",
			      out);
		return false;
	}
	return true;
}

static void test_live_bwrap_read_only(void **state)
{
	struct fixture *fx = *state;
	char *const script[] = {
	    "/bin/sh", "-c",
	    "grep -E '^(CapPrm|CapEff|CapBnd|NoNewPrivs):' "
	    "/proc/self/status; echo \"env=$WARD_SANDBOX\"; "
	    "touch /ward-x; touch \"$0/f\"; echo x >/dev/null && "
	    "echo null-ok; touch /tmp/private && echo tmp-ok; "
	    "ls -d \"$0\" >/dev/null && echo ws-visible; exit 3",
	    fx->ws, NULL};
	ward_policy *p = make_policy(fx, WARD_MODE_READ_ONLY);
	char **a = NULL;
	char out[8192], path[PATH_MAX + 8];
	int rc;

	if (!bwrap_usable()) {
		ward_policy_free(p);
		skip();
	}
	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, script), 0);
	rc = run_capture(a, fx->ws, out, sizeof(out));
	ward_strv_free(a);
	ward_policy_free(p);
	if (rc != 3)
		fail_msg("exit %d, not 3:\n%s", rc, out);
	/* No capabilities, even though the test may run as root. */
	expect_in(out, "CapPrm:\t0000000000000000");
	expect_in(out, "CapEff:\t0000000000000000");
	expect_in(out, "CapBnd:\t0000000000000000");
	expect_in(out, "NoNewPrivs:\t1");
	expect_in(out, "env=bwrap");
	expect_in(out, "'/ward-x': Read-only file system");
	expect_in(out, "/f': Read-only file system");
	expect_in(out, "null-ok");
	expect_in(out, "tmp-ok");
	expect_in(out, "ws-visible");
	/* Nothing reached the host. */
	snprintf(path, sizeof(path), "%s/f", fx->ws);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access("/ward-x", F_OK), -1);
}

static void test_live_bwrap_workspace_write(void **state)
{
	struct fixture *fx = *state;
	char *const script[] = {"/bin/sh",
				"-c",
				"touch \"$0/f\" && echo ws-ok; "
				"touch \"$1/g\" && echo tmpdir-ok; "
				"touch /ward-x",
				fx->ws,
				fx->tmp,
				NULL};
	ward_policy *p = make_policy(fx, WARD_MODE_WORKSPACE_WRITE);
	char **a = NULL;
	char out[8192], path[PATH_MAX + 8];
	int rc;

	if (!bwrap_usable()) {
		ward_policy_free(p);
		skip();
	}
	assert_int_equal(ward_profile_bwrap(&a, p, BWRAP, -1, script), 0);
	rc = run_capture(a, fx->ws, out, sizeof(out));
	ward_strv_free(a);
	ward_policy_free(p);
	if (rc != 1)
		fail_msg("exit %d, not 1:\n%s", rc, out);
	expect_in(out, "ws-ok");
	expect_in(out, "tmpdir-ok");
	expect_in(out, "'/ward-x': Read-only file system");
	/* The writes persist on the host (the fixture is under /tmp). */
	snprintf(path, sizeof(path), "%s/f", fx->ws);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/g", fx->tmp);
	assert_int_equal(access(path, F_OK), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_golden_bwrap_read_only),
	    T(test_golden_bwrap_workspace_write),
	    T(test_golden_landlock_read_only),
	    T(test_golden_landlock_workspace_write),
	    T(test_golden_seatbelt_read_only),
	    T(test_golden_seatbelt_workspace_write),
	    T(test_danger_full_access_has_no_profile),
	    T(test_missing_arguments),
	    T(test_null_argv_has_no_separator),
	    T(test_bwrap_status_fd),
	    T(test_bwrap_hardening),
	    T(test_bwrap_read_only_tmp),
	    T(test_bwrap_binds_parents_first),
	    T(test_landlock_profile),
	    T(test_seatbelt_argv),
	    T(test_seatbelt_read_only_writes),
	    T(test_seatbelt_escapes_paths),
	    T(test_seatbelt_refuses_control_characters),
	    T(test_live_bwrap_read_only),
	    T(test_live_bwrap_workspace_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
