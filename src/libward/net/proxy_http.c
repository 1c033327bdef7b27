/*
 * ward — the proxy's HTTP/1.x parsing: request heads (CONNECT and
 * absolute-form), the head sent upstream, response heads and the chunked
 * body scanner.
 *
 * Strict where strictness protects the policy: the proxy re-emits every
 * header line itself, and decides where a request body ends, so anything
 * two parsers could read two ways (bare CR or LF, obs-fold, whitespace
 * before a colon, two Content-Length fields, Content-Length with
 * Transfer-Encoding, a Connection field naming the framing fields) is
 * refused rather than guessed at.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libward/internal.h"
#include "proxy_internal.h"

/* Chunk extensions and trailer lines longer than this are refused. */
#define CHUNK_LINE_MAX 4096

static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* A field value byte: VCHAR, obs-text, SP or HTAB. */
static bool is_value_char(unsigned char c)
{
	return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

static bool ieq(const char *a, size_t alen, const char *b)
{
	return alen == strlen(b) && strncasecmp(a, b, alen) == 0;
}

/* The length of the head (through the CRLF CRLF), or 0 when incomplete. */
static size_t head_end(const char *buf, size_t len)
{
	const char *p;

	if (len > WARD_HTTP_HEAD_MAX)
		len = WARD_HTTP_HEAD_MAX;
	p = memmem(buf, len, "\r\n\r\n", 4);
	return p ? (size_t)(p - buf) + 4 : 0;
}

/* One header field line of a head (pointers into the head). */
struct field {
	const char *name, *value, *line;
	size_t nlen, vlen, line_len; /* line_len includes the CRLF */
};

/*
 * The next field of the head: @*pos starts just past the start line's
 * CRLF; @end is the head's length minus the final CRLF. Returns 1 with
 * *f set, 0 at the end, -1 when the line is malformed (*why set).
 */
static int next_field(struct field *f, const char *buf, size_t *pos, size_t end,
		      const char **why)
{
	const char *line = buf + *pos, *eol, *v, *ve;
	size_t n;

	if (*pos >= end)
		return 0;
	eol = memmem(line, end - *pos, "\r\n", 2);
	if (!eol) {
		*why = "header line without CRLF";
		return -1;
	}
	n = 0;
	while (line + n < eol && is_tchar((unsigned char)line[n]))
		n++;
	if (n == 0) {
		*why = line[0] == ' ' || line[0] == '\t'
			   ? "obsolete line folding in a header"
			   : "malformed header field name";
		return -1;
	}
	if (line + n >= eol || line[n] != ':') {
		*why = "malformed header field (no colon right after the "
		       "name)";
		return -1;
	}
	v = line + n + 1;
	for (const char *c = v; c < eol; c++) {
		if (!is_value_char((unsigned char)*c)) {
			*why = "control character in a header value";
			return -1;
		}
	}
	while (v < eol && (*v == ' ' || *v == '\t'))
		v++;
	ve = eol;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
		ve--;
	f->line = line;
	f->line_len = (size_t)(eol - line) + 2;
	f->name = line;
	f->nlen = n;
	f->value = v;
	f->vlen = (size_t)(ve - v);
	*pos += f->line_len;
	return 1;
}

/* Parse a decimal port (1-65535) of @len bytes; 0 when invalid. */
static unsigned parse_port(const char *s, size_t len)
{
	unsigned v = 0;

	if (len == 0 || len > 5)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	return v >= 1 && v <= 65535 ? v : 0;
}

/*
 * Split the authority "host[:port]" or "[v6][:port]" (no userinfo) into
 * req->host/host_kind/port. @need_port: the port is required (CONNECT);
 * otherwise it defaults to 80. False with *why on error.
 */
static bool parse_authority(struct ward_http_request *req, const char *a,
			    size_t len, bool need_port, const char **why)
{
	const char *host = a, *colon = NULL;
	size_t hlen;

	if (memchr(a, '@', len)) {
		*why = "user information in the request target";
		return false;
	}
	if (len && a[0] == '[') {
		const char *close = memchr(a, ']', len);

		if (!close) {
			*why = "unterminated [IPv6] in the request target";
			return false;
		}
		host = a + 1;
		hlen = (size_t)(close - host);
		if (close + 1 < a + len) {
			if (close[1] != ':') {
				*why = "junk after ] in the request target";
				return false;
			}
			colon = close + 1;
		}
		if (!memchr(host, ':', hlen)) {
			*why = "brackets hold an IPv6 address";
			return false;
		}
	} else {
		colon = memchr(a, ':', len);
		hlen = colon ? (size_t)(colon - a) : len;
		if (colon && memchr(colon + 1, ':', len - hlen - 1)) {
			*why = "an IPv6 address must be in brackets";
			return false;
		}
	}
	req->host_kind = ward_host_parse(req->host, host, hlen, why);
	if (!req->host_kind)
		return false;
	if (colon && colon + 1 < a + len) {
		req->port =
		    parse_port(colon + 1, (size_t)(a + len - colon - 1));
		if (!req->port) {
			*why = "invalid port";
			return false;
		}
	} else if (need_port) {
		*why = "CONNECT needs host:port";
		return false;
	} else {
		req->port = 80;
	}
	return true;
}

/* Parse the absolute-form target "http://authority[/path]". */
static bool parse_absolute(struct ward_http_request *req, const char *t,
			   size_t len, int *status, const char **why)
{
	const char *a, *end = t + len, *p;

	if (len >= 8 && strncasecmp(t, "https://", 8) == 0) {
		*why = "https:// needs a CONNECT tunnel, not a plain request";
		return false;
	}
	if (len < 7 || strncasecmp(t, "http://", 7) != 0) {
		*why = t[0] == '/' ? "not a proxy request (the target must be "
				     "an absolute http:// URL)"
				   : "unsupported request target (only "
				     "http:// URLs)";
		return false;
	}
	if (memchr(t, '#', len)) {
		*why = "fragment in the request target";
		return false;
	}
	a = t + 7;
	p = a;
	while (p < end && *p != '/' && *p != '?')
		p++;
	if (p == a) {
		*why = "no host in the request target";
		return false;
	}
	*status = 400;
	if (!parse_authority(req, a, (size_t)(p - a), false, why))
		return false;
	req->path = p;
	req->path_len = (size_t)(end - p);
	return true;
}

/*
 * Parse the request line "METHOD SP target SP HTTP/1.x" (@len bytes, no
 * CRLF) into @req.
 */
static bool parse_request_line(struct ward_http_request *req, const char *l,
			       size_t len, int *status, const char **why)
{
	const char *sp1, *sp2, *t, *v;
	size_t tlen, vlen;

	*status = 400;
	sp1 = memchr(l, ' ', len);
	if (!sp1 || sp1 == l) {
		*why = "malformed request line";
		return false;
	}
	for (const char *c = l; c < sp1; c++) {
		if (!is_tchar((unsigned char)*c)) {
			*why = "malformed request method";
			return false;
		}
	}
	t = sp1 + 1;
	sp2 = memchr(t, ' ', len - (size_t)(t - l));
	if (!sp2 || sp2 == t) {
		*why = "malformed request line";
		return false;
	}
	tlen = (size_t)(sp2 - t);
	for (size_t i = 0; i < tlen; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c <= 0x20 || c >= 0x7f) {
			*why = "invalid byte in the request target";
			return false;
		}
	}
	v = sp2 + 1;
	vlen = len - (size_t)(v - l);
	if (vlen == 8 && memcmp(v, "HTTP/1.", 7) == 0 &&
	    (v[7] == '0' || v[7] == '1')) {
		req->minor = v[7] - '0';
	} else if (vlen >= 5 && memcmp(v, "HTTP/", 5) == 0) {
		*status = 505;
		*why = "unsupported HTTP version (HTTP/1.0 and 1.1 only)";
		return false;
	} else {
		*why = "malformed request line";
		return false;
	}
	req->method = l;
	req->method_len = (size_t)(sp1 - l);
	/* Methods are case-sensitive: "connect" is some other method. */
	if (req->method_len == 7 && memcmp(l, "CONNECT", 7) == 0) {
		req->protocol = WARD_PROXY_PROTO_CONNECT;
		if (tlen && t[0] == '/') {
			*why = "CONNECT needs host:port";
			return false;
		}
		return parse_authority(req, t, tlen, true, why);
	}
	req->protocol = WARD_PROXY_PROTO_HTTP;
	return parse_absolute(req, t, tlen, status, why);
}

/* Check the bytes received so far of an incomplete head. */
static enum ward_parse check_prefix(const char *buf, size_t len, int *status,
				    const char **why)
{
	size_t i;

	*status = 400;
	/* The method must be a token: a TLS ClientHello or binary junk
	 * fails here at once instead of waiting for the timeout. */
	for (i = 0; i < len && buf[i] != ' '; i++) {
		if (!is_tchar((unsigned char)buf[i])) {
			*why = "not an HTTP request";
			return WARD_PARSE_BAD;
		}
	}
	if (len >= WARD_HTTP_HEAD_MAX) {
		*status = 431;
		*why = "request head larger than 64 KiB";
		return WARD_PARSE_BAD;
	}
	return WARD_PARSE_MORE;
}

/* Parse a decimal Content-Length value. */
static bool parse_length(uint64_t *out, const char *s, size_t len)
{
	uint64_t v = 0;

	if (len == 0 || len > 19)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

/* Whether the Connection field value @v names the field @name. */
static bool tokens_contain(const char *v, size_t vlen, const char *name,
			   size_t nlen)
{
	const char *p = v, *end = v + vlen;

	while (p < end) {
		const char *s = p, *e;

		while (p < end && *p != ',')
			p++;
		e = p;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if ((size_t)(e - s) == nlen && strncasecmp(s, name, nlen) == 0)
			return true;
		if (p < end)
			p++;
	}
	return false;
}

/* Whether a Connection field of the head names @name (hop-by-hop). */
static bool connection_names(const char *buf, size_t start, size_t end,
			     const char *name, size_t nlen)
{
	struct field f;
	const char *why;
	size_t pos = start;

	while (next_field(&f, buf, &pos, end, &why) == 1) {
		if (ieq(f.name, f.nlen, "Connection") &&
		    tokens_contain(f.value, f.vlen, name, nlen))
			return true;
	}
	return false;
}

enum ward_parse ward_http_parse_request(struct ward_http_request *req,
					const char *buf, size_t len,
					int *status, const char **why)
{
	size_t hl = head_end(buf, len), pos, end;
	const char *eol;
	bool seen_te = false;
	struct field f;
	int r;

	memset(req, 0, sizeof(*req));
	if (!hl)
		return check_prefix(buf, len, status, why);
	eol = memmem(buf, hl, "\r\n", 2);
	/* A bare CR or LF anywhere in the head is refused. */
	for (size_t i = 0; i < hl; i++) {
		if ((buf[i] == '\r' && buf[i + 1] != '\n') ||
		    (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r')) ||
		    buf[i] == '\0') {
			*status = 400;
			*why = buf[i] ? "bare CR or LF in the request head"
				      : "NUL byte in the request head";
			return WARD_PARSE_BAD;
		}
	}
	if (!parse_request_line(req, buf, (size_t)(eol - buf), status, why))
		return WARD_PARSE_BAD;

	*status = 400;
	pos = (size_t)(eol - buf) + 2;
	end = hl - 2;
	while ((r = next_field(&f, buf, &pos, end, why)) == 1) {
		if (req->protocol != WARD_PROXY_PROTO_HTTP)
			continue;
		if (ieq(f.name, f.nlen, "Content-Length")) {
			if (req->has_length) {
				*why = "more than one Content-Length";
				return WARD_PARSE_BAD;
			}
			if (!parse_length(&req->length, f.value, f.vlen)) {
				*why = "invalid Content-Length";
				return WARD_PARSE_BAD;
			}
			req->has_length = true;
		} else if (ieq(f.name, f.nlen, "Transfer-Encoding")) {
			if (seen_te) {
				*why = "more than one Transfer-Encoding";
				return WARD_PARSE_BAD;
			}
			seen_te = true;
			if (!ieq(f.value, f.vlen, "chunked")) {
				*status = 501;
				*why = "unsupported Transfer-Encoding (only "
				       "chunked)";
				return WARD_PARSE_BAD;
			}
			req->chunked = true;
		}
	}
	if (r < 0)
		return WARD_PARSE_BAD;
	if (req->chunked && req->has_length) {
		*why = "both Content-Length and Transfer-Encoding";
		return WARD_PARSE_BAD;
	}
	if (req->chunked && req->minor == 0) {
		*why = "Transfer-Encoding in an HTTP/1.0 request";
		return WARD_PARSE_BAD;
	}
	req->head_len = hl;
	return WARD_PARSE_OK;
}

/* Append @len bytes to the builder; false on ENOMEM (sticky). */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t len)
{
	if (b->oom)
		return;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *n;

		while (cap < b->len + len + 1)
			cap *= 2;
		n = realloc(b->p, cap);
		if (!n) {
			b->oom = true;
			return;
		}
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static int sb_finish(char **out, size_t *out_len, struct sbuf *b)
{
	if (b->oom || !b->p) {
		free(b->p);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = b->p;
	*out_len = b->len;
	return 0;
}

/* Field names a proxy consumes itself (hop-by-hop, RFC 9110 §7.6.1). */
static bool is_hop_by_hop(const char *name, size_t nlen, bool request)
{
	static const char *const both[] = {"Connection", "Keep-Alive",
					   "Proxy-Connection"};
	static const char *const req_only[] = {"Proxy-Authorization",
					       "Proxy-Authenticate", "TE",
					       "Upgrade", "Host"};

	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		if (ieq(name, nlen, both[i]))
			return true;
	}
	for (size_t i = 0;
	     request && i < sizeof(req_only) / sizeof(req_only[0]); i++) {
		if (ieq(name, nlen, req_only[i]))
			return true;
	}
	return false;
}

/* Framing fields stay whatever Connection says: dropping one would let the
 * two ends disagree about where a body ends. */
static bool is_framing(const char *name, size_t nlen)
{
	return ieq(name, nlen, "Content-Length") ||
	       ieq(name, nlen, "Transfer-Encoding");
}

/* Copy the fields of the head except the hop-by-hop ones. */
static void copy_fields(struct sbuf *b, const char *buf, size_t start,
			size_t end, bool request)
{
	struct field f;
	const char *why;
	size_t pos = start;

	while (next_field(&f, buf, &pos, end, &why) == 1) {
		if (is_hop_by_hop(f.name, f.nlen, request))
			continue;
		if (!is_framing(f.name, f.nlen) &&
		    connection_names(buf, start, end, f.name, f.nlen))
			continue;
		sb_add(b, f.line, f.line_len);
	}
}

int ward_http_rewrite_request(char **out, size_t *out_len,
			      const struct ward_http_request *req,
			      const char *buf)
{
	struct sbuf b = {0};
	const char *eol = memmem(buf, req->head_len, "\r\n", 2);
	char port[16];

	sb_add(&b, req->method, req->method_len);
	sb_str(&b, " ");
	if (req->path_len == 0 || req->path[0] != '/')
		sb_str(&b, "/");
	sb_add(&b, req->path, req->path_len);
	sb_str(&b, req->minor ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n");
	copy_fields(&b, buf, (size_t)(eol - buf) + 2, req->head_len - 2, true);
	sb_str(&b, "Host: ");
	if (req->host_kind == WARD_HOST_IPV6)
		sb_str(&b, "[");
	sb_str(&b, req->host);
	if (req->host_kind == WARD_HOST_IPV6)
		sb_str(&b, "]");
	if (req->port != 80) {
		snprintf(port, sizeof(port), ":%u", req->port);
		sb_str(&b, port);
	}
	sb_str(&b, "\r\nConnection: close\r\n\r\n");
	return sb_finish(out, out_len, &b);
}

enum ward_parse ward_http_parse_response(struct ward_http_response *resp,
					 const char *buf, size_t len,
					 const char **why)
{
	size_t hl = head_end(buf, len), pos, end;
	const char *eol, *p;
	struct field f;
	int r;

	memset(resp, 0, sizeof(*resp));
	if (!hl) {
		if (len >= WARD_HTTP_HEAD_MAX) {
			*why = "response head larger than 64 KiB";
			return WARD_PARSE_BAD;
		}
		if (len >= 5 && memcmp(buf, "HTTP/", 5) != 0) {
			*why = "not an HTTP response";
			return WARD_PARSE_BAD;
		}
		return WARD_PARSE_MORE;
	}
	eol = memmem(buf, hl, "\r\n", 2);
	p = buf;
	if (eol - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 ||
	    (p[7] != '0' && p[7] != '1') || p[8] != ' ' || p[9] < '1' ||
	    p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' ||
	    p[11] > '9' || (eol - p > 12 && p[12] != ' ')) {
		*why = "malformed status line";
		return WARD_PARSE_BAD;
	}
	for (size_t i = 0; i < hl; i++) {
		if ((buf[i] == '\r' && buf[i + 1] != '\n') ||
		    (buf[i] == '\n' && (i == 0 || buf[i - 1] != '\r'))) {
			*why = "bare CR or LF in the response head";
			return WARD_PARSE_BAD;
		}
	}
	pos = (size_t)(eol - buf) + 2;
	end = hl - 2;
	while ((r = next_field(&f, buf, &pos, end, why)) == 1)
		;
	if (r < 0)
		return WARD_PARSE_BAD;
	resp->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	resp->head_len = hl;
	return WARD_PARSE_OK;
}

int ward_http_rewrite_response(char **out, size_t *out_len,
			       const struct ward_http_response *resp,
			       const char *buf)
{
	struct sbuf b = {0};
	const char *eol = memmem(buf, resp->head_len, "\r\n", 2);
	size_t start = (size_t)(eol - buf) + 2;

	sb_add(&b, buf, start);
	copy_fields(&b, buf, start, resp->head_len - 2, false);
	sb_str(&b, "Connection: close\r\n\r\n");
	return sb_finish(out, out_len, &b);
}

static const char *status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 431:
		return "Request Header Fields Too Large";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Error";
	}
}

int ward_http_error_response(char **out, size_t *out_len, int status,
			     const char *line, const char *denied_host)
{
	char *text = NULL;
	int n;

	n = asprintf(&text,
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: text/plain; charset=utf-8\r\n"
		     "Content-Length: %zu\r\n"
		     "%s%s%s"
		     "Connection: close\r\n"
		     "\r\n"
		     "ward: %s\n",
		     status, status_text(status), strlen(line) + 7,
		     denied_host ? "X-Ward-Denied-Host: " : "",
		     denied_host ? denied_host : "", denied_host ? "\r\n" : "",
		     line);
	if (n < 0)
		return ward_err(-ENOMEM, "out of memory");
	*out = text;
	*out_len = (size_t)n;
	return 0;
}

/* ---- chunked ---------------------------------------------------------------- */

enum {
	CH_SIZE = 0,  /* the first hex digit of a chunk size */
	CH_SIZE_MORE, /* more hex digits, BWS, ';' or CR */
	CH_BWS,	      /* whitespace after the size */
	CH_EXT,	      /* a chunk extension, up to CR */
	CH_SIZE_LF,   /* the LF ending the size line */
	CH_DATA,      /* chunk data */
	CH_DATA_CR,   /* the CRLF after the data */
	CH_DATA_LF,
	CH_TRAILER_START, /* a trailer field or the final CRLF */
	CH_TRAILER,	  /* a trailer field line, up to CR */
	CH_TRAILER_LF,
	CH_END_LF, /* the last LF */
	CH_DONE,
};

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long ward_http_chunked_feed(struct ward_http_chunked *c, const char *buf,
			    size_t len, bool *done, const char **why)
{
	size_t i = 0;

	*done = c->state == CH_DONE;
	while (i < len && c->state != CH_DONE) {
		unsigned char ch = (unsigned char)buf[i];
		int h;

		switch (c->state) {
		case CH_SIZE:
		case CH_SIZE_MORE:
			h = hex_value(ch);
			if (h >= 0) {
				if (++c->digits > 16) {
					*why = "chunk size too large";
					return -1;
				}
				c->size = c->size << 4 | (uint64_t)h;
				c->state = CH_SIZE_MORE;
				break;
			}
			if (c->state == CH_SIZE) {
				*why = "malformed chunk size";
				return -1;
			}
			/* fall through */
		case CH_BWS:
			if (ch == ' ' || ch == '\t') {
				c->state = CH_BWS;
			} else if (ch == ';') {
				c->state = CH_EXT;
				c->ext = 0;
			} else if (ch == '\r') {
				c->state = CH_SIZE_LF;
			} else {
				*why = "malformed chunk size line";
				return -1;
			}
			break;
		case CH_EXT:
			if (ch == '\r') {
				c->state = CH_SIZE_LF;
			} else if (ch == '\n' || ch == '\0' ||
				   ++c->ext > CHUNK_LINE_MAX) {
				*why = "malformed chunk extension";
				return -1;
			}
			break;
		case CH_SIZE_LF:
			if (ch != '\n') {
				*why = "bare CR in a chunk size line";
				return -1;
			}
			c->state = c->size ? CH_DATA : CH_TRAILER_START;
			break;
		case CH_DATA: {
			size_t n = len - i;

			if (n > c->size)
				n = (size_t)c->size;
			c->size -= n;
			i += n;
			if (c->size == 0)
				c->state = CH_DATA_CR;
			continue;
		}
		case CH_DATA_CR:
			if (ch != '\r') {
				*why = "chunk data longer than its size";
				return -1;
			}
			c->state = CH_DATA_LF;
			break;
		case CH_DATA_LF:
			if (ch != '\n') {
				*why = "bare CR after chunk data";
				return -1;
			}
			c->state = CH_SIZE;
			c->digits = 0;
			c->size = 0;
			break;
		case CH_TRAILER_START:
			if (ch == '\r') {
				c->state = CH_END_LF;
				break;
			}
			if (!is_tchar(ch)) {
				*why = "malformed trailer field";
				return -1;
			}
			c->state = CH_TRAILER;
			c->ext = 0;
			break;
		case CH_TRAILER:
			if (ch == '\r') {
				c->state = CH_TRAILER_LF;
			} else if (ch == '\n' || ch == '\0' ||
				   ++c->ext > CHUNK_LINE_MAX) {
				*why = "malformed trailer field";
				return -1;
			}
			break;
		case CH_TRAILER_LF:
			if (ch != '\n') {
				*why = "bare CR in a trailer field";
				return -1;
			}
			c->state = CH_TRAILER_START;
			break;
		case CH_END_LF:
			if (ch != '\n') {
				*why = "bare CR at the end of a chunked body";
				return -1;
			}
			c->state = CH_DONE;
			break;
		}
		i++;
	}
	*done = c->state == CH_DONE;
	return (long)i;
}
