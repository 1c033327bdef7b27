/*
 * ward — the configuration (ward.yml): parse each layer, then resolve.
 *
 * Parsing (plan) runs libfyaml's EVENT parser, not its document builder,
 * into a small tree of our own with a 1-based line on every node, so every
 * error can name its file, line and key. Building the tree ourselves is also
 * what makes hostile input harmless:
 *   - aliases are refused outright (never expanded), so an alias bomb
 *     ("billion laughs") costs nothing;
 *   - nesting is capped (MAX_DEPTH, far below libfyaml's own limit of 64)
 *     and so is the number of nodes (MAX_NODES) and the file size
 *     (WARD_CONFIG_MAX_BYTES);
 *   - tags, complex keys, several documents, NUL bytes in scalars, and
 *     duplicate keys are errors.
 *
 * The schema walk stores what each layer says in a struct layer; nothing
 * is merged until ward_config_resolve() (apply), which picks each value from
 * the highest layer that has it, refuses a project mode wider than the one
 * below it, canonicalises the workspace and loads every access entry into
 * one ward_rules, each with its origin.
 *
 * Errors are collected (not just the first), each "FILE:LINE: KEY: message".
 *
 * Which libfyaml parses: a static ward links the copy scripts/musl-deps.sh
 * builds from Debian's source with our patches (scripts/patches/libfyaml/);
 * the Makefile says so with WARD_FYAML_PATCHED. Any other copy (the
 * system's shared library: Debian 12's 0.7.12 crashes on six bytes) only
 * ever runs in a child process (see "parsing in a child" below), so that a
 * file a cloned repository planted cannot crash or take over ward.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libfyaml.h>

#include "internal.h"
#include "protect.h"
#include "util/util.h"
#include "ward/config.h"
#include "ward/env.h"

#define MAX_DEPTH	     16
#define MAX_NODES	     200000
#define MAX_RUNNERS	     8
#define MAX_ERRORS	     100
#define PROBE_TIMEOUT_MAX_MS 600000u

/* The keys, in the order ward config check prints them. */
enum key {
	K_MODE,
	K_WORKSPACE,
	K_RUNNERS,
	K_RUNNER_COMMAND,
	K_SIGNATURES,
	K_PROBE_TIMEOUT,
	K_ACCESS,
	K_APPROVAL,
	K_PRESETS,
	K_PROTECT_GIT,
	K_UNPROTECT,
	K_ALLOW_UNIX,
	K_ENV,
	K_NETWORK,
	K_ALLOW_DOMAINS,
	K_DENY_DOMAINS,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
    [K_MODE] = "mode",
    [K_WORKSPACE] = "workspace",
    [K_RUNNERS] = "runners",
    [K_RUNNER_COMMAND] = "runner_command",
    [K_SIGNATURES] = "runner_failure_signatures",
    [K_PROBE_TIMEOUT] = "probe_timeout_ms",
    [K_ACCESS] = "access",
    [K_APPROVAL] = "approval",
    [K_PRESETS] = "presets",
    [K_PROTECT_GIT] = "protect_git",
    [K_UNPROTECT] = "unprotect",
    [K_ALLOW_UNIX] = "allow_unix",
    [K_ENV] = "env",
    [K_NETWORK] = "network",
    [K_ALLOW_DOMAINS] = "allow_domains",
    [K_DENY_DOMAINS] = "deny_domains",
};

/* --- the YAML tree ------------------------------------------------------ */

enum ytype {
	Y_SCALAR,
	Y_SEQ,
	Y_MAP
};

struct ynode {
	enum ytype type;
	unsigned line;	   /* 1-based start line */
	unsigned end_line; /* scalars: 1-based end line */
	enum fy_scalar_style style;
	char *str; /* scalars: the value, NUL-terminated */
	size_t len;
	bool has_nul;	    /* the scalar holds a NUL byte */
	struct ynode **kid; /* seq: items; map: key, value, key, value… */
	size_t n, cap;
};

/* --- the layers --------------------------------------------------------- */

struct access_entry {
	char *text;
	unsigned line;
	bool block; /* one multi-line text, one entry per line */
};

struct preset {
	char *name;
	enum ward_mode mode;
	enum ward_approval_policy approval;
	unsigned line;
};

/* What one layer says. has[k] / line[k]: the key was set, and where. */
struct layer {
	bool present;
	char *file;
	bool has[K_COUNT];
	unsigned line[K_COUNT];
	enum ward_mode mode;
	char *workspace; /* expanded (~/), absolute, not canonical */
	enum ward_runner runners[MAX_RUNNERS];
	size_t nrunners;
	char *runner_command;
	char **sigs; /* NULL-terminated */
	unsigned probe_timeout_ms;
	enum ward_approval_policy approval;
	bool protect_git;
	char **unprot; /* as written, NULL-terminated */
	unsigned *unprot_line;
	char **aunix; /* allow_unix, as written */
	unsigned *aunix_line;
	struct access_entry *acc;
	size_t nacc, capacc;
	struct preset *presets;
	size_t npresets, cappresets;
	char **env_drop, **env_keep; /* NULL-terminated, or NULL */
	enum ward_network network;   /* off or on */
	char **allow, **deny;	     /* domain patterns, NULL-terminated */
};

struct cerror {
	char *msg;
	struct ward_config_origin origin;
};

#define N_LAYERS (WARD_CONFIG_LAYER_FLAGS + 1)

struct ward_config {
	struct layer L[N_LAYERS];
	struct cerror *err;
	size_t nerr, caperr;
	/*
	 * Every error reported, kept or not: only MAX_ERRORS messages are
	 * kept, but a step asks "did I report an error?" of this count, so
	 * the answer stays true past the cap.
	 */
	size_t nfail;
	char **warn;
	size_t nwarn, capwarn;
	/* Which of @warn are values the project file asked for and that were
	 * ignored (a project file is a ceiling): their indexes. */
	size_t *ign;
	size_t nign;
	bool oom;
	bool resolved;
	char *user_hint; /* the user file path for messages */
	/* Effective values, after resolve. */
	struct ward_config_origin from[K_COUNT];
	enum ward_mode mode;
	char *workspace; /* canonical */
	const enum ward_runner *runners;
	size_t nrunners;
	const char *runner_command;
	char *const *sigs;
	unsigned probe_timeout_ms;
	enum ward_approval_policy approval;
	bool protect_git;
	char **unprotect;  /* absolute, NULL-terminated (never NULL) */
	char **allow_unix; /* absolute, NULL-terminated, or NULL */
	struct ward_config_preset *presets;
	size_t npresets;
	ward_presets *table; /* built-in presets + the configured ones */
	ward_rules *rules;
	/* The env policy: built-in drop patterns plus every layer's; keep
	 * patterns of the user file, --config and the flags. */
	char **env_drop, **env_keep;
	/* The network: @net_set when a layer set it (else the mode's
	 * default applies); @allow / @deny never NULL after resolve. */
	bool net_set;
	enum ward_network network;
	char **allow, **deny;
};

static char *const empty_strv[] = {NULL};

/* --- errors and warnings ------------------------------------------------ */

/* Quote @s (at most @n bytes) for a message into @dst. */
static const char *quote(char *dst, size_t size, const char *s, size_t n)
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
static void cerr(ward_config *cfg, enum ward_config_layer layer,
		 const char *file, unsigned line, const char *key,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void cerr(ward_config *cfg, enum ward_config_layer layer,
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

static void cwarn(ward_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void cwarn(ward_config *cfg, const char *fmt, ...)
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
static void cignore(ward_config *cfg, const char *file, unsigned line,
		    const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void cignore(ward_config *cfg, const char *file, unsigned line,
		    const char *key, const char *fmt, ...)
{
	char what[1024];
	char *msg = NULL;
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
	if (!v) {
		free(msg);
		cfg->oom = true;
		return;
	}
	cfg->ign = v;
	cwarn_msg(cfg, msg);
	if (cfg->nwarn && cfg->warn[cfg->nwarn - 1] == msg)
		cfg->ign[cfg->nign++] = cfg->nwarn - 1;
}

/* How many errors have been reported so far: a mark for result(). */
struct emark {
	size_t nerr;  /* kept */
	size_t nfail; /* reported */
};

static struct emark emark(const ward_config *cfg)
{
	struct emark m = {cfg->nerr, cfg->nfail};

	return m;
}

/*
 * The result of a step that may have added errors since @before: 0, or
 * WARD_EINVAL with the first new error as the detail (-ENOMEM wins).
 */
static int result(const ward_config *cfg, struct emark before)
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

static void ynode_free(struct ynode *y)
{
	if (!y)
		return;
	/* Recursion is bounded by MAX_DEPTH. */
	for (size_t i = 0; i < y->n; i++)
		ynode_free(y->kid[i]);
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

static unsigned mark_line(const struct fy_mark *m)
{
	return m && m->line >= 0 ? (unsigned)m->line + 1 : 0;
}

/* The first error libfyaml collected, as "FILE:LINE: invalid YAML: …". */
static void yaml_error(ward_config *cfg, enum ward_config_layer layer,
		       const char *file, struct fy_diag *diag, unsigned at)
{
	struct fy_diag_error *de;
	void *it = NULL;

	de = diag ? fy_diag_errors_iterate(diag, &it) : NULL;
	if (de && de->msg) {
		char q[256];

		cerr(cfg, layer, file, de->line > 0 ? (unsigned)de->line : at,
		     NULL, "invalid YAML: %s",
		     quote(q, sizeof(q), de->msg, strlen(de->msg)));
		return;
	}
	cerr(cfg, layer, file, at, NULL, "invalid YAML");
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
	cerr(b->cfg, b->layer, b->file, line ? line : b->last_line, NULL, "%s",
	     what);
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
			ynode_free(y);
			bfail(b, line, "more than one top-level node");
			return NULL;
		}
		b->root = y;
		return y;
	}
	if (!ynode_push(b->stack[b->depth - 1], y)) {
		ynode_free(y);
		b->cfg->oom = true;
		b->failed = true;
		return NULL;
	}
	return y;
}

/* A tag or an anchor on a node: tags are refused, anchors are harmless. */
static bool btag(struct builder *b, struct fy_token *tag, unsigned line)
{
	size_t len = 0;
	const char *t;
	char q[128];

	if (!tag)
		return true;
	t = fy_token_get_text(tag, &len);
	bfail(b, line, "YAML tags are not supported (%s)",
	      t ? quote(q, sizeof(q), t, len) : "?");
	return false;
}

static void bevent(struct builder *b, struct fy_event *e, unsigned *ndocs)
{
	unsigned line = mark_line(fy_event_start_mark(e));
	struct ynode *y;
	const char *t;
	size_t len = 0;

	if (line)
		b->last_line = line;
	switch (e->type) {
	case FYET_DOCUMENT_START:
		if (++*ndocs > 1)
			bfail(b, line,
			      "more than one YAML document; a ward "
			      "configuration is one mapping");
		break;
	case FYET_ALIAS:
		t = fy_token_get_text(e->alias.anchor, &len);
		{
			char q[128];

			bfail(b, line,
			      "YAML aliases (*%s) are not allowed in a ward "
			      "configuration; write the value out",
			      t ? quote(q, sizeof(q), t, len) : "?");
		}
		break;
	case FYET_MAPPING_START:
	case FYET_SEQUENCE_START:
		if (!btag(b,
			  e->type == FYET_MAPPING_START ? e->mapping_start.tag
							: e->sequence_start.tag,
			  line))
			break;
		if (b->depth >= MAX_DEPTH) {
			bfail(b, line, "nesting deeper than %d levels",
			      MAX_DEPTH);
			break;
		}
		y = bnew(b, e->type == FYET_MAPPING_START ? Y_MAP : Y_SEQ,
			 line);
		if (y)
			b->stack[b->depth++] = y;
		break;
	case FYET_MAPPING_END:
	case FYET_SEQUENCE_END:
		if (b->depth > 0)
			b->depth--;
		break;
	case FYET_SCALAR:
		if (!btag(b, e->scalar.tag, line))
			break;
		y = bnew(b, Y_SCALAR, line);
		if (!y)
			break;
		y->end_line = mark_line(fy_event_end_mark(e));
		if (!y->end_line)
			y->end_line = y->line;
		y->style = e->scalar.value
			       ? fy_token_scalar_style(e->scalar.value)
			       : FYSS_PLAIN;
		t = e->scalar.value ? fy_token_get_text(e->scalar.value, &len)
				    : NULL;
		if (!t) {
			t = "";
			len = 0;
		}
		y->str = malloc(len + 1);
		if (!y->str) {
			b->cfg->oom = true;
			b->failed = true;
			break;
		}
		memcpy(y->str, t, len);
		y->str[len] = '\0';
		y->len = len;
		y->has_nul = memchr(t, '\0', len) != NULL;
		break;
	default:
		break;
	}
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

/* The 1-based line of offset @at in @text. */
static unsigned line_of(const char *text, size_t at)
{
	unsigned line = 1;

	for (size_t i = 0; i < at; i++)
		line += text[i] == '\n';
	return line;
}

/*
 * Parse @text into a tree. NULL with *ok true: an empty document (no
 * settings). NULL with *ok false: errors were recorded.
 */
static struct ynode *parse_tree(ward_config *cfg, enum ward_config_layer layer,
				const char *file, const char *text, size_t len,
				bool *ok)
{
	struct builder b = {.cfg = cfg, .layer = layer, .file = file};
	struct fy_parse_cfg pc = {0};
	struct fy_diag_cfg dc;
	struct fy_diag *diag = NULL;
	struct fy_parser *fyp = NULL;
	struct fy_event *e;
	unsigned ndocs = 0;

	*ok = false;
	/*
	 * Refuse invalid UTF-8 before libfyaml sees it: a config is text,
	 * and libfyaml 0.7 loops forever on some invalid bytes (e.g. in a
	 * `%` directive), found by fuzz_config.
	 */
	{
		size_t bad = utf8_invalid_at((const unsigned char *)text, len);

		if (bad < len) {
			cerr(cfg, layer, file, line_of(text, bad), NULL,
			     "not valid UTF-8 (byte 0x%02x at offset %zu)",
			     (unsigned char)text[bad], bad);
			return NULL;
		}
	}
	fy_diag_cfg_default(&dc);
	dc.fp = NULL;
	dc.colorize = false;
	diag = fy_diag_create(&dc);
	if (!diag)
		goto out_oom;
	fy_diag_set_collect_errors(diag, true);
	pc.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_AUTO | FYPCF_JSON_NONE;
	pc.diag = diag;
	fyp = fy_parser_create(&pc);
	if (!fyp)
		goto out_oom;
	/* An empty string is valid YAML; libfyaml wants a non-NULL one. */
	if (fy_parser_set_string(fyp, len ? text : "", len) != 0)
		goto out_oom;
	while (!b.failed && (e = fy_parser_parse(fyp)) != NULL) {
		bevent(&b, e, &ndocs);
		fy_parser_event_free(fyp, e);
	}
	if (!b.failed && fy_parser_get_stream_error(fyp)) {
		yaml_error(cfg, layer, file, diag, b.last_line);
		b.failed = true;
	}
	fy_parser_destroy(fyp);
	fy_diag_destroy(diag);
	if (b.failed) {
		ynode_free(b.root);
		return NULL;
	}
	*ok = true;
	return b.root;

out_oom:
	if (fyp)
		fy_parser_destroy(fyp);
	if (diag)
		fy_diag_destroy(diag);
	cfg->oom = true;
	return NULL;
}

/* --- parsing in a child -------------------------------------------------- */

/*
 * A libfyaml that is not our patched copy runs in a child: the child
 * builds the tree (parse_tree) and writes it, with the errors it recorded,
 * to a pipe; the parent checks every byte of that reply and rebuilds the
 * tree. A crash, an endless loop (bounded by PARSE_CHILD_MS) or a corrupted
 * heap in the parser then costs one error naming the file, never ward.
 * The child can do little else: a seccomp filter leaves it write(),
 * memory management and exit (not under AddressSanitizer, whose reports
 * need more). What it costs `ward run` is in docs/CONFIG.md.
 *
 * fork() from a multi-threaded caller: the child only parses and
 * allocates (glibc and musl both make malloc usable after fork) and leaves
 * with _exit(), so no atexit handler or stdio buffer of the caller runs.
 */
#define PARSE_CHILD_MS	10000
#define PARSE_REPLY_MAX (32u * 1024u * 1024u)
#define PARSE_MAGIC	0x77617264u /* "ward" */

#ifdef WARD_FYAML_PATCHED
static const bool fyaml_in_process = true;
#else
static const bool fyaml_in_process = false;
#endif

/* A growable reply (child side). */
struct wbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void wb_put(struct wbuf *w, const void *data, size_t n)
{
	if (w->oom)
		return;
	if (w->n + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		char *p;

		while (cap < w->n + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->oom = true;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->n, data, n);
	w->n += n;
}

static void wb_u32(struct wbuf *w, uint32_t v)
{
	wb_put(w, &v, sizeof(v));
}

static void wb_node(struct wbuf *w, const struct ynode *y)
{
	unsigned char b[2] = {(unsigned char)y->type, y->has_nul};

	wb_put(w, b, sizeof(b));
	wb_u32(w, (uint32_t)y->style);
	wb_u32(w, y->line);
	wb_u32(w, y->end_line);
	wb_u32(w, (uint32_t)y->len);
	if (y->str)
		wb_put(w, y->str, y->len);
	wb_u32(w, (uint32_t)y->n);
	/* Depth is bounded by MAX_DEPTH (bevent). */
	for (size_t i = 0; i < y->n; i++)
		wb_node(w, y->kid[i]);
}

/* Reading the reply (parent side): every read is bounds-checked. */
struct rbuf {
	const char *p;
	size_t n, at;
	size_t nodes;
	bool bad;
};

static bool rb_get(struct rbuf *r, void *out, size_t n)
{
	if (r->bad || n > r->n - r->at) {
		r->bad = true;
		return false;
	}
	memcpy(out, r->p + r->at, n);
	r->at += n;
	return true;
}

static uint32_t rb_u32(struct rbuf *r)
{
	uint32_t v = 0;

	rb_get(r, &v, sizeof(v));
	return v;
}

/* One node and its kids, or NULL (r->bad or out of memory). */
static struct ynode *rb_node(ward_config *cfg, struct rbuf *r, unsigned depth)
{
	unsigned char b[2];
	struct ynode *y;
	uint32_t n;

	if (depth > MAX_DEPTH + 1 || ++r->nodes > MAX_NODES ||
	    !rb_get(r, b, sizeof(b)) || b[0] > Y_MAP || b[1] > 1) {
		r->bad = true;
		return NULL;
	}
	y = calloc(1, sizeof(*y));
	if (!y) {
		cfg->oom = true;
		return NULL;
	}
	y->type = (enum ytype)b[0];
	y->has_nul = b[1];
	y->style = (enum fy_scalar_style)rb_u32(r);
	y->line = rb_u32(r);
	y->end_line = rb_u32(r);
	y->len = rb_u32(r);
	if (y->type == Y_SCALAR) {
		if (y->len > r->n - r->at) {
			r->bad = true;
			goto out_free;
		}
		y->str = malloc(y->len + 1);
		if (!y->str) {
			cfg->oom = true;
			goto out_free;
		}
		rb_get(r, y->str, y->len);
		y->str[y->len] = '\0';
	} else if (y->len) {
		r->bad = true;
	}
	n = rb_u32(r);
	/* Scalars have no kids, a mapping has pairs, and each kid takes
	 * at least its fixed-size header. */
	if (r->bad || (y->type == Y_SCALAR && n) ||
	    (y->type == Y_MAP && n % 2) || n > (r->n - r->at) / 22) {
		r->bad = true;
		goto out_free;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct ynode *kid = rb_node(cfg, r, depth + 1);

		if (!kid || !ynode_push(y, kid)) {
			if (kid)
				cfg->oom = true;
			ynode_free(kid);
			goto out_free;
		}
	}
	return y;

out_free:
	ynode_free(y);
	return NULL;
}

/*
 * Leave the child nothing but write(), memory management and exit: a
 * classic BPF allowlist, killing the process on anything else. Best
 * effort (defence in depth): where seccomp is unavailable the child runs
 * without it.
 */
#if defined(__x86_64__)
#define PC_AUDIT_ARCH 0xc000003eU /* AUDIT_ARCH_X86_64 */
#elif defined(__aarch64__)
#define PC_AUDIT_ARCH 0xc00000b7U /* AUDIT_ARCH_AARCH64 */
#endif
#if defined(__SANITIZE_ADDRESS__)
#define PC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PC_SANITIZED 1
#endif
#endif

#if defined(PC_AUDIT_ARCH) && !defined(PC_SANITIZED) && defined(SYS_seccomp)
struct pc_filter {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};

struct pc_fprog {
	unsigned short len;
	const struct pc_filter *filter;
};

static void confine_parse_child(void)
{
	/* BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K. */
	enum {
		LD = 0x20,
		JEQ = 0x15,
		RET = 0x06
	};
	/* struct seccomp_data: nr at 0, arch at 4. */
	enum {
		NR = 0,
		ARCH = 4
	};
	static const uint32_t kill = 0x80000000U; /* RET_KILL_PROCESS */
	static const uint32_t allow = 0x7fff0000U;
	static const uint32_t enotty = 0x00050000U | ENOTTY; /* RET_ERRNO */
	static const long allowed[] = {
	    SYS_write,		SYS_mmap,	SYS_munmap,
	    SYS_mremap,		SYS_madvise,	SYS_brk,
	    SYS_exit,		SYS_exit_group, SYS_rt_sigreturn,
	    SYS_rt_sigprocmask, SYS_getpid,	SYS_gettid,
	    SYS_tgkill,		SYS_futex,
	};
	enum {
		N = sizeof(allowed) / sizeof(allowed[0])
	};
	struct pc_filter f[N + 8];
	struct pc_fprog prog = {0, f};
	size_t k = 0;

	f[k++] = (struct pc_filter){LD, 0, 0, ARCH};
	f[k++] = (struct pc_filter){JEQ, 1, 0, PC_AUDIT_ARCH};
	f[k++] = (struct pc_filter){RET, 0, 0, kill};
	f[k++] = (struct pc_filter){LD, 0, 0, NR};
	/* libfyaml asks for the terminal's width: "not a terminal". No
	 * other ioctl either (TIOCSTI on an inherited terminal). */
	f[k++] = (struct pc_filter){JEQ, 0, 1, (uint32_t)SYS_ioctl};
	f[k++] = (struct pc_filter){RET, 0, 0, enotty};
	for (size_t i = 0; i < N; i++)
		/* Matched: jump to the ALLOW at the very end. */
		f[k++] = (struct pc_filter){JEQ, (uint8_t)(N - i), 0,
					    (uint32_t)allowed[i]};
	f[k++] = (struct pc_filter){RET, 0, 0, kill};
	f[k++] = (struct pc_filter){RET, 0, 0, allow};
	prog.len = (unsigned short)k;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return;
	/* SECCOMP_SET_MODE_FILTER = 1 */
	syscall(SYS_seccomp, 1, 0, &prog);
}
#else
static void confine_parse_child(void)
{
}
#endif

/*
 * In the child: /dev/null on 0, 1 and 2 and no other descriptor but @fd
 * (returned, maybe moved), so that nothing the parser does can reach the
 * caller's terminal, its output (an MCP client reads ward's stdout) or
 * its files.
 */
static int keep_only(int fd)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (nul < 0 || (fd < 3 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0))
		_exit(126);
	for (int i = 0; i < 3; i++)
		if (dup2(nul, i) < 0)
			_exit(126);
	util_close_from(3, fd, false);
	return fd;
}

/* The child: parse, write the reply to @fd, _exit. Never returns. */
static void parse_child(int fd, ward_config *cfg, enum ward_config_layer layer,
			const char *file, const char *text, size_t len)
{
	struct emark before = emark(cfg);
	struct wbuf w = {0};
	struct ynode *root;
	unsigned char b[3];
	bool ok;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
		_exit(126);
	fd = keep_only(fd);
	/* No handler of the caller's runs in the child: every signal is
	 * blocked, and a fault (SIGSEGV, SIGBUS, …) in a blocked state
	 * kills with the default action. */
	{
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
	}
	confine_parse_child();
	root = parse_tree(cfg, layer, file, text, len, &ok);
	wb_u32(&w, PARSE_MAGIC);
	b[0] = cfg->oom;
	b[1] = ok;
	b[2] = root != NULL;
	wb_put(&w, b, sizeof(b));
	wb_u32(&w, (uint32_t)(cfg->nfail - before.nfail));
	wb_u32(&w, (uint32_t)(cfg->nerr - before.nerr));
	for (size_t i = before.nerr; i < cfg->nerr; i++) {
		size_t n = strlen(cfg->err[i].msg);

		wb_u32(&w, cfg->err[i].origin.line);
		wb_u32(&w, (uint32_t)n);
		wb_put(&w, cfg->err[i].msg, n);
	}
	if (root)
		wb_node(&w, root);
	wb_u32(&w, PARSE_MAGIC);
	if (w.oom)
		_exit(125);
	for (size_t at = 0; at < w.n;) {
		ssize_t k = write(fd, w.p + at, w.n - at);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			_exit(124);
		at += (size_t)k;
	}
	_exit(0);
}

/* Read the child's whole reply from @fd, until EOF or @deadline. */
static int read_reply(char **out, size_t *out_len, int fd,
		      const struct timespec *deadline, bool *timed_out)
{
	char *buf = NULL;
	size_t n = 0, cap = 0;

	*timed_out = false;
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		struct timespec now;
		long ms;
		ssize_t k;
		int rc;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (deadline->tv_sec - now.tv_sec) * 1000L +
		     (deadline->tv_nsec - now.tv_nsec) / 1000000L;
		if (ms <= 0) {
			*timed_out = true;
			break;
		}
		rc = poll(&pfd, 1, (int)ms);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			break;
		if (rc == 0)
			continue; /* the deadline decides */
		if (n == cap) {
			char *p;

			if (cap >= PARSE_REPLY_MAX)
				break; /* too long: treated as bad */
			cap = cap ? cap * 2 : 65536;
			p = realloc(buf, cap);
			if (!p) {
				free(buf);
				return -ENOMEM;
			}
			buf = p;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	*out = buf;
	*out_len = n;
	return 0;
}

/* Rebuild the child's errors and tree from its reply. */
static struct ynode *decode_reply(ward_config *cfg,
				  enum ward_config_layer layer,
				  const char *file, struct rbuf *r, bool *ok)
{
	uint32_t nfail, nerr;
	unsigned char b[3];
	struct ynode *root = NULL;

	if (rb_u32(r) != PARSE_MAGIC || !rb_get(r, b, sizeof(b)) || b[0] > 1 ||
	    b[1] > 1 || b[2] > 1)
		goto bad;
	nfail = rb_u32(r);
	nerr = rb_u32(r);
	if (r->bad || nerr > nfail || nerr > MAX_ERRORS)
		goto bad;
	if (b[0])
		cfg->oom = true;
	for (uint32_t i = 0; i < nerr; i++) {
		uint32_t line = rb_u32(r), n = rb_u32(r);
		char *msg;

		if (r->bad || n > r->n - r->at)
			goto bad;
		msg = strndup(r->p + r->at, n);
		r->at += n;
		add_error_msg(cfg, layer, file, line, msg);
	}
	/* Errors the child counted past the cap. */
	cfg->nfail += nfail - nerr;
	if (b[2])
		root = rb_node(cfg, r, 0);
	if (cfg->oom)
		goto out_free;
	if ((b[2] && !root) || rb_u32(r) != PARSE_MAGIC || r->at != r->n)
		goto bad;
	*ok = b[1];
	return root;

bad:
	cerr(cfg, layer, file, 0, NULL,
	     "the YAML parser's reply was malformed; the file is refused");
out_free:
	ynode_free(root);
	*ok = false;
	return NULL;
}

/*
 * parse_tree() in a child process (see above): the same tree, errors and
 * *ok; a child that crashes, hangs or garbles its reply adds one error.
 */
static struct ynode *parse_tree_child(ward_config *cfg,
				      enum ward_config_layer layer,
				      const char *file, const char *text,
				      size_t len, bool *ok)
{
	struct timespec deadline;
	struct rbuf r = {0};
	struct ynode *root = NULL;
	char *reply = NULL;
	size_t n = 0;
	bool timed_out = false;
	int p[2], status = 0, err;
	pid_t pid, w;

	*ok = false;
	if (pipe2(p, O_CLOEXEC) != 0) {
		cerr(cfg, layer, file, 0, NULL,
		     "cannot start the YAML parser: %s", strerror(errno));
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		cerr(cfg, layer, file, 0, NULL,
		     "cannot start the YAML parser: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return NULL;
	}
	if (pid == 0) {
		close(p[0]);
		parse_child(p[1], cfg, layer, file, text, len);
	}
	close(p[1]);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += PARSE_CHILD_MS / 1000;
	err = read_reply(&reply, &n, p[0], &deadline, &timed_out);
	close(p[0]);
	if (timed_out || err)
		kill(pid, SIGKILL);
	do
		w = waitpid(pid, &status, 0);
	while (w < 0 && errno == EINTR);
	if (err) {
		cfg->oom = true;
		return NULL;
	}
	if (timed_out) {
		cerr(cfg, layer, file, 0, NULL,
		     "the YAML parser did not finish within %d s; the file is "
		     "refused",
		     PARSE_CHILD_MS / 1000);
	} else if (w == pid && WIFSIGNALED(status)) {
		cerr(cfg, layer, file, 0, NULL,
		     "the YAML parser crashed on this file (%s, a libfyaml "
		     "bug); the file is refused",
		     strsignal(WTERMSIG(status)));
	} else if (w == pid && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		cerr(cfg, layer, file, 0, NULL,
		     "the YAML parser failed on this file (exit %d); the file "
		     "is refused",
		     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else {
		/* Exited 0, or reaped by someone else (SIGCHLD ignored):
		 * a whole, well-formed reply decides. */
		r.p = reply;
		r.n = n;
		root = decode_reply(cfg, layer, file, &r, ok);
	}
	free(reply);
	return root;
}

/* The tree of @text: in this process or in a child (see above). */
static struct ynode *parse_layer(ward_config *cfg, enum ward_config_layer layer,
				 const char *file, const char *text, size_t len,
				 bool *ok)
{
	if (fyaml_in_process)
		return parse_tree(cfg, layer, file, text, len, ok);
	return parse_tree_child(cfg, layer, file, text, len, ok);
}

/* --- the schema --------------------------------------------------------- */

/* Everything a key's handler needs. */
struct pstate {
	ward_config *cfg;
	struct layer *L;
	enum ward_config_layer layer;
	const char *file;
	const char *key; /* the key being handled */
	unsigned line;	 /* the key's line */
};

#define PERR(ps, line, ...)                                                    \
	cerr((ps)->cfg, (ps)->layer, (ps)->file, (line), (ps)->key, __VA_ARGS__)

static bool is_null(const struct ynode *y)
{
	return y->type == Y_SCALAR && y->style == FYSS_PLAIN &&
	       (y->len == 0 || strcmp(y->str, "~") == 0 ||
		strcmp(y->str, "null") == 0 || strcmp(y->str, "Null") == 0 ||
		strcmp(y->str, "NULL") == 0);
}

static const char *type_name(const struct ynode *y)
{
	if (is_null(y))
		return "nothing (null)";
	switch (y->type) {
	case Y_SEQ:
		return "a list";
	case Y_MAP:
		return "a mapping";
	default:
		return "a scalar";
	}
}

/*
 * The one-line string value of @y, or NULL after an error (wrong type,
 * null, NUL byte, several lines). @what describes what was expected.
 */
static const char *get_string(struct pstate *ps, const struct ynode *y,
			      const char *what)
{
	if (y->type != Y_SCALAR || is_null(y)) {
		PERR(ps, y->line, "expected %s, got %s", what, type_name(y));
		return NULL;
	}
	if (y->has_nul) {
		PERR(ps, y->line, "the value holds a NUL byte");
		return NULL;
	}
	if (y->style == FYSS_LITERAL || y->style == FYSS_FOLDED ||
	    strchr(y->str, '\n') || y->end_line != y->line) {
		PERR(ps, y->line, "expected %s on one line", what);
		return NULL;
	}
	if (y->len == 0) {
		PERR(ps, y->line, "expected %s, got an empty string", what);
		return NULL;
	}
	return y->str;
}

static bool store(ward_config *cfg, char **slot, const char *s)
{
	*slot = strdup(s);
	if (!*slot)
		cfg->oom = true;
	return *slot != NULL;
}

/* A key that the project file may not set: ignored, and where to put it. */
static void refuse_in_project(struct pstate *ps, unsigned line, const char *why)
{
	cignore(ps->cfg, ps->file, line, ps->key,
		"a project file may only narrow the sandbox, and %s; put it "
		"in your user file (%s) or pass --config FILE",
		why,
		ps->cfg->user_hint ? ps->cfg->user_hint
				   : "~/.config/ward/config.yml");
}

static void h_mode(struct pstate *ps, const struct ynode *y)
{
	const char *s = get_string(ps, y, "a mode");

	if (!s)
		return;
	if (ward_mode_parse(&ps->L->mode, s) != 0) {
		char q[128];

		PERR(ps, y->line,
		     "invalid mode \"%s\" (valid: read-only, workspace-write, "
		     "danger-full-access)",
		     quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	ps->L->has[K_MODE] = true;
}

/* `~` and `~/…` against @home; anything else copied. NULL after an error. */
static char *expand_home(struct pstate *ps, unsigned line, const char *s,
			 const char *home)
{
	char *out = NULL;

	if (s[0] != '~') {
		out = strdup(s);
		if (!out)
			ps->cfg->oom = true;
		return out;
	}
	if (s[1] != '\0' && s[1] != '/') {
		PERR(ps, line, "~user is not supported; write the full path");
		return NULL;
	}
	if (!home || home[0] != '/') {
		PERR(ps, line, "cannot expand ~: HOME is not set");
		return NULL;
	}
	if (asprintf(&out, "%s%s", home, s + 1) < 0) {
		ps->cfg->oom = true;
		return NULL;
	}
	return out;
}

static void h_workspace(struct pstate *ps, const struct ynode *y)
{
	const char *s = get_string(ps, y, "a directory");
	char q[128];

	if (!s)
		return;
	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "the workspace decides what is writable");
		return;
	}
	if (s[0] != '/' && s[0] != '~') {
		PERR(ps, y->line,
		     "\"%s\" is relative; write an absolute path or one "
		     "starting with ~/",
		     quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	/* Taken literally, "$HOME/src" would name another directory. */
	if (strchr(s, '$') || strstr(s, "{{")) {
		PERR(ps, y->line,
		     "\"%s\": variables are not expanded here; write the "
		     "path (~/ is expanded)",
		     quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	/* ~ is expanded at resolve time (the env context is known then). */
	if (s[0] == '~' && s[1] != '\0' && s[1] != '/') {
		PERR(ps, y->line,
		     "~user is not supported; write the full path");
		return;
	}
	if (store(ps->cfg, &ps->L->workspace, s))
		ps->L->has[K_WORKSPACE] = true;
}

static void h_runners(struct pstate *ps, const struct ynode *y)
{
	const enum ward_runner *chain = NULL;
	size_t nchain = ward_platform_chain(&chain, ward_platform_current());
	struct layer *L = ps->L;
	size_t before = ps->cfg->nfail;

	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "the runner chain decides how it is "
				  "enforced");
		return;
	}
	if (y->type != Y_SEQ) {
		PERR(ps, y->line, "expected a list of runners, got %s",
		     type_name(y));
		return;
	}
	if (y->n == 0) {
		PERR(ps, y->line,
		     "an empty runner chain can never confine; leave the key "
		     "out to use the platform's chain");
		return;
	}
	if (y->n > MAX_RUNNERS) {
		PERR(ps, y->line, "at most %d runners", MAX_RUNNERS);
		return;
	}
	L->nrunners = 0;
	for (size_t i = 0; i < y->n; i++) {
		const char *s = get_string(ps, y->kid[i], "a runner name");
		enum ward_runner r;
		bool ok = false;
		char q[128];

		if (!s)
			continue;
		if (ward_runner_parse(&r, s) == 0)
			for (size_t j = 0; j < nchain; j++)
				ok |= chain[j] == r;
		if (!ok) {
			PERR(ps, y->kid[i]->line,
			     "\"%s\" is not a runner of %s (valid: %s%s%s)",
			     quote(q, sizeof(q), s, strlen(s)),
			     ward_platform_name(ward_platform_current()),
			     nchain > 0 ? ward_runner_name(chain[0]) : "none",
			     nchain > 1 ? ", " : "",
			     nchain > 1 ? ward_runner_name(chain[1]) : "");
			continue;
		}
		for (size_t j = 0; j < L->nrunners; j++) {
			if (L->runners[j] == r) {
				PERR(ps, y->kid[i]->line,
				     "\"%s\" is listed twice", s);
				ok = false;
			}
		}
		if (ok)
			L->runners[L->nrunners++] = r;
	}
	if (ps->cfg->nfail == before)
		L->has[K_RUNNERS] = true;
}

static void h_runner_command(struct pstate *ps, const struct ynode *y)
{
	const char *s = get_string(ps, y, "a command");
	char q[128];

	if (!s)
		return;
	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "a runner command replaces the sandbox");
		return;
	}
	if (s[0] != '/' && strchr(s, '/')) {
		PERR(ps, y->line,
		     "\"%s\" must be an absolute path or a bare name looked "
		     "up in PATH",
		     quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	if (store(ps->cfg, &ps->L->runner_command, s))
		ps->L->has[K_RUNNER_COMMAND] = true;
}

static void h_signatures(struct pstate *ps, const struct ynode *y)
{
	size_t before = ps->cfg->nfail;
	char **v;

	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "they belong to the runner command");
		return;
	}
	if (y->type != Y_SEQ) {
		PERR(ps, y->line, "expected a list of strings, got %s",
		     type_name(y));
		return;
	}
	v = calloc(y->n + 1, sizeof(*v));
	if (!v) {
		ps->cfg->oom = true;
		return;
	}
	for (size_t i = 0, n = 0; i < y->n; i++) {
		const char *s = get_string(ps, y->kid[i], "a string");

		if (s && !store(ps->cfg, &v[n++], s))
			break;
	}
	if (ps->cfg->nfail != before || ps->cfg->oom) {
		ward_strv_free(v);
		return;
	}
	ps->L->sigs = v;
	ps->L->has[K_SIGNATURES] = true;
}

static void h_probe_timeout(struct pstate *ps, const struct ynode *y)
{
	unsigned long v = 0;
	char *end = NULL;
	char q[128];

	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "a short probe timeout can push the chain "
				  "to a weaker runner");
		return;
	}
	if (y->type != Y_SCALAR || is_null(y) || y->style != FYSS_PLAIN) {
		PERR(ps, y->line, "expected an integer, got %s",
		     y->type == Y_SCALAR && !is_null(y) ? "a quoted string"
							: type_name(y));
		return;
	}
	errno = 0;
	if (y->str[0] >= '0' && y->str[0] <= '9')
		v = strtoul(y->str, &end, 10);
	if (!end || *end || errno || v < 1 || v > PROBE_TIMEOUT_MAX_MS) {
		PERR(ps, y->line,
		     "expected an integer from 1 to %u (milliseconds), got "
		     "\"%s\"",
		     PROBE_TIMEOUT_MAX_MS, quote(q, sizeof(q), y->str, y->len));
		return;
	}
	ps->L->probe_timeout_ms = (unsigned)v;
	ps->L->has[K_PROBE_TIMEOUT] = true;
}

static bool acc_push(ward_config *cfg, struct layer *L, const char *text,
		     unsigned line, bool block)
{
	struct access_entry *a;

	if (L->nacc == L->capacc) {
		size_t cap = L->capacc ? L->capacc * 2 : 16;

		a = realloc(L->acc, cap * sizeof(*a));
		if (!a) {
			cfg->oom = true;
			return false;
		}
		L->acc = a;
		L->capacc = cap;
	}
	a = &L->acc[L->nacc];
	if (!store(cfg, &a->text, text))
		return false;
	a->line = line;
	a->block = block;
	L->nacc++;
	return true;
}

/*
 * The project file may only narrow: an `rw` entry there is ignored with a
 * warning (the rules module reports every other malformed entry at resolve
 * time). Returns false for an entry to leave out.
 */
static bool project_entry_ok(struct pstate *ps, const char *s, size_t n,
			     unsigned line)
{
	char q[200];

	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	if (ps->layer != WARD_CONFIG_LAYER_PROJECT || n < 2 ||
	    strncmp(s, "rw", 2) != 0 || (n > 2 && s[2] != ' ' && s[2] != '\t'))
		return true;
	cignore(ps->cfg, ps->file, line, ps->key,
		"entry \"%s\": a project file may only narrow the sandbox "
		"(r- and -- entries); put rw entries in your user file (%s) "
		"or pass --config FILE or --access",
		quote(q, sizeof(q), s, n),
		ps->cfg->user_hint ? ps->cfg->user_hint
				   : "~/.config/ward/config.yml");
	return false;
}

static void h_access(struct pstate *ps, const struct ynode *y)
{
	size_t before = ps->cfg->nfail;
	struct layer *L = ps->L;

	if (y->type == Y_SCALAR && !is_null(y)) {
		if (y->has_nul) {
			PERR(ps, y->line, "the value holds a NUL byte");
			return;
		}
		if (y->style == FYSS_FOLDED ||
		    (y->style != FYSS_LITERAL && y->end_line != y->line)) {
			PERR(ps, y->line,
			     "a multi-line text must be a literal block "
			     "(access: |), one entry per line; or use a list");
			return;
		}
		char *text = strdup(y->str);

		if (!text) {
			ps->cfg->oom = true;
			return;
		}
		if (y->style == FYSS_LITERAL) {
			/* Check each line; the block starts on y->line. An
			 * ignored line is blanked, so the others keep their
			 * line numbers. */
			char *p = text;
			unsigned line = y->line;

			while (*p) {
				char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);

				if (!project_entry_ok(ps, p, n, line))
					memset(p, ' ', n);
				p += n + (nl ? 1 : 0);
				line++;
			}
		} else if (!project_entry_ok(ps, y->str, y->len, y->line)) {
			free(text);
			return;
		}
		if (ps->cfg->nfail == before &&
		    acc_push(ps->cfg, L, text, y->line,
			     y->style == FYSS_LITERAL))
			L->has[K_ACCESS] = true;
		free(text);
		return;
	}
	if (y->type != Y_SEQ) {
		PERR(ps, y->line,
		     "expected a list of entries or a literal block "
		     "(access: |), got %s",
		     type_name(y));
		return;
	}
	for (size_t i = 0; i < y->n; i++) {
		const struct ynode *it = y->kid[i];

		get_string(ps, it, "an entry (rw, r- or -- and a path)");
	}
	if (ps->cfg->nfail != before)
		return;
	for (size_t i = 0; i < y->n; i++) {
		const struct ynode *it = y->kid[i];

		if (!project_entry_ok(ps, it->str, strlen(it->str), it->line))
			continue;
		if (!acc_push(ps->cfg, L, it->str, it->line, false))
			return;
	}
	L->has[K_ACCESS] = true;
}

static bool parse_approval(enum ward_approval_policy *out, const char *s)
{
	if (strcmp(s, "ask") == 0)
		*out = WARD_APPROVAL_ASK;
	else if (strcmp(s, "never") == 0)
		*out = WARD_APPROVAL_NEVER;
	else
		return false;
	return true;
}

static void h_approval(struct pstate *ps, const struct ynode *y)
{
	const char *s = get_string(ps, y, "an approval policy");
	char q[128];

	if (!s)
		return;
	if (!parse_approval(&ps->L->approval, s)) {
		PERR(ps, y->line,
		     "invalid approval policy \"%s\" (valid: ask, never)",
		     quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	if (ps->layer == WARD_CONFIG_LAYER_PROJECT &&
	    ps->L->approval == WARD_APPROVAL_NEVER) {
		refuse_in_project(ps, ps->line,
				  "whether you are asked is your decision "
				  "(only \"ask\" counts there)");
		return;
	}
	ps->L->has[K_APPROVAL] = true;
}

static bool preset_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 64 || strcmp(s, "custom") == 0)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* One preset: {mode: M, approval: A}, both required. */
static void parse_preset(struct pstate *ps, const char *name,
			 const struct ynode *key, const struct ynode *v)
{
	struct layer *L = ps->L;
	struct preset p = {.line = key->line};
	bool has_mode = false, has_appr = false;
	size_t before = ps->cfg->nfail;
	char q[128];

	if (v->type != Y_MAP) {
		PERR(ps, v->line,
		     "preset \"%s\": expected a mapping {mode, approval}, "
		     "got %s",
		     name, type_name(v));
		return;
	}
	for (size_t i = 0; i + 1 < v->n; i += 2) {
		const struct ynode *k = v->kid[i], *val = v->kid[i + 1];
		const char *ks = k->type == Y_SCALAR ? k->str : "";
		const char *s;

		if (strcmp(ks, "mode") == 0 && !has_mode) {
			has_mode = true;
			s = get_string(ps, val, "a mode");
			if (s && ward_mode_parse(&p.mode, s) != 0)
				PERR(ps, val->line,
				     "preset \"%s\": invalid mode \"%s\" "
				     "(valid: read-only, workspace-write, "
				     "danger-full-access)",
				     name, quote(q, sizeof(q), s, strlen(s)));
		} else if (strcmp(ks, "approval") == 0 && !has_appr) {
			has_appr = true;
			s = get_string(ps, val, "an approval policy");
			if (s && !parse_approval(&p.approval, s))
				PERR(ps, val->line,
				     "preset \"%s\": invalid approval policy "
				     "\"%s\" (valid: ask, never)",
				     name, quote(q, sizeof(q), s, strlen(s)));
		} else if (strcmp(ks, "mode") == 0 ||
			   strcmp(ks, "approval") == 0) {
			PERR(ps, k->line, "preset \"%s\": duplicate key \"%s\"",
			     name, ks);
		} else {
			PERR(ps, k->line,
			     "preset \"%s\": unknown key \"%s\" (valid: mode, "
			     "approval)",
			     name, quote(q, sizeof(q), ks, strlen(ks)));
		}
	}
	if (!has_mode || !has_appr) {
		PERR(ps, key->line, "preset \"%s\": missing %s", name,
		     !has_mode && !has_appr ? "mode and approval"
		     : !has_mode	    ? "mode"
					    : "approval");
		return;
	}
	if (ps->cfg->nfail != before)
		return;
	if (L->npresets == L->cappresets) {
		size_t cap = L->cappresets ? L->cappresets * 2 : 4;
		struct preset *np = realloc(L->presets, cap * sizeof(*np));

		if (!np) {
			ps->cfg->oom = true;
			return;
		}
		L->presets = np;
		L->cappresets = cap;
	}
	if (!store(ps->cfg, &p.name, name))
		return;
	L->presets[L->npresets++] = p;
}

static void h_presets(struct pstate *ps, const struct ynode *y)
{
	size_t before = ps->cfg->nfail;
	char q[128];

	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "a preset can name a wider mode");
		return;
	}
	if (y->type != Y_MAP) {
		PERR(ps, y->line,
		     "expected a mapping of preset names to {mode, approval}, "
		     "got %s",
		     type_name(y));
		return;
	}
	for (size_t i = 0; i + 1 < y->n; i += 2) {
		const struct ynode *k = y->kid[i];
		const char *name = k->type == Y_SCALAR ? k->str : NULL;
		bool dup = false;

		if (!name || k->has_nul || !preset_name_ok(name)) {
			PERR(ps, k->line,
			     "invalid preset name \"%s\" (1 to 64 of "
			     "A-Z a-z 0-9 . _ -; not \"custom\")",
			     name ? quote(q, sizeof(q), name, k->len) : "");
			continue;
		}
		for (size_t j = 0; j < i; j += 2)
			dup |= y->kid[j]->type == Y_SCALAR &&
			       strcmp(y->kid[j]->str, name) == 0;
		if (dup) {
			PERR(ps, k->line, "preset \"%s\" is defined twice",
			     name);
			continue;
		}
		parse_preset(ps, name, k, y->kid[i + 1]);
	}
	if (ps->cfg->nfail == before)
		ps->L->has[K_PRESETS] = true;
}

static void h_protect_git(struct pstate *ps, const struct ynode *y)
{
	bool v;

	if (y->type != Y_SCALAR || is_null(y) || y->style != FYSS_PLAIN ||
	    (strcmp(y->str, "true") != 0 && strcmp(y->str, "false") != 0)) {
		char q[128];

		PERR(ps, y->line, "expected true or false, got %s",
		     y->type == Y_SCALAR && !is_null(y)
			 ? quote(q, sizeof(q), y->str, y->len)
			 : type_name(y));
		return;
	}
	v = strcmp(y->str, "true") == 0;
	if (!v && ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		cignore(ps->cfg, ps->file, ps->line, ps->key,
			"a project file may only narrow the sandbox, and "
			"turning protect_git off lets a command plant git "
			"hooks; put it in your user file (%s)",
			ps->cfg->user_hint ? ps->cfg->user_hint
					   : "~/.config/ward/config.yml");
		return;
	}
	if (!v && ps->layer != WARD_CONFIG_LAYER_USER) {
		PERR(ps, ps->line,
		     "protect_git: false may only be set in your user file "
		     "(%s)",
		     ps->cfg->user_hint ? ps->cfg->user_hint
					: "~/.config/ward/config.yml");
		return;
	}
	ps->L->protect_git = v;
	ps->L->has[K_PROTECT_GIT] = true;
}

/*
 * unprotect: paths whose protection the user releases (git and trap paths,
 * ward-config(5)). Only the user's own file: a cloned repository must not
 * switch off what keeps it from planting code.
 */
static void h_user_paths(struct pstate *ps, const struct ynode *y,
			 enum key key);

static void h_unprotect(struct pstate *ps, const struct ynode *y)
{
	h_user_paths(ps, y, K_UNPROTECT);
}

/*
 * allow_unix: unix sockets a confined command may reach although they are
 * not its own (docs/RUNNERS.md, the supervisor). Only the user's own file:
 * a cloned repository must not open docker.sock or the D-Bus to itself.
 */
static void h_allow_unix(struct pstate *ps, const struct ynode *y)
{
	h_user_paths(ps, y, K_ALLOW_UNIX);
}

/* A list of paths only the user's own file may set (unprotect,
 * allow_unix). */
static void h_user_paths(struct pstate *ps, const struct ynode *y, enum key key)
{
	size_t before = ps->cfg->nfail;
	const char *hint = ps->cfg->user_hint ? ps->cfg->user_hint
					      : "~/.config/ward/config.yml";
	unsigned *lines;
	char **v;

	/* Like every widening value of a project file: ignored with a
	 * warning (a ceiling, never a lockout), so the paths stay protected
	 * and the commands still run. */
	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		cignore(ps->cfg, ps->file, ps->line, ps->key,
			"a project file may only narrow the sandbox, and %s; "
			"put it in your user file (%s)",
			key == K_UNPROTECT
			    ? "releasing a protected path lets a command plant "
			      "code that git or your editor runs later"
			    : "a socket outside the sandbox lets a command "
			      "talk to a server that is not confined",
			hint);
		return;
	}
	if (ps->layer != WARD_CONFIG_LAYER_USER) {
		PERR(ps, ps->line, "refused: only your user file (%s) may %s",
		     hint,
		     key == K_UNPROTECT ? "release a protected path"
					: "allow a unix socket");
		return;
	}
	if (y->type != Y_SEQ) {
		PERR(ps, y->line, "expected a list of paths, got %s",
		     type_name(y));
		return;
	}
	v = calloc(y->n + 1, sizeof(*v));
	lines = calloc(y->n + 1, sizeof(*lines));
	if (!v || !lines) {
		free(v);
		free(lines);
		ps->cfg->oom = true;
		return;
	}
	for (size_t i = 0, n = 0; i < y->n; i++) {
		const char *p = get_string(ps, y->kid[i], "a path");
		char q[128];

		if (!p)
			continue;
		if (p[0] == '~' && p[1] != '\0' && p[1] != '/') {
			PERR(ps, y->kid[i]->line,
			     "\"%s\": ~user is not supported; write the full "
			     "path",
			     quote(q, sizeof(q), p, strlen(p)));
			continue;
		}
		lines[n] = y->kid[i]->line;
		if (!store(ps->cfg, &v[n++], p))
			break;
	}
	if (ps->cfg->nfail != before || ps->cfg->oom) {
		ward_strv_free(v);
		free(lines);
		return;
	}
	if (key == K_ALLOW_UNIX) {
		ps->L->aunix = v;
		ps->L->aunix_line = lines;
	} else {
		ps->L->unprot = v;
		ps->L->unprot_line = lines;
	}
	ps->L->has[key] = true;
}

/* A list of variable name patterns, into *out (NULL-terminated). */
static void env_patterns(struct pstate *ps, const struct ynode *y,
			 const char *what, char ***out)
{
	size_t before = ps->cfg->nfail;
	char **v;
	char q[128];

	if (y->type != Y_SEQ) {
		PERR(ps, y->line,
		     "%s: expected a list of variable names, got %s", what,
		     type_name(y));
		return;
	}
	v = calloc(y->n + 1, sizeof(*v));
	if (!v) {
		ps->cfg->oom = true;
		return;
	}
	for (size_t i = 0, n = 0; i < y->n; i++) {
		const char *s = get_string(ps, y->kid[i], "a variable name");

		if (!s)
			continue;
		if (!ward_env_pattern_valid(s)) {
			PERR(ps, y->kid[i]->line,
			     "%s: \"%s\" is not a variable name or pattern "
			     "(letters, digits, _ and the globs * ? [ ])",
			     what, quote(q, sizeof(q), s, strlen(s)));
			continue;
		}
		if (!store(ps->cfg, &v[n++], s))
			break;
	}
	if (ps->cfg->nfail != before || ps->cfg->oom) {
		ward_strv_free(v);
		return;
	}
	ward_strv_free(*out);
	*out = v;
}

/* env: {drop: [PATTERN…], keep: [PATTERN…]} */
static void h_env(struct pstate *ps, const struct ynode *y)
{
	size_t before = ps->cfg->nfail;
	bool seen_drop = false, seen_keep = false;

	if (y->type != Y_MAP) {
		PERR(ps, y->line,
		     "expected a mapping {drop: [...], keep: [...]}, got %s",
		     type_name(y));
		return;
	}
	for (size_t i = 0; i + 1 < y->n; i += 2) {
		const struct ynode *k = y->kid[i], *v = y->kid[i + 1];
		const char *name = k->type == Y_SCALAR ? k->str : "";
		char q[128];

		if (strcmp(name, "drop") == 0 && !seen_drop) {
			seen_drop = true;
			env_patterns(ps, v, "drop", &ps->L->env_drop);
		} else if (strcmp(name, "keep") == 0 && !seen_keep) {
			seen_keep = true;
			/* Keeping a variable a pattern drops widens what a
			 * command sees: the user's choice, not the
			 * repository's. */
			if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
				cignore(
				    ps->cfg, ps->file, k->line, "env.keep",
				    "a project file may only narrow the "
				    "sandbox, and keeping a variable ward "
				    "drops hands a secret to every command; "
				    "put it in your user file (%s) or pass "
				    "--env-keep NAME",
				    ps->cfg->user_hint
					? ps->cfg->user_hint
					: "~/.config/ward/config.yml");
				continue;
			}
			env_patterns(ps, v, "keep", &ps->L->env_keep);
		} else {
			PERR(ps, k->line,
			     "%s key \"%s\" (valid: drop, keep, each once)",
			     seen_drop || seen_keep ? "unknown or repeated"
						    : "unknown",
			     quote(q, sizeof(q), name, strlen(name)));
		}
	}
	if (ps->cfg->nfail == before)
		ps->L->has[K_ENV] = true;
}

static void h_network(struct pstate *ps, const struct ynode *y)
{
	const char *s = get_string(ps, y, "off or on");
	char q[128];

	if (!s)
		return;
	if (ward_network_parse(&ps->L->network, s) != 0) {
		PERR(ps, y->line,
		     "invalid network \"%s\" (valid: off, on; an allowlist is "
		     "given with allow_domains)",
		     quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	if (ps->layer == WARD_CONFIG_LAYER_PROJECT &&
	    ps->L->network == WARD_NETWORK_ON) {
		refuse_in_project(ps, ps->line,
				  "\"network: on\" would open the network "
				  "to every host");
		return;
	}
	ps->L->has[K_NETWORK] = true;
}

/* A list of domain patterns (allow_domains / deny_domains) into *out. */
static void domain_list(struct pstate *ps, const struct ynode *y, char ***out,
			enum key key)
{
	size_t before = ps->cfg->nfail;
	char **v;

	if (y->type != Y_SEQ) {
		PERR(ps, y->line,
		     "expected a list of domain patterns (example.com, "
		     "*.example.com), got %s",
		     type_name(y));
		return;
	}
	v = calloc(y->n + 1, sizeof(*v));
	if (!v) {
		ps->cfg->oom = true;
		return;
	}
	for (size_t i = 0, n = 0; i < y->n; i++) {
		const char *p = get_string(ps, y->kid[i], "a domain pattern");
		char q[128];

		if (!p)
			continue;
		if (ward_network_pattern_check(p) != 0) {
			PERR(ps, y->kid[i]->line, "\"%s\": %s",
			     quote(q, sizeof(q), p, strlen(p)),
			     ward_error_last());
			continue;
		}
		if (!store(ps->cfg, &v[n++], p))
			break;
	}
	if (ps->cfg->nfail != before || ps->cfg->oom) {
		ward_strv_free(v);
		return;
	}
	*out = v;
	ps->L->has[key] = true;
}

static void h_allow_domains(struct pstate *ps, const struct ynode *y)
{
	domain_list(ps, y, &ps->L->allow, K_ALLOW_DOMAINS);
}

static void h_deny_domains(struct pstate *ps, const struct ynode *y)
{
	domain_list(ps, y, &ps->L->deny, K_DENY_DOMAINS);
}

static void (*const handlers[K_COUNT])(struct pstate *,
				       const struct ynode *) = {
    [K_MODE] = h_mode,
    [K_WORKSPACE] = h_workspace,
    [K_RUNNERS] = h_runners,
    [K_RUNNER_COMMAND] = h_runner_command,
    [K_SIGNATURES] = h_signatures,
    [K_PROBE_TIMEOUT] = h_probe_timeout,
    [K_ACCESS] = h_access,
    [K_APPROVAL] = h_approval,
    [K_PRESETS] = h_presets,
    [K_PROTECT_GIT] = h_protect_git,
    [K_UNPROTECT] = h_unprotect,
    [K_ALLOW_UNIX] = h_allow_unix,
    [K_ENV] = h_env,
    [K_NETWORK] = h_network,
    [K_ALLOW_DOMAINS] = h_allow_domains,
    [K_DENY_DOMAINS] = h_deny_domains,
};

/* Walk the top-level mapping. */
static void walk_root(ward_config *cfg, struct layer *L,
		      enum ward_config_layer layer, const struct ynode *root)
{
	struct pstate ps = {
	    .cfg = cfg, .L = L, .layer = layer, .file = L->file};
	bool seen[K_COUNT] = {false};
	unsigned seen_line[K_COUNT] = {0};
	char q[128];

	if (!root || is_null(root))
		return; /* an empty file: no settings */
	if (root->type != Y_MAP) {
		cerr(cfg, layer, L->file, root->line, NULL,
		     "the top level must be a mapping of keys (mode, access, "
		     "...), not %s",
		     type_name(root));
		return;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct ynode *k = root->kid[i], *v = root->kid[i + 1];
		size_t key = K_COUNT;

		if (k->type != Y_SCALAR || k->has_nul) {
			cerr(cfg, layer, L->file, k->line, NULL,
			     "keys must be plain names, not %s", type_name(k));
			continue;
		}
		for (size_t j = 0; j < K_COUNT; j++)
			if (strcmp(k->str, key_names[j]) == 0)
				key = j;
		if (key == K_COUNT) {
			cerr(cfg, layer, L->file, k->line,
			     quote(q, sizeof(q), k->str, k->len),
			     "unknown key (valid: mode, workspace, runners, "
			     "runner_command, runner_failure_signatures, "
			     "probe_timeout_ms, access, approval, presets, "
			     "protect_git, unprotect, allow_unix, env, "
			     "network, allow_domains, deny_domains)");
			continue;
		}
		if (seen[key]) {
			cerr(cfg, layer, L->file, k->line, key_names[key],
			     "duplicate key (first set on line %u)",
			     seen_line[key]);
			continue;
		}
		seen[key] = true;
		seen_line[key] = k->line;
		ps.key = key_names[key];
		ps.line = k->line;
		L->line[key] = k->line;
		if (is_null(v)) {
			cerr(cfg, layer, L->file, k->line, key_names[key],
			     "no value");
			continue;
		}
		handlers[key](&ps, v);
	}
}

/* --- layers ------------------------------------------------------------- */

static void layer_clear(struct layer *L)
{
	free(L->file);
	free(L->workspace);
	free(L->runner_command);
	ward_strv_free(L->sigs);
	ward_strv_free(L->unprot);
	free(L->unprot_line);
	ward_strv_free(L->aunix);
	free(L->aunix_line);
	for (size_t i = 0; i < L->nacc; i++)
		free(L->acc[i].text);
	free(L->acc);
	for (size_t i = 0; i < L->npresets; i++)
		free(L->presets[i].name);
	free(L->presets);
	ward_strv_free(L->env_drop);
	ward_strv_free(L->env_keep);
	ward_strv_free(L->allow);
	ward_strv_free(L->deny);
	memset(L, 0, sizeof(*L));
}

static bool file_layer(enum ward_config_layer layer)
{
	return layer == WARD_CONFIG_LAYER_USER ||
	       layer == WARD_CONFIG_LAYER_PROJECT ||
	       layer == WARD_CONFIG_LAYER_EXPLICIT;
}

int ward_config_add_string(ward_config *cfg, enum ward_config_layer layer,
			   const char *name, const char *text, size_t len)
{
	struct emark before;
	struct layer *L;
	struct ynode *root;
	bool ok;

	if (!cfg || !name || (!text && len))
		return ward_err(WARD_EINVAL, "config: NULL argument");
	if (!file_layer(layer))
		return ward_err(WARD_EINVAL,
				"config: layer %s is not read from a file",
				ward_config_layer_name(layer));
	L = &cfg->L[layer];
	if (L->present)
		return ward_err(WARD_EINVAL,
				"config: the %s layer is already loaded",
				ward_config_layer_name(layer));
	before = emark(cfg);
	L->present = true;
	L->protect_git = true;
	if (!store(cfg, &L->file, name))
		return result(cfg, before);
	if (len > WARD_CONFIG_MAX_BYTES) {
		cerr(cfg, layer, L->file, 0, NULL,
		     "larger than %d bytes; a ward configuration is small",
		     WARD_CONFIG_MAX_BYTES);
		return result(cfg, before);
	}
	root = parse_layer(cfg, layer, L->file, text, len, &ok);
	if (ok)
		walk_root(cfg, L, layer, root);
	ynode_free(root);
	return result(cfg, before);
}

/* Read a regular file of at most WARD_CONFIG_MAX_BYTES into *out. */
static int read_file(char **out, size_t *out_len, const char *path)
{
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int fd, err;

	/* O_NONBLOCK: a FIFO planted as .ward/config.yml must not hang us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out_close;
	}
	if (st.st_size > WARD_CONFIG_MAX_BYTES) {
		err = -EFBIG;
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t got;

		/* One byte of slack detects a file that grew. */
		if (n > (size_t)st.st_size) {
			err = -EFBIG;
			goto out_free;
		}
		got = read(fd, buf + n, (size_t)st.st_size + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = -errno;
			goto out_free;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	*out = buf;
	*out_len = n;
	return 0;

out_free:
	free(buf);
out_close:
	close(fd);
	return err;
}

int ward_config_add_file(ward_config *cfg, enum ward_config_layer layer,
			 const char *path, bool optional)
{
	struct emark before;
	char *text = NULL;
	size_t len = 0;
	int err;

	if (!cfg || !path)
		return ward_err(WARD_EINVAL, "config: NULL argument");
	if (!file_layer(layer))
		return ward_err(WARD_EINVAL,
				"config: layer %s is not read from a file",
				ward_config_layer_name(layer));
	before = emark(cfg);
	err = read_file(&text, &len, path);
	if (err == -ENOENT && optional)
		return 0;
	/*
	 * A directory on the way that we may not search (HOME=/root while
	 * running as another user): the file cannot be ours to read, and we
	 * cannot even tell whether it exists. An optional file is skipped
	 * with a warning; a file that exists but that we may not read is
	 * still an error below.
	 */
	if (err == -EACCES && optional) {
		struct stat st;

		if (stat(path, &st) != 0 && errno == EACCES) {
			cwarn(cfg,
			      "%s: not read: a directory on its path is not "
			      "searchable by this user",
			      path);
			return result(cfg, before);
		}
	}
	if (err == -ENOMEM)
		return ward_err(err, "config: out of memory");
	if (err) {
		const char *why = err == -EINVAL  ? "not a regular file"
				  : err == -EFBIG ? "larger than 1 MiB; a ward "
						    "configuration is small"
						  : strerror(-err);

		cerr(cfg, layer, path, 0, NULL, "cannot read: %s", why);
		return result(cfg, before);
	}
	err = ward_config_add_string(cfg, layer, path, text, len);
	free(text);
	return err;
}

/* --- resolve ------------------------------------------------------------ */

static const char *env_home(const struct ward_rules_env *env)
{
	if (env && env->home)
		return env->home;
	return getenv("HOME");
}

/* The highest file layer (from @top down to USER) that set @key. */
static struct layer *pick(ward_config *cfg, enum key key,
			  enum ward_config_layer top,
			  enum ward_config_layer *out_layer)
{
	for (int l = (int)top; l >= WARD_CONFIG_LAYER_USER; l--) {
		if (cfg->L[l].present && cfg->L[l].has[key]) {
			*out_layer = (enum ward_config_layer)l;
			return &cfg->L[l];
		}
	}
	return NULL;
}

static void set_from(ward_config *cfg, enum key key,
		     enum ward_config_layer layer, const struct layer *L)
{
	cfg->from[key].layer = layer;
	cfg->from[key].file = L ? L->file : NULL;
	cfg->from[key].line = L ? L->line[key] : 0;
}

/* Describe an origin for a message: "the user file F:L", "the default". */
static const char *origin_text(char *buf, size_t len,
			       const struct ward_config_origin *o)
{
	switch (o->layer) {
	case WARD_CONFIG_LAYER_DEFAULT:
		snprintf(buf, len, "the built-in default");
		break;
	case WARD_CONFIG_LAYER_FLAGS:
		snprintf(buf, len, "a command-line flag");
		break;
	default:
		snprintf(buf, len, "the %s file %s:%u",
			 ward_config_layer_name(o->layer),
			 o->file ? o->file : "?", o->line);
		break;
	}
	return buf;
}

/* Effective mode, checking that the project layer only narrows. */
static void resolve_mode(ward_config *cfg,
			 const struct ward_config_options *opts)
{
	struct layer *U = &cfg->L[WARD_CONFIG_LAYER_USER];
	struct layer *P = &cfg->L[WARD_CONFIG_LAYER_PROJECT];
	struct layer *X = &cfg->L[WARD_CONFIG_LAYER_EXPLICIT];
	enum ward_mode m;

	cfg->mode = WARD_MODE_DEFAULT;
	set_from(cfg, K_MODE, WARD_CONFIG_LAYER_DEFAULT, NULL);
	if (U->present && U->has[K_MODE]) {
		cfg->mode = U->mode;
		set_from(cfg, K_MODE, WARD_CONFIG_LAYER_USER, U);
	}
	if (P->present && P->has[K_MODE]) {
		if (ward_mode_is_wider(P->mode, cfg->mode)) {
			char o[PATH_MAX + 64];

			/* A ceiling, not a lockout: the mode below stays. */
			cignore(
			    cfg, P->file, P->line[K_MODE], "mode",
			    "a project file may only narrow the sandbox, "
			    "and %s is wider than %s (from %s), which "
			    "stays in force; to run under %s, pass --mode "
			    "%s, or set it in your user file (%s) or with "
			    "--config FILE",
			    ward_mode_name(P->mode), ward_mode_name(cfg->mode),
			    origin_text(o, sizeof(o), &cfg->from[K_MODE]),
			    ward_mode_name(P->mode), ward_mode_name(P->mode),
			    cfg->user_hint ? cfg->user_hint
					   : "~/.config/ward/config.yml");
		} else {
			cfg->mode = P->mode;
			set_from(cfg, K_MODE, WARD_CONFIG_LAYER_PROJECT, P);
		}
	}
	if (X->present && X->has[K_MODE]) {
		cfg->mode = X->mode;
		set_from(cfg, K_MODE, WARD_CONFIG_LAYER_EXPLICIT, X);
	}
	if (opts && opts->mode) {
		if (ward_mode_parse(&m, opts->mode) != 0) {
			char q[128];

			cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0, "mode",
			     "invalid mode \"%s\" (valid: read-only, "
			     "workspace-write, danger-full-access)",
			     quote(q, sizeof(q), opts->mode,
				   strlen(opts->mode)));
			return;
		}
		cfg->mode = m;
		set_from(cfg, K_MODE, WARD_CONFIG_LAYER_FLAGS, NULL);
	}
}

/* The workspace the layers name (not canonical), and where it came from. */
static char *pick_workspace(ward_config *cfg,
			    const struct ward_config_options *opts, bool report)
{
	enum ward_config_layer l = WARD_CONFIG_LAYER_DEFAULT;
	struct layer *L = NULL;
	char *ws;

	if (opts && opts->workspace) {
		set_from(cfg, K_WORKSPACE, WARD_CONFIG_LAYER_FLAGS, NULL);
		ws = strdup(opts->workspace);
	} else if ((L = pick(cfg, K_WORKSPACE, WARD_CONFIG_LAYER_EXPLICIT,
			     &l)) != NULL) {
		struct pstate ps = {.cfg = cfg,
				    .L = L,
				    .layer = l,
				    .file = L->file,
				    .key = "workspace"};
		struct emark before = emark(cfg);

		set_from(cfg, K_WORKSPACE, l, L);
		ws = expand_home(&ps, L->line[K_WORKSPACE], L->workspace,
				 env_home(opts ? opts->env : NULL));
		if (!report && cfg->nfail > before.nfail) {
			/* Reported again by the resolve pass. */
			while (cfg->nerr > before.nerr)
				free(cfg->err[--cfg->nerr].msg);
			cfg->nfail = before.nfail;
		}
		return ws;
	} else {
		set_from(cfg, K_WORKSPACE, WARD_CONFIG_LAYER_DEFAULT, NULL);
		ws = strdup(".");
	}
	if (!ws)
		cfg->oom = true;
	return ws;
}

static void resolve_workspace(ward_config *cfg,
			      const struct ward_config_options *opts)
{
	const struct ward_config_origin *o = &cfg->from[K_WORKSPACE];
	char *ws = pick_workspace(cfg, opts, true);
	char *real;
	struct stat st;

	if (!ws)
		return;
	real = realpath(ws, NULL);
	if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		const char *why = real ? "not a directory" : strerror(errno);

		cerr(cfg, o->layer, o->file, o->line, "workspace", "%s: %s", ws,
		     why);
		free(real);
		free(ws);
		return;
	}
	free(ws);
	cfg->workspace = real;
}

/*
 * The highest file layer (--config, the project's, the user's) that sets
 * the scalar @key, recorded as the key's origin; NULL when none does.
 * The parser keeps the user-only keys out of the project file.
 */
static struct layer *pick_scalar(ward_config *cfg, enum key key)
{
	enum ward_config_layer l;
	struct layer *L = pick(cfg, key, WARD_CONFIG_LAYER_EXPLICIT, &l);

	if (L)
		set_from(cfg, key, l, L);
	return L;
}

/* Scalar keys set only by the user file and --config (never project). */
static void resolve_simple(ward_config *cfg)
{
	struct layer *L;

	if ((L = pick_scalar(cfg, K_RUNNERS))) {
		cfg->runners = L->runners;
		cfg->nrunners = L->nrunners;
	}
	if ((L = pick_scalar(cfg, K_RUNNER_COMMAND)))
		cfg->runner_command = L->runner_command;
	if ((L = pick_scalar(cfg, K_SIGNATURES)))
		cfg->sigs = L->sigs;
	if ((L = pick_scalar(cfg, K_PROBE_TIMEOUT)))
		cfg->probe_timeout_ms = L->probe_timeout_ms;
	/* approval: ask in the project file is allowed (it only narrows). */
	if ((L = pick_scalar(cfg, K_APPROVAL)))
		cfg->approval = L->approval;
	/* A true anywhere above a false wins; false is user-only. */
	if ((L = pick_scalar(cfg, K_PROTECT_GIT)))
		cfg->protect_git = L->protect_git;
}

/*
 * unprotect (user file only): each path made absolute (`~/` expanded, a
 * relative one taken from the workspace). A path naming ward's own
 * directories or the project's .ward is kept but releases nothing there;
 * a warning says so.
 */
static void resolve_unprotect(ward_config *cfg,
			      const struct ward_config_options *opts)
{
	struct layer *L = &cfg->L[WARD_CONFIG_LAYER_USER];
	struct pstate ps = {.cfg = cfg,
			    .L = L,
			    .layer = WARD_CONFIG_LAYER_USER,
			    .file = L->file,
			    .key = "unprotect"};
	struct ward_strv sv = {0};
	char *ward_dir = NULL;

	if (!L->has[K_UNPROTECT])
		return;
	set_from(cfg, K_UNPROTECT, WARD_CONFIG_LAYER_USER, L);
	if (cfg->workspace &&
	    asprintf(&ward_dir, "%s/.ward",
		     strcmp(cfg->workspace, "/") ? cfg->workspace : "") < 0)
		ward_dir = NULL;
	for (size_t i = 0; L->unprot[i]; i++) {
		const char *p = L->unprot[i];
		char *abs = NULL;

		if (p[0] == '~') {
			abs = expand_home(&ps, L->unprot_line[i], p,
					  env_home(opts ? opts->env : NULL));
		} else if (p[0] == '/') {
			abs = strdup(p);
		} else if (cfg->workspace) {
			if (asprintf(&abs, "%s/%s",
				     strcmp(cfg->workspace, "/")
					 ? cfg->workspace
					 : "",
				     p) < 0)
				abs = NULL;
		} else {
			continue; /* no workspace: its error is reported */
		}
		if (!abs) {
			if (cfg->nfail == 0)
				cfg->oom = true;
			continue;
		}
		if (ward_dir && util_path_within(abs, ward_dir))
			cwarn(cfg,
			      "unprotect (%s:%u): %s lies in the project's "
			      ".ward, which is never released",
			      L->file, L->unprot_line[i], p);
		ward_strv_push(&sv, abs);
		free(abs);
	}
	free(ward_dir);
	if (ward_strv_finish(&cfg->unprotect, &sv) != 0) {
		cfg->oom = true;
		cfg->unprotect = NULL;
	}
}

/*
 * allow_unix (user file only): each path made absolute (`~/` expanded; a
 * relative one is an error: a socket's place does not depend on the
 * workspace).
 */
static void resolve_allow_unix(ward_config *cfg,
			       const struct ward_config_options *opts)
{
	struct layer *L = &cfg->L[WARD_CONFIG_LAYER_USER];
	struct pstate ps = {.cfg = cfg,
			    .L = L,
			    .layer = WARD_CONFIG_LAYER_USER,
			    .file = L->file,
			    .key = "allow_unix"};
	struct ward_strv sv = {0};

	bool flags = opts && opts->version >= 3 && opts->allow_unix_len;

	if (!L->has[K_ALLOW_UNIX] && !flags)
		return;
	if (L->has[K_ALLOW_UNIX])
		set_from(cfg, K_ALLOW_UNIX, WARD_CONFIG_LAYER_USER, L);
	for (size_t i = 0; L->has[K_ALLOW_UNIX] && L->aunix[i]; i++) {
		const char *p = L->aunix[i];
		char *abs = NULL;

		if (p[0] == '~') {
			abs = expand_home(&ps, L->aunix_line[i], p,
					  env_home(opts ? opts->env : NULL));
		} else if (p[0] == '/') {
			abs = strdup(p);
		} else {
			PERR(&ps, L->aunix_line[i],
			     "\"%s\" is not an absolute path (a socket is "
			     "named from /, or ~/)",
			     p);
			continue;
		}
		if (!abs) {
			if (cfg->nfail == 0)
				cfg->oom = true;
			continue;
		}
		ward_strv_push(&sv, abs);
		free(abs);
	}
	for (size_t i = 0; flags && i < opts->allow_unix_len; i++) {
		if (!opts->allow_unix[i] || opts->allow_unix[i][0] != '/') {
			cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
			     "allow-unix", "'%s' is not an absolute path",
			     opts->allow_unix[i] ? opts->allow_unix[i] : "");
			continue;
		}
		ward_strv_push(&sv, opts->allow_unix[i]);
	}
	if (ward_strv_finish(&cfg->allow_unix, &sv) != 0) {
		cfg->oom = true;
		cfg->allow_unix = NULL;
	}
}

/* Presets: user file, then --config (a redefinition keeps its place). */
static void resolve_presets(ward_config *cfg)
{
	static const enum ward_config_layer order[] = {
	    WARD_CONFIG_LAYER_USER, WARD_CONFIG_LAYER_EXPLICIT};
	size_t total = 0;

	for (size_t o = 0; o < 2; o++)
		total += cfg->L[order[o]].npresets;
	if (total == 0)
		return;
	cfg->presets = calloc(total, sizeof(*cfg->presets));
	if (!cfg->presets) {
		cfg->oom = true;
		return;
	}
	for (size_t o = 0; o < 2; o++) {
		struct layer *L = &cfg->L[order[o]];

		for (size_t i = 0; i < L->npresets; i++) {
			struct ward_config_preset *p = NULL;

			for (size_t j = 0; j < cfg->npresets; j++)
				if (strcmp(cfg->presets[j].name,
					   L->presets[i].name) == 0)
					p = &cfg->presets[j];
			if (!p)
				p = &cfg->presets[cfg->npresets++];
			p->name = L->presets[i].name;
			p->mode = L->presets[i].mode;
			p->approval = L->presets[i].approval;
			p->origin.layer = order[o];
			p->origin.file = L->file;
			p->origin.line = L->presets[i].line;
		}
	}
	/* The origin of the key: the highest layer that defines presets. */
	for (size_t o = 0; o < 2; o++)
		if (cfg->L[order[o]].npresets)
			set_from(cfg, K_PRESETS, order[o], &cfg->L[order[o]]);
}

/*
 * The preset table: the built-in presets, then each configured one set on
 * top (a built-in name is redefined in place). presets.c refuses a second
 * preset with the same (mode, approval) pair; that error names the file.
 */
static void resolve_preset_table(ward_config *cfg)
{
	int err = ward_presets_new_default(&cfg->table);

	if (err) {
		cfg->oom = true;
		return;
	}
	for (size_t i = 0; i < cfg->npresets; i++) {
		const struct ward_config_preset *p = &cfg->presets[i];

		err =
		    ward_presets_set(cfg->table, p->name, p->mode, p->approval);
		if (err == -ENOMEM)
			cfg->oom = true;
		else if (err)
			cerr(cfg, p->origin.layer, p->origin.file,
			     p->origin.line, "presets", "%s",
			     ward_error_last());
	}
}

/*
 * Record a rules.c error as ours: its detail starts "FILE:LINE: entry …";
 * make it "FILE:LINE: access: entry …" (or "--access: entry …").
 */
static void rules_error(ward_config *cfg, enum ward_config_layer layer,
			const char *file, unsigned line)
{
	const char *d = ward_error_last();
	size_t flen = file ? strlen(file) : 0;
	unsigned at = line;

	if (file && strncmp(d, file, flen) == 0 && d[flen] == ':') {
		char *end = NULL;
		unsigned long l = strtoul(d + flen + 1, &end, 10);

		if (end && end[0] == ':' && end[1] == ' ') {
			at = (unsigned)l;
			d = end + 2;
		}
	}
	cerr(cfg, layer, file, at, "access", "%s", d);
}

static void resolve_rules(ward_config *cfg,
			  const struct ward_config_options *opts)
{
	static const enum ward_config_layer order[] = {
	    WARD_CONFIG_LAYER_USER, WARD_CONFIG_LAYER_PROJECT,
	    WARD_CONFIG_LAYER_EXPLICIT};
	struct ward_rules_env env = {0};
	int err;

	if (opts && opts->env)
		env = *opts->env;
	env.workspace = cfg->workspace;
	err = ward_rules_new(&cfg->rules);
	if (err) {
		cfg->oom = true;
		return;
	}
	set_from(cfg, K_ACCESS, WARD_CONFIG_LAYER_DEFAULT, NULL);
	/* Without a workspace, relative entries cannot be resolved. */
	if (!cfg->workspace)
		return;
	for (size_t o = 0; o < 3; o++) {
		struct layer *L = &cfg->L[order[o]];

		if (!L->present)
			continue;
		size_t first = ward_rules_count(cfg->rules);

		for (size_t i = 0; i < L->nacc; i++) {
			struct ward_rule_origin ro = {L->file, L->acc[i].line};

			err = L->acc[i].block
				  ? ward_rules_add_text(
					cfg->rules, L->acc[i].text, &env, &ro)
				  : ward_rules_add(cfg->rules, L->acc[i].text,
						   &env, &ro);
			if (err == -ENOMEM)
				cfg->oom = true;
			else if (err)
				rules_error(cfg, order[o], L->file,
					    L->acc[i].line);
		}
		if (L->nacc)
			set_from(cfg, K_ACCESS, order[o], L);
		/* Defence in depth: the parse already refused rw entries in
		 * the project file; make sure none got through. */
		for (size_t i = first; order[o] == WARD_CONFIG_LAYER_PROJECT &&
				       i < ward_rules_count(cfg->rules);
		     i++) {
			struct ward_rule_info in;

			if (ward_rules_get(&in, cfg->rules, i) == 0 &&
			    in.access == WARD_ACCESS_RW)
				cerr(cfg, order[o], L->file, in.origin.line,
				     "access",
				     "entry \"%s\" refused: a project file may "
				     "only narrow the sandbox",
				     in.source);
		}
	}
	for (size_t i = 0; opts && i < opts->access_len; i++) {
		err = ward_rules_add(cfg->rules, opts->access[i], &env, NULL);
		if (err == -ENOMEM)
			cfg->oom = true;
		else if (err)
			cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0, "access",
			     "%s", ward_error_last());
		set_from(cfg, K_ACCESS, WARD_CONFIG_LAYER_FLAGS, NULL);
	}
}

/* The env policy: drop patterns accumulate over the built-in ones and
 * every layer; keep patterns over the user file, --config and flags. */
static void resolve_env(ward_config *cfg,
			const struct ward_config_options *opts)
{
	static const enum ward_config_layer order[] = {
	    WARD_CONFIG_LAYER_USER, WARD_CONFIG_LAYER_PROJECT,
	    WARD_CONFIG_LAYER_EXPLICIT};
	struct ward_strv drop = {0}, keep = {0};

	ward_strv_push_all(&drop, ward_env_default_drop());
	for (size_t o = 0; o < 3; o++) {
		struct layer *L = &cfg->L[order[o]];

		if (!L->present || !L->has[K_ENV])
			continue;
		ward_strv_push_all(&drop, L->env_drop);
		ward_strv_push_all(&keep, L->env_keep);
		set_from(cfg, K_ENV, order[o], L);
	}
	for (size_t i = 0; opts && opts->version >= 2 && i < opts->env_keep_len;
	     i++) {
		char q[128];

		if (!ward_env_pattern_valid(opts->env_keep[i])) {
			cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0, "env-keep",
			     "\"%s\" is not a variable name or pattern "
			     "(letters, digits, _ and the globs * ? [ ])",
			     quote(q, sizeof(q), opts->env_keep[i],
				   strlen(opts->env_keep[i])));
			continue;
		}
		ward_strv_push(&keep, opts->env_keep[i]);
		set_from(cfg, K_ENV, WARD_CONFIG_LAYER_FLAGS, NULL);
	}
	if (ward_strv_finish(&cfg->env_drop, &drop) != 0 ||
	    ward_strv_finish(&cfg->env_keep, &keep) != 0)
		cfg->oom = true;
}

/* Append the patterns of @v not already in @sv. */
static void push_new(struct ward_strv *sv, char *const *v)
{
	for (size_t i = 0; v && v[i]; i++) {
		bool have = false;

		for (size_t j = 0; j < sv->n && !have; j++)
			have = strcmp(sv->v[j], v[i]) == 0;
		if (!have)
			ward_strv_push(sv, v[i]);
	}
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; v && i < n && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/*
 * The network (see ward_config_network): each layer, lowest first, may set
 * it; `network` wins over `allow_domains` within a layer; allowed domains
 * accumulate (user, --config, flags) while the project file only narrows
 * them; denied domains accumulate from every layer.
 */
static void resolve_network(ward_config *cfg,
			    const struct ward_config_options *opts)
{
	static const enum ward_config_layer order[] = {
	    WARD_CONFIG_LAYER_USER, WARD_CONFIG_LAYER_PROJECT,
	    WARD_CONFIG_LAYER_EXPLICIT};
	struct ward_strv allow = {0}, deny = {0};
	char q[128];

	cfg->net_set = false;
	cfg->network = WARD_NETWORK_OFF;
	for (size_t o = 0; o < sizeof(order) / sizeof(order[0]); o++) {
		enum ward_config_layer l = order[o];
		struct layer *L = &cfg->L[l];

		if (!L->present)
			continue;
		push_new(&deny, L->deny);
		if (l == WARD_CONFIG_LAYER_PROJECT) {
			if (L->has[K_NETWORK]) {
				/* Only off gets here: it narrows. */
				cfg->network = L->network;
				cfg->net_set = true;
				set_from(cfg, K_NETWORK, l, L);
				continue;
			}
			if (!L->has[K_ALLOW_DOMAINS])
				continue;
			if (cfg->net_set && cfg->network == WARD_NETWORK_ON) {
				/* From every host to these: narrower. */
				ward_strv_discard(&allow);
				memset(&allow, 0, sizeof(allow));
				push_new(&allow, L->allow);
				cfg->network = WARD_NETWORK_ALLOWLIST;
				set_from(cfg, K_NETWORK, l, L);
				continue;
			}
			for (size_t i = 0; L->allow[i]; i++) {
				if (cfg->net_set &&
				    cfg->network == WARD_NETWORK_ALLOWLIST &&
				    strv_has(allow.v, allow.n, L->allow[i]))
					continue;
				cignore(cfg, L->file, L->line[K_ALLOW_DOMAINS],
					"allow_domains",
					"\"%s\": a project file may only "
					"narrow the sandbox, and no lower "
					"layer allows this domain; allow it "
					"in your user file (%s), with --config "
					"FILE or with --allow-domain",
					quote(q, sizeof(q), L->allow[i],
					      strlen(L->allow[i])),
					cfg->user_hint
					    ? cfg->user_hint
					    : "~/.config/ward/config.yml");
			}
			if (cfg->net_set &&
			    cfg->network == WARD_NETWORK_ALLOWLIST) {
				/* Keep only what both allow. */
				struct ward_strv kept = {0};

				for (size_t i = 0; i < allow.n; i++)
					if (strv_has(L->allow, SIZE_MAX,
						     allow.v[i]))
						ward_strv_push(&kept,
							       allow.v[i]);
				ward_strv_discard(&allow);
				allow = kept;
				if (allow.n == 0)
					cfg->network = WARD_NETWORK_OFF;
				set_from(cfg, K_NETWORK, l, L);
			}
			continue;
		}
		push_new(&allow, L->allow);
		if (L->has[K_NETWORK]) {
			cfg->network = L->network;
			cfg->net_set = true;
			set_from(cfg, K_NETWORK, l, L);
		} else if (L->has[K_ALLOW_DOMAINS] && L->allow[0]) {
			cfg->network = WARD_NETWORK_ALLOWLIST;
			cfg->net_set = true;
			set_from(cfg, K_NETWORK, l, L);
		}
	}
	if (opts && opts->version >= 3) {
		for (size_t i = 0; i < opts->allow_domains_len; i++) {
			const char *d = opts->allow_domains[i];

			if (ward_network_pattern_check(d) != 0) {
				cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				     "allow-domain", "\"%s\": %s",
				     quote(q, sizeof(q), d, strlen(d)),
				     ward_error_last());
				continue;
			}
			push_new(&allow, (char *const[]){(char *)d, NULL});
		}
		if (opts->network) {
			enum ward_network n;

			if (ward_network_parse(&n, opts->network) != 0) {
				cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				     "network",
				     "invalid network \"%s\" (valid: off, on)",
				     quote(q, sizeof(q), opts->network,
					   strlen(opts->network)));
			} else if (opts->allow_domains_len) {
				cerr(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				     "network",
				     "--network %s and --allow-domain "
				     "contradict each other: --allow-domain "
				     "alone gives an allowlist",
				     opts->network);
			} else {
				cfg->network = n;
				cfg->net_set = true;
				set_from(cfg, K_NETWORK,
					 WARD_CONFIG_LAYER_FLAGS, NULL);
			}
		} else if (opts->allow_domains_len) {
			cfg->network = WARD_NETWORK_ALLOWLIST;
			cfg->net_set = true;
			set_from(cfg, K_NETWORK, WARD_CONFIG_LAYER_FLAGS, NULL);
		}
	}
	if (cfg->network == WARD_NETWORK_ALLOWLIST && allow.n == 0)
		cfg->network = WARD_NETWORK_OFF;
	ward_strv_free(cfg->allow);
	ward_strv_free(cfg->deny);
	cfg->allow = cfg->deny = NULL;
	if (ward_strv_finish(&cfg->allow, &allow) != 0 ||
	    ward_strv_finish(&cfg->deny, &deny) != 0)
		cfg->oom = true;
}

static void resolve_warnings(ward_config *cfg)
{
	char o[PATH_MAX + 64];

	if (cfg->sigs && cfg->sigs[0] && !cfg->runner_command)
		cwarn(cfg,
		      "runner_failure_signatures (%s) has no effect without "
		      "runner_command",
		      origin_text(o, sizeof(o), &cfg->from[K_SIGNATURES]));
	if (cfg->runner_command && cfg->nrunners)
		cwarn(cfg,
		      "runners (%s) is ignored: runner_command skips the "
		      "chain and the probe",
		      origin_text(o, sizeof(o), &cfg->from[K_RUNNERS]));
	if (!cfg->protect_git)
		cwarn(cfg,
		      "protect_git is off (%s): the repository's hooks, "
		      "config and the files its config names are writable "
		      "inside the workspace under workspace-write",
		      origin_text(o, sizeof(o), &cfg->from[K_PROTECT_GIT]));
	if (cfg->mode == WARD_MODE_DANGER_FULL_ACCESS &&
	    cfg->from[K_MODE].layer != WARD_CONFIG_LAYER_FLAGS)
		cwarn(cfg,
		      "the default mode is danger-full-access (%s): commands "
		      "run unconfined",
		      origin_text(o, sizeof(o), &cfg->from[K_MODE]));
}

int ward_config_resolve(ward_config *cfg,
			const struct ward_config_options *opts)
{
	/* Every error so far counts: the whole load failed. */
	const struct emark before = {0, 0};

	if (!cfg)
		return ward_err(WARD_EINVAL, "config: NULL argument");
	if (cfg->resolved)
		return ward_err(WARD_EINVAL, "config: already resolved");
	cfg->resolved = true;
	cfg->approval = WARD_APPROVAL_ASK;
	cfg->protect_git = true;
	cfg->sigs = empty_strv;
	for (size_t k = 0; k < K_COUNT; k++)
		set_from(cfg, (enum key)k, WARD_CONFIG_LAYER_DEFAULT, NULL);
	resolve_mode(cfg, opts);
	resolve_workspace(cfg, opts);
	resolve_simple(cfg);
	resolve_presets(cfg);
	resolve_preset_table(cfg);
	resolve_rules(cfg, opts);
	resolve_unprotect(cfg, opts);
	resolve_allow_unix(cfg, opts);
	resolve_env(cfg, opts);
	resolve_network(cfg, opts);
	resolve_warnings(cfg);
	return result(cfg, before);
}

/* --- load --------------------------------------------------------------- */

const char *ward_config_default_user_file(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/ward/config.yml", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.config/ward/config.yml", home);
	else
		return NULL;
	return n > 0 && (size_t)n < len ? buf : NULL;
}

int ward_config_load(ward_config *cfg, const struct ward_config_options *opts)
{
	struct ward_config_options dflt = WARD_CONFIG_OPTIONS_INIT;
	char ubuf[PATH_MAX], *ws = NULL, *real = NULL, *proj = NULL;
	const char *user;
	int err;

	if (!cfg)
		return ward_err(WARD_EINVAL, "config: NULL argument");
	if (!opts)
		opts = &dflt;
	if (opts->version < 1 || opts->version > WARD_CONFIG_OPTIONS_VERSION)
		return ward_bad_version("config options", opts->version,
					WARD_CONFIG_OPTIONS_VERSION);
	user = opts->user_file
		   ? opts->user_file
		   : ward_config_default_user_file(ubuf, sizeof(ubuf));
	if (user && *user && !store(cfg, &cfg->user_hint, user))
		return result(cfg, emark(cfg));
	if (user && *user) {
		err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_USER, user,
					   true);
		if (err == -ENOMEM)
			return err;
	}
	if (opts->config_file) {
		err = ward_config_add_file(cfg, WARD_CONFIG_LAYER_EXPLICIT,
					   opts->config_file, false);
		if (err == -ENOMEM)
			return err;
	}
	if (!opts->no_project_file) {
		/* The project file of the workspace the other layers give. */
		ws = pick_workspace(cfg, opts, false);
		real = ws ? realpath(ws, NULL) : NULL;
		if (real && asprintf(&proj, "%s/.ward/config.yml",
				     strcmp(real, "/") ? real : "") < 0)
			proj = NULL;
		if (proj) {
			err = ward_config_add_file(
			    cfg, WARD_CONFIG_LAYER_PROJECT, proj, true);
			if (err == -ENOMEM)
				goto out_free;
		}
	}
	err = ward_config_resolve(cfg, opts);
out_free:
	free(proj);
	free(real);
	free(ws);
	return err;
}

/* --- the object and accessors ------------------------------------------- */

int ward_config_new(ward_config **out)
{
	ward_config *cfg;

	if (!out)
		return ward_err(WARD_EINVAL, "config: NULL argument");
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return ward_err(-ENOMEM, "config: out of memory");
	cfg->mode = WARD_MODE_DEFAULT;
	cfg->approval = WARD_APPROVAL_ASK;
	cfg->protect_git = true;
	cfg->sigs = empty_strv;
	*out = cfg;
	return 0;
}

void ward_config_free(ward_config *cfg)
{
	if (!cfg)
		return;
	for (size_t l = 0; l < N_LAYERS; l++)
		layer_clear(&cfg->L[l]);
	for (size_t i = 0; i < cfg->nerr; i++)
		free(cfg->err[i].msg);
	free(cfg->err);
	for (size_t i = 0; i < cfg->nwarn; i++)
		free(cfg->warn[i]);
	free(cfg->warn);
	free(cfg->ign);
	ward_strv_free(cfg->env_drop);
	ward_strv_free(cfg->env_keep);
	ward_strv_free(cfg->allow);
	ward_strv_free(cfg->deny);
	free(cfg->user_hint);
	free(cfg->workspace);
	ward_strv_free(cfg->unprotect);
	ward_strv_free(cfg->allow_unix);
	free(cfg->presets);
	ward_presets_free(cfg->table);
	ward_rules_free(cfg->rules);
	free(cfg);
}

const char *ward_config_layer_name(enum ward_config_layer layer)
{
	switch (layer) {
	case WARD_CONFIG_LAYER_DEFAULT:
		return "default";
	case WARD_CONFIG_LAYER_USER:
		return "user";
	case WARD_CONFIG_LAYER_PROJECT:
		return "project";
	case WARD_CONFIG_LAYER_EXPLICIT:
		return "config";
	case WARD_CONFIG_LAYER_FLAGS:
		return "flag";
	}
	return "unknown";
}

size_t ward_config_error_count(const ward_config *cfg)
{
	return cfg ? cfg->nerr : 0;
}

const char *ward_config_error(const ward_config *cfg, size_t i,
			      struct ward_config_origin *origin)
{
	if (!cfg || i >= cfg->nerr)
		return NULL;
	if (origin)
		*origin = cfg->err[i].origin;
	return cfg->err[i].msg;
}

size_t ward_config_warning_count(const ward_config *cfg)
{
	return cfg ? cfg->nwarn : 0;
}

const char *ward_config_warning(const ward_config *cfg, size_t i)
{
	return cfg && i < cfg->nwarn ? cfg->warn[i] : NULL;
}

char *const *ward_config_env_drop(const ward_config *cfg,
				  struct ward_config_origin *from)
{
	if (from)
		*from = cfg ? cfg->from[K_ENV]
			    : (struct ward_config_origin){0, NULL, 0};
	return cfg && cfg->env_drop ? cfg->env_drop : ward_env_default_drop();
}

char *const *ward_config_env_keep(const ward_config *cfg)
{
	return cfg && cfg->env_keep ? cfg->env_keep : empty_strv;
}

int ward_config_env_scrub(char ***out, char ***dropped, const ward_config *cfg,
			  char *const *envp)
{
	return ward_env_scrub(out, dropped, envp,
			      ward_config_env_drop(cfg, NULL),
			      ward_config_env_keep(cfg));
}

size_t ward_config_ignored_count(const ward_config *cfg)
{
	return cfg ? cfg->nign : 0;
}

const char *ward_config_ignored(const ward_config *cfg, size_t i)
{
	return cfg && i < cfg->nign ? cfg->warn[cfg->ign[i]] : NULL;
}

const char *ward_config_file(const ward_config *cfg,
			     enum ward_config_layer layer)
{
	if (!cfg || !file_layer(layer) || !cfg->L[layer].present)
		return NULL;
	return cfg->L[layer].file;
}

static void get_from(const ward_config *cfg, enum key key,
		     struct ward_config_origin *from)
{
	if (from)
		*from = cfg->from[key];
}

enum ward_network ward_config_network(const ward_config *cfg,
				      enum ward_mode mode, bool *set,
				      struct ward_config_origin *from)
{
	get_from(cfg, K_NETWORK, from);
	if (set)
		*set = cfg->net_set;
	return cfg->net_set ? cfg->network : ward_network_default(mode);
}

char *const *ward_config_allow_domains(const ward_config *cfg)
{
	return cfg && cfg->allow ? cfg->allow : empty_strv;
}

char *const *ward_config_deny_domains(const ward_config *cfg)
{
	return cfg && cfg->deny ? cfg->deny : empty_strv;
}

enum ward_mode ward_config_mode(const ward_config *cfg,
				struct ward_config_origin *from)
{
	get_from(cfg, K_MODE, from);
	return cfg->mode;
}

const char *ward_config_workspace(const ward_config *cfg,
				  struct ward_config_origin *from)
{
	get_from(cfg, K_WORKSPACE, from);
	return cfg->workspace;
}

size_t ward_config_runners(const enum ward_runner **out, const ward_config *cfg,
			   struct ward_config_origin *from)
{
	get_from(cfg, K_RUNNERS, from);
	*out = cfg->nrunners ? cfg->runners : NULL;
	return cfg->nrunners;
}

const char *ward_config_runner_command(const ward_config *cfg,
				       struct ward_config_origin *from)
{
	get_from(cfg, K_RUNNER_COMMAND, from);
	return cfg->runner_command;
}

char *const *
ward_config_runner_failure_signatures(const ward_config *cfg,
				      struct ward_config_origin *from)
{
	get_from(cfg, K_SIGNATURES, from);
	return cfg->sigs;
}

unsigned ward_config_probe_timeout_ms(const ward_config *cfg,
				      struct ward_config_origin *from)
{
	get_from(cfg, K_PROBE_TIMEOUT, from);
	return cfg->probe_timeout_ms;
}

enum ward_approval_policy ward_config_approval(const ward_config *cfg,
					       struct ward_config_origin *from)
{
	get_from(cfg, K_APPROVAL, from);
	return cfg->approval;
}

char *const *ward_config_unprotect(const ward_config *cfg,
				   struct ward_config_origin *from)
{
	get_from(cfg, K_UNPROTECT, from);
	return cfg->unprotect ? cfg->unprotect : empty_strv;
}

char *const *ward_config_allow_unix(const ward_config *cfg,
				    struct ward_config_origin *from)
{
	get_from(cfg, K_ALLOW_UNIX, from);
	return cfg->allow_unix ? cfg->allow_unix : empty_strv;
}

bool ward_config_protect_git(const ward_config *cfg,
			     struct ward_config_origin *from)
{
	get_from(cfg, K_PROTECT_GIT, from);
	return cfg->protect_git;
}

size_t ward_config_preset_count(const ward_config *cfg)
{
	return cfg ? cfg->npresets : 0;
}

int ward_config_preset(struct ward_config_preset *out, const ward_config *cfg,
		       size_t i)
{
	if (!out || !cfg)
		return ward_err(WARD_EINVAL, "config: NULL argument");
	if (i >= cfg->npresets)
		return ward_err(-ERANGE, "config: no preset %zu (%zu defined)",
				i, cfg->npresets);
	*out = cfg->presets[i];
	return 0;
}

const ward_presets *ward_config_presets(const ward_config *cfg)
{
	return cfg ? cfg->table : NULL;
}

const ward_rules *ward_config_rules(const ward_config *cfg)
{
	return cfg ? cfg->rules : NULL;
}

void ward_config_provider_options(struct ward_provider_options *opts,
				  const ward_config *cfg)
{
	if (cfg->nrunners) {
		opts->chain = cfg->runners;
		opts->chain_len = cfg->nrunners;
	}
	if (cfg->runner_command) {
		opts->runner_command = cfg->runner_command;
		if (opts->version >= 2 && cfg->sigs && cfg->sigs[0])
			opts->runner_failure_signatures =
			    (const char *const *)cfg->sigs;
	}
	if (cfg->probe_timeout_ms)
		opts->probe_timeout_ms = cfg->probe_timeout_ms;
}

int ward_config_check_confine(const ward_config *cfg)
{
	struct ward_rule_info first;
	char o[PATH_MAX + 64], r[PATH_MAX + 64];

	if (!cfg || !cfg->runner_command || !cfg->rules ||
	    ward_rules_count(cfg->rules) == 0)
		return 0;
	if (ward_rules_get(&first, cfg->rules, 0) != 0)
		return ward_err(WARD_EINVAL, "config: access rules cannot be "
					     "used with runner_command");
	if (first.origin.file)
		snprintf(r, sizeof(r), "%s:%u", first.origin.file,
			 first.origin.line);
	else
		snprintf(r, sizeof(r), "--access");
	return ward_err(
	    WARD_EINVAL,
	    "access rules (the first: \"%s\" from %s) cannot be used with "
	    "runner_command (%s): the custom runner's dialect is unknown, so "
	    "the rules would silently do nothing; remove the rules or the "
	    "runner command",
	    first.source, r,
	    origin_text(o, sizeof(o), &cfg->from[K_RUNNER_COMMAND]));
}

int ward_config_policy_new(ward_policy **out, const ward_config *cfg,
			   enum ward_mode mode)
{
	const char *ws = ward_config_workspace(cfg, NULL);
	ward_policy *p = NULL;
	bool net_set = false;
	enum ward_network net = ward_config_network(cfg, mode, &net_set, NULL);
	int err;

	*out = NULL;
	if (!ws)
		return ward_err(WARD_EINVAL, "no workspace root is configured");
	err = ward_policy_new(&p, mode, ws);
	if (!err)
		err = ward_policy_set_rules(p, ward_config_rules(cfg));
	if (!err)
		err = ward_policy_set_protect_git(
		    p, ward_config_protect_git(cfg, NULL));
	if (!err)
		err = ward_policy_set_unprotected(
		    p, ward_config_unprotect(cfg, NULL));
	if (!err)
		err = ward_policy_set_allow_unix(p,
						 ward_config_allow_unix(cfg, NULL));
	if (!err && net_set)
		err = ward_policy_set_network(p, net,
					      ward_config_allow_domains(cfg),
					      ward_config_deny_domains(cfg));
	if (err) {
		ward_policy_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int ward_config_provider_new(ward_provider **out, const ward_config *cfg,
			     enum ward_runner force)
{
	struct ward_provider_options po = WARD_PROVIDER_OPTIONS_INIT;
	ward_provider *p = NULL;
	int err;

	if (!out || !cfg)
		return ward_err(WARD_EINVAL, "config: missing argument");
	/* Rules with a custom runner would silently do nothing. */
	err = ward_config_check_confine(cfg);
	if (err)
		return err;
	ward_config_provider_options(&po, cfg);
	err = ward_provider_new(&p, &po);
	if (err)
		return err;
	if (force != WARD_RUNNER_NONE) {
		err = ward_provider_force(p, force);
		if (err) {
			ward_provider_free(p);
			return err;
		}
	}
	*out = p;
	return 0;
}

int ward_config_options_init(struct ward_config_options *opts, unsigned version)
{
	const struct ward_config_options init = WARD_CONFIG_OPTIONS_INIT;

	if (!opts)
		return ward_err(WARD_EINVAL, "config options: NULL");
	if (version == 1) {
		/* A version-1 struct ends before env_keep. */
		memcpy(opts, &init,
		       offsetof(struct ward_config_options, env_keep));
		opts->version = 1;
		return 0;
	}
	if (version == 2) {
		/* A version-2 struct ends before allow_unix. */
		memcpy(opts, &init,
		       offsetof(struct ward_config_options, allow_unix));
		opts->version = 2;
		return 0;
	}
	if (version == 3) {
		/* A version-3 struct ends before network. */
		memcpy(opts, &init,
		       offsetof(struct ward_config_options, network));
		opts->version = 3;
		return 0;
	}
	if (version != WARD_CONFIG_OPTIONS_VERSION)
		return ward_bad_version("config options", version,
					WARD_CONFIG_OPTIONS_VERSION);
	*opts = init;
	return 0;
}
