/*
 * ward — the facts of a policy, computed once per call (facts.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "libward/internal.h"
#include "listings.h"

/*
 * What the plan will read of the directories the walk for repositories
 * reads: 2 for an `r-` or `--` glob (the glob walk reads any of them),
 * 1 for WARD_LISTINGS_LITERALS or more literal `r-` and `--` rules (it
 * lists their parents: plan/translate_targets.c), 0 for neither.
 */
static int reads_listings(const ward_policy *policy)
{
	const ward_rules *rules = ward_policy_rules(policy);
	struct ward_rule_info info;
	size_t literal = 0;

	for (size_t i = 0; i < ward_rules_count(rules); i++) {
		if (ward_rules_get(&info, rules, i) != 0 ||
		    info.access == WARD_ACCESS_RW)
			continue;
		if (info.is_glob)
			return 2;
		literal++;
	}
	return literal >= WARD_LISTINGS_LITERALS;
}

/* Keep only the parents of the literal rules in @keep (their spelling:
 * absolute rules are canonical but for a link on the way, and a parent
 * that is not kept is read by the plan itself). 0 or -ENOMEM. */
static int keep_parents(struct ward_listings *keep, const ward_policy *policy)
{
	const ward_rules *rules = ward_policy_rules(policy);
	struct ward_rule_info info;
	struct ward_strv sv = {0};
	char **v = NULL;
	size_t n;

	for (size_t i = 0; i < ward_rules_count(rules); i++) {
		const char *slash;

		if (ward_rules_get(&info, rules, i) != 0 ||
		    info.access == WARD_ACCESS_RW || info.is_glob ||
		    info.pattern[0] != '/' ||
		    !(slash = strrchr(info.pattern, '/')))
			continue;
		if (sv.n &&
		    strlen(sv.v[sv.n - 1]) == (size_t)(slash - info.pattern) &&
		    !strncmp(sv.v[sv.n - 1], info.pattern,
			     (size_t)(slash - info.pattern)))
			continue; /* a run of one parent: once */
		{
			char *d = strndup(info.pattern,
					  slash == info.pattern
					      ? 1
					      : (size_t)(slash - info.pattern));

			ward_strv_push(&sv, d ? d : "");
			sv.oom |= !d;
			free(d);
		}
	}
	n = sv.n;
	if (ward_strv_finish(&v, &sv) != 0)
		return -ENOMEM;
	return ward_listings_only(keep, v, n);
}

int ward_facts_new(struct ward_facts **out, const ward_policy *policy,
		   unsigned what)
{
	struct ward_listings *keep = NULL;
	struct ward_facts *f;
	int err, reads = 0;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "facts: missing argument");
	f = calloc(1, sizeof(*f));
	if (!f)
		return ward_err(-ENOMEM, "out of memory");
	atomic_init(&f->refs, 1);
	atomic_init(&f->listings, NULL);
	err = ward_roots_writable(&f->roots, policy);
	if (!err && (what & WARD_FACTS_LISTINGS) &&
	    !(what & WARD_FACTS_READS) && (reads = reads_listings(policy)) &&
	    (ward_listings_new(&keep) != 0 ||
	     (reads == 1 && keep_parents(keep, policy) != 0)))
		err = ward_err(-ENOMEM, "out of memory");
	if (!err)
		err = ward_protect_compute(&f->prot, &f->nprot, &f->refused,
					   &f->notes, policy, f->roots,
					   !(what & WARD_FACTS_READS), keep);
	/* A list that could not be made plans nothing: nothing to keep. */
	if (!err && !f->refused) {
		atomic_store(&f->listings, keep);
		keep = NULL;
	}
	ward_listings_free(keep);
	if (!err && (what & WARD_FACTS_ALIASES)) {
		err = ward_rule_aliases_compute(&f->aliases, &f->naliases,
						ward_policy_rules(policy));
		f->have_aliases = err == 0;
	}
	if (err) {
		ward_facts_unref(f);
		return err;
	}
	*out = f;
	return 0;
}

struct ward_facts *ward_facts_ref(struct ward_facts *f)
{
	if (f)
		atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	return f;
}

void ward_facts_unref(struct ward_facts *f)
{
	if (!f ||
	    atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	ward_strv_free(f->roots);
	free(f->prot);
	free(f->refused);
	ward_strv_free(f->notes);
	ward_rule_aliases_free(f->aliases, f->naliases);
	ward_listings_free(atomic_load(&f->listings));
	free(f);
}

struct ward_listings *ward_facts_take_listings(struct ward_facts *f)
{
	return f ? atomic_exchange(&f->listings, NULL) : NULL;
}

/* --- the protected paths of a policy alone (protect.h) ----------------- */

int ward_protect_list(struct ward_protected **out, size_t *out_len,
		      const ward_policy *policy)
{
	struct ward_protected *v = NULL;
	char **roots = NULL, *refused = NULL, **notes = NULL;
	size_t n = 0;
	int err;

	err = ward_roots_writable(&roots, policy);
	if (!err)
		err = ward_protect_compute(&v, &n, &refused, &notes, policy,
					   roots, true, NULL);
	ward_strv_free(roots);
	ward_strv_free(notes);
	if (!err && refused)
		err = ward_err(WARD_EINVAL, "%s", refused);
	free(refused);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*out_len = n;
	return 0;
}

int ward_protect_notes(char ***out, const ward_policy *policy, bool links)
{
	struct ward_facts *f = NULL;
	int err;

	err = ward_facts_new(&f, policy, 0);
	if (!err)
		err = ward_protect_notes_of(out, f, links);
	ward_facts_unref(f);
	return err;
}

enum ward_access ward_protect_match(const ward_policy *policy, const char *path)
{
	struct ward_facts *f = NULL;
	enum ward_access a;

	if (ward_facts_new(&f, policy, 0) != 0)
		return WARD_ACCESS_NONE;
	a = ward_protect_match_in(policy, f, path);
	ward_facts_unref(f);
	return a;
}
