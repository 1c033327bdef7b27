/*
 * ward — sessions: the append-only JSONL log that is the only store of
 * per-session state (the sandbox mode and approval policy knobs) and the
 * audit trail of every call made under the session.
 *
 * One file per session, <store>/<id>.jsonl, where the store is
 * $XDG_STATE_HOME/ward/sessions (default ~/.local/state/ward/sessions).
 * The first line is the header {"type":"session/header", id, cwd, created,
 * ward_version}; every further line is one event, a JSON object with a
 * "type" and a "time". Knob events:
 *
 *   {"type":"sandbox/mode",    "time":…, "mode":"workspace-write"}
 *   {"type":"approval/policy", "time":…, "policy":"never"}
 *   {"type":"sandbox/network", "time":…, "network":"off"}
 *
 * The effective value of a knob is a pure fold: the last knob event of its
 * type in the session's own log, else the configured default. The only way
 * to change a knob is its setter, which appends one event — or nothing when
 * the value asked for is already in force.
 *
 * Durability and concurrency. A session file is created whole (the header
 * is written to a temporary file, fsynced and linked into place), so a
 * header is never torn. Each append is ONE write() of one whole line to a
 * descriptor opened with O_APPEND, followed by fdatasync(), while holding an
 * exclusive flock() on the file; readers hold a shared flock() while they
 * read. A torn last line (a crash in the middle of an append: bytes after
 * the last newline) is ignored on read and truncated away by the next
 * append, under the lock, which also appends a {"type":"log/repaired"}
 * event saying how many bytes it discarded. A line in the middle that is
 * not a valid event is an error (-EBADMSG) whose detail names the file and
 * the line number; it is never skipped.
 *
 * Taking a log's lock waits at most WARD_SESSION_LOCK_WAIT_MS (or what the
 * environment variable of that name says); then the
 * operation fails with -EAGAIN and a detail naming the log and saying
 * another process holds it. The bound matters because the log is readable
 * inside confined runs and flock() needs only a read descriptor: a process
 * a command left running could otherwise hang every later reload, knob
 * change and append.
 *
 * Security: writing a session's log would let a command choose its own
 * sandbox mode, so the store must never be writable from inside a confined
 * run. The default store lies under ward's state directory, which every
 * runner and the fs fence keep read-only inside any writable root (the
 * protected paths); ward_session_check_policy() refuses a policy under
 * which the store would still be writable (a store given explicitly, or
 * moved by XDG_STATE_HOME, inside a writable root), and
 * ward_session_create() refuses a cwd that would make it so.
 */
#ifndef WARD_SESSION_H
#define WARD_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "mode.h"
#include "network.h"
#include "policy.h"
#include "runner.h"

WARD_BEGIN_DECL

typedef struct ward_session ward_session;

/**
 * How long taking a session log's lock may wait, in milliseconds, unless
 * the environment variable WARD_SESSION_LOCK_WAIT_MS says otherwise (a
 * whole number of milliseconds, 1 to 600000; anything else is ignored):
 * tests that hold a lock on purpose shorten it.
 */
#define WARD_SESSION_LOCK_WAIT_MS 5000

/** The longest session id accepted ([A-Za-z0-9-]{1,64}). */
#define WARD_SESSION_ID_MAX 64

/** The approval policy knob. */
enum ward_approval_policy {
	/** Escalation requests are put to a person. */
	WARD_APPROVAL_ASK = 0,
	/** Escalation requests are refused automatically. */
	WARD_APPROVAL_NEVER = 1,
};

/**
 * ward_approval_policy_parse - parse "ask" or "never". 0 or WARD_EINVAL
 * (the detail names the bad value).
 */
WARD_EXTERN int ward_approval_policy_parse(enum ward_approval_policy *out,
					   const char *text);
/** "ask", "never"; "unknown" otherwise. Static storage. */
WARD_EXTERN const char *ward_approval_policy_name(enum ward_approval_policy p);

/**
 * The configured defaults a session falls back to (ward.yml, flags):
 * the mode and approval policy in force when the session's log has no
 * event for that knob, and the workspace root used when the session has
 * no cwd.
 */
struct ward_session_defaults {
	enum ward_mode mode;
	enum ward_approval_policy approval;
	/** Configured workspace root; NULL: none. Borrowed. */
	const char *root;
};

#define WARD_SESSION_DEFAULTS_INIT                                             \
	{                                                                      \
		WARD_MODE_DEFAULT, WARD_APPROVAL_ASK, NULL                     \
	}

/** Where a knob's effective value came from. */
enum ward_knob_source {
	WARD_KNOB_DEFAULT = 0, /* the configured default */
	WARD_KNOB_SESSION,     /* the last knob event in the session's log */
	WARD_KNOB_ESCALATION,  /* an approved escalation (one call only) */
};

/** "default", "session", "escalation". Static storage. */
WARD_EXTERN const char *ward_knob_source_name(enum ward_knob_source source);

/**
 * ward_session_id_valid - true when @id is 1 to WARD_SESSION_ID_MAX
 * characters of [A-Za-z0-9-] (nothing that could name another path).
 */
WARD_EXTERN bool ward_session_id_valid(const char *id);

/**
 * ward_session_store_default - the default store directory:
 * $XDG_STATE_HOME/ward/sessions when XDG_STATE_HOME is an absolute path,
 * else $HOME/.local/state/ward/sessions. Nothing is created. The caller
 * frees *out. WARD_EINVAL when neither variable is usable.
 */
WARD_EXTERN int ward_session_store_default(char **out);

/**
 * ward_session_create - create a new session with a random id in @store
 * (NULL: the default store, created with mode 0700 when missing; under
 * $HOME only when the home directory exists — a missing one, such as
 * /nonexistent, is never created: WARD_EINVAL).
 *
 * @cwd, when not NULL, must be an existing directory; it is recorded as
 * an absolute canonical path and becomes the workspace root of every call
 * in the session. NULL records no cwd (calls use the configured root).
 * A cwd that contains the store is refused (WARD_EINVAL) unless the store
 * is a protected path: under workspace-write a confined command could
 * otherwise rewrite its own session.
 *
 * The caller frees *out with ward_session_free().
 */
WARD_EXTERN int ward_session_create(ward_session **out, const char *store,
				    const char *cwd);

#define WARD_SESSION_CREATE_OPTIONS_VERSION 2

/** What a new session starts with (ward_session_create_with). */
struct ward_session_create_options {
	unsigned version;
	/** The store (NULL: the default one); as ward_session_create. */
	const char *store;
	/** The session's cwd (NULL: none); as ward_session_create. */
	const char *cwd;
	/**
	 * Record this mode / approval policy in the new log, in the same
	 * atomic write as its header: the session then keeps the value in
	 * force when it was made, whatever the configured default later
	 * says (a session without the event follows the default).
	 */
	bool set_mode;
	enum ward_mode mode;
	bool set_approval;
	enum ward_approval_policy approval;
	/* --- version 2 --- */
	/**
	 * The new session's id (ward_session_id_valid); NULL: a random one.
	 * A front end that maps another protocol's sessions to ward's
	 * (`ward acp`) derives it, so the same session is found again.
	 * When a session with this id exists: -EEXIST, nothing written.
	 */
	const char *id;
};

#define WARD_SESSION_CREATE_OPTIONS_INIT                                       \
	{                                                                      \
		WARD_SESSION_CREATE_OPTIONS_VERSION, NULL, NULL, false,        \
		    WARD_MODE_DEFAULT, false, WARD_APPROVAL_ASK, NULL          \
	}

/** ward_session_create_options_init - @o to the defaults of @version
 * (1 or WARD_SESSION_CREATE_OPTIONS_VERSION). */
WARD_EXTERN int
ward_session_create_options_init(struct ward_session_create_options *o,
				 unsigned version);

/**
 * ward_session_create_with - ward_session_create() with initial knob
 * events. Create a session only once everything it depends on (the
 * configuration) is known to be valid: a failed start must leave no
 * session behind. Errors as ward_session_create(), and WARD_EINVAL for a
 * bad option. The caller frees *out with ward_session_free().
 */
WARD_EXTERN int
ward_session_create_with(ward_session **out,
			 const struct ward_session_create_options *opts);

/**
 * ward_session_remove - delete session @id from @store (NULL: default).
 * The log is unlinked under its exclusive lock (taken as an append takes
 * it, with the same bounded wait), so no append is cut in half; a process
 * that still has the session open keeps writing to the removed file and
 * nobody sees it again. Returns 0, WARD_EINVAL (a bad id), -ENOENT (no
 * such session), -EAGAIN (another process held the lock all along) or
 * another -errno; the detail names the log.
 */
WARD_EXTERN int ward_session_remove(const char *store, const char *id);

/**
 * ward_session_prune - remove every session of @store (NULL: default)
 * whose log was last written (its last event) at least @older_than_s
 * seconds ago, each as ward_session_remove() does. *removed gets the ids
 * removed, *busy (may be NULL) those skipped because another process held
 * their lock; both sorted, possibly empty, freed with ward_strv_free().
 * A missing store prunes nothing. Returns 0 or the first error that
 * stopped it (sessions removed before it stay removed).
 */
WARD_EXTERN int ward_session_prune(char ***removed, char ***busy,
				   const char *store,
				   unsigned long long older_than_s);

/**
 * ward_session_open - open and read an existing session. Returns -ENOENT
 * when there is no such session, WARD_EINVAL for an invalid id, -EBADMSG
 * for a log with a corrupt line (the detail names the line) or a header
 * that does not match the file. The caller frees *out.
 */
WARD_EXTERN int ward_session_open(ward_session **out, const char *store,
				  const char *id);

/**
 * ward_session_refresh - bring the knob folds up to date with what other
 * processes (or threads) appended since the last read: only the new part of
 * the log is read, and only lines that can be knob events are parsed, so
 * its cost does not grow with the session's length. A log that was
 * replaced or cut is read anew. Thread-safe; call it before each call's
 * policy is resolved (ward_call_new does).
 */
WARD_EXTERN int ward_session_refresh(ward_session *session);

/**
 * ward_session_reload - read the whole log again (under a shared lock),
 * validating every line, so the folds and the event list see what other
 * processes appended since. On error the session keeps its previous
 * snapshot.
 */
WARD_EXTERN int ward_session_reload(ward_session *session);

/**
 * ward_session_sync - make the events this handle appended durable
 * (fdatasync of the log). The events of a call are written with one
 * write(2) each and not synced one by one: a kill -9 loses none of them,
 * a power loss can lose those since the last sync. Knob events and the
 * header are synced when written. Returns 0 (also when there was nothing
 * to sync) or -errno.
 */
WARD_EXTERN int ward_session_sync(ward_session *session);

/**
 * ward_session_free - close a session; syncs first what it appended
 * (ward_session_sync, best effort). Accepts NULL.
 */
WARD_EXTERN void ward_session_free(ward_session *session);

/**
 * ward_session_list - the ids of every session in @store (NULL: default),
 * sorted bytewise; an empty vector when the store does not exist yet.
 * Free with ward_strv_free().
 */
WARD_EXTERN int ward_session_list(char ***out, const char *store);

/**
 * ward_session_find - the full id of the session @id names in @store
 * (NULL: default): @id itself when a session has exactly that id, else
 * the one session whose id begins with @id (a unique prefix, as people
 * type ids). The caller frees *out. WARD_EINVAL for an invalid id or a
 * prefix of several sessions (the detail lists them), -ENOENT when none
 * matches.
 */
WARD_EXTERN int ward_session_find(char **out, const char *store,
				  const char *id);

/* Header facts; strings owned by the session. */
WARD_EXTERN const char *ward_session_id(const ward_session *session);
/** The recorded cwd, or NULL when the session has none. */
WARD_EXTERN const char *ward_session_cwd(const ward_session *session);
/** Creation time, RFC 3339 UTC ("2025-01-31T12:00:00.000Z"). */
WARD_EXTERN const char *ward_session_created(const ward_session *session);
/** The ward version that created the session. */
WARD_EXTERN const char *ward_session_version(const ward_session *session);
/** The log file's path. */
WARD_EXTERN const char *ward_session_path(const ward_session *session);
/** The store directory (canonical). */
WARD_EXTERN const char *ward_session_store(const ward_session *session);

/**
 * The snapshot of events read last (the header excluded). Lines are the
 * exact JSON text of the log, without the newline; owned by the session
 * and valid until the next reload or setter.
 */
WARD_EXTERN size_t ward_session_event_count(const ward_session *session);
WARD_EXTERN const char *ward_session_event(const ward_session *session,
					   size_t i);
WARD_EXTERN const char *ward_session_event_type(const ward_session *session,
						size_t i);
/** True when the last read found (and ignored) a torn last line. */
WARD_EXTERN bool ward_session_torn(const ward_session *session);

/* --- knobs ------------------------------------------------------------ */

/**
 * ward_session_mode - the fold of `sandbox/mode` over the snapshot: the
 * mode of the last such event, else @dflt. *source (may be NULL) says
 * which.
 */
WARD_EXTERN enum ward_mode ward_session_mode(const ward_session *session,
					     enum ward_mode dflt,
					     enum ward_knob_source *source);

/** ward_session_approval - the fold of `approval/policy`, likewise. */
WARD_EXTERN enum ward_approval_policy
ward_session_approval(const ward_session *session,
		      enum ward_approval_policy dflt,
		      enum ward_knob_source *source);

/**
 * ward_session_set_mode - make @mode the session's sandbox mode: under the
 * exclusive lock, read the log again, fold it against @defaults, and append
 * a `sandbox/mode` event unless @mode is already in force (then nothing is
 * appended). *changed (may be NULL) says whether an event was appended.
 * The snapshot is refreshed either way. @defaults NULL: the compiled-in
 * defaults.
 */
WARD_EXTERN int ward_session_set_mode(bool *changed, ward_session *session,
				      enum ward_mode mode,
				      const struct ward_session_defaults *d);

/**
 * ward_session_network - the fold of `sandbox/network` (off or on), else
 * @dflt (the configuration's network for the call, an allowlist
 * included). *source (may be NULL) says which.
 */
WARD_EXTERN enum ward_network
ward_session_network(const ward_session *session, enum ward_network dflt,
		     enum ward_knob_source *source);

/**
 * ward_session_set_network - make @network (off or on; an allowlist is the
 * configuration's and has no event) the session's network, appending a
 * `sandbox/network` event unless it is already in force against @dflt.
 * *changed as for ward_session_set_mode.
 */
WARD_EXTERN int ward_session_set_network(bool *changed, ward_session *session,
					 enum ward_network network,
					 enum ward_network dflt);

/** ward_session_set_approval - the same for `approval/policy`. */
WARD_EXTERN int
ward_session_set_approval(bool *changed, ward_session *session,
			  enum ward_approval_policy policy,
			  const struct ward_session_defaults *d);

/* --- resolution -------------------------------------------------------- */

/**
 * ward_session_check_policy - refuse (WARD_EINVAL, the detail names both
 * paths) a policy under which a confined command could write the session
 * store: a writable root (ward_roots_writable, `rw` rules included) that is
 * the store or an ancestor of it, when the store is not a protected path
 * kept read-only there. danger-full-access is not confined and is not
 * checked. Call it on the final policy of a call (after rules are set).
 */
WARD_EXTERN int ward_session_check_policy(const ward_session *session,
					  const ward_policy *policy);

/*
 * The policy of one call in a session (the session's mode folded against
 * the configuration's, its cwd as the workspace, the configuration's rules)
 * is resolved by ward_call_new() (call.h): there is no other way to make
 * one, so no caller can forget the access rules.
 */

/* --- audit ------------------------------------------------------------ */

/**
 * ward_session_new_call_id - a fresh random call id (12 hex digits) into
 * @buf (at least 13 bytes).
 */
WARD_EXTERN int ward_session_new_call_id(char *buf, size_t len);

#define WARD_SESSION_CALL_VERSION 1

/** One call made under the session, as `call/start` records it. */
struct ward_session_call {
	unsigned version;
	/** The call's id (ward_session_new_call_id). */
	const char *call_id;
	/** "bash", "fs", … */
	const char *tool;
	/** The command (NULL-terminated), or NULL. */
	char *const *argv;
	/** A file operation's name ("write", …), or NULL. */
	const char *operation;
	/** The paths it names (NULL-terminated), or NULL. */
	char *const *paths;
	/** The working directory / workspace root of the call. */
	const char *cwd;
	/** The call's effective mode before any escalation, and its source. */
	enum ward_mode mode;
	enum ward_knob_source mode_source;
};

#define WARD_SESSION_CALL_INIT                                                 \
	{                                                                      \
		WARD_SESSION_CALL_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, \
		    WARD_MODE_DEFAULT, WARD_KNOB_DEFAULT                       \
	}

/** ward_session_call_init - @c to the defaults of @version. 0 or EINVAL. */
WARD_EXTERN int ward_session_call_init(struct ward_session_call *c,
				       unsigned version);

/** ward_session_record_call - append a `call/start` event. */
WARD_EXTERN int ward_session_record_call(ward_session *session,
					 const struct ward_session_call *call);

#define WARD_SESSION_RESULT_VERSION 1

/** How a call ended, as `call/result` records it. */
struct ward_session_result {
	unsigned version;
	const char *call_id;
	/** false: the call never ran (then @error says why). */
	bool ran;
	/** The mode it ran under (the granted one after an escalation). */
	enum ward_mode mode;
	/** Exit status (-1: none, killed by a signal or not a process). */
	int exit_code;
	int signal;
	bool timed_out;
	/** The sandbox refused a file operation. */
	bool denied;
	enum ward_runner runner;
	enum ward_enforcement enforcement;
	/** Recorded instead of @runner's name when not NULL ("fsfence"). */
	const char *runner_name;
	/** A short machine code when it failed or did not run, or NULL. */
	const char *error;
	/** The model-facing text it ended with (marker, outcome), or NULL. */
	const char *text;
};

#define WARD_SESSION_RESULT_INIT                                               \
	{                                                                      \
		WARD_SESSION_RESULT_VERSION, NULL, false, WARD_MODE_DEFAULT,   \
		    -1, 0, false, false, WARD_RUNNER_NONE,                     \
		    WARD_ENFORCEMENT_NONE, NULL, NULL, NULL                    \
	}

/** ward_session_result_init - @r to the defaults of @version. */
WARD_EXTERN int ward_session_result_init(struct ward_session_result *r,
					 unsigned version);

/** ward_session_record_result - append a `call/result` event. */
WARD_EXTERN int
ward_session_record_result(ward_session *session,
			   const struct ward_session_result *result);

/**
 * ward_session_append_json - append one event given as the text of a JSON
 * object with a string "type" (a "time" is added when absent). The knob
 * types and the header type are refused (WARD_EINVAL): knobs change only
 * through their setters. For harness-specific events; ward's own are
 * written by the typed functions above and by the escalation module.
 */
WARD_EXTERN int ward_session_append_json(ward_session *session,
					 const char *object);

WARD_END_DECL

#endif
