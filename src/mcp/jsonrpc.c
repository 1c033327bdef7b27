/*
 * ward — JSON-RPC 2.0 framing and parsing for `ward mcp`. See jsonrpc.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/json.h"

#include "jsonrpc.h"

/* A buffer kept after a long line is shrunk back to this. */
#define LINES_KEEP (64u * 1024u)

/* --- the line splitter ------------------------------------------------ */

void ward_jr_lines_init(struct ward_jr_lines *l, size_t max)
{
	memset(l, 0, sizeof(*l));
	l->max = max;
}

void ward_jr_lines_free(struct ward_jr_lines *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

/* Deliver a complete line, without a trailing '\r'. */
static void deliver(const char *line, size_t len, ward_jr_line_fn fn, void *ctx)
{
	if (len && line[len - 1] == '\r')
		len--;
	fn(ctx, line, len);
}

/* Make room for @need bytes in @l's buffer (need <= max). */
static int reserve(struct ward_jr_lines *l, size_t need)
{
	size_t cap = l->cap ? l->cap : 4096;
	char *p;

	if (need <= l->cap)
		return 0;
	while (cap < need)
		cap = cap > l->max / 2 ? l->max : cap * 2;
	if (cap < need)
		cap = need;
	p = realloc(l->buf, cap);
	if (!p)
		return -ENOMEM;
	l->buf = p;
	l->cap = cap;
	return 0;
}

/* After a long line, give the memory back. */
static void shrink(struct ward_jr_lines *l)
{
	char *p;

	if (l->cap <= LINES_KEEP)
		return;
	p = realloc(l->buf, LINES_KEEP);
	if (p) {
		l->buf = p;
		l->cap = LINES_KEEP;
	}
}

int ward_jr_lines_feed(struct ward_jr_lines *l, const char *data, size_t n,
		       ward_jr_line_fn fn, void *ctx)
{
	int err = 0;

	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t seg = nl ? (size_t)(nl - data) : n;
		size_t used = nl ? seg + 1 : seg;

		if (l->skipping) {
			if (nl)
				l->skipping = false;
		} else if (seg > l->max - l->len) {
			/* Reported once, the moment it is too long. */
			fn(ctx, NULL, l->len + seg);
			l->len = 0;
			l->skipping = !nl;
			shrink(l);
		} else if (nl && l->len == 0) {
			/* The common case: a whole line in the input. */
			deliver(data, seg, fn, ctx);
		} else if (reserve(l, l->len + seg) != 0) {
			err = -ENOMEM;
			fn(ctx, NULL, l->len + seg);
			l->len = 0;
			l->skipping = !nl;
		} else {
			memcpy(l->buf + l->len, data, seg);
			l->len += seg;
			if (nl) {
				deliver(l->buf, l->len, fn, ctx);
				l->len = 0;
				shrink(l);
			}
		}
		data += used;
		n -= used;
	}
	return err;
}

void ward_jr_lines_finish(struct ward_jr_lines *l, ward_jr_line_fn fn,
			  void *ctx)
{
	if (!l->skipping && l->len > 0)
		deliver(l->buf, l->len, fn, ctx);
	l->len = 0;
	l->skipping = false;
}

/* --- UTF-8 -------------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at @s[0..n), or 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07u;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void ward_jr_text(char *dst, size_t size, const char *src)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strlen(src), o = 0;

	if (size == 0)
		return;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(s + i, n - i);

		if (k == 0) {
			/* An invalid byte is shown, not copied: "\xNN". */
			if (o + 4 >= size)
				break;
			snprintf(dst + o, size - o, "\\x%02x", s[i]);
			o += 4;
			i++;
			continue;
		}
		/* Never half a character at the end. */
		if (o + k >= size)
			break;
		memcpy(dst + o, s + i, k);
		o += k;
		i += k;
	}
	dst[o] = '\0';
}

/* --- the parser ------------------------------------------------------- */

bool ward_jr_id_valid(const json_t *id)
{
	return id && (json_is_string(id) || json_is_integer(id));
}

static void invalid(struct ward_jr_msg *m, int code, const char *what)
{
	m->kind = WARD_JR_INVALID;
	m->code = code;
	snprintf(m->message, sizeof(m->message), "%s", what);
}

static bool blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

int ward_jr_parse(struct ward_jr_msg *m, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *root, *v, *id, *method, *params, *result, *error;

	memset(m, 0, sizeof(*m));
	if (blank(line, len)) {
		m->kind = WARD_JR_EMPTY;
		return 0;
	}
	root = json_loadb(line, len, JSON_DECODE_ANY, &jerr);
	if (!root) {
		if (strstr(jerr.text, "out of memory"))
			return -ENOMEM;
		char near[sizeof(jerr.text)];

		/* jansson quotes the bytes near the error, which may cut a
		 * character or be no UTF-8 at all: the reply must still be a
		 * JSON string. */
		ward_jr_text(near, sizeof(near), jerr.text);
		m->kind = WARD_JR_INVALID;
		m->code = WARD_JR_PARSE_ERROR;
		snprintf(m->message, sizeof(m->message),
			 "Parse error: %s (at byte %d)", near, jerr.position);
		return 0;
	}
	m->root = root;
	if (json_is_array(root)) {
		invalid(m, WARD_JR_INVALID_REQUEST,
			"Invalid Request: batches are not supported; send one "
			"message per line");
		return 0;
	}
	if (!json_is_object(root)) {
		invalid(m, WARD_JR_INVALID_REQUEST,
			"Invalid Request: a message must be a JSON object");
		return 0;
	}
	id = json_object_get(root, "id");
	method = json_object_get(root, "method");
	params = json_object_get(root, "params");
	result = json_object_get(root, "result");
	error = json_object_get(root, "error");
	/* A usable id is answered to even when the rest is wrong. */
	if (ward_jr_id_valid(id))
		m->id = id;
	v = json_object_get(root, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
		invalid(m, WARD_JR_INVALID_REQUEST,
			"Invalid Request: \"jsonrpc\" must be \"2.0\"");
		return 0;
	}
	/* The error response to a message whose id could not be read has
	 * a null id (JSON-RPC 2.0, section 5): a response to nothing, and
	 * never to be answered — answering it could start an endless
	 * exchange of errors between two peers. */
	if (json_is_null(id) && !method && error && !result &&
	    json_is_object(error)) {
		m->kind = WARD_JR_RESPONSE;
		m->error = error;
		return 0;
	}
	if (id && !ward_jr_id_valid(id)) {
		invalid(m, WARD_JR_INVALID_REQUEST,
			"Invalid Request: \"id\" must be a string or an "
			"integer");
		return 0;
	}
	if (method) {
		if (!json_is_string(method)) {
			invalid(m, WARD_JR_INVALID_REQUEST,
				"Invalid Request: \"method\" must be a string");
			return 0;
		}
		if (params && !json_is_object(params) &&
		    !json_is_array(params)) {
			invalid(m, WARD_JR_INVALID_REQUEST,
				"Invalid Request: \"params\" must be an "
				"object");
			return 0;
		}
		m->method = json_string_value(method);
		m->params = params;
		m->kind = id ? WARD_JR_REQUEST : WARD_JR_NOTIFICATION;
		return 0;
	}
	if (id && (result != NULL) != (error != NULL)) {
		if (error && !json_is_object(error)) {
			invalid(m, WARD_JR_INVALID_REQUEST,
				"Invalid Request: \"error\" must be an object");
			return 0;
		}
		m->kind = WARD_JR_RESPONSE;
		m->result = result;
		m->error = error;
		return 0;
	}
	invalid(m, WARD_JR_INVALID_REQUEST,
		"Invalid Request: neither a request (\"method\") nor a "
		"response (\"id\" with \"result\" or \"error\")");
	return 0;
}

void ward_jr_msg_clear(struct ward_jr_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

/* --- builders --------------------------------------------------------- */

static json_t *envelope(void)
{
	json_t *o = json_object();

	if (o && json_object_set_new(o, "jsonrpc", json_string("2.0")) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ward_jr_result(json_t *id, json_t *result)
{
	json_t *o = envelope();

	if (!o || !result ||
	    json_object_set(o, "id", id ? id : json_null()) != 0) {
		json_decref(result);
		json_decref(o);
		return NULL;
	}
	/* set_new consumes @result even when it fails. */
	if (json_object_set_new(o, "result", result) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *ward_jr_error(json_t *id, int code, const char *message, json_t *data)
{
	json_t *o = envelope();
	json_t *e = json_object();
	json_t *text = json_string(message ? message : "");
	char clean[512];

	/* A message that is not valid UTF-8 (cut by a caller's "%.128s",
	 * say) is still answered, cleaned, rather than dropped. */
	if (!text && message) {
		ward_jr_text(clean, sizeof(clean), message);
		text = json_string(clean);
	}
	if (!o || !e || !text) {
		json_decref(text);
		goto out_free;
	}
	if (json_object_set(o, "id", id ? id : json_null()) != 0 ||
	    json_object_set_new(e, "code", json_integer(code)) != 0) {
		json_decref(text);
		goto out_free;
	}
	/* set_new consumes @text even when it fails. */
	if (json_object_set_new(e, "message", text) != 0 ||
	    (data && json_object_set(e, "data", data) != 0))
		goto out_free;
	/* Consumes @e, even when it fails. */
	if (json_object_set_new(o, "error", e) != 0) {
		e = NULL;
		goto out_free;
	}
	json_decref(data);
	return o;

out_free:
	json_decref(data);
	json_decref(e);
	json_decref(o);
	return NULL;
}

json_t *ward_jr_request(json_t *id, const char *method, json_t *params)
{
	json_t *o = envelope();

	if (!o || !id || json_object_set(o, "id", id) != 0 ||
	    json_object_set_new(o, "method", json_string(method)) != 0 ||
	    (params && json_object_set(o, "params", params) != 0)) {
		json_decref(params);
		json_decref(o);
		return NULL;
	}
	json_decref(params);
	return o;
}

json_t *ward_jr_notification(const char *method, json_t *params)
{
	json_t *o = envelope();

	if (!o || json_object_set_new(o, "method", json_string(method)) != 0 ||
	    (params && json_object_set(o, "params", params) != 0)) {
		json_decref(params);
		json_decref(o);
		return NULL;
	}
	json_decref(params);
	return o;
}

char *ward_jr_encode(size_t *len, const json_t *msg)
{
	char *text, *line;
	size_t n;

	if (!msg)
		return NULL;
	text = ward_json_dumps(msg);
	if (!text)
		return NULL;
	n = strlen(text);
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	if (len)
		*len = n + 1;
	return line;
}

/* --- requests of ours waiting for their answer ------------------------- */

void ward_jr_pending_add(struct ward_jr_pending **list,
			 struct ward_jr_pending *p)
{
	p->next = *list;
	*list = p;
}

void ward_jr_pending_remove(struct ward_jr_pending **list,
			    struct ward_jr_pending *p)
{
	for (struct ward_jr_pending **pp = list; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			return;
		}
	}
}

bool ward_jr_pending_answer(struct ward_jr_pending *list, const json_t *id,
			    json_t *root)
{
	for (struct ward_jr_pending *p = list; p; p = p->next) {
		if (p->done || !json_equal(p->id, id))
			continue;
		p->response = json_deep_copy(root);
		p->done = true;
		return true;
	}
	return false;
}
