/*
 * fuzz_proxy — libFuzzer target for the proxy's parsers (proxy_http.c,
 * proxy_socks.c, proxy_rules.c).
 *
 * Input: one selector byte, then the bytes for that parser. The oracle,
 * besides ASan/UBSan finding nothing:
 *
 *   0 request head  MORE only while no CRLF CRLF lies in the first 64 KiB
 *                   (and fewer than 64 KiB came); OK means: the head ends
 *                   with CRLF CRLF at head_len <= len, the same head alone
 *                   parses to the same result (what follows never matters),
 *                   the host is in normal form (ward_host_parse gives it
 *                   back unchanged), the port is 1-65535; for plain HTTP
 *                   the head sent upstream ends at its first CRLF CRLF, has
 *                   no bare CR or LF, exactly one Host field (the target's
 *                   authority), "Connection: close" and no other
 *                   Connection, Proxy-* or Keep-Alive field, and the same
 *                   body framing fields as the request.
 *   1 chunked body  the scanner's result (bytes of body, end, error) is the
 *                   same whole, byte by byte and split at a point chosen by
 *                   the input, and agrees with an independent decoder.
 *   2 SOCKS5        a greeting or request that parses OK answers MORE for
 *                   every shorter prefix and consumes no more than it got;
 *                   a host is in normal form.
 *   3 response head OK means head_len <= len and a rewrite that ends with
 *                   "Connection: close" CRLF CRLF.
 *   4 host/pattern  a parsed host is stable under reparsing; a valid
 *                   pattern "H" matches H; "*.H" never matches H itself but
 *                   matches "x.H".
 *   5 the command's side: the bytes a command sends to the proxy, in
 *                   reads of 1 to 64 bytes (sizes from a generator seeded
 *                   by the input's first two bytes), decided the way the
 *                   proxy's handshake does after each read (the first byte
 *                   picks SOCKS5, SOCKS4 or HTTP; SOCKS5: the greeting,
 *                   then the request in what follows it) and then judged
 *                   by the rules (allow example.com, *.test): the first
 *                   read that decides gives exactly the decision — kind,
 *                   protocol, status, host, port, rule verdict — of all
 *                   the bytes at once, so how the command splits its
 *                   writes never changes what the proxy lets through, and
 *                   no error is given to a prefix that more bytes mend.
 *
 * Build: `make build/fuzz/fuzz_proxy`. Run:
 *   build/fuzz/fuzz_proxy -dict=tests/fuzz/corpus/proxy.dict \
 *     build/fuzz/corpus_proxy tests/fuzz/corpus/proxy
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libward/net/proxy_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                               \
	do {                                                                   \
		if (!(c)) {                                                    \
			fprintf(stderr, "oracle failed: %s (line %d)\n", #c,   \
				__LINE__);                                     \
			abort();                                               \
		}                                                              \
	} while (0)

static void check_host(const char *host, enum ward_host_kind kind)
{
	char again[WARD_HOST_MAX];
	const char *why;

	CHECK(kind == WARD_HOST_NAME || kind == WARD_HOST_IPV4 ||
	      kind == WARD_HOST_IPV6);
	CHECK(ward_host_parse(again, host, strlen(host), &why) == kind);
	CHECK(strcmp(again, host) == 0);
	for (const char *c = host; *c; c++)
		CHECK((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '-' || *c == '_' || *c == ':');
}

/* Count the header lines of @head named @name (case-insensitive). */
static int count_field(const char *head, const char *name, const char **val)
{
	size_t nl = strlen(name);
	int n = 0;

	for (const char *l = strstr(head, "\r\n"); l && l[2] != '\r';
	     l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, nl) == 0 && l[2 + nl] == ':') {
			n++;
			if (val)
				*val = l + 2 + nl + 1;
		}
	}
	return n;
}

static void fuzz_request(const char *buf, size_t len)
{
	struct ward_http_request r, r2;
	const char *why = NULL, *v = NULL;
	const char *end;
	int st = 0, st2 = 0;
	enum ward_parse res = ward_http_parse_request(&r, buf, len, &st, &why);
	char *out = NULL;
	size_t out_len = 0;

	end = memmem(buf, len < WARD_HTTP_HEAD_MAX ? len : WARD_HTTP_HEAD_MAX,
		     "\r\n\r\n", 4);
	if (res == WARD_PARSE_MORE) {
		CHECK(!end && len < WARD_HTTP_HEAD_MAX);
		return;
	}
	if (res == WARD_PARSE_BAD) {
		CHECK(why != NULL);
		CHECK(st == 400 || st == 431 || st == 501 || st == 505);
		return;
	}
	CHECK(end && r.head_len == (size_t)(end - buf) + 4);
	CHECK(r.head_len <= len);
	CHECK(ward_http_parse_request(&r2, buf, r.head_len, &st2, &why) ==
	      WARD_PARSE_OK);
	CHECK(r2.head_len == r.head_len && r2.port == r.port &&
	      strcmp(r2.host, r.host) == 0 && r2.protocol == r.protocol &&
	      r2.chunked == r.chunked && r2.has_length == r.has_length &&
	      r2.length == r.length);
	check_host(r.host, r.host_kind);
	CHECK(r.port >= 1 && r.port <= 65535);
	CHECK(r.protocol == WARD_PROXY_PROTO_CONNECT ||
	      r.protocol == WARD_PROXY_PROTO_HTTP);
	CHECK(!(r.chunked && r.has_length));
	if (r.protocol != WARD_PROXY_PROTO_HTTP)
		return;

	CHECK(r.path >= buf && r.path + r.path_len <= buf + r.head_len);
	if (ward_http_rewrite_request(&out, &out_len, &r, buf) != 0)
		return;
	CHECK(strlen(out) == out_len);
	CHECK(out_len >= 4 && strcmp(out + out_len - 4, "\r\n\r\n") == 0);
	CHECK(strstr(out, "\r\n\r\n") == out + out_len - 4);
	for (size_t i = 0; i < out_len; i++) {
		if (out[i] == '\n')
			CHECK(i > 0 && out[i - 1] == '\r');
		if (out[i] == '\r')
			CHECK(out[i + 1] == '\n');
	}
	CHECK(count_field(out, "Host", &v) == 1);
	CHECK(count_field(out, "Connection", &v) == 1);
	CHECK(strncmp(v, " close\r\n", 8) == 0);
	CHECK(count_field(out, "Proxy-Connection", NULL) == 0);
	CHECK(count_field(out, "Proxy-Authorization", NULL) == 0);
	CHECK(count_field(out, "Keep-Alive", NULL) == 0);
	CHECK(count_field(out, "Content-Length", NULL) ==
	      (r.has_length ? 1 : 0));
	CHECK(count_field(out, "Transfer-Encoding", NULL) ==
	      (r.chunked ? 1 : 0));
	free(out);
}

/*
 * An independent chunked decoder over the whole buffer: the bytes of the
 * body (-1: malformed, -2: incomplete).
 */
static long ref_chunked(const char *b, size_t len)
{
	size_t i = 0;

	for (;;) {
		uint64_t size = 0;
		int digits = 0;

		while (i < len && strchr("0123456789abcdefABCDEF", b[i]) &&
		       b[i]) {
			if (++digits > 16)
				return -1;
			size = size * 16 + (uint64_t)(b[i] <= '9' ? b[i] - '0'
						      : b[i] <= 'F'
							  ? b[i] - 'A' + 10
							  : b[i] - 'a' + 10);
			i++;
		}
		if (i == len)
			return -2;
		if (!digits)
			return -1;
		while (i < len && (b[i] == ' ' || b[i] == '\t'))
			i++;
		if (i < len && b[i] == ';') {
			size_t start = i;

			while (i < len && b[i] != '\r' && b[i] != '\n' && b[i])
				i++;
			if (i - start - 1 > 4096)
				return -1;
		}
		if (i == len)
			return -2;
		if (b[i] != '\r')
			return -1;
		if (++i == len)
			return -2;
		if (b[i++] != '\n')
			return -1;
		if (size == 0)
			break;
		if (len - i < size)
			return -2;
		i += size;
		if (i == len)
			return -2;
		if (b[i++] != '\r')
			return -1;
		if (i == len)
			return -2;
		if (b[i++] != '\n')
			return -1;
	}
	/* Trailer fields, then the empty line. */
	for (;;) {
		size_t start = i;

		if (i == len)
			return -2;
		if (b[i] == '\r') {
			if (++i == len)
				return -2;
			return b[i] == '\n' ? (long)i + 1 : -1;
		}
		if (!b[i] || (!strchr("!#$%&'*+-.^_`|~", b[i]) &&
			      !(b[i] >= '0' && b[i] <= '9') &&
			      !((b[i] | 0x20) >= 'a' && (b[i] | 0x20) <= 'z')))
			return -1;
		while (i < len && b[i] != '\r' && b[i] != '\n' && b[i])
			i++;
		if (i - start - 1 > 4096)
			return -1;
		if (i == len)
			return -2;
		if (b[i] != '\r')
			return -1;
		if (++i == len)
			return -2;
		if (b[i++] != '\n')
			return -1;
	}
}

/* Feed @b in the pieces [0,cut) and [cut,len); -1 on error. */
static long feed_split(const char *b, size_t len, size_t cut, bool *done)
{
	struct ward_http_chunked c = {0};
	const char *why;
	long a, k;

	*done = false;
	a = ward_http_chunked_feed(&c, b, cut, done, &why);
	if (a < 0)
		return -1;
	if (*done)
		return a;
	k = ward_http_chunked_feed(&c, b + cut, len - cut, done, &why);
	return k < 0 ? -1 : a + k;
}

static void fuzz_chunked(const char *b, size_t len)
{
	struct ward_http_chunked c = {0};
	const char *why;
	bool d1 = false, d2 = false, d3 = false;
	long whole, bytes = 0, split, ref;
	size_t cut = len ? (unsigned char)b[0] % (len + 1) : 0;

	if (len > 0) {
		b++;
		len--;
		if (cut > len)
			cut = len;
	}
	whole = ward_http_chunked_feed(&c, b, len, &d1, &why);
	memset(&c, 0, sizeof(c));
	for (size_t i = 0; i < len && !d2; i++) {
		long k = ward_http_chunked_feed(&c, b + i, 1, &d2, &why);

		if (k < 0) {
			bytes = -1;
			break;
		}
		bytes += k;
	}
	split = feed_split(b, len, cut, &d3);
	CHECK((whole < 0) == (bytes < 0) && (whole < 0) == (split < 0));
	if (whole >= 0) {
		CHECK(whole == bytes && whole == split);
		CHECK(d1 == d2 && d1 == d3);
		CHECK(d1 || whole == (long)len);
	}
	ref = ref_chunked(b, len);
	if (ref >= 0)
		CHECK(d1 && whole == ref);
	else if (ref == -2)
		CHECK(whole == (long)len && !d1);
	else
		CHECK(whole < 0);
}

static void fuzz_socks(const unsigned char *b, size_t len)
{
	struct ward_socks5_request r;
	unsigned char reply;
	const char *why;
	size_t used = 0, u2;
	bool no_auth;

	if (ward_socks5_parse_greeting(&used, &no_auth, b, len, &why) ==
	    WARD_PARSE_OK) {
		CHECK(used <= len && used >= 3);
		for (size_t n = 0; n < used; n++)
			CHECK(ward_socks5_parse_greeting(&u2, &no_auth, b, n,
							 &why) ==
			      WARD_PARSE_MORE);
	}
	if (ward_socks5_parse_request(&used, &r, b, len, &reply, &why) ==
	    WARD_PARSE_OK) {
		CHECK(used <= len);
		check_host(r.host, r.host_kind);
		CHECK(r.port >= 1 && r.port <= 65535 && r.command == 1);
		for (size_t n = 0; n < used; n++)
			CHECK(ward_socks5_parse_request(&u2, &r, b, n, &reply,
							&why) ==
			      WARD_PARSE_MORE);
	}
}

static void fuzz_response(const char *b, size_t len)
{
	struct ward_http_response resp;
	const char *why;
	char *out = NULL;
	size_t out_len;

	if (ward_http_parse_response(&resp, b, len, &why) != WARD_PARSE_OK)
		return;
	CHECK(resp.head_len <= len && resp.status >= 100 && resp.status < 600);
	if (ward_http_rewrite_response(&out, &out_len, &resp, b) != 0)
		return;
	CHECK(out_len >= 21 &&
	      strcmp(out + out_len - 21, "Connection: close\r\n\r\n") == 0);
	free(out);
}

static void fuzz_host(const char *b, size_t len)
{
	char host[WARD_HOST_MAX], pat[WARD_HOST_MAX + 8];
	char sub[WARD_HOST_MAX + 8];
	char *allow[2] = {pat, NULL};
	struct ward_proxy_rules *rules = NULL;
	enum ward_host_kind kind;
	const char *why, *p;

	kind = ward_host_parse(host, b, len, &why);
	if (!kind)
		return;
	check_host(host, kind);
	snprintf(pat, sizeof(pat), "%s", host);
	if (ward_proxy_rules_new(&rules, allow, NULL) == 0) {
		CHECK(ward_proxy_rules_check(rules, host, kind, &p) ==
		      WARD_RULE_ALLOW_EXACT);
		ward_proxy_rules_free(rules);
	}
	if (kind != WARD_HOST_NAME || strlen(host) > 250)
		return;
	snprintf(pat, sizeof(pat), "*.%s", host);
	snprintf(sub, sizeof(sub), "x.%s", host);
	if (ward_proxy_rules_new(&rules, allow, NULL) != 0)
		return;
	CHECK(ward_proxy_rules_check(rules, host, kind, &p) ==
	      WARD_RULE_DENY_NOT_ALLOWED);
	kind = ward_host_parse(host, sub, strlen(sub), &why);
	if (kind == WARD_HOST_NAME)
		CHECK(ward_proxy_rules_check(rules, host, kind, &p) ==
		      WARD_RULE_ALLOW_WILDCARD);
	ward_proxy_rules_free(rules);
}

/* What the handshake decided over the bytes so far. */
struct decision {
	enum ward_parse kind;
	enum ward_proxy_protocol protocol;
	int status;
	char host[WARD_HOST_MAX];
	unsigned port;
	enum ward_rule_result rule;
};

static struct ward_proxy_rules *stream_rules;

/* The proxy's handshake (proxy.c: on_handshake_read, handshake_socks,
 * handshake_http) over @len bytes that came so far. */
static void decide(struct decision *d, const unsigned char *b, size_t len)
{
	struct ward_socks5_request sr;
	struct ward_http_request hr;
	const char *why, *pat;
	enum ward_host_kind kind = 0;
	unsigned char code;
	size_t used = 0, u2 = 0;
	bool no_auth = false;

	memset(d, 0, sizeof(*d));
	d->kind = WARD_PARSE_MORE;
	if (len == 0)
		return;
	if (b[0] == 4) {
		d->kind = WARD_PARSE_BAD;
		d->protocol = WARD_PROXY_PROTO_SOCKS5;
		return;
	}
	if (b[0] == 5) {
		d->protocol = WARD_PROXY_PROTO_SOCKS5;
		d->kind =
		    ward_socks5_parse_greeting(&used, &no_auth, b, len, &why);
		if (d->kind != WARD_PARSE_OK)
			return;
		if (!no_auth) {
			d->kind = WARD_PARSE_BAD;
			return;
		}
		d->kind = ward_socks5_parse_request(&u2, &sr, b + used,
						    len - used, &code, &why);
		if (d->kind == WARD_PARSE_BAD)
			d->status = code;
		if (d->kind != WARD_PARSE_OK)
			return;
		snprintf(d->host, sizeof(d->host), "%s", sr.host);
		d->port = sr.port;
		kind = sr.host_kind;
	} else {
		d->status = 400;
		d->kind = ward_http_parse_request(&hr, (const char *)b, len,
						  &d->status, &why);
		if (d->kind == WARD_PARSE_MORE)
			return;
		d->protocol = hr.protocol;
		if (d->kind == WARD_PARSE_BAD)
			return;
		snprintf(d->host, sizeof(d->host), "%s", hr.host);
		d->port = hr.port;
		kind = hr.host_kind;
	}
	d->rule = ward_proxy_rules_check(stream_rules, d->host, kind, &pat);
}

static void fuzz_stream(const unsigned char *b, size_t len)
{
	struct decision whole, part;
	unsigned x;
	size_t at = 0;

	if (!stream_rules) {
		char *allow[] = {"example.com", "*.test", NULL};

		if (ward_proxy_rules_new(&stream_rules, allow, NULL) != 0)
			abort();
	}
	if (len < 2)
		return;
	x = ((unsigned)b[0] << 8 | b[1]) | 1;
	b += 2;
	len -= 2;
	/* A proxy reads at most this much before it must decide. */
	if (len > WARD_HTTP_HEAD_MAX)
		len = WARD_HTTP_HEAD_MAX;
	decide(&whole, b, len);
	do {
		x = x * 1103515245u + 12345u;
		at += 1 + (x >> 16) % 64;
		if (at > len)
			at = len;
		decide(&part, b, at);
	} while (part.kind == WARD_PARSE_MORE && at < len);
	if (part.kind == WARD_PARSE_MORE) {
		CHECK(whole.kind == WARD_PARSE_MORE);
		return;
	}
	CHECK(part.kind == whole.kind && part.protocol == whole.protocol &&
	      part.status == whole.status && part.port == whole.port &&
	      strcmp(part.host, whole.host) == 0 && part.rule == whole.rule);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data + 1;
	size_t len;

	if (size < 1 || size > WARD_HTTP_HEAD_MAX + 64)
		return 0;
	len = size - 1;
	if (data[0] % 6 == 5) {
		fuzz_stream((const unsigned char *)b, len);
		return 0;
	}
	switch (data[0] % 5) {
	case 0:
		fuzz_request(b, len);
		break;
	case 1:
		fuzz_chunked(b, len);
		break;
	case 2:
		fuzz_socks((const unsigned char *)b, len);
		break;
	case 3:
		fuzz_response(b, len);
		break;
	default:
		fuzz_host(b, len);
		break;
	}
	return 0;
}
