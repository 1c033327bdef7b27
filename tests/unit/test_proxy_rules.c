/*
 * Unit tests for proxy_rules.c: host name normalization, the patterns
 * (exact, "*.", IP addresses, what is refused), the allow/deny decision
 * and the address classes behind the DNS-rebinding rule.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libward/net/proxy_internal.h"
#include "ward/ward.h"

/* Normalize @in; returns the kind and leaves the result in @out. */
static enum ward_host_kind norm(char *out, const char *in)
{
	const char *why = NULL;
	enum ward_host_kind k = ward_host_parse(out, in, strlen(in), &why);

	if (!k)
		assert_non_null(why);
	return k;
}

static void test_host_names(void **state)
{
	char out[WARD_HOST_MAX];

	(void)state;
	assert_int_equal(norm(out, "Example.COM"), WARD_HOST_NAME);
	assert_string_equal(out, "example.com");
	/* One trailing dot is the same name; two are an empty label. */
	assert_int_equal(norm(out, "example.com."), WARD_HOST_NAME);
	assert_string_equal(out, "example.com");
	assert_int_equal(norm(out, "example.com.."), 0);
	assert_int_equal(norm(out, "localhost"), WARD_HOST_NAME);
	assert_int_equal(norm(out, "_srv.a-b.example"), WARD_HOST_NAME);
	assert_int_equal(norm(out, "xn--bcher-kva.example"), WARD_HOST_NAME);
	assert_string_equal(out, "xn--bcher-kva.example");

	/* Refused: empty, empty labels, odd characters, non-ASCII. */
	assert_int_equal(norm(out, ""), 0);
	assert_int_equal(norm(out, "."), 0);
	assert_int_equal(norm(out, ".example.com"), 0);
	assert_int_equal(norm(out, "a..b"), 0);
	assert_int_equal(norm(out, "a b"), 0);
	assert_int_equal(norm(out, "a/b"), 0);
	assert_int_equal(norm(out, "a@b"), 0);
	assert_int_equal(norm(out, "a%2eb"), 0);
	assert_int_equal(norm(out, "b\xc3\xbc"
				   "cher.example"),
			 0);
	assert_int_equal(ward_host_parse(out, "a\0b", 3, &(const char *){0}),
			 0);
}

static void test_host_lengths(void **state)
{
	char out[WARD_HOST_MAX], name[300];

	(void)state;
	/* A 63-byte label is fine, 64 is not. */
	memset(name, 'a', 63);
	strcpy(name + 63, ".com");
	assert_int_equal(norm(out, name), WARD_HOST_NAME);
	memset(name, 'a', 64);
	strcpy(name + 64, ".com");
	assert_int_equal(norm(out, name), 0);
	/* 253 bytes in all (four 62-byte labels and "abcd"). */
	name[0] = '\0';
	for (int i = 0; i < 4; i++) {
		memset(name + strlen(name), 'b', 62);
		name[63 * (i + 1) - 1] = '.';
		name[63 * (i + 1)] = '\0';
	}
	strcat(name, "abcd");
	assert_int_equal(strlen(name), 256);
	assert_int_equal(norm(out, name), 0);
	name[254] = '\0';
	assert_int_equal(norm(out, name), 0);
	name[253] = '\0';
	assert_int_equal(strlen(name), 253);
	assert_int_equal(norm(out, name), WARD_HOST_NAME);
}

static void test_host_addresses(void **state)
{
	char out[WARD_HOST_MAX];

	(void)state;
	assert_int_equal(norm(out, "127.0.0.1"), WARD_HOST_IPV4);
	assert_string_equal(out, "127.0.0.1");
	assert_int_equal(norm(out, "10.1.2.3."), WARD_HOST_IPV4);
	assert_string_equal(out, "10.1.2.3");
	assert_int_equal(norm(out, "::1"), WARD_HOST_IPV6);
	assert_string_equal(out, "::1");
	assert_int_equal(norm(out, "0:0:0:0:0:0:0:0001"), WARD_HOST_IPV6);
	assert_string_equal(out, "::1");
	assert_int_equal(norm(out, "2001:DB8::A"), WARD_HOST_IPV6);
	assert_string_equal(out, "2001:db8::a");
	assert_int_equal(norm(out, "::ffff:127.0.0.1"), WARD_HOST_IPV6);
	assert_string_equal(out, "::ffff:127.0.0.1");

	/* Numbers that resolvers read as addresses are not names. */
	assert_int_equal(norm(out, "127.1"), 0);
	assert_int_equal(norm(out, "2130706433"), 0);
	assert_int_equal(norm(out, "0x7f.0.0.1"), 0);
	assert_int_equal(norm(out, "0x7f000001"), 0);
	assert_int_equal(norm(out, "127.0.0.01"), 0);
	assert_int_equal(norm(out, "1.2.3.256"), 0);
	assert_int_equal(norm(out, "1.2.3.4.5"), 0);
	/* A numeric label elsewhere is fine ("1e100.net", "3com.com"). */
	assert_int_equal(norm(out, "1e100.net"), WARD_HOST_NAME);
	assert_int_equal(norm(out, "123.example"), WARD_HOST_NAME);
	assert_int_equal(norm(out, "0xdead.example"), WARD_HOST_NAME);
	/* A label such as "0xbeef" that is not all hex stays a name. */
	assert_int_equal(norm(out, "a.0xbeefz"), WARD_HOST_NAME);
	/* IPv6 zone ids and brackets are not hosts. */
	assert_int_equal(norm(out, "fe80::1%eth0"), 0);
	assert_int_equal(norm(out, "[::1]"), 0);
	assert_int_equal(norm(out, "1::2::3"), 0);
}

static void test_patterns(void **state)
{
	(void)state;
	assert_int_equal(ward_proxy_pattern_check("example.com"), 0);
	assert_int_equal(ward_proxy_pattern_check("*.npmjs.org"), 0);
	assert_int_equal(ward_proxy_pattern_check("EXAMPLE.com."), 0);
	assert_int_equal(ward_proxy_pattern_check("127.0.0.1"), 0);
	assert_int_equal(ward_proxy_pattern_check("::1"), 0);
	assert_int_equal(ward_proxy_pattern_check("[::1]"), 0);
	assert_int_equal(ward_proxy_pattern_check("localhost"), 0);

	assert_int_equal(ward_proxy_pattern_check("*"), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "network \"on\""));
	assert_int_equal(ward_proxy_pattern_check("*."), WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check(""), WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("*example.com"), WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("a.*.com"), WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("*.*.com"), WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("*.10.0.0.1"), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "not an address"));
	assert_int_equal(ward_proxy_pattern_check("example.com:443"),
			 WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("http://example.com"),
			 WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("[example.com]"),
			 WARD_EINVAL);
	assert_int_equal(ward_proxy_pattern_check("b\xc3\xbc"
						  "cher.de"),
			 WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "punycode"));
	assert_int_equal(ward_proxy_pattern_check(NULL), WARD_EINVAL);
}

static enum ward_rule_result check(const struct ward_proxy_rules *r,
				   const char *host, const char **pattern)
{
	char out[WARD_HOST_MAX];
	enum ward_host_kind k = norm(out, host);

	assert_true(k != 0);
	return ward_proxy_rules_check(r, out, k, pattern);
}

static void test_rules(void **state)
{
	char *allow[] = {"example.com",
			 "*.npmjs.org",
			 "Registry.Yarnpkg.COM.",
			 "*.github.com",
			 "127.0.0.1",
			 "[::1]",
			 NULL};
	char *deny[] = {"evil.npmjs.org", "*.gist.github.com", NULL};
	struct ward_proxy_rules *r = NULL;
	const char *pat;

	(void)state;
	assert_int_equal(ward_proxy_rules_new(&r, allow, deny), 0);

	assert_int_equal(check(r, "example.com", &pat), WARD_RULE_ALLOW_EXACT);
	assert_string_equal(pat, "example.com");
	assert_int_equal(check(r, "EXAMPLE.COM.", &pat), WARD_RULE_ALLOW_EXACT);
	/* An exact pattern is that name only. */
	assert_int_equal(check(r, "www.example.com", &pat),
			 WARD_RULE_DENY_NOT_ALLOWED);
	assert_null(pat);
	assert_int_equal(check(r, "example.com.evil", &pat),
			 WARD_RULE_DENY_NOT_ALLOWED);
	assert_int_equal(check(r, "notexample.com", &pat),
			 WARD_RULE_DENY_NOT_ALLOWED);

	/* "*.x": every name under x, at any depth, not x itself. */
	assert_int_equal(check(r, "registry.npmjs.org", &pat),
			 WARD_RULE_ALLOW_WILDCARD);
	assert_string_equal(pat, "*.npmjs.org");
	assert_int_equal(check(r, "a.b.npmjs.org", &pat),
			 WARD_RULE_ALLOW_WILDCARD);
	assert_int_equal(check(r, "npmjs.org", &pat),
			 WARD_RULE_DENY_NOT_ALLOWED);
	assert_int_equal(check(r, "evilnpmjs.org", &pat),
			 WARD_RULE_DENY_NOT_ALLOWED);
	assert_int_equal(check(r, "registry.yarnpkg.com", &pat),
			 WARD_RULE_ALLOW_EXACT);

	/* The denied list wins over both kinds of allow. */
	assert_int_equal(check(r, "evil.npmjs.org", &pat),
			 WARD_RULE_DENY_LISTED);
	assert_string_equal(pat, "evil.npmjs.org");
	assert_int_equal(check(r, "x.gist.github.com", &pat),
			 WARD_RULE_DENY_LISTED);
	assert_string_equal(pat, "*.gist.github.com");
	assert_int_equal(check(r, "gist.github.com", &pat),
			 WARD_RULE_ALLOW_WILDCARD);
	assert_int_equal(check(r, "api.github.com", &pat),
			 WARD_RULE_ALLOW_WILDCARD);

	/* Addresses: only those allowed as such, compared as addresses. */
	assert_int_equal(check(r, "127.0.0.1", &pat), WARD_RULE_ALLOW_EXACT);
	assert_int_equal(check(r, "0:0::1", &pat), WARD_RULE_ALLOW_EXACT);
	assert_string_equal(pat, "[::1]");
	assert_int_equal(check(r, "127.0.0.2", &pat), WARD_RULE_DENY_ADDRESS);
	assert_int_equal(check(r, "::ffff:127.0.0.1", &pat),
			 WARD_RULE_DENY_ADDRESS);
	assert_int_equal(check(r, "93.184.216.34", &pat),
			 WARD_RULE_DENY_ADDRESS);
	ward_proxy_rules_free(r);

	/* No allow list: everything is refused. */
	assert_int_equal(ward_proxy_rules_new(&r, NULL, NULL), 0);
	assert_int_equal(check(r, "example.com", &pat),
			 WARD_RULE_DENY_NOT_ALLOWED);
	assert_int_equal(check(r, "127.0.0.1", &pat), WARD_RULE_DENY_ADDRESS);
	ward_proxy_rules_free(r);
	ward_proxy_rules_free(NULL);
}

static void test_rules_bad_pattern(void **state)
{
	char *allow[] = {"ok.example", "bad pattern", NULL};
	char *deny[] = {"*", NULL};
	struct ward_proxy_rules *r = NULL;

	(void)state;
	assert_int_equal(ward_proxy_rules_new(&r, allow, NULL), WARD_EINVAL);
	assert_null(r);
	assert_non_null(strstr(ward_error_last(), "bad pattern"));
	assert_int_equal(ward_proxy_rules_new(&r, NULL, deny), WARD_EINVAL);
}

static bool pub4(const char *a)
{
	struct sockaddr_in in = {.sin_family = AF_INET};

	assert_int_equal(inet_pton(AF_INET, a, &in.sin_addr), 1);
	return ward_addr_is_public((struct sockaddr *)&in);
}

static bool pub6(const char *a)
{
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};

	assert_int_equal(inet_pton(AF_INET6, a, &in6.sin6_addr), 1);
	return ward_addr_is_public((struct sockaddr *)&in6);
}

static void test_addresses(void **state)
{
	struct sockaddr sa = {.sa_family = AF_UNIX};

	(void)state;
	assert_true(pub4("93.184.216.34"));
	assert_true(pub4("8.8.8.8"));
	assert_true(pub4("172.15.255.255"));
	assert_true(pub4("172.32.0.0"));
	assert_true(pub4("100.63.255.255"));
	assert_true(pub4("223.255.255.255"));
	assert_false(pub4("0.0.0.0"));
	assert_false(pub4("127.0.0.1"));
	assert_false(pub4("127.255.255.254"));
	assert_false(pub4("10.0.0.1"));
	assert_false(pub4("172.16.0.1"));
	assert_false(pub4("172.31.255.255"));
	assert_false(pub4("192.168.1.1"));
	assert_false(pub4("169.254.169.254"));
	assert_false(pub4("100.64.0.1"));
	assert_false(pub4("192.0.0.1"));
	assert_false(pub4("192.0.2.1"));
	assert_false(pub4("198.18.0.1"));
	assert_false(pub4("198.51.100.1"));
	assert_false(pub4("203.0.113.1"));
	assert_false(pub4("224.0.0.1"));
	assert_false(pub4("240.0.0.1"));
	assert_false(pub4("255.255.255.255"));

	assert_true(pub6("2606:4700::1111"));
	assert_true(pub6("2a00:1450:4001:81b::200e"));
	assert_true(pub6("::ffff:8.8.8.8"));
	assert_true(pub6("64:ff9b::808:808"));
	assert_true(pub6("2002:808:808::1"));
	assert_false(pub6("::"));
	assert_false(pub6("::1"));
	assert_false(pub6("::ffff:127.0.0.1"));
	assert_false(pub6("::ffff:10.0.0.1"));
	assert_false(pub6("::127.0.0.1"));
	assert_false(pub6("64:ff9b::7f00:1"));
	assert_false(pub6("64:ff9b:1::1"));
	assert_false(pub6("2002:7f00:1::1"));
	assert_false(pub6("2002:a9fe:a9fe::1"));
	assert_false(pub6("fc00::1"));
	assert_false(pub6("fd12:3456::1"));
	assert_false(pub6("fe80::1"));
	assert_false(pub6("fec0::1"));
	assert_false(pub6("ff02::1"));
	assert_false(pub6("2001:db8::1"));
	assert_false(pub6("2001::1"));
	assert_false(pub6("100::1"));
	assert_false(ward_addr_is_public(&sa));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host_names),
	    cmocka_unit_test(test_host_lengths),
	    cmocka_unit_test(test_host_addresses),
	    cmocka_unit_test(test_patterns),
	    cmocka_unit_test(test_rules),
	    cmocka_unit_test(test_rules_bad_pattern),
	    cmocka_unit_test(test_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
