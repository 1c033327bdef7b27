/*
 * ward — the in-process file fence, the operations: read; write, edit;
 * remove, move, mkdir; list, stat. Each resolves, judges and opens its
 * target through fsfence.c (paths, policy, targets of mutations, durable
 * replacement, text), then operates on that descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsfence_internal.h"
#include "util/util.h"
#include "libward/internal.h"
#include "util/util.h"

/* --- read -------------------------------------------------------------- */

/* Open @given for reading, judged against `--` rules on its resolved path;
 * @flags are open(2) flags. */
static int open_for_read(struct fence *f, const char *given, int flags,
			 char **resolved)
{
	struct canon c = {0};
	char *abs = NULL;
	int err, fd, tries;

	err = ward_fence_path_absolute(&abs, f->policy, given);
	if (err)
		return err;
	/*
	 * Never a plain open, even without any `--` rule: a symlink may lead
	 * into /proc/self (util_proc_private), which is always hidden.
	 * Fast path: judge the lexical path, then open the path as given
	 * with the kernel refusing any symlink. If that works, no symlink
	 * was crossed, so the lexical path is the physical one and the
	 * judgement holds. Not with "..": without RESOLVE_BENEATH the kernel
	 * does not guard ".." against a concurrent rename, so such a path
	 * is resolved in user space first. Anything else takes the full
	 * resolution below.
	 */
	if (atomic_load(&ward_fence_openat2_state) >= 0 &&
	    !ward_fence_has_dotdot(abs)) {
		c.path = util_path_lexical(abs);
		if (c.path && ward_fence_rule_access(f, c.path) !=
				  WARD_ACCESS_NONE) {
			fd = ward_fence_sys_openat2(
			    AT_FDCWD, abs, flags,
			    FENCE_RESOLVE_NO_SYMLINKS |
				FENCE_RESOLVE_NO_MAGICLINKS);
			if (fd >= 0) {
				if (resolved) {
					*resolved = c.path;
					c.path = NULL;
				}
				err = fd;
				goto out_free;
			}
		}
	}
	for (tries = 0; tries < FENCE_RETRIES; tries++) {
		ward_fence_canon_clear(&c);
		err = ward_fence_canon_resolve(&c, abs, true);
		/*
		 * Judge before saying "not found": under a `--` rule a missing
		 * path is denied like an existing one, so the fence is no
		 * oracle for what exists in a hidden directory.
		 */
		if (!err) {
			err = ward_fence_judge(f, given, c.path, NULL);
			if (err)
				goto out_free;
		}
		if (!err && c.missing)
			err = -ENOENT;
		if (!err && (flags & O_DIRECTORY) && !S_ISDIR(c.st.st_mode))
			err = -ENOTDIR;
		if (err) {
			err = ward_err(err, "%s: %s", given, strerror(-err));
			goto out_free;
		}
		fd = ward_fence_open_nofollow(c.path, flags);
		if (fd >= 0) {
			if (resolved) {
				*resolved = c.path;
				c.path = NULL;
			}
			err = fd;
			goto out_free;
		}
		err = fd;
		if (err != -ELOOP && err != -ENOENT && err != -ENOTDIR &&
		    err != -EAGAIN) {
			err = ward_err(err, "%s: %s", given, strerror(-err));
			goto out_free;
		}
	}
	err = ward_err(-EAGAIN,
		       "%s: the path kept changing while it was "
		       "being resolved",
		       given);
out_free:
	ward_fence_canon_clear(&c);
	free(abs);
	return err;
}

/*
 * The caller's options @opts (NULL: keep the defaults in @o) copied over
 * the @size bytes of @o once their version is checked: every fs options
 * struct starts with its unsigned version, and one version covers them
 * all.
 */
static int fs_options_take(void *o, const void *opts, size_t size)
{
	unsigned version;

	if (!opts)
		return 0;
	memcpy(&version, opts, sizeof(version));
	if (version != WARD_FS_OPTIONS_VERSION)
		return ward_bad_version("fs options", version,
					WARD_FS_OPTIONS_VERSION);
	memcpy(o, opts, size);
	return 0;
}

/*
 * fstat the open @fd into *@st and refuse anything but a regular file (a
 * read or an edit of @path). 0, or the error (ward_err set).
 */
static int stat_regular(struct stat *st, int fd, const char *path)
{
	if (fstat(fd, st) != 0)
		return ward_err(-errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st->st_mode))
		return ward_err(-EISDIR, "%s: is a directory", path);
	if (!S_ISREG(st->st_mode))
		return ward_err(WARD_EINVAL, "%s: not a regular file", path);
	return 0;
}

/* Bytes @offset.. of @fd, at most @limit (0: all), -EFBIG past @max. */
static int read_bytes(struct buf *b, bool *truncated, int fd, uint64_t size,
		      uint64_t offset, uint64_t limit, uint64_t max)
{
	char probe;
	ssize_t n;
	uint64_t want;
	int err;

	if (offset && lseek(fd, (off_t)offset, SEEK_SET) < 0)
		return -errno;
	if (!limit)
		return ward_fence_read_whole(
		    b, fd, size > offset ? size - offset : 0, max);
	want = limit;
	if (want > max)
		want = max + 1;
	while (b->len < want) {
		char chunk[65536];
		size_t ask = want - b->len < sizeof(chunk)
				 ? (size_t)(want - b->len)
				 : sizeof(chunk);

		n = ward_fence_read_retry(fd, chunk, ask);
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		err = ward_fence_buf_append(b, chunk, (size_t)n);
		if (err)
			return err;
	}
	if (b->len > max)
		return -EFBIG;
	n = ward_fence_read_retry(fd, &probe, 1);
	*truncated = n > 0;
	return 0;
}

/* Lines @offset.. of @fd, at most @limit (0: all), -EFBIG past @max. */
static int read_lines(struct buf *b, bool *truncated, int fd, uint64_t size,
		      uint64_t offset, uint64_t limit, uint64_t max)
{
	char chunk[65536];
	const char *p, *end, *nl;
	uint64_t skipped = 0, taken = 0;
	ssize_t n;
	int err;

	if (!offset && !limit)
		return ward_fence_read_whole(b, fd, size, max);
	for (;;) {
		n = ward_fence_read_retry(fd, chunk, sizeof(chunk));
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		p = chunk;
		end = chunk + n;
		while (skipped < offset && p < end) {
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl) {
				p = end;
				break;
			}
			p = nl + 1;
			skipped++;
		}
		if (limit && taken >= limit && p < end) {
			*truncated = true;
			return 0;
		}
		while (p < end && (!limit || taken < limit)) {
			nl = limit ? memchr(p, '\n', (size_t)(end - p)) : NULL;
			if (!nl) {
				err = ward_fence_buf_append(b, p,
							    (size_t)(end - p));
				p = end;
			} else {
				err = ward_fence_buf_append(
				    b, p, (size_t)(nl + 1 - p));
				p = nl + 1;
				taken++;
			}
			if (err)
				return err;
		}
		if (b->len > max)
			return -EFBIG;
		if (limit && taken >= limit && p < end) {
			*truncated = true;
			return 0;
		}
	}
}

int ward_fs_read(struct ward_fs_content *out, struct ward_fs_denial *denial,
		 const ward_policy *policy, const char *path,
		 const struct ward_fs_read_options *opts)
{
	struct ward_fs_read_options o = WARD_FS_READ_OPTIONS_INIT;
	struct buf b = {0};
	struct fence f;
	struct stat st;
	bool truncated = false;
	int fd, err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "read: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	if (!o.max_bytes)
		o.max_bytes = WARD_FS_MAX_BYTES_DEFAULT;
	ward_fence_init(&f, policy, WARD_FS_OP_READ, denial);
	fd = open_for_read(&f, path, O_RDONLY | O_NONBLOCK, NULL);
	ward_fence_done(&f); /* judged: what is read is the open file */
	if (fd < 0)
		return fd;
	err = stat_regular(&st, fd, path);
	if (err)
		goto out_close;
	if (o.binary)
		err = read_bytes(&b, &truncated, fd, (uint64_t)st.st_size,
				 o.offset, o.limit, o.max_bytes);
	else
		err = read_lines(&b, &truncated, fd, (uint64_t)st.st_size,
				 o.offset, o.limit, o.max_bytes);
	if (err == -EFBIG) {
		err = ward_err(err,
			       "%s: too large to read at once (more than %llu "
			       "bytes); read a part with an offset and a limit",
			       path, (unsigned long long)o.max_bytes);
		goto out_free;
	}
	if (err) {
		err = ward_err(err, "%s: %s", path, strerror(-err));
		goto out_free;
	}
	if (!b.data && ward_fence_buf_append(&b, "", 0) != 0) {
		err = ward_err(-ENOMEM, "out of memory");
		goto out_free;
	}
	if (!o.binary && !ward_fence_is_text(b.data, b.len)) {
		err = ward_err(WARD_ENOTTEXT,
			       "%s: not text (NUL bytes or invalid UTF-8); "
			       "read it as bytes",
			       path);
		goto out_free;
	}
	out->data = b.data;
	out->len = b.len;
	out->file_size = (uint64_t)st.st_size;
	out->truncated = truncated;
	close(fd);
	return 0;

out_free:
	free(b.data);
out_close:
	close(fd);
	return err;
}

void ward_fs_content_clear(struct ward_fs_content *c)
{
	if (!c)
		return;
	free(c->data);
	memset(c, 0, sizeof(*c));
}

/* --- write, edit ------------------------------------------------------- */

/* The current regular file @name in @dirfd (*exists false when absent). */
static int stat_existing(struct stat *st, bool *exists, int dirfd,
			 const char *name, const char *given)
{
	*exists = false;
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return 0;
		return ward_err(-errno, "%s: %s", given, strerror(errno));
	}
	if (S_ISDIR(st->st_mode))
		return ward_err(-EISDIR, "%s: is a directory", given);
	/* A symlink here was planted after resolution (it resolved as
	 * something else): replacing the link itself writes nothing
	 * outside, so treat it as absent. */
	if (S_ISLNK(st->st_mode))
		return 0;
	if (!S_ISREG(st->st_mode))
		return ward_err(WARD_EINVAL, "%s: not a regular file", given);
	*exists = true;
	return 0;
}

int ward_fs_write(struct ward_fs_denial *denial, const ward_policy *policy,
		  const char *path, const void *data, size_t len,
		  const struct ward_fs_write_options *opts)
{
	struct ward_fs_write_options o = WARD_FS_WRITE_OPTIONS_INIT;
	struct source src = {data, len, -1};
	struct target t;
	struct fence f;
	struct stat st;
	bool exists;
	int err;

	if (!policy || (!data && len))
		return ward_err(WARD_EINVAL, "write: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	ward_fence_init(&f, policy, WARD_FS_OP_WRITE, denial);
	err =
	    ward_fence_target_open(&t, &f, path,
				   T_FOLLOW | T_MISSING_LAST |
				       (o.create_parents ? T_MISSING_TAIL : 0));
	if (err)
		goto out_fence;
	if (t.c.trailing_slash || !*t.name) {
		err = ward_err(-EISDIR, "%s: names a directory", path);
		goto out_target;
	}
	if (t.c.missing > 1) {
		err = ward_fence_target_make_parents(&t, path);
		if (err)
			goto out_target;
	}
	err = stat_existing(&st, &exists, t.dirfd, t.name, path);
	if (err)
		goto out_target;
	if (exists && o.exclusive) {
		err = ward_err(-EEXIST, "%s: already exists", path);
		goto out_target;
	}
	err =
	    ward_fence_replace_file(t.dirfd, t.name, &src, exists ? &st : NULL,
				    NULL, o.exclusive ? R_EXCLUSIVE : 0, path);
out_target:
	ward_fence_target_close(&t);
out_fence:
	ward_fence_done(&f);
	return err;
}

/* Count the non-overlapping occurrences of @old in @s. */
static size_t count_occurrences(const char *s, size_t len, const char *old,
				size_t olen)
{
	const char *p = s, *end = s + len, *hit;
	size_t n = 0;

	while ((hit = memmem(p, (size_t)(end - p), old, olen))) {
		n++;
		p = hit + olen;
	}
	return n;
}

int ward_fs_edit(size_t *replacements, struct ward_fs_denial *denial,
		 const ward_policy *policy, const char *path,
		 const char *old_text, const char *new_text,
		 const struct ward_fs_edit_options *opts)
{
	struct ward_fs_edit_options o = WARD_FS_EDIT_OPTIONS_INIT;
	struct buf in = {0}, out = {0};
	struct source src = {NULL, 0, -1};
	const char *p, *hit, *end;
	size_t olen, nlen, count;
	struct target t;
	struct fence f;
	struct stat st;
	int fd = -1, err;

	if (!policy || !old_text || !new_text)
		return ward_err(WARD_EINVAL, "edit: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	if (!o.max_bytes)
		o.max_bytes = WARD_FS_MAX_BYTES_DEFAULT;
	olen = strlen(old_text);
	nlen = strlen(new_text);
	if (!olen)
		return ward_err(WARD_EINVAL, "edit %s: the old text is empty",
				path ? path : "");
	if (strcmp(old_text, new_text) == 0)
		return ward_err(WARD_EINVAL,
				"edit %s: the old and new text are identical",
				path ? path : "");
	ward_fence_init(&f, policy, WARD_FS_OP_EDIT, denial);
	err = ward_fence_target_open(&t, &f, path, T_FOLLOW);
	if (err)
		goto out_fence;
	fd = openat(t.dirfd, t.name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = ward_err(errno == ELOOP ? -EAGAIN : -errno, "%s: %s",
			       path, strerror(errno));
		goto out_target;
	}
	err = stat_regular(&st, fd, path);
	if (err)
		goto out_close;
	err = ward_fence_read_whole(&in, fd, (uint64_t)st.st_size, o.max_bytes);
	if (err == -EFBIG) {
		err = ward_err(err,
			       "%s: too large to edit (more than %llu "
			       "bytes)",
			       path, (unsigned long long)o.max_bytes);
		goto out_close;
	}
	if (!err && !in.data)
		err = ward_fence_buf_append(&in, "", 0);
	if (err) {
		err = ward_err(err, "%s: %s", path, strerror(-err));
		goto out_close;
	}
	if (!ward_fence_is_text(in.data, in.len)) {
		err =
		    ward_err(WARD_ENOTTEXT,
			     "%s: not text (NUL bytes or invalid UTF-8)", path);
		goto out_close;
	}
	count = count_occurrences(in.data, in.len, old_text, olen);
	if (count == 0) {
		err = ward_err(WARD_ENOMATCH, "%s: the old text was not found",
			       path);
		goto out_close;
	}
	if (count > 1 && !o.replace_all) {
		err = ward_err(WARD_ENOTUNIQUE,
			       "%s: the old text occurs %zu times; give more "
			       "context or ask to replace all",
			       path, count);
		goto out_close;
	}
	/* The result is bounded like what was read: replace_all of one
	 * byte by a long text would otherwise grow without end. */
	if (nlen > olen && nlen - olen > (o.max_bytes - in.len) / count) {
		err = ward_err(-EFBIG,
			       "%s: the edit would make it larger than %llu "
			       "bytes (%zu replacements); nothing was written",
			       path, (unsigned long long)o.max_bytes, count);
		goto out_close;
	}
	p = in.data;
	end = in.data + in.len;
	err = ward_fence_buf_append(&out, "", 0);
	for (size_t i = 0; !err && i < count; i++) {
		hit = memmem(p, (size_t)(end - p), old_text, olen);
		err = ward_fence_buf_append(&out, p, (size_t)(hit - p));
		if (!err)
			err = ward_fence_buf_append(&out, new_text, nlen);
		p = hit + olen;
	}
	if (!err)
		err = ward_fence_buf_append(&out, p, (size_t)(end - p));
	if (err) {
		err = ward_err(err, "out of memory");
		goto out_close;
	}
	src.data = out.data;
	src.len = out.len;
	err = ward_fence_replace_file(t.dirfd, t.name, &src, &st, &st, 0, path);
	if (!err && replacements)
		*replacements = count;
out_close:
	close(fd);
	free(in.data);
	free(out.data);
out_target:
	ward_fence_target_close(&t);
out_fence:
	ward_fence_done(&f);
	return err;
}

/* --- remove, move, mkdir ----------------------------------------------- */

/*
 * Remove the directory @name in @parentfd and everything in it, never
 * following a symlink: each directory is entered with O_NOFOLLOW, so one
 * swapped for a symlink is unlinked as a link instead.
 */
static int remove_tree(int parentfd, const char *name, unsigned depth)
{
	struct dirent *e;
	unsigned passes = 0;
	bool again = true;
	DIR *dir;
	int fd, err = 0;

	if (depth > FENCE_MAX_DEPTH)
		return -ENAMETOOLONG; /* names come from readdir: only this */
	fd = openat(parentfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* Not a directory (any more): remove the entry itself. */
		if (errno == ENOTDIR || errno == ELOOP)
			return unlinkat(parentfd, name, 0) ? -errno : 0;
		return errno == ENOENT ? 0 : -errno;
	}
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Entries removed while reading may make readdir skip others: pass
	 * again until a pass finds the directory empty. */
	while (again && !err && passes++ < 16) {
		again = false;
		rewinddir(dir);
		while ((e = readdir(dir))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			again = true;
			if (e->d_type != DT_DIR) {
				if (unlinkat(fd, e->d_name, 0) == 0 ||
				    errno == ENOENT)
					continue;
				if (errno != EISDIR) {
					err = -errno;
					break;
				}
			}
			err = remove_tree(fd, e->d_name, depth + 1);
			if (err)
				break;
		}
	}
	closedir(dir);
	if (err)
		return err;
	return unlinkat(parentfd, name, AT_REMOVEDIR) ? -errno : 0;
}

int ward_fs_remove(struct ward_fs_denial *denial, const ward_policy *policy,
		   const char *path, const struct ward_fs_remove_options *opts)
{
	struct ward_fs_remove_options o = WARD_FS_REMOVE_OPTIONS_INIT;
	struct target t;
	struct fence f;
	struct stat st;
	int err;

	if (!policy)
		return ward_err(WARD_EINVAL, "remove: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	ward_fence_init(&f, policy, WARD_FS_OP_REMOVE, denial);
	err = ward_fence_target_open(&t, &f, path, 0);
	if (err)
		goto out_fence;
	if (fstatat(t.dirfd, t.name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = ward_err(-errno, "%s: %s", path, strerror(errno));
		goto out_target;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(t.dirfd, t.name, 0) != 0)
			err = ward_err(-errno, "%s: %s", path, strerror(errno));
		goto out_target;
	}
	if (!o.recursive) {
		err = ward_err(-EISDIR,
			       "%s: is a directory (remove it recursively)",
			       path);
		goto out_target;
	}
	err = ward_fence_judge_tree(&f, path, t.c.path, t.dirfd, t.name, NULL);
	if (err)
		goto out_target;
	err = remove_tree(t.dirfd, t.name, 0);
	if (err == -ENAMETOOLONG)
		err = ward_fence_too_deep(path);
	else if (err)
		err = ward_err(err, "%s: %s", path, strerror(-err));
out_target:
	ward_fence_target_close(&t);
out_fence:
	ward_fence_done(&f);
	return err;
}

/* Across file systems: copy the regular file, then remove the source. */
static int move_by_copy(struct target *s, struct target *d, bool overwrite,
			const char *from, const char *to)
{
	struct source src = {NULL, 0, -1};
	struct stat st, dst;
	bool exists;
	int err;

	src.fd = openat(s->dirfd, s->name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (src.fd < 0)
		return ward_err(-EXDEV,
				"move %s to %s: different file systems, and "
				"only a regular file can be copied across",
				from, to);
	if (fstat(src.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(src.fd);
		return ward_err(-EXDEV,
				"move %s to %s: different file systems, and "
				"only a regular file can be copied across",
				from, to);
	}
	err = stat_existing(&dst, &exists, d->dirfd, d->name, to);
	if (!err && exists && !overwrite)
		err = ward_err(-EEXIST, "%s: already exists", to);
	/* Keep the source's permissions: it is the same file, moved. */
	if (!err)
		err =
		    ward_fence_replace_file(d->dirfd, d->name, &src, &st, NULL,
					    overwrite ? 0 : R_EXCLUSIVE, to);
	close(src.fd);
	if (!err && unlinkat(s->dirfd, s->name, 0) != 0)
		err = ward_err(-errno,
			       "move %s: copied to %s, but removing "
			       "the source failed: %s",
			       from, to, strerror(errno));
	return err;
}

int ward_fs_move(struct ward_fs_denial *denial, const ward_policy *policy,
		 const char *from, const char *to,
		 const struct ward_fs_move_options *opts)
{
	struct ward_fs_move_options o = WARD_FS_MOVE_OPTIONS_INIT;
	struct target s, d;
	struct fence f;
	struct stat st;
	int err;

	if (!policy)
		return ward_err(WARD_EINVAL, "move: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	ward_fence_init(&f, policy, WARD_FS_OP_MOVE, denial);
	err = ward_fence_target_open(&s, &f, from, 0);
	if (err)
		goto out_fence;
	err = ward_fence_target_open(&d, &f, to, T_MISSING_LAST);
	if (err)
		goto out_source;
	if (fstatat(s.dirfd, s.name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = ward_err(-errno, "%s: %s", from, strerror(errno));
		goto out_dest;
	}
	if (S_ISDIR(st.st_mode)) {
		err = ward_fence_judge_tree(&f, from, s.c.path, s.dirfd, s.name,
					    d.c.path);
		if (err)
			goto out_dest;
	}
	if (ward_fence_sys_renameat2(s.dirfd, s.name, d.dirfd, d.name,
				     o.overwrite ? 0 : RENAME_NOREPLACE) == 0)
		goto out_dest;
	err = -errno;
	if (err == -EXDEV)
		err = move_by_copy(&s, &d, o.overwrite, from, to);
	else if (err == -EEXIST || err == -ENOTEMPTY)
		err = ward_err(-EEXIST, "move %s: %s already exists", from, to);
	else
		err = ward_err(err, "move %s to %s: %s", from, to,
			       strerror(-err));
out_dest:
	ward_fence_target_close(&d);
out_source:
	ward_fence_target_close(&s);
out_fence:
	ward_fence_done(&f);
	return err;
}

int ward_fs_mkdir(struct ward_fs_denial *denial, const ward_policy *policy,
		  const char *path, const struct ward_fs_mkdir_options *opts)
{
	struct ward_fs_mkdir_options o = WARD_FS_MKDIR_OPTIONS_INIT;
	struct target t;
	struct fence f;
	int err;

	if (!policy)
		return ward_err(WARD_EINVAL, "mkdir: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	ward_fence_init(&f, policy, WARD_FS_OP_MKDIR, denial);
	err = ward_fence_target_open(&t, &f, path,
				     T_FOLLOW | T_MISSING_LAST |
					 (o.parents ? T_MISSING_TAIL : 0));
	if (err)
		goto out_fence;
	if (!t.c.missing) {
		if (!S_ISDIR(t.c.st.st_mode))
			err =
			    ward_err(o.parents ? -ENOTDIR : -EEXIST,
				     "%s: exists and is not a directory", path);
		else if (!o.parents)
			err = ward_err(-EEXIST, "%s: already exists", path);
		goto out_target;
	}
	err = ward_fence_depth_check(&t, path, true);
	if (!err)
		err = ward_fence_target_make_parents(&t, path);
	if (err)
		goto out_target;
	if (mkdirat(t.dirfd, t.name, 0777) != 0 &&
	    (errno != EEXIST || !o.parents))
		err = ward_err(-errno, "%s: %s", path, strerror(errno));
out_target:
	ward_fence_target_close(&t);
out_fence:
	ward_fence_done(&f);
	return err;
}

/* --- list, stat -------------------------------------------------------- */

static enum ward_fs_type type_of(mode_t mode)
{
	if (S_ISREG(mode))
		return WARD_FS_TYPE_FILE;
	if (S_ISDIR(mode))
		return WARD_FS_TYPE_DIR;
	if (S_ISLNK(mode))
		return WARD_FS_TYPE_SYMLINK;
	return WARD_FS_TYPE_OTHER;
}

struct lister {
	struct fence *f;
	const char *given;
	bool judge; /* `--` rules exist: match every entry */
	unsigned max_depth;
	size_t max_entries;
	struct ward_fs_listing out;
	size_t cap;
	char real[PATH_MAX]; /* resolved path of the current entry */
	size_t rlen;
	char rel[PATH_MAX]; /* its path relative to the listed directory */
	size_t llen;
};

static int lister_add(struct lister *l, const struct stat *st, bool denied)
{
	struct ward_fs_entry *e;
	size_t cap;

	if (l->out.count == l->cap) {
		cap = l->cap ? l->cap * 2 : 64;
		e = realloc(l->out.entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		l->out.entries = e;
		l->cap = cap;
	}
	e = &l->out.entries[l->out.count];
	memset(e, 0, sizeof(*e));
	e->path = strdup(l->rel);
	if (!e->path)
		return -ENOMEM;
	e->type = type_of(st->st_mode);
	e->denied = denied;
	if (!denied) {
		e->size = (uint64_t)st->st_size;
		e->mode = (uint32_t)(st->st_mode & 07777);
		e->mtime_sec = (int64_t)st->st_mtim.tv_sec;
	}
	l->out.count++;
	return 0;
}

static int list_dir(struct lister *l, int dirfd, unsigned depth)
{
	size_t rlen = l->rlen, llen = l->llen, n;
	struct dirent *e;
	struct stat st;
	bool denied;
	DIR *dir;
	int err = 0, sub;

	dir = fdopendir(dirfd);
	if (!dir) {
		err = -errno;
		close(dirfd);
		return err;
	}
	while ((errno = 0, e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (l->out.count >= l->max_entries) {
			l->out.truncated = true;
			break;
		}
		n = strlen(e->d_name);
		if (rlen + 1 + n >= PATH_MAX || llen + 1 + n >= PATH_MAX)
			continue;
		l->real[rlen] = '/';
		memcpy(l->real + rlen + 1, e->d_name, n + 1);
		l->rlen = rlen + 1 + n;
		if (llen)
			l->rel[llen] = '/';
		memcpy(l->rel + llen + !!llen, e->d_name, n + 1);
		l->llen = llen + !!llen + n;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			goto next; /* vanished meanwhile */
		denied =
		    l->judge && ward_fence_rule_access(l->f, l->real) ==
				    WARD_ACCESS_NONE;
		err = lister_add(l, &st, denied);
		if (err)
			break;
		if (S_ISDIR(st.st_mode) && !denied &&
		    depth + 1 < l->max_depth) {
			sub = openat(dirfd, e->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
			if (sub >= 0) {
				err = list_dir(l, sub, depth + 1);
				if (err)
					break;
			}
		}
	next:
		l->rlen = rlen;
		l->llen = llen;
	}
	if (!err && errno)
		err = -errno;
	l->rlen = rlen;
	l->llen = llen;
	l->real[rlen] = '\0';
	l->rel[llen] = '\0';
	closedir(dir);
	return err;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct ward_fs_entry *x = a, *y = b;

	return strcmp(x->path, y->path);
}

int ward_fs_list(struct ward_fs_listing *out, struct ward_fs_denial *denial,
		 const ward_policy *policy, const char *path,
		 const struct ward_fs_list_options *opts)
{
	struct ward_fs_list_options o = WARD_FS_LIST_OPTIONS_INIT;
	struct lister *l;
	struct fence f;
	char *real = NULL;
	int fd, err;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "list: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	ward_fence_init(&f, policy, WARD_FS_OP_LIST, denial);
	fd = open_for_read(&f, path, O_RDONLY | O_DIRECTORY, &real);
	if (fd < 0) {
		ward_fence_done(&f);
		if (fd == -ENOTDIR)
			ward_err(fd, "%s: not a directory", path);
		return fd;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		ward_fence_done(&f);
		close(fd);
		free(real);
		return ward_err(-ENOMEM, "out of memory");
	}
	l->f = &f;
	l->given = path;
	/* A listing that holds /proc meets the processes' entries there. */
	l->judge = ward_fence_rules_restrict(&f, WARD_ACCESS_NONE) ||
		   util_path_within("/proc", real) ||
		   util_path_within(real, "/proc");
	l->max_depth = !o.recursive  ? 1
		       : o.max_depth ? o.max_depth
				     : WARD_FS_LIST_MAX_DEPTH_DEFAULT;
	if (l->max_depth > FENCE_MAX_DEPTH)
		l->max_depth = FENCE_MAX_DEPTH;
	l->max_entries =
	    o.max_entries ? o.max_entries : WARD_FS_LIST_MAX_ENTRIES_DEFAULT;
	ward_fence_copy_trunc(l->real, sizeof(l->real),
			      strcmp(real, "/") ? real : "");
	l->rlen = strlen(l->real);
	free(real);
	err = list_dir(l, fd, 0);
	if (err) {
		ward_fs_listing_clear(&l->out);
		err = ward_err(err, "%s: %s", path, strerror(-err));
	} else {
		if (l->out.count)
			qsort(l->out.entries, l->out.count,
			      sizeof(*l->out.entries), entry_cmp);
		*out = l->out;
	}
	free(l);
	ward_fence_done(&f);
	return err;
}

void ward_fs_listing_clear(struct ward_fs_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->count; i++)
		free(l->entries[i].path);
	free(l->entries);
	memset(l, 0, sizeof(*l));
}

int ward_fs_stat(struct ward_fs_stat *out, struct ward_fs_denial *denial,
		 const ward_policy *policy, const char *path,
		 const struct ward_fs_stat_options *opts)
{
	struct ward_fs_stat_options o = WARD_FS_STAT_OPTIONS_INIT;
	struct ward_fs_stat r = {0};
	struct canon c = {0};
	struct fence f;
	struct stat st;
	char *abs = NULL, *slash, link[PATH_MAX];
	const char *name;
	int err, dirfd = -1, tries;
	ssize_t n;

	if (!out || !policy)
		return ward_err(WARD_EINVAL, "stat: missing argument");
	err = fs_options_take(&o, opts, sizeof(o));
	if (err)
		return err;
	ward_fence_init(&f, policy, WARD_FS_OP_STAT, denial);
	err = ward_fence_path_absolute(&abs, policy, path);
	if (err)
		return err;
	for (tries = 0; tries < FENCE_RETRIES; tries++) {
		ward_fence_canon_clear(&c);
		err = ward_fence_canon_resolve(&c, abs, o.follow);
		/* Judged before "not found", as in open_for_read(). */
		if (!err) {
			err = ward_fence_judge(&f, path, c.path, NULL);
			if (err)
				goto out_free;
		}
		if (!err && c.missing)
			err = -ENOENT;
		if (err) {
			err = ward_err(err, "%s: %s", path, strerror(-err));
			goto out_free;
		}
		/* Describe the entry through its parent, opened without
		 * following symlinks, so what is judged is what is seen. */
		slash = strrchr(c.path, '/');
		name = slash[1] ? slash + 1 : ".";
		*slash = '\0';
		dirfd = ward_fence_open_nofollow(slash == c.path ? "/" : c.path,
						 O_PATH | O_DIRECTORY);
		*slash = '/';
		if (dirfd >= 0)
			break;
		err = dirfd;
		if (err != -ELOOP && err != -ENOENT && err != -ENOTDIR &&
		    err != -EAGAIN) {
			err = ward_err(err, "%s: %s", path, strerror(-err));
			goto out_free;
		}
	}
	if (dirfd < 0) {
		err = ward_err(-EAGAIN, "%s: the path kept changing", path);
		goto out_free;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = ward_err(-errno, "%s: %s", path, strerror(errno));
		goto out_close;
	}
	r.type = type_of(st.st_mode);
	r.size = (uint64_t)st.st_size;
	r.mode = (uint32_t)(st.st_mode & 07777);
	r.nlink = (uint64_t)st.st_nlink;
	r.mtime_sec = (int64_t)st.st_mtim.tv_sec;
	r.mtime_nsec = st.st_mtim.tv_nsec;
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dirfd, name, link, sizeof(link) - 1);
		if (n < 0) {
			err = ward_err(-errno, "%s: %s", path, strerror(errno));
			goto out_close;
		}
		link[n] = '\0';
		r.link_target = strdup(link);
		if (!r.link_target) {
			err = ward_err(-ENOMEM, "out of memory");
			goto out_close;
		}
	}
	r.resolved = c.path;
	c.path = NULL;
	*out = r;
out_close:
	close(dirfd);
out_free:
	ward_fence_done(&f);
	ward_fence_canon_clear(&c);
	free(abs);
	return err;
}

void ward_fs_stat_clear(struct ward_fs_stat *st)
{
	if (!st)
		return;
	free(st->resolved);
	free(st->link_target);
	memset(st, 0, sizeof(*st));
}
