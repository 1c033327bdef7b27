/*
 * ward acp — the agent's file requests, served by ward through the fence
 * (libward's ward_call for file operations): fs/read_text_file with its
 * line/limit, fs/write_text_file as an atomic replacement, each recorded
 * in the session's log. A denied write, when the approval policy is `ask`
 * and a wider mode would help, is put to the person (session/
 * request_permission) and, when allowed, done once under the narrowest
 * wider mode.
 *
 * Neither request is forwarded to the editor, even one that offers fs:
 * the editor is not confined, so a file it opened after ward's check
 * could be another file than the one checked (a symlink swapped in
 * between), and every decision must act on the object it checked. The
 * cost: the agent reads what is on disk, not an editor's unsaved buffer,
 * and an editor sees ward's writes as changes on disk (docs/ACP.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/fsfence.h"
#include "ward/json.h"
#include "ward/render.h"

#include "acp_internal.h"

/* ACP's "Resource not found". */
#define ACP_NOT_FOUND (-32002)

/* A file call of @w's session, escalated to @to when @escalate. */
static ward_call *fs_call(struct acp_work *w, struct acp_session *s,
			  struct acp_ask *ask, const char *op, const char *path,
			  bool escalate, enum ward_mode to,
			  const char *justification, int *code, char **message)
{
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	char *paths[] = {(char *)path, NULL};
	ward_call *wc = NULL;

	co.config = s->config;
	co.provider = w->srv->o->provider;
	co.session = s->ws;
	co.subject = WARD_SUBJECT_OPERATION;
	co.surface = WARD_SURFACE_ACP;
	co.tool = w->method;
	co.operation = op;
	co.paths = paths;
	co.approve = acp_approve;
	co.approve_ctx = ask;
	co.escalate = escalate;
	co.escalate_to = to;
	co.justification = justification;
	if (ward_call_new(&wc, &co) != 0) {
		*code = WARD_JR_INTERNAL_ERROR;
		if (asprintf(message,
			     "cannot read session %s, so nothing was "
			     "done: %s",
			     ward_session_id(s->ws), ward_error_last()) < 0)
			acp_oom();
		return NULL;
	}
	return wc;
}

/* The error of a fence call that did not succeed (@err). */
static void fs_failed(ward_call *wc, int err, const char *path,
		      const char *extra, int *code, char **message,
		      json_t **data)
{
	char *text = NULL;

	*code = WARD_JR_INTERNAL_ERROR;
	if (err == WARD_EDENIED) {
		if (ward_call_render_denial(&text, wc) != 0)
			acp_oom();
		if (extra) {
			char *both = NULL;

			if (asprintf(&both, "%s\n%s", text, extra) < 0)
				acp_oom();
			free(text);
			text = both;
		}
		*data = json_pack(
		    "{s:{s:s, s:b, s:o}}", "sandbox", "mode",
		    ward_mode_name(ward_policy_mode(ward_call_policy(wc))),
		    "denied", 1, "denials", ward_json_call_denials(wc));
		*message = text;
		return;
	}
	if (err == WARD_ENOTTEXT) {
		if (ward_render_not_text(&text, WARD_SURFACE_ACP, path) != 0)
			acp_oom();
		*code = WARD_JR_INVALID_PARAMS;
		*message = text;
		return;
	}
	if (err == -ENOENT)
		*code = ACP_NOT_FOUND;
	else if (err == WARD_EINVAL || err == -EISDIR || err == -ENOTDIR)
		*code = WARD_JR_INVALID_PARAMS;
	if (!(*message = strdup(ward_error_last())))
		acp_oom();
}

/* A whole number parameter (absent or null: 0); false when it is not
 * one. */
static bool uint_param(json_t *p, const char *key, unsigned long long *out)
{
	json_t *v = json_object_get(p, key);

	*out = 0;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (unsigned long long)json_integer_value(v);
	return true;
}

static json_t *do_read(struct acp_work *w, struct acp_session *s,
		       const char *path, int *code, char **message,
		       json_t **data)
{
	struct ward_fs_read_options ro = WARD_FS_READ_OPTIONS_INIT;
	struct ward_fs_content c = {NULL, 0, 0, false};
	struct acp_ask ask = {w->srv, s->id, w, NULL, "read"};
	struct ward_fs_denial denial;
	const ward_policy *pol;
	unsigned long long line, limit;
	ward_call *wc;
	json_t *r = NULL;
	int err;

	if (!uint_param(w->params, "line", &line) ||
	    !uint_param(w->params, "limit", &limit)) {
		*code = WARD_JR_INVALID_PARAMS;
		if (!(*message = strdup("Invalid params: \"line\" and "
					"\"limit\" must be whole numbers")))
			acp_oom();
		return NULL;
	}
	wc = fs_call(w, s, &ask, "read", path, false, WARD_MODE_READ_ONLY, NULL,
		     code, message);
	if (!wc)
		return NULL;
	err = ward_call_fs_begin(wc, &pol);
	if (err) {
		*code = WARD_JR_INTERNAL_ERROR;
		if (!(*message = strdup(ward_error_last())))
			acp_oom();
		ward_call_free(wc);
		return NULL;
	}
	/* ACP counts lines from 1. */
	ro.offset = line > 1 ? line - 1 : 0;
	ro.limit = limit;
	err = ward_fs_read(&c, &denial, pol, path, &ro);
	if (ward_call_fs_end(wc, err, err == WARD_EDENIED ? &denial : NULL))
		acp_log("%s", ward_error_last());
	if (err)
		fs_failed(wc, err, path, NULL, code, message, data);
	else if (!(r = json_pack("{s:o}", "content",
				 ward_json_text(c.data, c.len))))
		acp_oom();
	ward_fs_content_clear(&c);
	ward_call_free(wc);
	return r;
}

/*
 * Write through the fence under @wc's policy; the call records how it
 * ended. Returns what the fence returned (*denial filled when denied).
 */
static int write_once(ward_call *wc, const char *path, const char *content,
		      size_t len, struct ward_fs_denial *denial)
{
	struct ward_fs_write_options wo = WARD_FS_WRITE_OPTIONS_INIT;
	const ward_policy *pol;
	int err;

	err = ward_call_fs_begin(wc, &pol);
	if (err)
		return err;
	/* The protocol: the client creates the file if it does not exist
	 * (its directory too: each one is fenced). */
	wo.create_parents = true;
	err = ward_fs_write(denial, pol, path, content, len, &wo);
	if (ward_call_fs_end(wc, err, err == WARD_EDENIED ? denial : NULL))
		acp_log("%s", ward_error_last());
	return err;
}

static json_t *do_write(struct acp_work *w, struct acp_session *s,
			const char *path, int *code, char **message,
			json_t **data)
{
	json_t *content = json_object_get(w->params, "content");
	struct acp_ask ask = {w->srv, s->id, w, NULL, "edit"};
	struct ward_fs_denial denial;
	enum ward_mode mode, to[2];
	char justification[WARD_FS_PATH_MAX + 128], *refusal = NULL;
	ward_call *wc, *wide = NULL;
	int err;

	if (!json_is_string(content)) {
		*code = WARD_JR_INVALID_PARAMS;
		if (!(*message = strdup("Invalid params: \"content\" must be "
					"a string")))
			acp_oom();
		return NULL;
	}
	wc = fs_call(w, s, &ask, "write", path, false, WARD_MODE_READ_ONLY,
		     NULL, code, message);
	if (!wc)
		return NULL;
	err = write_once(wc, path, json_string_value(content),
			 json_string_length(content), &denial);
	mode = ward_policy_mode(ward_call_policy(wc));
	/* Denied, and a person may allow it once under a wider mode: ask
	 * (libward's escalation), and do it under the granted policy. */
	if (err == WARD_EDENIED && ward_call_hint_offered(wc, mode) &&
	    ward_escalation_targets(to, mode) > 0) {
		snprintf(justification, sizeof(justification),
			 "ward refused its write of %s under %s mode",
			 denial.resolved[0] ? denial.resolved : denial.path,
			 ward_mode_name(mode));
		wide = fs_call(w, s, &ask, "write", path, true, to[0],
			       justification, code, message);
		if (!wide) {
			ward_call_free(wc);
			return NULL;
		}
		err = write_once(wide, path, json_string_value(content),
				 json_string_length(content), &denial);
		if (err == 0) {
			ward_call_free(wide);
			ward_call_free(wc);
			return json_object();
		}
		if (err == WARD_EREFUSED &&
		    ward_call_render_refusal(&refusal, wide) != 0)
			acp_oom();
		if (err == WARD_EREFUSED)
			err = WARD_EDENIED; /* the first call's denial stands */
		else {
			/* Denied again, or failed, under the wider mode. */
			ward_call_free(wc);
			wc = wide;
			wide = NULL;
		}
	}
	if (err)
		fs_failed(wc, err, path, refusal, code, message, data);
	free(refusal);
	ward_call_free(wide);
	ward_call_free(wc);
	return err ? NULL : json_object();
}

json_t *acp_fs_call(struct acp_work *w, int *code, char **message,
		    json_t **data)
{
	const char *sid = acp_str(w->params, "sessionId");
	const char *path = acp_str(w->params, "path");
	struct acp_session *s;

	*message = NULL;
	if (!sid || !path || path[0] != '/') {
		*code = WARD_JR_INVALID_PARAMS;
		if (!(*message = strdup("Invalid params: \"sessionId\" (a "
					"string) and \"path\" (an absolute "
					"path) are required")))
			acp_oom();
		return NULL;
	}
	s = acp_session_for(w->srv, sid, code, message);
	if (!s)
		return NULL;
	if (strcmp(w->method, "fs/read_text_file") == 0)
		return do_read(w, s, path, code, message, data);
	if (strcmp(w->method, "fs/write_text_file") == 0)
		return do_write(w, s, path, code, message, data);
	*code = WARD_JR_METHOD_NOT_FOUND;
	if (asprintf(message, "Method not found: %.128s", w->method) < 0)
		acp_oom();
	return NULL;
}
