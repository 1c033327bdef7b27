/*
 * ward — the custom runner: an operator's runnerCommand, asserted to be
 * bwrap-compatible (bwrap's profile, status channel, network attachment
 * and dialect), chosen without chain or probe. The operator's failure
 * signatures, when given, replace bwrap's dialect for its own failures.
 */
#include "libward/plan/translate_internal.h"
#include "libward/runners/runners.h"

/* bwrap's profile, without the Landlock layer (a runner ward does not
 * know may not pass it on). */
static int options(char ***prefix, struct ward_plan *p, const char *inner)
{
	(void)inner;
	return ward_bwrap_profile_x(prefix, p->policy, p->x, p->runner_path, -1,
				    NULL, false);
}

const struct ward_runner_ops ward_runner_custom_ops = {
    .id = WARD_RUNNER_CUSTOM,
    .tool = WARD_BIN_CUSTOM,
    .tool_what = "runner command",
    .operator_signatures = true,
    .label = "custom (bwrap)",
    .translate = ward_runner_bwrap_translate,
    .profile_mounts = true,
    .network = ward_runner_bwrap_network,
    .options = options,
    .attach_net = ward_runner_bwrap_attach_net,
    .status_opts = ward_runner_bwrap_status,
    .chdir = true,
    .sandbox_env = "WARD_SANDBOX=custom",
    .status = WARD_STATUS_JSON,
    .fail_prefix = WARD_BWRAP_PREFIX,
    .fail_exit = -1,
    .denial = WARD_BWRAP_DENIAL,
    .net_signatures = ward_runner_bwrap_net,
    .containment = "the process group",
    .containment_no_pidns = "the process group",
};
