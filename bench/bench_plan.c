/*
 * bench_plan — how long planning 1,000 access rules for Landlock takes
 * (issue 11; target: <= 5 ms median).
 *
 * Two sets of 1,000 literal `--` rules over files that exist, 10 per
 * directory in 100 directories: outside the workspace (Landlock hides them
 * by granting read on everything else: the complement, one binary search
 * per directory entry) and inside it (hidden by the launcher's mounts:
 * one --hide each). The plan is what ward_policy_describe() builds for the
 * Landlock runner: the whole translation, warnings and description
 * included. Each set is planned once to warm the caches, then N times; the
 * median, p10 and p90 are printed.
 *
 * Usage: bench_plan [-n RUNS] [--json FILE]
 * (--json: {"outside": {"median_us": …, "cpu_median_us": …}, "inside": …},
 * the form bench/calls.sh reads)
 * Exit: 0 measured (a missed target is reported, not an error), 1 failed.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ward/ward.h"

#define TARGET_MS 5.0
#define NDIRS	  100
#define PER_DIR	  10
#define FILES	  20 /* per directory: half of them hidden */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this process: on a shared, loaded machine it says what the
 * plan costs even when the wall clock says how long it waited. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* 100 directories of 20 files below @base. */
static int make_tree(const char *base)
{
	char p[PATH_MAX];
	FILE *f;

	if (mkdir(base, 0755) != 0)
		return -1;
	for (int d = 0; d < NDIRS; d++) {
		snprintf(p, sizeof(p), "%s/d%03d", base, d);
		if (mkdir(p, 0755) != 0)
			return -1;
		for (int i = 0; i < FILES; i++) {
			snprintf(p, sizeof(p), "%s/d%03d/f%02d", base, d, i);
			f = fopen(p, "w");
			if (!f)
				return -1;
			fclose(f);
		}
	}
	return 0;
}

/* A policy hiding 1,000 files below @base. */
static ward_policy *policy_for(const char *ws, const char *base)
{
	struct ward_rules_env env = {.workspace = ws};
	ward_policy *pol = NULL;
	ward_rules *rules = NULL;
	char rule[PATH_MAX + 8];

	if (ward_rules_new(&rules) != 0)
		return NULL;
	for (int d = 0; d < NDIRS; d++) {
		for (int i = 0; i < PER_DIR; i++) {
			snprintf(rule, sizeof(rule), "-- %s/d%03d/f%02d", base,
				 d, i * 2);
			if (ward_rules_add(rules, rule, &env, NULL) != 0)
				goto out_fail;
		}
	}
	if (ward_policy_new(&pol, WARD_MODE_WORKSPACE_WRITE, ws) != 0 ||
	    ward_policy_set_rules(pol, rules) != 0)
		goto out_fail;
	ward_rules_free(rules);
	return pol;
out_fail:
	fprintf(stderr, "bench_plan: %s\n", ward_error_last());
	ward_policy_free(pol);
	ward_rules_free(rules);
	return NULL;
}

static FILE *json;

static int measure(const char *key, const char *what, ward_policy *pol,
		   int runs)
{
	double *t = calloc((size_t)runs, sizeof(*t));
	double *c = calloc((size_t)runs, sizeof(*c));
	char **lines = NULL;

	if (!t || !c) {
		free(t);
		free(c);
		return -1;
	}
	for (int r = -1; r < runs; r++) {
		double t0 = now_ms(), c0 = cpu_ms();

		if (ward_policy_describe(&lines, pol, WARD_RUNNER_LANDLOCK) !=
		    0) {
			fprintf(stderr, "bench_plan: %s\n", ward_error_last());
			free(t);
			free(c);
			return -1;
		}
		if (r >= 0) {
			t[r] = now_ms() - t0;
			c[r] = cpu_ms() - c0;
		}
		ward_strv_free(lines);
	}
	qsort(t, (size_t)runs, sizeof(*t), cmp_double);
	qsort(c, (size_t)runs, sizeof(*c), cmp_double);
	printf("  %-34s median %6.2f ms (p10 %.2f, p90 %.2f), CPU %.2f ms  "
	       "%s\n",
	       what, t[runs / 2], t[runs / 10], t[runs * 9 / 10], c[runs / 2],
	       t[runs / 2] <= TARGET_MS ? "PASS" : "MISS");
	if (json)
		fprintf(json,
			"%s\"%s\": {\"median_us\": %.0f, \"cpu_median_us\": "
			"%.0f}",
			strcmp(key, "outside") ? ", " : "{", key,
			t[runs / 2] * 1e3, c[runs / 2] * 1e3);
	free(t);
	free(c);
	return 0;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/var/tmp/ward-bench-plan-XXXXXX";
	char ws[PATH_MAX], out[PATH_MAX], in[PATH_MAX], cmd[PATH_MAX + 16];
	ward_policy *outside = NULL, *inside = NULL;
	int runs = 31, rc = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			runs = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = fopen(argv[++i], "w");
			if (!json) {
				perror("bench_plan: --json");
				return 1;
			}
		} else {
			fprintf(stderr,
				"usage: bench_plan [-n RUNS] [--json FILE]\n");
			return 1;
		}
	}
	if (runs < 3)
		runs = 3;
	if (!mkdtemp(tmpl)) {
		perror("bench_plan: mkdtemp");
		return 1;
	}
	snprintf(ws, sizeof(ws), "%s/ws", tmpl);
	snprintf(out, sizeof(out), "%s/out", tmpl);
	snprintf(in, sizeof(in), "%s/ws/tree", tmpl);
	if (mkdir(ws, 0755) != 0 || make_tree(out) != 0 || make_tree(in) != 0) {
		perror("bench_plan: making the trees");
		goto out_remove;
	}
	outside = policy_for(ws, out);
	inside = policy_for(ws, in);
	if (!outside || !inside)
		goto out_remove;
	printf("1,000 `--` rules planned for Landlock (ward_policy_describe), "
	       "%d runs after one warm-up, target <= %.0f ms:\n",
	       runs, TARGET_MS);
	rc = 0;
	if (measure("outside", "outside the workspace (complement)", outside,
		    runs) ||
	    measure("inside", "inside the workspace (mounts)", inside, runs))
		rc = 1;
	if (json) {
		fputs("}\n", json);
		if (fclose(json) != 0)
			rc = 1;
	}
out_remove:
	ward_policy_free(outside);
	ward_policy_free(inside);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_plan: could not remove %s\n", tmpl);
	return rc;
}
