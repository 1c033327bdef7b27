/*
 * ward-proxyd — run libward's network proxy on its own, for the
 * end-to-end tests (tests/e2e/proxy.bats) and the benchmarks. Not
 * installed: ward itself runs the proxy inside `ward run` / `ward mcp`.
 *
 *   ward-proxyd [--allow PATTERN]... [--deny PATTERN]... [--unix PATH]
 *               [--tcp] [--hosts FILE] [--resolv FILE] [--events FILE]
 *               [--max N]
 *
 * When listening it prints "port=N" (0 without --tcp) and "unix=PATH"
 * (empty without --unix) on stdout, one per line, then serves until
 * SIGTERM, SIGINT or SIGHUP: then it stops the proxy (every connection is
 * reported), frees it and exits 0. Each connection's event is one JSON
 * line appended to the --events file (flushed at once): id, verdict,
 * protocol, host, port, address, sent, received, reason.
 *
 * Exit status: 0 after a signal, 2 on a usage error, 1 when the proxy
 * could not be created or started (the reason on stderr).
 */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libward/net/proxy.h"

static FILE *events;

static void on_event(void *data, const struct ward_proxy_event *ev)
{
	json_t *o;
	char *line;

	(void)data;
	if (!events)
		return;
	o = json_pack("{sI ss ss so si so sI sI so}", "id", (json_int_t)ev->id,
		      "verdict", ward_proxy_verdict_name(ev->verdict),
		      "protocol", ward_proxy_protocol_name(ev->protocol),
		      "host", ev->host ? json_string(ev->host) : json_null(),
		      "port", (int)ev->port, "address",
		      ev->address ? json_string(ev->address) : json_null(),
		      "sent", (json_int_t)ev->bytes_sent, "received",
		      (json_int_t)ev->bytes_received, "reason",
		      ev->reason ? json_string(ev->reason) : json_null());
	line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (line) {
		fprintf(events, "%s\n", line);
		fflush(events);
	}
	free(line);
	json_decref(o);
}

static void usage(void)
{
	fputs("usage: ward-proxyd [--allow PATTERN]... [--deny PATTERN]... "
	      "[--unix PATH] [--tcp]\n"
	      "                   [--hosts FILE] [--resolv FILE] "
	      "[--events FILE] [--max N]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	char **allow = calloc((size_t)argc, sizeof(char *));
	char **deny = calloc((size_t)argc, sizeof(char *));
	size_t na = 0, nd = 0;
	ward_proxy *p = NULL;
	sigset_t set;
	int sig = 0;

	if (!allow || !deny)
		return 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--tcp") == 0) {
			o.endpoint.tcp = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (strcmp(a, "--allow") == 0)
			allow[na++] = argv[++i];
		else if (strcmp(a, "--deny") == 0)
			deny[nd++] = argv[++i];
		else if (strcmp(a, "--unix") == 0)
			o.endpoint.unix_path = argv[++i];
		else if (strcmp(a, "--hosts") == 0)
			o.hosts_file = argv[++i];
		else if (strcmp(a, "--resolv") == 0)
			o.resolv_conf = argv[++i];
		else if (strcmp(a, "--max") == 0)
			o.max_connections = (unsigned)atoi(argv[++i]);
		else if (strcmp(a, "--events") == 0) {
			events = fopen(argv[++i], "ae");
			if (!events) {
				perror(argv[i]);
				return 1;
			}
		} else
			usage();
	}
	o.endpoint.allow = allow;
	o.endpoint.deny = deny;
	o.on_event = on_event;

	/* Signals are taken with sigwait, on this thread only. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if (ward_proxy_new(&p, &o) != 0 || ward_proxy_start(p) != 0) {
		fprintf(stderr, "ward-proxyd: %s\n", ward_error_last());
		ward_proxy_free(p);
		return 1;
	}
	printf("port=%u\nunix=%s\n", ward_proxy_port(p),
	       ward_proxy_unix_path(p) ? ward_proxy_unix_path(p) : "");
	fflush(stdout);

	while (sigwait(&set, &sig) != 0)
		;
	ward_proxy_stop(p);
	ward_proxy_free(p);
	if (events)
		fclose(events);
	free(allow);
	free(deny);
	return 0;
}
