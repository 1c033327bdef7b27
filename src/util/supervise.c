/*
 * ward — the seccomp supervisor (see supervise.h for the shape, and
 * docs/RUNNERS.md, "What Landlock cannot govern: the supervisor").
 *
 * libc only, like landlock.c: compiled into libward and the static musl
 * launcher. Everything after ward_sv_spawn() is async-signal-safe: raw
 * syscalls, fixed buffers or mmap(), no malloc and no stdio, because the
 * executor runs it in the child of a possibly multi-threaded process.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "landlock.h"
#include "supervise.h"
#include "util.h"

/* --- kernel UAPI (seccomp.h, openat2.h, stat.h), defined here -------------- */

#ifndef __NR_seccomp
#if defined(__x86_64__)
#define __NR_seccomp 317
#elif defined(__aarch64__)
#define __NR_seccomp 277
#endif
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_statx
#if defined(__x86_64__)
#define __NR_statx 332
#elif defined(__aarch64__)
#define __NR_statx 291
#endif
#endif

#define SV_SECCOMP_SET_MODE_FILTER	    1U
#define SV_SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#define SV_RET_ALLOW			    0x7fff0000U
#define SV_RET_ERRNO			    0x00050000U
#define SV_RET_USER_NOTIF		    0x7fc00000U
#define SV_NOTIF_FLAG_CONTINUE		    (1U << 0)
#define SV_IOCTL_NOTIF_RECV		    0xc0502100UL
#define SV_IOCTL_NOTIF_SEND		    0xc0182101UL
#define SV_IOCTL_NOTIF_ID_VALID		    0x40082102UL
#define SV_IOCTL_NOTIF_SET_FLAGS	    0x40082104UL
#define SV_USER_NOTIF_FD_SYNC_WAKE_UP	    1ULL

#define SV_RESOLVE_NO_MAGICLINKS 0x02ULL
#define SV_STATX_BTIME		 0x0800U
#define SV_AT_EMPTY_PATH	 0x1000
#define SV_AT_SYMLINK_NOFOLLOW	 0x100
#define SV_AT_FDCWD		 (-100)

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

struct sv_data {
	int nr;
	uint32_t arch;
	uint64_t ip;
	uint64_t args[6];
};

struct sv_notif {
	uint64_t id;
	uint32_t pid;
	uint32_t flags;
	struct sv_data data;
};

struct sv_resp {
	uint64_t id;
	int64_t val;
	int32_t error;
	uint32_t flags;
};

struct sv_open_how {
	uint64_t flags;
	uint64_t mode;
	uint64_t resolve;
};

struct sv_ts {
	int64_t sec;
	uint32_t nsec;
	int32_t reserved;
};

/* struct statx: only the fields we read, at their UAPI offsets. */
struct sv_statx {
	uint32_t mask;
	uint32_t blksize;
	uint64_t attributes;
	uint32_t nlink;
	uint32_t uid;
	uint32_t gid;
	uint16_t mode;
	uint16_t spare0;
	uint64_t ino;
	uint64_t size;
	uint64_t blocks;
	uint64_t attributes_mask;
	struct sv_ts atime, btime, ctime, mtime;
	uint8_t rest[256 - 0x80];
};

struct sv_filter {
	uint16_t code;
	uint8_t jt;
	uint8_t jf;
	uint32_t k;
};

struct sv_fprog {
	unsigned short len;
	struct sv_filter *filter;
};

#define SV_LD		     0x20 /* BPF_LD | BPF_W | BPF_ABS */
#define SV_JEQ		     0x15 /* BPF_JMP | BPF_JEQ | BPF_K */
#define SV_JGE		     0x35 /* BPF_JMP | BPF_JGE | BPF_K */
#define SV_RET		     0x06 /* BPF_RET | BPF_K */
#define SV_STMT(c, kk)	     ((struct sv_filter){(c), 0, 0, (kk)})
#define SV_JUMP(c, kk, t, f) ((struct sv_filter){(c), (t), (f), (kk)})

#define SV_OFF_NR     0U
#define SV_OFF_ARCH   4U
#define SV_OFF_ARG(i) (16U + 8U * (i))

#if defined(__x86_64__)
#define SV_AUDIT_ARCH 0xc000003eU
#define SV_X32_BIT    0x40000000U
#elif defined(__aarch64__)
#define SV_AUDIT_ARCH 0xc00000b7U
#endif

/* --- the calls the supervisor judges ---------------------------------------- */

enum sv_kind {
	SV_PATH,     /* args[path]: a path, the last link followed */
	SV_LPATH,    /* args[path]: a path, the last link not followed */
	SV_FD,	     /* args[0]: a descriptor */
	SV_AT,	     /* args[0] dirfd, args[1] path (NULL: the fd), flags */
	SV_IOCTL,    /* args[0] fd; args[1] one of sv_ioctls (the filter) */
	SV_CONNECT,  /* args[1] sockaddr, args[2] length */
	SV_SENDTO,   /* args[4] sockaddr, args[5] length */
	SV_SENDMSG,  /* args[1] struct msghdr */
	SV_SENDMMSG, /* args[1] struct mmsghdr[args[2]] */
	SV_REFUSE,   /* io_uring: refused by the filter itself (ENOSYS) */
};

/*
 * What the supervisor does itself for a path-named call it allows, so that
 * the object it checked is the one changed (no race with a rename or a
 * re-pointed symlink; see docs/RUNNERS.md). Other calls continue in the
 * kernel.
 */
enum sv_op {
	SV_OP_NONE,
	SV_OP_CHMOD,	 /* args[val]: mode */
	SV_OP_CHOWN,	 /* args[val], args[val + 1]: uid, gid */
	SV_OP_UTIME,	 /* args[val]: struct utimbuf * (NULL: now) */
	SV_OP_UTIMES,	 /* args[val]: struct timeval[2] (NULL: now) */
	SV_OP_UTIMENSAT, /* args[val]: struct timespec[2] (NULL: now) */
};

struct sv_call {
	int nr;
	uint8_t kind;
	int8_t flags_arg; /* SV_AT: index of the AT_* flags, -1 none */
	uint8_t op;	  /* enum sv_op */
	uint8_t val;	  /* index of op's first value argument */
};

#ifdef SV_AUDIT_ARCH
/* Sorted by number (the filter's fast path tests the smallest first). */
static const struct sv_call sv_calls[] = {
#if defined(__x86_64__)
    {16, SV_IOCTL, -1, SV_OP_NONE, 0},	   {42, SV_CONNECT, -1, SV_OP_NONE, 0},
    {44, SV_SENDTO, -1, SV_OP_NONE, 0},	   {46, SV_SENDMSG, -1, SV_OP_NONE, 0},
    {90, SV_PATH, -1, SV_OP_CHMOD, 1},	 /* chmod */
    {91, SV_FD, -1, SV_OP_NONE, 0},	 /* fchmod */
    {92, SV_PATH, -1, SV_OP_CHOWN, 1},	 /* chown */
    {93, SV_FD, -1, SV_OP_NONE, 0},	 /* fchown */
    {94, SV_LPATH, -1, SV_OP_CHOWN, 1},	 /* lchown */
    {132, SV_PATH, -1, SV_OP_UTIME, 1},	 /* utime */
    {188, SV_PATH, -1, SV_OP_NONE, 0},	 /* setxattr (ACLs too) */
    {189, SV_LPATH, -1, SV_OP_NONE, 0},	 /* lsetxattr */
    {190, SV_FD, -1, SV_OP_NONE, 0},	 /* fsetxattr */
    {197, SV_PATH, -1, SV_OP_NONE, 0},	 /* removexattr */
    {198, SV_LPATH, -1, SV_OP_NONE, 0},	 /* lremovexattr */
    {199, SV_FD, -1, SV_OP_NONE, 0},	 /* fremovexattr */
    {235, SV_PATH, -1, SV_OP_UTIMES, 1}, /* utimes */
    {260, SV_AT, 4, SV_OP_CHOWN, 2},	 /* fchownat */
    {261, SV_AT, -1, SV_OP_UTIMES, 2},	 /* futimesat */
    {268, SV_AT, -1, SV_OP_CHMOD, 2},	 /* fchmodat */
    {280, SV_AT, 3, SV_OP_UTIMENSAT, 2}, /* utimensat */
    {307, SV_SENDMMSG, -1, SV_OP_NONE, 0},
#else
    {5, SV_PATH, -1, SV_OP_NONE, 0},   /* setxattr */
    {6, SV_LPATH, -1, SV_OP_NONE, 0},  /* lsetxattr */
    {7, SV_FD, -1, SV_OP_NONE, 0},     /* fsetxattr */
    {14, SV_PATH, -1, SV_OP_NONE, 0},  /* removexattr */
    {15, SV_LPATH, -1, SV_OP_NONE, 0}, /* lremovexattr */
    {16, SV_FD, -1, SV_OP_NONE, 0},    /* fremovexattr */
    {29, SV_IOCTL, -1, SV_OP_NONE, 0},
    {52, SV_FD, -1, SV_OP_NONE, 0},	/* fchmod */
    {53, SV_AT, -1, SV_OP_CHMOD, 2},	/* fchmodat */
    {54, SV_AT, 4, SV_OP_CHOWN, 2},	/* fchownat */
    {55, SV_FD, -1, SV_OP_NONE, 0},	/* fchown */
    {88, SV_AT, 3, SV_OP_UTIMENSAT, 2}, /* utimensat */
    {203, SV_CONNECT, -1, SV_OP_NONE, 0},
    {206, SV_SENDTO, -1, SV_OP_NONE, 0},
    {211, SV_SENDMSG, -1, SV_OP_NONE, 0},
    {269, SV_SENDMMSG, -1, SV_OP_NONE, 0},
#endif
    {425, SV_REFUSE, -1, SV_OP_NONE, 0}, /* io_uring_setup: its ops bypass seccomp */
    {426, SV_REFUSE, -1, SV_OP_NONE, 0}, /* io_uring_enter */
    {427, SV_REFUSE, -1, SV_OP_NONE, 0}, /* io_uring_register */
    {452, SV_AT, 3, SV_OP_CHMOD, 2},	 /* fchmodat2 */
    {463, SV_AT, 2, SV_OP_NONE, 0},	 /* setxattrat */
    {466, SV_AT, 2, SV_OP_NONE, 0},	 /* removexattrat */
    {469, SV_AT, 4, SV_OP_NONE, 0},	 /* file_setattr (6.17) */
};

/*
 * The ioctls that change inode metadata Landlock does not govern: the
 * inode flags (chattr: immutable, append-only), the fsxattr (project id,
 * xfs flags) and the generation number; 32-bit encodings too.
 */
static const uint32_t sv_ioctls[] = {
    0x40086602U, /* FS_IOC_SETFLAGS */
    0x40046602U, /* FS_IOC32_SETFLAGS */
    0x401c5820U, /* FS_IOC_FSSETXATTR */
    0x40087602U, /* FS_IOC_SETVERSION */
    0x40047602U, /* FS_IOC32_SETVERSION */
};

#define SV_N(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* --- pure helpers (unit-tested) -------------------------------------------- */

bool ward_sv_beneath(const char *path, const char *dir)
{
	size_t n;

	if (!path || !dir || path[0] != '/' || dir[0] != '/')
		return false;
	if (strcmp(dir, "/") == 0)
		return path[1] != '\0';
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && path[n] == '/' &&
	       path[n + 1] != '\0';
}

int ward_sv_sockaddr_path(const void *addr, size_t addrlen, char *out,
			  size_t len)
{
	const unsigned char *a = addr;
	size_t n = 0, max;
	unsigned short family;

	if (!addr || addrlen < sizeof(family))
		return 0;
	memcpy(&family, a, sizeof(family));
	if (family != AF_UNIX || addrlen == sizeof(family))
		return 0; /* not unix, or unnamed (autobind) */
	if (a[2] == '\0')
		return 0; /* abstract: Landlock's scope governs those */
	/* The kernel takes sun_path up to the first NUL or the length. */
	max = addrlen - sizeof(family);
	if (max > 108)
		max = 108;
	while (n < max && a[2 + n] != '\0')
		n++;
	if (n + 1 > len)
		return -EINVAL;
	memcpy(out, a + 2, n);
	out[n] = '\0';
	return 1;
}

/* --- the supervisor process ------------------------------------------------ */

#define SV_GRANT_MAX 8192
#define SV_POOL	     (512 * 1024)

/* One writable grant or --allow-unix entry, canonical. */
struct sv_grant {
	uint32_t off; /* into the pool */
	uint8_t type; /* 'd' directory, 'f' regular file, 's' other */
	dev_t dev;
	ino_t ino;
};

/* The supervisor's state: one mmap()ed block (no malloc after fork). */
struct sv_state {
	struct sv_grant rw[SV_GRANT_MAX];
	size_t nrw;
	struct sv_grant ok[256];
	size_t nok;
	size_t pool_used;
	int64_t start_sec; /* sockets born at or after this are the call's */
	uint32_t start_nsec;
	dev_t root_dev;
	ino_t root_ino;
	int lfd; /* the listener */
	char pool[SV_POOL];
	char path[4096];	      /* scratch: a path read from the target */
	char canon[4096];	      /* scratch: an object's canonical path */
	unsigned char mem[64 * 1024]; /* scratch: msghdr arrays, sockaddrs */
};

/* Read the link @fmt names (a /proc path) into @buf; 0 or -errno. */
static int sv_readlink(const char *link, char *buf, size_t len)
{
	ssize_t n = readlink(link, buf, len - 1);

	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* "/proc/<pid>/<what>[/<fd>]" into @buf, without snprintf. */
static void sv_proc_path(char *buf, size_t len, uint32_t pid, const char *what,
			 long fd)
{
	char num[24];
	size_t pos = 0, i;
	unsigned long v;

	buf[0] = '\0';
#define SV_ADD(s)                                                              \
	do {                                                                   \
		const char *s_ = (s);                                          \
		while (*s_ && pos + 1 < len)                                   \
			buf[pos++] = *s_++;                                    \
		buf[pos] = '\0';                                               \
	} while (0)
#define SV_ADDNUM(x)                                                           \
	do {                                                                   \
		v = (x);                                                       \
		i = sizeof(num) - 1;                                           \
		num[i] = '\0';                                                 \
		do {                                                           \
			num[--i] = (char)('0' + v % 10);                       \
			v /= 10;                                               \
		} while (v && i);                                              \
		SV_ADD(num + i);                                               \
	} while (0)
	SV_ADD("/proc/");
	SV_ADDNUM(pid);
	SV_ADD("/");
	SV_ADD(what);
	if (fd >= 0) {
		SV_ADD("/");
		SV_ADDNUM((unsigned long)fd);
	}
#undef SV_ADDNUM
#undef SV_ADD
}

/* The canonical path of @fd as this process sees it, into @buf. */
static int sv_fd_path(int fd, char *buf, size_t len)
{
	char link[64];

	sv_proc_path(link, sizeof(link), (uint32_t)getpid(), "fd", fd);
	return sv_readlink(link, buf, len);
}

/* Add @path, canonical, to @g (from the pool). Missing: kept lexically. */
static void sv_add_grant(struct sv_state *s, struct sv_grant *g,
			 const char *path)
{
	struct stat st;
	const char *p = path;
	size_t n;
	int fd;

	bool optional = path[0] == WARD_LL_OPTIONAL;

	memset(g, 0, sizeof(*g));
	g->type = 's';
	if (optional) /* "?PATH" (landlock.h): granted only if it exists */
		p = ++path;
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 && optional) {
		g->type = 'x'; /* gone since the plan: grants nothing */
		return;
	}
	if (fd >= 0 && fstat(fd, &st) == 0) {
		g->type = S_ISDIR(st.st_mode)	? 'd'
			  : S_ISREG(st.st_mode) ? 'f'
						: 's';
		g->dev = st.st_dev;
		g->ino = st.st_ino;
		if (sv_fd_path(fd, s->canon, sizeof(s->canon)) == 0)
			p = s->canon;
	} else {
		g->type = 'm'; /* missing: matched by its path only */
	}
	if (fd >= 0)
		close(fd);
	n = strlen(p) + 1;
	if (s->pool_used + n > sizeof(s->pool)) {
		g->type = 'x'; /* no room: never matches (fail closed) */
		return;
	}
	memcpy(s->pool + s->pool_used, p, n);
	g->off = (uint32_t)s->pool_used;
	s->pool_used += n;
}

/* Read @len bytes of the target's memory at @addr; bytes read or -errno. */
static ssize_t sv_peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	n = syscall(SYS_process_vm_readv, (pid_t)pid, &local, 1UL, &remote, 1UL,
		    0UL);
	if (n < 0)
		return -errno;
	return n;
}

/*
 * Read a NUL-terminated string (a path) at @addr into s->path. Reads page
 * by page so a string near the end of a mapping is still found.
 */
static int sv_peek_path(struct sv_state *s, uint32_t pid, uint64_t addr)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < sizeof(s->path)) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		ssize_t n;

		if (chunk > sizeof(s->path) - got)
			chunk = sizeof(s->path) - got;
		n = sv_peek(pid, addr + got, s->path + got, chunk);
		if (n <= 0)
			return n < 0 ? (int)n : -EFAULT;
		if (memchr(s->path + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return -ENAMETOOLONG;
}

/*
 * Open (O_PATH) what the target's @path names, resolved as the target
 * would: relative to its cwd or to its descriptor @dirfd, with the same
 * root (a target with another root — a chroot in a user namespace — is
 * refused). Magic links (/proc/self/..., /dev/fd/...) are refused: here
 * they would name the supervisor's own objects. Returns the fd or -errno.
 */
static int sv_open_at(struct sv_state *s, uint32_t pid, int dirfd,
		      const char *path, bool follow)
{
	struct sv_open_how how;
	struct stat st;
	char link[64];
	int base = SV_AT_FDCWD, fd;

	sv_proc_path(link, sizeof(link), pid, "root", -1);
	if (stat(link, &st) != 0)
		return -errno;
	if (st.st_dev != s->root_dev || st.st_ino != s->root_ino)
		return -EACCES;
	if (path[0] != '/') {
		if (dirfd == SV_AT_FDCWD)
			sv_proc_path(link, sizeof(link), pid, "cwd", -1);
		else if (dirfd >= 0)
			sv_proc_path(link, sizeof(link), pid, "fd", dirfd);
		else
			return -EBADF;
		base = open(link, O_PATH | O_CLOEXEC);
		if (base < 0)
			return errno == ENOENT ? -EBADF : -errno;
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
	how.resolve = SV_RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(__NR_openat2, base, path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	if (base >= 0)
		close(base);
	return fd;
}

/* Open the target's descriptor @tfd itself (O_PATH); fd or -errno. */
static int sv_open_fd(uint32_t pid, long tfd)
{
	char link[64];
	int fd;

	if (tfd < 0)
		return -EBADF;
	sv_proc_path(link, sizeof(link), pid, "fd", tfd);
	fd = open(link, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EBADF : -errno;
	return fd;
}

/*
 * The canonical path of @obj into s->canon, checked: the path must still
 * name @obj (not deleted, not in another mount namespace). 0 or -EACCES.
 */
static int sv_canon(struct sv_state *s, int obj, const struct stat *st)
{
	struct stat again;

	if (sv_fd_path(obj, s->canon, sizeof(s->canon)) != 0 ||
	    s->canon[0] != '/')
		return -EACCES;
	if (fstatat(AT_FDCWD, s->canon, &again, AT_SYMLINK_NOFOLLOW) != 0 ||
	    again.st_dev != st->st_dev || again.st_ino != st->st_ino)
		return -EACCES;
	return 0;
}

/* Does the object (@st, canonical s->canon) lie in a grant of @g? */
static bool sv_in(const struct sv_state *s, const struct sv_grant *g, size_t n,
		  const struct stat *st, bool exact_dirs)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *p = s->pool + g[i].off;

		switch (g[i].type) {
		case 'd':
			if (ward_sv_beneath(s->canon, p))
				return true;
			if (exact_dirs && g[i].dev == st->st_dev &&
			    g[i].ino == st->st_ino)
				return true;
			break;
		case 'f':
		case 's':
			if (g[i].dev == st->st_dev && g[i].ino == st->st_ino)
				return true;
			break;
		case 'm':
			if (strcmp(s->canon, p) == 0)
				return true;
			break;
		default:
			break;
		}
	}
	return false;
}

/*
 * A metadata change on @obj: allowed strictly beneath a writable
 * directory grant, or on a regular-file grant; never on a device node
 * (/dev/null is a grant). An unlinked regular file reached through a
 * descriptor (@via_fd) is nobody else's any more: allowed. 0 or -EACCES.
 */
static int sv_judge_meta(struct sv_state *s, int obj, bool via_fd)
{
	struct stat st;

	if (fstat(obj, &st) != 0)
		return -EACCES;
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return -EACCES;
	if (via_fd && S_ISREG(st.st_mode) && st.st_nlink == 0)
		return 0;
	if (sv_canon(s, obj, &st) != 0)
		return -EACCES;
	return sv_in(s, s->rw, s->nrw, &st, false) ? 0 : -EACCES;
}

/* Was @obj born during this call (statx btime)? No btime: no. */
static bool sv_born_in_call(const struct sv_state *s, int obj)
{
	struct sv_statx sx;

	memset(&sx, 0, sizeof(sx));
	if (syscall(__NR_statx, obj, "", SV_AT_EMPTY_PATH, SV_STATX_BTIME,
		    &sx) != 0 ||
	    !(sx.mask & SV_STATX_BTIME))
		return false;
	return sx.btime.sec > s->start_sec ||
	       (sx.btime.sec == s->start_sec && sx.btime.nsec >= s->start_nsec);
}

/*
 * A unix socket address at @addr (@len bytes) in the target. Anything but
 * a pathname is the kernel's (abstract: Landlock's scope). A pathname
 * socket is reachable when --allow-unix names it (or a directory above
 * it), or when it lies in a writable directory grant and was bound during
 * this call: the command's own servers. A socket that was there before —
 * tmux's, X11's, an ssh-agent's in /tmp, docker.sock — belongs to a
 * server outside the sandbox and is refused. 0 or -errno.
 */
static int sv_judge_sockaddr(struct sv_state *s, uint32_t pid, uint64_t addr,
			     uint64_t len)
{
	struct stat st;
	ssize_t n;
	int obj, ret;

	if (!addr || len < 2)
		return 0;
	if (len > 110)
		len = 110;
	n = sv_peek(pid, addr, s->mem, (size_t)len);
	if (n != (ssize_t)len)
		return -EACCES;
	ret = ward_sv_sockaddr_path(s->mem, (size_t)len, s->path,
				    sizeof(s->path));
	if (ret <= 0)
		return 0;
	obj = sv_open_at(s, pid, SV_AT_FDCWD, s->path, true);
	if (obj < 0)
		return obj == -ENOENT || obj == -ENOTDIR ? obj : -EACCES;
	ret = -EACCES;
	if (fstat(obj, &st) != 0)
		goto out_close_obj;
	if (!S_ISSOCK(st.st_mode)) {
		ret = 0; /* the kernel refuses it (ECONNREFUSED) */
		goto out_close_obj;
	}
	if (sv_canon(s, obj, &st) != 0)
		goto out_close_obj;
	if (sv_in(s, s->ok, s->nok, &st, true) ||
	    (sv_in(s, s->rw, s->nrw, &st, false) && sv_born_in_call(s, obj)))
		ret = 0;
out_close_obj:
	close(obj);
	return ret;
}

/* sendmsg/sendmmsg: every message's name. 0 or -errno. */
static int sv_judge_msgs(struct sv_state *s, uint32_t pid, uint64_t addr,
			 uint64_t vlen, size_t stride)
{
	/* struct msghdr: msg_name at 0, msg_namelen (u32) at 8. */
	uint64_t names[1024];
	uint32_t lens[1024];
	size_t i, n;
	ssize_t got;
	int ret;

	if (vlen > 1024)
		vlen = 1024; /* the kernel's UIO_MAXIOV */
	n = (size_t)vlen;
	if (n * stride > sizeof(s->mem))
		n = sizeof(s->mem) / stride;
	got = sv_peek(pid, addr, s->mem, n * stride);
	if (got != (ssize_t)(n * stride))
		return n ? -EFAULT : 0;
	for (i = 0; i < n; i++) {
		memcpy(&names[i], s->mem + i * stride, 8);
		memcpy(&lens[i], s->mem + i * stride + 8, 4);
	}
	for (i = 0; i < n; i++) {
		ret = sv_judge_sockaddr(s, pid, names[i], lens[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static const struct sv_call *sv_find(int nr)
{
#ifdef SV_AUDIT_ARCH
	size_t i;

	for (i = 0; i < SV_N(sv_calls); i++)
		if (sv_calls[i].nr == nr)
			return &sv_calls[i];
#else
	(void)nr;
#endif
	return NULL;
}

/* The verdict "let the kernel perform the call" (continue). */
#define SV_CONT 1

struct sv_timespec {
	int64_t sec;
	int64_t nsec;
};

/*
 * Read the times of a utime-family call at @addr (NULL: now) into @ts as
 * two timespecs; @op says the layout. Returns 1 (times read), 0 (now) or
 * -errno (-EINVAL for a timeval the kernel would refuse).
 */
static int sv_peek_times(uint32_t pid, uint64_t addr, int op,
			 struct sv_timespec ts[2])
{
	int64_t v[4];
	size_t len = op == SV_OP_UTIME ? 16 : 32;

	if (!addr)
		return 0;
	if (sv_peek(pid, addr, v, len) != (ssize_t)len)
		return -EFAULT;
	if (op == SV_OP_UTIME) {
		ts[0].sec = v[0];
		ts[0].nsec = 0;
		ts[1].sec = v[1];
		ts[1].nsec = 0;
		return 1;
	}
	ts[0].sec = v[0];
	ts[1].sec = v[2];
	if (op == SV_OP_UTIMES) {
		if (v[1] < 0 || v[1] >= 1000000 || v[3] < 0 || v[3] >= 1000000)
			return -EINVAL;
		ts[0].nsec = v[1] * 1000;
		ts[1].nsec = v[3] * 1000;
	} else {
		ts[0].nsec = v[1];
		ts[1].nsec = v[3];
	}
	return 1;
}

/*
 * Perform an allowed path-named call on @obj, the O_PATH descriptor of the
 * object the supervisor checked, with the caller's arguments: 0 or -errno
 * (the call's result), or SV_CONT when this kernel cannot do it on a
 * descriptor (the kernel then performs it, with the residual race).
 * The supervisor has the caller's uid and groups and no capability, so
 * the kernel's permission checks give the caller's answer; metadata is not
 * a Landlock right, so being outside the domain changes nothing.
 */
static int sv_emulate(uint32_t pid, const struct sv_call *c, const uint64_t *a,
		      int obj)
{
	struct sv_timespec ts[2];
	struct stat st;
	char link[64];
	int ret;

	switch (c->op) {
	case SV_OP_CHMOD:
		if (fstat(obj, &st) != 0)
			return -errno;
		if (S_ISLNK(st.st_mode))
			return -EOPNOTSUPP; /* Linux has no mode on links */
		/* The magic link reaches exactly @obj; it is not a link. */
		sv_proc_path(link, sizeof(link), (uint32_t)getpid(), "fd", obj);
		return fchmodat(AT_FDCWD, link, (mode_t)a[c->val], 0) == 0
			   ? 0
			   : -errno;
	case SV_OP_CHOWN:
		return fchownat(obj, "", (uid_t)a[c->val], (gid_t)a[c->val + 1],
				SV_AT_EMPTY_PATH) == 0
			   ? 0
			   : -errno;
	case SV_OP_UTIME:
	case SV_OP_UTIMES:
	case SV_OP_UTIMENSAT:
		ret = sv_peek_times(pid, a[c->val], c->op, ts);
		if (ret < 0)
			return ret;
		if (syscall(SYS_utimensat, obj, "", ret ? (void *)ts : NULL,
			    SV_AT_EMPTY_PATH) == 0)
			return 0;
		/* EINVAL: a kernel without AT_EMPTY_PATH here (before
		 * 5.8), or times it refuses: let it answer itself. */
		return errno == EINVAL ? SV_CONT : -errno;
	default:
		return SV_CONT;
	}
}

/*
 * Judge one notification: SV_CONT (continue in the kernel), 0 (performed
 * here, succeeded) or -errno (refused, or performed here and failed).
 */
static int sv_judge(struct sv_state *s, const struct sv_notif *req)
{
	const struct sv_call *c = sv_find(req->data.nr);
	const uint64_t *a = req->data.args;
	uint32_t pid = req->pid;
	int obj = -1, ret;
	bool via_fd = false;

	if (!c)
		return -EACCES;
	switch (c->kind) {
	case SV_CONNECT:
		ret = sv_judge_sockaddr(s, pid, a[1], a[2] & 0xffffffffU);
		return ret ? ret : SV_CONT;
	case SV_SENDTO:
		ret = sv_judge_sockaddr(s, pid, a[4], a[5] & 0xffffffffU);
		return ret ? ret : SV_CONT;
	case SV_SENDMSG:
		ret = sv_judge_msgs(s, pid, a[1], 1, 56);
		return ret ? ret : SV_CONT;
	case SV_SENDMMSG:
		ret = sv_judge_msgs(s, pid, a[1], a[2] & 0xffffffffU, 64);
		return ret ? ret : SV_CONT;
	case SV_PATH:
	case SV_LPATH:
		ret = sv_peek_path(s, pid, a[0]);
		if (ret)
			return ret;
		obj = sv_open_at(s, pid, SV_AT_FDCWD, s->path,
				 c->kind == SV_PATH);
		break;
	case SV_FD:
	case SV_IOCTL:
		obj = sv_open_fd(pid, (long)(int)a[0]);
		via_fd = true;
		break;
	case SV_AT: {
		int dirfd = (int)a[0];
		unsigned flags =
		    c->flags_arg >= 0 ? (unsigned)a[c->flags_arg] : 0U;

		if (!a[1]) {
			/* utimensat/futimesat(fd, NULL, ...): the fd. */
			obj = sv_open_fd(pid, dirfd);
			via_fd = true;
			break;
		}
		ret = sv_peek_path(s, pid, a[1]);
		if (ret)
			return ret;
		if (s->path[0] == '\0' && (flags & SV_AT_EMPTY_PATH)) {
			if (dirfd == SV_AT_FDCWD) {
				char link[64];

				sv_proc_path(link, sizeof(link), pid, "cwd",
					     -1);
				obj = open(link, O_PATH | O_CLOEXEC);
				if (obj < 0)
					obj = -errno;
			} else {
				obj = sv_open_fd(pid, dirfd);
			}
			via_fd = true;
			break;
		}
		obj = sv_open_at(s, pid, dirfd, s->path,
				 !(flags & SV_AT_SYMLINK_NOFOLLOW));
		break;
	}
	default:
		return -EACCES;
	}
	if (obj < 0)
		return obj == -ENOENT || obj == -ENOTDIR || obj == -EBADF ||
			       obj == -ENAMETOOLONG || obj == -EFAULT
			   ? obj
			   : -EACCES;
	ret = sv_judge_meta(s, obj, via_fd);
	if (ret == 0) {
		uint64_t id = req->id;

		/* A descriptor cannot change under us: the kernel may do
		 * it. A path could: do it here, on what was checked — once
		 * the call is known to be still the same (the pid read in
		 * /proc may have been reused). */
		if (via_fd)
			ret = SV_CONT;
		else if (ioctl(s->lfd, SV_IOCTL_NOTIF_ID_VALID, &id) != 0)
			ret = -ESRCH;
		else
			ret = sv_emulate(pid, c, a, obj);
	}
	close(obj);
	return ret;
}

/* Serve notifications until no process uses the filter any more. */
static void sv_serve(struct sv_state *s, int lfd)
{
	struct sv_notif req;
	struct sv_resp resp;

	for (;;) {
		struct pollfd p = {.fd = lfd, .events = POLLIN};
		uint64_t id;
		int ret;

		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (!(p.revents & POLLIN))
			return; /* POLLHUP: every user of the filter is gone */
		memset(&req, 0, sizeof(req));
		if (ioctl(lfd, SV_IOCTL_NOTIF_RECV, &req) != 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return;
		}
		ret = sv_judge(s, &req);
		/* The pid may have died and been reused while we looked at
		 * /proc/PID: only answer "continue" for the same call. */
		id = req.id;
		if (ret == SV_CONT &&
		    ioctl(lfd, SV_IOCTL_NOTIF_ID_VALID, &id) != 0)
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		if (ret == SV_CONT)
			resp.flags = SV_NOTIF_FLAG_CONTINUE;
		else
			resp.error = ret; /* 0: performed here, succeeded */
		(void)ioctl(lfd, SV_IOCTL_NOTIF_SEND, &resp);
	}
}

/* Write all of @len bytes, retrying EINTR. */
static int sv_write(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do {
		n = write(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

static int sv_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	do {
		n = read(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

/*
 * The supervisor: snapshot the grants, drop everything, say ready, take
 * the listener from @target (pidfd_getfd), serve. Never returns.
 */
static void sv_main(int sock, pid_t target, const char *const *rw, size_t nrw,
		    const char *const *unix_ok, size_t nunix)
{
	struct sv_state *s;
	struct timespec now;
	struct stat st;
	char err[128];
	int msg[2], pidfd, lfd, nul;
	size_t i;

	/* Nothing of the caller's stays open: not its pipes (their EOF
	 * must not wait for us), not its terminal. */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
	    dup2(nul, 2) < 0 || dup2(sock, 3) < 0)
		_exit(1);
	sock = 3;
	util_close_from(4, -1, false);
	(void)prctl(PR_SET_NAME, (unsigned long)"ward-supervise", 0, 0, 0);

	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		_exit(1);
	for (i = 0; i < nrw && s->nrw < SV_GRANT_MAX; i++)
		sv_add_grant(s, &s->rw[s->nrw++], rw[i]);
	for (i = 0; i < nunix && s->nok < SV_N(s->ok); i++)
		sv_add_grant(s, &s->ok[s->nok++], unix_ok[i]);
	if (stat("/", &st) != 0)
		_exit(1);
	s->root_dev = st.st_dev;
	s->root_ino = st.st_ino;
	/* The coarse clock is what stamps inodes: a socket bound after
	 * this read cannot carry an earlier time. */
	if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0)
		_exit(1);
	s->start_sec = now.tv_sec;
	s->start_nsec = (uint32_t)now.tv_nsec;

	/* The supervisor needs no privilege: the same uid reads the
	 * target's /proc entries and memory. */
	if (ward_ll_drop_caps(err, sizeof(err)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		_exit(1);
	/* The target installs the filter, then names the listener. */
	if (sv_read(sock, msg, sizeof(msg)) != 0)
		_exit(0); /* never armed */
	pidfd = (int)syscall(__NR_pidfd_open, target, 0U);
	lfd =
	    pidfd < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, pidfd, msg[0], 0U);
	if (lfd < 0) {
		int e = errno;

		(void)sv_write(sock, &e, sizeof(e));
		_exit(1);
	}
	close(pidfd);
	/* Linux 6.6: wake the supervisor on the caller's CPU and switch to
	 * it at once (a judged call then costs a context switch, not a trip
	 * through the scheduler). Older kernels: EINVAL, harmless. */
	{
		uint64_t fl = SV_USER_NOTIF_FD_SYNC_WAKE_UP;

		(void)ioctl(lfd, SV_IOCTL_NOTIF_SET_FLAGS, fl);
	}
	msg[1] = 0;
	if (sv_write(sock, &msg[1], sizeof(msg[1])) != 0)
		_exit(1);
	close(sock);
	s->lfd = lfd;
	sv_serve(s, lfd);
	_exit(0);
}

/* fork() without libc's atfork handlers (we may be a child of a
 * multi-threaded process, between fork and exec). */
static pid_t sv_fork(void)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL,
			      0UL);
}

static int sv_err(char *err, size_t len, const char *what, int e)
{
	size_t pos = 0, i;
	const char *t = e == ENOSYS   ? "Function not implemented"
			: e == EPERM  ? "Operation not permitted"
			: e == EACCES ? "Permission denied"
			: e == EBUSY  ? "Device or resource busy"
			: e == EINVAL ? "Invalid argument"
			: e == ENOMEM ? "Out of memory"
			: e == EAGAIN ? "Resource temporarily unavailable"
			: e == ESRCH  ? "No such process"
			: e == EMFILE ? "Too many open files"
				      : "error";

	if (err && len) {
		for (i = 0; what[i] && pos + 1 < len; i++)
			err[pos++] = what[i];
		if (pos + 2 < len) {
			err[pos++] = ':';
			err[pos++] = ' ';
		}
		for (i = 0; t[i] && pos + 1 < len; i++)
			err[pos++] = t[i];
		err[pos] = '\0';
	}
	return -e;
}

int ward_sv_spawn(struct ward_sv *sv, const char *const *rw, size_t nrw,
		  const char *const *unix_ok, size_t nunix, char *err,
		  size_t err_len)
{
	pid_t target = getpid(), mid;
	int sp[2], status, e, pid = 0;

	sv->sock = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0)
		return sv_err(err, err_len, "supervisor: socketpair", errno);
	mid = sv_fork();
	if (mid < 0) {
		e = errno;
		close(sp[0]);
		close(sp[1]);
		return sv_err(err, err_len, "supervisor: fork", e);
	}
	if (mid == 0) {
		/* Fork again and leave: the supervisor is nobody's child
		 * in the command's tree (no stray child for its wait()). */
		pid_t sup = sv_fork();

		if (sup == 0) {
			close(sp[0]);
			sv_main(sp[1], target, rw, nrw, unix_ok, nunix);
		}
		/* The caller learns the supervisor's pid first (for Yama),
		 * and does not wait for it to start: it snapshots the grants
		 * while the caller builds its ruleset, and says so only when
		 * armed (ward_sv_arm). */
		pid = (int)sup;
		_exit(sup < 0 || sv_write(sp[1], &pid, sizeof(pid)) != 0 ? 1
									 : 0);
	}
	close(sp[1]);
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    sv_read(sp[0], &pid, sizeof(pid)) != 0 || pid <= 0) {
		close(sp[0]);
		return sv_err(err, err_len,
			      "supervisor: did not start (fork failed or "
			      "it died)",
			      ESRCH);
	}
	sv->sock = sp[0];
	sv->pid = (pid_t)pid;
	return 0;
}

/*
 * The notifying filter: the judged calls return USER_NOTIF (ioctl only
 * for the metadata commands, sendto only with an address), io_uring is
 * refused with ENOSYS (its operations would bypass seccomp; libraries
 * fall back), everything else is allowed. Returns the listener or -errno.
 */
static int sv_install(void)
{
#ifdef SV_AUDIT_ARCH
	struct sv_filter f[160];
	struct sv_fprog prog;
	size_t n = 0, i, j;
	const uint32_t notify = SV_RET_USER_NOTIF;
	long lfd;

	f[n++] = SV_STMT(SV_LD, SV_OFF_ARCH);
	f[n++] = SV_JUMP(SV_JEQ, SV_AUDIT_ARCH, 1, 0);
	f[n++] = SV_STMT(SV_RET, SV_RET_ERRNO | ENOSYS);
	f[n++] = SV_STMT(SV_LD, SV_OFF_NR);
#ifdef SV_X32_BIT
	f[n++] = SV_JUMP(SV_JGE, SV_X32_BIT, 0, 1);
	f[n++] = SV_STMT(SV_RET, SV_RET_ERRNO | ENOSYS);
#endif
	/* Fast path: the hottest calls are numbered below the first. */
	f[n++] = SV_JUMP(SV_JGE, (uint32_t)sv_calls[0].nr, 1, 0);
	f[n++] = SV_STMT(SV_RET, SV_RET_ALLOW);
	for (i = 0; i < SV_N(sv_calls); i++) {
		const struct sv_call *c = &sv_calls[i];

		switch (c->kind) {
		case SV_IOCTL:
			/* jeq nr; ld cmd; jeq each -> notify; allow */
			f[n++] = SV_JUMP(SV_JEQ, (uint32_t)c->nr, 0,
					 (uint8_t)(SV_N(sv_ioctls) + 3));
			f[n++] = SV_STMT(SV_LD, SV_OFF_ARG(1));
			for (j = 0; j < SV_N(sv_ioctls); j++)
				f[n++] =
				    SV_JUMP(SV_JEQ, sv_ioctls[j],
					    (uint8_t)(SV_N(sv_ioctls) - j), 0);
			f[n++] = SV_STMT(SV_RET, SV_RET_ALLOW);
			f[n++] = SV_STMT(SV_RET, notify);
			break;
		case SV_SENDTO:
			/* Without an address (a connected socket): allow. */
			f[n++] = SV_JUMP(SV_JEQ, (uint32_t)c->nr, 0, 6);
			f[n++] = SV_STMT(SV_LD, SV_OFF_ARG(4));
			f[n++] = SV_JUMP(SV_JEQ, 0, 0, 3);
			f[n++] = SV_STMT(SV_LD, SV_OFF_ARG(4) + 4);
			f[n++] = SV_JUMP(SV_JEQ, 0, 0, 1);
			f[n++] = SV_STMT(SV_RET, SV_RET_ALLOW);
			f[n++] = SV_STMT(SV_RET, notify);
			break;
		case SV_REFUSE:
			f[n++] = SV_JUMP(SV_JEQ, (uint32_t)c->nr, 0, 1);
			f[n++] = SV_STMT(SV_RET, SV_RET_ERRNO | ENOSYS);
			break;
		default:
			f[n++] = SV_JUMP(SV_JEQ, (uint32_t)c->nr, 0, 1);
			f[n++] = SV_STMT(SV_RET, notify);
			break;
		}
		/* Every branch above reloaded nr? Only ioctl and sendto
		 * clobbered the accumulator, and both return. */
	}
	f[n++] = SV_STMT(SV_RET, SV_RET_ALLOW);

	prog.len = (unsigned short)n;
	prog.filter = f;
	lfd = syscall(__NR_seccomp, SV_SECCOMP_SET_MODE_FILTER,
		      SV_SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (lfd < 0)
		return -errno;
	return (int)lfd;
#else
	return -ENOSYS;
#endif
}

int ward_sv_arm(struct ward_sv *sv, char *err, size_t err_len)
{
	int msg[2], reply = 0, lfd, ret = 0;

	if (!sv || sv->sock < 0)
		return sv_err(err, err_len, "supervisor: not started", EBADF);
	lfd = sv_install();
	if (lfd < 0) {
		ret = sv_err(err, err_len,
			     lfd == -EBUSY
				 ? "supervisor: cannot install the filter "
				   "(already supervised by another sandbox)"
				 : "supervisor: cannot install the filter",
			     -lfd);
		goto out_close_sock;
	}
	/* Yama (ptrace_scope 1) lets only a declared tracer take our fd. */
	(void)prctl(PR_SET_PTRACER, (unsigned long)sv->pid, 0, 0, 0);
	msg[0] = lfd;
	msg[1] = 0;
	if (sv_write(sv->sock, msg, sizeof(msg)) != 0 ||
	    sv_read(sv->sock, &reply, sizeof(reply)) != 0) {
		ret = sv_err(err, err_len, "supervisor: died before arming",
			     ESRCH);
	} else if (reply != 0) {
		ret = sv_err(err, err_len,
			     "supervisor: cannot take the listener", reply);
	}
	close(lfd);
	(void)prctl(PR_SET_PTRACER, 0UL, 0, 0, 0);
out_close_sock:
	close(sv->sock);
	sv->sock = -1;
	return ret;
}

void ward_sv_close(struct ward_sv *sv)
{
	if (!sv || sv->sock < 0)
		return;
	close(sv->sock);
	sv->sock = -1;
}
