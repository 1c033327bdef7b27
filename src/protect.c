/*
 * ward — protected paths: what stays read-only inside the writable roots
 * whatever the rules say (see protect.h).
 *
 * The list is derived on every call from the policy and the environment
 * ($HOME, $XDG_CONFIG_HOME, $XDG_STATE_HOME) and, for git, from the
 * workspace's `.git`. Nothing is cached: a policy is immutable, but the
 * workspace is not, and a stale gitdir would protect the wrong place.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "protect.h"

/* A .git file or commondir larger than this is not git's. */
#define GIT_FILE_MAX 4096

bool ward_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

char *ward_path_canon(const char *path)
{
	char buf[PATH_MAX], *real, *out;
	size_t n = strlen(path), cut = n;
	const char *rest;

	if (path[0] != '/' || n >= sizeof(buf))
		return strdup(path);
	memcpy(buf, path, n + 1);
	/* Shorten from the end until a prefix resolves ("/" always does). */
	for (;;) {
		char *slash;

		real = realpath(cut ? buf : "/", NULL);
		if (real)
			break;
		if (errno == ENOMEM)
			return NULL;
		if (cut == 0)
			return strdup(path);
		slash = memrchr(buf, '/', cut);
		cut = slash ? (size_t)(slash - buf) : 0;
		buf[cut] = '\0';
	}
	rest = path + cut;
	if (!*rest)
		return real;
	if (strcmp(real, "/") == 0) {
		out = strdup(rest);
	} else if (asprintf(&out, "%s%s", real, rest) < 0) {
		out = NULL;
	}
	free(real);
	return out;
}

/* The home directory: $HOME when absolute, else the password database. */
static const char *home_dir(char *buf, size_t len)
{
	const char *home = getenv("HOME");
	struct passwd pw, *res = NULL;

	if (home && home[0] == '/')
		return home;
	if (getpwuid_r(getuid(), &pw, buf, len, &res) != 0 || !res ||
	    !pw.pw_dir || pw.pw_dir[0] != '/')
		return NULL;
	return pw.pw_dir;
}

/* $VAR/ward when $VAR is absolute, else $HOME/fallback/ward (or NULL). */
static char *xdg_ward_dir(const char *var, const char *fallback)
{
	const char *base = getenv(var);
	char pwbuf[1024], *lex = NULL, *out;
	const char *home;

	if (base && base[0] == '/') {
		if (asprintf(&lex, "%s/ward", base) < 0)
			return NULL;
	} else {
		home = home_dir(pwbuf, sizeof(pwbuf));
		if (!home)
			return NULL;
		if (asprintf(&lex, "%s/%s/ward", home, fallback) < 0)
			return NULL;
	}
	out = ward_path_canon(lex);
	free(lex);
	return out;
}

struct plist {
	struct ward_protected *v;
	size_t n;
	size_t cap;
	bool oom;
};

/*
 * Append @path (consumed; NULL means out of memory) unless present (then
 * only its flags are merged).
 */
static void plist_add_flags(struct plist *pl, char *path,
			    enum ward_protect_kind kind, const char *what,
			    unsigned flags)
{
	if (!path) {
		pl->oom = true;
		return;
	}
	for (size_t i = 0; i < pl->n; i++) {
		if (strcmp(pl->v[i].path, path) == 0) {
			pl->v[i].flags |= flags;
			free(path);
			return;
		}
	}
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 8;
		struct ward_protected *v = realloc(pl->v, cap * sizeof(*v));

		if (!v) {
			free(path);
			pl->oom = true;
			return;
		}
		pl->v = v;
		pl->cap = cap;
	}
	pl->v[pl->n++] = (struct ward_protected){path, kind, what, flags};
}

static void plist_add(struct plist *pl, char *path, enum ward_protect_kind kind,
		      const char *what)
{
	plist_add_flags(pl, path, kind, what, 0);
}

/*
 * Read the first line of the small regular file @path into @buf (without
 * its newline). Returns false when it is missing, not a regular file, too
 * large or unreadable.
 */
static bool read_line(char *buf, size_t len, const char *path)
{
	struct stat st;
	ssize_t n;
	char *nl;
	int fd;

	do {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size >= (off_t)len) {
		close(fd);
		return false;
	}
	do {
		n = read(fd, buf, len - 1);
	} while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	nl = strpbrk(buf, "\r\n");
	if (nl)
		*nl = '\0';
	return true;
}

/* @rel resolved against the directory @base, made canonical. */
static char *resolve_against(const char *base, const char *rel)
{
	char *lex, *out;

	if (rel[0] == '/')
		return ward_path_canon(rel);
	if (asprintf(&lex, "%s/%s", base, rel) < 0)
		return NULL;
	out = ward_path_canon(lex);
	free(lex);
	return out;
}

/* One scan of the workspace's repository. */
struct scan {
	struct plist *pl;
	struct ward_strv *notes; /* NULL: not wanted */
	bool link_notes;	 /* also the notes about symlinks */
	unsigned gitdirs;	 /* git directories protected so far */
	bool capped;		 /* GIT_DIRS_MAX reached */
};

/* Bounds of the scan: git directories protected (the repository's, its
 * submodules', nested ones), worktrees per git directory, and how deep a
 * submodule's name (it may hold '/') or a nesting goes. */
#define GIT_DIRS_MAX	  64
#define GIT_WORKTREES_MAX 64
#define GIT_NAME_DEPTH	  6
#define GIT_NEST_DEPTH	  4

static void note(struct scan *s, bool link, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(struct scan *s, bool link, const char *fmt, ...)
{
	va_list ap;
	char *t = NULL;
	int n;

	if (!s->notes || (link && !s->link_notes))
		return;
	va_start(ap, fmt);
	n = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (n < 0) {
		s->notes->oom = true;
		return;
	}
	ward_strv_push(s->notes, t);
	free(t);
}

/*
 * Protect @dir/@name (@dir canonical). When it is a symbolic link, both
 * the link itself (WARD_PROTECT_LINK: replacing the link redirects git as
 * well as rewriting the target would) and its canonical target.
 */
static void add_in(struct scan *s, const char *dir, const char *name,
		   const char *what)
{
	char *p = NULL, *real;
	struct stat st;

	if (asprintf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", name) < 0) {
		s->pl->oom = true;
		return;
	}
	if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
		real = ward_path_canon(p);
		note(s, true,
		     "%s is a symbolic link to %s: ward protects %s, but a "
		     "mount or a Landlock grant follows a link, so bwrap and "
		     "Landlock cannot keep the link itself from being pointed "
		     "elsewhere during a run (the fs fence and Seatbelt can); "
		     "ward run checks it after every run",
		     p, real ? real : "?", real ? real : "the target");
		plist_add_flags(s->pl, strdup(p), WARD_PROTECT_GIT, what,
				WARD_PROTECT_LINK);
		plist_add(s->pl, real, WARD_PROTECT_GIT, what);
		free(p);
		return;
	}
	plist_add(s->pl, p, WARD_PROTECT_GIT, what);
}

static void add_gitdir(struct scan *s, const char *gd, unsigned nest);

/* Whether @path is a directory (not through a symlink). */
static bool is_dir_nofollow(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The linked worktrees of the git directory @gd: worktrees/<name>/ holds
 * the files that point a worktree at its common directory and back.
 */
static void add_worktrees(struct scan *s, const char *gd)
{
	char *wdir = NULL, *w = NULL;
	struct dirent *e;
	unsigned count = 0;
	DIR *d;

	if (asprintf(&wdir, "%s/worktrees", gd) < 0) {
		s->pl->oom = true;
		return;
	}
	/* Not through a symlink: the paths below must stay canonical. */
	d = is_dir_nofollow(wdir) ? opendir(wdir) : NULL;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (asprintf(&w, "%s/%s", wdir, e->d_name) < 0) {
			s->pl->oom = true;
			break;
		}
		if (is_dir_nofollow(w)) {
			if (++count > GIT_WORKTREES_MAX) {
				note(s, false,
				     "%s holds more than %d linked worktrees: "
				     "ward protects the files of the first %d "
				     "only",
				     wdir, GIT_WORKTREES_MAX,
				     GIT_WORKTREES_MAX);
				free(w);
				break;
			}
			add_in(s, w, "commondir", "git worktree's commondir");
			add_in(s, w, "gitdir", "git worktree's gitdir link");
			add_in(s, w, "config.worktree", "git worktree config");
		}
		free(w);
		w = NULL;
	}
	if (d)
		closedir(d);
	free(wdir);
}

/*
 * The submodules' git directories below @dir (@gd/modules at first): a
 * directory with a HEAD is one (git runs its hooks and fsmonitor when it
 * recurses into the submodule); any other directory may be part of a
 * submodule name that holds '/'. Symlinks are not followed.
 */
static void add_modules(struct scan *s, const char *dir, unsigned depth,
			unsigned nest)
{
	struct dirent *e;
	char *sub = NULL, *head = NULL;
	struct stat st;
	DIR *d;

	if (depth > GIT_NAME_DEPTH)
		return;
	d = is_dir_nofollow(dir) ? opendir(dir) : NULL;
	while (d && !s->capped && !s->pl->oom && (e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (asprintf(&sub, "%s/%s", dir, e->d_name) < 0) {
			s->pl->oom = true;
			break;
		}
		if (is_dir_nofollow(sub)) {
			if (asprintf(&head, "%s/HEAD", sub) < 0) {
				s->pl->oom = true;
			} else if (lstat(head, &st) == 0) {
				add_gitdir(s, sub, nest + 1);
			} else {
				add_modules(s, sub, depth + 1, nest);
			}
			free(head);
			head = NULL;
		}
		free(sub);
		sub = NULL;
	}
	if (d)
		closedir(d);
}

/*
 * The git directory @gd (canonical): its hooks and config, the files that
 * would redirect git if they appeared (commondir, config.worktree), its
 * linked worktrees' files and its submodules' git directories. A
 * `commondir` that already exists here is not trusted: git follows it, so
 * the user hears about it.
 */
static void add_gitdir(struct scan *s, const char *gd, unsigned nest)
{
	char line[GIT_FILE_MAX], *p = NULL, *target;

	if (nest > GIT_NEST_DEPTH)
		return;
	if (s->gitdirs >= GIT_DIRS_MAX) {
		if (!s->capped)
			note(s, false,
			     "the repository has more than %d git directories "
			     "(submodules): ward protects the hooks and config "
			     "of the first %d only",
			     GIT_DIRS_MAX, GIT_DIRS_MAX);
		s->capped = true;
		return;
	}
	s->gitdirs++;
	add_in(s, gd, "hooks", "git hooks");
	add_in(s, gd, "config", "git config");
	add_in(s, gd, "commondir",
	       "git commondir (git takes config and hooks from where it "
	       "points)");
	add_in(s, gd, "config.worktree", "git worktree config");
	if (asprintf(&p, "%s/commondir", gd) < 0) {
		s->pl->oom = true;
		return;
	}
	if (read_line(line, sizeof(line), p) && line[0]) {
		target = resolve_against(gd, line);
		note(s, false,
		     "%s exists, but %s is not a linked worktree's git "
		     "directory: git takes its config and hooks from %s, which "
		     "ward does not protect (it protects %s's own); remove the "
		     "file unless you created it",
		     p, gd, target ? target : line, gd);
		free(target);
	}
	free(p);
	add_worktrees(s, gd);
	p = NULL;
	if (asprintf(&p, "%s/modules", gd) < 0) {
		s->pl->oom = true;
		return;
	}
	add_modules(s, p, 1, nest);
	free(p);
}

/*
 * Whether the git directory @wt (canonical) is a real linked worktree's:
 * it lies at <common>/worktrees/<name>, and its commondir (resolved:
 * @common) names exactly that <common>. git itself writes "../.." there.
 */
static bool is_linked_worktree(const char *wt, const char *common)
{
	const char *slash = strrchr(wt, '/');
	char *parent, *up;
	bool ok;

	if (!slash || slash == wt)
		return false;
	parent = strndup(wt, (size_t)(slash - wt));
	if (!parent)
		return false;
	up = strrchr(parent, '/');
	ok = up && strcmp(up + 1, "worktrees") == 0 &&
	     strlen(common) == (size_t)(up - parent) &&
	     strncmp(parent, common, (size_t)(up - parent)) == 0 &&
	     is_dir_nofollow(wt);
	free(parent);
	return ok;
}

/*
 * A `.git` file @file (the workspace's, or where its symlink leads; a
 * relative gitdir is resolved against @base, the workspace, as git does):
 * the file itself, then the git directory it names. Only there is a
 * commondir followed, and only when it is a real linked worktree's.
 */
static void add_gitfile(struct scan *s, const char *file, const char *base)
{
	char line[GIT_FILE_MAX], *p, *gitdir = NULL, *common = NULL;
	char *cd = NULL;

	/* Whoever rewrites it chooses the hooks git runs. */
	plist_add(s->pl, strdup(file), WARD_PROTECT_GIT,
		  "the .git file (it names the git directory)");
	if (!read_line(line, sizeof(line), file) ||
	    strncmp(line, "gitdir:", 7) != 0)
		return;
	p = line + 7;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return;
	gitdir = resolve_against(base, p);
	if (!gitdir || asprintf(&cd, "%s/commondir", gitdir) < 0) {
		s->pl->oom = true;
		goto out_free;
	}
	if (read_line(line, sizeof(line), cd) && line[0]) {
		common = resolve_against(gitdir, line);
		if (!common) {
			s->pl->oom = true;
			goto out_free;
		}
		if (is_linked_worktree(gitdir, common)) {
			add_in(s, gitdir, "commondir",
			       "git worktree's commondir");
			add_in(s, gitdir, "gitdir",
			       "git worktree's gitdir link");
			add_in(s, gitdir, "config.worktree",
			       "git worktree config");
			add_gitdir(s, common, 0);
			goto out_free;
		}
	}
	add_gitdir(s, gitdir, 0);
out_free:
	free(cd);
	free(common);
	free(gitdir);
}

/*
 * The git persistence traps of the workspace @ws (canonical): a `.git`
 * directory is a git directory; a `.git` file leads to one; a `.git`
 * symlink is protected itself and resolved to either.
 */
static void add_git(struct scan *s, const char *ws)
{
	char dotgit[PATH_MAX], *real;
	struct stat st;

	/* A workspace of "/" must not give "//.git". */
	if (strcmp(ws, "/") == 0)
		ws = "";
	if (snprintf(dotgit, sizeof(dotgit), "%s/.git", ws) >=
	    (int)sizeof(dotgit))
		return;
	if (lstat(dotgit, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		add_gitdir(s, dotgit, 0);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		add_gitfile(s, dotgit, *ws ? ws : "/");
		return;
	}
	if (!S_ISLNK(st.st_mode))
		return;
	plist_add_flags(s->pl, strdup(dotgit), WARD_PROTECT_GIT,
			"the .git symlink (it names the git directory)",
			WARD_PROTECT_LINK);
	real = realpath(dotgit, NULL);
	note(s, true,
	     "the workspace's .git is a symbolic link to %s: ward protects "
	     "the hooks and config there, but a mount or a Landlock grant "
	     "follows a link, so bwrap and Landlock cannot keep the link "
	     "itself from being pointed at another git directory during a "
	     "run (the fs fence and Seatbelt can); ward run checks it after "
	     "every run and puts it back",
	     real ? real : "a missing path");
	if (!real) {
		if (errno == ENOMEM)
			s->pl->oom = true;
		return;
	}
	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode))
		add_gitdir(s, real, 0);
	else if (S_ISREG(st.st_mode))
		add_gitfile(s, real, *ws ? ws : "/");
	free(real);
}

/* Every protected path of @policy into @pl; notes into @notes if wanted. */
static void scan_policy(struct plist *pl, struct ward_strv *notes,
			bool link_notes, const ward_policy *policy)
{
	const char *ws = ward_policy_workspace(policy);
	struct scan s = {pl, notes, link_notes, 0, false};
	char *p;

	p = xdg_ward_dir("XDG_CONFIG_HOME", ".config");
	if (p)
		plist_add(pl, p, WARD_PROTECT_HOME,
			  "ward's configuration directory");
	p = xdg_ward_dir("XDG_STATE_HOME", ".local/state");
	if (p)
		plist_add(pl, p, WARD_PROTECT_HOME, "ward's session store");
	p = NULL;
	if (asprintf(&p, "%s/.ward", strcmp(ws, "/") ? ws : "") < 0)
		p = NULL;
	plist_add(pl, p, WARD_PROTECT_PROJECT, "the project's ward directory");
	if (ward_policy_mode(policy) == WARD_MODE_WORKSPACE_WRITE &&
	    ward_policy_protect_git(policy))
		add_git(&s, ws);
}

int ward_protect_list(struct ward_protected **out, size_t *out_len,
		      const ward_policy *policy)
{
	struct plist pl = {0};

	scan_policy(&pl, NULL, false, policy);
	if (pl.oom) {
		ward_protect_free(pl.v, pl.n);
		return ward_err(-ENOMEM, "protected paths: out of memory");
	}
	*out = pl.v;
	*out_len = pl.n;
	return 0;
}

int ward_protect_notes(char ***out, const ward_policy *policy, bool links)
{
	struct ward_strv notes = {0};
	struct plist pl = {0};

	scan_policy(&pl, &notes, links, policy);
	ward_protect_free(pl.v, pl.n);
	if (pl.oom) {
		ward_strv_discard(&notes);
		return ward_err(-ENOMEM, "protected paths: out of memory");
	}
	if (ward_strv_finish(out, &notes) != 0)
		return ward_err(-ENOMEM, "protected paths: out of memory");
	return 0;
}

void ward_protect_free(struct ward_protected *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/*
 * On ENOMEM the answer is "protected": a failure to compute the list must
 * not open a write.
 */
enum ward_access ward_protect_match(const ward_policy *policy, const char *path)
{
	const struct ward_protected *v = NULL;
	size_t n = 0;

	if (ward_policy_protected(&v, &n, policy) != 0)
		return WARD_ACCESS_RO;
	for (size_t i = 0; i < n; i++) {
		if (ward_path_within(path, v[i].path))
			return WARD_ACCESS_RO;
	}
	return WARD_ACCESS_DEFAULT;
}

bool ward_protect_inside(const ward_policy *policy, const char *dir)
{
	const struct ward_protected *v = NULL;
	size_t n = 0;

	if (ward_policy_protected(&v, &n, policy) != 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (ward_path_within(v[i].path, dir) &&
		    strcmp(v[i].path, dir) != 0)
			return true;
	}
	return false;
}

/* --- the guard ----------------------------------------------------------- */

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

/* Files larger than this are compared by identity, never restored. */
#define GUARD_FILE_MAX (1024 * 1024)
/* Entries of a protected directory (hooks) that are remembered. */
#define GUARD_DIR_MAX 256
/* Quarantine names tried: NAME.ward-quarantine-1 … -99. */
#define GUARD_QUARANTINE_TRIES 99

/* One entry of a protected directory, as the snapshot saw it. */
struct gdirent {
	char *name;
	struct stat st;
};

/* One guarded path. */
struct gentry {
	char *dir;  /* canonical parent */
	char *name; /* the last component */
	const char *what;
	struct stat pst; /* the parent's identity */
	bool exists;
	struct stat st;
	char *data; /* a regular file's contents (NULL: too large) */
	size_t len;
	char *link; /* a symlink's target */
	struct gdirent *ents;
	size_t nents;
	bool ents_ok; /* the listing is complete */
};

struct ward_protect_guard {
	struct gentry *v;
	size_t n;
};

static void gentry_clear(struct gentry *e)
{
	free(e->dir);
	free(e->name);
	free(e->data);
	free(e->link);
	for (size_t i = 0; i < e->nents; i++)
		free(e->ents[i].name);
	free(e->ents);
}

void ward_protect_guard_free(struct ward_protect_guard *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		gentry_clear(&g->v[i]);
	free(g->v);
	free(g);
}

static int open_dir(const char *path)
{
	int fd;

	do {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd;
}

static int openat_dir(int dirfd, const char *name)
{
	int fd;

	do {
		fd = openat(dirfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	return fd;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Read the regular file @name in @dirfd (not through a symlink) whole, up
 * to @max bytes: 1 and a malloc'd *out (NUL-terminated, length *len), 0
 * when it is larger, -1 on an error.
 */
static int read_small(char **out, size_t *len, int dirfd, const char *name,
		      size_t max)
{
	size_t cap = 4096, got = 0;
	char *buf = NULL, *nb;
	ssize_t r;
	int fd;

	do {
		fd = openat(dirfd, name,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	for (;;) {
		if (got + 1 >= cap || !buf) {
			if (buf)
				cap *= 2;
			nb = realloc(buf, cap);
			if (!nb)
				goto out_fail;
			buf = nb;
		}
		r = read(fd, buf + got, cap - got - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out_fail;
		if (r == 0)
			break;
		got += (size_t)r;
		if (got > max) {
			free(buf);
			close(fd);
			return 0;
		}
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 1;
out_fail:
	free(buf);
	close(fd);
	return -1;
}

static int dirent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gdirent *)a)->name,
		      ((const struct gdirent *)b)->name);
}

/* Remember the entries of the directory e->name in @pfd (bounded). */
static int snap_listing(struct gentry *e, int pfd)
{
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int fd;

	fd = openat_dir(pfd, e->name);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	e->ents_ok = true;
	while ((de = readdir(d))) {
		struct gdirent *v;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (e->nents == GUARD_DIR_MAX) {
			e->ents_ok = false;
			break;
		}
		if (e->nents == cap) {
			cap = cap ? cap * 2 : 16;
			v = realloc(e->ents, cap * sizeof(*v));
			if (!v)
				goto out_oom;
			e->ents = v;
		}
		v = &e->ents[e->nents];
		if (fstatat(dirfd(d), de->d_name, &v->st,
			    AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		v->name = strdup(de->d_name);
		if (!v->name)
			goto out_oom;
		e->nents++;
	}
	closedir(d);
	if (e->nents)
		qsort(e->ents, e->nents, sizeof(*e->ents), dirent_cmp);
	return 0;
out_oom:
	closedir(d);
	return -ENOMEM;
}

/* Snapshot one guarded path. Returns 0, 1 (its directory is missing: not
 * guarded) or -ENOMEM. */
static int snap_entry(struct gentry *e)
{
	char buf[PATH_MAX];
	ssize_t n;
	int pfd, err = 0;

	pfd = open_dir(e->dir);
	if (pfd < 0)
		return 1;
	if (fstat(pfd, &e->pst) != 0) {
		close(pfd);
		return 1;
	}
	if (fstatat(pfd, e->name, &e->st, AT_SYMLINK_NOFOLLOW) != 0)
		goto out_close;
	e->exists = true;
	if (S_ISREG(e->st.st_mode)) {
		if (read_small(&e->data, &e->len, pfd, e->name,
			       GUARD_FILE_MAX) < 0 &&
		    errno == ENOMEM)
			err = -ENOMEM;
	} else if (S_ISLNK(e->st.st_mode)) {
		n = readlinkat(pfd, e->name, buf, sizeof(buf) - 1);
		if (n >= 0) {
			buf[n] = '\0';
			e->link = strdup(buf);
			if (!e->link)
				err = -ENOMEM;
		}
	} else if (S_ISDIR(e->st.st_mode) && strcmp(e->name, "hooks") == 0) {
		err = snap_listing(e, pfd);
	}
out_close:
	close(pfd);
	return err;
}

/* Add @path (a protected path, canonical up to its last component). */
static int guard_add(struct ward_protect_guard *g, size_t *cap,
		     const char *path, const char *what)
{
	const char *slash = strrchr(path, '/');
	struct gentry *e;
	int err;

	if (!slash || !slash[1])
		return 0;
	for (size_t i = 0; i < g->n; i++) {
		e = &g->v[i];
		if (strlen(e->dir) == (size_t)(slash - path) &&
		    strncmp(e->dir, path, (size_t)(slash - path)) == 0 &&
		    strcmp(e->name, slash + 1) == 0)
			return 0;
	}
	if (g->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;

		e = realloc(g->v, nc * sizeof(*e));
		if (!e)
			return -ENOMEM;
		g->v = e;
		*cap = nc;
	}
	e = &g->v[g->n];
	memset(e, 0, sizeof(*e));
	e->dir =
	    slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	e->name = strdup(slash + 1);
	e->what = what;
	if (!e->dir || !e->name) {
		gentry_clear(e);
		return -ENOMEM;
	}
	err = snap_entry(e);
	if (err) {
		gentry_clear(e);
		return err < 0 ? err : 0;
	}
	g->n++;
	return 0;
}

int ward_protect_guard_new(struct ward_protect_guard **out,
			   const ward_policy *policy)
{
	struct ward_protect_guard *g = NULL;
	struct ward_protected *v = NULL;
	const char *ws = ward_policy_workspace(policy);
	char **roots = NULL, *dotgit = NULL;
	size_t n = 0, cap = 0;
	int err;

	*out = NULL;
	if (ward_policy_mode(policy) != WARD_MODE_WORKSPACE_WRITE ||
	    !ward_policy_protect_git(policy))
		return 0;
	err = ward_protect_list(&v, &n, policy);
	if (err)
		return err;
	err = ward_roots_writable(&roots, policy);
	if (err)
		goto out_free;
	g = calloc(1, sizeof(*g));
	if (!g || asprintf(&dotgit, "%s/.git", strcmp(ws, "/") ? ws : "") < 0) {
		dotgit = NULL;
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n && !err; i++) {
		bool inside = false;

		if (v[i].kind != WARD_PROTECT_GIT)
			continue;
		for (size_t r = 0; roots[r] && !inside; r++)
			inside = ward_path_within(v[i].path, roots[r]);
		if (inside)
			err = guard_add(g, &cap, v[i].path, v[i].what);
	}
	/* The workspace's .git itself, whatever it is: replacing it
	 * replaces everything above. */
	if (!err && n && g->n)
		err = guard_add(g, &cap, dotgit,
				"the workspace's git directory entry");
	if (err)
		goto out_free;
	if (g->n) {
		*out = g;
		g = NULL;
	}
out_free:
	if (err == -ENOMEM)
		err = ward_err(-ENOMEM, "protected paths: out of memory");
	free(dotgit);
	ward_protect_guard_free(g);
	ward_strv_free(roots);
	ward_protect_free(v, n);
	return err;
}

/* Push a "ward: …" note unless the same one is there already. */
static void gnote(struct ward_strv *notes, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void gnote(struct ward_strv *notes, const char *fmt, ...)
{
	va_list ap;
	char *t = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (n < 0) {
		notes->oom = true;
		return;
	}
	for (size_t i = 0; i < notes->n; i++) {
		if (strcmp(notes->v[i], t) == 0) {
			free(t);
			return;
		}
	}
	ward_strv_push(notes, t);
	free(t);
}

/*
 * Move @name in @dirfd aside to NAME.ward-quarantine-N (never over
 * anything). The new name goes to @q. Returns 0 or -errno.
 */
static int quarantine(char *q, size_t qlen, int dirfd, const char *name)
{
	struct stat st;
	int r;

	for (int i = 1; i <= GUARD_QUARANTINE_TRIES; i++) {
		if (snprintf(q, qlen, "%s.ward-quarantine-%d", name, i) >=
		    (int)qlen)
			return -ENAMETOOLONG;
#ifdef SYS_renameat2
		r = (int)syscall(SYS_renameat2, dirfd, name, dirfd, q,
				 RENAME_NOREPLACE);
		if (r == 0)
			return 0;
		if (errno == EEXIST)
			continue;
		if (errno != ENOSYS && errno != EINVAL)
			return -errno;
#endif
		/* No RENAME_NOREPLACE here (old kernel or file system). */
		if (fstatat(dirfd, q, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		r = renameat(dirfd, name, dirfd, q);
		return r == 0 ? 0 : -errno;
	}
	return -EEXIST;
}

/* Create @name in @dirfd with @data (it must not exist). */
static int restore_file(int dirfd, const char *name, const char *data,
			size_t len, mode_t mode)
{
	size_t off = 0;
	ssize_t w;
	int fd, err = 0;

	do {
		fd =
		    openat(dirfd, name,
			   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			   mode & 07777);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	while (off < len) {
		w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = -errno;
			break;
		}
		off += (size_t)w;
	}
	if (!err && fchmod(fd, mode & 07777) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

/* Whether the regular file @name in @dirfd differs from the snapshot. */
static bool file_changed(const struct gentry *e, int dirfd,
			 const struct stat *st)
{
	char *now = NULL;
	size_t len = 0;
	bool changed;

	if (!e->data)
		return !same_inode(st, &e->st) ||
		       st->st_size != e->st.st_size ||
		       st->st_mtim.tv_sec != e->st.st_mtim.tv_sec ||
		       st->st_mtim.tv_nsec != e->st.st_mtim.tv_nsec;
	if (read_small(&now, &len, dirfd, e->name, GUARD_FILE_MAX) != 1)
		return true;
	changed = len != e->len || memcmp(now, e->data, len) != 0;
	free(now);
	return changed;
}

/* The quarantine suffix: such a name is never one git reads. */
#define QUARANTINE_TAG ".ward-quarantine-"

/*
 * The entries added to or changed in a protected directory (hooks): moved
 * aside once the listing is read (a rename while readdir() runs could
 * show the new name again). Quarantined names are left alone.
 */
static void check_listing(const struct gentry *e, int pfd, const char *path,
			  struct ward_strv *notes)
{
	struct ward_strv found = {0}, how = {0};
	char q[NAME_MAX + 1];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, err;

	if (!e->ents_ok)
		return;
	fd = openat_dir(pfd, e->name);
	if (fd < 0 || fstat(fd, &st) != 0 || !same_inode(&st, &e->st)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct gdirent key = {de->d_name, {0}}, *was;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    strstr(de->d_name, QUARANTINE_TAG))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		was = e->nents ? bsearch(&key, e->ents, e->nents,
					 sizeof(*e->ents), dirent_cmp)
			       : NULL;
		if (was && same_inode(&st, &was->st) &&
		    st.st_mode == was->st.st_mode &&
		    st.st_size == was->st.st_size &&
		    st.st_mtim.tv_sec == was->st.st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == was->st.st_mtim.tv_nsec)
			continue;
		ward_strv_push(&found, de->d_name);
		ward_strv_push(&how, was ? "changed in" : "added to");
	}
	for (size_t i = 0; i < found.n && i < how.n; i++) {
		err = quarantine(q, sizeof(q), dirfd(d), found.v[i]);
		if (err)
			gnote(notes,
			      "ward: %s/%s was %s the protected %s during the "
			      "run and could not be moved aside (errno %d): "
			      "remove it before you use git here",
			      path, found.v[i], how.v[i], e->what, -err);
		else
			gnote(notes,
			      "ward: %s/%s was %s the protected %s during the "
			      "run; it was moved aside to %s/%s%s",
			      path, found.v[i], how.v[i], e->what, path, q,
			      how.v[i][0] == 'c'
				  ? " (its original content is lost)"
				  : "");
	}
	if (found.oom || how.oom)
		notes->oom = true;
	ward_strv_discard(&found);
	ward_strv_discard(&how);
	closedir(d);
}

/* Check one guarded path and put it back; notes for what was found. */
static void check_entry(const struct gentry *e, struct ward_strv *notes)
{
	char path[PATH_MAX], q[NAME_MAX + 1], buf[PATH_MAX];
	char aside[PATH_MAX + NAME_MAX + 64];
	bool now_exists, changed;
	struct stat pst, st;
	const char *how;
	ssize_t n;
	int pfd, err;

	snprintf(path, sizeof(path), "%s/%s", strcmp(e->dir, "/") ? e->dir : "",
		 e->name);
	pfd = open_dir(e->dir);
	if (pfd < 0 || fstat(pfd, &pst) != 0 || !same_inode(&pst, &e->pst)) {
		if (pfd >= 0)
			close(pfd);
		gnote(notes,
		      "ward: %s was removed or replaced during the run: the "
		      "protected git paths inside it were not checked; check "
		      "the repository before you use git here",
		      e->dir);
		return;
	}
	now_exists = fstatat(pfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!e->exists) {
		if (!now_exists)
			goto out_close;
		err = quarantine(q, sizeof(q), pfd, e->name);
		if (err)
			gnote(notes,
			      "ward: %s (%s) appeared during the run and could "
			      "not be moved aside (errno %d): remove it before "
			      "you use git here",
			      path, e->what, -err);
		else
			gnote(notes,
			      "ward: %s (%s) appeared during the run; it was "
			      "moved aside to %s/%s",
			      path, e->what, strcmp(e->dir, "/") ? e->dir : "",
			      q);
		goto out_close;
	}
	if (S_ISDIR(e->st.st_mode)) {
		if (now_exists && S_ISDIR(st.st_mode) &&
		    same_inode(&st, &e->st)) {
			check_listing(e, pfd, path, notes);
			goto out_close;
		}
		changed = true;
	} else if (S_ISLNK(e->st.st_mode)) {
		changed = !now_exists || !S_ISLNK(st.st_mode) || !e->link;
		if (!changed) {
			n = readlinkat(pfd, e->name, buf, sizeof(buf) - 1);
			changed =
			    n < 0 || (buf[n] = '\0', strcmp(buf, e->link));
		}
	} else if (S_ISREG(e->st.st_mode)) {
		changed = !now_exists || !S_ISREG(st.st_mode) ||
			  file_changed(e, pfd, &st);
	} else {
		goto out_close;
	}
	if (!changed)
		goto out_close;
	q[0] = '\0';
	if (now_exists) {
		err = quarantine(q, sizeof(q), pfd, e->name);
		if (err) {
			gnote(notes,
			      "ward: %s (%s) was changed during the run and "
			      "could not be moved aside (errno %d): check it "
			      "before you use git here",
			      path, e->what, -err);
			goto out_close;
		}
	}
	how = now_exists ? "changed" : "removed";
	if (*q)
		snprintf(aside, sizeof(aside),
			 "; the replacement was moved "
			 "aside to %s/%s",
			 strcmp(e->dir, "/") ? e->dir : "", q);
	else
		aside[0] = '\0';
	if (S_ISLNK(e->st.st_mode) && e->link)
		err = symlinkat(e->link, pfd, e->name) == 0 ? 0 : -errno;
	else if (S_ISREG(e->st.st_mode) && e->data)
		err =
		    restore_file(pfd, e->name, e->data, e->len, e->st.st_mode);
	else
		err = -ENOTSUP; /* a directory or a large file */
	if (err == -ENOTSUP)
		gnote(notes,
		      "ward: %s (%s) was %s during the run and cannot be put "
		      "back%s; check the repository before you use git here",
		      path, e->what, how, aside);
	else if (err)
		gnote(notes,
		      "ward: %s (%s) was %s during the run and could not be "
		      "restored (errno %d)%s; check it before you use git "
		      "here",
		      path, e->what, how, -err, aside);
	else
		gnote(notes,
		      "ward: %s (%s) was %s during the run; the "
		      "original is back%s",
		      path, e->what, how, aside);
out_close:
	close(pfd);
}

int ward_protect_guard_check(char ***notes, struct ward_protect_guard *g)
{
	struct ward_strv sv = {0};

	for (size_t i = 0; g && i < g->n; i++)
		check_entry(&g->v[i], &sv);
	if (ward_strv_finish(notes, &sv) != 0)
		return ward_err(-ENOMEM, "protected paths: out of memory");
	return 0;
}
