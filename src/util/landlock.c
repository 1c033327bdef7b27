/*
 * ward — Landlock kernel compatibility: the UAPI, syscall shims, per-ABI
 * access masks, ruleset construction, capability dropping and
 * self-restriction.
 *
 * libc only. This file is compiled into libward (the executor confines its
 * child between fork and exec) and into the static musl launcher
 * landlock-run, so it must not include libward headers, call ward_err(),
 * or include <linux/...> headers (musl-gcc does not see them, and the
 * installed ones are older than the running kernel). Everything from the
 * kernel is defined here, guarded by #ifndef.
 *
 * Modelled on Linux samples/landlock/sandboxer.c: the best-effort downgrade
 * is one fall-through switch on the ABI with a comment per level.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"

/* --- Landlock UAPI (include/uapi/linux/landlock.h) ---------------------- */

/* The access-right and scope bits are in landlock.h (the launcher and the
 * tests name them); the syscalls and structs live here. */

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif

struct landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4: TCP bind / connect */
	uint64_t scoped;	     /* ABI 6 */
};

#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

#ifndef LANDLOCK_RULE_PATH_BENEATH
#define LANDLOCK_RULE_PATH_BENEATH 1
#endif

#ifndef LANDLOCK_RULE_NET_PORT
#define LANDLOCK_RULE_NET_PORT 2
#endif

struct landlock_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

struct landlock_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/*
 * ABI 7 adds audit-logging flags for landlock_restrict_self(). By default
 * the kernel logs the denials of the restricting program only until its
 * next execve; ward restricts itself (or landlock-run does) and then execs
 * the command, so without LOG_NEW_EXEC_ON none of the command's denials
 * would ever reach the audit log. With it they do — only when audit is
 * enabled at all (nothing is logged, and nothing costs, otherwise) — and
 * ward's denial report can say exactly what the kernel refused. Only
 * passed on ABI >= 7 (older kernels reject unknown flags).
 */
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif

/* Every filesystem right ward wants handled (all of ABI 1..7). */
#define LL_FS_WANTED                                                           \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |          \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |          \
	 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |      \
	 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |          \
	 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |          \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |        \
	 LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER |              \
	 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* Every scope ward wants: nothing outside the domain can be signalled or
 * reached through an abstract unix socket (e.g. the caller). */
#define LL_SCOPE_WANTED                                                        \
	(LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL)

/* What a --ro grant allows. */
#define LL_FS_RO                                                               \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |           \
	 LANDLOCK_ACCESS_FS_READ_DIR)

/* Never granted, even beneath a --rw root: device nodes would bypass
 * every file rule (a block device is the whole filesystem). */
#define LL_FS_NEVER                                                            \
	(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)

/* The rights the kernel accepts on a rule whose parent is not a directory;
 * any other bit makes landlock_add_rule() fail with EINVAL. */
#define LL_FS_FILE                                                             \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |          \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |          \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* --- capabilities (include/uapi/linux/capability.h, securebits.h) ------- */

#ifndef _LINUX_CAPABILITY_VERSION_3
#define _LINUX_CAPABILITY_VERSION_3 0x20080522
#endif
#define LL_CAP_SETPCAP 8
#define LL_CAP_LAST    63 /* bounding-set drops past cap_last_cap: EINVAL */

struct ll_cap_header {
	uint32_t version;
	int pid;
};

struct ll_cap_data {
	uint32_t effective;
	uint32_t permitted;
	uint32_t inheritable;
};

#ifndef PR_CAPBSET_DROP
#define PR_CAPBSET_DROP 24
#endif
#ifndef PR_GET_SECUREBITS
#define PR_GET_SECUREBITS 27
#endif
#ifndef PR_SET_SECUREBITS
#define PR_SET_SECUREBITS 28
#endif
#ifndef PR_SET_NO_NEW_PRIVS
#define PR_SET_NO_NEW_PRIVS 38
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#endif
#ifndef PR_CAP_AMBIENT_CLEAR_ALL
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT			   (1U << 0)
#define SECBIT_NOROOT_LOCKED		   (1U << 1)
#define SECBIT_NO_SETUID_FIXUP		   (1U << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED	   (1U << 3)
#define SECBIT_KEEP_CAPS_LOCKED		   (1U << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE	   (1U << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1U << 7)
#endif

/*
 * A root uid must not regain a full permitted set at execve (NOROOT), a
 * setuid() must not re-grant anything (NO_SETUID_FIXUP), and none of it may
 * be undone: every bit is locked. KEEP_CAPS is locked off.
 */
#define LL_SECUREBITS                                                          \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |       \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |             \
	 SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

/* --- async-signal-safe error text ----------------------------------------- */

/*
 * strerror() and snprintf() are not async-signal-safe, and
 * ward_ll_drop_caps() / ward_ll_enforce() run between fork and exec in a
 * possibly multi-threaded parent. These helpers only copy bytes.
 */
static const char *errno_text(int e)
{
	switch (e) {
	case EPERM:
		return "Operation not permitted";
	case ENOENT:
		return "No such file or directory";
	case EINTR:
		return "Interrupted system call";
	case EBADF:
		return "Bad file descriptor";
	case ENOMEM:
		return "Out of memory";
	case EACCES:
		return "Permission denied";
	case EFAULT:
		return "Bad address";
	case EBUSY:
		return "Device or resource busy";
	case ENOTDIR:
		return "Not a directory";
	case EINVAL:
		return "Invalid argument";
	case E2BIG:
		return "Argument list too long";
	case ENAMETOOLONG:
		return "File name too long";
	case ENOSYS:
		return "Function not implemented";
	case ELOOP:
		return "Too many levels of symbolic links";
	case ENOMSG:
		return "No message of desired type";
	case EOPNOTSUPP:
		return "Operation not supported";
	default:
		return NULL;
	}
}

/* Append @s to @buf (capacity @len) at *@pos, truncating; keeps a NUL. */
static void buf_add(char *buf, size_t len, size_t *pos, const char *s)
{
	if (!buf || len == 0)
		return;
	while (*s && *pos + 1 < len)
		buf[(*pos)++] = *s++;
	buf[*pos] = '\0';
}

/* Append the decimal form of @v. */
static void buf_add_int(char *buf, size_t len, size_t *pos, long v)
{
	char tmp[24];
	size_t i = sizeof(tmp) - 1;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;

	tmp[i] = '\0';
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u && i > 1);
	if (v < 0)
		tmp[--i] = '-';
	buf_add(buf, len, pos, tmp + i);
}

/* Write "@what: <errno text>" into @err; returns -@e. */
static int set_err(char *err, size_t len, const char *what, int e)
{
	const char *text = errno_text(e);
	size_t pos = 0;

	buf_add(err, len, &pos, what);
	buf_add(err, len, &pos, ": ");
	if (text) {
		buf_add(err, len, &pos, text);
	} else {
		buf_add(err, len, &pos, "error ");
		buf_add_int(err, len, &pos, e);
	}
	return -e;
}

/* --- rules ---------------------------------------------------------------- */

/*
 * Open @path (O_PATH: no read permission needed, no side effects on FIFOs or
 * devices) and add a path-beneath rule granting @access to @ruleset_fd. A
 * non-directory keeps only the file-compatible bits. On failure writes a
 * message naming @path, prefixed with @kind, and returns -errno.
 */
static int add_path_rule(int ruleset_fd, const char *path, uint64_t access,
			 const char *kind, char *err, size_t err_len)
{
	struct landlock_path_beneath_attr pb;
	struct stat st;
	int parent_fd;
	int ret = 0;

	bool optional;

	if (!path) {
		snprintf(err, err_len, "%s path is missing", kind);
		return -EINVAL;
	}
	optional = path[0] == WARD_LL_OPTIONAL;
	if (optional)
		path++;
	do {
		parent_fd = open(path, O_PATH | O_CLOEXEC);
	} while (parent_fd < 0 && errno == EINTR);
	if (parent_fd < 0) {
		ret = -errno;
		if (optional && (ret == -ENOENT || ret == -ENOTDIR))
			return 0; /* gone since the plan: nothing to grant */
		snprintf(err, err_len, "%s path %s: %s", kind, path,
			 strerror(-ret));
		return ret;
	}
	if (fstat(parent_fd, &st) != 0) {
		ret = -errno;
		snprintf(err, err_len, "%s path %s: %s", kind, path,
			 strerror(-ret));
		goto out_close_parent;
	}
	if (!S_ISDIR(st.st_mode))
		access &= LL_FS_FILE;
	if (access == 0)
		goto out_close_parent; /* nothing this kernel can grant */

	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access;
	pb.parent_fd = parent_fd;
	if (syscall(__NR_landlock_add_rule, ruleset_fd,
		    LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0) {
		ret = -errno;
		snprintf(err, err_len, "cannot add a Landlock rule for %s: %s",
			 path, strerror(-ret));
	}
out_close_parent:
	close(parent_fd);
	return ret;
}

/* --- exported ------------------------------------------------------------- */

int ward_ll_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0)
		return -errno;
	return (int)abi;
}

void ward_ll_access_for_abi(int abi, uint64_t *fs, uint64_t *scoped)
{
	uint64_t f = LL_FS_WANTED;
	uint64_t s = LL_SCOPE_WANTED;

	if (abi < 1) {
		*fs = 0;
		*scoped = 0;
		return;
	}
	if (abi > WARD_LL_ABI_MAX)
		abi = WARD_LL_ABI_MAX; /* a newer kernel knows all of ours */

	switch (abi) {
	case 1:
		/*
		 * Removes LANDLOCK_ACCESS_FS_REFER for ABI < 2. Without it the
		 * kernel forbids every rename and link across directories, so
		 * this is stricter than wanted, not weaker.
		 */
		f &= ~LANDLOCK_ACCESS_FS_REFER;
		__attribute__((fallthrough));
	case 2:
		/* Removes LANDLOCK_ACCESS_FS_TRUNCATE for ABI < 3. */
		f &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
		__attribute__((fallthrough));
	case 3:
		/*
		 * ABI 4 adds TCP bind/connect rights: the network knob, not
		 * the mode, asks for them (ward_ll_prepare_net), so nothing
		 * is removed here.
		 */
		__attribute__((fallthrough));
	case 4:
		/* Removes LANDLOCK_ACCESS_FS_IOCTL_DEV for ABI < 5. */
		f &= ~LANDLOCK_ACCESS_FS_IOCTL_DEV;
		__attribute__((fallthrough));
	case 5:
		/* Removes LANDLOCK_SCOPE_* for ABI < 6. */
		s &= ~(LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
		       LANDLOCK_SCOPE_SIGNAL);
		__attribute__((fallthrough));
	case 6:
		/*
		 * ABI 7 adds only restrict_self() logging flags (see
		 * ward_ll_enforce): no access right to remove.
		 */
		__attribute__((fallthrough));
	case WARD_LL_ABI_MAX:
		break;
	}
	*fs = f;
	*scoped = s;
}

int ward_ll_prepare(struct ward_ll_ruleset *out, const char *const *ro,
		    size_t nro, const char *const *rw, size_t nrw, char *err,
		    size_t err_len)
{
	return ward_ll_prepare_net(out, ro, nro, rw, nrw, WARD_LL_NET_ON, 0,
				   err, err_len);
}

/*
 * The network part of a ruleset: which TCP rights to handle, and the one
 * connect rule of CONNECT. 0 or -errno with @err set (-EAFNOSUPPORT:
 * the kernel cannot keep TCP to one port).
 */
static int net_plan(struct ward_ll_ruleset *rs, int net, unsigned port,
		    char *err, size_t err_len)
{
	rs->net = net;
	rs->net_port = port;
	rs->handled_net = 0;
	if (net == WARD_LL_NET_ON)
		return 0;
	if (net == WARD_LL_NET_LOCAL)
		return 0; /* the namespace's own: the family filter only */
	if (net != WARD_LL_NET_OFF && net != WARD_LL_NET_CONNECT) {
		snprintf(err, err_len, "unknown network setting %d", net);
		return -EINVAL;
	}
	if (net == WARD_LL_NET_CONNECT && (port == 0 || port > 65535)) {
		snprintf(err, err_len, "network: port %u out of range", port);
		return -EINVAL;
	}
	if (rs->abi >= 4) {
		rs->handled_net = LANDLOCK_ACCESS_NET_BIND_TCP |
				  LANDLOCK_ACCESS_NET_CONNECT_TCP;
		return 0;
	}
	if (net == WARD_LL_NET_CONNECT) {
		/* Nothing below ABI 4 could keep TCP to one port: refuse
		 * rather than run with the allowlist reduced to nothing. */
		snprintf(err, err_len,
			 "network: Landlock ABI %d cannot restrict TCP "
			 "connections (ABI 4, Linux 6.7, is needed), so a "
			 "domain allowlist cannot be enforced",
			 rs->abi);
		return -EAFNOSUPPORT;
	}
	/* OFF: the network filter refuses every inet socket. */
	return 0;
}

int ward_ll_prepare_net(struct ward_ll_ruleset *out, const char *const *ro,
			size_t nro, const char *const *rw, size_t nrw, int net,
			unsigned port, char *err, size_t err_len)
{
	struct ward_ll_ruleset rs = {.fd = -1};
	struct landlock_ruleset_attr attr;
	size_t i;
	long fd;
	int ret;

	if (err && err_len)
		err[0] = '\0';
	ret = ward_ll_abi();
	if (ret < 0) {
		if (ret == -EOPNOTSUPP)
			snprintf(err, err_len,
				 "Landlock is supported by the kernel but "
				 "disabled at boot");
		else if (ret == -ENOSYS)
			snprintf(err, err_len,
				 "Landlock is not supported by the running "
				 "kernel");
		else
			snprintf(err, err_len,
				 "cannot query the Landlock ABI: %s",
				 strerror(-ret));
		return ret;
	}
	rs.abi = ret;
	ward_ll_access_for_abi(rs.abi, &rs.handled_fs, &rs.scoped);
	rs.dropped_fs = LL_FS_WANTED & ~rs.handled_fs;
	rs.dropped_scoped = LL_SCOPE_WANTED & ~rs.scoped;
	rs.partial = rs.dropped_fs != 0 || rs.dropped_scoped != 0;
	ret = net_plan(&rs, net, port, err, err_len);
	if (ret)
		return ret;

	/* A kernel older than ABI 6 accepts the larger struct as long as
	 * the fields it does not know are zero. */
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = rs.handled_fs;
	attr.handled_access_net = rs.handled_net;
	attr.scoped = rs.scoped;
	fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_len, "cannot create a Landlock ruleset: %s",
			 strerror(-ret));
		return ret;
	}
	rs.fd = (int)fd; /* the kernel always sets O_CLOEXEC on it */

	for (i = 0; i < nro; i++) {
		ret = add_path_rule(rs.fd, ro[i], LL_FS_RO & rs.handled_fs,
				    "read-only", err, err_len);
		if (ret)
			goto out_close_ruleset;
	}
	for (i = 0; i < nrw; i++) {
		/* Everything handled, REFER included (rw roots only), but
		 * never device-node creation. */
		struct stat st;

		ret = add_path_rule(rs.fd, rw[i], rs.handled_fs & ~LL_FS_NEVER,
				    "writable", err, err_len);
		if (ret)
			goto out_close_ruleset;
		if (stat(rw[i] + (rw[i][0] == WARD_LL_OPTIONAL), &st) == 0 &&
		    S_ISDIR(st.st_mode))
			rs.rw_dir = true;
	}
	if (rs.net == WARD_LL_NET_CONNECT) {
		struct landlock_net_port_attr np = {
		    .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
		    .port = rs.net_port,
		};

		if (syscall(__NR_landlock_add_rule, rs.fd,
			    LANDLOCK_RULE_NET_PORT, &np, 0) != 0) {
			ret = -errno;
			snprintf(err, err_len,
				 "cannot allow TCP connections to port %u: %s",
				 rs.net_port, strerror(-ret));
			goto out_close_ruleset;
		}
	}
	*out = rs;
	return 0;

out_close_ruleset:
	close(rs.fd);
	return ret;
}

void ward_ll_partial_message(const struct ward_ll_ruleset *rs, char *buf,
			     size_t len)
{
	static const struct {
		bool scope; /* bit is in dropped_scoped, else dropped_fs */
		uint64_t bit;
		const char *what;
	} ungoverned[] = {
	    {false, LANDLOCK_ACCESS_FS_TRUNCATE, "truncate"},
	    {false, LANDLOCK_ACCESS_FS_IOCTL_DEV, "ioctl on devices"},
	    {true, LANDLOCK_SCOPE_SIGNAL, "signal scoping"},
	    {true, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET,
	     "abstract unix socket scoping"},
	};
	uint64_t known_fs = LANDLOCK_ACCESS_FS_REFER;
	uint64_t known_scoped = 0;
	size_t pos = 0;
	size_t i;
	int n = 0;

	if (!buf || len == 0)
		return;
	buf[0] = '\0';
	if (!rs || !rs->partial)
		return;

	buf_add(buf, len, &pos, "partial enforcement (kernel ABI ");
	buf_add_int(buf, len, &pos, rs->abi);
	buf_add(buf, len, &pos, " of ");
	buf_add_int(buf, len, &pos, WARD_LL_ABI_MAX);
	buf_add(buf, len, &pos, ")");
	for (i = 0; i < sizeof(ungoverned) / sizeof(ungoverned[0]); i++) {
		uint64_t dropped =
		    ungoverned[i].scope ? rs->dropped_scoped : rs->dropped_fs;

		if (ungoverned[i].scope)
			known_scoped |= ungoverned[i].bit;
		else
			known_fs |= ungoverned[i].bit;
		if (!(dropped & ungoverned[i].bit))
			continue;
		buf_add(buf, len, &pos, n++ ? ", " : ": cannot govern ");
		buf_add(buf, len, &pos, ungoverned[i].what);
	}
	if ((rs->dropped_fs & ~known_fs) ||
	    (rs->dropped_scoped & ~known_scoped))
		buf_add(buf, len, &pos,
			n++ ? ", other rights"
			    : ": cannot govern other rights");
	if (rs->dropped_fs & LANDLOCK_ACCESS_FS_REFER)
		buf_add(buf, len, &pos,
			n++ ? "; renaming or linking across directories is "
			      "always denied"
			    : ": renaming or linking across directories is "
			      "always denied");
}

int ward_ll_drop_caps(char *err, size_t err_len)
{
	struct ll_cap_header hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct ll_cap_data data[2];
	int had_setpcap;
	int cap;

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return set_err(err, err_len, "capget", errno);
	had_setpcap = (data[0].effective >> LL_CAP_SETPCAP) & 1;

	/*
	 * Dropping from the bounding set and setting securebits need
	 * CAP_SETPCAP. Without it (an unprivileged caller) there is nothing
	 * to drop: the permitted set is cleared below, and no_new_privs
	 * keeps execve from granting anything back.
	 */
	if (had_setpcap) {
		long cur;

		/* Capabilities are numbered densely from 0: EINVAL means we
		 * passed the kernel's last one (cap_last_cap). */
		for (cap = 0; cap <= LL_CAP_LAST; cap++) {
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
				continue;
			if (errno == EINVAL)
				break;
			return set_err(err, err_len,
				       "cannot drop the bounding set", errno);
		}
		cur = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
		if (cur < 0)
			cur = 0;
		if (prctl(PR_SET_SECUREBITS, (unsigned long)cur | LL_SECUREBITS,
			  0, 0, 0) != 0)
			return set_err(err, err_len,
				       "cannot lock the securebits", errno);
	}
	/* EINVAL: a kernel before 4.3 has no ambient set to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
	    errno != EINVAL)
		return set_err(err, err_len,
			       "cannot clear ambient capabilities", errno);

	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) != 0)
		return set_err(err, err_len, "cannot clear capabilities",
			       errno);

	/* Trust, but verify: a silent partial drop would be the worst case. */
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	hdr.pid = 0;
	if (syscall(SYS_capget, &hdr, data) != 0)
		return set_err(err, err_len, "capget", errno);
	for (cap = 0; cap < 2; cap++) {
		if (data[cap].effective || data[cap].permitted ||
		    data[cap].inheritable)
			return set_err(err, err_len,
				       "capabilities remain after dropping",
				       EPERM);
	}
	return 0;
}

/* --- the metadata filter (seccomp) -------------------------------------- */

/*
 * Raw classic BPF rather than libseccomp: this file must stay libc-only for
 * the static launcher. The filter is small and fixed, built on the stack so
 * it is async-signal-safe.
 */
#ifndef SECCOMP_SET_MODE_FILTER
#define SECCOMP_SET_MODE_FILTER 1
#endif
#ifndef __NR_seccomp
#if defined(__x86_64__)
#define __NR_seccomp 317
#elif defined(__aarch64__)
#define __NR_seccomp 277
#endif
#endif

#define SECCOMP_RET_ALLOW 0x7fff0000U
#define SECCOMP_RET_ERRNO 0x00050000U

#define BPF_LD	 0x00
#define BPF_W	 0x00
#define BPF_ABS	 0x20
#define BPF_JMP	 0x05
#define BPF_JEQ	 0x10
#define BPF_JGE	 0x30
#define BPF_JSET 0x40
#define BPF_JA	 0x00
#define BPF_K	 0x00
#define BPF_RET	 0x06

struct ll_sock_filter {
	uint16_t code;
	uint8_t jt;
	uint8_t jf;
	uint32_t k;
};

struct ll_sock_fprog {
	unsigned short len;
	struct ll_sock_filter *filter;
};

struct ll_seccomp_data {
	int nr;
	uint32_t arch;
	uint64_t instruction_pointer;
	uint64_t args[6];
};

#define STMT(c, kk) ((struct ll_sock_filter){(uint16_t)(c), 0, 0, (kk)})
#define JUMP(c, kk, t, f)                                                      \
	((struct ll_sock_filter){(uint16_t)(c), (t), (f), (kk)})

#if defined(__x86_64__)
#define LL_AUDIT_ARCH 0xc000003eU /* AUDIT_ARCH_X86_64 */
#define LL_X32_BIT    0x40000000U
#elif defined(__aarch64__)
#define LL_AUDIT_ARCH 0xc00000b7U /* AUDIT_ARCH_AARCH64 */
#endif

/* A chmod-family call and the index of its mode argument. */
struct ll_mode_call {
	int nr;
	int mode_arg;
};

#ifdef LL_AUDIT_ARCH
/*
 * The calls that change metadata Landlock cannot govern. Numbers are per
 * architecture; the newer *at2/xattrat calls share the generic numbers.
 */
static const struct ll_mode_call ll_chmods[] = {
#if defined(__x86_64__)
    {90, 1},  /* chmod */
    {91, 1},  /* fchmod */
    {268, 2}, /* fchmodat */
#else
    {52, 1},		       /* fchmod */
    {53, 2},		       /* fchmodat */
#endif
    {452, 2}, /* fchmodat2 */
};

/*
 * Everything refused when nothing is writable, SORTED (the filter searches
 * it as a binary tree): the chmod family, then chown, utime and xattr
 * changes, and io_uring.
 */
static const uint32_t ll_meta_all[] = {
#if defined(__x86_64__)
    90,	 91,  92,  93,	94,	  /* chmod fchmod chown fchown lchown */
    132,			  /* utime */
    188, 189, 190, 197, 198, 199, /* set/remove xattr families */
    235,			  /* utimes */
    260, 261, 268,		  /* fchownat futimesat fchmodat */
    280,			  /* utimensat */
#else
    5,	 6,   7,   14, 15, 16, /* set/remove xattr families */
    52,	 53,  54,  55,	       /* fchmod fchmodat fchownat fchown */
    88,			       /* utimensat */
#endif
    425, 426, 427, /* io_uring_setup, _enter, _register */
    452,	   /* fchmodat2 */
    463, 466,	   /* setxattrat, removexattrat */
};
#endif

/* Jumps still to resolve once the final DENY/ALLOW are placed. */
struct ll_emit {
	struct ll_sock_filter *f;
	size_t n;
	size_t to_deny[64]; /* JEQ whose jt goes to DENY */
	size_t n_deny;
	size_t to_allow[64]; /* JA whose k goes to ALLOW */
	size_t n_allow;
};

/*
 * Emit a search for the accumulator (the syscall number) in the sorted
 * @set[lo, hi): a balanced tree of JGE with short linear leaves, so a
 * syscall costs ~log2(n) comparisons instead of n. Every path ends at the
 * shared DENY (found) or ALLOW (not found). Recursion depth is log2(n).
 */
static void emit_search(struct ll_emit *e, const uint32_t *set, size_t lo,
			size_t hi)
{
	size_t i, mid, jge;

	if (hi - lo <= 3) {
		for (i = lo; i < hi; i++) {
			e->to_deny[e->n_deny++] = e->n;
			e->f[e->n++] =
			    JUMP(BPF_JMP | BPF_JEQ | BPF_K, set[i], 0, 0);
		}
		e->to_allow[e->n_allow++] = e->n;
		e->f[e->n++] = STMT(BPF_JMP | BPF_JA, 0);
		return;
	}
	mid = lo + (hi - lo) / 2;
	jge = e->n;
	e->f[e->n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, set[mid], 0, 0);
	emit_search(e, set, lo, mid);
	e->f[jge].jt = (uint8_t)(e->n - (jge + 1));
	emit_search(e, set, mid, hi);
}

#ifndef __NR_clone3
#define __NR_clone3 435 /* the same on every architecture */
#endif

/*
 * Containment: clone3() fails with ENOSYS, so the C library falls back to
 * clone() (glibc and musl both do). clone3 is the only way to pass
 * CLONE_INTO_CGROUP, which would let a confined process start a child in
 * any cgroup it can name by a descriptor — Landlock does not govern that
 * check, and root owns every cgroup.procs — and so leave the call's
 * cgroup. The accumulator holds the syscall number.
 */
static void emit_clone3_refusal(struct ll_emit *e)
{
	e->f[e->n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
	e->f[e->n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
}

/*
 * The metadata part of the filter into @f (room for LL_META_MAX): a
 * self-contained program (it loads what it tests and ends in its own
 * returns). @rw_dir selects the narrow form (set-id chmod only). Returns
 * the number of instructions; on an architecture without a table none,
 * and Landlock's own limits stand (documented in docs/RUNNERS.md).
 */
#define LL_META_MAX 128
static size_t emit_metadata(struct ll_sock_filter *f, bool rw_dir)
{
#ifdef LL_AUDIT_ARCH
	struct ll_emit e = {.f = f};
	const uint32_t deny = SECCOMP_RET_ERRNO | (EACCES & 0xffff);
	const size_t n_chmod = sizeof(ll_chmods) / sizeof(ll_chmods[0]);
	const size_t n_all = sizeof(ll_meta_all) / sizeof(ll_meta_all[0]);
	size_t i, deny_at, allow_at;

	/* Wrong architecture (e.g. a 32-bit call): refuse it outright. */
	f[e.n++] = STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct ll_seccomp_data, arch));
	f[e.n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, LL_AUDIT_ARCH, 1, 0);
	f[e.n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	f[e.n++] = STMT(BPF_LD | BPF_W | BPF_ABS,
			offsetof(struct ll_seccomp_data, nr));
#ifdef LL_X32_BIT
	/* x32 calls alias the same operations under other numbers. */
	f[e.n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, LL_X32_BIT, 0, 1);
	f[e.n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
#endif
	emit_clone3_refusal(&e);
	if (!rw_dir) {
		/* Nothing is writable: no metadata change anywhere. */
		emit_search(&e, ll_meta_all, 0, n_all);
	} else {
		/*
		 * Writable roots exist: refuse only set-id bits. Most
		 * syscalls are numbered below the first chmod and leave at
		 * the first comparison.
		 */
		e.to_allow[e.n_allow++] = e.n;
		f[e.n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K,
				(uint32_t)ll_chmods[0].nr, 1, 0);
		f[e.n++] = STMT(BPF_JMP | BPF_JA, 0);
		e.n_allow--; /* the JGE above is not a fixup; the JA is */
		e.to_allow[e.n_allow++] = e.n - 1;
		for (i = 0; i < n_chmod; i++) {
			uint32_t off =
			    (uint32_t)(offsetof(struct ll_seccomp_data, args) +
				       8 * (size_t)ll_chmods[i].mode_arg);

			f[e.n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K,
					(uint32_t)ll_chmods[i].nr, 0, 4);
			/* The low 32 bits of the argument (little endian). */
			f[e.n++] = STMT(BPF_LD | BPF_W | BPF_ABS, off);
			f[e.n++] =
			    JUMP(BPF_JMP | BPF_JSET | BPF_K, 06000, 0, 1);
			f[e.n++] = STMT(BPF_RET | BPF_K, deny);
			f[e.n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		}
	}
	allow_at = e.n;
	f[e.n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	deny_at = e.n;
	f[e.n++] = STMT(BPF_RET | BPF_K, deny);
	for (i = 0; i < e.n_deny; i++)
		f[e.to_deny[i]].jt = (uint8_t)(deny_at - (e.to_deny[i] + 1));
	for (i = 0; i < e.n_allow; i++)
		f[e.to_allow[i]].k = (uint32_t)(allow_at - (e.to_allow[i] + 1));
	return e.n;
#else
	(void)f;
	(void)rw_dir;
	return 0;
#endif
}

/* --- the network filter (seccomp) --------------------------------------- */

#define LL_AF_UNIX	  1
#define LL_AF_INET	  2
#define LL_AF_INET6	  10
#define LL_AF_NETLINK	  16
#define LL_SOCK_STREAM	  1
#define LL_SOCK_DGRAM	  2
#define LL_IPPROTO_TCP	  6
#define LL_IPPROTO_UDP	  17
#define LL_NETLINK_ROUTE  0
#define LL_MSG_FASTOPEN	  0x20000000U
#define LL_SOCK_TYPE_MASK 0xfU
#define BPF_ALU		  0x04
#define BPF_AND		  0x50

#ifdef LL_AUDIT_ARCH
#if defined(__x86_64__)
#define LL_NR_SOCKET	 41
#define LL_NR_SOCKETPAIR 53
#define LL_NR_SENDTO	 44
#define LL_NR_SENDMSG	 46
#define LL_NR_SENDMMSG	 307
#else
#define LL_NR_SOCKET	 198
#define LL_NR_SOCKETPAIR 199
#define LL_NR_SENDTO	 206
#define LL_NR_SENDMSG	 211
#define LL_NR_SENDMMSG	 269
#endif
#define LL_NR_IO_URING_SETUP 425

/* Labels of the network filter; jumps are resolved once it is laid out. */
enum ll_label {
	L_NONE = 0,
	L_SOCK,
	L_INET,
	L_TCP,
	L_UDP,
	L_NL,
	L_FLAGS2,
	L_FLAGS3,
	L_ALLOW,
	L_DENY,
	L_NOAF,
	L_NOPROTO,
	L_UNREACH,
	L_COUNT
};

struct ll_asm {
	struct ll_sock_filter f[64];
	uint8_t jt[64], jf[64]; /* labels; L_NONE: fall through */
	size_t at[L_COUNT];
	size_t n;
};

static void asm_put(struct ll_asm *a, uint16_t code, uint32_t k,
		    enum ll_label jt, enum ll_label jf)
{
	a->f[a->n] = (struct ll_sock_filter){code, 0, 0, k};
	a->jt[a->n] = (uint8_t)jt;
	a->jf[a->n] = (uint8_t)jf;
	a->n++;
}

static void asm_label(struct ll_asm *a, enum ll_label l)
{
	a->at[l] = a->n;
}

/* The low 32 bits of syscall argument @i (little endian). */
static uint32_t arg_lo(int i)
{
	return (uint32_t)(offsetof(struct ll_seccomp_data, args) +
			  8 * (size_t)i);
}
#endif

/* An unconditional jump to @l (resolved into k below). */
static void asm_goto(struct ll_asm *a, enum ll_label l)
{
	asm_put(a, BPF_JMP | BPF_JA, 0, l, L_NONE);
}

/*
 * The network part of the filter for @net (see ward_ll_enforce) into @f
 * (room for 64): what it refuses it answers; what it lets through falls
 * off its end, into the metadata part that follows. That is what two
 * filters gave (the kernel runs every filter and the newest error wins;
 * this one was installed after the metadata filter), at the cost of one.
 * The refusals give the errors of a kernel without the family or
 * protocol, which programs read as "no network here" and give up on at
 * once (EACCES made wget retry for 90 s). Returns the number of
 * instructions, or -EOPNOTSUPP without a table for this architecture.
 */
static int emit_net(struct ll_sock_filter *f, int net)
{
#ifdef LL_AUDIT_ARCH
	struct ll_asm a = {.n = 0};
	const uint16_t jeq = BPF_JMP | BPF_JEQ | BPF_K;
	const uint16_t ld = BPF_LD | BPF_W | BPF_ABS;
	const uint16_t ret = BPF_RET | BPF_K;
	const bool local = net == WARD_LL_NET_LOCAL;

	asm_put(&a, ld, offsetof(struct ll_seccomp_data, arch), L_NONE, L_NONE);
	asm_put(&a, jeq, LL_AUDIT_ARCH, L_NONE, L_DENY);
	asm_put(&a, ld, offsetof(struct ll_seccomp_data, nr), L_NONE, L_NONE);
#ifdef LL_X32_BIT
	asm_put(&a, BPF_JMP | BPF_JGE | BPF_K, LL_X32_BIT, L_DENY, L_NONE);
#endif
	asm_put(&a, jeq, LL_NR_SOCKET, L_SOCK, L_NONE);
	asm_put(&a, jeq, LL_NR_SOCKETPAIR, L_SOCK, L_NONE);
	if (!local) {
		asm_put(&a, jeq, LL_NR_SENDTO, L_FLAGS3, L_NONE);
		asm_put(&a, jeq, LL_NR_SENDMMSG, L_FLAGS3, L_NONE);
		asm_put(&a, jeq, LL_NR_SENDMSG, L_FLAGS2, L_NONE);
		/* io_uring's socket and connect operations bypass seccomp. */
		asm_put(&a, jeq, LL_NR_IO_URING_SETUP, L_UNREACH, L_NONE);
	}
	asm_goto(&a, L_ALLOW);

	/* socket(domain, type, protocol), socketpair likewise. */
	asm_label(&a, L_SOCK);
	asm_put(&a, ld, arg_lo(0), L_NONE, L_NONE);
	asm_put(&a, jeq, LL_AF_UNIX, L_ALLOW, L_NONE);
	asm_put(&a, jeq, LL_AF_NETLINK, L_NL, L_NONE);
	asm_put(&a, jeq, LL_AF_INET, L_INET, L_NONE);
	asm_put(&a, jeq, LL_AF_INET6, L_INET, L_NOAF);
	/* inet: TCP streams and UDP datagrams only — the supervisor judges
	 * their every destination; no raw, no SCTP (which can connect
	 * through setsockopt), no MPTCP. The namespace's own: anything. */
	asm_label(&a, L_INET);
	if (local) {
		asm_goto(&a, L_ALLOW);
	} else {
		asm_put(&a, ld, arg_lo(1), L_NONE, L_NONE);
		asm_put(&a, BPF_ALU | BPF_AND | BPF_K, LL_SOCK_TYPE_MASK,
			L_NONE, L_NONE);
		asm_put(&a, jeq, LL_SOCK_STREAM, L_TCP, L_NONE);
		asm_put(&a, jeq, LL_SOCK_DGRAM, L_UDP, L_NOPROTO);
	}
	asm_label(&a, L_TCP);
	asm_put(&a, ld, arg_lo(2), L_NONE, L_NONE);
	asm_put(&a, jeq, 0, L_ALLOW, L_NONE);
	asm_put(&a, jeq, LL_IPPROTO_TCP, L_ALLOW, L_NOPROTO);
	asm_label(&a, L_UDP);
	asm_put(&a, ld, arg_lo(2), L_NONE, L_NONE);
	asm_put(&a, jeq, 0, L_ALLOW, L_NONE);
	asm_put(&a, jeq, LL_IPPROTO_UDP, L_ALLOW, L_NOPROTO);
	/* Netlink: routing (interfaces, addresses) only — not the
	 * kernel's uevents, audit or socket diagnostics. */
	asm_label(&a, L_NL);
	asm_put(&a, ld, arg_lo(2), L_NONE, L_NONE);
	asm_put(&a, jeq, LL_NETLINK_ROUTE, L_ALLOW, L_NOPROTO);
	/* sendmsg(fd, msg, flags): Fast Open connects without connect(). */
	asm_label(&a, L_FLAGS2);
	asm_put(&a, ld, arg_lo(2), L_NONE, L_NONE);
	asm_put(&a, BPF_JMP | BPF_JSET | BPF_K, LL_MSG_FASTOPEN, L_UNREACH,
		L_ALLOW);
	/* sendto(fd, buf, len, flags, …), sendmmsg(fd, vec, n, flags). */
	asm_label(&a, L_FLAGS3);
	asm_put(&a, ld, arg_lo(3), L_NONE, L_NONE);
	asm_put(&a, BPF_JMP | BPF_JSET | BPF_K, LL_MSG_FASTOPEN, L_UNREACH,
		L_ALLOW);
	asm_label(&a, L_DENY);
	asm_put(&a, ret, SECCOMP_RET_ERRNO | EACCES, L_NONE, L_NONE);
	asm_label(&a, L_NOAF);
	asm_put(&a, ret, SECCOMP_RET_ERRNO | EAFNOSUPPORT, L_NONE, L_NONE);
	asm_label(&a, L_NOPROTO);
	asm_put(&a, ret, SECCOMP_RET_ERRNO | EPROTONOSUPPORT, L_NONE, L_NONE);
	asm_label(&a, L_UNREACH);
	asm_put(&a, ret, SECCOMP_RET_ERRNO | ENETUNREACH, L_NONE, L_NONE);
	/* Allowed here: on to the metadata part, laid out next. */
	asm_label(&a, L_ALLOW);

	for (size_t i = 0; i < a.n; i++) {
		if (a.f[i].code == (BPF_JMP | BPF_JA)) {
			a.f[i].k = (uint32_t)(a.at[a.jt[i]] - (i + 1));
			continue;
		}
		if (a.jt[i])
			a.f[i].jt = (uint8_t)(a.at[a.jt[i]] - (i + 1));
		if (a.jf[i])
			a.f[i].jf = (uint8_t)(a.at[a.jf[i]] - (i + 1));
	}
	memcpy(f, a.f, a.n * sizeof(*f));
	return (int)a.n;
#else
	/* No table for this architecture: refuse rather than run with the
	 * network open. */
	(void)f;
	(void)net;
	return -EOPNOTSUPP;
#endif
}

/*
 * Install the one filter: the network part for @net (unless ON), then the
 * metadata part (@rw_dir). Returns 0 or -errno.
 */
static int install_filter(bool rw_dir, int net)
{
	struct ll_sock_filter f[64 + LL_META_MAX];
	struct ll_sock_fprog prog;
	size_t n = 0;

	if (net != WARD_LL_NET_ON) {
		int r = emit_net(f, net);

		if (r < 0)
			return r;
		n = (size_t)r;
	}
	n += emit_metadata(f + n, rw_dir);
	if (!n)
		return 0;
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
		return -errno;
	return 0;
}

int ward_ll_enforce(const struct ward_ll_ruleset *rs, char *err, size_t err_len)
{
	int ret;

	if (!rs || rs->fd < 0)
		return set_err(err, err_len, "no Landlock ruleset to enforce",
			       EBADF);
	ret = ward_ll_drop_caps(err, err_len);
	if (ret)
		return ret;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return set_err(err, err_len, "cannot set no_new_privs", errno);
	ret = install_filter(rs->rw_dir, rs->net);
	if (ret)
		return set_err(err, err_len,
			       rs->net != WARD_LL_NET_ON
				   ? "cannot install the metadata and network "
				     "filter"
				   : "cannot install the metadata filter",
			       -ret);
	if (syscall(__NR_landlock_restrict_self, rs->fd,
		    rs->abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
				 : 0) != 0)
		return set_err(err, err_len, "landlock_restrict_self", errno);
	return 0;
}

int ward_ll_scope_self(void)
{
	struct landlock_ruleset_attr attr;
	long abi, fd;
	int ret = 0;

	abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
		      LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 6)
		return 0; /* nothing scopes signals here */
	memset(&attr, 0, sizeof(attr));
	attr.scoped =
	    LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0U);
	if (fd < 0)
		return -errno;
	if (syscall(__NR_landlock_restrict_self, (int)fd, 0U) != 0)
		ret = -errno;
	close((int)fd);
	return ret;
}

void ward_ll_close(struct ward_ll_ruleset *rs)
{
	if (!rs || rs->fd < 0)
		return;
	close(rs->fd);
	rs->fd = -1;
}
