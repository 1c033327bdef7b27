/*
 * ward — kernel facts for `ward probe` and for actionable error hints: the
 * running kernel's Landlock ABI and its errata bitmask.
 *
 * These only ask the kernel; they never restrict anything. Which runner
 * confines is decided by the provider's functional probe, not by these.
 */
#ifndef WARD_PROBE_H
#define WARD_PROBE_H

#include "common.h"

WARD_BEGIN_DECL

/**
 * ward_probe_landlock_abi - the running kernel's Landlock ABI version
 * (>= 1), or -ENOSYS (Landlock not built into the kernel) or -EOPNOTSUPP
 * (built in but not enabled at boot); the detail says which.
 */
WARD_EXTERN int ward_probe_landlock_abi(void);

/**
 * ward_probe_landlock_errata - the kernel's Landlock errata bitmask
 * (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_ERRATA)): bit N
 * set means erratum N+1 is fixed in the running kernel. Sets *out and
 * returns 0; -EOPNOTSUPP when the kernel does not report errata (before
 * ABI 7), or the ward_probe_landlock_abi() error.
 */
WARD_EXTERN int ward_probe_landlock_errata(unsigned *out);

/**
 * ward_probe_pidns - whether this process may create a pid namespace (a
 * short-lived child tries unshare(CLONE_NEWPID)): 1 yes, 0 no (no
 * CAP_SYS_ADMIN, or a seccomp filter refuses it), -errno when the child
 * cannot be started. It decides how landlock-run's keeper contains a
 * call's processes: a pid namespace, else a subreaper sweep.
 */
WARD_EXTERN int ward_probe_pidns(void);

WARD_END_DECL

#endif
