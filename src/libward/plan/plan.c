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

#include "libward/internal.h"
#include "libward/policy/facts.h"
#include "libward/runners/runners.h"
#include "translate_internal.h"
#include "util/util.h"

static char *const empty_strv[] = {NULL};

/*
 * The network of the plan, checked against its runner: what each runner
 * enforces (docs/NETWORK.md), and what ward refuses rather than run
 * without (an allowlist on a kernel
 * whose Landlock cannot govern TCP; a network other than on where nothing
 * is confined).
 */
static int plan_network(ward_plan *p)
{
	p->net = ward_policy_network(p->policy);
	if (p->net == WARD_NETWORK_ON)
		return 0;
	if (!p->ops->network)
		return ward_err(WARD_EINVAL,
				"the %s runner cannot restrict the network: "
				"use network on",
				ward_runner_name(p->runner));
	return p->ops->network(p);
}

/*
 * The runner's binary and options from the one translation: the builders
 * (profile.h) start every vector with the binary they were given.
 */
static int build_runner(ward_plan *p, const char *inner)
{
	char **prefix = NULL;
	int err;

	if (!p->ops->options)
		return ward_err(WARD_ERUNNER, "the %s runner cannot confine",
				ward_runner_name(p->runner));
	err = p->ops->options(&prefix, p, inner);
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
	struct ward_facts *f = NULL;
	int err;

	if (!out || !provider || !policy)
		return ward_err(WARD_EINVAL, "plan: missing argument");
	err = ward_facts_new(&f, policy, WARD_FACTS_LISTINGS);
	if (!err)
		err = ward_plan_new_facts(out, provider, policy, f);
	ward_facts_unref(f);
	return err;
}

int ward_plan_new_facts(ward_plan **out, ward_provider *provider,
			const ward_policy *policy, struct ward_facts *facts)
{
	struct ward_runner_choice c;
	struct ward_strv partial = {0};
	ward_plan *p;
	int err;

	if (!out || !provider || !policy || !facts)
		return ward_err(WARD_EINVAL, "plan: missing argument");
	err = ward_provider_choose(&c, provider, policy, facts->roots);
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&p->lock, NULL);
	p->policy = policy;
	p->facts = ward_facts_ref(facts);
	p->mode = ward_policy_mode(policy);
	p->runner = c.runner;
	p->ops = ward_runner_ops(c.runner);
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
	err = ward_xlate_new_ops(&p->x, policy, facts, p->ops,
				 c.inner != NULL);
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
	if (p->ops->inner_layer && !p->inner)
		ward_strv_push(&partial, p->ops->no_layer);
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
	ward_facts_unref(plan->facts);
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
	/* Computed with the plan, in its facts. */
	return plan ? plan->facts->roots : empty_strv;
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
	return ward_runner_ops(plan ? plan->runner : WARD_RUNNER_NONE)->denial;
}

enum ward_network ward_plan_network(const ward_plan *plan)
{
	return plan ? plan->net : WARD_NETWORK_OFF;
}

/*
 * The network attachment of a call's argv (allowlist only): the runner's
 * own (runners/: .attach_net) into its part @pre and into what runs
 * inside it before the command, @inner. @net is the call's endpoint (the
 * callers refuse an allowlist without one).
 */
static void push_net(struct ward_strv *pre, struct ward_strv *inner,
		     const ward_plan *p, const struct ward_net_attach *net)
{
	if (p->net == WARD_NETWORK_ALLOWLIST && p->ops->attach_net)
		p->ops->attach_net(pre, inner, p, net);
}

/*
 * The runner's status channel, right after its binary, when the executor
 * holds the other end (@fds->status): the runner's options for it (bwrap's
 * JSON status; the launcher's --shell-status --pid-fd), then the
 * descriptor; with @fds->kept the runner's option for a spawner that keeps
 * it (the launcher's --kept) first.
 */
static void push_status(struct ward_strv *sv, const ward_plan *p,
			const struct ward_plan_fds *fds)
{
	char num[16];

	if (!fds || fds->status < 0 || !p->ops->status_opts)
		return;
	snprintf(num, sizeof(num), "%d", fds->status);
	if (fds->kept && p->ops->kept_opt)
		ward_strv_push(sv, p->ops->kept_opt);
	ward_strv_push_all(sv, (char *const *)p->ops->status_opts);
	ward_strv_push(sv, num);
}

/*
 * What runs inside bwrap after its "--": ward-bridge's argv (@bridge),
 * the Landlock layer's, with `--pid-fd N` after the launcher when the
 * caller holds its report pipe, and the command. Past the runner's
 * max_args (bwrap's own part @own, the whole @total), the launcher takes
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
	size_t max = p->ops->max_args;
	char num[16];

	if (report)
		total += 2;
	ward_strv_push_all(sv, bridge);
	if (!max || total <= max || !fds) {
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
				total, (int)max, own,
				ward_strv_len(call->argv));
	/* bwrap's part: the profile, ward-bridge's, LAUNCHER --args N. */
	if (own + nbridge + 3 > max)
		return ward_err(WARD_ERUNNER,
				"bwrap: its profile alone needs %zu arguments "
				"and bwrap takes at most %d: run it with "
				"--runner landlock, or with fewer rules",
				own + nbridge + 3, (int)max);
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
	push_status(&sv, p, fds);
	ward_strv_push_all(&sv, p->options);
	/*
	 * Whoever spawns the argv without holding the Landlock layer's
	 * report pipe (ward confine's reader, an embedder) has bwrap bind
	 * the sandbox to it; the executor binds it through that pipe
	 * (profile_bwrap.c says why).
	 */
	if (p->inner && !(fds && fds->report >= 0))
		ward_strv_push(&sv, "--die-with-parent");
	push_net(&sv, &bridge, p, call->net);
	/* bwrap gets an explicit --chdir (a working directory the sandbox
	 * cannot see is then bwrap's loud error, never a silent fallback to
	 * $HOME); the others (landlock-run, the keeper of an unconfined
	 * run, sandbox-exec) are started in it. */
	if (p->ops->chdir) {
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
	return ward_runner_ops(c ? c->plan->runner : WARD_RUNNER_NONE)->denial;
}

char *const *ward_plan_failure_signatures(const ward_plan *plan)
{
	return plan->failure_signatures;
}

bool ward_plan_mounts(const ward_plan *plan)
{
	return plan->ops->hides_by_mounts &&
	       ward_xlate_landlock_hides(plan->x)[0] != NULL;
}

bool ward_plan_layer(const ward_plan *plan)
{
	return plan->inner != NULL;
}

bool ward_plan_bridge(const ward_plan *plan)
{
	return plan->bridge_path != NULL;
}
