/*
 * ward — the configuration, from bytes to a tree: the errors and warnings
 * every step records ("FILE:LINE: KEY: message") and the YAML tree built
 * from libyaml's events (see config.c for why the tree is ours).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config_internal.h"
#include "libward/internal.h"
#include "util/util.h"
#include "ward/config.h"

/* --- errors and warnings ------------------------------------------------ */

/* Quote @s (at most @n bytes) for a message into @dst. */
const char *ward_cfg_quote(char *dst, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 8 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= 80) {
			o += (size_t)snprintf(dst + o, size - o, "...");
			break;
		}
		if (c == '"' || c == '\\')
			o += (size_t)snprintf(dst + o, size - o, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(dst + o, size - o, "\\x%02x", c);
		else
			dst[o++] = (char)c;
	}
	dst[o] = '\0';
	return dst;
}

static void add_error_msg(ward_config *cfg, enum ward_config_layer layer,
			  const char *file, unsigned line, char *msg)
{
	struct cerror *e;

	cfg->nfail++;
	if (!msg) {
		cfg->oom = true;
		return;
	}
	if (cfg->nerr >= MAX_ERRORS) {
		free(msg);
		return;
	}
	if (cfg->nerr == cfg->caperr) {
		size_t cap = cfg->caperr ? cfg->caperr * 2 : 8;

		e = realloc(cfg->err, cap * sizeof(*e));
		if (!e) {
			free(msg);
			cfg->oom = true;
			return;
		}
		cfg->err = e;
		cfg->caperr = cap;
	}
	e = &cfg->err[cfg->nerr++];
	e->msg = msg;
	e->origin.layer = layer;
	e->origin.file = file;
	e->origin.line = line;
}

/*
 * Record an error "FILE:LINE: KEY: message" (the parts that are known; a
 * flag is named "--KEY" instead of a file).
 */
void ward_cfg_err(ward_config *cfg, enum ward_config_layer layer,
		  const char *file, unsigned line, const char *key,
		  const char *fmt, ...)
{
	char where[PATH_MAX + 64] = "", what[1024];
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (file && line)
		snprintf(where, sizeof(where), "%s:%u: ", file, line);
	else if (file)
		snprintf(where, sizeof(where), "%s: ", file);
	if (key && layer == WARD_CONFIG_LAYER_FLAGS && !file) {
		if (asprintf(&msg, "--%s: %s", key, what) < 0)
			msg = NULL;
	} else if (key) {
		if (asprintf(&msg, "%s%s: %s", where, key, what) < 0)
			msg = NULL;
	} else if (asprintf(&msg, "%s%s", where, what) < 0) {
		msg = NULL;
	}
	add_error_msg(cfg, layer, file, line, msg);
}

static void cwarn_msg(ward_config *cfg, char *msg);

void ward_cfg_warn(ward_config *cfg, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		cfg->oom = true;
		return;
	}
	cwarn_msg(cfg, msg);
}

/* Keep @msg (consumed) as a warning. */
static void cwarn_msg(ward_config *cfg, char *msg)
{
	if (cfg->nwarn == cfg->capwarn) {
		size_t cap = cfg->capwarn ? cfg->capwarn * 2 : 8;
		char **v = realloc(cfg->warn, cap * sizeof(*v));

		if (!v) {
			free(msg);
			cfg->oom = true;
			return;
		}
		cfg->warn = v;
		cfg->capwarn = cap;
	}
	cfg->warn[cfg->nwarn++] = msg;
}

/*
 * A value the project file asked for that would widen the sandbox: it is
 * ignored (the project file is a ceiling, never a lockout) and reported
 * once, "FILE:LINE: KEY: ignored: …", as a warning that ward run and ward
 * mcp print and ward config check lists.
 */
void ward_cfg_ignore(ward_config *cfg, const char *file, unsigned line,
		     const char *key, const char *fmt, ...)
{
	char what[1024];
	char *msg = NULL;
	const char **k;
	size_t *v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (asprintf(&msg, "%s:%u: %s: ignored: %s", file ? file : "?", line,
		     key, what) < 0) {
		cfg->oom = true;
		return;
	}
	v = realloc(cfg->ign, (cfg->nign + 1) * sizeof(*v));
	if (v)
		cfg->ign = v;
	k = v ? realloc(cfg->ign_key, (cfg->nign + 1) * sizeof(*k)) : NULL;
	if (!k) {
		free(msg);
		cfg->oom = true;
		return;
	}
	cfg->ign_key = k;
	cwarn_msg(cfg, msg);
	if (cfg->nwarn && cfg->warn[cfg->nwarn - 1] == msg) {
		cfg->ign_key[cfg->nign] = key;
		cfg->ign[cfg->nign++] = cfg->nwarn - 1;
	}
}

struct emark ward_cfg_emark(const ward_config *cfg)
{
	struct emark m = {cfg->nerr, cfg->nfail};

	return m;
}

/*
 * The result of a step that may have added errors since @before: 0, or
 * WARD_EINVAL with the first new error as the detail (-ENOMEM wins).
 */
int ward_cfg_result(const ward_config *cfg, struct emark before)
{
	if (cfg->oom)
		return ward_err(-ENOMEM, "config: out of memory");
	if (cfg->nfail == before.nfail)
		return 0;
	if (cfg->nerr > before.nerr)
		return ward_err(WARD_EINVAL, "%s", cfg->err[before.nerr].msg);
	return ward_err(WARD_EINVAL,
			"config: more than %d errors; the rest are not listed",
			MAX_ERRORS);
}

/* --- the tree ----------------------------------------------------------- */

void ward_ynode_free(struct ynode *y)
{
	if (!y)
		return;
	/* Recursion is bounded by MAX_DEPTH. */
	for (size_t i = 0; i < y->n; i++)
		ward_ynode_free(y->kid[i]);
	free(y->kid);
	free(y->str);
	free(y);
}

static bool ynode_push(struct ynode *parent, struct ynode *kid)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? parent->cap * 2 : 8;
		struct ynode **v = realloc(parent->kid, cap * sizeof(*v));

		if (!v)
			return false;
		parent->kid = v;
		parent->cap = cap;
	}
	parent->kid[parent->n++] = kid;
	return true;
}

/* libyaml's marks count lines from 0. */
static unsigned mark_line(const yaml_mark_t *m)
{
	return (unsigned)m->line + 1;
}

/* The 1-based line of offset @at in @text. */
static unsigned line_of(const char *text, size_t at)
{
	unsigned line = 1;

	for (size_t i = 0; i < at; i++)
		line += text[i] == '\n';
	return line;
}

struct builder {
	ward_config *cfg;
	enum ward_config_layer layer;
	const char *file;
	struct ynode *root;
	struct ynode *stack[MAX_DEPTH + 1];
	size_t depth;
	size_t nodes;
	unsigned last_line;
	bool failed;
	/* The last scalar: where it started, and whether it sat where a
	 * top-level key goes (see long_key()). */
	const struct ynode *last_scalar;
	size_t last_scalar_at;
	bool last_scalar_top;
};

static void bfail(struct builder *b, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void bfail(struct builder *b, unsigned line, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ward_cfg_err(b->cfg, b->layer, b->file, line ? line : b->last_line,
		     NULL, "%s", what);
	b->failed = true;
}

/* Attach a new node to the open collection (or make it the root). */
static struct ynode *bnew(struct builder *b, enum ytype type, unsigned line)
{
	struct ynode *y;

	if (++b->nodes > MAX_NODES) {
		bfail(b, line,
		      "too many YAML nodes (more than %d); a ward "
		      "configuration is small",
		      MAX_NODES);
		return NULL;
	}
	y = calloc(1, sizeof(*y));
	if (!y) {
		b->cfg->oom = true;
		b->failed = true;
		return NULL;
	}
	y->type = type;
	y->line = line ? line : b->last_line;
	if (b->depth == 0) {
		if (b->root) {
			/* Cannot happen: one document, one root. */
			ward_ynode_free(y);
			bfail(b, line, "more than one top-level node");
			return NULL;
		}
		b->root = y;
		return y;
	}
	if (!ynode_push(b->stack[b->depth - 1], y)) {
		ward_ynode_free(y);
		b->cfg->oom = true;
		b->failed = true;
		return NULL;
	}
	return y;
}

/*
 * A tag on a node is refused (anchors are harmless). libyaml gives the
 * tag resolved; the standard prefix is shown as it is written ("!!str").
 */
static bool btag(struct builder *b, const yaml_char_t *tag, unsigned line)
{
	static const char std[] = "tag:yaml.org,2002:";
	const char *t = (const char *)tag;
	char q[128];

	if (!t)
		return true;
	if (strncmp(t, std, sizeof(std) - 1) == 0) {
		t += sizeof(std) - 1;
		bfail(b, line, "YAML tags are not supported (!!%s)",
		      ward_cfg_quote(q, sizeof(q), t, strlen(t)));
	} else {
		bfail(b, line, "YAML tags are not supported (%s)",
		      ward_cfg_quote(q, sizeof(q), t, strlen(t)));
	}
	return false;
}

static enum ystyle scalar_style(yaml_scalar_style_t s)
{
	switch (s) {
	case YAML_SINGLE_QUOTED_SCALAR_STYLE:
		return Y_SINGLE_QUOTED;
	case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
		return Y_DOUBLE_QUOTED;
	case YAML_LITERAL_SCALAR_STYLE:
		return Y_LITERAL;
	case YAML_FOLDED_SCALAR_STYLE:
		return Y_FOLDED;
	default:
		return Y_PLAIN;
	}
}

static void bscalar(struct builder *b, const yaml_event_t *e, unsigned line)
{
	const struct ynode *parent = b->depth ? b->stack[b->depth - 1] : NULL;
	size_t len = e->data.scalar.length;
	struct ynode *y;

	if (!btag(b, e->data.scalar.tag, line))
		return;
	y = bnew(b, Y_SCALAR, line);
	if (!y)
		return;
	y->style = scalar_style(e->data.scalar.style);
	/* A block scalar's mark is its header ("|"); its text, and so
	 * its first line, starts on the next line. */
	if (y->style == Y_LITERAL || y->style == Y_FOLDED)
		y->line = line + 1;
	y->end_line = mark_line(&e->end_mark);
	if (y->end_line < y->line)
		y->end_line = y->line;
	y->str = malloc(len + 1);
	if (!y->str) {
		b->cfg->oom = true;
		b->failed = true;
		return;
	}
	if (len)
		memcpy(y->str, e->data.scalar.value, len);
	y->str[len] = '\0';
	y->len = len;
	y->has_nul = memchr(y->str, '\0', len) != NULL;
	b->last_scalar = y;
	b->last_scalar_at = e->start_mark.index;
	b->last_scalar_top =
	    !parent ||
	    (b->depth == 1 && parent->type == Y_MAP && parent->n % 2 == 1);
}

static void bevent(struct builder *b, const yaml_event_t *e, unsigned *ndocs)
{
	unsigned line = mark_line(&e->start_mark);
	struct ynode *y;

	b->last_line = line;
	switch (e->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++*ndocs > 1)
			bfail(b, line,
			      "more than one YAML document; a ward "
			      "configuration is one mapping");
		break;
	case YAML_ALIAS_EVENT: {
		const char *t = (const char *)e->data.alias.anchor;
		char q[128];

		bfail(b, line,
		      "YAML aliases (*%s) are not allowed in a ward "
		      "configuration; write the value out",
		      t ? ward_cfg_quote(q, sizeof(q), t, strlen(t)) : "?");
		break;
	}
	case YAML_MAPPING_START_EVENT:
	case YAML_SEQUENCE_START_EVENT:
		if (!btag(b,
			  e->type == YAML_MAPPING_START_EVENT
			      ? e->data.mapping_start.tag
			      : e->data.sequence_start.tag,
			  line))
			break;
		if (b->depth >= MAX_DEPTH) {
			bfail(b, line, "nesting deeper than %d levels",
			      MAX_DEPTH);
			break;
		}
		y = bnew(b, e->type == YAML_MAPPING_START_EVENT ? Y_MAP : Y_SEQ,
			 line);
		if (y)
			b->stack[b->depth++] = y;
		break;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		break;
	case YAML_SCALAR_EVENT:
		bscalar(b, e, line);
		break;
	default:
		break;
	}
}

/*
 * YAML allows a key without "?" (every key of a ward file) at most 1024
 * characters, on one line, and libyaml holds to that: it reports the ":"
 * after a longer key as a stray mapping value, or, when a key was
 * required there, "could not find expected ':'". Say what it is: no ward
 * key is that long, so at the top level it is an unknown key.
 */
#define YAML_KEY_MAX 1024

static bool long_key(struct builder *b, const yaml_parser_t *p,
		     const char *text)
{
	const struct ynode *top = b->depth == 1 ? b->stack[0] : NULL;
	const char *key, *end;
	size_t at;
	bool at_top;
	char q[256];

	if (p->error != YAML_SCANNER_ERROR)
		return false;
	if (p->context &&
	    strcmp(p->context, "while scanning a simple key") == 0) {
		/* The key is still being scanned: at the context mark, in
		 * a key's place. */
		at = p->context_mark.index;
		if (p->context_mark.line != p->problem_mark.line)
			return false;
		at_top =
		    !b->root || (top && top->type == Y_MAP && top->n % 2 == 0);
	} else if (b->last_scalar &&
		   p->problem_mark.line + 1 == b->last_scalar->line) {
		/* The key was taken for a plain value. */
		at = b->last_scalar_at;
		at_top = b->last_scalar_top;
	} else {
		return false;
	}
	if (p->problem_mark.index < at + YAML_KEY_MAX)
		return false;
	key = text + at;
	end = memchr(key, '\n', p->problem_mark.index - at);
	ward_cfg_err(b->cfg, b->layer, b->file,
		     (unsigned)p->problem_mark.line + 1,
		     ward_cfg_quote(q, sizeof(q), key,
				    end ? (size_t)(end - key)
					: p->problem_mark.index - at),
		     at_top ? "unknown key (longer than the %d characters "
			      "YAML allows a key)"
			    : "a key longer than the %d characters YAML "
			      "allows",
		     YAML_KEY_MAX);
	return true;
}

/* libyaml's error, as "FILE:LINE: invalid YAML: …". */
static void yaml_error(struct builder *b, const yaml_parser_t *p,
		       const char *text)
{
	const char *what = p->problem ? p->problem : "a syntax error";
	unsigned line;
	char q[256];

	if (p->error == YAML_MEMORY_ERROR) {
		b->cfg->oom = true;
		return;
	}
	if (long_key(b, p, text))
		return;
	ward_cfg_quote(q, sizeof(q), what, strlen(what));
	if (p->error != YAML_READER_ERROR) {
		ward_cfg_err(b->cfg, b->layer, b->file,
			     (unsigned)p->problem_mark.line + 1, NULL,
			     "invalid YAML: %s", q);
		return;
	}
	/* A reader error (a character YAML does not allow, such as a
	 * control character) has an offset and the character, not a
	 * mark. */
	line = line_of(text, p->problem_offset);
	if (p->problem_value >= 0)
		ward_cfg_err(b->cfg, b->layer, b->file, line, NULL,
			     "invalid YAML: %s (U+%04X at offset %zu)", q,
			     (unsigned)p->problem_value, p->problem_offset);
	else
		ward_cfg_err(b->cfg, b->layer, b->file, line, NULL,
			     "invalid YAML: %s (at offset %zu)", q,
			     p->problem_offset);
}

/*
 * The offset of the first byte of @s that does not start a valid UTF-8
 * sequence (overlong forms, surrogates and code points above U+10FFFF are
 * invalid), or @len when it is all valid.
 */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
	size_t i = 0, n;

	while (i < len && (n = util_utf8_decode(NULL, s + i, len - i)) != 0)
		i += n;
	return i;
}

/*
 * Parse @text into a tree with libyaml's event parser, in this process:
 * libyaml needs no patch of ours (docs/CONFIG.md, "The YAML parser").
 * NULL with *ok true: an empty document (no settings). NULL with *ok
 * false: errors were recorded.
 */
struct ynode *ward_cfg_parse_layer(ward_config *cfg,
				   enum ward_config_layer layer,
				   const char *file, const char *text,
				   size_t len, bool *ok)
{
	struct builder b = {.cfg = cfg, .layer = layer, .file = file};
	yaml_parser_t p;
	yaml_event_t e;
	unsigned ndocs = 0;
	bool end = false;

	*ok = false;
	/* A config is text: invalid UTF-8 is refused with its offset (a
	 * clearer error than the parser's). */
	{
		size_t bad = utf8_invalid_at((const unsigned char *)text, len);

		if (bad < len) {
			ward_cfg_err(
			    cfg, layer, file, line_of(text, bad), NULL,
			    "not valid UTF-8 (byte 0x%02x at offset %zu)",
			    (unsigned char)text[bad], bad);
			return NULL;
		}
	}
	if (!yaml_parser_initialize(&p)) {
		cfg->oom = true;
		return NULL;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	while (!b.failed && !end) {
		if (!yaml_parser_parse(&p, &e)) {
			yaml_error(&b, &p, text);
			b.failed = true;
			break;
		}
		bevent(&b, &e, &ndocs);
		end = e.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	if (b.failed) {
		ward_ynode_free(b.root);
		return NULL;
	}
	*ok = true;
	return b.root;
}
