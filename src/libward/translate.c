/*
 * ward — the per-runner rule plan: access rules and protected paths turned
 * into bwrap options, Landlock grants and Seatbelt deny rules, with a
 * warning for everything a runner cannot express exactly.
 *
 * Plan, then apply. ward_xlate_new() gathers the targets first:
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
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "glob.h"
#include "util/hide.h"
#include "util/landlock.h"
#include "internal.h"
#include "protect.h"
#include "translate_internal.h"
#include "util/util.h"

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
	enum ward_mode mode;
	const ward_rules *rules;
	size_t nrules;
	char *const *roots;		   /* borrowed from the policy */
	const struct ward_protected *prot; /* borrowed from the policy */
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

static struct ward_xlate_limits limits = {
    WARD_XLATE_MAX_ENTRIES,
    WARD_XLATE_MAX_MS,
    WARD_XLATE_MAX_TARGETS,
    false,
};

void ward_xlate_set_limits(const struct ward_xlate_limits *l)
{
	static const struct ward_xlate_limits defaults = {
	    WARD_XLATE_MAX_ENTRIES,
	    WARD_XLATE_MAX_MS,
	    WARD_XLATE_MAX_TARGETS,
	    false,
	};

	limits = l ? *l : defaults;
}

/* Whether the launcher will be able to hide paths by mounts (hide.h). */
static bool can_mount(void)
{
	return !limits.no_mounts && ward_hide_possible();
}

/* --- small helpers ------------------------------------------------------ */

static char *const empty_strv[] = {NULL};

static const char *runner_label(enum ward_runner r)
{
	return r == WARD_RUNNER_CUSTOM ? "custom (bwrap)" : ward_runner_name(r);
}

static bool is_bwrap(const struct ward_xlate *p)
{
	return p->runner == WARD_RUNNER_BWRAP ||
	       p->runner == WARD_RUNNER_CUSTOM;
}

/* Append a printf-formatted line to @sv. */
static void linef(struct ward_strv *sv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void linef(struct ward_strv *sv, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sv->oom = true;
		return;
	}
	ward_strv_push(sv, s);
	free(s);
}

/*
 * The printf-formatted @fmt pushed as a warning, and returned (the
 * caller frees it); NULL when out of memory (the plan then fails).
 */
__attribute__((format(printf, 2, 0))) static char *
vwarn(struct ward_xlate *p, const char *fmt, va_list ap)
{
	char *line = NULL;

	if (vasprintf(&line, fmt, ap) < 0) {
		p->oom = true;
		return NULL;
	}
	ward_strv_push(&p->warn, line);
	return line;
}

/*
 * A warning about a rule (or protected path) the runner does not enforce
 * at all: it is also a reason the call's enforcement is partial.
 */
__attribute__((format(printf, 2, 3))) static void
unenforced(struct ward_xlate *p, const char *fmt, ...)
{
	char *line;
	va_list ap;

	va_start(ap, fmt);
	line = vwarn(p, fmt, ap);
	va_end(ap);
	if (line)
		ward_strv_push(&p->partial, line);
	free(line);
}

/*
 * A rule the runner would have to drop: the plan is refused (the first
 * reason is kept) and the reason is also a warning, so `ward config check`
 * shows it. A rule ward cannot enforce never quietly becomes no rule.
 */
__attribute__((format(printf, 2, 3))) static void refuse(struct ward_xlate *p,
							 const char *fmt, ...)
{
	char *line;
	va_list ap;

	va_start(ap, fmt);
	line = vwarn(p, fmt, ap);
	va_end(ap);
	if (line && !p->refusal)
		p->refusal = line;
	else
		free(line);
}

/* `rule "SOURCE" (FILE:LINE)` for rule @i, into @buf. */
static const char *rule_name(char *buf, size_t len, const struct ward_xlate *p,
			     size_t i)
{
	struct ward_rule_info info;

	if (ward_rules_get(&info, p->rules, i) != 0) {
		snprintf(buf, len, "rule #%zu", i + 1);
		return buf;
	}
	if (info.origin.file && info.origin.line)
		snprintf(buf, len, "rule \"%s\" (%s:%u)", info.source,
			 info.origin.file, info.origin.line);
	else if (info.origin.file)
		snprintf(buf, len, "rule \"%s\" (%s)", info.source,
			 info.origin.file);
	else
		snprintf(buf, len, "rule \"%s\"", info.source);
	return buf;
}

/* What a target is for, for the description. */
static const char *target_why(char *buf, size_t len, const struct ward_xlate *p,
			      const struct target *t)
{
	switch (t->src) {
	case SRC_RULE:
		return rule_name(buf, len, p, t->idx);
	case SRC_GLOB:
		snprintf(buf, len, "glob rules below %s", p->g[t->idx].lex);
		return buf;
	case SRC_PROTECT:
		snprintf(buf, len, "protected: %s", p->prot[t->idx].what);
		return buf;
	}
	return "?";
}

static bool within_any_root(const struct ward_xlate *p, const char *path)
{
	for (size_t i = 0; p->roots[i]; i++) {
		if (util_path_within(path, p->roots[i]))
			return true;
	}
	return false;
}

/* The root that @path lies in or contains, or NULL. */
static const char *overlapping_root(const struct ward_xlate *p,
				    const char *path)
{
	for (size_t i = 0; p->roots[i]; i++) {
		if (util_path_within(path, p->roots[i]) ||
		    util_path_within(p->roots[i], path))
			return p->roots[i];
	}
	return NULL;
}

/*
 * Order paths parents first, a directory's descendants directly after it:
 * byte order with '/' below every other byte ("/a", "/a/b", "/a-b").
 */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;

		if (x != y) {
			x = x == '/' ? 1 : (x ? x : 0);
			y = y == '/' ? 1 : (y ? y : 0);
			return x < y ? -1 : 1;
		}
		if (!x)
			return 0;
	}
}

static int target_cmp(const void *a, const void *b)
{
	const struct target *x = a, *y = b;
	int c = path_cmp(x->path, y->path);

	if (c)
		return c;
	/* Same path: the stronger first, so the weaker is dropped. */
	return (int)y->access - (int)x->access;
}

static int str_cmp(const void *a, const void *b)
{
	return path_cmp(*(char *const *)a, *(char *const *)b);
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(now.tv_sec - t0->tv_sec) * 1000 +
	       (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Add a target; @path is copied. */
static void add_target(struct ward_xlate *p, const char *path,
		       enum ward_access access, bool is_dir, bool exists,
		       enum src src, size_t idx)
{
	char *copy;

	if (p->oom)
		return;
	if (p->nt == p->capt) {
		size_t cap = p->capt ? p->capt * 2 : 16;
		struct target *t = realloc(p->t, cap * sizeof(*t));

		if (!t) {
			p->oom = true;
			return;
		}
		p->t = t;
		p->capt = cap;
	}
	copy = strdup(path);
	if (!copy) {
		p->oom = true;
		return;
	}
	p->t[p->nt++] = (struct target){copy, access, is_dir, exists, src, idx};
}

/* lstat @path: exists? directory? (symlinks count as files) */
static bool probe_path(const char *path, bool *is_dir)
{
	struct stat st;

	*is_dir = false;
	if (lstat(path, &st) != 0)
		return false;
	*is_dir = S_ISDIR(st.st_mode);
	return true;
}

/* --- gathering targets -------------------------------------------------- */

/* Components of an absolute path ("/" has none). */
static unsigned components(const char *path)
{
	unsigned n = 0;

	if (strcmp(path, "/") == 0)
		return 0;
	for (const char *s = path; *s; s++)
		n += *s == '/';
	return n;
}

/* How deep below its prefix a glob can match (UINT_MAX with `**`). */
static unsigned glob_depth(const struct ward_rule_info *info)
{
	if (strstr(info->pattern, "**"))
		return UINT_MAX;
	return components(info->pattern) - components(info->literal_prefix);
}

static void add_group(struct ward_xlate *p, const struct ward_rule_info *info)
{
	unsigned depth = glob_depth(info);
	struct group *g;

	for (size_t i = 0; i < p->ng; i++) {
		if (strcmp(p->g[i].lex, info->literal_prefix) == 0) {
			if (depth > p->g[i].maxdepth)
				p->g[i].maxdepth = depth;
			if (info->access == WARD_ACCESS_NONE)
				p->g[i].has_none = true;
			return;
		}
	}
	g = realloc(p->g, (p->ng + 1) * sizeof(*g));
	if (!g) {
		p->oom = true;
		return;
	}
	p->g = g;
	g = &p->g[p->ng];
	memset(g, 0, sizeof(*g));
	g->lex = strdup(info->literal_prefix);
	g->can = util_path_canon(info->literal_prefix);
	g->maxdepth = depth;
	g->has_none = info->access == WARD_ACCESS_NONE;
	p->ng++;
	if (!g->lex || !g->can)
		p->oom = true;
}

static bool is_root(const struct ward_xlate *p, const char *path)
{
	for (size_t i = 0; p->roots[i]; i++) {
		if (strcmp(p->roots[i], path) == 0)
			return true;
	}
	return false;
}

/*
 * Whether a walk of group @g can change what the runner does. bwrap: a
 * read-only match outside every root is read-only already, so a group of
 * `r-` globs is walked only where it overlaps a root. The same holds for
 * Landlock (inside the roots it hides by mounts, see plan_landlock).
 */
static bool group_needed(const struct ward_xlate *p, const struct group *g)
{
	return g->has_none || overlapping_root(p, g->can);
}

/* Never walked: /proc (bwrap mounts its own; on Landlock the keeper's pid
 * namespace has its own as root) and /sys (no files); /dev only for bwrap,
 * which mounts its own — a Landlock run sees the host's /dev. */
static bool walk_skips(const struct ward_xlate *p, const char *path)
{
	return strcmp(path, "/proc") == 0 || strcmp(path, "/sys") == 0 ||
	       (is_bwrap(p) && strcmp(path, "/dev") == 0);
}

/* Whether @path is the path of a literal rule (gathered before the walk). */
static bool is_literal_target(const struct ward_xlate *p, const char *path)
{
	for (size_t i = 0; i < p->nlit; i++) {
		if (p->t[i].src == SRC_RULE && strcmp(p->t[i].path, path) == 0)
			return true;
	}
	return false;
}

/*
 * The part of a glob after its literal prefix (for "/ws/a*" it is "/a*"):
 * skip as many components of the (display) pattern as the prefix has.
 */
static const char *pattern_rest(const struct ward_rule_info *info)
{
	unsigned k = components(info->literal_prefix);
	const char *rest = info->pattern;

	for (unsigned c = 0; c < k && rest; c++)
		rest = strchr(rest + 1, '/');
	return rest ? rest : "";
}

/* One `r-`/`--` glob, prepared for the walk. */
struct wglob {
	enum ward_access access;
	const char *prefix; /* lexical literal prefix (the rules own it) */
	regex_t re;
	bool compiled;
	/* The last component when it holds only literal bytes and '*'. */
	char *last;
	/* The glob is PREFIX, "**" and LAST: LAST on the name decides. */
	bool simple;
};

/*
 * '*' and literal bytes only, byte-wise (no locale, no '/'): whether the
 * name @s matches @pat. Classic backtracking to the last star.
 */
static bool wild(const char *pat, const char *s)
{
	const char *star = NULL, *resume = NULL;

	while (*s) {
		if (*pat == '*') {
			star = pat++;
			resume = s;
		} else if (*pat && *pat == *s) {
			pat++;
			s++;
		} else if (star) {
			pat = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

/*
 * Prepare every glob rule for the walk. The walk sees each entry once, on
 * the way down, so only a glob's match at that entry matters (what lies
 * below a match is covered by the match): its last component must match
 * the entry's name, which rules most entries out without a regexec; a glob
 * of the common form PREFIX, "**", LAST (a rule for every .pem file below
 * the workspace, say) needs nothing else.
 */
static int wglobs_new(struct wglob **out, size_t *n, const struct ward_xlate *p)
{
	struct ward_rule_info info;
	struct wglob *v;
	locale_t c_loc, old;
	size_t k = 0;

	v = calloc(p->nrules + 1, sizeof(*v));
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!v || !c_loc) {
		free(v);
		if (c_loc)
			freelocale(c_loc);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->nrules; i++) {
		struct wglob *g = &v[k];
		const char *rest, *last;

		if (ward_rules_get(&info, p->rules, i) != 0 || !info.is_glob ||
		    info.access == WARD_ACCESS_RW)
			continue;
		g->access = info.access;
		g->prefix = info.literal_prefix;
		rest = pattern_rest(&info);
		last = strrchr(info.pattern, '/');
		last = last ? last + 1 : info.pattern;
		if (*last && !strpbrk(last, "?[") && !strstr(last, "**")) {
			g->last = strdup(last);
			if (!g->last)
				goto out_oom;
			g->simple =
			    strncmp(rest, "/**/", 4) == 0 && rest + 4 == last;
		}
		if (!g->simple) {
			old = uselocale(c_loc);
			g->compiled = regcomp(&g->re, info.regex,
					      REG_EXTENDED | REG_NOSUB) == 0;
			uselocale(old);
			if (!g->compiled)
				goto out_oom; /* rules.c compiled it once */
		}
		k++;
	}
	freelocale(c_loc);
	*out = v;
	*n = k;
	return 0;
out_oom:
	freelocale(c_loc);
	for (size_t i = 0; i <= k; i++) {
		free(v[i].last);
		if (v[i].compiled)
			regfree(&v[i].re);
	}
	free(v);
	return -ENOMEM;
}

static void wglobs_free(struct wglob *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].last);
		if (v[i].compiled)
			regfree(&v[i].re);
	}
	free(v);
}

/*
 * A directory read with getdents64 into a buffer of its own. readdir()
 * would cost, per directory, musl's fdopendir (an fstat and two fcntl), a
 * small heap buffer and about three getdents calls for a hundred entries;
 * the walk reads every directory of the tree (about a thousand in a
 * 100,000-file workspace).
 */
struct ward_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define DREAD_BUF 32768

struct dread {
	int fd;
	char *buf; /* DREAD_BUF bytes, the walker's for this depth */
	size_t len, pos;
};

/* The next entry of @r, or NULL at the end (or on an error). */
static struct ward_dirent64 *dread_next(struct dread *r)
{
	struct ward_dirent64 *e;

	if (r->pos >= r->len) {
		long n;

		do
			n = syscall(SYS_getdents64, r->fd, r->buf, DREAD_BUF);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			return NULL;
		r->len = (size_t)n;
		r->pos = 0;
	}
	e = (struct ward_dirent64 *)(void *)(r->buf + r->pos);
	r->pos += e->d_reclen;
	return e;
}

struct walker {
	struct ward_xlate *p;
	size_t gi;
	/* One getdents buffer per depth of the walk (grown on demand). */
	char **bufs;
	size_t nbufs;
	char lex[PATH_MAX];
	size_t llen;
	char can[PATH_MAX];
	size_t clen;
	/* The globs that can match inside this walk. */
	const struct wglob **cand;
	bool *always; /* the walk lies inside the glob's prefix */
	size_t ncand;
};

/* The strongest access a glob gives the entry @name (at w->lex) itself. */
static enum ward_access wmatch(const struct walker *w, const char *name)
{
	enum ward_access best = WARD_ACCESS_DEFAULT;

	for (size_t i = 0; i < w->ncand; i++) {
		const struct wglob *g = w->cand[i];

		if (g->access <= best)
			continue;
		if (g->last && !wild(g->last, name))
			continue;
		if (!w->always[i] && (!util_path_within(w->lex, g->prefix) ||
				      strcmp(w->lex, g->prefix) == 0))
			continue;
		if (g->simple || regexec(&g->re, w->lex, 0, NULL, 0) == 0)
			best = g->access;
	}
	return best;
}

/* Append "/name" to a path buffer; false when it would not fit. */
static bool path_push(char *buf, size_t *len, const char *name, size_t n)
{
	size_t at = *len == 1 && buf[0] == '/' ? 1 : *len;

	if (at + 1 + n >= PATH_MAX)
		return false;
	if (at != 1 || buf[0] != '/')
		buf[at++] = '/';
	memcpy(buf + at, name, n + 1);
	*len = at + n;
	return true;
}

/*
 * Walk the directory @fd (consumed) whose entries lie @depth levels below
 * the group's prefix. @under_ro: an ancestor already is a read-only target.
 */
static void walk_dir(struct walker *w, int fd, unsigned depth, bool under_ro)
{
	struct ward_xlate *p = w->p;
	struct group *g = &p->g[w->gi];
	size_t llen = w->llen, clen = w->clen;
	struct dread dr = {fd, NULL, 0, 0};
	struct dread *d = &dr;
	struct ward_dirent64 *e;

	if (depth >= w->nbufs) {
		size_t n = depth + 8;
		char **v = realloc(w->bufs, n * sizeof(*v));

		if (!v) {
			p->oom = true;
			close(fd);
			return;
		}
		memset(v + w->nbufs, 0, (n - w->nbufs) * sizeof(*v));
		w->bufs = v;
		w->nbufs = n;
	}
	if (!w->bufs[depth]) {
		w->bufs[depth] = malloc(DREAD_BUF);
		if (!w->bufs[depth]) {
			p->oom = true;
			close(fd);
			return;
		}
	}
	dr.buf = w->bufs[depth];
	while (!p->stop && !p->oom && (e = dread_next(d))) {
		const char *name = e->d_name;
		size_t n = strlen(name);
		unsigned char type = e->d_type;
		enum ward_access a;

		if (name[0] == '.' && (n == 1 || (n == 2 && name[1] == '.')))
			continue;
		p->entries++;
		if (p->entries > limits.max_entries ||
		    ((p->entries & 255) == 0 &&
		     elapsed_ms(&p->t0) > (long)limits.max_ms)) {
			p->stop = true;
			g->stopped = true;
			break;
		}
		if (!path_push(w->lex, &w->llen, name, n) ||
		    !path_push(w->can, &w->clen, name, n))
			goto next;
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW))
				goto next;
			type = S_ISDIR(st.st_mode)   ? DT_DIR
			       : S_ISLNK(st.st_mode) ? DT_LNK
						     : DT_REG;
		}
		/*
		 * A symlink is a name, not what it points to: hiding it would
		 * hide its target (mounts and grants follow links). The fence
		 * judges the target by its own path, and so do the runners.
		 */
		if (type == DT_LNK)
			goto next;
		a = wmatch(w, name);
		/* A literal rule's own path is a target already. */
		if (a != WARD_ACCESS_DEFAULT && a != WARD_ACCESS_RW &&
		    (a == WARD_ACCESS_NONE || !under_ro) &&
		    !is_literal_target(p, w->can)) {
			add_target(p, w->can, a, type == DT_DIR, true, SRC_GLOB,
				   w->gi);
			g->matches++;
		}
		if (a == WARD_ACCESS_NONE)
			goto next;
		if (type == DT_DIR && depth < g->maxdepth &&
		    !walk_skips(p, w->can)) {
			int sub = openat(d->fd, name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC | O_NONBLOCK);

			if (sub >= 0)
				walk_dir(w, sub, depth + 1,
					 under_ro || a == WARD_ACCESS_RO);
		}
	next:
		w->llen = llen;
		w->lex[llen] = '\0';
		w->clen = clen;
		w->can[clen] = '\0';
	}
	close(d->fd);
}

/* Walk every group, except those a `**` walk above them already covers. */
static void walk_groups(struct ward_xlate *p)
{
	struct wglob *globs = NULL;
	size_t nglobs = 0;
	struct walker *w;

	if (!p->ng)
		return;
	w = calloc(1, sizeof(*w));
	if (!w || wglobs_new(&globs, &nglobs, p) != 0) {
		free(w);
		p->oom = true;
		return;
	}
	w->cand = calloc(nglobs + 1, sizeof(*w->cand));
	w->always = calloc(nglobs + 1, sizeof(*w->always));
	if (!w->cand || !w->always) {
		p->oom = true;
		goto out_free;
	}
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	for (size_t i = 0; i < p->ng; i++)
		p->g[i].overlaps_root =
		    overlapping_root(p, p->g[i].can) != NULL;
	for (size_t i = 0; i < p->ng; i++) {
		struct group *g = &p->g[i];
		bool covered = !group_needed(p, g), is_dir;
		int fd;

		for (size_t j = 0; j < p->ng && !covered; j++) {
			struct group *o = &p->g[j];

			covered = j != i && o->maxdepth == UINT_MAX &&
				  group_needed(p, o) &&
				  strcmp(o->lex, g->lex) != 0 &&
				  util_path_within(g->lex, o->lex) &&
				  util_path_within(g->can, o->can);
		}
		if (covered || p->stop || !probe_path(g->can, &is_dir) ||
		    !is_dir || walk_skips(p, g->can))
			continue;
		fd = open(g->can, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		g->walked = true;
		w->p = p;
		w->gi = i;
		w->llen = strlen(g->lex);
		w->clen = strlen(g->can);
		if (w->llen >= PATH_MAX || w->clen >= PATH_MAX) {
			close(fd);
			continue;
		}
		memcpy(w->lex, g->lex, w->llen + 1);
		memcpy(w->can, g->can, w->clen + 1);
		w->ncand = 0;
		for (size_t j = 0; j < nglobs; j++) {
			bool inside = util_path_within(g->lex, globs[j].prefix);

			if (!inside &&
			    !util_path_within(globs[j].prefix, g->lex))
				continue;
			w->always[w->ncand] = inside;
			w->cand[w->ncand++] = &globs[j];
		}
		walk_dir(w, fd, 1, false);
	}
out_free:
	for (size_t i = 0; i < w->nbufs; i++)
		free(w->bufs[i]);
	free(w->bufs);
	free(w->cand);
	free(w->always);
	free(w);
	wglobs_free(globs, nglobs);
}

/*
 * Sort the targets parents first, then drop duplicates and what a stronger
 * ancestor already covers: anything beneath a hidden target, a read-only
 * target beneath a read-only one. The kept targets that are ancestors of
 * the current one form a stack (sorted order puts a directory's whole
 * subtree directly after it).
 */
static void reduce_targets(struct ward_xlate *p)
{
	size_t out = 0, depth = 0, *stack;

	if (!p->nt)
		return;
	qsort(p->t, p->nt, sizeof(*p->t), target_cmp);
	stack = malloc(p->nt * sizeof(*stack));
	if (!stack) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nt; i++) {
		struct target t = p->t[i];
		bool covered = false;

		while (depth &&
		       !util_path_within(t.path, p->t[stack[depth - 1]].path))
			depth--;
		for (size_t k = 0; k < depth && !covered; k++) {
			enum ward_access a = p->t[stack[k]].access;

			covered = a == WARD_ACCESS_NONE || a == t.access;
		}
		if (covered) {
			free(t.path);
			continue;
		}
		p->t[out] = t;
		stack[depth++] = out++;
	}
	free(stack);
	p->nt = out;
}

/*
 * Gather the targets: literal rules, protected paths, glob matches. bwrap:
 * ward's own missing directories inside a writable root are listed for the
 * apply step to create (ward_xlate_apply), and planned as existing.
 */
/* The last parent directory made canonical (rules come in runs). */
struct canon_cache {
	char *dir;   /* as the rule spells it */
	char *canon; /* util_path_canon(dir) */
	int fd;	     /* canon, O_PATH (-1: not open) */
	/* The same for dir's own parent (NULL: util_path_canon(dir)). */
	struct canon_cache *up;
};

/*
 * util_path_canon(@path) for a literal rule, and whether it exists (lstat:
 * a symbolic link counts as a file). Rules listed together tend to share a
 * parent: the parent is made canonical and opened once (realpath reads a
 * link per component), the last component costs one fstatat below it —
 * unless it is a link, "." or "..", which get the whole treatment. NULL on
 * ENOMEM.
 */
static char *canon_rule(struct canon_cache *cc, const char *path, bool *exists,
			bool *is_dir)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	struct stat st;
	char *out;

	if (path[0] != '/' || !*name || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		goto out_full;
	if (!cc->dir || strlen(cc->dir) != dlen ||
	    memcmp(cc->dir, path, dlen) != 0) {
		free(cc->dir);
		free(cc->canon);
		if (cc->fd >= 0)
			close(cc->fd);
		cc->fd = -1;
		cc->canon = NULL;
		cc->dir = strndup(path, dlen ? dlen : 1);
		if (!cc->dir)
			return NULL;
		if (cc->up && dlen) {
			bool e, d;

			cc->canon = canon_rule(cc->up, cc->dir, &e, &d);
		} else {
			cc->canon = util_path_canon(cc->dir);
		}
		if (!cc->canon) {
			free(cc->dir);
			cc->dir = NULL;
			return NULL;
		}
		if (!dlen)
			cc->dir[0] = '\0'; /* "/" spelled as "" */
		/* One component below the parent's descriptor when that is
		 * the descriptor of this directory's parent and the component
		 * a directory there (O_NOFOLLOW: not a link), else the whole
		 * path. */
		if (cc->up && cc->up->fd >= 0 && dlen) {
			const char *base = strrchr(cc->dir, '/') + 1;
			size_t plen = (size_t)(base - 1 - cc->dir);

			if (strcmp(base, ".") && strcmp(base, "..") &&
			    cc->up->dir && strlen(cc->up->dir) == plen &&
			    memcmp(cc->up->dir, cc->dir, plen) == 0)
				cc->fd = openat(cc->up->fd, base,
						O_PATH | O_DIRECTORY |
						    O_NOFOLLOW | O_CLOEXEC);
		}
		if (cc->fd < 0)
			cc->fd =
			    open(cc->canon, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (asprintf(&out, "%s/%s",
		     strcmp(cc->canon, "/") == 0 ? "" : cc->canon, name) < 0)
		return NULL;
	if ((cc->fd >= 0 ? fstatat(cc->fd, name, &st, AT_SYMLINK_NOFOLLOW)
			 : lstat(out, &st)) != 0) {
		*exists = *is_dir = false;
		return out;
	}
	if (!S_ISLNK(st.st_mode)) {
		*exists = true;
		*is_dir = S_ISDIR(st.st_mode);
		return out;
	}
	free(out);
out_full:
	out = util_path_canon(path);
	if (out)
		*exists = probe_path(out, is_dir);
	return out;
}

static void gather(struct ward_xlate *p)
{
	/* Rules' parents, and their parents (siblings share those). */
	struct canon_cache up = {NULL, NULL, -1, NULL};
	struct canon_cache cc = {NULL, NULL, -1, &up};
	struct ward_rule_info info;
	bool is_dir, exists;

	for (size_t i = 0; i < p->nrules; i++) {
		char *canon;

		if (ward_rules_get(&info, p->rules, i) != 0 ||
		    info.access == WARD_ACCESS_RW)
			continue;
		if (info.is_glob) {
			add_group(p, &info);
			continue;
		}
		canon = canon_rule(&cc, info.pattern, &exists, &is_dir);
		if (!canon) {
			p->oom = true;
			break;
		}
		add_target(p, canon, info.access, is_dir, exists, SRC_RULE, i);
		free(canon);
	}
	free(cc.dir);
	free(cc.canon);
	if (cc.fd >= 0)
		close(cc.fd);
	free(up.dir);
	free(up.canon);
	if (up.fd >= 0)
		close(up.fd);
	if (p->oom)
		return;
	for (size_t j = 0; j < p->nprot; j++) {
		const struct ward_protected *pr = &p->prot[j];

		exists = probe_path(pr->path, &is_dir);
		/*
		 * bwrap can bind only what exists: ward's own missing
		 * directories inside a writable root are bound as if they
		 * existed, and the apply step (ward_xlate_apply) creates them
		 * before the run. Never here: planning changes nothing.
		 */
		if (!exists && pr->kind == WARD_PROTECT_HOME && is_bwrap(p) &&
		    within_any_root(p, pr->path)) {
			ward_strv_push(&p->create, pr->path);
			exists = is_dir = true;
		}
		p->prot_exists[j] = exists;
		add_target(p, pr->path, pr->access, is_dir, exists, SRC_PROTECT,
			   j);
	}
	p->nlit = p->nt;
	walk_groups(p);
}

/* Every glob rule of group @gi, by rule index, through @fn. */
static bool rule_in_group(const struct ward_xlate *p, size_t i, size_t gi,
			  struct ward_rule_info *info)
{
	return ward_rules_get(info, p->rules, i) == 0 && info->is_glob &&
	       info->access != WARD_ACCESS_RW &&
	       strcmp(info->literal_prefix, p->g[gi].lex) == 0;
}

/* The `rw` rules that are not writable roots (both runners and fence). */
static void warn_rw(struct ward_xlate *p)
{
	struct ward_rule_info info;
	char name[PATH_MAX + 256];

	if (p->mode != WARD_MODE_WORKSPACE_WRITE)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		char *real;
		struct stat st;
		bool ok;

		if (ward_rules_get(&info, p->rules, i) != 0 ||
		    info.access != WARD_ACCESS_RW)
			continue;
		real = realpath(info.pattern, NULL);
		ok = real && stat(real, &st) == 0 && S_ISDIR(st.st_mode);
		free(real);
		if (!ok)
			linef(&p->warn,
			      "%s: %s: %s is not an existing directory, so it "
			      "is not a writable root (on any runner, nor in "
			      "the fs fence)",
			      runner_label(p->runner),
			      rule_name(name, sizeof(name), p, i),
			      info.pattern);
	}
}

/*
 * The glob warnings every runner that expands globs shares: a walk that
 * stopped at a bound, and matches that did not exist at confine time.
 * @only_hidden: name only `--` globs (Landlock: `r-` outside the roots is
 * exact; inside them it gets its own warning).
 */
static void warn_globs(struct ward_xlate *p, bool only_hidden, bool skip_roots)
{
	struct ward_rule_info info;
	char name[PATH_MAX + 256], found[PATH_MAX + 64];
	const char *r = runner_label(p->runner);

	for (size_t gi = 0; gi < p->ng; gi++) {
		const struct group *g = &p->g[gi];

		for (size_t i = 0; i < p->nrules; i++) {
			if (!rule_in_group(p, i, gi, &info))
				continue;
			if (only_hidden && info.access != WARD_ACCESS_NONE)
				continue;
			if ((skip_roots && g->overlaps_root) ||
			    !group_needed(p, g))
				continue;
			rule_name(name, sizeof(name), p, i);
			if (g->stopped)
				linef(
				    &p->warn,
				    "%s: %s: the walk below %s stopped at its "
				    "bound (%zu entries or %u ms): matches "
				    "beyond it are not covered by %s; the fs "
				    "fence still covers them",
				    r, name, g->can, limits.max_entries,
				    limits.max_ms, r);
			if (g->walked)
				snprintf(found, sizeof(found),
					 " (%zu path%s below %s)", g->matches,
					 g->matches == 1 ? "" : "s", g->can);
			else
				found[0] = '\0';
			linef(&p->warn,
			      "%s: %s: covers only what it matches at confine "
			      "time%s; files created later are not covered by "
			      "%s (the fs fence still covers them)",
			      r, name, found, r);
		}
	}
}

/* --- bwrap -------------------------------------------------------------- */

static bool bwrap_private(const struct ward_xlate *p, const char *path)
{
	if (util_path_within(path, "/proc") || util_path_within(path, "/dev"))
		return true;
	/* In read-only /tmp is a private tmpfs (the workspace bound back). */
	return p->mode == WARD_MODE_READ_ONLY &&
	       util_path_within(path, "/tmp") &&
	       !util_path_within(path, ward_policy_workspace(p->policy));
}

/* The outermost writable root @path lies strictly beneath, or NULL. */
static const char *outer_root(const struct ward_xlate *p, const char *path)
{
	const char *best = NULL;

	for (size_t i = 0; p->roots[i]; i++) {
		const char *r = p->roots[i];

		if (util_path_within(path, r) && strcmp(path, r) != 0 &&
		    (!best || strlen(r) < strlen(best)))
			best = r;
	}
	return best;
}

/*
 * Pins: every directory between a target and the outermost writable root
 * above it is bound onto itself, which makes it a mount point. A mount
 * point cannot be renamed or removed (EBUSY), so a command cannot move
 * `.git` aside and build a new one with its own hooks around the read-only
 * mounts, nor move a hidden file's directory aside and put a file of its
 * own where the hidden one was. Directories inside a kept target need no
 * pin. The pins of @kept, sorted (a parent before its children) and
 * without duplicates, into @out (the caller's).
 */
static void collect_pins(struct ward_xlate *p, struct target *const *kept,
			 size_t nk, struct ward_strv *out)
{
	struct ward_strv pins = {0};
	char buf[PATH_MAX];
	const char **sorted;

	if (!nk)
		return;
	/* The kept paths sorted, to ask "is this directory one?" by binary
	 * search (hundreds of matches: no quadratic scan). */
	sorted = malloc(nk * sizeof(*sorted));
	if (!sorted) {
		p->oom = true;
		return;
	}
	for (size_t k = 0; k < nk; k++)
		sorted[k] = kept[k]->path;
	qsort(sorted, nk, sizeof(*sorted), str_cmp);
	for (size_t k = 0; k < nk; k++) {
		const char *w = outer_root(p, kept[k]->path);
		size_t wl, cut = SIZE_MAX;
		char *s;

		if (!w)
			continue;
		wl = strlen(w);
		/* The outermost parent that is itself kept (its length):
		 * it and what lies inside it need no pin. */
		snprintf(buf, sizeof(buf), "%s", kept[k]->path);
		while ((s = strrchr(buf, '/')) != NULL && s != buf) {
			const char *key = buf;

			*s = '\0';
			if (bsearch(&key, sorted, nk, sizeof(*sorted),
				    str_cmp))
				cut = (size_t)(s - buf);
		}
		/* The parents up to the outermost root, exclusive. */
		snprintf(buf, sizeof(buf), "%s", kept[k]->path);
		for (s = strrchr(buf, '/'); s && (size_t)(s - buf) > wl;
		     s = strrchr(buf, '/')) {
			*s = '\0';
			if (is_root(p, buf))
				break;
			if ((size_t)(s - buf) < cut)
				ward_strv_push(&pins, buf);
		}
	}
	free(sorted);
	if (pins.oom) {
		ward_strv_discard(&pins);
		p->oom = true;
		return;
	}
	if (pins.n)
		qsort(pins.v, pins.n, sizeof(*pins.v), str_cmp);
	for (size_t i = 0; i < pins.n; i++) {
		if (i && strcmp(pins.v[i], pins.v[i - 1]) == 0)
			continue;
		ward_strv_push(out, pins.v[i]);
	}
	ward_strv_discard(&pins);
}

/* bwrap's pins: `--bind A A` per directory (see collect_pins). */
static void bwrap_pins(struct ward_xlate *p, struct target **kept, size_t nk)
{
	struct ward_strv pins = {0};

	collect_pins(p, kept, nk, &pins);
	for (size_t i = 0; i < pins.n; i++) {
		ward_strv_push(&p->bw, "--bind");
		ward_strv_push(&p->bw, pins.v[i]);
		ward_strv_push(&p->bw, pins.v[i]);
		linef(&p->desc,
		      "--bind %s %s  (pins a parent of a read-only or hidden "
		      "path: it cannot be renamed away)",
		      pins.v[i], pins.v[i]);
	}
	if (pins.oom)
		p->oom = true;
	ward_strv_discard(&pins);
}

/* "--hide P" or "--hide-ro P" for the launcher, with its description. */
static void push_hide(struct ward_xlate *p, const struct target *t,
		      enum ward_access access)
{
	char why[PATH_MAX + 256];
	const char *opt = access == WARD_ACCESS_NONE ? "--hide" : "--hide-ro";

	ward_strv_push(&p->ll_hide, opt);
	ward_strv_push(&p->ll_hide, t->path);
	linef(&p->desc, "%s %s  (%s)", opt, t->path,
	      target_why(why, sizeof(why), p, t));
}

/*
 * The launcher's mounts for @v (matches of the rules inside the writable
 * roots): the pins of their parents first (`--pin D`, outermost first:
 * see collect_pins), then the read-only binds (`--hide-ro P`: a hide inside
 * one lands on the copy), then the hides (`--hide P`). The Landlock runner
 * and the Landlock layer inside bwrap use the same list.
 */
static void launcher_mounts(struct ward_xlate *p, struct target **v, size_t n)
{
	struct ward_strv pins = {0};

	collect_pins(p, v, n, &pins);
	for (size_t i = 0; i < pins.n; i++) {
		ward_strv_push(&p->ll_hide, "--pin");
		ward_strv_push(&p->ll_hide, pins.v[i]);
		linef(&p->desc,
		      "--pin %s  (a parent of a read-only or hidden path, "
		      "bound onto itself: it cannot be renamed away)",
		      pins.v[i]);
	}
	if (pins.oom)
		p->oom = true;
	ward_strv_discard(&pins);
	for (size_t k = 0; k < n; k++) {
		if (v[k]->access == WARD_ACCESS_RO)
			push_hide(p, v[k], WARD_ACCESS_RO);
	}
	for (size_t k = 0; k < n; k++) {
		if (v[k]->access == WARD_ACCESS_NONE)
			push_hide(p, v[k], WARD_ACCESS_NONE);
	}
}

void ward_bwrap_push_proc(struct ward_strv *sv)
{
	static const char *const cover[] = {
	    "/proc/sys",
	    "/proc/sysrq-trigger",
	    "/proc/irq",
	    "/proc/bus",
	};

	ward_strv_push(sv, "--proc");
	ward_strv_push(sv, "/proc");
	/*
	 * bwrap covers these itself only when access(W_OK) says it may write
	 * them, and on a sysctl directory that always answers EACCES: the
	 * sysctls stay writable to a command that keeps kernel uid 0 (any
	 * root caller), which the sysctl code trusts without a capability —
	 * kernel.core_pattern alone is a host-root escape. So they are bound
	 * read-only here whatever bwrap decides ("-try": a kernel without
	 * SysRq has no /proc/sysrq-trigger).
	 */
	for (size_t i = 0; i < sizeof(cover) / sizeof(cover[0]); i++) {
		ward_strv_push(sv, "--ro-bind-try");
		ward_strv_push(sv, cover[i]);
		ward_strv_push(sv, cover[i]);
	}
}

/*
 * A read-only bind of @path is recursive and takes the host's tree: when
 * @path holds /dev or /proc (only "/" does, inside a writable root of "/")
 * it would cover bwrap's private ones with the host's (the host's
 * processes visible, /dev/null not writable). Mount them again on top.
 */
static void bwrap_private_again(struct ward_xlate *p, const char *path)
{
	if (util_path_within("/dev", path)) {
		ward_strv_push(&p->bw, "--dev");
		ward_strv_push(&p->bw, "/dev");
		linef(&p->desc,
		      "--dev /dev  (the private /dev again, over the "
		      "read-only %s)",
		      path);
	}
	if (util_path_within("/proc", path)) {
		ward_bwrap_push_proc(&p->bw);
		linef(&p->desc,
		      "--proc /proc  (the private /proc again, over "
		      "the read-only %s)",
		      path);
	}
}

/*
 * A read-only @path outside every writable root that contains writable
 * roots (`r- /`, `r- /var` around a workspace in /var/tmp): outside the
 * roots everything is read-only already, so only the roots inside it are
 * bound read-only (the outermost ones; what lies inside them follows). A
 * bind of @path itself would also lay the host's tree over the private
 * /dev, /proc and /tmp.
 */
static void bwrap_ro_roots(struct ward_xlate *p, const char *path,
			   const char *why)
{
	for (size_t i = 0; p->roots[i]; i++) {
		const char *r = p->roots[i];
		bool covered = false;

		if (!util_path_within(r, path))
			continue;
		for (size_t j = 0; p->roots[j] && !covered; j++)
			covered = j != i && util_path_within(r, p->roots[j]) &&
				  (strcmp(r, p->roots[j]) != 0 || j < i);
		if (covered)
			continue;
		ward_strv_push(&p->bw, "--ro-bind");
		ward_strv_push(&p->bw, r);
		ward_strv_push(&p->bw, r);
		linef(&p->desc,
		      "--ro-bind %s %s  (%s: the writable root lies inside %s, "
		      "which is read-only already outside the roots)",
		      r, r, why, path);
	}
}

static void plan_bwrap(struct ward_xlate *p)
{
	struct target **kept = NULL, **inner = NULL;
	size_t nk = 0, ni = 0, budget = limits.max_targets, dropped = 0;
	char why[PATH_MAX + 256];
	const char *r = runner_label(p->runner);
	/*
	 * The rules' matches inside the writable roots go to the Landlock
	 * layer inside bwrap when there is one and it can mount: one mount
	 * namespace and one mount call per match there, where bwrap re-reads
	 * its whole mount table for every one of its own mounts (seconds for
	 * hundreds of matches). Protected paths and what lies outside the
	 * roots stay in bwrap's profile. (Asked only when there is such a
	 * match: can_mount() forks once per process.)
	 */
	int to_inner = p->inner_hides ? -1 : 0;

	for (size_t i = 0; i < p->nt; i++) {
		struct target *t = &p->t[i];

		if (t->src != SRC_RULE || t->exists || p->warned[t->idx] ||
		    !within_any_root(p, t->path))
			continue;
		p->warned[t->idx] = true;
		linef(&p->warn,
		      "%s: %s: %s does not exist at confine time, so %s cannot "
		      "keep a command from creating it inside the writable "
		      "root; ward's file operations (the fs fence) still apply "
		      "the rule",
		      r, rule_name(why, sizeof(why), p, t->idx), t->path, r);
	}
	warn_globs(p, false, false);
	reduce_targets(p);
	if (p->oom)
		return;
	kept = calloc(p->nt ? p->nt : 1, sizeof(*kept));
	inner = calloc(p->nt ? p->nt : 1, sizeof(*inner));
	if (!kept || !inner) {
		free(kept);
		free(inner);
		p->oom = true;
		return;
	}
	for (size_t i = 0; i < p->nt; i++) {
		struct target *t = &p->t[i];

		target_why(why, sizeof(why), p, t);
		if (t->access == WARD_ACCESS_RO &&
		    !overlapping_root(p, t->path)) {
			/* Protected paths outside the roots: nothing to say. */
			if (t->src != SRC_PROTECT)
				linef(
				    &p->desc,
				    "%s: outside every writable root, already "
				    "read-only  (%s)",
				    t->path, why);
			continue;
		}
		if (t->src == SRC_PROTECT &&
		    (p->prot[t->idx].flags & WARD_PROTECT_LINK)) {
			linef(&p->desc,
			      "%s: a symbolic link: a mount would follow it, "
			      "so bwrap keeps its target only; ward run checks "
			      "the link after the run  (%s)",
			      t->path, why);
			continue;
		}
		if (!t->exists) {
			if (t->src == SRC_PROTECT &&
			    p->prot[t->idx].kind == WARD_PROTECT_HOME &&
			    within_any_root(p, t->path))
				linef(
				    &p->desc,
				    "%s: created (mode 0700) at confine time, "
				    "then bound read-only  (%s)",
				    t->path, why);
			else if (t->src == SRC_PROTECT &&
				 p->prot[t->idx].kind != WARD_PROTECT_HOME &&
				 within_any_root(p, t->path))
				linef(
				    &p->desc,
				    "%s: does not exist; bwrap cannot bind a "
				    "missing path without creating it, so ward "
				    "run's guard moves it away if a command "
				    "creates it  (%s)",
				    t->path, why);
			else
				linef(&p->desc,
				      "%s: does not exist, nothing to mount  "
				      "(%s)",
				      t->path, why);
			continue;
		}
		if (bwrap_private(p, t->path)) {
			linef(&p->desc,
			      "%s: private inside the sandbox already  (%s)",
			      t->path, why);
			continue;
		}
		if (t->src != SRC_PROTECT && budget == 0) {
			dropped++;
			continue;
		}
		if (t->src != SRC_PROTECT)
			budget--;
		if (to_inner && t->src != SRC_PROTECT &&
		    within_any_root(p, t->path) &&
		    (to_inner > 0 || (to_inner = can_mount() ? 1 : 0) > 0))
			inner[ni++] = t;
		else
			kept[nk++] = t;
	}
	if (dropped)
		refuse(p,
		       "%s: the rules name more than %zu paths to mount (%zu "
		       "more): ward refuses to run rather than leave them "
		       "uncovered; narrow the rules (a directory instead of "
		       "its files)",
		       r, limits.max_targets, dropped);
	bwrap_pins(p, kept, nk);
	for (size_t k = 0; k < nk; k++) {
		struct target *t = kept[k];

		if (t->access != WARD_ACCESS_RO)
			continue;
		target_why(why, sizeof(why), p, t);
		if (!within_any_root(p, t->path)) {
			bwrap_ro_roots(p, t->path, why);
			continue;
		}
		ward_strv_push(&p->bw, "--ro-bind");
		ward_strv_push(&p->bw, t->path);
		ward_strv_push(&p->bw, t->path);
		linef(&p->desc, "--ro-bind %s %s  (%s)", t->path, t->path, why);
		bwrap_private_again(p, t->path);
	}
	for (size_t k = 0; k < nk; k++) {
		struct target *t = kept[k];

		if (t->access != WARD_ACCESS_NONE)
			continue;
		target_why(why, sizeof(why), p, t);
		if (t->is_dir) {
			/* Hidden, not just read-only: an empty, read-only
			 * tmpfs takes the directory's place. */
			ward_strv_push(&p->bw, "--tmpfs");
			ward_strv_push(&p->bw, t->path);
			ward_strv_push(&p->bw, "--remount-ro");
			ward_strv_push(&p->bw, t->path);
			linef(&p->desc, "--tmpfs %s --remount-ro %s  (%s)",
			      t->path, t->path, why);
		} else {
			/* /dev/null on a nodev mount: neither readable nor
			 * writable (EACCES). */
			ward_strv_push(&p->bw, "--ro-bind");
			ward_strv_push(&p->bw, "/dev/null");
			ward_strv_push(&p->bw, t->path);
			linef(&p->desc, "--ro-bind /dev/null %s  (%s)", t->path,
			      why);
		}
	}
	/* The Landlock layer's (landlock-run --pin/--hide-ro/--hide). */
	launcher_mounts(p, inner, ni);
	free(kept);
	free(inner);
}

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
static void complement(struct comp *c, const char *dir, int depth)
{
	bool tainted = false;
	struct dirent *e;
	DIR *d;
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
		size_t lo = 0, hi = c->nexcl;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (path_cmp(c->excl[mid], dir) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
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
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int e_ = errno;

		if (fd >= 0)
			close(fd);
		linef(&c->p->warn,
		      "landlock: cannot list %s (%s) to hide what lies inside "
		      "it, so nothing inside it is readable",
		      dir, strerror(e_));
		return;
	}
	while (!c->over && (e = readdir(d))) {
		char child[PATH_MAX];
		size_t len = strlen(dir);
		unsigned char type = e->d_type;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		memcpy(child, dir, len + 1);
		if (!path_push(child, &len, e->d_name, strlen(e->d_name)))
			continue;
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dirfd(d), e->d_name, &st,
				    AT_SYMLINK_NOFOLLOW))
				continue;
			type = S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type == DT_LNK)
			continue;
		complement(c, child, depth + 1);
	}
	closedir(d);
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
				if (!rule_in_group(p, r, v[i]->idx, &info) ||
				    info.access != v[i]->access)
					continue;
				rule_name(name, sizeof(name), p, r);
			} else {
				target_why(name, sizeof(name), p, v[i]);
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
		bool inside = !home && within_any_root(p, t->path);

		if (t->access != WARD_ACCESS_NONE || !t->exists ||
		    (inside && !p->inroot_complement))
			continue;
		ward_strv_push(&hidden, t->path);
		if (!home) {
			ward_strv_push(&ruled, t->path);
			mounted[nmounted++] = t;
		}
	}
	if (hidden.n)
		qsort(hidden.v, hidden.n, sizeof(*hidden.v), str_cmp);
	c.p = p;
	c.out = &ro;
	c.tainted = &tainted;
	c.excl = hidden.v;
	c.nexcl = hidden.n;
	c.budget = limits.max_targets;
	if (hidden.n)
		complement(&c, "/", 0);
	else
		ward_strv_push(&ro, "/");
	list = join(hidden.v, hidden.n);
	if (c.over && !p->inroot_complement && nmounted && can_mount()) {
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

			if (t->access == WARD_ACCESS_NONE && t->exists &&
			    (home || !within_any_root(p, t->path)))
				push_hide(p, t, WARD_ACCESS_NONE);
		}
		linef(&p->desc,
		      "read: --ro /, the hidden paths mounted over "
		      "(their complement needs more than %zu grants)",
		      limits.max_targets);
	} else if (c.over) {
		char *rules = rules_of(p, mounted, nmounted);

		refuse(p,
		       "landlock: hiding %s (%s) needs more than %zu read "
		       "grants and %s: ward refuses to run rather than leave "
		       "it readable; narrow the rules",
		       list ? list : "the hidden paths",
		       rules ? rules : "ward's state directory",
		       limits.max_targets,
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

			linef(&p->warn,
			      "landlock: hides %s by granting read on the "
			      "entries beside it instead of on its parent "
			      "directories: those directories cannot be "
			      "listed, and entries created in %s during the "
			      "run are not readable",
			      rl ? rl : "the hidden paths",
			      dirs ? dirs : "them");
			free(rl);
		}
		linef(&p->desc,
		      "read: %zu grants, everything but %s (complement: %s "
		      "cannot be listed, and entries created there during "
		      "the run are not readable)",
		      ro.n, list ? list : "the hidden paths",
		      dirs ? dirs : "the directories above them");
	} else {
		linef(&p->desc, "read: --ro /");
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
			else if (util_path_within(pr->path, w))
				ward_strv_push(&excl, pr->path);
		}
		if (inside) {
			linef(&p->warn,
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
		qsort(excl.v, excl.n, sizeof(*excl.v), str_cmp);
		c.p = p;
		c.out = &part;
		c.tainted = &tainted;
		c.excl = excl.v;
		c.nexcl = excl.n;
		c.budget = limits.max_targets;
		complement(&c, w, 0);
		list = join(excl.v, excl.n);
		dirs = join(tainted.v, tainted.n);
		if (c.over && nruled) {
			char *rules = rules_of(p, ruled, nruled);

			refuse(p,
			       "landlock: %s: keeping %s from being written "
			       "inside the writable root %s needs a mount "
			       "namespace, which cannot be made here (user "
			       "namespaces are denied), or more than %zu "
			       "grants: ward refuses to run rather than "
			       "leave it writable; narrow the rules",
			       rules ? rules : "the rules",
			       list ? list : "the paths", w,
			       limits.max_targets);
			free(rules);
		} else if (c.over) {
			/* Fail closed: ward's own files must stay read-only. */
			linef(&p->warn,
			      "landlock: keeping %s read-only inside the "
			      "writable root %s needs more than %zu grants, so "
			      "%s is not writable at all",
			      list ? list : "ward's directories", w,
			      limits.max_targets, w);
		} else {
			for (size_t k = 0; k < part.n; k++)
				push_new(&rw, part.v[k]);
			linef(
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
		linef(&p->desc, "write: --rw %s", rw.v[i]);
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

		if (t->src == SRC_PROTECT || !t->exists ||
		    !within_any_root(p, t->path))
			continue;
		p->inroot[p->ninroot++] = t;
	}
	if (!p->ninroot)
		return;
	if (!can_mount()) {
		p->inroot_complement = true;
		return;
	}
	launcher_mounts(p, p->inroot, p->ninroot);
}

static void plan_landlock(struct ward_xlate *p)
{
	struct ward_strv traps = {0};
	struct ward_rule_info info;
	char name[PATH_MAX + 256];

	/* Literal rules and their matches around a root; missing ones. */
	for (size_t i = 0; i < p->nt; i++) {
		const struct target *t = &p->t[i];
		const char *root = overlapping_root(p, t->path);

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
		if (within_any_root(p, t->path)) {
			/* Hidden by a mount (or carved out) below. */
			if (t->src != SRC_RULE || t->exists ||
			    p->warned[t->idx])
				continue;
			p->warned[t->idx] = true;
			linef(&p->warn,
			      "landlock: %s: %s does not exist at confine "
			      "time, so landlock cannot keep a command from "
			      "creating it inside the writable root; ward's "
			      "file operations (the fs fence) still apply the "
			      "rule",
			      rule_name(name, sizeof(name), p, t->idx),
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
		rule_name(name, sizeof(name), p, t->idx);
		if (t->access == WARD_ACCESS_NONE)
			unenforced(
			    p,
			    "landlock: %s: hides %s, but the writable root "
			    "%s inside it stays readable and writable to "
			    "commands (Landlock grants only add up); ward's "
			    "file operations (the fs fence) still apply the "
			    "rule",
			    name, t->path, root);
		else
			unenforced(
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
				!within_any_root(p, p->t[i].path) &&
				overlapping_root(p, p->t[i].path);
		if (!holds)
			continue;
		for (size_t i = 0; i < p->nrules; i++) {
			if (!rule_in_group(p, i, gi, &info) || p->warned[i])
				continue;
			p->warned[i] = true;
			unenforced(
			    p,
			    "landlock: %s: matches a directory that holds a "
			    "writable root (Landlock grants only add up): "
			    "commands can still %s the root; ward's file "
			    "operations (the fs fence) still apply the rule",
			    rule_name(name, sizeof(name), p, i),
			    info.access == WARD_ACCESS_NONE ? "read and write"
							    : "write");
		}
	}
	if (traps.n) {
		char *list = join(traps.v, traps.n);

		unenforced(p,
			   "landlock: cannot keep the protected path%s %s "
			   "read-only inside the writable roots (Landlock "
			   "grants only add up): a command can change %s "
			   "during the run; ward run's guard moves what it "
			   "changed to the quarantine and puts the original "
			   "back after the run (not for `ward confine`), and "
			   "ward's file operations (the fs fence) refuse to "
			   "change %s",
			   traps.n == 1 ? "" : "s", list ? list : "?",
			   traps.n == 1 ? "it" : "them",
			   traps.n == 1 ? "it" : "them");
		free(list);
	}
	if (traps.oom)
		p->oom = true;
	ward_strv_discard(&traps);
	/* Every glob: hidden (or carved out) as its matches are now. */
	warn_globs(p, false, false);
	reduce_targets(p);
	if (p->oom)
		return;
	landlock_inroot(p);
	if (p->oom)
		return;
	landlock_ro(p);
	landlock_rw(p);
}

/* --- seatbelt ----------------------------------------------------------- */

/* An SBPL string literal; a control character cannot be expressed. */
static int sbpl_string(FILE *f, const char *s)
{
	for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
		if (*q < 0x20 || *q == 0x7f)
			return ward_err(WARD_EINVAL,
					"seatbelt profile: path with a control "
					"character cannot be expressed: %s",
					s);
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
	return 0;
}

/*
 * The regex of glob rule @info against canonical paths: Seatbelt sees real
 * paths (/private/tmp for /tmp on macOS), so a literal prefix that
 * resolves elsewhere is replaced by its canonical form and the glob
 * translated again. *out is malloc'd.
 */
static int seatbelt_regex(char **out, const struct ward_rule_info *info)
{
	const char *rest = pattern_rest(info), *why = NULL;
	char *canon = util_path_canon(info->literal_prefix), *glob = NULL;
	unsigned char *lit = NULL;
	size_t cl, rl, at;
	int err;

	if (!canon)
		return -ENOMEM;
	if (strcmp(canon, info->literal_prefix) == 0) {
		free(canon);
		*out = strdup(info->regex);
		return *out ? 0 : -ENOMEM;
	}
	cl = strcmp(canon, "/") == 0 ? 0 : strlen(canon);
	rl = strlen(rest);
	glob = malloc(cl + rl + 1);
	lit = calloc(cl + rl + 1, 1);
	if (!glob || !lit) {
		err = -ENOMEM;
		goto out_free;
	}
	memcpy(glob, canon, cl);
	memset(lit, 1, cl); /* the canonical prefix is literal text */
	memcpy(glob + cl, rest, rl + 1);
	err = ward_glob_translate(out, glob, cl + rl, lit, WARD_GLOB_SUBTREE,
				  &why, &at);
	if (err == WARD_EINVAL)
		err = ward_err(err, "seatbelt profile: glob %s: %s", glob, why);
out_free:
	free(glob);
	free(lit);
	free(canon);
	return err;
}

/*
 * Write `(deny OPS (subpath "PATH"))` to @f and, when @desc is not NULL,
 * the same line followed by "  (TAGWHY)". 0 or WARD_EINVAL (a path SBPL
 * cannot hold).
 */
static int seatbelt_deny_subpath(FILE *f, struct ward_strv *desc,
				 const char *ops, const char *path,
				 const char *tag, const char *why)
{
	int err;

	fprintf(f, "(deny %s (subpath ", ops);
	err = sbpl_string(f, path);
	if (err)
		return err;
	fputs("))\n", f);
	if (desc)
		linef(desc, "(deny %s (subpath \"%s\"))  (%s%s)", ops, path,
		      tag, why);
	return 0;
}

/* Write one deny rule for @info to @f (and to @desc when not NULL). */
static int seatbelt_rule(FILE *f, const struct ward_xlate *p,
			 struct ward_strv *desc, size_t i,
			 const struct ward_rule_info *info)
{
	const char *ops = info->access == WARD_ACCESS_NONE
			      ? "file-read* file-write*"
			      : "file-write*";
	char name[PATH_MAX + 256], *re = NULL, *path;
	int err;

	rule_name(name, sizeof(name), p, i);
	if (info->is_glob) {
		err = seatbelt_regex(&re, info);
		if (err)
			return err;
		/* #"…" is a raw string; the regex never holds '"'. */
		fprintf(f, "(deny %s (regex #\"%s\"))\n", ops, re);
		if (desc)
			linef(desc, "(deny %s (regex #\"%s\"))  (%s)", ops, re,
			      name);
		free(re);
		return 0;
	}
	path = util_path_canon(info->pattern);
	if (!path)
		return -ENOMEM;
	err = seatbelt_deny_subpath(f, desc, ops, path, "", name);
	free(path);
	return err;
}

/* The comment that opens the rules, before the first of them. */
static void seatbelt_rules_header(FILE *f, bool *header)
{
	if (*header)
		return;
	fputs("; Access rules and protected paths (a later rule wins).\n", f);
	*header = true;
}

static int seatbelt_write(FILE *f, const struct ward_xlate *p,
			  struct ward_strv *desc)
{
	struct ward_rule_info info;
	bool header = false;
	int err;

	/* SBPL: a later rule wins over an earlier one. So the denies follow
	 * the allows, and `--` follows `r-` and the protected paths. */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; pass != 1 && i < p->nrules; i++) {
			if (ward_rules_get(&info, p->rules, i) != 0 ||
			    info.access !=
				(pass ? WARD_ACCESS_NONE : WARD_ACCESS_RO))
				continue;
			seatbelt_rules_header(f, &header);
			err = seatbelt_rule(f, p, desc, i, &info);
			if (err)
				return err;
		}
		for (size_t j = 0; pass != 0 && j < p->nprot; j++) {
			const struct ward_protected *pr = &p->prot[j];
			bool hidden = pr->access == WARD_ACCESS_NONE;

			/*
			 * Pass 2, the hidden ones (ward's state directory):
			 * everywhere. Pass 1, the read-only ones inside a
			 * root (outside the roots they are read-only
			 * already). A missing git path is denied too:
			 * Seatbelt names paths, so it keeps `.git/commondir`
			 * from being created (the list has git paths only
			 * when the repository exists).
			 */
			if (pass == 2
				? !hidden
				: hidden || !overlapping_root(p, pr->path))
				continue;
			seatbelt_rules_header(f, &header);
			err = seatbelt_deny_subpath(
			    f, desc,
			    hidden ? "file-read* file-write*" : "file-write*",
			    pr->path, "protected: ", pr->what);
			if (err)
				return err;
		}
	}
	/*
	 * /dev/null stays readable and writable whatever the rules say, as
	 * on bwrap (a private /dev) and Landlock (its own grant): a rule
	 * over it (`r- /`) would break every shell redirection to it.
	 */
	if (p->rules &&
	    ward_rules_match(p->rules, "/dev/null") >= WARD_ACCESS_RO) {
		fputs(
		    "; /dev/null stays usable whatever the rules say.\n"
		    "(allow file-read* file-write* (literal \"/dev/null\"))\n",
		    f);
		if (desc)
			linef(desc, "(allow file-read* file-write* (literal "
				    "\"/dev/null\"))  (after the rules: "
				    "/dev/null stays usable)");
	}
	return 0;
}

int ward_xlate_seatbelt(FILE *f, const struct ward_xlate *plan)
{
	return seatbelt_write(f, plan, NULL);
}

static void plan_seatbelt_desc(struct ward_xlate *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		p->oom = true;
		return;
	}
	if (seatbelt_write(f, p, &p->desc) != 0)
		linef(&p->warn, "seatbelt: %s", ward_error_last());
	fclose(f);
	free(text);
}

/* --- exported (internal) ------------------------------------------------ */

/*
 * What the scan of the repository found (protect.h): a symlinked `.git`,
 * a `commondir` ward does not trust. Seatbelt keeps a link itself, so it
 * gets no note about links.
 */
static void warn_notes(struct ward_xlate *p)
{
	char **notes = NULL;

	if (ward_protect_notes(&notes, p->policy,
			       p->runner != WARD_RUNNER_SEATBELT) != 0) {
		p->oom = true;
		return;
	}
	for (size_t i = 0; notes[i]; i++)
		linef(&p->warn, "%s: %s", runner_label(p->runner), notes[i]);
	ward_strv_free(notes);
}

/* A $TMPDIR that is set but not a writable root (roots.c says why). */
static void warn_tmpdir(struct ward_xlate *p)
{
	char why[2 * PATH_MAX];

	if (ward_roots_tmpdir_refused(why, sizeof(why), p->mode,
				      ward_policy_tmpdir(p->policy)))
		linef(&p->warn, "%s: %s", runner_label(p->runner), why);
}

static void plan_none(struct ward_xlate *p)
{
	struct ward_rule_info info;
	char name[PATH_MAX + 256];

	for (size_t i = 0; i < p->nrules; i++) {
		if (ward_rules_get(&info, p->rules, i) != 0 ||
		    info.access == WARD_ACCESS_RW)
			continue;
		linef(&p->warn,
		      "%s: %s: %s is not confined, so the rule does not "
		      "reach commands; the fs fence still applies it",
		      ward_mode_name(p->mode),
		      rule_name(name, sizeof(name), p, i),
		      ward_mode_name(p->mode));
	}
}

int ward_xlate_new(struct ward_xlate **out, const ward_policy *policy,
		   enum ward_runner runner)
{
	return ward_xlate_new_inner(out, policy, runner, false);
}

int ward_xlate_new_inner(struct ward_xlate **out, const ward_policy *policy,
			 enum ward_runner runner, bool inner_launcher)
{
	struct ward_xlate *p;
	int err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "rule plan: missing argument");
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	p->policy = policy;
	p->runner = runner;
	p->inner_hides = inner_launcher && runner == WARD_RUNNER_BWRAP;
	p->mode = ward_policy_mode(policy);
	p->rules = ward_policy_rules(policy);
	p->nrules = ward_rules_count(p->rules);
	err = ward_policy_roots(&p->roots, policy);
	if (err)
		goto out_free_plan;
	if (p->mode == WARD_MODE_DANGER_FULL_ACCESS ||
	    runner == WARD_RUNNER_NONE) {
		plan_none(p);
		goto out_done;
	}
	err = ward_policy_protected(&p->prot, &p->nprot, policy);
	if (err)
		goto out_free_plan;
	p->warned = calloc(p->nrules + 1, sizeof(*p->warned));
	p->prot_exists = calloc(p->nprot + 1, sizeof(*p->prot_exists));
	if (!p->warned || !p->prot_exists) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_free_plan;
	}
	warn_rw(p);
	warn_tmpdir(p);
	warn_notes(p);
	if (runner == WARD_RUNNER_SEATBELT) {
		/* Seatbelt names paths and patterns: nothing to expand. */
		for (size_t j = 0; j < p->nprot; j++) {
			bool is_dir;

			p->prot_exists[j] =
			    probe_path(p->prot[j].path, &is_dir);
		}
		plan_seatbelt_desc(p);
		goto out_done;
	}
	gather(p);
	if (p->oom)
		goto out_oom;
	switch (runner) {
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		plan_bwrap(p);
		break;
	case WARD_RUNNER_LANDLOCK:
		plan_landlock(p);
		break;
	default:
		linef(&p->warn,
		      "%s: this runner cannot confine, so no rule reaches "
		      "commands",
		      ward_runner_name(runner));
		break;
	}
out_done:
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
	free(p);
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

		if (err)
			return ward_err(err,
					"cannot create %s (so that it can be "
					"kept read-only): %s",
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

/* --- exported ----------------------------------------------------------- */

enum export_what {
	EXPORT_WARNINGS,
	EXPORT_DESCRIBE,
	EXPORT_PARTIAL
};

static int export_lines(char ***out, const ward_policy *policy,
			enum ward_runner runner, enum export_what what)
{
	struct ward_xlate *p = NULL;
	char **v;
	int err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "missing argument");
	err = ward_xlate_new(&p, policy, runner);
	if (err)
		return err;
	v = ward_strv_dup(what == EXPORT_WARNINGS   ? ward_xlate_warnings(p)
			  : what == EXPORT_DESCRIBE ? ward_xlate_describe(p)
						    : ward_xlate_partial(p));
	ward_xlate_free(p);
	if (!v)
		return ward_err(-ENOMEM, "out of memory");
	*out = v;
	return 0;
}

int ward_policy_warnings(char ***out, const ward_policy *policy,
			 enum ward_runner runner)
{
	return export_lines(out, policy, runner, EXPORT_WARNINGS);
}

int ward_policy_describe(char ***out, const ward_policy *policy,
			 enum ward_runner runner)
{
	return export_lines(out, policy, runner, EXPORT_DESCRIBE);
}

int ward_policy_partial(char ***out, const ward_policy *policy,
			enum ward_runner runner)
{
	return export_lines(out, policy, runner, EXPORT_PARTIAL);
}
