/*
 * ward — a bounded scan of git configuration text for the keys that name
 * places git runs code from (see gitconfig.h for why and what).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gitconfig.h"

/* Longer names or values cannot be ones we look for (paths are short). */
#define NAME_MAX_LEN  256
#define VALUE_MAX_LEN 8192

enum section {
	SEC_OTHER,
	SEC_CORE,      /* [core] */
	SEC_INCLUDE,   /* [include] */
	SEC_INCLUDEIF, /* [includeIf "condition"] */
};

struct gp {
	const char *s;
	size_t n;
	size_t i;
	unsigned line;
	bool eof;
	enum section sec;
	char value[VALUE_MAX_LEN + 1];
	size_t vlen;
	bool vlong; /* the value did not fit: never reported */
};

/* git's own isspace(): space, tab, newline, carriage return. */
static bool gspace(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool galpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool gkeychar(int c)
{
	return galpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * The next character: CRLF reads as LF, and the end of the text reads as
 * one final LF (then @eof is set), as in git.
 */
static int next(struct gp *g)
{
	int c;

	if (g->i >= g->n) {
		g->eof = true;
		return '\n';
	}
	c = (unsigned char)g->s[g->i++];
	if (c == '\r' && g->i < g->n && g->s[g->i] == '\n')
		c = (unsigned char)g->s[g->i++];
	if (c == '\n')
		g->line++;
	return c;
}

/* `[name]`, `[name "sub"]` or `[name.sub]`, after the '['. */
static int section(struct gp *g)
{
	char name[NAME_MAX_LEN + 1];
	size_t len = 0;
	bool sub = false, dotted = false;
	int c;

	for (;;) {
		c = next(g);
		if (g->eof)
			return -EINVAL;
		if (c == ']')
			break;
		if (gspace(c)) {
			/* An extended header: whitespace, a quoted
			 * subsection (case kept), then ']'. */
			do {
				if (c == '\n')
					return -EINVAL;
				c = next(g);
			} while (gspace(c));
			if (c != '"')
				return -EINVAL;
			for (;;) {
				c = next(g);
				if (c == '\n')
					return -EINVAL;
				if (c == '"')
					break;
				if (c == '\\') {
					c = next(g);
					if (c == '\n')
						return -EINVAL;
				}
			}
			if (next(g) != ']')
				return -EINVAL;
			sub = true;
			break;
		}
		if (!gkeychar(c) && c != '.')
			return -EINVAL;
		if (c == '.')
			dotted = true;
		if (len < NAME_MAX_LEN)
			name[len++] = (char)lower(c);
	}
	name[len] = '\0';
	g->sec = SEC_OTHER;
	if (dotted) {
		/* [includeIf.cond] names the condition in lower case. */
		if (strncmp(name, "includeif.", 10) == 0 && name[10])
			g->sec = SEC_INCLUDEIF;
		return 0;
	}
	if (strcmp(name, "core") == 0 && !sub)
		g->sec = SEC_CORE;
	else if (strcmp(name, "include") == 0 && !sub)
		g->sec = SEC_INCLUDE;
	else if (strcmp(name, "includeif") == 0 && sub)
		g->sec = SEC_INCLUDEIF;
	return 0;
}

static void vput(struct gp *g, int c)
{
	if (g->vlen < VALUE_MAX_LEN)
		g->value[g->vlen++] = (char)c;
	else
		g->vlong = true;
}

/*
 * A value, after the '=' up to and including the end of its line:
 * unquoted whitespace is kept inside and trimmed at both ends, quotes
 * only group, `#`/`;` outside quotes start a comment, a backslash escapes
 * n, t, b, '\\' and '"' or continues the line; anything else is an error.
 */
static int value(struct gp *g)
{
	bool quote = false, comment = false;
	size_t trim = 0;
	int c;

	g->vlen = 0;
	g->vlong = false;
	for (;;) {
		c = next(g);
		if (c == '\n') {
			if (quote)
				return -EINVAL;
			if (trim)
				g->vlen = trim;
			g->value[g->vlen] = '\0';
			return 0;
		}
		if (comment)
			continue;
		if (gspace(c) && !quote) {
			if (!trim)
				trim = g->vlen;
			if (g->vlen)
				vput(g, c);
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		trim = 0;
		if (c == '\\') {
			c = next(g);
			switch (c) {
			case '\n':
				if (g->eof)
					return -EINVAL;
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -EINVAL;
			}
			vput(g, c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		vput(g, c);
	}
}

/* `name [= value]` whose first character @c was read. */
static int variable(struct gp *g, int c, ward_gitcfg_fn fn, void *ctx)
{
	char name[NAME_MAX_LEN + 1];
	size_t len = 0;
	unsigned line = g->line;
	bool has_value = false;
	int err;

	name[len++] = (char)lower(c);
	for (;;) {
		c = next(g);
		if (g->eof || !gkeychar(c))
			break;
		if (len < NAME_MAX_LEN)
			name[len++] = (char)lower(c);
	}
	name[len] = '\0';
	while (c == ' ' || c == '\t')
		c = next(g);
	if (c != '\n') {
		if (c != '=')
			return -EINVAL;
		err = value(g);
		if (err)
			return err;
		has_value = true;
	}
	if (g->vlong && has_value)
		return 0;
	if (g->sec == SEC_CORE && strcmp(name, "hookspath") == 0)
		fn(ctx, WARD_GITCFG_HOOKSPATH, has_value ? g->value : NULL,
		   line);
	else if ((g->sec == SEC_INCLUDE || g->sec == SEC_INCLUDEIF) &&
		 strcmp(name, "path") == 0)
		fn(ctx, WARD_GITCFG_INCLUDE, has_value ? g->value : NULL, line);
	return 0;
}

int ward_gitconfig_scan(const char *text, size_t len, ward_gitcfg_fn fn,
			void *ctx, unsigned *bad_line)
{
	struct gp *g;
	bool comment = false;
	int c, err = 0;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = text;
	g->n = len;
	g->line = 1;
	/* A UTF-8 byte order mark is skipped, as git does. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		g->i = 3;
	for (;;) {
		c = next(g);
		if (c == '\n') {
			if (g->eof)
				break;
			comment = false;
			continue;
		}
		if (comment || gspace(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			err = section(g);
		} else if (galpha(c)) {
			/* Before any section too: git reads a key without
			 * one (it is never one of ours). */
			err = variable(g, c, fn, ctx);
		} else {
			err = -EINVAL;
		}
		if (err)
			break;
	}
	if (err && bad_line)
		*bad_line = g->line;
	free(g);
	return err;
}
