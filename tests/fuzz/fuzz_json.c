/*
 * fuzz_json — libFuzzer target for ward's JSON output (src/libward/json.c):
 * ward_json_text's strings from arbitrary bytes, and the compact writers
 * ward_json_dump / ward_json_dump_bytes / ward_json_dumps, which must
 * write exactly what jansson writes.
 *
 * Input: any bytes (a command's output, a file name). Checked:
 *   1. ward_json_text makes a valid string of them (jansson accepts its
 *      bytes again), where every valid UTF-8 input comes out unchanged;
 *   2. ward_json_dumps of an object holding it is jansson's
 *      json_dumps(JSON_COMPACT), byte for byte, and parses back to the
 *      same string;
 *   3. ward_json_dump_bytes writing the raw bytes in place of a stand-in
 *      value writes the same text as the tree holding ward_json_text's
 *      string.
 *
 * Build: make build/fuzz/fuzz_json (`make check` builds it and replays
 * its corpus).
 * Run (new inputs go to the first, scratch directory):
 *   mkdir -p build/fuzz/corpus_json
 *   build/fuzz/fuzz_json -max_total_time=60 build/fuzz/corpus_json \
 *     tests/fuzz/corpus/json
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ward/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct text {
	char *s;
	size_t len;
};

static int add(const char *chunk, size_t n, void *p)
{
	struct text *t = p;
	char *s = realloc(t->s, t->len + n + 1);

	if (!s)
		abort();
	memcpy(s + t->len, chunk, n);
	t->s = s;
	t->len += n;
	s[t->len] = '\0';
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *raw = (const char *)data;
	json_t *str = ward_json_text(raw, size), *valid, *tree, *at, *back;
	struct ward_json_bytes b;
	struct text t = {NULL, 0};
	char *mine, *theirs;

	if (!str)
		abort();
	/* 1 */
	valid = json_stringn(json_string_value(str), json_string_length(str));
	if (!valid)
		abort();
	json_decref(valid);
	valid = json_stringn(raw, size);
	if (valid && (json_string_length(str) != size ||
		      memcmp(json_string_value(str), raw, size) != 0))
		abort();
	json_decref(valid);
	/* 2 */
	tree = json_pack("{s:[i, o], s:s}", "a\n\"", 1, str, "b", "end");
	mine = ward_json_dumps(tree);
	theirs = json_dumps(tree, JSON_COMPACT);
	if (!mine || !theirs || strcmp(mine, theirs) != 0)
		abort();
	back = json_loads(mine, JSON_ALLOW_NUL, NULL);
	if (!back || !json_equal(back, tree))
		abort();
	json_decref(back);
	/* 3 */
	at = json_object();
	json_decref(tree);
	tree = json_pack("{s:[i, O], s:s}", "a\n\"", 1, at, "b", "end");
	b = (struct ward_json_bytes){at, raw, size};
	if (ward_json_dump_bytes(tree, &b, 1, add, &t) != 0 || !t.s ||
	    strcmp(t.s, theirs) != 0)
		abort();
	free(t.s);
	free(mine);
	free(theirs);
	json_decref(tree);
	json_decref(at);
	return 0;
}
