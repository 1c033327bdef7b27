/*
 * bench_mcp — `ward mcp` over stdio.
 *
 *  1. Latency (-n N, interleaved): one `bash` tool call running `true`
 *     over a live server's stdin/stdout, side by side with starting
 *     `ward run -- true` (auto runner: it probes the chain every time),
 *     `ward run --runner <the chosen runner> -- true` (no probe),
 *     `ward run --runner <it> -c true` (the same `bash -c true` the tool
 *     runs) and `ward run --session ID -- true` (records in a session
 *     log, as every MCP call does). The server pays no process start-up
 *     and no probe.
 *  2. Steadiness (-m M sequential calls): the server's open descriptors
 *     (/proc/PID/fd) and resident memory (VmRSS) sampled along the way,
 *     and the call latency at the start and at the end (every call appends
 *     to the session log, which the server re-reads on each call).
 *
 * With WARD_BASE=<another ward> (an older build), part 1 also runs a
 * server of that build, interleaved in the same rounds, and prints both
 * servers' median and p99: a before/after of the same call on the same
 * machine at the same moment.
 *
 * Everything runs in a scratch directory under /var/tmp (workspace,
 * XDG_STATE_HOME, an empty XDG_CONFIG_HOME). Run from the repository root
 * (bench/run.sh does); WARD overrides build/bin/ward.
 *
 * Exit status: 0 (a missed target is reported, not an error), 1 when a
 * measurement failed, 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

struct server {
	pid_t pid;
	int to;	    /* its stdin */
	FILE *from; /* its stdout */
	long next_id;
};

static char scratch[256], ws[PATH_MAX], state[PATH_MAX], config[PATH_MAX];
static const char *ward = "build/bin/ward";
static const char *base; /* WARD_BASE: a second build, compared in part 1 */
static char *child_env[8];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench_mcp: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

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

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(p * (double)(n - 1))];
}

static void set_env(void)
{
	static char e_state[PATH_MAX + 32], e_config[PATH_MAX + 32];
	static char e_path[8192], e_home[PATH_MAX + 8];
	size_t n = 0;

	snprintf(e_state, sizeof(e_state), "XDG_STATE_HOME=%s", state);
	snprintf(e_config, sizeof(e_config), "XDG_CONFIG_HOME=%s", config);
	snprintf(e_path, sizeof(e_path), "PATH=%s",
		 getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	snprintf(e_home, sizeof(e_home), "HOME=%s",
		 getenv("HOME") ? getenv("HOME") : "/root");
	child_env[n++] = e_state;
	child_env[n++] = e_config;
	child_env[n++] = e_path;
	child_env[n++] = e_home;
	child_env[n] = NULL;
}

/* --- the server ---------------------------------------------------------- */

static void server_start_of(struct server *s, const char *bin)
{
	int in[2], out[2], devnull;
	char *argv[] = {(char *)bin, "mcp", "--workspace", ws, NULL};

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		fail("pipe: %s", strerror(errno));
	s->pid = fork();
	if (s->pid < 0)
		fail("fork: %s", strerror(errno));
	if (s->pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(devnull, 2);
		execve(bin, argv, child_env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->to = in[1];
	s->from = fdopen(out[0], "r");
	s->next_id = 1;
	if (!s->from)
		fail("fdopen: %s", strerror(errno));
}

static void server_start(struct server *s)
{
	server_start_of(s, ward);
}

/* Send one request; return the response with its id (the caller frees). */
static json_t *rpc(struct server *s, const char *method, json_t *params)
{
	long id = s->next_id++;
	json_t *req =
	    json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
		      (json_int_t)id, "method", method, "params", params);
	char *line = json_dumps(req, JSON_COMPACT), *buf = NULL;
	size_t cap = 0, len = strlen(line);
	json_t *resp;
	ssize_t n;

	json_decref(req);
	line = realloc(line, len + 2);
	if (!line)
		fail("out of memory");
	line[len] = '\n';
	line[len + 1] = '\0';
	if (write(s->to, line, len + 1) != (ssize_t)(len + 1))
		fail("write to the server: %s", strerror(errno));
	free(line);
	for (;;) {
		n = getline(&buf, &cap, s->from);
		if (n <= 0)
			fail("the server closed its output");
		resp = json_loads(buf, 0, NULL);
		if (!resp)
			fail("not JSON from the server: %s", buf);
		if (json_integer_value(json_object_get(resp, "id")) == id)
			break;
		json_decref(resp); /* a notification */
	}
	free(buf);
	return resp;
}

static void server_init(struct server *s)
{
	json_t *r =
	    rpc(s, "initialize",
		json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
			  "2025-11-25", "capabilities", "clientInfo", "name",
			  "bench_mcp", "version", "1"));

	if (!json_object_get(r, "result"))
		fail("initialize failed");
	json_decref(r);
}

/* One `bash` call running `true`; its round trip in ms. */
static double call_true(struct server *s)
{
	double t0 = now_ms(), t1;
	json_t *r = rpc(s, "tools/call",
			json_pack("{s:s, s:{s:s}}", "name", "bash", "arguments",
				  "command", "true"));
	json_t *res = json_object_get(r, "result");
	const char *text;

	t1 = now_ms();
	text = json_string_value(json_object_get(
	    json_array_get(json_object_get(res, "content"), 0), "text"));
	if (!res || json_is_true(json_object_get(res, "isError")) || !text ||
	    strcmp(text, "exit code: 0") != 0)
		fail("the bash call failed: %s", text ? text : "(no text)");
	json_decref(r);
	return t1 - t0;
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		fail("%s: %s", path, strerror(errno));
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		fail("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int threads(pid_t pid)
{
	char path[64], line[256];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void server_stop(struct server *s)
{
	int st;

	close(s->to);
	if (waitpid(s->pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		fail("ward mcp did not exit 0 at end of input");
	fclose(s->from);
}

/* --- ward run ------------------------------------------------------------- */

/* Run @argv with stdio on /dev/null; its wall time in ms. */
static double run_once(char *const argv[])
{
	double t0 = now_ms();
	int st, devnull;
	pid_t pid = fork();

	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		if (chdir(ws) != 0)
			_exit(126);
		execve(argv[0], argv, child_env);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		fail("%s %s %s failed", argv[0], argv[1], argv[2]);
	return now_ms() - t0;
}

/* The id printed by `ward session new`. */
static void new_session(char *id, size_t len)
{
	char cmd[5 * PATH_MAX];
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "XDG_STATE_HOME='%s' XDG_CONFIG_HOME='%s' '%s' session new "
		 "--cwd '%s'",
		 state, config, ward, ws);
	p = popen(cmd, "r");
	if (!p || !fgets(id, (int)len, p))
		fail("ward session new failed");
	id[strcspn(id, "\n")] = '\0';
	pclose(p);
}

/* The runner `ward probe` chooses. */
static void chosen_runner(char *out, size_t len)
{
	char cmd[PATH_MAX + 64];
	json_t *j;
	FILE *p;
	char buf[8192];
	size_t n;

	snprintf(cmd, sizeof(cmd), "'%s' probe --json", ward);
	p = popen(cmd, "r");
	if (!p)
		fail("ward probe failed");
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	pclose(p);
	j = json_loads(buf, 0, NULL);
	if (!j || !json_is_string(json_object_get(j, "chosen")))
		fail("no runner can confine here (ward probe)");
	snprintf(out, len, "%s",
		 json_string_value(json_object_get(j, "chosen")));
	json_decref(j);
}

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (!scratch[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_mcp: could not remove %s\n", scratch);
}

int main(int argc, char **argv)
{
	int n = 200, m = 1000, opt;
	char runner[32], session[80];
	double *t_mcp, *t_auto, *t_forced, *t_bash, *t_session, *t_seq;
	double *t_base;
	struct server s, sb;
	int fd0, fd1, th0, th1;
	long rss0, rss1, rss_peak = 0;
	char *run_auto[] = {NULL, "run", "--", "true", NULL};
	char *run_forced[] = {NULL, "run",  "--runner", runner,
			      "--", "true", NULL};
	char *run_bash[] = {NULL, "run",  "--runner", runner,
			    "-c", "true", NULL};
	char *run_session[] = {NULL, "run",  "--session", session,
			       "--", "true", NULL};

	while ((opt = getopt(argc, argv, "n:m:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'm')
			m = atoi(optarg);
		else {
			fprintf(stderr, "usage: bench_mcp [-n N] [-m M]\n");
			return 2;
		}
	}
	if (n < 10 || m < 100) {
		fprintf(stderr, "bench_mcp: -n at least 10, -m at least 100\n");
		return 2;
	}
	if (getenv("WARD"))
		ward = getenv("WARD");
	if (access(ward, X_OK) != 0)
		fail("%s: %s (run make)", ward, strerror(errno));
	/* The children run in the workspace. */
	ward = realpath(ward, NULL);
	if (!ward)
		fail("realpath: %s", strerror(errno));
	if (getenv("WARD_BASE") && *getenv("WARD_BASE")) {
		base = realpath(getenv("WARD_BASE"), NULL);
		if (!base || access(base, X_OK) != 0)
			fail("WARD_BASE %s: %s", getenv("WARD_BASE"),
			     strerror(errno));
	}
	snprintf(scratch, sizeof(scratch), "/var/tmp/ward-bench-mcp.XXXXXX");
	if (!mkdtemp(scratch))
		fail("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	snprintf(state, sizeof(state), "%s/state", scratch);
	snprintf(config, sizeof(config), "%s/config", scratch);
	if (mkdir(ws, 0755) || mkdir(config, 0755))
		fail("mkdir: %s", strerror(errno));
	set_env();
	run_auto[0] = run_forced[0] = run_bash[0] = run_session[0] =
	    (char *)ward;
	chosen_runner(runner, sizeof(runner));
	new_session(session, sizeof(session));

	t_mcp = calloc((size_t)n, sizeof(double));
	t_auto = calloc((size_t)n, sizeof(double));
	t_forced = calloc((size_t)n, sizeof(double));
	t_bash = calloc((size_t)n, sizeof(double));
	t_session = calloc((size_t)n, sizeof(double));
	t_seq = calloc((size_t)m, sizeof(double));
	t_base = calloc((size_t)n, sizeof(double));
	if (!t_base || !t_mcp || !t_auto || !t_forced || !t_bash || !t_session || !t_seq)
		fail("out of memory");

	/* 1. Latency, interleaved, after a warm-up. */
	server_start(&s);
	server_init(&s);
	if (base) {
		server_start_of(&sb, base);
		server_init(&sb);
	}
	for (int i = 0; i < 10; i++) {
		call_true(&s);
		if (base)
			call_true(&sb);
		run_once(run_auto);
		run_once(run_forced);
		run_once(run_bash);
		run_once(run_session);
	}
	for (int i = 0; i < n; i++) {
		t_mcp[i] = call_true(&s);
		if (base)
			t_base[i] = call_true(&sb);
		t_auto[i] = run_once(run_auto);
		t_forced[i] = run_once(run_forced);
		t_bash[i] = run_once(run_bash);
		t_session[i] = run_once(run_session);
	}
	server_stop(&s);
	if (base)
		server_stop(&sb);

	/* 2. Steadiness: a fresh server, M sequential calls. */
	server_start(&s);
	server_init(&s);
	for (int i = 0; i < 20; i++)
		call_true(&s);
	usleep(100000); /* let the last worker thread finish */
	fd0 = count_fds(s.pid);
	rss0 = rss_kb(s.pid);
	th0 = threads(s.pid);
	for (int i = 0; i < m; i++) {
		t_seq[i] = call_true(&s);
		if (i % 50 == 0) {
			long r = rss_kb(s.pid);

			rss_peak = r > rss_peak ? r : rss_peak;
		}
	}
	usleep(100000); /* let the last worker thread finish */
	fd1 = count_fds(s.pid);
	rss1 = rss_kb(s.pid);
	th1 = threads(s.pid);
	server_stop(&s);

	{
		size_t k = (size_t)(m / 10);
		double first = median(t_seq, k);
		double last = median(t_seq + (size_t)m - k, k);
		double mm = median(t_mcp, (size_t)n);
		double ma = median(t_auto, (size_t)n);
		double mf = median(t_forced, (size_t)n);
		double mb = median(t_bash, (size_t)n);
		double ms = median(t_session, (size_t)n);
		double p99 = pct(t_mcp, (size_t)n, 0.99);
		bool fast = mm <= mb;
		bool steady = fd1 == fd0 && rss1 - rss0 < 1024 && th1 == th0;
		char label[64];

		printf("bench_mcp: runner %s; %d interleaved rounds, medians "
		       "in ms (p10 / p90)\n",
		       runner, n);
		printf("  %-52s %7.3f  (%.3f / %.3f)\n",
		       "ward mcp: one bash call running true (stdio)", mm,
		       pct(t_mcp, (size_t)n, 0.1), pct(t_mcp, (size_t)n, 0.9));
		printf("  %-52s %7.3f  (p99 %.3f = %.2f x the median)\n",
		       "ward mcp: the same, median and p99", mm,
		       pct(t_mcp, (size_t)n, 0.99),
		       pct(t_mcp, (size_t)n, 0.99) / mm);
		if (base) {
			double mbase = median(t_base, (size_t)n);

			printf("  %-52s %7.3f  (p99 %.3f = %.2f x the median)\n",
			       "ward mcp of WARD_BASE, the same rounds", mbase,
			       pct(t_base, (size_t)n, 0.99),
			       pct(t_base, (size_t)n, 0.99) / mbase);
			printf("  this build / WARD_BASE: median %.3f, p99 %.3f\n",
			       mm / mbase,
			       pct(t_mcp, (size_t)n, 0.99) /
				   pct(t_base, (size_t)n, 0.99));
		}
		printf("  %-52s %7.3f  (%.3f / %.3f)\n",
		       "ward run -- true (auto: probe + run)", ma,
		       pct(t_auto, (size_t)n, 0.1),
		       pct(t_auto, (size_t)n, 0.9));
		snprintf(label, sizeof(label), "ward run --runner %s -- true",
			 runner);
		printf("  %-52s %7.3f  (%.3f / %.3f)\n", label, mf,
		       pct(t_forced, (size_t)n, 0.1),
		       pct(t_forced, (size_t)n, 0.9));
		snprintf(label, sizeof(label), "ward run --runner %s -c true",
			 runner);
		printf("  %-52s %7.3f  (%.3f / %.3f)\n", label, mb,
		       pct(t_bash, (size_t)n, 0.1),
		       pct(t_bash, (size_t)n, 0.9));
		printf("  %-52s %7.3f  (%.3f / %.3f)\n",
		       "ward run --session ID -- true", ms,
		       pct(t_session, (size_t)n, 0.1),
		       pct(t_session, (size_t)n, 0.9));
		/* Issue 18's targets: the tool's call against the same
		 * `bash -c true` through `ward run`, and its tail. */
		printf("  target: mcp call <= ward run --runner %s -c true: "
		       "%.3f / %.3f = %.3f  %s\n",
		       runner, mm, mb, mm / mb, fast ? "PASS" : "MISS");
		printf("  target: mcp call p99 <= 2 x its median: %.3f / %.3f "
		       "= %.2f  %s\n",
		       p99, mm, p99 / mm, p99 <= 2 * mm ? "PASS" : "MISS");
		printf("bench_mcp: %d sequential calls on one server\n", m);
		printf("  descriptors %d -> %d, threads %d -> %d, VmRSS %ld -> "
		       "%ld kB (peak %ld kB)\n",
		       fd0, fd1, th0, th1, rss0, rss1, rss_peak);
		printf(
		    "  call latency: median of the first %zu %.3f ms, of the "
		    "last %zu %.3f ms (the session log grows by 2 events a "
		    "call)\n",
		    k, first, k, last);
		printf(
		    "  target: no growth in descriptors or memory (< 1 MiB): "
		    "%s\n",
		    steady ? "PASS" : "MISS");
	}
	free(t_base);
	free(t_mcp);
	free(t_auto);
	free(t_forced);
	free(t_bash);
	free(t_session);
	free(t_seq);
	return 0;
}
