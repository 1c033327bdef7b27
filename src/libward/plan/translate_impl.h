/*
 * ward — what the modules of the per-runner rule plan share (translate.c,
 * translate_targets.c, translate_bwrap.c, translate_landlock.c,
 * translate_seatbelt.c; not for the rest of libward, which uses
 * translate_internal.h): the plan's struct, its targets and walk groups,
 * and the helpers that cross files.
 *
 * Arrows: translate.c -> translate_<runner>.c -> translate_targets.c;
 * translate_landlock.c also uses translate_bwrap.c's launcher mounts.
 */
#ifndef WARD_TRANSLATE_IMPL_H
#define WARD_TRANSLATE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "libward/internal.h"
#include "libward/policy/protect.h"
#include "translate_internal.h"

/* Where a target came from. */
enum src {
	SRC_RULE,    /* a literal rule: idx is the rule's index */
	SRC_GLOB,    /* a glob match: idx is the walk group's index */
	SRC_PROTECT, /* a protected path: idx into plan->prot */
};

struct target {
	char *path; /* canonical */
	enum ward_access access;
	bool is_dir;
	bool exists;
	enum src src;
	size_t idx;
};

/* One walk: the globs that share a literal prefix. */
struct group {
	char *lex;	    /* the literal prefix as the rules spell it */
	char *can;	    /* … made canonical */
	unsigned maxdepth;  /* UINT_MAX: a `**` glob, no limit */
	bool walked;	    /* false: missing, not needed, or covered */
	bool has_none;	    /* some glob of the group is `--` */
	bool stopped;	    /* the walk hit a bound here */
	size_t matches;	    /* targets found */
	bool overlaps_root; /* the prefix overlaps a writable root */
};

struct ward_xlate {
	const ward_policy *policy;
	enum ward_runner runner;
	const struct ward_runner_ops *ops; /* the runner's (runners.h) */
	enum ward_mode mode;
	const ward_rules *rules;
	size_t nrules;
	struct ward_facts *facts;	   /* the call's (a reference) */
	char *const *roots;		   /* borrowed from the facts */
	const struct ward_protected *prot; /* borrowed from the facts */
	size_t nprot;
	struct target *t;
	size_t nt;
	size_t capt;
	size_t nlit; /* targets gathered before the walk */
	struct group *g;
	size_t ng;
	/* Per rule: a warning already names it. */
	bool *warned;
	/* Per protected path: it exists (or was created). */
	bool *prot_exists;
	struct timespec t0;
	size_t entries;
	bool stop;
	/* What the call's walk for repositories read (listings.h): the glob
	 * walk reads these directories from it. Taken from the facts, freed
	 * once the translation is made. */
	struct ward_listings *listings;
	/* Results. */
	struct ward_strv bw; /* bwrap options after the writable binds */
	char **ll_ro;
	char **ll_rw;
	/* landlock-run --hide / --hide-ro options (pairs), in order. */
	struct ward_strv ll_hide;
	/* Landlock: matches inside the writable roots (after reduce). */
	struct target **inroot;
	size_t ninroot;
	bool inroot_complement; /* no mounts: carved out of the grants */
	/* bwrap: a Landlock layer (landlock-run) runs inside, which can take
	 * the rules' mounts (ward_xlate_new_bwrap). */
	bool inner_hides;
	struct ward_strv warn;
	struct ward_strv desc;
	/* ward's missing directories the apply step creates (bwrap). */
	struct ward_strv create;
	/* Rules and protected paths the runner does not enforce at all. */
	struct ward_strv partial;
	/* Why the runner must not run under this plan: a rule it would
	 * have to drop (ward refuses rather than run without it). */
	char *refusal;
	bool oom;
};

/* --- translate_targets.c: bounds, small helpers, gathering targets ------- */

/* The bounds of the glob walk and the generated operations
 * (ward_xlate_set_limits). */
extern struct ward_xlate_limits ward_xl_limits;

/* Whether the launcher will be able to hide paths by mounts (hide.h). */
bool ward_xl_can_mount(void);
/* How the plan's runner is named in its warnings: "custom (bwrap)", or
 * the runner's name. */
const char *ward_xl_runner_label(const struct ward_xlate *p);
/* Append a printf-formatted line to @sv. */
void ward_xl_linef(struct ward_strv *sv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A warning about a rule (or protected path) the runner does not enforce
 * at all; also a reason the call's enforcement is partial. */
void ward_xl_unenforced(struct ward_xlate *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A rule the runner would have to drop: the plan is refused (the first
 * reason is kept), and the reason is also a warning. */
void ward_xl_refuse(struct ward_xlate *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* `rule "SOURCE" (FILE:LINE)` for rule @i, into @buf. */
const char *ward_xl_rule_name(char *buf, size_t len, const struct ward_xlate *p,
			      size_t i);
/* What a target is for, for the description. */
const char *ward_xl_target_why(char *buf, size_t len,
			       const struct ward_xlate *p,
			       const struct target *t);
/* Whether @path lies in a writable root. */
bool ward_xl_within_any_root(const struct ward_xlate *p, const char *path);
/* The root that @path lies in or contains, or NULL. */
const char *ward_xl_overlapping_root(const struct ward_xlate *p,
				     const char *path);
/* Paths parents first, '/' before every other byte (and for qsort over
 * char *). */
int ward_xl_path_cmp(const char *a, const char *b);
int ward_xl_str_cmp(const void *a, const void *b);
/* qsort(), after one pass that finds @base in order already. */
void ward_xl_sort(void *base, size_t n, size_t size,
		  int (*cmp)(const void *, const void *));
/* lstat @path: exists? directory? (symlinks count as files) */
bool ward_xl_probe_path(const char *path, bool *is_dir);
/* Whether @path is one of the writable roots. */
bool ward_xl_is_root(const struct ward_xlate *p, const char *path);
/* The part of a glob after its literal prefix. */
const char *ward_xl_pattern_rest(const struct ward_rule_info *info);
/* Append "/name" to a path buffer; false when it would not fit. */
bool ward_xl_path_push(char *buf, size_t *len, const char *name, size_t n);
/* Sort the targets parents first, drop duplicates and what a stronger
 * target covers. */
void ward_xl_reduce_targets(struct ward_xlate *p);
/* Gather the targets: literal rules, the globs' matches, protected
 * paths. */
void ward_xl_gather(struct ward_xlate *p);
/* Whether rule @i is a glob of group @gi (its info in *@info). */
bool ward_xl_rule_in_group(const struct ward_xlate *p, size_t i, size_t gi,
			   struct ward_rule_info *info);
/* The `rw` rules that are not writable roots. */
void ward_xl_warn_rw(struct ward_xlate *p);
/* The glob warnings every runner that expands globs shares. */
void ward_xl_warn_globs(struct ward_xlate *p, bool only_hidden,
			bool skip_roots);

/* --- translate_bwrap.c ---------------------------------------------------- */

/* "--hide P" or "--hide-ro P" for the launcher, with its description. */
void ward_xl_push_hide(struct ward_xlate *p, const struct target *t,
		       enum ward_access access);
/* The launcher's mounts for @v (matches of the rules inside the writable
 * roots), parents pinned. */
void ward_xl_launcher_mounts(struct ward_xlate *p, struct target **v, size_t n);
void ward_xl_plan_bwrap(struct ward_xlate *p);

/* --- translate_landlock.c, translate_seatbelt.c --------------------------- */

void ward_xl_plan_landlock(struct ward_xlate *p);
void ward_xl_plan_seatbelt_desc(struct ward_xlate *p);

#endif
