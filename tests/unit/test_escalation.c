/*
 * Unit tests for src/libward/escalation.c: the ladder, the strictly-wider check,
 * every verdict with its exact text and proof on disk of whether the
 * command ran, the audit trail in the session log, and that a grant never
 * leaks to the next call.
 *
 * The command-running cases escalate read-only → danger-full-access, which
 * runs unconfined (runner none), so they need no runner; one case uses a
 * real runner for read-only → workspace-write and is skipped, with the
 * reason, where none can confine. File-operation cases use the fs fence.
 *
 * Every test gets a fresh base directory under /var/tmp (not /tmp, a
 * writable root of workspace-write): store/ (the session store) and ws/.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "ward/ward.h"

#include "fixture.h"

struct fx {
	char base[256];
	char store[300];
	char ws[PATH_MAX];
	ward_session *session;
	/* The fake approval service. */
	enum ward_approval_outcome answer;
	int asked;
	struct ward_approval_request seen;
	char seen_summary[256], seen_justification[256], seen_cwd[PATH_MAX];
};

/* --- helpers ----------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char ws[300];

	if (!fx)
		return -1;
	snprintf(fx->base, sizeof(fx->base),
		 "/var/tmp/ward-test-escalation.XXXXXX");
	if (!mkdtemp(fx->base))
		return -1;
	snprintf(fx->store, sizeof(fx->store), "%s/store", fx->base);
	snprintf(ws, sizeof(ws), "%s/ws", fx->base);
	if (mkdir(ws, 0755) || !realpath(ws, fx->ws))
		return -1;
	unsetenv("TMPDIR");
	if (ward_session_create(&fx->session, fx->store, fx->ws) != 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ward_session_free(fx->session);
	nftw(fx->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

static enum ward_approval_outcome
fake_approve(void *ctx, const struct ward_approval_request *req)
{
	struct fx *fx = ctx;

	fx->asked++;
	fx->seen = *req;
	snprintf(fx->seen_summary, sizeof(fx->seen_summary), "%s",
		 req->summary);
	snprintf(fx->seen_justification, sizeof(fx->seen_justification), "%s",
		 req->justification);
	snprintf(fx->seen_cwd, sizeof(fx->seen_cwd), "%s", req->cwd);
	return fx->answer;
}

/* A provider that finds the build's landlock-run (the keeper of an
 * unconfined run). */
static ward_provider *provider_new(void)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p = NULL;
	char launcher[PATH_MAX];

	if (fixture_launcher(launcher))
		po.launcher_path = launcher;
	assert_int_equal(ward_provider_new(&p, &po), 0);
	return p;
}

static ward_policy *policy(struct fx *fx, enum ward_mode mode)
{
	ward_policy *p = NULL;

	assert_int_equal(ward_policy_new(&p, mode, fx->ws), 0);
	assert_int_equal(ward_policy_set_tmpdir(p, NULL), 0);
	assert_int_equal(
	    ward_policy_set_session(p, ward_session_id(fx->session)), 0);
	return p;
}

static const char *path_in(struct fx *fx, const char *name)
{
	static char ring[8][PATH_MAX + 64];
	static unsigned next;
	char *b = ring[next++ % 8];

	snprintf(b, PATH_MAX + 64, "%s/%s", fx->ws, name);
	return b;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The event types recorded after index @from, joined by spaces. */
static const char *types_since(struct fx *fx, size_t from)
{
	static char buf[1024];
	size_t n;

	assert_int_equal(ward_session_reload(fx->session), 0);
	buf[0] = '\0';
	n = ward_session_event_count(fx->session);
	for (size_t i = from; i < n; i++) {
		if (buf[0])
			strcat(buf, " ");
		strcat(buf, ward_session_event_type(fx->session, i));
	}
	return buf;
}

/* Member @key of the last event of type @type. */
static char *last_field(struct fx *fx, const char *type, const char *key)
{
	static char buf[1024];
	size_t n;

	assert_int_equal(ward_session_reload(fx->session), 0);
	n = ward_session_event_count(fx->session);
	for (size_t i = n; i > 0; i--) {
		json_t *ev, *v;

		if (strcmp(ward_session_event_type(fx->session, i - 1), type))
			continue;
		ev =
		    json_loads(ward_session_event(fx->session, i - 1), 0, NULL);
		assert_non_null(ev);
		v = json_object_get(ev, key);
		snprintf(buf, sizeof(buf), "%s",
			 json_is_string(v) ? json_string_value(v) : "");
		json_decref(ev);
		return buf;
	}
	return NULL;
}

struct outcome_case {
	const char *name;
	enum ward_mode base;
	enum ward_mode requested;
	enum ward_approval_policy policy;
	bool service;
	int answer; /* what the fake service says */
	enum ward_escalation_verdict want;
	bool want_asked;
};

/*
 * Run `touch ws/<name>` under the escalation of @c and check the
 * verdict, its exact text in the log, who was asked, and whether the file
 * exists (the command ran) — all from the outside.
 */
static void run_case(struct fx *fx, const struct outcome_case *c)
{
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v = (enum ward_escalation_verdict) - 1;
	ward_provider *provider = NULL;
	ward_policy *base = policy(fx, c->base);
	ward_result *r = NULL;
	const char *file = path_in(fx, c->name);
	char *argv[] = {"touch", (char *)file, NULL};
	char *want_text = NULL, cid[16];
	size_t before;

	provider = provider_new();
	assert_int_equal(ward_session_reload(fx->session), 0);
	before = ward_session_event_count(fx->session);
	assert_int_equal(ward_session_new_call_id(cid, sizeof(cid)), 0);
	fx->asked = 0;
	fx->answer = (enum ward_approval_outcome)c->answer;
	e.summary = "touch file";
	e.requested = c->requested;
	e.justification = "needs to create the file";
	e.policy = c->policy;
	e.approve = c->service ? fake_approve : NULL;
	e.approve_ctx = fx;
	e.session = fx->session;
	e.call_id = cid;

	{
		ward_policy *granted = NULL;

		/* Authorize, then run only what was granted (what a call
		 * does; tests/unit/test_call.c drives the whole call). */
		assert_int_equal(
		    ward_escalation_authorize(&granted, &v, base, &e), 0);
		if (granted) {
			assert_int_equal(
			    ward_exec_run(&r, provider, granted, argv, NULL),
			    0);
			ward_policy_free(granted);
		}
	}
	assert_int_equal(v, c->want);
	assert_int_equal(fx->asked, c->want_asked ? 1 : 0);
	if (c->want == WARD_ESCALATION_GRANTED) {
		assert_non_null(r);
		assert_int_equal(ward_result_exit_code(r), 0);
		assert_int_equal(ward_result_mode(r), c->requested);
		assert_true(exists(file));
		ward_result_free(r);
	} else {
		assert_null(r);
		assert_false(exists(file));
	}

	/* The log tells the same story. */
	assert_string_equal(types_since(fx, before),
			    c->want_asked
				? "escalation/request approval/asked "
				  "approval/decision escalation/verdict"
				: "escalation/request escalation/verdict");
	assert_string_equal(last_field(fx, "escalation/request", "call"), cid);
	assert_string_equal(
	    last_field(fx, "escalation/request", "justification"),
	    "needs to create the file");
	assert_string_equal(last_field(fx, "escalation/request", "from"),
			    ward_mode_name(c->base));
	assert_string_equal(last_field(fx, "escalation/verdict", "verdict"),
			    ward_escalation_verdict_name(c->want));
	if (c->want_asked)
		assert_string_equal(
		    last_field(fx, "approval/decision", "outcome"),
		    ward_approval_outcome_name(
			c->want == WARD_ESCALATION_GRANTED
			    ? WARD_APPROVAL_ALLOWED_ONCE
			: c->want == WARD_ESCALATION_REJECTED
			    ? WARD_APPROVAL_REJECTED
			: c->want == WARD_ESCALATION_CANCELLED
			    ? WARD_APPROVAL_CANCELLED
			    : WARD_APPROVAL_UNAVAILABLE));
	if (c->want != WARD_ESCALATION_GRANTED) {
		assert_int_equal(ward_render_verdict(&want_text, c->want,
						     WARD_SUBJECT_COMMAND,
						     c->requested),
				 0);
		assert_string_equal(
		    last_field(fx, "escalation/verdict", "text"), want_text);
		free(want_text);
	} else {
		assert_string_equal(
		    last_field(fx, "escalation/verdict", "text"), "");
	}
	/* Nothing about the session's own mode was written. */
	assert_null(last_field(fx, "sandbox/mode", "mode"));
	ward_policy_free(base);
	ward_provider_free(provider);
}

/* --- the ladder -------------------------------------------------------- */

static void test_ladder(void **state)
{
	enum ward_mode t[2];

	(void)state;
	assert_int_equal(ward_escalation_targets(t, WARD_MODE_READ_ONLY), 2);
	assert_int_equal(t[0], WARD_MODE_WORKSPACE_WRITE);
	assert_int_equal(t[1], WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(ward_escalation_targets(t, WARD_MODE_WORKSPACE_WRITE),
			 1);
	assert_int_equal(t[0], WARD_MODE_DANGER_FULL_ACCESS);
	assert_int_equal(
	    ward_escalation_targets(t, WARD_MODE_DANGER_FULL_ACCESS), 0);
	assert_int_equal(ward_escalation_targets(t, (enum ward_mode)9), 0);

	for (int from = 0; from < 3; from++) {
		for (int to = 0; to < 3; to++)
			assert_int_equal(
			    ward_escalation_is_wider((enum ward_mode)from,
						     (enum ward_mode)to),
			    to > from);
	}
	assert_false(
	    ward_escalation_is_wider(WARD_MODE_READ_ONLY, (enum ward_mode)3));
}

static void test_offered(void **state)
{
	(void)state;
	assert_true(ward_escalation_offered(WARD_MODE_READ_ONLY,
					    WARD_APPROVAL_ASK, true, false));
	assert_true(ward_escalation_offered(WARD_MODE_WORKSPACE_WRITE,
					    WARD_APPROVAL_ASK, true, false));
	/* Nothing wider, no service, `never`, or the retry already used. */
	assert_false(ward_escalation_offered(WARD_MODE_DANGER_FULL_ACCESS,
					     WARD_APPROVAL_ASK, true, false));
	assert_false(ward_escalation_offered(WARD_MODE_READ_ONLY,
					     WARD_APPROVAL_ASK, false, false));
	assert_false(ward_escalation_offered(WARD_MODE_READ_ONLY,
					     WARD_APPROVAL_NEVER, true, false));
	assert_false(ward_escalation_offered(WARD_MODE_READ_ONLY,
					     WARD_APPROVAL_ASK, true, true));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ward_subject_name(WARD_SUBJECT_COMMAND), "command");
	assert_string_equal(ward_subject_name(WARD_SUBJECT_OPERATION),
			    "operation");
	assert_string_equal(
	    ward_approval_outcome_name(WARD_APPROVAL_ALLOWED_ONCE),
	    "allowed-once");
	assert_string_equal(ward_approval_outcome_name(WARD_APPROVAL_CANCELLED),
			    "cancelled");
	assert_string_equal(
	    ward_escalation_verdict_name(WARD_ESCALATION_NO_SERVICE),
	    "no-approval-service");
	assert_string_equal(
	    ward_escalation_verdict_name(WARD_ESCALATION_POLICY_NEVER),
	    "policy-never");
	assert_string_equal(
	    ward_escalation_verdict_name((enum ward_escalation_verdict)77),
	    "unknown");
}

/* --- every outcome ------------------------------------------------------ */

#define RO    WARD_MODE_READ_ONLY
#define WW    WARD_MODE_WORKSPACE_WRITE
#define DFA   WARD_MODE_DANGER_FULL_ACCESS
#define ASK   WARD_APPROVAL_ASK
#define NEVER WARD_APPROVAL_NEVER

static void test_allowed_once_runs(void **state)
{
	static const struct outcome_case c = {"granted",
					      RO,
					      DFA,
					      ASK,
					      true,
					      WARD_APPROVAL_ALLOWED_ONCE,
					      WARD_ESCALATION_GRANTED,
					      true};

	run_case(*state, &c);
}

static void test_rejected_runs_nothing(void **state)
{
	static const struct outcome_case c = {"rejected",
					      RO,
					      DFA,
					      ASK,
					      true,
					      WARD_APPROVAL_REJECTED,
					      WARD_ESCALATION_REJECTED,
					      true};

	run_case(*state, &c);
}

static void test_cancelled_runs_nothing(void **state)
{
	static const struct outcome_case c = {"cancelled",
					      RO,
					      DFA,
					      ASK,
					      true,
					      WARD_APPROVAL_CANCELLED,
					      WARD_ESCALATION_CANCELLED,
					      true};

	run_case(*state, &c);
}

static void test_unavailable_runs_nothing(void **state)
{
	static const struct outcome_case c = {"unavailable",
					      RO,
					      DFA,
					      ASK,
					      true,
					      WARD_APPROVAL_UNAVAILABLE,
					      WARD_ESCALATION_UNAVAILABLE,
					      true};
	/* A service answering nonsense is treated as unavailable. */
	static const struct outcome_case bogus = {
	    "bogus", RO, DFA, ASK, true, 77, WARD_ESCALATION_UNAVAILABLE, true};

	run_case(*state, &c);
	run_case(*state, &bogus);
}

static void test_no_service_asks_nobody(void **state)
{
	static const struct outcome_case c = {"noservice",
					      RO,
					      DFA,
					      ASK,
					      false,
					      WARD_APPROVAL_ALLOWED_ONCE,
					      WARD_ESCALATION_NO_SERVICE,
					      false};

	run_case(*state, &c);
}

static void test_policy_never_asks_nobody(void **state)
{
	static const struct outcome_case c = {"never",
					      RO,
					      DFA,
					      NEVER,
					      true,
					      WARD_APPROVAL_ALLOWED_ONCE,
					      WARD_ESCALATION_POLICY_NEVER,
					      false};

	run_case(*state, &c);
}

static void test_not_wider_asks_nobody(void **state)
{
	/* The service would say yes: it is never asked. */
	static const struct outcome_case same = {"same",
						 DFA,
						 DFA,
						 ASK,
						 true,
						 WARD_APPROVAL_ALLOWED_ONCE,
						 WARD_ESCALATION_NOT_WIDER,
						 false};
	static const struct outcome_case narrower = {"narrower",
						     WW,
						     RO,
						     ASK,
						     true,
						     WARD_APPROVAL_ALLOWED_ONCE,
						     WARD_ESCALATION_NOT_WIDER,
						     false};
	static const struct outcome_case ro_same = {"ro",
						    RO,
						    RO,
						    ASK,
						    true,
						    WARD_APPROVAL_ALLOWED_ONCE,
						    WARD_ESCALATION_NOT_WIDER,
						    false};
	/* Not wider outranks "no service" and "never". */
	static const struct outcome_case first = {"first",
						  DFA,
						  WW,
						  NEVER,
						  false,
						  WARD_APPROVAL_ALLOWED_ONCE,
						  WARD_ESCALATION_NOT_WIDER,
						  false};

	run_case(*state, &same);
	run_case(*state, &narrower);
	run_case(*state, &ro_same);
	run_case(*state, &first);
}

/* --- the request the person sees -------------------------------------- */

static void test_request_shown(void **state)
{
	struct fx *fx = *state;
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v;
	ward_policy *base = policy(fx, RO);
	ward_policy *granted = NULL;

	e.subject = WARD_SUBJECT_OPERATION;
	e.summary = "write notes.txt";
	e.requested = WW;
	e.justification = "save the notes";
	e.approve = fake_approve;
	e.approve_ctx = fx;
	e.session = fx->session;
	e.call_id = "c1";
	fx->answer = WARD_APPROVAL_ALLOWED_ONCE;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_GRANTED);
	assert_int_equal(fx->asked, 1);
	assert_int_equal(fx->seen.subject, WARD_SUBJECT_OPERATION);
	assert_int_equal(fx->seen.current, RO);
	assert_int_equal(fx->seen.requested, WW);
	assert_string_equal(fx->seen_summary, "write notes.txt");
	assert_string_equal(fx->seen_justification, "save the notes");
	/* No cwd given: the workspace root. */
	assert_string_equal(fx->seen_cwd, fx->ws);
	assert_ptr_equal(fx->seen.session_id, ward_session_id(fx->session));
	assert_string_equal(fx->seen.call_id, "c1");
	/* The grant: the base policy with the wider mode, nothing else. */
	assert_int_equal(ward_policy_mode(granted), WW);
	assert_string_equal(ward_policy_workspace(granted), fx->ws);
	assert_string_equal(ward_policy_session(granted),
			    ward_session_id(fx->session));
	assert_null(ward_policy_tmpdir(granted));
	assert_int_equal(ward_policy_mode(base), RO);
	ward_policy_free(granted);
	ward_policy_free(base);
}

static void test_invalid_requests(void **state)
{
	struct fx *fx = *state;
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v = WARD_ESCALATION_REJECTED;
	ward_policy *base = policy(fx, RO);
	ward_policy *granted = NULL;

	e.requested = WW;
	e.approve = fake_approve;
	e.approve_ctx = fx;
	e.session = fx->session;
	e.call_id = "c1";
	fx->answer = WARD_APPROVAL_ALLOWED_ONCE;
	e.justification = NULL;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e),
			 WARD_EINVAL);
	e.justification = " \t\n";
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e),
			 WARD_EINVAL);
	e.justification = "bad \xff utf-8";
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e),
			 WARD_EINVAL);
	e.justification = "ok";
	e.requested = (enum ward_mode)3;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e),
			 WARD_EINVAL);
	e.requested = WW;
	e.call_id = NULL;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e),
			 WARD_EINVAL);
	assert_int_equal(ward_escalation_authorize(NULL, &v, base, &e),
			 WARD_EINVAL);
	/* Nobody asked, nothing granted, nothing recorded. */
	assert_int_equal(fx->asked, 0);
	assert_null(granted);
	assert_int_equal(v, WARD_ESCALATION_REJECTED);
	assert_string_equal(types_since(fx, 0), "");
	ward_policy_free(base);
}

/* Without a session nothing is recorded, and the verdicts are the same. */
static void test_without_session(void **state)
{
	struct fx *fx = *state;
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v;
	ward_policy *base = policy(fx, WW);
	ward_policy *granted = NULL;

	e.requested = DFA;
	e.justification = "why";
	e.approve = fake_approve;
	e.approve_ctx = fx;
	fx->answer = WARD_APPROVAL_REJECTED;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_REJECTED);
	assert_null(granted);
	fx->answer = WARD_APPROVAL_ALLOWED_ONCE;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_GRANTED);
	assert_int_equal(ward_policy_mode(granted), DFA);
	assert_string_equal(types_since(fx, 0), "");
	ward_policy_free(granted);
	ward_policy_free(base);
}

/* --- a grant never leaks ------------------------------------------------ */

static void test_grant_never_leaks(void **state)
{
	struct fx *fx = *state;
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v;
	ward_policy *base = NULL, *granted = NULL, *next = NULL;
	struct ward_fs_denial d;
	enum ward_knob_source src;

	base = policy(fx, RO);
	assert_int_equal(ward_policy_mode(base), RO);
	assert_int_equal(ward_fs_write(&d, base, "a.txt", "a", 1, NULL),
			 WARD_EDENIED);

	e.subject = WARD_SUBJECT_OPERATION;
	e.summary = "write a.txt";
	e.requested = WW;
	e.justification = "write the file";
	e.approve = fake_approve;
	e.approve_ctx = fx;
	e.session = fx->session;
	e.call_id = "c1";
	fx->answer = WARD_APPROVAL_ALLOWED_ONCE;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_GRANTED);
	/* The granted call writes… */
	assert_int_equal(ward_fs_write(&d, granted, "a.txt", "a", 1, NULL), 0);
	assert_true(exists(path_in(fx, "a.txt")));
	ward_policy_free(granted);

	/* …and the next call is back to the session's mode: nothing was
	 * persisted, in memory or on disk. */
	assert_int_equal(ward_policy_mode(base), RO);
	assert_int_equal(ward_session_reload(fx->session), 0);
	assert_int_equal(ward_session_mode(fx->session, RO, &src), RO);
	assert_int_equal(src, WARD_KNOB_DEFAULT);
	assert_null(last_field(fx, "sandbox/mode", "mode"));
	next = policy(fx, ward_session_mode(fx->session, RO, NULL));
	assert_int_equal(ward_policy_mode(next), RO);
	assert_int_equal(ward_fs_write(&d, next, "b.txt", "b", 1, NULL),
			 WARD_EDENIED);
	assert_false(exists(path_in(fx, "b.txt")));
	ward_policy_free(next);
	ward_policy_free(base);
}

/* File operations escalate too, with "operation" in their texts. */
static void test_fs_operation_rejected(void **state)
{
	struct fx *fx = *state;
	struct ward_escalation e = WARD_ESCALATION_INIT;
	enum ward_escalation_verdict v;
	ward_policy *base = policy(fx, RO), *granted = NULL;
	struct ward_fs_denial d;
	char *marker = NULL;

	assert_int_equal(ward_fs_write(&d, base, "c.txt", "c", 1, NULL),
			 WARD_EDENIED);
	assert_int_equal(ward_fs_render_denial(&marker, &d, true), 0);
	assert_string_equal(
	    marker, "[sandbox: file access denied under read-only mode]\n"
		    "retry this exact operation once with sandbox_permissions "
		    "(the narrowest wider mode that suffices) + "
		    "justification; the approval prompt asks the user");
	free(marker);
	e.subject = WARD_SUBJECT_OPERATION;
	e.summary = "write c.txt";
	e.requested = WW;
	e.justification = "write c";
	e.approve = fake_approve;
	e.approve_ctx = fx;
	e.session = fx->session;
	e.call_id = "c2";
	fx->answer = WARD_APPROVAL_REJECTED;
	assert_int_equal(ward_escalation_authorize(&granted, &v, base, &e), 0);
	assert_int_equal(v, WARD_ESCALATION_REJECTED);
	assert_null(granted);
	assert_string_equal(last_field(fx, "escalation/verdict", "text"),
			    "the user rejected escalating this operation to "
			    "\"workspace-write\"");
	assert_false(exists(path_in(fx, "c.txt")));
	ward_policy_free(base);
}

/* read-only → workspace-write through a real runner. */
static void test_real_runner(void **state)
{
	struct fx *fx = *state;
	static const struct outcome_case yes = {"real-yes",
						RO,
						WW,
						ASK,
						true,
						WARD_APPROVAL_ALLOWED_ONCE,
						WARD_ESCALATION_GRANTED,
						true};
	static const struct outcome_case no = {"real-no",
					       RO,
					       WW,
					       ASK,
					       true,
					       WARD_APPROVAL_REJECTED,
					       WARD_ESCALATION_REJECTED,
					       true};
	ward_provider *provider = NULL;
	enum ward_enforcement enf;
	enum ward_runner runner;
	int err;

	assert_int_equal(ward_provider_new(&provider, NULL), 0);
	err = ward_provider_select(provider, &runner, &enf);
	ward_provider_free(provider);
	if (err) {
		print_message("SKIP: no runner can confine here: %s\n",
			      ward_error_last());
		skip();
	}
	run_case(fx, &yes);
	run_case(fx, &no);
}

/* --- what the person is shown ------------------------------------------ */

/* Every class of invisible or line-breaking text becomes visible. */
static void test_escape(void **state)
{
	static const struct {
		const char *in, *out;
	} v[] = {
	    {"plain ascii and \"quotes\"", "plain ascii and \"quotes\""},
	    /* A typed "\x0a" must not read as an escaped newline. */
	    {"typed \\x0a, real \n", "typed \\\\x0a, real \\x0a"},
	    {"a\nb\tc\x1b[2J\x7f", "a\\x0ab\\x09c\\x1b[2J\\x7f"},
	    {"caf\xc3\xa9 \xe2\x86\x92 \xe4\xb8\xad", /* é → 中: kept */
	     "caf\xc3\xa9 \xe2\x86\x92 \xe4\xb8\xad"},
	    {"\xc2\x85next line (C1)", "\\u0085next line (C1)"},
	    {"line\xe2\x80\xa8sep para\xe2\x80\xa9sep",
	     "line\\u2028sep para\\u2029sep"},
	    {"zero\xe2\x80\x8bwidth\xe2\x80\x8cjoin\xe2\x80\x8djoin",
	     "zero\\u200bwidth\\u200cjoin\\u200djoin"},
	    {"\xe2\x80\xae"
	     "evil.exe\xe2\x80\xac \xe2\x81\xa6iso\xe2\x81\xa9",
	     "\\u202eevil.exe\\u202c \\u2066iso\\u2069"},
	    {"\xe2\x80\x8erlm\xe2\x80\x8f \xd8\x9c",
	     "\\u200erlm\\u200f \\u061c"},
	    {"bom\xef\xbb\xbf shy\xc2\xad wj\xe2\x81\xa0",
	     "bom\\ufeff shy\\u00ad wj\\u2060"},
	    /* Tag characters spell hidden ASCII ("ok" + cancel tag). */
	    {"\xf3\xa0\x81\xaf\xf3\xa0\x81\xab\xf3\xa0\x81\xbf",
	     "\\U000e006f\\U000e006b\\U000e007f"},
	    {"nb\xc2\xa0sp ideo\xe3\x80\x80sp", "nb\\u00a0sp ideo\\u3000sp"},
	    {"vs\xef\xb8\x8f pua\xee\x80\x80", "vs\\ufe0f pua\\ue000"},
	    {"bad \xff \xc0\xaf \xed\xa0\x80 \xe2\x82", /* invalid UTF-8 */
	     "bad \\xff \\xc0\\xaf \\xed\\xa0\\x80 \\xe2\\x82"},
	};
	char *out = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(ward_escalation_escape(&out, v[i].in), 0);
		assert_string_equal(out, v[i].out);
		ward_free(out);
	}
	assert_int_equal(ward_escalation_escape(&out, NULL), 0);
	assert_string_equal(out, "");
	ward_free(out);
}

/* A configuration of @ws in read-only mode, no files read. */
static ward_config *config_for(const char *ws)
{
	struct ward_config_options o = WARD_CONFIG_OPTIONS_INIT;
	ward_config *cfg = NULL;

	o.user_file = "";
	o.no_project_file = true;
	o.workspace = ws;
	o.mode = "read-only";
	assert_int_equal(ward_config_new(&cfg), 0);
	assert_int_equal(ward_config_load(cfg, &o), 0);
	return cfg;
}

/* The approval service that swaps the symlink while the question is
 * open, then allows. */
static enum ward_approval_outcome
swap_approve(void *ctx, const struct ward_approval_request *req)
{
	struct fx *fx = ctx;

	fake_approve(ctx, req);
	assert_int_equal(unlink(path_in(fx, "notes.txt")), 0);
	assert_int_equal(
	    symlink(path_in(fx, "other"), path_in(fx, "notes.txt")), 0);
	return WARD_APPROVAL_ALLOWED_ONCE;
}

/*
 * A file operation's approval shows where it will act: a write to
 * notes.txt that is a symlink to a file outside the workspace shows that
 * file; the grant acts on what was shown, never where a path resolves
 * to by then.
 */
static void test_summary_resolves(void **state)
{
	struct fx *fx = *state;
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	char outside[PATH_MAX + 16], want[2 * PATH_MAX];
	char *paths[] = {"notes.txt", "plain.txt", NULL};
	const ward_policy *granted = NULL;
	ward_config *cfg = config_for(fx->ws);
	ward_call *call = NULL;

	snprintf(outside, sizeof(outside), "%s/outside-x", fx->base);
	assert_int_equal(symlink(outside, path_in(fx, "notes.txt")), 0);
	co.config = cfg;
	co.subject = WARD_SUBJECT_OPERATION;
	co.tool = "write_file";
	co.operation = "write";
	co.paths = paths;
	co.escalate = true;
	co.escalate_to = WARD_MODE_WORKSPACE_WRITE;
	co.justification = "j";
	co.approve = fake_approve;
	co.approve_ctx = fx;
	fx->answer = WARD_APPROVAL_REJECTED;
	assert_int_equal(ward_call_new(&call, &co), 0);
	assert_int_equal(ward_call_fs_begin(call, &granted), WARD_EREFUSED);
	snprintf(want, sizeof(want),
		 "write notes.txt (-> %s) plain.txt (-> %s)", outside,
		 path_in(fx, "plain.txt"));
	assert_string_equal(fx->seen_summary, want);
	ward_call_free(call);

	/* A caller's own summary gets the resolved paths appended. */
	co.summary = "edit the notes";
	fx->asked = 0;
	assert_int_equal(ward_call_new(&call, &co), 0);
	assert_int_equal(ward_call_fs_begin(call, &granted), WARD_EREFUSED);
	assert_int_equal(fx->asked, 1);
	assert_non_null(strstr(fx->seen_summary, "edit the notes [resolves: "));
	assert_non_null(strstr(fx->seen_summary, outside));
	ward_call_free(call);

	/* Swapped while the question was open: the grant is for what was
	 * shown, so the write through the new link is refused and nothing
	 * is done there; the other approved target is still writable. */
	co.summary = NULL;
	co.approve = swap_approve;
	assert_int_equal(ward_call_new(&call, &co), 0);
	assert_int_equal(ward_call_fs_begin(call, &granted), 0);
	assert_int_equal(
	    ward_fs_write(NULL, granted, "notes.txt", "x", 1, NULL),
	    WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "approval showed"));
	assert_false(exists(path_in(fx, "other")));
	assert_int_equal(
	    ward_fs_check(NULL, granted, WARD_FS_OP_WRITE, "notes.txt"),
	    WARD_EINVAL);
	assert_int_equal(
	    ward_fs_write(NULL, granted, "plain.txt", "x", 1, NULL), 0);
	assert_int_equal(ward_call_fs_end(call, WARD_EINVAL, NULL), 0);
	ward_call_free(call);
	ward_config_free(cfg);
}

/*
 * The approval question: one text on every front end. The justification
 * is bounded (and says how much was cut), a backslash is escaped, and the
 * command comes right before the question, after what the grant covers.
 */
static void test_approval_text(void **state)
{
	static const enum ward_surface surfaces[] = {
	    WARD_SURFACE_CLI, WARD_SURFACE_MCP, WARD_SURFACE_API,
	    WARD_SURFACE_ACP};
	struct ward_approval_request req = {0};
	size_t jlen = 420 * 1000;
	char *just = malloc(jlen + 1), *text = NULL, note[64];

	(void)state;
	assert_non_null(just);
	memcpy(just, "typed \\x0a ", 11);
	memset(just + 11, 'j', jlen - 11);
	/* A multi-byte character across the cut is not split. */
	memcpy(just + WARD_APPROVAL_JUSTIFICATION_SHOWN - 1, "\xc3\xa9", 2);
	just[jlen] = '\0';
	req.subject = WARD_SUBJECT_COMMAND;
	req.summary = "bash -c 'make test'";
	req.cwd = "/ws";
	req.current = WARD_MODE_READ_ONLY;
	req.requested = WARD_MODE_DANGER_FULL_ACCESS;
	req.justification = just;
	req.session_id = "s1";
	snprintf(note, sizeof(note), "[… %zu more bytes not shown]",
		 jlen - (WARD_APPROVAL_JUSTIFICATION_SHOWN - 1));
	for (size_t i = 0; i < sizeof(surfaces) / sizeof(surfaces[0]); i++) {
		const char *cmd, *grant, *q;

		assert_int_equal(
		    ward_escalation_question(&text, &req, surfaces[i]), 0);
		assert_true(strlen(text) <
			    2 * WARD_APPROVAL_JUSTIFICATION_SHOWN);
		assert_non_null(strstr(text, "typed \\\\x0a "));
		assert_null(strstr(text, "\xc3"));
		assert_non_null(strstr(text, note));
		grant = strstr(text, "this call only; every process it starts "
				     "ends with it");
		cmd = strstr(text, "bash -c 'make test'\nAllow this command to "
				   "run once under danger-full-access?");
		q = strstr(text, "Allow this");
		assert_non_null(grant);
		assert_non_null(cmd);
		/* The grant, then the command, then the question, last. */
		assert_true(grant < cmd && cmd < q);
		assert_null(strchr(q, '\n'));
		assert_true(strstr(text, note) < grant);
		ward_free(text);
	}
	assert_int_equal(
	    ward_escalation_question(&text, &req, WARD_SURFACE_CLI), 0);
	assert_non_null(strstr(text, "\n  command         bash -c 'make test'\n"
				     "Allow this command to run once under "
				     "danger-full-access? [y/N] "));
	ward_free(text);
	/* A file operation: the grant is for the targets shown. */
	req.subject = WARD_SUBJECT_OPERATION;
	req.summary = "write notes.txt (-> /ws/notes.txt)";
	req.justification = "short";
	assert_int_equal(
	    ward_escalation_question(&text, &req, WARD_SURFACE_MCP), 0);
	assert_non_null(strstr(text, "\njustification: short\n"));
	assert_non_null(strstr(
	    text, "\ngrant: this call only, on the targets shown below and "
		  "nothing else\noperation: write notes.txt (-> "
		  "/ws/notes.txt)\nAllow this operation to run once under "
		  "danger-full-access? Accept with \"allow\" checked to allow "
		  "it; decline to refuse."));
	assert_null(strstr(text, "not shown"));
	ward_free(text);
	free(just);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ladder),
	    cmocka_unit_test(test_offered),
	    cmocka_unit_test(test_names),
	    T(test_allowed_once_runs),
	    T(test_rejected_runs_nothing),
	    T(test_cancelled_runs_nothing),
	    T(test_unavailable_runs_nothing),
	    T(test_no_service_asks_nobody),
	    T(test_policy_never_asks_nobody),
	    T(test_not_wider_asks_nobody),
	    T(test_request_shown),
	    T(test_invalid_requests),
	    T(test_without_session),
	    T(test_grant_never_leaks),
	    T(test_fs_operation_rejected),
	    T(test_real_runner),
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_approval_text),
	    T(test_summary_resolves),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
