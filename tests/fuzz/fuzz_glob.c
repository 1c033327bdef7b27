/*
 * fuzz_glob — libFuzzer target for glob.c.
 *
 * Input: GLOB '\0' PATH (PATH up to the next '\0'). For every glob the
 * translator accepts, the regex must (1) stay in the Seatbelt-safe ERE
 * subset, (2) compile with regcomp, and (3) agree with an independent
 * backtracking glob matcher on PATH — exactly, and with WARD_GLOB_SUBTREE
 * on PATH or any of its ancestors. The prefix, suffix and longest-run
 * pre-filters must hold for every match. A glob the reference tokenizer
 * finds unbalanced must be refused.
 *
 * Build (from the repository root):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=undefined -std=c11 \
 *     -D_GNU_SOURCE -Iinclude -Isrc tests/fuzz/fuzz_glob.c \
 *     src/libward/policy/glob.c src/libward/error.c -o build/fuzz/fuzz_glob
 * Run (new inputs go to the first, scratch directory):
 *   mkdir -p build/fuzz/corpus_glob
 *   build/fuzz/fuzz_glob -max_total_time=60 \
 *     -dict=tests/fuzz/corpus/glob.dict \
 *     build/fuzz/corpus_glob tests/fuzz/corpus/glob
 */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libward/policy/glob.h"
#include "ward/ward.h"

#define MAXLEN 200

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum tok_kind {
	T_LIT,
	T_QMARK,
	T_STAR,
	T_DSTAR,
	T_DSTAR_SLASH,
	T_SET
};

struct tok {
	enum tok_kind kind;
	unsigned char c;
	bool neg;
	unsigned char set[32];
};

/* The reference tokenizer. Returns the count, or -1 for an unbalanced '['. */
static int tokenize(struct tok *t, const char *g, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len;) {
		struct tok *k = &t[n++];

		memset(k, 0, sizeof(*k));
		if (g[i] == '?') {
			k->kind = T_QMARK;
			i++;
		} else if (g[i] == '*') {
			size_t j = i;

			while (j < len && g[j] == '*')
				j++;
			if (j - i == 1) {
				k->kind = T_STAR;
			} else if ((i == 0 || g[i - 1] == '/') && j < len &&
				   g[j] == '/') {
				k->kind = T_DSTAR_SLASH;
				j++;
			} else {
				k->kind = T_DSTAR;
			}
			i = j;
		} else if (g[i] == '[') {
			size_t j = i + 1;
			bool first = true;

			k->kind = T_SET;
			if (j < len && (g[j] == '!' || g[j] == '^')) {
				k->neg = true;
				j++;
			}
			for (;;) {
				unsigned char lo, hi;

				if (j >= len)
					return -1;
				if (g[j] == ']' && !first)
					break;
				first = false;
				lo = hi = (unsigned char)g[j];
				if (j + 2 < len && g[j + 1] == '-' &&
				    g[j + 2] != ']') {
					hi = (unsigned char)g[j + 2];
					j += 2;
				}
				for (unsigned v = lo; v <= hi; v++)
					k->set[v >> 3] |= 1u << (v & 7);
				j++;
			}
			i = j + 1;
		} else {
			k->kind = T_LIT;
			k->c = (unsigned char)g[i++];
		}
	}
	return n;
}

struct ctx {
	const struct tok *t;
	int nt;
	const char *p;
	size_t pl;
	signed char *memo; /* (nt + 1) * (pl + 1): -1 unknown */
};

static bool ref(struct ctx *c, int ti, size_t si)
{
	signed char *m = &c->memo[(size_t)ti * (c->pl + 1) + si];
	const struct tok *k = &c->t[ti];
	bool r = false;

	if (*m >= 0)
		return *m;
	if (ti == c->nt) {
		r = si == c->pl;
	} else {
		unsigned char ch = si < c->pl ? (unsigned char)c->p[si] : 0;

		switch (k->kind) {
		case T_LIT:
			r = si < c->pl && ch == k->c && ref(c, ti + 1, si + 1);
			break;
		case T_QMARK:
			r = si < c->pl && ch != '/' && ref(c, ti + 1, si + 1);
			break;
		case T_SET:
			r = si < c->pl && ch != '/' &&
			    (((k->set[ch >> 3] >> (ch & 7)) & 1) != k->neg) &&
			    ref(c, ti + 1, si + 1);
			break;
		case T_STAR:
			for (size_t e = si; !r && e <= c->pl; e++) {
				r = ref(c, ti + 1, e);
				if (e < c->pl && c->p[e] == '/')
					break;
			}
			break;
		case T_DSTAR:
			for (size_t e = si; !r && e <= c->pl; e++)
				r = ref(c, ti + 1, e);
			break;
		case T_DSTAR_SLASH:
			r = ref(c, ti + 1, si);
			for (size_t e = si; !r && e < c->pl; e++) {
				if (c->p[e] == '/')
					r = ref(c, ti + 1, e + 1);
			}
			break;
		}
	}
	*m = r;
	return r;
}

static bool ref_match(const struct tok *t, int nt, const char *p, size_t pl)
{
	signed char memo[(MAXLEN + 1) * (MAXLEN + 1)];
	struct ctx c = {t, nt, p, pl, memo};

	memset(memo, -1, (size_t)(nt + 1) * (pl + 1));
	return ref(&c, 0, 0);
}

/* The same Seatbelt-safe subset test as tests/unit/test_glob.c. */
static bool seatbelt_safe(const char *re)
{
	bool in_bracket = false, quant = false;
	size_t first = 0; /* where a ']' is a member, not the end */

	for (size_t i = 0; re[i]; i++) {
		char c = re[i];

		if (c == '"' || (unsigned char)c < 0x20 || c == 0x7f)
			return false;
		if (in_bracket) {
			if (c == '\\' ||
			    (c == '[' && re[i + 1] && strchr(":.=", re[i + 1])))
				return false;
			if (c == ']' && i != first)
				in_bracket = false;
			continue;
		}
		if (c == '\\') {
			if (!re[i + 1] || !strchr("^.[$()|*+?{\\", re[i + 1]))
				return false;
			i++;
			quant = false;
			continue;
		}
		if (c == '{' || (c == '(' && re[i + 1] == '?'))
			return false;
		if (c == '*' || c == '+' || c == '?') {
			if (quant)
				return false;
			quant = true;
			continue;
		}
		quant = false;
		if (c == '[') {
			in_bracket = true;
			first = i + 1 + (re[i + 1] == '^');
		}
	}
	return !in_bracket;
}

static void check(const char *g, size_t gl, const char *p, size_t pl)
{
	static struct tok t[MAXLEN];
	const char *why = NULL;
	size_t at = 0, pfx, sfx, sfx_n, run, run_n;
	char *re = NULL, *sub = NULL;
	regex_t rx, rs;
	int nt = tokenize(t, g, gl), err;
	bool exact, want, under;

	err = ward_glob_translate(&re, g, gl, NULL, 0, &why, &at);
	if (err == -ENOMEM)
		return;
	if (err) {
		if (err != WARD_EINVAL || !why || at >= gl)
			abort();
		return;
	}
	if (nt < 0)
		abort(); /* unbalanced, yet accepted */
	if (ward_glob_translate(&sub, g, gl, NULL, WARD_GLOB_SUBTREE, &why,
				&at) != 0)
		abort();
	if (!seatbelt_safe(re) || !seatbelt_safe(sub))
		abort();
	if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
		abort();
	if (regcomp(&rs, sub, REG_EXTENDED | REG_NOSUB) != 0)
		abort();

	exact = regexec(&rx, p, 0, NULL, 0) == 0;
	want = ref_match(t, nt, p, pl);
	if (exact != want) {
		fprintf(stderr,
			"glob \"%.*s\" re \"%s\" path \"%s\": %d vs %d\n",
			(int)gl, g, re, p, exact, want);
		abort();
	}
	/*
	 * SUBTREE: the path itself or an ancestor (cut before a '/'); the
	 * root "/" covers every absolute path.
	 */
	if (gl == 1 && g[0] == '/') {
		want = pl > 0 && p[0] == '/';
	} else {
		want = ref_match(t, nt, p, pl);
		for (size_t k = 0; !want && k < pl; k++) {
			if (p[k] == '/')
				want = ref_match(t, nt, p, k);
		}
	}
	under = regexec(&rs, p, 0, NULL, 0) == 0;
	if (under != want) {
		fprintf(stderr, "subtree glob \"%.*s\" re \"%s\" path \"%s\"\n",
			(int)gl, g, sub, p);
		abort();
	}
	/* The pre-filters are necessary conditions of an exact match. */
	if (exact) {
		pfx = ward_glob_prefix_len(g, gl, NULL);
		sfx = ward_glob_suffix(g, gl, NULL, &sfx_n);
		run = ward_glob_longest_run(g, gl, NULL, g[0] == '/' ? pfx : 0,
					    &run_n);
		if (g[0] == '/' && (pl < pfx || memcmp(p, g, pfx) != 0))
			abort();
		if (sfx_n &&
		    (pl < sfx_n || memcmp(p + pl - sfx_n, g + sfx, sfx_n) != 0))
			abort();
		if (run_n && !memmem(p, pl, g + run, run_n))
			abort();
	}
	/* The exported wrapper agrees with the translator. */
	{
		char *w = NULL;

		if (ward_glob_to_regex(&w, g) == 0) {
			if (strcmp(w, re) != 0)
				abort();
			free(w);
		}
	}
	regfree(&rx);
	regfree(&rs);
	free(re);
	free(sub);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char g[MAXLEN + 1], p[MAXLEN + 1];
	const uint8_t *z = memchr(data, 0, size);
	size_t gl, pl;

	if (!z)
		return 0;
	gl = (size_t)(z - data);
	if (gl > MAXLEN)
		return 0;
	memcpy(g, data, gl);
	g[gl] = '\0';
	pl = strnlen((const char *)z + 1, size - gl - 1);
	if (pl > MAXLEN)
		return 0;
	memcpy(p, z + 1, pl);
	p[pl] = '\0';
	check(g, gl, p, pl);
	return 0;
}
