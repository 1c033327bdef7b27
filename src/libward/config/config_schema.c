/*
 * ward — the configuration's schema: what each key of a layer may say,
 * checked against the tree (config_parse.c) and stored in the layer's
 * struct layer; resolving the layers is config.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_internal.h"
#include "libward/internal.h"
#include "ward/config.h"
#include "ward/env.h"

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
    [K_KEEP_NEW_REPOS] = "keep_new_repos",
    [K_ALLOW_HOME] = "allow_home_workspace",
    [K_QUARANTINE_QUOTA] = "quarantine_quota_mb",
    [K_QUARANTINE_DAYS] = "quarantine_retention_days",
};

/* --- the schema --------------------------------------------------------- */

static bool is_null(const struct ynode *y)
{
	return y->type == Y_SCALAR && y->style == Y_PLAIN &&
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
	if (y->style == Y_LITERAL || y->style == Y_FOLDED ||
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

bool ward_cfg_store(ward_config *cfg, char **slot, const char *s)
{
	*slot = strdup(s);
	if (!*slot)
		cfg->oom = true;
	return *slot != NULL;
}

/* A key that the project file may not set: ignored, and where to put it. */
static void refuse_in_project(struct pstate *ps, unsigned line, const char *why)
{
	ward_cfg_ignore(
	    ps->cfg, ps->file, line, ps->key,
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
		     ward_cfg_quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	ps->L->has[K_MODE] = true;
}

/* `~` and `~/…` against @home; anything else copied. NULL after an error. */
char *ward_cfg_expand_home(struct pstate *ps, unsigned line, const char *s,
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
		     ward_cfg_quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	/* Taken literally, "$HOME/src" would name another directory. */
	if (strchr(s, '$') || strstr(s, "{{")) {
		PERR(ps, y->line,
		     "\"%s\": variables are not expanded here; write the "
		     "path (~/ is expanded)",
		     ward_cfg_quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	/* ~ is expanded at resolve time (the env context is known then). */
	if (s[0] == '~' && s[1] != '\0' && s[1] != '/') {
		PERR(ps, y->line,
		     "~user is not supported; write the full path");
		return;
	}
	if (ward_cfg_store(ps->cfg, &ps->L->workspace, s))
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
			     ward_cfg_quote(q, sizeof(q), s, strlen(s)),
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
		     ward_cfg_quote(q, sizeof(q), s, strlen(s)));
		return;
	}
	if (ward_cfg_store(ps->cfg, &ps->L->runner_command, s))
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

		if (s && !ward_cfg_store(ps->cfg, &v[n++], s))
			break;
	}
	if (ps->cfg->nfail != before || ps->cfg->oom) {
		ward_strv_free(v);
		return;
	}
	ps->L->sigs = v;
	ps->L->has[K_SIGNATURES] = true;
}

/*
 * A plain integer from 1 to @max (@unit for the message) into *@out.
 * False after an error.
 */
static bool get_count(struct pstate *ps, const struct ynode *y,
		      unsigned long max, const char *unit, unsigned *out)
{
	unsigned long v = 0;
	char *end = NULL;
	char q[128];

	if (y->type != Y_SCALAR || is_null(y) || y->style != Y_PLAIN) {
		PERR(ps, y->line, "expected an integer, got %s",
		     y->type == Y_SCALAR && !is_null(y) ? "a quoted string"
							: type_name(y));
		return false;
	}
	errno = 0;
	if (y->str[0] >= '0' && y->str[0] <= '9')
		v = strtoul(y->str, &end, 10);
	if (!end || *end || errno || v < 1 || v > max) {
		PERR(ps, y->line,
		     "expected an integer from 1 to %lu (%s), got \"%s\"", max,
		     unit, ward_cfg_quote(q, sizeof(q), y->str, y->len));
		return false;
	}
	*out = (unsigned)v;
	return true;
}

static void h_probe_timeout(struct pstate *ps, const struct ynode *y)
{
	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "a short probe timeout can push the chain "
				  "to a weaker runner");
		return;
	}
	if (!get_count(ps, y, PROBE_TIMEOUT_MAX_MS, "milliseconds",
		       &ps->L->probe_timeout_ms))
		return;
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
	if (!ward_cfg_store(cfg, &a->text, text))
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
	ward_cfg_ignore(
	    ps->cfg, ps->file, line, ps->key,
	    "entry \"%s\": a project file may only narrow the sandbox "
	    "(r- and -- entries); put rw entries in your user file (%s) "
	    "or pass --config FILE or --access",
	    ward_cfg_quote(q, sizeof(q), s, n),
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
		if (y->style == Y_FOLDED ||
		    (y->style != Y_LITERAL && y->end_line != y->line)) {
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
		if (y->style == Y_LITERAL) {
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
		    acc_push(ps->cfg, L, text, y->line, y->style == Y_LITERAL))
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
		     ward_cfg_quote(q, sizeof(q), s, strlen(s)));
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
				PERR(
				    ps, val->line,
				    "preset \"%s\": invalid mode \"%s\" "
				    "(valid: read-only, workspace-write, "
				    "danger-full-access)",
				    name,
				    ward_cfg_quote(q, sizeof(q), s, strlen(s)));
		} else if (strcmp(ks, "approval") == 0 && !has_appr) {
			has_appr = true;
			s = get_string(ps, val, "an approval policy");
			if (s && !parse_approval(&p.approval, s))
				PERR(
				    ps, val->line,
				    "preset \"%s\": invalid approval policy "
				    "\"%s\" (valid: ask, never)",
				    name,
				    ward_cfg_quote(q, sizeof(q), s, strlen(s)));
		} else if (strcmp(ks, "mode") == 0 ||
			   strcmp(ks, "approval") == 0) {
			PERR(ps, k->line, "preset \"%s\": duplicate key \"%s\"",
			     name, ks);
		} else {
			PERR(ps, k->line,
			     "preset \"%s\": unknown key \"%s\" (valid: mode, "
			     "approval)",
			     name,
			     ward_cfg_quote(q, sizeof(q), ks, strlen(ks)));
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
	if (!ward_cfg_store(ps->cfg, &p.name, name))
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
			     name ? ward_cfg_quote(q, sizeof(q), name, k->len)
				  : "");
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

/* A plain true or false into *@out; false after an error. */
static bool get_bool(struct pstate *ps, const struct ynode *y, bool *out)
{
	if (y->type != Y_SCALAR || is_null(y) || y->style != Y_PLAIN ||
	    (strcmp(y->str, "true") != 0 && strcmp(y->str, "false") != 0)) {
		char q[128];

		PERR(ps, y->line, "expected true or false, got %s",
		     y->type == Y_SCALAR && !is_null(y)
			 ? ward_cfg_quote(q, sizeof(q), y->str, y->len)
			 : type_name(y));
		return false;
	}
	*out = strcmp(y->str, "true") == 0;
	return true;
}

static void h_protect_git(struct pstate *ps, const struct ynode *y)
{
	bool v;

	if (!get_bool(ps, y, &v))
		return;
	if (!v && ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		ward_cfg_ignore(
		    ps->cfg, ps->file, ps->line, ps->key,
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
 * A switch that widens (keep_new_repos, allow_home_workspace): true only
 * in the user's own file; a project file's is ignored (a ceiling), one in
 * --config is an error; false is the default and allowed anywhere.
 */
static void h_user_switch(struct pstate *ps, const struct ynode *y,
			  enum key key, const char *why)
{
	const char *hint = ps->cfg->user_hint ? ps->cfg->user_hint
					      : "~/.config/ward/config.yml";
	bool v;

	if (!get_bool(ps, y, &v))
		return;
	if (v && ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		ward_cfg_ignore(ps->cfg, ps->file, ps->line, ps->key,
				"a project file may only narrow the sandbox, "
				"and %s; put it in your user file (%s)",
				why, hint);
		return;
	}
	if (v && ps->layer != WARD_CONFIG_LAYER_USER) {
		PERR(ps, ps->line,
		     "%s: true may only be set in your user file "
		     "(%s)",
		     ps->key, hint);
		return;
	}
	if (key == K_KEEP_NEW_REPOS)
		ps->L->keep_new_repos = v;
	else
		ps->L->allow_home = v;
	ps->L->has[key] = true;
}

static void h_keep_new_repos(struct pstate *ps, const struct ynode *y)
{
	h_user_switch(ps, y, K_KEEP_NEW_REPOS,
		      "a repository a command makes runs what its "
		      "configuration names at your next git status");
}

static void h_allow_home(struct pstate *ps, const struct ynode *y)
{
	h_user_switch(ps, y, K_ALLOW_HOME,
		      "a workspace that holds your home directory makes "
		      "every file of yours writable");
}

/* quarantine_quota_mb, quarantine_retention_days: not in a project file
 * (it could make the guard keep things in place instead of moving them). */
static void h_quarantine(struct pstate *ps, const struct ynode *y)
{
	bool quota = strcmp(ps->key, "quarantine_quota_mb") == 0;
	enum key key = quota ? K_QUARANTINE_QUOTA : K_QUARANTINE_DAYS;

	if (ps->layer == WARD_CONFIG_LAYER_PROJECT) {
		refuse_in_project(ps, ps->line,
				  "the quarantine is yours to size");
		return;
	}
	if (!get_count(ps, y, quota ? 1048576ul : 3650ul,
		       quota ? "MiB" : "days",
		       quota ? &ps->L->quota_mb : &ps->L->days))
		return;
	ps->L->has[key] = true;
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
		ward_cfg_ignore(
		    ps->cfg, ps->file, ps->line, ps->key,
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
			     ward_cfg_quote(q, sizeof(q), p, strlen(p)));
			continue;
		}
		lines[n] = y->kid[i]->line;
		if (!ward_cfg_store(ps->cfg, &v[n++], p))
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
			     what, ward_cfg_quote(q, sizeof(q), s, strlen(s)));
			continue;
		}
		if (!ward_cfg_store(ps->cfg, &v[n++], s))
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
				ward_cfg_ignore(
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
			     ward_cfg_quote(q, sizeof(q), name, strlen(name)));
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
		     ward_cfg_quote(q, sizeof(q), s, strlen(s)));
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
			     ward_cfg_quote(q, sizeof(q), p, strlen(p)),
			     ward_error_last());
			continue;
		}
		if (!ward_cfg_store(ps->cfg, &v[n++], p))
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
    [K_KEEP_NEW_REPOS] = h_keep_new_repos,
    [K_ALLOW_HOME] = h_allow_home,
    [K_QUARANTINE_QUOTA] = h_quarantine,
    [K_QUARANTINE_DAYS] = h_quarantine,
};

/* Walk the top-level mapping. */
void ward_cfg_walk_root(ward_config *cfg, struct layer *L,
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
		ward_cfg_err(
		    cfg, layer, L->file, root->line, NULL,
		    "the top level must be a mapping of keys (mode, access, "
		    "...), not %s",
		    type_name(root));
		return;
	}
	for (size_t i = 0; i + 1 < root->n; i += 2) {
		const struct ynode *k = root->kid[i], *v = root->kid[i + 1];
		size_t key = K_COUNT;

		if (k->type != Y_SCALAR || k->has_nul) {
			ward_cfg_err(cfg, layer, L->file, k->line, NULL,
				     "keys must be plain names, not %s",
				     type_name(k));
			continue;
		}
		for (size_t j = 0; j < K_COUNT; j++)
			if (strcmp(k->str, key_names[j]) == 0)
				key = j;
		if (key == K_COUNT) {
			ward_cfg_err(
			    cfg, layer, L->file, k->line,
			    ward_cfg_quote(q, sizeof(q), k->str, k->len),
			    "unknown key (valid: mode, workspace, runners, "
			    "runner_command, runner_failure_signatures, "
			    "probe_timeout_ms, access, approval, presets, "
			    "protect_git, unprotect, allow_unix, env, "
			    "network, allow_domains, deny_domains, "
			    "keep_new_repos, allow_home_workspace, "
			    "quarantine_quota_mb, quarantine_retention_days)");
			continue;
		}
		if (seen[key]) {
			ward_cfg_err(cfg, layer, L->file, k->line,
				     key_names[key],
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
			ward_cfg_err(cfg, layer, L->file, k->line,
				     key_names[key], "no value");
			continue;
		}
		handlers[key](&ps, v);
	}
}
