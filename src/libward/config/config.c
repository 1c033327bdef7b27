/*
 * ward — the configuration (ward.yml): parse each layer, then resolve.
 *
 * Parsing (plan) runs libyaml's EVENT parser, not its document loader,
 * into a small tree of our own with a 1-based line on every node, so every
 * error can name its file, line and key. Building the tree ourselves is also
 * what makes hostile input harmless:
 *   - aliases are refused outright (never expanded), so an alias bomb
 *     ("billion laughs") costs nothing;
 *   - nesting is capped (MAX_DEPTH) and so is the number of nodes
 *     (MAX_NODES) and the file size (WARD_CONFIG_MAX_BYTES);
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
 * The parser is libyaml, in this process, in every build (the static and
 * the musl ward, libward and the fuzz targets alike): a small, long-fuzzed
 * library that needs no patch of ours (docs/CONFIG.md, "The YAML parser").
 *
 * Modules: config_parse.c (errors and warnings, the tree), config_schema.c
 * (the schema), this file (layers, resolve, load, the object and its
 * accessors); config_internal.h is what they share.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_internal.h"
#include "libward/internal.h"
#include "util/util.h"
#include "ward/config.h"
#include "ward/env.h"
#include "ward/quarantine.h"

static char *const empty_strv[] = {NULL};

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

/*
 * A NUL byte anywhere is an error naming the file, line and byte offset,
 * before any parser sees the text: a parser that takes a C string ends
 * the document there, and every rule after the NUL would be dropped
 * without a word (a `--` rule gone is a path readable). Returns true
 * when @text holds one (the error is recorded).
 */
static bool refuse_nul(ward_config *cfg, enum ward_config_layer layer,
		       const char *file, const char *text, size_t len)
{
	const char *nul = len ? memchr(text, '\0', len) : NULL;
	unsigned line = 1;

	if (!nul)
		return false;
	for (const char *p = text; p < nul; p++)
		line += *p == '\n';
	ward_cfg_err(cfg, layer, file, line, NULL,
		     "a NUL byte at offset %zu; a configuration is text",
		     (size_t)(nul - text));
	return true;
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
	before = ward_cfg_emark(cfg);
	L->present = true;
	L->protect_git = true;
	if (!ward_cfg_store(cfg, &L->file, name))
		return ward_cfg_result(cfg, before);
	if (len > WARD_CONFIG_MAX_BYTES) {
		ward_cfg_err(
		    cfg, layer, L->file, 0, NULL,
		    "larger than %d bytes; a ward configuration is small",
		    WARD_CONFIG_MAX_BYTES);
		return ward_cfg_result(cfg, before);
	}
	if (refuse_nul(cfg, layer, L->file, text, len))
		return ward_cfg_result(cfg, before);
	root = ward_cfg_parse_layer(cfg, layer, L->file, text, len, &ok);
	if (ok)
		ward_cfg_walk_root(cfg, L, layer, root);
	ward_ynode_free(root);
	return ward_cfg_result(cfg, before);
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
	before = ward_cfg_emark(cfg);
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
			ward_cfg_warn(
			    cfg,
			    "%s: not read: a directory on its path is not "
			    "searchable by this user",
			    path);
			return ward_cfg_result(cfg, before);
		}
	}
	if (err == -ENOMEM)
		return ward_err(err, "config: out of memory");
	if (err) {
		const char *why = err == -EINVAL  ? "not a regular file"
				  : err == -EFBIG ? "larger than 1 MiB; a ward "
						    "configuration is small"
						  : strerror(-err);

		ward_cfg_err(cfg, layer, path, 0, NULL, "cannot read: %s", why);
		return ward_cfg_result(cfg, before);
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
			ward_cfg_ignore(
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

			ward_cfg_err(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				     "mode",
				     "invalid mode \"%s\" (valid: read-only, "
				     "workspace-write, danger-full-access)",
				     ward_cfg_quote(q, sizeof(q), opts->mode,
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
		struct emark before = ward_cfg_emark(cfg);

		set_from(cfg, K_WORKSPACE, l, L);
		ws = ward_cfg_expand_home(&ps, L->line[K_WORKSPACE],
					  L->workspace,
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
	if (cfg->ws_loaded_real && strcmp(ws, cfg->ws_loaded) == 0) {
		real = cfg->ws_loaded_real;
		cfg->ws_loaded_real = NULL;
	} else {
		real = realpath(ws, NULL);
	}
	if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		const char *why = real ? "not a directory" : strerror(errno);

		ward_cfg_err(cfg, o->layer, o->file, o->line, "workspace",
			     "%s: %s", ws, why);
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
	/* The parser keeps a true out of every file but the user's. */
	if ((L = pick_scalar(cfg, K_KEEP_NEW_REPOS)))
		cfg->keep_new_repos = L->keep_new_repos;
	if ((L = pick_scalar(cfg, K_ALLOW_HOME)))
		cfg->allow_home = L->allow_home;
	if ((L = pick_scalar(cfg, K_QUARANTINE_QUOTA)))
		cfg->quota_mb = L->quota_mb;
	if ((L = pick_scalar(cfg, K_QUARANTINE_DAYS)))
		cfg->days = L->days;
}

/* --keep-new-repos, --allow-home-workspace: the flag layer's switches. */
static void resolve_switches(ward_config *cfg,
			     const struct ward_config_options *opts)
{
	if (!opts || opts->version < 5)
		return;
	if (opts->keep_new_repos) {
		cfg->keep_new_repos = true;
		set_from(cfg, K_KEEP_NEW_REPOS, WARD_CONFIG_LAYER_FLAGS, NULL);
	}
	if (opts->allow_home_workspace) {
		cfg->allow_home = true;
		set_from(cfg, K_ALLOW_HOME, WARD_CONFIG_LAYER_FLAGS, NULL);
	}
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
			abs = ward_cfg_expand_home(
			    &ps, L->unprot_line[i], p,
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
			ward_cfg_warn(
			    cfg,
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
			abs = ward_cfg_expand_home(
			    &ps, L->aunix_line[i], p,
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
			ward_cfg_err(
			    cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0, "allow-unix",
			    "'%s' is not an absolute path",
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
			ward_cfg_err(cfg, p->origin.layer, p->origin.file,
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
	ward_cfg_err(cfg, layer, file, at, "access", "%s", d);
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
				ward_cfg_err(
				    cfg, order[o], L->file, in.origin.line,
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
			ward_cfg_err(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				     "access", "%s", ward_error_last());
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
			ward_cfg_err(
			    cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0, "env-keep",
			    "\"%s\" is not a variable name or pattern "
			    "(letters, digits, _ and the globs * ? [ ])",
			    ward_cfg_quote(q, sizeof(q), opts->env_keep[i],
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
				ward_cfg_ignore(
				    cfg, L->file, L->line[K_ALLOW_DOMAINS],
				    "allow_domains",
				    "\"%s\": a project file may only "
				    "narrow the sandbox, and no lower "
				    "layer allows this domain; allow it "
				    "in your user file (%s), with --config "
				    "FILE or with --allow-domain",
				    ward_cfg_quote(q, sizeof(q), L->allow[i],
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
	if (opts && opts->version >= 4) {
		for (size_t i = 0; i < opts->allow_domains_len; i++) {
			const char *d = opts->allow_domains[i];

			if (ward_network_pattern_check(d) != 0) {
				ward_cfg_err(
				    cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				    "allow-domain", "\"%s\": %s",
				    ward_cfg_quote(q, sizeof(q), d, strlen(d)),
				    ward_error_last());
				continue;
			}
			push_new(&allow, (char *const[]){(char *)d, NULL});
		}
		if (opts->network) {
			enum ward_network n;

			if (ward_network_parse(&n, opts->network) != 0) {
				ward_cfg_err(
				    cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
				    "network",
				    "invalid network \"%s\" (valid: off, on)",
				    ward_cfg_quote(q, sizeof(q), opts->network,
						   strlen(opts->network)));
			} else if (opts->allow_domains_len) {
				ward_cfg_err(
				    cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
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
	/* Two flags that cannot both hold are a usage error (a layer below
	 * the flags is the plan's refusal: plan.c). */
	if (cfg->mode == WARD_MODE_DANGER_FULL_ACCESS &&
	    cfg->from[K_MODE].layer == WARD_CONFIG_LAYER_FLAGS &&
	    cfg->net_set &&
	    cfg->from[K_NETWORK].layer == WARD_CONFIG_LAYER_FLAGS &&
	    cfg->network != WARD_NETWORK_ON)
		ward_cfg_err(cfg, WARD_CONFIG_LAYER_FLAGS, NULL, 0,
			     opts && opts->network ? "network" : "allow-domain",
			     "network %s cannot be enforced under "
			     "danger-full-access (--mode), which runs commands "
			     "unconfined; use --network on with "
			     "danger-full-access, or a narrower mode",
			     ward_network_name(cfg->network));
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
		ward_cfg_warn(
		    cfg,
		    "runner_failure_signatures (%s) has no effect without "
		    "runner_command",
		    origin_text(o, sizeof(o), &cfg->from[K_SIGNATURES]));
	if (cfg->runner_command && cfg->nrunners)
		ward_cfg_warn(
		    cfg,
		    "runners (%s) is ignored: runner_command skips the "
		    "chain and the probe",
		    origin_text(o, sizeof(o), &cfg->from[K_RUNNERS]));
	if (!cfg->protect_git)
		ward_cfg_warn(
		    cfg,
		    "protect_git is off (%s): the repository's hooks, "
		    "config and the files its config names are writable "
		    "inside the workspace under workspace-write",
		    origin_text(o, sizeof(o), &cfg->from[K_PROTECT_GIT]));
	if (cfg->mode == WARD_MODE_DANGER_FULL_ACCESS &&
	    cfg->from[K_MODE].layer != WARD_CONFIG_LAYER_FLAGS)
		ward_cfg_warn(
		    cfg,
		    "the default mode is danger-full-access (%s): commands "
		    "run unconfined",
		    origin_text(o, sizeof(o), &cfg->from[K_MODE]));
}

/*
 * Forget what the project file asked for about a knob that a higher layer
 * decides anyway (--mode, --network, --allow-domain, or the --config file):
 * the project's value would not apply whatever it said, so warning about
 * it on every run says nothing (ward config check lists what is in force).
 */
static void drop_decided(ward_config *cfg,
			 const struct ward_config_options *opts)
{
	const struct layer *X = &cfg->L[WARD_CONFIG_LAYER_EXPLICIT];
	bool mode = (opts && opts->mode) || (X->present && X->has[K_MODE]);
	bool net = (opts && opts->version >= 4 &&
		    (opts->network || opts->allow_domains_len)) ||
		   (X->present && X->has[K_NETWORK]);
	size_t out = 0;

	for (size_t i = 0; i < cfg->nign; i++) {
		const char *k = cfg->ign_key[i];
		size_t w = cfg->ign[i];

		if (!((mode && strcmp(k, "mode") == 0) ||
		      (net && strcmp(k, "network") == 0))) {
			cfg->ign_key[out] = k;
			cfg->ign[out++] = w;
			continue;
		}
		free(cfg->warn[w]);
		cfg->warn[w] = NULL;
	}
	cfg->nign = out;
	/* Close the gaps in the warnings, moving the indexes along. */
	out = 0;
	for (size_t w = 0; w < cfg->nwarn; w++) {
		if (!cfg->warn[w])
			continue;
		for (size_t i = 0; i < cfg->nign; i++)
			if (cfg->ign[i] == w)
				cfg->ign[i] = out;
		cfg->warn[out++] = cfg->warn[w];
	}
	cfg->nwarn = out;
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
	resolve_switches(cfg, opts);
	resolve_presets(cfg);
	resolve_preset_table(cfg);
	resolve_rules(cfg, opts);
	resolve_unprotect(cfg, opts);
	resolve_allow_unix(cfg, opts);
	resolve_env(cfg, opts);
	resolve_network(cfg, opts);
	resolve_warnings(cfg);
	drop_decided(cfg, opts);
	return ward_cfg_result(cfg, before);
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
	if (user && *user && !ward_cfg_store(cfg, &cfg->user_hint, user))
		return ward_cfg_result(cfg, ward_cfg_emark(cfg));
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
	/* Made canonical once: the resolve takes it for the same path. */
	cfg->ws_loaded = ws;
	cfg->ws_loaded_real = real;
	err = ward_config_resolve(cfg, opts);
	ws = cfg->ws_loaded;
	real = cfg->ws_loaded_real;
	cfg->ws_loaded = cfg->ws_loaded_real = NULL;
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
	free(cfg->ign_key);
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

bool ward_config_keep_new_repos(const ward_config *cfg,
				struct ward_config_origin *from)
{
	get_from(cfg, K_KEEP_NEW_REPOS, from);
	return cfg->keep_new_repos;
}

bool ward_config_allow_home_workspace(const ward_config *cfg,
				      struct ward_config_origin *from)
{
	get_from(cfg, K_ALLOW_HOME, from);
	return cfg->allow_home;
}

unsigned ward_config_quarantine_quota_mb(const ward_config *cfg,
					 struct ward_config_origin *from)
{
	get_from(cfg, K_QUARANTINE_QUOTA, from);
	return cfg->quota_mb ? cfg->quota_mb : WARD_QUARANTINE_QUOTA_MB;
}

unsigned ward_config_quarantine_days(const ward_config *cfg,
				     struct ward_config_origin *from)
{
	get_from(cfg, K_QUARANTINE_DAYS, from);
	return cfg->days ? cfg->days : WARD_QUARANTINE_RETENTION_DAYS;
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
	/* Made canonical when the configuration was resolved. */
	err = ward_policy_new_real(&p, mode, ws, ws);
	if (!err)
		err = ward_policy_set_rules(p, ward_config_rules(cfg));
	if (!err)
		err = ward_policy_set_protect_git(
		    p, ward_config_protect_git(cfg, NULL));
	if (!err)
		err = ward_policy_set_unprotected(
		    p, ward_config_unprotect(cfg, NULL));
	if (!err)
		err = ward_policy_set_allow_unix(
		    p, ward_config_allow_unix(cfg, NULL));
	if (!err)
		err = ward_policy_set_keep_new_repos(
		    p, ward_config_keep_new_repos(cfg, NULL));
	if (!err)
		err = ward_policy_set_allow_home_workspace(
		    p, ward_config_allow_home_workspace(cfg, NULL));
	if (!err)
		err = ward_policy_set_quarantine(
		    p,
		    (uint64_t)ward_config_quarantine_quota_mb(cfg, NULL) << 20,
		    (int64_t)ward_config_quarantine_days(cfg, NULL) * 86400);
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
	if (version == 4) {
		/* A version-4 struct ends before keep_new_repos. */
		memcpy(opts, &init,
		       offsetof(struct ward_config_options, keep_new_repos));
		opts->version = 4;
		return 0;
	}
	if (version != WARD_CONFIG_OPTIONS_VERSION)
		return ward_bad_version("config options", version,
					WARD_CONFIG_OPTIONS_VERSION);
	*opts = init;
	return 0;
}
