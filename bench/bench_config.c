/*
 * bench_config — what parsing one configuration file costs a call.
 *
 * ward run parses the user file and the project file on every command
 * (ward mcp once per server). This parses a typical project file (a mode,
 * four access rules, a network allowlist) with ward_config_add_string()
 * (libyaml's events, the tree, the schema walk) ROUNDS times, each into a
 * fresh ward_config, and prints the median and p90 of one parse:
 *
 *   config_parse: median 4.2 us/file (p90 4.5, 5000 files of 196 bytes)
 *
 * No target: docs/BENCHMARKS.md ("The YAML parser") compares it with what
 * the libfyaml child process it replaced cost.
 *
 * Build (after `make`):
 *   mkdir -p build/bench && cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude \
 *     bench/bench_config.c build/lib/libward.a \
 *     $(pkg-config --libs jansson yaml-0.1 libevent_core libevent_extra \
 *     libevent_pthreads) -lpthread -o build/bench/bench_config
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/ward.h"

#include "bench.h"

#define ROUNDS 5000

static const char project[] = "# a project file: it may only narrow\n"
			      "mode: read-only\n"
			      "access:\n"
			      "  - \"-- ~/.ssh\"\n"
			      "  - \"r- ./vendor\"\n"
			      "  - \"-- **/*.pem\"\n"
			      "  - \"r- ./.github\"\n"
			      "network: off\n"
			      "allow_domains:\n"
			      "  - registry.npmjs.org\n"
			      "  - pypi.org\n";

int main(void)
{
	static double us[ROUNDS];

	for (int i = 0; i < ROUNDS; i++) {
		ward_config *cfg = NULL;
		double t0;
		int err;

		if (ward_config_new(&cfg) != 0) {
			fprintf(stderr, "bench_config: out of memory\n");
			return 1;
		}
		t0 = bench_now_us();
		err = ward_config_add_string(cfg, WARD_CONFIG_LAYER_PROJECT,
					     "project.yml", project,
					     sizeof(project) - 1);
		us[i] = bench_now_us() - t0;
		if (err != 0) {
			fprintf(stderr,
				"bench_config: the file is invalid: %s\n",
				ward_error_last());
			ward_config_free(cfg);
			return 1;
		}
		ward_config_free(cfg);
	}
	qsort(us, ROUNDS, sizeof(us[0]), bench_cmp_double);
	printf("config_parse: median %.1f us/file (p90 %.1f, %d files of %zu "
	       "bytes)\n",
	       us[ROUNDS / 2], us[ROUNDS * 9 / 10], ROUNDS,
	       sizeof(project) - 1);
	return 0;
}
