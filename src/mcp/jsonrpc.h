/*
 * ward — JSON-RPC 2.0 over newline-delimited streams (internal; not
 * installed): the line splitter and the message parser `ward mcp` reads
 * stdin with, and builders for what it writes.
 *
 * Framing: one message per line. A line longer than the splitter's bound
 * is reported once, as soon as it crosses the bound, and then skipped up
 * to its newline without being buffered, so a peer cannot make the reader
 * hold more than the bound nor stall it. A trailing carriage return is
 * dropped; blank lines are ignored by the parser.
 *
 * Nothing here reads or writes a descriptor: the splitter is fed bytes and
 * calls back, the parser takes one line, the builders return jansson
 * values. That keeps every piece callable from the fuzzer
 * (tests/fuzz/fuzz_jsonrpc.c) without spawning anything.
 */
#ifndef WARD_JSONRPC_H
#define WARD_JSONRPC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* JSON-RPC 2.0 error codes. */
enum ward_jr_code {
	WARD_JR_PARSE_ERROR = -32700,
	WARD_JR_INVALID_REQUEST = -32600,
	WARD_JR_METHOD_NOT_FOUND = -32601,
	WARD_JR_INVALID_PARAMS = -32602,
	WARD_JR_INTERNAL_ERROR = -32603,
};

/* --- the line splitter ------------------------------------------------ */

/*
 * Called for each complete line (without its newline or a trailing '\r';
 * @line is not NUL-terminated and is valid only during the call), or,
 * with @line NULL, once for a line that exceeded the bound (@len: its
 * length so far).
 */
typedef void (*ward_jr_line_fn)(void *ctx, const char *line, size_t len);

struct ward_jr_lines {
	char *buf;
	size_t len, cap;
	size_t max;    /* the longest line accepted, in bytes */
	bool skipping; /* inside an oversized line: drop up to its newline */
};

/* ward_jr_lines_init - an empty splitter accepting lines of @max bytes. */
void ward_jr_lines_init(struct ward_jr_lines *l, size_t max);

/*
 * ward_jr_lines_feed - split @n bytes of @data, calling @fn for each line
 * completed. Returns 0, or -ENOMEM when a partial line cannot be kept
 * (then it is reported as oversized and skipped, as a longer one would).
 */
int ward_jr_lines_feed(struct ward_jr_lines *l, const char *data, size_t n,
		       ward_jr_line_fn fn, void *ctx);

/*
 * ward_jr_lines_finish - at end of input: a last line without a newline
 * is still a line (@fn is called for it).
 */
void ward_jr_lines_finish(struct ward_jr_lines *l, ward_jr_line_fn fn,
			  void *ctx);

/* ward_jr_lines_free - release the buffer. */
void ward_jr_lines_free(struct ward_jr_lines *l);

/* --- the parser ------------------------------------------------------- */

enum ward_jr_kind {
	WARD_JR_EMPTY = 0,    /* a blank line: ignore it */
	WARD_JR_REQUEST,      /* method + id: answer it */
	WARD_JR_NOTIFICATION, /* method, no id: never answered */
	WARD_JR_RESPONSE,     /* id + result or error: to a request of ours;
			       * an error with a null id (id NULL here): to
			       * a message the peer could not read */
	WARD_JR_INVALID,      /* answer with code/message (id or null) */
};

/* One parsed message. Every pointer is borrowed from @root. */
struct ward_jr_msg {
	enum ward_jr_kind kind;
	json_t *root; /* owned: ward_jr_msg_clear() */
	json_t *id;   /* request/response id; NULL when there is none */
	const char *method;
	json_t *params; /* object or array, or NULL when absent */
	json_t *result; /* a response's result, or NULL */
	json_t *error;	/* a response's error object, or NULL */
	/* WARD_JR_INVALID: the error to answer with. */
	int code;
	char message[256];
};

/*
 * ward_jr_parse - parse one line into *@m (always written). Malformed JSON
 * gives WARD_JR_INVALID with -32700; valid JSON that is not a JSON-RPC 2.0
 * request, notification or response (a batch, a missing or wrong
 * "jsonrpc", an id that is not a string or an integer, a method that is
 * not a string, params that are neither an object nor an array) gives
 * -32600, with the id when it is a usable one. An error object with
 * "id": null is a response (to a message the peer could not read), not
 * an invalid message: it is never answered. Returns 0, or -ENOMEM.
 */
int ward_jr_parse(struct ward_jr_msg *m, const char *line, size_t len);

/* ward_jr_msg_clear - release @m's JSON and zero it. */
void ward_jr_msg_clear(struct ward_jr_msg *m);

/* --- builders (NULL when out of memory) ------------------------------ */

/* {"jsonrpc":"2.0","id":@id,"result":@result}; steals @result. */
json_t *ward_jr_result(json_t *id, json_t *result);

/* {"jsonrpc":"2.0","id":@id or null,"error":{code,message[,data]}};
 * steals @data (may be NULL). */
json_t *ward_jr_error(json_t *id, int code, const char *message, json_t *data);

/* A request of ours: {"jsonrpc":"2.0","id":@id,"method",params}; steals
 * @params (may be NULL). */
json_t *ward_jr_request(json_t *id, const char *method, json_t *params);

/* {"jsonrpc":"2.0","method",params}; steals @params (may be NULL). */
json_t *ward_jr_notification(const char *method, json_t *params);

/*
 * ward_jr_encode - @msg as one line: compact JSON and a newline (JSON
 * strings escape every control character, so the line holds no other
 * newline). *@len gets its length. The caller frees it; NULL when out of
 * memory.
 */
char *ward_jr_encode(size_t *len, const json_t *msg);

/*
 * ward_jr_text - copy @src into @dst (@size bytes, NUL-terminated) as
 * valid UTF-8: a byte that starts no valid sequence becomes the text
 * "\xNN", and the copy never ends in the middle of a character.
 */
void ward_jr_text(char *dst, size_t size, const char *src);

/* ward_jr_id_valid - a usable id: a string or an integer. */
bool ward_jr_id_valid(const json_t *id);

/* --- requests of ours waiting for their answer ------------------------- */

/*
 * One request a server sent its peer and waits on (an elicitation, a
 * permission question). The list is the caller's, under the caller's
 * lock; the thread that reads the peer hands each answer to its entry.
 */
struct ward_jr_pending {
	json_t *id;
	json_t *response; /* the whole response message, once it came */
	bool done;
	struct ward_jr_pending *next;
};

/* ward_jr_pending_add - put @p at the head of *@list. */
void ward_jr_pending_add(struct ward_jr_pending **list,
			 struct ward_jr_pending *p);

/* ward_jr_pending_remove - take @p off *@list (when it is there). */
void ward_jr_pending_remove(struct ward_jr_pending **list,
			    struct ward_jr_pending *p);

/*
 * ward_jr_pending_answer - the response @root (borrowed; a deep copy is
 * kept: the waiting thread owns it) to the request @id: hand it to its
 * entry of @list. False when no entry waits for @id.
 */
bool ward_jr_pending_answer(struct ward_jr_pending *list, const json_t *id,
			    json_t *root);

#endif
