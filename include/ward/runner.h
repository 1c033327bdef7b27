/*
 * ward — runners, platforms and enforcement levels.
 */
#ifndef WARD_RUNNER_H
#define WARD_RUNNER_H

#include "common.h"

WARD_BEGIN_DECL

enum ward_runner {
	/** No confinement (danger-full-access), or nothing chosen. */
	WARD_RUNNER_NONE = 0,
	WARD_RUNNER_BWRAP,
	WARD_RUNNER_LANDLOCK,
	WARD_RUNNER_SEATBELT,
	/** Reserved; never usable today (Windows' chain is empty). */
	WARD_RUNNER_WINDOWS_ACL,
	/** An operator-asserted bwrap-compatible runnerCommand. */
	WARD_RUNNER_CUSTOM,
};

enum ward_platform {
	WARD_PLATFORM_LINUX = 0,
	WARD_PLATFORM_DARWIN,
	WARD_PLATFORM_WIN32,
	WARD_PLATFORM_OTHER,
};

enum ward_enforcement {
	/** Not confined (danger-full-access). */
	WARD_ENFORCEMENT_NONE = 0,
	WARD_ENFORCEMENT_FULL,
	/** Landlock on a kernel ABI that cannot govern every operation. */
	WARD_ENFORCEMENT_PARTIAL,
};

/** "none", "bwrap", "landlock", "seatbelt", "windows-acl", "custom". */
WARD_EXTERN const char *ward_runner_name(enum ward_runner runner);
/** Parse a runner name (as above, except "none"). 0 or WARD_EINVAL. */
WARD_EXTERN int ward_runner_parse(enum ward_runner *out, const char *name);
/** "none", "full", "partial". */
WARD_EXTERN const char *ward_enforcement_name(enum ward_enforcement e);
/** "linux", "darwin", "win32", "other". */
WARD_EXTERN const char *ward_platform_name(enum ward_platform p);
/**
 * ward_runner_containment - how the processes a call starts end with it on
 * @runner, for people (`ward probe`): @pidns > 0 when this process may make
 * a pid namespace (ward_probe_pidns()). Static storage.
 */
WARD_EXTERN const char *ward_runner_containment(enum ward_runner runner,
						int pidns);
/** The platform libward was compiled for. */
WARD_EXTERN enum ward_platform ward_platform_current(void);

/**
 * ward_platform_chain - the ordered runner chain of a platform:
 * linux [bwrap, landlock], darwin [seatbelt], win32 [] and other [].
 * Sets *out to static storage and returns its length.
 */
WARD_EXTERN size_t ward_platform_chain(const enum ward_runner **out,
				       enum ward_platform platform);

WARD_END_DECL

#endif
