/*
 * ward — classification of a finished confined run.
 *
 * Runner failure first (the confinement failed, the command never ran),
 * then denial (the command ran and the kernel refused a file operation).
 * Each runner has its own dialect; dialects are never merged, because a
 * union would claim denials a runner never produces. See docs/RUNNERS.md.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define LANDLOCK_PREFIX "landlock-run: "
#define LANDLOCK_INFO	"landlock-run: partial enforcement"
#define BWRAP_PREFIX	"bwrap: "
#define SEATBELT_PREFIX "sandbox-exec: "

/* The exit status of landlock-run's own fatal errors. */
#define LAUNCHER_FAILED 125

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
 * The runner's text dialect for its own fatal errors: the line prefix, the
 * info line that is not fatal, and the exit status the runner uses for its
 * own failures (-1: any non-zero status).
 */
static bool runner_dialect(enum ward_runner runner, const char **prefix,
			   const char **exclude, int *exit_code)
{
	*exclude = NULL;
	*exit_code = -1;
	switch (runner) {
	case WARD_RUNNER_LANDLOCK:
		*prefix = LANDLOCK_PREFIX;
		*exclude = LANDLOCK_INFO;
		*exit_code = LAUNCHER_FAILED;
		return true;
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		/* A runnerCommand is asserted to be bwrap-compatible. */
		*prefix = BWRAP_PREFIX;
		return true;
	case WARD_RUNNER_SEATBELT:
		*prefix = SEATBELT_PREFIX;
		return true;
	case WARD_RUNNER_NONE:
	case WARD_RUNNER_WINDOWS_ACL:
		break;
	}
	*prefix = NULL;
	return false;
}

/*
 * Runner failure. An exact channel wins over text: child_started == 1
 * means the command was exec'd, so nothing the runner printed can make it
 * a runner failure; child_started == 0 with a failing status means the
 * command never ran. Only when the channel is unknown (-1) does the text
 * dialect decide. Runner NONE confines nothing, so nothing can fail.
 */
static bool runner_failed(struct ward_classification *out,
			  const struct ward_run_facts *f, struct text err)
{
	const char *prefix, *exclude, *line = NULL;
	size_t len = 0;
	int fatal_exit;
	bool dialect, found = false;
	bool failing = f->exit_code != 0 || f->term_signal != 0;

	/* bwrap runs carry landlock-run inside (the Landlock layer): bwrap
	 * exec'd it, so child_started is 1, but its own fatal error means
	 * the command never ran. */
	if (f->runner == WARD_RUNNER_BWRAP && f->child_started == 1 &&
	    f->exit_code == LAUNCHER_FAILED &&
	    find_line(err, LANDLOCK_PREFIX, LANDLOCK_INFO, &line, &len)) {
		set_detail(out, line, len);
		return true;
	}
	if (f->runner == WARD_RUNNER_NONE || f->child_started == 1)
		return false;
	dialect = runner_dialect(f->runner, &prefix, &exclude, &fatal_exit);
	if (f->runner == WARD_RUNNER_CUSTOM && f->failure_signatures &&
	    f->failure_signatures[0]) {
		/* The operator said how their runner reports its own failure;
		 * that replaces the assumed bwrap dialect. */
		for (size_t i = 0; !found && f->failure_signatures[i]; i++)
			found = find_line(err, f->failure_signatures[i], NULL,
					  &line, &len);
	} else if (dialect) {
		found = find_line(err, prefix, exclude, &line, &len);
	}
	if (f->child_started == 0) {
		if (!failing)
			return false;
		if (found) {
			set_detail(out, line, len);
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
	switch (runner) {
	case WARD_RUNNER_LANDLOCK:
		return "Permission denied";
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		return "Read-only file system";
	case WARD_RUNNER_SEATBELT:
		return "Operation not permitted";
	case WARD_RUNNER_NONE:
	case WARD_RUNNER_WINDOWS_ACL:
		break;
	}
	return "";
}

/*
 * What clients print when the network refuses them, per runner (never a
 * union: bwrap's namespace says ENETUNREACH where Landlock's filter says
 * EACCES). Name lookups fail the same way under both (no socket reaches
 * a resolver).
 */
#define NET_LOOKUP                                                             \
	"Could not resolve host",		    /* curl, git (libcurl) */  \
	    "Temporary failure in name resolution", /* glibc: python, wget */  \
	    "unable to resolve host address",	    /* wget */                 \
	    "EAI_AGAIN",			    /* node, npm */            \
	    "Couldn't connect to server",	    /* curl, git */            \
	    "Failed to establish a new connection"  /* pip (urllib3) */

static const char *const bwrap_net[] = {
    NET_LOOKUP,
    "Network is unreachable", /* a connect to an address: ENETUNREACH */
    "ENETUNREACH",	      /* node */
    NULL,
};

static const char *const landlock_net[] = {
    NET_LOOKUP,
    "connect EACCES",		  /* node: the socket was refused */
    "failed: Permission denied.", /* wget: "Connecting to …" */
    NULL,
};

static const char *const no_net[] = {NULL};

const char *const *ward_network_signatures(enum ward_runner runner)
{
	switch (runner) {
	case WARD_RUNNER_LANDLOCK:
		return landlock_net;
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		return bwrap_net;
	case WARD_RUNNER_SEATBELT:
	case WARD_RUNNER_NONE:
	case WARD_RUNNER_WINDOWS_ACL:
		break;
	}
	return no_net;
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
	const char *sig = ward_denial_signature(f->runner);
	size_t pos = 0;

	if (!(f->runner == WARD_RUNNER_LANDLOCK && f->network_off))
		return contains_nocase(err, sig);
	while (pos < err.len) {
		const char *start = err.p + pos;
		const char *nl = memchr(start, '\n', err.len - pos);
		size_t l = nl ? (size_t)(nl - start) : err.len - pos;
		struct text line = {start, l};

		if (contains_nocase(line, sig) && !has_any(line, landlock_net))
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
	if (facts->runner != WARD_RUNNER_NONE &&
	    (facts->exit_code != 0 || facts->term_signal != 0) &&
	    file_denied(facts, err))
		out->outcome = WARD_OUTCOME_DENIED;
	out->network_denied = network_denied(facts, err);
	return 0;
}
