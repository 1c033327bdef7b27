/*
 * ward — the quarantine (internal to libward): where the guard (guard.c)
 * moves what a confined run left in a protected place, so that nothing is
 * destroyed and nothing stays where the user's tools would run it.
 *
 *     $XDG_STATE_HOME/ward/quarantine/<id>/files/<absolute path>
 *     $XDG_STATE_HOME/ward/quarantine/<id>/manifest
 *
 * <id> is "<UTC time>-<pid>-<n>", one per check that took something. The
 * quarantine lies in ward's state directory, which every confined run has
 * hidden, so nothing confined can read a plant back or put it in place
 * again; git never looks there.
 *
 * Nothing is dropped. An entry is moved (rename) when the quarantine is on
 * the same file system, else copied — sparse-aware (SEEK_DATA/SEEK_HOLE,
 * copy_file_range), so a file of holes costs nothing — and removed once the
 * copy is whole. When it cannot be kept there (no state directory, past the
 * quota, a FIFO or device that cannot be copied across file systems, a
 * failing copy) it is renamed beside itself, "<name>.ward-kept-<id>", a
 * name no tool looks up, and the caller is told (the call then fails
 * loudly). The quota counts allocated bytes of the whole quarantine; boxes
 * older than the retention are pruned when a new one is made (and by
 * `ward quarantine prune`).
 *
 * The manifest lists what each box holds, one line each, fields separated
 * by tabs (a tab, newline or backslash in a field written \t, \n, \\):
 *
 *     moved <allocated bytes> <original path> <path under files/> <what>
 *     kept  <allocated bytes> <original path> <kept path> <what>
 */
#ifndef WARD_QUARANTINE_INTERNAL_H
#define WARD_QUARANTINE_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ward/quarantine.h"

/* The defaults (ward-config(5): quarantine_quota_mb, _retention_days). */
#define WARD_QUARANTINE_QUOTA_DEFAULT                                          \
	((uint64_t)WARD_QUARANTINE_QUOTA_MB * 1024 * 1024)
#define WARD_QUARANTINE_RETENTION_DEFAULT                                      \
	((int64_t)WARD_QUARANTINE_RETENTION_DAYS * 86400)

/* The suffix of an entry kept beside itself (never a name git runs). */
#define WARD_KEPT_INFIX ".ward-kept-"

/* One check's box, made the first time something is taken. */
struct ward_qbox {
	char path[PATH_MAX + 128]; /* …/quarantine/<id> */
	char id[96];
	int fd;	    /* its files/ directory; -1: not yet; -2: none */
	int man_fd; /* its manifest (append), or -1 */
	uint64_t quota;
	int64_t retention;
	uint64_t used; /* allocated bytes in the whole quarantine */
};

/* What became of an entry. */
enum ward_qtake {
	WARD_QTAKE_MOVED, /* in the quarantine (at r->where) */
	WARD_QTAKE_KEPT,  /* renamed beside itself (r->kept); r->why */
	WARD_QTAKE_STUCK, /* still in place: it could not even be renamed */
	WARD_QTAKE_GONE,  /* it was not there any more */
};

struct ward_qresult {
	enum ward_qtake how;
	const char *why; /* static; for KEPT and STUCK */
	char where[2 * PATH_MAX + 160];
	char kept[2 * PATH_MAX + 160];
};

void ward_qbox_init(struct ward_qbox *q, uint64_t quota, int64_t retention);

/*
 * ward_qbox_take - move @name in @dirfd (whose absolute path is @abs) out
 * of the way, never over anything and never through a symlink: into the
 * box, else beside itself (see above). @what is recorded in the manifest.
 * Returns what happened (and fills @r).
 */
enum ward_qtake ward_qbox_take(struct ward_qbox *q, struct ward_qresult *r,
			       int dirfd, const char *name, const char *abs,
			       const char *what);

/* The box's path, or NULL when nothing was put there. */
const char *ward_qbox_path(const struct ward_qbox *q);

void ward_qbox_close(struct ward_qbox *q);

/*
 * ward_quarantine_base - where the boxes are
 * (<ward's state directory>/quarantine), into @buf; NULL when there is no
 * state directory.
 */
const char *ward_quarantine_base(char *buf, size_t len);

/*
 * ward_tree_remove - remove @name in @dirfd and everything beneath it (no
 * symlink followed). Returns 0 or -errno.
 */
int ward_tree_remove(int dirfd, const char *name);

/*
 * ward_tree_copy - copy @name in @sfd to the fresh @dname in @dfd (no
 * symlink followed; regular files sparse-aware), at most *@left bytes of
 * data in all (decremented). Returns 0, -EFBIG (over *@left), -ENOTSUP (a
 * FIFO, socket or device) or -errno; what was copied stays.
 */
int ward_tree_copy(int sfd, const char *name, int dfd, const char *dname,
		   uint64_t *left);

#endif
