/*
 * ward — the configuration, from bytes to a tree: the errors and warnings
 * every step records ("FILE:LINE: KEY: message"), the YAML tree built from
 * libfyaml's events, and parsing in a child (see config.c for why the tree
 * is ours, and "parsing in a child" below).
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libfyaml.h>

#include "config_internal.h"
#include "internal.h"
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

		ward_cfg_err(
		    cfg, layer, file, de->line > 0 ? (unsigned)de->line : at,
		    NULL, "invalid YAML: %s",
		    ward_cfg_quote(q, sizeof(q), de->msg, strlen(de->msg)));
		return;
	}
	ward_cfg_err(cfg, layer, file, at, NULL, "invalid YAML");
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
	      t ? ward_cfg_quote(q, sizeof(q), t, len) : "?");
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
			      t ? ward_cfg_quote(q, sizeof(q), t, len) : "?");
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
			ward_cfg_err(
			    cfg, layer, file, line_of(text, bad), NULL,
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
		ward_ynode_free(b.root);
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
			ward_ynode_free(kid);
			goto out_free;
		}
	}
	return y;

out_free:
	ward_ynode_free(y);
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
	struct emark before = ward_cfg_emark(cfg);
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
	ward_cfg_err(
	    cfg, layer, file, 0, NULL,
	    "the YAML parser's reply was malformed; the file is refused");
out_free:
	ward_ynode_free(root);
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
		ward_cfg_err(cfg, layer, file, 0, NULL,
			     "cannot start the YAML parser: %s",
			     strerror(errno));
		return NULL;
	}
	pid = fork();
	if (pid < 0) {
		ward_cfg_err(cfg, layer, file, 0, NULL,
			     "cannot start the YAML parser: %s",
			     strerror(errno));
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
		ward_cfg_err(
		    cfg, layer, file, 0, NULL,
		    "the YAML parser did not finish within %d s; the file is "
		    "refused",
		    PARSE_CHILD_MS / 1000);
	} else if (w == pid && WIFSIGNALED(status)) {
		ward_cfg_err(
		    cfg, layer, file, 0, NULL,
		    "the YAML parser crashed on this file (%s, a libfyaml "
		    "bug); the file is refused",
		    strsignal(WTERMSIG(status)));
	} else if (w == pid && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		ward_cfg_err(
		    cfg, layer, file, 0, NULL,
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
struct ynode *ward_cfg_parse_layer(ward_config *cfg,
				   enum ward_config_layer layer,
				   const char *file, const char *text,
				   size_t len, bool *ok)
{
	if (fyaml_in_process)
		return parse_tree(cfg, layer, file, text, len, ok);
	return parse_tree_child(cfg, layer, file, text, len, ok);
}
