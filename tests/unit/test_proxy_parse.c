/*
 * Unit tests for proxy_http.c and proxy_socks.c: the request line and
 * head (CONNECT and absolute-form), what is refused and with which
 * status, the head sent upstream, response heads, the chunked body
 * scanner, and the SOCKS5 greeting and request.
 */
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

static enum ward_parse req(struct ward_http_request *r, const char *s,
			   int *status, const char **why)
{
	*status = 0;
	*why = NULL;
	return ward_http_parse_request(r, s, strlen(s), status, why);
}

/* Parse @s; expect BAD with @status (and a reason). */
static void bad(const char *s, int status)
{
	struct ward_http_request r;
	const char *why;
	int st;

	if (req(&r, s, &st, &why) != WARD_PARSE_BAD)
		fail_msg("accepted: %s", s);
	assert_int_equal(st, status);
	assert_non_null(why);
}

static void test_connect(void **state)
{
	struct ward_http_request r;
	const char *why;
	int st;
	const char *s = "CONNECT Registry.NPMjs.org.:443 HTTP/1.1\r\n"
			"Host: registry.npmjs.org:443\r\n"
			"User-Agent: curl\r\n\r\n"
			"\x16\x03\x01";

	(void)state;
	assert_int_equal(req(&r, s, &st, &why), WARD_PARSE_OK);
	assert_int_equal(r.protocol, WARD_PROXY_PROTO_CONNECT);
	assert_string_equal(r.host, "registry.npmjs.org");
	assert_int_equal(r.host_kind, WARD_HOST_NAME);
	assert_int_equal(r.port, 443);
	/* The tunnel's first bytes follow the head. */
	assert_int_equal(r.head_len, strlen(s) - 3);

	assert_int_equal(
	    req(&r, "CONNECT [::1]:8443 HTTP/1.0\r\n\r\n", &st, &why),
	    WARD_PARSE_OK);
	assert_string_equal(r.host, "::1");
	assert_int_equal(r.host_kind, WARD_HOST_IPV6);
	assert_int_equal(r.port, 8443);
	assert_int_equal(r.minor, 0);

	assert_int_equal(
	    req(&r, "CONNECT 10.0.0.1:22 HTTP/1.1\r\n\r\n", &st, &why),
	    WARD_PARSE_OK);
	assert_int_equal(r.host_kind, WARD_HOST_IPV4);

	bad("CONNECT example.com HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT example.com: HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT example.com:+443 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT [example.com]:443 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT /x HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT 127.1:443 HTTP/1.1\r\n\r\n", 400);
	bad("CONNECT exa%6dple.com:443 HTTP/1.1\r\n\r\n", 400);
}

static void test_absolute(void **state)
{
	struct ward_http_request r;
	const char *why;
	int st;

	(void)state;
	assert_int_equal(req(&r,
			     "GET http://Example.com/a/b?c=d HTTP/1.1\r\n"
			     "Host: example.com\r\n\r\n",
			     &st, &why),
			 WARD_PARSE_OK);
	assert_int_equal(r.protocol, WARD_PROXY_PROTO_HTTP);
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.port, 80);
	assert_int_equal(r.path_len, strlen("/a/b?c=d"));
	assert_memory_equal(r.path, "/a/b?c=d", r.path_len);
	assert_false(r.has_length);
	assert_false(r.chunked);

	assert_int_equal(
	    req(&r, "HEAD HTTP://example.com:8080 HTTP/1.0\r\n\r\n", &st, &why),
	    WARD_PARSE_OK);
	assert_int_equal(r.port, 8080);
	assert_int_equal(r.path_len, 0);

	assert_int_equal(req(&r,
			     "POST http://[2001:db8::1]/x HTTP/1.1\r\n"
			     "content-length: 12\r\n\r\n",
			     &st, &why),
			 WARD_PARSE_OK);
	assert_string_equal(r.host, "2001:db8::1");
	assert_true(r.has_length);
	assert_int_equal(r.length, 12);

	assert_int_equal(req(&r,
			     "PUT http://e.x/?q HTTP/1.1\r\n"
			     "Transfer-Encoding:  Chunked \r\n\r\n",
			     &st, &why),
			 WARD_PARSE_OK);
	assert_true(r.chunked);

	/* Refused targets. */
	bad("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", 400);
	bad("GET https://example.com/ HTTP/1.1\r\n\r\n", 400);
	bad("GET ftp://example.com/ HTTP/1.1\r\n\r\n", 400);
	bad("GET http:/// HTTP/1.1\r\n\r\n", 400);
	bad("GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n", 400);
	bad("GET http://allowed.com@evil.com/ HTTP/1.1\r\n\r\n", 400);
	bad("GET http://example.com/#frag HTTP/1.1\r\n\r\n", 400);
	bad("GET http://example.com:99999/ HTTP/1.1\r\n\r\n", 400);
	bad("OPTIONS * HTTP/1.1\r\n\r\n", 400);
	/* Methods are case-sensitive: "connect" is not CONNECT. */
	bad("connect example.com:443 HTTP/1.1\r\n\r\n", 400);
}

static void test_head_syntax(void **state)
{
	struct ward_http_request r;
	const char *why;
	int st;

	(void)state;
	/* Incomplete heads ask for more; junk fails at once. */
	assert_int_equal(req(&r, "", &st, &why), WARD_PARSE_MORE);
	assert_int_equal(
	    req(&r, "GET http://e.x/ HTTP/1.1\r\nHost: e", &st, &why),
	    WARD_PARSE_MORE);
	bad("\x16\x03\x01\x02\x00", 400);
	bad("GE\x01T", 400);

	bad("GET http://e.x/ HTTP/2.0\r\n\r\n", 505);
	bad("GET http://e.x/ HTTP/1.2\r\n\r\n", 505);
	bad("GET http://e.x/ http/1.1\r\n\r\n", 400);
	bad("GET http://e.x/  HTTP/1.1\r\n\r\n", 400);
	bad("GET  http://e.x/ HTTP/1.1\r\n\r\n", 400);
	bad("GET http://e.x/\tHTTP/1.1\r\n\r\n", 400);
	/* Bare LF or CR, obs-fold, space before the colon, control bytes. */
	bad("GET http://e.x/ HTTP/1.1\nHost: e.x\r\n\r\n", 400);
	bad("GET http://e.x/ HTTP/1.1\r\nA: b\rc\r\n\r\n", 400);
	bad("GET http://e.x/ HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400);
	bad("GET http://e.x/ HTTP/1.1\r\nA : b\r\n\r\n", 400);
	bad("GET http://e.x/ HTTP/1.1\r\n: b\r\n\r\n", 400);
	bad("GET http://e.x/ HTTP/1.1\r\nA: b\x01\r\n\r\n", 400);
	bad("GET http://e.x/ HTTP/1.1\r\nAb\r\n\r\n", 400);
	/* Body framing two parsers could read two ways. */
	bad("POST http://e.x/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Content-Length: 1\r\n\r\n",
	    400);
	bad("POST http://e.x/ HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n", 400);
	bad("POST http://e.x/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
	bad("POST http://e.x/ HTTP/1.1\r\nContent-Length: 1\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    400);
	bad("POST http://e.x/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked"
	    "\r\n\r\n",
	    501);
	bad("POST http://e.x/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n",
	    400);
	bad("POST http://e.x/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
	    400);
	/* CONNECT ignores body framing: what follows is tunnel data. */
	assert_int_equal(req(&r,
			     "CONNECT e.x:443 HTTP/1.1\r\n"
			     "Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
			     &st, &why),
			 WARD_PARSE_OK);
}

static void test_head_too_large(void **state)
{
	struct ward_http_request r;
	size_t len = WARD_HTTP_HEAD_MAX + 10;
	char *big = malloc(len + 1);
	const char *why;
	int st;

	(void)state;
	assert_non_null(big);
	strcpy(big, "GET http://e.x/ HTTP/1.1\r\nX: ");
	memset(big + strlen(big), 'a', len - strlen(big));
	big[len] = '\0';
	assert_int_equal(ward_http_parse_request(&r, big, len, &st, &why),
			 WARD_PARSE_BAD);
	assert_int_equal(st, 431);
	/* A complete head past the limit counts as incomplete: refused. */
	memcpy(big + len - 4, "\r\n\r\n", 4);
	assert_int_equal(ward_http_parse_request(&r, big, len, &st, &why),
			 WARD_PARSE_BAD);
	free(big);
}

static void test_rewrite_request(void **state)
{
	struct ward_http_request r;
	const char *why;
	char *out = NULL;
	size_t out_len;
	int st;
	const char *s = "POST http://Example.com:8080?q=1 HTTP/1.1\r\n"
			"Host: evil.example\r\n"
			"Proxy-Connection: Keep-Alive\r\n"
			"Proxy-Authorization: Basic eA==\r\n"
			"Connection: keep-alive, X-Secret, Content-Length\r\n"
			"X-Secret: 1\r\n"
			"Keep-Alive: 300\r\n"
			"TE: trailers\r\n"
			"Upgrade: websocket\r\n"
			"Content-Length: 3\r\n"
			"Accept: */*\r\n\r\nabc";

	(void)state;
	assert_int_equal(req(&r, s, &st, &why), WARD_PARSE_OK);
	assert_int_equal(ward_http_rewrite_request(&out, &out_len, &r, s), 0);
	assert_int_equal(strlen(out), out_len);
	/* The checked authority replaces the client's Host; hop-by-hop
	 * fields go, framing stays even when Connection names it. */
	assert_string_equal(out, "POST /?q=1 HTTP/1.1\r\n"
				 "Content-Length: 3\r\n"
				 "Accept: */*\r\n"
				 "Host: example.com:8080\r\n"
				 "Connection: close\r\n\r\n");
	free(out);

	s = "GET http://[::1]/ HTTP/1.0\r\n\r\n";
	assert_int_equal(req(&r, s, &st, &why), WARD_PARSE_OK);
	assert_int_equal(ward_http_rewrite_request(&out, &out_len, &r, s), 0);
	assert_string_equal(out, "GET / HTTP/1.0\r\nHost: [::1]\r\n"
				 "Connection: close\r\n\r\n");
	free(out);
}

static void test_response(void **state)
{
	struct ward_http_response resp;
	const char *why;
	char *out = NULL;
	size_t out_len;
	const char *s = "HTTP/1.1 200 OK\r\n"
			"Content-Length: 5\r\n"
			"Connection: keep-alive, X-Hop\r\n"
			"X-Hop: 1\r\n"
			"Keep-Alive: timeout=5\r\n"
			"Server: t\r\n\r\nhello";

	(void)state;
	assert_int_equal(ward_http_parse_response(&resp, s, strlen(s), &why),
			 WARD_PARSE_OK);
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.head_len, strlen(s) - 5);
	assert_int_equal(ward_http_rewrite_response(&out, &out_len, &resp, s),
			 0);
	assert_string_equal(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
				 "Server: t\r\nConnection: close\r\n\r\n");
	free(out);

	s = "HTTP/1.0 204\r\n\r\n";
	assert_int_equal(ward_http_parse_response(&resp, s, strlen(s), &why),
			 WARD_PARSE_OK);
	assert_int_equal(resp.status, 204);
	assert_int_equal(
	    ward_http_parse_response(&resp, "HTTP/1.1 2", 10, &why),
	    WARD_PARSE_MORE);
	s = "SSH-2.0-OpenSSH\r\n\r\n";
	assert_int_equal(ward_http_parse_response(&resp, s, strlen(s), &why),
			 WARD_PARSE_BAD);
	s = "HTTP/1.1 99 Odd\r\n\r\n";
	assert_int_equal(ward_http_parse_response(&resp, s, strlen(s), &why),
			 WARD_PARSE_BAD);
	s = "HTTP/1.1 200 OK\r\nA: b\nC: d\r\n\r\n";
	assert_int_equal(ward_http_parse_response(&resp, s, strlen(s), &why),
			 WARD_PARSE_BAD);
}

static void test_error_response(void **state)
{
	char *out = NULL;
	size_t len;

	(void)state;
	assert_int_equal(ward_http_error_response(
			     &out, &len, 403,
			     "network access to evil.com denied: it is not "
			     "in the allowed domains",
			     "evil.com"),
			 0);
	assert_int_equal(strlen(out), len);
	assert_string_equal(out, "HTTP/1.1 403 Forbidden\r\n"
				 "Content-Type: text/plain; charset=utf-8\r\n"
				 "Content-Length: 74\r\n"
				 "X-Ward-Denied-Host: evil.com\r\n"
				 "Connection: close\r\n\r\n"
				 "ward: network access to evil.com denied: it "
				 "is not in the allowed domains\n");
	/* The body is exactly Content-Length bytes. */
	assert_int_equal(strlen(strstr(out, "\r\n\r\n") + 4), 74);
	free(out);
	assert_int_equal(ward_http_error_response(&out, &len, 502, "x", NULL),
			 0);
	assert_null(strstr(out, "X-Ward"));
	assert_non_null(strstr(out, "502 Bad Gateway"));
	free(out);
}

/* Feed @s whole and byte by byte; both must agree. */
static long chunked(const char *s, size_t len, bool *done)
{
	struct ward_http_chunked a = {0}, b = {0};
	const char *why;
	long whole = ward_http_chunked_feed(&a, s, len, done, &why);
	long total = 0;
	bool d2 = false;

	for (size_t i = 0; i < len && !d2; i++) {
		long k = ward_http_chunked_feed(&b, s + i, 1, &d2, &why);

		if (k < 0) {
			total = -1;
			break;
		}
		total += k;
	}
	if (whole >= 0 && total >= 0) {
		assert_int_equal(whole, total);
		assert_int_equal(*done, d2);
	} else {
		assert_int_equal(whole < 0, total < 0);
	}
	return whole;
}

static void test_chunked(void **state)
{
	const char *s = "5\r\nhello\r\n1A;ext=1\r\n"
			"abcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\n"
			"GET http://next/ HTTP/1.1\r\n";
	size_t body = strlen(s) - strlen("GET http://next/ HTTP/1.1\r\n");
	bool done;

	(void)state;
	assert_int_equal(chunked(s, strlen(s), &done), (long)body);
	assert_true(done);
	assert_int_equal(chunked("0\r\n\r\n", 5, &done), 5);
	assert_true(done);
	assert_int_equal(chunked("5 ; a\r\nhello\r\n", 14, &done), 14);
	assert_false(done);
	assert_int_equal(chunked("5\r\nhel", 6, &done), 6);
	assert_false(done);

	assert_int_equal(chunked("x\r\n", 3, &done), -1);
	assert_int_equal(chunked("5\nhello\r\n", 9, &done), -1);
	assert_int_equal(chunked("5\r\nhelloX\r\n", 11, &done), -1);
	assert_int_equal(chunked("5\r\nhello\n", 9, &done), -1);
	assert_int_equal(chunked("11111111111111111\r\n", 19, &done), -1);
	assert_int_equal(chunked("0\r\nX\n", 5, &done), -1);
	assert_int_equal(chunked("0\r\n\rx", 5, &done), -1);
	assert_int_equal(chunked("-1\r\n", 4, &done), -1);
}

static void test_socks_greeting(void **state)
{
	const unsigned char ok[] = {5, 2, 2, 0, 0xaa};
	const unsigned char auth_only[] = {5, 1, 2};
	const char *why;
	size_t used = 0;
	bool no_auth = false;

	(void)state;
	assert_int_equal(
	    ward_socks5_parse_greeting(&used, &no_auth, ok, 5, &why),
	    WARD_PARSE_OK);
	assert_int_equal(used, 4);
	assert_true(no_auth);
	for (size_t n = 0; n < 4; n++)
		assert_int_equal(
		    ward_socks5_parse_greeting(&used, &no_auth, ok, n, &why),
		    WARD_PARSE_MORE);
	assert_int_equal(
	    ward_socks5_parse_greeting(&used, &no_auth, auth_only, 3, &why),
	    WARD_PARSE_OK);
	assert_false(no_auth);
	assert_int_equal(
	    ward_socks5_parse_greeting(
		&used, &no_auth, (const unsigned char *)"\x04\x01", 2, &why),
	    WARD_PARSE_BAD);
	assert_non_null(strstr(why, "SOCKS4"));
	assert_int_equal(
	    ward_socks5_parse_greeting(
		&used, &no_auth, (const unsigned char *)"\x05\x00", 2, &why),
	    WARD_PARSE_BAD);
}

static void test_socks_request(void **state)
{
	const unsigned char dom[] = {5,	  1,   0,   3,	 11,   'E',
				     'x', 'a', 'm', 'p', 'l',  'e',
				     '.', 'c', 'o', 'm', 0x01, 0xbb};
	const unsigned char v4[] = {5, 1, 0, 1, 127, 0, 0, 1, 0, 80};
	const unsigned char v6[] = {5, 1, 0, 4, 0, 0, 0, 0, 0, 0,    0,
				    0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90};
	const unsigned char dom_ip[] = {5,   1,	  0,   3,   7,	 '1', '.',
					'2', '.', '3', '.', '4', 0,   80};
	const unsigned char bind[] = {5, 2, 0, 1, 1, 2, 3, 4, 0, 80};
	const unsigned char atyp[] = {5, 1, 0, 9, 1, 2, 3, 4, 0, 80};
	const unsigned char badname[] = {5, 1, 0, 3, 3, 'a', '/', 'b', 0, 80};
	const unsigned char port0[] = {5, 1, 0, 1, 1, 2, 3, 4, 0, 0};
	const unsigned char ver[] = {4, 1, 0, 1, 1, 2, 3, 4, 0, 80};
	struct ward_socks5_request r;
	unsigned char reply;
	const char *why;
	size_t used;

	(void)state;
	assert_int_equal(ward_socks5_parse_request(&used, &r, dom, sizeof(dom),
						   &reply, &why),
			 WARD_PARSE_OK);
	assert_int_equal(used, sizeof(dom));
	assert_string_equal(r.host, "example.com");
	assert_int_equal(r.host_kind, WARD_HOST_NAME);
	assert_int_equal(r.port, 443);
	for (size_t n = 0; n < sizeof(dom); n++)
		assert_int_equal(
		    ward_socks5_parse_request(&used, &r, dom, n, &reply, &why),
		    WARD_PARSE_MORE);

	assert_int_equal(
	    ward_socks5_parse_request(&used, &r, v4, sizeof(v4), &reply, &why),
	    WARD_PARSE_OK);
	assert_string_equal(r.host, "127.0.0.1");
	assert_int_equal(r.host_kind, WARD_HOST_IPV4);
	assert_int_equal(r.port, 80);
	assert_int_equal(
	    ward_socks5_parse_request(&used, &r, v6, sizeof(v6), &reply, &why),
	    WARD_PARSE_OK);
	assert_string_equal(r.host, "::1");
	assert_int_equal(r.port, 8080);
	/* A "domain name" that is an address is an address. */
	assert_int_equal(ward_socks5_parse_request(
			     &used, &r, dom_ip, sizeof(dom_ip), &reply, &why),
			 WARD_PARSE_OK);
	assert_int_equal(r.host_kind, WARD_HOST_IPV4);

	assert_int_equal(ward_socks5_parse_request(&used, &r, bind,
						   sizeof(bind), &reply, &why),
			 WARD_PARSE_BAD);
	assert_int_equal(reply, WARD_SOCKS_BAD_COMMAND);
	assert_int_equal(ward_socks5_parse_request(&used, &r, atyp,
						   sizeof(atyp), &reply, &why),
			 WARD_PARSE_BAD);
	assert_int_equal(reply, WARD_SOCKS_BAD_ADDRESS);
	assert_int_equal(ward_socks5_parse_request(
			     &used, &r, badname, sizeof(badname), &reply, &why),
			 WARD_PARSE_BAD);
	assert_int_equal(reply, WARD_SOCKS_BAD_ADDRESS);
	assert_int_equal(ward_socks5_parse_request(&used, &r, port0,
						   sizeof(port0), &reply, &why),
			 WARD_PARSE_BAD);
	assert_int_equal(reply, WARD_SOCKS_FAILURE);
	assert_int_equal(
	    ward_socks5_parse_request(&used, &r, ver, 1, &reply, &why),
	    WARD_PARSE_BAD);
}

static void test_socks_reply(void **state)
{
	unsigned char out[10];
	const unsigned char want[10] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};

	(void)state;
	ward_socks5_reply(out, WARD_SOCKS_NOT_ALLOWED);
	assert_memory_equal(out, want, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_connect),
	    cmocka_unit_test(test_absolute),
	    cmocka_unit_test(test_head_syntax),
	    cmocka_unit_test(test_head_too_large),
	    cmocka_unit_test(test_rewrite_request),
	    cmocka_unit_test(test_response),
	    cmocka_unit_test(test_error_response),
	    cmocka_unit_test(test_chunked),
	    cmocka_unit_test(test_socks_greeting),
	    cmocka_unit_test(test_socks_request),
	    cmocka_unit_test(test_socks_reply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
