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

WARD_END_DECL

#endif
