/*
 * bench_confine — how long ward_provider_confine() takes with five glob
 * access rules over a workspace of 100,000 files, against the same confine
 * without rules (issue 3; target: <= 100 ms median with the rules).
 *
 * The tree is generated under /var/tmp (not /tmp: /tmp is a writable root
 * of its own) and removed at the end: 100 directories x 10 subdirectories
 * x 100 files, a few hundred of them matching the rules. Each variant is
 * confined once to warm the caches, then N times; the median, p10 and p90
 * are printed. bwrap and landlock are both measured (the runner is forced,
 * so there is no probe); for bwrap the glob walk is the profile's, for
 * Landlock the walk that decides the complement grants (only `--` globs
 * outside the roots are walked: inside a root Landlock cannot express
 * them, so walking would change nothing).
 *
 * Usage: bench_confine [-n RUNS] [--files N] [--launcher PATH] [--keep]
 * Exit: 0 measured (a missed target is reported, not an error), 1 failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ward/ward.h"

#define TARGET_MS 100.0

static const char *const globs[] = {
    "-- **/*.pem", "-- **/.env", "-- **/id_*", "r- **/*.lock", "r- **/secrets",
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* snprintf into a path buffer; -1 when it does not fit. */
#define PATHF(buf, ...)                                                        \
	(snprintf(buf, sizeof(buf), __VA_ARGS__) >= (int)sizeof(buf) ? -1 : 0)

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/*
 * @files files in 100 x 10 directories. Every 500th file is a .pem, every
 * 700th an id_*, every 900th a .lock; each top directory has a .env and
 * every tenth a secrets/ directory.
 */
static int make_tree(const char *ws, long files, long *matches)
{
	char p[PATH_MAX];
	long made = 0, per_dir = files / 1000 ? files / 1000 : 1;

	*matches = 0;
	for (int a = 0; a < 100 && made < files; a++) {
		if (PATHF(p, "%s/pkg%02d", ws, a) != 0 || mkdir(p, 0755) != 0)
			return -1;
		if (PATHF(p, "%s/pkg%02d/.env", ws, a) != 0 || touch(p) != 0)
			return -1;
		made++;
		++*matches;
		if (a % 10 == 0) {
			if (PATHF(p, "%s/pkg%02d/secrets", ws, a) != 0 ||
			    mkdir(p, 0755) != 0)
				return -1;
			++*matches;
		}
		for (int b = 0; b < 10 && made < files; b++) {
			if (PATHF(p, "%s/pkg%02d/mod%d", ws, a, b) != 0 ||
			    mkdir(p, 0755) != 0)
				return -1;
			for (long f = 0; f < per_dir && made < files; f++) {
				const char *name = "src";
				const char *ext = ".c";

				if (made % 500 == 0)
					ext = ".pem";
				else if (made % 700 == 0)
					name = "id_rsa";
				else if (made % 900 == 0)
					ext = ".lock";
				if (strcmp(ext, ".c") || strcmp(name, "src"))
					++*matches;
				if (PATHF(p, "%s/pkg%02d/mod%d/%s%ld%s", ws, a,
					  b, name, made, ext) != 0 ||
				    touch(p) != 0)
					return -1;
				made++;
			}
		}
	}
	return 0;
}

struct stats {
	double median, p10, p90;
};

/* Confine `true` @runs times (after one warm-up); 0 or -1. */
static int measure(struct stats *st, ward_provider *prov,
		   const ward_policy *pol, int runs)
{
	char *const argv[] = {"true", NULL};
	double *t = calloc((size_t)runs, sizeof(*t));
	ward_confined *c = NULL;

	if (!t)
		return -1;
	if (ward_provider_confine(&c, prov, pol, argv) != 0) {
		fprintf(stderr, "bench_confine: confine: %s\n",
			ward_error_last());
		free(t);
		return -1;
	}
	ward_confined_free(c);
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms();

		if (ward_provider_confine(&c, prov, pol, argv) != 0) {
			free(t);
			return -1;
		}
		t[i] = now_ms() - t0;
		ward_confined_free(c);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	st->median = t[runs / 2];
	st->p10 = t[runs / 10];
	st->p90 = t[runs * 9 / 10];
	free(t);
	return 0;
}

static void launcher_default(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	snprintf(buf, len, "build/bin/landlock-run");
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	/* build/bench/bench_confine -> build/bin/landlock-run */
	if (slash)
		snprintf(buf, len, "%.*s/../bin/landlock-run",
			 (int)(slash - exe), exe);
}

int main(int argc, char **argv)
{
	char tmpl[] = "/var/tmp/ward-bench-confine-XXXXXX";
	char ws[PATH_MAX], cmd[PATH_MAX + 16], launcher[PATH_MAX];
	static const enum ward_runner runners[] = {WARD_RUNNER_BWRAP,
						   WARD_RUNNER_LANDLOCK};
	struct ward_rules_env env = {0};
	ward_rules *rules = NULL;
	ward_policy *plain = NULL, *ruled = NULL;
	long files = 100000, matches = 0;
	int runs = 31, rc = 1;
	bool keep = false;
	double t0;

	launcher_default(launcher, sizeof(launcher));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--files") && i + 1 < argc)
			files = atol(argv[++i]);
		else if (!strcmp(argv[i], "--launcher") && i + 1 < argc)
			snprintf(launcher, sizeof(launcher), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--keep"))
			keep = true;
		else {
			fprintf(stderr,
				"usage: bench_confine [-n RUNS] [--files N] "
				"[--launcher PATH] [--keep]\n");
			return 1;
		}
	}
	if (runs < 3)
		runs = 3;
	if (!mkdtemp(tmpl)) {
		perror("bench_confine: mkdtemp");
		return 1;
	}
	snprintf(ws, sizeof(ws), "%s/ws", tmpl);
	t0 = now_ms();
	if (mkdir(ws, 0755) != 0 || make_tree(ws, files, &matches) != 0) {
		perror("bench_confine: making the tree");
		goto out_remove;
	}
	printf("workspace: %ld files in 1,100 directories (%ld matching "
	       "paths), made in %.0f ms\n",
	       files, matches, now_ms() - t0);
	printf("rules:");
	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++)
		printf(" '%s'", globs[i]);
	printf("\n");

	env.workspace = ws;
	if (ward_rules_new(&rules) != 0)
		goto out_remove;
	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		if (ward_rules_add(rules, globs[i], &env, NULL) != 0) {
			fprintf(stderr, "bench_confine: %s\n",
				ward_error_last());
			goto out_free;
		}
	}
	if (ward_policy_new(&plain, WARD_MODE_WORKSPACE_WRITE, ws) != 0 ||
	    ward_policy_new(&ruled, WARD_MODE_WORKSPACE_WRITE, ws) != 0 ||
	    ward_policy_set_rules(ruled, rules) != 0) {
		fprintf(stderr, "bench_confine: %s\n", ward_error_last());
		goto out_free;
	}
	/* A workspace without a .git: protected paths cost one lstat. */
	printf("confine (ward_provider_confine, forced runner, no probe), "
	       "%d runs after one warm-up, ms:\n",
	       runs);
	rc = 0;
	for (size_t r = 0; r < 2; r++) {
		struct ward_provider_options opts = WARD_PROVIDER_OPTIONS_INIT;
		ward_provider *prov = NULL;
		struct stats none, five;

		opts.launcher_path = launcher;
		if (ward_provider_new(&prov, &opts) != 0 ||
		    ward_provider_force(prov, runners[r]) != 0) {
			fprintf(stderr, "bench_confine: %s\n",
				ward_error_last());
			rc = 1;
			ward_provider_free(prov);
			continue;
		}
		if (measure(&none, prov, plain, runs) != 0 ||
		    measure(&five, prov, ruled, runs) != 0) {
			fprintf(stderr, "bench_confine: %s: %s\n",
				ward_runner_name(runners[r]),
				ward_error_last());
			rc = 1;
			ward_provider_free(prov);
			continue;
		}
		printf("  %-8s no rules: median %7.3f (p10 %.3f, p90 %.3f)\n",
		       ward_runner_name(runners[r]), none.median, none.p10,
		       none.p90);
		printf("  %-8s 5 globs:  median %7.3f (p10 %.3f, p90 %.3f)  "
		       "target <= %.0f: %s\n",
		       ward_runner_name(runners[r]), five.median, five.p10,
		       five.p90, TARGET_MS,
		       five.median <= TARGET_MS ? "PASS" : "MISS");
		ward_provider_free(prov);
	}
out_free:
	ward_policy_free(plain);
	ward_policy_free(ruled);
	ward_rules_free(rules);
out_remove:
	if (keep) {
		printf("kept %s\n", tmpl);
	} else {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_confine: could not remove %s\n",
				tmpl);
	}
	return rc;
}
