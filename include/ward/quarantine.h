/*
 * ward — the guard's quarantine: what confined runs left in protected
 * places (git hooks and config, new repositories, startup files, editor
 * and agent settings), moved out of the workspace after the run.
 *
 * It lies in ward's state directory ($XDG_STATE_HOME/ward/quarantine, else
 * ~/.local/state/ward/quarantine), hidden from every confined run. Each
 * check that took something made one box, named "<UTC time>-<pid>-<n>";
 * a box lists what it holds and what was only kept beside itself in the
 * workspace (past the quota, no copy possible). Boxes older than the
 * retention are pruned when a new one is made; the quota bounds the whole
 * quarantine (past it, the guard keeps entries in place instead: nothing is
 * ever dropped). See docs/RUNNERS.md, "After the run: the guard".
 */
#ifndef WARD_QUARANTINE_H
#define WARD_QUARANTINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

WARD_BEGIN_DECL

/** One entry of a box. Strings are owned by the listing. */
struct ward_quarantine_item {
	const char *box;  /**< the box's name */
	const char *path; /**< where it was (absolute) */
	const char *what; /**< the protected place it was found in */
	/** Where it is now: in the quarantine, or (kept) in the workspace
	 *  under a name no tool looks up. */
	const char *stored;
	bool kept;	/**< kept beside itself, not in the quarantine */
	bool present;	/**< still there (not restored or removed) */
	int64_t when;	/**< the box's time, UTC seconds */
	uint64_t bytes; /**< allocated bytes when it was taken */
};

typedef struct ward_quarantine ward_quarantine;

/**
 * ward_quarantine_list - read every box, oldest first. *out is an empty
 * listing when there is no quarantine. Free it with ward_quarantine_free().
 * Returns 0, or -errno when the quarantine cannot be read (the detail
 * names it).
 */
WARD_EXTERN int ward_quarantine_list(ward_quarantine **out);
WARD_EXTERN void ward_quarantine_free(ward_quarantine *q);
/** The quarantine's directory, or NULL (no state directory). */
WARD_EXTERN const char *ward_quarantine_dir(const ward_quarantine *q);
WARD_EXTERN size_t ward_quarantine_count(const ward_quarantine *q);
/** Entry @i, or NULL past the end. */
WARD_EXTERN const struct ward_quarantine_item *
ward_quarantine_item(const ward_quarantine *q, size_t i);

/**
 * ward_quarantine_restore - put the entries of box @box back where they
 * were: the one whose original path is @path, or every entry when @path is
 * NULL. Never over anything (an existing path is refused), never through a
 * symbolic link (the original path was canonical; a link on the way means
 * it now leads elsewhere: refused). Moved back (same file system) or
 * copied and then removed from the quarantine. *@restored (may be NULL)
 * gets the number of entries put back. What was restored was written by a
 * confined command: the caller says so. Returns 0, WARD_ENOMATCH (no such
 * box or entry), WARD_EINVAL (refused: the detail names the path and why)
 * or -errno.
 */
WARD_EXTERN int ward_quarantine_restore(size_t *restored, const char *box,
					const char *path);

/**
 * ward_quarantine_prune - remove boxes: @box only (NULL: any) when it is
 * older than @older_than seconds (0: whatever its age). *@removed (may be
 * NULL) gets the number of boxes removed. Returns 0, WARD_ENOMATCH (@box
 * named and not found) or -errno.
 */
WARD_EXTERN int ward_quarantine_prune(size_t *removed, const char *box,
				      int64_t older_than);

/** The quarantine's defaults: 1024 MiB, 30 days (ward-config(5)). */
#define WARD_QUARANTINE_QUOTA_MB       1024
#define WARD_QUARANTINE_RETENTION_DAYS 30

WARD_END_DECL

#endif
