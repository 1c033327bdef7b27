/*
 * Unit tests for the call object (include/ward/call.h): the per-call
 * pipeline every front end goes through — resolution (session knob >
 * configured default; the session's cwd is the workspace; an escalation
 * for that call only), recording (call/start before anything runs, one
 * call/result after; a call that cannot be recorded does not run), the
 * escalation's verdicts, a call that cannot be confined, the working
 * directory, file operations and tasks. Commands really run (the kernel
 * says no): a test that needs a runner SKIPs, with the reason, where none
 * can confine.
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

#define RO WARD_MODE_READ_ONLY
#define WW WARD_MODE_WORKSPACE_WRITE
#define DF WARD_MODE_DANGER_FULL_ACCESS

struct fx {
	char base[256];
	char store[300];
	char ws[PATH_MAX];
	char ws2[PATH_MAX];
	ward_session *session;
	ward_provider *provider;
	ward_config *config;
	/* The fake approval service. */
	enum ward_approval_outcome answer;
	int asked;
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
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	struct fx *fx = calloc(1, sizeof(*fx));
	char ws[300], launcher[PATH_MAX];

	if (!fx)
		return -1;
	snprintf(fx->base, sizeof(fx->base), "/var/tmp/ward-test-call.XXXXXX");
	if (!mkdtemp(fx->base))
		return -1;
	snprintf(fx->store, sizeof(fx->store), "%s/store", fx->base);
	snprintf(ws, sizeof(ws), "%s/ws", fx->base);
	if (mkdir(ws, 0755) || !realpath(ws, fx->ws))
		return -1;
	snprintf(ws, sizeof(ws), "%s/ws2", fx->base);
	if (mkdir(ws, 0755) || !realpath(ws, fx->ws2))
		return -1;
	unsetenv("TMPDIR");
	if (ward_session_create(&fx->session, fx->store, fx->ws) != 0)
		return -1;
	if (fixture_launcher(launcher))
		po.launcher_path = launcher;
	if (ward_provider_new(&fx->provider, &po) != 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	ward_config_free(fx->config);
	ward_provider_free(fx->provider);
	ward_session_free(fx->session);
	nftw(fx->base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* A configuration whose user layer is @yaml, for workspace @ws. */
static ward_config *config(struct fx *fx, const char *yaml, const char *ws)
{
	struct ward_config_options o = WARD_CONFIG_OPTIONS_INIT;
	ward_config *cfg = NULL;

	o.user_file = "";
	o.no_project_file = true;
	o.workspace = ws;
	assert_int_equal(ward_config_new(&cfg), 0);
	if (*yaml)
		assert_int_equal(
		    ward_config_add_string(cfg, WARD_CONFIG_LAYER_USER,
					   "test.yml", yaml, strlen(yaml)),
		    0);
	assert_int_equal(ward_config_resolve(cfg, &o), 0);
	ward_config_free(fx->config);
	fx->config = cfg;
	return cfg;
}

static enum ward_approval_outcome
fake_approve(void *ctx, const struct ward_approval_request *req)
{
	struct fx *fx = ctx;

	(void)req;
	fx->asked++;
	return fx->answer;
}

static void require_runner(struct fx *fx)
{
	enum ward_enforcement enf;
	enum ward_runner runner;

	if (ward_provider_select(fx->provider, &runner, &enf) != 0) {
		print_message("SKIP: no runner can confine here: %s\n",
			      ward_error_last());
		skip();
	}
}

/* Call options for @argv in the fixture's session. */
static struct ward_call_options command(struct fx *fx, char **argv)
{
	struct ward_call_options o;

	assert_int_equal(ward_call_options_init(&o, WARD_CALL_OPTIONS_VERSION),
			 0);
	o.config = fx->config;
	o.provider = fx->provider;
	o.session = fx->session;
	o.argv = argv;
	return o;
}

/* Call options for `touch WS/@name` in the fixture's session. */
static struct ward_call_options touch(struct fx *fx, const char *name,
				      char **argv, char *file, size_t len)
{
	assert_true((size_t)snprintf(file, len, "%.*s/%s", PATH_MAX - 64,
				     fx->ws, name) < len);
	argv[0] = "touch";
	argv[1] = file;
	argv[2] = NULL;
	return command(fx, argv);
}

/* @o asks for @to, and the fake service allows it once. */
static void allowed_once(struct ward_call_options *o, struct fx *fx,
			 enum ward_mode to, const char *justification)
{
	o->escalate = true;
	o->escalate_to = to;
	o->justification = justification;
	o->approve = fake_approve;
	o->approve_ctx = fx;
	fx->answer = WARD_APPROVAL_ALLOWED_ONCE;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The types of the events of call @id, in order, joined by spaces. */
static const char *story(struct fx *fx, const char *id)
{
	static char buf[1024];
	size_t n;

	assert_int_equal(ward_session_reload(fx->session), 0);
	buf[0] = '\0';
	n = ward_session_event_count(fx->session);
	for (size_t i = 0; i < n; i++) {
		json_t *ev =
		    json_loads(ward_session_event(fx->session, i), 0, NULL);
		const char *c = json_string_value(json_object_get(ev, "call"));

		if (c && !strcmp(c, id)) {
			if (buf[0])
				strcat(buf, " ");
			strcat(buf, ward_session_event_type(fx->session, i));
		}
		json_decref(ev);
	}
	return buf;
}

/* Member @key of call @id's last event of @type ("" when not a string). */
static const char *field(struct fx *fx, const char *id, const char *type,
			 const char *key)
{
	static char buf[1024];
	size_t n;

	assert_int_equal(ward_session_reload(fx->session), 0);
	buf[0] = '\0';
	n = ward_session_event_count(fx->session);
	for (size_t i = 0; i < n; i++) {
		json_t *ev =
		    json_loads(ward_session_event(fx->session, i), 0, NULL);
		const char *c = json_string_value(json_object_get(ev, "call"));
		json_t *v = json_object_get(ev, key);

		if (c && !strcmp(c, id) &&
		    !strcmp(ward_session_event_type(fx->session, i), type))
			snprintf(buf, sizeof(buf), "%s",
				 json_is_string(v) ? json_string_value(v)
				 : json_is_boolean(v)
				     ? (json_is_true(v) ? "true" : "false")
				     : "");
		json_decref(ev);
	}
	return buf;
}

/* --- resolution ---------------------------------------------------------- */

/*
 * The mode: the session's knob beats ward.yml's default; an approved
 * escalation beats both for its call only; the next call is back to the
 * session's. The workspace is the session's cwd.
 */
static void t_precedence(void **state)
{
	struct fx *fx = *state;
	struct ward_session_defaults d = WARD_SESSION_DEFAULTS_INIT;
	char *argv[3], file[PATH_MAX];
	struct ward_call_options o;
	ward_call *c = NULL;

	config(fx, "mode: workspace-write\n", fx->ws);
	o = touch(fx, "a", argv, file, sizeof(file));
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_mode(c), WW);
	assert_int_equal(ward_call_mode_source(c), WARD_KNOB_DEFAULT);
	assert_string_equal(ward_policy_workspace(ward_call_policy(c)), fx->ws);
	assert_string_equal(ward_policy_session(ward_call_policy(c)),
			    ward_session_id(fx->session));
	ward_call_free(c);

	d.mode = WW;
	assert_int_equal(ward_session_set_mode(NULL, fx->session, RO, &d), 0);
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_mode(c), RO);
	assert_int_equal(ward_call_mode_source(c), WARD_KNOB_SESSION);
	ward_call_free(c);

	/* The grant: this call only, never written as a knob. */
	allowed_once(&o, fx, DF, "needs it");
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_begin(c), 0);
	assert_int_equal(ward_call_mode(c), DF);
	assert_int_equal(ward_call_mode_source(c), WARD_KNOB_ESCALATION);
	assert_true(ward_call_escalated(c));
	assert_int_equal(ward_plan_runner(ward_call_plan(c)), WARD_RUNNER_NONE);
	ward_call_free(c);
	o.escalate = false;
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_mode(c), RO);
	ward_call_free(c);
	assert_int_equal(ward_session_reload(fx->session), 0);
	assert_int_equal(ward_session_mode(fx->session, WW, NULL), RO);
}

/*
 * Two sessions, each its own root and mode; a configuration loaded for
 * another workspace than the session's is refused (its project file and
 * rules would be the wrong ones).
 */
static void t_sessions_and_workspaces(void **state)
{
	struct fx *fx = *state;
	ward_session *other = NULL;
	char *argv[3], file[PATH_MAX];
	struct ward_call_options o;
	ward_call *c = NULL;

	assert_int_equal(ward_session_create(&other, fx->store, fx->ws2), 0);
	assert_int_equal(ward_session_set_mode(NULL, other, WW, NULL), 0);
	config(fx, "", fx->ws2);
	o = touch(fx, "a", argv, file, sizeof(file));
	o.session = other;
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_string_equal(ward_policy_workspace(ward_call_policy(c)),
			    fx->ws2);
	assert_int_equal(ward_call_mode(c), WW);
	ward_call_free(c);
	/* fx->session works in fx->ws; the config is for ws2. */
	o.session = fx->session;
	c = NULL;
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL);
	assert_null(c);
	assert_non_null(strstr(ward_error_last(), "loaded for"));
	ward_session_free(other);
}

/* A working directory outside the workspace is refused; inside, resolved. */
static void t_working_directory(void **state)
{
	struct fx *fx = *state;
	char *argv[3], file[PATH_MAX], sub[PATH_MAX + 8];
	struct ward_call_options o;
	ward_call *c = NULL;

	config(fx, "", fx->ws);
	snprintf(sub, sizeof(sub), "%s/sub", fx->ws);
	assert_int_equal(mkdir(sub, 0755), 0);
	o = touch(fx, "a", argv, file, sizeof(file));
	o.cwd = "sub";
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_string_equal(ward_call_cwd(c), sub);
	ward_call_free(c);
	o.cwd = fx->ws2;
	c = NULL;
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "outside the workspace"));
	o.cwd = "missing";
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL);
	assert_null(c);
}

/*
 * A session store inside a writable root (here /tmp, under
 * workspace-write) would let a command rewrite its own session: such a
 * call is refused before anything is planned or recorded; read-only is
 * fine.
 */
static void t_store_never_writable(void **state)
{
	struct fx *fx = *state;
	char tmpstore[128], cmd[200], *argv[3], file[PATH_MAX];
	struct ward_call_options o;
	ward_session *s = NULL;
	ward_call *c = NULL;

	snprintf(tmpstore, sizeof(tmpstore), "/tmp/ward-test-callstore.%d",
		 (int)getpid());
	assert_int_equal(ward_session_create(&s, tmpstore, fx->ws), 0);
	config(fx, "mode: workspace-write\n", fx->ws);
	o = touch(fx, "a", argv, file, sizeof(file));
	o.session = s;
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "writable root /tmp"));
	config(fx, "mode: read-only\n", fx->ws);
	o.config = fx->config;
	assert_int_equal(ward_call_new(&c, &o), 0);
	ward_call_free(c);
	ward_session_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpstore);
	assert_int_equal(system(cmd), 0);
}

/* --- recording ------------------------------------------------------------ */

/* call/start before it runs, call/result after, in the session's log. */
static void t_records_around_the_run(void **state)
{
	struct fx *fx = *state;
	char *argv[3], file[PATH_MAX];
	struct ward_call_options o;
	ward_result *r = NULL;
	ward_call *c = NULL;

	require_runner(fx);
	config(fx, "mode: workspace-write\n", fx->ws);
	o = touch(fx, "ran", argv, file, sizeof(file));
	assert_int_equal(ward_call_new(&c, &o), 0);
	/* Planned, not recorded: nothing yet. */
	assert_string_equal(story(fx, ward_call_id(c)), "");
	assert_int_equal(ward_call_exec(c, &r, NULL), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	assert_true(exists(file));
	assert_string_equal(story(fx, ward_call_id(c)),
			    "call/start call/result");
	assert_string_equal(field(fx, ward_call_id(c), "call/start", "tool"),
			    "run");
	assert_string_equal(field(fx, ward_call_id(c), "call/result", "ran"),
			    "true");
	ward_result_free(r);
	ward_call_free(c);
}

/* A call whose start cannot be recorded runs nothing. */
static void t_unrecorded_call_does_not_run(void **state)
{
	struct fx *fx = *state;
	char *argv[3], file[PATH_MAX], moved[PATH_MAX + 8];
	struct ward_call_options o;
	ward_result *r = NULL;
	ward_call *c = NULL;

	config(fx, "mode: workspace-write\n", fx->ws);
	o = touch(fx, "never", argv, file, sizeof(file));
	assert_int_equal(ward_call_new(&c, &o), 0);
	/* The log disappears between planning and running. */
	snprintf(moved, sizeof(moved), "%s.away",
		 ward_session_path(fx->session));
	assert_int_equal(rename(ward_session_path(fx->session), moved), 0);
	assert_true(ward_call_exec(c, &r, NULL) < 0);
	assert_null(r);
	assert_non_null(strstr(ward_error_last(), "nothing was run"));
	assert_false(exists(file));
	ward_call_free(c);
	assert_int_equal(rename(moved, ward_session_path(fx->session)), 0);
}

/* No runner can confine: recorded as not run, nothing ran unconfined. */
static void t_unconfinable_is_recorded(void **state)
{
	struct fx *fx = *state;
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	char *argv[3], file[PATH_MAX];
	struct ward_call_options o;
	ward_provider *none = NULL;
	ward_result *r = NULL;
	ward_call *c = NULL;
	char *text = NULL;

	po.platform = WARD_PLATFORM_OTHER; /* an empty chain */
	assert_int_equal(ward_provider_new(&none, &po), 0);
	config(fx, "mode: workspace-write\n", fx->ws);
	o = touch(fx, "unconfined", argv, file, sizeof(file));
	o.provider = none;
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_plan_error(c), WARD_EUNAVAILABLE);
	assert_null(ward_call_plan(c));
	assert_int_equal(ward_call_exec(c, &r, NULL), WARD_EUNAVAILABLE);
	assert_false(exists(file));
	assert_string_equal(story(fx, ward_call_id(c)),
			    "call/start call/result");
	assert_string_equal(field(fx, ward_call_id(c), "call/result", "error"),
			    "sandbox-unavailable");
	assert_int_equal(ward_call_render_not_run(&text, c), 0);
	assert_non_null(strstr(text, "unconfined"));
	ward_free(text);
	ward_call_free(c);
	ward_provider_free(none);
}

/* --- escalation ------------------------------------------------------------ */

struct esc_case {
	const char *name;
	const char *yaml; /* the configured mode and approval policy */
	enum ward_mode requested;
	bool service;
	enum ward_approval_outcome answer;
	enum ward_escalation_verdict want;
	bool want_asked;
};

/*
 * `touch` through a call that asks for @c->requested: the verdict, who was
 * asked, whether the file exists (it ran), and the story in the log.
 */
static void esc_case(struct fx *fx, const struct esc_case *c)
{
	char *argv[3], file[PATH_MAX], *text = NULL;
	struct ward_call_options o;
	ward_result *r = NULL;
	ward_call *call = NULL;
	int err;

	config(fx, c->yaml, fx->ws);
	o = touch(fx, c->name, argv, file, sizeof(file));
	o.escalate = true;
	o.escalate_to = c->requested;
	o.justification = "needs to create the file";
	o.approve = c->service ? fake_approve : NULL;
	o.approve_ctx = fx;
	fx->asked = 0;
	fx->answer = c->answer;
	assert_int_equal(ward_call_new(&call, &o), 0);
	err = ward_call_exec(call, &r, NULL);
	assert_int_equal(ward_call_verdict(call), c->want);
	assert_int_equal(fx->asked, c->want_asked ? 1 : 0);
	if (c->want == WARD_ESCALATION_GRANTED) {
		assert_int_equal(err, 0);
		assert_int_equal(ward_result_mode(r), c->requested);
		assert_true(exists(file));
		ward_result_free(r);
	} else {
		assert_int_equal(err, WARD_EREFUSED);
		assert_null(r);
		assert_false(exists(file));
		assert_int_equal(ward_call_render_refusal(&text, call), 0);
		assert_string_equal(
		    field(fx, ward_call_id(call), "escalation/verdict", "text"),
		    text);
		assert_string_equal(
		    field(fx, ward_call_id(call), "call/result", "ran"),
		    "false");
		ward_free(text);
	}
	assert_string_equal(
	    story(fx, ward_call_id(call)),
	    c->want_asked ? "call/start escalation/request approval/asked "
			    "approval/decision escalation/verdict call/result"
			  : "call/start escalation/request escalation/verdict "
			    "call/result");
	ward_call_free(call);
}

static void t_escalation_verdicts(void **state)
{
	struct fx *fx = *state;
	static const struct esc_case cases[] = {
	    {"granted", "mode: read-only\n", WW, true,
	     WARD_APPROVAL_ALLOWED_ONCE, WARD_ESCALATION_GRANTED, true},
	    {"rejected", "mode: read-only\n", WW, true, WARD_APPROVAL_REJECTED,
	     WARD_ESCALATION_REJECTED, true},
	    {"cancelled", "mode: read-only\n", WW, true,
	     WARD_APPROVAL_CANCELLED, WARD_ESCALATION_CANCELLED, true},
	    {"no-service", "mode: read-only\n", WW, false,
	     WARD_APPROVAL_ALLOWED_ONCE, WARD_ESCALATION_NO_SERVICE, false},
	    {"never", "mode: read-only\napproval: never\n", WW, true,
	     WARD_APPROVAL_ALLOWED_ONCE, WARD_ESCALATION_POLICY_NEVER, false},
	    {"not-wider", "mode: workspace-write\n", WW, true,
	     WARD_APPROVAL_ALLOWED_ONCE, WARD_ESCALATION_NOT_WIDER, false},
	};

	require_runner(fx);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		esc_case(fx, &cases[i]);
	/* The hint: offered before the retry, never after it. */
	{
		char *argv[3], file[PATH_MAX];
		struct ward_call_options o;
		ward_call *c = NULL;

		config(fx, "mode: read-only\n", fx->ws);
		o = touch(fx, "hint", argv, file, sizeof(file));
		assert_int_equal(ward_call_new(&c, &o), 0);
		assert_false(ward_call_hint_offered(c, RO)); /* no service */
		ward_call_free(c);
		o.approve = fake_approve;
		o.approve_ctx = fx;
		assert_int_equal(ward_call_new(&c, &o), 0);
		assert_true(ward_call_hint_offered(c, RO));
		assert_false(ward_call_hint_offered(c, DF));
		ward_call_free(c);
	}
}

/*
 * libward's own API, without any containment asked for: a call granted
 * danger-full-access ends with every process it started — a background
 * job, a double fork, a setsid'd daemon — run by ward_call_exec or as a
 * task. Each would touch a marker in the workspace a second later.
 */
static void t_escalated_call_contained(void **state)
{
	struct fx *fx = *state;
	char script[4 * PATH_MAX], marker[PATH_MAX + 16], *argv[4];
	struct ward_call_options o;
	ward_result *r = NULL;
	ward_call *c = NULL;

	config(fx, "mode: workspace-write\n", fx->ws);
	snprintf(script, sizeof(script),
		 "(sleep 1; touch %s/m.bg) & "
		 "(sh -c 'sleep 1; touch %s/m.fork' &); "
		 "setsid -f sh -c 'sleep 1; touch %s/m.setsid'",
		 fx->ws, fx->ws, fx->ws);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	for (int task = 0; task < 2; task++) {
		o = command(fx, argv);
		allowed_once(&o, fx, DF, "start the services");
		assert_int_equal(ward_call_new(&c, &o), 0);
		if (task) {
			assert_int_equal(ward_call_start(c, NULL), 0);
			assert_int_equal(ward_call_wait(c, &r, 10000), 0);
		} else {
			assert_int_equal(ward_call_exec(c, &r, NULL), 0);
		}
		assert_int_equal(ward_result_exit_code(r), 0);
		assert_int_equal(ward_result_runner(r), WARD_RUNNER_NONE);
		ward_result_free(r);
		ward_call_free(c);
	}
	sleep(2); /* every escape would have touched its marker by now */
	for (size_t i = 0; i < 3; i++) {
		const char *m[] = {"bg", "fork", "setsid"};

		snprintf(marker, sizeof(marker), "%s/m.%s", fx->ws, m[i]);
		if (exists(marker))
			fail_msg("m.%s: a process of the approved call "
				 "outlived it",
				 m[i]);
	}
}

/* --- file operations and tasks ------------------------------------------- */

static void t_file_operation(void **state)
{
	struct fx *fx = *state;
	struct ward_call_options o;
	struct ward_fs_denial d;
	const ward_policy *p = NULL;
	char *paths[] = {"f.txt", NULL};
	ward_call *c = NULL;
	int err;

	config(fx, "mode: read-only\n", fx->ws);
	assert_int_equal(ward_call_options_init(&o, WARD_CALL_OPTIONS_VERSION),
			 0);
	o.config = fx->config;
	o.session = fx->session;
	o.subject = WARD_SUBJECT_OPERATION;
	o.operation = "write";
	o.paths = paths;
	/* No provider: a file operation has no runner. */
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_fs_begin(c, &p), 0);
	err = ward_fs_write(&d, p, "f.txt", "x", 1, NULL);
	assert_int_equal(err, WARD_EDENIED);
	assert_int_equal(ward_call_fs_end(c, err, &d), 0);
	assert_string_equal(story(fx, ward_call_id(c)),
			    "call/start call/result");
	assert_string_equal(
	    field(fx, ward_call_id(c), "call/start", "operation"), "write");
	assert_string_equal(field(fx, ward_call_id(c), "call/result", "runner"),
			    "fsfence");
	assert_string_equal(field(fx, ward_call_id(c), "call/result", "denied"),
			    "true");
	ward_call_free(c);
}

static void t_task_recorded_once(void **state)
{
	struct fx *fx = *state;
	char *argv[] = {"sh", "-c", "echo hi", NULL};
	struct ward_call_options o;
	ward_result *r = NULL;
	ward_call *c = NULL;

	require_runner(fx);
	config(fx, "", fx->ws);
	assert_int_equal(ward_call_options_init(&o, WARD_CALL_OPTIONS_VERSION),
			 0);
	o.config = fx->config;
	o.provider = fx->provider;
	o.session = fx->session;
	o.argv = argv;
	o.tool = "bash";
	assert_int_equal(ward_call_new(&c, &o), 0);
	assert_int_equal(ward_call_start(c, NULL), 0);
	assert_non_null(ward_call_task(c));
	assert_int_equal(ward_call_wait(c, &r, 0), 0);
	assert_int_equal(ward_result_exit_code(r), 0);
	ward_result_free(r);
	r = NULL;
	assert_int_equal(ward_call_wait(c, &r, 0), 0);
	ward_result_free(r);
	assert_string_equal(story(fx, ward_call_id(c)),
			    "call/start call/result");
	ward_call_free(c);
}

/* Options: versions and required fields are checked. */
static void t_options(void **state)
{
	struct fx *fx = *state;
	struct ward_call_options o;
	ward_call *c = NULL;

	assert_int_equal(ward_call_options_init(&o, 99), WARD_EINVAL);
	assert_int_equal(ward_call_options_init(&o, WARD_CALL_OPTIONS_VERSION),
			 0);
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL); /* no config */
	config(fx, "", fx->ws);
	o.config = fx->config;
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL); /* no command */
	o.version = 7;
	assert_int_equal(ward_call_new(&c, &o), WARD_EINVAL);
	assert_non_null(strstr(ward_error_last(), "version"));
	assert_null(c);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(t_precedence),
	    T(t_sessions_and_workspaces),
	    T(t_working_directory),
	    T(t_store_never_writable),
	    T(t_records_around_the_run),
	    T(t_unrecorded_call_does_not_run),
	    T(t_unconfinable_is_recorded),
	    T(t_escalation_verdicts),
	    T(t_escalated_call_contained),
	    T(t_file_operation),
	    T(t_task_recorded_once),
	    T(t_options),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
