/*
 * fuzz_jsonrpc — libFuzzer target for the JSON-RPC reader of `ward mcp`
 * (src/mcp/jsonrpc.c): the line splitter, the message parser and the
 * builders, without spawning anything.
 *
 * Input: byte 0 picks the chunk size the splitter is fed in, byte 1 the
 * longest line it accepts (16 to 1039 bytes, so oversized lines are
 * common); the rest is the stream. Checked:
 *   1. the lines (and oversized reports) do not depend on how the stream
 *      is chunked: fed whole and fed in pieces, the events are identical;
 *   2. no line holds a newline or exceeds the bound, and an oversized
 *      report is only made for a line longer than the bound;
 *   3. every parsed line is exactly one kind, consistent with its fields
 *      (a request has a method and a usable id, a response an id and
 *      exactly one of result/error — or, with a null id, an error —
 *      an invalid one a -32700/-32600 code and a message);
 *   4. the answer the server would send (an error for an invalid message,
 *      a result for a request, "Method not found: %.128s" cut where it
 *      may split a character) encodes as ONE line ending in a newline,
 *      parses back, says "jsonrpc":"2.0" and carries the same id.
 *
 * Build: make build/fuzz/fuzz_jsonrpc (`make check` builds it and replays
 * its corpus).
 * Run (new inputs go to the first, scratch directory):
 *   mkdir -p build/fuzz/corpus_jsonrpc
 *   build/fuzz/fuzz_jsonrpc -max_total_time=60 \
 *     -dict=tests/fuzz/corpus/jsonrpc.dict \
 *     build/fuzz/corpus_jsonrpc tests/fuzz/corpus/jsonrpc
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One splitter event: a line, or (data NULL) an oversized report. */
struct event {
	char *data;
	size_t len;
};

struct events {
	struct event *v;
	size_t n, cap;
	size_t max;
};

static void collect(void *ctx, const char *line, size_t len)
{
	struct events *e = ctx;

	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 16;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		if (!e->v)
			abort();
	}
	e->v[e->n].len = len;
	e->v[e->n].data = NULL;
	if (line) {
		/* 2: a line never holds a newline nor exceeds the bound. */
		if (memchr(line, '\n', len) || len > e->max)
			abort();
		e->v[e->n].data = malloc(len + 1);
		if (!e->v[e->n].data)
			abort();
		memcpy(e->v[e->n].data, line, len);
		e->v[e->n].data[len] = '\0';
	} else if (len <= e->max) {
		abort(); /* 2: oversized only when it is */
	}
	e->n++;
}

static void events_free(struct events *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i].data);
	free(e->v);
}

static void split(struct events *e, const char *s, size_t n, size_t chunk,
		  size_t max)
{
	struct ward_jr_lines l;

	memset(e, 0, sizeof(*e));
	e->max = max;
	ward_jr_lines_init(&l, max);
	for (size_t off = 0; off < n; off += chunk) {
		size_t k = n - off < chunk ? n - off : chunk;

		if (ward_jr_lines_feed(&l, s + off, k, collect, e) != 0)
			abort();
	}
	ward_jr_lines_finish(&l, collect, e);
	ward_jr_lines_free(&l);
}

/* 4: @msg encodes as one line that parses back with @id. */
static void check_answer(json_t *msg, json_t *id)
{
	json_error_t jerr;
	size_t len = 0;
	char *line = ward_jr_encode(&len, msg);
	json_t *back, *v;

	if (!line)
		abort();
	if (len == 0 || line[len - 1] != '\n' || strlen(line) != len ||
	    memchr(line, '\n', len - 1))
		abort();
	back = json_loadb(line, len - 1, 0, &jerr);
	if (!back)
		abort();
	v = json_object_get(back, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		abort();
	v = json_object_get(back, "id");
	if (id ? !json_equal(v, id) : !json_is_null(v))
		abort();
	json_decref(back);
	free(line);
	json_decref(msg);
}

/* 3 and 4 for one line. */
static void check_line(const char *s, size_t len)
{
	struct ward_jr_msg m;

	if (ward_jr_parse(&m, s, len) != 0)
		return; /* out of memory */
	switch (m.kind) {
	case WARD_JR_EMPTY:
		if (m.root)
			abort();
		break;
	case WARD_JR_INVALID:
		if ((m.code != WARD_JR_PARSE_ERROR &&
		     m.code != WARD_JR_INVALID_REQUEST) ||
		    !m.message[0])
			abort();
		if (m.id && !ward_jr_id_valid(m.id))
			abort();
		check_answer(ward_jr_error(m.id, m.code, m.message, NULL),
			     m.id);
		break;
	case WARD_JR_REQUEST:
		if (!m.method || !ward_jr_id_valid(m.id))
			abort();
		if (m.params && !json_is_object(m.params) &&
		    !json_is_array(m.params))
			abort();
		check_answer(ward_jr_result(m.id, json_object()), m.id);
		check_answer(ward_jr_error(m.id, WARD_JR_METHOD_NOT_FOUND,
					   m.method, json_string(m.method)),
			     m.id);
		/* As the server words it: a cut that may split a character
		 * must still be answered. */
		{
			char msg[256];

			snprintf(msg, sizeof(msg), "Method not found: %.128s",
				 m.method);
			check_answer(ward_jr_error(m.id,
						   WARD_JR_METHOD_NOT_FOUND,
						   msg, NULL),
				     m.id);
		}
		break;
	case WARD_JR_NOTIFICATION:
		if (!m.method || m.id)
			abort();
		break;
	case WARD_JR_RESPONSE:
		if (m.method || (m.result != NULL) == (m.error != NULL))
			abort();
		/* Without a usable id: only an error response (null id). */
		if (!ward_jr_id_valid(m.id)) {
			if (m.id || !m.error || m.result ||
			    !json_is_null(json_object_get(m.root, "id")))
				abort();
			break;
		}
		/* What the server sends back for its own requests. */
		check_answer(ward_jr_request(m.id, "elicitation/create",
					     json_incref(m.result)),
			     m.id);
		break;
	}
	ward_jr_msg_clear(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct events whole, pieces;
	size_t chunk, max;
	const char *s;

	if (size < 2)
		return 0;
	chunk = (size_t)data[0] % 64 + 1;
	max = 16 + (size_t)data[1] * 4;
	s = (const char *)data + 2;
	size -= 2;

	split(&whole, s, size, size ? size : 1, max);
	split(&pieces, s, size, chunk, max);
	/* 1: chunking changes nothing. */
	if (whole.n != pieces.n)
		abort();
	for (size_t i = 0; i < whole.n; i++) {
		struct event *a = &whole.v[i], *b = &pieces.v[i];

		if ((a->data == NULL) != (b->data == NULL))
			abort();
		if (a->data &&
		    (a->len != b->len || memcmp(a->data, b->data, a->len) != 0))
			abort();
	}
	for (size_t i = 0; i < whole.n; i++)
		if (whole.v[i].data)
			check_line(whole.v[i].data, whole.v[i].len);
	events_free(&whole);
	events_free(&pieces);
	return 0;
}
