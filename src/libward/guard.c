/*
 * ward — the guard: snapshots the protected paths inside the writable
 * roots before a run, checks them after it, and puts back what changed,
 * moving what the run left to the quarantine (see protect.h; the list of
 * protected paths is protect.c's).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "protect.h"
#include "util/sha256.h"
#include "util/util.h"

/* --- the guard ----------------------------------------------------------- */

/*
 * renameat2(2) (Linux 3.15), by number: the C libraries ward builds with
 * may lack the wrapper.
 */
#ifndef SYS_renameat2
#if defined(__x86_64__)
#define SYS_renameat2 316
#elif defined(__aarch64__)
#define SYS_renameat2 276
#endif
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

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
/* Bytes copied into the quarantine per check when it lies on another
 * file system (beyond: removed without a copy, and said so). */
#define GUARD_COPY_MAX ((size_t)256 * 1024 * 1024)
/* Entries gathered before they are moved: a directory is read again
 * until a pass finds nothing more (so any number is handled). */
#define GUARD_BATCH 4096
/* Names shown per kind of finding. */
#define GUARD_NAMES 5
/* A removal deeper than this is given up (the entry stays, said so). */
#define GUARD_REMOVE_DEPTH 256

/* One entry of a snapshot. */
struct gnode {
	char *name; /* NULL at the top of a guarded path */
	mode_t mode;
	dev_t dev;
	ino_t ino;
	unsigned char digest[WARD_SHA256_LEN]; /* regular files */
	char *data;			       /* kept content, or NULL */
	size_t len;
	bool kept;
	char *link;	    /* a symlink's target */
	struct gnode *kids; /* a directory's entries, by name */
	size_t nkids;
};

/* One guarded path. */
struct gentry {
	char *dir;  /* canonical parent */
	char *name; /* the last component */
	const char *what;
	struct stat pst; /* the parent's identity */
	bool exists;
	/* false: only its identity matters (the workspace's .git
	 * directory: objects and refs change in every commit). */
	bool deep;
	struct gnode node;
};

/* A snapshot: the guarded paths as they were. */
struct gsnap {
	struct gentry *v;
	size_t n;
};

/*
 * The snapshot of the guarded paths, shared by every guarded call of this
 * process that runs at the same time on the same paths. A call that
 * started while another one ran must not take the other's plant for the
 * original: it joins the first call's snapshot (the state before any of
 * them ran), every call's check compares against it, and it is dropped
 * when the last of them is done. Guarded by epochs_lock, which also
 * serializes the checks.
 */
struct epoch {
	char *key; /* the runner class and the paths, one per line */
	unsigned refs;
	struct gsnap *snap;
	struct epoch *next;
};

static pthread_mutex_t epochs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct epoch *epochs;

struct ward_protect_guard {
	struct epoch *ep;
};

/* What a snapshot used up; where it stopped. */
struct budget {
	size_t entries;
	size_t hashed;
	size_t kept;
	bool over;
	char where[PATH_MAX + 128];
};

static void gnode_clear(struct gnode *nd)
{
	free(nd->name);
	free(nd->data);
	free(nd->link);
	for (size_t i = 0; i < nd->nkids; i++)
		gnode_clear(&nd->kids[i]);
	free(nd->kids);
	memset(nd, 0, sizeof(*nd));
}

static void gentry_clear(struct gentry *e)
{
	free(e->dir);
	free(e->name);
	gnode_clear(&e->node);
}

static void gsnap_free(struct gsnap *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		gentry_clear(&g->v[i]);
	free(g->v);
	free(g);
}

void ward_protect_guard_free(struct ward_protect_guard *g)
{
	struct epoch **pp;

	if (!g)
		return;
	pthread_mutex_lock(&epochs_lock);
	if (g->ep && --g->ep->refs == 0) {
		for (pp = &epochs; *pp && *pp != g->ep; pp = &(*pp)->next)
			;
		if (*pp)
			*pp = g->ep->next;
		gsnap_free(g->ep->snap);
		free(g->ep->key);
		free(g->ep);
	}
	pthread_mutex_unlock(&epochs_lock);
	free(g);
}

static int open_dir(const char *path)
{
	int fd;

	do {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd;
}

static int openat_dir(int dirfd, const char *name)
{
	int fd;

	do {
		fd = openat(dirfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd;
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
	fd = openat_dir(pfd, name);
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
static int guard_add(struct gsnap *g, size_t *cap, struct budget *b,
		     const char *path, const char *what, bool deep)
{
	const char *slash = strrchr(path, '/');
	char buf[PATH_MAX];
	struct gentry *e;
	int pfd, err;

	if (!slash || !slash[1] || strlen(path) >= sizeof(buf))
		return 0;
	for (size_t i = 0; i < g->n; i++) {
		e = &g->v[i];
		if (strlen(e->dir) == (size_t)(slash - path) &&
		    strncmp(e->dir, path, (size_t)(slash - path)) == 0 &&
		    strcmp(e->name, slash + 1) == 0)
			return 0;
	}
	if (g->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;

		e = realloc(g->v, nc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		g->v = e;
		*cap = nc;
	}
	e = &g->v[g->n];
	memset(e, 0, sizeof(*e));
	e->dir =
	    slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	e->name = strdup(slash + 1);
	e->what = what;
	e->deep = deep;
	if (!e->dir || !e->name) {
		gentry_clear(e);
		return -ENOMEM;
	}
	pfd = open_dir(e->dir);
	if (pfd < 0 || fstat(pfd, &e->pst) != 0) {
		/* Its directory is missing: nothing can be planted there
		 * that git would find through it. */
		if (pfd >= 0)
			close(pfd);
		gentry_clear(e);
		return 0;
	}
	memcpy(buf, path, strlen(path) + 1);
	if (deep) {
		err = snap_node(b, &e->node, pfd, e->name, buf, strlen(buf), 0);
	} else {
		struct stat st;

		err = fstatat(pfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0
									   : 1;
		if (!err) {
			e->node.mode = st.st_mode;
			e->node.dev = st.st_dev;
			e->node.ino = st.st_ino;
		}
	}
	close(pfd);
	if (err == 1) {
		e->exists = false;
		err = 0;
	} else if (!err) {
		e->exists = true;
	}
	if (err == WARD_EINVAL && b->over)
		snprintf(b->where, sizeof(b->where), "%s (%s)", path, what);
	if (err) {
		if (err != WARD_EINVAL && err != -ENOMEM) {
			snprintf(b->where, sizeof(b->where), "%s", path);
			err = ward_err(WARD_EINVAL,
				       "ward cannot check %s (%s) after the "
				       "run: it cannot read it (errno %d), "
				       "so the command was not run; make it "
				       "readable, or release it with "
				       "`unprotect:` in your user "
				       "configuration",
				       path, what, -err);
		}
		gentry_clear(e);
		return err;
	}
	g->n++;
	return 0;
}

int ward_protect_guard_new(struct ward_protect_guard **out,
			   const ward_policy *policy)
{
	return ward_protect_guard_new_for(out, policy, WARD_RUNNER_LANDLOCK);
}

/*
 * Whether @runner keeps the protected path @pr read-only itself: bwrap
 * binds every existing one that is not a symlink (translate_bwrap.c).
 */
static bool runner_keeps(enum ward_runner runner,
			 const struct ward_protected *pr)
{
	struct stat st;

	if (runner != WARD_RUNNER_BWRAP && runner != WARD_RUNNER_CUSTOM)
		return false;
	return !(pr->flags & WARD_PROTECT_LINK) && lstat(pr->path, &st) == 0 &&
	       !S_ISLNK(st.st_mode);
}

/* One path to snapshot. */
struct gitem {
	const char *path;
	const char *what;
	bool deep;
};

/*
 * Snapshot @items into a new *out (NULL when none of them could be
 * looked at). Errors as ward_protect_guard_new().
 */
static int snapshot(struct gsnap **out, const struct gitem *items,
		    size_t nitems)
{
	struct gsnap *g = calloc(1, sizeof(*g));
	struct budget *b = calloc(1, sizeof(*b));
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	if (!g || !b) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < nitems && !err; i++)
		err = guard_add(g, &cap, b, items[i].path, items[i].what,
				items[i].deep);
	if (err == WARD_EINVAL && b->over)
		err = ward_err(
		    WARD_EINVAL,
		    "ward cannot check the protected %s after the run: it "
		    "holds more than %d entries or %zu MiB, so the command "
		    "was not run; remove what does not belong there, or "
		    "release it with `unprotect:` in your user "
		    "configuration (ward-config(5))",
		    b->where, GUARD_ENTRIES_MAX, GUARD_HASH_MAX >> 20);
	if (!err && g->n) {
		*out = g;
		g = NULL;
	}
out_free:
	free(b);
	gsnap_free(g);
	return err;
}

int ward_protect_guard_new_for(struct ward_protect_guard **out,
			       const ward_policy *policy,
			       enum ward_runner runner)
{
	const struct ward_protected *v = NULL;
	const char *ws = ward_policy_workspace(policy);
	struct ward_protect_guard *h = NULL;
	struct gitem *items = NULL;
	char *const *roots = NULL;
	struct gsnap *snap = NULL;
	struct epoch *ep;
	char *dotgit = NULL, *key = NULL;
	size_t n = 0, nitems = 0, klen = 0;
	bool repo = false, bound;
	FILE *m = NULL;
	int err;

	*out = NULL;
	if (ward_policy_mode(policy) != WARD_MODE_WORKSPACE_WRITE)
		return 0;
	err = ward_policy_protected(&v, &n, policy);
	if (!err)
		err = ward_policy_roots(&roots, policy);
	if (err)
		return err;
	bound = runner == WARD_RUNNER_BWRAP || runner == WARD_RUNNER_CUSTOM;
	items = calloc(n + 1, sizeof(*items));
	if (!items ||
	    asprintf(&dotgit, "%s/.git", strcmp(ws, "/") ? ws : "") < 0) {
		dotgit = NULL;
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n; i++) {
		bool inside = false, nested = false;

		if (v[i].kind == WARD_PROTECT_HOME)
			continue;
		for (size_t r = 0; roots[r] && !inside; r++)
			inside = util_path_within(v[i].path, roots[r]);
		/* A path inside another guarded one is in its snapshot. */
		for (size_t j = 0; j < n && !nested; j++)
			nested = j != i && v[j].kind != WARD_PROTECT_HOME &&
				 !(v[j].flags & WARD_PROTECT_LINK) &&
				 util_path_within(v[i].path, v[j].path) &&
				 strcmp(v[i].path, v[j].path) != 0;
		if (inside && !nested && !runner_keeps(runner, &v[i]))
			items[nitems++] =
			    (struct gitem){v[i].path, v[i].what, true};
		repo = repo || (inside && v[i].kind == WARD_PROTECT_GIT);
	}
	/* The workspace's .git itself, whatever it is, when there is a
	 * repository: replacing it replaces everything above. (Without
	 * one, a repository the command creates is its own.) */
	if (repo)
		items[nitems++] = (struct gitem){
		    dotgit, "the workspace's git directory entry", false};
	if (!nitems)
		goto out_free;
	m = open_memstream(&key, &klen);
	if (!m) {
		err = -ENOMEM;
		goto out_free;
	}
	fprintf(m, "%s\n", bound ? "bound" : "all");
	for (size_t i = 0; i < nitems; i++)
		fprintf(m, "%c%s\n", items[i].deep ? 'd' : 'i', items[i].path);
	if (fclose(m) != 0 || !key) {
		err = -ENOMEM;
		goto out_free;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		err = -ENOMEM;
		goto out_free;
	}
	pthread_mutex_lock(&epochs_lock);
	for (ep = epochs; ep && strcmp(ep->key, key) != 0; ep = ep->next)
		;
	if (ep) {
		/* Another call on the same paths runs: its snapshot is the
		 * state before either ran. */
		ep->refs++;
	} else {
		err = snapshot(&snap, items, nitems);
		ep = !err && snap ? calloc(1, sizeof(*ep)) : NULL;
		if (ep) {
			ep->key = key;
			key = NULL;
			ep->refs = 1;
			ep->snap = snap;
			snap = NULL;
			ep->next = epochs;
			epochs = ep;
		} else if (!err && snap) {
			err = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&epochs_lock);
	if (ep) {
		h->ep = ep;
		*out = h;
		h = NULL;
	}
out_free:
	if (err == -ENOMEM)
		err = ward_err(-ENOMEM, "protected paths: out of memory");
	gsnap_free(snap);
	free(h);
	free(key);
	free(items);
	free(dotgit);
	return err;
}

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

const char *ward_protect_quarantine_base(char *buf, size_t len)
{
	char *state = ward_state_dir();
	int n;

	if (!state)
		return NULL;
	n = snprintf(buf, len, "%s/quarantine", state);
	free(state);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* What one check found in one guarded path, by kind of finding. */
enum finding {
	F_ADDED,    /* appeared: moved to the quarantine */
	F_CHANGED,  /* changed: moved to the quarantine, original put back */
	F_REMOVED,  /* vanished: put back */
	F_MODE,	    /* permission bits changed: set back */
	F_LOST,	    /* could not be put back */
	F_STUCK,    /* could not be moved away: still there */
	F_DROPPED,  /* removed without a copy (no quarantine, or too big) */
	F_REPLACED, /* an identity-only path was replaced: moved away */
	F_COUNT,
};

struct tally {
	size_t n[F_COUNT];
	char *names[F_COUNT][GUARD_NAMES];
};

/* The quarantine of one check, created on first use. */
struct quarantine {
	char path[PATH_MAX + 128]; /* …/quarantine/<time>-<pid>-<n> */
	int fd;			   /* -1: not yet; -2: unavailable */
	size_t copied;
};

static void tally_add(struct tally *t, enum finding f, const char *path)
{
	size_t i = t->n[f]++;

	if (i < GUARD_NAMES && !t->names[f][i])
		t->names[f][i] = strdup(path);
}

static void tally_clear(struct tally *t)
{
	for (int f = 0; f < F_COUNT; f++)
		for (size_t i = 0; i < GUARD_NAMES; i++)
			free(t->names[f][i]);
	memset(t, 0, sizeof(*t));
}

/* mkdir @name in @dirfd (mode 0700) unless it exists; open it. */
static int mkdir_open(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
		return -1;
	return openat_dir(dirfd, name);
}

/*
 * The quarantine directory of this check: created (mode 0700, with ward's
 * state directory when missing, never the home directory itself) the
 * first time something is moved. -1 when there is none.
 */
static int quarantine_dir(struct quarantine *q)
{
	static unsigned counter;
	char base[PATH_MAX], name[96], *home_end;
	struct timespec ts;
	struct tm tm;
	struct stat st;
	int bfd;

	if (q->fd >= 0 || q->fd == -2)
		return q->fd >= 0 ? q->fd : -1;
	q->fd = -2;
	if (!ward_protect_quarantine_base(base, sizeof(base)))
		return -1;
	/* The directory holding ward's state directory's parents must
	 * exist (a home of /nonexistent is never created). */
	home_end = strstr(base, "/.local/state/ward/quarantine");
	if (home_end) {
		*home_end = '\0';
		if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode))
			return -1;
		*home_end = '/';
	}
	if (util_mkdir_p(base) != 0)
		return -1;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	for (int tries = 0; tries < 100 && q->fd < 0; tries++) {
		snprintf(name, sizeof(name),
			 "%04d%02d%02dT%02d%02d%02dZ-%ld-%u", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (long)getpid(),
			 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
		if (mkdirat(bfd, name, 0700) != 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		q->fd = openat_dir(bfd, name);
		if (q->fd < 0)
			q->fd = -2;
		else
			snprintf(q->path, sizeof(q->path), "%s/%s", base, name);
	}
	close(bfd);
	return q->fd >= 0 ? q->fd : -1;
}

/*
 * Remove @name in @dirfd and everything beneath it (no symlink followed).
 * Returns 0 or -errno.
 */
static int remove_tree(int pfd, const char *name, unsigned depth)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	if (unlinkat(pfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > GUARD_REMOVE_DEPTH)
		return -ELOOP;
	fd = openat_dir(pfd, name);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		bool any = false;

		while (!err && (de = readdir(d))) {
			if (is_dot(de->d_name))
				continue;
			any = true;
			err = remove_tree(dirfd(d), de->d_name, depth + 1);
		}
		if (err || !any)
			break;
		rewinddir(d);
	}
	closedir(d);
	if (!err && unlinkat(pfd, name, AT_REMOVEDIR) != 0)
		err = -errno;
	return err;
}

/*
 * Copy @name in @sfd to @dname in @dfd (a fresh name), no symlink
 * followed, within the quarantine's copy budget. Returns 0, -EFBIG (the
 * budget ran out: what was copied stays) or -errno.
 */
static int copy_tree(struct quarantine *q, int sfd, const char *name, int dfd,
		     const char *dname, unsigned depth)
{
	char buf[65536];
	struct dirent *de;
	struct stat st;
	ssize_t r;
	int in, outfd, err = 0;
	DIR *d;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		r = readlinkat(sfd, name, buf, sizeof(buf) - 1);
		if (r < 0)
			return -errno;
		buf[r] = '\0';
		return symlinkat(buf, dfd, dname) == 0 ? 0 : -errno;
	}
	if (S_ISREG(st.st_mode)) {
		if (q->copied + (size_t)st.st_size > GUARD_COPY_MAX)
			return -EFBIG;
		in = openat(sfd, name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (in < 0)
			return -errno;
		outfd = openat(
		    dfd, dname,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (outfd < 0) {
			err = -errno;
			close(in);
			return err;
		}
		while ((r = read_retry(in, buf, sizeof(buf))) > 0) {
			if (q->copied + (size_t)r > GUARD_COPY_MAX) {
				err = -EFBIG;
				break;
			}
			for (ssize_t off = 0; off < r;) {
				ssize_t w =
				    write(outfd, buf + off, (size_t)(r - off));

				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					err = -errno;
					break;
				}
				off += w;
			}
			if (err)
				break;
			q->copied += (size_t)r;
		}
		if (r < 0 && !err)
			err = -errno;
		close(in);
		close(outfd);
		return err;
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* a FIFO, socket or device: nothing to keep */
	if (depth > GUARD_DEPTH_MAX)
		return -ELOOP;
	outfd = mkdir_open(dfd, dname);
	if (outfd < 0)
		return -errno;
	in = openat_dir(sfd, name);
	d = in >= 0 ? fdopendir(in) : NULL;
	if (!d) {
		err = in >= 0 ? -ENOMEM : -errno;
		if (in >= 0)
			close(in);
		close(outfd);
		return err;
	}
	while (!err && (de = readdir(d))) {
		if (!is_dot(de->d_name))
			err = copy_tree(q, dirfd(d), de->d_name, outfd,
					de->d_name, depth + 1);
	}
	closedir(d);
	close(outfd);
	return err;
}

/*
 * Move @name in @dirfd (whose absolute path is @abs) into the quarantine
 * at the same absolute path, never over anything: renamed when the
 * quarantine is on the same file system, else copied and removed. With no
 * quarantine (no state directory) or past the copy budget it is removed
 * without a copy (F_DROPPED). Returns 0 (it is gone from @dirfd) or
 * -errno (it is still there).
 */
static int quarantine(struct quarantine *q, struct tally *t, int dirfd,
		      const char *name, const char *abs)
{
	char comp[NAME_MAX + 1], dname[NAME_MAX + 16];
	const char *p = abs, *slash;
	int qfd, fd, err;
	size_t n;

	qfd = quarantine_dir(q);
	if (qfd < 0)
		goto out_drop;
	fd = dup(qfd);
	if (fd < 0)
		goto out_drop;
	/* The directories of @abs below the quarantine, then a free name. */
	while (*p == '/')
		p++;
	while ((slash = strchr(p, '/'))) {
		int sub;

		n = (size_t)(slash - p);
		if (n == 0 || n > NAME_MAX) {
			p = slash + 1;
			continue;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		sub = mkdir_open(fd, comp);
		close(fd);
		if (sub < 0)
			goto out_drop;
		fd = sub;
		p = slash + 1;
	}
	for (int i = 0; i < 1000; i++) {
		struct stat st;

		if (i == 0)
			snprintf(dname, sizeof(dname), "%s", name);
		else
			snprintf(dname, sizeof(dname), "%s.%d", name, i);
		/* The quarantine is ours alone: a name seen free stays
		 * free (RENAME_NOREPLACE makes sure where it exists). */
		if (fstatat(fd, dname, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		err = 0;
#ifdef SYS_renameat2
		if (syscall(SYS_renameat2, dirfd, name, fd, dname,
			    RENAME_NOREPLACE) == 0) {
			close(fd);
			return 0;
		}
		err = errno;
		if (err == EEXIST)
			continue;
#endif
		if (!err || err == ENOSYS || err == EINVAL) {
			/* No RENAME_NOREPLACE (old kernel or file
			 * system). */
			err = renameat(dirfd, name, fd, dname) == 0 ? 0 : errno;
			if (!err) {
				close(fd);
				return 0;
			}
		}
		if (err != EXDEV) {
			close(fd);
			return -err;
		}
		/* Another file system: copy, then remove. */
		err = copy_tree(q, dirfd, name, fd, dname, 0);
		close(fd);
		if (err == -EFBIG)
			tally_add(t, F_DROPPED, abs);
		else if (err)
			goto out_remove;
		return remove_tree(dirfd, name, 0);
	}
	close(fd);
out_drop:
	tally_add(t, F_DROPPED, abs);
out_remove:
	return remove_tree(dirfd, name, 0);
}

/* Create @name in @dirfd with the bytes of @nd (it must not exist). */
static int restore_file(int dirfd, const char *name, const struct gnode *nd)
{
	size_t off = 0;
	ssize_t w;
	int fd, err = 0;

	do {
		fd = openat(
		    dirfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	while (off < nd->len) {
		w = write(fd, nd->data + off, nd->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (!err && fchmod(fd, nd->mode & 07777) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

/*
 * Put the snapshot @nd back as @name in @dirfd (nothing is there). What
 * cannot be put back (a file whose bytes were not kept, a FIFO, socket or
 * device) is tallied as lost.
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
		} else if ((fd = openat_dir(dirfd, name)) < 0) {
			err = -errno;
		} else {
			for (size_t i = 0; i < nd->nkids; i++) {
				size_t len = plen;

				if (!path_add(path, &len, nd->kids[i].name))
					continue;
				restore_node(t, fd, nd->kids[i].name,
					     &nd->kids[i], path, len);
				path[plen] = '\0';
			}
			if (fchmod(fd, nd->mode & 07777) != 0)
				err = -errno;
			close(fd);
		}
	} else {
		err = -ENOTSUP;
	}
	if (err)
		tally_add(t, F_LOST, path);
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

static void check_node(struct quarantine *q, struct tally *t, int dirfd,
		       const char *name, const struct gnode *nd, char *path,
		       size_t plen, bool deep);

/*
 * The entries of the directory @fd (snapshot @nd): what was added is
 * moved to the quarantine, in batches (the directory is read again after
 * each, so entries of any number are all handled and none is missed
 * because of a rename during readdir), then every snapshot entry is
 * checked.
 */
static void check_dir(struct quarantine *q, struct tally *t, int fd,
		      const struct gnode *nd, char *path, size_t plen)
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
			if (is_dot(de->d_name) || has_kid(nd, de->d_name))
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
			if (quarantine(q, t, fd, batch.v[i], path) == 0) {
				tally_add(t, F_ADDED, path);
				moved++;
			} else {
				tally_add(t, F_STUCK, path);
			}
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
	for (size_t i = 0; i < nd->nkids; i++) {
		size_t len = plen;

		if (!path_add(path, &len, nd->kids[i].name))
			continue;
		check_node(q, t, fd, nd->kids[i].name, &nd->kids[i], path, len,
			   true);
		path[plen] = '\0';
	}
}

/*
 * Check @name in @dirfd against the snapshot @nd and put it back. @deep
 * false: a directory's identity is all that counts.
 */
static void check_node(struct quarantine *q, struct tally *t, int dirfd,
		       const char *name, const struct gnode *nd, char *path,
		       size_t plen, bool deep)
{
	char buf[PATH_MAX];
	struct stat st;
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
		if (quarantine(q, t, dirfd, name, path) != 0) {
			tally_add(t, F_STUCK, path);
			return;
		}
		if (!deep) {
			tally_add(t, F_REPLACED, path);
			return;
		}
		tally_add(t, F_CHANGED, path);
		restore_node(t, dirfd, name, nd, path, plen);
		return;
	}
	if (!deep)
		return;
	if (!S_ISLNK(st.st_mode) && (st.st_mode & 07777) != (nd->mode & 07777))
		restore_mode(t, dirfd, name, nd->mode, path);
	if (!S_ISDIR(st.st_mode))
		return;
	fd = openat_dir(dirfd, name);
	if (fd < 0) {
		tally_add(t, F_STUCK, path);
		return;
	}
	check_dir(q, t, fd, nd, path, plen);
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

/* The notes of one guarded path's findings. */
static void report(struct ward_strv *notes, const struct gentry *e,
		   const struct tally *t, const struct quarantine *q)
{
	char names[4 * PATH_MAX];
	const char *qp = q->fd >= 0 ? q->path : "the quarantine";

	if (t->n[F_ADDED])
		gnote(notes,
		      "ward: protected (%s): %s appeared during the run; "
		      "moved to %s",
		      e->what, names_of(names, sizeof(names), t, F_ADDED), qp);
	if (t->n[F_CHANGED])
		gnote(notes,
		      "ward: protected (%s): %s changed during the run; the "
		      "new content was moved to %s and the original put back",
		      e->what, names_of(names, sizeof(names), t, F_CHANGED),
		      qp);
	if (t->n[F_REPLACED])
		gnote(notes,
		      "ward: protected (%s): %s was replaced during the "
		      "run; the replacement was moved to %s and the original "
		      "cannot be put back (look for it in the workspace): "
		      "check the project before you use git here",
		      e->what, names_of(names, sizeof(names), t, F_REPLACED),
		      qp);
	if (t->n[F_REMOVED])
		gnote(notes,
		      "ward: protected (%s): %s was removed during the run "
		      "and has been put back",
		      e->what, names_of(names, sizeof(names), t, F_REMOVED));
	if (t->n[F_MODE])
		gnote(notes,
		      "ward: protected (%s): the permissions of %s changed "
		      "during the run and have been set back",
		      e->what, names_of(names, sizeof(names), t, F_MODE));
	if (t->n[F_DROPPED])
		gnote(notes,
		      "ward: protected (%s): %s could not be kept in the "
		      "quarantine (no state directory, or more than %zu MiB "
		      "to copy) and was removed",
		      e->what, names_of(names, sizeof(names), t, F_DROPPED),
		      GUARD_COPY_MAX >> 20);
	if (t->n[F_LOST])
		gnote(notes,
		      "ward: protected (%s): the original of %s cannot be "
		      "put back (too large to keep, or not a file ward can "
		      "recreate); check it before you use git or open the "
		      "project here",
		      e->what, names_of(names, sizeof(names), t, F_LOST));
	if (t->n[F_STUCK])
		gnote(notes,
		      "ward: protected (%s): %s changed during the run and "
		      "could not be moved away or set back: remove it before "
		      "you use git or open the project here",
		      e->what, names_of(names, sizeof(names), t, F_STUCK));
}

/* Check one guarded path and put it back. */
static void check_entry(struct quarantine *q, const struct gentry *e,
			struct ward_strv *notes)
{
	struct tally t;
	char path[PATH_MAX];
	struct stat pst;
	int pfd;

	memset(&t, 0, sizeof(t));
	snprintf(path, sizeof(path), "%s/%s", strcmp(e->dir, "/") ? e->dir : "",
		 e->name);
	pfd = open_dir(e->dir);
	if (pfd < 0 || fstat(pfd, &pst) != 0 || !same_inode(&pst, &e->pst)) {
		if (pfd >= 0)
			close(pfd);
		gnote(notes,
		      "ward: %s was removed or replaced during the run: the "
		      "protected paths inside it were not checked; check "
		      "the project before you use git or open it here",
		      e->dir);
		return;
	}
	if (!e->exists) {
		if (fstatat(pfd, e->name, &pst, AT_SYMLINK_NOFOLLOW) == 0) {
			if (quarantine(q, &t, pfd, e->name, path) == 0)
				tally_add(&t, F_ADDED, path);
			else
				tally_add(&t, F_STUCK, path);
		}
	} else {
		check_node(q, &t, pfd, e->name, &e->node, path, strlen(path),
			   e->deep);
	}
	close(pfd);
	report(notes, e, &t, q);
	tally_clear(&t);
}

int ward_protect_guard_check(char ***notes, struct ward_protect_guard *g)
{
	struct quarantine q = {.fd = -1};
	struct ward_strv sv = {0};

	/* One check at a time: two calls sharing a snapshot must not move
	 * the same entry twice. */
	pthread_mutex_lock(&epochs_lock);
	for (size_t i = 0; g && g->ep && i < g->ep->snap->n; i++)
		check_entry(&q, &g->ep->snap->v[i], &sv);
	pthread_mutex_unlock(&epochs_lock);
	if (q.fd >= 0)
		close(q.fd);
	if (ward_strv_finish(notes, &sv) != 0)
		return ward_err(-ENOMEM, "protected paths: out of memory");
	return 0;
}
