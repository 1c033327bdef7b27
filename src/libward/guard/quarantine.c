/*
 * ward — the quarantine: boxes the guard moves things into, kept-beside
 * entries when it cannot, and the listing, restoring and pruning of
 * `ward quarantine` (see quarantine.h and ward/quarantine.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libward/internal.h"
#include "libward/policy/protect.h"
#include "quarantine.h"
#include "util/util.h"
#include "ward/quarantine.h"

/*
 * renameat2(2) (Linux 3.15), by number: the C libraries ward builds with
 * may lack the wrapper.
 */
#ifndef SYS_renameat2
#if defined(__x86_64__)
#define SYS_renameat2 316
#elif defined(__aarch64__)
#define SYS_renameat2 276
#endif
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef SEEK_DATA
#define SEEK_DATA 3
#define SEEK_HOLE 4
#endif

/* How deep a tree is copied, measured or removed. */
#define TREE_DEPTH_MAX 256
/* Entries measured before a tree counts as too large to keep. */
#define TREE_ENTRIES_MAX 1000000
/* A manifest larger than this is not read whole. */
#define MANIFEST_MAX (16 * 1024 * 1024)

/* mkdir @name in @dirfd (mode 0700) unless it exists; open it. */
static int mkdir_open(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
		return -1;
	return util_openat_dir(dirfd, name);
}

/* renameat2(RENAME_NOREPLACE), or -errno. */
static int rename_noreplace(int ofd, const char *old, int nfd, const char *new)
{
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, ofd, old, nfd, new, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return -errno;
#endif
	/* No RENAME_NOREPLACE (old kernel or file system): linkat for a
	 * file would not do for a directory; check, then rename. */
	struct stat st;

	if (fstatat(nfd, new, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	return renameat(ofd, old, nfd, new) == 0 ? 0 : -errno;
}

const char *ward_quarantine_base(char *buf, size_t len)
{
	char *state = ward_state_dir();
	int n;

	if (!state)
		return NULL;
	n = snprintf(buf, len, "%s/quarantine", state);
	free(state);
	return n > 0 && (size_t)n < len ? buf : NULL;
}

/* The quarantine directory, opened (created when @create). -1: none. */
static int open_base(char *base, size_t len, bool create)
{
	char *home_end;
	struct stat st;

	if (!ward_quarantine_base(base, len))
		return -1;
	/* The directory holding ward's state directory's parents must
	 * exist (a home of /nonexistent is never created). */
	home_end = strstr(base, "/.local/state/ward/quarantine");
	if (home_end) {
		*home_end = '\0';
		if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
			*home_end = '/';
			return -1;
		}
		*home_end = '/';
	}
	if (create && util_mkdir_p(base) != 0)
		return -1;
	return open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* --- trees ---------------------------------------------------------------- */

static int remove_at(int pfd, const char *name, unsigned depth)
{
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	if (unlinkat(pfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > TREE_DEPTH_MAX)
		return -ELOOP;
	fd = util_openat_dir(pfd, name);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		bool any = false;

		while (!err && (de = readdir(d))) {
			if (is_dot(de->d_name))
				continue;
			any = true;
			err = remove_at(dirfd(d), de->d_name, depth + 1);
		}
		if (err || !any)
			break;
		rewinddir(d);
	}
	closedir(d);
	if (!err && unlinkat(pfd, name, AT_REMOVEDIR) != 0)
		err = -errno;
	return err;
}

int ward_tree_remove(int dirfd, const char *name)
{
	return remove_at(dirfd, name, 0);
}

/* What a tree holds: allocated bytes, entries, and whether every entry is
 * a regular file, directory or symlink (what a copy can recreate). */
struct measure {
	uint64_t bytes;
	size_t entries;
	bool copyable;
	bool over;
};

static void measure_at(struct measure *m, int pfd, const char *name,
		       unsigned depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	if (m->over || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (++m->entries > TREE_ENTRIES_MAX || depth > TREE_DEPTH_MAX) {
		m->over = true;
		return;
	}
	m->bytes += (uint64_t)st.st_blocks * 512;
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return;
	if (!S_ISDIR(st.st_mode)) {
		m->copyable = false;
		return;
	}
	fd = util_openat_dir(pfd, name);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		m->copyable = false;
		return;
	}
	while ((de = readdir(d)) && !m->over) {
		if (!is_dot(de->d_name))
			measure_at(m, dirfd(d), de->d_name, depth + 1);
	}
	closedir(d);
}

/*
 * Copy [@off, @end) of @in to @out at the same offsets: copy_file_range
 * where the kernel can, else read and write. *@left bounds the bytes.
 */
static int copy_range(int in, int out, off_t off, off_t end, uint64_t *left)
{
	char buf[65536];
	bool plain = false;

	while (off < end) {
		size_t want = (size_t)(end - off);
		ssize_t n;

		if (*left == 0)
			return -EFBIG;
		if (want > *left)
			want = (size_t)*left;
		if (!plain) {
			loff_t io = off, oo = off;

			n = copy_file_range(in, &io, out, &oo, want, 0);
			if (n < 0 && (errno == EXDEV || errno == EINVAL ||
				      errno == ENOSYS || errno == EOPNOTSUPP ||
				      errno == EBADF)) {
				plain = true;
				continue;
			}
		} else {
			if (want > sizeof(buf))
				want = sizeof(buf);
			n = pread(in, buf, want, off);
			for (ssize_t w = 0, done = 0; n > 0 && done < n;
			     done += w) {
				w = pwrite(out, buf + done, (size_t)(n - done),
					   off + done);
				if (w < 0 && errno == EINTR) {
					w = 0;
					continue;
				}
				if (w <= 0)
					return w < 0 ? -errno : -EIO;
			}
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break; /* the file shrank meanwhile */
		off += n;
		*left -= (uint64_t)n;
	}
	return 0;
}

/* Copy the regular file @in (size @size) to @out, data extents only. */
static int copy_sparse(int in, int out, off_t size, uint64_t *left)
{
	off_t off = 0;
	int err;

	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* only a hole is left */
		if (data < 0) {
			/* No SEEK_DATA here: all of it is data. */
			err = copy_range(in, out, off, size, left);
			if (err)
				return err;
			break;
		}
		hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			hole = size;
		err = copy_range(in, out, data, hole, left);
		if (err)
			return err;
		off = hole;
	}
	return ftruncate(out, size) == 0 ? 0 : -errno;
}

static int copy_at(int sfd, const char *name, int dfd, const char *dname,
		   uint64_t *left, unsigned depth)
{
	char buf[PATH_MAX];
	struct dirent *de;
	struct stat st;
	ssize_t r;
	int in, outfd, err = 0;
	DIR *d;

	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		r = readlinkat(sfd, name, buf, sizeof(buf) - 1);
		if (r < 0)
			return -errno;
		buf[r] = '\0';
		return symlinkat(buf, dfd, dname) == 0 ? 0 : -errno;
	}
	if (S_ISREG(st.st_mode)) {
		in = openat(sfd, name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (in < 0)
			return -errno;
		outfd = openat(
		    dfd, dname,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (outfd < 0) {
			err = -errno;
			close(in);
			return err;
		}
		if (fstat(in, &st) != 0)
			err = -errno;
		else
			err = copy_sparse(in, outfd, st.st_size, left);
		if (!err && fchmod(outfd, st.st_mode & 0777) != 0)
			err = -errno;
		close(in);
		if (close(outfd) != 0 && !err)
			err = -errno;
		return err;
	}
	if (!S_ISDIR(st.st_mode))
		return -ENOTSUP;
	if (depth > TREE_DEPTH_MAX)
		return -ELOOP;
	outfd = mkdir_open(dfd, dname);
	if (outfd < 0)
		return -errno;
	in = util_openat_dir(sfd, name);
	d = in >= 0 ? fdopendir(in) : NULL;
	if (!d) {
		err = in >= 0 ? -ENOMEM : -errno;
		if (in >= 0)
			close(in);
		close(outfd);
		return err;
	}
	while (!err && (de = readdir(d))) {
		if (!is_dot(de->d_name))
			err = copy_at(dirfd(d), de->d_name, outfd, de->d_name,
				      left, depth + 1);
	}
	closedir(d);
	if (!err && fchmod(outfd, st.st_mode & 0777) != 0)
		err = -errno;
	close(outfd);
	return err;
}

int ward_tree_copy(int sfd, const char *name, int dfd, const char *dname,
		   uint64_t *left)
{
	return copy_at(sfd, name, dfd, dname, left, 0);
}

/* --- the manifest ---------------------------------------------------------- */

/* @s with tab, newline and backslash escaped, appended to @m. */
static void put_field(FILE *m, const char *s)
{
	for (; *s; s++) {
		if (*s == '\t')
			fputs("\\t", m);
		else if (*s == '\n')
			fputs("\\n", m);
		else if (*s == '\\')
			fputs("\\\\", m);
		else
			fputc(*s, m);
	}
}

/* One manifest line, written with one write(). */
static void manifest_add(struct ward_qbox *q, const char *kind, uint64_t bytes,
			 const char *abs, const char *stored, const char *what)
{
	char *line = NULL;
	size_t len = 0;
	FILE *m;

	if (q->man_fd < 0)
		return;
	m = open_memstream(&line, &len);
	if (!m)
		return;
	fprintf(m, "%s\t%llu\t", kind, (unsigned long long)bytes);
	put_field(m, abs);
	fputc('\t', m);
	put_field(m, stored);
	fputc('\t', m);
	put_field(m, what ? what : "");
	fputc('\n', m);
	if (fclose(m) == 0 && line)
		(void)util_write_all(q->man_fd, line, len);
	free(line);
}

/* Unescape the field at *@p up to a tab or the end (in place). */
static char *take_field(char **p)
{
	char *s = *p, *o = s, *start = s;

	if (!s)
		return NULL;
	while (*s && *s != '\t') {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
			s++;
			continue;
		}
		*o++ = *s++;
	}
	*p = *s == '\t' ? s + 1 : NULL;
	*o = '\0';
	return start;
}

/* --- boxes ----------------------------------------------------------------- */

/* The time of the box named @id ("YYYYmmddTHHMMSSZ-…"), or -1. */
static int64_t box_time(const char *id)
{
	struct tm tm;
	int v[6];

	memset(&tm, 0, sizeof(tm));
	if (sscanf(id, "%4d%2d%2dT%2d%2d%2dZ-", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5]) != 6 ||
	    strlen(id) < 17 || id[15] != 'Z' || id[16] != '-')
		return -1;
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	return (int64_t)timegm(&tm);
}

/* Remove the boxes older than @age seconds (0: all) under @bfd, or the
 * one named @only. */
static size_t prune_boxes(int bfd, int64_t age, const char *only)
{
	int64_t now = (int64_t)time(NULL);
	struct ward_strv old = {0};
	struct dirent *de;
	size_t removed = 0;
	int fd = dup(bfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		int64_t t = box_time(de->d_name);

		if (t < 0 || (only && strcmp(only, de->d_name) != 0))
			continue;
		if (age == 0 || now - t > age)
			ward_strv_push(&old, de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < old.n; i++) {
		if (ward_tree_remove(bfd, old.v[i]) == 0)
			removed++;
	}
	ward_strv_discard(&old);
	return removed;
}

void ward_qbox_init(struct ward_qbox *q, uint64_t quota, int64_t retention)
{
	memset(q, 0, sizeof(*q));
	q->fd = -1;
	q->man_fd = -1;
	q->quota = quota;
	q->retention = retention;
}

/*
 * The box of this check, made (mode 0700, with ward's state directory
 * when missing, never the home directory itself) the first time something
 * is taken; boxes past the retention are pruned then, and the whole
 * quarantine measured for the quota. -1 when there is none.
 */
static int qbox_open(struct ward_qbox *q)
{
	static unsigned counter;
	char base[PATH_MAX], name[96];
	struct measure m = {0, 0, true, false};
	struct timespec ts;
	struct tm tm;
	int bfd, box = -1;

	if (q->fd >= 0 || q->fd == -2)
		return q->fd >= 0 ? q->fd : -1;
	q->fd = -2;
	bfd = open_base(base, sizeof(base), true);
	if (bfd < 0)
		return -1;
	if (q->retention > 0)
		prune_boxes(bfd, q->retention, NULL);
	measure_at(&m, bfd, ".", 0);
	q->used = m.over ? UINT64_MAX : m.bytes;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	for (int tries = 0; tries < 100 && box < 0; tries++) {
		snprintf(name, sizeof(name),
			 "%04d%02d%02dT%02d%02d%02dZ-%ld-%u", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (long)getpid(),
			 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
		if (mkdirat(bfd, name, 0700) != 0) {
			if (errno == EEXIST)
				continue;
			break;
		}
		box = util_openat_dir(bfd, name);
	}
	close(bfd);
	if (box < 0)
		return -1;
	q->man_fd = openat(
	    box, "manifest",
	    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	q->fd = mkdir_open(box, "files");
	close(box);
	if (q->fd < 0) {
		q->fd = -2;
		return -1;
	}
	snprintf(q->id, sizeof(q->id), "%s", name);
	snprintf(q->path, sizeof(q->path), "%s/%s", base, name);
	return q->fd;
}

const char *ward_qbox_path(const struct ward_qbox *q)
{
	return q->fd >= 0 ? q->path : NULL;
}

void ward_qbox_close(struct ward_qbox *q)
{
	if (q->fd >= 0)
		close(q->fd);
	if (q->man_fd >= 0)
		close(q->man_fd);
	q->fd = q->man_fd = -1;
}

/*
 * The directories of @abs below the box's files/ (made), opened; the last
 * component goes to @last. -1 on failure.
 */
static int box_parent(int fd, const char *abs, const char **last)
{
	char comp[NAME_MAX + 1];
	const char *p = abs, *slash;
	int cur = dup(fd);

	while (*p == '/')
		p++;
	while (cur >= 0 && (slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);
		int sub;

		if (n == 0 || n > NAME_MAX) {
			p = slash + 1;
			continue;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		sub = mkdir_open(cur, comp);
		close(cur);
		cur = sub;
		p = slash + 1;
	}
	*last = p;
	return cur;
}

/* Rename @name beside itself: "<name>.ward-kept-<id>[.<n>]". */
static enum ward_qtake keep_beside(struct ward_qbox *q, struct ward_qresult *r,
				   int dirfd, const char *name, const char *abs,
				   uint64_t bytes, const char *what)
{
	static unsigned counter;
	char kname[NAME_MAX + 1];
	const char *slash = strrchr(abs, '/');
	size_t dlen = slash ? (size_t)(slash - abs) : 0;

	for (int i = 0; i < 100; i++) {
		int n, err;

		if (q->id[0])
			n = snprintf(kname, sizeof(kname), "%s%s%s%s%d", name,
				     WARD_KEPT_INFIX, q->id, i ? "." : "", i);
		else
			n = snprintf(
			    kname, sizeof(kname), "%s%s%ld-%u", name,
			    WARD_KEPT_INFIX, (long)getpid(),
			    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
		if (i == 0 && q->id[0])
			kname[strlen(kname) - 1] = '\0'; /* no ".0" */
		if (n < 0 || (size_t)n >= sizeof(kname))
			break;
		err = rename_noreplace(dirfd, name, dirfd, kname);
		if (err == -EEXIST)
			continue;
		if (err) {
			r->how =
			    err == -ENOENT ? WARD_QTAKE_GONE : WARD_QTAKE_STUCK;
			return r->how;
		}
		snprintf(r->kept, sizeof(r->kept), "%.*s/%s", (int)dlen, abs,
			 kname);
		manifest_add(q, "kept", bytes, abs, r->kept, what);
		r->how = WARD_QTAKE_KEPT;
		return r->how;
	}
	r->how = WARD_QTAKE_STUCK;
	return r->how;
}

enum ward_qtake ward_qbox_take(struct ward_qbox *q, struct ward_qresult *r,
			       int dirfd, const char *name, const char *abs,
			       const char *what)
{
	struct measure m = {0, 0, true, false};
	char dname[NAME_MAX + 1];
	const char *last;
	struct stat st;
	uint64_t left;
	int pfd = -1, err;

	memset(r, 0, sizeof(*r));
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		r->how = WARD_QTAKE_GONE;
		return r->how;
	}
	measure_at(&m, dirfd, name, 0);
	if (qbox_open(q) < 0) {
		r->why = "ward has no state directory to keep a quarantine in";
		return keep_beside(q, r, dirfd, name, abs, m.bytes, what);
	}
	if (m.over || q->used == UINT64_MAX || q->used + m.bytes > q->quota) {
		r->why = "the quarantine is full (quarantine_quota_mb)";
		return keep_beside(q, r, dirfd, name, abs, m.bytes, what);
	}
	pfd = box_parent(q->fd, abs, &last);
	if (pfd < 0 || !*last || strlen(last) > NAME_MAX) {
		if (pfd >= 0)
			close(pfd);
		r->why = "ward cannot make its place in the quarantine";
		return keep_beside(q, r, dirfd, name, abs, m.bytes, what);
	}
	for (int i = 0; i < 1000; i++) {
		if (i == 0)
			snprintf(dname, sizeof(dname), "%s", last);
		else
			snprintf(dname, sizeof(dname), "%.*s.%d", NAME_MAX - 12,
				 last, i);
		err = rename_noreplace(dirfd, name, pfd, dname);
		if (err == -EEXIST)
			continue;
		if (!err) {
			q->used += m.bytes;
			goto out_moved;
		}
		if (err == -ENOENT) {
			close(pfd);
			r->how = WARD_QTAKE_GONE;
			return r->how;
		}
		if (err != -EXDEV)
			break;
		/* Another file system: a whole copy, then the original
		 * goes; never a partial copy and a removal. */
		if (!m.copyable) {
			r->why = "it holds a FIFO, socket or device, which "
				 "ward cannot copy to the quarantine";
			break;
		}
		left = q->quota - q->used;
		err = ward_tree_copy(dirfd, name, pfd, dname, &left);
		if (err) {
			ward_tree_remove(pfd, dname);
			r->why = err == -EFBIG ? "the quarantine is full "
						 "(quarantine_quota_mb)"
					       : "copying it to the quarantine "
						 "failed";
			break;
		}
		q->used += m.bytes;
		if (ward_tree_remove(dirfd, name) != 0) {
			/* Copied whole; what is left must not run either. */
			manifest_add(q, "moved", m.bytes, abs, "", what);
			close(pfd);
			r->why = "it was copied to the quarantine, but what is "
				 "left of it could not be removed";
			return keep_beside(q, r, dirfd, name, abs, m.bytes,
					   what);
		}
		goto out_moved;
	}
	close(pfd);
	if (!r->why)
		r->why = "it cannot be moved to the quarantine";
	return keep_beside(q, r, dirfd, name, abs, m.bytes, what);

out_moved:
	close(pfd);
	{
		char stored[PATH_MAX + 16];
		const char *s = strrchr(abs, '/');

		snprintf(stored, sizeof(stored), "%.*s/%s",
			 s ? (int)(s - abs) : 0, abs, dname);
		manifest_add(q, "moved", m.bytes, abs, stored, what);
		snprintf(r->where, sizeof(r->where), "%s/files%s", q->path,
			 stored);
	}
	r->how = WARD_QTAKE_MOVED;
	return r->how;
}

/* --- listing, restoring, pruning ------------------------------------------- */

struct ward_quarantine {
	char *dir;
	struct ward_quarantine_item *v;
	size_t n, cap;
	struct ward_strv strs; /* every string of the items */
	bool oom;
};

static const char *keep_str(ward_quarantine *q, const char *s)
{
	ward_strv_push(&q->strs, s);
	if (q->strs.oom) {
		q->oom = true;
		return "";
	}
	return q->strs.v[q->strs.n - 1];
}

/* The manifest @text of box @id into @q. */
static void parse_manifest(ward_quarantine *q, int bfd, const char *id,
			   char *text)
{
	char *line, *save = NULL;
	int64_t when = box_time(id);

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *kind, *bytes, *abs, *stored, *what;
		struct ward_quarantine_item it;
		char rel[PATH_MAX + 16];
		struct stat st;

		kind = take_field(&p);
		bytes = take_field(&p);
		abs = take_field(&p);
		stored = take_field(&p);
		what = take_field(&p);
		if (!kind || !bytes || !abs || !stored || abs[0] != '/' ||
		    (strcmp(kind, "moved") && strcmp(kind, "kept")))
			continue;
		memset(&it, 0, sizeof(it));
		it.kept = strcmp(kind, "kept") == 0;
		it.bytes = strtoull(bytes, NULL, 10);
		it.when = when;
		if (it.kept) {
			it.present = lstat(stored, &st) == 0;
		} else if (*stored) {
			snprintf(rel, sizeof(rel), "%s/files%s", id, stored);
			it.present =
			    fstatat(bfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
		}
		if (q->n == q->cap) {
			size_t cap = q->cap ? q->cap * 2 : 16;
			struct ward_quarantine_item *v =
			    realloc(q->v, cap * sizeof(*v));

			if (!v) {
				q->oom = true;
				return;
			}
			q->v = v;
			q->cap = cap;
		}
		it.box = keep_str(q, id);
		it.path = keep_str(q, abs);
		it.what = keep_str(q, what ? what : "");
		if (it.kept || !*stored) {
			it.stored = keep_str(q, stored);
		} else {
			char full[PATH_MAX * 2 + 32];

			snprintf(full, sizeof(full), "%s/%s/files%s", q->dir,
				 id, stored);
			it.stored = keep_str(q, full);
		}
		q->v[q->n++] = it;
	}
}

/* Read box @id's manifest (NUL-terminated, malloc'd) or NULL. */
static char *read_manifest(int bfd, const char *id)
{
	char rel[NAME_MAX + 16], *text = NULL;
	struct stat st;
	size_t got;
	int fd;

	snprintf(rel, sizeof(rel), "%s/manifest", id);
	fd = openat(bfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > MANIFEST_MAX ||
	    !(text = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	got = util_read_upto(fd, text, (size_t)st.st_size);
	close(fd);
	text[got] = '\0';
	return text;
}

static int cmp_box(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ward_quarantine_list(ward_quarantine **out)
{
	ward_quarantine *q = calloc(1, sizeof(*q));
	struct ward_strv boxes = {0};
	char base[PATH_MAX];
	struct dirent *de;
	int bfd, fd, e;
	DIR *d;

	if (!q)
		return ward_err(-ENOMEM, "quarantine: out of memory");
	bfd = open_base(base, sizeof(base), false);
	e = errno;
	if (ward_quarantine_base(base, sizeof(base)))
		q->dir = strdup(base);
	if (bfd < 0) {
		if (e != ENOENT && q->dir) {
			ward_quarantine_free(q);
			return ward_err(-e, "cannot open the quarantine %s: %s",
					base, strerror(e));
		}
		*out = q;
		return 0;
	}
	fd = dup(bfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	while (d && (de = readdir(d))) {
		if (box_time(de->d_name) >= 0)
			ward_strv_push(&boxes, de->d_name);
	}
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	if (boxes.n)
		qsort(boxes.v, boxes.n, sizeof(*boxes.v), cmp_box);
	for (size_t i = 0; i < boxes.n && !q->oom; i++) {
		char *text = read_manifest(bfd, boxes.v[i]);

		if (text)
			parse_manifest(q, bfd, boxes.v[i], text);
		free(text);
	}
	close(bfd);
	if (boxes.oom || q->oom) {
		ward_strv_discard(&boxes);
		ward_quarantine_free(q);
		return ward_err(-ENOMEM, "quarantine: out of memory");
	}
	ward_strv_discard(&boxes);
	*out = q;
	return 0;
}

void ward_quarantine_free(ward_quarantine *q)
{
	if (!q)
		return;
	free(q->dir);
	free(q->v);
	ward_strv_discard(&q->strs);
	free(q);
}

const char *ward_quarantine_dir(const ward_quarantine *q)
{
	return q ? q->dir : NULL;
}

size_t ward_quarantine_count(const ward_quarantine *q)
{
	return q ? q->n : 0;
}

const struct ward_quarantine_item *
ward_quarantine_item(const ward_quarantine *q, size_t i)
{
	return q && i < q->n ? &q->v[i] : NULL;
}

/*
 * Open the parent directory of the canonical @abs from "/" one component
 * at a time, never through a symlink; the last component into @last.
 * -1 (errno set; ELOOP: a link on the way) on failure.
 */
static int open_parent_nofollow(const char *abs, char *last, size_t len)
{
	char comp[NAME_MAX + 1];
	const char *p = abs, *slash;
	int cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	while (*p == '/')
		p++;
	while (cur >= 0 && (slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);
		int sub, e;

		if (n == 0) {
			p++;
			continue;
		}
		if (n > NAME_MAX) {
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		sub = util_openat_dir(cur, comp);
		e = errno;
		close(cur);
		cur = sub;
		errno = e == ENOTDIR ? ELOOP : e;
		p = slash + 1;
	}
	if (cur >= 0)
		snprintf(last, len, "%s", p);
	return cur;
}

/* Put one moved entry back. */
static int restore_one(const struct ward_quarantine_item *it)
{
	char last[NAME_MAX + 1], dir[PATH_MAX * 2 + 32];
	uint64_t left = UINT64_MAX;
	const char *name;
	struct stat st;
	int pfd, sfd, err;

	/* it->stored is <quarantine>/<box>/files<stored path>. */
	snprintf(dir, sizeof(dir), "%s", it->stored);
	name = strrchr(dir, '/');
	if (!strstr(it->stored, "/files/") || !name)
		return ward_err(WARD_EINVAL,
				"cannot restore %s: it is not in the "
				"quarantine",
				it->path);
	dir[name - dir] = '\0';
	name = it->stored + (name - dir) + 1;
	pfd = open_parent_nofollow(it->path, last, sizeof(last));
	if (pfd < 0)
		return ward_err(WARD_EINVAL, "cannot restore %s: %s", it->path,
				errno == ELOOP
				    ? "a symbolic link now lies on the way "
				      "(it would lead elsewhere)"
				    : "its directory does not exist any more");
	if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		close(pfd);
		return ward_err(WARD_EINVAL,
				"cannot restore %s: something is there now; "
				"move it away first",
				it->path);
	}
	sfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0) {
		err = -errno;
		close(pfd);
		return ward_err(err, "cannot restore %s: %s", it->path,
				strerror(-err));
	}
	err = rename_noreplace(sfd, name, pfd, last);
	if (err == -EXDEV) {
		err = ward_tree_copy(sfd, name, pfd, last, &left);
		if (err)
			ward_tree_remove(pfd, last);
		else
			err = ward_tree_remove(sfd, name);
	}
	close(sfd);
	close(pfd);
	if (err)
		return ward_err(err, "cannot restore %s: %s", it->path,
				strerror(-err));
	return 0;
}

int ward_quarantine_restore(size_t *restored, const char *box, const char *path)
{
	ward_quarantine *q = NULL;
	size_t done = 0, matched = 0, present = 0;
	int err, first = 0;

	if (restored)
		*restored = 0;
	if (!box)
		return ward_err(WARD_EINVAL, "quarantine: no box named");
	err = ward_quarantine_list(&q);
	if (err)
		return err;
	for (size_t i = 0; i < q->n; i++) {
		const struct ward_quarantine_item *it = &q->v[i];

		if (strcmp(it->box, box) != 0 ||
		    (path && strcmp(it->path, path) != 0))
			continue;
		matched++;
		if (it->kept || !it->present)
			continue;
		present++;
		err = restore_one(it);
		if (err) {
			if (!first)
				first = err;
			continue;
		}
		done++;
	}
	ward_quarantine_free(q);
	if (restored)
		*restored = done;
	if (!matched)
		return ward_err(WARD_ENOMATCH,
				"%s%s%s is not in the quarantine", box,
				path ? ": " : "", path ? path : "");
	if (!present)
		return ward_err(WARD_ENOMATCH,
				"%s%s%s: nothing left to restore (restored "
				"already, or kept in place in the workspace: "
				"see ward quarantine list)",
				box, path ? ": " : "", path ? path : "");
	if (first)
		return first;
	return 0;
}

int ward_quarantine_prune(size_t *removed, const char *box, int64_t older_than)
{
	char base[PATH_MAX];
	size_t n;
	int bfd;

	if (removed)
		*removed = 0;
	bfd = open_base(base, sizeof(base), false);
	if (bfd < 0) {
		if (box)
			return ward_err(WARD_ENOMATCH,
					"%s is not in the quarantine", box);
		return 0;
	}
	n = prune_boxes(bfd, older_than, box);
	close(bfd);
	if (removed)
		*removed = n;
	if (box && !n)
		return ward_err(WARD_ENOMATCH,
				"%s is not in the quarantine (or not older "
				"than that)",
				box);
	return 0;
}
