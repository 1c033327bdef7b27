/*
 * ward — the bwrap runner: bubblewrap with ward's profile, the Landlock
 * layer (landlock-run) inside it, and ward-bridge for an allowlist.
 * Its dialect: `bwrap: ` lines for its own failures, --json-status-fd for
 * the child's start, "Read-only file system" for a denial. The custom
 * runner (custom.c) is asserted to be bwrap-compatible and shares the
 * network attachment and the status channel.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libward/plan/translate_impl.h"
#include "libward/policy/facts.h"
#include "libward/plan/translate_internal.h"
#include "libward/runners/runners.h"
#include "util/util.h"

#ifndef WARD_LIBEXECDIR
#define WARD_LIBEXECDIR "/usr/local/libexec/ward"
#endif

/* bwrap: the real read-only profile around `true`; exit 0 required. */
static enum ward_verdict probe(struct ward_probe_ctx *ctx, char *why,
			       size_t why_len)
{
	char *const cmd[] = {"true", NULL};
	ward_policy *policy = NULL;
	struct ward_xlate *x = NULL;
	char **argv = NULL;
	struct ward_probe_run run;
	enum ward_verdict v = WARD_VERDICT_UNUSABLE;

	if (!ctx->binary) {
		ward_probe_why(why, why_len, "%s", ctx->missing);
		return v;
	}
	/* The profile as ward_profile_bwrap() makes it, from this row
	 * (that one reads the table, which lies above this file). */
	if (ward_policy_new(&policy, WARD_MODE_READ_ONLY, "/") != 0 ||
	    ward_xlate_new_ops(&x, policy, NULL, &ward_runner_bwrap_ops,
			       false) != 0 ||
	    ward_bwrap_profile_x(&argv, policy, x, ctx->binary, -1, cmd,
				 false) != 0) {
		ward_probe_why(why, why_len,
			       "cannot build the probe profile: %s",
			       ward_error_last());
		goto out_free;
	}
	v = ward_probe_argv(ctx, argv, false, &run, why, why_len);
out_free:
	ward_strv_free(argv);
	ward_xlate_free(x);
	ward_policy_free(policy);
	return v;
}

/*
 * bwrap's own words when the kernel will not give it a user namespace
 * (unprivileged user namespaces off, a container's seccomp filter, an
 * AppArmor restriction): the library knows its runner's dialect, so no
 * front end has to parse it.
 */
static bool no_userns(const char *why)
{
	return strstr(why, "namespace") || strstr(why, "uid map") ||
	       strstr(why, "setting up uid") || strstr(why, "unshare");
}

/* The rules' targets gathered (one glob walk), then bwrap's options
 * (translate_bwrap.c). */
void ward_runner_bwrap_translate(struct ward_xlate *x)
{
	ward_xl_gather(x);
	if (!x->oom)
		ward_xl_plan_bwrap(x);
}

/*
 * ward-bridge, found like landlock-run: beside the running executable,
 * else in WARD_LIBEXECDIR. NULL when neither exists.
 */
static char *find_bridge(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			snprintf(path, sizeof(path), "%.*s/ward-bridge",
				 (int)(slash - exe), exe);
			if (access(path, X_OK) == 0)
				return strdup(path);
		}
	}
	if (access(WARD_LIBEXECDIR "/ward-bridge", X_OK) == 0)
		return strdup(WARD_LIBEXECDIR "/ward-bridge");
	return NULL;
}

/* Off is bwrap's own network namespace; an allowlist needs ward-bridge. */
int ward_runner_bwrap_network(struct ward_plan *p)
{
	if (p->net != WARD_NETWORK_ALLOWLIST)
		return 0;
	p->bridge_path = find_bridge();
	if (!p->bridge_path)
		return ward_err(WARD_ERUNNER,
				"ward-bridge (which connects the sandbox to "
				"ward's proxy) not found beside ward or in %s",
				WARD_LIBEXECDIR);
	return 0;
}

/*
 * The Landlock layer inside bwrap (defense in depth): landlock-run with
 * read everywhere and write on what bwrap makes writable — the writable
 * roots, and bwrap's private /dev (pts, shm) and, in read-only, its
 * private /tmp — plus the supervisor's unix-socket allowances. A hole in
 * the bwrap profile is then still no write outside the roots, no
 * metadata change outside them, no root daemon's socket, no abstract
 * socket, no signal outside the sandbox. The launcher is bound read-only
 * onto itself, so nothing in the sandbox can replace it.
 */
static int build_inner(char ***prefix, struct ward_plan *p,
		       const char *launcher)
{
	struct ward_strv sv = {0}, pre = {0};
	char *const *roots = p->facts->roots;
	char *const *ok = ward_policy_allow_unix(p->policy);
	char *const *hides = ward_xlate_landlock_hides(p->x);
	int err;

	ward_strv_push(&sv, launcher);
	ward_strv_push(&sv, "--ro");
	ward_strv_push(&sv, "/");
	ward_strv_push(&sv, "--rw");
	ward_strv_push(&sv, "/dev");
	if (p->mode == WARD_MODE_READ_ONLY) {
		ward_strv_push(&sv, "--rw");
		ward_strv_push(&sv, "/tmp");
	}
	for (size_t i = 0; roots && roots[i]; i++) {
		ward_strv_push(&sv, "--rw");
		ward_strv_push(&sv, roots[i]);
	}
	for (size_t i = 0; ok[i]; i++) {
		ward_strv_push(&sv, "--allow-unix");
		ward_strv_push(&sv, ok[i]);
	}
	/* The rules' matches inside the roots (translate_bwrap.c). */
	ward_strv_push_all(&sv, hides);
	/* bwrap's own network namespace (off, an allowlist): the socket
	 * families a namespace does not isolate (vsock, netlink but for
	 * routing) are still refused. */
	if (p->net != WARD_NETWORK_ON)
		ward_strv_push(&sv, "--net-local");
	ward_strv_push(&sv, "--");
	err = ward_strv_finish(&p->inner, &sv);
	if (err)
		return err;
	ward_strv_push_all(&pre, *prefix);
	/*
	 * Mounts inside bwrap: an unprivileged caller's launcher makes a
	 * user and mount namespace of its own. Root's cannot (bwrap maps uid
	 * 0 onto itself and drops every capability; a process without
	 * CAP_SETFCAP may not map uid 0 into a new user namespace), so bwrap
	 * keeps CAP_SYS_ADMIN — over its own user namespace only — for the
	 * launcher to mount with, and CAP_SETPCAP for it to empty the
	 * bounding set afterwards. Nothing runs with them but ward's own
	 * static code: ward-bridge drops both in the process that relays,
	 * the launcher's keeper drops both, and the launcher drops them (with
	 * the bounding set, securebits locked, no_new_privs) before Landlock
	 * and the command. After --cap-drop ALL, which bwrap applies first.
	 */
	if (hides[0] && geteuid() == 0) {
		ward_strv_push(&pre, "--cap-add");
		ward_strv_push(&pre, "CAP_SYS_ADMIN");
		ward_strv_push(&pre, "--cap-add");
		ward_strv_push(&pre, "CAP_SETPCAP");
	}
	ward_strv_push(&pre, "--ro-bind");
	ward_strv_push(&pre, launcher);
	ward_strv_push(&pre, launcher);
	ward_strv_free(*prefix);
	*prefix = NULL;
	return ward_strv_finish(prefix, &pre);
}

/* The profile, and the Landlock layer inside when there is a launcher. */
static int options(char ***prefix, struct ward_plan *p, const char *inner)
{
	int err = ward_bwrap_profile_x(prefix, p->policy, p->x, p->runner_path,
				       -1, NULL, inner != NULL);

	if (err || !inner)
		return err;
	return build_inner(prefix, p, inner);
}

/*
 * An allowlist's endpoint: its socket bound read-only at
 * WARD_BRIDGE_SOCKET (after the profile's --dev /dev, whose tmpfs takes
 * the mount point) and ward-bridge bound read-only onto itself into @pre,
 * and ward-bridge's argv into @inside.
 */
void ward_runner_bwrap_attach_net(struct ward_strv *pre,
				  struct ward_strv *inside,
				  const struct ward_plan *p,
				  const struct ward_net_attach *net)
{
	char port[16];

	ward_strv_push(pre, "--ro-bind");
	ward_strv_push(pre, net->unix_path);
	ward_strv_push(pre, WARD_BRIDGE_SOCKET);
	/* Bound onto itself, like the launcher: ward may live where the
	 * sandbox sees something else (under /tmp, which bwrap replaces),
	 * and nothing inside may replace it. */
	ward_strv_push(pre, "--ro-bind");
	ward_strv_push(pre, p->bridge_path);
	ward_strv_push(pre, p->bridge_path);
	snprintf(port, sizeof(port), "%d", WARD_BRIDGE_PORT);
	ward_strv_push(inside, p->bridge_path);
	ward_strv_push(inside, "--port");
	ward_strv_push(inside, port);
	ward_strv_push(inside, "--socket");
	ward_strv_push(inside, WARD_BRIDGE_SOCKET);
	ward_strv_push(inside, "--");
}

/* bwrap's JSON status: the child's pid once it started the command. */
const char *const ward_runner_bwrap_status[] = {"--json-status-fd", NULL};

/* What clients print when bwrap's network namespace refuses them. */
const char *const ward_runner_bwrap_net[] = {
    WARD_NET_LOOKUP,
    "Network is unreachable", /* a connect to an address: ENETUNREACH */
    "ENETUNREACH",	      /* node */
    NULL,
};

static const char *const key_files[] = {
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    NULL,
};

const struct ward_runner_ops ward_runner_bwrap_ops = {
    .id = WARD_RUNNER_BWRAP,
    .chain = true,
    .tool = WARD_BIN_BWRAP,
    .tool_what = "bwrap",
    .probe = probe,
    .key_files = key_files,
    .key_binary = true,
    .no_userns = no_userns,
    .inner_layer = true,
    .translate = ward_runner_bwrap_translate,
    .profile_mounts = true,
    .network = ward_runner_bwrap_network,
    .options = options,
    .attach_net = ward_runner_bwrap_attach_net,
    .status_opts = ward_runner_bwrap_status,
    .chdir = true,
    .max_args = WARD_BWRAP_MAX_ARGS,
    .no_layer = "bwrap: no Landlock layer inside (this kernel has no usable "
		"Landlock, or landlock-run is missing): metadata changes and "
		"unix sockets outside the roots are not governed",
    .sandbox_env = "WARD_SANDBOX=bwrap",
    .status = WARD_STATUS_JSON,
    .fail_prefix = WARD_BWRAP_PREFIX,
    .fail_exit = -1,
    .denial = WARD_BWRAP_DENIAL,
    .net_signatures = ward_runner_bwrap_net,
    .containment = "bwrap's pid namespace",
    .containment_no_pidns = "bwrap's pid namespace",
};
