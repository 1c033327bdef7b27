/*
 * ward — the landlock-run profile: a pure function from a policy to the
 * launcher's argv. See docs/RUNNERS.md for the reasoning.
 */
#include <errno.h>
#include <stdio.h>

#include "util/landlock.h"

#include "internal.h"
#include "translate_internal.h"

/* "--ro PATH", or "--ro-if-exists PATH" for an optional grant (landlock.h). */
static void push_grant(struct ward_strv *sv, const char *flag, const char *path)
{
	if (path[0] == WARD_LL_OPTIONAL) {
		char opt[32];

		snprintf(opt, sizeof(opt), "%s-if-exists", flag);
		ward_strv_push(sv, opt);
		path++;
	} else {
		ward_strv_push(sv, flag);
	}
	ward_strv_push(sv, path);
}

int ward_landlock_argv(char ***out, char *const *ro, char *const *rw,
		       char *const *hides, const char *launcher_path,
		       bool net_off,
		       char *const argv[])
{
	struct ward_strv sv = {0};

	ward_strv_push(&sv, launcher_path);
	/*
	 * Read and execute: "/" — or, when a `--` rule hides something
	 * outside the writable roots, every entry along the way to it but
	 * the hidden one (see translate_landlock.c, complement).
	 */
	for (size_t i = 0; ro[i]; i++)
		push_grant(&sv, "--ro", ro[i]);
	/*
	 * /dev/null first: it is writable in every confined mode, since
	 * countless tools redirect into it. The launcher keeps only the
	 * file-compatible rights for a non-directory, so this grants no
	 * directory rights. Then the writable roots. Landlock grants are a
	 * union, so the order does not matter.
	 */
	for (size_t i = 0; rw[i]; i++)
		push_grant(&sv, "--rw", rw[i]);
	/*
	 * What Landlock cannot take back inside a granted root: the
	 * launcher mounts over it in a private namespace (hide.h).
	 */
	if (hides)
		ward_strv_push_all(&sv, hides);
	/* The network knob (network.h): off is the launcher's network
	 * filter and TCP rights; an allowlist's port is the call's. */
	if (net_off)
		ward_strv_push(&sv, "--net-off");
	if (argv) {
		ward_strv_push(&sv, "--");
		ward_strv_push_all(&sv, argv);
	}
	return ward_strv_finish(out, &sv);
}

int ward_profile_landlock(char ***out, const ward_policy *policy,
			  const char *launcher_path, char *const argv[])
{
	struct ward_xlate *plan = NULL;
	char **ro = NULL, **rw = NULL;
	enum ward_mode mode;
	int err;

	if (!out || !policy || !launcher_path || !*launcher_path)
		return ward_err(WARD_EINVAL,
				"landlock profile: missing argument");
	mode = ward_policy_mode(policy);
	if (mode != WARD_MODE_READ_ONLY && mode != WARD_MODE_WORKSPACE_WRITE)
		return ward_err(WARD_EINVAL,
				"landlock profile: %s is not confined, there "
				"is no profile for it",
				ward_mode_name(mode));
	if (ward_policy_network(policy) == WARD_NETWORK_ALLOWLIST)
		return ward_err(WARD_EINVAL,
				"landlock profile: a network allowlist needs "
				"the call's proxy endpoint; run it through "
				"ward_call (call.h)");
	err = ward_xlate_new(&plan, policy, WARD_RUNNER_LANDLOCK);
	if (err)
		return err;
	err = ward_xlate_landlock(&ro, &rw, plan);
	if (err) {
		ward_xlate_free(plan);
		return err;
	}
	err = ward_landlock_argv(
	    out, ro, rw, ward_xlate_landlock_hides(plan), launcher_path,
	    ward_policy_network(policy) == WARD_NETWORK_OFF, argv);
	ward_xlate_free(plan);
	ward_strv_free(ro);
	ward_strv_free(rw);
	return err;
}
