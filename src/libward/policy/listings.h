/*
 * ward — the directory listings one call read (internal to libward).
 *
 * Before a call under workspace-write is planned, the walk for
 * repositories (protect.c) reads every directory of the writable roots;
 * a moment later the glob walk (plan/translate_targets.c) reads the same
 * directories again to expand the `**` rules. The first walk keeps here
 * the records getdents64 gave it for each directory it read to the end,
 * by the directory's canonical path, and the glob walk reads those
 * instead of the directory: one read of the tree per call fewer.
 *
 * Per call only: made by one ward_facts_new() (WARD_FACTS_LISTINGS),
 * taken once by the translation that follows it and freed after its walk
 * (facts.h). Never kept across calls and never checked against
 * timestamps: a listing is what the directory held when this call read
 * it, which is the "confine time" the glob walk's warnings speak of. The
 * command has not run yet when either walk reads, and what appears after
 * the walk is the fence's in both cases.
 *
 * Not thread-safe; the walk that fills it owns it, then the walk that
 * reads it.
 */
#ifndef WARD_LISTINGS_H
#define WARD_LISTINGS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * How much the listings of one call may hold (records and paths): about
 * 400,000 entries of the usual length, twice what the walk for
 * repositories looks at (REPO_WALK_ENTRIES_MAX); a directory that does
 * not fit is not kept and the glob walk reads it itself.
 */
#define WARD_LISTINGS_MAX (16u << 20)

struct ward_listings;

/* ward_listings_new - empty listings into *@out; 0 or -ENOMEM. */
int ward_listings_new(struct ward_listings **out);
/* ward_listings_free - accepts NULL. */
void ward_listings_free(struct ward_listings *l);

/*
 * Filling, one directory at a time: ward_listings_begin() for the
 * canonical @path, ward_listings_add() for each buffer of records as
 * getdents64 filled it, ward_listings_end() with @complete true only
 * when the directory was read to its end (getdents64 returned 0). An
 * incomplete directory, one already kept, one past WARD_LISTINGS_MAX or
 * one that ran out of memory is dropped: a directory that is not kept is
 * read again by whoever needs it, never taken for empty. @l may be NULL
 * (nothing is kept).
 */
void ward_listings_begin(struct ward_listings *l, const char *path);
void ward_listings_add(struct ward_listings *l, const void *records,
		       size_t len);
void ward_listings_end(struct ward_listings *l, bool complete);

/*
 * ward_listings_find - the records kept for the canonical @path (*@len
 * bytes, getdents64's form, "." and ".." included; borrowed, valid until
 * ward_listings_free() and as long as nothing is added), or NULL when
 * the directory was not kept. A d_type of DT_UNKNOWN in them means the
 * walk could not tell what the entry is (its lstat failed).
 */
const void *ward_listings_find(const struct ward_listings *l, const char *path,
			       size_t *len);

#endif
