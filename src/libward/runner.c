/*
 * ward — runner, platform and enforcement vocabulary; platform chains.
 */
#include <string.h>

#include "internal.h"

static const char *const runner_names[] = {
    [WARD_RUNNER_NONE] = "none",
    [WARD_RUNNER_BWRAP] = "bwrap",
    [WARD_RUNNER_LANDLOCK] = "landlock",
    [WARD_RUNNER_SEATBELT] = "seatbelt",
    [WARD_RUNNER_WINDOWS_ACL] = "windows-acl",
    [WARD_RUNNER_CUSTOM] = "custom",
};

#define N_RUNNERS (sizeof(runner_names) / sizeof(runner_names[0]))

const char *ward_runner_name(enum ward_runner runner)
{
	if ((unsigned)runner >= N_RUNNERS)
		return "unknown";
	return runner_names[runner];
}

int ward_runner_parse(enum ward_runner *out, const char *name)
{
	for (size_t i = 1; name && i < N_RUNNERS; i++) {
		if (strcmp(name, runner_names[i]) == 0) {
			*out = (enum ward_runner)i;
			return 0;
		}
	}
	return ward_err(WARD_EINVAL,
			"unknown runner \"%s\" (expected bwrap, landlock, "
			"seatbelt, windows-acl or custom)",
			name ? name : "");
}

const char *ward_enforcement_name(enum ward_enforcement e)
{
	switch (e) {
	case WARD_ENFORCEMENT_NONE:
		return "none";
	case WARD_ENFORCEMENT_FULL:
		return "full";
	case WARD_ENFORCEMENT_PARTIAL:
		return "partial";
	}
	return "unknown";
}

const char *ward_platform_name(enum ward_platform p)
{
	switch (p) {
	case WARD_PLATFORM_LINUX:
		return "linux";
	case WARD_PLATFORM_DARWIN:
		return "darwin";
	case WARD_PLATFORM_WIN32:
		return "win32";
	case WARD_PLATFORM_OTHER:
		return "other";
	}
	return "unknown";
}

enum ward_platform ward_platform_current(void)
{
#if defined(__linux__)
	return WARD_PLATFORM_LINUX;
#elif defined(__APPLE__)
	return WARD_PLATFORM_DARWIN;
#elif defined(_WIN32)
	return WARD_PLATFORM_WIN32;
#else
	return WARD_PLATFORM_OTHER;
#endif
}

/*
 * The chains. Windows' is empty: its ACL runner is reserved, so a Windows
 * build fails closed rather than running anything unconfined.
 */
static const enum ward_runner chain_linux[] = {WARD_RUNNER_BWRAP,
					       WARD_RUNNER_LANDLOCK};
static const enum ward_runner chain_darwin[] = {WARD_RUNNER_SEATBELT};

size_t ward_platform_chain(const enum ward_runner **out,
			   enum ward_platform platform)
{
	switch (platform) {
	case WARD_PLATFORM_LINUX:
		*out = chain_linux;
		return 2;
	case WARD_PLATFORM_DARWIN:
		*out = chain_darwin;
		return 1;
	case WARD_PLATFORM_WIN32:
	case WARD_PLATFORM_OTHER:
		break;
	}
	*out = NULL;
	return 0;
}
