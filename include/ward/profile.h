/*
 * ward — runner profiles: pure functions from a policy to an argv or a text.
 *
 * Nothing here touches the kernel or the file system beyond what the policy
 * already resolved (ward_roots_writable), so the output is golden-testable.
 * Profiles exist for confined modes only: for danger-full-access every
 * builder returns WARD_EINVAL (the provider does not confine that mode).
 */
#ifndef WARD_PROFILE_H
#define WARD_PROFILE_H

#include "common.h"
#include "policy.h"

WARD_BEGIN_DECL

/**
 * ward_profile_bwrap - the full bwrap argv:
 *   BWRAP_PATH <profile options…> -- ARGV…
 * When @argv is NULL the vector ends with the profile options (no "--").
 *
 * Profile (see docs/RUNNERS.md): --ro-bind / /, private /dev, /proc, a
 * private tmpfs /tmp, then --bind for each writable root; always a new
 * session, --die-with-parent, every capability dropped, new user/pid/ipc
 * namespaces, WARD_SANDBOX=bwrap. @status_fd >= 0 adds
 * `--json-status-fd N`. The caller frees *out with ward_strv_free().
 */
WARD_EXTERN int ward_profile_bwrap(char ***out, const ward_policy *policy,
				   const char *bwrap_path, int status_fd,
				   char *const argv[]);

/**
 * ward_profile_landlock - the full landlock-run argv:
 *   LAUNCHER --ro / --rw /dev/null [--rw ROOT]… -- ARGV…
 * (no "--" and no ARGV when @argv is NULL).
 */
WARD_EXTERN int ward_profile_landlock(char ***out, const ward_policy *policy,
				      const char *launcher_path,
				      char *const argv[]);

/**
 * ward_profile_seatbelt - the Seatbelt (SBPL) profile text:
 * (version 1) (deny default) … (allow file-read*), writes only to
 * /dev/null, + (allow file-write* (subpath …)) per writable root.
 * The caller frees *out with ward_free().
 */
WARD_EXTERN int ward_profile_seatbelt(char **out, const ward_policy *policy);

/**
 * ward_profile_seatbelt_argv - /usr/bin/sandbox-exec -p TEXT -- ARGV…
 */
WARD_EXTERN int ward_profile_seatbelt_argv(char ***out,
					   const ward_policy *policy,
					   char *const argv[]);

WARD_END_DECL

#endif
