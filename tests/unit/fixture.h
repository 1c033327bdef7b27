/*
 * What the unit tests share to own their world: a scratch directory of the
 * process's own, paths that are guaranteed not to exist, and where the
 * build's landlock-run is.
 *
 * A test that needs a path nobody has (a missing launcher, a cwd that is
 * gone, a state directory that must never appear) takes it from
 * fx_absent() or fx_unreachable(), never a fixed one such as
 * /nonexistent/...: a fixed path may exist on the machine (Debian's nobody
 * has /nonexistent as its home), and one that ward itself creates (the
 * probe cache in a state directory) would then exist for every later test
 * and every later run.
 *
 * The scratch directory is made under /var/tmp (not /tmp, a writable root
 * of workspace-write) on first use and removed when the process exits.
 */
#ifndef WARD_TEST_FIXTURE_H
#define WARD_TEST_FIXTURE_H

#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The build's landlock-run (build/tests/test_X → build/bin/landlock-run),
 * canonical, into @buf (PATH_MAX bytes). False when it is not built. A
 * provider needs it for Landlock runs and as the keeper of an unconfined
 * (danger-full-access) run.
 */
static inline bool fixture_launcher(char buf[PATH_MAX])
{
	char exe[PATH_MAX], guess[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(guess, sizeof(guess), "%s/../bin/landlock-run", exe);
	return realpath(guess, buf) && access(buf, X_OK) == 0;
}

#define FX_MAX_PATHS 64

struct fx_state {
	char scratch[PATH_MAX];
	pid_t owner; /* the process that made it (forks inherit the name) */
	char *paths[FX_MAX_PATHS];
	size_t npaths;
};

static inline struct fx_state *fx_state(void)
{
	static struct fx_state st;

	return &st;
}

static inline int fx_rm_one(const char *path, const struct stat *st, int flag,
			    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path); /* what cannot go stays: nothing to do about it */
	return 0;
}

/* At exit: the scratch directory (only by the process that made it) and
 * the paths handed out. */
static inline void fx_cleanup(void)
{
	struct fx_state *st = fx_state();

	if (st->scratch[0] && st->owner == getpid())
		nftw(st->scratch, fx_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < st->npaths; i++)
		free(st->paths[i]);
	st->npaths = 0;
}

/* The scratch directory (canonical); aborts when it cannot be made. */
static inline const char *fx_scratch(void)
{
	struct fx_state *st = fx_state();
	char tmpl[] = "/var/tmp/ward-unit.XXXXXX";
	char *real;

	if (st->scratch[0])
		return st->scratch;
	if (!mkdtemp(tmpl) || !(real = realpath(tmpl, NULL))) {
		perror("fixture: cannot make a scratch directory in /var/tmp");
		abort();
	}
	snprintf(st->scratch, sizeof(st->scratch), "%s", real);
	free(real);
	st->owner = getpid();
	atexit(fx_cleanup);
	return st->scratch;
}

/* A path of the scratch directory: "SCRATCH/@name" (owned by the
 * fixture, valid until exit). */
static inline const char *fx_path(const char *name)
{
	struct fx_state *st = fx_state();
	char *p = NULL;

	if (st->npaths == FX_MAX_PATHS ||
	    asprintf(&p, "%s/%s", fx_scratch(), name) < 0)
		abort();
	st->paths[st->npaths++] = p;
	return p;
}

/*
 * A path that does not exist (ENOENT): "SCRATCH/absent/@name"; nothing in
 * the tests makes SCRATCH/absent.
 */
static inline const char *fx_absent(const char *name)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "absent/%s", name);
	return fx_path(rel);
}

/*
 * A path that does not exist and cannot be created (ENOTDIR): "SCRATCH/
 * file/@name", where SCRATCH/file is a regular file — for a directory
 * ward must never find, such as a state directory it would otherwise
 * create (the probe cache) and find in every later test.
 */
static inline const char *fx_unreachable(const char *name)
{
	char file[PATH_MAX], rel[PATH_MAX];
	FILE *f;

	snprintf(file, sizeof(file), "%s/file", fx_scratch());
	f = fopen(file, "a");
	if (!f)
		abort();
	fclose(f);
	snprintf(rel, sizeof(rel), "file/%s", name);
	return fx_path(rel);
}

#endif
