/*
 * ward — the network proxy as a front end holds it (network.h), and the
 * per-call side: an endpoint per call, its events collected for the call.
 *
 * The proxy itself is proxy.c (docs/NETWORK.md); this file is the glue a
 * call needs: where an endpoint's socket lives, the events of one call,
 * the environment that points a command at its endpoint.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libward/internal.h"
#include "netproxy.h"
#include "proxy.h"
#include "proxy_internal.h"
#include "ward/network.h"

struct ward_netproxy {
	ward_proxy *proxy;
};

/* The proxy thread hands each event to the call whose endpoint it was. */
static void on_event(void *data, const struct ward_proxy_event *ev)
{
	struct ward_netlog *log = ev->endpoint_data;
	struct ward_netlog_entry *e, *grown;

	(void)data;
	if (!log)
		return;
	pthread_mutex_lock(&log->lock);
	if (log->n == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 16;

		grown = realloc(log->v, cap * sizeof(*grown));
		if (!grown) {
			log->lost++;
			goto out_unlock;
		}
		log->v = grown;
		log->cap = cap;
	}
	e = &log->v[log->n];
	memset(e, 0, sizeof(*e));
	e->host = ev->host ? strdup(ev->host) : NULL;
	e->address = ev->address ? strdup(ev->address) : NULL;
	e->reason = ev->reason ? strdup(ev->reason) : NULL;
	e->port = ev->port;
	e->protocol = ward_proxy_protocol_name(ev->protocol);
	e->verdict = ward_proxy_verdict_name(ev->verdict);
	e->denied = ev->verdict == WARD_PROXY_DENIED;
	e->unresolved = ev->unresolved;
	e->bytes_sent = ev->bytes_sent;
	e->bytes_received = ev->bytes_received;
	log->n++;
out_unlock:
	pthread_mutex_unlock(&log->lock);
}

int ward_netproxy_new(ward_netproxy **out)
{
	struct ward_proxy_options o = WARD_PROXY_OPTIONS_INIT;
	ward_netproxy *np;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL, "netproxy: no output pointer");
	np = calloc(1, sizeof(*np));
	if (!np)
		return ward_err(-ENOMEM, "out of memory");
	o.on_event = on_event;
	o.data = np;
	err = ward_proxy_new(&np->proxy, &o);
	if (!err)
		err = ward_proxy_start(np->proxy);
	if (err) {
		ward_proxy_free(np->proxy);
		free(np);
		return err;
	}
	*out = np;
	return 0;
}

void ward_netproxy_free(ward_netproxy *np)
{
	if (!np)
		return;
	ward_proxy_free(np->proxy);
	free(np);
}

/*
 * The directory of endpoint sockets: $XDG_RUNTIME_DIR/ward when that is an
 * absolute directory, else /tmp/ward-net-UID; created mode 0700 and
 * checked to be ours, a real directory and closed to others (a directory
 * someone else planted could hand a command another socket).
 */
static int socket_dir(char *buf, size_t len)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n;

	if (rt && rt[0] == '/' && stat(rt, &st) == 0 && S_ISDIR(st.st_mode))
		n = snprintf(buf, len, "%s/ward", rt);
	else
		n = snprintf(buf, len, "/tmp/ward-net-%lu",
			     (unsigned long)geteuid());
	if (n < 0 || (size_t)n >= len)
		return ward_err(-ENAMETOOLONG, "the proxy socket directory "
					       "path is too long");
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return ward_err(-errno, "cannot create %s: %s", buf,
				strerror(errno));
	if (lstat(buf, &st) != 0)
		return ward_err(-errno, "%s: %s", buf, strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return ward_err(-EPERM,
				"%s is not a directory of ours closed to "
				"others (mode 0700): refusing to put the "
				"proxy socket there",
				buf);
	return 0;
}

int ward_netlog_open(struct ward_netlog *log, ward_netproxy *np,
		     const char *call_id, char *const *allow, char *const *deny,
		     bool tcp)
{
	struct ward_proxy_endpoint_options eo = {0};
	char dir[PATH_MAX - 64];
	int err;

	if (!tcp) {
		err = socket_dir(dir, sizeof(dir));
		if (err)
			return err;
		snprintf(log->path, sizeof(log->path), "%s/%s.sock", dir,
			 call_id);
		/* A socket left by a call that crashed: never in use. */
		unlink(log->path);
		eo.unix_path = log->path;
	}
	eo.tcp = tcp;
	eo.allow = allow;
	eo.deny = deny;
	eo.data = log;
	err = ward_proxy_endpoint_open(&log->ep, np->proxy, &eo);
	if (err)
		return ward_err(err,
				"cannot open the network proxy for the "
				"call: %s",
				ward_error_last());
	log->port = ward_proxy_endpoint_port(log->ep);
	return 0;
}

void ward_netlog_close(struct ward_netlog *log)
{
	if (!log || !log->ep)
		return;
	/* Ends the endpoint's connections and reports each before it
	 * returns: the call's events are complete afterwards. */
	ward_proxy_endpoint_close(log->ep);
	log->ep = NULL;
}

void ward_netlog_clear(struct ward_netlog *log)
{
	if (!log)
		return;
	ward_netlog_close(log);
	for (size_t i = 0; i < log->n; i++) {
		free(log->v[i].host);
		free(log->v[i].address);
		free(log->v[i].reason);
	}
	free(log->v);
	log->v = NULL;
	log->n = log->cap = 0;
}

/*
 * NO_PROXY: the loopback names a command reaches directly (its own local
 * servers; inside bwrap that is the sandbox's own loopback), less those
 * the allowlist names exactly: an allowed `localhost` means the host's
 * loopback (a local registry, a dev server), which only the proxy can
 * reach, so the clients must send it there. A wildcard never reaches a
 * loopback address (docs/NETWORK.md, rebinding), so only exact patterns
 * count. Into @buf; 0, or WARD_EINVAL / -ENOMEM from the rules.
 */
static int no_proxy(char *buf, size_t len, char *const *allow,
		    char *const *deny)
{
	static const char *const loopback[] = {"localhost", "127.0.0.1", "::1"};
	struct ward_proxy_rules *rules = NULL;
	size_t used = 0;
	int err;

	buf[0] = '\0';
	err = ward_proxy_rules_new(&rules, allow, deny);
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(loopback) / sizeof(*loopback); i++) {
		char host[WARD_HOST_MAX];
		const char *why = NULL, *pat = NULL;
		enum ward_host_kind kind = ward_host_parse(
		    host, loopback[i], strlen(loopback[i]), &why);

		if (kind && ward_proxy_rules_check(rules, host, kind, &pat) ==
				WARD_RULE_ALLOW_EXACT)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? "," : "", loopback[i]);
	}
	ward_proxy_rules_free(rules);
	return 0;
}

int ward_net_proxy_env(char ***envp, unsigned port, char *const *allow,
		       char *const *deny)
{
	static const char *const names[] = {
	    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
	    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	};
	struct ward_strv sv = {0};
	char http[64], socks[64], direct[64], line[128];
	int err;

	err = no_proxy(direct, sizeof(direct), allow, deny);
	if (err)
		return err;
	snprintf(http, sizeof(http), "http://127.0.0.1:%u", port);
	snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%u", port);
	/* Drop what the caller had under these names, then set ours. */
	for (size_t i = 0; *envp && (*envp)[i]; i++) {
		const char *e = (*envp)[i];
		bool ours = false;

		for (size_t j = 0; j < sizeof(names) / sizeof(*names); j++) {
			size_t n = strlen(names[j]);

			if (strncmp(e, names[j], n) == 0 && e[n] == '=')
				ours = true;
		}
		if (!ours)
			ward_strv_push(&sv, e);
	}
	for (size_t j = 0; j < sizeof(names) / sizeof(*names); j++) {
		const char *v = j % 4 == 3 ? direct : j % 4 == 2 ? socks : http;

		snprintf(line, sizeof(line), "%s=%s", names[j], v);
		ward_strv_push(&sv, line);
	}
	ward_strv_free(*envp);
	*envp = NULL;
	return ward_strv_finish(envp, &sv);
}
