/*
 * ward — the walk for repositories (protect.h: ward_repo_walk).
 *
 * Before a call under workspace-write and again after it (the guard's
 * sweep), ward reads every directory of the writable roots for `.git`
 * entries: in a tree of 100,000 files that is most of the call, and it is
 * the kernel's getdents64 that costs, one directory after another. The
 * walk starts alone and stays alone in a small tree; once it has looked
 * at WALK_HELPERS_AFTER entries it starts helper threads (one fewer than
 * the CPUs it may run on, at most WALK_HELPERS_MAX, and only with
 * descriptors to spare: WALK_HELPERS_NOFILE). While a walker
 * waits, the others give it work: the directory nearest the root that
 * any of them has still to enter (the largest piece left, so a hand-over
 * is rare), opened by the giver exactly as it would have entered it
 * (below its parent's descriptor, O_NOFOLLOW): no walker resolves a
 * path. What the walk reports is the same whichever walker read a
 * directory: every `.git`, the entries counted, the directories kept
 * (listings.h). The callbacks (@found, the listings) run one at a time,
 * under the walk's lock; @skip may run in several walkers at once and
 * must only read. The order of @found is the order in which walkers
 * reached the entries: callers that print sort.
 *
 * Every helper is joined before ward_repo_walk returns; a helper that
 * cannot be started leaves the walk to the walkers it has.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "listings.h"
#include "protect.h"
#include "util/util.h"

/* Entries looked at before helpers start: a workspace of a few thousand
 * files is walked in about a millisecond, less than starting a thread
 * and handing it work costs. */
#define WALK_HELPERS_AFTER 4096
#define WALK_HELPERS_MAX   3
/* The soft RLIMIT_NOFILE below which the walk stays alone. */
#define WALK_HELPERS_NOFILE 1024
/* Directories given away and not yet taken (each holds a descriptor). */
#define WALK_QUEUE_MAX 16

struct witem {
	int fd;
	unsigned depth;
	char *path;
};

struct walk;

/* A directory a walker is in: its descriptor, the length of its path
 * (a prefix of the walker's path), its names still to enter. */
struct frame {
	int fd;
	size_t plen, next, end;
	unsigned depth;
};

/* The kinds of the names on a walker's stack. */
#define K_DIR  'd'
#define K_GIT  'g'
#define K_GONE 'x' /* given to another walker */

/* One walker: the walk's caller, or a helper. */
struct walker {
	struct walk *k;
	/* The records of the directory being read, gathered to be kept
	 * at once while helpers run. */
	char *rec;
	size_t rlen, rcap;
	bool rfail;
	/* The directories being read, outermost first, and each one's
	 * names still to enter (a range of @arena). */
	struct frame *fr;
	unsigned nfr, capfr;
	/* The stack of names to enter (one allocation per walker). */
	char *arena;
	size_t alen, acap;
	char small[4096];
	char buf[8192] __attribute__((aligned(8)));
	char path[PATH_MAX];
};

struct walk {
	struct ward_repo_walk *w;
	struct walker *first; /* the caller's */
	atomic_size_t entries;
	atomic_bool over;
	/* Set once by the caller's walker before the first helper starts;
	 * from then on the fields below and every callback take @mu. */
	bool shared;
	bool tried; /* helpers were started, or could not be */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct witem q[WALK_QUEUE_MAX];
	size_t nq;
	atomic_uint idle; /* helpers waiting for a directory */
	unsigned busy;	  /* walkers inside a directory given away */
	bool done;
	pthread_t tid[WALK_HELPERS_MAX];
	struct walker *helper[WALK_HELPERS_MAX];
	unsigned nhelpers;
};

static void lock(struct walk *k)
{
	if (k->shared)
		pthread_mutex_lock(&k->mu);
}

static void unlock(struct walk *k)
{
	if (k->shared)
		pthread_mutex_unlock(&k->mu);
}

static bool over(struct walk *k)
{
	return atomic_load_explicit(&k->over, memory_order_relaxed);
}

/* Stop the walk, naming where (the first walker to stop names it). */
__attribute__((format(printf, 2, 3))) static void stop(struct walk *k,
						       const char *fmt, ...)
{
	va_list ap;

	lock(k);
	if (!atomic_exchange(&k->over, true)) {
		va_start(ap, fmt);
		vsnprintf(k->w->at, sizeof(k->w->at), fmt, ap);
		va_end(ap);
	}
	unlock(k);
}

static bool grow(char **v, size_t *cap, size_t need, char *small)
{
	size_t c = *cap ? 2 * *cap : 8192;
	char *n;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	n = *v == small ? malloc(c) : realloc(*v, c);
	if (!n)
		return false;
	if (*v == small && small)
		memcpy(n, small, *cap);
	*v = n;
	*cap = c;
	return true;
}

static void gather(struct walker *r, const void *rec, size_t len)
{
	if (r->rfail || !grow(&r->rec, &r->rcap, r->rlen + len, NULL)) {
		r->rfail = true;
		return;
	}
	memcpy(r->rec + r->rlen, rec, len);
	r->rlen += len;
}

static void walk_dir(struct walker *r, int fd, size_t plen, unsigned depth);

/*
 * A walker waits: give it the directory nearest the root that @r has
 * still to enter. Entered as the frame's own loop would enter it (the
 * same skip and depth checks, the same open); a name that cannot be
 * opened is left to that loop, which says why.
 */
static void give_outer(struct walker *r)
{
	struct walk *k = r->k;
	struct ward_repo_walk *w = k->w;

	if (!k->shared || !atomic_load_explicit(&k->idle, memory_order_relaxed))
		return;
	pthread_mutex_lock(&k->mu);
	for (unsigned i = 0; i < r->nfr && k->nq < atomic_load(&k->idle) &&
			     k->nq < WALK_QUEUE_MAX;
	     i++) {
		struct frame *f = &r->fr[i];

		for (size_t at = f->next; at < f->end;) {
			char *kind = &r->arena[at];
			const char *name = kind + 1;
			size_t n = strlen(name);
			char *path;
			int sub;

			at += n + 2;
			if (*kind != K_DIR || f->depth + 1 > w->max_depth ||
			    f->plen + 1 + n >= PATH_MAX)
				continue;
			path = malloc(f->plen + n + 2);
			if (!path)
				break;
			memcpy(path, r->path, f->plen);
			snprintf(path + f->plen, n + 2, "%s%s",
				 f->plen == 1 && r->path[0] == '/' ? "" : "/",
				 name);
			if (w->skip && w->skip(w->ctx, path)) {
				*kind = K_GONE;
				free(path);
				continue;
			}
			if ((sub = util_openat_dir(f->fd, name)) < 0) {
				free(path);
				continue;
			}
			*kind = K_GONE;
			k->q[k->nq++] = (struct witem){sub, f->depth + 1, path};
			k->busy++;
			pthread_cond_signal(&k->cv);
			break;
		}
	}
	pthread_mutex_unlock(&k->mu);
}

/* Walk a directory given away (called with @mu held; returns with it). */
static void take(struct walker *r)
{
	struct walk *k = r->k;
	struct witem it = k->q[--k->nq];
	size_t n = strlen(it.path);

	pthread_mutex_unlock(&k->mu);
	memcpy(r->path, it.path, n + 1);
	free(it.path);
	walk_dir(r, it.fd, n, it.depth);
	close(it.fd);
	pthread_mutex_lock(&k->mu);
	if (--k->busy == 0 && k->nq == 0)
		pthread_cond_broadcast(&k->cv);
}

static void *helper_main(void *arg)
{
	struct walker *r = arg;
	struct walk *k = r->k;

	pthread_mutex_lock(&k->mu);
	for (;;) {
		while (!k->nq && !k->done) {
			atomic_fetch_add(&k->idle, 1);
			pthread_cond_wait(&k->cv, &k->mu);
			atomic_fetch_sub(&k->idle, 1);
		}
		if (k->done)
			break;
		take(r);
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

static struct walker *walker_new(struct walk *k)
{
	struct walker *r = malloc(sizeof(*r));

	if (!r)
		return NULL;
	memset(r, 0, offsetof(struct walker, small));
	r->k = k;
	r->arena = r->small;
	r->acap = sizeof(r->small);
	return r;
}

static void walker_free(struct walker *r)
{
	if (r->arena != r->small)
		free(r->arena);
	free(r->rec);
	free(r->fr);
	free(r);
}

/* The helpers, once the walk is large enough to share (called by the
 * caller's walker between two directories, so no listing is half
 * kept). */
static void start_helpers(struct walk *k)
{
	struct rlimit nofile;
	cpu_set_t cpus;
	unsigned want;
	sigset_t all, old;

	k->tried = true;
	/* The CPUs this process may run on (not the machine's), and
	 * descriptors to spare (a helper holds its own). */
	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 ||
	    CPU_COUNT(&cpus) < 2 || getrlimit(RLIMIT_NOFILE, &nofile) != 0 ||
	    nofile.rlim_cur < WALK_HELPERS_NOFILE)
		return;
	want = (unsigned)CPU_COUNT(&cpus) - 1;
	if (want > WALK_HELPERS_MAX)
		want = WALK_HELPERS_MAX;
	if (pthread_mutex_init(&k->mu, NULL) != 0)
		return;
	if (pthread_cond_init(&k->cv, NULL) != 0) {
		pthread_mutex_destroy(&k->mu);
		return;
	}
	k->shared = true;
	/* The helpers take no signals: the caller's thread handles them as
	 * it did before the walk. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned i = 0; i < want; i++) {
		struct walker *r = walker_new(k);

		if (!r)
			break;
		if (pthread_create(&k->tid[k->nhelpers], NULL, helper_main,
				   r)) {
			walker_free(r);
			break;
		}
		k->helper[k->nhelpers++] = r;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The caller's walker, done with its own part: it walks what is still
 * given away, then ends the helpers. */
static void finish(struct walker *r)
{
	struct walk *k = r->k;

	if (!k->shared)
		return;
	pthread_mutex_lock(&k->mu);
	while (k->nq || k->busy) {
		if (k->nq) {
			take(r);
		} else {
			atomic_fetch_add(&k->idle, 1);
			pthread_cond_wait(&k->cv, &k->mu);
			atomic_fetch_sub(&k->idle, 1);
		}
	}
	k->done = true;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
	for (unsigned i = 0; i < k->nhelpers; i++) {
		pthread_join(k->tid[i], NULL);
		walker_free(k->helper[i]);
	}
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mu);
	k->shared = false;
}

/*
 * One directory (@fd, absolute path r->path of @plen bytes). Its entries
 * are read with getdents64 into the walker's buffer, start to end; the
 * `.git` entries and the directories among them are noted on the
 * walker's stack of names, and only then acted on — each directory is
 * read once, and a walker holds one descriptor per level. With @keep,
 * each directory read to its end is kept as read (listings.h), for the
 * glob walk of the same call.
 */
static void walk_dir(struct walker *r, int fd, size_t plen, unsigned depth)
{
	struct walk *k = r->k;
	struct ward_repo_walk *w = k->w;
	char *path = r->path;
	size_t mark = r->alen;
	unsigned me;
	/* Kept as read: streamed while the walk is alone, else gathered
	 * and added at once under the lock. */
	bool stream = w->keep && !k->shared, gathering = w->keep && k->shared;
	long got = -1;

	if (stream)
		ward_listings_begin(w->keep, path);
	r->rlen = 0;
	r->rfail = false;
	while (!over(k) &&
	       (got = util_getdents64(fd, r->buf, sizeof(r->buf))) > 0) {
		size_t n = 0, seen;

		for (long o = 0; o < got;) {
			struct util_dirent64 *de =
			    (struct util_dirent64 *)(void *)(r->buf + o);

			o += de->d_reclen;
			n += !is_dot(de->d_name);
		}
		seen = atomic_fetch_add(&k->entries, n) + n;
		if (w->max_entries && seen > w->max_entries) {
			stop(k, "%s", path);
			break;
		}
		for (long o = 0; o < got && !over(k);) {
			struct util_dirent64 *de =
			    (struct util_dirent64 *)(void *)(r->buf + o);
			const char *name = de->d_name;
			bool git = strcmp(name, ".git") == 0;
			size_t len = strlen(name);

			o += de->d_reclen;
			if (is_dot(name))
				continue;
			/* Kept listings say what every entry is, as the
			 * glob walk would have asked (listings.h). */
			if (de->d_type == DT_UNKNOWN && (!git || w->keep))
				de->d_type = util_dirent_type(fd, name);
			if (!git && de->d_type != DT_DIR)
				continue;
			if (!grow(&r->arena, &r->acap, r->alen + len + 2,
				  r->small)) {
				stop(k, "%s (out of memory)", path);
				break;
			}
			r->arena[r->alen++] = git ? K_GIT : K_DIR;
			memcpy(r->arena + r->alen, name, len + 1);
			r->alen += len + 1;
		}
		if (over(k))
			break;
		if (stream)
			ward_listings_add(w->keep, r->buf, (size_t)got);
		else if (gathering)
			gather(r, r->buf, (size_t)got);
	}
	if (stream) {
		ward_listings_end(w->keep, !over(k) && got == 0);
	} else if (gathering && !r->rfail && !over(k) && got == 0) {
		lock(k);
		ward_listings_begin(w->keep, path);
		ward_listings_add(w->keep, r->rec, r->rlen);
		ward_listings_end(w->keep, true);
		unlock(k);
	}
	if (r == k->first && !k->tried &&
	    atomic_load(&k->entries) >= WALK_HELPERS_AFTER)
		start_helpers(k);
	if (r->nfr == r->capfr) {
		unsigned cap = r->capfr ? 2 * r->capfr : 16;
		struct frame *v = realloc(r->fr, cap * sizeof(*v));

		if (!v) {
			stop(k, "%s (out of memory)", path);
			r->alen = mark;
			return;
		}
		r->fr = v;
		r->capfr = cap;
	}
	me = r->nfr++;
	r->fr[me] = (struct frame){fd, plen, mark, r->alen, depth};
	while (r->fr[me].next < r->fr[me].end && !over(k)) {
		/* The stack and the frames may move as deeper levels grow
		 * them: offsets and indexes. */
		size_t at = r->fr[me].next;
		char kind = r->arena[at];
		size_t n = strlen(r->arena + at + 1);
		const char *name;
		int sub;

		r->fr[me].next = at + n + 2;
		if (kind == K_GONE)
			continue;
		if (plen + 1 + n >= PATH_MAX) {
			stop(k, "%s", path);
			break;
		}
		if (plen == 1 && path[0] == '/') /* the root "/" */
			memcpy(path + 1, r->arena + at + 1, n + 1);
		else {
			path[plen] = '/';
			memcpy(path + plen + 1, r->arena + at + 1, n + 1);
		}
		name = path + strlen(path) - n;
		if (kind == K_GIT) {
			lock(k);
			w->found(w->ctx, fd, name, path);
			unlock(k);
		} else if (!w->skip || !w->skip(w->ctx, path)) {
			if (depth + 1 > w->max_depth) {
				stop(k, "%s", path);
			} else if ((sub = util_openat_dir(fd, name)) >= 0) {
				give_outer(r);
				walk_dir(r, sub, strlen(path), depth + 1);
				close(sub);
			} else if (errno != ENOENT && errno != ENOTDIR &&
				   errno != ELOOP && errno != EACCES) {
				/* Out of descriptors or memory: a directory
				 * not looked at is not a directory without a
				 * repository. */
				stop(k, "%s (%s)", path, strerror(errno));
			}
		}
		path[plen] = '\0';
	}
	r->nfr--;
	r->alen = mark;
}

int ward_repo_walk(struct ward_repo_walk *w, const char *root)
{
	struct walk k;
	struct walker *r;
	size_t n = strlen(root);
	int fd;

	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	do {
		fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	memset(&k, 0, sizeof(k));
	k.w = w;
	atomic_init(&k.entries, w->entries);
	atomic_init(&k.over, false);
	atomic_init(&k.idle, 0);
	r = k.first = walker_new(&k);
	if (!r) {
		close(fd);
		w->over = true;
		snprintf(w->at, sizeof(w->at), "%s (out of memory)", root);
		return 0;
	}
	memcpy(r->path, root, n + 1);
	walk_dir(r, fd, n, 0);
	finish(r);
	walker_free(r);
	close(fd);
	w->entries = atomic_load(&k.entries);
	w->over = atomic_load(&k.over);
	return 0;
}
