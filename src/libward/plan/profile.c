/*
 * ward — the public entry points that name a runner by its value: the
 * profiles (include/ward/profile.h: a policy to one runner's argv or
 * profile text) and the translation's lines (include/ward/translate.h).
 * They sit above the runner table (runners/), which they read through
 * ward_xlate_new(); what they call (profile_bwrap.c, profile_landlock.c,
 * profile_seatbelt.c, translate.c) sits below it, where the runners'
 * operations call it too.
 */
#include <errno.h>
#include <stdlib.h>

#include "libward/internal.h"
#include "translate_internal.h"

int ward_profile_bwrap(char ***out, const ward_policy *policy,
		       const char *bwrap_path, int status_fd,
		       char *const argv[])
{
	struct ward_xlate *x = NULL;
	int err;

	if (!out || !policy || !bwrap_path || !*bwrap_path)
		return ward_err(WARD_EINVAL, "bwrap profile: missing argument");
	/* Access rules and protected paths (globs expand here). */
	err = ward_xlate_new(&x, policy, WARD_RUNNER_BWRAP);
	if (err)
		return err;
	err = ward_bwrap_profile_x(out, policy, x, bwrap_path, status_fd, argv,
				   false);
	ward_xlate_free(x);
	return err;
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

int ward_profile_seatbelt(char **out, const ward_policy *policy)
{
	struct ward_xlate *x = NULL;
	int err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL,
				"seatbelt profile: missing argument");
	if (ward_policy_mode(policy) == WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL,
				"seatbelt profile: %s is not confined, there "
				"is no profile for it",
				ward_mode_name(ward_policy_mode(policy)));
	err = ward_xlate_new(&x, policy, WARD_RUNNER_SEATBELT);
	if (err)
		return err;
	err = ward_seatbelt_profile_x(out, policy, x);
	ward_xlate_free(x);
	return err;
}

int ward_profile_seatbelt_argv(char ***out, const ward_policy *policy,
			       char *const argv[])
{
	char *text = NULL;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL,
				"seatbelt profile: missing argument");
	err = ward_profile_seatbelt(&text, policy);
	if (err)
		return err;
	err = ward_seatbelt_argv(out, text, argv);
	free(text);
	return err;
}

/* --- the translation's lines (translate.h) ---------------------------- */

enum export_what {
	EXPORT_WARNINGS,
	EXPORT_DESCRIBE,
	EXPORT_PARTIAL
};

static int export_lines(char ***out, const ward_policy *policy,
			enum ward_runner runner, enum export_what what)
{
	struct ward_xlate *p = NULL;
	char **v;
	int err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "missing argument");
	err = ward_xlate_new(&p, policy, runner);
	if (err)
		return err;
	v = ward_strv_dup(what == EXPORT_WARNINGS   ? ward_xlate_warnings(p)
			  : what == EXPORT_DESCRIBE ? ward_xlate_describe(p)
						    : ward_xlate_partial(p));
	ward_xlate_free(p);
	if (!v)
		return ward_err(-ENOMEM, "out of memory");
	*out = v;
	return 0;
}

int ward_policy_warnings(char ***out, const ward_policy *policy,
			 enum ward_runner runner)
{
	return export_lines(out, policy, runner, EXPORT_WARNINGS);
}

int ward_policy_describe(char ***out, const ward_policy *policy,
			 enum ward_runner runner)
{
	return export_lines(out, policy, runner, EXPORT_DESCRIBE);
}

int ward_policy_partial(char ***out, const ward_policy *policy,
			enum ward_runner runner)
{
	return export_lines(out, policy, runner, EXPORT_PARTIAL);
}
