/*
 * ward — the guard: snapshots the protected paths inside the writable
 * roots before a run, checks them after it, and puts back what changed,
 * moving what the run left to the quarantine (quarantine.c); new
 * repositories anywhere in the walked roots are taken away too. The
 * baseline is shared by every guarded call of the user (guardstate.c).
 * See protect.h; the list of protected paths is protect.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "guard_internal.h"
#include "libward/internal.h"
#include "libward/policy/facts.h"
#include "libward/policy/protect.h"
#include "libward/runners/runners.h"
#include "quarantine.h"
#include "util/sha256.h"
#include "util/util.h"

/*
 * Bounds of a snapshot (all guarded trees of one call together): beyond
 * them the guard could not check the run, so the call does not run. A
 * repository's hooks, a .vscode or an .idea hold tens to hundreds of
 * entries and kilobytes to a few megabytes.
 */
#define GUARD_ENTRIES_MAX 20000
#define GUARD_HASH_MAX	  ((size_t)256 * 1024 * 1024)
/* Bytes kept to put files back, per file and in all; a larger file is
 * compared by digest only and cannot be put back. */
#define GUARD_KEEP_FILE_MAX ((size_t)4 * 1024 * 1024)
#define GUARD_KEEP_MAX	    ((size_t)32 * 1024 * 1024)
#define GUARD_DEPTH_MAX	    64
/* Entries gathered before they are moved: a directory is read again
 * until a pass finds nothing more (so any number is handled). */
#define GUARD_BATCH 4096
/* Names shown per kind of finding. */
#define GUARD_NAMES 5

/* One guarded call: a participant of the shared baseline. */
struct ward_protect_guard {
	struct gstore *st;
	uint64_t id;
	struct gentry *v; /* its entries (the shared baseline's) */
	size_t n;
	uint64_t quota;
	int64_t retention;
	struct ward_skipset skip; /* what the walk leaves alone */
	struct ward_strv pre;	  /* notes of a check done when it joined */
	bool checked;
};

/* What a snapshot used up; where it stopped. */
struct budget {
	size_t entries;
	size_t hashed;
	size_t kept;
	bool over;
	char where[PATH_MAX + 128];
};

static int open_dir(const char *path)
{
	int fd;

	do {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd;
}

/*
 * The directory last opened, kept for the next entry in it: the entries
 * of a call come in the list's order, dozens of them (the startup files)
 * in one directory. The descriptor is the cache's: callers do not close
 * it.
 */
struct dircache {
	char *dir;
	int fd; /* -1: it could not be opened (errno in @err) */
	int err;
	struct stat st;
};

#define DIRCACHE_INIT                                                          \
	{                                                                      \
		NULL, -1, 0,                                                   \
		{                                                              \
			0                                                      \
		}                                                              \
	}

static void dc_close(struct dircache *dc)
{
	if (dc->fd >= 0)
		close(dc->fd);
	free(dc->dir);
	dc->dir = NULL;
	dc->fd = -1;
}

/* @dir opened (its identity into *@st), or -1 with errno. */
static int dc_open(struct dircache *dc, const char *dir, struct stat *st)
{
	if (!dc->dir || strcmp(dc->dir, dir) != 0) {
		dc_close(dc);
		dc->dir = strdup(dir);
		dc->fd = dc->dir ? open_dir(dir) : -1;
		dc->err = dc->dir ? errno : ENOMEM;
		if (dc->fd >= 0 && fstat(dc->fd, &dc->st) != 0) {
			dc->err = errno;
			close(dc->fd);
			dc->fd = -1;
		}
	}
	*st = dc->st;
	if (dc->fd < 0)
		errno = dc->err;
	return dc->fd;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Append "/@name" to the path in @buf (length *len); false if too long. */
static bool path_add(char *buf, size_t *len, const char *name)
{
	size_t n = strlen(name);

	if (*len + 1 + n >= PATH_MAX)
		return false;
	buf[(*len)++] = '/';
	memcpy(buf + *len, name, n + 1);
	*len += n;
	return true;
}

static ssize_t read_retry(int fd, void *buf, size_t len)
{
	ssize_t r;

	do {
		r = read(fd, buf, len);
	} while (r < 0 && errno == EINTR);
	return r;
}

/*
 * Read the regular file @name in @dirfd (not through a symlink; when @st
 * is given it must still be that inode). With @keep and a file that fits
 * @keep_left (and GUARD_KEEP_FILE_MAX), its bytes go to *data (malloc'd,
 * length *len) and no digest is made: the bytes are the comparison.
 * Otherwise its SHA-256 digest goes to @digest and *data is NULL. At most
 * @read_left bytes are read: more is -EFBIG. *done counts the bytes read.
 * Returns 0, -EFBIG, -ESTALE (another inode now) or -errno.
 */
static int read_content(unsigned char digest[WARD_SHA256_LEN], char **data,
			size_t *len, size_t *done, int dirfd, const char *name,
			const struct stat *st, bool keep, size_t keep_left,
			size_t read_left)
{
	struct ward_sha256 h;
	char buf[65536], *kept = NULL, *nk;
	size_t got = 0, cap = 0;
	struct stat now;
	ssize_t r;
	int fd, err = 0;

	*data = NULL;
	do {
		fd = openat(dirfd, name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &now) != 0 || !S_ISREG(now.st_mode) ||
	    (st && !same_inode(&now, st))) {
		close(fd);
		return -ESTALE;
	}
	keep = keep && (size_t)now.st_size <= GUARD_KEEP_FILE_MAX &&
	       (size_t)now.st_size <= keep_left;
	if (!keep)
		ward_sha256_init(&h);
	for (;;) {
		r = read_retry(fd, buf, sizeof(buf));
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		if (got + (size_t)r > read_left) {
			err = -EFBIG;
			break;
		}
		if (keep && (got + (size_t)r > GUARD_KEEP_FILE_MAX ||
			     got + (size_t)r > keep_left)) {
			/* It grew past what can be kept: digest only. */
			keep = false;
			ward_sha256_init(&h);
			ward_sha256_update(&h, kept, got);
			free(kept);
			kept = NULL;
		}
		if (!keep) {
			ward_sha256_update(&h, buf, (size_t)r);
		} else {
			if (got + (size_t)r > cap) {
				cap = got + (size_t)r > 2 * cap
					  ? got + (size_t)r
					  : 2 * cap;
				nk = realloc(kept, cap);
				if (!nk) {
					err = -ENOMEM;
					break;
				}
				kept = nk;
			}
			memcpy(kept + got, buf, (size_t)r);
		}
		got += (size_t)r;
	}
	close(fd);
	*done += got;
	if (err) {
		free(kept);
		return err;
	}
	if (!keep) {
		ward_sha256_final(digest, &h);
		return 0;
	}
	*data = kept ? kept : strdup("");
	*len = got;
	return *data ? 0 : -ENOMEM;
}

/*
 * Whether the regular file @name in @dirfd (the inode @st) holds what the
 * snapshot @nd remembers: byte for byte where the bytes were kept, else
 * by SHA-256 digest. Unreadable counts as changed.
 */
static bool content_differs(const struct gnode *nd, int dirfd, const char *name,
			    const struct stat *st)
{
	unsigned char digest[WARD_SHA256_LEN];
	size_t done = 0, len = 0;
	char *now = NULL;
	bool differs;

	if (nd->kept && (size_t)st->st_size != nd->len)
		return true;
	if (read_content(digest, &now, &len, &done, dirfd, name, st, nd->kept,
			 nd->kept ? nd->len : SIZE_MAX,
			 nd->kept ? nd->len + 1 : SIZE_MAX) != 0)
		return true;
	if (nd->kept)
		differs = !now || len != nd->len || memcmp(now, nd->data, len);
	else
		differs = now || memcmp(digest, nd->digest, sizeof(digest));
	free(now);
	return differs;
}

static int gnode_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gnode *)a)->name,
		      ((const struct gnode *)b)->name);
}

/*
 * Snapshot @name in @dirfd into @nd (@path: its absolute path, for
 * messages; a buffer of PATH_MAX). Returns 0, 1 (it vanished meanwhile:
 * nothing recorded), WARD_EINVAL (a bound was reached: @b says where) or
 * -errno (it cannot be read).
 */
static int snap_node(struct budget *b, struct gnode *nd, int pfd,
		     const char *name, char *path, size_t plen, unsigned depth)
{
	struct dirent *de;
	struct stat st;
	size_t cap = 0;
	DIR *d;
	int fd, err = 0;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 1 : -errno;
	if (++b->entries > GUARD_ENTRIES_MAX || depth > GUARD_DEPTH_MAX) {
		b->over = true;
		snprintf(b->where, sizeof(b->where), "%s", path);
		return WARD_EINVAL;
	}
	nd->mode = st.st_mode;
	nd->dev = st.st_dev;
	nd->ino = st.st_ino;
	if (S_ISREG(st.st_mode)) {
		err = read_content(
		    nd->digest, &nd->data, &nd->len, &b->hashed, pfd, name, &st,
		    true, GUARD_KEEP_MAX - b->kept, GUARD_HASH_MAX - b->hashed);
		if (err == -EFBIG) {
			b->over = true;
			snprintf(b->where, sizeof(b->where), "%s", path);
			return WARD_EINVAL;
		}
		if (err == -ESTALE)
			return 1;
		nd->kept = nd->data != NULL;
		b->kept += nd->len;
		return err;
	}
	if (S_ISLNK(st.st_mode)) {
		char buf[PATH_MAX];
		ssize_t n = readlinkat(pfd, name, buf, sizeof(buf) - 1);

		if (n < 0)
			return errno == ENOENT ? 1 : -errno;
		buf[n] = '\0';
		nd->link = strdup(buf);
		return nd->link ? 0 : -ENOMEM;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	fd = util_openat_dir(pfd, name);
	if (fd < 0)
		return errno == ENOENT ? 1 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while (!err && (de = readdir(d))) {
		size_t len = plen;
		struct gnode *k;

		if (is_dot(de->d_name))
			continue;
		if (nd->nkids == cap) {
			cap = cap ? cap * 2 : 16;
			k = realloc(nd->kids, cap * sizeof(*k));
			if (!k) {
				err = -ENOMEM;
				break;
			}
			nd->kids = k;
		}
		k = &nd->kids[nd->nkids];
		memset(k, 0, sizeof(*k));
		k->name = strdup(de->d_name);
		if (!k->name) {
			err = -ENOMEM;
			break;
		}
		if (!path_add(path, &len, de->d_name)) {
			free(k->name);
			err = -ENAMETOOLONG;
			break;
		}
		err =
		    snap_node(b, k, dirfd(d), de->d_name, path, len, depth + 1);
		path[plen] = '\0';
		if (err == 1) {
			gnode_clear(k);
			err = 0;
			continue;
		}
		nd->nkids++;
		if (err)
			break;
	}
	closedir(d);
	if (nd->nkids)
		qsort(nd->kids, nd->nkids, sizeof(*nd->kids), gnode_cmp);
	return err;
}

/* Add @path (a guarded path, canonical up to its last component). */

/* --- snapshots ------------------------------------------------------------ */

/* The names (type and identity) of the entries of the directory @name in
 * @pfd into @nd: a GK_NAMES entry. */
static int snap_names(struct budget *b, struct gnode *nd, int pfd,
		      const char *name)
{
	struct dirent *de;
	struct stat st;
	size_t cap = 0;
	DIR *d;
	int fd;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 1 : -errno;
	nd->mode = st.st_mode;
	nd->dev = st.st_dev;
	nd->ino = st.st_ino;
	if (!S_ISDIR(st.st_mode))
		return 0;
	fd = util_openat_dir(pfd, name);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return errno == ENOENT ? 1 : -errno;
	}
	while ((de = readdir(d))) {
		struct gnode *k;

		if (is_dot(de->d_name))
			continue;
		if (++b->entries > GUARD_ENTRIES_MAX) {
			b->over = true;
			break;
		}
		if (nd->nkids == cap) {
			cap = cap ? cap * 2 : 16;
			k = realloc(nd->kids, cap * sizeof(*k));
			if (!k) {
				closedir(d);
				return -ENOMEM;
			}
			nd->kids = k;
		}
		k = &nd->kids[nd->nkids];
		memset(k, 0, sizeof(*k));
		k->name = strdup(de->d_name);
		if (!k->name) {
			closedir(d);
			return -ENOMEM;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    0) {
			k->mode = st.st_mode;
			k->dev = st.st_dev;
			k->ino = st.st_ino;
		}
		nd->nkids++;
	}
	closedir(d);
	if (b->over)
		return WARD_EINVAL;
	if (nd->nkids)
		qsort(nd->kids, nd->nkids, sizeof(*nd->kids), gnode_cmp);
	return 0;
}

/* One path to snapshot. */
struct gitem {
	char kind; /* enum gkind */
	const char *path;
	const char *what;
	/* What the call's scan saw there a moment ago (WARD_SEEN_*): a path
	 * it found missing is recorded missing without looking again. */
	unsigned char seen;
};

/*
 * Split @path into @e's parent and name. False when it cannot be (no
 * slash, too long) or on ENOMEM (*oom).
 */
static bool split_path(struct gentry *e, const char *path, bool *oom)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1] || strlen(path) >= PATH_MAX)
		return false;
	e->dir =
	    slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	e->name = strdup(slash + 1);
	if (!e->dir || !e->name)
		*oom = true;
	return e->dir && e->name;
}

/* The .git entries of the protected list that lie beneath @root: the
 * repositories there when the call began (a GK_SWEEP entry's kids). */
static int snap_sweep(struct gentry *e, const struct ward_protected *v,
		      size_t n, const char *root)
{
	size_t rl = strcmp(root, "/") ? strlen(root) : 0, cap = 0;
	struct stat st;

	for (size_t i = 0; i < n; i++) {
		const char *p = v[i].path, *base = strrchr(p, '/');
		struct gnode *k;

		if (!base || strcmp(base, "/.git") != 0 ||
		    !util_path_within(p, root) || lstat(p, &st) != 0)
			continue;
		for (size_t j = 0; j < e->node.nkids; j++)
			if (strcmp(e->node.kids[j].name, p + rl + 1) == 0)
				goto next;
		if (e->node.nkids == cap) {
			cap = cap ? cap * 2 : 8;
			k = realloc(e->node.kids, cap * sizeof(*k));
			if (!k)
				return -ENOMEM;
			e->node.kids = k;
		}
		k = &e->node.kids[e->node.nkids];
		memset(k, 0, sizeof(*k));
		k->name = strdup(p + rl + 1);
		if (!k->name)
			return -ENOMEM;
		k->mode = st.st_mode;
		k->dev = st.st_dev;
		k->ino = st.st_ino;
		e->node.nkids++;
	next:;
	}
	if (e->node.nkids)
		qsort(e->node.kids, e->node.nkids, sizeof(*e->node.kids),
		      gnode_cmp);
	return 0;
}

/*
 * Snapshot @it into @e (cleared first). Returns 0, 1 (nothing to guard:
 * its directory is missing), WARD_EINVAL (a bound was reached or it
 * cannot be read: the call must not run; the detail says which) or
 * -ENOMEM.
 */
static int snap_entry(struct gentry *e, struct budget *b, struct dircache *dc,
		      const struct gitem *it, const struct ward_protected *v,
		      size_t nv)
{
	char buf[PATH_MAX];
	struct stat st;
	bool oom = false;
	int pfd, err;

	memset(e, 0, sizeof(*e));
	e->kind = it->kind;
	e->what = strdup(it->what);
	if (!e->what)
		return -ENOMEM;
	if (it->kind == GK_SWEEP) {
		e->dir = strdup(it->path);
		e->name = strdup(".");
		if (!e->dir || !e->name || stat(it->path, &st) != 0) {
			err = e->dir && e->name ? 1 : -ENOMEM;
			gentry_clear(e);
			return err;
		}
		e->pdev = st.st_dev;
		e->pino = st.st_ino;
		e->exists = true;
		err = snap_sweep(e, v, nv, it->path);
		if (err)
			gentry_clear(e);
		return err;
	}
	if (!split_path(e, it->path, &oom)) {
		gentry_clear(e);
		return oom ? -ENOMEM : 1;
	}
	pfd = dc_open(dc, e->dir, &st);
	if (pfd < 0) {
		/* Its directory is missing: nothing can be planted there
		 * that git would find through it. */
		gentry_clear(e);
		return 1;
	}
	e->pdev = st.st_dev;
	e->pino = st.st_ino;
	snprintf(buf, sizeof(buf), "%s", it->path);
	if (it->seen == WARD_SEEN_MISSING) {
		err = 1; /* as the scan saw it, before anything ran */
	} else if (it->kind == GK_DEEP) {
		err = snap_node(b, &e->node, pfd, e->name, buf, strlen(buf), 0);
	} else if (it->kind == GK_NAMES) {
		err = snap_names(b, &e->node, pfd, e->name);
	} else {
		err = fstatat(pfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0
									   : 1;
		if (!err) {
			e->node.mode = st.st_mode;
			e->node.dev = st.st_dev;
			e->node.ino = st.st_ino;
		}
	}
	if (err == 1) {
		e->exists = false;
		gnode_clear(&e->node);
		return 0;
	}
	e->exists = !err;
	if (err == WARD_EINVAL && b->over)
		snprintf(b->where, sizeof(b->where), "%s (%s)", it->path,
			 it->what);
	if (err && err != WARD_EINVAL && err != -ENOMEM)
		err = ward_err(WARD_EINVAL,
			       "ward cannot check %s (%s) after the run: it "
			       "cannot read it (errno %d), so the command was "
			       "not run; make it readable, or release it with "
			       "`unprotect:` in your user configuration",
			       it->path, it->what, -err);
	if (err)
		gentry_clear(e);
	return err;
}

/* --- what a call guards ------------------------------------------------------ */

/*
 * Whether @runner keeps the protected path @pr read-only itself: a runner
 * whose profile mounts (bwrap) binds every existing one that is not a
 * symlink (translate_bwrap.c).
 */
static bool runner_keeps(enum ward_runner runner,
			 const struct ward_protected *pr)
{
	struct stat st;

	if (!ward_runner_ops(runner)->profile_mounts)
		return false;
	return !(pr->flags & WARD_PROTECT_LINK) && lstat(pr->path, &st) == 0 &&
	       !S_ISLNK(st.st_mode);
}

/*
 * The path the guard watches for the protected @path: itself when its
 * directory exists, else the first missing directory on its way (made
 * during the run, it is taken whole: `.config/systemd/user/x.service`
 * in a home without `.config/systemd`). Into @owned when it differs.
 */
static const char *watched(const char *path, struct ward_strv *owned,
			   struct dircache *dc)
{
	char buf[PATH_MAX], *slash;
	struct stat st;
	const char *cut = NULL;

	if (strlen(path) >= sizeof(buf))
		return path;
	/* Most share a directory that exists (the workspace's top). */
	slash = strrchr(path, '/');
	if (slash && slash != path && dc->dir && dc->fd >= 0 &&
	    strlen(dc->dir) == (size_t)(slash - path) &&
	    strncmp(dc->dir, path, (size_t)(slash - path)) == 0)
		return path;
	if (slash && slash != path) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(slash - path), path);
		if (dc_open(dc, buf, &st) >= 0)
			return path;
	}
	snprintf(buf, sizeof(buf), "%s", path);
	while ((slash = strrchr(buf, '/')) && slash != buf) {
		*slash = '\0';
		if (stat(buf, &st) == 0)
			break;
		cut = path + (slash - buf);
	}
	if (!cut)
		return path;
	ward_strv_push(owned, "");
	if (owned->oom)
		return path;
	free(owned->v[owned->n - 1]);
	owned->v[owned->n - 1] = strndup(path, (size_t)(cut - path));
	return owned->v[owned->n - 1] ? owned->v[owned->n - 1] : path;
}

/*
 * The items of the facts @f under @runner into *@out (*@n of them; the
 * paths are borrowed from the facts' list, from @walk and from @owned).
 */
static int collect_items(struct gitem **out, size_t *n,
			 const struct ward_facts *f, enum ward_runner runner,
			 char *const *walk, struct ward_strv *owned)
{
	const struct ward_protected *v = NULL;
	char *const *roots = f->roots;
	struct dircache dc = DIRCACHE_INIT;
	struct gitem *items;
	size_t nv = 0, ni = 0;
	int err;

	*out = NULL;
	*n = 0;
	err = ward_facts_protected(&v, &nv, f);
	if (err)
		return err;
	items = calloc(nv + ward_strv_len(walk) + 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < nv; i++) {
		bool inside = false, nested = false;
		char kind = GK_DEEP;

		if (v[i].kind == WARD_PROTECT_HOME)
			continue;
		for (size_t r = 0; roots[r] && !inside; r++)
			inside = util_path_within(v[i].path, roots[r]);
		if (!inside)
			continue;
		if (v[i].flags & WARD_PROTECT_REPO)
			kind = GK_IDENTITY;
		else if (v[i].flags & WARD_PROTECT_NEWONLY)
			kind = GK_NAMES;
		/* A path inside another guarded one is in its snapshot. */
		for (size_t j = 0; j < nv && !nested && kind == GK_DEEP; j++)
			nested = j != i && v[j].kind != WARD_PROTECT_HOME &&
				 ward_protected_kept(&v[j]) &&
				 !(v[j].flags & WARD_PROTECT_LINK) &&
				 util_path_within(v[i].path, v[j].path) &&
				 strcmp(v[i].path, v[j].path) != 0;
		if (nested || (kind == GK_DEEP && runner_keeps(runner, &v[i])))
			continue;
		items[ni] =
		    (struct gitem){kind, v[i].path, v[i].what, v[i].seen};
		if (kind == GK_DEEP)
			items[ni].path = watched(v[i].path, owned, &dc);
		if (items[ni].path != v[i].path) /* another path: not seen */
			items[ni].seen = WARD_SEEN_UNKNOWN;
		for (size_t j = 0; j < ni && items[ni].path; j++)
			if (items[j].kind == kind &&
			    strcmp(items[j].path, items[ni].path) == 0)
				items[ni].path = NULL; /* once is enough */
		if (items[ni].path)
			ni++;
	}
	dc_close(&dc);
	if (owned->oom) {
		free(items);
		return -ENOMEM;
	}
	for (size_t i = 0; walk && walk[i]; i++)
		items[ni++] =
		    (struct gitem){GK_SWEEP, walk[i], "a new git repository",
				   WARD_SEEN_UNKNOWN};
	*out = items;
	*n = ni;
	return 0;
}

/* --- the check ------------------------------------------------------------- */

/* Push a "ward: …" note unless the same one is there already. */
static void gnote(struct ward_strv *notes, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void gnote(struct ward_strv *notes, const char *fmt, ...)
{
	va_list ap;
	char *t = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (n < 0) {
		notes->oom = true;
		return;
	}
	for (size_t i = 0; i < notes->n; i++) {
		if (strcmp(notes->v[i], t) == 0) {
			free(t);
			return;
		}
	}
	ward_strv_push(notes, t);
	free(t);
}

/*
 * What one check found in one guarded path, by kind of finding. Each path
 * is tallied once, with what became of it: never "put back" and "removed"
 * for the same path.
 */
enum finding {
	F_ADDED,	/* appeared: moved to the quarantine */
	F_ADDED_KEPT,	/* appeared: kept beside itself */
	F_CHANGED,	/* changed: the new content moved, the original back */
	F_CHANGED_KEPT, /* changed: the new content kept beside, original back */
	F_CHANGED_LOST,	 /* changed: the new content moved away, no original */
	F_REMOVED,	 /* vanished: put back */
	F_LOST,		 /* vanished: cannot be put back */
	F_MODE,		 /* permission bits changed: set back */
	F_STUCK,	 /* could not be moved away or set back: still there */
	F_REPLACED,	 /* an identity-only path was replaced: moved away */
	F_REPLACED_KEPT, /* the same, kept beside itself */
	F_COUNT,
};

struct tally {
	size_t n[F_COUNT];
	char *names[F_COUNT][GUARD_NAMES];
	const char *why[F_COUNT]; /* the first reason, for the KEPT ones */
	bool failed;		  /* something stays in the workspace */
};

/* One check: the box things go to, and whether anything stayed. */
struct check {
	struct ward_qbox q;
	struct ward_strv *notes;
	const struct ward_skipset *skip;
	struct dircache dc; /* the last entry's directory */
	bool failed;
	bool newrepo; /* a new repository was taken: say how to keep one */
};

static void tally_add(struct tally *t, enum finding f, const char *path)
{
	size_t i = t->n[f]++;

	if (i < GUARD_NAMES && !t->names[f][i])
		t->names[f][i] = strdup(path);
	if (f == F_ADDED_KEPT || f == F_CHANGED_KEPT || f == F_STUCK ||
	    f == F_REPLACED_KEPT)
		t->failed = true;
}

/* Tally @path as @f with the kept name of @r ("PATH (now KEPT)"). */
static void tally_kept(struct tally *t, enum finding f, const char *path,
		       const struct ward_qresult *r)
{
	char buf[3 * PATH_MAX + 200];

	snprintf(buf, sizeof(buf), "%s (now %s)", path, r->kept);
	tally_add(t, f, buf);
	if (!t->why[f])
		t->why[f] = r->why;
}

static void tally_clear(struct tally *t)
{
	for (int f = 0; f < F_COUNT; f++)
		for (size_t i = 0; i < GUARD_NAMES; i++)
			free(t->names[f][i]);
	memset(t, 0, sizeof(*t));
}

/*
 * Take @name in @dirfd (@path) out of the workspace and tally it as
 * @moved, or @kept when it could only be renamed beside itself. Returns
 * the outcome.
 */
static enum ward_qtake take(struct check *c, struct tally *t, int dirfd,
			    const char *name, const char *path,
			    const char *what, enum finding moved,
			    enum finding kept)
{
	struct ward_qresult r;
	enum ward_qtake how;

	how = ward_qbox_take(&c->q, &r, dirfd, name, path, what);
	if (how == WARD_QTAKE_MOVED)
		tally_add(t, moved, path);
	else if (how == WARD_QTAKE_KEPT)
		tally_kept(t, kept, path, &r);
	else if (how == WARD_QTAKE_STUCK)
		tally_add(t, F_STUCK, path);
	return how;
}

/* Create @name in @dirfd with the bytes of @nd (it must not exist). */
static int restore_file(int dirfd, const char *name, const struct gnode *nd)
{
	int fd, err;

	do {
		fd = openat(
		    dirfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	err = util_write_all(fd, nd->data, nd->len);
	if (!err && fchmod(fd, nd->mode & 07777) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

/*
 * Put the snapshot @nd back as @name in @dirfd (nothing is there). An
 * entry below it that cannot be put back (a file whose bytes were not
 * kept, a FIFO, socket or device) is tallied as lost; the caller tallies
 * @name itself by the return value (0 or -errno).
 */
static int restore_node(struct tally *t, int dirfd, const char *name,
			const struct gnode *nd, char *path, size_t plen)
{
	int fd, err = 0;

	if (S_ISREG(nd->mode)) {
		err = nd->kept ? restore_file(dirfd, name, nd) : -ENODATA;
	} else if (S_ISLNK(nd->mode)) {
		err = symlinkat(nd->link, dirfd, name) == 0 ? 0 : -errno;
	} else if (S_ISDIR(nd->mode)) {
		if (mkdirat(dirfd, name, 0700) != 0) {
			err = -errno;
		} else if ((fd = util_openat_dir(dirfd, name)) < 0) {
			err = -errno;
		} else {
			for (size_t i = 0; i < nd->nkids; i++) {
				size_t len = plen;

				if (!path_add(path, &len, nd->kids[i].name))
					continue;
				if (restore_node(t, fd, nd->kids[i].name,
						 &nd->kids[i], path, len) != 0)
					tally_add(t, F_LOST, path);
				path[plen] = '\0';
			}
			if (fchmod(fd, nd->mode & 07777) != 0)
				err = -errno;
			close(fd);
		}
	} else {
		err = -ENOTSUP;
	}
	return err;
}

/* Set @name's permission bits back to @mode (no symlink followed). */
static void restore_mode(struct tally *t, int dirfd, const char *name,
			 mode_t mode, const char *path)
{
	int fd;

	fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, mode & 07777) != 0)
		tally_add(t, F_STUCK, path);
	else
		tally_add(t, F_MODE, path);
	if (fd >= 0)
		close(fd);
}

static bool has_kid(const struct gnode *nd, const char *name)
{
	struct gnode key = {0};

	key.name = (char *)name;
	return nd->nkids &&
	       bsearch(&key, nd->kids, nd->nkids, sizeof(*nd->kids), gnode_cmp);
}

/* An entry the guard itself kept beside an earlier one: left alone. */
static bool is_kept_name(const char *name)
{
	return strstr(name, WARD_KEPT_INFIX) != NULL;
}

static void check_node(struct check *c, struct tally *t, const struct gentry *e,
		       int dirfd, const char *name, const struct gnode *nd,
		       char *path, size_t plen, bool deep);

/*
 * The entries of the directory @fd (snapshot @nd): what was added is
 * moved to the quarantine, in batches (the directory is read again after
 * each, so entries of any number are all handled and none is missed
 * because of a rename during readdir), then every snapshot entry is
 * checked when @deep (a GK_NAMES entry checks names only).
 */
static void check_dir(struct check *c, struct tally *t, const struct gentry *e,
		      int fd, const struct gnode *nd, char *path, size_t plen,
		      bool deep)
{
	struct ward_strv batch = {0};
	struct dirent *de;
	DIR *d;
	int dfd;

	dfd = dup(fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		tally_add(t, F_STUCK, path);
		return;
	}
	for (;;) {
		bool full = false;
		size_t moved = 0;

		while ((de = readdir(d))) {
			if (is_dot(de->d_name) || has_kid(nd, de->d_name) ||
			    is_kept_name(de->d_name))
				continue;
			ward_strv_push(&batch, de->d_name);
			if (batch.n == GUARD_BATCH) {
				full = true;
				break;
			}
		}
		if (batch.oom) {
			tally_add(t, F_STUCK, path);
			break;
		}
		for (size_t i = 0; i < batch.n; i++) {
			size_t len = plen;

			if (!path_add(path, &len, batch.v[i]))
				continue;
			if (take(c, t, fd, batch.v[i], path, e->what, F_ADDED,
				 F_ADDED_KEPT) != WARD_QTAKE_STUCK)
				moved++;
			path[plen] = '\0';
		}
		/* Another pass only while passes make progress: an entry
		 * that cannot be moved would be found again. */
		if (!full || !moved)
			break;
		ward_strv_discard(&batch);
		memset(&batch, 0, sizeof(batch));
		rewinddir(d);
	}
	ward_strv_discard(&batch);
	closedir(d);
	for (size_t i = 0; deep && i < nd->nkids; i++) {
		size_t len = plen;

		if (!path_add(path, &len, nd->kids[i].name))
			continue;
		check_node(c, t, e, fd, nd->kids[i].name, &nd->kids[i], path,
			   len, true);
		path[plen] = '\0';
	}
}

/*
 * Check @name in @dirfd against the snapshot @nd and put it back. @deep
 * false: a directory's identity is all that counts.
 */
static void check_node(struct check *c, struct tally *t, const struct gentry *e,
		       int dirfd, const char *name, const struct gnode *nd,
		       char *path, size_t plen, bool deep)
{
	char buf[PATH_MAX];
	struct stat st;
	enum ward_qtake how;
	bool changed;
	ssize_t n;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (!deep) {
			tally_add(t, F_LOST, path);
			return;
		}
		if (restore_node(t, dirfd, name, nd, path, plen) == 0)
			tally_add(t, F_REMOVED, path);
		else
			tally_add(t, F_LOST, path);
		return;
	}
	changed = (st.st_mode & S_IFMT) != (nd->mode & S_IFMT);
	if (!changed && S_ISREG(st.st_mode)) {
		changed = content_differs(nd, dirfd, name, &st);
	} else if (!changed && S_ISLNK(st.st_mode)) {
		n = readlinkat(dirfd, name, buf, sizeof(buf) - 1);
		changed = n < 0 || (buf[n] = '\0', strcmp(buf, nd->link));
	} else if (!changed && S_ISDIR(st.st_mode) && !deep) {
		changed = st.st_dev != nd->dev || st.st_ino != nd->ino;
	}
	if (changed) {
		struct ward_qresult r;

		how = ward_qbox_take(&c->q, &r, dirfd, name, path, e->what);
		if (how == WARD_QTAKE_STUCK) {
			tally_add(t, F_STUCK, path);
			return;
		}
		if (!deep) {
			if (how == WARD_QTAKE_KEPT)
				tally_kept(t, F_REPLACED_KEPT, path, &r);
			else
				tally_add(t, F_REPLACED, path);
			return;
		}
		if (restore_node(t, dirfd, name, nd, path, plen) != 0)
			tally_add(t, F_CHANGED_LOST, path);
		else if (how == WARD_QTAKE_KEPT)
			tally_kept(t, F_CHANGED_KEPT, path, &r);
		else
			tally_add(t, F_CHANGED, path);
		return;
	}
	if (!deep)
		return;
	if (!S_ISLNK(st.st_mode) && (st.st_mode & 07777) != (nd->mode & 07777))
		restore_mode(t, dirfd, name, nd->mode, path);
	if (!S_ISDIR(st.st_mode))
		return;
	fd = util_openat_dir(dirfd, name);
	if (fd < 0) {
		tally_add(t, F_STUCK, path);
		return;
	}
	check_dir(c, t, e, fd, nd, path, plen, true);
	close(fd);
}

/* "a, b, c and 4 more" of a finding's names, into @buf. */
static const char *names_of(char *buf, size_t len, const struct tally *t,
			    enum finding f)
{
	size_t o = 0, shown = t->n[f] < GUARD_NAMES ? t->n[f] : GUARD_NAMES;

	buf[0] = '\0';
	for (size_t i = 0; i < shown && o < len; i++) {
		if (!t->names[f][i])
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
				      t->names[f][i]);
	}
	if (t->n[f] > shown && o < len)
		snprintf(buf + o, len - o, " and %zu more", t->n[f] - shown);
	return buf;
}

/* The notes of one guarded path's findings (@late: left by a call that
 * ended before its check). */
static void report(struct check *c, const struct gentry *e,
		   const struct tally *t, const char *late)
{
	char names[6 * PATH_MAX];
	const char *qp =
	    ward_qbox_path(&c->q) ? ward_qbox_path(&c->q) : "the quarantine";
	const char *during = late ? late : "during the run";
	struct ward_strv *notes = c->notes;

#define N(f) names_of(names, sizeof(names), t, f)
	if (t->n[F_ADDED])
		gnote(notes,
		      "ward: protected (%s): %s appeared %s; moved to %s",
		      e->what, N(F_ADDED), during, qp);
	if (t->n[F_ADDED_KEPT])
		gnote(notes,
		      "ward: protected (%s): %s appeared %s; ward could not "
		      "move it to the quarantine (%s), so it was renamed "
		      "where nothing runs it: check it and remove it",
		      e->what, N(F_ADDED_KEPT), during, t->why[F_ADDED_KEPT]);
	if (t->n[F_CHANGED])
		gnote(notes,
		      "ward: protected (%s): %s changed %s; the new content "
		      "was moved to %s and the original put back",
		      e->what, N(F_CHANGED), during, qp);
	if (t->n[F_CHANGED_KEPT])
		gnote(notes,
		      "ward: protected (%s): %s changed %s; the original was "
		      "put back, and the new content, which ward could not "
		      "move to the quarantine (%s), was renamed where nothing "
		      "runs it: check it and remove it",
		      e->what, N(F_CHANGED_KEPT), during,
		      t->why[F_CHANGED_KEPT]);
	if (t->n[F_CHANGED_LOST])
		gnote(notes,
		      "ward: protected (%s): %s changed %s; the new content "
		      "was moved out of the way (to %s or beside it), but the "
		      "original cannot be put back (too large to keep, or not "
		      "a file ward can recreate); check it before you use git "
		      "or open the project here",
		      e->what, N(F_CHANGED_LOST), during, qp);
	if (t->n[F_REPLACED])
		gnote(notes,
		      "ward: protected (%s): %s was replaced %s; the "
		      "replacement was moved to %s and the original cannot be "
		      "put back (look for it in the workspace): check the "
		      "project before you use git here",
		      e->what, N(F_REPLACED), during, qp);
	if (t->n[F_REPLACED_KEPT])
		gnote(notes,
		      "ward: protected (%s): %s was replaced %s; ward could "
		      "not move the replacement to the quarantine (%s), so it "
		      "was renamed where nothing runs it; look for the "
		      "original in the workspace and check the project before "
		      "you use git here",
		      e->what, N(F_REPLACED_KEPT), during,
		      t->why[F_REPLACED_KEPT]);
	if (t->n[F_REMOVED])
		gnote(notes,
		      "ward: protected (%s): %s was removed %s and has been "
		      "put back",
		      e->what, N(F_REMOVED), during);
	if (t->n[F_LOST])
		gnote(notes,
		      "ward: protected (%s): the original of %s cannot be put "
		      "back (too large to keep, or not a file ward can "
		      "recreate); check it before you use git or open the "
		      "project here",
		      e->what, N(F_LOST));
	if (t->n[F_MODE])
		gnote(notes,
		      "ward: protected (%s): the permissions of %s changed %s "
		      "and have been set back",
		      e->what, N(F_MODE), during);
	if (t->n[F_STUCK])
		gnote(notes,
		      "ward: protected (%s): %s changed %s and could not be "
		      "moved away or set back: remove it before you use git or "
		      "open the project here",
		      e->what, N(F_STUCK), during);
#undef N
}

/* Check a GK_DEEP, GK_IDENTITY or GK_NAMES entry and put it back. */
static void check_path(struct check *c, struct tally *t, const struct gentry *e,
		       int pfd, char *path)
{
	struct stat st;
	int fd;

	if (!e->exists) {
		if (fstatat(pfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			take(c, t, pfd, e->name, path, e->what, F_ADDED,
			     F_ADDED_KEPT);
		return;
	}
	if (e->kind != GK_NAMES) {
		check_node(c, t, e, pfd, e->name, &e->node, path, strlen(path),
			   e->kind == GK_DEEP);
		return;
	}
	/* Names only: a replaced directory is taken whole, new entries one
	 * by one; what was there is git's own (a submodule's fetch). */
	if (fstatat(pfd, e->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if ((st.st_mode & S_IFMT) != (e->node.mode & S_IFMT) ||
	    st.st_dev != e->node.dev || st.st_ino != e->node.ino) {
		take(c, t, pfd, e->name, path, e->what, F_REPLACED,
		     F_REPLACED_KEPT);
		return;
	}
	if (!S_ISDIR(st.st_mode) || (fd = util_openat_dir(pfd, e->name)) < 0)
		return;
	check_dir(c, t, e, fd, &e->node, path, strlen(path), false);
	close(fd);
}

/* The walk after the run: every .git that is not one of the root's. */
struct sweep {
	struct check *c;
	struct tally *t;
	const struct gentry *e;
	size_t rl;
};

static bool sweep_skip(void *ctx, const char *path)
{
	struct sweep *w = ctx;

	return ward_skipset_has(w->c->skip, path);
}

static void sweep_found(void *ctx, int dirfd, const char *name,
			const char *path)
{
	struct sweep *w = ctx;
	const char *rel = path + w->rl + (path[w->rl] == '/');

	if (has_kid(&w->e->node, rel))
		return; /* the repository's identity is its own entry's */
	take(w->c, w->t, dirfd, name, path, w->e->what, F_ADDED, F_ADDED_KEPT);
	w->c->newrepo = true;
}

static void check_sweep(struct check *c, struct tally *t,
			const struct gentry *e, const char *late)
{
	struct ward_repo_walk w;
	struct sweep s = {c, t, e, strcmp(e->dir, "/") ? strlen(e->dir) : 0};
	struct stat st;

	if (stat(e->dir, &st) != 0 && late && errno == ENOENT)
		return;
	if (stat(e->dir, &st) != 0 || st.st_dev != e->pdev ||
	    st.st_ino != e->pino) {
		gnote(c->notes,
		      "ward: %s was removed or replaced during the run: ward "
		      "did not look for new git repositories in it; check it "
		      "before you use git there",
		      e->dir);
		return;
	}
	memset(&w, 0, sizeof(w));
	w.max_depth = REPO_WALK_DEPTH_MAX;
	w.skip = sweep_skip;
	w.found = sweep_found;
	w.ctx = &s;
	if (ward_repo_walk(&w, e->dir) != 0 || w.over) {
		gnote(
		    c->notes,
		    "ward: protected (%s): ward could not look for new git "
		    "repositories in all of %s (deeper than %d directories at "
		    "%s): check it before you use git there",
		    e->what, e->dir, REPO_WALK_DEPTH_MAX, w.over ? w.at : e->dir);
		t->failed = true;
	}
}

/* Check one entry and put it back (@late: see report()). */
static void check_entry(struct check *c, const struct gentry *e,
			const char *late)
{
	struct tally t;
	char path[PATH_MAX];
	struct stat pst;
	int pfd;

	memset(&t, 0, sizeof(t));
	if (e->kind == GK_SWEEP) {
		check_sweep(c, &t, e, late);
		goto out_report;
	}
	snprintf(path, sizeof(path), "%s/%s", strcmp(e->dir, "/") ? e->dir : "",
		 e->name);
	pfd = dc_open(&c->dc, e->dir, &pst);
	/* An earlier call's directory that is gone holds nothing git could
	 * find (its workspace was removed since). */
	if (pfd < 0 && late && errno == ENOENT)
		return;
	if (pfd < 0 || pst.st_dev != e->pdev || pst.st_ino != e->pino) {
		gnote(c->notes,
		      "ward: %s was removed or replaced during the run: the "
		      "protected paths inside it were not checked; check "
		      "the project before you use git or open it here",
		      e->dir);
		return;
	}
	check_path(c, &t, e, pfd, path);
	if ((t.n[F_ADDED] || t.n[F_ADDED_KEPT]) &&
	    (e->kind == GK_NAMES ||
	     strcmp(e->what, "a new git repository") == 0))
		c->newrepo = true;
out_report:
	report(c, e, &t, late);
	c->failed = c->failed || t.failed;
	tally_clear(&t);
}

/* Check @v[0..@n) in an order where the sweep comes last. */
static void check_all(struct check *c, const struct gentry *v, size_t n,
		      const char *late)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if ((v[i].kind == GK_SWEEP) == (pass == 1))
				check_entry(c, &v[i], late);
}

/* After the notes of a check that took a new repository: how to keep. */
static void newrepo_hint(struct check *c)
{
	const char *box = ward_qbox_path(&c->q);
	const char *id = box ? strrchr(box, '/') : NULL;

	if (!c->newrepo)
		return;
	gnote(c->notes,
	      "ward: a git repository made by a confined command runs what its "
	      "configuration names (core.fsmonitor, hooks) at your next `git "
	      "status`, so ward takes new ones away; to keep one, check it and "
	      "run `ward quarantine restore %s`, or let calls make "
	      "repositories with --keep-new-repos (keep_new_repos: true in "
	      "your user configuration)",
	      id ? id + 1 : "BOX");
}

/* --- the shared baseline ------------------------------------------------------ */

static bool has_ref(const struct gentry *e, uint64_t id)
{
	for (size_t i = 0; i < e->nrefs; i++)
		if (e->refs[i] == id)
			return true;
	return false;
}

static int add_ref(struct gentry *e, uint64_t id)
{
	uint64_t *r;

	if (has_ref(e, id))
		return 0;
	r = realloc(e->refs, (e->nrefs + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	r[e->nrefs++] = id;
	e->refs = r;
	return 0;
}

/*
 * Tidy @ep: participants that died (their slot is free) are dropped; an
 * entry that only dead participants guarded is checked first — its calls
 * ended before their check (a crashed or killed ward) — with the notes
 * into @c; an entry nobody guards any more is dropped. @me (0: none) is
 * leaving: its references go as well, and its entries were checked.
 */
static void tidy(struct gstore *st, struct gepoch *ep, struct check *c,
		 uint64_t me)
{
	size_t np = 0, ne = 0;
	bool *alive = calloc(ep->nparts + 1, sizeof(*alive));
	char late[128];
	int64_t dead_pid = 0;

	if (!alive) {
		c->notes->oom = true;
		return;
	}
	for (size_t i = 0; i < ep->nparts; i++) {
		alive[i] =
		    ep->parts[i].id != me && gstore_alive(st, &ep->parts[i]);
		if (!alive[i] && ep->parts[i].id != me)
			dead_pid = ep->parts[i].pid;
	}
	snprintf(late, sizeof(late),
		 "during an earlier call (ward pid %lld, which ended before "
		 "its check)",
		 (long long)dead_pid);
	for (size_t i = 0; i < ep->nents; i++) {
		struct gentry *e = &ep->ents[i];
		bool mine = me && has_ref(e, me), live = false, any = false;
		size_t nr = 0;

		for (size_t j = 0; j < e->nrefs; j++) {
			bool keep = false;

			any = any || e->refs[j] != me;
			for (size_t k = 0; k < ep->nparts; k++)
				if (ep->parts[k].id == e->refs[j])
					keep = alive[k];
			if (keep)
				e->refs[nr++] = e->refs[j];
			live = live || keep;
		}
		e->nrefs = nr;
		if (!live && !mine && any)
			check_entry(c, e, late);
		if (live) {
			ep->ents[ne++] = *e;
			continue;
		}
		gentry_clear(e);
	}
	ep->nents = ne;
	for (size_t i = 0; i < ep->nparts; i++)
		if (alive[i])
			ep->parts[np++] = ep->parts[i];
	ep->nparts = np;
	free(alive);
}

int ward_protect_guard_new(struct ward_protect_guard **out,
			   const ward_policy *policy)
{
	return ward_protect_guard_new_for(out, policy, WARD_RUNNER_LANDLOCK);
}

int ward_protect_guard_new_for(struct ward_protect_guard **out,
			       const ward_policy *policy,
			       enum ward_runner runner)
{
	struct ward_facts *f = NULL;
	int err;

	err = ward_facts_new(&f, policy, 0);
	if (!err)
		err = ward_protect_guard_new_facts(out, policy, f, runner);
	ward_facts_unref(f);
	return err;
}

/*
 * Join the shared baseline with @items: an entry someone alive guards is
 * taken as it is (the state before any of the live calls began), any
 * other is snapshotted now. Under the store's lock.
 */
static int join(struct ward_protect_guard *g, struct gepoch *ep,
		const struct gitem *items, size_t ni,
		const struct ward_protected *v, size_t nv)
{
	struct budget bb, *b = &bb;
	struct dircache dc = DIRCACHE_INIT;
	size_t first_new = ep->nents;
	struct gpart *parts;
	struct gentry *ents;
	int err = 0;

	memset(b, 0, sizeof(*b));
	ents = realloc(ep->ents, (ep->nents + ni + 1) * sizeof(*ents));
	parts = realloc(ep->parts, (ep->nparts + 1) * sizeof(*parts));
	if (ents)
		ep->ents = ents;
	if (parts)
		ep->parts = parts;
	g->v = calloc(ni + 1, sizeof(*g->v));
	if (!ents || !parts || !g->v)
		return -ENOMEM;
	for (size_t i = 0; i < ni && !err; i++) {
		struct gentry *e = NULL;

		for (size_t j = 0; j < ep->nents && !e; j++)
			if (gentry_is(&ep->ents[j], items[i].kind,
				      items[i].path))
				e = &ep->ents[j];
		if (!e) {
			err = snap_entry(&ep->ents[ep->nents], b, &dc,
					 &items[i], v, nv);
			if (err == 1) {
				err = 0;
				continue;
			}
			if (err)
				break;
			e = &ep->ents[ep->nents++];
		}
		err = add_ref(e, g->id);
	}
	if (err == WARD_EINVAL && b->over)
		err = ward_err(
		    WARD_EINVAL,
		    "ward cannot check the protected %s after the run: it "
		    "holds more than %d entries or %zu MiB, so the command "
		    "was not run; remove what does not belong there, or "
		    "release it with `unprotect:` in your user "
		    "configuration (ward-config(5))",
		    b->where, GUARD_ENTRIES_MAX, GUARD_HASH_MAX >> 20);
	dc_close(&dc);
	if (err) {
		/* Nothing of this call stays in the baseline. */
		for (size_t j = first_new; j < ep->nents; j++)
			gentry_clear(&ep->ents[j]);
		ep->nents = first_new;
		return err;
	}
	ep->parts[ep->nparts++] =
	    (struct gpart){gstore_slot(g->st), g->id, (int64_t)getpid()};
	return 0;
}

/* The entries of @ep that @g guards move to g->v (@ep is saved already
 * and let go next). */
static void keep_mine(struct ward_protect_guard *g, struct gepoch *ep)
{
	for (size_t i = 0; i < ep->nents; i++) {
		if (!has_ref(&ep->ents[i], g->id))
			continue;
		g->v[g->n++] = ep->ents[i];
		memset(&ep->ents[i], 0, sizeof(ep->ents[i]));
	}
}

int ward_protect_guard_new_facts(struct ward_protect_guard **out,
				 const ward_policy *policy,
				 const struct ward_facts *f,
				 enum ward_runner runner)
{
	const struct ward_protected *v = NULL;
	struct ward_protect_guard *g = NULL;
	struct gitem *items = NULL;
	struct ward_strv owned = {0};
	struct gepoch ep = {0};
	char **walk = NULL;
	size_t ni = 0, nv = 0;
	struct check c;
	int err;

	*out = NULL;
	if (ward_policy_mode(policy) != WARD_MODE_WORKSPACE_WRITE)
		return 0;
	err = ward_facts_protected(&v, &nv, f);
	if (err)
		return err;
	if (ward_policy_protect_git(policy) &&
	    !ward_policy_keep_new_repos(policy)) {
		err = ward_protect_walk_roots(&walk, policy, f->roots);
		if (err)
			return ward_err(err, "protected paths: out of memory");
	}
	err = collect_items(&items, &ni, f, runner, walk, &owned);
	if (err || !ni)
		goto out_free;
	g = calloc(1, sizeof(*g));
	if (!g) {
		err = -ENOMEM;
		goto out_free;
	}
	g->quota = ward_policy_quarantine_quota(policy);
	g->retention = ward_policy_quarantine_retention(policy);
	err = ward_skipset_init(&g->skip, policy);
	if (!err)
		err = gstore_open(&g->st);
	if (err)
		goto out_free;
	g->id = gstore_new_id();
	memset(&c, 0, sizeof(c));
	c.dc.fd = -1;
	ward_qbox_init(&c.q, g->quota, g->retention);
	c.notes = &g->pre;
	c.skip = &g->skip;
	gstore_lock(g->st);
	err = gstore_load(g->st, &ep);
	if (!err) {
		tidy(g->st, &ep, &c, 0);
		err = join(g, &ep, items, ni, v, nv);
	}
	if (!err)
		err = gstore_save(g->st, &ep);
	if (!err)
		keep_mine(g, &ep);
	gstore_unlock(g->st);
	ward_qbox_close(&c.q);
	dc_close(&c.dc);
	if (err)
		goto out_free;
	*out = g;
	g = NULL;
out_free:
	if (err == -ENOMEM)
		err = ward_err(-ENOMEM, "protected paths: out of memory");
	else if (err < 0 && err != WARD_EINVAL)
		err = ward_err(WARD_EINVAL,
			       "ward cannot record what its guard checks in "
			       "its state directory (%s), so the command was "
			       "not run",
			       strerror(-err));
	gepoch_clear(&ep);
	ward_protect_guard_free(g);
	free(items);
	ward_strv_free(walk);
	ward_strv_discard(&owned);
	return err;
}

int ward_protect_guard_check(char ***notes, bool *failed,
			     struct ward_protect_guard *g)
{
	struct ward_strv sv = {0};
	struct gepoch ep = {0};
	struct check c;
	int err;

	if (failed)
		*failed = false;
	memset(&c, 0, sizeof(c));
	c.dc.fd = -1;
	c.notes = &sv;
	if (g) {
		ward_strv_push_all(&sv, g->pre.v);
		ward_qbox_init(&c.q, g->quota, g->retention);
		c.skip = &g->skip;
		/* One check at a time, across processes: two calls sharing
		 * a baseline must not move the same entry twice. */
		gstore_lock(g->st);
		check_all(&c, g->v, g->n, NULL);
		/* The only call left lets the baseline go without reading
		 * it all (the common case: one call at a time). */
		err = gstore_load_parts(g->st, &ep);
		if (!err && !(ep.nparts == 1 && ep.parts[0].id == g->id)) {
			gepoch_clear(&ep);
			err = gstore_load(g->st, &ep);
		} else if (!err) {
			ep.nparts = 0;
		}
		if (!err) {
			tidy(g->st, &ep, &c, g->id);
			err = gstore_save(g->st, &ep);
		}
		if (err)
			gnote(&sv,
			      "ward: the guard could not update its state in "
			      "ward's state directory; the next call checks "
			      "this one's paths again");
		gstore_unlock(g->st);
		g->checked = true;
		newrepo_hint(&c);
		ward_qbox_close(&c.q);
		dc_close(&c.dc);
		gepoch_clear(&ep);
	}
	if (failed)
		*failed = c.failed;
	if (ward_strv_finish(notes, &sv) != 0)
		return ward_err(-ENOMEM, "protected paths: out of memory");
	return 0;
}

void ward_protect_guard_free(struct ward_protect_guard *g)
{
	if (!g)
		return;
	/* Unchecked, its slot is released: the next call sees it ended
	 * before its check and checks what it guarded. */
	gstore_close(g->st);
	for (size_t i = 0; i < g->n; i++)
		gentry_clear(&g->v[i]);
	free(g->v);
	ward_skipset_free(&g->skip);
	ward_strv_discard(&g->pre);
	free(g);
}
