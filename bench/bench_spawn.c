/*
 * bench_spawn — what confinement costs a libward caller per spawn, and
 * what probing costs per process.
 *
 * Spawn (-n N iterations, interleaved: every iteration runs each variant
 * once, in an order that rotates, so drift and order effects spread
 * evenly over all variants):
 *
 *   raw-fork      fork + execve(/bin/true) + waitpid
 *   raw-spawn     posix_spawn(/bin/true) + waitpid (glibc: CLONE_VFORK)
 *   ward-none     ward_exec_run, danger-full-access (libward's bare spawn)
 *   ward-landlock ward_exec_run, forced landlock runner, read-only
 *                 (through landlock-run, which stays as the keeper)
 *
 * Every libward run streams to /dev/null with stdin from /dev/null; the
 * raw variants inherit the same /dev/null descriptors.
 *
 * Probing (-p P fresh providers): the first ward_provider_select() on a
 * fresh provider with the platform chain (the functional probe runs), then
 * -s S further selects on the same provider (the cached verdict). With
 * --selects K it only makes one provider and selects K times, so an outside
 * tracer can count the processes a provider spawns (bench/run.sh does,
 * with strace).
 *
 * Prints a human-readable report; --json FILE also writes the numbers.
 * Exit status: 0, 1 when a libward call failed, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ward/ward.h"

extern char **environ;

#define TRUE_PATH "/bin/true"

enum variant {
	V_RAW_FORK,
	V_RAW_SPAWN,
	V_WARD_NONE,
	V_WARD_LANDLOCK,
	V_COUNT,
};

static const char *const variant_key[V_COUNT] = {
    "raw_fork_exec",
    "raw_posix_spawn",
    "ward_unconfined",
    "ward_landlock",
};

static const char *const variant_label[V_COUNT] = {
    "fork+execve+waitpid /bin/true (unconfined)",
    "posix_spawn /bin/true (unconfined, vfork)",
    "libward danger-full-access (bare spawn)",
    "libward landlock (landlock-run), read-only",
};

struct bench {
	ward_provider *none_provider;
	ward_provider *ll_provider;
	ward_policy *ro;
	ward_policy *full;
	int devnull;
	char *launcher;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_spawn: %s: %s (%s)\n", what, ward_strerror(err),
		ward_error_last());
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (0..1) of @v; sorts @v in place. */
static double quantile(double *v, size_t n, double q)
{
	size_t i;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)(q * (double)(n - 1) + 0.5);
	return v[i];
}

static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void wait_ok(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("bench_spawn: waitpid");
			exit(1);
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_spawn: %s did not exit 0\n", TRUE_PATH);
		exit(1);
	}
}

static void run_raw_fork(const struct bench *b)
{
	char *argv[] = {(char *)TRUE_PATH, NULL};
	pid_t pid = fork();

	if (pid < 0) {
		perror("bench_spawn: fork");
		exit(1);
	}
	if (pid == 0) {
		dup2(b->devnull, 0);
		dup2(b->devnull, 1);
		execve(TRUE_PATH, argv, environ);
		_exit(127);
	}
	wait_ok(pid);
}

static void run_raw_spawn(const struct bench *b)
{
	char *argv[] = {(char *)TRUE_PATH, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int err;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, b->devnull, 0);
	posix_spawn_file_actions_adddup2(&fa, b->devnull, 1);
	err = posix_spawn(&pid, TRUE_PATH, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		fprintf(stderr, "bench_spawn: posix_spawn: %s\n",
			strerror(err));
		exit(1);
	}
	wait_ok(pid);
}

static void run_ward(const struct bench *b, bool confined)
{
	char *argv[] = {(char *)TRUE_PATH, NULL};
	struct ward_exec_options xo = WARD_EXEC_OPTIONS_INIT;
	ward_result *r = NULL;
	int err;

	xo.stdin_fd = b->devnull;
	xo.stdout_fd = b->devnull;
	xo.stderr_fd = b->devnull;
	err = ward_exec_run(&r, confined ? b->ll_provider : b->none_provider,
			    confined ? b->ro : b->full, argv, &xo);
	if (err)
		die("ward_exec_run", err);
	if (ward_result_exit_code(r) != 0 ||
	    ward_result_runner(r) !=
		(confined ? WARD_RUNNER_LANDLOCK : WARD_RUNNER_NONE)) {
		fprintf(stderr,
			"bench_spawn: unexpected result (exit %d, "
			"runner %s)\n",
			ward_result_exit_code(r),
			ward_runner_name(ward_result_runner(r)));
		exit(1);
	}
	ward_result_free(r);
}

static void run_variant(const struct bench *b, enum variant v)
{
	switch (v) {
	case V_RAW_FORK:
		run_raw_fork(b);
		break;
	case V_RAW_SPAWN:
		run_raw_spawn(b);
		break;
	case V_WARD_NONE:
		run_ward(b, false);
		break;
	case V_WARD_LANDLOCK:
		run_ward(b, true);
		break;
	default:
		break;
	}
}

static ward_provider *provider_make(const char *launcher)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p = NULL;
	int err;

	po.launcher_path = launcher;
	err = ward_provider_new(&p, &po);
	if (err)
		die("ward_provider_new", err);
	return p;
}

static void bench_open(struct bench *b, const char *launcher, const char *ws)
{
	int err;

	memset(b, 0, sizeof(*b));
	b->launcher = launcher ? strdup(launcher) : NULL;
	b->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (b->devnull < 0) {
		perror("bench_spawn: /dev/null");
		exit(1);
	}
	b->none_provider = provider_make(launcher);
	b->ll_provider = provider_make(launcher);
	err = ward_provider_force(b->ll_provider, WARD_RUNNER_LANDLOCK);
	if (err)
		die("ward_provider_force(landlock)", err);
	err = ward_policy_new(&b->ro, WARD_MODE_READ_ONLY, ws);
	if (err)
		die("ward_policy_new(read-only)", err);
	err = ward_policy_new(&b->full, WARD_MODE_DANGER_FULL_ACCESS, ws);
	if (err)
		die("ward_policy_new(danger-full-access)", err);
}

static void bench_close(struct bench *b)
{
	ward_provider_free(b->none_provider);
	ward_provider_free(b->ll_provider);
	ward_policy_free(b->ro);
	ward_policy_free(b->full);
	close(b->devnull);
	free(b->launcher);
}

/* CPU time of reaped children, in microseconds. */
static double children_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

struct probe_stats {
	double first_med, first_p10, first_p90; /* select on a fresh provider */
	double again_med;			/* one cached select */
	double again_total_us;			/* selects 2..S+1, in total */
	double again_child_cpu_us; /* child CPU time during those selects */
	double first_child_cpu_us; /* ... during the first selects (median) */
	const char *runner;
	const char *enforcement;
	unsigned providers, selects;
};

static void bench_probe(struct probe_stats *ps, const char *launcher,
			unsigned providers, unsigned selects)
{
	double *first = calloc(providers, sizeof(double));
	double *again = calloc(selects, sizeof(double));
	double *child = calloc(providers, sizeof(double));
	enum ward_runner runner = WARD_RUNNER_NONE;
	enum ward_enforcement enf = WARD_ENFORCEMENT_NONE;
	ward_provider *p = NULL;
	double t0, c0;
	int err;

	if (!first || !again || !child) {
		fprintf(stderr, "bench_spawn: out of memory\n");
		exit(1);
	}
	memset(ps, 0, sizeof(*ps));
	for (unsigned i = 0; i < providers; i++) {
		p = provider_make(launcher);
		c0 = children_cpu_us();
		t0 = now_us();
		err = ward_provider_select(p, &runner, &enf);
		first[i] = now_us() - t0;
		child[i] = children_cpu_us() - c0;
		if (err)
			die("ward_provider_select", err);
		if (i + 1 < providers)
			ward_provider_free(p);
	}
	/* p: the last provider, already probed once. */
	c0 = children_cpu_us();
	t0 = now_us();
	for (unsigned i = 0; i < selects; i++) {
		double t = now_us();

		err = ward_provider_select(p, &runner, &enf);
		again[i] = now_us() - t;
		if (err)
			die("ward_provider_select (again)", err);
	}
	ps->again_total_us = now_us() - t0;
	ps->again_child_cpu_us = children_cpu_us() - c0;
	ward_provider_free(p);

	ps->first_p10 = quantile(first, providers, 0.10);
	ps->first_p90 = quantile(first, providers, 0.90);
	ps->first_med = median(first, providers);
	ps->first_child_cpu_us = median(child, providers);
	ps->again_med = median(again, selects);
	ps->runner = ward_runner_name(runner);
	ps->enforcement = ward_enforcement_name(enf);
	ps->providers = providers;
	ps->selects = selects;
	free(first);
	free(again);
	free(child);
}

/* --selects K: one provider, K selects, nothing else (for a tracer). */
static int selects_only(const char *launcher, unsigned k)
{
	ward_provider *p = provider_make(launcher);
	enum ward_runner runner = WARD_RUNNER_NONE;
	int err;

	for (unsigned i = 0; i < k; i++) {
		err = ward_provider_select(p, &runner, NULL);
		if (err)
			die("ward_provider_select", err);
	}
	printf("bench_spawn: %u select(s) on one provider: runner %s\n", k,
	       ward_runner_name(runner));
	ward_provider_free(p);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_spawn [-n N] [-w WARMUP] [-p PROVIDERS] "
		"[-s SELECTS]\n"
		"                   [--launcher PATH] [--workspace DIR] "
		"[--json FILE]\n"
		"       bench_spawn --selects K [--launcher PATH]\n");
	exit(2);
}

static unsigned parse_count(const char *s)
{
	char *end = NULL;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !end || *end || v == 0 || v > 10000000)
		usage();
	return (unsigned)v;
}

int main(int argc, char **argv)
{
	unsigned n = 2000, warmup = 50, providers = 30, selects = 100;
	unsigned only_selects = 0;
	const char *launcher = NULL, *ws = ".", *json_path = NULL;
	double *t[V_COUNT], med[V_COUNT], p10[V_COUNT], p90[V_COUNT];
	struct probe_stats ps;
	struct bench b;
	FILE *jf;

	/* Every option takes a value. */
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(a, "-n"))
			n = parse_count(v);
		else if (!strcmp(a, "-w"))
			warmup = parse_count(v);
		else if (!strcmp(a, "-p"))
			providers = parse_count(v);
		else if (!strcmp(a, "-s"))
			selects = parse_count(v);
		else if (!strcmp(a, "--selects"))
			only_selects = parse_count(v);
		else if (!strcmp(a, "--launcher"))
			launcher = v;
		else if (!strcmp(a, "--workspace"))
			ws = v;
		else if (!strcmp(a, "--json"))
			json_path = v;
		else
			usage();
	}
	if (only_selects)
		return selects_only(launcher, only_selects);

	bench_open(&b, launcher, ws);
	for (int v = 0; v < V_COUNT; v++) {
		t[v] = calloc(n, sizeof(double));
		if (!t[v]) {
			fprintf(stderr, "bench_spawn: out of memory\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < warmup; i++)
		for (int v = 0; v < V_COUNT; v++)
			run_variant(&b, (enum variant)v);
	for (unsigned i = 0; i < n; i++) {
		for (int k = 0; k < V_COUNT; k++) {
			/* Rotate the order: each variant goes first, second,
			 * ... equally often. */
			int v = (int)((i + (unsigned)k) % V_COUNT);
			double t0 = now_us();

			run_variant(&b, (enum variant)v);
			t[v][i] = now_us() - t0;
		}
	}
	for (int v = 0; v < V_COUNT; v++) {
		p10[v] = quantile(t[v], n, 0.10);
		p90[v] = quantile(t[v], n, 0.90);
		med[v] = median(t[v], n);
		free(t[v]);
	}
	bench_close(&b);

	bench_probe(&ps, launcher, providers, selects);

	printf("bench_spawn: spawn of %s, N=%u interleaved (after %u warm-up "
	       "rounds), microseconds\n",
	       TRUE_PATH, n, warmup);
	printf("  %-46s %9s %9s %9s\n", "variant", "median", "p10", "p90");
	for (int v = 0; v < V_COUNT; v++)
		printf("  %-46s %9.1f %9.1f %9.1f\n", variant_label[v], med[v],
		       p10[v], p90[v]);
	printf("  ratio landlock / libward unconfined   %.3f\n",
	       med[V_WARD_LANDLOCK] / med[V_WARD_NONE]);
	printf("  ratio landlock / fork+execve          %.3f\n",
	       med[V_WARD_LANDLOCK] / med[V_RAW_FORK]);
	printf("  ratio libward unconfined / fork+execve %.3f\n",
	       med[V_WARD_NONE] / med[V_RAW_FORK]);
	printf("bench_spawn: probing (platform chain, %u fresh providers; "
	       "then %u selects on one)\n",
	       providers, selects);
	printf("  first select (probes)   median %.1f us (p10 %.1f, p90 %.1f), "
	       "children CPU %.1f us, chose %s (%s)\n",
	       ps.first_med, ps.first_p10, ps.first_p90, ps.first_child_cpu_us,
	       ps.runner, ps.enforcement);
	printf("  cached select           median %.3f us; %u selects took "
	       "%.1f us in all, children CPU %.1f us\n",
	       ps.again_med, ps.selects, ps.again_total_us,
	       ps.again_child_cpu_us);

	if (json_path) {
		jf = fopen(json_path, "we");
		if (!jf) {
			perror("bench_spawn: --json");
			return 1;
		}
		fprintf(jf, "{\n  \"n\": %u,\n  \"warmup\": %u,\n", n, warmup);
		for (int v = 0; v < V_COUNT; v++)
			fprintf(jf,
				"  \"%s\": {\"median_us\": %.3f, \"p10_us\": "
				"%.3f, \"p90_us\": %.3f},\n",
				variant_key[v], med[v], p10[v], p90[v]);
		fprintf(jf,
			"  \"probe\": {\"providers\": %u, \"selects\": %u, "
			"\"first_median_us\": %.3f, \"first_p10_us\": %.3f, "
			"\"first_p90_us\": %.3f, \"first_child_cpu_us\": %.3f, "
			"\"cached_median_us\": %.4f, \"cached_total_us\": "
			"%.3f, \"cached_child_cpu_us\": %.3f, \"runner\": "
			"\"%s\", \"enforcement\": \"%s\"}\n}\n",
			ps.providers, ps.selects, ps.first_med, ps.first_p10,
			ps.first_p90, ps.first_child_cpu_us, ps.again_med,
			ps.again_total_us, ps.again_child_cpu_us, ps.runner,
			ps.enforcement);
		if (fclose(jf) != 0) {
			perror("bench_spawn: --json");
			return 1;
		}
	}
	return 0;
}
