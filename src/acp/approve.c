/*
 * ward acp — approvals through the editor: the approval service libward's
 * escalation calls (ward_approval_fn) asks the editor's user with
 * session/request_permission — what runs (the command, or the operation
 * with its resolved paths), where, the current and the narrowest wider
 * mode, why, every value escaped like every approval text — and waits
 * for the answer: allow once, reject, or cancelled (the editor's own
 * outcome, or ward withdrawing the question when the request it serves
 * is cancelled, the terminal killed or released, or ward ends).
 * Grants are never persisted, so no "always" option is offered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acp_internal.h"

/* The ids of the two options the person is offered. */
#define ALLOW_ID  "allow-once"
#define REJECT_ID "reject-once"

bool acp_is_ours(const struct acp_server *srv, json_t *id)
{
	const char *s = json_string_value(id);

	return s && strncmp(s, srv->id_prefix, strlen(srv->id_prefix)) == 0;
}

bool acp_response(struct acp_server *srv, json_t *id, json_t *root)
{
	bool found = false;

	if (!acp_is_ours(srv, id))
		return false;
	pthread_mutex_lock(&srv->lock);
	found = ward_jr_pending_answer(srv->pending, id, root);
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	return found;
}

/* What the answer means. */
static enum ward_approval_outcome read_answer(json_t *response)
{
	json_t *outcome =
	    json_object_get(json_object_get(response, "result"), "outcome");
	const char *kind = acp_str(outcome, "outcome");
	const char *option = acp_str(outcome, "optionId");

	if (!kind)
		return WARD_APPROVAL_UNAVAILABLE; /* an error response */
	if (strcmp(kind, "cancelled") == 0)
		return WARD_APPROVAL_CANCELLED;
	if (strcmp(kind, "selected") != 0 || !option)
		return WARD_APPROVAL_UNAVAILABLE;
	if (strcmp(option, ALLOW_ID) == 0)
		return WARD_APPROVAL_ALLOWED_ONCE;
	if (strcmp(option, REJECT_ID) == 0)
		return WARD_APPROVAL_REJECTED;
	return WARD_APPROVAL_UNAVAILABLE;
}

/* Whether the question is withdrawn (the lock held). */
static bool withdrawn_locked(const struct acp_ask *ask)
{
	return ask->srv->stopping || ask->srv->editor_eof ||
	       (ask->withdrawn && *ask->withdrawn) ||
	       (ask->work && ask->work->cancelled);
}

/* The request's params: the tool call it is about (ward's own, named by
 * the call's id), what the person reads, and the two options. */
static json_t *ask_params(const struct acp_ask *ask,
			  const struct ward_approval_request *req)
{
	char *summary = NULL, *text = NULL, *title = NULL;
	char what[320], allow[400], call[64];
	json_t *p;

	/* The question libward puts to a person, the same on every
	 * surface; ACP's options answer it. */
	if (ward_escalation_question(&text, req, WARD_SURFACE_ACP) != 0 ||
	    ward_escalation_escape(&summary, req->summary) != 0)
		acp_oom();
	if (req->network)
		snprintf(what, sizeof(what), "%s%.200s",
			 req->net_host ? "network access to "
				       : "the whole network",
			 req->net_host ? req->net_host : "");
	else
		snprintf(what, sizeof(what), "under %s",
			 ward_mode_name(req->requested));
	snprintf(allow, sizeof(allow), "Allow once %s%s",
		 req->network ? "with " : "", what);
	if (asprintf(&title, "ward: allow once %s%s: %.400s",
		     req->network ? "with " : "", what, summary) < 0)
		acp_oom();
	snprintf(call, sizeof(call), "ward-%s",
		 req->call_id ? req->call_id : "call");
	p = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[{s:s, s:{s:s, s:s}}]}, "
		      "s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}]}",
		      "sessionId", ask->session_id, "toolCall", "toolCallId",
		      call, "title", title, "kind", ask->kind, "status",
		      "pending", "content", "type", "content", "content",
		      "type", "text", "text", text, "options", "optionId",
		      ALLOW_ID, "name", allow, "kind", "allow_once", "optionId",
		      REJECT_ID, "name", "Reject", "kind", "reject_once");
	free(summary);
	free(text);
	free(title);
	if (!p)
		acp_oom();
	return p;
}

enum ward_approval_outcome acp_approve(void *ctx,
				       const struct ward_approval_request *req)
{
	struct acp_ask *ask = ctx;
	struct acp_server *srv = ask->srv;
	enum ward_approval_outcome outcome;
	struct ward_jr_pending *p;
	char rid[64];
	bool done;

	p = calloc(1, sizeof(*p));
	if (!p)
		acp_oom();
	pthread_mutex_lock(&srv->lock);
	if (withdrawn_locked(ask)) {
		pthread_mutex_unlock(&srv->lock);
		free(p);
		return WARD_APPROVAL_CANCELLED;
	}
	snprintf(rid, sizeof(rid), "%s%lu", srv->id_prefix,
		 ++srv->next_request);
	p->id = json_string(rid);
	if (!p->id)
		acp_oom();
	ward_jr_pending_add(&srv->pending, p);
	pthread_mutex_unlock(&srv->lock);

	acp_log("%s: asking the user to allow it once (%s)",
		req->call_id ? req->call_id : "?", rid);
	acp_peer_send(&srv->editor,
		      ward_jr_request(p->id, "session/request_permission",
				      ask_params(ask, req)));

	pthread_mutex_lock(&srv->lock);
	while (!p->done && !withdrawn_locked(ask))
		pthread_cond_wait(&srv->cond, &srv->lock);
	done = p->done;
	ward_jr_pending_remove(&srv->pending, p);
	pthread_mutex_unlock(&srv->lock);

	if (done) {
		outcome = read_answer(p->response);
	} else {
		/* Nobody waits for the answer any more: withdraw it. */
		outcome = WARD_APPROVAL_CANCELLED;
		acp_peer_send(&srv->editor,
			      ward_jr_notification(
				  "$/cancel_request",
				  json_pack("{s:O}", "requestId", p->id)));
	}
	acp_log("%s: the user's answer: %s", req->call_id ? req->call_id : "?",
		ward_approval_outcome_name(outcome));
	json_decref(p->response);
	json_decref(p->id);
	free(p);
	return outcome;
}
