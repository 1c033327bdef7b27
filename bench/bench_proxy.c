/*
 * bench_proxy — what ward's network proxy costs a connection.
 *
 * Everything runs on 127.0.0.1 in this process, except ward-bridge: an
 * echo server and a bulk source (threads), the proxy (its own thread) and
 * the clients (this thread).
 *
 * Connect latency (-n N rounds, interleaved: each round measures every
 * variant once, in an order that rotates): from socket() until one byte
 * went to the echo server and came back.
 *
 *   direct   connect to the server
 *   connect  to the proxy, CONNECT localhost:PORT, wait for 200
 *   socks5   to the proxy, SOCKS5 greeting, reply, CONNECT by name, reply
 *   bridge   to ward-bridge's port, which relays to the proxy's unix socket,
 *            then CONNECT (what a command inside bwrap pays; only with
 *            --bridge PATH, started as `ward-bridge ... -- sleep`)
 *
 * Throughput (-r R paired rounds of -b BYTES, default 100 MiB): the time
 * from socket() to end of file of a download from the bulk source,
 * direct and through a CONNECT tunnel (and through the bridge), in
 * alternating order.
 *
 * Per-call cost (-c C): ward_proxy_new + start + stop + free (a proxy per
 * call) against ward_proxy_endpoint_open + close on a running proxy (an
 * endpoint per call), both with a TCP and a unix listener.
 *
 * Prints a report; --json FILE also writes the numbers. Exit status: 0,
 * 1 when a measurement failed, 2 on a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libward/net/proxy.h"
#include "ward/ward.h"

enum {
	L_DIRECT,
	L_CONNECT,
	L_SOCKS,
	L_BRIDGE,
	L_COUNT
};

static const char *const lat_key[L_COUNT] = {"direct", "connect", "socks5",
					     "bridge"};
static const char *const lat_label[L_COUNT] = {
    "direct TCP connect + 1-byte echo",
    "through the proxy: HTTP CONNECT",
    "through the proxy: SOCKS5 (by name)",
    "through ward-bridge + the proxy: CONNECT",
};

static size_t bulk_bytes = 100u << 20;
static char bulk_chunk[1 << 20];

/* The scratch directory, removed on the way out (the bridge, started
 * with PR_SET_PDEATHSIG, ends by itself). */
static char scratch[] = "/tmp/bench-proxy.XXXXXX";

static void scratch_remove(void)
{
	char path[64];

	snprintf(path, sizeof(path), "%s/proxy.sock", scratch);
	unlink(path);
	snprintf(path, sizeof(path), "%s/call.sock", scratch);
	unlink(path);
	rmdir(scratch);
}

static void fail(const char *what)
{
	fprintf(stderr, "bench_proxy: %s: %s\n", what, strerror(errno));
	scratch_remove();
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(p * (double)(n - 1) + 0.5)];
}

/* ---- servers ---------------------------------------------------------- */

static int listen_any(unsigned *port)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(in);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
	    listen(fd, 512) < 0 ||
	    getsockname(fd, (struct sockaddr *)&in, &len) < 0)
		fail("listen");
	*port = ntohs(in.sin_port);
	return fd;
}

/* Echo one byte per read, until the client closes. */
static void *echo_main(void *arg)
{
	int lfd = *(int *)arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), one = 1;
		char c;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		while (read(fd, &c, 1) == 1)
			if (write(fd, &c, 1) != 1)
				break;
		close(fd);
	}
}

/* Send bulk_bytes to each client, then close. */
static void *bulk_main(void *arg)
{
	int lfd = *(int *)arg;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		size_t left = bulk_bytes;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		while (left) {
			size_t n = left < sizeof(bulk_chunk)
				       ? left
				       : sizeof(bulk_chunk);
			ssize_t w = send(fd, bulk_chunk, n, MSG_NOSIGNAL);

			if (w <= 0)
				break;
			left -= (size_t)w;
		}
		close(fd);
	}
}

/* ---- clients ---------------------------------------------------------- */

static int dial(unsigned port)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		fail("socket");
	if (connect(fd, (struct sockaddr *)&in, sizeof(in)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void xsend(int fd, const void *b, size_t n)
{
	if (send(fd, b, n, MSG_NOSIGNAL) != (ssize_t)n)
		fail("send");
}

static void xrecv(int fd, void *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)b + got, n - got);

		if (r <= 0)
			fail("recv");
		got += (size_t)r;
	}
}

/* CONNECT localhost:@port on @fd and read the 200 answer. */
static void http_connect(int fd, unsigned port)
{
	char req[128], buf[256];
	size_t len = 0;
	int n = snprintf(req, sizeof(req),
			 "CONNECT localhost:%u HTTP/1.1\r\nHost: localhost:%u"
			 "\r\n\r\n",
			 port, port);

	const char *end = NULL;

	xsend(fd, req, (size_t)n);
	/* Peek, so that data right behind the answer stays for the caller. */
	while (!end) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_PEEK);

		if (r <= 0 || (size_t)r == len)
			fail("CONNECT answer");
		len = (size_t)r;
		end = memmem(buf, len, "\r\n\r\n", 4);
	}
	xrecv(fd, buf, (size_t)(end - buf) + 4);
	if (strncmp(buf, "HTTP/1.1 200 ", 13) != 0) {
		errno = EPROTO;
		fail("CONNECT refused");
	}
}

static void socks_connect(int fd, unsigned port)
{
	unsigned char g[3] = {5, 1, 0}, r[10];
	unsigned char q[] = {5,	  1,   0,   3,	 9,   'l', 'o', 'c',
			     'a', 'l', 'h', 'o', 's', 't', 0,	0};

	q[14] = (unsigned char)(port >> 8);
	q[15] = (unsigned char)port;
	xsend(fd, g, 3);
	xrecv(fd, r, 2);
	xsend(fd, q, sizeof(q));
	xrecv(fd, r, 10);
	if (r[1] != 0) {
		errno = EPROTO;
		fail("SOCKS5 refused");
	}
}

struct ports {
	unsigned echo, bulk, proxy, bridge;
};

/* One latency sample of @v, in microseconds. */
static double latency(int v, const struct ports *pt)
{
	double t0 = now_us(), t1;
	int fd;
	char c = 'x';

	switch (v) {
	case L_DIRECT:
		fd = dial(pt->echo);
		break;
	case L_CONNECT:
		fd = dial(pt->proxy);
		if (fd >= 0)
			http_connect(fd, pt->echo);
		break;
	case L_SOCKS:
		fd = dial(pt->proxy);
		if (fd >= 0)
			socks_connect(fd, pt->echo);
		break;
	default:
		fd = dial(pt->bridge);
		if (fd >= 0)
			http_connect(fd, pt->echo);
		break;
	}
	if (fd < 0)
		fail("connect");
	xsend(fd, &c, 1);
	xrecv(fd, &c, 1);
	t1 = now_us();
	close(fd);
	return t1 - t0;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double last_cpu;

/* One download of bulk_bytes; seconds (CPU seconds of this process, all
 * threads, in last_cpu). */
static double download(int via_port, unsigned bulk_port)
{
	static char buf[1 << 20];
	double c0 = cpu_s();
	double t0 = now_us();
	size_t got = 0;
	int fd = dial(via_port ? (unsigned)via_port : bulk_port);

	if (fd < 0)
		fail("connect");
	if (via_port)
		http_connect(fd, bulk_port);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != bulk_bytes) {
		errno = EIO;
		fail("short download");
	}
	last_cpu = cpu_s() - c0;
	return (now_us() - t0) / 1e6;
}

/* ---- the bridge ---------------------------------------------------------- */

static pid_t bridge_start(const char *bridge, const char *sock, unsigned *port)
{
	char portarg[16];
	unsigned p;
	int lfd = listen_any(&p), fd;
	pid_t pid;

	/* A port that was free a moment ago (the bridge binds it itself). */
	close(lfd);
	snprintf(portarg, sizeof(portarg), "%u", p);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		/* Whatever way the bench ends, the bridge ends with it. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		execl(bridge, bridge, "--port", portarg, "--socket", sock, "--",
		      "sleep", "3600", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000; i++) {
		fd = dial(p);
		if (fd >= 0) {
			close(fd);
			*port = p;
			return pid;
		}
		usleep(2000);
	}
	errno = ETIMEDOUT;
	fail("ward-bridge did not listen");
	return -1;
}

/* ---- per call ------------------------------------------------------------ */

static void per_call(int count, const char *dir, double *proxy_us,
		     double *endpoint_us)
{
	char *allow[] = {"localhost", NULL};
	char path[256];
	double *a = calloc((size_t)count, sizeof(double));
	double *b = calloc((size_t)count, sizeof(double));
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	struct ward_proxy_endpoint_options eo = {.allow = allow, .tcp = true};
	ward_proxy *main_proxy = NULL;

	snprintf(path, sizeof(path), "%s/call.sock", dir);
	o.endpoint = eo;
	o.endpoint.unix_path = path;
	eo.unix_path = path;
	if (!a || !b)
		fail("calloc");
	{
		struct ward_proxy_options m = WARD_PROXY_OPTIONS_INIT;

		if (ward_proxy_new(&main_proxy, &m) ||
		    ward_proxy_start(main_proxy))
			fail("proxy");
	}
	for (int i = 0; i < count; i++) {
		ward_proxy *p = NULL;
		ward_proxy_endpoint *ep = NULL;
		double t0 = now_us();

		if (ward_proxy_new(&p, &o) || ward_proxy_start(p))
			fail(ward_error_last());
		ward_proxy_stop(p);
		ward_proxy_free(p);
		a[i] = now_us() - t0;

		t0 = now_us();
		if (ward_proxy_endpoint_open(&ep, main_proxy, &eo))
			fail(ward_error_last());
		ward_proxy_endpoint_close(ep);
		b[i] = now_us() - t0;
	}
	ward_proxy_free(main_proxy);
	*proxy_us = pct(a, (size_t)count, 0.5);
	*endpoint_us = pct(b, (size_t)count, 0.5);
	free(a);
	free(b);
}

/* ---- main ---------------------------------------------------------------- */

static void usage(void)
{
	fputs("usage: bench_proxy [-n LATENCY_ROUNDS] [-r THROUGHPUT_ROUNDS] "
	      "[-b BYTES] [-c PER_CALL]\n"
	      "                   [--bridge PATH] [--json FILE]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	int n = 1000, rounds = 9, calls = 200, nvar;
	const char *bridge = "build/bin/ward-bridge", *json_path = NULL;
	char *dir = scratch, sock[128];
	char *allow[] = {"localhost", NULL};
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	struct ports pt = {0};
	double *lat[L_COUNT], med[L_COUNT], p10[L_COUNT], p90[L_COUNT];
	double *tput[3], tmed[3], *cpu[3], cmed[3], proxy_us, endpoint_us;
	double *ratio[3] = {0}, rmed[3] = {0};
	pthread_t th_echo, th_bulk;
	int echo_fd, bulk_fd;
	ward_proxy *p = NULL;
	pid_t bpid = -1;
	FILE *jf;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "-n"))
			n = atoi(v);
		else if (!strcmp(a, "-r"))
			rounds = atoi(v);
		else if (!strcmp(a, "-b"))
			bulk_bytes = (size_t)atoll(v);
		else if (!strcmp(a, "-c"))
			calls = atoi(v);
		else if (!strcmp(a, "--bridge"))
			bridge = *v ? v : NULL;
		else if (!strcmp(a, "--json"))
			json_path = v;
		else
			usage();
		i++;
	}
	if (n < 1 || rounds < 1 || calls < 1 || bulk_bytes < 1)
		usage();
	if (bridge && access(bridge, X_OK) != 0)
		bridge = NULL;
	signal(SIGPIPE, SIG_IGN);
	memset(bulk_chunk, 'b', sizeof(bulk_chunk));
	if (!mkdtemp(dir))
		fail("mkdtemp");
	snprintf(sock, sizeof(sock), "%s/proxy.sock", dir);

	echo_fd = listen_any(&pt.echo);
	bulk_fd = listen_any(&pt.bulk);
	pthread_create(&th_echo, NULL, echo_main, &echo_fd);
	pthread_create(&th_bulk, NULL, bulk_main, &bulk_fd);

	o.endpoint.allow = allow;
	o.endpoint.tcp = true;
	o.endpoint.unix_path = sock;
	if (ward_proxy_new(&p, &o) || ward_proxy_start(p)) {
		fprintf(stderr, "bench_proxy: %s\n", ward_error_last());
		return 1;
	}
	pt.proxy = ward_proxy_port(p);
	if (bridge)
		bpid = bridge_start(bridge, sock, &pt.bridge);
	nvar = bridge ? L_COUNT : L_BRIDGE;

	/* Warm up every path once. */
	for (int v = 0; v < nvar; v++)
		latency(v, &pt);
	for (int v = 0; v < L_COUNT; v++)
		lat[v] = calloc((size_t)n, sizeof(double));
	for (int i = 0; i < n; i++)
		for (int k = 0; k < nvar; k++) {
			int v = (i + k) % nvar;

			lat[v][i] = latency(v, &pt);
		}
	for (int v = 0; v < nvar; v++) {
		med[v] = pct(lat[v], (size_t)n, 0.5);
		p10[v] = pct(lat[v], (size_t)n, 0.1);
		p90[v] = pct(lat[v], (size_t)n, 0.9);
	}

	for (int v = 0; v < 3; v++) {
		tput[v] = calloc((size_t)rounds, sizeof(double));
		cpu[v] = calloc((size_t)rounds, sizeof(double));
	}
	for (int i = 0; i < rounds; i++) {
		/* Alternate which goes first. */
		for (int k = 0; k < (bridge ? 3 : 2); k++) {
			int v = (i + k) % (bridge ? 3 : 2);
			int via = v == 0   ? 0
				  : v == 1 ? (int)pt.proxy
					   : (int)pt.bridge;

			tput[v][i] = download(via, pt.bulk);
			cpu[v][i] = last_cpu;
		}
	}
	/* Each round's ratio to its own direct run: drift in the machine's
	 * load cancels out. */
	for (int v = 1; v < (bridge ? 3 : 2); v++) {
		ratio[v] = calloc((size_t)rounds, sizeof(double));
		for (int i = 0; i < rounds; i++)
			ratio[v][i] = tput[0][i] / tput[v][i];
		rmed[v] = pct(ratio[v], (size_t)rounds, 0.5);
	}
	for (int v = 0; v < (bridge ? 3 : 2); v++) {
		tmed[v] = pct(tput[v], (size_t)rounds, 0.5);
		cmed[v] = pct(cpu[v], (size_t)rounds, 0.5);
	}

	per_call(calls, dir, &proxy_us, &endpoint_us);

	if (bpid > 0) {
		kill(bpid, SIGTERM);
		waitpid(bpid, NULL, 0);
	}
	ward_proxy_free(p);
	scratch_remove();

	printf("connect latency (%d interleaved rounds; median, p10, p90 in "
	       "µs; socket() to a 1-byte echo)\n",
	       n);
	for (int v = 0; v < nvar; v++)
		printf("  %-44s %8.1f %8.1f %8.1f   +%.1f\n", lat_label[v],
		       med[v], p10[v], p90[v], med[v] - med[L_DIRECT]);
	printf("throughput (%d paired rounds of %zu MiB; median)\n", rounds,
	       bulk_bytes >> 20);
	printf("  %-44s %8.1f MiB/s  (CPU %.0f ms, %.2f CPUs busy)\n", "direct",
	       (double)bulk_bytes / 1048576.0 / tmed[0], cmed[0] * 1e3,
	       cmed[0] / tmed[0]);
	printf("  %-44s %8.1f MiB/s  (%.1f%% of direct; CPU %.0f ms, %.2f "
	       "CPUs busy)\n",
	       "through the proxy (CONNECT)",
	       (double)bulk_bytes / 1048576.0 / tmed[1], 100.0 * rmed[1],
	       cmed[1] * 1e3, cmed[1] / tmed[1]);
	if (bridge)
		printf("  %-44s %8.1f MiB/s  (%.1f%% of direct)\n",
		       "through ward-bridge + the proxy",
		       (double)bulk_bytes / 1048576.0 / tmed[2],
		       100.0 * rmed[2]);
	printf("  (%% of direct: the median over rounds of each round's "
	       "direct/proxied time)\n");
	printf("per call (%d; median)\n", calls);
	printf("  %-44s %8.1f µs\n", "a proxy: new + start + stop + free",
	       proxy_us);
	printf("  %-44s %8.1f µs\n", "an endpoint: open + close", endpoint_us);

	if (json_path) {
		jf = fopen(json_path, "we");
		if (!jf)
			fail("--json");
		fprintf(jf,
			"{\"n\": %d, \"rounds\": %d, \"bytes\": %zu, "
			"\"latency\": {",
			n, rounds, bulk_bytes);
		for (int v = 0; v < nvar; v++)
			fprintf(jf,
				"%s\"%s\": {\"median_us\": %.2f, \"p10_us\": "
				"%.2f, \"p90_us\": %.2f}",
				v ? ", " : "", lat_key[v], med[v], p10[v],
				p90[v]);
		fprintf(jf,
			"}, \"throughput_s\": {\"direct\": %.6f, "
			"\"connect\": %.6f",
			tmed[0], tmed[1]);
		if (bridge)
			fprintf(jf, ", \"bridge\": %.6f", tmed[2]);
		fprintf(jf,
			"}, \"cpu_s\": {\"direct\": %.6f, \"connect\": %.6f",
			cmed[0], cmed[1]);
		fprintf(jf, "}, \"ratio\": {\"connect\": %.4f", rmed[1]);
		if (bridge)
			fprintf(jf, ", \"bridge\": %.4f", rmed[2]);
		fprintf(jf,
			"}, \"per_call_us\": {\"proxy\": %.2f, "
			"\"endpoint\": %.2f}}\n",
			proxy_us, endpoint_us);
		fclose(jf);
	}
	return 0;
}
