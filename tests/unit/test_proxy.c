/*
 * Tests of the proxy itself (proxy.c) in this process, with real sockets:
 * a local echo server and a small HTTP server on 127.0.0.1, clients
 * speaking CONNECT, SOCKS5 and plain HTTP over TCP and the unix socket,
 * and the events the callback receives (verdict, host, address, bytes).
 * Also: the lifecycle, per-call endpoints (their own rules, their own
 * data, closing one ends its connections before it returns), endpoints
 * opened and closed from several threads at once, the DNS-rebinding rule
 * (a private hosts file), limits and timeouts.
 *
 * Waits are bounded (a test that would hang fails instead) but nothing
 * asserts how long anything took.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <event2/event.h>

#include "libward/net/proxy.h"
#include "ward/ward.h"

#define WAIT_MS	   10000
#define MAX_EVENTS 256

/* ---- servers: echo, and HTTP that answers with what it received --------- */

enum server_kind {
	ECHO,
	HTTP
};

struct server {
	enum server_kind kind;
	int lfd;
	int stop[2];
	unsigned port;
	pthread_t thread;
};

/* One connection of a server, handled in the server's thread. */
struct sconn {
	int fd;
	char *buf;
	size_t len, cap, sent;
	bool eof;
};

/* HTTP: the request is complete when its head and body are in. */
static bool http_complete(const char *b, size_t len, size_t *end)
{
	const char *h = memmem(b, len, "\r\n\r\n", 4);
	size_t hl;
	const char *cl;

	if (!h)
		return false;
	hl = (size_t)(h - b) + 4;
	if (memmem(b, hl, "chunked", 7)) {
		const char *e = memmem(b + hl, len - hl, "0\r\n\r\n", 5);

		if (!e)
			return false;
		*end = (size_t)(e - b) + 5;
		return true;
	}
	cl = memmem(b, hl, "Content-Length: ", 16);
	*end = hl + (cl ? (size_t)atol(cl + 16) : 0);
	return len >= *end;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct sconn conns[64];
	size_t n = 0;

	for (;;) {
		struct pollfd pfd[66];

		pfd[0] = (struct pollfd){s->stop[0], POLLIN, 0};
		pfd[1] = (struct pollfd){s->lfd, n < 64 ? POLLIN : 0, 0};
		for (size_t i = 0; i < n; i++) {
			short ev = 0;

			if (s->kind == ECHO) {
				if (conns[i].sent < conns[i].len)
					ev |= POLLOUT;
				else if (!conns[i].eof)
					ev |= POLLIN;
			} else {
				ev = conns[i].sent ? POLLOUT : POLLIN;
			}
			pfd[2 + i] = (struct pollfd){conns[i].fd, ev, 0};
		}
		if (poll(pfd, 2 + n, -1) < 0)
			continue;
		if (pfd[0].revents)
			break;
		for (size_t i = n; i-- > 0;) {
			struct sconn *c = &conns[i];
			bool drop = false;
			ssize_t r;

			if (!pfd[2 + i].revents)
				continue;
			if (c->sent < c->len && (s->kind == ECHO || c->sent)) {
				r = send(c->fd, c->buf + c->sent,
					 c->len - c->sent, MSG_NOSIGNAL);
				if (r < 0)
					drop = true;
				else
					c->sent += (size_t)r;
				if (c->sent == c->len) {
					if (s->kind == HTTP)
						drop = true;
					else
						c->sent = c->len = 0;
				}
			} else {
				if (c->len + 65536 > c->cap) {
					c->cap = (c->len + 65536) * 2;
					c->buf = realloc(c->buf, c->cap);
				}
				r = read(c->fd, c->buf + c->len, 65536);
				if (r <= 0) {
					c->eof = true;
					drop = s->kind == HTTP || r < 0 ||
					       c->sent == c->len;
				} else {
					c->len += (size_t)r;
				}
				if (s->kind == HTTP && !drop) {
					size_t end;

					if (http_complete(c->buf, c->len,
							  &end)) {
						char head[128];
						int hl = snprintf(
						    head, sizeof(head),
						    "HTTP/1.1 200 OK\r\n"
						    "Content-Length: %zu\r\n"
						    "Connection: keep-alive\r\n"
						    "\r\n",
						    end);
						char *nb = malloc(end + hl);

						memcpy(nb, head, hl);
						memcpy(nb + hl, c->buf, end);
						free(c->buf);
						c->buf = nb;
						c->len = end + (size_t)hl;
						c->cap = c->len;
						c->sent = 0;
						/* Mark "answering". */
						r = send(c->fd, c->buf, 1,
							 MSG_NOSIGNAL);
						c->sent = r > 0 ? 1 : 0;
					}
				}
			}
			if (drop || (c->eof && c->sent >= c->len)) {
				close(c->fd);
				free(c->buf);
				conns[i] = conns[--n];
			}
		}
		if (pfd[1].revents & POLLIN) {
			int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0)
				conns[n++] = (struct sconn){.fd = fd};
		}
	}
	for (size_t i = 0; i < n; i++) {
		close(conns[i].fd);
		free(conns[i].buf);
	}
	return NULL;
}

static void server_start(struct server *s, enum server_kind kind)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(in);

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(listen(s->lfd, 64), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&in, &len), 0);
	s->port = ntohs(in.sin_port);
	assert_int_equal(pipe2(s->stop, O_CLOEXEC), 0);
	assert_int_equal(pthread_create(&s->thread, NULL, server_main, s), 0);
}

static void server_stop(struct server *s)
{
	assert_int_equal(write(s->stop[1], "x", 1), 1);
	pthread_join(s->thread, NULL);
	close(s->lfd);
	close(s->stop[0]);
	close(s->stop[1]);
}

/* ---- events ----------------------------------------------------------------- */

struct rec {
	void *ep;
	enum ward_proxy_protocol protocol;
	enum ward_proxy_verdict verdict;
	char host[256], address[64], reason[512];
	unsigned port;
	uint64_t sent, received;
	int reentry; /* what a call back into the proxy returned */
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ev_cond = PTHREAD_COND_INITIALIZER;
static struct rec events[MAX_EVENTS];
static size_t nevents;
static ward_proxy_endpoint *reenter_ep; /* the callback tries to close it */

static void on_event(void *data, const struct ward_proxy_event *ev)
{
	struct rec r = {.ep = ev->endpoint_data,
			.protocol = ev->protocol,
			.verdict = ev->verdict,
			.port = ev->port,
			.sent = ev->bytes_sent,
			.received = ev->bytes_received};

	(void)data;
	if (ev->host)
		snprintf(r.host, sizeof(r.host), "%s", ev->host);
	if (ev->address)
		snprintf(r.address, sizeof(r.address), "%s", ev->address);
	if (ev->reason)
		snprintf(r.reason, sizeof(r.reason), "%s", ev->reason);
	pthread_mutex_lock(&ev_lock);
	if (reenter_ep)
		r.reentry = ward_proxy_endpoint_close(reenter_ep);
	if (nevents < MAX_EVENTS)
		events[nevents] = r;
	nevents++;
	pthread_cond_broadcast(&ev_cond);
	pthread_mutex_unlock(&ev_lock);
}

static void events_reset(void)
{
	pthread_mutex_lock(&ev_lock);
	nevents = 0;
	pthread_mutex_unlock(&ev_lock);
}

/* Wait until @n events were reported; false when they did not come. */
static bool events_wait(size_t n)
{
	struct timespec until;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	pthread_mutex_lock(&ev_lock);
	while (nevents < n && ok)
		ok = pthread_cond_timedwait(&ev_cond, &ev_lock, &until) == 0;
	ok = nevents >= n;
	pthread_mutex_unlock(&ev_lock);
	return ok;
}

static size_t events_count(void)
{
	size_t n;

	pthread_mutex_lock(&ev_lock);
	n = nevents;
	pthread_mutex_unlock(&ev_lock);
	return n;
}

/* ---- clients --------------------------------------------------------------------- */

static int connect_tcp(unsigned port)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	return fd;
}

static int connect_unix(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	strcpy(sun.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

/* Read up to @cap bytes, until @stop appears, EOF, or the wait ends. */
static size_t recv_until(int fd, char *buf, size_t cap, const char *stop)
{
	size_t len = 0;

	while (len < cap) {
		struct pollfd p = {fd, POLLIN, 0};
		ssize_t n;

		if (poll(&p, 1, WAIT_MS) <= 0)
			break;
		n = read(fd, buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (stop && memmem(buf, len, stop, strlen(stop)))
			break;
	}
	if (len < cap)
		buf[len] = '\0';
	return len;
}

/* Read exactly @len bytes. */
static void recv_exact(int fd, char *buf, size_t len)
{
	size_t got = recv_until(fd, buf, len, NULL);

	assert_int_equal(got, len);
}

/* Whether the peer closed (EOF), within the wait. */
static bool sees_eof(int fd)
{
	char c;
	struct pollfd p = {fd, POLLIN, 0};

	if (poll(&p, 1, WAIT_MS) <= 0)
		return false;
	return read(fd, &c, 1) <= 0;
}

/* CONNECT @target; the answer's head is left in @head. */
static int tunnel(int fd, const char *target, char *head, size_t cap)
{
	char req[512];

	snprintf(req, sizeof(req), "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
		 target, target);
	send_all(fd, req, strlen(req));
	recv_until(fd, head, cap - 1, "\r\n\r\n");
	return strncmp(head, "HTTP/1.1 200 ", 13) == 0 ? 0 : -1;
}

/* SOCKS5 CONNECT by name; returns the reply code. */
static int socks(int fd, const char *host, unsigned port)
{
	unsigned char msg[300] = {5, 1, 0};
	unsigned char rep[10];
	size_t hl = strlen(host);

	send_all(fd, msg, 3);
	recv_exact(fd, (char *)rep, 2);
	assert_int_equal(rep[0], 5);
	assert_int_equal(rep[1], 0);
	msg[0] = 5;
	msg[1] = 1;
	msg[2] = 0;
	msg[3] = 3;
	msg[4] = (unsigned char)hl;
	memcpy(msg + 5, host, hl);
	msg[5 + hl] = (unsigned char)(port >> 8);
	msg[6 + hl] = (unsigned char)port;
	send_all(fd, msg, 7 + hl);
	recv_exact(fd, (char *)rep, 10);
	assert_int_equal(rep[0], 5);
	return rep[1];
}

/* ---- fixtures ----------------------------------------------------------------- */

static char tmpdir[64];
static char hosts_path[128];
static char sock_path[128];

static int setup(void **state)
{
	FILE *f;

	(void)state;
	strcpy(tmpdir, "/tmp/ward-test-proxy.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(hosts_path, sizeof(hosts_path), "%s/hosts", tmpdir);
	snprintf(sock_path, sizeof(sock_path), "%s/p.sock", tmpdir);
	f = fopen(hosts_path, "w");
	if (!f)
		return -1;
	fputs("127.0.0.1 localhost exact.test a.wild.test b.wild.test\n"
	      "127.0.0.1 other.test\n"
	      "::1 localhost6\n",
	      f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	char cmd[160];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A started proxy with TCP and unix listeners and the test hosts file. */
static ward_proxy *proxy_up(char **allow, char **deny, void *data)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	ward_proxy *p = NULL;

	unlink(sock_path);
	o.on_event = on_event;
	o.hosts_file = hosts_path;
	o.endpoint.allow = allow;
	o.endpoint.deny = deny;
	o.endpoint.tcp = true;
	o.endpoint.unix_path = sock_path;
	o.endpoint.data = data;
	if (ward_proxy_new(&p, &o) != 0)
		fail_msg("ward_proxy_new: %s", ward_error_last());
	assert_int_equal(ward_proxy_start(p), 0);
	events_reset();
	return p;
}

/* ---- tests --------------------------------------------------------------------- */

static void test_lifecycle(void **state)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	ward_proxy *p = NULL;
	struct stat st;

	(void)state;
	ward_proxy_free(NULL);
	/* No endpoint at all: a loop with nothing to serve. */
	assert_int_equal(ward_proxy_new(&p, &o), 0);
	assert_int_equal(ward_proxy_port(p), 0);
	assert_null(ward_proxy_unix_path(p));
	assert_null(ward_proxy_main_endpoint(p));
	assert_int_equal(ward_proxy_start(p), 0);
	assert_int_equal(ward_proxy_start(p), -EALREADY);
	assert_int_equal(ward_proxy_stop(p), 0);
	assert_int_equal(ward_proxy_stop(p), 0);
	ward_proxy_free(p);

	/* Created, never started; the socket exists until the free. */
	p = proxy_up(NULL, NULL, NULL);
	assert_true(ward_proxy_port(p) > 0);
	assert_string_equal(ward_proxy_unix_path(p), sock_path);
	assert_int_equal(stat(sock_path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	ward_proxy_free(p);
	assert_int_equal(stat(sock_path, &st), -1);

	o.endpoint.tcp = true;
	assert_int_equal(ward_proxy_new(&p, &o), 0);
	ward_proxy_free(p); /* never started */
}

static void test_bad_options(void **state)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	char *bad[] = {"ok.test", "*", NULL};
	char longpath[200];
	ward_proxy *p = NULL;
	int fd;

	(void)state;
	o.version = 99;
	assert_int_equal(ward_proxy_new(&p, &o), WARD_EINVAL);
	o.version = WARD_PROXY_OPTIONS_VERSION;
	o.endpoint.allow = bad;
	o.endpoint.tcp = true;
	assert_int_equal(ward_proxy_new(&p, &o), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "\"*\""));
	o.endpoint.tcp = false;
	o.endpoint.allow = NULL;
	o.endpoint.deny = bad;
	assert_int_equal(ward_proxy_new(&p, &o), WARD_EINVAL);
	o.endpoint.deny = NULL;

	/* An existing path is never replaced (nor removed). */
	unlink(sock_path);
	fd = open(sock_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	o.endpoint.unix_path = sock_path;
	assert_int_equal(ward_proxy_new(&p, &o), -EEXIST);
	assert_int_equal(access(sock_path, F_OK), 0);
	unlink(sock_path);

	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	o.endpoint.unix_path = longpath;
	assert_int_equal(ward_proxy_new(&p, &o), -ENAMETOOLONG);
	assert_null(p);
}

static void test_connect_tunnel(void **state)
{
	char *allow[] = {"localhost", NULL};
	struct server s;
	ward_proxy *p;
	char head[512], target[64], buf[16];
	int fd;
	int tag;

	(void)state;
	server_start(&s, ECHO);
	p = proxy_up(allow, NULL, &tag);
	fd = connect_tcp(ward_proxy_port(p));
	snprintf(target, sizeof(target), "LocalHost.:%u", s.port);
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), 0);
	send_all(fd, "ping", 4);
	recv_exact(fd, buf, 4);
	assert_memory_equal(buf, "ping", 4);
	close(fd);
	assert_true(events_wait(1));
	assert_ptr_equal(events[0].ep, &tag);
	assert_int_equal(events[0].protocol, WARD_PROXY_PROTO_CONNECT);
	assert_int_equal(events[0].verdict, WARD_PROXY_ALLOWED);
	assert_string_equal(events[0].host, "localhost");
	assert_int_equal(events[0].port, s.port);
	assert_string_equal(events[0].address, "127.0.0.1");
	assert_int_equal(events[0].sent, 4);
	assert_int_equal(events[0].received, 4);
	assert_string_equal(events[0].reason, "");
	ward_proxy_free(p);
	server_stop(&s);
}

static void test_socks_unix(void **state)
{
	char *allow[] = {"localhost", NULL};
	struct server s;
	ward_proxy *p;
	char buf[16];
	int fd;

	(void)state;
	server_start(&s, ECHO);
	p = proxy_up(allow, NULL, NULL);
	fd = connect_unix(ward_proxy_unix_path(p));
	assert_int_equal(socks(fd, "localhost", s.port), 0);
	send_all(fd, "hello", 5);
	recv_exact(fd, buf, 5);
	assert_memory_equal(buf, "hello", 5);
	/* Half-close: the echo server sees the end and closes; so do we. */
	shutdown(fd, SHUT_WR);
	assert_true(sees_eof(fd));
	close(fd);
	assert_true(events_wait(1));
	assert_int_equal(events[0].protocol, WARD_PROXY_PROTO_SOCKS5);
	assert_int_equal(events[0].verdict, WARD_PROXY_ALLOWED);
	assert_int_equal(events[0].sent, 5);
	assert_int_equal(events[0].received, 5);
	assert_string_equal(events[0].reason, "");
	ward_proxy_free(p);
	server_stop(&s);
}

static void test_denials(void **state)
{
	char *allow[] = {"*.test", "localhost", NULL};
	char *deny[] = {"other.test", NULL};
	ward_proxy *p;
	char head[1024];
	int fd;

	(void)state;
	p = proxy_up(allow, deny, NULL);

	fd = connect_tcp(ward_proxy_port(p));
	assert_int_equal(tunnel(fd, "evil.example:443", head, sizeof(head)),
			 -1);
	{
		size_t n = strlen(head);

		/* The rest of the answer, up to the close. */
		recv_until(fd, head + n, sizeof(head) - 1 - n, NULL);
	}
	assert_non_null(strstr(head, "HTTP/1.1 403 Forbidden\r\n"));
	assert_non_null(
	    strstr(head, "\r\nX-Ward-Denied-Host: evil.example\r\n"));
	assert_string_equal(strstr(head, "\r\n\r\n") + 4,
			    "ward: network access to evil.example denied: it "
			    "is not in the allowed domains\n");
	close(fd);

	fd = connect_tcp(ward_proxy_port(p));
	assert_int_equal(tunnel(fd, "other.test:80", head, sizeof(head)), -1);
	assert_non_null(strstr(head, "403"));
	close(fd);

	fd = connect_tcp(ward_proxy_port(p));
	assert_int_equal(tunnel(fd, "127.0.0.1:80", head, sizeof(head)), -1);
	assert_non_null(strstr(head, "403"));
	close(fd);

	fd = connect_unix(ward_proxy_unix_path(p));
	assert_int_equal(socks(fd, "evil.example", 443), 2);
	assert_true(sees_eof(fd));
	close(fd);

	/* Rebinding: a wildcard does not reach a private address. */
	fd = connect_tcp(ward_proxy_port(p));
	assert_int_equal(tunnel(fd, "a.wild.test:80", head, sizeof(head)), -1);
	assert_non_null(strstr(head, "403"));
	close(fd);

	assert_true(events_wait(5));
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(events[i].verdict, WARD_PROXY_DENIED);
	/* Events come in the order connections end; find each by host. */
	for (size_t i = 0; i < 5; i++) {
		const struct rec *e = &events[i];

		if (strcmp(e->host, "other.test") == 0)
			assert_non_null(
			    strstr(e->reason, "denied pattern \"other.test\""));
		else if (strcmp(e->host, "127.0.0.1") == 0)
			assert_non_null(strstr(e->reason, "IP address"));
		else if (strcmp(e->host, "a.wild.test") == 0)
			assert_non_null(strstr(e->reason, "private"));
		else
			assert_string_equal(e->host, "evil.example");
		assert_int_equal(e->sent, 0);
		assert_int_equal(e->received, 0);
	}
	ward_proxy_free(p);
}

static void test_exact_and_literal(void **state)
{
	char *allow[] = {"exact.test", "127.0.0.1", NULL};
	struct server s;
	ward_proxy *p;
	char head[512], target[64], buf[8];
	int fd;

	(void)state;
	server_start(&s, ECHO);
	p = proxy_up(allow, NULL, NULL);
	/* An exact name reaches its private address; so does an address
	 * allowed as such. */
	snprintf(target, sizeof(target), "exact.test:%u", s.port);
	fd = connect_tcp(ward_proxy_port(p));
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), 0);
	send_all(fd, "x", 1);
	recv_exact(fd, buf, 1);
	close(fd);
	snprintf(target, sizeof(target), "127.0.0.1:%u", s.port);
	fd = connect_tcp(ward_proxy_port(p));
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), 0);
	close(fd);
	assert_true(events_wait(2));
	assert_int_equal(events[0].verdict, WARD_PROXY_ALLOWED);
	assert_int_equal(events[1].verdict, WARD_PROXY_ALLOWED);
	ward_proxy_free(p);
	server_stop(&s);
}

static void test_plain_http(void **state)
{
	char *allow[] = {"localhost", NULL};
	struct server s;
	ward_proxy *p;
	char req[512], resp[4096], want[512];
	int fd;

	(void)state;
	server_start(&s, HTTP);
	p = proxy_up(allow, NULL, NULL);
	fd = connect_tcp(ward_proxy_port(p));
	snprintf(req, sizeof(req),
		 "POST http://localhost:%u/up?x=1 HTTP/1.1\r\n"
		 "Host: evil.example\r\n"
		 "Proxy-Connection: keep-alive\r\n"
		 "Transfer-Encoding: chunked\r\n\r\n"
		 "3\r\nabc\r\n0\r\n\r\n"
		 "GET http://evil.example/ HTTP/1.1\r\n\r\n",
		 s.port);
	send_all(fd, req, strlen(req));
	recv_until(fd, resp, sizeof(resp) - 1, NULL);
	/* The server answers with what it received: the rewritten head and
	 * the body, nothing of the pipelined request. */
	snprintf(want, sizeof(want),
		 "POST /up?x=1 HTTP/1.1\r\n"
		 "Transfer-Encoding: chunked\r\n"
		 "Host: localhost:%u\r\n"
		 "Connection: close\r\n\r\n"
		 "3\r\nabc\r\n0\r\n\r\n",
		 s.port);
	assert_non_null(strstr(resp, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(resp, "\r\nConnection: close\r\n"));
	assert_null(strstr(resp, "keep-alive"));
	assert_non_null(strstr(resp, "\r\n\r\n"));
	assert_string_equal(strstr(resp, "\r\n\r\n") + 4, want);
	close(fd);
	assert_true(events_wait(1));
	assert_int_equal(events[0].protocol, WARD_PROXY_PROTO_HTTP);
	assert_int_equal(events[0].verdict, WARD_PROXY_ALLOWED);
	assert_int_equal(events[0].sent, strlen(want));
	assert_true(events[0].received > strlen(want));
	ward_proxy_free(p);
	server_stop(&s);
}

/* 8 MiB each way through a tunnel: content and byte counts. */
struct writer {
	int fd;
	size_t len;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char buf[65536];

	for (size_t off = 0; off < w->len; off += sizeof(buf)) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (char)((off + i) * 7 + 3);
		send_all(w->fd, buf, sizeof(buf));
	}
	shutdown(w->fd, SHUT_WR);
	return NULL;
}

static void test_bulk(void **state)
{
	char *allow[] = {"localhost", NULL};
	struct writer w = {.len = 8u << 20};
	struct server s;
	ward_proxy *p;
	pthread_t th;
	char head[512], target[64];
	char *buf = malloc(w.len + 1);
	size_t got;
	bool same = true;

	(void)state;
	assert_non_null(buf);
	server_start(&s, ECHO);
	p = proxy_up(allow, NULL, NULL);
	w.fd = connect_tcp(ward_proxy_port(p));
	snprintf(target, sizeof(target), "localhost:%u", s.port);
	assert_int_equal(tunnel(w.fd, target, head, sizeof(head)), 0);
	assert_int_equal(pthread_create(&th, NULL, writer_main, &w), 0);
	got = recv_until(w.fd, buf, w.len + 1, NULL);
	pthread_join(th, NULL);
	assert_int_equal(got, w.len);
	for (size_t i = 0; i < w.len && same; i++)
		same = buf[i] == (char)(i * 7 + 3);
	assert_true(same);
	close(w.fd);
	assert_true(events_wait(1));
	assert_int_equal(events[0].sent, w.len);
	assert_int_equal(events[0].received, w.len);
	ward_proxy_free(p);
	server_stop(&s);
	free(buf);
}

static void test_endpoints(void **state)
{
	char *allow_a[] = {"exact.test", NULL};
	char *allow_b[] = {"exact.test", "other.test", NULL};
	struct ward_proxy_endpoint_options ea = {.allow = allow_a, .tcp = true};
	struct ward_proxy_endpoint_options eb = {.allow = allow_b, .tcp = true};
	ward_proxy_endpoint *a = NULL, *b = NULL;
	struct server s;
	ward_proxy *p;
	char head[512], target[64];
	int tag_a, tag_b, fd, fd2;

	(void)state;
	server_start(&s, ECHO);
	p = proxy_up(NULL, NULL, NULL);
	ea.data = &tag_a;
	eb.data = &tag_b;
	ea.unix_path = sock_path; /* taken by the main endpoint */
	assert_int_equal(ward_proxy_endpoint_open(&a, p, &ea), -EEXIST);
	ea.unix_path = NULL;
	assert_int_equal(ward_proxy_endpoint_open(&a, p, &ea), 0);
	assert_int_equal(ward_proxy_endpoint_open(&b, p, &eb), 0);
	assert_true(ward_proxy_endpoint_port(a) != ward_proxy_endpoint_port(b));
	assert_null(ward_proxy_endpoint_path(a));

	/* The same destination: refused on A, allowed on B (a host added
	 * for one call only). */
	snprintf(target, sizeof(target), "other.test:%u", s.port);
	fd = connect_tcp(ward_proxy_endpoint_port(a));
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), -1);
	close(fd);
	assert_true(events_wait(1));
	assert_ptr_equal(events[0].ep, &tag_a);
	assert_int_equal(events[0].verdict, WARD_PROXY_DENIED);
	fd = connect_tcp(ward_proxy_endpoint_port(b));
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), 0);

	/* Closing B ends its open tunnel and reports it before returning;
	 * A keeps serving. */
	snprintf(target, sizeof(target), "exact.test:%u", s.port);
	fd2 = connect_tcp(ward_proxy_endpoint_port(a));
	assert_int_equal(tunnel(fd2, target, head, sizeof(head)), 0);
	assert_int_equal(events_count(), 1);
	assert_int_equal(ward_proxy_endpoint_close(b), 0);
	assert_int_equal(events_count(), 2);
	assert_ptr_equal(events[1].ep, &tag_b);
	assert_string_equal(events[1].reason, "the endpoint was closed");
	assert_true(sees_eof(fd));
	close(fd);
	send_all(fd2, "still", 5);
	recv_exact(fd2, head, 5);
	close(fd2);
	assert_true(events_wait(3));
	assert_ptr_equal(events[2].ep, &tag_a);
	assert_int_equal(ward_proxy_endpoint_close(a), 0);
	assert_int_equal(ward_proxy_endpoint_close(NULL), 0);

	/* After a stop, no endpoint can be opened. */
	ward_proxy_stop(p);
	assert_int_equal(ward_proxy_endpoint_open(&a, p, &ea), -ESHUTDOWN);
	ward_proxy_free(p);
	server_stop(&s);
}

/* Each thread: its own endpoint, a few tunnels through it, close it. */
struct worker {
	ward_proxy *p;
	unsigned server_port;
	int tag;
	int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char *allow[] = {"localhost", NULL};
	struct ward_proxy_endpoint_options eo = {
	    .allow = allow, .tcp = true, .data = &w->tag};
	ward_proxy_endpoint *ep = NULL;
	char head[512], target[64], buf[8];

	if (ward_proxy_endpoint_open(&ep, w->p, &eo) != 0) {
		w->failures++;
		return NULL;
	}
	snprintf(target, sizeof(target), "localhost:%u", w->server_port);
	for (int i = 0; i < 10; i++) {
		int fd = connect_tcp(ward_proxy_endpoint_port(ep));

		if (tunnel(fd, target, head, sizeof(head)) != 0)
			w->failures++;
		send_all(fd, "abc", 3);
		if (recv_until(fd, buf, 3, NULL) != 3)
			w->failures++;
		close(fd);
	}
	if (ward_proxy_endpoint_close(ep) != 0)
		w->failures++;
	return NULL;
}

static void test_threads(void **state)
{
	struct worker w[4];
	pthread_t th[4];
	struct server s;
	ward_proxy *p;
	size_t per[4] = {0};

	(void)state;
	server_start(&s, ECHO);
	p = proxy_up(NULL, NULL, NULL);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.p = p, .server_port = s.port, .tag = i};
		assert_int_equal(
		    pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
	/* Every connection was reported, with its own endpoint's data,
	 * before that endpoint's close returned. */
	assert_int_equal(events_count(), 40);
	for (size_t i = 0; i < 40; i++) {
		int t = *(int *)events[i].ep;

		assert_true(t >= 0 && t < 4);
		per[t]++;
		assert_int_equal(events[i].verdict, WARD_PROXY_ALLOWED);
		assert_int_equal(events[i].sent, 3);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(per[i], 10);
	ward_proxy_free(p);
	server_stop(&s);
}

static void test_reentry(void **state)
{
	char *allow[] = {NULL};
	struct ward_proxy_endpoint_options eo = {.allow = allow, .tcp = true};
	ward_proxy_endpoint *ep = NULL;
	ward_proxy *p;
	char head[512];
	int fd;

	(void)state;
	p = proxy_up(allow, NULL, NULL);
	assert_int_equal(ward_proxy_endpoint_open(&ep, p, &eo), 0);
	pthread_mutex_lock(&ev_lock);
	reenter_ep = ep;
	pthread_mutex_unlock(&ev_lock);
	fd = connect_tcp(ward_proxy_port(p));
	tunnel(fd, "x.test:1", head, sizeof(head));
	close(fd);
	assert_true(events_wait(1));
	pthread_mutex_lock(&ev_lock);
	reenter_ep = NULL;
	pthread_mutex_unlock(&ev_lock);
	assert_int_equal(events[0].reentry, -EDEADLK);
	assert_int_equal(ward_proxy_endpoint_close(ep), 0);
	ward_proxy_free(p);
}

static void test_stop_ends_tunnels(void **state)
{
	char *allow[] = {"localhost", NULL};
	struct server s;
	ward_proxy *p;
	char head[512], target[64];
	int fd;

	(void)state;
	server_start(&s, ECHO);
	p = proxy_up(allow, NULL, NULL);
	fd = connect_tcp(ward_proxy_port(p));
	snprintf(target, sizeof(target), "localhost:%u", s.port);
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), 0);
	ward_proxy_stop(p);
	assert_int_equal(events_count(), 1);
	assert_string_equal(events[0].reason, "the proxy stopped");
	assert_true(sees_eof(fd));
	close(fd);
	ward_proxy_free(p);
	server_stop(&s);
}

static void test_failures(void **state)
{
	char *allow[] = {"127.0.0.1", "localhost", NULL};
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	struct server s;
	ward_proxy *p = NULL;
	char head[1024], target[64];
	unsigned closed_port;
	int fd, fd2;

	(void)state;
	/* A port nobody listens on (the server's, after it stopped). */
	server_start(&s, ECHO);
	closed_port = s.port;
	server_stop(&s);

	o.on_event = on_event;
	o.hosts_file = hosts_path;
	o.endpoint.allow = allow;
	o.endpoint.tcp = true;
	o.max_connections = 1;
	o.request_timeout_ms = 300;
	assert_int_equal(ward_proxy_new(&p, &o), 0);
	assert_int_equal(ward_proxy_start(p), 0);
	events_reset();

	/* Allowed, but nobody listens: 502 and the reason. */
	fd = connect_tcp(ward_proxy_port(p));
	snprintf(target, sizeof(target), "127.0.0.1:%u", closed_port);
	assert_int_equal(tunnel(fd, target, head, sizeof(head)), -1);
	assert_non_null(strstr(head, "HTTP/1.1 502 Bad Gateway\r\n"));
	close(fd);
	assert_true(events_wait(1));
	assert_int_equal(events[0].verdict, WARD_PROXY_ALLOWED);
	assert_non_null(strstr(events[0].reason, "cannot connect"));

	/* One connection at most: the second is closed at once. */
	fd = connect_tcp(ward_proxy_port(p));
	fd2 = connect_tcp(ward_proxy_port(p));
	assert_true(sees_eof(fd2));
	close(fd2);
	assert_true(events_wait(2));
	assert_int_equal(events[1].verdict, WARD_PROXY_INVALID);
	assert_non_null(strstr(events[1].reason, "too many connections"));

	/* The first said nothing: its deadline ends it. */
	assert_true(sees_eof(fd));
	close(fd);
	assert_true(events_wait(3));
	assert_int_equal(events[2].verdict, WARD_PROXY_INVALID);
	assert_non_null(strstr(events[2].reason, "no complete request"));

	/* Junk and SOCKS4 are answered and closed. */
	fd = connect_tcp(ward_proxy_port(p));
	send_all(fd, "\x16\x03\x01\x00\x10", 5);
	recv_until(fd, head, sizeof(head) - 1, "\n");
	assert_non_null(strstr(head, "400 Bad Request"));
	close(fd);
	assert_true(events_wait(4));
	fd = connect_tcp(ward_proxy_port(p));
	send_all(fd, "\x04\x01\x00\x50\x7f\x00\x00\x01\x00", 9);
	assert_true(sees_eof(fd));
	close(fd);
	assert_true(events_wait(5));
	assert_non_null(strstr(events[4].reason, "SOCKS4"));
	ward_proxy_free(p);
}

/*
 * Run @fn in a child with stderr into a pipe; its exit status (or 128 +
 * the signal) and what it wrote (NUL-terminated, bounded) come back.
 */
static int in_child(void (*fn)(void), char *err, size_t len)
{
	int pfd[2], st;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], STDERR_FILENO);
		close(pfd[0]);
		fn();
		_exit(0);
	}
	close(pfd[1]);
	while (n + 1 < len && (r = read(pfd[0], err + n, len - 1 - n)) > 0)
		n += (size_t)r;
	err[n] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A libevent fatal error: event_enable_debug_mode() after a base. */
static void fatal_after_base(void)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	ward_proxy *p = NULL;

	if (ward_proxy_new(&p, &o) != 0)
		_exit(3);
	event_enable_debug_mode();
	_exit(4); /* libevent returned: not what the test is about */
}

static void fatal_handler(const char *message)
{
	dprintf(STDERR_FILENO, "handler: %s\n", message);
	_exit(7);
}

static void fatal_with_handler(void)
{
	ward_fatal_handler_set(fatal_handler);
	fatal_after_base();
}

/* A process at its descriptor limit asks for a proxy. */
static void proxy_at_fd_limit(void)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	struct rlimit rl;
	ward_proxy *p = NULL;
	int fd, err;

	/* Room for two more descriptors only. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fd);
	rl.rlim_cur = rl.rlim_max = (rlim_t)fd + 2;
	if (fd < 0 || setrlimit(RLIMIT_NOFILE, &rl) != 0)
		_exit(3);
	err = ward_proxy_new(&p, &o);
	dprintf(STDERR_FILENO, "%d %s\n", err, ward_error_last());
	_exit(err == -EMFILE ? 0 : 5);
}

/*
 * libevent ends the process itself on some errors (exit(1) when it
 * cannot make its signal socketpair, abort() on a failed assertion),
 * which looked like the command's own status: ward's status and a line
 * saying what happened instead, through ward's fatal handler; and a
 * process at its descriptor limit gets an error, not an exit.
 */
static void test_library_fatal(void **state)
{
	char err[4096];

	(void)state;
	assert_int_equal(in_child(fatal_after_base, err, sizeof(err)), 125);
	assert_non_null(strstr(err, "ward: libevent: "));
	assert_non_null(strstr(err, "event_enable_debug_mode"));
	assert_int_equal(in_child(fatal_with_handler, err, sizeof(err)), 7);
	assert_non_null(strstr(err, "handler: libevent: "));
	assert_int_equal(in_child(proxy_at_fd_limit, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "the process is at its limit"));
	assert_null(strstr(err, "[warn]"));
	assert_null(strstr(err, "[err]"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lifecycle),
	    cmocka_unit_test(test_bad_options),
	    cmocka_unit_test(test_connect_tunnel),
	    cmocka_unit_test(test_socks_unix),
	    cmocka_unit_test(test_denials),
	    cmocka_unit_test(test_exact_and_literal),
	    cmocka_unit_test(test_plain_http),
	    cmocka_unit_test(test_bulk),
	    cmocka_unit_test(test_endpoints),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_reentry),
	    cmocka_unit_test(test_stop_ends_tunnels),
	    cmocka_unit_test(test_failures),
	    cmocka_unit_test(test_library_fatal),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
