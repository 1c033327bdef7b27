/*
 * ward — hiding paths by mounts, for the Landlock runner.
 *
 * Landlock grants only add up: inside a writable root it cannot take read
 * or write back from one file. A private mount namespace can: /dev/null
 * bound (read-only, nodev) over a hidden file, an empty read-only tmpfs
 * over a hidden directory, a read-only bind of a path onto itself for an
 * `r-` match — the same operations as the bwrap profile (translate_bwrap.c).
 *
 * Like landlock.c, this file depends on libc only: it is compiled into the
 * static landlock-run launcher (which applies the mounts) and into libward
 * (which asks, once per process, whether the launcher will be able to).
 * Nothing here prints, allocates or exits; errors come back as -errno with
 * a message in the caller's buffer.
 */
#ifndef WARD_HIDE_H
#define WARD_HIDE_H

#include <stdbool.h>
#include <stddef.h>

/** What one hide does to its path. */
enum ward_hide_kind {
	WARD_HIDE_NONE, /* `--`: neither readable nor writable */
	WARD_HIDE_RO,	/* `r-`: readable, not writable */
	WARD_HIDE_PIN,	/* bound onto itself as it is: cannot be renamed */
};

/**
 * ward_hide_unshare - give this process a private mount namespace in which
 * mounts made later are neither seen by nor propagated to the host: a new
 * mount namespace when the process may make one (root with
 * CAP_SYS_ADMIN), else a new user namespace mapping the caller's own uid
 * and gid to themselves (setgroups denied) with a mount namespace in it.
 * The process must be single-threaded. Returns 0, or -errno with a
 * message in @err (EPERM, ENOSPC, EINVAL: user namespaces are denied).
 */
int ward_hide_unshare(char *err, size_t err_len);

/**
 * ward_hide_apply - in the namespace ward_hide_unshare() made, apply one
 * hide to @path: a directory gets an empty read-only tmpfs over it, any
 * other file /dev/null bound read-only and nodev over it (open fails with
 * EACCES), and WARD_HIDE_RO binds @path (with what is mounted below it)
 * onto itself read-only, WARD_HIDE_PIN onto itself as it is (a
 * mount point cannot be renamed or removed: EBUSY). The path is opened once (O_PATH|O_NOFOLLOW) and
 * the mount goes onto that descriptor, so no rename during the call can
 * redirect it. The first file cover is kept and cloned for the next
 * files: call ward_hide_end() after the last hide.
 *
 * Skipped, returning 0 with *@skipped set: a path that no longer exists
 * (the plan saw the disk as it was: one removed since only narrows), a
 * path the caller cannot reach (nor can the command, with the same
 * credentials and no capabilities), and a symbolic link — a mount would
 * follow it and hide its target instead; bwrap's profile does the same.
 * Any other failure returns -errno with a message naming @path.
 */
int ward_hide_apply(const char *path, enum ward_hide_kind kind, bool *skipped,
		    char *err, size_t err_len);

/**
 * ward_hide_end - after the last ward_hide_apply(): close the cover the
 * file hides were cloned from (a descriptor kept between calls).
 */
void ward_hide_end(void);

/**
 * ward_hide_possible - whether this process (and a launcher it starts with
 * the same credentials) can hide paths: a child that shares this
 * process's memory (clone(CLONE_VM | CLONE_VFORK), so that nothing of it
 * is copied or write-protected) really makes the namespaces and a mount of
 * each kind in them. The answer is computed once per process
 * (thread-safe) and cached; for libward's plan, never called between fork
 * and exec.
 */
bool ward_hide_possible(void);

#endif
