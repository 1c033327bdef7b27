/*
 * ward — classification of a finished confined run.
 *
 * Runner failure first (the confinement failed, the command never ran),
 * then denial (the command ran and the kernel refused a file operation).
 * Each runner has its own dialect (its row's classify part,
 * runners/runners.h); dialects are never merged, because a union would
 * claim denials a runner never produces. See docs/RUNNERS.md.
 */
#include <stdio.h>
#include <string.h>

#include "libward/internal.h"
#include "libward/runners/runners.h"

/* A view of stderr: not NUL-terminated, may be NULL when empty. */
struct text {
	const char *p;
	size_t len;
};

static char ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/*
 * True when @needle occurs in @hay, ignoring ASCII case: tools spell the
 * same errno message differently (bash "Read-only file system", Go and
 * Node "read-only file system"), and the message, not its case, is the
 * runner's signature.
 */
static bool contains_nocase(struct text hay, const char *needle)
{
	size_t n = strlen(needle);

	if (n == 0 || hay.len < n)
		return false;
	for (size_t i = 0; i + n <= hay.len; i++) {
		size_t j = 0;

		while (j < n &&
		       ascii_lower(hay.p[i + j]) == ascii_lower(needle[j]))
			j++;
		if (j == n)
			return true;
	}
	return false;
}

static bool starts_with(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(line, prefix, n) == 0;
}

/*
 * Find the first line of @t that starts with @prefix and not with
 * @exclude (NULL: nothing excluded). Sets *line and *len (without the
 * newline) and returns true when one is found.
 */
static bool find_line(struct text t, const char *prefix, const char *exclude,
		      const char **line, size_t *len)
{
	size_t pos = 0;

	while (pos < t.len) {
		const char *start = t.p + pos;
		const char *nl = memchr(start, '\n', t.len - pos);
		size_t l = nl ? (size_t)(nl - start) : t.len - pos;

		if (starts_with(start, l, prefix) &&
		    !(exclude && starts_with(start, l, exclude))) {
			*line = start;
			*len = l;
			return true;
		}
		pos += l + 1;
	}
	return false;
}

static void set_detail(struct ward_classification *out, const char *line,
		       size_t len)
{
	if (len >= sizeof(out->detail))
		len = sizeof(out->detail) - 1;
	memcpy(out->detail, line, len);
	out->detail[len] = '\0';
	/* A CRLF-terminated line keeps no stray carriage return. */
	if (len > 0 && out->detail[len - 1] == '\r')
		out->detail[len - 1] = '\0';
}

/*
 * Runner failure. An exact channel wins over text: child_started == 1
 * means the command was exec'd, so nothing the runner printed can make it
 * a runner failure; child_started == 0 with a failing status means the
 * command never ran. Only when the channel is unknown (-1) does the text
 * dialect decide. Runner none confines nothing, so nothing can fail.
 */
static bool runner_failed(struct ward_classification *out,
			  const struct ward_run_facts *f, struct text err)
{
	const struct ward_runner_ops *ops = ward_runner_ops(f->runner);
	const char *line = NULL;
	size_t len = 0;
	int fatal_exit = ops->fail_exit;
	bool found = false;
	bool failing = f->exit_code != 0 || f->term_signal != 0;

	/* bwrap runs carry landlock-run inside (the Landlock layer): bwrap
	 * exec'd it, so child_started is 1, but its own fatal error means
	 * the command never ran. */
	if (ops->inner_layer && f->child_started == 1 &&
	    f->exit_code == WARD_LAUNCHER_FAILED &&
	    find_line(err, WARD_LAUNCHER_PREFIX, WARD_LAUNCHER_INFO, &line,
		      &len)) {
		set_detail(out, line, len);
		return true;
	}
	if (ops->unconfined || f->child_started == 1)
		return false;
	if (ops->operator_signatures && f->failure_signatures &&
	    f->failure_signatures[0]) {
		/* The operator said how their runner reports its own failure;
		 * that replaces the assumed bwrap dialect. */
		for (size_t i = 0; !found && f->failure_signatures[i]; i++)
			found = find_line(err, f->failure_signatures[i], NULL,
					  &line, &len);
	} else if (ops->fail_prefix) {
		found = find_line(err, ops->fail_prefix, ops->fail_info, &line,
				  &len);
	}
	if (f->child_started == 0) {
		if (!failing)
			return false;
		if (found) {
			set_detail(out, line, len);
		} else if (f->term_signal) {
			snprintf(out->detail, sizeof(out->detail),
				 "%s: the command never started (%s ended by "
				 "signal %d)",
				 ward_runner_name(f->runner),
				 ward_runner_name(f->runner), f->term_signal);
		} else {
			snprintf(out->detail, sizeof(out->detail),
				 "%s: the command never started (exit %d)",
				 ward_runner_name(f->runner), f->exit_code);
		}
		return true;
	}
	if (!found)
		return false;
	if (fatal_exit >= 0 ? f->exit_code != fatal_exit : f->exit_code == 0)
		return false;
	set_detail(out, line, len);
	return true;
}

bool ward_text_has_signature(const char *text, size_t len,
			     const char *signature)
{
	struct text t = {text, text ? len : 0};

	return signature[0] && contains_nocase(t, signature);
}

const char *ward_denial_signature(enum ward_runner runner)
{
	return ward_runner_ops(runner)->denial;
}

const char *const *ward_network_signatures(enum ward_runner runner)
{
	return ward_runner_ops(runner)->net_signatures;
}

static bool has_any(struct text t, const char *const *sigs)
{
	for (size_t i = 0; sigs[i]; i++)
		if (contains_nocase(t, sigs[i]))
			return true;
	return false;
}

/*
 * A file denial: the runner's signature somewhere in @err. Under Landlock
 * with the network off, its filter refuses sockets with the same EACCES,
 * so a line that is one of its network signatures does not count.
 */
static bool file_denied(const struct ward_run_facts *f, struct text err)
{
	const struct ward_runner_ops *ops = ward_runner_ops(f->runner);
	const char *sig = ops->denial;
	size_t pos = 0;

	if (!(ops->net_like_denial && f->network_off))
		return contains_nocase(err, sig);
	while (pos < err.len) {
		const char *start = err.p + pos;
		const char *nl = memchr(start, '\n', err.len - pos);
		size_t l = nl ? (size_t)(nl - start) : err.len - pos;
		struct text line = {start, l};

		if (contains_nocase(line, sig) &&
		    !has_any(line, ops->net_signatures))
			return true;
		pos += l + 1;
	}
	return false;
}

/* The network is the reason (see ward_classification.network_denied). */
static bool network_denied(const struct ward_run_facts *f, struct text err)
{
	if (!f->network_off || (f->exit_code == 0 && f->term_signal == 0))
		return false;
	switch (f->net) {
	case WARD_NET_FACT_REFUSED:
		return true;
	case WARD_NET_FACT_NONE:
		return false;
	case WARD_NET_FACT_UNKNOWN:
		break;
	}
	return has_any(err, ward_network_signatures(f->runner));
}

int ward_classify(struct ward_classification *out,
		  const struct ward_run_facts *facts)
{
	struct text err;

	if (!out || !facts)
		return ward_err(WARD_EINVAL, "classify: missing argument");
	err.p = facts->stderr_text;
	err.len = facts->stderr_text ? facts->stderr_len : 0;
	out->outcome = WARD_OUTCOME_OK;
	out->detail[0] = '\0';
	out->network_denied = false;
	if (runner_failed(out, facts, err)) {
		out->outcome = WARD_OUTCOME_RUNNER_FAILURE;
		return 0;
	}
	/*
	 * A denial needs a failing run: a command that printed the signature
	 * and still succeeded was not stopped by anything.
	 */
	if (!ward_runner_ops(facts->runner)->unconfined &&
	    (facts->exit_code != 0 || facts->term_signal != 0) &&
	    file_denied(facts, err))
		out->outcome = WARD_OUTCOME_DENIED;
	out->network_denied = network_denied(facts, err);
	return 0;
}
