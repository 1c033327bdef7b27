/*
 * ward — access rules: `rw <path>`, `r- <path|glob>`, `-- <path|glob>`.
 *
 * Loading (plan): each entry is split into prefix and path, `~/` and
 * `{{ env.NAME }}` are expanded, a relative path is resolved against the
 * workspace, and the result is normalised LEXICALLY (//, /./ and /../
 * collapse; nothing is looked up on disk). Symlinks are deliberately left
 * alone here: the runner and the fs fence resolve the paths they act on and
 * ask about the canonical result; loading never touches the file system,
 * so it is deterministic and cannot race with it. A rule's own path may
 * resolve elsewhere (`-- ~/.ssh` where ~/.ssh is a symlink): the runners
 * act on where it resolves, and ward_rule_aliases_compute() tells the
 * fence the same, per call (it is the one function here that looks).
 *
 * Text that came from a variable, the home directory or the workspace is
 * always literal: a workspace named `proj[1]` must not turn a rule into a
 * bracket expression. A byte mask travels with the expanded path for that.
 *
 * A relative entry is relative to the workspace, globs included (seed 001:
 * relative paths resolve against the session workspace): `-- **\/k.pem`
 * denies k.pem anywhere in the workspace; with a leading '/' added, it
 * denies k.pem anywhere at all.
 * No entry may hold '"': the regex is also written inside Seatbelt's
 * #"…", which cannot contain one.
 *
 * Coverage: a literal entry covers the path and everything below it. A glob
 * covers what it matches and everything below that (its regex ends in
 * `(/.*)?$`), so `-- **\/.ssh` also denies `.ssh/id_rsa`.
 *
 * Matching (apply) must stay cheap with thousands of rules: every literal
 * entry is keyed by its path and every glob by its literal directory prefix
 * in one hash table. A path only needs its ancestors looked up (O(depth)),
 * and only globs hanging off an ancestor are candidates; a literal suffix
 * check ("*.pem" needs ".pem") runs before regexec.
 */
#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <locale.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "glob.h"
#include "libward/internal.h"
#include "protect.h"
#include "util/util.h"

#define FNV_INIT  0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

struct rule {
	enum ward_access access;
	bool is_glob;
	char *pattern; /* literal: the path; glob: the glob, expanded */
	char *prefix;  /* glob: literal directory prefix; literal: NULL */
	char *regex;
	char *source;
	const char *file; /* interned in the set */
	unsigned line;
	/* Globs only. */
	regex_t re;
	bool compiled;
	char *suffix; /* literal tail for the pre-filter; NULL: none */
	size_t suffix_len;
	char *need; /* a longer literal run every match holds; NULL: none */
	size_t need_len;
};

/* A vector of rules with room reserved by a pending commit. */
struct rvec {
	struct rule **v;
	size_t n;
	size_t cap;
	size_t pend;
};

/* One key of the index: a literal path or a glob's literal prefix. */
struct node {
	uint64_t hash;
	size_t len;
	enum ward_access lit; /* strongest literal entry for exactly key */
	struct rvec none;     /* `--` globs with this prefix */
	struct rvec ro;	      /* `r-` globs with this prefix */
	char key[];
};

struct ward_rules {
	struct rule **v;
	size_t n;
	size_t cap;
	struct node **slot; /* open addressing, power of two */
	size_t nslot;
	size_t nnode;
	char **files; /* interned origin file names */
	size_t nfiles;
	size_t capfiles;
	locale_t c_loc; /* regcomp always runs in the C locale */
	/* References: the creator's, plus one per policy that holds it. */
	atomic_uint refs;
};

static void ward_rules_destroy(ward_rules *rules);

/* Where an entry is being parsed, for error messages. */
struct pctx {
	const char *file;
	unsigned line;
	const char *entry; /* trimmed entry text */
	size_t len;
};

/* An expanded path with its literal mask. */
struct xbuf {
	char *s;
	unsigned char *m;
	size_t n;
	size_t cap;
	bool oom;
};

/* --- errors ------------------------------------------------------------ */

/* Quote @s[0..n) for a message: escapes, bounded length. */
static void quote(char *dst, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 8 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= 160) {
			o += (size_t)snprintf(dst + o, size - o, "...");
			break;
		}
		if (c == '"' || c == '\\')
			o += (size_t)snprintf(dst + o, size - o, "\\%c", c);
		else if (c == '\n')
			o += (size_t)snprintf(dst + o, size - o, "\\n");
		else if (c == '\r')
			o += (size_t)snprintf(dst + o, size - o, "\\r");
		else if (c == '\t')
			o += (size_t)snprintf(dst + o, size - o, "\\t");
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(dst + o, size - o, "\\x%02x", c);
		else
			dst[o++] = (char)c;
	}
	dst[o] = '\0';
}

/*
 * Fail the entry: "file:line: entry \"…\": <reason>" (the origin part only
 * as far as it is known). Returns @err.
 */
static int perr(const struct pctx *pc, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(const struct pctx *pc, int err, const char *fmt, ...)
{
	char where[320] = "", q[400], reason[512];
	va_list ap;

	if (pc->file && pc->line)
		snprintf(where, sizeof(where), "%.256s:%u: ", pc->file,
			 pc->line);
	else if (pc->file)
		snprintf(where, sizeof(where), "%.256s: ", pc->file);
	else if (pc->line)
		snprintf(where, sizeof(where), "line %u: ", pc->line);
	quote(q, sizeof(q), pc->entry, pc->len);
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return ward_err(err, "%sentry \"%s\": %s", where, q, reason);
}

/* --- expansion buffer -------------------------------------------------- */

static void xb_put(struct xbuf *xb, const char *s, size_t n, bool literal)
{
	if (xb->oom)
		return;
	if (xb->n + n + 1 > xb->cap) {
		size_t cap = xb->cap ? xb->cap : 256;
		char *p;
		unsigned char *m;

		while (cap < xb->n + n + 1)
			cap *= 2;
		p = realloc(xb->s, cap);
		if (!p) {
			xb->oom = true;
			return;
		}
		xb->s = p;
		m = realloc(xb->m, cap);
		if (!m) {
			xb->oom = true;
			return;
		}
		xb->m = m;
		xb->cap = cap;
	}
	memcpy(xb->s + xb->n, s, n);
	memset(xb->m + xb->n, literal, n);
	xb->n += n;
	xb->s[xb->n] = '\0';
}

static void xb_free(struct xbuf *xb)
{
	free(xb->s);
	free(xb->m);
}

/* --- path helpers ------------------------------------------------------ */

/*
 * Normalise the absolute path @s[0..n) lexically into @d (which may be @s;
 * room for n + 1 bytes): collapse '//', drop '.', let '..' remove the
 * previous component ('/..' is '/'), drop a trailing '/'. @dm/@sm carry the
 * literal mask along (both NULL: no mask). Returns the new length.
 */
static size_t normalise(char *d, unsigned char *dm, const char *s,
			const unsigned char *sm, size_t n)
{
	size_t o = 0, i = 0;

	while (i < n) {
		size_t a, b;

		while (i < n && s[i] == '/')
			i++;
		a = i;
		while (i < n && s[i] != '/')
			i++;
		b = i;
		if (b == a)
			break;
		if (b - a == 1 && s[a] == '.')
			continue;
		if (b - a == 2 && s[a] == '.' && s[a + 1] == '.') {
			while (o > 0 && d[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		if (dm)
			dm[o] = 1;
		d[o++] = '/';
		memmove(d + o, s + a, b - a);
		if (dm)
			memmove(dm + o, sm + a, b - a);
		o += b - a;
	}
	if (o == 0) {
		if (dm)
			dm[0] = 1;
		d[o++] = '/';
	}
	d[o] = '\0';
	return o;
}

/* Whether the absolute @p is already in normal form. */
static bool is_normal(const char *p)
{
	for (size_t i = 0; p[i]; i++) {
		if (p[i] != '/')
			continue;
		if (p[i + 1] == '/' || (p[i + 1] == '\0' && i > 0))
			return false;
		if (p[i + 1] == '.' &&
		    (p[i + 2] == '/' || p[i + 2] == '\0' ||
		     (p[i + 2] == '.' &&
		      (p[i + 3] == '/' || p[i + 3] == '\0'))))
			return false;
	}
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* [A-Za-z_][A-Za-z0-9_]*: no locale, no surprises. */
static bool is_name_char(char c, bool first)
{
	if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return !first && c >= '0' && c <= '9';
}

static const char *lookup_raw(const struct ward_rules_env *env,
			      const char *name)
{
	if (env && env->getenv)
		return env->getenv(env->getenv_ctx, name);
	return getenv(name);
}

/*
 * The XDG base directories with a default in the XDG Base Directory
 * specification, as a suffix of $HOME. The spec says an unset, empty or
 * relative value means the default: stock Debian sets none of them, and a
 * rule such as "rw {{ env.XDG_CACHE_HOME }}" must work there.
 */
static const struct {
	const char *name, *suffix;
} xdg_defaults[] = {
    {"XDG_CONFIG_HOME", "/.config"},
    {"XDG_CACHE_HOME", "/.cache"},
    {"XDG_DATA_HOME", "/.local/share"},
    {"XDG_STATE_HOME", "/.local/state"},
};

/*
 * A variable's value for a rule: the environment's, or for an XDG base
 * directory without a usable value its default under the home directory
 * (written into @buf). NULL: unset (and no default).
 */
static const char *lookup_env_buf(const struct ward_rules_env *env,
				  const char *name, char *buf, size_t len)
{
	const char *v = lookup_raw(env, name), *home;

	for (size_t i = 0; i < sizeof(xdg_defaults) / sizeof(*xdg_defaults);
	     i++) {
		if (strcmp(name, xdg_defaults[i].name) != 0)
			continue;
		if (v && v[0] == '/')
			return v;
		home = env && env->home ? env->home : lookup_raw(env, "HOME");
		if (!home || home[0] != '/')
			return v && *v ? v : NULL;
		if ((size_t)snprintf(buf, len, "%s%s",
				     strcmp(home, "/") ? home : "",
				     xdg_defaults[i].suffix) >= len)
			return NULL;
		return buf;
	}
	return v;
}

static bool has_control(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	}
	return false;
}

/*
 * Put the value of variable @name, referred to as @how ("{{ env.X }}",
 * "$X", "${X}"), into @xb (literal). Unset or empty is an error naming the
 * entry's file and line: a rule that silently named another path would
 * protect nothing.
 */
static int put_var(struct xbuf *xb, const struct pctx *pc, const char *name,
		   const char *how, const struct ward_rules_env *env)
{
	char buf[PATH_MAX];
	const char *val = lookup_env_buf(env, name, buf, sizeof(buf));

	if (!val)
		return perr(pc, WARD_EINVAL, "%s: %s is not set", how, name);
	if (!*val)
		return perr(pc, WARD_EINVAL, "%s: %s is empty", how, name);
	if (has_control(val))
		return perr(pc, WARD_EINVAL,
			    "%s: the value of %s holds a control character",
			    how, name);
	xb_put(xb, val, strlen(val), true);
	return 0;
}

/*
 * A shell-style reference at @p[i] (p[i] == '$'): "$NAME" or "${NAME}"
 * expands like "{{ env.NAME }}"; "$$" is one literal '$'. Anything else
 * after a '$' is an error with a hint, never a literal path: "-- $HOME/x"
 * taken literally would protect a directory named "$HOME" in the
 * workspace. Returns the bytes consumed (> 0), or an error (< 0).
 */
static long expand_dollar(struct xbuf *xb, const struct pctx *pc, const char *p,
			  size_t n, size_t i, const struct ward_rules_env *env)
{
	char name[256], how[300];
	size_t a = i + 1, b;
	bool braced;
	int err;

	if (a < n && p[a] == '$') {
		xb_put(xb, "$", 1, true);
		return 2;
	}
	braced = a < n && p[a] == '{';
	if (braced)
		a++;
	for (b = a; b < n && is_name_char(p[b], b == a); b++)
		;
	if (b == a || b - a >= sizeof(name) ||
	    (braced && (b >= n || p[b] != '}')))
		return perr(pc, WARD_EINVAL,
			    "\"$\" must start a variable ($NAME, ${NAME} or "
			    "{{ env.NAME }}); write \"$$\" for a literal "
			    "\"$\"");
	memcpy(name, p + a, b - a);
	name[b - a] = '\0';
	snprintf(how, sizeof(how), braced ? "${%s}" : "$%s", name);
	err = put_var(xb, pc, name, how, env);
	if (err)
		return err;
	return (long)(b + (braced ? 1 : 0) - i);
}

/*
 * Expand `{{ env.NAME }}`, `$NAME` and `${NAME}` in @p[0..n) into @xb
 * (values literal). Returns 0 or an error (detail set).
 */
static int expand_templates(struct xbuf *xb, const struct pctx *pc,
			    const char *p, size_t n,
			    const struct ward_rules_env *env)
{
	size_t i = 0;

	while (i < n) {
		size_t a, b, e, name_at, name_len;
		const char *close = NULL;
		char name[256], how[300];
		long used;
		int err;

		if (p[i] == '$') {
			used = expand_dollar(xb, pc, p, n, i, env);
			if (used < 0)
				return (int)used;
			i += (size_t)used;
			continue;
		}
		if (!(p[i] == '{' && i + 1 < n && p[i + 1] == '{')) {
			xb_put(xb, p + i, 1, false);
			i++;
			continue;
		}
		for (size_t k = i + 2; k + 1 < n; k++) {
			if (p[k] == '}' && p[k + 1] == '}') {
				close = p + k;
				break;
			}
		}
		if (!close)
			return perr(pc, WARD_EINVAL,
				    "unterminated \"{{\" (expected "
				    "{{ env.NAME }})");
		e = (size_t)(close - p);
		a = i + 2;
		b = e;
		while (a < b && is_blank(p[a]))
			a++;
		while (b > a && is_blank(p[b - 1]))
			b--;
		name_at = a + 4;
		name_len = b > name_at ? b - name_at : 0;
		if (b - a < 4 || memcmp(p + a, "env.", 4) != 0 ||
		    name_len == 0 || name_len >= sizeof(name) ||
		    !is_name_char(p[name_at], true))
			goto bad_template;
		for (size_t k = name_at; k < b; k++) {
			if (!is_name_char(p[k], false))
				goto bad_template;
		}
		memcpy(name, p + name_at, name_len);
		name[name_len] = '\0';
		snprintf(how, sizeof(how), "{{ env.%s }}", name);
		err = put_var(xb, pc, name, how, env);
		if (err)
			return err;
		i = e + 2;
		continue;
	bad_template:
		return perr(pc, WARD_EINVAL,
			    "unsupported template \"%.*s\" (expected "
			    "{{ env.NAME }})",
			    (int)(e + 2 - i > 100 ? 100 : e + 2 - i), p + i);
	}
	return 0;
}

/* --- rules ------------------------------------------------------------- */

static void rule_free(struct rule *r)
{
	if (!r)
		return;
	if (r->compiled)
		regfree(&r->re);
	free(r->pattern);
	free(r->prefix);
	free(r->regex);
	free(r->source);
	free(r->suffix);
	free(r->need);
	free(r);
}

/* The glob text for display: literal metacharacters bracketed. */
static char *glob_display(const char *s, const unsigned char *m, size_t n)
{
	char *out = malloc(n * 3 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (m[i] && (s[i] == '*' || s[i] == '?' || s[i] == '[')) {
			*o++ = '[';
			*o++ = s[i];
			*o++ = ']';
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

static const char *intern_file(ward_rules *rules, const char *file)
{
	char *copy;

	if (!file)
		return NULL;
	if (rules->nfiles && strcmp(rules->files[rules->nfiles - 1], file) == 0)
		return rules->files[rules->nfiles - 1];
	if (rules->nfiles == rules->capfiles) {
		size_t cap = rules->capfiles ? rules->capfiles * 2 : 4;
		char **v = realloc(rules->files, cap * sizeof(*v));

		if (!v)
			return NULL;
		rules->files = v;
		rules->capfiles = cap;
	}
	copy = strdup(file);
	if (!copy)
		return NULL;
	rules->files[rules->nfiles++] = copy;
	return copy;
}

/* Compile @re for in-process matching, in the C locale. */
static int compile(ward_rules *rules, const struct pctx *pc, regex_t *out,
		   const char *re)
{
	locale_t old = uselocale(rules->c_loc);
	int err = regcomp(out, re, REG_EXTENDED | REG_NOSUB);
	char msg[128];

	uselocale(old);
	if (!err)
		return 0;
	regerror(err, out, msg, sizeof(msg));
	if (err == REG_ESPACE)
		return perr(pc, -ENOMEM, "regcomp: %s", msg);
	return perr(pc, WARD_EINVAL, "regcomp: %s (regex %.200s)", msg, re);
}

/*
 * Parse one trimmed, non-empty entry @pc->entry into a new rule. Returns 0
 * and *out (owned by the caller), or an error with the detail set.
 */
/* Whether @path names something that exists (a link itself counts). */
static bool path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static int parse_entry(struct rule **out, ward_rules *rules,
		       const struct pctx *pc, const struct ward_rules_env *env)
{
	const char *e = pc->entry, *path, *why = NULL;
	size_t n = pc->len, tok, plen, at = 0, pfx, sfx, sfx_len, run, run_len;
	struct xbuf xb = {0};
	struct rule *r = NULL;
	enum ward_access access;
	bool magic = false, literal_too = false;
	int err;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)e[i];

		if (c == '\n')
			return perr(pc, WARD_EINVAL,
				    "holds a newline (one entry per call; "
				    "use ward_rules_add_text for several)");
		if (c == '\r')
			return perr(pc, WARD_EINVAL,
				    "holds a carriage return (CRLF line "
				    "endings?)");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return perr(pc, WARD_EINVAL,
				    "holds control character 0x%02x", c);
	}

	for (tok = 0; tok < n && !is_blank(e[tok]); tok++)
		;
	if (tok == 2 && memcmp(e, "rw", 2) == 0)
		access = WARD_ACCESS_RW;
	else if (tok == 2 && memcmp(e, "r-", 2) == 0)
		access = WARD_ACCESS_RO;
	else if (tok == 2 && memcmp(e, "--", 2) == 0)
		access = WARD_ACCESS_NONE;
	else if (e[0] == '/' || e[0] == '~' || e[0] == '.' || e[0] == '{' ||
		 e[0] == '$')
		return perr(pc, WARD_EINVAL,
			    "missing prefix (expected rw, r- or -- before "
			    "the path)");
	else
		return perr(pc, WARD_EINVAL,
			    "unknown prefix \"%.*s\" (expected rw, r- or --)",
			    (int)(tok > 40 ? 40 : tok), e);
	path = e + tok;
	while (path < e + n && is_blank(*path))
		path++;
	plen = (size_t)(e + n - path);
	if (plen == 0)
		return perr(pc, WARD_EINVAL, "prefix \"%.2s\" without a path",
			    e);

	/* ~/ first (only at the start), then templates, then the workspace. */
	if (path[0] == '~') {
		const char *home =
		    env && env->home ? env->home : lookup_raw(env, "HOME");

		if (plen > 1 && path[1] != '/')
			return perr(pc, WARD_EINVAL,
				    "only \"~/\" is supported, not \"~user\"");
		if (!home || !*home)
			return perr(pc, WARD_EINVAL,
				    "\"~/\" needs a home directory, and "
				    "neither the rules' home nor $HOME is set");
		if (home[0] != '/' || has_control(home))
			return perr(pc, WARD_EINVAL,
				    "home directory \"%.200s\" is not an "
				    "absolute path",
				    home);
		xb_put(&xb, home, strlen(home), true);
		xb_put(&xb, "/", 1, false);
		path++;
		plen--;
	}
	err = expand_templates(&xb, pc, path, plen, env);
	if (err)
		goto out_free_xb;
	if (xb.oom)
		goto out_oom;
	/* Blanks around a template's name are syntax; elsewhere a tab is not. */
	if (memchr(xb.s, '\t', xb.n)) {
		err = perr(pc, WARD_EINVAL, "a tab inside the path");
		goto out_free_xb;
	}
	if (xb.s[0] != '/') {
		const char *ws = env ? env->workspace : NULL;
		struct xbuf rel = xb;

		if (!ws) {
			err = perr(pc, WARD_EINVAL,
				   "relative path \"%.200s\" needs a workspace "
				   "and none was given",
				   xb.s);
			goto out_free_xb;
		}
		if (ws[0] != '/' || has_control(ws)) {
			err = perr(pc, WARD_EINVAL,
				   "workspace \"%.200s\" is not an absolute "
				   "path",
				   ws);
			goto out_free_xb;
		}
		memset(&xb, 0, sizeof(xb));
		xb_put(&xb, ws, strlen(ws), true);
		xb_put(&xb, "/", 1, false);
		for (size_t i = 0; i < rel.n; i++)
			xb_put(&xb, rel.s + i, 1, rel.m[i]);
		xb_free(&rel);
		if (xb.oom)
			goto out_oom;
	}

	for (size_t i = 0; i < xb.n && !magic; i++)
		magic = ward_glob_is_magic(xb.s, xb.m, i);
	/*
	 * Check the glob before normalising: '..' could otherwise swallow a
	 * malformed bracket ("/a/[x/../y]" would become the path "/a/y]").
	 */
	if (magic) {
		err = ward_glob_translate(NULL, xb.s, xb.n, xb.m,
					  WARD_GLOB_CHECK, &why, &at);
		if (err == WARD_EINVAL)
			err =
			    perr(pc, err, "bad glob \"%.200s\": %s", xb.s, why);
		if (err)
			goto out_free_xb;
	}
	xb.n = normalise(xb.s, xb.m, xb.s, xb.m, xb.n);
	if (xb.n >= PATH_MAX) {
		err = perr(pc, WARD_EINVAL,
			   "path too long (%zu bytes; the limit is %d)", xb.n,
			   PATH_MAX - 1);
		goto out_free_xb;
	}
	magic = false;
	for (size_t i = 0; i < xb.n && !magic; i++)
		magic = ward_glob_is_magic(xb.s, xb.m, i);
	/*
	 * A pattern whose text names an existing path literally
	 * ("/x/secret[1]/key.pem" that exists as such) covers that path too:
	 * an `rw` root is that path (a root is never a pattern), an `r-` or
	 * `--` rule covers both the path and what the glob matches (never
	 * fewer paths than either reading: a file named "*.pem" made to
	 * exist must not turn `-- *.pem` into a rule for that file alone).
	 */
	if (magic && path_exists(xb.s)) {
		if (access == WARD_ACCESS_RW) {
			memset(xb.m, 1, xb.n);
			magic = false;
		} else {
			literal_too = true;
		}
	}
	if (magic && access == WARD_ACCESS_RW) {
		err = perr(pc, WARD_EINVAL,
			   "rw takes a concrete path, not a glob (a writable "
			   "root cannot be a pattern)");
		goto out_free_xb;
	}

	r = calloc(1, sizeof(*r));
	if (!r)
		goto out_oom;
	r->access = access;
	r->is_glob = magic;
	r->line = pc->line;
	if (pc->file) {
		r->file = intern_file(rules, pc->file);
		if (!r->file)
			goto out_oom;
	}
	r->source = strndup(pc->entry, pc->len);
	if (!r->source)
		goto out_oom;
	if (!magic)
		memset(xb.m, 1, xb.n);
	err = ward_glob_translate(&r->regex, xb.s, xb.n, xb.m,
				  WARD_GLOB_SUBTREE, &why, &at);
	if (err == WARD_EINVAL)
		err = perr(pc, err, "bad path \"%.200s\": %s", xb.s, why);
	if (!err && literal_too) {
		/* The glob's matches, or the path itself (and below). */
		char *lit = NULL, *both = NULL;
		unsigned char *m = malloc(xb.n ? xb.n : 1);

		if (!m)
			goto out_oom;
		memset(m, 1, xb.n);
		err = ward_glob_translate(&lit, xb.s, xb.n, m,
					  WARD_GLOB_SUBTREE, &why, &at);
		free(m);
		if (err == WARD_EINVAL)
			err = perr(pc, err, "bad path \"%.200s\": %s", xb.s,
				   why);
		if (!err && asprintf(&both, "%s|%s", r->regex, lit) < 0) {
			free(lit);
			goto out_oom;
		}
		free(lit);
		if (!err) {
			free(r->regex);
			r->regex = both;
		}
	}
	if (err)
		goto out_free_rule;
	if (!magic) {
		r->pattern = strdup(xb.s);
		if (!r->pattern)
			goto out_oom;
		goto out_done;
	}
	r->pattern = glob_display(xb.s, xb.m, xb.n);
	pfx = ward_glob_prefix_len(xb.s, xb.n, xb.m);
	r->prefix = strndup(xb.s, pfx);
	sfx = ward_glob_suffix(xb.s, xb.n, xb.m, &sfx_len);
	if (!r->pattern || !r->prefix)
		goto out_oom;
	if (sfx_len) {
		r->suffix = strndup(xb.s + sfx, sfx_len);
		if (!r->suffix)
			goto out_oom;
		r->suffix_len = sfx_len;
	}
	run = ward_glob_longest_run(xb.s, xb.n, xb.m, pfx, &run_len);
	if (run_len > sfx_len && run_len >= 2) {
		r->need = strndup(xb.s + run, run_len);
		if (!r->need)
			goto out_oom;
		r->need_len = run_len;
	}
	err = compile(rules, pc, &r->re, r->regex);
	if (err)
		goto out_free_rule;
	r->compiled = true;
out_done:
	xb_free(&xb);
	*out = r;
	return 0;
out_oom:
	err = perr(pc, -ENOMEM, "out of memory");
out_free_rule:
	rule_free(r);
out_free_xb:
	xb_free(&xb);
	return err;
}

/* --- index ------------------------------------------------------------- */

static uint64_t fnv(const char *s, size_t n)
{
	uint64_t h = FNV_INIT;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
	return h;
}

static struct node *lookup(const ward_rules *rules, uint64_t h, const char *key,
			   size_t len)
{
	size_t mask = rules->nslot - 1;

	if (!rules->nslot)
		return NULL;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct node *nd = rules->slot[i];

		if (!nd)
			return NULL;
		if (nd->hash == h && nd->len == len &&
		    memcmp(nd->key, key, len) == 0)
			return nd;
	}
}

static void place(struct node **slot, size_t nslot, struct node *nd)
{
	size_t i = (size_t)nd->hash & (nslot - 1);

	while (slot[i])
		i = (i + 1) & (nslot - 1);
	slot[i] = nd;
}

/* The node for @key, created empty when missing. NULL: out of memory. */
static struct node *node_get(ward_rules *rules, const char *key)
{
	size_t len = strlen(key);
	uint64_t h = fnv(key, len);
	struct node *nd = lookup(rules, h, key, len);

	if (nd)
		return nd;
	if ((rules->nnode + 1) * 2 > rules->nslot) {
		size_t nslot = rules->nslot ? rules->nslot * 2 : 64;
		struct node **slot = calloc(nslot, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t i = 0; i < rules->nslot; i++) {
			if (rules->slot[i])
				place(slot, nslot, rules->slot[i]);
		}
		free(rules->slot);
		rules->slot = slot;
		rules->nslot = nslot;
	}
	nd = calloc(1, sizeof(*nd) + len + 1);
	if (!nd)
		return NULL;
	nd->hash = h;
	nd->len = len;
	memcpy(nd->key, key, len + 1);
	place(rules->slot, rules->nslot, nd);
	rules->nnode++;
	return nd;
}

static bool rvec_reserve(struct rvec *rv)
{
	if (rv->n + rv->pend + 1 > rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 4;
		struct rule **v = realloc(rv->v, cap * sizeof(*v));

		if (!v)
			return false;
		rv->v = v;
		rv->cap = cap;
	}
	rv->pend++;
	return true;
}

static const char *index_key(const struct rule *r)
{
	return r->is_glob ? r->prefix : r->pattern;
}

static struct rvec *index_vec(struct node *nd, const struct rule *r)
{
	if (!r->is_glob)
		return NULL;
	return r->access == WARD_ACCESS_NONE ? &nd->none : &nd->ro;
}

/*
 * Add the parsed @batch to @rules, all or nothing: everything that can fail
 * (growing arrays, creating index nodes) happens first; then the commit
 * cannot fail. Empty nodes left behind by a failure are harmless. On
 * success the rules belong to the set; on failure they stay the caller's.
 */
static int commit(ward_rules *rules, struct rule **batch, size_t nb)
{
	size_t i;

	if (rules->n + nb > rules->cap) {
		size_t cap = rules->cap ? rules->cap : 16;
		struct rule **v;

		while (cap < rules->n + nb)
			cap *= 2;
		v = realloc(rules->v, cap * sizeof(*v));
		if (!v)
			return ward_err(-ENOMEM, "rules: out of memory");
		rules->v = v;
		rules->cap = cap;
	}
	for (i = 0; i < nb; i++) {
		struct node *nd = node_get(rules, index_key(batch[i]));
		struct rvec *rv;

		if (!nd)
			goto out_unreserve;
		rv = index_vec(nd, batch[i]);
		if (rv && !rvec_reserve(rv))
			goto out_unreserve;
	}
	for (i = 0; i < nb; i++) {
		struct rule *r = batch[i];
		const char *key = index_key(r);
		size_t len = strlen(key);
		struct node *nd = lookup(rules, fnv(key, len), key, len);
		struct rvec *rv = index_vec(nd, r);

		if (rv) {
			rv->v[rv->n++] = r;
			rv->pend--;
		} else if (r->access > nd->lit) {
			nd->lit = r->access;
		}
		rules->v[rules->n++] = r;
	}
	return 0;
out_unreserve:
	for (size_t k = 0; k < i; k++) {
		const char *key = index_key(batch[k]);
		size_t len = strlen(key);
		struct node *nd = lookup(rules, fnv(key, len), key, len);
		struct rvec *rv = index_vec(nd, batch[k]);

		if (rv)
			rv->pend = 0;
	}
	return ward_err(-ENOMEM, "rules: out of memory");
}

/* --- matching ---------------------------------------------------------- */

/*
 * Cheap necessary conditions before regexec. The glob's literal tail must
 * end a component of @path ("…/x.pem" or "…/x.pem/…"): the regex matches
 * @path or one of its ancestors, and such a match ends with the tail. Its
 * longest literal run must appear somewhere in @path.
 */
static bool suffix_ok(const struct rule *r, const char *path, size_t plen)
{
	const char *p = path, *end = path + plen;

	if (r->need && !memmem(path, plen, r->need, r->need_len))
		return false;
	if (!r->suffix)
		return true;
	while ((p = memmem(p, (size_t)(end - p), r->suffix, r->suffix_len))) {
		const char *after = p + r->suffix_len;

		if (after == end || *after == '/')
			return true;
		p++;
	}
	return false;
}

static bool any_match(const struct rvec *rv, const char *path, size_t plen)
{
	for (size_t i = 0; i < rv->n; i++) {
		const struct rule *r = rv->v[i];

		if (suffix_ok(r, path, plen) &&
		    regexec(&r->re, path, 0, NULL, 0) == 0)
			return true;
	}
	return false;
}

/*
 * One walk over the ancestors of @path ("/", "/a", "/a/b", …, @path):
 * @pass 0 folds literal entries and `--` globs, @pass 1 tries `r-` globs.
 * Returns the access found (DEFAULT: none), *ro_pending when pass 1 has
 * candidates. FNV-1a is incremental, so each prefix costs one lookup.
 */
static enum ward_access walk(const ward_rules *rules, const char *path,
			     size_t plen, int pass, bool *ro_pending)
{
	enum ward_access best = WARD_ACCESS_DEFAULT;
	uint64_t h = (FNV_INIT ^ (unsigned char)'/') * FNV_PRIME;

	for (size_t j = 1;; j++) {
		char c = path[j];
		const struct node *nd = NULL;

		/* The root is path[0..1); every other ancestor ends at j. */
		if (j == 1 || c == '/' || c == '\0')
			nd = lookup(rules, h, path, j);
		if (nd && pass == 0) {
			if (nd->lit > best)
				best = nd->lit;
			if (best == WARD_ACCESS_NONE ||
			    any_match(&nd->none, path, plen))
				return WARD_ACCESS_NONE;
			if (nd->ro.n)
				*ro_pending = true;
		} else if (nd && pass == 1 && any_match(&nd->ro, path, plen)) {
			return WARD_ACCESS_RO;
		}
		if (c == '\0')
			break;
		h = (h ^ (unsigned char)c) * FNV_PRIME;
	}
	return best;
}

/* --- exported ---------------------------------------------------------- */

int ward_rules_new(ward_rules **out)
{
	ward_rules *rules;

	if (!out)
		return ward_err(WARD_EINVAL, "rules: NULL argument");
	rules = calloc(1, sizeof(*rules));
	if (!rules)
		return ward_err(-ENOMEM, "rules: out of memory");
	rules->c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!rules->c_loc) {
		free(rules);
		return ward_err(-ENOMEM, "rules: cannot create the C locale");
	}
	atomic_init(&rules->refs, 1);
	*out = rules;
	return 0;
}

const ward_rules *ward_rules_ref(const ward_rules *rules)
{
	/* The count is not part of what the rules say: a const rule set
	 * may be shared. */
	if (rules)
		atomic_fetch_add(&((ward_rules *)rules)->refs, 1);
	return rules;
}

void ward_rules_unref(const ward_rules *rules)
{
	ward_rules *r = (ward_rules *)rules;

	if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	ward_rules_destroy(r);
}

void ward_rules_free(ward_rules *rules)
{
	ward_rules_unref(rules);
}

static void ward_rules_destroy(ward_rules *rules)
{
	for (size_t i = 0; i < rules->n; i++)
		rule_free(rules->v[i]);
	free(rules->v);
	for (size_t i = 0; i < rules->nslot; i++) {
		struct node *nd = rules->slot[i];

		if (!nd)
			continue;
		free(nd->none.v);
		free(nd->ro.v);
		free(nd);
	}
	free(rules->slot);
	for (size_t i = 0; i < rules->nfiles; i++)
		free(rules->files[i]);
	free(rules->files);
	freelocale(rules->c_loc);
	free(rules);
}

/* Trim blanks around @s[0..*n); returns the new start. */
static const char *trim(const char *s, size_t *n)
{
	while (*n && is_blank(*s)) {
		s++;
		(*n)--;
	}
	while (*n && is_blank(s[*n - 1]))
		(*n)--;
	return s;
}

int ward_rules_add(ward_rules *rules, const char *entry,
		   const struct ward_rules_env *env,
		   const struct ward_rule_origin *origin)
{
	struct pctx pc = {0};
	struct rule *r = NULL;
	size_t n;
	int err;

	if (!rules || !entry)
		return ward_err(WARD_EINVAL, "rules: NULL argument");
	n = strlen(entry);
	pc.file = origin ? origin->file : NULL;
	pc.line = origin ? origin->line : 0;
	pc.entry = trim(entry, &n);
	pc.len = n;
	if (n == 0)
		return perr(&pc, WARD_EINVAL,
			    "empty entry (expected rw, r- or -- and a path)");
	err = parse_entry(&r, rules, &pc, env);
	if (err)
		return err;
	err = commit(rules, &r, 1);
	if (err)
		rule_free(r);
	return err;
}

int ward_rules_add_text(ward_rules *rules, const char *text,
			const struct ward_rules_env *env,
			const struct ward_rule_origin *origin)
{
	struct rule **batch = NULL;
	size_t nb = 0, cap = 0;
	unsigned line;
	const char *p;
	int err = 0;

	if (!rules || !text)
		return ward_err(WARD_EINVAL, "rules: NULL argument");
	line = origin && origin->line ? origin->line : 1;
	for (p = text; *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		struct pctx pc = {.file = origin ? origin->file : NULL,
				  .line = line};
		struct rule *r;

		pc.entry = trim(p, &n);
		pc.len = n;
		p = nl ? nl + 1 : p + strlen(p);
		if (n == 0)
			continue;
		if (nb == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct rule **v = realloc(batch, ncap * sizeof(*v));

			if (!v) {
				err = ward_err(-ENOMEM, "rules: out of memory");
				goto out_free_batch;
			}
			batch = v;
			cap = ncap;
		}
		err = parse_entry(&r, rules, &pc, env);
		if (err)
			goto out_free_batch;
		batch[nb++] = r;
	}
	err = commit(rules, batch, nb);
	if (!err) {
		free(batch);
		return 0;
	}
out_free_batch:
	for (size_t i = 0; i < nb; i++)
		rule_free(batch[i]);
	free(batch);
	return err;
}

size_t ward_rules_count(const ward_rules *rules)
{
	return rules ? rules->n : 0;
}

int ward_rules_get(struct ward_rule_info *out, const ward_rules *rules,
		   size_t i)
{
	const struct rule *r;

	if (!out || !rules)
		return ward_err(WARD_EINVAL, "rules: NULL argument");
	if (i >= rules->n)
		return ward_err(-ERANGE, "rules: no entry %zu (%zu loaded)", i,
				rules->n);
	r = rules->v[i];
	out->access = r->access;
	out->pattern = r->pattern;
	out->is_glob = r->is_glob;
	out->literal_prefix = r->is_glob ? r->prefix : r->pattern;
	out->regex = r->regex;
	out->source = r->source;
	out->origin.file = r->file;
	out->origin.line = r->line;
	return 0;
}

/* Whether entry @r covers the normal absolute @path. */
static bool covers(const struct rule *r, const char *path)
{
	size_t n;

	if (r->is_glob)
		return r->compiled && regexec(&r->re, path, 0, NULL, 0) == 0;
	n = strlen(r->pattern);
	if (strcmp(r->pattern, "/") == 0)
		return true;
	return strncmp(path, r->pattern, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0');
}

int ward_rules_find(size_t *index, const ward_rules *rules, const char *path)
{
	char buf[PATH_MAX];
	enum ward_access want = ward_rules_match(rules, path);
	size_t plen;
	locale_t old;
	int err = -ENOENT;

	if (!index || !rules || !path || path[0] != '/')
		return ward_err(WARD_EINVAL, "rules: invalid argument");
	if (want == WARD_ACCESS_DEFAULT)
		return -ENOENT;
	plen = strlen(path);
	if (!is_normal(path)) {
		if (plen >= sizeof(buf))
			return -ENOENT;
		normalise(buf, NULL, path, NULL, plen);
		path = buf;
	}
	/* The first entry of the kind that decided (load order: the one
	 * `ward config check` lists first). */
	old = uselocale(rules->c_loc);
	for (size_t i = 0; i < rules->n; i++) {
		if (rules->v[i]->access == want && covers(rules->v[i], path)) {
			*index = i;
			err = 0;
			break;
		}
	}
	uselocale(old);
	return err;
}

/*
 * A path that is not absolute is a caller bug; answer `--` so a bug fails
 * closed. A path that is not normalised is normalised first (a lexical
 * `/ws/../secret` must not slip past `-- /secret`).
 */
enum ward_access ward_rules_match(const ward_rules *rules, const char *path)
{
	char buf[PATH_MAX];
	enum ward_access best;
	bool ro_pending = false;
	locale_t old;
	size_t plen;

	if (!rules)
		return WARD_ACCESS_DEFAULT;
	if (!path || path[0] != '/')
		return WARD_ACCESS_NONE;
	if (rules->n == 0)
		return WARD_ACCESS_DEFAULT;
	plen = strlen(path);
	if (!is_normal(path)) {
		if (plen >= sizeof(buf))
			return WARD_ACCESS_NONE;
		plen = normalise(buf, NULL, path, NULL, plen);
		path = buf;
	}
	/*
	 * regexec too must run in the C locale: some libcs (musl) decide what
	 * a bracket or `.` matches by the locale in force at match time, so a
	 * caller's UTF-8 locale could make a deny rule miss a path that is
	 * not valid UTF-8.
	 */
	old = uselocale(rules->c_loc);
	best = walk(rules, path, plen, 0, &ro_pending);
	if (best < WARD_ACCESS_RO && ro_pending &&
	    walk(rules, path, plen, 1, &ro_pending) == WARD_ACCESS_RO)
		best = WARD_ACCESS_RO;
	uselocale(old);
	return best;
}

void ward_rule_aliases_free(struct ward_rule_alias *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].key);
		free(v[i].canon);
	}
	free(v);
}

int ward_rule_aliases_compute(struct ward_rule_alias **out, size_t *out_len,
			      const ward_rules *rules)
{
	struct ward_rule_alias *v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	*out_len = 0;
	for (size_t i = 0; rules && i < rules->n; i++) {
		const struct rule *r = rules->v[i];
		const char *key = index_key(r);
		bool seen = false;
		char *canon;

		if (r->access != WARD_ACCESS_RO &&
		    r->access != WARD_ACCESS_NONE)
			continue;
		for (size_t j = 0; j < n && !seen; j++)
			seen = strcmp(v[j].key, key) == 0;
		if (seen)
			continue;
		canon = util_path_canon(key);
		if (!canon)
			goto out_oom;
		if (strcmp(canon, key) == 0) {
			free(canon);
			continue;
		}
		if (n == cap) {
			struct ward_rule_alias *nv;

			cap = cap ? cap * 2 : 4;
			nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				free(canon);
				goto out_oom;
			}
			v = nv;
		}
		v[n].canon = canon;
		v[n].key = strdup(key);
		n++;
		if (!v[n - 1].key)
			goto out_oom;
	}
	*out = v;
	*out_len = n;
	return 0;
out_oom:
	ward_rule_aliases_free(v, n);
	return ward_err(-ENOMEM, "rules: out of memory");
}

enum ward_access ward_rules_match_key(const ward_rules *rules, const char *key,
				      const char *canon, const char *path)
{
	char buf[PATH_MAX];
	size_t klen = strlen(key), clen = strlen(canon), rlen, plen;
	enum ward_access best = WARD_ACCESS_DEFAULT;
	const struct node *nd;
	const char *rest;
	locale_t old;

	if (!rules || !util_path_within(path, canon))
		return WARD_ACCESS_DEFAULT;
	nd = lookup(rules, fnv(key, klen), key, klen);
	if (!nd)
		return WARD_ACCESS_DEFAULT;
	/* The same path beneath the key: the key, then what follows the
	 * canonical path ("" or "/…"). */
	rest = strcmp(canon, "/") == 0 ? path : path + clen;
	rlen = strlen(rest);
	if (strcmp(key, "/") == 0)
		klen = 0;
	if (klen + rlen + 2 >= sizeof(buf))
		return WARD_ACCESS_NONE;
	memcpy(buf, key, klen);
	memcpy(buf + klen, rest, rlen + 1);
	if (!buf[0])
		strcpy(buf, "/");
	plen = strlen(buf);
	if (nd->lit == WARD_ACCESS_RO || nd->lit == WARD_ACCESS_NONE)
		best = nd->lit;
	if (best == WARD_ACCESS_NONE)
		return best;
	old = uselocale(rules->c_loc);
	if (any_match(&nd->none, buf, plen))
		best = WARD_ACCESS_NONE;
	else if (best < WARD_ACCESS_RO && any_match(&nd->ro, buf, plen))
		best = WARD_ACCESS_RO;
	uselocale(old);
	return best;
}
