/*
 * ward — the in-process file fence.
 *
 * Every operation has the same shape (plan, then apply):
 *
 *   1. make the caller's path absolute (relative to the workspace root) and
 *      resolve it in user space into a canonical path without symlinks,
 *      "." or "..", noting how many trailing components do not exist yet;
 *   2. judge that path: rules first (they apply in every mode), then the
 *      mode, then the writable roots of ward_roots_writable();
 *   3. open the deepest existing directory with the kernel checking that
 *      the canonical path is what it reaches: openat2(RESOLVE_BENEATH |
 *      RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) beneath a descriptor of
 *      the writable root (or, for reads, RESOLVE_NO_SYMLINKS from "/");
 *   4. operate on that descriptor and the final name with *at() calls that
 *      do not follow a symlink there.
 *
 * A symlink swapped in after step 1 makes step 3 fail (ELOOP): the whole
 * resolution is retried a few times, so the new link is judged like any
 * other. Nothing in step 4 follows a name that step 2 did not judge.
 *
 * Steps 1 to 3 (and ward_fs_check, the rendering) are this file; the
 * operations (step 4) are fsfence_ops.c; fsfence_internal.h is what they
 * share.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fsfence_internal.h"
#include "libward/internal.h"
#include "libward/policy/facts.h"
#include "libward/policy/protect.h"
#include "util/util.h"

/* --- kernel shims ------------------------------------------------------ */

/*
 * openat2(2) (Linux 5.6). Defined here: the installed headers may predate
 * it, and <linux/openat2.h> would clash with nothing but is not needed.
 */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_renameat2
#define SYS_renameat2 316
#endif

struct fence_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

/* Symlinks followed while resolving one path (the kernel's limit). */
#define FENCE_MAX_LINKS 40
/* The marker of our temporary files: ".NAME.ward-tmp-XXXXXXXXXXXX". */
#define FENCE_TMP_TAG ".ward-tmp-"

/* 0: unknown, 1: openat2 works, -1: missing (ENOSYS, or EPERM from a
 * seccomp filter that predates it). */
atomic_int ward_fence_openat2_state;

/*
 * Testing hook, deliberately not in a public header (hidden symbol): force
 * the portable resolution path that is used where openat2 is missing.
 * @on: 1 forces the fallback, 0 returns to detection. Returns 0.
 */
int ward_fsfence_test_force_fallback(int on);
int ward_fsfence_test_force_fallback(int on)
{
	atomic_store(&ward_fence_openat2_state, on ? -1 : 0);
	return 0;
}

int ward_fence_sys_openat2(int dirfd, const char *path, int flags,
			   uint64_t resolve)
{
	struct fence_open_how how = {
	    .flags = (uint64_t)(unsigned)(flags | O_CLOEXEC),
	    .mode = 0,
	    .resolve = resolve,
	};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int ward_fence_sys_renameat2(int olddirfd, const char *oldpath, int newdirfd,
			     const char *newpath, unsigned flags)
{
	return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath,
			    flags);
}

static void close_keep_errno(int fd)
{
	int saved = errno;

	if (fd >= 0)
		close(fd);
	errno = saved;
}

/*
 * The portable walk used where openat2 is missing: open @rel (relative,
 * canonical: no ".", "..", or empty components) beneath @dirfd one
 * component at a time with O_NOFOLLOW, checking that every intermediate
 * component is a directory. The final component is opened with @flags |
 * O_NOFOLLOW. A symlink anywhere gives -ELOOP, as RESOLVE_NO_SYMLINKS
 * would; nothing is followed, so nothing can lead outside @dirfd.
 */
static int walk_nofollow(int dirfd, const char *rel, int flags)
{
	char comp[NAME_MAX + 1];
	const char *p = rel, *slash;
	struct stat st;
	int cur = -1, next, err;
	size_t n;

	for (;;) {
		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || n > NAME_MAX) {
			err = n ? -ENAMETOOLONG : -EINVAL;
			goto out_close_cur;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		while (slash && slash[1] == '/')
			slash++;
		if (!slash || !slash[1]) {
			next = openat(cur >= 0 ? cur : dirfd, comp,
				      flags | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0) {
				err = -errno;
				goto out_close_cur;
			}
			if ((flags & O_PATH) && fstat(next, &st) == 0 &&
			    S_ISLNK(st.st_mode)) {
				close(next);
				err = -ELOOP;
				goto out_close_cur;
			}
			close_keep_errno(cur);
			return next;
		}
		next = openat(cur >= 0 ? cur : dirfd, comp,
			      O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			goto out_close_cur;
		}
		if (fstat(next, &st) != 0 || !S_ISDIR(st.st_mode)) {
			err = S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
			close(next);
			goto out_close_cur;
		}
		close_keep_errno(cur);
		cur = next;
		p = slash + 1;
	}

out_close_cur:
	close_keep_errno(cur);
	return err;
}

/*
 * Open @rel beneath @dirfd without following any symlink, the kernel
 * refusing anything that would leave @dirfd. "" opens @dirfd itself.
 * Returns a descriptor or -errno (-ELOOP: a symlink is on the way now).
 */
static int open_beneath(int dirfd, const char *rel, int flags)
{
	int fd, tries;

	if (!*rel) {
		fd = openat(dirfd, ".", flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (atomic_load(&ward_fence_openat2_state) >= 0) {
		for (tries = 0; tries < FENCE_RETRIES; tries++) {
			fd = ward_fence_sys_openat2(
			    dirfd, rel, flags,
			    FENCE_RESOLVE_BENEATH | FENCE_RESOLVE_NO_SYMLINKS |
				FENCE_RESOLVE_NO_MAGICLINKS);
			if (fd >= 0) {
				atomic_store(&ward_fence_openat2_state, 1);
				return fd;
			}
			/* EAGAIN: a concurrent rename or mount; retry. */
			if (errno == EAGAIN || errno == EINTR)
				continue;
			if ((errno == ENOSYS || errno == EPERM) &&
			    atomic_load(&ward_fence_openat2_state) == 0) {
				atomic_store(&ward_fence_openat2_state, -1);
				break;
			}
			return -errno;
		}
		if (atomic_load(&ward_fence_openat2_state) >= 0)
			return -EAGAIN;
	}
	return walk_nofollow(dirfd, rel, flags);
}

/* Open the canonical absolute @path without following any symlink. */
int ward_fence_open_nofollow(const char *path, int flags)
{
	int root, fd;

	if (path[0] == '/' && path[1] == '\0') {
		fd = open("/", flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (atomic_load(&ward_fence_openat2_state) >= 0) {
		fd = ward_fence_sys_openat2(AT_FDCWD, path, flags,
					    FENCE_RESOLVE_NO_SYMLINKS |
						FENCE_RESOLVE_NO_MAGICLINKS);
		if (fd >= 0) {
			atomic_store(&ward_fence_openat2_state, 1);
			return fd;
		}
		if (errno != ENOSYS && errno != EPERM && errno != EAGAIN)
			return -errno;
		if (errno != EAGAIN &&
		    atomic_load(&ward_fence_openat2_state) == 0)
			atomic_store(&ward_fence_openat2_state, -1);
	}
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	fd = open_beneath(root, path + 1, flags);
	close(root);
	return fd;
}

/* --- paths ------------------------------------------------------------- */

/* True when canonical @path lies strictly beneath @dir. */
static bool path_beneath(const char *path, const char *dir)
{
	return util_path_within(path, dir) && strcmp(path, dir) != 0;
}

/* @path relative to @dir, which it lies within ("" when equal). */
static const char *path_rel(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return path + 1;
	return path[n] == '/' ? path + n + 1 : path + n;
}

/* The caller's path made absolute against the workspace root. */
int ward_fence_path_absolute(char **out, const ward_policy *policy,
			     const char *path)
{
	const char *ws = ward_policy_workspace(policy);
	char *abs;

	if (!path || !*path)
		return ward_err(WARD_EINVAL, "empty path");
	if (path[0] == '/')
		abs = strdup(path);
	else if (asprintf(&abs, "%s/%s", ws, path) < 0)
		abs = NULL;
	if (!abs)
		return ward_err(-ENOMEM, "out of memory");
	if (strlen(abs) >= PATH_MAX) {
		free(abs);
		return ward_err(-ENAMETOOLONG, "%s: path too long", path);
	}
	*out = abs;
	return 0;
}

/* Whether @path has a ".." component. */
bool ward_fence_has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return true;
	return false;
}

void ward_fence_canon_clear(struct canon *c)
{
	free(c->path);
	memset(c, 0, sizeof(*c));
}

/*
 * Resolve the absolute @abs like the kernel would, but in user space and
 * tolerating missing trailing components: symlinks are followed (the last
 * component only when @follow_last or when the path ends in '/'), "." and
 * ".." are resolved physically. Magic links (/proc/self/root, …) resolve
 * to what they read as. Errors: -ENOTDIR (a component that is not a
 * directory has more after it), -ELOOP, -ENAMETOOLONG, -ENOENT (".." after
 * a missing component), -EACCES, …
 */
int ward_fence_canon_resolve(struct canon *out, const char *abs,
			     bool follow_last)
{
	char *buf = NULL, *rest = NULL, *link = NULL, *nrest;
	const char *p, *next, *q;
	size_t len = 0, clen, ab = strlen(abs);
	unsigned links = 0, missing = 0;
	struct stat st;
	bool st_valid = false, last;
	ssize_t n;
	int err = 0;

	memset(&st, 0, sizeof(st));
	out->trailing_slash = ab > 1 && abs[ab - 1] == '/';
	if (out->trailing_slash)
		follow_last = true;
	buf = malloc(PATH_MAX);
	link = malloc(PATH_MAX);
	rest = strdup(abs);
	if (!buf || !link || !rest) {
		err = -ENOMEM;
		goto out_free;
	}
	buf[0] = '\0';
	p = rest;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		clen = strcspn(p, "/");
		next = p + clen;
		for (q = next; *q == '/'; q++)
			;
		last = *q == '\0';
		if (clen == 1 && p[0] == '.') {
			p = next;
			continue;
		}
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			if (missing) {
				err = -ENOENT;
				goto out_free;
			}
			while (len > 0 && buf[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			buf[len] = '\0';
			st_valid = false;
			p = next;
			continue;
		}
		if (clen > NAME_MAX || len + 1 + clen >= PATH_MAX) {
			err = -ENAMETOOLONG;
			goto out_free;
		}
		buf[len++] = '/';
		memcpy(buf + len, p, clen);
		len += clen;
		buf[len] = '\0';
		p = next;
		if (missing) {
			missing++;
			continue;
		}
		if (lstat(buf, &st) != 0) {
			if (errno != ENOENT) {
				err = -errno;
				goto out_free;
			}
			missing = 1;
			st_valid = false;
			continue;
		}
		st_valid = true;
		if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
			if (++links > FENCE_MAX_LINKS) {
				err = -ELOOP;
				goto out_free;
			}
			n = readlink(buf, link, PATH_MAX - 1);
			if (n < 0) {
				err = -errno;
				goto out_free;
			}
			if (n == PATH_MAX - 1) {
				err = -ENAMETOOLONG;
				goto out_free;
			}
			link[n] = '\0';
			len -= clen + 1;
			if (link[0] == '/')
				len = 0;
			buf[len] = '\0';
			if (asprintf(&nrest, "%s/%s", link, next) < 0) {
				err = -ENOMEM;
				goto out_free;
			}
			if (strlen(nrest) >= PATH_MAX) {
				free(nrest);
				err = -ENAMETOOLONG;
				goto out_free;
			}
			free(rest);
			rest = nrest;
			p = rest;
			st_valid = false;
			continue;
		}
		if (!S_ISDIR(st.st_mode) && !last) {
			err = -ENOTDIR;
			goto out_free;
		}
	}
	if (len == 0) {
		buf[0] = '/';
		buf[1] = '\0';
	}
	if (!missing && !st_valid && lstat(buf, &st) != 0) {
		/* The entry vanished since it was walked: report it so. */
		if (errno != ENOENT) {
			err = -errno;
			goto out_free;
		}
		missing = 1;
	}
	if (!missing && out->trailing_slash && !S_ISDIR(st.st_mode)) {
		err = -ENOTDIR;
		goto out_free;
	}
	out->path = buf;
	buf = NULL;
	out->missing = missing;
	out->st = st;

out_free:
	free(buf);
	free(link);
	free(rest);
	return err;
}

/* The last component of a canonical path ("" for "/"). */
static const char *path_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* --- policy ------------------------------------------------------------ */

const char *ward_fs_reason_name(enum ward_fs_reason reason)
{
	switch (reason) {
	case WARD_FS_DENIED_READ_ONLY:
		return "nothing is writable in this mode";
	case WARD_FS_DENIED_OUTSIDE_ROOTS:
		return "outside every writable root";
	case WARD_FS_DENIED_ROOT_ITSELF:
		return "a writable root itself";
	case WARD_FS_DENIED_RULE_READ_ONLY:
		return "protected by an r- rule";
	case WARD_FS_DENIED_RULE_NO_ACCESS:
		return "protected by a -- rule";
	}
	return "unknown";
}

const char *ward_fs_type_name(enum ward_fs_type type)
{
	switch (type) {
	case WARD_FS_TYPE_FILE:
		return "file";
	case WARD_FS_TYPE_DIR:
		return "dir";
	case WARD_FS_TYPE_SYMLINK:
		return "symlink";
	case WARD_FS_TYPE_OTHER:
		break;
	}
	return "other";
}

static bool is_mutation(enum ward_fs_op op)
{
	switch (op) {
	case WARD_FS_OP_WRITE:
	case WARD_FS_OP_EDIT:
	case WARD_FS_OP_REMOVE:
	case WARD_FS_OP_MOVE:
	case WARD_FS_OP_MKDIR:
		return true;
	default:
		return false;
	}
}

void ward_fence_init(struct fence *f, const ward_policy *policy,
		     enum ward_fs_op op, struct ward_fs_denial *denial)
{
	f->policy = policy;
	f->op = op;
	f->denial = denial;
	f->facts = NULL;
	f->facts_err = 0;
}

void ward_fence_done(struct fence *f)
{
	ward_facts_unref(f->facts);
	f->facts = NULL;
}

const struct ward_facts *ward_fence_facts(struct fence *f)
{
	/* A read needs no scan of the workspace for the read-only traps
	 * and repositories: the hidden paths are named, not found. */
	unsigned what = is_mutation(f->op)
			    ? WARD_FACTS_ALIASES
			    : WARD_FACTS_ALIASES | WARD_FACTS_READS;

	if (!f->facts && !f->facts_err)
		f->facts_err = ward_facts_new(&f->facts, f->policy, what);
	return f->facts;
}

/* Copy @src into the fixed buffer @dst of @size, truncating. */
void ward_fence_copy_trunc(char *dst, size_t size, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= size)
		n = size - 1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Fill the denial record and return WARD_EDENIED with a detail. */
static int fence_deny(struct fence *f, enum ward_fs_reason why,
		      const char *given, const char *resolved)
{
	enum ward_mode mode = ward_policy_mode(f->policy);
	const char *text = ward_fs_reason_name(why);
	char *g = NULL, *r = NULL;
	int err;

	if (f->denial) {
		f->denial->mode = mode;
		f->denial->op = f->op;
		f->denial->reason = why;
		ward_fence_copy_trunc(f->denial->path, sizeof(f->denial->path),
				      given);
		ward_fence_copy_trunc(f->denial->resolved,
				      sizeof(f->denial->resolved), resolved);
	}
	/* The built-in `--` on the processes' /proc says what it is. */
	if (why == WARD_FS_DENIED_RULE_NO_ACCESS && resolved &&
	    util_proc_private(resolved))
		text = "a process's entry in /proc, which names the harness "
		       "(always hidden)";
	/* One line, whatever the names hold (render.c escapes the
	 * report's paths the same way). */
	if (ward_escalation_escape(&g, given) != 0 ||
	    (resolved && ward_escalation_escape(&r, resolved) != 0)) {
		free(g);
		return ward_err(-ENOMEM, "out of memory");
	}
	if (r && strcmp(given, resolved) != 0)
		err = ward_err(WARD_EDENIED,
			       "%s %s (%s): denied under %s mode: %s",
			       ward_fs_op_name(f->op), g, r,
			       ward_mode_name(mode), text);
	else
		err = ward_err(WARD_EDENIED, "%s %s: denied under %s mode: %s",
			       ward_fs_op_name(f->op), g, ward_mode_name(mode),
			       text);
	free(g);
	free(r);
	return err;
}

/*
 * What the rules and the hidden protected paths (ward's state directory,
 * the processes' part of /proc) give the canonical @path, as the runners
 * apply them: a rule is also matched where its path resolves
 * (ward_policy_rule_access).
 */
enum ward_access ward_fence_rule_access(struct fence *f, const char *path)
{
	const struct ward_facts *facts;
	enum ward_access a;

	/* The fence runs in the harness: /proc/self names the harness, not
	 * a command (util_proc_private); a `--` no rule or mode widens. */
	if (util_proc_private(path))
		return WARD_ACCESS_NONE;
	facts = ward_fence_facts(f);
	a = ward_policy_rule_access(f->policy, facts, path);
	if (a != WARD_ACCESS_NONE &&
	    ward_protect_match_in(f->policy, facts, path) == WARD_ACCESS_NONE)
		a = WARD_ACCESS_NONE;
	return a;
}

/* Whether a protected path is hidden (it is, unless there is no state
 * directory at all). */
static bool protect_hides(struct fence *f)
{
	const struct ward_facts *facts = ward_fence_facts(f);
	const struct ward_protected *v = NULL;
	size_t n = 0;

	if (!facts || ward_facts_protected(&v, &n, facts) != 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (v[i].access == WARD_ACCESS_NONE)
			return true;
	}
	return false;
}

/* Whether any rule of at least @kind (WARD_ACCESS_RO covers RO and NONE)
 * exists, or a hidden protected path: when none does, there is nothing to
 * match. */
bool ward_fence_rules_restrict(struct fence *f, enum ward_access kind)
{
	const ward_rules *rules = ward_policy_rules(f->policy);
	struct ward_rule_info info;
	size_t n = rules ? ward_rules_count(rules) : 0;

	if (protect_hides(f))
		return true;
	for (size_t i = 0; i < n; i++) {
		if (ward_rules_get(&info, rules, i) != 0)
			continue;
		if (info.access == WARD_ACCESS_NONE ||
		    (kind == WARD_ACCESS_RO && info.access == WARD_ACCESS_RO))
			return true;
	}
	return false;
}

/*
 * Whether an `r-`/`--` rule might match something strictly inside the
 * directory @dir: a rule whose literal prefix lies inside it, or a glob
 * whose literal prefix contains it. When none can, a tree needs no scan.
 */
static bool rules_may_cover_inside(struct fence *f, const char *dir)
{
	const struct ward_facts *facts = ward_fence_facts(f);
	const ward_rules *rules = ward_policy_rules(f->policy);
	const struct ward_rule_alias *a;
	struct ward_rule_info info;
	size_t n = rules ? ward_rules_count(rules) : 0, na;

	if (!facts || ward_protect_inside(facts, dir))
		return true;
	/* A rule whose path resolves inside the tree (or holds it). */
	if (!facts->have_aliases)
		return true;
	a = facts->aliases;
	na = facts->naliases;
	for (size_t i = 0; i < na; i++) {
		if (util_path_within(a[i].canon, dir) ||
		    util_path_within(dir, a[i].canon))
			return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (ward_rules_get(&info, rules, i) != 0)
			continue;
		if (info.access != WARD_ACCESS_RO &&
		    info.access != WARD_ACCESS_NONE)
			continue;
		if (util_path_within(info.literal_prefix, dir))
			return true;
		if (info.is_glob && util_path_within(dir, info.literal_prefix))
			return true;
	}
	return false;
}


/*
 * Judge the resolved @real for this call's operation. Rules come first:
 * they apply in every mode, and a rule denial tells the caller that no
 * wider mode would help. On success for a mutation, *root (when not NULL)
 * is the deepest writable root @real lies strictly beneath.
 */
int ward_fence_judge(struct fence *f, const char *given, const char *real,
		     const char **root)
{
	enum ward_access access = ward_fence_rule_access(f, real);
	const struct ward_facts *facts;
	const char *best = NULL;
	bool itself = false;

	if (access == WARD_ACCESS_NONE)
		return fence_deny(f, WARD_FS_DENIED_RULE_NO_ACCESS, given,
				  real);
	if (!is_mutation(f->op))
		return 0;
	/* Protected paths (protect.h) are implicit `r-` rules. */
	if (access == WARD_ACCESS_RO ||
	    ward_protect_match_in(f->policy, ward_fence_facts(f), real) !=
		WARD_ACCESS_DEFAULT)
		return fence_deny(f, WARD_FS_DENIED_RULE_READ_ONLY, given,
				  real);
	if (ward_policy_mode(f->policy) == WARD_MODE_READ_ONLY)
		return fence_deny(f, WARD_FS_DENIED_READ_ONLY, given, real);
	facts = ward_fence_facts(f);
	if (!facts)
		return f->facts_err;
	for (char *const *r = facts->roots; *r; r++) {
		if (strcmp(real, *r) == 0)
			itself = true;
		if (path_beneath(real, *r) &&
		    (!best || strlen(*r) > strlen(best)))
			best = *r;
	}
	if (!best)
		return fence_deny(f,
				  itself ? WARD_FS_DENIED_ROOT_ITSELF
					 : WARD_FS_DENIED_OUTSIDE_ROOTS,
				  given, real);
	if (root)
		*root = best;
	return 0;
}

/*
 * An approved file operation acts on what the person was shown, nothing
 * else (ward_policy_set_objects): a mutation whose canonical @real is not
 * one of the policy's objects — a symlink swapped in after the question
 * now leads elsewhere — is refused before anything is opened. The
 * kernel-checked open that follows (no symlink on the way, the final name
 * never followed) then acts on that very path.
 */
int ward_fence_bound(struct fence *f, const char *given, const char *real)
{
	char *const *objs = ward_policy_objects(f->policy);

	if (!objs || !is_mutation(f->op))
		return 0;
	for (size_t i = 0; objs[i]; i++) {
		if (strcmp(objs[i], real) == 0)
			return 0;
	}
	return ward_err(WARD_EINVAL,
			"%s now resolves to %s, not to %s as the approval "
			"showed: nothing was done",
			given, real, objs[0] && *objs[0] ? objs[0] : "nothing");
}

/* Judge every existing entry of a directory tree (no symlink followed). */
struct scan {
	struct fence *f;
	const char *given;
	char src[PATH_MAX];
	size_t slen;
	/* For a move: where each entry would land; dlen 0 when unused. */
	char dst[PATH_MAX];
	size_t dlen;
};

static int scan_judge(struct scan *s, const char *path)
{
	/* Scans serve removals and moves: protected paths count as `r-`
	 * (hidden ones as `--`, through ward_fence_rule_access). */
	if (ward_protect_match_in(s->f->policy, ward_fence_facts(s->f), path) ==
		WARD_ACCESS_RO &&
	    ward_fence_rule_access(s->f, path) != WARD_ACCESS_NONE)
		return fence_deny(s->f, WARD_FS_DENIED_RULE_READ_ONLY, s->given,
				  path);
	switch (ward_fence_rule_access(s->f, path)) {
	case WARD_ACCESS_NONE:
		return fence_deny(s->f, WARD_FS_DENIED_RULE_NO_ACCESS, s->given,
				  path);
	case WARD_ACCESS_RO:
		return fence_deny(s->f, WARD_FS_DENIED_RULE_READ_ONLY, s->given,
				  path);
	default:
		return 0;
	}
}

static int scan_tree(struct scan *s, int dirfd, unsigned depth)
{
	size_t slen = s->slen, dlen = s->dlen, n;
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int err = 0, sub;
	bool isdir;

	if (depth > FENCE_MAX_DEPTH)
		return ward_fence_too_deep(s->given);
	dir = fdopendir(dirfd);
	if (!dir) {
		err = -errno;
		close(dirfd);
		return ward_err(err, "%s: %s", s->given, strerror(-err));
	}
	while ((errno = 0, e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n = strlen(e->d_name);
		if (slen + 1 + n >= PATH_MAX ||
		    (dlen && dlen + 1 + n >= PATH_MAX)) {
			err = ward_err(-ENAMETOOLONG, "%s: path too long",
				       s->given);
			break;
		}
		s->src[slen] = '/';
		memcpy(s->src + slen + 1, e->d_name, n + 1);
		s->slen = slen + 1 + n;
		err = scan_judge(s, s->src);
		if (!err && dlen) {
			s->dst[dlen] = '/';
			memcpy(s->dst + dlen + 1, e->d_name, n + 1);
			s->dlen = dlen + 1 + n;
			err = scan_judge(s, s->dst);
		}
		if (err)
			break;
		isdir = e->d_type == DT_DIR;
		if (e->d_type == DT_UNKNOWN)
			isdir = fstatat(dirfd, e->d_name, &st,
					AT_SYMLINK_NOFOLLOW) == 0 &&
				S_ISDIR(st.st_mode);
		if (isdir) {
			sub = openat(dirfd, e->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
			if (sub >= 0)
				err = scan_tree(s, sub, depth + 1);
			else if (errno != ENOENT && errno != ENOTDIR &&
				 errno != ELOOP)
				err = ward_err(-errno, "%s: %s", s->src,
					       strerror(errno));
			if (err)
				break;
		}
		s->slen = slen;
		s->dlen = dlen;
	}
	if (!err && errno)
		err = ward_err(-errno, "%s: %s", s->given, strerror(errno));
	s->slen = slen;
	s->dlen = dlen;
	s->src[slen] = '\0';
	if (dlen)
		s->dst[dlen] = '\0';
	closedir(dir);
	return err;
}

/*
 * Before a directory @real (name @name in @parentfd) is removed or moved
 * (to @dst, or NULL): deny when a rule protects anything inside it, or the
 * place it would land. Nothing has been touched yet when this denies.
 */
int ward_fence_judge_tree(struct fence *f, const char *given, const char *real,
			  int parentfd, const char *name, const char *dst)
{
	struct scan *s;
	int fd, err;

	if (!rules_may_cover_inside(f, real) &&
	    (!dst || !rules_may_cover_inside(f, dst)))
		return 0;
	fd = openat(parentfd, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ward_err(-errno, "%s: %s", given, strerror(errno));
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return ward_err(-ENOMEM, "out of memory");
	}
	s->f = f;
	s->given = given;
	ward_fence_copy_trunc(s->src, sizeof(s->src), real);
	s->slen = strlen(s->src);
	if (dst) {
		ward_fence_copy_trunc(s->dst, sizeof(s->dst), dst);
		s->dlen = strlen(s->dst);
	}
	err = scan_tree(s, fd, 0);
	free(s);
	return err;
}

/* --- targets of mutations ---------------------------------------------- */

void ward_fence_target_close(struct target *t)
{
	if (t->dirfd >= 0)
		close(t->dirfd);
	t->dirfd = -1;
	ward_fence_canon_clear(&t->c);
}

/*
 * Resolve, judge and open the target of a mutation. On success the caller
 * owns @t and releases it with ward_fence_target_close(). Retries when the
 * tree changes between the resolution and the kernel-checked open.
 */
int ward_fence_target_open(struct target *t, struct fence *f, const char *given,
			   unsigned flags)
{
	const char *root = NULL, *rel;
	char *abs = NULL, *slash;
	unsigned skip;
	int err, rootfd, tries;
	char save;

	memset(t, 0, sizeof(*t));
	t->dirfd = -1;
	err = ward_fence_path_absolute(&abs, f->policy, given);
	if (err)
		return err;
	for (tries = 0; tries < FENCE_RETRIES; tries++) {
		ward_fence_canon_clear(&t->c);
		err = ward_fence_canon_resolve(&t->c, abs, flags & T_FOLLOW);
		if (err) {
			err = ward_err(err, "%s: %s", given, strerror(-err));
			goto out_free;
		}
		err = ward_fence_judge(f, given, t->c.path, &root);
		if (!err)
			err = ward_fence_bound(f, given, t->c.path);
		if (err)
			goto out_free;
		if (t->c.missing > 1 && !(flags & T_MISSING_TAIL)) {
			err = ward_err(-ENOENT,
				       "%s: parent directory does not exist",
				       given);
			goto out_free;
		}
		if (t->c.missing == 1 &&
		    !(flags & (T_MISSING_LAST | T_MISSING_TAIL))) {
			err = ward_err(-ENOENT, "%s: no such file or directory",
				       given);
			goto out_free;
		}
		/* The existing directory to open: drop the missing
		 * components and the entry itself. */
		skip = t->c.missing ? t->c.missing : 1;
		slash = t->c.path + strlen(t->c.path);
		while (skip--) {
			while (slash > t->c.path && *slash != '/')
				slash--;
			if (skip)
				slash--;
		}
		t->tail = slash + 1;
		t->name = path_name(t->c.path);
		/* Components below the existing part are created by the
		 * operation (parents): each one is judged too. */
		for (char *p = (char *)t->tail; (p = strchr(p, '/')); p++) {
			save = *p;
			*p = '\0';
			err = ward_fence_judge(f, given, t->c.path, NULL);
			*p = save;
			if (err)
				goto out_free;
		}
		save = *slash;
		*slash = '\0';
		rel = path_rel(*t->c.path ? t->c.path : "/", root);
		rootfd = ward_fence_open_nofollow(root, O_PATH | O_DIRECTORY);
		if (rootfd < 0) {
			*slash = save;
			err = ward_err(rootfd, "writable root %s: %s", root,
				       strerror(-rootfd));
			goto out_free;
		}
		t->dirfd = open_beneath(rootfd, slash == t->c.path ? "" : rel,
					O_RDONLY | O_DIRECTORY);
		close(rootfd);
		*slash = save;
		if (t->dirfd >= 0) {
			free(abs);
			return 0;
		}
		err = t->dirfd;
		t->dirfd = -1;
		/* A symlink or a rename raced with us: resolve again. */
		if (err != -ELOOP && err != -EXDEV && err != -ENOENT &&
		    err != -ENOTDIR && err != -EAGAIN) {
			err = ward_err(err, "%s: %s", given, strerror(-err));
			goto out_free;
		}
	}
	err = ward_err(-EAGAIN,
		       "%s: the path kept changing while it was "
		       "being resolved",
		       given);
out_free:
	free(abs);
	ward_fence_canon_clear(&t->c);
	return err;
}

/*
 * Create the missing directories of @t->tail except the entry itself,
 * moving @t->dirfd down to the entry's parent. Each directory is opened
 * with O_NOFOLLOW right after it is made, so a symlink planted in its
 * place is never entered.
 */
int ward_fence_too_deep(const char *given)
{
	return ward_err(-ENAMETOOLONG,
			"%s: the tree goes more than %d directories deep; the "
			"fence walks no deeper (and ward fs mkdir -p makes "
			"no deeper)",
			given, FENCE_MAX_DEPTH);
}

int ward_fence_depth_check(const struct target *t, const char *given,
			   bool entry_is_dir)
{
	unsigned depth = 0;

	for (const char *p = t->c.path; *p; p++)
		depth += *p == '/' && p[1];
	if (!entry_is_dir && depth)
		depth--;
	if (depth <= FENCE_MAX_DEPTH)
		return 0;
	return ward_err(-ENAMETOOLONG,
			"%s: %u directories deep; the fence makes at most %d "
			"(as deep as ward fs rm -r removes)",
			given, depth, FENCE_MAX_DEPTH);
}

int ward_fence_target_make_parents(struct target *t, const char *given)
{
	char comp[NAME_MAX + 1];
	const char *p = t->tail, *slash;
	size_t n;
	int fd, err;

	if (strchr(p, '/')) {
		err = ward_fence_depth_check(t, given, false);
		if (err)
			return err;
	}
	while ((slash = strchr(p, '/'))) {
		n = (size_t)(slash - p);
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (mkdirat(t->dirfd, comp, 0777) != 0 && errno != EEXIST)
			return ward_err(-errno, "%s: cannot create %s: %s",
					given, comp, strerror(errno));
		fd = openat(t->dirfd, comp,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return ward_err(-errno, "%s: %s: %s", given, comp,
					strerror(errno));
		close(t->dirfd);
		t->dirfd = fd;
		p = slash + 1;
	}
	t->tail = p;
	return 0;
}

/* --- durable replacement ----------------------------------------------- */

static _Thread_local uint64_t rnd_state;

static uint64_t rnd_next(void)
{
	struct timespec ts;
	uint64_t x = rnd_state;

	if (!x) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		    ((uint64_t)getpid() << 16) ^ (uint64_t)(uintptr_t)&ts;
		x |= 1;
	}
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rnd_state = x;
	return x;
}

/* Create a fresh temporary file next to @name in @dirfd (O_EXCL); its name
 * goes to @tmp (NAME_MAX + 1 bytes). */
static int tmp_create(char *tmp, int dirfd, const char *name, mode_t mode)
{
	int fd, tries, keep = (int)strlen(name);

	/* Leave room for "." + tag + 12 hex digits. */
	if (keep > NAME_MAX - 1 - (int)strlen(FENCE_TMP_TAG) - 12)
		keep = NAME_MAX - 1 - (int)strlen(FENCE_TMP_TAG) - 12;
	for (tries = 0; tries < 100; tries++) {
		snprintf(tmp, NAME_MAX + 1, ".%.*s" FENCE_TMP_TAG "%012llx",
			 keep, name,
			 (unsigned long long)(rnd_next() & 0xffffffffffffULL));
		fd = openat(
		    dirfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != EEXIST)
			return fd < 0 ? -errno : fd;
	}
	return -EEXIST;
}

/* Copy everything from @in to @out. */
static int copy_fd(int out, int in)
{
	char buf[65536];
	ssize_t n;
	int err;

	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		err = util_write_all(out, buf, (size_t)n);
		if (err)
			return err;
	}
}

/*
 * Replace @name in @dirfd with @src, durably: temporary file in the same
 * directory (O_EXCL), content, owner and permission bits of @old (the
 * current file, or NULL for a new one), fsync, rename over @name, fsync
 * of the directory. When @expect is not NULL, the rename happens only if
 * @name still is that very file, unchanged (else -EAGAIN). On any failure
 * the temporary file is removed and @name is untouched.
 */
int ward_fence_replace_file(int dirfd, const char *name,
			    const struct source *src, const struct stat *old,
			    const struct stat *expect, unsigned flags,
			    const char *given)
{
	char tmp[NAME_MAX + 1];
	struct stat now;
	const char *what;
	int fd, err;

	fd = tmp_create(tmp, dirfd, name, old ? (old->st_mode & 0777) : 0666);
	if (fd < 0)
		return ward_err(fd, "%s: cannot create a temporary file: %s",
				given, strerror(-fd));
	what = "write";
	err = src->fd >= 0 ? copy_fd(fd, src->fd)
			   : util_write_all(fd, src->data, src->len);
	if (!err && old) {
		what = "keep the permissions of";
		if ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
		    fchown(fd, old->st_uid, old->st_gid) != 0 && errno != EPERM)
			err = -errno;
		if (!err && fchmod(fd, old->st_mode & 0777) != 0)
			err = -errno;
	}
	if (!err) {
		what = "sync";
		if (fsync(fd) != 0)
			err = -errno;
	}
	if (close(fd) != 0 && !err && errno != EINTR) {
		what = "write";
		err = -errno;
	}
	if (err)
		goto out_unlink;
	if (expect) {
		what = "edit";
		if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
		    now.st_ino != expect->st_ino ||
		    now.st_dev != expect->st_dev ||
		    now.st_size != expect->st_size ||
		    now.st_mtim.tv_sec != expect->st_mtim.tv_sec ||
		    now.st_mtim.tv_nsec != expect->st_mtim.tv_nsec) {
			err = ward_err(-EAGAIN,
				       "%s: the file changed while it was "
				       "being edited; nothing was written",
				       given);
			unlinkat(dirfd, tmp, 0);
			return err;
		}
	}
	what = "replace";
	if (flags & R_EXCLUSIVE)
		err = ward_fence_sys_renameat2(dirfd, tmp, dirfd, name,
					       RENAME_NOREPLACE);
	else
		err = renameat(dirfd, tmp, dirfd, name);
	if (err != 0) {
		err = -errno;
		goto out_unlink;
	}
	/* The rename is what makes the new content reachable: persist it. A
	 * file system that cannot sync directories says EINVAL. */
	if (fsync(dirfd) != 0 && errno != EINVAL && errno != EROFS)
		return ward_err(-errno,
				"%s: written, but syncing its directory "
				"failed: %s",
				given, strerror(errno));
	return 0;

out_unlink:
	unlinkat(dirfd, tmp, 0);
	if (err == -EEXIST && (flags & R_EXCLUSIVE))
		return ward_err(err, "%s: already exists", given);
	return ward_err(err, "%s: cannot %s: %s", given, what, strerror(-err));
}

/* --- text -------------------------------------------------------------- */

/*
 * Whether @len bytes of @s are UTF-8 without NUL bytes: no overlong forms,
 * no surrogates, nothing above U+10FFFF.
 */
/*
 * The length of the prefix of @p[0..@n) that is ASCII without NUL, in whole
 * blocks (the rest is left to the byte-wise check). Most text is ASCII and
 * this is most of the cost of a text read: SSE2 (x86-64's baseline) checks
 * 64 bytes per step, the portable version 8.
 */
#ifdef __SSE2__
static size_t ascii_prefix(const unsigned char *p, size_t n)
{
	const __m128i zero = _mm_setzero_si128();
	__m128i a, b, c, d, any, min;
	size_t i = 0;

	for (; i + 64 <= n; i += 64) {
		a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		b = _mm_loadu_si128(
		    (const __m128i *)(const void *)(p + i + 16));
		c = _mm_loadu_si128(
		    (const __m128i *)(const void *)(p + i + 32));
		d = _mm_loadu_si128(
		    (const __m128i *)(const void *)(p + i + 48));
		any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
		min = _mm_min_epu8(_mm_min_epu8(a, b), _mm_min_epu8(c, d));
		if (_mm_movemask_epi8(any) |
		    _mm_movemask_epi8(_mm_cmpeq_epi8(min, zero)))
			break;
	}
	return i;
}
#else
static size_t ascii_prefix(const unsigned char *p, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t highs = 0x8080808080808080ULL;
	size_t i = 0;
	uint64_t w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		if ((w & highs) || ((w - ones) & ~w & highs))
			break;
	}
	return i;
}
#endif

bool ward_fence_is_text(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + len;
	unsigned c, need;

	while (p < end) {
		p += ascii_prefix(p, (size_t)(end - p));
		if (p == end)
			break;
		c = *p++;
		if (c == 0)
			return false;
		if (c < 0x80)
			continue;
		if (c < 0xc2 || c > 0xf4)
			return false;
		need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
		if (end - p < (ptrdiff_t)need)
			return false;
		/* The second byte's range excludes overlongs, surrogates
		 * and code points above U+10FFFF. */
		if ((c == 0xe0 && p[0] < 0xa0) || (c == 0xed && p[0] > 0x9f) ||
		    (c == 0xf0 && p[0] < 0x90) || (c == 0xf4 && p[0] > 0x8f))
			return false;
		for (unsigned i = 0; i < need; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		p += need;
	}
	return true;
}

int ward_fence_buf_append(struct buf *b, const void *data, size_t len)
{
	size_t cap;
	char *p;

	if (b->len + len + 1 > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

ssize_t ward_fence_read_retry(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Read all of @fd (a regular file of size @size at open) into @b, giving
 * -EFBIG past @max bytes. */
int ward_fence_read_whole(struct buf *b, int fd, uint64_t size, uint64_t max)
{
	size_t want;
	ssize_t n;
	char *p;

	if (size > max)
		return -EFBIG;
	/* One read of the whole file, then one that sees end-of-file; files
	 * whose size says nothing (/proc) grow the buffer as they go. */
	want = (size_t)size + 1;
	if (want < 4096)
		want = 4096;
	for (;;) {
		if (b->cap < b->len + want + 1) {
			p = realloc(b->data, b->len + want + 1);
			if (!p)
				return -ENOMEM;
			b->data = p;
			b->cap = b->len + want + 1;
		}
		n = ward_fence_read_retry(fd, b->data + b->len, want);
		if (n < 0)
			return -errno;
		b->data[b->len + (size_t)n] = '\0';
		if (n == 0)
			return 0;
		b->len += (size_t)n;
		if (b->len > max)
			return -EFBIG;
		want = 65536;
	}
}

/* --- check ------------------------------------------------------------- */

int ward_fs_check(struct ward_fs_denial *denial, const ward_policy *policy,
		  enum ward_fs_op op, const char *path)
{
	struct canon c = {0};
	struct fence f;
	char *abs = NULL;
	bool follow;
	int err;

	if (!policy || (unsigned)op > WARD_FS_OP_STAT)
		return ward_err(WARD_EINVAL, "check: bad argument");
	err = ward_fence_path_absolute(&abs, policy, path);
	if (err)
		return err;
	/* The same resolution as the operation itself: remove, move and
	 * stat act on a final symlink, the others on what it points to. */
	follow = op != WARD_FS_OP_REMOVE && op != WARD_FS_OP_MOVE &&
		 op != WARD_FS_OP_STAT;
	err = ward_fence_canon_resolve(&c, abs, follow);
	if (err) {
		err = ward_err(err, "%s: %s", path, strerror(-err));
		goto out_free;
	}
	ward_fence_init(&f, policy, op, denial);
	err = ward_fence_judge(&f, path, c.path, NULL);
	if (!err)
		err = ward_fence_bound(&f, path, c.path);
	ward_fence_done(&f);
out_free:
	ward_fence_canon_clear(&c);
	free(abs);
	return err;
}

int ward_fs_resolve(char **out, const ward_policy *policy, enum ward_fs_op op,
		    const char *path)
{
	struct canon c = {0};
	char *abs = NULL;
	int err;

	if (!out || !policy || !path || (unsigned)op > WARD_FS_OP_STAT)
		return ward_err(WARD_EINVAL, "resolve: bad argument");
	err = ward_fence_path_absolute(&abs, policy, path);
	if (err)
		return err;
	/* As ward_fs_check: the operation's own resolution. */
	err = ward_fence_canon_resolve(&c, abs,
				       op != WARD_FS_OP_REMOVE &&
					   op != WARD_FS_OP_MOVE &&
					   op != WARD_FS_OP_STAT);
	free(abs);
	if (err)
		return ward_err(err, "%s: %s", path, strerror(-err));
	*out = c.path;
	c.path = NULL;
	ward_fence_canon_clear(&c);
	return 0;
}

/* --- rendering --------------------------------------------------------- */

int ward_fs_render_denial(char **out, const struct ward_fs_denial *denial,
			  bool escalation_offered)
{
	bool by_rule;

	if (!out || !denial)
		return ward_err(WARD_EINVAL, "render: missing denial");
	by_rule = denial->reason == WARD_FS_DENIED_RULE_READ_ONLY ||
		  denial->reason == WARD_FS_DENIED_RULE_NO_ACCESS;
	/* The text itself lives in render.c, with every model-facing text. */
	return ward_render_denial(out, denial->mode, WARD_SUBJECT_OPERATION,
				  escalation_offered && !by_rule);
}

/*
 * The body every ward_fs_*_options_init() shares: check @version (one for
 * all the fs options), then copy the @size bytes of @init over @opts.
 */
static int fs_options_init(void *opts, const void *init, size_t size,
			   unsigned version)
{
	if (!opts)
		return ward_err(WARD_EINVAL, "fs options: NULL");
	if (version != WARD_FS_OPTIONS_VERSION)
		return ward_bad_version("fs options", version,
					WARD_FS_OPTIONS_VERSION);
	memcpy(opts, init, size);
	return 0;
}

int ward_fs_read_options_init(struct ward_fs_read_options *opts,
			      unsigned version)
{
	const struct ward_fs_read_options init = WARD_FS_READ_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_write_options_init(struct ward_fs_write_options *opts,
			       unsigned version)
{
	const struct ward_fs_write_options init = WARD_FS_WRITE_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_edit_options_init(struct ward_fs_edit_options *opts,
			      unsigned version)
{
	const struct ward_fs_edit_options init = WARD_FS_EDIT_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_remove_options_init(struct ward_fs_remove_options *opts,
				unsigned version)
{
	const struct ward_fs_remove_options init = WARD_FS_REMOVE_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_move_options_init(struct ward_fs_move_options *opts,
			      unsigned version)
{
	const struct ward_fs_move_options init = WARD_FS_MOVE_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_mkdir_options_init(struct ward_fs_mkdir_options *opts,
			       unsigned version)
{
	const struct ward_fs_mkdir_options init = WARD_FS_MKDIR_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_list_options_init(struct ward_fs_list_options *opts,
			      unsigned version)
{
	const struct ward_fs_list_options init = WARD_FS_LIST_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}

int ward_fs_stat_options_init(struct ward_fs_stat_options *opts,
			      unsigned version)
{
	const struct ward_fs_stat_options init = WARD_FS_STAT_OPTIONS_INIT;

	return fs_options_init(opts, &init, sizeof(init), version);
}
