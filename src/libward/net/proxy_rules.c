/*
 * ward — the proxy's host names, address classes and allow/deny rules.
 *
 * The rules are about names: a pattern is a host name, `*.` and a host
 * name, or an IP address. docs/NETWORK.md states them for users; the unit
 * tests (tests/unit/test_proxy_rules.c) pin every case named here.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libward/internal.h"
#include "proxy_internal.h"

#define NAME_MAX_LEN  253
#define LABEL_MAX_LEN 63

struct pattern {
	char *text;		  /* as written, for messages */
	char host[WARD_HOST_MAX]; /* normalized; for a wildcard: the suffix */
	enum ward_host_kind kind;
	bool wildcard;
};

struct ward_proxy_rules {
	struct pattern *allow;
	size_t nallow;
	struct pattern *deny;
	size_t ndeny;
};

static bool is_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

/*
 * Whether the last label of the name @s (@len bytes) reads as a number to
 * some resolver: all decimal digits, or "0x" and hex digits. inet_aton and
 * most stub resolvers turn "127.1", "2130706433" or "0x7f.1" into an
 * address, so such a "name" would be an IP literal in disguise.
 */
static bool last_label_numeric(const char *s, size_t len)
{
	size_t start = len;
	bool hex;

	while (start > 0 && s[start - 1] != '.')
		start--;
	if (start == len)
		return false;
	hex = len - start > 2 && s[start] == '0' &&
	      (s[start + 1] == 'x' || s[start + 1] == 'X');
	for (size_t i = start + (hex ? 2 : 0); i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= '0' && c <= '9')
			continue;
		if (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			continue;
		return false;
	}
	return true;
}

enum ward_host_kind ward_host_parse(char out[WARD_HOST_MAX], const char *in,
				    size_t len, const char **why)
{
	unsigned char addr[sizeof(struct in6_addr)];
	char tmp[WARD_HOST_MAX];
	size_t label = 0;

	if (len == 0) {
		*why = "empty host";
		return 0;
	}
	if (len >= sizeof(tmp)) {
		*why = "host name longer than 253 bytes";
		return 0;
	}
	memcpy(tmp, in, len);
	tmp[len] = '\0';
	if (memchr(in, '\0', len)) {
		*why = "NUL byte in the host";
		return 0;
	}

	if (memchr(in, ':', len)) {
		/* inet_pton refuses zone ids ("%eth0") and every other
		 * oddity; inet_ntop gives the one canonical spelling. */
		if (inet_pton(AF_INET6, tmp, addr) != 1) {
			*why = "not a valid IPv6 address";
			return 0;
		}
		inet_ntop(AF_INET6, addr, out, WARD_HOST_MAX);
		return WARD_HOST_IPV6;
	}

	/* One trailing dot: the absolute form of the same name. */
	if (len > 1 && tmp[len - 1] == '.')
		tmp[--len] = '\0';

	/* Strict dotted quad (no octal, hex, short or padded forms). */
	if (inet_pton(AF_INET, tmp, addr) == 1) {
		inet_ntop(AF_INET, addr, out, WARD_HOST_MAX);
		return WARD_HOST_IPV4;
	}

	if (len > NAME_MAX_LEN) {
		*why = "host name longer than 253 bytes";
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)tmp[i];

		if (!is_name_char(c)) {
			*why = c >= 0x80 ? "non-ASCII host name (use the "
					   "punycode xn-- form)"
					 : "invalid character in the host name";
			return 0;
		}
		if (c == '.') {
			if (label == 0) {
				*why = "empty label in the host name";
				return 0;
			}
			label = 0;
			continue;
		}
		if (++label > LABEL_MAX_LEN) {
			*why = "host name label longer than 63 bytes";
			return 0;
		}
		if (c >= 'A' && c <= 'Z')
			tmp[i] = (char)(c - 'A' + 'a');
	}
	if (label == 0) {
		*why = "empty label in the host name";
		return 0;
	}
	if (last_label_numeric(tmp, len)) {
		*why = "numeric host that is not a dotted-quad IPv4 address";
		return 0;
	}
	memcpy(out, tmp, len + 1);
	return WARD_HOST_NAME;
}

/* ---- address classes ------------------------------------------------------ */

struct v4_range {
	uint32_t net;
	unsigned bits;
};

/* IPv4 space that is not public unicast (IANA special-purpose registry). */
static const struct v4_range v4_special[] = {
    {0x00000000, 8},  /* 0/8: "this network" (0.0.0.0 reaches localhost) */
    {0x0a000000, 8},  /* 10/8 private */
    {0x64400000, 10}, /* 100.64/10 shared address space (CGNAT) */
    {0x7f000000, 8},  /* 127/8 loopback */
    {0xa9fe0000, 16}, /* 169.254/16 link-local (cloud metadata) */
    {0xac100000, 12}, /* 172.16/12 private */
    {0xc0000000, 24}, /* 192.0.0/24 IETF protocol assignments */
    {0xc0000200, 24}, /* 192.0.2/24 documentation */
    {0xc0586300, 24}, /* 192.88.99/24 6to4 relay anycast */
    {0xc0a80000, 16}, /* 192.168/16 private */
    {0xc6120000, 15}, /* 198.18/15 benchmarking */
    {0xc6336400, 24}, /* 198.51.100/24 documentation */
    {0xcb007100, 24}, /* 203.0.113/24 documentation */
    {0xe0000000, 4},  /* 224/4 multicast */
    {0xf0000000, 4},  /* 240/4 reserved, and 255.255.255.255 */
};

static bool v4_is_public(uint32_t a)
{
	for (size_t i = 0; i < sizeof(v4_special) / sizeof(v4_special[0]);
	     i++) {
		uint32_t mask = ~0u << (32 - v4_special[i].bits);

		if ((a & mask) == v4_special[i].net)
			return false;
	}
	return true;
}

static uint32_t v4_at(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | (uint32_t)b[3];
}

static bool prefix_is(const unsigned char *a, const unsigned char *p,
		      unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, p, bytes) != 0)
		return false;
	if (rest) {
		unsigned char mask = (unsigned char)(0xff << (8 - rest));

		return (a[bytes] & mask) == (p[bytes] & mask);
	}
	return true;
}

static bool v6_is_public(const unsigned char *a)
{
	static const unsigned char zero[16];
	static const unsigned char mapped[12] = {0, 0, 0, 0, 0,	   0,
						 0, 0, 0, 0, 0xff, 0xff};
	static const unsigned char nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	static const unsigned char nat64_local[6] = {0x00, 0x64, 0xff,
						     0x9b, 0x00, 0x01};
	static const unsigned char p6to4[2] = {0x20, 0x02};
	static const unsigned char doc[4] = {0x20, 0x01, 0x0d, 0xb8};
	static const unsigned char ietf[3] = {0x20, 0x01, 0x00};
	static const unsigned char discard[8] = {0x01, 0x00};

	/* Forms that carry an IPv4 address: judge the IPv4 address. */
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return v4_is_public(v4_at(a + 12));
	if (memcmp(a, p6to4, 2) == 0)
		return v4_is_public(v4_at(a + 2));
	/* ::/96 (unspecified, loopback, the old IPv4-compatible form). */
	if (memcmp(a, zero, 12) == 0)
		return false;
	if (prefix_is(a, nat64_local, 48) || prefix_is(a, discard, 64) ||
	    prefix_is(a, doc, 32) || prefix_is(a, ietf, 23))
		return false;
	if ((a[0] & 0xfe) == 0xfc) /* fc00::/7 unique local */
		return false;
	if (a[0] == 0xfe &&
	    (a[1] & 0x80) == 0x80) /* fe80::/9: link-, site-local */
		return false;
	if (a[0] == 0xff) /* multicast */
		return false;
	return true;
}

bool ward_addr_is_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return v4_is_public(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 =
		    (const struct sockaddr_in6 *)sa;

		return v6_is_public(in6->sin6_addr.s6_addr);
	}
	return false;
}

/* ---- patterns --------------------------------------------------------------- */

/* Parse one pattern into @p (text not set). WARD_EINVAL with detail. */
/*
 * A URL, a name with a port or a path where a bare host is expected
 * (`--allow-domain https://x.com/`, `x.com:443`, `x.com/api`): refused
 * with the host to write instead, rather than with whatever the host
 * parser makes of the colon ("not a valid IPv6 address"). 0 when @s is
 * none of these.
 */
static int not_a_host(const char *s)
{
	const char *scheme = strstr(s, "://");
	const char *h = scheme ? scheme + 3 : s, *at, *colon;
	size_t n;

	/* userinfo@ goes before the host (in a URL only). */
	at = scheme ? strchr(h, '@') : NULL;
	if (at && at < h + strcspn(h, "/?#"))
		h = at + 1;
	n = h[0] == '[' ? strcspn(h, "]") + (h[strcspn(h, "]")] ? 1 : 0)
			: strcspn(h, ":/?#");
	colon = strchr(s, ':');
	if (scheme)
		return ward_err(WARD_EINVAL,
				"domain pattern \"%s\" is a URL: a domain "
				"pattern is a host name only (any port and "
				"path of an allowed host are allowed); write "
				"\"%.*s\"",
				s, (int)n, h);
	if (h[n] == '/' || h[n] == '?' || h[n] == '#')
		return ward_err(WARD_EINVAL,
				"domain pattern \"%s\" has a path: a domain "
				"pattern is a host name only; write \"%.*s\"",
				s, (int)n, h);
	/* name:port (one colon, digits after it; IPv6 has more). */
	if (colon && !strchr(colon + 1, ':') && colon[1] &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1))
		return ward_err(WARD_EINVAL,
				"domain pattern \"%s\" has a port: a domain "
				"pattern is a host name only (any port of an "
				"allowed host is allowed); write \"%.*s\"",
				s, (int)(colon - s), s);
	return 0;
}

static int pattern_parse(struct pattern *p, const char *s)
{
	size_t len = strlen(s);
	const char *why = NULL;
	int err;

	memset(p, 0, sizeof(*p));
	if (len == 0)
		return ward_err(WARD_EINVAL, "empty domain pattern");
	err = not_a_host(s);
	if (err)
		return err;
	if (strcmp(s, "*") == 0 || strcmp(s, "*.") == 0)
		return ward_err(WARD_EINVAL,
				"domain pattern \"%s\" would match every "
				"name; use network \"on\" instead",
				s);
	if (s[0] == '*') {
		if (s[1] != '.')
			return ward_err(WARD_EINVAL,
					"domain pattern \"%s\": a wildcard "
					"is only \"*.\" before a name",
					s);
		p->wildcard = true;
		s += 2;
		len -= 2;
	}
	if (memchr(s, '*', len))
		return ward_err(WARD_EINVAL,
				"domain pattern \"%s\": \"*\" may only begin "
				"it, as \"*.\"",
				s);
	if (!p->wildcard && len > 2 && s[0] == '[' && s[len - 1] == ']') {
		s++;
		len -= 2;
		if (!memchr(s, ':', len))
			return ward_err(WARD_EINVAL,
					"domain pattern \"[%.*s]\": brackets "
					"hold an IPv6 address",
					(int)len, s);
	}
	p->kind = ward_host_parse(p->host, s, len, &why);
	if (!p->kind)
		return ward_err(WARD_EINVAL, "domain pattern \"%.*s\": %s",
				(int)len, s, why);
	if (p->wildcard && p->kind != WARD_HOST_NAME)
		return ward_err(WARD_EINVAL,
				"domain pattern \"*.%.*s\": a wildcard takes "
				"a name, not an address",
				(int)len, s);
	return 0;
}

int ward_proxy_pattern_check(const char *pattern)
{
	struct pattern p;

	if (!pattern)
		return ward_err(WARD_EINVAL, "no domain pattern");
	return pattern_parse(&p, pattern);
}

static void patterns_free(struct pattern *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

/* Compile the NULL-terminated @src into *out / *n. */
static int patterns_compile(struct pattern **out, size_t *n, char *const *src)
{
	size_t count = ward_strv_len(src);
	struct pattern *v;
	int ret;

	*out = NULL;
	*n = 0;
	if (count == 0)
		return 0;
	v = calloc(count, sizeof(*v));
	if (!v)
		return ward_err(-ENOMEM, "out of memory");
	for (size_t i = 0; i < count; i++) {
		ret = pattern_parse(&v[i], src[i]);
		if (ret == 0) {
			v[i].text = strdup(src[i]);
			if (!v[i].text)
				ret = ward_err(-ENOMEM, "out of memory");
		}
		if (ret) {
			patterns_free(v, i + 1);
			return ret;
		}
	}
	*out = v;
	*n = count;
	return 0;
}

int ward_proxy_rules_new(struct ward_proxy_rules **out, char *const *allow,
			 char *const *deny)
{
	struct ward_proxy_rules *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return ward_err(-ENOMEM, "out of memory");
	ret = patterns_compile(&r->allow, &r->nallow, allow);
	if (ret == 0)
		ret = patterns_compile(&r->deny, &r->ndeny, deny);
	if (ret) {
		ward_proxy_rules_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void ward_proxy_rules_free(struct ward_proxy_rules *r)
{
	if (!r)
		return;
	patterns_free(r->allow, r->nallow);
	patterns_free(r->deny, r->ndeny);
	free(r);
}

/* Whether the normalized @host of @kind matches @p. */
static bool pattern_matches(const struct pattern *p, const char *host,
			    enum ward_host_kind kind)
{
	size_t hl, pl;

	if (p->kind != kind)
		return false;
	if (!p->wildcard)
		return strcmp(p->host, host) == 0;
	/* "*.s" matches every name strictly under s: "x.s", "y.x.s". */
	hl = strlen(host);
	pl = strlen(p->host);
	return hl > pl + 1 && host[hl - pl - 1] == '.' &&
	       memcmp(host + hl - pl, p->host, pl) == 0;
}

enum ward_rule_result ward_proxy_rules_check(const struct ward_proxy_rules *r,
					     const char *host,
					     enum ward_host_kind kind,
					     const char **pattern)
{
	const struct pattern *wild = NULL;

	*pattern = NULL;
	for (size_t i = 0; i < r->ndeny; i++) {
		if (pattern_matches(&r->deny[i], host, kind)) {
			*pattern = r->deny[i].text;
			return WARD_RULE_DENY_LISTED;
		}
	}
	for (size_t i = 0; i < r->nallow; i++) {
		if (!pattern_matches(&r->allow[i], host, kind))
			continue;
		if (!r->allow[i].wildcard) {
			*pattern = r->allow[i].text;
			return WARD_RULE_ALLOW_EXACT;
		}
		if (!wild)
			wild = &r->allow[i];
	}
	if (wild) {
		*pattern = wild->text;
		return WARD_RULE_ALLOW_WILDCARD;
	}
	return kind == WARD_HOST_NAME ? WARD_RULE_DENY_NOT_ALLOWED
				      : WARD_RULE_DENY_ADDRESS;
}
