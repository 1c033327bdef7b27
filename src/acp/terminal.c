/*
 * ward acp — the agent's terminals, served by ward: each one a ward_call
 * started as a task (merged output, a terminal's view) under the
 * session's policy as it is when the terminal is created, with the same
 * containment, denial report and network as `ward run`. A watcher thread
 * per terminal waits for the command's end; after a denial, when the
 * approval policy is `ask`, it asks the person (session/request_permission,
 * libward's escalation) and, when allowed, runs the command again under
 * the narrowest wider mode (or with the refused host), once. The output
 * the agent sees is the command's, then ward's texts (the denial marker
 * and report, the answer), the last outputByteLimit bytes of it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ward/json.h"
#include "ward/render.h"

#include "acp_internal.h"

extern char **environ;

/* The capture bound of a terminal's task: never below what classifying
 * its stderr needs. */
#define CAPTURE_MIN (64u * 1024u)
/* terminal/kill: SIGTERM, then SIGKILL after this long. */
#define KILL_GRACE_MS 2000UL
/* Stack of a watcher (the escalation plans again). */
#define WATCHER_STACK (1024u * 1024u)

/* The retained output: the last @limit bytes, cut at a character. */
struct ring {
	char *buf;
	size_t start, len, cap; /* the bytes are buf[start..len) */
	size_t limit;
	bool truncated;
};

struct acp_terminal {
	char id[32];
	struct acp_server *srv;
	struct acp_session *session;
	char **argv;
	char **envp;
	char *cwd;
	size_t limit;
	struct acp_ask ask; /* how its approval is asked (approve.c) */
	/* Under the server's lock: */
	ward_call *wc;	  /* the run that is, or was last, running */
	ward_call *first; /* the denied first run, after a retry */
	struct ring out;
	bool done;     /* final: the exit status below is known */
	bool has_code; /* exitCode (else null) */
	unsigned code;
	int signal;	/* 0: signal null */
	bool killed;	/* terminal/kill, release, the end: no retry */
	bool withdrawn; /* its approval question is withdrawn */
	enum ward_call_stop stop_why; /* release, the end */
	bool released;
	unsigned refs; /* workers using it */
	bool watcher_live;
	pthread_t watcher;
	/* The tool call the agent embedded it in ({"type":"terminal"}), to
	 * be sent its final output; NULL: none. */
	char *tool_call_id;
	struct acp_terminal *next;
};

/* --- the retained output ---------------------------------------------------- */

static void ring_append(struct ring *r, const char *data, size_t n)
{
	size_t keep;

	if (n == 0)
		return;
	/* More than the whole window: only its end can be kept (3 bytes
	 * more, so a character cut at the start can be skipped). */
	keep = r->limit + 3;
	if (n > keep) {
		data += n - keep;
		n = keep;
		r->truncated = true;
	}
	if (r->start > 0 && r->len + n > r->cap) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *b;

		while (cap < r->len + n)
			cap *= 2;
		b = realloc(r->buf, cap);
		if (!b)
			acp_oom();
		r->buf = b;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	if (r->len - r->start > r->limit) {
		r->start = r->len - r->limit;
		r->truncated = true;
	}
	/* Truncation happens at a character boundary (the protocol's
	 * rule), even if that keeps a little less than the limit. */
	while (r->start < r->len &&
	       ((unsigned char)r->buf[r->start] & 0xc0) == 0x80)
		r->start++;
}

/* Append @text and a newline before it when the output does not end in
 * one (ward's own lines start on a line of their own). */
static void ring_line(struct ring *r, const char *text)
{
	if (!text || !*text)
		return;
	if (r->len > r->start && r->buf[r->len - 1] != '\n')
		ring_append(r, "\n", 1);
	ring_append(r, text, strlen(text));
	ring_append(r, "\n", 1);
}

/* --- signal names (TerminalExitStatus.signal) ------------------------------ */

static const struct {
	int sig;
	const char *name;
} signames[] = {
    {SIGHUP, "SIGHUP"},	      {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
    {SIGILL, "SIGILL"},	      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},
    {SIGBUS, "SIGBUS"},	      {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
    {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"},     {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
    {SIGCHLD, "SIGCHLD"},     {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"},
    {SIGTSTP, "SIGTSTP"},     {SIGTTIN, "SIGTTIN"}, {SIGTTOU, "SIGTTOU"},
    {SIGURG, "SIGURG"},	      {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
    {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGWINCH, "SIGWINCH"},
    {SIGIO, "SIGIO"},	      {SIGPWR, "SIGPWR"},   {SIGSYS, "SIGSYS"},
};

static json_t *signal_json(int sig)
{
	char name[16];

	for (size_t i = 0; i < sizeof(signames) / sizeof(*signames); i++)
		if (signames[i].sig == sig)
			return json_string(signames[i].name);
	snprintf(name, sizeof(name), "SIG%d", sig);
	return json_string(name);
}

/* {exitCode, signal}, as the protocol shapes a terminal's exit. */
static json_t *exit_json(const struct acp_terminal *t)
{
	json_t *o = json_pack(
	    "{s:o, s:o}", "exitCode",
	    t->has_code ? json_integer((json_int_t)t->code) : json_null(),
	    "signal", t->signal ? signal_json(t->signal) : json_null());

	if (!o)
		acp_oom();
	return o;
}

/* --- the calls ---------------------------------------------------------------- */

/* How a denied run is to be asked about again, if at all. */
struct retry {
	bool network;
	enum ward_mode mode;
	const char *host; /* owned by the call asked about */
	char justification[1024];
};

/*
 * Whether @wc's end is one to ask the person about: a denial that a
 * wider mode would help with, or a host the proxy refused, when the
 * approval policy is `ask` (ward_call_hint_offered: the same rule that
 * puts the hint in the denial text). The narrowest wider mode first.
 */
static bool want_retry(struct retry *r, const ward_call *wc)
{
	enum ward_mode mode = ward_call_mode(wc), to[2];
	const struct ward_denial *d;
	struct ward_net_event ev;

	memset(r, 0, sizeof(*r));
	if (ward_call_denied(wc) && ward_call_hint_offered(wc, mode) &&
	    ward_escalation_targets(to, mode) > 0) {
		d = ward_call_denial(wc, 0);
		r->mode = to[0];
		snprintf(r->justification, sizeof(r->justification),
			 "ward refused its %s of %s under %s mode",
			 d && d->operation ? d->operation : "file access",
			 d && d->path ? d->path : "a path",
			 ward_mode_name(mode));
		return true;
	}
	if (!ward_call_network_hint_offered(wc))
		return false;
	for (size_t i = 0; i < ward_call_net_event_count(wc); i++) {
		if (ward_call_net_event(wc, i, &ev) != 0 || !ev.host ||
		    strcmp(ev.verdict, "denied") != 0)
			continue;
		r->network = true;
		r->host = ev.host;
		snprintf(r->justification, sizeof(r->justification),
			 "ward refused its network access to %s", ev.host);
		return true;
	}
	return false;
}

/* A call of @t's command, escalated as @r says (NULL: not escalated). */
static int new_call(ward_call **out, struct acp_terminal *t,
		    const struct retry *r)
{
	struct ward_call_options co = WARD_CALL_OPTIONS_INIT;

	co.config = t->session->config;
	co.provider = t->srv->o->provider;
	co.session = t->session->ws;
	co.subject = WARD_SUBJECT_COMMAND;
	co.surface = WARD_SURFACE_ACP;
	co.tool = "terminal";
	co.argv = t->argv;
	co.cwd = t->cwd;
	co.approve = acp_approve;
	co.approve_ctx = &t->ask;
	co.netproxy = t->srv->netproxy;
	if (r && r->network) {
		co.escalate_network = true;
		co.network_host = r->host;
		co.justification = r->justification;
	} else if (r) {
		co.escalate = true;
		co.escalate_to = r->mode;
		co.justification = r->justification;
	}
	return ward_call_new(out, &co);
}

/* Start @wc as @t's task: merged output, bounded, contained. */
static int start_call(struct acp_terminal *t, ward_call *wc)
{
	struct ward_exec_options xo = WARD_EXEC_OPTIONS_INIT;
	size_t cap = 2 * t->limit;

	xo.streams = WARD_TASK_MERGED;
	/* Twice the window, so the new output's tail alone fills it. */
	xo.capture_limit = cap < CAPTURE_MIN ? CAPTURE_MIN : cap;
	xo.envp = t->envp;
	/* Terminals run side by side: the per-call cgroup only, never the
	 * process-wide subreaper. */
	xo.contain = WARD_CONTAIN_CGROUP;
	return ward_call_start(wc, &xo);
}

/* The text of a command that did not run (@err from the call). */
static char *not_run_text(ward_call *wc, int err)
{
	char *text = NULL;
	int rc;

	if (err == WARD_ESTOPPED)
		rc = ward_render_stopped(
		    &text, WARD_SUBJECT_COMMAND,
		    ward_call_stopped(wc) != WARD_STOP_CANCELLED, false);
	else if (err == WARD_EUNAVAILABLE || err == WARD_ERUNNER)
		rc = ward_call_render_not_run(&text, wc);
	else
		rc = asprintf(&text, "the command could not be started: %s",
			      ward_error_last()) < 0
			 ? -ENOMEM
			 : 0;
	if (rc)
		acp_oom();
	return text;
}

/* What is new of the task's output, into the ring (the lock held). */
static void drain_locked(struct acp_terminal *t)
{
	ward_task *task = t->wc ? ward_call_task(t->wc) : NULL;
	struct ward_task_output o;

	if (!task || ward_task_read_output(&o, task) != 0)
		return;
	if (o.out_dropped) {
		/* The middle was dropped between two reads: what came
		 * before the gap is older than what is kept anyway. */
		t->out.truncated = true;
		ring_append(&t->out, o.out + o.out_head,
			    o.out_len - o.out_head);
	} else {
		ring_append(&t->out, o.out, o.out_len);
	}
	ward_task_output_clear(&o);
}

/* The retained output as a tool call's content item (the lock held). */
static json_t *content_locked(const struct acp_terminal *t)
{
	json_t *c = json_pack(
	    "{s:s, s:{s:s, s:o}}", "type", "content", "content", "type", "text",
	    "text",
	    ward_json_text(t->out.buf ? t->out.buf + t->out.start : NULL,
			   t->out.len - t->out.start));

	if (!c)
		acp_oom();
	return c;
}

/*
 * The command ended: a tool call that embedded the terminal gets its
 * final output (the editor never knew the terminal, so it could not show
 * it live), as the protocol has a client keep showing a terminal's
 * output once it is released.
 */
static void send_final_locked(struct acp_terminal *t)
{
	json_t *msg;

	if (!t->tool_call_id)
		return;
	msg = json_pack("{s:s, s:{s:s, s:s, s:[o]}}", "sessionId",
			t->session->id, "update", "sessionUpdate",
			"tool_call_update", "toolCallId", t->tool_call_id,
			"content", content_locked(t));
	if (!msg)
		acp_oom();
	acp_peer_send(&t->srv->editor,
		      ward_jr_notification("session/update", msg));
}

json_t *acp_terminal_embed(struct acp_server *srv, const char *session_id,
			   const char *terminal_id, const char *tool_call_id)
{
	struct acp_terminal *t;
	json_t *c = NULL;

	pthread_mutex_lock(&srv->lock);
	for (t = srv->terminals; t; t = t->next)
		if (strcmp(t->id, terminal_id) == 0 &&
		    strcmp(t->session->id, session_id) == 0)
			break;
	if (t) {
		if (!t->done)
			drain_locked(t);
		c = content_locked(t);
		if (tool_call_id && !t->done) {
			free(t->tool_call_id);
			if (!(t->tool_call_id = strdup(tool_call_id)))
				acp_oom();
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return c;
}

/* --- the watcher ------------------------------------------------------------ */

/* The exit status is final (the lock held). */
static void finish_locked(struct acp_terminal *t, bool has_code, int code,
			  int sig)
{
	t->has_code = has_code && code >= 0;
	t->code = t->has_code ? (unsigned)code : 0;
	t->signal = sig;
	t->done = true;
	send_final_locked(t);
	pthread_cond_broadcast(&t->srv->cond);
}

/* Append @text (owned; may be NULL) to the output. */
static void say(struct acp_terminal *t, char *text)
{
	pthread_mutex_lock(&t->srv->lock);
	ring_line(&t->out, text);
	pthread_mutex_unlock(&t->srv->lock);
	free(text);
}

/*
 * After a refused access: ask (ward_call_begin puts it to the person);
 * when allowed, start the same command again under the wider mode or
 * network and make it the terminal's run. Returns true when the retry
 * runs.
 */
static bool retry(struct acp_terminal *t, const struct retry *r)
{
	struct acp_server *srv = t->srv;
	ward_call *nc = NULL;
	char *text = NULL;
	bool stop;
	int err;

	err = new_call(&nc, t, r);
	if (!err)
		err = ward_call_begin(nc);
	if (err == WARD_EREFUSED) {
		if (ward_call_render_refusal(&text, nc) != 0)
			acp_oom();
		say(t, text);
		ward_call_free(nc);
		return false;
	}
	if (err) {
		if (asprintf(&text, "ward could not ask: %s",
			     ward_error_last()) < 0)
			acp_oom();
		say(t, text);
		ward_call_free(nc);
		return false;
	}
	if (ward_render_retried(&text, WARD_SUBJECT_COMMAND, r->mode,
				r->network, r->host) != 0)
		acp_oom();
	say(t, text);
	pthread_mutex_lock(&srv->lock);
	stop = t->killed;
	pthread_mutex_unlock(&srv->lock);
	/* Killed while the person decided: stopped before it started. */
	if (stop)
		ward_call_stop(nc,
			       t->stop_why ? t->stop_why : WARD_STOP_CANCELLED);
	err = start_call(t, nc);
	if (err) {
		say(t, not_run_text(nc, err));
		ward_call_free(nc);
		return false;
	}
	pthread_mutex_lock(&srv->lock);
	t->first = t->wc;
	t->wc = nc;
	/* A kill that came between the check and the swap saw the old
	 * run: it is this one's. */
	if (t->killed)
		ward_call_stop(nc,
			       t->stop_why ? t->stop_why : WARD_STOP_CANCELLED);
	pthread_mutex_unlock(&srv->lock);
	return true;
}

static void *watcher_main(void *arg)
{
	struct acp_terminal *t = arg;
	struct acp_server *srv = t->srv;
	bool retried = false, asking, killed;
	ward_result *res;
	struct retry r;
	char *text;
	int err;

	for (;;) {
		res = NULL;
		err = ward_call_wait(t->wc, &res, 0);
		pthread_mutex_lock(&srv->lock);
		drain_locked(t);
		killed = t->killed;
		pthread_mutex_unlock(&srv->lock);
		if (err) {
			/* The runner failed, or it was stopped before the
			 * command started: nothing ran. */
			say(t, not_run_text(t->wc, err));
			pthread_mutex_lock(&srv->lock);
			finish_locked(t, err != WARD_ESTOPPED,
				      err == WARD_ESTOPPED ? -1 : 125, 0);
			pthread_mutex_unlock(&srv->lock);
			return NULL;
		}
		asking = !retried && !killed && !ward_call_stopped(t->wc) &&
			 want_retry(&r, t->wc);
		/* The denial text for this surface (the marker, the
		 * report, and that ward asks when it does), the proxy's
		 * refusals, a stop. */
		if (ward_call_denied(t->wc)) {
			if (ward_call_render_denial(&text, t->wc) != 0)
				acp_oom();
			say(t, text);
		}
		if (ward_call_render_network(&text, t->wc) != 0)
			acp_oom();
		say(t, text);
		if (ward_call_stopped(t->wc)) {
			if (ward_render_stopped(&text, WARD_SUBJECT_COMMAND,
						ward_call_stopped(t->wc) ==
						    WARD_STOP_SHUTDOWN,
						true) != 0)
				acp_oom();
			say(t, text);
		}
		if (asking && retry(t, &r)) {
			retried = true;
			ward_result_free(res);
			continue;
		}
		pthread_mutex_lock(&srv->lock);
		finish_locked(t, ward_result_signal(res) == 0,
			      ward_result_exit_code(res),
			      ward_result_signal(res));
		pthread_mutex_unlock(&srv->lock);
		ward_result_free(res);
		return NULL;
	}
}

/* --- the table ------------------------------------------------------------- */

static void terminal_free(struct acp_terminal *t)
{
	ward_call_free(t->wc);
	ward_call_free(t->first);
	ward_strv_free(t->argv);
	ward_strv_free(t->envp);
	free(t->cwd);
	free(t->tool_call_id);
	free(t->out.buf);
	free(t);
}

/* The terminal @id of session @sid, with a reference (acp_put), or NULL
 * with *message. */
static struct acp_terminal *get(struct acp_server *srv, json_t *params,
				char **message)
{
	const char *sid = acp_str(params, "sessionId");
	const char *id = acp_str(params, "terminalId");
	struct acp_terminal *t = NULL;

	if (!sid || !id) {
		if (!(*message = strdup("Invalid params: \"sessionId\" and "
					"\"terminalId\" must be strings")))
			acp_oom();
		return NULL;
	}
	pthread_mutex_lock(&srv->lock);
	for (t = srv->terminals; t; t = t->next)
		if (!t->released && strcmp(t->id, id) == 0 &&
		    strcmp(t->session->id, sid) == 0)
			break;
	if (t)
		t->refs++;
	pthread_mutex_unlock(&srv->lock);
	if (!t && asprintf(message,
			   "Invalid params: no terminal %.64s in session "
			   "%.200s (it may have been released)",
			   id, sid) < 0)
		acp_oom();
	return t;
}

static void put(struct acp_terminal *t)
{
	pthread_mutex_lock(&t->srv->lock);
	t->refs--;
	pthread_cond_broadcast(&t->srv->cond);
	pthread_mutex_unlock(&t->srv->lock);
}

/* Stop @t's command for @why (the lock held): it is killed and its end
 * recorded as stopped; a question to the person is withdrawn. */
static void stop_locked(struct acp_terminal *t, enum ward_call_stop why)
{
	t->killed = true;
	t->withdrawn = true;
	if (!t->stop_why)
		t->stop_why = why;
	if (!t->done && t->wc)
		ward_call_stop(t->wc, why);
	pthread_cond_broadcast(&t->srv->cond);
}

/*
 * Take @t out of the table and free it once its watcher has ended and
 * no worker uses it (@held: the caller's own reference, given up).
 */
static void retire(struct acp_terminal *t, bool held)
{
	struct acp_server *srv = t->srv;
	bool live;

	pthread_mutex_lock(&srv->lock);
	if (held)
		t->refs--;
	/* Every user first (they end once the stopped command has: its
	 * creator, once the watcher runs), then the watcher. */
	while (t->refs > 0)
		pthread_cond_wait(&srv->cond, &srv->lock);
	live = t->watcher_live;
	t->watcher_live = false;
	pthread_mutex_unlock(&srv->lock);
	if (live)
		pthread_join(t->watcher, NULL);
	pthread_mutex_lock(&srv->lock);
	for (struct acp_terminal **pp = &srv->terminals; *pp;
	     pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	srv->nterminals--;
	pthread_cond_broadcast(&srv->cond);
	pthread_mutex_unlock(&srv->lock);
	terminal_free(t);
}

/* --- the methods --------------------------------------------------------------- */

static json_t *invalid(int *code, char **message, const char *text)
{
	*code = WARD_JR_INVALID_PARAMS;
	if (!(*message = strdup(text)))
		acp_oom();
	return NULL;
}

/* Append a copy of @s to the NULL-terminated vector *@v of *@n. */
static void strv_push(char ***v, size_t *n, const char *s)
{
	char **grown = realloc(*v, (*n + 2) * sizeof(*grown));

	if (!grown || !(grown[*n] = strdup(s)))
		acp_oom();
	grown[++*n] = NULL;
	*v = grown;
}

/* environ with the request's env entries set (a later one wins). */
static char **make_env(json_t *env, char **message)
{
	char **out = NULL;
	size_t i, n = json_array_size(env), len = 0;

	for (char **e = environ; e && *e; e++) {
		bool replaced = false;

		for (i = 0; i < n; i++) {
			const char *name =
			    acp_str(json_array_get(env, i), "name");
			size_t nl = name ? strlen(name) : 0;

			replaced |=
			    nl && strncmp(*e, name, nl) == 0 && (*e)[nl] == '=';
		}
		if (!replaced)
			strv_push(&out, &len, *e);
	}
	for (i = 0; i < n; i++) {
		json_t *v = json_array_get(env, i);
		const char *name = acp_str(v, "name");
		const char *value = acp_str(v, "value");
		char *kv = NULL;

		if (!name || !*name || strchr(name, '=') || !value) {
			ward_strv_free(out);
			if (!(*message = strdup(
				  "Invalid params: every \"env\" entry needs a "
				  "\"name\" (without '=') and a \"value\" "
				  "(strings)")))
				acp_oom();
			return NULL;
		}
		if (asprintf(&kv, "%s=%s", name, value) < 0)
			acp_oom();
		strv_push(&out, &len, kv);
		free(kv);
	}
	/* An empty environment is an empty vector, not none. */
	if (!out && !(out = calloc(1, sizeof(*out))))
		acp_oom();
	return out;
}

/* Whether @s is one plain word a shell would run as it is: a program
 * name or path, no spaces, quotes, expansions or operators. */
static bool plain_word(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_./+-") == strlen(s);
}

/*
 * The command line: command, then args. A command without args is a
 * shell command line ("npm test | tail"), run with bash -c, as editors
 * run it and as agents send it (ward mcp's bash tool runs commands the
 * same way) — unless it is one plain word ("make"), which bash would only
 * exec: then ward execs it. NULL when @args is not all strings.
 */
static char **make_argv(const char *command, json_t *args)
{
	char **out = NULL;
	size_t len = 0;

	if (json_array_size(args) == 0 && !plain_word(command)) {
		strv_push(&out, &len, "bash");
		strv_push(&out, &len, "-c");
		strv_push(&out, &len, command);
		return out;
	}
	strv_push(&out, &len, command);
	for (size_t i = 0; i < json_array_size(args); i++) {
		const char *a = json_string_value(json_array_get(args, i));

		if (!a) {
			ward_strv_free(out);
			return NULL;
		}
		strv_push(&out, &len, a);
	}
	return out;
}

static json_t *do_create(struct acp_work *w, int *code, char **message,
			 json_t **data)
{
	struct acp_server *srv = w->srv;
	json_t *p = w->params, *args = json_object_get(p, "args");
	json_t *env = json_object_get(p, "env");
	json_t *lim = json_object_get(p, "outputByteLimit");
	json_t *cwd = json_object_get(p, "cwd");
	const char *command = acp_str(p, "command");
	const char *sid = acp_str(p, "sessionId");
	struct acp_terminal *t;
	struct acp_session *s;
	pthread_attr_t attr;
	sigset_t all, old;
	ward_call *wc = NULL;
	json_t *r;
	int err;

	(void)data;
	if (!sid || !command || !*command)
		return invalid(code, message,
			       "Invalid params: terminal/create needs "
			       "\"sessionId\" and \"command\" (strings)");
	if ((args && !json_is_array(args) && !json_is_null(args)) ||
	    (env && !json_is_array(env) && !json_is_null(env)) ||
	    (cwd && !json_is_string(cwd) && !json_is_null(cwd)) ||
	    (lim && !json_is_null(lim) &&
	     (!json_is_integer(lim) || json_integer_value(lim) < 0)))
		return invalid(code, message,
			       "Invalid params: \"args\" and \"env\" must be "
			       "arrays, \"cwd\" a string, \"outputByteLimit\" "
			       "a whole number of bytes");
	if (json_is_string(cwd) && json_string_value(cwd)[0] != '/')
		return invalid(code, message,
			       "Invalid params: \"cwd\" must be an absolute "
			       "path");
	s = acp_session_for(srv, sid, code, message);
	if (!s)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		acp_oom();
	t->srv = srv;
	t->session = s;
	t->limit = json_is_integer(lim) ? (size_t)json_integer_value(lim)
					: ACP_OUTPUT_DEFAULT;
	if (t->limit > ACP_OUTPUT_MAX)
		t->limit = ACP_OUTPUT_MAX;
	t->out.limit = t->limit;
	t->ask.srv = srv;
	t->ask.session_id = s->id;
	t->ask.withdrawn = &t->withdrawn;
	t->ask.kind = "execute";
	t->argv = make_argv(command, args);
	if (!t->argv) {
		terminal_free(t);
		return invalid(code, message,
			       "Invalid params: every \"args\" entry must be "
			       "a string");
	}
	t->envp = make_env(env, message);
	if (!t->envp) {
		*code = WARD_JR_INVALID_PARAMS;
		terminal_free(t);
		return NULL;
	}
	if (json_is_string(cwd) && !(t->cwd = strdup(json_string_value(cwd))))
		acp_oom();

	pthread_mutex_lock(&srv->lock);
	if (srv->stopping || srv->nterminals >= ACP_MAX_TERMINALS) {
		pthread_mutex_unlock(&srv->lock);
		*code = WARD_JR_INTERNAL_ERROR;
		if (asprintf(message, "%s",
			     srv->stopping
				 ? "ward acp is shutting down"
				 : "too many terminals; release one first") < 0)
			acp_oom();
		terminal_free(t);
		return NULL;
	}
	srv->nterminals++;
	snprintf(t->id, sizeof(t->id), "ward-term-%lu", ++srv->next_terminal);
	pthread_mutex_unlock(&srv->lock);

	err = new_call(&wc, t, NULL);
	if (!err)
		err = start_call(t, wc);
	if (err) {
		*code = err == WARD_EINVAL && !wc ? WARD_JR_INVALID_PARAMS
						  : WARD_JR_INTERNAL_ERROR;
		*message =
		    wc ? not_run_text(wc, err) : strdup(ward_error_last());
		if (!*message)
			acp_oom();
		ward_call_free(wc);
		pthread_mutex_lock(&srv->lock);
		srv->nterminals--;
		pthread_mutex_unlock(&srv->lock);
		terminal_free(t);
		return NULL;
	}
	t->wc = wc;

	pthread_mutex_lock(&srv->lock);
	t->next = srv->terminals;
	srv->terminals = t;
	/* Ours until its watcher runs: a stop that comes meanwhile waits
	 * for this reference before it frees the terminal. */
	t->refs = 1;
	/* Stopping began while it started: it is stopped at once. */
	if (srv->stopping)
		stop_locked(t, WARD_STOP_SHUTDOWN);
	pthread_mutex_unlock(&srv->lock);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WATCHER_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t->watcher, &attr, watcher_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		pthread_mutex_lock(&srv->lock);
		t->released = true;
		stop_locked(t, WARD_STOP_CANCELLED);
		pthread_mutex_unlock(&srv->lock);
		retire(t, true);
		*code = WARD_JR_INTERNAL_ERROR;
		if (!(*message = strdup("cannot start a thread")))
			acp_oom();
		return NULL;
	}
	r = json_pack("{s:s}", "terminalId", t->id);
	pthread_mutex_lock(&srv->lock);
	t->watcher_live = true;
	pthread_mutex_unlock(&srv->lock);
	put(t);
	return r;
}

static json_t *do_output(struct acp_terminal *t)
{
	json_t *r;

	pthread_mutex_lock(&t->srv->lock);
	if (!t->done)
		drain_locked(t);
	r = json_pack(
	    "{s:o, s:b}", "output",
	    ward_json_text(t->out.buf ? t->out.buf + t->out.start : NULL,
			   t->out.len - t->out.start),
	    "truncated", t->out.truncated);
	if (r && t->done)
		json_object_set_new(r, "exitStatus", exit_json(t));
	pthread_mutex_unlock(&t->srv->lock);
	if (!r)
		acp_oom();
	return r;
}

static json_t *do_wait(struct acp_work *w, struct acp_terminal *t)
{
	json_t *r = NULL;

	pthread_mutex_lock(&t->srv->lock);
	while (!t->done && !w->cancelled)
		pthread_cond_wait(&t->srv->cond, &t->srv->lock);
	if (t->done)
		r = exit_json(t);
	pthread_mutex_unlock(&t->srv->lock);
	/* Cancelled: the worker answers that. */
	return r ? r : json_object();
}

/* Wait (the lock held) up to @ms for @t's final status. */
static void wait_done_locked(struct acp_terminal *t, unsigned long ms)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (!t->done && pthread_cond_timedwait(&t->srv->cond, &t->srv->lock,
						  &until) == 0)
		;
}

/* terminal/kill: SIGTERM, so it may clean up; SIGKILL after 2 s. The
 * terminal stays, with its output and exit status. */
static json_t *do_kill(struct acp_terminal *t)
{
	struct acp_server *srv = t->srv;

	pthread_mutex_lock(&srv->lock);
	if (!t->done) {
		t->killed = true;
		t->withdrawn = true;
		pthread_cond_broadcast(&srv->cond);
		ward_task_kill(ward_call_task(t->wc), SIGTERM);
		wait_done_locked(t, KILL_GRACE_MS);
	}
	if (!t->done) {
		ward_task_kill(ward_call_task(t->wc), SIGKILL);
		wait_done_locked(t, KILL_GRACE_MS);
	}
	pthread_mutex_unlock(&srv->lock);
	return json_object();
}

/* terminal/release: kill it if it still runs, then forget it. */
static json_t *do_release(struct acp_terminal *t)
{
	struct acp_server *srv = t->srv;

	pthread_mutex_lock(&srv->lock);
	t->released = true;
	stop_locked(t, WARD_STOP_CANCELLED);
	pthread_mutex_unlock(&srv->lock);
	retire(t, true);
	return json_object();
}

json_t *acp_terminal_call(struct acp_work *w, int *code, char **message,
			  json_t **data)
{
	const char *m = w->method;
	struct acp_terminal *t;
	json_t *r;

	*message = NULL;
	if (strcmp(m, "terminal/create") == 0)
		return do_create(w, code, message, data);
	if (strcmp(m, "terminal/output") != 0 &&
	    strcmp(m, "terminal/wait_for_exit") != 0 &&
	    strcmp(m, "terminal/kill") != 0 &&
	    strcmp(m, "terminal/release") != 0) {
		*code = WARD_JR_METHOD_NOT_FOUND;
		if (asprintf(message, "Method not found: %.128s", m) < 0)
			acp_oom();
		return NULL;
	}
	t = get(w->srv, w->params, message);
	if (!t) {
		*code = WARD_JR_INVALID_PARAMS;
		return NULL;
	}
	if (strcmp(m, "terminal/release") == 0)
		return do_release(t); /* gives up the reference */
	if (strcmp(m, "terminal/output") == 0)
		r = do_output(t);
	else if (strcmp(m, "terminal/wait_for_exit") == 0)
		r = do_wait(w, t);
	else
		r = do_kill(t);
	put(t);
	return r;
}

/* Stop and free every terminal that @s is NULL or owns it. */
static void stop_where(struct acp_server *srv, struct acp_session *s,
		       enum ward_call_stop why)
{
	struct acp_terminal *t;

	for (;;) {
		pthread_mutex_lock(&srv->lock);
		for (t = srv->terminals; t; t = t->next)
			if (!t->released && (!s || t->session == s))
				break;
		if (t) {
			t->released = true;
			stop_locked(t, why);
			t->refs++;
		}
		pthread_mutex_unlock(&srv->lock);
		if (!t)
			return;
		retire(t, true);
	}
}

void acp_terminals_stop_all(struct acp_server *srv)
{
	stop_where(srv, NULL, WARD_STOP_SHUTDOWN);
}

void acp_terminals_stop_session(struct acp_server *srv, struct acp_session *s)
{
	stop_where(srv, s, WARD_STOP_CANCELLED);
}
