/*
 * ward — the plan: one call's confinement, computed once (see plan.h).
 *
 * Everything that decides how a command is confined happens here, in one
 * pass: the provider chooses the runner (probing at most once), the policy
 * gives its writable roots and protected paths (computed once per policy),
 * the access rules are translated for the chosen runner (one glob walk),
 * and the runner's binary and options are built from that one
 * translation. One function, ward_plan_assemble(), makes the final argv
 * from these typed parts for `ward confine` and the executor alike; the
 * warnings and `ward config check` read the same plan.
 */
#include <limits.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "util/landlock.h"
#include "translate_internal.h"
#include "util/util.h"

/*
 * bwrap 0.8 refuses more arguments than this (MAX_ARGS in bubblewrap.c:
 * its argv[0] excluded, what --args reads included, the command's own
 * arguments too).
 */
#define BWRAP_MAX_ARGS 9000

#ifndef WARD_LIBEXECDIR
#define WARD_LIBEXECDIR "/usr/local/libexec/ward"
#endif

struct ward_plan {
	const ward_policy *policy; /* borrowed */
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	char *runner_path;
	char *workspace; /* the working directory when a call names none */
	char **failure_signatures; /* CUSTOM, or NULL */
	struct ward_xlate *x;	   /* NULL for runner none */
	/*
	 * The runner's binary and its options: bwrap/custom BWRAP and its
	 * profile (no --chdir, no --); landlock LAUNCHER --ro … --rw …;
	 * seatbelt sandbox-exec -p TEXT; none LAUNCHER --unconfined.
	 * ward_plan_assemble() puts the rest around them.
	 */
	char *binary;
	char **options;
	char **partial;	       /* why enforcement is partial */
	enum ward_network net;
	char *bridge_path; /* bwrap/custom with an allowlist */
	/* The translation's warnings, then what the runner cannot enforce
	 * of the network (said before every run, like a rule it drops). */
	char **warnings;
	/* bwrap: LAUNCHER --ro / --rw … [--allow-unix …] --, run inside
	 * bwrap before the command (the Landlock layer), or NULL. */
	char **inner;
	pthread_mutex_t lock; /* apply */
	bool applied;
};

static char *const empty_strv[] = {NULL};

/* The seatbelt prefix: sandbox-exec -p PROFILE. */
static int seatbelt_prefix(char ***prefix, ward_plan *p)
{
	char *text = NULL;
	int err;

	err = ward_seatbelt_profile_x(&text, p->policy, p->x);
	if (err)
		return err;
	err = ward_seatbelt_argv(prefix, text, NULL);
	free(text);
	return err;
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

/*
 * The network of the plan, checked against its runner: what each runner
 * enforces (docs/NETWORK.md), and what ward refuses rather than run
 * without (an allowlist on a kernel
 * whose Landlock cannot govern TCP; a network other than on where nothing
 * is confined).
 */
static int plan_network(ward_plan *p)
{
	int abi;

	p->net = ward_policy_network(p->policy);
	if (p->net == WARD_NETWORK_ON)
		return 0;
	switch (p->runner) {
	case WARD_RUNNER_NONE:
		return ward_err(WARD_EINVAL,
				"network %s cannot be enforced under %s, which "
				"runs commands unconfined; use network on "
				"(--network on) with %s, or a narrower mode",
				ward_network_name(p->net),
				ward_mode_name(p->mode),
				ward_mode_name(p->mode));
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		if (p->net != WARD_NETWORK_ALLOWLIST)
			return 0;
		p->bridge_path = find_bridge();
		if (!p->bridge_path)
			return ward_err(WARD_ERUNNER,
					"ward-bridge (which connects the "
					"sandbox to ward's proxy) not found "
					"beside ward or in %s",
					WARD_LIBEXECDIR);
		return 0;
	case WARD_RUNNER_LANDLOCK:
		abi = ward_ll_abi();
		if (p->net == WARD_NETWORK_ALLOWLIST && abi < 4)
			return ward_err(WARD_EINVAL,
					"the Landlock runner cannot enforce a "
					"domain allowlist on this kernel "
					"(Landlock ABI %d; TCP rights need ABI "
					"4, Linux 6.7): use network off or on, "
					"or install bubblewrap",
					abi);
		/* Full: the supervisor performs every connect, and only to
		 * the proxy endpoint's own address and port (supervise.h). */
		return 0;
	case WARD_RUNNER_SEATBELT:
		/* Off is in the profile (profile_seatbelt.c); an allowlist
		 * would need the proxy wired for macOS. */
		if (p->net == WARD_NETWORK_ALLOWLIST)
			return ward_err(WARD_EINVAL,
					"a domain allowlist is not available "
					"on the seatbelt runner yet: use "
					"network off or on");
		return 0;
	default:
		return ward_err(WARD_EINVAL,
				"the %s runner cannot restrict the network: "
				"use network on",
				ward_runner_name(p->runner));
	}
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
static int build_inner(char ***prefix, ward_plan *p, const char *launcher)
{
	struct ward_strv sv = {0}, pre = {0};
	char *const *roots = NULL;
	char *const *ok = ward_policy_allow_unix(p->policy);
	char *const *hides = ward_xlate_landlock_hides(p->x);
	int err;

	err = ward_policy_roots(&roots, p->policy);
	if (err)
		return err;
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

/* landlock-run's argv, with the supervisor's unix-socket allowances. */
static int landlock_prefix(char ***prefix, ward_plan *p)
{
	struct ward_strv sv = {0};
	char **base = NULL, **ro = NULL, **rw = NULL;
	char *const *ok = ward_policy_allow_unix(p->policy);
	size_t i;
	int err;

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
	for (i = 0; ok[i]; i++) {
		ward_strv_push(&sv, "--allow-unix");
		ward_strv_push(&sv, ok[i]);
	}
	return ward_strv_finish(prefix, &sv);
}

/* Build the runner's prefix (or grants) from the one translation. */
static int build_prefix(char ***prefix, ward_plan *p, const char *inner)
{
	struct ward_strv sv = {0};
	int err;

	switch (p->runner) {
	case WARD_RUNNER_BWRAP:
		err = ward_bwrap_profile_x(prefix, p->policy, p->x,
					   p->runner_path, -1, NULL,
					   inner != NULL);
		if (err || !inner)
			return err;
		return build_inner(prefix, p, inner);
	case WARD_RUNNER_CUSTOM:
		return ward_bwrap_profile_x(prefix, p->policy, p->x,
					    p->runner_path, -1, NULL, false);
	case WARD_RUNNER_LANDLOCK:
		return landlock_prefix(prefix, p);
	case WARD_RUNNER_SEATBELT:
		return seatbelt_prefix(prefix, p);
	case WARD_RUNNER_NONE:
		/* Unconfined, but kept: its processes end with the call. */
		ward_strv_push(&sv, p->runner_path);
		ward_strv_push(&sv, "--unconfined");
		return ward_strv_finish(prefix, &sv);
	default:
		return ward_err(WARD_ERUNNER, "the %s runner cannot confine",
				ward_runner_name(p->runner));
	}
}

/*
 * The runner's binary and options from the one translation: the builders
 * (profile.h) start every vector with the binary they were given.
 */
static int build_runner(ward_plan *p, const char *inner)
{
	char **prefix = NULL;
	int err = build_prefix(&prefix, p, inner);

	if (err)
		return err;
	if (!prefix[0]) {
		ward_strv_free(prefix);
		return ward_err(WARD_ERUNNER, "%s: no runner argv planned",
				ward_runner_name(p->runner));
	}
	p->binary = prefix[0];
	memmove(prefix, prefix + 1, ward_strv_len(prefix) * sizeof(*prefix));
	p->options = prefix;
	return 0;
}

int ward_plan_new(ward_plan **out, ward_provider *provider,
		  const ward_policy *policy)
{
	struct ward_runner_choice c;
	struct ward_strv partial = {0};
	ward_plan *p;
	int err;

	if (!out || !provider || !policy)
		return ward_err(WARD_EINVAL, "plan: missing argument");
	err = ward_provider_choose(&c, provider, policy);
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&p->lock, NULL);
	p->policy = policy;
	p->mode = ward_policy_mode(policy);
	p->runner = c.runner;
	p->enforcement = c.enforcement;
	p->workspace = strdup(ward_policy_workspace(policy));
	if (!p->workspace)
		goto out_oom;
	if (c.path) {
		p->runner_path = strdup(c.path);
		if (!p->runner_path)
			goto out_oom;
	}
	if (c.failure_signatures) {
		p->failure_signatures = ward_strv_dup(c.failure_signatures);
		if (!p->failure_signatures)
			goto out_oom;
	}
	/* The rules of the call, translated once for its runner (for runner
	 * none: the warning that only the fence applies them). */
	err = ward_xlate_new_inner(&p->x, policy, p->runner, c.inner != NULL);
	if (err)
		goto out_free_plan;
	if (ward_xlate_refusal(p->x)) {
		err = ward_err(WARD_EINVAL, "%s", ward_xlate_refusal(p->x));
		goto out_free_plan;
	}
	err = plan_network(p);
	if (err)
		goto out_free_plan;
	{
		struct ward_strv w = {0};

		ward_strv_push_all(&w, ward_xlate_warnings(p->x));
		err = ward_strv_finish(&p->warnings, &w);
		if (err)
			goto out_free_plan;
	}
	err = build_runner(p, c.inner);
	if (err)
		goto out_free_plan;
	ward_strv_push_all(&partial, ward_xlate_partial(p->x));
	if (p->runner == WARD_RUNNER_BWRAP && !p->inner)
		ward_strv_push(&partial,
			       "bwrap: no Landlock layer inside (this kernel "
			       "has no usable Landlock, or landlock-run is "
			       "missing): metadata changes and unix sockets "
			       "outside the roots are not governed");
	err = ward_strv_finish(&p->partial, &partial);
	if (err)
		goto out_free_plan;
	if (p->partial[0] && p->enforcement == WARD_ENFORCEMENT_FULL)
		p->enforcement = WARD_ENFORCEMENT_PARTIAL;
	*out = p;
	return 0;

out_oom:
	err = ward_err(-ENOMEM, "out of memory");
out_free_plan:
	ward_plan_free(p);
	return err;
}

void ward_plan_free(ward_plan *plan)
{
	if (!plan)
		return;
	free(plan->runner_path);
	ward_strv_free(plan->failure_signatures);
	ward_xlate_free(plan->x);
	free(plan->binary);
	ward_strv_free(plan->options);
	free(plan->workspace);
	ward_strv_free(plan->inner);
	ward_strv_free(plan->partial);
	free(plan->bridge_path);
	ward_strv_free(plan->warnings);
	pthread_mutex_destroy(&plan->lock);
	free(plan);
}

const ward_policy *ward_plan_policy(const ward_plan *plan)
{
	return plan ? plan->policy : NULL;
}

enum ward_mode ward_plan_mode(const ward_plan *plan)
{
	return plan ? plan->mode : WARD_MODE_READ_ONLY;
}

enum ward_runner ward_plan_runner(const ward_plan *plan)
{
	return plan ? plan->runner : WARD_RUNNER_NONE;
}

enum ward_enforcement ward_plan_enforcement(const ward_plan *plan)
{
	return plan ? plan->enforcement : WARD_ENFORCEMENT_NONE;
}

char *const *ward_plan_partial(const ward_plan *plan)
{
	return plan && plan->partial ? plan->partial : empty_strv;
}

const char *ward_plan_runner_path(const ward_plan *plan)
{
	return plan ? plan->runner_path : NULL;
}

char *const *ward_plan_roots(const ward_plan *plan)
{
	char *const *roots = NULL;

	/* Computed with the plan: this only reads the policy's cache. */
	if (!plan || ward_policy_roots(&roots, plan->policy) != 0)
		return empty_strv;
	return roots;
}

char *const *ward_plan_warnings(const ward_plan *plan)
{
	return plan && plan->warnings ? plan->warnings : empty_strv;
}

char *const *ward_plan_describe(const ward_plan *plan)
{
	return plan && plan->x ? ward_xlate_describe(plan->x) : empty_strv;
}

const char *ward_plan_denial_signature(const ward_plan *plan)
{
	return ward_denial_signature(plan ? plan->runner : WARD_RUNNER_NONE);
}

enum ward_network ward_plan_network(const ward_plan *plan)
{
	return plan ? plan->net : WARD_NETWORK_OFF;
}

/*
 * The network attachment of a call's argv (allowlist only): under bwrap
 * the endpoint's socket bound read-only at WARD_BRIDGE_SOCKET (after the
 * profile's --dev /dev, whose tmpfs takes the mount point) and ward-bridge
 * bound read-only onto itself into @pre, and ward-bridge's argv into
 * @inner; under Landlock `--net-connect PORT` into @pre. @net is the
 * call's endpoint (the callers refuse an allowlist without one).
 */
static void push_net(struct ward_strv *pre, struct ward_strv *inner,
		     const ward_plan *p, const struct ward_net_attach *net)
{
	char port[16];

	if (p->net != WARD_NETWORK_ALLOWLIST)
		return;
	switch (p->runner) {
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		ward_strv_push(pre, "--ro-bind");
		ward_strv_push(pre, net->unix_path);
		ward_strv_push(pre, WARD_BRIDGE_SOCKET);
		/* Bound onto itself, like the launcher: ward may live where
		 * the sandbox sees something else (under /tmp, which bwrap
		 * replaces), and nothing inside may replace it. */
		ward_strv_push(pre, "--ro-bind");
		ward_strv_push(pre, p->bridge_path);
		ward_strv_push(pre, p->bridge_path);
		snprintf(port, sizeof(port), "%d", WARD_BRIDGE_PORT);
		ward_strv_push(inner, p->bridge_path);
		ward_strv_push(inner, "--port");
		ward_strv_push(inner, port);
		ward_strv_push(inner, "--socket");
		ward_strv_push(inner, WARD_BRIDGE_SOCKET);
		ward_strv_push(inner, "--");
		break;
	case WARD_RUNNER_LANDLOCK:
		snprintf(port, sizeof(port), "%u", net->port);
		ward_strv_push(pre, "--net-connect");
		ward_strv_push(pre, port);
		break;
	default:
		break;
	}
}

/*
 * The runner's status channel, right after its binary, when the executor
 * holds the other end (@fd): bwrap's JSON status; the launcher's pid
 * report (--pid-fd, the pid of the process that confines itself, which
 * the kernel's audit records name) with --shell-status (a command that
 * cannot be executed is its own failure, 127 or 126, like a shell's).
 */
static void push_status(struct ward_strv *sv, const ward_plan *p, int fd)
{
	char num[16];

	if (fd < 0)
		return;
	snprintf(num, sizeof(num), "%d", fd);
	switch (p->runner) {
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		ward_strv_push(sv, "--json-status-fd");
		ward_strv_push(sv, num);
		break;
	case WARD_RUNNER_LANDLOCK:
	case WARD_RUNNER_NONE:
		ward_strv_push(sv, "--shell-status");
		ward_strv_push(sv, "--pid-fd");
		ward_strv_push(sv, num);
		break;
	default:
		break;
	}
}

/*
 * What runs inside bwrap after its "--": ward-bridge's argv (@bridge),
 * the Landlock layer's, with `--pid-fd N` after the launcher when the
 * caller holds its report pipe, and the command. Past BWRAP_MAX_ARGS
 * (bwrap's own part @own, the whole @total), the launcher takes
 * everything after its name from a memfd instead (`--args N`): that part
 * goes to out->args, and the report moves one descriptor up. Without the
 * layer, or when bwrap's part alone is too long, the error says which
 * limit and by how much.
 */
static int push_inside(struct ward_strv *sv, struct ward_plan_argv *out,
		       const ward_plan *p, char *const *bridge,
		       const struct ward_plan_call *call,
		       const struct ward_plan_fds *fds)
{
	struct ward_strv tail = {0};
	size_t nbridge = ward_strv_len(bridge), own = sv->n - 1;
	size_t total =
	    own + nbridge + ward_strv_len(p->inner) + ward_strv_len(call->argv);
	bool report = fds && fds->report >= 0 && p->inner;
	char num[16];

	if (report)
		total += 2;
	ward_strv_push_all(sv, bridge);
	if (total <= BWRAP_MAX_ARGS || !fds || p->runner != WARD_RUNNER_BWRAP) {
		for (size_t i = 0; p->inner && p->inner[i]; i++) {
			ward_strv_push(sv, p->inner[i]);
			if (i == 0 && report) {
				snprintf(num, sizeof(num), "%d", fds->report);
				ward_strv_push(sv, "--pid-fd");
				ward_strv_push(sv, num);
			}
		}
		ward_strv_push_all(sv, call->argv);
		return 0;
	}
	if (!p->inner)
		return ward_err(WARD_ERUNNER,
				"bwrap: this call needs %zu arguments and "
				"bwrap takes at most %d (its profile %zu, the "
				"command %zu); without the Landlock layer "
				"inside they cannot be passed another way: "
				"run it with --runner landlock",
				total, BWRAP_MAX_ARGS, own,
				ward_strv_len(call->argv));
	/* bwrap's part: the profile, ward-bridge's, LAUNCHER --args N. */
	if (own + nbridge + 3 > BWRAP_MAX_ARGS)
		return ward_err(WARD_ERUNNER,
				"bwrap: its profile alone needs %zu arguments "
				"and bwrap takes at most %d: run it with "
				"--runner landlock, or with fewer rules",
				own + nbridge + 3, BWRAP_MAX_ARGS);
	if (report) {
		snprintf(num, sizeof(num), "%d", fds->report + 1);
		ward_strv_push(&tail, "--pid-fd");
		ward_strv_push(&tail, num);
	}
	ward_strv_push_all(&tail, p->inner + 1);
	ward_strv_push_all(&tail, call->argv);
	ward_strv_push(sv, p->inner[0]);
	ward_strv_push(sv, "--args");
	snprintf(num, sizeof(num), "%d", fds->report);
	ward_strv_push(sv, num);
	return ward_strv_finish(&out->args, &tail);
}

int ward_plan_assemble(struct ward_plan_argv *out, const ward_plan *p,
		       const struct ward_plan_call *call,
		       const struct ward_plan_fds *fds)
{
	struct ward_strv sv = {0}, bridge = {0};
	struct ward_plan_argv a = {NULL, NULL};
	bool bwrap =
	    p->runner == WARD_RUNNER_BWRAP || p->runner == WARD_RUNNER_CUSTOM;
	char **br = NULL;
	int err;

	if (!call->argv || !call->argv[0])
		return ward_err(WARD_EINVAL, "plan: no command");
	if (p->net == WARD_NETWORK_ALLOWLIST &&
	    (!call->net || (!call->net->unix_path && !call->net->port)))
		return ward_err(WARD_EINVAL,
				"the network is an allowlist but the call has "
				"no proxy endpoint (run it through ward_call)");
	ward_strv_push(&sv, p->binary);
	push_status(&sv, p, fds ? fds->status : -1);
	ward_strv_push_all(&sv, p->options);
	/*
	 * Whoever spawns the argv without holding the Landlock layer's
	 * report pipe (ward confine's reader, an embedder) has bwrap bind
	 * the sandbox to it; the executor binds it through that pipe
	 * (profile_bwrap.c says why).
	 */
	if (p->runner == WARD_RUNNER_BWRAP && p->inner &&
	    !(fds && fds->report >= 0))
		ward_strv_push(&sv, "--die-with-parent");
	push_net(&sv, &bridge, p, call->net);
	/* bwrap gets an explicit --chdir (a working directory the sandbox
	 * cannot see is then bwrap's loud error, never a silent fallback to
	 * $HOME); the others (landlock-run, the keeper of an unconfined
	 * run, sandbox-exec) are started in it. */
	if (bwrap) {
		ward_strv_push(&sv, "--chdir");
		ward_strv_push(&sv, call->cwd ? call->cwd : p->workspace);
	}
	ward_strv_push(&sv, "--");
	err = ward_strv_finish(&br, &bridge);
	if (!err)
		err = push_inside(&sv, &a, p, br, call, fds);
	ward_strv_free(br);
	if (!err)
		err = ward_strv_finish(&a.argv, &sv);
	else
		ward_strv_discard(&sv);
	if (err) {
		ward_strv_free(a.args);
		return err;
	}
	*out = a;
	return 0;
}

int ward_plan_argv(char ***out, const ward_plan *plan, char *const argv[],
		   const char *cwd)
{
	struct ward_plan_argv a;
	int err;

	if (!out || !plan || !argv || !argv[0])
		return ward_err(WARD_EINVAL, "plan: no command");
	/* An argv for someone else to run outlives this process, and with
	 * it the proxy that would serve the allowlist: it could only fail,
	 * or be edited into something else. */
	if (plan->net == WARD_NETWORK_ALLOWLIST)
		return ward_err(
		    WARD_EINVAL,
		    "the network is an allowlist, which ward's proxy serves "
		    "for as long as the ward process that runs the command; an "
		    "argv printed for another program to run would have no "
		    "proxy to reach: run the command with ward run (or serve "
		    "it with ward mcp), or print it with --network off or "
		    "--network on");
	err = ward_plan_assemble(
	    &a, plan, &(struct ward_plan_call){argv, cwd, NULL}, NULL);
	if (err)
		return err;
	*out = a.argv;
	return 0;
}

int ward_plan_apply(const ward_plan *cplan)
{
	/* Only the "applied" flag changes: a plan shared between threads
	 * applies once. */
	ward_plan *plan = (ward_plan *)cplan;
	int err = 0;

	if (!plan)
		return ward_err(WARD_EINVAL, "plan: missing argument");
	pthread_mutex_lock(&plan->lock);
	if (!plan->applied && plan->x) {
		err = ward_xlate_apply(plan->x);
		plan->applied = err == 0;
	}
	pthread_mutex_unlock(&plan->lock);
	return err;
}

int ward_plan_prepare(const ward_plan *plan)
{
	return plan->x ? ward_xlate_apply(plan->x) : 0;
}

int ward_confined_from_plan(ward_confined **out, const ward_plan *plan,
			    char *const argv[], const char *cwd)
{
	return ward_confined_from_plan_net(out, plan, argv, cwd, NULL);
}

int ward_confined_from_plan_net(ward_confined **out, const ward_plan *plan,
				char *const argv[], const char *cwd,
				const struct ward_net_attach *net)
{
	struct ward_plan_argv a;
	ward_confined *c;
	int err = -ENOMEM;

	if (!out || !plan || !argv || !argv[0] || !argv[0][0])
		return ward_err(WARD_EINVAL, "no command to confine");
	c = calloc(1, sizeof(*c));
	if (!c)
		return ward_err(-ENOMEM, "out of memory");
	c->plan = plan;
	c->cmd = ward_strv_dup(argv);
	c->cwd = strdup(cwd ? cwd : plan->workspace);
	if (!c->cmd || !c->cwd)
		goto out_free;
	if (net && plan->net == WARD_NETWORK_ALLOWLIST) {
		c->net.port = net->port;
		if (net->unix_path) {
			c->net.unix_path = strdup(net->unix_path);
			if (!c->net.unix_path)
				goto out_free;
		}
	}
	err = ward_confined_assemble(&a, c, NULL);
	if (err)
		goto out_free;
	ward_strv_free(a.args);
	c->argv = a.argv;
	*out = c;
	return 0;

out_free:
	ward_confined_free(c);
	return err == -ENOMEM ? ward_err(-ENOMEM, "out of memory") : err;
}

/*
 * The provider's public confine() (provider.h): a plan made for this one
 * command, and the confined command from it. The plan, not the provider,
 * owns what a confined command is.
 */
int ward_provider_confine(ward_confined **out, ward_provider *provider,
			  const ward_policy *policy, char *const argv[])
{
	ward_plan *plan = NULL;
	int err;

	if (!out || !provider || !policy)
		return ward_err(WARD_EINVAL, "invalid argument");
	if (!argv || !argv[0] || !argv[0][0])
		return ward_err(WARD_EINVAL, "no command to confine");
	err = ward_plan_new(&plan, provider, policy);
	if (err)
		return err;
	err = ward_confined_from_plan(out, plan, argv, NULL);
	if (err) {
		ward_plan_free(plan);
		return err;
	}
	/* The confined command keeps its plan: it is made for this one
	 * command. */
	(*out)->own = plan;
	return 0;
}

int ward_confined_assemble(struct ward_plan_argv *out, const ward_confined *c,
			   const struct ward_plan_fds *fds)
{
	struct ward_plan_call call = {c->cmd, c->cwd, NULL};

	if (c->net.unix_path || c->net.port)
		call.net = &c->net;
	return ward_plan_assemble(out, c->plan, &call, fds);
}

void ward_confined_free(ward_confined *confined)
{
	if (!confined)
		return;
	ward_strv_free(confined->argv);
	ward_strv_free(confined->cmd);
	free(confined->cwd);
	free((char *)confined->net.unix_path);
	ward_plan_free(confined->own);
	free(confined);
}

char *const *ward_confined_argv(const ward_confined *confined)
{
	return confined ? confined->argv : NULL;
}

enum ward_runner ward_confined_runner(const ward_confined *c)
{
	return c ? c->plan->runner : WARD_RUNNER_NONE;
}

enum ward_enforcement ward_confined_enforcement(const ward_confined *c)
{
	return c ? c->plan->enforcement : WARD_ENFORCEMENT_NONE;
}

enum ward_mode ward_confined_mode(const ward_confined *c)
{
	/* No confinement described: report the fail-safe mode. */
	return c ? c->plan->mode : WARD_MODE_READ_ONLY;
}

const char *ward_confined_denial_signature(const ward_confined *c)
{
	return ward_denial_signature(c ? c->plan->runner : WARD_RUNNER_NONE);
}

char *const *ward_plan_failure_signatures(const ward_plan *plan)
{
	return plan->failure_signatures;
}

bool ward_plan_mounts(const ward_plan *plan)
{
	return plan->runner == WARD_RUNNER_LANDLOCK &&
	       ward_xlate_landlock_hides(plan->x)[0] != NULL;
}

bool ward_plan_layer(const ward_plan *plan)
{
	return plan->runner == WARD_RUNNER_BWRAP && plan->inner != NULL;
}

bool ward_plan_bridge(const ward_plan *plan)
{
	return plan->net == WARD_NETWORK_ALLOWLIST &&
	       (plan->runner == WARD_RUNNER_BWRAP ||
		plan->runner == WARD_RUNNER_CUSTOM);
}
