/*
 * bench_paired — time commands side by side in interleaved rounds.
 *
 *   bench_paired [-n ROUNDS] [-w WARMUP] [--json FILE] NAME=COMMAND...
 *
 * Each round runs every COMMAND once (split on spaces, no shell), in an
 * order that rotates from round to round, and times it from spawn to
 * reap (CLOCK_MONOTONIC). On a shared, noisy machine a load that comes
 * and goes then hits every command alike, so the ratio of two medians is
 * meaningful even when the absolute times drift; run it under
 * `chrt -f 50` as well where that is allowed. Output: one line per
 * command (median, p10, p90 in microseconds) and, with --json, the same
 * as a JSON object {"NAME": {"median_us":…, "p10_us":…, "p90_us":…,
 * "runs":…}}. A command that exits non-zero stops the benchmark (exit 1):
 * a failing command would be timed meaningfully by nobody.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct cmd {
	const char *name;
	char **argv;
	long *us;
};

static long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static char **split(char *s)
{
	size_t n = 0, cap = 8;
	char **v = malloc(cap * sizeof(*v));
	char *save = NULL;

	for (char *t = strtok_r(s, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		if (n + 2 > cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = t;
	}
	v[n] = NULL;
	return v;
}

/* Run @argv once with stdio on /dev/null; its wall time, or -1. */
static long run_once(char **argv)
{
	posix_spawn_file_actions_t fa;
	long t0, t1;
	pid_t pid;
	int status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	t0 = now_us();
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	t1 = now_us();
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return t1 - t0;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

static long pct(long *v, int n, int p)
{
	int i = (n - 1) * p / 100;

	return v[i];
}

int main(int argc, char **argv)
{
	int rounds = 300, warmup = 20, n = 0;
	const char *json = NULL;
	struct cmd *cmds;
	FILE *jf = NULL;

	cmds = calloc((size_t)argc, sizeof(*cmds));
	for (int i = 1; i < argc; i++) {
		char *eq;

		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			rounds = atoi(argv[++i]);
			continue;
		}
		if (!strcmp(argv[i], "-w") && i + 1 < argc) {
			warmup = atoi(argv[++i]);
			continue;
		}
		if (!strcmp(argv[i], "--json") && i + 1 < argc) {
			json = argv[++i];
			continue;
		}
		eq = strchr(argv[i], '=');
		if (!eq || eq == argv[i] || !eq[1]) {
			fprintf(stderr,
				"bench_paired: expected NAME=COMMAND, got "
				"'%s'\n",
				argv[i]);
			return 2;
		}
		*eq = '\0';
		cmds[n].name = argv[i];
		cmds[n].argv = split(eq + 1);
		cmds[n].us = calloc((size_t)rounds, sizeof(long));
		n++;
	}
	if (n == 0 || rounds < 1) {
		fprintf(stderr, "usage: bench_paired [-n ROUNDS] [-w WARMUP] "
				"[--json FILE] NAME=COMMAND...\n");
		return 2;
	}
	for (int r = -warmup; r < rounds; r++) {
		for (int k = 0; k < n; k++) {
			/* Rotate the order: no command always runs first. */
			int c = (k + (r < 0 ? 0 : r)) % n;
			long t = run_once(cmds[c].argv);

			if (t < 0) {
				fprintf(stderr, "bench_paired: %s failed\n",
					cmds[c].name);
				return 1;
			}
			if (r >= 0)
				cmds[c].us[r] = t;
		}
	}
	if (json && !(jf = fopen(json, "w"))) {
		perror(json);
		return 1;
	}
	if (jf)
		fputc('{', jf);
	for (int c = 0; c < n; c++) {
		qsort(cmds[c].us, (size_t)rounds, sizeof(long), cmp_long);
		printf("%-28s median %8ld us  p10 %8ld  p90 %8ld  (%d runs)\n",
		       cmds[c].name, pct(cmds[c].us, rounds, 50),
		       pct(cmds[c].us, rounds, 10), pct(cmds[c].us, rounds, 90),
		       rounds);
		if (jf)
			fprintf(jf,
				"%s\"%s\":{\"median_us\":%ld,\"p10_us\":%ld,"
				"\"p90_us\":%ld,\"runs\":%d}",
				c ? "," : "", cmds[c].name,
				pct(cmds[c].us, rounds, 50),
				pct(cmds[c].us, rounds, 10),
				pct(cmds[c].us, rounds, 90), rounds);
	}
	if (jf) {
		fputs("}\n", jf);
		fclose(jf);
	}
	return 0;
}
