/*
 * ward — the directory listings one call read (listings.h).
 *
 * One arena holds, per directory kept, its path (padded to 8 bytes) and
 * then its records as getdents64 wrote them (each a multiple of 8 bytes
 * long, so they stay aligned); a table of offsets and an open-addressing
 * index by the path's hash find them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "listings.h"
#include "util/util.h"

struct ldir {
	uint64_t hash;
	size_t path_off, path_len;
	size_t rec_off, rec_len;
};

struct ward_listings {
	char *arena;
	size_t alen, acap;
	struct ldir *dirs;
	size_t ndirs, capdirs;
	size_t *index; /* icap slots: a dirs[] index + 1, 0 when free */
	size_t icap;
	bool full; /* WARD_LISTINGS_MAX reached: nothing more is kept */
	char **want; /* NULL, or the only paths kept (sorted) */
	size_t nwant;
	/* The directory being filled (begin … end). */
	bool filling, failed;
	struct ldir cur;
};

/* FNV-1a, 64 bits: the paths are short and the index small. */
static uint64_t path_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The dirs[] index of @path (of @n bytes, hash @h), or SIZE_MAX. */
static size_t lookup(const struct ward_listings *l, const char *path, size_t n,
		     uint64_t h)
{
	if (!l->icap)
		return SIZE_MAX;
	for (size_t i = h & (l->icap - 1);; i = (i + 1) & (l->icap - 1)) {
		const struct ldir *d;

		if (!l->index[i])
			return SIZE_MAX;
		d = &l->dirs[l->index[i] - 1];
		if (d->hash == h && d->path_len == n &&
		    memcmp(l->arena + d->path_off, path, n) == 0)
			return l->index[i] - 1;
	}
}

/* Room for @n more bytes in the arena, within WARD_LISTINGS_MAX. */
static bool reserve(struct ward_listings *l, size_t n)
{
	size_t cap;
	char *a;

	if (n > WARD_LISTINGS_MAX - l->alen) {
		l->full = true;
		return false;
	}
	if (l->alen + n <= l->acap)
		return true;
	cap = l->acap ? l->acap : 65536;
	while (cap < l->alen + n)
		cap *= 2;
	a = realloc(l->arena, cap);
	if (!a)
		return false;
	l->arena = a;
	l->acap = cap;
	return true;
}

/* Index dirs[@at] (its hash is new: the caller looked it up). */
static bool index_add(struct ward_listings *l, size_t at)
{
	if (2 * (l->ndirs + 1) > l->icap) {
		size_t cap = l->icap ? 2 * l->icap : 256;
		size_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return false;
		for (size_t i = 0; i < l->icap; i++) {
			size_t j;

			if (!l->index[i])
				continue;
			j = l->dirs[l->index[i] - 1].hash & (cap - 1);
			while (v[j])
				j = (j + 1) & (cap - 1);
			v[j] = l->index[i];
		}
		free(l->index);
		l->index = v;
		l->icap = cap;
	}
	for (size_t i = l->dirs[at].hash & (l->icap - 1);;
	     i = (i + 1) & (l->icap - 1)) {
		if (!l->index[i]) {
			l->index[i] = at + 1;
			return true;
		}
	}
}

int ward_listings_new(struct ward_listings **out)
{
	struct ward_listings *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	*out = l;
	return 0;
}

void ward_listings_free(struct ward_listings *l)
{
	if (!l)
		return;
	free(l->arena);
	free(l->dirs);
	free(l->index);
	for (size_t i = 0; i < l->nwant; i++)
		free(l->want[i]);
	free(l->want);
	free(l);
}

int ward_listings_only(struct ward_listings *l, char **paths, size_t n)
{
	if (l) {
		for (size_t i = 0; i < l->nwant; i++)
			free(l->want[i]);
		free(l->want);
		l->want = NULL;
		l->nwant = 0;
	}
	if (!l) {
		for (size_t i = 0; paths && i < n; i++)
			free(paths[i]);
		free(paths);
		return 0;
	}
	if (paths) {
		qsort(paths, n, sizeof(*paths), util_strp_cmp);
		l->want = paths;
		l->nwant = n;
	}
	return 0;
}

void ward_listings_begin(struct ward_listings *l, const char *path)
{
	size_t n, pad;

	if (!l)
		return;
	l->filling = false;
	if (l->full || (l->want && !bsearch(&path, l->want, l->nwant,
					    sizeof(*l->want), util_strp_cmp)))
		return;
	n = strlen(path);
	memset(&l->cur, 0, sizeof(l->cur));
	l->cur.hash = path_hash(path, n);
	/* Kept already (a root inside another root): the first stays. */
	if (lookup(l, path, n, l->cur.hash) != SIZE_MAX)
		return;
	pad = (n + 7) & ~(size_t)7;
	if (!reserve(l, pad))
		return;
	l->cur.path_off = l->alen;
	l->cur.path_len = n;
	memcpy(l->arena + l->alen, path, n);
	memset(l->arena + l->alen + n, 0, pad - n);
	l->alen += pad;
	l->cur.rec_off = l->alen;
	l->filling = true;
	l->failed = false;
}

void ward_listings_add(struct ward_listings *l, const void *records, size_t len)
{
	if (!l || !l->filling || l->failed)
		return;
	if (!reserve(l, len)) {
		l->failed = true;
		return;
	}
	memcpy(l->arena + l->alen, records, len);
	l->alen += len;
}

void ward_listings_end(struct ward_listings *l, bool complete)
{
	if (!l || !l->filling)
		return;
	l->filling = false;
	l->cur.rec_len = l->alen - l->cur.rec_off;
	if (complete && !l->failed && l->ndirs == l->capdirs) {
		size_t cap = l->capdirs ? 2 * l->capdirs : 256;
		struct ldir *v = realloc(l->dirs, cap * sizeof(*v));

		if (v) {
			l->dirs = v;
			l->capdirs = cap;
		} else {
			l->failed = true;
		}
	}
	if (complete && !l->failed) {
		l->dirs[l->ndirs] = l->cur;
		if (index_add(l, l->ndirs)) {
			l->ndirs++;
			return;
		}
	}
	/* Not kept: its bytes are given back. */
	l->alen = l->cur.path_off;
}

const void *ward_listings_find(const struct ward_listings *l, const char *path,
			       size_t *len)
{
	size_t n, at;

	if (!l)
		return NULL;
	n = strlen(path);
	at = lookup(l, path, n, path_hash(path, n));
	if (at == SIZE_MAX)
		return NULL;
	*len = l->dirs[at].rec_len;
	return l->arena + l->dirs[at].rec_off;
}

const void *ward_listings_read(struct ward_listings *l, int fd,
			       const char *path, size_t *len)
{
	const void *kept = ward_listings_find(l, path, len);
	char buf[32768] __attribute__((aligned(8)));
	long got;

	if (kept || !l || l->full)
		return kept;
	ward_listings_begin(l, path);
	if (!l->filling)
		return NULL;
	while ((got = util_getdents64(fd, buf, sizeof(buf))) > 0) {
		for (long o = 0; o < got;) {
			struct util_dirent64 *de =
			    (struct util_dirent64 *)(void *)(buf + o);

			o += de->d_reclen;
			if (de->d_type == DT_UNKNOWN)
				de->d_type = util_dirent_type(fd, de->d_name);
		}
		ward_listings_add(l, buf, (size_t)got);
	}
	ward_listings_end(l, got == 0);
	return ward_listings_find(l, path, len);
}

/* FNV-1a of a name. */
static uint64_t name_hash(const char *s)
{
	return path_hash(s, strlen(s));
}

static bool is_dot_name(const char *s)
{
	return s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]));
}

bool ward_names_index(struct ward_names *n, const void *rec, size_t len)
{
	const char *r = rec;
	size_t count = 0, cap = 16;

	memset(n, 0, sizeof(*n));
	for (size_t o = 0; o < len;) {
		const struct util_dirent64 *de = (const void *)(r + o);

		o += de->d_reclen;
		count += !is_dot_name(de->d_name);
	}
	while (cap < 2 * count)
		cap *= 2;
	n->slot = calloc(cap, sizeof(*n->slot));
	if (!n->slot)
		return false;
	n->rec = r;
	n->len = len;
	n->count = count;
	n->cap = cap;
	for (size_t o = 0; o < len;) {
		const struct util_dirent64 *de = (const void *)(r + o);
		size_t i;

		if (!is_dot_name(de->d_name)) {
			for (i = name_hash(de->d_name) & (cap - 1); n->slot[i];
			     i = (i + 1) & (cap - 1))
				;
			n->slot[i] = o + 1;
		}
		o += de->d_reclen;
	}
	return true;
}

const struct util_dirent64 *ward_names_find(const struct ward_names *n,
					    const char *name)
{
	if (!n->cap)
		return NULL;
	for (size_t i = name_hash(name) & (n->cap - 1); n->slot[i];
	     i = (i + 1) & (n->cap - 1)) {
		const struct util_dirent64 *de =
		    (const void *)(n->rec + n->slot[i] - 1);

		if (strcmp(de->d_name, name) == 0)
			return de;
	}
	return NULL;
}

void ward_names_free(struct ward_names *n)
{
	free(n->slot);
	memset(n, 0, sizeof(*n));
}
