/*
 * ward's MCP server: the stdin loop, the protocol methods, worker
 * threads, and the orderly end at end of input or on a stop signal. What
 * the tools share with it (the writer, logging, per-call state,
 * approvals) is in core.c, the tools in tools.c; see mcp_internal.h for
 * the shape. The command line and the set-up are the front end's
 * (src/cli/cmd_mcp.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ward/json.h"
#include "ward/render.h"

#include "jsonrpc.h"
#include "mcp_internal.h"
#include "util/stopsig.h"

/* The longest message line accepted on stdin. */
#define MCP_MAX_LINE (4u * 1024u * 1024u)
/* Worker threads at once; a call beyond that is refused. */
#define MCP_MAX_WORKERS 64
/* Stack of a worker thread (musl's default is too small for the fence). */
#define MCP_WORKER_STACK (1024u * 1024u)

/* Revisions this server speaks, newest first. */
static const char *const protocols[] = {"2025-11-25", "2025-06-18",
					"2025-03-26"};


/* --- the methods ------------------------------------------------------ */

static void do_initialize(struct mcp_server *srv, struct ward_jr_msg *m)
{
	const char *asked =
	    json_string_value(json_object_get(m->params, "protocolVersion"));
	json_t *caps = json_object_get(m->params, "capabilities");
	json_t *elicit = json_object_get(caps, "elicitation");
	json_t *client = json_object_get(m->params, "clientInfo");
	const char *version = protocols[0];
	char *instructions = NULL;
	enum ward_mode mode = srv->defaults.mode;
	enum ward_approval_policy approval = srv->defaults.approval;
	enum ward_knob_source src;
	json_t *result, *event;
	bool form;
	char *text;

	if (!json_is_object(m->params) || !asked ||
	    (caps && !json_is_object(caps))) {
		mcp_send_error(srv, m->id, WARD_JR_INVALID_PARAMS,
			   "Invalid params: initialize needs "
			   "\"protocolVersion\" (a string) and "
			   "\"capabilities\" (an object)");
		return;
	}
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
		if (strcmp(asked, protocols[i]) == 0)
			version = protocols[i];
	/* Form mode: declared as "form", or an empty object (the 2025-06-18
	 * form, which had no modes). */
	form = json_is_object(elicit) && (json_object_get(elicit, "form") ||
					  !json_object_get(elicit, "url"));
	pthread_mutex_lock(&srv->lock);
	snprintf(srv->protocol, sizeof(srv->protocol), "%s", version);
	srv->elicitation = form && strcmp(version, "2025-06-18") >= 0;
	pthread_mutex_unlock(&srv->lock);

	mcp_session_knobs(srv, &mode, &src, &approval);
	/* The declaration of `never` names sandbox_permissions: only for a
	 * client that is offered it (one that can elicit). */
	if (ward_render_instructions(
		&instructions, mcp_escalation_fields(srv, mode, approval),
		srv->elicitation ? approval : WARD_APPROVAL_ASK) != 0)
		mcp_oom();
	result =
	    json_pack("{s:s, s:{s:{s:b}, s:{}}, s:{s:s, s:s, s:s}}",
		      "protocolVersion", version, "capabilities", "tools",
		      "listChanged", 1, "logging", "serverInfo", "name", "ward",
		      "title", "ward sandbox", "version", WARD_VERSION);
	if (result)
		json_object_set_new(result, "instructions",
				    json_string(instructions));
	free(instructions);
	mcp_send(srv, ward_jr_result(m->id, result));

	event =
	    json_pack("{s:s, s:s, s:s, s:b, s:O?}", "type", "mcp/initialize",
		      "protocol", version, "asked", asked, "elicitation", form,
		      "client", json_is_object(client) ? client : NULL);
	text = event ? json_dumps(event, JSON_COMPACT) : NULL;
	if (!text || ward_session_append_json(srv->session, text) != 0)
		mcp_log(srv, "warning",
			"cannot record the client in session "
			"%s: %s",
			ward_session_id(srv->session), ward_error_last());
	free(text);
	json_decref(event);
	mcp_log(srv, "info", "client connected (protocol %s, elicitation %s)",
		version, srv->elicitation ? "yes" : "no");
}

static void do_tools_list(struct mcp_server *srv, struct ward_jr_msg *m)
{
	json_t *result = mcp_tools_list(srv);

	if (!result) {
		mcp_send_error(srv, m->id, WARD_JR_INTERNAL_ERROR,
			   ward_error_last());
		return;
	}
	mcp_send(srv, ward_jr_result(m->id, result));
}

static void do_set_level(struct mcp_server *srv, struct ward_jr_msg *m)
{
	const char *level =
	    json_string_value(json_object_get(m->params, "level"));
	int idx = level ? mcp_log_level(level) : -1;

	if (idx < 0) {
		mcp_send_error(srv, m->id, WARD_JR_INVALID_PARAMS,
			   "Invalid params: \"level\" must be one of debug, "
			   "info, notice, warning, error, critical, alert, "
			   "emergency");
		return;
	}
	pthread_mutex_lock(&srv->lock);
	srv->log_level = idx;
	pthread_mutex_unlock(&srv->lock);
	mcp_send(srv, ward_jr_result(m->id, json_object()));
}

static void *worker_main(void *arg)
{
	struct mcp_call *call = arg;
	struct mcp_server *srv = call->srv;
	const char *name =
	    json_string_value(json_object_get(call->params, "name"));
	json_t *args = json_object_get(call->params, "arguments");
	const char *message = NULL;
	json_t *result;
	bool cancelled;
	int code = 0;

	result = mcp_tools_call(call, name, args, &code, &message);

	pthread_mutex_lock(&srv->lock);
	cancelled = call->cancelled;
	for (struct mcp_call **pp = &srv->calls; *pp; pp = &(*pp)->next) {
		if (*pp == call) {
			*pp = call->next;
			break;
		}
	}
	pthread_mutex_unlock(&srv->lock);

	/* A cancelled request is not answered (the client stopped
	 * waiting). */
	if (cancelled)
		json_decref(result);
	else if (result)
		mcp_send(srv, ward_jr_result(call->id, result));
	else
		mcp_send_error(srv, call->id, code ? code : WARD_JR_INTERNAL_ERROR,
			   message ? message : ward_error_last());

	json_decref(call->id);
	json_decref(call->params);
	json_decref(call->progress_token);
	free(call);

	pthread_mutex_lock(&srv->lock);
	srv->active--;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

static void do_tools_call(struct mcp_server *srv, struct ward_jr_msg *m)
{
	json_t *name = json_object_get(m->params, "name");
	json_t *args = json_object_get(m->params, "arguments");
	json_t *token;
	struct mcp_call *call;
	pthread_attr_t attr;
	pthread_t thread;
	char msg[256];
	bool busy = false;
	int rc;

	if (!json_is_object(m->params) || !json_is_string(name) ||
	    (args && !json_is_object(args) && !json_is_null(args))) {
		mcp_send_error(srv, m->id, WARD_JR_INVALID_PARAMS,
			   "Invalid params: tools/call needs \"name\" (a "
			   "string) and \"arguments\" (an object)");
		return;
	}
	if (!mcp_tools_known(json_string_value(name))) {
		snprintf(msg, sizeof(msg), "Unknown tool: %.128s",
			 json_string_value(name));
		mcp_send_error(srv, m->id, WARD_JR_INVALID_PARAMS, msg);
		return;
	}
	call = calloc(1, sizeof(*call));
	if (!call) {
		mcp_send_error(srv, m->id, WARD_JR_INTERNAL_ERROR, "out of memory");
		return;
	}
	/* The worker gets its own copies: jansson's reference counts are
	 * not meant to be shared between threads. */
	call->srv = srv;
	call->id = json_deep_copy(m->id);
	call->params = json_deep_copy(m->params);
	token = json_object_get(json_object_get(call->params, "_meta"),
				"progressToken");
	if (json_is_string(token) || json_is_integer(token))
		call->progress_token = json_incref(token);
	if (!call->id || !call->params) {
		mcp_send_error(srv, m->id, WARD_JR_INTERNAL_ERROR, "out of memory");
		goto out_free;
	}

	pthread_mutex_lock(&srv->lock);
	for (struct mcp_call *c = srv->calls; c; c = c->next)
		busy |= json_equal(c->id, m->id);
	if (busy) {
		pthread_mutex_unlock(&srv->lock);
		mcp_send_error(srv, m->id, WARD_JR_INVALID_REQUEST,
			   "Invalid Request: a request with this id is "
			   "still in progress");
		goto out_free;
	}
	if (srv->active >= MCP_MAX_WORKERS) {
		pthread_mutex_unlock(&srv->lock);
		mcp_send_error(srv, m->id, WARD_JR_INTERNAL_ERROR,
			   "too many tool calls in progress; retry when one "
			   "has finished");
		goto out_free;
	}
	call->next = srv->calls;
	srv->calls = call;
	srv->active++;
	pthread_mutex_unlock(&srv->lock);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, MCP_WORKER_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&thread, &attr, worker_main, call);
	pthread_attr_destroy(&attr);
	if (rc == 0)
		return;

	pthread_mutex_lock(&srv->lock);
	srv->calls = call->next; /* still first: only this thread links */
	srv->active--;
	pthread_mutex_unlock(&srv->lock);
	snprintf(msg, sizeof(msg), "cannot start a thread: %s", strerror(rc));
	mcp_send_error(srv, m->id, WARD_JR_INTERNAL_ERROR, msg);
out_free:
	json_decref(call->id);
	json_decref(call->params);
	json_decref(call->progress_token);
	free(call);
}

static void do_request(struct mcp_server *srv, struct ward_jr_msg *m)
{
	char msg[256];

	if (m->params && !json_is_object(m->params)) {
		mcp_send_error(srv, m->id, WARD_JR_INVALID_PARAMS,
			   "Invalid params: \"params\" must be an object");
		return;
	}
	if (strcmp(m->method, "initialize") == 0)
		do_initialize(srv, m);
	else if (strcmp(m->method, "ping") == 0)
		mcp_send(srv, ward_jr_result(m->id, json_object()));
	else if (strcmp(m->method, "tools/list") == 0)
		do_tools_list(srv, m);
	else if (strcmp(m->method, "tools/call") == 0)
		do_tools_call(srv, m);
	else if (strcmp(m->method, "logging/setLevel") == 0)
		do_set_level(srv, m);
	else {
		snprintf(msg, sizeof(msg), "Method not found: %.128s",
			 m->method);
		mcp_send_error(srv, m->id, WARD_JR_METHOD_NOT_FOUND, msg);
	}
}

/* notifications/cancelled: stop that call (its process group dies). */
static void do_cancelled(struct mcp_server *srv, struct ward_jr_msg *m)
{
	json_t *id = json_object_get(m->params, "requestId");
	bool found = false;

	if (!ward_jr_id_valid(id))
		return;
	pthread_mutex_lock(&srv->lock);
	for (struct mcp_call *c = srv->calls; c; c = c->next) {
		if (!json_equal(c->id, id))
			continue;
		c->cancelled = true;
		if (c->wc)
			ward_call_stop(c->wc, WARD_STOP_CANCELLED);
		found = true;
	}
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	if (found)
		mcp_log(srv, "info", "a tool call was cancelled by the client");
}

static void do_notification(struct mcp_server *srv, struct ward_jr_msg *m)
{
	if (strcmp(m->method, "notifications/initialized") == 0) {
		pthread_mutex_lock(&srv->lock);
		srv->initialized = true;
		pthread_mutex_unlock(&srv->lock);
	} else if (strcmp(m->method, "notifications/cancelled") == 0) {
		do_cancelled(srv, m);
	}
	/* Any other notification needs nothing from us. */
}

/* An answer to one of our requests: hand it to the waiting worker. */
static void do_response(struct mcp_server *srv, struct ward_jr_msg *m)
{
	bool found = false;

	pthread_mutex_lock(&srv->lock);
	/* A copy: the waiting worker owns it (see do_tools_call). */
	found = m->id && ward_jr_pending_answer(srv->pending, m->id, m->root);
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	if (!found)
		mcp_log(srv, "debug",
			"ignored a response to no request of "
			"ours");
}

/* One line from stdin (NULL: one longer than MCP_MAX_LINE, skipped). */
static void on_line(void *ctx, const char *line, size_t len)
{
	struct mcp_server *srv = ctx;
	struct ward_jr_msg m;
	char msg[160];

	if (!line) {
		snprintf(msg, sizeof(msg),
			 "Invalid Request: message longer than %u bytes; "
			 "skipped up to its newline",
			 MCP_MAX_LINE);
		mcp_send_error(srv, NULL, WARD_JR_INVALID_REQUEST, msg);
		return;
	}
	if (ward_jr_parse(&m, line, len) != 0) {
		mcp_send_error(srv, NULL, WARD_JR_INTERNAL_ERROR, "out of memory");
		return;
	}
	switch (m.kind) {
	case WARD_JR_EMPTY:
		break;
	case WARD_JR_INVALID:
		mcp_send_error(srv, m.id, m.code, m.message);
		break;
	case WARD_JR_REQUEST:
		do_request(srv, &m);
		break;
	case WARD_JR_NOTIFICATION:
		do_notification(srv, &m);
		break;
	case WARD_JR_RESPONSE:
		do_response(srv, &m);
		break;
	}
	ward_jr_msg_clear(&m);
}

/*
 * The startup line: the runner, enforcement and reasons a call made now
 * would actually get — the plan of a call under the session's mode, not
 * merely what the chain could offer.
 */
static void print_startup(struct mcp_server *srv)
{
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	char *argv[] = {"true", NULL};
	const ward_plan *plan;
	ward_call *wc = NULL;

	co.config = srv->o->config;
	co.provider = srv->o->provider;
	co.session = srv->session;
	co.surface = WARD_SURFACE_MCP;
	co.argv = argv;
	if (ward_call_new(&wc, &co) != 0) {
		fprintf(stderr, "ward mcp: session %s: %s\n",
			ward_session_id(srv->session), ward_error_last());
		return;
	}
	plan = ward_call_plan(wc);
	fprintf(stderr, "ward mcp: session %s, workspace %s, mode %s, ",
		ward_session_id(srv->session),
		ward_policy_workspace(srv->o->policy),
		ward_mode_name(ward_call_mode(wc)));
	if (!plan)
		fprintf(stderr, "runner none (%s; commands will not run)\n",
			ward_call_plan_detail(wc));
	else if (ward_plan_runner(plan) == WARD_RUNNER_NONE)
		fprintf(stderr, "runner none (danger-full-access: commands "
				"run unconfined)\n");
	else
		fprintf(stderr, "runner %s, enforcement %s\n",
			ward_runner_name(ward_plan_runner(plan)),
			ward_enforcement_name(ward_plan_enforcement(plan)));
	for (char *const *w = plan ? ward_plan_partial(plan) : NULL; w && *w;
	     w++)
		fprintf(stderr, "ward mcp: partial enforcement: %s\n", *w);
	ward_call_free(wc);
}

static void record_event(struct mcp_server *srv, json_t *event)
{
	char *text = event ? json_dumps(event, JSON_COMPACT) : NULL;

	if (!text || ward_session_append_json(srv->session, text) != 0)
		fprintf(stderr, "ward mcp: cannot record in session %s: %s\n",
			ward_session_id(srv->session), ward_error_last());
	free(text);
	json_decref(event);
}

/* Whether nobody reads our answers any more (the client closed its end). */
static bool client_gone(struct mcp_server *srv)
{
	struct pollfd p = {srv->out_fd, POLLOUT, 0};
	bool dead;

	pthread_mutex_lock(&srv->out_lock);
	dead = srv->out_dead;
	pthread_mutex_unlock(&srv->out_lock);
	return dead ||
	       (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)));
}

/*
 * End of input: the calls in progress may finish and be answered (a
 * script piping requests into ward mcp closes its input right after
 * them), for at most @drain_ms, and only while the client still reads
 * our output. The caller holds no lock.
 */
static void drain(struct mcp_server *srv, unsigned long drain_ms)
{
	struct timespec start, now, until;
	long waited;

	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_mutex_lock(&srv->lock);
	srv->draining = true;
	/* A question to the user can no longer be answered. */
	pthread_cond_broadcast(&srv->cond);
	while (srv->active > 0) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (long)(now.tv_sec - start.tv_sec) * 1000L +
			 (now.tv_nsec - start.tv_nsec) / 1000000L;
		if ((unsigned long)waited >= drain_ms)
			break;
		pthread_mutex_unlock(&srv->lock);
		if (client_gone(srv)) {
			pthread_mutex_lock(&srv->lock);
			break;
		}
		pthread_mutex_lock(&srv->lock);
		until = now;
		until.tv_nsec += 250 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&srv->cond, &srv->lock, &until);
	}
	if (srv->active > 0)
		fprintf(stderr,
			"ward mcp: %u call%s still running after end of "
			"input; stopping %s\n",
			srv->active, srv->active == 1 ? "" : "s",
			srv->active == 1 ? "it" : "them");
	pthread_mutex_unlock(&srv->lock);
}

/*
 * End of input (after draining) or a stop signal: stop everything, wait
 * for the workers (each records its call's result and answers that it
 * was stopped by the shutdown), record the end and @why.
 */
static void shut_down(struct mcp_server *srv, const char *why)
{
	pthread_mutex_lock(&srv->lock);
	srv->eof = true;
	for (struct mcp_call *c = srv->calls; c; c = c->next)
		if (c->wc)
			ward_call_stop(c->wc, WARD_STOP_SHUTDOWN);
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);

	mcp_tasks_stop_all(srv);

	pthread_mutex_lock(&srv->lock);
	while (srv->active > 0)
		pthread_cond_wait(&srv->cond, &srv->lock);
	pthread_mutex_unlock(&srv->lock);
	/* Tasks a worker started while we waited. */
	mcp_tasks_stop_all(srv);

	record_event(srv,
		     json_pack("{s:s, s:s}", "type", "mcp/end", "reason", why));
}

static void server_init(struct mcp_server *srv,
			const struct mcp_options *o)
{
	pthread_condattr_t cattr;

	memset(srv, 0, sizeof(*srv));
	srv->o = o;
	srv->session = o->session;
	srv->defaults = o->defaults;
	srv->out_fd = STDOUT_FILENO;
	srv->log_level = -1;
	srv->drain_ms = o->drain_ms;
	snprintf(srv->protocol, sizeof(srv->protocol), "%s", protocols[0]);
	pthread_mutex_init(&srv->out_lock, NULL);
	pthread_mutex_init(&srv->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->cond, &cattr);
	pthread_condattr_destroy(&cattr);
}

static void server_free(struct mcp_server *srv)
{
	ward_netproxy_free(srv->netproxy);
	pthread_cond_destroy(&srv->cond);
	pthread_mutex_destroy(&srv->lock);
	pthread_mutex_destroy(&srv->out_lock);
}

int mcp_serve(const struct mcp_options *o)
{
	static struct mcp_server srv;
	struct ward_jr_lines lines;
	char buf[65536], why[64];
	ssize_t n = 0;
	int err, sfd, sig = 0;

	server_init(&srv, o);
	/* Output to a closed client must not kill the server (children get
	 * SIGPIPE back: the executor resets it). */
	signal(SIGPIPE, SIG_IGN);
	sfd = util_stop_signal_fd();
	if (ward_netproxy_new(&srv.netproxy) != 0) {
		fprintf(stderr,
			"ward mcp: warning: cannot start the network proxy "
			"(%s); a call with an allowlist starts its own\n",
			ward_error_last());
		srv.netproxy = NULL;
	}

	/* Probe once, now: calls then only read the cached verdict. */
	err = ward_provider_select(o->provider, &srv.runner, &srv.enforcement);
	srv.confines = err == 0 && srv.enforcement != WARD_ENFORCEMENT_NONE;
	if (err)
		snprintf(srv.select_error, sizeof(srv.select_error), "%s",
			 ward_error_last());
	print_startup(&srv);
	record_event(
	    &srv,
	    json_pack("{s:s, s:I, s:s, s:s}", "type", "mcp/start", "pid",
		      (json_int_t)getpid(), "runner",
		      srv.confines ? ward_runner_name(srv.runner) : "none",
		      "enforcement", ward_enforcement_name(srv.enforcement)));

	ward_jr_lines_init(&lines, MCP_MAX_LINE);
	for (;;) {
		struct pollfd pfd[2] = {{STDIN_FILENO, POLLIN, 0},
					{sfd, POLLIN, 0}};

		if (poll(pfd, sfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			n = -1;
			break;
		}
		if (sfd >= 0 && (pfd[1].revents & POLLIN) &&
		    (sig = util_stop_signal_read(sfd)) != 0)
			break;
		if (!pfd[0].revents)
			continue;
		n = read(STDIN_FILENO, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		ward_jr_lines_feed(&lines, buf, (size_t)n, on_line, &srv);
	}
	if (n < 0)
		fprintf(stderr, "ward mcp: cannot read stdin: %s\n",
			strerror(errno));
	if (sig) {
		/* A line cut short by the signal is dropped, not parsed. */
		snprintf(why, sizeof(why), "signal SIG%s",
			 util_stop_signal_name(sig));
		fprintf(stderr, "ward mcp: %s: stopping every command\n", why);
	} else {
		ward_jr_lines_finish(&lines, on_line, &srv);
	}
	ward_jr_lines_free(&lines);

	if (!sig && srv.drain_ms)
		drain(&srv, srv.drain_ms);
	shut_down(&srv, sig ? why : "end of input");
	server_free(&srv);
	if (sfd >= 0)
		close(sfd);
	if (sig)
		util_die_of(sig);
	return sig ? 128 + sig : 0;
}
