/*
 * What several unit tests share: where the build's landlock-run is.
 */
#ifndef WARD_TEST_FIXTURE_H
#define WARD_TEST_FIXTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The build's landlock-run (build/tests/test_X → build/bin/landlock-run),
 * canonical, into @buf (PATH_MAX bytes). False when it is not built. A
 * provider needs it for Landlock runs and as the keeper of an unconfined
 * (danger-full-access) run.
 */
static inline bool fixture_launcher(char buf[PATH_MAX])
{
	char exe[PATH_MAX], guess[PATH_MAX + 32], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	snprintf(guess, sizeof(guess), "%s/../bin/landlock-run", exe);
	return realpath(guess, buf) && access(buf, X_OK) == 0;
}

#endif
