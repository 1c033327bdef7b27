/*
 * fuzz_classify — libFuzzer target for output classification
 * (src/libward/run/classify.c: ward_classify, ward_denial_signature).
 *
 * Input: byte 0 picks the runner (all six, CUSTOM with or without
 * operator signatures), byte 1 the exit status (0, 1, 125, 126, 127, 137,
 * or -1 with a signal), byte 2 child_started (1, 0 or -1); the rest is the
 * command's stderr, handed over in a buffer of exactly its size with no
 * NUL after it (an over-read is an ASan report). Checked against an
 * independent model of the contract in include/ward/classify.h:
 *   1. the outcome is the model's: runner failure first (child_started 0
 *      with a failing status; or, with no channel, a line starting with
 *      the runner's prefix - the landlock info line excluded - and the
 *      runner's own exit status for its failures), else a denial exactly
 *      when the run failed and stderr holds the runner's signature in any
 *      ASCII case; runner NONE is always OK, child_started 1 never a
 *      runner failure but for bwrap's own landlock-run layer failing
 *      (exit 125 and a landlock-run: line);
 *   2. detail is NUL-terminated, empty unless a runner failure, and is the
 *      matched line (cut to 511 bytes, without a trailing CR) or the
 *      "never started" text naming the runner;
 *   3. the result does not depend on the bytes after the stderr length.
 *
 * Build and run: `make fuzz` (or `make fuzz-lane`); see tests/fuzz/run.sh.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/ward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const SIGS[] = {"myrunner: ", "fatal", NULL};

static bool has_prefix(const char *l, size_t n, const char *pfx)
{
	size_t k = strlen(pfx);

	return n >= k && memcmp(l, pfx, k) == 0;
}

/* The first line starting with one of @pfx (not with @excl); its length. */
static const char *model_find(const char *t, size_t len,
			      const char *const *pfx, const char *excl,
			      size_t *out_len)
{
	for (size_t k = 0; pfx[k]; k++) {
		size_t pos = 0;

		while (pos < len) {
			const char *s = t + pos;
			const char *nl = memchr(s, '\n', len - pos);
			size_t l = nl ? (size_t)(nl - s) : len - pos;

			if (has_prefix(s, l, pfx[k]) &&
			    !(excl && has_prefix(s, l, excl))) {
				*out_len = l;
				return s;
			}
			pos += l + 1;
		}
	}
	return NULL;
}

static bool model_contains(const char *t, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n && i + n <= len; i++) {
		size_t j = 0;

		while (j < n) {
			unsigned char a = (unsigned char)t[i + j];
			unsigned char b = (unsigned char)needle[j];

			if (a >= 'A' && a <= 'Z')
				a = (unsigned char)(a - 'A' + 'a');
			if (b >= 'A' && b <= 'Z')
				b = (unsigned char)(b - 'A' + 'a');
			if (a != b)
				break;
			j++;
		}
		if (j == n)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int exits[] = {0, 1, 125, 126, 127, 137, -1, 2};
	static const int started[] = {1, 0, -1};
	struct ward_run_facts f = {0};
	struct ward_classification c, c2;
	const char *pfx[2] = {NULL, NULL}, *excl = NULL, *line = NULL;
	const char *sig;
	size_t len, llen = 0;
	char *err, *err2;
	int fatal = -1;
	bool failing, custom_sigs = false;
	enum ward_outcome want;
	char want_detail[512];

	if (size < 3)
		return 0;
	f.runner = (enum ward_runner)(data[0] % 6);
	custom_sigs = f.runner == WARD_RUNNER_CUSTOM && (data[0] & 0x80);
	f.exit_code = exits[data[1] % 8];
	f.term_signal = f.exit_code == -1 ? 9 : 0;
	f.child_started = started[data[2] % 3];
	f.failure_signatures = custom_sigs ? SIGS : NULL;
	len = size - 3;
	err = malloc(len ? len : 1);
	if (!err)
		abort();
	memcpy(err, data + 3, len);
	f.stderr_text = len ? err : (data[2] & 0x80 ? NULL : err);
	f.stderr_len = len;

	if (ward_classify(&c, &f) != 0)
		abort();

	/* The model. */
	failing = f.exit_code != 0 || f.term_signal != 0;
	switch (f.runner) {
	case WARD_RUNNER_LANDLOCK:
		pfx[0] = "landlock-run: ";
		excl = "landlock-run: partial enforcement";
		fatal = 125;
		break;
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		pfx[0] = "bwrap: ";
		break;
	case WARD_RUNNER_SEATBELT:
		pfx[0] = "sandbox-exec: ";
		break;
	default:
		break;
	}
	want = WARD_OUTCOME_OK;
	want_detail[0] = '\0';
	/* bwrap runs carry landlock-run inside: bwrap exec'd it (started 1),
	 * but its own fatal error (exit 125, a landlock-run: line) means the
	 * command never ran. */
	if (f.runner == WARD_RUNNER_BWRAP && f.child_started == 1 &&
	    f.exit_code == 125) {
		static const char *const ll[] = {"landlock-run: ", NULL};

		line = model_find(err, len, ll,
				  "landlock-run: partial enforcement", &llen);
		if (line) {
			size_t n = llen < 511 ? llen : 511;

			want = WARD_OUTCOME_RUNNER_FAILURE;
			memcpy(want_detail, line, n);
			want_detail[n] = '\0';
			if (n && want_detail[n - 1] == '\r')
				want_detail[n - 1] = '\0';
		}
	}
	if (want == WARD_OUTCOME_OK && f.runner != WARD_RUNNER_NONE &&
	    f.child_started != 1) {
		if (custom_sigs)
			line = model_find(err, len, SIGS, NULL, &llen);
		else if (pfx[0])
			line = model_find(err, len, pfx, excl, &llen);
		if (f.child_started == 0 && failing) {
			want = WARD_OUTCOME_RUNNER_FAILURE;
			if (!line && f.term_signal)
				snprintf(want_detail, sizeof(want_detail),
					 "%s: the command never started "
					 "(%s ended by signal %d)",
					 ward_runner_name(f.runner),
					 ward_runner_name(f.runner),
					 f.term_signal);
			else if (!line)
				snprintf(want_detail, sizeof(want_detail),
					 "%s: the command never started "
					 "(exit %d)",
					 ward_runner_name(f.runner),
					 f.exit_code);
		} else if (f.child_started == -1 && line &&
			   (fatal >= 0 ? f.exit_code == fatal
				       : f.exit_code != 0)) {
			want = WARD_OUTCOME_RUNNER_FAILURE;
		} else {
			line = NULL;
		}
		if (want == WARD_OUTCOME_RUNNER_FAILURE && line) {
			size_t n = llen < 511 ? llen : 511;

			memcpy(want_detail, line, n);
			want_detail[n] = '\0';
			if (n && want_detail[n - 1] == '\r')
				want_detail[n - 1] = '\0';
		}
	}
	sig = ward_denial_signature(f.runner);
	if (want == WARD_OUTCOME_OK && f.runner != WARD_RUNNER_NONE &&
	    failing && model_contains(err, len, sig))
		want = WARD_OUTCOME_DENIED;

	/* 1 and 2. */
	if (c.outcome != want || !memchr(c.detail, '\0', sizeof(c.detail)) ||
	    strcmp(c.detail, want_detail) != 0) {
		fprintf(stderr,
			"runner %d exit %d started %d: outcome %d want %d, "
			"detail \"%s\" want \"%s\"\n",
			f.runner, f.exit_code, f.child_started, c.outcome, want,
			c.detail, want_detail);
		abort();
	}
	if (f.runner == WARD_RUNNER_NONE && c.outcome != WARD_OUTCOME_OK)
		abort();
	if (f.child_started == 1 && c.outcome == WARD_OUTCOME_RUNNER_FAILURE &&
	    !(f.runner == WARD_RUNNER_BWRAP && f.exit_code == 125))
		abort();

	/* 3: what follows the stated length is never read. */
	err2 = malloc(len + 64);
	if (!err2)
		abort();
	memcpy(err2, err, len);
	memcpy(err2 + len, "\nlandlock-run: x\nbwrap: y\nPermission denied\n",
	       44);
	f.stderr_text = err2;
	if (ward_classify(&c2, &f) != 0 || c2.outcome != c.outcome ||
	    strcmp(c2.detail, c.detail) != 0)
		abort();
	free(err2);
	free(err);
	return 0;
}
