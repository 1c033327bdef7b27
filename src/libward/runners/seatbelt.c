/*
 * ward — the Seatbelt runner (macOS): sandbox-exec with a generated
 * profile. Its dialect: `sandbox-exec: ` lines for its own failures,
 * "Operation not permitted" for a denial. Generated and tested as text on
 * Linux, where sandbox-exec is absent and the probe says so.
 */
#include <stdlib.h>

#include "libward/plan/translate_impl.h"
#include "libward/plan/translate_internal.h"
#include "libward/runners/runners.h"

/* Only meaningful on darwin; elsewhere sandbox-exec is absent. */
static enum ward_verdict probe(struct ward_probe_ctx *ctx, char *why,
			       size_t why_len)
{
	char *const argv[] = {SANDBOX_EXEC, "-p", "(version 1)(allow default)",
			      "/usr/bin/true", NULL};
	struct ward_probe_run run;

	return ward_probe_argv(ctx, argv, false, &run, why, why_len);
}

/* Seatbelt names paths and patterns: nothing to expand (translate_seatbelt.c
 * describes them). */
static void translate(struct ward_xlate *x)
{
	for (size_t j = 0; j < x->nprot; j++) {
		bool is_dir;

		x->prot_exists[j] = ward_protected_probe(&x->prot[j], &is_dir);
	}
	ward_xl_plan_seatbelt_desc(x);
}

/* Off is in the profile (profile_seatbelt.c); an allowlist would need the
 * proxy wired for macOS. */
static int network(struct ward_plan *p)
{
	if (p->net == WARD_NETWORK_ALLOWLIST)
		return ward_err(WARD_EINVAL,
				"a domain allowlist is not available on the "
				"seatbelt runner yet: use network off or on");
	return 0;
}

/* sandbox-exec -p PROFILE. */
static int options(char ***prefix, struct ward_plan *p, const char *inner)
{
	char *text = NULL;
	int err;

	(void)inner;
	err = ward_seatbelt_profile_x(&text, p->policy, p->x);
	if (err)
		return err;
	err = ward_seatbelt_argv(prefix, text, NULL);
	free(text);
	return err;
}

const struct ward_runner_ops ward_runner_seatbelt_ops = {
    .id = WARD_RUNNER_SEATBELT,
    .chain = true,
    .tool = WARD_BIN_FIXED,
    .fixed_path = SANDBOX_EXEC,
    .probe = probe,
    .translate = translate,
    .keeps_links = true,
    .network = network,
    .options = options,
    .sandbox_env = "WARD_SANDBOX=seatbelt",
    .uncontained = true,
    .fail_prefix = "sandbox-exec: ",
    .fail_exit = -1,
    .denial = "Operation not permitted",
    .net_signatures = ward_runner_no_signatures,
    .containment = "the process group",
    .containment_no_pidns = "the process group",
};
