/*
 * ward acp — the loop: both inputs read by the main thread, every message
 * routed (passed through as it came, amended, or served by ward), the
 * agent process, workers for what ward serves, and the orderly end when
 * either side ends or a stop signal comes. See acp_internal.h for the
 * shape; sessions.c, terminal.c, files.c and approve.c for what ward
 * serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ward/render.h"

#include "acp_internal.h"
#include "util/stopsig.h"

/* Stack of a worker thread (musl's default is too small for the fence). */
#define WORKER_STACK (1024u * 1024u)
/* After the agent's output ended: how long it may take to exit. */
#define AGENT_EXIT_MS 2000UL
/* SIGTERM, then SIGKILL after this long. */
#define AGENT_KILL_GRACE_MS 2000UL
/* At the end: how long what is queued for the editor may take to go. */
#define EDITOR_DRAIN_MS 2000UL
/* Without inotify: how often the sessions' knobs are looked at. */
#define KNOB_POLL_MS 1000

/* --- small helpers -------------------------------------------------------- */

/* Milliseconds on CLOCK_MONOTONIC. */
static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000ULL +
	       (unsigned long long)ts.tv_nsec / 1000000ULL;
}

/* --- the agent process ---------------------------------------------------- */

/*
 * Start the agent with pipes for its stdin and stdout (its stderr is
 * ours): confined under its ceiling as a call (its environment scrubbed
 * as every command's is), or, without one, as a plain task of ward's
 * executor (a session of its own, dies with ward). Returns 0, or the exit
 * status to end with (after saying why).
 */
static int agent_start(struct acp_server *srv)
{
	const struct acp_options *o = srv->o;
	struct ward_exec_options xo = WARD_EXEC_OPTIONS_INIT;
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;
	const ward_plan *plan;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, err;

	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		acp_log("cannot make the agent's pipes: %s", strerror(errno));
		return 125;
	}
	xo.streams = WARD_TASK_STREAMED;
	xo.stdin_fd = in[0];
	xo.stdout_fd = out[1];
	xo.stderr_fd = STDERR_FILENO;
	xo.contain = WARD_CONTAIN_CGROUP;
	if (o->agent_config) {
		co.config = o->agent_config;
		co.provider = o->provider;
		co.surface = WARD_SURFACE_ACP;
		co.tool = "acp-agent";
		co.argv = o->agent_argv;
		co.netproxy = srv->netproxy;
		err = ward_call_new(&srv->agent_call, &co);
		if (!err)
			err = ward_call_start(srv->agent_call, &xo);
	} else {
		err =
		    ward_policy_new(&srv->agent_policy,
				    WARD_MODE_DANGER_FULL_ACCESS, o->agent_cwd);
		if (!err)
			err = ward_task_start(&srv->agent_task, o->provider,
					      srv->agent_policy, o->agent_argv,
					      &xo);
	}
	close(in[0]);
	close(out[1]);
	if (err) {
		acp_log("cannot start the agent %s: %s", o->agent_argv[0],
			ward_error_last());
		close(in[1]);
		close(out[0]);
		return err == -ENOENT ? 127 : err == -EACCES ? 126 : 125;
	}
	srv->agent.in_fd = out[0];
	srv->agent.out_fd = in[1];
	if (!srv->agent_call) {
		acp_log("agent %s (pid %d) runs unconfined; its terminals and "
			"file requests run under each session's policy",
			o->agent_argv[0], (int)ward_task_pid(srv->agent_task));
		return 0;
	}
	plan = ward_call_plan(srv->agent_call);
	acp_log("agent %s (pid %d) runs confined: mode %s, runner %s, "
		"enforcement %s, network %s",
		o->agent_argv[0],
		(int)ward_task_pid(ward_call_task(srv->agent_call)),
		ward_mode_name(ward_call_mode(srv->agent_call)),
		ward_runner_name(ward_plan_runner(plan)),
		ward_enforcement_name(ward_plan_enforcement(plan)),
		ward_network_name(ward_call_network(srv->agent_call)));
	for (char *const *w = ward_plan_partial(plan); w && *w; w++)
		acp_log("agent: partial enforcement: %s", *w);
	return 0;
}

/* Wait up to @ms for the agent to end; its exit status, or -1. */
static int agent_wait(struct acp_server *srv, unsigned long ms)
{
	ward_result *res = NULL;
	int err, code, sig;

	if (srv->agent_call)
		err = ward_call_wait(srv->agent_call, &res, ms ? ms : 1);
	else if (srv->agent_task)
		err = ward_task_wait(&res, srv->agent_task, ms ? ms : 1);
	else
		return 125;
	if (err == -ETIMEDOUT)
		return -1;
	if (err) {
		acp_log("the agent could not run: %s", ward_error_last());
		return 125;
	}
	code = ward_result_exit_code(res);
	sig = ward_result_signal(res);
	ward_result_free(res);
	return sig ? 128 + sig : code;
}

static void agent_signal(struct acp_server *srv, int sig)
{
	ward_task *t =
	    srv->agent_call ? ward_call_task(srv->agent_call) : srv->agent_task;

	if (t)
		ward_task_kill(t, sig);
}

/* The agent's end: wait up to @ms, then SIGTERM, then SIGKILL. Its
 * status. */
static int agent_end(struct acp_server *srv, unsigned long ms)
{
	int status = agent_wait(srv, ms);

	if (status >= 0)
		return status;
	acp_log("the agent did not exit; stopping it");
	agent_signal(srv, SIGTERM);
	status = agent_wait(srv, AGENT_KILL_GRACE_MS);
	if (status >= 0)
		return status;
	agent_signal(srv, SIGKILL);
	return agent_wait(srv, 0);
}

static void agent_free(struct acp_server *srv)
{
	ward_call_free(srv->agent_call);
	ward_task_free(srv->agent_task);
	ward_policy_free(srv->agent_policy);
	srv->agent_call = NULL;
	srv->agent_task = NULL;
	srv->agent_policy = NULL;
}

/* --- workers: what ward serves the agent ---------------------------------- */

static bool served(const char *method)
{
	return strcmp(method, "fs/read_text_file") == 0 ||
	       strcmp(method, "fs/write_text_file") == 0 ||
	       strncmp(method, "terminal/", 9) == 0;
}

static void work_free(struct acp_work *w)
{
	json_decref(w->id);
	json_decref(w->params);
	free(w->method);
	free(w);
}

static void *worker_main(void *arg)
{
	struct acp_work *w = arg;
	struct acp_server *srv = w->srv;
	json_t *result, *data = NULL;
	char *message = NULL;
	bool cancelled;
	int code = 0;

	if (strncmp(w->method, "fs/", 3) == 0)
		result = acp_fs_call(w, &code, &message, &data);
	else
		result = acp_terminal_call(w, &code, &message, &data);

	pthread_mutex_lock(&srv->lock);
	cancelled = w->cancelled;
	for (struct acp_work **pp = &srv->works; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	pthread_mutex_unlock(&srv->lock);

	if (cancelled) {
		/* The agent withdrew it ($/cancel_request). */
		json_decref(result);
		json_decref(data);
		acp_error(&srv->agent, w->id, -32800, "Request cancelled",
			  NULL);
	} else if (result) {
		json_decref(data);
		acp_peer_send(&srv->agent, ward_jr_result(w->id, result));
	} else {
		acp_error(&srv->agent, w->id,
			  code ? code : WARD_JR_INTERNAL_ERROR,
			  message ? message : "ward acp: internal error", data);
	}
	free(message);
	work_free(w);

	pthread_mutex_lock(&srv->lock);
	srv->active--;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* Hand agent request @m to a worker of its own. */
static void start_work(struct acp_server *srv, struct ward_jr_msg *m)
{
	struct acp_work *w;
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;
	char msg[160];
	bool busy = false;
	int rc;

	if (!json_is_object(m->params)) {
		acp_error(&srv->agent, m->id, WARD_JR_INVALID_PARAMS,
			  "Invalid params: \"params\" must be an object", NULL);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		acp_oom();
	/* The worker gets its own copies: jansson's reference counts are
	 * not meant to be shared between threads. */
	w->srv = srv;
	w->id = json_deep_copy(m->id);
	w->params = json_deep_copy(m->params);
	w->method = strdup(m->method);
	if (!w->id || !w->params || !w->method)
		acp_oom();

	pthread_mutex_lock(&srv->lock);
	for (struct acp_work *x = srv->works; x; x = x->next)
		busy |= json_equal(x->id, m->id);
	if (busy || srv->active >= ACP_MAX_WORKERS || srv->stopping) {
		pthread_mutex_unlock(&srv->lock);
		snprintf(msg, sizeof(msg), "%s",
			 busy ? "Invalid Request: a request with this id is "
				"still in progress"
			 : srv->stopping
			     ? "ward acp is shutting down"
			     : "too many requests in progress; retry when "
			       "one has finished");
		acp_error(&srv->agent, m->id,
			  busy ? WARD_JR_INVALID_REQUEST
			       : WARD_JR_INTERNAL_ERROR,
			  msg, NULL);
		work_free(w);
		return;
	}
	w->next = srv->works;
	srv->works = w;
	srv->active++;
	pthread_mutex_unlock(&srv->lock);

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&thread, &attr, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc == 0)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->works = w->next; /* still first: only this thread links */
	srv->active--;
	pthread_mutex_unlock(&srv->lock);
	snprintf(msg, sizeof(msg), "cannot start a thread: %s", strerror(rc));
	acp_error(&srv->agent, m->id, WARD_JR_INTERNAL_ERROR, msg, NULL);
	work_free(w);
}

/* The agent's $/cancel_request: true when it named a request of ward's. */
static bool cancel_work(struct acp_server *srv, json_t *params)
{
	json_t *id = json_object_get(params, "requestId");
	bool found = false;

	if (!ward_jr_id_valid(id))
		return false;
	pthread_mutex_lock(&srv->lock);
	for (struct acp_work *w = srv->works; w; w = w->next) {
		if (json_equal(w->id, id)) {
			w->cancelled = true;
			found = true;
		}
	}
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	return found;
}

/* --- the editor's requests the agent answers -------------------------------- */

static void fwd_free(struct acp_fwd *f)
{
	json_decref(f->id);
	free(f->session_id);
	free(f->cwd);
	ward_config_free(f->config);
	free(f);
}

/* Remember an editor request forwarded to the agent. */
static struct acp_fwd *fwd_add(struct acp_server *srv, json_t *id,
			       enum acp_fwd_kind kind)
{
	struct acp_fwd *f = calloc(1, sizeof(*f));

	if (!f)
		acp_oom();
	f->id = json_deep_copy(id);
	if (!f->id)
		acp_oom();
	f->kind = kind;
	f->next = srv->fwd;
	srv->fwd = f;
	return f;
}

/* Take the forwarded request answered by @id off the list, or NULL. */
static struct acp_fwd *fwd_take(struct acp_server *srv, json_t *id)
{
	for (struct acp_fwd **pp = &srv->fwd; *pp; pp = &(*pp)->next) {
		struct acp_fwd *f = *pp;

		if (json_equal(f->id, id)) {
			*pp = f->next;
			return f;
		}
	}
	return NULL;
}

/*
 * initialize: the agent is told the client offers fs.readTextFile,
 * fs.writeTextFile and terminal, whatever the editor offers — ward serves
 * them. Everything else of the request passes as it came.
 */
static void editor_initialize(struct acp_server *srv, struct ward_jr_msg *m)
{
	json_t *caps = json_object_get(m->params, "clientCapabilities");
	json_t *fs;

	if (!json_is_object(m->params)) {
		acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS,
			  "Invalid params: initialize needs an object", NULL);
		return;
	}
	json_decref(srv->client_info);
	srv->client_info =
	    json_deep_copy(json_object_get(m->params, "clientInfo"));
	if (!json_is_object(caps)) {
		caps = json_object();
		if (!caps ||
		    json_object_set_new(m->params, "clientCapabilities", caps))
			acp_oom();
	}
	fs = json_object_get(caps, "fs");
	if (!json_is_object(fs)) {
		fs = json_object();
		if (!fs || json_object_set_new(caps, "fs", fs))
			acp_oom();
	}
	if (json_object_set_new(fs, "readTextFile", json_true()) ||
	    json_object_set_new(fs, "writeTextFile", json_true()) ||
	    json_object_set_new(caps, "terminal", json_true()))
		acp_oom();
	fwd_add(srv, m->id, ACP_FWD_PLAIN);
	acp_peer_send(&srv->agent, json_incref(m->root));
}

/* The canonical directory of a session's "cwd", or NULL with *why. */
static char *session_cwd(json_t *params, const char **why)
{
	const char *cwd = acp_str(params, "cwd");
	char *real;

	*why = NULL;
	if (!cwd || cwd[0] != '/') {
		*why = "Invalid params: \"cwd\" must be an absolute path";
		return NULL;
	}
	real = realpath(cwd, NULL);
	if (!real)
		*why = "Invalid params: \"cwd\" is not an existing directory";
	return real;
}

/*
 * session/new, session/fork (@load false) and session/load,
 * session/resume (@load true): the session's configuration is loaded for
 * its cwd before the agent hears of it (a configuration ward cannot use
 * refuses the session, fail closed); the agent's answer binds it.
 */
static void editor_session_open(struct acp_server *srv, struct ward_jr_msg *m,
				const char *line, size_t len, bool load)
{
	const char *sid = acp_str(m->params, "sessionId"), *why = NULL;
	char wid[WARD_SESSION_ID_MAX + 1], *text = NULL, *message = NULL;
	ward_config *cfg = NULL;
	ward_session *known = NULL;
	struct acp_fwd *f;
	char *cwd;

	if (load && !sid) {
		acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS,
			  "Invalid params: \"sessionId\" must be a string",
			  NULL);
		return;
	}
	cwd = session_cwd(m->params, &why);
	if (!cwd) {
		acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS, why,
			  NULL);
		return;
	}
	if (load) {
		/* A session ward knows works where it always did. */
		acp_ward_id(wid, sid);
		if (ward_session_open(&known, NULL, wid) == 0 &&
		    ward_session_cwd(known) &&
		    strcmp(ward_session_cwd(known), cwd) != 0) {
			if (asprintf(&text,
				     "Invalid params: session %.200s works in "
				     "%s (ward session %s), not in %s",
				     sid, ward_session_cwd(known), wid,
				     cwd) < 0)
				acp_oom();
			ward_session_free(known);
			free(cwd);
			acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS,
				  text, NULL);
			free(text);
			return;
		}
		ward_session_free(known);
	}
	if (acp_config_load(&cfg, &message, srv, cwd) != 0) {
		if (asprintf(&text, "ward cannot sandbox a session in %s: %s",
			     cwd, message) < 0)
			acp_oom();
		free(message);
		free(cwd);
		acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS, text,
			  NULL);
		free(text);
		return;
	}
	f = fwd_add(srv, m->id, load ? ACP_FWD_LOAD : ACP_FWD_NEW);
	f->cwd = cwd;
	f->config = cfg;
	if (load && !(f->session_id = strdup(sid)))
		acp_oom();
	acp_peer_send_raw(&srv->agent, line, len);
}

/*
 * session/set_config_option: ward's own option is ward's to set (both
 * knob events, then the whole refreshed list); every other id is the
 * agent's, and its answer gets ward's option added.
 */
static void editor_set_option(struct acp_server *srv, struct ward_jr_msg *m,
			      const char *line, size_t len)
{
	const char *sid = acp_str(m->params, "sessionId");
	const char *cfg_id = acp_str(m->params, "configId");
	struct acp_session *s = sid ? acp_session_find(srv, sid) : NULL;
	char *message = NULL;
	json_t *result;
	int code = 0;

	if (cfg_id && strcmp(cfg_id, ACP_OPTION_ID) == 0 && !s) {
		acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS,
			  "Invalid params: ward knows no session by this "
			  "\"sessionId\"",
			  NULL);
		return;
	}
	if (!cfg_id || strcmp(cfg_id, ACP_OPTION_ID) != 0 || !s) {
		struct acp_fwd *f =
		    fwd_add(srv, m->id, s ? ACP_FWD_SET : ACP_FWD_PLAIN);

		if (s && !(f->session_id = strdup(sid)))
			acp_oom();
		acp_peer_send_raw(&srv->agent, line, len);
		return;
	}
	result = acp_options_set(srv, s, json_object_get(m->params, "value"),
				 &code, &message);
	if (result)
		acp_peer_send(&srv->editor, ward_jr_result(m->id, result));
	else
		acp_error(&srv->editor, m->id, code, message, NULL);
	free(message);
}

static void on_editor_request(struct acp_server *srv, struct ward_jr_msg *m,
			      const char *line, size_t len)
{
	const char *me = m->method;

	if (m->params && !json_is_object(m->params)) {
		acp_error(&srv->editor, m->id, WARD_JR_INVALID_PARAMS,
			  "Invalid params: \"params\" must be an object", NULL);
		return;
	}
	if (strcmp(me, "initialize") == 0) {
		editor_initialize(srv, m);
	} else if (strcmp(me, "session/new") == 0 ||
		   strcmp(me, "session/fork") == 0) {
		editor_session_open(srv, m, line, len, false);
	} else if (strcmp(me, "session/load") == 0 ||
		   strcmp(me, "session/resume") == 0) {
		editor_session_open(srv, m, line, len, true);
	} else if (strcmp(me, "session/set_config_option") == 0) {
		editor_set_option(srv, m, line, len);
	} else if (strcmp(me, "session/close") == 0 ||
		   strcmp(me, "session/delete") == 0) {
		const char *sid = acp_str(m->params, "sessionId");
		struct acp_fwd *f = fwd_add(srv, m->id, ACP_FWD_CLOSE);

		if (sid && !(f->session_id = strdup(sid)))
			acp_oom();
		acp_peer_send_raw(&srv->agent, line, len);
	} else {
		fwd_add(srv, m->id, ACP_FWD_PLAIN);
		acp_peer_send_raw(&srv->agent, line, len);
	}
}

/* Say @message about a line of @p that is not a message, to @p. */
static void invalid_line(struct acp_peer *p, struct ward_jr_msg *m)
{
	acp_log("the %s sent a message that is not JSON-RPC: %s", p->name,
		m->message);
	acp_error(p, m->id, m->code, m->message, NULL);
}

static void oversized(struct acp_peer *p)
{
	char msg[160];

	snprintf(msg, sizeof(msg),
		 "Invalid Request: message longer than %u bytes; skipped up "
		 "to its newline",
		 ACP_MAX_LINE);
	acp_log("the %s sent a message longer than %u bytes; skipped", p->name,
		ACP_MAX_LINE);
	acp_error(p, NULL, WARD_JR_INVALID_REQUEST, msg, NULL);
}

/*
 * A line from @p parsed into *@m: true when it is a message to route (a
 * request, a notification or a response; then the caller clears *@m).
 * What is none is answered here: an oversized line (NULL), a line that is
 * not JSON-RPC; a blank one is ignored.
 */
static bool parse_line(struct acp_peer *p, struct ward_jr_msg *m,
		       const char *line, size_t len)
{
	if (!line) {
		oversized(p);
		return false;
	}
	if (ward_jr_parse(m, line, len) != 0)
		acp_oom();
	if (m->kind == WARD_JR_INVALID)
		invalid_line(p, m);
	if (m->kind == WARD_JR_INVALID || m->kind == WARD_JR_EMPTY) {
		ward_jr_msg_clear(m);
		return false;
	}
	return true;
}

static void on_editor_line(void *ctx, const char *line, size_t len)
{
	struct acp_server *srv = ctx;
	struct ward_jr_msg m;

	if (!parse_line(&srv->editor, &m, line, len))
		return;
	switch (m.kind) {
	case WARD_JR_EMPTY:
	case WARD_JR_INVALID:
		break;
	case WARD_JR_REQUEST:
		on_editor_request(srv, &m, line, len);
		break;
	case WARD_JR_NOTIFICATION:
		acp_peer_send_raw(&srv->agent, line, len);
		break;
	case WARD_JR_RESPONSE:
		/* Ours (an approval), or the agent's (pass it on). */
		if (!m.id || !acp_response(srv, m.id, m.root)) {
			if (m.id && acp_is_ours(srv, m.id))
				acp_log("ignored an answer to a question "
					"nobody waits for any more");
			else
				acp_peer_send_raw(&srv->agent, line, len);
		}
		break;
	}
	ward_jr_msg_clear(&m);
}

/* --- the agent's messages -------------------------------------------------- */

/* Set "configOptions" of @result (an object) to the full list of @s. */
static void put_options(struct acp_server *srv, json_t *result,
			struct acp_session *s)
{
	if (json_object_set_new(result, "configOptions",
				acp_options_list(srv, s)) != 0)
		acp_oom();
}

/* The agent answered session/new, /fork, /load or /resume: bind the
 * session and add ward's option to its configOptions. */
static void agent_opened(struct acp_server *srv, struct ward_jr_msg *m,
			 struct acp_fwd *f, const char *line, size_t len)
{
	bool load = f->kind == ACP_FWD_LOAD;
	const char *sid =
	    load ? f->session_id : acp_str(m->result, "sessionId");
	json_t *result = m->result;
	struct acp_session *s;
	char *message = NULL;

	if (!m->result || !sid ||
	    (result && !json_is_object(result) && !json_is_null(result))) {
		/* An error, or nothing ward can bind: as it came. */
		acp_peer_send_raw(&srv->editor, line, len);
		return;
	}
	s = acp_session_bind(srv, sid, f->cwd, f->config, load, &message);
	f->config = NULL; /* bind took it */
	if (!s) {
		acp_error(&srv->editor, m->id, WARD_JR_INTERNAL_ERROR, message,
			  NULL);
		free(message);
		return;
	}
	if (!json_is_object(result)) {
		/* A load answered with null (older agents): an object. */
		result = json_object();
		if (!result || json_object_set_new(m->root, "result", result))
			acp_oom();
	}
	acp_options_agent(srv, s, json_object_get(result, "configOptions"));
	put_options(srv, result, s);
	acp_peer_send(&srv->editor, json_incref(m->root));
}

static void on_agent_response(struct acp_server *srv, struct ward_jr_msg *m,
			      const char *line, size_t len)
{
	struct acp_fwd *f = m->id ? fwd_take(srv, m->id) : NULL;
	struct acp_session *s;

	if (!f) {
		acp_peer_send_raw(&srv->editor, line, len);
		return;
	}
	switch (f->kind) {
	case ACP_FWD_NEW:
	case ACP_FWD_LOAD:
		agent_opened(srv, m, f, line, len);
		break;
	case ACP_FWD_SET:
		s = acp_session_find(srv, f->session_id);
		if (!s || !json_is_object(m->result)) {
			acp_peer_send_raw(&srv->editor, line, len);
			break;
		}
		acp_options_agent(srv, s,
				  json_object_get(m->result, "configOptions"));
		put_options(srv, m->result, s);
		acp_peer_send(&srv->editor, json_incref(m->root));
		break;
	case ACP_FWD_CLOSE:
		acp_peer_send_raw(&srv->editor, line, len);
		s = m->result && f->session_id
			? acp_session_find(srv, f->session_id)
			: NULL;
		if (s) {
			pthread_mutex_lock(&srv->lock);
			s->closed = true;
			pthread_mutex_unlock(&srv->lock);
			acp_terminals_stop_session(srv, s);
		}
		break;
	case ACP_FWD_PLAIN:
		acp_peer_send_raw(&srv->editor, line, len);
		break;
	}
	fwd_free(f);
}

/*
 * A tool call's content that embeds a terminal of ward's: replaced by its
 * output (terminal.c sends the final one when the command ends). True
 * when anything was replaced.
 */
static bool embed_terminals(struct acp_server *srv, const char *sid,
			    json_t *update)
{
	json_t *content = json_object_get(update, "content"), *item, *text;
	const char *call = acp_str(update, "toolCallId");
	bool changed = false;
	size_t i;

	json_array_foreach(content, i, item)
	{
		const char *tid = acp_str(item, "terminalId");
		const char *type = acp_str(item, "type");

		if (!type || strcmp(type, "terminal") != 0 || !tid)
			continue;
		text = acp_terminal_embed(srv, sid, tid, call);
		if (!text)
			continue;
		if (json_array_set_new(content, i, text) != 0)
			acp_oom();
		changed = true;
	}
	return changed;
}

/* session/update: a config_option_update of the agent's own options gets
 * ward's added (the notification carries the whole state). */
static void on_agent_notification(struct acp_server *srv, struct ward_jr_msg *m,
				  const char *line, size_t len)
{
	json_t *update = json_object_get(m->params, "update");
	const char *kind = acp_str(update, "sessionUpdate");
	const char *sid = acp_str(m->params, "sessionId");
	struct acp_session *s;

	if (strcmp(m->method, "$/cancel_request") == 0 &&
	    cancel_work(srv, m->params))
		return; /* a request of ward's: the editor never saw it */
	if (strcmp(m->method, "session/update") == 0 && kind && sid &&
	    strcmp(kind, "config_option_update") == 0 &&
	    (s = acp_session_find(srv, sid)) != NULL) {
		/* Whatever the agent says of ward's option, ward's own is
		 * what the editor gets. */
		if (json_is_array(json_object_get(update, "configOptions")))
			acp_options_agent(
			    srv, s, json_object_get(update, "configOptions"));
		put_options(srv, update, s);
		acp_peer_send(&srv->editor, json_incref(m->root));
		return;
	}
	if (strcmp(m->method, "session/update") == 0 && kind && sid &&
	    (strcmp(kind, "tool_call") == 0 ||
	     strcmp(kind, "tool_call_update") == 0) &&
	    embed_terminals(srv, sid, update)) {
		acp_peer_send(&srv->editor, json_incref(m->root));
		return;
	}
	acp_peer_send_raw(&srv->editor, line, len);
}

static void on_agent_line(void *ctx, const char *line, size_t len)
{
	struct acp_server *srv = ctx;
	struct ward_jr_msg m;

	if (!parse_line(&srv->agent, &m, line, len))
		return;
	switch (m.kind) {
	case WARD_JR_EMPTY:
	case WARD_JR_INVALID:
		break;
	case WARD_JR_REQUEST:
		if (served(m.method))
			start_work(srv, &m);
		else
			acp_peer_send_raw(&srv->editor, line, len);
		break;
	case WARD_JR_NOTIFICATION:
		on_agent_notification(srv, &m, line, len);
		break;
	case WARD_JR_RESPONSE:
		on_agent_response(srv, &m, line, len);
		break;
	}
	ward_jr_msg_clear(&m);
}

/* --- the end ---------------------------------------------------------------- */

/* The agent is gone: every editor request it did not answer gets an
 * error (@why; NULL: the editor is gone too, nobody is told), so the
 * editor is not left waiting. */
static void answer_inflight(struct acp_server *srv, const char *why)
{
	struct acp_fwd *f, *next;

	for (f = srv->fwd; f; f = next) {
		next = f->next;
		if (why)
			acp_error(&srv->editor, f->id, WARD_JR_INTERNAL_ERROR,
				  why, NULL);
		fwd_free(f);
	}
	srv->fwd = NULL;
}

/*
 * Stop everything: nothing new starts, every wait ends, every terminal is
 * stopped and its end recorded, the workers finish (each answers its
 * request), the agent ends.
 */
static int shut_down(struct acp_server *srv, bool agent_ended)
{
	int status;

	pthread_mutex_lock(&srv->lock);
	srv->stopping = true;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	acp_terminals_stop_all(srv);
	pthread_mutex_lock(&srv->lock);
	while (srv->active > 0)
		pthread_cond_wait(&srv->cond, &srv->lock);
	pthread_mutex_unlock(&srv->lock);
	/* Workers that ran while we stopped may have left one. */
	acp_terminals_stop_all(srv);
	acp_peer_close(&srv->agent);
	/* An agent whose output ended is exiting; one that outlived its
	 * grace, or a stop signal, is stopped now. */
	status = agent_end(srv, agent_ended ? AGENT_EXIT_MS : 0);
	return status;
}

/* --- the loop ---------------------------------------------------------------- */

static void server_init(struct acp_server *srv, const struct acp_options *o)
{
	pthread_condattr_t cattr;
	unsigned char r[6];

	memset(srv, 0, sizeof(*srv));
	srv->o = o;
	acp_peer_init(&srv->editor, "editor", STDIN_FILENO, STDOUT_FILENO);
	acp_peer_init(&srv->agent, "agent", -1, -1);
	pthread_mutex_init(&srv->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&srv->cond, &cattr);
	pthread_condattr_destroy(&cattr);
	/* Our own request ids: no agent picks these by chance. */
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		memset(r, 0x5a, sizeof(r));
	snprintf(srv->id_prefix, sizeof(srv->id_prefix),
		 "ward-%02x%02x%02x%02x%02x%02x-", r[0], r[1], r[2], r[3], r[4],
		 r[5]);
	srv->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
}

/* Read what @p has; false at its end of input (or an error). */
static bool read_peer(struct acp_server *srv, struct acp_peer *p,
		      ward_jr_line_fn fn)
{
	char buf[65536];
	ssize_t n;

	n = read(p->in_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n < 0)
		acp_log("cannot read from the %s: %s", p->name,
			strerror(errno));
	if (n <= 0) {
		ward_jr_lines_finish(&p->lines, fn, srv);
		p->eof = true;
		return false;
	}
	ward_jr_lines_feed(&p->lines, buf, (size_t)n, fn, srv);
	return true;
}

/* Why the loop ended. */
enum acp_end {
	END_EDITOR, /* the editor's end of input, and the agent exited */
	END_AGENT,  /* the agent's output ended first */
	END_GRACE, /* the editor ended; the agent did not within --agent-grace */
	END_SIGNAL,
};

static enum acp_end loop(struct acp_server *srv, int sfd, int *sig)
{
	unsigned long long deadline = 0;

	for (;;) {
		struct pollfd pfd[4] = {
		    {srv->editor.eof ? -1 : srv->editor.in_fd, POLLIN, 0},
		    {srv->agent.in_fd, POLLIN, 0},
		    {sfd, POLLIN, 0},
		    {srv->inotify_fd, POLLIN, 0}};
		int timeout = srv->inotify_fd < 0 ? KNOB_POLL_MS : -1;
		unsigned long long now;

		if (deadline) {
			now = now_ms();
			if (now >= deadline)
				return END_GRACE;
			if (timeout < 0 || deadline - now < (unsigned)timeout)
				timeout = (int)(deadline - now);
		}
		if (poll(pfd, 4, timeout) < 0) {
			if (errno == EINTR)
				continue;
			acp_log("poll: %s", strerror(errno));
			return END_AGENT;
		}
		if (pfd[2].revents & POLLIN) {
			*sig = util_stop_signal_read(sfd);
			if (*sig)
				return END_SIGNAL;
		}
		if (pfd[1].revents &&
		    !read_peer(srv, &srv->agent, on_agent_line))
			return srv->editor.eof ? END_EDITOR : END_AGENT;
		if (pfd[0].revents &&
		    !read_peer(srv, &srv->editor, on_editor_line)) {
			/* The agent hears the end as the end of its input;
			 * a question to the person can no longer be
			 * answered. */
			acp_peer_close(&srv->agent);
			pthread_mutex_lock(&srv->lock);
			srv->editor_eof = true;
			pthread_cond_broadcast(&srv->cond);
			pthread_mutex_unlock(&srv->lock);
			deadline = now_ms() + srv->o->grace_ms;
		}
		if (pfd[3].revents & POLLIN)
			acp_sessions_watch_event(srv);
		if (srv->inotify_fd < 0)
			acp_sessions_check(srv);
		if (acp_peer_gone(&srv->editor) && !srv->editor.eof) {
			acp_log("the editor stopped reading; ending");
			srv->editor.eof = true;
			acp_peer_close(&srv->agent);
			deadline = now_ms() + srv->o->grace_ms;
		}
	}
}

int acp_serve(const struct acp_options *o)
{
	static struct acp_server srv;
	enum ward_runner runner;
	enum ward_enforcement enf;
	enum acp_end end;
	char why[160];
	int sfd, sig = 0, status;

	server_init(&srv, o);
	/* Output to a peer that went away must not kill the proxy. */
	signal(SIGPIPE, SIG_IGN);
	sfd = util_stop_signal_fd();
	if (ward_netproxy_new(&srv.netproxy) != 0) {
		acp_log("warning: cannot start the network proxy (%s); a "
			"terminal with an allowlist starts its own",
			ward_error_last());
		srv.netproxy = NULL;
	}
	/* Probe once, now: calls then only read the cached verdict. */
	if (ward_provider_select(o->provider, &runner, &enf) != 0)
		acp_log("warning: no runner can confine here (%s): every "
			"terminal will fail, and nothing runs unconfined",
			ward_error_last());
	status = agent_start(&srv);
	if (status) {
		acp_peer_finish(&srv.editor, 0);
		acp_peer_finish(&srv.agent, 0);
		return status;
	}
	if (acp_peer_start(&srv.editor) != 0 ||
	    acp_peer_start(&srv.agent) != 0) {
		acp_log("cannot start a thread");
		agent_signal(&srv, SIGKILL);
		agent_end(&srv, 0);
		return 125;
	}

	end = loop(&srv, sfd, &sig);
	switch (end) {
	case END_SIGNAL:
		snprintf(why, sizeof(why), "signal SIG%s",
			 util_stop_signal_name(sig));
		acp_log("%s: stopping the agent and every terminal", why);
		break;
	case END_AGENT:
		snprintf(why, sizeof(why), "the agent ended");
		break;
	case END_GRACE:
		snprintf(why, sizeof(why),
			 "end of input; the agent did not exit within %lu ms",
			 o->grace_ms);
		break;
	case END_EDITOR:
		snprintf(why, sizeof(why), "end of input");
		break;
	}
	if (end == END_AGENT || end == END_SIGNAL) {
		char text[256];

		snprintf(text, sizeof(text),
			 "ward acp: the agent %s before answering",
			 end == END_AGENT ? "exited" : "was stopped");
		answer_inflight(&srv, text);
	}
	status = shut_down(&srv, end == END_AGENT || end == END_EDITOR);
	if (end == END_AGENT)
		acp_log("the agent ended (exit status %d)", status);
	acp_sessions_end(&srv, why);
	acp_peer_finish(&srv.agent, 0);
	acp_peer_finish(&srv.editor, EDITOR_DRAIN_MS);
	agent_free(&srv);
	acp_sessions_free(&srv);
	answer_inflight(&srv, NULL);
	json_decref(srv.client_info);
	ward_netproxy_free(srv.netproxy);
	if (srv.inotify_fd >= 0)
		close(srv.inotify_fd);
	if (sfd >= 0)
		close(sfd);
	if (sig)
		util_die_of(sig);
	if (sig)
		return 128 + sig;
	return end == END_AGENT ? status : 0;
}
