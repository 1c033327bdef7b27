/*
 * ward — containment of a call's descendants (contain.c; internal to
 * libward): the call's cgroup or the subreaper, bwrap's pid 1, the
 * signals for a call (through landlock-run's keeper). Used by the
 * executor (exec.c); the small helpers below are shared by both.
 */
#ifndef WARD_CONTAIN_H
#define WARD_CONTAIN_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec_internal.h"

/* Milliseconds on the monotonic clock. */
static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Close *@fd if open and mark it closed (-1). */
static inline void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* waitpid(@pid), retried on EINTR. */
static inline void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/*
 * ward_contain_begin - decide the containment of a call about to start
 * under its runner (@sp->ops) from @want (WARD_CONTAIN_* flags): sets
 * @sp->contain, and for a cgroup creates it and opens @sp->cg_fd.
 */
void ward_contain_begin(struct ward_spawn *sp, unsigned want);
/*
 * ward_contain_pidns - whether a runner started now could make a pid
 * namespace (CAP_SYS_ADMIN over our user namespace, in effect): then we
 * start a kept runner as init of one (clone CLONE_NEWPID), as it would
 * have made one itself.
 */
bool ward_contain_pidns(void);
/* clone3 into the call's cgroup failed with @e: drop the cgroup, fall
 * back to the subreaper when @want allows. */
void ward_contain_fallback(struct ward_spawn *sp, unsigned want, int e);
/* A child was born in its call's cgroup: cgroups work in this process. */
void ward_contain_proven(void);
/* The call's leader has exited: kill whatever it left (idempotent);
 * @lock (or NULL) guards @sp->reaped. */
void ward_contain_kill(struct ward_spawn *sp, pthread_mutex_t *lock);
/* Wait (bounded) for the call's cgroup to empty, close @sp->cg_fd and
 * remove the cgroup. */
void ward_contain_remove(struct ward_spawn *sp);

/* bwrap's --json-status-fd lines in @buf: the sandbox's pid 1 ("child-pid")
 * when seen, else 0. */
pid_t ward_bwrap_child_pid(const char *buf, size_t len);
/* Once bwrap's status names its pid 1, hold a pidfd on it (the caller
 * holds the loop's lock). */
void ward_bwrap_note_child(struct ward_spawn *sp);
/* bwrap has exited: end its sandbox's pid 1 too (@lock or NULL). */
void ward_bwrap_ended(struct ward_spawn *sp, pthread_mutex_t *lock);

#endif
