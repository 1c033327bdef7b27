/*
 * Unit tests for src/libward/env.c (the environment a command gets) and the
 * configuration's `env` key and --env-keep flag layer.
 */
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ward/ward.h"

static bool in(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* The built-in patterns catch the usual secret names, and only those. */
static void test_default_patterns(void **state)
{
	static const char *const secret[] = {
	    "GITHUB_TOKEN",
	    "GH_TOKEN",
	    "NPM_TOKEN",
	    "CI_JOB_TOKEN_X",
	    "AWS_SECRET_ACCESS_KEY",
	    "AWS_ACCESS_KEY_ID",
	    "AWS_SESSION_TOKEN",
	    "AWS_PROFILE",
	    "OPENAI_API_KEY",
	    "ANTHROPIC_API_KEY",
	    "STRIPE_SECRET_KEY",
	    "DB_PASSWORD",
	    "PGPASSWORD",
	    "MYSQL_PWD_PASSWD",
	    "client_secret",
	    "my_token",
	    "SECRET",
	    "TOKEN",
	    "GITLAB_PAT",
	    "GOOGLE_CREDENTIALS",
	    "SMTP_PASS",
	    "SSH_PRIVATE_KEY_FILE",
	    "AZURE_CLIENT_SECRET",
	    "SECRET_KEY_BASE",
	    /* The names issue 16 found passing through. */
	    "SENTRY_DSN",
	    "SLACK_WEBHOOK_URL",
	    "NPM_CONFIG__AUTH",
	    "DOCKER_AUTH_CONFIG",
	    "CI_JOB_JWT",
	    "GPG_PASSPHRASE",
	    "SESSION_COOKIE",
	    "PRIVATE_KEY_PEM",
	    "SERVICE_CREDS",
	    "BASIC_AUTH",
	    "HTTP_AUTHORIZATION",
	    "GITHUB_AUTHOR_TOKEN",
	};
	static const char *const plain[] = {
	    "PATH",
	    "HOME",
	    "TERM",
	    "SSH_AUTH_SOCK",
	    "KEYTIMEOUT",
	    "LANG",
	    "EDITOR",
	    "TOKENIZERS_PARALLELISM",
	    "PASSAGE",
	    "DISPLAY",
	    "XDG_RUNTIME_DIR",
	    "WARD_SANDBOX",
	    "HISTFILE",
	    "PWD",
	    "XAUTHORITY",
	    "GIT_AUTHOR_NAME",
	    "GIT_AUTHOR_EMAIL",
	    "GIT_AUTHOR_DATE",
	    "AUTHOR",
	    "DEBEMAIL",
	};
	char *const *d = ward_env_default_drop();

	(void)state;
	for (size_t i = 0; i < sizeof(secret) / sizeof(*secret); i++)
		if (!ward_env_matches(secret[i], d))
			fail_msg("%s is not dropped", secret[i]);
	/* Judged as a call judges them (a value no credential looks
	 * like): the built-in patterns spare what tools need. */
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		char entry[128], why[300];

		snprintf(entry, sizeof(entry), "%s=x", plain[i]);
		if (ward_env_judge(why, sizeof(why), entry, d, NULL))
			fail_msg("%s is dropped: %s", plain[i], why);
	}
	for (size_t i = 0; i < sizeof(secret) / sizeof(*secret); i++) {
		char entry[128], why[300];

		snprintf(entry, sizeof(entry), "%s=x", secret[i]);
		if (!ward_env_judge(why, sizeof(why), entry, d, NULL) ||
		    strncmp(why, "name matches ", 13) != 0)
			fail_msg("%s is not dropped by its name", secret[i]);
	}
	for (size_t i = 0; d[i]; i++)
		assert_true(ward_env_pattern_valid(d[i]));
}

/*
 * Patterns of literals and '*' are matched without fnmatch: every shape
 * agrees with fnmatch(FNM_CASEFOLD), which still judges '?' and brackets.
 */
static void test_pattern_shapes(void **state)
{
	static const struct {
		const char *pat, *name;
	} cases[] = {
	    {"*_TOKEN", "gh_token"},
	    {"*_TOKEN", "_TOKEN"},
	    {"*_TOKEN", "TOKEN"},
	    {"*_TOKEN", "GH_TOKENS"},
	    {"AWS_*", "aws_"},
	    {"AWS_*", "AWS"},
	    {"A*B*C", "AXBYC"},
	    {"A*B*C", "ABC"},
	    {"A*B*C", "ACB"},
	    {"*AB*AB", "ABAB"},
	    {"*AB*AB", "AB"},
	    {"*AB*AB", "XABYYAB"},
	    {"**", ""},
	    {"*", "ANY"},
	    {"TOKEN", "token"},
	    {"TOKEN", "TOKENS"},
	    {"*PASS*WORD*", "MY_PASSWORD"},
	    {"*PASS*WORD*", "PASSWOR"},
	    {"X?Z", "xyz"},
	    {"X?Z", "XZ"},
	    {"[AB]_KEY", "b_key"},
	    {"[!AB]_KEY", "a_key"},
	    {"[A-C]*", "Charlie"},
	    {"A**B", "AB"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *const pats[] = {(char *)cases[i].pat, NULL};
		bool want =
		    fnmatch(cases[i].pat, cases[i].name, FNM_CASEFOLD) == 0;

		if (ward_env_matches(cases[i].name, pats) != want)
			fail_msg("'%s' against '%s': want %s", cases[i].pat,
				 cases[i].name, want ? "a match" : "none");
	}
}

static void test_scrub(void **state)
{
	char *envp[] = {"PATH=/bin", "GITHUB_TOKEN=t", "A_KEY=k", "PLAIN=x=y",
			"NOEQUALS",  "DB_PASSWORD=",   NULL};
	char *drop[] = {"*_TOKEN", "*_KEY", "*PASSWORD*", NULL};
	char *keep[] = {"github_*", NULL};
	char **out = NULL, **dropped = NULL;

	(void)state;
	assert_int_equal(ward_env_scrub(&out, &dropped, envp, drop, keep), 0);
	assert_int_equal(ward_strv_len(out), 4);
	assert_true(in(out, "PATH=/bin"));
	assert_true(in(out, "GITHUB_TOKEN=t")); /* kept (any case) */
	assert_true(in(out, "PLAIN=x=y"));
	assert_true(in(out, "NOEQUALS"));
	assert_int_equal(ward_strv_len(dropped), 2);
	assert_string_equal(dropped[0], "A_KEY");
	assert_string_equal(dropped[1], "DB_PASSWORD");
	ward_strv_free(out);
	ward_strv_free(dropped);
	/* Nothing to drop: a copy; no @dropped wanted. */
	assert_int_equal(ward_env_scrub(&out, NULL, envp, NULL, NULL), 0);
	assert_int_equal(ward_strv_len(out), 6);
	ward_strv_free(out);
	/* The process environment by default. */
	setenv("WARD_TEST_ENV_TOKEN", "x", 1);
	assert_int_equal(ward_env_scrub(&out, &dropped, NULL, drop, NULL), 0);
	assert_true(in(dropped, "WARD_TEST_ENV_TOKEN"));
	assert_false(in(out, "WARD_TEST_ENV_TOKEN=x"));
	unsetenv("WARD_TEST_ENV_TOKEN");
	ward_strv_free(out);
	ward_strv_free(dropped);
	assert_int_equal(ward_env_scrub(NULL, NULL, envp, drop, keep),
			 WARD_EINVAL);
}

/*
 * Values: a credential is dropped whatever its name (the values issue 16
 * found under innocent names), and told by its kind, never its value; a
 * keep pattern still wins; ordinary values stay.
 */
static void test_values(void **state)
{
	static const struct {
		const char *entry, *why;
	} drop[] = {
	    {"DATABASE_URL=postgres://u:PASSWORD@db.example:5432/app",
	     "a URL with a password"},
	    {"REDIS_URL=redis://:hunter2@cache:6379/0",
	     "a URL with a password"},
	    {"REPO=https://me:ghp_x@github.com/o/r.git",
	     "a URL with a password"},
	    {"ID=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcDEF_12-",
	     "a JWT"},
	    {"UNSIGNED=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4eHh4eCJ9.", "a JWT"},
	    {"KEYDATA=-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n", "a PEM"},
	    {"K=-----BEGIN RSA PRIVATE KEY-----", "a PEM"},
	    {"HDR=Authorization: token "
	     "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
	     "ghp_"},
	    {"A=gho_0123456789abcdefghijklmnopqrstuvwxyz", "gho_"},
	    {"A=ghu_0123456789abcdefghijklmnopqrstuvwxyz", "ghu_"},
	    {"A=ghs_0123456789abcdefghijklmnopqrstuvwxyz", "ghs_"},
	    {"A=github_pat_11ABCDEFG0123456789_abcdefghij", "github_pat_"},
	    {"A=glpat-abcdefghij0123456789", "glpat-"},
	    {"A=xoxb-1234567890-abcdefghij", "xoxb-"},
	    {"A=xoxa-1234567890-abcdefghij", "xoxa-"},
	    {"A=xoxp-1234567890-abcdefghij", "xoxp-"},
	    {"A=xoxr-1234567890-abcdefghij", "xoxr-"},
	    {"A=sk-proj-abcdefghijklmnopqrstuvwx", "sk-"},
	    {"A=sk-ant-api03-abcdefghijklmnopqrst", "sk-"},
	    {"A=sk_live_abcdefghijklmnop1234", "sk_live_"},
	    {"A=AKIAIOSFODNN7EXAMPLE", "AKIA"},
	    {"A=ASIAIOSFODNN7EXAMPLE", "ASIA"},
	    {"A=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIza"},
	    {"A=npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_"},
	    {"A=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_"},
	};
	static const char *const keep[] = {
	    "PATH=/opt/sk-tools/bin:/usr/bin",
	    "LANG=sk_SK.UTF-8",
	    "URL=http://proxy.example:3128/",
	    "URL2=https://user@example.com/x",
	    "NOTE=ghp_short",
	    "AWSISH=AKIAFOO",
	    "WORD=ASIAN_FOOD_AND_MORE_OF_IT",
	    "TIME=12:30@home",
	    "DOC=eyJustAWord.not.a.token",
	    "CERT=-----BEGIN CERTIFICATE-----",
	    "EMPTY=",
	    "NOVALUE",
	};
	char *envp[] = {(char *)drop[0].entry, "PLAIN=1", NULL};
	char *keep_db[] = {"DATABASE_*", NULL};
	char why[300], **out = NULL, **gone = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(drop) / sizeof(*drop); i++) {
		const char *w =
		    ward_env_judge(why, sizeof(why), drop[i].entry, NULL, NULL);

		if (!w || !strstr(w, drop[i].why) ||
		    strncmp(w, "value looks like ", 17) != 0)
			fail_msg("%s: %s", drop[i].entry, w ? w : "kept");
		/* Never the value (past its well-known prefix). */
		assert_null(strstr(w, strchr(drop[i].entry, '=') + 8));
	}
	for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
		if (ward_env_judge(why, sizeof(why), keep[i], NULL, NULL))
			fail_msg("%s is dropped: %s", keep[i], why);
	assert_int_equal(ward_env_scrub(&out, &gone, envp, NULL, NULL), 0);
	assert_int_equal(ward_strv_len(out), 1);
	assert_string_equal(gone[0], "DATABASE_URL");
	ward_strv_free(out);
	ward_strv_free(gone);
	/* A keep pattern (env.keep, --env-keep) wins over a value too. */
	assert_int_equal(ward_env_scrub(&out, &gone, envp, NULL, keep_db), 0);
	assert_int_equal(ward_strv_len(out), 2);
	assert_int_equal(ward_strv_len(gone), 0);
	ward_strv_free(out);
	ward_strv_free(gone);
	/* A user's pattern drops what the built-in ones spare. */
	{
		char *mine[] = {"SSH_AUTH_SOCK", NULL};

		assert_non_null(ward_env_judge(
		    why, sizeof(why), "SSH_AUTH_SOCK=/tmp/a", mine, NULL));
		assert_string_equal(why, "name matches SSH_AUTH_SOCK");
	}
}

static void test_pattern_valid(void **state)
{
	(void)state;
	assert_true(ward_env_pattern_valid("GITHUB_TOKEN"));
	assert_true(ward_env_pattern_valid("*_[KT]EY?"));
	assert_false(ward_env_pattern_valid(""));
	assert_false(ward_env_pattern_valid(NULL));
	assert_false(ward_env_pattern_valid("A=B"));
	assert_false(ward_env_pattern_valid("A B"));
	assert_false(ward_env_pattern_valid("$A"));
}

/* Load a user file @text with --env-keep @keep (may be NULL). */
static ward_config *load(const char *text, const char *keep, int *err)
{
	struct ward_config_options o = WARD_CONFIG_OPTIONS_INIT;
	const char *k[] = {keep};
	ward_config *cfg = NULL;

	assert_int_equal(ward_config_new(&cfg), 0);
	o.workspace = "/";
	o.no_project_file = true;
	o.user_file = "";
	if (keep) {
		o.env_keep = k;
		o.env_keep_len = 1;
	}
	if (text)
		assert_int_not_equal(
		    ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER, "u.yml",
					   text, strlen(text)),
		    -ENOMEM);
	*err = ward_config_resolve(cfg, &o);
	return cfg;
}

static void test_config_env(void **state)
{
	struct ward_config_origin from;
	char *envp[] = {"X_TOKEN=1", "MINE=2", "Y_TOKEN=3", NULL};
	char **out = NULL, **dropped = NULL;
	ward_config *cfg;
	int err;

	(void)state;
	cfg = load("env:\n  drop: [MINE]\n  keep: [Y_*]\n", "X_TOKEN", &err);
	assert_int_equal(err, 0);
	assert_true(in(ward_config_env_drop(cfg, &from), "MINE"));
	assert_true(in(ward_config_env_drop(cfg, NULL), "*_TOKEN"));
	assert_int_equal(from.layer, WARD_CONFIG_LAYER_FLAGS);
	assert_int_equal(ward_config_env_scrub(&out, &dropped, cfg, envp), 0);
	assert_int_equal(ward_strv_len(out), 2);
	assert_int_equal(ward_strv_len(dropped), 1);
	assert_string_equal(dropped[0], "MINE");
	ward_strv_free(out);
	ward_strv_free(dropped);
	ward_config_free(cfg);

	/* Errors name the file and line. */
	cfg = load("env:\n  drop: [\"A=B\"]\n", NULL, &err);
	assert_int_equal(err, WARD_EINVAL);
	assert_non_null(strstr(ward_config_error(cfg, 0, NULL),
			       "u.yml:2: env: drop: \"A=B\""));
	ward_config_free(cfg);
	cfg = load("env: [x]\n", NULL, &err);
	assert_int_equal(err, WARD_EINVAL);
	ward_config_free(cfg);
	cfg = load("env:\n  keep: x\n", NULL, &err);
	assert_int_equal(err, WARD_EINVAL);
	ward_config_free(cfg);
	cfg = load(NULL, "A B", &err);
	assert_int_equal(err, WARD_EINVAL);
	assert_non_null(strstr(ward_config_error(cfg, 0, NULL), "--env-keep"));
	ward_config_free(cfg);
}

/* A version-1 options struct (before env_keep) still works. */
static void test_options_v1(void **state)
{
	struct {
		struct ward_config_options o;
		char guard[64];
	} box;
	ward_config *cfg = NULL;

	(void)state;
	memset(&box, 0x5a, sizeof(box));
	assert_int_equal(ward_config_options_init(&box.o, 1), 0);
	/* Nothing past the version-1 fields was written. */
	assert_int_equal(((unsigned char *)&box.o.env_keep)[0], 0x5a);
	assert_int_equal(box.o.version, 1);
	box.o.workspace = "/";
	box.o.no_project_file = true;
	box.o.user_file = "";
	assert_int_equal(ward_config_new(&cfg), 0);
	assert_int_equal(ward_config_load(cfg, &box.o), 0);
	assert_int_equal(ward_strv_len(ward_config_env_keep(cfg)), 0);
	ward_config_free(cfg);
	/* Version 2 ends before allow_unix: nothing past it is written. */
	memset(&box, 0x5a, sizeof(box));
	assert_int_equal(ward_config_options_init(&box.o, 2), 0);
	assert_int_equal(((unsigned char *)&box.o.allow_unix)[0], 0x5a);
	assert_int_equal(box.o.version, 2);
	assert_int_equal(ward_config_options_init(&box.o, 3), 0);
	assert_int_equal(box.o.version, 3);
	assert_null(box.o.allow_unix);
	assert_int_equal(
	    ward_config_options_init(&box.o, WARD_CONFIG_OPTIONS_VERSION + 1),
	    WARD_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_patterns),
	    cmocka_unit_test(test_pattern_shapes),
	    cmocka_unit_test(test_scrub),
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_pattern_valid),
	    cmocka_unit_test(test_config_env),
	    cmocka_unit_test(test_options_v1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
