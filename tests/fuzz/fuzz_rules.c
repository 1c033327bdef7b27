/*
 * fuzz_rules — libFuzzer target for rules.c (and glob.c beneath it).
 *
 * Input: RULES TEXT '\0' PATHS (one per line). The text is loaded with
 * ward_rules_add_text under a fixed environment (variables with
 * metacharacters, a workspace with a '[' in it). Then:
 *   - a failed load leaves the set empty and says why, naming the entry;
 *   - add_text succeeds exactly when every non-blank line succeeds alone;
 *   - every loaded rule is absolute, its regex compiles;
 *   - for each path (from the input, and derived from each rule) the
 *     indexed ward_rules_match agrees with a brute-force regexec over every
 *     rule, and a non-normal spelling of the path gets the same answer.
 *
 * Build (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=undefined -std=c11 \
 *     -D_GNU_SOURCE -Iinclude -Isrc tests/fuzz/fuzz_rules.c \
 *     src/libward/policy/rules.c src/libward/policy/glob.c \
 *     src/libward/error.c -o build/fuzz/fuzz_rules
 * Run (new inputs go to the first, scratch directory):
 *   mkdir -p build/fuzz/corpus_rules
 *   build/fuzz/fuzz_rules -max_total_time=60 \
 *     -dict=tests/fuzz/corpus/rules.dict \
 *     build/fuzz/corpus_rules tests/fuzz/corpus/rules
 */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/ward.h"

#define MAXTEXT 4096
#define MAXPATH 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *fz_getenv(void *ctx, const char *name)
{
	static const char *const vars[][2] = {
	    {"A", "/va"},	   {"B", "rel/b"},	{"STAR", "/s*[x"},
	    {"EMPTY", ""},	   {"DOTS", "/x/../y"}, {"Q", "/q?"},
	    {"SP", "/with space"},
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (strcmp(vars[i][0], name) == 0)
			return vars[i][1];
	}
	return NULL;
}

static const struct ward_rules_env ENV = {
    .workspace = "/ws[1]",
    .home = "/h",
    .getenv = fz_getenv,
};

static bool is_normal(const char *p)
{
	if (p[0] != '/')
		return false;
	for (size_t i = 0; p[i]; i++) {
		if (p[i] != '/')
			continue;
		if (p[i + 1] == '/' || (p[i + 1] == '\0' && i > 0))
			return false;
		if (p[i + 1] == '.' &&
		    (p[i + 2] == '/' || p[i + 2] == '\0' ||
		     (p[i + 2] == '.' &&
		      (p[i + 3] == '/' || p[i + 3] == '\0'))))
			return false;
	}
	return true;
}

struct brute {
	regex_t *re;
	enum ward_access *acc;
	size_t n;
};

static enum ward_access brute_match(const struct brute *b, const char *p)
{
	enum ward_access best = WARD_ACCESS_DEFAULT;

	for (size_t i = 0; i < b->n; i++) {
		if (b->acc[i] > best && regexec(&b->re[i], p, 0, NULL, 0) == 0)
			best = b->acc[i];
	}
	return best;
}

static void check_path(const ward_rules *r, const struct brute *b,
		       const char *p)
{
	char alt[MAXPATH * 2 + 8];
	enum ward_access got, want;

	if (!is_normal(p) || strlen(p) >= MAXPATH)
		return;
	got = ward_rules_match(r, p);
	want = brute_match(b, p);
	if (got != want) {
		fprintf(stderr, "path \"%s\": index %d, brute force %d\n", p,
			got, want);
		abort();
	}
	/* The same path spelled badly gets the same answer. */
	snprintf(alt, sizeof(alt), "/./x/..%s%s", p, strcmp(p, "/") ? "/" : "");
	if (ward_rules_match(r, alt) != got) {
		fprintf(stderr, "path \"%s\" vs \"%s\"\n", p, alt);
		abort();
	}
}

/* Every non-blank line must load alone exactly when the text loads. */
static bool lines_load(const char *text)
{
	const char *p = text;
	bool ok = true;

	while (ok && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char line[MAXTEXT + 1];
		bool blank = true;
		ward_rules *one;

		memcpy(line, p, n);
		line[n] = '\0';
		for (size_t i = 0; i < n; i++)
			blank &= line[i] == ' ' || line[i] == '\t';
		if (!blank && ward_rules_new(&one) == 0) {
			ok = ward_rules_add(one, line, &ENV, NULL) == 0;
			ward_rules_free(one);
		}
		p = nl ? nl + 1 : p + n;
	}
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[MAXTEXT + 1], paths[MAXTEXT + 1];
	const uint8_t *z = memchr(data, 0, size);
	size_t tl = z ? (size_t)(z - data) : size, pl = 0;
	struct brute b = {0};
	ward_rules *r;
	int err;

	if (tl > MAXTEXT)
		return 0;
	memcpy(text, data, tl);
	text[tl] = '\0';
	if (z) {
		pl = strnlen((const char *)z + 1, size - tl - 1);
		if (pl > MAXTEXT)
			pl = MAXTEXT;
		memcpy(paths, z + 1, pl);
	}
	paths[pl] = '\0';

	if (ward_rules_new(&r) != 0)
		return 0;
	err = ward_rules_add_text(r, text, &ENV, NULL);
	if ((err == 0) != lines_load(text)) {
		fprintf(stderr, "add_text %d disagrees with line by line\n",
			err);
		abort();
	}
	if (err) {
		if (err != WARD_EINVAL && err != -ENOMEM)
			abort();
		if (ward_rules_count(r) != 0 || !*ward_error_last() ||
		    !strstr(ward_error_last(), "entry \""))
			abort();
		goto out_free;
	}

	b.n = ward_rules_count(r);
	b.re = calloc(b.n + 1, sizeof(*b.re));
	b.acc = calloc(b.n + 1, sizeof(*b.acc));
	if (!b.re || !b.acc) {
		b.n = 0;
		goto out_free;
	}
	for (size_t i = 0; i < b.n; i++) {
		struct ward_rule_info in;

		if (ward_rules_get(&in, r, i) != 0 || in.pattern[0] != '/' ||
		    in.literal_prefix[0] != '/' || in.regex[0] != '^' ||
		    strlen(in.pattern) >= PATH_MAX * 3)
			abort();
		if (in.access == WARD_ACCESS_RW && in.is_glob)
			abort();
		if (regcomp(&b.re[i], in.regex, REG_EXTENDED | REG_NOSUB))
			abort();
		b.acc[i] = in.access;
	}
	/* Paths from the input, made absolute. */
	for (char *p = paths, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
		char abs[MAXPATH + 2];

		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		snprintf(abs, sizeof(abs), "%s%s", p[0] == '/' ? "" : "/", p);
		check_path(r, &b, abs);
		if (!nl)
			break;
	}
	/* Paths derived from the rules: the prefix, below it, the pattern. */
	for (size_t i = 0; i < b.n; i++) {
		struct ward_rule_info in;
		char d[MAXPATH + 16];

		ward_rules_get(&in, r, i);
		check_path(r, &b, in.literal_prefix);
		check_path(r, &b, in.pattern);
		snprintf(d, sizeof(d), "%s/x.pem", in.literal_prefix);
		check_path(r, &b, d);
		snprintf(d, sizeof(d), "%s/a/b", in.pattern);
		check_path(r, &b, d);
	}
	check_path(r, &b, "/");
	check_path(r, &b, "/ws[1]/a/b.pem");
out_free:
	for (size_t i = 0; b.re && i < b.n; i++)
		regfree(&b.re[i]);
	free(b.re);
	free(b.acc);
	ward_rules_free(r);
	return 0;
}
