/*
 * ward — protected paths (internal to libward).
 *
 * Two kinds of path stay read-only inside the writable roots whatever the
 * access rules say (they act as implicit `r-` rules that `rw` cannot
 * override):
 *
 *   forced   ward's own user configuration directory ($XDG_CONFIG_HOME/ward
 *            or ~/.config/ward), its session store ($XDG_STATE_HOME/ward or
 *            ~/.local/state/ward) and the project's <workspace>/.ward: in
 *            every confined mode, on every runner, and in the fs fence in
 *            every mode. Nothing inside a sandbox may widen a sandbox.
 *   git      the persistence traps of the workspace's repository: the
 *            hooks directory and the config file of its real git directory
 *            (a `.git` FILE, as in worktrees and submodules, is followed to
 *            the gitdir it names, and a worktree's `commondir` to the shared
 *            one), and the `.git` file itself. Only under workspace-write,
 *            and only while ward_policy_protect_git() is true. The index,
 *            objects, refs and logs stay writable, so `git commit` works.
 *
 * Paths are canonical as far as they exist (realpath of the longest
 * existing prefix; the rest is appended lexically).
 */
#ifndef WARD_PROTECT_H
#define WARD_PROTECT_H

#include <stdbool.h>
#include <stddef.h>

#include "ward/ward.h"

enum ward_protect_kind {
	/* ward's user configuration or session store (outside the project). */
	WARD_PROTECT_HOME = 0,
	/* The project's .ward directory. */
	WARD_PROTECT_PROJECT,
	/* A git persistence trap (hooks, config, the .git file). */
	WARD_PROTECT_GIT,
};

struct ward_protected {
	char *path; /* canonical as far as it exists */
	enum ward_protect_kind kind;
	const char *what; /* static: "ward's configuration directory", … */
};

/*
 * ward_protect_list - the protected paths of @policy for its mode: the
 * forced ones always (a caller that confines nothing decides what to do
 * with them), the git ones only under workspace-write with git protection
 * on. The caller frees the vector with ward_protect_free(). Returns 0 or
 * -ENOMEM.
 */
int ward_protect_list(struct ward_protected **out, size_t *out_len,
		      const ward_policy *policy);
void ward_protect_free(struct ward_protected *v, size_t n);

/*
 * ward_protect_match - WARD_ACCESS_RO when the canonical @path is a
 * protected path of @policy or lies beneath one, else WARD_ACCESS_DEFAULT.
 * For the fs fence: it asks for mutations only.
 */
enum ward_access ward_protect_match(const ward_policy *policy,
				    const char *path);

/*
 * ward_protect_inside - whether a protected path of @policy lies strictly
 * beneath the canonical directory @dir (a tree that is removed or moved
 * would take it along).
 */
bool ward_protect_inside(const ward_policy *policy, const char *dir);

/* True when @path is @dir or lies beneath it (lexically; "/" holds all). */
bool ward_path_within(const char *path, const char *dir);

/*
 * ward_path_canon - @path (absolute, normalised) made canonical as far as
 * it exists: the realpath of its longest existing prefix, the rest
 * appended as is. A malloc'd string, or NULL on ENOMEM.
 */
char *ward_path_canon(const char *path);

#endif
