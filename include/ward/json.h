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

WARD_END_DECL

#endif
