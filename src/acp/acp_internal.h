/*
 * ward acp — the protocol-aware proxy between an editor and an ACP agent
 * (see acp.h, man/ward-acp.1 and docs/ACP.md).
 *
 * Shape: the main thread reads both inputs (the editor's stdin and the
 * agent's stdout; one JSON-RPC message per line, framed and parsed by
 * src/mcp/jsonrpc.c) and routes every message. What passes through is
 * forwarded as the very bytes it came as, in order; only the messages ward
 * amends (initialize, the results that carry configOptions, the agent's
 * config_option_update) are encoded anew. What ward serves itself (the
 * agent's fs and terminal requests) runs on a worker thread each, so a
 * terminal/wait_for_exit blocks nothing. Each peer has a writer thread
 * with a queue: nobody ever blocks on a peer that does not read, so two
 * full pipes cannot deadlock the proxy.
 *
 * Requests ward sends the editor itself (session/request_permission, for
 * approvals) carry ids of ward's own ("ward-<random>-<n>"); the main
 * thread routes their answers to the thread waiting, by id.
 *
 * Per-call logic is libward's: a terminal is a ward_call started as a
 * task, a file request a ward_call through the fence, an approval
 * libward's escalation with this proxy as the approval service.
 *
 * Modules: proxy.c (the loop, routing, the agent process, the end),
 * peer.c (the writers), sessions.c (the ACP→ward session map, the
 * Permissions selector, knob changes from elsewhere), terminal.c,
 * files.c, approve.c.
 */
#ifndef WARD_ACP_INTERNAL_H
#define WARD_ACP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdnoreturn.h>

#include <jansson.h>

#include "ward/call.h"
#include "ward/config.h"
#include "ward/escalation.h"
#include "ward/network.h"
#include "ward/session.h"

#include "acp.h"
#include "mcp/jsonrpc.h"

/* The longest message line accepted from either peer (the SDK's own
 * bound is 32 MiB). */
#define ACP_MAX_LINE (32u * 1024u * 1024u)
/* What a peer's writer may hold queued before the peer counts as gone. */
#define ACP_MAX_QUEUED (512u * 1024u * 1024u)
/* Worker threads at once; a request beyond that is refused. */
#define ACP_MAX_WORKERS 64
/* Terminals kept at once per proxy. */
#define ACP_MAX_TERMINALS 64
/* A terminal's retained output when outputByteLimit is absent, and the
 * most ward retains whatever it asks for. */
#define ACP_OUTPUT_DEFAULT (1024u * 1024u)
#define ACP_OUTPUT_MAX	   (16u * 1024u * 1024u)
/* The config option ward adds to every session. */
#define ACP_OPTION_ID "ward_permissions"

/* --- peers (peer.c) ------------------------------------------------------ */

struct acp_chunk {
	char *buf;
	size_t len;
	struct acp_chunk *next;
};

/* One end: the editor (our stdin/stdout) or the agent (its pipes). */
struct acp_peer {
	const char *name; /* "editor", "agent" */
	int in_fd;	  /* what we read from it; -1 when closed */
	int out_fd;	  /* what we write to it; the writer closes it */
	struct ward_jr_lines lines;
	bool eof; /* its input ended */

	/* The writer: a thread draining a queue, one whole line each. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct acp_chunk *head, *tail;
	size_t queued;
	bool closing; /* close out_fd once the queue is written */
	bool dead;    /* a write failed, or it held too much: drop all */
	bool abort;   /* the end: stop waiting for it to read */
	bool writing; /* the writer is writing a chunk (unlocked) */
	bool ended;   /* the writer has finished */
	bool started;
	pthread_t thread;
};

/* peer_init - a peer reading @in_fd and writing @out_fd (-1: later). */
void acp_peer_init(struct acp_peer *p, const char *name, int in_fd, int out_fd);
/* acp_peer_start - start the writer (once out_fd is set). 0 or -errno. */
int acp_peer_start(struct acp_peer *p);
/* acp_peer_send_raw - queue @len bytes of a line and its newline. */
void acp_peer_send_raw(struct acp_peer *p, const char *line, size_t len);
/* acp_peer_send - queue @msg (consumed) as one line. */
void acp_peer_send(struct acp_peer *p, json_t *msg);
/* acp_peer_close - close its output once the queue is written. */
void acp_peer_close(struct acp_peer *p);
/* acp_peer_finish - close; let the writer drain for up to @drain_ms, then
 * stop it; free. */
void acp_peer_finish(struct acp_peer *p, unsigned long drain_ms);
/* acp_peer_gone - a write failed or its reader went away. */
bool acp_peer_gone(struct acp_peer *p);

/* --- the server ---------------------------------------------------------- */

struct acp_terminal;

/* One ACP session bound to its ward session (sessions.c). */
struct acp_session {
	char *id;	     /* the agent's sessionId */
	ward_session *ws;    /* its ward session (thread-safe) */
	ward_config *config; /* loaded for its cwd (read-only) */
	struct ward_session_defaults defaults;
	/* Under the server's lock: */
	json_t *agent_options; /* the agent's own configOptions, or NULL */
	char published[80];    /* ward's option's value, as last sent */
	int watch;	       /* its inotify watch, or -1 */
	bool closed;	       /* session/close or session/delete */
	struct acp_session *next;
};

/* What ward does with the agent's answer to an editor's request. */
enum acp_fwd_kind {
	ACP_FWD_PLAIN = 0, /* pass it through */
	ACP_FWD_NEW,	   /* session/new, session/fork: bind a new one */
	ACP_FWD_LOAD,	   /* session/load, session/resume: bind it again */
	ACP_FWD_SET,	   /* session/set_config_option of the agent's */
	ACP_FWD_CLOSE,	   /* session/close, session/delete */
};

/* An editor request the agent has not answered yet (main thread only). */
struct acp_fwd {
	json_t *id;
	enum acp_fwd_kind kind;
	char *session_id;    /* LOAD, SET, CLOSE: the session named */
	char *cwd;	     /* NEW, LOAD: the canonical cwd */
	ward_config *config; /* NEW, LOAD: loaded for @cwd (owned) */
	struct acp_fwd *next;
};

/* An agent request ward serves, on its worker thread. */
struct acp_work {
	struct acp_server *srv;
	json_t *id;	/* the request's id (a copy) */
	char *method;	/* fs/…, terminal/… */
	json_t *params; /* a copy */
	/* Under the server's lock: */
	bool cancelled; /* $/cancel_request named it */
	struct acp_work *next;
};

struct acp_server {
	/* Set up before the first message; read-only afterwards. */
	const struct acp_options *o;
	struct acp_peer editor, agent;
	ward_netproxy *netproxy; /* shared by every terminal; may be NULL */
	char id_prefix[24];	 /* "ward-<random>-" for our own requests */
	int inotify_fd;		 /* -1: knob changes are polled */

	/* The agent process (proxy.c). */
	ward_call *agent_call; /* confined: a call (no session) */
	ward_task *agent_task; /* unconfined: a plain task */
	ward_policy *agent_policy;

	/* Main thread only. */
	struct acp_fwd *fwd;
	json_t *client_info; /* initialize's clientInfo, or NULL */

	/* Everything below: under lock; cond signals any change. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct acp_session *sessions;
	/* Requests ward sent the editor (session/request_permission). */
	struct ward_jr_pending *pending;
	struct acp_work *works;
	struct acp_terminal *terminals;
	unsigned nterminals;
	unsigned active; /* worker threads alive */
	unsigned long next_request, next_terminal;
	bool stopping;	 /* the end: nothing new starts, waits end */
	bool editor_eof; /* the editor's input ended: nobody can answer */
};

/* --- peer.c: what every module uses ------------------------------------- */

/* acp_oom - out of memory: say so and exit 125. */
noreturn void acp_oom(void);
/* acp_log - "ward acp: …" on stderr. */
void acp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* acp_error - answer @id (borrowed; NULL: null) on @p with an error;
 * @data (may be NULL) is consumed. */
void acp_error(struct acp_peer *p, json_t *id, int code, const char *message,
	       json_t *data);
/* acp_str - params[@key] as a string, or NULL. */
const char *acp_str(json_t *params, const char *key);

/* --- sessions.c ----------------------------------------------------------- */

/*
 * acp_config_load - the configuration of a session working in @cwd (the
 * flag layer with @cwd as the workspace) into *out; on failure NULL and
 * *message (malloc'd) says why, naming the file and line.
 */
int acp_config_load(ward_config **out, char **message,
		    const struct acp_server *srv, const char *cwd);
/* acp_ward_id - the ward session id of the agent's session @acp_id. */
void acp_ward_id(char out[WARD_SESSION_ID_MAX + 1], const char *acp_id);
/*
 * acp_session_bind - bind @acp_id to its ward session (opened when it
 * exists and works in @cwd, else created with the mode in force), taking
 * @config; record it. Returns the session, or NULL with *message.
 */
struct acp_session *acp_session_bind(struct acp_server *srv, const char *acp_id,
				     const char *cwd, ward_config *config,
				     bool load, char **message);
/* acp_session_find - the bound session @id (under the lock), or NULL. */
struct acp_session *acp_session_find_locked(struct acp_server *srv,
					    const char *id);
struct acp_session *acp_session_find(struct acp_server *srv, const char *id);
/* acp_session_for - the open session @id for an agent's request, or NULL
 * with *code and *message (malloc'd) saying it is unknown or closed. */
struct acp_session *acp_session_for(struct acp_server *srv, const char *id,
				    int *code, char **message);
/*
 * acp_options_list - every config option of @s: the agent's own (as it
 * last sent them), then ward's Permissions selector as the session's
 * knobs are now (refreshed). Records what was published. New reference.
 */
json_t *acp_options_list(struct acp_server *srv, struct acp_session *s);
/*
 * acp_options_set - session/set_config_option for ward's option: switch
 * @s to preset @value. Returns the result ({configOptions}) or NULL with
 * *code and *message (malloc'd).
 */
json_t *acp_options_set(struct acp_server *srv, struct acp_session *s,
			json_t *value, int *code, char **message);
/* acp_options_agent - remember @options (borrowed) as the agent's own. */
void acp_options_agent(struct acp_server *srv, struct acp_session *s,
		       json_t *options);
/*
 * acp_sessions_check - the knobs may have changed from elsewhere (`ward
 * session mode`): for every session whose Permissions value is not the
 * one last published, send config_option_update. Main thread.
 */
void acp_sessions_check(struct acp_server *srv);
/* acp_sessions_watch_event - read the inotify descriptor, then check. */
void acp_sessions_watch_event(struct acp_server *srv);
/* acp_sessions_end - record the end (@why) in every bound session. */
void acp_sessions_end(struct acp_server *srv, const char *why);
/* acp_sessions_free - at the end. */
void acp_sessions_free(struct acp_server *srv);

/* --- terminal.c ----------------------------------------------------------- */

/*
 * acp_terminal_call - serve terminal/create, /output, /wait_for_exit,
 * /kill, /release for @w. Returns the result, or NULL with *code,
 * *message (malloc'd) and *data.
 */
json_t *acp_terminal_call(struct acp_work *w, int *code, char **message,
			  json_t **data);
/*
 * acp_terminal_embed - the agent embedded terminal @terminal_id of
 * session @session_id in tool call @tool_call_id (a {"type":"terminal"}
 * content item, which the editor cannot show: it never saw the
 * terminal). The content item to show instead (its output so far), and
 * the tool call gets the final output when the command ends; NULL when
 * ward has no such terminal.
 */
json_t *acp_terminal_embed(struct acp_server *srv, const char *session_id,
			   const char *terminal_id, const char *tool_call_id);
/* acp_terminals_stop_all - stop every terminal (recorded as stopped by
 * the shutdown), wait for their ends, free them. */
void acp_terminals_stop_all(struct acp_server *srv);
/* acp_terminals_stop_session - the same for the terminals of @s. */
void acp_terminals_stop_session(struct acp_server *srv, struct acp_session *s);

/* --- files.c -------------------------------------------------------------- */

/* acp_fs_call - serve fs/read_text_file and fs/write_text_file. */
json_t *acp_fs_call(struct acp_work *w, int *code, char **message,
		    json_t **data);

/* --- approve.c ------------------------------------------------------------ */

/* What an approval is asked for: the session, and what withdraws it. */
struct acp_ask {
	struct acp_server *srv;
	const char *session_id; /* the agent's sessionId */
	struct acp_work *work;	/* the request it serves, or NULL */
	bool *withdrawn;	/* set (under the lock) to withdraw it */
	const char *kind;	/* the tool call's kind: execute, edit, read */
};

/*
 * acp_approve - the approval service (ward_approval_fn, @ctx a struct
 * acp_ask): asks the editor's user with session/request_permission and
 * waits for the answer, the request's cancellation or the end.
 */
enum ward_approval_outcome acp_approve(void *ctx,
				       const struct ward_approval_request *req);
/* acp_response - an answer from the editor to one of our requests:
 * hand it to the thread waiting (true), or false when none waits. */
bool acp_response(struct acp_server *srv, json_t *id, json_t *root);
/* acp_is_ours - whether @id is one of ward's own request ids. */
bool acp_is_ours(const struct acp_server *srv, json_t *id);

#endif
