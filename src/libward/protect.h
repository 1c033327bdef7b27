/*
 * ward — protected paths (internal to libward).
 *
 * Paths that stay read-only (or hidden) inside the writable roots whatever
 * the access rules say: implicit `r-` (or `--`) rules that `rw` cannot
 * override.
 *
 *   home     ward's user configuration directory ($XDG_CONFIG_HOME/ward or
 *            ~/.config/ward): read-only; ward's state directory
 *            ($XDG_STATE_HOME/ward or ~/.local/state/ward: the session
 *            store and the probe cache) and a session's own store when it
 *            lies elsewhere: hidden (WARD_ACCESS_NONE: not even readable,
 *            so a confined process can neither read a session log nor
 *            hold its lock). In every confined mode, on every runner, and
 *            in the fs fence in every mode.
 *   project  the project's <workspace>/.ward: read-only, like home, also
 *            when it does not exist yet. Nothing inside a sandbox may
 *            widen a sandbox.
 *   git      the persistence traps of the workspace's repository, under
 *            workspace-write while ward_policy_protect_git() is true. For
 *            every git directory git may use here (the repository's, its
 *            submodules' under modules/, its linked worktrees' under
 *            worktrees/): `hooks`, `config`, and the two files that
 *            redirect git when they appear: `commondir` (git reads it in
 *            ANY git directory and takes config and hooks from the
 *            directory it names) and `config.worktree`; for a linked
 *            worktree also its `gitdir`. Missing ones are listed too (the
 *            fence refuses to create them; bwrap cannot bind a missing
 *            path, the guard below checks them after the run). A `.git`
 *            FILE (worktree, submodule) is followed to the gitdir it names
 *            and protected itself; a `.git` SYMLINK is resolved and
 *            protected itself (WARD_PROTECT_LINK). `commondir` is trusted
 *            only in a real linked worktree's gitdir (<common>/worktrees/
 *            <name>, reached through a `.git` file, whose commondir names
 *            <common>); anywhere else ward protects the gitdir's own hooks
 *            and config and says so in a note. The repository's
 *            configuration (its `config` and `config.worktree`, and the
 *            files they include that lie in the workspace, read by a
 *            bounded parser, gitconfig.h) is read for the places git runs
 *            code from: the `core.hooksPath` directory and every
 *            `include.path`/`includeIf.*.path` file are protected too
 *            when they lie in a writable root (missing ones included); an
 *            include outside the workspace is protected but not read. The
 *            index, objects, refs and logs stay writable, so `git commit`
 *            works.
 *   trap     other files and directories in the workspace that tools run
 *            code from without asking: `.husky`, `.mcp.json`, `.vscode`,
 *            `.idea`, `.claude`, `.envrc`. Under workspace-write, missing
 *            ones included.
 *
 * The user's own configuration may release git and trap paths
 * (ward_policy_set_unprotected(): a released path and everything beneath
 * it is not protected); home and project paths are never released.
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
	/* ward's user configuration or state directory (outside the
	 * project), or a session's store. */
	WARD_PROTECT_HOME = 0,
	/* The project's .ward directory. */
	WARD_PROTECT_PROJECT,
	/* A git persistence trap (hooks, config, the .git file, the
	 * hooksPath directory, included config files). */
	WARD_PROTECT_GIT,
	/* Another persistence trap in the workspace (.vscode, .envrc, …). */
	WARD_PROTECT_TRAP,
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
	/* WARD_ACCESS_RO (read-only) or WARD_ACCESS_NONE (hidden). */
	enum ward_access access;
};

/*
 * ward_protect_list - the protected paths of @policy for its mode: home
 * and project always (a caller that confines nothing decides what to do
 * with them), git and trap only under workspace-write. The vector is one
 * allocation (the paths follow the entries; NULL when there are none):
 * the caller frees it with free(). Returns 0 or -ENOMEM.
 */
int ward_protect_list(struct ward_protected **out, size_t *out_len,
		      const ward_policy *policy);
/*
 * ward_policy_protected - ward_protect_list() computed once per policy and
 * kept in it: the vector is borrowed from the policy (valid while it lives
 * and no setter is called).
 */
int ward_policy_protected(const struct ward_protected **out, size_t *out_len,
			  const ward_policy *policy);
/*
 * The policy's side of that cache (policy.c). _cached: whether the policy
 * keeps a list, then borrowed into *out. _keep: make @v (from
 * ward_protect_list(), consumed) the policy's list unless another thread
 * kept one first (then @v is freed), and borrow the kept one into *out:
 * every reader of one policy sees the same list.
 */
bool ward_policy_protected_cached(const struct ward_protected **out,
				  size_t *out_len, const ward_policy *policy);
void ward_policy_protected_keep(const struct ward_protected **out,
				size_t *out_len, const ward_policy *policy,
				struct ward_protected *v, size_t n);

/*
 * ward_protect_notes - what the scan of the repository found that the
 * user should know (a symlinked `.git`, a `commondir` ward does not trust,
 * more submodules than it scans, a git include or hooks directory ward
 * does not read or cannot protect), one sentence each, for the warnings of
 * every runner. @links: include the notes about symbolic links (a runner
 * that protects a link itself, Seatbelt, does not need them). An empty
 * vector when there is nothing to say. The caller frees *out with
 * ward_strv_free(). Returns 0 or -ENOMEM.
 */
int ward_protect_notes(char ***out, const ward_policy *policy, bool links);

/*
 * The guard: the protected paths (git, trap, project) that lie in a
 * writable root are snapshotted before a confined run under
 * workspace-write and checked after it, when nothing of the run is left
 * (bwrap's pid namespace is gone; descendants are contained). It covers
 * what a runner cannot keep: a missing path on bwrap (a bind needs a mount
 * point), everything inside a writable root on Landlock, a `.git` symlink
 * on both.
 *
 * The snapshot is complete or the call does not run: a regular file's
 * content (its bytes, within a budget: they are compared byte for byte
 * and put back; beyond the budget its SHA-256 digest), a symlink's
 * target, a directory's entries recursively, and each entry's type and
 * permission bits. Never sizes and time stamps: a
 * command can restore both. A guarded tree with more entries than
 * GUARD_ENTRIES_MAX, or more content than GUARD_HASH_MAX, cannot be
 * checked, and ward_protect_guard_new() fails (WARD_EINVAL) with a
 * detail that names it and says what to do.
 *
 * After the run, everything that differs is moved out of the workspace
 * to the quarantine, a directory of ward's state directory (hidden from
 * every confined run, so nothing confined can put a file back from
 * there; git never looks there):
 *
 *     $XDG_STATE_HOME/ward/quarantine/<time>-<pid>-<n>/<absolute path>
 *
 * (across file systems: copied, then removed), and the snapshot is put
 * back: an added entry is moved away; a changed file, symlink or
 * directory is moved away and its original restored (a file whose bytes
 * were not kept is reported lost); a removed one is restored; changed
 * permission bits are set back. Entries added in any number are all
 * handled (no cap). The calls of one process that are guarded at the same
 * time on the same paths share the snapshot the first of them took (a
 * later one must not take an earlier one's plant for the original).
 * Every step works relative to a directory descriptor
 * whose identity (device, inode) matches the snapshot, never through a
 * symlink, so a run that replaced a parent with a link cannot aim the
 * guard elsewhere.
 */
struct ward_protect_guard;

/*
 * ward_protect_guard_new - snapshot the guarded paths of @policy. *out is
 * NULL (nothing to guard) unless the policy is workspace-write and a
 * protected path lies in a writable root. Free it with
 * ward_protect_guard_free(). Returns 0, WARD_EINVAL (a tree too large to
 * check: the call must not run; the detail says which and what to do) or
 * -ENOMEM.
 */
int ward_protect_guard_new(struct ward_protect_guard **out,
			   const ward_policy *policy);
/*
 * ward_protect_guard_new_for - the same for a run under @runner: under
 * bwrap (and a custom bwrap-compatible runner) a protected path that
 * exists is bound read-only inside the sandbox, so a change to it during
 * the run came from outside (the user's editor rewriting .idea, a `git
 * config` in another terminal) and is none of the guard's business; only
 * missing paths and symlinks are guarded there. Any other runner: as
 * ward_protect_guard_new().
 */
int ward_protect_guard_new_for(struct ward_protect_guard **out,
			       const ward_policy *policy,
			       enum ward_runner runner);

/*
 * ward_protect_guard_check - after the run: put back what changed (see
 * above). *notes gets one sentence per finding, starting "ward: ", for the
 * caller to show loudly (an empty vector when nothing changed); the caller
 * frees it with ward_strv_free(). No note quotes strerror(): they may end
 * up in the stderr the classifier reads for denial signatures. @guard may
 * be NULL (nothing to check). Returns 0 or -ENOMEM; a step that fails is a
 * note, not an error.
 */
int ward_protect_guard_check(char ***notes, struct ward_protect_guard *guard);
void ward_protect_guard_free(struct ward_protect_guard *guard);

/*
 * ward_protect_quarantine_base - where the guard moves what it takes out
 * of the workspace ($XDG_STATE_HOME/ward/quarantine, or
 * ~/.local/state/ward/quarantine), into @buf. NULL when there is none.
 */
const char *ward_protect_quarantine_base(char *buf, size_t len);

/*
 * ward_protect_match - the strongest protection of the canonical @path:
 * WARD_ACCESS_NONE (hidden) or WARD_ACCESS_RO when it is a protected path
 * of @policy or lies beneath one, else WARD_ACCESS_DEFAULT. For the fs
 * fence: RO concerns mutations, NONE every operation.
 */
enum ward_access ward_protect_match(const ward_policy *policy,
				    const char *path);

/*
 * ward_protect_inside - whether a protected path of @policy lies strictly
 * beneath the canonical directory @dir (a tree that is removed or moved
 * would take it along).
 */
bool ward_protect_inside(const ward_policy *policy, const char *dir);

/*
 * ward's state directory ($XDG_STATE_HOME/ward, else
 * ~/.local/state/ward; the password database's home when $HOME is not
 * absolute), canonical as far as it exists. NULL when there is none (or
 * on ENOMEM). The caller frees it.
 */
char *ward_state_dir(void);

/* "." or "..": shared by the scan (protect.c) and the guard (guard.c). */
static inline bool is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

#endif
