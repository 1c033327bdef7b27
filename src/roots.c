/*
 * ward — the one writable-roots function.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

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
 * configuration, so it may not widen the sandbox over what it is meant to
 * protect: a $TMPDIR of "/", of the home directory or of any ancestor of it
 * would make the whole home (dotfiles, ward's own config and session store)
 * writable. Such a $TMPDIR is left out; an `rw` rule is the way to ask for
 * that on purpose.
 */
static bool tmpdir_acceptable(const char *tmpdir)
{
	const char *home = getenv("HOME");
	char *real_tmp = NULL, *real_home = NULL;
	bool ok = false;
	size_t n;

	if (!tmpdir || tmpdir[0] != '/')
		return false;
	real_tmp = realpath(tmpdir, NULL);
	if (!real_tmp)
		return false;
	if (strcmp(real_tmp, "/") == 0)
		goto out_free;
	ok = true;
	if (home && home[0] == '/')
		real_home = realpath(home, NULL);
	if (real_home) {
		n = strlen(real_tmp);
		if (strncmp(real_home, real_tmp, n) == 0 &&
		    (real_home[n] == '\0' || real_home[n] == '/'))
			ok = false;
	}
	free(real_home);
out_free:
	free(real_tmp);
	return ok;
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

int ward_roots_writable(char ***out, const ward_policy *policy)
{
	char *const *roots;
	char **copy;
	int err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL,
				"writable roots: missing argument");
	err = ward_policy_roots(&roots, policy);
	if (err)
		return err;
	copy = ward_strv_dup(roots);
	if (!copy)
		return ward_err(-ENOMEM, "out of memory");
	*out = copy;
	return 0;
}

int ward_roots_compute(char ***out, const ward_policy *policy)
{
	struct ward_strv sv = {0};

	switch (ward_policy_mode(policy)) {
	case WARD_MODE_READ_ONLY:
		break;
	case WARD_MODE_WORKSPACE_WRITE:
		push_root(&sv, ward_policy_workspace(policy));
		push_root(&sv, "/tmp");
		if (tmpdir_acceptable(ward_policy_tmpdir(policy)))
			push_root(&sv, ward_policy_tmpdir(policy));
		push_rw_rules(&sv, ward_policy_rules(policy));
		break;
	case WARD_MODE_DANGER_FULL_ACCESS:
		ward_strv_push(&sv, "/");
		break;
	default:
		return ward_err(WARD_EINVAL, "unknown sandbox mode %d",
				(int)ward_policy_mode(policy));
	}
	return ward_strv_finish(out, &sv);
}
