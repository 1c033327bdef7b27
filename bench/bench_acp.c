/*
 * bench_acp — `ward acp`'s cost per message and per terminal.
 *
 * The bench is the editor; the agent is this same program run with
 * --agent (a minimal ACP agent answering at once). In interleaved rounds
 * (-n N), each round measures, in an order that rotates:
 *
 *   direct    a pass-through request (an extension method the agent
 *             answers at once) sent to an agent started directly;
 *   proxied   the same request through `ward acp -- bench_acp --agent`:
 *             the difference of the medians is what the proxy adds to a
 *             round trip (target: 0.2 ms);
 *   terminal  a request on which the agent, through ward, creates a
 *             terminal running `true`, waits for its exit and releases it
 *             (terminal/create, terminal/wait_for_exit, terminal/release),
 *             minus the proxied round trip of the request itself;
 *   run       starting `ward run -- true` (the same runner);
 *   run+log   starting `ward run --session ID -- true` (records the call
 *             like every terminal does).
 *
 * Target: terminal ≤ 1.1 × run. Everything runs in a scratch directory
 * under /var/tmp (workspace, XDG_STATE_HOME, empty XDG_CONFIG_HOME). Run
 * from the repository root (bench/run.sh does); WARD overrides
 * build/bin/ward.
 *
 * Exit status: 0 (a missed target is reported, not an error), 1 when a
 * measurement failed, 2 on a usage error.
 */
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

/* One peer over pipes. */
struct peer {
	pid_t pid;
	int to;
	FILE *from;
	long next_id;
};

static char scratch[256], ws[PATH_MAX], state[PATH_MAX], config[PATH_MAX];
static const char *ward = "build/bin/ward";
static char self[PATH_MAX];
static char *child_env[8];

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bench_acp: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --- the agent (--agent) -------------------------------------------------- */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Read lines until the response to our request @id; exit at EOF. */
static json_t *agent_wait(long id)
{
	char *line = NULL;
	size_t cap = 0;
	json_t *m;

	while (getline(&line, &cap, stdin) > 0) {
		m = json_loads(line, 0, NULL);
		if (m && json_integer_value(json_object_get(m, "id")) == id &&
		    !json_object_get(m, "method")) {
			free(line);
			return m;
		}
		json_decref(m);
	}
	exit(0);
}

/* terminal/create `true`, wait for its exit, release it. */
static void agent_terminal(const char *sid, long *next)
{
	const char *tid;
	json_t *r, *t;
	char buf[256];

	say("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"terminal/create\","
	    "\"params\":{\"sessionId\":\"%s\",\"command\":\"true\"}}",
	    *next, sid);
	t = agent_wait((*next)++);
	tid = json_string_value(
	    json_object_get(json_object_get(t, "result"), "terminalId"));
	if (!tid) {
		fprintf(stderr, "bench_acp agent: terminal/create failed: %s\n",
			json_dumps(t, JSON_COMPACT));
		exit(1);
	}
	snprintf(buf, sizeof(buf), "%s", tid);
	json_decref(t);
	say("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":"
	    "\"terminal/wait_for_exit\",\"params\":{\"sessionId\":\"%s\","
	    "\"terminalId\":\"%s\"}}",
	    *next, sid, buf);
	r = agent_wait((*next)++);
	json_decref(r);
	say("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"terminal/release\","
	    "\"params\":{\"sessionId\":\"%s\",\"terminalId\":\"%s\"}}",
	    *next, sid, buf);
	r = agent_wait((*next)++);
	json_decref(r);
}

static int agent_main(void)
{
	char *line = NULL, *id;
	size_t cap = 0;
	long next = 1;
	json_t *m;

	while (getline(&line, &cap, stdin) > 0) {
		const char *method;

		m = json_loads(line, 0, NULL);
		method = json_string_value(json_object_get(m, "method"));
		if (!method || !json_object_get(m, "id")) {
			json_decref(m);
			continue;
		}
		id = json_dumps(json_object_get(m, "id"), JSON_ENCODE_ANY);
		if (strcmp(method, "initialize") == 0)
			say("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":"
			    "{\"protocolVersion\":1,\"agentCapabilities\":{}}}",
			    id);
		else if (strcmp(method, "session/new") == 0)
			say("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":"
			    "{\"sessionId\":\"bench-%d\"}}",
			    id, (int)getpid());
		else if (strcmp(method, "_bench/terminal") == 0) {
			char sid[64];

			snprintf(sid, sizeof(sid), "bench-%d", (int)getpid());
			agent_terminal(sid, &next);
			say("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
			    id);
		} else
			say("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}",
			    id);
		free(id);
		json_decref(m);
	}
	return 0;
}

/* --- the editor ------------------------------------------------------------ */

static void spawn(struct peer *p, char *const argv[])
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		fail("pipe: %s", strerror(errno));
	p->pid = fork();
	if (p->pid < 0)
		fail("fork: %s", strerror(errno));
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		if (chdir(ws) != 0)
			_exit(126);
		execve(argv[0], argv, child_env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to = in[1];
	p->from = fdopen(out[0], "r");
	p->next_id = 1;
}

/* Send a request and wait for its answer; returns the answer line. */
static char *call(struct peer *p, const char *method, const char *params)
{
	char buf[4096], want[64], *line = NULL;
	size_t cap = 0;
	long id = p->next_id++;
	int n;

	n = snprintf(buf, sizeof(buf),
		     "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\","
		     "\"params\":%s}\n",
		     id, method, params);
	if (write(p->to, buf, (size_t)n) != n)
		fail("write: %s", strerror(errno));
	snprintf(want, sizeof(want), "\"id\":%ld,", id);
	while (getline(&line, &cap, p->from) > 0)
		if (strstr(line, want))
			return line;
	fail("the peer ended before answering %s", method);
	return NULL;
}

static double timed(struct peer *p, const char *method, const char *params)
{
	double t0 = now_ms();
	char *r = call(p, method, params);

	if (strstr(r, "\"error\""))
		fail("%s failed: %s", method, r);
	free(r);
	return now_ms() - t0;
}

static void finish(struct peer *p)
{
	int st;

	close(p->to);
	fclose(p->from);
	waitpid(p->pid, &st, 0);
}

/* Run @argv to its end; ms. */
static double run_ms(char *const argv[])
{
	double t0 = now_ms();
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", 1);

		dup2(null, 1);
		dup2(null, 2);
		if (chdir(ws) != 0)
			_exit(126);
		execve(argv[0], argv, child_env);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail("%s %s failed (status %d)", argv[0], argv[1], st);
	return now_ms() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct series {
	const char *name;
	double *v;
};

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[(int)(p * (n - 1) + 0.5)];
}

static void setup_scratch(void)
{
	snprintf(scratch, sizeof(scratch), "/var/tmp/ward-bench-acp.XXXXXX");
	if (!mkdtemp(scratch))
		fail("mkdtemp: %s", strerror(errno));
	snprintf(ws, sizeof(ws), "%s/ws", scratch);
	snprintf(state, sizeof(state), "%s/state", scratch);
	snprintf(config, sizeof(config), "%s/config", scratch);
	if (mkdir(ws, 0755) || mkdir(config, 0755))
		fail("mkdir: %s", strerror(errno));
	static char e_state[PATH_MAX + 32], e_config[PATH_MAX + 32],
	    e_home[PATH_MAX + 16], e_path[4096];
	snprintf(e_state, sizeof(e_state), "XDG_STATE_HOME=%s", state);
	snprintf(e_config, sizeof(e_config), "XDG_CONFIG_HOME=%s", config);
	snprintf(e_home, sizeof(e_home), "HOME=%s", scratch);
	snprintf(e_path, sizeof(e_path), "PATH=%s",
		 getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	child_env[0] = e_state;
	child_env[1] = e_config;
	child_env[2] = e_home;
	child_env[3] = e_path;
	child_env[4] = NULL;
}

int main(int argc, char **argv)
{
	int n = 300, opt;
	char wardabs[PATH_MAX], sid_ward[80], params[PATH_MAX + 64], *r;
	struct peer direct, proxied;
	double *v[5];
	const char *names[5] = {"direct", "proxied", "terminal", "run",
				"run+log"};

	if (argc > 1 && strcmp(argv[1], "--agent") == 0)
		return agent_main();
	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n')
			return 2;
		n = atoi(optarg);
	}
	if (n < 10)
		n = 10;
	if (getenv("WARD"))
		ward = getenv("WARD");
	if (!realpath(ward, wardabs) || !realpath("/proc/self/exe", self))
		fail("cannot find %s", ward);
	setup_scratch();

	char *agent_argv[] = {self, "--agent", NULL};
	char *acp_argv[] = {wardabs, "acp", "--mode",  "read-only",
			    "--",    self,  "--agent", NULL};
	spawn(&direct, agent_argv);
	spawn(&proxied, acp_argv);
	for (int k = 0; k < 2; k++) {
		struct peer *p = k ? &proxied : &direct;

		free(call(p, "initialize",
			  "{\"protocolVersion\":1,\"clientCapabilities\":{}}"));
		snprintf(params, sizeof(params),
			 "{\"cwd\":\"%s\",\"mcpServers\":[]}", ws);
		free(call(p, "session/new", params));
	}
	/* The ward session of the proxied agent's session, for run+log. */
	r = call(&proxied, "_bench/echo", "{}");
	free(r);
	{
		FILE *f;
		char cmd[PATH_MAX * 2 + 64], line[256] = "";

		snprintf(
		    cmd, sizeof(cmd),
		    "env XDG_STATE_HOME=%s %s session list --json | "
		    "sed -n 's/.*\"id\": *\"\\(acp-[0-9a-f]*\\)\".*/\\1/p'",
		    state, wardabs);
		f = popen(cmd, "r");
		if (!f || !fgets(line, sizeof(line), f))
			fail("no ward session for the proxied agent");
		pclose(f);
		line[strcspn(line, "\n")] = '\0';
		snprintf(sid_ward, sizeof(sid_ward), "%s", line);
	}
	char *run_argv[] = {wardabs, "run", "--", "true", NULL};
	char *log_argv[] = {wardabs, "run",  "--session", sid_ward,
			    "--",    "true", NULL};

	for (int i = 0; i < 5; i++)
		if (!(v[i] = calloc((size_t)n, sizeof(double))))
			fail("out of memory");
	/* Warm-up: caches, the probe, the page cache. */
	for (int i = 0; i < 10; i++) {
		timed(&direct, "_bench/echo", "{}");
		timed(&proxied, "_bench/echo", "{}");
		timed(&proxied, "_bench/terminal", "{}");
		run_ms(run_argv);
	}
	for (int i = 0; i < n; i++) {
		double echo;

		/* Rotate the order so a load that comes and goes hits all. */
		for (int k = 0; k < 4; k++) {
			switch ((i + k) % 4) {
			case 0:
				v[0][i] = timed(&direct, "_bench/echo", "{}");
				break;
			case 1:
				v[1][i] = timed(&proxied, "_bench/echo", "{}");
				break;
			case 2:
				echo = timed(&proxied, "_bench/echo", "{}");
				v[2][i] =
				    timed(&proxied, "_bench/terminal", "{}") -
				    echo;
				break;
			case 3:
				v[3][i] = run_ms(run_argv);
				v[4][i] = run_ms(log_argv);
				break;
			}
		}
	}
	finish(&direct);
	finish(&proxied);

	{
		double med[5];

		printf("bench_acp: %d interleaved rounds, medians in ms (p10 / "
		       "p90)\n",
		       n);
		for (int i = 0; i < 5; i++) {
			double p10 = pct(v[i], n, 0.1), p90 = pct(v[i], n, 0.9);

			med[i] = pct(v[i], n, 0.5);
			printf("  %-9s %8.3f  (%.3f / %.3f)\n", names[i],
			       med[i], p10, p90);
		}
		printf("  pass-through round trip adds %.3f ms (target: <= "
		       "0.200) %s\n",
		       med[1] - med[0],
		       med[1] - med[0] <= 0.2 ? "PASS" : "MISS");
		printf("  terminal `true` / ward run -- true = %.2fx (target: "
		       "<= 1.10) %s\n",
		       med[2] / med[3],
		       med[2] / med[3] <= 1.1 ? "PASS" : "MISS");
		printf("  terminal `true` / ward run --session -- true = %.2fx "
		       "(both record the call)\n",
		       med[2] / med[4]);
	}
	{
		char cmd[sizeof(scratch) + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_acp: cannot remove %s\n",
				scratch);
	}
	return 0;
}
