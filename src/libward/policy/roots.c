/*
 * ward — the one writable-roots function: from a mode, a workspace, a
 * captured $TMPDIR and the access rules to the canonical writable roots.
 * A call computes them once into its facts (facts.h); this module knows
 * nothing of the policy.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libward/internal.h"
#include "util/util.h"

/*
 * Append the canonical form of @path unless it does not resolve to a
 * directory or is already present. Roots that do not exist are skipped:
 * no runner can grant them and the fence has nothing beneath them. A
 * relative path (a relative $TMPDIR) is skipped too: it would resolve
 * against the cwd of whoever asks, not of the command that uses it.
 */
static void push_root(struct ward_strv *sv, const char *path)
{
	struct stat st;
	char *real;

	if (!path || path[0] != '/')
		return;
	real = realpath(path, NULL);
	if (!real)
		return;
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
		goto out_free;
	for (size_t i = 0; i < sv->n; i++) {
		if (strcmp(sv->v[i], real) == 0)
			goto out_free;
	}
	ward_strv_push(sv, real);
out_free:
	free(real);
}

/*
 * $TMPDIR comes from the environment, not from the user's deliberate
 * configuration, and whoever starts ward (a harness, an agent's own shell)
 * sets it. So it may only add the kind of place it is meant to name: a
 * directory the caller owns, under /tmp, /var/tmp or $XDG_RUNTIME_DIR (a
 * directory the caller owns itself). Anything else — "/", the home
 * directory or an ancestor of it, /etc, a shared directory of another
 * user — is refused, and the plan's warnings name it (ward run shows them
 * before running, ward config check lists them). An `rw` rule is the way
 * to ask for another writable place on purpose.
 *
 * @why (when not NULL) gets the reason in a sentence. Returns true when
 * $TMPDIR is a writable root to add (or adds nothing new: it is /tmp).
 */
static bool tmpdir_check(const char *tmpdir, char *why, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
	char *real = NULL, *rhome = NULL, *rxdg = NULL, *r;
	const char *reason = NULL;
	struct stat st;
	bool ok = false, under = false;
	char buf[128];

	if (!tmpdir || tmpdir[0] != '/') {
		reason = "it is not an absolute path";
		goto out;
	}
	real = realpath(tmpdir, NULL);
	if (!real || stat(real, &st) != 0) {
		reason = "it does not exist";
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		reason = "it is not a directory";
		goto out;
	}
	if (strcmp(real, "/tmp") == 0) {
		ok = true; /* a root already */
		goto out;
	}
	if (st.st_uid != geteuid()) {
		snprintf(buf, sizeof(buf),
			 "it is owned by uid %u, not by the caller (uid %u)",
			 (unsigned)st.st_uid, (unsigned)geteuid());
		reason = buf;
		goto out;
	}
	for (int i = 0; i < 2 && !under; i++) {
		r = realpath(i ? "/var/tmp" : "/tmp", NULL);
		under = r && util_path_within(real, r) && strcmp(real, r) != 0;
		free(r);
	}
	if (!under && xdg && xdg[0] == '/') {
		rxdg = realpath(xdg, NULL);
		under = rxdg && stat(rxdg, &st) == 0 && S_ISDIR(st.st_mode) &&
			st.st_uid == geteuid() && util_path_within(real, rxdg);
	}
	if (!under) {
		reason = "it does not lie under /tmp, /var/tmp or "
			 "$XDG_RUNTIME_DIR";
		goto out;
	}
	if (home && home[0] == '/')
		rhome = realpath(home, NULL);
	if (rhome && util_path_within(rhome, real)) {
		reason = "it holds the home directory";
		goto out;
	}
	ok = true;
out:
	if (!ok && why)
		snprintf(why, len, "%s", reason ? reason : "?");
	free(real);
	free(rhome);
	free(rxdg);
	return ok;
}

const char *ward_roots_tmpdir_refused(char *buf, size_t len,
				      enum ward_mode mode, const char *tmpdir)
{
	char why[256];

	if (!tmpdir || mode != WARD_MODE_WORKSPACE_WRITE ||
	    tmpdir_check(tmpdir, why, sizeof(why)))
		return NULL;
	snprintf(buf, len,
		 "$TMPDIR (%s) is not a writable root: %s; commands cannot "
		 "write there (set TMPDIR to a directory you own under /tmp, "
		 "/var/tmp or $XDG_RUNTIME_DIR, or add an `rw` rule for it)",
		 tmpdir, why);
	return buf;
}

/*
 * The `rw` access rules, in load order: each is an extra writable root.
 * Only workspace-write adds them: read-only is an explicitly chosen
 * boundary that extra roots must not loosen, and danger-full-access already
 * has "/". An `rw` path that is not an existing directory is left out like
 * any other root (ward_policy_warnings() names it). Protected paths inside
 * an `rw` root stay read-only: that is the profiles' business.
 */
static void push_rw_rules(struct ward_strv *sv, const ward_rules *rules)
{
	struct ward_rule_info info;
	size_t n = ward_rules_count(rules);

	for (size_t i = 0; i < n; i++) {
		if (ward_rules_get(&info, rules, i) == 0 &&
		    info.access == WARD_ACCESS_RW && !info.is_glob)
			push_root(sv, info.pattern);
	}
}

int ward_roots_compute(char ***out, enum ward_mode mode,
		       const char *workspace, const char *tmpdir,
		       const ward_rules *rules)
{
	struct ward_strv sv = {0};

	switch (mode) {
	case WARD_MODE_READ_ONLY:
		break;
	case WARD_MODE_WORKSPACE_WRITE:
		push_root(&sv, workspace);
		push_root(&sv, "/tmp");
		if (tmpdir && tmpdir_check(tmpdir, NULL, 0))
			push_root(&sv, tmpdir);
		push_rw_rules(&sv, rules);
		break;
	case WARD_MODE_DANGER_FULL_ACCESS:
		ward_strv_push(&sv, "/");
		break;
	default:
		return ward_err(WARD_EINVAL, "unknown sandbox mode %d",
				(int)mode);
	}
	return ward_strv_finish(out, &sv);
}
