/*
 * Unit tests for repowalk.c: the walk for repositories reads a large tree
 * with helper threads and reports exactly what a walk alone would — every
 * `.git` (a directory, a file, deep or shallow) and nothing through a
 * symbolic link or inside what it leaves alone, every entry counted once,
 * every directory it entered kept as read — and its bounds stop it
 * wherever the walker that reaches them is.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "libward/policy/listings.h"
#include "libward/policy/protect.h"
#include "util.h"

/* Top directories, files in each, files in each one's "s". */
#define TOPS  40
#define FILES 150
#define SUBS  10

/* SCRATCH/@rel in @buf (the tree has more paths than fx_path keeps). */
static const char *at(char buf[PATH_MAX], const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", fx_scratch(), rel);
	return buf;
}

static void xmkdir(const char *rel)
{
	char p[PATH_MAX];

	if (mkdir(at(p, rel), 0755) != 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", rel, strerror(errno));
}

static void xtouch(const char *rel)
{
	char p[PATH_MAX];
	int fd = open(at(p, rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		fail_msg("create %s: %s", rel, strerror(errno));
	close(fd);
}

/*
 * The tree: t/dNNN (TOPS of them), each with FILES files and a directory
 * s of SUBS files. Repositories: t/.git, t/d005/.git, t/d017/s/.git and
 * a `.git` file in t/d033; inside t/d005/.git a directory the walk must
 * not enter (it holds a `.git` of its own); t/d020 is left alone (it holds
 * one too); t/link points at t/d001, whose t/d001/deep/.git is found once,
 * not again through the link.
 */
static void make_tree(void)
{
	static bool made;
	char rel[64];

	if (made)
		return;
	made = true;
	xmkdir("t");
	for (int d = 0; d < TOPS; d++) {
		snprintf(rel, sizeof(rel), "t/d%03d", d);
		xmkdir(rel);
		for (int f = 0; f < FILES; f++) {
			snprintf(rel, sizeof(rel), "t/d%03d/f%03d", d, f);
			xtouch(rel);
		}
		snprintf(rel, sizeof(rel), "t/d%03d/s", d);
		xmkdir(rel);
		for (int f = 0; f < SUBS; f++) {
			snprintf(rel, sizeof(rel), "t/d%03d/s/g%02d", d, f);
			xtouch(rel);
		}
	}
	xmkdir("t/.git");
	xmkdir("t/d005/.git");
	xmkdir("t/d005/.git/inner");
	xmkdir("t/d005/.git/inner/.git");
	xmkdir("t/d017/s/.git");
	xtouch("t/d033/.git");
	xmkdir("t/d020/.git");
	xmkdir("t/d001/deep");
	xmkdir("t/d001/deep/.git");
	if (symlink("d001", fx_path("t/link")) != 0)
		fail_msg("symlink: %s", strerror(errno));
}

struct seen {
	pthread_t caller;
	char found[16][PATH_MAX];
	size_t nfound;
	atomic_bool other; /* a walker other than the caller's ran */
	atomic_int inside; /* found callbacks running at once */
	bool overlap;
	const char *released;
	const char *root; /* the tree's t */
	bool share;	  /* make the walk shared (may_share) */
	bool given;	  /* the caller's walker gave a top directory away */
	int sub_top;	  /* the top the caller last asked a child of */
	int tops_asked;	  /* tops the caller asked of since */
};

/* Whether the walk may start helpers here (repowalk.c: two CPUs this
 * process may run on, a soft RLIMIT_NOFILE of 1,024). */
static bool may_share(void)
{
	struct rlimit nofile;
	cpu_set_t cpus;

	return sched_getaffinity(0, sizeof(cpus), &cpus) == 0 &&
	       CPU_COUNT(&cpus) >= 2 &&
	       getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
	       nofile.rlim_cur >= 1024;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Whether a thread other than the caller waits (sleeps): a helper the
 * walk has started and that has no work yet. @others: how many threads
 * other than the caller there are. */
static bool helper_waits(int *others)
{
	char p[PATH_MAX], st[512];
	pid_t me = (pid_t)gettid();
	bool waits = false;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		FILE *f;
		char *c;

		if (e->d_name[0] == '.' || atoi(e->d_name) == me)
			continue;
		++*others;
		snprintf(p, sizeof(p), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(p, "re");
		if (f && fgets(st, sizeof(st), f) && (c = strrchr(st, ')')) &&
		    c[1] == ' ' && c[2] == 'S')
			waits = true;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return waits;
}

/* The top directory @path is, or is below (its NNN; -1: neither);
 * @below: whether below. */
static int top_of(const struct seen *s, const char *path, bool *below)
{
	size_t n = strlen(s->root);
	char *end;
	long d;

	if (strncmp(path, s->root, n) != 0 || strncmp(path + n, "/d", 2) != 0)
		return -1;
	d = strtol(path + n + 2, &end, 10);
	if (end != path + n + 5 || (*end && *end != '/'))
		return -1;
	*below = *end == '/';
	return (int)d;
}

/* Wait (bounded: 30 s) for @done, or for a helper to wait for work. */
static void wait_for(struct seen *s, bool helper)
{
	for (int i = 0; i < 30000 && !atomic_load(&s->other); i++) {
		int others = 0;

		if (helper && (helper_waits(&others) || !others))
			return;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
}

/*
 * The caller's walker asks of the tops and their children in an order
 * that says when it gave a top away (give_outer asks of the next top
 * before the caller walks on in its own): more than the one top asked
 * of before the first child of a top. The test makes the walk shared
 * on any machine with two CPUs, however loaded, without timing:
 * - at each top the caller asks of, until one is given away, it lets a
 *   helper the walk has started come to wait for work;
 * - once a top is given away, at the first child of a top it asks of
 *   (never while it holds the walk's lock: give_outer asks of a child
 *   only after the caller's own loop asked of a sibling), it waits for
 *   the helper to ask of that top's child, so that it cannot walk the
 *   given top itself when done with its own part.
 */
static bool skip_cb(void *ctx, const char *path)
{
	struct seen *s = ctx;
	bool released = s->released && strcmp(path, s->released) == 0;
	bool below = false;
	int top = top_of(s, path, &below);

	if (!pthread_equal(pthread_self(), s->caller)) {
		atomic_store(&s->other, true);
	} else if (s->share && top >= 0 && !below) {
		s->tops_asked += !released;
		if (!s->given)
			wait_for(s, true);
	} else if (s->share && top >= 0 && top != s->sub_top) {
		s->given = s->given || s->tops_asked > 1;
		if (s->given)
			wait_for(s, false);
		s->sub_top = top;
		s->tops_asked = 0;
	}
	return released;
}

static void found_cb(void *ctx, int dirfd, const char *name, const char *path)
{
	struct seen *s = ctx;
	struct stat st;

	if (atomic_fetch_add(&s->inside, 1) != 0)
		s->overlap = true;
	/* The descriptor is the directory holding @name. */
	assert_int_equal(fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_string_equal(strrchr(path, '/') + 1, name);
	if (s->nfound < 16)
		snprintf(s->found[s->nfound], PATH_MAX, "%s", path);
	s->nfound++;
	atomic_fetch_sub(&s->inside, 1);
}

/* The names of a directory as a sorted text, read now or from @recs. */
static char *names_of(const char *recs, size_t len, const char *dir)
{
	char buf[32768] __attribute__((aligned(8)));
	char *v[FILES + 8], *out;
	size_t n = 0, total = 1;
	int fd = -1;
	long got;

	if (!recs) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_true(fd >= 0);
		got = util_getdents64(fd, buf, sizeof(buf));
		assert_true(got > 0);
		assert_int_equal(util_getdents64(fd, buf + got, 8), 0);
		recs = buf;
		len = (size_t)got;
	}
	for (size_t o = 0; o < len;) {
		const struct util_dirent64 *de =
		    (const struct util_dirent64 *)(const void *)(recs + o);

		o += de->d_reclen;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		assert_true(n < FILES + 8);
		v[n++] = (char *)de->d_name;
		total += strlen(de->d_name) + 1;
	}
	qsort(v, n, sizeof(*v), util_strp_cmp);
	out = calloc(1, total);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++) {
		strcat(out, v[i]);
		strcat(out, "\n");
	}
	if (fd >= 0)
		close(fd);
	return out;
}

static void assert_kept(struct ward_listings *l, const char *rel)
{
	char p[PATH_MAX];
	const char *dir = at(p, rel), *recs;
	char *want, *got;
	size_t len;

	recs = ward_listings_find(l, dir, &len);
	if (!recs)
		fail_msg("%s was not kept", rel);
	got = names_of(recs, len, dir);
	want = names_of(NULL, 0, dir);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* A walk of the tree by @s's callbacks, keeping into @l (NULL: none). */
static void walk_setup(struct ward_repo_walk *w, struct seen *s,
		       struct ward_listings *l)
{
	memset(w, 0, sizeof(*w));
	memset(s, 0, sizeof(*s));
	make_tree();
	s->caller = pthread_self();
	s->share = may_share();
	s->root = fx_path("t");
	s->sub_top = -1;
	w->max_depth = REPO_WALK_DEPTH_MAX;
	w->skip = skip_cb;
	w->found = found_cb;
	w->ctx = s;
	w->keep = l;
}

static void t_shared_walk(void **state)
{
	struct ward_repo_walk *w = calloc(1, sizeof(*w));
	struct seen *s = calloc(1, sizeof(*s));
	struct ward_listings *l = NULL;
	char rel[64], p[PATH_MAX], want[5][PATH_MAX];
	size_t len, entries;

	(void)state;
	assert_non_null(w);
	assert_non_null(s);
	assert_int_equal(ward_listings_new(&l), 0);
	walk_setup(w, s, l);
	s->released = fx_path("t/d020");
	assert_int_equal(ward_repo_walk(w, fx_path("t")), 0);
	assert_false(w->over);

	if (s->share)
		assert_true(atomic_load(&s->other));
	else
		print_message("one CPU, or fewer than 1,024 descriptors: the "
			      "walk ran alone\n");
	assert_false(s->overlap);

	/* Every repository, once, and nothing more. */
	assert_int_equal(s->nfound, 5);
	snprintf(want[0], PATH_MAX, "%s", fx_path("t/.git"));
	snprintf(want[1], PATH_MAX, "%s", fx_path("t/d005/.git"));
	snprintf(want[2], PATH_MAX, "%s", fx_path("t/d017/s/.git"));
	snprintf(want[3], PATH_MAX, "%s", fx_path("t/d033/.git"));
	snprintf(want[4], PATH_MAX, "%s", fx_path("t/d001/deep/.git"));
	qsort(s->found, s->nfound, PATH_MAX, cmp_path);
	qsort(want, 5, PATH_MAX, cmp_path);
	for (int i = 0; i < 5; i++)
		assert_string_equal(s->found[i], want[i]);

	/* Every entry of every directory entered, counted once: the top
	 * (TOPS + .git + link), each top but d020 (FILES + s, d005 and d033
	 * a .git more, d001 its deep), each s (SUBS, d017's a .git more),
	 * d001/deep (its .git). */
	entries = (TOPS + 2) + (TOPS - 1) * (FILES + 1) + 2 + 1 +
		  (TOPS - 1) * SUBS + 1 + 1;
	assert_int_equal(w->entries, entries);

	/* Every directory entered kept as it is; nothing else. */
	assert_kept(l, "t");
	for (int d = 0; d < TOPS; d++) {
		if (d == 20)
			continue;
		snprintf(rel, sizeof(rel), "t/d%03d", d);
		assert_kept(l, rel);
		snprintf(rel, sizeof(rel), "t/d%03d/s", d);
		assert_kept(l, rel);
	}
	assert_kept(l, "t/d001/deep");
	assert_null(ward_listings_find(l, at(p, "t/d020"), &len));
	assert_null(ward_listings_find(l, at(p, "t/d020/s"), &len));
	assert_null(ward_listings_find(l, at(p, "t/link"), &len));
	assert_null(ward_listings_find(l, at(p, "t/d005/.git"), &len));
	assert_null(ward_listings_find(l, at(p, "t/d005/.git/inner"), &len));
	ward_listings_free(l);
	free(s);
	free(w);
}

/*
 * The bounds stop a shared walk as they stop a walk alone: past
 * @max_entries it is over (naming a directory of the tree), and a
 * directory deeper than @max_depth stops it there.
 */
static void t_shared_bounds(void **state)
{
	struct ward_repo_walk *w = calloc(1, sizeof(*w));
	struct seen *s = calloc(1, sizeof(*s));
	struct ward_listings *l = NULL;
	const char *root = fx_path("t"), *rest;
	int depth = 0;

	(void)state;
	assert_non_null(w);
	assert_non_null(s);
	assert_int_equal(ward_listings_new(&l), 0);
	walk_setup(w, s, l);
	w->max_entries = 5000;
	assert_int_equal(ward_repo_walk(w, root), 0);
	assert_true(w->over);
	assert_int_equal(strncmp(w->at, root, strlen(root)), 0);
	assert_true(w->entries > 5000);
	ward_listings_free(l);

	walk_setup(w, s, NULL);
	w->max_depth = 1; /* t/dNNN/s is at depth 2 */
	assert_int_equal(ward_repo_walk(w, root), 0);
	assert_true(w->over);
	assert_int_equal(strncmp(w->at, root, strlen(root)), 0);
	for (rest = w->at + strlen(root); *rest; rest++)
		depth += *rest == '/';
	assert_int_equal(depth, 2);
	free(s);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(t_shared_walk),
	    cmocka_unit_test(t_shared_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
