/*
 * ward mcp — an MCP server over stdio giving any agent sandboxed bash and
 * file tools (see man/ward-mcp.1 and docs/MCP.md).
 *
 * Shape: the main thread reads stdin (one JSON-RPC message per line,
 * src/mcp/jsonrpc.c), answers the quick methods itself and hands every
 * tools/call to a worker thread, so a slow command blocks neither `ping`
 * nor another call. Everything written to stdout goes through one
 * mutex-protected writer, one whole line at a time. Requests the server
 * sends (elicitation/create, for approvals) are answered on stdin; the
 * main thread routes each answer to the worker waiting for it, by id.
 *
 * This header is shared by server.c (protocol, threads, sessions,
 * approvals) and tools.c (the tools); mcp.h is the front end's entry.
 */
#ifndef WARD_MCP_INTERNAL_H
#define WARD_MCP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdnoreturn.h>

#include <jansson.h>

#include "ward/call.h"
#include "ward/escalation.h"
#include "ward/exec.h"
#include "ward/session.h"

#include "jsonrpc.h"
#include "mcp.h"

/* Defaults and bounds of the tools (their descriptions in render.c say
 * the same numbers). */
#define MCP_WAIT_MAX_MS	       600000UL
/* Captured output per stream: the first and the last half are kept. */
#define MCP_CAPTURE_LIMIT (64u * 1024u)
/* The most read_file and list_directory return at once. */
#define MCP_FILE_LIMIT (64u * 1024u)
/* list_directory's default and largest entry bound. */
#define MCP_LIST_DEFAULT 1000
#define MCP_LIST_MAX	 10000
/* Background tasks kept at once. */
#define MCP_MAX_TASKS 32
/* How often a call that carries a progress token hears from us while it
 * waits (for a command, a task or the user's approval). */
#define MCP_PROGRESS_EVERY_MS 2000

/* A background task started by the bash tool. */
struct mcp_bgtask {
	char id[16];	 /* "t1", "t2", … */
	ward_call *call; /* owned: it owns the task and records its end */
	unsigned long timeout_ms;
	/* Guarded by the server's lock: */
	unsigned refs;	 /* workers using it */
	bool unlinked;	 /* removed from the table: the last ref frees */
	bool ended_seen; /* a reader saw it end */
	struct mcp_bgtask *next;
};

/* One tools/call in progress, owned by its worker thread. */
struct mcp_call {
	struct mcp_server *srv;
	json_t *id;		/* the request's id (a reference) */
	json_t *params;		/* its params object (a reference) */
	json_t *progress_token; /* params._meta.progressToken, or NULL */
	double progress;	/* the last progress value sent */
	bool no_elicitation;	/* approval failed: client cannot elicit */
	/* Guarded by the server's lock: */
	bool cancelled; /* notifications/cancelled named this call */
	ward_call *wc;	/* its running foreground command's call, or NULL */
	struct mcp_call *next;
};

struct mcp_server {
	/* Set up before the first message; read-only afterwards. */
	const struct mcp_options *o; /* config, base policy, provider */
	ward_session *session;
	struct ward_session_defaults defaults;
	bool confines; /* a runner can confine (provider select worked) */
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	char select_error[512]; /* why no runner can confine */
	/* ward's network proxy, one per server: every call whose network
	 * is an allowlist gets its own endpoint on it (NULL when it could
	 * not start: such a call then starts its own). */
	ward_netproxy *netproxy;

	/* The writer: one line at a time on stdout. */
	pthread_mutex_t out_lock;
	int out_fd;
	bool out_dead;

	/* Everything below: under lock; cond signals any change. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	char protocol[16];
	bool initialized;
	bool elicitation;	/* the client can elicit in form mode */
	int log_level;		/* index into the syslog levels; -1: none */
	bool listed_escalation; /* what the last tools/list offered */
	bool listed;
	bool draining;		/* input ended: calls in progress may finish */
	bool eof;		/* stopping: calls in progress are stopped */
	unsigned long drain_ms; /* --drain-timeout */
	unsigned active;	/* worker threads alive */
	struct mcp_call *calls;
	/* Requests we sent (elicitation/create) and wait on. */
	struct ward_jr_pending *pending;
	unsigned long next_request;
	struct mcp_bgtask *tasks;
	unsigned ntasks;
	unsigned nreserved; /* slots taken by calls still starting a task */
	unsigned long next_task;
};

/* --- core.c: what the tools and the loop share ----------------------- */

/* mcp_oom - out of memory: say so and exit 125 (nothing can be answered). */
noreturn void mcp_oom(void);

/* mcp_send - write @msg (consumed) as one line; false when it could not. */
bool mcp_send(struct mcp_server *srv, json_t *msg);

/* mcp_send_error - answer request @id (borrowed; NULL: null) with a
 * JSON-RPC error. */
void mcp_send_error(struct mcp_server *srv, json_t *id, int code,
		    const char *message);

/* mcp_log_level - the index of log level @level ("debug" … "emergency"),
 * or -1 when it is not one. */
int mcp_log_level(const char *level);

/* mcp_log - a log line on stderr, and as notifications/message when the
 * client asked for @level ("debug" … "emergency") or more. */
void mcp_log(struct mcp_server *srv, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* mcp_session_knobs - re-read the session's log; its mode and approval
 * policy now (the configured defaults when it has no knob event). */
int mcp_session_knobs(struct mcp_server *srv, enum ward_mode *mode,
		      enum ward_knob_source *source,
		      enum ward_approval_policy *approval);

/*
 * mcp_knobs_seen - a call saw the session's knobs at @mode and @approval:
 * when the escalation fields the tools offer changed since the client
 * last listed them, tell it (notifications/tools/list_changed).
 */
void mcp_knobs_seen(struct mcp_server *srv, enum ward_mode mode,
		    enum ward_approval_policy approval);

/* Whether tools offer the escalation fields under @mode and @approval. */
bool mcp_escalation_fields(struct mcp_server *srv, enum ward_mode mode,
			   enum ward_approval_policy approval);

/* mcp_elicits - whether the client declared form elicitation (then a
 * person can be asked to approve an escalation). */
bool mcp_elicits(struct mcp_server *srv);

/*
 * mcp_approve - the approval service: asks the client's user with an
 * elicitation (form mode) and waits, sending progress notifications when
 * the call carries a progress token. @ctx is the struct mcp_call.
 */
enum ward_approval_outcome mcp_approve(void *ctx,
				       const struct ward_approval_request *req);

/*
 * mcp_call_attach - make @wc (started as a task) the call's running
 * command (NULL: none), so notifications/cancelled and the end of the
 * server can stop it (ward_call_stop). Returns false when the call was
 * already cancelled or the server is stopping (then it has been stopped).
 */
bool mcp_call_attach(struct mcp_call *call, ward_call *wc);

/*
 * mcp_progress - send notifications/progress for @call when its request
 * carried a progress token: @value (raised when needed, so it always
 * increases) and @message.
 */
void mcp_progress(struct mcp_call *call, double value, const char *message);

/* mcp_call_cancelled - whether notifications/cancelled named the call. */
bool mcp_call_cancelled(struct mcp_call *call);

/* mcp_protocol_at_least - the negotiated revision is @rev or later. */
bool mcp_protocol_at_least(struct mcp_server *srv, const char *rev);

/* --- tools.c --------------------------------------------------- */

/* The tools/list result. */
json_t *mcp_tools_list(struct mcp_server *srv);

/* mcp_tools_known - whether @name is one of the tools. */
bool mcp_tools_known(const char *name);

/*
 * mcp_tools_call - run tool @name with @args (an object, or NULL) for
 * @call. Returns a CallToolResult, or NULL with *code set to a JSON-RPC
 * error (-32602 for an unknown tool).
 */
json_t *mcp_tools_call(struct mcp_call *call, const char *name, json_t *args,
		       int *code, const char **message);

/* mcp_tasks_stop_all - kill every background task, record how each one
 * ended in the session, free them (at end of input). */
void mcp_tasks_stop_all(struct mcp_server *srv);

#endif
