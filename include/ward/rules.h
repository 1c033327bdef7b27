/*
 * ward — access rules: `rw <path>`, `r- <path|glob>`, `-- <path|glob>`.
 *
 * Rules widen (rw) or narrow (r-, --) what a mode allows, on every runner
 * and in the in-process file fence. Precedence: `--` > `r-` > `rw` and the
 * platform's writable roots. `read-only` adds no `rw` roots but keeps `r-`
 * and `--`; the fence applies `r-`/`--` even in danger-full-access.
 *
 * Loading is where every error surfaces (plan, then apply): an entry with a
 * missing or unknown prefix, a prefix without a path, a glob in an `rw`
 * entry, an unset or empty `{{ env.NAME }}`, a malformed glob — each is a
 * load error whose detail names the entry (and its origin, e.g. a file and
 * line, when the caller gives one).
 */
#ifndef WARD_RULES_H
#define WARD_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

WARD_BEGIN_DECL

typedef struct ward_rules ward_rules;

enum ward_access {
	/** No rule matched: the mode and writable roots decide. */
	WARD_ACCESS_DEFAULT = 0,
	/** `rw`: an extra writable root. */
	WARD_ACCESS_RW,
	/** `r-`: readable, not writable. */
	WARD_ACCESS_RO,
	/** `--`: neither readable nor writable. */
	WARD_ACCESS_NONE,
};

/** Where an entry came from, for error messages and `ward config check`. */
struct ward_rule_origin {
	const char *file; /* NULL: command line / API */
	unsigned line;	  /* 0: unknown */
};

/** Context for expanding entries at load time. */
struct ward_rules_env {
	/** The session's workspace: relative paths resolve against it. */
	const char *workspace;
	/** Home directory for `~/`; NULL: $HOME. */
	const char *home;
	/**
	 * Variable lookup for `{{ env.NAME }}`; NULL: getenv(). Returns NULL
	 * for unset.
	 */
	const char *(*getenv)(void *ctx, const char *name);
	void *getenv_ctx;
};

/**
 * ward_rules_new - an empty rule set, holding one reference (the caller's).
 * Release it with ward_rules_free() (or ward_rules_unref()).
 */
WARD_EXTERN int ward_rules_new(ward_rules **out);
/**
 * ward_rules_free - drop the caller's reference; the set is freed with the
 * last one (a policy holds its own: see ward_policy_set_rules()). NULL ok.
 */
WARD_EXTERN void ward_rules_free(ward_rules *rules);
/**
 * ward_rules_ref / ward_rules_unref - take and drop a reference (atomic;
 * any thread). A rule set is immutable once shared: add entries only while
 * you hold the only reference. Both accept NULL; ref returns @rules.
 */
WARD_EXTERN const ward_rules *ward_rules_ref(const ward_rules *rules);
WARD_EXTERN void ward_rules_unref(const ward_rules *rules);

/**
 * ward_rules_add - parse one entry ("rw /path", "r- /srv/keys", …) and add
 * it. @origin may be NULL. Returns 0 or WARD_EINVAL (detail names the
 * entry and origin); on error the set is unchanged.
 */
WARD_EXTERN int ward_rules_add(ward_rules *rules, const char *entry,
			       const struct ward_rules_env *env,
			       const struct ward_rule_origin *origin);

/**
 * ward_rules_add_text - parse a multi-line text, one entry per line; blank
 * lines are ignored. @origin->line is the line of the text's first line.
 * All-or-nothing: on error the set is unchanged.
 */
WARD_EXTERN int ward_rules_add_text(ward_rules *rules, const char *text,
				    const struct ward_rules_env *env,
				    const struct ward_rule_origin *origin);

/** ward_rules_count - the number of entries. */
WARD_EXTERN size_t ward_rules_count(const ward_rules *rules);

/** One loaded entry, as `ward config check` and the profiles see it. */
struct ward_rule_info {
	enum ward_access access;
	/** Absolute path (literal) or absolute glob pattern, expanded. */
	const char *pattern;
	bool is_glob;
	/** The literal directory prefix of a glob (the whole path if literal). */
	const char *literal_prefix;
	/** The compiled POSIX ERE, anchored (also used in Seatbelt). */
	const char *regex;
	/** The entry as written. */
	const char *source;
	struct ward_rule_origin origin;
};

/**
 * ward_rules_get - entry @i (0-based, in load order). Pointers are owned by
 * @rules. Returns 0 or -ERANGE.
 */
WARD_EXTERN int ward_rules_get(struct ward_rule_info *out,
			       const ward_rules *rules, size_t i);

/**
 * ward_rules_match - the access the rules give the absolute, normalised
 * @path: the strongest matching kind by precedence (`--` > `r-` > `rw`),
 * WARD_ACCESS_DEFAULT when nothing matches. A literal `r-`/`--` entry
 * covers itself and everything below it; an `rw` entry likewise. Thread-safe
 * on a set that is no longer being modified.
 */
WARD_EXTERN enum ward_access ward_rules_match(const ward_rules *rules,
					      const char *path);

/**
 * ward_rules_find - which entry decides @path (absolute): the first entry,
 * in load order, of the kind ward_rules_match() answers that covers it.
 * For reports ("denied by rule \"-- .env\" (ward.yml:3)"); slower than
 * ward_rules_match (a scan of every entry). Returns 0 and *index, -ENOENT
 * when no entry matches, or WARD_EINVAL.
 */
WARD_EXTERN int ward_rules_find(size_t *index, const ward_rules *rules,
				const char *path);

/**
 * ward_glob_to_regex - compile a glob into an anchored POSIX ERE that both
 * regcomp(REG_EXTENDED) and Seatbelt's (regex #"…") accept: `*` and `?` do
 * not cross `/`, `**` does, `**\/` also matches zero levels, `[ab]`,
 * `[!ab]`; every other regex metacharacter is escaped. The caller frees *out with
 * ward_free().
 * WARD_EINVAL for a malformed glob (e.g. an unbalanced bracket).
 */
WARD_EXTERN int ward_glob_to_regex(char **out, const char *glob);

WARD_END_DECL

#endif
