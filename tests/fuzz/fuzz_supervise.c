/*
 * fuzz_supervise — libFuzzer target for the seccomp supervisor's decoding
 * of a hostile process's syscall arguments (src/util/supervise.c, through
 * its judging seam ward_sv_judge()), with a fake target whose memory is
 * the input and whose descriptors are the harness's own.
 *
 * Input: byte 0 the number of calls (1 + byte % 4), then per call a
 * 51-byte record — the call (an index into the judged calls, and a few
 * that are not), its setting bits (the cwd, a vanished notification,
 * another architecture; bit 0 of the first record's: the network off or
 * connect-only, for the whole input), a mask of arguments
 * that are pointers (args[i] = MEM + its low 16 bits), and the six
 * arguments, little-endian —, then the target's memory: the rest of the
 * input, at address MEM (paths, sockaddrs, msghdr/iovec/cmsg structures,
 * mmsghdr arrays: pointers inside it are MEM + offset too). The reader
 * serves exactly those bytes (a read that starts outside fails, one that
 * runs past the end is cut there, like a mapping's end); the target's
 * descriptors 0..11 are the harness's (scratch files and directories,
 * socketpairs, unbound unix and inet sockets, made afresh per input),
 * any other is EBADF.
 *
 * The scratch tree (under /dev/shm or /tmp): rw/ is the writable grant
 * and gf a regular-file grant, ok/ is --allow-unix, out/ is outside all
 * of them (a victim file, a listening stream socket and a bound datagram
 * socket); rw/ holds links out (relative, absolute, up). A TCP listener on
 * 127.0.0.1 is the proxy's port, a second one and a UDP socket are
 * forbidden destinations. The harness lives, as the supervisor does, in a
 * Landlock domain of its own (sockets made only beneath rw/, TCP connect
 * to the two listeners' ports only, abstract sockets and signals scoped)
 * and, when it may, in a network namespace of its own; as root every call
 * is judged with the file-system uid of nobody and no effective
 * capability (the scratch tree is nobody's), as a command's supervisor
 * judges with the command's uid.
 *
 * Checked (the oracle), after every call:
 *   1. no crash, no sanitizer report, no leaked descriptor (the lowest
 *      free one is the same before and after);
 *   2. the verdict is an answer or a wait, never anything else (there is
 *      no "continue"): a REPLY's error is 0 or -1..-4095 and its value 0
 *      then; a wait has a descriptor or a retry time;
 *   3. nothing outside the grants changed: the status-change time (and
 *      mode, owner) of the scratch root, out/ and everything in it, ok/
 *      and its sockets, and rw/ itself (a new entry in rw/ changes its
 *      modification time with it, a chmod of it would not) are as before;
 *   4. no forbidden destination was reached: no connection is pending on
 *      out/'s listener, none on the proxy's port when the network is off,
 *      none on the second TCP port ever, no datagram arrived at out/'s
 *      datagram socket or at the UDP socket;
 *   5. a performed connect (an answer 0) left the socket connected only
 *      to the proxy's address and port (inet), and never under "off".
 *
 * FUZZ_SV_TRACE=1 prints each call's verdict (to see what a seed reaches).
 * Build and run: `make fuzz` (or `make fuzz-lane`); see tests/fuzz/run.sh.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/landlock.h"
#include "util/supervise.h"

#include "fuzz_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MEM	 0x10000ULL
#define REC	 51
#define NOBODY	 65534
#define NFD	 12
#define MAXCALLS 4

#if defined(__x86_64__)
#define ARCH 0xc000003eU
/* The calls the filter sends to the supervisor (supervise.c's sv_calls). */
static const int calls[] = {
    16,	 42,  44,  46,	49,  50,  90,  91,
    92,	 93,  94,  132, 188, 189, 190, 197,
    198, 199, 235, 260, 261, 268, 280, 307,
    425, 426, 427, 452, 463, 466, 469, 39 /* getpid: not judged */,
    4 /* stat */};
#elif defined(__aarch64__)
#define ARCH 0xc00000b7U
static const int calls[] = {5,	 6,   7,   14,	15,  16,  29,  52,  53,
			    54,	 55,  88,  200, 201, 203, 206, 211, 269,
			    425, 426, 427, 452, 463, 466, 469, 172, 79};
#endif

static char T[64];
static struct ward_sv_state *st;
static struct ward_sv_config cfg[2];
static const char *rw[2], *ok[1];
static char rwp[128], gfp[128], okp[128];
static int fds[NFD + 2]; /* and the socketpairs' other ends */
static int lst_out, dgr_out, tcp_ok, tcp_bad, udp_bad, lst_ok;
static unsigned port_ok, port_bad;
static int home; /* the fuzzer's own cwd, restored after each call */
static bool as_root;

/* The input's memory, as the fake target serves it. */
static uint8_t *mem;
static size_t memlen;
static bool vanished;
static int cwd_which;

/* --- the scratch tree ------------------------------------------------------ */

static void die(const char *what)
{
	perror(what);
	abort();
}

static int mksock(const char *rel, int type)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	at(un.sun_path, sizeof(un.sun_path), rel);
	if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) != 0))
		die(un.sun_path);
	return fd;
}

static int inet_sock(int type, unsigned *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) != 0) ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		die("loopback socket");
	if (port)
		*port = ntohs(a.sin_port);
	return fd;
}

static void chown_tree(const char *dir)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "chown -hR %d:%d '%s'", NOBODY, NOBODY, dir);
	if (system(cmd) != 0)
		die("chown");
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0) {
		/* nothing more to do */
	}
}

/* A network namespace of our own (root only), its loopback up. */
static void own_netns(void)
{
	struct ifreq ifr;
	int s;

	if (unshare(CLONE_NEWNET) != 0)
		return; /* the Landlock domain and the oracle still hold */
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0)
		die("lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0)
		die("lo up");
	close(s);
}

/* The supervisor's Landlock domain, as far as the harness needs it. */
struct ll_attr {
	uint64_t fs, net, scoped;
};
struct ll_path {
	uint64_t allowed;
	int32_t fd;
} __attribute__((packed));
struct ll_port {
	uint64_t allowed, port;
};

static void own_domain(void)
{
	struct ll_attr a = {
	    LANDLOCK_ACCESS_FS_MAKE_SOCK,
	    LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP,
	    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL};
	struct ll_path p = {LANDLOCK_ACCESS_FS_MAKE_SOCK, -1};
	struct ll_port n = {LANDLOCK_ACCESS_NET_CONNECT_TCP, 0};
	int abi, rs;

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1U);
	if (abi < 6) {
		fprintf(stderr,
			"fuzz_supervise: Landlock ABI 6 is needed (the "
			"harness's own domain), this kernel has %d\n",
			abi);
		abort();
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof(a), 0U);
	p.fd = open(rwp, O_PATH | O_CLOEXEC);
	if (rs < 0 || p.fd < 0 ||
	    syscall(SYS_landlock_add_rule, rs, 1 /* PATH_BENEATH */, &p, 0U))
		die("landlock path rule");
	close(p.fd);
	n.port = port_ok;
	if (syscall(SYS_landlock_add_rule, rs, 2 /* NET_PORT */, &n, 0U))
		die("landlock port rule");
	n.port = port_bad;
	if (syscall(SYS_landlock_add_rule, rs, 2, &n, 0U))
		die("landlock port rule");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0U) != 0)
		die("landlock_restrict_self");
	close(rs);
}

static void setup(void)
{
	char p[256];

	as_root = geteuid() == 0;
	if (as_root)
		own_netns();
	if (!mkdtemp(strcpy(T, access("/dev/shm", W_OK) == 0
				   ? "/dev/shm/fuzz_supervise.XXXXXX"
				   : "/tmp/fuzz_supervise.XXXXXX")))
		die("mkdtemp");
	atexit(cleanup);
	fuzz_root = T;
	if (chmod(T, 0755) != 0)
		die(T);
	mkd("rw");
	mkd("rw/d");
	mkf("rw/f");
	mkf("rw/d/g");
	mkf("gf");
	mkd("out");
	mkf("out/victim");
	mkd("ok");
	mkl("../out/victim", "rw/link_out");
	mkl("@/out/victim", "rw/link_abs");
	mkl("f", "rw/link_in");
	mkl("..", "rw/up");
	mkl("../out", "rw/link_dir");
	mkl("/proc/self/fd/3", "rw/magic");
	if (as_root)
		chown_tree(T);
	lst_out = mksock("out/sock", SOCK_STREAM);
	dgr_out = mksock("out/dsock", SOCK_DGRAM);
	lst_ok = mksock("ok/sock", SOCK_STREAM);
	if (as_root)
		chown_tree(T);
	tcp_ok = inet_sock(SOCK_STREAM, &port_ok);
	tcp_bad = inet_sock(SOCK_STREAM, &port_bad);
	udp_bad = inet_sock(SOCK_DGRAM, NULL);
	at(rwp, sizeof(rwp), "rw");
	at(gfp, sizeof(gfp), "gf");
	at(okp, sizeof(okp), "ok");
	rw[0] = rwp;
	rw[1] = gfp;
	ok[0] = okp;
	for (int i = 0; i < 2; i++) {
		cfg[i].rw = rw;
		cfg[i].nrw = 2;
		cfg[i].unix_ok = ok;
		cfg[i].nunix = 1;
		cfg[i].net = i ? WARD_LL_NET_CONNECT : WARD_LL_NET_OFF;
		cfg[i].net_port = port_ok;
		cfg[i].report_fd = -1;
	}
	st = mmap(NULL, ward_sv_state_size(), PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		die("mmap");
	/* The persistent descriptors: 0 rw/f, 1 rw/, 2 out/victim, 3 the
	 * scratch root, 11 the link rw/link_out itself. */
	at(p, sizeof(p), "rw/f");
	fds[0] = open(p, O_RDONLY | O_CLOEXEC);
	fds[1] = open(rwp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	at(p, sizeof(p), "out/victim");
	fds[2] = open(p, O_RDONLY | O_CLOEXEC);
	fds[3] = open(T, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	at(p, sizeof(p), "rw/link_out");
	fds[11] = open(p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	home = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < NFD; i++)
		if (i < 4 || i == 11)
			if (fds[i] < 0)
				die("scratch descriptor");
	if (home < 0)
		die("cwd");
	own_domain();
}

/* --- the fake target ------------------------------------------------------- */

static ssize_t f_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < MEM || addr - MEM >= memlen)
		return -EFAULT;
	if (len > memlen - (addr - MEM))
		len = memlen - (addr - MEM);
	memcpy(buf, mem + (addr - MEM), len);
	return (ssize_t)len;
}

static ssize_t f_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	(void)ctx;
	if (addr < MEM || addr - MEM >= memlen || len > memlen - (addr - MEM))
		return -EFAULT;
	memcpy(mem + (addr - MEM), buf, len);
	return (ssize_t)len;
}

static int f_getfd(void *ctx, int fd)
{
	int r;

	(void)ctx;
	if (fd < 0 || fd >= NFD || fds[fd] < 0)
		return -EBADF;
	r = fcntl(fds[fd], F_DUPFD_CLOEXEC, 0);
	return r < 0 ? -errno : r;
}

static int f_dir(void *ctx, int which)
{
	const char *p = which == WARD_SV_DIR_ROOT ? "/" : cwd_which ? T : rwp;
	int r = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)ctx;
	return r < 0 ? -errno : r;
}

static int f_valid(void *ctx)
{
	(void)ctx;
	return vanished ? -ENOENT : 0;
}

static int f_signal(void *ctx, int sig)
{
	(void)ctx;
	return sig == SIGPIPE ? 0 : -EINVAL;
}

static const struct ward_sv_target_ops ops = {
    .read = f_read,
    .write = f_write,
    .getfd = f_getfd,
    .dir = f_dir,
    .valid = f_valid,
    .signal = f_signal,
};

/* --- the oracle ------------------------------------------------------------ */

/*
 * What no call may change. Not rw/'s links themselves: a link beneath a
 * writable grant is the command's (it may remove and remake it), and the
 * `l` forms are performed on the link itself, by design (docs/RUNNERS.md);
 * what a link out points to is watched (out/victim).
 */
#define NWATCH 8
static const char *const watch[NWATCH] = {
    "",	  "out",     "out/victim", "out/sock", "out/dsock",
    "ok", "ok/sock", "rw"};

struct snap {
	struct statx sx[NWATCH];
};

static void take(struct snap *s)
{
	char p[256];

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < NWATCH; i++) {
		at(p, sizeof(p), watch[i]);
		if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS,
			  &s->sx[i]) != 0)
			die(p);
	}
}

static bool same_time(const struct statx_timestamp *a,
		      const struct statx_timestamp *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static void compare(const struct snap *a, const struct snap *b, int nr)
{
	for (int i = 0; i < NWATCH; i++) {
		const struct statx *x = &a->sx[i], *y = &b->sx[i];
		bool bad = x->stx_mode != y->stx_mode ||
			   x->stx_uid != y->stx_uid || x->stx_gid != y->stx_gid;

		if (strcmp(watch[i], "rw") == 0)
			/* A new entry moves both times; metadata only one. */
			bad |= !same_time(&x->stx_ctime, &y->stx_ctime) &&
			       !same_time(&y->stx_ctime, &y->stx_mtime);
		else
			bad |= !same_time(&x->stx_ctime, &y->stx_ctime);
		if (bad) {
			fprintf(stderr,
				"call %d changed %s/%s outside the "
				"grants\n",
				nr, T, watch[i]);
			abort();
		}
	}
}

static bool pending(int lfd)
{
	int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return false;
	close(c);
	while ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(c);
	return true;
}

static bool arrived(int fd)
{
	char b[64];
	bool got = false;

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
		got = true;
	return got;
}

static void reached(int nr, bool connect_mode)
{
	bool ok_port = pending(tcp_ok);

	(void)pending(lst_ok);
	if (pending(lst_out) || arrived(dgr_out) || pending(tcp_bad) ||
	    arrived(udp_bad) || (ok_port && !connect_mode)) {
		fprintf(stderr, "call %d reached a forbidden destination\n",
			nr);
		abort();
	}
}

/* A connected inet socket is connected to the proxy, under CONNECT. */
static void peer_check(int fd, int nr, bool connect_mode)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	bool good = false;

	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0 ||
	    ss.ss_family == AF_UNIX)
		return;
	if (ss.ss_family == AF_INET)
		good = a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		       ntohs(a4->sin_port) == port_ok;
	else if (ss.ss_family == AF_INET6)
		good =
		    IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr) &&
		    memcmp(&a6->sin6_addr.s6_addr[12], "\x7f\0\0\1", 4) == 0 &&
		    ntohs(a6->sin6_port) == port_ok;
	if (!good || !connect_mode) {
		fprintf(stderr,
			"call %d connected an inet socket where it "
			"may not\n",
			nr);
		abort();
	}
}

static void verdict_check(const struct ward_sv_verdict *v, int nr)
{
	bool good;

	switch (v->kind) {
	case WARD_SV_REPLY:
		good = v->fd == -1 && v->error <= 0 && v->error >= -4095 &&
		       (v->error == 0 || v->val == 0) && v->val >= 0;
		break;
	case WARD_SV_WAIT_CONNECT:
		good = v->fd >= 0;
		break;
	case WARD_SV_WAIT_REDO:
		good = v->fd >= 0 || v->retry_ms > 0;
		break;
	default:
		good = false;
	}
	if (!good) {
		fprintf(stderr,
			"call %d: verdict kind %d error %d val %lld "
			"fd %d\n",
			nr, v->kind, v->error, (long long)v->val, v->fd);
		abort();
	}
}

/* --- per input ------------------------------------------------------------- */

static void fresh_sockets(void)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		die("socketpair");
	fds[4] = sp[0];
	fds[NFD] = sp[1]; /* never seen: the peer */
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sp) != 0)
		die("socketpair");
	fds[5] = sp[0];
	fds[NFD + 1] = sp[1];
	fds[6] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	fds[7] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fds[8] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	fds[9] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fds[10] = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	for (int i = 4; i <= 10; i++)
		if (fds[i] < 0)
			die("socket");
}

static void drop_sockets(void)
{
	for (int i = 4; i <= 10; i++)
		close(fds[i]);
	close(fds[NFD]);
	close(fds[NFD + 1]);
}

/* Sockets bound in rw/ go, the grant's files get their modes back. */
static void tidy(void)
{
	static const char *const dirs[] = {"rw", "rw/d"};
	char p[512];

	for (size_t i = 0; i < 2; i++) {
		DIR *d;
		struct dirent *e;

		at(p, sizeof(p), dirs[i]);
		d = opendir(p);
		if (!d)
			die(p);
		while ((e = readdir(d)))
			if (e->d_type == DT_SOCK)
				(void)unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	at(p, sizeof(p), "rw/d");
	(void)chmod(p, 0755);
	at(p, sizeof(p), "rw/f");
	(void)chmod(p, 0644);
	(void)chmod(gfp, 0644);
}

/* Judge as nobody with no effective capability (as root), then back. */
static void judge_as_target(const struct ward_sv_notif *n,
			    struct ward_sv_verdict *v)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct c[2], none[2];
	const struct ward_sv_target t = {&ops, NULL};

	if (as_root) {
		if (syscall(SYS_capget, &h, c) != 0)
			die("capget");
		memcpy(none, c, sizeof(none));
		none[0].effective = none[1].effective = 0;
		setfsuid(NOBODY);
		setfsgid(NOBODY);
		if (syscall(SYS_capset, &h, none) != 0)
			die("capset");
	}
	ward_sv_judge(st, n, &t, v);
	if (as_root) {
		setfsuid(0);
		setfsgid(0);
		if (syscall(SYS_capset, &h, c) != 0)
			die("capset");
	}
	if (fchdir(home) != 0) /* a bind moves the cwd */
		die("fchdir");
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_sv_notif n[MAXCALLS];
	bool connect_mode;
	int k, probe;

	if (!st)
		setup();
	if (size < 1 + REC)
		return 0;
	k = 1 + data[0] % MAXCALLS;
	if (size < 1 + (size_t)k * REC || size > 1 + (size_t)k * REC + 65536)
		return 0;
	memlen = size - 1 - (size_t)k * REC;
	mem = malloc(memlen ? memlen : 1);
	if (!mem)
		return 0;
	memcpy(mem, data + 1 + k * REC, memlen);
	memset(n, 0, sizeof(n));
	for (int i = 0; i < k; i++) {
		const uint8_t *r = data + 1 + i * REC;

		n[i].nr = calls[r[0] % (sizeof(calls) / sizeof(calls[0]))];
		n[i].arch = (r[1] & 8) ? 0x40000003U : ARCH;
		n[i].pid = 1;
		n[i].id = (uint64_t)i + 1;
		for (int a = 0; a < 6; a++) {
			n[i].args[a] = le64(r + 3 + 8 * a);
			if (r[2] & (1U << a))
				n[i].args[a] = MEM + (n[i].args[a] & 0xffff);
		}
	}
	fresh_sockets();
	/* The first record's bit 0: the network off or connect-only. */
	connect_mode = data[2] & 1;
	memset(st, 0, ward_sv_state_size());
	if (ward_sv_state_init(st, &cfg[connect_mode]) != 0)
		die("state");
	for (int i = 0; i < k; i++) {
		const uint8_t *r = data + 1 + i * REC;
		struct ward_sv_verdict v;
		struct snap before, after;

		cwd_which = (r[1] >> 1) & 1;
		vanished = (r[1] >> 2) & 1;
		take(&before);
		probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
		close(probe);
		judge_as_target(&n[i], &v);
		verdict_check(&v, n[i].nr);
		if (getenv("FUZZ_SV_TRACE")) /* what each call got */
			fprintf(stderr, "nr %d: kind %d error %d val %lld\n",
				n[i].nr, v.kind, v.error, (long long)v.val);
		if (v.fd >= 0)
			close(v.fd);
		if (open("/dev/null", O_RDONLY | O_CLOEXEC) != probe) {
			fprintf(stderr, "call %d leaked a descriptor\n",
				n[i].nr);
			abort();
		}
		close(probe);
		take(&after);
		compare(&before, &after, n[i].nr);
		for (int f = 6; f <= 10; f++)
			peer_check(fds[f], n[i].nr, connect_mode);
		reached(n[i].nr, connect_mode);
	}
	drop_sockets();
	tidy();
	free(mem);
	return 0;
}
