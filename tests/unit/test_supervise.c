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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
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
	/* What the judge reads of the fake's memory: it reads a string up
	 * to its page's end, as from a process, so each is alone in a page
	 * (nothing beyond it is read). */
	static char mem[3][4096] __attribute__((aligned(4096)));
	char *in = mem[0], *victim = mem[1], *cmd = mem[2];
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
	snprintf(in, sizeof(mem[0]), "%s/in", root);
	snprintf(victim, sizeof(mem[1]), "%s/victim", out);
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
	snprintf(cmd, sizeof(mem[2]), "rm -rf '%s' '%s'", root, out);
	assert_int_equal(system(cmd), 0);
#else
	(void)state;
	skip();
#endif
}

/* --- socket calls performed by the supervisor ------------------------------ */

/* A thread in a judged call: its blocking connect or send, and its result. */
struct sk_call {
	int fd;
	const void *addr; /* connect: the address, NULL: send */
	socklen_t addrlen;
	size_t len; /* send: bytes */
	pid_t tid;
	int ret, err;
	atomic_int done;
	atomic_int started;
};

static void *sk_run(void *arg)
{
	struct sk_call *c = arg;
	static char buf[4096];

	c->tid = (pid_t)syscall(SYS_gettid);
	atomic_store(&c->started, 1);
	if (c->addr)
		c->ret = connect(c->fd, c->addr, c->addrlen);
	else {
		struct iovec iov = {buf, c->len};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

		c->ret = (int)sendmsg(c->fd, &mh, 0); /* judged, always */
	}
	c->err = c->ret < 0 ? errno : 0;
	atomic_store(&c->done, 1);
	return NULL;
}

/* Wait (bounded: 10 s) until thread @tid sits in system call @nr. */
static bool sk_in_call(pid_t tid, long nr)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (int i = 0; i < 2000; i++) {
		FILE *f = fopen(path, "re");
		long got = -2;

		if (f) {
			if (fgets(buf, sizeof(buf), f))
				got = strtol(buf, NULL, 10);
			fclose(f);
		}
		if (got == nr)
			return true;
		usleep(5000);
	}
	return false;
}

/*
 * The child: network on, every socket call performed by the supervisor.
 * @listener (@port): a listener whose accept queue the parent has filled
 * with one connection (a connect to it stalls); @free_port: one with
 * room. Returns 0 or the failed
 * check's number.
 */
static int sockets_child(const char *root, int listener, int port,
			 int free_port)
{
	const char *rw[] = {root};
	struct ward_sv_config cfg = {.rw = rw, .nrw = 1, .report_fd = -1};
	struct ward_sv sv = WARD_SV_INIT;
	struct sockaddr_in stalled = {.sin_family = AF_INET};
	struct sockaddr_in open4 = {.sin_family = AF_INET};
	struct timeval tmo = {1, 0};
	struct sk_call c;
	pthread_t th;
	char err[256], in[512];
	int fd, sp[2];

	snprintf(in, sizeof(in), "%s/in", root);
	stalled.sin_port = htons((uint16_t)port);
	stalled.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	open4.sin_port = htons((uint16_t)free_port);
	open4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (ward_ll_drop_caps(err, sizeof(err)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    ward_sv_spawn(&sv, &cfg, err, sizeof(err)) != 0 ||
	    ward_sv_arm(&sv, err, sizeof(err)) != 0)
		return 100;

	/* 1-2: a blocking connect that stalls (no timeout) does not stall
	 * the supervisor: a chmod is answered while it waits (were the
	 * supervisor stuck, the alarm would end this child); then room in
	 * the queue lets the connect complete. */
	memset(&c, 0, sizeof(c));
	c.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c.fd < 0)
		return 90;
	c.addr = &stalled;
	c.addrlen = sizeof(stalled);
	if (pthread_create(&th, NULL, sk_run, &c) != 0)
		return 91;
	while (!atomic_load(&c.started))
		usleep(1000);
	if (!sk_in_call(c.tid, SYS_connect))
		return 1;
	alarm(60);
	if (err_of(chmod(in, 0600)) != 0 || atomic_load(&c.done))
		return 2;
	alarm(0);
	fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC); /* the filler */
	if (fd < 0)
		return 2;
	close(fd);
	pthread_join(th, NULL); /* the SYN retransmitted: a second or so */
	if (c.ret != 0)
		return 2;

	/* 3: the queue is full again (that connection): with SO_SNDTIMEO
	 * the kernel's answer at the timeout, EINPROGRESS. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo)) != 0 ||
	    err_of(connect(fd, (struct sockaddr *)&stalled, sizeof(stalled))) !=
		EINPROGRESS)
		return 3;
	close(fd);
	close(c.fd);

	/* 4: non-blocking, the same destination: EINPROGRESS at once. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (err_of(connect(fd, (struct sockaddr *)&stalled, sizeof(stalled))) !=
	    EINPROGRESS)
		return 4;
	close(fd);

	/* 5: blocking, with room: connected, to that address. */
	{
		struct sockaddr_in peer;
		socklen_t len = sizeof(peer);

		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (err_of(connect(fd, (struct sockaddr *)&open4,
				   sizeof(open4))) != 0 ||
		    getpeername(fd, (struct sockaddr *)&peer, &len) != 0 ||
		    peer.sin_port != open4.sin_port)
			return 5;
		close(fd);
	}

	/* 6-7: SCM_RIGHTS passes the very file; SCM_CREDENTIALS is
	 * refused (the kernel would check them against the supervisor). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		return 92;
	{
		union {
			struct cmsghdr h;
			char b[CMSG_SPACE(sizeof(struct ucred))];
		} ctl;
		struct iovec iov = {"x", 1};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		struct cmsghdr *cm;
		struct stat a, b;
		char byte;
		int sent = open(in, O_RDONLY | O_CLOEXEC), got = -1;
		struct ucred uc = {getpid(), getuid(), getgid()};

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.b;
		mh.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &sent, sizeof(int));
		if (sendmsg(sp[0], &mh, 0) != 1)
			return 6;
		iov.iov_base = &byte;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_controllen = sizeof(ctl.b);
		if (recvmsg(sp[1], &mh, 0) != 1 || byte != 'x' ||
		    !(cm = CMSG_FIRSTHDR(&mh)) || cm->cmsg_type != SCM_RIGHTS)
			return 6;
		memcpy(&got, CMSG_DATA(cm), sizeof(int));
		if (fstat(sent, &a) != 0 || fstat(got, &b) != 0 ||
		    a.st_ino != b.st_ino || a.st_dev != b.st_dev)
			return 6;
		close(got);
		close(sent);
		iov.iov_base = "x";
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_controllen = CMSG_SPACE(sizeof(uc));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_CREDENTIALS;
		cm->cmsg_len = CMSG_LEN(sizeof(uc));
		memcpy(CMSG_DATA(cm), &uc, sizeof(uc));
		if (sendmsg(sp[0], &mh, 0) != -1 || errno != EPERM)
			return 7;
	}

	/* 8-9: a blocking send that would block waits for room without
	 * stalling the supervisor, and completes once the peer reads. */
	{
		int small = 4096;
		char drain[65536];
		ssize_t n;

		if (setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &small,
			       sizeof(small)) != 0)
			return 93;
		while (send(sp[0], drain, sizeof(drain), MSG_DONTWAIT) > 0)
			;
		memset(&c, 0, sizeof(c));
		c.fd = sp[0];
		c.len = 1000;
		if (pthread_create(&th, NULL, sk_run, &c) != 0)
			return 91;
		while (!atomic_load(&c.started))
			usleep(1000);
		if (!sk_in_call(c.tid, SYS_sendmsg))
			return 8;
		if (err_of(chmod(in, 0640)) != 0 || atomic_load(&c.done))
			return 8;
		while (!atomic_load(&c.done)) {
			n = recv(sp[1], drain, sizeof(drain), MSG_DONTWAIT);
			if (n <= 0)
				usleep(1000);
		}
		pthread_join(th, NULL);
		if (c.ret != 1000)
			return 9;
	}
	close(sp[0]);
	close(sp[1]);

	/* 10: sendmmsg, message by message, each msg_len written back. */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) != 0)
		return 92;
	{
		struct iovec v[2] = {{"ab", 2}, {"cde", 3}};
		struct mmsghdr mm[2];
		char buf[8];

		memset(mm, 0, sizeof(mm));
		mm[0].msg_hdr.msg_iov = &v[0];
		mm[0].msg_hdr.msg_iovlen = 1;
		mm[1].msg_hdr.msg_iov = &v[1];
		mm[1].msg_hdr.msg_iovlen = 1;
		if (sendmmsg(sp[0], mm, 2, 0) != 2 || mm[0].msg_len != 2 ||
		    mm[1].msg_len != 3 ||
		    recv(sp[1], buf, sizeof(buf), 0) != 2 ||
		    recv(sp[1], buf, sizeof(buf), 0) != 3 ||
		    memcmp(buf, "cde", 3) != 0)
			return 10;
	}
	close(sp[0]);
	close(sp[1]);

	/* 11: the peer of a unix connection the supervisor made is of the
	 * command's uid and gid (its pid is the supervisor's: documented). */
	{
		char sock[100];
		struct sockaddr_un un = {.sun_family = AF_UNIX};
		struct ucred peer;
		socklen_t len = sizeof(peer);
		int l, a;

		snprintf(sock, sizeof(sock), "%s/peer.sock", root);
		l = bind_socket(sock);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", sock);
		if (l < 0 || connect(fd, (struct sockaddr *)&un, sizeof(un)) ||
		    (a = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 ||
		    getsockopt(a, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
		    peer.uid != getuid() || peer.gid != getgid())
			return 11;
		close(a);
		close(fd);
		close(l);
	}
	return 0;
}

/* A loopback listener (backlog @backlog): its fd, *@port its port. */
static int tcp_listener(int backlog, int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, backlog) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static void t_sockets(void **state)
{
	char root[] = "/var/tmp/ward-sv-sk-XXXXXX";
	char path[600], cmd[700];
	struct sockaddr_in a = {.sin_family = AF_INET};
	int l, lfree, port, free_port, status, fill;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/in", root);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	/* A full accept queue (backlog 0, one connection in it): the kernel
	 * drops further SYNs, so a connect to it waits, retransmitting. */
	l = tcp_listener(0, &port);
	lfree = tcp_listener(16, &free_port);
	assert_true(l >= 0 && lfree >= 0);
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fill = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fill >= 0);
	assert_int_equal(connect(fill, (struct sockaddr *)&a, sizeof(a)), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(sockets_child(root, l, port, free_port));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(fill);
	close(l);
	close(lfree);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * The command's side of a failed hand-over: ward_sv_arm() fails with
 * @want in its message, and a judged call then fails closed (ENOSYS: the
 * filter is in place, nobody holds its listener). 0, or the check.
 */
static int handoff_command(int sock, const char *file, const char *want)
{
	struct ward_sv sv = {.sock = sock, .pid = 0};
	char err[256];

	if (ward_ll_drop_caps(err, sizeof(err)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 101;
	if (ward_sv_arm(&sv, err, sizeof(err)) == 0)
		return 1;
	if (!strstr(err, want)) {
		fprintf(stderr, "arm: %s\n", err);
		return 2;
	}
	if (chmod(file, 0600) == 0 || errno != ENOSYS)
		return 3;
	return 0;
}

/*
 * One hand-over that fails: the command is forked, the supervisor's side
 * refuses (@refuse: takes from a process that is gone) or hangs up after
 * reading the listener's number. Both sides must fail, and the command
 * must not be left with a live filter nobody serves.
 */
static void handoff_case(const char *file, bool refuse)
{
	char err[256];
	pid_t cmd, gone;
	int sp[2], status, num, lfd;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp),
			 0);
	cmd = fork();
	assert_true(cmd >= 0);
	if (cmd == 0) {
		close(sp[0]);
		_exit(handoff_command(sp[1], file,
				      refuse ? "cannot take the listener"
					     : "died before arming"));
	}
	close(sp[1]);
	if (refuse) {
		/* A target that no longer exists: pidfd_open fails. */
		gone = fork();
		assert_true(gone >= 0);
		if (gone == 0)
			_exit(0);
		assert_int_equal(waitpid(gone, &status, 0), gone);
		lfd = ward_sv_take(sp[0], gone, err, sizeof(err));
		assert_true(lfd < 0);
		assert_non_null(strstr(err, "cannot take the listener"));
	} else {
		assert_int_equal(read(sp[0], &num, sizeof(num)),
				 (ssize_t)sizeof(num));
	}
	close(sp[0]);
	assert_int_equal(waitpid(cmd, &status, 0), cmd);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void t_handoff_failed(void **state)
{
	char dir[] = "/var/tmp/ward-sv-ho-XXXXXX";
	char file[600], err[256];
	int sp[2], fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	close(fd);
	handoff_case(file, true);
	handoff_case(file, false);
	/* The supervisor's side when the command hangs up first. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp),
			 0);
	close(sp[1]);
	assert_int_equal(ward_sv_take(sp[0], getpid(), err, sizeof(err)),
			 -ESRCH);
	assert_non_null(strstr(err, "ended before handing over"));
	close(sp[0]);
	unlink(file);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_beneath),     cmocka_unit_test(t_sockaddr),
	    cmocka_unit_test(t_live),	     cmocka_unit_test(t_net_dest),
	    cmocka_unit_test(t_report_find),
	    cmocka_unit_test(t_report_event), cmocka_unit_test(t_fake_target),
	    cmocka_unit_test(t_sockets),     cmocka_unit_test(t_handoff_failed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
