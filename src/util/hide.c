/*
 * ward — hiding paths by mounts (see hide.h).
 *
 * The mounts use the file-descriptor mount API (Linux 5.2; mount_setattr
 * 5.12 — older than Landlock's 5.13, so every kernel that runs the
 * launcher has it): a detached copy of the source is made (open_tree or
 * fsmount), its flags set while nobody can see it, then it is attached
 * onto the target's O_PATH descriptor (move_mount). Nothing is looked up
 * by path after the target was opened, and no remount of a path is needed
 * (a remount through /proc/self/fd/N would reach the mount *under* the new
 * one: the workspace itself).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hide.h"
#include "util.h"

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

/* The UAPI (linux/mount.h), under ward's names: glibc's sys/mount.h may
 * define some of them, older kernel headers none. */
#define H_OPEN_TREE_CLONE     1
#define H_AT_EMPTY_PATH	      0x1000
#define H_AT_RECURSIVE	      0x8000
#define H_MOVE_MOUNT_F_EMPTY  0x00000004
#define H_MOVE_MOUNT_T_EMPTY  0x00000040
#define H_MOUNT_ATTR_RDONLY   0x00000001
#define H_MOUNT_ATTR_NOSUID   0x00000002
#define H_MOUNT_ATTR_NODEV    0x00000004
#define H_MOUNT_ATTR_NOEXEC   0x00000008
#define H_FSOPEN_CLOEXEC      0x00000001
#define H_FSCONFIG_SET_STRING 1
#define H_FSCONFIG_CMD_CREATE 6
#define H_FSMOUNT_CLOEXEC     0x00000001

struct h_mount_attr {
	unsigned long long attr_set;
	unsigned long long attr_clr;
	unsigned long long propagation;
	unsigned long long userns_fd;
};

/* A hidden file or directory: no write, no device, no set-user-ID, no
 * exec. */
#define HIDE_ATTRS                                                             \
	(H_MOUNT_ATTR_RDONLY | H_MOUNT_ATTR_NOSUID | H_MOUNT_ATTR_NODEV |      \
	 H_MOUNT_ATTR_NOEXEC)

/* "WHAT: strerror" into @err; returns -@e. */
static int fail(char *err, size_t len, const char *what, const char *path,
		int e)
{
	if (err && len) {
		if (path)
			snprintf(err, len, "%s %s: %s", what, path,
				 strerror(e));
		else
			snprintf(err, len, "%s: %s", what, strerror(e));
	}
	return -e;
}

/* Write @s to the file @path (a /proc/self knob); 0 or -errno. */
static int write_knob(const char *path, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;
	int fd, e;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		w = write(fd, s, n);
	while (w < 0 && errno == EINTR);
	e = w == (ssize_t)n ? 0 : (w < 0 ? errno : EIO);
	close(fd);
	return -e;
}

/*
 * In the mount namespace just made (in a user namespace of its own when
 * @userns): the identity maps of @uid and @gid, then every mount made
 * from the host's copy a slave, so that nothing mounted here reaches the
 * host's mount table.
 */
static int ns_setup(bool userns, unsigned uid, unsigned gid, char *err,
		    size_t err_len)
{
	char map[64];
	int ret;

	if (userns) {
		/* Identity maps: files keep their owners, the command its
		 * uid. setgroups must be denied before an unprivileged
		 * gid_map can be written. */
		ret = write_knob("/proc/self/setgroups", "deny");
		if (ret && ret != -ENOENT)
			return fail(err, err_len, "/proc/self/setgroups", NULL,
				    -ret);
		snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
		ret = write_knob("/proc/self/uid_map", map);
		if (ret)
			return fail(err, err_len, "/proc/self/uid_map", NULL,
				    -ret);
		snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
		ret = write_knob("/proc/self/gid_map", map);
		if (ret)
			return fail(err, err_len, "/proc/self/gid_map", NULL,
				    -ret);
	}
	if (mount("none", "/", NULL, MS_REC | MS_SLAVE, NULL) != 0)
		return fail(err, err_len, "mount --make-rslave /", NULL, errno);
	return 0;
}

int ward_hide_unshare(char *err, size_t err_len)
{
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();

	/*
	 * Root with CAP_SYS_ADMIN: a mount namespace alone (the command
	 * keeps the host's uids; it has no capabilities left to unmount).
	 * Anyone else: a user namespace too, which grants the mount rights
	 * over the new mount namespace only. Mounts copied into a namespace
	 * of a less privileged user namespace are locked together: even a
	 * process that gains capabilities in a nested namespace cannot
	 * unmount one to uncover what it hides.
	 */
	if (unshare(CLONE_NEWNS) == 0)
		return ns_setup(false, 0, 0, err, err_len);
	if (errno != EPERM)
		return fail(err, err_len, "unshare(CLONE_NEWNS)", NULL, errno);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
		return fail(err, err_len,
			    "cannot make a user and mount namespace to hide "
			    "paths in (unshare)",
			    NULL, errno);
	return ns_setup(true, uid, gid, err, err_len);
}

/*
 * The first file cover made, detached, that the next ones are cloned from
 * (one open_tree each instead of an open_tree of /dev/null and a
 * mount_setattr); -1 before the first, -2 when the kernel cannot clone it.
 * Closed by ward_hide_end() (and O_CLOEXEC).
 */
static int file_cover = -1;

void ward_hide_end(void)
{
	if (file_cover >= 0)
		close(file_cover);
	file_cover = -1;
}

/*
 * A detached mount that hides: for a directory an empty tmpfs, for a file
 * a copy of the /dev/null mount, both read-only, nodev, nosuid, noexec;
 * for @kind RO a recursive copy of @fd's own mount, read-only; for PIN the
 * same copy as it is. Returns the
 * mount's descriptor or -errno.
 */
static int make_cover(int fd, bool is_dir, enum ward_hide_kind kind)
{
	struct h_mount_attr attr = {0};
	int m, fs, e;

	if (kind == WARD_HIDE_RO || kind == WARD_HIDE_PIN) {
		m = (int)syscall(__NR_open_tree, fd, "",
				 H_OPEN_TREE_CLONE | O_CLOEXEC |
				     H_AT_EMPTY_PATH | H_AT_RECURSIVE);
		if (m < 0)
			return -errno;
		if (kind == WARD_HIDE_PIN)
			return m;
		attr.attr_set = H_MOUNT_ATTR_RDONLY;
		if (syscall(__NR_mount_setattr, m, "",
			    H_AT_EMPTY_PATH | H_AT_RECURSIVE, &attr,
			    sizeof(attr)) != 0)
			goto out_close_mount;
		return m;
	}
	if (is_dir) {
		fs = (int)syscall(__NR_fsopen, "tmpfs", H_FSOPEN_CLOEXEC);
		if (fs < 0)
			return -errno;
		if (syscall(__NR_fsconfig, fs, H_FSCONFIG_SET_STRING, "mode",
			    "0555", 0) != 0 ||
		    syscall(__NR_fsconfig, fs, H_FSCONFIG_CMD_CREATE, NULL,
			    NULL, 0) != 0) {
			e = errno;
			close(fs);
			return -e;
		}
		m = (int)syscall(__NR_fsmount, fs, H_FSMOUNT_CLOEXEC,
				 HIDE_ATTRS);
		e = errno;
		close(fs);
		return m < 0 ? -e : m;
	}
	/* A copy of the first file cover, flags and all (Linux 6.15 clones
	 * a detached mount; before, EINVAL: a cover is made for each). */
	if (file_cover >= 0) {
		m = (int)syscall(__NR_open_tree, file_cover, "",
				 H_OPEN_TREE_CLONE | O_CLOEXEC |
				     H_AT_EMPTY_PATH);
		if (m >= 0 || errno != EINVAL)
			return m >= 0 ? m : -errno;
		close(file_cover);
		file_cover = -2;
	}
	m = (int)syscall(__NR_open_tree, AT_FDCWD, "/dev/null",
			 H_OPEN_TREE_CLONE | O_CLOEXEC);
	if (m < 0)
		return -errno;
	attr.attr_set = HIDE_ATTRS;
	if (syscall(__NR_mount_setattr, m, "", H_AT_EMPTY_PATH, &attr,
		    sizeof(attr)) != 0)
		goto out_close_mount;
	if (file_cover == -1) {
		/* Kept as the model of the next ones: this one is moved. */
		file_cover = (int)syscall(__NR_open_tree, m, "",
					  H_OPEN_TREE_CLONE | O_CLOEXEC |
					      H_AT_EMPTY_PATH);
		if (file_cover < 0)
			file_cover = -2;
	}
	return m;

out_close_mount:
	e = errno;
	close(m);
	return -e;
}

int ward_hide_apply(const char *path, enum ward_hide_kind kind, bool *skipped,
		    char *err, size_t err_len)
{
	struct stat st;
	int fd, m, ret = 0;

	*skipped = false;
	/* openat: musl's open() follows an O_CLOEXEC open with a
	 * fcntl(F_SETFD) for kernels older than 2.6.23, a system call per
	 * hidden path. */
	fd = openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		/* Gone since the plan, or out of reach for these
		 * credentials (then for the command too): nothing to hide. */
		if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) {
			*skipped = true;
			return 0;
		}
		return fail(err, err_len, "cannot open", path, errno);
	}
	if (fstat(fd, &st) != 0) {
		ret = fail(err, err_len, "cannot stat", path, errno);
		goto out_close;
	}
	if (S_ISLNK(st.st_mode)) {
		/* A mount would follow the link and hide its target. */
		*skipped = true;
		goto out_close;
	}
	m = make_cover(fd, S_ISDIR(st.st_mode), kind);
	if (m < 0) {
		ret = fail(err, err_len,
			   kind == WARD_HIDE_RO	   ? "cannot make a read-only copy of"
			   : kind == WARD_HIDE_PIN ? "cannot make a copy to pin"
						   : "cannot make a cover for",
			   path, -m);
		goto out_close;
	}
	if (syscall(__NR_move_mount, m, "", fd, "",
		    H_MOVE_MOUNT_F_EMPTY | H_MOVE_MOUNT_T_EMPTY) != 0)
		ret = fail(err, err_len, "cannot mount over", path, errno);
	close(m);
out_close:
	close(fd);
	return ret;
}

/* What the probe child is given, and what it says. */
struct probe {
	bool userns;
	unsigned uid, gid;
	volatile bool ok;
};

/*
 * The probe child, in the namespaces its clone made: both kinds of cover,
 * on paths every system has (in this throwaway namespace only).
 */
static int probe_child(void *arg)
{
	struct probe *p = arg;
	bool skipped;

	if (ns_setup(p->userns, p->uid, p->gid, NULL, 0) != 0)
		return 0;
	if (ward_hide_apply("/dev/null", WARD_HIDE_NONE, &skipped, NULL, 0) ||
	    skipped)
		goto out;
	if (ward_hide_apply("/dev", WARD_HIDE_NONE, &skipped, NULL, 0) ||
	    skipped)
		goto out;
	p->ok = true;
out:
	ward_hide_end();
	return 0;
}

/*
 * One probe: a child that shares this process's memory, the caller waiting
 * (clone(CLONE_VM | CLONE_VFORK), like the executor's spawn). A fork
 * would write-protect every page of the caller's heap, and each page
 * written after it would then fault once (freeing 1,000 access rules at
 * the end of a call: 2 ms on these machines). A child that shares its
 * memory cannot unshare a user namespace (the kernel refuses it), so the
 * clone makes the namespaces: the mount namespace alone, and where that
 * is refused (EPERM: no CAP_SYS_ADMIN) the user namespace with it. Every
 * signal is blocked around it: the child runs on the caller's memory and
 * must never run a handler of it.
 */
static bool probe(void)
{
	char stack[16 * 1024] __attribute__((aligned(16)));
	struct probe p = {false, (unsigned)geteuid(), (unsigned)getegid(),
			  false};
	sigset_t all, old;
	pid_t pid;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = clone(probe_child, stack + sizeof(stack),
		    CLONE_VM | CLONE_VFORK | CLONE_NEWNS | SIGCHLD, &p);
	if (pid < 0 && errno == EPERM) {
		p.userns = true;
		pid = clone(probe_child, stack + sizeof(stack),
			    CLONE_VM | CLONE_VFORK | CLONE_NEWUSER |
				CLONE_NEWNS | SIGCHLD,
			    &p);
	}
	util_unpoison_stack(stack, sizeof(stack));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* The answer is in memory: reaping can fail (a caller that
	 * ignores SIGCHLD, or reaps every child itself) and not matter. */
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	return pid > 0 && p.ok;
}

bool ward_hide_possible(void)
{
	/* 0: not asked yet, 1: yes, 2: no. One probe at a time: the
	 * probe's cover lives in this process's memory (file_cover). */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int state;
	int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);

	if (s)
		return s == 1;
	pthread_mutex_lock(&lock);
	s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
	if (!s) {
		s = probe() ? 1 : 2;
		__atomic_store_n(&state, s, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return s == 1;
}
