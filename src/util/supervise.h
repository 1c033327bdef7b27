/*
 * ward — the seccomp supervisor: what Landlock cannot govern, judged by a
 * process outside the sandbox.
 *
 * Landlock has no right for chmod, chown, extended attributes (ACLs
 * included), timestamps or the inode-flag ioctls, and none for connecting
 * to a pathname unix socket. A confined command keeps its uid, so a root
 * caller's command could chmod /etc/shadow or talk to docker.sock as root,
 * and anyone's command could reach the user's D-Bus or tmux server and run
 * something unconfined. The supervisor closes both:
 *
 *   1. ward_sv_spawn(), before landlock_restrict_self(): fork (twice, so
 *      the supervisor is nobody's child in the command's tree) a process
 *      that stays outside the Landlock domain. Landlock's signal scope
 *      (ABI 6) and its ptrace rule keep the command from signalling or
 *      tracing it.
 *   2. ward_sv_arm(), after no_new_privs: install a seccomp filter whose
 *      interesting calls return SECCOMP_RET_USER_NOTIF, and hand the
 *      listener to the supervisor over a socketpair.
 *   3. The supervisor resolves each call's path through /proc/PID/{cwd,fd}
 *      and lets it continue (SECCOMP_USER_NOTIF_FLAG_CONTINUE) only when
 *      the object lies in a writable grant (metadata), or is a unix socket
 *      bound in a writable root during this call, or one named by
 *      --allow-unix (sockets); everything else fails with EACCES. A dead
 *      supervisor fails closed: the kernel answers ENOSYS.
 *
 * libc only, async-signal-safe after ward_sv_spawn() has returned in the
 * caller (the executor calls it between fork and exec): compiled into
 * libward and into the static landlock-run, like landlock.c. The residual
 * race (the path can change between the check and the kernel's own
 * resolution) is described in docs/RUNNERS.md.
 */
#ifndef WARD_SUPERVISE_H
#define WARD_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** The caller's side of a spawned supervisor. */
struct ward_sv {
	int sock;  /* our end of the socketpair, -1 when none */
	pid_t pid; /* the supervisor */
};

#define WARD_SV_INIT                                                           \
	{                                                                      \
		.sock = -1, .pid = 0                                           \
	}

/**
 * ward_sv_spawn - start the supervisor for a command about to be confined.
 * @rw: the writable grants (landlock-run's --rw paths); metadata changes
 *      are allowed strictly beneath a directory grant or on a regular-file
 *      grant, sockets bound during the call beneath a directory grant.
 * @unix_ok: unix socket paths reachable whatever the roots (a directory
 *      allows every socket beneath it).
 *
 * Call before ward_ll_enforce() (the supervisor must be outside the
 * domain). The strings are only read, in the supervisor's copy of memory.
 * Does not wait for the supervisor to start (it snapshots the grants while
 * the caller builds its ruleset); ward_sv_arm() waits until it has. Returns
 * 0, or -errno with a message in @err.
 */
int ward_sv_spawn(struct ward_sv *sv, const char *const *rw, size_t nrw,
		  const char *const *unix_ok, size_t nunix, char *err,
		  size_t err_len);

/**
 * ward_sv_arm - install the notifying filter in the calling process
 * (no_new_privs must be set and every capability dropped: call after
 * ward_ll_enforce(); the supervisor, which holds none, takes the listener
 * with pidfd_getfd()) and hand its listener to the supervisor. Closes sv->sock. Async-signal-safe. Returns 0
 * or -errno with a message in @err (nothing may be exec'd then).
 */
int ward_sv_arm(struct ward_sv *sv, char *err, size_t err_len);

/** ward_sv_close - drop a supervisor that will not be armed (it exits). */
void ward_sv_close(struct ward_sv *sv);

/**
 * ward_sv_beneath - the path check: is canonical @path strictly beneath
 * canonical directory @dir (@dir == "/" holds every other absolute path)?
 * Pure string logic on component boundaries; exported for unit tests.
 */
bool ward_sv_beneath(const char *path, const char *dir);

/**
 * ward_sv_sockaddr_path - the filesystem path of a unix socket address,
 * copied NUL-terminated into @out (capacity @len). Returns 1 for a
 * pathname address, 0 for any other (not AF_UNIX, unnamed, abstract) and
 * -EINVAL for a malformed one (no room for the terminating NUL). Pure;
 * exported for unit tests.
 */
int ward_sv_sockaddr_path(const void *addr, size_t addrlen, char *out,
			  size_t len);

#endif
