/*
 * ward — the landlock-run profile: a pure function from a policy to the
 * launcher's argv. See docs/RUNNERS.md for the reasoning.
 */
#include <errno.h>

#include "internal.h"

int ward_profile_landlock(char ***out, const ward_policy *policy,
			  const char *launcher_path, char *const argv[])
{
	struct ward_strv sv = {0};
	char **roots = NULL;
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
	err = ward_roots_writable(&roots, policy);
	if (err)
		return err;

	ward_strv_push(&sv, launcher_path);
	/* Everything readable and executable; nothing else yet. */
	ward_strv_push(&sv, "--ro");
	ward_strv_push(&sv, "/");
	/*
	 * /dev/null is writable in every confined mode: countless tools
	 * redirect into it. The launcher keeps only the file-compatible
	 * rights for a non-directory, so this grants no directory rights.
	 */
	ward_strv_push(&sv, "--rw");
	ward_strv_push(&sv, "/dev/null");
	/* Landlock grants are a union, so the order does not matter. */
	for (size_t i = 0; roots[i]; i++) {
		ward_strv_push(&sv, "--rw");
		ward_strv_push(&sv, roots[i]);
	}
	if (argv) {
		ward_strv_push(&sv, "--");
		ward_strv_push_all(&sv, argv);
	}
	ward_strv_free(roots);
	return ward_strv_finish(out, &sv);
}
