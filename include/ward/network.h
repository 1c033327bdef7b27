/*
 * ward — the network knob: what a confined command may reach.
 *
 * Its own knob, next to the mode (a mode governs file effects only):
 *
 *   off        no network: the sandbox's own loopback at most (bwrap) or
 *              no TCP and no other address family than unix sockets and
 *              route netlink (Landlock runner)
 *   allowlist  only the domain names allowed (and not denied), through
 *              ward's own proxy, outside the sandbox (docs/NETWORK.md)
 *   on         the host's network, unrestricted
 *
 * Configured as `network: off | on` plus `allow_domains` (an allowlist
 * implies a proxied network) and `deny_domains`; `--network off|on` and
 * `--allow-domain PATTERN` on the command line. When nothing sets it, the
 * default follows the mode: off in read-only and workspace-write, on in
 * danger-full-access (which is not confined, so nothing could restrict
 * it; a network other than on under danger-full-access is refused).
 */
#ifndef WARD_NETWORK_H
#define WARD_NETWORK_H

#include <stdbool.h>

#include "common.h"
#include "mode.h"

WARD_BEGIN_DECL

/** Ordered: a larger value is a wider network. */
enum ward_network {
	WARD_NETWORK_OFF = 0,
	WARD_NETWORK_ALLOWLIST = 1,
	WARD_NETWORK_ON = 2,
};

/**
 * ward_network_parse - "off" or "on" (an allowlist is not named: it is
 * implied by allowed domains). 0 and *out, or WARD_EINVAL naming the value.
 */
WARD_EXTERN int ward_network_parse(enum ward_network *out, const char *text);

/** "off", "allowlist", "on"; "unknown" otherwise. Static storage. */
WARD_EXTERN const char *ward_network_name(enum ward_network network);

/** The default for a mode: on in danger-full-access, else off. */
WARD_EXTERN enum ward_network ward_network_default(enum ward_mode mode);

/**
 * ward_network_pattern_check - whether @pattern is a valid allowed or
 * denied domain pattern (`example.com`, `*.npmjs.org`, an IP address).
 * 0, or WARD_EINVAL with the reason in ward_error_last().
 */
WARD_EXTERN int ward_network_pattern_check(const char *pattern);

/**
 * ward_netproxy - ward's network proxy as a front end holds it: one proxy
 * (a thread of this process, docs/NETWORK.md) serving one endpoint per
 * call. `ward mcp` makes one for the server and hands it to every call
 * (ward_call_options.netproxy); a call with an allowlist and no proxy
 * given makes its own for its duration (`ward run`). Thread-safe: calls
 * on several threads may share it.
 */
typedef struct ward_netproxy ward_netproxy;

/**
 * ward_netproxy_new - create and start a proxy with no endpoint yet.
 * The caller frees *out with ward_netproxy_free() after every call that
 * uses it ended. Returns 0 or an error (the detail says why).
 */
WARD_EXTERN int ward_netproxy_new(ward_netproxy **out);
/** ward_netproxy_free - stop and free. Accepts NULL. */
WARD_EXTERN void ward_netproxy_free(ward_netproxy *proxy);

/** One connection of a call through the proxy, as the call reports it. */
struct ward_net_event {
	const char *host;     /* normalized; NULL when none was understood */
	unsigned port;	      /* 0 when none was understood */
	const char *protocol; /* "connect", "http", "socks5", "unknown" */
	const char *verdict;  /* "allowed", "denied", "invalid" */
	const char *reason;   /* NULL for an allowed connection that ended
				 normally */
	unsigned long long bytes_sent, bytes_received;
};

WARD_END_DECL

#endif
