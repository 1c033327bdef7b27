/*
 * Unit tests for the provider: chain arbitration, the probe cache, forced
 * and custom runners, confine() per runner, and the real functional probes
 * on this machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "internal.h"
#include "ward/ward.h"

/* --- fixtures ------------------------------------------------------------ */

/* An injected probe: fixed verdicts per runner, counting its calls. */
struct fake_probe {
	enum ward_verdict verdict[WARD_RUNNER_CUSTOM + 1];
	const char *why[WARD_RUNNER_CUSTOM + 1];
	int calls[WARD_RUNNER_CUSTOM + 1];
};

static enum ward_verdict fake_probe_fn(void *ctx, enum ward_runner runner,
				       char *why, size_t why_len)
{
	struct fake_probe *f = ctx;

	f->calls[runner]++;
	if (f->why[runner])
		snprintf(why, why_len, "%s", f->why[runner]);
	return f->verdict[runner];
}

static int total_calls(const struct fake_probe *f)
{
	int n = 0;

	for (size_t i = 0; i <= WARD_RUNNER_CUSTOM; i++)
		n += f->calls[i];
	return n;
}

/* A private directory under /tmp, removed with rm -rf at the end. */
static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/ward-test-provider-XXXXXX";
	char *dir = mkdtemp(tmpl);

	assert_non_null(dir);
	dir = strdup(dir);
	assert_non_null(dir);
	return dir;
}

static void remove_tree(char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* Write @body to @dir/@name with @mode; returns the malloc'd path. */
static char *write_file(const char *dir, const char *name, const char *body,
			mode_t mode)
{
	char *path = NULL;
	FILE *f;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(body, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static ward_policy *policy_at(enum ward_mode mode, const char *root)
{
	ward_policy *p = NULL;

	assert_int_equal(ward_policy_new(&p, mode, root), 0);
	return p;
}

static ward_provider *provider_with(const struct ward_provider_options *o)
{
	ward_provider *p = NULL;
	int err = ward_provider_new(&p, o);

	if (err)
		print_message("provider_new: %s\n", ward_error_last());
	assert_int_equal(err, 0);
	return p;
}

/*
 * The operands of every @flag in the launcher's part of a confined
 * command's argv (before its "--"), in order: its Landlock grants. Static
 * storage, valid until the next call.
 */
static char *const *grants(const ward_confined *c, const char *flag)
{
	static char *out[64];
	char *const *argv = ward_confined_argv(c);
	size_t n = 0;

	for (size_t i = 1; argv[i] && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], flag) == 0 && argv[i + 1] && n < 63)
			out[n++] = argv[++i];
	out[n] = NULL;
	return out;
}

static void assert_strv_equal(char *const *a, char *const *b)
{
	size_t n = ward_strv_len(a);

	assert_int_equal(n, ward_strv_len(b));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(a[i], b[i]);
}

/* The directory of the running test binary (build/tests). */
static void exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	assert_true(n > 0);
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	assert_non_null(slash);
	*slash = '\0';
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* True when @pid no longer runs: gone, or a zombie nobody reaped yet. */
static bool process_gone(pid_t pid)
{
	char path[64], buf[512];
	char *paren;
	FILE *f;
	size_t n;

	if (kill(pid, 0) != 0)
		return errno == ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static char *const cmd_echo[] = {"echo", "hi", NULL};

/* --- chain arbitration with injected probes ----------------------------- */

static void test_first_usable_wins(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	enum ward_runner r;
	enum ward_enforcement e;
	ward_provider *p;

	(void)state;
	f.verdict[WARD_RUNNER_BWRAP] = WARD_VERDICT_FULL;
	f.verdict[WARD_RUNNER_LANDLOCK] = WARD_VERDICT_FULL;
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(total_calls(&f), 0); /* nothing probed at new */
	assert_int_equal(ward_provider_select(p, &r, &e), 0);
	assert_int_equal(r, WARD_RUNNER_BWRAP);
	assert_int_equal(e, WARD_ENFORCEMENT_FULL);
	assert_int_equal(f.calls[WARD_RUNNER_BWRAP], 1);
	/* The first usable candidate ends arbitration. */
	assert_int_equal(f.calls[WARD_RUNNER_LANDLOCK], 0);
	ward_provider_free(p);
}

static void test_fallback_to_second(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *pol = policy_at(WARD_MODE_READ_ONLY, "/");
	ward_confined *c = NULL;
	enum ward_runner r;
	enum ward_enforcement e;
	ward_provider *p;

	(void)state;
	f.verdict[WARD_RUNNER_BWRAP] = WARD_VERDICT_UNUSABLE;
	f.verdict[WARD_RUNNER_LANDLOCK] = WARD_VERDICT_PARTIAL;
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	o.launcher_path = "/bin/true"; /* any executable: not run here */
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, &r, &e), 0);
	assert_int_equal(r, WARD_RUNNER_LANDLOCK);
	assert_int_equal(e, WARD_ENFORCEMENT_PARTIAL);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo), 0);
	assert_int_equal(ward_confined_runner(c), WARD_RUNNER_LANDLOCK);
	assert_int_equal(ward_confined_enforcement(c),
			 WARD_ENFORCEMENT_PARTIAL);
	assert_string_equal(ward_confined_denial_signature(c),
			    ward_denial_signature(WARD_RUNNER_LANDLOCK));
	ward_confined_free(c);
	ward_provider_free(p);
	ward_policy_free(pol);
}

static void test_all_unusable_fails_closed(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *pol = policy_at(WARD_MODE_WORKSPACE_WRITE, "/tmp");
	ward_confined *c = NULL;
	enum ward_runner r = WARD_RUNNER_SEATBELT;
	const char *msg;
	ward_provider *p;

	(void)state;
	f.why[WARD_RUNNER_BWRAP] = "no user namespaces here";
	f.why[WARD_RUNNER_LANDLOCK] = "kernel without Landlock";
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, &r, NULL), WARD_EUNAVAILABLE);
	assert_int_equal(r, WARD_RUNNER_SEATBELT); /* untouched on failure */
	msg = ward_error_last();
	assert_non_null(strstr(msg, "sandbox unavailable"));
	assert_non_null(strstr(msg, "bwrap: no user namespaces here"));
	assert_non_null(strstr(msg, "landlock: kernel without Landlock"));
	assert_non_null(strstr(msg, "refusing to run the command unconfined"));

	/* confine says the same and hands back nothing to spawn. */
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo),
			 WARD_EUNAVAILABLE);
	assert_null(c);
	assert_non_null(strstr(ward_error_last(),
			       "refusing to run the command unconfined"));
	ward_provider_free(p);
	ward_policy_free(pol);
}

static void test_probe_once_per_runner(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *ro = policy_at(WARD_MODE_READ_ONLY, "/tmp");
	ward_policy *ww = policy_at(WARD_MODE_WORKSPACE_WRITE, "/tmp");
	const struct ward_probe_entry *entries;
	size_t n;
	ward_provider *p;

	(void)state;
	/* bwrap unusable, so every call must consult both verdicts. */
	f.verdict[WARD_RUNNER_LANDLOCK] = WARD_VERDICT_FULL;
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	o.launcher_path = "/bin/true";
	p = provider_with(&o);
	for (int i = 0; i < 40; i++) {
		ward_confined *c = NULL;

		assert_int_equal(
		    ward_provider_confine(&c, p, i % 2 ? ro : ww, cmd_echo), 0);
		assert_int_equal(ward_confined_runner(c), WARD_RUNNER_LANDLOCK);
		ward_confined_free(c);
		assert_int_equal(ward_provider_select(p, NULL, NULL), 0);
	}
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(f.calls[WARD_RUNNER_BWRAP], 1);
	assert_int_equal(f.calls[WARD_RUNNER_LANDLOCK], 1);
	assert_int_equal(total_calls(&f), 2);
	ward_provider_free(p);

	/* A new provider has its own cache: probed again, once. */
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, NULL, NULL), 0);
	assert_int_equal(f.calls[WARD_RUNNER_BWRAP], 2);
	ward_provider_free(p);
	ward_policy_free(ro);
	ward_policy_free(ww);
}

static void test_sole_candidate_not_probed(void **state)
{
	static const enum ward_runner chain[] = {WARD_RUNNER_LANDLOCK};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0}; /* would say unusable if asked */
	const struct ward_probe_entry *entries;
	enum ward_runner r;
	enum ward_enforcement e;
	size_t n;
	ward_provider *p;

	(void)state;
	o.chain = chain;
	o.chain_len = 1;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, &r, &e), 0);
	assert_int_equal(r, WARD_RUNNER_LANDLOCK);
	assert_int_equal(e, WARD_ENFORCEMENT_FULL);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(n, 1);
	assert_int_equal(entries[0].runner, WARD_RUNNER_LANDLOCK);
	assert_false(entries[0].probed);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_FULL);
	assert_non_null(strstr(entries[0].why, "without a probe"));
	assert_int_equal(total_calls(&f), 0);
	ward_provider_free(p);
}

static void test_report_lists_every_candidate(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	const struct ward_probe_entry *entries;
	size_t n;
	ward_provider *p;

	(void)state;
	f.verdict[WARD_RUNNER_BWRAP] = WARD_VERDICT_FULL;
	f.verdict[WARD_RUNNER_LANDLOCK] = WARD_VERDICT_PARTIAL;
	f.why[WARD_RUNNER_LANDLOCK] = "abi 3";
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(n, 2);
	assert_int_equal(entries[0].runner, WARD_RUNNER_BWRAP);
	assert_true(entries[0].probed);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_FULL);
	assert_string_equal(entries[0].why, "probe ok"); /* default text */
	assert_int_equal(entries[1].runner, WARD_RUNNER_LANDLOCK);
	assert_true(entries[1].probed);
	assert_int_equal(entries[1].verdict, WARD_VERDICT_PARTIAL);
	assert_string_equal(entries[1].why, "abi 3");
	ward_provider_free(p);
}

/* --- platforms ----------------------------------------------------------- */

static void empty_chain_case(enum ward_platform platform, bool override)
{
	static const enum ward_runner none[1] = {WARD_RUNNER_BWRAP};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *pol = policy_at(WARD_MODE_READ_ONLY, "/tmp");
	const struct ward_probe_entry *entries;
	ward_confined *c = NULL;
	size_t n = 99;
	ward_provider *p;

	o.platform = platform;
	if (override) {
		o.chain = none; /* a chain of length 0 */
		o.chain_len = 0;
	}
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, NULL, NULL),
			 WARD_EUNAVAILABLE);
	assert_non_null(strstr(ward_error_last(), "unavailable"));
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo),
			 WARD_EUNAVAILABLE);
	assert_null(c);
	assert_non_null(strstr(ward_error_last(),
			       "refusing to run the command unconfined"));
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(n, 0);
	/* Nothing was even asked: there is nothing to ask. */
	assert_int_equal(total_calls(&f), 0);
	ward_provider_free(p);
	ward_policy_free(pol);
}

static void test_win32_fails_closed(void **state)
{
	(void)state;
	empty_chain_case(WARD_PLATFORM_WIN32, false);
}

static void test_other_platform_fails_closed(void **state)
{
	(void)state;
	empty_chain_case(WARD_PLATFORM_OTHER, false);
}

static void test_empty_chain_override_fails_closed(void **state)
{
	(void)state;
	empty_chain_case(WARD_PLATFORM_LINUX, true);
}

static void test_reserved_windows_acl_never_confines(void **state)
{
	static const enum ward_runner sole[] = {WARD_RUNNER_WINDOWS_ACL};
	static const enum ward_runner two[] = {WARD_RUNNER_WINDOWS_ACL,
					       WARD_RUNNER_SEATBELT};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p;

	(void)state;
	/* Sole: not probed, but it can never confine. */
	o.chain = sole;
	o.chain_len = 1;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, NULL, NULL),
			 WARD_EUNAVAILABLE);
	assert_non_null(strstr(ward_error_last(), "reserved"));
	ward_provider_free(p);

	/* Real probes on Linux: both unusable, each with its reason. */
	o.chain = two;
	o.chain_len = 2;
	o.probe_timeout_ms = 1000;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, NULL, NULL),
			 WARD_EUNAVAILABLE);
	assert_non_null(strstr(ward_error_last(), "windows-acl: reserved"));
	assert_non_null(strstr(ward_error_last(), "seatbelt: "));
	assert_non_null(strstr(ward_error_last(), "/usr/bin/sandbox-exec"));
	ward_provider_free(p);
}

static void test_darwin_chain_builds_sandbox_exec(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *pol = policy_at(WARD_MODE_WORKSPACE_WRITE, "/tmp");
	const enum ward_runner *chain;
	char **want = NULL;
	ward_confined *c = NULL;
	ward_provider *p;

	(void)state;
	assert_int_equal(ward_platform_chain(&chain, WARD_PLATFORM_DARWIN), 1);
	assert_int_equal(chain[0], WARD_RUNNER_SEATBELT);
	o.platform = WARD_PLATFORM_DARWIN;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo), 0);
	assert_int_equal(ward_confined_runner(c), WARD_RUNNER_SEATBELT);
	assert_int_equal(ward_confined_enforcement(c), WARD_ENFORCEMENT_FULL);
	assert_int_equal(ward_confined_mode(c), WARD_MODE_WORKSPACE_WRITE);
	assert_string_equal(ward_confined_argv(c)[0], "/usr/bin/sandbox-exec");
	assert_int_equal(ward_profile_seatbelt_argv(&want, pol, cmd_echo), 0);
	assert_strv_equal(ward_confined_argv(c), want);
	assert_strv_equal(c->cmd, cmd_echo);
	assert_string_equal(ward_plan_runner_path(c->plan),
			    "/usr/bin/sandbox-exec");
	assert_null(grants(c, "--ro")[0]);
	assert_int_equal(total_calls(&f), 0); /* sole candidate */
	ward_strv_free(want);
	ward_confined_free(c);
	ward_provider_free(p);
	ward_policy_free(pol);
}

/* --- force() --------------------------------------------------------------- */

static void test_force(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	enum ward_runner r;
	ward_provider *p;

	(void)state;
	f.verdict[WARD_RUNNER_BWRAP] = WARD_VERDICT_FULL;
	f.verdict[WARD_RUNNER_LANDLOCK] = WARD_VERDICT_FULL;
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_SEATBELT),
			 WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "not in the runner chain"));
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_CUSTOM),
			 WARD_EINVAL);
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_LANDLOCK), 0);
	assert_int_equal(ward_provider_select(p, &r, NULL), 0);
	assert_int_equal(r, WARD_RUNNER_LANDLOCK); /* bwrap would have won */
	assert_int_equal(total_calls(&f), 0);	   /* sole: no probe */
	/* Forcing again picks from the configured chain, not the forced one. */
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_BWRAP), 0);
	assert_int_equal(ward_provider_select(p, &r, NULL), 0);
	assert_int_equal(r, WARD_RUNNER_BWRAP);
	assert_int_equal(total_calls(&f), 0);
	ward_provider_free(p);

	/* On darwin only seatbelt can be forced. */
	o.platform = WARD_PLATFORM_DARWIN;
	p = provider_with(&o);
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_BWRAP),
			 WARD_EINVAL);
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_SEATBELT), 0);
	ward_provider_free(p);
}

/* --- runner_command (custom) --------------------------------------------- */

static void expect_custom_failure(const char *runner_command,
				  const char *needle)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *pol = policy_at(WARD_MODE_READ_ONLY, "/tmp");
	ward_confined *c = NULL;
	enum ward_runner r;
	ward_provider *p;

	o.runner_command = runner_command;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, &r, NULL), 0);
	assert_int_equal(r, WARD_RUNNER_CUSTOM);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo),
			 WARD_ERUNNER);
	assert_null(c); /* no argv at all: never an unconfined run */
	if (!strstr(ward_error_last(), needle))
		print_message("detail: %s\n", ward_error_last());
	assert_non_null(strstr(ward_error_last(), needle));
	assert_int_equal(total_calls(&f), 0);
	ward_provider_free(p);
	ward_policy_free(pol);
}

static void test_runner_command_missing(void **state)
{
	char *dir = make_tmpdir();
	char *plain = write_file(dir, "not-exec", "#!/bin/sh\n", 0644);

	(void)state;
	{
		const char *gone = fx_absent("ward-runner");
		char want[PATH_MAX + 16];

		snprintf(want, sizeof(want), "%s is missing", gone);
		expect_custom_failure(gone, want);
	}
	expect_custom_failure("ward-no-such-runner-zz9", "not found in PATH");
	expect_custom_failure(plain, "not executable");
	expect_custom_failure("./relative/runner", "absolute path");
	free(plain);
	remove_tree(dir);
}

static void test_runner_command_present(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0};
	ward_policy *pol = policy_at(WARD_MODE_WORKSPACE_WRITE, "/tmp");
	const struct ward_probe_entry *entries;
	char **want = NULL;
	ward_confined *c = NULL;
	enum ward_enforcement e;
	size_t n;
	ward_provider *p;

	(void)state;
	o.runner_command = "/bin/true";
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, NULL, &e), 0);
	assert_int_equal(e, WARD_ENFORCEMENT_FULL);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo), 0);
	assert_int_equal(ward_confined_runner(c), WARD_RUNNER_CUSTOM);
	assert_string_equal(ward_confined_argv(c)[0], "/bin/true");
	assert_int_equal(ward_profile_bwrap(&want, pol, "/bin/true", -1, NULL),
			 0);
	/* What confine hands out runs in the workspace: --chdir, then the
	 * command. */
	{
		size_t k = ward_strv_len(want);
		char **w = realloc(want, (k + 6) * sizeof(*w));

		assert_non_null(w);
		want = w;
		want[k++] = strdup("--chdir");
		want[k++] = strdup(ward_policy_workspace(pol));
		want[k++] = strdup("--");
		for (size_t i = 0; cmd_echo[i]; i++)
			want[k++] = strdup(cmd_echo[i]);
		want[k] = NULL;
	}
	assert_strv_equal(ward_confined_argv(c), want);
	assert_strv_equal(c->cmd, cmd_echo);
	assert_string_equal(ward_plan_runner_path(c->plan), "/bin/true");
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(n, 1);
	assert_int_equal(entries[0].runner, WARD_RUNNER_CUSTOM);
	assert_false(entries[0].probed);
	assert_int_equal(total_calls(&f), 0);
	/* force() cannot pick another runner over the operator's command. */
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_BWRAP),
			 WARD_EINVAL);
	ward_strv_free(want);
	ward_confined_free(c);
	ward_provider_free(p);

	/* A bare name is looked up in PATH, to an absolute path. */
	o.runner_command = "true";
	p = provider_with(&o);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo), 0);
	assert_true(ward_confined_argv(c)[0][0] == '/');
	assert_non_null(strstr(ward_confined_argv(c)[0], "/true"));
	ward_confined_free(c);
	ward_provider_free(p);
	ward_policy_free(pol);
}

/* --- danger-full-access ---------------------------------------------------- */

/* Nothing is confined (nothing probed), but the command is kept:
 * landlock-run --unconfined ends every process it starts with it. */
static void test_danger_is_kept(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	struct fake_probe f = {0}; /* everything unusable */
	ward_policy *pol = policy_at(WARD_MODE_DANGER_FULL_ACCESS, "/tmp");
	char *const want[] = {"/bin/true", "--unconfined", "--",
			      "echo",	   "hi",	   NULL};
	ward_confined *c = NULL;
	ward_provider *p;

	(void)state;
	o.platform = WARD_PLATFORM_LINUX;
	o.probe = fake_probe_fn;
	o.probe_ctx = &f;
	o.launcher_path = "/bin/true"; /* any executable: not run here */
	p = provider_with(&o);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo), 0);
	assert_strv_equal(ward_confined_argv(c), want);
	assert_strv_equal(c->cmd, cmd_echo);
	assert_int_equal(ward_confined_runner(c), WARD_RUNNER_NONE);
	assert_int_equal(ward_confined_enforcement(c), WARD_ENFORCEMENT_NONE);
	assert_int_equal(ward_confined_mode(c), WARD_MODE_DANGER_FULL_ACCESS);
	assert_string_equal(ward_confined_denial_signature(c), "");
	assert_string_equal(ward_plan_runner_path(c->plan), "/bin/true");
	assert_int_equal(total_calls(&f), 0);
	ward_confined_free(c);
	ward_provider_free(p);
	/* Without a keeper the call does not run (fail closed). */
	o.launcher_path = "/nonexistent/landlock-run";
	p = provider_with(&o);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo),
			 WARD_ERUNNER);
	assert_non_null(strstr(ward_error_last(), "uncontained"));
	ward_provider_free(p);
	ward_policy_free(pol);
}

/* --- where the runner binaries come from ---------------------------------- */

static void test_bwrap_inside_workspace_refused(void **state)
{
	static const enum ward_runner chain[] = {WARD_RUNNER_BWRAP};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	char *ws = make_tmpdir();
	char *other = make_tmpdir();
	char *bin, *bwrap;
	ward_policy *inside, *outside;
	ward_confined *c = NULL;
	ward_provider *p;

	(void)state;
	assert_true(asprintf(&bin, "%s/tools", ws) > 0);
	assert_int_equal(mkdir(bin, 0755), 0);
	bwrap = write_file(bin, "bwrap", "#!/bin/sh\nexit 0\n", 0755);
	inside = policy_at(WARD_MODE_READ_ONLY, ws);
	outside = policy_at(WARD_MODE_READ_ONLY, other);
	o.chain = chain;
	o.chain_len = 1;
	o.bwrap_path = bwrap;
	p = provider_with(&o);
	assert_string_equal(ward_provider_bwrap_path(p), bwrap);
	assert_int_equal(ward_provider_confine(&c, p, inside, cmd_echo),
			 WARD_ERUNNER);
	assert_null(c);
	assert_non_null(strstr(ward_error_last(), "inside the workspace"));
	assert_non_null(strstr(ward_error_last(), bwrap));
	/* The front end learns why as a code, with the culprit's path. */
	{
		struct ward_runner_status st;
		char *hint = NULL;

		assert_int_equal(
		    ward_provider_problem(&st, p, WARD_RUNNER_BWRAP), 0);
		assert_int_equal(st.problem, WARD_PROBLEM_PLANTED);
		assert_string_equal(st.path, bwrap);
		assert_int_equal(ward_render_runner_hint(&hint, &st), 0);
		assert_non_null(strstr(hint, bwrap));
		ward_free(hint);
		assert_int_equal(
		    ward_provider_problem(&st, p, WARD_RUNNER_WINDOWS_ACL), 0);
		assert_int_equal(st.problem, WARD_PROBLEM_RESERVED);
	}
	/* The same binary is fine for a workspace it does not lie in. */
	assert_int_equal(ward_provider_confine(&c, p, outside, cmd_echo), 0);
	assert_string_equal(ward_confined_argv(c)[0], bwrap);
	assert_string_equal(ward_plan_runner_path(c->plan), bwrap);
	ward_confined_free(c);
	ward_provider_free(p);
	ward_policy_free(inside);
	ward_policy_free(outside);
	free(bwrap);
	free(bin);
	remove_tree(ws);
	remove_tree(other);
}

static void test_bwrap_resolved_once_from_path(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char *a = make_tmpdir(), *b = make_tmpdir();
	char *bwrap_a = write_file(a, "bwrap", "#!/bin/sh\n", 0755);
	char *bwrap_b = write_file(b, "bwrap", "#!/bin/sh\n", 0755);
	char *path_a = NULL;
	const char *got;
	ward_provider *p;

	(void)state;
	o.platform = WARD_PLATFORM_LINUX;
	assert_true(asprintf(&path_a, "relative/dir:%s:/usr/bin", a) > 0);
	setenv("PATH", path_a, 1);
	p = provider_with(&o);
	got = ward_provider_bwrap_path(p);
	assert_non_null(got);
	assert_string_equal(got, bwrap_a);
	setenv("PATH", b, 1);
	assert_string_equal(ward_provider_bwrap_path(p), bwrap_a); /* cached */
	ward_provider_free(p);

	/* No bwrap in PATH: unusable, and the probe says why. */
	setenv("PATH", fx_absent("bin"), 1);
	o.launcher_path = fx_absent("landlock-run");
	p = provider_with(&o);
	assert_null(ward_provider_bwrap_path(p));
	assert_int_equal(ward_provider_select(p, NULL, NULL),
			 WARD_EUNAVAILABLE);
	assert_non_null(strstr(ward_error_last(), "bwrap not found in PATH"));
	assert_non_null(strstr(ward_error_last(), "landlock-run not found"));
	ward_provider_free(p);

	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
	free(path_a);
	free(bwrap_a);
	free(bwrap_b);
	remove_tree(a);
	remove_tree(b);
}

static void test_launcher_path_override(void **state)
{
	static const enum ward_runner chain[] = {WARD_RUNNER_LANDLOCK};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	char *dir = make_tmpdir();
	char *launcher = write_file(dir, "my-launcher", "#!/bin/sh\n", 0755);
	ward_policy *ro = policy_at(WARD_MODE_READ_ONLY, "/tmp");
	ward_policy *ww = policy_at(WARD_MODE_WORKSPACE_WRITE, dir);
	char **want = NULL, **roots = NULL;
	ward_confined *c = NULL;
	ward_provider *p;
	char *saved_state, *saved_config;
	size_t n;

	(void)state;
	/* The plain grants, without ward's state and configuration
	 * directories hidden (the machine's would be, and with HOME=/tmp
	 * they lie in a writable root): test_translate covers that. */
	saved_state = getenv("XDG_STATE_HOME");
	if (saved_state)
		saved_state = strdup(saved_state);
	saved_config = getenv("XDG_CONFIG_HOME");
	if (saved_config)
		saved_config = strdup(saved_config);
	setenv("XDG_STATE_HOME", fx_unreachable("state"), 1);
	setenv("XDG_CONFIG_HOME", fx_unreachable("config"), 1);
	o.chain = chain;
	o.chain_len = 1;
	o.launcher_path = launcher;
	p = provider_with(&o);
	assert_string_equal(ward_provider_launcher_path(p), launcher);

	assert_int_equal(ward_provider_confine(&c, p, ro, cmd_echo), 0);
	assert_int_equal(ward_confined_runner(c), WARD_RUNNER_LANDLOCK);
	assert_int_equal(ward_profile_landlock(&want, ro, launcher, cmd_echo),
			 0);
	assert_strv_equal(ward_confined_argv(c), want);
	assert_string_equal(ward_plan_runner_path(c->plan), launcher);
	assert_int_equal(ward_strv_len(grants(c, "--ro")), 1);
	assert_string_equal(grants(c, "--ro")[0], "/");
	assert_int_equal(ward_strv_len(grants(c, "--rw")), 1); /* read-only */
	assert_string_equal(grants(c, "--rw")[0], "/dev/null");
	ward_strv_free(want);
	ward_confined_free(c);
	c = NULL;

	/* workspace-write: /dev/null + exactly the writable roots. */
	assert_int_equal(ward_provider_confine(&c, p, ww, cmd_echo), 0);
	assert_int_equal(ward_roots_writable(&roots, ww), 0);
	n = ward_strv_len(roots);
	assert_true(n >= 1);
	assert_int_equal(ward_strv_len(grants(c, "--rw")), n + 1);
	assert_string_equal(grants(c, "--rw")[0], "/dev/null");
	for (size_t i = 0; i < n; i++)
		assert_string_equal(grants(c, "--rw")[i + 1], roots[i]);
	ward_strv_free(roots);
	ward_confined_free(c);
	c = NULL;
	ward_provider_free(p);

	/* A launcher that does not exist: a runner failure at confine. */
	o.launcher_path = fx_absent("landlock-run");
	p = provider_with(&o);
	assert_null(ward_provider_launcher_path(p));
	assert_int_equal(ward_provider_confine(&c, p, ro, cmd_echo),
			 WARD_ERUNNER);
	assert_null(c);
	assert_non_null(strstr(ward_error_last(), o.launcher_path));
	ward_provider_free(p);

	/* Without an override it is never taken from the environment. */
	o.launcher_path = NULL;
	setenv("WARD_LAUNCHER", launcher, 1);
	setenv("LANDLOCK_RUN", launcher, 1);
	p = provider_with(&o);
	if (ward_provider_launcher_path(p))
		assert_string_not_equal(ward_provider_launcher_path(p),
					launcher);
	ward_provider_free(p);
	unsetenv("WARD_LAUNCHER");
	unsetenv("LANDLOCK_RUN");
	if (saved_state)
		setenv("XDG_STATE_HOME", saved_state, 1);
	else
		unsetenv("XDG_STATE_HOME");
	if (saved_config)
		setenv("XDG_CONFIG_HOME", saved_config, 1);
	else
		unsetenv("XDG_CONFIG_HOME");
	free(saved_state);
	free(saved_config);

	ward_policy_free(ro);
	ward_policy_free(ww);
	free(launcher);
	remove_tree(dir);
}

static void test_invalid_options(void **state)
{
	static const enum ward_runner bad[] = {WARD_RUNNER_BWRAP,
					       WARD_RUNNER_CUSTOM};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p = NULL;

	(void)state;
	o.version = 99;
	assert_int_equal(ward_provider_new(&p, &o), WARD_EINVAL);
	assert_null(p);
	o.version = WARD_PROVIDER_OPTIONS_VERSION;
	o.chain = bad;
	o.chain_len = 2;
	assert_int_equal(ward_provider_new(&p, &o), WARD_EINVAL);
	assert_null(p);
	/* NULL options: the defaults. */
	assert_int_equal(ward_provider_new(&p, NULL), 0);
	assert_non_null(p);
	ward_provider_free(p);
	ward_provider_free(NULL);
	ward_confined_free(NULL);
}

/* --- the real probes on this machine -------------------------------------- */

static void test_real_probe_bwrap(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	const struct ward_probe_entry *entries;
	ward_policy *pol = policy_at(WARD_MODE_READ_ONLY, "/tmp");
	ward_confined *c = NULL;
	enum ward_runner r;
	size_t n;
	ward_provider *p;

	(void)state;
	o.platform = WARD_PLATFORM_LINUX;
	o.launcher_path = fx_absent("landlock-run");
	/* A bound no loaded machine reaches: the verdict is the question. */
	o.probe_timeout_ms = 60000;
	p = provider_with(&o);
	if (!ward_provider_bwrap_path(p)) {
		ward_provider_free(p);
		ward_policy_free(pol);
		print_message("SKIP: bwrap is not installed (not in PATH)\n");
		skip();
	}
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(n, 2);
	assert_int_equal(entries[0].runner, WARD_RUNNER_BWRAP);
	assert_true(entries[0].probed);
	if (entries[0].verdict != WARD_VERDICT_FULL)
		print_message("bwrap probe: %s\n", entries[0].why);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_FULL);
	assert_string_equal(entries[0].why, "probe ok");
	assert_int_equal(entries[1].verdict, WARD_VERDICT_UNUSABLE);
	assert_non_null(strstr(entries[1].why, "landlock-run not found"));
	assert_int_equal(ward_provider_select(p, &r, NULL), 0);
	assert_int_equal(r, WARD_RUNNER_BWRAP);
	assert_int_equal(ward_provider_confine(&c, p, pol, cmd_echo), 0);
	assert_string_equal(ward_confined_argv(c)[0],
			    ward_provider_bwrap_path(p));
	ward_confined_free(c);
	ward_provider_free(p);
	ward_policy_free(pol);
}

/*
 * The real probes' verdicts are kept across processes in ward's state
 * directory: a second provider reads them (a probe is not run again), a
 * file anyone else could have written is ignored, and a changed key (here
 * the probe timeout) is a miss.
 */
static void test_probe_cache_across_providers(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	const struct ward_probe_entry *entries;
	char dir[] = "/var/tmp/ward-probe-cache.XXXXXX";
	char file[PATH_MAX], buf[4096], *at;
	ward_provider *p;
	size_t n;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	setenv("XDG_STATE_HOME", dir, 1);
	snprintf(file, sizeof(file), "%s/ward/probe-cache", dir);
	o.platform = WARD_PLATFORM_LINUX;
	o.launcher_path = fx_absent("landlock-run");
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	ward_provider_free(p);
	/* Both verdicts are kept; rewrite bwrap's reason to recognise a hit. */
	f = fopen(file, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	at = strstr(buf, "bwrap ");
	assert_non_null(at);
	assert_non_null(strstr(buf, "landlock "));
	at = strchr(at + 6, ' ');
	assert_non_null(at);
	at = strchr(at + 1, ' ');
	assert_non_null(at);
	memcpy(at + 1, "kept", 4);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs(buf, f);
	fclose(f);
	assert_int_equal(chmod(file, 0600), 0);

	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_non_null(strstr(entries[0].why, "kept"));
	ward_provider_free(p);

	/* Group-writable: not trusted, probed afresh (and rewritten). */
	assert_int_equal(chmod(file, 0620), 0);
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_null(strstr(entries[0].why, "kept"));
	ward_provider_free(p);

	/* Another key: a miss. */
	assert_int_equal(chmod(file, 0600), 0);
	o.probe_timeout_ms = 1999;
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_null(strstr(entries[0].why, "kept"));
	ward_provider_free(p);

	/* no_probe_cache: never read. */
	o.probe_timeout_ms = 0;
	o.no_probe_cache = true;
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_null(strstr(entries[0].why, "kept"));
	ward_provider_free(p);

	unsetenv("XDG_STATE_HOME");
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	assert_int_equal(system(buf), 0);
}

static void test_real_probe_landlock(void **state)
{
	static const enum ward_runner chain[] = {WARD_RUNNER_LANDLOCK,
						 WARD_RUNNER_BWRAP};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	const struct ward_probe_entry *entries;
	char dir[PATH_MAX], launcher[PATH_MAX + 32];
	enum ward_runner r;
	enum ward_enforcement e;
	size_t n;
	ward_provider *p;

	(void)state;
	exe_dir(dir, sizeof(dir)); /* build/tests */
	snprintf(launcher, sizeof(launcher), "%s/../bin/landlock-run", dir);
	if (access(launcher, X_OK) != 0) {
		print_message("SKIP: %s not built\n", launcher);
		skip();
	}
	o.chain = chain;
	o.chain_len = 2;
	o.launcher_path = launcher;
	o.probe_timeout_ms = 60000;
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(n, 2);
	assert_int_equal(entries[0].runner, WARD_RUNNER_LANDLOCK);
	if (entries[0].verdict == WARD_VERDICT_UNUSABLE)
		print_message("landlock probe: %s\n", entries[0].why);
	assert_int_not_equal(entries[0].verdict, WARD_VERDICT_UNUSABLE);
	assert_int_equal(ward_provider_select(p, &r, &e), 0);
	assert_int_equal(r, WARD_RUNNER_LANDLOCK);
	assert_int_equal(e, entries[0].verdict == WARD_VERDICT_PARTIAL
				? WARD_ENFORCEMENT_PARTIAL
				: WARD_ENFORCEMENT_FULL);
	ward_provider_free(p);
}

/* A fake launcher's --probe output decides full or partial. */
static void test_landlock_probe_partial(void **state)
{
	static const enum ward_runner chain[] = {WARD_RUNNER_LANDLOCK,
						 WARD_RUNNER_BWRAP};
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	char *dir = make_tmpdir();
	char *partial = write_file(dir, "partial",
				   "#!/bin/sh\n[ \"$1\" = --probe ] || exit 9\n"
				   "echo 'landlock: partially enforced'\n",
				   0755);
	char *broken = write_file(dir, "broken",
				  "#!/bin/sh\necho 'landlock-run: landlock "
				  "ruleset error: nope' >&2\nexit 125\n",
				  0755);
	enum ward_runner r;
	enum ward_enforcement e;
	ward_provider *p;

	(void)state;
	o.chain = chain;
	o.chain_len = 2;
	o.launcher_path = partial;
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, &r, &e), 0);
	assert_int_equal(r, WARD_RUNNER_LANDLOCK);
	assert_int_equal(e, WARD_ENFORCEMENT_PARTIAL);
	ward_provider_free(p);

	o.launcher_path = broken;
	o.bwrap_path = fx_absent("bwrap");
	p = provider_with(&o);
	assert_int_equal(ward_provider_select(p, &r, &e), WARD_EUNAVAILABLE);
	assert_non_null(strstr(ward_error_last(),
			       "landlock: exited with status 125: "
			       "landlock-run: landlock ruleset error: nope"));
	assert_non_null(strstr(ward_error_last(), "bwrap not found at"));
	ward_provider_free(p);
	free(partial);
	free(broken);
	remove_tree(dir);
}

static void test_probe_failure_reason(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	const struct ward_probe_entry *entries;
	char *dir = make_tmpdir();
	char *bwrap = write_file(dir, "bwrap",
				 "#!/bin/sh\necho 'bwrap: setting up uid map: "
				 "Permission denied' >&2\necho second >&2\n"
				 "exit 1\n",
				 0755);
	size_t n;
	ward_provider *p;

	(void)state;
	o.platform = WARD_PLATFORM_LINUX;
	o.bwrap_path = bwrap;
	o.launcher_path = fx_absent("landlock-run");
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_UNUSABLE);
	assert_string_equal(entries[0].why,
			    "exited with status 1: bwrap: setting up uid map: "
			    "Permission denied");
	ward_provider_free(p);
	free(bwrap);
	remove_tree(dir);
}

/* A binary the kernel cannot execute (its interpreter is missing): the
 * probe says so from the child's own errno, without waiting. */
static void test_probe_cannot_execute(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	const struct ward_probe_entry *entries;
	char *dir = make_tmpdir();
	char *bwrap, *want = NULL;
	size_t n;
	ward_provider *p;

	(void)state;
	bwrap = write_file(dir, "bwrap", "#!/nonexistent/interpreter\n", 0755);
	o.platform = WARD_PLATFORM_LINUX;
	o.bwrap_path = bwrap;
	o.launcher_path = fx_absent("landlock-run");
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_UNUSABLE);
	assert_true(asprintf(&want, "cannot execute %s: %s", bwrap,
			     strerror(ENOENT)) > 0);
	assert_string_equal(entries[0].why, want);
	free(want);
	ward_provider_free(p);
	free(bwrap);
	remove_tree(dir);
}

static void test_probe_timeout(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	const struct ward_probe_entry *entries;
	char *dir = make_tmpdir();
	char *pidfile = NULL, *script = NULL, *bwrap;
	long long start, elapsed;
	long grandchild = 0;
	size_t n;
	ward_provider *p;
	FILE *f;

	(void)state;
	/* A grandchild that also sleeps: the whole group must die. */
	assert_true(asprintf(&pidfile, "%s/pid", dir) > 0);
	assert_true(asprintf(&script,
			     "#!/bin/sh\necho run >> %s.runs\nsleep 10 &\n"
			     "echo $! > %s\nwait\n",
			     pidfile, pidfile) > 0);
	bwrap = write_file(dir, "bwrap", script, 0755);
	o.platform = WARD_PLATFORM_LINUX;
	o.bwrap_path = bwrap;
	o.launcher_path = fx_absent("landlock-run");
	o.probe_timeout_ms = 200;
	p = provider_with(&o);
	start = now_ms();
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	elapsed = now_ms() - start;
	/* Not before its time (a lower bound holds on any machine); that it
	 * did not wait for the sleep is what the verdict below says. */
	assert_true(elapsed >= 190);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_UNUSABLE);
	assert_string_equal(entries[0].why, "timed out after 200 ms");

	f = fopen(pidfile, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &grandchild), 1);
	fclose(f);
	assert_true(grandchild > 1);
	/* Killed with its group: dead (or a zombie awaiting init) soon. */
	for (int i = 0; i < 6000 && !process_gone((pid_t)grandchild); i++)
		usleep(10 * 1000);
	assert_true(process_gone((pid_t)grandchild));

	/* Cached: a second look does not probe (wait) again. */
	assert_int_equal(ward_provider_select(p, NULL, NULL),
			 WARD_EUNAVAILABLE);
	assert_non_null(strstr(ward_error_last(), "timed out after 200 ms"));
	{
		char runs[PATH_MAX], line[16];
		int runs_n = 0;

		snprintf(runs, sizeof(runs), "%s.runs", pidfile);
		f = fopen(runs, "r");
		while (f && fgets(line, sizeof(line), f))
			runs_n++;
		if (f)
			fclose(f);
		/* One probe at most (on a loaded machine the timeout may
		 * come before the script says anything). */
		assert_true(runs_n <= 1);
	}
	ward_provider_free(p);
	free(bwrap);
	free(script);
	free(pidfile);
	remove_tree(dir);
}

/*
 * A probe that ran out of time says the machine was slow, not that the
 * runner cannot confine: it is not kept for other processes. The same
 * binary (the same identity: in place, the old mtime) that answers at once
 * is then probed again, and found usable.
 */
static void test_probe_timeout_not_kept(void **state)
{
	struct ward_provider_options o = WARD_PROVIDER_OPTIONS_INIT;
	static const char slow[] = "#!/bin/sh\nexec sleep 10\n";
	static const char fast[] = "#!/bin/sh\nexit 0  # pad\n";
	const struct ward_probe_entry *entries;
	char *dir = make_tmpdir(), state_dir[PATH_MAX];
	char *saved = getenv("XDG_STATE_HOME");
	struct timespec times[2];
	struct stat st;
	ward_provider *p;
	char *bwrap;
	size_t n;
	int fd;

	(void)state;
	assert_int_equal(sizeof(slow), sizeof(fast));
	saved = saved ? strdup(saved) : NULL;
	snprintf(state_dir, sizeof(state_dir), "%s/state", dir);
	setenv("XDG_STATE_HOME", state_dir, 1);
	bwrap = write_file(dir, "bwrap", slow, 0755);
	o.platform = WARD_PLATFORM_LINUX;
	o.bwrap_path = bwrap;
	o.launcher_path = fx_absent("landlock-run");
	/* The same timeout both times: it is part of the cache's key. */
	o.probe_timeout_ms = 2000;
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	assert_string_equal(entries[0].why, "timed out after 2000 ms");
	ward_provider_free(p);
	/* The same file, now quick. */
	assert_int_equal(stat(bwrap, &st), 0);
	fd = open(bwrap, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, fast, sizeof(fast) - 1),
			 (ssize_t)(sizeof(fast) - 1));
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	assert_int_equal(futimens(fd, times), 0);
	close(fd);
	p = provider_with(&o);
	assert_int_equal(ward_provider_report(&entries, &n, p), 0);
	if (entries[0].verdict != WARD_VERDICT_FULL)
		print_message("second probe: %s\n", entries[0].why);
	assert_int_equal(entries[0].verdict, WARD_VERDICT_FULL);
	ward_provider_free(p);
	if (saved)
		setenv("XDG_STATE_HOME", saved, 1);
	else
		unsetenv("XDG_STATE_HOME");
	free(saved);
	free(bwrap);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_usable_wins),
	    cmocka_unit_test(test_fallback_to_second),
	    cmocka_unit_test(test_all_unusable_fails_closed),
	    cmocka_unit_test(test_probe_once_per_runner),
	    cmocka_unit_test(test_sole_candidate_not_probed),
	    cmocka_unit_test(test_report_lists_every_candidate),
	    cmocka_unit_test(test_win32_fails_closed),
	    cmocka_unit_test(test_other_platform_fails_closed),
	    cmocka_unit_test(test_empty_chain_override_fails_closed),
	    cmocka_unit_test(test_reserved_windows_acl_never_confines),
	    cmocka_unit_test(test_darwin_chain_builds_sandbox_exec),
	    cmocka_unit_test(test_force),
	    cmocka_unit_test(test_runner_command_missing),
	    cmocka_unit_test(test_runner_command_present),
	    cmocka_unit_test(test_danger_is_kept),
	    cmocka_unit_test(test_bwrap_inside_workspace_refused),
	    cmocka_unit_test(test_bwrap_resolved_once_from_path),
	    cmocka_unit_test(test_launcher_path_override),
	    cmocka_unit_test(test_invalid_options),
	    cmocka_unit_test(test_real_probe_bwrap),
	    cmocka_unit_test(test_real_probe_landlock),
	    cmocka_unit_test(test_probe_cache_across_providers),
	    cmocka_unit_test(test_landlock_probe_partial),
	    cmocka_unit_test(test_probe_failure_reason),
	    cmocka_unit_test(test_probe_cannot_execute),
	    cmocka_unit_test(test_probe_timeout),
	    cmocka_unit_test(test_probe_timeout_not_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
