/*
 * ward's MCP server — the tools: bash (foreground and background), task_output,
 * task_kill, and the file tools through the fence (read_file, write_file,
 * edit_file, list_directory).
 *
 * Every call takes its policy from the session as it is at that moment,
 * records `call/start` before anything runs (a call that cannot be
 * recorded does not run), asks for approval when it carries
 * sandbox_permissions, and records `call/result`. Every model-facing text
 * comes from render.c; the validation messages here name the argument
 * and what it must be.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ward/fsfence.h"
#include "ward/json.h"
#include "ward/render.h"

#include "mcp_internal.h"

/* --- the argument tables ---------------------------------------------- */

enum ftype {
	F_STRING,
	F_BOOL,
	F_INT
};

struct field {
	const char *name;
	enum ftype type;
	bool required;
	long long min, max;
};

#define F_SP                                                                   \
	{                                                                      \
		"sandbox_permissions", F_STRING, false, 0, 0                   \
	}
#define F_JUST                                                                 \
	{                                                                      \
		"justification", F_STRING, false, 0, 0                         \
	}
#define F_END                                                                  \
	{                                                                      \
		NULL, F_STRING, false, 0, 0                                    \
	}

static const struct field bash_fields[] = {
    {"command", F_STRING, true, 0, 0},
    {"workdir", F_STRING, false, 0, 0},
    {"timeout_ms", F_INT, false, 1, (long long)MCP_TIMEOUT_MAX_MS},
    {"run_in_background", F_BOOL, false, 0, 0},
    F_SP,
    {"network_permissions", F_STRING, false, 0, 0},
    F_JUST,
    F_END,
};

static const struct field task_output_fields[] = {
    {"task_id", F_STRING, true, 0, 0},
    {"wait_ms", F_INT, false, 0, (long long)MCP_WAIT_MAX_MS},
    F_END,
};

static const struct field task_kill_fields[] = {
    {"task_id", F_STRING, true, 0, 0},
    F_END,
};

static const struct field read_file_fields[] = {
    {"path", F_STRING, true, 0, 0},
    {"offset", F_INT, false, 0, LLONG_MAX},
    {"limit", F_INT, false, 1, LLONG_MAX},
    {"line_numbers", F_BOOL, false, 0, 0},
    F_END,
};

static const struct field write_file_fields[] = {
    {"path", F_STRING, true, 0, 0},
    {"content", F_STRING, true, 0, 0},
    {"create_parents", F_BOOL, false, 0, 0},
    F_SP,
    F_JUST,
    F_END,
};

/* old_text/new_text, or old_string/new_string (the names models know from
 * other coding agents' edit tools): one of each pair (run_edit_file). */
static const struct field edit_file_fields[] = {
    {"path", F_STRING, true, 0, 0},
    {"old_text", F_STRING, false, 0, 0},
    {"new_text", F_STRING, false, 0, 0},
    {"old_string", F_STRING, false, 0, 0},
    {"new_string", F_STRING, false, 0, 0},
    {"replace_all", F_BOOL, false, 0, 0},
    F_SP,
    F_JUST,
    F_END,
};

static const struct field list_directory_fields[] = {
    {"path", F_STRING, false, 0, 0},
    {"recursive", F_BOOL, false, 0, 0},
    {"depth", F_INT, false, 1, 16},
    {"limit", F_INT, false, 1, MCP_LIST_MAX},
    F_END,
};

static json_t *run_bash(struct mcp_call *call, json_t *args);
static json_t *run_task_output(struct mcp_call *call, json_t *args);
static json_t *run_task_kill(struct mcp_call *call, json_t *args);
static json_t *run_read_file(struct mcp_call *call, json_t *args);
static json_t *run_write_file(struct mcp_call *call, json_t *args);
static json_t *run_edit_file(struct mcp_call *call, json_t *args);
static json_t *run_list_directory(struct mcp_call *call, json_t *args);

struct tool_def {
	const char *name;
	const char *title; /* a short label for the client's UI */
	enum ward_tool tool;
	const struct field *fields;
	bool escalates; /* has sandbox_permissions + justification */
	/* Annotations: honest hints for the client. */
	bool read_only, destructive, idempotent, open_world;
	json_t *(*run)(struct mcp_call *call, json_t *args);
};

static const struct tool_def tools[] = {
    {"bash", "Run a shell command (sandboxed)", WARD_TOOL_BASH, bash_fields,
     true, false, true, false, true, run_bash},
    {"task_output", "Read a background command's output", WARD_TOOL_TASK_OUTPUT,
     task_output_fields, false, true, false, true, false, run_task_output},
    {"task_kill", "Stop a background command", WARD_TOOL_TASK_KILL,
     task_kill_fields, false, false, true, true, false, run_task_kill},
    {"read_file", "Read a file", WARD_TOOL_READ_FILE, read_file_fields, false,
     true, false, true, false, run_read_file},
    {"write_file", "Write a file", WARD_TOOL_WRITE_FILE, write_file_fields,
     true, false, true, true, false, run_write_file},
    {"edit_file", "Edit a file", WARD_TOOL_EDIT_FILE, edit_file_fields, true,
     false, true, false, false, run_edit_file},
    {"list_directory", "List a directory", WARD_TOOL_LIST_DIRECTORY,
     list_directory_fields, false, true, false, true, false,
     run_list_directory},
};

#define N_TOOLS (sizeof(tools) / sizeof(tools[0]))

static const struct tool_def *find_tool(const char *name)
{
	for (size_t i = 0; name && i < N_TOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

bool mcp_tools_known(const char *name)
{
	return find_tool(name) != NULL;
}

static bool is_escalation_field(const char *name)
{
	return strcmp(name, "sandbox_permissions") == 0 ||
	       strcmp(name, "network_permissions") == 0 ||
	       strcmp(name, "justification") == 0;
}

/* The number of fields of @d (the index of its terminator). */
static size_t field_count(const struct tool_def *d)
{
	size_t n = 0;

	while (d->fields[n].name)
		n++;
	return n;
}

/* --- tools/list ------------------------------------------------------- */

static void set_new(json_t *obj, const char *key, json_t *value)
{
	if (!value || json_object_set_new(obj, key, value) != 0)
		mcp_oom();
}

static json_t *field_schema(const struct tool_def *d, const struct field *f,
			    enum ward_mode mode)
{
	const char *desc = ward_render_field_description(d->tool, f->name);
	json_t *s = json_object();
	enum ward_mode targets[2];
	size_t n;

	if (!s)
		mcp_oom();
	set_new(s, "type",
		json_string(f->type == F_STRING ? "string"
			    : f->type == F_BOOL ? "boolean"
						: "integer"));
	if (desc)
		set_new(s, "description", json_string(desc));
	if (f->type == F_INT) {
		set_new(s, "minimum", json_integer(f->min));
		if (f->max != LLONG_MAX)
			set_new(s, "maximum", json_integer(f->max));
	}
	if (strcmp(f->name, "sandbox_permissions") == 0) {
		json_t *e = json_array();

		n = ward_escalation_targets(targets, mode);
		for (size_t i = 0; e && i < n; i++)
			json_array_append_new(
			    e, json_string(ward_mode_name(targets[i])));
		set_new(s, "enum", e);
	}
	return s;
}

/* The structuredContent of bash, as a schema. */
static json_t *bash_output_schema(void)
{
	json_t *str = json_pack("{s:s}", "type", "string");
	json_t *strs = json_pack("{s:s, s:o}", "type", "array", "items",
				 json_deep_copy(str));
	json_t *denial = json_pack(
	    "{s:s, s:{s:{s:[s,s]}, s:O, s:O, s:{s:[s,s]}, s:O, s:{s:[s,s]}, "
	    "s:{s:s, s:[s,s]}}}",
	    "type", "object", "properties", "path", "type", "string", "null",
	    "operation", str, "cause", str, "rule", "type", "string", "null",
	    "mode", str, "source", "type", "string", "null", "how", "type",
	    "string", "enum", "exact", "derived");
	json_t *schema = json_pack(
	    "{s:s, s:{s:{s:[s,s]}, s:{s:[s,s]}, s:{s:s}, s:{s:s}, s:{s:s}, "
	    "s:{s:s}, s:{s:s, s:{s:O, s:O, s:O, s:{s:s}, s:O}, s:[s,s,s,s]}, "
	    "s:{s:s, s:o}}, s:[s]}",
	    "type", "object", "properties", "exit_code", "type", "integer",
	    "null", "signal", "type", "integer", "null", "timed_out", "type",
	    "boolean", "task_id", "type", "string", "running", "type",
	    "boolean", "escalated", "type", "boolean", "sandbox", "type",
	    "object", "properties", "mode", str, "runner", str, "enforcement",
	    str, "denied", "type", "boolean", "partial", strs, "required",
	    "mode", "runner", "enforcement", "denied", "denials", "type",
	    "array", "items", denial, "required", "sandbox");

	json_decref(str);
	json_decref(strs);
	return schema;
}

static json_t *tool_json(struct mcp_server *srv, const struct tool_def *d,
			 bool escalation, enum ward_mode mode,
			 enum ward_approval_policy approval)
{
	json_t *t = json_object(), *props = json_object(), *req = json_array();
	json_t *schema = json_object();
	bool fields = escalation && d->escalates;
	const char *desc = ward_render_tool_description(d->tool, fields);
	char *full = NULL;

	if (!t || !props || !req || !schema)
		mcp_oom();
	for (const struct field *f = d->fields; f->name; f++) {
		if (is_escalation_field(f->name) && !fields)
			continue;
		set_new(props, f->name, field_schema(d, f, mode));
		if (f->required)
			json_array_append_new(req, json_string(f->name));
	}
	set_new(schema, "type", json_string("object"));
	set_new(schema, "properties", props);
	set_new(schema, "required", req);
	set_new(schema, "additionalProperties", json_false());

	set_new(t, "name", json_string(d->name));
	/* Only `never` is declared, with the tools it concerns — and only
	 * to a client that could ask (else the field it names is not
	 * offered at all). */
	if (d->escalates && approval == WARD_APPROVAL_NEVER &&
	    mcp_elicits(srv)) {
		if (asprintf(&full, "%s\n\n%s", desc,
			     ward_render_policy(approval)) < 0)
			mcp_oom();
		desc = full;
	}
	set_new(t, "description", json_string(desc));
	free(full);
	set_new(t, "inputSchema", schema);
	if (mcp_protocol_at_least(srv, "2025-06-18")) {
		set_new(t, "title", json_string(d->title));
		if (d->tool == WARD_TOOL_BASH)
			set_new(t, "outputSchema", bash_output_schema());
	}
	set_new(t, "annotations",
		json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", d->title,
			  "readOnlyHint", d->read_only, "destructiveHint",
			  d->destructive, "idempotentHint", d->idempotent,
			  "openWorldHint", d->open_world));
	return t;
}

json_t *mcp_tools_list(struct mcp_server *srv)
{
	enum ward_mode mode = srv->defaults.mode;
	enum ward_approval_policy approval = srv->defaults.approval;
	enum ward_knob_source src;
	json_t *list = json_array();
	bool escalation;

	if (!list || mcp_session_knobs(srv, &mode, &src, &approval) != 0) {
		json_decref(list);
		return NULL;
	}
	escalation = mcp_escalation_fields(srv, mode, approval);
	for (size_t i = 0; i < N_TOOLS; i++)
		json_array_append_new(
		    list,
		    tool_json(srv, &tools[i], escalation, mode, approval));
	pthread_mutex_lock(&srv->lock);
	srv->listed = true;
	srv->listed_escalation = escalation;
	pthread_mutex_unlock(&srv->lock);
	return json_pack("{s:o}", "tools", list);
}

/* --- results ---------------------------------------------------------- */

/* A CallToolResult holding @len bytes of @text. */
static json_t *result_n(struct mcp_server *srv, const char *text, size_t len,
			bool is_error, json_t *structured)
{
	json_t *r =
	    json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text",
		      "text", ward_json_text(text, len), "isError", is_error);

	if (!r)
		mcp_oom();
	if (structured && mcp_protocol_at_least(srv, "2025-06-18"))
		set_new(r, "structuredContent", structured);
	else
		json_decref(structured);
	return r;
}

static json_t *result_text(struct mcp_server *srv, const char *text,
			   bool is_error, json_t *structured)
{
	return result_n(srv, text, strlen(text), is_error, structured);
}

static json_t *tool_error(struct mcp_server *srv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A failed call (bad input, or it could not run): an isError result. */
static json_t *tool_error(struct mcp_server *srv, const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return result_text(srv, text, true, NULL);
}

/* The detail of the last failure, else the error code's text. */
static const char *detail_of(int err, char *buf, size_t len)
{
	const char *d = ward_error_last();

	snprintf(buf, len, "%s", d && *d ? d : ward_strerror(err));
	return buf;
}

/* --- arguments -------------------------------------------------------- */

/*
 * Check @args against @fields: known names only, the right types, ranges,
 * the required ones present. Returns NULL, or the isError result.
 */
static json_t *check_args(struct mcp_server *srv, const struct tool_def *d,
			  json_t *args)
{
	const char *key;
	char names[512];
	json_t *v;
	size_t used = 0;
	bool elicits = mcp_elicits(srv);

	names[0] = '\0';
	for (const struct field *f = d->fields; f->name; f++) {
		if (is_escalation_field(f->name) && !elicits)
			continue;
		used = strlen(names);
		snprintf(names + used, sizeof(names) - used, "%s%s",
			 used ? ", " : "", f->name);
	}
	json_object_foreach(args, key, v)
	{
		const struct field *f = d->fields;

		while (f->name && strcmp(f->name, key) != 0)
			f++;
		/* A client that cannot elicit is not offered them. */
		if (f->name && is_escalation_field(f->name) && !elicits)
			f = &d->fields[field_count(d)];
		if (!f->name)
			return tool_error(srv,
					  "invalid arguments: unknown argument "
					  "\"%.64s\" (%s takes: %s)",
					  key, d->name, names);
		if (json_is_null(v))
			continue; /* as if absent */
		if (f->type == F_STRING && !json_is_string(v))
			return tool_error(srv,
					  "invalid arguments: \"%s\" must be "
					  "a string",
					  key);
		if (f->type == F_BOOL && !json_is_boolean(v))
			return tool_error(srv,
					  "invalid arguments: \"%s\" must be "
					  "true or false",
					  key);
		if (f->type == F_INT) {
			double x = json_number_value(v);
			long long i = 0;

			/* 5000.0 is 5000 (some clients only have doubles);
			 * beyond 2^53 a double is no exact integer. */
			if (json_is_integer(v))
				i = json_integer_value(v);
			else if (json_is_real(v) && x >= -9007199254740992.0 &&
				 x <= 9007199254740992.0 &&
				 x == (double)(long long)x)
				i = (long long)x;
			else
				return tool_error(srv,
						  "invalid arguments: \"%s\" "
						  "must be an integer",
						  key);
			if (i < f->min || i > f->max)
				return tool_error(
				    srv,
				    "invalid arguments: \"%s\" must be between "
				    "%lld and %lld",
				    key, f->min, f->max);
		}
	}
	for (const struct field *f = d->fields; f->name; f++) {
		v = json_object_get(args, f->name);
		if (f->required && (!v || json_is_null(v)))
			return tool_error(srv,
					  "invalid arguments: \"%s\" is "
					  "required (%s takes: %s)",
					  f->name, d->name, names);
	}
	return NULL;
}

static const char *arg_str(json_t *args, const char *key)
{
	return json_string_value(json_object_get(args, key));
}

static bool arg_bool(json_t *args, const char *key, bool dflt)
{
	json_t *v = json_object_get(args, key);

	return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* An integer argument (checked by check_args), or @dflt when absent. */
static long long arg_int(json_t *args, const char *key, long long dflt)
{
	json_t *v = json_object_get(args, key);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return dflt;
}

static bool blank(const char *s)
{
	while (s && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	return !s || !*s;
}

/*
 * Check the escalation fields: a known mode and a justification. Sets
 * *requested when sandbox_permissions is given. Returns NULL or the
 * isError result.
 */
static json_t *check_escalation(struct mcp_server *srv, json_t *args,
				bool *asked, enum ward_mode *requested)
{
	const char *sp = arg_str(args, "sandbox_permissions");
	const char *np = arg_str(args, "network_permissions");

	*asked = sp != NULL;
	if (np) {
		if (sp)
			return tool_error(srv, "invalid arguments: give "
					       "sandbox_permissions or "
					       "network_permissions, not both");
		if (strcmp(np, "on") != 0 &&
		    (ward_network_pattern_check(np) != 0 || np[0] == '*'))
			return tool_error(srv,
					  "invalid arguments: "
					  "\"network_permissions\" must be a "
					  "host name or address, or \"on\"");
		if (blank(arg_str(args, "justification")))
			return tool_error(
			    srv, "invalid arguments: \"justification\" is "
				 "required with \"network_permissions\": say "
				 "which host was denied and why the task "
				 "needs it");
		return NULL;
	}
	if (!sp)
		return NULL;
	if (ward_mode_parse(requested, sp) != 0)
		return tool_error(srv,
				  "invalid arguments: \"sandbox_permissions\" "
				  "must be workspace-write or "
				  "danger-full-access");
	if (blank(arg_str(args, "justification")))
		return tool_error(srv,
				  "invalid arguments: \"justification\" is "
				  "required with \"sandbox_permissions\": say "
				  "what was denied and why the task needs it");
	return NULL;
}

/* --- the call ------------------------------------------------------------ */

/*
 * One tools/call as a ward_call: the policy from the session as it is now
 * (its knobs re-read), planned once; the escalation fields as the request
 * for a wider mode, put to the user by elicitation. Returns NULL with *r
 * set to the result to answer when it cannot be made.
 */
static ward_call *call_new(struct mcp_call *call, json_t *args,
			   enum ward_subject subject, const char *tool,
			   char *const *argv, const char *op,
			   char *const *paths, const char *cwd, json_t **r)
{
	struct mcp_server *srv = call->srv;
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	enum ward_mode requested = WARD_MODE_READ_ONLY;
	ward_call *wc = NULL;
	char detail[1024];
	bool asked = false;
	int err;

	*r = check_escalation(srv, args, &asked, &requested);
	if (*r)
		return NULL;
	co.config = srv->o->config;
	co.provider = srv->o->provider;
	co.session = srv->session;
	co.subject = subject;
	co.surface = WARD_SURFACE_MCP;
	co.tool = tool;
	co.argv = argv;
	co.operation = op;
	co.paths = paths;
	co.cwd = cwd;
	co.escalate = asked;
	co.escalate_to = requested;
	if (arg_str(args, "network_permissions")) {
		const char *np = arg_str(args, "network_permissions");

		co.escalate_network = true;
		co.network_host = strcmp(np, "on") ? np : NULL;
	}
	co.justification = arg_str(args, "justification");
	/* Without elicitation there is no approval service: no denial
	 * offers a retry, and the texts say how a person can widen the
	 * session's mode instead. */
	co.approve = mcp_elicits(srv) ? mcp_approve : NULL;
	co.approve_ctx = call;
	co.netproxy = srv->netproxy;
	err = ward_call_new(&wc, &co);
	if (err) {
		detail_of(err, detail, sizeof(detail));
		*r = err == WARD_EINVAL && cwd
			 ? tool_error(srv, "invalid arguments: %s", detail)
			 : tool_error(srv,
				      "cannot read session %s, so nothing was "
				      "run: %s",
				      ward_session_id(srv->session), detail);
		return NULL;
	}
	mcp_knobs_seen(srv, ward_call_mode(wc), ward_call_approval(wc));
	return wc;
}

/*
 * Record call/start and, when asked, the escalation. NULL when the call may
 * run; else the result to answer (a refusal's text, or why it could not be
 * recorded — nothing ran either way).
 */
static json_t *call_begin(struct mcp_call *call, ward_call *wc,
			  enum ward_subject subject, json_t *args)
{
	struct mcp_server *srv = call->srv;
	enum ward_mode requested = WARD_MODE_READ_ONLY;
	char detail[1024], *text = NULL;
	json_t *r;
	int err;

	err = ward_call_begin(wc);
	if (!err)
		return NULL;
	if (err != WARD_EREFUSED)
		return tool_error(srv, "%s",
				  detail_of(err, detail, sizeof(detail)));
	ward_mode_parse(&requested, arg_str(args, "sandbox_permissions"));
	if (ward_call_verdict(wc) == WARD_ESCALATION_UNAVAILABLE &&
	    call->no_elicitation)
		err = ward_render_widen_advice(&text, subject, requested,
					       ward_session_id(srv->session));
	else
		err = ward_call_render_refusal(&text, wc);
	if (err)
		return tool_error(srv, "%s", ward_error_last());
	r = result_text(srv, text, true, NULL);
	free(text);
	return r;
}

/* --- bash ----------------------------------------------------------------- */

/* The reasons @wc's enforcement is partial, as a JSON array. */
static json_t *partial_json(const ward_call *wc)
{
	const ward_plan *plan = wc ? ward_call_plan(wc) : NULL;
	char *const *v = plan ? ward_plan_partial(plan) : NULL;
	json_t *arr = json_array();

	for (size_t i = 0; arr && v && v[i]; i++)
		json_array_append_new(arr, ward_json_str(v[i]));
	return arr;
}

/*
 * The `sandbox` object of a result (@runner_name NULL: @runner's), with
 * why enforcement is partial (the call's plan; none for the fence).
 */
static json_t *sandbox_json(enum ward_mode mode, enum ward_runner runner,
			    const char *runner_name, enum ward_enforcement enf,
			    bool denied, const ward_call *wc)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:o}", "mode",
			 ward_mode_name(mode), "runner",
			 runner_name ? runner_name : ward_runner_name(runner),
			 "enforcement", ward_enforcement_name(enf), "denied",
			 denied, "partial", partial_json(wc));
}

/* What a run (or a task read) shows. */
struct run_view {
	const char *out, *err;
	size_t out_len, err_len, out_dropped, err_dropped;
	/* Where the middle was cut (when @heads; else half the bound). */
	size_t out_head, err_head;
	bool heads;
	const ward_result *res; /* NULL: a task still running */
	const char *task_id;
	enum ward_mode mode;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	unsigned long timeout_ms;
	/* The timeout was the no-progress default (MCP_TIMEOUT_NO_PROGRESS_MS),
	 * not the model's. */
	bool clamped;
	const ward_call *call;
};

/* @line (consumed; nothing when empty) appended to *@text on a line of
 * its own. */
static void append_line(char **text, char *line)
{
	char *both = NULL;

	if (*line) {
		if (asprintf(&both, "%s\n%s", *text, line) < 0)
			mcp_oom();
		free(*text);
		*text = both;
	}
	free(line);
}

static json_t *run_result(struct mcp_server *srv, const struct run_view *v)
{
	struct ward_render_run rr;
	size_t head = MCP_CAPTURE_LIMIT - MCP_CAPTURE_LIMIT / 2;
	const ward_result *res = v->res;
	bool denied = res && ward_call_denied(v->call);
	enum ward_mode mode = res ? ward_result_mode(res) : v->mode;
	int code = res ? ward_result_exit_code(res) : -1;
	int sig = res ? ward_result_signal(res) : 0;
	json_t *st;
	char *text = NULL;

	memset(&rr, 0, sizeof(rr));
	rr.out = v->out;
	rr.out_len = v->out_len;
	rr.out_head = v->heads ? v->out_head : head;
	rr.out_dropped = v->out_dropped;
	rr.err = v->err;
	rr.err_len = v->err_len;
	rr.err_head = v->heads ? v->err_head : head;
	rr.err_dropped = v->err_dropped;
	rr.running = !res;
	rr.task_id = v->task_id;
	rr.exit_code = code;
	rr.signal = sig;
	rr.timed_out = res && ward_result_timed_out(res);
	rr.timeout_ms = v->timeout_ms;
	/* The denial text is the call's (what was refused, by which rule or
	 * mode, and the hint or advice for this client). */
	rr.denied = false;
	rr.mode = mode;
	if (ward_render_run(&text, &rr) != 0)
		mcp_oom();
	if (denied) {
		char *dt = NULL;

		if (ward_call_render_denial(&dt, v->call) != 0)
			mcp_oom();
		append_line(&text, dt);
	}
	if (res) {
		/* What the network refused (render.c). */
		char *nt = NULL;

		if (ward_call_render_network(&nt, v->call) != 0)
			mcp_oom();
		append_line(&text, nt);
	}
	if (res && v->clamped && ward_result_timed_out(res)) {
		/* It would have outlived the client's wait: say where it
		 * belongs. */
		char *adv = NULL;

		if (ward_render_foreground_clamped(&adv, v->timeout_ms) != 0)
			mcp_oom();
		append_line(&text, adv);
	}
	if (res && ward_result_sandbox_ended(res)) {
		/* The sandbox ended the command: the output so far, then
		 * what happened (never mistaken for the command's status). */
		char *why = NULL, *both = NULL;

		if (ward_render_sandbox_ended(
			&why, ward_result_sandbox_ended(res)) != 0 ||
		    asprintf(&both, "%s\n%s", text, why) < 0)
			mcp_oom();
		free(text);
		free(why);
		text = both;
	}
	if (res && ward_call_stopped(v->call)) {
		char *stop = NULL;

		if (ward_render_stopped(&stop, WARD_SUBJECT_COMMAND,
					ward_call_stopped(v->call) ==
					    WARD_STOP_SHUTDOWN,
					true) != 0)
			mcp_oom();
		append_line(&text, stop);
	}

	st = json_pack(
	    "{s:o, s:o, s:b, s:b, s:o}", "exit_code",
	    res && sig == 0 && code >= 0 ? json_integer(code) : json_null(),
	    "signal", sig > 0 ? json_integer(sig) : json_null(), "timed_out",
	    rr.timed_out, "escalated", ward_call_escalated(v->call), "sandbox",
	    sandbox_json(mode, res ? ward_result_runner(res) : v->runner, NULL,
			 res ? ward_result_enforcement(res) : v->enforcement,
			 denied, v->call));
	if (st)
		set_new(st, "denials",
			res ? ward_json_call_denials(v->call) : json_array());
	if (st && res)
		set_new(st, "network", ward_json_call_network(v->call));
	if (st && v->task_id) {
		set_new(st, "task_id", json_string(v->task_id));
		set_new(st, "running", json_boolean(!res));
	}
	/* The guard could not take what the command left out of the
	 * workspace: the call failed (the notes in the text say what). */
	if (st && res && ward_result_guard_failed(res))
		set_new(st, "guard_failed", json_true());
	{
		json_t *r = result_text(
		    srv, text, res && ward_result_guard_failed(res), st);

		free(text);
		return r;
	}
}

/*
 * The command did not run: the sandbox is unavailable or broke, or the
 * executor failed, or the call was stopped before it started (the call
 * has recorded it). An isError result.
 */
static json_t *not_run(struct mcp_server *srv, int err, const char *detail,
		       const ward_call *wc)
{
	char *text = NULL;
	json_t *r;

	if (err == WARD_ESTOPPED) {
		/* Stopped, never "the sandbox is unavailable". */
		if (ward_render_stopped(&text, WARD_SUBJECT_COMMAND,
					ward_call_stopped(wc) !=
					    WARD_STOP_CANCELLED,
					false) != 0)
			mcp_oom();
		r = result_text(srv, text, true, NULL);
		free(text);
		return r;
	}

	if (err == WARD_EUNAVAILABLE || err == WARD_ERUNNER) {
		if (ward_render_unavailable(&text, WARD_SUBJECT_COMMAND,
					    detail) != 0)
			mcp_oom();
		r = result_text(srv, text, true, NULL);
		free(text);
		return r;
	}
	return tool_error(srv, "the command could not be started: %s", detail);
}

/* Milliseconds since @t0 (CLOCK_MONOTONIC). */
static unsigned long since_ms(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (unsigned long)((now.tv_sec - t0->tv_sec) * 1000L +
			       (now.tv_nsec - t0->tv_nsec) / 1000000L);
}

/*
 * Wait for @wc's task to end, for at most @max_ms (0: until it ends; the
 * command's own timeout bounds that). While the request carries a
 * progress token, every MCP_PROGRESS_EVERY_MS it gets
 * notifications/progress with the time elapsed and the bytes of output so
 * far — clients reset their request timeout on it, so a long command or a
 * long wait is not cut short by the client's 60 s default. Returns as
 * ward_call_wait().
 */
static int wait_progress(struct mcp_call *call, ward_call *wc,
			 ward_result **res, unsigned long max_ms)
{
	unsigned long slice, el;
	unsigned long long out = 0, err_bytes = 0;
	struct timespec t0;
	char msg[160];
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		el = since_ms(&t0);
		slice = call->progress_token ? MCP_PROGRESS_EVERY_MS : 0;
		if (max_ms) {
			if (el >= max_ms)
				return ward_call_wait(wc, res, 1);
			if (!slice || max_ms - el < slice)
				slice = max_ms - el;
		}
		err = ward_call_wait(wc, res, slice);
		if (err != -ETIMEDOUT)
			return err;
		el = since_ms(&t0);
		if (max_ms && el >= max_ms)
			return err;
		ward_task_bytes(ward_call_task(wc), &out, &err_bytes);
		snprintf(msg, sizeof(msg),
			 "running for %lu s; %llu bytes of output so far",
			 el / 1000, out + err_bytes);
		mcp_progress(call, (double)el / 1000.0, msg);
	}
}

/* --- background tasks --------------------------------------------------- */

static struct mcp_bgtask *bg_get(struct mcp_server *srv, const char *id)
{
	struct mcp_bgtask *t;

	pthread_mutex_lock(&srv->lock);
	for (t = srv->tasks; t; t = t->next)
		if (strcmp(t->id, id) == 0)
			break;
	if (t)
		t->refs++;
	pthread_mutex_unlock(&srv->lock);
	return t;
}

/* Stop @t (if it still runs), record its end, free it (the call does). */
static void bg_destroy(struct mcp_server *srv, struct mcp_bgtask *t)
{
	(void)srv;
	ward_call_free(t->call);
	free(t);
}

static void bg_put(struct mcp_server *srv, struct mcp_bgtask *t)
{
	bool last;

	pthread_mutex_lock(&srv->lock);
	last = --t->refs == 0 && t->unlinked;
	pthread_mutex_unlock(&srv->lock);
	if (last)
		bg_destroy(srv, t);
}

/* Remove @t from the table (srv->lock held). */
static void bg_unlink_locked(struct mcp_server *srv, struct mcp_bgtask *t)
{
	if (t->unlinked)
		return;
	for (struct mcp_bgtask **pp = &srv->tasks; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	t->unlinked = true;
	srv->ntasks--;
}

/*
 * Reserve room for one more task: when the table is full, the oldest task
 * whose end was already reported is dropped. False when every task still
 * runs (or has news not yet read). The slot stays taken until bg_add()
 * fills it or bg_release() gives it back: calls run concurrently, and a
 * check alone would let every one of them pass before any task is added.
 */
static bool bg_reserve(struct mcp_server *srv)
{
	struct mcp_bgtask *victim = NULL;
	bool ok;

	pthread_mutex_lock(&srv->lock);
	if (srv->ntasks + srv->nreserved >= MCP_MAX_TASKS) {
		for (struct mcp_bgtask *t = srv->tasks; t; t = t->next)
			if (t->ended_seen && t->refs == 0)
				victim = t; /* the list is newest first */
		if (victim)
			bg_unlink_locked(srv, victim);
	}
	ok = srv->ntasks + srv->nreserved < MCP_MAX_TASKS;
	if (ok)
		srv->nreserved++;
	pthread_mutex_unlock(&srv->lock);
	if (victim)
		bg_destroy(srv, victim);
	return ok;
}

/* Give back a slot bg_reserve() took (the task was never added). */
static void bg_release(struct mcp_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	srv->nreserved--;
	pthread_mutex_unlock(&srv->lock);
}

/* Add @wc's task (the call is owned from here on) in the slot
 * bg_reserve() took. */
static json_t *bg_add(struct mcp_call *call, ward_call *wc,
		      unsigned long timeout_ms)
{
	struct mcp_server *srv = call->srv;
	struct mcp_bgtask *t = calloc(1, sizeof(*t));
	ward_task *task = ward_call_task(wc);
	char *text = NULL;
	bool eof;
	json_t *st, *r;

	if (!t)
		mcp_oom();
	t->call = wc;
	t->timeout_ms = timeout_ms;
	pthread_mutex_lock(&srv->lock);
	srv->nreserved--; /* the slot bg_reserve() took is now @t's */
	eof = srv->eof;
	if (!eof) {
		snprintf(t->id, sizeof(t->id), "t%lu", ++srv->next_task);
		t->next = srv->tasks;
		srv->tasks = t;
		srv->ntasks++;
	}
	pthread_mutex_unlock(&srv->lock);
	if (eof) {
		bg_destroy(srv, t);
		return tool_error(srv, "the server is shutting down");
	}
	if (ward_render_task_started(&text, t->id, (long)ward_task_pid(task)) !=
	    0)
		mcp_oom();
	st = json_pack("{s:s, s:b, s:I, s:b, s:o}", "task_id", t->id, "running",
		       1, "pid", (json_int_t)ward_task_pid(task), "escalated",
		       ward_call_escalated(wc), "sandbox",
		       sandbox_json(ward_task_mode(task),
				    ward_task_runner(task), NULL,
				    ward_task_enforcement(task), false, wc));
	r = result_text(srv, text, false, st);
	free(text);
	return r;
}

void mcp_tasks_stop_all(struct mcp_server *srv)
{
	struct mcp_bgtask *list, *t, *next, *mine = NULL;

	pthread_mutex_lock(&srv->lock);
	list = srv->tasks;
	srv->tasks = NULL;
	srv->ntasks = 0;
	for (t = list; t; t = next) {
		next = t->next;
		t->unlinked = true;
		/* Recorded as stopped by the shutdown, not as a plain kill. */
		ward_call_stop(t->call, WARD_STOP_SHUTDOWN);
		/* A worker still using it frees it (bg_put). */
		if (t->refs == 0) {
			t->next = mine;
			mine = t;
		} else {
			ward_task_kill(ward_call_task(t->call), SIGKILL);
		}
	}
	pthread_mutex_unlock(&srv->lock);
	for (t = mine; t; t = next) {
		next = t->next;
		bg_destroy(srv, t);
	}
}

/* --- bash ------------------------------------------------------------------ */

static json_t *run_bash(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	struct ward_exec_options xo = WARD_EXEC_OPTIONS_INIT;
	const char *command = arg_str(args, "command");
	bool bg = arg_bool(args, "run_in_background", false);
	long long timeout = arg_int(args, "timeout_ms", -1);
	ward_result *res = NULL;
	ward_call *wc = NULL;
	char detail[1024];
	char *argv[] = {"bash", "-c", (char *)command, NULL};
	bool reserved = false, clamped = false;
	json_t *r;
	int err;

	if (!*command)
		return tool_error(srv, "invalid arguments: \"command\" must "
				       "not be empty");
	if (bg && !bg_reserve(srv))
		return tool_error(srv,
				  "%d background tasks are still running or "
				  "unread; stop one with task_kill first",
				  MCP_MAX_TASKS);
	reserved = bg;
	wc = call_new(call, args, WARD_SUBJECT_COMMAND, "bash", argv, NULL,
		      NULL, arg_str(args, "workdir"), &r);
	if (!wc)
		goto out_release;
	r = call_begin(call, wc, WARD_SUBJECT_COMMAND, args);
	if (r)
		goto out_call;

	xo.capture_limit = MCP_CAPTURE_LIMIT;
	/* A client that follows progress waits as long as the command runs;
	 * one that does not gets its result before its own timeout. */
	clamped = timeout <= 0 && !bg && !call->progress_token;
	xo.timeout_ms = timeout > 0 ? (unsigned long)timeout
			: bg	    ? 0
			: clamped   ? MCP_TIMEOUT_NO_PROGRESS_MS
				    : MCP_TIMEOUT_DEFAULT_MS;
	/* Descendants die with the call (runners without a pid namespace);
	 * calls run concurrently here: the per-call cgroup only, never the
	 * process-wide subreaper. */
	xo.contain = WARD_CONTAIN_CGROUP;
	if (mcp_call_cancelled(call)) {
		r = tool_error(srv, "cancelled");
		goto out_call;
	}
	err = ward_call_start(wc, &xo);
	if (err) {
		r = not_run(srv, err, detail_of(err, detail, sizeof(detail)),
			    wc);
		goto out_call;
	}
	if (bg) {
		r = bg_add(call, wc, xo.timeout_ms);
		wc = NULL; /* the task table owns it */
		reserved = false;
		goto out_release;
	}

	mcp_call_attach(call, wc);
	err = wait_progress(call, wc, &res, 0);
	if (err)
		detail_of(err, detail, sizeof(detail));
	mcp_call_attach(call, NULL);
	if (err) {
		r = not_run(srv, err, detail, wc);
		goto out_call;
	}
	{
		struct run_view v;

		memset(&v, 0, sizeof(v));
		v.out = ward_result_stdout(res, &v.out_len);
		v.err = ward_result_stderr(res, &v.err_len);
		v.out_dropped = ward_result_stdout_dropped(res);
		v.err_dropped = ward_result_stderr_dropped(res);
		v.res = res;
		v.timeout_ms = xo.timeout_ms;
		v.clamped = clamped;
		v.call = wc;
		r = run_result(srv, &v);
	}
	ward_result_free(res);
out_call:
	ward_call_free(wc);
out_release:
	if (reserved)
		bg_release(srv);
	return r;
}

/* --- task_output, task_kill ------------------------------------------------ */

static json_t *no_task(struct mcp_server *srv, const char *id)
{
	return tool_error(srv,
			  "invalid arguments: there is no background task "
			  "\"%.64s\" (it may have been stopped with "
			  "task_kill)",
			  id);
}

/* What @t wrote since the last read and, when @res, how it ended. */
static json_t *task_view(struct mcp_server *srv, struct mcp_bgtask *t,
			 const ward_result *res)
{
	ward_task *task = ward_call_task(t->call);
	struct ward_task_output o;
	struct run_view v;
	json_t *r;

	memset(&v, 0, sizeof(v));
	/* What came since the last read, and what of it was dropped from
	 * the middle ("[… N bytes omitted …]"). */
	if (ward_task_read_output(&o, task) != 0)
		return tool_error(srv, "%s", ward_error_last());
	v.out = o.out;
	v.out_len = o.out_len;
	v.out_head = o.out_head;
	v.out_dropped = o.out_dropped;
	v.err = o.err;
	v.err_len = o.err_len;
	v.err_head = o.err_head;
	v.err_dropped = o.err_dropped;
	v.heads = true;
	v.res = res;
	v.task_id = t->id;
	v.mode = ward_task_mode(task);
	v.runner = ward_task_runner(task);
	v.enforcement = ward_task_enforcement(task);
	v.timeout_ms = t->timeout_ms;
	v.call = t->call;
	r = run_result(srv, &v);
	ward_task_output_clear(&o);
	return r;
}

static json_t *run_task_output(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	const char *id = arg_str(args, "task_id");
	long long wait_ms = arg_int(args, "wait_ms", 0);
	struct mcp_bgtask *t = bg_get(srv, id);
	ward_result *res = NULL;
	char detail[1024];
	json_t *r;
	int err;

	if (!t)
		return no_task(srv, id);
	/* wait_ms 0 means "now": the shortest wait there is. The call
	 * records the task's end the first time it is seen. A long wait
	 * reports progress like a foreground command. */
	if (wait_ms > 0)
		err =
		    wait_progress(call, t->call, &res, (unsigned long)wait_ms);
	else
		err = ward_call_wait(t->call, &res, 1);
	if (err && err != -ETIMEDOUT) {
		detail_of(err, detail, sizeof(detail));
		r = not_run(srv, err, detail, t->call);
	} else {
		if (res) {
			pthread_mutex_lock(&srv->lock);
			t->ended_seen = true;
			pthread_mutex_unlock(&srv->lock);
		}
		r = task_view(srv, t, res);
	}
	ward_result_free(res);
	bg_put(srv, t);
	return r;
}

static json_t *run_task_kill(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	const char *id = arg_str(args, "task_id");
	struct mcp_bgtask *t = bg_get(srv, id);
	ward_result *res = NULL;
	char detail[1024];
	json_t *r;
	int err;

	if (!t)
		return no_task(srv, id);
	/* SIGTERM first, so it may clean up; SIGKILL after 2 s. */
	ward_task_kill(ward_call_task(t->call), SIGTERM);
	err = ward_call_wait(t->call, &res, 2000);
	if (err == -ETIMEDOUT) {
		ward_task_kill(ward_call_task(t->call), SIGKILL);
		err = ward_call_wait(t->call, &res, 0);
	}
	if (err) {
		detail_of(err, detail, sizeof(detail));
		r = not_run(srv, err, detail, t->call);
	} else {
		r = task_view(srv, t, res);
	}
	ward_result_free(res);
	pthread_mutex_lock(&srv->lock);
	bg_unlink_locked(srv, t);
	pthread_mutex_unlock(&srv->lock);
	bg_put(srv, t);
	return r;
}

/* --- the file tools -------------------------------------------------------- */

/* A file tool's call, begun: the fence's policy in *policy. */
struct fs_call {
	ward_call *wc;
	const ward_policy *policy;
	bool recorded; /* its end is recorded (fs_record) */
};

/*
 * Begin a file call: the policy from the session as it is now, call/start,
 * and the escalation when asked. NULL when the operation may run.
 */
static json_t *fs_begin(struct mcp_call *call, struct fs_call *fc, json_t *args,
			const char *op, const char *path)
{
	char *paths[] = {(char *)path, NULL};
	json_t *r = NULL;

	memset(fc, 0, sizeof(*fc));
	fc->wc = call_new(call, args, WARD_SUBJECT_OPERATION, "fs", NULL, op,
			  paths, NULL, &r);
	if (!fc->wc)
		return r;
	r = call_begin(call, fc->wc, WARD_SUBJECT_OPERATION, args);
	if (!r && ward_call_fs_begin(fc->wc, &fc->policy) != 0)
		r = tool_error(call->srv, "%s", ward_error_last());
	return r;
}

/* Record how the file call ended, once (a failure to record is logged):
 * this also gathers its denial report. */
static void fs_record(struct mcp_server *srv, struct fs_call *fc, int err,
		      const struct ward_fs_denial *denial)
{
	if (fc->recorded || !fc->wc || !fc->policy)
		return;
	fc->recorded = true;
	if (ward_call_fs_end(fc->wc, err, denial) != 0)
		mcp_log(srv, "warning", "%s", ward_error_last());
}

/* The end of a file call: recorded, then freed. */
static void fs_end(struct mcp_server *srv, struct fs_call *fc, int err,
		   const struct ward_fs_denial *denial)
{
	fs_record(srv, fc, err, denial);
	ward_call_free(fc->wc);
	fc->wc = NULL;
}

/* How a fence call ended badly: the call's denial text, or the error. */
static json_t *fs_failed(struct mcp_server *srv, struct fs_call *fc, int err,
			 const struct ward_fs_denial *denial, const char *path)
{
	enum ward_mode mode = ward_policy_mode(fc->policy);
	char detail[1024], *text = NULL;
	json_t *r;

	if (err == WARD_ENOTTEXT) {
		/* The fence's own text names a CLI option. */
		if (ward_render_not_text(&text, WARD_SURFACE_MCP, path) != 0)
			mcp_oom();
		r = result_text(srv, text, true, NULL);
		free(text);
		return r;
	}
	if (err != WARD_EDENIED)
		return tool_error(srv, "%s",
				  detail_of(err, detail, sizeof(detail)));
	fs_record(srv, fc, err, denial);
	if (ward_call_render_denial(&text, fc->wc) != 0)
		mcp_oom();
	r = result_text(
	    srv, text, true,
	    json_pack("{s:s, s:s, s:o, s:o}", "operation",
		      ward_fs_op_name(denial->op), "reason",
		      ward_fs_reason_name(denial->reason), "sandbox",
		      sandbox_json(mode, WARD_RUNNER_NONE, "fsfence",
				   WARD_ENFORCEMENT_FULL, true, NULL),
		      "denials", ward_json_call_denials(fc->wc)));
	free(text);
	return r;
}

static json_t *fs_structured(const struct fs_call *fc)
{
	return json_pack(
	    "{s:b, s:o}", "escalated", ward_call_escalated(fc->wc), "sandbox",
	    sandbox_json(ward_policy_mode(fc->policy), WARD_RUNNER_NONE,
			 "fsfence", WARD_ENFORCEMENT_FULL, false, NULL));
}

/* How a change through the fence ended well: "wrote N bytes to PATH"… */
static json_t *fs_done(struct mcp_server *srv, struct fs_call *fc,
		       enum ward_fs_op op, const char *path, size_t n)
{
	char *text = NULL;
	json_t *r;

	if (ward_render_fs_done(&text, op, path, n) != 0)
		mcp_oom();
	r = result_text(srv, text, false, fs_structured(fc));
	free(text);
	return r;
}

/* The number of lines of @p[0..n): newlines, plus a last line without. */
static unsigned long long count_lines(const char *p, size_t n)
{
	unsigned long long lines = 0;

	for (size_t i = 0; i < n; i++)
		lines += p[i] == '\n';
	if (n && p[n - 1] != '\n')
		lines++;
	return lines;
}

/*
 * Where to cut @len bytes of text to at most @cap: after the last newline
 * that fits, else (one long line) at a UTF-8 character boundary.
 */
static size_t cut_at(const char *data, size_t len, size_t cap)
{
	size_t n = cap;

	if (len <= cap)
		return len;
	while (n > 0 && data[n - 1] != '\n')
		n--;
	if (n > 0)
		return n;
	n = cap;
	while (n > 0 && ((unsigned char)data[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/*
 * @len bytes of lines, the first of them line @first (from 1), each headed
 * by its number as `cat -n` writes it ("%6llu\t"): what a model quotes
 * back (compiler errors, offsets to read on from) and what the coding
 * agents' own read tools show. A malloc'd string.
 */
/* The bytes with_numbers() puts before a line numbered up to @last. */
static size_t prefix_width(unsigned long long last)
{
	size_t digits = 1;

	while (last >= 10) {
		last /= 10;
		digits++;
	}
	return (digits > 6 ? digits : 6) + 1;
}

static char *with_numbers(const char *data, size_t len,
			  unsigned long long first)
{
	char *buf = NULL;
	size_t blen = 0, pos = 0;
	FILE *f = open_memstream(&buf, &blen);

	if (!f)
		mcp_oom();
	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) + 1 : len - pos;

		fprintf(f, "%6llu\t", first++);
		fwrite(data + pos, 1, n, f);
		pos += n;
	}
	if (fclose(f) != 0 || !buf)
		mcp_oom();
	return buf;
}

static json_t *run_read_file(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	struct ward_fs_read_options ro = WARD_FS_READ_OPTIONS_INIT;
	struct ward_fs_content c = {NULL, 0, 0, false};
	struct ward_fs_denial denial;
	struct fs_call fc;
	const char *path = arg_str(args, "path");
	unsigned long long shown_lines, more_lines = 0, more_bytes = 0;
	char *more = NULL, *text = NULL, *body = NULL;
	bool numbers = arg_bool(args, "line_numbers", true);
	bool cut, continues, long_line;
	size_t shown;
	json_t *r, *st;
	int err = 0;

	r = fs_begin(call, &fc, args, "read", path);
	if (r)
		goto out;
	ro.offset = (uint64_t)arg_int(args, "offset", 0);
	ro.limit = (uint64_t)arg_int(args, "limit", 0);
	err = ward_fs_read(&c, &denial, fc.policy, path, &ro);
	if (err == -EFBIG && (!ro.limit || ro.limit > 1000)) {
		/* Too big to hold whole: a first part, counted in lines. */
		ro.limit = 1000;
		err = ward_fs_read(&c, &denial, fc.policy, path, &ro);
	}
	if (err == -EFBIG && ro.limit > 1) {
		/* Still too big: long lines; the first one at least. */
		ro.limit = 1;
		err = ward_fs_read(&c, &denial, fc.policy, path, &ro);
	}
	if (err == -EFBIG) {
		/* One line beyond the fence's bound: no offset/limit helps. */
		if (ward_render_read_line_too_large(&text, path,
						    ro.offset + 1) != 0)
			mcp_oom();
		r = result_text(srv, text, true, NULL);
		free(text);
		text = NULL;
		err = 0;
		goto out;
	}
	if (err) {
		r = fs_failed(srv, &fc, err, &denial, path);
		goto out;
	}
	/* The same discipline as bash: at most 64 KiB, cut on a line. */
	shown = cut_at(c.data, c.len, MCP_FILE_LIMIT);
	/* With the numbers inside the bound too (a few rounds: fewer lines
	 * shown, fewer prefixes). */
	for (int k = 0; numbers && k < 4; k++) {
		unsigned long long lines = count_lines(c.data, shown);
		size_t over = (size_t)lines * prefix_width(ro.offset + lines);

		if (shown + over <= MCP_FILE_LIMIT || over >= MCP_FILE_LIMIT)
			break;
		shown = cut_at(c.data, shown, MCP_FILE_LIMIT - over);
	}
	cut = shown < c.len;
	/* Cut inside the first line: it alone is longer than the bound. */
	long_line = cut && shown && c.data[shown - 1] != '\n';
	continues = cut || c.truncated;
	shown_lines = count_lines(c.data, shown);
	if (long_line) {
		const char *rest = c.data + shown;
		const char *nl = memchr(rest, '\n', c.len - shown);

		more_bytes =
		    nl ? (unsigned long long)(nl - rest) : c.len - shown;
		/* The next line exists when something follows the newline. */
		continues = c.truncated || (nl && nl + 1 < c.data + c.len);
	} else if (cut && !c.truncated) {
		/* Everything after the cut was read: it can be counted. */
		more_lines = count_lines(c.data + shown, c.len - shown);
		more_bytes = c.len - shown;
	}
	st = fs_structured(&fc);
	set_new(st, "file_size", json_integer((json_int_t)c.file_size));
	set_new(st, "truncated", json_boolean(continues || long_line));
	set_new(st, "lines", json_integer((json_int_t)shown_lines));
	if (continues)
		set_new(st, "next_offset",
			json_integer((json_int_t)(ro.offset + shown_lines)));
	if (long_line) {
		err = ward_render_read_long_line(&more, ro.offset + 1, shown,
						 more_bytes,
						 continues ? ro.offset + 1 : 0);
	} else if (!continues && (c.len || !ro.offset || !c.file_size)) {
		if (!numbers) {
			r = result_n(srv, c.data, c.len, false, st);
			goto out;
		}
		body = with_numbers(c.data, c.len, ro.offset + 1);
		r = result_text(srv, body, false, st);
		free(body);
		goto out;
	} else if (!continues) {
		/* An offset at or past the end: say so, not "". */
		err = ward_render_read_past_end(&more, ro.offset);
	} else {
		err = ward_render_read_truncated(&more, ro.offset + shown_lines,
						 more_lines, more_bytes);
	}
	if (err == 0 && numbers)
		body = with_numbers(c.data, shown, ro.offset + 1);
	if (err != 0 ||
	    asprintf(&text, "%.*s%s%s", (int)(body ? strlen(body) : shown),
		     body ? body : c.data,
		     shown && c.data[shown - 1] != '\n' ? "\n" : "", more) < 0)
		mcp_oom();
	r = result_text(srv, text, false, st);
	free(more);
	free(body);
	free(text);
out:
	fs_end(srv, &fc, err, &denial);
	ward_fs_content_clear(&c);
	return r;
}

static json_t *run_write_file(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	struct ward_fs_write_options wo = WARD_FS_WRITE_OPTIONS_INIT;
	struct ward_fs_denial denial;
	struct fs_call fc;
	const char *path = arg_str(args, "path");
	json_t *content = json_object_get(args, "content");
	size_t len = json_string_length(content);
	json_t *r;
	int err = 0;

	r = fs_begin(call, &fc, args, "write", path);
	if (r)
		goto out;
	wo.create_parents = arg_bool(args, "create_parents", true);
	err = ward_fs_write(&denial, fc.policy, path,
			    json_string_value(content), len, &wo);
	if (err) {
		r = fs_failed(srv, &fc, err, &denial, path);
		goto out;
	}
	r = fs_done(srv, &fc, WARD_FS_OP_WRITE, path, len);
out:
	fs_end(srv, &fc, err, &denial);
	return r;
}

/*
 * The one of argument @name and its alias @alias that was given, into
 * *@out; NULL, or the isError result when neither or both were.
 */
static json_t *one_of(struct mcp_server *srv, json_t *args, const char *name,
		      const char *alias, const char **out)
{
	const char *a = arg_str(args, name), *b = arg_str(args, alias);

	if (a && b)
		return tool_error(srv,
				  "invalid arguments: \"%s\" and \"%s\" are "
				  "the same argument: give one",
				  name, alias);
	if (!a && !b)
		return tool_error(srv,
				  "invalid arguments: missing \"%s\" (or "
				  "\"%s\")",
				  name, alias);
	*out = a ? a : b;
	return NULL;
}

static json_t *run_edit_file(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	struct ward_fs_edit_options eo = WARD_FS_EDIT_OPTIONS_INIT;
	struct ward_fs_denial denial;
	struct fs_call fc;
	const char *path = arg_str(args, "path");
	const char *old_text = NULL, *new_text = NULL;
	size_t n = 0;
	json_t *r;
	int err = 0;

	/* Checked before anything is recorded, like the other arguments. */
	r = one_of(srv, args, "old_text", "old_string", &old_text);
	if (!r)
		r = one_of(srv, args, "new_text", "new_string", &new_text);
	if (r)
		return r;
	r = fs_begin(call, &fc, args, "edit", path);
	if (r)
		goto out;
	eo.replace_all = arg_bool(args, "replace_all", false);
	err =
	    ward_fs_edit(&n, &denial, fc.policy, path, old_text, new_text, &eo);
	if (err) {
		r = fs_failed(srv, &fc, err, &denial, path);
		goto out;
	}
	r = fs_done(srv, &fc, WARD_FS_OP_EDIT, path, n);
out:
	fs_end(srv, &fc, err, &denial);
	return r;
}

static json_t *run_list_directory(struct mcp_call *call, json_t *args)
{
	struct mcp_server *srv = call->srv;
	struct ward_fs_list_options lo = WARD_FS_LIST_OPTIONS_INIT;
	struct ward_fs_listing l = {NULL, 0, false}, part;
	struct ward_fs_denial denial;
	struct fs_call fc;
	const char *path = arg_str(args, "path");
	long long depth = arg_int(args, "depth", 0);
	size_t limit = (size_t)arg_int(args, "limit", MCP_LIST_DEFAULT);
	char *text = NULL, *more = NULL, *both = NULL;
	json_t *r, *st;
	size_t k;
	int err = 0;

	if (!path || !*path)
		path = ".";
	r = fs_begin(call, &fc, args, "list", path);
	if (r)
		goto out;
	lo.recursive = arg_bool(args, "recursive", false) || depth > 1;
	lo.max_depth = depth > 0 ? (unsigned)depth : 0;
	/* The fence lists up to its own bound, so the entries past ours
	 * can be counted. */
	lo.max_entries = MCP_LIST_MAX;
	err = ward_fs_list(&l, &denial, fc.policy, path, &lo);
	if (err) {
		r = fs_failed(srv, &fc, err, &denial, path);
		goto out;
	}
	/* At most @limit entries and 64 KiB of text. */
	k = l.count < limit ? l.count : limit;
	for (;;) {
		part = l;
		part.count = k;
		part.truncated = false;
		free(text);
		text = NULL;
		if (ward_render_listing(&text, &part) != 0)
			mcp_oom();
		if (strlen(text) <= MCP_FILE_LIMIT - 256 || k == 0)
			break;
		k = k * (MCP_FILE_LIMIT - 256) / strlen(text) * 9 / 10;
	}
	if (k < l.count || l.truncated) {
		if (ward_render_list_truncated(&more, l.count - k,
					       l.truncated) != 0 ||
		    asprintf(&both, "%s%s%s", k ? text : "", k ? "\n" : "",
			     more) < 0)
			mcp_oom();
		free(text);
		text = both;
	}
	st = fs_structured(&fc);
	set_new(st, "entries", json_integer((json_int_t)k));
	set_new(st, "truncated", json_boolean(k < l.count || l.truncated));
	if (k < l.count || l.truncated)
		set_new(st, "more_entries",
			json_integer((json_int_t)(l.count - k)));
	r = result_text(srv, text, false, st);
out:
	free(text);
	free(more);
	fs_end(srv, &fc, err, &denial);
	ward_fs_listing_clear(&l);
	return r;
}

/* --- dispatch ---------------------------------------------------------- */

json_t *mcp_tools_call(struct mcp_call *call, const char *name, json_t *args,
		       int *code, const char **message)
{
	const struct tool_def *d = find_tool(name);
	json_t *empty = NULL, *r;

	if (!d) {
		*code = -32602;
		*message = "Unknown tool";
		return NULL;
	}
	if (!json_is_object(args))
		args = empty = json_object();
	r = check_args(call->srv, d, args);
	if (!r)
		r = d->run(call, args);
	json_decref(empty);
	return r;
}
