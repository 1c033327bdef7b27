/*
 * ward — the facts of a policy (internal to libward).
 *
 * What a policy means on this machine now, computed once when a call is
 * planned and never again for it: the writable roots (roots.c), the
 * protected paths with the notes of their scan (protect.c), and, when
 * asked for, the rules' aliases (rules.c). The policy is a plain value
 * that holds none of this; the plan, the executor, the guard, the denial
 * and the fence read one facts value, so one call canonicalises once and
 * scans the workspace once.
 *
 * Immutable once made, shared by reference (the plan keeps one, the call
 * another): ward_facts_ref() and ward_facts_unref() may be called from
 * any thread.
 */
#ifndef WARD_FACTS_H
#define WARD_FACTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "libward/internal.h"
#include "protect.h"

/* What ward_facts_new() computes beyond the roots and protected paths. */
#define WARD_FACTS_ALIASES 0x1u /* the rules' aliases (the fence's) */
/*
 * For an operation that changes nothing (the fence's read, list, stat):
 * the protected paths that limit a read only, the hidden ones and those
 * the policy names, without the scan of the writable roots for traps and
 * repositories (read-only paths, which limit no read). Such facts must not
 * judge a change.
 */
#define WARD_FACTS_READS 0x2u
/*
 * For the plan of a command: keep the listings of the directories the scan
 * reads (listings.h) when the policy has globs to walk, for the one
 * translation that follows (ward_facts_take_listings()).
 */
#define WARD_FACTS_LISTINGS 0x4u

struct ward_facts {
	atomic_uint refs;
	char **roots; /* the writable roots, never NULL */
	/* The protected paths (one allocation, protect.c) and why the list
	 * could not be made (a walk past its bound), or NULL. */
	struct ward_protected *prot;
	size_t nprot;
	char *refused;
	char **notes; /* what the scan found to say (marked, protect.c) */
	bool have_aliases;
	struct ward_rule_alias *aliases;
	size_t naliases;
	/* WARD_FACTS_LISTINGS: what the scan read, until it is taken (the
	 * one part that changes: the first translation takes it). */
	_Atomic(struct ward_listings *) listings;
};

/*
 * ward_facts_new - the facts of @policy now (@what: WARD_FACTS_*). One
 * reference, released with ward_facts_unref(). Returns 0 or a ward error
 * (-ENOMEM, a root that cannot be resolved); a protected list that could
 * not be made is not an error here: ward_facts_protected() says it.
 */
int ward_facts_new(struct ward_facts **out, const ward_policy *policy,
		   unsigned what);
struct ward_facts *ward_facts_ref(struct ward_facts *f);
void ward_facts_unref(struct ward_facts *f);

/*
 * ward_facts_take_listings - the listings the scan of @f kept
 * (WARD_FACTS_LISTINGS), once: the first caller gets them and frees them
 * with ward_listings_free() (after its walk: they are per call, never
 * kept), every later one NULL, as do facts that kept none.
 */
struct ward_listings *ward_facts_take_listings(struct ward_facts *f);

/*
 * ward_facts_protected - the protected paths of @f, borrowed: 0, or
 * WARD_EINVAL (with the reason as the error detail) when the list could
 * not be made; then *out is NULL and every consumer fails closed.
 */
static inline int ward_facts_protected(const struct ward_protected **out,
				       size_t *out_len,
				       const struct ward_facts *f)
{
	*out = NULL;
	*out_len = 0;
	if (f->refused)
		return ward_err(WARD_EINVAL, "%s", f->refused);
	*out = f->prot;
	*out_len = f->nprot;
	return 0;
}

#endif
