/*
 * ward — the execution policy.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts.h"
#include "libward/internal.h"
#include "protect.h"
#include "util/util.h"
#include "ward/quarantine.h"

struct ward_policy {
	enum ward_mode mode;
	char *workspace;
	char *tmpdir;
	char *session;
	char *store;		 /* the session's store (hidden), or NULL */
	char **unprotected;	 /* paths the user released, or NULL */
	char **allow_unix;	 /* unix sockets reachable, or NULL */
	const ward_rules *rules; /* a reference (ward_rules_ref) */
	bool unprotect_git;	 /* git protection dropped by the user */
	bool keep_new_repos;	 /* new repositories are the user's to keep */
	bool allow_home;	 /* a workspace holding $HOME, confirmed */
	uint64_t quota;		 /* the quarantine's (bytes; 0: default) */
	int64_t retention;	 /* its retention (seconds; 0: default) */
	/* The network (network.h); @net_default: never set, follows the
	 * mode. @allow / @deny: NULL-terminated, or NULL for none. */
	enum ward_network net;
	bool net_default;
	char **allow, **deny;
	/* An approved file operation's resolved targets: the only objects
	 * the fence lets it mutate (ward_policy_set_objects); or NULL. */
	char **objects;
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

/*
 * A copy of the NULL-terminated @paths into *@out (NULL when empty), each
 * of which must be absolute; @what names them in the error.
 */
static int dup_absolute(char ***out, char *const *paths, const char *what)
{
	char **copy = NULL;

	for (size_t i = 0; paths && paths[i]; i++) {
		if (paths[i][0] != '/')
			return ward_err(WARD_EINVAL,
					"%s: '%s' is not an absolute path",
					what, paths[i]);
	}
	if (paths && paths[0]) {
		copy = ward_strv_dup(paths);
		if (!copy)
			return ward_err(-ENOMEM, "out of memory");
	}
	*out = copy;
	return 0;
}

/* @v, or an empty vector for NULL (the getters never return NULL). */
static char *const *or_none(char *const *v)
{
	static char *const none[] = {NULL};

	return v ? v : none;
}

int ward_policy_new(ward_policy **out, enum ward_mode mode,
		    const char *workspace_root)
{
	char *real;
	int err;

	if (!workspace_root || !*workspace_root)
		return ward_err(WARD_EINVAL, "no workspace root given");
	real = realpath(workspace_root, NULL);
	if (!real) {
		err = -errno;
		return ward_err(err, "workspace root %s: %s", workspace_root,
				strerror(-err));
	}
	err = ward_policy_new_real(out, mode, real, workspace_root);
	free(real);
	return err;
}

int ward_policy_new_real(ward_policy **out, enum ward_mode mode,
			 const char *real, const char *given)
{
	ward_policy *p = NULL;
	struct stat st;
	int err;

	if ((unsigned)mode > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL, "unknown sandbox mode %d",
				(int)mode);
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode))
		return ward_err(-ENOTDIR, "workspace root %s: not a directory",
				given);
	p = calloc(1, sizeof(*p));
	if (!p || !(p->workspace = strdup(real))) {
		free(p);
		return ward_err(-ENOMEM, "out of memory");
	}
	p->mode = mode;
	p->net = ward_network_default(mode);
	p->net_default = true;
	err = set_string(&p->tmpdir, getenv("TMPDIR"));
	if (err) {
		ward_policy_free(p);
		return err;
	}
	*out = p;
	return 0;
}

void ward_policy_free(ward_policy *policy)
{
	if (!policy)
		return;
	ward_rules_unref(policy->rules);
	free(policy->workspace);
	free(policy->tmpdir);
	free(policy->session);
	free(policy->store);
	ward_strv_free(policy->unprotected);
	ward_strv_free(policy->allow);
	ward_strv_free(policy->deny);
	ward_strv_free(policy->allow_unix);
	ward_strv_free(policy->objects);
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
	ward_rules_ref(rules);
	ward_rules_unref(policy->rules);
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

int ward_policy_set_keep_new_repos(ward_policy *policy, bool keep)
{
	policy->keep_new_repos = keep;
	return 0;
}

bool ward_policy_keep_new_repos(const ward_policy *policy)
{
	return policy->keep_new_repos;
}

int ward_policy_set_allow_home_workspace(ward_policy *policy, bool allow)
{
	policy->allow_home = allow;
	return 0;
}

bool ward_policy_allow_home_workspace(const ward_policy *policy)
{
	return policy->allow_home;
}

int ward_policy_set_quarantine(ward_policy *policy, uint64_t quota_bytes,
			       int64_t retention_s)
{
	if (retention_s < 0)
		return ward_err(WARD_EINVAL,
				"quarantine: a negative retention");
	policy->quota = quota_bytes;
	policy->retention = retention_s;
	return 0;
}

uint64_t ward_policy_quarantine_quota(const ward_policy *policy)
{
	return policy->quota ? policy->quota
			     : (uint64_t)WARD_QUARANTINE_QUOTA_MB * 1024 * 1024;
}

int64_t ward_policy_quarantine_retention(const ward_policy *policy)
{
	return policy->retention
		   ? policy->retention
		   : (int64_t)WARD_QUARANTINE_RETENTION_DAYS * 86400;
}

int ward_policy_set_unprotected(ward_policy *policy, char *const *paths)
{
	char **copy;
	int err;

	if (!policy)
		return ward_err(WARD_EINVAL, "policy: NULL");
	err = dup_absolute(&copy, paths, "unprotect");
	if (err)
		return err;
	ward_strv_free(policy->unprotected);
	policy->unprotected = copy;
	return 0;
}

int ward_policy_set_allow_unix(ward_policy *policy, char *const *paths)
{
	char **copy;
	int err;

	if (!policy)
		return ward_err(WARD_EINVAL, "policy: NULL");
	err = dup_absolute(&copy, paths, "allow_unix");
	if (err)
		return err;
	ward_strv_free(policy->allow_unix);
	policy->allow_unix = copy;
	return 0;
}

char *const *ward_policy_allow_unix(const ward_policy *policy)
{
	return or_none(policy->allow_unix);
}

char *const *ward_policy_unprotected(const ward_policy *policy)
{
	return or_none(policy->unprotected);
}

int ward_policy_set_objects(ward_policy *policy, char *const *objects)
{
	char **copy = NULL;

	if (objects && !(copy = ward_strv_dup(objects)))
		return ward_err(-ENOMEM, "out of memory");
	ward_strv_free(policy->objects);
	policy->objects = copy;
	return 0;
}

char *const *ward_policy_objects(const ward_policy *policy)
{
	return policy->objects;
}

int ward_policy_set_store(ward_policy *policy, const char *store)
{
	return set_string(&policy->store, store);
}

const char *ward_policy_store(const ward_policy *policy)
{
	return policy->store;
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
	p->workspace = p->tmpdir = p->session = p->store = NULL;
	p->unprotected = NULL;
	p->allow = p->deny = NULL;
	/* A network nobody chose follows the mode. */
	if (p->net_default)
		p->net = ward_network_default(mode);
	p->allow_unix = NULL;
	p->objects = NULL;
	ward_rules_ref(p->rules);
	err = set_string(&p->workspace, base->workspace);
	if (!err)
		err = set_string(&p->tmpdir, base->tmpdir);
	if (!err)
		err = set_string(&p->session, base->session);
	if (!err)
		err = set_string(&p->store, base->store);
	if (!err && base->unprotected) {
		p->unprotected = ward_strv_dup(base->unprotected);
		if (!p->unprotected)
			err = ward_err(-ENOMEM, "out of memory");
	}
	if (!err && base->allow_unix) {
		p->allow_unix = ward_strv_dup(base->allow_unix);
		if (!p->allow_unix)
			err = ward_err(-ENOMEM, "out of memory");
	}
	if (!err && base->objects &&
	    !(p->objects = ward_strv_dup(base->objects)))
		err = ward_err(-ENOMEM, "out of memory");
	if (!err && base->allow && !(p->allow = ward_strv_dup(base->allow)))
		err = ward_err(-ENOMEM, "out of memory");
	if (!err && base->deny && !(p->deny = ward_strv_dup(base->deny)))
		err = ward_err(-ENOMEM, "out of memory");
	if (err) {
		ward_policy_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int ward_policy_set_network(ward_policy *policy, enum ward_network network,
			    char *const *allow, char *const *deny)
{
	char **a = NULL, **d = NULL;
	int err;

	if (!policy || (unsigned)network > WARD_NETWORK_ON)
		return ward_err(WARD_EINVAL, "policy: bad network setting");
	if (network == WARD_NETWORK_ALLOWLIST && (!allow || !allow[0]))
		return ward_err(WARD_EINVAL,
				"a network allowlist needs at least one "
				"allowed domain");
	for (size_t i = 0; allow && allow[i]; i++) {
		err = ward_network_pattern_check(allow[i]);
		if (err)
			return ward_err(err, "allowed domain \"%s\": %s",
					allow[i], ward_error_last());
	}
	for (size_t i = 0; deny && deny[i]; i++) {
		err = ward_network_pattern_check(deny[i]);
		if (err)
			return ward_err(err, "denied domain \"%s\": %s",
					deny[i], ward_error_last());
	}
	if ((allow && allow[0] && !(a = ward_strv_dup(allow))) ||
	    (deny && deny[0] && !(d = ward_strv_dup(deny)))) {
		ward_strv_free(a);
		return ward_err(-ENOMEM, "out of memory");
	}
	ward_strv_free(policy->allow);
	ward_strv_free(policy->deny);
	policy->allow = a;
	policy->deny = d;
	policy->net = network;
	policy->net_default = false;
	return 0;
}

enum ward_network ward_policy_network(const ward_policy *policy)
{
	return policy->net;
}

bool ward_policy_network_default(const ward_policy *policy)
{
	return policy->net_default;
}

char *const *ward_policy_allow_domains(const ward_policy *policy)
{
	return or_none(policy->allow);
}

char *const *ward_policy_deny_domains(const ward_policy *policy)
{
	return or_none(policy->deny);
}

int ward_policy_with_network(ward_policy **out, const ward_policy *base,
			     enum ward_network network, char *const *add)
{
	struct ward_strv sv = {0};
	ward_policy *p = NULL;
	char **allow = NULL;
	int err;

	err = ward_policy_with_mode(&p, base, base->mode);
	if (err)
		return err;
	ward_strv_push_all(&sv, ward_policy_allow_domains(base));
	for (size_t i = 0; add && add[i]; i++) {
		bool have = false;

		for (size_t j = 0; j < sv.n && !have; j++)
			have = strcmp(sv.v[j], add[i]) == 0;
		if (!have)
			ward_strv_push(&sv, add[i]);
	}
	err = ward_strv_finish(&allow, &sv);
	if (!err)
		err = ward_policy_set_network(p, network, allow,
					      ward_policy_deny_domains(base));
	ward_strv_free(allow);
	if (err) {
		ward_policy_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int ward_roots_writable(char ***out, const ward_policy *policy)
{
	if (!out || !policy)
		return ward_err(WARD_EINVAL,
				"writable roots: missing argument");
	return ward_roots_compute(out, policy->mode, policy->workspace,
				  policy->tmpdir, policy->rules);
}

enum ward_access ward_policy_rule_access(const ward_policy *policy,
					 const struct ward_facts *f,
					 const char *path)
{
	const struct ward_rule_alias *a;
	enum ward_access best, got;
	size_t n;

	if (!policy->rules)
		return WARD_ACCESS_DEFAULT;
	best = ward_rules_match(policy->rules, path);
	if (best == WARD_ACCESS_NONE)
		return best;
	/* A failure to resolve the rules must not open anything. */
	if (!f || !f->have_aliases)
		return WARD_ACCESS_NONE;
	a = f->aliases;
	n = f->naliases;
	for (size_t i = 0; i < n; i++) {
		if (!util_path_within(path, a[i].canon))
			continue;
		got = ward_rules_match_key(policy->rules, a[i].key, a[i].canon,
					   path);
		if (got > best)
			best = got;
		if (best == WARD_ACCESS_NONE)
			break;
	}
	return best;
}
