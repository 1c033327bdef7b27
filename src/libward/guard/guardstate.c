/*
 * ward — the guard's shared baseline (see guard_internal.h): one snapshot
 * for every guarded call of the user's ward processes, in ward's state
 * directory, so that a call never takes another call's plant for the
 * original and a crashed ward leaves its baseline to be checked by the
 * next one.
 *
 *   <state>/guard/lock   byte 0: the protocol's lock; byte 1 + k: slot k,
 *                        held by one participant (an open file description
 *                        lock, F_OFD_SETLK: released by the kernel when the
 *                        holder dies, even by SIGKILL, so a crash never
 *                        wedges the others and is seen as a dead slot);
 *   <state>/guard/epoch  the participants and the entries they guard,
 *                        replaced atomically (a temporary file renamed over
 *                        it), checked by a 64-bit FNV-1a of its payload
 *                        (against damage: nothing confined can reach the
 *                        state directory).
 *
 * Why a shared persisted snapshot rather than a lock held from snapshot to
 * check: that lock would serialise every call of the user — a background
 * task (a dev server, a watcher) would hold it for hours, and parallel tool
 * calls would run one after the other. Here the lock is held only while a
 * call joins or checks the baseline (microseconds to a few milliseconds),
 * never while a command runs.
 *
 * Without a state directory (a home that does not exist) the baseline
 * lives in this process's memory: the calls of one process still share it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guard_internal.h"
#include "libward/internal.h"
#include "libward/policy/protect.h"
#include "util/util.h"

#define EPOCH_MAGIC   "WARDGE1\n"
#define EPOCH_VERSION 2u
/* magic, version, payload length, payload checksum */
#define EPOCH_HEAD (8 + 4 + 8 + 8)
/* An epoch larger than this is not read (the guard keeps at most 32 MiB of
 * content per call; this leaves room for many calls). */
#define EPOCH_MAX      ((size_t)512 * 1024 * 1024)
#define SLOTS_MAX      4096u
#define NODE_DEPTH_MAX 80

/* FNV-1a, 64 bits: the epoch's checksum. */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* --- entries ------------------------------------------------------------- */

void gnode_clear(struct gnode *nd)
{
	free(nd->name);
	free(nd->data);
	free(nd->link);
	for (size_t i = 0; i < nd->nkids; i++)
		gnode_clear(&nd->kids[i]);
	free(nd->kids);
	memset(nd, 0, sizeof(*nd));
}

void gentry_clear(struct gentry *e)
{
	free(e->dir);
	free(e->name);
	free(e->what);
	free(e->refs);
	gnode_clear(&e->node);
	memset(e, 0, sizeof(*e));
}

void gepoch_clear(struct gepoch *ep)
{
	for (size_t i = 0; i < ep->nents; i++)
		gentry_clear(&ep->ents[i]);
	free(ep->ents);
	free(ep->parts);
	memset(ep, 0, sizeof(*ep));
}

bool gentry_is(const struct gentry *e, char kind, const char *path)
{
	size_t dl = strlen(e->dir);
	const char *name;

	if (e->kind != kind)
		return false;
	if (kind == GK_SWEEP)
		return strcmp(e->dir, path) == 0;
	if (strcmp(e->dir, "/") == 0) {
		if (path[0] != '/')
			return false;
		name = path + 1;
	} else {
		if (strncmp(path, e->dir, dl) != 0 || path[dl] != '/')
			return false;
		name = path + dl + 1;
	}
	return strcmp(name, e->name) == 0;
}

/* --- serialisation --------------------------------------------------------- */

/* Where the encoding goes: counted only (@p NULL), then written. */
struct wbuf {
	unsigned char *p;
	size_t len;
};

static void put(struct wbuf *w, const void *v, size_t n)
{
	if (w->p && n)
		memcpy(w->p + w->len, v, n);
	w->len += n;
}

static void put_u8(struct wbuf *w, uint8_t v)
{
	put(w, &v, 1);
}

static void put_u32(struct wbuf *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}

static void put_u64(struct wbuf *w, uint64_t v)
{
	put(w, &v, sizeof(v));
}

static void put_bytes(struct wbuf *w, const void *p, size_t n)
{
	put_u64(w, n);
	put(w, p, n);
}

/* A string, or NULL (length UINT64_MAX). */
static void put_str(struct wbuf *w, const char *s)
{
	if (!s) {
		put_u64(w, UINT64_MAX);
		return;
	}
	put_bytes(w, s, strlen(s));
}

static void put_node(struct wbuf *w, const struct gnode *nd)
{
	put_str(w, nd->name);
	put_u32(w, (uint32_t)nd->mode);
	put_u64(w, (uint64_t)nd->dev);
	put_u64(w, (uint64_t)nd->ino);
	put(w, nd->digest, sizeof(nd->digest));
	put_u8(w, nd->kept);
	if (nd->kept)
		put_bytes(w, nd->data, nd->len);
	put_str(w, nd->link);
	put_u64(w, nd->nkids);
	for (size_t i = 0; i < nd->nkids; i++)
		put_node(w, &nd->kids[i]);
}

struct rbuf {
	const unsigned char *p;
	size_t left;
	bool bad;
};

static bool get(struct rbuf *r, void *out, size_t n)
{
	if (r->bad || r->left < n) {
		r->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static uint8_t get_u8(struct rbuf *r)
{
	uint8_t v;

	get(r, &v, 1);
	return v;
}

static uint32_t get_u32(struct rbuf *r)
{
	uint32_t v;

	get(r, &v, sizeof(v));
	return v;
}

static uint64_t get_u64(struct rbuf *r)
{
	uint64_t v;

	get(r, &v, sizeof(v));
	return v;
}

/* A string (NUL-free) or NULL; *ok false on a damaged record. */
static char *get_str(struct rbuf *r, bool *oom)
{
	uint64_t n = get_u64(r);
	char *s;

	if (r->bad || n == UINT64_MAX)
		return NULL;
	if (n > r->left || n >= PATH_MAX * 4) {
		r->bad = true;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		*oom = true;
		r->bad = true;
		return NULL;
	}
	get(r, s, (size_t)n);
	s[n] = '\0';
	if (memchr(s, '\0', (size_t)n)) {
		r->bad = true;
		free(s);
		return NULL;
	}
	return s;
}

static void get_node(struct rbuf *r, struct gnode *nd, bool *oom,
		     unsigned depth)
{
	uint64_t n;

	if (depth > NODE_DEPTH_MAX) {
		r->bad = true;
		return;
	}
	nd->name = get_str(r, oom);
	nd->mode = (mode_t)get_u32(r);
	nd->dev = (dev_t)get_u64(r);
	nd->ino = (ino_t)get_u64(r);
	get(r, nd->digest, sizeof(nd->digest));
	nd->kept = get_u8(r) != 0;
	if (nd->kept) {
		n = get_u64(r);
		if (r->bad || n > r->left) {
			r->bad = true;
			return;
		}
		nd->data = malloc(n ? (size_t)n : 1);
		if (!nd->data) {
			*oom = r->bad = true;
			return;
		}
		get(r, nd->data, (size_t)n);
		nd->len = (size_t)n;
	}
	nd->link = get_str(r, oom);
	n = get_u64(r);
	if (r->bad)
		return;
	/* Every node takes at least 60 bytes: more kids than that is a
	 * damaged record, not a large allocation. */
	if (n > r->left / 60) {
		r->bad = true;
		return;
	}
	if (n) {
		nd->kids = calloc((size_t)n, sizeof(*nd->kids));
		if (!nd->kids) {
			*oom = r->bad = true;
			return;
		}
	}
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		get_node(r, &nd->kids[i], oom, depth + 1);
		nd->nkids++;
		if (!r->bad &&
		    (!nd->kids[i].name || (i && strcmp(nd->kids[i - 1].name,
						       nd->kids[i].name) >= 0)))
			r->bad = true; /* kids are sorted by name */
	}
}

static void encode_into(struct wbuf *w, const struct gepoch *ep)
{
	put_u64(w, ep->nparts);
	for (size_t i = 0; i < ep->nparts; i++) {
		put_u32(w, ep->parts[i].slot);
		put_u64(w, ep->parts[i].id);
		put_u64(w, (uint64_t)ep->parts[i].pid);
	}
	put_u64(w, ep->nents);
	for (size_t i = 0; i < ep->nents; i++) {
		const struct gentry *e = &ep->ents[i];

		put_u8(w, (uint8_t)e->kind);
		put_str(w, e->dir);
		put_str(w, e->name);
		put_str(w, e->what);
		put_u64(w, (uint64_t)e->pdev);
		put_u64(w, (uint64_t)e->pino);
		put_u8(w, e->exists);
		put_u64(w, e->nrefs);
		for (size_t j = 0; j < e->nrefs; j++)
			put_u64(w, e->refs[j]);
		put_node(w, &e->node);
	}
}

/* @ep encoded after @head bytes left free, in one allocation of the
 * exact size (counted first). */
static int encode(unsigned char **out, size_t *out_len, const struct gepoch *ep,
		  size_t head)
{
	struct wbuf w = {NULL, 0};

	encode_into(&w, ep);
	*out_len = w.len;
	w.p = malloc(head + w.len);
	if (!w.p)
		return -ENOMEM;
	*out = w.p;
	w.p += head;
	w.len = 0;
	encode_into(&w, ep);
	return 0;
}

/*
 * @len bytes of payload at @p into @ep; with @parts_only the participants
 * only, and @p may be a prefix of the payload.
 */
static int decode(struct gepoch *ep, const unsigned char *p, size_t len,
		  bool parts_only)
{
	struct rbuf r = {p, len, false};
	bool oom = false;
	uint64_t n;

	memset(ep, 0, sizeof(*ep));
	n = get_u64(&r);
	if (n > SLOTS_MAX)
		r.bad = true;
	if (!r.bad && n) {
		ep->parts = calloc((size_t)n, sizeof(*ep->parts));
		if (!ep->parts)
			oom = r.bad = true;
	}
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		ep->parts[i].slot = get_u32(&r);
		ep->parts[i].id = get_u64(&r);
		ep->parts[i].pid = (int64_t)get_u64(&r);
		ep->nparts++;
	}
	if (parts_only && !r.bad)
		return 0;
	n = get_u64(&r);
	if (!r.bad && n > r.left / 32)
		r.bad = true;
	if (!r.bad && n) {
		ep->ents = calloc((size_t)n, sizeof(*ep->ents));
		if (!ep->ents)
			oom = r.bad = true;
	}
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		struct gentry *e = &ep->ents[i];
		uint64_t nr;

		ep->nents++;
		e->kind = (char)get_u8(&r);
		e->dir = get_str(&r, &oom);
		e->name = get_str(&r, &oom);
		e->what = get_str(&r, &oom);
		e->pdev = (dev_t)get_u64(&r);
		e->pino = (ino_t)get_u64(&r);
		e->exists = get_u8(&r) != 0;
		nr = get_u64(&r);
		if (r.bad || nr > SLOTS_MAX || !e->dir || !e->name ||
		    !e->what ||
		    (e->kind != GK_DEEP && e->kind != GK_IDENTITY &&
		     e->kind != GK_NAMES && e->kind != GK_SWEEP)) {
			r.bad = true;
			break;
		}
		if (nr) {
			e->refs = calloc((size_t)nr, sizeof(*e->refs));
			if (!e->refs) {
				oom = r.bad = true;
				break;
			}
		}
		for (uint64_t j = 0; j < nr; j++)
			e->refs[e->nrefs++] = get_u64(&r);
		get_node(&r, &e->node, &oom, 0);
	}
	if (!r.bad && r.left)
		r.bad = true;
	if (r.bad) {
		gepoch_clear(ep);
		return oom ? -ENOMEM : WARD_EINVAL;
	}
	return 0;
}

/* --- the store ------------------------------------------------------------- */

struct gstore {
	int dfd; /* <state>/guard, or -1: this process's memory */
	int lfd; /* the lock file (this participant's own description) */
	uint32_t slot;
	char dir[PATH_MAX];
};

/* The memory store: one baseline, one lock and the slots of this process. */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mem_slots_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char mem_slots[SLOTS_MAX / 8];
static char *mem_blob;
static size_t mem_len;

static int ofd_lock(int fd, short type, off_t at, bool wait)
{
	struct flock fl;
	int r;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = at;
	fl.l_len = 1;
	do {
		r = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
	} while (r != 0 && errno == EINTR);
	return r == 0 ? 0 : -errno;
}

/* Whether anyone but this description holds byte @at. */
static bool ofd_held(int fd, off_t at)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = at;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return true; /* unknown: alive (its entries are kept) */
	return fl.l_type != F_UNLCK;
}

/* True when @fd is ours and nobody else may write it. */
static bool trusted(int fd, bool dir)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	       !(st.st_mode & 022) &&
	       (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/*
 * <state>/guard, made (0700) when missing — never the home directory: a
 * home that does not exist means no state directory (-1, errno ENOENT).
 */
static int open_dir(char *path, size_t len)
{
	char *state = ward_state_dir(), *home_end;
	struct stat st;
	int fd, n;

	if (!state) {
		errno = ENOENT;
		return -1;
	}
	n = snprintf(path, len, "%s/guard", state);
	free(state);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	home_end = strstr(path, "/.local/state/ward/guard");
	if (home_end) {
		*home_end = '\0';
		n = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
		*home_end = '/';
		if (!n) {
			errno = ENOENT;
			return -1;
		}
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (util_mkdir_p(path) != 0)
			return -1;
		fd =
		    open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd >= 0 && !trusted(fd, true)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int gstore_open(struct gstore **out)
{
	struct gstore *st = calloc(1, sizeof(*st));
	int err;

	if (!st)
		return -ENOMEM;
	st->lfd = -1;
	st->dfd = open_dir(st->dir, sizeof(st->dir));
	if (st->dfd < 0) {
		/* No state directory, or one that is not ours alone: this
		 * process's memory (a foreign directory must not decide
		 * what the guard puts back). */
		st->dir[0] = '\0';
		pthread_mutex_lock(&mem_slots_lock);
		for (st->slot = 0; st->slot < SLOTS_MAX; st->slot++) {
			unsigned char bit = 1u << (st->slot % 8);

			if (!(mem_slots[st->slot / 8] & bit)) {
				mem_slots[st->slot / 8] |= bit;
				break;
			}
		}
		pthread_mutex_unlock(&mem_slots_lock);
		if (st->slot == SLOTS_MAX) {
			free(st);
			return ward_err(WARD_EINVAL,
					"the guard: more than %u calls at once",
					SLOTS_MAX);
		}
		*out = st;
		return 0;
	}
	do {
		st->lfd =
		    openat(st->dfd, "lock",
			   O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	} while (st->lfd < 0 && errno == EINTR);
	if (st->lfd < 0 || !trusted(st->lfd, false)) {
		err = st->lfd < 0 ? -errno : -EPERM;
		err = ward_err(WARD_EINVAL,
			       "ward cannot open its guard's lock in %s (%s), "
			       "so the command was not run",
			       st->dir, strerror(-err));
		goto out_close;
	}
	for (st->slot = 0; st->slot < SLOTS_MAX; st->slot++) {
		err = ofd_lock(st->lfd, F_WRLCK, 1 + (off_t)st->slot, false);
		if (!err)
			break;
		if (err != -EAGAIN && err != -EACCES) {
			err = ward_err(WARD_EINVAL,
				       "ward cannot lock its guard's state in "
				       "%s (%s), so the command was not run",
				       st->dir, strerror(-err));
			goto out_close;
		}
	}
	if (st->slot == SLOTS_MAX) {
		err = ward_err(WARD_EINVAL,
			       "the guard: more than %u calls at once",
			       SLOTS_MAX);
		goto out_close;
	}
	*out = st;
	return 0;

out_close:
	gstore_close(st);
	return err;
}

void gstore_lock(struct gstore *st)
{
	if (st->dfd < 0)
		pthread_mutex_lock(&mem_lock);
	else
		(void)ofd_lock(st->lfd, F_WRLCK, 0, true);
}

void gstore_unlock(struct gstore *st)
{
	if (st->dfd < 0)
		pthread_mutex_unlock(&mem_lock);
	else
		(void)ofd_lock(st->lfd, F_UNLCK, 0, false);
}

uint32_t gstore_slot(const struct gstore *st)
{
	return st->slot;
}

bool gstore_alive(struct gstore *st, const struct gpart *p)
{
	bool held;

	if (p->slot >= SLOTS_MAX || p->slot == st->slot)
		return false;
	if (st->dfd >= 0)
		return ofd_held(st->lfd, 1 + (off_t)p->slot);
	pthread_mutex_lock(&mem_slots_lock);
	held = mem_slots[p->slot / 8] & (1u << (p->slot % 8));
	pthread_mutex_unlock(&mem_slots_lock);
	return held;
}

/* The epoch file's bytes (malloc'd) or NULL with *err (0: none). */
static unsigned char *read_epoch(struct gstore *st, size_t *len, int *err)
{
	unsigned char *buf = NULL;
	struct stat sb;
	size_t got = 0;
	ssize_t r;
	int fd;

	*err = 0;
	do {
		fd = openat(st->dfd, "epoch",
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		if (errno != ENOENT)
			*err = -errno;
		return NULL;
	}
	if (!trusted(fd, false) || fstat(fd, &sb) != 0 ||
	    (size_t)sb.st_size > EPOCH_MAX) {
		close(fd);
		*err = WARD_EINVAL;
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	if (!buf) {
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	while (got < (size_t)sb.st_size) {
		r = read(fd, buf + got, (size_t)sb.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return buf;
}

/*
 * The baseline into @ep; with @parts_only its participants only (the
 * entries are left out: a call that is the only one left needs no more to
 * let the baseline go).
 */
static int load(struct gstore *st, struct gepoch *ep, bool parts_only)
{
	unsigned char *buf;
	size_t len = 0;
	uint64_t plen, sum;
	uint32_t ver;
	int err;

	memset(ep, 0, sizeof(*ep));
	if (st->dfd < 0) {
		if (!mem_blob)
			return 0;
		return decode(ep, (const unsigned char *)mem_blob, mem_len,
			      parts_only) == 0
			   ? 0
			   : -ENOMEM;
	}
	buf = read_epoch(st, &len, &err);
	if (!buf && !err)
		return 0;
	if (!buf && err != WARD_EINVAL)
		return ward_err(err,
				"ward cannot read its guard's state %s/"
				"epoch (%s), so the command was not run",
				st->dir, strerror(-err));
	err = WARD_EINVAL;
	if (buf && len >= EPOCH_HEAD && memcmp(buf, EPOCH_MAGIC, 8) == 0) {
		memcpy(&ver, buf + 8, 4);
		memcpy(&plen, buf + 12, 8);
		memcpy(&sum, buf + 20, 8);
		if (ver == EPOCH_VERSION && plen == len - EPOCH_HEAD &&
		    sum == fnv1a(buf + EPOCH_HEAD, len - EPOCH_HEAD))
			err = decode(ep, buf + EPOCH_HEAD, len - EPOCH_HEAD,
				     parts_only);
	}
	free(buf);
	if (err == WARD_EINVAL)
		return ward_err(
		    WARD_EINVAL,
		    "ward's guard state %s/epoch is damaged or was written by "
		    "another version of ward: ward cannot tell what the calls "
		    "that were running changed, so the command was not run; "
		    "check the repositories and startup files of your "
		    "workspaces, then remove that file",
		    st->dir);
	return err ? ward_err(err, "the guard: out of memory") : 0;
}

int gstore_load(struct gstore *st, struct gepoch *ep)
{
	return load(st, ep, false);
}

int gstore_load_parts(struct gstore *st, struct gepoch *ep)
{
	unsigned char head[4096];
	uint64_t plen;
	uint32_t ver;
	ssize_t n;
	int fd, err;

	/* The participants come first: a prefix of the file says who is
	 * there (no checksum: a damaged file is read whole below). */
	memset(ep, 0, sizeof(*ep));
	if (st->dfd < 0)
		return load(st, ep, true);
	do {
		fd = openat(st->dfd, "epoch",
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return errno == ENOENT ? 0 : load(st, ep, true);
	do {
		n = pread(fd, head, sizeof(head), 0);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n < EPOCH_HEAD || memcmp(head, EPOCH_MAGIC, 8) != 0)
		return load(st, ep, true);
	memcpy(&ver, head + 8, 4);
	memcpy(&plen, head + 12, 8);
	if (ver != EPOCH_VERSION || plen + EPOCH_HEAD > (uint64_t)n + EPOCH_MAX)
		return load(st, ep, true);
	err = decode(ep, head + EPOCH_HEAD, (size_t)n - EPOCH_HEAD, true);
	return err == 0 ? 0 : load(st, ep, true);
}

int gstore_save(struct gstore *st, const struct gepoch *ep)
{
	uint32_t ver = EPOCH_VERSION;
	unsigned char *file = NULL;
	uint64_t plen, sum;
	size_t len = 0;
	char tmp[64];
	int fd, err;

	if (!ep->nparts && !ep->nents) {
		if (st->dfd < 0) {
			free(mem_blob);
			mem_blob = NULL;
			mem_len = 0;
			return 0;
		}
		if (unlinkat(st->dfd, "epoch", 0) != 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	err = encode(&file, &len, ep, st->dfd < 0 ? 0 : EPOCH_HEAD);
	if (err)
		return err;
	if (st->dfd < 0) {
		free(mem_blob);
		mem_blob = (char *)file;
		mem_len = len;
		return 0;
	}
	/* One write of the header and the payload. */
	plen = len;
	sum = fnv1a(file + EPOCH_HEAD, len);
	memcpy(file, EPOCH_MAGIC, 8);
	memcpy(file + 8, &ver, 4);
	memcpy(file + 12, &plen, 8);
	memcpy(file + 20, &sum, 8);
	snprintf(tmp, sizeof(tmp), "epoch.tmp.%ld", (long)getpid());
	(void)unlinkat(st->dfd, tmp, 0);
	fd = openat(st->dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		free(file);
		return err;
	}
	err = util_write_all(fd, file, EPOCH_HEAD + len);
	free(file);
	if (close(fd) != 0 && !err)
		err = -errno;
	if (!err && renameat(st->dfd, tmp, st->dfd, "epoch") != 0)
		err = -errno;
	if (err)
		(void)unlinkat(st->dfd, tmp, 0);
	return err;
}

void gstore_close(struct gstore *st)
{
	if (!st)
		return;
	if (st->dfd < 0) {
		if (st->slot < SLOTS_MAX) {
			pthread_mutex_lock(&mem_slots_lock);
			mem_slots[st->slot / 8] &= ~(1u << (st->slot % 8));
			pthread_mutex_unlock(&mem_slots_lock);
		}
	} else {
		close(st->dfd);
	}
	if (st->lfd >= 0)
		close(st->lfd);
	free(st);
}

uint64_t gstore_new_id(void)
{
	uint64_t id = 0;

	while (id == 0) {
		if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
			id = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^
			     (uint64_t)(uintptr_t)&id;
	}
	return id;
}
