/*
 * ward — JSON renderings of ward's values, for front ends and harnesses
 * that speak JSON with jansson (libward links it; include <jansson.h>
 * before or through this header). `ward run --json`, `ward confine
 * --json`, `ward fs --json` and the MCP server's results are built from
 * these, so every surface reports a call the same way.
 *
 * Every function returns a new reference, or NULL when out of memory.
 */
#ifndef WARD_JSON_H
#define WARD_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "call.h"
#include "common.h"

WARD_BEGIN_DECL

/**
 * ward_json_text - a JSON string of the @len bytes at @buf, which may hold
 * invalid UTF-8 (a command's output or a file name can): each byte that
 * does not start a valid sequence becomes U+FFFD. @buf NULL is "".
 */
WARD_EXTERN json_t *ward_json_text(const char *buf, size_t len);

/** ward_json_str - ward_json_text of the string @s, or JSON null for NULL. */
WARD_EXTERN json_t *ward_json_str(const char *s);

/**
 * ward_json_strv - a JSON array of the strings of the NULL-terminated @v
 * (each as ward_json_text); @v NULL is [].
 */
WARD_EXTERN json_t *ward_json_strv(char *const *v);

/**
 * ward_json_call_denials - the call's denial report as an array, one
 * object per entry: {path, operation, cause ("mode", "rule" or
 * "protected"), rule (as written, or what is protected; null for the
 * mode), mode, source ("FILE:LINE", "--mode", "session ID", …), how
 * ("exact" or "derived")}.
 */
WARD_EXTERN json_t *ward_json_call_denials(const ward_call *call);

/**
 * ward_json_call_network - the call's network: {mode ("off", "allowlist",
 * "on"), connections: [{host, port, protocol, verdict, bytes_sent,
 * bytes_received, reason}], denied: the markers, one line per refused
 * host, or null}.
 */
WARD_EXTERN json_t *ward_json_call_network(const ward_call *call);

/**
 * ward_json_dump - write @value as json_dump_callback(@value, @cb, @data,
 * JSON_COMPACT | JSON_ENCODE_ANY) would, byte for byte, with each
 * string's unescaped runs handed to @cb in one piece (jansson hands it
 * one code point's worth at a time, and decodes each). Returns 0, or -1
 * when @cb fails or @value is NULL.
 */
WARD_EXTERN int ward_json_dump(const json_t *value, json_dump_callback_t cb,
			       void *data);

/**
 * struct ward_json_bytes - bytes written as a JSON string where the value
 * @at stands in @value (see ward_json_dump_bytes).
 * @at:  a value of the tree, compared by address (an object of its own,
 *       such as a fresh json_object(), not a shared literal)
 * @buf: the bytes, which may hold invalid UTF-8 (NULL is "")
 * @len: their length
 */
struct ward_json_bytes {
	const json_t *at;
	const char *buf;
	size_t len;
};

/**
 * ward_json_dump_bytes - ward_json_dump, but each of the @nbytes values
 * @bytes[i].at in @value is written as the JSON string of @bytes[i]'s
 * bytes, as ward_json_text() would make it (a byte that does not start
 * a valid UTF-8 sequence becomes U+FFFD), without a copy of them: how
 * `ward run --json` writes a megabyte of a command's output.
 */
WARD_EXTERN int ward_json_dump_bytes(const json_t *value,
				     const struct ward_json_bytes *bytes,
				     size_t nbytes, json_dump_callback_t cb,
				     void *data);

/**
 * ward_json_dumps - the text ward_json_dump writes, as a new string the
 * caller frees, or NULL when out of memory.
 */
WARD_EXTERN char *ward_json_dumps(const json_t *value);

WARD_END_DECL

#endif
