/*
 * ward — the seccomp supervisor: what Landlock cannot govern, judged by a
 * process that performs what it allows itself.
 *
 * Landlock has no right for chmod, chown, extended attributes (ACLs
 * included), timestamps or the inode-flag ioctls, none for connecting to a
 * pathname unix socket, and governs TCP by port, not by address. A
 * confined command keeps its uid, so a root caller's command could chmod
 * /etc/shadow or talk to docker.sock as root, anyone's command could reach
 * the user's D-Bus or tmux server, and an allowlisted command could
 * connect to any address at the proxy's port. The supervisor closes that:
 *
 *   1. After ward_ll_enforce(), the process that enforced forks the
 *      command and serves it: it lives in the command's Landlock domain
 *      and under its metadata and network filters, so that every call it
 *      performs for the command meets the kernel's checks the command
 *      would meet (Landlock's file rules — MAKE_SOCK for a bind —, its
 *      TCP port rules, its abstract socket scope, DAC with the same uid
 *      and no capability). landlock-run does this: its confined child is
 *      the command's parent and supervisor (and init of its pid
 *      namespace, as root). ward_sv_spawn() instead forks (twice) a
 *      supervisor beside the caller, for a caller that is itself the
 *      command (the unit tests).
 *   2. ward_sv_arm(), in the command: a nested Landlock layer that only
 *      scopes signals and abstract sockets (ABI 6), so the command cannot
 *      signal the supervisor, which is outside that layer; a seccomp
 *      filter whose judged calls return SECCOMP_RET_USER_NOTIF; its
 *      listener named to the supervisor over a socketpair, which copies
 *      it (pidfd_getfd) and answers once it holds it (ward_sv_take()):
 *      nothing runs under the filter before the supervisor has it.
 *   3. For every notification the supervisor (ward_sv_serve()) either
 *      refuses the call or performs it itself on the object it checked
 *      and returns the result; it never lets the kernel continue a call
 *      it judged (SECCOMP_USER_NOTIF_FLAG_CONTINUE would look the
 *      descriptor and the user memory up again). Descriptors are taken
 *      with pidfd_getfd(); paths and addresses are copied once, resolved
 *      once, and acted on through the supervisor's own handle. A dead
 *      supervisor fails closed: the kernel answers every judged call with
 *      ENOSYS.
 *
 * The judging seam (for an in-process keeper, and for fuzzing): one
 * notification is judged by ward_sv_judge() over the state, the
 * notification record and a target (struct ward_sv_target: a memory
 * reader/writer, a descriptor copier, the target's cwd and root, and the
 * "is the notification still pending" check). ward_sv_judge() does no I/O
 * of its own beyond the target's operations and the system calls it
 * performs on the descriptors those return; it never blocks (a call that
 * would block is returned as a wait, see struct ward_sv_verdict), so any
 * event loop can drive it. A fake target — canned memory, descriptors of
 * temporary files, valid() always 0 — exercises the whole decoding.
 *
 * libc only, async-signal-safe (the launcher calls it between fork and
 * exec; ward_sv_spawn() forks without atfork handlers): compiled into
 * libward and into the static landlock-run, like landlock.c. What holds
 * and what is refused is in docs/RUNNERS.md ("the supervisor").
 */
#ifndef WARD_SUPERVISE_H
#define WARD_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/** What the supervisor is told about the call it serves. */
struct ward_sv_config {
	/* The writable grants (landlock-run's --rw paths): metadata changes
	 * are allowed strictly beneath a directory grant or on a
	 * regular-file grant. */
	const char *const *rw;
	size_t nrw;
	/* Unix socket paths reachable whatever made them (--allow-unix; a
	 * directory allows every socket beneath it). */
	const char *const *unix_ok;
	size_t nunix;
	int net;	   /* enum ward_ll_net (landlock.h) */
	unsigned net_port; /* WARD_LL_NET_CONNECT: the proxy's port */
	int report_fd;	   /* the status channel (struct ward_sv_report), -1 */
};

/** The command's side of the listener hand-over (ward_sv_arm). */
struct ward_sv {
	int sock;  /* our end of the socketpair, -1 when none */
	pid_t pid; /* a spawned supervisor (ward_sv_spawn), else 0 */
};

#define WARD_SV_INIT                                                           \
	{                                                                      \
		.sock = -1, .pid = 0                                           \
	}

/**
 * ward_sv_spawn - start a supervisor beside the calling process, for a
 * caller that goes on to be the command itself.
 *
 * Call after ward_ll_enforce() (the supervisor must be in the command's
 * Landlock domain and under its filters) and before ward_sv_arm(). The
 * configuration's strings are only read, in the supervisor's copy of
 * memory; @cfg->report_fd is kept open by the supervisor (the caller may
 * close its copy). Does not wait for the supervisor to start;
 * ward_sv_arm() waits until it has. Returns 0, or -errno with a message in
 * @err.
 */
int ward_sv_spawn(struct ward_sv *sv, const struct ward_sv_config *cfg,
		  char *err, size_t err_len);

/**
 * ward_sv_arm - in the command: a nested Landlock layer scoping signals
 * and abstract sockets (ABI >= 6; the supervisor stays outside it), then
 * the notifying filter, and its listener handed over on @sv->sock to the
 * supervisor (ward_sv_take on the other end), waiting for its answer
 * (no_new_privs must be set and every capability dropped: call after
 * ward_ll_enforce()). Closes sv->sock and our copy of the listener.
 * Async-signal-safe. Returns 0 or -errno with a message in @err (nothing
 * may be exec'd then).
 */
int ward_sv_arm(struct ward_sv *sv, char *err, size_t err_len);

/** ward_sv_close - drop a hand-over that will not happen. */
void ward_sv_close(struct ward_sv *sv);

/**
 * ward_sv_take - in the supervisor: take the listener that command @target
 * names on @sock (ward_sv_arm; pidfd_getfd), and answer it: 0 once we hold
 * it, or the errno of a failed take (the command's ward_sv_arm then
 * fails). Leaves @sock open.
 * Returns the listener (close-on-exec, the caller's), or -errno with a
 * message in @err: -ESRCH when the command ended (or closed its end)
 * without handing one over.
 */
int ward_sv_take(int sock, pid_t target, char *err, size_t err_len);

/**
 * What a supervisor that is also the command's parent waits for beside the
 * listener: @fd (a signalfd, a pidfd) is polled for input, and @ready is
 * called when it has some; a nonzero return ends ward_sv_serve().
 */
struct ward_sv_host {
	int fd;
	int (*ready)(void *ctx);
	void *ctx;
};

/**
 * ward_sv_serve - serve listener @lfd (ward_sv_take) in the calling
 * process under @cfg until @host->ready() says the call is over, writing
 * the status records to @cfg->report_fd (made non-blocking). Ignores
 * SIGPIPE from then on (call it after forking the command). Closes @lfd;
 * with @lfd -1 (a build without the filter) it only waits for @host.
 * Returns 0, or -errno when the listener failed while the command may
 * still run (the caller must end the command).
 */
int ward_sv_serve(int lfd, const struct ward_sv_config *cfg,
		  const struct ward_sv_host *host);

/* --- the judging seam ------------------------------------------------------ */

/** One notification, as SECCOMP_IOCTL_NOTIF_RECV fills it (same layout). */
struct ward_sv_notif {
	uint64_t id;
	uint32_t pid; /* the calling thread, in the supervisor's pid ns */
	uint32_t flags;
	int32_t nr;
	uint32_t arch;
	uint64_t ip;
	uint64_t args[6];
};

enum {
	WARD_SV_DIR_CWD,
	WARD_SV_DIR_ROOT
};

/**
 * What judging needs from the process that made the call. Every function
 * returns -errno on failure; a descriptor returned is the caller's to
 * close.
 */
struct ward_sv_target_ops {
	/* Copy @len bytes at @addr of the target into @buf: bytes copied. */
	ssize_t (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Copy @buf to @addr of the target (sendmmsg's msg_len): bytes. */
	ssize_t (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
	/* A copy of the target's descriptor @fd (pidfd_getfd()). */
	int (*getfd)(void *ctx, int fd);
	/* An O_PATH descriptor of the target's cwd or root (WARD_SV_DIR_*). */
	int (*dir)(void *ctx, int which);
	/* 0 while the notification is still pending (its target is the one
	 * the reads above reached), else -ENOENT. Called after everything
	 * was read and before anything is performed. */
	int (*valid)(void *ctx);
	/* Send the target's thread group @sig (the SIGPIPE a failed send
	 * would have raised); may be NULL. */
	int (*signal)(void *ctx, int sig);
};

struct ward_sv_target {
	const struct ward_sv_target_ops *ops;
	void *ctx;
};

enum ward_sv_verdict_kind {
	WARD_SV_REPLY,	      /* answer now: val, or error */
	WARD_SV_WAIT_CONNECT, /* a connect under way on fd: when it is
				 writable, answer ward_sv_connect_result() */
	WARD_SV_WAIT_REDO,    /* would block: judge the same notification
				 again when fd is writable (fd -1: after
				 retry_ms) */
};

/** What to do with a notification. */
struct ward_sv_verdict {
	int kind;	     /* enum ward_sv_verdict_kind */
	int64_t val;	     /* REPLY: the call's value when error is 0 */
	int error;	     /* REPLY: 0 or -errno */
	int fd;		     /* WAIT_*: to poll (the verdict's), or -1 */
	int retry_ms;	     /* WAIT_REDO without fd */
	int64_t deadline_ms; /* WAIT_*: CLOCK_MONOTONIC, 0: none */
	int timeout_error;   /* WAIT_*: the answer at the deadline */
};

struct ward_sv_state;

/** The size of a struct ward_sv_state (allocate it page-aligned). */
size_t ward_sv_state_size(void);

/**
 * ward_sv_state_init - snapshot @cfg into @s (zeroed memory of
 * ward_sv_state_size() bytes): the grants canonical, with device and
 * inode. Returns 0 or -errno.
 */
int ward_sv_state_init(struct ward_sv_state *s,
		       const struct ward_sv_config *cfg);

/**
 * ward_sv_judge - judge notification @n of target @t: refuse it, perform
 * it on the checked object, or say what to wait for. Writes @v. Never
 * blocks. Remembers the unix sockets the target binds (device, inode and
 * birth time) and counts refused network accesses in @s.
 */
void ward_sv_judge(struct ward_sv_state *s, const struct ward_sv_notif *n,
		   const struct ward_sv_target *t, struct ward_sv_verdict *v);

/** ward_sv_connect_result - a finished non-blocking connect: 0 or -errno. */
int ward_sv_connect_result(int fd);

/**
 * The status-channel record of refused network access (landlock-run
 * --pid-fd's channel carries it beside the keeper's "PID\n" line). Written
 * after each of the first 16 refusals, then at every power of two, and
 * when the supervisor exits (the newest record counts). 32 bytes, host
 * byte order but addr as noted.
 */
struct ward_sv_report {
	char magic[4];	  /* "WSVN" */
	uint32_t count;	  /* network accesses refused so far */
	uint16_t family;  /* of the first one: AF_INET or AF_INET6 */
	uint16_t port;	  /* its port, host order */
	uint8_t addr[16]; /* its address, network order (IPv4: 4 bytes) */
	int32_t error;	  /* the errno the command got */
};

/** ward_sv_state_report - the record so far; false when nothing refused. */
bool ward_sv_state_report(const struct ward_sv_state *s,
			  struct ward_sv_report *out);

/**
 * ward_sv_report_find - read a status channel's bytes (@buf, @len: the
 * keeper's "PID\n" line and the supervisor's records, in either order):
 * the pid into *@pid (untouched when there is none), the newest record
 * into *@out. Returns true when there is a record.
 */
bool ward_sv_report_find(const void *buf, size_t len, long *pid,
			 struct ward_sv_report *out);

/**
 * ward_sv_report_event - the keeper's last line on the same channel
 * (launcher's "exit STATUS\n", "supervisor-died STATUS\n" or
 * "caller-died\n", after the pid line; records skipped wherever they
 * fall) into @event, NUL-terminated and cut to @cap - 1 bytes. Returns
 * its length, 0 when there is none.
 */
size_t ward_sv_report_event(const void *buf, size_t len, char *event,
			    size_t cap);

/* --- pure helpers (unit-tested) ------------------------------------------- */

/**
 * ward_sv_beneath - the path check: is canonical @path strictly beneath
 * canonical directory @dir (@dir == "/" holds every other absolute path)?
 * Pure string logic on component boundaries.
 */
bool ward_sv_beneath(const char *path, const char *dir);

/**
 * ward_sv_sockaddr_path - the filesystem path of a unix socket address,
 * copied NUL-terminated into @out (capacity @len). Returns 1 for a
 * pathname address, 0 for any other (not AF_UNIX, unnamed, abstract) and
 * -EINVAL for a malformed one (no room for the terminating NUL).
 */
int ward_sv_sockaddr_path(const void *addr, size_t addrlen, char *out,
			  size_t len);

/**
 * ward_sv_net_dest - may a socket reach inet address @addr (@len bytes)
 * under network setting @net (enum ward_ll_net) with proxy port @port?
 * ON and LOCAL: yes; OFF: never (-ENETUNREACH); CONNECT: only
 * 127.0.0.1:@port, also as ::ffff:127.0.0.1 (-ECONNREFUSED otherwise).
 * @tcp says the socket is a TCP stream (CONNECT allows nothing else).
 * Returns 0, -errno, or 1 when @addr is not an inet address.
 */
int ward_sv_net_dest(int net, unsigned port, const void *addr, size_t len,
		     bool tcp);

#endif
