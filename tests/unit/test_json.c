/*
 * Unit tests for src/libward/json.c: ward_json_text's strings from bytes
 * that may not be UTF-8, and ward_json_dump / ward_json_dump_bytes /
 * ward_json_dumps, which must write exactly what jansson's compact dump
 * writes.
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
#include <jansson.h>

#include "ward/ward.h"
#include "ward/json.h"

struct sink {
	char *text;
	size_t len;
	int fail_after; /* calls; -1: never */
	int calls;
};

static int sink_add(const char *chunk, size_t n, void *data)
{
	struct sink *s = data;

	if (s->fail_after >= 0 && s->calls++ >= s->fail_after)
		return -1;
	s->text = realloc(s->text, s->len + n + 1);
	assert_non_null(s->text);
	memcpy(s->text + s->len, chunk, n);
	s->len += n;
	s->text[s->len] = '\0';
	return 0;
}

/* ward_json_dump and ward_json_dumps of @v are jansson's compact text. */
static void assert_same_dump(const json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	char *got = ward_json_dumps(v);
	struct sink s = {NULL, 0, -1, 0};

	assert_non_null(want);
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(ward_json_dump(v, sink_add, &s), 0);
	assert_non_null(s.text);
	assert_string_equal(s.text, want);
	free(s.text);
	free(got);
	free(want);
}

/* A deterministic generator (tests own their world: no time, no seed). */
static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void test_every_byte_escaped_as_jansson(void **ctx)
{
	char buf[128];

	(void)ctx;
	/* Every ASCII byte (NUL included), alone and in a run. */
	for (int c = 0; c < 128; c++) {
		json_t *v;

		buf[0] = (char)c;
		v = json_stringn(buf, 1);
		assert_non_null(v);
		assert_same_dump(v);
		json_decref(v);
	}
	for (int c = 0; c < 128; c++)
		buf[c] = (char)c;
	{
		json_t *v = json_stringn(buf, sizeof(buf));

		assert_same_dump(v);
		json_decref(v);
	}
}

static void test_specials_at_every_offset(void **ctx)
{
	/* The eight-byte scan must stop at a special wherever it falls. */
	static const char specials[] = {'"',	'\\', '\n',   '\x01',
					'\x1f', '\t', '\x7f', ' ',
					'!',	'#',  '[',    ']'};
	char buf[40];

	(void)ctx;
	for (size_t len = 0; len <= sizeof(buf); len++)
		for (size_t at = 0; at < len; at++)
			for (size_t k = 0; k < sizeof(specials); k++) {
				json_t *v;

				memset(buf, 'x', len);
				buf[at] = specials[k];
				v = json_stringn(buf, len);
				assert_non_null(v);
				assert_same_dump(v);
				json_decref(v);
			}
}

static void test_unicode_and_trees(void **ctx)
{
	json_t *v;

	(void)ctx;
	v = json_pack("{s:s, s:i, s:I, s:f, s:b, s:b, s:n, s:[], s:{}, "
		      "s:[s, [i, {s:s}], {}], s:s, s:s}",
		      "a\"\\key\n", "é € 😀 \x7f", "int", -42, "big",
		      (json_int_t)INT64_MAX, "real", 0.1, "t", 1, "f", 0, "n",
		      "empty_a", "empty_o", "nested", "x\ty", 7, "k", "\x01",
		      "", "empty key", "u2028", "\xe2\x80\xa8\xe2\x80\xa9");
	assert_non_null(v);
	assert_same_dump(v);
	json_decref(v);
	/* Scalars at the top, as JSON_ENCODE_ANY writes them. */
	v = json_real(1e300);
	assert_same_dump(v);
	json_decref(v);
	assert_same_dump(json_null());
	assert_same_dump(json_true());
}

static void test_random_strings(void **ctx)
{
	uint32_t x = 2463534242u;
	char raw[300];

	(void)ctx;
	for (int round = 0; round < 3000; round++) {
		size_t len = rnd(&x) % sizeof(raw);
		json_t *v, *arr;

		/* Mostly ASCII with controls, some high bytes (which may or
		 * may not form UTF-8: ward_json_text makes them valid). */
		for (size_t i = 0; i < len; i++) {
			uint32_t r = rnd(&x);

			raw[i] = (char)(r % 8 == 0   ? r >> 8
					: r % 4 == 0 ? (r >> 8) % 32
						     : 'a' + (r >> 8) % 26);
		}
		v = ward_json_text(raw, len);
		assert_non_null(v);
		arr = json_pack("[o, s]", v, "tail");
		assert_same_dump(arr);
		json_decref(arr);
	}
}

/* ward_json_text's replacement, as it was before the fast check. */
static json_t *text_reference(const char *buf, size_t len)
{
	char *clean = malloc(len * 3 + 1);
	size_t o = 0;
	json_t *v;

	assert_non_null(clean);
	for (size_t i = 0; i < len;) {
		const unsigned char *s = (const unsigned char *)buf + i;
		size_t n = 0;

		/* The shortest prefix jansson accepts: one code point. */
		for (size_t k = 1; k <= 4 && k <= len - i; k++) {
			json_t *t = json_stringn((const char *)s, k);

			if (t) {
				n = k;
				json_decref(t);
				break;
			}
		}
		if (!n) {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(clean + o, s, n);
		o += n;
		i += n;
	}
	v = json_stringn(clean, o);
	free(clean);
	return v;
}

static void test_text_replaces_bad_bytes(void **ctx)
{
	static const char *const cases[] = {
	    "\xff",
	    "a\xc3",
	    "\xc0\x80",
	    "\xed\xa0\x80",
	    "\xf4\x90\x80\x80",
	    "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "\x80\x80x",
	    "12345678\xff"
	    "12345678",
	    "\xe2\x82",
	    "\xf0\x9f\x98"};

	(void)ctx;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i]);
		json_t *got = ward_json_text(cases[i], len);
		json_t *want = text_reference(cases[i], len);

		assert_non_null(got);
		assert_non_null(want);
		assert_int_equal(json_string_length(got),
				 json_string_length(want));
		assert_memory_equal(json_string_value(got),
				    json_string_value(want),
				    json_string_length(want));
		json_decref(got);
		json_decref(want);
	}
	/* NULL is "", and embedded NUL bytes are kept. */
	{
		json_t *v = ward_json_text(NULL, 5);

		assert_string_equal(json_string_value(v), "");
		json_decref(v);
		v = ward_json_text("a\0b", 3);
		assert_int_equal(json_string_length(v), 3);
		json_decref(v);
	}
}

static void test_bytes_written_as_text_would_be(void **ctx)
{
	uint32_t x = 88172645u;
	char raw[200];

	(void)ctx;
	for (int round = 0; round < 2000; round++) {
		size_t len = rnd(&x) % sizeof(raw);
		json_t *at = json_object(), *tree, *as_text;
		struct ward_json_bytes b;
		struct sink s = {NULL, 0, -1, 0};
		char *want;

		for (size_t i = 0; i < len; i++)
			raw[i] = (char)rnd(&x);
		tree = json_pack("{s:i, s:O, s:s}", "n", round, "out", at,
				 "after", "z");
		as_text = json_pack("{s:i, s:o, s:s}", "n", round, "out",
				    ward_json_text(raw, len), "after", "z");
		assert_non_null(tree);
		assert_non_null(as_text);
		b = (struct ward_json_bytes){at, raw, len};
		assert_int_equal(
		    ward_json_dump_bytes(tree, &b, 1, sink_add, &s), 0);
		want = json_dumps(as_text, JSON_COMPACT);
		assert_string_equal(s.text, want);
		free(want);
		free(s.text);
		json_decref(as_text);
		json_decref(tree);
		json_decref(at);
	}
}

static void test_callback_failure_is_returned(void **ctx)
{
	json_t *v = json_pack("{s:s, s:[i, s]}", "a", "x\ny", "b", 1, "c\"");

	(void)ctx;
	assert_int_equal(ward_json_dump(NULL, sink_add, NULL), -1);
	for (int k = 0; k < 40; k++) {
		struct sink s = {NULL, 0, k, 0};
		int rc = ward_json_dump(v, sink_add, &s);

		/* Every failure is seen, and only failures are. */
		assert_int_equal(rc, s.calls > k ? -1 : 0);
		free(s.text);
	}
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_byte_escaped_as_jansson),
	    cmocka_unit_test(test_specials_at_every_offset),
	    cmocka_unit_test(test_unicode_and_trees),
	    cmocka_unit_test(test_random_strings),
	    cmocka_unit_test(test_text_replaces_bad_bytes),
	    cmocka_unit_test(test_bytes_written_as_text_would_be),
	    cmocka_unit_test(test_callback_failure_is_returned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
