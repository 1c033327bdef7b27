/*
 * ward — the landlock-run profile: a pure function from a policy to the
 * launcher's argv. See docs/RUNNERS.md for the reasoning.
 */
#include <errno.h>
#include <stdio.h>

#include "util/landlock.h"

#include "libward/internal.h"
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
		       bool net_off, char *const argv[])
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
