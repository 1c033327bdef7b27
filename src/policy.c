/*
 * ward — the execution policy.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

struct ward_policy {
	enum ward_mode mode;
	char *workspace;
	char *tmpdir;
	char *session;
	const ward_rules *rules; /* borrowed */
	bool unprotect_git;	 /* git protection dropped by the user */
};

/* Replace *slot with a copy of @value (NULL clears). */
static int set_string(char **slot, const char *value)
{
	char *copy = NULL;

	if (value) {
		copy = strdup(value);
		if (!copy)
			return ward_err(-ENOMEM, "out of memory");
	}
	free(*slot);
	*slot = copy;
	return 0;
}

int ward_policy_new(ward_policy **out, enum ward_mode mode,
		    const char *workspace_root)
{
	ward_policy *p = NULL;
	struct stat st;
	char *real = NULL;
	int err;

	if ((unsigned)mode > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL, "unknown sandbox mode %d",
				(int)mode);
	if (!workspace_root || !*workspace_root)
		return ward_err(WARD_EINVAL, "no workspace root given");
	real = realpath(workspace_root, NULL);
	if (!real) {
		err = -errno;
		return ward_err(err, "workspace root %s: %s", workspace_root,
				strerror(-err));
	}
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		err = ward_err(-ENOTDIR, "workspace root %s: not a directory",
			       workspace_root);
		goto out_free_real;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_free_real;
	}
	p->mode = mode;
	p->workspace = real;
	err = set_string(&p->tmpdir, getenv("TMPDIR"));
	if (err) {
		ward_policy_free(p);
		return err;
	}
	*out = p;
	return 0;

out_free_real:
	free(real);
	return err;
}

void ward_policy_free(ward_policy *policy)
{
	if (!policy)
		return;
	free(policy->workspace);
	free(policy->tmpdir);
	free(policy->session);
	free(policy);
}

int ward_policy_set_tmpdir(ward_policy *policy, const char *tmpdir)
{
	return set_string(&policy->tmpdir, tmpdir && *tmpdir ? tmpdir : NULL);
}

int ward_policy_set_session(ward_policy *policy, const char *session_id)
{
	return set_string(&policy->session, session_id);
}

enum ward_mode ward_policy_mode(const ward_policy *policy)
{
	return policy->mode;
}

const char *ward_policy_workspace(const ward_policy *policy)
{
	return policy->workspace;
}

const char *ward_policy_tmpdir(const ward_policy *policy)
{
	return policy->tmpdir;
}

const char *ward_policy_session(const ward_policy *policy)
{
	return policy->session;
}

int ward_policy_set_rules(ward_policy *policy, const ward_rules *rules)
{
	policy->rules = rules;
	return 0;
}

const ward_rules *ward_policy_rules(const ward_policy *policy)
{
	return policy->rules;
}

int ward_policy_set_protect_git(ward_policy *policy, bool protect)
{
	policy->unprotect_git = !protect;
	return 0;
}

bool ward_policy_protect_git(const ward_policy *policy)
{
	return !policy->unprotect_git;
}

int ward_policy_with_mode(ward_policy **out, const ward_policy *base,
			  enum ward_mode mode)
{
	ward_policy *p;
	int err;

	if ((unsigned)mode > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL, "unknown sandbox mode %d",
				(int)mode);
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	/* Copy every field, then replace what differs: a field added to the
	 * struct later is carried over without anyone remembering to. */
	*p = *base;
	p->mode = mode;
	p->workspace = p->tmpdir = p->session = NULL;
	err = set_string(&p->workspace, base->workspace);
	if (!err)
		err = set_string(&p->tmpdir, base->tmpdir);
	if (!err)
		err = set_string(&p->session, base->session);
	if (err) {
		ward_policy_free(p);
		return err;
	}
	*out = p;
	return 0;
}
