/*
 * Unit tests for rules.c: parsing, expansion ({{ env.NAME }}, ~/, relative
 * paths), lexical normalisation, precedence, coverage, the match index
 * (checked against a brute-force regexec over every rule) and hostile input.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ward/ward.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- helpers ------------------------------------------------------------ */

/* A fixed environment for {{ env.NAME }}. */
static const char *const test_vars[][2] = {
    {"XDG_CACHE_HOME", "/home/u/.cache"},
    {"XDG_DATA_HOME", "/home/u/.local/share"},
    {"EMPTY", ""},
    {"GLOBBY", "/g[1]*"},
    {"REL", "sub/dir"},
    {"HOME", "/home/fromvar"},
    {"CTRL", "/a\nb"},
    {"SPACEY", "/with space"},
};

static const char *test_getenv(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < N(test_vars); i++) {
		if (strcmp(test_vars[i][0], name) == 0)
			return test_vars[i][1];
	}
	return NULL;
}

static const struct ward_rules_env ENV = {
    .workspace = "/ws",
    .home = "/home/u",
    .getenv = test_getenv,
};

static ward_rules *load(const char *text, const struct ward_rules_env *env)
{
	ward_rules *r = NULL;
	int err;

	assert_int_equal(ward_rules_new(&r), 0);
	err = ward_rules_add_text(r, text, env, NULL);
	if (err)
		fail_msg("loading rules failed: %s", ward_error_last());
	return r;
}

/* Load one entry and return its info (the set is leaked into *keep). */
static struct ward_rule_info one(ward_rules **keep, const char *entry,
				 const struct ward_rules_env *env)
{
	struct ward_rule_info info;
	int err;

	assert_int_equal(ward_rules_new(keep), 0);
	err = ward_rules_add(*keep, entry, env, NULL);
	if (err)
		fail_msg("entry \"%s\": %s", entry, ward_error_last());
	assert_int_equal(ward_rules_count(*keep), 1);
	assert_int_equal(ward_rules_get(&info, *keep, 0), 0);
	return info;
}

/*
 * The reference answer: regexec every rule's own regex, take the strongest
 * access. Slow, obviously right; the index must agree with it.
 */
struct brute {
	regex_t *re;
	enum ward_access *acc;
	size_t n;
};

static void brute_init(struct brute *b, const ward_rules *rules)
{
	b->n = ward_rules_count(rules);
	b->re = calloc(b->n ? b->n : 1, sizeof(*b->re));
	b->acc = calloc(b->n ? b->n : 1, sizeof(*b->acc));
	assert_non_null(b->re);
	assert_non_null(b->acc);
	for (size_t i = 0; i < b->n; i++) {
		struct ward_rule_info info;

		assert_int_equal(ward_rules_get(&info, rules, i), 0);
		assert_int_equal(
		    regcomp(&b->re[i], info.regex, REG_EXTENDED | REG_NOSUB),
		    0);
		b->acc[i] = info.access;
	}
}

static enum ward_access brute_match(const struct brute *b, const char *path)
{
	enum ward_access best = WARD_ACCESS_DEFAULT;

	for (size_t i = 0; i < b->n; i++) {
		if (b->acc[i] > best &&
		    regexec(&b->re[i], path, 0, NULL, 0) == 0)
			best = b->acc[i];
	}
	return best;
}

static void brute_free(struct brute *b)
{
	for (size_t i = 0; i < b->n; i++)
		regfree(&b->re[i]);
	free(b->re);
	free(b->acc);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *acc_name(enum ward_access a)
{
	switch (a) {
	case WARD_ACCESS_DEFAULT:
		return "default";
	case WARD_ACCESS_RW:
		return "rw";
	case WARD_ACCESS_RO:
		return "r-";
	case WARD_ACCESS_NONE:
		return "--";
	}
	return "?";
}

struct path_case {
	const char *path;
	enum ward_access want;
};

static void check_paths(const ward_rules *r, const struct path_case *t,
			size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		enum ward_access got = ward_rules_match(r, t[i].path);

		if (got != t[i].want) {
			print_message("path \"%s\": got %s, want %s\n",
				      t[i].path, acc_name(got),
				      acc_name(t[i].want));
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* --- parser ------------------------------------------------------------- */

static void test_parse_errors(void **state)
{
	char longp[PATH_MAX + 64];
	static const struct {
		const char *entry;
		const char *words;
	} t[] = {
	    {"", "empty entry"},
	    {"   \t ", "empty entry"},
	    {"rw", "prefix \"rw\" without a path"},
	    {"r-   ", "prefix \"r-\" without a path"},
	    {"--", "prefix \"--\" without a path"},
	    {"xx /a", "unknown prefix \"xx\" (expected rw, r- or --)"},
	    {"ro /a", "unknown prefix \"ro\""},
	    {"RW /a", "unknown prefix \"RW\""},
	    {"rw/a", "unknown prefix \"rw/a\""},
	    {"/a/b", "missing prefix"},
	    {"~/x", "missing prefix"},
	    {"rw /a/*", "rw takes a concrete path, not a glob"},
	    {"rw /a/[bc]", "rw takes a concrete path, not a glob"},
	    {"rw /a/b?", "rw takes a concrete path, not a glob"},
	    {"r- /a/[x", "unbalanced '['"},
	    {"-- /a/[x/../y]", "'/' inside a bracket"},
	    {"-- /a/[z-a]", "reversed range"},
	    {"r- /a\nr- /b", "holds a newline"},
	    {"r- /a\rb", "carriage return"},
	    {"r- /a\x01", "control character 0x01"},
	    {"r- /a\x7f", "control character 0x7f"},
	    {"r- /a\tb", "a tab inside the path"},
	    {"r- ~bob/x", "not \"~user\""},
	    {"r- {{ env.NOPE }}", "{{ env.NOPE }}: NOPE is not set"},
	    {"r- {{ env.EMPTY }}/x", "{{ env.EMPTY }}: EMPTY is empty"},
	    {"r- {{ env.CTRL }}", "control character"},
	    {"r- {{ env.HOME", "unterminated \"{{\""},
	    {"r- {{ foo }}", "unsupported template \"{{ foo }}\""},
	    {"r- {{ env.1X }}", "unsupported template"},
	    {"r- {{ env. }}", "unsupported template"},
	    {"r- {{ env.A-B }}", "unsupported template"},
	    {"r- /a/\"q\"", "Seatbelt"},
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		ward_rules *r;
		struct ward_rule_origin o = {"cfg.yml", 7};
		char want[512];
		int err;

		assert_int_equal(ward_rules_new(&r), 0);
		err = ward_rules_add(r, t[i].entry, &ENV, &o);
		if (err != WARD_EINVAL)
			fail_msg("entry \"%s\": expected WARD_EINVAL, got %d",
				 t[i].entry, err);
		if (!strstr(ward_error_last(), t[i].words))
			fail_msg("entry \"%s\": detail \"%s\" lacks \"%s\"",
				 t[i].entry, ward_error_last(), t[i].words);
		/* origin first, then the entry as written (escaped) */
		assert_true(
		    strncmp(ward_error_last(), "cfg.yml:7: entry \"", 18) == 0);
		if (!strchr(t[i].entry, '\n') && !strchr(t[i].entry, '\r') &&
		    !strchr(t[i].entry, '\t') && !strchr(t[i].entry, '"') &&
		    !strchr(t[i].entry, 1) && !strchr(t[i].entry, 0x7f)) {
			size_t n = strlen(t[i].entry);
			const char *e = t[i].entry;

			while (n && e[n - 1] == ' ')
				n--;
			while (n && (*e == ' ' || *e == '\t')) {
				e++;
				n--;
			}
			snprintf(want, sizeof(want), "entry \"%.*s\": ", (int)n,
				 e);
			if (!strstr(ward_error_last(), want))
				fail_msg("entry \"%s\": detail \"%s\" lacks "
					 "\"%s\"",
					 t[i].entry, ward_error_last(), want);
		}
		assert_int_equal(ward_rules_count(r), 0);
		ward_rules_free(r);
	}

	/* A path beyond PATH_MAX is refused, not truncated. */
	{
		ward_rules *r;

		memcpy(longp, "-- /", 4);
		memset(longp + 4, 'a', sizeof(longp) - 5);
		longp[sizeof(longp) - 1] = '\0';
		assert_int_equal(ward_rules_new(&r), 0);
		assert_int_equal(ward_rules_add(r, longp, &ENV, NULL),
				 WARD_EINVAL);
		assert_non_null(strstr(ward_error_last(), "path too long"));
		/* the detail stays bounded and names the entry's start */
		assert_non_null(strstr(ward_error_last(), "entry \"-- /aaa"));
		assert_true(strlen(ward_error_last()) < 1024);
		assert_int_equal(ward_rules_count(r), 0);
		ward_rules_free(r);
	}
	/* Escapes in the detail: a CR shows as \r. */
	{
		ward_rules *r;

		assert_int_equal(ward_rules_new(&r), 0);
		assert_int_equal(ward_rules_add(r, "r- /a\rb", &ENV, NULL),
				 WARD_EINVAL);
		assert_non_null(strstr(ward_error_last(), "\"r- /a\\rb\""));
		ward_rules_free(r);
	}
}

static void test_origin_formats(void **state)
{
	static const struct {
		const char *file;
		unsigned line;
		bool null_origin;
		const char *start;
	} t[] = {
	    {NULL, 0, true, "entry \"zz /a\": "},
	    {NULL, 0, false, "entry \"zz /a\": "},
	    {NULL, 5, false, "line 5: entry \"zz /a\": "},
	    {"f.conf", 0, false, "f.conf: entry \"zz /a\": "},
	    {"f.conf", 9, false, "f.conf:9: entry \"zz /a\": "},
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		struct ward_rule_origin o = {t[i].file, t[i].line};
		ward_rules *r;

		assert_int_equal(ward_rules_new(&r), 0);
		assert_int_equal(ward_rules_add(r, "zz /a", &ENV,
						t[i].null_origin ? NULL : &o),
				 WARD_EINVAL);
		if (strncmp(ward_error_last(), t[i].start,
			    strlen(t[i].start)) != 0)
			fail_msg("got \"%s\", want prefix \"%s\"",
				 ward_error_last(), t[i].start);
		ward_rules_free(r);
	}
}

static void test_parse_ok(void **state)
{
	static const struct {
		const char *entry;
		enum ward_access acc;
		const char *pattern;
		bool glob;
	} t[] = {
	    {"rw /a", WARD_ACCESS_RW, "/a", false},
	    {"r- /a", WARD_ACCESS_RO, "/a", false},
	    {"-- /a", WARD_ACCESS_NONE, "/a", false},
	    {"r-\t/a", WARD_ACCESS_RO, "/a", false},
	    {"  --   /my docs/a b.txt  ", WARD_ACCESS_NONE, "/my docs/a b.txt",
	     false},
	    {"\trw /x\t", WARD_ACCESS_RW, "/x", false},
	    {"-- /a/*.pem", WARD_ACCESS_NONE, "/a/*.pem", true},
	    {"r- /a/[!x]y", WARD_ACCESS_RO, "/a/[!x]y", true},
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		ward_rules *r;
		struct ward_rule_info in = one(&r, t[i].entry, &ENV);

		assert_int_equal(in.access, t[i].acc);
		assert_string_equal(in.pattern, t[i].pattern);
		assert_int_equal(in.is_glob, t[i].glob);
		assert_non_null(in.regex);
		assert_non_null(in.literal_prefix);
		/* the source is the entry, trimmed */
		assert_non_null(strstr(t[i].entry, in.source));
		assert_true(in.source[0] != ' ' && in.source[0] != '\t');
		assert_null(in.origin.file);
		ward_rules_free(r);
	}
}

static void test_info_and_origin(void **state)
{
	struct ward_rule_origin o = {"project/.ward/rules", 3};
	struct ward_rule_info in;
	ward_rules *r;
	char file[64];

	(void)state;
	strcpy(file, "project/.ward/rules");
	o.file = file;
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, "-- **/*.pem", &ENV, &o), 0);
	assert_int_equal(ward_rules_add(r, "r- /a/b", &ENV, NULL), 0);
	/* the set owns its copy of the origin */
	memset(file, 'x', sizeof(file) - 1);
	assert_int_equal(ward_rules_count(r), 2);

	assert_int_equal(ward_rules_get(&in, r, 0), 0);
	assert_int_equal(in.access, WARD_ACCESS_NONE);
	assert_true(in.is_glob);
	/* relative globs resolve against the workspace */
	assert_string_equal(in.pattern, "/ws/**/*.pem");
	assert_string_equal(in.literal_prefix, "/ws");
	assert_string_equal(in.regex, "^/ws/(.*/)?[^/]*\\.pem(/.*)?$");
	assert_string_equal(in.source, "-- **/*.pem");
	assert_string_equal(in.origin.file, "project/.ward/rules");
	assert_int_equal(in.origin.line, 3);

	assert_int_equal(ward_rules_get(&in, r, 1), 0);
	assert_false(in.is_glob);
	assert_string_equal(in.pattern, "/a/b");
	assert_string_equal(in.literal_prefix, "/a/b");
	assert_string_equal(in.regex, "^/a/b(/.*)?$");
	assert_null(in.origin.file);
	assert_int_equal(in.origin.line, 0);

	assert_int_equal(ward_rules_get(&in, r, 2), -ERANGE);
	ward_rules_free(r);
	ward_rules_free(NULL);
	assert_int_equal(ward_rules_count(NULL), 0);
}

/* --- expansion ---------------------------------------------------------- */

static void test_env_expansion(void **state)
{
	static const struct {
		const char *entry;
		const char *pattern;
		bool glob;
	} t[] = {
	    {"rw {{ env.XDG_CACHE_HOME }}", "/home/u/.cache", false},
	    {"rw {{env.XDG_CACHE_HOME}}", "/home/u/.cache", false},
	    {"rw {{   env.XDG_CACHE_HOME\t}}", "/home/u/.cache", false},
	    {"r- {{ env.XDG_DATA_HOME }}/secrets",
	     "/home/u/.local/share/secrets", false},
	    {"r- {{ env.XDG_CACHE_HOME }}{{ env.REL }}",
	     "/home/u/.cachesub/dir", false},
	    {"r- {{ env.REL }}", "/ws/sub/dir", false},
	    {"r- {{ env.SPACEY }}/x", "/with space/x", false},
	    /* a value's metacharacters are literal */
	    {"r- {{ env.GLOBBY }}", "/g[1]*", false},
	    {"-- {{ env.GLOBBY }}/*.key", "/g[[]1][*]/*.key", true},
	    /* a lone "}}" or "{" is just text */
	    {"r- /a}}/{b", "/a}}/{b", false},
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		ward_rules *r;
		struct ward_rule_info in = one(&r, t[i].entry, &ENV);

		if (strcmp(in.pattern, t[i].pattern) != 0)
			fail_msg("entry \"%s\": pattern \"%s\", want \"%s\"",
				 t[i].entry, in.pattern, t[i].pattern);
		assert_int_equal(in.is_glob, t[i].glob);
		ward_rules_free(r);
	}

	/* literal metacharacters from a variable match only themselves */
	{
		ward_rules *r = load("-- {{ env.GLOBBY }}\n"
				     "r- {{ env.GLOBBY }}/*.key\n",
				     &ENV);
		static const struct path_case p[] = {
		    {"/g[1]*", WARD_ACCESS_NONE},
		    {"/g[1]*/x", WARD_ACCESS_NONE},
		    {"/g1x", WARD_ACCESS_DEFAULT},
		    {"/g[1]", WARD_ACCESS_DEFAULT},
		};

		check_paths(r, p, N(p));
		ward_rules_free(r);
	}

	/* without a lookup function the process environment is used */
	{
		struct ward_rules_env env = {.workspace = "/ws"};
		ward_rules *r;

		assert_int_equal(setenv("WARD_TEST_RULES_X", "/px", 1), 0);
		assert_int_equal(unsetenv("WARD_TEST_RULES_UNSET"), 0);
		{
			struct ward_rule_info in =
			    one(&r, "r- {{ env.WARD_TEST_RULES_X }}/y", &env);

			assert_string_equal(in.pattern, "/px/y");
			ward_rules_free(r);
		}
		assert_int_equal(ward_rules_new(&r), 0);
		assert_int_equal(
		    ward_rules_add(r, "r- {{ env.WARD_TEST_RULES_UNSET }}",
				   &env, NULL),
		    WARD_EINVAL);
		assert_non_null(strstr(ward_error_last(),
				       "WARD_TEST_RULES_UNSET is not set"));
		assert_int_equal(setenv("WARD_TEST_RULES_X", "", 1), 0);
		assert_int_equal(
		    ward_rules_add(r, "r- {{ env.WARD_TEST_RULES_X }}", &env,
				   NULL),
		    WARD_EINVAL);
		assert_non_null(
		    strstr(ward_error_last(), "WARD_TEST_RULES_X is empty"));
		unsetenv("WARD_TEST_RULES_X");
		ward_rules_free(r);
	}
}

/*
 * $NAME and ${NAME} expand like {{ env.NAME }}; "$$" is a literal '$';
 * anything else after a '$' is an error naming the entry, never a literal
 * path ("-- $HOME/.ssh" taken literally protected nothing).
 */
static void test_dollar_expansion(void **state)
{
	static const struct {
		const char *entry, *pattern;
	} ok[] = {
	    {"-- $HOME/.ssh", "/home/fromvar/.ssh"},
	    {"-- ${HOME}/.ssh", "/home/fromvar/.ssh"},
	    {"-- ${HOME}", "/home/fromvar"},
	    {"rw $XDG_CACHE_HOME", "/home/u/.cache"},
	    {"r- $REL/x", "/ws/sub/dir/x"},
	    {"r- /a/$${HOME}", "/a/${HOME}"},
	    {"r- /a/b$$", "/a/b$"},
	    {"-- ${GLOBBY}", "/g[1]*"},
	};
	static const struct {
		const char *entry, *why;
	} bad[] = {
	    {"-- $UNSET_WARD_VAR/x",
	     "$UNSET_WARD_VAR: UNSET_WARD_VAR is not set"},
	    {"-- ${UNSET_WARD_VAR}",
	     "${UNSET_WARD_VAR}: UNSET_WARD_VAR is not set"},
	    {"-- $EMPTY/x", "$EMPTY: EMPTY is empty"},
	    {"-- ${HOME", "must start a variable"},
	    {"-- /a/$", "must start a variable"},
	    {"-- /a/$/b", "must start a variable"},
	    {"-- ${}", "must start a variable"},
	    {"-- $1", "must start a variable"},
	    {"-- $CTRL", "control character"},
	};
	struct ward_rule_origin origin = {"/etc/ward.yml", 7};
	struct ward_rule_info in;
	ward_rules *r;

	(void)state;
	for (size_t i = 0; i < N(ok); i++) {
		in = one(&r, ok[i].entry, &ENV);
		if (strcmp(in.pattern, ok[i].pattern) != 0)
			fail_msg("%s: got %s, want %s", ok[i].entry, in.pattern,
				 ok[i].pattern);
		ward_rules_free(r);
	}
	for (size_t i = 0; i < N(bad); i++) {
		assert_int_equal(ward_rules_new(&r), 0);
		assert_int_equal(ward_rules_add(r, bad[i].entry, &ENV, &origin),
				 WARD_EINVAL);
		if (!strstr(ward_error_last(), bad[i].why) ||
		    !strstr(ward_error_last(), "/etc/ward.yml:7"))
			fail_msg("%s: %s", bad[i].entry, ward_error_last());
		assert_int_equal(ward_rules_count(r), 0);
		ward_rules_free(r);
	}
	/* A $ starting an entry is a missing prefix, like a path. */
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, "$HOME/.ssh", &ENV, NULL),
			 WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "missing prefix"));
	ward_rules_free(r);
}

/* Lookup for XDG defaults: only HOME is set (stock Debian). */
static const char *home_only_getenv(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "HOME") == 0)
		return "/home/deb";
	if (strcmp(name, "XDG_DATA_HOME") == 0)
		return "relative/ignored"; /* the spec: relative is invalid */
	if (strcmp(name, "XDG_STATE_HOME") == 0)
		return "";
	return NULL;
}

/* XDG base directories get the spec's defaults under the home directory. */
static void test_xdg_defaults(void **state)
{
	static const struct {
		const char *entry, *pattern;
	} t[] = {
	    {"rw {{ env.XDG_CACHE_HOME }}", "/home/deb/.cache"},
	    {"r- {{ env.XDG_CONFIG_HOME }}/x", "/home/deb/.config/x"},
	    {"r- $XDG_DATA_HOME", "/home/deb/.local/share"},
	    {"r- ${XDG_STATE_HOME}/ward", "/home/deb/.local/state/ward"},
	};
	struct ward_rules_env env = {.workspace = "/ws",
				     .getenv = home_only_getenv};
	struct ward_rule_info in;
	ward_rules *r;

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		in = one(&r, t[i].entry, &env);
		if (strcmp(in.pattern, t[i].pattern) != 0)
			fail_msg("%s: got %s, want %s", t[i].entry, in.pattern,
				 t[i].pattern);
		ward_rules_free(r);
	}
	/* The rules' own home decides the default when given. */
	env.home = "/h2";
	in = one(&r, "rw {{ env.XDG_CACHE_HOME }}", &env);
	assert_string_equal(in.pattern, "/h2/.cache");
	ward_rules_free(r);
	/* A variable without a default is still an error. */
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(
	    ward_rules_add(r, "rw {{ env.XDG_RUNTIME_DIR }}", &env, NULL),
	    WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "is not set"));
	ward_rules_free(r);
}

static void test_home(void **state)
{
	struct ward_rules_env env = ENV;
	struct ward_rule_info in;
	ward_rules *r;

	(void)state;
	in = one(&r, "-- ~/.ssh", &env);
	assert_string_equal(in.pattern, "/home/u/.ssh");
	ward_rules_free(r);
	in = one(&r, "r- ~", &env);
	assert_string_equal(in.pattern, "/home/u");
	ward_rules_free(r);
	in = one(&r, "-- ~/**/*.pem", &env);
	assert_string_equal(in.pattern, "/home/u/**/*.pem");
	assert_string_equal(in.literal_prefix, "/home/u");
	ward_rules_free(r);
	/* a home with metacharacters stays literal */
	env.home = "/home/a*b";
	in = one(&r, "-- ~/*.key", &env);
	assert_string_equal(in.pattern, "/home/a[*]b/*.key");
	assert_string_equal(in.literal_prefix, "/home/a*b");
	ward_rules_free(r);

	/* no env->home: $HOME via the lookup */
	env.home = NULL;
	in = one(&r, "-- ~/.aws", &env);
	assert_string_equal(in.pattern, "/home/fromvar/.aws");
	ward_rules_free(r);

	/* neither: an error naming the entry */
	env.getenv = NULL;
	{
		char *saved = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

		unsetenv("HOME");
		assert_int_equal(ward_rules_new(&r), 0);
		assert_int_equal(ward_rules_add(r, "-- ~/.ssh", &env, NULL),
				 WARD_EINVAL);
		assert_non_null(strstr(ward_error_last(), "home directory"));
		assert_non_null(strstr(ward_error_last(), "\"-- ~/.ssh\""));
		if (saved)
			setenv("HOME", saved, 1);
		free(saved);
		ward_rules_free(r);
	}
	/* a relative home is refused */
	env.home = "rel/home";
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, "-- ~/.ssh", &env, NULL),
			 WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "not an absolute path"));
	ward_rules_free(r);
}

static void test_relative(void **state)
{
	static const struct {
		const char *entry;
		const char *pattern;
	} t[] = {
	    {"r- a/b", "/ws/a/b"},
	    {"r- ./a", "/ws/a"},
	    {"r- .", "/ws"},
	    {"r- ../x", "/x"},
	    {"r- ../../../x", "/x"},
	    {"-- mise.*.toml", "/ws/mise.*.toml"},
	    {"-- .git/hooks", "/ws/.git/hooks"},
	};
	struct ward_rules_env env = ENV;
	ward_rules *r;

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		struct ward_rule_info in = one(&r, t[i].entry, &ENV);

		assert_string_equal(in.pattern, t[i].pattern);
		ward_rules_free(r);
	}

	/* the workspace, not the process cwd */
	env.workspace = "/elsewhere/proj";
	{
		struct ward_rule_info in = one(&r, "r- src", &env);

		assert_string_equal(in.pattern, "/elsewhere/proj/src");
		ward_rules_free(r);
	}

	env.workspace = NULL;
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, "r- a/b", &env, NULL), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "needs a workspace"));
	assert_int_equal(ward_rules_add(r, "r- a/b", NULL, NULL), WARD_EINVAL);
	/* absolute entries need no workspace */
	assert_int_equal(ward_rules_add(r, "r- /abs", &env, NULL), 0);
	env.workspace = "relative/ws";
	assert_int_equal(ward_rules_add(r, "r- a/b", &env, NULL), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "not an absolute path"));
	ward_rules_free(r);

	/* a workspace with metacharacters stays literal */
	env.workspace = "/w[1]";
	r = load("-- **/*.pem\n", &env);
	{
		static const struct path_case p[] = {
		    {"/w[1]/a.pem", WARD_ACCESS_NONE},
		    {"/w[1]/d/a.pem", WARD_ACCESS_NONE},
		    {"/w1/a.pem", WARD_ACCESS_DEFAULT},
		    {"/w[1]/a.txt", WARD_ACCESS_DEFAULT},
		};

		check_paths(r, p, N(p));
	}
	ward_rules_free(r);
}

static void test_normalisation(void **state)
{
	static const struct {
		const char *entry;
		const char *pattern;
		bool glob;
	} t[] = {
	    {"r- //a///b/", "/a/b", false},
	    {"r- /a/./b", "/a/b", false},
	    {"r- /a/b/../c", "/a/c", false},
	    {"r- /../../x", "/x", false},
	    {"r- /a/..", "/", false},
	    {"r- /a/b/.", "/a/b", false},
	    {"r- /a/.../b", "/a/.../b", false},
	    {"r- /a/..b/.c", "/a/..b/.c", false},
	    {"r- /", "/", false},
	    {"r- ///", "/", false},
	    {"-- /a/*/../b", "/a/b", false},
	    {"-- /a//**/./*.pem", "/a/**/*.pem", true},
	    {"r- ~/../x", "/home/x", false},
	    {"r- {{ env.XDG_CACHE_HOME }}/../y", "/home/u/y", false},
	};

	(void)state;
	for (size_t i = 0; i < N(t); i++) {
		ward_rules *r;
		struct ward_rule_info in = one(&r, t[i].entry, &ENV);

		if (strcmp(in.pattern, t[i].pattern) != 0)
			fail_msg("entry \"%s\": pattern \"%s\", want \"%s\"",
				 t[i].entry, in.pattern, t[i].pattern);
		assert_int_equal(in.is_glob, t[i].glob);
		ward_rules_free(r);
	}
}

/* --- matching ----------------------------------------------------------- */

static void test_precedence(void **state)
{
	static const char *const lines[] = {
	    "rw /d",	    "r- /d/secrets", "-- /d/secrets/key",
	    "-- /**/*.pem", "r- /d/ro*",     "rw /d/ro1/w",
	    "rw /x",	    "r- /x",	     "r- /y",
	    "-- /y",	    "rw /z/deep/er", "-- /z",
	};
	static const struct path_case p[] = {
	    {"/d", WARD_ACCESS_RW},
	    {"/d/x", WARD_ACCESS_RW},
	    {"/d/secrets", WARD_ACCESS_RO},
	    {"/d/secrets/a", WARD_ACCESS_RO},
	    {"/d/secrets/key", WARD_ACCESS_NONE},
	    {"/d/secrets/key/x", WARD_ACCESS_NONE},
	    {"/d/secrets/keys", WARD_ACCESS_RO},
	    {"/d/a.pem", WARD_ACCESS_NONE},
	    {"/d/sub/a.pem", WARD_ACCESS_NONE},
	    {"/elsewhere/a.pem", WARD_ACCESS_NONE},
	    {"/d/ro1", WARD_ACCESS_RO},
	    {"/d/ro1/w/f", WARD_ACCESS_RO},
	    {"/d/rx", WARD_ACCESS_RW},
	    {"/x", WARD_ACCESS_RO},
	    {"/x/y", WARD_ACCESS_RO},
	    {"/y/z", WARD_ACCESS_NONE},
	    {"/z/deep/er/f", WARD_ACCESS_NONE},
	    {"/e", WARD_ACCESS_DEFAULT},
	    {"/", WARD_ACCESS_DEFAULT},
	    {"/dx", WARD_ACCESS_DEFAULT},
	    {"/d.pem.bak", WARD_ACCESS_DEFAULT},
	};
	char fwd[1024] = "", rev[1024] = "";
	ward_rules *r;

	(void)state;
	for (size_t i = 0; i < N(lines); i++) {
		strcat(fwd, lines[i]);
		strcat(fwd, "\n");
		strcat(rev, lines[N(lines) - 1 - i]);
		strcat(rev, "\n");
	}
	/* load order does not matter */
	r = load(fwd, &ENV);
	check_paths(r, p, N(p));
	ward_rules_free(r);
	r = load(rev, &ENV);
	check_paths(r, p, N(p));
	ward_rules_free(r);
}

static void test_literal_covers_below(void **state)
{
	static const struct path_case p[] = {
	    {"/a/b", WARD_ACCESS_RO},	    {"/a/b/c", WARD_ACCESS_RO},
	    {"/a/b/c/d/e", WARD_ACCESS_RO}, {"/a/bc", WARD_ACCESS_DEFAULT},
	    {"/a", WARD_ACCESS_DEFAULT},    {"/a/b.txt", WARD_ACCESS_DEFAULT},
	    {"/w/p", WARD_ACCESS_RW},	    {"/w/p/q", WARD_ACCESS_RW},
	};
	ward_rules *r = load("r- /a/b\nrw /w/p\n", &ENV);

	(void)state;
	check_paths(r, p, N(p));
	ward_rules_free(r);

	/* the root covers everything */
	r = load("-- /\n", &ENV);
	assert_int_equal(ward_rules_match(r, "/"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/any/thing"), WARD_ACCESS_NONE);
	ward_rules_free(r);
}

static void test_glob_covers_below(void **state)
{
	static const struct path_case p[] = {
	    {"/w/.ssh", WARD_ACCESS_NONE},
	    {"/w/.ssh/id_rsa", WARD_ACCESS_NONE},
	    {"/w/u/.ssh/config", WARD_ACCESS_NONE},
	    {"/w/.sshx", WARD_ACCESS_DEFAULT},
	    {"/w/x.ssh/id", WARD_ACCESS_DEFAULT},
	    {"/w/mise.dev.toml", WARD_ACCESS_RO},
	    {"/w/mise.toml", WARD_ACCESS_DEFAULT},
	    {"/w/sub/mise.dev.toml", WARD_ACCESS_DEFAULT},
	    {"/w/k.pem", WARD_ACCESS_NONE},
	    {"/w/k.pem/inside", WARD_ACCESS_NONE},
	    {"/w/k.pemx", WARD_ACCESS_DEFAULT},
	    {"/w/a/b/c/.env", WARD_ACCESS_RO},
	    {"/w/.env", WARD_ACCESS_RO},
	    {"/w/.envrc", WARD_ACCESS_DEFAULT},
	};
	struct ward_rules_env env = ENV;
	ward_rules *r;

	(void)state;
	env.workspace = "/w";
	r = load("-- **/.ssh\nr- mise.*.toml\n-- **/*.pem\nr- **/.env\n", &env);
	check_paths(r, p, N(p));
	ward_rules_free(r);
}

static void test_regex_metachar_paths(void **state)
{
	static const struct path_case p[] = {
	    {"/a/b+c(1).txt", WARD_ACCESS_NONE},
	    {"/a/b+c(1).txt/x", WARD_ACCESS_NONE},
	    {"/a/bbc1.txt", WARD_ACCESS_DEFAULT},
	    {"/a/b+c(1)xtxt", WARD_ACCESS_DEFAULT},
	    {"/x/a.b", WARD_ACCESS_RO},
	    {"/x/aXb", WARD_ACCESS_DEFAULT},
	    {"/p/$^{}|\\", WARD_ACCESS_RO},
	    {"/p/x", WARD_ACCESS_DEFAULT},
	    {"/m/(x)+/k.y", WARD_ACCESS_NONE},
	    {"/m/xx/k.y", WARD_ACCESS_DEFAULT},
	    {"/m/(x)+/k.yy", WARD_ACCESS_DEFAULT},
	    {"/q/a]b", WARD_ACCESS_RO},
	};
	ward_rules *r = load("-- /a/b+c(1).txt\n"
			     "r- /x/a.b\n"
			     "r- /p/$$^{}|\\\n"
			     "-- /m/(x)+/*.y\n"
			     "r- /q/a]b\n",
			     &ENV);

	(void)state;
	check_paths(r, p, N(p));
	ward_rules_free(r);
}

static void test_match_input(void **state)
{
	ward_rules *r = load("-- /secret\nrw /d\n", &ENV);
	ward_rules *empty;
	char *longp;
	size_t n = 3 * PATH_MAX;

	(void)state;
	/* fail closed on a caller bug */
	assert_int_equal(ward_rules_match(r, "secret"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, ""), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, NULL), WARD_ACCESS_NONE);
	/* a non-normal path is normalised first */
	assert_int_equal(ward_rules_match(r, "/d/../secret"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "//secret"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/secret/"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/./secret/./x"),
			 WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/secret/.."),
			 WARD_ACCESS_DEFAULT);
	assert_int_equal(ward_rules_match(r, "/d/x/.."), WARD_ACCESS_RW);
	assert_int_equal(ward_rules_match(NULL, "/secret"),
			 WARD_ACCESS_DEFAULT);
	assert_int_equal(ward_rules_new(&empty), 0);
	assert_int_equal(ward_rules_match(empty, "/secret"),
			 WARD_ACCESS_DEFAULT);
	ward_rules_free(empty);

	/* very long paths: normal ones still match, others fail closed */
	longp = malloc(n + 1);
	assert_non_null(longp);
	memcpy(longp, "/secret/", 8);
	for (size_t i = 8; i < n; i++)
		longp[i] = (i % 16 == 15) ? '/' : 'x';
	longp[n] = '\0';
	longp[n - 1] = 'x';
	assert_int_equal(ward_rules_match(r, longp), WARD_ACCESS_NONE);
	memcpy(longp, "/d/xxxx", 7);
	assert_int_equal(ward_rules_match(r, longp), WARD_ACCESS_RW);
	memcpy(longp, "/e/xxxx", 7);
	assert_int_equal(ward_rules_match(r, longp), WARD_ACCESS_DEFAULT);
	longp[20] = '/';
	longp[21] = '/';
	assert_int_equal(ward_rules_match(r, longp), WARD_ACCESS_NONE);
	free(longp);
	ward_rules_free(r);
}

/* --- add_text and atomicity ---------------------------------------------- */

static void test_add_text(void **state)
{
	struct ward_rule_origin o = {"access.txt", 10};
	struct ward_rule_info in;
	ward_rules *r;

	(void)state;
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add_text(r,
					     "\n"
					     "  rw {{ env.XDG_CACHE_HOME }}\n"
					     "\t\n"
					     "r- {{ env.XDG_DATA_HOME }}\n"
					     "-- mise.*.toml\n"
					     "-- **/*.pem",
					     &ENV, &o),
			 0);
	assert_int_equal(ward_rules_count(r), 4);
	assert_int_equal(ward_rules_get(&in, r, 0), 0);
	assert_int_equal(in.origin.line, 11);
	assert_string_equal(in.origin.file, "access.txt");
	assert_string_equal(in.source, "rw {{ env.XDG_CACHE_HOME }}");
	assert_int_equal(ward_rules_get(&in, r, 3), 0);
	assert_int_equal(in.origin.line, 15);

	/* all or nothing: a bad line 3 leaves the set as it was */
	o.line = 1;
	assert_int_equal(
	    ward_rules_add_text(r, "r- /new1\nr- /new2\nzz /x\n", &ENV, &o),
	    WARD_EINVAL);
	assert_string_equal(ward_error_last(),
			    "access.txt:3: entry \"zz /x\": unknown prefix "
			    "\"zz\" (expected rw, r- or --)");
	assert_int_equal(ward_rules_count(r), 4);
	assert_int_equal(ward_rules_match(r, "/new1"), WARD_ACCESS_DEFAULT);

	/* CRLF is refused clearly */
	assert_int_equal(
	    ward_rules_add_text(r, "r- /a\r\nr- /b\r\n", &ENV, NULL),
	    WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "line 1: "));
	assert_non_null(strstr(ward_error_last(), "carriage return"));
	assert_int_equal(ward_rules_count(r), 4);

	/* blank text adds nothing and succeeds */
	assert_int_equal(ward_rules_add_text(r, "", &ENV, NULL), 0);
	assert_int_equal(ward_rules_add_text(r, "\n \n\t\n", &ENV, NULL), 0);
	assert_int_equal(ward_rules_count(r), 4);
	ward_rules_free(r);
}

static void test_add_failure_leaves_set(void **state)
{
	static const char *const bad[] = {"rw /a/*", "r- /a/[", "zz /q",
					  "r- {{ env.NOPE }}"};
	ward_rules *r = load("-- /ws/**/*.key\nr- /d\n", &ENV);

	(void)state;
	for (size_t i = 0; i < N(bad); i++) {
		assert_int_equal(ward_rules_add(r, bad[i], &ENV, NULL),
				 WARD_EINVAL);
		assert_int_equal(ward_rules_count(r), 2);
	}
	assert_int_equal(ward_rules_match(r, "/ws/a/b.key"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/d/x"), WARD_ACCESS_RO);
	assert_int_equal(ward_rules_match(r, "/a/x"), WARD_ACCESS_DEFAULT);
	ward_rules_free(r);
}

/* --- scale, differential, hostile ----------------------------------------- */

static void test_10000_rules(void **state)
{
	const size_t nrules = 10000;
	size_t cap = nrules * 64, len = 0, bad = 0;
	char *text = malloc(cap);
	struct brute b;
	ward_rules *r;
	double t0, t1;

	(void)state;
	assert_non_null(text);
	for (size_t i = 0; i < nrules; i++) {
		size_t d = i % 500;

		if (i % 2 == 0)
			len += (size_t)snprintf(text + len, cap - len,
						"%s /big/d%zu/f%zu\n",
						i % 4 ? "r-" : "--", d, i);
		else if (i % 97 == 1)
			len += (size_t)snprintf(text + len, cap - len,
						"-- /big/**/*.s%zu\n", i);
		else
			len += (size_t)snprintf(text + len, cap - len,
						"%s /big/d%zu/*.g%zu\n",
						i % 3 ? "r-" : "--", d, i);
	}
	assert_int_equal(ward_rules_new(&r), 0);
	t0 = now_s();
	assert_int_equal(ward_rules_add_text(r, text, &ENV, NULL), 0);
	t1 = now_s();
	/* Said, not asserted: a loaded machine is slow, not wrong (quadratic
	 * behaviour is bench/bench_plan.c's to catch). */
	print_message("loaded %zu rules in %.3f s\n", nrules, t1 - t0);
	assert_int_equal(ward_rules_count(r), nrules);

	brute_init(&b, r);
	srand(42);
	for (size_t k = 0; k < 50; k++) {
		char path[256];
		size_t d = (size_t)rand() % 520, i = (size_t)rand() % nrules;

		switch (k % 5) {
		case 0:
			snprintf(path, sizeof(path), "/big/d%zu/f%zu", d, i);
			break;
		case 1:
			snprintf(path, sizeof(path), "/big/d%zu/x.g%zu", d, i);
			break;
		case 2:
			snprintf(path, sizeof(path), "/big/d%zu/f%zu/in", d, i);
			break;
		case 3:
			snprintf(path, sizeof(path), "/big/q/r/k.s%zu", i);
			break;
		default:
			snprintf(path, sizeof(path), "/big/d%zu/x.g%zu/z/y", d,
				 i);
			break;
		}
		if (ward_rules_match(r, path) != brute_match(&b, path)) {
			print_message("path %s: index %s, brute force %s\n",
				      path, acc_name(ward_rules_match(r, path)),
				      acc_name(brute_match(&b, path)));
			bad++;
		}
	}
	/* spot checks with known answers */
	assert_int_equal(ward_rules_match(r, "/big/d0/f0"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/big/d2/f2/x"), WARD_ACCESS_RO);
	assert_int_equal(ward_rules_match(r, "/big/d3/a.g3"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/big/d5/a.g5"), WARD_ACCESS_RO);
	assert_int_equal(ward_rules_match(r, "/big/x/y/k.s1"),
			 WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/big/d5/a.g6"),
			 WARD_ACCESS_DEFAULT);
	assert_int_equal(ward_rules_match(r, "/other"), WARD_ACCESS_DEFAULT);
	brute_free(&b);
	assert_int_equal(bad, 0);
	ward_rules_free(r);
	free(text);
}

/* Random small rule sets over a tiny alphabet: the index vs brute force. */
static void test_random_vs_bruteforce(void **state)
{
	static const char *const comps[] = {"a",     "b",    "ab",    ".x",
					    "c.pem", "*",    "?",     "**",
					    "[ab]",  "[!a]", "*.pem", "a*"};
	static const char *const pcomps[] = {"a",  "b",	    "ab", ".x", "c.pem",
					     "bb", "x.pem", "aa", "q"};
	static const char *const pre[] = {"rw", "r-", "--"};
	size_t bad = 0, checked = 0;

	(void)state;
	srand(7);
	for (int round = 0; round < 60; round++) {
		char text[4096];
		size_t len = 0;
		ward_rules *r;
		struct brute b;
		int nr = 1 + rand() % 20;

		for (int i = 0; i < nr; i++) {
			int depth = 1 + rand() % 4;
			int acc = rand() % 3;
			bool glob = false;
			char path[256] = "";

			for (int k = 0; k < depth; k++) {
				const char *c;

				/* rw takes literal components only */
				do {
					c = comps[rand() % N(comps)];
				} while (acc == 0 && strpbrk(c, "*?["));
				glob |= strpbrk(c, "*?[") != NULL;
				strcat(path, "/");
				strcat(path, c);
			}
			(void)glob;
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"%s %s\n", pre[acc], path);
		}
		r = load(text, &ENV);
		brute_init(&b, r);
		for (int k = 0; k < 80; k++) {
			char path[256] = "";
			int depth = 1 + rand() % 6;

			for (int j = 0; j < depth; j++) {
				strcat(path, "/");
				strcat(path, pcomps[rand() % N(pcomps)]);
			}
			checked++;
			if (ward_rules_match(r, path) !=
			    brute_match(&b, path)) {
				print_message(
				    "rules:\n%spath %s: index %s, "
				    "brute force %s\n",
				    text, path,
				    acc_name(ward_rules_match(r, path)),
				    acc_name(brute_match(&b, path)));
				bad++;
			}
		}
		brute_free(&b);
		ward_rules_free(r);
	}
	print_message("%zu paths checked against brute force\n", checked);
	assert_int_equal(bad, 0);
}

/* A caller's UTF-8 locale must not change what a byte is. */
static void test_locale_independent(void **state)
{
	ward_rules *r;

	(void)state;
	if (!setlocale(LC_ALL, "C.UTF-8")) {
		print_message("SKIP: the C.UTF-8 locale is not available\n");
		skip();
	}
	r = load("-- /u/*.pem\nr- /v/?\n", &ENV);
	assert_int_equal(ward_rules_match(r, "/u/\xff\xfe.pem"),
			 WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/u/\xc3.pem"), WARD_ACCESS_NONE);
	/* '?' is one byte, not one character */
	assert_int_equal(ward_rules_match(r, "/v/\xc3\xa9"),
			 WARD_ACCESS_DEFAULT);
	assert_int_equal(ward_rules_match(r, "/v/\xc3"), WARD_ACCESS_RO);
	ward_rules_free(r);
	setlocale(LC_ALL, "C");
}

static void test_hostile(void **state)
{
	size_t n = 64 * 1024, len;
	char *e = malloc(n + 16);
	ward_rules *r;
	int err;

	(void)state;
	assert_non_null(e);
	assert_int_equal(ward_rules_new(&r), 0);

	/* 1,000 "**" levels collapse into one */
	len = (size_t)sprintf(e, "-- /h");
	for (size_t i = 0; i < 1000; i++)
		len += (size_t)sprintf(e + len, "/**");
	sprintf(e + len, "/x");
	assert_int_equal(ward_rules_add(r, e, &ENV, NULL), 0);
	assert_int_equal(ward_rules_match(r, "/h/x"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/h/a/b/x/c"), WARD_ACCESS_NONE);
	assert_int_equal(ward_rules_match(r, "/h/a/b/y"), WARD_ACCESS_DEFAULT);

	/* many stars in one component: loads (or fails) promptly */
	len = (size_t)sprintf(e, "-- /s/");
	for (size_t i = 0; i < 1000; i++)
		len += (size_t)sprintf(e + len, "*a");
	err = ward_rules_add(r, e, &ENV, NULL);
	assert_true(err == 0 || err == WARD_EINVAL || err == -ENOMEM);
	if (err == 0) {
		assert_int_equal(ward_rules_match(r, "/s/aaaa"),
				 WARD_ACCESS_DEFAULT);
	}

	/* a 64 KiB entry: a clear error, no truncation */
	memcpy(e, "r- /", 4);
	memset(e + 4, 'z', n);
	e[n + 4] = '\0';
	assert_int_equal(ward_rules_add(r, e, &ENV, NULL), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "path too long"));

	/* an entry that normalises back under PATH_MAX is fine */
	len = (size_t)sprintf(e, "r- /n");
	for (size_t i = 0; i < 2000; i++)
		len += (size_t)sprintf(e + len, "/q/..");
	assert_int_equal(ward_rules_add(r, e, &ENV, NULL), 0);
	assert_int_equal(ward_rules_match(r, "/n/f"), WARD_ACCESS_RO);
	ward_rules_free(r);
	free(e);
}

struct thread_arg {
	const ward_rules *r;
	int bad;
};

static void *match_thread(void *p)
{
	struct thread_arg *a = p;

	for (int i = 0; i < 20000; i++) {
		if (ward_rules_match(a->r, "/t/d/k.pem") != WARD_ACCESS_NONE ||
		    ward_rules_match(a->r, "/t/d/x") != WARD_ACCESS_RO ||
		    ward_rules_match(a->r, "/t/e") != WARD_ACCESS_RW)
			a->bad++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	ward_rules *r = load("rw /t\nr- /t/d\n-- /t/**/*.pem\n", &ENV);
	struct thread_arg a[4];
	pthread_t th[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		a[i] = (struct thread_arg){r, 0};
		assert_int_equal(
		    pthread_create(&th[i], NULL, match_thread, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(a[i].bad, 0);
	}
	ward_rules_free(r);
}

/*
 * A rule whose text names an existing path literally (issue 13, item 2:
 * "-- /x/secret[1]/key.pem" protected nothing, read as a glob that does
 * not match itself): `--`/`r-` cover the path and the glob's matches, `rw`
 * takes the path as its concrete root; [[] [*] [?] stay the escapes.
 */
static void test_literal_metacharacters(void **state)
{
	char dir[] = "/tmp/ward-rules-lit.XXXXXX", p[PATH_MAX], rule[PATH_MAX];
	char cmd[PATH_MAX + 16];
	ward_rules *r = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/secret[1]' '%s/d*x' && "
				   ": > '%s/secret[1]/key.pem'",
		 dir, dir, dir);
	assert_int_equal(system(cmd), 0);

	/* The existing literal path and what the glob matches. */
	snprintf(rule, sizeof(rule), "-- %s/secret[1]/key.pem", dir);
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, rule, &ENV, NULL), 0);
	snprintf(p, sizeof(p), "%s/secret[1]/key.pem", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_NONE);
	snprintf(p, sizeof(p), "%s/secret[1]/key.pem/below", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_NONE);
	snprintf(p, sizeof(p), "%s/secret1/key.pem", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_NONE);
	snprintf(p, sizeof(p), "%s/secret[1]/other", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_DEFAULT);
	ward_rules_free(r);

	/* The escape: [[] is a literal '[' (the path only). */
	snprintf(rule, sizeof(rule), "r- %s/secret[[]1]/key.pem", dir);
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, rule, &ENV, NULL), 0);
	snprintf(p, sizeof(p), "%s/secret[1]/key.pem", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_RO);
	snprintf(p, sizeof(p), "%s/secret1/key.pem", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_DEFAULT);
	ward_rules_free(r);

	/* rw: an existing path with a '*' is that root; a pattern is not. */
	snprintf(rule, sizeof(rule), "rw %s/d*x", dir);
	assert_int_equal(ward_rules_new(&r), 0);
	assert_int_equal(ward_rules_add(r, rule, &ENV, NULL), 0);
	snprintf(p, sizeof(p), "%s/d*x/f", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_RW);
	snprintf(p, sizeof(p), "%s/dyx/f", dir);
	assert_int_equal(ward_rules_match(r, p), WARD_ACCESS_DEFAULT);
	snprintf(rule, sizeof(rule), "rw %s/n*x", dir);
	assert_int_equal(ward_rules_add(r, rule, &ENV, NULL), WARD_EINVAL);
	ward_rules_free(r);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_origin_formats),
	    cmocka_unit_test(test_parse_ok),
	    cmocka_unit_test(test_info_and_origin),
	    cmocka_unit_test(test_env_expansion),
	    cmocka_unit_test(test_dollar_expansion),
	    cmocka_unit_test(test_xdg_defaults),
	    cmocka_unit_test(test_home),
	    cmocka_unit_test(test_relative),
	    cmocka_unit_test(test_normalisation),
	    cmocka_unit_test(test_precedence),
	    cmocka_unit_test(test_literal_covers_below),
	    cmocka_unit_test(test_glob_covers_below),
	    cmocka_unit_test(test_regex_metachar_paths),
	    cmocka_unit_test(test_match_input),
	    cmocka_unit_test(test_add_text),
	    cmocka_unit_test(test_add_failure_leaves_set),
	    cmocka_unit_test(test_10000_rules),
	    cmocka_unit_test(test_random_vs_bruteforce),
	    cmocka_unit_test(test_locale_independent),
	    cmocka_unit_test(test_hostile),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_literal_metacharacters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
