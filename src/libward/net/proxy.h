/*
 * ward — the network proxy: a domain allowlist enforced outside the sandbox.
 *
 * Internal to libward for now (not installed); written so that it could
 * move to include/ward/ as it is: opaque handles, an options struct with a
 * version field, int returns with ward_error_last() detail.
 *
 * A proxy is one thread of the calling process running a libevent loop. It
 * serves one or more *endpoints*; an endpoint is a pair of listening
 * sockets (a unix socket path for the bwrap bridge and/or a loopback TCP
 * port for the Landlock runner) with its own allowlist and denylist and its
 * own user data. Every connection accepted on an endpoint speaks, by its
 * first byte, SOCKS5 (0x05) or HTTP (CONNECT tunnels and absolute-form
 * plain-HTTP requests), and is let through only to a destination its
 * endpoint's rules allow (docs/NETWORK.md has the rules).
 *
 * One endpoint per call is how a call gets its own allowlist (an approved
 * escalation adds a host for that call only) and how its connections are
 * attributed to it: the event callback receives the endpoint's data. On the
 * Landlock runner the call may connect only to its own endpoint's port, so
 * one call cannot borrow another call's wider endpoint.
 *
 * Threads: ward_proxy_new(), ward_proxy_start(), ward_proxy_stop() and
 * ward_proxy_free() belong to the owner (one thread at a time). Once the
 * proxy is started, ward_proxy_endpoint_open() and
 * ward_proxy_endpoint_close() may be called from any thread, concurrently,
 * except from inside the event callback (which runs on the proxy thread;
 * they return -EDEADLK there).
 */
#ifndef WARD_PROXY_H
#define WARD_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "ward/common.h"

typedef struct ward_proxy ward_proxy;
typedef struct ward_proxy_endpoint ward_proxy_endpoint;

/** What a connection spoke. */
enum ward_proxy_protocol {
	WARD_PROXY_PROTO_UNKNOWN =
	    0,			  /* closed before it said anything usable */
	WARD_PROXY_PROTO_CONNECT, /* HTTP CONNECT (a tunnel, e.g. HTTPS) */
	WARD_PROXY_PROTO_HTTP,	  /* plain HTTP, one absolute-form request */
	WARD_PROXY_PROTO_SOCKS5,  /* SOCKS5 CONNECT */
};

/** What the rules said. */
enum ward_proxy_verdict {
	/** The destination is allowed. The connection may still have failed
	 *  (name did not resolve, refused, timed out): then @reason says so. */
	WARD_PROXY_ALLOWED = 0,
	/** The rules refused the destination (@host is set; @reason says
	 *  which rule). This is the case for the network-denied marker. */
	WARD_PROXY_DENIED,
	/** Not a request the proxy serves (malformed, SOCKS4, BIND, a bad
	 *  host name, too many connections): no destination was checked. */
	WARD_PROXY_INVALID,
};

/**
 * One connection, reported once when it ends (or is refused). Every string
 * is owned by the proxy and valid only during the callback.
 */
struct ward_proxy_event {
	/** The data of the endpoint the connection came in on. */
	void *endpoint_data;
	/** Connection number, unique per proxy, from 1. */
	uint64_t id;
	enum ward_proxy_protocol protocol;
	enum ward_proxy_verdict verdict;
	/** The destination host, normalized (lower case, no trailing dot, an
	 *  IPv6 address without brackets); NULL when none was understood. */
	const char *host;
	/** The destination port (0 when none was understood). */
	unsigned port;
	/** The address the proxy connected to ("192.0.2.7", "::1"); NULL
	 *  when it connected nowhere. */
	const char *address;
	/** NULL for an allowed connection that ended normally; otherwise one
	 *  line saying why it was refused or failed (the same text the client
	 *  got in its 403 body, without the "ward: " prefix). */
	const char *reason;
	/** Bytes written to the destination (for plain HTTP: the rewritten
	 *  request head and the body). */
	uint64_t bytes_sent;
	/** Bytes read from the destination. */
	uint64_t bytes_received;
	/** An allowed name that the proxy could not resolve (its own lookup,
	 *  outside the sandbox, failed): verdict allowed, a 502. */
	bool unresolved;
};

/**
 * Called on the proxy thread, once per connection, in the order
 * connections end. It must not block for long (it holds up every
 * connection of the proxy) and must not call ward_proxy_* functions.
 */
typedef void (*ward_proxy_event_fn)(void *data,
				    const struct ward_proxy_event *event);

/** An endpoint: where to listen and what to let through. */
struct ward_proxy_endpoint_options {
	/** NULL-terminated domain patterns to allow (NULL: none, everything
	 *  is refused). Syntax: ward_proxy_pattern_check(). Copied. */
	char *const *allow;
	/** NULL-terminated patterns to refuse; they take precedence. */
	char *const *deny;
	/** Listen on this unix socket path (NULL: no unix listener). The path
	 *  must not exist; it is created with mode 0600 and removed when the
	 *  endpoint closes. Put it in a directory only ward can enter. */
	const char *unix_path;
	/** Listen on 127.0.0.1 at an ephemeral port. */
	bool tcp;
	/** Handed back as event->endpoint_data. */
	void *data;
};

#define WARD_PROXY_OPTIONS_VERSION 1

/** Options of ward_proxy_new(). Start from WARD_PROXY_OPTIONS_INIT. */
struct ward_proxy_options {
	unsigned version; /* WARD_PROXY_OPTIONS_VERSION */
	/** Called once per connection; may be NULL. */
	ward_proxy_event_fn on_event;
	void *data; /* first argument of on_event */
	/** The first endpoint, opened by ward_proxy_new() when it has a
	 *  listener (unix_path or tcp); otherwise there is none. */
	struct ward_proxy_endpoint_options endpoint;
	/** Name resolution: the resolver configuration and hosts file
	 *  (NULL: /etc/resolv.conf, /etc/hosts). Search domains are never
	 *  applied: a name is resolved as the absolute name it is. */
	const char *resolv_conf;
	const char *hosts_file;
	/** At most this many connections at once per proxy (0: 1024);
	 *  beyond it a client gets 503 / SOCKS failure. */
	unsigned max_connections;
	/** How long a client may take to send its request, and how long a
	 *  connection to a destination may take, in ms (0: 30000 each). */
	unsigned request_timeout_ms;
	unsigned connect_timeout_ms;
};

#define WARD_PROXY_OPTIONS_INIT                                                \
	{                                                                      \
		.version = WARD_PROXY_OPTIONS_VERSION                          \
	}

/**
 * ward_proxy_new - create a proxy (its loop, its resolver, and the first
 * endpoint when @opts->endpoint has a listener). Nothing is served before
 * ward_proxy_start(), but the listening sockets exist, so the port and
 * path are known and clients connecting early wait in the backlog.
 *
 * Returns 0, WARD_EINVAL (bad options or pattern; detail says which), or
 * -errno (socket, bind: -EEXIST for an existing unix path, -ENAMETOOLONG
 * for one longer than a sockaddr_un holds). The caller frees *out with
 * ward_proxy_free().
 */
int ward_proxy_new(ward_proxy **out, const struct ward_proxy_options *opts);

/**
 * ward_proxy_start - start serving on a new thread (all signals blocked
 * in it). 0, -EALREADY when started before, or -errno from
 * pthread_create.
 */
int ward_proxy_start(ward_proxy *proxy);

/**
 * ward_proxy_stop - close every endpoint's listeners and every connection
 * (reporting each), and join the thread. Endpoints stay allocated until
 * ward_proxy_endpoint_close() or ward_proxy_free(). Idempotent; a proxy
 * cannot be restarted. Returns 0.
 */
int ward_proxy_stop(ward_proxy *proxy);

/**
 * ward_proxy_free - stop (when running) and free the proxy and every
 * endpoint not closed yet; endpoint handles are invalid afterwards.
 * Accepts NULL.
 */
void ward_proxy_free(ward_proxy *proxy);

/** The first endpoint's TCP port (0: none) and unix path (NULL: none). */
unsigned ward_proxy_port(const ward_proxy *proxy);
const char *ward_proxy_unix_path(const ward_proxy *proxy);

/** The first endpoint (NULL when there is none, or it was closed). */
ward_proxy_endpoint *ward_proxy_main_endpoint(ward_proxy *proxy);

/**
 * ward_proxy_endpoint_open - add an endpoint with its own listeners and
 * rules (one per call: see the file comment). The sockets are bound and
 * listening when it returns. Thread-safe once the proxy is started.
 *
 * Returns 0, WARD_EINVAL (no listener, a bad pattern), -ESHUTDOWN (the
 * proxy was stopped), -EDEADLK (called from the event callback), or
 * -errno from socket/bind. The endpoint belongs to the proxy; release it
 * with ward_proxy_endpoint_close().
 */
int ward_proxy_endpoint_open(ward_proxy_endpoint **out, ward_proxy *proxy,
			     const struct ward_proxy_endpoint_options *opts);

/**
 * ward_proxy_endpoint_close - stop listening (the unix path is removed),
 * end the endpoint's connections, report each, and free the endpoint.
 * When it returns, the callback will not run again with this endpoint's
 * data. Thread-safe; accepts NULL. Returns 0, or -EDEADLK when called
 * from the event callback (nothing is done then).
 */
int ward_proxy_endpoint_close(ward_proxy_endpoint *endpoint);

/** The endpoint's TCP port (0: none) and unix path (NULL: none). */
unsigned ward_proxy_endpoint_port(const ward_proxy_endpoint *endpoint);
const char *ward_proxy_endpoint_path(const ward_proxy_endpoint *endpoint);

/**
 * ward_proxy_pattern_check - whether @pattern is a valid allow/deny
 * pattern: a host name (`example.com`), a wildcard `*.` followed by a host
 * name (`*.npmjs.org`: every name under npmjs.org, not npmjs.org itself),
 * or an IP address (`127.0.0.1`, `::1`, `[::1]`). ASCII only (IDNA names
 * as punycode, `xn--…`), case-insensitive, one trailing dot ignored.
 * 0 or WARD_EINVAL with the reason in ward_error_last().
 */
int ward_proxy_pattern_check(const char *pattern);

/** Static names: "connect", "http", "socks5", "unknown";
 *  "allowed", "denied", "invalid". */
const char *ward_proxy_protocol_name(enum ward_proxy_protocol protocol);
const char *ward_proxy_verdict_name(enum ward_proxy_verdict verdict);

#endif
