/*
 * ward — the network proxy (see proxy.h for the interface and
 * docs/NETWORK.md for the rules and the protocols).
 *
 * One thread runs one libevent loop. Each connection goes through:
 *
 *   handshake  a bufferevent reads the request (SOCKS5 or HTTP) until it
 *              parses; the endpoint's rules decide
 *   resolving  evdns resolves a name (never an IP literal)
 *   connecting a non-blocking connect to each acceptable address in turn
 *   relay      two pumps (client→server, server→client) move the bytes
 *   refusing   a bufferevent writes the refusal, then drains and closes
 *
 * The relay does not use bufferevents: libevent 2.1 reads at most 4 KiB
 * per call into an evbuffer and copies every byte twice, which would cost
 * the proxy most of a loopback link's throughput. A pump splices
 * socket → pipe → socket (no copy to user space) and falls back to
 * read/send where splice is refused; the plain-HTTP pumps copy while they
 * rewrite the response head or follow a chunked request body.
 *
 * Other threads talk to the loop only through the command queue (a mutex,
 * a condition variable and one event made active with event_active(),
 * which libevent's pthreads support makes thread-safe).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>

#include "libward/internal.h"
#include "proxy_internal.h"

#define DEFAULT_MAX_CONNECTIONS 1024
#define DEFAULT_TIMEOUT_MS	30000
/* Bytes a pump moves per read or splice. */
#define PUMP_CHUNK (64 * 1024)
/* Rounds of flush-and-fill per callback, so one busy connection cannot
 * starve the others (the events are level-triggered: it resumes). */
#define PUMP_ROUNDS 8
/* After a refusal: how long to drain what the client still sends, so the
 * close does not become a reset that destroys the refusal in flight. */
#define LINGER_MS 2000
/* Addresses tried per name. */
#define MAX_CANDIDATES 8
/* The bufferevent stops reading a handshake beyond this. */
#define HANDSHAKE_MAX (WARD_HTTP_HEAD_MAX + 4096)

enum conn_state {
	ST_HANDSHAKE = 0,
	ST_RESOLVING,
	ST_CONNECTING,
	ST_RELAY,
	ST_REFUSING,
};

enum pump_mode {
	PM_RAW = 0, /* everything, until end of file */
	PM_LIMIT,   /* a Content-Length body: @limit bytes, then stop */
	PM_CHUNKED, /* a chunked body: until its end, then stop */
	PM_HEAD,    /* a response head to rewrite, then PM_RAW */
};

struct conn;

/* One direction of a relay: bytes from @from to @to. */
struct pump {
	struct conn *c;
	int from, to;
	struct event *rd, *wr;
	bool rd_on, wr_on;
	enum pump_mode mode;
	bool copy; /* splice refused: read/send through @buf */
	int pipe[2];
	size_t in_pipe;
	char *buf; /* bytes queued for @to, from @off to @len */
	size_t off, len, cap;
	char *acc; /* PM_HEAD: the response head so far */
	size_t acc_len, acc_cap;
	bool head_sent; /* PM_HEAD: a head (even 1xx) reached the client */
	uint64_t limit;
	struct ward_http_chunked chunked;
	uint64_t taken; /* read from @from */
	uint64_t moved; /* written to @to */
	bool eof;	/* @from ended */
	bool stopped;	/* @from is not read any more (request complete) */
	bool shut;	/* the end was passed on */
};

struct ward_proxy_endpoint {
	ward_proxy *proxy;
	struct ward_proxy_rules *rules;
	void *data;
	int unix_fd, tcp_fd; /* until the listeners own them */
	struct evconnlistener *unix_lev, *tcp_lev;
	char *unix_path;
	unsigned port;
	struct conn *conns; /* doubly linked through conn->prev/next */
	ward_proxy_endpoint *next;
};

struct conn {
	bool unresolved; /* the name lookup failed (ward_proxy_event) */
	ward_proxy *proxy;
	ward_proxy_endpoint *ep; /* NULL once finished */
	struct conn *prev, *next;
	uint64_t id;
	enum conn_state state;
	int cfd, ufd;
	struct bufferevent *bev; /* the client, until the relay */
	struct event *timer;
	struct event *connect_ev;
	enum ward_proxy_protocol protocol;
	enum ward_proxy_verdict verdict;
	bool socks_greeted;
	bool got_bytes;
	bool tunnel; /* CONNECT, SOCKS5: pass both ends of file on */
	char host[WARD_HOST_MAX];
	enum ward_host_kind host_kind;
	unsigned port;
	bool exact; /* allowed by an exact pattern or address */
	char address[INET6_ADDRSTRLEN];
	char *reason;
	/* plain HTTP */
	struct ward_http_request req;
	char *up_head;
	size_t up_head_len;
	/* resolution and connection */
	struct evdns_getaddrinfo_request *dns;
	bool dns_sync, dns_answered;
	int dns_err;
	struct evutil_addrinfo *dns_ai;
	struct sockaddr_storage cand[MAX_CANDIDATES];
	socklen_t cand_len[MAX_CANDIDATES];
	int ncand, icand;
	int last_err;
	struct pump up, down; /* client → server, server → client */
	bool finished;
	bool lingering; /* finished, freed by the pending DNS callback */
};

enum cmd_kind {
	CMD_OPEN,
	CMD_CLOSE,
	CMD_STOP
};

struct cmd {
	enum cmd_kind kind;
	ward_proxy_endpoint *ep;
	bool done;
	int ret;
	struct cmd *next;
};

struct ward_proxy {
	struct event_base *base;
	struct evdns_base *dns;
	struct event *wake;
	pthread_t thread;
	bool started;  /* the thread was created */
	bool stopping; /* CMD_STOP ran; the loop ends when nothing lingers */
	bool paused;   /* a listener ran out of descriptors */
	pthread_mutex_t lock; /* guards the fields below */
	pthread_cond_t cond;
	bool running;	/* the loop may be running: commands go to it */
	bool loop_done; /* the loop has returned */
	struct cmd *queue;
	ward_proxy_endpoint *endpoints;
	ward_proxy_endpoint *main;
	ward_proxy_event_fn on_event;
	void *data;
	unsigned max_conns, nconns, lingering;
	struct timeval request_tv, connect_tv;
	uint64_t next_id;
};

static void conn_finish(struct conn *c, const char *reason);
static void pump_on_io(evutil_socket_t fd, short what, void *arg);

/* ---- small helpers -------------------------------------------------------- */

static struct timeval ms_tv(unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (suseconds_t)(ms % 1000) * 1000};
	return tv;
}

static void set_nodelay(int fd)
{
	int one = 1;

	/* Fails harmlessly on a unix socket. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void set_reason(struct conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Keep the first reason a connection gets: it is the cause. */
static void set_reason(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (c->reason)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	c->reason = s;
}

/* ---- reporting and teardown ----------------------------------------------- */

static void conn_report(struct conn *c)
{
	ward_proxy *p = c->proxy;
	struct ward_proxy_event ev = {
	    .endpoint_data = c->ep ? c->ep->data : NULL,
	    .id = c->id,
	    .protocol = c->protocol,
	    .verdict = c->verdict,
	    .host = c->host[0] ? c->host : NULL,
	    .port = c->host[0] ? c->port : 0,
	    .address = c->address[0] ? c->address : NULL,
	    .reason = c->reason,
	    .bytes_sent = c->up.moved,
	    .bytes_received = c->down.taken,
	    .unresolved = c->unresolved,
	};

	if (p->on_event)
		p->on_event(p->data, &ev);
}

static void pump_release(struct pump *pm)
{
	if (pm->rd)
		event_free(pm->rd);
	if (pm->wr)
		event_free(pm->wr);
	pm->rd = pm->wr = NULL;
	close_fd(&pm->pipe[0]);
	close_fd(&pm->pipe[1]);
	free(pm->buf);
	free(pm->acc);
	pm->buf = pm->acc = NULL;
}

static void conn_free(struct conn *c)
{
	free(c->reason);
	free(c->up_head);
	if (c->dns_ai)
		evutil_freeaddrinfo(c->dns_ai);
	free(c);
}

/* A connection ended: descriptors are free again for paused listeners. */
static void resume_listeners(ward_proxy *p)
{
	p->paused = false;
	for (ward_proxy_endpoint *ep = p->endpoints; ep; ep = ep->next) {
		if (ep->unix_lev)
			evconnlistener_enable(ep->unix_lev);
		if (ep->tcp_lev)
			evconnlistener_enable(ep->tcp_lev);
	}
}

/* The loop may end once a stop has run and no DNS answer is awaited. */
static void maybe_break(ward_proxy *p)
{
	if (p->stopping && p->lingering == 0)
		event_base_loopbreak(p->base);
}

/*
 * End @c: report it (once), close everything, free it — unless a DNS
 * request is in flight, whose callback then frees it (the request cannot
 * be cancelled synchronously). @c must not be used afterwards.
 */
static void conn_finish(struct conn *c, const char *reason)
{
	ward_proxy *p = c->proxy;
	struct evdns_getaddrinfo_request *dns = c->dns;

	if (c->finished)
		return;
	c->finished = true;
	if (reason)
		set_reason(c, "%s", reason);
	conn_report(c);

	if (c->ep) {
		if (c->prev)
			c->prev->next = c->next;
		else
			c->ep->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		c->ep = NULL;
	}
	p->nconns--;
	if (p->paused)
		resume_listeners(p);
	if (c->bev)
		bufferevent_free(c->bev);
	c->bev = NULL;
	if (c->timer)
		event_free(c->timer);
	if (c->connect_ev)
		event_free(c->connect_ev);
	c->timer = c->connect_ev = NULL;
	pump_release(&c->up);
	pump_release(&c->down);
	close_fd(&c->cfd);
	close_fd(&c->ufd);

	if (dns) {
		c->dns = NULL;
		c->lingering = true;
		p->lingering++;
		evdns_getaddrinfo_cancel(dns);
		return;
	}
	conn_free(c);
}

/* ---- refusing --------------------------------------------------------------- */

static void on_linger_read(struct bufferevent *bev, void *arg)
{
	(void)arg;
	evbuffer_drain(bufferevent_get_input(bev),
		       evbuffer_get_length(bufferevent_get_input(bev)));
}

static void on_linger_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	conn_finish(arg, NULL);
}

/* The refusal is written: stop sending, drain what comes until EOF. */
static void on_refusal_written(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct timeval tv = ms_tv(LINGER_MS);

	shutdown(c->cfd, SHUT_WR);
	bufferevent_setcb(bev, on_linger_read, NULL, on_linger_event, c);
	bufferevent_setwatermark(bev, EV_READ, 0, 0);
	bufferevent_enable(bev, EV_READ);
	evtimer_add(c->timer, &tv);
}

/*
 * Refuse @c: verdict and reason for the event, then the protocol's answer
 * (@status for HTTP, @socks for SOCKS5; @denied_host adds the
 * X-Ward-Denied-Host field), written before the connection closes.
 */
static void conn_refuse(struct conn *c, enum ward_proxy_verdict verdict,
			int status, unsigned char socks,
			const char *denied_host, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void conn_refuse(struct conn *c, enum ward_proxy_verdict verdict,
			int status, unsigned char socks,
			const char *denied_host, const char *fmt, ...)
{
	struct timeval tv = ms_tv(LINGER_MS);
	unsigned char reply[10];
	char *line = NULL, *text = NULL;
	size_t text_len = 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	c->verdict = verdict;
	if (n >= 0)
		set_reason(c, "%s", line);
	if (c->connect_ev)
		event_free(c->connect_ev);
	c->connect_ev = NULL;
	close_fd(&c->ufd);
	c->state = ST_REFUSING;

	if (!c->bev || n < 0) {
		free(line);
		conn_finish(c, NULL);
		return;
	}
	bufferevent_disable(c->bev, EV_READ);
	if (c->protocol == WARD_PROXY_PROTO_SOCKS5) {
		if (c->socks_greeted) {
			ward_socks5_reply(reply, socks);
			bufferevent_write(c->bev, reply, sizeof(reply));
		}
	} else if (c->protocol != WARD_PROXY_PROTO_UNKNOWN &&
		   ward_http_error_response(&text, &text_len, status, line,
					    denied_host) == 0) {
		bufferevent_write(c->bev, text, text_len);
		free(text);
	}
	free(line);
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		on_refusal_written(c->bev, c);
		return;
	}
	bufferevent_setcb(c->bev, NULL, on_refusal_written, on_linger_event, c);
	bufferevent_enable(c->bev, EV_WRITE);
	evtimer_add(c->timer, &tv);
}

/* ---- pumps ------------------------------------------------------------------ */

static int buf_append(struct pump *pm, const void *data, size_t len)
{
	if (pm->off == pm->len)
		pm->off = pm->len = 0;
	if (pm->len + len > pm->cap) {
		size_t cap = pm->cap ? pm->cap : PUMP_CHUNK;
		char *n;

		while (cap < pm->len + len)
			cap *= 2;
		n = realloc(pm->buf, cap);
		if (!n)
			return -ENOMEM;
		pm->buf = n;
		pm->cap = cap;
	}
	memcpy(pm->buf + pm->len, data, len);
	pm->len += len;
	return 0;
}

static bool pump_pending(const struct pump *pm)
{
	return pm->off < pm->len || pm->in_pipe > 0;
}

/* Move what a refused splice left in the pipe into @buf (copy mode). */
static int pump_unpipe(struct pump *pm)
{
	char tmp[4096];

	pm->copy = true;
	while (pm->in_pipe > 0) {
		ssize_t n = read(pm->pipe[0], tmp, sizeof(tmp));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		if (buf_append(pm, tmp, (size_t)n))
			return -ENOMEM;
		pm->in_pipe -= (size_t)n;
	}
	return 0;
}

/* Write what is queued. 0: all written; 1: would block; -errno. */
static int pump_flush(struct pump *pm)
{
	ssize_t n;

again:
	while (pm->off < pm->len) {
		n = send(pm->to, pm->buf + pm->off, pm->len - pm->off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 1
								       : -errno;
		}
		pm->off += (size_t)n;
		pm->moved += (uint64_t)n;
	}
	pm->off = pm->len = 0;
	while (pm->in_pipe > 0) {
		n = splice(pm->pipe[0], NULL, pm->to, NULL, pm->in_pipe,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			if (e == EAGAIN || e == EWOULDBLOCK)
				return 1;
			if (e == EINVAL || e == ENOSYS || e == EOPNOTSUPP) {
				int r = pump_unpipe(pm);

				if (r)
					return r;
				goto again;
			}
			return -e;
		}
		pm->in_pipe -= (size_t)n;
		pm->moved += (uint64_t)n;
	}
	return 0;
}

/* A response head arrived whole or not at all: queue it for the client. */
static int pump_head(struct pump *pm)
{
	struct conn *c = pm->c;
	struct ward_http_response resp;
	const char *why;
	char *out = NULL;
	size_t out_len = 0;
	int r;

	for (;;) {
		enum ward_parse res =
		    ward_http_parse_response(&resp, pm->acc, pm->acc_len, &why);

		if (res == WARD_PARSE_MORE && pm->acc_len < pm->acc_cap)
			return 0;
		if (res != WARD_PARSE_OK)
			break; /* pass it on unchanged */
		if (resp.status >= 100 && resp.status < 200 &&
		    resp.status != 101) {
			/* An interim response: as it is; the final follows. */
			if (buf_append(pm, pm->acc, resp.head_len))
				return -ENOMEM;
			pm->head_sent = true;
			pm->acc_len -= resp.head_len;
			memmove(pm->acc, pm->acc + resp.head_len, pm->acc_len);
			continue;
		}
		r = ward_http_rewrite_response(&out, &out_len, &resp, pm->acc);
		if (r)
			return -ENOMEM;
		r = buf_append(pm, out, out_len);
		free(out);
		if (r)
			return -ENOMEM;
		pm->acc_len -= resp.head_len;
		memmove(pm->acc, pm->acc + resp.head_len, pm->acc_len);
		break;
	}
	(void)c;
	if (pm->acc_len && buf_append(pm, pm->acc, pm->acc_len))
		return -ENOMEM;
	pm->head_sent = true;
	free(pm->acc);
	pm->acc = NULL;
	pm->acc_len = pm->acc_cap = 0;
	pm->mode = PM_RAW;
	return 0;
}

/* PM_HEAD: read into the head buffer, then look at it. */
static int pump_fill_head(struct pump *pm)
{
	struct conn *c = pm->c;
	ssize_t n;

	if (!pm->acc) {
		pm->acc_cap = WARD_HTTP_HEAD_MAX;
		pm->acc = malloc(pm->acc_cap);
		if (!pm->acc)
			return -ENOMEM;
	}
	do {
		n = read(pm->from, pm->acc + pm->acc_len,
			 pm->acc_cap - pm->acc_len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (n == 0) {
		pm->eof = true;
		if (pm->acc_len) {
			if (buf_append(pm, pm->acc, pm->acc_len))
				return -ENOMEM;
		} else if (!pm->head_sent) {
			char *text = NULL;
			size_t len = 0;

			set_reason(c,
				   "%s closed the connection without a "
				   "response",
				   c->host);
			if (ward_http_error_response(
				&text, &len, 502,
				"the server closed the connection without a "
				"response",
				NULL) == 0) {
				(void)buf_append(pm, text, len);
				free(text);
			}
		}
		pm->mode = PM_RAW;
		return 1;
	}
	pm->taken += (uint64_t)n;
	pm->acc_len += (size_t)n;
	return pump_head(pm) < 0 ? -ENOMEM : 1;
}

/*
 * Read once from @from. 1: progress (bytes queued, or end of file);
 * 0: would block; -errno (-EPROTO: a malformed chunked body).
 */
static int pump_fill(struct pump *pm)
{
	size_t want = PUMP_CHUNK;
	ssize_t n;

	if (pm->mode == PM_HEAD)
		return pump_fill_head(pm);
	if (pm->mode == PM_LIMIT && pm->limit < want)
		want = (size_t)pm->limit;

	if (!pm->copy && pm->mode != PM_CHUNKED) {
		if (pm->pipe[0] < 0 &&
		    pipe2(pm->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			pm->pipe[0] = pm->pipe[1] = -1;
			pm->copy = true;
		}
		while (!pm->copy) {
			n = splice(pm->from, NULL, pm->pipe[1], NULL, want,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n > 0) {
				pm->in_pipe += (size_t)n;
				goto got;
			}
			if (n == 0) {
				pm->eof = true;
				return 1;
			}
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno != EINVAL && errno != ENOSYS &&
			    errno != EOPNOTSUPP)
				return -errno;
			pm->copy = true;
		}
	}

	if (!pm->buf) {
		pm->buf = malloc(PUMP_CHUNK);
		if (!pm->buf)
			return -ENOMEM;
		pm->cap = PUMP_CHUNK;
	}
	pm->off = pm->len = 0;
	if (want > pm->cap)
		want = pm->cap;
	do {
		n = read(pm->from, pm->buf, want);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	if (n == 0) {
		pm->eof = true;
		return 1;
	}
	if (pm->mode == PM_CHUNKED) {
		const char *why;
		bool done;
		long k = ward_http_chunked_feed(&pm->chunked, pm->buf,
						(size_t)n, &done, &why);

		pm->taken += (uint64_t)n;
		if (k < 0)
			return -EPROTO;
		pm->len = (size_t)k; /* bytes after the body are dropped */
		if (done)
			pm->stopped = true;
		return 1;
	}
	pm->len = (size_t)n;
got:
	pm->taken += (uint64_t)n;
	if (pm->mode == PM_LIMIT) {
		pm->limit -= (uint64_t)n;
		if (pm->limit == 0)
			pm->stopped = true;
	}
	return 1;
}

static void pump_arm(struct pump *pm)
{
	bool pending = pump_pending(pm);
	bool want_rd = !pending && !pm->eof && !pm->stopped;

	if (want_rd != pm->rd_on) {
		if (want_rd)
			event_add(pm->rd, NULL);
		else
			event_del(pm->rd);
		pm->rd_on = want_rd;
	}
	if (pending != pm->wr_on) {
		if (pending)
			event_add(pm->wr, NULL);
		else
			event_del(pm->wr);
		pm->wr_on = pending;
	}
}

/* A pump passed its end on. Returns true when @c was finished. */
static bool conn_pump_done(struct conn *c, struct pump *pm)
{
	if (c->tunnel) {
		shutdown(pm->to, SHUT_WR);
		if (c->up.shut && c->down.shut) {
			conn_finish(c, NULL);
			return true;
		}
		return false;
	}
	/* Plain HTTP: the response ended, or the client left mid-request. */
	conn_finish(c, pm == &c->up ? "the client closed the connection "
				      "before its request was complete"
				    : NULL);
	return true;
}

static const char *errno_text(int e)
{
	return e == EPROTO ? "malformed chunked request body" : strerror(e);
}

/* Move bytes until one side would block; may finish the connection. */
static void pump_run(struct pump *pm)
{
	struct conn *c = pm->c;
	int r;

	for (int round = 0; round < PUMP_ROUNDS; round++) {
		r = pump_flush(pm);
		if (r < 0) {
			set_reason(c, "writing to the %s: %s",
				   pm == &c->up ? "server" : "client",
				   strerror(-r));
			conn_finish(c, NULL);
			return;
		}
		if (r > 0 || pm->eof || pm->stopped)
			break;
		r = pump_fill(pm);
		if (r < 0) {
			set_reason(c, "reading from the %s: %s",
				   pm == &c->up ? "client" : "server",
				   errno_text(-r));
			conn_finish(c, NULL);
			return;
		}
		if (r == 0)
			break;
	}
	if (!pump_pending(pm) && pm->eof && !pm->shut) {
		pm->shut = true;
		if (conn_pump_done(c, pm))
			return;
	}
	pump_arm(pm);
}

static void pump_on_io(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pump_run(arg);
}

static int pump_init(struct pump *pm, struct conn *c, int from, int to)
{
	pm->c = c;
	pm->from = from;
	pm->to = to;
	pm->pipe[0] = pm->pipe[1] = -1;
	pm->limit = UINT64_MAX;
	pm->rd = event_new(c->proxy->base, from, EV_READ | EV_PERSIST,
			   pump_on_io, pm);
	pm->wr = event_new(c->proxy->base, to, EV_WRITE | EV_PERSIST,
			   pump_on_io, pm);
	return pm->rd && pm->wr ? 0 : -ENOMEM;
}

/*
 * The destination is connected: answer the client (@reply, may be NULL),
 * hand both sockets to the pumps and let the loop drive them.
 */
static void conn_start_relay(struct conn *c, const void *reply,
			     size_t reply_len)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t in_len = evbuffer_get_length(in);
	size_t out_len = evbuffer_get_length(out);
	int r = 0;

	if (pump_init(&c->up, c, c->cfd, c->ufd) ||
	    pump_init(&c->down, c, c->ufd, c->cfd)) {
		conn_finish(c, "out of memory");
		return;
	}
	/* What the client's bufferevent has not sent yet goes first. */
	if (out_len)
		r |= buf_append(&c->down, evbuffer_pullup(out, -1), out_len);
	if (reply_len)
		r |= buf_append(&c->down, reply, reply_len);

	if (c->protocol == WARD_PROXY_PROTO_HTTP) {
		r |= buf_append(&c->up, c->up_head, c->up_head_len);
		c->down.mode = PM_HEAD;
		if (c->req.chunked) {
			c->up.mode = PM_CHUNKED;
		} else {
			c->up.mode = PM_LIMIT;
			c->up.limit = c->req.has_length ? c->req.length : 0;
			c->up.stopped = c->up.limit == 0;
		}
	}
	/* Bytes the client sent after its request: body or tunnel data. */
	if (in_len && !c->up.stopped) {
		const char *early = (const char *)evbuffer_pullup(in, -1);
		size_t take = in_len;

		c->up.taken += in_len;
		if (c->up.mode == PM_LIMIT && take >= c->up.limit) {
			take = (size_t)c->up.limit;
			c->up.stopped = true;
		} else if (c->up.mode == PM_CHUNKED) {
			const char *why;
			bool done;
			long k = ward_http_chunked_feed(&c->up.chunked, early,
							take, &done, &why);

			if (k < 0) {
				conn_finish(c, "malformed chunked request "
					       "body");
				return;
			}
			take = (size_t)k;
			c->up.stopped = done;
		}
		if (c->up.mode == PM_LIMIT)
			c->up.limit -= take;
		r |= buf_append(&c->up, early, take);
	}
	if (r) {
		conn_finish(c, "out of memory");
		return;
	}
	/* Disable first: a freed bufferevent is finalized later, and its read
	 * event must not take bytes from the pumps meanwhile. */
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	bufferevent_free(c->bev);
	c->bev = NULL;
	evtimer_del(c->timer);
	c->state = ST_RELAY;
	pump_arm(&c->up);
	pump_arm(&c->down);
}

/* ---- connecting --------------------------------------------------------------- */

static void conn_try_connect(struct conn *c);

static void conn_connected(struct conn *c)
{
	static const char connect_ok[] =
	    "HTTP/1.1 200 Connection established\r\n\r\n";
	const struct sockaddr *sa =
	    (const struct sockaddr *)&c->cand[c->icand - 1];
	unsigned char socks[10];

	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
			  c->address, sizeof(c->address));
	else
		inet_ntop(AF_INET6,
			  &((const struct sockaddr_in6 *)sa)->sin6_addr,
			  c->address, sizeof(c->address));
	set_nodelay(c->ufd);
	switch (c->protocol) {
	case WARD_PROXY_PROTO_CONNECT:
		conn_start_relay(c, connect_ok, sizeof(connect_ok) - 1);
		break;
	case WARD_PROXY_PROTO_SOCKS5:
		ward_socks5_reply(socks, WARD_SOCKS_OK);
		conn_start_relay(c, socks, sizeof(socks));
		break;
	default:
		conn_start_relay(c, NULL, 0);
		break;
	}
}

static void on_connect(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	int err = 0;
	socklen_t len = sizeof(err);

	(void)fd;
	event_free(c->connect_ev);
	c->connect_ev = NULL;
	if (what & EV_TIMEOUT)
		err = ETIMEDOUT;
	else if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err == 0) {
		conn_connected(c);
		return;
	}
	close_fd(&c->ufd);
	c->last_err = err;
	conn_try_connect(c);
}

static unsigned char socks_code(int err)
{
	switch (err) {
	case ECONNREFUSED:
		return WARD_SOCKS_REFUSED;
	case ENETUNREACH:
		return WARD_SOCKS_NET_UNREACHABLE;
	case EHOSTUNREACH:
	case ETIMEDOUT:
		return WARD_SOCKS_HOST_UNREACHABLE;
	default:
		return WARD_SOCKS_FAILURE;
	}
}

/* Try the next candidate address; refuse when none is left. */
static void conn_try_connect(struct conn *c)
{
	ward_proxy *p = c->proxy;

	while (c->icand < c->ncand) {
		const struct sockaddr *sa =
		    (const struct sockaddr *)&c->cand[c->icand];
		socklen_t len = c->cand_len[c->icand];
		int fd;

		c->icand++;
		fd = socket(sa->sa_family,
			    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			c->last_err = errno;
			continue;
		}
		c->ufd = fd;
		if (connect(fd, sa, len) == 0) {
			conn_connected(c);
			return;
		}
		if (errno == EINPROGRESS) {
			c->connect_ev =
			    event_new(p->base, fd, EV_WRITE, on_connect, c);
			if (!c->connect_ev) {
				conn_finish(c, "out of memory");
				return;
			}
			event_add(c->connect_ev, &p->connect_tv);
			c->state = ST_CONNECTING;
			return;
		}
		c->last_err = errno;
		close_fd(&c->ufd);
	}
	conn_refuse(c, WARD_PROXY_ALLOWED, c->last_err == ETIMEDOUT ? 504 : 502,
		    socks_code(c->last_err), NULL,
		    "cannot connect to %s%s%s:%u: %s",
		    c->host_kind == WARD_HOST_IPV6 ? "[" : "", c->host,
		    c->host_kind == WARD_HOST_IPV6 ? "]" : "", c->port,
		    strerror(c->last_err ? c->last_err : EHOSTUNREACH));
}

static void add_candidate(struct conn *c, const struct sockaddr *sa,
			  socklen_t len)
{
	if (c->ncand >= MAX_CANDIDATES || len > sizeof(c->cand[0]))
		return;
	memcpy(&c->cand[c->ncand], sa, len);
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)&c->cand[c->ncand])->sin_port =
		    htons((uint16_t)c->port);
	else
		((struct sockaddr_in6 *)&c->cand[c->ncand])->sin6_port =
		    htons((uint16_t)c->port);
	c->cand_len[c->ncand++] = len;
}

/* The name resolved (or not): keep the addresses the rules let through. */
static void conn_resolved(struct conn *c, int err, struct evutil_addrinfo *ai)
{
	int filtered = 0;

	c->dns_ai = ai;
	if (err) {
		c->unresolved = true;
		conn_refuse(c, WARD_PROXY_ALLOWED, 502,
			    WARD_SOCKS_HOST_UNREACHABLE, NULL,
			    "cannot resolve %s: %s", c->host,
			    evutil_gai_strerror(err));
		return;
	}
	for (struct evutil_addrinfo *a = ai; a; a = a->ai_next) {
		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		/*
		 * DNS rebinding: a wildcard pattern trusts a whole zone,
		 * whose names anyone there may point at 127.0.0.1 or the
		 * cloud metadata address. Only an exact name reaches
		 * non-public addresses.
		 */
		if (!c->exact && !ward_addr_is_public(a->ai_addr)) {
			filtered++;
			continue;
		}
		add_candidate(c, a->ai_addr, (socklen_t)a->ai_addrlen);
	}
	evutil_freeaddrinfo(ai);
	c->dns_ai = NULL;
	if (c->ncand == 0 && filtered) {
		conn_refuse(c, WARD_PROXY_DENIED, 403, WARD_SOCKS_NOT_ALLOWED,
			    c->host,
			    "network access to %s denied: it resolves only "
			    "to private or local addresses, which a "
			    "wildcard pattern does not reach (allow the "
			    "exact name to reach them)",
			    c->host);
		return;
	}
	if (c->ncand == 0) {
		c->unresolved = true;
		conn_refuse(c, WARD_PROXY_ALLOWED, 502,
			    WARD_SOCKS_HOST_UNREACHABLE, NULL,
			    "cannot resolve %s: no address", c->host);
		return;
	}
	conn_try_connect(c);
}

static void on_resolved(int err, struct evutil_addrinfo *ai, void *arg)
{
	struct conn *c = arg;
	ward_proxy *p = c->proxy;

	c->dns = NULL;
	if (c->lingering) {
		if (ai)
			evutil_freeaddrinfo(ai);
		p->lingering--;
		conn_free(c);
		maybe_break(p);
		return;
	}
	if (c->dns_sync) {
		/* Answered from the hosts file inside evdns_getaddrinfo(). */
		c->dns_answered = true;
		c->dns_err = err;
		c->dns_ai = ai;
		return;
	}
	conn_resolved(c, err, ai);
}

static void conn_resolve(struct conn *c)
{
	struct evutil_addrinfo hints = {
	    .ai_family = AF_UNSPEC,
	    .ai_socktype = SOCK_STREAM,
	    .ai_protocol = IPPROTO_TCP,
	    .ai_flags = EVUTIL_AI_ADDRCONFIG,
	};
	struct evdns_getaddrinfo_request *req;

	c->state = ST_RESOLVING;
	c->dns_sync = true;
	req = evdns_getaddrinfo(c->proxy->dns, c->host, NULL, &hints,
				on_resolved, c);
	c->dns_sync = false;
	if (c->dns_answered) {
		struct evutil_addrinfo *ai = c->dns_ai;

		c->dns_ai = NULL;
		conn_resolved(c, c->dns_err, ai);
		return;
	}
	if (!req) {
		c->unresolved = true;
		conn_refuse(c, WARD_PROXY_ALLOWED, 502,
			    WARD_SOCKS_HOST_UNREACHABLE, NULL,
			    "cannot resolve %s", c->host);
		return;
	}
	c->dns = req;
}

/* ---- the decision --------------------------------------------------------------- */

/* The request named its destination: decide, then resolve or connect. */
static void conn_decide(struct conn *c)
{
	const char *pattern = NULL;
	enum ward_rule_result r = ward_proxy_rules_check(
	    c->ep->rules, c->host, c->host_kind, &pattern);

	/* The request is complete: its deadline is over (resolution and
	 * each connection attempt have their own). */
	evtimer_del(c->timer);
	switch (r) {
	case WARD_RULE_DENY_LISTED:
		conn_refuse(c, WARD_PROXY_DENIED, 403, WARD_SOCKS_NOT_ALLOWED,
			    c->host,
			    "network access to %s denied: it matches the "
			    "denied pattern \"%s\"",
			    c->host, pattern);
		return;
	case WARD_RULE_DENY_NOT_ALLOWED:
		conn_refuse(c, WARD_PROXY_DENIED, 403, WARD_SOCKS_NOT_ALLOWED,
			    c->host,
			    "network access to %s denied: it is not in the "
			    "allowed domains",
			    c->host);
		return;
	case WARD_RULE_DENY_ADDRESS:
		conn_refuse(c, WARD_PROXY_DENIED, 403, WARD_SOCKS_NOT_ALLOWED,
			    c->host,
			    "network access to %s denied: an IP address is "
			    "reachable only when that address itself is "
			    "allowed",
			    c->host);
		return;
	case WARD_RULE_ALLOW_EXACT:
	case WARD_RULE_ALLOW_WILDCARD:
		break;
	}
	c->verdict = WARD_PROXY_ALLOWED;
	c->exact = r == WARD_RULE_ALLOW_EXACT;
	if (c->host_kind == WARD_HOST_NAME) {
		conn_resolve(c);
		return;
	}
	/* An allowed IP address: no resolution, no rebinding check (the
	 * address was allowed as such). */
	if (c->host_kind == WARD_HOST_IPV4) {
		struct sockaddr_in in = {.sin_family = AF_INET};

		inet_pton(AF_INET, c->host, &in.sin_addr);
		add_candidate(c, (struct sockaddr *)&in, sizeof(in));
	} else {
		struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

		inet_pton(AF_INET6, c->host, &in6.sin6_addr);
		add_candidate(c, (struct sockaddr *)&in6, sizeof(in6));
	}
	conn_try_connect(c);
}

/* ---- the handshake ------------------------------------------------------------------ */

/* SOCKS5: the greeting, then the request. */
static void handshake_socks(struct conn *c, struct evbuffer *in)
{
	unsigned char reply[2] = {5, 0};
	struct ward_socks5_request req;
	const unsigned char *data;
	const char *why = NULL;
	unsigned char code;
	enum ward_parse r;
	size_t used = 0;
	bool no_auth = false;

	if (!c->socks_greeted) {
		data = evbuffer_pullup(in, -1);
		r = ward_socks5_parse_greeting(&used, &no_auth, data,
					       evbuffer_get_length(in), &why);
		if (r == WARD_PARSE_MORE)
			return;
		if (r == WARD_PARSE_BAD) {
			conn_refuse(c, WARD_PROXY_INVALID, 400, 0, NULL, "%s",
				    why);
			return;
		}
		evbuffer_drain(in, used);
		if (!no_auth) {
			reply[1] = 0xff; /* no acceptable method */
			bufferevent_write(c->bev, reply, sizeof(reply));
			conn_refuse(c, WARD_PROXY_INVALID, 400, 0, NULL,
				    "SOCKS5 without authentication only");
			return;
		}
		bufferevent_write(c->bev, reply, sizeof(reply));
		c->socks_greeted = true;
	}
	data = evbuffer_pullup(in, -1);
	r = ward_socks5_parse_request(&used, &req, data,
				      evbuffer_get_length(in), &code, &why);
	if (r == WARD_PARSE_MORE)
		return;
	if (r == WARD_PARSE_BAD) {
		conn_refuse(c, WARD_PROXY_INVALID, 400, code, NULL, "%s", why);
		return;
	}
	evbuffer_drain(in, used);
	memcpy(c->host, req.host, sizeof(c->host));
	c->host_kind = req.host_kind;
	c->port = req.port;
	c->tunnel = true;
	conn_decide(c);
}

static void handshake_http(struct conn *c, struct evbuffer *in)
{
	size_t len = evbuffer_get_length(in);
	const char *data = (const char *)evbuffer_pullup(in, -1);
	const char *why = NULL;
	int status = 400;
	enum ward_parse r;

	r = ward_http_parse_request(&c->req, data, len, &status, &why);
	if (r == WARD_PARSE_MORE)
		return;
	if (r == WARD_PARSE_BAD) {
		c->protocol =
		    c->req.protocol ? c->req.protocol : WARD_PROXY_PROTO_HTTP;
		if (c->req.host_kind) {
			memcpy(c->host, c->req.host, sizeof(c->host));
			c->port = c->req.port;
		}
		conn_refuse(c, WARD_PROXY_INVALID, status, 0, NULL, "%s", why);
		return;
	}
	c->protocol = c->req.protocol;
	memcpy(c->host, c->req.host, sizeof(c->host));
	c->host_kind = c->req.host_kind;
	c->port = c->req.port;
	if (c->protocol == WARD_PROXY_PROTO_HTTP) {
		if (ward_http_rewrite_request(&c->up_head, &c->up_head_len,
					      &c->req, data)) {
			conn_finish(c, "out of memory");
			return;
		}
	} else {
		c->tunnel = true;
	}
	/* The request's pointers into @data die with this drain. */
	evbuffer_drain(in, c->req.head_len);
	c->req.method = c->req.path = NULL;
	conn_decide(c);
}

static void on_handshake_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	unsigned char first;

	if (c->state != ST_HANDSHAKE)
		return; /* already decided: later bytes wait in the buffer */
	if (evbuffer_get_length(in) == 0)
		return;
	c->got_bytes = true;
	if (c->protocol == WARD_PROXY_PROTO_UNKNOWN) {
		evbuffer_copyout(in, &first, 1);
		if (first == 5) {
			c->protocol = WARD_PROXY_PROTO_SOCKS5;
		} else if (first == 4) {
			conn_refuse(c, WARD_PROXY_INVALID, 400, 0, NULL,
				    "SOCKS4 is not supported (use SOCKS5)");
			return;
		}
	}
	if (c->protocol == WARD_PROXY_PROTO_SOCKS5)
		handshake_socks(c, in);
	else
		handshake_http(c, in);
}

static void on_handshake_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	/* A client may half-close once its request is out; the relay will
	 * pass the end of file on. Only an error, or an end before the
	 * request is complete, ends the connection here. */
	if ((what & BEV_EVENT_EOF) && c->state != ST_HANDSHAKE) {
		bufferevent_disable(c->bev, EV_READ);
		return;
	}
	if (!c->got_bytes) {
		conn_finish(c, "closed before sending a request");
		return;
	}
	conn_finish(c, (what & BEV_EVENT_EOF) ? "closed before its request "
						"was complete"
					      : "connection error");
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->state == ST_HANDSHAKE) {
		set_reason(c, "no complete request within %ld ms",
			   (long)c->proxy->request_tv.tv_sec * 1000 +
			       (long)c->proxy->request_tv.tv_usec / 1000);
	}
	conn_finish(c, NULL);
}

/* ---- listeners ---------------------------------------------------------------------- */

static void on_accept(struct evconnlistener *lev, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	ward_proxy_endpoint *ep = arg;
	ward_proxy *p = ep->proxy;
	struct conn *c;

	(void)lev;
	(void)sa;
	(void)salen;
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->proxy = p;
	c->ep = ep;
	c->id = ++p->next_id;
	c->cfd = fd;
	c->ufd = -1;
	/* Until the rules decide, the connection named no destination. */
	c->verdict = WARD_PROXY_INVALID;
	c->up.pipe[0] = c->up.pipe[1] = c->down.pipe[0] = c->down.pipe[1] = -1;
	c->next = ep->conns;
	if (ep->conns)
		ep->conns->prev = c;
	ep->conns = c;
	p->nconns++;
	if (p->nconns > p->max_conns) {
		set_reason(c, "too many connections (the limit is %u)",
			   p->max_conns);
		conn_finish(c, NULL);
		return;
	}
	set_nodelay(fd);
	c->bev = bufferevent_socket_new(p->base, fd, 0);
	c->timer = evtimer_new(p->base, on_timer, c);
	if (!c->bev || !c->timer) {
		conn_finish(c, "out of memory");
		return;
	}
	bufferevent_setcb(c->bev, on_handshake_read, NULL, on_handshake_event,
			  c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, HANDSHAKE_MAX);
	bufferevent_enable(c->bev, EV_READ);
	evtimer_add(c->timer, &p->request_tv);
}

static void on_accept_error(struct evconnlistener *lev, void *arg)
{
	ward_proxy_endpoint *ep = arg;
	int e = EVUTIL_SOCKET_ERROR();

	/* Out of descriptors, accept() fails at once every time: the
	 * listener would spin. Pause it; the next connection to end
	 * resumes every listener (resume_listeners). */
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
		evconnlistener_disable(lev);
		ep->proxy->paused = true;
	}
}

/* A listening socket: the unix path (mode 0600) or 127.0.0.1:0. */
static int listen_unix(int *out, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path))
		return ward_err(-ENAMETOOLONG,
				"proxy socket path longer than %zu bytes: %s",
				sizeof(sun.sun_path) - 1, path);
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ward_err(-errno, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = errno == EADDRINUSE ? -EEXIST : -errno;
		ward_err(ret, "cannot listen on %s: %s", path,
			 errno == EADDRINUSE ? "it exists" : strerror(errno));
		close(fd);
		return ret;
	}
	if (chmod(path, 0600) < 0 || listen(fd, SOMAXCONN) < 0) {
		ret = ward_err(-errno, "cannot listen on %s: %s", path,
			       strerror(errno));
		unlink(path);
		close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

static int listen_tcp(int *out, unsigned *port)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(in);
	int fd, ret;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ward_err(-errno, "socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&in, sizeof(in)) < 0 ||
	    listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&in, &len) < 0) {
		ret = ward_err(-errno, "cannot listen on 127.0.0.1: %s",
			       strerror(errno));
		close(fd);
		return ret;
	}
	*out = fd;
	*port = ntohs(in.sin_port);
	return 0;
}

/* ---- endpoints (on the loop thread, or before/after it runs) ------------------------------ */

static void endpoint_free(ward_proxy_endpoint *ep)
{
	if (ep->unix_lev)
		evconnlistener_free(ep->unix_lev);
	if (ep->tcp_lev)
		evconnlistener_free(ep->tcp_lev);
	close_fd(&ep->unix_fd);
	close_fd(&ep->tcp_fd);
	if (ep->unix_path) {
		unlink(ep->unix_path);
		free(ep->unix_path);
	}
	ward_proxy_rules_free(ep->rules);
	free(ep);
}

/* Start accepting: the listeners take the sockets over. */
static int endpoint_listen(ward_proxy_endpoint *ep)
{
	ward_proxy *p = ep->proxy;
	unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC;

	if (ep->unix_fd >= 0) {
		ep->unix_lev = evconnlistener_new(p->base, on_accept, ep, flags,
						  0, ep->unix_fd);
		if (!ep->unix_lev)
			return -ENOMEM;
		ep->unix_fd = -1;
		evconnlistener_set_error_cb(ep->unix_lev, on_accept_error);
	}
	if (ep->tcp_fd >= 0) {
		ep->tcp_lev = evconnlistener_new(p->base, on_accept, ep, flags,
						 0, ep->tcp_fd);
		if (!ep->tcp_lev)
			return -ENOMEM;
		ep->tcp_fd = -1;
		evconnlistener_set_error_cb(ep->tcp_lev, on_accept_error);
	}
	ep->next = p->endpoints;
	p->endpoints = ep;
	return 0;
}

/* Stop listening and end every connection; the endpoint stays. */
static void endpoint_shut(ward_proxy_endpoint *ep, const char *why)
{
	if (ep->unix_lev)
		evconnlistener_free(ep->unix_lev);
	if (ep->tcp_lev)
		evconnlistener_free(ep->tcp_lev);
	ep->unix_lev = ep->tcp_lev = NULL;
	while (ep->conns)
		conn_finish(ep->conns, why);
}

static void endpoint_unlink(ward_proxy_endpoint *ep)
{
	ward_proxy *p = ep->proxy;

	for (ward_proxy_endpoint **pp = &p->endpoints; *pp; pp = &(*pp)->next) {
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	}
	if (p->main == ep)
		p->main = NULL;
}

static void run_cmd_here(ward_proxy *p, struct cmd *cmd, int *ret)
{
	ward_proxy_endpoint *ep;

	switch (cmd->kind) {
	case CMD_OPEN:
		/* Queued behind a stop: the loop is ending. */
		if (p->stopping) {
			*ret = -ESHUTDOWN;
			break;
		}
		*ret = endpoint_listen(cmd->ep);
		if (*ret) {
			/* Freed here, on the loop's thread. */
			if (cmd->ep->unix_lev)
				evconnlistener_free(cmd->ep->unix_lev);
			if (cmd->ep->tcp_lev)
				evconnlistener_free(cmd->ep->tcp_lev);
			cmd->ep->unix_lev = cmd->ep->tcp_lev = NULL;
		}
		break;
	case CMD_CLOSE:
		endpoint_shut(cmd->ep, "the endpoint was closed");
		endpoint_unlink(cmd->ep);
		endpoint_free(cmd->ep);
		break;
	case CMD_STOP:
		for (ep = p->endpoints; ep; ep = ep->next)
			endpoint_shut(ep, "the proxy stopped");
		p->stopping = true;
		maybe_break(p);
		break;
	}
}

/* Commands from other threads, run on the loop thread. */
static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	ward_proxy *p = arg;
	struct cmd *list, *cmd, *rev = NULL;
	int ret;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&p->lock);
	list = p->queue;
	p->queue = NULL;
	pthread_mutex_unlock(&p->lock);
	/* The queue is a stack; run in arrival order. */
	while (list) {
		cmd = list;
		list = cmd->next;
		cmd->next = rev;
		rev = cmd;
	}
	while (rev) {
		cmd = rev;
		rev = cmd->next;
		ret = 0;
		run_cmd_here(p, cmd, &ret);
		pthread_mutex_lock(&p->lock);
		cmd->ret = ret;
		cmd->done = true;
		pthread_cond_broadcast(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * Run @cmd on the loop thread and wait for it — or right here when no
 * loop runs. -EDEADLK from the loop thread itself (the event callback).
 */
static int run_cmd(ward_proxy *p, struct cmd *cmd)
{
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	if (p->running && pthread_equal(pthread_self(), p->thread)) {
		pthread_mutex_unlock(&p->lock);
		return ward_err(-EDEADLK, "the proxy cannot be changed from "
					  "its own event callback");
	}
	if (!p->running || p->loop_done) {
		/* No loop runs: do it here, under the lock, so that two
		 * threads closing endpoints after a stop do not race. */
		if (cmd->kind == CMD_OPEN && p->started)
			ret = ward_err(-ESHUTDOWN, "the proxy was stopped");
		else
			run_cmd_here(p, cmd, &ret);
		pthread_mutex_unlock(&p->lock);
		return ret;
	}
	cmd->next = p->queue;
	p->queue = cmd;
	event_active(p->wake, EV_READ, 0);
	while (!cmd->done)
		pthread_cond_wait(&p->cond, &p->lock);
	ret = cmd->ret;
	pthread_mutex_unlock(&p->lock);
	if (ret == -ESHUTDOWN)
		return ward_err(ret, "the proxy was stopped");
	if (ret)
		return ward_err(ret, "out of memory");
	return 0;
}

static int endpoint_new(ward_proxy_endpoint **out, ward_proxy *p,
			const struct ward_proxy_endpoint_options *o)
{
	ward_proxy_endpoint *ep;
	int ret;

	if (!o->unix_path && !o->tcp)
		return ward_err(WARD_EINVAL, "a proxy endpoint needs a unix "
					     "path or a TCP port");
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return ward_err(-ENOMEM, "out of memory");
	ep->proxy = p;
	ep->data = o->data;
	ep->unix_fd = ep->tcp_fd = -1;
	ret = ward_proxy_rules_new(&ep->rules, o->allow, o->deny);
	if (ret)
		goto out_free;
	if (o->unix_path) {
		ep->unix_path = strdup(o->unix_path);
		if (!ep->unix_path) {
			ret = ward_err(-ENOMEM, "out of memory");
			goto out_free;
		}
		ret = listen_unix(&ep->unix_fd, o->unix_path);
		if (ret) {
			/* Not ours: endpoint_free must not unlink it. */
			free(ep->unix_path);
			ep->unix_path = NULL;
			goto out_free;
		}
	}
	if (o->tcp) {
		ret = listen_tcp(&ep->tcp_fd, &ep->port);
		if (ret)
			goto out_free;
	}
	*out = ep;
	return 0;

out_free:
	endpoint_free(ep);
	return ret;
}

/* ---- the thread ------------------------------------------------------------------------- */

static void *proxy_main(void *arg)
{
	ward_proxy *p = arg;
	struct cmd *cmd;

	event_base_loop(p->base, EVLOOP_NO_EXIT_ON_EMPTY);

	/* Commands that came in after the stop: an open fails, a close is
	 * done by its caller (run_cmd sees loop_done and runs it there). */
	pthread_mutex_lock(&p->lock);
	p->loop_done = true;
	while ((cmd = p->queue) != NULL) {
		p->queue = cmd->next;
		if (cmd->kind == CMD_CLOSE) {
			endpoint_unlink(cmd->ep);
			endpoint_free(cmd->ep);
		}
		cmd->ret = cmd->kind == CMD_OPEN ? -ESHUTDOWN : 0;
		cmd->done = true;
	}
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static pthread_once_t evthread_once = PTHREAD_ONCE_INIT;
static int evthread_ret;
/* libevent's last message on this thread (its log callback). */
static _Thread_local char evlog_last[256];

/*
 * libevent's messages are kept, not printed: its "[warn] …" lines would
 * land in the middle of the command's output. The last one is the reason
 * of a failure that follows (evlog_reason) and of a fatal error.
 */
static void on_evlog(int severity, const char *msg)
{
	(void)severity;
	snprintf(evlog_last, sizeof(evlog_last), "%s", msg ? msg : "");
}

/*
 * libevent ends the process after this callback returns (exit(1), or
 * abort() for a failed assertion), with a status that could be the
 * command's own: ward's fatal path ends it instead, with ward's status
 * and what libevent said.
 */
static void on_evfatal(int err)
{
	ward_fatal("libevent: %s (error %d)",
		   evlog_last[0] ? evlog_last : "a fatal error", err);
}

/* ": what libevent said last", or "" when it said nothing. */
static const char *evlog_reason(char *buf, size_t len)
{
	if (!evlog_last[0])
		return "";
	snprintf(buf, len, ": %s", evlog_last);
	return buf;
}

/* libevent's locking: event_active() from other threads, and the
 * process-wide state (the DNS transaction-id generator) shared by
 * several proxies. Must happen before the first event_base; so must
 * the callbacks, which are process-wide too. */
static void evthread_init(void)
{
	event_set_log_callback(on_evlog);
	event_set_fatal_callback(on_evfatal);
	evthread_ret = evthread_use_pthreads();
}

/*
 * libevent exits the process when it cannot make an event base's signal
 * socketpair (evsig_init_): the descriptors a base needs (epoll, the
 * socketpair, the notification eventfd, a spare for the resolver) are
 * checked first, so a process at its limit gets an error, not an exit.
 * Another thread may still take them in between: on_evfatal is the
 * backstop.
 */
#define EVBASE_FDS 5
static int reserve_fds(void)
{
	int fds[EVBASE_FDS], n, err = 0;

	for (n = 0; n < EVBASE_FDS; n++) {
		fds[n] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			err = errno;
			break;
		}
	}
	while (n > 0)
		close(fds[--n]);
	if (err == EMFILE || err == ENFILE)
		return ward_err(-err,
				"cannot create the event loop: it needs %d "
				"descriptors and the process is at its limit "
				"(ulimit -n): %s",
				EVBASE_FDS, strerror(err));
	return 0;
}

/* ---- the interface -------------------------------------------------------------------- */

int ward_proxy_new(ward_proxy **out, const struct ward_proxy_options *opts)
{
	ward_proxy *p;
	const struct ward_proxy_endpoint_options *eo;
	int ret;

	if (!opts || opts->version != WARD_PROXY_OPTIONS_VERSION)
		return ward_err(WARD_EINVAL,
				"proxy options version %u, "
				"expected %u",
				opts ? opts->version : 0,
				WARD_PROXY_OPTIONS_VERSION);
	pthread_once(&evthread_once, evthread_init);
	if (evthread_ret)
		return ward_err(-ENOMEM, "libevent thread support failed");

	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->on_event = opts->on_event;
	p->data = opts->data;
	p->max_conns = opts->max_connections ? opts->max_connections
					     : DEFAULT_MAX_CONNECTIONS;
	p->request_tv =
	    ms_tv(opts->request_timeout_ms ? opts->request_timeout_ms
					   : DEFAULT_TIMEOUT_MS);
	p->connect_tv =
	    ms_tv(opts->connect_timeout_ms ? opts->connect_timeout_ms
					   : DEFAULT_TIMEOUT_MS);

	ret = reserve_fds();
	if (ret)
		goto out_free;
	evlog_last[0] = '\0';
	p->base = event_base_new();
	if (!p->base) {
		char why[sizeof(evlog_last) + 2];

		ret = ward_err(-ENOMEM, "cannot create the event loop%s",
			       evlog_reason(why, sizeof(why)));
		goto out_free;
	}
	p->wake = event_new(p->base, -1, 0, on_wake, p);
	/* No nameservers yet: they come from the resolver configuration,
	 * without its search domains (a name is resolved as written). */
	p->dns = evdns_base_new(p->base, 0);
	if (!p->wake || !p->dns) {
		ret = ward_err(-ENOMEM, "out of memory");
		goto out_free;
	}
	(void)evdns_base_resolv_conf_parse(
	    p->dns, DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC,
	    opts->resolv_conf ? opts->resolv_conf : "/etc/resolv.conf");
	evdns_base_search_clear(p->dns);
	(void)evdns_base_load_hosts(p->dns, opts->hosts_file ? opts->hosts_file
							     : "/etc/hosts");

	eo = &opts->endpoint;
	if (eo->unix_path || eo->tcp) {
		ret = endpoint_new(&p->main, p, eo);
		if (ret)
			goto out_free;
		ret = endpoint_listen(p->main);
		if (ret) {
			endpoint_free(p->main);
			p->main = NULL;
			ret = ward_err(-ENOMEM, "out of memory");
			goto out_free;
		}
	} else if (eo->allow || eo->deny) {
		ret = ward_err(WARD_EINVAL, "proxy rules without a listener");
		goto out_free;
	}
	*out = p;
	return 0;

out_free:
	ward_proxy_free(p);
	return ret;
}

int ward_proxy_start(ward_proxy *p)
{
	sigset_t all, old;
	int ret;

	if (p->started)
		return ward_err(-EALREADY, "the proxy was started before");
	/* The proxy thread takes no signals: they belong to the caller's
	 * threads, and a SIGPIPE from a splice into a closed socket stays
	 * pending on this thread instead of killing the process. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->thread, NULL, proxy_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ward_err(-ret, "cannot start the proxy thread: %s",
				strerror(ret));
	p->started = true;
	pthread_mutex_lock(&p->lock);
	p->running = true;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

int ward_proxy_stop(ward_proxy *p)
{
	struct cmd cmd = {.kind = CMD_STOP};

	if (p->stopping)
		return 0;
	run_cmd(p, &cmd);
	if (p->started) {
		pthread_join(p->thread, NULL);
		pthread_mutex_lock(&p->lock);
		p->running = false;
		pthread_mutex_unlock(&p->lock);
	}
	return 0;
}

void ward_proxy_free(ward_proxy *p)
{
	if (!p)
		return;
	if (p->base)
		ward_proxy_stop(p);
	while (p->endpoints) {
		ward_proxy_endpoint *ep = p->endpoints;

		p->endpoints = ep->next;
		endpoint_free(ep);
	}
	if (p->dns)
		evdns_base_free(p->dns, 1);
	if (p->wake)
		event_free(p->wake);
	if (p->base)
		event_base_free(p->base);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

unsigned ward_proxy_port(const ward_proxy *p)
{
	return p->main ? p->main->port : 0;
}

const char *ward_proxy_unix_path(const ward_proxy *p)
{
	return p->main ? p->main->unix_path : NULL;
}

ward_proxy_endpoint *ward_proxy_main_endpoint(ward_proxy *p)
{
	return p->main;
}

int ward_proxy_endpoint_open(ward_proxy_endpoint **out, ward_proxy *p,
			     const struct ward_proxy_endpoint_options *opts)
{
	ward_proxy_endpoint *ep = NULL;
	struct cmd cmd = {.kind = CMD_OPEN};
	int ret;

	ret = endpoint_new(&ep, p, opts);
	if (ret)
		return ret;
	cmd.ep = ep;
	ret = run_cmd(p, &cmd);
	if (ret) {
		/* Not linked in, its listeners freed: ours alone. */
		endpoint_free(ep);
		return ret;
	}
	*out = ep;
	return 0;
}

int ward_proxy_endpoint_close(ward_proxy_endpoint *ep)
{
	struct cmd cmd = {.kind = CMD_CLOSE, .ep = ep};

	if (!ep)
		return 0;
	return run_cmd(ep->proxy, &cmd);
}

unsigned ward_proxy_endpoint_port(const ward_proxy_endpoint *ep)
{
	return ep->port;
}

const char *ward_proxy_endpoint_path(const ward_proxy_endpoint *ep)
{
	return ep->unix_path;
}

const char *ward_proxy_protocol_name(enum ward_proxy_protocol protocol)
{
	switch (protocol) {
	case WARD_PROXY_PROTO_CONNECT:
		return "connect";
	case WARD_PROXY_PROTO_HTTP:
		return "http";
	case WARD_PROXY_PROTO_SOCKS5:
		return "socks5";
	default:
		return "unknown";
	}
}

const char *ward_proxy_verdict_name(enum ward_proxy_verdict verdict)
{
	switch (verdict) {
	case WARD_PROXY_ALLOWED:
		return "allowed";
	case WARD_PROXY_DENIED:
		return "denied";
	default:
		return "invalid";
	}
}
