/*
 * ward — the per-runner rule plan, first half: the bounds, the helpers every
 * runner's part uses, and gathering the targets (literal rules, the
 * globs' matches by a bounded walk, protected paths), sorted and reduced.
 * See translate.c for the whole; each runner's part is translate_<runner>.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/policy/listings.h"
#include "libward/policy/protect.h"
#include "libward/runners/runners.h"
#include "translate_impl.h"
#include "translate_internal.h"
#include "util/hide.h"
#include "util/util.h"

struct ward_xlate_limits ward_xl_limits = {
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

	ward_xl_limits = l ? *l : defaults;
}

/* Whether the launcher will be able to hide paths by mounts (hide.h). */
bool ward_xl_can_mount(void)
{
	return !ward_xl_limits.no_mounts && ward_hide_possible();
}

/* --- small helpers ------------------------------------------------------ */

const char *ward_xl_runner_label(const struct ward_xlate *p)
{
	return p->ops->label ? p->ops->label : ward_runner_name(p->runner);
}

/* Append a printf-formatted line to @sv. */
void ward_xl_linef(struct ward_strv *sv, const char *fmt, ...)
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
void ward_xl_unenforced(struct ward_xlate *p, const char *fmt, ...)
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
void ward_xl_refuse(struct ward_xlate *p, const char *fmt, ...)
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
const char *ward_xl_rule_name(char *buf, size_t len, const struct ward_xlate *p,
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
const char *ward_xl_target_why(char *buf, size_t len,
			       const struct ward_xlate *p,
			       const struct target *t)
{
	switch (t->src) {
	case SRC_RULE:
		return ward_xl_rule_name(buf, len, p, t->idx);
	case SRC_GLOB:
		snprintf(buf, len, "glob rules below %s", p->g[t->idx].lex);
		return buf;
	case SRC_PROTECT:
		snprintf(buf, len, "protected: %s", p->prot[t->idx].what);
		return buf;
	}
	return "?";
}

bool ward_xl_within_any_root(const struct ward_xlate *p, const char *path)
{
	for (size_t i = 0; p->roots[i]; i++) {
		if (util_path_within(path, p->roots[i]))
			return true;
	}
	return false;
}

/* The root that @path lies in or contains, or NULL. */
const char *ward_xl_overlapping_root(const struct ward_xlate *p,
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
int ward_xl_path_cmp(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb, i = 0;
	unsigned char x, y;

	/* Paths share long prefixes: skip the common part eight bytes at
	 * a time (within both strings), then order the first difference. */
	for (; i + 8 <= n; i += 8) {
		uint64_t u, v;

		memcpy(&u, a + i, 8);
		memcpy(&v, b + i, 8);
		if (u != v)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	x = (unsigned char)a[i];
	y = (unsigned char)b[i];
	if (x == y)
		return 0;
	x = x == '/' ? 1 : x;
	y = y == '/' ? 1 : y;
	return x < y ? -1 : 1;
}

void ward_xl_sort(void *base, size_t n, size_t size,
		  int (*cmp)(const void *, const void *))
{
	const char *v = base;

	/* Rules are often written in order: then one pass says so. */
	for (size_t i = 1; i < n; i++) {
		if (cmp(v + (i - 1) * size, v + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
	}
}

static int target_cmp(const void *a, const void *b)
{
	const struct target *x = a, *y = b;
	int c = ward_xl_path_cmp(x->path, y->path);

	if (c)
		return c;
	/* Same path: the stronger first, so the weaker is dropped. */
	return (int)y->access - (int)x->access;
}

int ward_xl_str_cmp(const void *a, const void *b)
{
	return ward_xl_path_cmp(*(char *const *)a, *(char *const *)b);
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
bool ward_xl_probe_path(const char *path, bool *is_dir)
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

bool ward_xl_is_root(const struct ward_xlate *p, const char *path)
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
	return g->has_none || ward_xl_overlapping_root(p, g->can);
}

/* Never walked: /proc (bwrap mounts its own; on Landlock the keeper's pid
 * namespace has its own as root) and /sys (no files); /dev only for bwrap,
 * which mounts its own — a Landlock run sees the host's /dev. */
static bool walk_skips(const struct ward_xlate *p, const char *path)
{
	return strcmp(path, "/proc") == 0 || strcmp(path, "/sys") == 0 ||
	       (p->ops->profile_mounts && strcmp(path, "/dev") == 0);
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
const char *ward_xl_pattern_rest(const struct ward_rule_info *info)
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
		rest = ward_xl_pattern_rest(&info);
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
#define DREAD_BUF 32768

struct dread {
	int fd;		/* -1: @at is a kept listing, read whole */
	char *buf;	/* DREAD_BUF bytes, the walker's for this depth */
	const char *at; /* the records: @buf, or the kept listing */
	size_t len, pos;
};

/* The next entry of @r, or NULL at the end (or on an error). */
static const struct util_dirent64 *dread_next(struct dread *r)
{
	const struct util_dirent64 *e;

	if (r->pos >= r->len) {
		long n;

		if (r->fd < 0)
			return NULL;
		n = util_getdents64(r->fd, r->buf, DREAD_BUF);
		if (n <= 0)
			return NULL;
		r->at = r->buf;
		r->len = (size_t)n;
		r->pos = 0;
	}
	e = (const struct util_dirent64 *)(const void *)(r->at + r->pos);
	r->pos += e->d_reclen;
	return e;
}

/*
 * A directory of the walk, opened only when something must be read from
 * it. One whose listing the call's walk for repositories kept
 * (listings.h) is read from there and needs no descriptor — unless a
 * subdirectory of it was not kept (a `.git`, a directory that walk leaves
 * alone): then it is opened below its parent, which is opened the same way,
 * never through a symbolic link, as the walk opens every directory it
 * reads itself.
 */
struct wdir {
	int fd;		  /* -1: not open (yet) */
	bool failed;	  /* it could not be opened: not tried again */
	struct wdir *up;  /* NULL: the group's top, opened by its path */
	const char *name; /* below @up (the top: its canonical path) */
};

/* The descriptor of @d, opened now if it is not yet, or -1. */
static int wdir_fd(struct wdir *d)
{
	int up;

	if (d->fd >= 0 || d->failed)
		return d->fd;
	if (!d->up)
		d->fd = open(d->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if ((up = wdir_fd(d->up)) >= 0)
		d->fd = openat(up, d->name,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC |
				   O_NONBLOCK);
	d->failed = d->fd < 0;
	return d->fd;
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
bool ward_xl_path_push(char *buf, size_t *len, const char *name, size_t n)
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
 * The reader of the directory @dir at w->can (@depth: which buffer is
 * its): its kept listing, else its own records (opened now). False when
 * it cannot be read (its open failed, or ENOMEM: p->oom).
 */
static bool walk_open(struct walker *w, struct wdir *dir, unsigned depth,
		      struct dread *d)
{
	struct ward_xlate *p = w->p;
	const void *kept;
	size_t len;

	kept = ward_listings_find(p->listings, w->can, &len);
	if (kept) {
		*d = (struct dread){-1, NULL, kept, len, 0};
		return true;
	}
	if (wdir_fd(dir) < 0)
		return false;
	if (depth >= w->nbufs) {
		size_t n = depth + 8;
		char **v = realloc(w->bufs, n * sizeof(*v));

		if (!v) {
			p->oom = true;
			return false;
		}
		memset(v + w->nbufs, 0, (n - w->nbufs) * sizeof(*v));
		w->bufs = v;
		w->nbufs = n;
	}
	if (!w->bufs[depth]) {
		w->bufs[depth] = malloc(DREAD_BUF);
		if (!w->bufs[depth]) {
			p->oom = true;
			return false;
		}
	}
	*d = (struct dread){dir->fd, w->bufs[depth], w->bufs[depth], 0, 0};
	return true;
}

/*
 * Walk the directory @dir (at w->can) whose entries lie @depth levels
 * below the group's prefix; the caller closes what it opened.
 * @under_ro: an ancestor already is a read-only target.
 */
static void walk_dir(struct walker *w, struct wdir *dir, unsigned depth,
		     bool under_ro)
{
	struct ward_xlate *p = w->p;
	struct group *g = &p->g[w->gi];
	size_t llen = w->llen, clen = w->clen;
	struct dread dr;
	struct dread *d = &dr;
	const struct util_dirent64 *e;

	if (!walk_open(w, dir, depth, d))
		return;
	while (!p->stop && !p->oom && (e = dread_next(d))) {
		const char *name = e->d_name;
		size_t n = strlen(name);
		unsigned char type = e->d_type;
		enum ward_access a;

		if (name[0] == '.' && (n == 1 || (n == 2 && name[1] == '.')))
			continue;
		p->entries++;
		if (p->entries > ward_xl_limits.max_entries ||
		    ((p->entries & 255) == 0 &&
		     elapsed_ms(&p->t0) > (long)ward_xl_limits.max_ms)) {
			p->stop = true;
			g->stopped = true;
			break;
		}
		if (!ward_xl_path_push(w->lex, &w->llen, name, n) ||
		    !ward_xl_path_push(w->can, &w->clen, name, n))
			goto next;
		/* In a kept listing the walk that read it asked already
		 * (DT_UNKNOWN: its lstat failed). */
		if (type == DT_UNKNOWN && d->fd >= 0)
			type = util_dirent_type(d->fd, name);
		if (type == DT_UNKNOWN)
			goto next;
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
			/* @name stays put: in the kept listing, or in this
			 * depth's buffer, which is not read again before
			 * the subdirectory is done. */
			struct wdir sub = {-1, false, dir, name};

			walk_dir(w, &sub, depth + 1,
				 under_ro || a == WARD_ACCESS_RO);
			if (sub.fd >= 0)
				close(sub.fd);
		}
	next:
		w->llen = llen;
		w->lex[llen] = '\0';
		w->clen = clen;
		w->can[clen] = '\0';
	}
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
		    ward_xl_overlapping_root(p, p->g[i].can) != NULL;
	for (size_t i = 0; i < p->ng; i++) {
		struct group *g = &p->g[i];
		bool covered = !group_needed(p, g), is_dir;
		struct wdir top = {-1, false, NULL, g->can};
		size_t len;

		for (size_t j = 0; j < p->ng && !covered; j++) {
			struct group *o = &p->g[j];

			covered = j != i && o->maxdepth == UINT_MAX &&
				  group_needed(p, o) &&
				  strcmp(o->lex, g->lex) != 0 &&
				  util_path_within(g->lex, o->lex) &&
				  util_path_within(g->can, o->can);
		}
		if (covered || p->stop ||
		    !ward_xl_probe_path(g->can, &is_dir) || !is_dir ||
		    walk_skips(p, g->can))
			continue;
		/* Kept by the walk for repositories (listings.h), or
		 * opened now. */
		if (!ward_listings_find(p->listings, g->can, &len) &&
		    wdir_fd(&top) < 0)
			continue;
		g->walked = true;
		w->p = p;
		w->gi = i;
		w->llen = strlen(g->lex);
		w->clen = strlen(g->can);
		if (w->llen >= PATH_MAX || w->clen >= PATH_MAX) {
			if (top.fd >= 0)
				close(top.fd);
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
		walk_dir(w, &top, 1, false);
		if (top.fd >= 0)
			close(top.fd);
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
void ward_xl_reduce_targets(struct ward_xlate *p)
{
	size_t out = 0, depth = 0, *stack;

	if (!p->nt)
		return;
	ward_xl_sort(p->t, p->nt, sizeof(*p->t), target_cmp);
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
	/* Set by the caller before the first rule of a run of
	 * WARD_LISTINGS_LITERALS or more with the same parent: the parent is
	 * listed once (listings.h) and each rule looked up by name, in
	 * place of a fstatat per rule. NULL @ls: never. */
	struct ward_listings **ls;
	bool list;
	bool named; /* @names holds the parent's entries */
	struct ward_names names;
};

/* How @cc's parent is opened: to be read when its run lists it. */
static int dir_flags(const struct canon_cache *cc)
{
	return (cc->list && cc->ls ? O_RDONLY | O_NONBLOCK : O_PATH) |
	       O_DIRECTORY | O_CLOEXEC;
}

/* The entries of @cc's parent (opened by dir_flags()), by name, when its
 * run asked for them. */
static void canon_list(struct canon_cache *cc)
{
	const void *rec;
	size_t len;

	if (!cc->list || !cc->ls || cc->fd < 0)
		return;
	if (!*cc->ls && ward_listings_new(cc->ls) != 0)
		return;
	rec = ward_listings_read(*cc->ls, cc->fd, cc->canon, &len);
	cc->named = rec && ward_names_index(&cc->names, rec, len);
}

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
	size_t dlen = slash ? (size_t)(slash - path) : 0, rlen;
	const void *rec;
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
		ward_names_free(&cc->names);
		cc->named = false;
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
		/* Kept by the walk for repositories: looked up there, no
		 * descriptor needed (a link gets the whole treatment). */
		if (cc->list && cc->ls && *cc->ls &&
		    (rec = ward_listings_find(*cc->ls, cc->canon, &rlen))) {
			cc->named = ward_names_index(&cc->names, rec, rlen);
			goto out_parent;
		}
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
						dir_flags(cc) | O_NOFOLLOW);
		}
		if (cc->fd < 0)
			cc->fd = open(cc->canon, dir_flags(cc));
		/* A directory that may be searched but not read: asked
		 * entry by entry. */
		if (cc->fd < 0 && cc->list && errno == EACCES) {
			cc->list = false;
			cc->fd =
			    open(cc->canon, O_PATH | O_DIRECTORY | O_CLOEXEC);
		}
		canon_list(cc);
	}
out_parent:
	if (asprintf(&out, "%s/%s",
		     strcmp(cc->canon, "/") == 0 ? "" : cc->canon, name) < 0)
		return NULL;
	if (cc->named) {
		const struct util_dirent64 *de =
		    ward_names_find(&cc->names, name);

		if (!de) {
			*exists = *is_dir = false;
			return out;
		}
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN) {
			*exists = true;
			*is_dir = de->d_type == DT_DIR;
			return out;
		}
	}
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
		*exists = ward_xl_probe_path(out, is_dir);
	return out;
}

/*
 * Whether the caller could create @path (missing): its nearest existing
 * ancestor is a directory it may write and search (root may, whatever the
 * mode bits say).
 */
static bool creatable(const char *path)
{
	char buf[PATH_MAX];
	struct stat st;
	char *s;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return false;
	while ((s = strrchr(buf, '/')) != NULL) {
		if (s == buf)
			s[1] = '\0';
		else
			*s = '\0';
		if (lstat(buf, &st) == 0)
			return S_ISDIR(st.st_mode) &&
			       faccessat(AT_FDCWD, buf, W_OK | X_OK,
					 AT_EACCESS) == 0;
		if (errno != ENOENT || s == buf)
			return false;
	}
	return false;
}

/* The literal rules from @i on whose parent, as spelled, is @path's: the
 * index past the last of them. */
static size_t same_parent_run(const struct ward_xlate *p, size_t i,
			      const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
	struct ward_rule_info info;
	size_t j = i + 1;

	for (; j < p->nrules; j++) {
		if (ward_rules_get(&info, p->rules, j) != 0 || info.is_glob ||
		    info.access == WARD_ACCESS_RW)
			break;
		if (strncmp(info.pattern, path, dlen) != 0 ||
		    strchr(info.pattern + dlen, '/'))
			break;
	}
	return j;
}

void ward_xl_gather(struct ward_xlate *p)
{
	/* Rules' parents, and their parents (siblings share those). */
	struct canon_cache up = {.fd = -1};
	struct canon_cache cc = {.fd = -1, .up = &up, .ls = &p->listings};
	struct ward_rule_info info;
	bool is_dir, exists;
	size_t run_end = 0;

	for (size_t i = 0; i < p->nrules; i++) {
		char *canon;

		if (ward_rules_get(&info, p->rules, i) != 0 ||
		    info.access == WARD_ACCESS_RW)
			continue;
		if (info.is_glob) {
			add_group(p, &info);
			continue;
		}
		if (i >= run_end) {
			run_end = same_parent_run(p, i, info.pattern);
			cc.list = run_end - i >= WARD_LISTINGS_LITERALS;
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
	ward_names_free(&cc.names);
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

		exists = ward_protected_probe(pr, &is_dir);
		/* A marker (a repository's .git, where new ones appear) is
		 * the guard's and the fence's, not kept read-only. */
		if (!ward_protected_kept(pr)) {
			p->prot_exists[j] = exists;
			continue;
		}
		/*
		 * A mount covers only what exists: ward's own missing
		 * directories inside a writable root are mounted over as if
		 * they existed (bwrap, or the launcher's hides when it can
		 * mount), and the apply step (ward_xlate_apply) creates them
		 * before the run. Never here: planning changes nothing. One
		 * the caller could not create is left alone: the command runs
		 * with the same credentials and no capabilities, so it cannot
		 * create it either (nobody with HOME=/tmp, where root made
		 * /tmp/.config).
		 */
		if (!exists && pr->kind == WARD_PROTECT_HOME &&
		    ward_xl_within_any_root(p, pr->path) &&
		    (p->ops->profile_mounts ||
		     (p->ops->hides_by_mounts && ward_xl_can_mount())) &&
		    creatable(pr->path)) {
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
bool ward_xl_rule_in_group(const struct ward_xlate *p, size_t i, size_t gi,
			   struct ward_rule_info *info)
{
	return ward_rules_get(info, p->rules, i) == 0 && info->is_glob &&
	       info->access != WARD_ACCESS_RW &&
	       strcmp(info->literal_prefix, p->g[gi].lex) == 0;
}

/* The `rw` rules that are not writable roots (both runners and fence). */
void ward_xl_warn_rw(struct ward_xlate *p)
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
			ward_xl_linef(
			    &p->warn,
			    "%s: %s: %s is not an existing directory, so it "
			    "is not a writable root (on any runner, nor in "
			    "the fs fence)",
			    ward_xl_runner_label(p),
			    ward_xl_rule_name(name, sizeof(name), p, i),
			    info.pattern);
	}
}

/*
 * The glob warnings every runner that expands globs shares: a walk that
 * stopped at a bound, and matches that did not exist at confine time.
 * @only_hidden: name only `--` globs (Landlock: `r-` outside the roots is
 * exact; inside them it gets its own warning).
 */
void ward_xl_warn_globs(struct ward_xlate *p, bool only_hidden, bool skip_roots)
{
	struct ward_rule_info info;
	char name[PATH_MAX + 256], found[PATH_MAX + 64];
	const char *r = ward_xl_runner_label(p);

	for (size_t gi = 0; gi < p->ng; gi++) {
		const struct group *g = &p->g[gi];

		for (size_t i = 0; i < p->nrules; i++) {
			if (!ward_xl_rule_in_group(p, i, gi, &info))
				continue;
			if (only_hidden && info.access != WARD_ACCESS_NONE)
				continue;
			if ((skip_roots && g->overlaps_root) ||
			    !group_needed(p, g))
				continue;
			ward_xl_rule_name(name, sizeof(name), p, i);
			/* What lies beyond the bound is not enforced: the
			 * call's enforcement is partial, and says why. */
			if (g->stopped)
				ward_xl_unenforced(
				    p,
				    "%s: %s: the walk below %s stopped at its "
				    "bound (%zu entries or %u ms): matches "
				    "beyond it are not covered by %s; the fs "
				    "fence still covers them",
				    r, name, g->can, ward_xl_limits.max_entries,
				    ward_xl_limits.max_ms, r);
			if (g->walked)
				snprintf(found, sizeof(found),
					 " (%zu path%s below %s)", g->matches,
					 g->matches == 1 ? "" : "s", g->can);
			else
				found[0] = '\0';
			ward_xl_linef(
			    &p->warn,
			    "%s: %s: covers only what it matches at confine "
			    "time%s; files created later are not covered by "
			    "%s (the fs fence still covers them)",
			    r, name, found, r);
		}
	}
}
