/*
 * ward's MCP server — what the tools and the protocol loop share: the
 * stdout writer (one whole line at a time), logging, the per-call state
 * (cancellation, the session's knobs), progress, and approvals by
 * elicitation. The loop and the methods are in server.c, the tools in
 * tools.c; see mcp_internal.h for the shape.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ward/json.h"
#include "ward/render.h"

#include "jsonrpc.h"
#include "mcp_internal.h"
#include "util/util.h"

/* MCP (syslog) log levels, least severe first. */
static const char *const log_levels[] = {"debug",   "info",	"notice",
					 "warning", "error",	"critical",
					 "alert",   "emergency"};
#define N_LOG_LEVELS (sizeof(log_levels) / sizeof(log_levels[0]))
/* Levels from here on also go to stderr. */
#define STDERR_LEVEL 2

noreturn void mcp_oom(void)
{
	fputs("ward mcp: out of memory\n", stderr);
	exit(125);
}

/* --- writing --------------------------------------------------------- */

bool mcp_send(struct mcp_server *srv, json_t *msg)
{
	size_t len = 0;
	char *line = ward_jr_encode(&len, msg);
	bool ok = false;

	json_decref(msg);
	if (!line) {
		fprintf(stderr, "ward mcp: cannot encode a message: out of "
				"memory\n");
		return false;
	}
	pthread_mutex_lock(&srv->out_lock);
	if (!srv->out_dead) {
		ok = util_write_all(srv->out_fd, line, len) == 0;
		if (!ok) {
			srv->out_dead = true;
			fprintf(stderr,
				"ward mcp: cannot write to stdout (%s); "
				"nothing more will be sent\n",
				strerror(errno));
		}
	}
	pthread_mutex_unlock(&srv->out_lock);
	free(line);
	return ok;
}

void mcp_send_error(struct mcp_server *srv, json_t *id, int code,
		    const char *message)
{
	mcp_send(srv, ward_jr_error(id, code, message, NULL));
}

int mcp_log_level(const char *level)
{
	for (size_t i = 0; i < N_LOG_LEVELS; i++)
		if (strcmp(log_levels[i], level) == 0)
			return (int)i;
	return -1;
}

void mcp_log(struct mcp_server *srv, const char *level, const char *fmt, ...)
{
	int idx = mcp_log_level(level);
	char text[1024];
	bool notify;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (idx >= STDERR_LEVEL)
		fprintf(stderr, "ward mcp: %s\n", text);
	pthread_mutex_lock(&srv->lock);
	notify = srv->log_level >= 0 && idx >= srv->log_level;
	pthread_mutex_unlock(&srv->lock);
	if (notify)
		mcp_send(srv,
			 ward_jr_notification(
			     "notifications/message",
			     json_pack("{s:s, s:s, s:o}", "level", level,
				       "logger", "ward", "data",
				       ward_json_str(text))));
}

/* --- per-call state ---------------------------------------------------- */

bool mcp_elicits(struct mcp_server *srv)
{
	bool e;

	pthread_mutex_lock(&srv->lock);
	e = srv->elicitation;
	pthread_mutex_unlock(&srv->lock);
	return e;
}

bool mcp_escalation_fields(struct mcp_server *srv, enum ward_mode mode,
			   enum ward_approval_policy approval)
{
	enum ward_mode targets[2];

	/* Without elicitation nobody can be asked: the fields would only
	 * lead to a retry that must fail. */
	return srv->confines && approval == WARD_APPROVAL_ASK &&
	       ward_escalation_targets(targets, mode) > 0 && mcp_elicits(srv);
}

int mcp_session_knobs(struct mcp_server *srv, enum ward_mode *mode,
		      enum ward_knob_source *source,
		      enum ward_approval_policy *approval)
{
	/* Only what was appended since the last look is read (another
	 * terminal may have changed a knob with `ward session mode`). */
	int err = ward_session_refresh(srv->session);

	if (err)
		return err;
	*mode = ward_session_mode(srv->session, srv->defaults.mode, source);
	*approval =
	    ward_session_approval(srv->session, srv->defaults.approval, NULL);
	return 0;
}

void mcp_knobs_seen(struct mcp_server *srv, enum ward_mode mode,
		    enum ward_approval_policy approval)
{
	bool changed = false, offered;

	/* The tools' fields follow the session's mode: when they changed
	 * since the client listed them, tell it to list again. */
	offered = mcp_escalation_fields(srv, mode, approval);
	pthread_mutex_lock(&srv->lock);
	if (srv->listed && srv->listed_escalation != offered) {
		srv->listed_escalation = offered;
		changed = true;
	}
	pthread_mutex_unlock(&srv->lock);
	if (changed)
		mcp_send(srv, ward_jr_notification(
				  "notifications/tools/list_changed", NULL));
}

bool mcp_call_attach(struct mcp_call *call, ward_call *wc)
{
	struct mcp_server *srv = call->srv;
	bool ok = true;

	pthread_mutex_lock(&srv->lock);
	if (wc && (call->cancelled || srv->eof)) {
		ward_call_stop(wc, call->cancelled ? WARD_STOP_CANCELLED
						   : WARD_STOP_SHUTDOWN);
		ok = false;
	}
	call->wc = wc;
	pthread_mutex_unlock(&srv->lock);
	return ok;
}

bool mcp_call_cancelled(struct mcp_call *call)
{
	bool c;

	pthread_mutex_lock(&call->srv->lock);
	c = call->cancelled;
	pthread_mutex_unlock(&call->srv->lock);
	return c;
}

bool mcp_protocol_at_least(struct mcp_server *srv, const char *rev)
{
	bool at;

	pthread_mutex_lock(&srv->lock);
	/* Revisions are dates: they compare as strings. */
	at = strcmp(srv->protocol, rev) >= 0;
	pthread_mutex_unlock(&srv->lock);
	return at;
}

/* --- approval by elicitation ---------------------------------------- */

void mcp_progress(struct mcp_call *call, double value, const char *message)
{
	if (!call->progress_token)
		return;
	/* The protocol wants it to increase with every notification. */
	if (value <= call->progress)
		value = call->progress + 1;
	call->progress = value;
	mcp_send(call->srv, ward_jr_notification(
				"notifications/progress",
				json_pack("{s:O, s:f, s:s}", "progressToken",
					  call->progress_token, "progress",
					  call->progress, "message", message)));
}

static void send_progress(struct mcp_call *call, const char *message)
{
	mcp_progress(call, call->progress + 1, message);
}

/* Wait (srv->lock held) until @p is answered, the call is cancelled or
 * input ends, sending progress every MCP_PROGRESS_EVERY_MS. */
static void wait_answer(struct mcp_call *call, struct ward_jr_pending *p)
{
	struct mcp_server *srv = call->srv;
	struct timespec until;

	while (!p->done && !call->cancelled && !srv->eof && !srv->draining) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += MCP_PROGRESS_EVERY_MS / 1000;
		if (pthread_cond_timedwait(&srv->cond, &srv->lock, &until) ==
			ETIMEDOUT &&
		    !p->done && !call->cancelled && !srv->eof &&
		    !srv->draining) {
			pthread_mutex_unlock(&srv->lock);
			send_progress(call, "waiting for the user to approve "
					    "or decline");
			pthread_mutex_lock(&srv->lock);
		}
	}
}

/* The outcome an elicitation response means. */
static enum ward_approval_outcome read_answer(json_t *response)
{
	json_t *result = json_object_get(response, "result");
	const char *action =
	    json_string_value(json_object_get(result, "action"));
	json_t *allow;

	if (!result || !action)
		return WARD_APPROVAL_UNAVAILABLE; /* an error response */
	if (strcmp(action, "accept") == 0) {
		allow = json_object_get(json_object_get(result, "content"),
					"allow");
		return json_is_true(allow) ? WARD_APPROVAL_ALLOWED_ONCE
					   : WARD_APPROVAL_REJECTED;
	}
	if (strcmp(action, "decline") == 0)
		return WARD_APPROVAL_REJECTED;
	if (strcmp(action, "cancel") == 0)
		return WARD_APPROVAL_CANCELLED;
	return WARD_APPROVAL_UNAVAILABLE;
}

enum ward_approval_outcome mcp_approve(void *ctx,
				       const struct ward_approval_request *req)
{
	struct mcp_call *call = ctx;
	struct mcp_server *srv = call->srv;
	enum ward_approval_outcome outcome;
	struct ward_jr_pending *p;
	json_t *params, *schema;
	char *message, rid[32], title[320];
	bool elicit, stop, done, at_2511;

	pthread_mutex_lock(&srv->lock);
	elicit = srv->elicitation;
	stop = call->cancelled || srv->eof || srv->draining;
	snprintf(rid, sizeof(rid), "ward-%lu", ++srv->next_request);
	pthread_mutex_unlock(&srv->lock);
	if (!elicit) {
		call->no_elicitation = true;
		return WARD_APPROVAL_UNAVAILABLE;
	}
	if (stop)
		return WARD_APPROVAL_CANCELLED;

	/* The text is libward's, the same as the terminal prompt's. */
	if (ward_escalation_question(&message, req, WARD_SURFACE_MCP) != 0)
		message = NULL;
	p = calloc(1, sizeof(*p));
	if (!message || !p) {
		free(message);
		free(p);
		return WARD_APPROVAL_UNAVAILABLE;
	}
	if (req->network)
		snprintf(title, sizeof(title), "Allow once: %s%.200s",
			 req->net_host ? "network access to " : "network on",
			 req->net_host ? req->net_host : "");
	else
		snprintf(title, sizeof(title), "Allow once under %s",
			 ward_mode_name(req->requested));
	schema = json_pack(
	    "{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}", "type", "object",
	    "properties", "allow", "type", "boolean", "title", title,
	    "description",
	    "Check to let it run once under the wider mode; leave unchecked "
	    "to refuse.",
	    "default", 0, "required", "allow");
	at_2511 = mcp_protocol_at_least(srv, "2025-11-25");
	params = json_pack("{s:o, s:o}", "message",
			   ward_json_str(message),
			   "requestedSchema", schema);
	if (params && at_2511)
		json_object_set_new(params, "mode", json_string("form"));
	p->id = json_string(rid);
	free(message);
	if (!params || !p->id) {
		json_decref(params);
		json_decref(p->id);
		free(p);
		return WARD_APPROVAL_UNAVAILABLE;
	}

	pthread_mutex_lock(&srv->lock);
	ward_jr_pending_add(&srv->pending, p);
	pthread_mutex_unlock(&srv->lock);
	if (req->network)
		mcp_log(srv, "notice",
			"%s: asking the user to allow %s%.200s once (%s)",
			req->call_id ? req->call_id : "?",
			req->net_host ? "network access to "
				      : "the whole network (on)",
			req->net_host ? req->net_host : "", rid);
	else
		mcp_log(srv, "notice",
			"%s: asking the user to allow %s once (%s)",
			req->call_id ? req->call_id : "?",
			ward_mode_name(req->requested), rid);
	if (!mcp_send(srv,
		      ward_jr_request(p->id, "elicitation/create", params))) {
		outcome = WARD_APPROVAL_UNAVAILABLE;
		pthread_mutex_lock(&srv->lock);
		ward_jr_pending_remove(&srv->pending, p);
		pthread_mutex_unlock(&srv->lock);
		goto out_free;
	}
	/* The command has not started: its timeout is not running. */
	send_progress(call, "waiting for the user to approve or decline");

	pthread_mutex_lock(&srv->lock);
	wait_answer(call, p);
	done = p->done;
	ward_jr_pending_remove(&srv->pending, p);
	pthread_mutex_unlock(&srv->lock);

	if (done) {
		outcome = read_answer(p->response);
	} else {
		/* Cancelled, or the client went away: withdraw the question. */
		outcome = WARD_APPROVAL_CANCELLED;
		mcp_send(srv, ward_jr_notification(
				  "notifications/cancelled",
				  json_pack("{s:O, s:s}", "requestId", p->id,
					    "reason",
					    "the tool call was cancelled")));
	}
	mcp_log(srv, "notice", "%s: the user's answer: %s",
		req->call_id ? req->call_id : "?",
		ward_approval_outcome_name(outcome));
out_free:
	json_decref(p->response);
	json_decref(p->id);
	free(p);
	return outcome;
}
