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
 *   git      the persistence traps of the workspace's repository, only
 *            under workspace-write and while ward_policy_protect_git() is
 *            true. For every git directory git may use here (the
 *            repository's, its submodules' under modules/, its linked
 *            worktrees' under worktrees/): `hooks`, `config`, and the two
 *            files that redirect git when they appear: `commondir` (git
 *            reads it in ANY git directory and takes config and hooks
 *            from the directory it names) and `config.worktree`; for a
 *            linked worktree also its `gitdir`. Missing ones are listed
 *            too (the fence refuses to create them; bwrap cannot bind a
 *            missing path, the guard below checks them after the run).
 *            A `.git` FILE (worktree, submodule) is followed to the gitdir
 *            it names and protected itself; a `.git` SYMLINK is resolved
 *            and protected itself (WARD_PROTECT_LINK). `commondir` is
 *            trusted only in a real linked worktree's gitdir
 *            (<common>/worktrees/<name>, reached through a `.git` file,
 *            whose commondir names <common>); anywhere else ward protects
 *            the gitdir's own hooks and config and says so in a note.
 *            The index, objects, refs and logs stay writable, so
 *            `git commit` works.
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

/*
 * The path is a symbolic link itself (a `.git` symlink): a mount or a
 * Landlock grant would follow it onto its target, so only the fs fence,
 * Seatbelt and the guard keep the link; its path is canonical up to the
 * parent, the last component is the link's own name.
 */
#define WARD_PROTECT_LINK 0x1u

struct ward_protected {
	char *path; /* canonical as far as it exists */
	enum ward_protect_kind kind;
	const char *what; /* static: "ward's configuration directory", … */
	unsigned flags;	  /* WARD_PROTECT_LINK */
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
/*
 * ward_policy_protected - ward_protect_list() computed once per policy and
 * kept in it (policy.c): the vector is borrowed from the policy.
 */
int ward_policy_protected(const struct ward_protected **out, size_t *out_len,
			  const ward_policy *policy);
void ward_protect_free(struct ward_protected *v, size_t n);

/*
 * ward_protect_notes - what the scan of the repository found that the
 * user should know (a symlinked `.git`, a `commondir` ward does not trust,
 * more submodules than it scans), one sentence each, for the warnings of
 * every runner. @links: include the notes about symbolic links (a runner
 * that protects a link itself, Seatbelt, does not need them). An empty
 * vector when there is nothing to say. The caller frees *out with
 * ward_strv_free(). Returns 0 or -ENOMEM.
 */
int ward_protect_notes(char ***out, const ward_policy *policy, bool links);

/*
 * The guard: the protected git paths a runner may not be able to keep
 * (bwrap cannot bind a missing `commondir`; Landlock nothing inside a
 * writable root; a `.git` symlink can be swapped) are snapshotted before a
 * confined run and checked after it, when nothing of the run is left
 * (bwrap's pid namespace is gone):
 *
 *   - a protected path that appeared (a new `.git/commondir`, a new
 *     hooks directory) or a replacement for one is moved aside to
 *     NAME.ward-quarantine-N in the same directory (git never reads it);
 *   - a protected file (config, commondir, gitdir, config.worktree, the
 *     `.git` file) that changed or vanished gets its old contents back
 *     (up to 1 MiB; larger ones are reported only); a `.git` symlink its
 *     old target;
 *   - an entry added to or changed in a protected hooks directory is moved
 *     aside inside it (the original content of a changed hook is lost);
 *   - a directory whose identity changed (replaced) is moved aside and
 *     reported; its original cannot be put back.
 *
 * Every step works relative to a directory descriptor whose identity
 * (device, inode) matches the snapshot, never through a symlink, so a run
 * that replaced a parent with a link cannot aim the guard elsewhere.
 */
struct ward_protect_guard;

/*
 * ward_protect_guard_new - snapshot the protected git paths of @policy
 * that lie inside a writable root. *out is NULL (nothing to guard) unless
 * the policy is workspace-write with git protection on and the workspace
 * is a repository. Free it with ward_protect_guard_free(). Returns 0 or
 * -ENOMEM.
 */
int ward_protect_guard_new(struct ward_protect_guard **out,
			   const ward_policy *policy);

/*
 * ward_protect_guard_check - after the run: put back what changed (see
 * above). *notes gets one sentence per finding, starting "ward: ", for the
 * caller to show loudly (an empty vector when nothing changed); the caller
 * frees it with ward_strv_free(). No note quotes strerror(): they may end
 * up in the stderr the classifier reads for denial signatures. @guard may be NULL (nothing to check).
 * Returns 0 or -ENOMEM; a step that fails is a note, not an error.
 */
int ward_protect_guard_check(char ***notes, struct ward_protect_guard *guard);
void ward_protect_guard_free(struct ward_protect_guard *guard);

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
