/*
 * ward — the Landlock runner: landlock-run (src/launcher) confines itself
 * with Landlock and the seccomp supervisor, stays as the command's keeper
 * and reports through --pid-fd with --shell-status. Its dialect: a fatal
 * `landlock-run: ` line with exit 125 (its partial-enforcement info line
 * excluded), "Permission denied" for a denial.
 */
#include <stdio.h>
#include <string.h>

#include "libward/plan/translate_impl.h"
#include "libward/plan/translate_internal.h"
#include "libward/runners/runners.h"
#include "util/landlock.h"
#include "ward/probe.h"

/* `landlock-run --probe`: it really restricts a process. */
static enum ward_verdict probe(struct ward_probe_ctx *ctx, char *why,
			       size_t why_len)
{
	char *argv[3];
	struct ward_probe_run run;
	enum ward_verdict v;

	if (!ctx->binary) {
		ward_probe_why(why, why_len, "%s", ctx->missing);
		return WARD_VERDICT_UNUSABLE;
	}
	argv[0] = (char *)ctx->binary;
	argv[1] = "--probe";
	argv[2] = NULL;
	v = ward_probe_argv(ctx, argv, true, &run, why, why_len);
	if (v == WARD_VERDICT_FULL && strstr(run.out, "partially enforced")) {
		ward_probe_why(why, why_len, "probe ok (partially enforced)");
		v = WARD_VERDICT_PARTIAL;
	}
	return v;
}

/* The rules' targets gathered (one glob walk), then Landlock's grants and
 * hides (translate_landlock.c). */
static void translate(struct ward_xlate *x)
{
	ward_xl_gather(x);
	if (!x->oom)
		ward_xl_plan_landlock(x);
}

/* No Landlock in this kernel (the detail says which). */
static bool kernel_missing(void)
{
	return ward_probe_landlock_abi() < 0;
}

/* Off and an allowlist are the supervisor's (TCP rights need ABI 4). */
static int network(struct ward_plan *p)
{
	int abi = ward_ll_abi();

	if (p->net == WARD_NETWORK_ALLOWLIST && abi < 4)
		return ward_err(
		    WARD_EINVAL,
		    "the Landlock runner cannot enforce a domain "
		    "allowlist on this kernel (Landlock ABI %d; TCP "
		    "rights need ABI 4, Linux 6.7): use network off "
		    "or on, or install bubblewrap",
		    abi);
	/* Full: the supervisor performs every connect, and only to the
	 * proxy endpoint's own address and port (supervise.h). */
	return 0;
}

/* landlock-run's argv, with the supervisor's unix-socket allowances. */
static int options(char ***prefix, struct ward_plan *p, const char *inner)
{
	struct ward_strv sv = {0};
	char **base = NULL, **ro = NULL, **rw = NULL;
	char *const *ok = ward_policy_allow_unix(p->policy);
	int err;

	(void)inner;
	err = ward_xlate_landlock(&ro, &rw, p->x);
	if (err)
		return err;
	err = ward_landlock_argv(&base, ro, rw, ward_xlate_landlock_hides(p->x),
				 p->runner_path, p->net == WARD_NETWORK_OFF,
				 NULL);
	ward_strv_free(ro);
	ward_strv_free(rw);
	if (err)
		return err;
	ward_strv_push_all(&sv, base);
	ward_strv_free(base);
	for (size_t i = 0; ok[i]; i++) {
		ward_strv_push(&sv, "--allow-unix");
		ward_strv_push(&sv, ok[i]);
	}
	return ward_strv_finish(prefix, &sv);
}

/* An allowlist's endpoint: the one port the supervisor lets it reach. */
static void attach_net(struct ward_strv *pre, struct ward_strv *inside,
		       const struct ward_plan *p,
		       const struct ward_net_attach *net)
{
	char port[16];

	(void)inside;
	(void)p;
	snprintf(port, sizeof(port), "%u", net->port);
	ward_strv_push(pre, "--net-connect");
	ward_strv_push(pre, port);
}

/* The launcher's keeper reports: the command's start, and the pid of the
 * process that confines itself (which the kernel's audit records name);
 * a command that cannot be executed is its own failure, like a shell's. */
const char *const ward_runner_keeper_status[] = {"--shell-status", "--pid-fd",
						 NULL};

/* What clients print when Landlock's filter refuses them. */
static const char *const net_signatures[] = {
    WARD_NET_LOOKUP,
    "connect EACCES",		  /* node: the socket was refused */
    "failed: Permission denied.", /* wget: "Connecting to …" */
    NULL,
};

const struct ward_runner_ops ward_runner_landlock_ops = {
    .id = WARD_RUNNER_LANDLOCK,
    .chain = true,
    .tool = WARD_BIN_LAUNCHER,
    .probe = probe,
    .key_abi = true,
    .key_binary = true,
    .kernel_missing = kernel_missing,
    .translate = translate,
    .network = network,
    .options = options,
    .attach_net = attach_net,
    .status_opts = ward_runner_keeper_status,
    .kept_opt = "--kept",
    .hides_by_mounts = true,
    .sandbox_env = "WARD_SANDBOX=landlock",
    .status = WARD_STATUS_KEEPER,
    .audit_records = true,
    .net_tcp = true,
    .fail_prefix = WARD_LAUNCHER_PREFIX,
    .fail_info = WARD_LAUNCHER_INFO,
    .fail_exit = WARD_LAUNCHER_FAILED,
    .denial = "Permission denied",
    .hide_denial = WARD_BWRAP_DENIAL,
    .net_signatures = net_signatures,
    .net_like_denial = true,
    .containment = "landlock-run's keeper, in a pid namespace",
    .containment_no_pidns = "landlock-run's keeper, a subreaper sweep (no "
			    "pid namespace without CAP_SYS_ADMIN)",
};
