/*
 * ward — one call's side of the network proxy (netproxy.c): its endpoint
 * and the connections reported on it. Internal.
 */
#ifndef WARD_NETPROXY_H
#define WARD_NETPROXY_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "proxy.h"
#include "ward/network.h"

/* One connection, copied off the proxy thread. */
struct ward_netlog_entry {
	char *host, *address, *reason;
	unsigned port;
	const char *protocol, *verdict; /* static */
	bool denied;
	bool unresolved; /* an allowed name the proxy could not resolve */
	unsigned long long bytes_sent, bytes_received;
};

/* A call's endpoint and its events (filled on the proxy thread). */
struct ward_netlog {
	pthread_mutex_t lock;
	ward_proxy_endpoint *ep;
	char path[PATH_MAX]; /* the unix socket ("" for TCP only) */
	unsigned port;	     /* the TCP port (0 for unix only) */
	struct ward_netlog_entry *v;
	size_t n, cap, lost;
};

/*
 * Open the call's endpoint on @np: a unix socket in ward's socket
 * directory named for @call_id (bwrap, @tcp false) or a TCP port on
 * 127.0.0.1 (Landlock, @tcp true), with the call's rules. @log must have
 * its lock initialized. 0 or an error with its detail.
 */
int ward_netlog_open(struct ward_netlog *log, ward_netproxy *np,
		     const char *call_id, char *const *allow, char *const *deny,
		     bool tcp);
/* Close the endpoint: every connection is ended and reported first. */
void ward_netlog_close(struct ward_netlog *log);
/* Close, then free the events (the lock stays). */
void ward_netlog_clear(struct ward_netlog *log);

#endif
