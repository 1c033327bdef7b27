/*
 * ward — the in-process file fence: read, write, edit, remove, move, mkdir,
 * list and stat for an agent's file tools, under the same mode, writable
 * roots and access rules as the runners.
 *
 * An agent's file tools run inside the harness process, so no runner can
 * confine them; this module applies the policy itself. The policy travels
 * with every call (two calls may use different policies at the same time):
 *
 *   read-only           every mutation is denied;
 *   workspace-write     a mutation is allowed only when every entry it
 *                       touches lies strictly beneath a writable root, as
 *                       ward_roots_writable() gives them;
 *   danger-full-access  mutations are not fenced by roots;
 *
 * and in every mode `r-` rules deny mutations and `--` rules deny mutations,
 * reads, listing and stat. Reads are never confined by roots (the runners
 * let a command read /). Rules match the resolved path: a symlink to a
 * protected path is as protected as the path itself.
 *
 * The decision depends only on the operation, the policy and the resolved
 * path, never on whether the operation would have been a no-op.
 *
 * On Linux containment is checked by the kernel: the parent directory of
 * every mutated entry is opened with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) beneath an open descriptor
 * of the writable root, and the operation is done on that descriptor and
 * the final name without following a symlink there, so a symlink swapped
 * in between the check and the use cannot redirect it. See docs/FSFENCE.md
 * for the semantics and the threat model (what the fence cannot prevent).
 *
 * Conventions: relative paths are taken relative to the policy's workspace
 * root. Every function returns 0 or a negative code: WARD_EDENIED (the
 * fence refused; *denial, when not NULL, says why), -ENOENT, -ENOTDIR,
 * -EISDIR, -EEXIST, -EFBIG (too large), WARD_ENOTTEXT, WARD_ENOTUNIQUE,
 * WARD_ENOMATCH, WARD_EINVAL, or another -errno; ward_error_last() holds a
 * detail that names the path. Out-parameters are written only on success,
 * except *denial, which is written only when WARD_EDENIED is returned.
 * Every options pointer may be NULL (the defaults of its _INIT macro).
 */
#ifndef WARD_FSFENCE_H
#define WARD_FSFENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "mode.h"
#include "policy.h"

WARD_BEGIN_DECL

/** The version of every ward_fs_*_options struct below. */
#define WARD_FS_OPTIONS_VERSION 1

/** Default bound on the bytes a read returns, or an edit loads and makes
 *  (10 MiB). */
#define WARD_FS_MAX_BYTES_DEFAULT (10u * 1024u * 1024u)
/** Default bound on the entries of a listing. */
#define WARD_FS_LIST_MAX_ENTRIES_DEFAULT 10000u
/** Default depth of a recursive listing (1 = one level). */
#define WARD_FS_LIST_MAX_DEPTH_DEFAULT 16u

/** The size of the path buffers of a denial record. */
#define WARD_FS_PATH_MAX 4096

enum ward_fs_op {
	WARD_FS_OP_READ = 0,
	WARD_FS_OP_WRITE,
	WARD_FS_OP_EDIT,
	WARD_FS_OP_REMOVE,
	WARD_FS_OP_MOVE,
	WARD_FS_OP_MKDIR,
	WARD_FS_OP_LIST,
	WARD_FS_OP_STAT,
};

/**
 * ward_fs_op_name - "read", "write", "edit", "remove", "move", "mkdir",
 * "list", "stat"; "unknown" otherwise. Static storage.
 */
WARD_EXTERN const char *ward_fs_op_name(enum ward_fs_op op);

/** Why the fence refused. */
enum ward_fs_reason {
	/** read-only mode: no mutation at all. */
	WARD_FS_DENIED_READ_ONLY = 0,
	/** The entry is not beneath any writable root. */
	WARD_FS_DENIED_OUTSIDE_ROOTS,
	/** The entry is a writable root itself (it cannot be removed, moved
	 *  or replaced; only what lies beneath it can). */
	WARD_FS_DENIED_ROOT_ITSELF,
	/** An `r-` rule covers the entry (or, for a directory that is
	 *  removed or moved, something inside it). Applies in every mode. */
	WARD_FS_DENIED_RULE_READ_ONLY,
	/** A `--` rule covers the entry (or something inside it). Applies in
	 *  every mode. */
	WARD_FS_DENIED_RULE_NO_ACCESS,
};

/**
 * ward_fs_reason_name - a short English phrase for @reason ("read-only
 * mode", "outside every writable root", …). Static storage.
 */
WARD_EXTERN const char *ward_fs_reason_name(enum ward_fs_reason reason);

/**
 * The structured FS_SANDBOX_DENIED record of one refused operation. A plain
 * struct with fixed buffers: nothing to free. For a move, the paths are
 * those of the end that was refused.
 */
struct ward_fs_denial {
	/** The effective mode of the call. */
	enum ward_mode mode;
	enum ward_fs_op op;
	enum ward_fs_reason reason;
	/** The path as the caller gave it (truncated to fit). */
	char path[WARD_FS_PATH_MAX];
	/** The resolved absolute path that was judged ("" when unknown). */
	char resolved[WARD_FS_PATH_MAX];
};

/**
 * ward_fs_render_denial - the model-facing text of a denial:
 *
 *   [sandbox: file access denied under <mode> mode]
 *
 * followed, when @escalation_offered, by a newline and
 *
 *   retry this exact operation once with sandbox_permissions (the narrowest
 *   wider mode that suffices) + justification; the approval prompt asks the
 *   user
 *
 * (one line). The hint is never given for a denial by a rule
 * (WARD_FS_DENIED_RULE_*): rules apply in every mode, so no wider mode
 * would help. No trailing newline. The caller frees *out with ward_free().
 * Returns 0, WARD_EINVAL (@denial is NULL) or -ENOMEM.
 */
WARD_EXTERN int ward_fs_render_denial(char **out,
				      const struct ward_fs_denial *denial,
				      bool escalation_offered);

/**
 * ward_fs_check - would the fence allow @op on @path under @policy? Resolves
 * the path exactly as the operation would and applies the same decision,
 * without touching anything. For WARD_FS_OP_MOVE it judges @path as one end
 * of the move. Returns 0 (allowed), WARD_EDENIED (*denial filled when not
 * NULL) or a resolution error (-ENOTDIR, -ELOOP, …).
 */
WARD_EXTERN int ward_fs_check(struct ward_fs_denial *denial,
			      const ward_policy *policy, enum ward_fs_op op,
			      const char *path);

/**
 * ward_fs_resolve - what @op on @path would act on: @path (relative to the
 * workspace root) resolved exactly as the operation resolves it (a final
 * symlink is followed except by remove, move and stat), canonical, with
 * missing trailing components kept as named. For an approval prompt: a
 * write to `notes.txt` that is a symlink to /etc/x resolves to /etc/x.
 * Nothing is judged or touched. Returns 0 with *out (free it with
 * ward_free()), WARD_EINVAL, or a resolution error (-ENOTDIR, -ELOOP, …).
 */
WARD_EXTERN int ward_fs_resolve(char **out, const ward_policy *policy,
				enum ward_fs_op op, const char *path);

/**
 * ward_fs_op_parse - the operation named @name ("read", "write", …, as
 * ward_fs_op_name() spells it). Returns 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_fs_op_parse(enum ward_fs_op *out, const char *name);

/* --- read ------------------------------------------------------------ */

struct ward_fs_read_options {
	unsigned version;
	/**
	 * false (text): @offset and @limit count lines; the returned part
	 * must be UTF-8 without NUL bytes, else WARD_ENOTTEXT.
	 * true (bytes): @offset and @limit count bytes; any content.
	 */
	bool binary;
	/** Lines (text) or bytes (binary) to skip. */
	uint64_t offset;
	/** At most this many lines or bytes; 0: no limit. */
	uint64_t limit;
	/** -EFBIG when the returned part would exceed this; 0: default. */
	uint64_t max_bytes;
};

#define WARD_FS_READ_OPTIONS_INIT                                              \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false, 0, 0, 0                        \
	}

/** What a read returned. */
struct ward_fs_content {
	/** @len bytes followed by a NUL that @len does not count. Owned by
	 *  the struct: release with ward_fs_content_clear(). */
	char *data;
	size_t len;
	/** The file's size when it was opened. */
	uint64_t file_size;
	/** Content remains after what was returned (the limit stopped it). */
	bool truncated;
};

/**
 * ward_fs_read - read a regular file (following symlinks). Denied only by a
 * `--` rule on the file's resolved path, and always for a process's part
 * of /proc (/proc/self, /proc/thread-self, /proc/PID and beneath: the
 * fence runs in the caller's process, so these would name the caller, not
 * a confined command), which no rule or mode widens; the same holds for
 * list and stat. Errors: -ENOENT, -EISDIR,
 * WARD_EINVAL (not a regular file: FIFOs and devices are never opened for
 * reading), -EFBIG, WARD_ENOTTEXT.
 */
WARD_EXTERN int ward_fs_read(struct ward_fs_content *out,
			     struct ward_fs_denial *denial,
			     const ward_policy *policy, const char *path,
			     const struct ward_fs_read_options *opts);

/** ward_fs_content_clear - free c->data and zero *c. Accepts NULL. */
WARD_EXTERN void ward_fs_content_clear(struct ward_fs_content *c);

/* --- write, edit ----------------------------------------------------- */

struct ward_fs_write_options {
	unsigned version;
	/** Create missing parent directories (each one is fenced too). */
	bool create_parents;
	/** Fail with -EEXIST when the target exists. */
	bool exclusive;
};

#define WARD_FS_WRITE_OPTIONS_INIT                                             \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false, false                          \
	}

/**
 * ward_fs_write - create or replace a regular file with @len bytes of
 * @data, atomically: the bytes go to a temporary file in the same
 * directory, which is fsynced, given the old file's permission bits (and
 * owner, when permitted), renamed over the target, and the directory is
 * fsynced. A crash leaves the old or the new content; no temporary file
 * survives a failed call. Replacing the directory entry means a hard link
 * elsewhere keeps the old content: the fence never writes through one.
 *
 * A symlink as the final component is followed (the target's resolved path
 * is what the fence judges and what gets written); the link stays.
 * Errors: -EISDIR, -EEXIST (exclusive), -ENOENT (a parent is missing and
 * create_parents is off), WARD_EINVAL (the target is not a regular file).
 */
WARD_EXTERN int ward_fs_write(struct ward_fs_denial *denial,
			      const ward_policy *policy, const char *path,
			      const void *data, size_t len,
			      const struct ward_fs_write_options *opts);

struct ward_fs_edit_options {
	unsigned version;
	/** Replace every occurrence instead of requiring exactly one. */
	bool replace_all;
	/** -EFBIG when the file, or the file the edit would make, is
	 *  larger than this; 0: default. */
	uint64_t max_bytes;
};

#define WARD_FS_EDIT_OPTIONS_INIT                                              \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false, 0                              \
	}

/**
 * ward_fs_edit - replace the exact text @old_text with @new_text in a text
 * file, then write it back as ward_fs_write() does. @old_text must be
 * non-empty and differ from @new_text (WARD_EINVAL). Errors: WARD_ENOMATCH
 * (absent), WARD_ENOTUNIQUE (more than one occurrence and not replace_all),
 * WARD_ENOTTEXT, -EFBIG (the file or the result beyond max_bytes: nothing
 * is built or written), -EAGAIN (the file changed while being edited;
 * nothing was written). *replacements (may be NULL) gets the number of
 * occurrences replaced.
 */
WARD_EXTERN int ward_fs_edit(size_t *replacements,
			     struct ward_fs_denial *denial,
			     const ward_policy *policy, const char *path,
			     const char *old_text, const char *new_text,
			     const struct ward_fs_edit_options *opts);

/* --- remove, move, mkdir --------------------------------------------- */

struct ward_fs_remove_options {
	unsigned version;
	/** Allow removing a directory and everything in it. */
	bool recursive;
};

#define WARD_FS_REMOVE_OPTIONS_INIT                                            \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false                                 \
	}

/**
 * ward_fs_remove - remove a file, symlink (never its target) or, with
 * recursive, a directory tree (symlinks inside are removed, never followed).
 * A directory is checked whole before anything is removed: when a rule
 * protects something inside it, nothing is removed. Errors: -ENOENT,
 * -EISDIR (a directory without recursive).
 */
WARD_EXTERN int ward_fs_remove(struct ward_fs_denial *denial,
			       const ward_policy *policy, const char *path,
			       const struct ward_fs_remove_options *opts);

struct ward_fs_move_options {
	unsigned version;
	/** Replace an existing destination (else -EEXIST). */
	bool overwrite;
};

#define WARD_FS_MOVE_OPTIONS_INIT                                              \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false                                 \
	}

/**
 * ward_fs_move - rename @from to @to (the exact destination path, not a
 * directory to move into). Both ends are fenced before anything moves;
 * symlinks are moved, never followed, at either end. Across file systems a
 * regular file is copied (durably, as ward_fs_write() does) and then
 * removed; a directory gives -EXDEV. Errors: -ENOENT, -EEXIST, -EXDEV.
 */
WARD_EXTERN int ward_fs_move(struct ward_fs_denial *denial,
			     const ward_policy *policy, const char *from,
			     const char *to,
			     const struct ward_fs_move_options *opts);

struct ward_fs_mkdir_options {
	unsigned version;
	/** Create missing parents; an existing directory is not an error. */
	bool parents;
};

#define WARD_FS_MKDIR_OPTIONS_INIT                                             \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false                                 \
	}

/**
 * ward_fs_mkdir - create a directory (mode 0777 less the umask). Errors:
 * -EEXIST (without parents), -ENOENT, -ENOTDIR.
 */
WARD_EXTERN int ward_fs_mkdir(struct ward_fs_denial *denial,
			      const ward_policy *policy, const char *path,
			      const struct ward_fs_mkdir_options *opts);

/* --- list, stat ------------------------------------------------------ */

enum ward_fs_type {
	WARD_FS_TYPE_OTHER = 0, /* FIFO, socket, device */
	WARD_FS_TYPE_FILE,
	WARD_FS_TYPE_DIR,
	WARD_FS_TYPE_SYMLINK,
};

/** ward_fs_type_name - "other", "file", "dir", "symlink". Static. */
WARD_EXTERN const char *ward_fs_type_name(enum ward_fs_type type);

struct ward_fs_entry {
	/** Relative to the listed directory ("a", "a/b"); owned by the
	 *  listing. */
	char *path;
	enum ward_fs_type type;
	/**
	 * A `--` rule covers the entry: only @path and @type are given (the
	 * rest is zero) and a directory is never descended into.
	 */
	bool denied;
	uint64_t size;
	uint32_t mode; /* permission bits (07777) */
	int64_t mtime_sec;
};

struct ward_fs_listing {
	/** Sorted by path (bytewise). Owned by the listing. */
	struct ward_fs_entry *entries;
	size_t count;
	/** A bound (max_entries) stopped the listing early. */
	bool truncated;
};

struct ward_fs_list_options {
	unsigned version;
	/** Descend into subdirectories (never through symlinks). */
	bool recursive;
	/** Levels to list when recursive (1 = one level); 0: default. */
	unsigned max_depth;
	/** At most this many entries; 0: default. */
	size_t max_entries;
};

#define WARD_FS_LIST_OPTIONS_INIT                                              \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false, 0, 0                           \
	}

/**
 * ward_fs_list - the entries of a directory (a symlink to a directory is
 * followed at the top, never below). Denied when a `--` rule covers the
 * directory. Entries covered by `--` appear, marked denied, without their
 * metadata or contents (see docs/FSFENCE.md for why they are not hidden).
 * Errors: -ENOENT, -ENOTDIR. Release *out with ward_fs_listing_clear().
 */
WARD_EXTERN int ward_fs_list(struct ward_fs_listing *out,
			     struct ward_fs_denial *denial,
			     const ward_policy *policy, const char *path,
			     const struct ward_fs_list_options *opts);

/** ward_fs_listing_clear - free the entries and zero *l. Accepts NULL. */
WARD_EXTERN void ward_fs_listing_clear(struct ward_fs_listing *l);

struct ward_fs_stat {
	enum ward_fs_type type;
	uint64_t size;
	uint32_t mode; /* permission bits (07777) */
	uint64_t nlink;
	int64_t mtime_sec;
	long mtime_nsec;
	/** The resolved absolute path; owned: ward_fs_stat_clear(). */
	char *resolved;
	/** A symlink's target as stored, else NULL; owned likewise. */
	char *link_target;
};

struct ward_fs_stat_options {
	unsigned version;
	/** Follow a symlink as the final component (else describe it). */
	bool follow;
};

#define WARD_FS_STAT_OPTIONS_INIT                                              \
	{                                                                      \
		WARD_FS_OPTIONS_VERSION, false                                 \
	}

/**
 * ward_fs_stat - describe an entry. Denied when a `--` rule covers its
 * resolved path. Errors: -ENOENT. Release *out with ward_fs_stat_clear().
 */
WARD_EXTERN int ward_fs_stat(struct ward_fs_stat *out,
			     struct ward_fs_denial *denial,
			     const ward_policy *policy, const char *path,
			     const struct ward_fs_stat_options *opts);

/** ward_fs_stat_clear - free the strings and zero *st. Accepts NULL. */
WARD_EXTERN void ward_fs_stat_clear(struct ward_fs_stat *st);

/**
 * ward_fs_*_options_init - set an options struct to the defaults of
 * @version (which must be WARD_FS_OPTIONS_VERSION): the functions for
 * bindings that cannot use the _INIT macros. 0 or WARD_EINVAL.
 */
WARD_EXTERN int ward_fs_read_options_init(struct ward_fs_read_options *opts,
					  unsigned version);
WARD_EXTERN int ward_fs_write_options_init(struct ward_fs_write_options *opts,
					   unsigned version);
WARD_EXTERN int ward_fs_edit_options_init(struct ward_fs_edit_options *opts,
					  unsigned version);
WARD_EXTERN int ward_fs_remove_options_init(struct ward_fs_remove_options *opts,
					    unsigned version);
WARD_EXTERN int ward_fs_move_options_init(struct ward_fs_move_options *opts,
					  unsigned version);
WARD_EXTERN int ward_fs_mkdir_options_init(struct ward_fs_mkdir_options *opts,
					   unsigned version);
WARD_EXTERN int ward_fs_list_options_init(struct ward_fs_list_options *opts,
					  unsigned version);
WARD_EXTERN int ward_fs_stat_options_init(struct ward_fs_stat_options *opts,
					  unsigned version);

WARD_END_DECL

#endif
