/*
 * ward — the runner table: one row per runner (runners.h). A new runner is
 * a new file in this folder and a row here; nothing else names it.
 */
#include "libward/plan/translate_internal.h"
#include "libward/runners/runners.h"

static const struct ward_runner_ops *const table[WARD_RUNNER_COUNT] = {
    [WARD_RUNNER_NONE] = &ward_runner_none_ops,
    [WARD_RUNNER_BWRAP] = &ward_runner_bwrap_ops,
    [WARD_RUNNER_LANDLOCK] = &ward_runner_landlock_ops,
    [WARD_RUNNER_SEATBELT] = &ward_runner_seatbelt_ops,
    [WARD_RUNNER_WINDOWS_ACL] = &ward_runner_windows_acl_ops,
    [WARD_RUNNER_CUSTOM] = &ward_runner_custom_ops,
};

/* A value outside the enum (a caller's garbage): a runner with no
 * behaviour of its own, which never confines and has no dialect. */
static const struct ward_runner_ops unknown = {
    .id = WARD_RUNNER_NONE,
    .fail_exit = -1,
    .denial = "",
    .net_signatures = ward_runner_no_signatures,
    .containment = "the process group",
    .containment_no_pidns = "the process group",
};

const struct ward_runner_ops *ward_runner_ops(enum ward_runner runner)
{
	if ((unsigned)runner >= WARD_RUNNER_COUNT || !table[runner])
		return &unknown;
	return table[runner];
}

const char *ward_runner_containment(enum ward_runner runner, int pidns)
{
	const struct ward_runner_ops *ops = ward_runner_ops(runner);

	return pidns > 0 ? ops->containment : ops->containment_no_pidns;
}

/* The translation for a runner named by its value (translate_internal.h):
 * here, with the rows, so the translation itself never reads the table. */
int ward_xlate_new(struct ward_xlate **out, const ward_policy *policy,
		   enum ward_runner runner)
{
	return ward_xlate_new_ops(out, policy, NULL, ward_runner_ops(runner),
				  false);
}
