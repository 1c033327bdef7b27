/*
 * ward — the denial report (include/ward/denial.h, src/libward/run/denial.h).
 *
 * Judging a path: the call's plan says why a refusal there is the
 * sandbox's — a `--` rule or a hidden protected path such as ward's state
 * directory (anything), an `r-` rule, a protected path or a place outside
 * the writable roots (a change) — or that it is not (a
 * write inside a writable root refused by file permissions, a file that
 * simply does not exist): then nothing is reported.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "denial.h"
#include "libward/internal.h"
#include "libward/policy/facts.h"
#include "libward/policy/protect.h"
#include "util/util.h"

const char *ward_denial_cause_name(enum ward_denial_cause cause)
{
	switch (cause) {
	case WARD_DENIAL_MODE:
		return "mode";
	case WARD_DENIAL_RULE:
		return "rule";
	case WARD_DENIAL_PROTECTED:
		return "protected";
	}
	return "unknown";
}

const char *ward_denial_how_name(enum ward_denial_how how)
{
	return how == WARD_DENIAL_EXACT ? "exact" : "derived";
}

static void entry_free(struct ward_denial *d)
{
	free((char *)d->path);
	free((char *)d->rule);
	free((char *)d->source);
}

void ward_denial_set_clear(struct ward_denial_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		entry_free(&set->v[i]);
	free(set->v);
	memset(set, 0, sizeof(*set));
}

static char *dup_or_null(struct ward_denial_set *set, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		set->oom = true;
	return d;
}

/* Add an entry (strings copied); an entry for the same path and
 * operation already there is kept (an exact one wins over a derived). */
static void add(struct ward_denial_set *set, const struct ward_denial *e)
{
	struct ward_denial *d;

	for (size_t i = 0; i < set->n; i++) {
		d = &set->v[i];
		if (((!d->path && !e->path) ||
		     (d->path && e->path && strcmp(d->path, e->path) == 0)) &&
		    strcmp(d->operation, e->operation) == 0) {
			if (e->how == WARD_DENIAL_EXACT)
				d->how = WARD_DENIAL_EXACT;
			return;
		}
	}
	if (set->n >= WARD_DENIALS_MAX) {
		set->more++;
		return;
	}
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 4;

		d = realloc(set->v, cap * sizeof(*d));
		if (!d) {
			set->oom = true;
			return;
		}
		set->v = d;
		set->cap = cap;
	}
	d = &set->v[set->n];
	*d = *e;
	d->path = dup_or_null(set, e->path);
	d->rule = dup_or_null(set, e->rule);
	d->source = dup_or_null(set, e->source);
	set->n++;
}

/*
 * @path made absolute (against @cwd) and canonical as far as it exists:
 * the plan's roots are canonical, and /var/run is /run.
 */
static bool absolute(char *out, size_t len, const char *cwd, const char *path)
{
	char joined[PATH_MAX], *slash, *real;
	int n;

	if (path[0] == '/')
		n = snprintf(joined, sizeof(joined), "%s", path);
	else
		n = snprintf(joined, sizeof(joined), "%s/%s", cwd ? cwd : "",
			     path);
	if (n < 0 || (size_t)n >= sizeof(joined) || joined[0] != '/')
		return false;
	real = realpath(joined, NULL);
	if (!real) {
		/* A file that could not be made: its directory is real. */
		slash = strrchr(joined, '/');
		if (slash && slash != joined) {
			*slash = '\0';
			real = realpath(joined, NULL);
			*slash = '/';
			if (real) {
				n = snprintf(out, len, "%s%s",
					     strcmp(real, "/") ? real : "",
					     slash);
				free(real);
				return n > 0 && (size_t)n < len;
			}
		}
		n = snprintf(out, len, "%s", joined);
		return n > 0 && (size_t)n < len;
	}
	n = snprintf(out, len, "%s", real);
	free(real);
	return n > 0 && (size_t)n < len;
}

/* An operation that changes something (what modes and `r-` refuse). */
static bool changes(const char *op)
{
	return !op || (strcmp(op, "read") != 0 && strcmp(op, "list") != 0 &&
		       strcmp(op, "execute") != 0 && strcmp(op, "access") != 0);
}

static bool judge(struct ward_denial_set *set,
		  const struct ward_denial_ctx *ctx, const struct ward_facts *f,
		  const char *path, const char *op, enum ward_denial_errno why,
		  enum ward_denial_how how)
{
	const ward_policy *pol = ctx->policy;
	const ward_rules *rules = ward_policy_rules(pol);
	const struct ward_protected *prot = NULL;
	enum ward_mode mode = ward_policy_mode(pol);
	struct ward_denial e = {0};
	struct ward_rule_info in;
	char abs[PATH_MAX], src[PATH_MAX + 32];
	char *const *roots = f ? f->roots : NULL;
	size_t nprot = 0, idx;
	enum ward_access access;
	bool writable = false;

	if (!path || !*path || !absolute(abs, sizeof(abs), ctx->cwd, path))
		return false;
	e.path = abs;
	e.mode = mode;
	e.how = how;
	access = rules ? ward_rules_match(rules, abs) : WARD_ACCESS_DEFAULT;
	if (access == WARD_ACCESS_NONE || access == WARD_ACCESS_RO) {
		/* `r-` refuses changes only; `--` refuses everything, and
		 * under bwrap a hidden path reads as missing. */
		if (access == WARD_ACCESS_RO &&
		    (why == WARD_DENIAL_ENOENT || !changes(op)))
			return false;
		if (ward_rules_find(&idx, rules, abs) != 0 ||
		    ward_rules_get(&in, rules, idx) != 0)
			return false;
		e.cause = WARD_DENIAL_RULE;
		e.rule = in.source;
		if (in.origin.file && in.origin.line)
			snprintf(src, sizeof(src), "%s:%u", in.origin.file,
				 in.origin.line);
		else
			snprintf(src, sizeof(src), "%s",
				 in.origin.file ? in.origin.file : "--access");
		e.source = src;
		e.operation = op			   ? op
			      : access == WARD_ACCESS_NONE ? "access"
							   : "write";
		add(set, &e);
		return true;
	}
	/* The fence runs in the harness: a process's /proc is always hidden
	 * from it (util_proc_private), whatever the mode. */
	if (ctx->fence && util_proc_private(abs)) {
		e.cause = WARD_DENIAL_PROTECTED;
		e.rule = "a process's entry in /proc, which names the harness";
		e.source = "built in";
		e.operation = op ? op : "access";
		add(set, &e);
		return true;
	}
	if (mode == WARD_MODE_DANGER_FULL_ACCESS || !f ||
	    ward_facts_protected(&prot, &nprot, f) != 0)
		nprot = 0;
	/* A hidden protected path (ward's state directory, a session's
	 * store) refuses everything, like a `--` rule; under bwrap what is
	 * in it reads as missing. */
	for (size_t i = 0; i < nprot; i++) {
		if (prot[i].access != WARD_ACCESS_NONE ||
		    !util_path_within(abs, prot[i].path))
			continue;
		e.cause = WARD_DENIAL_PROTECTED;
		e.rule = prot[i].what;
		e.source = "built in";
		e.operation = op ? op : "access";
		add(set, &e);
		return true;
	}
	if (why == WARD_DENIAL_ENOENT || !changes(op) ||
	    mode == WARD_MODE_DANGER_FULL_ACCESS)
		return false;
	e.operation = op ? op : "write";
	for (size_t i = 0; i < nprot; i++) {
		if (!ward_protected_kept(&prot[i]) ||
		    !util_path_within(abs, prot[i].path))
			continue;
		e.cause = WARD_DENIAL_PROTECTED;
		e.rule = prot[i].what;
		e.source = prot[i].kind == WARD_PROTECT_GIT
			       ? "built in (protect_git)"
			       : "built in";
		add(set, &e);
		return true;
	}
	/* No entry names it, but it would make a new repository (a `.git`
	 * on its way that is not there, a new entry where git finds more). */
	if (mode == WARD_MODE_WORKSPACE_WRITE && changes(op) &&
	    f && ward_protect_makes_repo(pol, f, abs)) {
		e.cause = WARD_DENIAL_PROTECTED;
		e.rule = "a new git repository (--keep-new-repos, "
			 "keep_new_repos: true to allow)";
		e.source = "built in (protect_git)";
		add(set, &e);
		return true;
	}
	if (mode != WARD_MODE_READ_ONLY)
		for (size_t i = 0; roots && roots[i] && !writable; i++)
			writable = util_path_within(abs, roots[i]);
	if (writable && why != WARD_DENIAL_EKNOWN)
		return false; /* a plain permission error */
	e.cause = WARD_DENIAL_MODE;
	e.source = ctx->mode_source;
	add(set, &e);
	return true;
}

bool ward_denial_judge(struct ward_denial_set *set,
		       const struct ward_denial_ctx *ctx, const char *path,
		       const char *op, enum ward_denial_errno why,
		       enum ward_denial_how how)
{
	struct ward_facts *own = NULL;
	bool added;

	/* Without the call's facts (a caller that has none at hand), the
	 * judgement makes its own: NULL ones explain nothing protected. */
	if (!ctx->facts && ward_facts_new(&own, ctx->policy, 0) != 0)
		own = NULL;
	added = judge(set, ctx, ctx->facts ? ctx->facts : own, path, op, why,
		      how);
	ward_facts_unref(own);
	return added;
}

void ward_denial_add_unknown(struct ward_denial_set *set,
			     const struct ward_denial_ctx *ctx)
{
	struct ward_denial e = {0};

	e.operation = "write";
	e.cause = WARD_DENIAL_MODE;
	e.mode = ward_policy_mode(ctx->policy);
	e.source = ctx->mode_source;
	e.how = WARD_DENIAL_DERIVED;
	add(set, &e);
}

/* --- reading error output ------------------------------------------------- */

static const struct {
	const char *phrase;
	enum ward_denial_errno why;
} phrases[] = {
    {"Permission denied", WARD_DENIAL_EACCES},
    {"Read-only file system", WARD_DENIAL_EROFS},
    {"Operation not permitted", WARD_DENIAL_EPERM},
    {"No such file or directory", WARD_DENIAL_ENOENT},
    {"Device or resource busy", WARD_DENIAL_EBUSY},
};

/* Tools that only read what they name ("cat: F: Permission denied"). */
static bool reader(const char *line)
{
	static const char *const progs[] = {
	    "cat: ",	"head: ",    "tail: ",	    "less: ",	  "more: ",
	    "grep: ",	"wc: ",	     "sort: ",	    "uniq: ",	  "diff: ",
	    "cmp: ",	"od: ",	     "xxd: ",	    "stat: ",	  "file: ",
	    "md5sum: ", "sha1sum: ", "sha256sum: ", "readlink: ",
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(*progs); i++)
		if (strncmp(line, progs[i], strlen(progs[i])) == 0)
			return true;
	return false;
}

/* The operation a line of error output names, or NULL. */
static const char *operation_of(const char *line, enum ward_denial_errno why)
{
	static const struct {
		const char *needle, *op;
	} ops[] = {
	    {"cannot touch", "create"},
	    {"cannot create", "create"},
	    {"cannot make directory", "create"},
	    {"cannot remove", "remove"},
	    {"cannot unlink", "remove"},
	    {"failed to remove", "remove"},
	    {"cannot move", "move"},
	    {"cannot rename", "move"},
	    {"for writing", "write"},
	    {"cannot open directory", "list"},
	    {"cannot read directory", "list"},
	    {"cannot open", "read"},
	    {"cannot access", "read"},
	    {"cannot read", "read"},
	    {"cannot stat", "read"},
	    {"cannot execute", "execute"},
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (strstr(line, ops[i].needle))
			return ops[i].op;
	if (why == WARD_DENIAL_EROFS || why == WARD_DENIAL_EBUSY)
		return "write";
	return reader(line) ? "read" : NULL;
}

/* Take the text between quotes starting at @p (one of ' " ` ‘): the
 * candidate into @out ("" when empty or too long); returns the closing
 * quote, or NULL when @p starts no quoted text. */
static const char *quoted(const char *p, char *out, size_t len)
{
	const char *end = NULL, *start;
	size_t n;

	out[0] = '\0';
	if (!strncmp(p, "\xe2\x80\x98", 3)) { /* ‘…’ */
		start = p + 3;
		end = strstr(start, "\xe2\x80\x99");
	} else if (*p == '\'' || *p == '"' || *p == '`') {
		start = p + 1;
		end = strchr(start, *p == '`' ? '\'' : *p);
	} else {
		return NULL;
	}
	if (!end)
		return NULL;
	n = (size_t)(end - start);
	if (n == 0 || n >= len)
		return end;
	memcpy(out, start, n);
	out[n] = '\0';
	return end;
}

/* Whether @tok could be a path (not a line number, not a word of prose). */
static bool path_like(const char *tok)
{
	if (!*tok || strspn(tok, "0123456789") == strlen(tok))
		return false;
	return tok[0] == '/' || tok[0] == '.' || tok[0] == '~' ||
	       strchr(tok, '/') || strchr(tok, '.') ||
	       strspn(tok,
		      "abcdefghijklmnopqrstuvwxyz"
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+") == strlen(tok);
}

/* One line (NUL-terminated, possibly cut) with @why at @at. */
static void one_line(struct ward_denial_set *set,
		     const struct ward_denial_ctx *ctx, char *line, size_t at,
		     enum ward_denial_errno why)
{
	const char *op = operation_of(line, why);
	char cand[PATH_MAX];
	bool found = false;
	char *p, *field, *save = NULL;

	/* Quoted names anywhere on the line: 'x', "x", `x', ‘x’. */
	for (p = line; *p; p++) {
		const char *end = quoted(p, cand, sizeof(cand));

		if (!end)
			continue;
		if (cand[0])
			found |= ward_denial_judge(set, ctx, cand, op, why,
						   WARD_DENIAL_DERIVED);
		p = (char *)end;
	}
	if (found)
		return;
	/* "prog: [line N: ]…[ NAME]: <error>": the last word of every
	 * field after the program's name. */
	line[at] = '\0';
	field = strtok_r(line, ":", &save);
	for (int i = 0; field; i++, field = strtok_r(NULL, ":", &save)) {
		char *end, *word;

		if (i == 0 && save && *save)
			continue; /* the program's name */
		while (*field == ' ')
			field++;
		end = field + strlen(field);
		while (end > field && (end[-1] == ' ' || end[-1] == ','))
			*--end = '\0';
		word = strrchr(field, ' ');
		word = word ? word + 1 : field;
		if (path_like(word))
			ward_denial_judge(set, ctx, word, op, why,
					  WARD_DENIAL_DERIVED);
	}
}

/* A line of @runner's network dialect: a refused socket, not a file
 * (wget's "Connecting to …… failed: Permission denied." under Landlock). */
static bool net_line(enum ward_runner runner, const char *p, size_t n)
{
	const char *const *sigs = ward_network_signatures(runner);

	for (size_t i = 0; sigs[i]; i++)
		if (ward_text_has_signature(p, n, sigs[i]))
			return true;
	return false;
}

void ward_denials_from_output(struct ward_denial_set *set,
			      const struct ward_denial_ctx *ctx,
			      const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	char line[PATH_MAX + 512];

	while (p && p < end) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* ward's own lines (the guard's notes, a marker) are no
		 * command's error. */
		if (n < sizeof(line) && n > 0 &&
		    !(n >= 6 && memcmp(p, "ward: ", 6) == 0) &&
		    !(n >= 9 && memcmp(p, "[sandbox:", 9) == 0) &&
		    !net_line(ctx->runner, p, n)) {
			memcpy(line, p, n);
			line[n] = '\0';
			for (size_t i = 0;
			     i < sizeof(phrases) / sizeof(*phrases); i++) {
				char *at = strstr(line, phrases[i].phrase);

				if (at) {
					one_line(set, ctx, line,
						 (size_t)(at - line),
						 phrases[i].why);
					break;
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
}
