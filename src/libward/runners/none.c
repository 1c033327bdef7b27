/*
 * ward — runner none: danger-full-access, nothing confined, but the call
 * is kept like any other: `landlock-run --unconfined` stays as the
 * command's keeper and ends every process it started when it ends (the
 * provider resolves the launcher for it: provider.c). Nothing of it can
 * fail as a sandbox, and nothing is a denial.
 */
#include "libward/runners/runners.h"

/* Only network on: nothing here could take the network away. */
static int network(struct ward_plan *p)
{
	return ward_err(WARD_EINVAL,
			"network %s cannot be enforced under %s, which runs "
			"commands unconfined; use network on (--network on) "
			"with %s, or a narrower mode",
			ward_network_name(p->net), ward_mode_name(p->mode),
			ward_mode_name(p->mode));
}

/* Unconfined, but kept: its processes end with the call. */
static int options(char ***prefix, struct ward_plan *p, const char *inner)
{
	struct ward_strv sv = {0};

	(void)inner;
	ward_strv_push(&sv, p->runner_path);
	ward_strv_push(&sv, "--unconfined");
	return ward_strv_finish(prefix, &sv);
}

/* Nothing taken away, nothing to recognise (and the same for every
 * runner that cannot take the network away). */
const char *const ward_runner_no_signatures[] = {NULL};

const struct ward_runner_ops ward_runner_none_ops = {
    .id = WARD_RUNNER_NONE,
    .unconfined = true,
    .network = network,
    .options = options,
    .status_opts = ward_runner_keeper_status, /* landlock.c */
    .status = WARD_STATUS_KEEPER,
    .fail_exit = -1,
    .denial = "",
    .net_signatures = ward_runner_no_signatures,
    .containment = "landlock-run's keeper, a subreaper sweep (not "
		   "confined)",
    .containment_no_pidns = "landlock-run's keeper, a subreaper sweep (not "
			    "confined)",
};
