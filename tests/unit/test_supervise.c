/*
 * Unit tests for src/util/supervise.c: the pure path checks, and the
 * supervisor itself judging real calls in a forked child (no Landlock
 * needed: the child only sets no_new_privs and arms the filter).
 *
 * Children report through their exit status (the number of the first
 * check that failed), never through cmocka.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "landlock.h"
#include "supervise.h"

static void t_beneath(void **state)
{
	(void)state;
	assert_true(ward_sv_beneath("/a/b", "/a"));
	assert_true(ward_sv_beneath("/a/b/c", "/a"));
	assert_true(ward_sv_beneath("/a/b", "/a/"));
	assert_true(ward_sv_beneath("/x", "/"));
	assert_false(ward_sv_beneath("/a", "/a"));  /* the root itself */
	assert_false(ward_sv_beneath("/a/", "/a")); /* still the root */
	assert_false(ward_sv_beneath("/ab", "/a")); /* a sibling */
	assert_false(ward_sv_beneath("/", "/"));
	assert_false(ward_sv_beneath("a/b", "/a")); /* relative */
	assert_false(ward_sv_beneath("/a/b", "a"));
	assert_false(ward_sv_beneath(NULL, "/a"));
	assert_false(ward_sv_beneath("/a/b", NULL));
	assert_false(ward_sv_beneath("/tmp2/x", "/tmp"));
}

static void t_sockaddr(void **state)
{
	struct sockaddr_un un;
	struct sockaddr_in in4;
	char out[128];
	size_t base = offsetof(struct sockaddr_un, sun_path);

	(void)state;
	memset(&in4, 0, sizeof(in4));
	in4.sin_family = AF_INET;
	assert_int_equal(
	    ward_sv_sockaddr_path(&in4, sizeof(in4), out, sizeof(out)), 0);
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	/* unnamed (autobind) */
	assert_int_equal(ward_sv_sockaddr_path(&un, base, out, sizeof(out)), 0);
	/* abstract */
	memcpy(un.sun_path, "\0abs", 4);
	assert_int_equal(ward_sv_sockaddr_path(&un, base + 4, out, sizeof(out)),
			 0);
	/* a pathname, NUL-terminated */
	strcpy(un.sun_path, "/run/docker.sock");
	assert_int_equal(
	    ward_sv_sockaddr_path(&un, sizeof(un), out, sizeof(out)), 1);
	assert_string_equal(out, "/run/docker.sock");
	/* a pathname cut by the length, without a NUL (the kernel's way) */
	assert_int_equal(ward_sv_sockaddr_path(&un, base + 4, out, sizeof(out)),
			 1);
	assert_string_equal(out, "/run");
	/* all 108 bytes, no NUL */
	memset(un.sun_path, 'a', sizeof(un.sun_path));
	assert_int_equal(
	    ward_sv_sockaddr_path(&un, sizeof(un), out, sizeof(out)), 1);
	assert_int_equal(strlen(out), sizeof(un.sun_path));
	/* no room */
	assert_int_equal(ward_sv_sockaddr_path(&un, sizeof(un), out, 8),
			 -EINVAL);
	/* too short for a family */
	assert_int_equal(ward_sv_sockaddr_path(&un, 1, out, sizeof(out)), 0);
	assert_int_equal(ward_sv_sockaddr_path(NULL, 10, out, sizeof(out)), 0);
}

/* errno of @ret (-1: errno), 0 when it succeeded. */
static int err_of(int ret)
{
	return ret == 0 ? 0 : errno;
}

static int bind_socket(const char *path)
{
	struct sockaddr_un un;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
	    listen(fd, 4) != 0)
		return -1;
	return fd;
}

static int connect_err(const char *path)
{
	struct sockaddr_un un;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	ret = err_of(connect(fd, (struct sockaddr *)&un, sizeof(un)));
	close(fd);
	return ret;
}

/*
 * The child: a supervisor over @root (writable) with @allowed named, then
 * each call judged. Returns 0 or the number of the failed check.
 */
static int live_child(const char *root, const char *outside,
		      const char *old_sock, const char *allowed)
{
	const char *rw[] = {"/dev/null", root};
	const char *ok[] = {allowed};
	struct ward_sv sv = WARD_SV_INIT;
	char err[256], in[512], link[512], sock[512], tmp[512], gone[PATH_MAX];
	struct ward_sv_config cfg = {
	    .rw = rw, .nrw = 2, .unix_ok = ok, .nunix = 1, .report_fd = -1};
	int fd, s;

	snprintf(in, sizeof(in), "%s/in", root);
	snprintf(link, sizeof(link), "%s/link", root);
	snprintf(sock, sizeof(sock), "%s/new.sock", root);
	snprintf(tmp, sizeof(tmp), "%s/tmpfile", root);
	/* Missing, outside the roots, in the test's own directory. */
	snprintf(gone, sizeof(gone), "%s.absent/x", outside);

	/* As after ward_ll_enforce(): no capability the supervisor (which
	 * drops all) lacks, else it may not take the listener. */
	if (ward_ll_drop_caps(err, sizeof(err)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 101;
	if (ward_sv_spawn(&sv, &cfg, err, sizeof(err)) != 0)
		return 100;
	if (ward_sv_arm(&sv, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 102;
	}
	if (err_of(chmod(in, 0600)) != 0)
		return 1;
	if (err_of(chmod(outside, 0600)) != EACCES)
		return 2;
	if (err_of(chmod(link, 0600)) != EACCES) /* follows to outside */
		return 3;
	fd = open(outside, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || err_of(fchmod(fd, 0600)) != EACCES)
		return 4;
	close(fd);
	if (err_of(fchmodat(AT_FDCWD, root, 0700, 0)) != EACCES)
		return 5; /* the root itself: not beneath it */
	if (err_of(chmod("/dev/null", 0666)) != EACCES)
		return 6; /* a device, although a grant */
	if (err_of(chmod("/proc/self/cwd", 0700)) != EACCES)
		return 7; /* a magic link: refused, never misjudged */
	if (err_of(chmod(gone, 0600)) != ENOENT)
		return 8;
	/* An unlinked file reached by its descriptor: nobody else's. */
	fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || unlink(tmp) != 0 || err_of(fchmod(fd, 0644)) != 0)
		return 9;
	close(fd);
	if (connect_err(old_sock) != EACCES)
		return 10; /* not made by the call */
	s = bind_socket(sock);
	if (s < 0 || connect_err(sock) != 0)
		return 11; /* bound during the call */
	close(s);
	if (connect_err(allowed) != 0)
		return 12; /* named by --allow-unix */
	snprintf(gone, sizeof(gone), "%s.absent.sock", outside);
	if (connect_err(gone) != ENOENT)
		return 13;
	return 0;
}

static void t_live(void **state)
{
	char root[] = "/var/tmp/ward-sv-XXXXXX";
	char out[] = "/var/tmp/ward-sv-out-XXXXXX";
	char path[600], old[600], allowed[600];
	int status, fd, s1, s2;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_non_null(mkdtemp(out));
	snprintf(path, sizeof(path), "%s/in", root);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/victim", out);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(old, sizeof(old), "%s/link", root);
	assert_int_equal(symlink(path, old), 0);
	snprintf(old, sizeof(old), "%s/old.sock", root);
	s1 = bind_socket(old);
	assert_true(s1 >= 0);
	snprintf(allowed, sizeof(allowed), "%s/allowed.sock", out);
	s2 = bind_socket(allowed);
	assert_true(s2 >= 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(live_child(root, path, old, allowed));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(s1);
	close(s2);
	{
		char cmd[1400];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, out);
		assert_int_equal(system(cmd), 0);
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void t_net_dest(void **state)
{
	struct sockaddr_in a4 = {.sin_family = AF_INET};
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
	struct sockaddr_un un = {.sun_family = AF_UNIX};

	(void)state;
	a4.sin_port = htons(3128);
	inet_pton(AF_INET, "127.0.0.1", &a4.sin_addr);
	a6.sin6_port = htons(3128);
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &a6.sin6_addr);
#define D(net, a, tcp) ward_sv_net_dest((net), 3128, &(a), sizeof(a), (tcp))
	assert_int_equal(D(WARD_LL_NET_ON, a4, true), 0);
	assert_int_equal(D(WARD_LL_NET_LOCAL, a4, false), 0);
	assert_int_equal(D(WARD_LL_NET_OFF, a4, true), -ENETUNREACH);
	assert_int_equal(D(WARD_LL_NET_OFF, a6, true), -ENETUNREACH);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a4, true), 0);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a6, true), 0); /* mapped */
	assert_int_equal(D(WARD_LL_NET_CONNECT, a4, false), -ECONNREFUSED);
	assert_int_equal(D(WARD_LL_NET_CONNECT, un, true), 1); /* not inet */
	a4.sin_port = htons(3129);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a4, true), -ECONNREFUSED);
	a4.sin_port = htons(3128);
	inet_pton(AF_INET, "127.0.0.2", &a4.sin_addr);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a4, true), -ECONNREFUSED);
	inet_pton(AF_INET, "0.0.0.0", &a4.sin_addr);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a4, true), -ECONNREFUSED);
	inet_pton(AF_INET6, "::1", &a6.sin6_addr);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a6, true), -ECONNREFUSED);
	inet_pton(AF_INET6, "::", &a6.sin6_addr);
	assert_int_equal(D(WARD_LL_NET_CONNECT, a6, true), -ECONNREFUSED);
	/* too short for its family */
	assert_int_equal(
	    ward_sv_net_dest(WARD_LL_NET_CONNECT, 3128, &a4, 8, true),
	    -ECONNREFUSED);
#undef D
}

static void t_report_find(void **state)
{
	struct ward_sv_report a, b, out;
	unsigned char buf[128];
	long pid = 0;
	size_t n;

	(void)state;
	memset(&a, 0, sizeof(a));
	memcpy(a.magic, "WSVN", 4);
	a.count = 1;
	a.port = 80;
	b = a;
	b.count = 3;
	/* a record before the pid line, one after */
	memcpy(buf, &a, sizeof(a));
	n = sizeof(a);
	memcpy(buf + n, "4242\n", 5);
	n += 5;
	memcpy(buf + n, &b, sizeof(b));
	n += sizeof(b);
	assert_true(ward_sv_report_find(buf, n, &pid, &out));
	assert_int_equal(pid, 4242);
	assert_int_equal(out.count, 3);
	pid = 0;
	assert_false(ward_sv_report_find("17\n", 3, &pid, &out));
	assert_int_equal(pid, 17);
	assert_false(ward_sv_report_find("", 0, NULL, &out));
}

/* The keeper's last line, with records before, inside and after it. */
static void t_report_event(void **state)
{
	struct ward_sv_report a;
	unsigned char buf[256];
	char ev[64];
	size_t n;

	(void)state;
	memset(&a, 0, sizeof(a));
	memcpy(a.magic, "WSVN", 4);
	a.addr[0] = '\n'; /* a record's bytes are not lines */
	memcpy(buf, &a, sizeof(a));
	n = sizeof(a);
	memcpy(buf + n, "4242\n", 5);
	n += 5;
	memcpy(buf + n, &a, sizeof(a));
	n += sizeof(a);
	memcpy(buf + n, "supervisor-died 9\n", 18);
	n += 18;
	memcpy(buf + n, &a, sizeof(a));
	n += sizeof(a);
	assert_int_equal(ward_sv_report_event(buf, n, ev, sizeof(ev)), 18);
	assert_string_equal(ev, "supervisor-died 9\n");
	/* the pid line alone: nothing */
	assert_int_equal(ward_sv_report_event("17\n", 3, ev, sizeof(ev)), 0);
	assert_string_equal(ev, "");
	assert_int_equal(ward_sv_report_event("17\nexit 0\n", 10, ev, 4), 3);
	assert_string_equal(ev, "exi");
}

/*
 * The judging seam with a fake target (what a fuzzer drives): memory is
 * this process's own, descriptors are duplicated, the notification is
 * always still pending. ward_sv_judge() decides and performs.
 */
static ssize_t fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return (ssize_t)len;
}

static ssize_t fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx;
	memcpy((void *)(uintptr_t)addr, buf, len);
	return (ssize_t)len;
}

static int fake_getfd(void *ctx, int fd)
{
	int r = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	(void)ctx;
	return r < 0 ? -errno : r;
}

static int fake_dir(void *ctx, int which)
{
	int r = open(which == WARD_SV_DIR_ROOT ? "/" : ".", O_PATH | O_CLOEXEC);

	(void)ctx;
	return r < 0 ? -errno : r;
}

static int fake_valid(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct ward_sv_target_ops fake_ops = {
    .read = fake_read,
    .write = fake_write,
    .getfd = fake_getfd,
    .dir = fake_dir,
    .valid = fake_valid,
};

#if defined(__x86_64__)
#define TEST_ARCH 0xc000003eU
#elif defined(__aarch64__)
#define TEST_ARCH 0xc00000b7U
#endif

static void t_fake_target(void **state)
{
#ifdef TEST_ARCH
	char root[] = "/var/tmp/ward-sv-fake-XXXXXX";
	char out[] = "/var/tmp/ward-sv-fake-out-XXXXXX";
	char in[600], victim[600], cmd[1400];
	const char *rw[1];
	struct ward_sv_config cfg = {
	    .nrw = 1, .report_fd = -1, .net = WARD_LL_NET_OFF};
	struct ward_sv_target t = {&fake_ops, NULL};
	struct ward_sv_notif n;
	struct ward_sv_verdict v;
	struct ward_sv_report rep;
	struct ward_sv_state *s;
	struct sockaddr_in a4 = {.sin_family = AF_INET};
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_non_null(mkdtemp(out));
	snprintf(in, sizeof(in), "%s/in", root);
	snprintf(victim, sizeof(victim), "%s/victim", out);
	close(open(in, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	close(open(victim, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	rw[0] = root;
	cfg.rw = rw;
	s = mmap(NULL, ward_sv_state_size(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(s != MAP_FAILED);
	assert_int_equal(ward_sv_state_init(s, &cfg), 0);

	/* fchmodat(AT_FDCWD, path, 0600): performed inside, refused out. */
	memset(&n, 0, sizeof(n));
	n.arch = TEST_ARCH;
	n.nr = SYS_fchmodat;
	n.args[0] = (uint64_t)(int64_t)AT_FDCWD;
	n.args[1] = (uintptr_t)in;
	n.args[2] = 0600;
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.kind, WARD_SV_REPLY);
	assert_int_equal(v.error, 0);
	assert_int_equal(stat(in, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	n.args[1] = (uintptr_t)victim;
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.error, -EACCES);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	/* fchmod(fd): on the copy of the descriptor. */
	fd = open(in, O_RDONLY | O_CLOEXEC);
	n.nr = SYS_fchmod;
	n.args[0] = (uint64_t)fd;
	n.args[1] = 0640;
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.error, 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	close(fd);

	/* An unknown call, a wrong architecture: refused. */
	n.nr = SYS_getpid;
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.error, -EACCES);
	n.nr = SYS_fchmod;
	n.arch = 0x40000003U;
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.error, -EACCES);
	n.arch = TEST_ARCH;

	/* connect() with the network off: unreachable, and counted. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	a4.sin_port = htons(443);
	inet_pton(AF_INET, "192.0.2.9", &a4.sin_addr);
	n.nr = SYS_connect;
	n.args[0] = (uint64_t)fd;
	n.args[1] = (uintptr_t)&a4;
	n.args[2] = sizeof(a4);
	assert_false(ward_sv_state_report(s, &rep));
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.error, -ENETUNREACH);
	assert_true(ward_sv_state_report(s, &rep));
	assert_int_equal(rep.count, 1);
	assert_int_equal(rep.port, 443);
	assert_int_equal(rep.family, AF_INET);
	assert_memory_equal(rep.addr, &a4.sin_addr, 4);
	/* A bad address pointer length: EINVAL, nothing read. */
	n.args[2] = 4096;
	ward_sv_judge(s, &n, &t, &v);
	assert_int_equal(v.error, -EINVAL);
	close(fd);

	munmap(s, ward_sv_state_size());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", root, out);
	assert_int_equal(system(cmd), 0);
#else
	(void)state;
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_beneath),     cmocka_unit_test(t_sockaddr),
	    cmocka_unit_test(t_live),	     cmocka_unit_test(t_net_dest),
	    cmocka_unit_test(t_report_find),
	    cmocka_unit_test(t_report_event), cmocka_unit_test(t_fake_target),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
