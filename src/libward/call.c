/*
 * ward — one call: resolve, plan, record, authorize, run, record (call.h).
 *
 * This is the only place the per-call pipeline lives; the CLI and the MCP
 * server are adapters around it. The order of the steps is the contract:
 * nothing runs before `call/start` is in the session's log, nothing runs
 * under a granted mode before the grant is recorded and the granted policy
 * checked and planned, and every call that began ends with one
 * `call/result` — ran or not.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "internal.h"
#include "libward/net/netproxy.h"
#include "libward/policy/facts.h"
#include "libward/policy/protect.h"
#include "libward/run/audit.h"
#include "libward/run/denial.h"
#include "libward/run/exec_internal.h"
#include "libward/runners/runners.h"
#include "util/util.h"

struct ward_call {
	/* The options, copied. */
	const ward_config *config;
	ward_provider *provider;
	ward_session *session;
	enum ward_subject subject;
	enum ward_surface surface;
	char *tool;
	char **argv;
	char *operation;
	char **paths;
	char *summary;
	/* A file operation: what each path resolved to when the summary was
	 * made ("" when it could not be resolved): after a grant, the only
	 * objects the operation may act on (ward_policy_set_objects). */
	char **targets;
	bool escalate;
	enum ward_mode escalate_to;
	bool escalate_network;
	char *network_host;
	char *justification;
	ward_approval_fn approve;
	void *approve_ctx;
	/* The network proxy: the caller's (borrowed) or the call's own
	 * (@own_proxy, made when an allowlist needs one). */
	ward_netproxy *netproxy;
	bool own_proxy;
	/* The call's endpoint and its connections; @net_done: closed and
	 * recorded. */
	struct ward_netlog net;
	bool net_open, net_done;
	/* The command failed because its network was off (exec.c). */
	bool net_off_denied;

	/* Resolved by ward_call_new. */
	char id[16];
	ward_policy *base;   /* the session's (or configuration's) policy */
	ward_policy *policy; /* in force: @base, or the granted one */
	enum ward_knob_source source;
	enum ward_knob_source net_source;
	enum ward_approval_policy approval;
	char *cwd;
	/* What @policy means here now (facts.h), computed once for a
	 * command: the session check and the plan read the same. NULL for a
	 * file operation (the fence computes its own) or when they could not
	 * be made (the plan then fails with the reason). */
	struct ward_facts *facts;
	ward_plan *plan; /* NULL when @plan_err */
	int plan_err;
	char *plan_detail;

	/* Progress. */
	bool begun;
	int begin_err;
	enum ward_escalation_verdict verdict;
	bool escalated;
	bool recorded; /* call/result is in the log */
	ward_task *task;
	/* enum ward_call_stop; set by ward_call_stop from any thread. */
	atomic_int stop;
	/* The denial report, gathered when the call ended. */
	struct ward_denial_set denials;
	bool denied;
	bool gathered;
	/* The kernel's Landlock records of the run, when ward may read
	 * them (audit.h); NULL otherwise. */
	struct ward_audit *audit;
	/* The command's environment, scrubbed of secrets (env.h), and the
	 * names dropped from it; NULL until the command is prepared. */
	char **env;
	char **env_dropped;
};

static char *const empty_strv[] = {NULL};

/* --- small helpers ------------------------------------------------------ */

static int dup_str(char **slot, const char *s)
{
	*slot = NULL;
	if (!s)
		return 0;
	*slot = strdup(s);
	return *slot ? 0 : ward_err(-ENOMEM, "out of memory");
}

static int dup_strv(char ***slot, char *const *v)
{
	*slot = NULL;
	if (!v)
		return 0;
	*slot = ward_strv_dup(v);
	return *slot ? 0 : ward_err(-ENOMEM, "out of memory");
}

static bool blank(const char *s)
{
	while (s && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return !s || !*s;
}

/*
 * The last error's detail survives what we do next (recording overwrites
 * the thread's detail): save it, act, then set it again.
 */
struct saved_error {
	int err;
	char text[1024];
};

static void save_error(struct saved_error *s, int err)
{
	s->err = err;
	snprintf(s->text, sizeof(s->text), "%s", ward_error_last());
}

static int restore_error(const struct saved_error *s)
{
	return ward_err(s->err, "%s", s->text);
}

/* Append @s to @m quoted for a POSIX shell (as is when plainly safe). */
static void put_quoted(FILE *m, const char *s)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_@%+=:,./-";

	if (*s && strspn(s, safe) == strlen(s)) {
		fputs(s, m);
		return;
	}
	fputc('\'', m);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", m);
		else
			fputc(*s, m);
	}
	fputc('\'', m);
}

/*
 * What each path of a file operation resolves to, the way the fence will
 * resolve it for that operation (ward_fs_resolve): "" when it cannot be
 * resolved (the operation will fail the same way). NULL on ENOMEM.
 */
static char **resolve_targets(const ward_call *c)
{
	struct ward_strv sv = {0};
	enum ward_fs_op op = WARD_FS_OP_WRITE;
	bool known = ward_fs_op_parse(&op, c->operation) == 0;
	char **out = NULL;

	for (size_t i = 0; c->paths && c->paths[i]; i++) {
		char *t = NULL;

		if (known && ward_fs_resolve(&t, c->base, op, c->paths[i]) == 0)
			ward_strv_push(&sv, t);
		else
			ward_strv_push(&sv, "");
		free(t);
	}
	ward_err_clear();
	if (ward_strv_finish(&out, &sv) != 0)
		return NULL;
	return out;
}

/* " (-> TARGET)" for path @i, or " (-> cannot be resolved)". */
static void put_target(FILE *m, const ward_call *c, size_t i)
{
	const char *t = c->targets ? c->targets[i] : NULL;

	fputs(" (-> ", m);
	fputs(t && *t ? t : "cannot be resolved", m);
	fputc(')', m);
}

/*
 * What an approval prompt shows: the command shell-quoted, or the
 * operation and its paths, each with what it resolves to, so a write to
 * `notes.txt` that is a symlink to /etc/x shows /etc/x. A caller's own
 * summary of an operation gets the resolved paths appended. Raw text: the
 * prompts escape it (ward_escalation_escape).
 */
static int make_summary(ward_call *c, const char *given)
{
	char *buf = NULL;
	size_t len = 0;
	char *const *v =
	    c->subject == WARD_SUBJECT_COMMAND ? c->argv : c->paths;
	bool op = c->subject == WARD_SUBJECT_OPERATION, first = true;
	FILE *m;

	if (op) {
		c->targets = resolve_targets(c);
		if (!c->targets)
			return ward_err(-ENOMEM, "out of memory");
	}
	m = open_memstream(&buf, &len);
	if (!m)
		return ward_err(-ENOMEM, "out of memory");
	if (given) {
		fputs(given, m);
		for (size_t i = 0; op && v && v[i]; i++) {
			fputs(i ? ", " : " [resolves: ", m);
			put_quoted(m, v[i]);
			put_target(m, c, i);
		}
		if (op && v && v[0])
			fputc(']', m);
	} else {
		if (op && c->operation) {
			fputs(c->operation, m);
			first = false;
		}
		for (size_t i = 0; v && v[i]; i++) {
			if (!first)
				fputc(' ', m);
			put_quoted(m, v[i]);
			if (op)
				put_target(m, c, i);
			first = false;
		}
	}
	if (fclose(m) != 0 || !buf) {
		free(buf);
		return ward_err(-ENOMEM, "out of memory");
	}
	c->summary = buf;
	return 0;
}

/*
 * The working directory of the call: @given (absolute, or relative to the
 * workspace) made canonical; it must be a directory inside the workspace.
 */
static int resolve_cwd(char **out, const char *ws, const char *given)
{
	char *joined = NULL, *real;
	struct stat st;
	int err;

	if (!given || !*given)
		return dup_str(out, ws);
	if (given[0] == '/')
		joined = strdup(given);
	else if (asprintf(&joined, "%s/%s", ws, given) < 0)
		joined = NULL;
	if (!joined)
		return ward_err(-ENOMEM, "out of memory");
	real = realpath(joined, NULL);
	free(joined);
	if (!real) {
		err = errno;
		return ward_err(WARD_EINVAL, "working directory %s: %s", given,
				strerror(err));
	}
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		return ward_err(WARD_EINVAL,
				"working directory %s is not a directory",
				given);
	}
	if (!util_path_within(real, ws)) {
		free(real);
		return ward_err(WARD_EINVAL,
				"working directory %s is outside the workspace "
				"%s; give a directory inside it",
				given, ws);
	}
	*out = real;
	return 0;
}

/* --- resolution ----------------------------------------------------------- */

/*
 * The call's network: the session's `sandbox/network` (off or on), else
 * the configuration's for the call's mode (an allowlist, or the mode's
 * default when nothing sets it, which then follows an escalated mode).
 */
static int resolve_network(ward_call *c, enum ward_mode mode)
{
	const ward_config *cfg = c->config;
	enum ward_network net = ward_config_network(cfg, mode, NULL, NULL);
	enum ward_knob_source src = WARD_KNOB_DEFAULT;

	if (c->session)
		net = ward_session_network(c->session, net, &src);
	c->net_source = src;
	if (src == WARD_KNOB_DEFAULT)
		return 0; /* the configuration's, set with the policy */
	return ward_policy_set_network(c->base, net,
				       ward_config_allow_domains(cfg),
				       ward_config_deny_domains(cfg));
}

/* The session refuses a policy under which a command could rewrite it. */
static int check_session(const ward_call *c, const ward_policy *policy,
			 const struct ward_facts *f)
{
	return f ? ward_session_check_facts(c->session, policy, f)
		 : ward_session_check_policy(c->session, policy);
}

/*
 * Step 1: the call's policy. The mode is the session's (its knobs read up
 * to now) or the configuration's; the workspace the session's cwd or the
 * configured one; rules and git protection the configuration's.
 */
static int resolve_policy(ward_call *c)
{
	const ward_config *cfg = c->config;
	const char *ws = ward_config_workspace(cfg, NULL);
	enum ward_mode mode = ward_config_mode(cfg, NULL);
	int err;

	c->source = WARD_KNOB_DEFAULT;
	c->approval = ward_config_approval(cfg, NULL);
	if (c->session) {
		const char *scwd;

		err = ward_session_refresh(c->session);
		if (err)
			return err;
		scwd = ward_session_cwd(c->session);
		/* The project file of the session's workspace is the one
		 * that applies: a configuration loaded for another
		 * workspace would apply the wrong rules. */
		if (scwd && (!ws || strcmp(scwd, ws) != 0))
			return ward_err(WARD_EINVAL,
					"session %s works in %s, but the "
					"configuration was loaded for %s",
					ward_session_id(c->session), scwd,
					ws ? ws : "no workspace");
		mode = ward_session_mode(c->session, mode, &c->source);
		c->approval =
		    ward_session_approval(c->session, c->approval, NULL);
	}
	err = ward_config_policy_new(&c->base, cfg, mode);
	if (!err)
		err = resolve_network(c, mode);
	if (!err && c->session)
		err = ward_policy_set_session(c->base,
					      ward_session_id(c->session));
	/* The session's store is hidden from the call's confined run. */
	if (!err && c->session)
		err = ward_policy_set_store(c->base,
					    ward_session_store(c->session));
	/* Refused before anything is planned or recorded: under this
	 * policy a command could rewrite its own session, or every file of
	 * the user (a workspace that holds the home directory). */
	if (!err && c->subject == WARD_SUBJECT_COMMAND &&
	    ward_facts_new(&c->facts, c->base, WARD_FACTS_LISTINGS) != 0)
		c->facts = NULL;
	if (!err && c->session)
		err = check_session(c, c->base, c->facts);
	if (!err)
		err = ward_policy_check_workspace(c->base);
	if (err)
		return err;
	c->policy = c->base;
	return 0;
}

/*
 * Step 2 (again after a grant): plan the policy in force. A file operation
 * has no runner: the fence applies the policy itself.
 */
static void plan_call(ward_call *c)
{
	if (c->subject != WARD_SUBJECT_COMMAND)
		return;
	ward_plan_free(c->plan);
	c->plan = NULL;
	free(c->plan_detail);
	c->plan_detail = NULL;
	c->plan_err = c->facts ? ward_plan_new_facts(&c->plan, c->provider,
						     c->policy, c->facts)
			       : ward_plan_new(&c->plan, c->provider, c->policy);
	if (c->plan_err)
		c->plan_detail = strdup(ward_error_last());
}

static int copy_options(ward_call *c, const struct ward_call_options *o)
{
	int err;

	c->config = o->config;
	c->provider = o->provider;
	c->session = o->session;
	c->subject = o->subject;
	c->surface = o->surface;
	c->escalate = o->escalate;
	c->escalate_to = o->escalate_to;
	c->approve = o->approve;
	c->approve_ctx = o->approve_ctx;
	c->netproxy = o->version >= 2 ? o->netproxy : NULL;
	c->escalate_network = o->version >= 2 && o->escalate_network;
	if (c->escalate_network) {
		/* Asked through the same pipeline as a mode: one request. */
		c->escalate = true;
		err = dup_str(&c->network_host, o->network_host);
		if (err)
			return err;
	}
	err = dup_str(&c->tool, o->tool				     ? o->tool
				: o->subject == WARD_SUBJECT_COMMAND ? "run"
								     : "fs");
	if (!err)
		err = dup_strv(&c->argv, o->argv);
	if (!err)
		err = dup_str(&c->operation, o->operation);
	if (!err)
		err = dup_strv(&c->paths, o->paths);
	if (!err)
		err = dup_str(&c->justification, o->justification);
	return err;
}

static int check_options(const struct ward_call_options *o)
{
	if (!o)
		return ward_err(WARD_EINVAL, "call: no options");
	if (o->version != 1 && o->version != WARD_CALL_OPTIONS_VERSION)
		return ward_err(WARD_EINVAL,
				"call options: unknown version %u (expected "
				"%u; use ward_call_options_init)",
				o->version, WARD_CALL_OPTIONS_VERSION);
	if (!o->config)
		return ward_err(WARD_EINVAL,
				"call options: a configuration is required");
	if (o->subject == WARD_SUBJECT_COMMAND && !o->provider)
		return ward_err(WARD_EINVAL,
				"call options: a command needs a provider");
	if (o->subject == WARD_SUBJECT_COMMAND &&
	    (!o->argv || !o->argv[0] || !o->argv[0][0]))
		return ward_err(WARD_EINVAL, "call options: no command");
	if (o->subject == WARD_SUBJECT_OPERATION &&
	    (!o->operation || !*o->operation))
		return ward_err(WARD_EINVAL, "call options: no operation");
	if ((unsigned)o->subject > WARD_SUBJECT_OPERATION ||
	    (unsigned)o->surface > WARD_SURFACE_ACP)
		return ward_err(WARD_EINVAL,
				"call options: unknown subject or surface");
	if (o->escalate &&
	    (unsigned)o->escalate_to > WARD_MODE_DANGER_FULL_ACCESS)
		return ward_err(WARD_EINVAL,
				"call options: escalation to unknown mode %d",
				(int)o->escalate_to);
	if (o->version >= 2 && o->escalate_network && o->escalate)
		return ward_err(WARD_EINVAL,
				"ask for a wider mode or a wider network, not "
				"both in one call");
	if (o->version >= 2 && o->escalate_network && blank(o->justification))
		return ward_err(WARD_EINVAL,
				"a network escalation needs a justification "
				"(why the host or the network is needed)");
	if (o->escalate && blank(o->justification))
		return ward_err(WARD_EINVAL,
				"an escalation needs a justification (why the "
				"wider mode is needed)");
	return 0;
}

/* --- recording ------------------------------------------------------------ */

/*
 * Record how the call ended, once. The detail of the caller's error, if
 * any, survives. A failure to record is returned (the call already ran or
 * did not; the caller decides how loud to be).
 */
static int record_result(ward_call *c, struct ward_session_result *r)
{
	int err;

	if (!c->session || c->recorded)
		return 0;
	c->recorded = true;
	r->call_id = c->id;
	err = ward_session_record_result(c->session, r);
	if (err)
		return ward_err(err,
				"cannot record the result of call %s in "
				"session %s: %s",
				c->id, ward_session_id(c->session),
				ward_error_last());
	return 0;
}

/* Record that the call did not run (@code, @text). */
static int record_not_run(ward_call *c, const char *code, const char *text)
{
	struct ward_session_result r = WARD_SESSION_RESULT_INIT;

	r.ran = false;
	r.error = code;
	r.text = text && *text ? text : NULL;
	return record_result(c, &r);
}

/* Where the mode in force came from, for the denial report. */
static void mode_source(char *buf, size_t len, const ward_call *c)
{
	struct ward_config_origin o;

	switch (c->source) {
	case WARD_KNOB_SESSION:
		snprintf(buf, len, "session %s", ward_session_id(c->session));
		return;
	case WARD_KNOB_ESCALATION:
		snprintf(buf, len, "an escalation approved for this call");
		return;
	case WARD_KNOB_DEFAULT:
		break;
	}
	ward_config_mode(c->config, &o);
	if (o.layer == WARD_CONFIG_LAYER_FLAGS)
		snprintf(buf, len, "--mode");
	else if (o.layer == WARD_CONFIG_LAYER_DEFAULT || !o.file)
		snprintf(buf, len, "built-in default");
	else
		snprintf(buf, len, "%s:%u", o.file, o.line);
}

/*
 * The denial report of a command that ran (@res): derived from its error
 * output and the plan (exact entries are added by the audit reader when
 * the kernel gives them). An unconfined run (runner none) has none: its
 * errors are the system's.
 */
static void gather_command(ward_call *c, const ward_result *res)
{
	struct ward_denial_ctx ctx;
	char src[PATH_MAX + 32];
	const char *err;
	size_t len = 0;

	if (c->gathered)
		return;
	c->gathered = true;
	c->denied = ward_result_denied(res);
	c->net_off_denied = ward_result_network_denied(res);
	if (ward_result_runner(res) == WARD_RUNNER_NONE)
		return;
	mode_source(src, sizeof(src), c);
	ctx.policy = c->policy;
	ctx.cwd = c->cwd;
	ctx.mode_source = src;
	ctx.fence = false;
	ctx.runner = ward_result_runner(res);
	ctx.facts = c->plan ? c->plan->facts : c->facts;
	/* The kernel's own records first: when there are any, they are
	 * the report (exact), the error output is not needed. */
	if (c->audit) {
		struct ward_denial_set exact = {0};

		bool failed = ward_result_exit_code(res) != 0 ||
			      ward_result_signal(res) != 0 || c->denied;

		if (ward_audit_collect(c->audit, ward_result_pid(res), failed,
				       &exact, &ctx) > 0) {
			ward_denial_set_clear(&c->denials);
			c->denials = exact;
			c->denied = true;
			return;
		}
		ward_denial_set_clear(&exact);
	}
	err = ward_result_stderr(res, &len);
	if (err && len)
		ward_denials_from_output(&c->denials, &ctx, err, len);
	if (c->denied && c->denials.n == 0)
		ward_denial_add_unknown(&c->denials, &ctx);
	c->denied |= c->denials.n > 0;
}

/* The denial report of a file operation: the fence knows it exactly. */
static void gather_fence(ward_call *c, const struct ward_fs_denial *d)
{
	struct ward_denial_ctx ctx;
	char src[PATH_MAX + 32];
	const char *path;

	if (c->gathered)
		return;
	c->gathered = true;
	c->denied = true;
	mode_source(src, sizeof(src), c);
	ctx.policy = c->policy;
	ctx.cwd = c->cwd;
	ctx.mode_source = src;
	ctx.fence = true;
	ctx.runner = WARD_RUNNER_NONE;
	ctx.facts = NULL;
	path = d && d->resolved[0] ? d->resolved : d ? d->path : NULL;
	if (!path ||
	    !ward_denial_judge(&c->denials, &ctx, path, ward_fs_op_name(d->op),
			       WARD_DENIAL_EKNOWN, WARD_DENIAL_EXACT))
		ward_denial_add_unknown(&c->denials, &ctx);
}

/* The denial text recorded in the log: marker and entries, no hint. */
static char *recorded_denial(const ward_call *c, enum ward_mode mode)
{
	struct ward_render_denials r = WARD_RENDER_DENIALS_INIT;
	char *text = NULL;

	r.subject = c->subject;
	r.mode = mode;
	r.denials = c->denials.v;
	r.count = c->denials.n;
	r.more = c->denials.more;
	if (ward_render_denials(&text, &r) != 0)
		return NULL;
	return text;
}

/* The session-log code of a stopped call's end, or NULL. */
static const char *stop_code(const ward_call *c)
{
	switch (atomic_load(&((ward_call *)c)->stop)) {
	case WARD_STOP_CANCELLED:
		return "stopped-cancelled";
	case WARD_STOP_SHUTDOWN:
		return "stopped-shutdown";
	default:
		return NULL;
	}
}

/*
 * The end of the call's network: close its endpoint (which ends and
 * reports every connection still open), then record each connection in
 * the session's log as a `network/connection` event: host, port,
 * protocol, verdict, bytes each way, and the reason of a refusal. Once.
 */
static void finish_network(ward_call *c)
{
	if (!c->net_open || c->net_done)
		return;
	c->net_done = true;
	ward_netlog_close(&c->net);
	for (size_t i = 0; c->session && i < c->net.n; i++) {
		const struct ward_netlog_entry *e = &c->net.v[i];
		json_t *o = json_object();
		char *line;

		if (!o)
			break;
		json_object_set_new(o, "type",
				    json_string("network/connection"));
		json_object_set_new(o, "call_id", json_string(c->id));
		json_object_set_new(
		    o, "host", e->host ? json_string(e->host) : json_null());
		json_object_set_new(o, "port", json_integer(e->port));
		json_object_set_new(o, "protocol", json_string(e->protocol));
		json_object_set_new(o, "verdict", json_string(e->verdict));
		json_object_set_new(o, "bytes_sent",
				    json_integer((json_int_t)e->bytes_sent));
		json_object_set_new(
		    o, "bytes_received",
		    json_integer((json_int_t)e->bytes_received));
		if (e->address)
			json_object_set_new(o, "address",
					    json_string(e->address));
		if (e->reason)
			json_object_set_new(o, "reason",
					    json_string(e->reason));
		line = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		/* The command ran: a failure to record one connection does
		 * not undo it; the call's result is recorded next. */
		if (line)
			ward_session_append_json(c->session, line);
		free(line);
	}
	ward_err_clear();
}

static int record_ran(ward_call *c, const ward_result *res)
{
	struct ward_session_result r = WARD_SESSION_RESULT_INIT;
	char *text = NULL;
	int err;

	finish_network(c);
	gather_command(c, res);
	r.ran = true;
	r.mode = ward_result_mode(res);
	r.exit_code = ward_result_exit_code(res);
	r.signal = ward_result_signal(res);
	r.timed_out = ward_result_timed_out(res);
	r.denied = c->denied;
	r.runner = ward_result_runner(res);
	r.enforcement = ward_result_enforcement(res);
	r.error = stop_code(c);
	if (r.denied)
		text = recorded_denial(c, r.mode);
	r.text = r.denied ? (text ? text : ward_render_marker(r.mode)) : NULL;
	if (!r.error && ward_result_sandbox_ended(res)) {
		r.error = "sandbox-ended";
		r.text = ward_result_sandbox_ended(res);
	}
	err = record_result(c, &r);
	free(text);
	return err;
}

/*
 * A command that could not be confined or started (@err, detail in
 * ward_error_last): recorded as not run; returns @err with its detail.
 */
static int not_run(ward_call *c, int err)
{
	struct saved_error se;
	char *text = NULL;

	save_error(&se, err);
	if (stop_code(c)) {
		/* Killed by ward_call_stop before the command started: not
		 * the sandbox's failure. */
		record_not_run(c, stop_code(c), se.text);
	} else if (err == WARD_EUNAVAILABLE || err == WARD_ERUNNER) {
		if (ward_render_unavailable(&text, c->subject, se.text) != 0)
			text = NULL;
		record_not_run(c, "sandbox-unavailable", text ? text : se.text);
	} else if (err == WARD_EINVAL && c->plan_err == err) {
		record_not_run(c, "plan-refused", se.text);
	} else {
		record_not_run(c, "exec-failed", se.text);
	}
	free(text);
	return restore_error(&se);
}

/* --- exported: lifecycle --------------------------------------------------- */

int ward_call_options_init(struct ward_call_options *opts, unsigned version)
{
	const struct ward_call_options init = WARD_CALL_OPTIONS_INIT;

	if (!opts)
		return ward_err(WARD_EINVAL, "call options: NULL");
	if (version == 1) {
		/* A version-1 struct ends before netproxy. */
		memcpy(opts, &init,
		       offsetof(struct ward_call_options, netproxy));
		opts->version = 1;
		return 0;
	}
	if (version != WARD_CALL_OPTIONS_VERSION)
		return ward_err(WARD_EINVAL,
				"call options: unknown version %u (this "
				"libward knows %u)",
				version, WARD_CALL_OPTIONS_VERSION);
	*opts = init;
	return 0;
}

int ward_call_new(ward_call **out, const struct ward_call_options *opts)
{
	ward_call *c;
	int err;

	if (!out)
		return ward_err(WARD_EINVAL, "call: no output pointer");
	err = check_options(opts);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ward_err(-ENOMEM, "out of memory");
	pthread_mutex_init(&c->net.lock, NULL);
	err = copy_options(c, opts);
	if (!err)
		err = ward_session_new_call_id(c->id, sizeof(c->id));
	if (!err)
		err = resolve_policy(c);
	if (!err)
		err = resolve_cwd(&c->cwd, ward_policy_workspace(c->base),
				  opts->cwd);
	/* Only an escalation shows it; once the policy is known, since
	 * paths resolve against its workspace. */
	if (!err && c->escalate)
		err = make_summary(c, opts->summary);
	if (err) {
		ward_call_free(c);
		return err;
	}
	plan_call(c);
	ward_err_clear();
	*out = c;
	return 0;
}

void ward_call_free(ward_call *call)
{
	ward_result *res = NULL;

	if (!call)
		return;
	if (call->task) {
		/* A task nobody waited for: it ends with its call. */
		ward_task_kill(call->task, SIGKILL);
		if (ward_call_wait(call, &res, 0) == 0)
			ward_result_free(res);
		ward_task_free(call->task);
	}
	ward_netlog_clear(&call->net);
	pthread_mutex_destroy(&call->net.lock);
	if (call->own_proxy)
		ward_netproxy_free(call->netproxy);
	ward_plan_free(call->plan);
	ward_facts_unref(call->facts);
	ward_strv_free(call->env);
	ward_strv_free(call->env_dropped);
	ward_denial_set_clear(&call->denials);
	ward_audit_close(call->audit);
	if (call->policy != call->base)
		ward_policy_free(call->policy);
	ward_policy_free(call->base);
	free(call->plan_detail);
	free(call->cwd);
	free(call->tool);
	ward_strv_free(call->argv);
	free(call->operation);
	ward_strv_free(call->paths);
	free(call->summary);
	ward_strv_free(call->targets);
	free(call->justification);
	free(call->network_host);
	free(call);
}

/* Step 4: put the escalation to the approval service. */
static int authorize(ward_call *c)
{
	struct ward_escalation e = WARD_ESCALATION_INIT;
	struct saved_error se;
	ward_policy *granted = NULL;
	struct ward_facts *facts = NULL;
	char code[64], *text = NULL;
	int err;

	e.subject = c->subject;
	e.summary = c->summary;
	e.cwd = c->cwd;
	e.requested = c->escalate_to;
	e.justification = c->justification;
	e.policy = c->approval;
	e.approve = c->approve;
	e.approve_ctx = c->approve_ctx;
	e.session = c->session;
	e.call_id = c->id;
	e.network = c->escalate_network;
	e.net_host = c->network_host;
	err = ward_escalation_authorize(&granted, &c->verdict, c->base, &e);
	if (err) {
		save_error(&se, err);
		record_not_run(c, "escalation-failed", se.text);
		return ward_err(err,
				"the escalation failed, so nothing was "
				"run: %s",
				se.text);
	}
	if (c->verdict != WARD_ESCALATION_GRANTED) {
		snprintf(code, sizeof(code), "escalation-%s",
			 ward_escalation_verdict_name(c->verdict));
		if (ward_call_render_refusal(&text, c) != 0)
			text = NULL;
		record_not_run(c, code, text);
		free(text);
		return ward_err(WARD_EREFUSED,
				"the escalation was not granted");
	}
	/* The grant changes the mode and nothing else; the granted policy
	 * is checked and planned like any other. */
	err = ward_policy_check_workspace(granted);
	if (!err && c->subject == WARD_SUBJECT_COMMAND &&
	    ward_facts_new(&facts, granted, WARD_FACTS_LISTINGS) != 0)
		facts = NULL;
	if (!err && c->session)
		err = check_session(c, granted, facts);
	if (err) {
		save_error(&se, err);
		ward_facts_unref(facts);
		ward_policy_free(granted);
		record_not_run(c, "escalation-failed", se.text);
		return restore_error(&se);
	}
	/* A file operation is granted for what the person was shown: the
	 * fence lets it act on those resolved targets and nothing else. */
	if (c->subject == WARD_SUBJECT_OPERATION) {
		err = ward_policy_set_objects(granted, c->targets);
		if (err) {
			ward_policy_free(granted);
			record_not_run(c, "escalation-failed", "out of memory");
			return err;
		}
	}
	c->policy = granted;
	ward_facts_unref(c->facts);
	c->facts = facts;
	c->escalated = true;
	if (c->escalate_network)
		c->net_source = WARD_KNOB_ESCALATION;
	else
		c->source = WARD_KNOB_ESCALATION;
	plan_call(c);
	return 0;
}

int ward_call_begin(ward_call *call)
{
	struct ward_session_call sc = WARD_SESSION_CALL_INIT;
	int err = 0;

	if (!call)
		return ward_err(WARD_EINVAL, "call: NULL");
	if (call->begun)
		return call->begin_err
			   ? ward_err(call->begin_err, "%s",
				      call->begin_err == WARD_EREFUSED
					  ? "the escalation was not granted"
					  : "the call could not begin")
			   : 0;
	call->begun = true;
	if (call->session) {
		sc.call_id = call->id;
		sc.tool = call->tool;
		sc.argv = call->argv;
		sc.operation = call->operation;
		sc.paths = call->paths;
		sc.cwd = call->cwd;
		sc.mode = ward_policy_mode(call->base);
		sc.mode_source = call->source;
		err = ward_session_record_call(call->session, &sc);
		if (err) {
			/* Nothing was recorded, so nothing may run; and there
			 * is no call/start for a call/result to end. */
			call->recorded = true;
			err = ward_err(err,
				       "cannot record the call in session %s, "
				       "so nothing was run: %s",
				       ward_session_id(call->session),
				       ward_error_last());
		}
	}
	if (!err && call->escalate)
		err = authorize(call);
	call->begin_err = err;
	return err;
}

/*
 * An allowlist: the call's own endpoint on the proxy (made for the call
 * when the caller gave none) with the policy's domains, and the command's
 * environment pointed at it (inside bwrap at ward-bridge's port, under
 * Landlock at the endpoint's own port).
 */
static int open_network(ward_call *c)
{
	bool tcp = c->plan->ops->net_tcp;
	int err;

	if (ward_plan_network(c->plan) != WARD_NETWORK_ALLOWLIST)
		return 0;
	if (c->net_open)
		return ward_err(WARD_EINVAL, "call: network already open");
	if (!c->netproxy) {
		err = ward_netproxy_new(&c->netproxy);
		if (err)
			return ward_err(err,
					"cannot start ward's network proxy: %s",
					ward_error_last());
		c->own_proxy = true;
	}
	err = ward_netlog_open(&c->net, c->netproxy, c->id,
			       ward_policy_allow_domains(c->policy),
			       ward_policy_deny_domains(c->policy), tcp);
	if (err)
		return err;
	c->net_open = true;
	return ward_net_proxy_env(&c->env, tcp ? c->net.port : WARD_BRIDGE_PORT,
				  ward_policy_allow_domains(c->policy),
				  ward_policy_deny_domains(c->policy));
}

/* Steps 3 to 5 up to the spawn: a confined command, or the error. */
static int prepare_run(ward_call *c, ward_confined **conf,
		       struct ward_exec_options *o,
		       const struct ward_exec_options *opts)
{
	int err;

	if (c->subject != WARD_SUBJECT_COMMAND)
		return ward_err(WARD_EINVAL, "call: not a command");
	if (c->task)
		return ward_err(WARD_EINVAL, "call: already started");
	err = ward_call_begin(c);
	if (err)
		return err;
	if (atomic_load(&c->stop))
		return not_run(c, ward_err(WARD_ESTOPPED,
					   "the call was stopped before it "
					   "started"));
	if (c->plan_err)
		return not_run(c,
			       ward_err(c->plan_err, "%s",
					c->plan_detail ? c->plan_detail : ""));
	err = ward_exec_opts_check(o, opts);
	if (err)
		return not_run(c, err);
	if (!o->cwd)
		o->cwd = c->cwd;
	/* The command never sees what looks like a secret, whoever calls
	 * (the caller's own envp is scrubbed as well). */
	ward_strv_free(c->env);
	ward_strv_free(c->env_dropped);
	c->env = c->env_dropped = NULL;
	err =
	    ward_config_env_scrub(&c->env, &c->env_dropped, c->config, o->envp);
	if (err)
		return not_run(c, err);
	/* Listen before the command starts: under Landlock the kernel can
	 * say exactly what it refused (root, audit enabled; else the report
	 * is derived and nothing is lost). */
	if (!c->audit && c->plan->ops->audit_records &&
	    ward_audit_open(&c->audit) != 0)
		c->audit = NULL;
	err = open_network(c);
	if (err)
		return not_run(c, err);
	o->envp = c->env;
	err = ward_confined_from_plan_net(
	    conf, c->plan, c->argv, o->cwd,
	    &(struct ward_net_attach){c->net.path[0] ? c->net.path : NULL,
				      c->net.port});
	if (err)
		return not_run(c, err);
	return 0;
}

int ward_call_exec(ward_call *call, ward_result **out,
		   const struct ward_exec_options *opts)
{
	struct ward_exec_options o;
	struct saved_error se;
	ward_confined *conf = NULL;
	ward_tty_state *tty = NULL;
	int err;

	if (!call || !out)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	err = prepare_run(call, &conf, &o, opts);
	if (err)
		return err;
	/* Terminal settings the command changes (stty -echo, the window
	 * size) do not outlive it, a timeout included. */
	if (ward_tty_save(&tty) != 0)
		tty = NULL;
	err = ward_exec_confined(out, conf, call->policy, &o);
	ward_tty_restore(tty);
	ward_tty_free(tty);
	ward_confined_free(conf);
	if (err)
		return not_run(call, err);
	err = record_ran(call, *out);
	if (err) {
		/* It ran: the result stands; the detail says what failed. */
		save_error(&se, err);
		restore_error(&se);
	}
	return 0;
}

int ward_call_start(ward_call *call, const struct ward_exec_options *opts)
{
	struct ward_exec_options o;
	ward_confined *conf = NULL;
	int err;

	if (!call)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	err = prepare_run(call, &conf, &o, opts);
	if (err)
		return err;
	err = ward_task_start_confined(&call->task, conf, call->policy, &o);
	ward_confined_free(conf);
	if (err)
		return not_run(call, err);
	/* A stop that came while it started. */
	if (atomic_load(&call->stop))
		ward_task_kill(call->task, SIGKILL);
	return 0;
}

int ward_call_stop(ward_call *call, enum ward_call_stop why)
{
	int none = WARD_STOP_NONE;

	if (!call || why == WARD_STOP_NONE ||
	    (unsigned)why > WARD_STOP_SHUTDOWN)
		return ward_err(WARD_EINVAL, "call: invalid stop");
	atomic_compare_exchange_strong(&call->stop, &none, (int)why);
	/* The task pointer is set before the call is shared for stopping
	 * (ward_call_start returned); ward_task_kill is thread-safe. */
	if (call->task)
		ward_task_kill(call->task, SIGKILL);
	return 0;
}

enum ward_call_stop ward_call_stopped(const ward_call *call)
{
	return call ? (enum ward_call_stop)atomic_load(
			  &((ward_call *)call)->stop)
		    : WARD_STOP_NONE;
}

ward_task *ward_call_task(const ward_call *call)
{
	return call ? call->task : NULL;
}

int ward_call_wait(ward_call *call, ward_result **out, unsigned long timeout_ms)
{
	int err;

	if (!call || !out)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	if (!call->task)
		return ward_err(WARD_EINVAL, "call: no task was started");
	err = ward_task_wait(out, call->task, timeout_ms);
	if (err == -ETIMEDOUT)
		return err;
	/* A runner that died of ward_call_stop's kill before the command
	 * started did not fail: the call was stopped. */
	if (err == WARD_ERUNNER && atomic_load(&call->stop))
		err = ward_err(WARD_ESTOPPED,
			       "the call was stopped before the command "
			       "started");
	if (err)
		return not_run(call, err);
	record_ran(call, *out);
	return 0;
}

int ward_call_fs_begin(ward_call *call, const ward_policy **out)
{
	int err;

	if (!call || !out)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	if (call->subject != WARD_SUBJECT_OPERATION)
		return ward_err(WARD_EINVAL, "call: not a file operation");
	err = ward_call_begin(call);
	if (err)
		return err;
	*out = call->policy;
	return 0;
}

int ward_call_fs_end(ward_call *call, int err,
		     const struct ward_fs_denial *denial)
{
	struct ward_session_result r = WARD_SESSION_RESULT_INIT;
	enum ward_mode mode;
	char *text = NULL;
	int rc;

	if (!call)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	mode = ward_policy_mode(call->policy);
	if (err == WARD_EDENIED)
		gather_fence(call, denial);
	r.ran = true;
	r.mode = mode;
	r.denied = err == WARD_EDENIED;
	/* As `ward fs` exits: 0 done, 3 denied by the fence, 1 failed. */
	r.exit_code = err == 0 ? 0 : r.denied ? 3 : 1;
	r.runner_name = "fsfence";
	r.enforcement = WARD_ENFORCEMENT_FULL;
	r.error = err && !r.denied ? "failed" : NULL;
	if (r.denied)
		text = recorded_denial(call, denial ? denial->mode : mode);
	r.text = r.denied
		     ? (text ? text
			     : ward_render_marker(denial ? denial->mode : mode))
		     : NULL;
	rc = record_result(call, &r);
	free(text);
	return rc;
}

/* --- exported: facts ------------------------------------------------------- */

const char *ward_call_id(const ward_call *call)
{
	return call ? call->id : "";
}

const ward_policy *ward_call_policy(const ward_call *call)
{
	return call ? call->policy : NULL;
}

const ward_plan *ward_call_plan(const ward_call *call)
{
	return call ? call->plan : NULL;
}

int ward_call_plan_error(const ward_call *call)
{
	return call ? call->plan_err : WARD_EINVAL;
}

const char *ward_call_plan_detail(const ward_call *call)
{
	return call && call->plan_detail ? call->plan_detail : "";
}

enum ward_mode ward_call_mode(const ward_call *call)
{
	return call ? ward_policy_mode(call->policy) : WARD_MODE_READ_ONLY;
}

enum ward_knob_source ward_call_mode_source(const ward_call *call)
{
	return call ? call->source : WARD_KNOB_DEFAULT;
}

enum ward_approval_policy ward_call_approval(const ward_call *call)
{
	return call ? call->approval : WARD_APPROVAL_NEVER;
}

const char *ward_call_cwd(const ward_call *call)
{
	return call ? call->cwd : NULL;
}

bool ward_call_escalated(const ward_call *call)
{
	return call && call->escalated;
}

enum ward_escalation_verdict ward_call_verdict(const ward_call *call)
{
	return call ? call->verdict : WARD_ESCALATION_NO_SERVICE;
}

bool ward_call_denied(const ward_call *call)
{
	return call && call->denied;
}

size_t ward_call_denial_count(const ward_call *call)
{
	return call ? call->denials.n : 0;
}

const struct ward_denial *ward_call_denial(const ward_call *call, size_t i)
{
	return call && i < call->denials.n ? &call->denials.v[i] : NULL;
}

size_t ward_call_denials_omitted(const ward_call *call)
{
	return call ? call->denials.more : 0;
}

int ward_call_render_denial(char **out, const ward_call *call)
{
	struct ward_render_denials r = WARD_RENDER_DENIALS_INIT;
	enum ward_mode mode;

	if (!out || !call)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	mode = ward_policy_mode(call->policy);
	r.surface = call->surface;
	r.subject = call->subject;
	r.mode = mode;
	r.denials = call->denials.v;
	r.count = call->denials.n;
	r.more = call->denials.more;
	r.escalation_offered = ward_call_hint_offered(call, mode);
	r.session_id = call->session && !call->escalated
			   ? ward_session_id(call->session)
			   : NULL;
	return ward_render_denials(out, &r);
}

int ward_call_render_explain(char **out, const ward_call *call)
{
	if (!out || !call)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	return ward_render_explain(out, call->denials.v, call->denials.n,
				   call->denials.more);
}

char *const *ward_call_env_dropped(const ward_call *call)
{
	return call && call->env_dropped ? call->env_dropped : empty_strv;
}

char *const *ward_call_warnings(const ward_call *call)
{
	return call && call->plan ? ward_plan_warnings(call->plan) : empty_strv;
}

bool ward_call_hint_offered(const ward_call *call, enum ward_mode mode)
{
	return call &&
	       ward_escalation_offered(mode, call->approval,
				       call->approve != NULL, call->escalated);
}

enum ward_network ward_call_network(const ward_call *call)
{
	return call ? ward_policy_network(call->policy) : WARD_NETWORK_OFF;
}

enum ward_knob_source ward_call_network_source(const ward_call *call)
{
	return call ? call->net_source : WARD_KNOB_DEFAULT;
}

size_t ward_call_net_event_count(const ward_call *call)
{
	return call && call->net_done ? call->net.n : 0;
}

int ward_call_net_event(const ward_call *call, size_t i,
			struct ward_net_event *out)
{
	const struct ward_netlog_entry *e;

	if (!call || !out || !call->net_done || i >= call->net.n)
		return ward_err(-ERANGE, "call: no such network event");
	e = &call->net.v[i];
	out->host = e->host;
	out->port = e->port;
	out->protocol = e->protocol;
	out->verdict = e->verdict;
	out->reason = e->reason;
	out->bytes_sent = e->bytes_sent;
	out->bytes_received = e->bytes_received;
	return 0;
}

/* A network escalation could be asked for after this call. */
static bool net_escalation_offered(const ward_call *call)
{
	return call->approve && !call->escalated &&
	       call->approval == WARD_APPROVAL_ASK;
}

bool ward_call_network_hint_offered(const ward_call *call)
{
	bool refused = call && call->net_off_denied;

	for (size_t i = 0; call && call->net_done && i < call->net.n; i++)
		refused |= call->net.v[i].denied;
	return refused && net_escalation_offered(call);
}

bool ward_call_network_off_denied(const ward_call *call)
{
	return call && call->net_off_denied;
}

int ward_call_render_network(char **out, const ward_call *call)
{
	struct ward_strv hosts = {0};
	char *buf = NULL, *m = NULL;
	bool refused = false;
	size_t len = 0;
	FILE *f;

	if (!out || !call)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	f = open_memstream(&buf, &len);
	if (!f)
		return ward_err(-ENOMEM, "out of memory");
	for (size_t i = 0; call->net_done && i < call->net.n; i++) {
		const struct ward_netlog_entry *e = &call->net.v[i];
		bool seen = false;

		if (!(e->denied || e->unresolved) || !e->host)
			continue;
		for (size_t j = 0; j < hosts.n && !seen; j++)
			seen = strcmp(hosts.v[j], e->host) == 0;
		/* A refusal, or an allowed name the proxy's own lookup
		 * failed for (its line of its own: not the sandbox's). */
		if (seen || (e->denied ? ward_render_network_denied(&m, e->host)
				       : ward_render_network_unresolved(
					     &m, e->host)) != 0)
			continue;
		ward_strv_push(&hosts, e->host);
		refused |= e->denied;
		fprintf(f, "%s%s", hosts.n > 1 ? "\n" : "", m);
		free(m);
	}
	if (refused && ward_call_network_hint_offered(call) &&
	    ward_render_network_hint(&m, call->surface) == 0) {
		fprintf(f, "\n%s", m);
		free(m);
	}
	/* The network was off and a lookup or connect was refused. */
	if (call->net_off_denied) {
		struct ward_render_network_off r = WARD_RENDER_NETWORK_OFF_INIT;

		r.surface = call->surface;
		r.mode = ward_policy_mode(call->policy);
		r.escalation_offered = net_escalation_offered(call);
		r.session_id = call->session && !call->escalated
				   ? ward_session_id(call->session)
				   : NULL;
		if (ward_render_network_off(&m, &r) == 0) {
			fprintf(f, "%s%s", hosts.n ? "\n" : "", m);
			free(m);
		}
	}
	ward_strv_discard(&hosts);
	ward_err_clear();
	if (fclose(f) != 0 || !buf) {
		free(buf);
		return ward_err(-ENOMEM, "out of memory");
	}
	*out = buf;
	return 0;
}

/* --- exported: texts ------------------------------------------------------- */

int ward_call_render_refusal(char **out, const ward_call *call)
{
	if (!out || !call || !call->escalate ||
	    call->verdict == WARD_ESCALATION_GRANTED)
		return ward_err(WARD_EINVAL, "call: no refused escalation");
	if (call->escalate_network) {
		char what[320];

		if (call->network_host)
			snprintf(what, sizeof(what), "network access to %s",
				 call->network_host);
		else
			snprintf(what, sizeof(what), "the whole network (on)");
		return ward_render_network_verdict(
		    out, call->surface, call->verdict, call->subject, what);
	}
	return ward_render_verdict_for(out, call->surface, call->verdict,
				       call->subject, call->escalate_to);
}

int ward_call_render_not_run(char **out, const ward_call *call)
{
	if (!out || !call)
		return ward_err(WARD_EINVAL, "call: invalid argument");
	return ward_render_unavailable(
	    out, call->subject, call->plan_detail ? call->plan_detail : "");
}
