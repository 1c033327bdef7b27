/*
 * ward — the guard (internal to libward): what no runner can keep of the
 * protected paths, checked after a run.
 */
#ifndef WARD_GUARD_H
#define WARD_GUARD_H

#include <stdbool.h>

#include "libward/internal.h"
#include "ward/ward.h"

struct ward_facts;

/*
 * The guard: the protected paths (policy/protect.h) (git, trap, project) that lie
 * in a writable root are snapshotted before a confined run under
 * workspace-write and checked after it, when nothing of the run is left
 * (bwrap's pid namespace is gone; descendants are contained). It covers
 * what a runner cannot keep: a missing path on bwrap (a bind needs a mount
 * point), everything inside a writable root on Landlock, a `.git` symlink
 * on both; and, on both, a new repository anywhere in the workspace and
 * the `rw` roots (a walk after the run: a `.git` that was not there), a
 * new entry where git finds repositories (WARD_PROTECT_NEWONLY) and a
 * replaced `.git` directory (WARD_PROTECT_REPO).
 *
 * The snapshot is complete or the call does not run: a regular file's
 * content (its bytes, within a budget: they are compared byte for byte
 * and put back; beyond the budget its SHA-256 digest), a symlink's
 * target, a directory's entries recursively, and each entry's type and
 * permission bits. Never sizes and time stamps: a command can restore
 * both. A guarded tree with more entries than GUARD_ENTRIES_MAX, or more
 * content than GUARD_HASH_MAX, cannot be checked, and
 * ward_protect_guard_new() fails (WARD_EINVAL) with a detail that names it
 * and says what to do.
 *
 * The snapshot is shared by every guarded call of every ward process of
 * the user (guardstate.c): a call that starts while others run takes the
 * baseline they took, so it never takes another call's plant for the
 * original, and what is put back is only what was there before any live
 * call began; a ward that died before its check (SIGKILL) leaves its
 * baseline, which the next call checks first.
 *
 * After the run, everything that differs is moved out of the workspace to
 * the quarantine (quarantine.h) and the snapshot is put back: an added
 * entry is moved away; a changed file, symlink or directory is moved away
 * and its original restored (a file whose bytes were not kept is reported
 * lost); a removed one is restored; changed permission bits are set back.
 * Nothing is deleted: what cannot be moved there is renamed beside itself
 * where nothing runs it, and the check says the call failed. Every step
 * works relative to a directory descriptor whose identity (device, inode)
 * matches the snapshot, never through a symlink, so a run that replaced a
 * parent with a link cannot aim the guard elsewhere.
 */
struct ward_protect_guard;

/*
 * ward_protect_guard_new - snapshot the guarded paths of @policy. *out is
 * NULL (nothing to guard) unless the policy is workspace-write and a
 * protected path lies in a writable root. Free it with
 * ward_protect_guard_free(). Returns 0, WARD_EINVAL (a tree too large to
 * check, a damaged guard state: the call must not run; the detail says
 * which and what to do) or -ENOMEM.
 */
int ward_protect_guard_new(struct ward_protect_guard **out,
			   const ward_policy *policy);
/*
 * ward_protect_guard_new_for - the same for a run under @runner: under
 * bwrap (and a custom bwrap-compatible runner) a protected path that
 * exists is bound read-only inside the sandbox, so a change to it during
 * the run came from outside (the user's editor rewriting .idea, a `git
 * config` in another terminal) and is none of the guard's business; only
 * missing paths, symlinks, repositories and new repositories are guarded
 * there. Any other runner: as ward_protect_guard_new().
 */
int ward_protect_guard_new_for(struct ward_protect_guard **out,
			       const ward_policy *policy,
			       enum ward_runner runner);
/* The same with the call's facts @f (facts.h): no second scan. */
int ward_protect_guard_new_facts(struct ward_protect_guard **out,
				 const ward_policy *policy,
				 const struct ward_facts *f,
				 enum ward_runner runner);

/*
 * ward_protect_guard_check - after the run: put back what changed (see
 * above). *notes gets one sentence per finding, starting "ward: ", for the
 * caller to show loudly (an empty vector when nothing changed); the caller
 * frees it with ward_strv_free(). *@failed (may be NULL): something the
 * run left could not be taken out of the workspace (kept beside itself,
 * or stuck): the call must fail. No note quotes strerror(): they may end
 * up in the stderr the classifier reads for denial signatures. @guard may
 * be NULL (nothing to check). Returns 0 or -ENOMEM; a step that fails is a
 * note, not an error.
 */
int ward_protect_guard_check(char ***notes, bool *failed,
			     struct ward_protect_guard *guard);
/* Free a guard; one never checked leaves its baseline for the next call
 * to check (as a ward that died would). */
void ward_protect_guard_free(struct ward_protect_guard *guard);

#endif
