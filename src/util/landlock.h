/*
 * ward — Landlock kernel compatibility, in one place: the UAPI (defined here;
 * the installed headers are older than the running kernel), syscall shims,
 * per-ABI access masks, ruleset construction, capability dropping and
 * self-restriction.
 *
 * This file and landlock.c depend on libc only: they are compiled into both
 * libward (the executor's in-process confinement) and the static
 * landlock-run launcher, so the two cannot drift. Nothing here prints,
 * allocates after ward_ll_prepare(), or exits; errors come back as -errno
 * with a message in the caller's buffer.
 */
#ifndef WARD_LANDLOCK_H
#define WARD_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** The newest Landlock ABI this code knows. */
#define WARD_LL_ABI_MAX 7

/** Marks an optional grant in ward_ll_prepare()'s path lists. */
#define WARD_LL_OPTIONAL '?'

/*
 * Landlock access rights and scopes (include/uapi/linux/landlock.h), by the
 * ABI that introduced them. Defined here because the installed kernel
 * headers may be older than the running kernel (and musl-gcc sees none).
 */
/* ABI 1 */
#ifndef LANDLOCK_ACCESS_FS_EXECUTE
#define LANDLOCK_ACCESS_FS_EXECUTE     (1ULL << 0)
#define LANDLOCK_ACCESS_FS_WRITE_FILE  (1ULL << 1)
#define LANDLOCK_ACCESS_FS_READ_FILE   (1ULL << 2)
#define LANDLOCK_ACCESS_FS_READ_DIR    (1ULL << 3)
#define LANDLOCK_ACCESS_FS_REMOVE_DIR  (1ULL << 4)
#define LANDLOCK_ACCESS_FS_REMOVE_FILE (1ULL << 5)
#define LANDLOCK_ACCESS_FS_MAKE_CHAR   (1ULL << 6)
#define LANDLOCK_ACCESS_FS_MAKE_DIR    (1ULL << 7)
#define LANDLOCK_ACCESS_FS_MAKE_REG    (1ULL << 8)
#define LANDLOCK_ACCESS_FS_MAKE_SOCK   (1ULL << 9)
#define LANDLOCK_ACCESS_FS_MAKE_FIFO   (1ULL << 10)
#define LANDLOCK_ACCESS_FS_MAKE_BLOCK  (1ULL << 11)
#define LANDLOCK_ACCESS_FS_MAKE_SYM    (1ULL << 12)
#endif
/* ABI 2 */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* ABI 6 */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* ABI 4: TCP rights (LANDLOCK_RULE_NET_PORT). */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP	(1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

/*
 * What a ruleset does about the network (network.h's knob as the runner
 * sees it).
 *
 * ON: nothing (the host's network).
 * LOCAL: the network namespace is the sandbox's own (bwrap's): only the
 *   socket families a namespace does not isolate are refused — vsock, and
 *   netlink but for routing — with EAFNOSUPPORT / EPROTONOSUPPORT.
 * OFF: TCP bind and connect handled with no rule (ABI >= 4), the family
 *   filter as for LOCAL, inet only TCP and UDP sockets; the supervisor
 *   answers every inet connect and send ENETUNREACH ("no network here",
 *   as an empty namespace does) and refuses inet bind and listen
 *   (EADDRNOTAVAIL) — so off holds below ABI 4 too.
 * CONNECT: as OFF, but TCP connect to one port (the proxy endpoint's,
 *   ABI >= 4) and, in the supervisor, to one address: WARD_LL_PROXY_ADDR
 *   at that port; any other destination ECONNREFUSED.
 */
enum ward_ll_net {
	WARD_LL_NET_ON = 0,
	WARD_LL_NET_OFF,
	WARD_LL_NET_CONNECT,
	WARD_LL_NET_LOCAL,
};

/** The proxy endpoint's address under WARD_LL_NET_CONNECT (127.0.0.1). */
#define WARD_LL_PROXY_ADDR "127.0.0.1"

/** A prepared ruleset, ready to enforce. */
struct ward_ll_ruleset {
	int fd;		     /* ruleset fd (O_CLOEXEC), -1 when none */
	int abi;	     /* kernel ABI found */
	uint64_t handled_fs; /* fs rights handled (after the ABI downgrade) */
	uint64_t scoped;     /* scopes (signal, abstract unix socket) */
	/** Rights or scopes wanted but unknown to this kernel. */
	uint64_t dropped_fs;
	uint64_t dropped_scoped;
	bool partial; /* something wanted could not be enforced */
	/*
	 * Some writable grant is a directory. When none is (read-only mode:
	 * only /dev/null), the metadata filter denies every chmod, chown,
	 * utime and xattr change; otherwise only set-id chmod (see
	 * ward_ll_enforce).
	 */
	bool rw_dir;
	/* The network (enum ward_ll_net) and, for CONNECT, the port. */
	int net;
	unsigned net_port;
	uint64_t handled_net; /* TCP rights handled (0 below ABI 4) */
};

/**
 * ward_ll_abi - the kernel's Landlock ABI version (>= 1), or -errno:
 * -ENOSYS (not built in), -EOPNOTSUPP (disabled at boot).
 */
int ward_ll_abi(void);

/**
 * ward_ll_access_for_abi - the best-effort downgrade: of everything ward
 * wants handled, the filesystem rights (*@fs) and scopes (*@scoped) a
 * kernel of Landlock ABI @abi knows. An @abi above WARD_LL_ABI_MAX counts as
 * WARD_LL_ABI_MAX; below 1 yields nothing.
 */
void ward_ll_access_for_abi(int abi, uint64_t *fs, uint64_t *scoped);

/**
 * ward_ll_prepare - build a ruleset that handles every filesystem right the
 * kernel knows (and the signal / abstract-socket scopes from ABI 6), then
 * grants read+execute beneath each @ro path and read+write beneath each @rw
 * path. REFER is granted on @rw roots only; device-node creation
 * (MAKE_CHAR, MAKE_BLOCK) is never granted. A non-directory grant keeps
 * only the file-compatible bits.
 *
 * On failure returns -errno, writes a message (naming the path when one is
 * at fault) into @err, and leaves no descriptor open.
 */
int ward_ll_prepare(struct ward_ll_ruleset *out, const char *const *ro,
		    size_t nro, const char *const *rw, size_t nrw, char *err,
		    size_t err_len);

/**
 * ward_ll_prepare_net - ward_ll_prepare() with a network setting: @net
 * (enum ward_ll_net) and @port (CONNECT only, 1..65535). CONNECT on a
 * kernel below ABI 4 fails with -EAFNOSUPPORT (the allowlist could not be
 * enforced: nothing would limit TCP connections). OFF below ABI 4 is
 * enforced by the network filter and the supervisor alone.
 */
int ward_ll_prepare_net(struct ward_ll_ruleset *out, const char *const *ro,
			size_t nro, const char *const *rw, size_t nrw, int net,
			unsigned port, char *err, size_t err_len);

/**
 * ward_ll_partial_message - the info line (without the "landlock-run: "
 * prefix, without a newline) describing what a partial ruleset cannot
 * enforce, e.g. "partial enforcement (kernel ABI 3 of 7): truncate …".
 */
void ward_ll_partial_message(const struct ward_ll_ruleset *rs, char *buf,
			     size_t len);

/**
 * ward_ll_drop_caps - drop every capability: bounding set, ambient,
 * inheritable, permitted, effective; and set the securebits that keep a
 * root uid from regaining them at execve. Async-signal-safe.
 */
int ward_ll_drop_caps(char *err, size_t err_len);

/**
 * ward_ll_enforce - drop capabilities, set no_new_privs, install the
 * metadata filter, then landlock_restrict_self(rs->fd). Async-signal-safe:
 * the executor calls it between fork and exec. Does not close rs->fd.
 *
 * The metadata filter (seccomp) closes what Landlock cannot govern: it has
 * no rights for chmod, chown, utimes or extended attributes, so a confined
 * process could change those on any file it owns — for a root caller, any
 * system file (`chmod u+s /usr/bin/python3`). Without a writable directory
 * (read-only mode) every such call fails with EACCES, as does io_uring
 * (whose xattr operations bypass seccomp). With writable directories the
 * filter cannot tell paths apart, so it refuses only what escalates
 * privilege: a chmod that sets the set-user-ID or set-group-ID bit.
 *
 * With a network setting other than ON the same filter (one seccomp
 * program: its network part first, as a second filter installed after
 * it would answer) also governs sockets: socket() and socketpair() succeed only for AF_UNIX,
 * AF_NETLINK with NETLINK_ROUTE, and AF_INET/AF_INET6 (LOCAL: any; OFF
 * and CONNECT: TCP streams and UDP datagrams, whose every destination the
 * supervisor judges); another family fails with EAFNOSUPPORT, another
 * netlink or inet protocol with EPROTONOSUPPORT (what a kernel without
 * them says: programs take it for "no network here"). OFF and CONNECT
 * also refuse io_uring_setup and TCP Fast Open sends (which connect
 * without connect()): ENETUNREACH.
 */
int ward_ll_enforce(const struct ward_ll_ruleset *rs, char *err,
		    size_t err_len);

/**
 * ward_ll_scope_self - restrict the calling process with one more
 * Landlock layer that handles no access right and only scopes signals and
 * abstract unix sockets (ABI >= 6; below, returns 0 and does nothing).
 * ward_sv_arm() uses it so the supervisor, forked into the outer layer,
 * is out of the command's reach. Async-signal-safe. 0 or -errno.
 */
int ward_ll_scope_self(void);

/** ward_ll_close - close the ruleset fd (if any). */
void ward_ll_close(struct ward_ll_ruleset *rs);

#endif
