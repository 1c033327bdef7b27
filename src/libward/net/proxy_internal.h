/*
 * ward — the proxy's pure parts: host names, patterns and rules
 * (proxy_rules.c), the HTTP request/response heads and chunked framing
 * (proxy_http.c), and SOCKS5 (proxy_socks.c). No I/O, no libevent: each
 * function takes bytes and says what they mean, so the unit tests and the
 * fuzz target drive them directly. proxy.c does the I/O.
 */
#ifndef WARD_PROXY_INTERNAL_H
#define WARD_PROXY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proxy.h"

/* ---- host names and addresses (proxy_rules.c) --------------------------- */

/* Room for a normalized host: 253 name bytes or an IPv6 text, and a NUL. */
#define WARD_HOST_MAX 256

enum ward_host_kind {
	WARD_HOST_NAME = 1,
	WARD_HOST_IPV4,
	WARD_HOST_IPV6,
};

/*
 * Parse and normalize the host @in (@len bytes, no brackets) into @out:
 * an IPv4 address in dotted-quad form, an IPv6 address (no zone id) in
 * inet_ntop's canonical form, or a DNS name in lower case without its one
 * trailing dot. A name is ASCII letters, digits, '-', '_' and '.', with
 * labels of 1-63 bytes, at most 253 bytes; its last label may not look
 * numeric ("127.1", "0x7f", "1.2.3.256"), because resolvers read such
 * names as addresses. Returns the kind, or 0 with @why set (static).
 */
enum ward_host_kind ward_host_parse(char out[WARD_HOST_MAX], const char *in,
				    size_t len, const char **why);

/*
 * Whether @sa (AF_INET or AF_INET6) is a public unicast address: not
 * loopback, unspecified, private, shared (CGNAT), link-local, multicast,
 * reserved, documentation or benchmarking space, nor an IPv4-mapped,
 * NAT64 or 6to4 form of one. False for any other family.
 */
bool ward_addr_is_public(const struct sockaddr *sa);

/* ---- rules ---------------------------------------------------------------- */

struct ward_proxy_rules; /* compiled allow and deny lists */

/*
 * Compile @allow and @deny (NULL-terminated, either NULL). WARD_EINVAL
 * with ward_err detail naming the first bad pattern, or -ENOMEM. The
 * caller frees *out with ward_proxy_rules_free().
 */
int ward_proxy_rules_new(struct ward_proxy_rules **out, char *const *allow,
			 char *const *deny);
void ward_proxy_rules_free(struct ward_proxy_rules *rules);

enum ward_rule_result {
	WARD_RULE_ALLOW_EXACT = 0,  /* an exact pattern (or IP) allows it */
	WARD_RULE_ALLOW_WILDCARD,   /* only a `*.` pattern allows it */
	WARD_RULE_DENY_LISTED,	    /* a deny pattern matches */
	WARD_RULE_DENY_NOT_ALLOWED, /* a name no allow pattern matches */
	WARD_RULE_DENY_ADDRESS,	    /* an IP address not itself allowed */
};

/*
 * Check the normalized @host of @kind (from ward_host_parse). *pattern
 * gets the deciding pattern (owned by @rules) for the two pattern
 * verdicts, NULL otherwise.
 */
enum ward_rule_result
ward_proxy_rules_check(const struct ward_proxy_rules *rules, const char *host,
		       enum ward_host_kind kind, const char **pattern);

static inline bool ward_rule_allows(enum ward_rule_result r)
{
	return r == WARD_RULE_ALLOW_EXACT || r == WARD_RULE_ALLOW_WILDCARD;
}

/* ---- parser results ------------------------------------------------------- */

enum ward_parse {
	WARD_PARSE_OK = 0,
	WARD_PARSE_MORE, /* the bytes so far are a valid prefix: read on */
	WARD_PARSE_BAD,	 /* malformed: *why (static) says how */
};

/* ---- HTTP (proxy_http.c) ------------------------------------------------- */

/* The largest request or response head the proxy reads. */
#define WARD_HTTP_HEAD_MAX (64 * 1024)

/* A parsed client request head; pointers point into the parsed buffer. */
struct ward_http_request {
	enum ward_proxy_protocol protocol; /* CONNECT or HTTP */
	char host[WARD_HOST_MAX];
	enum ward_host_kind host_kind;
	unsigned port;
	size_t head_len; /* bytes of the head, through the empty line */
	const char *method;
	size_t method_len;
	/* HTTP: the origin-form target ("/path?query"), for the upstream */
	const char *path;
	size_t path_len;
	int minor; /* HTTP/1.<minor> */
	/* HTTP request body framing */
	bool chunked;
	bool has_length;
	uint64_t length;
};

/*
 * Parse the request head at the start of @buf (@len bytes). OK: *req is
 * filled (head_len says where the head ends; what follows is body or
 * tunnel data); MORE: no complete head yet (and @len is below
 * WARD_HTTP_HEAD_MAX); BAD: *status is the HTTP status to answer (400,
 * 501, 505, 431) and *why says why.
 *
 * Accepted: "CONNECT host:port HTTP/1.x" and "METHOD http://host[:port]
 * [/path] HTTP/1.x" with CRLF line ends and well-formed header fields. A
 * target with userinfo, another scheme, origin-form, a bad host or port,
 * obs-folded or malformed fields, and (for HTTP) a body framed any other
 * way than one Content-Length or "Transfer-Encoding: chunked" are BAD.
 */
enum ward_parse ward_http_parse_request(struct ward_http_request *req,
					const char *buf, size_t len,
					int *status, const char **why);

/*
 * The head to send upstream for a parsed plain-HTTP request (@buf is the
 * buffer it was parsed from): "METHOD path HTTP/1.x", every field but the
 * hop-by-hop ones (Connection and the fields it names, Keep-Alive,
 * Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Upgrade)
 * and Host, then "Host: <the target's authority>" and "Connection: close".
 * The caller frees *out (*out_len bytes, also NUL-terminated). 0 or
 * -ENOMEM.
 */
int ward_http_rewrite_request(char **out, size_t *out_len,
			      const struct ward_http_request *req,
			      const char *buf);

/* A parsed response head. */
struct ward_http_response {
	int status;
	size_t head_len;
};

/* Like ward_http_parse_request, for a response head ("HTTP/1.x NNN ..."). */
enum ward_parse ward_http_parse_response(struct ward_http_response *resp,
					 const char *buf, size_t len,
					 const char **why);

/*
 * The response head @buf (@resp->head_len bytes, a parsed final response)
 * with Connection, Keep-Alive, Proxy-Connection and the fields Connection
 * names removed and "Connection: close" added. Caller frees *out.
 */
int ward_http_rewrite_response(char **out, size_t *out_len,
			       const struct ward_http_response *resp,
			       const char *buf);

/*
 * The answer the proxy itself gives: "HTTP/1.1 <status> <text>", a
 * text/plain body of one line "ward: <line>\n", Content-Length,
 * "Connection: close", and for 403 "X-Ward-Denied-Host: <denied_host>"
 * (when not NULL). Caller frees *out. 0 or -ENOMEM.
 */
int ward_http_error_response(char **out, size_t *out_len, int status,
			     const char *line, const char *denied_host);

/* Scanner of a chunked body: where it ends, without changing a byte. */
struct ward_http_chunked {
	int state;
	uint64_t size; /* of the chunk being read, or what is left of it */
	unsigned digits;
	unsigned ext; /* bytes of chunk extension or trailer line so far */
};

/*
 * Feed @len bytes of a chunked body. Returns how many of them belong to
 * the body (all of @len unless the body ends inside it), with *done set
 * once the last chunk and the trailer section are complete, or -1 when the
 * framing is malformed (*why set). Start from a zeroed struct.
 */
long ward_http_chunked_feed(struct ward_http_chunked *c, const char *buf,
			    size_t len, bool *done, const char **why);

/* ---- SOCKS5 (proxy_socks.c) ---------------------------------------------- */

/* SOCKS5 reply codes (RFC 1928 §6). */
enum {
	WARD_SOCKS_OK = 0x00,
	WARD_SOCKS_FAILURE = 0x01,
	WARD_SOCKS_NOT_ALLOWED = 0x02, /* "connection not allowed by ruleset" */
	WARD_SOCKS_NET_UNREACHABLE = 0x03,
	WARD_SOCKS_HOST_UNREACHABLE = 0x04,
	WARD_SOCKS_REFUSED = 0x05,
	WARD_SOCKS_TTL_EXPIRED = 0x06,
	WARD_SOCKS_BAD_COMMAND = 0x07,
	WARD_SOCKS_BAD_ADDRESS = 0x08,
};

/*
 * The method-selection message: VER=5, NMETHODS, METHODS. OK: *used bytes
 * were consumed and *no_auth says whether method 0 was offered.
 */
enum ward_parse ward_socks5_parse_greeting(size_t *used, bool *no_auth,
					   const unsigned char *buf, size_t len,
					   const char **why);

struct ward_socks5_request {
	unsigned char command; /* 1 CONNECT (the only one served) */
	char host[WARD_HOST_MAX];
	enum ward_host_kind host_kind;
	unsigned port;
};

/*
 * The request: VER=5, CMD, RSV, ATYP, DST.ADDR, DST.PORT. OK: *used bytes
 * consumed. BAD: *reply is the reply code to send (BAD_COMMAND,
 * BAD_ADDRESS, FAILURE) and *why says why. A domain name is normalized
 * with ward_host_parse (and may turn out to be an IP address).
 */
enum ward_parse ward_socks5_parse_request(size_t *used,
					  struct ward_socks5_request *req,
					  const unsigned char *buf, size_t len,
					  unsigned char *reply,
					  const char **why);

/* The 10-byte reply: VER=5, @code, RSV, IPv4 0.0.0.0, port 0. */
void ward_socks5_reply(unsigned char out[10], unsigned char code);

#endif
