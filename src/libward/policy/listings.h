/*
 * ward — the directory listings one call read (internal to libward).
 *
 * Before a call under workspace-write is planned, the walk for
 * repositories (protect.c) reads every directory of the writable roots;
 * a moment later the glob walk (plan/translate_targets.c) reads the same
 * directories again to expand the `**` rules. The first walk keeps here
 * the records getdents64 gave it for each directory it read to the end,
 * by the directory's canonical path, and the glob walk reads those
 * instead of the directory: one read of the tree per call fewer. The
 * plan's literal rules come in runs with one parent (a thousand files of
 * one directory): that parent is listed once (kept by the first walk when
 * it lies in a writable root, else read by the plan and kept here) and
 * each rule looked up in it by name, and the complement of the hidden
 * paths (plan/translate_landlock.c) reads the same listing.
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

struct util_dirent64;

/*
 * How much the listings of one call may hold (records and paths): about
 * 400,000 entries of the usual length, twice what the walk for
 * repositories looks at (REPO_WALK_ENTRIES_MAX); a directory that does
 * not fit is not kept and the glob walk reads it itself.
 */
#define WARD_LISTINGS_MAX (16u << 20)

/*
 * How many literal rules with one parent make the plan list that parent
 * once (and look each rule up by name) rather than ask for each entry:
 * a getdents64 record costs a fraction of a lookup. Also how many literal
 * `r-`/`--` rules make the walk for repositories keep what it reads.
 */
#define WARD_LISTINGS_LITERALS 8

struct ward_listings;

/* ward_listings_new - empty listings into *@out; 0 or -ENOMEM. */
int ward_listings_new(struct ward_listings **out);
/* ward_listings_free - accepts NULL. */
void ward_listings_free(struct ward_listings *l);

/*
 * ward_listings_only - keep only the directories among the @n canonical
 * @paths (taken over: freed with @l, or at once when @l is NULL), when
 * nothing but they will be read (the parents of literal rules, without
 * globs); NULL @paths: keep every directory again (the plan, which reads
 * more, once the walk is done). Returns 0.
 */
int ward_listings_only(struct ward_listings *l, char **paths, size_t n);

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

/*
 * ward_listings_read - the records of the directory @fd (canonical @path),
 * kept already or read now, to its end, and kept: for a reader that would
 * otherwise look at its entries one by one (the plan's literal rules, the
 * complement of the hidden paths). Each d_type is made known as the walk
 * for repositories makes it (DT_UNKNOWN only when its lstat failed). NULL
 * when it cannot be read or kept (then the caller asks the directory
 * itself); *@len as for ward_listings_find().
 */
const void *ward_listings_read(struct ward_listings *l, int fd,
			       const char *path, size_t *len);

/*
 * The entries of one listing by name: ward_names_index() builds the index
 * of @len bytes of records @rec (malloc'd slots, freed by
 * ward_names_free(); false on ENOMEM), ward_names_find() the record of
 * @name or NULL, ward_names_count() how many entries there are ("." and
 * ".." left out).
 */
struct ward_names {
	const char *rec;
	size_t len, count;
	size_t *slot; /* cap slots: offset of a record + 1, 0 when free */
	size_t cap;
};
bool ward_names_index(struct ward_names *n, const void *rec, size_t len);
const struct util_dirent64 *ward_names_find(const struct ward_names *n,
					    const char *name);
void ward_names_free(struct ward_names *n);

#endif
