/*
 * ward — the per-runner rule plan for Landlock: the read-only and writable
 * grants, hidden paths carved out of them (the complement) or mounted by
 * the launcher (see translate.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/policy/listings.h"
#include "libward/policy/protect.h"
#include "translate_impl.h"
#include "translate_internal.h"
#include "util/landlock.h"
#include "util/util.h"

/* --- landlock ----------------------------------------------------------- */

struct comp {
	struct ward_xlate *p;
	struct ward_strv *out;	   /* grants */
	struct ward_strv *tainted; /* directories expanded */
	char **excl;		   /* sorted parents first (path_cmp) */
	size_t nexcl;
	size_t budget;
	bool over; /* budget exhausted */
};

/*
 * Grant everything beneath @dir except the excluded paths (and what lies
 * beneath them): @dir itself when nothing excluded lies inside it, else
 * each of its entries, recursively. A symlink entry is skipped, since a
 * grant would follow it (possibly into an excluded path); what it points
 * to is granted under its own name. A directory that cannot be listed is
 * granted nothing (fail closed), with a warning. Every grant below @dir
 * (@depth > 0) is optional (WARD_LL_OPTIONAL): the walk sees the disk as
 * it is now, and an entry removed before the call starts only narrows.
 */
/* The first exclusion not before @dir (path_cmp): those inside @dir, if
 * any, start there. */
static size_t excl_from(const struct comp *c, const char *dir)
{
	size_t lo = 0, hi = c->nexcl;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ward_xl_path_cmp(c->excl[mid], dir) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Whether the entries of the tainted directory @dir (records @rec, @len
 * bytes) need more grants than the budget has left: every entry but a
 * link needs one at least, except those that are excluded or hold
 * something excluded (one per distinct next component of the exclusions
 * inside @dir, which lie together in their order). Then the walk is over
 * at once instead of after spending its budget one grant at a time.
 */
static bool over_budget(struct comp *c, const char *dir, const void *rec,
			size_t len)
{
	size_t need = 0, dl = strcmp(dir, "/") ? strlen(dir) : 0;
	const char *last = NULL;
	size_t lastn = 0;

	for (size_t o = 0; o < len;) {
		const struct util_dirent64 *e =
		    (const void *)((const char *)rec + o);

		o += e->d_reclen;
		if (e->d_type != DT_LNK && e->d_type != DT_UNKNOWN &&
		    strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			need++;
	}
	if (need <= c->budget)
		return false;
	for (size_t i = excl_from(c, dir); i < c->nexcl && need > c->budget;
	     i++) {
		const char *x = c->excl[i], *sub, *end;

		if (strcmp(x, dir) == 0)
			continue;
		if (!util_path_within(x, dir))
			break; /* past the ones inside @dir */
		sub = x + dl + 1;
		end = strchr(sub, '/');
		if (!end)
			end = sub + strlen(sub);
		if (last && lastn == (size_t)(end - sub) &&
		    memcmp(last, sub, lastn) == 0)
			continue;
		last = sub;
		lastn = (size_t)(end - sub);
		need--;
	}
	if (need <= c->budget)
		return false;
	c->over = true;
	return true;
}

static void complement(struct comp *c, const char *dir, int depth);

/* A tainted directory that cannot be listed: nothing inside is granted
 * (fail closed), and the plan says so. */
static void cannot_list(struct comp *c, const char *dir, int err)
{
	ward_xl_linef(&c->p->warn,
		      "landlock: cannot list %s (%s) to hide what lies inside "
		      "it, so nothing inside it is readable",
		      dir, strerror(err));
}

/* The entries of the tainted directory @dir (@fd) in @rec, one by one. */
static void comp_records(struct comp *c, const char *dir, int fd,
			 const void *rec, size_t len, int depth)
{
	for (size_t o = 0; !c->over && o < len;) {
		const struct util_dirent64 *e =
		    (const void *)((const char *)rec + o);
		char child[PATH_MAX];
		size_t dl = strlen(dir);
		unsigned char type = e->d_type;

		o += e->d_reclen;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		memcpy(child, dir, dl + 1);
		if (!ward_xl_path_push(child, &dl, e->d_name,
				       strlen(e->d_name)))
			continue;
		if (type == DT_UNKNOWN)
			type = util_dirent_type(fd, e->d_name);
		/* A link is skipped (a grant would follow it); an entry
		 * whose lstat failed is granted nothing. */
		if (type == DT_LNK || type == DT_UNKNOWN)
			continue;
		complement(c, child, depth + 1);
	}
}

static void complement(struct comp *c, const char *dir, int depth)
{
	bool tainted = false;
	const void *rec;
	size_t len;
	int fd;

	if (c->over)
		return;
	if (depth == 0) {
		for (size_t i = 0; i < c->nexcl; i++) {
			if (util_path_within(dir, c->excl[i]))
				return;
		}
	}
	/*
	 * The exclusions are sorted parents first (path_cmp): the ones
	 * inside @dir, if any, start at the first one not before it. Below
	 * the top, @dir's parent lies in no exclusion, so @dir lies in one
	 * only by being it. One binary search per entry, not a pass over
	 * every exclusion (1,000 rules over a few thousand entries).
	 */
	{
		size_t lo = excl_from(c, dir);

		if (lo < c->nexcl) {
			if (strcmp(c->excl[lo], dir) == 0)
				return;
			tainted = util_path_within(c->excl[lo], dir);
		}
	}
	if (!tainted) {
		if (c->budget == 0) {
			c->over = true;
			return;
		}
		c->budget--;
		if (depth == 0) {
			ward_strv_push(c->out, dir);
		} else {
			/* Found on disk now; gone by the time the call
			 * starts is no reason to fail (landlock.h). */
			char opt[PATH_MAX + 1];

			opt[0] = WARD_LL_OPTIONAL;
			memcpy(opt + 1, dir, strlen(dir) + 1);
			ward_strv_push(c->out, opt);
		}
		return;
	}
	ward_strv_push(c->tainted, dir);
	/* Listed already (the plan's rules listed it): no descriptor, its
	 * entries' types are known. */
	rec = ward_listings_find(c->p->listings, dir, &len);
	fd = rec ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	if (!rec && fd < 0) {
		cannot_list(c, dir, errno);
		return;
	}
	if (!c->p->listings)
		ward_listings_new(&c->p->listings);
	/* Kept (the plan's rules may have listed it): counted first, and
	 * copied, since the walk below keeps more and moves the listings. */
	if (!rec)
		rec = ward_listings_read(c->p->listings, fd, dir, &len);
	if (rec && !over_budget(c, dir, rec, len)) {
		char *own = malloc(len);

		if (own) {
			memcpy(own, rec, len);
			comp_records(c, dir, fd, own, len, depth);
			free(own);
		} else {
			c->p->oom = true;
		}
	} else if (!rec) {
		/* Too big to keep: read as it comes, from its start again
		 * (on the heap: the walk recurses once per level). */
		char *buf = malloc(32768);
		long got;

		if (!buf)
			c->p->oom = true;
		else if (lseek(fd, 0, SEEK_SET) != 0)
			cannot_list(c, dir, errno);
		else
			while (!c->over &&
			       (got = util_getdents64(fd, buf, 32768)) > 0)
				comp_records(c, dir, fd, buf, (size_t)got,
					     depth);
		free(buf);
	}
	if (fd >= 0)
		close(fd);
}

/* "a, b, c" of a vector, for a warning; malloc'd (NULL on ENOMEM). */
static char *join(char *const *v, size_t n)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 2;
	s = malloc(len);
	if (!s)
		return NULL;
	len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(v[i]);

		if (i) {
			memcpy(s + len, ", ", 2);
			len += 2;
		}
		memcpy(s + len, v[i], k);
		len += k;
	}
	s[len] = '\0';
	return s;
}

/* The rules behind a set of targets, for a refusal: "rule …, rule …". */
static char *rules_of(const struct ward_xlate *p, struct target *const *v,
		      size_t n)
{
	struct ward_strv names = {0};
	char name[PATH_MAX + 256];
	char *list;

	for (size_t i = 0; i < n; i++) {
		struct ward_rule_info info;
		size_t r = v[i]->src == SRC_GLOB ? 0 : SIZE_MAX;

		/* A glob match: each glob rule of its walk, by name. */
		do {
			bool seen = false;

			if (r != SIZE_MAX) {
				if (!ward_xl_rule_in_group(p, r, v[i]->idx,
							   &info) ||
				    info.access != v[i]->access)
					continue;
				ward_xl_rule_name(name, sizeof(name), p, r);
			} else {
				ward_xl_target_why(name, sizeof(name), p, v[i]);
			}
			for (size_t j = 0; j < names.n && !seen; j++)
				seen = strcmp(names.v[j], name) == 0;
			if (!seen)
				ward_strv_push(&names, name);
		} while (r != SIZE_MAX && ++r < p->nrules);
	}
	list = join(names.v, names.n);
	ward_strv_discard(&names);
	return list;
}

/*
 * The read-only grants: "/" unless something outside the writable roots is
 * hidden (or, without mounts, something inside them); then the complement
 * of the hidden paths — or, when the complement would exceed its budget
 * and the launcher can mount, "/" and a hide per path.
 */
static void landlock_ro(struct ward_xlate *p)
{
	struct ward_strv ro = {0}, tainted = {0}, hidden = {0}, ruled = {0};
	struct target **mounted = NULL;
	size_t nmounted = 0;
	struct comp c = {0};
	char *list = NULL, *dirs = NULL;

	mounted = calloc(p->nt + 1, sizeof(*mounted));
	if (!mounted) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nt; i++) {
		struct target *t = &p->t[i];
		/* ward's state directory is hidden inside a root too: its
		 * root's write grant is carved around it (landlock_rw). */
		bool home = t->src == SRC_PROTECT &&
			    p->prot[t->idx].kind == WARD_PROTECT_HOME;
		bool in_root = ward_xl_within_any_root(p, t->path);
		bool inside = !home && in_root;

		if (t->access != WARD_ACCESS_NONE || !t->exists ||
		    (inside && !p->inroot_complement) ||
		    (home && in_root && ward_xl_can_mount()))
			continue;
		ward_strv_push(&hidden, t->path);
		if (!home) {
			ward_strv_push(&ruled, t->path);
			mounted[nmounted++] = t;
		}
	}
	if (hidden.n)
		ward_xl_sort(hidden.v, hidden.n, sizeof(*hidden.v),
			     ward_xl_str_cmp);
	c.p = p;
	c.out = &ro;
	c.tainted = &tainted;
	c.excl = hidden.v;
	c.nexcl = hidden.n;
	c.budget = ward_xl_limits.max_targets;
	if (hidden.n)
		complement(&c, "/", 0);
	else
		ward_strv_push(&ro, "/");
	list = join(hidden.v, hidden.n);
	if (c.over && !p->inroot_complement && nmounted &&
	    ward_xl_can_mount()) {
		/* Too many grants: the launcher mounts over each hidden
		 * path instead, and "/" is readable. ward's state
		 * directory is then one more hide, inside a root too (its
		 * root's write grant stays carved around it). */
		ward_strv_discard(&ro);
		memset(&ro, 0, sizeof(ro));
		ward_strv_push(&ro, "/");
		for (size_t i = 0; i < p->nt; i++) {
			struct target *t = &p->t[i];
			bool home = t->src == SRC_PROTECT &&
				    p->prot[t->idx].kind == WARD_PROTECT_HOME;

			bool in_root = ward_xl_within_any_root(p, t->path);

			/* (ward's own inside a root: mounted already.) */
			if (t->access == WARD_ACCESS_NONE && t->exists &&
			    ((home && !(in_root && ward_xl_can_mount())) ||
			     !in_root))
				ward_xl_push_hide(p, t, WARD_ACCESS_NONE);
		}
		ward_xl_linef(&p->desc,
			      "read: --ro /, the hidden paths mounted over "
			      "(their complement needs more than %zu grants)",
			      ward_xl_limits.max_targets);
	} else if (c.over) {
		char *rules = rules_of(p, mounted, nmounted);

		ward_xl_refuse(
		    p,
		    "landlock: hiding %s (%s) needs more than %zu read "
		    "grants and %s: ward refuses to run rather than leave "
		    "it readable; narrow the rules",
		    list ? list : "the hidden paths",
		    rules ? rules : "ward's state directory",
		    ward_xl_limits.max_targets,
		    p->inroot_complement
			? "no mount namespace can be made here (user "
			  "namespaces are denied)"
			: "the paths cannot be mounted over");
		free(rules);
		ward_strv_discard(&ro);
		memset(&ro, 0, sizeof(ro));
		ward_strv_push(&ro, "/");
	} else if (hidden.n) {
		dirs = join(tainted.v, tainted.n);
		/* The rules' own cost is a warning; ward's state directory
		 * is hidden on every call, and its cost is described (ward
		 * config check, RUNNERS.md) rather than repeated. */
		if (ruled.n) {
			char *rl = join(ruled.v, ruled.n);

			ward_xl_linef(
			    &p->warn,
			    "landlock: hides %s by granting read on the "
			    "entries beside it instead of on its parent "
			    "directories: those directories cannot be "
			    "listed, and entries created in %s during the "
			    "run are not readable",
			    rl ? rl : "the hidden paths", dirs ? dirs : "them");
			free(rl);
		}
		ward_xl_linef(
		    &p->desc,
		    "read: %zu grants, everything but %s (complement: %s "
		    "cannot be listed, and entries created there during "
		    "the run are not readable)",
		    ro.n, list ? list : "the hidden paths",
		    dirs ? dirs : "the directories above them");
	} else {
		ward_xl_linef(&p->desc, "read: --ro /");
	}
	free(mounted);
	free(list);
	free(dirs);
	ward_strv_discard(&tainted);
	ward_strv_discard(&hidden);
	if (ruled.oom)
		p->oom = true;
	ward_strv_discard(&ruled);
	if (ro.oom)
		p->oom = true;
	if (ward_strv_finish(&p->ll_ro, &ro))
		p->oom = true;
}

/*
 * The writable grants: /dev/null and the roots, with ward's own
 * directories (configuration, session store) carved out of a root that
 * holds them — and, when no mount namespace can be made, the rules'
 * matches inside it: Landlock grants only add up, so the root itself is
 * replaced by its entries.
 */
/* Push @s unless @sv holds it already (overlapping roots expand to the
 * same entries; each is granted once). */
static void push_new(struct ward_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return;
	ward_strv_push(sv, s);
}

/*
 * Whether @root is a temporary directory every command expects to write
 * at its top level: /tmp or $TMPDIR (as the policy has it).
 */
static bool temp_root(const struct ward_xlate *p, const char *root)
{
	const char *tmpdir = ward_policy_tmpdir(p->policy);
	char *c;
	bool yes;

	c = util_path_canon("/tmp");
	yes = c && strcmp(c, root) == 0;
	free(c);
	if (yes || !tmpdir || tmpdir[0] != '/')
		return yes;
	c = util_path_canon(tmpdir);
	yes = c && strcmp(c, root) == 0;
	free(c);
	return yes;
}

/*
 * ward's directory @pr inside the writable root @root, where no mount
 * namespace can be made: inside /tmp or $TMPDIR (HOME=/tmp, as arbitrary-uid
 * containers and CI images set it) the call is refused with the fix, since
 * carving it out would take the temporary directory's top level away from
 * every command (mktemp, pip and npm create their files there); inside
 * another root (an `rw` rule) it is carved out (the caller's choice of
 * root, the cost warned). Returns whether it refused.
 */
static bool refuse_home_in_tmp(struct ward_xlate *p,
			       const struct ward_protected *pr,
			       const char *root)
{
	if (!temp_root(p, root))
		return false;
	ward_xl_refuse(
	    p,
	    "landlock: %s %s lies inside the writable root %s, and no mount "
	    "namespace can be made here to keep it from commands (user "
	    "namespaces are denied); keeping it out of reach would take the "
	    "top level of %s away from every command (mktemp, pip and npm "
	    "create their files there), so ward refuses to run. Keep ward's "
	    "directories out of every writable root: set XDG_STATE_HOME and "
	    "XDG_CONFIG_HOME to directories of your own outside %s (or HOME "
	    "outside it)",
	    pr->what, pr->path, root, root, root);
	return true;
}

static void landlock_rw(struct ward_xlate *p)
{
	struct ward_strv rw = {0};

	ward_strv_push(&rw, "/dev/null");
	for (size_t i = 0; p->roots[i]; i++) {
		const char *w = p->roots[i];
		struct ward_strv excl = {0}, tainted = {0}, part = {0};
		struct target **ruled = NULL;
		size_t nruled = 0;
		const char *inside = NULL;
		struct comp c = {0};
		char *list, *dirs;

		for (size_t j = 0; j < p->nprot; j++) {
			const struct ward_protected *pr = &p->prot[j];

			if (pr->kind != WARD_PROTECT_HOME)
				continue;
			if (util_path_within(w, pr->path))
				inside = pr->path;
			else if (util_path_within(pr->path, w) &&
				 !ward_xl_can_mount() &&
				 !refuse_home_in_tmp(p, pr, w))
				ward_strv_push(&excl, pr->path);
		}
		if (inside) {
			ward_xl_linef(
			    &p->warn,
			    "landlock: the writable root %s lies inside %s, "
			    "which stays read-only: %s is not writable",
			    w, inside, w);
			ward_strv_discard(&excl);
			continue;
		}
		if (p->inroot_complement) {
			ruled = calloc(p->ninroot + 1, sizeof(*ruled));
			if (!ruled) {
				p->oom = true;
				ward_strv_discard(&excl);
				break;
			}
			for (size_t k = 0; k < p->ninroot; k++) {
				if (!util_path_within(p->inroot[k]->path, w))
					continue;
				ward_strv_push(&excl, p->inroot[k]->path);
				ruled[nruled++] = p->inroot[k];
			}
		}
		if (!excl.n) {
			free(ruled);
			push_new(&rw, w);
			continue;
		}
		ward_xl_sort(excl.v, excl.n, sizeof(*excl.v), ward_xl_str_cmp);
		c.p = p;
		c.out = &part;
		c.tainted = &tainted;
		c.excl = excl.v;
		c.nexcl = excl.n;
		c.budget = ward_xl_limits.max_targets;
		complement(&c, w, 0);
		list = join(excl.v, excl.n);
		dirs = join(tainted.v, tainted.n);
		if (c.over && nruled) {
			char *rules = rules_of(p, ruled, nruled);

			ward_xl_refuse(
			    p,
			    "landlock: %s: keeping %s from being written "
			    "inside the writable root %s needs a mount "
			    "namespace, which cannot be made here (user "
			    "namespaces are denied), or more than %zu "
			    "grants: ward refuses to run rather than "
			    "leave it writable; narrow the rules",
			    rules ? rules : "the rules",
			    list ? list : "the paths", w,
			    ward_xl_limits.max_targets);
			free(rules);
		} else if (c.over) {
			/* Fail closed: ward's own files must stay read-only. */
			ward_xl_linef(
			    &p->warn,
			    "landlock: keeping %s read-only inside the "
			    "writable root %s needs more than %zu grants, so "
			    "%s is not writable at all",
			    list ? list : "ward's directories", w,
			    ward_xl_limits.max_targets, w);
		} else {
			for (size_t k = 0; k < part.n; k++)
				push_new(&rw, part.v[k]);
			ward_xl_linef(
			    &p->warn,
			    "landlock: keeps %s read-only inside the writable "
			    "root %s by granting write on the entries beside "
			    "it instead: nothing new can be created directly "
			    "in %s during the run",
			    list ? list : "ward's directories", w,
			    dirs ? dirs : "them");
		}
		free(ruled);
		free(list);
		free(dirs);
		if (part.oom || excl.oom || tainted.oom)
			p->oom = true;
		ward_strv_discard(&part);
		ward_strv_discard(&excl);
		ward_strv_discard(&tainted);
	}
	for (size_t i = 0; i < rw.n; i++)
		ward_xl_linef(&p->desc, "write: --rw %s", rw.v[i]);
	if (ward_strv_finish(&p->ll_rw, &rw))
		p->oom = true;
}

/*
 * The rules' matches inside the writable roots: Landlock cannot take a
 * right back from inside a granted root, so the launcher hides them by
 * mounts in a private namespace (hide.h) — `--` behind /dev/null or an
 * empty read-only tmpfs, `r-` bound read-only onto itself — the same
 * operations as bwrap's profile. Where no mount namespace can be made
 * (user namespaces denied, not root), they are carved out of the grants
 * instead (the complement, within its budget), or the call is refused.
 */
static void landlock_inroot(struct ward_xlate *p)
{
	p->inroot = calloc(p->nt + 1, sizeof(*p->inroot));
	if (!p->inroot) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nt; i++) {
		struct target *t = &p->t[i];
		bool home = t->src == SRC_PROTECT &&
			    p->prot[t->idx].kind == WARD_PROTECT_HOME;

		/* ward's own directories: by the same mounts when there
		 * are mounts (landlock_rw carves them out otherwise). The
		 * question is asked last: it forks once per process. */
		if (!t->exists || !ward_xl_within_any_root(p, t->path) ||
		    (t->src == SRC_PROTECT && !(home && ward_xl_can_mount())))
			continue;
		p->inroot[p->ninroot++] = t;
	}
	if (!p->ninroot)
		return;
	if (!ward_xl_can_mount()) {
		p->inroot_complement = true;
		return;
	}
	ward_xl_launcher_mounts(p, p->inroot, p->ninroot);
}

void ward_xl_plan_landlock(struct ward_xlate *p)
{
	struct ward_strv traps = {0};
	struct ward_rule_info info;
	char name[PATH_MAX + 256];

	/* Literal rules and their matches around a root; missing ones. */
	for (size_t i = 0; i < p->nt; i++) {
		const struct target *t = &p->t[i];
		const char *root = ward_xl_overlapping_root(p, t->path);

		if (!root)
			continue;
		if (t->src == SRC_PROTECT) {
			/* A link has its own note (protect.h). */
			if (p->prot[t->idx].kind != WARD_PROTECT_HOME &&
			    t->exists &&
			    !(p->prot[t->idx].flags & WARD_PROTECT_LINK))
				ward_strv_push(&traps, t->path);
			continue;
		}
		if (ward_xl_within_any_root(p, t->path)) {
			/* Hidden by a mount (or carved out) below. */
			if (t->src != SRC_RULE || t->exists ||
			    p->warned[t->idx])
				continue;
			p->warned[t->idx] = true;
			ward_xl_linef(
			    &p->warn,
			    "landlock: %s: %s does not exist at confine "
			    "time, so landlock cannot keep a command from "
			    "creating it inside the writable root; ward's "
			    "file operations (the fs fence) still apply the "
			    "rule",
			    ward_xl_rule_name(name, sizeof(name), p, t->idx),
			    t->path);
			continue;
		}
		/* The target holds a writable root. */
		if (t->src == SRC_GLOB) {
			p->g[t->idx].overlaps_root = true;
			continue;
		}
		if (p->warned[t->idx])
			continue;
		p->warned[t->idx] = true;
		ward_xl_rule_name(name, sizeof(name), p, t->idx);
		if (t->access == WARD_ACCESS_NONE)
			ward_xl_unenforced(
			    p,
			    "landlock: %s: hides %s, but the writable root "
			    "%s inside it stays readable and writable to "
			    "commands (Landlock grants only add up); ward's "
			    "file operations (the fs fence) still apply the "
			    "rule",
			    name, t->path, root);
		else
			ward_xl_unenforced(
			    p,
			    "landlock: %s: cannot make the writable root %s "
			    "inside %s read-only (Landlock grants only add "
			    "up): commands can still write there; ward's file "
			    "operations (the fs fence) still apply the rule",
			    name, root, t->path);
	}
	/* Glob matches that hold a writable root. */
	for (size_t gi = 0; gi < p->ng; gi++) {
		bool holds = false;

		for (size_t i = 0; i < p->nt && !holds; i++)
			holds = p->t[i].src == SRC_GLOB && p->t[i].idx == gi &&
				!ward_xl_within_any_root(p, p->t[i].path) &&
				ward_xl_overlapping_root(p, p->t[i].path);
		if (!holds)
			continue;
		for (size_t i = 0; i < p->nrules; i++) {
			if (!ward_xl_rule_in_group(p, i, gi, &info) ||
			    p->warned[i])
				continue;
			p->warned[i] = true;
			ward_xl_unenforced(
			    p,
			    "landlock: %s: matches a directory that holds a "
			    "writable root (Landlock grants only add up): "
			    "commands can still %s the root; ward's file "
			    "operations (the fs fence) still apply the rule",
			    ward_xl_rule_name(name, sizeof(name), p, i),
			    info.access == WARD_ACCESS_NONE ? "read and write"
							    : "write");
		}
	}
	if (traps.n) {
		char *list = join(traps.v, traps.n);

		ward_xl_unenforced(
		    p,
		    "landlock: cannot keep the protected path%s %s "
		    "read-only inside the writable roots (Landlock "
		    "grants only add up): a command can change %s "
		    "during the run; ward run's guard moves what it "
		    "changed to the quarantine and puts the original "
		    "back after the run (not for `ward confine`), and "
		    "ward's file operations (the fs fence) refuse to "
		    "change %s",
		    traps.n == 1 ? "" : "s", list ? list : "?",
		    traps.n == 1 ? "it" : "them", traps.n == 1 ? "it" : "them");
		free(list);
	}
	if (traps.oom)
		p->oom = true;
	ward_strv_discard(&traps);
	/* Every glob: hidden (or carved out) as its matches are now. */
	ward_xl_warn_globs(p, false, false);
	ward_xl_reduce_targets(p);
	if (p->oom)
		return;
	landlock_inroot(p);
	if (p->oom)
		return;
	landlock_ro(p);
	landlock_rw(p);
}
