/*
 * bench_rules — how long ward_rules_match takes against 1,000 rules.
 *
 * Loads 1,000 rules (500 literal entries and 500 globs spread over many
 * directories, a few of them "**" globs under "/" that are candidates for every
 * path), then matches a fixed mix of paths (hits, misses, deep paths,
 * paths far from any rule) many times. Prints the median cost of one match
 * over all samples, and the load time:
 *
 *   rules_load_1000: 3.1 ms
 *   rules_match_1000: median 412 ns/match (p90 450, 96 paths x 2000 rounds)
 *
 * Target (issue 3): median <= 1 us per match.
 *
 * Build (after `make`):
 *   mkdir -p build/bench && cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude \
 *     bench/bench_rules.c build/lib/libward.a $(pkg-config --libs jansson) \
 *     -lpthread -o build/bench/bench_rules
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ward/ward.h"

#define NPATHS 96
#define ROUNDS 2000

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Append one line to the rules text. */
static size_t put(char *buf, size_t cap, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t put(char *buf, size_t cap, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + len, cap - len, fmt, ap);
	va_end(ap);
	return n > 0 ? len + (size_t)n : len;
}

static const char *const exts[] = {"pem", "key", "toml", "json", "env",
				   "log", "db",	 "txt",	 "lock", "cfg"};

int main(void)
{
	static const char *const anywhere[] = {
	    "-- /**/*.pem",   "-- /**/.ssh",	    "r- /**/.env",
	    "-- /**/id_rsa*", "r- /**/.git/config",
	};
	struct ward_rules_env env = {.workspace = "/home/dev/proj",
				     .home = "/home/dev"};
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap);
	char *paths[NPATHS];
	double *samples = malloc(sizeof(double) * ROUNDS);
	volatile unsigned sink = 0;
	ward_rules *rules;
	double t0, t1;

	if (!text || !samples)
		return 1;
	/* 500 literal entries over 100 directories. */
	for (int i = 0; i < 500; i++)
		len = put(text, cap, len, "%s /srv/app%d/data/f%d\n",
			  i % 3 ? "r-" : "--", i % 100, i);
	/* 495 globs over 165 directories, 5 that apply everywhere. */
	for (int i = 0; i < 495; i++)
		len = put(text, cap, len, "%s /home/dev/proj/mod%d/*.%s%d\n",
			  i % 2 ? "r-" : "--", i % 165, exts[i % 10], i);
	for (size_t i = 0; i < sizeof(anywhere) / sizeof(anywhere[0]); i++)
		len = put(text, cap, len, "%s\n", anywhere[i]);

	if (ward_rules_new(&rules) != 0)
		return 1;
	t0 = now_ns();
	if (ward_rules_add_text(rules, text, &env, NULL) != 0) {
		fprintf(stderr, "bench_rules: %s\n", ward_error_last());
		return 1;
	}
	t1 = now_ns();
	if (ward_rules_count(rules) != 1000) {
		fprintf(stderr, "bench_rules: loaded %zu rules, not 1000\n",
			ward_rules_count(rules));
		return 1;
	}
	printf("rules_load_1000: %.1f ms\n", (t1 - t0) / 1e6);

	for (int i = 0; i < NPATHS; i++) {
		char p[256];

		switch (i % 8) {
		case 0: /* a literal hit, below the entry */
			snprintf(p, sizeof(p), "/srv/app%d/data/f%d/x", i % 100,
				 i * 5 % 500);
			break;
		case 1: /* a sibling of literal entries: miss */
			snprintf(p, sizeof(p), "/srv/app%d/data/g%d", i % 100,
				 i);
			break;
		case 2: /* a glob hit */
			snprintf(p, sizeof(p), "/home/dev/proj/mod%d/a.%s%d",
				 i % 165, exts[i % 10], i);
			break;
		case 3: /* a glob directory, no match */
			snprintf(p, sizeof(p),
				 "/home/dev/proj/mod%d/src/main%d.c", i % 165,
				 i);
			break;
		case 4: /* an everywhere glob hit, deep */
			snprintf(p, sizeof(p),
				 "/home/dev/proj/vendor/x/y/z/certs/c%d.pem",
				 i);
			break;
		case 5: /* far from every rule */
			snprintf(p, sizeof(p),
				 "/usr/lib/x86_64-linux-gnu/libc%d.so.6", i);
			break;
		case 6: /* deep miss in the workspace */
			snprintf(p, sizeof(p),
				 "/home/dev/proj/src/a/b/c/d/e/f/file%d.c", i);
			break;
		default: /* .ssh below home */
			snprintf(p, sizeof(p), "/home/dev/.ssh/id_%d", i);
			break;
		}
		paths[i] = strdup(p);
		if (!paths[i])
			return 1;
	}

	for (int r = 0; r < ROUNDS; r++) {
		t0 = now_ns();
		for (int i = 0; i < NPATHS; i++)
			sink += (unsigned)ward_rules_match(rules, paths[i]);
		t1 = now_ns();
		samples[r] = (t1 - t0) / NPATHS;
	}
	qsort(samples, ROUNDS, sizeof(double), cmp_double);
	printf("rules_match_1000: median %.0f ns/match (p90 %.0f, %d paths x "
	       "%d rounds)\n",
	       samples[ROUNDS / 2], samples[ROUNDS * 9 / 10], NPATHS, ROUNDS);

	/* The slowest single path, for the record. */
	{
		double worst = 0;
		int wi = 0;

		for (int i = 0; i < NPATHS; i++) {
			t0 = now_ns();
			for (int r = 0; r < 200; r++)
				sink +=
				    (unsigned)ward_rules_match(rules, paths[i]);
			t1 = now_ns();
			if ((t1 - t0) / 200 > worst) {
				worst = (t1 - t0) / 200;
				wi = i;
			}
		}
		printf("rules_match_1000: slowest path %.0f ns/match (%s)\n",
		       worst, paths[wi]);
	}
	for (int i = 0; i < NPATHS; i++)
		free(paths[i]);
	free(samples);
	free(text);
	ward_rules_free(rules);
	return sink == 0xffffffffu; /* keep the matches alive */
}
