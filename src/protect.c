/*
 * ward — protected paths: what stays read-only inside the writable roots
 * whatever the rules say (see protect.h).
 *
 * The list is derived on every call from the policy and the environment
 * ($HOME, $XDG_CONFIG_HOME, $XDG_STATE_HOME) and, for git, from the
 * workspace's `.git`. Nothing is cached: a policy is immutable, but the
 * workspace is not, and a stale gitdir would protect the wrong place.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Append @path (consumed; NULL means out of memory) unless present. */
static void plist_add(struct plist *pl, char *path, enum ward_protect_kind kind,
		      const char *what)
{
	if (!path) {
		pl->oom = true;
		return;
	}
	for (size_t i = 0; i < pl->n; i++) {
		if (strcmp(pl->v[i].path, path) == 0) {
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
	pl->v[pl->n++] = (struct ward_protected){path, kind, what};
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

/*
 * The git persistence traps of the workspace @ws: for a `.git` directory
 * its hooks and config; for a `.git` file (worktree, submodule) the file
 * itself, then the hooks and config of the common git directory it leads
 * to, and a worktree's own config.worktree.
 */
static void add_git(struct plist *pl, const char *ws)
{
	char dotgit[PATH_MAX], line[GIT_FILE_MAX], *gitdir = NULL;
	char *common = NULL, *p;
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
		gitdir = strdup(dotgit);
	} else if (S_ISREG(st.st_mode)) {
		/* Whoever rewrites it chooses the hooks git runs. */
		plist_add(pl, strdup(dotgit), WARD_PROTECT_GIT,
			  "the .git file (it names the git directory)");
		if (!read_line(line, sizeof(line), dotgit) ||
		    strncmp(line, "gitdir:", 7) != 0)
			return;
		p = line + 7;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return;
		gitdir = resolve_against(ws, p);
	} else {
		return; /* a symlinked .git is followed by nothing here */
	}
	if (!gitdir) {
		pl->oom = true;
		return;
	}
	if (snprintf(dotgit, sizeof(dotgit), "%s/commondir", gitdir) <
		(int)sizeof(dotgit) &&
	    read_line(line, sizeof(line), dotgit) && line[0]) {
		common = resolve_against(gitdir, line);
		if (!common) {
			pl->oom = true;
			goto out_free;
		}
	}
	if (common && strcmp(common, gitdir) != 0) {
		p = NULL;
		if (asprintf(&p, "%s/config.worktree", gitdir) < 0)
			p = NULL;
		plist_add(pl, p, WARD_PROTECT_GIT, "git worktree config");
	}
	p = NULL;
	if (asprintf(&p, "%s/hooks", common ? common : gitdir) < 0)
		p = NULL;
	plist_add(pl, p, WARD_PROTECT_GIT, "git hooks");
	p = NULL;
	if (asprintf(&p, "%s/config", common ? common : gitdir) < 0)
		p = NULL;
	plist_add(pl, p, WARD_PROTECT_GIT, "git config");
out_free:
	free(common);
	free(gitdir);
}

int ward_protect_list(struct ward_protected **out, size_t *out_len,
		      const ward_policy *policy)
{
	const char *ws = ward_policy_workspace(policy);
	struct plist pl = {0};
	char *p;

	p = xdg_ward_dir("XDG_CONFIG_HOME", ".config");
	if (p)
		plist_add(&pl, p, WARD_PROTECT_HOME,
			  "ward's configuration directory");
	p = xdg_ward_dir("XDG_STATE_HOME", ".local/state");
	if (p)
		plist_add(&pl, p, WARD_PROTECT_HOME, "ward's session store");
	p = NULL;
	if (asprintf(&p, "%s/.ward", strcmp(ws, "/") ? ws : "") < 0)
		p = NULL;
	plist_add(&pl, p, WARD_PROTECT_PROJECT, "the project's ward directory");
	if (ward_policy_mode(policy) == WARD_MODE_WORKSPACE_WRITE &&
	    ward_policy_protect_git(policy))
		add_git(&pl, ws);
	if (pl.oom) {
		ward_protect_free(pl.v, pl.n);
		return ward_err(-ENOMEM, "protected paths: out of memory");
	}
	*out = pl.v;
	*out_len = pl.n;
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
	struct ward_protected *v = NULL;
	enum ward_access a = WARD_ACCESS_DEFAULT;
	size_t n = 0;

	if (ward_protect_list(&v, &n, policy) != 0)
		return WARD_ACCESS_RO;
	for (size_t i = 0; i < n; i++) {
		if (ward_path_within(path, v[i].path)) {
			a = WARD_ACCESS_RO;
			break;
		}
	}
	ward_protect_free(v, n);
	return a;
}

bool ward_protect_inside(const ward_policy *policy, const char *dir)
{
	struct ward_protected *v = NULL;
	bool inside = false;
	size_t n = 0;

	if (ward_protect_list(&v, &n, policy) != 0)
		return true;
	for (size_t i = 0; i < n; i++) {
		if (ward_path_within(v[i].path, dir) &&
		    strcmp(v[i].path, dir) != 0) {
			inside = true;
			break;
		}
	}
	ward_protect_free(v, n);
	return inside;
}
