/*
 * ward — sandbox modes.
 */
#include <string.h>

#include "internal.h"

static const char *const mode_names[] = {
    [WARD_MODE_READ_ONLY] = "read-only",
    [WARD_MODE_WORKSPACE_WRITE] = "workspace-write",
    [WARD_MODE_DANGER_FULL_ACCESS] = "danger-full-access",
};

int ward_mode_parse(enum ward_mode *out, const char *text)
{
	if (!text)
		return ward_err(WARD_EINVAL, "no sandbox mode given");
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]);
	     i++) {
		if (strcmp(text, mode_names[i]) == 0) {
			*out = (enum ward_mode)i;
			return 0;
		}
	}
	return ward_err(WARD_EINVAL,
			"unknown sandbox mode \"%s\" (expected read-only, "
			"workspace-write or danger-full-access)",
			text);
}

const char *ward_mode_name(enum ward_mode mode)
{
	if ((unsigned)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "unknown";
	return mode_names[mode];
}

bool ward_mode_is_wider(enum ward_mode a, enum ward_mode b)
{
	return (int)a > (int)b;
}
