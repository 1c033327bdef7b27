/*
 * ward — what the file fence's modules share (internal to libward):
 * fsfence.c (kernel shims, paths, policy, targets of mutations, durable
 * replacement, text, check, rendering) and fsfence_ops.c (the
 * operations, which call fsfence.c and are never called by it).
 */
#ifndef WARD_FSFENCE_INTERNAL_H
#define WARD_FSFENCE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "libward/internal.h"

/* How often a resolution is retried when the tree changes under it. */
#define FENCE_RETRIES 8

/*
 * Directory depth bound for recursive remove, scans and listings, and for
 * the directories the fence makes (counted from /), so that whatever
 * ward fs mkdir -p or write makes, ward fs rm -r can remove. Each level
 * of a walk holds a descriptor.
 */
#define FENCE_MAX_DEPTH 256

#define FENCE_RESOLVE_NO_MAGICLINKS 0x02
#define FENCE_RESOLVE_NO_SYMLINKS   0x04
#define FENCE_RESOLVE_BENEATH	    0x08

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* A resolved path. */
struct canon {
	/* Canonical absolute path: no symlinks (except maybe the last
	 * component when it was not followed), no ".", "..", or "//". */
	char *path;
	/* Trailing components that do not exist (0: the entry exists). */
	unsigned missing;
	/* The caller's path ended in '/'. */
	bool trailing_slash;
	/* lstat of the entry when it exists. */
	struct stat st;
};

/* One fenced call. */
struct fence {
	const ward_policy *policy;
	enum ward_fs_op op;
	struct ward_fs_denial *denial;
	/* What the policy means here now (facts.h: the writable roots, the
	 * protected paths, the rules' aliases), made on first use for this
	 * one operation (ward_fence_facts) and let go by ward_fence_done. */
	struct ward_facts *facts;
	int facts_err; /* why they could not be made, or 0 */
};

/* Flags of ward_fence_target_open(). */
#define T_FOLLOW       0x1 /* follow a symlink as the final component */
#define T_MISSING_LAST 0x2 /* the entry itself may be missing */
#define T_MISSING_TAIL 0x4 /* parents may be missing too */

/* A judged entry, with its nearest existing directory open. */
struct target {
	struct canon c;
	/*
	 * The deepest existing directory on the way to the entry: its parent
	 * when the parent exists. Opened O_RDONLY|O_DIRECTORY beneath the
	 * writable root, the kernel checking that no symlink was crossed.
	 */
	int dirfd;
	/* What remains below @dirfd: "name", or "a/b/name" (missing). */
	const char *tail;
	/* The entry's name (last component of c.path). */
	const char *name;
};

/* What ward_fence_replace_file() writes: bytes, or the content of a
 * descriptor. */
struct source {
	const void *data;
	size_t len;
	int fd; /* >= 0: copy from here instead */
};

/* Flags of ward_fence_replace_file(). */
#define R_EXCLUSIVE 0x1 /* fail with -EEXIST rather than replace */

/* A growable byte buffer, always NUL-terminated. */
struct buf {
	char *data;
	size_t len, cap;
};

/* --- kernel shims, paths, policy (fsfence.c) ----------------------------- */

/* 0: unknown, 1: openat2 works, -1: missing. */
extern atomic_int ward_fence_openat2_state;

/* openat2(2) and renameat2(2) by number; -1 and errno on failure. */
int ward_fence_sys_openat2(int dirfd, const char *path, int flags,
			   uint64_t resolve);
int ward_fence_sys_renameat2(int olddirfd, const char *oldpath, int newdirfd,
			     const char *newpath, unsigned flags);
/* Open the canonical absolute @path without following any symlink. */
int ward_fence_open_nofollow(const char *path, int flags);
/* The caller's path made absolute against the workspace root. */
int ward_fence_path_absolute(char **out, const ward_policy *policy,
			     const char *path);
/* Whether @path has a ".." component. */
bool ward_fence_has_dotdot(const char *path);
/* Resolve @abs like the kernel would, in user space, tolerating missing
 * trailing components (see fsfence.c); release with
 * ward_fence_canon_clear(). */
int ward_fence_canon_resolve(struct canon *out, const char *abs,
			     bool follow_last);
void ward_fence_canon_clear(struct canon *c);
/* One fenced call: begin (denials go to @denial) and end. */
void ward_fence_init(struct fence *f, const ward_policy *policy,
		     enum ward_fs_op op, struct ward_fs_denial *denial);
void ward_fence_done(struct fence *f);
/* Copy @src into the fixed buffer @dst of @size, truncating. */
void ward_fence_copy_trunc(char *dst, size_t size, const char *src);
/* The facts of @f's policy (made once per operation), or NULL when they
 * cannot be made (f->facts_err says why; every judgement fails closed). */
const struct ward_facts *ward_fence_facts(struct fence *f);
/* What the rules and the hidden protected paths give the canonical
 * @path, as the runners apply them. */
enum ward_access ward_fence_rule_access(struct fence *f, const char *path);
/* Whether any rule of at least @kind exists, or a hidden protected path. */
bool ward_fence_rules_restrict(struct fence *f, enum ward_access kind);
/* Judge the resolved @real for this call's operation (rules, then mode,
 * then writable roots); 0 or a denial. */
int ward_fence_judge(struct fence *f, const char *given, const char *real,
		     const char **root);
/* Refuse a mutation of a canonical @real that is not one of an approved
 * operation's objects (ward_policy_set_objects); 0 otherwise. */
int ward_fence_bound(struct fence *f, const char *given, const char *real);
/* Before a directory is removed or moved (to @dst, or NULL): deny when a
 * rule protects anything inside it, or the place it would land. */
int ward_fence_judge_tree(struct fence *f, const char *given, const char *real,
			  int parentfd, const char *name, const char *dst);

/* --- targets of mutations, durable replacement, text (fsfence.c) ---------- */

/* Resolve, judge and open the target of a mutation (T_* @flags); release
 * with ward_fence_target_close(). */
int ward_fence_target_open(struct target *t, struct fence *f, const char *given,
			   unsigned flags);
void ward_fence_target_close(struct target *t);
/* Create the missing directories of @t->tail except the entry itself
 * (refused beyond FENCE_MAX_DEPTH: ward_fence_depth_check). */
int ward_fence_target_make_parents(struct target *t, const char *given);
/*
 * 0 when no directory made for @t lies deeper than FENCE_MAX_DEPTH
 * (@entry_is_dir: the entry itself is one, else only its parents), else
 * -ENAMETOOLONG naming @given and the limit.
 */
int ward_fence_depth_check(const struct target *t, const char *given,
			   bool entry_is_dir);
/* The error of a walk below @given that went past FENCE_MAX_DEPTH. */
int ward_fence_too_deep(const char *given);
/* Replace @name in @dirfd with @src, durably (R_* @flags). */
int ward_fence_replace_file(int dirfd, const char *name,
			    const struct source *src, const struct stat *old,
			    const struct stat *expect, unsigned flags,
			    const char *given);
/* Whether @s is valid UTF-8 without NUL bytes. */
bool ward_fence_is_text(const char *s, size_t len);
int ward_fence_buf_append(struct buf *b, const void *data, size_t len);
/* read(2), retried on EINTR. */
ssize_t ward_fence_read_retry(int fd, void *buf, size_t len);
/* Read all of @fd (a regular file of @size at open) into @b; -EFBIG past
 * @max bytes. */
int ward_fence_read_whole(struct buf *b, int fd, uint64_t size, uint64_t max);

#endif
