/*
 * Unit tests for glob.c: glob → POSIX ERE translation (ward_glob_to_regex
 * and the internal ward_glob_translate / prefix / suffix helpers).
 *
 * Every regex produced here is also checked against the subset of ERE that
 * Seatbelt's (regex #"…") shares with regcomp (see seatbelt_safe()).
 */
#include <errno.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "libward/policy/glob.h"
#include "ward/ward.h"

/*
 * Whether @re stays inside the ERE subset both engines accept: escapes only
 * of ^.[$()|*+?{\, no '"', no control bytes, no (? groups, no stacked
 * quantifiers (non-greedy / possessive), no backslash inside brackets, no
 * interval braces.
 */
static bool seatbelt_safe(const char *re, const char **why)
{
	bool in_bracket = false, quant = false;
	size_t first = 0; /* where a ']' is a member, not the end */

	for (size_t i = 0; re[i]; i++) {
		char c = re[i];

		if (c == '"' || (unsigned char)c < 0x20 || c == 0x7f) {
			*why = "quote or control byte";
			return false;
		}
		if (in_bracket) {
			if (c == '\\') {
				*why = "backslash inside a bracket";
				return false;
			}
			if (c == '[' && strchr(":.=", re[i + 1])) {
				*why = "class inside a bracket";
				return false;
			}
			/* ']' closes unless first (after an optional ^). */
			if (c == ']' && i != first)
				in_bracket = false;
			continue;
		}
		if (c == '\\') {
			if (!re[i + 1] || !strchr("^.[$()|*+?{\\", re[i + 1])) {
				*why = "escape of a non-special character";
				return false;
			}
			i++;
			quant = false;
			continue;
		}
		if (c == '{') {
			*why = "interval or unescaped brace";
			return false;
		}
		if (c == '(' && re[i + 1] == '?') {
			*why = "(? group";
			return false;
		}
		if (c == '*' || c == '+' || c == '?') {
			if (quant) {
				*why = "stacked quantifier";
				return false;
			}
			quant = true;
			continue;
		}
		quant = false;
		if (c == '[') {
			in_bracket = true;
			first = i + 1 + (re[i + 1] == '^');
		}
	}
	if (in_bracket) {
		*why = "unterminated bracket";
		return false;
	}
	return true;
}

/* Compile @glob (or fail the test) and report whether @path matches. */
static bool glob_matches(const char *glob, const char *path, unsigned flags)
{
	const char *why = NULL;
	size_t at = 0;
	char *re = NULL;
	regex_t rx;
	int err;
	bool hit;

	if (flags) {
		err = ward_glob_translate(&re, glob, strlen(glob), NULL, flags,
					  &why, &at);
	} else {
		err = ward_glob_to_regex(&re, glob);
		why = ward_error_last();
	}
	if (err)
		fail_msg("glob \"%s\": error %d: %s", glob, err, why);
	if (!seatbelt_safe(re, &why))
		fail_msg("glob \"%s\" -> \"%s\": not Seatbelt-safe: %s", glob,
			 re, why);
	if (regcomp(&rx, re, REG_EXTENDED | REG_NOSUB) != 0)
		fail_msg("glob \"%s\" -> \"%s\": regcomp failed", glob, re);
	hit = regexec(&rx, path, 0, NULL, 0) == 0;
	regfree(&rx);
	free(re);
	return hit;
}

struct match_case {
	const char *glob;
	const char *path;
	bool match;
};

static void run_match_table(const struct match_case *t, size_t n,
			    unsigned flags)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		bool hit = glob_matches(t[i].glob, t[i].path, flags);

		if (hit != t[i].match) {
			print_message("glob \"%s\" path \"%s\": expected %s\n",
				      t[i].glob, t[i].path,
				      t[i].match ? "match" : "no match");
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

#define RUN(t, flags) run_match_table(t, sizeof(t) / sizeof(t[0]), flags)

static void test_star_stays_in_component(void **state)
{
	static const struct match_case t[] = {
	    {"/a/*", "/a/b", true},
	    {"/a/*", "/a/", true},
	    {"/a/*", "/a/b/c", false},
	    {"/a/*", "/a", false},
	    {"/a/*.txt", "/a/x.txt", true},
	    {"/a/*.txt", "/a/.txt", true},
	    {"/a/*.txt", "/a/.hidden.txt", true},
	    {"/a/*.txt", "/a/d/x.txt", false},
	    {"/a/*.txt", "/a/x.txt.bak", false},
	    {"/a/*/c", "/a/b/c", true},
	    {"/a/*/c", "/a/b/x/c", false},
	    {"/a/*/c", "/a//c", true},
	    {"/a/b*d", "/a/bcd", true},
	    {"/a/b*d", "/a/bc/d", false},
	    {"/a/?", "/a/b", true},
	    {"/a/?", "/a/bc", false},
	    {"/a/?", "/a/", false},
	    {"/a?b", "/a/b", false},
	    {"/a/??.c", "/a/xy.c", true},
	    {"/a/??.c", "/a/x.c", false},
	};

	(void)state;
	RUN(t, 0);
}

static void test_doublestar(void **state)
{
	static const struct match_case t[] = {
	    /* ** crosses '/' */
	    {"/a/**", "/a/b", true},
	    {"/a/**", "/a/b/c/d", true},
	    {"/a/**", "/a", false},
	    {"/a/**", "/ab", false},
	    {"/a/x**y", "/a/xy", true},
	    {"/a/x**y", "/a/x/q/y", true},
	    {"/a/x**y", "/a/x/q/z", false},
	    {"/**", "/anything/at/all", true},
	    /* **\/ matches zero or more whole components */
	    {"/a/**/x", "/a/x", true},
	    {"/a/**/x", "/a/b/x", true},
	    {"/a/**/x", "/a/b/c/x", true},
	    {"/a/**/x", "/a/bx", false},
	    {"/a/**/x", "/ax", false},
	    {"/a/**/x", "/a/b/xy", false},
	    {"/a/**/**/x", "/a/x", true},
	    {"/a/**/**/x", "/a/b/c/x", true},
	    {"**/*.pem", "k.pem", true},
	    {"**/*.pem", "d/e/k.pem", true},
	    {"**/*.pem", ".pem", true},
	    {"**/*.pem", "k.pem.bak", false},
	    {"/w/**/.ssh", "/w/.ssh", true},
	    {"/w/**/.ssh", "/w/u/.ssh", true},
	    {"/w/**/.ssh", "/w/u/x.ssh", false},
	    /* *** is ** */
	    {"/a/***/x", "/a/x", true},
	    {"/a/***", "/a/b/c", true},
	};

	(void)state;
	RUN(t, 0);
}

static void test_brackets(void **state)
{
	static const struct match_case t[] = {
	    {"/a/[bc]", "/a/b", true},
	    {"/a/[bc]", "/a/c", true},
	    {"/a/[bc]", "/a/d", false},
	    {"/a/[bc]", "/a/bc", false},
	    {"/a/[!bc]", "/a/d", true},
	    {"/a/[!bc]", "/a/b", false},
	    {"/a/[^bc]", "/a/d", true},
	    {"/a/[^bc]", "/a/c", false},
	    {"/a[!b]c", "/a/c", false}, /* negation never matches '/' */
	    {"/a[!b]c", "/axc", true},
	    {"/a/[a-c]x", "/a/bx", true},
	    {"/a/[a-c]x", "/a/dx", false},
	    {"/a/[a-cx-z]", "/a/y", true},
	    {"/a/[a-cx-z]", "/a/m", false},
	    {"/a/[!a-c]", "/a/m", true},
	    {"/a/[!a-c]", "/a/b", false},
	    {"/a/[]]", "/a/]", true},
	    {"/a/[]]", "/a/x", false},
	    {"/a/[!]]", "/a/x", true},
	    {"/a/[!]]", "/a/]", false},
	    {"/a/[]-]", "/a/-", true},
	    {"/a/[]-]", "/a/]", true},
	    {"/a/[]-]", "/a/^", false},
	    {"/a/[-a]", "/a/-", true},
	    {"/a/[a-]", "/a/-", true},
	    {"/a/[a-]", "/a/b", false},
	    {"/a/[!-]", "/a/-", false},
	    {"/a/[!-]", "/a/x", true},
	    {"/a/[x^]", "/a/^", true},
	    {"/a/[x^]", "/a/y", false},
	    {"/a/[!^]", "/a/^", false},
	    {"/a/[!^]", "/a/y", true},
	    {"/a/[^^]", "/a/^", false},
	    {"/a/[-^]", "/a/^", true},
	    {"/a/[-^]", "/a/-", true},
	    {"/a/[]^-]", "/a/^", true},
	    /* metacharacters made literal by brackets */
	    {"/a/[*]", "/a/*", true},
	    {"/a/[*]", "/a/x", false},
	    {"/a/[?]", "/a/?", true},
	    {"/a/[?]", "/a/x", false},
	    {"/a/[[]x]", "/a/[x]", true},
	    {"/a/[[]xa", "/a/[xa", true},
	    {"/a/[[]xa", "/a/xa", false},
	    {"/a/[.]", "/a/.", true},
	    {"/a/[.]", "/a/x", false},
	    {"/a/[$]", "/a/$", true},
	    {"/a/[(|)]", "/a/|", true},
	    {"/a/[+]", "/a/+", true},
	    {"/a/[{]", "/a/{", true},
	};

	(void)state;
	RUN(t, 0);
}

static void test_escapes(void **state)
{
	static const struct match_case t[] = {
	    {"/a/b+c(1).txt", "/a/b+c(1).txt", true},
	    {"/a/b+c(1).txt", "/a/bbc1.txt", false},
	    {"/a/b+c(1).txt", "/a/b+c(1)xtxt", false},
	    {"/a/x.y", "/a/xzy", false},
	    {"/a/$HOME^{x}|y", "/a/$HOME^{x}|y", true},
	    {"/a/$HOME^{x}|y", "/a/y", false},
	    {"/a/back\\slash", "/a/back\\slash", true},
	    {"/a/back\\slash", "/a/backslash", false},
	    {"/a/x]", "/a/x]", true},
	    {"/a/}{", "/a/}{", true},
	    /* no brace expansion: braces are literal */
	    {"/a/*.{js,ts}", "/a/x.{js,ts}", true},
	    {"/a/*.{js,ts}", "/a/x.js", false},
	    /* bytes are bytes (not UTF-8 characters) */
	    {"/a/\xc3\xa9*", "/a/\xc3\xa9x", true},
	    {"/a/*", "/a/\xff\xfe", true},
	    {"/a/?", "/a/\xc3\xa9", false},
	    {"/a/*", "/a/x\ny", true},
	    {"/a/*", "/a/x\n/y", false},
	};

	(void)state;
	RUN(t, 0);
}

static void test_subtree(void **state)
{
	static const struct match_case t[] = {
	    {"/a/*.pem", "/a/k.pem", true},
	    {"/a/*.pem", "/a/k.pem/inner/x", true},
	    {"/a/*.pem", "/a/k.pemx", false},
	    {"/a/*.pem", "/a/k.pemx/y", false},
	    {"/w/**/.ssh", "/w/u/.ssh/id_rsa", true},
	    {"/w/**/.ssh", "/w/.ssh/id_rsa", true},
	    {"/w/**/.ssh", "/w/.sshx/id_rsa", false},
	    {"/lit", "/lit", true},
	    {"/lit", "/lit/below", true},
	    {"/lit", "/literal", false},
	    {"/", "/", true},
	    {"/", "/x/y", true},
	    {"/a/**", "/a/b/c", true},
	};

	(void)state;
	RUN(t, WARD_GLOB_SUBTREE);
}

static void test_exact_regex(void **state)
{
	static const struct {
		const char *glob;
		const char *re;
	} t[] = {
	    {"/a/*.txt", "^/a/[^/]*\\.txt$"},
	    {"/a/?", "^/a/[^/]$"},
	    {"/a/**/x", "^/a/(.*/)?x$"},
	    {"/a/**/**/x", "^/a/(.*/)?x$"},
	    {"/a/**", "^/a/.*$"},
	    {"/a/[!ab]", "^/a/[^/ab]$"},
	    {"/a/[a-c]", "^/a/[a-c]$"},
	    {"/a/[]-]", "^/a/[]-]$"},
	    {"/a/[x^]", "^/a/[x^]$"},
	    {"/a/[]^]", "^/a/[]^]$"},
	    {"/a/[!]x]", "^/a/[^]/x]$"},
	    {"/a/[-^]", "^/a/[-^]$"},
	    {"/b+c(1).txt", "^/b\\+c\\(1\\)\\.txt$"},
	};
	size_t bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *re = NULL;

		assert_int_equal(ward_glob_to_regex(&re, t[i].glob), 0);
		if (strcmp(re, t[i].re) != 0) {
			print_message("glob \"%s\": got \"%s\", want \"%s\"\n",
				      t[i].glob, re, t[i].re);
			bad++;
		}
		free(re);
	}
	assert_int_equal(bad, 0);
}

static void test_malformed(void **state)
{
	static const struct {
		const char *glob;
		const char *words; /* must appear in the detail */
	} t[] = {
	    {"[", "unbalanced"},
	    {"/a/[x", "unbalanced"},
	    {"/a/[]", "unbalanced"},
	    {"/a/[!]", "unbalanced"},
	    {"/a/[^]", "unbalanced"},
	    {"/a/[a/b]", "'/' inside a bracket"},
	    {"/a/[!/]", "'/' inside a bracket"},
	    {"/a/[z-a]", "reversed range"},
	    {"/a/[+-0]", "cannot include '/'"},
	    {"/a/[Z-a]", "cannot include '\\'"},
	    {"/a/[[:alpha:]]", "character classes"},
	    {"/a/[[.a.]]", "character classes"},
	    {"/a/[\\]", "'\\' inside a bracket"},
	    {"/a/[]-a]", "range endpoint"},
	    {"/a/[a-^]", "range endpoint"},
	    {"/a/x\"y", "Seatbelt"},
	    {"/a/[\"]", "Seatbelt"},
	    {"/a/x\ny", "control character"},
	    {"/a/x\ty", "control character"},
	    {"/a/[x\ny]", "control character"},
	    {"/a/[x-\x7f]", "control character"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *re = (char *)"untouched";
		int err = ward_glob_to_regex(&re, t[i].glob);

		if (err != WARD_EINVAL)
			fail_msg("glob \"%s\": expected WARD_EINVAL, got %d",
				 t[i].glob, err);
		assert_string_equal(re, "untouched");
		if (!strstr(ward_error_last(), t[i].words))
			fail_msg("glob \"%s\": detail \"%s\" lacks \"%s\"",
				 t[i].glob, ward_error_last(), t[i].words);
		/* the detail names the glob (first bytes, at least) */
		assert_non_null(strstr(ward_error_last(), "glob \"/a/") ||
				strstr(ward_error_last(), "glob \"["));
	}
	assert_int_equal(ward_glob_to_regex(NULL, "x"), WARD_EINVAL);
}

/* Literal bytes (from a variable or the workspace) stay literal. */
static void test_literal_mask(void **state)
{
	const char g[] = "/w[1]/*?/x";
	unsigned char lit[sizeof(g) - 1] = {0};
	const char *why;
	size_t at;
	char *re = NULL;

	(void)state;
	memset(lit, 1, 5); /* "/w[1]" came from the workspace */
	assert_int_equal(
	    ward_glob_translate(&re, g, strlen(g), lit, 0, &why, &at), 0);
	assert_string_equal(re, "^/w\\[1]/[^/]*[^/]/x$");
	free(re);
	assert_false(ward_glob_is_magic(g, lit, 2));
	assert_true(ward_glob_is_magic(g, lit, 6));
	assert_int_equal(ward_glob_prefix_len(g, strlen(g), lit), 5);

	/* an unbalanced '[' from the workspace is not a bracket at all */
	{
		const char h[] = "/w[/*";
		unsigned char hl[] = {1, 1, 1, 0, 0};

		assert_int_equal(
		    ward_glob_translate(&re, h, strlen(h), hl, 0, &why, &at),
		    0);
		assert_string_equal(re, "^/w\\[/[^/]*$");
		free(re);
	}
	/* check-only mode builds nothing */
	assert_int_equal(ward_glob_translate(NULL, "/a/*", 4, NULL,
					     WARD_GLOB_CHECK, &why, &at),
			 0);
	assert_int_equal(ward_glob_translate(NULL, "/a/[", 4, NULL,
					     WARD_GLOB_CHECK, &why, &at),
			 WARD_EINVAL);
	assert_int_equal(at, 3);
}

static void test_prefix_suffix(void **state)
{
	static const struct {
		const char *glob;
		const char *prefix;
		const char *suffix;
	} t[] = {
	    {"/ws/**/*.pem", "/ws", ".pem"},
	    {"/**/*.pem", "/", ".pem"},
	    {"/*", "/", ""},
	    {"/a/b/c*", "/a/b", ""},
	    {"/a/b*/c/d", "/a", "c/d"},
	    {"/a/**/.ssh", "/a", ".ssh"},
	    {"/a/[xy]z", "/a", "z"},
	    {"/a/[]]z", "/a", "z"},
	    {"/a/b/lit", "/a/b/lit", "a/b/lit"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *g = t[i].glob;
		size_t len = strlen(g), n;
		size_t p = ward_glob_prefix_len(g, len, NULL);
		size_t s = ward_glob_suffix(g, len, NULL, &n);

		if (p != strlen(t[i].prefix) || strncmp(g, t[i].prefix, p))
			fail_msg("glob \"%s\": prefix \"%.*s\", want \"%s\"", g,
				 (int)p, g, t[i].prefix);
		if (n != strlen(t[i].suffix) || strncmp(g + s, t[i].suffix, n))
			fail_msg("glob \"%s\": suffix \"%.*s\", want \"%s\"", g,
				 (int)n, g + s, t[i].suffix);
	}
}

static void test_longest_run(void **state)
{
	static const struct {
		const char *glob;
		size_t from;
		const char *run;
	} t[] = {
	    {"/ws/**/id_rsa*", 3, "id_rsa"},
	    {"/ws/**/*.pem", 3, ".pem"},
	    {"/a/*/config.d/*", 2, "config.d/"},
	    {"/a/[xy]longer/*b", 2, "longer/"},
	    {"/a/*", 2, ""},
	    {"/a/lit", 0, "a/lit"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *g = t[i].glob;
		size_t n, at = ward_glob_longest_run(g, strlen(g), NULL,
						     t[i].from, &n);

		if (n != strlen(t[i].run) || strncmp(g + at, t[i].run, n))
			fail_msg("glob \"%s\": run \"%.*s\", want \"%s\"", g,
				 (int)n, g + at, t[i].run);
	}
}

/* The Seatbelt-syntax checker itself must be able to fail. */
static void test_checker_rejects(void **state)
{
	static const char *bad[] = {"^\\d$",  "^a*?$",	 "^(?:a)$", "^a\\1$",
				    "^a{2}$", "^[\\w]$", "^\"$"};
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(seatbelt_safe(bad[i], &why));
	assert_true(seatbelt_safe("^/a/[^/]*\\.pem(/.*)?$", &why));
	/* a '[' member does not make the next ']' a member */
	assert_true(seatbelt_safe("^/a/[[]xa$", &why));
	assert_false(seatbelt_safe("^/a/[]$", &why));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_star_stays_in_component),
	    cmocka_unit_test(test_doublestar),
	    cmocka_unit_test(test_brackets),
	    cmocka_unit_test(test_escapes),
	    cmocka_unit_test(test_subtree),
	    cmocka_unit_test(test_exact_regex),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_literal_mask),
	    cmocka_unit_test(test_prefix_suffix),
	    cmocka_unit_test(test_longest_run),
	    cmocka_unit_test(test_checker_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
