/*
 * ward — kernel facts for `ward probe`: Landlock ABI and errata.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ward/probe.h"

#include "util/hide.h"
#include "libward/internal.h"
#include "util/landlock.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

/* Since Linux 6.15 (ABI 7): ask for the errata bitmask. */
#define PROBE_CREATE_RULESET_ERRATA (1U << 1)

int ward_probe_landlock_abi(void)
{
	int abi = ward_ll_abi();

	if (abi == -ENOSYS)
		return ward_err(abi, "Landlock is not built into this kernel "
				     "(CONFIG_SECURITY_LANDLOCK)");
	if (abi == -EOPNOTSUPP)
		return ward_err(abi, "Landlock is built in but not enabled "
				     "at boot (lsm=...,landlock)");
	if (abi < 0)
		return ward_err(abi, "cannot read the Landlock ABI: %s",
				strerror(-abi));
	return abi;
}

int ward_probe_landlock_errata(unsigned *out)
{
	int abi = ward_probe_landlock_abi();
	long ret;

	if (abi < 0)
		return abi;
	ret = syscall(SYS_landlock_create_ruleset, NULL, 0,
		      PROBE_CREATE_RULESET_ERRATA);
	if (ret < 0 && errno == EINVAL)
		return ward_err(-EOPNOTSUPP,
				"Landlock ABI %d does not report errata", abi);
	if (ret < 0)
		return ward_err(-errno, "cannot read the Landlock errata: %s",
				strerror(errno));
	*out = (unsigned)ret;
	return 0;
}

int ward_probe_landlock_mounts(void)
{
	return ward_hide_possible() ? 1 : 0;
}

int ward_probe_pidns(void)
{
	pid_t pid;
	int st;

	/* fork, not unshare here: the namespace is for the next child, and
	 * a caller's own children must stay where they are. */
	pid = fork();
	if (pid < 0)
		return ward_err(-errno, "cannot fork: %s", strerror(errno));
	if (pid == 0)
		_exit(unshare(CLONE_NEWPID) == 0 ? 0 : 1);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return ward_err(-errno, "waitpid: %s", strerror(errno));
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
