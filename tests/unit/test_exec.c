/*
 * Unit tests for the confined executor and background tasks, against the
 * real provider and the real runners of this machine: bwrap, Landlock
 * in-process, Landlock through build/bin/landlock-run. A runner that is
 * not usable here is skipped with the reason. Nothing here restricts the
 * test process itself: a test that needs a restricted caller forks first.
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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "libward/run/exec_internal.h"
#include "internal.h"
#include "landlock.h"
#include "ward/ward.h"

#include "fixture.h"

/* --- fixtures ------------------------------------------------------------- */

/* One way to confine, as the tests drive it. */
struct rcfg {
	const char *name;
	enum ward_runner runner;
	bool via_launcher;
};

static const struct rcfg cfg_bwrap = {"bwrap", WARD_RUNNER_BWRAP, false};
static const struct rcfg cfg_ll = {"landlock", WARD_RUNNER_LANDLOCK, false};
static const struct rcfg cfg_llrun = {"landlock-run", WARD_RUNNER_LANDLOCK,
				      true};
static const struct rcfg cfg_none = {"none", WARD_RUNNER_NONE, false};

static struct {
	char ws[128];	  /* workspace: not under /tmp, so the */
	char bindir[128]; /* /tmp root does not cover it */
	char launcher[PATH_MAX];
	bool have_launcher;
	bool have_landlock;
	bool have_bwrap;
	char bwrap_why[128];
	int fds_at_start;
	unsigned seq;
} fx;

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

/* Run @argv directly (not through ward) and return its exit status. */
static int run_plain(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int group_setup(void **state)
{
	char *const bwrap_check[] = {
	    "/usr/bin/bwrap", "--ro-bind",     "/",	    "/",
	    "--unshare-user", "--unshare-pid", "--proc",    "/proc",
	    "--dev",	      "/dev",	       "/bin/true", NULL};

	(void)state;
	fx.fds_at_start = count_fds();
	snprintf(fx.ws, sizeof(fx.ws), "/var/tmp/ward-test-exec-XXXXXX");
	if (!mkdtemp(fx.ws))
		return -1;
	snprintf(fx.bindir, sizeof(fx.bindir),
		 "/var/tmp/ward-test-exec-bin-XXXXXX");
	if (!mkdtemp(fx.bindir))
		return -1;

	fx.have_launcher = fixture_launcher(fx.launcher);
	fx.have_landlock = ward_ll_abi() >= 1;
	if (access("/usr/bin/bwrap", X_OK) != 0)
		snprintf(fx.bwrap_why, sizeof(fx.bwrap_why),
			 "/usr/bin/bwrap is not installed");
	else if (run_plain(bwrap_check) != 0)
		snprintf(fx.bwrap_why, sizeof(fx.bwrap_why),
			 "bwrap cannot create its namespaces here");
	else
		fx.have_bwrap = true;
	/* Deterministic roots: no $TMPDIR root; WARD_SANDBOX not inherited. */
	unsetenv("WARD_SANDBOX");
	return 0;
}

static void tag_owner(char *buf, size_t len, pid_t pid);
static void kill_tagged(const char *prefix);

static int group_teardown(void **state)
{
	char cmd[2 * PATH_MAX + 16], owner[32];

	(void)state;
	/* Whatever a failed test left sleeping. */
	tag_owner(owner, sizeof(owner), getpid());
	kill_tagged(owner);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", fx.ws, fx.bindir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Skip (with the reason) when @c cannot run on this machine. */
static void need(const struct rcfg *c)
{
	if (c->runner == WARD_RUNNER_BWRAP && !fx.have_bwrap) {
		print_message("SKIP: %s\n", fx.bwrap_why);
		skip();
	}
	if (c->runner == WARD_RUNNER_LANDLOCK && !fx.have_landlock) {
		print_message("SKIP: the kernel has no usable Landlock\n");
		skip();
	}
	/* The provider needs the launcher for either Landlock path, and as
	 * the keeper of an unconfined run. */
	if ((c->runner == WARD_RUNNER_LANDLOCK ||
	     c->runner == WARD_RUNNER_NONE) &&
	    !fx.have_launcher) {
		print_message("SKIP: build/bin/landlock-run is not built\n");
		skip();
	}
}

static ward_provider *provider_for(const struct rcfg *c)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p = NULL;

	if (fx.have_launcher)
		po.launcher_path = fx.launcher;
	assert_int_equal(ward_provider_new(&p, &po), 0);
	if (c->runner != WARD_RUNNER_NONE)
		assert_int_equal(ward_provider_force(p, c->runner), 0);
	return p;
}

/* Runner none is what danger-full-access means: never a chain choice. */
static enum ward_mode mode_for(const struct rcfg *c, enum ward_mode mode)
{
	return c->runner == WARD_RUNNER_NONE ? WARD_MODE_DANGER_FULL_ACCESS
					     : mode;
}

static ward_policy *policy_for(enum ward_mode mode)
{
	ward_policy *pol = NULL;

	assert_int_equal(ward_policy_new(&pol, mode, fx.ws), 0);
	assert_int_equal(ward_policy_set_tmpdir(pol, NULL), 0);
	return pol;
}

/*
 * Run @script with bash under @c and @mode. Danger-full-access is what
 * runner none means. Returns ward_exec_shell's status.
 */
static int sh(ward_result **r, const struct rcfg *c, enum ward_mode mode,
	      const char *script, struct ward_exec_options *eo)
{
	struct ward_exec_options def = WARD_EXEC_OPTIONS_INIT;
	ward_provider *p = provider_for(c);
	ward_policy *pol = policy_for(mode);
	int rc;

	if (!eo) {
		eo = &def;
		eo->capture_limit = 1 << 20;
	}
	eo->landlock_via_launcher = c->via_launcher;
	*r = NULL;
	rc = ward_exec_shell(r, p, pol, script, eo);
	ward_policy_free(pol);
	ward_provider_free(p);
	return rc;
}

static const char *out_of(const ward_result *r)
{
	const char *s = ward_result_stdout(r, NULL);

	return s ? s : "";
}

static const char *err_of(const ward_result *r)
{
	const char *s = ward_result_stderr(r, NULL);

	return s ? s : "";
}

/* A fresh file name in @dir, unique in this run. */
static void unique_path(char *buf, size_t len, const char *dir,
			const char *what)
{
	assert_true(strlen(dir) + strlen(what) + 32 < len);
	snprintf(buf, len, "%s/%s-%d-%u", dir, what, (int)getpid(), ++fx.seq);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The content of a small file (static buffer), "" when unreadable. */
static const char *slurp(const char *path)
{
	static char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

/*
 * The pid of a live (non-zombie) process that has @tag in its command
 * line, or 0: with @wrappers, any (bwrap, landlock-run, bash -c carry the
 * command's argv too), else only the `sleep` itself.
 */
static pid_t pid_with(const char *tag, bool wrappers)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;

	assert_non_null(d);
	while (!found && (e = readdir(d))) {
		char path[300], buf[4096];
		ssize_t n;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\0')
				buf[i] = ' ';
		}
		if (n > 0) {
			buf[n] = '\0';
			if ((wrappers || strncmp(buf, "sleep ", 6) == 0) &&
			    strstr(buf, tag) != NULL)
				found = (pid_t)atoi(e->d_name);
		}
	}
	closedir(d);
	return found;
}

static pid_t pid_with_tag(const char *tag)
{
	return pid_with(tag, false);
}

static bool process_with_tag(const char *tag)
{
	return pid_with_tag(tag) != 0;
}

/*
 * Kill every sleep whose tag begins with @prefix (tag_owner(): all of one
 * process's), so that a test that failed half-way leaves none behind: they
 * sleep 1000 s and would hold whatever pipes they inherited (bats waits on
 * its own until they close).
 */
static void kill_tagged(const char *prefix)
{
	pid_t pid;

	for (int i = 0; i < 1000 && (pid = pid_with_tag(prefix)) != 0; i++)
		kill(pid, SIGKILL);
}

/*
 * The bound of a wait for what should happen at once (a killed process
 * gone, a started one visible): generous, because a loaded machine can take
 * seconds, and it costs nothing when the wait ends early. A bound, never a
 * measure: no test asserts how long something took.
 */
#define PROMPT_MS 60000

/* Wait up to @ms for a process tagged @tag to appear. */
static bool tag_seen(const char *tag, int ms)
{
	for (int i = 0; i < ms / 20; i++) {
		if (process_with_tag(tag))
			return true;
		usleep(20 * 1000);
	}
	return process_with_tag(tag);
}

/* Wait up to @ms for every process tagged @tag to be gone. */
static bool tag_gone(const char *tag, int ms)
{
	for (int i = 0; i < ms / 20; i++) {
		if (!process_with_tag(tag))
			return true;
		usleep(20 * 1000);
	}
	return !process_with_tag(tag);
}

/* Wait up to @ms for every process of the call that ran `sleep @tag` to
 * be gone: the runner's as well as the command. */
static bool call_gone(const char *tag, int ms)
{
	for (int i = 0; i < ms / 20; i++) {
		if (!pid_with(tag, true))
			return true;
		usleep(20 * 1000);
	}
	return !pid_with(tag, true);
}

/* Fields of /proc/PID/stat after the command name. */
struct pstat {
	int pid, pgrp, session, tty;
};

static bool parse_stat(const char *text, struct pstat *ps)
{
	const char *rp = strrchr(text, ')');
	char state;
	int ppid;

	if (sscanf(text, "%d", &ps->pid) != 1 || !rp)
		return false;
	return sscanf(rp + 1, " %c %d %d %d %d", &state, &ppid, &ps->pgrp,
		      &ps->session, &ps->tty) == 5;
}

/* --- per-runner tests ----------------------------------------------------- */

static void t_read_only_denies_write(void **state)
{
	const struct rcfg *c = *state;
	char path[PATH_MAX], script[PATH_MAX + 64];
	ward_result *r;

	need(c);
	unique_path(path, sizeof(path), fx.ws, "ro");
	snprintf(script, sizeof(script), "echo x > '%s'", path);
	assert_int_equal(sh(&r, c, WARD_MODE_READ_ONLY, script, NULL), 0);
	assert_true(ward_result_denied(r));
	assert_int_not_equal(ward_result_exit_code(r), 0);
	assert_false(exists(path));
	assert_int_equal(ward_result_runner(r), c->runner);
	assert_int_equal(ward_result_mode(r), WARD_MODE_READ_ONLY);
	assert_int_not_equal(ward_result_enforcement(r), WARD_ENFORCEMENT_NONE);
	ward_result_free(r);
}

static void t_workspace_write_allowed(void **state)
{
	const struct rcfg *c = *state;
	char path[PATH_MAX], script[PATH_MAX + 64];
	ward_result *r;

	need(c);
	unique_path(path, sizeof(path), fx.ws, "ww");
	snprintf(script, sizeof(script), "echo written > '%s'", path);
	assert_int_equal(sh(&r, c, WARD_MODE_WORKSPACE_WRITE, script, NULL), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_false(ward_result_denied(r));
	assert_string_equal(slurp(path), "written\n");
	ward_result_free(r);
	unlink(path);
}

static void t_tmp_write_allowed(void **state)
{
	const struct rcfg *c = *state;
	char path[PATH_MAX], script[PATH_MAX + 64];
	ward_result *r;

	need(c);
	unique_path(path, sizeof(path), "/tmp", "ward-test-exec-tmp");
	snprintf(script, sizeof(script), "echo tmp > '%s'", path);
	assert_int_equal(sh(&r, c, WARD_MODE_WORKSPACE_WRITE, script, NULL), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_false(ward_result_denied(r));
	assert_string_equal(slurp(path), "tmp\n");
	ward_result_free(r);
	unlink(path);
}

static void t_sandbox_env(void **state)
{
	const struct rcfg *c = *state;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char *envp[] = {"PATH=/usr/bin:/bin", "WARD_SANDBOX=forged",
			"KEEP=kept", NULL};
	ward_result *r;

	need(c);
	eo.capture_limit = 4096;
	eo.envp = envp;
	assert_int_equal(sh(&r, c, WARD_MODE_READ_ONLY,
			    "printf '%s %s' \"$WARD_SANDBOX\" \"$KEEP\"", &eo),
			 0);
	/* Replaced, not appended: the forged value is gone. */
	if (c->runner == WARD_RUNNER_BWRAP)
		assert_string_equal(out_of(r), "bwrap kept");
	else
		assert_string_equal(out_of(r), "landlock kept");
	ward_result_free(r);
}

static void t_only_std_fds(void **state)
{
	const struct rcfg *c = *state;
	ward_result *r;
	int leak;

	need(c);
	/* A descriptor the caller forgot to mark close-on-exec. */
	leak = dup(2);
	assert_true(leak > 2);
	/* ls opens /proc/self/fd itself: that is the 3. */
	assert_int_equal(
	    sh(&r, c, WARD_MODE_READ_ONLY, "ls /proc/self/fd", NULL), 0);
	close(leak);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_string_equal(out_of(r), "0\n1\n2\n3\n");
	ward_result_free(r);
}

static void t_no_capabilities(void **state)
{
	const struct rcfg *c = *state;
	ward_result *r;

	need(c);
	if (geteuid() != 0) {
		print_message("SKIP: capabilities are only at stake as root\n");
		skip();
	}
	assert_int_equal(sh(&r, c, WARD_MODE_READ_ONLY,
			    "grep -E '^Cap(Eff|Prm|Inh|Amb):' "
			    "/proc/self/status",
			    NULL),
			 0);
	assert_string_equal(out_of(r), "CapInh:\t0000000000000000\n"
				       "CapPrm:\t0000000000000000\n"
				       "CapEff:\t0000000000000000\n"
				       "CapAmb:\t0000000000000000\n");
	ward_result_free(r);
}

static void t_session_leader(void **state)
{
	const struct rcfg *c = *state;
	char *const argv[] = {"sleep", "30", NULL};
	char path[64];
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	struct pstat in, outside;
	ward_provider *p;
	ward_policy *pol;
	ward_result *r;
	ward_task *t = NULL;

	need(c);
	/* Inside: a session of its own, no controlling terminal. */
	assert_int_equal(
	    sh(&r, c, WARD_MODE_READ_ONLY, "cat /proc/$$/stat", NULL), 0);
	assert_true(parse_stat(out_of(r), &in));
	assert_int_equal(in.pgrp, in.session);
	assert_int_equal(in.tty, 0);
	/* bwrap's pid namespace init holds the inner session. */
	if (c->runner != WARD_RUNNER_BWRAP)
		assert_int_equal(in.pid, in.session);
	ward_result_free(r);

	/* Outside: the spawned child leads a new session. */
	p = provider_for(c);
	pol = policy_for(WARD_MODE_READ_ONLY);
	eo.landlock_via_launcher = c->via_launcher;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)ward_task_pid(t));
	assert_true(parse_stat(slurp(path), &outside));
	assert_int_equal(outside.session, ward_task_pid(t));
	assert_int_equal(outside.pgrp, ward_task_pid(t));
	assert_int_not_equal(outside.session, getsid(0));
	ward_task_free(t);
	ward_policy_free(pol);
	ward_provider_free(p);
}

/*
 * A unique sleep duration that tags a test's sleeps in /proc:
 * "1000.PPPPPPPSSSSS", this process's pid and a sequence number, each of a
 * fixed width, so that no tag is the beginning of another and every tag of
 * a process begins with tag_owner()'s prefix.
 */
static void new_tag(char *buf, size_t len)
{
	snprintf(buf, len, "1000.%07d%05u", (int)getpid(), ++fx.seq % 100000);
}

/* What every tag of process @pid begins with. */
static void tag_owner(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "1000.%07d", (int)pid);
}

static void t_timeout_kills_group(void **state)
{
	const struct rcfg *c = *state;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char tag[32], script[128];
	ward_result *r;

	need(c);
	/* A unique sleep duration tags both sleeps in /proc. */
	new_tag(tag, sizeof(tag));
	snprintf(script, sizeof(script), "sleep %s & sleep %s; echo unreached",
		 tag, tag);
	eo.capture_limit = 4096;
	eo.timeout_ms = 300;
	assert_int_equal(
	    sh(&r, c, mode_for(c, WARD_MODE_READ_ONLY), script, &eo), 0);
	assert_true(ward_result_timed_out(r));
	/* SIGTERM sufficed: what ended it was SIGTERM, not the SIGKILL that
	 * follows the grace period. */
	assert_int_equal(ward_result_signal(r), SIGTERM);
	assert_int_not_equal(ward_result_exit_code(r), 0);
	assert_null(strstr(out_of(r), "unreached"));
	assert_true(tag_gone(tag, PROMPT_MS));
	ward_result_free(r);
}

/* --- runner none, capture and streams ------------------------------------- */

static void t_danger_unconfined(void **state)
{
	char path[PATH_MAX], script[PATH_MAX + 64];
	ward_result *r;

	(void)state;
	unique_path(path, sizeof(path), fx.ws, "danger");
	snprintf(script, sizeof(script),
		 "echo x > '%s'; printf '[%%s]' \"${WARD_SANDBOX-unset}\"",
		 path);
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, script, NULL), 0);
	assert_int_equal(ward_result_runner(r), WARD_RUNNER_NONE);
	assert_int_equal(ward_result_enforcement(r), WARD_ENFORCEMENT_NONE);
	assert_int_equal(ward_result_mode(r), WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_false(ward_result_denied(r));
	assert_true(exists(path));
	/* Not confined: WARD_SANDBOX is not claimed. */
	assert_string_equal(out_of(r), "[unset]");
	ward_result_free(r);
	unlink(path);
}

static void t_exit_status_and_signal(void **state)
{
	ward_result *r;

	(void)state;
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "exit 3", NULL), 0);
	assert_int_equal(ward_result_exit_code(r), 3);
	assert_int_equal(ward_result_signal(r), 0);
	assert_false(ward_result_timed_out(r));
	ward_result_free(r);

	assert_int_equal(sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS,
			    "kill -USR1 $$", NULL),
			 0);
	assert_int_equal(ward_result_exit_code(r), -1);
	assert_int_equal(ward_result_signal(r), SIGUSR1);
	ward_result_free(r);
}

/* The text `seq 1 N` prints, as a malloc'd string. */
static char *seq_text(int n, size_t *len)
{
	size_t cap = (size_t)n * 8 + 1, pos = 0;
	char *s = malloc(cap);

	assert_non_null(s);
	for (int i = 1; i <= n; i++)
		pos += (size_t)snprintf(s + pos, cap - pos, "%d\n", i);
	*len = pos;
	return s;
}

static void t_capture_bounds(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	size_t total, len;
	char *want = seq_text(200000, &total);
	const char *got;
	ward_result *r;

	(void)state;
	eo.capture_limit = 1000;
	assert_int_equal(sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS,
			    "seq 1 200000; seq 1 200000 >&2", &eo),
			 0);
	got = ward_result_stdout(r, &len);
	assert_int_equal(len, 1000);
	assert_memory_equal(got, want, 500);
	assert_memory_equal(got + 500, want + total - 500, 500);
	assert_int_equal(ward_result_stdout_dropped(r), total - 1000);
	got = ward_result_stderr(r, &len);
	assert_int_equal(len, 1000);
	assert_memory_equal(got, want, 500);
	assert_memory_equal(got + 500, want + total - 500, 500);
	assert_int_equal(ward_result_stderr_dropped(r), total - 1000);
	ward_result_free(r);

	/* Below the bound nothing is dropped. */
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "seq 1 10", &eo),
	    0);
	got = ward_result_stdout(r, &len);
	assert_int_equal(len, 21);
	assert_memory_equal(got, want, 21);
	assert_int_equal(ward_result_stdout_dropped(r), 0);
	ward_result_free(r);
	free(want);
}

static void t_capbuf_odd_and_wrapping(void **state)
{
	struct ward_capbuf cb;
	char *s;
	size_t len;

	(void)state;
	/* limit 5: head 3, tail 2; appended in small pieces that wrap. */
	ward_capbuf_init(&cb, 3, 2);
	ward_capbuf_append(&cb, "ab", 2);
	ward_capbuf_append(&cb, "cd", 2);
	ward_capbuf_append(&cb, "e", 1);
	ward_capbuf_append(&cb, "fgh", 3);
	ward_capbuf_append(&cb, "i", 1);
	assert_int_equal(ward_capbuf_dup(&s, &len, &cb), 0);
	assert_string_equal(s, "abchi");
	assert_int_equal(cb.dropped, 4); /* d e f g */
	free(s);
	ward_capbuf_reset(&cb);
	assert_int_equal(ward_capbuf_dup(&s, &len, &cb), 0);
	assert_int_equal(len, 0);
	free(s);
	ward_capbuf_free(&cb);
}

/*
 * Every way of cutting a stream into appends keeps what one append of it
 * keeps: its first head_cap bytes and its last tail_cap bytes, the rest
 * counted as dropped; within the caps, all of it in the head (the ring
 * unused), which the result then takes as it is.
 */
static void t_capbuf_any_cut(void **state)
{
	static const size_t caps[][2] = {{3, 2}, {0, 4}, {4, 0}, {1, 1},
					 {0, 0}, {5, 5}};
	char data[40];
	unsigned seed = 1;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		size_t hc = caps[c][0], tc = caps[c][1];

		for (size_t n = 0; n <= 14; n++) {
			for (int round = 0; round < 50; round++) {
				struct ward_capbuf cb;
				size_t keep = n <= hc + tc ? n : hc + tc;
				char want[40], *got;
				size_t len, at = 0;

				/* What must be kept: all, or the ends. */
				if (n <= hc + tc) {
					memcpy(want, data, n);
				} else {
					memcpy(want, data, hc);
					memcpy(want + hc, data + n - tc, tc);
				}
				ward_capbuf_init(&cb, hc, tc);
				while (at < n) {
					size_t k = 1 + (seed = seed * 1103515245u +
							    12345u) % 5;

					if (k > n - at)
						k = n - at;
					ward_capbuf_append(&cb, data + at, k);
					at += k;
				}
				assert_int_equal(cb.dropped, n - keep);
				/* Within the caps the ring is never used: the
				 * result takes the head, whose bytes are all. */
				if (n <= hc + tc) {
					assert_null(cb.tail);
					assert_int_equal(cb.tail_len, 0);
				}
				assert_int_equal(
				    ward_capbuf_take(&got, &len, &cb), 0);
				assert_int_equal(len, keep);
				assert_memory_equal(got, want, keep);
				free(got);
				ward_capbuf_free(&cb);
			}
		}
	}
}

static void t_stream_mode(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char out_path[PATH_MAX], err_path[PATH_MAX];
	size_t total, len;
	char *want = seq_text(100000, &total);
	const char *tail;
	struct stat st;
	ward_result *r;
	int ofd, efd;

	(void)state;
	unique_path(out_path, sizeof(out_path), fx.ws, "stream-out");
	unique_path(err_path, sizeof(err_path), fx.ws, "stream-err");
	ofd = open(out_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	efd = open(err_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(ofd >= 0 && efd >= 0);
	eo.stdout_fd = ofd;
	eo.stderr_fd = efd;
	assert_int_equal(sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS,
			    "echo out; seq 1 100000 >&2", &eo),
			 0);
	close(ofd);
	close(efd);
	assert_string_equal(slurp(out_path), "out\n");
	/* stderr went through whole; the result keeps a 64 KiB tail. */
	assert_int_equal(stat(err_path, &st), 0);
	assert_int_equal((size_t)st.st_size, total);
	assert_null(ward_result_stdout(r, &len));
	assert_int_equal(len, 0);
	tail = ward_result_stderr(r, &len);
	assert_int_equal(len, 65536);
	assert_memory_equal(tail, want + total - 65536, 65536);
	assert_int_equal(ward_result_stderr_dropped(r), total - 65536);
	ward_result_free(r);
	free(want);
	unlink(out_path);
	unlink(err_path);
}

static void t_stdin_from_fd(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	ward_result *r;
	int p[2];

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(write(p[1], "hello stdin\n", 12), 12);
	close(p[1]);
	eo.capture_limit = 4096;
	eo.stdin_fd = p[0];
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "cat", &eo), 0);
	assert_string_equal(out_of(r), "hello stdin\n");
	ward_result_free(r);
	/* Not closed by libward. */
	assert_int_not_equal(fcntl(p[0], F_GETFD), -1);
	close(p[0]);

	/* Default stdin: /dev/null (cat ends at once). */
	assert_int_equal(sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS,
			    "cat; readlink /proc/self/fd/0", NULL),
			 0);
	assert_string_equal(out_of(r), "/dev/null\n");
	ward_result_free(r);
}

static volatile sig_atomic_t usr1_seen;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/* This process's own ignored-signal mask, from /proc/self/status. */
static unsigned long long own_sigign(void)
{
	unsigned long long mask = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigIgn: %llx", &mask) == 1)
			break;
	}
	fclose(f);
	return mask;
}

/*
 * The caller's signal state does not leak: SIGPIPE ignored by the caller
 * is default again, its blocked mask is not inherited, its handler is not
 * (and never ran in the child, which shares its memory until exec).
 */
static void t_signal_state_not_inherited(void **state)
{
	const struct rcfg *c = *state;
	char *argv[] = {"grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status",
			NULL};
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	struct sigaction sa, old_usr1, old_pipe;
	unsigned long long inherited;
	sigset_t block, old_mask;
	char expect[80];
	ward_provider *p;
	ward_policy *pol;
	ward_result *r = NULL;
	int rc;

	need(c);
	/*
	 * Whatever this test was started with ignored stays ignored across
	 * exec (POSIX; `nohup ward run …` relies on it), except SIGPIPE and
	 * SIGXFSZ, which the executor always resets.
	 */
	inherited =
	    own_sigign() & ~((1ULL << (SIGPIPE - 1)) | (1ULL << (SIGXFSZ - 1)));
	snprintf(expect, sizeof(expect),
		 "SigBlk:\t0000000000000000\nSigIgn:\t%016llx\n", inherited);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, &old_usr1);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old_mask);

	p = provider_for(c);
	pol = policy_for(mode_for(c, WARD_MODE_READ_ONLY));
	eo.capture_limit = 4096;
	eo.landlock_via_launcher = c->via_launcher;
	usr1_seen = 0;
	rc = ward_exec_run(&r, p, pol, argv, &eo);

	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	assert_int_equal(rc, 0);
	/* (Caught signals never survive exec; grep catches SIGSEGV itself.) */
	assert_string_equal(out_of(r), expect);
	assert_int_equal(usr1_seen, 0);
	ward_result_free(r);
	ward_policy_free(pol);
	ward_provider_free(p);
}

static void t_cwd(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	ward_result *r;
	int rc;

	(void)state;
	/* Default: the workspace root. */
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "pwd", NULL), 0);
	assert_int_equal(strncmp(out_of(r), fx.ws, strlen(fx.ws)), 0);
	ward_result_free(r);

	eo.capture_limit = 4096;
	eo.cwd = "/";
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "pwd", &eo), 0);
	assert_string_equal(out_of(r), "/\n");
	ward_result_free(r);

	/* A missing directory: the executor's own setup fails, nothing
	 * runs, and the status pipe says why. */
	eo.cwd = fx_absent("ward-test");
	rc = sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "echo ran", &eo);
	assert_int_equal(rc, -ENOENT);
	assert_null(r);
	assert_non_null(strstr(ward_error_last(), "chdir"));
	assert_non_null(strstr(ward_error_last(), eo.cwd));
}

static void t_huge_timeout(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	ward_result *r;

	(void)state;
	/* No wrap-around into an immediate timeout. */
	eo.capture_limit = 4096;
	eo.timeout_ms = ULONG_MAX;
	eo.kill_grace_ms = UINT_MAX;
	assert_int_equal(sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS,
			    "sleep 0.2; echo done", &eo),
			 0);
	assert_false(ward_result_timed_out(r));
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_string_equal(out_of(r), "done\n");
	ward_result_free(r);
}

static void t_bad_options_version(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	ward_result *r;

	(void)state;
	eo.version = 99;
	assert_int_equal(
	    sh(&r, &cfg_none, WARD_MODE_DANGER_FULL_ACCESS, "true", &eo),
	    WARD_EINVAL);
	assert_null(r);
}

static void t_timeout_none_runner(void **state)
{
	(void)state;
	t_timeout_kills_group((void **)&(const struct rcfg *){&cfg_none});
}

/* @s without its "ward: " or "landlock-run: " prefix. */
static const char *skip_prefix(const char *s)
{
	if (strncmp(s, "ward: ", 6) == 0)
		return s + 6;
	if (strncmp(s, "landlock-run: ", 14) == 0)
		return s + 14;
	return s;
}

static void t_command_not_found(void **state)
{
	const struct rcfg *c = *state;
	char *argv[] = {"ward-no-such-command-zz", NULL};
	char *argv_path[] = {(char *)fx_absent("ward-cmd"), NULL};
	char want[PATH_MAX + 64];
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	ward_provider *p;
	ward_policy *pol;
	ward_result *r = NULL;

	need(c);
	p = provider_for(c);
	pol = policy_for(mode_for(c, WARD_MODE_READ_ONLY));
	eo.capture_limit = 4096;
	/* Like a shell: 127 and a message; not a runner failure. Said by
	 * the executor's child, or by landlock-run --shell-status when its
	 * keeper runs the command. */
	assert_int_equal(ward_exec_run(&r, p, pol, argv, &eo), 0);
	assert_int_equal(ward_result_exit_code(r), 127);
	assert_string_equal(skip_prefix(err_of(r)),
			    "ward-no-such-command-zz: command not found\n");
	assert_false(ward_result_denied(r));
	ward_result_free(r);
	assert_int_equal(ward_exec_run(&r, p, pol, argv_path, &eo), 0);
	assert_int_equal(ward_result_exit_code(r), 127);
	snprintf(want, sizeof(want), "%s: No such file or directory\n",
		 argv_path[0]);
	assert_string_equal(skip_prefix(err_of(r)), want);
	ward_result_free(r);
	ward_policy_free(pol);
	ward_provider_free(p);
}

/* --- failures propagate; nothing runs ------------------------------------- */

static void t_unavailable_propagates(void **state)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	char path[PATH_MAX], script[PATH_MAX + 64];
	ward_provider *p = NULL;
	ward_policy *pol = policy_for(WARD_MODE_WORKSPACE_WRITE);
	ward_result *r = NULL;

	(void)state;
	po.platform = WARD_PLATFORM_WIN32; /* an empty chain */
	assert_int_equal(ward_provider_new(&p, &po), 0);
	unique_path(path, sizeof(path), fx.ws, "unavailable");
	snprintf(script, sizeof(script), "touch '%s'", path);
	assert_int_equal(ward_exec_shell(&r, p, pol, script, NULL),
			 WARD_EUNAVAILABLE);
	assert_null(r);
	assert_false(exists(path));
	ward_policy_free(pol);
	ward_provider_free(p);
}

static void t_missing_runner_propagates(void **state)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	char path[PATH_MAX], script[PATH_MAX + 64];
	ward_provider *p = NULL;
	ward_policy *pol = policy_for(WARD_MODE_WORKSPACE_WRITE);
	ward_result *r = NULL;

	(void)state;
	po.bwrap_path = fx_absent("bwrap");
	assert_int_equal(ward_provider_new(&p, &po), 0);
	assert_int_equal(ward_provider_force(p, WARD_RUNNER_BWRAP), 0);
	unique_path(path, sizeof(path), fx.ws, "norunner");
	snprintf(script, sizeof(script), "touch '%s'", path);
	assert_int_equal(ward_exec_shell(&r, p, pol, script, NULL),
			 WARD_ERUNNER);
	assert_null(r);
	assert_false(exists(path));
	ward_policy_free(pol);
	ward_provider_free(p);
}

/* Write an executable script into the (non-root) bin directory. */
static void write_script(char *path, size_t len, const char *name,
			 const char *body)
{
	int fd;

	snprintf(path, len, "%s/%s", fx.bindir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);
}

static void t_custom_runner(void **state)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char good[PATH_MAX], bad[PATH_MAX], path[PATH_MAX];
	char script[PATH_MAX + 64];
	ward_provider *p = NULL;
	ward_policy *pol = policy_for(WARD_MODE_WORKSPACE_WRITE);
	ward_result *r = NULL;

	(void)state;
	need(&cfg_bwrap);
	write_script(good, sizeof(good), "good-runner",
		     "#!/bin/sh\nexec /usr/bin/bwrap \"$@\"\n");
	write_script(bad, sizeof(bad), "bad-runner",
		     "#!/bin/sh\necho 'bwrap: simulated setup failure' >&2\n"
		     "exit 1\n");
	eo.capture_limit = 4096;

	/* A bwrap-compatible runner: fd 3 passes through to bwrap, whose
	 * JSON status says the child started. */
	po.runner_command = good;
	assert_int_equal(ward_provider_new(&p, &po), 0);
	unique_path(path, sizeof(path), fx.ws, "custom");
	snprintf(script, sizeof(script),
		 "echo hi > '%s'; echo nope > /etc/ward-test; exit 7", path);
	assert_int_equal(ward_exec_shell(&r, p, pol, script, &eo), 0);
	assert_int_equal(ward_result_runner(r), WARD_RUNNER_CUSTOM);
	assert_int_equal(ward_result_exit_code(r), 7);
	assert_true(ward_result_denied(r));
	assert_true(exists(path));
	ward_result_free(r);
	ward_provider_free(p);

	/* A runner that fails before starting the child: the status channel
	 * has no child-pid, so it is a runner failure, not a denial. */
	po.runner_command = bad;
	r = NULL;
	assert_int_equal(ward_provider_new(&p, &po), 0);
	unique_path(path, sizeof(path), fx.ws, "custom-bad");
	snprintf(script, sizeof(script), "touch '%s'", path);
	assert_int_equal(ward_exec_shell(&r, p, pol, script, &eo),
			 WARD_ERUNNER);
	assert_null(r);
	assert_string_equal(ward_error_last(),
			    "bwrap: simulated setup failure");
	assert_false(exists(path));
	ward_provider_free(p);
	ward_policy_free(pol);
}

/*
 * In a forked test process: stack Landlock's maximum of 16 layers (each
 * allowing everything), so the executor's child cannot add its own.
 * Exit 0 when ward reported WARD_ERUNNER "landlock: …" and nothing ran.
 */
static int enforce_failure_child(const char *marker)
{
	const char *everything[] = {"/"};
	struct ward_ll_ruleset rs;
	char err[256], script[PATH_MAX + 32];
	ward_provider *p = NULL;
	ward_policy *pol = NULL;
	ward_result *r = NULL;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	int rc;

	for (int i = 0; i < 16; i++) {
		if (ward_ll_prepare(&rs, everything, 1, everything, 1, err,
				    sizeof(err)) != 0)
			return 10;
		rc = ward_ll_enforce(&rs, err, sizeof(err));
		ward_ll_close(&rs);
		if (rc != 0)
			return 11;
	}
	po.launcher_path = fx.launcher;
	if (ward_provider_new(&p, &po) != 0 ||
	    ward_provider_force(p, WARD_RUNNER_LANDLOCK) != 0 ||
	    ward_policy_new(&pol, WARD_MODE_WORKSPACE_WRITE, fx.ws) != 0)
		return 12;
	snprintf(script, sizeof(script), "touch '%s'", marker);
	/* In-process (the call's cgroup), else through the keeper, whose
	 * failure is a runner failure too. */
	eo.contain = WARD_CONTAIN_CGROUP;
	eo.capture_limit = 4096;
	rc = ward_exec_shell(&r, p, pol, script, &eo);
	if (rc == 0 && ward_result_contain(r) == WARD_CONTAIN_NONE) {
		size_t n;
		const char *e = ward_result_stderr(r, &n);

		if (ward_result_exit_code(r) != 125 || !e ||
		    strncmp(e, "landlock-run: ", 14) != 0)
			return 16;
	} else {
		if (rc != WARD_ERUNNER)
			return 13;
		/* In-process "landlock: …", the keeper's "…landlock-run: …"
		 * (its runner-failure line). */
		if (strncmp(ward_error_last(), "landlock: ", 10) != 0 &&
		    !strstr(ward_error_last(), "landlock-run: "))
			return 14;
	}
	if (exists(marker))
		return 15;
	ward_policy_free(pol);
	ward_provider_free(p);
	return 0;
}

static void t_landlock_enforce_failure(void **state)
{
	char marker[PATH_MAX];
	pid_t pid;
	int st;

	(void)state;
	need(&cfg_ll);
	unique_path(marker, sizeof(marker), fx.ws, "enforce");
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(enforce_failure_child(marker));
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_false(exists(marker));
}

/* --- background tasks ----------------------------------------------------- */

/* Read from @t until @want shows up in the accumulated stdout (bounded:
 * PROMPT_MS). */
static void read_until(ward_task *t, char *acc, size_t cap, const char *want)
{
	size_t used = strlen(acc);

	for (int i = 0; i < PROMPT_MS / 20 && !strstr(acc, want); i++) {
		char *o = NULL, *e = NULL;
		size_t ol = 0, el = 0;

		assert_int_equal(ward_task_read(&o, &ol, &e, &el, t), 0);
		assert_true(used + ol < cap);
		memcpy(acc + used, o, ol + 1);
		used += ol;
		free(o);
		free(e);
		if (!strstr(acc, want))
			usleep(20 * 1000);
	}
	assert_non_null(strstr(acc, want));
}

static void t_task_partial_read(void **state)
{
	const struct rcfg *c = *state;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char fifo[PATH_MAX], script[PATH_MAX + 128], acc[256] = "";
	char *argv[] = {"bash", "-c", script, NULL};
	ward_provider *p;
	ward_policy *pol;
	ward_result *r = NULL;
	ward_task *t = NULL;
	char *o, *e;
	size_t ol, el;
	int fd;

	need(c);
	unique_path(fifo, sizeof(fifo), fx.ws, "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(script, sizeof(script),
		 "echo first; read x < '%s'; echo second; echo err >&2", fifo);
	p = provider_for(c);
	pol = policy_for(mode_for(c, WARD_MODE_READ_ONLY));
	eo.landlock_via_launcher = c->via_launcher;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	/* Each task keeps its own facts. */
	assert_int_equal(ward_task_mode(t), mode_for(c, WARD_MODE_READ_ONLY));
	assert_int_equal(ward_task_runner(t), c->runner);
	if (c->runner == WARD_RUNNER_NONE)
		assert_int_equal(ward_task_enforcement(t),
				 WARD_ENFORCEMENT_NONE);
	else
		assert_int_not_equal(ward_task_enforcement(t),
				     WARD_ENFORCEMENT_NONE);
	assert_true(ward_task_pid(t) > 0);

	read_until(t, acc, sizeof(acc), "first\n");
	assert_string_equal(acc, "first\n");
	assert_int_equal(ward_task_wait(&r, t, 50), -ETIMEDOUT);
	assert_null(r);

	fd = open(fifo, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "go\n", 3), 3);
	close(fd);
	assert_int_equal(ward_task_wait(&r, t, 0), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_string_equal(out_of(r), "first\nsecond\n");
	assert_string_equal(err_of(r), "err\n");
	assert_int_equal(ward_result_runner(r), c->runner);
	ward_result_free(r);
	/* Only what is new since the last read. */
	assert_int_equal(ward_task_read(&o, &ol, &e, &el, t), 0);
	assert_string_equal(o, "second\n");
	assert_string_equal(e, "err\n");
	free(o);
	free(e);
	assert_int_equal(ward_task_read(&o, &ol, &e, &el, t), 0);
	assert_int_equal(ol + el, 0);
	free(o);
	free(e);
	ward_task_free(t);
	ward_policy_free(pol);
	ward_provider_free(p);
	unlink(fifo);
}

/*
 * A merged task (a terminal's view): stdout and stderr in one stream, in
 * the order they came (each write waits for the reader to have taken the
 * last), while the result keeps them apart and stderr still classifies.
 */
static void t_task_merged(void **state)
{
	const struct rcfg *c = *state;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char fifo[2][PATH_MAX], script[2 * PATH_MAX + 256], acc[256] = "";
	char *argv[] = {"bash", "-c", script, NULL};
	ward_provider *p;
	ward_policy *pol;
	ward_result *r = NULL;
	ward_task *t = NULL;
	char *o, *e;
	size_t ol, el;
	int fd;

	need(c);
	/* A FIFO per read: with one, the second read could open it while
	 * the first writer still held it, read its end of file, and leave
	 * the second writer waiting for a reader forever. */
	for (int k = 0; k < 2; k++) {
		unique_path(fifo[k], sizeof(fifo[k]), fx.ws, "fifo");
		assert_int_equal(mkfifo(fifo[k], 0600), 0);
	}
	snprintf(script, sizeof(script),
		 "echo one; read x < '%s'; echo two >&2; read x < '%s'; "
		 "echo three",
		 fifo[0], fifo[1]);
	p = provider_for(c);
	pol = policy_for(mode_for(c, WARD_MODE_READ_ONLY));
	eo.landlock_via_launcher = c->via_launcher;
	eo.streams = WARD_TASK_MERGED;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	read_until(t, acc, sizeof(acc), "one\n");
	for (int k = 0; k < 2; k++) {
		fd = open(fifo[k], O_WRONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "go\n", 3), 3);
		close(fd);
		read_until(t, acc, sizeof(acc), k ? "three\n" : "two\n");
	}
	assert_string_equal(acc, "one\ntwo\nthree\n");
	assert_int_equal(ward_task_wait(&r, t, 0), 0);
	assert_string_equal(out_of(r), "one\nthree\n");
	assert_string_equal(err_of(r), "two\n");
	ward_result_free(r);
	assert_int_equal(ward_task_read(&o, &ol, &e, &el, t), 0);
	assert_int_equal(ol + el, 0);
	free(o);
	free(e);
	ward_task_free(t);
	ward_policy_free(pol);
	ward_provider_free(p);
	unlink(fifo[0]);
	unlink(fifo[1]);
}

/*
 * A streamed task (a protocol peer on its stdio): stdin and stdout are
 * the caller's pipes, live; stderr is copied to its descriptor and its
 * tail kept to classify; the task can still be killed and waited for.
 */
static void t_task_streamed(void **state)
{
	const struct rcfg *c = *state;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char *argv[] = {"bash", "-c",
			"while read -r l; do echo \"got $l\"; "
			"echo \"err $l\" >&2; done",
			NULL};
	char buf[64], err_path[PATH_MAX];
	int in[2], out[2], efd;
	ward_provider *p;
	ward_policy *pol;
	ward_result *r = NULL;
	ward_task *t = NULL;
	ssize_t n;
	size_t len;

	need(c);
	unique_path(err_path, sizeof(err_path), fx.ws, "streamed-err");
	efd = open(err_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(efd >= 0);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	p = provider_for(c);
	pol = policy_for(mode_for(c, WARD_MODE_READ_ONLY));
	eo.landlock_via_launcher = c->via_launcher;
	eo.streams = WARD_TASK_STREAMED;
	eo.stdin_fd = in[0];
	eo.stdout_fd = out[1];
	eo.stderr_fd = efd;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	close(in[0]);
	close(out[1]);
	assert_int_equal(write(in[1], "ping\n", 5), 5);
	n = read(out[0], buf, sizeof(buf) - 1);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "got ping\n");
	/* End of its input ends it. */
	close(in[1]);
	assert_int_equal(ward_task_wait(&r, t, 10000), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_null(ward_result_stdout(r, &len));
	assert_string_equal(err_of(r), "err ping\n");
	ward_result_free(r);
	close(efd);
	assert_string_equal(slurp(err_path), "err ping\n");
	close(out[0]);
	ward_task_free(t);
	ward_policy_free(pol);
	ward_provider_free(p);
	unlink(err_path);
}

static void t_task_kill(void **state)
{
	char *argv[] = {"sleep", "100", NULL};
	ward_provider *p = provider_for(&cfg_none);
	ward_policy *pol = policy_for(WARD_MODE_DANGER_FULL_ACCESS);
	ward_result *r = NULL;
	ward_task *t = NULL;

	(void)state;
	assert_int_equal(ward_task_start(&t, p, pol, argv, NULL), 0);
	assert_int_equal(ward_task_kill(t, SIGTERM), 0);
	assert_int_equal(ward_task_wait(&r, t, PROMPT_MS), 0);
	assert_int_equal(ward_result_signal(r), SIGTERM);
	assert_int_equal(ward_result_exit_code(r), -1);
	assert_false(ward_result_timed_out(r));
	ward_result_free(r);
	/* Reaped: never signal a pid that may have been reused. */
	assert_int_equal(ward_task_kill(t, SIGTERM), -ESRCH);
	ward_task_free(t);
	ward_policy_free(pol);
	ward_provider_free(p);
}

/*
 * A signal sent the moment a task has started is not lost. The runner
 * may still be starting: as root landlock-run is init of a new pid
 * namespace, and the kernel drops a signal sent from outside to a
 * namespace's init while its action is the default — so the launcher
 * starts with the signals it takes blocked, and they wait for it. The
 * call ends with the signal, or (bwrap killed before its sandbox
 * started) as a runner failure; never does the command sleep on.
 */
static void t_task_kill_at_once(void **state)
{
	const struct rcfg *c = *state;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char tag[32];
	char *argv[] = {"sleep", tag, NULL};
	ward_provider *p;
	ward_policy *pol;

	need(c);
	p = provider_for(c);
	pol = policy_for(mode_for(c, WARD_MODE_READ_ONLY));
	eo.landlock_via_launcher = c->via_launcher;
	for (int i = 0; i < 20; i++) {
		ward_result *r = NULL;
		ward_task *t = NULL;
		int rc;

		new_tag(tag, sizeof(tag));
		assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
		assert_int_equal(ward_task_kill(t, SIGTERM), 0);
		rc = ward_task_wait(&r, t, PROMPT_MS);
		if (rc == -ETIMEDOUT)
			fail_msg("round %d: the SIGTERM sent at once was lost",
				 i);
		if (rc == 0) {
			assert_int_equal(ward_result_signal(r), SIGTERM);
			assert_false(ward_result_timed_out(r));
		} else {
			assert_int_equal(c->runner, WARD_RUNNER_BWRAP);
			assert_int_equal(rc, WARD_ERUNNER);
		}
		assert_true(tag_gone(tag, PROMPT_MS));
		ward_result_free(r);
		ward_task_free(t);
		/* Nothing of the call outlives it, without a containment
		 * asked for: not the runner's half-started sandbox either
		 * (bwrap killed before its child armed its parent-death
		 * signal left that child waiting for it for ever). */
		if (!call_gone(tag, PROMPT_MS))
			fail_msg("round %d: process %d of the call outlived it",
				 i, (int)pid_with(tag, true));
	}
	ward_policy_free(pol);
	ward_provider_free(p);
}

static void t_task_timeout(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char *argv[] = {"sleep", "100", NULL};
	ward_provider *p = provider_for(&cfg_none);
	ward_policy *pol = policy_for(WARD_MODE_DANGER_FULL_ACCESS);
	ward_result *r = NULL;
	ward_task *t = NULL;

	(void)state;
	eo.timeout_ms = 200;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	assert_int_equal(ward_task_wait(&r, t, PROMPT_MS), 0);
	assert_true(ward_result_timed_out(r));
	assert_int_equal(ward_result_signal(r), SIGTERM);
	ward_result_free(r);
	ward_task_free(t);
	ward_policy_free(pol);
	ward_provider_free(p);
}

static void t_task_free_running(void **state)
{
	char tag[32];
	char *argv[] = {"sleep", tag, NULL};
	ward_provider *p = provider_for(&cfg_none);
	ward_policy *pol = policy_for(WARD_MODE_DANGER_FULL_ACCESS);
	ward_task *t = NULL;

	(void)state;
	new_tag(tag, sizeof(tag));
	assert_int_equal(ward_task_start(&t, p, pol, argv, NULL), 0);
	/* The keeper execs the command after its fork: wait for it. */
	for (int i = 0; i < 250 && !process_with_tag(tag); i++)
		usleep(20 * 1000);
	assert_true(process_with_tag(tag));
	/* It kills, never waits for the sleep (1000 s: the unit binary's
	 * own timeout would end the test first). */
	ward_task_free(t);
	assert_true(tag_gone(tag, PROMPT_MS));
	ward_policy_free(pol);
	ward_provider_free(p);
}

/* A task outlives the thread that started it (PR_SET_PDEATHSIG fires on
 * the forking thread's exit, so the task forks from its own thread). */
static void *start_task_thread(void *arg)
{
	char *argv[] = {"bash", "-c", "sleep 0.3; echo survived", NULL};
	ward_provider *p = provider_for(&cfg_none);
	ward_policy *pol = policy_for(WARD_MODE_DANGER_FULL_ACCESS);
	ward_task **t = arg;

	if (ward_task_start(t, p, pol, argv, NULL) != 0)
		*t = NULL;
	ward_policy_free(pol);
	ward_provider_free(p);
	return NULL;
}

static void t_task_outlives_starting_thread(void **state)
{
	ward_task *t = NULL;
	ward_result *r = NULL;
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, start_task_thread, &t), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_non_null(t);
	assert_int_equal(ward_task_wait(&r, t, PROMPT_MS), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_string_equal(out_of(r), "survived\n");
	ward_result_free(r);
	ward_task_free(t);
}

static void t_task_start_error(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char *argv[] = {"true", NULL};
	ward_provider *p = provider_for(&cfg_none);
	ward_policy *pol = policy_for(WARD_MODE_DANGER_FULL_ACCESS);
	ward_task *t = NULL;

	(void)state;
	eo.cwd = fx_absent("ward-task");
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), -ENOENT);
	assert_null(t);
	/* The reader thread's detail reaches the caller's thread. */
	assert_non_null(strstr(ward_error_last(), eo.cwd));
	ward_policy_free(pol);
	ward_provider_free(p);
}

/*
 * In a forked test process: run `sleep TAG` through ward (a task when
 * @task, else ward_exec_run, which blocks); the test then kills this
 * process with SIGKILL, leaving ward no chance to clean up.
 */
static void dying_parent(const struct rcfg *c, const char *tag, bool task)
{
	char *argv[] = {"sleep", (char *)tag, NULL};
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p = NULL;
	ward_policy *pol = NULL;
	ward_result *r = NULL;
	ward_task *t = NULL;

	/* Capture: should the sleep survive (a regression), it must not hold
	 * the test runner's stdout open. */
	eo.capture_limit = 4096;
	po.launcher_path = fx.have_launcher ? fx.launcher : NULL;
	if (ward_provider_new(&p, &po) != 0 ||
	    (c->runner != WARD_RUNNER_NONE &&
	     ward_provider_force(p, c->runner) != 0) ||
	    ward_policy_new(&pol, mode_for(c, WARD_MODE_READ_ONLY), fx.ws) != 0)
		_exit(2);
	if (task) {
		if (ward_task_start(&t, p, pol, argv, &eo) != 0)
			_exit(3);
		pause();
	}
	ward_exec_run(&r, p, pol, argv, &eo);
	_exit(4);
}

static void t_dies_with_parent(void **state)
{
	const struct rcfg *c = *state;
	char tag[32];

	need(c);
	for (int task = 0; task < 2; task++) {
		pid_t pid;
		int st;

		new_tag(tag, sizeof(tag));
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			dying_parent(c, tag, task);
		tag_seen(tag, PROMPT_MS);
		assert_true(process_with_tag(tag));
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st));
		assert_true(tag_gone(tag, PROMPT_MS));
	}
}

/* One thread of t_concurrent_calls: its own provider, its own policy. */
struct worker {
	const struct rcfg *cfg;
	int id;
	int bad; /* runs that returned something unexpected */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	ward_provider *p = NULL;
	ward_policy *pol = NULL;

	po.launcher_path = fx.have_launcher ? fx.launcher : NULL;
	eo.capture_limit = 4096;
	if (ward_provider_new(&p, &po) != 0 ||
	    (w->cfg->runner != WARD_RUNNER_NONE &&
	     ward_provider_force(p, w->cfg->runner) != 0) ||
	    ward_policy_new(&pol, mode_for(w->cfg, WARD_MODE_READ_ONLY),
			    fx.ws) != 0) {
		w->bad = 100;
		goto out;
	}
	for (int i = 0; i < 10; i++) {
		char script[64], want[64];
		ward_result *r = NULL;

		snprintf(script, sizeof(script), "echo %d-%d; echo e%d >&2",
			 w->id, i, i);
		snprintf(want, sizeof(want), "%d-%d\n", w->id, i);
		if (ward_exec_shell(&r, p, pol, script, &eo) != 0 ||
		    strcmp(out_of(r), want) != 0 ||
		    ward_result_exit_code(r) != 0 ||
		    ward_result_runner(r) != w->cfg->runner)
			w->bad++;
		ward_result_free(r);
	}
out:
	ward_policy_free(pol);
	ward_provider_free(p);
	return NULL;
}

/* Concurrent calls on different providers (half of them confined). */
static void t_concurrent_calls(void **state)
{
	struct worker w[6];
	pthread_t th[6];

	(void)state;
	need(&cfg_ll);
	for (int i = 0; i < 6; i++) {
		w[i] = (struct worker){i % 2 ? &cfg_ll : &cfg_none, i, 0};
		assert_int_equal(
		    pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(w[i].bad, 0);
	}
}

/* --- containment of descendants ------------------------------------------ */

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/*
 * This process's cgroup v2 directory, found here independently of
 * contain.c: the "0::" line of /proc/self/cgroup under a cgroup2 mount.
 */
static bool my_cgroup_dir(char *buf, size_t len)
{
	char line[4096], path[PATH_MAX] = "";
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::/", 4) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "%s", line + 3);
		}
	}
	fclose(f);
	f = path[0] ? fopen("/proc/self/mountinfo", "re") : NULL;
	while (f && !found && fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX];
		size_t rl;

		if (!strstr(line, " - cgroup2 ") ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
		if (strncmp(path, root, rl) != 0)
			continue;
		snprintf(buf, len, "%s%s", mnt,
			 strcmp(path + rl, "/") == 0 ? "" : path + rl);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * Whether this process can do what WARD_CONTAIN_CGROUP needs: create a
 * cgroup under its own, with a cgroup.kill, and start a child in it with
 * clone3(CLONE_INTO_CGROUP). The reason when not, in @why.
 */
static bool can_contain_cgroup(char *why, size_t len)
{
	char dir[PATH_MAX], sub[PATH_MAX + 64], kill_file[PATH_MAX + 80];
	uint64_t ca[11];
	pid_t pid;
	int fd, st;
	bool ok = false;

	if (!my_cgroup_dir(dir, sizeof(dir))) {
		snprintf(why, len, "no cgroup v2 hierarchy here");
		return false;
	}
	snprintf(sub, sizeof(sub), "%s/ward-test-probe-%d", dir, (int)getpid());
	if (mkdir(sub, 0755) != 0) {
		snprintf(why, len, "cannot create a cgroup under %.150s: %s",
			 dir, strerror(errno));
		return false;
	}
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", sub);
	fd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (access(kill_file, W_OK) != 0) {
		snprintf(why, len, "no cgroup.kill (Linux < 5.14)");
		goto out_rmdir;
	}
	memset(ca, 0, sizeof(ca));
	ca[0] = CLONE_INTO_CGROUP;
	ca[4] = SIGCHLD;
	ca[10] = (uint64_t)fd;
	pid = (pid_t)syscall(__NR_clone3, ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		snprintf(why, len, "clone3(CLONE_INTO_CGROUP): %s",
			 strerror(errno));
		goto out_rmdir;
	}
	ok = waitpid(pid, &st, 0) == pid && WIFEXITED(st);
	if (!ok)
		snprintf(why, len, "the clone3 probe child failed");
out_rmdir:
	if (fd >= 0)
		close(fd);
	rmdir(sub);
	return ok;
}

/* How many cgroups named like the executor's ("ward-<pid namespace>-<pid>-N")
 * for @pid exist under this process's cgroup. */
static int count_cgroups_of(pid_t pid)
{
	char dir[PATH_MAX], prefix[64];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *d;

	if (!my_cgroup_dir(dir, sizeof(dir)))
		return 0;
	assert_int_equal(stat("/proc/self/ns/pid", &st), 0);
	snprintf(prefix, sizeof(prefix), "ward-%llu-%d-",
		 (unsigned long long)st.st_ino, (int)pid);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

static int count_call_cgroups(void)
{
	return count_cgroups_of(getpid());
}

/* A unique `sleep` duration, to find a process in /proc by. */

/*
 * Run, under @c with @contain, a command that leaves a setsid'd sleep
 * @tag behind (holding the capture pipes), with @timeout_ms (then the
 * command itself sleeps on); the result in *@r. A timeout that came
 * before the command had left its orphans and said so (a loaded machine
 * starts a sandbox slowly) is tried again, ten times longer, with the
 * same @tag: what the first try left is still looked for.
 */
static int run_orphaning(ward_result **r, const struct rcfg *c,
			 unsigned contain, const char *tag,
			 unsigned long timeout_ms)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char script[256];
	int err;

	snprintf(script, sizeof(script),
		 "setsid -f sleep %s; (setsid sleep %s &); echo left%s", tag,
		 tag, timeout_ms ? "; sleep 30" : "");
	eo.capture_limit = 4096;
	eo.contain = contain;
	/*
	 * With a timeout the command must have left its orphans before the
	 * timeout kills it, or the check is empty: on a loaded machine the
	 * sandbox alone can take longer than @timeout_ms to start, so a run
	 * that did not get as far as "left" is tried again with a longer one
	 * (bounded), rather than timed.
	 */
	for (eo.timeout_ms = timeout_ms;; eo.timeout_ms *= 4) {
		err = sh(r, c, mode_for(c, WARD_MODE_WORKSPACE_WRITE), script,
			 &eo);
		if (err || !timeout_ms || strcmp(out_of(*r), "left\n") == 0 ||
		    eo.timeout_ms >= 20000)
			return err;
		ward_result_free(*r);
		*r = NULL;
	}
}

/* Without containment asked for, a Landlock run still ends its orphans:
 * landlock-run's keeper runs it (the default guarantee of libward). */
static void t_contain_none_keeper(void **state)
{
	const struct rcfg *c = *state;
	char tag[32];
	ward_result *r;

	need(c);
	/* timeout_ms 0: none. On a loaded machine the sandbox may take
	 * longer to start than the timeout: then the command is ended before
	 * its echo, and the run is repeated with a longer one (bounded). */
	for (unsigned long timeout_ms = 0; timeout_ms <= 19200;
	     timeout_ms = timeout_ms ? timeout_ms * 4 : 300) {
		bool early;

		new_tag(tag, sizeof(tag));
		assert_int_equal(
		    run_orphaning(&r, c, WARD_CONTAIN_NONE, tag, timeout_ms),
		    0);
		assert_int_equal(ward_result_contain(r), WARD_CONTAIN_NONE);
		assert_int_equal(ward_result_timed_out(r), timeout_ms > 0);
		early = timeout_ms > 0 && timeout_ms < 19200 &&
			strcmp(out_of(r), "") == 0;
		if (!early)
			assert_string_equal(out_of(r), "left\n");
		/* Gone when the call returns. */
		if (process_with_tag(tag)) {
			for (int i = 0; i < 10; i++) {
				pid_t pid = pid_with_tag(tag);

				if (pid > 0)
					kill(pid, SIGKILL);
				usleep(10 * 1000);
			}
			fail_msg("an orphan outlived the call");
		}
		ward_result_free(r);
		if (timeout_ms > 0 && !early)
			break;
	}
}

static void t_contain_cgroup(void **state)
{
	const struct rcfg *c = *state;
	char tag[32], why[256];
	ward_result *r;

	need(c);
	if (!can_contain_cgroup(why, sizeof(why))) {
		print_message("SKIP: %s\n", why);
		skip();
	}
	for (int timeout = 0; timeout < 2; timeout++) {
		new_tag(tag, sizeof(tag));
		assert_int_equal(run_orphaning(&r, c, WARD_CONTAIN_CGROUP, tag,
					       timeout ? 300 : 0),
				 0);
		assert_int_equal(ward_result_contain(r), WARD_CONTAIN_CGROUP);
		assert_int_equal(ward_result_timed_out(r), timeout == 1);
		assert_string_equal(out_of(r), "left\n");
		/* Gone when the call returns, and so is the call's cgroup. */
		assert_false(process_with_tag(tag));
		assert_int_equal(count_call_cgroups(), 0);
		ward_result_free(r);
	}
}

/* Containment applies to runner none (an unconfined command can kill
 * its keeper) and to bwrap (it ends a sandbox whose bwrap was killed
 * while starting). */
static void t_contain_applied(void **state)
{
	const struct rcfg *cfgs[] = {&cfg_none, &cfg_bwrap};
	ward_result *r;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;

		if (cfgs[i] == &cfg_bwrap && !fx.have_bwrap)
			continue;
		eo.capture_limit = 4096;
		eo.contain = WARD_CONTAIN_CGROUP | WARD_CONTAIN_SUBREAPER;
		assert_int_equal(sh(&r, cfgs[i],
				    mode_for(cfgs[i], WARD_MODE_READ_ONLY),
				    "echo ok", &eo),
				 0);
		assert_string_equal(out_of(r), "ok\n");
		assert_int_not_equal(ward_result_contain(r), WARD_CONTAIN_NONE);
		ward_result_free(r);
	}
}

/*
 * Per call: a call's end kills its own cgroup, not another call's. A
 * task keeps running while a call beside it leaves orphans and ends.
 */
static void t_contain_cgroup_per_call(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char tag_task[32], tag_call[32], why[256];
	char *argv[] = {"sleep", tag_task, NULL};
	ward_provider *p;
	ward_policy *pol;
	ward_result *r;
	ward_task *t = NULL;

	(void)state;
	need(&cfg_ll);
	if (!can_contain_cgroup(why, sizeof(why))) {
		print_message("SKIP: %s\n", why);
		skip();
	}
	new_tag(tag_task, sizeof(tag_task));
	new_tag(tag_call, sizeof(tag_call));
	p = provider_for(&cfg_ll);
	pol = policy_for(WARD_MODE_READ_ONLY);
	eo.contain = WARD_CONTAIN_CGROUP;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	tag_seen(tag_task, PROMPT_MS);
	assert_true(process_with_tag(tag_task));

	assert_int_equal(
	    run_orphaning(&r, &cfg_ll, WARD_CONTAIN_CGROUP, tag_call, 0), 0);
	assert_int_equal(ward_result_contain(r), WARD_CONTAIN_CGROUP);
	ward_result_free(r);
	assert_false(process_with_tag(tag_call));
	assert_true(process_with_tag(tag_task));

	/* The task's own orphans go when its leader does. */
	ward_task_free(t);
	assert_true(tag_gone(tag_task, PROMPT_MS));
	assert_int_equal(count_call_cgroups(), 0);
	ward_policy_free(pol);
	ward_provider_free(p);
}

/*
 * A ward process killed during a call (SIGKILL, a crash) cannot clean up:
 * landlock-run's keeper ends the command's tree (its parent died), but the
 * call's cgroup stays. The next process to create a call cgroup kills and
 * removes it. Here a forked process runs a task that leaves a setsid'd
 * sleep and is killed; then a fresh call with containment on cleans up.
 */
static void t_contain_cgroup_stale(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char tag[32], script[128], why[256], ward[PATH_MAX + 8];
	char *argv[] = {"bash", "-c", script, NULL};
	char *slash;
	pid_t pid, run;
	int st;

	(void)state;
	need(&cfg_ll);
	if (!can_contain_cgroup(why, sizeof(why))) {
		print_message("SKIP: %s\n", why);
		skip();
	}
	snprintf(ward, sizeof(ward), "%s", fx.launcher);
	slash = strrchr(ward, '/');
	assert_non_null(slash);
	snprintf(slash + 1, sizeof(ward) - (size_t)(slash + 1 - ward), "ward");
	if (access(ward, X_OK) != 0) {
		print_message("SKIP: %s is not built\n", ward);
		skip();
	}
	new_tag(tag, sizeof(tag));
	snprintf(script, sizeof(script), "setsid -f sleep %s; exec sleep 60",
		 tag);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ward_provider *p = provider_for(&cfg_ll);
		ward_policy *pol = policy_for(WARD_MODE_READ_ONLY);
		ward_task *t = NULL;

		eo.contain = WARD_CONTAIN_CGROUP;
		if (ward_task_start(&t, p, pol, argv, &eo) != 0)
			_exit(3);
		pause();
		_exit(4);
	}
	tag_seen(tag, PROMPT_MS);
	assert_true(process_with_tag(tag));
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	/* The orphan died with the caller (landlock-run's keeper ends the
	 * tree when its parent dies); the call's cgroup is left behind. */
	assert_true(tag_gone(tag, PROMPT_MS));
	assert_int_equal(count_cgroups_of(pid), 1);

	/* The next call that makes a cgroup here cleans up the stale one. */
	run = fork();
	assert_true(run >= 0);
	if (run == 0) {
		char *truth[] = {"true", NULL};
		struct ward_exec_options o = WARD_EXEC_OPTIONS_INIT;
		ward_provider *p = provider_for(&cfg_ll);
		ward_policy *pol = policy_for(WARD_MODE_READ_ONLY);
		ward_result *r = NULL;

		o.contain = WARD_CONTAIN_CGROUP;
		o.capture_limit = 1024;
		_exit(ward_exec_run(&r, p, pol, truth, &o) == 0 &&
			      ward_result_exit_code(r) == 0
			  ? 0
			  : 1);
	}
	assert_int_equal(waitpid(run, &st, 0), run);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_true(tag_gone(tag, PROMPT_MS));
	assert_int_equal(count_cgroups_of(pid), 0);
}

/* A task's result says what contained it. */
static void t_contain_task(void **state)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	char tag[32], script[128], why[256];
	char *argv[] = {"bash", "-c", script, NULL};
	ward_provider *p;
	ward_policy *pol;
	ward_result *r = NULL;
	ward_task *t = NULL;

	(void)state;
	need(&cfg_ll);
	if (!can_contain_cgroup(why, sizeof(why))) {
		print_message("SKIP: %s\n", why);
		skip();
	}
	new_tag(tag, sizeof(tag));
	snprintf(script, sizeof(script), "setsid -f sleep %s; echo bye", tag);
	p = provider_for(&cfg_ll);
	pol = policy_for(WARD_MODE_READ_ONLY);
	eo.contain = WARD_CONTAIN_CGROUP;
	assert_int_equal(ward_task_start(&t, p, pol, argv, &eo), 0);
	assert_int_equal(ward_task_wait(&r, t, PROMPT_MS), 0);
	assert_int_equal(ward_result_contain(r), WARD_CONTAIN_CGROUP);
	assert_string_equal(out_of(r), "bye\n");
	assert_false(process_with_tag(tag));
	ward_result_free(r);
	ward_task_free(t);
	assert_int_equal(count_call_cgroups(), 0);
	ward_policy_free(pol);
	ward_provider_free(p);
}

/*
 * Make clone3 fail with ENOSYS in this (forked) process, as Docker's
 * default seccomp profile does.
 */
static bool block_clone3(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		     offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

/*
 * The subreaper, in a forked process (it is process-wide and permanent,
 * and t_no_leaks must not see its orphans). Exit status: 0, or the number
 * of the first check that failed. With @no_clone3, clone3 is filtered
 * and both flags are asked for: the cgroup must fall back to the
 * subreaper and leave no cgroup behind.
 */
static int subreaper_child(const struct rcfg *c, bool no_clone3)
{
	struct ward_exec_options eo = WARD_EXEC_OPTIONS_INIT;
	unsigned contain = WARD_CONTAIN_SUBREAPER;
	char tag[32], mine[32];
	ward_result *r = NULL;
	pid_t elder;

	if (no_clone3) {
		if (!block_clone3())
			return 1;
		contain |= WARD_CONTAIN_CGROUP;
	}
	/* A child of the caller's own, started before the call: spared. */
	new_tag(mine, sizeof(mine));
	elder = fork();
	if (elder == 0) {
		/* Gone with this process, whichever check it fails. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() == 1)
			_exit(126);
		execlp("sleep", "sleep", mine, (char *)NULL);
		_exit(127);
	}
	usleep(50 * 1000); /* a few clock ticks before the call begins */
	for (int timeout = 0; timeout < 2; timeout++) {
		new_tag(tag, sizeof(tag));
		if (run_orphaning(&r, c, contain, tag, timeout ? 300 : 0) != 0)
			return 2;
		if (ward_result_contain(r) != WARD_CONTAIN_SUBREAPER)
			return 3;
		if (ward_result_timed_out(r) != (timeout == 1) ||
		    strcmp(out_of(r), "left\n") != 0)
			return 4;
		ward_result_free(r);
		if (process_with_tag(tag))
			return 5;
		if (!process_with_tag(mine) || kill(elder, 0) != 0)
			return 6;
		if (count_call_cgroups() != 0)
			return 7;
	}
	kill(elder, SIGKILL);
	waitpid(elder, NULL, 0);
	/* Nothing left behind, no other child: the one-waitid() path. */
	eo.capture_limit = 4096;
	eo.contain = contain;
	if (sh(&r, c, mode_for(c, WARD_MODE_READ_ONLY), "echo fast", &eo) !=
		0 ||
	    ward_result_contain(r) != WARD_CONTAIN_SUBREAPER ||
	    strcmp(out_of(r), "fast\n") != 0)
		return 8;
	ward_result_free(r);
	return 0;
}

static void t_contain_subreaper(void **state)
{
	const struct rcfg *c = *state;
	char owner[32];

	need(c);
	for (int no_clone3 = 0; no_clone3 < 2; no_clone3++) {
		pid_t pid = fork();
		int st;

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(subreaper_child(c, no_clone3));
		assert_int_equal(waitpid(pid, &st, 0), pid);
		/* What a check that failed early left behind: the child's
		 * own sleep and the call's orphans (all tagged by it). */
		tag_owner(owner, sizeof(owner), pid);
		kill_tagged(owner);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) != 0)
			print_message("subreaper check %d failed (clone3 %s)\n",
				      WEXITSTATUS(st),
				      no_clone3 ? "filtered" : "allowed");
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

/* A version 1 options struct (no `contain`) still works. */
static void t_options_version1(void **state)
{
	struct v1_options {
		unsigned version;
		int stdin_fd;
		size_t capture_limit;
		int stdout_fd;
		int stderr_fd;
		unsigned long timeout_ms;
		unsigned kill_grace_ms;
		const char *cwd;
		char *const *envp;
		bool landlock_via_launcher;
	} v1 = {1, -1, 4096, -1, -1, 0, 0, NULL, NULL, false};
	ward_provider *p = provider_for(&cfg_none);
	ward_policy *pol = policy_for(WARD_MODE_DANGER_FULL_ACCESS);
	ward_result *r = NULL;

	(void)state;
	/* Versions 2 and 3 only append. */
	assert_int_equal(
	    offsetof(struct v1_options, landlock_via_launcher),
	    offsetof(struct ward_exec_options, landlock_via_launcher));
	assert_true(sizeof(v1) <= sizeof(struct ward_exec_options));
	assert_int_equal(ward_exec_shell(&r, p, pol, "echo v1",
					 (const struct ward_exec_options *)&v1),
			 0);
	assert_string_equal(out_of(r), "v1\n");
	assert_int_equal(ward_result_contain(r), WARD_CONTAIN_NONE);
	ward_result_free(r);
	ward_policy_free(pol);
	ward_provider_free(p);
}

/* --- hygiene: last -------------------------------------------------------- */

static void t_no_leaks(void **state)
{
	siginfo_t si;

	(void)state;
	/* Every pipe end, pidfd and ruleset of every test above is closed. */
	assert_int_equal(count_fds(), fx.fds_at_start);
	/* No child left unreaped. */
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

#define RUNNER_TEST(fn, cfg)                                                   \
	{                                                                      \
#fn "/" #cfg, fn, NULL, NULL, (void *)&(cfg)                   \
	}

#define RUNNER_TESTS(fn)                                                       \
	RUNNER_TEST(fn, cfg_bwrap), RUNNER_TEST(fn, cfg_ll),                   \
	    RUNNER_TEST(fn, cfg_llrun)

/*
 * The supervisor's record of refused network access reaches the result
 * as a typed fact (landlock-run's status channel): the count and the
 * first address and port. With the network off a direct connect is
 * refused; a call that tries nothing has none.
 */
static void t_network_refused(void **state)
{
	ward_result *r = NULL;
	char addr[64] = "";
	unsigned port = 0;

	(void)state;
	need(&cfg_llrun);
	assert_int_equal(sh(&r, &cfg_llrun, WARD_MODE_WORKSPACE_WRITE,
			    "(exec 3<>/dev/tcp/192.0.2.7/8443) 2>/dev/null; "
			    "(exec 3<>/dev/tcp/192.0.2.8/80) 2>/dev/null; "
			    "echo done",
			    NULL),
			 0);
	assert_string_equal(out_of(r), "done\n");
	assert_int_equal(
	    ward_result_network_refused(r, addr, sizeof(addr), &port), 2);
	assert_string_equal(addr, "192.0.2.7");
	assert_int_equal(port, 8443);
	ward_result_free(r);
	assert_int_equal(
	    sh(&r, &cfg_llrun, WARD_MODE_WORKSPACE_WRITE, "echo quiet", NULL),
	    0);
	assert_int_equal(ward_result_network_refused(r, NULL, 0, NULL), 0);
	ward_result_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    RUNNER_TESTS(t_read_only_denies_write),
	    RUNNER_TESTS(t_workspace_write_allowed),
	    RUNNER_TESTS(t_tmp_write_allowed),
	    RUNNER_TESTS(t_sandbox_env),
	    RUNNER_TESTS(t_only_std_fds),
	    RUNNER_TESTS(t_no_capabilities),
	    RUNNER_TESTS(t_session_leader),
	    RUNNER_TESTS(t_timeout_kills_group),
	    RUNNER_TESTS(t_task_kill_at_once),
	    RUNNER_TESTS(t_task_partial_read),
	    RUNNER_TEST(t_command_not_found, cfg_ll),
	    RUNNER_TEST(t_command_not_found, cfg_none),
	    RUNNER_TEST(t_task_partial_read, cfg_none),
	    RUNNER_TESTS(t_task_merged),
	    RUNNER_TESTS(t_task_streamed),
	    RUNNER_TEST(t_task_streamed, cfg_none),
	    RUNNER_TESTS(t_dies_with_parent),
	    RUNNER_TEST(t_dies_with_parent, cfg_none),
	    RUNNER_TESTS(t_signal_state_not_inherited),
	    RUNNER_TEST(t_signal_state_not_inherited, cfg_none),
	    cmocka_unit_test(t_danger_unconfined),
	    cmocka_unit_test(t_exit_status_and_signal),
	    cmocka_unit_test(t_capture_bounds),
	    cmocka_unit_test(t_capbuf_odd_and_wrapping),
	    cmocka_unit_test(t_capbuf_any_cut),
	    cmocka_unit_test(t_stream_mode),
	    cmocka_unit_test(t_stdin_from_fd),
	    cmocka_unit_test(t_cwd),
	    cmocka_unit_test(t_bad_options_version),
	    cmocka_unit_test(t_huge_timeout),
	    cmocka_unit_test(t_timeout_none_runner),
	    cmocka_unit_test(t_unavailable_propagates),
	    cmocka_unit_test(t_missing_runner_propagates),
	    cmocka_unit_test(t_custom_runner),
	    cmocka_unit_test(t_landlock_enforce_failure),
	    cmocka_unit_test(t_task_kill),
	    cmocka_unit_test(t_task_timeout),
	    cmocka_unit_test(t_task_free_running),
	    cmocka_unit_test(t_task_outlives_starting_thread),
	    cmocka_unit_test(t_task_start_error),
	    cmocka_unit_test(t_concurrent_calls),
	    RUNNER_TESTS(t_contain_none_keeper),
	    RUNNER_TEST(t_contain_cgroup, cfg_ll),
	    RUNNER_TEST(t_contain_cgroup, cfg_llrun),
	    RUNNER_TEST(t_contain_subreaper, cfg_ll),
	    RUNNER_TEST(t_contain_subreaper, cfg_llrun),
	    cmocka_unit_test(t_contain_applied),
	    cmocka_unit_test(t_contain_cgroup_per_call),
	    cmocka_unit_test(t_contain_task),
	    cmocka_unit_test(t_contain_cgroup_stale),
	    cmocka_unit_test(t_options_version1),
	    cmocka_unit_test(t_network_refused),
	    cmocka_unit_test(t_no_leaks),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
