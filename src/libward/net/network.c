/*
 * ward — the network knob (network.h).
 */
#include <string.h>

#include "libward/internal.h"
#include "proxy.h"
#include "ward/network.h"

static const char *const network_names[] = {
    [WARD_NETWORK_OFF] = "off",
    [WARD_NETWORK_ALLOWLIST] = "allowlist",
    [WARD_NETWORK_ON] = "on",
};

int ward_network_parse(enum ward_network *out, const char *text)
{
	if (!out || !text)
		return ward_err(WARD_EINVAL, "no network setting given");
	if (strcmp(text, "off") == 0) {
		*out = WARD_NETWORK_OFF;
		return 0;
	}
	if (strcmp(text, "on") == 0) {
		*out = WARD_NETWORK_ON;
		return 0;
	}
	return ward_err(WARD_EINVAL,
			"unknown network setting \"%s\" (expected off or on; "
			"an allowlist is given with allowed domains)",
			text);
}

const char *ward_network_name(enum ward_network network)
{
	if ((unsigned)network >= sizeof(network_names) / sizeof(*network_names))
		return "unknown";
	return network_names[network];
}

enum ward_network ward_network_default(enum ward_mode mode)
{
	return mode == WARD_MODE_DANGER_FULL_ACCESS ? WARD_NETWORK_ON
						    : WARD_NETWORK_OFF;
}

int ward_network_pattern_check(const char *pattern)
{
	if (!pattern)
		return ward_err(WARD_EINVAL, "no domain pattern given");
	return ward_proxy_pattern_check(pattern);
}
