/*
 * Unit tests for src/libward/fsfence/fsfence.c and fsfence_ops.c: the
 * in-process file fence.
 *
 * Every test gets a fresh base directory under /var/tmp (not /tmp: /tmp is
 * itself a writable root under workspace-write) holding:
 *
 *   ws/      the workspace root
 *   out/     a directory outside every writable root
 *
 * The policy's $TMPDIR is cleared so the writable roots are exactly the
 * workspace and /tmp. Rules are real ward_rules (src/libward/policy/rules.c).
 *
 * Children (forked for rlimits and mount namespaces) report through their
 * exit status, never through cmocka.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ward/ward.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/* The hidden testing hook of src/libward/fsfence/fsfence.c (linked
 * statically). */
int ward_fsfence_test_force_fallback(int on);

#define TMP_TAG ".ward-tmp-"

struct fx {
	char base[PATH_MAX - 16];
	char ws[PATH_MAX];
	char out[PATH_MAX];
	ward_rules *rules;
	ward_policy *policy;
	/* A directory outside the base (/tmp, /dev/shm) to remove at
	 * teardown, even when an assertion ends the test early. */
	char extra[64];
};

/* --- helpers ----------------------------------------------------------- */

/* A path built from a format, in one of a ring of static buffers. */
static const char *P(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static const char *P(const char *fmt, ...)
{
	static char ring[16][PATH_MAX];
	static unsigned next;
	char *b = ring[next++ % 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, PATH_MAX, fmt, ap);
	va_end(ap);
	return b;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The content of @path (static buffer) or NULL. */
static const char *slurp(const char *path)
{
	static char buf[65536];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_link(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Temporary files of the fence left anywhere under @dir. */
static int count_tmp(const char *dir)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strstr(e->d_name, TMP_TAG))
			n++;
		if (e->d_type == DT_DIR)
			n += count_tmp(P("%s/%s", dir, e->d_name));
	}
	closedir(d);
	return n;
}

static int count_entries(const char *dir)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/*
 * (Re)build fx->policy: @mode, workspace fx->ws, no $TMPDIR, and the rules
 * of @rules_text (one entry per line; NULL: none).
 */
static void set_policy(struct fx *fx, enum ward_mode mode,
		       const char *rules_text)
{
	struct ward_rules_env env = {.workspace = fx->ws};

	ward_policy_free(fx->policy);
	ward_rules_free(fx->rules);
	fx->policy = NULL;
	fx->rules = NULL;
	assert_int_equal(ward_policy_new(&fx->policy, mode, fx->ws), 0);
	assert_int_equal(ward_policy_set_tmpdir(fx->policy, NULL), 0);
	if (rules_text) {
		assert_int_equal(ward_rules_new(&fx->rules), 0);
		if (ward_rules_add_text(fx->rules, rules_text, &env, NULL))
			fail_msg("rules: %s", ward_error_last());
		assert_int_equal(ward_policy_set_rules(fx->policy, fx->rules),
				 0);
	}
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/var/tmp/ward-fsfence-XXXXXX";
	char *real;

	if (!fx || !mkdtemp(tmpl))
		return -1;
	real = realpath(tmpl, NULL);
	if (!real)
		return -1;
	snprintf(fx->base, sizeof(fx->base), "%s", real);
	free(real);
	snprintf(fx->ws, sizeof(fx->ws), "%s/ws", fx->base);
	snprintf(fx->out, sizeof(fx->out), "%s/out", fx->base);
	if (mkdir(fx->ws, 0755) || mkdir(fx->out, 0755))
		return -1;
	*state = fx;
	ward_fsfence_test_force_fallback(0);
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ward_fsfence_test_force_fallback(0);
	ward_policy_free(fx->policy);
	ward_rules_free(fx->rules);
	rm_rf(fx->base);
	if (fx->extra[0])
		rm_rf(fx->extra);
	free(fx);
	return 0;
}

/* --- the matrix: every operation x mode x rule kind x place ------------- */

enum rule_kind {
	RK_NONE,
	RK_RO,
	RK_NA
};

static const char *const rk_names[] = {"no rule", "r-", "--"};

static bool is_mutation(enum ward_fs_op op)
{
	return op == WARD_FS_OP_WRITE || op == WARD_FS_OP_EDIT ||
	       op == WARD_FS_OP_REMOVE || op == WARD_FS_OP_MOVE ||
	       op == WARD_FS_OP_MKDIR;
}

/* What the contract says, independently of the implementation. */
static bool expect_allowed(enum ward_fs_op op, enum ward_mode mode,
			   enum rule_kind rk, bool inside,
			   enum ward_fs_reason *why)
{
	if (rk == RK_NA) {
		*why = WARD_FS_DENIED_RULE_NO_ACCESS;
		return false;
	}
	if (!is_mutation(op))
		return true;
	if (rk == RK_RO) {
		*why = WARD_FS_DENIED_RULE_READ_ONLY;
		return false;
	}
	if (mode == WARD_MODE_READ_ONLY) {
		*why = WARD_FS_DENIED_READ_ONLY;
		return false;
	}
	if (mode == WARD_MODE_WORKSPACE_WRITE && !inside) {
		*why = WARD_FS_DENIED_OUTSIDE_ROOTS;
		return false;
	}
	return true;
}

static void run_case(struct fx *fx, enum ward_fs_op op, enum ward_mode mode,
		     enum rule_kind rk, bool inside)
{
	const char *area = P("%s/area", inside ? fx->ws : fx->out);
	const char *f = P("%s/f", area);
	struct ward_fs_denial d;
	enum ward_fs_reason why = 0;
	bool allowed = expect_allowed(op, mode, rk, inside, &why);
	struct ward_fs_content c = {0};
	struct ward_fs_listing l = {0};
	struct ward_fs_stat st = {0};
	const char *given = f;
	bool effect = false;
	int rc = 0;

	rm_rf(area);
	assert_int_equal(mkdir(area, 0755), 0);
	put(f, "hello old\n");
	assert_int_equal(mkdir(P("%s/d", area), 0755), 0);
	set_policy(fx, mode,
		   rk == RK_NONE ? NULL
				 : P("%s %s", rk == RK_RO ? "r-" : "--", area));
	memset(&d, 0x5a, sizeof(d));
	switch (op) {
	case WARD_FS_OP_READ:
		rc = ward_fs_read(&c, &d, fx->policy, f, NULL);
		effect = rc == 0 && c.data && !strcmp(c.data, "hello old\n");
		ward_fs_content_clear(&c);
		break;
	case WARD_FS_OP_WRITE:
		rc = ward_fs_write(&d, fx->policy, f, "new\n", 4, NULL);
		effect = !strcmp(slurp(f), "new\n");
		break;
	case WARD_FS_OP_EDIT:
		rc = ward_fs_edit(NULL, &d, fx->policy, f, "old", "new", NULL);
		effect = !strcmp(slurp(f), "hello new\n");
		break;
	case WARD_FS_OP_REMOVE:
		rc = ward_fs_remove(&d, fx->policy, f, NULL);
		effect = !exists(f);
		break;
	case WARD_FS_OP_MOVE:
		rc = ward_fs_move(&d, fx->policy, f, P("%s/f2", area), NULL);
		effect = !exists(f) && exists(P("%s/f2", area));
		break;
	case WARD_FS_OP_MKDIR:
		given = P("%s/m", area);
		rc = ward_fs_mkdir(&d, fx->policy, given, NULL);
		effect = is_dir(given);
		break;
	case WARD_FS_OP_LIST:
		given = area;
		rc = ward_fs_list(&l, &d, fx->policy, area, NULL);
		effect = rc == 0 && l.count == 2 &&
			 !strcmp(l.entries[0].path, "d") &&
			 !strcmp(l.entries[1].path, "f");
		ward_fs_listing_clear(&l);
		break;
	case WARD_FS_OP_STAT:
		rc = ward_fs_stat(&st, &d, fx->policy, f, NULL);
		effect =
		    rc == 0 && st.size == 10 && st.type == WARD_FS_TYPE_FILE;
		ward_fs_stat_clear(&st);
		break;
	}
	if (allowed != (rc == 0) || allowed != effect ||
	    (!allowed && rc != WARD_EDENIED))
		fail_msg("%s under %s, %s, %s: rc %d (%s), effect %d, "
			 "expected %s",
			 ward_fs_op_name(op), ward_mode_name(mode),
			 rk_names[rk], inside ? "inside" : "outside", rc,
			 ward_error_last(), effect,
			 allowed ? "allowed" : "denied");
	if (!allowed) {
		assert_int_equal(d.mode, mode);
		assert_int_equal(d.op, op);
		assert_int_equal(d.reason, why);
		assert_string_equal(d.path, given);
		assert_string_equal(d.resolved, given);
	}
	assert_int_equal(count_tmp(fx->base), 0);
}

static void run_matrix(void **state, enum ward_fs_op op)
{
	static const enum ward_mode modes[] = {WARD_MODE_READ_ONLY,
					       WARD_MODE_WORKSPACE_WRITE,
					       WARD_MODE_DANGER_FULL_ACCESS};

	for (int m = 0; m < 3; m++)
		for (int rk = RK_NONE; rk <= RK_NA; rk++)
			for (int in = 0; in < 2; in++)
				run_case(*state, op, modes[m], rk, in);
}

#define MATRIX_TEST(name, op)                                                  \
	static void test_matrix_##name(void **state)                           \
	{                                                                      \
		run_matrix(state, op);                                         \
	}

MATRIX_TEST(read, WARD_FS_OP_READ)
MATRIX_TEST(write, WARD_FS_OP_WRITE)
MATRIX_TEST(edit, WARD_FS_OP_EDIT)
MATRIX_TEST(remove, WARD_FS_OP_REMOVE)
MATRIX_TEST(move, WARD_FS_OP_MOVE)
MATRIX_TEST(mkdir, WARD_FS_OP_MKDIR)
MATRIX_TEST(list, WARD_FS_OP_LIST)
MATRIX_TEST(stat, WARD_FS_OP_STAT)

/* The same matrix through the portable path used where openat2 is missing. */
static void test_matrix_fallback(void **state)
{
	ward_fsfence_test_force_fallback(1);
	for (int op = WARD_FS_OP_READ; op <= WARD_FS_OP_STAT; op++)
		run_matrix(state, op);
}

/* --- symlinks, .., /proc, hard links ------------------------------------ */

static void check_symlink_outside(struct fx *fx)
{
	struct ward_fs_content c = {0};
	struct ward_fs_stat st = {0};
	struct ward_fs_denial d;

	put(P("%s/f", fx->out), "outside\n");
	assert_int_equal(symlink(fx->out, P("%s/dl", fx->ws)), 0);
	assert_int_equal(symlink(P("%s/f", fx->out), P("%s/fl", fx->ws)), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);

	/* Writes through either link are judged where they land. */
	assert_int_equal(ward_fs_write(&d, fx->policy, "dl/new", "x", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_OUTSIDE_ROOTS);
	assert_string_equal(d.path, "dl/new");
	assert_string_equal(d.resolved, P("%s/new", fx->out));
	assert_int_equal(ward_fs_write(&d, fx->policy, "fl", "x", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(
	    ward_fs_edit(NULL, &d, fx->policy, "fl", "outside", "inside", NULL),
	    WARD_EDENIED);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "dl/m", NULL),
			 WARD_EDENIED);
	assert_int_equal(ward_fs_remove(&d, fx->policy, "dl/f", NULL),
			 WARD_EDENIED);
	assert_int_equal(ward_fs_move(&d, fx->policy, "dl/f", "moved", NULL),
			 WARD_EDENIED);
	assert_string_equal(slurp(P("%s/f", fx->out)), "outside\n");
	assert_int_equal(count_entries(fx->out), 1);

	/* Reading is not confined by roots. */
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "fl", NULL), 0);
	assert_string_equal(c.data, "outside\n");
	ward_fs_content_clear(&c);

	/* Remove and move act on the link itself, never its target. */
	assert_int_equal(ward_fs_move(&d, fx->policy, "fl", "fl2", NULL), 0);
	assert_true(is_link(P("%s/fl2", fx->ws)));
	assert_int_equal(ward_fs_remove(&d, fx->policy, "fl2", NULL), 0);
	assert_false(exists(P("%s/fl2", fx->ws)));
	assert_string_equal(slurp(P("%s/f", fx->out)), "outside\n");

	/* stat describes the link unless asked to follow. */
	assert_int_equal(ward_fs_stat(&st, &d, fx->policy, "dl", NULL), 0);
	assert_int_equal(st.type, WARD_FS_TYPE_SYMLINK);
	assert_string_equal(st.link_target, fx->out);
	ward_fs_stat_clear(&st);

	/* A `--` rule on the target protects every way to it. */
	set_policy(fx, WARD_MODE_DANGER_FULL_ACCESS, P("-- %s", fx->out));
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "dl/f", NULL),
			 WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_RULE_NO_ACCESS);
	assert_string_equal(d.resolved, P("%s/f", fx->out));
	assert_int_equal(ward_fs_list(&(struct ward_fs_listing){0}, &d,
				      fx->policy, "dl", NULL),
			 WARD_EDENIED);
	struct ward_fs_stat_options so = WARD_FS_STAT_OPTIONS_INIT;
	so.follow = true;
	assert_int_equal(ward_fs_stat(&st, &d, fx->policy, "dl/f", &so),
			 WARD_EDENIED);
}

static void test_symlink_outside(void **state)
{
	check_symlink_outside(*state);
}

static void test_symlink_outside_fallback(void **state)
{
	ward_fsfence_test_force_fallback(1);
	check_symlink_outside(*state);
}

/* A symlink inside the workspace to another place inside is followed. */
static void test_symlink_inside(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	size_t n = 0;

	put(P("%s/real.txt", fx->ws), "one two\n");
	assert_int_equal(symlink("real.txt", P("%s/alias", fx->ws)), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(
	    ward_fs_edit(&n, &d, fx->policy, "alias", "two", "2", NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(slurp(P("%s/real.txt", fx->ws)), "one 2\n");
	assert_true(is_link(P("%s/alias", fx->ws)));
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, "alias", "three\n", 6, NULL), 0);
	assert_string_equal(slurp(P("%s/real.txt", fx->ws)), "three\n");
	assert_true(is_link(P("%s/alias", fx->ws)));
}

/* A link to a protected path is as protected as the path. */
static void test_link_to_protected(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_content c = {0};
	struct ward_fs_denial d;
	const char *secret = P("%s/secret", fx->base);

	assert_int_equal(mkdir(secret, 0700), 0);
	put(P("%s/key", secret), "KEY\n");
	assert_int_equal(symlink(P("%s/key", secret), P("%s/k", fx->ws)), 0);
	assert_int_equal(symlink(secret, P("%s/sd", fx->ws)), 0);

	set_policy(fx, WARD_MODE_DANGER_FULL_ACCESS, P("-- %s", secret));
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "k", NULL),
			 WARD_EDENIED);
	assert_int_equal(d.mode, WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(d.op, WARD_FS_OP_READ);
	assert_string_equal(d.resolved, P("%s/key", secret));
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "sd/key", NULL),
			 WARD_EDENIED);
	assert_int_equal(
	    ward_fs_read(&c, &d, fx->policy, "../secret/key", NULL),
	    WARD_EDENIED);
	assert_string_equal(d.resolved, P("%s/key", secret));
	assert_int_equal(ward_fs_write(&d, fx->policy, "k", "x", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(ward_fs_read(&c, &d, fx->policy,
				      P("/proc/self/root%s/key", secret), NULL),
			 WARD_EDENIED);
	/* No existence oracle: a missing path under `--` is denied too. */
	{
		struct ward_fs_stat st;

		assert_int_equal(ward_fs_read(&c, &d, fx->policy,
					      P("%s/nothing", secret), NULL),
				 WARD_EDENIED);
		assert_int_equal(ward_fs_stat(&st, &d, fx->policy,
					      P("%s/nothing", secret), NULL),
				 WARD_EDENIED);
		assert_int_equal(
		    ward_fs_read(&c, &d, fx->policy, "sd/nothing", NULL),
		    WARD_EDENIED);
	}

	set_policy(fx, WARD_MODE_DANGER_FULL_ACCESS, P("r- %s", secret));
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "k", NULL), 0);
	assert_string_equal(c.data, "KEY\n");
	ward_fs_content_clear(&c);
	assert_int_equal(ward_fs_write(&d, fx->policy, "k", "x", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_RULE_READ_ONLY);
	assert_int_equal(ward_fs_remove(&d, fx->policy, "sd/key", NULL),
			 WARD_EDENIED);
	assert_string_equal(slurp(P("%s/key", secret)), "KEY\n");
}

static void test_dotdot(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;

	assert_int_equal(mkdir(P("%s/sub", fx->ws), 0755), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, "../out/x", "x", 1, NULL),
	    WARD_EDENIED);
	assert_string_equal(d.resolved, P("%s/x", fx->out));
	assert_int_equal(ward_fs_write(&d, fx->policy,
				       P("%s/sub/../../out/y", fx->ws), "x", 1,
				       NULL),
			 WARD_EDENIED);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "sub/../../out/m", NULL),
			 WARD_EDENIED);
	assert_int_equal(count_entries(fx->out), 0);
	/* ".." that stays inside is fine. */
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, "sub/../y", "y", 1, NULL), 0);
	assert_string_equal(slurp(P("%s/y", fx->ws)), "y");
	/* The workspace's parent is not the workspace. */
	assert_int_equal(ward_fs_remove(&d, fx->policy, "..",
					&(struct ward_fs_remove_options){
					    WARD_FS_OPTIONS_VERSION, true}),
			 WARD_EDENIED);
	assert_true(is_dir(fx->ws));
}

static void test_proc_self_root(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	char cwd[PATH_MAX];
	int fd, rc;

	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	/* The same file by another name: judged where it really is. */
	assert_int_equal(ward_fs_write(&d, fx->policy,
				       P("/proc/self/root%s/p", fx->ws), "p", 1,
				       NULL),
			 0);
	assert_string_equal(slurp(P("%s/p", fx->ws)), "p");
	assert_int_equal(ward_fs_write(&d, fx->policy,
				       P("/proc/self/root%s/p", fx->out), "p",
				       1, NULL),
			 WARD_EDENIED);
	assert_string_equal(d.resolved, P("%s/p", fx->out));
	/* Through the working directory and an open descriptor. */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(fx->ws), 0);
	rc = ward_fs_write(&d, fx->policy, "/proc/self/cwd/../out/q", "q", 1,
			   NULL);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rc, WARD_EDENIED);
	assert_string_equal(d.resolved, P("%s/q", fx->out));
	fd = open(fx->out, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	rc = ward_fs_write(&d, fx->policy, P("/proc/self/fd/%d/r", fd), "r", 1,
			   NULL);
	close(fd);
	assert_int_equal(rc, WARD_EDENIED);
	assert_string_equal(d.resolved, P("%s/r", fx->out));
	assert_int_equal(count_entries(fx->out), 0);
	fd = open(fx->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	rc = ward_fs_write(&d, fx->policy, P("/proc/self/fd/%d/s", fd), "s", 1,
			   NULL);
	close(fd);
	assert_int_equal(rc, 0);
	assert_string_equal(slurp(P("%s/s", fx->ws)), "s");
}

/* A thread that tells its id and waits to be let go. */
struct waiter {
	atomic_int tid;
	atomic_int done;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&w->done))
		usleep(1000);
	return NULL;
}

/*
 * The fence runs in the caller's process: a process's part of /proc
 * names the caller (its environment holds the secrets ward strips from
 * commands), never a command. Hidden in every mode, by every name — self,
 * thread-self, the pid, a thread's id, a symlink to it — and no rule
 * widens it; the rest of /proc stays readable.
 */
static void test_proc_private(void **state)
{
	static const enum ward_mode modes[] = {WARD_MODE_READ_ONLY,
					       WARD_MODE_DANGER_FULL_ACCESS};
	struct fx *fx = *state;
	struct ward_fs_content c = {0};
	struct ward_fs_listing l = {0};
	struct ward_fs_stat st = {0};
	struct ward_fs_denial d;
	struct waiter w = {0};
	pthread_t th;
	bool self_seen = false;

	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	while (!atomic_load(&w.tid))
		usleep(1000);
	assert_int_equal(symlink("/proc/self/environ", P("%s/env", fx->ws)), 0);
	for (size_t m = 0; m < 2; m++) {
		const char *names[] = {
		    "/proc/self/environ",
		    "/proc/thread-self/status",
		    P("/proc/%d/cmdline", (int)getpid()),
		    P("/proc/%d/task/%d/maps", (int)getpid(), (int)getpid()),
		    P("/proc/%d/status", atomic_load(&w.tid)),
		    "/proc/self/fdinfo/0",
		    "env",
		};

		set_policy(fx, modes[m], "rw /proc\nr- /proc/self");
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			memset(&d, 0, sizeof(d));
			assert_int_equal(
			    ward_fs_read(&c, &d, fx->policy, names[i], NULL),
			    WARD_EDENIED);
			assert_int_equal(d.reason,
					 WARD_FS_DENIED_RULE_NO_ACCESS);
			assert_non_null(strstr(ward_error_last(), "/proc"));
			assert_int_equal(ward_fs_check(&d, fx->policy,
						       WARD_FS_OP_READ,
						       names[i]),
					 WARD_EDENIED);
		}
		assert_int_equal(ward_fs_stat(&st, &d, fx->policy,
					      "/proc/self/environ", NULL),
				 WARD_EDENIED);
		assert_int_equal(
		    ward_fs_list(&l, &d, fx->policy, "/proc/self", NULL),
		    WARD_EDENIED);
		assert_int_equal(
		    ward_fs_list(&l, &d, fx->policy, "/proc", NULL), 0);
		for (size_t i = 0; i < l.count; i++) {
			const char *e = l.entries[i].path;
			bool pid = strspn(e, "0123456789") == strlen(e);

			self_seen |= strcmp(e, "self") == 0;
			if (pid || !strcmp(e, "self") ||
			    !strcmp(e, "thread-self"))
				assert_true(l.entries[i].denied);
			if (!strcmp(e, "meminfo"))
				assert_false(l.entries[i].denied);
		}
		ward_fs_listing_clear(&l);
		assert_int_equal(
		    ward_fs_read(&c, &d, fx->policy, "/proc/meminfo", NULL), 0);
		ward_fs_content_clear(&c);
	}
	assert_true(self_seen);
	atomic_store(&w.done, 1);
	pthread_join(th, NULL);
}

static void test_hardlink_outside(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	struct stat st;

	put(P("%s/h", fx->out), "outside old\n");
	assert_int_equal(link(P("%s/h", fx->out), P("%s/h", fx->ws)), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	/* The write replaces the workspace's entry, not the shared inode. */
	assert_int_equal(ward_fs_write(&d, fx->policy, "h", "new\n", 4, NULL),
			 0);
	assert_string_equal(slurp(P("%s/h", fx->ws)), "new\n");
	assert_string_equal(slurp(P("%s/h", fx->out)), "outside old\n");
	assert_int_equal(stat(P("%s/h", fx->out), &st), 0);
	assert_int_equal(st.st_nlink, 1);

	assert_int_equal(link(P("%s/h", fx->out), P("%s/h2", fx->ws)), 0);
	assert_int_equal(
	    ward_fs_edit(NULL, &d, fx->policy, "h2", "old", "NEW", NULL), 0);
	assert_string_equal(slurp(P("%s/h2", fx->ws)), "outside NEW\n");
	assert_string_equal(slurp(P("%s/h", fx->out)), "outside old\n");

	assert_int_equal(link(P("%s/h", fx->out), P("%s/h3", fx->ws)), 0);
	assert_int_equal(ward_fs_remove(&d, fx->policy, "h3", NULL), 0);
	assert_string_equal(slurp(P("%s/h", fx->out)), "outside old\n");
}

static void test_move_in_and_out(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_move_options mo = WARD_FS_MOVE_OPTIONS_INIT;
	struct ward_fs_denial d;

	put(P("%s/a", fx->out), "a");
	put(P("%s/b", fx->ws), "b");
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(
	    ward_fs_move(&d, fx->policy, P("%s/a", fx->out), "a", NULL),
	    WARD_EDENIED);
	assert_string_equal(d.path, P("%s/a", fx->out));
	assert_int_equal(d.op, WARD_FS_OP_MOVE);
	assert_int_equal(
	    ward_fs_move(&d, fx->policy, "b", P("%s/b", fx->out), NULL),
	    WARD_EDENIED);
	assert_string_equal(d.path, P("%s/b", fx->out));
	assert_true(exists(P("%s/a", fx->out)));
	assert_false(exists(P("%s/a", fx->ws)));
	assert_true(exists(P("%s/b", fx->ws)));
	assert_false(exists(P("%s/b", fx->out)));

	assert_int_equal(ward_fs_move(&d, fx->policy, "b", "c", NULL), 0);
	put(P("%s/e", fx->ws), "e");
	assert_int_equal(ward_fs_move(&d, fx->policy, "e", "c", NULL), -EEXIST);
	mo.overwrite = true;
	assert_int_equal(ward_fs_move(&d, fx->policy, "e", "c", &mo), 0);
	assert_string_equal(slurp(P("%s/c", fx->ws)), "e");

	/* A directory holding a protected entry does not move, nor does
	 * anything move into a protected place. */
	assert_int_equal(mkdir(P("%s/dir", fx->ws), 0755), 0);
	assert_int_equal(mkdir(P("%s/dir/sub", fx->ws), 0755), 0);
	put(P("%s/dir/sub/keep", fx->ws), "k");
	assert_int_equal(mkdir(P("%s/prot", fx->ws), 0755), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE,
		   P("r- %s/dir/sub/keep\nr- %s/prot", fx->ws, fx->ws));
	assert_int_equal(ward_fs_move(&d, fx->policy, "dir", "dir2", NULL),
			 WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_RULE_READ_ONLY);
	assert_string_equal(d.resolved, P("%s/dir/sub/keep", fx->ws));
	assert_true(exists(P("%s/dir/sub/keep", fx->ws)));
	assert_int_equal(ward_fs_move(&d, fx->policy, "c", "prot/c", NULL),
			 WARD_EDENIED);
	assert_true(exists(P("%s/c", fx->ws)));
}

/* A move across file systems copies a regular file durably. */
static void test_move_across_filesystems(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	char tmpl[] = "/dev/shm/ward-fsfence-XXXXXX";
	struct stat a, b;

	if (!mkdtemp(tmpl)) {
		print_message("SKIP: no /dev/shm to cross file systems\n");
		skip();
	}
	snprintf(fx->extra, sizeof(fx->extra), "%s", tmpl);
	assert_int_equal(stat(tmpl, &a), 0);
	assert_int_equal(stat(fx->ws, &b), 0);
	if (a.st_dev == b.st_dev) {
		rmdir(tmpl);
		print_message("SKIP: /dev/shm is on the workspace's file "
			      "system\n");
		skip();
	}
	put(P("%s/m", fx->ws), "moved\n");
	assert_int_equal(chmod(P("%s/m", fx->ws), 0640), 0);
	/* /dev/shm is no $TMPDIR ward accepts (roots.c): an rw rule. */
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, P("rw %s", tmpl));
	assert_int_equal(
	    ward_fs_move(&d, fx->policy, "m", P("%s/m", tmpl), NULL), 0);
	assert_false(exists(P("%s/m", fx->ws)));
	assert_string_equal(slurp(P("%s/m", tmpl)), "moved\n");
	assert_int_equal(stat(P("%s/m", tmpl), &a), 0);
	assert_int_equal(a.st_mode & 0777, 0640);
	assert_int_equal(count_tmp(tmpl), 0);
	assert_int_equal(mkdir(P("%s/dd", fx->ws), 0755), 0);
	assert_int_equal(
	    ward_fs_move(&d, fx->policy, "dd", P("%s/dd", tmpl), NULL), -EXDEV);
	assert_true(is_dir(P("%s/dd", fx->ws)));
	rm_rf(tmpl);
}

/* /tmp is a writable root under workspace-write, as for the runners. */
static void test_tmp_is_writable(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	char tmpl[] = "/tmp/ward-fsfence-XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	snprintf(fx->extra, sizeof(fx->extra), "%s", tmpl);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, P("%s/t", tmpl), "t", 1, NULL), 0);
	assert_string_equal(slurp(P("%s/t", tmpl)), "t");
	set_policy(fx, WARD_MODE_READ_ONLY, NULL);
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, P("%s/u", tmpl), "t", 1, NULL),
	    WARD_EDENIED);
	rm_rf(tmpl);
}

/* The fence takes writable roots from ward_roots_writable() and nothing
 * else: a path is writable exactly when a root from it contains it. */
static void test_agrees_with_roots(void **state)
{
	struct fx *fx = *state;
	static const enum ward_mode modes[] = {WARD_MODE_READ_ONLY,
					       WARD_MODE_WORKSPACE_WRITE,
					       WARD_MODE_DANGER_FULL_ACCESS};
	const char *paths[] = {
	    P("%s/a", fx->ws), P("%s/a", fx->out),  "/tmp/ward-x",
	    "/etc/ward-x",     P("%s/x", fx->base), "rel",
	};
	struct ward_fs_denial d;
	char **roots;
	bool want;
	int rc;

	for (int m = 0; m < 3; m++) {
		set_policy(fx, modes[m], P("rw %s", fx->out));
		assert_int_equal(ward_roots_writable(&roots, fx->policy), 0);
		for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
			const char *abs = paths[i][0] == '/'
					      ? paths[i]
					      : P("%s/%s", fx->ws, paths[i]);

			want = false;
			for (char **r = roots; *r; r++) {
				size_t n = strlen(*r);

				if (!strcmp(*r, "/") ||
				    (!strncmp(abs, *r, n) && abs[n] == '/'))
					want = true;
			}
			rc = ward_fs_check(&d, fx->policy, WARD_FS_OP_WRITE,
					   paths[i]);
			if ((rc == 0) != want)
				fail_msg("%s under %s: check %d, roots say %s",
					 paths[i], ward_mode_name(modes[m]), rc,
					 want ? "writable" : "not writable");
		}
		ward_strv_free(roots);
	}
}

/* --- races: the fence must never write outside -------------------------- */

struct flipper {
	atomic_bool stop;
	atomic_long flips;
	const char *a, *b;   /* exchanged (dir race) */
	const char *link;    /* final-component race: the file … */
	const char *tmpname; /* … exchanged with this symlink … */
	const char *target;  /* … to here */
};

static void *flip_exchange(void *arg)
{
	struct flipper *fl = arg;

	while (!atomic_load(&fl->stop)) {
		syscall(SYS_renameat2, AT_FDCWD, fl->a, AT_FDCWD, fl->b,
			RENAME_EXCHANGE);
		atomic_fetch_add(&fl->flips, 1);
	}
	return NULL;
}

/*
 * Swap the file @link with a symlink to @target (RENAME_EXCHANGE). When the
 * fence's rename has replaced the symlink with a regular file, plant a new
 * one, so the race stays live.
 */
static void *flip_final(void *arg)
{
	struct flipper *fl = arg;
	struct stat a, b;

	while (!atomic_load(&fl->stop)) {
		syscall(SYS_renameat2, AT_FDCWD, fl->link, AT_FDCWD,
			fl->tmpname, RENAME_EXCHANGE);
		if (lstat(fl->link, &a) == 0 && lstat(fl->tmpname, &b) == 0 &&
		    !S_ISLNK(a.st_mode) && !S_ISLNK(b.st_mode)) {
			unlink(fl->tmpname);
			if (symlink(fl->target, fl->tmpname) != 0)
				break;
		}
		atomic_fetch_add(&fl->flips, 1);
	}
	return NULL;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run ops against a swapping tree; the outside must stay untouched. */
static void race(struct fx *fx, bool final_component, double seconds)
{
	struct ward_fs_remove_options rr = {WARD_FS_OPTIONS_VERSION, true};
	struct ward_fs_denial d;
	struct flipper fl = {0};
	struct stat before, after, sb, sa;
	long ok = 0, denied = 0, other = 0;
	double end = now_sec() + seconds;
	pthread_t th;
	int rc, i;

	put(P("%s/s", fx->out), "inside a\n");
	put(P("%s/e", fx->out), "inside a\n");
	assert_int_equal(stat(fx->out, &before), 0);
	assert_int_equal(stat(P("%s/s", fx->out), &sb), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	if (final_component) {
		put(P("%s/t", fx->ws), "inside a\n");
		fl.link = P("%s/t", fx->ws);
		fl.target = P("%s/s", fx->out);
		fl.tmpname = P("%s/t.flip", fx->ws);
		assert_int_equal(symlink(fl.target, fl.tmpname), 0);
		assert_int_equal(pthread_create(&th, NULL, flip_final, &fl), 0);
	} else {
		assert_int_equal(mkdir(P("%s/d", fx->ws), 0755), 0);
		put(P("%s/d/e", fx->ws), "inside a\n");
		assert_int_equal(symlink(fx->out, P("%s/x", fx->ws)), 0);
		fl.a = P("%s/d", fx->ws);
		fl.b = P("%s/x", fx->ws);
		assert_int_equal(pthread_create(&th, NULL, flip_exchange, &fl),
				 0);
	}
	for (i = 0; i < 20000 && now_sec() < end; i++) {
		if (final_component) {
			switch (i % 3) {
			case 0:
				rc = ward_fs_write(&d, fx->policy, "t",
						   "inside b\n", 9, NULL);
				break;
			case 1:
				rc = ward_fs_edit(NULL, &d, fx->policy, "t",
						  "inside a", "inside b", NULL);
				break;
			default:
				rc = ward_fs_edit(NULL, &d, fx->policy, "t",
						  "inside b", "inside a", NULL);
				break;
			}
		} else {
			switch (i % 6) {
			case 0:
				rc = ward_fs_write(&d, fx->policy, "d/s",
						   "pwned\n", 6, NULL);
				break;
			case 1:
				rc = ward_fs_edit(NULL, &d, fx->policy, "d/e",
						  "inside", "pwned", NULL);
				break;
			case 2:
				rc = ward_fs_mkdir(&d, fx->policy, "d/m", NULL);
				break;
			case 3:
				rc = ward_fs_move(&d, fx->policy, "d/s", "d/s2",
						  NULL);
				break;
			case 4:
				rc = ward_fs_remove(&d, fx->policy, "d/e", &rr);
				break;
			default:
				rc = ward_fs_remove(&d, fx->policy, "d/m", &rr);
				break;
			}
		}
		if (rc == 0)
			ok++;
		else if (rc == WARD_EDENIED)
			denied++;
		else
			other++;
	}
	atomic_store(&fl.stop, true);
	pthread_join(th, NULL);
	print_message("race (%s): %d operations, %ld flips: %ld done, "
		      "%ld denied, %ld other errors\n",
		      final_component ? "final component" : "directory", i,
		      (long)atomic_load(&fl.flips), ok, denied, other);
	/* Nothing outside changed: not the entries, not their content, not
	 * the directory (its mtime moves on any create, rename or unlink). */
	assert_int_equal(stat(fx->out, &after), 0);
	assert_int_equal(stat(P("%s/s", fx->out), &sa), 0);
	assert_int_equal(count_entries(fx->out), 2);
	assert_string_equal(slurp(P("%s/s", fx->out)), "inside a\n");
	assert_string_equal(slurp(P("%s/e", fx->out)), "inside a\n");
	assert_true(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
		    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
	assert_true(sa.st_mtim.tv_sec == sb.st_mtim.tv_sec &&
		    sa.st_mtim.tv_nsec == sb.st_mtim.tv_nsec &&
		    sa.st_ino == sb.st_ino);
	/* The race was real: both outcomes happened. */
	assert_true(ok > 0);
	assert_true(denied > 0);
}

static void test_race_directory_swap(void **state)
{
	race(*state, false, 3.0);
}

static void test_race_final_component(void **state)
{
	race(*state, true, 3.0);
}

static void test_race_directory_swap_fallback(void **state)
{
	ward_fsfence_test_force_fallback(1);
	race(*state, false, 1.5);
}

static void test_race_final_component_fallback(void **state)
{
	ward_fsfence_test_force_fallback(1);
	race(*state, true, 1.5);
}

/*
 * Reads under a `--` rule: a file and a directory, each exchanged with a
 * symlink to the protected place; the protected content must never come
 * back, while the public one does.
 */
static void race_read(struct fx *fx, double seconds)
{
	const char *secret = P("%s/secret", fx->base);
	struct ward_fs_content c = {0};
	struct ward_fs_denial d;
	struct flipper f1 = {0}, f2 = {0};
	double end = now_sec() + seconds;
	long pub = 0, denied = 0, other = 0;
	pthread_t t1, t2;
	int rc, i;

	assert_int_equal(mkdir(secret, 0700), 0);
	put(P("%s/key", secret), "SECRET\n");
	put(P("%s/r", fx->ws), "public\n");
	assert_int_equal(symlink(P("%s/key", secret), P("%s/rl", fx->ws)), 0);
	assert_int_equal(mkdir(P("%s/d", fx->ws), 0755), 0);
	put(P("%s/d/key", fx->ws), "public\n");
	assert_int_equal(symlink(secret, P("%s/dl", fx->ws)), 0);
	set_policy(fx, WARD_MODE_READ_ONLY, P("-- %s", secret));
	f1.a = P("%s/r", fx->ws);
	f1.b = P("%s/rl", fx->ws);
	f2.a = P("%s/d", fx->ws);
	f2.b = P("%s/dl", fx->ws);
	assert_int_equal(pthread_create(&t1, NULL, flip_exchange, &f1), 0);
	assert_int_equal(pthread_create(&t2, NULL, flip_exchange, &f2), 0);
	for (i = 0; i < 20000 && now_sec() < end; i++) {
		rc = ward_fs_read(&c, &d, fx->policy, i % 2 ? "r" : "d/key",
				  NULL);
		if (rc == 0) {
			if (strcmp(c.data, "public\n") != 0)
				break;
			pub++;
		} else if (rc == WARD_EDENIED) {
			denied++;
		} else {
			other++;
		}
		ward_fs_content_clear(&c);
	}
	atomic_store(&f1.stop, true);
	atomic_store(&f2.stop, true);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	print_message("read race: %d reads: %ld public, %ld denied, %ld "
		      "other errors\n",
		      i, pub, denied, other);
	if (c.data)
		fail_msg("read returned protected content: %s", c.data);
	assert_true(pub > 0);
	assert_true(denied > 0);
}

static void test_race_read_protected(void **state)
{
	race_read(*state, 3.0);
}

static void test_race_read_protected_fallback(void **state)
{
	ward_fsfence_test_force_fallback(1);
	race_read(*state, 1.5);
}

/* --- durability ---------------------------------------------------------- */

static void test_write_keeps_mode_no_temp(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_write_options wo = WARD_FS_WRITE_OPTIONS_INIT;
	struct ward_fs_denial d;
	struct stat st;
	mode_t old = umask(022);

	put(P("%s/f", fx->ws), "old\n");
	assert_int_equal(chmod(P("%s/f", fx->ws), 0640), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(ward_fs_write(&d, fx->policy, "f", "new\n", 4, NULL),
			 0);
	assert_int_equal(stat(P("%s/f", fx->ws), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_string_equal(slurp(P("%s/f", fx->ws)), "new\n");
	/* A new file gets 0666 less the umask, like open(2). */
	assert_int_equal(ward_fs_write(&d, fx->policy, "g", "", 0, NULL), 0);
	assert_int_equal(stat(P("%s/g", fx->ws), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 0);
	/* Exclusive refuses to replace; parents are made on request. */
	wo.exclusive = true;
	assert_int_equal(ward_fs_write(&d, fx->policy, "g", "x", 1, &wo),
			 -EEXIST);
	assert_int_equal(ward_fs_write(&d, fx->policy, "a/b/c", "x", 1, NULL),
			 -ENOENT);
	wo.exclusive = false;
	wo.create_parents = true;
	assert_int_equal(ward_fs_write(&d, fx->policy, "a/b/c", "x", 1, &wo),
			 0);
	assert_string_equal(slurp(P("%s/a/b/c", fx->ws)), "x");
	/* Parents outside are not made. */
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, P("%s/p/q", fx->out), "x", 1, &wo),
	    WARD_EDENIED);
	assert_false(exists(P("%s/p", fx->out)));
	assert_int_equal(ward_fs_write(&d, fx->policy, "a", "x", 1, NULL),
			 -EISDIR);
	assert_int_equal(ward_fs_write(&d, fx->policy, "f/", "x", 1, NULL),
			 -ENOTDIR);
	assert_int_equal(count_entries(fx->ws), 3);
	assert_int_equal(count_tmp(fx->ws), 0);
	umask(old);
}

/* Child: a failure after the temporary file exists cleans it up. */
static int child_fsize(struct fx *fx)
{
	struct ward_fs_denial d;
	struct rlimit rl = {100, 100};
	char big[1001];
	int rc;

	/* NUL-terminated: big + 900 is the edit's replacement string. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
		return 2;
	rc = ward_fs_write(&d, fx->policy, "t", big, sizeof(big) - 1, NULL);
	if (rc != -EFBIG) {
		fprintf(stderr, "child: write gave %d (%s)\n", rc,
			ward_error_last());
		return 3;
	}
	rc = ward_fs_edit(NULL, &d, fx->policy, "t", "old", big + 900, NULL);
	if (rc != -EFBIG)
		return 4;
	if (count_tmp(fx->ws) != 0 || count_entries(fx->ws) != 1)
		return 5;
	if (strcmp(slurp(P("%s/t", fx->ws)), "old\n") != 0)
		return 6;
	return 0;
}

static void test_failure_leaves_no_temp(void **state)
{
	struct fx *fx = *state;
	int status;
	pid_t pid;

	put(P("%s/t", fx->ws), "old\n");
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_fsize(fx));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_tmp(fx->ws), 0);
}

/* Child: a real ENOSPC on a tiny tmpfs in a private mount namespace. */
static int child_enospc(struct fx *fx)
{
	const char *small = P("%s/small", fx->base);
	struct ward_fs_denial d;
	ward_policy *p = NULL;
	size_t len = 1 << 20;
	char *big = malloc(len);
	int rc;

	if (!big || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", small, "tmpfs", 0, "size=64k") != 0)
		return 77;
	memset(big, 'x', len);
	put(P("%s/t", small), "old\n");
	if (ward_policy_new(&p, WARD_MODE_WORKSPACE_WRITE, small) != 0)
		return 2;
	rc = ward_fs_write(&d, p, "t", big, len, NULL);
	if (rc != -ENOSPC) {
		fprintf(stderr, "child: write gave %d (%s)\n", rc,
			ward_error_last());
		return 3;
	}
	if (count_tmp(small) != 0 || count_entries(small) != 1)
		return 4;
	if (strcmp(slurp(P("%s/t", small)), "old\n") != 0)
		return 5;
	ward_policy_free(p);
	free(big);
	return 0;
}

static void test_enospc_leaves_no_temp(void **state)
{
	struct fx *fx = *state;
	int status;
	pid_t pid;

	assert_int_equal(mkdir(P("%s/small", fx->base), 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_enospc(fx));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("SKIP: cannot mount a small tmpfs in a private "
			      "mount namespace (needs CAP_SYS_ADMIN)\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* --- read --------------------------------------------------------------- */

static void test_read_options(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_read_options ro = WARD_FS_READ_OPTIONS_INIT;
	struct ward_fs_content c = {0};
	struct ward_fs_denial d;
	FILE *f;

	put(P("%s/lines", fx->ws), "l1\nl2\nl3\nl4\n");
	set_policy(fx, WARD_MODE_READ_ONLY, NULL);
	ro.offset = 1;
	ro.limit = 2;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro), 0);
	assert_string_equal(c.data, "l2\nl3\n");
	assert_int_equal(c.len, 6);
	assert_true(c.truncated);
	assert_int_equal(c.file_size, 12);
	ward_fs_content_clear(&c);
	ro.offset = 3;
	ro.limit = 5;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro), 0);
	assert_string_equal(c.data, "l4\n");
	assert_false(c.truncated);
	ward_fs_content_clear(&c);
	ro.offset = 9;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro), 0);
	assert_int_equal(c.len, 0);
	ward_fs_content_clear(&c);

	/* Bytes. */
	ro.binary = true;
	ro.offset = 3;
	ro.limit = 4;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro), 0);
	assert_int_equal(c.len, 4);
	assert_memory_equal(c.data, "l2\nl", 4);
	assert_true(c.truncated);
	ward_fs_content_clear(&c);

	/* Not text: a NUL byte, invalid UTF-8; valid multibyte is text. */
	f = fopen(P("%s/bin", fx->ws), "w");
	assert_non_null(f);
	fwrite("ab\0cd", 1, 5, f);
	fclose(f);
	put(P("%s/latin1", fx->ws), "caf\xe9\n");
	put(P("%s/utf8", fx->ws), "caf\xc3\xa9 \xf0\x9f\x99\x82\n");
	put(P("%s/surrogate", fx->ws), "\xed\xa0\x80\n");
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "bin", NULL),
			 WARD_ENOTTEXT);
	assert_non_null(strstr(ward_error_last(), "bin"));
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "latin1", NULL),
			 WARD_ENOTTEXT);
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "surrogate", NULL),
			 WARD_ENOTTEXT);
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "utf8", NULL), 0);
	ward_fs_content_clear(&c);
	ro = (struct ward_fs_read_options)WARD_FS_READ_OPTIONS_INIT;
	ro.binary = true;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "bin", &ro), 0);
	assert_int_equal(c.len, 5);
	assert_memory_equal(c.data, "ab\0cd", 5);
	ward_fs_content_clear(&c);

	/* Long runs take a vectorised path: a bad byte anywhere in a block,
	 * or at its edges, must still be found. */
	{
		static const struct {
			size_t at;
			const char *bytes;
			int want;
		} cases[] = {
		    {0, "\xc3\xa9", 0},
		    {63, "\xc3\xa9", 0},
		    {64, "\xe2\x82\xac", 0},
		    {130, "\xf0\x9f\x99\x82", 0},
		    {5, "\x01", 0},
		    {1, "", WARD_ENOTTEXT},
		    {63, "", WARD_ENOTTEXT},
		    {64, "", WARD_ENOTTEXT},
		    {127, "\xff", WARD_ENOTTEXT},
		    {190, "\x80", WARD_ENOTTEXT},
		    {100, "\xc3", WARD_ENOTTEXT},
		    {200, "\xe0\x80\x80", WARD_ENOTTEXT},
		};
		char text[256];

		for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
			size_t n = strlen(cases[i].bytes);

			memset(text, 'a', sizeof(text));
			if (n)
				memcpy(text + cases[i].at, cases[i].bytes, n);
			else
				text[cases[i].at] = '\0';
			f = fopen(P("%s/long", fx->ws), "w");
			assert_non_null(f);
			fwrite(text, 1, sizeof(text), f);
			fclose(f);
			if (ward_fs_read(&c, &d, fx->policy, "long", NULL) !=
			    cases[i].want)
				fail_msg("case %zu: byte(s) at %zu", i,
					 cases[i].at);
			ward_fs_content_clear(&c);
		}
	}

	/* Too large, unless a part is asked for. */
	ro = (struct ward_fs_read_options)WARD_FS_READ_OPTIONS_INIT;
	ro.max_bytes = 5;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro),
			 -EFBIG);
	assert_non_null(strstr(ward_error_last(), "lines"));
	ro.limit = 2;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro),
			 -EFBIG);
	ro.limit = 1;
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "lines", &ro), 0);
	ward_fs_content_clear(&c);

	/* Not found, a directory, a FIFO (never opened blocking). */
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "nope", NULL),
			 -ENOENT);
	assert_non_null(strstr(ward_error_last(), "nope"));
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, ".", NULL), -EISDIR);
	assert_int_equal(mkfifo(P("%s/fifo", fx->ws), 0600), 0);
	assert_int_equal(ward_fs_read(&c, &d, fx->policy, "fifo", NULL),
			 WARD_EINVAL);
	/* /proc files report size 0 and still read whole. */
	assert_int_equal(
	    ward_fs_read(&c, &d, fx->policy, "/proc/meminfo", NULL), 0);
	assert_non_null(strstr(c.data, "MemTotal:"));
	ward_fs_content_clear(&c);
}

/* --- edit, remove, mkdir ------------------------------------------------ */

static void test_edit_errors(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_edit_options eo = WARD_FS_EDIT_OPTIONS_INIT;
	struct ward_fs_denial d;
	size_t n = 0;

	put(P("%s/e", fx->ws), "a b a b a\n");
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(ward_fs_edit(&n, &d, fx->policy, "e", "zz", "y", NULL),
			 WARD_ENOMATCH);
	assert_int_equal(ward_fs_edit(&n, &d, fx->policy, "e", "a", "y", NULL),
			 WARD_ENOTUNIQUE);
	assert_non_null(strstr(ward_error_last(), "3 times"));
	assert_string_equal(slurp(P("%s/e", fx->ws)), "a b a b a\n");
	assert_int_equal(
	    ward_fs_edit(&n, &d, fx->policy, "e", "b a b", "X", NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(slurp(P("%s/e", fx->ws)), "a X a\n");
	eo.replace_all = true;
	assert_int_equal(ward_fs_edit(&n, &d, fx->policy, "e", "a", "yy", &eo),
			 0);
	assert_int_equal(n, 2);
	assert_string_equal(slurp(P("%s/e", fx->ws)), "yy X yy\n");
	assert_int_equal(ward_fs_edit(&n, &d, fx->policy, "e", "", "y", NULL),
			 WARD_EINVAL);
	assert_int_equal(ward_fs_edit(&n, &d, fx->policy, "e", "X", "X", NULL),
			 WARD_EINVAL);
	assert_int_equal(
	    ward_fs_edit(&n, &d, fx->policy, "nope", "X", "Y", NULL), -ENOENT);
	put(P("%s/latin1", fx->ws), "caf\xe9\n");
	assert_int_equal(
	    ward_fs_edit(&n, &d, fx->policy, "latin1", "caf", "x", NULL),
	    WARD_ENOTTEXT);
	eo.max_bytes = 4;
	assert_int_equal(ward_fs_edit(&n, &d, fx->policy, "e", "X", "Y", &eo),
			 -EFBIG);
	assert_int_equal(count_tmp(fx->ws), 0);
	/* The result is bounded too: replace_all may not make the file
	 * larger than max_bytes (nothing is built or written then). */
	{
		char big[1001];

		memset(big, 'a', 1000);
		big[1000] = '\0';
		put(P("%s/big", fx->ws), big);
	}
	eo.max_bytes = 4096;
	assert_int_equal(
	    ward_fs_edit(&n, &d, fx->policy, "big", "a", "aaaaa", &eo), -EFBIG);
	assert_non_null(strstr(ward_error_last(), "larger than 4096 bytes"));
	assert_int_equal(strlen(slurp(P("%s/big", fx->ws))), 1000);
	assert_int_equal(
	    ward_fs_edit(&n, &d, fx->policy, "big", "a", "aaaa", &eo), 0);
	assert_int_equal(n, 1000);
	assert_int_equal(strlen(slurp(P("%s/big", fx->ws))), 4000);
	assert_int_equal(count_tmp(fx->ws), 0);
}

static void test_remove(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_remove_options rr = {WARD_FS_OPTIONS_VERSION, true};
	struct ward_fs_denial d;

	assert_int_equal(mkdir(P("%s/t", fx->ws), 0755), 0);
	assert_int_equal(mkdir(P("%s/t/u", fx->ws), 0755), 0);
	put(P("%s/t/u/f", fx->ws), "f");
	put(P("%s/o", fx->out), "o");
	assert_int_equal(symlink(fx->out, P("%s/t/u/l", fx->ws)), 0);
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(ward_fs_remove(&d, fx->policy, "t", NULL), -EISDIR);
	assert_int_equal(ward_fs_remove(&d, fx->policy, "nope", NULL), -ENOENT);
	/* The workspace root itself is not beneath a writable root. */
	assert_int_equal(ward_fs_remove(&d, fx->policy, fx->ws, &rr),
			 WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_ROOT_ITSELF);
	/* A `--` entry deep inside stops the whole removal up front. */
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, P("-- %s/t/u/f", fx->ws));
	assert_int_equal(ward_fs_remove(&d, fx->policy, "t", &rr),
			 WARD_EDENIED);
	assert_int_equal(d.reason, WARD_FS_DENIED_RULE_NO_ACCESS);
	assert_true(exists(P("%s/t/u/f", fx->ws)));
	assert_true(is_link(P("%s/t/u/l", fx->ws)));
	/* A glob rule is matched against every entry. */
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, P("r- %s/**/*.keep", fx->ws));
	put(P("%s/t/u/x.keep", fx->ws), "k");
	assert_int_equal(ward_fs_remove(&d, fx->policy, "t", &rr),
			 WARD_EDENIED);
	assert_string_equal(d.resolved, P("%s/t/u/x.keep", fx->ws));
	assert_int_equal(unlink(P("%s/t/u/x.keep", fx->ws)), 0);
	/* Then it goes, without following the symlink inside. */
	assert_int_equal(ward_fs_remove(&d, fx->policy, "t", &rr), 0);
	assert_false(exists(P("%s/t", fx->ws)));
	assert_string_equal(slurp(P("%s/o", fx->out)), "o");
}

static void test_mkdir(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_mkdir_options mo = {WARD_FS_OPTIONS_VERSION, true};
	struct ward_fs_denial d;
	struct stat st;
	mode_t old = umask(022);

	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "a", NULL), 0);
	assert_int_equal(stat(P("%s/a", fx->ws), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "a", NULL), -EEXIST);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "a", &mo), 0);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "b/c/d", NULL), -ENOENT);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "b/c/d", &mo), 0);
	assert_true(is_dir(P("%s/b/c/d", fx->ws)));
	put(P("%s/file", fx->ws), "x");
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "file", NULL), -EEXIST);
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "file/x", &mo),
			 -ENOTDIR);
	/* A rule on a directory that -p would create. */
	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, P("r- %s/p/q", fx->ws));
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, "p/q/r", &mo),
			 WARD_EDENIED);
	assert_false(exists(P("%s/p", fx->ws)));
	umask(old);
}

/* --- list, stat ---------------------------------------------------------- */

static void test_list(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_list_options lo = WARD_FS_LIST_OPTIONS_INIT;
	struct ward_fs_listing l = {0};
	struct ward_fs_denial d;

	assert_int_equal(mkdir(P("%s/a", fx->ws), 0755), 0);
	assert_int_equal(mkdir(P("%s/a/b", fx->ws), 0755), 0);
	put(P("%s/a/b/deep", fx->ws), "deep");
	put(P("%s/z", fx->ws), "zz");
	assert_int_equal(mkdir(P("%s/sec", fx->ws), 0755), 0);
	put(P("%s/sec/inner", fx->ws), "secret");
	assert_int_equal(symlink(fx->out, P("%s/l", fx->ws)), 0);
	put(P("%s/o", fx->out), "o");
	set_policy(fx, WARD_MODE_READ_ONLY, P("-- %s/sec", fx->ws));

	assert_int_equal(ward_fs_list(&l, &d, fx->policy, ".", NULL), 0);
	assert_int_equal(l.count, 4);
	assert_string_equal(l.entries[0].path, "a");
	assert_int_equal(l.entries[0].type, WARD_FS_TYPE_DIR);
	assert_string_equal(l.entries[1].path, "l");
	assert_int_equal(l.entries[1].type, WARD_FS_TYPE_SYMLINK);
	assert_string_equal(l.entries[2].path, "sec");
	assert_true(l.entries[2].denied);
	assert_int_equal(l.entries[2].size, 0);
	assert_int_equal(l.entries[2].mtime_sec, 0);
	assert_string_equal(l.entries[3].path, "z");
	assert_int_equal(l.entries[3].size, 2);
	assert_false(l.entries[3].denied);
	assert_false(l.truncated);
	ward_fs_listing_clear(&l);

	/* Recursive: never into `--` entries, never through symlinks. */
	lo.recursive = true;
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, ".", &lo), 0);
	assert_int_equal(l.count, 6);
	assert_string_equal(l.entries[2].path, "a/b/deep");
	for (size_t i = 0; i < l.count; i++) {
		assert_null(strstr(l.entries[i].path, "inner"));
		assert_null(strstr(l.entries[i].path, "l/"));
	}
	ward_fs_listing_clear(&l);
	lo.max_depth = 2;
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, ".", &lo), 0);
	assert_int_equal(l.count, 5);
	ward_fs_listing_clear(&l);
	lo.max_entries = 3;
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, ".", &lo), 0);
	assert_int_equal(l.count, 3);
	assert_true(l.truncated);
	ward_fs_listing_clear(&l);

	/* The top may be a symlink; a `--` directory is not listed. */
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, "l", NULL), 0);
	assert_int_equal(l.count, 1);
	ward_fs_listing_clear(&l);
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, "sec", NULL),
			 WARD_EDENIED);
	assert_int_equal(d.op, WARD_FS_OP_LIST);
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, "z", NULL), -ENOTDIR);
	assert_non_null(strstr(ward_error_last(), "z"));
	assert_int_equal(ward_fs_list(&l, &d, fx->policy, "nope", NULL),
			 -ENOENT);
}

static void test_stat(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_stat_options so = WARD_FS_STAT_OPTIONS_INIT;
	struct ward_fs_stat st = {0};
	struct ward_fs_denial d;

	put(P("%s/f", fx->ws), "12345");
	assert_int_equal(chmod(P("%s/f", fx->ws), 0604), 0);
	assert_int_equal(symlink("f", P("%s/l", fx->ws)), 0);
	set_policy(fx, WARD_MODE_READ_ONLY, NULL);
	assert_int_equal(ward_fs_stat(&st, &d, fx->policy, "l", NULL), 0);
	assert_int_equal(st.type, WARD_FS_TYPE_SYMLINK);
	assert_string_equal(st.link_target, "f");
	assert_string_equal(st.resolved, P("%s/l", fx->ws));
	ward_fs_stat_clear(&st);
	so.follow = true;
	assert_int_equal(ward_fs_stat(&st, &d, fx->policy, "l", &so), 0);
	assert_int_equal(st.type, WARD_FS_TYPE_FILE);
	assert_int_equal(st.size, 5);
	assert_int_equal(st.mode, 0604);
	assert_int_equal(st.nlink, 1);
	assert_null(st.link_target);
	assert_string_equal(st.resolved, P("%s/f", fx->ws));
	ward_fs_stat_clear(&st);
	assert_int_equal(ward_fs_stat(&st, &d, fx->policy, "/", NULL), 0);
	assert_int_equal(st.type, WARD_FS_TYPE_DIR);
	ward_fs_stat_clear(&st);
	assert_int_equal(ward_fs_stat(&st, &d, fx->policy, "nope", NULL),
			 -ENOENT);
}

/* --- rendering ----------------------------------------------------------- */

static void test_render(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	char *text = NULL;

	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	assert_int_equal(
	    ward_fs_write(&d, fx->policy, P("%s/x", fx->out), "x", 1, NULL),
	    WARD_EDENIED);
	assert_non_null(strstr(ward_error_last(), "write"));
	assert_non_null(strstr(ward_error_last(), "workspace-write"));
	assert_int_equal(ward_fs_render_denial(&text, &d, false), 0);
	assert_string_equal(
	    text, "[sandbox: file access denied under workspace-write mode]");
	free(text);
	assert_int_equal(ward_fs_render_denial(&text, &d, true), 0);
	assert_string_equal(
	    text, "[sandbox: file access denied under workspace-write mode]\n"
		  "retry this exact operation once with sandbox_permissions "
		  "(the narrowest wider mode that suffices) + justification; "
		  "the approval prompt asks the user");
	free(text);
	/* A rule holds in every mode: no wider mode to offer. */
	set_policy(fx, WARD_MODE_READ_ONLY, P("r- %s", fx->ws));
	assert_int_equal(ward_fs_write(&d, fx->policy, "x", "x", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(ward_fs_render_denial(&text, &d, true), 0);
	assert_string_equal(
	    text, "[sandbox: file access denied under read-only mode]");
	free(text);
	assert_int_equal(ward_fs_render_denial(&text, NULL, true), WARD_EINVAL);
	assert_string_equal(ward_fs_op_name(WARD_FS_OP_EDIT), "edit");
	assert_string_equal(ward_fs_op_name((enum ward_fs_op)99), "unknown");
	assert_string_equal(ward_fs_type_name(WARD_FS_TYPE_DIR), "dir");
}

/*
 * A 4,220-byte path: the error kept its start and, above all, its
 * reason; it used to be cut at 1 KiB before the reason. The path is
 * shortened in its middle (ward_err, util_shorten_middle), on a UTF-8
 * boundary.
 */
static void test_long_path_error_keeps_reason(void **state)
{
	struct fx *fx = *state;
	struct ward_fs_denial d;
	char path[5000], name[201], msg[1100];
	size_t n = 0;
	const char *e;

	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	/* 200-byte names of two-byte characters ("é" = c3 a9). */
	for (size_t i = 0; i < 200; i += 2)
		memcpy(name + i, "\xc3\xa9", 2);
	name[200] = '\0';
	for (int i = 0; i < 21; i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%s%s",
				      i ? "/" : "", name);
	assert_true(n > 4200);
	assert_int_equal(ward_fs_write(&d, fx->policy, path, "x", 1, NULL),
			 -ENAMETOOLONG);
	e = ward_error_last();
	snprintf(msg, sizeof(msg), "%s", e);
	print_message("%s\n", e);
	assert_true(strlen(e) < 1024);
	assert_non_null(strstr(e, "\xe2\x80\xa6")); /* … */
	assert_int_equal(strncmp(e, name, 24), 0);
	assert_non_null(strstr(e, ": path too long"));
	assert_string_equal(e + strlen(e) - strlen(": path too long"),
			    ": path too long");
	/* Still UTF-8: no sequence cut in two. */
	for (size_t i = 0; e[i]; i++)
		if ((unsigned char)e[i] == 0xc3)
			assert_int_equal((unsigned char)e[i + 1], 0xa9);
		else if ((unsigned char)e[i] == 0xa9)
			assert_int_equal((unsigned char)e[i - 1], 0xc3);
}

static unsigned count_slashes(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '/';
	return n;
}

/*
 * ward fs mkdir -p and ward fs rm -r agree on depth: the fence makes no
 * directory deeper than it removes, and a tree made deeper by someone
 * else is refused by name and limit — not "Symbolic link loop".
 */
static void test_depth_agreement(void **state)
{
	struct ward_fs_mkdir_options mo = WARD_FS_MKDIR_OPTIONS_INIT;
	struct ward_fs_remove_options ro = WARD_FS_REMOVE_OPTIONS_INIT;
	struct fx *fx = *state;
	struct ward_fs_denial d;
	char path[PATH_MAX + 64];
	size_t n = 0;

	set_policy(fx, WARD_MODE_WORKSPACE_WRITE, NULL);
	mo.parents = true;
	ro.recursive = true;
	n = (size_t)snprintf(path, sizeof(path), "%s/deep", fx->ws);
	for (int i = 0; i < 300; i++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "/a");
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, path, &mo),
			 -ENAMETOOLONG);
	assert_non_null(strstr(ward_error_last(), "the fence makes at most"));
	assert_false(exists(P("%s/deep", fx->ws)));
	/* As deep as it goes, counted from /: made, and removed. */
	n = (size_t)snprintf(path, sizeof(path), "%s/deep", fx->ws);
	for (unsigned depth = count_slashes(path); depth < 256; depth++)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "/a");
	assert_int_equal(ward_fs_mkdir(&d, fx->policy, path, &mo), 0);
	assert_int_equal(
	    ward_fs_remove(&d, fx->policy, P("%s/deep", fx->ws), &ro), 0);
	assert_false(exists(P("%s/deep", fx->ws)));
	/* Deeper, made by someone else: refused by its limit. */
	n = (size_t)snprintf(path, sizeof(path), "%s/deep", fx->ws);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(chdir(path), 0);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(mkdir("a", 0755), 0);
		assert_int_equal(chdir("a"), 0);
	}
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(
	    ward_fs_remove(&d, fx->policy, P("%s/deep", fx->ws), &ro),
	    -ENAMETOOLONG);
	assert_non_null(
	    strstr(ward_error_last(), "more than 256 directories deep"));
	assert_null(strstr(ward_error_last(), "link"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	    T(test_long_path_error_keeps_reason),
	    T(test_depth_agreement),
	    T(test_matrix_read),
	    T(test_matrix_write),
	    T(test_matrix_edit),
	    T(test_matrix_remove),
	    T(test_matrix_move),
	    T(test_matrix_mkdir),
	    T(test_matrix_list),
	    T(test_matrix_stat),
	    T(test_matrix_fallback),
	    T(test_symlink_outside),
	    T(test_symlink_outside_fallback),
	    T(test_symlink_inside),
	    T(test_link_to_protected),
	    T(test_dotdot),
	    T(test_proc_self_root),
	    T(test_proc_private),
	    T(test_hardlink_outside),
	    T(test_move_in_and_out),
	    T(test_move_across_filesystems),
	    T(test_tmp_is_writable),
	    T(test_agrees_with_roots),
	    T(test_race_directory_swap),
	    T(test_race_final_component),
	    T(test_race_directory_swap_fallback),
	    T(test_race_final_component_fallback),
	    T(test_race_read_protected),
	    T(test_race_read_protected_fallback),
	    T(test_write_keeps_mode_no_temp),
	    T(test_failure_leaves_no_temp),
	    T(test_enospc_leaves_no_temp),
	    T(test_read_options),
	    T(test_edit_errors),
	    T(test_remove),
	    T(test_mkdir),
	    T(test_list),
	    T(test_stat),
	    T(test_render),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
