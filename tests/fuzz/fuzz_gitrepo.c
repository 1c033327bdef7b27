/*
 * fuzz_gitrepo — libFuzzer target for what the guard reads of a repository
 * (src/libward/policy/protect.c with gitconfig.c): the .git directory or a .git
 * file's "gitdir:" line, commondir, config and config.worktree, the files they
 * include (include.path, includeIf), core.hooksPath, linked worktrees and
 * submodules — everything a cloned repository can hold. fuzz_gitconfig covers
 * the text scan alone; this one covers the walk that follows it, over a real
 * tree.
 *
 * Input: records NAME NUL CONTENT NUL …, at most 12. NAME is a path in
 * the workspace (bytes outside [A-Za-z0-9._-/] become '_', ".." becomes
 * "__", a leading '/' is dropped); a NAME ending in '@' makes a symbolic
 * link to CONTENT instead of a file. The first byte chooses whether .git
 * starts out as a directory with a config ("[core]") or nothing.
 *
 * Oracle, besides ASan/UBSan finding nothing: the list of protected paths
 * of a workspace-write policy on that tree is made (or ENOMEM); the same
 * twice; every path is absolute and normal (no "//", "/./", "/../", no
 * trailing '/'); the workspace's .ward is always in it, and when .git is
 * a directory of the workspace its hooks and config are too.
 *
 * Build: make build/fuzz/fuzz_gitrepo; run: see tests/fuzz/run.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libward/policy/protect.h"
#include "ward/ward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 12
#define MAX_CONTENT 4096

static char base[64], ws[PATH_MAX];
/* libFuzzer's working directory: its corpus paths may be relative. */
static int home_cwd = -1;

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}

static void cleanup(void)
{
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
	char home[PATH_MAX];

	snprintf(base, sizeof(base), "%s/fuzz_gitrepo.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	home_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (home_cwd < 0 || !mkdtemp(base))
		abort();
	atexit(cleanup);
	/* Canonical: the protected paths are. */
	{
		char real[PATH_MAX];

		if (!realpath(base, real) || strlen(real) >= sizeof(base))
			abort();
		strcpy(base, real);
	}
	snprintf(ws, sizeof(ws), "%s/ws", base);
	snprintf(home, sizeof(home), "%s/home", base);
	if (mkdir(home, 0700) != 0)
		abort();
	/* ward's own directories: the scratch home's, not the caller's. */
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("XDG_STATE_HOME");
	unsetenv("XDG_RUNTIME_DIR");
}

/* mkdir -p of the directories above @path (relative to the cwd). */
static void make_parents(char *path)
{
	for (char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		(void)mkdir(path, 0755);
		*s = '/';
	}
}

/* The workspace-relative path of a record's name, made tame. */
static bool tame(char *out, size_t cap, const uint8_t *name, size_t len)
{
	size_t n = 0;

	while (len && *name == '/')
		name++, len--;
	for (size_t i = 0; i < len && n + 1 < cap; i++) {
		char c = (char)name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-' || c == '/'))
			c = '_';
		out[n++] = c;
	}
	out[n] = '\0';
	for (char *p = strstr(out, ".."); p; p = strstr(p, ".."))
		p[0] = p[1] = '_';
	return n > 0 && out[n - 1] != '/';
}

static void build_tree(const uint8_t *data, size_t size)
{
	size_t i = 1;

	if (mkdir(ws, 0755) != 0 || chdir(ws) != 0)
		abort();
	if (data[0] & 1) {
		int fd;

		(void)mkdir(".git", 0755);
		fd = open(".git/config", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "[core]\n", 7) != 7)
			abort();
		close(fd);
	}
	for (int r = 0; r < MAX_RECORDS && i < size; r++) {
		const uint8_t *name = data + i, *content, *end;
		size_t nlen, clen;
		char rel[256];
		bool link;
		int fd;

		end = memchr(name, '\0', size - i);
		nlen = end ? (size_t)(end - name) : size - i;
		i += nlen + 1;
		content = data + (i < size ? i : size);
		end = i < size ? memchr(content, '\0', size - i) : NULL;
		clen =
		    i < size ? (end ? (size_t)(end - content) : size - i) : 0;
		i += clen + 1;
		if (clen > MAX_CONTENT)
			clen = MAX_CONTENT;
		link = nlen && name[nlen - 1] == '@';
		if (!tame(rel, sizeof(rel), name, link ? nlen - 1 : nlen))
			continue;
		make_parents(rel);
		if (link) {
			char target[MAX_CONTENT + 1];

			memcpy(target, content, clen);
			target[clen] = '\0';
			(void)symlink(target, rel);
			continue;
		}
		fd = open(rel, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
		if (fd < 0)
			continue; /* a directory already, or a link */
		if (clen && write(fd, content, clen) != (ssize_t)clen)
			abort();
		close(fd);
	}
	if (fchdir(home_cwd) != 0)
		abort();
}

static bool normal(const char *p)
{
	size_t n = strlen(p);

	return p[0] == '/' && !strstr(p, "//") && !strstr(p, "/./") &&
	       !strstr(p, "/../") && (n == 1 || p[n - 1] != '/') &&
	       !(n >= 2 && strcmp(p + n - 2, "/.") == 0) &&
	       !(n >= 3 && strcmp(p + n - 3, "/..") == 0);
}

static bool listed(const struct ward_protected *v, size_t n, const char *p)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].path, p) == 0)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_protected *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	ward_policy *pol = NULL;
	char want[PATH_MAX + 16];
	struct stat st;
	int err;

	if (!base[0])
		setup();
	if (size < 1 || size > 64 * 1024)
		return 0;
	nftw(ws, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	build_tree(data, size);
	if (ward_policy_new(&pol, WARD_MODE_WORKSPACE_WRITE, ws) != 0)
		abort();
	err = ward_protect_list(&a, &na, pol);
	if (err == -ENOMEM)
		goto out;
	if (err || ward_protect_list(&b, &nb, pol) != 0)
		abort();
	if (na != nb)
		abort();
	for (size_t i = 0; i < na; i++) {
		if (!normal(a[i].path) || strcmp(a[i].path, b[i].path) != 0 ||
		    a[i].kind != b[i].kind || a[i].access != b[i].access) {
			fprintf(stderr, "fuzz_gitrepo: %s / %s\n", a[i].path,
				b[i].path);
			abort();
		}
	}
	snprintf(want, sizeof(want), "%s/.ward", ws);
	if (!listed(a, na, want))
		abort();
	if (lstat(strcat(strcpy(want, ws), "/.git"), &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		snprintf(want, sizeof(want), "%s/.git/hooks", ws);
		if (!listed(a, na, want))
			abort();
		snprintf(want, sizeof(want), "%s/.git/config", ws);
		if (!listed(a, na, want))
			abort();
	}
out:
	free(a);
	free(b);
	ward_policy_free(pol);
	return 0;
}
