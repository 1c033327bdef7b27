/*
 * Unit tests for src/util/landlock.c: ABI detection and downgrade, ruleset
 * preparation, capability dropping and enforcement.
 *
 * Everything that restricts runs in a forked child (a Landlock domain and a
 * dropped capability cannot be undone); children report through their exit
 * status, never through cmocka (whose state belongs to the parent).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdbool.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "landlock.h"

#define ALL_FS                                                                 \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |          \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |          \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |      \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |          \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |          \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |        \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER |              \
	 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define ALL_SCOPES (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT	     (1U << 0)
#define SECBIT_NOROOT_LOCKED (1U << 1)
#endif

/* In a child: on failure say where and why, and exit non-zero. */
#define CHILD_CHECK(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "child: %s:%d: %s (errno %d: %s)\n",   \
				__FILE__, __LINE__, #cond, errno,              \
				strerror(errno));                              \
			return 1;                                              \
		}                                                              \
	} while (0)

/* The test's scratch directory, with "rw" (granted) and "out" (not). */
struct scratch {
	char root[64];
	char rw[80];
	char out[80];
};

/* --- helpers -------------------------------------------------------------- */

/* Skip unless the kernel has Landlock; returns the ABI. */
static int need_landlock(void)
{
	int abi = ward_ll_abi();

	if (abi < 0) {
		print_message(
		    "SKIP: Landlock unavailable on this kernel (%s)\n",
		    strerror(-abi));
		skip();
	}
	return abi;
}

/* Skip unless root with CAP_SYS_ADMIN-class privileges (CapEff non-zero). */
static void need_root(void)
{
	struct {
		uint32_t version;
		int pid;
	} hdr = {0x20080522, 0};
	uint32_t data[6] = {0};

	if (geteuid() != 0 || syscall(SYS_capget, &hdr, data) != 0 ||
	    (data[0] == 0 && data[3] == 0)) {
		print_message("SKIP: needs root with capabilities\n");
		skip();
	}
}

static void scratch_make(struct scratch *s)
{
	snprintf(s->root, sizeof(s->root), "/tmp/ward-ll-test.XXXXXX");
	assert_non_null(mkdtemp(s->root));
	snprintf(s->rw, sizeof(s->rw), "%s/rw", s->root);
	snprintf(s->out, sizeof(s->out), "%s/out", s->root);
	assert_int_equal(mkdir(s->rw, 0755), 0);
	assert_int_equal(mkdir(s->out, 0755), 0);
}

static int rm_entry(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void scratch_remove(struct scratch *s)
{
	nftw(s->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool exists(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Run @fn(@arg) in a child; its exit status (128+sig when killed). */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Create @dir/@name exclusively; 0 or -errno. */
static int create_in(const char *dir, const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Prepare "--ro / --rw @rw" (plus /dev/null, like the read-only profile). */
static void prepare_profile(struct ward_ll_ruleset *rs, const char *rw)
{
	const char *ro[] = {"/"};
	const char *rwv[] = {"/dev/null", rw};
	char err[256] = "";
	int ret;

	ret = ward_ll_prepare(rs, ro, 1, rwv, rw ? 2 : 1, err, sizeof(err));
	if (ret)
		fail_msg("ward_ll_prepare: %d: %s", ret, err);
}

/* In a child: enforce @rs or explain why not. */
static int child_enforce(const struct ward_ll_ruleset *rs)
{
	char err[256] = "";

	if (ward_ll_enforce(rs, err, sizeof(err)) != 0) {
		fprintf(stderr, "child: ward_ll_enforce: %s\n", err);
		return 1;
	}
	return 0;
}

/* --- ABI ------------------------------------------------------------------ */

static void test_abi_matches_kernel(void **state)
{
	long raw;
	int abi;

	(void)state;
	abi = need_landlock();
	raw = syscall(444, NULL, 0, 1U);
	assert_int_equal(abi, raw);
	assert_true(abi >= 1);
}

static void test_access_for_abi_downgrade(void **state)
{
	const uint64_t abi1 =
	    ALL_FS & ~(LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE |
		       LANDLOCK_ACCESS_FS_IOCTL_DEV);
	const struct {
		int abi;
		uint64_t fs;
		uint64_t scoped;
	} want[] = {
	    {-1, 0, 0},
	    {0, 0, 0},
	    {1, abi1, 0},
	    {2, abi1 | LANDLOCK_ACCESS_FS_REFER, 0},
	    {3, ALL_FS & ~LANDLOCK_ACCESS_FS_IOCTL_DEV, 0},
	    {4, ALL_FS & ~LANDLOCK_ACCESS_FS_IOCTL_DEV, 0},
	    {5, ALL_FS, 0},
	    {6, ALL_FS, ALL_SCOPES},
	    {7, ALL_FS, ALL_SCOPES},
	    {8, ALL_FS, ALL_SCOPES},
	    {100, ALL_FS, ALL_SCOPES},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t fs = 0xdead, scoped = 0xbeef;

		ward_ll_access_for_abi(want[i].abi, &fs, &scoped);
		if (fs != want[i].fs || scoped != want[i].scoped)
			fail_msg("ABI %d: fs %#llx scoped %#llx, want %#llx "
				 "%#llx",
				 want[i].abi, (unsigned long long)fs,
				 (unsigned long long)scoped,
				 (unsigned long long)want[i].fs,
				 (unsigned long long)want[i].scoped);
	}
}

/* --- prepare -------------------------------------------------------------- */

static void test_prepare_reports_this_kernel(void **state)
{
	struct ward_ll_ruleset rs;
	uint64_t fs, scoped;
	int abi, flags;

	(void)state;
	abi = need_landlock();
	prepare_profile(&rs, "/tmp");
	ward_ll_access_for_abi(abi, &fs, &scoped);

	assert_true(rs.fd >= 0);
	flags = fcntl(rs.fd, F_GETFD);
	assert_true(flags >= 0 && (flags & FD_CLOEXEC));
	assert_int_equal(rs.abi, abi);
	assert_int_equal(rs.handled_fs, fs);
	assert_int_equal(rs.scoped, scoped);
	assert_int_equal(rs.handled_fs | rs.dropped_fs, ALL_FS);
	assert_int_equal(rs.handled_fs & rs.dropped_fs, 0);
	assert_int_equal(rs.scoped | rs.dropped_scoped, ALL_SCOPES);
	/* ABI 6 is the first that knows everything ward wants. */
	assert_int_equal(rs.partial, abi < 6);

	ward_ll_close(&rs);
	assert_int_equal(rs.fd, -1);
	ward_ll_close(&rs); /* idempotent */
	ward_ll_close(NULL);
}

static void test_prepare_missing_path_names_it(void **state)
{
	struct ward_ll_ruleset rs = {.fd = 4242};
	struct scratch s;
	char missing[128];
	char err[256];
	const char *good[] = {"/"};
	const char *bad[1];
	int before, ret;

	(void)state;
	need_landlock();
	scratch_make(&s);
	snprintf(missing, sizeof(missing), "%s/does-not-exist", s.root);
	bad[0] = missing;
	before = count_fds();

	ret = ward_ll_prepare(&rs, bad, 1, NULL, 0, err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	assert_non_null(strstr(err, missing));
	assert_int_equal(rs.fd, 4242); /* *out untouched on failure */
	assert_int_equal(count_fds(), before);

	/* A bad writable path after a good read-only one: still no leak. */
	err[0] = '\0';
	ret = ward_ll_prepare(&rs, good, 1, bad, 1, err, sizeof(err));
	assert_int_equal(ret, -ENOENT);
	assert_non_null(strstr(err, missing));
	assert_int_equal(rs.fd, 4242);
	assert_int_equal(count_fds(), before);

	/* The same path as an optional grant ("?PATH") is skipped. */
	{
		char opt[130];
		const char *optv[1] = {opt};

		snprintf(opt, sizeof(opt), "%c%s", WARD_LL_OPTIONAL, missing);
		ret = ward_ll_prepare(&rs, good, 1, optv, 1, err, sizeof(err));
		assert_int_equal(ret, 0);
		assert_true(rs.fd >= 0);
		ward_ll_close(&rs);
		/* ...but an optional grant that exists is still checked. */
		snprintf(opt, sizeof(opt), "%c%s/does-not-exist/x",
			 WARD_LL_OPTIONAL, s.root);
		rs.fd = 4242;
		ret = ward_ll_prepare(&rs, optv, 1, NULL, 0, err, sizeof(err));
		assert_int_equal(ret, 0);
		ward_ll_close(&rs);
		assert_int_equal(count_fds(), before);
	}

	scratch_remove(&s);
}

static void test_prepare_non_directory_grants(void **state)
{
	struct ward_ll_ruleset rs;
	const char *ro[] = {"/etc/passwd"};
	const char *rw[] = {"/dev/null"};
	char err[256] = "";
	int ret;

	(void)state;
	need_landlock();
	/* Directory-only bits on a file would make the kernel say EINVAL. */
	ret = ward_ll_prepare(&rs, ro, 1, rw, 1, err, sizeof(err));
	if (ret)
		fail_msg("ward_ll_prepare: %d: %s", ret, err);
	ward_ll_close(&rs);
}

/* --- enforce -------------------------------------------------------------- */

struct enforce_args {
	const struct ward_ll_ruleset *rs;
	const struct scratch *s;
};

static int child_ro_rw(void *arg)
{
	const struct enforce_args *a = arg;
	int fd;

	/* Unconfined first: both directories are writable. */
	CHILD_CHECK(create_in(a->s->out, "before") == 0);
	if (child_enforce(a->rs))
		return 1;
	CHILD_CHECK(create_in(a->s->rw, "allowed") == 0);
	CHILD_CHECK(create_in(a->s->out, "denied") == -EACCES);
	/* Reading and executing stay granted; /dev/null stays writable. */
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	close(fd);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	close(fd);
	return 0;
}

static void test_enforce_ro_root_rw_dir(void **state)
{
	struct ward_ll_ruleset rs;
	struct enforce_args a;
	struct scratch s;

	(void)state;
	need_landlock();
	scratch_make(&s);
	prepare_profile(&rs, s.rw);
	a.rs = &rs;
	a.s = &s;

	assert_int_equal(in_child(child_ro_rw, &a), 0);
	assert_true(exists(s.rw, "allowed"));
	assert_false(exists(s.out, "denied"));

	ward_ll_close(&rs);
	scratch_remove(&s);
}

/*
 * After ward_ll_enforce, clone3 fails with ENOSYS (so no CLONE_INTO_CGROUP
 * can move a child out of the call's cgroup), in both forms of the filter,
 * and fork() (the C library's fallback) still works.
 */
static int child_clone3(void *arg)
{
	const struct ward_ll_ruleset *rs = arg;
	uint64_t ca[11];
	pid_t pid;
	int st;

	if (child_enforce(rs) != 0)
		return 1;
	memset(ca, 0, sizeof(ca));
	ca[4] = SIGCHLD; /* exit_signal */
	errno = 0;
	pid = (pid_t)syscall(435, ca, sizeof(ca));
	if (pid == 0)
		_exit(0);
	CHILD_CHECK(pid == -1 && errno == ENOSYS);
	pid = fork();
	if (pid == 0)
		_exit(7);
	CHILD_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid &&
		    WIFEXITED(st) && WEXITSTATUS(st) == 7);
	return 0;
}

static void test_clone3_refused(void **state)
{
	struct ward_ll_ruleset rs;
	struct scratch s;

	(void)state;
	need_landlock();
	scratch_make(&s);
	for (int rw = 0; rw < 2; rw++) {
		prepare_profile(&rs, rw ? s.rw : NULL);
		assert_int_equal(in_child(child_clone3, &rs), 0);
		ward_ll_close(&rs);
	}
	scratch_remove(&s);
}

/*
 * With the network off, the metadata and network filters are one seccomp
 * program (one filter to run per system call), and both parts still
 * answer: a raw or packet socket refused as before, a set-id chmod in the
 * writable root refused, a plain one allowed, clone3 refused.
 */
static int child_one_filter(void *arg)
{
	const struct enforce_args *a = arg;
	char path[256], line[256];
	uint64_t ca[11] = {0};
	int filters = -1, fd;
	FILE *f;

	if (child_enforce(a->rs) != 0)
		return 1;
	f = fopen("/proc/self/status", "re");
	CHILD_CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp_filters: %d", &filters) == 1)
			break;
	fclose(f);
	CHILD_CHECK(filters == 1);
	errno = 0;
	CHILD_CHECK(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) < 0 &&
		    errno == EPROTONOSUPPORT);
	errno = 0;
	CHILD_CHECK(socket(17 /* AF_PACKET */, SOCK_RAW, 0) < 0 &&
		    errno == EAFNOSUPPORT);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(fd >= 0);
	close(fd);
	CHILD_CHECK(create_in(a->s->rw, "f") == 0);
	snprintf(path, sizeof(path), "%s/f", a->s->rw);
	CHILD_CHECK(chmod(path, 0600) == 0);
	errno = 0;
	CHILD_CHECK(chmod(path, 04755) != 0 && errno == EACCES);
	ca[4] = SIGCHLD;
	errno = 0;
	CHILD_CHECK(syscall(435, ca, sizeof(ca)) == -1 && errno == ENOSYS);
	return 0;
}

static void test_one_filter_net_off(void **state)
{
	const char *ro[] = {"/"};
	struct ward_ll_ruleset rs;
	struct enforce_args a;
	struct scratch s;
	char err[256] = "";
	const char *rwv[1];

	(void)state;
	need_landlock();
	scratch_make(&s);
	rwv[0] = s.rw;
	if (ward_ll_prepare_net(&rs, ro, 1, rwv, 1, WARD_LL_NET_OFF, 0, err,
				sizeof(err)) != 0)
		fail_msg("ward_ll_prepare_net: %s", err);
	a.rs = &rs;
	a.s = &s;
	assert_int_equal(in_child(child_one_filter, &a), 0);
	ward_ll_close(&rs);
	scratch_remove(&s);
}

static int child_mknod(void *arg)
{
	const struct enforce_args *a = arg;
	char path[256];

	/*
	 * Restrict without ward_ll_enforce(), which would also drop
	 * CAP_MKNOD: the refusal below must come from the ruleset alone.
	 */
	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHILD_CHECK(syscall(446, a->rs->fd, 0U) == 0);
	snprintf(path, sizeof(path), "%s/null", a->s->rw);
	errno = 0;
	CHILD_CHECK(mknod(path, S_IFCHR | 0666, makedev(1, 3)) == -1 &&
		    errno == EACCES);
	snprintf(path, sizeof(path), "%s/blk", a->s->rw);
	errno = 0;
	CHILD_CHECK(mknod(path, S_IFBLK | 0600, makedev(7, 0)) == -1 &&
		    errno == EACCES);
	/* The same directory accepts a FIFO: the grant itself works. */
	snprintf(path, sizeof(path), "%s/fifo", a->s->rw);
	CHILD_CHECK(mkfifo(path, 0600) == 0);
	return 0;
}

static void test_no_device_nodes_under_rw(void **state)
{
	struct ward_ll_ruleset rs;
	struct enforce_args a;
	struct scratch s;
	char path[256];

	(void)state;
	need_landlock();
	need_root();
	scratch_make(&s);
	/* Unconfined root can make the node; otherwise the test is void. */
	snprintf(path, sizeof(path), "%s/probe-null", s.out);
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		scratch_remove(&s);
		print_message("SKIP: mknod needs CAP_MKNOD here (%s)\n",
			      strerror(errno));
		skip();
	}
	prepare_profile(&rs, s.rw);
	a.rs = &rs;
	a.s = &s;

	assert_int_equal(in_child(child_mknod, &a), 0);
	assert_false(exists(s.rw, "null"));
	assert_false(exists(s.rw, "blk"));
	assert_true(exists(s.rw, "fifo"));

	ward_ll_close(&rs);
	scratch_remove(&s);
}

static int child_refer(void *arg)
{
	const struct enforce_args *a = arg;
	char from[256], to[256], sub[256];

	if (child_enforce(a->rs))
		return 1;
	snprintf(from, sizeof(from), "%s/f", a->s->rw);
	CHILD_CHECK(create_in(a->s->rw, "f") == 0);

	/* Out of the writable root: refused (EXDEV or EACCES). */
	snprintf(to, sizeof(to), "%s/f", a->s->out);
	errno = 0;
	CHILD_CHECK(rename(from, to) == -1 &&
		    (errno == EXDEV || errno == EACCES));
	/* A hard link from outside into the root: refused. */
	snprintf(from, sizeof(from), "%s/outside", a->s->out);
	snprintf(to, sizeof(to), "%s/link", a->s->rw);
	errno = 0;
	CHILD_CHECK(link(from, to) == -1 &&
		    (errno == EXDEV || errno == EACCES));
	/* Within the root, across directories: REFER is granted there. */
	snprintf(sub, sizeof(sub), "%s/sub", a->s->rw);
	CHILD_CHECK(mkdir(sub, 0755) == 0);
	snprintf(from, sizeof(from), "%s/f", a->s->rw);
	snprintf(to, sizeof(to), "%s/sub/f", a->s->rw);
	CHILD_CHECK(rename(from, to) == 0);
	return 0;
}

static void test_refer_stays_inside_rw(void **state)
{
	struct ward_ll_ruleset rs;
	struct enforce_args a;
	struct scratch s;
	int abi;

	(void)state;
	abi = need_landlock();
	if (abi < 2) {
		print_message("SKIP: ABI %d has no REFER right\n", abi);
		skip();
	}
	scratch_make(&s);
	assert_int_equal(create_in(s.out, "outside"), 0);
	prepare_profile(&rs, s.rw);
	a.rs = &rs;
	a.s = &s;

	assert_int_equal(in_child(child_refer, &a), 0);
	assert_false(exists(s.out, "f"));
	assert_false(exists(s.rw, "link"));
	assert_true(exists(s.rw, "sub/f"));

	ward_ll_close(&rs);
	scratch_remove(&s);
}

/* Every Cap* line of /proc/self/status is zero (else name the first
 * non-zero one when @say); 0 or 1. */
static int caps_all_zero(bool say)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int seen = 0;
	int bad = 0;

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char name[16];

		if (sscanf(line, "Cap%15[A-Za-z]:\t%llx", name, &v) != 2)
			continue;
		seen++;
		if (v && say && !bad)
			fprintf(stderr, "child: Cap%s is %llx\n", name, v);
		if (v)
			bad = 1;
	}
	fclose(f);
	return seen == 5 && !bad ? 0 : 1;
}

static int child_drop_caps(void *arg)
{
	char err[256] = "";
	int bits;

	(void)arg;
	CHILD_CHECK(caps_all_zero(false) != 0); /* root: something to drop */
	if (ward_ll_drop_caps(err, sizeof(err)) != 0) {
		fprintf(stderr, "child: ward_ll_drop_caps: %s\n", err);
		return 1;
	}
	CHILD_CHECK(caps_all_zero(true) == 0);
	bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
	CHILD_CHECK(bits >= 0 && (bits & SECBIT_NOROOT) &&
		    (bits & SECBIT_NOROOT_LOCKED));
	/* Dropping again (nothing left, no CAP_SETPCAP) still succeeds. */
	CHILD_CHECK(ward_ll_drop_caps(err, sizeof(err)) == 0);
	return 0;
}

static void test_drop_caps_as_root(void **state)
{
	(void)state;
	need_root();
	assert_int_equal(in_child(child_drop_caps, NULL), 0);
}

static int child_unprivileged_enforce(void *arg)
{
	const struct enforce_args *a = arg;

	/* An unprivileged caller: no CAP_SETPCAP, so no bounding-set drop;
	 * that must not be an error. */
	CHILD_CHECK(setresgid(65534, 65534, 65534) == 0);
	CHILD_CHECK(setresuid(65534, 65534, 65534) == 0);
	CHILD_CHECK(create_in(a->s->out, "before") == 0); /* DAC allows it */
	if (child_enforce(a->rs))
		return 1;
	CHILD_CHECK(create_in(a->s->out, "denied") == -EACCES);
	return 0;
}

static void test_enforce_unprivileged(void **state)
{
	struct ward_ll_ruleset rs;
	struct enforce_args a;
	struct scratch s;

	(void)state;
	need_landlock();
	need_root(); /* to become nobody */
	scratch_make(&s);
	assert_int_equal(chmod(s.out, 0777), 0);
	assert_int_equal(chmod(s.root, 0755), 0);
	prepare_profile(&rs, s.rw);
	a.rs = &rs;
	a.s = &s;

	assert_int_equal(in_child(child_unprivileged_enforce, &a), 0);
	assert_false(exists(s.out, "denied"));

	ward_ll_close(&rs);
	scratch_remove(&s);
}

static int child_signal_scope(void *arg)
{
	const struct ward_ll_ruleset *rs = arg;
	pid_t parent = getppid();

	CHILD_CHECK(kill(parent, 0) == 0);
	if (child_enforce(rs))
		return 1;
	errno = 0;
	CHILD_CHECK(kill(parent, 0) == -1 && errno == EPERM);
	errno = 0;
	CHILD_CHECK(kill(parent, SIGCONT) == -1 && errno == EPERM);
	CHILD_CHECK(kill(getpid(), 0) == 0); /* own domain: allowed */
	return 0;
}

static void test_signal_scope(void **state)
{
	struct ward_ll_ruleset rs;
	int abi;

	(void)state;
	abi = need_landlock();
	if (abi < 6) {
		print_message("SKIP: signal scoping needs ABI 6 (have %d)\n",
			      abi);
		skip();
	}
	prepare_profile(&rs, NULL);
	assert_true(rs.scoped & LANDLOCK_SCOPE_SIGNAL);
	assert_int_equal(in_child(child_signal_scope, &rs), 0);
	ward_ll_close(&rs);
}

struct socket_args {
	const struct ward_ll_ruleset *rs;
	struct sockaddr_un addr;
	socklen_t len;
};

static int child_abstract_socket(void *arg)
{
	const struct socket_args *a = arg;
	int fd;

	/* Unconfined, the caller's abstract socket is reachable... */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(connect(fd, (const struct sockaddr *)&a->addr, a->len) ==
		    0);
	close(fd);
	if (child_enforce(a->rs))
		return 1;
	/* ...confined, it is not. */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHILD_CHECK(fd >= 0);
	errno = 0;
	CHILD_CHECK(connect(fd, (const struct sockaddr *)&a->addr, a->len) ==
			-1 &&
		    errno == EPERM);
	close(fd);
	return 0;
}

static void test_abstract_socket_scope(void **state)
{
	struct ward_ll_ruleset rs;
	struct socket_args a;
	int abi, lfd;

	(void)state;
	abi = need_landlock();
	if (abi < 6) {
		print_message("SKIP: socket scoping needs ABI 6 (have %d)\n",
			      abi);
		skip();
	}
	memset(&a, 0, sizeof(a));
	a.addr.sun_family = AF_UNIX;
	/* Abstract: a leading NUL byte, then the name. */
	snprintf(a.addr.sun_path + 1, sizeof(a.addr.sun_path) - 1,
		 "ward-ll-test-%d", (int)getpid());
	a.len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			    strlen(a.addr.sun_path + 1));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a.addr, a.len), 0);
	assert_int_equal(listen(lfd, 4), 0);
	prepare_profile(&rs, NULL);
	a.rs = &rs;

	assert_int_equal(in_child(child_abstract_socket, &a), 0);

	ward_ll_close(&rs);
	close(lfd);
}

static void test_enforce_without_ruleset(void **state)
{
	struct ward_ll_ruleset rs = {.fd = -1};
	char err[128] = "";

	(void)state;
	/* Refused before anything is dropped or restricted. */
	assert_int_equal(ward_ll_enforce(&rs, err, sizeof(err)), -EBADF);
	assert_true(err[0] != '\0');
	assert_int_equal(ward_ll_enforce(NULL, err, sizeof(err)), -EBADF);
}

/* --- partial message ------------------------------------------------------ */

/* The ruleset ward_ll_prepare() would report on a kernel of @abi. */
static struct ward_ll_ruleset ruleset_for_abi(int abi)
{
	struct ward_ll_ruleset rs = {.fd = -1, .abi = abi};

	ward_ll_access_for_abi(abi, &rs.handled_fs, &rs.scoped);
	rs.dropped_fs = ALL_FS & ~rs.handled_fs;
	rs.dropped_scoped = ALL_SCOPES & ~rs.scoped;
	rs.partial = rs.dropped_fs || rs.dropped_scoped;
	return rs;
}

static void test_partial_message(void **state)
{
	struct ward_ll_ruleset rs;
	char buf[512];
	char tiny[16];

	(void)state;
	rs = ruleset_for_abi(3);
	ward_ll_partial_message(&rs, buf, sizeof(buf));
	assert_string_equal(buf, "partial enforcement (kernel ABI 3 of 7): "
				 "cannot govern ioctl on devices, signal "
				 "scoping, abstract unix socket scoping");

	rs = ruleset_for_abi(5);
	ward_ll_partial_message(&rs, buf, sizeof(buf));
	assert_string_equal(buf, "partial enforcement (kernel ABI 5 of 7): "
				 "cannot govern signal scoping, abstract unix "
				 "socket scoping");

	rs = ruleset_for_abi(1);
	ward_ll_partial_message(&rs, buf, sizeof(buf));
	assert_string_equal(buf,
			    "partial enforcement (kernel ABI 1 of 7): cannot "
			    "govern truncate, ioctl on devices, signal "
			    "scoping, abstract unix socket scoping; renaming "
			    "or linking across directories is always denied");

	/* Nothing to say when everything is enforced. */
	rs = ruleset_for_abi(7);
	assert_false(rs.partial);
	strcpy(buf, "stale");
	ward_ll_partial_message(&rs, buf, sizeof(buf));
	assert_string_equal(buf, "");

	/* Truncated, but always terminated. */
	rs = ruleset_for_abi(3);
	memset(tiny, 'x', sizeof(tiny));
	ward_ll_partial_message(&rs, tiny, sizeof(tiny));
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
	assert_memory_equal(tiny, "partial enforce", sizeof(tiny) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_abi_matches_kernel),
	    cmocka_unit_test(test_access_for_abi_downgrade),
	    cmocka_unit_test(test_prepare_reports_this_kernel),
	    cmocka_unit_test(test_prepare_missing_path_names_it),
	    cmocka_unit_test(test_prepare_non_directory_grants),
	    cmocka_unit_test(test_enforce_ro_root_rw_dir),
	    cmocka_unit_test(test_clone3_refused),
	    cmocka_unit_test(test_no_device_nodes_under_rw),
	    cmocka_unit_test(test_refer_stays_inside_rw),
	    cmocka_unit_test(test_drop_caps_as_root),
	    cmocka_unit_test(test_enforce_unprivileged),
	    cmocka_unit_test(test_signal_scope),
	    cmocka_unit_test(test_abstract_socket_scope),
	    cmocka_unit_test(test_enforce_without_ruleset),
	    cmocka_unit_test(test_partial_message),
	    cmocka_unit_test(test_one_filter_net_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
