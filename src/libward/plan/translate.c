/*
 * ward — the per-runner rule plan: access rules and protected paths turned
 * into bwrap options, Landlock grants and Seatbelt deny rules, with a
 * warning for everything a runner cannot express exactly.
 *
 * Plan, then apply. ward_xlate_new_ops() gathers the targets first:
 *
 *   - every literal `r-`/`--` rule, made canonical as far as it exists;
 *   - every glob's matches that exist now: one walk per literal prefix
 *     (openat/fdopendir, no symlink followed, never below /proc, /sys or
 *     /dev), asking ward_rules_match() about each entry, so the walk sees
 *     exactly what the fence sees; a hidden (`--`) match is not walked
 *     into, a glob without `**` is not walked deeper than it can match;
 *     the walk stops at a bound of entries and of time, with a warning;
 *   - the protected paths (protect.h) as `r-`, ward's state directory
 *     as `--`.
 *
 * Targets are then sorted parents first (with '/' ordered before every
 * other byte, so a directory's descendants follow it directly) and
 * reduced: nothing inside a hidden target, no read-only target inside a
 * read-only one. Each runner takes what it can from the result.
 *
 * Precedence `--` > `r-` > `rw` and the platform roots holds because the
 * stronger operation comes later (bwrap mounts, Seatbelt rules) or
 * because the weaker one is never granted (Landlock).
 *
 * Modules: translate_targets.c (bounds, helpers, gathering and reducing the
 * targets), translate_bwrap.c, translate_landlock.c, translate_seatbelt.c
 * (each runner's part, which its row's .translate calls: runners/), and
 * this file (the plan's life: new, apply, accessors); translate_impl.h is
 * what they share. The exported warnings and description, which name a
 * runner by its value, are profile.c's (above the runner table).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/policy/facts.h"
#include "libward/policy/listings.h"
#include "libward/policy/protect.h"
#include "libward/runners/runners.h"
#include "translate_impl.h"
#include "translate_internal.h"
#include "util/landlock.h"
#include "util/util.h"

static char *const empty_strv[] = {NULL};

/* --- exported (internal) ------------------------------------------------ */

/*
 * What the scan of the repository found (protect.h): a symlinked `.git`,
 * a `commondir` ward does not trust. Seatbelt keeps a link itself, so it
 * gets no note about links.
 */
static void warn_notes(struct ward_xlate *p)
{
	char **notes = NULL;

	if (ward_protect_notes_of(&notes, p->facts, !p->ops->keeps_links) !=
	    0) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; notes[i]; i++)
		ward_xl_linef(&p->warn, "%s: %s", ward_xl_runner_label(p),
			      notes[i]);
	ward_strv_free(notes);
}

/* A $TMPDIR that is set but not a writable root (roots.c says why). */
static void warn_tmpdir(struct ward_xlate *p)
{
	char why[2 * PATH_MAX];

	if (ward_roots_tmpdir_refused(why, sizeof(why), p->mode,
				      ward_policy_tmpdir(p->policy)))
		ward_xl_linef(&p->warn, "%s: %s", ward_xl_runner_label(p), why);
}

static void plan_none(struct ward_xlate *p)
{
	struct ward_rule_info info;
	char name[PATH_MAX + 256];

	for (size_t i = 0; i < p->nrules; i++) {
		if (ward_rules_get(&info, p->rules, i) != 0 ||
		    info.access == WARD_ACCESS_RW)
			continue;
		ward_xl_linef(
		    &p->warn,
		    "%s: %s: %s is not confined, so the rule does not "
		    "reach commands; the fs fence still applies it",
		    ward_mode_name(p->mode),
		    ward_xl_rule_name(name, sizeof(name), p, i),
		    ward_mode_name(p->mode));
	}
}

int ward_xlate_new_ops(struct ward_xlate **out, const ward_policy *policy,
		       struct ward_facts *facts,
		       const struct ward_runner_ops *ops, bool inner_launcher)
{
	struct ward_xlate *p;
	int err;

	if (!out || !policy || !ops)
		return ward_err(WARD_EINVAL, "rule plan: missing argument");
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	p->policy = policy;
	p->runner = ops->id;
	p->ops = ops;
	p->inner_hides = inner_launcher && ops->inner_layer;
	p->mode = ward_policy_mode(policy);
	p->rules = ward_policy_rules(policy);
	p->nrules = ward_rules_count(p->rules);
	if (facts)
		p->facts = ward_facts_ref(facts);
	else if ((err = ward_facts_new(&p->facts, policy,
				       WARD_FACTS_LISTINGS)) != 0)
		goto out_free_plan;
	p->roots = p->facts->roots;
	p->listings = ward_facts_take_listings(p->facts);
	/* The walk kept only what the rules name; the plan keeps what it
	 * reads itself too (the complement's directories). */
	ward_listings_only(p->listings, NULL, 0);
	if (p->mode == WARD_MODE_DANGER_FULL_ACCESS || ops->unconfined) {
		plan_none(p);
		goto out_done;
	}
	err = ward_facts_protected(&p->prot, &p->nprot, p->facts);
	if (err)
		goto out_free_plan;
	p->warned = calloc(p->nrules + 1, sizeof(*p->warned));
	p->prot_exists = calloc(p->nprot + 1, sizeof(*p->prot_exists));
	if (!p->warned || !p->prot_exists) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_free_plan;
	}
	ward_xl_warn_rw(p);
	warn_tmpdir(p);
	warn_notes(p);
	if (ops->translate) {
		ops->translate(p);
		goto out_done;
	}
	ward_xl_gather(p);
	if (p->oom)
		goto out_oom;
	ward_xl_linef(&p->warn,
		      "%s: this runner cannot confine, so no rule reaches "
		      "commands",
		      ward_runner_name(p->runner));
out_done:
	/* Per call, and read once: not kept with the plan. */
	ward_listings_free(p->listings);
	p->listings = NULL;
	if (p->oom || p->warn.oom || p->desc.oom || p->bw.oom ||
	    p->ll_hide.oom || p->create.oom || p->partial.oom)
		goto out_oom;
	*out = p;
	return 0;
out_oom:
	err = ward_err(-ENOMEM, "rule plan: out of memory");
out_free_plan:
	ward_xlate_free(p);
	return err;
}

void ward_xlate_free(struct ward_xlate *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nt; i++)
		free(p->t[i].path);
	free(p->t);
	for (size_t i = 0; i < p->ng; i++) {
		free(p->g[i].lex);
		free(p->g[i].can);
	}
	free(p->g);
	free(p->warned);
	free(p->prot_exists);
	ward_strv_discard(&p->bw);
	ward_strv_free(p->ll_ro);
	ward_strv_free(p->ll_rw);
	ward_strv_discard(&p->ll_hide);
	free(p->inroot);
	ward_strv_discard(&p->warn);
	ward_strv_discard(&p->desc);
	ward_strv_discard(&p->create);
	ward_strv_discard(&p->partial);
	free(p->refusal);
	ward_listings_free(p->listings);
	ward_facts_unref(p->facts);
	free(p);
}

char *const *ward_xlate_roots(const struct ward_xlate *plan)
{
	return plan->roots;
}

char *const *ward_xlate_create(const struct ward_xlate *plan)
{
	return plan->create.n ? plan->create.v : empty_strv;
}

char *const *ward_xlate_partial(const struct ward_xlate *plan)
{
	return plan->partial.n ? plan->partial.v : empty_strv;
}

const char *ward_xlate_refusal(const struct ward_xlate *plan)
{
	return plan->refusal;
}

int ward_xlate_apply(const struct ward_xlate *plan)
{
	for (size_t i = 0; i < plan->create.n; i++) {
		int err = util_mkdir_p(plan->create.v[i]);

		/* The confinement's own set-up: a runner failure, never
		 * an error of the command's (not "not executable"). */
		if (err)
			return ward_err(WARD_ERUNNER,
					"cannot create %s (so that it can be "
					"kept out of the command's reach): %s",
					plan->create.v[i], strerror(-err));
	}
	return 0;
}

void ward_xlate_bwrap_push(struct ward_strv *sv, const struct ward_xlate *plan)
{
	for (size_t i = 0; i < plan->bw.n; i++)
		ward_strv_push(sv, plan->bw.v[i]);
}

int ward_xlate_landlock(char ***ro, char ***rw, const struct ward_xlate *plan)
{
	char **r = NULL, **w = NULL;

	if (!plan->ll_ro || !plan->ll_rw)
		return ward_err(WARD_EINVAL, "rule plan: not a landlock plan");
	r = ward_strv_dup(plan->ll_ro);
	w = ward_strv_dup(plan->ll_rw);
	if (!r || !w) {
		ward_strv_free(r);
		ward_strv_free(w);
		return ward_err(-ENOMEM, "out of memory");
	}
	*ro = r;
	*rw = w;
	return 0;
}

char *const *ward_xlate_landlock_hides(const struct ward_xlate *plan)
{
	return plan->ll_hide.n ? plan->ll_hide.v : empty_strv;
}

char *const *ward_xlate_warnings(const struct ward_xlate *plan)
{
	return plan->warn.n ? plan->warn.v : empty_strv;
}

char *const *ward_xlate_describe(const struct ward_xlate *plan)
{
	return plan->desc.n ? plan->desc.v : empty_strv;
}
