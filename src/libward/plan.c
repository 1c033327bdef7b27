/*
 * ward — the plan: one call's confinement, computed once (see plan.h).
 *
 * Everything that decides how a command is confined happens here, in one
 * pass: the provider chooses the runner (probing at most once), the policy
 * gives its writable roots and protected paths (computed once per policy),
 * the access rules are translated for the chosen runner (one glob walk),
 * and the runner's argv prefix or Landlock grants are built from that one
 * translation. The executor, `ward confine`, the warnings and `ward config
 * check` all read the result.
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

#ifndef WARD_LIBEXECDIR
#define WARD_LIBEXECDIR "/usr/local/libexec/ward"
#endif

struct ward_plan {
	const ward_policy *policy; /* borrowed */
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	char *runner_path;
	char **failure_signatures; /* CUSTOM, or NULL */
	struct ward_xlate *x;	   /* NULL for runner none */
	/* bwrap/custom: BWRAP <profile> (no --chdir, no --); landlock:
	 * LAUNCHER --ro … --rw …; seatbelt: sandbox-exec -p TEXT. */
	char **prefix;
	char **ll_ro, **ll_rw; /* landlock */
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
static int seatbelt_prefix(ward_plan *p)
{
	char *text = NULL;
	int err;

	err = ward_seatbelt_profile_x(&text, p->policy, p->x);
	if (err)
		return err;
	err = ward_seatbelt_argv(&p->prefix, text, NULL);
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
static int build_inner(ward_plan *p, const char *launcher)
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
	ward_strv_push_all(&pre, p->prefix);
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
	ward_strv_free(p->prefix);
	p->prefix = NULL;
	return ward_strv_finish(&p->prefix, &pre);
}

/* landlock-run's argv, with the supervisor's unix-socket allowances. */
static int landlock_prefix(ward_plan *p)
{
	struct ward_strv sv = {0};
	char **base = NULL;
	char *const *ok = ward_policy_allow_unix(p->policy);
	size_t i;
	int err;

	err = ward_landlock_argv(&base, p->ll_ro, p->ll_rw,
				 ward_xlate_landlock_hides(p->x), p->runner_path,
				 p->net == WARD_NETWORK_OFF, NULL);
	if (err)
		return err;
	ward_strv_push_all(&sv, base);
	ward_strv_free(base);
	for (i = 0; ok[i]; i++) {
		ward_strv_push(&sv, "--allow-unix");
		ward_strv_push(&sv, ok[i]);
	}
	return ward_strv_finish(&p->prefix, &sv);
}

/* Build the runner's prefix (or grants) from the one translation. */
static int build_prefix(ward_plan *p, const char *inner)
{
	struct ward_strv sv = {0};
	int err;

	switch (p->runner) {
	case WARD_RUNNER_BWRAP:
		err = ward_bwrap_profile_x(&p->prefix, p->policy, p->x,
					   p->runner_path, -1, NULL,
					   inner != NULL);
		if (err || !inner)
			return err;
		return build_inner(p, inner);
	case WARD_RUNNER_CUSTOM:
		return ward_bwrap_profile_x(&p->prefix, p->policy, p->x,
					    p->runner_path, -1, NULL, false);
	case WARD_RUNNER_LANDLOCK:
		err = ward_xlate_landlock(&p->ll_ro, &p->ll_rw, p->x);
		if (err)
			return err;
		return landlock_prefix(p);
	case WARD_RUNNER_SEATBELT:
		return seatbelt_prefix(p);
	case WARD_RUNNER_NONE:
		/* Unconfined, but kept: its processes end with the call. */
		ward_strv_push(&sv, p->runner_path);
		ward_strv_push(&sv, "--unconfined");
		return ward_strv_finish(&p->prefix, &sv);
	default:
		return ward_err(WARD_ERUNNER, "the %s runner cannot confine",
				ward_runner_name(p->runner));
	}
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
	err = build_prefix(p, c.inner);
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
	ward_strv_free(plan->prefix);
	ward_strv_free(plan->ll_ro);
	ward_strv_free(plan->ll_rw);
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
 * The command part of the argv: bwrap gets an explicit --chdir (a working
 * directory the sandbox cannot see is then bwrap's loud error, never a
 * silent fallback to $HOME) and "--"; the others (landlock-run, the keeper
 * of an unconfined run, sandbox-exec) "--" only.
 */
static void push_command(struct ward_strv *sv, const ward_plan *p,
			 char *const *bridge, char *const argv[],
			 const char *cwd)
{
	if (p->runner == WARD_RUNNER_BWRAP || p->runner == WARD_RUNNER_CUSTOM) {
		ward_strv_push(sv, "--chdir");
		ward_strv_push(sv,
			       cwd ? cwd : ward_policy_workspace(p->policy));
	}
	ward_strv_push(sv, "--");
	/* bwrap → ward-bridge (an allowlist) → the Landlock layer → ARGV */
	if (argv[0]) {
		ward_strv_push_all(sv, bridge);
		ward_strv_push_all(sv, p->inner);
	}
	ward_strv_push_all(sv, argv);
}

/* The whole argv to spawn: prefix, network attachment, command. */
static int plan_argv_net(char ***out, const ward_plan *plan, char *const argv[],
			 const char *cwd, const struct ward_net_attach *net)
{
	struct ward_strv sv = {0}, inner = {0};
	char **in = NULL;
	int err;

	ward_strv_push_all(&sv, plan->prefix);
	/*
	 * Whoever spawns this argv (ward confine's reader, an embedder)
	 * holds no end of the Landlock layer's report pipe, so bwrap binds
	 * the sandbox to it; the executor binds it through that pipe and
	 * leaves this out (profile_bwrap.c says why).
	 */
	if (plan->runner == WARD_RUNNER_BWRAP && plan->inner)
		ward_strv_push(&sv, "--die-with-parent");
	push_net(&sv, &inner, plan, net);
	err = ward_strv_finish(&in, &inner);
	if (err) {
		ward_strv_discard(&sv);
		return err;
	}
	push_command(&sv, plan, in, argv, cwd);
	ward_strv_free(in);
	return ward_strv_finish(out, &sv);
}

int ward_plan_argv(char ***out, const ward_plan *plan, char *const argv[],
		   const char *cwd)
{
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
	return plan_argv_net(out, plan, argv, cwd, NULL);
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

int ward_confined_from_plan(ward_confined **out, const ward_plan *plan,
			    char *const argv[], const char *cwd)
{
	return ward_confined_from_plan_net(out, plan, argv, cwd, NULL);
}

int ward_confined_from_plan_net(ward_confined **out, const ward_plan *plan,
				char *const argv[], const char *cwd,
				const struct ward_net_attach *net)
{
	struct ward_strv prefix = {0}, inner = {0};
	ward_confined *c;
	int err = -ENOMEM;

	if (!out || !plan || !argv || !argv[0] || !argv[0][0])
		return ward_err(WARD_EINVAL, "no command to confine");
	if (plan->net == WARD_NETWORK_ALLOWLIST &&
	    (!net || (!net->unix_path && !net->port)))
		return ward_err(WARD_EINVAL,
				"the network is an allowlist but the call has "
				"no proxy endpoint (run it through ward_call)");
	c = calloc(1, sizeof(*c));
	if (!c)
		return ward_err(-ENOMEM, "out of memory");
	c->mode = plan->mode;
	c->runner = plan->runner;
	c->enforcement = plan->enforcement;
	c->cmd = ward_strv_dup(argv);
	if (!c->cmd)
		goto out_free;
	err = plan_argv_net(&c->argv, plan, argv, cwd, net);
	if (err)
		goto out_free;
	c->net = plan->net == WARD_NETWORK_OFF	       ? WARD_LL_NET_OFF
		 : plan->net == WARD_NETWORK_ALLOWLIST ? WARD_LL_NET_CONNECT
						       : WARD_LL_NET_ON;
	c->net_port = net ? net->port : 0;
	err = -ENOMEM;
	if (plan->runner_path) {
		c->runner_path = strdup(plan->runner_path);
		if (!c->runner_path)
			goto out_free;
	}
	if (plan->failure_signatures) {
		c->failure_signatures = ward_strv_dup(plan->failure_signatures);
		if (!c->failure_signatures)
			goto out_free;
	}
	if (plan->x) {
		c->create = ward_strv_dup(ward_xlate_create(plan->x));
		if (!c->create)
			goto out_free;
	}
	if (plan->ll_ro) {
		c->ll_ro = ward_strv_dup(plan->ll_ro);
		c->ll_rw = ward_strv_dup(plan->ll_rw);
		c->ll_unix =
		    ward_strv_dup(ward_policy_allow_unix(plan->policy));
		if (!c->ll_ro || !c->ll_rw || !c->ll_unix)
			goto out_free;
		c->ll_mounts = ward_xlate_landlock_hides(plan->x)[0] != NULL;
	}
	if (plan->runner == WARD_RUNNER_BWRAP ||
	    plan->runner == WARD_RUNNER_CUSTOM) {
		/* What runs inside bwrap before the command: ward-bridge
		 * (an allowlist), then the Landlock layer. */
		ward_strv_push_all(&prefix, plan->prefix);
		push_net(&prefix, &inner, plan, net);
		push_command(&prefix, plan, NULL, (char *const[]){NULL}, cwd);
		c->inner_launcher = inner.n;
		ward_strv_push_all(&inner, plan->inner);
		if (ward_strv_finish(&c->prefix, &prefix) != 0 ||
		    ward_strv_finish(&c->inner, &inner) != 0)
			goto out_free;
		if (!c->inner[0]) {
			free(c->inner);
			c->inner = NULL;
		}
	} else if (plan->inner) {
		c->inner = ward_strv_dup(plan->inner);
		if (!c->inner)
			goto out_free;
	}
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
	ward_plan_free(plan);
	return err;
}

void ward_confined_free(ward_confined *confined)
{
	if (!confined)
		return;
	ward_strv_free(confined->argv);
	ward_strv_free(confined->prefix);
	ward_strv_free(confined->create);
	ward_strv_free(confined->cmd);
	ward_strv_free(confined->ll_ro);
	ward_strv_free(confined->ll_rw);
	ward_strv_free(confined->ll_unix);
	ward_strv_free(confined->inner);
	free(confined->runner_path);
	ward_strv_free(confined->failure_signatures);
	free(confined);
}

char *const *ward_confined_argv(const ward_confined *confined)
{
	return confined ? confined->argv : NULL;
}

enum ward_runner ward_confined_runner(const ward_confined *c)
{
	return c ? c->runner : WARD_RUNNER_NONE;
}

enum ward_enforcement ward_confined_enforcement(const ward_confined *c)
{
	return c ? c->enforcement : WARD_ENFORCEMENT_NONE;
}

enum ward_mode ward_confined_mode(const ward_confined *c)
{
	/* No confinement described: report the fail-safe mode. */
	return c ? c->mode : WARD_MODE_READ_ONLY;
}

const char *ward_confined_denial_signature(const ward_confined *c)
{
	return ward_denial_signature(c ? c->runner : WARD_RUNNER_NONE);
}

int ward_confined_apply(const ward_confined *c)
{
	for (size_t i = 0; c && c->create && c->create[i]; i++) {
		int err = util_mkdir_p(c->create[i]);

		if (err)
			return ward_err(err,
					"cannot create %s (so that it can be "
					"kept read-only): %s",
					c->create[i], strerror(-err));
	}
	return 0;
}
