/*
 * Unit tests for listings.c (the directory listings one call's walk for
 * repositories keeps for its glob walk) and for what the walk keeps
 * there (protect.c's ward_repo_walk with a keep): only directories read
 * to their end, never one reached through a symbolic link, never what it
 * leaves alone or does not enter (a `.git`), each entry's type known.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "libward/policy/listings.h"
#include "libward/policy/protect.h"
#include "util.h"

static void xmkdir(const char *rel)
{
	if (mkdir(fx_path(rel), 0755) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", rel, strerror(errno));
}

static void xtouch(const char *rel)
{
	FILE *f = fopen(fx_path(rel), "we");

	if (!f)
		fail_msg("create %s: %s", rel, strerror(errno));
	fclose(f);
}

/* One record of @name and @type into @buf (aligned as getdents64's). */
static size_t record(char *buf, const char *name, unsigned char type)
{
	struct util_dirent64 *e = (struct util_dirent64 *)(void *)buf;
	size_t len = offsetof(struct util_dirent64, d_name) + strlen(name) + 1;

	len = (len + 7) & ~(size_t)7;
	memset(e, 0, len);
	e->d_reclen = (unsigned short)len;
	e->d_type = type;
	memcpy(e->d_name, name, strlen(name));
	return len;
}

/* A directory kept whole is found by its path, byte for byte; an
 * incomplete one, or one kept already, is not (or not again). */
static void t_keep_find(void **state)
{
	struct ward_listings *l = NULL;
	char a[256] __attribute__((aligned(8)));
	char b[256] __attribute__((aligned(8)));
	size_t na, nb, len;
	const char *got;

	(void)state;
	assert_int_equal(ward_listings_new(&l), 0);
	na = record(a, "x.pem", DT_REG);
	na += record(a + na, "sub", DT_DIR);
	nb = record(b, "other", DT_LNK);

	ward_listings_begin(l, "/ws");
	ward_listings_add(l, a, na);
	ward_listings_end(l, true);
	ward_listings_begin(l, "/ws/half");
	ward_listings_add(l, b, nb);
	ward_listings_end(l, false);
	/* The first listing of a path stays. */
	ward_listings_begin(l, "/ws");
	ward_listings_add(l, b, nb);
	ward_listings_end(l, true);
	ward_listings_begin(l, "/ws/sub");
	ward_listings_add(l, b, nb);
	ward_listings_end(l, true);

	got = ward_listings_find(l, "/ws", &len);
	assert_non_null(got);
	assert_int_equal(len, na);
	assert_memory_equal(got, a, na);
	assert_int_equal((uintptr_t)got % 8, 0);
	assert_null(ward_listings_find(l, "/ws/half", &len));
	assert_null(ward_listings_find(l, "/ws/", &len));
	assert_null(ward_listings_find(l, "/w", &len));
	got = ward_listings_find(l, "/ws/sub", &len);
	assert_non_null(got);
	assert_int_equal(len, nb);
	assert_memory_equal(got, b, nb);
	ward_listings_free(l);

	/* No listings: nothing kept, nothing found. */
	ward_listings_begin(NULL, "/ws");
	ward_listings_add(NULL, a, na);
	ward_listings_end(NULL, true);
	assert_null(ward_listings_find(NULL, "/ws", &len));
	ward_listings_free(NULL);
}

/* Many directories: the index grows, every one is found. */
static void t_many(void **state)
{
	struct ward_listings *l = NULL;
	char rec[64] __attribute__((aligned(8))), path[64];
	size_t n, len;
	const char *got;

	(void)state;
	assert_int_equal(ward_listings_new(&l), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "/ws/d%d", i);
		n = record(rec, path + 4, DT_DIR);
		ward_listings_begin(l, path);
		ward_listings_add(l, rec, n);
		ward_listings_end(l, true);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(path, sizeof(path), "/ws/d%d", i);
		got = ward_listings_find(l, path, &len);
		assert_non_null(got);
		assert_string_equal(
		    ((const struct util_dirent64 *)(const void *)got)->d_name,
		    path + 4);
	}
	ward_listings_free(l);
}

/* Past WARD_LISTINGS_MAX nothing more is kept: not the directory that
 * did not fit, not a small one after it; what was kept stays. */
static void t_bound(void **state)
{
	struct ward_listings *l = NULL;
	size_t chunk = 1u << 20, len;
	char small[64] __attribute__((aligned(8)));
	char *big = calloc(1, chunk);
	size_t n = record(small, "f", DT_REG);

	(void)state;
	assert_non_null(big);
	assert_int_equal(ward_listings_new(&l), 0);
	ward_listings_begin(l, "/a");
	ward_listings_add(l, small, n);
	ward_listings_end(l, true);
	ward_listings_begin(l, "/big");
	for (size_t i = 0; i <= WARD_LISTINGS_MAX / chunk; i++)
		ward_listings_add(l, big, chunk);
	ward_listings_end(l, true);
	ward_listings_begin(l, "/b");
	ward_listings_add(l, small, n);
	ward_listings_end(l, true);
	assert_non_null(ward_listings_find(l, "/a", &len));
	assert_null(ward_listings_find(l, "/big", &len));
	assert_null(ward_listings_find(l, "/b", &len));
	ward_listings_free(l);
	free(big);
}

/* The names of a kept listing, sorted, one per line ("." and ".." out),
 * with a mark for directories; the same from the directory itself. */
static void names_kept(char *out, size_t cap, const char *recs, size_t len)
{
	char *v[64];
	size_t n = 0, o = 0;

	for (size_t at = 0; at < len;) {
		const struct util_dirent64 *e =
		    (const struct util_dirent64 *)(const void *)(recs + at);

		at += e->d_reclen;
		assert_int_not_equal(e->d_type, DT_UNKNOWN);
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		assert_true(n < 64);
		assert_int_not_equal(asprintf(&v[n++], "%s%s", e->d_name,
					      e->d_type == DT_DIR ? "/" : ""),
				     -1);
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(v[j], v[i]) < 0) {
				char *t = v[i];

				v[i] = v[j];
				v[j] = t;
			}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		o += (size_t)snprintf(out + o, cap - o, "%s\n", v[i]);
		free(v[i]);
	}
}

static bool skip_released(void *ctx, const char *path)
{
	return strcmp(path, (const char *)ctx) == 0;
}

static void found_none(void *ctx, int dirfd, const char *name, const char *path)
{
	(void)ctx;
	(void)dirfd;
	(void)name;
	(void)path;
}

/*
 * The walk keeps what it read: the root and every directory it entered,
 * as they are; not the `.git` it does not enter, not the directory it
 * leaves alone, not a directory behind a symbolic link. The guard's walk
 * (no keep) keeps nothing.
 */
static void t_walk_keeps(void **state)
{
	struct ward_repo_walk *w = calloc(1, sizeof(*w));
	struct ward_listings *l = NULL;
	const char *root = fx_path("ws"), *recs;
	char got[1024];
	size_t len;

	(void)state;
	assert_non_null(w);
	xmkdir("ws");
	xmkdir("ws/a");
	xmkdir("ws/a/b");
	xmkdir("ws/.git");
	xmkdir("ws/.git/objects");
	xmkdir("ws/released");
	xtouch("ws/x.pem");
	xtouch("ws/a/y.pem");
	xtouch("ws/released/z.pem");
	assert_int_equal(symlink("a", fx_path("ws/link")), 0);

	assert_int_equal(ward_listings_new(&l), 0);
	w->max_depth = REPO_WALK_DEPTH_MAX;
	w->skip = skip_released;
	w->found = found_none;
	w->ctx = (void *)fx_path("ws/released");
	w->keep = l;
	assert_int_equal(ward_repo_walk(w, root), 0);
	assert_false(w->over);

	recs = ward_listings_find(l, root, &len);
	assert_non_null(recs);
	names_kept(got, sizeof(got), recs, len);
	assert_string_equal(got, ".git/\na/\nlink\nreleased/\nx.pem\n");
	recs = ward_listings_find(l, fx_path("ws/a"), &len);
	assert_non_null(recs);
	names_kept(got, sizeof(got), recs, len);
	assert_string_equal(got, "b/\ny.pem\n");
	assert_non_null(ward_listings_find(l, fx_path("ws/a/b"), &len));
	assert_null(ward_listings_find(l, fx_path("ws/.git"), &len));
	assert_null(ward_listings_find(l, fx_path("ws/.git/objects"), &len));
	assert_null(ward_listings_find(l, fx_path("ws/released"), &len));
	assert_null(ward_listings_find(l, fx_path("ws/link"), &len));
	ward_listings_free(l);

	/* A walk past its bound keeps no directory it did not finish. */
	assert_int_equal(ward_listings_new(&l), 0);
	memset(w, 0, sizeof(*w));
	w->max_entries = 2;
	w->max_depth = REPO_WALK_DEPTH_MAX;
	w->found = found_none;
	w->keep = l;
	assert_int_equal(ward_repo_walk(w, root), 0);
	assert_true(w->over);
	assert_null(ward_listings_find(l, root, &len));
	ward_listings_free(l);
	free(w);
}

/*
 * ward_listings_only keeps only the named directories; ward_listings_read
 * reads one to its end (kept, types known) or returns the kept one; the
 * name index finds every entry and nothing else.
 */
static void t_only_read_names(void **state)
{
	struct ward_repo_walk *w = calloc(1, sizeof(*w));
	struct ward_listings *l = NULL;
	const char *root = fx_path("ws2"), *recs, *again;
	struct ward_names nm;
	char **only = calloc(2, sizeof(*only));
	char got[1024];
	size_t len, len2;
	int fd;

	(void)state;
	assert_non_null(w);
	assert_non_null(only);
	xmkdir("ws2");
	xmkdir("ws2/a");
	xmkdir("ws2/b");
	xtouch("ws2/a/f1");
	xtouch("ws2/b/f2");
	assert_int_equal(symlink("f1", fx_path("ws2/a/l")), 0);
	only[0] = strdup(fx_path("ws2/a"));
	assert_int_equal(ward_listings_new(&l), 0);
	assert_int_equal(ward_listings_only(l, only, 1), 0);
	w->max_depth = REPO_WALK_DEPTH_MAX;
	w->found = found_none;
	w->keep = l;
	assert_int_equal(ward_repo_walk(w, root), 0);
	assert_null(ward_listings_find(l, root, &len));
	assert_null(ward_listings_find(l, fx_path("ws2/b"), &len));
	recs = ward_listings_find(l, fx_path("ws2/a"), &len);
	assert_non_null(recs);
	names_kept(got, sizeof(got), recs, len);
	assert_string_equal(got, "f1\nl\n");
	/* Kept already: the same records, nothing read. */
	again = ward_listings_read(l, -1, fx_path("ws2/a"), &len2);
	assert_ptr_equal(again, recs);
	assert_int_equal(len2, len);
	/* Not wanted: not kept; every directory again once the filter
	 * is lifted. */
	fd = open(fx_path("ws2/b"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_null(ward_listings_read(l, fd, fx_path("ws2/b"), &len2));
	assert_int_equal(ward_listings_only(l, NULL, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_non_null(ward_listings_read(l, fd, fx_path("ws2/b"), &len2));
	close(fd);
	ward_listings_free(l);

	assert_int_equal(ward_listings_new(&l), 0);
	fd = open(fx_path("ws2/a"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	recs = ward_listings_read(l, fd, fx_path("ws2/a"), &len);
	close(fd);
	assert_non_null(recs);
	names_kept(got, sizeof(got), recs, len);
	assert_string_equal(got, "f1\nl\n");
	assert_ptr_equal(ward_listings_find(l, fx_path("ws2/a"), &len2), recs);
	assert_true(ward_names_index(&nm, recs, len));
	assert_int_equal(nm.count, 2);
	assert_non_null(ward_names_find(&nm, "f1"));
	assert_int_equal(ward_names_find(&nm, "f1")->d_type, DT_REG);
	assert_int_equal(ward_names_find(&nm, "l")->d_type, DT_LNK);
	assert_null(ward_names_find(&nm, "f2"));
	assert_null(ward_names_find(&nm, "."));
	assert_null(ward_names_find(&nm, "f"));
	ward_names_free(&nm);
	ward_listings_free(l);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_keep_find),
	    cmocka_unit_test(t_many),
	    cmocka_unit_test(t_bound),
	    cmocka_unit_test(t_walk_keeps),
	    cmocka_unit_test(t_only_read_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
