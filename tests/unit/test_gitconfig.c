/*
 * Unit tests for gitconfig.c (the bounded scan of git configuration for
 * core.hooksPath and include paths) and sha256.c (the guard's digest).
 *
 * The parser's answers are checked against git itself where git is
 * installed: for every sample, `git config --file F --get-all KEY` must
 * give the same values (or fail where the scan reports a syntax error).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "libward/policy/gitconfig.h"
#include "sha256.h"

/* What a scan reported: "H:value" and "I:value" lines. */
struct seen {
	char text[4096];
};

static void on_key(void *ctx, enum ward_gitcfg_key key, const char *value,
		   unsigned line)
{
	struct seen *s = ctx;
	size_t n = strlen(s->text);

	(void)line;
	snprintf(s->text + n, sizeof(s->text) - n, "%c:%s\n",
		 key == WARD_GITCFG_HOOKSPATH ? 'H' : 'I',
		 value ? value : "(bool)");
}

static int scan(struct seen *s, const char *text)
{
	memset(s, 0, sizeof(*s));
	return ward_gitconfig_scan(text, strlen(text), on_key, s, NULL);
}

/* What git says: the same "H:"/"I:" lines, or NULL when git refuses. */
static char *git_says(const char *text)
{
	static const struct {
		char tag;
		const char *key;
	} keys[] = {{'H', "core.hooksPath"},
		    {'I', "include.path"},
		    {'I', "includeIf.x.path"}};
	char path[] = "/tmp/ward-gitconfig-XXXXXX", cmd[256], line[1024];
	char *out = calloc(1, 4096);
	size_t n = 0;
	FILE *f;
	int fd;

	assert_non_null(out);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	/* Syntax: any read of the file fails when git cannot parse it. */
	snprintf(cmd, sizeof(cmd),
		 "git config --file %s --list >/dev/null 2>&1", path);
	if (system(cmd) != 0) {
		unlink(path);
		free(out);
		return NULL;
	}
	/* The values in file order, as git reads them (no includes). */
	snprintf(cmd, sizeof(cmd),
		 "git config --file %s --get-regexp "
		 "'^(core\\.hookspath|include\\.path|includeif\\..*\\.path)$'"
		 " 2>/dev/null",
		 path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		n +=
		    (size_t)snprintf(out + n, 4096 - n, "%c:%s\n",
				     strncmp(line, "core.", 5) == 0 ? 'H' : 'I',
				     sp ? sp + 1 : "(bool)");
	}
	pclose(f);
	unlink(path);
	(void)keys;
	return out;
}

static bool have_git(void)
{
	return system("git --version >/dev/null 2>&1") == 0;
}

/* Samples whose every value the scan must report as git reads it. */
static const char *const samples[] = {
    "[core]\n\thooksPath = .husky/_\n",
    "[core]\n\thooksPath = \".husky/_\" ; husky\n",
    "[Core]\n\tHooksPath=  a b  \n",
    "[core] hookspath = x # comment\n",
    "[core]\n\thookspath = \"a\\\"b\"\n",
    "[core]\n\thookspath = a\\\n b\n",
    "[core]\r\n\thookspath = crlf\r\n",
    "\xef\xbb\xbf[core]\n\thookspath = bom\n",
    "[include]\n\tpath = ../x.inc\n\tpath = y.inc\n",
    "[includeIf \"gitdir:~/work/\"]\n\tpath = w.inc\n",
    "[includeIf \"onbranch:ma\\\"in\"]\n\tpath = b.inc\n",
    "[include \"sub\"]\n\tpath = not-an-include\n",
    "[core \"x\"]\n\thookspath = not-hooks\n",
    "[core.x]\n\thookspath = not-hooks\n",
    "[other]\n\thookspath = no\n[core]\n\thookspath = yes\n",
    "; top comment\n# another\n[core]\n\n\thookspath = after-blank\n",
    "[core]\n\thookspath = \"quoted ; not a comment\"\n",
    "[core]\n\thookspath = tab\\there\n",
    "hookspath = before-any-section\n[core]\nhookspath = y\n",
};

/* Samples git refuses: the scan stops with -EINVAL too. */
static const char *const broken[] = {
    "[core\n\thookspath = x\n",
    "[core]\n\thookspath = \"unterminated\n",
    "[core]\n\thookspath = bad\\qescape\n",
    "[core]\n\t1key = x\n",
    "[core]\n\tkey x\n",
};

static void test_samples(void **state)
{
	struct seen s;
	bool git = have_git();

	(void)state;
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		char *want;

		assert_int_equal(scan(&s, samples[i]), 0);
		print_message("sample %zu:\n%s", i, s.text);
		if (!git)
			continue;
		want = git_says(samples[i]);
		assert_non_null(want);
		if (strcmp(want, s.text) != 0)
			fail_msg("sample %zu: git says\n%s\nthe scan says\n%s",
				 i, want, s.text);
		free(want);
	}
	if (!git)
		print_message("note: git is not installed: the samples were "
			      "not compared with git\n");
}

static void test_broken(void **state)
{
	struct seen s;
	unsigned line = 0;
	bool git = have_git();

	(void)state;
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		memset(&s, 0, sizeof(s));
		assert_int_equal(ward_gitconfig_scan(broken[i],
						     strlen(broken[i]), on_key,
						     &s, &line),
				 -EINVAL);
		assert_true(line >= 1);
		if (git) {
			char *want = git_says(broken[i]);

			if (want)
				fail_msg("broken %zu: git accepts it:\n%s", i,
					 want);
		}
	}
}

/* Exact values for a few cases, independent of git. */
static void test_values(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(scan(&s, "[core]\n\thooksPath = \".husky/_\" ; x\n"),
			 0);
	assert_string_equal(s.text, "H:.husky/_\n");
	assert_int_equal(scan(&s, "[CORE] HOOKSPATH =  a  b  \n"), 0);
	assert_string_equal(s.text, "H:a  b\n");
	assert_int_equal(scan(&s, "[include]\n\tpath\n"), 0);
	assert_string_equal(s.text, "I:(bool)\n");
	assert_int_equal(scan(&s, "[includeIf \"gitdir:/x/\"]\npath=a\n"
				  "[includeif]\npath=no-condition\n"),
			 0);
	assert_string_equal(s.text, "I:a\n");
	assert_int_equal(scan(&s, ""), 0);
	assert_string_equal(s.text, "");
}

/* FIPS 180-4 / NIST test vectors, and a split update. */
static void test_sha256(void **state)
{
	static const struct {
		const char *msg;
		const char *hex;
	} v[] = {
	    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b"
		 "855"},
	    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f2"
		    "0015ad"},
	    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c"
	     "1"},
	};
	unsigned char d[WARD_SHA256_LEN];
	struct ward_sha256 h;
	char hex[65], *million;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		ward_sha256_init(&h);
		/* In two uneven pieces: the buffering must not matter. */
		ward_sha256_update(&h, v[i].msg, strlen(v[i].msg) / 3);
		ward_sha256_update(&h, v[i].msg + strlen(v[i].msg) / 3,
				   strlen(v[i].msg) - strlen(v[i].msg) / 3);
		ward_sha256_final(d, &h);
		for (int k = 0; k < 32; k++)
			sprintf(hex + 2 * k, "%02x", d[k]);
		assert_string_equal(hex, v[i].hex);
	}
	million = malloc(1000000);
	assert_non_null(million);
	memset(million, 'a', 1000000);
	ward_sha256_init(&h);
	for (size_t off = 0; off < 1000000; off += 4097)
		ward_sha256_update(&h, million + off,
				   1000000 - off < 4097 ? 1000000 - off : 4097);
	ward_sha256_final(d, &h);
	for (int k = 0; k < 32; k++)
		sprintf(hex + 2 * k, "%02x", d[k]);
	assert_string_equal(
	    hex,
	    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(million);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_samples),
	    cmocka_unit_test(test_broken),
	    cmocka_unit_test(test_values),
	    cmocka_unit_test(test_sha256),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
