/*
 * ward — protected paths: what stays read-only (or hidden) inside the
 * writable roots whatever the rules say (see protect.h); the guard that
 * checks after a run what no runner could keep is guard.c.
 *
 * The list is derived from the policy and the environment ($HOME,
 * $XDG_CONFIG_HOME, $XDG_STATE_HOME) and, for git, from the workspace's
 * `.git` and the repository's configuration. It is computed once per call
 * into the call's facts (facts.h); nothing here caches: the workspace
 * changes, and a stale gitdir would protect the wrong place.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "facts.h" /* the struct: facts.c calls this module */
#include "gitconfig.h"
#include "listings.h"
#include "libward/internal.h"
#include "protect.h"
#include "util/util.h"
#include "ward/render.h"

/* A .git file or commondir larger than this is not git's. */
#define GIT_FILE_MAX 4096
/* git configuration files larger than this are not read (git's own are a
 * few hundred bytes); nor deeper include chains than git follows. */
#define GIT_CONFIG_MAX	  (1024 * 1024)
#define GIT_INCLUDE_DEPTH 10

const char *ward_home_dir(char *buf, size_t len)
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

static char *xdg_ward_dir_now(const char *var, const char *fallback);

/*
 * $VAR/ward when $VAR is absolute, else $HOME/fallback/ward (or NULL),
 * canonical. Asked several times per call (the protected list, the walk,
 * the guard), and realpath() of a path that does not exist yet costs a
 * readlink per component per try: the last answer is kept for the same
 * $VAR and $HOME (a change of either is a new question).
 */
static char *xdg_ward_dir(const char *var, const char *fallback)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct {
		const char *var;
		char *key, *value;
	} memo[2];
	const char *v = getenv(var), *home = getenv("HOME");
	char *key = NULL, *out = NULL;
	size_t slot = strcmp(var, "XDG_STATE_HOME") == 0;

	if (asprintf(&key, "%s\n%s", v ? v : "", home ? home : "") < 0)
		return xdg_ward_dir_now(var, fallback);
	pthread_mutex_lock(&lock);
	if (memo[slot].key && strcmp(memo[slot].key, key) == 0 &&
	    memo[slot].var == var)
		out = strdup(memo[slot].value);
	pthread_mutex_unlock(&lock);
	if (out) {
		free(key);
		return out;
	}
	out = xdg_ward_dir_now(var, fallback);
	pthread_mutex_lock(&lock);
	if (out) {
		char *copy = strdup(out);

		if (copy) {
			free(memo[slot].key);
			free(memo[slot].value);
			memo[slot].var = var;
			memo[slot].key = key;
			memo[slot].value = copy;
			key = NULL;
		}
	}
	pthread_mutex_unlock(&lock);
	free(key);
	return out;
}

static char *xdg_ward_dir_now(const char *var, const char *fallback)
{
	const char *base = getenv(var);
	char pwbuf[1024], *lex = NULL, *out;
	const char *home;

	if (base && base[0] == '/') {
		if (asprintf(&lex, "%s/ward", base) < 0)
			return NULL;
	} else {
		home = ward_home_dir(pwbuf, sizeof(pwbuf));
		if (!home)
			return NULL;
		if (asprintf(&lex, "%s/%s/ward", home, fallback) < 0)
			return NULL;
	}
	out = util_path_canon(lex);
	free(lex);
	return out;
}

char *ward_state_dir(void)
{
	return xdg_ward_dir("XDG_STATE_HOME", ".local/state");
}

struct plist {
	struct ward_protected *v;
	size_t n;
	size_t cap;
	bool oom;
	/* What add_kind() saw at the path it adds next (WARD_SEEN_*). */
	unsigned char seen;
};

/*
 * Append @path (consumed; NULL means out of memory) unless present (then
 * only its flags are merged, and the stronger access kept).
 */
static void plist_add_access(struct plist *pl, char *path,
			     enum ward_protect_kind kind, const char *what,
			     unsigned flags, enum ward_access access)
{
	if (!path) {
		pl->oom = true;
		return;
	}
	for (size_t i = 0; i < pl->n; i++) {
		if (strcmp(pl->v[i].path, path) == 0) {
			pl->v[i].flags |= flags;
			if (access > pl->v[i].access)
				pl->v[i].access = access;
			if (!pl->v[i].seen)
				pl->v[i].seen = pl->seen;
			pl->seen = WARD_SEEN_UNKNOWN;
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
	pl->v[pl->n++] = (struct ward_protected){path, kind,   what,
						 flags, access, pl->seen};
	pl->seen = WARD_SEEN_UNKNOWN;
}

static void plist_add_flags(struct plist *pl, char *path,
			    enum ward_protect_kind kind, const char *what,
			    unsigned flags)
{
	plist_add_access(pl, path, kind, what, flags, WARD_ACCESS_RO);
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
		return util_path_canon(rel);
	if (asprintf(&lex, "%s/%s", base, rel) < 0)
		return NULL;
	out = util_path_canon(lex);
	free(lex);
	return out;
}

/* One scan of the workspace's protected paths. */
struct scan {
	struct plist *pl;
	struct ward_strv *notes; /* NULL: not wanted */
	unsigned gitdirs;	 /* git directories protected so far */
	bool capped;		 /* GIT_DIRS_MAX reached */
	const char *ws;		 /* the canonical workspace */
	char *const *roots;	 /* the policy's writable roots (borrowed) */
	/* The git directory whose configuration is being read: includes
	 * inside it are read too. */
	const char *gd;
	/* The top of the worktree of the repository being added (the
	 * workspace, or a nested repository's directory): a relative
	 * core.hooksPath is taken from there. */
	const char *top;
	const ward_policy *policy;
	struct ward_skipset released; /* what the walk leaves alone */
	struct ward_strv found;	      /* the walk's .git paths */
	struct ward_strv tops;	      /* repositories added (their tops) */
	char *refused;		      /* why the list cannot be made */
	struct ward_listings *keep;   /* NULL, or what the walk read */
	/* The entries of the root whose traps are being added (NULL: ask
	 * each path): one listing instead of a lstat per trap name. */
	const char *listed;
	struct ward_names names;
};

/* Bounds of the scan: git directories protected (the repository's, its
 * submodules', nested ones), worktrees per git directory, and how deep a
 * submodule's name (it may hold '/') or a nesting goes. */
#define GIT_DIRS_MAX	  256
#define GIT_WORKTREES_MAX 64
#define GIT_NAME_DEPTH	  6
#define GIT_NEST_DEPTH	  4
/* The walk of a writable root for the repositories in it: entries looked
 * at (all roots of a call together), and how deep. Past either the call is
 * refused: a repository ward did not see would not be protected. */
#define REPO_WALK_ENTRIES_MAX 200000

/* The marks of a kept note (see note()). */
#define NOTE_PLAIN 'n'
#define NOTE_LINK  'l'

static void note(struct scan *s, bool link, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(struct scan *s, bool link, const char *fmt, ...)
{
	va_list ap;
	char *t = NULL, *m = NULL;
	int n;

	if (!s->notes)
		return;
	va_start(ap, fmt);
	n = vasprintf(&t, fmt, ap);
	va_end(ap);
	if (n < 0) {
		s->notes->oom = true;
		return;
	}
	/* The first byte says whether it is about a symbolic link (a
	 * runner that keeps links itself, Seatbelt, leaves those out). */
	if (asprintf(&m, "%c%s", link ? NOTE_LINK : NOTE_PLAIN, t) < 0)
		s->notes->oom = true;
	else
		ward_strv_push(s->notes, m);
	free(m);
	free(t);
}

/* The first reason the list cannot be made (the call is refused). */
static void refuse(struct scan *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void refuse(struct scan *s, const char *fmt, ...)
{
	va_list ap;

	if (s->refused)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s->refused, fmt, ap) < 0) {
		s->refused = NULL;
		s->pl->oom = true;
	}
	va_end(ap);
}

/* A marker (not read-only itself, see protect.h) for @dir/@name. */
static void add_marker(struct scan *s, const char *dir, const char *name,
		       const char *what, unsigned flags)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", name) < 0) {
		s->pl->oom = true;
		return;
	}
	plist_add_access(s->pl, p, WARD_PROTECT_GIT, what, flags,
			 WARD_ACCESS_DEFAULT);
}

/*
 * Protect @dir/@name (@dir canonical) as @kind. When it is a symbolic
 * link, both the link itself (WARD_PROTECT_LINK: replacing the link
 * redirects git, or the tool that reads it, as well as rewriting the
 * target would) and its canonical target.
 */
static void add_kind(struct scan *s, const char *dir, const char *name,
		     enum ward_protect_kind kind, const char *what)
{
	char *p = NULL, *real;
	struct stat st;

	if (asprintf(&p, "%s/%s", strcmp(dir, "/") ? dir : "", name) < 0) {
		s->pl->oom = true;
		return;
	}
	if (s->listed && strcmp(dir, s->listed) == 0 && !strchr(name, '/')) {
		const struct util_dirent64 *de =
		    ward_names_find(&s->names, name);

		if (!de) {
			s->pl->seen = WARD_SEEN_MISSING;
			plist_add(s->pl, p, kind, what);
			return;
		}
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN) {
			s->pl->seen = de->d_type == DT_DIR ? WARD_SEEN_DIR
							   : WARD_SEEN_FILE;
			plist_add(s->pl, p, kind, what);
			return;
		}
	}
	if (lstat(p, &st) != 0) {
		s->pl->seen = WARD_SEEN_MISSING; /* as the plan would see it */
	} else if (S_ISLNK(st.st_mode)) {
		real = util_path_canon(p);
		note(s, true,
		     "%s is a symbolic link to %s: ward protects %s, but a "
		     "mount or a Landlock grant follows a link, so bwrap and "
		     "Landlock cannot keep the link itself from being pointed "
		     "elsewhere during a run (the fs fence and Seatbelt can); "
		     "ward run checks it after every run",
		     p, real ? real : "?", real ? real : "the target");
		s->pl->seen = WARD_SEEN_FILE;
		plist_add_flags(s->pl, strdup(p), kind, what,
				WARD_PROTECT_LINK);
		plist_add(s->pl, real, kind, what);
		free(p);
		return;
	} else {
		s->pl->seen = S_ISDIR(st.st_mode) ? WARD_SEEN_DIR
						  : WARD_SEEN_FILE;
	}
	plist_add(s->pl, p, kind, what);
}

bool ward_protected_probe(const struct ward_protected *pr, bool *is_dir)
{
	struct stat st;

	*is_dir = pr->seen == WARD_SEEN_DIR;
	if (pr->seen)
		return pr->seen != WARD_SEEN_MISSING;
	if (lstat(pr->path, &st) != 0)
		return false;
	*is_dir = S_ISDIR(st.st_mode);
	return true;
}

static void add_in(struct scan *s, const char *dir, const char *name,
		   const char *what)
{
	add_kind(s, dir, name, WARD_PROTECT_GIT, what);
}

static void read_gitconfig(struct scan *s, const char *file, unsigned depth);

static void add_gitdir(struct scan *s, const char *gd, unsigned nest);

/* Whether @path is a directory (not through a symlink). */
static bool is_dir_nofollow(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* --- what the repository's configuration names ------------------------- */

/* One configuration file being read. */
struct cfgread {
	struct scan *s;
	const char *file; /* canonical */
	unsigned depth;	  /* includes followed to get here */
};

/*
 * A path value of a git configuration key made absolute the way git does
 * (interpolate_path): `~/` is $HOME, a relative path is taken from @base.
 * NULL (and a note) for what ward does not resolve: `~user/` and
 * `%(prefix)/`. The caller frees the result.
 */
static char *config_path(struct scan *s, const char *value, const char *base,
			 const char *file, unsigned line)
{
	char pwbuf[1024], *out = NULL;
	const char *home;
	int n;

	if (value[0] == '~' && (value[1] == '/' || !value[1])) {
		home = ward_home_dir(pwbuf, sizeof(pwbuf));
		if (!home)
			return NULL;
		n = asprintf(&out, "%s%s", home, value + 1);
	} else if (value[0] == '~' || strncmp(value, "%(prefix)/", 10) == 0) {
		note(s, false,
		     "%s:%u names %s, which ward does not resolve: if it lies "
		     "in a writable root, a command can change what git runs "
		     "there",
		     file, line, value);
		return NULL;
	} else if (value[0] == '/') {
		out = strdup(value);
		n = out ? 0 : -1;
	} else {
		n = asprintf(&out, "%s/%s", strcmp(base, "/") ? base : "",
			     value);
	}
	if (n < 0 || !out) {
		s->pl->oom = true;
		return NULL;
	}
	return out;
}

/*
 * Protect the place @abs (absolute, as named) that a configuration key
 * points git at, when a confined command could write it: it lies in the
 * workspace or a writable root. A place that holds a writable root cannot
 * be kept read-only without the root (a `core.hooksPath` of "."): a note
 * says git runs code from a writable place. Returns its canonical path
 * (the caller frees it) or NULL.
 */
static char *protect_named(struct scan *s, const char *abs, const char *what,
			   const char *file, unsigned line)
{
	char *canon, *slash, *parent = NULL, *name;
	const char *holds = NULL;
	bool inside;

	canon = util_path_canon(abs);
	if (!canon) {
		s->pl->oom = true;
		return NULL;
	}
	inside = util_path_within(abs, s->ws) || util_path_within(canon, s->ws);
	if (util_path_within(s->ws, canon))
		holds = s->ws;
	for (size_t i = 0; s->roots && s->roots[i]; i++) {
		if (!holds && util_path_within(s->roots[i], canon))
			holds = s->roots[i];
		inside = inside || util_path_within(canon, s->roots[i]);
	}
	if (holds) {
		note(s, false,
		     "%s:%u: %s is %s, which holds the writable root %s: ward "
		     "cannot keep it read-only without the whole root, so a "
		     "command can change what git runs from there",
		     file, line, what, canon, holds);
		return canon;
	}
	if (!inside)
		return canon; /* read-only already */
	/* The named path itself may be a symlink into the workspace:
	 * protect the link (it can be re-pointed) and its target. */
	slash = strrchr(abs, '/');
	name = slash ? slash + 1 : NULL;
	if (name && *name && strcmp(name, ".") && strcmp(name, "..")) {
		char *dir = strndup(abs, (size_t)(slash - abs));

		parent = dir ? util_path_canon(*dir ? dir : "/") : NULL;
		free(dir);
	}
	if (parent)
		add_kind(s, parent, name, WARD_PROTECT_GIT, what);
	else
		plist_add(s->pl, strdup(canon), WARD_PROTECT_GIT, what);
	free(parent);
	return canon;
}

static void on_gitcfg(void *ctx, enum ward_gitcfg_key key, const char *value,
		      unsigned line)
{
	struct cfgread *r = ctx;
	struct scan *s = r->s;
	char *abs, *canon, *dir;
	const char *slash;

	if (!value || !*value)
		return;
	if (key == WARD_GITCFG_HOOKSPATH) {
		/* Relative to where hooks run: the top of the worktree. */
		abs = config_path(s, value, s->top ? s->top : s->ws, r->file,
				  line);
		if (!abs)
			return;
		canon = protect_named(
		    s, abs, "the git hooks directory named by core.hooksPath",
		    r->file, line);
		free(abs);
		free(canon);
		return;
	}
	/* An include is relative to the file that includes it. */
	slash = strrchr(r->file, '/');
	dir = strndup(r->file, slash ? (size_t)(slash - r->file) : 0);
	if (!dir) {
		s->pl->oom = true;
		return;
	}
	abs = config_path(s, value, *dir ? dir : "/", r->file, line);
	free(dir);
	if (!abs)
		return;
	canon = protect_named(s, abs,
			      "a git config file named by include.path or "
			      "includeIf.*.path",
			      r->file, line);
	free(abs);
	if (!canon)
		return;
	/* Read it too, if it is the repository's: never a file elsewhere
	 * (a command must not choose what ward reads and protects). */
	if (util_path_within(canon, s->ws) ||
	    (s->gd && util_path_within(canon, s->gd))) {
		if (r->depth + 1 < GIT_INCLUDE_DEPTH)
			read_gitconfig(s, canon, r->depth + 1);
	} else {
		for (size_t i = 0; s->roots && s->roots[i]; i++) {
			if (!util_path_within(canon, s->roots[i]))
				continue;
			note(s, false,
			     "%s:%u includes %s, outside the workspace but in "
			     "the writable root %s: ward keeps it read-only "
			     "but does not read it, so hooks directories or "
			     "includes it names are not protected",
			     r->file, line, canon, s->roots[i]);
			break;
		}
	}
	free(canon);
}

/*
 * Read the git configuration file @file (canonical) for the keys of
 * gitconfig.h. Missing, not a regular file, or too large: nothing (git
 * reads a missing include as empty; a huge one is noted).
 */
static void read_gitconfig(struct scan *s, const char *file, unsigned depth)
{
	struct cfgread r = {s, file, depth};
	char *text = NULL;
	size_t len = 0, cap = 0;
	unsigned bad = 0;
	struct stat st;
	ssize_t n;
	int fd, err;

	do {
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		goto out_close;
	for (;;) {
		if (len == cap) {
			char *nt;

			cap = cap ? cap * 2 : 4096;
			nt = realloc(text, cap);
			if (!nt) {
				s->pl->oom = true;
				goto out_close;
			}
			text = nt;
		}
		n = read(fd, text + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len > GIT_CONFIG_MAX) {
			note(
			    s, false,
			    "%s is larger than %d bytes: ward does not read it "
			    "for the hooks directory and the files it "
			    "includes, so those are not protected",
			    file, GIT_CONFIG_MAX);
			goto out_close;
		}
	}
	err = ward_gitconfig_scan(text ? text : "", len, on_gitcfg, &r, &bad);
	if (err == -ENOMEM)
		s->pl->oom = true;
	else if (err)
		note(s, false,
		     "%s:%u: a line git cannot parse either (git refuses to "
		     "run with this file); ward read it up to there",
		     file, bad);
out_close:
	free(text);
	close(fd);
}

/*
 * The configuration of the git directory @gd: its `config` (when
 * @with_config) and `config.worktree` (git reads it only with
 * extensions.worktreeConfig; ward reads it anyway), and what they
 * include.
 */
static void read_gitdir_config(struct scan *s, const char *gd, bool with_config)
{
	const char *saved = s->gd;
	char *p = NULL;

	s->gd = gd;
	if (with_config) {
		if (asprintf(&p, "%s/config", gd) < 0) {
			s->pl->oom = true;
			goto out;
		}
		read_gitconfig(s, p, 0);
		free(p);
		p = NULL;
	}
	if (asprintf(&p, "%s/config.worktree", gd) < 0) {
		s->pl->oom = true;
		goto out;
	}
	read_gitconfig(s, p, 0);
	free(p);
out:
	s->gd = saved;
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
		if (is_dot(e->d_name))
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
		if (is_dot(e->d_name))
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
			refuse(s,
			       "ward cannot protect the git repositories in "
			       "%s: there are more than %d git directories "
			       "(repositories, submodules, nested ones), so "
			       "the command was not run; choose a narrower "
			       "workspace, or release the directories that "
			       "hold them with `unprotect:` in your user "
			       "configuration",
			       s->ws, GIT_DIRS_MAX);
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
	/* Where git finds more repositories: a new entry there is a new
	 * repository (the guard takes it, the fence refuses it), unless the
	 * user keeps new repositories. */
	if (!ward_policy_keep_new_repos(s->policy)) {
		add_marker(s, gd, "modules", "a new submodule's git directory",
			   WARD_PROTECT_NEWONLY);
		add_marker(s, gd, "worktrees",
			   "a new linked worktree's git files",
			   WARD_PROTECT_NEWONLY);
	}
	/* The repository's own configuration names more places git runs
	 * code from (a submodule's is not read: see protect.h). */
	if (nest == 0)
		read_gitdir_config(s, gd, true);
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
			read_gitdir_config(s, gitdir, false);
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
	const char *saved = s->top;
	struct stat st;

	for (size_t i = 0; i < s->tops.n; i++)
		if (strcmp(s->tops.v[i], ws) == 0)
			return;
	ward_strv_push(&s->tops, ws);
	s->top = ws;
	/* A workspace of "/" must not give "//.git". */
	if (strcmp(ws, "/") == 0)
		ws = "";
	if (snprintf(dotgit, sizeof(dotgit), "%s/.git", ws) >=
	    (int)sizeof(dotgit))
		goto out;
	if (lstat(dotgit, &st) != 0) {
		/* No repository here: one that appears during the call is
		 * a new one (unless the user keeps them). */
		if (!ward_policy_keep_new_repos(s->policy))
			plist_add(s->pl, strdup(dotgit), WARD_PROTECT_GIT,
				  "a new git repository");
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		plist_add_access(s->pl, strdup(dotgit), WARD_PROTECT_GIT,
				 "a git repository's .git directory",
				 WARD_PROTECT_REPO, WARD_ACCESS_DEFAULT);
		add_gitdir(s, dotgit, 0);
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		add_gitfile(s, dotgit, *ws ? ws : "/");
		goto out;
	}
	if (!S_ISLNK(st.st_mode)) {
		/* A FIFO or device named .git: git cannot use it, but a
		 * replacement could be; keep it as it is. */
		plist_add(s->pl, strdup(dotgit), WARD_PROTECT_GIT,
			  "the .git entry");
		goto out;
	}
	plist_add_flags(s->pl, strdup(dotgit), WARD_PROTECT_GIT,
			"the .git symlink (it names the git directory)",
			WARD_PROTECT_LINK);
	real = realpath(dotgit, NULL);
	note(s, true,
	     "%s is a symbolic link to %s: ward protects the hooks and "
	     "config there, but a mount or a Landlock grant follows a link, "
	     "so bwrap and Landlock cannot keep the link itself from being "
	     "pointed at another git directory during a run (the fs fence "
	     "and Seatbelt can); ward run checks it after every run and "
	     "puts it back",
	     dotgit, real ? real : "a missing path");
	if (!real) {
		if (errno == ENOMEM)
			s->pl->oom = true;
		goto out;
	}
	if (stat(real, &st) == 0 && S_ISDIR(st.st_mode))
		add_gitdir(s, real, 0);
	else if (S_ISREG(st.st_mode))
		add_gitfile(s, real, *ws ? ws : "/");
	free(real);
out:
	s->top = saved;
}

/* The persistence traps outside git, at the top of the workspace. */
static const struct {
	const char *name;
	const char *what;
} traps[] = {
    {".husky", "husky's git hooks"},
    {".mcp.json", "the project's MCP server list"},
    {".vscode", "VS Code workspace settings and tasks"},
    {".idea", "JetBrains project settings"},
    {".claude", "Claude Code project settings and hooks"},
    {".envrc", "direnv's environment file"},
};

/*
 * Startup files and directories: what shells, git, package managers,
 * cloud and container tools and other agents read (and run) on the
 * user's behalf. At the top of the workspace and of every `rw` root, and
 * of the home directory when it lies in a writable root. A floor, not the
 * design: new repositories anywhere are handled apart (see add_git()).
 */
static const struct {
	const char *name;
	const char *what;
} startup[] = {
    {".bashrc", "a shell startup file"},
    {".bash_profile", "a shell startup file"},
    {".bash_login", "a shell startup file"},
    {".bash_logout", "a shell startup file"},
    {".profile", "a shell startup file"},
    {".zshrc", "a shell startup file"},
    {".zprofile", "a shell startup file"},
    {".zshenv", "a shell startup file"},
    {".zlogin", "a shell startup file"},
    {".zlogout", "a shell startup file"},
    {".kshrc", "a shell startup file"},
    {".cshrc", "a shell startup file"},
    {".tcshrc", "a shell startup file"},
    {".inputrc", "readline's startup file"},
    {".gitconfig", "git's configuration"},
    {".gitmodules", "git's submodule list"},
    {".ripgreprc", "ripgrep's configuration"},
    {".npmrc", "npm's configuration"},
    {".yarnrc", "yarn's configuration"},
    {".yarnrc.yml", "yarn's configuration"},
    {".pypirc", "the Python package index credentials"},
    {"pip.conf", "pip's configuration"},
    {".aws", "AWS's configuration and credentials"},
    {".docker", "Docker's configuration and credentials"},
    {".kube", "Kubernetes' configuration and credentials"},
    {".codex", "Codex's configuration"},
    {".cursor", "Cursor's configuration"},
    {".gemini", "Gemini CLI's configuration"},
    {".continue", "Continue's configuration"},
    {".windsurf", "Windsurf's configuration"},
    {".aider.conf.yml", "aider's configuration"},
};

/* The home directory's own: logins, autostart, the PATH, keys. */
static const struct {
	const char *name;
	const char *what;
} home_startup[] = {
    {".ssh", "ssh's keys and configuration"},
    {".gnupg", "GnuPG's keys and configuration"},
    {".netrc", "login credentials"},
    {".pam_environment", "the login environment"},
    {".xprofile", "the X session's startup file"},
    {".xsession", "the X session's startup file"},
    {".xsessionrc", "the X session's startup file"},
    {".xinitrc", "the X session's startup file"},
    {".vimrc", "vim's startup file"},
    {".emacs", "emacs' startup file"},
    {".emacs.d/init.el", "emacs' startup file"},
    {".claude.json", "Claude Code's configuration"},
    {".config/autostart", "desktop autostart entries"},
    {".config/systemd/user", "systemd user services"},
    {".config/environment.d", "the user session's environment"},
    {".config/git", "git's configuration"},
    {".config/fish", "fish's startup files"},
    {".config/nvim/init.vim", "neovim's startup file"},
    {".config/nvim/init.lua", "neovim's startup file"},
    {".config/pip", "pip's configuration"},
    {".local/bin", "programs on your PATH"},
    {".local/share/applications", "desktop entries"},
    {".cargo/config.toml", "cargo's configuration"},
    {".cargo/bin", "programs on your PATH"},
};

/*
 * Protect @dir/@rel (@rel may hold '/': its parents are made canonical
 * as far as they exist).
 */
static void add_rel(struct scan *s, const char *dir, const char *rel,
		    enum ward_protect_kind kind, const char *what)
{
	const char *slash = strrchr(rel, '/');
	char *lex = NULL, *parent;

	if (!slash) {
		add_kind(s, dir, rel, kind, what);
		return;
	}
	if (asprintf(&lex, "%s/%.*s", strcmp(dir, "/") ? dir : "",
		     (int)(slash - rel), rel) < 0) {
		s->pl->oom = true;
		return;
	}
	parent = util_path_canon(lex);
	free(lex);
	if (!parent) {
		s->pl->oom = true;
		return;
	}
	add_kind(s, parent, slash + 1, kind, what);
	free(parent);
}

static void add_startup(struct scan *s, const char *dir)
{
	for (size_t i = 0; i < sizeof(startup) / sizeof(startup[0]); i++)
		add_kind(s, dir, startup[i].name, WARD_PROTECT_TRAP,
			 startup[i].what);
}

/* --- the repositories in a writable root -------------------------------- */

int ward_skipset_init(struct ward_skipset *k, const ward_policy *policy)
{
	char *const *un = ward_policy_unprotected(policy);
	struct ward_strv sv = {0};
	char *p;

	memset(k, 0, sizeof(*k));
	for (size_t i = 0; un && un[i]; i++) {
		ward_strv_push(&sv, un[i]);
		p = util_path_canon(un[i]);
		if (p)
			ward_strv_push(&sv, p);
		else
			sv.oom = true;
		free(p);
	}
	p = xdg_ward_dir("XDG_CONFIG_HOME", ".config");
	if (p)
		ward_strv_push(&sv, p);
	free(p);
	p = ward_state_dir();
	if (p)
		ward_strv_push(&sv, p);
	free(p);
	ward_strv_push(&sv, "/proc");
	ward_strv_push(&sv, "/sys");
	ward_strv_push(&sv, "/dev");
	if (sv.oom) {
		ward_strv_discard(&sv);
		return -ENOMEM;
	}
	k->v = sv.v;
	k->n = sv.n;
	return 0;
}

bool ward_skipset_has(const struct ward_skipset *k, const char *path)
{
	for (size_t i = 0; i < k->n; i++) {
		if (util_path_within(path, k->v[i]))
			return true;
	}
	return false;
}

void ward_skipset_free(struct ward_skipset *k)
{
	struct ward_strv sv = {k->v, k->n, k->n, false};

	ward_strv_discard(&sv);
	memset(k, 0, sizeof(*k));
}

/* Whether @r is one of the shared temporary directories of @policy. */
static bool shared_tmp(const ward_policy *policy, const char *r)
{
	const char *tmpdir = ward_policy_tmpdir(policy);
	char *canon;
	bool same = false;

	canon = util_path_canon("/tmp");
	same = canon && strcmp(canon, r) == 0;
	free(canon);
	if (!same && tmpdir && (canon = util_path_canon(tmpdir))) {
		same = strcmp(canon, r) == 0;
		free(canon);
	}
	return same;
}

int ward_protect_walk_roots(char ***out, const ward_policy *policy,
			    char *const *roots)
{
	const char *ws = ward_policy_workspace(policy);
	struct ward_strv sv = {0};

	for (size_t i = 0; roots && roots[i]; i++) {
		/* The workspace is walked even under /tmp. */
		if (strcmp(roots[i], ws) == 0 || !shared_tmp(policy, roots[i]))
			ward_strv_push(&sv, roots[i]);
	}
	return ward_strv_finish(out, &sv) == 0 ? 0 : -ENOMEM;
}

static bool scan_skip(void *ctx, const char *path)
{
	struct scan *s = ctx;

	return ward_skipset_has(&s->released, path);
}

static void scan_found(void *ctx, int dirfd, const char *name, const char *path)
{
	struct scan *s = ctx;

	(void)dirfd;
	(void)name;
	ward_strv_push(&s->found, path);
}

/*
 * Every repository in the root @r (the workspace or an `rw` root): each
 * `.git` beneath it gets what the workspace's own repository gets. A walk
 * past its bound refuses the call: a repository it did not reach would
 * not be protected.
 */
static void add_repos(struct scan *s, const char *r, size_t *budget)
{
	struct ward_repo_walk w;

	memset(&w, 0, sizeof(w));
	w.max_entries = *budget ? *budget : 1;
	w.max_depth = REPO_WALK_DEPTH_MAX;
	w.skip = scan_skip;
	w.found = scan_found;
	w.ctx = s;
	w.keep = s->keep;
	ward_strv_discard(&s->found); /* the last root's */
	if (ward_repo_walk(&w, r) != 0)
		return;
	*budget = w.entries >= *budget ? 0 : *budget - w.entries;
	if (w.over)
		refuse(s,
		       "ward cannot look for git repositories in all of %s "
		       "(more than %d entries, or deeper than %d directories, "
		       "at %s), so it cannot protect their hooks and "
		       "configuration and the command was not run; choose a "
		       "narrower workspace, or release large directories that "
		       "hold no repository with `unprotect:` in your user "
		       "configuration",
		       r, REPO_WALK_ENTRIES_MAX, REPO_WALK_DEPTH_MAX, w.at);
	/* In path order, whichever walker found them (repowalk.c). */
	if (s->found.n)
		qsort(s->found.v, s->found.n, sizeof(*s->found.v),
		      util_strp_cmp);
	for (size_t i = 0; i < s->found.n && !s->pl->oom; i++) {
		char *top = s->found.v[i];
		char *slash = strrchr(top, '/');

		*slash = '\0';
		add_git(s, *top ? top : "/");
		*slash = '/';
	}
	if (s->found.oom)
		s->pl->oom = true;
}

/*
 * The home directory, when it lies in a writable root: its startup files,
 * its autostart places and its own repository, with a note naming them.
 */
static void add_home(struct scan *s)
{
	char pwbuf[1024], names[512];
	const char *home = ward_home_dir(pwbuf, sizeof(pwbuf));
	const char *in = NULL;
	char *h;
	size_t o = 0, n = 0;

	if (!home || !(h = util_path_canon(home)))
		return;
	for (size_t i = 0; s->roots && s->roots[i] && !in; i++)
		if (util_path_within(h, s->roots[i]))
			in = s->roots[i];
	if (!in) {
		free(h);
		return;
	}
	names[0] = '\0';
	for (size_t i = 0; i < sizeof(home_startup) / sizeof(home_startup[0]);
	     i++) {
		add_rel(s, h, home_startup[i].name, WARD_PROTECT_TRAP,
			home_startup[i].what);
		if (o < sizeof(names) - 64)
			o += (size_t)snprintf(names + o, sizeof(names) - o,
					      "%s%s", n++ ? ", " : "",
					      home_startup[i].name);
	}
	add_startup(s, h);
	add_git(s, h);
	note(s, false,
	     "your home directory %s lies in the writable root %s: ward keeps "
	     "its startup files and autostart places read-only (%s, the shell "
	     "and tool files of the workspace's list: .bashrc, .profile, "
	     ".gitconfig, .npmrc, …) and takes a new repository there away; "
	     "release one with `unprotect:` in your user configuration",
	     h, in, names);
	free(h);
}

/*
 * Drop the git and trap paths the user's own configuration released: a
 * released path and everything beneath it. Home and project paths are
 * never released.
 */
static void release(struct plist *pl, const ward_policy *policy)
{
	char *const *un = ward_policy_unprotected(policy);
	struct ward_strv canon = {0};
	size_t out = 0;

	if (!un || !un[0])
		return;
	for (size_t i = 0; un[i]; i++) {
		char *c = util_path_canon(un[i]);

		if (!c) {
			pl->oom = true;
			break;
		}
		ward_strv_push(&canon, c);
		free(c);
	}
	if (canon.oom)
		pl->oom = true;
	for (size_t i = 0; i < pl->n; i++) {
		bool drop = false;

		if (pl->v[i].kind == WARD_PROTECT_GIT ||
		    pl->v[i].kind == WARD_PROTECT_TRAP) {
			for (size_t j = 0; j < canon.n && !drop; j++)
				drop = util_path_within(pl->v[i].path,
							canon.v[j]) ||
				       util_path_within(pl->v[i].path, un[j]);
		}
		if (drop) {
			free(pl->v[i].path);
			continue;
		}
		pl->v[out++] = pl->v[i];
	}
	pl->n = out;
	ward_strv_discard(&canon);
}

/*
 * The entries of the root @dir, for the trap names looked up at its top
 * (about fifty: one lstat each otherwise): its records (the caller frees
 * them) indexed in s->names, or NULL when it cannot be read whole in a
 * small buffer (a large top directory is cheaper to ask name by name).
 */
#define TOP_MAX 65536 /* bytes of records: about 2,000 entries */

static char *list_top(struct scan *s, const char *dir)
{
	char *rec = malloc(TOP_MAX);
	size_t len = 0;
	long got = -1;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);

	if (fd >= 0 && rec) {
		while (len < TOP_MAX && (got = util_getdents64(
					     fd, rec + len, TOP_MAX - len)) > 0)
			len += (size_t)got;
	}
	if (fd >= 0)
		close(fd);
	/* Read to its end (the last call gave 0), and indexed. */
	if (got != 0 || !ward_names_index(&s->names, rec, len)) {
		free(rec);
		return NULL;
	}
	s->listed = dir;
	return rec;
}

/*
 * Under workspace-write: the traps and startup files at the top of the
 * workspace and of every `rw` root, and every repository in them (the
 * walk); the top of the shared temporary directories (a /tmp/.git would
 * be found by git from every directory under /tmp); the home directory
 * when it lies in a writable root.
 */
static void scan_roots(struct scan *s)
{
	const ward_policy *policy = s->policy;
	size_t budget = REPO_WALK_ENTRIES_MAX;
	char **walk = NULL;
	bool git = ward_policy_protect_git(policy);

	if (ward_protect_walk_roots(&walk, policy, s->roots) != 0) {
		s->pl->oom = true;
		return;
	}
	for (size_t i = 0; walk[i] && !s->pl->oom; i++) {
		char *rec = list_top(s, walk[i]);

		for (size_t t = 0; t < sizeof(traps) / sizeof(traps[0]); t++)
			add_kind(s, walk[i], traps[t].name, WARD_PROTECT_TRAP,
				 traps[t].what);
		add_startup(s, walk[i]);
		s->listed = NULL;
		ward_names_free(&s->names);
		free(rec);
		if (!git)
			continue;
		add_git(s, walk[i]);
		add_repos(s, walk[i], &budget);
	}
	for (size_t i = 0; git && s->roots[i]; i++) {
		bool walked = false;

		for (size_t j = 0; walk[j] && !walked; j++)
			walked = strcmp(walk[j], s->roots[i]) == 0;
		if (!walked)
			add_git(s, s->roots[i]);
	}
	ward_strv_free(walk);
	add_home(s);
}

/*
 * Every protected path of @policy into @pl; notes into @notes if wanted;
 * the directories the walk of the roots read into @keep (NULL: none);
 * why the list cannot be made into *@refused (NULL: it can; the caller
 * frees it).
 */
static void scan_policy(struct plist *pl, struct ward_strv *notes,
			const ward_policy *policy, char *const *roots,
			bool scan, struct ward_listings *keep, char **refused)
{
	const char *ws = ward_policy_workspace(policy);
	const char *store = ward_policy_store(policy);
	struct scan s;
	char *p, *state;

	memset(&s, 0, sizeof(s));
	s.pl = pl;
	s.notes = notes;
	s.ws = ws;
	s.policy = policy;
	s.roots = roots;
	s.keep = keep;
	*refused = NULL;
	p = xdg_ward_dir("XDG_CONFIG_HOME", ".config");
	if (p)
		plist_add(pl, p, WARD_PROTECT_HOME,
			  "ward's configuration directory");
	/* Hidden: a confined process can neither read the session logs
	 * nor hold their locks. */
	state = ward_state_dir();
	if (state)
		plist_add_access(pl, strdup(state), WARD_PROTECT_HOME,
				 "ward's state directory (session store)", 0,
				 WARD_ACCESS_NONE);
	/*
	 * A session's store elsewhere is hidden too, when it lies outside
	 * every writable root: inside one, Landlock could hide it only by
	 * making the root's top level unwritable, so the session refuses
	 * such a policy instead (ward_session_check_policy).
	 */
	if (store) {
		p = util_path_canon(store);
		for (size_t i = 0; p && s.roots && s.roots[i]; i++) {
			if (util_path_within(p, s.roots[i])) {
				free(p);
				p = NULL;
				break;
			}
		}
		if (p && state && util_path_within(p, state))
			free(p);
		else if (p)
			plist_add_access(pl, p, WARD_PROTECT_HOME,
					 "the session's store", 0,
					 WARD_ACCESS_NONE);
	}
	free(state);
	p = NULL;
	if (asprintf(&p, "%s/.ward", strcmp(ws, "/") ? ws : "") < 0)
		p = NULL;
	plist_add(pl, p, WARD_PROTECT_PROJECT, "the project's ward directory");
	if (!scan || ward_policy_mode(policy) != WARD_MODE_WORKSPACE_WRITE)
		return;
	if (ward_skipset_init(&s.released, policy) != 0) {
		pl->oom = true;
		return;
	}
	scan_roots(&s);
	release(pl, policy);
	ward_skipset_free(&s.released);
	ward_strv_discard(&s.found);
	ward_strv_discard(&s.tops);
	*refused = s.refused;
}

static void plist_free(struct plist *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->v[i].path);
	free(pl->v);
}

/*
 * The vector of @pl as one allocation, the paths after the entries, so
 * that free() frees it (and the policy that keeps it needs nothing of this
 * module to let it go). NULL when @pl is empty or on ENOMEM (*oom).
 */
static struct ward_protected *plist_pack(const struct plist *pl, bool *oom)
{
	size_t size = pl->n * sizeof(struct ward_protected);
	struct ward_protected *v;
	char *at;

	*oom = false;
	if (pl->n == 0)
		return NULL;
	for (size_t i = 0; i < pl->n; i++)
		size += strlen(pl->v[i].path) + 1;
	v = malloc(size);
	if (!v) {
		*oom = true;
		return NULL;
	}
	at = (char *)(v + pl->n);
	for (size_t i = 0; i < pl->n; i++) {
		size_t len = strlen(pl->v[i].path) + 1;

		v[i] = pl->v[i];
		v[i].path = memcpy(at, pl->v[i].path, len);
		at += len;
	}
	return v;
}

int ward_protect_compute(struct ward_protected **out, size_t *out_len,
			 char **refused, char ***said,
			 const ward_policy *policy, char *const *roots,
			 bool scan, struct ward_listings *keep)
{
	struct ward_protected *v = NULL;
	struct ward_strv notes = {0};
	struct plist pl = {0};
	bool oom = false;

	scan_policy(&pl, &notes, policy, roots, scan, keep, refused);
	if (!pl.oom)
		v = plist_pack(&pl, &oom);
	plist_free(&pl);
	if (pl.oom || oom || ward_strv_finish(said, &notes) != 0) {
		free(v);
		free(*refused);
		*refused = NULL;
		return ward_err(-ENOMEM, "protected paths: out of memory");
	}
	*out = v;
	*out_len = pl.n;
	return 0;
}

int ward_protect_notes_of(char ***out, const struct ward_facts *f, bool links)
{
	struct ward_strv sv = {0};

	/* Also after a refusal: the plan says it, the notes stand. */
	for (size_t i = 0; f->notes && f->notes[i]; i++)
		if (links || f->notes[i][0] != NOTE_LINK)
			ward_strv_push(&sv, f->notes[i] + 1);
	if (ward_strv_finish(out, &sv) != 0)
		return ward_err(-ENOMEM, "protected paths: out of memory");
	return 0;
}

/* Whether @p exists (no symlink followed at its end). */
static bool exists_nofollow(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0 || errno != ENOENT;
}

/*
 * Whether a write to @path would make a new repository: a `.git` on its
 * way that does not exist (in a writable root), or a new entry right
 * beneath a NEWONLY marker.
 */
static bool makes_repo(const ward_policy *policy, const struct ward_facts *f,
		       const struct ward_protected *v, size_t n,
		       const char *path)
{
	char buf[PATH_MAX];
	char *const *roots = f->roots;
	const char *at;
	size_t len;

	for (size_t i = 0; i < n; i++) {
		if (!(v[i].flags & WARD_PROTECT_NEWONLY) ||
		    !util_path_within(path, v[i].path) ||
		    strcmp(path, v[i].path) == 0)
			continue;
		len = strlen(v[i].path);
		at = strchr(path + len + 1, '/');
		len = at ? (size_t)(at - path) : strlen(path);
		if (len >= sizeof(buf))
			return true;
		memcpy(buf, path, len);
		buf[len] = '\0';
		if (!exists_nofollow(buf))
			return true;
	}
	if (ward_policy_keep_new_repos(policy))
		return false;
	for (at = strstr(path, "/.git"); at; at = strstr(at + 1, "/.git")) {
		bool inside = false;

		if (at[5] != '\0' && at[5] != '/')
			continue;
		len = (size_t)(at - path) + 5;
		if (len >= sizeof(buf))
			return true;
		memcpy(buf, path, len);
		buf[len] = '\0';
		for (size_t i = 0; roots && roots[i] && !inside; i++)
			inside = util_path_within(buf, roots[i]);
		if (inside && !exists_nofollow(buf))
			return true;
	}
	return false;
}

/*
 * On ENOMEM the answer is "hidden": a failure to compute the list must not
 * open a read or a write; nor may a list that could not be made (a walk
 * past its bound): then everything in a writable root is read-only.
 */
enum ward_access ward_protect_match_in(const ward_policy *policy,
				       const struct ward_facts *f,
				       const char *path)
{
	const struct ward_protected *v = NULL;
	enum ward_access best = WARD_ACCESS_DEFAULT;
	size_t n = 0;
	int err;

	if (!f)
		return WARD_ACCESS_NONE;
	err = ward_facts_protected(&v, &n, f);
	if (err == WARD_EINVAL)
		return WARD_ACCESS_RO;
	if (err)
		return WARD_ACCESS_NONE;
	for (size_t i = 0; i < n; i++) {
		if (util_path_within(path, v[i].path) && v[i].access > best)
			best = v[i].access;
	}
	if (best == WARD_ACCESS_DEFAULT &&
	    ward_policy_mode(policy) == WARD_MODE_WORKSPACE_WRITE &&
	    ward_policy_protect_git(policy) &&
	    makes_repo(policy, f, v, n, path))
		best = WARD_ACCESS_RO;
	return best;
}

bool ward_protect_makes_repo(const ward_policy *policy,
			     const struct ward_facts *f, const char *path)
{
	const struct ward_protected *v = NULL;
	size_t n = 0;

	if (ward_policy_mode(policy) != WARD_MODE_WORKSPACE_WRITE ||
	    !ward_policy_protect_git(policy) ||
	    ward_facts_protected(&v, &n, f) != 0)
		return false;
	return makes_repo(policy, f, v, n, path);
}

bool ward_protect_inside(const struct ward_facts *f, const char *dir)
{
	const struct ward_protected *v = NULL;
	size_t n = 0;

	if (ward_facts_protected(&v, &n, f) != 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (ward_protected_kept(&v[i]) &&
		    util_path_within(v[i].path, dir) &&
		    strcmp(v[i].path, dir) != 0)
			return true;
	}
	return false;
}

/*
 * A workspace that holds the home directory (or is /) under
 * workspace-write makes every file of the user writable: refused unless
 * the user confirmed it. The text is render.c's, the one every front end
 * shows.
 */
int ward_policy_check_workspace(const ward_policy *policy)
{
	char pwbuf[1024], *h = NULL, *text = NULL;
	const char *home = ward_home_dir(pwbuf, sizeof(pwbuf));
	const char *ws;
	bool root, wide;
	int err;

	if (!policy)
		return ward_err(WARD_EINVAL, "policy: NULL");
	if (ward_policy_mode(policy) != WARD_MODE_WORKSPACE_WRITE ||
	    ward_policy_allow_home_workspace(policy))
		return 0;
	ws = ward_policy_workspace(policy);
	root = strcmp(ws, "/") == 0;
	if (home)
		h = util_path_canon(home);
	wide = root || (h && util_path_within(h, ws));
	free(h);
	if (!wide)
		return 0;
	err = ward_render_wide_workspace(&text, ws, root);
	if (err)
		return err;
	err = ward_err(WARD_EINVAL, "%s", text);
	free(text);
	return err;
}
