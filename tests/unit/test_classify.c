/*
 * Unit tests for classify.c: one cmocka test per table row
 * (runner × exit × stderr × status channel → outcome, detail).
 *
 * Every row's stderr is copied into a buffer of exactly its length, with
 * no terminating NUL, so a classifier that reads past stderr_len fails
 * under ASan/valgrind and, in practice, here too (see "len_*" rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ward/ward.h"

#define OK     WARD_OUTCOME_OK
#define DENIED WARD_OUTCOME_DENIED
#define RFAIL  WARD_OUTCOME_RUNNER_FAILURE

#define LL WARD_RUNNER_LANDLOCK
#define BW WARD_RUNNER_BWRAP
#define CU WARD_RUNNER_CUSTOM
#define SB WARD_RUNNER_SEATBELT
#define NO WARD_RUNNER_NONE
#define WA WARD_RUNNER_WINDOWS_ACL

#define LL_INFO                                                                \
	"landlock-run: partial enforcement (kernel ABI 3 of 7): ioctl_dev, "   \
	"scoped signals\n"
#define LL_FATAL "landlock-run: cannot open /nope: No such file or directory"
#define BW_FATAL                                                               \
	"bwrap: Can't find source path /nope: No such file or directory"

struct row {
	const char *name;
	enum ward_runner runner;
	int exit_code;
	int term_signal;
	int child_started;
	const char *err; /* NULL: no stderr at all */
	size_t len;	 /* 0: strlen(err) */
	enum ward_outcome want;
	/* Expected detail: exact, or "~text": contains text. */
	const char *detail;
};

static const struct row rows[] = {
    /* --- landlock: runner failure -------------------------------- */
    {"ll_fatal_exit125", LL, 125, 0, -1, LL_FATAL "\n", 0, RFAIL, LL_FATAL},
    {"ll_fatal_no_newline", LL, 125, 0, -1, LL_FATAL, 0, RFAIL, LL_FATAL},
    {"ll_info_alone_exit125_not_failure", LL, 125, 0, -1, LL_INFO, 0, OK, ""},
    {"ll_info_then_fatal_carries_fatal", LL, 125, 0, -1, LL_INFO LL_FATAL "\n",
     0, RFAIL, LL_FATAL},
    {"ll_fatal_after_other_output", LL, 125, 0, -1,
     "warming up\n" LL_FATAL "\n", 0, RFAIL, LL_FATAL},
    {"ll_fatal_crlf", LL, 125, 0, -1, LL_FATAL "\r\n", 0, RFAIL, LL_FATAL},
    {"ll_fatal_line_but_exit1", LL, 1, 0, -1, LL_FATAL "\n", 0, OK, ""},
    {"ll_fatal_line_but_exit0", LL, 0, 0, -1, LL_FATAL "\n", 0, OK, ""},
    {"ll_prefix_mid_line_is_not_fatal", LL, 125, 0, -1,
     "error: landlock-run: nope\n", 0, OK, ""},
    {"ll_exit125_without_line", LL, 125, 0, -1, "something else\n", 0, OK, ""},
    {"ll_channel_started_wins_over_text", LL, 125, 0, 1, LL_FATAL "\n", 0, OK,
     ""},
    {"ll_channel_not_started", LL, 125, 0, 0, "", 0, RFAIL, "~landlock"},
    {"ll_channel_not_started_with_line", LL, 125, 0, 0, LL_INFO LL_FATAL "\n",
     0, RFAIL, LL_FATAL},
    {"ll_channel_not_started_exit0", LL, 0, 0, 0, "", 0, OK, ""},
    /* --- landlock: denial ------------------------------------------ */
    {"ll_denied_bash", LL, 1, 0, -1,
     "touch: cannot touch '/x': Permission denied\n", 0, DENIED, ""},
    {"ll_denied_after_info_line", LL, 1, 0, 1,
     LL_INFO "bash: /x: Permission denied\n", 0, DENIED, ""},
    {"ll_denied_go_lowercase", LL, 1, 0, -1, "open /x: permission denied\n", 0,
     DENIED, ""},
    {"ll_denied_python", LL, 1, 0, -1,
     "PermissionError: [Errno 13] Permission denied: '/x'\n", 0, DENIED, ""},
    {"ll_denied_killed_by_signal", LL, -1, 9, 1,
     "cp: cannot create '/x': Permission denied\n", 0, DENIED, ""},
    {"ll_signature_but_exit0", LL, 0, 0, 1, "Permission denied\n", 0, OK, ""},
    {"ll_bwrap_signature_is_not_landlock", LL, 1, 0, -1,
     "touch: cannot touch '/x': Read-only file system\n", 0, OK, ""},
    {"ll_seatbelt_signature_is_not_landlock", LL, 1, 0, -1,
     "touch: /x: Operation not permitted\n", 0, OK, ""},
    {"ll_info_line_alone_exit1", LL, 1, 0, -1, LL_INFO, 0, OK, ""},
    {"ll_runner_failure_outranks_denial", LL, 125, 0, -1,
     "landlock-run: /x: Permission denied\n", 0, RFAIL,
     "landlock-run: /x: Permission denied"},
    /* --- bwrap ---------------------------------------------------- */
    {"bw_text_failure", BW, 1, 0, -1, BW_FATAL "\n", 0, RFAIL, BW_FATAL},
    {"bw_text_line_exit0", BW, 0, 0, -1, BW_FATAL "\n", 0, OK, ""},
    {"bw_channel_started_wins_over_text", BW, 1, 0, 1, BW_FATAL "\n", 0, OK,
     ""},
    {"bw_channel_not_started_with_line", BW, 1, 0, 0,
     "bwrap: execvp nope: No such file or directory\n", 0, RFAIL,
     "bwrap: execvp nope: No such file or directory"},
    {"bw_channel_not_started_no_text", BW, 1, 0, 0, NULL, 0, RFAIL, "~bwrap"},
    {"bw_prefix_mid_line_is_not_failure", BW, 1, 0, -1, "nested bwrap: oops\n",
     0, OK, ""},
    {"bw_landlock_line_is_not_bwrap", BW, 125, 0, -1, LL_FATAL "\n", 0, OK, ""},
    {"bw_denied_bash", BW, 1, 0, 1,
     "touch: cannot touch '/x': Read-only file system\n", 0, DENIED, ""},
    {"bw_denied_python", BW, 1, 0, -1,
     "OSError: [Errno 30] Read-only file system: '/x'\n", 0, DENIED, ""},
    {"bw_denied_go_lowercase", BW, 1, 0, -1, "open /x: read-only file system\n",
     0, DENIED, ""},
    {"bw_denied_signal", BW, -1, 15, -1, "Read-only file system", 0, DENIED,
     ""},
    {"bw_landlock_signature_is_not_bwrap", BW, 1, 0, -1,
     "touch: cannot touch '/x': Permission denied\n", 0, OK, ""},
    {"bw_signature_but_exit0", BW, 0, 0, 1,
     "mkdir: Read-only file system (ignored)\n", 0, OK, ""},
    {"bw_failure_outranks_denial", BW, 1, 0, -1,
     "bwrap: Can't mkdir /x: Read-only file system\n", 0, RFAIL,
     "bwrap: Can't mkdir /x: Read-only file system"},
    /* --- custom (an asserted bwrap-compatible runner) ---------------- */
    {"cu_text_failure", CU, 1, 0, -1, BW_FATAL "\n", 0, RFAIL, BW_FATAL},
    {"cu_channel_not_started", CU, 1, 0, 0, "", 0, RFAIL, "~custom"},
    {"cu_denied", CU, 1, 0, -1, "touch: Read-only file system\n", 0, DENIED,
     ""},
    {"cu_landlock_signature_is_not_custom", CU, 1, 0, -1, "Permission denied\n",
     0, OK, ""},
    /* --- seatbelt ------------------------------------------------- */
    {"sb_text_failure_outranks_denial", SB, 71, 0, -1,
     "sandbox-exec: sandbox_apply: Operation not permitted\n", 0, RFAIL,
     "sandbox-exec: sandbox_apply: Operation not permitted"},
    {"sb_text_line_exit0", SB, 0, 0, -1, "sandbox-exec: odd\n", 0, OK, ""},
    {"sb_channel_started_wins_over_text", SB, 1, 0, 1, "sandbox-exec: odd\n", 0,
     OK, ""},
    {"sb_denied", SB, 1, 0, -1, "touch: /x: Operation not permitted\n", 0,
     DENIED, ""},
    {"sb_denied_lowercase", SB, 1, 0, -1, "open /x: operation not permitted\n",
     0, DENIED, ""},
    {"sb_bwrap_signature_is_not_seatbelt", SB, 1, 0, -1,
     "Read-only file system\n", 0, OK, ""},
    {"sb_landlock_signature_is_not_seatbelt", SB, 1, 0, -1,
     "Permission denied\n", 0, OK, ""},
    /* --- bwrap with the Landlock layer inside ------------------------ */
    /* bwrap exec'd landlock-run (child_started 1); its own failure means
     * the command never ran. */
    {"bw_inner_launcher_failed", BW, 125, 0, 1, LL_FATAL "\n", 0, RFAIL,
     LL_FATAL},
    {"bw_inner_info_alone_not_failure", BW, 125, 0, 1, LL_INFO, 0, OK, ""},
    {"bw_inner_fatal_text_exit1_not_failure", BW, 1, 0, 1, LL_FATAL "\n", 0, OK,
     ""},
    /* --- none and windows-acl ---------------------------------------- */
    {"none_never_denies", NO, 1, 0, -1,
     "Permission denied\nRead-only file system\nOperation not "
     "permitted\n",
     0, OK, ""},
    {"none_never_runner_failure", NO, 125, 0, 0, LL_FATAL "\n" BW_FATAL "\n", 0,
     OK, ""},
    {"windows_acl_has_no_signature", WA, 1, 0, -1, "Operation not permitted\n",
     0, OK, ""},
    {"windows_acl_not_started", WA, 1, 0, 0, NULL, 0, RFAIL, "~windows-acl"},
    /* --- stderr bounds -------------------------------------------- */
    {"len_cuts_signature", LL, 1, 0, -1, "x Permission denied", 10, OK, ""},
    {"len_ends_exactly_at_signature", LL, 1, 0, -1,
     "x Permission denied and more", 19, DENIED, ""},
    {"len_cuts_fatal_line", LL, 125, 0, -1, "junk\n" LL_FATAL, 5, OK, ""},
    {"len_cuts_inside_fatal_line", LL, 125, 0, -1, LL_FATAL "\nnext line\n", 30,
     RFAIL, "landlock-run: cannot open /nop"},
    {"signature_shorter_than_stderr_prefix", BW, 1, 0, -1, "Read", 0, OK, ""},
    {"empty_stderr", LL, 1, 0, -1, "", 0, OK, ""},
    {"null_stderr", LL, 1, 0, -1, NULL, 0, OK, ""},
};

static void run_row(void **state)
{
	const struct row *r = *state;
	struct ward_run_facts facts = {
	    .runner = r->runner,
	    .exit_code = r->exit_code,
	    .term_signal = r->term_signal,
	    .child_started = r->child_started,
	};
	struct ward_classification c;
	char *buf = NULL;
	bool ok;

	if (r->err) {
		size_t len = r->len ? r->len : strlen(r->err);

		/* Exactly len bytes: no NUL to lean on. */
		buf = malloc(len ? len : 1);
		assert_non_null(buf);
		memcpy(buf, r->err, len);
		facts.stderr_text = buf;
		facts.stderr_len = len;
	} else {
		/* NULL text with a bogus length must be read as empty. */
		facts.stderr_len = 99;
	}
	memset(&c, 'Z', sizeof(c));
	assert_int_equal(ward_classify(&c, &facts), 0);
	free(buf);
	if (c.outcome != r->want)
		fail_msg("%s: outcome %d, want %d (detail \"%s\")", r->name,
			 (int)c.outcome, (int)r->want, c.detail);
	assert_non_null(memchr(c.detail, '\0', sizeof(c.detail)));
	if (r->detail[0] == '~')
		ok = strstr(c.detail, r->detail + 1) != NULL;
	else
		ok = strcmp(c.detail, r->detail) == 0;
	if (!ok)
		fail_msg("%s: detail \"%s\", want %s\"%s\"", r->name, c.detail,
			 r->detail[0] == '~' ? "one containing " : "",
			 r->detail + (r->detail[0] == '~'));
}

static void test_invalid_arguments(void **state)
{
	struct ward_run_facts facts = {.runner = LL};
	struct ward_classification c;

	(void)state;
	assert_int_equal(ward_classify(NULL, &facts), WARD_EINVAL);
	assert_int_equal(ward_classify(&c, NULL), WARD_EINVAL);
}

/* A fatal line longer than the detail buffer is cut, still terminated. */
static void test_long_detail_truncated(void **state)
{
	char err[2048];
	struct ward_run_facts facts = {
	    .runner = BW, .exit_code = 1, .child_started = -1};
	struct ward_classification c;

	(void)state;
	memset(err, 'x', sizeof(err));
	memcpy(err, "bwrap: ", 7);
	facts.stderr_text = err;
	facts.stderr_len = sizeof(err);
	assert_int_equal(ward_classify(&c, &facts), 0);
	assert_int_equal(c.outcome, RFAIL);
	assert_int_equal(strlen(c.detail), sizeof(c.detail) - 1);
	assert_int_equal(strncmp(c.detail, "bwrap: xxx", 10), 0);
}

static void test_signatures(void **state)
{
	(void)state;
	assert_string_equal(ward_denial_signature(LL), "Permission denied");
	assert_string_equal(ward_denial_signature(BW), "Read-only file system");
	assert_string_equal(ward_denial_signature(CU), "Read-only file system");
	assert_string_equal(ward_denial_signature(SB),
			    "Operation not permitted");
	assert_string_equal(ward_denial_signature(NO), "");
	assert_string_equal(ward_denial_signature(WA), "");
	assert_string_equal(ward_denial_signature((enum ward_runner)42), "");
}

/* A custom runner's own failure signatures replace the bwrap dialect. */
static void test_custom_failure_signatures(void **state)
{
	static const char *const sigs[] = {"myrunner:", "jail: ", NULL};
	struct ward_classification c;
	struct ward_run_facts f;
	const char *text;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.runner = CU;
	f.exit_code = 1;
	f.child_started = -1;
	f.failure_signatures = sigs;
	text = "some output\njail: cannot create namespace\n";
	f.stderr_text = text;
	f.stderr_len = strlen(text);
	assert_int_equal(ward_classify(&c, &f), 0);
	assert_int_equal(c.outcome, RFAIL);
	assert_string_equal(c.detail, "jail: cannot create namespace");

	/* With signatures given, a bwrap-looking line is the command's. */
	text = "bwrap: something the command printed\n";
	f.stderr_text = text;
	f.stderr_len = strlen(text);
	assert_int_equal(ward_classify(&c, &f), 0);
	assert_int_not_equal(c.outcome, RFAIL);

	/* Without signatures the bwrap dialect applies. */
	f.failure_signatures = NULL;
	assert_int_equal(ward_classify(&c, &f), 0);
	assert_int_equal(c.outcome, RFAIL);

	/* A signature with exit 0 is not a failure. */
	f.failure_signatures = sigs;
	f.exit_code = 0;
	text = "myrunner: note\n";
	f.stderr_text = text;
	f.stderr_len = strlen(text);
	assert_int_equal(ward_classify(&c, &f), 0);
	assert_int_not_equal(c.outcome, RFAIL);
}

/* Classify @text (exit @code) under @runner with the network off or not,
 * and the exact channel @fact; the result into *@c. */
static void net_case(struct ward_classification *c, enum ward_runner runner,
		     bool off, enum ward_net_fact fact, int code,
		     const char *text)
{
	struct ward_run_facts f;

	memset(&f, 0, sizeof(f));
	f.runner = runner;
	f.exit_code = code;
	f.child_started = 1;
	f.network_off = off;
	f.net = fact;
	f.stderr_text = text;
	f.stderr_len = strlen(text);
	assert_int_equal(ward_classify(c, &f), 0);
}

/*
 * The network is the reason: what the clients print when the network is
 * off, per runner (curl, wget, git, pip, python, node/npm), only with the
 * network off, only for a failed run; an exact channel wins over the text
 * either way.
 */
static void test_network_denied(void **state)
{
	static const struct {
		enum ward_runner runner;
		const char *text;
	} hits[] = {
	    {BW, "curl: (6) Could not resolve host: example.com\n"},
	    {LL, "curl: (6) Could not resolve host: example.com\n"},
	    {BW, "fatal: unable to access 'https://github.com/x/': Could not "
		 "resolve host: github.com\n"},
	    {BW, "wget: unable to resolve host address 'example.com'\n"},
	    {BW, "socket.gaierror: [Errno -3] Temporary failure in name "
		 "resolution\n"},
	    {LL, "Retrying (...) after connection broken by "
		 "'NewConnectionError(...: Failed to establish a new "
		 "connection: [Errno -3] Temporary failure in name "
		 "resolution)'\n"},
	    {BW, "npm error code EAI_AGAIN\n"},
	    {LL, "npm error code EAI_AGAIN\n"},
	    {BW,
	     "Connecting to 1.1.1.1:80... failed: Network is unreachable.\n"},
	    {BW, "connect ENETUNREACH 1.1.1.1:80 - Local (0.0.0.0:0)\n"},
	    {LL, "connect EACCES 1.1.1.1:80 - Local (undefined:undefined)\n"},
	    {LL, "Connecting to 1.1.1.1:80... failed: Permission denied.\n"},
	    {LL, "curl: (7) Failed to connect to 1.1.1.1 port 80 after 0 ms: "
		 "Couldn't connect to server\n"},
	};
	struct ward_classification c;

	(void)state;
	for (size_t i = 0; i < sizeof(hits) / sizeof(hits[0]); i++) {
		net_case(&c, hits[i].runner, true, WARD_NET_FACT_UNKNOWN, 6,
			 hits[i].text);
		if (!c.network_denied)
			fail_msg("case %zu not seen as the network: %s", i,
				 hits[i].text);
		/* The network on: the same text is no finding of ours. */
		net_case(&c, hits[i].runner, false, WARD_NET_FACT_UNKNOWN, 6,
			 hits[i].text);
		assert_false(c.network_denied);
		/* A run that succeeded was not stopped. */
		net_case(&c, hits[i].runner, true, WARD_NET_FACT_UNKNOWN, 0,
			 hits[i].text);
		assert_false(c.network_denied);
	}
	/* Per runner, never a union: bwrap's namespace never says EACCES
	 * for a socket, Landlock's filter never ENETUNREACH. */
	net_case(&c, BW, true, WARD_NET_FACT_UNKNOWN, 1,
		 "connect EACCES 1.1.1.1:80\n");
	assert_false(c.network_denied);
	net_case(&c, LL, true, WARD_NET_FACT_UNKNOWN, 1,
		 "connect ENETUNREACH 1.1.1.1:80\n");
	assert_false(c.network_denied);
	/* A runner that confines no network. */
	net_case(&c, NO, true, WARD_NET_FACT_UNKNOWN, 6,
		 "curl: (6) Could not resolve host: x\n");
	assert_false(c.network_denied);
	/* The exact channel decides, whatever the text says. */
	net_case(&c, LL, true, WARD_NET_FACT_REFUSED, 1, "no words\n");
	assert_true(c.network_denied);
	net_case(&c, LL, true, WARD_NET_FACT_NONE, 6,
		 "curl: (6) Could not resolve host: x\n");
	assert_false(c.network_denied);
	/* A socket Landlock refused is not a file denial; a file still is. */
	net_case(&c, LL, true, WARD_NET_FACT_UNKNOWN, 4,
		 "Connecting to 1.1.1.1:80... failed: Permission denied.\n");
	assert_int_equal(c.outcome, OK);
	net_case(&c, LL, true, WARD_NET_FACT_UNKNOWN, 4,
		 "Connecting to 1.1.1.1:80... failed: Permission denied.\n"
		 "sh: 1: cannot create /etc/x: Permission denied\n");
	assert_int_equal(c.outcome, DENIED);
	assert_true(c.network_denied);
	/* With the network on the old reading stands. */
	net_case(&c, LL, false, WARD_NET_FACT_UNKNOWN, 4,
		 "Connecting to 1.1.1.1:80... failed: Permission denied.\n");
	assert_int_equal(c.outcome, DENIED);
	assert_non_null(ward_network_signatures(SB));
	assert_null(ward_network_signatures(SB)[0]);
}

int main(void)
{
	enum {
		NROWS = sizeof(rows) / sizeof(rows[0])
	};
	struct CMUnitTest tests[NROWS + 5];

	for (size_t i = 0; i < NROWS; i++) {
		tests[i] = (struct CMUnitTest){
		    .name = rows[i].name,
		    .test_func = run_row,
		    .initial_state = (void *)&rows[i],
		};
	}
	tests[NROWS] =
	    (struct CMUnitTest)cmocka_unit_test(test_invalid_arguments);
	tests[NROWS + 1] =
	    (struct CMUnitTest)cmocka_unit_test(test_long_detail_truncated);
	tests[NROWS + 2] = (struct CMUnitTest)cmocka_unit_test(test_signatures);
	tests[NROWS + 3] =
	    (struct CMUnitTest)cmocka_unit_test(test_custom_failure_signatures);
	tests[NROWS + 4] =
	    (struct CMUnitTest)cmocka_unit_test(test_network_denied);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
