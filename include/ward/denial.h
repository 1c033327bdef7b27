/*
 * ward — the denial report: which file operation the sandbox refused, on
 * which path, by which rule or mode, and where that rule or mode was set.
 *
 * A call (call.h) gathers it after a command or a file operation ran:
 *
 *   exact     the refusal was reported by whoever refused: the fs fence
 *             (it decides itself, so it knows the path and the rule), or
 *             the kernel's Landlock audit records (ABI >= 7, when ward may
 *             read them: as root, with audit enabled; see docs/RUNNERS.md);
 *   derived   inferred from the command's error output: each line with
 *             "Permission denied", "Read-only file system", "Operation not
 *             permitted" or (for a path a `--` rule hides) "No such file
 *             or directory" is searched for paths, and each path is judged
 *             against the call's plan — its rules, protected paths,
 *             writable roots and mode. A path the plan allows is a plain
 *             permission error, not a denial, and is not reported.
 *
 * Derived entries are a good guess, not a fact: a command may print a
 * path it did not touch, or refuse without printing one.
 */
#ifndef WARD_DENIAL_H
#define WARD_DENIAL_H

#include "common.h"
#include "mode.h"

WARD_BEGIN_DECL

/** How a denial is known. */
enum ward_denial_how {
	WARD_DENIAL_DERIVED = 0, /* inferred from the error output */
	WARD_DENIAL_EXACT,	 /* reported by the fence or the kernel */
};

/** What refused it. */
enum ward_denial_cause {
	/** The mode: the path lies outside every writable root (or the
	 *  mode is read-only). */
	WARD_DENIAL_MODE = 0,
	/** An access rule (`r-` or `--`). */
	WARD_DENIAL_RULE,
	/** A protected path (ward's own state, the project's .ward, git
	 *  hooks and config, other tools' settings): read-only whatever the
	 *  rules say; ward's state directory is hidden (even a read). */
	WARD_DENIAL_PROTECTED,
};

/** One refused operation. Strings are owned by whoever returned it. */
struct ward_denial {
	/** The absolute path refused; NULL when no path could be told. */
	const char *path;
	/** "read", "write", "create", "remove", "move", "list", "execute"
	 *  or "access" (when it cannot be told). */
	const char *operation;
	enum ward_denial_cause cause;
	/** The mode in force for the call. */
	enum ward_mode mode;
	/** RULE: the entry as written ("-- .env"); PROTECTED: what the path
	 *  is ("git hooks"); MODE: NULL. */
	const char *rule;
	/** Where the rule or the mode was set: "FILE:LINE", "--access",
	 *  "--mode", "session ID", "escalation", "built-in default",
	 *  "built in" (protected paths); NULL when unknown. */
	const char *source;
	enum ward_denial_how how;
};

/** "mode", "rule", "protected". Static storage. */
WARD_EXTERN const char *ward_denial_cause_name(enum ward_denial_cause cause);
/** "derived", "exact". Static storage. */
WARD_EXTERN const char *ward_denial_how_name(enum ward_denial_how how);

WARD_END_DECL

#endif
