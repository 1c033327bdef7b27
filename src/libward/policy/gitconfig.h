/*
 * ward — the few git configuration keys the protected paths depend on
 * (internal to libward).
 *
 * git runs code from places its configuration names: `core.hooksPath` (a
 * hooks directory anywhere, husky's `.husky/_`), and the files that
 * `include.path` and `includeIf.<condition>.path` pull in, which may set
 * `core.fsmonitor`, `core.sshCommand`, aliases... When those places lie
 * in the workspace, a confined command could plant code there that the
 * user's next (unconfined) git runs. protect.c protects them; this module
 * finds them.
 *
 * A small bounded parser of git's configuration syntax instead of running
 * `git config`: it costs no process on every call, and it cannot be made
 * to run anything. It follows the syntax git's own parser accepts (see
 * git-config(1), "Syntax"): `[section]`, `[section "subsection"]` (escapes
 * \" and \\; other backslashes drop), the deprecated `[section.sub]`,
 * `name = value` and a bare `name` (true), `#` and `;` comments, quoted
 * value parts, the escapes \n \t \b \\ \" and a backslash-newline
 * continuation, whitespace trimmed around unquoted text, CRLF, a UTF-8
 * byte order mark, and a key/value after the section header on the same
 * line. Section and key names are case-insensitive; a subsection is not.
 * Where git's parser reports an error (a bad line, an unknown escape, an
 * unterminated quote), git refuses to run at all with that file, so the
 * scan stops there too.
 */
#ifndef WARD_GITCONFIG_H
#define WARD_GITCONFIG_H

#include <stddef.h>

/* The keys of interest. */
enum ward_gitcfg_key {
	WARD_GITCFG_HOOKSPATH, /* core.hooksPath */
	WARD_GITCFG_INCLUDE,   /* include.path, includeIf.*.path */
};

/*
 * Called for every value of a key of interest, in file order: @value is
 * the unquoted, unescaped value (NULL for a bare `name`, which git treats
 * as an error for a path), @line its 1-based line.
 */
typedef void (*ward_gitcfg_fn)(void *ctx, enum ward_gitcfg_key key,
			       const char *value, unsigned line);

/*
 * ward_gitconfig_scan - parse the configuration text @text[0..@len) and
 * report every value of a key of interest to @fn. Returns 0, -EINVAL at
 * the first syntax error (the values before it were reported; *@bad_line
 * names its line when not NULL) or -ENOMEM.
 */
int ward_gitconfig_scan(const char *text, size_t len, ward_gitcfg_fn fn,
			void *ctx, unsigned *bad_line);

#endif
