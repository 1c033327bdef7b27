/*
 * bench_rulefloor — the least kernel work one confined call needs to hide
 * N files of a directory, then exec a command (bench/calls.sh part 9).
 *
 *   bench_rulefloor none|complement|mounts|mounts-fd DIR N -- COMMAND [ARG...]
 *
 * Timed by bench_paired beside `ward run` with and without 1,000 `--`
 * rules on files of DIR, it is a floor: what any correct implementation
 * of those rules must pay on top of its call without rules, measured in
 * the same rounds. Every mode ends alike: a Landlock ruleset handling
 * every filesystem right the kernel knows, no_new_privs,
 * landlock_restrict_self, execvp(COMMAND). The hidden files are the first
 * N entries DIR lists (which ones does not change the cost: the
 * directory's files are alike).
 *
 * none: the ruleset grants read on / and read-write on /dev/null (the call
 *   without rules). N is ignored.
 * complement: Landlock cannot take back below a grant, so read is granted
 *   on every entry beside the hidden ones instead of on DIR, and on every
 *   entry beside the path to DIR in each directory above it, from /: one
 *   readdir pass per directory and, per granted entry,
 *   openat(dirfd, name, O_PATH) + landlock_add_rule + close. Symbolic
 *   links get no rule (a grant would follow them), as in ward's plan.
 * mounts: a private mount namespace (unshare(CLONE_NEWNS) as root, else a
 *   user namespace with identity maps, as the launcher makes it; then
 *   / made a recursive slave so nothing reaches the host), and one mount
 *   per hidden file, with the cheapest API: /dev/null bound over the
 *   first one and remounted read-only, nodev, nosuid, noexec (two
 *   mount(2)), then every other one a bind of that cover (one mount(2)
 *   each, relative to DIR, the cover's flags copied with it). N = 0: the
 *   namespace alone (what bwrap always pays).
 * mounts-fd: the same with the file-descriptor mount API: a detached
 *   cover made once, then per file open_tree(cover, OPEN_TREE_CLONE) +
 *   move_mount(to DIR's fd + name) + close.
 *
 * The namespace is torn down (every mount in it unmounted) when the
 * command exits, inside the time bench_paired measures, as for the real
 * call. Exit status: COMMAND's (it is exec'd); 2 for a usage error, 1
 * when a setup step fails (with a message), 127 when the exec does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The Landlock UAPI (linux/landlock.h; the installed one may be older). */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

#define LL_VERSION    (1U << 0)
#define LL_RULE_PATH  1
#define LL_EXECUTE    (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE  (1ULL << 2)
#define LL_READ_DIR   (1ULL << 3)
#define LL_ABI1	      ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define LL_REFER      (1ULL << 13)	 /* ABI 2 */
#define LL_TRUNCATE   (1ULL << 14)	 /* ABI 3 */
#define LL_IOCTL_DEV  (1ULL << 15)	 /* ABI 5 */
#define LL_FILE_RO    (LL_EXECUTE | LL_READ_FILE)
#define LL_DIR_RO     (LL_FILE_RO | LL_READ_DIR)
#define LL_DEVNULL    (LL_READ_FILE | LL_WRITE_FILE)

/* The mount UAPI (linux/mount.h). */
#define M_OPEN_TREE_CLONE    1
#define M_AT_EMPTY_PATH	     0x1000
#define M_MOVE_MOUNT_F_EMPTY 0x00000004
#define M_ATTR_HIDE	     0x0000000f /* RDONLY NOSUID NODEV NOEXEC */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct m_mount_attr {
	uint64_t attr_set;
	uint64_t attr_clr;
	uint64_t propagation;
	uint64_t userns_fd;
};

static uint64_t handled;
static int ruleset = -1;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "bench_rulefloor: %s%s%s: %s\n", what, path ? " " : "",
		path ? path : "", strerror(errno));
	exit(1);
}

static void ll_rule_fd(int fd, uint64_t access, const char *name)
{
	struct ll_path_beneath_attr pb = {access & handled, fd};

	if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH, &pb, 0))
		die("landlock_add_rule", name);
}

/* One rule on @name beneath @dirfd; the caller knows it exists. */
static void ll_rule_at(int dirfd, const char *name, uint64_t access)
{
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		die("openat", name);
	ll_rule_fd(fd, access, name);
	close(fd);
}

static void ll_create(void)
{
	struct ll_ruleset_attr attr = {0};
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_VERSION);

	if (abi < 1)
		die("landlock_create_ruleset (version)", NULL);
	handled = LL_ABI1 | (abi >= 2 ? LL_REFER : 0) |
		  (abi >= 3 ? LL_TRUNCATE : 0) | (abi >= 5 ? LL_IOCTL_DEV : 0);
	attr.handled_access_fs = handled;
	ruleset =
	    (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		die("landlock_create_ruleset", NULL);
	ll_rule_at(AT_FDCWD, "/dev/null", LL_DEVNULL);
}

static void ll_enforce(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("prctl(PR_SET_NO_NEW_PRIVS)", NULL);
	if (syscall(__NR_landlock_restrict_self, ruleset, 0))
		die("landlock_restrict_self", NULL);
	close(ruleset);
}

/* The type of @e (DT_DIR, DT_LNK, ...), asking the disk when the listing
 * does not say. */
static unsigned char type_of(int dirfd, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type;
	if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW))
		return DT_UNKNOWN;
	return S_ISDIR(st.st_mode)   ? DT_DIR
	       : S_ISLNK(st.st_mode) ? DT_LNK
				     : DT_REG;
}

static int is_dot(const char *s)
{
	return s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]));
}

/*
 * Grant read on every entry of the directory @fd but @keep (a name, in the
 * directories above DIR) or the first @skip entries (in DIR). Takes @fd.
 */
static void grant_beside(int fd, const char *keep, long skip)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;

	if (!d)
		die("fdopendir", keep);
	while ((e = readdir(d))) {
		unsigned char t;

		if (is_dot(e->d_name))
			continue;
		if (skip > 0) {
			skip--;
			continue;
		}
		if (keep && strcmp(e->d_name, keep) == 0)
			continue;
		t = type_of(fd, e);
		if (t == DT_LNK || t == DT_UNKNOWN)
			continue;
		ll_rule_at(fd, e->d_name, t == DT_DIR ? LL_DIR_RO : LL_FILE_RO);
	}
	closedir(d);
}

/* The complement of DIR's first @n entries, from /. */
static void complement(const char *dir, long n)
{
	char path[PATH_MAX];
	char *p, *next;
	int fd;

	if (!realpath(dir, path))
		die("realpath", dir);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die("open", "/");
	for (p = path + 1; *p; p = next) {
		int sub;

		next = strchr(p, '/');
		if (next)
			*next++ = '\0';
		else
			next = p + strlen(p);
		sub = openat(fd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			die("openat", p);
		grant_beside(fd, p, 0);
		fd = sub;
	}
	grant_beside(fd, NULL, n);
}

static int write_knob(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, s, strlen(s));
	close(fd);
	return w == (ssize_t)strlen(s) ? 0 : -1;
}

/* A private mount namespace, as src/util/hide.c makes it. */
static void private_ns(void)
{
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	char map[64];

	if (unshare(CLONE_NEWNS)) {
		if (errno != EPERM || unshare(CLONE_NEWUSER | CLONE_NEWNS))
			die("unshare", NULL);
		if (write_knob("/proc/self/setgroups", "deny") &&
		    errno != ENOENT)
			die("write", "/proc/self/setgroups");
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		if (write_knob("/proc/self/uid_map", map))
			die("write", "/proc/self/uid_map");
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		if (write_knob("/proc/self/gid_map", map))
			die("write", "/proc/self/gid_map");
	}
	if (mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL))
		die("mount --make-rslave", "/");
}

/* The first @n names DIR (@fd) lists, in a malloc'd vector. */
static char **first_names(int fd, long n, long *got)
{
	char **v = calloc((size_t)n + 1, sizeof(*v));
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;

	if (!v || !d)
		die("listing", NULL);
	*got = 0;
	while (*got < n && (e = readdir(d))) {
		if (!is_dot(e->d_name))
			v[(*got)++] = strdup(e->d_name);
	}
	closedir(d);
	return v;
}

static void mounts(const char *dir, long n, int fd_api)
{
	struct m_mount_attr attr = {M_ATTR_HIDE, 0, 0, 0};
	int dfd, cover, cwd;
	char **names;
	long got;

	private_ns();
	if (n == 0)
		return;
	/* The old API takes paths: relative to DIR, one lookup step. */
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0 || dfd < 0 || fchdir(dfd))
		die("open", dir);
	names = first_names(dfd, n, &got);
	if (!fd_api) {
		if (got && (mount("/dev/null", names[0], NULL, MS_BIND, NULL) ||
			    mount(NULL, names[0], NULL,
				  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
				      MS_NODEV | MS_NOEXEC,
				  NULL)))
			die("mount", names[0]);
		for (long i = 1; i < got; i++) {
			if (mount(names[0], names[i], NULL, MS_BIND, NULL))
				die("mount", names[i]);
		}
		if (fchdir(cwd))
			die("fchdir", NULL);
		return;
	}
	cover = (int)syscall(__NR_open_tree, AT_FDCWD, "/dev/null",
			     M_OPEN_TREE_CLONE | O_CLOEXEC);
	if (cover < 0 || syscall(__NR_mount_setattr, cover, "", M_AT_EMPTY_PATH,
				 &attr, sizeof(attr)))
		die("open_tree", "/dev/null");
	for (long i = 0; i < got; i++) {
		int m = (int)syscall(__NR_open_tree, cover, "",
				     M_OPEN_TREE_CLONE | O_CLOEXEC |
					 M_AT_EMPTY_PATH);

		if (m < 0)
			die("open_tree (clone of the cover)", names[i]);
		if (syscall(__NR_move_mount, m, "", dfd, names[i],
			    M_MOVE_MOUNT_F_EMPTY))
			die("move_mount", names[i]);
		close(m);
	}
}

int main(int argc, char **argv)
{
	const char *mode, *dir;
	char *end;
	long n;

	if (argc < 6 || strcmp(argv[4], "--") != 0)
		goto usage;
	mode = argv[1];
	dir = argv[2];
	n = strtol(argv[3], &end, 10);
	if (*end || n < 0)
		goto usage;
	if (strcmp(mode, "none") == 0) {
		ll_create();
		ll_rule_at(AT_FDCWD, "/", LL_DIR_RO);
	} else if (strcmp(mode, "complement") == 0) {
		ll_create();
		complement(dir, n);
	} else if (strcmp(mode, "mounts") == 0 ||
		   strcmp(mode, "mounts-fd") == 0) {
		mounts(dir, n, mode[6] == '-');
		ll_create();
		ll_rule_at(AT_FDCWD, "/", LL_DIR_RO);
	} else {
		goto usage;
	}
	ll_enforce();
	execvp(argv[5], argv + 5);
	perror("bench_rulefloor: exec");
	return 127;
usage:
	fprintf(stderr, "usage: bench_rulefloor none|complement|mounts|"
			"mounts-fd DIR N -- COMMAND [ARG...]\n");
	return 2;
}
