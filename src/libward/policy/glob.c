/*
 * ward — glob to POSIX ERE translation. See glob.h for the syntax.
 *
 * One regex per glob serves both the in-process matcher (regcomp) and
 * Seatbelt's (regex #"…"), so the two can never disagree about what a rule
 * covers. That is why the output sticks to the syntax both accept and why
 * bracket expressions are rebuilt in a canonical order instead of being
 * copied through.
 */
#include <errno.h>
#include <locale.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "libward/internal.h"

/* A growable output string; with @check set nothing is stored. */
struct sbuf {
	char *p;
	size_t n;
	size_t cap;
	bool check;
	bool oom;
};

static void sb_putn(struct sbuf *sb, const char *s, size_t n)
{
	if (sb->check || sb->oom)
		return;
	if (sb->n + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap : 64;
		char *p;

		while (cap < sb->n + n + 1)
			cap *= 2;
		p = realloc(sb->p, cap);
		if (!p) {
			sb->oom = true;
			return;
		}
		sb->p = p;
		sb->cap = cap;
	}
	memcpy(sb->p + sb->n, s, n);
	sb->n += n;
	sb->p[sb->n] = '\0';
}

static void sb_puts(struct sbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static void sb_putc(struct sbuf *sb, char c)
{
	sb_putn(sb, &c, 1);
}

/* The characters POSIX ERE gives a meaning outside brackets. */
static bool ere_special(char c)
{
	return c && strchr("^.[$()|*+?{\\", c) != NULL;
}

/* Append literal byte @c, escaped when ERE would read it as syntax. */
static void put_literal(struct sbuf *sb, char c)
{
	if (ere_special(c))
		sb_putc(sb, '\\');
	sb_putc(sb, c);
}

/* The members of one bracket expression, as a 256-bit set. */
struct bset {
	unsigned char bit[32];
};

static void bset_add(struct bset *s, unsigned char c)
{
	s->bit[c >> 3] |= (unsigned char)(1u << (c & 7));
}

static bool bset_has(const struct bset *s, unsigned char c)
{
	return s->bit[c >> 3] & (1u << (c & 7));
}

/*
 * Parse the bracket expression starting at @g[@i] == '['. On success sets
 * *end to the offset just past its ']' and fills @set / *neg. Returns NULL
 * or a static reason, with *at the offending offset.
 *
 * Bytes marked literal inside a bracket are ordinary members (a ']' from a
 * variable does not close the bracket the user wrote).
 */
static const char *parse_bracket(const char *g, size_t len,
				 const unsigned char *lit, size_t i,
				 struct bset *set, bool *neg, size_t *end,
				 size_t *at)
{
	size_t k = i + 1;
	bool first = true;

	memset(set, 0, sizeof(*set));
	*neg = false;
	if (k < len && (g[k] == '!' || g[k] == '^') && !(lit && lit[k])) {
		*neg = true;
		k++;
	}
	for (;;) {
		unsigned char c, hi;

		if (k >= len) {
			*at = i;
			return "unbalanced '[' (write [[] for a literal '[')";
		}
		c = (unsigned char)g[k];
		if (c == ']' && !first && !(lit && lit[k]))
			break;
		first = false;
		*at = k;
		if (c == '/')
			return "'/' inside a bracket expression (a bracket "
			       "never matches '/')";
		if (c == '"')
			return "'\"' cannot be written in a Seatbelt regex";
		if (c < 0x20 || c == 0x7f)
			return "control character";
		if (c == '\\')
			return "'\\' inside a bracket expression is not "
			       "portable between regcomp and Seatbelt";
		if (c == '[' && k + 1 < len &&
		    (g[k + 1] == ':' || g[k + 1] == '.' || g[k + 1] == '='))
			return "character classes ([:name:], [.x.], [=x=]) are "
			       "not supported";
		if (k + 2 < len && g[k + 1] == '-' && g[k + 2] != ']') {
			hi = (unsigned char)g[k + 2];
			if (strchr("]-[^\\\"", c) || strchr("]-[^\\\"", hi))
				return "a range endpoint cannot be one of "
				       "] - [ ^ \\ \"";
			if (hi < 0x20 || hi == 0x7f)
				return "control character";
			if (hi < c)
				return "reversed range in a bracket expression";
			if (c <= '/' && hi >= '/')
				return "a range in a bracket expression cannot "
				       "include '/'";
			if (c <= '\\' && hi >= '\\')
				return "a range in a bracket expression cannot "
				       "include '\\' (not portable)";
			for (unsigned v = c; v <= hi; v++)
				bset_add(set, (unsigned char)v);
			k += 3;
			continue;
		}
		bset_add(set, c);
		k++;
	}
	*end = k + 1;
	return NULL;
}

/*
 * Emit @set as a bracket list in the one order that is unambiguous in every
 * POSIX-style engine: ']' first, then ordinary members as ranges or single
 * bytes, '^' never first, '-' last. A negated set also excludes '/'.
 */
static void put_bracket(struct sbuf *sb, const struct bset *set, bool neg)
{
	bool caret = bset_has(set, '^'), dash = bset_has(set, '-');

	if (!neg) {
		/* Only '^' and maybe '-': nothing to put before '^'. */
		unsigned n = 0;

		for (unsigned c = 0; c < 256; c++)
			n += bset_has(set, (unsigned char)c);
		if (caret && n == 1) {
			sb_puts(sb, "\\^");
			return;
		}
		if (caret && dash && n == 2) {
			sb_puts(sb, "[-^]");
			return;
		}
	}
	sb_putc(sb, '[');
	if (neg)
		sb_putc(sb, '^');
	if (bset_has(set, ']'))
		sb_putc(sb, ']');
	if (neg)
		sb_putc(sb, '/');
	for (unsigned c = 1; c < 256; c++) {
		unsigned e = c;

		if (!bset_has(set, (unsigned char)c) || c == ']' || c == '^' ||
		    c == '-')
			continue;
		while (e + 1 < 256 && bset_has(set, (unsigned char)(e + 1)) &&
		       e + 1 != ']' && e + 1 != '^' && e + 1 != '-')
			e++;
		sb_putc(sb, (char)c);
		if (e >= c + 2)
			sb_putc(sb, '-');
		if (e >= c + 1)
			sb_putc(sb, (char)e);
		c = e;
	}
	/*
	 * '^' is never first here: the list is negated or, after the special
	 * cases above, some other member precedes it.
	 */
	if (caret)
		sb_putc(sb, '^');
	if (dash)
		sb_putc(sb, '-');
	sb_putc(sb, ']');
}

/* Whether the component starting at @i is "**\/" (or "**" + more stars). */
static size_t star_run(const char *g, size_t len, const unsigned char *lit,
		       size_t i)
{
	size_t j = i;

	while (j < len && g[j] == '*' && !(lit && lit[j]))
		j++;
	return j - i;
}

int ward_glob_translate(char **out, const char *g, size_t len,
			const unsigned char *lit, unsigned flags,
			const char **why, size_t *at)
{
	struct sbuf sb = {.check = (flags & WARD_GLOB_CHECK) != 0};
	bool tail_any = false; /* the body ends with .* already */
	size_t i = 0;

	sb_putc(&sb, '^');
	while (i < len) {
		char c = g[i];

		if (c == '"') {
			*why = "'\"' cannot be written in a Seatbelt regex";
			*at = i;
			goto out_free;
		}
		if ((unsigned char)c < 0x20 || c == 0x7f) {
			*why = "control character";
			*at = i;
			goto out_free;
		}
		tail_any = false;
		if (!ward_glob_is_magic(g, lit, i)) {
			put_literal(&sb, c);
			i++;
			continue;
		}
		if (c == '?') {
			sb_puts(&sb, "[^/]");
			i++;
		} else if (c == '*') {
			size_t n = star_run(g, len, lit, i);
			bool comp_start = i == 0 || g[i - 1] == '/';

			if (n == 1) {
				sb_puts(&sb, "[^/]*");
				i++;
			} else if (comp_start && i + n < len &&
				   g[i + n] == '/') {
				/*
				 * "**\/" matches zero or more whole
				 * components; a repeated "**\/" adds
				 * nothing, and collapsing them keeps the
				 * regex small for hostile input.
				 */
				sb_puts(&sb, "(.*/)?");
				i += n + 1;
				while (i < len &&
				       (n = star_run(g, len, lit, i)) >= 2 &&
				       i + n < len && g[i + n] == '/')
					i += n + 1;
			} else {
				sb_puts(&sb, ".*");
				i += n;
				tail_any = true;
			}
		} else {
			struct bset set;
			bool neg;
			size_t end;
			const char *err;

			err =
			    parse_bracket(g, len, lit, i, &set, &neg, &end, at);
			if (err) {
				*why = err;
				goto out_free;
			}
			put_bracket(&sb, &set, neg);
			i = end;
		}
	}
	if (!(flags & WARD_GLOB_SUBTREE) || tail_any)
		sb_putc(&sb, '$');
	else if (len == 1 && g[0] == '/')
		sb_puts(&sb, ".*$"); /* the root: everything is below it */
	else
		sb_puts(&sb, "(/.*)?$");
	if (sb.oom)
		return -ENOMEM;
	if (!sb.check)
		*out = sb.p;
	return 0;
out_free:
	free(sb.p);
	return WARD_EINVAL;
}

size_t ward_glob_prefix_len(const char *g, size_t len, const unsigned char *lit)
{
	size_t slash = 0;

	for (size_t i = 0; i < len; i++) {
		if (g[i] == '/')
			slash = i;
		else if (ward_glob_is_magic(g, lit, i))
			return slash ? slash : 1;
	}
	return len;
}

size_t ward_glob_suffix(const char *g, size_t len, const unsigned char *lit,
			size_t *n)
{
	size_t start = 0;

	for (size_t i = 0; i < len;) {
		if (!ward_glob_is_magic(g, lit, i)) {
			i++;
			continue;
		}
		if (g[i] == '[') {
			struct bset set;
			bool neg;
			size_t end, at;

			if (parse_bracket(g, len, lit, i, &set, &neg, &end,
					  &at)) {
				/* Malformed: no usable suffix. */
				*n = 0;
				return len;
			}
			i = end;
		} else {
			i++;
		}
		start = i;
	}
	while (start < len && g[start] == '/')
		start++;
	*n = len - start;
	return start;
}

size_t ward_glob_longest_run(const char *g, size_t len,
			     const unsigned char *lit, size_t from, size_t *n)
{
	size_t best = len, best_n = 0, start = from;

	for (size_t i = from;;) {
		bool end = i >= len;

		if (end || ward_glob_is_magic(g, lit, i)) {
			/* close the run [start, i) */
			while (start < i && g[start] == '/')
				start++;
			if (i - start > best_n) {
				best = start;
				best_n = i - start;
			}
			if (end)
				break;
			if (g[i] == '[') {
				struct bset set;
				bool neg;
				size_t stop, at;

				if (parse_bracket(g, len, lit, i, &set, &neg,
						  &stop, &at))
					break;
				i = stop;
			} else {
				i++;
			}
			start = i;
			continue;
		}
		i++;
	}
	*n = best_n;
	return best;
}

int ward_glob_to_regex(char **out, const char *glob)
{
	locale_t c_loc, old;
	const char *why = NULL;
	size_t at = 0;
	char *re = NULL;
	regex_t compiled;
	int err;

	if (!out || !glob)
		return ward_err(WARD_EINVAL, "glob: NULL argument");
	err = ward_glob_translate(&re, glob, strlen(glob), NULL, 0, &why, &at);
	if (err == -ENOMEM)
		return ward_err(err, "glob \"%.200s\": out of memory", glob);
	if (err)
		return ward_err(err, "glob \"%.200s\": %s (at offset %zu)",
				glob, why, at);

	/*
	 * Prove the promise that regcomp accepts it, in the C locale: the
	 * caller's locale must not change what a byte is.
	 */
	c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!c_loc) {
		free(re);
		return ward_err(-ENOMEM, "glob: cannot create the C locale");
	}
	old = uselocale(c_loc);
	err = regcomp(&compiled, re, REG_EXTENDED | REG_NOSUB);
	uselocale(old);
	freelocale(c_loc);
	if (err) {
		char msg[128];

		regerror(err, &compiled, msg, sizeof(msg));
		free(re);
		if (err == REG_ESPACE)
			return ward_err(-ENOMEM, "glob \"%.200s\": %s", glob,
					msg);
		return ward_err(WARD_EINVAL, "glob \"%.200s\": regcomp: %s",
				glob, msg);
	}
	regfree(&compiled);
	*out = re;
	return 0;
}
