/*
 * ward — what the guard (guard.c) and its shared baseline (guardstate.c)
 * have in common; internal to libward.
 *
 * A snapshot is a set of entries, one per guarded path, each of a kind:
 *
 *   GK_DEEP      a protected path: its content, recursively (compared
 *                byte for byte or by digest, put back from);
 *   GK_IDENTITY  a repository's .git directory: only that it is still the
 *                same directory (its objects change in every commit);
 *   GK_NAMES     a directory where git looks for more repositories
 *                (<gitdir>/modules, <gitdir>/worktrees): the names of its
 *                entries; a new one is taken away;
 *   GK_SWEEP     a writable root walked for new repositories: every .git
 *                that existed in it, by relative path; one that appears is
 *                taken away.
 *
 * The baseline is shared by every guarded call of every ward process of the
 * user (guardstate.c): a call that starts while others run joins the
 * entries they took instead of snapshotting a path again, so it never takes
 * another call's plant for the original.
 */
#ifndef WARD_GUARD_INTERNAL_H
#define WARD_GUARD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/sha256.h"

enum gkind {
	GK_DEEP = 'd',
	GK_IDENTITY = 'i',
	GK_NAMES = 'n',
	GK_SWEEP = 's',
};

/* One entry of a snapshot. */
struct gnode {
	char *name; /* NULL at the top of a guarded path */
	mode_t mode;
	dev_t dev;
	ino_t ino;
	unsigned char digest[WARD_SHA256_LEN]; /* regular files */
	char *data;			       /* kept content, or NULL */
	size_t len;
	bool kept;
	char *link;	    /* a symlink's target */
	struct gnode *kids; /* a directory's entries, by name */
	size_t nkids;
};

/* One guarded path, as it was before the first of the calls that share it
 * began. */
struct gentry {
	char kind;  /* enum gkind */
	char *dir;  /* canonical parent (GK_SWEEP: the root) */
	char *name; /* the last component (GK_SWEEP: ".") */
	char *what;
	dev_t pdev; /* the parent's identity */
	ino_t pino;
	bool exists;
	struct gnode node;
	/* The participants (guardstate.c) that guard it. */
	uint64_t *refs;
	size_t nrefs;
};

/* A participant: one guarded call, alive while it holds its slot. */
struct gpart {
	uint32_t slot;
	uint64_t id;
	int64_t pid;
};

/* The shared baseline. */
struct gepoch {
	struct gpart *parts;
	size_t nparts;
	struct gentry *ents;
	size_t nents;
};

void gnode_clear(struct gnode *nd);
void gentry_clear(struct gentry *e);
void gepoch_clear(struct gepoch *ep);
/* "d/path/to/entry": what identifies an entry across calls. */
bool gentry_is(const struct gentry *e, char kind, const char *path);

/*
 * The store of the shared baseline: a lock file and the epoch file in
 * ward's state directory (<state>/guard/), or, without a state directory,
 * this process's memory. One open store is one participant's slot.
 */
struct gstore;

/*
 * gstore_open - a slot of its own (held until gstore_close: a process that
 * dies releases it, so the others see the participant is gone). Returns 0,
 * or WARD_EINVAL / -errno with a detail naming the state directory.
 */
int gstore_open(struct gstore **out);
/* The one lock of the protocol (across threads and processes); held only
 * while a snapshot is joined or checked, never while a command runs. */
void gstore_lock(struct gstore *st);
void gstore_unlock(struct gstore *st);
uint32_t gstore_slot(const struct gstore *st);
/* Whether @p still holds its slot (false for one in this store's own
 * slot: it was a dead participant's). */
bool gstore_alive(struct gstore *st, const struct gpart *p);
/*
 * gstore_load - the baseline into @ep (empty when there is none). Returns
 * 0 or WARD_EINVAL (damaged: the detail names the file and what to do) or
 * -ENOMEM. Under the lock.
 */
int gstore_load(struct gstore *st, struct gepoch *ep);
/* gstore_load - the participants only (ep->ents empty). */
int gstore_load_parts(struct gstore *st, struct gepoch *ep);
/* gstore_save - replace the baseline (atomically); none left: removed. */
int gstore_save(struct gstore *st, const struct gepoch *ep);
void gstore_close(struct gstore *st);
/* A participant id nobody else has: random, never 0. */
uint64_t gstore_new_id(void);

#endif
