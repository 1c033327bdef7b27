/*
 * Unit tests for src/mcp/jsonrpc.c: the line splitter `ward mcp` reads stdin
 * with, the JSON-RPC 2.0 parser and the builders.
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

#include "jsonrpc.h"

/* What the splitter reported, as "line|line|<oversized N>|…". */
struct seen {
	char text[4096];
	int lines, oversized;
};

static void on_line(void *ctx, const char *line, size_t len)
{
	struct seen *s = ctx;
	size_t used = strlen(s->text);

	if (line) {
		snprintf(s->text + used, sizeof(s->text) - used, "%.*s|",
			 (int)len, line);
		s->lines++;
	} else {
		snprintf(s->text + used, sizeof(s->text) - used,
			 "<oversized>|");
		s->oversized++;
	}
}

static void feed_all(struct seen *s, const char *data, size_t max, size_t chunk)
{
	struct ward_jr_lines l;
	size_t n = strlen(data);

	memset(s, 0, sizeof(*s));
	ward_jr_lines_init(&l, max);
	for (size_t off = 0; off < n; off += chunk)
		assert_int_equal(
		    ward_jr_lines_feed(&l, data + off,
				       n - off < chunk ? n - off : chunk,
				       on_line, s),
		    0);
	ward_jr_lines_finish(&l, on_line, s);
	ward_jr_lines_free(&l);
}

static void test_lines(void **state)
{
	struct seen s;

	(void)state;
	for (size_t chunk = 1; chunk <= 40; chunk++) {
		feed_all(&s, "one\ntwo\r\n\nthree", 64, chunk);
		assert_string_equal(s.text, "one|two||three|");
		assert_int_equal(s.lines, 4);
	}
}

static void test_oversized(void **state)
{
	struct seen s;

	(void)state;
	for (size_t chunk = 1; chunk <= 30; chunk++) {
		/* 8 bytes fit, 9 do not; the long one is reported once and
		 * skipped up to its newline. */
		feed_all(&s, "12345678\n123456789abc\nok\n", 8, chunk);
		assert_string_equal(s.text, "12345678|<oversized>|ok|");
		/* An oversized last line without a newline: reported, and
		 * nothing is delivered at the end. */
		feed_all(&s, "ok\nABCDEFGHIJKLMNOP", 8, chunk);
		assert_string_equal(s.text, "ok|<oversized>|");
	}
	/* '\r' counts toward the bound (it is part of the line read). */
	feed_all(&s, "12345678\r\n", 8, 100);
	assert_string_equal(s.text, "<oversized>|");
}

static void test_parse_kinds(void **state)
{
	struct ward_jr_msg m;
	static const char req[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}";
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"n\","
				   "\"params\":{\"a\":1}}";
	static const char resp[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}";
	static const char err[] = "{\"jsonrpc\":\"2.0\",\"id\":\"x\","
				  "\"error\":{\"code\":1,\"message\":\"m\"}}";
	static const char nullerr[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"Parse error\"}}";

	(void)state;
	assert_int_equal(ward_jr_parse(&m, req, strlen(req)), 0);
	assert_int_equal(m.kind, WARD_JR_REQUEST);
	assert_string_equal(m.method, "ping");
	assert_int_equal(json_integer_value(m.id), 7);
	assert_null(m.params);
	ward_jr_msg_clear(&m);

	assert_int_equal(ward_jr_parse(&m, note, strlen(note)), 0);
	assert_int_equal(m.kind, WARD_JR_NOTIFICATION);
	assert_null(m.id);
	assert_true(json_is_object(m.params));
	ward_jr_msg_clear(&m);

	assert_int_equal(ward_jr_parse(&m, resp, strlen(resp)), 0);
	assert_int_equal(m.kind, WARD_JR_RESPONSE);
	assert_non_null(m.result);
	assert_null(m.error);
	ward_jr_msg_clear(&m);

	assert_int_equal(ward_jr_parse(&m, err, strlen(err)), 0);
	assert_int_equal(m.kind, WARD_JR_RESPONSE);
	assert_non_null(m.error);
	ward_jr_msg_clear(&m);

	/* The peer's answer to a line it could not read: a response to
	 * nothing (never answered, or two peers would trade errors). */
	assert_int_equal(ward_jr_parse(&m, nullerr, strlen(nullerr)), 0);
	assert_int_equal(m.kind, WARD_JR_RESPONSE);
	assert_null(m.id);
	assert_non_null(m.error);
	ward_jr_msg_clear(&m);

	assert_int_equal(ward_jr_parse(&m, "  \t ", 4), 0);
	assert_int_equal(m.kind, WARD_JR_EMPTY);
	ward_jr_msg_clear(&m);
}

/* @line is invalid with @code; @id_kept: its id is answered to. */
static void expect_invalid(const char *line, int code, bool id_kept)
{
	struct ward_jr_msg m;

	assert_int_equal(ward_jr_parse(&m, line, strlen(line)), 0);
	if (m.kind != WARD_JR_INVALID || m.code != code ||
	    (m.id != NULL) != id_kept)
		fail_msg("%s: kind %d code %d id %s", line, m.kind, m.code,
			 m.id ? "kept" : "none");
	assert_true(m.message[0] != '\0');
	ward_jr_msg_clear(&m);
}

static void test_parse_invalid(void **state)
{
	(void)state;
	expect_invalid("{\"jsonrpc\":", WARD_JR_PARSE_ERROR, false);
	expect_invalid("garbage", WARD_JR_PARSE_ERROR, false);
	expect_invalid("{\"a\":\"\\u0000\"}", WARD_JR_PARSE_ERROR, false);
	expect_invalid("[]", WARD_JR_INVALID_REQUEST, false);
	expect_invalid("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\"}]",
		       WARD_JR_INVALID_REQUEST, false);
	expect_invalid("5", WARD_JR_INVALID_REQUEST, false);
	expect_invalid("null", WARD_JR_INVALID_REQUEST, false);
	expect_invalid("{\"id\":2,\"method\":\"p\"}", WARD_JR_INVALID_REQUEST,
		       true);
	expect_invalid("{\"jsonrpc\":2,\"id\":2,\"method\":\"p\"}",
		       WARD_JR_INVALID_REQUEST, true);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"p\"}",
		       WARD_JR_INVALID_REQUEST, false);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"p\"}",
		       WARD_JR_INVALID_REQUEST, false);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"p\"}",
		       WARD_JR_INVALID_REQUEST, false);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":7}",
		       WARD_JR_INVALID_REQUEST, true);
	expect_invalid(
	    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"p\",\"params\":1}",
	    WARD_JR_INVALID_REQUEST, true);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":4}",
		       WARD_JR_INVALID_REQUEST, true);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":1,"
		       "\"error\":{}}",
		       WARD_JR_INVALID_REQUEST, true);
	/* A null id is no usable id for a request or a result... */
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":1}",
		       WARD_JR_INVALID_REQUEST, false);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":5}",
		       WARD_JR_INVALID_REQUEST, false);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":5}",
		       WARD_JR_INVALID_REQUEST, true);
	expect_invalid("{\"jsonrpc\":\"2.0\",\"result\":{}}",
		       WARD_JR_INVALID_REQUEST, false);
}

static void test_builders(void **state)
{
	json_t *id = json_string("a\nb");
	json_t *back;
	size_t len = 0;
	char *line;

	(void)state;
	{
		json_t *msg =
		    ward_jr_result(id, json_pack("{s:s}", "k", "line1\nline2"));

		line = ward_jr_encode(&len, msg);
		assert_non_null(line);
		assert_int_equal(len, strlen(line));
		assert_int_equal(line[len - 1], '\n');
		assert_null(memchr(line, '\n', len - 1));
		back = json_loads(line, 0, NULL);
		assert_true(json_equal(json_object_get(back, "id"), id));
		assert_string_equal(
		    json_string_value(json_object_get(back, "jsonrpc")), "2.0");
		json_decref(back);
		free(line);
		json_decref(msg);
	}
	{
		json_t *msg =
		    ward_jr_error(NULL, WARD_JR_METHOD_NOT_FOUND,
				  "Method not found: x", json_string("d"));

		line = ward_jr_encode(&len, msg);
		assert_string_equal(
		    line, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
			  "{\"code\":-32601,\"message\":\"Method "
			  "not found: x\",\"data\":\"d\"}}\n");
		free(line);
		json_decref(msg);
	}
	{
		json_t *msg = ward_jr_notification("notifications/progress",
						   json_pack("{s:i}", "p", 1));

		line = ward_jr_encode(&len, msg);
		assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"method\":"
					  "\"notifications/progress\","
					  "\"params\":{\"p\":1}}\n");
		free(line);
		json_decref(msg);
	}
	{
		json_t *rid = json_string("ward-1");
		json_t *msg = ward_jr_request(rid, "elicitation/create", NULL);

		line = ward_jr_encode(&len, msg);
		assert_string_equal(line, "{\"jsonrpc\":\"2.0\",\"id\":"
					  "\"ward-1\",\"method\":"
					  "\"elicitation/create\"}\n");
		free(line);
		json_decref(msg);
		json_decref(rid);
	}
	assert_null(ward_jr_encode(&len, NULL));
	assert_true(ward_jr_id_valid(id));
	json_decref(id);
	id = json_real(1.5);
	assert_false(ward_jr_id_valid(id));
	json_decref(id);
	assert_false(ward_jr_id_valid(NULL));
}

/* Whether @s is valid UTF-8 (what json_string() insists on). */
static bool valid_utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

/*
 * Every error the server answers with can be encoded: a parse error whose
 * text cuts a UTF-8 character (jansson quotes the bytes near the error) was
 * once dropped, the client got nothing. The same for messages the server
 * cuts itself ("Method not found: %.128s").
 */
static void test_error_text_utf8(void **state)
{
	static const char *const lines[] = {
	    "\"\\\xcf\x8c",
	    "\"\\\xe2\x82\xac\xe2\x82\xac",
	    "{\"a\":\"\xf0\x9f\x98\x80\" x",
	    "\xf0\x9f\x98\x80\xf0\x9f\x98\x80",
	    "\"\xff\xfe\"",
	};
	struct ward_jr_msg m;
	char text[300];
	json_t *e;
	(void)state;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		assert_int_equal(ward_jr_parse(&m, lines[i], strlen(lines[i])),
				 0);
		assert_int_equal(m.kind, WARD_JR_INVALID);
		assert_int_equal(m.code, WARD_JR_PARSE_ERROR);
		if (!valid_utf8(m.message))
			fail_msg("line %zu: the message is not UTF-8", i);
		e = ward_jr_error(NULL, m.code, m.message, NULL);
		assert_non_null(e);
		json_decref(e);
		ward_jr_msg_clear(&m);
	}
	/* A message cut in the middle of a character still encodes. */
	memset(text, 'a', 127);
	strcpy(text + 127, "\xc3\xa9\xc3\xa9");
	text[128] = '\0';
	e = ward_jr_error(NULL, WARD_JR_METHOD_NOT_FOUND, text, NULL);
	assert_non_null(e);
	assert_true(valid_utf8(json_string_value(
	    json_object_get(json_object_get(e, "error"), "message"))));
	json_decref(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_oversized),
	    cmocka_unit_test(test_parse_kinds),
	    cmocka_unit_test(test_parse_invalid),
	    cmocka_unit_test(test_builders),
	    cmocka_unit_test(test_error_text_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
