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
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "translate_internal.h"

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
	pthread_mutex_t lock;  /* apply */
	bool applied;
};

static char *const empty_strv[] = {NULL};

/* The seatbelt prefix: sandbox-exec -p PROFILE. */
static int seatbelt_prefix(ward_plan *p)
{
	struct ward_strv sv = {0};
	char *text = NULL;
	int err;

	err = ward_seatbelt_profile_x(&text, p->policy, p->x);
	if (err)
		return err;
	/* sandbox-exec cannot set the environment: the executor sets
	 * WARD_SANDBOX=seatbelt for the child it spawns. */
	ward_strv_push(&sv, SANDBOX_EXEC);
	ward_strv_push(&sv, "-p");
	ward_strv_push(&sv, text);
	free(text);
	return ward_strv_finish(&p->prefix, &sv);
}

/* Build the runner's prefix (or grants) from the one translation. */
static int build_prefix(ward_plan *p)
{
	int err;

	switch (p->runner) {
	case WARD_RUNNER_BWRAP:
	case WARD_RUNNER_CUSTOM:
		return ward_bwrap_profile_x(&p->prefix, p->policy, p->x,
					    p->runner_path, -1, NULL);
	case WARD_RUNNER_LANDLOCK:
		err = ward_xlate_landlock(&p->ll_ro, &p->ll_rw, p->x);
		if (err)
			return err;
		return ward_landlock_argv(&p->prefix, p->ll_ro, p->ll_rw,
					  ward_xlate_landlock_hides(p->x),
					  p->runner_path, NULL);
	case WARD_RUNNER_SEATBELT:
		return seatbelt_prefix(p);
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
	err = ward_xlate_new(&p->x, policy, p->runner);
	if (err)
		goto out_free_plan;
	if (ward_xlate_refusal(p->x)) {
		err = ward_err(WARD_EINVAL, "%s", ward_xlate_refusal(p->x));
		goto out_free_plan;
	}
	if (p->runner != WARD_RUNNER_NONE) {
		err = build_prefix(p);
		if (err)
			goto out_free_plan;
	}
	ward_strv_push_all(&partial, ward_xlate_partial(p->x));
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
	ward_strv_free(plan->partial);
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
	return plan && plan->x ? ward_xlate_warnings(plan->x) : empty_strv;
}

char *const *ward_plan_describe(const ward_plan *plan)
{
	return plan && plan->x ? ward_xlate_describe(plan->x) : empty_strv;
}

const char *ward_plan_denial_signature(const ward_plan *plan)
{
	return ward_denial_signature(plan ? plan->runner : WARD_RUNNER_NONE);
}

/*
 * The command part of the argv: bwrap gets an explicit --chdir (a working
 * directory the sandbox cannot see is then bwrap's loud error, never a
 * silent fallback to $HOME) and "--"; the others "--" only.
 */
static void push_command(struct ward_strv *sv, const ward_plan *p,
			 char *const argv[], const char *cwd)
{
	if (p->runner == WARD_RUNNER_BWRAP || p->runner == WARD_RUNNER_CUSTOM) {
		ward_strv_push(sv, "--chdir");
		ward_strv_push(sv,
			       cwd ? cwd : ward_policy_workspace(p->policy));
	}
	if (p->runner != WARD_RUNNER_NONE)
		ward_strv_push(sv, "--");
	ward_strv_push_all(sv, argv);
}

int ward_plan_argv(char ***out, const ward_plan *plan, char *const argv[],
		   const char *cwd)
{
	struct ward_strv sv = {0};

	if (!out || !plan || !argv || !argv[0])
		return ward_err(WARD_EINVAL, "plan: no command");
	ward_strv_push_all(&sv, plan->prefix);
	push_command(&sv, plan, argv, cwd);
	return ward_strv_finish(out, &sv);
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
	struct ward_strv prefix = {0};
	ward_confined *c;
	int err = -ENOMEM;

	if (!out || !plan || !argv || !argv[0] || !argv[0][0])
		return ward_err(WARD_EINVAL, "no command to confine");
	c = calloc(1, sizeof(*c));
	if (!c)
		return ward_err(-ENOMEM, "out of memory");
	c->mode = plan->mode;
	c->runner = plan->runner;
	c->enforcement = plan->enforcement;
	c->cmd = ward_strv_dup(argv);
	if (!c->cmd)
		goto out_free;
	err = ward_plan_argv(&c->argv, plan, argv, cwd);
	if (err)
		goto out_free;
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
		if (!c->ll_ro || !c->ll_rw)
			goto out_free;
		c->ll_launcher = ward_xlate_landlock_hides(plan->x)[0] != NULL;
	}
	if (plan->runner == WARD_RUNNER_BWRAP ||
	    plan->runner == WARD_RUNNER_CUSTOM) {
		ward_strv_push_all(&prefix, plan->prefix);
		push_command(&prefix, plan, (char *const[]){NULL}, cwd);
		if (ward_strv_finish(&c->prefix, &prefix) != 0)
			goto out_free;
	}
	*out = c;
	return 0;

out_free:
	ward_confined_free(c);
	return err == -ENOMEM ? ward_err(-ENOMEM, "out of memory") : err;
}

int ward_confined_apply(const ward_confined *c)
{
	for (size_t i = 0; c && c->create && c->create[i]; i++) {
		int err = ward_mkdir_p(c->create[i]);

		if (err)
			return ward_err(err,
					"cannot create %s (so that it can be "
					"kept read-only): %s",
					c->create[i], strerror(-err));
	}
	return 0;
}
