/*
 * ward — the configuration's internals, shared by its modules (internal
 * to libward): config.c (layers, resolve, load, the object), config_parse.c
 * (errors and warnings, the YAML tree, parsing in a child) and
 * config_schema.c (what each key may say).
 */
#ifndef WARD_CONFIG_INTERNAL_H
#define WARD_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "libward/internal.h"
#include "ward/config.h"

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
	K_KEEP_NEW_REPOS,
	K_ALLOW_HOME,
	K_QUARANTINE_QUOTA,
	K_QUARANTINE_DAYS,
	K_COUNT
};

/* --- the YAML tree ------------------------------------------------------ */

enum ytype {
	Y_SCALAR,
	Y_SEQ,
	Y_MAP
};

/* How a scalar was written. */
enum ystyle {
	Y_PLAIN,
	Y_SINGLE_QUOTED,
	Y_DOUBLE_QUOTED,
	Y_LITERAL, /* | */
	Y_FOLDED   /* > */
};

struct ynode {
	enum ytype type;
	unsigned line;	   /* 1-based start line */
	unsigned end_line; /* scalars: 1-based end line */
	enum ystyle style;
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
	bool keep_new_repos;	     /* user file only */
	bool allow_home;	     /* allow_home_workspace, user file only */
	unsigned quota_mb, days;     /* the quarantine's */
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
	 * ignored (a project file is a ceiling): their indexes, and the key
	 * each is about (static storage). */
	size_t *ign;
	const char **ign_key;
	size_t nign;
	bool oom;
	bool resolved;
	char *user_hint; /* the user file path for messages */
	/* Effective values, after resolve. */
	struct ward_config_origin from[K_COUNT];
	enum ward_mode mode;
	char *workspace; /* canonical */
	/* What ward_config_load() made canonical before the resolve, and
	 * from what: the resolve takes it for the same workspace. */
	char *ws_loaded, *ws_loaded_real;
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
	/* User-only switches, and the quarantine (0: the default). */
	bool keep_new_repos;
	bool allow_home;
	unsigned quota_mb, days;
};

/* --- errors and warnings, the tree (config_parse.c) ---------------------- */

/* How many errors have been reported so far: a mark for ward_cfg_result(). */
struct emark {
	size_t nerr;  /* kept */
	size_t nfail; /* reported */
};

/* Quote @s (at most @n bytes) for a message into @dst; returns @dst. */
const char *ward_cfg_quote(char *dst, size_t size, const char *s, size_t n);
/*
 * Record an error "FILE:LINE: KEY: message" (the parts that are known; a
 * flag is named "--KEY" instead of a file).
 */
void ward_cfg_err(ward_config *cfg, enum ward_config_layer layer,
		  const char *file, unsigned line, const char *key,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* Record a warning. */
void ward_cfg_warn(ward_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A value the project file asked for that would widen the sandbox: record
 * "FILE:LINE: KEY: ignored: …" as a warning (and as ignored; @key has
 * static storage). */
void ward_cfg_ignore(ward_config *cfg, const char *file, unsigned line,
		     const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
struct emark ward_cfg_emark(const ward_config *cfg);
/* 0, or WARD_EINVAL with the first error since @before as the detail
 * (-ENOMEM wins). */
int ward_cfg_result(const ward_config *cfg, struct emark before);

void ward_ynode_free(struct ynode *y);
/* The tree of @text (NULL on an error, recorded; *ok false), parsed with
 * libyaml in this process (config_parse.c). */
struct ynode *ward_cfg_parse_layer(ward_config *cfg,
				   enum ward_config_layer layer,
				   const char *file, const char *text,
				   size_t len, bool *ok);

/* --- the schema (config_schema.c) ----------------------------------------- */

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
	ward_cfg_err((ps)->cfg, (ps)->layer, (ps)->file, (line), (ps)->key,    \
		     __VA_ARGS__)

/* strdup(@s) into *@slot; false (cfg->oom set) on ENOMEM. */
bool ward_cfg_store(ward_config *cfg, char **slot, const char *s);
/* `~` and `~/…` against @home; anything else copied. NULL after an error. */
char *ward_cfg_expand_home(struct pstate *ps, unsigned line, const char *s,
			   const char *home);
/* Walk the top-level mapping of a layer's tree into @L. */
void ward_cfg_walk_root(ward_config *cfg, struct layer *L,
			enum ward_config_layer layer, const struct ynode *root);

#endif
