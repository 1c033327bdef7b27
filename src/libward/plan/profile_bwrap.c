/*
 * ward — the bubblewrap profile: a pure function from a policy to an argv.
 *
 * The security reasoning behind every option is in docs/RUNNERS.md; the
 * comments here say why the options come in this order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libward/internal.h"
#include "translate_internal.h"
#include "util/util.h"

/* Mount points the profile itself creates over the read-only root. */
#define PRIVATE_TMP "/tmp"

/* The number of components of an absolute canonical path ("/" has 0). */
static size_t path_depth(const char *path)
{
	size_t depth = 0;

	for (const char *p = path; *p; p++) {
		if (*p == '/' && p[1] != '\0')
			depth++;
	}
	return depth;
}

/*
 * Sort @roots so that a parent always precedes its children (fewer
 * components first, otherwise the order of ward_roots_writable). bwrap
 * applies its operations in order, so a --bind of /tmp after a --bind of
 * /tmp/ws would hide the latter mount; sorting parents first means a later
 * --bind is never shadowed. Insertion sort: stable, and the list is short.
 */
static void sort_parents_first(char **roots)
{
	size_t n = ward_strv_len(roots);

	for (size_t i = 1; i < n; i++) {
		char *r = roots[i];
		size_t d = path_depth(r);
		size_t j = i;

		while (j > 0 && path_depth(roots[j - 1]) > d) {
			roots[j] = roots[j - 1];
			j--;
		}
		roots[j] = r;
	}
}

/*
 * The captured $TMPDIR when it names a directory inside the private tmpfs
 * /tmp, lexically clean (absolute, no "." or ".." or empty components; a
 * trailing slash is dropped), as a malloc'd string; NULL otherwise (or on
 * ENOMEM, which only costs the convenience of a private $TMPDIR).
 */
static char *private_tmpdir(const ward_policy *policy)
{
	const char *tmpdir = ward_policy_tmpdir(policy);
	char *copy;
	size_t len;

	if (!tmpdir || strncmp(tmpdir, PRIVATE_TMP "/", 5) != 0)
		return NULL;
	copy = strdup(tmpdir);
	if (!copy)
		return NULL;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	if (strstr(copy, "//") || strstr(copy, "/./") || strstr(copy, "/../") ||
	    strcmp(copy, PRIVATE_TMP) == 0 ||
	    (len >= 2 && strcmp(copy + len - 2, "/.") == 0) ||
	    (len >= 3 && strcmp(copy + len - 3, "/..") == 0)) {
		free(copy);
		return NULL;
	}
	return copy;
}

/*
 * In read-only the private tmpfs on /tmp hides whatever the host has there.
 * Keep the workspace visible (read-only) when it lives under /tmp, since
 * read-only is about writes, not visibility; and give a $TMPDIR under /tmp a
 * private directory of its own, so it is exactly as usable as /tmp itself
 * (writable, private, gone when the sandbox exits). Neither touches the host.
 */
static void push_read_only_tmp(struct ward_strv *sv, const ward_policy *policy)
{
	const char *ws = ward_policy_workspace(policy);
	bool ws_hidden = util_path_within(ws, PRIVATE_TMP);
	char *tmpdir = private_tmpdir(policy);

	/* Inside a read-only workspace the directory cannot be created. */
	if (tmpdir && !(ws_hidden && util_path_within(tmpdir, ws))) {
		ward_strv_push(sv, "--dir");
		ward_strv_push(sv, tmpdir);
	}
	free(tmpdir);
	if (ws_hidden) {
		ward_strv_push(sv, "--ro-bind");
		ward_strv_push(sv, ws);
		ward_strv_push(sv, ws);
	}
}

static void push_bind(struct ward_strv *sv, const char *root)
{
	ward_strv_push(sv, "--bind");
	ward_strv_push(sv, root);
	ward_strv_push(sv, root);
}

int ward_bwrap_profile_x(char ***out, const ward_policy *policy,
			 const struct ward_xlate *x, const char *bwrap_path,
			 int status_fd, char *const argv[], bool caller_bound)
{
	static const char *const hardening[] = {
	    "--unshare-user",
	    "--unshare-pid",
	    "--unshare-ipc",
	    "--unshare-uts",
	    "--unshare-cgroup-try",
	    "--cap-drop",
	    "ALL",
	    "--setenv",
	    "WARD_SANDBOX",
	    "bwrap",
	    NULL,
	};
	struct ward_strv sv = {0};
	char *const *all = NULL;
	char **roots = NULL;
	char fd_text[16];
	enum ward_mode mode;

	if (!out || !policy || !x || !bwrap_path || !*bwrap_path)
		return ward_err(WARD_EINVAL, "bwrap profile: missing argument");
	mode = ward_policy_mode(policy);
	if (mode != WARD_MODE_READ_ONLY && mode != WARD_MODE_WORKSPACE_WRITE)
		return ward_err(WARD_EINVAL,
				"bwrap profile: %s is not confined, there is "
				"no profile for it",
				ward_mode_name(mode));
	all = ward_xlate_roots(x);
	roots = ward_strv_dup(all);
	if (!roots)
		return ward_err(-ENOMEM, "out of memory");
	sort_parents_first(roots);

	ward_strv_push(&sv, bwrap_path);
#ifdef WARD_TEST_WEAK_BWRAP
	/*
	 * Test builds only (tests/e2e/weak_bwrap.bats): a deliberately
	 * broken profile with the whole host writable (and, below, the host
	 * sysctls), to show that the
	 * Landlock layer inside still holds every must-vector.
	 */
	ward_strv_push(&sv, "--bind");
#else
	ward_strv_push(&sv, "--ro-bind");
#endif
	ward_strv_push(&sv, "/");
	ward_strv_push(&sv, "/");
	/*
	 * A writable "/" (a workspace of "/") goes before the private /dev,
	 * /proc and /tmp, or its recursive bind would shadow all three.
	 */
	for (size_t i = 0; roots[i]; i++) {
		if (strcmp(roots[i], "/") == 0)
			push_bind(&sv, roots[i]);
	}
	ward_strv_push(&sv, "--dev");
	ward_strv_push(&sv, "/dev");
#ifdef WARD_TEST_WEAK_BWRAP
	/* ... and /proc/sys (core_pattern) left writable. */
	ward_strv_push(&sv, "--proc");
	ward_strv_push(&sv, "/proc");
#else
	ward_bwrap_push_proc(&sv);
#endif
	ward_strv_push(&sv, "--tmpfs");
	ward_strv_push(&sv, PRIVATE_TMP);
	if (mode == WARD_MODE_READ_ONLY)
		push_read_only_tmp(&sv, policy);
	/*
	 * After the tmpfs: a writable root of /tmp (or beneath it) must be
	 * mounted over the private tmpfs, not under it.
	 */
	for (size_t i = 0; roots[i]; i++) {
		if (strcmp(roots[i], "/") != 0)
			push_bind(&sv, roots[i]);
	}
	/*
	 * After every writable bind, so that they win: pins, then `r-` and
	 * protected paths read-only, then `--` hidden (see translate_bwrap.c).
	 */
	ward_xlate_bwrap_push(&sv, x);
	/*
	 * bwrap's own binding to its caller has a window: its sandbox
	 * process arms its parent-death signal only after setup, and a
	 * caller killed before bwrap let it go on left it blocked in its
	 * namespaces. With @caller_bound the Landlock layer inside watches
	 * the caller instead (its report pipe: docs/RUNNERS.md), and bwrap
	 * must then not die before its sandbox process is released.
	 */
	ward_strv_push(&sv, "--new-session");
	if (!caller_bound)
		ward_strv_push(&sv, "--die-with-parent");
	ward_strv_push_all(&sv, (char *const *)hardening);
	/*
	 * No network but the sandbox's own loopback, unless it is on: the
	 * host's interfaces and its abstract unix sockets are out of reach.
	 * An allowlist reaches ward's proxy through ward-bridge (plan.c).
	 */
	if (ward_policy_network(policy) != WARD_NETWORK_ON)
		ward_strv_push(&sv, "--unshare-net");
	if (status_fd >= 0) {
		snprintf(fd_text, sizeof(fd_text), "%d", status_fd);
		ward_strv_push(&sv, "--json-status-fd");
		ward_strv_push(&sv, fd_text);
	}
	if (argv) {
		ward_strv_push(&sv, "--");
		ward_strv_push_all(&sv, argv);
	}
	ward_strv_free(roots);
	return ward_strv_finish(out, &sv);
}
