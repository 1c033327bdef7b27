/*
 * ward — JSON strings from bytes that may not be UTF-8 (see ward/json.h):
 * below every module that writes JSON (the session log, the renderings of
 * a call in json_call.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ward/json.h"

#include "internal.h"
#include "util/util.h"

/*
 * The length of the longest valid UTF-8 prefix of @s: eight ASCII bytes
 * at a time (a command's output is mostly ASCII), util_utf8_decode()
 * for the rest — the same sequences jansson accepts.
 */
static size_t utf8_valid_prefix(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint64_t w;
		size_t n;

		if (len - i >= sizeof(w)) {
			memcpy(&w, s + i, sizeof(w));
			if (!(w & UINT64_C(0x8080808080808080))) {
				i += sizeof(w);
				continue;
			}
		}
		n = util_utf8_decode(NULL, s + i, len - i);
		if (n == 0)
			break;
		i += n;
	}
	return i;
}

json_t *ward_json_text(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	json_t *str;
	char *clean;
	size_t i, o;

	if (!buf)
		buf = "", s = (const unsigned char *)buf, len = 0;
	i = utf8_valid_prefix(s, len);
	/* Checked above: jansson's own check would be a second pass. */
	if (i == len)
		return json_stringn_nocheck(buf, len);
	/* Invalid UTF-8: each bad byte becomes U+FFFD (3 bytes). */
	clean = malloc(len * 3 + 1);
	if (!clean)
		return NULL;
	memcpy(clean, buf, i);
	o = i;
	while (i < len) {
		size_t n = util_utf8_decode(NULL, s + i, len - i);

		if (n == 0) {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(clean + o, s + i, n);
		o += n;
		i += n;
	}
	str = json_stringn_nocheck(clean, o);
	free(clean);
	return str;
}

json_t *ward_json_str(const char *s)
{
	return s ? ward_json_text(s, strlen(s)) : json_null();
}

json_t *ward_json_strv(char *const *v)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && v && v[i]; i++)
		if (json_array_append_new(arr, ward_json_str(v[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	return arr;
}

/* --- compact output -------------------------------------------------- */

/*
 * ward_json_dump writes what json_dump_callback(JSON_COMPACT) writes, byte
 * for byte, but hands a string's unescaped runs to the callback in one
 * piece: jansson decodes every code point of a string through a function
 * call (utf8_iterate), which was most of `ward run --json`'s cost for a
 * megabyte of output. The bytes that need an escape are the ASCII ones
 * below 0x20, '"' and '\\', written as jansson writes them; a byte that
 * does not start a valid UTF-8 sequence (only the caller's bytes can hold
 * one: jansson's strings are checked when made) is written as U+FFFD, as
 * ward_json_text() would have made it.
 */
static bool plain8(const unsigned char *s)
{
	/* "Bit Twiddling Hacks": a byte below N sets its top bit in
	 * (w - N * ones) & ~w; a byte equal to C is a byte below 1 of w ^ C. */
	const uint64_t ones = UINT64_C(0x0101010101010101), top = ones << 7;
	uint64_t w, q, b;

	memcpy(&w, s, sizeof(w));
	q = w ^ (ones * '"');
	b = w ^ (ones * '\\');
	return !((w & top) | ((w - ones * 0x20) & ~w & top) |
		 ((q - ones) & ~q & top) | ((b - ones) & ~b & top));
}

static int dump_string(const char *str, size_t len, json_dump_callback_t cb,
		       void *data)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0, i = 0;

	if (cb("\"", 1, data) != 0)
		return -1;
	while (i < len) {
		char esc[6] = {'\\', 0, '0', '0', 0, 0};
		const char *text = esc;
		size_t n = 2;
		unsigned char c;

		if (len - i >= 8 && plain8(s + i)) {
			i += 8;
			continue;
		}
		c = s[i];
		if (c >= 0x80) {
			size_t k = util_utf8_decode(NULL, s + i, len - i);

			if (k) {
				i += k;
				continue;
			}
			text = "\xef\xbf\xbd", n = 3;
		} else if (c >= 0x20 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (i > run && cb(str + run, i - run, data) != 0)
			return -1;
		run = ++i;
		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			if (c < 0x20) {
				esc[1] = 'u';
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 0xf];
				n = 6;
			}
		}
		if (cb(text, n, data) != 0)
			return -1;
	}
	if (len > run && cb(str + run, len - run, data) != 0)
		return -1;
	return cb("\"", 1, data);
}

static int dump(const json_t *value, const struct ward_json_bytes *bytes,
		size_t nbytes, json_dump_callback_t cb, void *data)
{
	json_t *v;
	size_t i;

	if (!value)
		return -1;
	for (i = 0; i < nbytes; i++)
		if (value == bytes[i].at)
			return dump_string(bytes[i].buf ? bytes[i].buf : "",
					   bytes[i].buf ? bytes[i].len : 0, cb,
					   data);
	switch (json_typeof(value)) {
	case JSON_STRING:
		return dump_string(json_string_value(value),
				   json_string_length(value), cb, data);
	case JSON_ARRAY:
		if (cb("[", 1, data) != 0)
			return -1;
		json_array_foreach(value, i, v)
		{
			if ((i && cb(",", 1, data) != 0) ||
			    dump(v, bytes, nbytes, cb, data) != 0)
				return -1;
		}
		return cb("]", 1, data);
	case JSON_OBJECT:
		if (cb("{", 1, data) != 0)
			return -1;
		i = 0;
		for (void *it = json_object_iter((json_t *)value); it;
		     it = json_object_iter_next((json_t *)value, it)) {
			if ((i++ && cb(",", 1, data) != 0) ||
			    dump_string(json_object_iter_key(it),
					json_object_iter_key_len(it), cb,
					data) != 0 ||
			    cb(":", 1, data) != 0 ||
			    dump(json_object_iter_value(it), bytes, nbytes, cb,
				 data) != 0)
				return -1;
		}
		return cb("}", 1, data);
	default:
		return json_dump_callback(value, cb, data,
					  JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

int ward_json_dump(const json_t *value, json_dump_callback_t cb, void *data)
{
	return dump(value, NULL, 0, cb, data);
}

int ward_json_dump_bytes(const json_t *value,
			 const struct ward_json_bytes *bytes, size_t nbytes,
			 json_dump_callback_t cb, void *data)
{
	return dump(value, bytes, nbytes, cb, data);
}

struct dump_buf {
	char *text;
	size_t len, cap;
};

static int dump_buf_add(const char *chunk, size_t n, void *data)
{
	struct dump_buf *b = data;

	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 256;
		char *t;

		while (cap - b->len <= n)
			cap *= 2;
		t = realloc(b->text, cap);
		if (!t)
			return -1;
		b->text = t, b->cap = cap;
	}
	memcpy(b->text + b->len, chunk, n);
	b->len += n;
	b->text[b->len] = '\0';
	return 0;
}

char *ward_json_dumps(const json_t *value)
{
	struct dump_buf b = {0};

	if (ward_json_dump(value, dump_buf_add, &b) != 0 ||
	    dump_buf_add("", 0, &b) != 0) {
		free(b.text);
		return NULL;
	}
	return b.text;
}
