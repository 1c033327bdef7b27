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
/*
 * Markers: entries with access WARD_ACCESS_DEFAULT, which no runner keeps
 * read-only (every consumer of the list skips them, see
 * ward_protected_kept()); the guard and the fence act on them.
 *
 * WARD_PROTECT_REPO: a repository's `.git` directory. Its objects, refs
 * and index change in every commit, so it stays writable; the guard checks
 * that it is still the same directory (replaced, the replacement is taken
 * away), and a `.git` that was not one of these when the call began is a
 * new repository.
 *
 * WARD_PROTECT_NEWONLY: a directory where git finds more repositories
 * (<gitdir>/modules, <gitdir>/worktrees). What is in it stays writable (a
 * submodule's fetch writes there); a new entry is a new repository: the
 * fence refuses to make one and the guard takes one that appeared away.
 */
#define WARD_PROTECT_REPO    0x2u
#define WARD_PROTECT_NEWONLY 0x4u

struct ward_protected {
	char *path; /* canonical as far as it exists */
	enum ward_protect_kind kind;
	const char *what; /* static: "ward's configuration directory", … */
	unsigned flags;	  /* WARD_PROTECT_LINK */
	/* WARD_ACCESS_RO (read-only) or WARD_ACCESS_NONE (hidden). */
	enum ward_access access;
	/* What the scan saw there (lstat: a link is a file), so that the
	 * plan does not look again: WARD_SEEN_*. */
	unsigned char seen;
};

#define WARD_SEEN_UNKNOWN 0 /* not looked at: the plan looks */
#define WARD_SEEN_MISSING 1
#define WARD_SEEN_FILE	  2
#define WARD_SEEN_DIR	  3

/* What the scan saw at @pr (lstat), or looked now when it did not: whether
 * it exists, and *@is_dir. */
bool ward_protected_probe(const struct ward_protected *pr, bool *is_dir);

/* Whether @pr is kept read-only (or hidden), not a marker. */
static inline bool ward_protected_kept(const struct ward_protected *pr)
{
	return pr->access != WARD_ACCESS_DEFAULT;
}

/*
 * ward_protect_list - the protected paths of @policy for its mode: home
 * and project always (a caller that confines nothing decides what to do
 * with them), git and trap only under workspace-write. The vector is one
 * allocation (the paths follow the entries; NULL when there are none):
 * the caller frees it with free(). Returns 0 or -ENOMEM.
 */
int ward_protect_list(struct ward_protected **out, size_t *out_len,
		      const ward_policy *policy);
struct ward_facts;
/*
 * ward_protect_compute - the list of @policy with its writable @roots
 * (facts.c keeps it for the call): the vector as ward_protect_list()
 * makes it, why it cannot be made (*@refused, NULL when it can) and the
 * notes of the scan (*@said, each led by a mark byte that
 * ward_protect_notes_of() reads). @scan false: only the paths named by
 * the policy and the environment (ward's own directories, the session's
 * store, the project's `.ward`), not the writable roots' traps and
 * repositories, which are read-only and so limit no read (facts.h,
 * WARD_FACTS_READS). @keep: NULL, or where the walk of the roots keeps
 * the directories it read (listings.h; the caller's). Returns 0 or
 * -ENOMEM.
 */
struct ward_listings;
int ward_protect_compute(struct ward_protected **out, size_t *out_len,
			 char **refused, char ***said,
			 const ward_policy *policy, char *const *roots,
			 bool scan, struct ward_listings *keep);

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
/* The same from the facts of a call. */
int ward_protect_notes_of(char ***out, const struct ward_facts *f, bool links);

/*
 * ward_repo_walk - find every entry named `.git` beneath the directory
 * @root (its own `.git` included), not inside one, never through a
 * symbolic link. Directories for which @skip says true are not entered.
 * @found gets each `.git` (relative to an open descriptor of its
 * directory, and its absolute path). With @max_entries (0: no bound) or
 * @max_depth reached, or a directory that cannot be opened for want of
 * descriptors or memory, the walk stops and @over is set, @at naming where.
 * With @keep, every directory read to its end is kept there
 * (listings.h), each entry's d_type made known (DT_UNKNOWN only when its
 * lstat failed). A large tree is read by helper threads as well
 * (policy/repowalk.c): @found runs one call at a time, in the order the
 * walkers reached the entries, and @skip may run in several threads at
 * once (it must only read). Every helper has ended when it returns.
 * Returns 0 or -errno (@root cannot be opened).
 */
/*
 * How deep every walk for repositories looks (below its root): deeper than
 * the fence makes directories (FENCE_MAX_DEPTH, counted from /), so a tree
 * the fence may make and remove is one the walk sees whole. One descriptor
 * per level is held (per walker), and one per directory handed to a
 * helper.
 */
#define REPO_WALK_DEPTH_MAX 512

struct ward_repo_walk {
	size_t max_entries;
	unsigned max_depth;
	bool (*skip)(void *ctx, const char *path);
	void (*found)(void *ctx, int dirfd, const char *name, const char *path);
	void *ctx;
	/* NULL, or where each directory read to its end is kept: only
	 * the walk before a call, never the guard's after it. */
	struct ward_listings *keep;
	size_t entries; /* out: entries looked at (added to) */
	bool over;	/* out: a bound was reached */
	char at[4096];	/* out: where */
};
int ward_repo_walk(struct ward_repo_walk *w, const char *root);

/*
 * ward_protect_walk_roots - the writable @roots of @policy that ward walks
 * for repositories (the workspace and the `rw` roots: the shared temporary
 * directories /tmp and $TMPDIR are checked at their top only), into
 * *@out (NULL-terminated; the caller frees it with ward_strv_free()).
 * Returns 0 or -ENOMEM.
 */
int ward_protect_walk_roots(char ***out, const ward_policy *policy,
			    char *const *roots);

/*
 * What the walk for repositories leaves alone: the paths the user
 * released (as given and canonical), ward's own directories, /proc, /sys
 * and /dev. _init returns 0 or -ENOMEM; _has: whether @path (canonical)
 * is one of them or lies beneath one.
 */
struct ward_skipset {
	char **v;
	size_t n;
};
int ward_skipset_init(struct ward_skipset *k, const ward_policy *policy);
bool ward_skipset_has(const struct ward_skipset *k, const char *path);
void ward_skipset_free(struct ward_skipset *k);

/*
 * ward_protect_match - the strongest protection of the canonical @path:
 * WARD_ACCESS_NONE (hidden) or WARD_ACCESS_RO when it is a protected path
 * of @policy or lies beneath one, else WARD_ACCESS_DEFAULT. For the fs
 * fence: RO concerns mutations, NONE every operation.
 */
enum ward_access ward_protect_match(const ward_policy *policy,
				    const char *path);
/* The same with the call's facts @f (NULL: WARD_ACCESS_NONE). */
enum ward_access ward_protect_match_in(const ward_policy *policy,
				       const struct ward_facts *f,
				       const char *path);

/*
 * ward_protect_makes_repo - whether a change to the canonical @path would
 * make a new git repository under @policy with its facts @f (a `.git` on
 * its way that does
 * not exist in a writable root, a new entry right beneath a
 * WARD_PROTECT_NEWONLY directory): what ward_protect_match() refuses
 * although no entry of the list names it.
 */
bool ward_protect_makes_repo(const ward_policy *policy,
			     const struct ward_facts *f, const char *path);

/*
 * ward_protect_inside - whether a protected path of the facts @f lies strictly
 * beneath the canonical directory @dir (a tree that is removed or moved
 * would take it along).
 */
bool ward_protect_inside(const struct ward_facts *f, const char *dir);

/*
 * ward's state directory ($XDG_STATE_HOME/ward, else
 * ~/.local/state/ward; the password database's home when $HOME is not
 * absolute), canonical as far as it exists. NULL when there is none (or
 * on ENOMEM). The caller frees it.
 */
char *ward_state_dir(void);

/*
 * ward_home_dir - the home directory: $HOME when absolute, else the
 * password database's (@buf holds its strings); NULL when there is none.
 */
const char *ward_home_dir(char *buf, size_t len);

/* "." or "..": shared by the scan (protect.c) and the guard (guard.c). */
static inline bool is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

#endif
