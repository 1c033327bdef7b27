/*
 * sealhelper — attacks on the supervisor for tests/e2e/redteam_seal.bats
 * (issue 16): a racing thread against every judged call. Each mode prints
 * "calls=N allowed=M" (M: calls that succeeded — the inside target was
 * hit) or NAME=ok / NAME=<errno> lines; the test then checks that nothing
 * outside changed.
 *
 *   sealhelper race-fd VICTIM INSIDE SECONDS
 *       a thread swaps descriptor N between INSIDE and VICTIM (dup2), the
 *       main thread calls fchmod, fchown, fsetxattr, fremovexattr,
 *       ioctl(FS_IOC_SETFLAGS), futimens, and the AT_EMPTY_PATH forms of
 *       fchmodat2, fchownat and utimensat on N
 *   sealhelper race-memfd VICTIM SECONDS
 *       the same swap between a memfd and VICTIM, with FS_IOC_SETFLAGS
 *       and fchmod on N (read-only mode: the memfd is the command's own)
 *   sealhelper race-path VICTIM INSIDE SECONDS
 *       a thread rewrites the path buffer between INSIDE (and "") and
 *       VICTIM; the main thread calls chmod, utimensat, setxattr,
 *       lsetxattr, removexattr, and fchmodat2/utimensat(fd, buf,
 *       AT_EMPTY_PATH) with that buffer
 *   sealhelper race-connect OWN DAEMON SECONDS
 *       OWN is bound here (the call's own socket); a thread rewrites the
 *       sockaddr between OWN and DAEMON while the main thread connects,
 *       and another swaps the socket descriptor; sendto and sendmsg of a
 *       datagram likewise (OWN.dgram, DAEMON.dgram)
 *   sealhelper connect PATH   connect once: connect=ok|ERRNO
 *   sealhelper wait-connect PATH GO
 *       wait (bounded, 30 s) until the file GO exists, then connect
 *   sealhelper proxy-other PORTFILE READY
 *       the proxy's port from $HTTP_PROXY written to PORTFILE; once READY
 *       exists, connect to it on other addresses (127.0.0.2, ::1, ::,
 *       0.0.0.0, ::ffff:127.0.0.2) and to the proxy itself
 *   sealhelper serve PATH LOG SECONDS
 *       outside the call: a stream server at PATH and a datagram one at
 *       PATH.dgram; every connection or datagram appends a line to LOG
 *   sealhelper listen-other PORTFILE READY LOG SECONDS
 *       outside the call: once PORTFILE names a port, listen on it at
 *       127.0.0.2, [::] (v6only) and, where the proxy leaves room,
 *       0.0.0.0; every connection appends a line to LOG; then READY
 *   sealhelper families
 *       socket() of vsock, netlink (uevent, sock_diag, audit, route),
 *       and connect to 192.0.2.1:80 / [2001:db8::1]:80, sendto UDP
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

static atomic_int stop;
static int swap_n = 100, swap_a = -1, swap_b = -1;
static char path_buf[4096];
static const char *path_a, *path_b;
static struct sockaddr_un addr_buf;
static const char *addr_a, *addr_b;

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case 0:
		return "ok";
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ENETUNREACH:
		return "ENETUNREACH";
	case EAFNOSUPPORT:
		return "EAFNOSUPPORT";
	case EPROTONOSUPPORT:
		return "EPROTONOSUPPORT";
	case EADDRNOTAVAIL:
		return "EADDRNOTAVAIL";
	case ENOSYS:
		return "ENOSYS";
	case EINVAL:
		return "EINVAL";
	default:
		snprintf(buf, sizeof(buf), "E%d", e);
		return buf;
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *swap_fds(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dup2(swap_a, swap_n);
		dup2(swap_b, swap_n);
	}
	return NULL;
}

static void *swap_path(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		strcpy(path_buf, path_a);
		strcpy(path_buf, path_b);
	}
	return NULL;
}

static void *swap_addr(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		strcpy(addr_buf.sun_path, addr_a);
		strcpy(addr_buf.sun_path, addr_b);
	}
	return NULL;
}

static long calls, allowed;

static void tally(int r)
{
	calls++;
	if (r >= 0)
		allowed++;
}

static int race_fd(const char *victim, const char *inside, double secs,
		   bool memfd)
{
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	pthread_t th;
	int flags = 0;
	double end;

	swap_a = memfd ? memfd_create("seal", MFD_CLOEXEC)
		       : open(inside, O_RDONLY | O_CLOEXEC);
	swap_b = open(victim, O_RDONLY | O_CLOEXEC);
	if (swap_a < 0 || swap_b < 0) {
		perror("open");
		return 2;
	}
	dup2(swap_a, swap_n);
	/* The flags of what the call may change (the memfd's own, or the
	 * inside file's), toggled: landing on the victim changes it. */
	ioctl(memfd ? swap_a : swap_b, FS_IOC_GETFLAGS, &flags);
	pthread_create(&th, NULL, swap_fds, NULL);
	end = now() + secs;
	while (now() < end) {
		int f = flags ^ FS_NOATIME_FL;

		tally(ioctl(swap_n, FS_IOC_SETFLAGS, &f));
		tally(fchmod(swap_n, 0666));
		if (memfd)
			continue;
		tally(fchown(swap_n, getuid(), getuid() ? getgid() : 4242));
		tally(fsetxattr(swap_n, "user.seal", "x", 1, 0));
		tally(fremovexattr(swap_n, "user.seal"));
		tally(futimens(swap_n, ts));
		tally((int)syscall(__NR_fchmodat2, swap_n, "", 0600,
				   AT_EMPTY_PATH));
		tally(fchownat(swap_n, "", getuid(), getgid(), AT_EMPTY_PATH));
		tally(utimensat(swap_n, "", ts, AT_EMPTY_PATH));
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("calls=%ld allowed=%ld\n", calls, allowed);
	return 0;
}

static int race_path(const char *victim, const char *inside, double secs)
{
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	pthread_t th;
	int dfd = open(inside, O_RDONLY | O_CLOEXEC);
	double end;
	int round = 0;

	if (dfd < 0) {
		perror("open");
		return 2;
	}
	strcpy(path_buf, inside);
	path_a = inside;
	path_b = victim;
	pthread_create(&th, NULL, swap_path, NULL);
	end = now() + secs;
	while (now() < end) {
		/* Half the time the other value is "" (AT_EMPTY_PATH). */
		path_a = (round++ & 1) ? "" : inside;
		path_b = victim;
		tally(chmod(path_buf, 0666));
		tally(utimensat(AT_FDCWD, path_buf, ts, 0));
		tally(setxattr(path_buf, "user.seal", "x", 1, 0));
		tally(lsetxattr(path_buf, "user.seal", "x", 1, 0));
		tally(removexattr(path_buf, "user.seal"));
		tally((int)syscall(__NR_fchmodat2, dfd, path_buf, 0600,
				   AT_EMPTY_PATH));
		tally(utimensat(dfd, path_buf, ts, AT_EMPTY_PATH));
		tally(
		    fchownat(dfd, path_buf, getuid(), getgid(), AT_EMPTY_PATH));
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	printf("calls=%ld allowed=%ld\n", calls, allowed);
	return 0;
}

static int bind_at(const char *path, int type)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof(un)) != 0 ||
	    (type == SOCK_STREAM && listen(fd, 4096) != 0)) {
		perror(path);
		exit(2);
	}
	return fd;
}

static int race_connect(const char *own, const char *daemon, double secs)
{
	char own_dg[200], daemon_dg[200];
	pthread_t th, th2;
	int ls, ld, fd;
	double end;

	snprintf(own_dg, sizeof(own_dg), "%s.dgram", own);
	snprintf(daemon_dg, sizeof(daemon_dg), "%s.dgram", daemon);
	ls = bind_at(own, SOCK_STREAM);
	ld = bind_at(own_dg, SOCK_DGRAM);
	fcntl(ls, F_SETFL, O_NONBLOCK);
	addr_buf.sun_family = AF_UNIX;
	addr_a = own;
	addr_b = daemon;
	strcpy(addr_buf.sun_path, own);
	pthread_create(&th, NULL, swap_addr, NULL);
	/* The descriptor swap: the connected number flips between a fresh
	 * stream socket and a datagram one. */
	swap_a = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	swap_b = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	pthread_create(&th2, NULL, swap_fds, NULL);
	end = now() + secs;
	while (now() < end) {
		struct msghdr mh;
		struct iovec iov = {"x", 1};
		int c;

		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		tally(connect(fd, (struct sockaddr *)&addr_buf,
			      sizeof(addr_buf)));
		close(fd);
		while ((c = accept4(ls, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
			close(c);
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		addr_a = own_dg;
		addr_b = daemon_dg;
		tally((int)sendto(fd, "x", 1, MSG_DONTWAIT,
				  (struct sockaddr *)&addr_buf,
				  sizeof(addr_buf)));
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &addr_buf;
		mh.msg_namelen = sizeof(addr_buf);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		tally((int)sendmsg(fd, &mh, MSG_DONTWAIT));
		close(fd);
		{
			char drain[16];

			while (recv(ld, drain, sizeof(drain), MSG_DONTWAIT) > 0)
				;
		}
		addr_a = own;
		addr_b = daemon;
		/* The swapped number, connected to the own socket. */
		{
			struct sockaddr_un un = {.sun_family = AF_UNIX};

			strcpy(un.sun_path, own);
			tally(connect(swap_n, (struct sockaddr *)&un,
				      sizeof(un)));
		}
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	pthread_join(th2, NULL);
	printf("calls=%ld allowed=%ld\n", calls, allowed);
	return 0;
}

static int connect_path(const char *path)
{
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r;

	snprintf(un.sun_path, sizeof(un.sun_path), "%s", path);
	r = connect(fd, (struct sockaddr *)&un, sizeof(un)) == 0 ? 0 : errno;
	printf("connect=%s\n", ename(r));
	return 0;
}

static int try_inet(const char *label, int family, const char *ip, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, ip, &a->sin_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, ip, &a->sin6_addr);
		len = sizeof(*a);
	}
	if (fd < 0)
		r = errno;
	else
		r = connect(fd, (struct sockaddr *)&ss, len) == 0 ? 0 : errno;
	printf("%s=%s\n", label, ename(r));
	if (fd >= 0)
		close(fd);
	return r;
}

static bool wait_file(const char *path)
{
	for (int i = 0; i < 600; i++) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(50000);
	}
	return false;
}

static int proxy_other(const char *portfile, const char *ready)
{
	const char *p = getenv("HTTP_PROXY");
	const char *colon = p ? strrchr(p, ':') : NULL;
	int port = colon ? atoi(colon + 1) : 0;
	FILE *f;

	if (!port) {
		fprintf(stderr, "no HTTP_PROXY port\n");
		return 2;
	}
	f = fopen(portfile, "w");
	if (!f)
		return 2;
	fprintf(f, "%d\n", port);
	fclose(f);
	if (!wait_file(ready)) {
		fprintf(stderr, "%s never appeared\n", ready);
		return 2;
	}
	try_inet("v4_other", AF_INET, "127.0.0.2", port);
	try_inet("v4_any", AF_INET, "0.0.0.0", port);
	try_inet("v6_loop", AF_INET6, "::1", port);
	try_inet("v6_any", AF_INET6, "::", port);
	try_inet("v6_mapped_other", AF_INET6, "::ffff:127.0.0.2", port);
	try_inet("proxy", AF_INET, "127.0.0.1", port);
	try_inet("proxy_mapped", AF_INET6, "::ffff:127.0.0.1", port);
	return 0;
}

static void try_socket(const char *label, int family, int type, int proto)
{
	int fd = socket(family, type | SOCK_CLOEXEC, proto);

	printf("%s=%s\n", label, ename(fd >= 0 ? 0 : errno));
	if (fd >= 0)
		close(fd);
}

static int families(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
	int fd;

	try_socket("vsock", 40 /* AF_VSOCK */, SOCK_STREAM, 0);
	try_socket("netlink_uevent", AF_NETLINK, SOCK_DGRAM, 15);
	try_socket("netlink_diag", AF_NETLINK, SOCK_DGRAM, 4);
	try_socket("netlink_audit", AF_NETLINK, SOCK_DGRAM, 9);
	try_socket("netlink_route", AF_NETLINK, SOCK_DGRAM, 0);
	try_socket("packet", 17 /* AF_PACKET */, SOCK_RAW, 0);
	try_inet("connect_v4", AF_INET, "192.0.2.1", 80);
	try_inet("connect_v6", AF_INET6, "2001:db8::1", 80);
	inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	printf(
	    "sendto_udp=%s\n",
	    ename(fd < 0 ? errno
		  : sendto(fd, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) >= 0
		      ? 0
		      : errno));
	return 0;
}

static void log_line(const char *log, const char *what)
{
	FILE *f = fopen(log, "a");

	if (f) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

/* Accept or receive on @fds until @secs pass, logging each event. */
static int serve_fds(int *fds, int n, const char *log, double secs)
{
	double end = now() + secs;

	for (int i = 0; i < n; i++)
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
	while (now() < end) {
		for (int i = 0; i < n; i++) {
			char buf[64];
			int c = accept4(fds[i], NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0) {
				log_line(log, "conn");
				close(c);
			} else if (errno == EINVAL || errno == EOPNOTSUPP) {
				if (recv(fds[i], buf, sizeof(buf), 0) >= 0)
					log_line(log, "dgram");
			}
		}
		usleep(2000);
	}
	return 0;
}

static int serve(const char *path, const char *log, double secs)
{
	char dg[200];
	int fds[2];

	snprintf(dg, sizeof(dg), "%s.dgram", path);
	fds[0] = bind_at(path, SOCK_STREAM);
	fds[1] = bind_at(dg, SOCK_DGRAM);
	chmod(path, 0777);
	chmod(dg, 0777);
	printf("ready\n");
	fflush(stdout);
	return serve_fds(fds, 2, log, secs);
}

static int listen_inet(int family, const char *ip, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, ip, &a->sin_addr);
		len = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, ip, &a->sin6_addr);
		len = sizeof(*a);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 64)) {
		printf("listen %s: %s\n", ip, strerror(errno));
		close(fd);
		return -1;
	}
	printf("listening %s\n", ip);
	return fd;
}

static int listen_other(const char *portfile, const char *ready,
			const char *log, double secs)
{
	int fds[3], n = 0, port = 0, fd;
	FILE *f;

	if (!wait_file(portfile))
		return 2;
	usleep(50000);
	f = fopen(portfile, "r");
	if (!f || fscanf(f, "%d", &port) != 1)
		return 2;
	fclose(f);
	if ((fd = listen_inet(AF_INET, "127.0.0.2", port)) >= 0)
		fds[n++] = fd;
	if ((fd = listen_inet(AF_INET6, "::", port)) >= 0)
		fds[n++] = fd;
	if ((fd = listen_inet(AF_INET, "0.0.0.0", port)) >= 0)
		fds[n++] = fd;
	fflush(stdout);
	if (n < 2)
		return 2; /* 127.0.0.2 and [::] must both be there */
	log_line(ready, "ready");
	return serve_fds(fds, n, log, secs);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], argv[3], atof(argv[4]));
	if (argc >= 6 && strcmp(argv[1], "listen-other") == 0)
		return listen_other(argv[2], argv[3], argv[4], atof(argv[5]));
	if (argc >= 5 && strcmp(argv[1], "race-fd") == 0)
		return race_fd(argv[2], argv[3], atof(argv[4]), false);
	if (argc >= 4 && strcmp(argv[1], "race-memfd") == 0)
		return race_fd(argv[2], NULL, atof(argv[3]), true);
	if (argc >= 5 && strcmp(argv[1], "race-path") == 0)
		return race_path(argv[2], argv[3], atof(argv[4]));
	if (argc >= 5 && strcmp(argv[1], "race-connect") == 0)
		return race_connect(argv[2], argv[3], atof(argv[4]));
	if (argc >= 3 && strcmp(argv[1], "connect") == 0)
		return connect_path(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "wait-connect") == 0) {
		if (!wait_file(argv[3]))
			return 2;
		return connect_path(argv[2]);
	}
	if (argc >= 4 && strcmp(argv[1], "proxy-other") == 0)
		return proxy_other(argv[2], argv[3]);
	if (argc >= 2 && strcmp(argv[1], "families") == 0)
		return families();
	fprintf(stderr, "usage: see the header of tests/e2e/sealhelper.c\n");
	return 2;
}
