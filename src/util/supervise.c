/*
 * ward — the seccomp supervisor (see supervise.h for the shape, and
 * docs/RUNNERS.md, "What Landlock cannot govern: the supervisor").
 *
 * libc only, like landlock.c: compiled into libward and the static musl
 * launcher. Everything after ward_sv_spawn() is async-signal-safe: raw
 * syscalls, fixed buffers or mmap(), no malloc and no stdio, because it
 * runs in the child of a possibly multi-threaded process.
 *
 * The rule: a judged call is refused, or performed here on the object
 * that was checked — a pidfd_getfd() copy of the descriptor, or this
 * process's own handle of the path it copied and resolved once — and its
 * result returned. Nothing is ever continued in the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
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
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "landlock.h"
#include "supervise.h"
#include "util.h"

/* --- kernel UAPI (seccomp.h, openat2.h, stat.h, pidfd.h), defined here ---- */

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif

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
#define SV_IOCTL_NOTIF_RECV		    0xc0502100UL
#define SV_IOCTL_NOTIF_SEND		    0xc0182101UL
#define SV_IOCTL_NOTIF_ID_VALID		    0x40082102UL
#define SV_IOCTL_NOTIF_SET_FLAGS	    0x40082104UL
#define SV_USER_NOTIF_FD_SYNC_WAKE_UP	    1ULL

#define SV_RESOLVE_NO_MAGICLINKS 0x02ULL
#define SV_STATX_BASIC		 0x07ffU
#define SV_STATX_BTIME		 0x0800U
#define SV_AT_EMPTY_PATH	 0x1000
#define SV_AT_SYMLINK_NOFOLLOW	 0x100
#define SV_AT_FDCWD		 (-100)
#define SV_PIDFD_THREAD		 O_EXCL /* Linux 6.9 */
#define SV_XATTR_NAME_MAX	 255
#define SV_XATTR_SIZE_MAX	 65536
#define SV_UIO_MAXIOV		 1024
#define SV_SCM_RIGHTS		 1
#define SV_SCM_CREDENTIALS	 2


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
	uint32_t rdev_major, rdev_minor;
	uint32_t dev_major, dev_minor;
	uint8_t rest[256 - 0x90];
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
	SV_PATH,     /* args[0]: a path, the last link followed */
	SV_LPATH,    /* args[0]: a path, the last link not followed */
	SV_FD,	     /* args[0]: a descriptor */
	SV_AT,	     /* args[0] dirfd, args[1] path (NULL: the fd), flags */
	SV_IOCTL,    /* args[0] fd; args[1] one of sv_ioctls (the filter) */
	SV_CONNECT,  /* args[0] socket, args[1] sockaddr, args[2] length */
	SV_BIND,     /* likewise */
	SV_LISTEN,   /* args[0] socket, args[1] backlog */
	SV_SENDTO,   /* args[4] sockaddr, args[5] length */
	SV_SENDMSG,  /* args[1] struct msghdr */
	SV_SENDMMSG, /* args[1] struct mmsghdr[args[2]] */
	SV_REFUSE,   /* io_uring: refused by the filter itself (ENOSYS) */
};

/* What a metadata call changes, and so how it is performed here. */
enum sv_op {
	SV_OP_NONE,
	SV_OP_CHMOD,	  /* args[val]: mode */
	SV_OP_CHOWN,	  /* args[val], args[val + 1]: uid, gid */
	SV_OP_UTIME,	  /* args[val]: struct utimbuf * (NULL: now) */
	SV_OP_UTIMES,	  /* args[val]: struct timeval[2] (NULL: now) */
	SV_OP_UTIMENSAT,  /* args[val]: struct timespec[2] (NULL: now) */
	SV_OP_SETXATTR,	  /* args[val] name, value, size, flags */
	SV_OP_RMXATTR,	  /* args[val] name */
	SV_OP_SETXATTRAT, /* args[3] name, args[4] xattr_args, args[5] size */
	SV_OP_RMXATTRAT,  /* args[3] name */
	SV_OP_SETATTR,	  /* file_setattr: args[2] file_attr, args[3] size */
	SV_OP_IOCTL,	  /* args[1] cmd, args[2] its argument */
};

struct sv_call {
	int nr;
	uint8_t kind;
	int8_t flags_arg; /* SV_AT: index of the AT_* flags, -1 none */
	uint8_t op;	  /* enum sv_op */
	uint8_t val;	  /* index of op's first value argument */
};

#ifdef SV_AUDIT_ARCH
#if defined(__x86_64__)
#define SV_NR_FCHMOD	   91
#define SV_NR_FCHOWN	   93
#define SV_NR_FUTIMESAT	   261
#define SV_NR_UTIMENSAT	   280
#define SV_NR_FSETXATTR	   190
#define SV_NR_FREMOVEXATTR 199
#else
#define SV_NR_FCHMOD	   52
#define SV_NR_FCHOWN	   55
#define SV_NR_FUTIMESAT	   (-1)
#define SV_NR_UTIMENSAT	   88
#define SV_NR_FSETXATTR	   7
#define SV_NR_FREMOVEXATTR 16
#endif
#define SV_NR_FCHMODAT2	    452
#define SV_NR_SETXATTRAT    463
#define SV_NR_REMOVEXATTRAT 466
#define SV_NR_FILE_SETATTR  469

/* Sorted by number (the filter's fast path tests the smallest first). */
static const struct sv_call sv_calls[] = {
#if defined(__x86_64__)
    {16, SV_IOCTL, -1, SV_OP_IOCTL, 1},	    {42, SV_CONNECT, -1, SV_OP_NONE, 0},
    {44, SV_SENDTO, -1, SV_OP_NONE, 0},	    {46, SV_SENDMSG, -1, SV_OP_NONE, 0},
    {49, SV_BIND, -1, SV_OP_NONE, 0},	    {50, SV_LISTEN, -1, SV_OP_NONE, 0},
    {90, SV_PATH, -1, SV_OP_CHMOD, 1},	    /* chmod */
    {91, SV_FD, -1, SV_OP_CHMOD, 1},	    /* fchmod */
    {92, SV_PATH, -1, SV_OP_CHOWN, 1},	    /* chown */
    {93, SV_FD, -1, SV_OP_CHOWN, 1},	    /* fchown */
    {94, SV_LPATH, -1, SV_OP_CHOWN, 1},	    /* lchown */
    {132, SV_PATH, -1, SV_OP_UTIME, 1},	    /* utime */
    {188, SV_PATH, -1, SV_OP_SETXATTR, 1},  /* setxattr (ACLs too) */
    {189, SV_LPATH, -1, SV_OP_SETXATTR, 1}, /* lsetxattr */
    {190, SV_FD, -1, SV_OP_SETXATTR, 1},    /* fsetxattr */
    {197, SV_PATH, -1, SV_OP_RMXATTR, 1},   /* removexattr */
    {198, SV_LPATH, -1, SV_OP_RMXATTR, 1},  /* lremovexattr */
    {199, SV_FD, -1, SV_OP_RMXATTR, 1},	    /* fremovexattr */
    {235, SV_PATH, -1, SV_OP_UTIMES, 1},    /* utimes */
    {260, SV_AT, 4, SV_OP_CHOWN, 2},	    /* fchownat */
    {261, SV_AT, -1, SV_OP_UTIMES, 2},	    /* futimesat */
    {268, SV_AT, -1, SV_OP_CHMOD, 2},	    /* fchmodat */
    {280, SV_AT, 3, SV_OP_UTIMENSAT, 2},    /* utimensat */
    {307, SV_SENDMMSG, -1, SV_OP_NONE, 0},
#else
    {5, SV_PATH, -1, SV_OP_SETXATTR, 1},  /* setxattr */
    {6, SV_LPATH, -1, SV_OP_SETXATTR, 1}, /* lsetxattr */
    {7, SV_FD, -1, SV_OP_SETXATTR, 1},	  /* fsetxattr */
    {14, SV_PATH, -1, SV_OP_RMXATTR, 1},  /* removexattr */
    {15, SV_LPATH, -1, SV_OP_RMXATTR, 1}, /* lremovexattr */
    {16, SV_FD, -1, SV_OP_RMXATTR, 1},	  /* fremovexattr */
    {29, SV_IOCTL, -1, SV_OP_IOCTL, 1},
    {52, SV_FD, -1, SV_OP_CHMOD, 1},	/* fchmod */
    {53, SV_AT, -1, SV_OP_CHMOD, 2},	/* fchmodat */
    {54, SV_AT, 4, SV_OP_CHOWN, 2},	/* fchownat */
    {55, SV_FD, -1, SV_OP_CHOWN, 1},	/* fchown */
    {88, SV_AT, 3, SV_OP_UTIMENSAT, 2}, /* utimensat */
    {200, SV_BIND, -1, SV_OP_NONE, 0},
    {201, SV_LISTEN, -1, SV_OP_NONE, 0},
    {203, SV_CONNECT, -1, SV_OP_NONE, 0},
    {206, SV_SENDTO, -1, SV_OP_NONE, 0},
    {211, SV_SENDMSG, -1, SV_OP_NONE, 0},
    {269, SV_SENDMMSG, -1, SV_OP_NONE, 0},
#endif
    {425, SV_REFUSE, -1, SV_OP_NONE, 0}, /* io_uring_setup: its ops bypass seccomp */
    {426, SV_REFUSE, -1, SV_OP_NONE, 0},  /* io_uring_enter */
    {427, SV_REFUSE, -1, SV_OP_NONE, 0},  /* io_uring_register */
    {452, SV_AT, 3, SV_OP_CHMOD, 2},	  /* fchmodat2 */
    {463, SV_AT, 2, SV_OP_SETXATTRAT, 3}, /* setxattrat */
    {466, SV_AT, 2, SV_OP_RMXATTRAT, 3},  /* removexattrat */
    {469, SV_AT, 4, SV_OP_SETATTR, 2},	  /* file_setattr (6.17) */
};

/*
 * The ioctls that change inode metadata Landlock does not govern: the
 * inode flags (chattr: immutable, append-only), the fsxattr (project id,
 * xfs flags) and the generation number; 32-bit encodings too. With the
 * size of the argument the kernel reads.
 */
static const struct {
	uint32_t cmd;
	uint32_t size;
} sv_ioctls[] = {
    {0x40086602U, 4},  /* FS_IOC_SETFLAGS (reads an int) */
    {0x40046602U, 4},  /* FS_IOC32_SETFLAGS */
    {0x401c5820U, 28}, /* FS_IOC_FSSETXATTR: struct fsxattr */
    {0x40087602U, 4},  /* FS_IOC_SETVERSION (reads an int) */
    {0x40047602U, 4},  /* FS_IOC32_SETVERSION */
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

int ward_sv_net_dest(int net, unsigned port, const void *addr, size_t len,
		     bool tcp)
{
	static const uint8_t mapped[12] = {0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff};
	const unsigned char *a = addr;
	unsigned short family;
	uint8_t ip4[4];
	uint16_t p;

	if (!addr || len < sizeof(family))
		return 1;
	memcpy(&family, a, sizeof(family));
	if (family != AF_INET && family != AF_INET6)
		return 1;
	if (net == WARD_LL_NET_ON || net == WARD_LL_NET_LOCAL)
		return 0;
	if (net != WARD_LL_NET_CONNECT)
		return -ENETUNREACH;
	if (family == AF_INET) {
		if (len < sizeof(struct sockaddr_in))
			return -ECONNREFUSED;
		memcpy(&p, a + 2, 2);
		memcpy(ip4, a + 4, 4);
	} else {
		/* sin6_port at 2, sin6_addr at 8 */
		if (len < sizeof(struct sockaddr_in6) ||
		    memcmp(a + 8, mapped, sizeof(mapped)) != 0)
			return -ECONNREFUSED;
		memcpy(&p, a + 2, 2);
		memcpy(ip4, a + 20, 4);
	}
	if (!tcp || ntohs(p) != port || ip4[0] != 127 || ip4[1] != 0 ||
	    ip4[2] != 0 || ip4[3] != 1)
		return -ECONNREFUSED;
	return 0;
}

/* --- the supervisor's state ------------------------------------------------ */

#define SV_GRANT_MAX 8192
#define SV_MADE_MAX  4096
#define SV_POOL	     (512 * 1024)
#define SV_DATA_MAX  (256 * 1024)
#define SV_CTL_MAX   (16 * 1024)

/* One writable grant or --allow-unix entry, canonical. */
struct sv_grant {
	uint32_t off; /* into the pool */
	uint8_t type; /* 'd' directory, 'f' regular file, 's' other */
	dev_t dev;
	ino_t ino;
};

/* A unix socket file the call's processes created (bind, judged here). */
struct sv_made {
	uint32_t dev_major, dev_minor;
	uint64_t ino;
	int64_t bsec;
	uint32_t bnsec;
};

/* The supervisor's state: one mmap()ed block (no malloc after fork). */
struct ward_sv_state {
	struct sv_grant rw[SV_GRANT_MAX];
	size_t nrw;
	struct sv_grant ok[256];
	size_t nok;
	struct sv_made made[SV_MADE_MAX];
	size_t nmade;
	size_t pool_used;
	dev_t root_dev;
	ino_t root_ino;
	int net; /* enum ward_ll_net */
	unsigned net_port;
	bool proc_ok; /* /proc/self is this process (see init) */
	struct ward_sv_report report;
	char pool[SV_POOL];
	char path[4096];  /* scratch: a path read from the target */
	char canon[4096]; /* scratch: an object's canonical path */
	char xname[SV_XATTR_NAME_MAX + 1];
	unsigned char xval[SV_XATTR_SIZE_MAX];
	unsigned char arg[4096];      /* scratch: a call's small argument */
	unsigned char mem[64 * 1024]; /* scratch: msghdr arrays */
	unsigned char iov[SV_UIO_MAXIOV * 16];
	unsigned char data[SV_DATA_MAX]; /* scratch: a message's bytes */
	/* scratch: its control data, walked as struct cmsghdr in place */
	_Alignas(struct cmsghdr) unsigned char ctl[SV_CTL_MAX];
	int ctl_fds[256]; /* SCM_RIGHTS copies to close */
	size_t nctl_fds;
};

size_t ward_sv_state_size(void)
{
	return sizeof(struct ward_sv_state);
}

/* Read the link @link names (a /proc path) into @buf; 0 or -errno. */
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

/* Append @s at *@pos in @buf (capacity @len), NUL-terminated. */
static void sv_put(char *buf, size_t len, size_t *pos, const char *s)
{
	while (*s && *pos + 1 < len)
		buf[(*pos)++] = *s++;
	buf[*pos] = '\0';
}

static void sv_putnum(char *buf, size_t len, size_t *pos, unsigned long v)
{
	char num[24];
	size_t i = sizeof(num) - 1;

	num[i] = '\0';
	do {
		num[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i);
	sv_put(buf, len, pos, num + i);
}

/* "/proc/<pid|self>/<what>[/<fd>]" into @buf, without snprintf. @pid 0:
 * self. */
static void sv_proc_path(char *buf, size_t len, uint32_t pid, const char *what,
			 long fd)
{
	size_t pos = 0;

	buf[0] = '\0';
	sv_put(buf, len, &pos, "/proc/");
	if (pid)
		sv_putnum(buf, len, &pos, pid);
	else
		sv_put(buf, len, &pos, "self");
	sv_put(buf, len, &pos, "/");
	sv_put(buf, len, &pos, what);
	if (fd >= 0) {
		sv_put(buf, len, &pos, "/");
		sv_putnum(buf, len, &pos, (unsigned long)fd);
	}
}

/* The canonical path of @fd as this process sees it, into @buf. */
static int sv_fd_path(int fd, char *buf, size_t len)
{
	char link[64];

	sv_proc_path(link, sizeof(link), 0, "fd", fd);
	return sv_readlink(link, buf, len);
}

/* Add @path, canonical, to @g (from the pool). Missing: kept lexically. */
static void sv_add_grant(struct ward_sv_state *s, struct sv_grant *g,
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

int ward_sv_state_init(struct ward_sv_state *s, const struct ward_sv_config *c)
{
	struct stat st;
	char self[32];
	size_t i, pos = 0;

	for (i = 0; i < c->nrw && s->nrw < SV_GRANT_MAX; i++)
		sv_add_grant(s, &s->rw[s->nrw++], c->rw[i]);
	for (i = 0; i < c->nunix && s->nok < SV_N(s->ok); i++)
		sv_add_grant(s, &s->ok[s->nok++], c->unix_ok[i]);
	if (stat("/", &st) != 0)
		return -errno;
	s->root_dev = st.st_dev;
	s->root_ino = st.st_ino;
	s->net = c->net;
	s->net_port = c->net_port;
	/*
	 * Objects are acted on through /proc/self/fd/N, and the target's
	 * cwd and root read from /proc/PID: a /proc of another pid
	 * namespace (the keeper's own /proc could not be mounted) would
	 * name other processes. Then every path-named call is refused.
	 */
	s->proc_ok = false;
	if (sv_readlink("/proc/self", s->canon, sizeof(s->canon)) == 0) {
		sv_putnum(self, sizeof(self), &pos, (unsigned long)getpid());
		s->proc_ok = strcmp(self, s->canon) == 0;
	}
	memcpy(s->report.magic, "WSVN", 4);
	return 0;
}

bool ward_sv_state_report(const struct ward_sv_state *s,
			  struct ward_sv_report *out)
{
	if (!s->report.count)
		return false;
	*out = s->report;
	return true;
}

size_t ward_sv_report_event(const void *buf, size_t len, char *event,
			    size_t cap)
{
	const unsigned char *b = buf;
	size_t i = 0, n = 0;
	bool first = true;

	if (cap == 0)
		return 0;
	event[0] = '\0';
	while (i < len) {
		size_t start = i;

		if (len - i >= sizeof(struct ward_sv_report) &&
		    memcmp(b + i, "WSVN", 4) == 0) {
			i += sizeof(struct ward_sv_report);
			continue;
		}
		while (i < len && b[i] != '\n' &&
		       !(len - i >= sizeof(struct ward_sv_report) &&
			 memcmp(b + i, "WSVN", 4) == 0))
			i++;
		if (i < len && b[i] == '\n')
			i++;
		else if (i < len)
			continue; /* a record inside a line the reader
				   * wrote in two parts: never, skip it */
		if (first) { /* the pid line */
			first = false;
			continue;
		}
		n = i - start < cap ? i - start : cap - 1;
		memcpy(event, b + start, n);
		event[n] = '\0';
	}
	return n;
}

bool ward_sv_report_find(const void *buf, size_t len, long *pid,
			 struct ward_sv_report *out)
{
	const unsigned char *b = buf;
	bool found = false;
	size_t i = 0;

	/* The keeper's "PID\n" line and records; either may come first. */
	while (i < len) {
		long v = 0;
		bool digits = false;

		if (len - i >= sizeof(*out) && memcmp(b + i, "WSVN", 4) == 0) {
			memcpy(out, b + i, sizeof(*out));
			found = true;
			i += sizeof(*out);
			continue;
		}
		while (i < len && b[i] >= '0' && b[i] <= '9' && v < 1L << 40) {
			v = v * 10 + (b[i++] - '0');
			digits = true;
		}
		if (digits && i < len && b[i] == '\n' && pid)
			*pid = v;
		while (i < len && b[i] != '\n')
			i++;
		i++;
	}
	return found;
}

/* Count a refused network access; the first one's address is kept. */
static void sv_note_refused(struct ward_sv_state *s, const void *addr,
			    size_t len, int error)
{
	const unsigned char *a = addr;
	unsigned short family;
	uint16_t p;

	if (s->report.count++ || len < 4)
		return;
	memcpy(&family, a, 2);
	memcpy(&p, a + 2, 2);
	s->report.family = family;
	s->report.port = ntohs(p);
	s->report.error = -error;
	if (family == AF_INET && len >= 8)
		memcpy(s->report.addr, a + 4, 4);
	else if (family == AF_INET6 && len >= 24)
		memcpy(s->report.addr, a + 8, 16);
}

static int64_t sv_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* --- reading the target ---------------------------------------------------- */

/* Exactly @len bytes at @addr, or -EFAULT. */
static int sv_read(const struct ward_sv_target *t, uint64_t addr, void *buf,
		   size_t len)
{
	ssize_t n;

	if (!len)
		return 0;
	if (!addr)
		return -EFAULT;
	n = t->ops->read(t->ctx, addr, buf, len);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/*
 * A NUL-terminated string at @addr into @buf (capacity @len), read page
 * by page so one near the end of a mapping is still found. -ENAMETOOLONG
 * (or @toolong) when it does not fit.
 */
static int sv_read_str(const struct ward_sv_target *t, uint64_t addr, char *buf,
		       size_t len, int toolong)
{
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	while (got < len) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		ssize_t n;

		if (chunk > len - got)
			chunk = len - got;
		n = t->ops->read(t->ctx, addr + got, buf + got, chunk);
		if (n <= 0)
			return -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	return toolong;
}

/* A descriptor of the target's: its copy, or -EBADF / -errno. */
static int sv_getfd(const struct ward_sv_target *t, long fd)
{
	if (fd < 0 || fd > INT32_MAX)
		return -EBADF;
	return t->ops->getfd(t->ctx, (int)fd);
}

/*
 * Open (O_PATH) what the target's @path names, resolved once as the
 * target would: relative to its cwd or to @base (a copy of its dirfd, or
 * -1 for the cwd), with the same root (a target with another root — a
 * chroot in a user namespace — is refused). Magic links (/proc/self/...,
 * /dev/fd/...) are refused: here they would name the supervisor's own
 * objects. Returns the fd or -errno.
 */
static int sv_resolve(const struct ward_sv_state *s,
		      const struct ward_sv_target *t, int base,
		      const char *path, bool follow, bool dir)
{
	struct sv_open_how how;
	struct stat st;
	int root, cwd = -1, fd;

	if (!s->proc_ok)
		return -EACCES;
	root = t->ops->dir(t->ctx, WARD_SV_DIR_ROOT);
	if (root < 0)
		return root;
	fd = fstat(root, &st);
	close(root);
	if (fd != 0 || st.st_dev != s->root_dev || st.st_ino != s->root_ino)
		return -EACCES;
	if (path[0] != '/' && base < 0) {
		cwd = t->ops->dir(t->ctx, WARD_SV_DIR_CWD);
		if (cwd < 0)
			return cwd;
		base = cwd;
	}
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW) |
		    (dir ? O_DIRECTORY : 0);
	how.resolve = SV_RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(__NR_openat2, path[0] == '/' ? SV_AT_FDCWD : base,
			  path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	if (cwd >= 0)
		close(cwd);
	return fd;
}

/*
 * The canonical path of @obj into s->canon, checked: the path must still
 * name @obj (not deleted, not in another mount namespace). 0 or -EACCES.
 */
static int sv_canon(struct ward_sv_state *s, int obj, const struct stat *st)
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
static bool sv_in(const struct ward_sv_state *s, const struct sv_grant *g,
		  size_t n, const struct stat *st, bool exact_dirs)
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
 * descriptor (@via_fd: a memfd, an O_TMPFILE, a deleted file) is nobody
 * else's any more: allowed. 0 or -EACCES.
 */
static int sv_judge_meta(struct ward_sv_state *s, int obj, bool via_fd)
{
	struct stat st;

	if (fstat(obj, &st) != 0)
		return -EACCES;
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return -EACCES;
	if (via_fd && S_ISREG(st.st_mode) && st.st_nlink == 0)
		return 0;
	if (!s->proc_ok || sv_canon(s, obj, &st) != 0)
		return -EACCES;
	return sv_in(s, s->rw, s->nrw, &st, false) ? 0 : -EACCES;
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

/* --- metadata calls: read once, judge, perform ----------------------------- */

struct sv_timespec {
	int64_t sec;
	int64_t nsec;
};

/* What a metadata call carries besides its object, copied here once. */
struct sv_meta {
	struct sv_timespec ts[2];
	bool now;	 /* the times: NULL */
	bool null_path;	 /* SV_AT with a NULL path (the descriptor) */
	size_t size;	 /* an xattr value, an ioctl's argument */
	size_t usize;	 /* xattr_args, file_attr: the struct's size */
	uint64_t xflags; /* xattr flags */
};

/*
 * Read the times of a utime-family call at @addr (NULL: now) into @m;
 * @op says the layout. 0 or -errno (-EINVAL for a timeval the kernel
 * would refuse).
 */
static int sv_read_times(const struct ward_sv_target *t, uint64_t addr, int op,
			 struct sv_meta *m)
{
	int64_t v[4];
	size_t len = op == SV_OP_UTIME ? 16 : 32;

	m->now = !addr;
	if (!addr)
		return 0;
	if (sv_read(t, addr, v, len) != 0)
		return -EFAULT;
	if (op == SV_OP_UTIME) {
		m->ts[0] = (struct sv_timespec){v[0], 0};
		m->ts[1] = (struct sv_timespec){v[1], 0};
		return 0;
	}
	m->ts[0].sec = v[0];
	m->ts[1].sec = v[2];
	if (op == SV_OP_UTIMES) {
		if (v[1] < 0 || v[1] >= 1000000 || v[3] < 0 || v[3] >= 1000000)
			return -EINVAL;
		m->ts[0].nsec = v[1] * 1000;
		m->ts[1].nsec = v[3] * 1000;
	} else {
		m->ts[0].nsec = v[1];
		m->ts[1].nsec = v[3];
	}
	return 0;
}

/* An xattr value: @size bytes at @addr into s->xval. */
static int sv_read_xval(struct ward_sv_state *s, const struct ward_sv_target *t,
			uint64_t addr, uint64_t size, struct sv_meta *m)
{
	if (size > SV_XATTR_SIZE_MAX)
		return -E2BIG;
	m->size = (size_t)size;
	return sv_read(t, addr, s->xval, m->size);
}

/*
 * An extensible struct of the target's (xattr_args, file_attr): @usize
 * bytes at @addr, at least @min, into s->arg; bytes beyond what this code
 * knows must be zero (the kernel's copy_struct_from_user()).
 */
static int sv_read_struct(struct ward_sv_state *s,
			  const struct ward_sv_target *t, uint64_t addr,
			  uint64_t usize, size_t min, struct sv_meta *m)
{
	size_t i;

	if (usize < min)
		return -EINVAL;
	if (usize > sizeof(s->arg))
		return -E2BIG;
	m->usize = (size_t)usize;
	if (sv_read(t, addr, s->arg, m->usize) != 0)
		return -EFAULT;
	for (i = min; i < m->usize; i++)
		if (s->arg[i])
			return -E2BIG;
	return 0;
}

/* Everything a metadata call needs besides its object, from the target. */
static int sv_meta_args(struct ward_sv_state *s, const struct sv_call *c,
			const uint64_t *a, const struct ward_sv_target *t,
			struct sv_meta *m)
{
	size_t i;
	int ret;

	switch (c->op) {
	case SV_OP_UTIME:
	case SV_OP_UTIMES:
	case SV_OP_UTIMENSAT:
		return sv_read_times(t, a[c->val], c->op, m);
	case SV_OP_SETXATTR:
	case SV_OP_RMXATTR:
	case SV_OP_SETXATTRAT:
	case SV_OP_RMXATTRAT:
		ret = sv_read_str(t, a[c->val], s->xname, sizeof(s->xname),
				  -ERANGE);
		if (ret)
			return ret;
		if (s->xname[0] == '\0')
			return -ERANGE;
		if (c->op == SV_OP_SETXATTR) {
			m->xflags = a[c->val + 3];
			return sv_read_xval(s, t, a[c->val + 1], a[c->val + 2],
					    m);
		}
		if (c->op == SV_OP_SETXATTRAT) {
			uint64_t val;
			uint32_t size, fl;

			/* struct xattr_args {u64 value; u32 size, flags} */
			ret = sv_read_struct(s, t, a[4], a[5], 16, m);
			if (ret)
				return ret;
			memcpy(&val, s->arg, 8);
			memcpy(&size, s->arg + 8, 4);
			memcpy(&fl, s->arg + 12, 4);
			m->xflags = fl;
			return sv_read_xval(s, t, val, size, m);
		}
		return 0;
	case SV_OP_SETATTR:
		/* struct file_attr: 32 bytes (FILE_ATTR_SIZE_VER0 24) */
		return sv_read_struct(s, t, a[2], a[3], 24, m);
	case SV_OP_IOCTL:
#ifdef SV_AUDIT_ARCH
		for (i = 0; i < SV_N(sv_ioctls); i++)
			if (sv_ioctls[i].cmd == (uint32_t)a[1])
				m->size = sv_ioctls[i].size;
#else
		(void)i;
#endif
		if (!m->size)
			return -EINVAL;
		return sv_read(t, a[2], s->arg, m->size);
	default:
		return 0;
	}
}

static int sv_ret(long r)
{
	return r < 0 ? -errno : 0;
}

/*
 * Perform metadata call @c on @obj with the arguments copied in @m.
 * @via_fd: @obj is the copy of the target's own descriptor, and the call
 * is reissued as the target made it with that copy in its place (so an
 * O_PATH descriptor gets the kernel's own EBADF where it would). Else
 * @obj is the O_PATH handle of the object this process resolved, and the
 * change goes through that handle (its /proc/self/fd link, which reaches
 * exactly @obj, also a symbolic link itself). 0 or -errno.
 */
static int sv_perform_meta(struct ward_sv_state *s, const struct sv_call *c,
			   const uint64_t *a, int obj, bool via_fd,
			   const struct sv_meta *m)
{
	const void *times = m->now ? NULL : (const void *)m->ts;
	const char *empty = m->null_path ? NULL : "";
	char link[64];
	struct stat st;
	long r;

	sv_proc_path(link, sizeof(link), 0, "fd", obj);
	switch (c->op) {
	case SV_OP_CHMOD:
		if (via_fd && c->nr == SV_NR_FCHMOD)
			return sv_ret(fchmod(obj, (mode_t)a[c->val]));
		if (via_fd)
			return sv_ret(syscall(c->nr, obj, empty, a[c->val],
					      a[c->flags_arg]));
		if (fstat(obj, &st) != 0)
			return -errno;
		if (S_ISLNK(st.st_mode))
			return -EOPNOTSUPP; /* Linux has no mode on links */
		return sv_ret(fchmodat(AT_FDCWD, link, (mode_t)a[c->val], 0));
	case SV_OP_CHOWN:
		if (via_fd && c->nr == SV_NR_FCHOWN)
			return sv_ret(fchown(obj, (uid_t)a[c->val],
					     (gid_t)a[c->val + 1]));
		if (via_fd)
			return sv_ret(syscall(c->nr, obj, empty, a[c->val],
					      a[c->val + 1], a[c->flags_arg]));
		return sv_ret(fchownat(obj, "", (uid_t)a[c->val],
				       (gid_t)a[c->val + 1], SV_AT_EMPTY_PATH));
	case SV_OP_UTIME:
	case SV_OP_UTIMES:
	case SV_OP_UTIMENSAT:
		if (via_fd)
			return sv_ret(syscall(
			    SYS_utimensat, obj, empty, times,
			    c->op == SV_OP_UTIMENSAT ? a[c->flags_arg] : 0));
		r = syscall(SYS_utimensat, obj, "", times, SV_AT_EMPTY_PATH);
		if (r != 0 && errno == EINVAL) /* before 5.8: the link */
			r = syscall(SYS_utimensat, AT_FDCWD, link, times, 0);
		return sv_ret(r);
	case SV_OP_SETXATTR:
		if (via_fd)
			return sv_ret(syscall(SV_NR_FSETXATTR, obj, s->xname,
					      s->xval, m->size, m->xflags));
		return sv_ret(syscall(SYS_setxattr, link, s->xname, s->xval,
				      m->size, m->xflags));
	case SV_OP_RMXATTR:
		if (via_fd)
			return sv_ret(
			    syscall(SV_NR_FREMOVEXATTR, obj, s->xname));
		return sv_ret(syscall(SYS_removexattr, link, s->xname));
	case SV_OP_SETXATTRAT:
		if (via_fd) {
			uint64_t v = (uint64_t)(uintptr_t)s->xval;

			memcpy(s->arg, &v, 8); /* xattr_args.value: ours */
			return sv_ret(syscall(SV_NR_SETXATTRAT, obj, empty,
					      a[2], s->xname, s->arg,
					      m->usize));
		}
		return sv_ret(syscall(SYS_setxattr, link, s->xname, s->xval,
				      m->size, m->xflags));
	case SV_OP_RMXATTRAT:
		if (via_fd)
			return sv_ret(syscall(SV_NR_REMOVEXATTRAT, obj, empty,
					      a[2], s->xname));
		return sv_ret(syscall(SYS_removexattr, link, s->xname));
	case SV_OP_SETATTR:
		if (via_fd)
			return sv_ret(syscall(SV_NR_FILE_SETATTR, obj, empty,
					      s->arg, m->usize, a[4]));
		return sv_ret(syscall(SV_NR_FILE_SETATTR, AT_FDCWD, link,
				      s->arg, m->usize, 0));
	case SV_OP_IOCTL:
		return sv_ret(
		    ioctl(obj, (unsigned long)(uint32_t)a[1], s->arg));
	default:
		return -EACCES;
	}
}

/* The errors a failed lookup may give back as they are; others: EACCES. */
static int sv_lookup_err(int e)
{
	return e == -ENOENT || e == -ENOTDIR || e == -EBADF ||
		       e == -ENAMETOOLONG || e == -EFAULT
		   ? e
		   : -EACCES;
}

/*
 * Find the object of metadata call @c: *@obj and *@via_fd. A path is read
 * once into s->path and resolved once. 0 or -errno.
 */
static int sv_meta_object(struct ward_sv_state *s, const struct sv_call *c,
			  const uint64_t *a, const struct ward_sv_target *t,
			  struct sv_meta *m, int *obj, bool *via_fd)
{
	unsigned flags = c->flags_arg >= 0 ? (unsigned)a[c->flags_arg] : 0U;
	int dirfd = (int)a[0], base, ret;

	*via_fd = false;
	switch (c->kind) {
	case SV_PATH:
	case SV_LPATH:
		ret = sv_read_str(t, a[0], s->path, sizeof(s->path),
				  -ENAMETOOLONG);
		if (ret)
			return ret;
		*obj = sv_resolve(s, t, -1, s->path, c->kind == SV_PATH, false);
		return *obj < 0 ? sv_lookup_err(*obj) : 0;
	case SV_FD:
	case SV_IOCTL:
		*obj = sv_getfd(t, (long)(int)a[0]);
		*via_fd = true;
		return *obj < 0 ? *obj : 0;
	case SV_AT:
		break;
	default:
		return -EACCES;
	}
	if (!a[1] && (c->op == SV_OP_UTIMES || c->op == SV_OP_UTIMENSAT)) {
		/* utimensat/futimesat(fd, NULL, ...): the descriptor. */
		m->null_path = true;
		*obj = sv_getfd(t, dirfd);
		*via_fd = true;
		return *obj < 0 ? *obj : 0;
	}
	ret = sv_read_str(t, a[1], s->path, sizeof(s->path), -ENAMETOOLONG);
	if (ret)
		return ret;
	if (s->path[0] == '\0' && (flags & SV_AT_EMPTY_PATH)) {
		if (dirfd == SV_AT_FDCWD) {
			/* The cwd: our handle, acted on like a path. */
			*obj = s->proc_ok ? t->ops->dir(t->ctx, WARD_SV_DIR_CWD)
					  : -EACCES;
			return *obj < 0 ? sv_lookup_err(*obj) : 0;
		}
		*obj = sv_getfd(t, dirfd);
		*via_fd = true;
		return *obj < 0 ? *obj : 0;
	}
	base = -1;
	if (s->path[0] != '/' && dirfd != SV_AT_FDCWD) {
		base = sv_getfd(t, dirfd);
		if (base < 0)
			return base;
	}
	*obj = sv_resolve(s, t, base, s->path,
			  !(flags & SV_AT_SYMLINK_NOFOLLOW), false);
	if (base >= 0)
		close(base);
	return *obj < 0 ? sv_lookup_err(*obj) : 0;
}

/* A metadata call: read, resolve, judge, then perform or refuse. */
static int sv_meta_call(struct ward_sv_state *s, const struct sv_call *c,
			const struct ward_sv_notif *n,
			const struct ward_sv_target *t)
{
	struct sv_meta m;
	bool via_fd;
	int obj = -1, ret;

	memset(&m, 0, sizeof(m));
	ret = sv_meta_object(s, c, n->args, t, &m, &obj, &via_fd);
	if (ret)
		return ret;
	ret = sv_meta_args(s, c, n->args, t, &m);
	if (ret == 0)
		ret = sv_judge_meta(s, obj, via_fd);
	/* Everything was read from the target: is it still the one that
	 * made the call (a pid read in /proc may have been reused)? */
	if (ret == 0)
		ret = t->ops->valid(t->ctx);
	if (ret == 0)
		ret = sv_perform_meta(s, c, n->args, obj, via_fd, &m);
	close(obj);
	return ret;
}

/* --- socket calls: the destination judged, the call performed here -------- */

#define SV_ADDR_MAX 128 /* sizeof(struct sockaddr_storage) */

/* A copy of the target's socket, and what it is (asked once, lazily:
 * most calls need only some of it). */
struct sv_sock {
	int fd;
	int fl;			    /* its file's status flags */
	int domain, type, protocol; /* -2: not asked yet */
	bool blocking;		    /* the file has no O_NONBLOCK */
};

static int sv_sockopt(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, opt, &v, &len) != 0)
		return -1;
	return v;
}

static void sv_sock_info(struct sv_sock *k, int fd)
{
	k->fd = fd;
	k->fl = fcntl(fd, F_GETFL);
	k->domain = k->type = k->protocol = -2;
	k->blocking = k->fl >= 0 && !(k->fl & O_NONBLOCK);
}

static int sv_domain(struct sv_sock *k)
{
	if (k->domain == -2)
		k->domain = sv_sockopt(k->fd, SO_DOMAIN);
	return k->domain;
}

static int sv_type(struct sv_sock *k)
{
	if (k->type == -2)
		k->type = sv_sockopt(k->fd, SO_TYPE);
	return k->type;
}

static bool sv_is_tcp(struct sv_sock *k)
{
	int d = sv_domain(k);

	if ((d != AF_INET && d != AF_INET6) || sv_type(k) != SOCK_STREAM)
		return false;
	if (k->protocol == -2)
		k->protocol = sv_sockopt(k->fd, SO_PROTOCOL);
	return k->protocol == IPPROTO_TCP;
}

static bool sv_inet(int family)
{
	return family == AF_INET || family == AF_INET6;
}

static bool sv_net_closed(const struct ward_sv_state *s)
{
	return s->net == WARD_LL_NET_OFF || s->net == WARD_LL_NET_CONNECT;
}

/* The deadline of a blocking call on @fd (SO_SNDTIMEO), 0: none. */
static int64_t sv_deadline(int fd)
{
	struct timeval tv = {0, 0};
	socklen_t len = sizeof(tv);

	if (getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) != 0 ||
	    (tv.tv_sec == 0 && tv.tv_usec == 0))
		return 0;
	return sv_now_ms() + (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* An address the call names: our copy, and what we pass instead. */
struct sv_addr {
	unsigned char in[SV_ADDR_MAX];
	size_t inlen;
	struct sockaddr_un out; /* a pathname socket: its handle's link */
	const void *use;	/* NULL: no address */
	socklen_t uselen;
	int holder; /* the O_PATH handle @out names, -1 */
};

/* Read the address at @addr (@len bytes) into @sa. 0 or -errno. */
static int sv_read_addr(const struct ward_sv_target *t, uint64_t addr,
			uint64_t len, struct sv_addr *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->holder = -1;
	if (!addr)
		return 0;
	if (len > SV_ADDR_MAX)
		return -EINVAL;
	sa->inlen = (size_t)len;
	if (sv_read(t, addr, sa->in, sa->inlen) != 0)
		return -EFAULT;
	sa->use = sa->in;
	sa->uselen = (socklen_t)sa->inlen;
	return 0;
}

/* Was the socket file @obj created by the call's processes (bind)? */
static bool sv_made_here(const struct ward_sv_state *s, int obj)
{
	struct sv_statx sx;
	size_t i;

	memset(&sx, 0, sizeof(sx));
	if (syscall(__NR_statx, obj, "", SV_AT_EMPTY_PATH,
		    SV_STATX_BASIC | SV_STATX_BTIME, &sx) != 0 ||
	    !(sx.mask & SV_STATX_BTIME))
		return false;
	for (i = 0; i < s->nmade; i++) {
		const struct sv_made *m = &s->made[i];

		if (m->ino == sx.ino && m->dev_major == sx.dev_major &&
		    m->dev_minor == sx.dev_minor && m->bsec == sx.btime.sec &&
		    m->bnsec == sx.btime.nsec)
			return true;
	}
	return false;
}

/*
 * A pathname unix socket @path: reachable when the call's own processes
 * made it (bind, judged here: device, inode and birth time) or when
 * --allow-unix names it (or a directory above it). Nothing else, wherever
 * it lives. On success sa->out names the socket through this process's
 * handle of it, so the kernel connects to exactly what was checked.
 */
static int sv_unix_dest(struct ward_sv_state *s, const struct ward_sv_target *t,
			struct sv_addr *sa)
{
	struct stat st;
	int obj;

	obj = sv_resolve(s, t, -1, s->path, true, false);
	if (obj < 0)
		return obj == -ENOENT || obj == -ENOTDIR ? obj : -EACCES;
	if (fstat(obj, &st) != 0) {
		close(obj);
		return -EACCES;
	}
	if (!S_ISSOCK(st.st_mode)) {
		close(obj);
		return -ECONNREFUSED; /* the kernel's answer */
	}
	if (!sv_made_here(s, obj) && !(sv_canon(s, obj, &st) == 0 &&
				       sv_in(s, s->ok, s->nok, &st, true))) {
		close(obj);
		return -EACCES;
	}
	memset(&sa->out, 0, sizeof(sa->out));
	sa->out.sun_family = AF_UNIX;
	sv_proc_path(sa->out.sun_path, sizeof(sa->out.sun_path), 0, "fd", obj);
	sa->use = &sa->out;
	sa->uselen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				 strlen(sa->out.sun_path) + 1);
	sa->holder = obj;
	return 0;
}

/*
 * Judge the destination @sa of a call on socket @k (@send: sendto,
 * sendmsg; else connect). 0 (sa->use is what to pass) or -errno; refused
 * inet destinations are counted for the status channel.
 */
static int sv_dest(struct ward_sv_state *s, const struct ward_sv_target *t,
		   struct sv_sock *k, struct sv_addr *sa, bool send)
{
	unsigned short family;
	int ret;

	if (!sa->use || sa->inlen < sizeof(family))
		return 0;
	memcpy(&family, sa->in, sizeof(family));
	if (family == AF_UNIX) {
		ret = ward_sv_sockaddr_path(sa->in, sa->inlen, s->path,
					    sizeof(s->path));
		if (ret <= 0)
			return ret; /* abstract, unnamed: Landlock's scope */
		/* A connected-mode unix socket never looks a name up when
		 * it sends (stream: an error, seqpacket: ignored). */
		if (send && sv_domain(k) == AF_UNIX && sv_type(k) != SOCK_DGRAM)
			return 0;
		return sv_unix_dest(s, t, sa);
	}
	/* Whether it is TCP matters only where the network is closed. */
	ret = ward_sv_net_dest(s->net, s->net_port, sa->in, sa->inlen,
			       sv_net_closed(s) && sv_is_tcp(k));
	if (ret < 0 && send && sv_is_tcp(k)) {
		/* TCP ignores a send's address (Fast Open, which would not,
		 * is refused by the network filter): drop it. */
		sa->use = NULL;
		sa->uselen = 0;
		return 0;
	}
	if (ret < 0)
		sv_note_refused(s, sa->in, sa->inlen, ret);
	return ret > 0 ? 0 : ret;
}

static void sv_reply(struct ward_sv_verdict *v, int64_t r)
{
	v->kind = WARD_SV_REPLY;
	v->val = r < 0 ? 0 : r;
	v->error = r < 0 ? (int)r : 0;
}

/*
 * Wait on @k for @events before answering (a blocking call that would
 * block): the verdict takes the socket copy.
 */
static void sv_wait(struct ward_sv_verdict *v, struct sv_sock *k, int kind,
		    int timeout_error)
{
	v->kind = kind;
	v->fd = k->fd;
	v->deadline_ms = sv_deadline(k->fd);
	v->timeout_error = timeout_error;
	k->fd = -1;
}

/*
 * connect() on the copy. A blocking socket is made non-blocking for the
 * moment of the call (the file's flags are shared with the target: a
 * sibling thread could see O_NONBLOCK for those microseconds), so one slow
 * connect never stalls the supervisor: the connect completes while the
 * target waits, as in the kernel.
 */
static void sv_connect(struct sv_sock *k, const struct sv_addr *sa,
		       struct ward_sv_verdict *v)
{
	int r, e;

	if (k->blocking)
		(void)fcntl(k->fd, F_SETFL, k->fl | O_NONBLOCK);
	r = connect(k->fd, (const struct sockaddr *)sa->use, sa->uselen);
	e = errno;
	if (k->blocking)
		(void)fcntl(k->fd, F_SETFL, k->fl);
	if (r == 0) {
		sv_reply(v, 0);
	} else if (k->blocking && (e == EINPROGRESS || e == EALREADY)) {
		struct pollfd p = {.fd = k->fd, .events = POLLOUT};

		/* Loopback answers at once, mostly: no trip through the
		 * loop then. */
		if (poll(&p, 1, 0) == 1)
			sv_reply(v, ward_sv_connect_result(k->fd));
		else
			sv_wait(v, k, WARD_SV_WAIT_CONNECT, -EINPROGRESS);
	} else if (k->blocking && e == EAGAIN && sv_domain(k) == AF_UNIX) {
		/* A full backlog: a blocking connect waits for room. */
		sv_wait(v, k, WARD_SV_WAIT_REDO, -EAGAIN);
		close(v->fd);
		v->fd = -1;
		v->retry_ms = 10;
	} else {
		sv_reply(v, -e);
	}
}

int ward_sv_connect_result(int fd)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) != 0)
		return -errno;
	return -e;
}

/*
 * bind() of a pathname unix socket: the parent directory resolved once,
 * the socket file created in it through this process's working
 * directory (so a renamed or re-pointed parent cannot redirect it), under
 * the command's Landlock rules (MAKE_SOCK), and remembered by device,
 * inode and birth time — the only way a socket becomes "the call's own".
 */
static int sv_bind_path(struct ward_sv_state *s, const struct ward_sv_target *t,
			struct sv_sock *k)
{
	struct sockaddr_un un;
	struct sv_statx sx;
	struct timespec t0;
	char *slash = strrchr(s->path, '/');
	const char *base = slash ? slash + 1 : s->path;
	size_t blen;
	int dir, r, e;

	if (*base == '\0')
		return -ENOENT;
	if (slash == s->path)
		dir = sv_resolve(s, t, -1, "/", true, true);
	else if (slash) {
		*slash = '\0';
		dir = sv_resolve(s, t, -1, s->path, true, true);
		*slash = '/';
	} else {
		dir = sv_resolve(s, t, -1, ".", true, true);
	}
	if (dir < 0)
		return sv_lookup_err(dir);
	r = t->ops->valid(t->ctx);
	if (r) {
		close(dir);
		return r;
	}
	/* At most 108 bytes (from one sockaddr): the NUL only if it fits,
	 * as the kernel takes a full sun_path without one. */
	blen = strlen(base);
	if (blen > sizeof(un.sun_path))
		blen = sizeof(un.sun_path);
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	memcpy(un.sun_path, base, blen);
	/* The coarse clock lags every inode stamp: a file born after this
	 * read cannot carry an earlier time. */
	clock_gettime(CLOCK_REALTIME_COARSE, &t0);
	if (fchdir(dir) != 0) {
		e = -errno;
		close(dir);
		return e;
	}
	r = bind(k->fd, (struct sockaddr *)&un,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + blen +
			     (blen < sizeof(un.sun_path))));
	e = r ? -errno : 0;
	(void)chdir("/");
	memset(&sx, 0, sizeof(sx));
	/* Remembered only when it is certainly the file bind() made: a
	 * socket, born after t0 (something renamed over the name since
	 * would be older), on a file system that records birth times. */
	if (r == 0 && s->nmade < SV_MADE_MAX &&
	    syscall(__NR_statx, dir, base, SV_AT_SYMLINK_NOFOLLOW,
		    SV_STATX_BASIC | SV_STATX_BTIME, &sx) == 0 &&
	    (sx.mask & SV_STATX_BTIME) && (sx.mode & S_IFMT) == S_IFSOCK &&
	    (sx.btime.sec > t0.tv_sec ||
	     (sx.btime.sec == t0.tv_sec && sx.btime.nsec >= t0.tv_nsec))) {
		struct sv_made *m = &s->made[s->nmade++];

		m->dev_major = sx.dev_major;
		m->dev_minor = sx.dev_minor;
		m->ino = sx.ino;
		m->bsec = sx.btime.sec;
		m->bnsec = sx.btime.nsec;
	}
	close(dir);
	return e;
}

static int sv_bind(struct ward_sv_state *s, const struct ward_sv_target *t,
		   struct sv_sock *k, struct sv_addr *sa)
{
	unsigned short family = 0;
	int r;

	if (sa->inlen >= sizeof(family))
		memcpy(&family, sa->in, sizeof(family));
	if (family == AF_UNIX) {
		r = ward_sv_sockaddr_path(sa->in, sa->inlen, s->path,
					  sizeof(s->path));
		if (r < 0)
			return r;
		if (r == 1)
			return sv_bind_path(s, t, k);
	} else if (sv_inet(family) && sv_net_closed(s)) {
		/* No address of the host's is the command's to take. */
		return -EADDRNOTAVAIL;
	}
	r = t->ops->valid(t->ctx);
	if (r)
		return r;
	return sv_ret(
	    bind(k->fd, (const struct sockaddr *)sa->use, sa->uselen));
}

/* The data and control of one message, gathered here. */
struct sv_msg {
	struct msghdr h;
	struct iovec iov;
	struct sv_addr sa;
	bool dgram;
};

/* Close the SCM_RIGHTS copies of the last message. */
static void sv_drop_fds(struct ward_sv_state *s)
{
	while (s->nctl_fds)
		close(s->ctl_fds[--s->nctl_fds]);
}

/*
 * Control data: copied; SCM_RIGHTS descriptors replaced by copies of the
 * target's (the kernel passes the same files); SCM_CREDENTIALS refused —
 * the kernel checks them against the sender, which would be this
 * process. 0 or -errno.
 */
static int sv_read_ctl(struct ward_sv_state *s, const struct ward_sv_target *t,
		       uint64_t addr, uint64_t len, struct sv_msg *m)
{
	struct cmsghdr *c;

	if (!len)
		return 0;
	if (len > SV_CTL_MAX)
		return -ENOBUFS;
	if (sv_read(t, addr, s->ctl, (size_t)len) != 0)
		return -EFAULT;
	m->h.msg_control = s->ctl;
	m->h.msg_controllen = (size_t)len;
	for (c = CMSG_FIRSTHDR(&m->h); c; c = CMSG_NXTHDR(&m->h, c)) {
		size_t i, nfd;
		int *fds = (int *)(void *)CMSG_DATA(c);

		if (c->cmsg_level != SOL_SOCKET)
			continue;
		/* A header claiming more than the buffer holds: the
		 * kernel's CMSG_OK() refuses it too. */
		if (c->cmsg_len < sizeof(*c) ||
		    c->cmsg_len > (size_t)(s->ctl + len - (unsigned char *)c))
			return -EINVAL;
		if (c->cmsg_type == SV_SCM_CREDENTIALS)
			return -EPERM;
		if (c->cmsg_type != SV_SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			int fd;

			if (s->nctl_fds >= SV_N(s->ctl_fds))
				return -ETOOMANYREFS;
			fd = sv_getfd(t, fds[i]);
			if (fd < 0)
				return fd;
			s->ctl_fds[s->nctl_fds++] = fd;
			fds[i] = fd;
		}
	}
	return 0;
}

/*
 * The data of @niov iovecs at @iov_addr gathered into s->data: at most
 * SV_DATA_MAX bytes (a datagram larger than that is refused: EMSGSIZE; a
 * stream sends what fits and returns the short count, as a signal would).
 */
static int sv_read_data(struct ward_sv_state *s, const struct ward_sv_target *t,
			uint64_t iov_addr, uint64_t niov, struct sv_msg *m)
{
	size_t i, got = 0;

	if (niov > SV_UIO_MAXIOV)
		return -EMSGSIZE;
	if (niov && sv_read(t, iov_addr, s->iov, (size_t)niov * 16) != 0)
		return -EFAULT;
	for (i = 0; i < niov; i++) {
		uint64_t base, len;

		memcpy(&base, s->iov + i * 16, 8);
		memcpy(&len, s->iov + i * 16 + 8, 8);
		if ((int64_t)len < 0)
			return -EINVAL;
		if (len > SV_DATA_MAX - got) {
			if (m->dgram)
				return -EMSGSIZE;
			len = SV_DATA_MAX - got;
		}
		if (sv_read(t, base, s->data + got, (size_t)len) != 0)
			return -EFAULT;
		got += (size_t)len;
		if (got == SV_DATA_MAX && !m->dgram)
			break;
	}
	m->iov.iov_base = s->data;
	m->iov.iov_len = got;
	m->h.msg_iov = &m->iov;
	m->h.msg_iovlen = 1;
	return 0;
}

/*
 * One message of sendmsg/sendmmsg (struct msghdr at @addr) read, judged
 * and sent on @k: bytes sent or -errno. The target has been checked still
 * to be the caller (valid) before the send.
 */
static ssize_t sv_send_one(struct ward_sv_state *s,
			   const struct ward_sv_target *t, struct sv_sock *k,
			   uint64_t addr, int flags)
{
	/* struct msghdr (64-bit): name 0, namelen 8, iov 16, iovlen 24,
	 * control 32, controllen 40, flags 48. */
	uint64_t hdr[7];
	uint32_t namelen;
	struct sv_msg m;
	ssize_t r;

	memset(&m, 0, sizeof(m));
	m.dgram = sv_type(k) == SOCK_DGRAM;
	if (sv_read(t, addr, hdr, sizeof(hdr)) != 0)
		return -EFAULT;
	memcpy(&namelen, &hdr[1], 4);
	r = sv_read_addr(t, hdr[0], namelen, &m.sa);
	if (r == 0)
		r = sv_read_data(s, t, hdr[2], hdr[3], &m);
	if (r == 0)
		r = sv_read_ctl(s, t, hdr[4], hdr[5], &m);
	if (r == 0)
		r = sv_dest(s, t, k, &m.sa, true);
	if (r == 0)
		r = t->ops->valid(t->ctx);
	if (r == 0) {
		m.h.msg_name = (void *)m.sa.use;
		m.h.msg_namelen = m.sa.uselen;
		r = sendmsg(k->fd, &m.h, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0)
			r = -errno;
	}
	sv_drop_fds(s);
	if (m.sa.holder >= 0)
		close(m.sa.holder);
	return r;
}

/* sendto() with an address: one message of one buffer. */
static ssize_t sv_sendto(struct ward_sv_state *s,
			 const struct ward_sv_target *t, struct sv_sock *k,
			 const uint64_t *a)
{
	struct sv_addr sa;
	size_t len = (size_t)a[2];
	ssize_t r;

	if ((int64_t)a[2] < 0)
		return -EINVAL;
	if (len > SV_DATA_MAX) {
		if (sv_type(k) == SOCK_DGRAM)
			return -EMSGSIZE;
		len = SV_DATA_MAX;
	}
	r = sv_read_addr(t, a[4], a[5] & 0xffffffffU, &sa);
	if (r == 0)
		r = sv_read(t, a[1], s->data, len);
	if (r == 0)
		r = sv_dest(s, t, k, &sa, true);
	if (r == 0)
		r = t->ops->valid(t->ctx);
	if (r == 0) {
		r = sendto(k->fd, s->data, len,
			   (int)a[3] | MSG_DONTWAIT | MSG_NOSIGNAL,
			   (const struct sockaddr *)sa.use, sa.uselen);
		if (r < 0)
			r = -errno;
	}
	if (sa.holder >= 0)
		close(sa.holder);
	return r;
}

/* sendmmsg(): message by message, each msg_len written back. */
static ssize_t sv_sendmmsg(struct ward_sv_state *s,
			   const struct ward_sv_target *t, struct sv_sock *k,
			   const uint64_t *a)
{
	uint64_t vlen = a[2] & 0xffffffffU, i;
	ssize_t r = 0;

	if (vlen > SV_UIO_MAXIOV)
		vlen = SV_UIO_MAXIOV;
	for (i = 0; i < vlen; i++) {
		uint64_t hdr = a[1] + i * 64; /* struct mmsghdr: 64 bytes */
		uint32_t sent;

		r = sv_send_one(s, t, k, hdr, (int)a[3]);
		if (r < 0)
			break;
		sent = (uint32_t)r;
		if (t->ops->write(t->ctx, hdr + 56, &sent, 4) != 4) {
			r = -EFAULT;
			break;
		}
	}
	return i ? (ssize_t)i : r;
}

/*
 * A socket call: the socket copied (pidfd_getfd), its address read once
 * and judged, and the call performed here on the copy with our copy of
 * the address. Sends that would block on a blocking socket wait for it
 * to be writable and are judged again then.
 */
static void sv_sock_call(struct ward_sv_state *s, const struct sv_call *c,
			 const struct ward_sv_notif *n,
			 const struct ward_sv_target *t,
			 struct ward_sv_verdict *v)
{
	const uint64_t *a = n->args;
	struct sv_sock k;
	struct sv_addr sa;
	int fd, flags = 0;
	ssize_t r;

	fd = sv_getfd(t, (long)(int)a[0]);
	if (fd < 0) {
		sv_reply(v, fd);
		return;
	}
	sv_sock_info(&k, fd);
	sa.holder = -1;
	switch (c->kind) {
	case SV_CONNECT:
		r = sv_read_addr(t, a[1], a[2] & 0xffffffffU, &sa);
		if (r == 0 && !sa.use)
			r = -EFAULT;
		if (r == 0)
			r = sv_dest(s, t, &k, &sa, false);
		if (r == 0)
			r = t->ops->valid(t->ctx);
		if (r == 0)
			sv_connect(&k, &sa, v);
		else
			sv_reply(v, r);
		goto out_close;
	case SV_BIND:
		r = sv_read_addr(t, a[1], a[2] & 0xffffffffU, &sa);
		if (r == 0 && !sa.use)
			r = -EFAULT;
		if (r == 0)
			r = sv_bind(s, t, &k, &sa);
		sv_reply(v, r);
		goto out_close;
	case SV_LISTEN:
		/* Listening autobinds an inet socket to a host port. */
		if (sv_net_closed(s) && sv_inet(sv_domain(&k)))
			r = -EADDRNOTAVAIL;
		else if ((r = t->ops->valid(t->ctx)) == 0)
			r = sv_ret(listen(k.fd, (int)a[1]));
		sv_reply(v, r);
		goto out_close;
	case SV_SENDTO:
		flags = (int)a[3];
		r = sv_sendto(s, t, &k, a);
		break;
	case SV_SENDMSG:
		flags = (int)a[2];
		r = sv_send_one(s, t, &k, a[1], flags);
		break;
	case SV_SENDMMSG:
		flags = (int)a[3];
		r = sv_sendmmsg(s, t, &k, a);
		break;
	default:
		r = -EACCES;
		break;
	}
	if (r == -EAGAIN && k.blocking && !(flags & MSG_DONTWAIT)) {
		sv_wait(v, &k, WARD_SV_WAIT_REDO, -EAGAIN);
		return;
	}
	/* The kernel would have sent the sender SIGPIPE. */
	if (r == -EPIPE && !(flags & MSG_NOSIGNAL) && t->ops->signal)
		(void)t->ops->signal(t->ctx, SIGPIPE);
	sv_reply(v, r);
out_close:
	if (sa.holder >= 0)
		close(sa.holder);
	if (k.fd >= 0)
		close(k.fd);
}

void ward_sv_judge(struct ward_sv_state *s, const struct ward_sv_notif *n,
		   const struct ward_sv_target *t, struct ward_sv_verdict *v)
{
	const struct sv_call *c = sv_find(n->nr);

	memset(v, 0, sizeof(*v));
	v->fd = -1;
#ifdef SV_AUDIT_ARCH
	if (n->arch != SV_AUDIT_ARCH)
		c = NULL;
#endif
	if (!c || c->kind == SV_REFUSE) {
		sv_reply(v, -EACCES);
		return;
	}
	switch (c->kind) {
	case SV_CONNECT:
	case SV_BIND:
	case SV_LISTEN:
	case SV_SENDTO:
	case SV_SENDMSG:
	case SV_SENDMMSG:
		sv_sock_call(s, c, n, t, v);
		return;
	default:
		sv_reply(v, sv_meta_call(s, c, n, t));
		return;
	}
}

/* --- the real target: a thread of the supervised tree ---------------------- */

struct sv_real {
	uint32_t pid; /* the calling thread */
	int pidfd;    /* of that thread, opened on first use (or cached) */
	bool cached;  /* pidfd is the loop's, from an earlier call */
	int lfd;
	uint64_t id;
};

static ssize_t sv_real_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct sv_real *r = ctx;
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	n = syscall(SYS_process_vm_readv, (pid_t)r->pid, &local, 1UL, &remote,
		    1UL, 0UL);
	return n < 0 ? -errno : n;
}

static ssize_t sv_real_write(void *ctx, uint64_t addr, const void *buf,
			     size_t len)
{
	struct sv_real *r = ctx;
	struct iovec local = {(void *)(uintptr_t)buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	ssize_t n;

	n = syscall(SYS_process_vm_writev, (pid_t)r->pid, &local, 1UL, &remote,
		    1UL, 0UL);
	return n < 0 ? -errno : n;
}

static int sv_real_getfd(void *ctx, int fd)
{
	struct sv_real *r = ctx;
	int copy;

again:
	if (r->pidfd < 0) {
		/* The thread itself (6.9): its descriptor table, which a
		 * clone() without CLONE_FILES keeps apart. Before 6.9 only
		 * a thread-group leader can be named; another thread's
		 * calls then fail closed. */
		r->pidfd = (int)syscall(__NR_pidfd_open, (pid_t)r->pid,
					(unsigned)SV_PIDFD_THREAD);
		if (r->pidfd < 0 && errno == EINVAL)
			r->pidfd =
			    (int)syscall(__NR_pidfd_open, (pid_t)r->pid, 0U);
		if (r->pidfd < 0)
			return errno == ESRCH ? -ESRCH : -EACCES;
	}
	copy = (int)syscall(__NR_pidfd_getfd, r->pidfd, fd, 0U);
	if (copy < 0 && errno == ESRCH && r->cached) {
		/* The cached thread is gone and its number reused. */
		r->pidfd = -1;
		r->cached = false;
		goto again;
	}
	if (copy < 0)
		return errno == EBADF ? -EBADF : -EACCES;
	return copy;
}

static int sv_real_dir(void *ctx, int which)
{
	struct sv_real *r = ctx;
	char link[64];
	int fd;

	sv_proc_path(link, sizeof(link), r->pid,
		     which == WARD_SV_DIR_ROOT ? "root" : "cwd", -1);
	fd = open(link, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

static int sv_real_valid(void *ctx)
{
	struct sv_real *r = ctx;
	uint64_t id = r->id;

	return ioctl(r->lfd, SV_IOCTL_NOTIF_ID_VALID, &id) == 0 ? 0 : -ENOENT;
}

static int sv_real_signal(void *ctx, int sig)
{
	struct sv_real *r = ctx;

	return kill((pid_t)r->pid, sig) == 0 ? 0 : -errno;
}

static const struct ward_sv_target_ops sv_real_ops = {
    .read = sv_real_read,
    .write = sv_real_write,
    .getfd = sv_real_getfd,
    .dir = sv_real_dir,
    .valid = sv_real_valid,
    .signal = sv_real_signal,
};

/* --- the supervisor process ------------------------------------------------ */

#define SV_PENDING_MAX 64

/* A call waiting for its socket (WAIT_CONNECT, WAIT_REDO). */
struct sv_pending {
	struct ward_sv_notif n;
	int kind;
	int fd;
	int64_t deadline; /* 0: none */
	int64_t retry_at; /* REDO without fd */
	int timeout_error;
};

struct sv_loop {
	struct ward_sv_state *s;
	int lfd;
	uint32_t cpid; /* the last caller, and its pidfd (-1: none) */
	int cpidfd;
	int report; /* -1: none */
	uint32_t reported;
	struct sv_pending pend[SV_PENDING_MAX];
	size_t npend;
	const struct ward_sv_host *host; /* NULL: serve until POLLHUP */
};

static void sv_send(int lfd, uint64_t id, int64_t val, int error)
{
	struct sv_resp resp;

	memset(&resp, 0, sizeof(resp));
	resp.id = id;
	resp.val = error ? 0 : val;
	resp.error = error;
	(void)ioctl(lfd, SV_IOCTL_NOTIF_SEND, &resp);
}

/*
 * The record to the status channel: after each of the first 16 refusals,
 * then at every power of two, and at exit (a supervisor killed by the
 * keeper's sweep writes no last record: the count read is then a lower
 * bound past 16).
 */
static void sv_report(struct sv_loop *l, bool last)
{
	struct ward_sv_report rec;

	if (l->report < 0 || !ward_sv_state_report(l->s, &rec) ||
	    rec.count == l->reported)
		return;
	if (!last && rec.count > 16 && (rec.count & (rec.count - 1)))
		return;
	if (write(l->report, &rec, sizeof(rec)) == (ssize_t)sizeof(rec))
		l->reported = rec.count;
}

/*
 * Judge @n and answer it, or park it (a blocking call that would block).
 * @deadline: a parked call's own, kept when it is judged again.
 */
static void sv_handle(struct sv_loop *l, const struct ward_sv_notif *n,
		      int64_t deadline)
{
	struct sv_real real = {n->pid, -1, false, l->lfd, n->id};
	struct ward_sv_target t = {&sv_real_ops, &real};
	struct ward_sv_verdict v;
	struct sv_pending *p;

	/* The same thread calls again and again: keep its pidfd. */
	if (l->cpidfd >= 0 && l->cpid == n->pid) {
		real.pidfd = l->cpidfd;
		real.cached = true;
	}
	ward_sv_judge(l->s, n, &t, &v);
	if (real.pidfd >= 0 && !real.cached) {
		if (l->cpidfd >= 0)
			close(l->cpidfd);
		l->cpid = n->pid;
		l->cpidfd = real.pidfd;
	} else if (real.pidfd < 0 && l->cpidfd >= 0 && l->cpid == n->pid) {
		close(l->cpidfd); /* it was stale */
		l->cpidfd = -1;
	}
	sv_report(l, false);
	if (v.kind == WARD_SV_REPLY) {
		sv_send(l->lfd, n->id, v.val, v.error);
		return;
	}
	if (l->npend == SV_PENDING_MAX) {
		if (v.fd >= 0)
			close(v.fd);
		sv_send(l->lfd, n->id, 0, -ENOBUFS);
		return;
	}
	p = &l->pend[l->npend++];
	p->n = *n;
	p->kind = v.kind;
	p->fd = v.fd;
	p->deadline = deadline ? deadline : v.deadline_ms;
	p->retry_at = v.fd < 0 ? sv_now_ms() + v.retry_ms : 0;
	p->timeout_error = v.timeout_error;
}

static void sv_unpark(struct sv_loop *l, size_t i)
{
	if (l->pend[i].fd >= 0)
		close(l->pend[i].fd);
	l->pend[i] = l->pend[--l->npend];
}

/* A parked call whose socket is ready, whose timer fired, or that is
 * gone (the target was interrupted: the notification is no more). */
static void sv_wake(struct sv_loop *l, size_t i, bool ready, int64_t now)
{
	struct sv_pending p = l->pend[i];
	uint64_t id = p.n.id;

	if (ioctl(l->lfd, SV_IOCTL_NOTIF_ID_VALID, &id) != 0) {
		sv_unpark(l, i);
		return;
	}
	if (ready && p.kind == WARD_SV_WAIT_CONNECT) {
		sv_send(l->lfd, id, 0, ward_sv_connect_result(p.fd));
		sv_unpark(l, i);
	} else if (ready || (p.retry_at && p.retry_at <= now)) {
		sv_unpark(l, i);
		if (p.deadline && p.deadline <= now)
			sv_send(l->lfd, id, 0, p.timeout_error);
		else
			sv_handle(l, &p.n, p.deadline);
	} else if (p.deadline && p.deadline <= now) {
		sv_send(l->lfd, id, 0, p.timeout_error);
		sv_unpark(l, i);
	}
}

/* The poll timeout: the nearest timer, and at most 250 ms while calls are
 * parked (to notice interrupted ones). */
static int sv_timeout(const struct sv_loop *l, int64_t now)
{
	int64_t t = -1;
	size_t i;

	for (i = 0; i < l->npend; i++) {
		const struct sv_pending *p = &l->pend[i];
		int64_t at = p->retry_at;

		if (p->deadline && (!at || p->deadline < at))
			at = p->deadline;
		at = at ? at - now : 250;
		if (at < 0)
			at = 0;
		if (t < 0 || at < t)
			t = at;
	}
	return t < 0 ? -1 : (int)(t > 250 ? 250 : t);
}

/*
 * Serve notifications until no process uses the filter any more (no
 * host), or until the host's ready() says the call is over. Returns 0,
 * or -errno when the listener failed while its users may still call (the
 * caller must end them: their judged calls would wait or fail).
 */
static int sv_serve(struct sv_loop *l)
{
	struct pollfd pfd[SV_PENDING_MAX + 2];
	struct ward_sv_notif req;
	const struct ward_sv_host *h = l->host;
	bool hup = l->lfd < 0; /* no listener: the host alone */

	for (;;) {
		size_t i, np = 0, at[SV_PENDING_MAX];
		int64_t now = sv_now_ms();
		int n;

		/* A negative fd is skipped by poll: the listener once every
		 * user of the filter is gone, while the host still waits. */
		pfd[np++] =
		    (struct pollfd){.fd = hup ? -1 : l->lfd, .events = POLLIN};
		if (h)
			pfd[np++] =
			    (struct pollfd){.fd = h->fd, .events = POLLIN};
		for (i = 0; i < l->npend; i++) {
			at[i] = 0;
			if (l->pend[i].fd < 0)
				continue;
			at[i] = np;
			pfd[np++] = (struct pollfd){.fd = l->pend[i].fd,
						    .events = POLLOUT};
		}
		n = poll(pfd, np, sv_timeout(l, now));
		if (n < 0 && errno != EINTR)
			return -errno;
		now = sv_now_ms();
		/* Parked calls first (from the end: waking may unpark). */
		for (i = l->npend; i-- > 0;)
			sv_wake(l, i, at[i] && n > 0 && pfd[at[i]].revents,
				now);
		if (n <= 0)
			continue;
		if (h && pfd[1].revents && h->ready(h->ctx))
			return 0;
		if (!pfd[0].revents)
			continue;
		if (!(pfd[0].revents & POLLIN)) {
			/* POLLHUP: every user of the filter is gone. */
			if (!h)
				return 0;
			hup = true;
			continue;
		}
		memset(&req, 0, sizeof(req));
		if (ioctl(l->lfd, SV_IOCTL_NOTIF_RECV, &req) != 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			return -errno;
		}
		sv_handle(l, &req, 0);
	}
}

/* Write all of @len bytes to the socketpair, retrying EINTR (a peer that
 * died is an error, not a SIGPIPE). */
static int sv_fd_write(int fd, const void *buf, size_t len)
{
	ssize_t n;

	do {
		n = send(fd, buf, len, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

static int sv_fd_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	do {
		n = read(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
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

/*
 * The listener hand-over, on a socketpair from the command's side
 * (ward_sv_arm) to the supervisor's (ward_sv_take): the listener's number
 * in the command (one int; a send without an address is the one the
 * command's new filter lets through unjudged — a sendmsg carrying it as
 * SCM_RIGHTS would wait for a supervisor that has no listener yet), which
 * the supervisor copies with pidfd_getfd() and answers with one int, 0 or
 * the errno of a failed take. The command waits for the answer before
 * anything else: it cannot exec before the listener is in the
 * supervisor's hands.
 */
int ward_sv_take(int sock, pid_t target, char *err, size_t err_len)
{
	int num = -1, pidfd, lfd, e = 0;

	if (sv_fd_read(sock, &num, sizeof(num)) != 0)
		return sv_err(err, err_len,
			      "supervisor: the command ended before handing "
			      "over its listener",
			      ESRCH);
	pidfd = (int)syscall(__NR_pidfd_open, target, 0U);
	lfd = pidfd < 0 ? -1 : (int)syscall(__NR_pidfd_getfd, pidfd, num, 0U);
	if (lfd < 0)
		e = errno;
	if (pidfd >= 0)
		close(pidfd);
	if (lfd < 0) {
		(void)sv_fd_write(sock, &e, sizeof(e));
		return sv_err(err, err_len,
			      "supervisor: cannot take the listener", e);
	}
	/* Linux 6.6: wake the supervisor on the caller's CPU and switch to
	 * it at once (a judged call then costs a context switch, not a trip
	 * through the scheduler). Older kernels: EINVAL, harmless. */
	{
		uint64_t fl = SV_USER_NOTIF_FD_SYNC_WAKE_UP;

		(void)ioctl(lfd, SV_IOCTL_NOTIF_SET_FLAGS, fl);
	}
	if (sv_fd_write(sock, &e, sizeof(e)) != 0) {
		close(lfd);
		return sv_err(err, err_len,
			      "supervisor: the command ended while handing "
			      "over its listener",
			      ESRCH);
	}
	return lfd;
}

/* The loop's state over @cfg: the snapshot in fresh pages. */
static int sv_loop_init(struct sv_loop *l, const struct ward_sv_config *cfg,
			int report)
{
	memset(l, 0, sizeof(*l));
	l->report = report;
	l->cpidfd = -1;
	l->lfd = -1;
	l->s = mmap(NULL, sizeof(*l->s), PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (l->s == MAP_FAILED)
		return -ENOMEM;
	/* The file is the keeper's too, which watches it with O_ASYNC for
	 * its caller's end (landlock-run's watch_caller): add to its flags,
	 * never replace them. */
	if (report >= 0) {
		int fl = fcntl(report, F_GETFL);

		if (fl >= 0)
			(void)fcntl(report, F_SETFL, fl | O_NONBLOCK);
	}
	/* A reader gone is the keeper's to notice, not our death. */
	(void)signal(SIGPIPE, SIG_IGN);
	return ward_sv_state_init(l->s, cfg);
}

int ward_sv_serve(int lfd, const struct ward_sv_config *cfg,
		  const struct ward_sv_host *host)
{
	struct sv_loop l;
	int ret;

	ret = sv_loop_init(&l, cfg, cfg->report_fd);
	if (ret == 0) {
		l.lfd = lfd;
		l.host = host;
		ret = sv_serve(&l);
		sv_report(&l, true); /* the final count */
	}
	if (l.s != MAP_FAILED)
		munmap(l.s, sizeof(*l.s));
	if (l.cpidfd >= 0)
		close(l.cpidfd);
	for (size_t i = 0; i < l.npend; i++)
		if (l.pend[i].fd >= 0)
			close(l.pend[i].fd);
	if (lfd >= 0)
		close(lfd);
	return ret;
}

/*
 * ward_sv_spawn's supervisor: snapshot the grants, take the listener,
 * serve. Never returns. It runs in the command's Landlock domain and
 * under its filters (forked after ward_ll_enforce), so every call it
 * performs meets the checks the command's would; it is not dumpable
 * (nothing of the same uid may trace it or read its memory) and outside
 * the nested layer ward_sv_arm() puts the command in (which may not
 * signal it).
 */
static void sv_main(int sock, pid_t target, const struct ward_sv_config *cfg)
{
	struct sv_loop l;
	char err[128];
	int lfd, nul, rep = -1;

	/* Nothing of the caller's stays open: not its pipes (their EOF
	 * must not wait for us), not its terminal. */
	/* Above 3 and 4, their places below: as low as that (a call may
	 * run with few descriptors, docs/THREADING.md). */
	sock = fcntl(sock, F_DUPFD_CLOEXEC, 5);
	if (cfg->report_fd >= 0)
		rep = fcntl(cfg->report_fd, F_DUPFD_CLOEXEC, 5);
	/* /dev/null may not be writable in the domain (the probe's). */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (sock < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
	    dup2(nul, 2) < 0 || dup2(sock, 3) < 0 ||
	    (rep >= 0 && dup2(rep, 4) < 0))
		_exit(1);
	sock = 3;
	rep = rep >= 0 ? 4 : -1;
	util_close_from(rep >= 0 ? 5 : 4, -1, false);
	/* A group of its own: what is sent to the command's group must end
	 * the command, not the supervisor first (its death is the sandbox's
	 * failure, docs/RUNNERS.md). */
	(void)setpgid(0, 0);
	(void)prctl(PR_SET_NAME, (unsigned long)"ward-supervise", 0, 0, 0);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (sv_loop_init(&l, cfg, rep) != 0 || chdir("/") != 0)
		_exit(1);
	/* No privilege is needed: the same uid reads the target's /proc
	 * entries and memory (ward_ll_enforce dropped everything already;
	 * a caller without it, e.g. a test, gets it dropped here). */
	if (ward_ll_drop_caps(err, sizeof(err)) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		_exit(1);
	lfd = ward_sv_take(sock, target, NULL, 0);
	if (lfd == -ESRCH)
		_exit(0); /* never armed */
	if (lfd < 0)
		_exit(1);
	close(sock);
	l.lfd = lfd;
	if (sv_serve(&l) != 0)
		_exit(1);
	sv_report(&l, true); /* the final count */
	_exit(0);
}

int ward_sv_spawn(struct ward_sv *sv, const struct ward_sv_config *cfg,
		  char *err, size_t err_len)
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
			sv_main(sp[1], target, cfg);
		}
		/* The caller learns the supervisor's pid first (for Yama),
		 * and does not wait for it to start: it snapshots the grants
		 * meanwhile, and says so only when armed (ward_sv_arm). */
		pid = (int)sup;
		_exit(sup < 0 || sv_fd_write(sp[1], &pid, sizeof(pid)) != 0
			  ? 1
			  : 0);
	}
	close(sp[1]);
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    sv_fd_read(sp[0], &pid, sizeof(pid)) != 0 || pid <= 0) {
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
				    SV_JUMP(SV_JEQ, sv_ioctls[j].cmd,
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
		/* Only ioctl and sendto clobbered the accumulator, and both
		 * return. */
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
	int reply = 0, lfd, ret = 0;

	if (!sv || sv->sock < 0)
		return sv_err(err, err_len, "supervisor: not started", EBADF);
	/* The supervisor stays in the outer layer: a signal from here can
	 * no longer reach it (ABI 6; below, nothing scopes signals). */
	ret = ward_ll_scope_self();
	if (ret) {
		ret = sv_err(err, err_len,
			     "supervisor: cannot scope the command", -ret);
		goto out_close_sock;
	}
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
	/* Yama (ptrace_scope 1) lets only a declared tracer take our fd; a
	 * parent (the launcher's supervisor) needs no declaration. */
	if (sv->pid > 0)
		(void)prctl(PR_SET_PTRACER, (unsigned long)sv->pid, 0, 0, 0);
	if (sv_fd_write(sv->sock, &lfd, sizeof(lfd)) != 0 ||
	    sv_fd_read(sv->sock, &reply, sizeof(reply)) != 0) {
		ret = sv_err(err, err_len, "supervisor: died before arming",
			     ESRCH);
	} else if (reply != 0) {
		ret = sv_err(err, err_len,
			     "supervisor: cannot take the listener", reply);
	}
	/* From here on only the supervisor holds the listener (or nobody,
	 * and every judged call fails with ENOSYS). */
	close(lfd);
	if (sv->pid > 0)
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
