/*
 * ward acp — sessions: each ACP session id maps to a ward session (its
 * log, its knobs), whose id is derived from the agent's, so session/load
 * finds the same log again and folds it; the workspace is the session's
 * cwd, with the configuration loaded for it. And the Permissions
 * selector: ward's session config option (category "mode"), whose values
 * are the preset table, whose current value is the session's effective
 * preset (or "custom", which can only be switched away from), added after
 * the agent's own options; a change of the knobs from elsewhere (`ward
 * session mode`) is sent as a config_option_update.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "ward/json.h"
#include "ward/presets.h"

#include "acp_internal.h"
#include "util/sha256.h"

/* The hex digits of the digest a ward session id keeps. */
#define ID_DIGITS 32

int acp_config_load(ward_config **out, char **message,
		    const struct acp_server *srv, const char *cwd)
{
	struct ward_config_options co = *srv->o->flags;
	ward_config *cfg = NULL;
	char *text = NULL;
	size_t n;
	int err;

	*out = NULL;
	*message = NULL;
	co.workspace = cwd;
	err = ward_config_new(&cfg);
	if (!err)
		err = ward_config_load(cfg, &co);
	if (err) {
		/* Every error, as `ward config check` lists them. */
		n = cfg ? ward_config_error_count(cfg) : 0;
		for (size_t i = 0; i < n; i++) {
			char *more = NULL;

			if (asprintf(&more, "%s%s%s", text ? text : "",
				     text ? "; " : "",
				     ward_config_error(cfg, i, NULL)) < 0)
				acp_oom();
			free(text);
			text = more;
		}
		if (!text && !(text = strdup(ward_error_last())))
			acp_oom();
		ward_config_free(cfg);
		*message = text;
		return err;
	}
	/* Rules with a custom runner would silently do nothing. */
	err = ward_config_check_confine(cfg);
	if (err) {
		if (!(*message = strdup(ward_error_last())))
			acp_oom();
		ward_config_free(cfg);
		return err;
	}
	*out = cfg;
	return 0;
}

void acp_ward_id(char out[WARD_SESSION_ID_MAX + 1], const char *acp_id)
{
	unsigned char d[WARD_SHA256_LEN];
	struct ward_sha256 h;

	ward_sha256_init(&h);
	ward_sha256_update(&h, acp_id, strlen(acp_id));
	ward_sha256_final(d, &h);
	memcpy(out, "acp-", 4);
	for (int i = 0; i < ID_DIGITS / 2; i++)
		snprintf(out + 4 + 2 * i, 3, "%02x", d[i]);
}

struct acp_session *acp_session_find_locked(struct acp_server *srv,
					    const char *id)
{
	for (struct acp_session *s = srv->sessions; s; s = s->next)
		if (strcmp(s->id, id) == 0)
			return s;
	return NULL;
}

struct acp_session *acp_session_find(struct acp_server *srv, const char *id)
{
	struct acp_session *s;

	pthread_mutex_lock(&srv->lock);
	s = acp_session_find_locked(srv, id);
	pthread_mutex_unlock(&srv->lock);
	return s;
}

struct acp_session *acp_session_for(struct acp_server *srv, const char *id,
				    int *code, char **message)
{
	struct acp_session *s;
	bool closed = false;

	pthread_mutex_lock(&srv->lock);
	s = acp_session_find_locked(srv, id);
	closed = s && s->closed;
	pthread_mutex_unlock(&srv->lock);
	if (s && !closed)
		return s;
	*code = WARD_JR_INVALID_PARAMS;
	if (asprintf(message, "Invalid params: %s session %.200s (%s)",
		     closed ? "closed" : "unknown", id,
		     closed ? "session/close or session/delete ended it"
			    : "no session/new or session/load for it went "
			      "through ward") < 0)
		acp_oom();
	return NULL;
}

/* Append @event (consumed) to @ws's log; a failure is said, not fatal. */
static void record(ward_session *ws, json_t *event)
{
	char *text = event ? json_dumps(event, JSON_COMPACT) : NULL;

	if (!text || ward_session_append_json(ws, text) != 0)
		acp_log("cannot record in session %s: %s", ward_session_id(ws),
			ward_error_last());
	free(text);
	json_decref(event);
}

/* A new ward session @wid in @cwd with the mode in force recorded in it
 * (--mode's, else the configuration's) and the configuration's approval. */
static int create(ward_session **out, const struct acp_server *srv,
		  const char *wid, const char *cwd, const ward_config *cfg)
{
	struct ward_session_create_options co =
	    WARD_SESSION_CREATE_OPTIONS_INIT;

	co.id = wid;
	co.cwd = cwd;
	co.set_mode = true;
	co.mode =
	    srv->o->mode_given ? srv->o->mode : ward_config_mode(cfg, NULL);
	co.set_approval = true;
	co.approval = ward_config_approval(cfg, NULL);
	return ward_session_create_with(out, &co);
}

/*
 * The ward session of @wid. A new ACP session (@load false) gets a new
 * one: an agent answering session/new with the id of a session that
 * exists would otherwise choose its own sandbox (that session's knobs,
 * which a person may have widened), so that is refused. A loaded one is
 * opened (its cwd must be @cwd: its workspace never moves), or created
 * when ward never saw it.
 */
static int open_or_create(ward_session **out, char **message,
			  const struct acp_server *srv, const char *wid,
			  const char *cwd, const ward_config *cfg, bool load)
{
	int err = -ENOENT;

	for (int tries = 0; tries < 2; tries++) {
		if (load)
			err = ward_session_open(out, NULL, wid);
		if (err == 0) {
			if (ward_session_cwd(*out) &&
			    strcmp(ward_session_cwd(*out), cwd) == 0)
				return 0;
			if (asprintf(message,
				     "ward session %s works in %s, not in %s",
				     wid,
				     ward_session_cwd(*out)
					 ? ward_session_cwd(*out)
					 : "the configured workspace",
				     cwd) < 0)
				acp_oom();
			ward_session_free(*out);
			*out = NULL;
			return WARD_EINVAL;
		}
		if (err != -ENOENT)
			break;
		err = create(out, srv, wid, cwd, cfg);
		/* A loaded one made by another ward acp meanwhile: open it. */
		if (err != -EEXIST || !load)
			break;
	}
	if (err == -EEXIST && !load) {
		if (asprintf(
			message,
			"the agent answered session/new with the id of a "
			"session that already exists (ward session %s); "
			"ward does not reuse its sandbox for a new session "
			"(load it with session/load instead)",
			wid) < 0)
			acp_oom();
	} else if (err && asprintf(message, "ward session %s: %s", wid,
				   ward_error_last()) < 0) {
		acp_oom();
	}
	return err;
}

struct acp_session *acp_session_bind(struct acp_server *srv, const char *acp_id,
				     const char *cwd, ward_config *config,
				     bool load, char **message)
{
	char wid[WARD_SESSION_ID_MAX + 1];
	struct acp_session *s;
	ward_session *ws = NULL;

	*message = NULL;
	pthread_mutex_lock(&srv->lock);
	s = acp_session_find_locked(srv, acp_id);
	if (s) {
		/* Loaded again on this connection: the same session. */
		s->closed = false;
		pthread_mutex_unlock(&srv->lock);
		ward_config_free(config);
		return s;
	}
	pthread_mutex_unlock(&srv->lock);

	acp_ward_id(wid, acp_id);
	if (open_or_create(&ws, message, srv, wid, cwd, config, load) != 0) {
		ward_config_free(config);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->id = strdup(acp_id)))
		acp_oom();
	s->ws = ws;
	s->config = config;
	s->defaults.mode = ward_config_mode(config, NULL);
	s->defaults.approval = ward_config_approval(config, NULL);
	s->defaults.root = ward_config_workspace(config, NULL);
	s->watch = srv->inotify_fd >= 0
		       ? inotify_add_watch(srv->inotify_fd,
					   ward_session_path(ws), IN_MODIFY)
		       : -1;
	record(ws,
	       json_pack("{s:s, s:s, s:b, s:s, s:O?}", "type", "acp/session",
			 "session_id", acp_id, "loaded", load, "agent",
			 srv->o->agent_argv[0], "client", srv->client_info));
	pthread_mutex_lock(&srv->lock);
	s->next = srv->sessions;
	srv->sessions = s;
	pthread_mutex_unlock(&srv->lock);
	acp_log("session %s is ward session %s (%s; preset %s)", acp_id,
		ward_session_id(ws), cwd,
		ward_presets_current(ward_config_presets(config), ws,
				     &s->defaults));
	return s;
}

/* --- the Permissions selector --------------------------------------------- */

/* One value of the selector. */
static json_t *value_json(const char *name, enum ward_mode mode,
			  enum ward_approval_policy approval)
{
	char desc[160];

	snprintf(desc, sizeof(desc), "%s mode; %s", ward_mode_name(mode),
		 mode == WARD_MODE_DANGER_FULL_ACCESS ? "not sandboxed"
		 : approval == WARD_APPROVAL_ASK
		     ? "after a denial, ward asks you to allow a wider mode "
		       "once"
		     : "nothing wider is asked for");
	return json_pack("{s:s, s:s, s:s}", "value", name, "name", name,
			 "description", desc);
}

/* Ward's option, as the knobs of @s are now (already refreshed). */
static json_t *option_json(const struct acp_session *s, const char *current,
			   enum ward_mode mode,
			   enum ward_approval_policy approval)
{
	const ward_presets *p = ward_config_presets(s->config);
	enum ward_approval_policy pa;
	enum ward_mode pm;
	const char *name;
	json_t *values = json_array(), *v;
	char desc[320];

	if (!values)
		acp_oom();
	for (size_t i = 0; ward_presets_get(&name, &pm, &pa, p, i) == 0; i++)
		if (!(v = value_json(name, pm, pa)) ||
		    json_array_append_new(values, v))
			acp_oom();
	if (strcmp(current, WARD_PRESET_CUSTOM) == 0) {
		/* Reported so the editor can show it; it cannot be set. */
		snprintf(desc, sizeof(desc),
			 "%s mode with approval %s, which no preset names; "
			 "pick a preset to leave it",
			 ward_mode_name(mode),
			 ward_approval_policy_name(approval));
		v = json_pack("{s:s, s:s, s:s}", "value", WARD_PRESET_CUSTOM,
			      "name", WARD_PRESET_CUSTOM, "description", desc);
		if (!v || json_array_append_new(values, v))
			acp_oom();
	}
	snprintf(desc, sizeof(desc),
		 "ward's sandbox for this session's terminals and file edits: "
		 "the sandbox mode, and whether a wider one is asked for "
		 "(ward session %s)",
		 ward_session_id(s->ws));
	v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "id",
		      ACP_OPTION_ID, "name", "Permissions", "description", desc,
		      "category", "mode", "type", "select", "currentValue",
		      current, "options", values);
	if (!v)
		acp_oom();
	return v;
}

/* The session's current preset, its log read up to now. */
static const char *current_preset(struct acp_session *s, enum ward_mode *mode,
				  enum ward_approval_policy *approval)
{
	if (ward_session_refresh(s->ws) != 0)
		acp_log("session %s: %s", ward_session_id(s->ws),
			ward_error_last());
	*mode = ward_session_mode(s->ws, s->defaults.mode, NULL);
	*approval = ward_session_approval(s->ws, s->defaults.approval, NULL);
	return ward_presets_match(ward_config_presets(s->config), *mode,
				  *approval);
}

json_t *acp_options_list(struct acp_server *srv, struct acp_session *s)
{
	enum ward_approval_policy approval;
	enum ward_mode mode;
	const char *current = current_preset(s, &mode, &approval);
	json_t *list, *mine = option_json(s, current, mode, approval);

	pthread_mutex_lock(&srv->lock);
	list =
	    s->agent_options ? json_deep_copy(s->agent_options) : json_array();
	snprintf(s->published, sizeof(s->published), "%s", current);
	pthread_mutex_unlock(&srv->lock);
	if (!list || json_array_append_new(list, mine))
		acp_oom();
	return list;
}

void acp_options_agent(struct acp_server *srv, struct acp_session *s,
		       json_t *options)
{
	json_t *copy = NULL;

	if (json_is_array(options)) {
		copy = json_array();
		if (!copy)
			acp_oom();
		/* An agent that echoes ward's option back is not believed:
		 * ward's is always ward's own, as the knobs say. */
		for (size_t i = 0; i < json_array_size(options); i++) {
			json_t *o = json_array_get(options, i);
			const char *id =
			    json_string_value(json_object_get(o, "id"));

			if (id && strcmp(id, ACP_OPTION_ID) == 0)
				continue;
			if (json_array_append_new(copy, json_deep_copy(o)))
				acp_oom();
		}
	}
	pthread_mutex_lock(&srv->lock);
	json_decref(s->agent_options);
	s->agent_options = copy;
	pthread_mutex_unlock(&srv->lock);
}

json_t *acp_options_set(struct acp_server *srv, struct acp_session *s,
			json_t *value, int *code, char **message)
{
	const ward_presets *p = ward_config_presets(s->config);
	const char *name = json_string_value(value);
	json_t *list;
	bool changed = false;

	*message = NULL;
	if (!name) {
		*code = WARD_JR_INVALID_PARAMS;
		if (!(*message = strdup("Invalid params: \"value\" must be "
					"the name of a preset (a string)")))
			acp_oom();
		return NULL;
	}
	/* Unknown, or custom: libward's texts, as `ward session preset`
	 * says them. Nothing is written. */
	if (ward_presets_find(NULL, NULL, p, name) != 0) {
		*code = WARD_JR_INVALID_PARAMS;
		if (asprintf(message, "Invalid params: %s", ward_error_last()) <
		    0)
			acp_oom();
		return NULL;
	}
	/* Both knobs, each appended only when it changes. */
	if (ward_presets_apply(&changed, s->ws, p, name, &s->defaults) != 0) {
		*code = WARD_JR_INTERNAL_ERROR;
		if (asprintf(message, "cannot switch session %s to %s: %s",
			     ward_session_id(s->ws), name,
			     ward_error_last()) < 0)
			acp_oom();
		return NULL;
	}
	list = acp_options_list(srv, s);
	return json_pack("{s:o}", "configOptions", list);
}

/* --- knob changes from elsewhere ------------------------------------------- */

void acp_sessions_check(struct acp_server *srv)
{
	enum ward_approval_policy approval;
	enum ward_mode mode;
	struct acp_session *s;
	const char *current;
	char published[80];
	json_t *list;

	pthread_mutex_lock(&srv->lock);
	s = srv->sessions;
	pthread_mutex_unlock(&srv->lock);
	/* Sessions are only ever added at the head, and freed at the end:
	 * the list from here on is stable. */
	for (; s; s = s->next) {
		current = current_preset(s, &mode, &approval);
		pthread_mutex_lock(&srv->lock);
		snprintf(published, sizeof(published), "%s", s->published);
		pthread_mutex_unlock(&srv->lock);
		if (strcmp(current, published) == 0)
			continue;
		list = acp_options_list(srv, s);
		acp_log("session %s: the knobs changed (preset %s)", s->id,
			current);
		acp_peer_send(&srv->editor,
			      ward_jr_notification(
				  "session/update",
				  json_pack("{s:s, s:{s:s, s:o}}", "sessionId",
					    s->id, "update", "sessionUpdate",
					    "config_option_update",
					    "configOptions", list)));
	}
}

void acp_sessions_watch_event(struct acp_server *srv)
{
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	/* Drain every event; which session changed is found by looking. */
	do
		n = read(srv->inotify_fd, buf, sizeof(buf));
	while (n > 0 || (n < 0 && errno == EINTR));
	acp_sessions_check(srv);
}

void acp_sessions_end(struct acp_server *srv, const char *why)
{
	for (struct acp_session *s = srv->sessions; s; s = s->next)
		record(s->ws, json_pack("{s:s, s:s, s:s}", "type", "acp/end",
					"session_id", s->id, "reason", why));
}

void acp_sessions_free(struct acp_server *srv)
{
	struct acp_session *s, *next;

	for (s = srv->sessions; s; s = next) {
		next = s->next;
		json_decref(s->agent_options);
		ward_session_free(s->ws);
		ward_config_free(s->config);
		free(s->id);
		free(s);
	}
	srv->sessions = NULL;
}
